// Tests for model/system/scenario: the full example parses to the right
// values (defaults applied), every file in bad/ fails with the exact
// position and key, the fill generator is deterministic, and the examples in
// scenarios/README.md are its example files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "model/scenario/scenario.h"

namespace fs = std::filesystem;
using namespace ernic;

namespace {

const std::string kDir = SCENARIO_TEST_DIR;

template <class T>
const T& step_as(const Scenario& s, size_t i) {
  EXPECT_LT(i, s.steps.size());
  const T* p = std::get_if<T>(&s.steps.at(i));
  EXPECT_NE(p, nullptr) << "step " << i << " is " << step_kind(s.steps.at(i));
  return *p;
}

ScenarioError parse_error(const std::string& text) {
  try {
    parse_scenario(text, "t.yaml");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << text;
  return ScenarioError("", 0, 0, "", "");
}

}  // namespace

// --------------------------------------------------------- valid example ---

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

// Every issue-3 construct of good/extended.yaml, with its values.
TEST(ScenarioParse, Extended) {
  const Scenario s = load_scenario(kDir + "/good/extended.yaml");
  EXPECT_EQ(s.pcie.gen, 4u);
  EXPECT_EQ(s.pcie.lanes, 8u);
  EXPECT_EQ(s.pcie.mps, 1024u);
  EXPECT_EQ(s.pcie.mrrs, 128u);
  EXPECT_EQ(s.pcie.read_latency_ns, 256u);
  EXPECT_EQ(s.datapath, Datapath::model);
  EXPECT_EQ(s.layout, RegLayout::v4x);
  ASSERT_EQ(s.steps.size(), 37u);

  const auto& w0 = step_as<RegWriteStep>(s, 0);
  EXPECT_EQ(w0.ref.node, "A");
  EXPECT_EQ(w0.ref.reg, "QPCONFi");
  EXPECT_EQ(w0.ref.qp, std::optional<uint32_t>(2));
  EXPECT_EQ(w0.ref.mr, std::nullopt);
  EXPECT_EQ(w0.ref.field, "PMTU");
  EXPECT_EQ(w0.value, 4u);
  EXPECT_EQ(w0.loc.line, 11);
  EXPECT_STREQ(step_kind(s.steps[0]), "reg_write");
  const auto& w1 = step_as<RegWriteStep>(s, 1);
  EXPECT_EQ(w1.ref.reg, "ACCESSDESC");
  EXPECT_EQ(w1.ref.mr, std::optional<uint32_t>(255));
  EXPECT_EQ(w1.ref.qp, std::nullopt);
  EXPECT_EQ(w1.ref.field, "");
  EXPECT_EQ(w1.value, 0xFFFFFFFFu);
  const auto& rd = step_as<RegReadStep>(s, 2);
  EXPECT_EQ(rd.ref.reg, "XRNICCONF");
  EXPECT_EQ(rd.ref.qp, std::nullopt);
  EXPECT_EQ(rd.ref.mr, std::nullopt);
  const auto& e3 = step_as<RegExpectStep>(s, 3);
  EXPECT_EQ(e3.ref.qp, std::optional<uint32_t>(1));
  EXPECT_EQ(e3.ref.field, "FATAL");
  EXPECT_EQ(e3.value, 0u);
  EXPECT_EQ(e3.mask, 1u);
  EXPECT_TRUE(e3.negate);
  const auto& e4 = step_as<RegExpectStep>(s, 4);
  EXPECT_EQ(e4.ref.node, "B");
  EXPECT_EQ(e4.ref.qp, std::optional<uint32_t>(16));
  EXPECT_EQ(e4.value, 0x10u);
  EXPECT_EQ(e4.mask, 0xFFFFFFFFu);  // whole register
  EXPECT_FALSE(e4.negate);
  const auto& poll = step_as<RegPollStep>(s, 5);
  EXPECT_EQ(poll.ref.reg, "CQHEADi");
  EXPECT_EQ(poll.value, 1u);
  EXPECT_EQ(poll.mask, 0xFFFFu);
  EXPECT_EQ(poll.timeout_us, 50u);
  EXPECT_EQ(poll.interval_ns, 20u);

  const auto& m6 = step_as<MemWriteStep>(s, 6);
  EXPECT_EQ(m6.node, "B");
  EXPECT_EQ(m6.addr, 0xFFFF0u);
  EXPECT_EQ(m6.bytes, (std::vector<uint8_t>{1, 0, 0, 0, 0xD0, 0xC0, 0xB0, 0xA0}));
  EXPECT_FALSE(m6.stray);
  const auto& m7 = step_as<MemWriteStep>(s, 7);
  EXPECT_EQ(m7.bytes, (std::vector<uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_TRUE(m7.stray);
  const auto& m8 = step_as<MemExpectStep>(s, 8);
  EXPECT_EQ(m8.addr, 0xFFFFFu);
  EXPECT_EQ(m8.bytes, (std::vector<uint8_t>{255}));

  const auto& dr = step_as<DeregisterMrStep>(s, 12);
  EXPECT_EQ(dr.node, "B");
  EXPECT_EQ(dr.name, "dst");
  EXPECT_EQ(step_as<RegisterMrStep>(s, 13).length, 8192u);  // the name is free again
  const auto& rj = step_as<ConnectRejectStep>(s, 14);
  EXPECT_EQ(rj.client, "A");
  EXPECT_EQ(rj.server, "B");
  EXPECT_EQ(rj.reason, 28u);  // default
  EXPECT_EQ(step_as<ConnectRejectStep>(s, 15).reason, 0xFFFFu);
  const auto& dc = step_as<DisconnectStep>(s, 17);
  EXPECT_EQ(dc.conn, "c1");
  EXPECT_EQ(dc.node, "B");
  EXPECT_EQ(step_as<ConnectStep>(s, 18).client_qp, std::optional<uint32_t>(2));  // QP 2 free again

  const auto& f19 = step_as<FaultStep>(s, 19);
  EXPECT_EQ(f19.name, "fault@30");
  ASSERT_EQ(f19.dirs.size(), 1u);
  EXPECT_EQ(f19.dirs[0].from, "A");
  EXPECT_EQ(f19.dirs[0].to, "B");
  EXPECT_EQ(f19.action, FaultAction::drop);
  EXPECT_EQ(f19.count, 1u);
  EXPECT_TRUE(f19.match.opcodes.empty());
  EXPECT_EQ(f19.match.psn, std::nullopt);
  EXPECT_EQ(f19.match.nth, std::nullopt);
  EXPECT_EQ(f19.match.probability, std::nullopt);
  const auto& f20 = step_as<FaultStep>(s, 20);
  EXPECT_EQ(f20.name, "my fault");
  ASSERT_EQ(f20.dirs.size(), 2u);
  EXPECT_EQ(f20.dirs[0].from, "A");
  EXPECT_EQ(f20.dirs[1].from, "B");
  EXPECT_EQ(f20.dirs[1].to, "A");
  EXPECT_EQ(f20.match.opcodes, (std::vector<uint8_t>{0x07, 0x11, 0x81}));
  EXPECT_EQ(f20.match.psn, std::optional<uint32_t>(0xFFFFFF));
  EXPECT_EQ(f20.match.dest_qp, std::optional<uint32_t>(2));
  EXPECT_EQ(f20.match.nth, std::optional<uint32_t>(3));
  EXPECT_EQ(f20.match.probability, std::optional<double>(0.25));
  EXPECT_EQ(f20.action, FaultAction::reorder);
  EXPECT_EQ(f20.count, 0u);
  EXPECT_EQ(f20.reorder_after, 2u);
  const auto& f21 = step_as<FaultStep>(s, 21);
  EXPECT_EQ(f21.dirs[0].from, "B");  // "B -> A": spaces allowed
  EXPECT_EQ(f21.dirs[0].to, "A");
  EXPECT_TRUE(f21.match.opcodes.empty());  // any
  EXPECT_EQ(f21.action, FaultAction::corrupt);
  EXPECT_EQ(f21.corrupt_field, "bth.psn");
  EXPECT_EQ(f21.corrupt_byte, std::nullopt);
  EXPECT_EQ(f21.corrupt_bit, 7u);
  const auto& f22 = step_as<FaultStep>(s, 22);
  EXPECT_EQ(f22.match.opcodes, (std::vector<uint8_t>{0x0A}));
  EXPECT_EQ(f22.corrupt_byte, std::optional<uint32_t>(9599));
  EXPECT_EQ(f22.corrupt_field, "");
  EXPECT_EQ(f22.corrupt_bit, 0u);
  EXPECT_EQ(f22.reorder_after, 1u);  // default
  const auto& f23 = step_as<FaultStep>(s, 23);
  EXPECT_EQ(f23.action, FaultAction::delay);
  EXPECT_EQ(f23.delay_ns, 500u);
  EXPECT_EQ(f23.count, 5u);
  const auto& f24 = step_as<FaultStep>(s, 24);
  EXPECT_EQ(f24.action, FaultAction::duplicate);
  EXPECT_EQ(f24.match.probability, std::optional<double>(1.0));

  const auto& l25 = step_as<LinkStep>(s, 25);
  EXPECT_EQ(l25.dirs.size(), 2u);
  EXPECT_FALSE(l25.up);
  const auto& l26 = step_as<LinkStep>(s, 26);
  ASSERT_EQ(l26.dirs.size(), 1u);
  EXPECT_EQ(l26.dirs[0].from, "A");
  EXPECT_TRUE(l26.up);

  const auto& ef = step_as<ExpectFramesStep>(s, 27);
  EXPECT_EQ(ef.dir.from, "A");
  EXPECT_EQ(ef.dir.to, "B");
  EXPECT_EQ(ef.tap, Tap::rx);
  ASSERT_EQ(ef.frames.size(), 6u);
  EXPECT_EQ(ef.frames[0].opcodes, (std::vector<uint8_t>{0x06}));
  EXPECT_EQ(ef.frames[0].psn, std::optional<uint32_t>(0x10));
  EXPECT_FALSE(ef.frames[0].psn_next);
  EXPECT_EQ(ef.frames[0].min, 1u);
  EXPECT_EQ(ef.frames[0].max, 1u);
  EXPECT_TRUE(ef.frames[1].psn_next);
  EXPECT_EQ(ef.frames[1].psn, std::nullopt);
  EXPECT_EQ(ef.frames[1].min, 0u);
  EXPECT_EQ(ef.frames[1].max, FramePattern::kUnbounded);
  EXPECT_EQ(ef.frames[2].opcodes, (std::vector<uint8_t>{0x08, 0x0A}));
  EXPECT_EQ(ef.frames[2].min, 1u);
  EXPECT_EQ(ef.frames[2].max, FramePattern::kUnbounded);
  EXPECT_TRUE(ef.frames[3].opcodes.empty());
  EXPECT_EQ(ef.frames[3].min, 3u);
  EXPECT_EQ(ef.frames[3].max, 3u);
  EXPECT_EQ(ef.frames[4].syndrome, std::optional<uint8_t>(0x60));
  EXPECT_EQ(ef.frames[4].dest_qp, std::optional<uint32_t>(2));
  EXPECT_EQ(ef.frames[4].min, 0u);
  EXPECT_EQ(ef.frames[4].max, 2u);
  EXPECT_EQ(ef.frames[5].syndrome, std::optional<uint8_t>(0x1F));
  EXPECT_EQ(ef.frames[5].min, 2u);
  EXPECT_EQ(ef.frames[5].max, 2u);
  const auto& ef2 = step_as<ExpectFramesStep>(s, 28);
  EXPECT_EQ(ef2.tap, Tap::tx);  // default
  EXPECT_TRUE(ef2.frames.empty());

  const auto& i29 = step_as<ExpectIdleStep>(s, 29);
  EXPECT_EQ(i29.us, 50u);
  ASSERT_EQ(i29.dirs.size(), 2u);  // default both
  EXPECT_EQ(i29.dirs[0].from, "A");
  EXPECT_EQ(i29.dirs[1].from, "B");
  const auto& i30 = step_as<ExpectIdleStep>(s, 30);
  ASSERT_EQ(i30.dirs.size(), 1u);
  EXPECT_EQ(i30.dirs[0].from, "B");

  const auto& u31 = step_as<WaitUntilStep>(s, 31);
  EXPECT_EQ(u31.timeout_us, 100u);
  ASSERT_TRUE(u31.frames_dir.has_value());
  EXPECT_EQ(u31.frames_dir->from, "A");
  EXPECT_EQ(u31.frames_count, 3u);
  EXPECT_EQ(u31.frames_opcodes, (std::vector<uint8_t>{0x11}));
  EXPECT_FALSE(u31.reg.has_value());
  const auto& u32 = step_as<WaitUntilStep>(s, 32);
  EXPECT_EQ(u32.timeout_us, 1000u);
  EXPECT_EQ(u32.frames_count, 1u);
  EXPECT_TRUE(u32.frames_opcodes.empty());
  const auto& u33 = step_as<WaitUntilStep>(s, 33);
  EXPECT_FALSE(u33.frames_dir.has_value());
  ASSERT_TRUE(u33.reg.has_value());
  EXPECT_EQ(u33.reg->reg, "STATQPi");
  EXPECT_EQ(u33.reg->field, "NAK_SYNDROME");
  EXPECT_EQ(u33.value, 0x60u);
  EXPECT_EQ(u33.mask, 0x7Fu);  // the field's 7 bits
  EXPECT_EQ(u33.timeout_us, 7u);

  const auto& rep = *step_as<std::shared_ptr<RepeatStep>>(s, 34);
  EXPECT_STREQ(step_kind(s.steps[34]), "repeat");
  EXPECT_EQ(rep.loc.line, 60);
  EXPECT_EQ(rep.count, 3u);
  ASSERT_EQ(rep.steps.size(), 3u);
  EXPECT_EQ(std::get<PostStep>(rep.steps[0]).wqes[0].wr_id, 1u);
  EXPECT_EQ(step_loc(rep.steps[0]).line, 63);
  EXPECT_EQ(step_loc(rep.steps[0]).column, 11);
  const auto& inner = *std::get<std::shared_ptr<RepeatStep>>(rep.steps[1]);
  EXPECT_EQ(inner.count, 2u);
  ASSERT_EQ(inner.steps.size(), 1u);
  EXPECT_EQ(std::get<WaitStep>(inner.steps[0]).us, 1u);
  const auto& rpar = *std::get<std::shared_ptr<ParallelStep>>(rep.steps[2]);
  ASSERT_EQ(rpar.branches.size(), 2u);
  EXPECT_EQ(rpar.branches[0].name, "x");
  EXPECT_EQ(std::get<BarrierStep>(rpar.branches[0].steps[0]).name, "b1");
  EXPECT_EQ(std::get<BarrierStep>(rpar.branches[1].steps[0]).name, "b1");

  const auto& par = *step_as<std::shared_ptr<ParallelStep>>(s, 35);
  EXPECT_STREQ(step_kind(s.steps[35]), "parallel");
  ASSERT_EQ(par.branches.size(), 3u);
  EXPECT_EQ(par.branches[0].name, "a");
  EXPECT_EQ(par.branches[0].loc.line, 72);
  EXPECT_EQ(par.branches[1].name, "b");
  EXPECT_EQ(par.branches[2].name, "c");
  ASSERT_EQ(par.branches[0].steps.size(), 4u);
  const auto& b1 = std::get<BarrierStep>(par.branches[0].steps[1]);
  EXPECT_EQ(b1.name, "sync1");
  EXPECT_EQ(b1.loc.line, 75);
  EXPECT_STREQ(step_kind(par.branches[0].steps[1]), "barrier");
  EXPECT_EQ(std::get<RegisterMrStep>(par.branches[1].steps[1]).name, "late");
  EXPECT_EQ(step_as<FillStep>(s, 36).mr, "late");  // created in a branch, visible after it
}

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


// ------------------------------------------------------------- bad files ---

struct BadCase {
  const char* file;
  int line;
  int column;
  const char* key;
  const char* message_part;  // a substring of message()
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class ScenarioBadFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(ScenarioBadFile, ExactError) {
  const BadCase& c = GetParam();
  const std::string path = kDir + "/bad/" + c.file;
  try {
    load_scenario(path);
    FAIL() << path << " parsed without error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << e.what();
    // what() = FILE:LINE:COLUMN: key 'KEY': message
    std::string want = path + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
    if (*c.key) want += std::string("key '") + c.key + "': ";
    want += e.message();
    EXPECT_EQ(std::string(e.what()), want);
  }
}

// The same files through the command line: exit 2, and stderr names the
// file, line, column and key (issue 3: "any error in a file gives exit 2
// with file, line, column and the key").
TEST_P(ScenarioBadFile, CliExitsTwoNamingThePlace) {
  const BadCase& c = GetParam();
  const std::string path = kDir + "/bad/" + c.file;
  const std::string cmd = std::string(ERNIC_SIM_PROGRAM) + " run '" + path + "' --quiet 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string err;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) err.append(buf, n);
  const int st = pclose(p);
  ASSERT_TRUE(WIFEXITED(st)) << err;
  EXPECT_EQ(WEXITSTATUS(st), 2) << err;
  std::string want = path + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
  if (*c.key) want += std::string("key '") + c.key + "': ";
  EXPECT_NE(err.find(want), std::string::npos) << "stderr: " << err << "\nwanted: " << want;
}

const BadCase kBadCases[] = {
    {"unknown_top_key.yaml", 3, 1, "seeds", "unknown key 'seeds' (did you mean 'seed'?)"},
    {"unknown_step_key.yaml", 11, 40, "steps[1].register_mr.lenght", "unknown key 'lenght' (did you mean 'length'?)"},
    {"misspelled_step_kind.yaml", 11, 5, "steps[1].regster_mr",
     "unknown step kind 'regster_mr' (did you mean 'register_mr'?)"},
    {"string_for_integer.yaml", 14, 15, "steps[1].register_mr.length", "expected a non-negative integer"},
    {"negative_number.yaml", 3, 13, "link.delay_ns", "must not be negative"},
    {"out_of_range.yaml", 6, 13, "nodes.A.num_qp", "1000 is out of range [8, 256]"},
    {"missing_nodes.yaml", 1, 1, "nodes", "missing required key 'nodes'"},
    {"missing_node_ip.yaml", 7, 5, "nodes.B.ip", "missing required key 'ip'"},
    {"malformed_mac.yaml", 4, 10, "nodes.A.mac", "malformed MAC address"},
    {"malformed_ip.yaml", 5, 9, "nodes.A.ip", "malformed IPv4 address '10.0.0.256'"},
    {"step_two_keys.yaml", 11, 5, "steps[0]", "exactly one key"},
    {"undefined_mr.yaml", 12, 26, "steps[2].fill.mr", "unknown MR 'scr' on node A (did you mean 'src'?)"},
    {"undefined_node.yaml", 10, 18, "steps[0].init[2]", "unknown node 'X'"},
    {"undefined_conn.yaml", 15, 13, "steps[4].post.conn", "unknown connection 'c2'"},
    {"yaml_syntax.yaml", 11, 9, "", "YAML syntax error"},
    {"duplicate_mr.yaml", 12, 35, "steps[2].register_mr.name", "MR 'dst' is already registered on node B (at line 11)"},
    {"bad_wqe_opcode.yaml", 19, 21, "steps[4].post.wqes[1].opcode", "unknown value 'wrte' (did you mean 'write'?)"},
    {"link_rate.yaml", 3, 14, "link.rate_gbps", "only 100"},
    {"duplicate_key.yaml", 10, 1, "seed", "duplicate key (first given at line 2)"},
    {"check_equals_and_pattern.yaml", 16, 7, "steps[2].check_memory.pattern", "not both"},
    {"used_before_init.yaml", 11, 26, "steps[1].register_mr.node", "before an init step"},
    {"fill_out_of_mr.yaml", 12, 76, "steps[2].fill.length", "exceeds MR src (4096 bytes)"},
    // Issue 3: register level, memory, wire, expectations, control.
    {"reg_unknown_register.yaml", 7, 33, "steps[1].reg_expect.reg",
     "unknown register 'QPCONF' (did you mean 'QPCONFi'?)"},
    {"reg_missing_qp.yaml", 8, 7, "steps[1].reg_write.qp", "missing required key 'qp': SQPIi is a per-QP register"},
    {"reg_not_on_qp1.yaml", 7, 43, "steps[1].reg_read.qp", "SQPSNi does not exist for QP1"},
    {"reg_value_too_wide.yaml", 7, 68, "steps[1].reg_write.value",
     "8 does not fit field QPCONFi.PMTU (3 bits): at most 0x7"},
    {"reg_unknown_field.yaml", 7, 54, "steps[1].reg_poll.field",
     "unknown field 'PMUT' of QPCONFi (did you mean 'PMTU'?)"},
    {"reg_qp_on_global.yaml", 7, 42, "steps[1].reg_read.qp", "qp does not apply: XRNICCONF is a global register"},
    {"mem_two_forms.yaml", 7, 56, "steps[1].mem_write.u32", "give exactly one of bytes, u32, u64"},
    {"mem_outside_memory.yaml", 7, 34, "steps[1].mem_expect.addr",
     "addr 0x3fffffe + 4 bytes is outside node B's memory (0x4000000 bytes, memory_mib 64)"},
    {"fault_unknown_node.yaml", 7, 19, "steps[1].fault.dir", "unknown node 'C' in direction 'A->C'"},
    {"fault_key_of_other_action.yaml", 10, 7, "steps[1].fault.after",
     "after applies only to action: reorder, not drop"},
    {"fault_corrupt_byte_and_field.yaml", 7, 55, "steps[1].fault.byte", "give either byte or field, not both"},
    {"fault_corrupt_bit_and_value.yaml", 7, 69, "steps[1].fault.value",
     "give either bit (a flip) or value (the new byte), not both"},
    {"fault_repair_of_drop.yaml", 7, 39, "steps[1].fault.repair", "repair applies only to action: corrupt, not drop"},
    {"fault_delay_without_delay.yaml", 8, 7, "steps[1].fault.delay_ns", "missing required key 'delay_ns'"},
    {"fault_unknown_opcode.yaml", 7, 59, "steps[1].fault.match.opcode[1]",
     "unknown opcode 'RC_WRITE_MIDLE' (did you mean 'RC_WRITE_MIDDLE'?)"},
    {"fault_probability.yaml", 7, 47, "steps[1].fault.match.probability", "1.5 is out of range (0, 1]"},
    {"frames_psn_next_first.yaml", 10, 42, "steps[1].expect_frames.frames[0].psn", "psn: next needs a frame before it"},
    {"frames_repeat_range.yaml", 11, 50, "steps[1].expect_frames.frames[1].repeat[1]", "max 1 is less than min 3"},
    {"frames_syndrome_without_aeth.yaml", 7, 78, "steps[1].expect_frames.frames[0].syndrome",
     "RC_WRITE_ONLY carries no AETH"},
    {"frames_both_directions.yaml", 7, 27, "steps[1].expect_frames.dir", "give one direction 'X->Y'"},
    {"wait_until_frames_and_reg.yaml", 10, 7, "steps[1].wait_until.frames", "give either frames or reg, not both"},
    {"repeat_connect.yaml", 12, 11, "steps[2].repeat.steps[1].connect",
     "connect is not allowed inside repeat (the repeat at line 8 runs its steps 3 times"},
    {"barrier_outside_parallel.yaml", 8, 5, "steps[2].barrier", "barrier is allowed only in the steps of a parallel branch"},
    {"barrier_mismatch.yaml", 16, 22, "steps[1].parallel[1].steps[1].barrier",
     "barrier 'three' where branch a passes barrier 'two' (line 12)"},
    {"barrier_missing.yaml", 9, 9, "steps[1].parallel[1]",
     "branch b passes 1 barrier, but branch a then passes barrier 'two' (line 8)"},
    {"parallel_one_branch.yaml", 8, 7, "steps[1].parallel", "at least two branches, got 1"},
    {"parallel_nested_unknown_conn.yaml", 16, 27, "steps[4].parallel[1].steps[0].post.conn",
     "unknown connection 'c2' (did you mean 'c1'?)"},
    {"post_after_disconnect.yaml", 11, 19, "steps[5].post.conn", "connection 'c1' was disconnected at line 10"},
    {"fill_after_deregister.yaml", 11, 26, "steps[5].fill.mr", "MR 'dst' of node B was deregistered at line 10"},
    {"layout_unknown.yaml", 2, 9, "layout", "unknown value '4.0' (did you mean '4.x'?)"},
    {"pcie_mps.yaml", 4, 8, "pcie.mps", "mps must be a power of two in [128, 1024], got 200"},
    {"recv_equals_without_length.yaml", 10, 58, "steps[4].recv.expect[0].equals",
     "equals needs the number of bytes to compare: give length"},
    {"recv_write_opcode.yaml", 10, 52, "steps[4].recv.expect[0].opcode",
     "a receiver sees send, send_imm, send_inv or write_imm messages"},
    {"bypass_roce_port.yaml", 7, 47, "steps[1].bypass_send.udp_dport",
     "UDP port 4791 is RoCEv2: such a frame goes to ERNIC, not to the bypass path"},
    {"bypass_runt.yaml", 7, 63, "steps[1].bypass_send.length",
     "the frame would have 24 bytes; Ethernet needs at least 60 before the FCS (length >= 46)"},
    {"ack_mode_unknown.yaml", 4, 61, "nodes.B.ack.mode", "unknown value 'timeouts' (did you mean 'timeout'?)"},
    {"connect_qpn_256_layout31.yaml", 9, 72, "steps[1].connect.server_qp",
     "QP 256 of node B: the 3.1 layout enables at most 255 QPs (XRNICCONF[15:8])"},
    {"qp_adopt_qpn_256_layout31.yaml", 10, 23, "steps[2].qp_adopt.name",
     "QP 256 of node B: the 3.1 layout enables at most 255 QPs (XRNICCONF[15:8])"},
    {"mr_cache_unknown.yaml", 4, 58, "nodes.B.mr_cache", "unknown value 'cma' (did you mean 'cam'?)"},
    {"mr_cache_entries_table.yaml", 4, 82, "nodes.B.mr_cache.entries", "entries is a parameter of mode 'cam'"},
    {"mr_cache_entries_range.yaml", 4, 80, "nodes.B.mr_cache.entries", "0 is out of range [1, 256]"},
    {"rx_handler_gbps_zero.yaml", 4, 89, "nodes.B.rx.handler_gbps", "0 is out of range (0, 1000]"},
    {"tx_underflow_unknown_key.yaml", 3, 79, "nodes.A.test_tx_underflow.beat",
     "unknown key 'beat' (known keys: frame, after_beat, cycles)"},
    {"malformed_ipv6.yaml", 5, 11, "nodes.A.ipv6", "malformed IPv6 address 'fd00::g'"},
    {"ip_version_missing.yaml", 7, 60, "steps[1].connect.ip_version", "ip_version 6: node B has no `ipv6` address"},
    {"debug_preset_reg.yaml", 6, 35, "steps[1].debug_preset.reg",
     "debug_preset sets STATSSNi or STATMSNi only, not SQPSNi"},
    {"msn_without_aeth.yaml", 7, 67, "steps[1].expect_frames.frames[0].msn",
     "msn is the AETH's, and RC_SEND_ONLY carries no AETH"},
    {"expect_idle_three_nodes.yaml", 8, 18, "steps[1].expect_idle.dir",
     "missing required key 'dir': the default 'both' means both directions of a two-node topology, and this one "
     "has 3 nodes"},
    // The QP-setup offload (node key qp_setup_fsm; qp_setup, qp_release, qp_adopt).
    {"qp_setup_no_fsm.yaml", 7, 23, "steps[1].qp_setup.node", "node B has no qp_setup_fsm"},
    {"qp_setup_twice.yaml", 8, 30, "steps[2].qp_setup.qp",
     "QP 2 of node A is already set up (qp_setup at line 7): this one would end with 0x0B"},
    {"qp_setup_pool_range.yaml", 3, 70, "nodes.A.qp_setup_fsm.pool", "17 is out of range [1, 16]"},
    {"qp_release_unknown.yaml", 6, 32, "steps[1].qp_release.qp",
     "QP 4 of node A was not set up by a qp_setup step: the release would end with 0x01"},
    {"qp_adopt_psn_mismatch.yaml", 9, 49, "steps[3].qp_adopt.client_qp",
     "QP 2 of node A expects PSN 0x000200 first (remote_psn, line 7), but QP 3 of node B starts at 0x000201"},
    {"qp_adopt_no_fsm_end.yaml", 7, 15, "steps[1].qp_adopt", "qp_adopt needs an end set up by qp_setup"},
    // Issue 15: a node whose host is a program (host: program, the program step).
    {"program_node_init.yaml", 8, 12, "steps[1].init[0]", "node 'A' has host: program: its program initialises it"},
    {"program_on_driver_node.yaml", 8, 22, "steps[1].program.node",
     "node 'B' has the built-in driver as its host; a program needs `host: program` on the node"},
    {"program_mr_cache_cam.yaml", 4, 73, "nodes.A.mr_cache", "mr_cache: cam needs the built-in driver"},
    {"wait_both_keys.yaml", 6, 11, "steps[0].wait", "give exactly one of us (a duration) and until_us (a time)"},
    {"program_connect_cm.yaml", 8, 14, "steps[1].connect",
     "with cm: true a program end must be the client (its program connects, the built-in driver listens)"},
    {"program_connect_no_qpn.yaml", 8, 14, "steps[1].connect", "give its QPN and PSN (client_qp, client_psn)"},
    {"program_mem_write.yaml", 8, 24, "steps[1].mem_write.node", "its memory is the program's"},
    {"program_run_and_serve.yaml", 8, 37, "steps[1].program.serve", "give either run (start the program) or serve"},
    {"program_post_on_program_end.yaml", 10, 28, "steps[3].post.node",
     "node 'A' has host: program: its program drives it, the built-in driver's steps cannot"},
    {"program_env_malformed.yaml", 8, 31, "steps[1].program.env[0]", "an environment entry is NAME=VALUE"},
    {"field_other_layout.yaml", 8, 50, "steps[0].reg_write.field",
     "field 'NUM_QP' of XRNICCONF exists in the 3.1 layout only; this scenario has layout 4.x"},
    // Issue 16: N nodes behind a switch (topology: switch, expect_switch).
    {"too_many_nodes.yaml", 20, 3, "nodes.N17", "too many nodes: at most 16"},
    {"topology_unknown.yaml", 5, 11, "topology", "unknown topology 'ring' (expected one of: point_to_point, switch)"},
    {"topology_port_unknown_node.yaml", 7, 36, "topology.switch.ports.X", "unknown key 'X' (known keys: A, B)"},
    {"topology_port_rate.yaml", 8, 23, "topology.switch.ports.B.rate_gbps",
     "rate_gbps must be one of 10, 25, 40, 50, 100, got 30"},
    {"topology_ecn_both_forms.yaml", 7, 36, "topology.switch.ecn.min_bytes",
     "give either threshold_bytes or min_bytes / max_bytes / probability (RED), not both"},
    {"topology_ecn_red_range.yaml", 7, 41, "topology.switch.ecn.max_bytes",
     "max_bytes 20000 must be greater than min_bytes 20000"},
    {"topology_pfc_xon_above_xoff.yaml", 7, 41, "topology.switch.pfc.xon_bytes",
     "xon_bytes 16384 must be below xoff_bytes 8192"},
    {"topology_pfc_xoff_over_buffer.yaml", 8, 24, "topology.switch.pfc.xoff_bytes",
     "xoff_bytes 32768 exceeds buffer_bytes 16384"},
    {"topology_red_weight_zero.yaml", 7, 54, "topology.switch.ecn.weight", "0 is out of range (0, 1]"},
    {"topology_pfc_not_lossless.yaml", 9, 24, "topology.switch.pfc.xoff_bytes",
     "xoff_bytes 16384 is not lossless with buffer_bytes 40000: the egress to A can receive from 2 ports up to "
     "xoff_bytes + headroom each, 54624 bytes in all (headroom of port B: 2 x 100 ns at 100 Gb/s + two 4214-byte "
     "frames on the wire = 10928 bytes); raise buffer_bytes to 54624"},
    {"topology_node_named_switch.yaml", 4, 11, "nodes.switch", "a node may not be named 'switch' with topology: switch"},
    {"expect_switch_point_to_point.yaml", 7, 20, "steps[1].expect_switch", "expect_switch needs a switch"},
    {"expect_switch_bad_value.yaml", 8, 55, "steps[1].expect_switch.ecn_marked",
     "expected a count N, a comparison \">0\""},
    {"expect_switch_unknown_counter.yaml", 8, 31, "steps[1].expect_switch.ecn_marks",
     "unknown key 'ecn_marks' (did you mean 'ecn_marked'?)"},
    {"fault_switch_point_to_point.yaml", 7, 19, "steps[1].fault.dir",
     "'switch' in direction 'switch->B' is the switch of `topology: switch`, and this scenario has none"},
    {"fault_switch_to_switch.yaml", 8, 19, "steps[1].fault.dir", "a direction needs two different nodes"},
    // expect_qp: a QP's outstanding-request limit (16, 8 after a CNP) and outstanding requests.
    {"expect_qp_no_value.yaml", 8, 16, "steps[2].expect_qp",
     "give at least one value to check: outstanding_limit, outstanding"},
    {"expect_qp_qp_range.yaml", 7, 31, "steps[1].expect_qp.qp", "17 is out of range [2, 16]"},
    {"expect_qp_unknown_value.yaml", 7, 34, "steps[1].expect_qp.outstanding_limt",
     "unknown key 'outstanding_limt' (did you mean 'outstanding_limit'?)"},
    {"expect_qp_bad_value.yaml", 7, 51, "steps[1].expect_qp.outstanding[1]", "max 8 is less than min 9"},
    {"node_mac_multicast.yaml", 5, 13, "nodes.B.mac",
     "MAC address 01:00:5e:00:00:0b is a group (multicast or broadcast) address: a node's MAC must be unicast"},
    // Issue 20, tried as a user would: inputs that made yaml-cpp or the
    // parser run without bound. ",a" (3 bytes): yaml-cpp 0.7's LoadAll
    // appended empty documents without end (gigabytes in seconds).
    {"yaml_leading_comma_unbounded_alloc.yaml", 1, 1, "",
     "YAML syntax error: unexpected ',' (a separator of [ ] and { } lists, here outside one)"},
    // Nested anchors and aliases: 10^7 wait steps (> 4 GB, then exit 3 on
    // the simulated-time limit); refused at the top-level step that expands:
    // 5,000 + 1,279 bytes / 4 steps (parse.h max_parsed_steps), passed in
    // r4 (1 + 1 + 11 + 111 + 1,111 + 11,111 steps).
    {"yaml_nested_aliases.yaml", 21, 5, "steps[5]",
     "this step expands to more than 5319 steps in all (a YAML alias is expanded each time it is used; nested "
     "aliases multiply): refused"},
    // Few steps, each reading 500 nodes through aliases: refused past
    // 50,000 + 1,361 bytes nodes (parse.h max_yaml_nodes), at the aliased
    // frame, by the path that reached it. With the bounds of 1,000,000 nodes
    // and 100,000 steps such files took 11-15 s per parse under ASan (the
    // scenario fuzzer's 10-s timeout, CI of 2026-12-03).
    {"yaml_alias_node_bomb.yaml", 11, 48, "steps[4].repeat.steps[9].repeat.steps[0].expect_frames.frames[97]",
     "the file expands to more than 51361 YAML nodes (an alias is expanded each time it is used): refused"},
    // Nested repeats: 10^10 step runs; the inner count is blamed.
    {"repeat_runs_total.yaml", 13, 20, "steps[1].repeat.steps[0].repeat.count",
     "with this count the scenario would run more than 100000000 steps in all (a step inside repeats runs once per "
     "repetition of each): lower the counts"},
    // CR-only line ends: was "empty file" (the whole file one comment line).
    // Found by fuzzing: an alias inside its anchor's node (a node that
    // contains itself: the parser recursed until the stack ran out).
    {"yaml_alias_loop.yaml", 10, 51, "",
     "this alias is inside the node its anchor names: the node would contain itself (a loop): refused"},
    // Depth: 2 block levels + 63 flow brackets; the 63rd opens level 65.
    {"yaml_nested_too_deep.yaml", 10, 654, "", "lists and maps nested more than 64 deep: refused"},
    {"cr_only_line_endings.yaml", 1, 61, "",
     "line ends with a lone carriage return (CR, classic Mac line ends), which YAML readers here do not take as a "
     "line break: use LF or CR LF line ends"},
};

INSTANTIATE_TEST_SUITE_P(Files, ScenarioBadFile, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           std::string n = info.param.file;
                           n = n.substr(0, n.find('.'));
                           return n;
                         });

TEST(ScenarioBadFile, EveryFileHasACase) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kDir + "/bad")) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const bool covered = std::any_of(std::begin(kBadCases), std::end(kBadCases),
                                     [&](const BadCase& c) { return f == c.file; });
    EXPECT_TRUE(covered) << "bad/" << f << " has no expected error in kBadCases";
  }
}

