// A link end's conversation with a peer process (model/bridge/net_peer.h):
// SimBricks' intros, PACKET and SYNC stamps as promises, the horizon, a
// message stamped in the past refused as a protocol violation, TERMINATE,
// a silent peer named after a wall-clock timeout, (time, channel, sequence)
// order. Both ends in one process over a Unix socket.
#include <gtest/gtest.h>

#include <unistd.h>

#include <future>
#include <thread>

#include "model/bridge/net_peer.h"
#include "model/bridge/pcie_proto.h"

using namespace ernic::bridge;
using std::chrono::milliseconds;

namespace {

std::string sock_path(const char* tag) {
  return "unix:/tmp/ernic_netpeer_" + std::string(tag) + "_" + std::to_string(::getpid()) + ".sock";
}

// A connected pair of raw channels: (listener side, connecter side).
std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> raw_pair(const char* tag) {
  const Endpoint ep = Endpoint::parse(sock_path(tag));
  Listener l(ep);
  auto c = std::async(std::launch::async, [&] { return Channel::connect(ep, milliseconds(5000)); });
  auto a = l.accept(milliseconds(5000), "peer");
  return {std::move(a), c.get()};
}

// Two NetPeers after their intros: (the listener's end, the connecter's end).
std::pair<std::unique_ptr<NetPeer>, std::unique_ptr<NetPeer>> peers(const char* tag) {
  auto [a, b] = raw_pair(tag);
  auto conn = std::async(std::launch::async, [&b] { return NetPeer::as_connecter(std::move(b), 1, "node A", milliseconds(5000)); });
  auto lis = NetPeer::as_listener(std::move(a), 0, "node B", milliseconds(5000));
  return {std::move(lis), conn.get()};
}

}  // namespace

TEST(NetPeer, PacketsAndPromisesMoveTheHorizon) {
  auto [b, a] = peers("horizon");
  const std::vector<uint8_t> frame = {0x02, 0, 0, 0, 0, 0x0B, 0x02, 0, 0, 0, 0, 0x0A, 0x08, 0x00, 0x45};
  a->send_packet(1000, 0, frame);
  EXPECT_TRUE(a->promise(5000));
  EXPECT_FALSE(a->promise(5000));  // nothing new promised: no message
  EXPECT_EQ(a->syncs_sent(), 1u);
  b->wait_horizon(3000, milliseconds(5000));
  EXPECT_EQ(b->horizon(), 5000u);  // read up to the first message at or past 3000 ps
  EXPECT_FALSE(b->pop_until(999));
  ASSERT_EQ(b->next_packet_time(), std::optional<uint64_t>(1000));
  auto p = b->pop_until(1000);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->t_ps, 1000u);
  EXPECT_EQ(p->channel, 0u);
  EXPECT_EQ(p->seq, 0u);
  EXPECT_EQ(p->frame, frame);
  EXPECT_EQ(b->packets_received(), 1u);
  EXPECT_EQ(b->syncs_received(), 1u);
  // This end's own promise holds: a packet stamped before 5000 ps is refused.
  EXPECT_THROW(a->send_packet(4000, 0, frame), NetPeerError);
  a->send_packet(5000, 0, frame);  // equal is allowed
  a->terminate(6000);
  b->wait_horizon(~uint64_t(0) - 1, milliseconds(5000));
  EXPECT_TRUE(b->peer_ended());
  EXPECT_EQ(b->horizon(), NetPeer::kEnded);
  EXPECT_EQ(b->pop_until(NetPeer::kEnded)->t_ps, 5000u);
}

TEST(NetPeer, AMessageStampedInThePastIsAProtocolViolation) {
  auto [a, b] = raw_pair("past");
  auto conn = std::async(std::launch::async, [&b] { return NetPeer::as_connecter(std::move(b), 1, "node A", milliseconds(5000)); });
  // The raw end plays a misbehaving listener: intro, then 2000 ps, then 1500 ps.
  a->send(encode_net_listener_intro(kNetEntryBytes, kIntroFlagSync));
  a->recv(milliseconds(5000));  // the connecter's intro
  auto peer = conn.get();
  NetMsg m;
  m.kind = NetMsg::Sync;
  m.timestamp_ps = 2000;
  a->send(encode_net(m));
  m.timestamp_ps = 1500;
  a->send(encode_net(m));
  try {
    peer->wait_horizon(10000, milliseconds(5000));
    FAIL() << "a message stamped before the peer's promise was accepted";
  } catch (const NetPeerError& e) {
    EXPECT_NE(std::string(e.what()).find("node A: a message stamped 1500 ps, before the 2000 ps it promised "
                                         "(a protocol violation)"),
              std::string::npos)
        << e.what();
  }
}

TEST(NetPeer, AMalformedMessageIsRefusedByName) {
  auto [a, b] = raw_pair("bad");
  auto conn = std::async(std::launch::async, [&b] { return NetPeer::as_connecter(std::move(b), 1, "node A", milliseconds(5000)); });
  a->send(encode_net_listener_intro(kNetEntryBytes, 0));
  a->recv(milliseconds(5000));
  auto peer = conn.get();
  std::vector<uint8_t> bad(64, 0);
  bad[63] = 0x41;
  a->send(bad);
  try {
    peer->wait_horizon(1, milliseconds(5000));
    FAIL();
  } catch (const NetPeerError& e) {
    EXPECT_STREQ(e.what(), "node A: unknown Ethernet message type 0x41");
  }
}

