// tb/fault: the wire fault injector (model/link/fault). Frames are built
// with roce::encode: an RC WRITE (FIRST/MIDDLE.../LAST) with PSNs, ACKs,
// UD SEND ONLY, IPv6 frames and frames that are not RoCE (another UDP port,
// ARP, short and random bytes). Expected byte offsets are computed by hand
// from the header sizes (Ethernet 14, IPv4 20 / IPv6 40, UDP 8, BTH 12).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "model/link/fault.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

using namespace ernic;
namespace op = roce::op;

namespace {

constexpr size_t kEth = 14, kIp4 = 20, kIp6 = 40, kUdp = 8, kBth = 12;
constexpr size_t kBth4 = kEth + kIp4 + kUdp;  // 42: BTH offset over IPv4
constexpr size_t kBth6 = kEth + kIp6 + kUdp;  // 62: BTH offset over IPv6
constexpr uint32_t kQp = 0x000123;

roce::Frame base(uint8_t opcode, uint32_t psn, bool ipv6 = false) {
  roce::Frame f;
  f.eth.dst = *roce::MacAddr::parse("02:00:00:00:00:0b");
  f.eth.src = *roce::MacAddr::parse("02:00:00:00:00:0a");
  f.ipv6 = ipv6;
  f.ip4.src = *roce::Ipv4Addr::parse("10.0.0.1");
  f.ip4.dst = *roce::Ipv4Addr::parse("10.0.0.2");
  f.ip4.id = uint16_t(psn);
  f.ip6.src = roce::Ipv6Addr::v4_mapped(f.ip4.src);
  f.ip6.dst = roce::Ipv6Addr::v4_mapped(f.ip4.dst);
  f.udp.sport = 0xC000;
  f.bth.opcode = opcode;
  f.bth.dest_qp = kQp;
  f.bth.psn = psn;
  return f;
}

FrameBytes payload_frame(uint8_t opcode, uint32_t psn, size_t len = 64, bool ipv6 = false) {
  roce::Frame f = base(opcode, psn, ipv6);
  if (opcode == op::RC_WRITE_FIRST) f.reth = roce::Reth{0x10000, 0x55, 4096};
  if (opcode == op::UD_SEND_ONLY) f.deth = roce::Deth{0x80010000, 0, 1};
  for (size_t i = 0; i < len; ++i) f.payload.push_back(uint8_t(0xA0 + i));
  return roce::encode(f);
}

FrameBytes write_first(uint32_t psn) { return payload_frame(op::RC_WRITE_FIRST, psn); }
FrameBytes write_middle(uint32_t psn) { return payload_frame(op::RC_WRITE_MIDDLE, psn); }
FrameBytes write_last(uint32_t psn) { return payload_frame(op::RC_WRITE_LAST, psn); }
FrameBytes ud_send(uint32_t psn) { return payload_frame(op::UD_SEND_ONLY, psn, 32); }
FrameBytes ack(uint32_t psn) {
  roce::Frame f = base(op::RC_ACK, psn);
  f.aeth = roce::Aeth{roce::aeth::ack(), 7};
  return roce::encode(f);
}
// IPv4/UDP, but not to port 4791.
FrameBytes udp_other(uint32_t psn) {
  roce::Frame f = base(op::RC_WRITE_MIDDLE, psn);
  f.udp.dport = 53;
  f.payload.assign(20, 0x11);
  return roce::encode(f);
}
// ARP request (EtherType 0x0806), 42 bytes.
FrameBytes arp() {
  FrameBytes b(42, 0);
  for (int i = 0; i < 6; ++i) b[i] = 0xFF;
  b[6] = 0x02; b[11] = 0x0A;
  b[12] = 0x08; b[13] = 0x06;
  return b;
}

// A WRITE of n packets (FIRST, MIDDLE..., LAST) from psn0.
std::vector<FrameBytes> write_msg(uint32_t psn0, int n) {
  std::vector<FrameBytes> v;
  for (int i = 0; i < n; ++i) {
    const uint8_t o = i == 0 ? op::RC_WRITE_FIRST : i == n - 1 ? op::RC_WRITE_LAST : op::RC_WRITE_MIDDLE;
    v.push_back(payload_frame(o, psn0 + uint32_t(i)));
  }
  return v;
}

int opcode_of(const FrameBytes& b) {
  const auto f = roce::decode(b);
  return f ? f->bth.opcode : -1;
}
int64_t psn_of(const FrameBytes& b) {
  const auto f = roce::decode(b);
  return f ? int64_t(f->bth.psn) : -1;
}

// Feeds frames; collects everything that leaves and every record.
struct Feeder {
  FaultInjector inj;
  std::vector<WireOut> out;
  std::vector<FaultApplied> log;
  explicit Feeder(uint64_t seed = 1) : inj(seed) {}
  std::vector<WireOut> feed(const FrameBytes& f) {
    auto o = inj.on_frame(f, &log);
    out.insert(out.end(), o.begin(), o.end());
    return o;
  }
  void feed_all(const std::vector<FrameBytes>& v) {
    for (const auto& f : v) feed(f);
  }
  std::vector<uint64_t> out_indices() const {
    std::vector<uint64_t> v;
    for (const auto& o : out) v.push_back(o.input_index);
    return v;
  }
};

FaultRule rule(const std::string& name, FaultKind k) {
  FaultRule r;
  r.name = name;
  r.kind = k;
  return r;
}

std::vector<uint64_t> iota_except(uint64_t n, std::vector<uint64_t> missing) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < n; ++i)
    if (std::find(missing.begin(), missing.end(), i) == missing.end()) v.push_back(i);
  return v;
}

