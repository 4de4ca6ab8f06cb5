// The response handler (model/ernic/resp_hndler.h) driven alone: an
// outstanding queue as the WQE processor leaves it (five WQEs over PSNs
// 100..107), then ACKs, NAKs and RNR NAKs handed to rx_ack() and READ
// responses to rx_read_resp() as the RX packet handler would (with the QP
// manager where a go-back must be sent). Expected values by hand from IBTA (an ACK for PSN p
// acknowledges every PSN up to p; a READ completes only through its
// responses; NAK-PSN = go back to that PSN; RNR NAK timer codes) and PG332
// (CQE = WRID[15:0] | opcode[23:16] | ERRFLAG[31:24] at CQBAi + idx * 4, the
// CQ having the SQ's depth; CQHEADi and its mirror at CQDBADDi; INTSTS[4]
// and the CQ bank bit with QPCONFi[3] (3.1 bank at 0x201B0, 4.x at
// 0x100290, bit j of bank 1 = QP j); the sideband CQ doorbell in HW
// handshake mode; STATQPi [11] retried, [22:16] NAK syndrome, [26:24]
// retry count, [30:28] RNR count; INNAKPKTCNT, INNCKPKTSTS; fatal code
// 0x0A for a NAK-invalid; the error-status queue entry QPN << 16 | code).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "model/roce/opcodes.h"
#include "model/sim/settle.h"
#include "tb/ernic/block_bench.h"

using namespace ernic;
using namespace ernic::bench;

