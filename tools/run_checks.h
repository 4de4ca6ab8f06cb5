// tools: what `ernic-sim run` checks before it builds anything (run_cmd.h):
// the scenario against the command line, and the output paths. Each prints
// its message on stderr ("ernic-sim: ...", naming the file, line and key
// or the option) and returns false: the run's exit code is then 2.
#pragma once
#include <string>

#include "model/scenario/scenario.h"
#include "model/system/system.h"

namespace ernic {

// --datapath (set into sc: it overrides the scenario's `datapath`) names a
// registered datapath; --plant-bug (test only) set into the nodes; each
// --serve node has a host program and a program step, and a valid address;
// more than two nodes only behind `topology: switch`.
bool check_scenario_for_run(Scenario& sc, const RunOptions& opt, const std::string& datapath);

// Every output (pcap and its taps, VCD and its GTKWave file and temporaries
// at vcd_side, JSON, log) is not the scenario file, not another output
// (as written or as a file), not a directory, and can be written (a file
// that was not there is removed again). vcd_existed: --vcd's file was there
// before the run (never removed).
bool check_output_paths(const std::string& path, const Scenario& sc, const RunOptions& opt, const std::string& json_path,
                        const std::string& log_path, const std::string& vcd_side, bool vcd_gtkw, bool* vcd_existed);

}  // namespace ernic
