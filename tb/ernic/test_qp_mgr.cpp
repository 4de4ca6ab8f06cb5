// The QP manager (model/ernic/qp_mgr.h) with the WQE processor below it:
// doorbells rung on ring(), WQEs fetched through qp_mgr_m_axi (read back
// from the transaction log), dispatched round robin over the QPs, the
// packets they become taken at the TX datapath. Expected values by hand:
// PG332 (SQ at SQBAi + index * 64, the SQ wrapping at QDEPTHi[15:0],
// STATCURSQPTRi, STATWQEi, QPMSTS[31:16] WQEs processed and [1:0] cache
// full / empty, fatal code 0x05 for a WQE outside host memory, XRNICADCONF
// SW override QPN at [31:24] in 3.1 and [31:20] in 4.x) and the model's
// documented timing parameters (doorbell_cycles, A-ERNIC-1; wqe_fetch_burst
// and the per-QP cache, A-ERNIC-24; hdr_build_cycles, A-ERNIC-25).
//
// To see the dispatch order apart from the fetch order, the tests hold the
// dispatcher while the WQEs are fetched: every QP's outstanding-request
// limit is 0 (the dispatcher waits while a QP's OSQ is at its limit), then
// it is put back to 16 and the QP manager is woken (work_ev), as an ACK
// does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tb/ernic/block_bench.h"

using namespace ernic;
using namespace ernic::bench;
using pg332::WqeOpcode;

