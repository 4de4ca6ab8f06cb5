// tools: the machine's SystemC floor (issue 17): a tiny Verilated counter
// (rtl/floor/floor_counter.sv) under sc_clock, run for `cycles` clock
// cycles. Its cycles per wall second is the most any clocked model can
// reach in this kernel on this machine; `ernic-sim bench` divides every
// speed figure by it, measured in the same run.
#pragma once
#include <cstdint>

namespace ernic {

struct FloorResult {
  uint64_t cycles = 0;        // clock cycles simulated
  double wall_s = 0;          // wall seconds they took
  double cycles_per_s = 0;    // cycles / wall_s
  bool counted = false;       // the counter read `cycles` at the end
};

// Elaborates the counter in this process (SystemC allows one elaboration a
// process: call it from a process of its own, as `ernic-sim floor` does).
FloorResult measure_floor(uint64_t cycles);

// `ernic-sim floor`: prints the figure (one line, or JSON with json_out).
// Exit 0, or 1 if the counter did not count every cycle.
int floor_main(uint64_t cycles, bool json_out);

}  // namespace ernic
