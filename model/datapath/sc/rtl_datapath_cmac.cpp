// model/datapath/sc: the `rtl` datapath's CMAC domain (see rtl_datapath.h):
// the CMAC clock and its gating, roce_tx's frames into the TX FIFO and out
// of it to the CMAC (tx_head, tx_take), received frames into the RX FIFO.
#include <fmt/format.h>

#include <array>
#include <cstring>

#include "model/datapath/sc/rtl_datapath.h"
#include "model/datapath/sc/rtl_datapath_diff.h"

namespace ernic {

using namespace sc_core;

using rtl_detail::bytes_diff;

namespace {

// Bytes of a beat (little-endian words) into a 64-byte buffer.
void beat_bytes(const std::array<uint64_t, 8>& w, uint8_t* out) {
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = uint8_t(w[i] >> (8 * b));
}

}  // namespace

// ------------------------------------------------------------------ CMAC

// roce_tx -> FIFO: the beat written at this core edge; a whole frame is
// checked against the reference model and queued for the CMAC.
void RtlDatapath::tx_seam_beat() {
  TxSeamBeat b;
  if (!top_.tx_seam || !top_.tx_seam(b)) return;
  const size_t n = size_t(__builtin_popcountll(b.keep));
  tx_cap_.insert(tx_cap_.end(), b.data, b.data + std::min<size_t>(n, 64));
  if (!b.last) return;
  FrameBytes f = std::move(tx_cap_);
  tx_cap_.clear();
  const uint64_t index = tx_cap_index_++;
  if (const DatapathCorrupt* c = corruption("tx", index); c && c->offset < f.size()) f[c->offset] ^= c->xor_mask;
  if (tx_exp_.empty()) {
    mismatch(fmt::format("TX frame #{} ({} bytes) that no descriptor asked for", index, f.size()), true);
  } else {
    const std::string d = bytes_diff(f, tx_exp_.front());
    tx_exp_.pop_front();
    ++stats_.tx_checked;
    if (!d.empty()) mismatch(fmt::format("TX frame #{}: {}", index, d), true);
  }
  tx_written_.push_back(std::move(f));
}

// The rising edge: the beat the CMAC takes, the RX beat written.
void RtlDatapath::cmac_rise(uint64_t now) {
  const uint64_t P = cmac_.period_ps(), H = P / 2;
  watch_cmac(cmac_.cycle());
  if (take_.active && !take_.done) take_beat();
  if (drv_rx_) {
    if (!p_.s_cmac_tready.read()) {
      ++stats_.rx_fifo_overflows;
      if (!rx_overflow_reported_) {
        rx_overflow_reported_ = true;
        ctx_.error(scope_, fmt::format("node {}: the CMAC->core async FIFO was full at CMAC cycle {}: a beat of a "
                                       "received frame is lost (the core clock drains it too slowly)",
                                       cfg_.node, cmac_.cycle()));
      }
    }
    RxItem& it = rx_q_.front();
    it.off += 64;
    if (it.off >= it.f.size()) rx_q_.pop_front();
  }
  p_.cmac_clk.write(true);
  ++stats_.cmac_cycles_clocked;
  if (cmac_reset_) --cmac_reset_;
  // The next beat, presented on the model edge after this (now + P - H).
  nxt_rx_ = !cmac_reset_ && !rx_q_.empty() && rx_q_.front().t_ps < now && rx_q_.front().start_ps <= now + P - H;
  if (nxt_rx_ && rnd_s_cmac_valid_()) nxt_rx_ = false;  // randomised: a gap before this beat
  if (nxt_rx_) {
    const RxItem& it = rx_q_.front();
    const size_t n = std::min<size_t>(64, it.f.size() - it.off);
    uint8_t b[64] = {};
    std::memcpy(b, it.f.data() + it.off, n);
    for (int i = 0; i < 8; ++i) {
      uint64_t w = 0;
      for (int k = 0; k < 8; ++k) w |= uint64_t(b[i * 8 + k]) << (8 * k);
      nxt_rx_w_[size_t(i)] = w;
    }
    nxt_rx_keep_ = keep_of(n);
    nxt_rx_last_ = it.off + 64 >= it.f.size();
  }
  cmac_rise_next_ = false;
  cmac_next_ps_ = now + P - H;
}

// At a rising edge, a frame being taken: the beat the CMAC takes (its last
// is checked against what went in), or the FIFO's tvalid low inside it.
void RtlDatapath::take_beat() {
  const bool ready = p_.m_cmac_tready.read();
  const bool valid = p_.m_cmac_tvalid.read();
  if (ready && valid) {
    uint8_t b[64];
    std::array<uint64_t, 8> w;
    for (int i = 0; i < 8; ++i) w[size_t(i)] = p_.m_cmac_tdata_w[i].read();
    beat_bytes(w, b);
    const size_t n = size_t(__builtin_popcountll(p_.m_cmac_tkeep.read()));
    take_.f.insert(take_.f.end(), b, b + std::min<size_t>(n, 64));
    ++take_.beats;
    if (p_.m_cmac_tlast.read()) {
      take_.done = true;
      take_.active = false;
      tready_low_next_ = true;
      if (tx_in_flight_) --tx_in_flight_;
      ++stats_.tx_out;
      // The FIFO gives back what roce_tx put in (the test hook's change
      // is roce_tx's: it is in both).
      if (const DatapathCorrupt* c = corruption("tx", take_.index); c && c->offset < take_.f.size())
        take_.f[c->offset] ^= c->xor_mask;
      if (std::string d = bytes_diff(take_.f, take_.in); !d.empty())
        mismatch(fmt::format("TX FIFO output frame #{} vs its input: {}", take_.index, d), false);
      take_ev_.notify(SC_ZERO_TIME);
    } else if (take_.plan_cycles && take_.beats == uint64_t(take_.plan_after) + 1) {
      // Test hook: the stream the MAC sees drops tvalid here (the FIFO
      // is held with tready low, so nothing is lost).
      take_.hold = take_.plan_cycles;
      take_.plan_cycles = 0;
    }
  } else if (ready && !valid && take_.beats && !take_.underflow_reported) {
    // tvalid low inside a frame at the FIFO's output (PACKET mode should
    // make this impossible): a TX underflow the CMAC would abort.
    take_.underflow_reported = true;
    ctx_.error(scope_, fmt::format("node {}: TX underflow: the core->CMAC FIFO's tvalid dropped after beat {} of "
                                   "TX frame #{} at CMAC cycle {}",
                                   cfg_.node, take_.beats - 1, take_.index, cmac_.cycle()));
  }
}

// The model edge: clock low, inputs, outputs.
void RtlDatapath::cmac_model_edge() {
  p_.cmac_clk.write(false);
  if (!cmac_reset_) p_.cmac_rst_n.write(true);
  if (nxt_rx_) {
    for (int i = 0; i < 8; ++i) p_.s_cmac_tdata_w[i].write(nxt_rx_w_[size_t(i)]);
    p_.s_cmac_tkeep.write(nxt_rx_keep_);
    p_.s_cmac_tlast.write(nxt_rx_last_);
  }
  if (nxt_rx_ != drv_rx_ || nxt_rx_) {
    p_.s_cmac_tvalid.write(nxt_rx_);
    if (cmac_model_) cmac_model_->set_rx_axis(nxt_rx_, nxt_rx_ && nxt_rx_last_, nxt_rx_keep_);
  }
  drv_rx_ = nxt_rx_;
  // TX: tready for the frame being taken (low after its last beat, and
  // during the test hook's bubble); the waveform of the stream the MAC sees.
  if (tready_low_next_) {
    tready_low_next_ = false;
    p_.m_cmac_tready.write(false);
    if (cmac_model_) cmac_model_->set_tx_axis(false, false, 0);
  } else if (take_.active) {
    if (take_.hold) {
      --take_.hold;
      p_.m_cmac_tready.write(false);
      if (cmac_model_) cmac_model_->set_tx_axis(false, false, 0);
    } else if (!take_.done) {
      const bool ready = !rnd_m_cmac_ready_();  // randomised: the MAC stalls the frame
      p_.m_cmac_tready.write(ready);
      if (cmac_model_) {
        cmac_model_->set_tx_axis(p_.m_cmac_tvalid.read(), p_.m_cmac_tlast.read(), p_.m_cmac_tkeep.read());
        if (rnd_m_cmac_ready_) cmac_model_->set_tx_tready(ready);
      }
    }
  }
  // A frame's first beat at the FIFO's output: the MAC may take it.
  const bool head = !take_.active && p_.m_cmac_tvalid.read();
  if (head && !head_valid_) {
    std::array<uint64_t, 8> w;
    for (int i = 0; i < 8; ++i) w[size_t(i)] = p_.m_cmac_tdata_w[i].read();
    beat_bytes(w, head_.data());
    head_len_ = size_t(__builtin_popcountll(p_.m_cmac_tkeep.read()));
    head_ev_.notify(SC_ZERO_TIME);
  }
  head_valid_ = head;
  stats_.meta_events = p_.meta_events.read();
  cmac_rise_next_ = true;
}

// After the instant of a model edge: as core_gate.
void RtlDatapath::cmac_gate(uint64_t now) {
  const bool busy = cmac_reset_ || in_flight();
  if (busy)
    cmac_settle_ = kSettleCycles;
  else if (cmac_settle_)
    --cmac_settle_;
  if (busy || cmac_settle_ || !cfg_.idle_skip) {
    cmac_next_ps_ = now + cmac_.period_ps() / 2;
  } else {
    cmac_idle_ = true;
    for (Watch* w : {&w_m_cmac_, &w_s_cmac_}) watch_idle(*w, cmac_.cycle());
  }
}

const uint8_t* RtlDatapath::tx_head(size_t* len) {
  if (!head_valid_ || take_.active) return nullptr;
  *len = head_len_;
  return head_.data();
}

CmacTxSource::Taken RtlDatapath::tx_take(uint32_t bubble_after, uint32_t bubble_cycles) {
  // On a CMAC model edge with a head: tready high now, so the RTL's next
  // edge takes the first beat. The frame is whole in the FIFO (PACKET):
  // its bytes are known, the beats follow.
  while (take_.active) wait(take_ev_);
  take_ = Take{};
  take_.active = true;
  take_.index = stats_.tx_out;
  if (tx_written_.empty()) {
    ctx_.error(scope_, fmt::format("node {}: the core->CMAC FIFO shows a frame that roce_tx did not write", cfg_.node));
  } else {
    take_.in = std::move(tx_written_.front());
    tx_written_.pop_front();
  }
  const uint64_t beats = (take_.in.size() + 63) / 64;
  Taken t;
  if (bubble_cycles && beats > uint64_t(bubble_after) + 1) {
    take_.plan_after = bubble_after;
    take_.plan_cycles = bubble_cycles;
    t.bubble_after = bubble_after;
    t.bubble_cycles = bubble_cycles;
  }
  head_valid_ = false;
  if (cmac_model_) cmac_model_->set_tx_axis(true, p_.m_cmac_tlast.read(), p_.m_cmac_tkeep.read());
  p_.m_cmac_tready.write(true);
  top_.eval();  // no edge: the FIFO's read side sees tready
  wake();
  t.f = take_.in;
  t.streamed = true;
  t.t0_ps = ClockDomain::now_ps();
  return t;
}

}  // namespace ernic