namespace {

constexpr uint64_t kCycle = kCoreCyclePs;

void hold(BlockBench& b, std::initializer_list<uint32_t> qps) {
  for (uint32_t n : qps) b.qp(n).req.max_out = 0;
}
void release(BlockBench& b, std::initializer_list<uint32_t> qps) {
  for (uint32_t n : qps) b.qp(n).req.max_out = 16;
  b.s.work_ev.notify(sc_core::SC_ZERO_TIME);
}

BenchOptions qp_mgr_options() {
  BenchOptions o;
  o.with_qp_mgr = true;
  o.log = true;
  return o;
}

// ------------------------------------------------------------ doorbells

// An SQPIi doorbell reaches the QP manager doorbell_cycles later: its
// first WQE read on qp_mgr_m_axi starts then, at SQBAi, one WQE (64 B).
class QpMgrDoorbell : public testing::TestWithParam<uint32_t> {};

TEST_P(QpMgrDoorbell, FetchStartsDoorbellCyclesLater) {
  const uint32_t D = GetParam();
  BenchOptions o = qp_mgr_options();
  o.cfg.timing.doorbell_cycles = D;
  run_bench(o, [D](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(2, 0, 0x000100);
    b.post(2, 0, tagged_send(1));
    b.wait_ns(100);  // 20 cycles in, on an edge
    const uint64_t t0 = b.now();
    EXPECT_EQ(t0 % kCycle, 0u);
    b.qp_mgr->ring(2, 1);
    b.wait_ns(5000);
    const auto rd = b.dma_records("qp_mgr_m_axi");
    ASSERT_EQ(rd.size(), 1u);
    EXPECT_FALSE(rd[0].write);
    EXPECT_EQ(rd[0].t_ps, t0 + D * kCycle);
    EXPECT_EQ(rd[0].addr, sq_base(2));
    EXPECT_EQ(rd[0].len, 64u);
    ASSERT_EQ(b.dp.frames.size(), 1u);
    EXPECT_EQ(b.dp.frames[0].f.bth.psn, 0x000100u);
    EXPECT_GT(b.dp.frames[0].t_ps, rd[0].t_ps);
    EXPECT_EQ(b.Q(2, R::q::STATCURSQPTRi), 1u);
    EXPECT_EQ(b.Q(2, R::q::STATWQEi), 1u);
  });
}

INSTANTIATE_TEST_SUITE_P(Cycles, QpMgrDoorbell, testing::Values(0u, 2u, 7u),
                         [](const testing::TestParamInfo<uint32_t>& i) { return "Db" + std::to_string(i.param); });

// ------------------------------------------------------------ prefetch

// Eight WQEs posted at once are read in bursts of wqe_fetch_burst WQEs,
// contiguous in the SQ, one read after the other; then dispatched in SQ
// order with consecutive PSNs.
class QpMgrPrefetch : public testing::TestWithParam<uint32_t> {};

TEST_P(QpMgrPrefetch, BurstsOfWqeFetchBurst) {
  const uint32_t burst = GetParam();
  BenchOptions o = qp_mgr_options();
  o.cfg.timing.wqe_fetch_burst = burst;
  o.cfg.timing.wqe_cache_per_qp = 8;
  run_bench(o, [burst](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(2, 0, 0x000200);
    hold(b, {2});
    for (uint32_t i = 0; i < 8; ++i) b.post(2, i, tagged_send(uint8_t(0x40 + i)));
    const uint64_t t0 = b.now();
    b.qp_mgr->ring(2, 8);
    b.wait_ns(20000);
    const auto rd = b.dma_records("qp_mgr_m_axi");
    ASSERT_EQ(rd.size(), 8 / burst);
    for (size_t j = 0; j < rd.size(); ++j) {
      SCOPED_TRACE("read " + std::to_string(j));
      EXPECT_EQ(rd[j].addr, sq_base(2) + j * burst * 64);
      EXPECT_EQ(rd[j].len, burst * 64u);
      if (j == 0) {
        EXPECT_EQ(rd[j].t_ps, t0 + 2 * kCycle);  // doorbell_cycles = 2
      } else {
        EXPECT_GT(rd[j].t_ps, rd[j - 1].t_ps);
      }
    }
    // 8 WQEs cached of 16 entries: neither full ([0]) nor empty ([1]);
    // nothing dispatched yet.
    EXPECT_EQ(b.G(R::g::QPMSTS), 0u);
    EXPECT_TRUE(b.dp.frames.empty());
    EXPECT_EQ(b.Q(2, R::q::STATWQEi), 0u);
    release(b, {2});
    b.wait_ns(2000);
    ASSERT_EQ(b.dp.frames.size(), 8u);
    for (uint32_t i = 0; i < 8; ++i) {
      EXPECT_EQ(b.dp.frames[i].f.payload.at(0), 0x40 + i);
      EXPECT_EQ(b.dp.frames[i].f.bth.psn, 0x000200u + i);
    }
    EXPECT_EQ(b.Q(2, R::q::STATCURSQPTRi), 8u);
    EXPECT_EQ(b.Q(2, R::q::STATWQEi), 8u);
    EXPECT_EQ(b.G(R::g::QPMSTS), 8u << 16 | 2u);  // 8 processed, cache empty
    EXPECT_EQ(b.dma_records("qp_mgr_m_axi").size(), 8 / burst);  // no WQE read twice
  });
}

INSTANTIATE_TEST_SUITE_P(Bursts, QpMgrPrefetch, testing::Values(1u, 2u, 4u),
                         [](const testing::TestParamInfo<uint32_t>& i) { return "Burst" + std::to_string(i.param); });

// A burst never crosses the end of the SQ: from index 14 of a 16-deep SQ,
// four WQEs are read as 14..15 and then 0..1, and go out in that order.
TEST(QpMgrPrefetchWrap, BurstStopsAtTheSqEnd) {
  run_bench(qp_mgr_options(), [](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(2, 0, 0x000300);
    // Where software left the SQ (PG332: STATCURSQPTRi is where the QP
    // manager fetches next; the top copies it on enable).
    b.s.Q(2, R::q::STATCURSQPTRi) = 14;
    b.qp(2).req.sq_ci = 14;
    b.qp(2).req.sq_pi = 14;
    b.qp(2).prefetch.pf_ci = 14;
    hold(b, {2});
    for (uint32_t i : {14u, 15u, 0u, 1u}) b.post(2, i, tagged_send(uint8_t(0x50 + i)));
    b.qp_mgr->ring(2, 2);  // 18 mod 16
    b.wait_ns(10000);
    const auto rd = b.dma_records("qp_mgr_m_axi");
    ASSERT_EQ(rd.size(), 2u);
    EXPECT_EQ(rd[0].addr, sq_base(2) + 14 * 64);
    EXPECT_EQ(rd[0].len, 128u);
    EXPECT_EQ(rd[1].addr, sq_base(2));
    EXPECT_EQ(rd[1].len, 128u);
    release(b, {2});
    b.wait_ns(2000);
    ASSERT_EQ(b.dp.frames.size(), 4u);
    const uint8_t want[] = {0x50 + 14, 0x50 + 15, 0x50 + 0, 0x50 + 1};
    for (uint32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(b.dp.frames[i].f.payload.at(0), want[i]);
      EXPECT_EQ(b.dp.frames[i].f.bth.psn, 0x000300u + i);
    }
    EXPECT_EQ(b.Q(2, R::q::STATCURSQPTRi), 2u);
    EXPECT_EQ(b.Q(2, R::q::STATWQEi), 4u);
  });
}

// ------------------------------------------------------------ round robin

struct RrCase {
  const char* name;
  uint32_t count[3];               // WQEs on QPs 2, 3, 4
  std::vector<uint32_t> order;     // QPNs of the packets, in order
};

void PrintTo(const RrCase& c, std::ostream* os) { *os << c.name; }

class QpMgrRoundRobin : public testing::TestWithParam<RrCase> {};

// With every QP's WQEs in the cache, the dispatcher takes one WQE a QP in
// turn (2, 3, 4, 2, ...), skipping a QP without work; each QP's PSNs run
// on from its own SQPSNi. An inline SEND costs hdr_build_cycles (2) in the
// WQE processor, so the packets leave 2 cycles apart.
TEST_P(QpMgrRoundRobin, OneWqeAQpInTurn) {
  const RrCase c = GetParam();
  run_bench(qp_mgr_options(), [&c](BlockBench& b) {
    b.setup_global(8);
    for (uint32_t n = 2; n <= 4; ++n) {
      b.setup_qp(n, 0, n * 0x1000);
      for (uint32_t i = 0; i < c.count[n - 2]; ++i) b.post(n, i, tagged_send(uint8_t(n << 4 | i)));
    }
    hold(b, {2, 3, 4});
    for (uint32_t n = 2; n <= 4; ++n) b.qp_mgr->ring(n, c.count[n - 2]);
    b.wait_ns(20000);
    EXPECT_TRUE(b.dp.frames.empty());
    const uint64_t t0 = b.now();
    release(b, {2, 3, 4});
    b.wait_ns(2000);
    ASSERT_EQ(b.dp.frames.size(), c.order.size());
    uint32_t seen[5] = {};
    for (size_t i = 0; i < c.order.size(); ++i) {
      SCOPED_TRACE("packet " + std::to_string(i));
      const uint32_t n = c.order[i];
      const TxFrame& t = b.dp.frames[i];
      EXPECT_EQ(t.f.bth.dest_qp, kRemoteQpnBase + n);
      EXPECT_EQ(t.f.bth.psn, n * 0x1000 + seen[n]);
      EXPECT_EQ(t.f.payload.at(0), n << 4 | seen[n]);
      EXPECT_EQ(t.t_ps, t0 + (i + 1) * 2 * kCycle);
      ++seen[n];
    }
    uint32_t total = 0;
    for (uint32_t n = 2; n <= 4; ++n) {
      EXPECT_EQ(b.Q(n, R::q::STATCURSQPTRi), c.count[n - 2]);
      EXPECT_EQ(b.Q(n, R::q::STATWQEi), c.count[n - 2]);
      total += c.count[n - 2];
    }
    EXPECT_EQ(b.G(R::g::QPMSTS) >> 16, total);
  });
}

INSTANTIATE_TEST_SUITE_P(Cases, QpMgrRoundRobin,
                         testing::Values(RrCase{"TwoEach", {2, 2, 2}, {2, 3, 4, 2, 3, 4}},
                                         RrCase{"Uneven", {3, 1, 2}, {2, 3, 4, 2, 4, 2}},
                                         RrCase{"MiddleIdle", {2, 0, 3}, {2, 4, 2, 4, 4}}),
                         [](const testing::TestParamInfo<RrCase>& i) { return std::string(i.param.name); });

// ------------------------------------------------------------ SW override

// XRNICADCONF[0] with the QPN field (3.1: [31:24], 4.x: [31:20]) holds that
// QP alone; clearing it lets it go.
class QpMgrSwOverride : public testing::TestWithParam<bool> {};

TEST_P(QpMgrSwOverride, HoldsOnlyTheNamedQp) {
  const bool v4 = GetParam();
  BenchOptions o = qp_mgr_options();
  o.cfg.layout = v4 ? R::kLayout4x : R::kLayout31;
  run_bench(o, [v4](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(2, 0, 0x2000);
    b.setup_qp(3, 0, 0x3000);
    b.post(2, 0, tagged_send(0x20));
    b.post(3, 0, tagged_send(0x30));
    b.s.G(R::g::XRNICADCONF) = v4 ? 0x00300001u : 0x03000001u;  // SW override, QP 3
    b.qp_mgr->ring(2, 1);
    b.qp_mgr->ring(3, 1);
    b.wait_ns(10000);
    ASSERT_EQ(b.dp.frames.size(), 1u);
    EXPECT_EQ(b.dp.frames[0].f.bth.dest_qp, kRemoteQpnBase + 2);
    EXPECT_EQ(b.Q(3, R::q::STATWQEi), 0u);
    EXPECT_EQ(b.dma_records("qp_mgr_m_axi").size(), 1u);  // QP 3's SQ not even read
    b.s.G(R::g::XRNICADCONF) = 0;
    b.qp_mgr->reconsider();  // what the top does on an XRNICADCONF write
    b.wait_ns(10000);
    ASSERT_EQ(b.dp.frames.size(), 2u);
    EXPECT_EQ(b.dp.frames[1].f.bth.dest_qp, kRemoteQpnBase + 3);
    EXPECT_EQ(b.dp.frames[1].f.bth.psn, 0x3000u);
    EXPECT_EQ(b.Q(3, R::q::STATWQEi), 1u);
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, QpMgrSwOverride, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& i) { return i.param ? "Layout4x" : "Layout31"; });

// ------------------------------------------------------------ fatal 0x05

// An SQ outside host memory: the WQE fetch fails (AXI DECERR), the QP turns
// fatal with code 0x05 (PG332: raised by the WQE processor side, here the
// WQE fetch): STATQPi[0], one error-status queue entry QPN << 16 | 0x05 at
// IPKTERRQBA, IPKTERRQWPTR 1, INTSTS[7]; nothing is sent.
constexpr uint64_t kBadSq = kMemBytes + 0x10000;

TEST(QpMgrFatal, WqeFetchOutsideHostMemoryIsFatal05) {
  run_bench(qp_mgr_options(), [](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(2, 0, 0x000400);
    b.s.Q(2, R::q::SQBAi) = uint32_t(kBadSq);
    b.qp_mgr->ring(2, 3);
    b.wait_ns(20000);
    EXPECT_TRUE(b.dp.frames.empty());
    EXPECT_EQ(b.Q(2, R::q::STATQPi) & 1u, 1u);
    EXPECT_EQ(b.mem.read32(kErrQueue), 2u << 16 | 0x05u);
    EXPECT_EQ(b.mem.read32(kErrQueue + 8), 0u);  // one entry only
    EXPECT_EQ(b.G(R::g::IPKTERRQWPTR), 1u);
    EXPECT_NE(b.G(R::g::INTSTS) & (1u << 7), 0u);
    const auto rd = b.dma_records("qp_mgr_m_axi");
    ASSERT_FALSE(rd.empty());
    EXPECT_EQ(rd[0].addr, kBadSq);
    EXPECT_EQ(rd[0].len, 3 * 64u);
    // The SQ pointer went past all three (the QP manager consumed them).
    EXPECT_EQ(b.Q(2, R::q::STATCURSQPTRi), 3u);
  });
}

// Every WQE posted produces a completion (PG332: a fatal QP's WQEs complete
// with ERRFLAG), and PG332's recovery and deletion flows (chapter 6) wait
// for CQHEADi == SQPIi before going on: the WQE whose fetch failed
// completes with ERRFLAG too (WRID and opcode 0: unknown), then the ones
// behind it are flushed (A-ERNIC-23). SQPIi = 3 gives three ERRFLAG CQEs.
// (Found by this bench: the model used to consume the failed WQE without a
// CQE, and CQHEADi stopped at 2.)
TEST(QpMgrFatal, EveryWqeOfAFetchFailureCompletesWithErrflag) {
  run_bench(qp_mgr_options(), [](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(2, 0, 0x000400);
    b.s.Q(2, R::q::SQBAi) = uint32_t(kBadSq);
    b.s.Q(2, R::q::SQPIi) = 3;
    b.qp_mgr->ring(2, 3);
    b.wait_ns(20000);
    EXPECT_EQ(b.Q(2, R::q::CQHEADi), 3u);  // == SQPIi
    for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(b.mem.read32(cq_base(2) + 4 * i) >> 24, 1u) << "CQE " << i;
  });
}

}  // namespace
