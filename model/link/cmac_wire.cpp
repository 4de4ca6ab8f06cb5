// model/link: the wire, one direction of the link (class Wire, see cmac.h):
// faults (the line's own or a flow's), propagation delay, one frame at a
// time on the receiving line.
#include "model/link/cmac.h"

namespace ernic {

using namespace sc_core;

Wire::Wire(sc_module_name name, uint64_t delay_ps, double rate_gbps, uint64_t seed)
    : sc_module(name), delay_ps_(delay_ps), line_(rate_gbps), inj_(seed) {
  SC_THREAD(thread);
}

void Wire::set_link_up(bool up) { inj_.set_link_up(up); }

void Wire::add_flow(int id, const std::string& flow_label, uint64_t seed) {
  flows_.emplace(id, Flow{flow_label, FaultInjector(seed)});
}

void Wire::send(FrameBytes f, uint64_t first_byte_ps, uint64_t last_byte_ps, bool bad_fcs) {
  // The frame's flow, if the line has flows and the frame belongs to one.
  FaultInjector* inj = &inj_;
  const std::string* lab = &label;
  if (flow_of) {
    auto it = flows_.find(flow_of(f));
    if (it != flows_.end()) inj = &it->second.inj, lab = &it->second.label;
  }
  std::vector<FaultApplied> applied;
  std::vector<WireOut> outs = inj->on_frame(std::move(f), &applied);
  for (const FaultApplied& a : applied) {
    if (a.kind == FaultKind::drop) ++lost_;
    if (on_fault) on_fault(*lab, a);
  }
  // Outputs after the first follow it back to back on the line.
  uint64_t first = first_byte_ps, last = last_byte_ps;
  bool prev = false;
  for (WireOut& o : outs) {
    if (prev) {
      const uint64_t gap = line_.ifg_ps();
      first = last + gap + line_.preamble_ps();
      last = last + gap + line_.frame_ps(o.bytes.size());
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
    const uint64_t pre = line_.preamble_ps();
    const uint64_t dur = line_.frame_ps(item.f.size());
    const uint64_t ifg = line_.ifg_ps();
    const uint64_t start = std::max(item.first_ps - pre, rx_line_free_);
    const uint64_t end = start + dur;
    rx_line_free_ = end + ifg;
    const uint64_t t = ClockDomain::now_ps();
    if (end > t) wait(ps(end - t));
    if (dst) dst->rx_arrive(std::move(item.f), start + pre, item.bad_fcs);
  }
}

}  // namespace ernic
