// tb/dma: the AXI4 masters (model/dma/dma.h) and the PCIe link model
// (model/dma/pcie.h). Every figure is simulated time: a large DMA is timed
// through the model and must take exactly the time a reference derived here
// from the documented rules gives (TLP times, read latency, AXI beats and
// clock edges; "reference timings" below); its payload rate is printed
// beside the header's formula
//   rate(P) = lanes x GT/s x 128/130 / 8 x P / (P + 24)   bytes per ns.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "model/dma/dma.h"
#include "model/dma/pcie.h"
#include "model/link/axil.h"
#include "tb/common/sc_runner.h"

using namespace ernic;
using namespace sc_core;

namespace {

using test::Runner;  // runs `body` in one SC_THREAD (tb/common/sc_runner.h)

struct Bench {
  ClockDomain core{"core", 200.0};
  HostMemory mem{64ull << 20};
  SimContext ctx;
  std::unique_ptr<PcieLink> link;
  std::unique_ptr<Dma> dma;
  explicit Bench(PcieParams p, uint32_t outstanding = 8) {
    link = std::make_unique<PcieLink>(p);
    DmaTiming t;
    t.pcie = p;
    t.link = link.get();
    t.outstanding = outstanding;
    dma = std::make_unique<Dma>(core, mem, ctx, "top.A.ernic.wqe_proc_top_m_axi", "A", "wqe_proc_top_m_axi", t);
  }
};

PcieParams gen3x8(uint32_t mps, uint32_t mrrs = 512) {
  PcieParams p;
  p.gen = 3;
  p.lanes = 8;
  p.mps = mps;
  p.mrrs = mrrs;
  p.read_latency_ns = 500;
  return p;
}

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kBase = 0x100000;

// One timed DMA: a read or write of len bytes at kBase.
struct Job {
  PcieParams p;
  bool write;
  uint64_t len;
  uint32_t outstanding = 8;
};

// Simulated time of each job, in ps. A SystemC kernel elaborates once per
// process, so all jobs run in one simulation, each with its own link and
// master (they do not interact).
std::vector<uint64_t> time_dmas(const std::vector<Job>& jobs) {
  sc_set_time_resolution(1, SC_PS);
  std::vector<std::unique_ptr<Bench>> benches;
  std::vector<std::unique_ptr<Runner>> runners;
  std::vector<std::vector<uint8_t>> bufs(jobs.size());
  std::vector<uint64_t> took(jobs.size(), 0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    benches.push_back(std::make_unique<Bench>(jobs[i].p, jobs[i].outstanding));
    bufs[i].resize(jobs[i].len);
    Bench* b = benches.back().get();
    const Job j = jobs[i];
    uint8_t* buf = bufs[i].data();
    uint64_t* out = &took[i];
    runners.push_back(std::make_unique<Runner>(("runner" + std::to_string(i)).c_str(), [b, j, buf, out] {
      wait(sc_time(1, SC_US));
      const uint64_t t0 = ClockDomain::now_ps();
      const bool ok = j.write ? b->dma->write(kBase, buf, j.len) : b->dma->read(kBase, buf, j.len);
      EXPECT_TRUE(ok);
      // A write is posted: it is done when its last TLP has left (A-DMA-5).
      *out = (j.write ? std::max(ClockDomain::now_ps(), b->dma->writes_done_ps()) : ClockDomain::now_ps()) - t0;
    }));
  }
  sc_start();
  return took;
}

double rate_bytes_per_ns(uint64_t len, uint64_t ps) { return double(len) * 1000.0 / double(ps); }

}  // namespace

// ---- pure arithmetic ----------------------------------------------------

TEST(Pcie, FormulaFigures) {
  EXPECT_NEAR(gen3x8(256).raw_bytes_per_ns(), 7.8769, 1e-3);
  EXPECT_NEAR(gen3x8(128).payload_rate(128), 6.6332, 1e-3);
  EXPECT_NEAR(gen3x8(256).payload_rate(256), 7.2018, 1e-3);
  EXPECT_NEAR(gen3x8(512).payload_rate(512), 7.5246, 1e-3);
  PcieParams g4;
  g4.gen = 4;
  g4.lanes = 16;
  EXPECT_NEAR(g4.raw_bytes_per_ns(), 31.5077, 1e-3);
  // The read rate is bounded by MRRS when it is below MPS.
  EXPECT_DOUBLE_EQ(gen3x8(512, 128).read_rate(), gen3x8(128).payload_rate(128));
  EXPECT_NE(gen3x8(256).summary().find("Gen3 x8"), std::string::npos);
}

