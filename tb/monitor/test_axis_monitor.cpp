// model/monitor/axis_monitor: every rule fires on a hand-written bad
// sequence (rule name, cycle and the values in the message) and stays
// silent on the legal one next to it; the sampling contract (held edges,
// same-edge replacement, order) and the counters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/monitor/axis_monitor.h"
#include "model/monitor/protocol.h"

using namespace ernic::monitor;

namespace {

// A beat of 64 bytes: byte k = seed + k.
struct Beat {
  std::array<uint64_t, 8> w{};
  explicit Beat(uint8_t seed) {
    for (int k = 0; k < 64; ++k) w[k / 8] |= uint64_t(uint8_t(seed + k)) << (8 * (k % 8));
  }
  void set_byte(int k, uint8_t v) {
    w[k / 8] &= ~(uint64_t(0xFF) << (8 * (k % 8)));
    w[k / 8] |= uint64_t(v) << (8 * (k % 8));
  }
};

struct Fixture {
  std::vector<ProtocolViolation> got;
  AxisMonitor mon;
  explicit Fixture(AxisRules r = AxisRules::seam(true, false))
      : mon("top.X.m_axis", "core", r, [this](const ProtocolViolation& v) { got.push_back(v); }) {}
  // valid/ready/last with a beat's data and keep.
  void at(uint64_t c, bool valid, bool ready, bool last = false, const Beat* b = nullptr, uint64_t keep = ~0ull,
          uint64_t user = 0, bool reset = false) {
    AxisSample s;
    s.valid = valid, s.ready = ready, s.last = last, s.keep = keep, s.user = user, s.reset = reset;
    s.data = b ? b->w.data() : nullptr;
    mon.sample(c, s);
  }
  void idle(uint64_t c) { at(c, false, true); }
  std::vector<std::string> rules() const {
    std::vector<std::string> r;
    for (const auto& v : got) r.push_back(v.rule);
    return r;
  }
};

using Rules = std::vector<std::string>;

TEST(AxisMonitor, LegalFramesWithStallsAreSilentAndCounted) {
  Fixture f;
  Beat b0(0), b1(64), b2(128), c0(7);
  f.idle(10);
  f.at(11, true, false, false, &b0);  // offered, not taken for 3 edges
  f.at(14, true, true, false, &b0);   // taken (same data)
  f.at(15, true, true, false, &b1);
  f.at(16, true, false, true, &b2, 0x0F);  // last beat, 4 bytes, stalled once
  f.at(17, true, true, true, &b2, 0x0F);
  f.idle(18);
  f.at(30, true, true, true, &c0, ~0ull);  // a one-beat frame of 64 bytes
  f.idle(31);
  f.mon.finish();
  EXPECT_TRUE(f.got.empty()) << f.got[0].str();
  const AxisCounters& n = f.mon.counters();
  EXPECT_EQ(n.beats, 4u);
  EXPECT_EQ(n.frames, 2u);
  EXPECT_EQ(n.stalls, 4u);  // edges 11, 12, 13 (held) and 16
  EXPECT_EQ(n.bubbles, 0u);
  EXPECT_EQ(n.violations, 0u);
  EXPECT_EQ(n.edges, 22u);  // 10..31
  EXPECT_FALSE(f.mon.in_frame());
}

TEST(AxisMonitor, ValidDroppedBeforeReady) {
  Fixture f;
  Beat b(1);
  f.idle(0);
  f.at(1, true, false, false, &b);
  f.idle(2);  // withdrawn: never taken
  f.mon.finish();
  ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TVALID_STABLE"});
  EXPECT_EQ(f.got[0].cycle, 2u);
  EXPECT_EQ(f.got[0].where, "top.X.m_axis");
  EXPECT_NE(f.got[0].what.find("TREADY was low at cycle 1"), std::string::npos) << f.got[0].what;
  // Legal: the same offer kept until taken.
  Fixture g;
  g.idle(0);
  g.at(1, true, false, true, &b);
  g.at(2, true, true, true, &b);
  g.idle(3);
  g.mon.finish();
  EXPECT_TRUE(g.got.empty()) << g.got[0].str();
}

TEST(AxisMonitor, DataChangedWhileStalled) {
  Fixture f;
  Beat b(0x10), c(0x10);
  c.set_byte(37, 0xEE);  // was 0x10 + 37 = 0x35
  f.at(5, true, false, false, &b);
  f.at(6, true, true, false, &c);
  f.mon.finish();
  ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TDATA_STABLE"});
  EXPECT_EQ(f.got[0].cycle, 6u);
  EXPECT_NE(f.got[0].what.find("TDATA byte 37 changed 0x35 -> 0xee"), std::string::npos) << f.got[0].what;
  // A byte whose TKEEP bit is clear may change (TDATA is masked by the byte qualifier).
  Fixture g;
  g.at(5, true, false, true, &b, 0xFF);
  g.at(6, true, true, true, &c, 0xFF);
  g.mon.finish();
  EXPECT_TRUE(g.got.empty()) << g.got[0].str();
}

TEST(AxisMonitor, KeepLastUserChangedWhileStalled) {
  Beat b(3);
  {
    Fixture f;
    f.at(1, true, false, true, &b, 0xFF);
    f.at(2, true, true, true, &b, 0x7F);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TKEEP_STABLE"});
    EXPECT_NE(f.got[0].what.find("0xff -> 0x7f"), std::string::npos) << f.got[0].what;
  }
  {
    Fixture f;
    f.at(1, true, false, false, &b);
    f.at(2, true, true, true, &b);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TLAST_STABLE"});
    EXPECT_NE(f.got[0].what.find("TLAST changed 0 -> 1"), std::string::npos) << f.got[0].what;
  }
  {
    Fixture f;
    f.at(1, true, false, true, &b, ~0ull, 0);
    f.at(2, true, true, true, &b, ~0ull, 1);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TUSER_STABLE"});
  }
  {  // TUSER may change between beats (after a handshake).
    Fixture f;
    f.at(1, true, true, false, &b, ~0ull, 0);
    f.at(2, true, true, true, &b, ~0ull, 1);
    f.mon.finish();
    EXPECT_TRUE(f.got.empty());
  }
}

TEST(AxisMonitor, ValidDuringAndRightAfterReset) {
  Beat b(0);
  {
    Fixture f;
    f.at(0, false, true, false, nullptr, ~0ull, 0, /*reset=*/true);
    f.at(1, true, true, true, &b, ~0ull, 0, /*reset=*/true);
    f.at(2, false, true, false, nullptr, ~0ull, 0, true);
    f.idle(3);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TVALID_RESET"});
    EXPECT_EQ(f.got[0].cycle, 1u);
    EXPECT_EQ(f.mon.counters().beats, 0u) << "no transfer while in reset";
  }
  {
    Fixture f;
    f.at(0, false, true, false, nullptr, ~0ull, 0, true);
    f.at(2, true, true, true, &b);  // the first edge with ARESETn high
    f.idle(3);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"AXI4STREAM_ERRM_TVALID_RESET"});
    EXPECT_EQ(f.got[0].cycle, 2u);
  }
  {  // Legal: TVALID from the second edge after reset.
    Fixture f;
    f.at(0, false, true, false, nullptr, ~0ull, 0, true);
    f.idle(2);
    f.at(3, true, true, true, &b);
    f.idle(4);
    f.mon.finish();
    EXPECT_TRUE(f.got.empty());
    EXPECT_EQ(f.mon.counters().frames, 1u);
  }
}

