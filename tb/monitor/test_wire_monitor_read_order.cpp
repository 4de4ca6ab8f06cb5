// tb/monitor: issue 13's cases: a request judged at the time its requester
// committed to it, READ responses taken in PSN order (held, repeated,
// out of sequence), READ spans unknown before the PMTU.
#include <gtest/gtest.h>

#include <optional>

#include "model/monitor/wire_monitor.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/monitor/wire_monitor_fixtures.h"

using ernic::monitor::WireMonitor;
namespace op = roce::op;
using namespace ernic::test;

// Issue 13: a request is judged against the answers its requester had taken
// when it committed to the request (on_frame's t_committed), not when the
// request reached the wire. The ACK of 0x10 is taken at t = 2000.
TEST(WireMonitor, RequestJudgedAtItsCommitTime) {
  auto run = [](uint64_t commit) {
    WireMonitor m(true);
    auto enc = [](uint8_t opc, uint32_t qp, uint32_t psn, std::optional<roce::Aeth> aeth) {
      roce::Frame f;
      f.bth.opcode = opc;
      f.bth.dest_qp = qp;
      f.bth.psn = psn;
      f.bth.ack_req = qp == kQpB;
      f.aeth = aeth;
      return roce::encode(f);
    };
    m.on_frame(enc(op::RC_SEND_ONLY, kQpB, 0x10, {}), 1000, AB);
    const auto ack = enc(op::RC_ACK, kQpA, 0x10, roce::Aeth{0x1F, 1});
    m.on_frame(ack, 1500, BA);
    m.on_delivered(ack, 2000, BA);
    // A timeout retransmission of 0x10 reaches the wire at 3000.
    m.on_frame(enc(op::RC_SEND_ONLY, kQpB, 0x10, {}), 3000, AB, commit);
    return m.violations();
  };
  EXPECT_TRUE(run(1900).empty()) << "committed before the ACK was taken: a legal race";
  EXPECT_TRUE(run(2000).empty()) << "committed at the instant the ACK was taken: concurrent, not seen";
  const auto late = run(2100);
  ASSERT_EQ(late.size(), 1u) << "committed after the ACK was taken";
  EXPECT_EQ(late[0].rule, "psn_sequence");
  EXPECT_NE(late[0].what.find("goes back to an acknowledged PSN"), std::string::npos) << late[0].what;
}

// Issue 13: responses are taken in PSN order. READ 0x20's response is held
// on the wire, READ 0x21's arrives first: the requester drops it (out of
// sequence), so it acknowledges nothing. 0x20's then arrives and completes
// that READ; going back to 0x21 is legal. Once 0x21 is answered in order,
// going back to it again is not.
TEST(WireMonitor, ResponseBehindAnUnfinishedReadAcknowledgesNothing) {
  DeliveredWire w;
  w.req(op::RC_WRITE_FIRST, 0x1E, 256);       // the PMTU (256): READ spans are known
  w.req(op::RC_WRITE_LAST, 0x1F, 4);
  w.ans(op::RC_ACK, 0x1F, 0x1F, 1);
  w.req(op::RC_READ_REQUEST, 0x20, 0, 1);
  w.req(op::RC_READ_REQUEST, 0x21, 0, 1);
  w.req(op::RC_SEND_ONLY, 0x22, 1);
  const auto late = w.ans(op::RC_READ_RESP_ONLY, 0x20, 0x1F, 2, 1, /*deliver=*/false);
  w.ans(op::RC_READ_RESP_ONLY, 0x21, 0x1F, 3, 1);
  w.deliver(late);
  w.ans(op::RC_ACK, 0x22, 0x1F, 4);           // an ACK beyond the READ the requester dropped
  w.req(op::RC_READ_REQUEST, 0x21, 0, 1);
  w.req(op::RC_SEND_ONLY, 0x22, 1);
  w.ans(op::RC_READ_RESP_ONLY, 0x21, 0x1F, 4, 1);
  w.ans(op::RC_ACK, 0x22, 0x1F, 4);
  w.req(op::RC_SEND_ONLY, 0x23, 1);           // a new request: the go-back is over
  w.ans(op::RC_ACK, 0x23, 0x1F, 5);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  w.req(op::RC_READ_REQUEST, 0x21, 0, 1);
  ASSERT_FALSE(w.m.violations().empty());
  EXPECT_EQ(w.m.violations()[0].rule, "psn_sequence") << w.dump();
}

