// tb/bridge: the harness of the progress-protocol tests
// (test_net_link_progress.cpp): processes with a NetLink in control mode
// (a star's switch or a node's), their askers and readers, peers written
// by hand, and running them all at once, each forked.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tb/bridge/net_link_harness.h"

namespace net_link_progress {

using namespace net_link_test;

inline const milliseconds kTo{5000};
inline const uint64_t kPre = LineRate(100.0).preamble_ps();  // every link's preamble + SFD
inline constexpr uint64_t kAskAt = 5 * kUs;                  // when the tests' requests are asked
inline constexpr uint64_t kRunTo = 20 * kUs;                 // every SystemC process runs to here
inline constexpr uint64_t kFar = 1 * kMs;                    // a hand-written peer's promise
inline constexpr uint64_t kRelayBase = uint64_t(1) << 63;    // net_link.h: relayed requests' ids from here
inline constexpr uint8_t kHere = NetControl::kNodeHere;

// One request of a process's asker (a SystemC thread), at at_ps.
struct Ask {
  uint64_t at_ps;
  size_t peer;
  uint8_t node;
  bool memory = false;  // read_remote (addr, len) instead of read_progress
  uint64_t addr = 0, len = 0;
};

// A process with a NetLink in control mode: a star's switch (hub: listens
// on each path of `listen`, peer i is node i's process) or a node's process
// (connects to `connect`). Its readers answer as System's do
// (model/system/split.cpp local_reader / local_progress): progress for
// kNodeHere or its own node (not the switch's), memory of its own node
// only; anything else is refused with "node index N is not this process's".
struct Proc {
  std::vector<std::string> listen;  // the switch's process: one socket per node
  std::vector<std::string> names;   // how it names the peers it listens for ("node i's process")
  std::string connect;              // a node's process
  std::string connect_name = "the switch";
  bool hub = false;
  int node = -1;
  uint64_t progress = 0;  // ps: what its watchdog reports
  std::optional<bool> underway = false;  // its answer to every StepQuery (NetStepUnderway)
  uint64_t busy_at = 0;  // ps: a thread of its own runs three delta cycles at this instant (0: none)
  std::vector<Ask> asks;
  bool watch_ends = false;  // log each RunEnd at its instant ("end_at"), passing over each (as System does)
};

inline std::string refusal(uint8_t node) { return "node index " + std::to_string(int(node)) + " is not this process's"; }
inline uint8_t mem_byte(int node, uint64_t addr) { return uint8_t(addr * 7 + uint64_t(node) * 31); }

struct Asker : sc_core::sc_module {
  SC_HAS_PROCESS(Asker);
  NetLink* link = nullptr;
  std::vector<Ask> asks;
  std::ostringstream* log = nullptr;
  explicit Asker(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    for (size_t k = 0; k < asks.size(); ++k) {
      const Ask& a = asks[k];
      const uint64_t now = ClockDomain::now_ps();
      if (a.at_ps > now) wait(ps(a.at_ps - now));
      try {
        if (a.memory) {
          const std::vector<uint8_t> b = link->read_remote(a.peer, a.node, a.addr, a.len);
          *log << "ask " << k << " bytes";
          for (uint8_t x : b) *log << " " << int(x);
          *log << "\n";
        } else {
          const uint64_t v = link->read_progress(a.peer, a.node);
          *log << "ask " << k << " -> " << v << " at " << ClockDomain::now_ps() << "\n";
        }
      } catch (const NetPeerError& e) {
        *log << "ask " << k << " error: " << e.what() << "\n";
      }
    }
  }
};

// Runs three delta cycles at `at` (something left to run at that instant),
// then says it is done.
struct Busy : sc_core::sc_module {
  SC_HAS_PROCESS(Busy);
  uint64_t at = 0;
  bool done = false;
  explicit Busy(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    wait(ps(at));
    for (int k = 0; k < 3; ++k) wait(sc_core::SC_ZERO_TIME);
    done = true;
  }
};

// Logs "end_at <ps> <code> <how> <why>" at each peer end event, then
// passes over that RunEnd (System::watch_peer_end's loop).
struct EndWatcher : sc_core::sc_module {
  SC_HAS_PROCESS(EndWatcher);
  NetLink* link = nullptr;
  std::ostringstream* log = nullptr;
  explicit EndWatcher(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    for (;;) {
      wait(link->peer_end_event());
      *log << "end_at " << ClockDomain::now_ps() << " " << link->peer_run_end() << " "
           << int(link->peer_run_end_how()) << " " << link->peer_run_end_why() << "\n";
      link->pass_peer_end();
    }
  }
};

inline int run_proc(const Proc& o, const std::string& f) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  std::ostringstream log;
  std::vector<std::unique_ptr<NetPeer>> peers;
  for (size_t i = 0; i < o.listen.size(); ++i) {
    const std::string name = i < o.names.size() ? o.names[i] : "node " + std::to_string(i) + "'s process";
    Listener l(Endpoint::parse("unix:" + o.listen[i]));
    peers.push_back(NetPeer::as_listener(l.accept(kTo, name), 0, name, kTo));
  }
  if (!o.connect.empty())
    peers.push_back(
        NetPeer::as_connecter(Channel::connect(Endpoint::parse("unix:" + o.connect), kTo), 0, o.connect_name, kTo));
  NetLink link("net", kTo);
  for (auto& p : peers) link.add_peer(std::move(p), kDelay, kPre, nullptr);
  Busy busy("busy");
  busy.at = o.busy_at;
  link.enable_control(
      [&](uint8_t node, uint64_t addr, uint64_t len) {
        log << "read node=" << int(node) << "\n";
        if (o.hub || int(node) != o.node) throw std::runtime_error(refusal(node));
        std::vector<uint8_t> b(len);
        for (uint64_t i = 0; i < len; ++i) b[i] = mem_byte(o.node, addr + i);
        return b;
      },
      [&](uint8_t node) {
        log << "progress node=" << int(node) << "\n";
        if (node != kHere && (o.hub || int(node) != o.node)) throw std::runtime_error(refusal(node));
        return o.progress;
      },
      [&](uint64_t id) {
        log << "query step=" << id << " at " << ClockDomain::now_ps() << " busy " << (busy.done ? "done" : "running")
            << "\n";
        return o.underway;
      });
  if (o.hub) link.enable_hub();
  Asker asker("asker");
  asker.link = &link, asker.asks = o.asks, asker.log = &log;
  std::unique_ptr<EndWatcher> ends;
  if (o.watch_ends) {
    ends = std::make_unique<EndWatcher>("ends");
    ends->link = &link, ends->log = &log;
  }
  sc_core::sc_start(ps(kRunTo));
  link.finish(link.error().empty() ? 0 : 1, link.error());
  log << "peer_run_end " << link.peer_run_end() << " " << link.peer_run_end_why() << "\n";
  log << "run_end_how " << int(link.peer_run_end_how()) << "\n";
  const NetLinkStats s = link.stats();
  write_file(f + ".log", log.str());
  write_file(f + ".error", link.error());
  write_file(f + ".stats", std::to_string(s.controls_received) + " " + std::to_string(s.controls_sent) + " " +
                               std::to_string(s.reads_served) + " " + std::to_string(s.reads_asked) + "\n");
  return link.error().empty() ? 0 : 3;
}

