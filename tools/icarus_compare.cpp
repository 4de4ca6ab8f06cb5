// tools: `ernic-sim icarus` (icarus_compare.h).
#include "tools/icarus_compare.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tools/bench.h"
#include "tools/spawn.h"

namespace ernic {

namespace {

namespace fs = std::filesystem;

// The datapath's RTL as rtl/CMakeLists.txt lists it (ERNIC_DATAPATH_SOURCES,
// '|'-separated absolute paths), its include folder and the testbench.
std::vector<std::string> rtl_sources() {
  std::vector<std::string> v;
  std::stringstream ss(ERNIC_RTL_DATAPATH_SOURCES);
  for (std::string s; std::getline(ss, s, '|');)
    if (!s.empty()) v.push_back(s);
  return v;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

struct Timed {
  int status = -1;  // exit status, or -1 when it did not start or was killed
  double wall_s = 0;
  long rss_kb = 0;
  std::string err;
};

// Runs args (stdout and stderr into log), timed, with the child's own max RSS.
Timed run_timed(const std::vector<std::string>& args, const fs::path& log) {
  Timed t;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawn_child(args, log.string(), &t.err);
  if (pid < 0) return t;
  int st = 0;
  struct rusage ru {};
  if (::wait4(pid, &st, 0, &ru) < 0) {
    t.err = "wait4 failed";
    return t;
  }
  t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.rss_kb = ru.ru_maxrss;
  t.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return t;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "" when equal, else the first differing line of each.
std::string first_diff(const std::string& a, const std::string& b, const char* na, const char* nb) {
  if (a == b) return {};
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (uint64_t n = 1;; ++n) {
    const bool ga = bool(std::getline(sa, la)), gb = bool(std::getline(sb, lb));
    if (!ga && !gb) return "they differ in their line ends";
    if (!ga || !gb || la != lb) {
      auto cut = [](const std::string& s) { return s.size() > 120 ? s.substr(0, 120) + "..." : s; };
      return fmt::format("line {}: {} `{}`, {} `{}`", n, na, ga ? cut(la) : "(end)", nb, gb ? cut(lb) : "(end)");
    }
  }
}

std::string tail(const fs::path& log) {
  std::string s = read_all(log);
  if (s.size() > 600) s = "..." + s.substr(s.size() - 600);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string first_line_of(const std::string& cmd) {
  std::string out;
  if (std::FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, p)) out = buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

std::string icarus_stimulus_text(const IcarusOptions& opt, const IcarusResult& r) {
  const uint64_t msg = std::min<uint64_t>(opt.bytes, 65536);
  return fmt::format("node {}'s RTL datapath in a {}-byte line-rate WRITE stream ({} x {} B): {} core + {} CMAC edges, "
                     "{} output beats",
                     opt.node, opt.bytes, opt.bytes / msg, msg, r.core_edges, r.cmac_edges, r.beats);
}

IcarusResult icarus_compare(const IcarusOptions& opt, const std::string& self) {
  IcarusResult r;
  const std::string iverilog = find_program("iverilog"), vvp = find_program("vvp");
  if (iverilog.empty() || vvp.empty()) {
    r.skipped = "iverilog/vvp not found in PATH (tools/bootstrap installs Debian's iverilog)";
    return r;
  }
  const std::vector<std::string> srcs = rtl_sources();
  for (const std::string& s : std::vector<std::string>(srcs.begin(), srcs.end()))
    if (!fs::exists(s)) {
      r.skipped = "the RTL sources are not where this binary was built from (" + s + ")";
      return r;
    }
  if (!fs::exists(ERNIC_REPLAY_TB)) {
    r.skipped = std::string("the testbench is not where this binary was built from (") + ERNIC_REPLAY_TB + ")";
    return r;
  }
  r.icarus_version = first_line_of(fmt::format("'{}' -V 2>&1", iverilog));
  const fs::path dir = fs::absolute(opt.out_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    r.error = fmt::format("cannot create {}: {}", dir.string(), ec.message());
    return r;
  }
  // 1. The run, recording.
  const uint64_t msg = std::min<uint64_t>(opt.bytes, 65536);
  const uint32_t iters = uint32_t(std::max<uint64_t>(1, opt.bytes / msg));
  const fs::path scen = dir / "write_stream.yaml", stim = dir / "stim.txt";
  std::ofstream(scen) << bench_scenario_text("write", {{msg, iters}}, msg, false, 0);
  Timed rec = run_timed({self, "run", scen.string(), "--datapath", "rtl", "--quiet", "--json",
                         (dir / "record.json").string(), "--record-datapath", opt.node + "=" + stim.string()},
                        dir / "record.log");
  if (rec.status != 0) {
    r.error = fmt::format("the recording run failed ({}; {}): {}", rec.status, (dir / "record.log").string(),
                          rec.err.empty() ? tail(dir / "record.log") : rec.err);
    return r;
  }
  {
    std::ifstream in(stim);
    for (std::string line; std::getline(in, line);) {
      ++r.lines;
      const int dom = line.empty() ? 0 : line[0] - '0';
      r.core_edges += dom & 1;
      r.cmac_edges += (dom >> 1) & 1;
    }
  }
  // 2. Verilator + SystemC.
  Timed ver = run_timed({self, "rtl-replay", stim.string(), "--out", (dir / "verilator.beats").string()},
                        dir / "verilator.log");
  if (ver.status != 0) {
    r.error = fmt::format("rtl-replay failed ({}): {}", ver.status, ver.err.empty() ? tail(dir / "verilator.log") : ver.err);
    return r;
  }
  r.verilator_s = ver.wall_s;
  r.verilator_rss_kb = ver.rss_kb;
  // 3. Icarus.
  std::vector<std::string> comp = {iverilog, "-g2012", "-I" + std::string(ERNIC_RTL_INCLUDE_DIR), "-o",
                                   (dir / "replay.vvp").string(), ERNIC_REPLAY_TB};
  comp.insert(comp.end(), srcs.begin(), srcs.end());
  Timed cc = run_timed(comp, dir / "iverilog.log");
  if (cc.status != 0) {
    r.error = fmt::format("iverilog failed ({}): {}", cc.status, cc.err.empty() ? tail(dir / "iverilog.log") : cc.err);
    return r;
  }
  Timed ica = run_timed({vvp, "-n", (dir / "replay.vvp").string(), "+stim=" + stim.string(),
                         "+out=" + (dir / "icarus.beats").string()},
                        dir / "icarus.log");
  if (ica.status != 0) {
    r.error = fmt::format("vvp failed ({}): {}", ica.status, ica.err.empty() ? tail(dir / "icarus.log") : ica.err);
    return r;
  }
  r.icarus_s = ica.wall_s;
  r.icarus_rss_kb = ica.rss_kb;
  const std::string vb = read_all(dir / "verilator.beats"), ib = read_all(dir / "icarus.beats"),
                    sb = read_all(stim.string() + ".beats");
  r.beats = uint64_t(std::count(vb.begin(), vb.end(), '\n'));
  if (r.beats) --r.beats;  // the end line
  r.diff = first_diff(vb, ib, "Verilator", "Icarus");
  r.identical = r.diff.empty() && !vb.empty();
  r.same_as_run = vb == sb;
  if (r.identical && !r.same_as_run) r.diff = first_diff(sb, vb, "the run", "the replay");
  return r;
}

std::string icarus_table_rows(const IcarusOptions& opt, const IcarusResult& r, double floor) {
  if (!r.skipped.empty()) return " replay: no Icarus comparison: " + r.skipped + "\n";
  if (!r.error.empty()) return " replay: the Icarus comparison failed: " + r.error + "\n";
  auto over = [floor](double v) { return floor > 0 ? fmt::format("{:>8.3g}", v / floor) : fmt::format("{:>8}", "-"); };
  std::string s = fmt::format(" {:<8} {:>16} {:>8} {:>14} {:>8} {:>17}\n", "replay", "verilator cyc/s", "/floor",
                              "icarus cyc/s", "/floor", "verilator/icarus");
  s += fmt::format(" {:<8} {:>16.0f} {} {:>14.1f} {} {:>17.1f}\n", "replay", r.verilator_cps(), over(r.verilator_cps()),
                   r.icarus_cps(), over(r.icarus_cps()), r.icarus_s / std::max(1e-9, r.verilator_s));
  s += " (replay: " + icarus_stimulus_text(opt, r) + ", replayed into the same RTL by Verilator + SystemC and by " +
       r.icarus_version + ": outputs " +
       (r.identical ? std::string("identical") : "DIFFER (" + r.diff + ")") +
       (r.identical && !r.same_as_run ? " to each other, not to the run's (" + r.diff + ")" : std::string()) +
       "; `ernic-sim icarus`)\n";
  return s;
}

std::string icarus_csv_rows(const IcarusResult& r, double floor) {
  if (!r.skipped.empty() || !r.error.empty()) return {};
  std::string s;
  for (const auto& [name, cps] : {std::pair<const char*, double>{"verilator", r.verilator_cps()}, {"icarus", r.icarus_cps()}})
    s += fmt::format("replay,{},{:.1f},{:.0f},{:.6f}\n", name, cps, floor, floor > 0 ? cps / floor : 0.0);
  return s;
}

int icarus_main(int argc, char** argv) {
  CLI::App app{"ernic-sim icarus: the RTL datapath under Icarus Verilog and under Verilator + SystemC, with the same "
               "recorded stimulus (tools/icarus_compare.h)"};
  IcarusOptions opt;
  app.add_option("--bytes", opt.bytes, "the WRITE stream's length in bytes (messages of up to 64 KiB; default 1 MiB)")
      ->check(CLI::Range(uint64_t(64), uint64_t(64) << 20));
  app.add_option("--node", opt.node, "whose datapath is recorded: A (requester: TX data, RX ACKs) or B")
      ->check(CLI::IsMember({"A", "B"}));
  app.add_option("--out", opt.out_dir, "directory for the scenario, stimulus, beats and logs (default icarus/)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  const IcarusResult r = icarus_compare(opt, ec ? std::string(argv[0]) : self);
  if (!r.skipped.empty()) {
    std::printf("icarus: not run: %s\n", r.skipped.c_str());
    return 3;
  }
  if (!r.error.empty()) {
    std::fprintf(stderr, "ernic-sim icarus: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("icarus: %s\n", icarus_stimulus_text(opt, r).c_str());
  const double ce = double(std::max<uint64_t>(1, r.core_edges));
  std::printf("  Verilator + SystemC (Vroce_datapath, rtl-replay): %8.3f s  %9.3f us per core cycle  %10.0f cycles/s  "
              "max RSS %ld KiB\n",
              r.verilator_s, r.verilator_s / ce * 1e6, r.verilator_cps(), r.verilator_rss_kb);
  std::printf("  Icarus (%s, vvp): %8.3f s  %9.3f us per core cycle  %10.0f cycles/s  max RSS %ld KiB\n",
              r.icarus_version.c_str(), r.icarus_s, r.icarus_s / ce * 1e6, r.icarus_cps(), r.icarus_rss_kb);
  std::printf("  Verilator + SystemC is %.1fx Icarus; outputs %s", r.icarus_s / std::max(1e-9, r.verilator_s),
              r.identical ? "identical" : "DIFFER");
  if (r.identical)
    std::printf(" (%s the simulator's own run)", r.same_as_run ? "and equal to" : "but not equal to");
  std::printf("\n");
  if (!r.diff.empty()) std::printf("  first difference: %s\n", r.diff.c_str());
  std::printf("  files: %s/{stim.txt,stim.txt.beats,verilator.beats,icarus.beats}\n", opt.out_dir.c_str());
  return r.identical && r.same_as_run ? 0 : 1;
}

}  // namespace ernic