// ------------------------------------------------------- inline messages ---

const char* kHead =
    "scenario: t\n"
    "nodes:\n"
    "  A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\n"
    "  B: {mac: '02:00:00:00:00:0b', ip: 10.0.0.2}\n"
    "steps:\n"
    "  - init: [A, B]\n"
    "  - register_mr: {node: A, name: src, length: 4096}\n"
    "  - register_mr: {node: B, name: dst, length: 4096}\n";  // steps[2], line 8

TEST(ScenarioErrors, Messages) {
  struct Case {
    std::string extra;
    int line, column;
    std::string key, part;
  };
  const Case cases[] = {
      {"  - connect: {name: c, client: A, server: A}\n", 9, 43, "steps[3].connect.server", "different nodes"},
      {"  - connect: {name: c, client: A, server: B, pmtu: 1500}\n", 9, 52, "steps[3].connect.pmtu",
       "pmtu must be one of"},
      {"  - connect: {name: c, client: A, server: B, client_psn: 0x1000000}\n", 9, 58,
       "steps[3].connect.client_psn", "out of range"},
      {"  - connect: {name: c, client: A, server: B, start_psn: never}\n", 9, 57, "steps[3].connect.start_psn",
       "expected 'auto'"},
      {"  - connect: {name: c, client: A, server: B, client_qp: 1}\n", 9, 57, "steps[3].connect.client_qp",
       "out of range [2, 8]"},
      {"  - connect: {name: c, client: A, server: B}\n  - post: {conn: c, node: A, wqes: [{opcode: write, "
       "wr_id: 1, local_mr: src, length: 8}]}\n",
       10, 46, "steps[4].post.wqes[0].opcode", "no server_mr"},
      {"  - connect: {name: c, client: A, server: B, server_mr: dst}\n  - post: {conn: c, node: A, wqes: "
       "[{opcode: send, wr_id: 1, local_mr: src, length: 8, remote_offset: 0}]}\n",
       10, 88, "steps[4].post.wqes[0].remote_offset", "does not apply to send"},
      {"  - connect: {name: c, client: A, server: B, server_mr: dst}\n  - post: {conn: c, node: A, wqes: "
       "[{opcode: send, wr_id: 70000, local_mr: src, length: 8}]}\n",
       10, 59, "steps[4].post.wqes[0].wr_id", "out of range [0, 65535]"},
      {"  - connect: {name: c, client: A, server: B}\n  - connect: {name: c, client: B, server: A}\n", 10, 21,
       "steps[4].connect.name", "already exists"},
      {"  - connect: {name: c, client: A, server: B}\n  - wait_completions: {conn: c, node: A, count: 1, "
       "expect: [{}, {}]}\n",
       10, 60, "steps[4].wait_completions.expect", "2 expected completions but count is 1"},
      {"  - connect: {name: c, client: A, server: B}\n  - wait_completions: {conn: c, node: A, expect: "
       "[{error: no}]}\n",
       10, 59, "steps[4].wait_completions.expect[0].error", "expected true or false"},
      {"  - fill: {node: A, mr: src, pattern: zero, seed: 3}\n", 9, 45, "steps[3].fill.seed",
       "only to pattern: random"},
      {"  - fill: {node: A, mr: src, pattern: constant, value: 256}\n", 9, 56, "steps[3].fill.value",
       "out of range [0, 255]"},
      {"  - check_memory: {node: A, mr: src}\n", 9, 19, "steps[3].check_memory", "needs one of"},
      {"  - check_memory: {node: A, mr: src, equals: {node: B, mr: dst, offset: 1}}\n", 9, 73,
       "steps[3].check_memory.equals.offset", "exceeds MR dst"},
      {"  - wait: {us: 1.5}\n", 9, 16, "steps[3].wait.us", "expected a non-negative integer, got '1.5'"},
      {"  - wait: {ms: 1}\n", 9, 12, "steps[3].wait.ms", "unknown key 'ms' (did you mean 'us'?)"},
      {"  - wait: {time: 1}\n", 9, 12, "steps[3].wait.time", "unknown key 'time' (known keys: us, until_us)"},
      {"  - wait:\n", 9, 5, "steps[3].wait", "expected a map, got nothing"},
      {"  - init: [A]\n", 9, 12, "steps[3].init[0]", "node A is already initialised (at line 6)"},
      {"  - register_mr: {node: A, name: big, length: 67108865}\n", 9, 47, "steps[3].register_mr.length",
       "exceeds node A's memory"},
      {"  - register_mr: {node: A, name: x, length: 8, access: rx}\n", 9, 56, "steps[3].register_mr.access",
       "unknown value 'rx'"},
      {"  - 5\n", 9, 5, "steps[3]", "a step is a map with one key"},
  };
  for (const Case& c : cases) {
    const ScenarioError e = parse_error(std::string(kHead) + c.extra);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << e.what();
  }
}