TEST(Pcie, CompletionsSplitAtRcbAndMps) {
  // An aligned request: MPS-sized completions.
  auto c = completions(0x20000, 512, 256, 64);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].len, 256u);
  // 32 bytes past an RCB boundary: the first completion ends on the RCB
  // boundary below addr + MPS (224 bytes), the rest are MPS-sized.
  c = completions(0x20020, 480, 256, 64);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].addr, 0x20020u);
  EXPECT_EQ(c[0].len, 224u);
  EXPECT_EQ(c[1].addr, 0x20100u);
  EXPECT_EQ(c[1].len, 256u);
  // RCB 128 moves the first cut.
  c = completions(0x20020, 480, 256, 128);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].len, 224u);
  c = completions(0x20040, 480, 256, 128);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].len, 192u);
}

TEST(Pcie, PlanCutsAt4KiBMrrsMpsAndRcb) {
  const PcieParams p = gen3x8(256, 512);
  // 0x20F00 + 0x2100: bursts of 256, 4096, 4096 bytes (4 KiB boundaries);
  // MRd: 1 + 8 + 8 (MRRS 512); CplD: 1 + 16 + 16 (MPS 256).
  DmaPlan d = plan_dma(p, 0x20F00, 0x2100, false);
  EXPECT_EQ(d.bursts, 3u);
  EXPECT_EQ(d.requests, 17u);
  EXPECT_EQ(d.completions, 33u);
  // Unaligned: 0x20020 + 1024: one burst, MRd 480 + 512 + 32, CplD 224 + 256, 256 + 256, 32.
  d = plan_dma(p, 0x20020, 1024, false);
  EXPECT_EQ(d.bursts, 1u);
  EXPECT_EQ(d.requests, 3u);
  EXPECT_EQ(d.completions, 5u);
  // Writes: MWr at MPS-aligned cuts, never across 4 KiB.
  d = plan_dma(p, 0x20F80, 0x200, true);
  EXPECT_EQ(d.bursts, 2u);     // 128 | 384
  EXPECT_EQ(d.requests, 3u);   // 128 | 256 + 128
  EXPECT_EQ(d.completions, 0u);
}

TEST(Pcie, LinkSharesADirectionAndFillsGaps) {
  PcieLink l(gen3x8(256));
  const uint64_t d = l.tlp_ps(256);
  EXPECT_EQ(d, uint64_t(std::llround(280 * 1000.0 / gen3x8(256).raw_bytes_per_ns())));
  // Two TLPs ready at 0 go back to back; the other direction is independent.
  EXPECT_EQ(l.send(PcieLink::kDown, 0, 256, 0), d);
  EXPECT_EQ(l.send(PcieLink::kDown, 0, 256, 0), 2 * d);
  EXPECT_EQ(l.send(PcieLink::kUp, 0, 256, 0), d);
  // A TLP booked for later leaves a gap an earlier-ready one may use.
  EXPECT_EQ(l.send(PcieLink::kDown, 10 * d, 256, 0), 11 * d);
  EXPECT_EQ(l.send(PcieLink::kDown, 0, 256, 0), 3 * d);
  EXPECT_EQ(l.tlps(PcieLink::kDown), 4u);
  EXPECT_EQ(l.payload_bytes(PcieLink::kDown), 1024u);
}

