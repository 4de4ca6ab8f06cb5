#include "model/link/cmac.h"

#include <cmath>

#include <fmt/format.h>

#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace ernic {

using namespace sc_core;

void OpcodeCounts::add(const FrameBytes& f) {
  uint32_t key = 0x100;  // non-RoCE
  if (roce::is_roce(f.data(), f.size())) {
    size_t off = roce::kEthHdrLen + roce::kUdpHdrLen +
                 (roce::get_be16(&f[12]) == roce::kEtherTypeIpv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen);
    if (off < f.size()) key = f[off];
  }
  auto& c = by_opcode[key];
  ++c.packets;
  c.bytes += f.size();
  ++packets;
  bytes += f.size();
}

Cmac::Cmac(sc_module_name name, const ClockDomain& cmac_clk, const ClockDomain& core_clk,
           SimContext& ctx, const std::string& scope, LinkParams p)
    : sc_module(name), cmac_clk_(cmac_clk), core_clk_(core_clk), ctx_(ctx), scope_(scope), p_(p) {
  ps_per_byte_x1000_ = uint64_t(std::llround(8.0e6 / p_.rate_gbps));
  v_tx_tvalid_ = ctx.var(scope, "tx_axis_tvalid", 1);
  v_tx_tready_ = ctx.var(scope, "tx_axis_tready", 1, 1);
  v_tx_tlast_ = ctx.var(scope, "tx_axis_tlast", 1);
  v_rx_tvalid_ = ctx.var(scope, "rx_axis_tvalid", 1);
  v_rx_tlast_ = ctx.var(scope, "rx_axis_tlast", 1);
  v_tx_fifo_level_ = ctx.var(scope, "tx_fifo_level", 8);
  v_ctl_tx_pause_req_ = ctx.var(scope, "ctl_tx_pause_req", 9);
  v_stat_rx_pause_req_ = ctx.var(scope, "stat_rx_pause_req", 9);
  v_tx_tkeep_ = ctx.var(scope, "tx_axis_tkeep", 64);
  v_rx_tkeep_ = ctx.var(scope, "rx_axis_tkeep", 64);
  // The TX FIFO's write side (core clock, a frame at a time): tvalid while
  // ERNIC's TX datapath offers a frame the FIFO cannot take yet.
  v_fifo_s_tvalid_ = ctx.var(scope + ".tx_fifo", "s_axis_tvalid", 1);
  v_fifo_s_tready_ = ctx.var(scope + ".tx_fifo", "s_axis_tready", 1, 1);
  mon_tx_ = &ctx.protocol.axis(scope + ".tx_axis", cmac_clk.name(), cmac_clk.period_ps(),
                               monitor::AxisRules::seam(/*has_ready=*/true, /*no_bubble=*/true));
  mon_rx_ = &ctx.protocol.axis(scope + ".rx_axis", cmac_clk.name(), cmac_clk.period_ps(),
                               monitor::AxisRules::seam(/*has_ready=*/false, /*no_bubble=*/false));
  using K = monitor::HandshakeRandomizer::Kind;
  tx_tready_stall_ = ctx.protocol.stall(scope + ".tx_axis.tready", K::ready);
  tx_tvalid_stall_ = ctx.protocol.stall(scope + ".tx_axis.tvalid", K::valid);
  rx_tvalid_stall_ = ctx.protocol.stall(scope + ".rx_axis.tvalid", K::valid);
  SC_THREAD(tx_thread);
  SC_THREAD(rx_thread);
  SC_THREAD(cdc_thread);
  SC_METHOD(pause_expiry);
  sensitive << pause_expiry_ev_;
  dont_initialize();
}

namespace {
// "RC_WRITE_MIDDLE psn=0x000012" for a RoCE frame, "EtherType 0x8808" else.
std::string describe(const FrameBytes& f) {
  if (roce::is_roce(f.data(), f.size())) {
    const size_t off = roce::kEthHdrLen + roce::kUdpHdrLen +
                       (roce::get_be16(&f[12]) == roce::kEtherTypeIpv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen);
    if (off + roce::kBthLen <= f.size())
      return fmt::format("{} psn=0x{:06x}", roce::opcode_name(f[off]), roce::get_be24(&f[off + 9]));
  }
  return f.size() >= 14 ? fmt::format("EtherType 0x{:04x}", roce::get_be16(&f[12])) : "runt";
}
}  // namespace