// Issue 13 (random seed 529): a READ response the wire repeats does not make
// the monitor lose track of the READ: once its LAST is taken the READ is
// done, and a go-back cut short after everything is acknowledged, with a new
// request following, is legal.
TEST(WireMonitor, RepeatedReadResponseKeepsTheReadTracked) {
  DeliveredWire w;
  w.req(op::RC_READ_REQUEST, 0x30, 0, 768);  // PMTU 256 learnt below: 3 responses
  w.req(op::RC_WRITE_FIRST, 0x33, 256);       // sets the PMTU (256)
  w.req(op::RC_WRITE_LAST, 0x34, 4);
  w.ans(op::RC_READ_RESP_FIRST, 0x30, 0x1F, 1, 256);
  const auto mid = w.ans(op::RC_READ_RESP_MIDDLE, 0x31, 0, 0, 256);
  w.deliver(mid);                             // the wire's copy
  w.ans(op::RC_READ_RESP_LAST, 0x32, 0x1F, 1, 256);
  w.ans(op::RC_ACK, 0x33, 0x60, 1);           // NAK: 0x33 lost
  w.req(op::RC_WRITE_FIRST, 0x33, 256);       // the go-back...
  w.ans(op::RC_ACK, 0x34, 0x1F, 2);           // ...overtaken by the ACK of the whole WRITE
  w.req(op::RC_SEND_ONLY, 0x35, 4);           // the go-back stops; a new request follows
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

// Issue 13 (random seed 1375): a READ sent again after it was answered asks
// the responder for a duplicate; its responses may carry the current MSN,
// which counts the SEND executed after the READ.
TEST(WireMonitor, ReissuedReadKeepsItsAnsweredState) {
  DeliveredWire w;
  w.req(op::RC_READ_REQUEST, 0x40, 0, 1);
  w.req(op::RC_SEND_ONLY, 0x41, 1);
  w.ans(op::RC_READ_RESP_ONLY, 0x40, 0x1F, 1, 1, /*deliver=*/false);  // lost; B's ACKs wait (timeout mode)
  w.req(op::RC_READ_REQUEST, 0x40, 0, 1);     // the requester's timeout re-issues
  w.req(op::RC_SEND_ONLY, 0x41, 1);
  w.ans(op::RC_READ_RESP_ONLY, 0x40, 0x1F, 2, 1);  // the duplicate READ: current MSN 2
  w.ans(op::RC_ACK, 0x41, 0x1F, 2);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

// Issue 13 (random seed 6758): READ 0x50's response is held behind READ
// 0x52's; FIRST 0x52 is out of sequence (dropped), the late ONLY 0x50 is
// taken, and LAST 0x53 is still out of sequence (FIRST 0x52 is missing), so
// its AETH acknowledges nothing: the SEND at 0x51 is unacknowledged and the
// go-back resends it legally.
TEST(WireMonitor, OutOfSequenceLastAcknowledgesNothing) {
  DeliveredWire w;
  w.req(op::RC_WRITE_FIRST, 0x4E, 256);       // the PMTU (256)
  w.req(op::RC_WRITE_LAST, 0x4F, 4);
  w.ans(op::RC_ACK, 0x4F, 0x1F, 1);
  w.req(op::RC_READ_REQUEST, 0x50, 0, 1);
  w.req(op::RC_SEND_ONLY, 0x51, 1);
  w.req(op::RC_READ_REQUEST, 0x52, 0, 512);   // two responses
  const auto late = w.ans(op::RC_READ_RESP_ONLY, 0x50, 0x1F, 2, 1, /*deliver=*/false);
  w.ans(op::RC_READ_RESP_FIRST, 0x52, 0x1F, 4, 256);
  w.deliver(late);
  w.ans(op::RC_READ_RESP_LAST, 0x53, 0x1F, 4, 256);
  w.req(op::RC_SEND_ONLY, 0x51, 1);           // the go-back from READ 0x50 (its READ withdrawn)
  w.req(op::RC_READ_REQUEST, 0x52, 0, 512);
  w.ans(op::RC_ACK, 0x51, 0x1F, 4);
  w.ans(op::RC_READ_RESP_FIRST, 0x52, 0x1F, 4, 256);
  w.ans(op::RC_READ_RESP_LAST, 0x53, 0x1F, 4, 256);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

// Adversarial pass on issue 13: a go-back to a READ sent before the PMTU is
// known (READ 0x03 of 257 bytes: one or two PSNs) must not forget that its
// responses may reach 0x04. The implied NAK (ACK 0x01 beyond unanswered READ
// 0x00) sends A back to 0x00 while 0x03's span is unknown; LAST 0x04 is then
// a legal answer, not one "beyond the highest request PSN sent".
TEST(WireMonitor, GoBackKeepsAnUnknownReadSpanForItsResponses) {
  DeliveredWire w;
  w.req(op::RC_READ_REQUEST, 0x00, 0, 64);
  w.req(op::RC_SEND_ONLY, 0x01, 8);
  w.req(op::RC_READ_REQUEST, 0x02, 0, 64);
  w.req(op::RC_READ_REQUEST, 0x03, 0, 257);
  const auto held = w.ans(op::RC_READ_RESP_ONLY, 0x00, 0x1F, 1, 64, /*deliver=*/false);
  w.ans(op::RC_ACK, 0x01, 0x1F, 2);                 // implied NAK for READ 0x00
  w.ans(op::RC_READ_RESP_ONLY, 0x02, 0x1F, 3, 64);
  w.req(op::RC_READ_REQUEST, 0x00, 0, 64);          // the go-back
  w.ans(op::RC_READ_RESP_FIRST, 0x03, 0x1F, 4, 256);
  w.ans(op::RC_READ_RESP_LAST, 0x04, 0x1F, 4, 1);   // inside 0x03's possible span
  w.deliver(held);
  w.req(op::RC_SEND_ONLY, 0x01, 8);
  w.ans(op::RC_READ_RESP_ONLY, 0x00, 0x1F, 4, 64);
  w.ans(op::RC_ACK, 0x04, 0x1F, 4);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

// Adversarial pass on issue 13 (random seed 22499): an ACK taken while a
// READ before it still misses its LAST covers what follows the READ once the
// READ completes: the SEND at 0x63 is acknowledged, not resent, and the next
// request is new. Going back to it afterwards is not legal.
TEST(WireMonitor, AckPastAnUnfinishedReadCountsOnceTheReadCompletes) {
  DeliveredWire w;
  w.req(op::RC_WRITE_FIRST, 0x5E, 256);       // the PMTU (256)
  w.req(op::RC_WRITE_LAST, 0x5F, 4);
  w.ans(op::RC_ACK, 0x5F, 0x1F, 1);
  w.req(op::RC_SEND_ONLY, 0x60, 1);
  w.req(op::RC_READ_REQUEST, 0x61, 0, 504);   // two responses
  w.req(op::RC_SEND_ONLY, 0x63, 1);
  w.ans(op::RC_ACK, 0x60, 0x1F, 2);
  w.ans(op::RC_READ_RESP_FIRST, 0x61, 0x1F, 3, 256);
  const auto late = w.ans(op::RC_READ_RESP_LAST, 0x62, 0x1F, 3, 248, /*deliver=*/false);
  w.ans(op::RC_ACK, 0x63, 0x1F, 4);           // implied NAK for the READ
  w.req(op::RC_READ_REQUEST, 0x61, 0, 504);   // the READ re-issued (3.1: whole)
  w.deliver(late);                            // ...and completed by the late LAST
  w.req(op::RC_SEND_ONLY, 0x64, 1);           // new: 0x63 was acknowledged by ACK 0x63
  w.ans(op::RC_ACK, 0x64, 0x1F, 5);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  w.req(op::RC_SEND_ONLY, 0x63, 1);
  ASSERT_FALSE(w.m.violations().empty());
  EXPECT_EQ(w.m.violations()[0].rule, "psn_sequence") << w.dump();
}
