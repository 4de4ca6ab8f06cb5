// model/link: the receiving half of a line (line.h).
#include "model/link/cmac.h"

namespace ernic {

using namespace sc_core;

LineRx::LineRx(sc_module_name name, double rate_gbps)
    : sc_module(name), ps_per_byte_x1000_(LineRate(rate_gbps).ps_per_byte_x1000) {
  SC_THREAD(thread);
}

void LineRx::carry(LineFrame lf) {
  LineRate line;
  line.ps_per_byte_x1000 = ps_per_byte_x1000_;
  const uint64_t last = lf.first_ps - line.preamble_ps() + line.frame_ps(lf.f.size());
  q_.emplace(std::make_pair(last, seq_++), std::move(lf));
  ev_.notify(SC_ZERO_TIME);
}

void LineRx::thread() {
  LineRate line;
  line.ps_per_byte_x1000 = ps_per_byte_x1000_;
  for (;;) {
    while (q_.empty()) wait(ev_);
    auto it = q_.begin();
    const uint64_t arrive = it->first.first;
    const uint64_t now = ClockDomain::now_ps();
    if (arrive > now) {
      // A frame carried meanwhile may arrive earlier (a delayed frame is overtaken).
      wait(ps(arrive - now), ev_);
      continue;
    }
    LineFrame lf = std::move(it->second);
    q_.erase(it);
    const uint64_t pre = line.preamble_ps();
    const uint64_t start = std::max(lf.first_ps - pre, rx_line_free_);
    const uint64_t end = start + line.frame_ps(lf.f.size());
    rx_line_free_ = end + line.ifg_ps();
    const uint64_t t = ClockDomain::now_ps();
    if (end > t) wait(ps(end - t));
    if (dst) dst->rx_arrive(std::move(lf.f), start + pre, lf.bad_fcs);
  }
}

}  // namespace ernic
