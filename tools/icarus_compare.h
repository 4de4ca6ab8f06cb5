// tools: `ernic-sim icarus` (issue 17): the same RTL under Icarus Verilog and
// under Verilator + SystemC, with the same stimulus, side by side.
//
// 1. A line-rate WRITE stream (bench's scenario, `bytes` in messages of up
//    to 64 KiB) runs with `datapath: rtl`, node `node`'s datapath recording
//    its top's ports edge by edge (`run --record-datapath`, tools/rtl_record.h):
//    stim.txt, and sim.beats, the output beats the RTL gave in the run.
// 2. `ernic-sim rtl-replay` feeds stim.txt to the Verilated model the
//    simulator uses, under SystemC: verilator.beats.
// 3. iverilog compiles tb/rtl/roce_datapath_replay_tb.sv with the datapath's
//    sources (rtl/CMakeLists.txt's list), vvp feeds it stim.txt:
//    icarus.beats.
// The beats files must be identical (the Icarus and Verilator outputs are
// the test; the simulator's own shows the replay reproduces the run). Wall
// time of each replay is its whole process (start, reading the stimulus,
// writing the beats); per simulated cycle = / core edges in the stimulus.
// Speed is a figure to read, never asserted.
#pragma once
#include <cstdint>
#include <string>

namespace ernic {

struct IcarusOptions {
  uint64_t bytes = 1u << 20;  // the WRITE stream
  std::string node = "A";     // whose datapath is recorded
  std::string out_dir = "icarus";
};

struct IcarusResult {
  std::string skipped;           // non-empty: not run, and why (iverilog missing, sources missing)
  std::string error;             // non-empty: a step failed (what and where)
  uint64_t lines = 0, core_edges = 0, cmac_edges = 0, beats = 0;
  double verilator_s = 0, icarus_s = 0;      // wall seconds of each replay process
  long verilator_rss_kb = 0, icarus_rss_kb = 0;
  bool identical = false;        // verilator.beats == icarus.beats
  bool same_as_run = false;      // verilator.beats == sim.beats
  std::string diff;              // the first difference, when not identical
  std::string icarus_version;
  double verilator_cps() const { return verilator_s > 0 ? double(core_edges) / verilator_s : 0; }
  double icarus_cps() const { return icarus_s > 0 ? double(core_edges) / icarus_s : 0; }
};

// Runs the three steps (children of `self`, this binary); never throws.
IcarusResult icarus_compare(const IcarusOptions& opt, const std::string& self);

// One line: what the stimulus was (for the bench's table and `ernic-sim icarus`).
std::string icarus_stimulus_text(const IcarusOptions& opt, const IcarusResult& r);

// For `ernic-sim bench`'s speed table (tools/bench.cpp): the rows it prints
// (a header and one row: Verilator and Icarus cycles per wall second, each
// over the floor, and their ratio; then what the stimulus was and whether
// the outputs are identical; or one line saying why there is no comparison)
// and the rows of speed.csv (run `replay`, datapath `verilator` / `icarus`).
std::string icarus_table_rows(const IcarusOptions& opt, const IcarusResult& r, double floor);
std::string icarus_csv_rows(const IcarusResult& r, double floor);

// `ernic-sim icarus [--bytes N] [--node A|B] [--out DIR]`: prints the
// comparison; exit 0 when the outputs are identical, 1 when they differ or a
// step failed, 2 on bad usage, 3 when iverilog (or the RTL sources) are missing.
int icarus_main(int argc, char** argv);

}  // namespace ernic
