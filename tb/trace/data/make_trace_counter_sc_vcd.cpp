// Not built: how trace_counter_sc.vcd (beside this file) was written, with
// Verilator 5.006's SystemC tracer (VerilatedVcdSc), to pin down the scope
// names Verilator gives an RTL block inside a SystemC hierarchy
// ("$scope module top.node_a.icrc", then the Verilog module's scope).
//   SYSTEMC_INCLUDE=/usr/include SYSTEMC_LIBDIR=/usr/lib/x86_64-linux-gnu \
//   verilator --sc --trace --exe --build -CFLAGS -std=c++17 \
//     ../trace_counter.v make_trace_counter_sc_vcd.cpp
//   obj_dir/Vtrace_counter   # writes trace_counter_sc.vcd
#include <systemc>

#include "Vtrace_counter.h"
#include "verilated.h"
#include "verilated_vcd_sc.h"

struct Node : sc_core::sc_module {
  Vtrace_counter icrc{"icrc"};
  explicit Node(sc_core::sc_module_name n) : sc_module(n) {}
};
struct Top : sc_core::sc_module {
  Node node_a{"node_a"};
  explicit Top(sc_core::sc_module_name n) : sc_module(n) {}
};

int sc_main(int, char**) {
  Verilated::traceEverOn(true);
  sc_core::sc_clock clk("clk", 4, sc_core::SC_NS);  // posedges at 0, 4, 8, ... ns
  sc_core::sc_signal<bool> rst, crc_valid;
  sc_core::sc_signal<uint32_t> count;
  sc_core::sc_signal<sc_dt::sc_bv<72>> wide;
  Top top("top");
  top.node_a.icrc.clk(clk);
  top.node_a.icrc.rst(rst);
  top.node_a.icrc.count(count);
  top.node_a.icrc.crc_valid(crc_valid);
  top.node_a.icrc.wide(wide);
  rst = 1;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  VerilatedVcdSc tfp;
  top.node_a.icrc.trace(&tfp, 99);
  tfp.open("trace_counter_sc.vcd");
  sc_core::sc_start(6, sc_core::SC_NS);
  rst = 0;
  sc_core::sc_start(20, sc_core::SC_NS);
  tfp.close();
  return 0;
}