TEST(ScenarioErrors, Issue3Messages) {
  struct Case {
    std::string extra;
    int line, column;
    std::string key, part;
  };
  // kHead: A and B initialised, MR src on A and dst on B; the next step is
  // steps[3], at line 9.
  const std::string conn = "  - connect: {name: c, client: A, server: B, server_mr: dst}\n";  // steps[3]
  const Case cases[] = {
      {"  - reg_write: {node: A, reg: qpconfi, qp: 2, value: 1}\n", 9, 31, "steps[3].reg_write.reg",
       "did you mean 'QPCONFi'? register names are case-sensitive"},
      {"  - reg_write: {node: A, reg: NOSUCHREGISTERATALL, value: 1}\n", 9, 31, "steps[3].reg_write.reg",
       "see model/regs/ernic_regs.def"},
      {"  - reg_write: {node: A, reg: QPCONFi, qp: 9, value: 1}\n", 9, 44, "steps[3].reg_write.qp",
       "9 is out of range [1, 8]"},
      {"  - reg_write: {node: A, reg: QPCONFi, qp: 2, mr: 1, value: 1}\n", 9, 47, "steps[3].reg_write.mr",
       "mr does not apply: QPCONFi is a per-QP register"},
      {"  - reg_write: {node: A, reg: PDPDNUM, value: 1}\n", 9, 16, "steps[3].reg_write.mr",
       "missing required key 'mr': PDPDNUM is an MR-table register"},
      {"  - reg_write: {node: A, reg: PDPDNUM, mr: 256, value: 1}\n", 9, 44, "steps[3].reg_write.mr",
       "256 is out of range [0, 255]"},
      {"  - reg_write: {node: A, reg: PDPDNUM, mr: 0, qp: 2, value: 1}\n", 9, 47, "steps[3].reg_write.qp",
       "qp does not apply: PDPDNUM is an MR-table register"},
      {"  - reg_write: {node: A, reg: XRNICCONF, value: 0x100000000}\n", 9, 49, "steps[3].reg_write.value",
       "does not fit register XRNICCONF (32 bits)"},
      {"  - reg_write: {node: A, reg: IPv4XADD, field: X, value: 1}\n", 9, 48, "steps[3].reg_write.field",
       "register IPv4XADD has no named fields"},
      {"  - reg_write: {node: A, reg: XRNICCONF}\n", 9, 16, "steps[3].reg_write.value", "missing required key 'value'"},
      {"  - reg_expect: {node: A, reg: STATQPi, qp: 2, field: FATAL, value: 2}\n", 9, 69,
       "steps[3].reg_expect.value", "2 does not fit field STATQPi.FATAL (1 bit)"},
      {"  - reg_expect: {node: A, reg: XRNICCONF, value: 3, mask: 1}\n", 9, 50, "steps[3].reg_expect.value",
       "value 0x3 has bits outside mask 0x1"},
      {"  - reg_expect: {node: A, reg: XRNICCONF, value: 0, not: 1}\n", 9, 58, "steps[3].reg_expect.not",
       "expected true or false"},
      {"  - reg_poll: {node: A, reg: XRNICCONF, value: 0, interval_ns: 0}\n", 9, 64, "steps[3].reg_poll.interval_ns",
       "out of range [1, 1000000000]"},
      {"  - reg_read: {node: Z, reg: XRNICCONF}\n", 9, 22, "steps[3].reg_read.node", "unknown node 'Z'"},
      {"  - mem_write: {node: A, addr: 0}\n", 9, 16, "steps[3].mem_write", "needs the data: one of 'bytes'"},
      {"  - mem_write: {node: A, addr: 0, u64: []}\n", 9, 40, "steps[3].mem_write.u64", "at least one value"},
      {"  - mem_write: {node: A, addr: 0, bytes: [1, 256]}\n", 9, 46, "steps[3].mem_write.bytes[1]",
       "256 is out of range [0, 255]"},
      {"  - mem_write: {node: A, addr: 0, u32: [0x100000000]}\n", 9, 41, "steps[3].mem_write.u32[0]",
       "out of range [0, 4294967295]"},
      {"  - mem_write: {node: A, addr: 0, bytes: [1], stray: 1}\n", 9, 54, "steps[3].mem_write.stray",
       "expected true or false"},
      {"  - mem_expect: {node: A, addr: 0, bytes: [1], stray: true}\n", 9, 48, "steps[3].mem_expect.stray",
       "unknown key 'stray'"},
      {"  - deregister_mr: {node: A, name: dst}\n", 9, 36, "steps[3].deregister_mr.name", "unknown MR 'dst' on node A"},
      {"  - connect_reject: {client: A, server: A}\n", 9, 41, "steps[3].connect_reject.server", "different nodes"},
      {"  - connect_reject: {client: A, server: B, reason: 65536}\n", 9, 52, "steps[3].connect_reject.reason",
       "out of range [0, 65535]"},
      {conn + "  - disconnect: {conn: c, node: C}\n", 10, 33, "steps[4].disconnect.node", "unknown node 'C'"},
      {conn + "  - disconnect: {conn: c, node: A}\n  - disconnect: {conn: c, node: A}\n", 11, 24,
       "steps[5].disconnect.conn", "connection 'c' was disconnected at line 10"},
      {"  - fault: {dir: AB, action: drop}\n", 9, 18, "steps[3].fault.dir", "expected a direction 'X->Y'"},
      {"  - fault: {dir: A->A, action: drop}\n", 9, 18, "steps[3].fault.dir", "two different nodes"},
      {"  - fault: {dir: A->B}\n", 9, 12, "steps[3].fault.action", "missing required key 'action'"},
      {"  - fault: {dir: A->B, action: lose}\n", 9, 32, "steps[3].fault.action", "unknown value 'lose'"},
      {"  - fault: {dir: A->B, action: corrupt}\n", 9, 12, "steps[3].fault", "needs 'byte'"},
      {"  - fault: {dir: A->B, action: corrupt, field: bth.psm}\n", 9, 48, "steps[3].fault.field",
       "did you mean 'bth.psn'?"},
      {"  - fault: {dir: A->B, action: corrupt, byte: 9600}\n", 9, 47, "steps[3].fault.byte",
       "out of range [0, 9599]"},
      {"  - fault: {dir: A->B, action: corrupt, byte: 1, bit: 8}\n", 9, 55, "steps[3].fault.bit",
       "out of range [0, 7]"},
      {"  - fault: {dir: A->B, action: drop, bit: 1}\n", 9, 38, "steps[3].fault.bit", "only to action: corrupt"},
      {"  - fault: {dir: A->B, action: drop, delay_ns: 1}\n", 9, 38, "steps[3].fault.delay_ns",
       "only to action: delay"},
      {"  - fault: {dir: A->B, action: reorder, after: 0}\n", 9, 48, "steps[3].fault.after", "out of range [1,"},
      {"  - fault: {dir: A->B, action: drop, name: ''}\n", 9, 44, "steps[3].fault.name", "must not be empty"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: 0x15}}\n", 9, 54, "steps[3].fault.match.opcode",
       "not an opcode the simulator knows"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: [RC_ACK, any]}}\n", 9, 63,
       "steps[3].fault.match.opcode[1]", "cannot be part of a list"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: [RC_ACK, 0x11]}}\n", 9, 63,
       "steps[3].fault.match.opcode[1]", "RC_ACK is listed twice"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: []}}\n", 9, 54, "steps[3].fault.match.opcode",
       "at least one opcode"},
      {"  - fault: {dir: A->B, action: drop, match: {nth: 0}}\n", 9, 51, "steps[3].fault.match.nth",
       "out of range [1,"},
      {"  - fault: {dir: A->B, action: drop, match: {psn: 0x1000000}}\n", 9, 51, "steps[3].fault.match.psn",
       "out of range"},
      {"  - fault: {dir: A->B, action: drop, match: {probability: 0}}\n", 9, 59,
       "steps[3].fault.match.probability", "out of range (0, 1]"},
      {"  - link: {dir: both, state: off}\n", 9, 30, "steps[3].link.state", "unknown value 'off'"},
      {"  - expect_frames: {dir: A->B, frames: [{psn: later}]}\n", 9, 47, "steps[3].expect_frames.frames[0].psn",
       "expected 'next' or a PSN"},
      {"  - expect_frames: {dir: A->B, frames: [{repeat: '?'}]}\n", 9, 50,
       "steps[3].expect_frames.frames[0].repeat", "expected \"*\""},
      {"  - expect_frames: {dir: A->B, frames: [{repeat: 0}]}\n", 9, 50, "steps[3].expect_frames.frames[0].repeat",
       "out of range [1,"},
      {"  - expect_frames: {dir: A->B, frames: [{repeat: [1, 2, 3]}]}\n", 9, 50,
       "steps[3].expect_frames.frames[0].repeat", "expected [min, max]"},
      {"  - expect_frames: {dir: A->B, tap: both, frames: []}\n", 9, 37, "steps[3].expect_frames.tap",
       "unknown value 'both'"},
      {"  - expect_frames: {dir: A->B, frames: [{opcode: RC_ACK, syndrome: 256}]}\n", 9, 68,
       "steps[3].expect_frames.frames[0].syndrome", "out of range [0, 255]"},
      {"  - expect_idle: {dir: A->B}\n", 9, 18, "steps[3].expect_idle.us", "missing required key 'us'"},
      {"  - wait_until: {timeout_us: 5}\n", 9, 17, "steps[3].wait_until", "needs one of 'frames' or 'reg'"},
      {"  - wait_until: {frames: {dir: A->B}, value: 1}\n", 9, 39, "steps[3].wait_until.value",
       "applies only with reg"},
      {"  - wait_until: {reg: {node: A, reg: XRNICCONF}}\n", 9, 17, "steps[3].wait_until.value",
       "missing required key 'value'"},
      {"  - wait_until: {reg: {node: A, reg: XRNICCONF, value: 1}}\n", 9, 49, "steps[3].wait_until.reg.value",
       "unknown key 'value'"},
      {"  - wait_until: {frames: {dir: both}}\n", 9, 32, "steps[3].wait_until.frames.dir", "give one direction"},
      {"  - repeat: {count: 0, steps: [wait: {us: 1}]}\n", 9, 21, "steps[3].repeat.count", "out of range [1,"},
      {"  - repeat: {count: 2, steps: []}\n", 9, 31, "steps[3].repeat.steps", "at least one step"},
      {"  - repeat: {count: 2, steps: [init: A]}\n", 9, 32, "steps[3].repeat.steps[0].init",
       "init is not allowed inside repeat"},
      {"  - repeat: {count: 2, steps: [deregister_mr: {node: A, name: src}]}\n", 9, 32,
       "steps[3].repeat.steps[0].deregister_mr", "the MR would be deregistered again"},
      {"  - repeat: {count: 2, steps: [repeat: {count: 2, steps: [register_mr: {node: A, name: x, length: 1}]}]}\n",
       9, 59, "steps[3].repeat.steps[0].repeat.steps[0].register_mr", "the repeat at line 9 runs its steps 2 times"},
      {conn + "  - repeat: {count: 2, steps: [disconnect: {conn: c, node: A}]}\n", 10, 32,
       "steps[4].repeat.steps[0].disconnect", "not allowed inside repeat"},
      {"  - repeat: {count: 2, steps: [parallel: [{name: a, steps: [connect: {name: c, client: A, server: B}]},"
       " {name: b, steps: [wait: {us: 1}]}]]}\n",
       9, 61, "steps[3].repeat.steps[0].parallel[0].steps[0].connect", "not allowed inside repeat"},
      {"  - parallel: {name: a}\n", 9, 15, "steps[3].parallel", "expected a list of branches"},
      {"  - parallel: [{name: a, steps: [wait: {us: 1}]}, {name: a, steps: [wait: {us: 1}]}]\n", 9, 58,
       "steps[3].parallel[1].name", "branch 'a' is already named in this parallel"},
      {"  - parallel: [{name: a, steps: [wait: {us: 1}]}, {steps: [wait: {us: 1}]}]\n", 9, 51,
       "steps[3].parallel[1].name", "missing required key 'name'"},
      {"  - parallel: [{name: a, steps: [barrier: x]}, {name: b, steps: [barrier: x, barrier: y]}]\n", 9, 87,
       "steps[3].parallel[1].steps[1].barrier", "barrier 'y' has no counterpart in branch a"},
      {"  - parallel: [{name: a, steps: [repeat: {count: 2, steps: [barrier: x]}]}, {name: b, steps: [wait: {us: "
       "1}]}]\n",
       9, 61, "steps[3].parallel[0].steps[0].repeat.steps[0].barrier", "barrier is not allowed inside repeat"},
      {"  - parallel: [{name: a, steps: [barrier: x, barrier: x]}, {name: b, steps: [barrier: x, barrier: x]}]\n",
       9, 55, "steps[3].parallel[0].steps[1].barrier", "barrier 'x' is already passed in this branch (at line 9)"},
      {"  - parallel: [{name: a, steps: [barrier: 1x]}, {name: b, steps: [barrier: 1x]}]\n", 9, 43,
       "steps[3].parallel[0].steps[0].barrier", "invalid barrier name '1x'"},
      {"  - parallel: [{name: a, steps: [register_mr: {node: A, name: m, length: 1}]}, {name: b, steps: "
       "[register_mr: {node: A, name: m, length: 1}]}]\n",
       9, 127, "steps[3].parallel[1].steps[0].register_mr.name", "MR 'm' is already registered on node A"},
  };
  for (const Case& c : cases) {
    const ScenarioError e = parse_error(std::string(kHead) + c.extra);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << e.what();
  }
  // pcie ranges.
  const std::string nodes = "nodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\nsteps: [init: A]\n";
  const struct {
    const char* pcie;
    int column;
    const char* key;
    const char* part;
  } pcie_cases[] = {
      {"{gen: 5}", 13, "pcie.gen", "gen must be 3 or 4, got 5"},
      {"{lanes: 3}", 15, "pcie.lanes", "lanes must be one of 1, 2, 4, 8, 16, got 3"},
      {"{mps: 2048}", 13, "pcie.mps", "power of two in [128, 1024]"},
      {"{mrrs: 64}", 14, "pcie.mrrs", "power of two in [128, 4096], got 64"},
      {"{mrrs: 8192}", 14, "pcie.mrrs", "got 8192"},
      {"{read_latency_ns: -1}", 25, "pcie.read_latency_ns", "must not be negative"},
      {"{speed: 1}", 8, "pcie.speed", "unknown key 'speed'"},
      {"{rcb: 256}", 13, "pcie.rcb", "power of two in [64, 128], got 256"},
      {"{outstanding: 0}", 21, "pcie.outstanding", "out of range"},
      {"{mmio_write_latency_ns: -5}", 31, "pcie.mmio_write_latency_ns", "must not be negative"},
  };
  for (const auto& c : pcie_cases) {
    const ScenarioError e = parse_error(std::string("scenario: t\npcie: ") + c.pcie + "\n" + nodes);
    EXPECT_EQ(e.line(), 2) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << e.what();
  }
  const ScenarioError dp = parse_error("scenario: t\ndatapath: verilog\n" + nodes);
  EXPECT_EQ(dp.key(), "datapath");
  EXPECT_NE(dp.message().find("unknown value 'verilog'"), std::string::npos) << dp.what();
  EXPECT_NE(dp.message().find("rtl, model, user:<name>"), std::string::npos) << dp.what();
  const ScenarioError du = parse_error("scenario: t\ndatapath: user:my-block\n" + nodes);
  EXPECT_EQ(du.key(), "datapath");
  EXPECT_EQ(du.line(), 2);
  EXPECT_EQ(du.message(), "invalid datapath 'user:my-block': user:<name> takes a name of letters, digits and '_'");
}

