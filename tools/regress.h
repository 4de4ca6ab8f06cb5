// tools/regress: `ernic-sim regress DIR`, the scenario folder as a
// regression suite, for CI systems and batch schedulers.
//
// Selection: every `*.yaml` under DIR (recursively; DIR may also be one
// file), sorted by its path relative to DIR (byte order), then filtered by
// --label (every given label must be among the scenario's), then sharded:
// the k-th scenario of that list (k from 0) belongs to shard k mod N, so
// `--shard 0/N` .. `--shard N-1/N` partition the list exactly.
//
// Labels of a scenario come from the folder that holds it (the same rule as
// tb/scenarios/CMakeLists.txt, which registers each scenario with ctest;
// test `scenarios.labels_agree` compares the two): handshake/ ->
// handshake, traffic/ -> traffic, errors/ -> error, perf/ -> perf and long,
// examples/ -> example, topology/ -> topology, peer/ -> fidelity; every scenario outside perf/
// is also quick.
//
// Execution: each scenario runs in its own process, this same binary
// (/proc/self/exe) as `ernic-sim run FILE --quiet --json OUT/NAME.json
// [--datapath D]` (and --pcap / --log with those options), with stdout
// and stderr in OUT/NAME.out; at most --jobs at a time. A run that
// outlives --timeout seconds is killed (an error). Results are printed in
// list order whatever the parallelism, one line each:
//   PASS errors/rc_write_remote_access  sim 50.112 us  wall 0.42 s
//   FAIL regress/fail_check_memory  sim 12.201 us  wall 0.18 s  (exit 1: <first failure>)
// then a summary with the total wall time; failed scenarios are listed
// again with the command that reproduces each and its seed.
//
// JUnit XML (--junit FILE): one <testsuites> holding one <testsuite> with a
// <testcase> per scenario (classname "scenario[.<datapath>].<folder>", name
// the file's stem, time its wall seconds): exit 1 and 3 of the run give a
// <failure> (type: the run's result, "fail" / "no-progress" /
// "time-limit"; message: the first failure), anything else (exit 2, a
// signal, the timeout) an <error>; the failure report is the element's
// text. The layout follows the Apache Ant JUnit schema that CI tools read
// (testsuite with name, package, id, timestamp, hostname, tests, failures,
// errors, skipped and time; properties; system-out; system-err).
//
// Exit code: 0 every scenario passed; 1 one failed; 2 bad usage (no such
// DIR, no scenario selected, also with --list; a bad --shard).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ernic {

struct RegressOptions {
  std::string dir;                      // folder (or one file) of scenarios
  unsigned jobs = 1;                    // scenario processes at a time
  unsigned shard_index = 0, shard_count = 1;   // --shard I/N, I in 0..N-1
  std::string junit;                    // JUnit XML file ("" = none)
  std::string datapath;                 // "", "rtl", "model", "user:<name>": passed to every run
  std::vector<std::string> labels;      // all of them must be the scenario's
  std::string out_dir = "regress";      // per-scenario JSON report and output
  bool pcap = false, log = false;       // also keep a pcap / transaction log per scenario
  bool list = false;                    // print the selection (name and labels) and stop
  double timeout_s = 600;               // per scenario, wall seconds
};

struct RegressCase {
  std::string path;                     // as found under dir
  std::string name;                     // relative to dir, without ".yaml" ("errors/rc_x")
  std::vector<std::string> labels;
};

// Labels of the scenario at this path, from the folder that holds it (see above).
std::vector<std::string> scenario_labels(const std::string& path);

// Every scenario under dir, sorted; empty and *err set when dir is missing.
std::vector<RegressCase> regress_collect(const std::string& dir, std::string* err);

// Filtered by labels and sharded as RegressOptions says.
std::vector<RegressCase> regress_select(const std::vector<RegressCase>& all, const RegressOptions& opt);

// Parses "I/N" (0 <= I < N); false when malformed.
bool parse_shard(const std::string& s, unsigned* index, unsigned* count);

// Runs the selection; returns the exit code described above.
int regress_main(const RegressOptions& opt, const std::string& self_exe, std::ostream& out, std::ostream& err);

}  // namespace ernic
