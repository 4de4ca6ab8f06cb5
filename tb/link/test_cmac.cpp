// model/link/cmac: two MACs joined by two wires (100 Gb/s, 100 ns), no
// NIC. PFC generation (XOFF, refresh before expiry, XON), honouring (a
// held class waits at a frame boundary, for the frame's time or until an
// XON), and TX underflow (a bubble inside a frame: run error, the
// receiver discards the frame).
#include <gtest/gtest.h>

#include <systemc>

#include "model/link/cmac.h"

using namespace ernic;
using sc_core::SC_PS;
using sc_core::sc_time;

namespace {

constexpr uint64_t kUs = 1000000;  // ps

struct Bench : sc_core::sc_module {
  SC_HAS_PROCESS(Bench);
  ClockDomain core{"core", 200.0}, cmac_clk{"cmac", 322.265625};
  SimContext ctx;
  Cmac a, b;
  Wire ab, ba;
  struct Rx { uint64_t t_ps; FrameBytes f; };
  std::vector<Rx> a_rx, b_rx, a_tx;        // a_rx/b_rx: taps; b_delivered: to the NIC
  std::vector<FrameBytes> b_delivered;
  std::function<void(Bench&)> body;
  bool done = false;
  explicit Bench(std::function<void(Bench&)> f)
      : sc_module("bench"),
        a("a", cmac_clk, core, ctx, "top.A.cmac", LinkParams{}),
        b("b", cmac_clk, core, ctx, "top.B.cmac", LinkParams{}),
        ab("ab", 100000, 100.0, 1), ba("ba", 100000, 100.0, 2), body(std::move(f)) {
    a.node = "A", b.node = "B";
    a.mac[5] = 0x0a, b.mac[5] = 0x0b;
    a.wire_out = &ab, ab.set_dst(&b);
    b.wire_out = &ba, ba.set_dst(&a);
    a.on_rx = [this](const FrameBytes& f, uint64_t t) { a_rx.push_back({t, f}); };
    b.on_rx = [this](const FrameBytes& f, uint64_t t) { b_rx.push_back({t, f}); };
    a.on_tx = [this](const FrameBytes& f, uint64_t t) { a_tx.push_back({t, f}); };
    b.rx_sink = [this](FrameBytes f) { b_delivered.push_back(std::move(f)); };
    // Every frame of A is in the paused class of priority 3.
    a.tx_hold = [](const FrameBytes&, uint16_t stat) { return (stat >> 3) & 1; };
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    done = true;
  }
  void at(uint64_t t_ps) {
    const uint64_t now = ClockDomain::now_ps();
    if (t_ps > now) sc_core::wait(sc_time(double(t_ps - now), SC_PS));
  }
  static FrameBytes data(size_t n) {
    FrameBytes f(n, 0x5A);
    f[12] = 0x88, f[13] = 0xB5;  // a local experimental EtherType
    return f;
  }
  std::vector<std::pair<uint64_t, uint16_t>> pauses_at_a() const {  // (time, time[3])
    std::vector<std::pair<uint64_t, uint16_t>> v;
    for (const auto& r : a_rx)
      if (auto p = pfc::parse(r.f.data(), r.f.size())) v.push_back({r.t_ps, p->time[3]});
    return v;
  }
};

void run_bench(std::function<void(Bench&)> body, uint64_t until_ps) {
  sc_core::sc_set_time_resolution(1, SC_PS);
  Bench b(std::move(body));
  sc_core::sc_start(sc_time(double(until_ps), SC_PS));
  ASSERT_TRUE(b.done);
}

}  // namespace

// ctl_tx_pause_req held for 380 us: XOFF at once, refreshed every 0x8000
// quanta (167.77 us) so that the 0xFFFF-quanta pause (335.5 us) never runs
// out, then XON; A's frame waits all that time and leaves right after.
TEST(Cmac, XoffIsRefreshedBeforeExpiryUntilXon) {
  std::vector<std::pair<uint64_t, uint16_t>> pauses;
  std::vector<Bench::Rx> sent;
  run_bench([&](Bench& t) {
    t.at(1 * kUs);
    t.b.set_tx_pause_req(1u << 3);
    t.at(2 * kUs);
    EXPECT_EQ(t.a.stat_rx_pause_req(), 0x008);
    t.a.tx_push(Bench::data(1000));
    t.at(381 * kUs);
    EXPECT_TRUE(t.a_tx.empty()) << "A sent while paused";
    t.b.set_tx_pause_req(0);
    t.at(383 * kUs);
    EXPECT_EQ(t.a.stat_rx_pause_req(), 0);
    pauses = t.pauses_at_a();
    sent = t.a_tx;
    EXPECT_EQ(t.b.pfc_stats().xoff_sent, 3u);
    EXPECT_EQ(t.b.pfc_stats().xon_sent, 1u);
    EXPECT_EQ(t.a.pfc_stats().held, 1u);
  }, 400 * kUs);
  ASSERT_EQ(pauses.size(), 4u);
  const uint64_t refresh_ps = 0x8000ull * 5120;  // 512 bit times = 5.12 ns at 100 Gb/s
  EXPECT_EQ(pauses[0].second, 0xFFFF);
  EXPECT_EQ(pauses[1].second, 0xFFFF);
  EXPECT_EQ(pauses[2].second, 0xFFFF);
  EXPECT_EQ(pauses[3].second, 0);
  EXPECT_NEAR(double(pauses[1].first - pauses[0].first), double(refresh_ps), 10000.0);
  EXPECT_NEAR(double(pauses[2].first - pauses[1].first), double(refresh_ps), 10000.0);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_GT(sent[0].t_ps, pauses[3].first);
  EXPECT_LT(sent[0].t_ps, pauses[3].first + 100000) << "released within 100 ns of the XON";
}

