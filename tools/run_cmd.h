// tools: `ernic-sim run SCENARIO.yaml` in this process: the scenario loaded,
// the System built and run, the outputs written (pcap, VCD and its GTKWave
// file, JSON, transaction log), the summary and, on a failure, the failure
// report printed (tools/failure_report.h). The command line is
// tools/ernic-sim.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/system/system.h"
#include "model/trace/trigger.h"

namespace ernic {

// --trigger / --window / --trigger-mode / --vcd-measure-full (README.md "Triggers").
struct WaveOptions {
  std::string trigger, window, mode = "first";
  bool measure_full = false;
  bool given = false;  // --trigger on the command line (even empty: an error)
  trigger::Trigger trig;
  trigger::Mode trig_mode = trigger::Mode::first;
  uint64_t pre = 0, post = 0;  // core cycles
};

// The running binary (for the repro line and for regress's child runs).
std::string self_exe(const char* argv0);

// Exit codes as ernic-sim's (0 pass, 1 failed, 2 bad usage or scenario,
// 3 no progress or the time limit). argv: the command line for the JSON's
// `reproduce`; raw_argv: as given, for the failure report's repro line.
int run_scenario(const std::string& path, const RunOptions& opt, const std::string& json_path, const std::string& log_path,
        bool quiet, const std::vector<std::string>& argv, WaveOptions& wave, const std::string& datapath = "",
        const std::vector<std::string>& raw_argv = {});

}  // namespace ernic