void Cmac::log_state(const char* what, const std::string& value) {
  if (ctx_.log)
    ctx_.log->state(ClockDomain::now_ps(), node, "cmac", cmac_clk_.cycle(), std::nullopt, what, value);
}

void Cmac::tx_push(FrameBytes frame) {
  ctx_.set(v_fifo_s_tvalid_, 1);
  while (fifo_.size() >= p_.tx_fifo_frames) wait(fifo_pop_ev_);
  fifo_.push_back(std::move(frame));
  ctx_.set(v_fifo_s_tvalid_, 0);
  ctx_.set(v_fifo_s_tready_, fifo_.size() < p_.tx_fifo_frames);
  fifo_ready_.push_back(ClockDomain::now_ps() + cmac_clk_.ps_to_edge() + p_.cdc_cycles * cmac_clk_.period_ps());
  ctx_.set(v_tx_fifo_level_, fifo_.size());
  fifo_push_ev_.notify(SC_ZERO_TIME);
}

void Cmac::set_tx_pause_req(uint16_t bits) {
  bits &= 0x1FF;
  if (bits == pause_req_) return;
  pause_req_ = bits;
  ctx_.set(v_ctl_tx_pause_req_, bits);
  pause_ev_.notify(SC_ZERO_TIME);
}

uint16_t Cmac::stat_rx_pause_req() const {
  const uint64_t now = ClockDomain::now_ps();
  uint16_t s = 0;
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) s |= uint16_t(1u << i);
  return s;
}

// The earliest time a standing XOFF must be refreshed (UINT64_MAX: none),
// or now when an XOFF or XON is due at once.
uint64_t Cmac::next_refresh_ps() const {
  uint64_t t = UINT64_MAX;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    const bool req = pause_req_ & bit, standing = xoff_standing_ & bit;
    if (req != standing) return ClockDomain::now_ps();
    if (req) t = std::min(t, refresh_at_ps_[i]);
  }
  return t;
}

std::optional<FrameBytes> Cmac::take_pause_frame(uint64_t now) {
  uint16_t xoff = 0, xon = 0;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    const bool req = pause_req_ & bit, standing = xoff_standing_ & bit;
    if (req && (!standing || now >= refresh_at_ps_[i])) xoff |= bit;
    else if (!req && standing) xon |= bit;
  }
  if (!(xoff | xon)) return std::nullopt;
  pfc::PauseFrame p;
  // Priorities 0..7 share one PFC frame; the 802.3x PAUSE (bit 8) is a
  // frame of its own (the next boundary).
  const uint16_t now_bits = (xoff | xon) & 0xFF ? uint16_t((xoff | xon) & 0xFF) : uint16_t(0x100);
  std::string what;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    if (!(now_bits & bit)) continue;
    const bool off = xoff & bit;
    const uint16_t q = off ? p_.pfc_quanta : 0;
    if (i < 8) {
      p.pfc = true;
      p.class_enable |= bit;
      p.time[i] = q;
    } else {
      p.time[0] = q;
    }
    if (off) {
      xoff_standing_ |= bit;
      refresh_at_ps_[i] = now + quanta_ps(p_.pfc_refresh_quanta);
      ++pfc_.xoff_sent;
    } else {
      xoff_standing_ &= uint16_t(~bit);
      ++pfc_.xon_sent;
    }
    what += fmt::format("{}{} {} (time {})", what.empty() ? "" : ", ", off ? "XOFF" : "XON",
                        i < 8 ? fmt::format("priority {}", i) : std::string("all (802.3x PAUSE)"), q);
  }
  log_state("pfc_tx", what);
  return pfc::build(mac, p);
}

