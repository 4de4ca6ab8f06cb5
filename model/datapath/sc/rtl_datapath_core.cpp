// model/datapath/sc: the `rtl` datapath's core domain (see rtl_datapath.h):
// the core clock and its gating, descriptors and payload into roce_tx, RX
// descriptors, payload and bypass frames out of roce_rx, checked against
// the reference models.
#include <fmt/format.h>

#include <cstring>

#include "model/datapath/roce_rx_ref.h"
#include "model/datapath/sc/rtl_datapath.h"
#include "model/datapath/sc/rtl_datapath_diff.h"

namespace ernic {

using namespace sc_core;

using rtl_detail::bytes_diff;

// ------------------------------------------------------------------ core

// The RTL's rising edge: handshakes as the inputs and outputs stand.
void RtlDatapath::core_rise(uint64_t now) {
  watch_core(core_.cycle());
  const bool desc_held = drv_desc_ && !p_.s_desc_ready.read();  // offered, not taken: stays
  const bool pay_held = drv_pay_ && !p_.s_pay_tready.read();
  if (drv_desc_ && p_.s_desc_ready.read()) {
    txd_q_.pop_front();
    ++desc_taken_;
    desc_ev_.notify(SC_ZERO_TIME);
  }
  if (drv_pay_ && p_.s_pay_tready.read()) {
    PayItem& it = pay_q_.front();
    it.off += 64;
    if (it.off >= it.bytes.size()) pay_q_.pop_front();
  }
  tx_seam_beat();
  p_.core_clk.write(true);
  ++stats_.core_cycles_clocked;
  if (core_reset_) --core_reset_;
  // The inputs for the next edge: what was queued before now.
  nxt_desc_ = !core_reset_ && !txd_q_.empty() && txd_q_.front().t_ps < now;
  nxt_pay_ = !core_reset_ && !pay_q_.empty() && pay_q_.front().t_ps < now;
  // Randomised handshakes: a VALID not yet raised may wait this edge.
  if (nxt_desc_ && !desc_held && rnd_s_desc_valid_()) nxt_desc_ = false;
  if (nxt_pay_ && !pay_held && rnd_s_pay_valid_()) nxt_pay_ = false;
  if (nxt_pay_) {
    const PayItem& it = pay_q_.front();
    const size_t n = std::min<size_t>(64, it.bytes.size() - it.off);
    uint8_t b[64] = {};
    std::memcpy(b, it.bytes.data() + it.off, n);
    for (int i = 0; i < 8; ++i) {
      uint64_t w = 0;
      for (int k = 0; k < 8; ++k) w |= uint64_t(b[i * 8 + k]) << (8 * k);
      nxt_pay_w_[i] = w;
    }
    nxt_pay_keep_ = keep_of(n);
    nxt_pay_last_ = it.off + 64 >= it.bytes.size();
  }
  core_rise_next_ = false;
  core_next_ps_ = now + core_.period_ps() - core_.period_ps() / 2;
}

// The model edge after it: clock low, new inputs, the edge's outputs.
void RtlDatapath::core_model_edge() {
  p_.core_clk.write(false);
  if (!core_reset_) p_.core_rst_n.write(true);
  if (nxt_desc_) {
    const TxItem& it = txd_q_.front();
    if (it.seq != presented_seq_) {
      for (int i = 0; i < 12; ++i) p_.s_desc_w[i].write(it.bits[size_t(i)]);
      p_.cfg_udp_sport.write(it.sport);
      presented_seq_ = it.seq;
    }
  }
  if (nxt_desc_ != drv_desc_) {
    p_.s_desc_valid.write(nxt_desc_);
    ctx_.set(v_desc_valid_, nxt_desc_);
  }
  drv_desc_ = nxt_desc_;
  if (const bool r = p_.s_desc_ready.read(); r != v_ready_) {
    v_ready_ = r;
    ctx_.set(v_desc_ready_, r);
  }
  if (nxt_pay_) {
    for (int i = 0; i < 8; ++i) p_.s_pay_tdata_w[i].write(nxt_pay_w_[size_t(i)]);
    p_.s_pay_tkeep.write(nxt_pay_keep_);
    p_.s_pay_tlast.write(nxt_pay_last_);
  }
  if (nxt_pay_ != drv_pay_) p_.s_pay_tvalid.write(nxt_pay_);
  drv_pay_ = nxt_pay_;
  core_outputs();
  core_rise_next_ = true;
}

// After the instant of a model edge (both domains' work done): keep
// clocking while anything is in flight, then settle, then stop.
void RtlDatapath::core_gate(uint64_t now) {
  const bool busy = core_reset_ || in_flight();
  if (busy)
    core_settle_ = kSettleCycles;
  else if (core_settle_)
    --core_settle_;
  if (busy || core_settle_ || !cfg_.idle_skip) {
    core_next_ps_ = now + core_.period_ps() / 2;
  } else {
    core_idle_ = true;
    // The clock stops: its next edge (and every one until it runs) is idle.
    for (Watch* w : {&w_s_desc_, &w_s_pay_, &w_m_desc_, &w_m_pay_, &w_m_byp_}) watch_idle(*w, core_.cycle());
  }
}

void RtlDatapath::read_beat(const Port<uint64_t>* w, uint64_t keep, roce::Bytes& out) {
  const size_t n = size_t(__builtin_popcountll(keep));
  uint8_t b[64];
  for (int i = 0; i < 8; ++i) {
    const uint64_t v = w[i].read();
    for (int k = 0; k < 8; ++k) b[i * 8 + k] = uint8_t(v >> (8 * k));
  }
  out.insert(out.end(), b, b + std::min<size_t>(n, 64));
}

void RtlDatapath::core_outputs() {
  if (p_.m_pay_tvalid.read()) {
    read_beat(p_.m_pay_tdata_w, p_.m_pay_tkeep.read(), rx_pay_cur_);
    if (p_.m_pay_tlast.read()) {
      rx_pay_done_.push_back(std::move(rx_pay_cur_));
      rx_pay_cur_.clear();
    }
  }
  if (p_.m_byp_tvalid.read()) {
    read_beat(p_.m_byp_tdata_w, p_.m_byp_tkeep.read(), byp_cur_);
    if (p_.m_byp_tlast.read()) {
      FrameBytes f = std::move(byp_cur_);
      byp_cur_.clear();
      const uint64_t index = byp_index_++;
      if (const DatapathCorrupt* c = corruption("bypass", index); c && c->offset < f.size())
        f[c->offset] ^= c->xor_mask;
      if (byp_exp_.empty()) {
        mismatch(fmt::format("bypass frame #{} ({} bytes) that no received frame gave", index, f.size()), true);
      } else {
        const std::string d = bytes_diff(f, byp_exp_.front().frame);
        byp_exp_.pop_front();
        ++stats_.bypass_checked;
        if (!d.empty()) mismatch(fmt::format("bypass frame #{}: {}", index, d), true);
      }
      if (rx_in_flight_) --rx_in_flight_;
      ++stats_.bypass_frames;
      ctx_.bump();
      if (bypass_sink) bypass_sink(std::move(f));
    }
  }
  if (p_.m_desc_valid.read()) {
    seam::RxdBits bits{};
    for (int i = 0; i < 16; ++i) bits[size_t(i)] = p_.m_desc_w[i].read();
    const uint64_t index = rx_desc_index_++;
    if (const DatapathCorrupt* c = corruption("rx_desc", index); c && c->offset < seam::kRxdBits)
      bits[c->offset / 64] ^= uint64_t(c->xor_mask & 1) << (c->offset % 64);
    // The seam lets a frame's payload come after its descriptor (e.g.
    // store-and-forward, rtl/examples/roce_rx_alt), never after the next
    // descriptor: a descriptor waits for its payload until then (a payload
    // still missing at the next descriptor is delivered empty, and the
    // scoreboard reports it).
    deliver_waiting_rx_desc(true);
    rx_desc_wait_.push_back(seam::unpack_rx(bits));
  }
  deliver_waiting_rx_desc(false);
}

void RtlDatapath::deliver_waiting_rx_desc(bool force) {
  if (rx_desc_wait_.empty()) return;
  const bool has_pay = rx_desc_wait_.front().payload_len != 0;
  if (has_pay && rx_pay_done_.empty() && !force) return;
  roce::Bytes payload;
  if (has_pay && !rx_pay_done_.empty()) {
    payload = std::move(rx_pay_done_.front());
    rx_pay_done_.pop_front();
  }
  const seam::RxDesc d = rx_desc_wait_.front();
  rx_desc_wait_.pop_front();
  deliver_rx_desc(d, std::move(payload));
}

void RtlDatapath::deliver_rx_desc(const seam::RxDesc& d, roce::Bytes payload) {
  const uint64_t index = rx_pay_index_++;
  if (const DatapathCorrupt* c = corruption("rx_payload", index); c && c->offset < payload.size())
    payload[c->offset] ^= c->xor_mask;
  if (rx_exp_.empty()) {
    mismatch(fmt::format("RX descriptor #{} that no received frame gave", index), true);
  } else {
    const RxExp& e = rx_exp_.front();
    std::string diff = seam::rx_desc_diff(d, e.desc);
    if (!diff.empty()) {
      mismatch(fmt::format("RX descriptor #{}: {} (RTL vs reference)", index, diff), true);
    } else if (std::string pd = bytes_diff(payload, e.payload); !pd.empty()) {
      mismatch(fmt::format("RX payload #{}: {}", index, pd), true);
    }
    rx_exp_.pop_front();
    ++stats_.rx_checked;
  }
  if (rx_in_flight_) --rx_in_flight_;
  ++stats_.rx_frames;
  ctx_.bump();
  if (rx_sink) rx_sink(d, std::move(payload));
}

}  // namespace ernic