// Every booking against a reference written from the rule alone: a TLP
// leaves at the earliest t >= ready where [t, t + its time) overlaps no
// booked stretch (checked against all of them, none ever merged); a TLP's
// time from A-PCIE-1's formula (Gen3 x8: (P + 24) x 126.953125 ps, to the
// nearest ps). 20,000 TLPs of 0-512 bytes in both directions with `now`
// jumping up to 400 ns: TLPs ready at the end of what is booked (a stream:
// appended, extending the last stretch), ready up to 2 us ahead (gaps left,
// filled later, a gap filled exactly joins both neighbours), and stretches
// forgotten as now passes them (the vector compacted). Then one directed
// case of each kind.
TEST(Pcie, LinkBookingsMatchABruteForceReference) {
  PcieLink l(gen3x8(256));
  auto dur_of = [](uint64_t p) { return ((p + 24) * 8 * 130 * 1000 * 2 + 8192) / (2 * 8192); };
  struct Iv {
    uint64_t s, e;
  };
  std::vector<Iv> ref[2];
  auto book = [&](int d, uint64_t ready, uint32_t payload, uint64_t now) {
    const uint64_t dur = dur_of(payload);
    uint64_t t = ready;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Iv& v : ref[d])
        if (v.s < t + dur && v.e > t) t = v.e, moved = true;
    }
    std::vector<Iv> kept;  // what ended before now can never overlap again
    for (const Iv& v : ref[d])
      if (v.e > now) kept.push_back(v);
    kept.push_back({t, t + dur});
    ref[d] = std::move(kept);
    return t + dur;
  };
  std::mt19937_64 rng(17);
  uint64_t now = 0, last_end[2] = {0, 0};
  const uint32_t sizes[] = {0, 64, 128, 256, 512};
  for (int k = 0; k < 20000; ++k) {
    now += rng() % 2 == 0 ? rng() % 400000 : 0;
    const int d = int(rng() % 2);
    const uint32_t payload = sizes[rng() % 5];
    uint64_t ready = now;
    switch (rng() % 4) {
      case 0: ready = std::max(now, last_end[d]); break;  // a stream
      case 1: ready += rng() % 2000000; break;
      case 2: ready += rng() % 50000; break;
      default: break;
    }
    const uint64_t want = book(d, ready, payload, now);
    last_end[d] = std::max(last_end[d], want);
    ASSERT_EQ(l.send(d ? PcieLink::kDown : PcieLink::kUp, ready, payload, now), want) << "TLP " << k;
  }
  EXPECT_EQ(l.tlps(PcieLink::kUp) + l.tlps(PcieLink::kDown), 20000u);
  // Directed, on a fresh link: A at 0, C booked 2 TLP-times later, B then
  // fills the gap exactly (one stretch from 0 to 3 TLP-times), D after it.
  PcieLink g(gen3x8(256));
  const uint64_t t = dur_of(256);
  EXPECT_EQ(g.send(PcieLink::kUp, 0, 256, 0), t);
  EXPECT_EQ(g.send(PcieLink::kUp, 2 * t, 256, 0), 3 * t);
  EXPECT_EQ(g.send(PcieLink::kUp, 0, 256, 0), 2 * t);
  EXPECT_EQ(g.send(PcieLink::kUp, 0, 256, 0), 4 * t);
  EXPECT_EQ(g.send(PcieLink::kUp, 4 * t, 256, 4 * t), 5 * t);  // appended after all, the rest forgotten
}

