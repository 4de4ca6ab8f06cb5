// tools/regress: see regress.h.
#include "tools/regress.h"
#include "tools/spawn.h"

#include "tools/progress.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

extern char** environ;

namespace ernic {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Outcome {
  enum Kind { pass, failure, error } kind = error;
  int exit_code = -1;         // of the run; -1 when killed by a signal or never started
  std::string result;         // "pass", "fail", "no-progress", "time-limit", "bad-scenario", "timeout", "signal N"
  std::string message;        // the first failure, one line
  double sim_us = 0;
  double wall_s = 0;
  uint64_t seed = 0;
  bool have_report = false;
  std::string out_text;       // what the run printed (stdout and stderr)
  std::string out_file, json_file;
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                        std::string::npos)
    return s;
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no
// overlong forms, no surrogates, at most U+10FFFF), 0 if there is none.
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? (unsigned char)s[i + k] : 0u; };
  const unsigned c = b(0);
  const auto cont = [&](size_t k) { return (b(k) & 0xC0u) == 0x80u; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0)) return 0;
    if (c == 0xEF && b(1) == 0xBF && b(2) >= 0xBE) return 0;  // U+FFFE, U+FFFF: not XML characters
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90)) return 0;
    return 4;
  }
  return 0;
}

// Text fit for XML 1.0: the five entities escaped, control characters other
// than tab/newline/CR (not allowed in XML 1.0) and bytes that are not
// well-formed UTF-8 (a scenario's or a run's output may hold any byte; the
// document says UTF-8) replaced by '?'.
std::string xml_escape(const std::string& s, bool attribute) {
  std::string r;
  r.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        r += '?';
      } else {
        r.append(s, i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += attribute ? "&quot;" : "\""; break;
      case '\n': r += attribute ? "&#10;" : "\n"; break;
      case '\t': r += attribute ? "&#9;" : "\t"; break;
      case '\r': r += "&#13;"; break;
      default: r += (c < 0x20 || c == 0x7F) ? '?' : char(c);
    }
  }
  return r;
}

