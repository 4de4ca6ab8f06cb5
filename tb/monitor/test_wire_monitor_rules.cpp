// tb/monitor: the wire monitor's rules, each broken once on a frame stream
// built with roce::encode, is reported under its own name.
#include <gtest/gtest.h>

#include "model/monitor/wire_monitor.h"
#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/monitor/wire_monitor_fixtures.h"

namespace op = roce::op;
using namespace ernic::test;

TEST(WireMonitorRule, PsnSequence) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.req(op::RC_SEND_ONLY, 12, 4);      // 11 skipped
  w.expect_only("psn_sequence");
  EXPECT_EQ(w.m.violations()[0].frame_index, 1u);
  EXPECT_EQ(w.m.violations()[0].dir, AB);
}

TEST(WireMonitorRule, PsnBackToAcknowledged) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.req(op::RC_SEND_ONLY, 11, 4);
  w.ack(11, 2);
  w.req(op::RC_SEND_ONLY, 11, 4);      // already acknowledged
  w.expect_only("psn_sequence");
}

TEST(WireMonitorRule, Retransmit) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.req(op::RC_WRITE_ONLY, 11, 4);
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.req(op::RC_SEND_ONLY, 11, 4);      // was a WRITE_ONLY
  w.expect_only("retransmit");
}

TEST(WireMonitorRule, OpcodeSequence) {
  Wire w;
  w.req(op::RC_SEND_FIRST, 10, 256);
  w.req(op::RC_WRITE_ONLY, 11, 4);     // inside the SEND
  w.expect_only("opcode_sequence");
  Wire v;
  v.req(op::RC_WRITE_MIDDLE, 10, 256); // no FIRST
  v.expect_only("opcode_sequence");
}

TEST(WireMonitorRule, AckReq) {
  Wire w;
  w.req(op::RC_SEND_FIRST, 10, 256);
  w.req(op::RC_SEND_LAST, 11, 4, 0);
  w.expect_only("ackreq");
  Wire r;
  r.req(op::RC_READ_REQUEST, 10, 0, 0, 64);
  r.expect_only("ackreq");
}

TEST(WireMonitorRule, PadCnt) {
  Wire w;
  roce::Frame f;
  f.bth.opcode = op::RC_SEND_ONLY;
  f.bth.dest_qp = kQpB;
  f.bth.psn = 10;
  f.bth.ack_req = true;
  f.payload.assign(5, 1);               // 5 bytes, no pad
  roce::EncodeOptions o;
  o.fill_pad = false;
  w.send(AB, f, o);
  w.expect_only("padcnt");
  Wire v;                               // pad on a FIRST packet
  f.bth.opcode = op::RC_SEND_FIRST;
  f.bth.ack_req = false;
  f.payload.assign(254, 1);
  f.bth.pad_cnt = 2;
  f.pad.assign(2, 0);
  v.send(AB, f, o);
  ASSERT_FALSE(v.m.violations().empty());
  EXPECT_EQ(v.m.violations()[0].rule, "padcnt") << v.dump();
}

TEST(WireMonitorRule, Pmtu) {
  Wire w;
  w.req(op::RC_WRITE_FIRST, 10, 1024);
  w.req(op::RC_WRITE_MIDDLE, 11, 512);
  w.req(op::RC_WRITE_LAST, 12, 4);
  w.expect_only("pmtu");
  Wire v;
  v.req(op::RC_SEND_FIRST, 10, 1000);   // not a PMTU
  v.req(op::RC_SEND_LAST, 11, 4);
  v.expect_only("pmtu");
}

