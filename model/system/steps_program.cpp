// model/system: the program step (a node's host is a program attached over
// the bridge, model/bridge): start it or wait for it, serve it in
// lock-step until it ends the session, judge its exit.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "model/host/driver_env.h"
#include "model/system/system.h"

extern char** environ;

namespace ernic {
namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string self_dir() {
  char b[4096];
  const ssize_t n = ::readlink("/proc/self/exe", b, sizeof b - 1);
  return n > 0 ? dir_of(std::string(b, size_t(n))) : ".";
}

// {bin}: the folder of ernic-sim; {scenario}: the scenario file's folder.
std::string expand(std::string s, const std::string& scenario_file) {
  const std::pair<const char*, std::string> subs[] = {{"{bin}", self_dir()}, {"{scenario}", dir_of(scenario_file)}};
  for (const auto& [key, value] : subs)
    for (size_t at = 0; (at = s.find(key, at)) != std::string::npos; at += value.size())
      s.replace(at, std::strlen(key), value);
  return s;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

// The child's status within `wait` of wall time (SIGKILL after that).
int reap(pid_t pid, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return 0;
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string read_tail(const std::string& path, size_t max) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  if (s.size() > max) s = "[...]\n" + s.substr(s.size() - max);
  return s;
}

// The simulator's CPU mask, narrowed to the CPU it runs on while program
// steps last (ProgramStep::same_cpu); the first pin saves the mask, the
// last one out restores it (steps in parallel branches overlap).
struct CpuPin {
  static inline int holders = 0;
  static inline cpu_set_t saved;
  static inline bool pinned = false;
  bool held = false;
  void to_current_cpu() {
    if (held) return;
    held = true;
    if (holders++ > 0) return;
    const int cpu = ::sched_getcpu();
    if (cpu < 0 || ::sched_getaffinity(0, sizeof saved, &saved) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned = ::sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~CpuPin() {
    if (!held || --holders > 0) return;
    if (pinned) ::sched_setaffinity(0, sizeof saved, &saved);
    pinned = false;
  }
};

// What the program learns from its environment (model/bridge/README.md):
// where the simulator is, what the node is, its connection (connect steps
// with a program end), the step's own env entries last.
std::vector<std::pair<std::string, std::string>> program_environment(
    const Node& n, const Scenario& sc, const std::string& address,
    const std::vector<std::pair<std::string, std::string>>& conn_env, const ProgramStep& s) {
  std::vector<std::pair<std::string, std::string>> learn = {
      {"ERNIC_BRIDGE", address},
      {"ERNIC_BRIDGE_MEM_MIB", std::to_string(n.cfg.memory_mib)}};
  for (auto& kv : host::driver_env(n.driver_cfg)) learn.push_back(std::move(kv));  // the driver's configuration
  // The client library of this build, for programs that load it (Python's ctypes).
  if (const std::string lib = self_dir() + "/model/libernic_bridge.so"; ::access(lib.c_str(), R_OK) == 0)
    learn.emplace_back("ERNIC_BRIDGE_LIB", lib);
  for (const auto& kv : conn_env) learn.push_back(kv);
  // The step's own entries may add, not contradict: what the simulator says
  // about the node and its connections is what the NIC was built with.
  for (const auto& kv : s.env)
    for (const auto& [k, v] : learn)
      if (k == kv.first)
        throw std::invalid_argument("env " + k + "=" + kv.second + " would contradict the simulator's " + k + "=" + v +
                                    " (set from the node and its connections: change those instead)");
  for (const auto& kv : s.env) learn.push_back(kv);
  return learn;
}

// Starts argv with the inherited environment plus `learn` (a later entry
// replaces an earlier one of the same name: getenv takes the first), its
// stdout and stderr into a fresh file (*out_path), stdin from /dev/null.
// Returns posix_spawn's error (0: started, *pid set).
int spawn_program(std::vector<std::string>& argv_s, const std::vector<std::pair<std::string, std::string>>& learn,
                  pid_t* pid, std::string* out_path) {
  char tmpl[] = "/tmp/ernic-program-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return errno;
  *out_path = tmpl;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const auto& [k, v] : learn) {
    env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(k + "=", 0) == 0; }),
              env.end());
    env.push_back(k + "=" + v);
  }
  std::vector<char*> argv, envp;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  const int rc = ::posix_spawnp(pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(fd);
  if (rc != 0) ::unlink(out_path->c_str());
  return rc;
}

// Waits for the program to connect, watching for one that ends first (pid
// > 0: a program the step started). Null with *error set on failure.
std::unique_ptr<bridge::Channel> accept_program(bridge::Listener& listener, pid_t pid, std::chrono::milliseconds timeout,
                                                bool started, int* status, bool* reaped, std::string* error) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    try {
      return listener.accept(pid > 0 ? std::chrono::milliseconds(100) : timeout, started ? "the program" : "");
    } catch (const bridge::ChannelError& e) {
      if (pid > 0 && ::waitpid(pid, status, WNOHANG) == pid) {
        *reaped = true;
        *error = "ended (" + describe_status(*status) + ") without connecting to the simulator";
        return nullptr;
      }
      if (pid <= 0 || std::chrono::steady_clock::now() >= until) {
        *error = started ? "did not connect to the simulator within " +
                               std::to_string(timeout.count() / 1000) + " s of wall time"
                         : e.what();
        return nullptr;
      }
    }
  }
}

