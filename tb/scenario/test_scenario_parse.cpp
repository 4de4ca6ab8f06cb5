// Tests for model/scenario/scenario.h: the full example (good/full.yaml) parses
// to the right values, defaults applied, and a minimal file to the
// defaults.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.h"
#include "tb/scenario/scenario_fixtures.h"

using namespace ernic;
using namespace ernic::test;

TEST(ScenarioParse, FullExample) {
  const std::string path = kDir + "/good/full.yaml";
  const Scenario s = load_scenario(path);
  EXPECT_EQ(s.file, path);
  EXPECT_EQ(s.name, "full_example");
  EXPECT_EQ(s.description, "RC write, send and read between two nodes");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.limits.sim_time_us, 5000u);
  EXPECT_EQ(s.limits.watchdog_us, 200u);  // default
  EXPECT_DOUBLE_EQ(s.clocks.core_mhz, 250.0);
  EXPECT_DOUBLE_EQ(s.clocks.cmac_mhz, 322.265625);  // default
  EXPECT_EQ(s.link.rate_gbps, 100u);                // default
  EXPECT_EQ(s.link.delay_ns, 500u);

  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].name, "A");
  EXPECT_EQ(s.nodes[0].mac.str(), "02:00:00:00:00:0a");
  EXPECT_EQ(s.nodes[0].ip.v, 0x0A000001u);
  EXPECT_EQ(s.nodes[0].num_qp, 8u);       // default
  EXPECT_EQ(s.nodes[0].memory_mib, 64u);  // default
  EXPECT_EQ(s.nodes[0].loc.line, 13);
  EXPECT_EQ(s.nodes[1].name, "B");
  EXPECT_EQ(s.nodes[1].mac.str(), "02:00:00:00:00:0b");
  EXPECT_EQ(s.nodes[1].ip.str(), "10.0.0.2");
  EXPECT_EQ(s.nodes[1].num_qp, 16u);
  EXPECT_EQ(s.nodes[1].memory_mib, 128u);
  EXPECT_EQ(s.nodes[2].name, "C");
  ASSERT_NE(s.find_node("B"), nullptr);
  EXPECT_EQ(s.find_node("B")->num_qp, 16u);
  EXPECT_EQ(s.find_node("Z"), nullptr);

  ASSERT_EQ(s.steps.size(), 12u);
  for (const auto& st : s.steps) EXPECT_EQ(step_loc(st).file, path);

  const auto& init = step_as<InitStep>(s, 0);
  EXPECT_EQ(init.nodes, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(init.loc.line, 24);
  EXPECT_EQ(init.loc.column, 5);
  EXPECT_STREQ(step_kind(s.steps[0]), "init");

  const auto& mr1 = step_as<RegisterMrStep>(s, 1);
  EXPECT_EQ(mr1.node, "A");
  EXPECT_EQ(mr1.name, "src");
  EXPECT_EQ(mr1.length, 65536u);
  EXPECT_EQ(mr1.access, Access::rw);  // default
  EXPECT_EQ(mr1.pd, 1u);              // default
  EXPECT_EQ(mr1.loc.line, 25);
  EXPECT_EQ(mr1.loc.column, 5);
  const auto& mr2 = step_as<RegisterMrStep>(s, 2);
  EXPECT_EQ(mr2.access, Access::w);
  EXPECT_EQ(mr2.pd, 3u);

  const auto& f1 = step_as<FillStep>(s, 3);
  EXPECT_EQ(f1.pattern, Pattern::random);
  EXPECT_EQ(f1.seed, 42u);  // the scenario seed
  EXPECT_EQ(f1.offset, 0u);
  EXPECT_EQ(f1.length, 65536u);  // whole MR
  const auto& f2 = step_as<FillStep>(s, 4);
  EXPECT_EQ(f2.node, "B");
  EXPECT_EQ(f2.mr, "dst");
  EXPECT_EQ(f2.pattern, Pattern::constant);
  EXPECT_EQ(f2.value, 0xAA);
  EXPECT_EQ(f2.offset, 4096u);
  EXPECT_EQ(f2.length, 100u);

  const auto& c = step_as<ConnectStep>(s, 5);
  EXPECT_EQ(c.name, "c1");
  EXPECT_EQ(c.client, "A");
  EXPECT_EQ(c.server, "B");
  EXPECT_EQ(c.client_mr, "src");
  EXPECT_EQ(c.server_mr, "dst");
  EXPECT_EQ(c.pmtu, 1024u);
  EXPECT_EQ(c.sq_depth, 64u);  // default
  EXPECT_EQ(c.rq_depth, 16u);  // default
  EXPECT_EQ(c.client_psn, std::optional<uint32_t>(100));  // from start_psn
  EXPECT_EQ(c.server_psn, std::nullopt);                  // auto overrides start_psn
  EXPECT_EQ(c.client_qp, std::optional<uint32_t>(5));
  EXPECT_EQ(c.server_qp, std::nullopt);
  EXPECT_EQ(c.loc.line, 29);

  const auto& p = step_as<PostStep>(s, 6);
  EXPECT_EQ(p.conn, "c1");
  EXPECT_EQ(p.node, "A");
  EXPECT_EQ(p.doorbell, Doorbell::each);
  EXPECT_EQ(p.repeat, 2u);
  ASSERT_EQ(p.wqes.size(), 2u);
  EXPECT_EQ(p.wqes[0].opcode, WqeOpcode::write);
  EXPECT_EQ(p.wqes[0].wr_id, 1u);
  EXPECT_EQ(p.wqes[0].local_mr, "src");
  EXPECT_EQ(p.wqes[0].local_offset, 0u);
  EXPECT_EQ(p.wqes[0].length, 65536u);
  EXPECT_EQ(p.wqes[0].remote_offset, 0u);
  EXPECT_EQ(p.wqes[0].immdt, 0u);
  EXPECT_EQ(p.wqes[0].loc.line, 45);
  EXPECT_EQ(p.wqes[0].loc.column, 11);
  EXPECT_EQ(p.wqes[1].opcode, WqeOpcode::send_imm);
  EXPECT_EQ(p.wqes[1].local_offset, 64u);
  EXPECT_EQ(p.wqes[1].immdt, 0x12345678u);

  const auto& w = step_as<WaitCompletionsStep>(s, 7);
  EXPECT_EQ(w.conn, "c1");
  EXPECT_EQ(w.node, "A");
  EXPECT_EQ(w.count, 2u);  // default: the number of expect entries
  EXPECT_EQ(w.timeout_us, 500u);
  ASSERT_EQ(w.expect.size(), 2u);
  EXPECT_EQ(w.expect[0].wr_id, std::optional<uint32_t>(1));
  EXPECT_EQ(w.expect[0].opcode, std::optional<WqeOpcode>(WqeOpcode::write));
  EXPECT_EQ(w.expect[0].error, std::optional<bool>(false));
  EXPECT_EQ(w.expect[1].wr_id, std::optional<uint32_t>(2));
  EXPECT_EQ(w.expect[1].opcode, std::nullopt);
  EXPECT_EQ(w.expect[1].error, std::nullopt);

  const auto& m1 = step_as<CheckMemoryStep>(s, 8);
  EXPECT_EQ(m1.node, "B");
  EXPECT_EQ(m1.mr, "dst");
  EXPECT_EQ(m1.offset, 0u);
  EXPECT_EQ(m1.length, 65536u);
  ASSERT_TRUE(m1.equals.has_value());
  EXPECT_FALSE(m1.pattern.has_value());
  EXPECT_EQ(m1.equals->node, "A");
  EXPECT_EQ(m1.equals->mr, "src");
  EXPECT_EQ(m1.equals->offset, 0u);
  const auto& m2 = step_as<CheckMemoryStep>(s, 9);
  EXPECT_EQ(m2.offset, 8u);
  EXPECT_EQ(m2.length, 16u);
  ASSERT_TRUE(m2.pattern.has_value());
  EXPECT_EQ(m2.pattern->pattern, Pattern::random);
  EXPECT_EQ(m2.pattern->seed, 42u);

  EXPECT_EQ(step_as<WaitStep>(s, 10).us, 10u);
  EXPECT_EQ(step_as<InitStep>(s, 11).nodes, (std::vector<std::string>{"C"}));
  EXPECT_STREQ(step_kind(s.steps[11]), "init");
}

TEST(ScenarioParse, MinimalDefaults) {
  const Scenario s = parse_scenario(
      "scenario: m\nnodes:\n  N1: {mac: '02:00:00:00:00:01', ip: 192.168.1.1}\nsteps:\n  - init: N1\n",
      "m.yaml");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.limits.sim_time_us, 10000u);
  EXPECT_EQ(s.limits.watchdog_us, 200u);
  EXPECT_DOUBLE_EQ(s.clocks.core_mhz, 200.0);
  EXPECT_DOUBLE_EQ(s.clocks.cmac_mhz, 322.265625);
  EXPECT_EQ(s.link.rate_gbps, 100u);
  EXPECT_EQ(s.link.delay_ns, 100u);
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].ip.v, 0xC0A80101u);
  EXPECT_EQ(step_loc(s.steps[0]).str(), "m.yaml:5:5");
}