// --- selection -------------------------------------------------------------

TEST(FaultSelect, NoRulesPassesEverythingUnchanged) {
  Feeder run;
  const std::vector<FrameBytes> in = {write_first(1), write_middle(2), ack(3), ud_send(0), arp(),
                                      udp_other(9)};
  for (size_t i = 0; i < in.size(); ++i) {
    const auto o = run.feed(in[i]);
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].bytes, in[i]);
    EXPECT_EQ(o[0].input_index, i);
    EXPECT_EQ(o[0].extra_delay_ps, 0u);
    EXPECT_FALSE(o[0].duplicate);
    EXPECT_FALSE(o[0].released);
  }
  EXPECT_TRUE(run.log.empty());
  EXPECT_EQ(run.inj.frames_in(), in.size());
}

TEST(FaultSelect, DropByOpcode) {
  Feeder run;
  FaultRule r = rule("drop-acks", FaultKind::drop);
  r.opcodes = {op::RC_ACK};
  r.count = 0;
  run.inj.add_rule(r);
  // 0..4 WRITE, 5 ACK, 6 UD, 7 ACK, 8 non-RoCE UDP, 9 ARP
  auto in = write_msg(100, 5);
  in.push_back(ack(104));
  in.push_back(ud_send(0));
  in.push_back(ack(104));
  in.push_back(udp_other(104));
  in.push_back(arp());
  run.feed_all(in);
  EXPECT_EQ(run.out_indices(), iota_except(10, {5, 7}));
  for (const auto& o : run.out) EXPECT_EQ(o.bytes, in[o.input_index]);
  ASSERT_EQ(run.log.size(), 2u);
  EXPECT_EQ(run.log[0].rule, "drop-acks");
  EXPECT_EQ(run.log[0].kind, FaultKind::drop);
  EXPECT_EQ(run.log[0].frame_index, 5u);
  EXPECT_EQ(run.log[0].opcode, op::RC_ACK);
  EXPECT_EQ(run.log[0].psn, 104);
  EXPECT_EQ(run.log[1].frame_index, 7u);
}

TEST(FaultSelect, DropByOpcodeList) {
  Feeder run;
  FaultRule r = rule("first-and-last", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_FIRST, op::RC_WRITE_LAST};
  r.count = 0;
  run.inj.add_rule(r);
  run.feed_all(write_msg(0, 4));
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{1, 2}));
}

TEST(FaultSelect, DropByPsnOnceThenRetransmissionPasses) {
  Feeder run;
  FaultRule r = rule("psn102", FaultKind::drop);
  r.psn = 102;
  run.inj.add_rule(r);
  auto in = write_msg(100, 5);       // 0..4: PSN 100..104
  auto again = write_msg(100, 5);    // 5..9: the retransmission
  in.insert(in.end(), again.begin(), again.end());
  run.feed_all(in);
  EXPECT_EQ(run.out_indices(), iota_except(10, {2}));
  ASSERT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.log[0].psn, 102);
  EXPECT_EQ(run.log[0].opcode, op::RC_WRITE_MIDDLE);
  EXPECT_EQ(run.inj.applications(0), 1u);
  EXPECT_EQ(run.inj.active_rule_count(), 0u);
}

TEST(FaultSelect, DropByDestQp) {
  Feeder run;
  FaultRule r = rule("qp", FaultKind::drop);
  r.dest_qp = kQp;
  r.count = 0;
  run.inj.add_rule(r);
  roce::Frame other = base(op::RC_WRITE_MIDDLE, 5);
  other.bth.dest_qp = kQp + 1;
  run.feed(write_middle(4));
  run.feed(roce::encode(other));
  run.feed(arp());
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{1, 2}));
}

TEST(FaultSelect, AllCriteriaMustHold) {
  Feeder run;
  FaultRule r = rule("both", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.psn = 103;
  r.count = 0;
  run.inj.add_rule(r);
  run.feed(write_last(103));     // psn fits, opcode not
  run.feed(write_middle(102));   // opcode fits, psn not
  run.feed(write_middle(103));   // both
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 1}));
}

TEST(FaultSelect, NthThirdWriteMiddle) {
  Feeder run;
  run.feed_all(write_msg(0, 4));  // before the rule: not counted
  FaultRule r = rule("3rd-middle", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.nth = 3;
  r.count = 0;  // nth alone limits it to one frame
  run.inj.add_rule(r);
  // 4: FIRST 100, 5..10: MIDDLE 101..106, 11: LAST 107, 12: ACK
  run.feed_all(write_msg(100, 8));
  run.feed(ack(107));
  EXPECT_EQ(run.out_indices(), iota_except(13, {7}));
  ASSERT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.log[0].frame_index, 7u);
  EXPECT_EQ(run.log[0].psn, 103);
  // Another message: the rule has had its frame.
  run.feed_all(write_msg(200, 8));
  EXPECT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.inj.active_rule_count(), 0u);
}