std::string last_line(const std::string& text) {
  std::istringstream s(text);
  std::string line, last;
  while (std::getline(s, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last;
}

std::vector<std::string> run_args(const RegressCase& c, const RegressOptions& opt, const std::string& self,
                                  const std::string& json_file) {
  std::vector<std::string> a{self, "run", c.path, "--quiet", "--json", json_file};
  if (!opt.datapath.empty()) a.insert(a.end(), {"--datapath", opt.datapath});
  const std::string stem = (fs::path(opt.out_dir) / c.name).string();
  if (opt.pcap) a.insert(a.end(), {"--pcap", stem + ".pcap"});
  if (opt.log) a.insert(a.end(), {"--log", stem + ".log"});
  return a;
}

// The command that reproduces one scenario's run by hand.
std::string repro_command(const RegressCase& c, const RegressOptions& opt, const std::string& self) {
  std::string cmd = shell_quote(self) + " run " + shell_quote(c.path);
  if (!opt.datapath.empty()) cmd += " --datapath " + opt.datapath;
  return cmd;
}

// Reads what the run left: its JSON report, else its output.
void judge(Outcome& o, int status, bool timed_out, double timeout_s) {
  o.out_text = read_file(o.out_file);
  std::error_code ec;
  if (fs::exists(o.json_file, ec)) {
    try {
      const json r = json::parse(read_file(o.json_file));
      o.have_report = true;
      o.sim_us = r.value("sim_time_us", 0.0);
      o.result = r.value("result", std::string());
      if (r.contains("reproduce")) o.seed = r["reproduce"].value("seed", uint64_t(0));
      if (r.contains("failures") && !r["failures"].empty()) {
        const auto& f = r["failures"][0];
        const std::string step = f.value("step", std::string());
        o.message = fmt::format("at {:.6f} us (core cycle {}){}{}: {}", double(f.value("time_ps", uint64_t(0))) / 1e6,
                                f.value("core_cycle", uint64_t(0)), step.empty() ? "" : ", ", step,
                                f.value("what", std::string()));
      } else if (r.contains("model_errors") && !r["model_errors"].empty()) {
        const auto& e = r["model_errors"][0];
        o.message = fmt::format("model error {}: {}", e.value("where", std::string()), e.value("what", std::string()));
      }
    } catch (const std::exception& e) {
      o.have_report = false;
      o.message = std::string("unreadable JSON report: ") + e.what();
    }
  }
  if (timed_out) {
    o.kind = Outcome::error;
    o.result = "timeout";
    o.message = fmt::format("killed after {:.0f} s (--timeout)", timeout_s);
    return;
  }
  if (WIFSIGNALED(status)) {
    o.kind = Outcome::error;
    o.result = fmt::format("signal {}", WTERMSIG(status));
    o.message = fmt::format("the run ended on signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return;
  }
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (o.exit_code == 0) {
    o.kind = Outcome::pass;
    o.result = "pass";
    o.message.clear();
    return;
  }
  if (o.exit_code == 1 || o.exit_code == 3) {
    o.kind = Outcome::failure;
    if (o.result.empty()) o.result = o.exit_code == 1 ? "fail" : "no-progress";
  } else {
    o.kind = Outcome::error;
    o.result = o.exit_code == 2 ? "bad-scenario" : fmt::format("exit {}", o.exit_code);
  }
  if (o.message.empty()) o.message = last_line(o.out_text);
  if (o.message.empty()) o.message = fmt::format("exit code {}", o.exit_code);
}

std::string status_word(const Outcome& o) {
  return o.kind == Outcome::pass ? "PASS" : o.kind == Outcome::failure ? "FAIL" : "ERROR";
}

std::string iso_local_time(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : sep) + s;
  return r;
}

bool write_junit(const RegressOptions& opt, const std::string& self, const std::vector<RegressCase>& sel, const std::vector<Outcome>& res,
                 double wall_s, std::chrono::system_clock::time_point started, const std::string& summary) {
  size_t failures = 0, errors = 0;
  for (const auto& o : res) {
    failures += o.kind == Outcome::failure;
    errors += o.kind == Outcome::error;
  }
  char host[256] = "localhost";
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) std::snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = 0;
  const std::string suite = opt.datapath.empty() ? "scenario" : "scenario." + opt.datapath;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << fmt::format("<testsuites name=\"ernic-sim regress\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                   sel.size(), failures, errors, wall_s);
  x << fmt::format(
      "  <testsuite name=\"{}\" package=\"ernic-sim\" id=\"0\" timestamp=\"{}\" hostname=\"{}\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3f}\">\n",
      xml_escape(suite, true), iso_local_time(started), xml_escape(host, true), sel.size(), failures, errors, wall_s);
  x << "    <properties>\n";
  auto prop = [&](const std::string& k, const std::string& v) {
    x << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k, true), xml_escape(v, true));
  };
  prop("dir", opt.dir);
  prop("shard", fmt::format("{}/{}", opt.shard_index, opt.shard_count));
  prop("labels", join(opt.labels, ","));
  prop("datapath", opt.datapath.empty() ? "as in each scenario" : opt.datapath);
  prop("jobs", std::to_string(opt.jobs));
  x << "    </properties>\n";
  for (size_t i = 0; i < sel.size(); ++i) {
    const RegressCase& c = sel[i];
    const Outcome& o = res[i];
    const fs::path n(c.name);
    std::string cls = suite;
    if (n.has_parent_path()) {
      std::string folder = n.parent_path().generic_string();
      std::replace(folder.begin(), folder.end(), '/', '.');
      cls += "." + folder;
    }
    x << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(cls, true),
                     xml_escape(n.filename().string(), true), o.wall_s);
    if (o.kind == Outcome::pass) {
      x << "/>\n";
      continue;
    }
    const char* el = o.kind == Outcome::failure ? "failure" : "error";
    std::string body = fmt::format("{}\nseed {}, simulated time {:.3f} us\nrepro: {}\n\n", c.path,
                                   o.have_report ? std::to_string(o.seed) : std::string("n/a"), o.sim_us,
                                   repro_command(c, opt, self));
    std::string out = o.out_text;
    if (out.size() > 65536) out = out.substr(0, 65536) + "\n[... cut at 64 KiB; the whole output is in " + o.out_file + "]\n";
    body += out;
    x << fmt::format(">\n      <{} type=\"{}\" message=\"{}\">{}</{}>\n    </testcase>\n", el,
                     xml_escape(o.result, true), xml_escape(o.message, true), xml_escape(body, false), el);
  }
  x << "    <system-out>" << xml_escape(summary, false) << "</system-out>\n";
  x << "    <system-err></system-err>\n";
  x << "  </testsuite>\n</testsuites>\n";
  std::ofstream f(opt.junit, std::ios::binary);
  f << x.str();
  f.close();
  return bool(f);
}

}  // namespace

std::vector<std::string> scenario_labels(const std::string& path) {
  const std::string folder = fs::path(path).parent_path().filename().string();
  std::vector<std::string> l;
  if (folder == "handshake") l.push_back("handshake");
  else if (folder == "traffic") l.push_back("traffic");
  else if (folder == "errors") l.push_back("error");
  else if (folder == "perf") l.insert(l.end(), {"perf", "long"});
  else if (folder == "examples") l.push_back("example");
  else if (folder == "topology") l.push_back("topology");
  else if (folder == "peer") l.push_back("fidelity");  // ERNIC against the ideal IBTA peer (issue 18)
  if (folder != "perf") l.push_back("quick");
  return l;
}

