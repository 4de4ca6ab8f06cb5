// tb/monitor: retransmissions judged on the answers the requester took
// (acks_from_delivery): whole-message resends, implied NAKs, go-backs an
// ACK overtook, duplicate READs answered with the current MSN.
#include <gtest/gtest.h>

#include <optional>

#include "model/monitor/wire_monitor.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/monitor/wire_monitor_fixtures.h"

using ernic::monitor::WireMonitor;
namespace op = roce::op;
using namespace ernic::test;

TEST(WireMonitor, DeliveredAcksDecideRetransmissions) {
  // With acks_from_delivery, an ACK that left B but never reached A does not
  // make A's retransmission illegal.
  WireMonitor m(true);
  auto enc = [](uint8_t opc, uint32_t qp, uint32_t psn, bool ackreq, std::optional<roce::Aeth> aeth) {
    roce::Frame f;
    f.bth.opcode = opc;
    f.bth.dest_qp = qp;
    f.bth.psn = psn;
    f.bth.ack_req = ackreq;
    f.aeth = aeth;
    return roce::encode(f);
  };
  m.on_frame(enc(op::RC_SEND_ONLY, kQpB, 10, true, {}), 1, AB);
  m.on_delivered(enc(op::RC_SEND_ONLY, kQpB, 10, true, {}), 2, AB);
  m.on_frame(enc(op::RC_ACK, kQpA, 10, false, roce::Aeth{0x1F, 1}), 3, BA);  // dropped on the wire
  m.on_frame(enc(op::RC_SEND_ONLY, kQpB, 10, true, {}), 4, AB);             // timeout retransmission
  EXPECT_TRUE(m.violations().empty());
  m.on_delivered(enc(op::RC_ACK, kQpA, 10, false, roce::Aeth{0x1F, 1}), 5, BA);
  m.on_frame(enc(op::RC_SEND_ONLY, kQpB, 10, true, {}), 6, AB);             // now acknowledged
  ASSERT_EQ(m.violations().size(), 1u);
  EXPECT_EQ(m.violations()[0].rule, "psn_sequence");
}

TEST(WireMonitor, LegalWholeMessageResendAndImpliedNak) {
  Wire w;
  // PG332 3.1 resends a whole WQE after a NAK in its middle.
  w.req(op::RC_WRITE_FIRST, 0x100, 256);
  w.req(op::RC_WRITE_MIDDLE, 0x101, 256);
  w.req(op::RC_WRITE_MIDDLE, 0x102, 256);
  w.req(op::RC_WRITE_LAST, 0x103, 4);
  w.ans(op::RC_ACK, 0x102, 0x60, 0);           // 0x102 lost
  w.req(op::RC_WRITE_FIRST, 0x100, 256);
  w.req(op::RC_WRITE_MIDDLE, 0x101, 256);
  w.req(op::RC_WRITE_MIDDLE, 0x102, 256);
  w.req(op::RC_WRITE_LAST, 0x103, 4);
  w.ack(0x103, 1);
  // READ whose response is lost: the ACK of the next SEND implies a NAK and
  // the READ is sent again although the ACK's PSN is past it.
  w.req(op::RC_READ_REQUEST, 0x104, 0, -1, 64);
  w.req(op::RC_SEND_ONLY, 0x105, 4);
  w.ack(0x105, 3);
  w.req(op::RC_READ_REQUEST, 0x104, 0, -1, 64);
  w.ans(op::RC_READ_RESP_ONLY, 0x104, 0x1F, 3, 64);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  // ... but once the message is acknowledged, going back into it is not.
  w.req(op::RC_WRITE_FIRST, 0x100, 256);
  w.expect_only("psn_sequence");
}

TEST(WireMonitor, GoBackAfterNakOvertakenByAck) {
  // Found by `ernic-sim random`: B gets SEND 1 before WRITE 0 (reordered),
  // NAKs 1 (expects 0), then accepts 0 and ACKs it. A had committed to its
  // go-back from 0 when that ACK arrived: resending 0 and 1 is legal.
  DeliveredWire w;
  w.req(op::RC_WRITE_ONLY, 0x10, 1);
  w.req(op::RC_SEND_ONLY, 0x11, 1);
  w.ans(op::RC_ACK, 0x10, 0x60, 0);   // NAK-PSN: 0x10 expected
  w.ans(op::RC_ACK, 0x10, 0x1F, 1);   // then 0x10 arrived
  w.req(op::RC_WRITE_ONLY, 0x10, 1);  // the go-back A committed to
  w.req(op::RC_SEND_ONLY, 0x11, 1);
  w.ans(op::RC_ACK, 0x11, 0x1F, 2);
  w.req(op::RC_WRITE_ONLY, 0x12, 1);  // new: the go-back is over
  w.ans(op::RC_ACK, 0x12, 0x1F, 3);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  // Without a new NAK, going back to acknowledged PSNs is wrong again.
  w.req(op::RC_WRITE_ONLY, 0x10, 1);
  ASSERT_FALSE(w.m.violations().empty());
  EXPECT_EQ(w.m.violations()[0].rule, "psn_sequence") << w.dump();
}

