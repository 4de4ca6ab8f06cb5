// model/bridge/net_link under attack: misbehaving peers over each carrier,
// a harder seeded workload and asymmetric delays split byte-identically,
// a peer ending with frames queued, PACKETs exactly at the horizon (the
// harness: net_link_harness.h).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <random>
#include <sstream>

#include "tb/bridge/net_link_harness.h"

using namespace net_link_test;


// Misbehaving peers (adversarial review): each ends A's run with a named
// error and a non-zero exit within a bounded wall time, over each carrier.
namespace {

struct Attack {
  int rc = -1;
  std::string err;
  double wall_s = 0;
};

// A (run_half) against a peer written by hand (a child process).
Attack attack(const HalfOpts& a, const std::function<int()>& peer_fn, const std::string& tag) {
  auto peer = std::async(std::launch::async, [&] { return in_child(peer_fn); });
  const std::string f = tmp("atk_" + tag);
  const auto t0 = std::chrono::steady_clock::now();
  Attack r;
  r.rc = in_child([&] {
    try {
      return run_half(true, a, f);
    } catch (const std::exception& e) {
      write_file(f + ".error", e.what());
      return 4;
    }
  });
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.err = slurp(f + ".error");
  peer.get();
  for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
  return r;
}

// A raw stream socket to ep (Unix or TCP), retried while the listener starts.
int raw_connect(const Endpoint& ep) {
  for (int i = 0; i < 250; ++i) {
    int s = -1;
    int r = -1;
    if (ep.kind == Endpoint::kUnix) {
      s = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, ep.path.c_str(), sizeof a.sun_path - 1);
      r = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      s = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(ep.port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      r = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (r == 0) return s;
    ::close(s);
    ::usleep(20000);
  }
  return -1;
}
void raw_write(int s, const std::vector<uint8_t>& b) {
  size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::send(s, b.data() + done, b.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += size_t(n);
  }
}
std::vector<uint8_t> framed(const std::vector<uint8_t>& m) {
  std::vector<uint8_t> b(4);
  put_le(b, 0, m.size(), 4);
  b.insert(b.end(), m.begin(), m.end());
  return b;
}
// Reads the listener's intro (4 + 80 bytes) off a raw socket.
void raw_skip_intro(int s) {
  uint8_t buf[84];
  size_t got = 0;
  while (got < sizeof buf) {
    const ssize_t n = ::recv(s, buf + got, sizeof buf - got, 0);
    if (n <= 0) return;
    got += size_t(n);
  }
}

std::vector<uint8_t> packet_msg(uint64_t t, size_t n) {
  NetMsg m;
  m.kind = NetMsg::Packet, m.timestamp_ps = t, m.frame = frame(n, 1);
  return encode_net(m);
}
std::vector<uint8_t> sync_msg(uint64_t t, std::optional<NetSyncInfo> info = std::nullopt) {
  NetMsg m;
  m.kind = NetMsg::Sync, m.timestamp_ps = t, m.sync_info = info;
  return encode_net(m);
}

// What a stream peer does after connecting; `want` is in A's error.
struct StreamAttack {
  const char* name;
  std::function<void(int)> act;  // on the raw socket, after the intros unless noted
  bool intros = true;            // read A's intro and send a connecter intro first
  const char* want;
};

std::vector<StreamAttack> stream_attacks() {
  std::vector<StreamAttack> v;
  v.push_back({"garbage", [](int s) { raw_write(s, framed({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})); }, true,
               "message of 10 bytes, shorter than the 64-byte header"});
  v.push_back({"own_bit",
               [](int s) {
                 auto m = sync_msg(1 * kUs);
                 m[kOwnTypeOffset] |= kOwnMask;
                 raw_write(s, framed(m));
               },
               true, "ownership bit set on a stream message"});
  v.push_back({"len_mismatch",
               [](int s) {
                 auto m = packet_msg(1 * kUs, 100);
                 put_le(m, 0, 200, 2);
                 raw_write(s, framed(m));
               },
               true, "PACKET says len 200 but carries 100 bytes"});
  v.push_back({"over_ack", [](int s) { raw_write(s, framed(sync_msg(150 * kNs, NetSyncInfo{kMs, 5, 0, std::nullopt, std::nullopt}))); }, true,
               "a SYNC acknowledging 5 PACKETs"});
  v.push_back({"unknown_type",
               [](int s) {
                 auto m = sync_msg(1 * kUs);
                 m[kOwnTypeOffset] = 0x41;
                 raw_write(s, framed(m));
               },
               true, "unknown Ethernet message type 0x41"});
  v.push_back({"huge_prefix", [](int s) { raw_write(s, {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}); }, true,
               "frame of 4294967295 bytes announced"});
  v.push_back({"mid_frame",
               [](int s) {
                 auto b = framed(packet_msg(1 * kUs, 200));
                 b.resize(50);
                 raw_write(s, b);
               },
               true, "closed the connection"});  // over TCP a reset (A's unread SYNCs), over Unix "in the middle of a frame"
  v.push_back({"close_before_intro", [](int) {}, false, "no intro"});
  v.push_back({"listener_intro",
               [](int s) {
                 raw_skip_intro(s);
                 raw_write(s, framed(encode_net_listener_intro(kNetEntryBytes, kIntroFlagSync)));
               },
               false, "not Ethernet"});
  v.push_back({"garbage_intro",
               [](int s) {
                 raw_skip_intro(s);
                 raw_write(s, framed({'a', 'b', 'c'}));
               },
               false, "intro of 3 bytes"});
  v.push_back({"huge_intro_prefix",
               [](int s) {
                 raw_skip_intro(s);
                 raw_write(s, {0x00, 0x00, 0x00, 0x40});
               },
               false, "announced"});
  return v;
}

}  // namespace

TEST(NetLinkAttack, MisbehavingStreamPeersAreNamedOverUnixAndTcp) {
  for (const bool tcp : {false, true}) {
    for (const StreamAttack& at : stream_attacks()) {
      std::string eps;
      if (tcp) {
        Listener l(Endpoint::parse("tcp:127.0.0.1:0"));
        eps = "tcp:127.0.0.1:" + std::to_string(l.endpoint().port);
      } else {
        eps = "unix:" + tmp(std::string("atk_") + at.name) + ".sock";
      }
      const Endpoint ep = Endpoint::parse(eps);
      HalfOpts a = listener(eps);
      a.timeout = milliseconds(3000);
      const Attack r = attack(
          a,
          [&] {
            const int s = raw_connect(ep);
            if (s < 0) return 1;
            if (at.intros) {
              raw_skip_intro(s);
              raw_write(s, framed(encode_net_connecter_intro(kIntroFlagSync)));
            }
            at.act(s);
            ::usleep(300000);  // A reads it while the socket is still open
            ::close(s);
            return 0;
          },
          at.name);
      const std::string what = std::string(tcp ? "tcp " : "unix ") + at.name + ": " + r.err;
      EXPECT_NE(r.rc, 0) << what;
      EXPECT_NE(r.err.find(at.want), std::string::npos) << what;
      EXPECT_NE(r.err.find("node B"), std::string::npos) << what;
      EXPECT_LT(r.wall_s, 6.0) << what;
      std::printf("%s -> rc %d: %s\n", (std::string(tcp ? "tcp " : "unix ") + at.name).c_str(), r.rc, r.err.c_str());
      std::fflush(stdout);
    }
  }
}

namespace {
// A fake SimBricks listener on sock: sends an intro announcing the given
// queues in a pool of pool_bytes (a memfd), then waits.
int fake_shm_listener(const std::string& sock, uint64_t pool_bytes, QueueInfo l2c, QueueInfo c2l) {
  const int ls = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, sock.c_str(), sizeof a.sun_path - 1);
  ::unlink(sock.c_str());
  if (::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(ls, 1) != 0) return 1;
  const int s = ::accept(ls, nullptr, nullptr);
  ::close(ls);
  ::unlink(sock.c_str());
  if (s < 0) return 2;
  const int fd = ::memfd_create("pool", 0);
  if (fd < 0 || ::ftruncate(fd, off_t(pool_bytes)) != 0) return 3;
  ListenerIntro li;
  li.flags = kIntroFlagSync, li.l2c = l2c, li.c2l = c2l, li.proto = kProtoIdNet;
  std::vector<uint8_t> b = encode_listener_intro(li, {});
  msghdr msg{};
  iovec iov{b.data(), b.size()};
  msg.msg_iov = &iov, msg.msg_iovlen = 1;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = ctl, msg.msg_controllen = sizeof ctl;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS, cm->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  if (::sendmsg(s, &msg, 0) != ssize_t(b.size())) return 4;
  ::sleep(1);
  ::close(s);
  return 0;
}
}  // namespace

