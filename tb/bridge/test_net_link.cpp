// model/bridge/net_link: one link split over two processes gives the same
// frames at the same picoseconds as the link in one process (issue 16,
// items 1-2), with faults on the line (a duplicate, a delayed copy that is
// overtaken, a drop), a bad FCS, traffic both ways (B echoes what it gets)
// and a 655 ms quiet gap that costs a few messages, not one per lookahead;
// over a Unix socket, TCP and SimBricks' shared-memory queues; the same
// under random wall-clock delays in the transport; a peer killed
// mid-run, a silent peer, a PACKET stamped in the past, a zero lookahead:
// named errors, never a hang.
//
// Each run is a process of its own (fork before any SystemC object): the
// reference (both stations, one kernel), or one half of the split run
// (the harness: net_link_harness.h; misbehaving peers: test_net_link_attack.cpp).
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
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <thread>

#include "tb/bridge/net_link_harness.h"

using namespace net_link_test;


// The reference itself: what the faults and the line make of A's script
// (independent of the split: computed by hand from the line's rules).
TEST(NetLink, ReferenceRunHasTheFaultsAndTheEchoes) {
  const std::string ref = reference();
  // 12 burst frames + 1 duplicate - 1 dropped - 1 bad FCS not echoed + 2 late ones.
  size_t at_b = 0, at_a = 0, bad = 0;
  std::istringstream in(ref);
  for (std::string line; std::getline(in, line);) {
    (line.rfind("B ", 0) == 0 ? at_b : at_a) += 1;
    bad += line.find("bad-fcs") != std::string::npos;
  }
  EXPECT_EQ(at_b, 12u - 1 + 1 + 2);  // B gets 14 frames (one with a bad FCS)
  EXPECT_EQ(bad, 1u);
  EXPECT_EQ(at_a, at_b - 1);         // every good one echoed
  // The first frame (64 bytes at 1 us) reaches B: preamble 0.64 ns + 100 ns,
  // its last byte (8 + 64 + 4 bytes at 80 ps) at 1 us + 6.08 ns + 100 ns.
  EXPECT_NE(ref.find("B t=" + std::to_string(kUs + 6080 + kDelay) + " first=" + std::to_string(kUs + 640 + kDelay) +
                     " len=64 tag=0/4\n"),
            std::string::npos)
      << ref;
}

TEST(NetLink, SplitOverAUnixSocketIsByteIdentical) {
  const std::string ref = reference();
  const std::string ep = "unix:" + tmp("sock") + ".sock";
  const Split s = run_split("unix", listener(ep), connecter(ep));
  ASSERT_EQ(s.rc_a, 0) << s.err_a << " / B: " << s.err_b;
  ASSERT_EQ(s.rc_b, 0) << s.err_b;
  EXPECT_EQ(s.got, ref);
  // 14 frames A->B (one dropped on A's line before it is sent), 13 back.
  EXPECT_EQ(s.packets, 14u + 13u);
  // 655 ms of quiet at a 100 ns lookahead would be 6.55 million promises
  // each way without the SYNC extension.
  EXPECT_LT(s.syncs, 400u) << s.syncs;
  RecordProperty("syncs", int(s.syncs));
  std::printf("split over unix: %llu PACKETs, %llu SYNCs, %.3f s wall\n", (unsigned long long)s.packets,
              (unsigned long long)s.syncs, s.wall_s);
}

TEST(NetLink, SplitOverTcpIsByteIdentical) {
  const std::string ref = reference();
  // A free port: bind port 0 and release it.
  uint16_t port;
  {
    Listener l(Endpoint::parse("tcp:127.0.0.1:0"));
    port = l.endpoint().port;
  }
  const std::string ep = "tcp:127.0.0.1:" + std::to_string(port);
  const Split s = run_split("tcp", listener(ep), connecter(ep));
  ASSERT_EQ(s.rc_a, 0) << s.err_a << " / B: " << s.err_b;
  ASSERT_EQ(s.rc_b, 0) << s.err_b;
  EXPECT_EQ(s.got, ref);
}