void Cmac::set_tx_axis(bool tvalid, bool tlast, uint64_t tkeep) {
  ctx_.set(v_tx_tvalid_, tvalid);
  ctx_.set(v_tx_tlast_, tlast);
  ctx_.set(v_tx_tkeep_, tvalid ? tkeep : 0);
}

void Cmac::set_tx_tready(bool tready) { ctx_.set(v_tx_tready_, tready); }

void Cmac::set_rx_axis(bool tvalid, bool tlast, uint64_t tkeep) {
  ctx_.set(v_rx_tvalid_, tvalid);
  ctx_.set(v_rx_tlast_, tlast);
  ctx_.set(v_rx_tkeep_, tvalid ? tkeep : 0);
}

void Cmac::tx_thread() {
  if (tx_source) return tx_thread_src();
  for (;;) {
    // Idle until a data frame is queued or a pause frame is due.
    for (;;) {
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t r = next_refresh_ps();
      if (!fifo_.empty() || r <= now) break;
      if (r == UINT64_MAX)
        wait(fifo_push_ev_ | pause_ev_);
      else
        wait(ps(r - now), fifo_push_ev_ | pause_ev_);
    }
    tx_busy_ = true;
    // Async FIFO crossing: a data frame is visible to the CMAC domain after
    // cdc_cycles of its clock. Pause frames are made in the CMAC domain.
    if (!fifo_.empty())
      cmac_clk_.wait_cycles(p_.cdc_cycles);
    else
      cmac_clk_.sync();
    wait_line_free();
    const uint64_t now = ClockDomain::now_ps();
    // A frame boundary: MAC control frames go ahead of queued data.
    if (auto pf = take_pause_frame(now)) {
      transmit(std::move(*pf), 0, 0, /*axis=*/false);
      tx_busy_ = false;
      continue;
    }
    if (fifo_.empty()) {
      tx_busy_ = false;
      continue;
    }
    // A paused traffic class waits here, and the FIFO behind it.
    const uint16_t stat = stat_rx_pause_req();
    if (tx_hold && tx_hold(fifo_.front(), stat)) {
      hold(fifo_.front(), stat, now);
      continue;
    }
    release(stat, now);
    transmit_host_frame();
    tx_busy_ = false;
  }
}

// TX with a datapath module (tx_source): its frames, and the host's bypass
// frames (tx_push: non_roce_dma_s_axis, merged into cmac_m_axis after their
// own crossing of cdc_cycles), taken in turn at frame boundaries when both
// wait; a held class (PFC) does not hold the other source.
void Cmac::tx_thread_src() {
  bool prefer_host = false;
  auto host_visible = [this](uint64_t now) { return !fifo_.empty() && fifo_ready_.front() <= now; };
  for (;;) {
    for (;;) {
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t r = next_refresh_ps();
      size_t n = 0;
      if (tx_source->tx_head(&n) || host_visible(now) || r <= now) break;
      uint64_t w = r;
      if (!fifo_.empty()) w = std::min(w, fifo_ready_.front());
      if (w == UINT64_MAX)
        wait(tx_source->tx_head_event() | fifo_push_ev_ | pause_ev_);
      else
        wait(ps(w - now), tx_source->tx_head_event() | fifo_push_ev_ | pause_ev_);
    }
    tx_busy_ = true;
    cmac_clk_.sync();
    wait_line_free();
    const uint64_t now = ClockDomain::now_ps();
    if (auto pf = take_pause_frame(now)) {
      transmit(std::move(*pf), 0, 0, /*axis=*/false);
      tx_busy_ = false;
      continue;
    }
    size_t n = 0;
    const uint8_t* h = tx_source->tx_head(&n);
    const bool host_vis = host_visible(now);
    if (!h && !host_vis) {
      tx_busy_ = false;
      continue;
    }
    // The datapath's frame is judged by its first beat.
    FrameBytes head;
    if (h) head.assign(h, h + n);
    const uint16_t stat = stat_rx_pause_req();
    const bool src_ok = h && !(tx_hold && tx_hold(head, stat));
    const bool host_ok = host_vis && !(tx_hold && tx_hold(fifo_.front(), stat));
    if (!src_ok && !host_ok) {
      hold(h ? head : fifo_.front(), stat, now);
      continue;
    }
    release(stat, now);
    const bool take_host = host_ok && (!src_ok || prefer_host);
    prefer_host = !take_host;
    if (take_host) {
      transmit_host_frame();
      tx_busy_ = false;
      continue;
    }
    const bool plan = bubble_.armed && tx_index_ >= bubble_.frame;
    CmacTxSource::Taken t = tx_source->tx_take(plan ? bubble_.after_beat : 0, plan ? bubble_.cycles : 0);
    if (t.streamed) {
      // The datapath moves (and traces) its beats from now on; the line
      // takes it from its first beat.
      if (t.bubble_cycles) bubble_.armed = false;
      const uint64_t index = tx_index_++;
      put_on_line(t.f, t.t0_ps, t.bubble_cycles > 0);
      if (t.bubble_cycles)
        report_underflow(t.f, index, t.bubble_after, t.bubble_cycles,
                         t.t0_ps + (uint64_t(t.bubble_after) + 1) * cmac_clk_.period_ps());
    } else {
      transmit_with_bubble(std::move(t.f));
    }
    tx_busy_ = false;
  }
}

