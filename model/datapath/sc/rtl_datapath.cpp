#include "model/datapath/sc/rtl_datapath.h"

#include <fmt/format.h>

#include <cstring>

#include "Vroce_datapath.h"
#include "Vroce_datapath___024root.h"
#include "model/datapath/sc/rtl_datapath_bind.h"
#include "model/datapath/roce_rx_ref.h"
#include "model/datapath/roce_tx_ref.h"

namespace ernic {

using namespace sc_core;

namespace {

// Bytes of a beat (little-endian words) into a 64-byte buffer.
void beat_bytes(const std::array<uint64_t, 8>& w, uint8_t* out) {
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = uint8_t(w[i] >> (8 * b));
}

// "byte 17: RTL 0x12 reference 0x13" / "length: RTL 60 reference 64".
std::string bytes_diff(const roce::Bytes& got, const roce::Bytes& exp) {
  if (got.size() == exp.size() && (got.empty() || std::memcmp(got.data(), exp.data(), got.size()) == 0)) return {};
  const size_t n = std::min(got.size(), exp.size());
  for (size_t i = 0; i < n; ++i)
    if (got[i] != exp[i]) return fmt::format("byte {}: RTL 0x{:02x} reference 0x{:02x}", i, got[i], exp[i]);
  if (got.size() != exp.size()) return fmt::format("length: RTL {} bytes, reference {} bytes", got.size(), exp.size());
  return {};
}

}  // namespace

RtlDatapath::RtlDatapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                         const std::string& scope, const DatapathConfig& cfg, const RoceDatapathBinder& bind,
                         std::string kind)
    : RoceDatapath(name, core, cmac, ctx, scope, cfg), kind_(std::move(kind)) {
  top_ = bind("rtl", p_);
  using R = monitor::AxisRules;
  auto axis = [&](const char* bus, const ClockDomain& clk, const R& r) {
    return Watch{&ctx.protocol.axis(scope + "." + bus, clk.name(), clk.period_ps(), r)};
  };
  w_s_desc_ = axis("s_desc", core, R::descriptor(seam::kTxdBits, /*has_ready=*/true));
  w_s_pay_ = axis("s_pay", core, R::seam(/*has_ready=*/true, /*no_bubble=*/false));
  w_m_desc_ = axis("m_desc", core, R::descriptor(seam::kRxdBits, /*has_ready=*/false));
  w_m_pay_ = axis("m_pay", core, R::seam(false, false));
  w_m_byp_ = axis("m_byp", core, R::seam(false, false));
  w_m_cmac_ = axis("m_cmac", cmac, R::seam(true, /*no_bubble=*/true));
  w_s_cmac_ = axis("s_cmac", cmac, R::seam(/*has_ready=*/false, false));
  using K = monitor::HandshakeRandomizer::Kind;
  rnd_s_desc_valid_ = ctx.protocol.stall(scope + ".s_desc.valid", K::valid);
  rnd_s_pay_valid_ = ctx.protocol.stall(scope + ".s_pay.tvalid", K::valid);
  rnd_m_cmac_ready_ = ctx.protocol.stall(scope + ".m_cmac.tready", K::ready);
  rnd_s_cmac_valid_ = ctx.protocol.stall(scope + ".s_cmac.tvalid", K::valid);
  SC_METHOD(core_tick);
  SC_METHOD(cmac_tick);
}

// ------------------------------------------------------------- monitors

void RtlDatapath::watch(Watch& w, uint64_t edge, bool reset, bool valid, bool ready, bool last, uint64_t keep,
                        uint64_t user, const Pin<uint64_t>* words, int n) {
  if (!valid && !reset && w.idle) return;  // still idle: the monitor holds it
  monitor::AxisSample s;
  s.reset = reset;
  s.valid = valid;
  s.ready = ready;
  s.last = last;
  s.keep = keep;
  s.user = user;
  std::array<uint64_t, 16> d;
  if (valid) {
    for (int i = 0; i < n; ++i) d[size_t(i)] = words[i].read();
    s.data = d.data();
  }
  w.mon->sample(edge, s);
  w.idle = !valid && !reset;
}

void RtlDatapath::watch_idle(Watch& w, uint64_t edge) {
  if (w.idle) return;
  w.mon->sample(edge, monitor::AxisSample{});
  w.idle = true;
}

