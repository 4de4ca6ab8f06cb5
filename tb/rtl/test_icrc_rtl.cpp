// tb/rtl: the Verilated ICRC RTL (rtl/icrc/icrc.sv, SystemC model Vicrc)
// against the captured ICRCs and the C++ reference roce::compute_icrc.
//
// A small SystemC testbench drives Vicrc at 200 MHz with 512-bit beats,
// samples every rising edge, and checks each frame's crc, the latency from
// the last beat to crc_valid (1 cycle) and s_ready (always 1). Each TEST
// elaborates its own kernel, so tests run one per process
// (gtest_discover_tests).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <systemc>
#include <vector>

#include "Vicrc.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "verilated.h"
#if ERNIC_RTL_TRACE
#include "verilated_vcd_sc.h"
#endif

using roce::Bytes;
using namespace sc_core;
using sc_dt::sc_bv;

namespace {

constexpr int kLatency = 1;          // rtl/icrc/icrc.sv: crc_valid 1 cycle after the last beat
constexpr int kClockPs = 5000;       // 200 MHz core clock

// One cycle of stimulus.
struct Op {
  enum Kind { Beat, Idle, Reset } kind = Idle;
  sc_bv<512> data;
  uint64_t keep = 0;
  bool last = false;
};

struct Result {
  uint32_t crc;
  uint64_t edge;     // rising edge at which crc_valid was seen high
};

SC_MODULE(IcrcTb) {
  sc_clock clk{"clk", sc_time(kClockPs, SC_PS)};
  sc_signal<bool> rst_n{"rst_n"}, s_valid{"s_valid"}, s_ready{"s_ready"}, s_last{"s_last"},
      crc_valid{"crc_valid"};
  sc_signal<sc_bv<512>> s_data{"s_data"};
  sc_signal<uint64_t> s_keep{"s_keep"};
  sc_signal<uint32_t> crc{"crc"};
  Vicrc dut{"dut"};

  std::vector<Op> ops;               // stimulus, one entry a cycle
  std::vector<Result> results;       // one per crc_valid cycle
  std::vector<uint64_t> last_edges;  // edges that accepted a last beat
  uint64_t edge = 0;                 // rising edges seen
  uint64_t beats = 0;
  bool ready_low_seen = false;
  bool done = false;
  std::function<void(size_t)> on_result;  // called with the number of results so far

  SC_CTOR(IcrcTb) {
    dut.clk(clk);
    dut.rst_n(rst_n);
    dut.s_valid(s_valid);
    dut.s_ready(s_ready);
    dut.s_data(s_data);
    dut.s_keep(s_keep);
    dut.s_last(s_last);
    dut.crc_valid(crc_valid);
    dut.crc(crc);
    SC_THREAD(drive);
    sensitive << clk.posedge_event();
    SC_METHOD(monitor);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  // Values written here after rising edge k are sampled by the RTL at k+1.
  void drive() {
    rst_n.write(false);
    s_valid.write(false);
    s_last.write(false);
    s_keep.write(0);
    for (int i = 0; i < 3; ++i) wait();
    rst_n.write(true);
    for (const Op& op : ops) {
      rst_n.write(op.kind != Op::Reset);
      s_valid.write(op.kind == Op::Beat);
      if (op.kind == Op::Beat) {
        s_data.write(op.data);
        s_keep.write(op.keep);
        s_last.write(op.last);
      } else {
        s_last.write(false);
      }
      wait();
    }
    rst_n.write(true);
    s_valid.write(false);
    s_last.write(false);
    for (int i = 0; i < kLatency + 3; ++i) wait();
    done = true;
    sc_stop();
  }

  // Samples the values held during the cycle that ends at this edge.
  void monitor() {
    ++edge;
    if (!s_ready.read()) ready_low_seen = true;
    if (crc_valid.read()) {
      results.push_back({crc.read(), edge});
      if (on_result) on_result(results.size());
    }
    if (rst_n.read() && s_valid.read()) {
      ++beats;
      if (s_last.read()) last_edges.push_back(edge);
    }
  }
};

void init_kernel() {
  static bool once = false;
  if (!once) {
    sc_set_time_resolution(1, SC_PS);
    once = true;
  }
}

// Beats of one frame (no ICRC); bytes past the frame in the last beat are
// filled with 0xA5 to show that the RTL ignores them.
void append_frame(std::vector<Op>& ops, const Bytes& f) {
  const size_t nbeats = (f.size() + 63) / 64;
  for (size_t b = 0; b < nbeats; ++b) {
    uint8_t chunk[64];
    std::memset(chunk, 0xA5, sizeof chunk);
    const size_t n = std::min<size_t>(64, f.size() - b * 64);
    std::memcpy(chunk, f.data() + b * 64, n);
    Op op;
    op.kind = Op::Beat;
    for (int w = 0; w < 16; ++w) op.data.set_word(w, roce::get_le32(chunk + 4 * w));
    op.keep = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
    op.last = b + 1 == nbeats;
    ops.push_back(op);
  }
}

void append_idle(std::vector<Op>& ops, int n) {
  for (int i = 0; i < n; ++i) ops.push_back(Op{});
}

struct CapFrame {
  std::string file;
  size_t index;     // frame number in the file, from 1
  Bytes body;       // frame without the ICRC
  uint32_t icrc;    // captured ICRC value
};

std::vector<CapFrame> load_captures() {
  static const char* kFiles[] = {"pingpong_rc.pcap", "rdma_write_bw.pcap", "rdma_read_bw.pcap",
                                 "rdma_send_bw.pcap", "rdma_write_lat.pcap"};
  std::vector<CapFrame> out;
  for (const char* name : kFiles) {
    const std::string path = std::string(ERNIC_TEST_DATA) + "/captures/" + name;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    EXPECT_NE(p, nullptr) << path << ": " << err;
    if (!p) continue;
    EXPECT_EQ(pcap_datalink(p), DLT_EN10MB) << path;
    pcap_pkthdr* h;
    const u_char* data;
    size_t idx = 0, roce_frames = 0;
    while (pcap_next_ex(p, &h, &data) == 1) {
      ++idx;
      if (h->caplen != h->len || !roce::is_roce(data, h->caplen)) continue;
      ++roce_frames;
      CapFrame cf{name, idx, Bytes(data, data + h->caplen - 4),
                  roce::stored_icrc(data, h->caplen)};
      out.push_back(std::move(cf));
    }
    pcap_close(p);
    EXPECT_EQ(roce_frames, 20u) << path;
  }
  return out;
}

// Runs the stimulus and checks results against expected, in order, plus
// the latency and s_ready. Returns the wall time of sc_start in seconds.
double run_and_check(IcrcTb& tb, const std::vector<uint32_t>& expected,
                     const std::vector<std::string>& what) {
  const auto t0 = std::chrono::steady_clock::now();
  sc_start();
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_TRUE(tb.done);
  EXPECT_FALSE(tb.ready_low_seen) << "s_ready must be tied 1";
  EXPECT_EQ(tb.results.size(), expected.size());
  EXPECT_EQ(tb.last_edges.size(), tb.results.size());
  const size_t n = std::min(tb.results.size(), expected.size());
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (tb.results[i].crc != expected[i] && ++bad <= 10)
      ADD_FAILURE() << what[i] << ": rtl 0x" << std::hex << tb.results[i].crc << " expected 0x"
                    << expected[i];
    if (i < tb.last_edges.size())
      EXPECT_EQ(tb.results[i].edge - tb.last_edges[i], uint64_t(kLatency)) << what[i];
  }
  EXPECT_EQ(bad, 0u);
  return std::chrono::duration<double>(t1 - t0).count();
}

TEST(IcrcRtl, CapturedFramesMatchIcrcAndReference) {
  init_kernel();
  const auto frames = load_captures();
  ASSERT_EQ(frames.size(), 100u);
  IcrcTb tb("tb");
  std::mt19937_64 rng(0x1C2C);
  std::vector<uint32_t> expected;
  std::vector<std::string> what;
  for (const auto& f : frames) {
    const uint32_t ref = roce::compute_icrc(f.body.data(), f.body.size());
    EXPECT_EQ(ref, f.icrc) << f.file << " #" << f.index << " (reference vs capture)";
    expected.push_back(f.icrc);
    what.push_back(f.file + " #" + std::to_string(f.index));
    // Idle cycles inside and between frames: s_valid low must hold the state.
    std::vector<Op> beats;
    append_frame(beats, f.body);
    for (const Op& op : beats) {
      if (rng() % 4 == 0) append_idle(tb.ops, int(rng() % 3) + 1);
      tb.ops.push_back(op);
    }
    append_idle(tb.ops, int(rng() % 3));
  }
  run_and_check(tb, expected, what);
}

TEST(IcrcRtl, BackToBackFramesAndSpeed) {
  init_kernel();
  const auto frames = load_captures();
  ASSERT_EQ(frames.size(), 100u);
  IcrcTb tb("tb");
  constexpr int kRounds = 100;  // 10,000 frames with no idle cycle between them
  std::vector<uint32_t> expected;
  std::vector<std::string> what;
  for (int r = 0; r < kRounds; ++r)
    for (const auto& f : frames) {
      append_frame(tb.ops, f.body);
      expected.push_back(f.icrc);
      what.push_back("round " + std::to_string(r) + " " + f.file + " #" + std::to_string(f.index));
    }
  const size_t busy_ops = tb.ops.size();
  constexpr int kIdle = 100000;  // then idle cycles, to compare the cost of a cycle
  append_idle(tb.ops, kIdle);
  // Wall time at the edge that reports the last frame splits busy from idle.
  std::chrono::steady_clock::time_point t_busy_end;
  uint64_t edge_busy_end = 0;
  tb.on_result = [&](size_t n) {
    if (n == expected.size()) {
      t_busy_end = std::chrono::steady_clock::now();
      edge_busy_end = tb.edge;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  const double wall = run_and_check(tb, expected, what);
  // Every cycle from the first to the last beat carries a beat.
  EXPECT_EQ(tb.beats, busy_ops);
  const double busy_s = std::chrono::duration<double>(t_busy_end - t0).count();
  const double idle_s = wall - busy_s;
  const double busy_cycles = double(edge_busy_end), idle_cycles = double(tb.edge - edge_busy_end);
  const double fps = expected.size() / busy_s;
  std::printf("[ speed    ] Vicrc + SystemC testbench, back to back: %zu frames, %llu beats, "
              "%.0f cycles in %.3f s: %.0f frames/s, %.0f beats/s (%.3f%% of real time at "
              "200 MHz)\n",
              expected.size(), static_cast<unsigned long long>(tb.beats), busy_cycles, busy_s,
              fps, tb.beats / busy_s, 100.0 * busy_cycles / busy_s / 200e6);
  std::printf("[ speed    ] idle: %.0f cycles in %.3f s: %.0f cycles/s; a beat costs %.0f ns more "
              "than an idle cycle\n",
              idle_cycles, idle_s, idle_cycles / idle_s,
              1e9 * (busy_s / busy_cycles - idle_s / idle_cycles));
  ::testing::Test::RecordProperty("frames_per_s", std::to_string(int64_t(fps)));
  ::testing::Test::RecordProperty("beats_per_s", std::to_string(int64_t(tb.beats / busy_s)));
}

// A RoCEv2 frame from roce::encode with random variant fields.
roce::Frame make_frame(std::mt19937_64& rng, bool v6, size_t payload_len) {
  roce::Frame f;
  for (auto& b : f.eth.dst.b) b = uint8_t(rng());
  for (auto& b : f.eth.src.b) b = uint8_t(rng());
  f.ipv6 = v6;
  if (v6) {
    f.eth.ethertype = roce::kEtherTypeIpv6;
    f.ip6.traffic_class = uint8_t(rng());
    f.ip6.flow_label = uint32_t(rng()) & 0xFFFFF;
    f.ip6.hop_limit = uint8_t(rng());
    for (auto& b : f.ip6.src.b) b = uint8_t(rng());
    for (auto& b : f.ip6.dst.b) b = uint8_t(rng());
  } else {
    f.eth.ethertype = roce::kEtherTypeIpv4;
    f.ip4.tos = uint8_t(rng());
    f.ip4.ttl = uint8_t(rng());
    f.ip4.id = uint16_t(rng());
    f.ip4.src.v = uint32_t(rng());
    f.ip4.dst.v = uint32_t(rng());
  }
  f.udp.sport = uint16_t(0xC000 | (rng() & 0x3FFF));
  f.udp.checksum = uint16_t(rng());
  f.bth.opcode = roce::op::RC_SEND_ONLY;
  f.bth.resv8a = uint8_t(rng() & 0xC0);
  f.bth.dest_qp = uint32_t(rng()) & 0xFFFFFF;
  f.bth.psn = uint32_t(rng()) & 0xFFFFFF;
  f.bth.ack_req = rng() & 1;
  f.payload.resize(payload_len);
  for (auto& b : f.payload) b = uint8_t(rng());
  return f;
}

TEST(IcrcRtl, Ipv6FramesAndMaskedFields) {
  init_kernel();
  IcrcTb tb("tb");
  std::mt19937_64 rng(0x6666);
  std::vector<uint32_t> expected;
  std::vector<std::string> what;
  std::vector<Bytes> bodies;
  for (int i = 0; i < 40; ++i) {
    roce::Frame f = make_frame(rng, true, 4 * (rng() % 300));
    const Bytes wire = roce::encode(f);
    bodies.emplace_back(wire.begin(), wire.end() - 4);
    const uint32_t stored = roce::stored_icrc(wire.data(), wire.size());
    EXPECT_EQ(roce::compute_icrc(bodies.back().data(), bodies.back().size()), stored);
    expected.push_back(stored);
    what.push_back("ipv6 #" + std::to_string(i));
  }
  // The same frame with every variant field changed keeps its ICRC.
  std::mt19937_64 rng2(7);
  roce::Frame base = make_frame(rng2, true, 100);
  const Bytes wire0 = roce::encode(base);
  const uint32_t icrc0 = roce::stored_icrc(wire0.data(), wire0.size());
  for (int i = 0; i < 8; ++i) {
    roce::Frame f = base;
    f.ip6.traffic_class = uint8_t(rng());
    f.ip6.flow_label = uint32_t(rng()) & 0xFFFFF;
    f.ip6.hop_limit = uint8_t(rng());
    f.udp.checksum = uint16_t(rng());
    f.bth.resv8a = uint8_t(rng());
    roce::EncodeOptions o;
    o.fill_icrc = false;  // the RTL must find icrc0 by itself
    const Bytes wire = roce::encode(f, o);
    bodies.emplace_back(wire.begin(), wire.end() - 4);
    expected.push_back(icrc0);
    what.push_back("ipv6 variant #" + std::to_string(i));
  }
  for (const Bytes& b : bodies) append_frame(tb.ops, b);
  run_and_check(tb, expected, what);
}

// Frame lengths that end at every tkeep boundary: 1..64 bytes in the last
// beat, single-beat and multi-beat frames, IPv4 and IPv6.
TEST(IcrcRtl, EveryLastBeatLength) {
  init_kernel();
  IcrcTb tb("tb");
  std::mt19937_64 rng(0x4B45);
  std::vector<uint32_t> expected;
  std::vector<std::string> what;
  std::set<size_t> last_sizes_v4, last_sizes_v6;
  roce::EncodeOptions o;
  o.fill_pad = false;  // payload of any length: the frame ends on any byte
  for (int v6 = 0; v6 < 2; ++v6) {
    for (size_t len = 0; len <= 200; ++len) {
      roce::Frame f = make_frame(rng, v6, len);
      const Bytes wire = roce::encode(f, o);
      const Bytes body(wire.begin(), wire.end() - 4);
      const uint32_t ref = roce::compute_icrc(body.data(), body.size());
      EXPECT_EQ(ref, roce::stored_icrc(wire.data(), wire.size()));
      const size_t in_last = (body.size() - 1) % 64 + 1;
      (v6 ? last_sizes_v6 : last_sizes_v4).insert(in_last);
      append_frame(tb.ops, body);
      if (len % 3 == 0) append_idle(tb.ops, 1);
      expected.push_back(ref);
      what.push_back(std::string(v6 ? "ipv6" : "ipv4") + " frame of " +
                     std::to_string(body.size()) + " B (" + std::to_string(in_last) +
                     " in the last beat)");
    }
  }
  EXPECT_EQ(last_sizes_v4.size(), 64u);
  EXPECT_EQ(last_sizes_v6.size(), 64u);
  run_and_check(tb, expected, what);
}

// A reset in the middle of a frame drops it: no crc_valid for it, and the
// next frame's ICRC is right.
TEST(IcrcRtl, ResetAbortsFrame) {
  init_kernel();
  const auto frames = load_captures();
  ASSERT_FALSE(frames.empty());
  const CapFrame* big = nullptr;
  for (const auto& f : frames)
    if (f.body.size() > 256) big = &f;
  ASSERT_NE(big, nullptr);
  IcrcTb tb("tb");
  std::vector<Op> beats;
  append_frame(beats, big->body);
  tb.ops.insert(tb.ops.end(), beats.begin(), beats.begin() + 2);  // first two beats only
  tb.ops.push_back(Op{Op::Reset});
  append_frame(tb.ops, big->body);
  append_frame(tb.ops, frames.front().body);
  run_and_check(tb, {big->icrc, frames.front().icrc}, {"after reset", "next"});
  EXPECT_EQ(tb.last_edges.size(), 2u);
}

#if ERNIC_RTL_TRACE
// With tracing on, Verilator's VerilatedVcdSc writes a VCD with the RTL's
// signals under the Vicrc instance's SystemC name.
TEST(IcrcRtl, VcdSmoke) {
  init_kernel();
  Verilated::traceEverOn(true);
  const auto frames = load_captures();
  ASSERT_GE(frames.size(), 3u);
  IcrcTb tb("tb");
  for (int i = 0; i < 3; ++i) append_frame(tb.ops, frames[i].body);
  sc_start(SC_ZERO_TIME);  // elaborate before attaching the trace
  const std::string path = std::string(ERNIC_RTL_TEST_OUT) + "/icrc_smoke.vcd";
  auto tfp = std::make_unique<VerilatedVcdSc>();
  tb.dut.trace(tfp.get(), 99);
  tfp->open(path.c_str());
  ASSERT_TRUE(tfp->isOpen());
  run_and_check(tb, {frames[0].icrc, frames[1].icrc, frames[2].icrc}, {"f0", "f1", "f2"});
  tfp->close();

  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  const std::string vcd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Verilator 5.006 names the top scope after the SystemC instance's full
  // name, dots included ("tb.dut"), with the Verilog module under it.
  const auto dut_at = vcd.find("$scope module tb.dut $end");
  const auto icrc_at = vcd.find("$scope module icrc $end");
  EXPECT_NE(dut_at, std::string::npos) << "no scope tb.dut";
  EXPECT_NE(icrc_at, std::string::npos) << "no scope tb.dut icrc";
  EXPECT_LT(dut_at, icrc_at);
  for (const char* sig : {" crc_valid $end", " state_q [31:0] $end", " s_data [511:0] $end"})
    EXPECT_NE(vcd.find(sig), std::string::npos) << "no signal" << sig;
  EXPECT_EQ(vcd.find(" ROWS "), std::string::npos) << "parameters must not be traced";
  EXPECT_NE(vcd.find("#5000"), std::string::npos) << "no time step at one clock period";
}
#endif

}  // namespace
