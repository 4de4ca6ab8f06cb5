// The QP manager's passes (model/ernic/qp_mgr.h): the dispatcher and the
// prefetcher visit only the QPs that may have work (qp::RoundRobinSet,
// model/qp/round_robin_set.h), and still serve the QPs in the order of a
// pass over every QP (PG332: round robin over the QPs; the code's rule:
// the first QP with work from the one after the QP served last, QPNs going
// up and wrapping from num_qp to 1). The references below are that rule
// written out over all QPs, not the model's code.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "model/qp/round_robin_set.h"
#include "tb/ernic/block_bench.h"

using namespace ernic;
using namespace ernic::bench;
using pg332::WqeOpcode;

namespace {

// ------------------------------------------------------------ the set

// The reference pass: QPNs start..num_qp, then 1..start-1, those in `in`.
std::vector<uint32_t> full_pass(uint32_t num_qp, uint32_t start, const std::vector<bool>& in) {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < num_qp; ++i) {
    const uint32_t n = 1 + (start - 1 + i) % num_qp;
    if (in[n]) v.push_back(n);
  }
  return v;
}

// Every start of every size of random sets (bitmap words' edges: 63, 64,
// 65, 255, 256): the members in the reference pass's order; a visit that
// stops returns its QPN; a visit that erases what it is given leaves the
// rest of the pass as it was.
TEST(QpMgrPassesSet, MembersInRoundRobinOrderFromEveryStart) {
  std::mt19937 rng(7);
  for (uint32_t num_qp : {1u, 2u, 63u, 64u, 65u, 255u, 256u}) {
    for (int trial = 0; trial < 6; ++trial) {
      qp::RoundRobinSet set(num_qp);
      std::vector<bool> in(num_qp + 1, false);
      for (uint32_t n = 1; n <= num_qp; ++n)
        if (rng() % 4 == 0 || (trial == 0 && n == num_qp)) {
          set.insert(n);
          in[n] = true;
        }
      uint32_t count = 0;
      for (uint32_t n = 1; n <= num_qp; ++n) count += in[n];
      ASSERT_EQ(set.size(), count);
      for (uint32_t start = 1; start <= num_qp; ++start) {
        SCOPED_TRACE("num_qp " + std::to_string(num_qp) + " start " + std::to_string(start));
        const std::vector<uint32_t> want = full_pass(num_qp, start, in);
        std::vector<uint32_t> got;
        EXPECT_EQ(set.find_from(start, [&](uint32_t n) { return got.push_back(n), false; }), 0u);
        EXPECT_EQ(got, want);
        if (want.size() >= 2) {  // stops at the second member
          EXPECT_EQ(set.find_from(start, [&](uint32_t n) { return n == want[1]; }), want[1]);
          qp::RoundRobinSet copy = set;
          got.clear();
          copy.find_from(start, [&](uint32_t n) { return got.push_back(n), copy.erase(n), false; });
          EXPECT_EQ(got, want);
          EXPECT_EQ(copy.size(), 0u);
        }
      }
    }
  }
  qp::RoundRobinSet all(256, /*all=*/true);
  EXPECT_EQ(all.size(), 256u);
  EXPECT_TRUE(all.contains(1));
  EXPECT_TRUE(all.contains(256));
}

// ------------------------------------------------------------ dispatch order

constexpr uint64_t kCycle = kCoreCyclePs;

// The reference dispatcher: the QPs' WQEs all cached, served by passes
// over every QP 1..num_qp from `start` (the QP after the one served last).
std::vector<uint32_t> reference_order(uint32_t num_qp, uint32_t start, std::map<uint32_t, uint32_t> work) {
  std::vector<uint32_t> served;
  for (;;) {
    uint32_t pick = 0;
    for (uint32_t i = 0; i < num_qp && !pick; ++i) {
      const uint32_t n = 1 + (start - 1 + i) % num_qp;
      if (work[n] > 0) pick = n;
    }
    if (!pick) return served;
    served.push_back(pick);
    --work[pick];
    start = pick % num_qp + 1;
  }
}

BenchOptions bench_options(uint32_t num_qp) {
  BenchOptions o;
  o.with_qp_mgr = true;
  o.log = true;
  o.cfg.num_qp = num_qp;
  return o;
}

