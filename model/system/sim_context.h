// model/system: what every block of one simulated system shares: the
// waveform writer (when --vcd is given), a progress counter for the no-progress
// watchdog, the list of model errors (internal consistency failures such
// as an RTL/C++ ICRC mismatch), each stamped with simulated time, and the
// protocol monitors of the seams with the randomised-handshake streams
// (model/monitor/protocol.h; their violations are model errors).
#pragma once
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "model/monitor/protocol.h"
#include "model/system/txlog.h"
#include "model/system/vcd.h"

namespace ernic {

struct ModelError {
  uint64_t time_ps;
  std::string where;
  std::string what;
};

class SimContext {
 public:
  SimContext() {
    protocol.sink = [this](uint64_t time_ps, const monitor::ProtocolViolation& v) {
      errors.push_back({time_ps, v.where, v.str()});
    };
  }
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;
  // --- waveform ---------------------------------------------------------
  trace::VcdWriter* vcd = nullptr;
  // Declare a model signal (before sc_start). Returns -1 when not tracing.
  int var(const std::string& scope, const std::string& name, unsigned width, uint64_t init = 0) {
    return vcd ? vcd->add_var(scope, name, width, init) : -1;
  }
  void set(int v, uint64_t value) {
    if (v < 0) return;
    const uint64_t t = sc_core::sc_time_stamp().value();
    advance_clocks(t);
    vcd->change(v, value, t);
  }
  // Clock waveforms are written lazily, up to the time of each change, so
  // that tracing adds no SystemC process (the set of processes, and with it
  // the order in which the kernel runs them, is the same with and without
  // --vcd: the simulation stays identical).
  struct TracedClock { int var; uint64_t period_ps, next_ps = 0; bool level = false; };
  std::vector<TracedClock> clocks;
  void trace_clock(const std::string& scope, const std::string& name, uint64_t period_ps) {
    if (vcd) clocks.push_back({var(scope, name, 1), period_ps});
  }
  void advance_clocks(uint64_t t) {
    // Emit every clock edge at or before t, in time order across clocks.
    for (;;) {
      TracedClock* c = nullptr;
      for (auto& k : clocks)
        if (k.next_ps <= t && (!c || k.next_ps < c->next_ps)) c = &k;
      if (!c) return;
      c->level = !c->level;
      vcd->change(c->var, c->level, c->next_ps);
      c->next_ps += c->level ? c->period_ps / 2 : c->period_ps - c->period_ps / 2;
    }
  }
  // --- transaction log (--log) -----------------------------------------
  TxLog* log = nullptr;
  // --- watchdog -----------------------------------------------------------
  uint64_t progress = 0;
  uint64_t last_progress_ps = 0;  // simulated time of the latest bump (the watchdog's reference)
  void bump() {
    ++progress;
    last_progress_ps = sc_core::sc_time_stamp().value();
  }
  // --- errors -------------------------------------------------------------
  std::vector<ModelError> errors;
  void error(const std::string& where, const std::string& what) {
    errors.push_back({sc_core::sc_time_stamp().value(), where, what});
  }
  // --- AXI4-Stream / AXI4-Lite monitors on the seams, randomised handshakes
  monitor::ProtocolMonitors protocol;
  // --- protocol events worth reporting (QP fatal, ...), not failures ---
  std::vector<ModelError> events;
  void event(const std::string& where, const std::string& what) {
    events.push_back({sc_core::sc_time_stamp().value(), where, what});
  }
};

}  // namespace ernic
