// model/monitor: the run's protocol monitors on every model <-> RTL seam and
// the randomised-handshake streams, in one registry. Every SimContext has
// one (SimContext::protocol); its violations go to the run's error path
// (SimContext::errors: where = the interface, what = "RULE at <clock> cycle
// N: values", time = N x the clock's period), so a violation fails the run
// (exit 1); the JSON report lists every monitor's counters
// ("protocol_monitors") and the randomisers ("handshake_random").
//
// Attaching a seam (one line each; names are the interface's hierarchical
// name, unique per run; clock = the ClockDomain whose edges index cycles;
// model/datapath/sc/rtl_datapath.cpp and model/qp_setup/qp_setup_fsm.cpp
// are examples that sample RTL ports at each rising edge):
//
//   #include "model/monitor/protocol.h"
//   monitor::AxisMonitor& m = ctx.protocol.axis(scope + ".m_axis", core.name(), core.period_ps(),
//                                               monitor::AxisRules::seam(/*has_ready=*/true, /*no_bubble=*/true));
//   monitor::AxisMonitor& d = ctx.protocol.axis(scope + ".s_desc", core.name(), core.period_ps(),
//                                               monitor::AxisRules::descriptor(768, /*has_ready=*/true));
//   monitor::AxilMonitor& a = ctx.protocol.axil(scope + ".m_axi_lite", core.name(), core.period_ps());
//   ...at every edge k where the driver changes something (or every edge it runs):
//   monitor::AxisSample s;                 // (axis_monitor.h; AxilSample: axil_monitor.h)
//   s.valid = v, s.ready = r, s.last = l, s.keep = keep, s.data = words;   // words: uint64_t[8]
//   m.sample(k, s);
//   (s.reset = ARESETn low. A block that stops its clock with a transfer
//   at its last edge declares the next edge idle: m.sample(k + 1, {}).)
//
// The registry owns the monitors; references stay valid for its lifetime.
//
// Randomised handshakes: System calls set_random(node scope, config) for
// every node with `handshake_random` before building the nodes; a driver of
// a VALID or READY asks for its stream once, at construction, and draws at
// every edge where it decides:
//
//   monitor::HandshakeStall rdy = ctx.protocol.stall(scope + ".m_axis.tready", monitor::HandshakeRandomizer::Kind::ready);
//   ...each edge: tready = !rdy();        (or: wait rdy.hold() edges before the transfer)
//
// A signal whose name is under no configured scope gets a handle that never
// stalls (no draw, no cost).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/monitor/axil_monitor.h"
#include "model/monitor/axis_monitor.h"
#include "model/monitor/handshake.h"

namespace ernic::monitor {

class ProtocolMonitors {
 public:
  // Where violations go, with the violation's time (cycle x period, ps).
  std::function<void(uint64_t time_ps, const ProtocolViolation&)> sink;

  AxisMonitor& axis(const std::string& name, const std::string& clock, uint64_t period_ps, const AxisRules& rules);
  AxilMonitor& axil(const std::string& name, const std::string& clock, uint64_t period_ps,
                    const AxilRules& rules = {});

  // Randomisation for every signal named under `scope` ("top.A" covers
  // "top.A.cmac.tx_axis.tready"; "" covers every signal); the longest
  // matching scope wins. Call before the drivers ask for their streams.
  // enabled = false: no randomisation under `scope` (a node opting out of
  // a run-wide setting).
  void set_random(const std::string& scope, const HandshakeRandomConfig& c, bool enabled = true);
  HandshakeStall stall(const std::string& signal, HandshakeRandomizer::Kind kind);

  // End of the run: every monitor evaluates its last sample.
  void finish();

  struct AxisEntry {
    std::unique_ptr<AxisMonitor> mon;
    uint64_t period_ps;
  };
  struct AxilEntry {
    std::unique_ptr<AxilMonitor> mon;
    uint64_t period_ps;
  };
  const std::vector<AxisEntry>& axis_monitors() const { return axis_; }
  const std::vector<AxilEntry>& axil_monitors() const { return axil_; }
  // (scope, randomiser), in set_random order.
  const std::vector<std::pair<std::string, std::unique_ptr<HandshakeRandomizer>>>& randomizers() const {
    return random_;
  }
  uint64_t violations() const;

 private:
  std::string unique(const std::string& name) const;
  ViolationSink sink_for(uint64_t period_ps);
  std::vector<AxisEntry> axis_;
  std::vector<AxilEntry> axil_;
  std::vector<std::pair<std::string, std::unique_ptr<HandshakeRandomizer>>> random_;
};

}  // namespace ernic::monitor
