// tb/bridge: the harness of the split-link tests (test_net_link.cpp,
// test_net_link_attack.cpp): test stations on a line, the faults, the
// reference run (both stations in one kernel) and one half of a split run
// (each run a forked process: fork before any SystemC object).
#pragma once
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "model/bridge/net_link.h"
#include "model/bridge/shm_channel.h"
#include "model/link/cmac.h"
#include "tb/common/file_util.h"

namespace net_link_test {

using namespace ernic;
using namespace ernic::bridge;
using std::chrono::milliseconds;

inline constexpr uint64_t kNs = 1000, kUs = 1000000, kMs = 1000000000;
inline constexpr uint64_t kDelay = 100 * kNs;  // the line's propagation delay: the lookahead
inline constexpr uint64_t kEnd = 700 * kMs;

// What every test station does with its line: sends what is due, one
// frame at a time (back to back when due together), at line rate.
struct LineStation : sc_core::sc_module, FrameSink {
  SC_HAS_PROCESS(LineStation);
  struct Due { FrameBytes f; bool bad_fcs; };
  Wire* wire = nullptr;
  LineRate line{100.0};
  std::ostringstream got;
  std::map<std::pair<uint64_t, uint64_t>, Due> due;  // (time, order)
  uint64_t order = 0, line_free = 0;
  sc_core::sc_event ev;
  explicit LineStation(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void queue(uint64_t t_ps, FrameBytes f, bool bad_fcs) {
    due.emplace(std::make_pair(t_ps, order++), Due{std::move(f), bad_fcs});
    ev.notify(sc_core::SC_ZERO_TIME);
  }
  void run() {
    for (;;) {
      if (due.empty()) {
        wait(ev);
        continue;
      }
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t t = std::max(due.begin()->first.first, line_free);
      if (t > now) {
        wait(ps(t - now), ev);
        continue;
      }
      Due d = std::move(due.begin()->second);
      due.erase(due.begin());
      const uint64_t last = now + line.frame_ps(d.f.size());
      line_free = last + line.ifg_ps();
      wire->send(d.f, now + line.preamble_ps(), last, d.bad_fcs);
    }
  }
};

// A station: sends its script, records what arrives, and echoes each good
// frame after 300 ns if told to.
struct Station : LineStation {
  struct Send { uint64_t t_ps; FrameBytes f; bool bad_fcs; };
  std::vector<Send> script;
  bool echo = false;
  explicit Station(sc_core::sc_module_name n) : LineStation(n) {}
  void start() {
    for (auto& s : script) queue(s.t_ps, s.f, s.bad_fcs);
  }
  void rx_arrive(FrameBytes f, uint64_t first_byte_ps, bool bad_fcs) override {
    got << name() << " t=" << ClockDomain::now_ps() << " first=" << first_byte_ps << " len=" << f.size()
        << " tag=" << int(f[14]) << "/" << int(f[15]) << (bad_fcs ? " bad-fcs" : "") << "\n";
    if (echo && !bad_fcs) {
      f[14] ^= 0x80;
      queue(ClockDomain::now_ps() + 300 * kNs, std::move(f), false);
    }
  }
};

inline FrameBytes frame(size_t n, uint8_t tag) {
  FrameBytes f(n, 0x5A);
  f[12] = 0x88, f[13] = 0xB5;  // a local experimental EtherType
  f[14] = tag, f[15] = uint8_t(n >> 4);
  return f;
}

// A's script: a burst of sizes from 64 to 4,170 bytes, a frame with a bad
// FCS, then one frame after 655 ms of quiet and one right behind it.
inline std::vector<Station::Send> script_a() {
  std::vector<Station::Send> s;
  const size_t sizes[] = {64, 1500, 4170, 300, 64, 2048, 4170, 128, 999, 64, 4170, 512};
  for (size_t i = 0; i < 12; ++i) s.push_back({1 * kUs + i * 40 * kNs, frame(sizes[i], uint8_t(i)), i == 9});
  s.push_back({655 * kMs, frame(256, 100), false});
  s.push_back({655 * kMs + 10 * kNs, frame(4170, 101), false});
  return s;
}

// The A->B line's faults: frame #3 duplicated, #5 delayed by 2 us (the
// frames behind it overtake it), #8 dropped.
inline void add_faults(Wire& ab) {
  FaultRule dup;
  dup.name = "dup", dup.kind = FaultKind::duplicate, dup.nth = 3;
  FaultRule del;
  del.name = "late", del.kind = FaultKind::delay, del.nth = 5, del.delay_ps = 2 * kUs;
  FaultRule drop;
  drop.name = "drop", drop.kind = FaultKind::drop, drop.nth = 8;
  ab.faults().add_rule(dup);
  ab.faults().add_rule(del);
  ab.faults().add_rule(drop);
}

inline void write_file(const std::string& path, const std::string& s) { std::ofstream(path) << s; }
using ernic::test::slurp;

// Runs fn in a child process; returns its exit status (fn's return value).
inline int in_child(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 99;
    try {
      rc = fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    std::fflush(nullptr);
    ::_exit(rc);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

inline std::string tmp(const std::string& tag) { return "/tmp/ernic_netlink_" + tag + "_" + std::to_string(::getpid()); }

// The reference: both stations and both lines in one kernel.
inline int run_reference(const std::string& out) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  Station a("A"), b("B");
  Wire ab("ab", kDelay, 100.0, 7), ba("ba", kDelay, 100.0, 8);
  add_faults(ab);
  a.wire = &ab, ab.set_dst(&b);
  b.wire = &ba, ba.set_dst(&a);
  a.script = script_a(), b.echo = true;
  a.start(), b.start();
  sc_core::sc_start(ps(kEnd));
  write_file(out, a.got.str() + b.got.str());
  return 0;
}

struct HalfOpts {
  bool listener = false;
  bool shm = false;             // SimBricks' shared-memory queues (ep: the Unix socket's path)
  std::string ep;
  uint32_t chaos_us = 0;
  uint64_t die_at_ps = 0;       // B: _exit at this simulated time (a peer killed mid-run)
  milliseconds timeout{20000};
};

// The other process, as HalfOpts say: listener (its peer is "node B") or
// connecter ("node A"), over a stream or shared memory.
inline std::unique_ptr<NetPeer> open_peer(const HalfOpts& o) {
  std::unique_ptr<NetPeer> peer;
  if (o.shm) {
    if (o.listener)
      peer = NetPeer::as_listener(ShmChannel::listen(o.ep, 64, kNetEntryBytes, o.timeout, "node B"), 0,
                                  "node B", o.timeout);
    else
      peer = NetPeer::as_connecter(ShmChannel::connect(o.ep, o.timeout, "node A"), 0, "node A", o.timeout);
  } else if (const Endpoint ep = Endpoint::parse(o.ep); o.listener) {
    Listener l(ep);
    peer = NetPeer::as_listener(l.accept(o.timeout, "node B"), 0, "node B", o.timeout);
  } else {
    peer = NetPeer::as_connecter(Channel::connect(ep, o.timeout), 0, "node A", o.timeout);
  }
  return peer;
}

// One half of the split run: A (its station, the A->B sending half with the
// faults, the B->A receiving half) or B (the mirror, echoing).
inline int run_half(bool is_a, const HalfOpts& o, const std::string& out) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  Station st(is_a ? "A" : "B");
  Wire w(is_a ? "ab" : "ba", kDelay, 100.0, is_a ? 7 : 8);
  LineRx rx(is_a ? "rx_ba" : "rx_ab", 100.0);
  if (is_a) add_faults(w);
  rx.dst = &st;
  st.wire = &w;
  if (is_a) st.script = script_a();
  else st.echo = true;
  st.start();
  std::unique_ptr<NetPeer> peer = open_peer(o);
  NetLink link("net", o.timeout);
  if (o.chaos_us) link.set_chaos(is_a ? 11 : 12, o.chaos_us);
  link.add_peer(std::move(peer), kDelay, LineRate(100.0).preamble_ps(), &rx);
  w.out = &link.out(0);
  struct Killer : sc_core::sc_module {
    SC_HAS_PROCESS(Killer);
    uint64_t at;
    Killer(sc_core::sc_module_name n, uint64_t t) : sc_module(n), at(t) { SC_THREAD(run); }
    void run() {
      wait(ps(at));
      ::_exit(42);
    }
  };
  std::unique_ptr<Killer> killer;
  if (o.die_at_ps) killer = std::make_unique<Killer>("killer", o.die_at_ps);
  sc_core::sc_start(ps(kEnd));
  link.finish();
  const NetLinkStats s = link.stats();
  std::ostringstream stats;
  stats << s.packets_sent << " " << s.syncs_sent << " " << s.packets_received << " " << s.syncs_received << " "
        << s.blocks << "\n";
  write_file(out, st.got.str());
  write_file(out + ".stats", stats.str());
  write_file(out + ".error", link.error());
  return link.error().empty() ? 0 : 3;
}

struct Split {
  int rc_a = -1, rc_b = -1;
  std::string got;           // A's records then B's, as the reference writes them
  std::string err_a, err_b;
  uint64_t syncs = 0, packets = 0;
  double wall_s = 0;
};

inline Split run_split(const std::string& tag, HalfOpts oa, HalfOpts ob) {
  const std::string fa = tmp(tag + "_a"), fb = tmp(tag + "_b");
  const auto t0 = std::chrono::steady_clock::now();
  auto b = std::async(std::launch::async, [&] { return in_child([&] { return run_half(false, ob, fb); }); });
  Split r;
  r.rc_a = in_child([&] { return run_half(true, oa, fa); });
  r.rc_b = b.get();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.got = slurp(fa) + slurp(fb);
  r.err_a = slurp(fa + ".error"), r.err_b = slurp(fb + ".error");
  for (const std::string& f : {fa, fb}) {
    std::istringstream in(slurp(f + ".stats"));
    uint64_t ps = 0, ys = 0;
    in >> ps >> ys;
    r.packets += ps, r.syncs += ys;
  }
  for (const std::string& f : {fa, fb})
    for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
  return r;
}

inline std::string reference() {
  const std::string f = tmp("ref");
  EXPECT_EQ(in_child([&] { return run_reference(f); }), 0);
  std::string s = slurp(f);
  std::remove(f.c_str());
  return s;
}

inline HalfOpts listener(const std::string& ep) {
  HalfOpts o;
  o.listener = true, o.ep = ep;
  return o;
}
inline HalfOpts connecter(const std::string& ep) {
  HalfOpts o;
  o.ep = ep;
  return o;
}

}  // namespace net_link_test
