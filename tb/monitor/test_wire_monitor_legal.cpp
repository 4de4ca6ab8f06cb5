// tb/monitor: the wire monitor on legal frame streams built with
// roce::encode (writes, sends, READs, go-back-N, CM, QPs reused out of
// band): no violation.
#include <gtest/gtest.h>

#include "model/monitor/wire_monitor.h"
#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/monitor/wire_monitor_fixtures.h"

namespace op = roce::op;
using namespace ernic::test;

namespace {

constexpr uint32_t P = 0xFFFFFE;  // start PSN close to the 24-bit wrap

}  // namespace

TEST(WireMonitor, LegalWriteSendAndCoalescedAck) {
  Wire w;
  w.req(op::RC_WRITE_FIRST, P, 1024);
  w.req(op::RC_WRITE_MIDDLE, P + 1, 1024);   // wraps to 0
  w.req(op::RC_WRITE_LAST, 0x000000, 100);   // 100 + pad 0
  w.req(op::RC_SEND_ONLY, 0x000001, 7);      // padded to 8
  w.req(op::RC_SEND_FIRST, 0x000002, 1024);
  w.req(op::RC_SEND_LAST_IMM, 0x000003, 1024);
  w.ack(0x000003, 3);                         // one ACK for three messages
  w.req(op::RC_WRITE_ONLY_IMM, 0x000004, 0);
  w.ack(0x000004, 4);
  w.ack(0x000004, 4);                         // a duplicate ACK
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

TEST(WireMonitor, LegalGoBackNAfterNak) {
  Wire w;
  w.req(op::RC_SEND_FIRST, 100, 512);
  w.req(op::RC_SEND_MIDDLE, 101, 512);        // lost on the way
  w.req(op::RC_SEND_LAST, 102, 12);
  w.req(op::RC_WRITE_ONLY, 103, 64);
  w.ans(op::RC_ACK, 101, 0x60, 0);             // NAK PSN sequence error: 101 expected
  w.req(op::RC_SEND_MIDDLE, 101, 512);         // go back to 101, then onwards
  w.req(op::RC_SEND_LAST, 102, 12);
  w.req(op::RC_WRITE_ONLY, 103, 64);
  w.req(op::RC_WRITE_ONLY, 104, 64);           // new
  w.ack(104, 3);
  // a timeout retransmission of everything unacknowledged is legal too
  w.req(op::RC_SEND_ONLY, 105, 4);
  w.req(op::RC_SEND_ONLY, 106, 4);
  w.req(op::RC_SEND_ONLY, 105, 4);
  w.req(op::RC_SEND_ONLY, 106, 4);
  w.ans(op::RC_ACK, 106, 0x21, 4);             // RNR NAK on 106
  w.req(op::RC_SEND_ONLY, 106, 4);
  w.ack(106, 5);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

TEST(WireMonitor, LegalReadWithResponses) {
  Wire w;
  // READ before any FIRST: the PMTU comes from the first response.
  w.req(op::RC_READ_REQUEST, 500, 0, -1, 2500);   // 3 PSNs at PMTU 1024
  w.ans(op::RC_READ_RESP_FIRST, 500, 0x1F, 1, 1024);
  w.ans(op::RC_READ_RESP_MIDDLE, 501, 0, 0, 1024);
  w.ans(op::RC_READ_RESP_LAST, 502, 0x1F, 1, 452);
  w.req(op::RC_WRITE_ONLY, 503, 8);
  w.req(op::RC_READ_REQUEST, 504, 0, -1, 1000);   // one response
  w.req(op::RC_READ_REQUEST, 505, 0, -1, 0);      // zero length: one PSN
  w.req(op::RC_SEND_ONLY, 506, 8);
  w.ans(op::RC_READ_RESP_ONLY, 504, 0x1F, 3, 1000);
  w.ans(op::RC_READ_RESP_ONLY, 505, 0x1F, 4, 0);
  w.ack(506, 5);
  // READ sent after the PMTU is known, response lost: re-issued for the rest.
  w.req(op::RC_READ_REQUEST, 507, 0, -1, 3000);   // 507..509
  w.ans(op::RC_READ_RESP_FIRST, 507, 0x1F, 6, 1024);
  w.req(op::RC_READ_REQUEST, 508, 0, -1, 3000 - 1024);  // 508..509
  w.ans(op::RC_READ_RESP_FIRST, 508, 0x1F, 6, 1024);
  w.ans(op::RC_READ_RESP_LAST, 509, 0x1F, 6, 952);
  w.req(op::RC_SEND_ONLY, 510, 8);
  w.ack(510, 7);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

TEST(WireMonitor, LegalGoBackOverReadsOfUnknownSpan) {
  // Found by `ernic-sim random --seed 42`: READs sent before the PMTU is
  // known, a go-back over them (NAK on the WRITE before), the PMTU learnt
  // from a response only after the READs were re-sent. The SEND that
  // follows is new, not a retransmission.
  Wire w;
  w.req(op::RC_WRITE_ONLY_IMM, 0x27, 8);
  w.req(op::RC_READ_REQUEST, 0x28, 0, -1, 1600);   // 0x28..0x2b at PMTU 512
  w.req(op::RC_READ_REQUEST, 0x2c, 0, -1, 512);    // 0x2c
  w.ans(op::RC_ACK, 0x27, 0x60, 0);                // NAK: 0x27 expected (it came late)
  w.req(op::RC_WRITE_ONLY_IMM, 0x27, 8);
  w.ack(0x27, 1);
  w.req(op::RC_READ_REQUEST, 0x28, 0, -1, 1600);
  w.req(op::RC_READ_REQUEST, 0x2c, 0, -1, 512);
  w.ans(op::RC_READ_RESP_FIRST, 0x28, 0x1F, 2, 512);
  w.ans(op::RC_READ_RESP_MIDDLE, 0x29, 0, 0, 512);
  w.ans(op::RC_READ_RESP_MIDDLE, 0x2a, 0, 0, 512);
  w.ans(op::RC_READ_RESP_LAST, 0x2b, 0x1F, 2, 64);
  w.ans(op::RC_READ_RESP_ONLY, 0x2c, 0x1F, 3, 512);
  w.req(op::RC_SEND_FIRST, 0x2d, 512);
  w.req(op::RC_SEND_LAST, 0x2e, 100);
  w.ack(0x2e, 4);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

TEST(WireMonitor, LegalCmThenTraffic) {
  Wire w;
  roce::cm::Req req;
  req.local_comm_id = 7;
  req.local_qpn = kQpA;
  roce::cm::MadHeader h;
  roce::Frame f;
  f.bth.opcode = op::UD_SEND_ONLY;
  f.bth.dest_qp = 1;
  f.deth = roce::Deth{roce::cm::kGsiQkey, 0, 1};
  f.payload = roce::cm::encode_mad(h, req);
  w.send(AB, f);
  roce::cm::Rep rep;
  rep.remote_comm_id = 7;
  rep.local_qpn = kQpB;
  f.payload = roce::cm::encode_mad(h, rep);
  w.send(BA, f);
  w.req(op::RC_SEND_ONLY, 42, 16);
  w.ack(42, 1);
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
}

// The same QPs reused by a connection set up out of band (connect cm:
// false, qp_adopt): new PSNs, the MSN from 0. Without new_connection the
// monitor holds the old connection's state and flags both (the false
// errors a reused QPN gave before the System told it).
TEST(WireMonitor, LegalOutOfBandReuseOfTheQps) {
  auto run = [](bool told) {
    Wire w;
    w.req(op::RC_WRITE_ONLY, 0x500000, 64);
    w.req(op::RC_WRITE_ONLY, 0x500001, 64);
    w.req(op::RC_WRITE_ONLY, 0x500002, 64);
    w.ack(0x500002, 3);
    if (told) w.m.new_connection(AB, kQpB, BA, kQpA);
    w.req(op::RC_WRITE_ONLY, 0x100, 64);
    w.ack(0x100, 1);
    return w;
  };
  const Wire told = run(true);
  EXPECT_TRUE(told.m.violations().empty()) << told.dump();
  const Wire blind = run(false);
  ASSERT_EQ(blind.m.violations().size(), 2u) << blind.dump();
  EXPECT_EQ(blind.m.violations()[0].rule, "psn_sequence");
  EXPECT_EQ(blind.m.violations()[1].rule, "msn");
}