// Waits for the line (the previous frame's IFG) to be free, tready low meanwhile.
void Cmac::wait_line_free() {
  const uint64_t now = ClockDomain::now_ps();
  if (line_free_ps_ > now) {
    ctx_.set(v_tx_tready_, 0);
    wait(ps(line_free_ps_ - now));
    cmac_clk_.sync();
    ctx_.set(v_tx_tready_, 1);
  }
}

// A paused traffic class waits (and what is queued behind it) until the
// pause state changes.
void Cmac::hold(const FrameBytes& front, uint16_t stat, uint64_t now) {
  if (!holding_) {
    holding_ = true;
    hold_since_ps_ = now;
    ++pfc_.held;
    log_state("pfc_hold", fmt::format("stat_rx_pause_req = 0x{:03x}: {} waits", stat, describe(front)));
  }
  tx_busy_ = false;
  uint64_t wake = next_refresh_ps();
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) wake = std::min(wake, rx_pause_until_ps_[i]);
  if (wake == UINT64_MAX)
    wait(pause_ev_);
  else if (wake > now)
    wait(ps(wake - now), pause_ev_);
}

void Cmac::release(uint16_t stat, uint64_t now) {
  if (!holding_) return;
  holding_ = false;
  pfc_.held_ps += now - hold_since_ps_;
  log_state("pfc_release", fmt::format("stat_rx_pause_req = 0x{:03x}: sending again after {} ns", stat,
                                       (now - hold_since_ps_) / 1000));
}

// The frame at the head of the own FIFO, with the test hook's bubble.
void Cmac::transmit_host_frame() {
  FrameBytes f = std::move(fifo_.front());
  fifo_.pop_front();
  fifo_ready_.pop_front();
  ctx_.set(v_tx_fifo_level_, fifo_.size());
  ctx_.set(v_fifo_s_tready_, 1);
  fifo_pop_ev_.notify(SC_ZERO_TIME);
  transmit_with_bubble(std::move(f));
}

void Cmac::transmit_with_bubble(FrameBytes f) {
  uint32_t after = 0, cycles = 0;
  const uint64_t beats = (f.size() + 63) / 64;
  if (bubble_.armed && tx_index_ >= bubble_.frame && beats > uint64_t(bubble_.after_beat) + 1) {
    after = bubble_.after_beat;
    cycles = bubble_.cycles;
    bubble_.armed = false;
  }
  transmit(std::move(f), after, cycles);
}

