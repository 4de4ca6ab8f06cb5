// Tests for model/scenario/scenario.h: every issue-3 step of good/extended.yaml
// (registers, memory, MRs, faults, links, frame and idle expectations,
// wait_until, repeat, parallel) parses to its values.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/scenario/scenario.h"
#include "model/scenario/split_plan.h"
#include "tb/scenario/scenario_fixtures.h"

using namespace ernic;
using namespace ernic::test;

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
  EXPECT_EQ(dc.client, "A");  // the connection's ends: a split run's participants (split_plan.cpp)
  EXPECT_EQ(dc.server, "B");
  EXPECT_EQ(split_participants(s.steps[17]), (std::vector<std::string>{"A", "B"}));
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
  // How each process's part ends, for a split run's lane hold (split_plan.h):
  // fault, link, wait, expect_idle and expect_compliance at one instant
  // everywhere (the last two trade their counts there), a barrier
  // once all its branches arrived, the rest as their participants end them.
  EXPECT_EQ(split_end(s.steps[19]), SplitEnd::alike);  // fault
  EXPECT_EQ(split_end(s.steps[25]), SplitEnd::alike);  // link
  EXPECT_EQ(split_end(Step{WaitStep{}}), SplitEnd::alike);
  EXPECT_EQ(split_end(s.steps[29]), SplitEnd::alike);  // expect_idle: every process trades its count after `us`
  EXPECT_EQ(split_end(Step{ExpectComplianceStep{}}), SplitEnd::alike);
  EXPECT_EQ(split_end(Step{BarrierStep{}}), SplitEnd::barrier);
  EXPECT_EQ(split_end(s.steps[31]), SplitEnd::own);  // wait_until on frames: A's process
  EXPECT_EQ(split_end(s.steps[17]), SplitEnd::own);  // disconnect
  EXPECT_EQ(split_end(s.steps[0]), SplitEnd::own);   // reg_write of a field (QPCONFi.PMTU: read, then write)
  // A posted register write ends as it began in every process.
  EXPECT_EQ(split_end(s.steps[1]), SplitEnd::at_start);  // reg_write of a whole register (ACCESSDESC)
  EXPECT_EQ(split_end(Step{RegWriteStep{{}, {"A", "INTSTS", std::nullopt, std::nullopt, "MAD"}, 1}}),
            SplitEnd::at_start);  // a W1C field: its bits alone
  EXPECT_EQ(split_end(Step{DebugPresetStep{}}), SplitEnd::at_start);

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