namespace {

constexpr uint32_t kQp = 2;
constexpr uint32_t kCqHead0 = 14;  // the CQ wraps after two completions

struct Posted {
  uint16_t wrid;
  uint8_t opcode;  // WQE opcode (PG332 Table 2-1)
  uint32_t first, last;
  bool read;
};
// WRITE 100..101, SEND 102, WRITE_IMM 103..105, SEND_IMM 106, SEND_INV 107.
const Posted kFive[] = {{0xA000, 0x00, 100, 101, false},
                        {0xA001, 0x02, 102, 102, false},
                        {0xA002, 0x01, 103, 105, false},
                        {0xA003, 0x03, 106, 106, false},
                        {0xA004, 0x0C, 107, 107, false}};

template <size_t N>
void load_osq(BlockBench& b, const Posted (&ws)[N]) {
  for (const Posted& p : ws) {
    qp::Outstanding o;
    o.id = b.s.next_osq_id++;
    o.wrid = p.wrid;
    o.wqe_opcode = p.opcode;
    o.first_psn = o.resp_psn = o.req_psn = p.first;
    o.last_psn = p.last;
    o.is_read = p.read;
    o.length = (p.last - p.first + 1) * 256;
    b.qp(kQp).req.osq.push_back(o);
  }
}

void setup(BlockBench& b, uint32_t timeoutconf = 0x00001B00 /* retry 3, RNR retry 3 */) {
  b.setup_global(8);
  b.setup_qp(kQp, 0, 108, 0, timeoutconf);
  b.s.Q(kQp, R::q::STATRESPSNi) = 100;
  b.s.Q(kQp, R::q::CQHEADi) = kCqHead0;
}

roce::Frame ack_frame(uint8_t syndrome, uint32_t psn) {
  roce::Frame f;
  f.bth.opcode = 0x11;  // ACKNOWLEDGE
  f.bth.psn = psn;
  f.aeth = roce::Aeth{syndrome, 0};
  return f;
}

// The CQ interrupt bank of the layout, bit j of bank 1 = QP j (PG332 3.1).
uint32_t cq_bank_addr(bool v4) { return v4 ? 0x100290u : 0x201B0u; }

// ------------------------------------------------------------ coalesced ACK

struct AckCase {
  uint32_t psn;
  uint32_t k;  // WQEs it retires, oldest first
};

void PrintTo(const AckCase& c, std::ostream* os) { *os << "ACK PSN " << c.psn << " retires " << c.k; }

class RespHndlerAck : public testing::TestWithParam<std::tuple<AckCase, bool>> {};

TEST_P(RespHndlerAck, RetiresExactlyTheCoveredWqesOldestFirst) {
  const AckCase c = std::get<0>(GetParam());
  const bool v4 = std::get<1>(GetParam());
  BenchOptions o;
  o.cfg.layout = v4 ? R::kLayout4x : R::kLayout31;
  run_bench(o, [c, v4](BlockBench& b) {
    setup(b);
    load_osq(b, kFive);
    const auto drop = b.resp.rx_ack(b.qp(kQp), ack_frame(0x1F, c.psn));
    EXPECT_FALSE(drop.has_value());
    // k CQEs at CQBA + idx * 4 from idx 14, wrapping at the depth (16).
    for (uint32_t j = 0; j < 5; ++j) {
      const uint32_t idx = (kCqHead0 + j) % 16;
      const uint32_t want = j < c.k ? uint32_t(kFive[j].wrid) | uint32_t(kFive[j].opcode) << 16 : 0u;
      EXPECT_EQ(b.mem.read32(cq_base(kQp) + idx * 4), want) << "CQ slot " << idx;
    }
    const uint32_t head = (kCqHead0 + c.k) % 16;
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), head);
    EXPECT_EQ(b.mem.read32(cq_db_addr(kQp)), c.k ? head : 0u);
    EXPECT_EQ(b.G(R::g::INTSTS), c.k ? 1u << 4 : 0u);
    EXPECT_EQ(b.bank(cq_bank_addr(v4)), c.k ? 1u << kQp : 0u);
    ernic::settle::wait_settled(ernic::settle::Stage::kStep);  // rnic_intr: once the instant has settled
    EXPECT_EQ(b.intr_line.read(), c.k != 0);
    ASSERT_EQ(b.qp(kQp).req.osq.size(), 5 - c.k);
    if (c.k < 5) {
      EXPECT_EQ(b.qp(kQp).req.osq.front().wrid, kFive[c.k].wrid);
    }
    // STATRESPSNi: the next response expected, only forward.
    const uint32_t respsn = c.psn >= 100 ? c.psn + 1 : 100;
    EXPECT_EQ(b.Q(kQp, R::q::STATRESPSNi), respsn);
    EXPECT_EQ(b.G(R::g::INAMPKTCNT), 1u);  // [15:0] incoming ACKs
    EXPECT_FALSE(b.qp(kQp).rs.retransmit_pending());

    // An ACK below what is acknowledged changes nothing.
    const uint32_t stale = c.psn - 2;
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x1F, stale)).has_value());
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), head);
    EXPECT_EQ(b.qp(kQp).req.osq.size(), 5 - c.k);
    EXPECT_EQ(b.Q(kQp, R::q::STATRESPSNi), respsn);
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + ((kCqHead0 + c.k) % 16) * 4), 0u);
    EXPECT_EQ(b.G(R::g::INAMPKTCNT), 2u);
  });
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RespHndlerAck,
    testing::Combine(testing::Values(AckCase{99, 0}, AckCase{100, 0}, AckCase{101, 1}, AckCase{102, 2},
                                     AckCase{104, 2}, AckCase{105, 3}, AckCase{106, 4}, AckCase{107, 5}),
                     testing::Bool()),
    [](const testing::TestParamInfo<std::tuple<AckCase, bool>>& i) {
      return "Psn" + std::to_string(std::get<0>(i.param).psn) + (std::get<1>(i.param) ? "_Layout4x" : "_Layout31");
    });

// HW-handshake mode (QPCONFi[4] = 0): every completion also raises the
// sideband resp_hndler_o_send_cq_db with the QP and its new CQHEADi.
TEST(RespHndlerSideband, CqDoorbellPerCompletion) {
  std::vector<std::pair<uint32_t, uint32_t>> db;
  run_bench(BenchOptions{}, [&db](BlockBench& b) {
    setup(b);
    b.s.Q(kQp, R::q::QPCONFi) &= ~FLD::QPCONFi_HW_HANDSHAKE_DIS.bit();
    b.cq_db_sink = [&db](uint32_t n, uint32_t head) { db.emplace_back(n, head); };
    load_osq(b, kFive);
    b.resp.rx_ack(b.qp(kQp), ack_frame(0x1F, 105));
    const std::vector<std::pair<uint32_t, uint32_t>> want = {{2, 15}, {2, 0}, {2, 1}};
    EXPECT_EQ(db, want);
  });
}

