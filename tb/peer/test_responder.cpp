// tb/peer: the ideal peer's responder on SEND / WRITE requests: PSN classes
// (expected, duplicate, out of sequence), ACK / NAK fields (PSN, syndrome,
// MSN, credits), coalescing, remote access and invalid-request NAKs, the
// Error state. Expected values come from IBTA's rules, written here.
#include "tb/peer/peer_fixture.h"

namespace ernic::peer::test {
namespace op = roce::op;

// The ACK syndrome for n free receive WQEs: type 00, the largest credit
// code whose count does not exceed n (IBTA 9.7.5.1).
uint8_t ack_for(uint32_t n) {
  uint8_t c = 0;
  for (uint8_t k = 0; k <= 30; ++k)
    if (ibta_credits(k) <= n) c = k;
  return c;
}

void expect_ack(const roce::Frame& a, uint32_t psn, uint8_t syndrome, uint32_t msn) {
  EXPECT_EQ(a.bth.opcode, op::RC_ACK);
  EXPECT_EQ(a.bth.psn, psn);
  ASSERT_TRUE(a.aeth.has_value());
  EXPECT_EQ(a.aeth->syndrome, syndrome);
  EXPECT_EQ(a.aeth->msn, msn);
  EXPECT_TRUE(a.payload.empty());
}

TEST_F(PeerResponder, CreditEncodingMatchesIbta) {
  for (uint8_t c = 0; c <= 30; ++c) EXPECT_EQ(roce::aeth::kCreditCount[c], ibta_credits(c)) << int(c);
  EXPECT_EQ(roce::aeth::credit_code(4), 4);
  EXPECT_EQ(roce::aeth::credit_code(5), 4);     // 6 > 5
  EXPECT_EQ(roce::aeth::credit_code(100), 13);  // 96 <= 100 < 128
  EXPECT_EQ(roce::aeth::credit_code(1u << 20), 30);
}

TEST_F(PeerResponder, WriteFirstMiddleLastLandsAndIsAckedOnceAtLast) {
  // 2500 bytes at PMTU 1024: FIRST 1024, MIDDLE 1024, LAST 452; AckReq on LAST only.
  const uint64_t va = rw.va + 100;
  EXPECT_TRUE(feed(reth_req(op::RC_WRITE_FIRST, 0x100, 1024, va, rw.rkey, 2500, false, 0x00)).empty());
  EXPECT_TRUE(feed(req(op::RC_WRITE_MIDDLE, 0x101, 1024, false, 0x40)).empty());
  auto out = feed(req(op::RC_WRITE_LAST, 0x102, 452, true, 0x80));
  ASSERT_EQ(out.size(), 1u);
  const roce::Frame a = wire(out[0]);
  expect_ack(a, 0x102, ack_for(4), 1);  // 4 receive elements: code 4
  EXPECT_EQ(a.bth.dest_qp, 0x17u);
  EXPECT_EQ(a.eth.dst, q.remote_mac);
  EXPECT_EQ(a.eth.src, cfg.mac);
  EXPECT_EQ(a.ip4.dst, q.remote_ip.ip4);
  EXPECT_EQ(q.epsn, 0x103u);
  EXPECT_EQ(q.msn, 1u);
  const uint8_t* m = mem->data(rw.pa + 100, 2500);
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(m[i], uint8_t(0x00 + i)) << i;
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(m[1024 + i], uint8_t(0x40 + i)) << i;
  for (size_t i = 0; i < 452; ++i) ASSERT_EQ(m[2048 + i], uint8_t(0x80 + i)) << i;
  EXPECT_EQ(mem->data(rw.pa + 99, 1)[0], 0);     // nothing before
  EXPECT_EQ(mem->data(rw.pa + 2600, 1)[0], 0);   // nor after
}

TEST_F(PeerResponder, OutOfSequenceGetsOneNakPsnAtTheExpectedPsn) {
  feed(reth_req(op::RC_WRITE_ONLY, 0x100, 8, rw.va, rw.rkey, 8, true));  // MSN 1, ePSN 0x101
  auto out = feed(reth_req(op::RC_WRITE_ONLY, 0x103, 8, rw.va, rw.rkey, 8, true));
  ASSERT_EQ(out.size(), 1u);
  expect_ack(wire(out[0]), 0x101, roce::aeth::kNakPsnSeq, 1);  // NAK code 0: syndrome 0x60
  EXPECT_EQ(out[0].aeth->syndrome, 0x60);
  EXPECT_TRUE(feed(reth_req(op::RC_WRITE_ONLY, 0x104, 8, rw.va, rw.rkey, 8, true)).empty());  // no second NAK
  out = feed(reth_req(op::RC_WRITE_ONLY, 0x101, 8, rw.va, rw.rkey, 8, true));               // the expected one
  ASSERT_EQ(out.size(), 1u);
  expect_ack(out[0], 0x101, ack_for(4), 2);
  out = feed(reth_req(op::RC_WRITE_ONLY, 0x105, 8, rw.va, rw.rkey, 8, true));  // a new gap: a new NAK
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x60);
  EXPECT_EQ(out[0].bth.psn, 0x102u);
  EXPECT_FALSE(q.error);
  EXPECT_EQ(q.stats.naks_psn, 2u);
}