TEST(NetLinkAttack, MisbehavingSharedMemoryPeersAreNamed) {
  struct Case {
    const char* name;
    bool a_listens;
    std::function<int(const std::string&)> peer;
    const char* want;
  };
  const uint64_t E = kNetEntryBytes;
  std::vector<Case> cases;
  cases.push_back({"queues_beyond_pool", false,
                   [&](const std::string& s) { return fake_shm_listener(s, 8 * E, {0, E, 1000}, {4 * E, E, 4}); },
                   "do not fit"});
  cases.push_back({"queue_offset_beyond_pool", false,
                   [&](const std::string& s) {
                     return fake_shm_listener(s, 8 * E, {~uint64_t(0) - E, E, 1}, {4 * E, E, 4});
                   },
                   "do not fit"});
  cases.push_back({"elen_zero", false,
                   [&](const std::string& s) { return fake_shm_listener(s, 8 * E, {0, 0, 4}, {4 * E, E, 4}); },
                   "do not fit"});
  // Both queues on the same entries: A would read its own messages back as the peer's.
  cases.push_back({"overlapping_queues", false,
                   [&](const std::string& s) { return fake_shm_listener(s, 8 * E, {0, E, 4}, {0, E, 4}); },
                   "overlap"});
  cases.push_back({"partly_overlapping_queues", false,
                   [&](const std::string& s) { return fake_shm_listener(s, 8 * E, {0, E, 4}, {3 * E, E, 4}); },
                   "overlap"});
  cases.push_back({"len_beyond_entry", true,
                   [&](const std::string& s) {
                     auto c = ShmChannel::connect(s, milliseconds(5000));
                     c->recv_intro(milliseconds(5000));
                     c->send_intro(encode_net_connecter_intro(kIntroFlagSync), milliseconds(5000));
                     auto m = packet_msg(1 * kUs, 100);
                     put_le(m, 0, 60000, 2);
                     c->send(m, milliseconds(5000));
                     ::usleep(500000);
                     return 0;
                   },
                   "PACKET says len 60000 but carries 4352 bytes"});
  cases.push_back({"close_before_intro", true,
                   [&](const std::string& s) {
                     auto c = ShmChannel::connect(s, milliseconds(5000));
                     return 0;
                   },
                   "node B"});  // "closed the connection before its intro", or A's intro's "sendmsg: Broken pipe"
  cases.push_back({"stream_peer", true,
                   [&](const std::string& s) {
                     const int fd = raw_connect(Endpoint::parse("unix:" + s));
                     raw_write(fd, framed(encode_net_connecter_intro(kIntroFlagSync)));
                     ::usleep(300000);
                     ::close(fd);
                     return 0;
                   },
                   "protocol version"});
  cases.push_back({"own_messages_then_silence", true,
                   [&](const std::string& s) {
                     auto c = ShmChannel::connect(s, milliseconds(5000));
                     c->recv_intro(milliseconds(5000));
                     c->send_intro(encode_net_connecter_intro(kIntroFlagSync), milliseconds(5000));
                     c->send(sync_msg(200 * kNs), milliseconds(5000));
                     c->send(packet_msg(100 * kNs, 64), milliseconds(5000));  // before its promise
                     ::usleep(500000);
                     return 0;
                   },
                   "protocol violation"});
  for (const Case& c : cases) {
    const std::string sock = tmp(std::string("shmatk_") + c.name) + ".sock";
    HalfOpts a = c.a_listens ? listener(sock) : connecter(sock);
    a.shm = true;
    a.timeout = milliseconds(3000);
    const Attack r = attack(a, [&] { return c.peer(sock); }, c.name);
    const std::string what = std::string("shm ") + c.name + ": " + r.err;
    EXPECT_NE(r.rc, 0) << what;
    EXPECT_NE(r.err.find(c.want), std::string::npos) << what;
    EXPECT_LT(r.wall_s, 6.0) << what;
    std::printf("%s -> rc %d\n", what.c_str(), r.rc);
    std::fflush(stdout);
  }
}

