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
#include "model/trace/gtkw.h"
#include "model/system/report.h"
#include "model/scenario/scenario.h"
#include "model/system/system.h"
#include "model/trace/txlog.h"
#include "model/trace/trigger.h"
#include "model/trace/txlog_view.h"
#include "tools/bench_cli.h"
#include "tools/same_file.h"
#include "tools/split_cli.h"
#include "tools/floor.h"
#include "tools/failure_report.h"
#include "tools/regress.h"
#include "tools/random.h"
#include "tools/pcap_cmd.h"
#include "tools/experiment.h"
#include "tools/icarus_compare.h"
#include "tools/rtl_record.h"
#include "tools/rtl_replay.h"

using namespace ernic;

namespace {

// The running binary (for the repro line and for regress's child runs).
std::string self_exe(const char* argv0) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? std::string(argv0) : self;
}


// --datapath NAME: a registered datapath (rtl, model, user:<name>); else a
// usage error (exit 2) that lists the registered names.
const CLI::Validator datapath_check(
    [](std::string& v) -> std::string {
      Scenario probe;
      if (!set_datapath(probe, v) || !datapath_registered(v)) return unknown_datapath_message(v);
      return {};
    },
    "rtl|model|user:<name>");

// --trigger / --window / --trigger-mode / --vcd-measure-full (README.md "Triggers").
struct WaveOptions {
  std::string trigger, window, mode = "first";
  bool measure_full = false;
  bool given = false;  // --trigger on the command line (even empty: an error)
  trigger::Trigger trig;
  trigger::Mode trig_mode = trigger::Mode::first;
  uint64_t pre = 0, post = 0;  // core cycles
};

// Parses the trigger options (before anything runs); false: printed, exit 2.
bool parse_wave_options(WaveOptions& w, const RunOptions& opt) {
  if (w.trigger.empty() && !w.given) {
    if (!w.window.empty() || w.mode != "first") {
      std::fprintf(stderr, "ernic-sim: --window and --trigger-mode need --trigger\n");
      return false;
    }
    if (w.measure_full && opt.vcd.empty()) {
      std::fprintf(stderr, "ernic-sim: --vcd-measure-full needs --vcd\n");
      return false;
    }
    return true;
  }
  if (opt.vcd.empty()) {
    std::fprintf(stderr, "ernic-sim: --trigger needs --vcd FILE (the trigger selects what the VCD keeps)\n");
    return false;
  }
  if (w.mode == "first") w.trig_mode = trigger::Mode::first;
  else if (w.mode == "every") w.trig_mode = trigger::Mode::every;
  else {
    std::fprintf(stderr, "ernic-sim: --trigger-mode %s: not one of first, every\n", w.mode.c_str());
    return false;
  }
  const std::string win = w.window.empty() ? "1000,1000" : w.window;
  {
    const size_t comma = win.find(',');
    char* e1 = nullptr;
    char* e2 = nullptr;
    const std::string a = comma == std::string::npos ? win : win.substr(0, comma);
    const std::string b = comma == std::string::npos ? "" : win.substr(comma + 1);
    const unsigned long long pre = std::strtoull(a.c_str(), &e1, 10);
    const unsigned long long post = std::strtoull(b.c_str(), &e2, 10);
    if (comma == std::string::npos || a.empty() || b.empty() || *e1 || *e2 || a[0] == '-' || b[0] == '-' ||
        pre > 1'000'000'000'000ull || post > 1'000'000'000'000ull) {
      std::fprintf(stderr, "ernic-sim: --window %s: expected PRE,POST (core clock cycles before and after each hit, "
                           "e.g. 200,800)\n", win.c_str());
      return false;
    }
    w.pre = pre;
    w.post = post;
  }
  try {
    w.trig = trigger::Trigger::parse(w.trigger);
  } catch (const trigger::TriggerError& e) {
    std::fprintf(stderr, "ernic-sim: --trigger: column %zu: %s\n  %s\n  %s^\n", e.column(), e.what(),
                 w.trigger.c_str(), std::string(e.column() > 0 ? e.column() - 1 : 0, ' ').c_str());
    return false;
  }
  return true;
}