TEST(WireMonitor, GoBackAfterImpliedNakStopsWhenAcknowledged) {
  // Found by `ernic-sim random`: the response to READ 0x11 is held on the
  // wire, so the ACK of 0x12 implies a NAK (go back to 0x11). A finishes the
  // WQE it is sending, then resends from the next outstanding WQE (0x13),
  // which an ACK delivered meanwhile already covers, stops there and
  // continues with a new WQE.
  DeliveredWire w;
  w.req(op::RC_READ_REQUEST, 0x10, 0, 64);
  w.req(op::RC_READ_REQUEST, 0x11, 0, 8);
  w.req(op::RC_WRITE_ONLY, 0x12, 8);
  w.ans(op::RC_READ_RESP_ONLY, 0x10, 0x1F, 1, 64);
  auto late = w.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 2, 8, /*deliver=*/false);
  w.ans(op::RC_ACK, 0x12, 0x1F, 3);   // beyond the unanswered READ 0x11
  w.req(op::RC_WRITE_FIRST, 0x13, 256);
  w.req(op::RC_WRITE_LAST, 0x14, 8);
  w.deliver(late);
  w.ans(op::RC_ACK, 0x14, 0x1F, 4);
  w.req(op::RC_WRITE_FIRST, 0x13, 256);  // committed before the ACK of 0x14 was seen
  w.req(op::RC_WRITE_ONLY, 0x15, 8);     // stops mid-message: everything is acknowledged
  w.ans(op::RC_ACK, 0x15, 0x1F, 5);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

TEST(WireMonitor, ImpliedNakReissuesTheReadAndSkipsWhatTheAckCovered) {
  // Found by the peer family (rc_read_sizes_reorder_both_ways, B the ideal
  // peer): the ACK of 0x13 covers the WRITEs 0x12..0x13 but not READ 0x11,
  // whose response was lost (IBTA's implied NAK). ERNIC re-issues READ 0x11
  // and goes on with a new request at 0x14 without resending the WRITEs the
  // responder has executed and acknowledged (its go-back never resends what
  // an ACK covered): legal, the responder sees a duplicate READ, then the
  // PSN it expects.
  DeliveredWire w;
  w.req(op::RC_READ_REQUEST, 0x10, 0, 64);
  w.req(op::RC_READ_REQUEST, 0x11, 0, 8);
  w.req(op::RC_WRITE_ONLY, 0x12, 8);
  w.req(op::RC_WRITE_ONLY, 0x13, 8);
  w.ans(op::RC_READ_RESP_ONLY, 0x10, 0x1F, 1, 64);
  w.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 2, 8, /*deliver=*/false);  // lost
  w.ans(op::RC_ACK, 0x13, 0x1F, 4);     // beyond the unanswered READ 0x11
  w.req(op::RC_READ_REQUEST, 0x11, 0, 8);  // re-issued
  w.req(op::RC_WRITE_ONLY, 0x14, 8);       // new: 0x12..0x13 are acknowledged
  w.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 4, 8);  // the duplicate READ, current MSN
  w.ans(op::RC_ACK, 0x14, 0x1F, 5);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  // A READ in the skipped part whose responses are missing must be re-issued.
  DeliveredWire v;
  v.req(op::RC_READ_REQUEST, 0x10, 0, 8);
  v.req(op::RC_READ_REQUEST, 0x11, 0, 8);
  v.req(op::RC_WRITE_ONLY, 0x12, 8);
  v.ans(op::RC_READ_RESP_ONLY, 0x10, 0x1F, 1, 8, /*deliver=*/false);
  v.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 2, 8, /*deliver=*/false);
  v.ans(op::RC_ACK, 0x12, 0x1F, 3);
  v.req(op::RC_READ_REQUEST, 0x10, 0, 8);
  v.req(op::RC_WRITE_ONLY, 0x13, 8);  // skips READ 0x11, still unanswered
  ASSERT_FALSE(v.m.violations().empty()) << v.dump();
  EXPECT_EQ(v.m.violations()[0].rule, "psn_sequence") << v.dump();
}

TEST(WireMonitor, DuplicateReadAnsweredWithCurrentMsn) {
  // Found by `ernic-sim random`: READ 0x11 overtaken by SEND 0x12 (NAK),
  // resent and answered (MSN 2); the first copy arrives after SEND 0x12 was
  // accepted, is executed again and answered with the current MSN 3.
  DeliveredWire w;
  w.req(op::RC_SEND_ONLY, 0x10, 1);
  w.req(op::RC_READ_REQUEST, 0x11, 0, 1);
  w.req(op::RC_SEND_ONLY, 0x12, 1);
  w.ans(op::RC_ACK, 0x11, 0x60, 1);   // NAK-PSN: 0x11 expected
  w.req(op::RC_READ_REQUEST, 0x11, 0, 1);
  w.req(op::RC_SEND_ONLY, 0x12, 1);
  w.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 2, 1);
  w.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 3, 1);  // the duplicate, current MSN
  w.ans(op::RC_ACK, 0x12, 0x1F, 3);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  // A first answer may not count messages after its READ.
  DeliveredWire v;
  v.req(op::RC_READ_REQUEST, 0x11, 0, 1);
  v.req(op::RC_SEND_ONLY, 0x12, 1);
  v.ans(op::RC_READ_RESP_ONLY, 0x11, 0x1F, 2, 1);
  ASSERT_FALSE(v.m.violations().empty());
  EXPECT_EQ(v.m.violations()[0].rule, "msn") << v.dump();
}
