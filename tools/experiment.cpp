// tools/experiment: see experiment.h.
#include "tools/experiment.h"
#include "tools/experiment_kit.h"
#include "tools/spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "model/dma/pcie.h"
#include "tools/bench.h"
#include "tools/progress.h"

extern char** environ;

namespace ernic::experiment {
namespace {


#ifndef ERNIC_SOURCE_DIR
#define ERNIC_SOURCE_DIR "."
#endif

// ------------------------------------------------------------------ runs



// Every run of every experiment, --jobs at a time; results in spec order.
void run_all(const std::string& self, const std::vector<std::pair<fs::path, RunSpec>>& specs, unsigned jobs,
             std::vector<RunOut>& outs) {
  outs.assign(specs.size(), RunOut{});
  Progress progress("experiment", specs.size());
  std::map<pid_t, size_t> running;
  size_t next = 0, done = 0;
  jobs = std::max(1u, jobs);
  while (done < specs.size()) {
    while (running.size() < jobs && next < specs.size()) {
      const auto& [dir, s] = specs[next];
      RunOut& o = outs[next];
      std::error_code ec;
      fs::create_directories(dir, ec);
      o.scen = s.path.empty() ? (dir / (s.id + ".yaml")).string() : s.path;
      if (s.path.empty()) std::ofstream(o.scen, std::ios::binary) << s.yaml;
      o.json_file = (dir / (s.id + ".json")).string();
      o.out_file = (dir / (s.id + ".out")).string();
      fs::remove(o.json_file, ec);
      std::vector<std::string> a{self, "run", o.scen, "--quiet", "--json", o.json_file, "--datapath", s.datapath};
      if (s.log) {
        o.log_file = (dir / (s.id + ".jsonl")).string();
        a.insert(a.end(), {"--log", o.log_file});
      }
      std::string serr;
      const pid_t pid = spawn_child(a, o.out_file, &serr);
      if (pid < 0) {
        o.why = serr;
        ++done;
      } else {
        running[pid] = next;
      }
      ++next;
    }
    progress.update(done);
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    RunOut& o = outs[it->second];
    running.erase(it);
    ++done;
    try {
      o.report = json::parse(read_text(o.json_file));
    } catch (const std::exception&) {
      o.report = nullptr;
    }
    const bool exited0 = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    o.ok = exited0 && o.report.is_object() && o.report.value("exit_code", -1) == 0;
    if (!o.ok) o.why = fmt::format("`{} run {}` failed (status {}); see {}", self, o.scen, status, o.out_file);
  }
  progress.clear();
}

std::string default_self() {
  std::error_code ec;
  const std::string s = fs::read_symlink("/proc/self/exe", ec).string();
  return ec ? "ernic-sim" : s;
}

std::string plot_script() {
  if (const char* e = std::getenv("ERNIC_PLOT_SCRIPT")) return e;
  const fs::path src = fs::path(ERNIC_SOURCE_DIR) / "tools" / "plot_experiment.py";
  std::error_code ec;
  if (fs::exists(src, ec)) return src.string();
  return (fs::path(default_self()).parent_path() / ".." / "tools" / "plot_experiment.py").string();
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

int usage(FILE* f, int code) {
  std::fprintf(f,
               "usage: ernic-sim experiment NAME... | all | --list [--jobs N] [--out DIR] [--size quick|full] [--keep]\n"
               "  the seed articles' performance claims as sweeps on the model: DIR/NAME.csv, DIR/NAME.png,\n"
               "  DIR/report.md and DIR/report.html (tools/experiment.h)\n"
               "  --list         print the experiments' names, one a line\n"
               "  --jobs, -j N   child runs at a time (default 2)\n"
               "  --out DIR      output folder (default experiments/)\n"
               "  --size S       quick (a few points each) or full (default)\n"
               "  --keep         keep the generated scenarios, logs and reports under DIR/work/\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  unsigned jobs = 2;
  std::string out = "experiments", size = "full";
  bool list = false, keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ernic-sim experiment: %s needs a value\n", opt);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") return usage(stdout, 0);
    if (a == "--list") list = true;
    else if (a == "--keep") keep = true;
    else if (a == "--jobs" || a == "-j") {
      const std::string v = value("--jobs");
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 256) {
        std::fprintf(stderr, "ernic-sim experiment: --jobs %s: want 1..256\n", v.c_str());
        return 2;
      }
      jobs = unsigned(n);
    } else if (a == "--out") out = value("--out");
    else if (a == "--size") {
      size = value("--size");
      if (size != "quick" && size != "full") {
        std::fprintf(stderr, "ernic-sim experiment: --size %s: want quick or full\n", size.c_str());
        return 2;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "ernic-sim experiment: unknown option %s\n", a.c_str());
      return usage(stderr, 2);
    } else names.push_back(a);
  }
  auto all = registry();
  if (list) {
    for (const auto& e : all) std::printf("%s\n", e->name().c_str());
    return 0;
  }
  if (names.empty()) return usage(stderr, 2);
  std::vector<Experiment*> sel;
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& e : all)
        if (std::find(sel.begin(), sel.end(), e.get()) == sel.end()) sel.push_back(e.get());
      continue;
    }
    Experiment* found = nullptr;
    for (const auto& e : all)
      if (e->name() == n) found = e.get();
    if (!found) {
      std::string known;
      for (const auto& e : all) known += (known.empty() ? "" : ", ") + e->name();
      std::fprintf(stderr, "ernic-sim experiment: no experiment named '%s' (experiments: %s)\n", n.c_str(), known.c_str());
      return 2;
    }
    if (std::find(sel.begin(), sel.end(), found) == sel.end()) sel.push_back(found);
  }
  // In registry order, whatever the command line's order: the report is the same.
  std::vector<Experiment*> ordered;
  for (const auto& e : all)
    if (std::find(sel.begin(), sel.end(), e.get()) != sel.end()) ordered.push_back(e.get());
  const bool full = size == "full";
  const fs::path dir = out, work = dir / "work";
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) {
    std::fprintf(stderr, "ernic-sim experiment: --out %s: %s\n", out.c_str(), ec.message().c_str());
    return 2;
  }
  const std::string self = default_self();
  std::vector<std::vector<RunSpec>> plans;
  std::vector<std::pair<fs::path, RunSpec>> specs;
  for (Experiment* e : ordered) {
    plans.push_back(e->plan(full));
    for (const auto& s : plans.back()) specs.emplace_back(work / e->name(), s);
  }
  std::printf("experiment: %zu experiment(s), %zu run(s), size %s, %u job(s), out %s\n", ordered.size(), specs.size(),
              size.c_str(), jobs, out.c_str());
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<RunOut> outs;
  run_all(self, specs, jobs, outs);
  int status = 0;
  Doc doc;
  doc.h(1, "The seeds' performance claims on the model");
  doc.p(std::string("Generated by `ernic-sim experiment ") + (ordered.size() == all.size() ? "all" : [&] {
          std::string s;
          for (auto* e : ordered) s += (s.empty() ? "" : " ") + e->name();
          return s;
        }()) + " --size " + size + " --out DIR` (tools/experiment.h; DIR: this folder): every figure is simulated time, the same "
        "on every run and machine. Each section quotes the claim from its seed article (/work/shared/seeds, "
        "translated), gives the configuration, the model's result (the CSV beside this file, the plot drawn from "
        "it), a verdict and the mechanism in the model behind it.");
  std::vector<std::string> toc;
  for (auto* e : ordered) toc.push_back(e->name() + ": " + e->title());
  doc.bullets(toc);
  size_t k = 0;
  for (size_t x = 0; x < ordered.size(); ++x) {
    Experiment* e = ordered[x];
    const size_t n = plans[x].size();
    std::vector<RunOut> mine(outs.begin() + long(k), outs.begin() + long(k + n));
    k += n;
    bool ok = true;
    for (const auto& o : mine)
      if (!o.ok) {
        std::fprintf(stderr, "ernic-sim experiment: %s: %s\n", e->name().c_str(), o.why.c_str());
        ok = false;
      }
    Csv csv;
    std::string why;
    if (ok && !e->analyse(plans[x], mine, &csv, &why)) {
      std::fprintf(stderr, "ernic-sim experiment: %s: %s\n", e->name().c_str(), why.c_str());
      ok = false;
    }
    doc.h(2, e->name() + ": " + e->title(), e->name());
    if (!ok) {
      status = 1;
      doc.p("Not produced: a run failed (see the command's error output).");
      continue;
    }
    const fs::path csv_path = dir / (e->name() + ".csv"), png = dir / (e->name() + ".png");
    {
      std::ofstream f(csv_path, std::ios::binary);
      f << csv.text();
      f.close();
      if (!f) {
        std::fprintf(stderr, "ernic-sim experiment: cannot write %s\n", csv_path.string().c_str());
        status = 1;
        continue;
      }
    }
    // Debian's python3 (python3-matplotlib), as the test suite's ERNIC_PYTHON; ERNIC_PYTHON overrides.
    const char* py_env = std::getenv("ERNIC_PYTHON");
    const std::string py = py_env ? py_env : fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
    const std::string cmd = shell_quote(py) + " " + shell_quote(plot_script()) + " " + shell_quote(e->name()) + " " +
                            shell_quote(csv_path.string()) + " " + shell_quote(png.string());
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "ernic-sim experiment: %s: `%s` failed (it needs Debian's python3-matplotlib)\n",
                   e->name().c_str(), cmd.c_str());
      status = 1;
    }
    doc.img(e->name() + ".png", e->title());
    e->report(doc, full);
    doc.p("Data: `" + e->name() + ".csv`.");
    std::printf("experiment: %s: %zu run(s), %s, %s\n", e->name().c_str(), n, csv_path.string().c_str(),
                png.string().c_str());
  }
  const std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ernic-sim experiments</title>\n"
                           "<style>body{font-family:sans-serif;max-width:60em;margin:auto;padding:1em}"
                           "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;text-align:right}"
                           "blockquote{border-left:3px solid #999;margin-left:0;padding-left:1em}"
                           "code,pre{background:#f4f4f4}</style></head><body>\n" +
                           doc.html + "</body></html>\n";
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"report.md", doc.md}, {"report.html", html}}) {
    std::ofstream f(dir / name, std::ios::binary);
    f << text;
    f.close();
    if (!f) {
      std::fprintf(stderr, "ernic-sim experiment: cannot write %s\n", (dir / name).string().c_str());
      status = 1;
    }
  }
  if (!keep && status == 0) fs::remove_all(work, ec);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("experiment: report %s, %s (%.1f s of wall time)\n", (dir / "report.md").string().c_str(),
              (dir / "report.html").string().c_str(), wall);
  if (keep || status) std::printf("experiment: runs in %s\n", work.string().c_str());
  return status;
}

}  // namespace ernic::experiment