TEST(FaultSelect, CountTwoThenRetires) {
  Feeder run;
  FaultRule r = rule("two", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.count = 2;
  run.inj.add_rule(r);
  run.feed_all(write_msg(0, 6));  // middles at 1..4
  EXPECT_EQ(run.out_indices(), iota_except(6, {1, 2}));
  EXPECT_EQ(run.inj.applications(0), 2u);
  EXPECT_EQ(run.inj.active_rule_count(), 0u);
}

TEST(FaultSelect, CountZeroIsUnlimited) {
  Feeder run;
  FaultRule r = rule("all-middles", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.count = 0;
  run.inj.add_rule(r);
  for (int m = 0; m < 20; ++m) run.feed_all(write_msg(uint32_t(m * 10), 5));
  EXPECT_EQ(run.out.size(), 40u);  // FIRST and LAST of each message
  for (const auto& o : run.out) EXPECT_NE(opcode_of(o.bytes), op::RC_WRITE_MIDDLE);
  EXPECT_EQ(run.inj.applications(0), 60u);
  EXPECT_EQ(run.inj.active_rule_count(), 1u);
}

TEST(FaultSelect, NonRoceNeverMatchesBthCriteria) {
  Feeder run;
  FaultRule r1 = rule("op", FaultKind::drop);
  r1.opcodes = {op::RC_WRITE_MIDDLE};
  r1.count = 0;
  FaultRule r2 = rule("psn", FaultKind::drop);
  r2.psn = 0;
  r2.count = 0;
  FaultRule r3 = rule("qp", FaultKind::drop);
  r3.dest_qp = 0;
  r3.count = 0;
  run.inj.add_rule(r1);
  run.inj.add_rule(r2);
  run.inj.add_rule(r3);
  // udp_other carries a WRITE_MIDDLE-looking BTH behind port 53.
  run.feed_all({udp_other(5), arp(), FrameBytes(60, 0), FrameBytes{}});
  EXPECT_EQ(run.out.size(), 4u);
  EXPECT_TRUE(run.log.empty());
}

TEST(FaultSelect, RuleWithoutCriteriaMatchesAnyFrame) {
  Feeder run;
  FaultRule r = rule("2nd-anything", FaultKind::drop);
  r.nth = 2;
  run.inj.add_rule(r);
  run.feed_all({arp(), udp_other(1), write_middle(2)});
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 2}));
  ASSERT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.log[0].opcode, -1);
  EXPECT_EQ(run.log[0].psn, -1);
}

TEST(FaultSelect, FirstMatchingRuleWins) {
  Feeder run;
  FaultRule dup = rule("dup-102", FaultKind::duplicate);
  dup.psn = 102;
  FaultRule drop = rule("drop-middles", FaultKind::drop);
  drop.opcodes = {op::RC_WRITE_MIDDLE};
  drop.count = 0;
  run.inj.add_rule(dup);
  run.inj.add_rule(drop);
  run.feed_all(write_msg(100, 5));  // 0 FIRST, 1..3 MIDDLE 101..103, 4 LAST
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 2, 2, 4}));
  ASSERT_EQ(run.log.size(), 3u);  // one fault a frame
  EXPECT_EQ(run.log[0].rule, "drop-middles");
  EXPECT_EQ(run.log[1].rule, "dup-102");
  EXPECT_EQ(run.log[1].frame_index, 2u);
  EXPECT_EQ(run.log[2].rule, "drop-middles");
  EXPECT_EQ(run.inj.applications(1), 2u);
}

TEST(FaultSelect, NthCountsFramesTakenByAnEarlierRule) {
  // Both rules count every WRITE_MIDDLE: the 1st goes to rule a, the 2nd to b.
  Feeder run;
  FaultRule a = rule("a", FaultKind::drop);
  a.opcodes = {op::RC_WRITE_MIDDLE};
  a.nth = 1;
  FaultRule b = rule("b", FaultKind::drop);
  b.opcodes = {op::RC_WRITE_MIDDLE};
  b.nth = 2;
  run.inj.add_rule(a);
  run.inj.add_rule(b);
  run.feed_all(write_msg(0, 5));
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 3, 4}));
}

// --- probability -------------------------------------------------------------

std::vector<uint64_t> prob_selection(uint64_t seed, bool with_acks, double p = 0.5) {
  FaultInjector inj(seed);
  FaultRule r = rule("p", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.probability = p;
  r.count = 0;
  inj.add_rule(r);
  std::vector<uint64_t> dropped_psns;
  std::vector<FaultApplied> log;
  for (uint32_t i = 0; i < 1000; ++i) {
    log.clear();
    inj.on_frame(write_middle(i), &log);
    if (!log.empty()) dropped_psns.push_back(uint64_t(log[0].psn));
    if (with_acks) inj.on_frame(ack(i), nullptr);  // never candidates: draw nothing
  }
  return dropped_psns;
}

TEST(FaultProbability, SameSeedSameSelectionOtherSeedOther) {
  const auto a = prob_selection(1, false);
  const auto b = prob_selection(1, false);
  const auto c = prob_selection(2, false);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GE(a.size(), 400u);
  EXPECT_LE(a.size(), 600u);
  EXPECT_GE(c.size(), 400u);
  EXPECT_LE(c.size(), 600u);
}

TEST(FaultProbability, OnlyCandidatesDraw) {
  EXPECT_EQ(prob_selection(7, false), prob_selection(7, true));
}

TEST(FaultProbability, DrawIsTheDocumentedFormula) {
  std::mt19937_64 rng(12345);
  std::vector<uint64_t> expect;
  for (uint32_t i = 0; i < 1000; ++i) {
    const double u = double(rng() >> 11) * 0x1.0p-53;
    if (u < 0.3) expect.push_back(i);
  }
  EXPECT_EQ(prob_selection(12345, true, 0.3), expect);
}

TEST(FaultProbability, ZeroAndOne) {
  EXPECT_TRUE(prob_selection(3, false, 0.0).empty());
  EXPECT_EQ(prob_selection(3, false, 1.0).size(), 1000u);
}

TEST(FaultProbability, WithNthDrawsOnceForThatFrame) {
  // p = 1 on the 2nd middle: exactly that one; the rng is only used once.
  Feeder run;
  FaultRule r = rule("p-nth", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.nth = 2;
  r.probability = 1.0;
  run.inj.add_rule(r);
  run.feed_all(write_msg(0, 5));
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 1, 3, 4}));
}

