#include "model/link/cmac.h"

#include <cmath>

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
    : sc_module(name), cmac_clk_(cmac_clk), core_clk_(core_clk), ctx_(ctx), p_(p) {
  ps_per_byte_x1000_ = uint64_t(std::llround(8.0e6 / p_.rate_gbps));
  v_tx_tvalid_ = ctx.var(scope, "tx_axis_tvalid", 1);
  v_tx_tready_ = ctx.var(scope, "tx_axis_tready", 1, 1);
  v_tx_tlast_ = ctx.var(scope, "tx_axis_tlast", 1);
  v_rx_tvalid_ = ctx.var(scope, "rx_axis_tvalid", 1);
  v_rx_tlast_ = ctx.var(scope, "rx_axis_tlast", 1);
  v_tx_fifo_level_ = ctx.var(scope, "tx_fifo_level", 8);
  SC_THREAD(tx_thread);
  SC_THREAD(rx_thread);
}

void Cmac::tx_push(FrameBytes frame) {
  while (fifo_.size() >= p_.tx_fifo_frames) wait(fifo_pop_ev_);
  fifo_.push_back(std::move(frame));
  ctx_.set(v_tx_fifo_level_, fifo_.size());
  fifo_push_ev_.notify(SC_ZERO_TIME);
}

void Cmac::tx_thread() {
  const uint64_t bpb = 64;  // bytes a beat on the 512-bit stream
  for (;;) {
    while (fifo_.empty()) wait(fifo_push_ev_);
    tx_busy_ = true;
    // Async FIFO crossing: the frame is visible to the CMAC domain after
    // cdc_cycles of its clock.
    cmac_clk_.wait_cycles(p_.cdc_cycles);
    // Wait for the line (the previous frame's IFG) to be free.
    uint64_t now = ClockDomain::now_ps();
    if (line_free_ps_ > now) {
      ctx_.set(v_tx_tready_, 0);
      wait(ps(line_free_ps_ - now));
      cmac_clk_.sync();
      ctx_.set(v_tx_tready_, 1);
    }
    FrameBytes f = std::move(fifo_.front());
    fifo_.pop_front();
    ctx_.set(v_tx_fifo_level_, fifo_.size());
    fifo_pop_ev_.notify(SC_ZERO_TIME);

    const uint64_t t0 = ClockDomain::now_ps();
    const uint64_t first_byte = t0 + line_ps(LinkParams::kPreambleSfd);
    const uint64_t last_byte = t0 + line_ps(LinkParams::kPreambleSfd + f.size() + LinkParams::kFcs);
    line_free_ps_ = last_byte + line_ps(LinkParams::kIfg);
    tx_counts_.add(f);
    if (tap_tx) tap_tx->write(f.data(), f.size(), first_byte);
    if (tap_wire) tap_wire->write(f.data(), f.size(), first_byte);
    if (on_tx) on_tx(f, first_byte);
    ctx_.bump();
    // The frame is on the line from t0 (cut-through: the MAC serialises the
    // beats as they come); the wire sees it now, faults are decided now.
    const uint64_t beats = (f.size() + bpb - 1) / bpb;
    if (wire_out) wire_out->send(f, first_byte, last_byte);
    // AXI4-Stream beats: one a cycle, tlast on the last.
    ctx_.set(v_tx_tvalid_, 1);
    if (beats > 1) wait(cmac_clk_.cycles(beats - 1));
    ctx_.set(v_tx_tlast_, 1);
    wait(cmac_clk_.period());
    ctx_.set(v_tx_tlast_, 0);
    ctx_.set(v_tx_tvalid_, 0);
    tx_busy_ = false;
  }
}

void Cmac::rx_arrive(FrameBytes frame, uint64_t first_byte_ps) {
  // Called at the time the last byte arrived.
  uint64_t now = ClockDomain::now_ps();
  uint64_t edge = now + cmac_clk_.ps_to_edge();
  uint64_t ready = edge + p_.rx_latency_cycles * cmac_clk_.period_ps();
  rxq_.push_back({std::move(frame), first_byte_ps, ready});
  rx_ev_.notify(SC_ZERO_TIME);
}

void Cmac::rx_thread() {
  const uint64_t bpb = 64;
  for (;;) {
    while (rxq_.empty()) wait(rx_ev_);
    RxItem it = std::move(rxq_.front());
    rxq_.pop_front();
    uint64_t now = ClockDomain::now_ps();
    if (it.ready_ps > now) wait(ps(it.ready_ps - now));
    rx_counts_.add(it.f);
    if (tap_rx) tap_rx->write(it.f.data(), it.f.size(), it.first_byte_ps);
    if (on_rx) on_rx(it.f, it.first_byte_ps);
    ctx_.bump();
    // The RX stream presents the frame's beats (no tready), then the async
    // FIFO hands it to the core domain.
    const uint64_t beats = (it.f.size() + bpb - 1) / bpb;
    ctx_.set(v_rx_tvalid_, 1);
    if (beats > 1) wait(cmac_clk_.cycles(beats - 1));
    ctx_.set(v_rx_tlast_, 1);
    wait(cmac_clk_.period());
    ctx_.set(v_rx_tlast_, 0);
    ctx_.set(v_rx_tvalid_, 0);
    core_clk_.wait_cycles(p_.cdc_cycles);
    if (rx_sink) rx_sink(std::move(it.f));
  }
}

Wire::Wire(sc_module_name name, uint64_t delay_ps, double rate_gbps, uint64_t seed)
    : sc_module(name), delay_ps_(delay_ps), ps_per_byte_x1000_(uint64_t(std::llround(8.0e6 / rate_gbps))),
      inj_(seed) {
  SC_THREAD(thread);
}

void Wire::set_link_up(bool up) { inj_.set_link_up(up); }

void Wire::send(FrameBytes f, uint64_t first_byte_ps, uint64_t last_byte_ps) {
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
    q_.emplace(std::make_pair(arrive, seq_++), Item{std::move(o.bytes), first + delay_ps_ + o.extra_delay_ps});
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
    if (dst) dst->rx_arrive(std::move(item.f), start + pre);
  }
}

}  // namespace ernic