TEST(ScenarioErrors, TopLevel) {
  EXPECT_NE(parse_error("").message().find("empty file"), std::string::npos);
  // With a place, 1:1, like every error from text (tb/fuzz, issue 20).
  EXPECT_EQ(parse_error("").line(), 1);
  EXPECT_EQ(parse_error("").column(), 1);
  EXPECT_EQ(parse_error("# only a comment\n").line(), 1);
  EXPECT_EQ(parse_error("- a\n").key(), "");
  EXPECT_NE(parse_error("- a\n").message().find("expected a map"), std::string::npos);
  const ScenarioError two = parse_error("scenario: a\n---\nscenario: b\n");
  EXPECT_EQ(two.line(), 3);
  const ScenarioError core = parse_error(
      "scenario: t\nclocks: {core_mhz: 0}\nnodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\n"
      "steps: [init: A]\n");
  EXPECT_EQ(core.key(), "clocks.core_mhz");
  EXPECT_EQ(core.line(), 2);
  EXPECT_EQ(core.column(), 20);
  const ScenarioError dupip = parse_error(
      "scenario: t\nnodes:\n  A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\n"
      "  B: {mac: '02:00:00:00:00:0b', ip: 10.0.0.1}\nsteps: [init: A]\n");
  EXPECT_EQ(dupip.key(), "nodes.B.ip");
  EXPECT_NE(dupip.message().find("already used by node A"), std::string::npos);
  const ScenarioError badname = parse_error(
      "scenario: t\nnodes:\n  9A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\nsteps: [init: A]\n");
  EXPECT_EQ(badname.key(), "nodes.9A");
  EXPECT_EQ(badname.line(), 3);
  EXPECT_EQ(badname.column(), 3);
  const ScenarioError nosteps =
      parse_error("scenario: t\nnodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\nsteps: []\n");
  EXPECT_EQ(nosteps.key(), "steps");
  EXPECT_NE(nosteps.message().find("at least one step"), std::string::npos);
}