// --- the faults ----------------------------------------------------------------

TEST(FaultKinds, DuplicateGivesTwoEqualFrames) {
  Feeder run;
  FaultRule r = rule("dup", FaultKind::duplicate);
  r.psn = 101;
  run.inj.add_rule(r);
  const auto in = write_msg(100, 3);
  run.feed(in[0]);
  const auto o = run.feed(in[1]);
  run.feed(in[2]);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].bytes, in[1]);
  EXPECT_EQ(o[1].bytes, in[1]);
  EXPECT_FALSE(o[0].duplicate);
  EXPECT_TRUE(o[1].duplicate);
  EXPECT_EQ(o[0].input_index, 1u);
  EXPECT_EQ(o[1].input_index, 1u);
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 1, 1, 2}));
  ASSERT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.log[0].kind, FaultKind::duplicate);
}

TEST(FaultKinds, ReorderAfterTwo) {
  Feeder run;
  FaultRule r = rule("swap", FaultKind::reorder);
  r.psn = 101;
  r.reorder_after = 2;
  run.inj.add_rule(r);
  const auto in = write_msg(100, 6);  // k = 1
  std::vector<std::vector<WireOut>> per;
  for (const auto& f : in) per.push_back(run.feed(f));
  EXPECT_TRUE(per[1].empty());
  ASSERT_EQ(per[3].size(), 2u);       // frame 3, then the released frame 1
  EXPECT_EQ(per[3][0].input_index, 3u);
  EXPECT_FALSE(per[3][0].released);
  EXPECT_EQ(per[3][1].input_index, 1u);
  EXPECT_TRUE(per[3][1].released);
  EXPECT_EQ(per[3][1].bytes, in[1]);
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 2, 3, 1, 4, 5}));
  for (const auto& o : run.out) EXPECT_EQ(o.bytes, in[o.input_index]);  // nothing lost or changed
  EXPECT_TRUE(run.inj.held_indices().empty());
  ASSERT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.log[0].kind, FaultKind::reorder);
  EXPECT_EQ(run.log[0].frame_index, 1u);
  EXPECT_EQ(run.log[0].detail, "held until after frame 3");
}

TEST(FaultKinds, ReorderCountsDroppedLaterFrames) {
  Feeder run;
  FaultRule hold = rule("hold", FaultKind::reorder);
  hold.psn = 0;
  hold.reorder_after = 2;
  FaultRule drop = rule("drop", FaultKind::drop);
  drop.psn = 1;
  run.inj.add_rule(hold);
  run.inj.add_rule(drop);
  const auto o1 = run.feed(write_middle(0));
  const auto o2 = run.feed(write_middle(1));  // dropped, still counts
  const auto o3 = run.feed(write_middle(2));
  EXPECT_TRUE(o1.empty());
  EXPECT_TRUE(o2.empty());
  ASSERT_EQ(o3.size(), 2u);
  EXPECT_EQ(o3[0].input_index, 2u);
  EXPECT_EQ(o3[1].input_index, 0u);
}

TEST(FaultKinds, ReorderChainReleasesOldestFirst) {
  Feeder run;
  FaultRule r = rule("every", FaultKind::reorder);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.count = 0;
  r.reorder_after = 1;
  run.inj.add_rule(r);
  run.feed_all(write_msg(0, 4));  // 0 F, 1 M, 2 M, 3 L
  // 1 is held until after 2, which is itself held until after 3.
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 1, 3, 2}));
}

TEST(FaultKinds, HeldIndicesAtTheEnd) {
  Feeder run;
  FaultRule r = rule("late", FaultKind::reorder);
  r.psn = 2;
  r.reorder_after = 5;
  run.inj.add_rule(r);
  run.feed_all(write_msg(0, 5));  // only 2 frames after the held one
  EXPECT_EQ(run.inj.held_indices(), (std::vector<uint64_t>{2}));
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 1, 3, 4}));
  run.feed_all(write_msg(10, 3));  // index 7 releases it
  EXPECT_TRUE(run.inj.held_indices().empty());
  EXPECT_EQ(run.out.back().input_index, 2u);
  EXPECT_TRUE(run.out.back().released);
}

TEST(FaultKinds, DelayGivesExtraLatencyToThatFrameOnly) {
  Feeder run;
  FaultRule r = rule("slow", FaultKind::delay);
  r.opcodes = {op::RC_ACK};
  r.delay_ps = 500000;
  run.inj.add_rule(r);
  const auto o1 = run.feed(ack(7));
  const auto o2 = run.feed(ack(8));
  ASSERT_EQ(o1.size(), 1u);
  ASSERT_EQ(o2.size(), 1u);
  EXPECT_EQ(o1[0].extra_delay_ps, 500000u);
  EXPECT_EQ(o1[0].bytes, ack(7));
  EXPECT_EQ(o2[0].extra_delay_ps, 0u);
  ASSERT_EQ(run.log.size(), 1u);
  EXPECT_EQ(run.log[0].detail, "+500000 ps");
}