// An ACK never retires a READ, nor what follows it: WRITE 100, READ
// 101..103, SEND 104; ACK 104 retires the WRITE only, and (IBTA 9.9.3.1.3,
// implied NAK) asks for the READ again from its first response PSN.
TEST(RespHndlerAck, ReadStopsTheRetirementAndIsReissued) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    setup(b);
    const Posted ws[] = {{0xB000, 0x00, 100, 100, false}, {0xB001, 0x04, 101, 103, true}, {0xB002, 0x02, 104, 104, false}};
    load_osq(b, ws);
    b.resp.rx_ack(b.qp(kQp), ack_frame(0x1F, 104));
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + kCqHead0 * 4), 0x0000B000u);
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + (kCqHead0 + 1) * 4), 0u);
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), kCqHead0 + 1);
    ASSERT_EQ(b.qp(kQp).req.osq.size(), 2u);
    EXPECT_TRUE(b.qp(kQp).req.osq.front().is_read);
    EXPECT_TRUE(b.qp(kQp).rs.retransmit_pending());
    EXPECT_EQ(b.qp(kQp).retry.resend_psn, 101u);
    EXPECT_EQ(b.qp(kQp).req_state(), qp::ReqState::retransmit);
  });
}

// ------------------------------------------------------------ NAKs

// NAK PSN sequence error (syndrome 0x60) for PSN 103: PSNs up to 102 are
// acknowledged (WRITE 100..101 and SEND 102 retire), and a go-back from 103
// is asked of the QP manager.
class RespHndlerNak : public testing::TestWithParam<bool> {};

TEST_P(RespHndlerNak, NakPsnRetiresBeforeAndStartsGoBack) {
  const bool v4 = GetParam();
  BenchOptions o;
  o.cfg.layout = v4 ? R::kLayout4x : R::kLayout31;
  run_bench(o, [v4](BlockBench& b) {
    setup(b);
    load_osq(b, kFive);
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x60, 103)).has_value());
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + 14 * 4), 0x0000A000u);
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + 15 * 4), 0x0002A001u);
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + 0 * 4), 0u);
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), 0u);
    EXPECT_EQ(b.bank(cq_bank_addr(v4)), 1u << kQp);
    ASSERT_EQ(b.qp(kQp).req.osq.size(), 3u);
    EXPECT_EQ(b.Q(kQp, R::q::STATRESPSNi), 103u);
    EXPECT_TRUE(b.qp(kQp).rs.retransmit_pending());
    EXPECT_EQ(b.qp(kQp).retry.resend_psn, 103u);
    EXPECT_EQ(b.qp(kQp).req_state(), qp::ReqState::retransmit);
    // STATQPi: [11] retried, [22:16] = 0x60, [26:24] retry count 1 ([10:9]
    // SQ / OSQ empty are the top's, computed when the register is read).
    EXPECT_EQ(b.Q(kQp, R::q::STATQPi) & ~0x600u, 1u << 11 | 0x60u << 16 | 1u << 24);
    EXPECT_EQ(b.G(R::g::INNAKPKTCNT), 1u);
    EXPECT_EQ(b.G(R::g::INNCKPKTSTS), kQp | 1u << 16);
    // A NAK below what is acknowledged (101 < 103) is stale: ignored,
    // counted as a duplicate (ININVDUPCNT[31:16]).
    const uint32_t cq = b.Q(kQp, R::q::CQHEADi);
    b.qp(kQp).rs.end_retransmit();
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x60, 101)).has_value());
    EXPECT_FALSE(b.qp(kQp).rs.retransmit_pending());
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), cq);
    EXPECT_EQ(b.qp(kQp).req.osq.size(), 3u);
    EXPECT_EQ(b.G(R::g::ININVDUPCNT), 1u << 16);
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, RespHndlerNak, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& i) { return i.param ? "Layout4x" : "Layout31"; });