TEST(WireMonitorRule, ReadResp) {
  Wire w;
  w.req(op::RC_SEND_FIRST, 9, 1024);
  w.req(op::RC_SEND_LAST, 10, 4);
  w.req(op::RC_READ_REQUEST, 11, 0, -1, 2500);            // 3 responses due
  w.ans(op::RC_READ_RESP_FIRST, 11, 0x1F, 2, 1024);
  w.ans(op::RC_READ_RESP_LAST, 12, 0x1F, 2, 1476);        // LAST too early
  w.expect_only("read_resp");
  Wire v;
  v.req(op::RC_READ_REQUEST, 11, 0, -1, 100);
  v.req(op::RC_SEND_ONLY, 12, 4);
  v.ans(op::RC_READ_RESP_ONLY, 12, 0x1F, 1, 100);         // not the READ's PSN
  v.expect_only("read_resp");
  Wire u;
  u.req(op::RC_READ_REQUEST, 11, 0, -1, 100);
  u.ans(op::RC_READ_RESP_ONLY, 11, 0x1F, 1, 96);          // short
  u.expect_only("read_resp");
}

TEST(WireMonitorRule, AckPsn) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.ack(11, 1);                                           // 11 never sent
  w.expect_only("ack_psn");
}

TEST(WireMonitorRule, AethSyndrome) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.ack(10, 1, 0x40);                                     // type 10b reserved
  w.expect_only("aeth_syndrome");
}

TEST(WireMonitorRule, NakCode) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.ack(10, 0, 0x65);
  w.expect_only("nak_code");
}

TEST(WireMonitorRule, Msn) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.req(op::RC_SEND_ONLY, 11, 4);
  w.ack(11, 2);
  w.req(op::RC_SEND_ONLY, 12, 4);
  w.ack(12, 1);                                           // went down
  w.expect_only("msn");
  Wire v;
  v.req(op::RC_SEND_FIRST, 10, 256);
  v.req(op::RC_SEND_LAST, 11, 4);
  v.ack(11, 2);                                           // one message only
  v.expect_only("msn");
}

// A responder preset below the MSN wrap: the first MSN (upper half) is the
// start, and the MSN then counts across 0xFFFFFF -> 0.
TEST(WireMonitorRule, MsnWrapAfterPreset) {
  Wire w;
  w.req(op::RC_SEND_ONLY, 10, 4);
  w.ack(10, 0xFFFFFE);                                    // preset start
  w.req(op::RC_SEND_ONLY, 11, 4);
  w.ack(11, 0xFFFFFF);
  w.req(op::RC_SEND_ONLY, 12, 4);
  w.req(op::RC_SEND_ONLY, 13, 4);
  w.ack(13, 0x000001);                                    // two messages, across the wrap
  EXPECT_TRUE(w.m.violations().empty()) << w.dump();
  Wire v;
  v.req(op::RC_SEND_ONLY, 10, 4);
  v.ack(10, 0xFFFFFF);
  v.req(op::RC_SEND_ONLY, 11, 4);
  v.ack(11, 0x000002);                                    // one message, MSN grew by 3
  v.expect_only("msn");
  Wire u;
  u.req(op::RC_SEND_ONLY, 10, 4);
  u.ack(10, 0xFFFFFF);
  u.req(op::RC_SEND_ONLY, 11, 4);
  u.ack(11, 0xFFFFFE);                                    // went down, just below the wrap
  u.expect_only("msn");
}

TEST(WireMonitorRule, UdSend) {
  Wire w;
  roce::Frame f;
  f.bth.opcode = op::UD_SEND_ONLY;
  f.bth.dest_qp = 5;
  f.deth = roce::Deth{roce::cm::kGsiQkey, 0, 1};
  f.payload.assign(256, 0);
  w.send(AB, f);
  w.expect_only("ud_send");
}

TEST(WireMonitorRule, Decode) {
  Wire w;
  roce::Frame f;
  f.bth.opcode = op::RC_SEND_ONLY;
  f.bth.dest_qp = kQpB;
  f.bth.psn = 10;
  f.bth.ack_req = true;
  f.icrc = 0x12345678;
  roce::EncodeOptions o;
  o.fill_icrc = false;
  w.send(AB, f, o);
  w.expect_only("decode");
}
