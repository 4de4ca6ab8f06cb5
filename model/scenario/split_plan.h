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

}  // namespace ernic
