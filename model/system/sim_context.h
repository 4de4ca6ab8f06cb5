// model/system: what every block of one simulated system shares: the
// waveform writer (when --vcd is given), a progress counter for the no-progress
// watchdog, and the list of model errors (internal consistency failures such
// as an RTL/C++ ICRC mismatch), each stamped with simulated time.
#pragma once
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "model/system/vcd.h"

namespace ernic {

struct ModelError {
  uint64_t time_ps;
  std::string where;
  std::string what;
};

class SimContext {
 public:
  // --- waveform ---------------------------------------------------------
  trace::VcdWriter* vcd = nullptr;
  // Declare a model signal (before sc_start). Returns -1 when not tracing.
  int var(const std::string& scope, const std::string& name, unsigned width, uint64_t init = 0) {
    return vcd ? vcd->add_var(scope, name, width, init) : -1;
  }
  void set(int v, uint64_t value) const {
    if (v >= 0) vcd->change(v, value, sc_core::sc_time_stamp().value());
  }
  // --- watchdog -----------------------------------------------------------
  uint64_t progress = 0;
  void bump() { ++progress; }
  // --- errors -------------------------------------------------------------
  std::vector<ModelError> errors;
  void error(const std::string& where, const std::string& what) {
    errors.push_back({sc_core::sc_time_stamp().value(), where, what});
  }
  // --- protocol events worth reporting (QP fatal, ...), not failures ---
  std::vector<ModelError> events;
  void event(const std::string& where, const std::string& what) {
    events.push_back({sc_core::sc_time_stamp().value(), where, what});
  }
};

}  // namespace ernic
