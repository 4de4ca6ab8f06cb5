// tools: `ernic-sim rtl-replay STIM --out BEATS` (issue 17, Icarus vs
// Verilator): a stimulus recorded with `run --record-datapath`
// (tools/rtl_stim.h) into the Verilated datapath the simulator uses
// (Vroce_datapath, bound to the same pins by bind_roce_datapath), under the
// SystemC kernel, edge by edge with the timing of the Icarus testbench
// tb/rtl/roce_datapath_replay_tb.sv; the output beats go to BEATS in the
// testbench's format. One elaboration: call it from its own process.
#pragma once
#include <string>

namespace ernic {

// 0, or 2 (message on stderr) when a file cannot be read or written.
int rtl_replay_main(const std::string& stim_path, const std::string& out_path);

}  // namespace ernic