// Runs the kernel up to the scenario's time limit (or its sc_stop). On a
// terminal, once a run has taken 3 s of wall time, a line shows how far
// simulated time has got ("run: 1234.567 us of 10000 us simulated,
// elapsed 0:05"; ERNIC_PROGRESS_AFTER=S sets the 3 s, for tests), redrawn
// at most twice a second and erased at the end:
// the kernel then runs in slices of a thousandth of the limit (sc_start
// resumes where it stopped, so the run is the same). Off a terminal, one
// sc_start and nothing printed.
void run_with_progress(uint64_t limit_us, bool tty) {
  using namespace std::chrono;
  const sc_core::sc_time limit(double(limit_us), sc_core::SC_US);
  if (!tty) return sc_core::sc_start(limit);
  const auto t0 = steady_clock::now();
  const char* after_env = std::getenv("ERNIC_PROGRESS_AFTER");
  const double after = after_env ? std::atof(after_env) : 3.0;
  const sc_core::sc_time slice = limit / 1000.0;
  double last = 0;
  bool drawn = false;
  while (sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_time_stamp() < limit) {
    const sc_core::sc_time left = limit - sc_core::sc_time_stamp();
    sc_core::sc_start(left < slice ? left : slice);
    const double el = duration<double>(steady_clock::now() - t0).count();
    if (el >= after && (!drawn || el - last >= 0.5)) {
      last = el;
      std::printf("\r\033[Krun: %.3f us of %llu us simulated, elapsed %ld:%02ld", sc_core::sc_time_stamp().to_seconds() * 1e6,
                  (unsigned long long)limit_us, long(el) / 60, long(el) % 60);
      std::fflush(stdout);
      drawn = true;
    }
  }
  if (drawn) {
    std::printf("\r\033[K");
    std::fflush(stdout);
  }
}

