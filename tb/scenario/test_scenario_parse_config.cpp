// Tests for model/scenario/scenario.h: the keys around the steps: pcie, layout
// and datapath (their defaults, set_datapath), IPv6 nodes and the IP
// version of connections, the switch topology, expect_qp.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "model/scenario/scenario.h"

using namespace ernic;

TEST(ScenarioParse, LayoutAndDefaults) {
  const char* nodes = "nodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\nsteps: [init: A]\n";
  const Scenario d = parse_scenario(std::string("scenario: t\n") + nodes, "t.yaml");
  EXPECT_EQ(d.pcie.gen, 3u);
  EXPECT_EQ(d.pcie.lanes, 16u);
  EXPECT_EQ(d.pcie.mps, 256u);
  EXPECT_EQ(d.pcie.mrrs, 512u);
  EXPECT_EQ(d.pcie.read_latency_ns, 500u);
  EXPECT_EQ(d.pcie.rcb, 64u);
  EXPECT_EQ(d.pcie.mmio_write_latency_ns, 250u);
  EXPECT_EQ(d.pcie.outstanding, 8u);
  EXPECT_EQ(d.datapath, Datapath::rtl);
  EXPECT_EQ(d.layout, RegLayout::v31);
  // The unquoted YAML scalar 3.1 is the string "3.1".
  EXPECT_EQ(parse_scenario(std::string("scenario: t\nlayout: 3.1\n") + nodes, "t.yaml").layout, RegLayout::v31);
  EXPECT_EQ(parse_scenario(std::string("scenario: t\nlayout: '3.1'\n") + nodes, "t.yaml").layout, RegLayout::v31);
  EXPECT_EQ(parse_scenario(std::string("scenario: t\nlayout: 4.x\n") + nodes, "t.yaml").layout, RegLayout::v4x);
  EXPECT_EQ(parse_scenario(std::string("scenario: t\ndatapath: rtl\n") + nodes, "t.yaml").datapath, Datapath::rtl);
  EXPECT_EQ(d.datapath_name(), "rtl");
  // user:<name>: kept as given; whether it is registered is System's and ernic-sim's check.
  const Scenario u = parse_scenario(std::string("scenario: t\ndatapath: user:alt_2\n") + nodes, "t.yaml");
  EXPECT_EQ(u.datapath, Datapath::user);
  EXPECT_EQ(u.datapath_user, "alt_2");
  EXPECT_EQ(u.datapath_name(), "user:alt_2");
  EXPECT_EQ(u.datapath_loc.line, 2);
  EXPECT_EQ(u.datapath_loc.column, 11);
  EXPECT_EQ(u.datapath_loc.file, "t.yaml");
}

TEST(ScenarioParse, SetDatapath) {
  Scenario s;
  EXPECT_TRUE(set_datapath(s, "user:mine"));
  EXPECT_EQ(s.datapath, Datapath::user);
  EXPECT_EQ(s.datapath_name(), "user:mine");
  EXPECT_TRUE(set_datapath(s, "model"));
  EXPECT_EQ(s.datapath, Datapath::model);
  EXPECT_EQ(s.datapath_user, "");
  for (const char* bad : {"user:", "user:a-b", "user:a b", "User:x", "verilog", "", "user"}) {
    EXPECT_FALSE(set_datapath(s, bad)) << bad;
    EXPECT_EQ(s.datapath, Datapath::model) << bad;
  }
}

// IPv6 addresses on nodes, and the IP version of connections.
TEST(ScenarioParse, Ipv6NodesAndIpVersion) {
  const Scenario s = parse_scenario(R"(scenario: t
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1, ipv6: "fd00::a" }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2, ipv6: fd00::b }
  C: { mac: "02:00:00:00:00:0c", ipv6: "fd00::c" }
steps:
  - init: [A, B, C]
  - connect: { name: ab4, client: A, server: B }
  - connect: { name: ab6, client: A, server: B, ip_version: 6 }
  - connect: { name: ac, client: A, server: C }
  - connect_reject: { client: C, server: B }
  - debug_preset: { node: A, reg: STATSSNi, qp: 2, value: 0xFFFFFE }
)",
                                    "t.yaml");
  ASSERT_EQ(s.nodes.size(), 3u);
  ASSERT_TRUE(s.nodes[0].ip6.has_value());
  EXPECT_EQ(s.nodes[0].ip6->str(), "fd00::a");
  EXPECT_TRUE(s.nodes[0].has_ip);
  EXPECT_EQ(s.nodes[1].ip6->pg332_word(1), 0x0000000Bu);
  EXPECT_EQ(s.nodes[1].ip6->pg332_word(4), 0xFD000000u);
  EXPECT_FALSE(s.nodes[2].has_ip);
  EXPECT_EQ(std::get<ConnectStep>(s.steps[1]).ip_version, 4u);   // both have ip: IPv4 by default
  EXPECT_EQ(std::get<ConnectStep>(s.steps[2]).ip_version, 6u);
  EXPECT_EQ(std::get<ConnectStep>(s.steps[3]).ip_version, 6u);   // C has only ipv6
  EXPECT_EQ(std::get<ConnectRejectStep>(s.steps[4]).ip_version, 6u);
  const auto& d = std::get<DebugPresetStep>(s.steps[5]);
  EXPECT_EQ(d.ref.reg, "STATSSNi");
  EXPECT_EQ(d.value, 0xFFFFFEu);
}