// The core ports at the rising edge `edge`, as they stand.
void RtlDatapath::watch_core(uint64_t edge) {
  const bool r = !p_.core_rst_n.read();
  watch(w_s_desc_, edge, r, p_.s_desc_valid.read(), p_.s_desc_ready.read(), true, ~uint64_t(0), 0, p_.s_desc_w, 12);
  watch(w_s_pay_, edge, r, p_.s_pay_tvalid.read(), p_.s_pay_tready.read(), p_.s_pay_tlast.read(),
        p_.s_pay_tkeep.read(), 0, p_.s_pay_tdata_w, 8);
  watch(w_m_desc_, edge, r, p_.m_desc_valid.read(), true, true, ~uint64_t(0), 0, p_.m_desc_w, 16);
  watch(w_m_pay_, edge, r, p_.m_pay_tvalid.read(), true, p_.m_pay_tlast.read(), p_.m_pay_tkeep.read(), 0,
        p_.m_pay_tdata_w, 8);
  watch(w_m_byp_, edge, r, p_.m_byp_tvalid.read(), true, p_.m_byp_tlast.read(), p_.m_byp_tkeep.read(), 0,
        p_.m_byp_tdata_w, 8);
}

void RtlDatapath::watch_cmac(uint64_t edge) {
  const bool r = !p_.cmac_rst_n.read();
  watch(w_m_cmac_, edge, r, p_.m_cmac_tvalid.read(), p_.m_cmac_tready.read(), p_.m_cmac_tlast.read(),
        p_.m_cmac_tkeep.read(), 0, p_.m_cmac_tdata_w, 8);
  watch(w_s_cmac_, edge, r, p_.s_cmac_tvalid.read(), true, p_.s_cmac_tlast.read(), p_.s_cmac_tkeep.read(),
        p_.s_cmac_tuser.read(), p_.s_cmac_tdata_w, 8);
}

RtlDatapath::~RtlDatapath() = default;

void RtlDatapath::trace(VerilatedVcdSc* t, int levels) {
  if (top_.trace) top_.trace(t, levels);
}

bool RtlDatapath::in_flight() const {
  return tx_in_flight_ || rx_in_flight_ || !txd_q_.empty() || !pay_q_.empty() || !rx_q_.empty() || take_.active;
}

void RtlDatapath::wake() {
  // Both clocks: a frame in flight needs the two sides of its FIFO.
  if (core_idle_) core_wake_ev_.notify(SC_ZERO_TIME);
  if (cmac_idle_) cmac_wake_ev_.notify(SC_ZERO_TIME);
}

void RtlDatapath::tx(const seam::TxDesc& d, roce::Bytes payload) {
  const uint64_t now = ClockDomain::now_ps();
  const uint16_t sp = sport();
  // The reference frame for the scoreboard (the FIFO keeps the order).
  tx_exp_.push_back(seam::tx_frame(d, payload, sp));
  const uint64_t seq = ++desc_seq_;
  txd_q_.push_back({now, seam::pack(d), sp, {}, seq});
  if (!payload.empty()) pay_q_.push_back({now, std::move(payload), 0});
  ++tx_in_flight_;
  ++stats_.tx_frames;
  wake();
  while (desc_taken_ < seq) wait(desc_ev_);
  core_.sync();
}

void RtlDatapath::cmac_rx(FrameBytes f, uint64_t start_ps) {
  // The reference outputs for the scoreboard, in order per stream.
  seam::RxOutput o = seam::roce_rx_ref(f, false);
  RxExp e{o.bypass, o.desc, std::move(o.payload), {}};
  if (o.bypass) {
    e.frame = f;
    byp_exp_.push_back(std::move(e));
  } else {
    rx_exp_.push_back(std::move(e));
  }
  rx_q_.push_back({ClockDomain::now_ps(), start_ps, std::move(f), 0});
  ++rx_in_flight_;
  ++stats_.rx_in;
  wake();
}

// ------------------------------------------------------------------ core

void RtlDatapath::core_tick() {
  const uint64_t P = core_.period_ps(), H = P / 2;
  const uint64_t now = ClockDomain::now_ps();
  if (now == 0 && core_rise_next_ && core_reset_ == kResetCycles && !stats_.core_cycles_clocked) {
    core_h_ = ps(H);
    core_ph_ = ps(P - H);
    // Time 0: reset asserted, constant inputs, first rising edge at H.
    p_.core_rst_n.write(false);
    p_.seed.write(uint32_t(cfg_.seed ^ (cfg_.seed >> 32)));
    next_trigger(core_h_);
    return;
  }
  if (core_idle_) {  // woken by new input: resume at the next rising edge (now, if on one)
    core_idle_ = false;
    core_rise_next_ = true;
    const uint64_t r = now % P;
    const uint64_t rise = r <= H ? now - r + H : now - r + P + H;
    if (rise > now) {
      next_trigger(ps(rise - now));
      return;
    }
  }
  if (core_rise_next_) {
    // --- the RTL's rising edge: handshakes as the inputs and outputs stand.
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
    next_trigger(core_ph_);
    return;
  }
  // --- the model edge after it: clock low, new inputs, the edge's outputs.
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
  // Gating: keep clocking while anything is in flight, then settle.
  const bool busy = core_reset_ || in_flight();
  if (busy)
    core_settle_ = kSettleCycles;
  else if (core_settle_)
    --core_settle_;
  core_rise_next_ = true;
  if (busy || core_settle_ || !cfg_.idle_skip) {
    next_trigger(core_h_);
  } else {
    core_idle_ = true;
    // The clock stops: its next edge (and every one until it runs) is idle.
    for (Watch* w : {&w_s_desc_, &w_s_pay_, &w_m_desc_, &w_m_pay_, &w_m_byp_}) watch_idle(*w, core_.cycle());
    next_trigger(core_wake_ev_);
  }
}

