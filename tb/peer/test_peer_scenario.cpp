// tb/peer: the scenario language's `kind: peer` (model/scenario/peer.cpp):
// what it accepts, and each refusal as a ScenarioError naming the file, the
// line and the key.
#include <gtest/gtest.h>

#include <string>

#include "model/scenario/scenario.h"

namespace ernic {
namespace {

const std::string kHead = R"(scenario: t
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1 }
  P:
    kind: peer
    mac: "02:00:00:00:00:0b"
    ip: 10.0.0.2
)";
const std::string kSteps = R"(steps:
  - init: [A, P]
  - register_mr: { node: A, name: a, length: 4096 }
  - register_mr: { node: P, name: b, length: 4096, access: r }
)";
const std::string kConnect = "  - connect: { name: c, client: A, server: P, client_mr: a, server_mr: b, cm: false }\n";

struct Refusal {
  int line;
  std::string key, says;
};
Refusal refusal(const std::string& yaml) {
  try {
    parse_scenario(yaml, "peer.yaml");
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), "peer.yaml");
    return {e.line(), e.key(), e.message()};
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return {};
}

TEST(PeerScenario, AcceptsAPeerWithItsParameters) {
  const Scenario sc = parse_scenario(
      kHead + "    peer: { latency_ns: 250, ack_every_packets: 4, credits: invalid }\n" + kSteps + kConnect, "peer.yaml");
  ASSERT_EQ(sc.nodes.size(), 2u);
  EXPECT_FALSE(sc.nodes[0].peer.has_value());
  ASSERT_TRUE(sc.nodes[1].peer.has_value());
  EXPECT_EQ(sc.nodes[1].peer->latency_ns, 250u);
  EXPECT_EQ(sc.nodes[1].peer->ack_every_packets, 4u);
  EXPECT_TRUE(sc.nodes[1].peer->credits_invalid);
}

TEST(PeerScenario, RefusesErnicKeysOnAPeerAndPeerKeysOnAnErnic) {
  Refusal r = refusal(kHead + "    ack: { mode: request }\n" + kSteps);
  EXPECT_EQ(r.line, 8);
  EXPECT_EQ(r.key, "nodes.P.ack");
  EXPECT_NE(r.says.find("kind: peer"), std::string::npos) << r.says;
  r = refusal(R"(scenario: t
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1, peer: { latency_ns: 5 } }
steps:
  - wait: { us: 1 }
)");
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(r.key, "nodes.A.peer");
  r = refusal(kHead + "    peer: { latency: 5 }\n" + kSteps);
  EXPECT_EQ(r.key, "nodes.P.peer.latency");
  r = refusal(R"(scenario: t
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1, kind: pear }
steps:
  - wait: { us: 1 }
)");
  EXPECT_EQ(r.key, "nodes.A.kind");
  EXPECT_NE(r.says.find("peer"), std::string::npos) << r.says;
}

TEST(PeerScenario, ConnectToAPeerIsOutOfBand) {
  Refusal r = refusal(kHead + kSteps + "  - connect: { name: c, client: A, server: P, client_mr: a, server_mr: b }\n");
  EXPECT_EQ(r.line, 12);
  EXPECT_NE(r.says.find("cm: false"), std::string::npos) << r.says;
}

// The peer's recv_mr names an MR registered on it before the connect (it
// was found missing only when the run reached the connect, exit 1).
TEST(PeerScenario, RecvMrMustBeRegisteredBeforeTheConnect) {
  const std::string head = kHead + "    peer: { recv_mr: nosuch }\n";
  Refusal r = refusal(head + kSteps + kConnect);
  EXPECT_EQ(r.line, 13);
  EXPECT_EQ(r.key, "steps[3].connect");
  EXPECT_EQ(r.says, "nodes.P.peer.recv_mr 'nosuch' (line 8): no MR of that name is registered on P before this connect");
  const std::string ok = kHead + "    peer: { recv_mr: b }\n";
  EXPECT_NO_THROW(parse_scenario(ok + kSteps + kConnect, "peer.yaml"));
}

TEST(PeerScenario, RefusesErnicOnlyStepsOnThePeer) {
  Refusal r = refusal(kHead + kSteps + kConnect + "  - recv: { conn: c, node: P }\n");
  EXPECT_EQ(r.line, 13);
  EXPECT_EQ(r.key, "steps[4].recv.node");
  EXPECT_NE(r.says.find("kind: peer"), std::string::npos) << r.says;
  r = refusal(kHead + kSteps + "  - deregister_mr: { node: P, name: b }\n");
  EXPECT_EQ(r.key, "steps[3].deregister_mr.node");
  r = refusal(kHead + kSteps + "  - reg_write: { node: P, reg: XRNICCONF, value: 1 }\n");
  EXPECT_EQ(r.key, "steps[3].reg_write.node");
  r = refusal(kHead + kSteps + kConnect + "  - recover: { conn: c }\n");
  EXPECT_EQ(r.key, "steps[4].recover.conn");
  // Inside repeat and parallel the step kind is the inner step's.
  r = refusal(kHead + kSteps + kConnect + "  - repeat: { count: 2, steps: [ { recv: { conn: c, node: P } } ] }\n");
  EXPECT_NE(r.says.find("recv cannot use it"), std::string::npos) << r.says;
  // Both ends of the connection may post and wait (the peer as a requester).
  parse_scenario(kHead + kSteps + kConnect +
                     "  - post: { conn: c, node: A, wqes: [ { opcode: read, wr_id: 1, local_mr: a, length: 8 } ] }\n"
                     "  - post: { conn: c, node: P, wqes: [ { opcode: write, wr_id: 2, local_mr: b, length: 8 } ] }\n"
                     "  - wait_completions: { conn: c, node: P }\n"
                     "  - check_memory: { node: P, mr: b, length: 8, pattern: { pattern: zero } }\n",
                 "peer.yaml");
}

// recv on the ERNIC end may compare its RQ element with the peer's MR (the
// sender's source, read as check_memory's equals reads it): `equals` only
// reads the peer's memory, it does not drive the peer (it was refused as
// "recv cannot use it").
TEST(PeerScenario, RecvOnTheErnicEndComparesWithThePeersMemory) {
  const Scenario sc = parse_scenario(
      kHead + kSteps + kConnect +
          "  - recv: { conn: c, node: A, expect: [ { opcode: send, length: 8, equals: { node: P, mr: b, offset: 4 } } ] }\n",
      "peer.yaml");
  const auto& r = std::get<RecvStep>(sc.steps.back());
  ASSERT_EQ(r.expect.size(), 1u);
  ASSERT_TRUE(r.expect[0].equals.has_value());
  EXPECT_EQ(r.expect[0].equals->node, "P");
  EXPECT_EQ(r.expect[0].equals->mr, "b");
  EXPECT_EQ(r.expect[0].equals->offset, 4u);
  EXPECT_EQ(r.expect[0].length, 8u);
}

}  // namespace
}  // namespace ernic
