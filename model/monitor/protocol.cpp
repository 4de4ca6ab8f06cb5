#include "model/monitor/protocol.h"

#include <fmt/format.h>

namespace ernic::monitor {

std::string ProtocolMonitors::unique(const std::string& name) const {
  auto taken = [&](const std::string& n) {
    for (const auto& e : axis_)
      if (e.mon->name() == n) return true;
    for (const auto& e : axil_)
      if (e.mon->name() == n) return true;
    return false;
  };
  if (!taken(name)) return name;
  for (int i = 2;; ++i)
    if (!taken(fmt::format("{}#{}", name, i))) return fmt::format("{}#{}", name, i);
}

ViolationSink ProtocolMonitors::sink_for(uint64_t period_ps) {
  return [this, period_ps](const ProtocolViolation& v) {
    if (sink) sink(v.cycle * period_ps, v);
  };
}

AxisMonitor& ProtocolMonitors::axis(const std::string& name, const std::string& clock, uint64_t period_ps,
                                    const AxisRules& rules) {
  axis_.push_back({std::make_unique<AxisMonitor>(unique(name), clock, rules, sink_for(period_ps)), period_ps});
  return *axis_.back().mon;
}

AxilMonitor& ProtocolMonitors::axil(const std::string& name, const std::string& clock, uint64_t period_ps,
                                    const AxilRules& rules) {
  axil_.push_back({std::make_unique<AxilMonitor>(unique(name), clock, rules, sink_for(period_ps)), period_ps});
  return *axil_.back().mon;
}

void ProtocolMonitors::set_random(const std::string& scope, const HandshakeRandomConfig& c, bool enabled) {
  auto make = [&] { return enabled ? std::make_unique<HandshakeRandomizer>(c) : std::make_unique<HandshakeRandomizer>(); };
  for (auto& [s, r] : random_)
    if (s == scope) {
      r = make();
      return;
    }
  random_.emplace_back(scope, make());
}

HandshakeStall ProtocolMonitors::stall(const std::string& signal, HandshakeRandomizer::Kind kind) {
  HandshakeRandomizer* best = nullptr;
  size_t best_len = 0;
  for (auto& [scope, r] : random_) {
    const bool under = scope.empty() ||
                       (signal.size() > scope.size() && signal.compare(0, scope.size(), scope) == 0 &&
                        signal[scope.size()] == '.');
    if (under && (!best || scope.size() > best_len)) {
      best = r.get();
      best_len = scope.size();
    }
  }
  if (!best || !best->enabled()) return {};
  return HandshakeStall(best, best->stream(signal, kind));
}

void ProtocolMonitors::finish() {
  for (auto& e : axis_) e.mon->finish();
  for (auto& e : axil_) e.mon->finish();
}

uint64_t ProtocolMonitors::violations() const {
  uint64_t n = 0;
  for (const auto& e : axis_) n += e.mon->counters().violations;
  for (const auto& e : axil_) n += e.mon->counters().violations;
  return n;
}

}  // namespace ernic::monitor
