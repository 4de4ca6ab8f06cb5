// model/link/switch: the switch with a wire to a recording sink on each
// port, no NIC (SystemC: one process per test). Frames are handed to a
// port's ingress at chosen times, as its node's wire would deliver them.
// Forwarding by destination MAC (unknown: drop or flood; MAC control
// frames end at the port), serialisation timing (each frame leaves at the
// ps the line rate gives), buffer overflow (a frame longer than the buffer
// named once in the events), ECN marking at the threshold (the IPv4 header
// checksum checked by RFC 1071 here, the ICRC still valid), PFC XOFF at the
// ingress threshold and XON at or below the other, the time a node's pause
// holds a port (a hold still running counted), and RED's marks as a
// function of the seed.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <random>
#include <systemc>
#include <vector>

#include "model/link/pfc.h"
#include "model/link/switch.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

using namespace ernic;
using sc_core::SC_PS;
using sc_core::sc_time;

namespace {

constexpr uint64_t kNs = 1000;     // ps
constexpr uint64_t kDelay = 50 * kNs;     // each egress wire
constexpr uint64_t kLatency = 200 * kNs;  // the switch's forwarding latency
constexpr uint64_t kPsPerByte100G = 80;   // 8 bits at 100 Gb/s

roce::MacAddr mac(uint8_t last) { return roce::MacAddr{{0x02, 0, 0, 0, 0, last}}; }

struct Sink : FrameSink {
  struct Rx {
    uint64_t t_ps, first_ps;
    FrameBytes f;
  };
  std::vector<Rx> got;
  void rx_arrive(FrameBytes f, uint64_t first_byte_ps, bool) override {
    got.push_back({ClockDomain::now_ps(), first_byte_ps, std::move(f)});
  }
};

// Ports 0..n-1 are nodes A, B, C, ... with MACs 02:00:00:00:00:0a, 0b, ...
SwitchConfig config(size_t n, std::vector<double> rates = {}) {
  SwitchConfig c;
  for (size_t p = 0; p < n; ++p) {
    SwitchConfig::Port port;
    port.name = std::string(1, char('A' + p));
    port.node_mac = mac(uint8_t(0x0a + p)).b;
    port.rate_gbps = p < rates.size() ? rates[p] : 100.0;
    c.ports.push_back(port);
  }
  c.latency_ps = kLatency;
  return c;
}

struct Bench : sc_core::sc_module {
  SC_HAS_PROCESS(Bench);
  SimContext ctx;
  std::vector<std::unique_ptr<Switch>> sws;
  std::vector<std::unique_ptr<Wire>> wires;
  std::vector<std::vector<std::unique_ptr<Sink>>> sinks;  // [switch][port]
  std::function<void(Bench&)> body;
  bool done = false;
  Bench(const std::vector<SwitchConfig>& cfgs, std::function<void(Bench&)> f)
      : sc_module("bench"), body(std::move(f)) {
    for (size_t s = 0; s < cfgs.size(); ++s) {
      sws.push_back(std::make_unique<Switch>(fmt::format("sw{}", s).c_str(), ctx, fmt::format("top.sw{}", s), cfgs[s]));
      sinks.emplace_back();
      for (size_t p = 0; p < cfgs[s].ports.size(); ++p) {
        wires.push_back(std::make_unique<Wire>(fmt::format("w{}_{}", s, p).c_str(), kDelay,
                                               cfgs[s].ports[p].rate_gbps, 1));
        sinks[s].push_back(std::make_unique<Sink>());
        wires.back()->set_dst(sinks[s].back().get());
        sws[s]->port(p).wire_out = wires.back().get();
      }
    }
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    done = true;
  }
  Switch& sw(size_t s = 0) { return *sws[s]; }
  Sink& sink(size_t p, size_t s = 0) { return *sinks[s][p]; }
  void at(uint64_t t_ps) {
    const uint64_t now = ClockDomain::now_ps();
    if (t_ps > now) sc_core::wait(sc_time(double(t_ps - now), SC_PS));
  }
  // A frame whose last byte reaches port `in` of every switch now.
  void arrive(size_t in, const FrameBytes& f) {
    for (auto& s : sws) s->port(in).rx_arrive(f, ClockDomain::now_ps(), false);
  }
};

void run_bench(const std::vector<SwitchConfig>& cfgs, std::function<void(Bench&)> body, uint64_t until_ps) {
  sc_core::sc_set_time_resolution(1, SC_PS);
  Bench b(cfgs, std::move(body));
  sc_core::sc_start(sc_time(double(until_ps), SC_PS));
  ASSERT_TRUE(b.done);
}

// A RoCEv2 SEND ONLY from src to dst with `payload` bytes and this IPv4 TOS
// (or IPv6 traffic class), ICRC and checksum filled.
FrameBytes roce_frame(uint8_t src, uint8_t dst, size_t payload, uint8_t tos, bool ipv6 = false) {
  roce::Frame f;
  f.eth.src = mac(src);
  f.eth.dst = mac(dst);
  f.ipv6 = ipv6;
  f.eth.ethertype = ipv6 ? roce::kEtherTypeIpv6 : roce::kEtherTypeIpv4;
  f.ip4.tos = tos;
  f.ip6.traffic_class = tos;
  f.ip4.src.v = 0x0A000000u | src;
  f.ip4.dst.v = 0x0A000000u | dst;
  f.bth.opcode = roce::op::RC_SEND_ONLY;
  f.bth.dest_qp = 2;
  f.bth.psn = 0x100;
  f.payload.assign(payload, 0x5A);
  return roce::encode(f);
}

// A plain Ethernet frame (local experimental EtherType) of n bytes.
FrameBytes raw_frame(uint8_t src, const roce::MacAddr& dst, size_t n) {
  FrameBytes f(n, 0x33);
  std::copy(dst.b.begin(), dst.b.end(), f.begin());
  const roce::MacAddr s = mac(src);
  std::copy(s.b.begin(), s.b.end(), f.begin() + 6);
  f[12] = 0x88, f[13] = 0xB5;
  return f;
}

// RFC 1071: the one's-complement sum of the IPv4 header's 16-bit words,
// checksum included, is 0xFFFF when the checksum is right.
bool ipv4_header_checksum_ok(const FrameBytes& f) {
  uint32_t sum = 0;
  for (size_t i = 0; i < 20; i += 2) sum += uint32_t(f[14 + i]) << 8 | f[14 + i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;
}

bool icrc_ok(const FrameBytes& f) {
  return roce::compute_icrc(f.data(), f.size() - roce::kIcrcLen) == roce::stored_icrc(f.data(), f.size());
}

}  // namespace

// Unicast by destination MAC; an unknown MAC dropped (no_route) by default
// and flooded to every other port with flood_unknown; a frame to its own
// port's node dropped either way; a MAC control frame ends at the port.
TEST(Switch, ForwardsByDestinationMac) {
  SwitchConfig drop = config(3), flood = config(3);
  flood.flood_unknown = true;
  std::vector<SwitchPortCounters> c0(3), c1(3);
  std::vector<size_t> got0(3), got1(3);
  run_bench({drop, flood}, [&](Bench& t) {
    t.at(1000 * kNs);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 100));   // A -> B
    t.arrive(0, raw_frame(0x0a, mac(0x0c), 100));   // A -> C
    t.arrive(1, raw_frame(0x0b, mac(0x0a), 100));   // B -> A
    t.arrive(0, raw_frame(0x0a, mac(0x77), 100));   // unknown
    t.arrive(0, raw_frame(0x0a, roce::MacAddr{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, 100));  // broadcast
    t.arrive(2, raw_frame(0x0c, mac(0x0c), 100));   // to its own port
    pfc::PauseFrame p;
    p.time[0] = 0;                                  // an 802.3x PAUSE (time 0)
    t.arrive(2, pfc::build(mac(0x0c).b.data(), p));
    t.at(3000 * kNs);
    for (size_t p2 = 0; p2 < 3; ++p2) {
      c0[p2] = t.sw(0).port(p2).counters, c1[p2] = t.sw(1).port(p2).counters;
      got0[p2] = t.sink(p2, 0).got.size(), got1[p2] = t.sink(p2, 1).got.size();
    }
    EXPECT_EQ(t.sink(1, 0).got.at(0).f[5], 0x0b);
    EXPECT_EQ(t.sink(2, 0).got.at(0).f[5], 0x0c);
    EXPECT_EQ(t.sink(0, 0).got.at(0).f[11], 0x0b);
  }, 4000 * kNs);
  // Drop: A, B, C each get their unicast frame only.
  EXPECT_EQ(got0, (std::vector<size_t>{1, 1, 1}));
  EXPECT_EQ(c0[0].frames_in, 4u);
  EXPECT_EQ(c0[0].no_route, 2u);   // unknown and broadcast
  EXPECT_EQ(c0[2].no_route, 1u);   // its own port
  EXPECT_EQ(c0[2].pause_rx, 1u);
  EXPECT_EQ(c0[2].frames_in, 2u);
  EXPECT_EQ(c0[1].frames_out, 1u);
  EXPECT_EQ(c0[1].bytes_out, 100u);
  // Flood: the unknown and the broadcast frame also reach B and C.
  EXPECT_EQ(got1, (std::vector<size_t>{1, 3, 3}));
  EXPECT_EQ(c1[0].flooded, 2u);
  EXPECT_EQ(c1[0].no_route, 0u);
  EXPECT_EQ(c1[2].no_route, 1u);
}