// Bytes that differ between two equal-sized frames.
std::vector<size_t> diff(const FrameBytes& a, const FrameBytes& b) {
  std::vector<size_t> d;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) d.push_back(i);
  return d;
}

FrameBytes corrupt_once(const FrameBytes& in, FaultRule r, std::vector<FaultApplied>* log = nullptr) {
  FaultInjector inj(1);
  r.kind = FaultKind::corrupt;
  inj.add_rule(r);
  auto o = inj.on_frame(in, log);
  EXPECT_EQ(o.size(), 1u);
  return o.empty() ? FrameBytes{} : o[0].bytes;
}

TEST(FaultCorrupt, ByteAndBitFlipsExactlyThatBit) {
  const FrameBytes in = write_middle(5);
  for (uint32_t byte : {0u, 46u, 60u, uint32_t(in.size() - 1)}) {
    for (uint32_t bit = 0; bit < 8; ++bit) {
      FaultRule r = rule("c", FaultKind::corrupt);
      r.corrupt_byte = byte;
      r.corrupt_bit = bit;
      std::vector<FaultApplied> log;
      const FrameBytes o = corrupt_once(in, r, &log);
      ASSERT_EQ(o.size(), in.size());
      EXPECT_EQ(diff(in, o), std::vector<size_t>{byte});
      EXPECT_EQ(in[byte] ^ o[byte], 1 << bit);
      ASSERT_EQ(log.size(), 1u);
      EXPECT_EQ(log[0].detail, "byte " + std::to_string(byte) + " bit " + std::to_string(bit));
    }
  }
}

TEST(FaultCorrupt, ByteBeyondTheFrameDoesNotApplyAndIsNotCounted) {
  Feeder run;
  FaultRule far = rule("far", FaultKind::corrupt);
  far.corrupt_byte = 200;
  FaultRule dup = rule("dup", FaultKind::duplicate);
  dup.count = 0;
  run.inj.add_rule(far);
  run.inj.add_rule(dup);
  const FrameBytes small = ack(1);  // 14+20+8+12+4+4 = 62 bytes
  ASSERT_EQ(small.size(), 62u);
  const auto o = run.feed(small);
  ASSERT_EQ(o.size(), 2u);  // the next rule took it
  EXPECT_EQ(o[0].bytes, small);
  EXPECT_EQ(run.inj.applications(0), 0u);
  EXPECT_EQ(run.inj.active_rule_count(), 2u);
  // A frame long enough: now the corrupt rule applies (count 1) and retires.
  FrameBytes big = payload_frame(op::RC_WRITE_MIDDLE, 2, 256);
  const auto o2 = run.feed(big);
  ASSERT_EQ(o2.size(), 1u);
  EXPECT_EQ(diff(big, o2[0].bytes), std::vector<size_t>{200});
  EXPECT_EQ(run.inj.applications(0), 1u);
  EXPECT_EQ(run.inj.active_rule_count(), 1u);
}

struct FieldCase { const char* field; size_t offset; };

void check_fields(const FrameBytes& in, const std::vector<FieldCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    EXPECT_EQ(FaultInjector::field_offset(in, c.field), std::optional<size_t>(c.offset));
    for (uint32_t bit : {0u, 5u}) {
      FaultRule r = rule("f", FaultKind::corrupt);
      r.corrupt_field = c.field;
      r.corrupt_bit = bit;
      std::vector<FaultApplied> log;
      const FrameBytes o = corrupt_once(in, r, &log);
      ASSERT_EQ(o.size(), in.size());
      EXPECT_EQ(diff(in, o), std::vector<size_t>{c.offset});
      EXPECT_EQ(in[c.offset] ^ o[c.offset], 1 << bit);
      ASSERT_EQ(log.size(), 1u);
      EXPECT_EQ(log[0].detail, "byte " + std::to_string(c.offset) + " bit " + std::to_string(bit) +
                                   " (" + c.field + ")");
    }
  }
}

TEST(FaultCorrupt, NamedFieldsIpv4) {
  // WRITE_FIRST: BTH, RETH (16), 64 B payload, ICRC.
  const FrameBytes in = write_first(0x123456);
  ASSERT_EQ(in.size(), kBth4 + kBth + 16 + 64 + 4);
  check_fields(in, {{"bth.opcode", kBth4 + 0},      // 42
                    {"bth.dest_qp", kBth4 + 7},     // 49
                    {"bth.psn", kBth4 + 11},        // 53 = 14+20+8+11
                    {"ip.ttl", kEth + 8},           // 22
                    {"ip.checksum", kEth + 10},     // 24
                    {"payload", kBth4 + kBth + 16}, // 70
                    {"icrc", kBth4 + kBth + 16 + 64}});
  EXPECT_EQ(in[kBth4 + 11], 0x56);  // the PSN's LSB really is there
  EXPECT_EQ(in[kBth4 + 7], 0x23);
  // MIDDLE (no extension header) and UD SEND ONLY (DETH 8).
  check_fields(write_middle(1), {{"payload", kBth4 + kBth}, {"icrc", kBth4 + kBth + 64}});
  check_fields(ud_send(0), {{"payload", kBth4 + kBth + 8}, {"icrc", kBth4 + kBth + 8 + 32}});
  // ACK: AETH, no payload.
  check_fields(ack(9), {{"icrc", kBth4 + kBth + 4}});
}

