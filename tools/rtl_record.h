// tools: recording the RTL datapath's stimulus in a run (issue 17, Icarus vs
// Verilator). `ernic-sim run SCENARIO --record-datapath NODE=FILE` builds
// NODE's `rtl` datapath (rtl/datapath/roce_datapath.sv, Vroce_datapath) as
// usual and records, at its top's ports, every rising clock edge with the
// inputs it sees into FILE and the output beats into FILE.beats (formats:
// tools/rtl_stim.h). The run's outputs are those of a run without it.
#pragma once
#include <string>

namespace ernic {

// Replaces the "rtl" datapath factory for this process: NODE's datapath
// records. Call before the system is built.
void record_rtl_datapath(const std::string& node, const std::string& path);

}  // namespace ernic
