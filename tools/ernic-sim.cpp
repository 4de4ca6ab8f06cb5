// ernic-sim: the simulator's command line.
//
//   ernic-sim run SCENARIO.yaml [--pcap F] [--vcd F] [--json F] [--log F] [--quiet] [--datapath rtl|model|user:<name>]
//                 [--trigger EXPR [--window PRE,POST] [--trigger-mode first|every]] [--vcd-measure-full] [--handshake-random SEED]
//   ernic-sim regress DIR [--jobs N] [--shard I/N] [--junit F] [--datapath rtl|model|user:<name>] [--label L]  (tools/regress.h)
//   ernic-sim random --seed S --count N [...]   (tools/random.h)
//
// Exit codes: 0 pass; 1 an expectation failed (or the model reported an
// internal error); 2 bad usage or a bad scenario file (file, line, column and
// key named); 3 no progress (watchdog) or the simulated-time limit reached.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <fmt/format.h>
#include <verilated.h>

#include <cerrno>
#include <cmath>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <iostream>
#include <systemc>

#include "model/datapath/sc/datapath.h"
#include "model/scenario/scenario.h"
#include "model/system/system.h"
#include "model/trace/txlog_view.h"
#include "tools/bench_cli.h"
#include "tools/split_cli.h"
#include "tools/floor.h"
#include "tools/regress.h"
#include "tools/random.h"
#include "tools/pcap_cmd.h"
#include "tools/experiment.h"
#include "tools/icarus_compare.h"
#include "tools/rtl_record.h"
#include "tools/rtl_replay.h"
#include "tools/run_cmd.h"

using namespace ernic;

namespace {

// --datapath NAME: a registered datapath (rtl, model, user:<name>); else a
// usage error (exit 2) that lists the registered names.
const CLI::Validator datapath_check(
    [](std::string& v) -> std::string {
      Scenario probe;
      if (!set_datapath(probe, v) || !datapath_registered(v)) return unknown_datapath_message(v);
      return {};
    },
    "rtl|model|user:<name>");

}  // namespace