// ---------------------------------------------------------------------------
// A harder workload for the synchronisation: both stations send bursts at
// random times (seeded) on a grid of the lookahead, many due at the same
// instant; the lookahead is one 64-byte frame time; replies go out 0, 1 or
// 2 lookaheads after a frame arrives (up to two hops); both lines delay,
// duplicate, reorder and drop copies at random; a quiet gap of 3 ms.
namespace {

const uint64_t kL2 = LineRate(100.0).frame_ps(64);  // 6,080 ps: one minimum frame
uint64_t g_ab = kL2, g_ba = kL2;                     // the lines' delays (A->B, B->A)
constexpr uint64_t kEnd2 = 6 * kMs;

// Both stations send 160 frames at seeded random times and reply to what
// they get (up to two hops), some frames with a bad FCS.
struct Station2 : LineStation {
  explicit Station2(sc_core::sc_module_name n) : LineStation(n) {}
  static bool bad(const FrameBytes& f) { return f.size() % 97 == 0; }  // some with a bad FCS
  void script(uint64_t seed) {
    std::mt19937_64 r(seed);
    for (int i = 0; i < 160; ++i) {
      const uint64_t t = (r() % 3000) * kL2 / (1 + r() % 2);  // on the grid of L or L/2
      const size_t sizes[] = {64, 65, 1500, 4170, 60 + size_t(r() % 4000)};
      FrameBytes f = frame(sizes[r() % 5], uint8_t(i));
      f[16] = 0;                 // hop
      f[17] = uint8_t(r() % 3);  // reply after f[17] lookaheads
      f[18] = uint8_t(seed);
      const bool b = bad(f);
      queue(t, std::move(f), b);
    }
    for (int i = 0; i < 4; ++i) {  // after 3 ms of quiet, four at once
      FrameBytes f = frame(64 + size_t(i) * 500, uint8_t(200 + i));
      f[16] = 0, f[17] = uint8_t(i % 3), f[18] = uint8_t(seed);
      const bool b = bad(f);
      queue(3 * kMs + 40 * kUs, std::move(f), b);
    }
  }
  void rx_arrive(FrameBytes f, uint64_t first_byte_ps, bool bad_fcs) override {
    const uint64_t now = ClockDomain::now_ps();
    got << name() << " t=" << now << " first=" << first_byte_ps << " len=" << f.size() << " tag=" << int(f[14]) << "/"
        << int(f[16]) << "/" << int(f[18]) << (bad_fcs ? " bad-fcs" : "") << "\n";
    if (!bad_fcs && f[16] < 2) {
      ++f[16];
      const uint64_t t = now + f[17] * kL2;
      const bool b = bad(f);
      queue(t, std::move(f), b);
    }
  }
};

void add_faults2(Wire& w) {
  FaultRule del, dup, reo, drop;
  del.name = "del", del.kind = FaultKind::delay, del.probability = 0.2, del.count = 0, del.delay_ps = 3 * kL2;
  dup.name = "dup", dup.kind = FaultKind::duplicate, dup.probability = 0.1, dup.count = 0;
  reo.name = "reo", reo.kind = FaultKind::reorder, reo.probability = 0.05, reo.count = 0, reo.reorder_after = 2;
  drop.name = "drop", drop.kind = FaultKind::drop, drop.probability = 0.05, drop.count = 0;
  for (auto* r : {&del, &dup, &reo, &drop}) w.faults().add_rule(*r);
}

int run_reference2(const std::string& out) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  Station2 a("A"), b("B");
  Wire ab("ab", g_ab, 100.0, 7), ba("ba", g_ba, 100.0, 8);
  add_faults2(ab), add_faults2(ba);
  a.wire = &ab, ab.set_dst(&b);
  b.wire = &ba, ba.set_dst(&a);
  a.script(1), b.script(2);
  sc_core::sc_start(ps(kEnd2));
  write_file(out, a.got.str() + b.got.str());
  return 0;
}