// NAK invalid request (0x61): fatal code 0x0A; every outstanding WQE
// completes with ERRFLAG, oldest first; STATQPi[0]; the error-status queue
// entry; INTSTS[7] and [4].
TEST(RespHndlerNak, NakInvalidIsFatal0A) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    setup(b);
    load_osq(b, kFive);
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x61, 102)).has_value());
    for (uint32_t j = 0; j < 5; ++j) {
      const uint32_t idx = (kCqHead0 + j) % 16;
      EXPECT_EQ(b.mem.read32(cq_base(kQp) + idx * 4),
                uint32_t(kFive[j].wrid) | uint32_t(kFive[j].opcode) << 16 | 1u << 24)
          << "CQ slot " << idx;
    }
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), 3u);
    EXPECT_TRUE(b.qp(kQp).req.osq.empty());
    EXPECT_EQ(b.Q(kQp, R::q::STATQPi) & 0x007F0001u, 0x61u << 16 | 1u);
    EXPECT_EQ(b.mem.read32(kErrQueue), kQp << 16 | 0x0Au);
    EXPECT_EQ(b.G(R::g::IPKTERRQWPTR), 1u);
    EXPECT_EQ(b.G(R::g::INTSTS), 1u << 7 | 1u << 4);
  });
}

// RNR NAK (type 01, timer code 1 = 10 us) for PSN 102: PSNs up to 101 are
// acknowledged (the WRITE retires); no request before the wait is over
// (RNR_WAIT), then the go-back from 102 is due (RETRANSMIT). STATQPi[30:28]
// RNR count 1, [22:16] = 0x21.
TEST(RespHndlerNak, RnrNakWaitsItsTimerThenGoesBack) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    setup(b);
    load_osq(b, kFive);
    const uint64_t t0 = b.now();
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x21, 102)).has_value());
    // The wait (code 1: 0.01 ms) runs from when the handler is done with
    // the NAK, after the CQE of the WRITE it acknowledges has been written.
    const uint64_t t1 = b.now();
    EXPECT_GT(t1, t0);
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), 15u);
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + 14 * 4), 0x0000A000u);
    EXPECT_EQ(b.qp(kQp).req_state(), qp::ReqState::rnr_wait);
    EXPECT_EQ(b.qp(kQp).rs.rnr_until_ps(), t1 + 10'000'000u);
    EXPECT_EQ(b.qp(kQp).retry.resend_psn, 102u);
    EXPECT_EQ((b.Q(kQp, R::q::STATQPi) >> 28) & 7u, 1u);
    EXPECT_EQ((b.Q(kQp, R::q::STATQPi) >> 16) & 0x7Fu, 0x21u);
    b.wait_ns(9900);
    EXPECT_EQ(b.qp(kQp).req_state(), qp::ReqState::rnr_wait);
    b.wait_ns(200);
    EXPECT_EQ(b.qp(kQp).req_state(), qp::ReqState::retransmit);
    EXPECT_TRUE(b.qp(kQp).rs.retransmit_pending());
  });
}

