// model/link: the CMAC (see cmac.h): construction, opcode counts, the
// waveform of its AXI4-Stream ports and the beats it presents there. TX in
// cmac_tx.cpp, RX in cmac_rx.cpp, PAUSE/PFC in cmac_pfc.cpp, the wire in
// cmac_wire.cpp.
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
  line_ = LineRate(p_.rate_gbps);
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
  SC_METHOD(report_streamed_underflow);
  sensitive << streamed_underflow_ev_;
  dont_initialize();
}

void Cmac::log_state(const char* what, const std::string& value) {
  if (ctx_.log)
    ctx_.log->state(ClockDomain::now_ps(), node, "cmac", cmac_clk_.cycle(), std::nullopt, what, value);
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

}  // namespace ernic
