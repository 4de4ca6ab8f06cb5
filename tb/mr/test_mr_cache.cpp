// tb/mr: the MR lookup block (model/mr/mr_cache).
//  - MrCam: hits and misses, LRU replacement, the free-slot-first rule,
//    invalidation, the compulsory / capacity / invalidation classes, and
//    the strict round robin that makes an LRU CAM smaller than the working
//    set miss every time.
//  - MrLookup (timed, SystemC): table mode costs its fixed cycles and reads
//    the register array; cam mode costs the compare on a hit and the DMA
//    read of the host-table context on a miss, and a register write
//    invalidates.
#include <gtest/gtest.h>

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include "model/mr/mr_cache.h"

namespace {

using ernic::MrCam;
using ernic::MrContext;

MrContext ctx_of(uint32_t i) {
  MrContext c;
  for (uint32_t k = 0; k < MrContext::kWords; ++k) c.w[k] = i * 0x100 + k;
  return c;
}

// A lookup that misses installs the context, as the timed block does.
bool touch(MrCam& cam, uint32_t i) {
  if (cam.lookup(i)) return true;
  cam.insert(i, ctx_of(i));
  return false;
}

TEST(MrCam, MissThenHitReturnsTheInstalledContext) {
  MrCam cam(4);
  EXPECT_EQ(cam.lookup(7), nullptr);
  EXPECT_FALSE(cam.insert(7, ctx_of(7)).has_value());
  const MrContext* c = cam.lookup(7);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(*c, ctx_of(7));
  EXPECT_EQ(cam.counters().lookups, 2u);
  EXPECT_EQ(cam.counters().hits, 1u);
  EXPECT_EQ(cam.counters().misses, 1u);
  EXPECT_EQ(cam.counters().compulsory_misses, 1u);
  EXPECT_EQ(cam.size(), 1u);
}

TEST(MrCam, EvictsTheLeastRecentlyUsed) {
  MrCam cam(3);
  for (uint32_t i : {1u, 2u, 3u}) touch(cam, i);
  EXPECT_EQ(cam.lru_order(), (std::vector<uint32_t>{3, 2, 1}));
  EXPECT_TRUE(touch(cam, 1));  // 1 becomes the most recent; 2 is now the LRU
  EXPECT_EQ(cam.lru_order(), (std::vector<uint32_t>{1, 3, 2}));
  EXPECT_EQ(cam.lookup(4), nullptr);
  const auto ev = cam.insert(4, ctx_of(4));
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(*ev, 2u);
  EXPECT_FALSE(cam.contains(2));
  EXPECT_TRUE(cam.contains(1) && cam.contains(3) && cam.contains(4));
  EXPECT_EQ(cam.counters().evictions, 1u);
  // 2 comes back: a capacity miss, and 3 (now the LRU) goes.
  EXPECT_FALSE(touch(cam, 2));
  EXPECT_EQ(cam.counters().capacity_misses, 1u);
  EXPECT_FALSE(cam.contains(3));
  EXPECT_EQ(cam.lru_order(), (std::vector<uint32_t>{2, 4, 1}));
}

TEST(MrCam, ContainsDoesNotTouchTheLruOrder) {
  MrCam cam(2);
  touch(cam, 1);
  touch(cam, 2);
  EXPECT_TRUE(cam.contains(1));
  cam.insert(3, ctx_of(3));  // 1 is still the LRU
  EXPECT_FALSE(cam.contains(1));
}

TEST(MrCam, InvalidationFreesTheSlotAndClassifiesTheNextMiss) {
  MrCam cam(2);
  touch(cam, 1);
  touch(cam, 2);
  EXPECT_TRUE(cam.invalidate(1));
  EXPECT_FALSE(cam.invalidate(1));  // not held any more
  EXPECT_FALSE(cam.invalidate(9));  // never held
  EXPECT_EQ(cam.counters().invalidations, 1u);
  EXPECT_EQ(cam.size(), 1u);
  // The freed slot is taken before anything is evicted.
  EXPECT_FALSE(touch(cam, 5));
  EXPECT_EQ(cam.counters().evictions, 0u);
  EXPECT_TRUE(cam.contains(2) && cam.contains(5));
  EXPECT_FALSE(touch(cam, 1));
  EXPECT_EQ(cam.counters().invalidation_misses, 1u);
  EXPECT_EQ(cam.counters().compulsory_misses, 3u);  // 1, 2, 5
}

TEST(MrCam, InsertOfAHeldIndexUpdatesInPlace) {
  MrCam cam(2);
  touch(cam, 1);
  MrContext c = ctx_of(1);
  c.w[7] = 0xF;
  EXPECT_FALSE(cam.insert(1, c).has_value());
  EXPECT_EQ(cam.size(), 1u);
  EXPECT_EQ(cam.lookup(1)->w[7], 0xFu);
}

// Strict round robin over K MRs: with N >= K entries only the first use of
// each MR misses; with N < K an LRU CAM misses every time (each MR comes
// back right after it was evicted).
TEST(MrCam, RoundRobinHitsAllWhenItFitsAndNoneWhenItDoesNot) {
  const uint32_t K = 8, rounds = 10;
  for (uint32_t N : {1u, 4u, 7u, 8u, 9u, 16u}) {
    MrCam cam(N);
    for (uint32_t r = 0; r < rounds; ++r)
      for (uint32_t i = 0; i < K; ++i) touch(cam, i);
    const auto& c = cam.counters();
    EXPECT_EQ(c.lookups, K * rounds) << "N=" << N;
    EXPECT_EQ(c.compulsory_misses, K) << "N=" << N;
    if (N >= K) {
      EXPECT_EQ(c.hits, K * (rounds - 1)) << "N=" << N;
      EXPECT_EQ(c.capacity_misses, 0u) << "N=" << N;
    } else {
      EXPECT_EQ(c.hits, 0u) << "N=" << N;
      EXPECT_EQ(c.capacity_misses, K * (rounds - 1)) << "N=" << N;
      EXPECT_EQ(c.evictions, K * rounds - N) << "N=" << N;
    }
  }
}

TEST(MrContext, BytesAreLittleEndianWordsInRegisterOrder) {
  MrContext c = ctx_of(3);
  c.w[1] = 0x11223344;
  uint8_t b[MrContext::kBytes];
  c.to_bytes(b);
  EXPECT_EQ(b[4], 0x44);
  EXPECT_EQ(b[7], 0x11);
  EXPECT_EQ(MrContext::from_bytes(b), c);
}

// ------------------------------------------------------------- timed, SystemC

struct Rig {
  ernic::ClockDomain core{"core", 200.0};  // 5000 ps
  ernic::HostMemory mem{1 << 20};
  ernic::SimContext ctx;
  ernic::DmaTiming dma;
  std::vector<MrContext> regs = std::vector<MrContext>(16);
  std::unique_ptr<ernic::MrLookup> ml;
  explicit Rig(ernic::MrLookupConfig cfg) {
    dma.pcie.read_latency_ns = 500;  // 100 core cycles at 200 MHz
    for (uint32_t i = 0; i < regs.size(); ++i) {
      regs[i] = ctx_of(i);
      MrContext h = ctx_of(i);
      h.w[0] |= 0x800000;  // the host-table copy differs, to tell which one was read
      uint8_t b[MrContext::kBytes];
      h.to_bytes(b);
      mem.write(cfg.table_base + 32ull * i, b, sizeof b);
    }
    ml = std::make_unique<ernic::MrLookup>(core, mem, ctx, "top.A.ernic", "A", cfg, dma,
                                           [this](uint32_t i) { return regs[i]; });
  }
  // Runs one lookup in a thread; its duration in core cycles.
  uint64_t timed_lookup(uint32_t idx, MrContext& out) {
    uint64_t cycles = 0;
    sc_core::sc_spawn([&] {
      const uint64_t t0 = ernic::ClockDomain::now_ps();
      EXPECT_TRUE(ml->lookup(idx, out));
      cycles = (ernic::ClockDomain::now_ps() - t0) / core.period_ps();
    });
    sc_core::sc_start();
    return cycles;
  }
};

TEST(MrLookupTimed, TableModeReadsTheRegistersInItsFixedCycles) {
  ernic::MrLookupConfig cfg;  // table, 2 cycles
  Rig r(cfg);
  MrContext out;
  EXPECT_EQ(r.timed_lookup(5, out), cfg.mr_lookup_cycles);
  EXPECT_EQ(out, ctx_of(5));
  EXPECT_EQ(r.timed_lookup(5, out), cfg.mr_lookup_cycles);  // never misses
  EXPECT_EQ(r.ml->lookups(), 2u);
  EXPECT_EQ(r.ml->cam_counters().lookups, 0u);
  EXPECT_EQ(r.ml->dma_bytes_read(), 0u);
}

TEST(MrLookupTimed, CamMissFetchesFromHostMemoryThroughTheDma) {
  ernic::MrLookupConfig cfg;
  cfg.mode = ernic::MrLookupMode::cam;
  cfg.entries = 2;
  Rig r(cfg);
  MrContext out;
  // A miss: the CAM lookup, the PCIe read round trip (500 ns = 100 cycles,
  // plus the request and the 32-byte completion on the link and one beat:
  // a few cycles, model/dma/pcie.h), then the fill.
  const uint64_t miss_min = cfg.cam_lookup_cycles + 100 + 1 + cfg.cam_fill_cycles;
  const uint64_t got = r.timed_lookup(3, out);
  EXPECT_GE(got, miss_min);
  EXPECT_LE(got, miss_min + 4);
  EXPECT_EQ(out.w[0], ctx_of(3).w[0] | 0x800000) << "the host-table copy, not the register";
  EXPECT_EQ(r.ml->dma_bytes_read(), 32u);
  EXPECT_EQ(r.timed_lookup(3, out), cfg.cam_lookup_cycles);  // hit
  EXPECT_EQ(out.w[0], ctx_of(3).w[0] | 0x800000);
  // A register write to entry 3 invalidates it: the next lookup misses.
  r.ml->on_register_write(3);
  EXPECT_EQ(r.timed_lookup(3, out), got) << "the same miss again";
  const auto& c = r.ml->cam_counters();
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.misses, 2u);
  EXPECT_EQ(c.invalidations, 1u);
  EXPECT_EQ(c.invalidation_misses, 1u);
  // A write to an entry the CAM does not hold changes nothing.
  r.ml->on_register_write(9);
  EXPECT_EQ(c.invalidations, 1u);
  EXPECT_EQ(r.timed_lookup(3, out), cfg.cam_lookup_cycles);
}

TEST(MrLookupTimed, InvalidationDuringAFetchKeepsTheContextOutOfTheCam) {
  ernic::MrLookupConfig cfg;
  cfg.mode = ernic::MrLookupMode::cam;
  Rig r(cfg);
  MrContext out;
  sc_core::sc_spawn([&] { EXPECT_TRUE(r.ml->lookup(4, out)); });
  sc_core::sc_spawn([&] {
    r.core.wait_cycles(50);  // inside the 100-cycle read
    r.ml->on_register_write(4);
  });
  sc_core::sc_start();
  EXPECT_FALSE(r.ml->cam().contains(4));
  EXPECT_EQ(r.ml->cam_counters().misses, 1u);
}

}  // namespace