// A pause that is not refreshed runs out after time x 512 bit times; the
// frame in progress is not cut, the next one waits for the expiry.
TEST(Cmac, PauseRunsOutAfterItsQuanta) {
  uint64_t t_pause = 0;
  std::vector<Bench::Rx> sent;
  run_bench([&](Bench& t) {
    t.at(1 * kUs);
    pfc::PauseFrame p;
    p.pfc = true;
    p.class_enable = 0x08;
    p.time[3] = 1000;  // 5.12 us
    t.a.rx_arrive(pfc::build(t.b.mac, p), ClockDomain::now_ps());  // as if its last byte arrived now
    t.at(1 * kUs + 300000);  // the pause is in force at A
    t_pause = t.pauses_at_a().at(0).first;
    t.a.tx_push(Bench::data(1000));
    t.a.tx_push(Bench::data(1000));
    t.at(20 * kUs);
    sent = t.a_tx;
    EXPECT_EQ(t.a.pfc_stats().held, 1u);
  }, 30 * kUs);
  ASSERT_EQ(sent.size(), 2u);
  const uint64_t end = t_pause + 1000 * 5120;
  EXPECT_GT(sent[0].t_ps, end);
  EXPECT_LT(sent[0].t_ps, end + 100000);
  EXPECT_GT(sent[1].t_ps, sent[0].t_ps);
}

// A bubble inside a frame: a run error naming node, frame and beat; the
// frame reaches B's MAC with a bad FCS and goes no further; the next frame
// is untouched.
TEST(Cmac, TxUnderflowIsAnErrorAndTheFrameIsDiscarded) {
  run_bench([&](Bench& t) {
    t.a.tx_hold = nullptr;
    t.a.inject_tx_bubble(1, 3, 2);
    t.a.tx_push(Bench::data(100));   // frame #0
    t.a.tx_push(Bench::data(60));    // #1: one beat, no bubble possible
    t.a.tx_push(Bench::data(1000));  // #2: 16 beats, the bubble after beat 3
    t.a.tx_push(Bench::data(1000));  // #3
    t.at(5 * kUs);
    // The CMAC's error, then its TX stream monitor's (a bubble on a stream that promises none).
    ASSERT_EQ(t.ctx.errors.size(), 2u);
    const ModelError& e = t.ctx.errors[0];
    EXPECT_EQ(t.ctx.errors[1].where, "top.A.cmac.tx_axis");
    EXPECT_EQ(t.ctx.errors[1].time_ps, e.time_ps);
    EXPECT_EQ(t.ctx.errors[1].what.rfind("SEAM_NO_BUBBLE at cmac cycle", 0), 0u) << t.ctx.errors[1].what;
    EXPECT_EQ(e.where, "top.A.cmac");
    EXPECT_NE(e.what.find("TX underflow on node A"), std::string::npos) << e.what;
    EXPECT_NE(e.what.find("low for 2 CMAC cycles after beat 3 of 16 of TX frame #2 (1000 bytes"), std::string::npos)
        << e.what;
    EXPECT_EQ(t.a.pfc_stats().tx_underflows, 1u);
    EXPECT_EQ(t.b.pfc_stats().rx_bad_fcs, 1u);
    EXPECT_EQ(t.a_tx.size(), 4u);
    EXPECT_EQ(t.b_rx.size(), 3u);
    ASSERT_EQ(t.b_delivered.size(), 3u);
    EXPECT_EQ(t.b_delivered[0].size(), 100u);
    EXPECT_EQ(t.b_delivered[1].size(), 60u);
    EXPECT_EQ(t.b_delivered[2].size(), 1000u);
    // The error's time: 4 beats (0..3) after the frame's start.
    const uint64_t start = t.a_tx[2].t_ps - 8 * 80;
    EXPECT_EQ(e.time_ps, start + 4 * 3103);
  }, 10 * kUs);
}
