// tools: `ernic-sim run` in this process (run_cmd.h).
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
#include "tools/run_checks.h"
#include "tools/run_cmd.h"

namespace ernic {

std::string self_exe(const char* argv0) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? std::string(argv0) : self;
}

namespace {

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

}  // namespace

int run_scenario(const std::string& path, const RunOptions& opt, const std::string& json_path, const std::string& log_path,
        bool quiet, const std::vector<std::string>& argv, WaveOptions& wave, const std::string& datapath,
        const std::vector<std::string>& raw_argv) {
  if (!parse_wave_options(wave, opt)) return 2;
  Scenario sc;
  try {
    sc = load_scenario(path);
  } catch (const ScenarioError& e) {
    std::fprintf(stderr, "ernic-sim: %s\n", e.what());
    return 2;
  }
  if (!check_scenario_for_run(sc, opt, datapath)) return 2;
  // A --vcd that is not a plain file (a device, a pipe): no GTKWave save
  // file beside it, and its temporaries in the temporary directory.
  const bool vcd_gtkw = opt.vcd.empty() || output_has_side_files(opt.vcd);
  const std::string vcd_side =
      vcd_gtkw ? opt.vcd
               : (std::filesystem::temp_directory_path() / fmt::format("ernic-sim-{}.vcd", ::getpid())).string();
  // Output paths: distinct, and creatable, before any simulation.
  bool vcd_existed = false;  // --vcd named a file that was there before the run: never removed
  if (!check_output_paths(path, sc, opt, json_path, log_path, vcd_side, vcd_gtkw, &vcd_existed)) return 2;
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

}  // namespace ernic