// SimBricks' shared-memory queues: the pool's descriptor over the Unix
// socket, entries of 4,416 bytes (a 4,170-byte frame fits), 64 a queue.
TEST(NetLink, SplitOverSharedMemoryIsByteIdentical) {
  const std::string ref = reference();
  const std::string sock = tmp("shm") + ".sock";
  HalfOpts a = listener(sock), b = connecter(sock);
  a.shm = b.shm = true;
  const Split s = run_split("shm", a, b);
  ASSERT_EQ(s.rc_a, 0) << s.err_a << " / B: " << s.err_b;
  ASSERT_EQ(s.rc_b, 0) << s.err_b;
  EXPECT_EQ(s.got, ref);
  EXPECT_EQ(s.packets, 14u + 13u);
  struct stat st {};
  EXPECT_NE(::stat(sock.c_str(), &st), 0) << "the listener removes its socket (its pool is anonymous memory)";
}

// A listener takes a socket path that a run that ended left, never a file
// that is not a socket nor the socket of a process that still listens
// (which it would rob of its peer): refused by name, both left as they were.
TEST(ShmChannel, ListenerRefusesAFileAndALiveListenersSocket) {
  const std::string file = tmp("file") + ".sock";
  { std::ofstream(file) << "important"; }
  try {
    ShmChannel::listen(file, 4, 512, milliseconds(100));
    ADD_FAILURE() << "a regular file was taken";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find(file + " exists and is not a socket"), std::string::npos) << e.what();
  }
  std::ifstream in(file);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "important");
  const std::string live = tmp("live") + ".sock";
  auto first = std::async(std::launch::async, [&] { return ShmChannel::listen(live, 4, 512, milliseconds(3000)); });
  struct stat st {};
  for (int i = 0; i < 200 && ::stat(live.c_str(), &st) != 0; ++i) std::this_thread::sleep_for(milliseconds(5));
  try {
    ShmChannel::listen(live, 4, 512, milliseconds(100));
    ADD_FAILURE() << "a live listener's socket was taken";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("another process listens on " + live), std::string::npos) << e.what();
  }
  auto c = ShmChannel::connect(live, milliseconds(3000));  // the first listener still gets its peer
  auto l = first.get();
  ASSERT_TRUE(l && c);
  l->send_intro(encode_net_listener_intro(512, kIntroFlagSync), milliseconds(3000));
  EXPECT_EQ(c->recv_intro(milliseconds(3000)).size(), 80u);
}

TEST(NetLink, APeerKilledOverSharedMemoryIsNamed) {
  const std::string sock = tmp("shmkill") + ".sock";
  HalfOpts a = listener(sock), b = connecter(sock);
  a.shm = b.shm = true;
  b.die_at_ps = 2 * kUs;
  const Split s = run_split("shmkill", a, b);
  EXPECT_EQ(s.rc_b, 42);
  EXPECT_EQ(s.rc_a, 3);
  EXPECT_NE(s.err_a.find("node B closed the connection"), std::string::npos) << s.err_a;
  EXPECT_LT(s.wall_s, 10.0);
}

TEST(NetLink, RandomWallClockDelaysChangeNothing) {
  const std::string ref = reference();
  for (int run = 0; run < 4; ++run) {
    const bool shm = run == 3;  // the last over SimBricks' shared memory
    const std::string ep = (shm ? "" : "unix:") + tmp("chaos" + std::to_string(run)) + ".sock";
    HalfOpts a = listener(ep), b = connecter(ep);
    a.shm = b.shm = shm;
    a.chaos_us = b.chaos_us = 300;
    const Split s = run_split("chaos", a, b);
    ASSERT_EQ(s.rc_a, 0) << s.err_a << " / B: " << s.err_b;
    ASSERT_EQ(s.rc_b, 0) << s.err_b;
    EXPECT_EQ(s.got, ref) << "run " << run;
  }
}

TEST(NetLink, APeerKilledMidRunIsANamedErrorWithinSeconds) {
  const std::string ep = "unix:" + tmp("kill") + ".sock";
  HalfOpts a = listener(ep), b = connecter(ep);
  b.die_at_ps = 2 * kUs;
  const Split s = run_split("kill", a, b);
  EXPECT_EQ(s.rc_b, 42);
  EXPECT_EQ(s.rc_a, 3);
  EXPECT_NE(s.err_a.find("node B"), std::string::npos) << s.err_a;
  EXPECT_NE(s.err_a.find("closed the connection"), std::string::npos) << s.err_a;
  EXPECT_LT(s.wall_s, 10.0);
}

