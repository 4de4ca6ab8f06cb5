// tools/split_run: `ernic-sim run S.yaml --split` (see split_run.h): the
// node processes started, watched and reaped, their parts merged.
#include "tools/split_run.h"

#include "model/scenario/split_plan.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "model/scenario/scenario.h"
#include "model/scenario/split_plan.h"
#include "tools/same_file.h"
#include "tools/spawn.h"
#include "tools/split_merge.h"

namespace ernic {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Child {
  std::string node;   // its name in the scenario
  std::string stem;   // DIR/node<i>: its parts are <stem>.pcap, .log, .json, .out
  bool listens = false;  // node 0's (point to point) or the switch's (a star: the nodes connect to it)
  bool hub = false;      // the switch's process: no node, no taps
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  bool lost = false;  // waitpid could not report its status
  enum class Killed { no, grace, timeout, signal } killed = Killed::no;
};

// A node's exit as a single-process run's code (0..3); -1: a signal, a
// lost status or another exit status.
int node_code(const Child& c) {
  if (c.lost || !WIFEXITED(c.status)) return -1;
  const int e = WEXITSTATUS(c.status);
  return e >= 0 && e <= 3 ? e : -1;
}

// Worse codes rank higher: 2, then 1 (and -1, counted as 1), then 3, then 0.
int rank(int code) {
  switch (code) {
    case 2: return 3;
    case 1: case -1: return 2;
    case 3: return 1;
    default: return 0;
  }
}

std::string describe(const Child& c) {
  if (c.lost) return "its exit status was lost (waitpid failed)";
  if (WIFSIGNALED(c.status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(c.status), strsignal(WTERMSIG(c.status)));
  if (!WIFEXITED(c.status)) return fmt::format("wait status {}", c.status);
  static const char* const kMeaning[] = {"passed", "an expectation failed", "bad usage or scenario",
                                         "no progress, or the simulated time limit"};
  const int e = WEXITSTATUS(c.status);
  return e <= 3 ? fmt::format("exit status {} ({})", e, kMeaning[e]) : fmt::format("exit status {}", e);
}

// The last `lines` lines of a file (at most 4 KiB), each indented.
std::string tail(const std::string& path, size_t lines = 20) {
  std::ifstream f(path, std::ios::binary);
  std::deque<std::string> last;
  size_t bytes = 0;
  for (std::string l; std::getline(f, l);) {
    last.push_back(l);
    bytes += l.size() + 1;
    while (last.size() > lines || (bytes > 4096 && last.size() > 1)) {
      bytes -= last.front().size() + 1;
      last.pop_front();
    }
  }
  if (last.empty()) return "  (no output)\n";
  std::string s;
  for (const auto& l : last) s += "  | " + l.substr(0, 4096) + "\n";
  return s;
}

// model/system's rules, restated (that library needs SystemC): files go
// beside an output only when it is a plain file or does not exist yet
// (output_has_side_files); taps are <stem>.<node>-tx.pcap (pcap_tap_path).
bool has_side_files(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
}
std::string strip(const std::string& p, const std::string& ext) {
  return p.size() > ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0 ? p.substr(0, p.size() - ext.size())
                                                                                         : p;
}
std::string tap_path(const std::string& pcap, const std::string& node, const char* dir) {
  return fmt::format("{}.{}-{}.pcap", strip(pcap, ".pcap"), node, dir);
}

void move_file(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return;
  if (errno != EXDEV) throw std::runtime_error(fmt::format("cannot move '{}' to '{}': {}", from, to, std::strerror(errno)));
  std::error_code ec;  // another file system: copy, then remove
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot copy '{}' to '{}': {}", from, to, ec.message()));
  fs::remove(from, ec);
}

// A private directory whose link.sock (and `suffix` after it: a star over
// shm's ".<node>") fits a unix socket address.
std::string make_dir(std::string* why, size_t suffix) {
  std::error_code ec;
  std::string base = fs::temp_directory_path(ec).string();
  if (ec || base.empty()) base = "/tmp";
  base = fs::absolute(base, ec).string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string tmpl = base + "/ernic-split-XXXXXX";
  const size_t room = sizeof(sockaddr_un{}.sun_path);
  if (tmpl.size() + std::strlen("/link.sock") + suffix >= room) tmpl = "/tmp/ernic-split-XXXXXX";
  if (tmpl.size() + std::strlen("/link.sock") + suffix >= room) {
    *why = fmt::format("a node's name is too long for a shared-memory link's socket path ({} characters beyond "
                       "{}/link.sock; at most {} in all)", suffix, tmpl, room - 1);
    return "";
  }
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    *why = fmt::format("cannot create a directory {}: {}", tmpl, std::strerror(errno));
    return "";
  }
  return buf.data();
}

// The user's outputs can be written (checked before any run, as `run` does).
bool outputs_ok(const SplitRunArgs& a, const std::vector<std::string>& nodes, std::ostream& err) {
  std::vector<std::pair<std::string, const char*>> outs;
  if (!a.pcap.empty()) {
    outs.push_back({a.pcap, "--pcap"});
    if (has_side_files(a.pcap))
      for (const auto& n : nodes)
        for (const char* d : {"tx", "rx"}) outs.push_back({tap_path(a.pcap, n, d), "--pcap (tap)"});
  }
  if (!a.log.empty()) outs.push_back({a.log, "--log"});
  if (!a.json.empty()) outs.push_back({a.json, "--json"});
  // Never the scenario itself, nor one file for two outputs (as `run`).
  for (const auto& [p, o] : outs)
    if (same_file(p, a.scenario)) {
      err << fmt::format("ernic-sim: {} {} is the scenario file itself: refusing to overwrite the input\n", o, p);
      return false;
    }
  for (size_t i = 0; i < outs.size(); ++i)
    for (size_t j = i + 1; j < outs.size(); ++j)
      if (same_file(outs[i].first, outs[j].first)) {
        err << fmt::format("ernic-sim: {} and {} would both write {}\n", outs[i].second, outs[j].second,
                           outs[i].first);
        return false;
      }
  for (const auto& [p, o] : outs) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      err << fmt::format("ernic-sim: {} {}: is a directory\n", o, p);
      return false;
    }
    const bool existed = fs::exists(p, ec);
    std::FILE* f = std::fopen(p.c_str(), "ab");
    if (!f) {
      err << fmt::format("ernic-sim: {} {}: cannot write: {}\n", o, p, std::strerror(errno));
      return false;
    }
    std::fclose(f);
    if (!existed) fs::remove(p, ec);
  }
  return true;
}

