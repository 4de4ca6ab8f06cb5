// model/sim: clock domains.
// A clock domain is a period (rounded to the 1 ps kernel resolution) with
// rising edges at k * period from time 0. Blocks do not simulate a toggling
// clock: they wait for the next edge of their domain (sync) or for a number
// of cycles, so an idle block costs nothing and long waits are free. The
// domain's cycle count at any time is floor(t / period).
// Clocks (design.md): core (m_axi_aclk = s_axi_lite_aclk) 200 MHz by
// default, CMAC 322.265625 MHz simulated as 3103 ps (about 9.8 ppm fast,
// recorded as an assumption).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <systemc>

namespace ernic {

class ClockDomain {
 public:
  ClockDomain(std::string name, double mhz)
      : name_(std::move(name)), mhz_(mhz), period_ps_(uint64_t(std::llround(1e6 / mhz))) {}
  const std::string& name() const { return name_; }
  double mhz() const { return mhz_; }
  uint64_t period_ps() const { return period_ps_; }
  sc_core::sc_time period() const { return sc_core::sc_time::from_value(period_ps_); }

  static uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }
  uint64_t cycle() const { return now_ps() / period_ps_; }
  uint64_t cycle_at(uint64_t t_ps) const { return t_ps / period_ps_; }
  // Picoseconds until the next rising edge (0 when now is on an edge).
  uint64_t ps_to_edge() const {
    uint64_t r = now_ps() % period_ps_;
    return r ? period_ps_ - r : 0;
  }
  // Align the calling SC_THREAD to a rising edge of this domain.
  void sync() const {
    uint64_t d = ps_to_edge();
    if (d) sc_core::wait(sc_core::sc_time::from_value(d));
  }
  // Align, then wait n whole cycles.
  void wait_cycles(uint64_t n) const {
    sync();
    if (n) sc_core::wait(sc_core::sc_time::from_value(n * period_ps_));
  }
  sc_core::sc_time cycles(uint64_t n) const {
    return sc_core::sc_time::from_value(n * period_ps_);
  }
  // Cycles (rounded up) that cover a duration in ps.
  uint64_t cycles_for_ps(uint64_t ps) const { return (ps + period_ps_ - 1) / period_ps_; }

 private:
  std::string name_;
  double mhz_;
  uint64_t period_ps_;
};

// Times are kernel values in ps (the 1 ps resolution above): from_value
// builds them without sc_time(double, unit)'s floating-point scaling.
inline sc_core::sc_time ps(uint64_t v) { return sc_core::sc_time::from_value(v); }

}  // namespace ernic
