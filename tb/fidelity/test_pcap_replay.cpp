// tb/fidelity: `ernic-sim pcap replay` on the five real captures: the
// requester side of each one's first RC connection into an ERNIC node, its
// answers against the real responder's field by field. The differences
// expected, each explained, are in tb/fidelity/replay/<capture>.expect;
// the list must be exactly those, everything else matching. Also: the
// explanation of the ACK differences checked (gone at line rate), the
// mapping (PSN wrap, another VA, another QPN) changing nothing, and a
// planted mismatch found and failing the run (or reported only).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "tb/fidelity/replay_run.h"

namespace {

using namespace replay_run;

struct Case {
  const char* capture;
  size_t answers;  // the real responder's answers to the replayed requester
  size_t matched;  // of them, equal to ERNIC's field for field
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.capture; }

class Replay : public ::testing::TestWithParam<Case> {};

// Exactly the explained differences; every other answer matches.
TEST_P(Replay, OnlyExplainedDifferences) {
  const Case c = GetParam();
  const Outcome r = replay(c.capture, "--expect " + kExpect + "/" + c.capture + ".expect");
  EXPECT_EQ(r.code, 0) << r.text();
  EXPECT_EQ(r.with("diff (expected): "), expected(c.capture)) << r.text();
  EXPECT_TRUE(r.with("diff: ").empty()) << r.text();
  EXPECT_TRUE(r.with("expected difference not seen: ").empty()) << r.text();
  EXPECT_EQ(r.with("match: ").size(), c.matched) << r.text();
  const auto sum = r.with("summary: ");
  ASSERT_EQ(sum.size(), 1u) << r.text();
  EXPECT_EQ(sum[0].rfind(std::to_string(c.answers) + " capture answers", 0), 0u) << sum[0];
}

INSTANTIATE_TEST_SUITE_P(Captures, Replay,
                         ::testing::Values(Case{"pingpong_rc", 5, 5}, Case{"rdma_read_bw", 15, 15},
                                           Case{"rdma_send_bw", 5, 5}, Case{"rdma_write_bw", 5, 5},
                                           Case{"rdma_write_lat", 5, 5}),
                         [](const auto& i) { return std::string(i.param.capture); });

// The explanation of the extra ACKs (ERNIC's ACK timer during the
// requester's pauses): back to back at line rate they are not sent.
TEST(ReplayCheck, TimerAcksGoneAtLineRate) {
  for (const char* cap : {"rdma_write_bw", "rdma_send_bw"}) {
    const Outcome r = replay(cap, "--fast");
    EXPECT_EQ(r.code, 0) << r.text();
    EXPECT_TRUE(r.with("diff: ").empty()) << r.text();
    EXPECT_EQ(r.with("match: ").size(), 5u) << r.text();
  }
}

// The mapping: PSNs shifted across the 2^24 wrap, the MR at another VA,
// another ERNIC QPN, the RTL datapath; the READ answers still equal the capture's.
TEST(ReplayCheck, MappingChangesNothing) {
  const Outcome r = replay("rdma_read_bw", "--psn-delta 16777000 --va-base 0x10000 --node-qpn 5 --datapath rtl");
  EXPECT_EQ(r.code, 0) << r.text();
  EXPECT_TRUE(r.with("diff: ").empty()) << r.text();
  EXPECT_EQ(r.with("match: ").size(), 15u) << r.text();
  EXPECT_EQ(r.with("map: R_Key 0x00000d48 -> ").size(), 1u) << r.text();
  EXPECT_NE(r.text().find("-> 0x0000000000010000 (3008 bytes)"), std::string::npos) << r.text();
}

// Unexplained differences fail the run; --report-only lists them and passes.
TEST(ReplayCheck, UnexplainedDifferencesFail) {
  const Outcome r = replay("rdma_write_bw", "");
  EXPECT_EQ(r.code, 1) << r.text();
  EXPECT_EQ(r.with("diff: "), expected("rdma_write_bw")) << r.text();
  EXPECT_EQ(replay("rdma_write_bw", "--report-only").code, 0);
  // A wrong mapping (the responder expecting one PSN too far): the first
  // WRITE is taken as a duplicate, every MSN one short.
  const Outcome w = replay("rdma_write_lat", "--first-psn 8986548");
  EXPECT_EQ(w.code, 1) << w.text();
  const std::vector<std::string> want = {
      "frame 24: RC_ACK psn=8986547: MSN 1 in the capture, 0 from ERNIC",
      "frame 28: RC_ACK psn=8986548: MSN 2 in the capture, 1 from ERNIC",
      "frame 32: RC_ACK psn=8986549: MSN 3 in the capture, 2 from ERNIC",
      "frame 36: RC_ACK psn=8986550: MSN 4 in the capture, 3 from ERNIC",
      "frame 40: RC_ACK psn=8986551: MSN 5 in the capture, 4 from ERNIC"};
  EXPECT_EQ(w.with("diff: "), want) << w.text();
  // An expected difference that does not happen fails too.
  const Outcome x = replay("pingpong_rc", "--expect " + kExpect + "/rdma_write_bw.expect");
  EXPECT_EQ(x.code, 1) << x.text();
  EXPECT_EQ(x.with("expected difference not seen: ").size(), 2u) << x.text();
}

TEST(ReplayCheck, UnusableInput) {
  EXPECT_EQ(replay("no_such_capture", "").code, 2);
  EXPECT_EQ(replay("pingpong_rc", "--requester-ip 10.9.9.9").code, 2);
  EXPECT_EQ(replay("pingpong_rc", "--node-qpn 1").code, 2);
}

}  // namespace