// The line side of a frame whose first beat the MAC took at t0 (a CMAC
// edge): the taps and observers, the wire (faults are decided now), the
// line busy until its IFG is over; a TX underflow is a run error.
void Cmac::put_on_line(const FrameBytes& f, uint64_t t0, bool underflow) {
  const uint64_t first_byte = t0 + line_ps(LinkParams::kPreambleSfd);
  const uint64_t last_byte = t0 + line_ps(LinkParams::kPreambleSfd + f.size() + LinkParams::kFcs);
  line_free_ps_ = last_byte + line_ps(LinkParams::kIfg);
  tx_counts_.add(f);
  if (tap_tx) tap_tx->write(f.data(), f.size(), first_byte);
  if (tap_wire) tap_wire->write_ordered(f.data(), f.size(), first_byte, tap_wire_source);
  if (on_tx) on_tx(f, first_byte);
  ctx_.bump();
  if (wire_out) wire_out->send(f, first_byte, last_byte, underflow);
}

void Cmac::report_underflow(const FrameBytes& f, uint64_t index, uint32_t bubble_after, uint32_t bubble_cycles,
                            uint64_t t_bubble) {
  const uint64_t beats = (f.size() + 63) / 64;
  ++pfc_.tx_underflows;
  const std::string what = fmt::format(
      "TX underflow on node {} at {:.3f} ns: tx_axis_tvalid low for {} CMAC cycles after beat {} of {} of TX "
      "frame #{} ({} bytes, {}); the CMAC aborts the frame (stomped FCS, the receiver discards it)",
      node, double(t_bubble) / 1000.0, bubble_cycles, bubble_after, beats, index, f.size(), describe(f));
  ctx_.error(scope_, what);
  log_state("tx_underflow", what);
}

// Puts one frame on the line now (a frame boundary, the line free).
void Cmac::transmit(FrameBytes f, uint32_t bubble_after, uint32_t bubble_cycles, bool axis) {
  const uint64_t bpb = 64;  // bytes a beat on the 512-bit stream
  // Randomised handshake: the NIC's stream raises TVALID late (the frame starts later).
  if (axis)
    if (const uint32_t h = tx_tvalid_stall_.hold()) wait(cmac_clk_.cycles(h));
  const uint64_t index = tx_index_++;
  const uint64_t t0 = ClockDomain::now_ps();
  const uint64_t beats = (f.size() + bpb - 1) / bpb;
  // The AXI4-Stream into the MAC must deliver every beat of a frame back
  // to back once its first beat is taken: a bubble is a TX underflow.
  const bool underflow = bubble_cycles > 0 && beats > uint64_t(bubble_after) + 1;
  // The frame is on the line from t0 (cut-through: the MAC serialises the
  // beats as they come); the wire sees it now, faults are decided now.
  put_on_line(f, t0, underflow);
  // AXI4-Stream beats: one a cycle, tlast on the last; TREADY low where the
  // randomised handshake stalls; TVALID low for the underflow hook's bubble.
  std::vector<AxisRun> runs;
  for (uint64_t i = 0; i < beats; ++i) {
    if (underflow && i == uint64_t(bubble_after) + 1) runs.push_back({false, true, i, bubble_cycles});
    if (axis)
      if (const uint32_t h = tx_tready_stall_.hold()) runs.push_back({true, false, i, h});
    add_beat(runs, i);
  }
  walk_axis(f, runs, axis ? mon_tx_ : nullptr, v_tx_tvalid_, v_tx_tready_, v_tx_tlast_, v_tx_tkeep_, [&] {
    // Detected on the first cycle tvalid is low inside the frame.
    report_underflow(f, index, bubble_after, bubble_cycles, ClockDomain::now_ps());
  });
}

void Cmac::add_beat(std::vector<AxisRun>& runs, uint64_t beat) {
  AxisRun* b = runs.empty() ? nullptr : &runs.back();
  if (b && b->valid && b->ready && b->beat + b->cycles == beat)
    ++b->cycles;  // back to back with the run before
  else
    runs.push_back({true, true, beat, 1});
}