void RtlDatapath::read_beat(const Pin<uint64_t>* w, uint64_t keep, roce::Bytes& out) {
  const size_t n = size_t(__builtin_popcountll(keep));
  uint8_t b[64];
  for (int i = 0; i < 8; ++i) {
    const uint64_t v = w[i].read();
    for (int k = 0; k < 8; ++k) b[i * 8 + k] = uint8_t(v >> (8 * k));
  }
  out.insert(out.end(), b, b + std::min<size_t>(n, 64));
}

const DatapathCorrupt* RtlDatapath::corruption(const char* stream, uint64_t index) const {
  for (const auto& c : cfg_.corrupt)
    if (c.stream == stream && c.frame == index) return &c;
  return nullptr;
}

void RtlDatapath::mismatch(const std::string& what, bool core_domain) {
  ++stats_.mismatches;
  if (reported_) return;  // the first difference is the run error; the rest are counted
  reported_ = true;
  ctx_.error(scope_ + ".scoreboard",
             fmt::format("RTL datapath ({}) vs reference model, node {}: {} at {} cycle {}", kind_, cfg_.node, what,
                         core_domain ? "core" : "CMAC", core_domain ? core_.cycle() : cmac_.cycle()));
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

void RtlDatapath::cmac_tick() {
  const uint64_t P = cmac_.period_ps(), H = P / 2;
  const uint64_t now = ClockDomain::now_ps();
  if (now == 0 && cmac_rise_next_ && cmac_reset_ == kResetCycles && !stats_.cmac_cycles_clocked) {
    cmac_h_ = ps(H);
    cmac_ph_ = ps(P - H);
    p_.cmac_rst_n.write(false);
    next_trigger(cmac_h_);
    return;
  }
  if (cmac_idle_) {
    cmac_idle_ = false;
    cmac_rise_next_ = true;
    const uint64_t r = now % P;
    const uint64_t rise = r <= H ? now - r + H : now - r + P + H;
    if (rise > now) {
      next_trigger(ps(rise - now));
      return;
    }
  }
  if (cmac_rise_next_) {
    // --- rising edge: the beat the CMAC takes, the RX beat written.
    watch_cmac(cmac_.cycle());
    if (take_.active && !take_.done) {
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
    next_trigger(cmac_ph_);
    return;
  }
  // --- model edge: clock low, inputs, outputs.
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
  const bool busy = cmac_reset_ || in_flight();
  if (busy)
    cmac_settle_ = kSettleCycles;
  else if (cmac_settle_)
    --cmac_settle_;
  cmac_rise_next_ = true;
  if (busy || cmac_settle_ || !cfg_.idle_skip) {
    next_trigger(cmac_h_);
  } else {
    cmac_idle_ = true;
    for (Watch* w : {&w_m_cmac_, &w_s_cmac_}) watch_idle(*w, cmac_.cycle());
    next_trigger(cmac_wake_ev_);
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
  p_.m_cmac_tready.write(true);
  if (cmac_model_) cmac_model_->set_tx_axis(true, p_.m_cmac_tlast.read(), p_.m_cmac_tkeep.read());
  wake();
  t.f = take_.in;
  t.streamed = true;
  t.t0_ps = ClockDomain::now_ps();
  return t;
}

std::string RtlDatapath::status() const {
  if (!in_flight()) return {};
  return fmt::format("datapath {}: {} TX frame(s) in flight ({} descriptor(s) queued), {} RX frame(s) in flight; "
                     "clocks {} / {} edges",
                     kind_, tx_in_flight_, txd_q_.size(), rx_in_flight_, stats_.core_cycles_clocked,
                     stats_.cmac_cycles_clocked);
}

std::unique_ptr<RoceDatapath> make_rtl_datapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac,
                                            SimContext& ctx, const std::string& scope, const DatapathConfig& cfg) {
  return std::make_unique<RtlDatapath>(name, core, cmac, ctx, scope, cfg, &bind_roce_datapath<Vroce_datapath>,
                                       "rtl");
}

}  // namespace ernic