TEST(NetLink, ASilentPeerIsNamedAfterTheTimeout) {
  const std::string ep = "unix:" + tmp("silent") + ".sock";
  // The peer does its intro and then says nothing, alive.
  auto peer = std::async(std::launch::async, [&] {
    return in_child([&] {
      auto p = NetPeer::as_connecter(Channel::connect(Endpoint::parse(ep), milliseconds(5000)), 0, "x",
                                     milliseconds(5000));
      ::sleep(4);
      return 0;
    });
  });
  HalfOpts a = listener(ep);
  a.timeout = milliseconds(1000);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string f = tmp("silent_a");
  const int rc = in_child([&] { return run_half(true, a, f); });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rc, 3);
  const std::string err = slurp(f + ".error");
  EXPECT_NE(err.find("no answer"), std::string::npos) << err;
  EXPECT_NE(err.find("1000 ms"), std::string::npos) << err;
  EXPECT_LT(wall, 4.0);
  peer.get();
  for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
}

// A peer that stamps a PACKET below what its SYNC promised (plain stamps),
// and one whose PACKET contradicts its SYNC extension (it said it had
// nothing to do for 1 ms): both protocol violations, named.
TEST(NetLink, APacketStampedInThePastFailsTheRun) {
  for (int variant = 0; variant < 2; ++variant) {
    const std::string ep = "unix:" + tmp("past" + std::to_string(variant)) + ".sock";
    auto peer = std::async(std::launch::async, [&] {
      return in_child([&] {
        // The intros by hand, then raw messages (a NetPeer would refuse to send them).
        auto ch = Channel::connect(Endpoint::parse(ep), milliseconds(5000));
        ch->recv(milliseconds(5000));
        ch->send(encode_net_connecter_intro(kIntroFlagSync));
        NetMsg sync, pkt;
        sync.kind = NetMsg::Sync, pkt.kind = NetMsg::Packet, pkt.frame = frame(64, 1);
        if (variant == 0) {
          sync.timestamp_ps = 5 * kUs, pkt.timestamp_ps = 1 * kUs;
        } else {
          // "Nothing to do for 1 ms": A may run to its own activity at 1 us
          // plus two lookaheads; a PACKET at 500 ns contradicts that.
          sync.timestamp_ps = 150 * kNs, sync.sync_info = NetSyncInfo{1 * kMs, 0, kDelay, std::nullopt, std::nullopt};
          pkt.timestamp_ps = 500 * kNs;
        }
        ch->send(encode_net(sync));
        if (variant == 1) ::usleep(200000);  // A runs on to what the extension allows
        ch->send(encode_net(pkt));
        ::sleep(2);
        return 0;
      });
    });
    HalfOpts a = listener(ep);
    a.timeout = milliseconds(5000);
    const std::string f = tmp("past_a");
    const int rc = in_child([&] { return run_half(true, a, f); });
    EXPECT_EQ(rc, 3) << variant;
    const std::string err = slurp(f + ".error");
    EXPECT_NE(err.find("protocol violation"), std::string::npos) << variant << ": " << err;
    peer.get();
    for (const char* ext : {"", ".stats", ".error"}) std::remove((f + ext).c_str());
  }
}

TEST(NetLink, AZeroLookaheadIsRefused) {
  EXPECT_EQ(in_child([] {
              sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
              NetLink link("net", milliseconds(100));
              try {
                link.add_peer(nullptr, 0, 640, nullptr);
              } catch (const std::invalid_argument& e) {
                return std::string(e.what()).find("above 0") != std::string::npos ? 0 : 1;
              }
              return 2;
            }),
            0);
}