// Store and forward at the port's line rate: the frame queued latency_ps
// after its last byte came in goes on the line at once (first byte after
// the 8-byte preamble + SFD, last after the frame and the 4-byte FCS), the
// next one an IFG (12 bytes) after it; the egress wire adds its delay. At
// 25 Gb/s every byte takes four times as long.
TEST(Switch, SerialisesAtTheLineRate) {
  std::vector<Sink::Rx> b, c;
  const uint64_t t0 = 1000 * kNs;
  run_bench({config(3, {100, 100, 25})}, [&](Bench& t) {
    t.at(t0);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 1000));
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 500));
    t.arrive(0, raw_frame(0x0a, mac(0x0c), 1000));
    t.at(5000 * kNs);
    b = t.sink(1).got, c = t.sink(2).got;
  }, 6000 * kNs);
  ASSERT_EQ(b.size(), 2u);
  ASSERT_EQ(c.size(), 1u);
  const uint64_t start = t0 + kLatency;  // queued, the line free: on the line now
  EXPECT_EQ(b[0].first_ps, start + 8 * kPsPerByte100G + kDelay);
  EXPECT_EQ(b[0].t_ps, start + (8 + 1000 + 4) * kPsPerByte100G + kDelay);
  const uint64_t second = start + (8 + 1000 + 4 + 12) * kPsPerByte100G;  // after the IFG
  EXPECT_EQ(b[1].first_ps, second + 8 * kPsPerByte100G + kDelay);
  EXPECT_EQ(b[1].t_ps, second + (8 + 500 + 4) * kPsPerByte100G + kDelay);
  EXPECT_EQ(c[0].first_ps, start + 8 * 4 * kPsPerByte100G + kDelay);
  EXPECT_EQ(c[0].t_ps, start + (8 + 1000 + 4) * 4 * kPsPerByte100G + kDelay);
}

