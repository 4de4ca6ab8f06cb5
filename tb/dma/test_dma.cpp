// tb/dma: the AXI4 masters (model/dma/dma.h) and the PCIe link model
// (model/dma/pcie.h). Every figure is simulated time: a large DMA is timed
// through the model and its payload rate compared with the header's formula
//   rate(P) = lanes x GT/s x 128/130 / 8 x P / (P + 24)   bytes per ns.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/dma/dma.h"
#include "model/dma/pcie.h"
#include "model/link/axil.h"

using namespace ernic;
using namespace sc_core;

namespace {

// Runs `body` in one SC_THREAD and the simulation until it is done.
struct Runner : sc_module {
  SC_HAS_PROCESS(Runner);
  std::function<void()> body;
  Runner(sc_module_name n, std::function<void()> b) : sc_module(n), body(std::move(b)) { SC_THREAD(run); }
  void run() { body(); }
};

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

// ---- timed through the model -------------------------------------------

// 1 MiB read at Gen3 x8, MPS 128 / 256 / 512: the payload rate is within
// 2% of the formula (the read latency is paid once, 0.3% of the run).
TEST(Dma, ReadThroughputMatchesFormula) {
  const std::vector<uint32_t> mpss = {128, 256, 512};
  std::vector<Job> jobs;
  for (uint32_t mps : mpss) jobs.push_back({gen3x8(mps), false, kMiB});
  const std::vector<uint64_t> t = time_dmas(jobs);
  for (size_t i = 0; i < mpss.size(); ++i) {
    const double got = rate_bytes_per_ns(kMiB, t[i]), want = jobs[i].p.read_rate();
    std::printf("read  Gen3 x8 MPS %3u: %.4f GB/s measured, %.4f GB/s formula (%+.3f%%)\n", mpss[i], got, want,
                100.0 * (got / want - 1));
    EXPECT_NEAR(got / want, 1.0, 0.02) << "MPS " << mpss[i];
    EXPECT_LE(got, want * 1.0001) << "faster than the link";
  }
}

// The same for a 1 MiB write (MWr of MPS bytes; the 512-bit bus at 200 MHz
// moves 12.8 GB/s, so the link limits).
TEST(Dma, WriteThroughputMatchesFormula) {
  const std::vector<uint32_t> mpss = {128, 256, 512};
  std::vector<Job> jobs;
  for (uint32_t mps : mpss) jobs.push_back({gen3x8(mps), true, kMiB});
  const std::vector<uint64_t> t = time_dmas(jobs);
  for (size_t i = 0; i < mpss.size(); ++i) {
    const double got = rate_bytes_per_ns(kMiB, t[i]), want = jobs[i].p.write_rate();
    std::printf("write Gen3 x8 MPS %3u: %.4f GB/s measured, %.4f GB/s formula (%+.3f%%)\n", mpss[i], got, want,
                100.0 * (got / want - 1));
    EXPECT_NEAR(got / want, 1.0, 0.02) << "MPS " << mpss[i];
    EXPECT_LE(got, want * 1.0001) << "faster than the link";
  }
}

// MPS 128 vs 512 at Gen3 x8: the measured ratio matches the formula's
// (512/536) / (128/152) = 1.1344 within 2%, for reads and for writes.
TEST(Dma, Mps128Vs512RatioMatchesFormula) {
  const std::vector<uint64_t> t = time_dmas({{gen3x8(128), false, kMiB}, {gen3x8(512), false, kMiB},
                                             {gen3x8(128), true, kMiB}, {gen3x8(512), true, kMiB}});
  const double formula = gen3x8(512).payload_rate(512) / gen3x8(128).payload_rate(128);
  const double rd = double(t[0]) / double(t[1]), wr = double(t[2]) / double(t[3]);
  std::printf("MPS 512 / MPS 128 rate: read %.4f, write %.4f measured, %.4f formula\n", rd, wr, formula);
  EXPECT_NEAR(rd / formula, 1.0, 0.02);
  EXPECT_NEAR(wr / formula, 1.0, 0.02);
}

// One burst in flight: every 4 KiB burst pays the read latency; with eight
// in flight it is paid about once.
TEST(Dma, OutstandingLimitBoundsOverlap) {
  const PcieParams p = gen3x8(256);
  const std::vector<uint64_t> t = time_dmas({{p, false, 64 * 1024, 1}, {p, false, 64 * 1024, 8}});
  const uint64_t one = t[0], eight = t[1];
  EXPECT_GE(one, 16 * 500000ull);   // 16 bursts, each after the previous one's data
  EXPECT_LT(eight, 2 * 500000ull + uint64_t(64 * 1024 / p.read_rate() * 1000 * 1.02));
  EXPECT_GT(one, eight + 14 * 500000ull);
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
  AxiLitePort port("axil", core, regs, ctx, "top.A.s_axi_lite", t, [&link](bool to_nic, uint64_t ready, uint32_t n) {
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
  EXPECT_EQ(t_write_ret, 0u);                      // posted: the CPU goes on
  ASSERT_EQ(regs.writes.size(), 2u);
  EXPECT_GE(regs.writes[0].first, 250000u);        // the flight
  EXPECT_LT(regs.writes[0].first, 270000u);
  EXPECT_GT(regs.writes[1].first, regs.writes[0].first);  // in order
  EXPECT_EQ(got, 2u);                              // the read did not pass the writes
  EXPECT_GE(t_read_ret, regs.writes[1].first + 250000u);  // completion flies back
  EXPECT_EQ(link.tlps(PcieLink::kDown), 3u);       // 2 MWr + 1 MRd host -> device
  EXPECT_EQ(link.tlps(PcieLink::kUp), 1u);         // the CplD
}