std::vector<RegressCase> regress_collect(const std::string& dir, std::string* err) {
  std::vector<RegressCase> v;
  std::error_code ec;
  const fs::path root(dir);
  if (fs::is_regular_file(root, ec)) {
    v.push_back({root.string(), root.stem().string(), scenario_labels(root.string())});
    return v;
  }
  if (!fs::is_directory(root, ec)) {
    *err = dir + ": no such file or directory";
    return v;
  }
  // Directory symlinks are followed, except one that leads back into DIR
  // (its folder is listed under its own name anyway) or to a folder already
  // entered: a link to an ancestor would otherwise repeat every scenario
  // until the path is too long.
  const fs::path croot = fs::canonical(root, ec);
  if (ec) {
    *err = dir + ": " + ec.message();
    return v;
  }
  std::set<fs::path> entered{croot};
  auto inside_root = [&](const fs::path& p) {
    const auto m = std::mismatch(croot.begin(), croot.end(), p.begin(), p.end());
    return m.first == croot.end();
  };
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::follow_directory_symlink, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2)) {
      const fs::path target = fs::canonical(it->path(), ec2);
      if (ec2 || (it->is_symlink(ec2) && inside_root(target)) || !entered.insert(target).second)
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || it->path().extension() != ".yaml") continue;
    fs::path rel = it->path().lexically_relative(root);
    rel.replace_extension();
    v.push_back({it->path().string(), rel.generic_string(), scenario_labels(it->path().string())});
  }
  if (ec) {
    *err = dir + ": " + ec.message();
    return {};
  }
  std::sort(v.begin(), v.end(), [](const RegressCase& a, const RegressCase& b) { return a.name < b.name; });
  return v;
}

std::vector<RegressCase> regress_select(const std::vector<RegressCase>& all, const RegressOptions& opt) {
  std::vector<RegressCase> filtered;
  for (const auto& c : all) {
    bool ok = true;
    for (const auto& l : opt.labels) ok = ok && std::find(c.labels.begin(), c.labels.end(), l) != c.labels.end();
    if (ok) filtered.push_back(c);
  }
  std::vector<RegressCase> sel;
  for (size_t k = 0; k < filtered.size(); ++k)
    if (k % opt.shard_count == opt.shard_index) sel.push_back(filtered[k]);
  return sel;
}

bool parse_shard(const std::string& s, unsigned* index, unsigned* count) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= s.size()) return false;
  const std::string a = s.substr(0, slash), b = s.substr(slash + 1);
  if (a.find_first_not_of("0123456789") != std::string::npos || b.find_first_not_of("0123456789") != std::string::npos ||
      a.size() > 6 || b.size() > 6)
    return false;
  const unsigned i = unsigned(std::stoul(a)), n = unsigned(std::stoul(b));
  if (n == 0 || i >= n) return false;
  *index = i;
  *count = n;
  return true;
}