// More of issue 20: a token that stops yaml-cpp's document parser anywhere
// (after a first document too) is refused, not looped on; two documents are
// still "exactly one YAML document"; CR LF line ends are fine.
TEST(ScenarioErrors, YamlInputsYamlCppMishandles) {
  const ScenarioError after_seq = parse_error("- a\n,b\n");
  EXPECT_EQ(after_seq.line(), 2);
  EXPECT_EQ(after_seq.column(), 1);
  EXPECT_EQ(after_seq.message(), "YAML syntax error: unexpected ',' (a separator of [ ] and { } lists, here outside one)");
  const ScenarioError lone = parse_error(",");
  EXPECT_EQ(lone.line(), 1);
  EXPECT_NE(lone.message().find("unexpected ','"), std::string::npos) << lone.what();
  const ScenarioError two = parse_error("scenario: a\n---\n,\n");
  EXPECT_EQ(two.line(), 3);
  const ScenarioError cr = parse_error("scenario: t\r\nnodes: {}\rsteps: []\n");
  EXPECT_EQ(cr.line(), 2);
  EXPECT_EQ(cr.column(), 10);
  EXPECT_NE(cr.message().find("lone carriage return"), std::string::npos) << cr.what();
  // CR LF throughout parses as LF does (the error is the missing init, on line 3).
  const ScenarioError crlf = parse_error("scenario: t\r\nnodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\r\n"
                                         "steps: []\r\n");
  EXPECT_EQ(crlf.key(), "steps");
  EXPECT_EQ(crlf.line(), 3);
}