int run_half2(bool is_a, const HalfOpts& o, const std::string& out) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  Station2 st(is_a ? "A" : "B");
  Wire w(is_a ? "ab" : "ba", is_a ? g_ab : g_ba, 100.0, is_a ? 7 : 8);
  LineRx rx(is_a ? "rx_ba" : "rx_ab", 100.0);
  add_faults2(w);
  rx.dst = &st;
  st.wire = &w;
  st.script(is_a ? 1 : 2);
  std::unique_ptr<NetPeer> peer = open_peer(o);
  NetLink link("net", o.timeout);
  if (o.chaos_us) link.set_chaos(o.chaos_us * (is_a ? 3 : 5), o.chaos_us);
  link.add_peer(std::move(peer), is_a ? g_ab : g_ba, LineRate(100.0).preamble_ps(), &rx);
  w.out = &link.out(0);
  sc_core::sc_start(ps(kEnd2));
  link.finish();
  const NetLinkStats s = link.stats();
  write_file(out, st.got.str());
  write_file(out + ".stats", std::to_string(s.packets_sent) + " " + std::to_string(s.syncs_sent) + "\n");
  write_file(out + ".error", link.error());
  return link.error().empty() ? 0 : 3;
}

}  // namespace

TEST(NetLinkAttack, HarderWorkloadSplitIsByteIdenticalOverUnixAndShm) {
  const std::string fr = tmp("ref2");
  ASSERT_EQ(in_child([&] { return run_reference2(fr); }), 0);
  const std::string ref = slurp(fr);
  std::remove(fr.c_str());
  size_t lines = 0, a_lines = 0, same_t = 0;
  {
    std::istringstream in(ref);
    std::string prev;
    for (std::string l; std::getline(in, l); ++lines) {
      a_lines += l.rfind("A ", 0) == 0;
      const std::string t = l.substr(0, l.find(" first"));
      same_t += t == prev;
      prev = t;
    }
  }
  EXPECT_GT(a_lines, 100u);
  EXPECT_GT(lines - a_lines, 100u);
  std::printf("reference: %zu frames received (%zu at A), %zu right after one at the same instant\n", lines, a_lines,
              same_t);
  std::fflush(stdout);
  for (const bool shm : {false, true}) {
    for (int run = 0; run < 4; ++run) {  // run 0 plain, 1..3 chaos
      const std::string tag = std::string(shm ? "h2shm" : "h2unix") + std::to_string(run);
      const std::string ep = (shm ? "" : "unix:") + tmp(tag) + ".sock";
      HalfOpts oa = listener(ep), ob = connecter(ep);
      oa.shm = ob.shm = shm;
      oa.chaos_us = ob.chaos_us = run == 0 ? 0 : uint32_t(50 * run);
      const std::string fa = tmp(tag + "_a"), fb = tmp(tag + "_b");
      const auto t0 = std::chrono::steady_clock::now();
      auto b = std::async(std::launch::async, [&] { return in_child([&] { return run_half2(false, ob, fb); }); });
      const int rc_a = in_child([&] { return run_half2(true, oa, fa); });
      const int rc_b = b.get();
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::string got = slurp(fa) + slurp(fb);
      EXPECT_EQ(rc_a, 0) << tag << ": " << slurp(fa + ".error");
      EXPECT_EQ(rc_b, 0) << tag << ": " << slurp(fb + ".error");
      EXPECT_EQ(got, ref) << tag;
      if (got != ref) {
        write_file("/tmp/ernic_h2_ref.txt", ref);
        write_file("/tmp/ernic_h2_" + tag + ".txt", got);
      }
      std::printf("%s: %s, stats A %s B %s, %.2f s\n", tag.c_str(), got == ref ? "identical" : "DIFFERENT",
                  slurp(fa + ".stats").c_str(), slurp(fb + ".stats").c_str(), wall);
      std::fflush(stdout);
      for (const std::string& f : {fa, fb})
        for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
    }
  }
}

