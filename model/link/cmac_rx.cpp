// model/link: the CMAC's RX path (see cmac.h): frames from the wire, the
// FCS check, MAC control frames, the RX stream (or a datapath module), the
// crossing into the core domain.
#include <fmt/format.h>

#include "model/link/cmac.h"
#include "model/link/cmac_describe.h"

namespace ernic {

using namespace sc_core;
using cmac_detail::describe;

void Cmac::rx_arrive(FrameBytes frame, uint64_t first_byte_ps, bool bad_fcs) {
  // Called at the time the last byte arrived.
  uint64_t now = ClockDomain::now_ps();
  uint64_t edge = now + cmac_clk_.ps_to_edge();
  uint64_t ready = edge + p_.rx_latency_cycles * cmac_clk_.period_ps();
  rxq_.push_back({std::move(frame), first_byte_ps, ready, bad_fcs});
  rx_ev_.notify(SC_ZERO_TIME);
}

void Cmac::rx_thread() {
  const uint64_t bpb = 64;
  for (;;) {
    while (rxq_.empty()) wait(rx_ev_);
    RxItem it = std::move(rxq_.front());
    rxq_.pop_front();
    uint64_t now = ClockDomain::now_ps();
    if (it.f.size() + 4 > kCtlRxMaxPacketLen) {  // with its FCS
      if (it.ready_ps > now) wait(ps(it.ready_ps - now));
      ++pfc_.rx_too_long;
      const std::string what = fmt::format("frame longer than ctl_rx_max_packet_len ({} bytes) discarded ({} bytes, "
                                           "{})", kCtlRxMaxPacketLen, it.f.size() + 4, describe(it.f));
      ctx_.event(scope_, what);
      log_state("rx_too_long", what);
      ctx_.bump();
      continue;
    }
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

}  // namespace ernic