// The queues themselves: a ring of 4 entries carries 200 messages both ways
// (each side waits for the other to hand entries back), in order, with
// their bytes; a message longer than an entry is refused; the connecter
// sees the listener's queue sizes.
TEST(ShmChannel, RingOfFourCarriesTwoHundredMessagesInOrder) {
  const std::string sock = tmp("ring") + ".sock";
  constexpr int kMsgs = 200;
  auto msg = [](int i) {
    NetMsg m;
    m.kind = NetMsg::Packet, m.timestamp_ps = uint64_t(i) * 1000, m.port = uint8_t(i);
    m.frame.assign(size_t(60 + i), uint8_t(i));
    return encode_net(m);
  };
  auto peer = std::async(std::launch::async, [&] {
    return in_child([&] {
      auto c = ShmChannel::connect(sock, milliseconds(5000));
      const auto intro = c->recv_intro(milliseconds(5000));
      if (c->out_entry_bytes() != 512) return 10;
      for (int i = 0; i < kMsgs; ++i) {
        const auto got = c->recv(milliseconds(5000));
        if (got != msg(i)) return 11;
        c->send(got, milliseconds(5000));  // echoed back
      }
      return 0;
    });
  });
  auto l = ShmChannel::listen(sock, 4, 512, milliseconds(5000), "the echo");
  l->send_intro(encode_net_listener_intro(512, kIntroFlagSync), milliseconds(5000));
  int back = 0;
  for (int i = 0; i < kMsgs; ++i) {
    l->send(msg(i), milliseconds(5000));
    while (l->pending()) {
      ASSERT_EQ(l->recv(milliseconds(5000)), msg(back));
      ++back;
    }
  }
  while (back < kMsgs) {
    ASSERT_EQ(l->recv(milliseconds(5000)), msg(back));
    ++back;
  }
  EXPECT_EQ(peer.get(), 0);
  NetMsg big;
  big.kind = NetMsg::Packet;
  big.frame.assign(512, 0);
  try {
    l->send(encode_net(big), milliseconds(100));
    FAIL() << "a 576-byte message went into 512-byte entries";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the echo's queue entries of 512 bytes"), std::string::npos)
        << e.what();
  }
}

// The bytes SimBricks' side sees (lib/simbricks/base/proto.h, if.h): the
// listener's intro as the connecter receives it (10 x u64: version 1, flags
// 1 = sync, l2c offset/entry/count, c2l offset/entry/count, protocol NET 1,
// upper-layer intro at 80; c2l first in the pool, as SimBricks' listener
// lays it out), and a PACKET in its entry: len u16 @0, port @2, timestamp
// @48, own_type @63 = 0x40 | 0x80 (consumer-owned) until taken, then 0x40
// (back to the producer, the type kept), the frame from @64.
TEST(ShmChannel, IntroAndEntryBytesAsSimBricksLaysThemOut) {
  const std::string sock = tmp("bytes") + ".sock";
  auto conn = std::async(std::launch::async, [&] { return ShmChannel::connect(sock, milliseconds(5000)); });
  auto l = ShmChannel::listen(sock, 8, 256, milliseconds(5000));
  auto c = conn.get();
  l->send_intro(encode_net_listener_intro(256, kIntroFlagSync), milliseconds(5000));
  const std::vector<uint8_t> intro = c->recv_intro(milliseconds(5000));
  ASSERT_EQ(intro.size(), 80u);
  const uint64_t want[10] = {1, 1, 8 * 256, 256, 8, 0, 256, 8, 1, 80};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(get_le(intro.data(), size_t(8 * i), 8), want[i]) << "u64 #" << i;
  NetMsg m;
  m.kind = NetMsg::Packet, m.timestamp_ps = 0x0102030405060708ull, m.port = 5;
  m.frame = {0xde, 0xad, 0xbe, 0xef, 0x01};
  l->send(encode_net(m), milliseconds(1000));
  // The pool as the peer maps it (the descriptor it is sent): the l2c queue's first entry.
  const int fd = l->pool_fd();
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> e(256);
  ASSERT_EQ(::pread(fd, e.data(), e.size(), off_t(8 * 256)), 256);
  EXPECT_EQ(e[0], 5);  // len 5, little-endian
  EXPECT_EQ(e[1], 0);
  EXPECT_EQ(e[2], 5);  // port
  EXPECT_EQ(get_le(e.data(), 48, 8), 0x0102030405060708ull);
  EXPECT_EQ(e[63], 0xC0);
  EXPECT_EQ(std::vector<uint8_t>(e.begin() + 64, e.begin() + 69), m.frame);
  const auto got = c->recv(milliseconds(1000));
  EXPECT_EQ(got, encode_net(m));
  ASSERT_EQ(::pread(fd, e.data(), 64, off_t(8 * 256)), 64);
  EXPECT_EQ(e[63], 0x40);
}
