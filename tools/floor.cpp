// tools: the SystemC floor (floor.h).
#include "tools/floor.h"

#include <chrono>
#include <cstdio>
#include <systemc>

#include "Vfloor_counter.h"

namespace ernic {

FloorResult measure_floor(uint64_t cycles) {
  using namespace sc_core;
  sc_clock clk("floor_clk", sc_time(5, SC_NS));  // 200 MHz: the core clock's default
  sc_signal<bool> rst_n("floor_rst_n");
  sc_signal<uint32_t> count("floor_count");
  Vfloor_counter dut("floor_counter");
  dut.clk(clk);
  dut.rst_n(rst_n);
  dut.count(count);
  rst_n.write(false);
  sc_start(sc_time(1, SC_NS));  // reset before the first edge
  rst_n.write(true);
  sc_start(SC_ZERO_TIME);
  const uint32_t before = count.read();
  const auto t0 = std::chrono::steady_clock::now();
  sc_start(sc_time(5.0 * double(cycles), SC_NS));
  const auto t1 = std::chrono::steady_clock::now();
  FloorResult r;
  r.cycles = cycles;
  r.wall_s = std::chrono::duration<double>(t1 - t0).count();
  r.cycles_per_s = r.wall_s > 0 ? double(cycles) / r.wall_s : 0;
  r.counted = uint32_t(count.read() - before) == uint32_t(cycles);
  return r;
}

int floor_main(uint64_t cycles, bool json_out) {
  const FloorResult r = measure_floor(cycles);
  if (json_out)
    std::printf("{\"cycles\": %llu, \"wall_seconds\": %.6f, \"cycles_per_wall_second\": %.0f, \"counted\": %s}\n",
                (unsigned long long)r.cycles, r.wall_s, r.cycles_per_s, r.counted ? "true" : "false");
  else
    std::printf("floor: %llu cycles of a Verilated 32-bit counter under sc_clock in %.3f s: %.0f cycles per wall "
                "second%s\n",
                (unsigned long long)r.cycles, r.wall_s, r.cycles_per_s, r.counted ? "" : " (the counter missed cycles)");
  return r.counted ? 0 : 1;
}

}  // namespace ernic