// ---- reference timings -----------------------------------------------------
// The exact time of each timed job below, in ps, derived from the rules the
// model documents (model/dma/dma.h, model/dma/pcie.h, assumptions A-DMA-*,
// A-PCIE-* in model/system/assumptions.cpp), not taken from its output:
//  - the core clock (m_axi_aclk) is 200 MHz: rising edges every 5000 ps
//    from time 0 (model/sim/clock.h); each job starts at 1 us, on an edge;
//  - a TLP with P payload bytes occupies one direction of the link for
//    P + 24 bytes (framing 2, sequence number 2, 4DW header 16, LCRC 4) at
//    lanes x GT/s x 128/130 / 8 bytes per ns (A-PCIE-1), i.e.
//    (P + 24) x 8 x 130 x 1000 / (lanes x GT/s x 128) ps, rounded to the
//    nearest ps (the kernel's resolution, pcie.h tlp_ps). Gen3 x8 is exactly
//    126.953125 ps a byte: MRd (P = 0) 3046.875 -> 3047 ps; MPS 128: 19296.875
//    -> 19297; MPS 256: 35546.875 -> 35547; MPS 512: 68046.875 -> 68047. The
//    rounding makes every TLP 0.125 ps longer than the formula's.
namespace {

constexpr uint64_t kCorePs = 5000;     // 200 MHz
constexpr uint64_t kStartPs = 1000000;  // time_dmas: wait(1 us), then the call
constexpr uint64_t kBurst = 4096;       // AXI bursts are cut at 4 KiB (A-DMA-1); the jobs are 4 KiB aligned
constexpr uint64_t kBeat = 64;          // 512-bit AXI data bus (PG332 3.1)

uint64_t ref_tlp_ps(const PcieParams& p, uint64_t payload) {
  const uint64_t gts = p.gen >= 4 ? 16 : 8;
  const uint64_t num = (payload + 24) * 8 * 130 * 1000, den = uint64_t(p.lanes) * gts * 128;
  return (2 * num + den) / (2 * den);  // to the nearest ps (no tie occurs: x.875 here)
}
// The first core edge at or after t.
uint64_t ref_edge(uint64_t t) { return (t + kCorePs - 1) / kCorePs * kCorePs; }
// When a completion whose last byte arrived at t has its last beat on the AXI
// read-data bus: the first core edge at least one cycle after t (A-DMA-4),
// provided the bus is free by then (checked by the callers).
uint64_t ref_last_beat(uint64_t t) { return ref_edge(t + kCorePs); }

// An aligned read of len bytes (len a multiple of 4 KiB) with `outstanding`
// bursts in flight, from kStartPs; returns its duration.
//  - Every 4 KiB burst becomes 4096 / MRRS read requests (MRd, header only)
//    sent up, and each request min(MRRS, MPS)-byte completions (CplD) sent
//    down (pcie.h splitting; aligned, so MPS-sized).
//  - A request's first completion is ready read_latency after the request
//    left; its others follow back to back (A-PCIE-2).
//  - Each completion's beats go onto the AXI bus as it arrives (A-DMA-4);
//    the read returns with its last beat (A-DMA-1).
//  outstanding > 1 (8 here): the first burst's first request leaves at
//  t0 + tMRd, its first completion is ready latency later, and from then on
//  the down direction never idles (conditions checked below), so the last
//  completion leaves N x tCpl later (N = len / MPS completions), and the
//  read returns one cycle (and the edge) after that.
//  outstanding == 1: each burst waits for the previous one's last beat (on an
//  edge, R); then the same chain for one burst: R' = R + edge(tMRd + latency
//  + 4096 / MPS x tCpl + one cycle).
uint64_t ref_read_ps(const PcieParams& p, uint64_t len, uint32_t outstanding) {
  const uint64_t t_mrd = ref_tlp_ps(p, 0), t_cpl = ref_tlp_ps(p, p.mps), lat = uint64_t(p.read_latency_ns) * 1000;
  EXPECT_GE(p.mrrs, p.mps);  // so every completion carries MPS bytes
  const uint64_t cpl_per_req = p.mrrs / p.mps;
  const uint64_t cpl_per_burst = kBurst / p.mps, req_per_burst = kBurst / p.mrrs, bursts = len / kBurst;
  // The AXI bus is never what limits: a completion's MPS / 64 beats, and the
  // cycle to the next edge, fit in its link time.
  EXPECT_LE((p.mps / kBeat + 1) * kCorePs, t_cpl);
  // A request's completions outlast the next request on the up direction, so
  // the completions of the requests of one burst (and of the bursts issued
  // together) follow one another without a gap.
  EXPECT_LE(t_mrd, cpl_per_req * t_cpl);
  EXPECT_LE(req_per_burst * t_mrd, cpl_per_burst * t_cpl);
  if (outstanding == 1) {
    const uint64_t one = ref_edge(t_mrd + lat + cpl_per_burst * t_cpl + kCorePs);
    return bursts * one;
  }
  // A burst that waited for a slot is issued at most two cycles after the
  // down direction finished the burst it replaces; its first completion is
  // then ready tMRd + latency later, before the down direction has sent the
  // outstanding - 1 bursts still queued: no gap.
  if (bursts > outstanding) {
    EXPECT_LE(2 * kCorePs + t_mrd + lat, (outstanding - 1) * cpl_per_burst * t_cpl);
  }
  const uint64_t last_cpl_end = kStartPs + t_mrd + lat + (len / p.mps) * t_cpl;
  return ref_last_beat(last_cpl_end) - kStartPs;
}

// An aligned write of len bytes (8 bursts without a B response at most),
// from kStartPs; returns the time its last TLP has left and the B response
// came (time_dmas: a write is posted, done when its last TLP has left, A-DMA-5).
//  - W beats move one a cycle from t0 (A-DMA-1); MWr TLP i (MPS bytes,
//    MPS-aligned) is ready once its MPS / 64 beats are in:
//    t0 + (i + 1) x MPS / 64 cycles.
//  - The link takes tMWr per TLP, at least MPS / 64 cycles (checked), so it is
//    the bottleneck: TLPs leave back to back from the first one's readiness,
//    the last at t0 + MPS / 64 cycles + N x tMWr (N = len / MPS).
//  - The outstanding limit never starves the link: burst k + 8's W beats
//    start at burst k's B response (one edge after its last TLP left), while
//    the link still has 7 bursts queued (checked).
//  - The B response of the last burst is given at the first core edge at or
//    after its last TLP left (A-DMA-2).
uint64_t ref_write_ps(const PcieParams& p, uint64_t len, uint32_t outstanding) {
  const uint64_t t_mwr = ref_tlp_ps(p, p.mps), beats_per_tlp = p.mps / kBeat;
  EXPECT_LE(beats_per_tlp * kCorePs, t_mwr);
  EXPECT_LE(kCorePs + beats_per_tlp * kCorePs, (outstanding - 1) * (kBurst / p.mps) * t_mwr);
  const uint64_t last_tlp_end = kStartPs + beats_per_tlp * kCorePs + (len / p.mps) * t_mwr;
  return ref_edge(last_tlp_end) - kStartPs;
}

uint64_t ref_ps(const Job& j) {
  return j.write ? ref_write_ps(j.p, j.len, j.outstanding) : ref_read_ps(j.p, j.len, j.outstanding);
}

}  // namespace