TEST(FaultCorrupt, MoreNamedFields) {
  // IPv4 WRITE_FIRST: Ethernet 14, IPv4 20, UDP 8, BTH 12.
  const FrameBytes in = write_first(0x123456);
  check_fields(in, {{"bth.flags", kBth4 + 1},       // SE, M, PadCnt, TVer
                    {"eth.dst", 5},                 // the destination MAC's last byte
                    {"eth.src", 11},
                    {"ip.version", kEth},           // 0x45
                    {"ip.flags", kEth + 6},         // 0x40: DF
                    {"ip.src", kEth + 15},
                    {"ip.dst", kEth + 19},
                    {"udp.length", kEth + 20 + 5}});
  EXPECT_EQ(in[kEth], 0x45);
  EXPECT_EQ(in[kEth + 6], 0x40);
  // The AETH's syndrome: right after the BTH of an ACK.
  check_fields(ack(9), {{"aeth.syndrome", kBth4 + kBth}});
  EXPECT_FALSE(FaultInjector::field_offset(in, "aeth.syndrome"));  // a WRITE has no AETH
  // IPv6: the addresses' last bytes, the UDP length after the 40-byte header.
  const FrameBytes v6 = payload_frame(op::RC_WRITE_MIDDLE, 0x000A0B, 64, true);
  check_fields(v6, {{"ip.version", kEth}, {"ip.src", kEth + 23}, {"ip.dst", kEth + 39}, {"udp.length", kEth + 40 + 5},
                    {"bth.flags", kBth6 + 1}});
  EXPECT_FALSE(FaultInjector::field_offset(v6, "ip.flags"));  // IPv6 has no flags
}

TEST(FaultCorrupt, ValueSetsTheByteAndRepairRecomputesChecksumAndIcrc) {
  const FrameBytes in = write_middle(77);
  FaultRule r = rule("v", FaultKind::corrupt);
  r.corrupt_field = "bth.opcode";
  r.corrupt_value = op::RC_WRITE_LAST;
  std::vector<FaultApplied> log;
  const FrameBytes unrepaired = corrupt_once(in, r, &log);
  EXPECT_EQ(diff(in, unrepaired), std::vector<size_t>{kBth4});
  EXPECT_EQ(unrepaired[kBth4], op::RC_WRITE_LAST);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].detail, "byte 42 0x07 -> 0x08 (bth.opcode)");
  EXPECT_NE(roce::compute_icrc(unrepaired.data(), unrepaired.size() - 4),
            roce::stored_icrc(unrepaired.data(), unrepaired.size()));
  // repair: the ICRC (the last 4 bytes) is right for the new opcode, the rest as before.
  r.repair = true;
  log.clear();
  const FrameBytes repaired = corrupt_once(in, r, &log);
  EXPECT_EQ(repaired[kBth4], op::RC_WRITE_LAST);
  EXPECT_EQ(roce::compute_icrc(repaired.data(), repaired.size() - 4),
            roce::stored_icrc(repaired.data(), repaired.size()));
  for (size_t i : diff(in, repaired)) EXPECT_TRUE(i == kBth4 || i >= repaired.size() - 4) << i;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].detail, "byte 42 0x07 -> 0x08 (bth.opcode), checksums repaired");
  // An IP field: the IPv4 header checksum is repaired too, and the frame decodes with the new value.
  r.corrupt_field = "ip.dst";
  r.corrupt_value = 0x63;
  const FrameBytes da = corrupt_once(in, r);
  EXPECT_EQ(roce::ipv4_checksum(da.data() + kEth), roce::get_be16(da.data() + kEth + 10));
  EXPECT_EQ(roce::compute_icrc(da.data(), da.size() - 4), roce::stored_icrc(da.data(), da.size()));
  const auto f = roce::decode(da);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->ip4.dst.v & 0xFF, 0x63u);
  // A frame that is not IP is left as the rule made it ("not repairable").
  r.corrupt_field.clear();
  r.corrupt_byte = 20;
  r.corrupt_value = 0xAB;
  log.clear();
  const FrameBytes a = corrupt_once(arp(), r, &log);
  EXPECT_EQ(a[20], 0xAB);
  EXPECT_EQ(diff(arp(), a), std::vector<size_t>{20});
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].detail.find("not repairable"), std::string::npos) << log[0].detail;
}

TEST(FaultCorrupt, NamedFieldsIpv6) {
  const FrameBytes in = payload_frame(op::RC_WRITE_MIDDLE, 0x000A0B, 64, true);
  ASSERT_EQ(in.size(), kBth6 + kBth + 64 + 4);
  check_fields(in, {{"bth.opcode", kBth6},
                    {"bth.dest_qp", kBth6 + 7},
                    {"bth.psn", kBth6 + 11},      // 73 = 14+40+8+11
                    {"ip.ttl", kEth + 7},         // hop limit
                    {"payload", kBth6 + kBth},
                    {"icrc", kBth6 + kBth + 64}});
  EXPECT_FALSE(FaultInjector::field_offset(in, "ip.checksum"));  // IPv6 has none
}