void Cmac::walk_axis(const FrameBytes& f, const std::vector<AxisRun>& runs, monitor::AxisMonitor* mon, int v_valid,
                     int v_ready, int v_last, int v_keep, const std::function<void()>& on_bubble) {
  const uint64_t c0 = cmac_clk_.cycle();
  const uint64_t beats = monitor::axis_beats(f.size());
  const uint64_t last_keep = f.size() % 64 ? (uint64_t{1} << (f.size() % 64)) - 1 : ~uint64_t{0};
  uint64_t at = 0;  // the edge (from c0) the thread is at
  bool valid = false, ready = true, last = false, started = false;
  // The signals from edge k on, beat `beat` offered.
  auto point = [&](uint64_t k, bool v, bool rd, uint64_t beat) {
    const bool l = v && beat + 1 == beats;
    if (v != valid || rd != ready || l != last) {
      if (k > at) wait(cmac_clk_.cycles(k - at)), at = k;
      if (v != valid) ctx_.set(v_valid, v);
      if (v && !started) ctx_.set(v_keep, beats > 1 ? ~uint64_t{0} : last_keep);
      if (rd != ready) ctx_.set(v_ready, rd);
      if (l != last) ctx_.set(v_last, l);
      if (l && !last) ctx_.set(v_keep, last_keep);
      if (!v && started && on_bubble) on_bubble();
      valid = v, ready = rd, last = l;
    }
    started |= v;
    if (mon) {
      monitor::AxisSample s;
      s.valid = v;
      s.ready = rd;
      monitor::AxisBeat b;
      if (v) {
        b = monitor::axis_beat(f.data(), f.size(), beat);
        s.last = l;
        s.keep = b.keep;
        s.data = b.data.data();
      }
      mon->sample(c0 + k, s);
    }
  };
  uint64_t k = 0;
  for (const AxisRun& r : runs) {
    point(k, r.valid, r.ready, r.beat);
    // A run of back-to-back transfers: its last beat (the monitor takes the
    // edges between as transfers of full, non-last beats).
    if (r.valid && r.ready && r.cycles > 1) point(k + r.cycles - 1, true, true, r.beat + r.cycles - 1);
    k += r.cycles;
  }
  if (k > at) wait(cmac_clk_.cycles(k - at));
  ctx_.set(v_last, 0);
  ctx_.set(v_valid, 0);
  ctx_.set(v_keep, 0);
  if (mon) mon->sample(c0 + k, monitor::AxisSample{});
}

void Cmac::rx_arrive(FrameBytes frame, uint64_t first_byte_ps, bool bad_fcs) {
  // Called at the time the last byte arrived.
  uint64_t now = ClockDomain::now_ps();
  uint64_t edge = now + cmac_clk_.ps_to_edge();
  uint64_t ready = edge + p_.rx_latency_cycles * cmac_clk_.period_ps();
  rxq_.push_back({std::move(frame), first_byte_ps, ready, bad_fcs});
  rx_ev_.notify(SC_ZERO_TIME);
}

void Cmac::rx_pause(const pfc::PauseFrame& p, uint64_t now) {
  ++pfc_.pause_rx;
  std::string what;
  for (int i = 0; i < 9; ++i) {
    const bool on = i < 8 ? p.pfc && (p.class_enable >> i & 1) : !p.pfc;
    if (!on) continue;
    const uint16_t q = i < 8 ? p.time[i] : p.time[0];
    rx_pause_until_ps_[i] = now + quanta_ps(q);
    what += fmt::format("{}{} time {}", what.empty() ? "" : ", ",
                        i < 8 ? fmt::format("priority {}", i) : std::string("all (802.3x PAUSE)"), q);
  }
  const uint16_t stat = stat_rx_pause_req();
  ctx_.set(v_stat_rx_pause_req_, stat);
  log_state("pfc_rx", fmt::format("{}: stat_rx_pause_req = 0x{:03x}", what, stat));
  pause_ev_.notify(SC_ZERO_TIME);
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) pause_expiry_ev_.notify(ps(rx_pause_until_ps_[i] - now));
}

// A pause timer ran out: stat_rx_pause_req drops that bit.
void Cmac::pause_expiry() {
  const uint64_t now = ClockDomain::now_ps();
  ctx_.set(v_stat_rx_pause_req_, stat_rx_pause_req());
  pause_ev_.notify(SC_ZERO_TIME);
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) pause_expiry_ev_.notify(ps(rx_pause_until_ps_[i] - now));
}