TEST(Pcie, ReferenceTlpTimes) {
  // The reference's TLP times are the link's (pcie.h), and the figures above.
  for (uint32_t mps : {128u, 256u, 512u}) {
    PcieLink l(gen3x8(mps));
    EXPECT_EQ(ref_tlp_ps(gen3x8(mps), mps), l.tlp_ps(mps));
    EXPECT_EQ(ref_tlp_ps(gen3x8(mps), 0), l.tlp_ps(0));
  }
  EXPECT_EQ(ref_tlp_ps(gen3x8(256), 0), 3047u);
  EXPECT_EQ(ref_tlp_ps(gen3x8(128), 128), 19297u);
  EXPECT_EQ(ref_tlp_ps(gen3x8(256), 256), 35547u);
  EXPECT_EQ(ref_tlp_ps(gen3x8(512), 512), 68047u);
}

// ---- timed through the model -------------------------------------------

// 1 MiB read at Gen3 x8, MPS 128 / 256 / 512: the exact time of the
// reference above (the formula's rate but for the read latency, paid once,
// 0.3% of the run, and the 0.125 ps a TLP of rounding).
// E.g. MPS 256: edge(1 us + 3047 + 500000 + 4096 x 35547 + 5000) - 1 us
// = 146,110,000 ps (7.1766 B/ns against the formula's 7.2018).
TEST(Dma, ReadThroughputMatchesFormula) {
  const std::vector<uint32_t> mpss = {128, 256, 512};
  std::vector<Job> jobs;
  for (uint32_t mps : mpss) jobs.push_back({gen3x8(mps), false, kMiB});
  const std::vector<uint64_t> t = time_dmas(jobs);
  for (size_t i = 0; i < mpss.size(); ++i) {
    const double got = rate_bytes_per_ns(kMiB, t[i]), want = jobs[i].p.read_rate();
    std::printf("read  Gen3 x8 MPS %3u: %llu ps, %.4f GB/s measured, %.4f GB/s formula (%+.3f%%)\n", mpss[i],
                (unsigned long long)t[i], got, want, 100.0 * (got / want - 1));
    EXPECT_EQ(t[i], ref_ps(jobs[i])) << "MPS " << mpss[i];
  }
  EXPECT_EQ(ref_ps(jobs[1]), 146110000u);  // the worked example above
}

// The same for a 1 MiB write (MWr of MPS bytes; the 512-bit bus at 200 MHz
// moves 12.8 GB/s, so the link limits). E.g. MPS 256:
// edge(1 us + 20000 + 4096 x 35547) - 1 us = 145,625,000 ps (7.2005 B/ns).
TEST(Dma, WriteThroughputMatchesFormula) {
  const std::vector<uint32_t> mpss = {128, 256, 512};
  std::vector<Job> jobs;
  for (uint32_t mps : mpss) jobs.push_back({gen3x8(mps), true, kMiB});
  const std::vector<uint64_t> t = time_dmas(jobs);
  for (size_t i = 0; i < mpss.size(); ++i) {
    const double got = rate_bytes_per_ns(kMiB, t[i]), want = jobs[i].p.write_rate();
    std::printf("write Gen3 x8 MPS %3u: %llu ps, %.4f GB/s measured, %.4f GB/s formula (%+.3f%%)\n", mpss[i],
                (unsigned long long)t[i], got, want, 100.0 * (got / want - 1));
    EXPECT_EQ(t[i], ref_ps(jobs[i])) << "MPS " << mpss[i];
  }
  EXPECT_EQ(ref_ps(jobs[1]), 145625000u);  // the worked example above
}