TEST(FaultCorrupt, IcrcBreaksIcrcTtlBreaksOnlyIpChecksum) {
  const FrameBytes in = write_middle(77);
  ASSERT_EQ(roce::compute_icrc(in.data(), in.size() - 4), roce::stored_icrc(in.data(), in.size()));
  ASSERT_EQ(roce::ipv4_checksum(in.data() + kEth), roce::get_be16(in.data() + kEth + 10));

  FaultRule r = rule("icrc", FaultKind::corrupt);
  r.corrupt_field = "icrc";
  const FrameBytes bad_icrc = corrupt_once(in, r);
  EXPECT_NE(roce::compute_icrc(bad_icrc.data(), bad_icrc.size() - 4),
            roce::stored_icrc(bad_icrc.data(), bad_icrc.size()));
  EXPECT_EQ(roce::ipv4_checksum(bad_icrc.data() + kEth), roce::get_be16(bad_icrc.data() + kEth + 10));

  r.corrupt_field = "ip.ttl";
  const FrameBytes bad_ttl = corrupt_once(in, r);
  EXPECT_EQ(roce::compute_icrc(bad_ttl.data(), bad_ttl.size() - 4),
            roce::stored_icrc(bad_ttl.data(), bad_ttl.size()));  // TTL is masked in the ICRC
  EXPECT_NE(roce::ipv4_checksum(bad_ttl.data() + kEth), roce::get_be16(bad_ttl.data() + kEth + 10));

  // The PSN and the payload are covered by the ICRC.
  for (const char* f : {"bth.psn", "payload", "bth.opcode"}) {
    r.corrupt_field = f;
    const FrameBytes b = corrupt_once(in, r);
    EXPECT_NE(roce::compute_icrc(b.data(), b.size() - 4), roce::stored_icrc(b.data(), b.size())) << f;
  }
  // The corrupted PSN decodes as PSN ^ 1.
  r.corrupt_field = "bth.psn";
  EXPECT_EQ(psn_of(corrupt_once(in, r)), 76);
}

TEST(FaultCorrupt, AbsentFieldDoesNotApply) {
  struct Case { FrameBytes frame; const char* field; };
  const std::vector<Case> cases = {
      {ack(1), "payload"},                                            // no payload
      {payload_frame(op::RC_WRITE_MIDDLE, 1, 8, true), "ip.checksum"}, // IPv6
      {arp(), "bth.psn"}, {arp(), "ip.ttl"}, {arp(), "icrc"},
      {udp_other(1), "bth.opcode"}, {udp_other(1), "payload"}, {udp_other(1), "icrc"},
      {FrameBytes{}, "ip.ttl"}, {FrameBytes(20, 0), "bth.psn"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    FaultInjector inj(1);
    FaultRule r = rule("c", FaultKind::corrupt);
    r.corrupt_field = c.field;
    r.probability = 0.5;
    inj.add_rule(r);
    std::vector<FaultApplied> log;
    const auto o = inj.on_frame(c.frame, &log);
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].bytes, c.frame);
    EXPECT_TRUE(log.empty());
    EXPECT_EQ(inj.applications(0), 0u);
  }
  // ip.ttl of a non-RoCE IPv4 frame exists.
  EXPECT_EQ(FaultInjector::field_offset(udp_other(1), "ip.ttl"), std::optional<size_t>(kEth + 8));
}

// --- the link ---------------------------------------------------------------------

TEST(FaultLink, DownDropsEverythingUpResumes) {
  Feeder run;
  FaultRule r = rule("2nd-middle", FaultKind::drop);
  r.opcodes = {op::RC_WRITE_MIDDLE};
  r.nth = 2;
  run.inj.add_rule(r);
  EXPECT_TRUE(run.inj.link_up());
  run.feed(write_middle(0));              // 0: 1st middle, passes
  run.inj.set_link_up(false);
  EXPECT_FALSE(run.inj.link_up());
  run.feed_all({write_middle(1), ack(1), arp(), ud_send(0)});  // 1..4: lost, not counted
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0}));
  ASSERT_EQ(run.log.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(run.log[i].rule, "link");
    EXPECT_EQ(run.log[i].kind, FaultKind::drop);
    EXPECT_EQ(run.log[i].detail, "link down");
    EXPECT_EQ(run.log[i].frame_index, i + 1);
  }
  EXPECT_EQ(run.log[0].opcode, op::RC_WRITE_MIDDLE);
  EXPECT_EQ(run.log[0].psn, 1);
  EXPECT_EQ(run.log[2].opcode, -1);
  run.inj.set_link_up(true);
  run.feed_all({write_middle(2), write_middle(3)});  // 5: 2nd counted middle, dropped by the rule
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{0, 6}));
  ASSERT_EQ(run.log.size(), 5u);
  EXPECT_EQ(run.log[4].rule, "2nd-middle");
  EXPECT_EQ(run.log[4].frame_index, 5u);
}

TEST(FaultLink, DownDrawsNoRandomNumbers) {
  auto run_with = [](bool down_phase) {
    FaultInjector inj(99);
    FaultRule r = rule("p", FaultKind::drop);
    r.probability = 0.5;
    r.count = 0;
    inj.add_rule(r);
    if (down_phase) {
      inj.set_link_up(false);
      for (uint32_t i = 0; i < 50; ++i) inj.on_frame(write_middle(i), nullptr);
      inj.set_link_up(true);
    }
    std::vector<uint64_t> kept;
    for (uint32_t i = 0; i < 200; ++i)
      if (!inj.on_frame(write_middle(i), nullptr).empty()) kept.push_back(i);
    return kept;
  };
  EXPECT_EQ(run_with(false), run_with(true));
}

TEST(FaultLink, HeldFrameDueWhileDownIsLost) {
  Feeder run;
  FaultRule r = rule("hold", FaultKind::reorder);
  r.psn = 0;
  r.reorder_after = 2;
  run.inj.add_rule(r);
  run.feed(write_middle(0));   // held until after frame 2
  run.feed(write_middle(1));
  run.inj.set_link_up(false);
  run.feed(write_middle(2));   // lost; the held frame is due now: lost too
  run.inj.set_link_up(true);
  run.feed(write_middle(3));
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{1, 3}));
  EXPECT_TRUE(run.inj.held_indices().empty());
  ASSERT_EQ(run.log.size(), 3u);
  EXPECT_EQ(run.log[1].frame_index, 2u);
  EXPECT_EQ(run.log[1].detail, "link down");
  EXPECT_EQ(run.log[2].frame_index, 0u);
  EXPECT_EQ(run.log[2].rule, "link");
  EXPECT_EQ(run.log[2].detail, "link down while held");
}

