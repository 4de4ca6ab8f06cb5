// model/system: the steps running now that time out by themselves, for the
// watchdog (model/system/runner.cpp, System::bounded_).
#pragma once
#include <cstdint>
#include <systemc>

namespace ernic {

// Steps that time out by themselves: the watchdog stays out while one
// runs and counts from its end as from progress. It looks at whether one
// ran just before the instant it looks at (a step ending or starting at
// that instant may run before or after it, as the kernel picks): one that
// starts and ends within an instant does not count.
struct BoundedSteps {
  int n = 0;
  uint64_t changed_ps = ~uint64_t(0);  // the instant of the latest change
  int n_before = 0;                     // n when that instant began
  uint64_t ended_ps = 0;                // the latest instant the last running one ended
  sc_core::sc_event ended;              // notified then
  void change(int d) {
    const uint64_t t = sc_core::sc_time_stamp().value();
    if (t != changed_ps) changed_ps = t, n_before = n;
    n += d;
    if (n == 0 && n_before > 0) ended_ps = t, ended.notify(sc_core::SC_ZERO_TIME);
  }
  BoundedSteps& operator++() { return change(1), *this; }
  BoundedSteps& operator--() { return change(-1), *this; }
  bool ran_before(uint64_t t_ps) const { return (changed_ps == t_ps ? n_before : n) > 0; }
  // The latest instant up to t one ran (t while one runs).
  uint64_t timed_at(uint64_t t_ps) const { return ran_before(t_ps) ? t_ps : ended_ps; }
};

}  // namespace ernic
