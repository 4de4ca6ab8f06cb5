// tools: `ernic-sim pcap replay CAPTURE` (also `ernic-sim replay`): one
// side of an RC connection in a real capture against one simulated ERNIC
// node alone in the other side's place (model/replay/replay.h: the plan,
// the comparison and its lines), its frames compared with the capture's
// field by field (README.md "Real captures", pcap replay).
//
// Files: pcap_replay.cpp holds the options and prints the lines;
// pcap_replay_sim.cpp builds the node (host memory, driver, ERNIC,
// datapath, CMAC; no wire, no peer: frames go straight into the CMAC's RX
// as a line delivers them, ERNIC's are taken from its TX) and runs the
// replay in it.
#pragma once
#include <string>
#include <vector>

#include "model/replay/replay.h"

namespace CLI {
class App;
}

namespace pcap_replay {

using ernic::replay::ReplayFrame;
using ernic::replay::ReplayOptions;

// `pcap replay`'s options on app (tools/pcap_cmd.cpp); file gets the capture.
CLI::App* add_subcommand(CLI::App& app, std::string& file, ReplayOptions& o);

// argv-free entry: exit 0 all match (or explained, or --report-only),
// 1 an unexplained difference, 2 an unusable capture or usage.
int replay_main(const std::vector<ReplayFrame>& frames, const ReplayOptions& opt);

// The replay run in a node of its own (pcap_replay_sim.cpp); the model
// errors of the run into *errors. False (why in *setup_error) when the
// node cannot be built.
bool run_alone(ernic::replay::Replay& r, std::vector<std::string>* errors, std::string* setup_error);

}  // namespace pcap_replay
