// model/scenario: a scenario's nodes in separate processes (issue 16;
// the run itself is model/system/split.h): whether the scenario can run
// split today, and which nodes' processes act in each step. Plain C++17.
#pragma once
#include <string>
#include <vector>

#include "model/scenario/scenario.h"

namespace ernic {

// A switch topology's switch runs in a process of its own (`node --node
// switch`; model/system/split_star.cpp); as a step's participant (the
// process of expect_switch) it has this name.
inline constexpr const char* kSplitSwitch = "switch";

// "" when the scenario can run split today, else why not: the file and
// line of the first thing in the way, and what ("...: the step `parallel`
// cannot run split yet").
std::string split_refusal(const Scenario& sc);

// The nodes whose processes act in step s (`post` its node's, `connect`
// the client's and the server's, `init` each listed node's, `expect_frames`
// the tap's node's, `qp_setup` its node's, `qp_adopt` both ends'); empty:
// every process, each the same by itself (`wait`,
// `fault`, `link`, `expect_idle`, `repeat`'s own turn).
std::vector<std::string> split_participants(const Step& s);

// How every process's part of step s ends, for a lane that waits for the
// other process's end (model/system/runner.cpp, the lane hold):
//   alike    at one instant in every process, each by itself: `fault` and
//            `link` (each installs its rules in no time), `wait` (the lanes
//            start it alike; one whose instant has passed fails as it
//            starts, everywhere), `expect_idle` and `expect_compliance`
//            (every process counts its own and the sums are traded at one
//            instant: after `us`, and as it begins);
//   barrier  at one instant in every process once all its branches have
//            arrived (they arrive as their lanes' steps start, alike
//            everywhere); before that, as a failure there ends it;
//   at_start as it began in every process: its participant's part takes no
//            simulated time (a posted register write: `reg_write` of a
//            whole register or of a W1C field, the AXI-Lite write returns
//            at once (model/link/axil.h); `debug_preset`, behind the
//            model), and the others send their ends as it begins;
//   own      as its participants' processes end it (split_participants).
enum class SplitEnd { alike, barrier, at_start, own };
SplitEnd split_end(const Step& s);

}  // namespace ernic
