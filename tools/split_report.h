// tools/split_report: the JSON report of a split run (`ernic-sim run
// --split`, model/system/split.h) from its node processes' reports, in the
// shape one process writes:
//   - per node (nodes, and the per-node maps of idle_skip and
//     protocol_monitors): each node's from its own process;
//   - the run's (scenario, file, datapath, clocks, steps, sim_time, pcie,
//     assumptions, compliance): node 0's (every process runs every step at
//     the same instants: steps and sim_time must agree, else an error);
//   - failures, model_errors, events, compliance: every process's, by time
//     (stable, node order at one instant; what both saw, such as the time
//     limit, once); stall_report: each process's, in node order;
//     last_frames: each direction's from its sender's process;
//     faults_applied: the sum;
//     handshake_random: every process's scopes; assumptions: every
//     process's, each where its process lists it;
//   - exit_code, result: the worst (tools/split_run.h's order);
//   - scoreboard: the figures summed, stood_aside and notes joined, the
//     summaries one after the other (in a split run each process checks
//     its own node's memory: phase 1);
//   - split: each process's node, link figures (PACKETs, SYNCs, CONTROLs,
//     reads, blocks) and wall seconds; wall: the slowest process's.
// Not the same bytes as one process's report: `scoreboard`, `split`,
// `wall` and `reproduce` differ by construction; the rest is equal (the
// identity tests compare it, tb/system/split_identity.py).
#pragma once
#include <string>
#include <vector>

namespace ernic {

// Reads the parts (node order), writes `out`; throws std::runtime_error
// naming the file on a missing or malformed part or a disagreement.
// transport: how the processes were joined ("unix", "tcp").
void merge_split_reports(const std::vector<std::string>& parts, const std::string& out, const std::string& transport);

}  // namespace ernic