TEST(AxisMonitor, KeepRules) {
  Beat b(0);
  {  // a gap in TKEEP on the TLAST beat
    Fixture f;
    f.at(1, true, true, true, &b, 0x0B);
    f.idle(2);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"SEAM_TKEEP_CONTIGUOUS"});
    EXPECT_NE(f.got[0].what.find("TKEEP 0xb on the TLAST beat"), std::string::npos) << f.got[0].what;
  }
  {  // a short beat without TLAST
    Fixture f;
    f.at(1, true, true, false, &b, 0xFFFF);
    f.at(2, true, true, true, &b, 0x1);
    f.idle(3);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"SEAM_TKEEP_CONTIGUOUS"});
    EXPECT_EQ(f.got[0].cycle, 1u);
    EXPECT_NE(f.got[0].what.find("without TLAST"), std::string::npos);
  }
  {  // a null TLAST beat
    Fixture f;
    f.at(1, true, true, true, &b, 0);
    f.idle(2);
    f.mon.finish();
    EXPECT_EQ(f.rules(), Rules{"SEAM_TKEEP_CONTIGUOUS"});
  }
  {  // legal: 1 byte, 63 bytes, 64 bytes on TLAST beats; the rule off accepts a gap
    Fixture f;
    f.at(1, true, true, true, &b, 0x1);
    f.at(2, true, true, true, &b, ~0ull >> 1);
    f.at(3, true, true, true, &b, ~0ull);
    f.idle(4);
    f.mon.finish();
    EXPECT_TRUE(f.got.empty());
    AxisRules r = AxisRules::seam(true, false);
    r.keep_contiguous = false;
    Fixture g(r);
    g.at(1, true, true, true, &b, 0x0B);
    g.idle(2);
    g.mon.finish();
    EXPECT_TRUE(g.got.empty()) << g.got[0].str();
  }
  {  // a narrower stream: keep beyond its width is ignored, all ones = its width
    AxisRules r = AxisRules::seam(true, false);
    r.data_bytes = 8;
    Fixture f(r);
    f.at(1, true, true, false, &b, 0xFF);
    f.at(2, true, true, true, &b, 0x3F);
    f.idle(3);
    f.mon.finish();
    EXPECT_TRUE(f.got.empty());
  }
}

