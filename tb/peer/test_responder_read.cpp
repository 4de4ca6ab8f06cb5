// tb/peer: the ideal peer's READ responses: segmentation into FIRST /
// MIDDLE / LAST or ONLY (IBTA vol. 1 chapter 9), PSNs, AETH on FIRST, LAST and
// ONLY only, payload bytes and pad, exact frame lengths; duplicates
// re-executed; the MSN; access errors.
#include "tb/peer/peer_fixture.h"

namespace ernic::peer::test {
namespace op = roce::op;

TEST_F(PeerResponder, ReadOf10001BytesAtPmtu4096IsFirstMiddleLast) {
  q.pmtu = 4096;
  uint8_t* m = mem->data(rw.pa + 64, 10001);
  for (size_t i = 0; i < 10001; ++i) m[i] = uint8_t(i * 7 + 3);
  // A WRITE before it: the READ's responses acknowledge it (no ACK of its own).
  EXPECT_TRUE(feed(reth_req(op::RC_WRITE_ONLY, 0x100, 4, rw.va + 30000, rw.rkey, 4, false)).empty());
  auto out = feed(reth_req(op::RC_READ_REQUEST, 0x101, 0, rw.va + 64, rw.rkey, 10001, true));
  // ceil(10001 / 4096) = 3 responses at PSNs 0x101..0x103; ePSN after them.
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(q.epsn, 0x104u);
  const uint8_t opc[3] = {op::RC_READ_RESP_FIRST, op::RC_READ_RESP_MIDDLE, op::RC_READ_RESP_LAST};
  const size_t len[3] = {4096, 4096, 10001 - 8192};
  size_t off = 0;
  for (int i = 0; i < 3; ++i) {
    const roce::Bytes bytes = roce::encode(out[size_t(i)]);
    const roce::Frame f = wire(out[size_t(i)]);
    EXPECT_EQ(f.bth.opcode, opc[i]);
    EXPECT_EQ(f.bth.psn, 0x101u + uint32_t(i));
    EXPECT_EQ(f.bth.dest_qp, 0x17u);
    ASSERT_EQ(f.payload.size(), len[i]);
    // pad to a 4-byte multiple: 1809 bytes take 3
    EXPECT_EQ(f.bth.pad_cnt, (4 - len[i] % 4) % 4);
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 (not on MIDDLE) + payload + pad + ICRC 4
    EXPECT_EQ(bytes.size(), 14 + 20 + 8 + 12 + (i == 1 ? 0 : 4) + len[i] + (4 - len[i] % 4) % 4 + 4);
    EXPECT_EQ(f.aeth.has_value(), i != 1);
    if (f.aeth) {
      EXPECT_EQ(f.aeth->syndrome, roce::aeth::credit_code(4));  // an ACK syndrome with the credits
      EXPECT_EQ(f.aeth->msn, 2u);  // the WRITE and the READ
    }
    for (size_t k = 0; k < len[i]; ++k) ASSERT_EQ(f.payload[k], uint8_t((off + k) * 7 + 3)) << i << " " << k;
    off += len[i];
  }
  EXPECT_EQ(q.stats.read_responses, 3u);
}

TEST_F(PeerResponder, ShortAndZeroLengthReadsAreOnlyResponses) {
  auto out = feed(reth_req(op::RC_READ_REQUEST, 0x100, 0, rw.va, rw.rkey, 100, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_READ_RESP_ONLY);
  EXPECT_EQ(out[0].payload.size(), 100u);
  ASSERT_TRUE(out[0].aeth.has_value());
  EXPECT_EQ(out[0].aeth->msn, 1u);
  // Exactly one PMTU: still ONLY.
  out = feed(reth_req(op::RC_READ_REQUEST, 0x101, 0, rw.va, rw.rkey, 1024, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_READ_RESP_ONLY);
  // Zero length: one ONLY response without payload, any R_Key.
  out = feed(reth_req(op::RC_READ_REQUEST, 0x102, 0, 0, 0, 0, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_READ_RESP_ONLY);
  EXPECT_TRUE(out[0].payload.empty());
  EXPECT_EQ(q.epsn, 0x103u);
  EXPECT_EQ(q.msn, 3u);
}

TEST_F(PeerResponder, DuplicateReadIsExecutedAgainFromItsPsnWithTheCurrentMsn) {
  // 3072 bytes at PMTU 1024: PSNs 0x100..0x102; then a WRITE at 0x103.
  feed(reth_req(op::RC_READ_REQUEST, 0x100, 0, rw.va, rw.rkey, 3072, true));
  feed(reth_req(op::RC_WRITE_ONLY, 0x103, 4, rw.va + 8192, rw.rkey, 4, true));
  ASSERT_EQ(q.msn, 2u);
  // Re-issued from its second response (VA + 1024, 2048 bytes, PSN 0x101).
  auto out = feed(reth_req(op::RC_READ_REQUEST, 0x101, 0, rw.va + 1024, rw.rkey, 2048, true));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_READ_RESP_FIRST);
  EXPECT_EQ(out[0].bth.psn, 0x101u);
  EXPECT_EQ(out[1].bth.opcode, op::RC_READ_RESP_LAST);
  EXPECT_EQ(out[1].bth.psn, 0x102u);
  EXPECT_EQ(out[0].aeth->msn, 2u);
  EXPECT_EQ(q.epsn, 0x104u);  // unchanged
  EXPECT_EQ(q.msn, 2u);
}

TEST_F(PeerResponder, ReadWithoutRightOrOutOfBoundsIsNakRemoteAccess) {
  // A read-only MR answers READs: 8192 bytes at PMTU 1024 are 8 responses.
  auto out = feed(reth_req(op::RC_READ_REQUEST, 0x100, 0, ro.va, ro.rkey, 8192, true));
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(out[7].bth.opcode, op::RC_READ_RESP_LAST);
  EXPECT_EQ(out[7].bth.psn, 0x107u);
  // Past the end of an MR: NAK remote access error (0x62) at the READ's PSN, QP in Error.
  out = feed(reth_req(op::RC_READ_REQUEST, 0x108, 0, ro.va + 4096, ro.rkey, 8192, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_ACK);
  EXPECT_EQ(out[0].bth.psn, 0x108u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x62);
  EXPECT_EQ(out[0].aeth->msn, 1u);
  EXPECT_TRUE(q.error);
  // An MR without the remote read right.
  SetUp();
  const PeerMr wo = *mrs->add("wo", 4096, false, true, nullptr);
  out = feed(reth_req(op::RC_READ_REQUEST, 0x100, 0, wo.va, wo.rkey, 64, true));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].aeth->syndrome, 0x62);
}

}  // namespace ernic::peer::test
