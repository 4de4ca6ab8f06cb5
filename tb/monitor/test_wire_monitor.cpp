// tb/monitor: the wire monitor on frame streams built with roce::encode.
// Legal streams give no violation; each rule broken once is reported under
// its own name.
#include <gtest/gtest.h>

#include "model/monitor/wire_monitor.h"
#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

using ernic::monitor::WireMonitor;
namespace op = roce::op;

namespace {

constexpr uint32_t kQpB = 2;   // responder's QP on B (requests A->B go here)
constexpr uint32_t kQpA = 3;   // requester's QP on A (answers B->A go here)
const std::string AB = "A->B", BA = "B->A";

struct Wire {
  WireMonitor m;
  uint64_t t = 0;

  void send(const std::string& dir, roce::Frame f, const roce::EncodeOptions& o = {}) {
    f.ip4.src = roce::Ipv4Addr{dir == AB ? 0x0A000001u : 0x0A000002u};
    f.ip4.dst = roce::Ipv4Addr{dir == AB ? 0x0A000002u : 0x0A000001u};
    t += 1000000;
    m.on_frame(roce::encode(f, o), t, dir);
  }
  // A request packet A->B. ack_req defaults to IBTA's rule (LAST/ONLY/READ).
  void req(uint8_t opcode, uint32_t psn, size_t payload = 0, int ack_req = -1, uint32_t read_len = 0) {
    roce::Frame f;
    f.bth.opcode = opcode;
    f.bth.dest_qp = kQpB;
    f.bth.psn = psn;
    const auto* oi = roce::opcode_info(opcode);
    f.bth.ack_req = ack_req >= 0 ? ack_req != 0 : (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only);
    if (oi->ext & roce::kExtReth) f.reth = roce::Reth{0x1000, 0x100, opcode == op::RC_READ_REQUEST ? read_len : 0};
    f.payload.assign(payload, 0xA5);
    send(AB, f);
  }
  // An answer B->A (ACK, NAK or READ response).
  void ans(uint8_t opcode, uint32_t psn, uint8_t syn, uint32_t msn, size_t payload = 0) {
    roce::Frame f;
    f.bth.opcode = opcode;
    f.bth.dest_qp = kQpA;
    f.bth.psn = psn;
    if (roce::opcode_info(opcode)->ext & roce::kExtAeth) f.aeth = roce::Aeth{syn, msn};
    f.payload.assign(payload, 0x5A);
    send(BA, f);
  }
  void ack(uint32_t psn, uint32_t msn, uint8_t syn = 0x1F) { ans(op::RC_ACK, psn, syn, msn); }

  std::string dump() const {
    std::string s;
    for (const auto& v : m.violations()) s += "  " + v.str() + "\n";
    return s;
  }
  // Exactly the one rule, at least once, and nothing else.
  void expect_only(const std::string& rule) const {
    ASSERT_FALSE(m.violations().empty()) << "no violation; expected " << rule;
    for (const auto& v : m.violations()) EXPECT_EQ(v.rule, rule) << dump();
  }
};

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

namespace {
// A monitor fed as System feeds it (acks_from_delivery): frames as sent and,
// for answers, as delivered to the requester.
struct DeliveredWire {
  WireMonitor m{true};
  uint64_t t = 0;
  std::vector<uint8_t> enc(uint8_t opc, uint32_t qp, uint32_t psn, size_t payload, uint32_t read_len,
                           std::optional<roce::Aeth> aeth) {
    roce::Frame f;
    f.bth.opcode = opc;
    f.bth.dest_qp = qp;
    f.bth.psn = psn;
    const auto* oi = roce::opcode_info(opc);
    f.bth.ack_req = qp == kQpB && (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only);
    if (oi->ext & roce::kExtReth) f.reth = roce::Reth{0x1000, 0x100, opc == op::RC_READ_REQUEST ? read_len : 0};
    f.aeth = aeth;
    f.payload.assign(payload, 0xA5);
    return roce::encode(f);
  }
  void req(uint8_t opc, uint32_t psn, size_t payload = 0, uint32_t read_len = 0) {
    m.on_frame(enc(opc, kQpB, psn, payload, read_len, {}), t += 1000, AB);
  }
  // An answer B->A: as sent now; delivered now too unless `deliver` is false
  // (then deliver() hands it over later).
  std::vector<uint8_t> ans(uint8_t opc, uint32_t psn, uint8_t syn, uint32_t msn, size_t payload = 0,
                           bool deliver = true) {
    auto b = enc(opc, kQpA, psn, payload, 0, roce::opcode_info(opc)->ext & roce::kExtAeth
                                                  ? std::optional<roce::Aeth>(roce::Aeth{syn, msn})
                                                  : std::nullopt);
    m.on_frame(b, t += 1000, BA);
    if (deliver) m.on_delivered(b, t += 1000, BA);
    return b;
  }
  void deliver(const std::vector<uint8_t>& b) { m.on_delivered(b, t += 1000, BA); }
  std::string dump() const {
    std::string s;
    for (const auto& v : m.violations()) s += "  " + v.str() + "\n";
    return s;
  }
};
}  // namespace

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
