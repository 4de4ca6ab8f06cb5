// tb/peer: the ideal peer's RC requester on frames: PSN assignment and
// its 24-bit wrap, segmentation (FIRST / MIDDLE / LAST, RETH, AckReq), READ
// requests and responses, ACK / NAK handling (go-back-N to the NAKed PSN,
// implied NAK for a READ, RNR wait, fatal NAKs flushing the queue), the
// READ credit limit and the ACK timer. Expected values from IBTA's rules.
#include "model/peer/requester.h"

#include "tb/peer/peer_fixture.h"

namespace ernic::peer::test {
namespace op = roce::op;
using pg332::WqeOpcode;

class PeerRequester : public PeerResponder {
 protected:
  void SetUp() override {
    PeerResponder::SetUp();
    cfg.ack_timeout_ps = 10'000'000;  // 10 us
    rq = std::make_unique<Requester>(cfg, *mem);
    for (uint32_t i = 0; i < 8192; ++i) mem->data(rw.pa, 8192)[i] = uint8_t(i * 3 + 1);
  }
  PeerWqe wqe(WqeOpcode o, uint16_t id, uint32_t len, uint64_t local_off = 0) {
    PeerWqe w;
    w.wr_id = id;
    w.op = o;
    w.local_pa = rw.pa + local_off;
    w.length = len;
    w.remote_va = 0x10000;
    w.rkey = 0x77;
    return w;
  }
  std::vector<roce::Frame> drain(uint64_t now = 0) {
    std::vector<roce::Frame> out;
    while (auto f = rq->next_frame(q, now)) out.push_back(*f);
    return out;
  }
  roce::Frame answer(uint8_t opcode, uint32_t psn, std::optional<uint8_t> syndrome, size_t payload = 0) {
    roce::Frame f = req(opcode, psn, payload, false, 0x60);
    if (syndrome) f.aeth = roce::Aeth{*syndrome, 0};
    return f;
  }
  std::unique_ptr<Requester> rq;
};

TEST_F(PeerRequester, WriteIsSegmentedAtThePmtuWithPsnsWrapping) {
  q.req.npsn = 0xFFFFFF;
  rq->post(q, wqe(WqeOpcode::write, 5, 2500), 0);
  auto out = drain();
  ASSERT_EQ(out.size(), 3u);  // ceil(2500 / 1024)
  const uint8_t opc[3] = {op::RC_WRITE_FIRST, op::RC_WRITE_MIDDLE, op::RC_WRITE_LAST};
  const uint32_t psn[3] = {0xFFFFFF, 0x000000, 0x000001};
  const size_t len[3] = {1024, 1024, 452};
  for (int i = 0; i < 3; ++i) {
    const roce::Frame f = wire(out[size_t(i)]);
    EXPECT_EQ(f.bth.opcode, opc[i]);
    EXPECT_EQ(f.bth.psn, psn[i]);
    EXPECT_EQ(f.bth.dest_qp, 0x17u);
    EXPECT_EQ(f.bth.ack_req, i == 2);
    EXPECT_EQ(f.reth.has_value(), i == 0);
    ASSERT_EQ(f.payload.size(), len[i]);
    EXPECT_EQ(f.payload[0], uint8_t(i * 1024 * 3 + 1));
  }
  EXPECT_EQ(out[0].reth->va, 0x10000u);
  EXPECT_EQ(out[0].reth->rkey, 0x77u);
  EXPECT_EQ(out[0].reth->dma_len, 2500u);
  EXPECT_EQ(q.req.npsn, 2u);
  // An ACK at the MIDDLE completes nothing; at the LAST, the WRITE.
  EXPECT_TRUE(rq->on_answer(q, answer(op::RC_ACK, 0, 0x1F), 100));
  EXPECT_TRUE(q.req.cq.empty());
  rq->on_answer(q, answer(op::RC_ACK, 1, 0x1F), 200);
  ASSERT_EQ(q.req.cq.size(), 1u);
  EXPECT_EQ(q.req.cq[0].wr_id, 5);
  EXPECT_FALSE(q.req.cq[0].error);
  EXPECT_EQ(q.req.cq[0].t_ps, 200u);
}

TEST_F(PeerRequester, SendImmAndInvCarryTheirHeadersOnTheLast) {
  q.req.npsn = 0x10;
  PeerWqe a = wqe(WqeOpcode::send_imm, 1, 1500);
  a.immdt = 0xABCD0123;
  PeerWqe b = wqe(WqeOpcode::send_inv, 2, 8);
  b.immdt = 0x4455;
  rq->post(q, a, 0);
  rq->post(q, b, 0);
  auto out = drain();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_SEND_FIRST);
  EXPECT_EQ(out[1].bth.opcode, op::RC_SEND_LAST_IMM);
  EXPECT_EQ(out[1].immdt, 0xABCD0123u);
  EXPECT_EQ(out[2].bth.opcode, op::RC_SEND_ONLY_INV);
  EXPECT_EQ(out[2].ieth, 0x4455u);
  EXPECT_EQ(out[2].bth.psn, 0x12u);
}