// A peer written by hand (no SystemC): its intro, then what `act` does;
// `log` goes to its file.
using RawAct = std::function<void(NetPeer&, std::ostream& log)>;
inline int run_raw(const std::string& path, bool listen, const RawAct& act, const std::string& f) {
  std::unique_ptr<NetPeer> p;
  if (listen) {
    Listener l(Endpoint::parse("unix:" + path));
    p = NetPeer::as_listener(l.accept(kTo, "A"), 0, "A", kTo);
  } else {
    p = NetPeer::as_connecter(Channel::connect(Endpoint::parse("unix:" + path), kTo), 0, "the switch", kTo);
  }
  std::ostringstream log;
  act(*p, log);
  write_file(f + ".log", log.str());
  return 0;
}

// Until the other end's TERMINATE: each CONTROL to `on` (a RunEnd logged
// as "runend <code> <why>"); then this end's TERMINATE (an end whose run
// failed closes without waiting for it: no error).
inline void raw_serve(NetPeer& p, std::ostream& log, const std::function<void(const NetControl&)>& on = {}) {
  while (!p.peer_ended()) {
    p.recv_one(kTo);
    while (auto c = p.pop_control()) {
      if (c->kind == NetControl::RunEnd)
        log << "runend " << c->b << " " << std::string(c->data.begin(), c->data.end()) << "\n";
      else if (on)
        on(*c);
    }
  }
  try {
    p.terminate(kFar);
  } catch (const NetPeerError&) {
  }
}

inline NetControl reply(NetControl::Kind kind, uint64_t time_ps, uint64_t id, uint64_t a) {
  NetControl r;
  r.kind = kind, r.time_ps = time_ps, r.id = id, r.a = a;
  return r;
}

struct Out {
  int rc = -1;
  std::string log, err;
  uint64_t controls_received = 0, controls_sent = 0, reads_served = 0, reads_asked = 0;
  double wall_s = 0;
};

// Runs every process at once (each forked), then collects their files.
inline std::vector<Out> run_all(const std::string& tag, const std::vector<std::function<int(const std::string&)>>& procs) {
  std::vector<std::string> files;
  std::vector<std::future<int>> rcs;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < procs.size(); ++i) {
    files.push_back(tmp("prog_" + tag + "_" + std::to_string(i)));
    const std::string f = files.back();
    auto fn = procs[i];
    rcs.push_back(std::async(std::launch::async, [f, fn] { return in_child([&] { return fn(f); }); }));
  }
  std::vector<Out> out(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) out[i].rc = rcs[i].get();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < procs.size(); ++i) {
    const std::string& f = files[i];
    out[i].log = slurp(f + ".log"), out[i].err = slurp(f + ".error"), out[i].wall_s = wall;
    std::istringstream in(slurp(f + ".stats"));
    in >> out[i].controls_received >> out[i].controls_sent >> out[i].reads_served >> out[i].reads_asked;
    for (const char* ext : {".log", ".error", ".stats"}) std::remove((f + ext).c_str());
  }
  return out;
}

inline std::function<int(const std::string&)> proc(const Proc& o) {
  return [o](const std::string& f) { return run_proc(o, f); };
}
inline std::function<int(const std::string&)> raw(const std::string& path, bool listen, RawAct act) {
  return [=](const std::string& f) { return run_raw(path, listen, act, f); };
}

// The lines of `log` that start with `prefix`, sorted.
inline std::vector<std::string> lines(const std::string& log, const std::string& prefix) {
  std::vector<std::string> v;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) v.push_back(l);
  std::sort(v.begin(), v.end());
  return v;
}
inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::string sock(const std::string& tag) { return tmp("prog_" + tag) + ".sock"; }

}  // namespace net_link_progress