// The one timer thread with deadlines on several QPs of 256 (issue 17: it
// looks only at the QPs that hold one, so these QPNs span the bitmap's
// words). Core clock 5 ns, XRNICADCONF[19:16] = 0: TIMEOUTCONFi[5:0] = t is
// a local ACK timeout of 2^t * 5000 ps. From t0:
//   coalescing ACK timeouts set on QPs 256, 130, 3 (in that order) for
//   t0 + 1 us and on QP 70 for t0 + 1.5 us: ack_fire_q gets 3, 130, 256
//   at 1 us (ascending QPN), then 70;
//   ACK timers on QPs 200, 3, 70 (t = 10, 11, 10: 5.12, 10.24, 5.12 us)
//   and on QP 130 (t = 9), whose timer is stopped again at once (its
//   OSQ emptied): 70 and 200 time out at exactly t0 + 5.12 us, 3 at
//   t0 + 10.24 us, 130 never;
//   an RNR NAK (code 1: 10 us) on QP 256 at t0 + 2 us ends its wait 10 us
//   after the handler took it;
//   QP 70's timer, armed again after its go-back was sent (it left the
//   thread's set when its deadlines were gone), times out 5.12 us later
//   (retry 2).
TEST(RespHndlerTimers, DeadlinesOfSeveralQpsExpireInQpnOrderAtTheirTimes) {
  BenchOptions o;
  o.cfg.layout = R::kLayout4x;
  o.cfg.num_qp = 256;
  run_bench(o, [](BlockBench& b) {
    b.setup_global(255);
    const uint32_t qps[] = {3, 70, 130, 200, 256};
    const uint32_t t_of[] = {11, 10, 9, 10, 0};
    for (size_t i = 0; i < 5; ++i) {
      b.setup_qp(qps[i], 0, 102, 0, 0x00001B00 | t_of[i]);  // retry 3, RNR retry 3
      b.s.Q(qps[i], R::q::STATRESPSNi) = 100;
      qp::Outstanding w;
      w.id = b.s.next_osq_id++;
      w.wrid = uint16_t(0xB000 + qps[i]);
      w.first_psn = w.resp_psn = w.req_psn = 100;
      w.last_psn = 101;
      w.length = 512;
      b.qp(qps[i]).req.osq.push_back(w);
    }
    auto at = [&b](uint64_t t_ps) { sc_core::wait(sc_core::sc_time(double(t_ps - b.now()), sc_core::SC_PS)); };
    const uint64_t t0 = b.now();
    for (const uint32_t n : {256u, 130u, 3u}) {
      b.qp(n).resp.ack_due_ps = t0 + 1'000'000;
      b.resp.timers_changed(b.qp(n));
    }
    b.qp(70).resp.ack_due_ps = t0 + 1'500'000;
    b.resp.timers_changed(b.qp(70));
    for (const uint32_t n : {200u, 3u, 70u, 130u}) b.resp.arm_timer(b.qp(n));
    EXPECT_EQ(b.qp(200).retry.ack_deadline_ps, t0 + 5'120'000u);
    EXPECT_EQ(b.qp(70).retry.ack_deadline_ps, t0 + 5'120'000u);
    EXPECT_EQ(b.qp(3).retry.ack_deadline_ps, t0 + 10'240'000u);
    EXPECT_EQ(b.qp(130).retry.ack_deadline_ps, t0 + 2'560'000u);
    b.qp(130).req.osq.clear();
    b.resp.arm_timer(b.qp(130));
    EXPECT_EQ(b.qp(130).retry.ack_deadline_ps, 0u);

    at(t0 + 999'999);
    EXPECT_TRUE(b.s.ack_fire_q.empty());
    at(t0 + 1'000'001);
    EXPECT_EQ(std::vector<uint32_t>(b.s.ack_fire_q.begin(), b.s.ack_fire_q.end()),
              (std::vector<uint32_t>{3, 130, 256}));
    at(t0 + 1'500'001);
    EXPECT_EQ(std::vector<uint32_t>(b.s.ack_fire_q.begin(), b.s.ack_fire_q.end()),
              (std::vector<uint32_t>{3, 130, 256, 70}));

    at(t0 + 2'000'000);
    EXPECT_FALSE(b.resp.rx_ack(b.qp(256), ack_frame(0x21, 100)).has_value());
    const uint64_t t1 = b.now();
    EXPECT_EQ(b.qp(256).rs.rnr_until_ps(), t1 + 10'000'000u);
    EXPECT_EQ(b.qp(256).req_state(), qp::ReqState::rnr_wait);

    at(t0 + 5'119'999);
    EXPECT_EQ(b.s.stats.ack_timeouts, 0u);
    at(t0 + 5'120'001);
    EXPECT_EQ(b.s.stats.ack_timeouts, 2u);
    for (const uint32_t n : {70u, 200u}) {
      EXPECT_EQ(b.qp(n).retry.retry_cnt, 1u) << "QP " << n;
      EXPECT_TRUE(b.qp(n).rs.retransmit_pending()) << "QP " << n;
      EXPECT_EQ(b.qp(n).retry.resend_psn, 100u) << "QP " << n;
      EXPECT_EQ(b.qp(n).retry.ack_deadline_ps, 0u) << "QP " << n;
    }
    EXPECT_EQ(b.qp(3).retry.retry_cnt, 0u);
    // QP 70's go-back was sent (as the QP manager would): its timer runs again.
    b.wait_ns(1000);
    b.qp(70).rs.end_retransmit();
    const uint64_t t2 = b.now();
    b.resp.arm_timer(b.qp(70));
    EXPECT_EQ(b.qp(70).retry.ack_deadline_ps, t2 + 5'120'000u);

    at(t0 + 10'239'999);
    EXPECT_EQ(b.s.stats.ack_timeouts, 2u);
    EXPECT_EQ(b.qp(3).retry.retry_cnt, 0u);
    at(t0 + 10'240'001);
    EXPECT_EQ(b.s.stats.ack_timeouts, 3u);
    EXPECT_EQ(b.qp(3).retry.retry_cnt, 1u);

    at(t2 + 5'119'999);
    EXPECT_EQ(b.qp(70).retry.retry_cnt, 1u);
    at(t2 + 5'120'001);
    EXPECT_EQ(b.s.stats.ack_timeouts, 4u);
    EXPECT_EQ(b.qp(70).retry.retry_cnt, 2u);

    at(t1 + 9'999'999);
    EXPECT_EQ(b.qp(256).req_state(), qp::ReqState::rnr_wait);
    at(t1 + 10'000'001);
    EXPECT_EQ(b.qp(256).req_state(), qp::ReqState::retransmit);
    EXPECT_EQ(b.qp(256).retry.resend_psn, 100u);

    b.wait_ns(20'000);
    EXPECT_EQ(b.s.stats.ack_timeouts, 4u);
    EXPECT_EQ(b.qp(130).retry.retry_cnt, 0u);
    EXPECT_EQ(b.qp(200).retry.retry_cnt, 1u);
    EXPECT_EQ(b.s.ack_fire_q.size(), 4u);
  });
}

// ------------------------------------------------------- READ responses

// A READ response of the READ at 102..105 (PMTU 256): FIRST / LAST with an
// AETH (ACK, credit 31), 256 bytes of payload, byte i = psn + i.
roce::Frame read_resp(uint8_t opcode, uint32_t psn) {
  roce::Frame f;
  f.bth.opcode = opcode;
  f.bth.psn = psn;
  if (opcode != roce::op::RC_READ_RESP_MIDDLE) f.aeth = roce::Aeth{0x1F, 0};
  f.payload.resize(256);
  for (size_t i = 0; i < f.payload.size(); ++i) f.payload[i] = uint8_t(psn + i);
  return f;
}

// The READ_REQUESTs the WQE processor has sent so far.
std::vector<roce::Frame> read_requests(const BlockBench& b) {
  std::vector<roce::Frame> v;
  for (const auto& t : b.dp.frames)
    if (t.decoded && t.f.bth.opcode == roce::op::RC_READ_REQUEST) v.push_back(t.f);
  return v;
}

// A go-back that starts at an earlier WQE (NAK PSN 100 for the WRITE
// 100..101) sends the READ 102..105 behind it again without any of its
// responses found missing: that is not a re-issue of the READ (A-ERNIC-12
// names what is), so a gap among its responses is still a lost response.
// FIRST 102 and MIDDLE 103 are taken, then LAST 105 comes ahead of 104:
// the READ is re-issued from 104 (4.x: PSN 104, VA + 512, 512 bytes; 3.1:
// the whole READ, PSN 102), retry count 1 (STATQPi[26:24]; the responses
// taken reset the NAK's retry), RETRYCNTSTS counts the re-issue, and the
// local ACK timer runs from it (2^16 core cycles: TIMEOUTCONFi[5:0] = 16,
// XRNICADCONF[19:16] = 0). The responses that answer it complete the READ.
// (Found by the break-it pass: the go-back's READ_REQUEST latched "a
// re-issue was asked for", so LAST 105 was dropped silently, the ACK timer
// (84 ms at TIMEOUTCONFi 14) was all that was left, and the READ hung.)
class RespHndlerRead : public testing::TestWithParam<bool> {};

TEST_P(RespHndlerRead, GapAfterAGoBackFromAnEarlierWqeReissuesTheRead) {
  const bool v4 = GetParam();
  BenchOptions o;
  o.cfg.layout = v4 ? R::kLayout4x : R::kLayout31;
  o.with_qp_mgr = true;
  run_bench(o, [v4](BlockBench& b) {
    setup(b, 0x00001B00 | 16);  // retry 3, RNR retry 3, ACK timeout 2^16 cycles
    ASSERT_EQ(b.s.pmtu(kQp), 256u);
    const Posted ws[] = {{0xC000, 0x00, 100, 101, false}, {0xC001, 0x04, 102, 105, true}};
    load_osq(b, ws);
    b.qp_mgr->touch(kQp);  // an OSQ loaded by hand, not by a dispatch: the QP manager's passes look at the QP again
    auto& osq = b.qp(kQp).req.osq;
    osq[0].sq_idx = 0;
    osq[1].sq_idx = 1;
    osq[1].laddr = kPayload;
    osq[1].roffset = 0x70000;
    osq[1].rtag = 0x1234;
    // NAK PSN sequence error for 100: go back from the WRITE.
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x60, 100)).has_value());
    EXPECT_EQ((b.Q(kQp, R::q::STATQPi) >> 24) & 7u, 1u);
    b.wait_ns(5000);
    EXPECT_FALSE(b.qp(kQp).rs.retransmit_pending());
    auto reqs = read_requests(b);
    ASSERT_EQ(reqs.size(), 1u);  // sent again by the go-back
    EXPECT_EQ(reqs[0].bth.psn, 102u);
    const uint32_t retries0 = b.G(R::g::RETRYCNTSTS);
    EXPECT_EQ(retries0, 3u);  // WRITE 100, 101, READ 102 sent again
    // FIRST 102 (acknowledges the WRITE), MIDDLE 103; then LAST 105.
    EXPECT_FALSE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_FIRST, 102)).has_value());
    EXPECT_FALSE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_MIDDLE, 103)).has_value());
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + kCqHead0 * 4), 0x0000C000u);  // the WRITE completed
    ASSERT_EQ(osq.size(), 1u);
    EXPECT_EQ(osq.front().resp_psn, 104u);
    EXPECT_EQ((b.Q(kQp, R::q::STATQPi) >> 24) & 7u, 0u);
    EXPECT_TRUE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_LAST, 105)).has_value());
    EXPECT_TRUE(b.qp(kQp).rs.retransmit_pending());
    EXPECT_EQ(b.qp(kQp).retry.resend_psn, 104u);
    EXPECT_EQ((b.Q(kQp, R::q::STATQPi) >> 24) & 7u, 1u);
    EXPECT_EQ(b.qp(kQp).retry.retry_cnt, 1u);
    b.wait_ns(5000);
    reqs = read_requests(b);
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[1].bth.psn, v4 ? 104u : 102u);
    ASSERT_TRUE(reqs[1].reth.has_value());
    EXPECT_EQ(reqs[1].reth->va, v4 ? 0x70200u : 0x70000u);
    EXPECT_EQ(reqs[1].reth->rkey, 0x1234u);
    EXPECT_EQ(reqs[1].reth->dma_len, v4 ? 512u : 1024u);
    EXPECT_EQ(b.G(R::g::RETRYCNTSTS), retries0 + 1);
    uint64_t t_req = 0;
    for (const auto& t : b.dp.frames)
      if (t.decoded && t.f.bth.opcode == roce::op::RC_READ_REQUEST) t_req = t.t_ps;
    EXPECT_EQ(b.qp(kQp).retry.ack_deadline_ps, t_req + (uint64_t(1) << 16) * 5000u);
    // The answers to the re-issue complete the READ (4.x: FIRST 104, LAST
    // 105; 3.1: 102 and 103 again, duplicates, then MIDDLE 104, LAST 105).
    if (v4) {
      EXPECT_FALSE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_FIRST, 104)).has_value());
    } else {
      EXPECT_TRUE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_FIRST, 102)).has_value());
      EXPECT_TRUE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_MIDDLE, 103)).has_value());
      EXPECT_FALSE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_MIDDLE, 104)).has_value());
    }
    EXPECT_FALSE(b.resp.rx_read_resp(b.qp(kQp), read_resp(roce::op::RC_READ_RESP_LAST, 105)).has_value());
    b.wait_ns(1000);
    EXPECT_TRUE(osq.empty());
    EXPECT_EQ(b.mem.read32(cq_base(kQp) + (kCqHead0 + 1) * 4), 0x0004C001u);
    EXPECT_EQ(b.qp(kQp).retry.ack_deadline_ps, 0u);
    for (uint32_t k = 0; k < 4; ++k)
      EXPECT_EQ(b.mem.read32(kPayload + k * 256), uint32_t(uint8_t(102 + k)) | uint32_t(uint8_t(103 + k)) << 8 |
                                                      uint32_t(uint8_t(104 + k)) << 16 | uint32_t(uint8_t(105 + k)) << 24)
          << "response " << 102 + k;
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, RespHndlerRead, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& i) { return i.param ? "Layout4x" : "Layout31"; });