TEST(AxisMonitor, BubbleInsideAFrame) {
  Beat b(0);
  Fixture f(AxisRules::seam(true, /*no_bubble=*/true));
  f.at(1, true, true, false, &b);
  f.at(2, true, true, false, &b);
  f.idle(3);  // bubble of 2 edges
  f.at(5, true, true, true, &b, 0xF);
  f.idle(6);
  f.at(20, true, true, true, &b, 0xF);  // idle between frames is no bubble
  f.idle(21);
  f.mon.finish();
  ASSERT_EQ(f.rules(), Rules{"SEAM_NO_BUBBLE"});
  EXPECT_EQ(f.got[0].cycle, 3u);
  EXPECT_NE(f.got[0].what.find("after 2 beat(s) of frame 0"), std::string::npos) << f.got[0].what;
  EXPECT_EQ(f.mon.counters().bubbles, 2u);
  // A stream without the promise counts the bubble, silently; a stall is no bubble.
  Fixture g;
  g.at(1, true, true, false, &b);
  g.idle(2);
  g.at(3, true, false, true, &b, 0xF);
  g.at(4, true, true, true, &b, 0xF);
  g.idle(5);
  g.mon.finish();
  EXPECT_TRUE(g.got.empty()) << g.got[0].str();
  EXPECT_EQ(g.mon.counters().bubbles, 1u);
  EXPECT_EQ(g.mon.counters().stalls, 1u);
}

TEST(AxisMonitor, StreamWithoutReadyTakesEveryValidEdge) {
  Fixture f(AxisRules::seam(/*has_ready=*/false, false));
  Beat b(0), c(1);
  f.at(1, true, /*ready ignored*/ false, false, &b);
  f.at(2, true, false, false, &c);  // a new beat: no stability rule without TREADY
  f.idle(3);                         // a gap inside the frame is allowed on RX
  f.at(4, true, false, true, &b, 0x3);
  f.idle(5);
  f.mon.finish();
  EXPECT_TRUE(f.got.empty()) << f.got[0].str();
  EXPECT_EQ(f.mon.counters().beats, 3u);
  EXPECT_EQ(f.mon.counters().frames, 1u);
  EXPECT_EQ(f.mon.counters().stalls, 0u);
}

TEST(AxisMonitor, SamplingContract) {
  Beat b(0);
  {  // held: a handshake held for 4 edges is 4 beats
    Fixture f;
    f.at(1, true, true, false, &b);
    f.at(5, true, true, true, &b, 0x1);
    f.idle(6);
    f.mon.finish();
    EXPECT_EQ(f.mon.counters().beats, 5u);
    EXPECT_EQ(f.mon.counters().frames, 1u);
  }
  {  // the last call for an edge wins
    Fixture f;
    f.at(1, true, false, true, &b, 0x1);
    f.at(2, false, true);                // would be TVALID_STABLE ...
    f.at(2, true, true, true, &b, 0x1);  // ... replaced before it was evaluated
    f.idle(3);
    f.mon.finish();
    EXPECT_TRUE(f.got.empty()) << f.got[0].str();
  }
  {  // an earlier edge than the last: a caller bug, reported, ignored
    Fixture f;
    f.idle(10);
    f.idle(4);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"MONITOR_CYCLE_ORDER"});
    EXPECT_EQ(f.got[0].cycle, 4u);
  }
  {  // a violating state held for many edges counts once; reports stop after kMaxReports
    Fixture f;
    for (uint64_t i = 0; i < 40; ++i) {
      f.at(3 * i + 1, true, false, false, &b);
      f.idle(3 * i + 2);
    }
    f.mon.finish();
    EXPECT_EQ(f.mon.counters().violations, 40u);
    ASSERT_EQ(f.got.size(), AxisMonitor::kMaxReports + 1);
    EXPECT_EQ(f.got.back().rule, "MONITOR_SUPPRESSED");
  }
}