// A frame that would take the egress queue past buffer_bytes is dropped and
// counted at that port; the queue's peak is the bytes it held.
TEST(Switch, DropsWhenTheBufferIsFull) {
  SwitchConfig cfg = config(4);
  cfg.buffer_bytes = 2500;
  SwitchPortCounters b;
  size_t got = 0;
  run_bench({cfg}, [&](Bench& t) {
    t.at(1000 * kNs);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 1000));  // queued: 1000
    t.arrive(2, raw_frame(0x0c, mac(0x0b), 1000));  // 2000
    t.arrive(3, raw_frame(0x0d, mac(0x0b), 1000));  // 3000 > 2500: dropped
    t.arrive(3, raw_frame(0x0d, mac(0x0b), 400));   // 2400: fits
    t.at(3000 * kNs);
    b = t.sw().port(1).counters;
    got = t.sink(1).got.size();
    EXPECT_EQ(t.sw().port(1).queue_bytes(), 0u);
  }, 4000 * kNs);
  EXPECT_EQ(got, 3u);
  EXPECT_EQ(b.dropped, 1u);
  EXPECT_EQ(b.dropped_bytes, 1000u);
  EXPECT_EQ(b.max_queue_bytes, 2400u);
  EXPECT_EQ(b.frames_out, 3u);
}