// MPS 128 vs 512 at Gen3 x8: each of the four times is the reference's
// exactly; the ratios are printed beside the formula's (512/536) / (128/152)
// = 1.1344 (the read latency and the rounding move them by under 0.1%).
TEST(Dma, Mps128Vs512RatioMatchesFormula) {
  const std::vector<Job> jobs = {{gen3x8(128), false, kMiB}, {gen3x8(512), false, kMiB},
                                 {gen3x8(128), true, kMiB}, {gen3x8(512), true, kMiB}};
  const std::vector<uint64_t> t = time_dmas(jobs);
  for (size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(t[i], ref_ps(jobs[i])) << i;
  const double formula = gen3x8(512).payload_rate(512) / gen3x8(128).payload_rate(128);
  const double rd = double(t[0]) / double(t[1]), wr = double(t[2]) / double(t[3]);
  std::printf("MPS 512 / MPS 128 rate: read %.4f, write %.4f measured, %.4f formula\n", rd, wr, formula);
}

// One burst in flight: every 4 KiB burst pays the read latency; with eight
// in flight it is paid once. 64 KiB at MPS 256:
//  one:   16 x edge(3047 + 500000 + 16 x 35547 + 5000) = 16 x 1,080,000 = 17,280,000 ps;
//  eight: edge(1 us + 3047 + 500000 + 256 x 35547 + 5000) - 1 us = 9,610,000 ps.
TEST(Dma, OutstandingLimitBoundsOverlap) {
  const PcieParams p = gen3x8(256);
  const std::vector<Job> jobs = {{p, false, 64 * 1024, 1}, {p, false, 64 * 1024, 8}};
  const std::vector<uint64_t> t = time_dmas(jobs);
  std::printf("64 KiB read, MPS 256: %llu ps with 1 burst in flight, %llu ps with 8\n", (unsigned long long)t[0],
              (unsigned long long)t[1]);
  EXPECT_EQ(t[0], ref_ps(jobs[0]));
  EXPECT_EQ(t[1], ref_ps(jobs[1]));
  EXPECT_EQ(ref_ps(jobs[0]), 17280000u);  // the worked figures above
  EXPECT_EQ(ref_ps(jobs[1]), 9610000u);
}

// The split of a read is visible in the transaction log and the counters:
// 0x20F00 + 0x2100 bytes is 3 AXI bursts, 17 read requests, 33 completions.
TEST(Dma, ReadSplitIsLogged) {
  const std::string path = ::testing::TempDir() + "dma_split.jsonl";
  {
    Bench b(gen3x8(256, 512));
    TxLog log(path);
    b.ctx.log = &log;
    std::vector<uint8_t> buf(0x2100);
    Runner r("runner", [&] {
      EXPECT_TRUE(b.dma->read(0x20F00, buf.data(), buf.size()));
      EXPECT_TRUE(b.dma->write(0x30F80, buf.data(), 0x200));
    });
    sc_start();
    EXPECT_EQ(b.dma->read_bursts(), 3u);
    EXPECT_EQ(b.dma->read_requests(), 17u);
    EXPECT_EQ(b.dma->read_completions(), 33u);
    EXPECT_EQ(b.dma->write_bursts(), 2u);
    EXPECT_EQ(b.dma->write_tlps(), 3u);
    EXPECT_EQ(b.link->tlps(PcieLink::kUp), 17u + 3u);
    EXPECT_EQ(b.link->tlps(PcieLink::kDown), 33u);
    EXPECT_EQ(b.link->payload_bytes(PcieLink::kDown), 0x2100u);
    b.ctx.log = nullptr;
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(R"("op":"read","addr":134912,"len":8448,"bursts":3,"tlps":17,"cpls":33})"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("op":"write","addr":200576,"len":512,"bursts":2,"tlps":3})"), std::string::npos)
      << lines[1];
}

// Writes of one master land in issue order, and a write is in memory when
// the call returns; a read after it sees it.
TEST(Dma, WritesLandInOrder) {
  Bench b(gen3x8(128));
  Runner r("runner", [&] {
    std::vector<uint8_t> a(8192, 0x11), c(64, 0x22);
    EXPECT_TRUE(b.dma->write(0x40000, a.data(), a.size()));
    EXPECT_EQ(b.mem.read32(0x40000 + 8188), 0x11111111u);
    EXPECT_TRUE(b.dma->write(0x40000, c.data(), c.size()));
    uint8_t x[4];
    EXPECT_TRUE(b.dma->read(0x40000, x, 4));
    EXPECT_EQ(x[0], 0x22);
  });
  sc_start();
}

// ---- one instant, several requesters (model/sim/instant_order.h) ----------

// Two masters of one node write at the same instant: the link serves them
// by rank (A-DMA-6: qp_mgr_m_axi before resp_hndler_m_axi), whichever the
// kernel runs first. Two nodes in one simulation, their threads made in
// opposite orders, must get the same times. Derived (model/dma/pcie.h,
// Gen3 x8: 7.877 B/ns, 126.953125 ps a byte): each write's one W beat is in
// at the 5000 ps edge; an MWr of 4 + 24 bytes takes 3555 ps, so the first
// leaves at 8555 (its B at the next edge, 10000), the second at 12110
// (15000).
TEST(Pcie, SameInstantRequestsTakeTurnsByRank) {
  sc_set_time_resolution(1, SC_PS);
  struct Node {
    ClockDomain core{"core", 200.0};
    HostMemory mem{1ull << 20};
    SimContext ctx;
    PcieLink link{gen3x8(256)};
    InstantOrder order;
    std::unique_ptr<Dma> qp_mgr, resp;
    Node() {
      DmaTiming t;
      t.pcie = link.params();
      t.link = &link;
      t.order = &order;
      qp_mgr = std::make_unique<Dma>(core, mem, ctx, "top.N.ernic.qp_mgr_m_axi", "N", "qp_mgr_m_axi", t);
      resp = std::make_unique<Dma>(core, mem, ctx, "top.N.ernic.resp_hndler_m_axi", "N", "resp_hndler_m_axi", t);
    }
  };
  Node n1, n2;
  const uint8_t v[4] = {1, 2, 3, 4};
  std::vector<std::string> served;
  auto writer = [&](Node& n, bool qp, const char* tag) {
    return [&n, &v, &served, qp, tag] {
      (qp ? n.qp_mgr : n.resp)->write(0x1000, v, 4);
      served.push_back(tag);
    };
  };
  // Node 1: resp_hndler's thread made (and run) first; node 2: qp_mgr's.
  Runner a("n1_resp", writer(n1, false, "n1_resp")), b("n1_qp", writer(n1, true, "n1_qp"));
  Runner c("n2_qp", writer(n2, true, "n2_qp")), d("n2_resp", writer(n2, false, "n2_resp"));
  sc_start();
  for (Node* n : {&n1, &n2}) {
    EXPECT_EQ(n->qp_mgr->writes_done_ps(), 10000u);
    EXPECT_EQ(n->resp->writes_done_ps(), 15000u);
    EXPECT_EQ(n->link.tlps(PcieLink::kUp), 2u);
  }
  EXPECT_EQ(served.size(), 4u);
}

// The order's own rule: tb/sim/test_settle.cpp.

// ---- posted MMIO ---------------------------------------------------------

namespace {
struct Regs : AxiLiteTarget {
  std::vector<std::pair<uint64_t, uint32_t>> writes;  // (time, data)
  uint32_t value = 0;
  uint32_t axil_read(uint32_t) override { return value; }
  void axil_write(uint32_t, uint32_t d) override {
    writes.push_back({ClockDomain::now_ps(), d});
    value = d;
  }
};
}  // namespace

// A doorbell write returns at once and reaches the slave after the posted
// write latency; a read waits for the earlier writes and pays the flight
// both ways.
TEST(Mmio, PostedWritesAndRoundTripReads) {
  ClockDomain core("core", 200.0);
  SimContext ctx;
  PcieParams p = gen3x8(256);
  p.mmio_write_latency_ns = 250;
  PcieLink link(p);
  Regs regs;
  AxiLiteTiming t;
  t.mmio_latency_ns = p.mmio_write_latency_ns;
  AxiLitePort port("axil", core, regs, ctx, "top.A.s_axi_lite", t, [&link](bool to_nic, uint64_t ready, uint32_t n, uint32_t) {
    return link.send(to_nic ? PcieLink::kDown : PcieLink::kUp, ready, n, ClockDomain::now_ps());
  });
  uint64_t t_write_ret = 0, t_read_ret = 0;
  uint32_t got = 0;
  Runner r("runner", [&] {
    port.write(0x20, 1);
    port.write(0x20, 2);
    t_write_ret = ClockDomain::now_ps();
    got = port.read(0x20);
    t_read_ret = ClockDomain::now_ps();
  });
  sc_start();
  // Derived (model/link/axil.h, A-PCIE-1, A-PCIE-3; core edges every 5000 ps):
  // the two MWr (4 + 24 bytes: 28 x 126.953125 = 3554.7 -> 3555 ps) leave
  // the host back to back at 3555 and 7110 ps, the MRd (24 bytes: 3047 ps)
  // at 10157; each reaches the NIC 250 ns after it left. The port takes
  // them one at a time from the first core edge at or after the arrival:
  // write 1 arrives at 253555, AW+W driven at the 255000 edge, taken (the
  // register written) at the next edge, 260000, B the edge after (265000);
  // write 2 (arrived long before) driven at 265000, written at 270000, B at
  // 275000; the read's AR driven at 275000, taken at 280000, R valid
  // read_wait_cycles (1) later, 285000 (the value read then), accepted at
  // 290000; its CplD (4 + 24 bytes, 3555 ps) goes up then and reaches the
  // CPU 250 ns after it left: 290000 + 3555 + 250000 = 543555.
  const uint64_t t_mwr = ref_tlp_ps(p, 4), t_mrd = ref_tlp_ps(p, 0), flight = 250000;
  EXPECT_EQ(t_mwr, 3555u);
  const uint64_t w1 = ref_edge(t_mwr + flight) + kCorePs, w2 = w1 + 2 * kCorePs;
  const uint64_t r_accepted = w2 + 2 * kCorePs + kCorePs + kCorePs;  // B of write 2, AR, R valid, R accepted
  EXPECT_LE(2 * t_mwr + t_mrd + flight, w2 + kCorePs);  // the read had arrived when the port was free (B of write 2)
  EXPECT_EQ(t_write_ret, 0u);                      // posted: the CPU goes on
  ASSERT_EQ(regs.writes.size(), 2u);
  EXPECT_EQ(regs.writes[0].first, w1);             // the flight, then the handshake edge
  EXPECT_EQ(regs.writes[1].first, w2);             // in order, 3 edges a write
  EXPECT_EQ(w1, 260000u);
  EXPECT_EQ(got, 2u);                              // the read did not pass the writes
  EXPECT_EQ(t_read_ret, r_accepted + t_mwr + flight);  // completion flies back
  EXPECT_EQ(t_read_ret, 543555u);
  EXPECT_EQ(link.tlps(PcieLink::kDown), 3u);       // 2 MWr + 1 MRd host -> device
  EXPECT_EQ(link.tlps(PcieLink::kUp), 1u);         // the CplD
}

// Host memory says which 4 KiB pages anything may have written (the
// scoreboard's shadows do not read the others: reading memory nothing wrote
// costs a page fault a page): write() and the writable data() mark their
// pages, the read-only data() and read() do not.
TEST(HostMemory, WrittenTracksThePagesWritesTouch) {
  ernic::HostMemory m(1 << 20);
  EXPECT_FALSE(m.written(0, 1 << 20));
  const uint8_t b[3] = {1, 2, 3};
  m.write(0x1FFF, b, 2);  // the last byte of page 1, the first of page 2
  EXPECT_TRUE(m.written(0x1000, 1));
  EXPECT_TRUE(m.written(0x2000, 1));
  EXPECT_FALSE(m.written(0, 0x1000));
  EXPECT_FALSE(m.written(0x3000, 0x1000));
  EXPECT_TRUE(m.written(0, 0x1000 + 0x1000));  // any page of the range
  uint8_t got[3];
  m.read(0x5000, got, 3);
  static_cast<const ernic::HostMemory&>(m).data(0x6000, 16);
  EXPECT_FALSE(m.written(0x5000, 0x2000));
  m.data(0x6000, 1)[0] = 9;
  EXPECT_TRUE(m.written(0x6FFF, 1));
  EXPECT_FALSE(m.written(0x7000, 1));
  EXPECT_FALSE(m.written(0x6000, 0));
  EXPECT_THROW(m.written((1 << 20) - 1, 2), std::out_of_range);
  m.write(0x9FFE, b, 2);  // ends on a page boundary: page 10 stays unwritten
  EXPECT_TRUE(m.written(0x9000, 0x1000));
  EXPECT_FALSE(m.written(0xA000, 1));
  // Held by a program outside (the bridge): anything may have written it.
  struct Elsewhere : ernic::RemoteMemory {
    void read(uint64_t, uint8_t*, uint64_t) override {}
    void write(uint64_t, const uint8_t*, uint64_t) override {}
    std::string holder() const override { return "a test"; }
  } r;
  m.set_remote(&r);
  EXPECT_TRUE(m.written(0x30000, 1));
}