TEST_F(PeerResponder, DuplicateIsReackedAtEpsnMinusOneAndNotWrittenAgain) {
  feed(reth_req(op::RC_WRITE_ONLY, 0x100, 16, rw.va, rw.rkey, 16, true, 0x10));
  feed(reth_req(op::RC_WRITE_ONLY, 0x101, 16, rw.va + 16, rw.rkey, 16, true, 0x20));
  // The first again, with other bytes: re-ACKed at ePSN - 1 = 0x101 with MSN 2; memory unchanged.
  auto out = feed(reth_req(op::RC_WRITE_ONLY, 0x100, 16, rw.va, rw.rkey, 16, true, 0xE0));
  ASSERT_EQ(out.size(), 1u);
  expect_ack(out[0], 0x101, ack_for(4), 2);
  EXPECT_EQ(mem->data(rw.pa, 1)[0], 0x10);
  EXPECT_EQ(q.epsn, 0x102u);
  EXPECT_EQ(q.stats.duplicates, 1u);
  // A duplicate without AckReq (a FIRST of a resent message) is not answered.
  EXPECT_TRUE(feed(reth_req(op::RC_WRITE_FIRST, 0x0FF, 1024, rw.va, rw.rkey, 2048)).empty());
  // PSN wrap: ePSN - 2^23 is still a duplicate, ePSN - 2^23 - 1 is out of sequence.
  out = feed(reth_req(op::RC_WRITE_ONLY, roce::psn_add(0x102, -0x800000), 16, rw.va, rw.rkey, 16, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, ack_for(4));
  out = feed(reth_req(op::RC_WRITE_ONLY, roce::psn_add(0x102, -0x800001), 16, rw.va, rw.rkey, 16, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, roce::aeth::kNakPsnSeq);
}

TEST_F(PeerResponder, PsnWrapsFrom0xFFFFFFTo0) {
  q.epsn = 0xFFFFFF;
  auto out = feed(reth_req(op::RC_WRITE_ONLY, 0xFFFFFF, 4, rw.va, rw.rkey, 4, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.psn, 0xFFFFFFu);
  EXPECT_EQ(q.epsn, 0u);
  out = feed(reth_req(op::RC_WRITE_ONLY, 0, 4, rw.va, rw.rkey, 4, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.psn, 0u);
  EXPECT_EQ(out[0].aeth->msn, 2u);
}

TEST_F(PeerResponder, AckEveryNPacketsCoalesces) {
  cfg.ack_every_packets = 2;
  // A 4-packet WRITE: ACKs after packets 2 and 4 (the LAST also has AckReq).
  const uint32_t len = 4 * 1024;
  std::vector<size_t> acks;
  for (uint32_t i = 0; i < 4; ++i) {
    const uint8_t opc = i == 0 ? op::RC_WRITE_FIRST : i == 3 ? op::RC_WRITE_LAST : op::RC_WRITE_MIDDLE;
    roce::Frame f = i == 0 ? reth_req(opc, 0x100, 1024, rw.va, rw.rkey, len) : req(opc, 0x100 + i, 1024, i == 3);
    auto out = feed(f);
    for (auto& a : out) acks.push_back(a.bth.psn);
    if (i == 1) {
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].aeth->msn, 0u);  // the message is not complete yet
    }
  }
  EXPECT_EQ(acks, (std::vector<size_t>{0x101, 0x103}));
  EXPECT_EQ(q.msn, 1u);
}

TEST_F(PeerResponder, CreditsInvalidSends31) {
  cfg.credits_invalid = true;
  auto out = feed(req(op::RC_SEND_ONLY, 0x100, 10, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x1F);
}

TEST_F(PeerResponder, SendsLandInConsecutiveReceiveElements) {
  feed(req(op::RC_SEND_ONLY, 0x100, 100, true, 0x01));
  roce::Frame imm = req(op::RC_SEND_ONLY_IMM, 0x101, 50, true, 0x02);
  imm.immdt = 0xCAFEF00D;
  auto out = feed(imm);
  ASSERT_EQ(out.size(), 1u);
  expect_ack(out[0], 0x101, ack_for(4), 2);
  EXPECT_EQ(mem->data(q.rq_pa, 1)[0], 0x01);
  EXPECT_EQ(mem->data(q.rq_pa + 4096, 1)[0], 0x02);
  EXPECT_EQ(q.last_immdt, 0xCAFEF00Du);
  EXPECT_EQ(q.recv_index, 2u);
  // Longer than an element: NAK invalid request, QP in Error.
  feed(req(op::RC_SEND_FIRST, 0x102, 1024));
  feed(req(op::RC_SEND_MIDDLE, 0x103, 1024));
  feed(req(op::RC_SEND_MIDDLE, 0x104, 1024));
  feed(req(op::RC_SEND_MIDDLE, 0x105, 1024));
  out = feed(req(op::RC_SEND_LAST, 0x106, 4, true));
  ASSERT_EQ(out.size(), 1u);
  expect_ack(out[0], 0x106, roce::aeth::kNakInvalid, 2);
  EXPECT_TRUE(q.error);
}

TEST_F(PeerResponder, BadRkeyOrRightOrBoundsIsNakRemoteAccessAndError) {
  struct Case { uint32_t rkey; uint64_t va; uint32_t len; };
  const Case cases[] = {{rw.rkey ^ 0x100, rw.va, 8},            // no such R_Key
                        {ro.rkey, ro.va, 8},                    // no remote write right
                        {rw.rkey, rw.va + 65536 - 4, 8},        // past the end
                        {rw.rkey, rw.va - 8, 8}};               // before the start
  for (const Case& c : cases) {
    SetUp();
    auto out = feed(reth_req(op::RC_WRITE_ONLY, 0x100, 8, c.va, c.rkey, c.len, true));
    ASSERT_EQ(out.size(), 1u);
    expect_ack(wire(out[0]), 0x100, 0x62, 0);  // NAK code 2, at the request's PSN
    EXPECT_TRUE(q.error);
    EXPECT_EQ(mem->data(rw.pa, 8)[0], 0);
    // In Error every frame is dropped: no answer, no execution.
    EXPECT_TRUE(feed(reth_req(op::RC_WRITE_ONLY, 0x101, 8, rw.va, rw.rkey, 8, true)).empty());
    EXPECT_EQ(mem->data(rw.pa, 8)[0], 0);
  }
}

TEST_F(PeerResponder, OpcodeSequenceAndLengthErrorsAreNakInvalid) {
  // A MIDDLE outside a message.
  auto out = feed(req(op::RC_WRITE_MIDDLE, 0x100, 1024));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x61);
  EXPECT_EQ(out[0].bth.psn, 0x100u);
  // A FIRST shorter than the PMTU.
  SetUp();
  out = feed(reth_req(op::RC_WRITE_FIRST, 0x100, 1000, rw.va, rw.rkey, 4000));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x61);
  // A SEND inside a WRITE.
  SetUp();
  feed(reth_req(op::RC_WRITE_FIRST, 0x100, 1024, rw.va, rw.rkey, 4096));
  out = feed(req(op::RC_SEND_LAST, 0x101, 4, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x61);
  // A WRITE ONLY whose payload differs from its DMA length.
  SetUp();
  out = feed(reth_req(op::RC_WRITE_ONLY, 0x100, 8, rw.va, rw.rkey, 12, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x61);
  // An atomic (not supported).
  SetUp();
  out = feed(req(op::RC_FETCH_ADD, 0x100, 0, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x61);
  EXPECT_TRUE(q.error);
}

}  // namespace ernic::peer::test