// A frame longer than the whole buffer never fits, even into an empty
// queue: dropped and counted each time, and named once in the run's events.
TEST(Switch, DropsAFrameLongerThanTheBuffer) {
  SwitchConfig cfg = config(2);
  cfg.buffer_bytes = 1024;
  SwitchPortCounters b;
  size_t got = 0;
  std::vector<std::string> events;
  run_bench({cfg}, [&](Bench& t) {
    t.at(1000 * kNs);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 1025));  // one byte too many: dropped
    t.at(2000 * kNs);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 4170));  // dropped again, no second event
    t.at(3000 * kNs);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 1024));  // fits exactly
    t.at(4000 * kNs);
    b = t.sw().port(1).counters;
    got = t.sink(1).got.size();
    for (const auto& e : t.ctx.events) events.push_back(e.where + ": " + e.what);
  }, 5000 * kNs);
  EXPECT_EQ(got, 1u);
  EXPECT_EQ(b.dropped, 2u);
  EXPECT_EQ(b.dropped_bytes, 1025u + 4170u);
  EXPECT_EQ(b.max_queue_bytes, 1024u);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].find("top.sw0.B: frame larger than the buffer (1024 bytes)"), std::string::npos) << events[0];
  EXPECT_NE(events[0].find("(1025 bytes) from port A; frames this long never pass"), std::string::npos) << events[0];
}

// threshold_bytes = one frame: the first frame (queue empty) and the second
// (queue exactly at the threshold) leave as they came, the third and
// fourth (queue above it) leave with ECN = CE. ECT(0) and ECT(1) are
// marked, Not-ECT only with mark_not_ect, CE stays CE; IPv6 too. The IPv4
// header checksum (RFC 1071, computed here) and the ICRC of every frame
// are right.
TEST(Switch, MarksEcnAboveTheThreshold) {
  const FrameBytes ect0 = roce_frame(0x0a, 0x0b, 1000, 0x02);
  const uint64_t s = ect0.size();
  SwitchConfig cfg = config(2), all = config(2);
  cfg.ecn.on = all.ecn.on = true;
  cfg.ecn.threshold_bytes = all.ecn.threshold_bytes = s;
  all.ecn.mark_not_ect = true;
  std::vector<Sink::Rx> got, got_all;
  uint64_t marked = 0, marked_all = 0;
  run_bench({cfg, all}, [&](Bench& t) {
    t.at(1000 * kNs);
    t.arrive(0, ect0);                                 // queue 0: as it was
    t.arrive(0, ect0);                                 // queue s = threshold: as it was
    t.arrive(0, ect0);                                 // above: CE
    t.arrive(0, roce_frame(0x0a, 0x0b, 1000, 0x01));   // ECT(1): CE
    t.arrive(0, roce_frame(0x0a, 0x0b, 1000, 0x00));   // Not-ECT: unmarked (marked with mark_not_ect)
    t.arrive(0, roce_frame(0x0a, 0x0b, 1000, 0x03));   // CE: stays, not counted
    t.arrive(0, roce_frame(0x0a, 0x0b, 1000, 0x02, /*ipv6=*/true));  // IPv6 ECT(0): CE
    t.at(5000 * kNs);
    got = t.sink(1, 0).got, got_all = t.sink(1, 1).got;
    marked = t.sw(0).port(1).counters.ecn_marked, marked_all = t.sw(1).port(1).counters.ecn_marked;
  }, 6000 * kNs);
  ASSERT_EQ(got.size(), 7u);
  auto ecn_of = [](const FrameBytes& f) {
    return f[12] == 0x86 ? (f[15] >> 4) & 3 : f[15] & 3;
  };
  const std::vector<int> want = {2, 2, 3, 3, 0, 3, 3};
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(ecn_of(got[i].f), want[i]) << "frame " << i;
    if (got[i].f[12] == 0x08) {
      EXPECT_TRUE(ipv4_header_checksum_ok(got[i].f)) << "frame " << i;
    }
    EXPECT_TRUE(icrc_ok(got[i].f)) << "frame " << i;
  }
  EXPECT_EQ(got[0].f, ect0);
  EXPECT_EQ(got[1].f, ect0);
  // The marked frame differs from the one sent in the ECN bits and the checksum only.
  FrameBytes diff = got[2].f;
  diff[15] = ect0[15], diff[24] = ect0[24], diff[25] = ect0[25];
  EXPECT_EQ(diff, ect0);
  EXPECT_NE(got[2].f[24] << 8 | got[2].f[25], ect0[24] << 8 | ect0[25]);
  const auto d = roce::decode(got[2].f);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->ip4.tos & roce::kEcnMask, roce::kEcnCe);
  EXPECT_EQ(marked, 3u);
  ASSERT_EQ(got_all.size(), 7u);
  EXPECT_EQ(ecn_of(got_all[4].f), 3);
  EXPECT_TRUE(ipv4_header_checksum_ok(got_all[4].f));
  EXPECT_TRUE(icrc_ok(got_all[4].f));
  EXPECT_EQ(marked_all, 4u);
}

