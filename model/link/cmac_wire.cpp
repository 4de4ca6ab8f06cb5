// model/link: the wire, one direction of the link (class Wire, see cmac.h):
// faults, propagation delay, one frame at a time on the receiving line.
#include <cmath>

#include "model/link/cmac.h"

namespace ernic {

using namespace sc_core;

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