int run(const std::string& path, const RunOptions& opt, const std::string& json_path, const std::string& log_path,
        bool quiet, const std::vector<std::string>& argv, WaveOptions& wave, const std::string& datapath = "",
        const std::vector<std::string>& raw_argv = {}) {
  if (!parse_wave_options(wave, opt)) return 2;
  Scenario sc;
  try {
    sc = load_scenario(path);
  } catch (const ScenarioError& e) {
    std::fprintf(stderr, "ernic-sim: %s\n", e.what());
    return 2;
  }
  // --datapath overrides the scenario's `datapath` key (checked by the option's validator).
  if (!datapath.empty()) {
    set_datapath(sc, datapath);
    sc.datapath_loc = SourceLoc{};
  }
  if (!datapath_registered(sc.datapath_name())) {
    if (sc.datapath_loc.file.empty())
      std::fprintf(stderr, "ernic-sim: --datapath %s: %s\n", datapath.c_str(),
                   unknown_datapath_message(sc.datapath_name()).c_str());
    else
      std::fprintf(stderr, "ernic-sim: %s\n",
                   ScenarioError(sc.datapath_loc.file, sc.datapath_loc.line, sc.datapath_loc.column, "datapath",
                                 unknown_datapath_message(sc.datapath_name()))
                       .what());
    return 2;
  }
  if (!opt.test_plant_bug.empty()) {  // test only: a planted bug in the model (tools/random.h)
    std::fprintf(stderr, "ernic-sim: test only: the model carries the planted bug '%s'\n", opt.test_plant_bug.c_str());
    for (auto& n : sc.nodes) n.test_bug_ack_coalescing = opt.test_plant_bug == "ack_coalescing";
  }
  // Does a program step (at any depth) name this node?
  std::function<bool(const std::vector<Step>&, const std::string&)> has_program_step =
      [&](const std::vector<Step>& steps, const std::string& node) {
        for (const Step& st : steps) {
          if (const auto* p = std::get_if<ProgramStep>(&st); p && p->node == node) return true;
          if (const auto* r = std::get_if<std::shared_ptr<RepeatStep>>(&st); r && has_program_step((*r)->steps, node))
            return true;
          if (const auto* q = std::get_if<std::shared_ptr<ParallelStep>>(&st))
            for (const auto& b : (*q)->branches)
              if (has_program_step(b.steps, node)) return true;
        }
        return false;
      };
  for (const auto& [node, addr] : opt.serve) {  // --serve / serve --node: a node whose host is a program
    const auto it = std::find_if(sc.nodes.begin(), sc.nodes.end(), [&](const NodeConfig& n) { return n.name == node; });
    if (it == sc.nodes.end() || !it->host_program) {
      std::fprintf(stderr, "ernic-sim: serve: node '%s' %s\n", node.c_str(),
                   it == sc.nodes.end() ? "is not in the scenario" : "has the built-in driver (no host: program)");
      return 2;
    }
    if (!has_program_step(sc.steps, node)) {
      std::fprintf(stderr, "ernic-sim: serve: node '%s' has no program step: nothing would wait for a program\n",
                   node.c_str());
      return 2;
    }
    try {
      bridge::Endpoint::parse(addr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ernic-sim: serve: %s\n", e.what());
      return 2;
    }
  }
  if (sc.nodes.size() > 2 && !sc.topology_switch) {
    const auto& l = sc.nodes[2].loc;
    std::fprintf(stderr,
                 "ernic-sim: %s: key 'nodes': a point-to-point link joins at most two nodes (give `topology: switch` "
                 "for more)\n",
                 l.str().c_str());
    return 2;
  }
  // A --vcd that is not a plain file (a device, a pipe): no GTKWave save
  // file beside it, and its temporaries in the temporary directory.
  const bool vcd_gtkw = opt.vcd.empty() || output_has_side_files(opt.vcd);
  const std::string vcd_side =
      vcd_gtkw ? opt.vcd
               : (std::filesystem::temp_directory_path() / fmt::format("ernic-sim-{}.vcd", ::getpid())).string();
  // Output paths: distinct, and creatable, before any simulation.
  bool vcd_existed = false;  // --vcd named a file that was there before the run: never removed
  {
    std::vector<std::pair<std::string, std::string>> outs;  // path, option
    if (!opt.pcap.empty()) {
      outs.push_back({opt.pcap, "--pcap"});
      if (output_has_side_files(opt.pcap))
        for (const auto& n : sc.nodes)
          for (const char* t : {"tx", "rx"}) outs.push_back({pcap_tap_path(opt.pcap, n.name, t), "--pcap (tap)"});
    }
    if (!opt.vcd.empty()) {
      outs.push_back({opt.vcd, "--vcd"});
      if (vcd_gtkw) outs.push_back({opt.vcd + ".gtkw", "--vcd (GTKWave save file)"});
      outs.push_back({vcd_side + ".model.tmp", "--vcd (temporary)"});
      outs.push_back({vcd_side + ".rtl.tmp", "--vcd (temporary)"});
    }
    if (!json_path.empty()) outs.push_back({json_path, "--json"});
    if (!log_path.empty()) outs.push_back({log_path, "--log"});
    // No output may be the scenario itself (`--json S` would overwrite the
    // input), nor another output: compared as written, and as files (a
    // symlink, another spelling of the same path, a hard link).
    for (const auto& [p, o] : outs)
      if (same_file(p, path)) {
        std::fprintf(stderr, "ernic-sim: %s %s is the scenario file itself: refusing to overwrite the input\n",
                     o.c_str(), p.c_str());
        return 2;
      }
    for (size_t i = 0; i < outs.size(); ++i)
      for (size_t j = i + 1; j < outs.size(); ++j)
        if (same_file(outs[i].first, outs[j].first)) {
          std::fprintf(stderr, "ernic-sim: %s and %s would both write %s\n", outs[i].second.c_str(),
                       outs[j].second.c_str(), outs[i].first.c_str());
          return 2;
        }
    for (const auto& [p, o] : outs) {
      std::error_code ec;
      if (std::filesystem::is_directory(p, ec)) {
        std::fprintf(stderr, "ernic-sim: %s %s: is a directory\n", o.c_str(), p.c_str());
        return 2;
      }
      const bool existed = std::filesystem::exists(p, ec);
      if (p == opt.vcd) vcd_existed = existed;
      FILE* f = std::fopen(p.c_str(), "ab");
      if (!f) {
        std::fprintf(stderr, "ernic-sim: %s %s: cannot write: %s\n", o.c_str(), p.c_str(), std::strerror(errno));
        return 2;
      }
      std::fclose(f);
      if (!existed) std::remove(p.c_str());
    }
  }
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  SimContext ctx;
  std::unique_ptr<trace::VcdWriter> vcd;
  std::vector<uint64_t> wave_hits;
  uint64_t vcd_bytes = 0, vcd_full_bytes = 0;
  size_t vcd_windows = 0;
  const std::string rtl_vcd = opt.vcd.empty() ? "" : vcd_side + ".rtl.tmp";
  if (!opt.vcd.empty()) {
    Verilated::traceEverOn(true);
    try {
      vcd = std::make_unique<trace::VcdWriter>(vcd_side + ".model.tmp");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ernic-sim: --vcd %s: %s\n", opt.vcd.c_str(), e.what());
      return 2;
    }
    ctx.vcd = vcd.get();
  }
  std::unique_ptr<TxLog> txlog;
  if (!log_path.empty()) {
    try {
      txlog = std::make_unique<TxLog>(log_path);
      txlog->clock = [] { return uint64_t(sc_core::sc_time_stamp().value()); };
      txlog->mark_instants = !opt.split.node.empty();  // `node`: the parts merge by instant (tools/split_merge.h)
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ernic-sim: %s\n", e.what());
      return 2;
    }
    ctx.log = txlog.get();
  }
  std::unique_ptr<System> sys;
  try {
    sys = std::make_unique<System>("top", sc, opt, ctx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ernic-sim: cannot build the system: %s\n", e.what());
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  if (!opt.vcd.empty()) sys->open_rtl_trace(rtl_vcd);
  if (!wave.trigger.empty()) {
    // Names the trigger may use: the model's declared signals and the RTL
    // file's header (written when the trace opened).
    trigger::BindContext bc;
    for (const auto& n : sys->nodes)
      if (n->ernic)  // kind: peer: no registers
        bc.nodes[n->cfg.name] = {&n->ernic->config().layout, n->ernic->config().num_qp, n->ernic->config().num_mr};
    for (const auto& [name, width] : vcd->model_var_names()) bc.signals.push_back(name);
    sys->flush_rtl_trace();
    try {
      for (const auto& v : trace::vcd_list_vars(rtl_vcd)) bc.signals.push_back(v.full_name);
    } catch (const std::exception&) {
      // no RTL header (nothing traced)
    }
    bc.core_period_ps = sys->core.period_ps();
    bc.cmac_period_ps = sys->cmac_clk.period_ps();
    try {
      wave.trig.bind(bc);
    } catch (const trigger::TriggerError& e) {
      std::fprintf(stderr, "ernic-sim: --trigger: column %zu: %s\n  %s\n  %s^\n", e.column(), e.what(),
                   wave.trigger.c_str(), std::string(e.column() > 0 ? e.column() - 1 : 0, ' ').c_str());
      try {
        sys->close_rtl_trace();
      } catch (const std::exception&) {
        // the usage error is the one to tell
      }
      std::remove(rtl_vcd.c_str());
      return 2;
    }
  }
  // A run can end during elaboration's delta cycles (a step failing at time 0).
  if (sc_core::sc_get_status() != sc_core::SC_STOPPED)
    run_with_progress(sc.limits.sim_time_us, !quiet && isatty(STDOUT_FILENO));
  auto t1 = std::chrono::steady_clock::now();
  sys->end_programs();    // a program the run outlived: stopped, its output kept
  if (sys->split() && !sys->net_link()->error().empty()) {
    sys->failures.push_back({"split run: " + sys->net_link()->error(), SourceLoc{}, sc_core::sc_time_stamp().value()});
    if (sys->exit_code == 0) sys->exit_code = 1;
  }
  sys->end_split();       // `node`: the other process told how this run ended, and heard
  ctx.protocol.finish();  // the protocol monitors evaluate their last edges
  if (!sys->finished && sys->exit_code == 0 && !sys->stopped_after_error) {
    sys->failures.push_back({fmt::format("simulated time limit of {} us reached before the last step", sc.limits.sim_time_us),
                             SourceLoc{}, sc_core::sc_time_stamp().value()});
    sys->exit_code = 3;
    sys->time_limit_hit = true;
    for (auto& n : sys->nodes)
      if (n->ernic)  // kind: peer: no ERNIC
        for (auto& s : n->ernic->qp_status()) sys->stall_report.push_back(n->cfg.name + " " + s);
  }
  if (sys->exit_code == 0 && !ctx.errors.empty()) sys->exit_code = 1;
  try {
    sys->close_taps();
    if (txlog) txlog->flush();
    sys->close_rtl_trace();
    if (vcd) {
      const uint64_t end_ps = sc_core::sc_time_stamp().value();
      ctx.advance_clocks(end_ps);
      vcd->close_body();
      const uint64_t core_ps = sys->core.period_ps();
      std::vector<trace::VcdWindow> windows;
      trace::GtkwInfo gi;
      gi.vcd_path = opt.vcd;
      if (!wave.trigger.empty()) {
        wave_hits = wave.trig.hits(*vcd, rtl_vcd, end_ps, wave.trig_mode);
        windows = trace::make_windows(wave_hits, wave.pre * core_ps, wave.post * core_ps);
        gi.hits_ps = wave_hits;
        if (!windows.empty()) gi.timestart_ps = windows.front().begin_ps;
        gi.notes.push_back("trigger: " + wave.trigger);
        gi.notes.push_back(fmt::format("window: {} core cycles before, {} after each hit ({} ps a cycle); mode {}",
                                       wave.pre, wave.post, core_ps, wave.mode));
        for (uint64_t h : wave_hits) gi.notes.push_back(fmt::format("hit at {} ps (core cycle {})", h, h / core_ps));
      }
      try {
        trace::FileSink sink(opt.vcd);
        vcd_bytes = vcd->write_merged(sink, rtl_vcd, end_ps, wave.trigger.empty() ? nullptr : &windows);
      } catch (...) {
        // No half-written waveform, but never remove what the run did not
        // create (a file or a device node such as /dev/full given as --vcd).
        if (!vcd_existed) std::remove(opt.vcd.c_str());
        throw;
      }
      if (wave.measure_full) {
        trace::CountingSink cs;
        vcd_full_bytes = vcd->write_merged(cs, rtl_vcd, end_ps, nullptr);
      }
      if (vcd_gtkw) trace::write_gtkw(opt.vcd + ".gtkw", vcd->merged_vars(rtl_vcd), gi);
      vcd->remove_body();
      std::remove(rtl_vcd.c_str());
      vcd_windows = windows.size();
    }
  } catch (const std::exception& e) {
    if (!rtl_vcd.empty()) std::remove(rtl_vcd.c_str());
    std::fprintf(stderr, "ernic-sim: writing the outputs failed: %s\n", e.what());
    return 2;
  }
  WallClock wall;
  wall.seconds = std::chrono::duration<double>(t1 - t0).count();
  nlohmann::json rep = make_report(*sys, argv, wall, path);
  if (!opt.vcd.empty()) {
    nlohmann::json w = {{"vcd", opt.vcd}, {"bytes", vcd_bytes}};
    if (vcd_gtkw) w["gtkw"] = opt.vcd + ".gtkw";
    if (wave.measure_full) w["full_dump_bytes"] = vcd_full_bytes;
    if (!wave.trigger.empty()) {
      nlohmann::json hits = nlohmann::json::array();
      for (uint64_t h : wave_hits) hits.push_back({{"time_ps", h}, {"core_cycle", h / sys->core.period_ps()}});
      w["trigger"] = {{"expression", wave.trigger}, {"mode", wave.mode}, {"window_pre_cycles", wave.pre},
                      {"window_post_cycles", wave.post}, {"windows", vcd_windows}, {"hits", hits}};
    }
    rep["waveform"] = w;
  }
  if (!quiet) std::cout << summary_text(rep);
  if (!quiet && !wave.trigger.empty()) {
    std::cout << fmt::format("trigger: {} -> {} hit{} (mode {})", wave.trigger, wave_hits.size(),
                             wave_hits.size() == 1 ? "" : "s", wave.mode);
    for (size_t i = 0; i < wave_hits.size() && i < 8; ++i)
      std::cout << fmt::format("{} {:.6f} us (core cycle {})", i ? "," : ":", double(wave_hits[i]) / 1e6,
                               wave_hits[i] / sys->core.period_ps());
    if (wave_hits.size() > 8) std::cout << ", ...";
    std::cout << fmt::format("\n  vcd keeps {} window{} of -{}..+{} core cycles around the hits\n", vcd_windows,
                             vcd_windows == 1 ? "" : "s", wave.pre, wave.post);
  }
  if (!quiet && !opt.vcd.empty()) {
    std::cout << fmt::format("vcd: {}: {} bytes written", opt.vcd, vcd_bytes);
    if (vcd_gtkw) std::cout << fmt::format(" (GTKWave save file {}.gtkw)", opt.vcd);
    if (wave.measure_full)
      std::cout << fmt::format("; the full dump is {} bytes (measured with a counting sink, not written){}",
                               vcd_full_bytes,
                               vcd_full_bytes ? fmt::format(": {:.3f} %", 100.0 * double(vcd_bytes) / double(vcd_full_bytes))
                                              : std::string());
    std::cout << "\n";
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << rep.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!f) {
      std::fprintf(stderr, "ernic-sim: cannot write %s\n", json_path.c_str());
      return 2;
    }
  }
  if (sys->exit_code != 0) {  // the failure report (tools/failure_report.h)
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path(ec).string();
    std::fputs(failure_report(rep, path, {opt.pcap, opt.vcd, json_path, log_path}, raw_argv.empty() ? argv : raw_argv,
                              self_exe(argv[0].c_str()), ec ? "" : cwd, quiet)
                   .c_str(),
               stderr);
  }
  return sys->exit_code;
}

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
  runc->add_option("--plant-bug", opt.test_plant_bug, "test only: plant a named bug in the model (ack_coalescing)");
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
  return run(scenario, opt, json_path, log_path, quiet, args, wave, datapath, std::vector<std::string>(argv, argv + argc));
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