// The two directions of a line with different delays (each end's lookahead
// is its own sending line's delay).
TEST(NetLinkAttack, AsymmetricDelaysSplitIsByteIdentical) {
  for (const auto& d : {std::make_pair(kL2, 7 * kL2), std::make_pair(7 * kL2, kL2)}) {
    g_ab = d.first, g_ba = d.second;
    const std::string fr = tmp("ref3");
    ASSERT_EQ(in_child([&] { return run_reference2(fr); }), 0);
    const std::string ref = slurp(fr);
    std::remove(fr.c_str());
    const std::string tag = "asym" + std::to_string(d.first);
    const std::string ep = "unix:" + tmp(tag) + ".sock";
    HalfOpts oa = listener(ep), ob = connecter(ep);
    const std::string fa = tmp(tag + "_a"), fb = tmp(tag + "_b");
    auto b = std::async(std::launch::async, [&] { return in_child([&] { return run_half2(false, ob, fb); }); });
    const int rc_a = in_child([&] { return run_half2(true, oa, fa); });
    const int rc_b = b.get();
    const std::string got = slurp(fa) + slurp(fb);
    EXPECT_EQ(rc_a, 0) << tag << ": " << slurp(fa + ".error");
    EXPECT_EQ(rc_b, 0) << tag << ": " << slurp(fb + ".error");
    EXPECT_TRUE(got == ref) << tag;
    if (got != ref) write_file("/tmp/ernic_" + tag + "_ref.txt", ref), write_file("/tmp/ernic_" + tag + "_got.txt", got);
    for (const std::string& f : {fa, fb})
      for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
  }
  g_ab = g_ba = kL2;
}