void Cmac::rx_thread() {
  const uint64_t bpb = 64;
  for (;;) {
    while (rxq_.empty()) wait(rx_ev_);
    RxItem it = std::move(rxq_.front());
    rxq_.pop_front();
    uint64_t now = ClockDomain::now_ps();
    if (rx_stream && !it.bad_fcs && !pfc::is_mac_control(it.f.data(), it.f.size())) {
      // A datapath module takes the frame's beats from ready_ps on and
      // crosses them into the core domain. It is told one CMAC cycle ahead,
      // so that its inputs are set up on the edge before.
      const uint64_t C = cmac_clk_.period_ps();
      if (it.ready_ps >= now + C) wait(ps(it.ready_ps - C - now));
      now = ClockDomain::now_ps();
      const uint64_t start = std::max(it.ready_ps, now + cmac_clk_.ps_to_edge() + C);
      const uint64_t beats = (it.f.size() + bpb - 1) / bpb;
      const uint64_t last_keep = it.f.size() % bpb ? (uint64_t{1} << (it.f.size() % bpb)) - 1 : ~uint64_t{0};
      rx_stream(it.f, start);
      if (!axis_traced) {  // the waveform of the beats, as the MAC presents them
        ctx_.set_at(v_rx_tvalid_, 1, start);
        ctx_.set_at(v_rx_tkeep_, beats > 1 ? ~uint64_t{0} : last_keep, start);
        ctx_.set_at(v_rx_tlast_, 1, start + (beats - 1) * C);
        ctx_.set_at(v_rx_tkeep_, last_keep, start + (beats - 1) * C);
        ctx_.set_at(v_rx_tlast_, 0, start + beats * C);
        ctx_.set_at(v_rx_tvalid_, 0, start + beats * C);
        ctx_.set_at(v_rx_tkeep_, 0, start + beats * C);
      }
      wait(ps(start - now));
      rx_counts_.add(it.f);
      if (tap_rx) tap_rx->write(it.f.data(), it.f.size(), it.first_byte_ps);
      if (on_rx) on_rx(it.f, it.first_byte_ps);
      ctx_.bump();
      continue;
    }
    if (it.ready_ps > now) wait(ps(it.ready_ps - now));
    if (it.bad_fcs) {
      // FCS check failed (the transmitter aborted the frame): discarded
      // by the MAC, never handed on.
      ++pfc_.rx_bad_fcs;
      const std::string what = fmt::format("frame with a bad FCS discarded ({} bytes, {})", it.f.size(), describe(it.f));
      ctx_.event(scope_, what);
      log_state("rx_bad_fcs", what);
      ctx_.bump();
      continue;
    }
    rx_counts_.add(it.f);
    if (tap_rx) tap_rx->write(it.f.data(), it.f.size(), it.first_byte_ps);
    if (on_rx) on_rx(it.f, it.first_byte_ps);
    ctx_.bump();
    // MAC control frames (PAUSE / PFC) end in the MAC.
    if (pfc::is_mac_control(it.f.data(), it.f.size())) {
      if (auto p = pfc::parse(it.f.data(), it.f.size())) rx_pause(*p, ClockDomain::now_ps());
      continue;
    }
    // The RX stream presents the frame's beats (no tready), then the async
    // FIFO hands it to the core domain.
    // (Randomised handshake: TVALID low at random edges before a beat.)
    const uint64_t beats = (it.f.size() + bpb - 1) / bpb;
    std::vector<AxisRun> runs;
    for (uint64_t i = 0; i < beats; ++i) {
      if (const uint32_t h = rx_tvalid_stall_.hold()) runs.push_back({false, true, i, h});
      add_beat(runs, i);
    }
    walk_axis(it.f, runs, mon_rx_, v_rx_tvalid_, -1, v_rx_tlast_, v_rx_tkeep_, nullptr);
    // The async FIFO is pipelined: each frame reaches the core domain
    // cdc_cycles of the core clock after its last beat, while the next
    // frame's beats already come in (a crossing adds latency, it does not
    // cap throughput).
    cdcq_.push_back({std::move(it.f), ClockDomain::now_ps() + core_clk_.ps_to_edge() +
                                          p_.cdc_cycles * core_clk_.period_ps()});
    cdc_ev_.notify(SC_ZERO_TIME);
  }
}