// PFC on the ingress side: with xoff_bytes = three frames, two frames from
// A inside the switch send nothing, a third sends A an XOFF for the
// priority (time 0xFFFF) at once; once B's port has sent enough that one
// frame (xon_bytes) is left inside, A gets an XON (time 0), at the ps that
// frame's departure gives.
TEST(Switch, PfcXoffAtTheThresholdXonBelow) {
  const FrameBytes f = roce_frame(0x0a, 0x0b, 1000, 0x00);
  const uint64_t s = f.size();
  SwitchConfig cfg = config(2);
  cfg.pfc.on = true;
  cfg.pfc.priority = 3;
  cfg.pfc.xoff_bytes = 3 * s;
  cfg.pfc.xon_bytes = s;
  std::vector<Sink::Rx> at_a;
  SwitchPortCounters a;
  const uint64_t t1 = 1000 * kNs, t2 = 5000 * kNs;
  run_bench({cfg}, [&](Bench& t) {
    t.at(t1);
    t.arrive(0, f);
    t.arrive(0, f);
    t.at(t1 + 1);
    EXPECT_EQ(t.sw().port(0).ingress_bytes(), 2 * s);
    t.at(3000 * kNs);  // both gone, below the threshold all the while: no pause frame
    EXPECT_TRUE(t.sink(0).got.empty());
    t.at(t2);
    for (int k = 0; k < 5; ++k) t.arrive(0, f);  // 5 frames: XOFF (at 3)
    t.at(9000 * kNs);
    at_a = t.sink(0).got;
    a = t.sw().port(0).counters;
  }, 10000 * kNs);
  ASSERT_EQ(at_a.size(), 2u);
  const auto xoff = pfc::parse(at_a[0].f.data(), at_a[0].f.size());
  const auto xon = pfc::parse(at_a[1].f.data(), at_a[1].f.size());
  ASSERT_TRUE(xoff && xon);
  EXPECT_TRUE(xoff->pfc);
  EXPECT_EQ(xoff->class_enable, 1u << 3);
  EXPECT_EQ(xoff->time[3], 0xFFFF);
  EXPECT_EQ(xon->class_enable, 1u << 3);
  EXPECT_EQ(xon->time[3], 0);
  // XOFF: on A's idle line as soon as the third frame came in.
  EXPECT_EQ(at_a[0].first_ps, t2 + 8 * kPsPerByte100G + kDelay);
  // XON: when the fourth frame's last byte has left B's port (one frame left inside).
  const uint64_t slot = (8 + s + 4 + 12) * kPsPerByte100G;
  const uint64_t fourth_out = t2 + kLatency + 3 * slot + (8 + s + 4) * kPsPerByte100G;
  EXPECT_EQ(at_a[1].first_ps, fourth_out + 8 * kPsPerByte100G + kDelay);
  EXPECT_EQ(a.pfc_xoff_sent, 1u);
  EXPECT_EQ(a.pfc_xon_sent, 1u);
  EXPECT_EQ(a.max_ingress_bytes, 5 * s);
}