// A free TCP port on the loopback (bound and released: the node process
// binds it again at once; "" when none).
std::string loopback_endpoint() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  std::string ep;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0)
    ep = fmt::format("tcp:127.0.0.1:{}", ntohs(sa.sin_port));
  ::close(fd);
  return ep;
}

std::vector<std::string> node_argv(const SplitRunArgs& a, const Child& c, const std::string& ep) {
  std::vector<std::string> v = {a.self, "node", a.scenario, "--node", c.node, c.listens ? "--listen" : "--connect",
                                ep, "--quiet"};
  if (a.chaos_us) v.insert(v.end(), {"--chaos-us", std::to_string(a.chaos_us)});
  if (!a.plant_bug.empty()) v.insert(v.end(), {"--plant-bug", a.plant_bug});
  if (!a.pcap.empty()) v.insert(v.end(), {"--pcap", c.stem + ".pcap"});
  if (!a.log.empty()) v.insert(v.end(), {"--log", c.stem + ".log"});
  if (!a.json.empty()) v.insert(v.end(), {"--json", c.stem + ".json"});
  if (!a.datapath.empty()) v.insert(v.end(), {"--datapath", a.datapath});
  if (a.no_idle_skip) v.push_back("--no-idle-skip");
  if (!a.handshake_random.empty()) v.insert(v.end(), {"--handshake-random", a.handshake_random});
  return v;
}

void kill_running(std::vector<Child>& kids, Child::Killed why) {
  for (Child& c : kids)
    if (c.running) {
      ::kill(c.pid, SIGKILL);
      if (::waitpid(c.pid, &c.status, 0) != c.pid) c.lost = true;
      c.running = false;
      c.killed = why;
    }
}

