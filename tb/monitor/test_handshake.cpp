// model/monitor/handshake and the registry's randomiser lookup: disabled
// streams never stall and never draw; draws are reproducible per (seed,
// signal name), independent between signals, and stall at the configured
// rate; hold() is the run of stall() results before the next go.
#include <gtest/gtest.h>

#include <vector>

#include "model/monitor/handshake.h"
#include "model/monitor/protocol.h"

using namespace ernic::monitor;
using Kind = HandshakeRandomizer::Kind;

namespace {

std::vector<bool> draws(HandshakeRandomizer& r, int id, int n) {
  std::vector<bool> v;
  for (int i = 0; i < n; ++i) v.push_back(r.stall(id));
  return v;
}

TEST(Handshake, DisabledNeverStalls) {
  HandshakeRandomizer r;
  const int id = r.stream("top.A.x.tready", Kind::ready);
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(r.stall(id));
  EXPECT_EQ(r.hold(id), 0u);
  EXPECT_EQ(r.streams()[0].decisions, 0u);
  HandshakeStall none;
  EXPECT_FALSE(bool(none));
  EXPECT_FALSE(none());
  EXPECT_EQ(none.hold(), 0u);
}

TEST(Handshake, ReproducibleAndIndependentPerSignal) {
  const HandshakeRandomConfig c{7, 70, 80};
  HandshakeRandomizer a(c), b(c), d(HandshakeRandomConfig{8, 70, 80});
  const int a1 = a.stream("top.A.cmac.tx_axis.tready", Kind::ready);
  const int a2 = a.stream("top.A.s_axi_lite.awready", Kind::ready);
  // b registers the same signal second, after another one, and draws it interleaved.
  const int b0 = b.stream("top.A.s_axi_lite.awready", Kind::ready);
  const int b1 = b.stream("top.A.cmac.tx_axis.tready", Kind::ready);
  const int d1 = d.stream("top.A.cmac.tx_axis.tready", Kind::ready);
  const std::vector<bool> x = draws(a, a1, 500);
  std::vector<bool> y;
  for (int i = 0; i < 500; ++i) {
    b.stall(b0);
    y.push_back(b.stall(b1));
  }
  EXPECT_EQ(x, y) << "a signal's draws depend on the seed and its name only";
  EXPECT_NE(x, draws(a, a2, 500)) << "another signal draws another sequence";
  EXPECT_NE(x, draws(d, d1, 500)) << "another seed draws another sequence";
}

TEST(Handshake, StallRateFollowsThePercentages) {
  HandshakeRandomizer r(HandshakeRandomConfig{3, 70, 80});
  const int rd = r.stream("ready", Kind::ready), vd = r.stream("valid", Kind::valid);
  const int n = 100000;
  int sr = 0, sv = 0;
  for (int i = 0; i < n; ++i) sr += r.stall(rd), sv += r.stall(vd);
  EXPECT_NEAR(double(sr) / n, 0.30, 0.01);
  EXPECT_NEAR(double(sv) / n, 0.20, 0.01);
  EXPECT_EQ(r.streams()[size_t(rd)].stalls, uint64_t(sr));
  EXPECT_EQ(r.total_stalls(), uint64_t(sr + sv));
  HandshakeRandomizer full(HandshakeRandomConfig{3, 100, 100});
  const int f = full.stream("ready", Kind::ready);
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(full.stall(f));
}

TEST(Handshake, HoldIsTheRunOfStallsBeforeTheNextGo) {
  const HandshakeRandomConfig c{11, 30, 30};
  HandshakeRandomizer a(c), b(c);
  const int ia = a.stream("s", Kind::ready), ib = b.stream("s", Kind::ready);
  uint64_t total = 0;
  for (int k = 0; k < 200; ++k) {
    uint32_t run = 0;
    while (b.stall(ib)) ++run;
    const uint32_t h = a.hold(ia);
    ASSERT_EQ(h, run) << "transfer " << k;
    total += h;
  }
  EXPECT_GT(total, 200u) << "at 30% READY, more than one stall per transfer on average";
}

TEST(Handshake, RegistryPicksTheLongestScope) {
  ProtocolMonitors p;
  p.set_random("top.A", HandshakeRandomConfig{1, 50, 50});
  p.set_random("top.A.cmac", HandshakeRandomConfig{1, 50, 50}, /*enabled=*/false);
  p.set_random("top.B", HandshakeRandomConfig{2, 60, 60});
  HandshakeStall a = p.stall("top.A.s_axi_lite.awready", Kind::ready);
  HandshakeStall ac = p.stall("top.A.cmac.tx_axis.tready", Kind::ready);
  HandshakeStall ab = p.stall("top.AB.cmac.tx_axis.tready", Kind::ready);
  HandshakeStall b = p.stall("top.B.cmac.tx_axis.tready", Kind::ready);
  EXPECT_TRUE(bool(a));
  EXPECT_FALSE(bool(ac)) << "a narrower scope switched off";
  EXPECT_FALSE(bool(ab)) << "top.A does not cover top.AB";
  EXPECT_TRUE(bool(b));
  ASSERT_EQ(p.randomizers().size(), 3u);
  EXPECT_EQ(p.randomizers()[0].second->streams().size(), 1u);
  EXPECT_EQ(p.randomizers()[2].second->streams()[0].name, "top.B.cmac.tx_axis.tready");
  int stalls = 0;
  for (int i = 0; i < 1000; ++i) stalls += a();
  EXPECT_GT(stalls, 400);
  EXPECT_LT(stalls, 600);
}

}  // namespace