// --- robustness and API ---------------------------------------------------------------

TEST(FaultRobust, ShortAndGarbageFrames) {
  std::vector<FrameBytes> junk = {FrameBytes{}, FrameBytes{0x01}, FrameBytes(13, 0xFF),
                                  FrameBytes(14, 0)};
  // Truncations of real frames at every length, IPv4 and IPv6.
  for (const FrameBytes& whole :
       {write_first(3), ack(4), payload_frame(op::RC_WRITE_MIDDLE, 5, 16, true)})
    for (size_t n = 0; n <= whole.size(); ++n) junk.emplace_back(whole.begin(), whole.begin() + long(n));
  // IPv4 header that claims UDP 4791 with IHL 15 in a short frame.
  FrameBytes ihl = write_middle(6);
  ihl[kEth] = 0x4F;
  junk.push_back(ihl);
  junk.emplace_back(ihl.begin(), ihl.begin() + 60);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    FrameBytes b(size_t(rng() % 120));
    for (auto& x : b) x = uint8_t(rng());
    if (b.size() > 13 && (i & 1)) { b[12] = 0x08; b[13] = 0x00; }
    if (b.size() > 14 && (i & 1)) b[14] = 0x45;
    junk.push_back(b);
  }
  for (const char* field : {"bth.opcode", "bth.psn", "bth.dest_qp", "ip.ttl", "ip.checksum",
                            "icrc", "payload"}) {
    FaultInjector inj(1);
    FaultRule c = rule(field, FaultKind::corrupt);
    c.corrupt_field = field;
    c.count = 0;
    inj.add_rule(c);
    FaultRule m = rule("m", FaultKind::duplicate);
    m.opcodes = {op::RC_WRITE_MIDDLE};
    m.psn = 6;
    m.count = 0;
    inj.add_rule(m);
    for (const auto& f : junk) {
      const auto o = inj.on_frame(f, nullptr);
      ASSERT_GE(o.size(), 1u);
      EXPECT_EQ(o[0].bytes.size(), f.size());
      EXPECT_LE(diff(f, o[0].bytes).size(), 1u);
    }
  }
}

TEST(FaultApi, KindNames) {
  EXPECT_STREQ(FaultInjector::kind_name(FaultKind::drop), "drop");
  EXPECT_STREQ(FaultInjector::kind_name(FaultKind::duplicate), "duplicate");
  EXPECT_STREQ(FaultInjector::kind_name(FaultKind::reorder), "reorder");
  EXPECT_STREQ(FaultInjector::kind_name(FaultKind::corrupt), "corrupt");
  EXPECT_STREQ(FaultInjector::kind_name(FaultKind::delay), "delay");
  for (FaultKind k : {FaultKind::drop, FaultKind::duplicate, FaultKind::reorder,
                      FaultKind::corrupt, FaultKind::delay})
    EXPECT_EQ(FaultInjector::kind_from_name(FaultInjector::kind_name(k)), k);
  EXPECT_FALSE(FaultInjector::kind_from_name("lose"));
}

TEST(FaultApi, InvalidRulesAreRejected) {
  FaultInjector inj(1);
  auto bad = [&](FaultRule r) {
    EXPECT_FALSE(FaultInjector::check_rule(r).empty()) << r.name;
    EXPECT_THROW(inj.add_rule(r), std::invalid_argument) << r.name;
  };
  FaultRule r = rule("nth0", FaultKind::drop);
  r.nth = 0;
  bad(r);
  r = rule("p>1", FaultKind::drop);
  r.probability = 1.5;
  bad(r);
  r = rule("p<0", FaultKind::drop);
  r.probability = -0.1;
  bad(r);
  r = rule("corrupt-nothing", FaultKind::corrupt);
  bad(r);
  r = rule("corrupt-both", FaultKind::corrupt);
  r.corrupt_byte = 3;
  r.corrupt_field = "icrc";
  bad(r);
  r = rule("corrupt-unknown", FaultKind::corrupt);
  r.corrupt_field = "bth.pkey";
  bad(r);
  r = rule("bit8", FaultKind::corrupt);
  r.corrupt_byte = 3;
  r.corrupt_bit = 8;
  bad(r);
  r = rule("reorder0", FaultKind::reorder);
  r.reorder_after = 0;
  bad(r);
  EXPECT_EQ(inj.rule_count(), 0u);
  r = rule("ok", FaultKind::corrupt);
  r.corrupt_field = "payload";
  r.corrupt_bit = 7;
  EXPECT_TRUE(FaultInjector::check_rule(r).empty());
  inj.add_rule(r);
  EXPECT_EQ(inj.rule_count(), 1u);
}

TEST(FaultApi, FrameIndexCountsEveryFrame) {
  Feeder run;
  FaultRule r = rule("drop-all", FaultKind::drop);
  r.count = 3;
  run.inj.add_rule(r);
  run.feed_all({arp(), arp(), arp(), write_middle(1), ack(2)});
  EXPECT_EQ(run.out_indices(), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(run.inj.frames_in(), 5u);
}

}  // namespace
