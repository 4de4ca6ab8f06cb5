// tools/split_cli: `node` and `run --split` on the command line (split_cli.h).
#include "tools/split_cli.h"

#include <cstdio>

#include "model/bridge/net_address.h"
#include "tools/split_report.h"
#include "tools/split_run.h"

namespace ernic {

void add_split_cli(CLI::App& app, CLI::App& run, SplitCli& c) {
  CLI::App* n = app.add_subcommand("node", "run one node of a scenario in this process, joined to the other node's "
                                           "process by SimBricks' Ethernet protocol (a split run, model/system/split.h)");
  SplitOptions& so = c.opt->split;
  n->add_option("scenario", *c.scenario, "scenario file (YAML)")->required();
  n->add_option("--node", so.node, "this process's node (with topology: switch, `switch` is the switch's process, "
                                   "which listens for every node's)")->required();
  auto* l = n->add_option("--listen", so.listen, "wait for the other node's process here: unix:PATH, tcp:HOST:PORT or shm:PATH (SimBricks' shared-memory "
                          "queues, their intro on the Unix socket PATH)");
  n->add_option("--connect", so.connect, "connect to the other node's process there")->excludes(l);
  n->add_option("--timeout-ms", so.timeout_ms, "the longest the other process may stay silent (wall time)");
  n->add_option("--chaos-us", so.chaos_us, "test only: random wall-clock sleeps up to this long in the link");
  n->add_option("--pcap", c.opt->pcap, "this node's frames on the wire (its taps beside it)");
  n->add_option("--json", *c.json, "report as JSON");
  n->add_option("--log", *c.log, "transaction log (JSON lines): this node's records and every step's");
  n->add_option("--datapath", *c.datapath, "rtl, model or user:<name>");
  n->add_flag("--quiet", *c.quiet, "no summary on stdout");
  n->add_option("--plant-bug", c.opt->test_plant_bug, "test only: plant a named bug in the model (ack_coalescing, cq_entry_race)");
  n->add_flag("--no-idle-skip", *c.no_idle_skip, "evaluate every clock domain every cycle (same results, slower)");
  c.handshake_opt =
      n->add_option("--handshake-random", *c.handshake, "randomised VALID/READY on every seam with this seed");
  c.node = n;
  run.add_flag("--split", c.split, "each node in its own process (and a switch in one more), joined by SimBricks' "
                                   "Ethernet protocol, the outputs merged (model/system/split.h)");
  run.add_option("--split-transport", c.transport, "with --split: the link over a Unix socket (unix, default), "
                                                  "TCP on 127.0.0.1 (tcp) or SimBricks' shared-memory queues (shm)")
      ->check(CLI::IsMember({"unix", "tcp", "shm"}));
  run.add_option("--split-chaos-us", c.chaos_us, "with --split, test only: random wall-clock sleeps up to this long "
                                                 "in the link (the outputs must not change)");
}

std::string split_cli_error(const SplitCli& c) {
  if (c.node->parsed() && c.opt->split.listen.empty() == c.opt->split.connect.empty())
    return "ernic-sim node: give --listen ADDR or --connect ADDR";
  const std::string& addr = c.opt->split.listen.empty() ? c.opt->split.connect : c.opt->split.listen;
  if (c.node->parsed() && !bridge::net_address_valid(addr))
    return "ernic-sim node: '" + addr + "' is no link address: unix:PATH, tcp:HOST:PORT or shm:PATH";
  return "";
}

int run_split_main(const SplitCli& c, const std::string& self, const std::string& one_process_only) {
  if (!one_process_only.empty()) {
    std::fprintf(stderr, "ernic-sim run --split: %s: for one process only\n", one_process_only.c_str());
    return 2;
  }
  SplitRunArgs a;
  a.self = self;
  a.scenario = *c.scenario;
  a.pcap = c.opt->pcap, a.log = *c.log, a.json = *c.json;
  a.datapath = *c.datapath;
  a.no_idle_skip = *c.no_idle_skip;
  a.handshake_random = *c.handshake;
  a.quiet = *c.quiet;
  a.plant_bug = c.opt->test_plant_bug;
  a.transport = c.transport;
  a.chaos_us = c.chaos_us;
  a.merge_json = [t = c.transport](const std::vector<std::string>& parts, const std::string& out) {
    merge_split_reports(parts, out, t);
  };
  return split_run(a);
}

}  // namespace ernic