// A pause frame from a node holds the port's lossless class until it runs
// out or an XON comes; frames of no class (non-RoCE) are not held by a PFC
// frame.
// A pause from the node holds the class's frames (in their order) and lets
// best-effort frames behind them go on.
TEST(Switch, HonoursPfcFromTheNode) {
  SwitchConfig cfg = config(2);
  cfg.pfc.on = true;
  cfg.pfc.xoff_bytes = 1 << 20;
  cfg.pfc.xon_bytes = 0;
  std::vector<Sink::Rx> at_b;
  uint64_t paused_ns = 0;
  const uint64_t t1 = 1000 * kNs;
  run_bench({cfg}, [&](Bench& t) {
    t.at(t1);
    pfc::PauseFrame p;
    p.pfc = true;
    p.class_enable = 1u << 3;
    p.time[3] = 1000;  // 1000 quanta = 5.12 us at 100 Gb/s
    t.sw().port(1).rx_arrive(pfc::build(mac(0x0b).b.data(), p), t1, false);
    t.arrive(0, roce_frame(0x0a, 0x0b, 100, 0));
    t.at(t1 + 1000 * kNs);
    t.arrive(0, raw_frame(0x0a, mac(0x0b), 100));  // best effort, behind the held frame: goes on
    t.arrive(0, roce_frame(0x0a, 0x0b, 200, 0));   // the class again: waits behind the first
    t.at(20000 * kNs);
    at_b = t.sink(1).got;
    paused_ns = t.sw().port(1).counters.paused_ns;
  }, 21000 * kNs);
  ASSERT_EQ(at_b.size(), 3u);
  const uint64_t resume = t1 + 1000 * 512 * 10;  // 5.12 us
  // The best-effort frame leaves as soon as it is queued.
  EXPECT_EQ(at_b[0].f.size(), 100u);
  EXPECT_EQ(at_b[0].first_ps, t1 + 1000 * kNs + kLatency + 8 * kPsPerByte100G + kDelay);
  // The class's frames in their order once the pause expires.
  EXPECT_EQ(at_b[1].first_ps, resume + 8 * kPsPerByte100G + kDelay);
  EXPECT_GT(at_b[2].first_ps, at_b[1].t_ps);
  EXPECT_GT(at_b[2].f.size(), at_b[1].f.size());
  EXPECT_EQ(paused_ns, (resume - (t1 + kLatency)) / 1000);
}

// A hold that has not ended yet counts in counters_now() (what the report
// and expect_switch read), not yet in counters; once it ends both agree.
TEST(Switch, PausedNsCountsAHoldStillRunning) {
  SwitchConfig cfg = config(2);
  cfg.pfc.on = true;
  cfg.pfc.xoff_bytes = 1 << 20;
  cfg.pfc.xon_bytes = 0;
  const uint64_t t1 = 1000 * kNs;
  const uint64_t held_from = t1 + kLatency;            // the frame reaches its queue, held
  const uint64_t resume = t1 + 0xFFFFull * 512 * 10;   // 0xFFFF quanta at 100 Gb/s: 335.5 us
  SwitchPortCounters during, during_now, after, after_now;
  run_bench({cfg}, [&](Bench& t) {
    t.at(t1);
    pfc::PauseFrame p;
    p.pfc = true;
    p.class_enable = 1u << 3;
    p.time[3] = 0xFFFF;
    t.sw().port(1).rx_arrive(pfc::build(mac(0x0b).b.data(), p), t1, false);
    t.arrive(0, roce_frame(0x0a, 0x0b, 100, 0));
    t.at(t1 + 100000 * kNs);
    during = t.sw().port(1).counters;
    during_now = t.sw().port(1).counters_now();
    t.at(resume + 10000 * kNs);
    after = t.sw().port(1).counters;
    after_now = t.sw().port(1).counters_now();
  }, resume + 20000 * kNs);
  EXPECT_EQ(during.paused_ns, 0u);
  EXPECT_EQ(during_now.paused_ns, (t1 + 100000 * kNs - held_from) / 1000);
  EXPECT_EQ(after.paused_ns, (resume - held_from) / 1000);
  EXPECT_EQ(after_now.paused_ns, after.paused_ns);
  EXPECT_EQ(after.frames_out, 1u);
}

