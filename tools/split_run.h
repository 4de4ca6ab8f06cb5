// tools/split_run: `ernic-sim run S.yaml --split` (issue 16): every node of
// the scenario in its own process, the outputs merged into the files one
// process writes.
//
// The run: a private directory DIR (mkdtemp, under $TMPDIR or /tmp; /tmp
// when the socket's path would not fit a unix socket address), then one
// child per node, in the scenario's node order (load_scenario), each this
// same binary (SplitRunArgs::self) as
//   ernic-sim node S.yaml --node X (--listen|--connect) unix:DIR/link.sock --quiet
//             (tcp: tcp:127.0.0.1:PORT, a free port; shm: shm:DIR/link.sock,
//             SimBricks' shared-memory queues) [--chaos-us N]
//             [--pcap DIR/node<i>.pcap] [--log DIR/node<i>.log] [--json DIR/node<i>.json]
//             [--datapath D] [--no-idle-skip] [--handshake-random SEED]
// (node 0 listens, node 1 connects: two nodes, point to point; with a
// switch one more process, `--node switch`, listens and every node's
// connects; over shm each node's link has its own socket, shm:DIR/link.sock.<node>,
// model/system/split_star.cpp), stdout and stderr in DIR/node<i>.out. The
// part options are given when the user asked for that output.
//
// Waiting: every child is polled (waitpid on its pid, never on -1). When
// one ends with a status other than 0, the others get `grace_s` seconds to
// end by themselves (the link to the failed node is gone), then SIGKILL.
// When the whole run outlives `timeout_s` seconds of wall time, every
// child still running is killed. Each node that did not pass is reported
// on `err`: the node, its exit status ("exit status 1 (an expectation
// failed)") or signal ("killed by signal 11 (Segmentation fault)"), and
// the last lines of its output.
//
// Merging (tools/split_merge.h), only when every node ended by itself with
// 0, 1 or 3 (a run that finished: a failing run's outputs are kept, as one
// process keeps them): the node pcaps into --pcap, each node's taps
// (DIR/node<i>.<X>-tx.pcap, -rx.pcap) moved to <stem>.<X>-tx.pcap /
// -rx.pcap beside it (model/system's pcap_tap_path rule; none when --pcap
// is not a plain file, e.g. /dev/null), the logs into --log. The JSON
// parts go to `merge_json` when it is set; else each is moved to
// <json stem>.<X>.json beside --json (no merged report yet).
//
// Exit code (a single-process run's meaning): the worst of the nodes',
// worst first: 2 (a node refused its usage or scenario, or a child could
// not be started), 1 (an expectation failed; also a node that died of a
// signal or exited with another status, and a failed merge), 3 (watchdog
// or simulated time limit; also the wall-clock bound), 0 (every node
// passed). 1 outranks 3: one process stops at its first failure, so a
// watchdog on one node next to an expectation failure on the other is most
// likely the failure's consequence. A node killed because another failed
// does not count. DIR is removed when the run exits 0 and kept otherwise
// (its path printed on `err`).
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace ernic {

struct SplitRunArgs {
  std::string self;        // the ernic-sim binary each node process runs
  std::string scenario;    // S.yaml
  std::string pcap, log, json;  // the user's outputs ("" = none)
  std::string datapath;    // --datapath ("" = the scenario's)
  bool no_idle_skip = false;
  std::string handshake_random;  // --handshake-random as given ("" = none)
  bool quiet = false;      // no summary line on `out`
  std::string transport = "unix";  // the link's carrier: unix (DIR/link.sock), tcp (127.0.0.1, a free port) or
                                   // shm (SimBricks' shared-memory queues, their intro at DIR/link.sock)
  uint32_t chaos_us = 0;   // test only: `node --chaos-us` (random wall-clock sleeps; outputs must not change)
  std::string plant_bug;   // test only: `node --plant-bug` (a planted model bug, e.g. for the wire monitor to find)
  double timeout_s = 3600; // wall-clock bound of the whole run
  double grace_s = 3;      // after a node fails, the others' time to end by themselves
  std::ostream* out = nullptr;  // the summary line (nullptr: std::cout)
  std::ostream* err = nullptr;  // failures and messages (nullptr: std::cerr)
  // The JSON reports (node order) into --json; throws std::runtime_error on
  // failure. Unset: the parts are moved beside --json (see above).
  std::function<void(const std::vector<std::string>& parts, const std::string& out)> merge_json;
};

// Runs the split run; returns the exit code (see above).
int split_run(const SplitRunArgs& a);

}  // namespace ernic