// Each line of the program's output on stderr, marked with its node.
void echo_output(const std::string& node, const std::string& out) {
  for (size_t at = 0; at < out.size();) {
    const size_t nl = out.find('\n', at);
    const size_t end = nl == std::string::npos ? out.size() : nl;
    std::cerr << "[" << node << " program] " << out.substr(at, end - at) << "\n";
    at = end + 1;
  }
}

}  // namespace

void System::handle(const ProgramStep& s, const SourceLoc& loc, Group*) {
  CpuPin pin;
  Node* n = node(s.node);
  ProgramRun& run = programs[s.node];
  if (run.active)
    return fail(loc, "node " + s.node + " already has a program attached (another program step of a parallel "
                     "branch); one program a node at a time");
  run = ProgramRun{};
  run.active = true;
  struct Inactive {
    ProgramRun& r;
    ~Inactive() { r.active = false; }
  } inactive{run};
  const auto timeout = std::chrono::milliseconds(s.timeout_s * 1000);
  // Where to listen: `serve` (the step's, or the command line's for this
  // node), else a socket of this run for the program it starts.
  std::string serve_at = s.serve;
  if (auto o = serve_overrides.find(s.node); o != serve_overrides.end()) serve_at = o->second;
  const std::string where =
      serve_at.empty() ? "/tmp/ernic-bridge-" + std::to_string(::getpid()) + "-" + s.node + ".sock" : serve_at;
  std::unique_ptr<bridge::Listener> listener;
  try {
    listener = std::make_unique<bridge::Listener>(bridge::Endpoint::parse(where));
  } catch (const std::exception& e) {
    return fail(loc, std::string("program on node ") + s.node + ": " + e.what());
  }
  std::vector<std::pair<std::string, std::string>> learn;
  try {
    learn = program_environment(*n, scenario, listener->endpoint().str(), program_env[s.node], s);
  } catch (const std::invalid_argument& e) {
    return fail(loc, "program on node " + s.node + ": " + e.what());
  }
  pid_t pid = -1;
  std::string name = "the program";
  if (!serve_at.empty()) {
    std::cerr << "ernic-sim: node " << s.node << " waits for its program on " << listener->endpoint().str()
              << "; start it with this environment:\n";
    for (const auto& [k, v] : learn) std::cerr << "  export " << k << "='" << v << "'\n";
  } else {
    for (const std::string& a : s.argv) run.argv.push_back(expand(a, loc.file));
    // A relative path names a file beside the scenario; a bare name is looked up in PATH.
    if (run.argv[0].find('/') != std::string::npos && run.argv[0][0] != '/')
      run.argv[0] = dir_of(loc.file) + "/" + run.argv[0];
    name = "program '" + run.argv[0] + "'";
    if (s.same_cpu) pin.to_current_cpu();  // the program inherits the mask
    std::vector<std::string> argv = run.argv;
    if (const int rc = spawn_program(argv, learn, &pid, &run.out_path); rc != 0)
      return fail(loc, name + " of node " + s.node + " could not be started: " + std::strerror(rc));
    run.pid = pid;
  }
  int status = 0;
  bool reaped = false;
  std::string error;
  std::unique_ptr<bridge::Channel> ch =
      accept_program(*listener, pid, timeout, serve_at.empty(), &status, &reaped, &error);
  listener.reset();  // one program a step: a later connect is refused, not left in a backlog
  if (ch) {
    ++bounded_;  // the program decides how long it waits (ernic_delay_ns, ernic_wait_irq): not the watchdog
    try {
      n->pcie_dev->serve(*ch, timeout);
    } catch (const std::exception& e) {
      error = e.what();
    }
    --bounded_;
    ch->close();
  }
  if (pid > 0) {
    if (!reaped) status = reap(pid, error.empty() ? timeout : std::chrono::milliseconds(2000));
    run.pid = -1;
    run.status = describe_status(status);
    run.output = read_tail(run.out_path, 16384);
    ::unlink(run.out_path.c_str());
    run.out_path.clear();
    echo_output(s.node, run.output);
    if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      error = "ended the session but then " + run.status;
    else if (!error.empty() && error.find(run.status) == std::string::npos)
      error += " (" + run.status + ")";
  }
  run.stats = n->pcie_dev->stats();
  // A connection with this program as an end must be up when it is done:
  // with cm: true the built-in end listens and only the program's connect
  // brings it to RTS (out of band it is RTS from the connect step on).
  if (error.empty())
    for (const auto& [cname, k] : conns_) {
      const host::Connection* drv_end = k.client == s.node && !k.c ? k.s : k.server == s.node && !k.s ? k.c : nullptr;
      if (drv_end && drv_end->state != host::VerbsState::Rts)
        error = fmt::format("ended, but connection '{}' is not up: {}'s end is in {} (with cm: true the program must "
                            "connect to it)", cname, k.client == s.node ? k.server : k.client,
                            host::verbs_state_name(drv_end->state));
    }
  run.ok = error.empty();
  if (!error.empty()) fail(loc, name + " of node " + s.node + ": " + error);
}

void System::end_programs() {
  for (auto& [node, run] : programs) {
    if (!run.active) continue;
    run.active = false;
    if (run.pid > 0) {
      ::kill(run.pid, SIGTERM);
      run.status = describe_status(reap(run.pid, std::chrono::milliseconds(2000))) + " (stopped when the run ended)";
      run.pid = -1;
    } else {
      run.status = "attached when the run ended";
    }
    if (!run.out_path.empty()) {
      run.output = read_tail(run.out_path, 16384);
      ::unlink(run.out_path.c_str());
    }
  }
}

}  // namespace ernic