// A 1 MB unknown register name took ~28 s to refuse (a quadratic "did you
// mean" per known name): names over 64 characters get no suggestion, and
// the message shows the first 64 and the length.
TEST(ScenarioErrors, HugeUnknownNameIsRefusedAtOnce) {
  const std::string name(1u << 20, 'X');
  const auto t0 = std::chrono::steady_clock::now();
  const ScenarioError e = parse_error(std::string(kHead) + "  - reg_expect: { node: A, reg: " + name + ", value: 0 }\n");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0) << "28 s per MB before the bound";
  EXPECT_EQ(e.key(), "steps[3].reg_expect.reg");
  EXPECT_EQ(e.line(), 9);
  EXPECT_EQ(e.message(), "unknown register '" + std::string(64, 'X') +
                             "... (1048576 characters)' (register names as PG332 spells them: see "
                             "model/regs/ernic_regs.def)");
  // Short names keep their suggestions.
  EXPECT_NE(parse_error(std::string(kHead) + "  - reg_expect: { node: A, reg: STATQPI, qp: 2, value: 0 }\n")
                .message()
                .find("did you mean"),
            std::string::npos);
  // Through the command line: exit 2, naming the place, at once.
  const std::string path = ::testing::TempDir() + "/huge_register_name.yaml";
  {
    std::ofstream f(path);
    f << kHead << "  - reg_expect: { node: A, reg: " << name << ", value: 0 }\n";
  }
  const std::string cmd = std::string(ERNIC_SIM_PROGRAM) + " run '" + path + "' --quiet 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string err;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) err.append(buf, n);
  const int st = pclose(p);
  ASSERT_TRUE(WIFEXITED(st)) << err;
  EXPECT_EQ(WEXITSTATUS(st), 2) << err;
  EXPECT_NE(err.find(path + ":9:33: key 'steps[3].reg_expect.reg': unknown register 'XXXX"), std::string::npos) << err;
  EXPECT_LT(err.size(), 1000u);
  std::remove(path.c_str());
}

