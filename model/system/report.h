// model/system: the run's report: the summary printed on stdout and the JSON
// written with --json. Everything outside the "wall" key is a function of
// the scenario, the seed and the command line only (byte-identical between
// runs); wall-clock figures live under "wall".
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/system/system.h"

namespace ernic {

struct WallClock {
  double seconds = 0;   // wall time of the simulation (sc_start calls)
};

nlohmann::json make_report(System& sys, const std::vector<std::string>& argv, const WallClock& wall,
                           const std::string& scenario_path);
std::string summary_text(const nlohmann::json& report);

// A time-stamped list of the report (failures, model_errors, events,
// compliance) in its one order: by time_ps, then by the entry's text. The
// entries of one instant come in the kernel's order of processes, which a
// split run (its merge, tools/split_report.h) does not reproduce.
void order_by_time(nlohmann::json& list);

}  // namespace ernic