// Eight QPs, all set up and idle: the passes drop them (no candidate
// left). QP 6 rings a 16 KiB WRITE (64 packets of 256 B) and a SEND; while
// its WRITE is being sent (the dispatcher inside it, the round-robin
// position after QP 6), idle QPs 2 (below it: the next pass wraps) and 8
// (above it) ring two SENDs and one. Their WQEs are fetched during the
// WRITE; the next passes serve 8, then 2 (wrapping), then QP 6's SEND, then
// 2: the order of passes over all eight QPs. And the pass after the last
// finds every QP idle again.
TEST(QpMgrPasses, WorkArrivingDuringAServiceIsServedInFullScanOrder) {
  constexpr uint32_t kNumQp = 8, kWriteLen = 16384;
  run_bench(bench_options(kNumQp), [](BlockBench& b) {
    b.setup_global(kNumQp);
    for (uint32_t n = 2; n <= kNumQp; ++n) b.setup_qp(n, 0, n * 0x1000);
    b.wait_ns(1000);
    EXPECT_EQ(b.qp_mgr->candidates(), 0u);  // all idle: dropped by the first passes
    pg332::Wqe w;
    w.wrid = 0x60;
    w.opcode = uint8_t(WqeOpcode::write);
    w.laddr = kPayload;
    w.length = kWriteLen;
    w.roffset = 0x70000;
    w.rtag = 0x1234;
    b.fill(w.laddr, kWriteLen, 0x11);
    b.post(6, 0, w);
    b.post(6, 1, tagged_send(0x61));
    b.qp_mgr->ring(6, 2);
    while (!b.qp(6).rs.sending()) b.wait_ns(5);
    const uint64_t t_in = b.now();
    b.post(2, 0, tagged_send(0x20));
    b.post(2, 1, tagged_send(0x21));
    b.post(8, 0, tagged_send(0x80));
    b.qp_mgr->ring(2, 2);
    b.qp_mgr->ring(8, 1);
    while (b.qp(6).rs.sending()) b.wait_ns(5);
    const uint64_t t_out = b.now();
    b.wait_ns(5000);
    // The doorbells and the fetches of QPs 2 and 8 all fell inside the WRITE's service.
    std::vector<uint64_t> fetch_2_8;
    for (const DmaRec& r : b.dma_records("qp_mgr_m_axi"))
      if (r.addr == sq_base(2) || r.addr == sq_base(8)) fetch_2_8.push_back(r.t_ps);
    ASSERT_EQ(fetch_2_8.size(), 2u);
    for (uint64_t t : fetch_2_8) {
      EXPECT_GT(t, t_in);
      EXPECT_LT(t + 100 * kCycle, t_out);
    }
    // Packets by QP (remote QP 0x100 + n): the WRITE's 64, then one a SEND.
    std::vector<uint32_t> qps;
    for (const TxFrame& t : b.dp.frames) qps.push_back(t.f.bth.dest_qp - kRemoteQpnBase);
    ASSERT_EQ(qps.size(), kWriteLen / 256 + 4);
    for (uint32_t i = 0; i < kWriteLen / 256; ++i) ASSERT_EQ(qps[i], 6u) << "packet " << i;
    const std::vector<uint32_t> after(qps.begin() + kWriteLen / 256, qps.end());
    const std::vector<uint32_t> want = reference_order(kNumQp, 7, {{2, 2}, {6, 1}, {8, 1}});
    EXPECT_EQ(want, (std::vector<uint32_t>{8, 2, 6, 2}));
    EXPECT_EQ(after, want);
    EXPECT_EQ(b.Q(2, R::q::STATWQEi), 2u);
    EXPECT_EQ(b.Q(6, R::q::STATWQEi), 2u);
    EXPECT_EQ(b.Q(8, R::q::STATWQEi), 1u);
  });
}

// ------------------------------------------------------------ what a pass costs

// 255 QPs set up (2..256 of num_qp 256), one of them active: eight SENDs
// on QP 2 rung at once. Once the first passes have dropped the idle QPs,
// every pass of either process visits QP 2 alone: 20 visits for the 20
// passes the eight WQEs take (a pass over every QP visits 256: 5,120).
TEST(QpMgrPasses, OneActiveOf255VisitsOneQpAPass) {
  constexpr uint32_t kNumQp = 256;
  run_bench(bench_options(kNumQp), [](BlockBench& b) {
    b.setup_global(kNumQp);
    for (uint32_t n = 2; n <= kNumQp; ++n) b.setup_qp(n, 0, 0x1000);
    b.wait_ns(1000);
    ASSERT_EQ(b.qp_mgr->candidates(), 0u);
    for (uint32_t i = 0; i < 8; ++i) b.post(2, i, tagged_send(uint8_t(0x20 + i)));
    const uint64_t passes0 = b.qp_mgr->passes(), visits0 = b.qp_mgr->visits();
    b.qp_mgr->ring(2, 8);
    b.wait_ns(5000);
    EXPECT_EQ(b.qp_mgr->candidates(), 1u);  // QP 2: 8 WQEs outstanding, no ACK in this bench
    ASSERT_EQ(b.dp.frames.size(), 8u);
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(b.dp.frames[i].f.payload.at(0), 0x20 + i);
    const uint64_t passes = b.qp_mgr->passes() - passes0, visits = b.qp_mgr->visits() - visits0;
    // Each pass of either process visited QP 2 and nothing else.
    EXPECT_EQ(visits, passes);
    EXPECT_EQ(passes, 20u);  // the dispatcher's and the prefetcher's, as the model runs today
  });
}

}  // namespace
