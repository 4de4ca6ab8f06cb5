// model/link: the wire, one direction of the link (class Wire, see cmac.h):
// its sending half (line.h): faults (the line's own or a flow's) and
// propagation delay; the copies go to its LineOut (in one process its own
// receiving half, LineRx: one frame at a time on the receiving line).
#include "model/link/cmac.h"

namespace ernic {

using namespace sc_core;

Wire::Wire(sc_module_name name, uint64_t delay_ps, double rate_gbps, uint64_t seed)
    : sc_module(name), delay_ps_(delay_ps), line_(rate_gbps), inj_(seed), rx_("rx", rate_gbps) {
  out = &rx_;
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
    out->carry(LineFrame{std::move(o.bytes), first + delay_ps_ + o.extra_delay_ps, bad_fcs});
  }
}

}  // namespace ernic