TEST(NetPeer, APeerOfAnotherProtocolIsRefusedAtTheIntro) {
  auto [a, b] = raw_pair("proto");
  auto conn = std::async(std::launch::async, [&b] {
    try {
      NetPeer::as_connecter(std::move(b), 1, "node A", milliseconds(5000));
      return std::string("accepted");
    } catch (const NetPeerError& e) {
      return std::string(e.what());
    }
  });
  a->send(encode_device_intro(DevIntro{}, 4096));  // a PCIe device's intro
  EXPECT_EQ(conn.get(), "node A: peer's upper-layer protocol is 2, not Ethernet (1)");
}

TEST(NetPeer, ASilentPeerIsNamedAfterTheWallTimeout) {
  auto [b, a] = peers("silent");
  a->promise(100);
  try {
    b->wait_horizon(5000, milliseconds(100));
    FAIL();
  } catch (const NetPeerError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("node B: waiting for its promise to reach 5000 ps (it is at 100 ps)"), std::string::npos) << w;
  }
}

TEST(NetPeer, EqualStampsOrderByChannelThenSequence) {
  NetPacket x{100, 1, 0, 0, {}}, y{100, 0, 7, 0, {}}, z{100, 0, 8, 0, {}}, w{99, 5, 9, 0, {}};
  EXPECT_TRUE(w < y);
  EXPECT_TRUE(y < z);
  EXPECT_TRUE(z < x);
  EXPECT_FALSE(x < y);
}

// A split run's CONTROL (eth_proto.h): stamped with the sender's latest
// stamp (no promise of its own, the horizon does not move), handed out in
// order, counted with the PACKETs in the SYNC extension's acknowledgement,
// and its time (earlier than a PACKET stamp sent before it) the earliest
// unacknowledged instant until the peer has taken it in.
// The earliest instant among the messages in flight as the peer's
// acknowledgements take them one by one: a CONTROL's time below a PACKET's
// stamp sent before it, a later CONTROL below an earlier PACKET, and the
// CONTROLs alone (earliest_unacked(true)).
TEST(NetPeer, EarliestUnackedFollowsPartialAcknowledgements) {
  auto [b, a] = peers("partial");
  const std::vector<uint8_t> frame(60, 0x5A);
  NetControl c;
  c.kind = NetControl::Fact;
  a->send_packet(9000, 0, frame);  // 1
  c.time_ps = 8100;
  a->send_control(c);              // 2
  a->send_packet(9100, 0, frame);  // 3
  c.time_ps = 8300;
  a->send_control(c);              // 4
  a->send_packet(9700, 0, frame);  // 5
  EXPECT_EQ(a->earliest_unacked(), std::optional<uint64_t>(8100));
  EXPECT_EQ(a->earliest_unacked(true), std::optional<uint64_t>(8100));
  ASSERT_TRUE(a->promise(12000));
  b->wait_horizon(12000, milliseconds(5000));
  const std::vector<std::pair<uint64_t, std::pair<std::optional<uint64_t>, std::optional<uint64_t>>>> want = {
      {1, {8100, 8100}}, {2, {8300, 8300}}, {3, {8300, 8300}}, {4, {9700, std::nullopt}}, {5, {std::nullopt, std::nullopt}}};
  uint64_t t = 13000;
  for (const auto& [acked, e] : want) {
    ASSERT_TRUE(b->promise(t, NetSyncInfo{20000, acked, 100}));
    a->wait_horizon(t, milliseconds(5000));
    EXPECT_EQ(a->earliest_unacked(), e.first) << acked << " acknowledged";
    EXPECT_EQ(a->earliest_unacked(true), e.second) << acked << " acknowledged";
    t += 100;
  }
}

TEST(NetPeer, ControlsAreOrderedAcknowledgedAndMakeNoPromise) {
  auto [b, a] = peers("control");
  const std::vector<uint8_t> frame(60, 0x5A);
  a->send_packet(9000, 0, frame);  // arrives at 9000: sent at about 8000
  NetControl c;
  c.kind = NetControl::StepEnd;
  c.time_ps = 8100;
  c.id = 4;
  a->send_control(c);
  c.kind = NetControl::Fact;
  c.id = 5;
  c.data = {1, 2, 3};
  a->send_control(c);
  EXPECT_EQ(a->controls_sent(), 2u);
  EXPECT_EQ(a->earliest_unacked(), std::optional<uint64_t>(8100));  // the control's time, not the stamp
  EXPECT_TRUE(a->promise(12000));
  b->wait_horizon(12000, milliseconds(5000));
  EXPECT_EQ(b->controls_received(), 2u);
  EXPECT_EQ(b->taken_in(), 3u);  // one PACKET, two CONTROLs
  auto c1 = b->pop_control();
  auto c2 = b->pop_control();
  ASSERT_TRUE(c1 && c2);
  EXPECT_EQ(c1->kind, NetControl::StepEnd);
  EXPECT_EQ(c1->id, 4u);
  EXPECT_EQ(c1->time_ps, 8100u);
  EXPECT_EQ(c2->kind, NetControl::Fact);
  EXPECT_EQ(c2->data, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_FALSE(b->pop_control());
  // B acknowledges all three: A's earliest unacknowledged instant is gone.
  EXPECT_TRUE(b->promise(13000, NetSyncInfo{20000, b->taken_in(), 100}));
  a->wait_horizon(13000, milliseconds(5000));
  EXPECT_FALSE(a->earliest_unacked());
  // Acknowledging more than was sent is a protocol violation.
  EXPECT_TRUE(b->promise(14000, NetSyncInfo{20000, 4, 100}));
  EXPECT_THROW(a->wait_horizon(14000, milliseconds(5000)), NetPeerError);
}