// A descriptor bus (rtl/SEAM.md s_desc: 768 bits with ready; m_desc: 1024
// bits, none): no TKEEP / TLAST, every transfer a frame, every byte checked.
TEST(AxisMonitor, DescriptorBuses) {
  std::vector<ProtocolViolation> got;
  AxisMonitor s_desc("top.A.datapath.s_desc", "core", AxisRules::descriptor(768, true),
                     [&](const ProtocolViolation& v) { got.push_back(v); });
  std::array<uint64_t, 16> d{}, e{};
  for (int i = 0; i < 12; ++i) d[i] = e[i] = 0x1111111111111111ull * uint64_t(i + 1);
  e[11] ^= uint64_t(0x80) << 48;  // byte 94 (field ext) changed
  AxisSample a;
  a.valid = true, a.ready = false, a.data = d.data(), a.keep = 0, a.last = false;  // keep/last ignored
  s_desc.sample(1, a);
  a.ready = true;
  s_desc.sample(2, a);  // held, then taken: legal
  a.ready = false;
  s_desc.sample(3, a);
  a.data = e.data(), a.ready = true;
  s_desc.sample(4, a);  // changed while stalled
  s_desc.sample(5, AxisSample{});
  s_desc.finish();
  ASSERT_EQ(got.size(), 1u) << got[0].str();
  EXPECT_EQ(got[0].rule, "AXI4STREAM_ERRM_TDATA_STABLE");
  EXPECT_NE(got[0].what.find("TDATA byte 94 changed 0xcc -> 0x4c"), std::string::npos) << got[0].what;
  EXPECT_EQ(s_desc.counters().beats, 2u);
  EXPECT_EQ(s_desc.counters().frames, 2u) << "every descriptor is a frame";
  EXPECT_EQ(s_desc.counters().stalls, 2u);

  AxisMonitor m_desc("top.A.datapath.m_desc", "core", AxisRules::descriptor(1024, false));
  AxisSample v;
  v.valid = true, v.data = d.data();
  m_desc.sample(10, v);
  m_desc.sample(11, AxisSample{});
  m_desc.sample(20, v);
  m_desc.sample(21, AxisSample{});
  m_desc.finish();
  EXPECT_EQ(m_desc.counters().frames, 2u);
  EXPECT_EQ(m_desc.counters().violations, 0u);
}

TEST(AxisMonitor, BeatSlicing) {
  std::vector<uint8_t> frame(130);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = uint8_t(i);
  EXPECT_EQ(axis_beats(frame.size()), 3u);
  const AxisBeat b0 = axis_beat(frame.data(), frame.size(), 0);
  EXPECT_EQ(b0.data[0], 0x0706050403020100ull);
  EXPECT_EQ(b0.keep, ~0ull);
  EXPECT_FALSE(b0.last);
  const AxisBeat b2 = axis_beat(frame.data(), frame.size(), 2);
  EXPECT_EQ(b2.data[0], 0x8180ull);
  EXPECT_EQ(b2.data[1], 0u);
  EXPECT_EQ(b2.keep, 0x3u);
  EXPECT_TRUE(b2.last);
}

// Through the registry: the sink gets the violation with its time (cycle x
// the clock's period) and a message naming the rule, the clock and cycle.
TEST(ProtocolMonitors, ViolationsReachTheSinkWithTime) {
  ProtocolMonitors p;
  std::vector<std::pair<uint64_t, ProtocolViolation>> got;
  p.sink = [&](uint64_t t, const ProtocolViolation& v) { got.push_back({t, v}); };
  AxisMonitor& m = p.axis("top.A.dp.m_axis", "cmac", 3103, AxisRules::seam(true, true));
  AxisMonitor& m2 = p.axis("top.A.dp.m_axis", "cmac", 3103, AxisRules::seam(true, true));
  EXPECT_EQ(m2.name(), "top.A.dp.m_axis#2") << "names are made unique";
  Beat b(0);
  AxisSample s;
  s.valid = true, s.ready = false, s.data = b.w.data();
  m.sample(100, s);
  m.sample(101, AxisSample{});
  p.finish();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 101u * 3103u);
  EXPECT_EQ(got[0].second.where, "top.A.dp.m_axis");
  EXPECT_EQ(got[0].second.str().rfind("AXI4STREAM_ERRM_TVALID_STABLE at cmac cycle 101: ", 0), 0u) << got[0].second.str();
  EXPECT_EQ(p.violations(), 1u);
}

}  // namespace