TEST_F(PeerRequester, ReadResponsesLandInOrderAndCompleteTheRead) {
  q.req.npsn = 0x40;
  rq->post(q, wqe(WqeOpcode::read, 9, 3000, 4096), 0);
  rq->post(q, wqe(WqeOpcode::write, 10, 4), 0);
  auto out = drain();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_READ_REQUEST);
  EXPECT_EQ(out[0].bth.psn, 0x40u);
  EXPECT_TRUE(out[0].bth.ack_req);
  EXPECT_EQ(out[0].reth->dma_len, 3000u);
  EXPECT_EQ(out[1].bth.psn, 0x43u);  // the READ takes ceil(3000 / 1024) = 3 PSNs
  // A response ahead of the next expected one is dropped.
  EXPECT_FALSE(rq->on_answer(q, answer(op::RC_READ_RESP_MIDDLE, 0x41, std::nullopt, 1024), 10));
  EXPECT_TRUE(rq->on_answer(q, answer(op::RC_READ_RESP_FIRST, 0x40, 0x1F, 1024), 10));
  EXPECT_TRUE(rq->on_answer(q, answer(op::RC_READ_RESP_MIDDLE, 0x41, std::nullopt, 1024), 11));
  EXPECT_TRUE(q.req.cq.empty());
  EXPECT_TRUE(rq->on_answer(q, answer(op::RC_READ_RESP_LAST, 0x42, 0x1F, 952), 12));
  ASSERT_EQ(q.req.cq.size(), 1u);
  EXPECT_EQ(q.req.cq[0].wr_id, 9);
  const uint8_t* m = mem->data(rw.pa + 4096, 3000);
  for (size_t i = 0; i < 3000; ++i) ASSERT_EQ(m[i], uint8_t(0x60 + i % 1024)) << i;
}

TEST_F(PeerRequester, NakPsnGoesBackToTheNakedPacket) {
  q.req.npsn = 0x100;
  rq->post(q, wqe(WqeOpcode::write, 1, 4096), 0);
  ASSERT_EQ(drain().size(), 4u);
  // NAK-PSN at 0x102: 0x100..0x101 acknowledged, resend from 0x102 (a MIDDLE).
  rq->on_answer(q, answer(op::RC_ACK, 0x102, 0x60), 50);
  auto out = drain(50);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_WRITE_MIDDLE);
  EXPECT_EQ(out[0].bth.psn, 0x102u);
  EXPECT_EQ(out[1].bth.opcode, op::RC_WRITE_LAST);
  EXPECT_EQ(q.req.retries, 1u);
}

TEST_F(PeerRequester, AnAckPastAnUnansweredReadReissuesIt) {
  q.req.npsn = 0x200;
  rq->post(q, wqe(WqeOpcode::read, 1, 2048), 0);   // PSNs 0x200..0x201
  rq->post(q, wqe(WqeOpcode::write, 2, 8), 0);     // 0x202
  drain();
  rq->on_answer(q, answer(op::RC_READ_RESP_FIRST, 0x200, 0x1F, 1024), 5);
  // The ACK of the WRITE arrives while the READ's LAST is missing: implied NAK.
  rq->on_answer(q, answer(op::RC_ACK, 0x202, 0x1F), 6);
  EXPECT_TRUE(q.req.cq.empty());
  auto out = drain(6);
  ASSERT_GE(out.size(), 1u);
  EXPECT_EQ(out[0].bth.opcode, op::RC_READ_REQUEST);
  EXPECT_EQ(out[0].bth.psn, 0x201u);               // from the first missing response
  EXPECT_EQ(out[0].reth->va, 0x10000u + 1024);      // VA and length moved past what arrived
  EXPECT_EQ(out[0].reth->dma_len, 1024u);
}

