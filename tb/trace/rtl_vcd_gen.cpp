// Writes a VCD of tb/trace/trace_counter.v with Verilator's own writer
// (VerilatedVcdC, as the simulator's RTL tracing does), for the merge tests.
// Instance name "top.node_a.icrc" as a SystemC instance would be named.
// Timeline (1 ps resolution): clk half period 2000 ps, dumped at every edge
// t = 2000*i for i = 0..39 (posedges at odd i); rst high until t = 8000, so
// count becomes (i-3)/2 at the posedge t = 2000*i, i >= 5.
#include <cstdio>

#include "Vtrace_counter.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s out.vcd\n", argv[0]);
    return 2;
  }
  VerilatedContext ctx;
  ctx.traceEverOn(true);
  ctx.timeprecision(-12);
  Vtrace_counter top(&ctx, "top.node_a.icrc");
  VerilatedVcdC tfp;
  top.trace(&tfp, 99);
  tfp.open(argv[1]);
  top.rst = 1;
  for (int i = 0; i < 40; ++i) {
    const uint64_t t = 2000ull * uint64_t(i);
    if (t == 8000) top.rst = 0;
    top.clk = i & 1;
    top.eval();
    tfp.dump(t);
  }
  tfp.close();
  top.final();
  return 0;
}