int regress_main(const RegressOptions& opt, const std::string& self, std::ostream& out, std::ostream& err) {
  std::string why;
  const auto all = regress_collect(opt.dir, &why);
  if (!why.empty()) {
    err << "ernic-sim regress: " << why << "\n";
    return 2;
  }
  const auto sel = regress_select(all, opt);
  // An empty selection is a usage error, listed or run (a typo in --label
  // must not pass as "nothing failed").
  if (sel.empty()) {
    err << "ernic-sim regress: no scenario selected under " << opt.dir
        << (opt.labels.empty() ? "" : " with labels " + join(opt.labels, ","))
        << (opt.shard_count > 1 ? " in shard " + std::to_string(opt.shard_index) + "/" +
                                      std::to_string(opt.shard_count)
                                : std::string())
        << " (" << all.size() << " found)\n";
    return 2;
  }
  if (opt.list) {
    for (const auto& c : sel) out << c.name << "  " << join(c.labels, ",") << "\n";
    return 0;
  }
  std::error_code ec;
  fs::create_directories(opt.out_dir, ec);
  if (ec) {
    err << "ernic-sim regress: --out " << opt.out_dir << ": " << ec.message() << "\n";
    return 2;
  }
  if (!opt.junit.empty()) {
    // A --junit that cannot be written is a usage error now, not after the
    // whole run (whose exit code it would then replace).
    const bool existed = fs::exists(opt.junit, ec);
    bool ok = false;
    int why_not = 0;
    {
      errno = 0;
      std::ofstream probe(opt.junit, std::ios::binary | std::ios::app);
      ok = bool(probe);
      why_not = errno;
    }
    if (!ok) {
      err << "ernic-sim regress: --junit " << opt.junit << ": cannot write: "
          << (fs::is_directory(opt.junit, ec) ? "is a directory" : std::strerror(why_not)) << "\n";
      return 2;
    }
    if (!existed) fs::remove(opt.junit, ec);
  }
  out << fmt::format("regress: {} scenario(s) under {} (shard {}/{} of {}{}), {} job(s), datapath {}\n", sel.size(),
                     opt.dir, opt.shard_index, opt.shard_count, all.size(),
                     opt.labels.empty() ? "" : ", labels " + join(opt.labels, ","), opt.jobs,
                     opt.datapath.empty() ? "as in each file" : opt.datapath);
  out.flush();

  std::vector<Outcome> res(sel.size());
  struct Running {
    size_t index;
    Clock::time_point start;
  };
  std::map<pid_t, Running> running;
  size_t next = 0, printed = 0;
  std::vector<bool> done(sel.size(), false);
  const auto t0 = Clock::now();
  const auto started = std::chrono::system_clock::now();
  const unsigned jobs = std::max(1u, opt.jobs);
  // A progress line on a terminal only (tools/progress.h); never in a log.
  Progress progress("regress", sel.size(), &out == &std::cout && isatty(STDOUT_FILENO));
  auto print_ready = [&] {
    const size_t now_done = size_t(std::count(done.begin(), done.end(), true));
    if (printed < sel.size() && done[printed]) progress.clear();
    while (printed < sel.size() && done[printed]) {
      const Outcome& o = res[printed];
      std::string line = fmt::format("{:<5} {}  sim {:.3f} us  wall {:.2f} s", status_word(o), sel[printed].name,
                                     o.sim_us, o.wall_s);
      if (o.kind != Outcome::pass) line += fmt::format("  ({}: {})", o.result, o.message);
      out << line << "\n";
      out.flush();
      ++printed;
    }
    progress.update(now_done);
  };
  while (printed < sel.size()) {
    while (running.size() < jobs && next < sel.size()) {
      const RegressCase& c = sel[next];
      Outcome& o = res[next];
      const fs::path stem = fs::path(opt.out_dir) / c.name;
      fs::create_directories(stem.parent_path(), ec);
      o.out_file = stem.string() + ".out";
      o.json_file = stem.string() + ".json";
      fs::remove(o.json_file, ec);
      std::string serr;
      const pid_t pid = spawn_child(run_args(c, opt, self, o.json_file), o.out_file, &serr);
      if (pid < 0) {
        o.kind = Outcome::error;
        o.result = "not-started";
        o.message = serr;
        done[next] = true;
      } else {
        running[pid] = {next, Clock::now()};
      }
      ++next;
    }
    print_ready();
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      auto it = running.find(pid);
      if (it == running.end()) continue;
      Outcome& o = res[it->second.index];
      o.wall_s = std::chrono::duration<double>(Clock::now() - it->second.start).count();
      judge(o, status, false, opt.timeout_s);
      done[it->second.index] = true;
      running.erase(it);
      continue;
    }
    // Nothing ended: enforce the timeout, then wait a little.
    for (auto it = running.begin(); it != running.end();) {
      const double age = std::chrono::duration<double>(Clock::now() - it->second.start).count();
      if (age > opt.timeout_s) {
        kill(it->first, SIGKILL);
        int st = 0;
        waitpid(it->first, &st, 0);
        Outcome& o = res[it->second.index];
        o.wall_s = age;
        judge(o, st, true, opt.timeout_s);
        done[it->second.index] = true;
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  progress.clear();

  size_t passed = 0, failed = 0, errored = 0;
  double sum_wall = 0;
  for (const auto& o : res) {
    passed += o.kind == Outcome::pass;
    failed += o.kind == Outcome::failure;
    errored += o.kind == Outcome::error;
    sum_wall += o.wall_s;
  }
  std::string summary =
      fmt::format("regress: {} scenario(s): {} passed, {} failed, {} error(s)\n"
                  "regress: total wall time {:.2f} s with {} job(s) (scenario runs add up to {:.2f} s)\n",
                  sel.size(), passed, failed, errored, wall, jobs, sum_wall);
  for (size_t i = 0; i < sel.size(); ++i) {
    const Outcome& o = res[i];
    if (o.kind == Outcome::pass) continue;
    summary += fmt::format("{} {} (seed {}): {}: {}\n  repro:  {}\n  output: {}{}\n", status_word(o), sel[i].name,
                           o.have_report ? std::to_string(o.seed) : std::string("n/a"), o.result, o.message, repro_command(sel[i], opt, self), o.out_file,
                           o.have_report ? "\n  json:   " + o.json_file : std::string());
  }
  out << summary;
  out.flush();
  if (!opt.junit.empty()) {
    if (!write_junit(opt, self, sel, res, wall, started, summary)) {
      err << "ernic-sim regress: cannot write --junit " << opt.junit << "\n";
      return 2;
    }
    out << "regress: JUnit XML in " << opt.junit << "\n";
  }
  return passed == sel.size() ? 0 : 1;
}

}  // namespace ernic