// Polls the children until none runs (see split_run.h, Waiting). Returns
// the node that failed first (ended with a status other than 0), or -1.
// SIGTERM, SIGINT, SIGHUP to the run (a CI's kill, ^C): the node
// processes are killed and the directory removed, then the run ends with
// the signal's code.
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }

int wait_all(std::vector<Child>& kids, const SplitRunArgs& a, Clock::time_point t0) {
  const auto secs = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  int failed = -1;
  Clock::time_point kill_at{};
  for (;;) {
    bool running = false;
    for (size_t i = 0; i < kids.size(); ++i) {
      Child& c = kids[i];
      if (!c.running) continue;
      int st = 0;
      const pid_t r = ::waitpid(c.pid, &st, WNOHANG);
      if (r == 0) {
        running = true;
        continue;
      }
      c.running = false;
      c.status = st;
      c.lost = r != c.pid;
      if (failed < 0 && node_code(c) != 0) {
        failed = int(i);
        kill_at = Clock::now() + secs(a.grace_s);
      }
    }
    if (!running) return failed;
    if (g_signal) {
      kill_running(kids, Child::Killed::signal);
      return failed;
    }
    const auto now = Clock::now();
    if (failed >= 0 && now >= kill_at) {
      kill_running(kids, Child::Killed::grace);
      return failed;
    }
    if (now - t0 >= secs(a.timeout_s)) {
      kill_running(kids, Child::Killed::timeout);
      return failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Each node that did not pass, on `err`; returns the worst code (see rank).
int report_nodes(const std::vector<Child>& kids, int failed, const SplitRunArgs& a, std::ostream& err) {
  int worst = 0;
  for (const Child& c : kids) {
    int code = 0;
    if (c.killed == Child::Killed::grace) {  // does not count: the failure it followed does
      err << fmt::format("ernic-sim: split run: node {}: still running {:g} s after node {} ended: killed\n", c.node,
                         a.grace_s, failed >= 0 ? kids[size_t(failed)].node : "?");
      continue;
    }
    if (c.killed == Child::Killed::timeout) {
      err << fmt::format("ernic-sim: split run: node {}: still running after {:g} s of wall time: killed; its output:\n{}",
                         c.node, a.timeout_s, tail(c.stem + ".out"));
      code = 3;
    } else if ((code = node_code(c)) != 0) {
      err << fmt::format("ernic-sim: split run: node {}: {}; its output:\n{}", c.node, describe(c), tail(c.stem + ".out"));
    }
    if (rank(code) > rank(worst)) worst = code;
  }
  return worst;
}

// The parts into the user's outputs (split_run.h, Merging); throws.
void merge_outputs(const SplitRunArgs& a, const std::vector<Child>& kids) {
  std::vector<std::string> pcaps, logs, jsons;
  for (const Child& c : kids) {
    pcaps.push_back(c.stem + ".pcap");
    logs.push_back(c.stem + ".log");
    jsons.push_back(c.stem + ".json");
  }
  if (!a.pcap.empty()) {
    const bool taps = has_side_files(a.pcap);
    merge_wire_pcaps(pcaps, a.pcap);
    if (taps)
      for (const Child& c : kids)
        if (!c.hub)
          for (const char* d : {"tx", "rx"}) move_file(tap_path(c.stem + ".pcap", c.node, d), tap_path(a.pcap, c.node, d));
  }
  if (!a.log.empty()) merge_logs(logs, a.log);
  if (!a.json.empty()) {
    if (a.merge_json) {
      a.merge_json(jsons, a.json);
    } else {
      for (size_t i = 0; i < kids.size(); ++i) move_file(jsons[i], fmt::format("{}.{}.json", strip(a.json, ".json"), kids[i].node));
    }
  }
}

// wait_all with SIGTERM, SIGINT and SIGHUP caught (g_signal says which came).
int wait_all_signalled(std::vector<Child>& kids, const SplitRunArgs& a, Clock::time_point t0) {
  struct sigaction sa {}, old_term {}, old_int {}, old_hup {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGHUP, &sa, &old_hup);
  const int failed = wait_all(kids, a, t0);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  return failed;
}

// The outputs merged when every node ended its run by itself (0, 1 or 3);
// returns the run's worst code, a failed merge counted.
int merge_if_finished(const std::vector<Child>& kids, const SplitRunArgs& a, int worst, std::ostream& err) {
  bool finished = true;
  for (const Child& c : kids) {
    const int k = node_code(c);
    finished = finished && c.killed == Child::Killed::no && (k == 0 || k == 1 || k == 3);
  }
  if (finished) {
    try {
      merge_outputs(a, kids);
    } catch (const std::exception& e) {
      err << "ernic-sim: split run: " << e.what() << "\n";
      if (rank(1) > rank(worst)) worst = 1;
    }
  } else if (!a.pcap.empty() || !a.log.empty() || !a.json.empty()) {
    err << "ernic-sim: split run: the outputs were not merged (a node did not finish its run)\n";
  }
  return worst;
}

}  // namespace

int split_run(const SplitRunArgs& a) {
  std::ostream& out = a.out ? *a.out : std::cout;
  std::ostream& err = a.err ? *a.err : std::cerr;
  Scenario sc;
  try {
    sc = load_scenario(a.scenario);
  } catch (const std::exception& e) {
    err << "ernic-sim: " << e.what() << "\n";
    return 2;
  }
  if (const std::string why = split_refusal(sc); !why.empty()) {  // model/scenario/split_plan.h
    err << "ernic-sim: split run: " << why << "\n";
    return 2;
  }
  std::vector<std::string> names;
  for (const auto& n : sc.nodes) names.push_back(n.name);
  if (!outputs_ok(a, names, err)) return 2;
  const bool star = sc.topology_switch.has_value();  // one more process: the switch's (split_star.cpp)
  std::string why;
  size_t suffix = 0;  // a star over shm: DIR/link.sock.<node>
  if (star && a.transport == "shm")
    for (const auto& n : names) suffix = std::max(suffix, n.size() + 1);
  const std::string dir = make_dir(&why, suffix);
  if (dir.empty()) {
    err << "ernic-sim: split run: " << why << "\n";
    return 2;
  }
  const std::string ep =
      a.transport == "tcp" ? loopback_endpoint() : (a.transport == "shm" ? "shm:" : "unix:") + dir + "/link.sock";
  if (ep.empty()) {
    err << "ernic-sim: split run: no free TCP port on 127.0.0.1\n";
    return 2;
  }
  const auto t0 = Clock::now();
  std::vector<Child> kids;
  const size_t procs = names.size() + (star ? 1 : 0);
  for (size_t i = 0; i < procs; ++i) {
    Child c;
    c.hub = i == names.size();
    c.node = c.hub ? kSplitSwitch : names[i];
    c.listens = star ? c.hub : i == 0;
    c.stem = fmt::format("{}/node{}", dir, i);
    c.pid = spawn_child(node_argv(a, c, ep), c.stem + ".out", &why);
    if (c.pid < 0) {
      kill_running(kids, Child::Killed::grace);
      err << fmt::format("ernic-sim: split run: node {}: {}\nernic-sim: split run: the node processes' files are kept in {}\n",
                         c.node, why, dir);
      return 2;
    }
    c.running = true;
    kids.push_back(std::move(c));
  }
  const int failed = wait_all_signalled(kids, a, t0);
  if (const int sig = g_signal) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    err << fmt::format("ernic-sim: split run: stopped by signal {} ({}): the node processes killed\n", sig,
                       strsignal(sig));
    return 128 + sig;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const int worst = merge_if_finished(kids, a, report_nodes(kids, failed, a, err), err);
  const int code = worst < 0 ? 1 : worst;
  if (code == 0) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  } else {
    err << fmt::format("ernic-sim: split run: the node processes' files are kept in {}\n", dir);
  }
  if (!a.quiet) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    out << fmt::format("split run: nodes {} in {} processes: exit {}, {:.2f} s of wall time\n", list, kids.size(), code, wall);
  }
  return code;
}

}  // namespace ernic