int sc_main(int argc, char** argv) {
  // sc_stop() is how a run ends; its info message is noise.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  std::vector<std::string> args(argv, argv + argc);
  args[0] = "ernic-sim";
  CLI::App app{"ernic-sim: cycle-accurate co-simulation of ERNIC (PG332) RoCEv2 NICs"};
  app.set_version_flag("--version", "ernic-sim 0.1.0");
  app.require_subcommand(1);
  auto* runc = app.add_subcommand("run", "run a scenario file");
  std::string scenario, json_path;
  RunOptions opt;
  bool quiet = false;
  runc->add_option("scenario", scenario, "scenario file (YAML)")->required();
  runc->add_option("--pcap", opt.pcap, "pcap of the wire (taps <stem>.<node>-tx/-rx.pcap beside it)");
  runc->add_option("--vcd", opt.vcd, "waveform: RTL and model signals in one VCD (and FILE.gtkw for GTKWave)");
  WaveOptions wave;
  CLI::Option* trigger_opt = runc->add_option("--trigger", wave.trigger,
                   "keep only the cycles around the hits of this condition in the VCD (README.md, Triggers)");
  runc->add_option("--window", wave.window, "PRE,POST: core clock cycles kept before and after each hit (default 1000,1000)");
  runc->add_option("--trigger-mode", wave.mode, "first (the first hit only, default) or every hit");
  runc->add_flag("--vcd-measure-full", wave.measure_full,
                 "also measure the size of the full (unwindowed) VCD with a byte-counting sink, writing nothing");
  runc->add_option("--json", json_path, "report as JSON");
  runc->add_flag("--quiet", quiet, "no summary on stdout");
  bool no_idle_skip = false;
  runc->add_flag("--no-idle-skip", no_idle_skip,
                 "evaluate every clock cycle (RTL clocked every core cycle, a ticker per domain); same results, slower");
  std::string log_path;
  runc->add_option("--log", log_path, "transaction log (JSON lines)");
  std::string handshake_seed;  // parsed below as the scenario's integers are (CLI11 wraps -1 and saturates 2^64)
  auto* hr_opt = runc->add_option("--handshake-random", handshake_seed,
                                  "randomise VALID/READY timing on every seam under this seed, 0..2^64-1 (same results, "
                                  "other timing)");
  std::string datapath;
  runc->add_option("--datapath", datapath,
                   "override the scenario's datapath: rtl (Verilated RTL), model (C++) or user:<name> "
                   "(a top built by ernic_user_datapath, rtl/SEAM.md)")
      ->check(datapath_check);
  std::vector<std::string> serve_specs;
  runc->add_option("--serve", serve_specs,
                   "NODE=ADDR: NODE's program step waits on ADDR (unix:PATH or tcp:HOST:PORT) for a program you start "
                   "(e.g. under gdb) instead of starting its own; repeatable");
  auto* servec = app.add_subcommand(
      "serve", "run a scenario whose node's host program you start by hand: the node's program step waits for it");
  std::string serve_node, serve_listen;
  servec->add_option("scenario", scenario, "scenario file (YAML)")->required();
  servec->add_option("--node", serve_node, "the node (host: program) whose program you start")->required();
  servec->add_option("--listen", serve_listen, "where it connects: unix:PATH or tcp:HOST:PORT")->required();
  servec->add_option("--json", json_path, "report as JSON");
  servec->add_option("--pcap", opt.pcap, "pcap of the wire (taps beside it)");
  servec->add_option("--log", log_path, "transaction log (JSON lines)");
  SplitCli split_cli{&scenario, &opt, &json_path, &log_path, &datapath, &handshake_seed, &quiet, &no_idle_skip};
  add_split_cli(app, *runc, split_cli);  // `node`, `run --split` (tools/split_cli.h)
  auto* regc = app.add_subcommand("regress", "run every scenario under a folder (sharded, parallel, JUnit XML)");
  RegressOptions ropt;
  std::string rshard = "0/1", rlabels;
  regc->add_option("dir", ropt.dir, "folder of scenarios (recursive), or one scenario file")->required();
  regc->add_option("--jobs,-j", ropt.jobs, "scenario processes at a time")->check(CLI::Range(1u, 256u));
  regc->add_option("--shard", rshard, "I/N: only scenarios k (0-based, sorted) with k mod N == I");
  regc->add_option("--junit", ropt.junit, "write JUnit XML here");
  regc->add_option("--datapath", ropt.datapath, "run every scenario with this datapath: rtl, model or user:<name>")
      ->check(datapath_check);
  regc->add_option("--label", rlabels, "only scenarios with these labels (comma-separated, all must hold): "
                                       "quick, long, handshake, traffic, error, perf, example, topology");
  regc->add_option("--out", ropt.out_dir, "per-scenario JSON reports and output (default regress/)");
  regc->add_flag("--pcap", ropt.pcap, "keep a pcap per scenario in --out");
  regc->add_flag("--log", ropt.log, "keep a transaction log per scenario in --out");
  regc->add_flag("--list", ropt.list, "print the selected scenarios and their labels, run nothing");
  regc->add_option("--timeout", ropt.timeout_s, "seconds of wall time per scenario before it is killed")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            // CLI::Range lets nan through (every comparison with nan is
            // false): a finite number in [1, 1e6] or refused, as inf is.
            double d = 0;
            if (!CLI::detail::lexical_cast(v, d) || !std::isfinite(d) || d < 1.0 || d > 1e6)
              return "Value " + v + " not in range 1.000000 to 1000000.000000";
            return {};
          },
          "FLOAT in [1 - 1e6]"));
  std::string record_datapath;
  runc->add_option("--record-datapath", record_datapath,
                   "NODE=FILE: record NODE's rtl datapath at its top's ports, edge by edge, into FILE (and its output "
                   "beats into FILE.beats) for `ernic-sim rtl-replay` and Icarus (tools/rtl_stim.h)");
  auto* replayc = app.add_subcommand(
      "rtl-replay", "a stimulus recorded with run --record-datapath into the Verilated datapath (tools/rtl_replay.h)");
  std::string replay_stim, replay_out;
  replayc->add_option("stimulus", replay_stim, "the recorded stimulus")->required();
  replayc->add_option("--out", replay_out, "the output beats (the Icarus testbench's format)")->required();
  app.add_subcommand("icarus", "the RTL datapath under Icarus and under Verilator + SystemC with one recorded stimulus: "
                               "speed and outputs (ernic-sim icarus --help)")
      ->allow_extras();  // dispatched in main() (tools/icarus_compare.h)
  runc->add_option("--plant-bug", opt.test_plant_bug, "test only: plant a named bug in the model (ack_coalescing, cq_entry_race)");
  random_mode::Options rnd_opt;
  auto* randc = random_mode::add_command(app, rnd_opt);
  BenchCli bench;  // tools/bench_cli.h
  add_bench_command(app, bench);
  auto* floorc = app.add_subcommand(
      "floor", "the machine's SystemC floor: a Verilated counter under sc_clock, cycles per wall second");
  uint64_t floor_cycles = 2000000;
  bool floor_json = false;
  floorc->add_option("--cycles", floor_cycles, "clock cycles to run (default 2000000)")->check(CLI::Range(1000ull, 1000000000ull));
  floorc->add_flag("--json", floor_json, "one JSON object instead of a sentence");
  auto* logc = app.add_subcommand("log", "print a transaction log as a timeline");
  std::string log_file;
  TimelineFilter filt;
  std::string kinds, nodes_csv;
  logc->add_option("file", log_file, "log written by run --log")->required();
  logc->add_option("--node", nodes_csv, "only these nodes (comma-separated)");
  logc->add_option("--qp", filt.qp, "only records of this QP");
  logc->add_option("--kind", kinds, "only these kinds: reg,dma,frame,cqe,intr,fault,state,step (comma-separated)");
  logc->add_option("--from", filt.from_us, "from this simulated time (us)");
  logc->add_option("--to", filt.to_us, "up to this simulated time (us)");
  // pcap is dispatched in main() before CLI11 (tools/pcap_cmd.h); listed here
  // for --help and the names below.
  app.add_subcommand("pcap", "a real capture: `pcap decode FILE` (one line a frame), `pcap lint FILE` (IBTA checks), "
                             "`pcap replay FILE` (one side against ERNIC); ernic-sim pcap --help")
      ->allow_extras();
  app.add_subcommand("replay", "the same as `pcap replay`: one side of a real capture against ERNIC, compared field by "
                               "field (ernic-sim replay --help)")
      ->allow_extras();  // dispatched in main()
  app.add_subcommand("experiment", "the seeds' performance claims as sweeps: CSV, PNG plots and a report (ernic-sim experiment --help)")
      ->allow_extras();  // dispatched in main() (tools/experiment.h)
  // An unknown subcommand: CLI11 would only say "A subcommand is required".
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string first = argv[1];
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->check_name(first);
    }
    if (!known) {
      std::fprintf(stderr, "ernic-sim: unknown subcommand '%s' (subcommands: %s)\nRun with --help for more information.\n",
                   first.c_str(), names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (floorc->parsed()) return floor_main(floor_cycles, floor_json);
  if (replayc->parsed()) return rtl_replay_main(replay_stim, replay_out);
  if (!record_datapath.empty()) {
    const size_t eq = record_datapath.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == record_datapath.size()) {
      std::fprintf(stderr, "ernic-sim run: --record-datapath %s: want NODE=FILE\n", record_datapath.c_str());
      return 2;
    }
    if (!datapath.empty() && datapath != "rtl") {
      std::fprintf(stderr, "ernic-sim run: --record-datapath records the rtl datapath, not --datapath %s\n",
                   datapath.c_str());
      return 2;
    }
    record_rtl_datapath(record_datapath.substr(0, eq), record_datapath.substr(eq + 1));
  }
  if (regc->parsed()) {
    if (!parse_shard(rshard, &ropt.shard_index, &ropt.shard_count)) {
      std::fprintf(stderr, "ernic-sim regress: --shard %s: want I/N with 0 <= I < N\n", rshard.c_str());
      return 2;
    }
    ropt.labels = split_csv(rlabels);
    return regress_main(ropt, self_exe(argv[0]), std::cout, std::cerr);
  }
  if (bench.cmd->parsed()) {
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    return bench_cli_main(bench, ec ? std::string(argv[0]) : self);
  }
  if (randc->parsed()) {
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    return random_mode::main(rnd_opt, ec ? std::string(argv[0]) : self, argv[0]);
  }
  if (logc->parsed()) {
    filt.nodes = split_csv(nodes_csv);
    filt.kinds = split_csv(kinds);
    for (const auto& k : filt.kinds)
      if (k != "reg" && k != "dma" && k != "frame" && k != "cqe" && k != "intr" && k != "fault" && k != "state" &&
          k != "step") {
        std::fprintf(stderr, "ernic-sim log: --kind %s: not one of reg, dma, frame, cqe, intr, fault, state, step\n",
                     k.c_str());
        return 2;
      }
    return print_timeline(log_file, filt, std::cout, std::cerr);
  }
  opt.idle_skip = !no_idle_skip;
  for (const std::string& spec : serve_specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      std::fprintf(stderr, "ernic-sim run: --serve %s: want NODE=ADDR\n", spec.c_str());
      return 2;
    }
    opt.serve[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  if (servec->parsed()) opt.serve[serve_node] = serve_listen;
  if (const std::string e = split_cli_error(split_cli); !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 2;
  }
  if (hr_opt->count() || split_cli.handshake_opt->count()) {
    // Decimal or 0x hex, 0..2^64-1, nothing else (as the scenario key `handshake_random.seed`).
    const std::string& s = handshake_seed;
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char* first = s.data() + (hex ? 2 : 0);
    const char* last = s.data() + s.size();
    uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v, hex ? 16 : 10);
    if (first == last || ec != std::errc() || ptr != last) {
      std::fprintf(stderr, "ernic-sim run: --handshake-random '%s': want an integer 0..18446744073709551615%s\n",
                   s.c_str(), ec == std::errc::result_out_of_range ? " (out of range)" : "");
      return 2;
    }
    opt.handshake_random_seed = v;
  }
  if (!opt.test_plant_bug.empty() && !random_mode::is_plantable(opt.test_plant_bug)) {
    std::fprintf(stderr, "ernic-sim run: --plant-bug %s: no such planted bug\n", opt.test_plant_bug.c_str());
    return 2;
  }
  wave.given = trigger_opt->count() > 0;
  if (split_cli.split) {
    std::string one;
    for (const auto& [given, name] : {std::pair{!opt.vcd.empty(), "--vcd"}, {wave.given, "--trigger"},
                                      {!serve_specs.empty(), "--serve"}, {!record_datapath.empty(), "--record-datapath"}})
      if (given) one += (one.empty() ? "" : ", ") + std::string(name);
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    return run_split_main(split_cli, ec ? std::string(argv[0]) : self, one);
  }
  return run_scenario(scenario, opt, json_path, log_path, quiet, args, wave, datapath, std::vector<std::string>(argv, argv + argc));
}

// Our own main so that SystemC's banner is off before the kernel starts
// (libsystemc's main prints it before calling sc_main).
int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "pcap") return pcap_cmd::main(argc - 1, argv + 1);  // tools/pcap_cmd.h
  if (argc > 1 && std::string(argv[1]) == "replay") {  // the same as `pcap replay` (tools/pcap_replay.h)
    std::vector<char*> args = {const_cast<char*>("pcap"), const_cast<char*>("replay")};
    args.insert(args.end(), argv + 2, argv + argc);
    return pcap_cmd::main(int(args.size()), args.data());
  }
  if (argc > 1 && std::string(argv[1]) == "experiment") return ernic::experiment::main(argc - 1, argv + 1);  // tools/experiment.h
  if (argc > 1 && std::string(argv[1]) == "icarus") return ernic::icarus_main(argc - 1, argv + 1);  // tools/icarus_compare.h
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