TEST_F(PeerRequester, FatalNakCompletesWithTheErrorAndFlushesTheRest) {
  q.req.npsn = 0x10;
  rq->post(q, wqe(WqeOpcode::write, 1, 8), 0);
  rq->post(q, wqe(WqeOpcode::write, 2, 8), 0);
  rq->post(q, wqe(WqeOpcode::send, 3, 8), 0);
  drain();
  rq->on_answer(q, answer(op::RC_ACK, 0x11, 0x62), 9);  // the second: remote access error
  ASSERT_EQ(q.req.cq.size(), 3u);
  EXPECT_FALSE(q.req.cq[0].error);
  EXPECT_TRUE(q.req.cq[1].error);
  EXPECT_EQ(q.req.cq[1].syndrome, 0x62);
  EXPECT_TRUE(q.req.cq[2].error);
  EXPECT_TRUE(q.req.error);
  rq->post(q, wqe(WqeOpcode::write, 4, 8), 10);  // in Error: flushed at once
  EXPECT_EQ(q.req.cq.size(), 4u);
  EXPECT_TRUE(drain(10).empty());
}

TEST_F(PeerRequester, AtMostMaxReadsOutstanding) {
  cfg.max_reads = 16;
  for (uint16_t i = 0; i < 17; ++i) rq->post(q, wqe(WqeOpcode::read, i, 64), 0);
  EXPECT_EQ(drain().size(), 16u);
  rq->on_answer(q, answer(op::RC_READ_RESP_ONLY, q.req.sq[0].first_psn, 0x1F, 64), 1);
  EXPECT_EQ(drain(1).size(), 1u);  // one answered: the 17th goes
}

TEST_F(PeerRequester, RnrNakWaitsItsTimerThenResends) {
  q.req.npsn = 0x20;
  rq->post(q, wqe(WqeOpcode::send, 1, 8), 0);
  drain();
  rq->on_answer(q, answer(op::RC_ACK, 0x20, roce::aeth::rnr_nak(3)), 1000);  // timer code 3: 0.03 ms
  EXPECT_TRUE(drain(1000 + 29'999'999).empty());
  auto out = drain(1000 + 30'000'000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.psn, 0x20u);
}

TEST_F(PeerRequester, AckTimeoutGoesBackToTheOldest) {
  q.req.npsn = 0x30;
  rq->post(q, wqe(WqeOpcode::write, 1, 8), 0);
  drain(0);
  EXPECT_EQ(rq->timeout_at(q), std::optional<uint64_t>(10'000'000));
  EXPECT_FALSE(rq->check_timeout(q, 9'999'999));
  EXPECT_TRUE(rq->check_timeout(q, 10'000'000));
  auto out = drain(10'000'000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bth.psn, 0x30u);
  EXPECT_EQ(q.req.timeouts, 1u);
}

// A long WRITE acknowledged part of the way (an ACK at its second packet's
// PSN, as a responder coalescing ACKs every N packets sends): that is
// progress, which restarts the ACK timer, and a timeout then goes back to
// the oldest unacknowledged PSN, the third packet, not the message's first
// (IBTA 9.7.5.1; the WRITE used to be resent whole for ever when it took
// longer than the timeout).
TEST_F(PeerRequester, AnAckInsideAMessageIsProgress) {
  q.req.npsn = 0x40;
  rq->post(q, wqe(WqeOpcode::write, 1, 4096), 0);  // 4 packets, PSNs 0x40..0x43
  ASSERT_EQ(drain(0).size(), 4u);
  rq->on_answer(q, answer(op::RC_ACK, 0x41, 0x1F), 6'000'000);
  EXPECT_EQ(rq->timeout_at(q), std::optional<uint64_t>(16'000'000)) << "the timer restarts at the ACK";
  EXPECT_FALSE(rq->check_timeout(q, 15'999'999));
  EXPECT_TRUE(rq->check_timeout(q, 16'000'000));
  auto out = drain(16'000'000);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(wire(out[0]).bth.psn, 0x42u);
  EXPECT_EQ(wire(out[0]).bth.opcode, op::RC_WRITE_MIDDLE);
  EXPECT_EQ(wire(out[1]).bth.psn, 0x43u);
  EXPECT_EQ(wire(out[1]).bth.opcode, op::RC_WRITE_LAST);
  EXPECT_TRUE(q.req.cq.empty());
  rq->on_answer(q, answer(op::RC_ACK, 0x43, 0x1F), 17'000'000);
  ASSERT_EQ(q.req.cq.size(), 1u);
  EXPECT_EQ(q.req.cq[0].wr_id, 1u);
}

}  // namespace ernic::peer::test
