// tools: a recorded stimulus of the RTL datapath (rtl/datapath/roce_datapath.sv)
// and the output beats it gives, the common ground of three runs of the same
// RTL (issue 17, Icarus vs Verilator):
//   - the simulator itself, recording at the top's ports
//     (`ernic-sim run --record-datapath NODE=FILE`, tools/rtl_record.cpp);
//   - the Verilated model the simulator uses, under SystemC, replaying it
//     (`ernic-sim rtl-replay FILE`, tools/rtl_replay.cpp);
//   - Icarus Verilog replaying it (tb/rtl/roce_datapath_replay_tb.sv).
// Each writes the output beats in one text format, so equal outputs are
// equal files (`ernic-sim icarus`, tools/icarus_compare.h).
//
// Stimulus file: one line per evaluation of the top in which a clock rose
// (one per instant with a rising edge, plus tx_take's):
//   <domains> <t_ps> <n> (<input index> <hex value>) x n
// domains: 1 core_clk, 2 cmac_clk, 3 both in that evaluation; t_ps the simulated
// time in ps; then the inputs (indices below) whose values changed since the
// previous line, as the edge sees them. Lines with equal t_ps were separate
// evaluations, in file order. Inputs start at 0; clocks start low. The clocks
// are gated (they stop while the datapath is idle), so lines are edges, not
// a free-running clock.
//
// Output beats: sampled at each line's rising edge(s), the values the edge
// sees (the outputs of the previous edge after the inputs changed); the line
// formats are in tb/rtl/roce_datapath_replay_tb.sv's header, then
// "end <lines> <meta_events>".
#pragma once
#include <cstdint>
#include <cstdio>

#include "model/datapath/sc/rtl_datapath.h"

namespace ernic::rtl_stim {

// Inputs of roce_datapath but the two clocks, by index: the testbench's
// in_v[] (tb/rtl/roce_datapath_replay_tb.sv) uses the same numbers.
//   0 core_rst_n  1 cfg_udp_sport  2 seed  3 s_desc_valid  4..15 s_desc_w0..11
//   16 s_pay_tvalid  17..24 s_pay_tdata_w0..7  25 s_pay_tkeep  26 s_pay_tlast
//   27 cmac_rst_n  28 m_cmac_tready  29 s_cmac_tvalid  30..37 s_cmac_tdata_w0..7
//   38 s_cmac_tkeep  39 s_cmac_tlast  40 s_cmac_tuser
constexpr int kInputs = 41;

uint64_t read_input(const RoceDatapathPorts& p, int i);
void write_input(RoceDatapathPorts& p, int i, uint64_t v);

// The beats the edge(s) of `domains` see at stimulus line `line`, appended to f.
void write_beats(std::FILE* f, uint64_t line, int domains, const RoceDatapathPorts& p);
// The closing line.
void write_end(std::FILE* f, uint64_t lines, const RoceDatapathPorts& p);

}  // namespace ernic::rtl_stim