namespace {
// A raw stream peer: the intros, then msgs, then it reads until A closes.
int scripted_peer(const std::string& eps, const std::vector<std::vector<uint8_t>>& msgs) {
  const int s = raw_connect(Endpoint::parse(eps));
  if (s < 0) return 1;
  raw_skip_intro(s);
  raw_write(s, framed(encode_net_connecter_intro(kIntroFlagSync)));
  for (const auto& m : msgs) raw_write(s, framed(m));
  char buf[4096];
  while (::recv(s, buf, sizeof buf, 0) > 0) {
  }
  ::close(s);
  return 0;
}
std::vector<uint8_t> terminate_msg(uint64_t t) {
  NetMsg m;
  m.kind = NetMsg::Terminate, m.timestamp_ps = t;
  return encode_net(m);
}
}  // namespace

// A peer that ends (TERMINATE at 1.2 us) while A's burst to it is queued:
// A runs to its end, the frames after the TERMINATE are dropped, exit 0.
TEST(NetLinkAttack, APeerThatEndsWhileFramesAreQueuedIsNoError) {
  const std::string eps = "unix:" + tmp("term") + ".sock";
  HalfOpts a = listener(eps);
  a.timeout = milliseconds(3000);
  const Attack r = attack(a, [&] { return scripted_peer(eps, {sync_msg(1100 * kNs), terminate_msg(1200 * kNs)}); },
                          "term");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_LT(r.wall_s, 6.0);
}

// PACKETs stamped exactly at the peer's horizon (its SYNC's stamp), two with
// equal stamps: taken, put on the line one after the other.
TEST(NetLinkAttack, PacketsStampedExactlyAtTheHorizonAreTaken) {
  const std::string eps = "unix:" + tmp("hor") + ".sock";
  HalfOpts a = listener(eps);
  a.timeout = milliseconds(3000);
  const std::string f = tmp("hor_a");
  auto peer = std::async(std::launch::async, [&] {
    return in_child([&] {
      return scripted_peer(eps, {sync_msg(1 * kUs), packet_msg(1 * kUs, 64), packet_msg(1 * kUs, 64),
                                 sync_msg(2 * kUs), packet_msg(2 * kUs, 100), terminate_msg(3 * kUs)});
    });
  });
  const int rc = in_child([&] { return run_half(true, a, f); });
  peer.get();
  const std::string got = slurp(f), err = slurp(f + ".error");
  EXPECT_EQ(rc, 0) << err;
  const LineRate line(100.0);
  const uint64_t first = 1 * kUs, last1 = first - line.preamble_ps() + line.frame_ps(64);
  const uint64_t start2 = last1 + line.ifg_ps(), last2 = start2 + line.frame_ps(64);
  const std::string want = "A t=" + std::to_string(last1) + " first=" + std::to_string(first) + " len=64 tag=1/4\n" +
                           "A t=" + std::to_string(last2) + " first=" + std::to_string(start2 + line.preamble_ps()) +
                           " len=64 tag=1/4\n" + "A t=" +
                           std::to_string(2 * kUs - line.preamble_ps() + line.frame_ps(100)) +
                           " first=" + std::to_string(2 * kUs) + " len=100 tag=1/6\n";
  EXPECT_EQ(got, want);
  for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
}