// RED: between min_bytes and max_bytes a frame is marked with probability
// p = probability * (q - min) / (max - min), u = (rng() >> 11) * 2^-53 from
// std::mt19937_64(seed), drawn for each markable frame in that range. Two
// switches with the same seed mark the same frames (and exactly those this
// rule gives); a third with another seed marks others.
TEST(Switch, RedMarksAreAFunctionOfTheSeed) {
  const FrameBytes f = roce_frame(0x0a, 0x0b, 200, 0x02);
  const uint64_t s = f.size();
  const size_t n = 60;
  SwitchConfig a = config(2);
  a.ecn.on = a.ecn.red = true;
  a.ecn.min_bytes = 5 * s;
  a.ecn.max_bytes = 50 * s;
  a.ecn.probability = 0.8;
  a.seed = 77;
  SwitchConfig b = a, c = a;
  c.seed = 78;
  std::vector<std::vector<int>> marks(3);
  run_bench({a, b, c}, [&](Bench& t) {
    t.at(1000 * kNs);
    for (size_t k = 0; k < n; ++k) t.arrive(0, f);  // queued at one instant: frame k sees k frames
    t.at(100000 * kNs);
    for (size_t sw = 0; sw < 3; ++sw)
      for (const auto& r : t.sink(1, sw).got) marks[sw].push_back(r.f[15] & 3);
  }, 101000 * kNs);
  ASSERT_EQ(marks[0].size(), n);
  EXPECT_EQ(marks[0], marks[1]);
  EXPECT_NE(marks[0], marks[2]);
  std::mt19937_64 rng(77);
  std::vector<int> want;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t q = k * s;
    bool m = false;
    if (q >= a.ecn.max_bytes) {
      m = true;
    } else if (q >= a.ecn.min_bytes) {
      const double p = 0.8 * double(q - a.ecn.min_bytes) / double(a.ecn.max_bytes - a.ecn.min_bytes);
      m = double(rng() >> 11) * 0x1.0p-53 < p;
    }
    want.push_back(m ? 3 : 2);
  }
  EXPECT_EQ(marks[0], want);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(marks[0][k], 2) << "below min_bytes";
  for (size_t k = 50; k < n; ++k) EXPECT_EQ(marks[0][k], 3) << "at or above max_bytes";
}

// RED on the average queue (weight 1/4): frames queued at one instant see
// q = 0, s, 2s, ...; the average follows avg <- 3/4 avg + 1/4 q (computed
// here by hand), lags behind q, and marks where it crosses the thresholds
// (the random draws in between from the switch's stream, in order). After
// 2 ms of idle line the average has decayed to 0: the next frame, arriving
// at an empty queue, is never marked although the instantaneous-queue RED
// would have marked the burst's late frames.
TEST(Switch, RedOnTheAverageQueueLagsAndDecays) {
  const FrameBytes f = roce_frame(0x0a, 0x0b, 200, 0x02);
  const uint64_t s = f.size();
  const size_t n = 60;
  SwitchConfig a = config(2);
  a.ecn.on = a.ecn.red = true;
  a.ecn.min_bytes = 5 * s;
  a.ecn.max_bytes = 20 * s;
  a.ecn.probability = 0.5;
  a.ecn.weight = 0.25;
  a.seed = 77;
  std::vector<int> marks, after_idle;
  run_bench({a}, [&](Bench& t) {
    t.at(1000 * kNs);
    for (size_t k = 0; k < n; ++k) t.arrive(0, f);
    t.at(100000 * kNs);
    for (const auto& r : t.sink(1).got) marks.push_back(r.f[15] & 3);
    t.at(2100000 * kNs);
    t.arrive(0, f);
    t.at(2200000 * kNs);
    after_idle.push_back(t.sink(1).got.back().f[15] & 3);
  }, 2300000 * kNs);
  ASSERT_EQ(marks.size(), n);
  std::mt19937_64 rng(77);
  std::vector<int> want;
  double avg = 0;
  size_t first_mark = n;
  for (size_t k = 0; k < n; ++k) {
    avg = 0.75 * avg + 0.25 * double(k * s);
    bool m = false;
    if (avg >= double(20 * s)) {
      m = true;
    } else if (avg >= double(5 * s)) {
      m = double(rng() >> 11) * 0x1.0p-53 < 0.5 * (avg - double(5 * s)) / double(15 * s);
    }
    if (m && first_mark == n) first_mark = k;
    want.push_back(m ? 3 : 2);
  }
  EXPECT_EQ(marks, want);
  // The average lags: frame 5 sees q = 5s but avg is about 2.1s, so nothing
  // before frame 8 can be marked (avg first reaches 5s at frame 8).
  for (size_t k = 0; k < 8; ++k) EXPECT_EQ(marks[k], 2) << k;
  EXPECT_GE(first_mark, 8u);
  // avg >= max_bytes from frame 23 on (avg_k = k s - 3 s (1 - 0.75^k)).
  for (size_t k = 23; k < n; ++k) EXPECT_EQ(marks[k], 3) << k;
  EXPECT_EQ(after_idle, std::vector<int>{2});
}