// topology: switch: defaults from `link`, per-port links, ECN in both
// forms, PFC; expect_switch's value forms; directions with `switch`.
TEST(ScenarioParse, SwitchTopology) {
  const Scenario s = parse_scenario(R"(scenario: t
link: { delay_ns: 40 }
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1 }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }
  C: { mac: "02:00:00:00:00:0c", ip: 10.0.0.3 }
topology:
  switch:
    latency_ns: 500
    buffer_bytes: 131072
    unknown: flood
    ports: { C: { rate_gbps: 25, delay_ns: 1000 } }
    ecn: { min_bytes: 1000, max_bytes: 9000, probability: 0.25, weight: 0.125, mark_not_ect: true }
    pfc: { xoff_bytes: 30000, xon_bytes: 20000, priority: 5 }
steps:
  - init: [A, B, C]
  - expect_switch: { port: C, ecn_marked: ">= 2", dropped: 0, max_queue_bytes: [10, 20], no_route: "!=3" }
  - expect_frames: { dir: switch->A, tap: rx, frames: [] }
  - fault: { dir: A->C, action: drop }
)",
                                    "t.yaml");
  ASSERT_TRUE(s.topology_switch.has_value());
  const SwitchTopology& t = *s.topology_switch;
  ASSERT_EQ(t.ports.size(), 3u);
  EXPECT_EQ(t.ports[0].rate_gbps, 100u);
  EXPECT_EQ(t.ports[0].delay_ns, 40u);  // link's
  EXPECT_EQ(t.ports[2].rate_gbps, 25u);
  EXPECT_EQ(t.ports[2].delay_ns, 1000u);
  EXPECT_EQ(t.latency_ns, 500u);
  EXPECT_EQ(t.buffer_bytes, 131072u);
  EXPECT_TRUE(t.flood_unknown);
  EXPECT_TRUE(t.ecn.on && t.ecn.red && t.ecn.mark_not_ect);
  EXPECT_EQ(t.ecn.min_bytes, 1000u);
  EXPECT_EQ(t.ecn.max_bytes, 9000u);
  EXPECT_DOUBLE_EQ(t.ecn.probability, 0.25);
  EXPECT_DOUBLE_EQ(t.ecn.weight, 0.125);
  EXPECT_TRUE(t.pfc.on);
  EXPECT_EQ(t.pfc.xoff_bytes, 30000u);
  EXPECT_EQ(t.pfc.xon_bytes, 20000u);
  EXPECT_EQ(t.pfc.priority, 5u);
  EXPECT_TRUE(t.pfc.headroom_check);
  const auto& e = std::get<ExpectSwitchStep>(s.steps[1]);
  EXPECT_EQ(e.port, "C");
  ASSERT_EQ(e.checks.size(), 4u);  // file order
  EXPECT_EQ(e.checks[0].counter, "ecn_marked");
  EXPECT_EQ(e.checks[0].str(), ">= 2");
  EXPECT_TRUE(e.checks[0].holds(2) && !e.checks[0].holds(1));
  EXPECT_EQ(e.checks[1].str(), "== 0");
  EXPECT_EQ(e.checks[2].str(), "in [10, 20]");
  EXPECT_TRUE(e.checks[2].holds(10) && e.checks[2].holds(20) && !e.checks[2].holds(21));
  EXPECT_EQ(e.checks[3].str(), "!= 3");
  EXPECT_EQ(std::get<ExpectFramesStep>(s.steps[2]).dir.from, "switch");
  // Without the key: point to point, as every file before it.
  EXPECT_FALSE(parse_scenario("scenario: t\nnodes:\n  A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\nsteps:\n"
                              "  - init: [A]\n",
                              "t.yaml")
                   .topology_switch.has_value());
  EXPECT_FALSE(parse_scenario("scenario: t\ntopology: point_to_point\nnodes:\n  A: {mac: '02:00:00:00:00:0a', ip: "
                              "10.0.0.1}\nsteps:\n  - init: [A]\n",
                              "t.yaml")
                   .topology_switch.has_value());
}

// expect_qp: node, QPN and the values in file order, in expect_switch's forms.
TEST(ScenarioParse, ExpectQp) {
  const Scenario s = parse_scenario(R"(scenario: t
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1, num_qp: 12 }
steps:
  - init: [A]
  - expect_qp: { node: A, qp: 12, outstanding: "<= 8", outstanding_limit: 8 }
)",
                                    "t.yaml");
  const auto& e = std::get<ExpectQpStep>(s.steps[1]);
  EXPECT_EQ(e.node, "A");
  EXPECT_EQ(e.qp, 12u);
  ASSERT_EQ(e.checks.size(), 2u);
  EXPECT_EQ(e.checks[0].counter, "outstanding");
  EXPECT_EQ(e.checks[0].str(), "<= 8");
  EXPECT_EQ(e.checks[1].counter, "outstanding_limit");
  EXPECT_EQ(e.checks[1].str(), "== 8");
}
