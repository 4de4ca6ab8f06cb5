// model/link: the switch (see switch.h): its ports, the forwarding table,
// what a frame arriving at a port becomes (dropped, consumed, forwarded or
// flooded) and the forwarding latency. The ports' egress queues, ECN and
// PFC are switch_port.cpp's.
#include "model/link/switch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "model/link/cmac_describe.h"
#include "model/roce/packet.h"

namespace ernic {

using namespace sc_core;

Switch::Switch(sc_module_name name, SimContext& ctx, const std::string& scope, SwitchConfig cfg,
               const ClockDomain* log_clock)
    : sc_module(name), ctx_(ctx), scope_(scope), cfg_(std::move(cfg)), log_clock_(log_clock), rng_(cfg_.seed) {
  for (size_t p = 0; p < cfg_.ports.size(); ++p)
    ports_.push_back(std::make_unique<SwitchPort>(fmt::format("p{}", p).c_str(), *this, p));
  SC_THREAD(forward);
}

int Switch::port_of(const uint8_t mac[6]) const {
  for (size_t p = 0; p < cfg_.ports.size(); ++p)
    if (std::memcmp(cfg_.ports[p].node_mac.data(), mac, 6) == 0) return int(p);
  return -1;
}

void Switch::arrive(size_t in, FrameBytes f, bool bad_fcs) {
  SwitchPort& ip = *ports_[in];
  SwitchPortCounters& c = ip.counters;
  ++c.frames_in;
  c.bytes_in += f.size();
  ctx_.bump();
  if (bad_fcs) {  // the MAC's FCS check: discarded
    ++c.rx_bad_fcs;
    ip.log("switch_drop", fmt::format("bad FCS: {} ({} bytes)", cmac_detail::describe(f), f.size()));
    return;
  }
  const uint64_t now = ClockDomain::now_ps();
  release_departures(now);  // departures of this instant first (PFC counts)
  if (pfc::is_mac_control(f.data(), f.size())) {  // ends at the port
    if (auto p = pfc::parse(f.data(), f.size()))
      ip.rx_pause(*p, now);
    else
      ++c.no_route;
    return;
  }
  if (f.size() < roce::kEthHdrLen) {
    ++c.no_route;
    return;
  }
  std::vector<size_t> out;
  const int to = port_of(f.data());
  if (to >= 0 && size_t(to) != in) {
    out.push_back(size_t(to));
  } else if (to < 0 && cfg_.flood_unknown) {
    for (size_t p = 0; p < ports_.size(); ++p)
      if (p != in) out.push_back(p);
    ++c.flooded;
  }
  if (out.empty()) {
    ++c.no_route;
    ip.log("switch_drop", fmt::format("no route: {} to {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}{}",
                                      cmac_detail::describe(f), f[0], f[1], f[2], f[3], f[4], f[5],
                                      to >= 0 ? " (its own port)" : ""));
    return;
  }
  const bool lossless = cfg_.pfc.on && roce::is_roce(f.data(), f.size());
  const uint64_t at = now + cfg_.latency_ps;
  for (size_t k = 0; k < out.size(); ++k) {
    if (lossless) ip.ingress_add(f.size());
    Pending pd{out[k], SwitchPort::Entry{k + 1 < out.size() ? f : std::move(f), in, lossless}};
    pending_.emplace(std::make_tuple(at, in, seq_++), std::move(pd));
  }
  pending_ev_.notify(SC_ZERO_TIME);
}

// Frames reach their egress queue latency_ps after their last byte came
// in; those of one instant in ingress-port order.
void Switch::forward() {
  for (;;) {
    while (pending_.empty()) wait(pending_ev_);
    auto it = pending_.begin();
    const uint64_t at = std::get<0>(it->first);
    const uint64_t now = ClockDomain::now_ps();
    if (at > now) {
      wait(ps(at - now), pending_ev_);
      continue;
    }
    Pending pd = std::move(it->second);
    pending_.erase(it);
    ports_[pd.egress]->enqueue(std::move(pd.e));
  }
}

void Switch::release_departures(uint64_t now) {
  for (auto& p : ports_) p->release_departure(now);
}

double Switch::draw() { return double(rng_() >> 11) * 0x1.0p-53; }

}  // namespace ernic
