// model/sim: what every block of one simulated system shares: the
// waveform writer (when --vcd is given), a progress counter for the no-progress
// watchdog, the list of model errors (internal consistency failures such
// as an RTL/C++ ICRC mismatch), each stamped with simulated time, and the
// protocol monitors of the seams with the randomised-handshake streams
// (model/monitor/protocol.h; their violations are model errors).
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <systemc>
#include <vector>

#include "model/monitor/protocol.h"
#include "model/trace/txlog.h"
#include "model/trace/vcd.h"

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
  // Clock waveforms are not recorded at all: the writer synthesises their
  // edges when it writes the VCD (VcdWriter::add_clock), so tracing adds no
  // SystemC process (the set of processes, and with it the order in which
  // the kernel runs them, is the same with and without --vcd: the
  // simulation stays identical) and a long idle stretch costs nothing until
  // a full dump is written.
  void trace_clock(const std::string& scope, const std::string& name, uint64_t period_ps) {
    if (vcd) vcd->add_clock(scope, name, period_ps);
  }
  // A change at a later time than now (e.g. a frame's first byte after the
  // preamble): written, like the clocks, once the waveform reaches that time.
  // Same time: in call order.
  void set_at(int v, uint64_t value, uint64_t t_ps) {
    if (v < 0) return;
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (t_ps <= now) return set(v, value);
    later.push_back({t_ps, later_seq++, v, value});
    std::push_heap(later.begin(), later.end());
  }
  struct Later {
    uint64_t t_ps, seq;
    int var;
    uint64_t value;
    bool operator<(const Later& o) const { return t_ps != o.t_ps ? t_ps > o.t_ps : seq > o.seq; }  // min-heap
  };
  std::vector<Later> later;
  uint64_t later_seq = 0;
  // Writes the deferred changes (set_at) at or before t, in time order.
  void advance_clocks(uint64_t t) {
    while (!later.empty() && later.front().t_ps <= t) {
      std::pop_heap(later.begin(), later.end());
      const Later l = later.back();
      later.pop_back();
      vcd->change(l.var, l.value, l.t_ps);
    }
  }
  // --- transaction log (--log) -----------------------------------------
  TxLog* log = nullptr;
  // --- watchdog -----------------------------------------------------------
  // The watchdog's reference is the latest progress *before* the instant
  // it looks at: which of a bump and the watchdog runs first at one instant
  // is the kernel's choice (and a split run's kernel chooses differently).
  uint64_t progress = 0;
  uint64_t last_progress_ps = 0;    // simulated time of the latest bump
  uint64_t earlier_progress_ps = 0; // the latest one before last_progress_ps's instant
  void bump() {
    ++progress;
    note_progress(sc_core::sc_time_stamp().value());
  }
  void note_progress(uint64_t t_ps) {
    if (t_ps <= last_progress_ps) return;
    earlier_progress_ps = last_progress_ps;
    last_progress_ps = t_ps;
  }
  uint64_t progress_before(uint64_t t_ps) const { return last_progress_ps < t_ps ? last_progress_ps : earlier_progress_ps; }
  // --- errors -------------------------------------------------------------
  std::vector<ModelError> errors;
  sc_core::sc_event error_ev;  // notified at each model error
  void error(const std::string& where, const std::string& what) { error_at(sc_core::sc_time_stamp().value(), where, what); }
  // An error found later than it happened (a split run's wire monitor,
  // model/system/split_monitor.cpp): kept in time order.
  void error_at(uint64_t t_ps, const std::string& where, const std::string& what) {
    auto it = errors.end();
    while (it != errors.begin() && std::prev(it)->time_ps > t_ps) --it;
    errors.insert(it, {t_ps, where, what});
    if (sc_core::sc_is_running()) error_ev.notify(sc_core::SC_ZERO_TIME);
  }
  // --- livelock: retransmission going back to the same point forever -------
  // A QP that retries this many times in a row while the same WQE is its
  // oldest outstanding (each round made some progress, so the retry count
  // never runs out: e.g. a long WQE under heavy loss, resent from its
  // first packet by the 3.1 IP) is reported once here; the run stops with
  // exit code 3 (scenario limits.livelock_retries; 0: not watched).
  uint32_t livelock_retries = 0;
  std::string livelock;  // what was seen, "" while none
  sc_core::sc_event livelock_ev;
  void report_livelock(const std::string& where, const std::string& what) {
    if (!livelock.empty()) return;
    livelock = where + ": " + what;
    if (sc_core::sc_is_running()) livelock_ev.notify(sc_core::SC_ZERO_TIME);
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