TEST(ScenarioErrors, UnreadableFile) {
  try {
    load_scenario(kDir + "/does/not/exist.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.key(), "");
    EXPECT_EQ(std::string(e.what()).rfind(kDir + "/does/not/exist.yaml: cannot open file", 0), 0u) << e.what();
  }
}

// -------------------------------------------------------- fill generator ---

TEST(FillPattern, RandomIsMt19937_64LittleEndian) {
  // The first output of std::mt19937_64 with the default seed (5489) is fixed
  // by the C++ standard's algorithm: 14514284786278117030.
  uint8_t b[10];
  fill_pattern(b, sizeof b, Pattern::random, 5489, 0, 0);
  const uint64_t first = 14514284786278117030ull;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], uint8_t(first >> (8 * i))) << i;
  std::mt19937_64 g(5489);
  g();
  const uint64_t second = g();
  EXPECT_EQ(b[8], uint8_t(second));
  EXPECT_EQ(b[9], uint8_t(second >> 8));
}

TEST(FillPattern, SubRangesRegenerate) {
  for (Pattern p : {Pattern::random, Pattern::incrementing, Pattern::zero, Pattern::constant}) {
    std::vector<uint8_t> whole(1000);
    fill_pattern(whole.data(), whole.size(), p, 7, 0x5A, 0);
    for (size_t off : {1u, 7u, 8u, 13u, 300u, 999u}) {
      std::vector<uint8_t> part(1000 - off);
      fill_pattern(part.data(), part.size(), p, 7, 0x5A, off);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + off)) << to_string(p) << " " << off;
    }
  }
  uint8_t inc[4];
  fill_pattern(inc, 4, Pattern::incrementing, 0, 0, 254);
  EXPECT_EQ(inc[0], 254);
  EXPECT_EQ(inc[1], 255);
  EXPECT_EQ(inc[2], 0);
  EXPECT_EQ(inc[3], 1);
  uint8_t k[3];
  fill_pattern(k, 3, Pattern::constant, 0, 0xC3, 0);
  EXPECT_EQ(k[2], 0xC3);
}