// A malformed AETH (type 10, reserved: IBTA 9.7.5.1) is refused: the RX
// packet handler drops it with the AETH syndrome bit; nothing retires.
TEST(RespHndlerAck, MalformedAethRefused) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    setup(b);
    load_osq(b, kFive);
    const auto drop = b.resp.rx_ack(b.qp(kQp), ack_frame(0x40, 107));
    ASSERT_TRUE(drop.has_value());
    EXPECT_EQ(drop->syndrome, 1u << 10);
    EXPECT_EQ(b.qp(kQp).req.osq.size(), 5u);
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), kCqHead0);
  });
}

// A "ghost" answer (found by fuzz_rx, tb/fuzz): an ACK, NAK or RNR NAK for a
// PSN past the requests sent (108 and on, the five WQEs ending at 107; with
// nothing outstanding, at or past STATRESPSNi) acknowledges nothing: it is
// refused (no syndrome: not a validation failure), counted invalid
// (ININVDUPCNT[15:0]), and nothing retires, STATRESPSNi stays at or below
// the next PSN to send, no QP turns fatal.
TEST(RespHndlerAck, GhostAnswersRefused) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    setup(b);
    load_osq(b, kFive);
    uint32_t n = 0;
    for (const uint8_t syn : {uint8_t(0x1F), uint8_t(0x60), uint8_t(0x61), uint8_t(0x21)})
      for (const uint32_t psn : {108u, 0x500u}) {
        const auto drop = b.resp.rx_ack(b.qp(kQp), ack_frame(syn, psn));
        ASSERT_TRUE(drop.has_value()) << "syndrome " << int(syn) << " PSN " << psn;
        EXPECT_EQ(drop->syndrome, 0u);
        EXPECT_EQ(b.G(R::g::ININVDUPCNT), ++n);
      }
    EXPECT_EQ(b.qp(kQp).req.osq.size(), 5u);
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), kCqHead0);
    EXPECT_EQ(b.Q(kQp, R::q::STATRESPSNi), 100u);
    EXPECT_FALSE(b.s.fatal(kQp));
    // The last WQE's PSN is acknowledged as usual, then nothing is outstanding.
    EXPECT_FALSE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x1F, 107)).has_value());
    EXPECT_EQ(b.Q(kQp, R::q::STATRESPSNi), 108u);
    ASSERT_TRUE(b.resp.rx_ack(b.qp(kQp), ack_frame(0x1F, 108)).has_value());
    EXPECT_EQ(b.Q(kQp, R::q::STATRESPSNi), 108u);
  });
}

}  // namespace