void Cmac::cdc_thread() {
  for (;;) {
    while (cdcq_.empty()) wait(cdc_ev_);
    const uint64_t now = ClockDomain::now_ps();
    if (cdcq_.front().ready_ps > now) {
      wait(ps(cdcq_.front().ready_ps - now));
      continue;
    }
    FrameBytes f = std::move(cdcq_.front().f);
    cdcq_.pop_front();
    if (rx_sink) rx_sink(std::move(f));
  }
}

Wire::Wire(sc_module_name name, uint64_t delay_ps, double rate_gbps, uint64_t seed)
    : sc_module(name), delay_ps_(delay_ps), ps_per_byte_x1000_(uint64_t(std::llround(8.0e6 / rate_gbps))),
      inj_(seed) {
  SC_THREAD(thread);
}

void Wire::set_link_up(bool up) { inj_.set_link_up(up); }

void Wire::send(FrameBytes f, uint64_t first_byte_ps, uint64_t last_byte_ps, bool bad_fcs) {
  std::vector<FaultApplied> applied;
  std::vector<WireOut> outs = inj_.on_frame(std::move(f), &applied);
  for (const FaultApplied& a : applied) {
    if (a.kind == FaultKind::drop) ++lost_;
    if (on_fault) on_fault(a);
  }
  // Outputs after the first follow it back to back on the line.
  uint64_t first = first_byte_ps, last = last_byte_ps;
  bool prev = false;
  for (WireOut& o : outs) {
    if (prev) {
      const uint64_t len = LinkParams::kPreambleSfd + o.bytes.size() + LinkParams::kFcs;
      const uint64_t gap = (LinkParams::kIfg * ps_per_byte_x1000_ + 999) / 1000;
      first = last + gap + (LinkParams::kPreambleSfd * ps_per_byte_x1000_ + 999) / 1000;
      last = last + gap + (len * ps_per_byte_x1000_ + 999) / 1000;
    }
    prev = true;
    const uint64_t arrive = last + delay_ps_ + o.extra_delay_ps;
    q_.emplace(std::make_pair(arrive, seq_++), Item{std::move(o.bytes), first + delay_ps_ + o.extra_delay_ps, bad_fcs});
  }
  ev_.notify(SC_ZERO_TIME);
}

void Wire::thread() {
  for (;;) {
    while (q_.empty()) wait(ev_);
    auto it = q_.begin();
    const uint64_t arrive = it->first.first;
    const uint64_t now = ClockDomain::now_ps();
    if (arrive > now) {
      // A frame sent meanwhile may arrive earlier (a delayed frame is overtaken).
      wait(ps(arrive - now), ev_);
      continue;
    }
    Item item = std::move(it->second);
    q_.erase(it);
    // One frame at a time on the receiving line: a duplicate, a released or
    // a delayed frame pushes what follows it back (preamble + frame + FCS,
    // then the IFG).
    const uint64_t pre = (LinkParams::kPreambleSfd * ps_per_byte_x1000_ + 999) / 1000;
    const uint64_t dur = ((LinkParams::kPreambleSfd + item.f.size() + LinkParams::kFcs) * ps_per_byte_x1000_ + 999) / 1000;
    const uint64_t ifg = (LinkParams::kIfg * ps_per_byte_x1000_ + 999) / 1000;
    const uint64_t start = std::max(item.first_ps - pre, rx_line_free_);
    const uint64_t end = start + dur;
    rx_line_free_ = end + ifg;
    const uint64_t t = ClockDomain::now_ps();
    if (end > t) wait(ps(end - t));
    if (dst) dst->rx_arrive(std::move(item.f), start + pre, item.bad_fcs);
  }
}

}  // namespace ernic