// ------------------------------------------- README and scenario files ----

// scenarios/README.md shows every example as a complete scenario file: each
// ```yaml block follows a line `<!-- example: scenarios/examples/NAME.yaml -->`
// and equals that file byte for byte; every file in scenarios/examples/ is
// shown exactly once; and each example parses.
TEST(ScenarioDocs, ReadmeExamplesAreTheFiles) {
  const fs::path root = SCENARIO_ROOT_DIR;
  std::ifstream in(root / "README.md");
  ASSERT_TRUE(in) << "scenarios/README.md missing";
  const std::regex marker(R"(^<!-- example: scenarios/examples/([A-Za-z0-9_.-]+\.yaml) -->$)");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::map<std::string, int> shown;  // file -> README line of its marker
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, marker)) {
      const std::string name = m[1];
      const int at = int(i) + 1;
      if (i + 1 >= lines.size() || lines[i + 1] != "```yaml") {
        ADD_FAILURE() << "README.md:" << at << ": the example marker is not followed by a ```yaml line";
        continue;
      }
      std::string block;
      size_t j = i + 2;
      for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) block += lines[j] + "\n";
      EXPECT_LT(j, lines.size()) << "README.md:" << at << ": unterminated ```yaml block";
      EXPECT_FALSE(shown.count(name)) << "README.md:" << at << ": " << name << " is shown twice (first at line "
                                      << shown[name] << ")";
      shown[name] = at;
      std::ifstream f(root / "examples" / name, std::ios::binary);
      if (!f) {
        ADD_FAILURE() << "README.md:" << at << ": scenarios/examples/" << name << " does not exist";
        continue;
      }
      std::ostringstream file;
      file << f.rdbuf();
      EXPECT_EQ(block, file.str()) << "README.md:" << at << ": the block differs from scenarios/examples/" << name;
      i = j;
    } else if (lines[i].rfind("```yaml", 0) == 0) {
      ADD_FAILURE() << "README.md:" << i + 1
                    << ": a ```yaml block without the line <!-- example: scenarios/examples/NAME.yaml --> "
                       "before it (every example must be a complete file under scenarios/examples/)";
    }
  }
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(root / "examples")) {
    if (!e.is_regular_file()) continue;
    ++files;
    const std::string name = e.path().filename().string();
    EXPECT_EQ(e.path().extension(), ".yaml") << "scenarios/examples/" << name << ": not a .yaml file";
    EXPECT_TRUE(shown.count(name)) << "scenarios/examples/" << name << " is not shown in scenarios/README.md";
    try {
      const Scenario s = load_scenario(e.path().string());
      EXPECT_EQ(s.name, e.path().stem().string()) << "the scenario name of an example is its file name";
    } catch (const ScenarioError& err) {
      ADD_FAILURE() << err.what();
    }
  }
  EXPECT_GE(files, 10u);
}

namespace {
// Step kinds and fault actions used by a step list, nested steps included.
void collect(const std::vector<Step>& steps, std::set<std::string>& kinds, std::set<FaultAction>& actions) {
  for (const Step& st : steps) {
    kinds.insert(step_kind(st));
    if (const auto* f = std::get_if<FaultStep>(&st)) actions.insert(f->action);
    if (const auto* r = std::get_if<std::shared_ptr<RepeatStep>>(&st)) collect((*r)->steps, kinds, actions);
    if (const auto* p = std::get_if<std::shared_ptr<ParallelStep>>(&st))
      for (const auto& b : (*p)->branches) collect(b.steps, kinds, actions);
  }
}
template <size_t... I>
std::vector<std::string> all_step_kinds(std::index_sequence<I...>) {
  return {step_kind(Step(std::in_place_index<I>))...};
}
}  // namespace

// Together, the examples use every step kind and every fault action.
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

TEST(ScenarioDocs, ExamplesCoverTheLanguage) {
  std::set<std::string> kinds;
  std::set<FaultAction> actions;
  for (const auto& e : fs::directory_iterator(fs::path(SCENARIO_ROOT_DIR) / "examples")) {
    try {
      collect(load_scenario(e.path().string()).steps, kinds, actions);
    } catch (const ScenarioError& err) {
      ADD_FAILURE() << err.what();
    }
  }
  for (const std::string& k : all_step_kinds(std::make_index_sequence<std::variant_size_v<Step>>()))
    EXPECT_TRUE(kinds.count(k)) << "no example uses the step kind " << k;
  for (FaultAction a : {FaultAction::drop, FaultAction::duplicate, FaultAction::reorder, FaultAction::corrupt,
                        FaultAction::delay})
    EXPECT_TRUE(actions.count(a)) << "no example uses the fault action " << to_string(a);
}

// Every scenario file in the repository parses.
TEST(ScenarioDocs, RepositoryScenariosParse) {
  const fs::path root = SCENARIO_ROOT_DIR;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      load_scenario(f.string());
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}
