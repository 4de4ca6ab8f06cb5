// tb/rtl: the Verilated RX parsers at the RX seam (rtl/SEAM.md) against the
// C++ reference model (model/datapath/roce_rx_ref.h), the C++ decoder
// (roce::decode), the real captures and scapy.
//
// Every case runs for both implementations of the seam: rtl/roce_rx
// (cut-through, Vroce_rx: tests RoceRx.*) and the users'-RTL example
// rtl/examples/roce_rx_alt (store-and-forward, Vroce_rx_alt: RoceRxAlt.*).
// A SystemC
// testbench drives 512-bit beats at 200 MHz (idle cycles carry garbage;
// bubbles inside frames under a seed), collects descriptors, payload
// packets and bypass frames, and compares them in order with the reference
// model, reporting the first differing field with both values. For roce_rx
// it also checks the latency (kRoceRxDescLatency) exactly and that a
// frame's payload ends no later than its descriptor; for both, that it
// comes after the previous frame's descriptor and before the next one's.
// Each TEST elaborates its own kernel, so tests run one per process
// (gtest_discover_tests).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "Vroce_rx.h"
#include "Vroce_rx_alt.h"
#include "model/datapath/roce_rx_ref.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/roce/test_util.h"

using namespace sc_core;
using ernic::seam::kSynFcs;
using ernic::seam::kSynHeader;
using ernic::seam::kSynIcrc;
using ernic::seam::kSynIpChecksum;
using ernic::seam::kSynLength;
using ernic::seam::RxDesc;
using ernic::seam::RxOutput;
using roce::Bytes;
using sc_dt::sc_bv;

namespace {

constexpr int kClockPs = 5000;  // 200 MHz core clock
constexpr uint64_t kAllKeep = ~uint64_t(0);

struct Stim {
  Bytes bytes;
  bool bad_fcs = false;
  std::string name;
};

struct Op {
  enum Kind { Beat, Idle, Reset } kind = Idle;
  sc_bv<512> data;
  uint64_t keep = 0;
  bool last = false, user = false;
};

struct DescOut {
  RxDesc d;
  uint64_t edge;
};
struct PacketOut {
  Bytes bytes;
  uint64_t first_edge = 0, last_edge = 0;
};

void init_kernel() {
  static bool once = false;
  if (!once) {
    sc_set_time_resolution(1, SC_PS);
    once = true;
  }
}

template <class Dut>
struct RxTb : sc_module {
  sc_clock clk{"clk", sc_time(kClockPs, SC_PS)};
  sc_signal<bool> rst_n{"rst_n"}, s_valid{"s_valid"}, s_last{"s_last"}, s_user{"s_user"};
  sc_signal<sc_bv<512>> s_data{"s_data"};
  sc_signal<uint64_t> s_keep{"s_keep"};
  sc_signal<bool> desc_valid{"desc_valid"}, pay_valid{"pay_valid"}, pay_last{"pay_last"}, byp_valid{"byp_valid"},
      byp_last{"byp_last"};
  sc_signal<sc_bv<1024>> desc{"desc"};
  sc_signal<sc_bv<512>> pay_data{"pay_data"}, byp_data{"byp_data"};
  sc_signal<uint64_t> pay_keep{"pay_keep"}, byp_keep{"byp_keep"};
  Dut dut{"dut"};

  std::vector<Op> ops;  // stimulus, one entry a cycle
  std::mt19937_64 garbage{0xBAD};
  int quiet_cycles = 64;  // after the stimulus: stop once outputs were idle this long
  bool garbage_when_idle = true;  // idle cycles carry random data (else the inputs hold)

  std::vector<DescOut> descs;
  std::vector<PacketOut> pays, byps;
  std::vector<uint64_t> last_edges;  // edges that accepted a frame's last beat
  std::vector<std::string> protocol_errors;
  uint64_t edge = 0, last_activity = 0, beats = 0;
  bool stim_done = false, done = false;
  PacketOut cur_pay, cur_byp;
  bool in_pay = false, in_byp = false;
  std::function<void()> on_edge;

  SC_HAS_PROCESS(RxTb);
  explicit RxTb(sc_module_name n) : sc_module(n) {
    dut.clk(clk);
    dut.rst_n(rst_n);
    dut.s_axis_tvalid(s_valid);
    dut.s_axis_tdata(s_data);
    dut.s_axis_tkeep(s_keep);
    dut.s_axis_tlast(s_last);
    dut.s_axis_tuser(s_user);
    dut.m_desc_valid(desc_valid);
    dut.m_desc(desc);
    dut.m_pay_tvalid(pay_valid);
    dut.m_pay_tdata(pay_data);
    dut.m_pay_tkeep(pay_keep);
    dut.m_pay_tlast(pay_last);
    dut.m_byp_tvalid(byp_valid);
    dut.m_byp_tdata(byp_data);
    dut.m_byp_tkeep(byp_keep);
    dut.m_byp_tlast(byp_last);
    SC_THREAD(drive);
    sensitive << clk.posedge_event();
    SC_METHOD(monitor);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  void idle_garbage() {
    s_valid.write(false);
    if (!garbage_when_idle) return;
    sc_bv<512> g;
    for (int w = 0; w < 16; ++w) g.set_word(w, uint32_t(garbage()));
    s_data.write(g);
    s_keep.write(garbage());
    s_last.write(garbage() & 1);
    s_user.write(garbage() & 1);
  }

  // Values written after rising edge k are sampled by the RTL at edge k+1.
  void drive() {
    rst_n.write(false);
    idle_garbage();
    for (int i = 0; i < 3; ++i) wait();
    rst_n.write(true);
    for (const Op& op : ops) {
      rst_n.write(op.kind != Op::Reset);
      if (op.kind == Op::Beat) {
        s_valid.write(true);
        s_data.write(op.data);
        s_keep.write(op.keep);
        s_last.write(op.last);
        s_user.write(op.user);
      } else {
        idle_garbage();
      }
      wait();
    }
    rst_n.write(true);
    idle_garbage();
    stim_done = true;
    const uint64_t stop = edge;
    while (edge - std::max(last_activity, stop) < uint64_t(quiet_cycles)) {
      idle_garbage();
      wait();
    }
    done = true;
    sc_stop();
  }

  static void append_bytes(PacketOut& p, const sc_bv<512>& d, uint64_t keep) {
    uint8_t b[64];
    for (int w = 0; w < 16; ++w) roce::put_le32(b + 4 * w, d.get_word(w));
    for (int i = 0; i < 64 && ((keep >> i) & 1); ++i) p.bytes.push_back(b[i]);
  }

  void check_keep(const char* what, uint64_t keep, bool last) {
    const bool contiguous = (keep & (keep + 1)) == 0;  // ones from bit 0
    if (!contiguous || keep == 0 || (!last && keep != kAllKeep))
      protocol_errors.push_back(std::string(what) + ": tkeep 0x" + hex(keep) + (last ? " (last)" : "") +
                                " at edge " + std::to_string(edge));
  }

  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
    return b;
  }

  // Samples the values held during the cycle that ends at this edge.
  void monitor() {
    ++edge;
    if (on_edge) on_edge();
    if (!rst_n.read()) {  // a reset drops what was half received
      in_pay = in_byp = false;
      cur_pay = cur_byp = PacketOut{};
      return;
    }
    if (s_valid.read()) {
      ++beats;
      if (s_last.read()) last_edges.push_back(edge);
    }
    if (desc_valid.read()) {
      const sc_bv<1024> v = desc.read();
      ernic::seam::RxdBits bits{};
      for (int w = 0; w < 32; ++w) bits[w / 2] |= uint64_t(v.get_word(w)) << (32 * (w % 2));
      descs.push_back({ernic::seam::unpack_rx(bits), edge});
      last_activity = edge;
    }
    if (pay_valid.read()) {
      if (!in_pay) cur_pay = PacketOut{{}, edge, 0};
      in_pay = true;
      check_keep("payload", pay_keep.read(), pay_last.read());
      append_bytes(cur_pay, pay_data.read(), pay_keep.read());
      if (pay_last.read()) {
        cur_pay.last_edge = edge;
        pays.push_back(cur_pay);
        in_pay = false;
      }
      last_activity = edge;
    }
    if (byp_valid.read()) {
      if (!in_byp) cur_byp = PacketOut{{}, edge, 0};
      in_byp = true;
      check_keep("bypass", byp_keep.read(), byp_last.read());
      append_bytes(cur_byp, byp_data.read(), byp_keep.read());
      if (byp_last.read()) {
        cur_byp.last_edge = edge;
        byps.push_back(cur_byp);
        in_byp = false;
      }
      last_activity = edge;
    }
  }
};

// The two implementations of the seam.
struct CutThrough {
  using Dut = Vroce_rx;
  static constexpr bool kExactLatency = true;
  static constexpr const char* kName = "roce_rx";
};
struct StoreAndForward {
  using Dut = Vroce_rx_alt;
  static constexpr bool kExactLatency = false;
  static constexpr const char* kName = "roce_rx_alt";
};

// Beats of one frame; bytes past the frame in the last beat are 0xA5, tuser
// is random on beats other than the last (read on the last only).
void append_frame(std::vector<Op>& ops, const Stim& s, std::mt19937_64& rng, double bubble = 0.0,
                  int max_bubble = 3) {
  const Bytes& f = s.bytes;
  const size_t nbeats = (f.size() + 63) / 64;
  for (size_t b = 0; b < nbeats; ++b) {
    if (bubble > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < bubble)
      for (int i = 1 + int(rng() % max_bubble); i > 0; --i) ops.push_back(Op{});
    uint8_t chunk[64];
    std::memset(chunk, 0xA5, sizeof chunk);
    const size_t n = std::min<size_t>(64, f.size() - b * 64);
    std::memcpy(chunk, f.data() + b * 64, n);
    Op op;
    op.kind = Op::Beat;
    for (int w = 0; w < 16; ++w) op.data.set_word(w, roce::get_le32(chunk + 4 * w));
    op.keep = n == 64 ? kAllKeep : (uint64_t(1) << n) - 1;
    op.last = b + 1 == nbeats;
    op.user = op.last ? s.bad_fcs : bool(rng() & 1);
    ops.push_back(op);
  }
}

void append_frames(std::vector<Op>& ops, const std::vector<Stim>& stims, std::mt19937_64& rng, double bubble = 0.0,
                   int max_bubble = 3) {
  for (const Stim& s : stims) append_frame(ops, s, rng, bubble, max_bubble);
}

std::string frame_hex(const Bytes& b, size_t max = 16) {
  std::string s;
  char t[4];
  for (size_t i = 0; i < b.size() && i < max; ++i) {
    std::snprintf(t, sizeof t, "%02x", b[i]);
    s += t;
  }
  return s + (b.size() > max ? "..." : "");
}

// First differing byte of two byte strings, as text ("" when equal).
std::string bytes_diff(const Bytes& rtl, const Bytes& ref) {
  if (rtl == ref) return "";
  const size_t n = std::min(rtl.size(), ref.size());
  size_t i = 0;
  while (i < n && rtl[i] == ref[i]) ++i;
  std::ostringstream o;
  o << "rtl " << rtl.size() << " B, expected " << ref.size() << " B";
  if (i < n) o << "; first difference at byte " << i << ": 0x" << std::hex << int(rtl[i]) << " vs 0x" << int(ref[i]);
  return o.str();
}

// What the RTL gave for each input frame, matched in order.
struct Matched {
  std::vector<uint64_t> latency;             // per descriptor: cycles after its frame's last beat
  std::vector<RxOutput> ref;                 // per stimulus
  std::vector<std::optional<RxDesc>> desc;   // per stimulus (RoCE frames)
  std::vector<std::optional<Bytes>> pay;     // per stimulus (frames with a payload)
};

// Compares the RTL's outputs with the reference model, frame by frame.
template <class Impl>
Matched compare(RxTb<typename Impl::Dut>& tb, const std::vector<Stim>& stims) {
  Matched m;
  m.desc.resize(stims.size());
  m.pay.resize(stims.size());
  std::vector<size_t> exp_desc, exp_pay, exp_byp;
  for (size_t k = 0; k < stims.size(); ++k) {
    m.ref.push_back(ernic::seam::roce_rx_ref(stims[k].bytes, stims[k].bad_fcs));
    if (m.ref[k].bypass) exp_byp.push_back(k);
    else exp_desc.push_back(k);
    if (!m.ref[k].bypass && !m.ref[k].payload.empty()) exp_pay.push_back(k);
  }
  EXPECT_TRUE(tb.done) << Impl::kName;
  EXPECT_TRUE(tb.protocol_errors.empty()) << Impl::kName << ": " << tb.protocol_errors.front();
  EXPECT_EQ(tb.last_edges.size(), stims.size()) << Impl::kName << ": frames accepted";
  EXPECT_EQ(tb.descs.size(), exp_desc.size()) << Impl::kName << ": descriptors";
  EXPECT_EQ(tb.pays.size(), exp_pay.size()) << Impl::kName << ": payload packets";
  EXPECT_EQ(tb.byps.size(), exp_byp.size()) << Impl::kName << ": bypass frames";
  int bad = 0;
  auto fail = [&](size_t k, const std::string& what) {
    if (++bad <= 12)
      ADD_FAILURE() << Impl::kName << ", frame " << k << " (" << stims[k].name << ", " << stims[k].bytes.size()
                    << " B, " << frame_hex(stims[k].bytes) << "): " << what;
  };
  for (size_t i = 0; i < std::min(tb.descs.size(), exp_desc.size()); ++i) {
    const size_t k = exp_desc[i];
    m.desc[k] = tb.descs[i].d;
    const std::string d = ernic::seam::rx_desc_diff(tb.descs[i].d, m.ref[k].desc);
    if (!d.empty()) fail(k, "descriptor, first difference (rtl vs reference) " + d);
    if (k < tb.last_edges.size()) {
      const uint64_t lat = tb.descs[i].edge - tb.last_edges[k];
      m.latency.push_back(lat);
      if (Impl::kExactLatency && lat != ernic::seam::kRoceRxDescLatency)
        fail(k, "descriptor latency " + std::to_string(lat) + " cycles, expected " +
                    std::to_string(ernic::seam::kRoceRxDescLatency));
      if (lat < ernic::seam::kRoceRxDescLatency) fail(k, "descriptor before the frame ended");
    }
  }
  for (size_t i = 0; i < std::min(tb.pays.size(), exp_pay.size()); ++i) {
    const size_t k = exp_pay[i];
    m.pay[k] = tb.pays[i].bytes;
    const std::string d = bytes_diff(tb.pays[i].bytes, m.ref[k].payload);
    if (!d.empty()) fail(k, "payload: " + d);
    // Order (SEAM.md): after the previous frame's descriptor, before the
    // next one's; roce_rx: no later than its own.
    const auto it = std::find(exp_desc.begin(), exp_desc.end(), k);
    const size_t di = size_t(it - exp_desc.begin());
    if (di < tb.descs.size()) {
      if (di > 0 && tb.pays[i].first_edge <= tb.descs[di - 1].edge)
        fail(k, "payload starts before the previous frame's descriptor");
      if (di + 1 < tb.descs.size() && tb.pays[i].last_edge >= tb.descs[di + 1].edge)
        fail(k, "payload ends after the next frame's descriptor");
      if (Impl::kExactLatency && tb.pays[i].last_edge > tb.descs[di].edge)
        fail(k, "payload ends after its descriptor");
      if (Impl::kExactLatency && k < tb.last_edges.size() && tb.pays[i].last_edge > tb.last_edges[k] &&
          tb.pays[i].last_edge - tb.last_edges[k] > ernic::seam::kRoceRxPayloadLatency)
        fail(k, "last payload beat " + std::to_string(tb.pays[i].last_edge - tb.last_edges[k]) +
                    " cycles after the frame");
    }
  }
  for (size_t i = 0; i < std::min(tb.byps.size(), exp_byp.size()); ++i) {
    const size_t k = exp_byp[i];
    const std::string d = bytes_diff(tb.byps[i].bytes, stims[k].bytes);
    if (!d.empty()) fail(k, "bypass frame: " + d);
    if (Impl::kExactLatency && k < tb.last_edges.size() && tb.byps[i].last_edge - tb.last_edges[k] != 2)
      fail(k, "bypass last beat " + std::to_string(tb.byps[i].last_edge - tb.last_edges[k]) +
                  " cycles after the frame, expected 2");
  }
  EXPECT_EQ(bad, 0) << Impl::kName << ": frames with differences";
  return m;
}

// A RoCE frame with syndrome bits 4 and 8 clear: the descriptor and the
// payload equal roce::decode's fields; the frame rebuilt from them (headers,
// payload, pad, ICRC) is the received frame up to its IP end.
void check_decoder(const Stim& s, const RxDesc& d, const Bytes& payload) {
  SCOPED_TRACE(s.name);
  const auto fr = roce::decode(s.bytes);
  ASSERT_TRUE(fr.has_value());
  const roce::Frame& f = *fr;
  auto mac = [](const roce::MacAddr& a) {
    uint64_t v = 0;
    for (uint8_t b : a.b) v = v << 8 | b;
    return v;
  };
  EXPECT_EQ(d.eth_dst, mac(f.eth.dst));
  EXPECT_EQ(d.eth_src, mac(f.eth.src));
  EXPECT_EQ(d.ethertype, f.eth.ethertype);
  EXPECT_EQ(d.ipv6, f.ipv6);
  if (f.ipv6) {
    EXPECT_EQ(d.tos, f.ip6.traffic_class);
    EXPECT_EQ(d.flow_label, f.ip6.flow_label);
    EXPECT_EQ(d.ip_len, f.ip6.payload_len);
    EXPECT_EQ(d.ttl, f.ip6.hop_limit);
    EXPECT_TRUE(std::equal(d.ip_src.begin(), d.ip_src.end(), f.ip6.src.b.begin()));
    EXPECT_TRUE(std::equal(d.ip_dst.begin(), d.ip_dst.end(), f.ip6.dst.b.begin()));
  } else {
    EXPECT_EQ(d.ihl, 5);
    EXPECT_EQ(d.tos, f.ip4.tos);
    EXPECT_EQ(d.ip_len, f.ip4.total_len);
    EXPECT_EQ(d.ip_id, f.ip4.id);
    EXPECT_EQ(d.ip_frag, uint16_t(f.ip4.flags << 13 | f.ip4.frag_off));
    EXPECT_EQ(d.ttl, f.ip4.ttl);
    EXPECT_EQ(d.ip_csum, f.ip4.checksum);
    EXPECT_EQ(roce::get_be32(d.ip_src.data() + 12), f.ip4.src.v);
    EXPECT_EQ(roce::get_be32(d.ip_dst.data() + 12), f.ip4.dst.v);
  }
  EXPECT_EQ(d.udp_sport, f.udp.sport);
  EXPECT_EQ(d.udp_dport, f.udp.dport);
  EXPECT_EQ(d.udp_len, f.udp.len);
  EXPECT_EQ(d.udp_csum, f.udp.checksum);
  EXPECT_EQ(d.opcode, f.bth.opcode);
  EXPECT_EQ(d.se, f.bth.se);
  EXPECT_EQ(d.mig, f.bth.mig);
  EXPECT_EQ(d.pad_cnt, f.bth.pad_cnt);
  EXPECT_EQ(d.tver, f.bth.tver);
  EXPECT_EQ(d.pkey, f.bth.pkey);
  EXPECT_EQ(d.bth_b4, f.bth.resv8a);
  EXPECT_EQ(d.dest_qp, f.bth.dest_qp);
  EXPECT_EQ(d.ack_req, f.bth.ack_req);
  EXPECT_EQ(d.resv7, f.bth.resv7);
  EXPECT_EQ(d.psn, f.bth.psn);
  EXPECT_EQ(d.ext_len, roce::opcode_info(f.bth.opcode)->ext_len);
  EXPECT_EQ(d.payload_len, f.payload.size());
  EXPECT_EQ(payload, f.payload);
  EXPECT_EQ(d.icrc, f.icrc);
  EXPECT_EQ(d.frame_len, s.bytes.size());
  // The whole frame from the descriptor (ext headers included).
  roce::EncodeOptions raw;
  raw.fill_lengths = raw.fill_ip_checksum = raw.fill_pad = raw.fill_icrc = false;
  const Bytes rebuilt = roce::encode(ernic::seam::frame_from_rx_desc(d, payload), raw);
  const size_t ip_end = f.ipv6 ? 54 + f.ip6.payload_len : 14 + f.ip4.total_len;
  EXPECT_EQ(bytes_diff(rebuilt, Bytes(s.bytes.begin(), s.bytes.begin() + ip_end)), "");
}

// The header bytes rebuilt from any RoCE frame's descriptor are its first bytes.
void check_header_bytes(const Stim& s, const RxDesc& d) {
  const size_t n = std::min<size_t>(d.hdr_len, s.bytes.size());
  EXPECT_EQ(bytes_diff(ernic::seam::rx_header_bytes(d), Bytes(s.bytes.begin(), s.bytes.begin() + n)), "")
      << s.name;
}

// Runs the stimulus in tb and compares; returns what matched.
template <class Impl>
Matched run(RxTb<typename Impl::Dut>& tb, const std::vector<Stim>& stims) {
  sc_start();
  return compare<Impl>(tb, stims);
}

std::vector<Stim> load_captures(size_t* roce_frames = nullptr) {
  static const char* kFiles[] = {"pingpong_rc.pcap", "rdma_write_bw.pcap", "rdma_read_bw.pcap",
                                 "rdma_send_bw.pcap", "rdma_write_lat.pcap"};
  std::vector<Stim> out;
  size_t roce = 0;
  for (const char* name : kFiles) {
    const std::string path = std::string(ERNIC_TEST_DATA) + "/captures/" + name;
    std::string err;
    const auto frames = roce_test::read_pcap(path, &err);
    EXPECT_FALSE(frames.empty()) << path << ": " << err;
    for (size_t i = 0; i < frames.size(); ++i) {
      out.push_back({frames[i], false, std::string(name) + " #" + std::to_string(i + 1)});
      if (roce::is_roce(frames[i].data(), frames[i].size())) ++roce;
    }
  }
  if (roce_frames) *roce_frames = roce;
  return out;
}

// A RoCEv2 frame from roce::encode: the opcode's extension headers and the
// header fields random, the payload given.
roce::Frame make_frame(std::mt19937_64& rng, bool v6, uint8_t opcode, size_t payload_len) {
  roce::Frame f;
  for (auto& b : f.eth.dst.b) b = uint8_t(rng());
  for (auto& b : f.eth.src.b) b = uint8_t(rng());
  f.ipv6 = v6;
  f.eth.ethertype = v6 ? roce::kEtherTypeIpv6 : roce::kEtherTypeIpv4;
  if (v6) {
    f.ip6.traffic_class = uint8_t(rng());
    f.ip6.flow_label = uint32_t(rng()) & 0xFFFFF;
    f.ip6.hop_limit = uint8_t(rng());
    for (auto& b : f.ip6.src.b) b = uint8_t(rng());
    for (auto& b : f.ip6.dst.b) b = uint8_t(rng());
  } else {
    f.ip4.tos = uint8_t(rng());
    f.ip4.ttl = uint8_t(rng());
    f.ip4.id = uint16_t(rng());
    f.ip4.src.v = uint32_t(rng());
    f.ip4.dst.v = uint32_t(rng());
  }
  f.udp.sport = uint16_t(0xC000 | (rng() & 0x3FFF));
  f.udp.checksum = uint16_t(rng());
  f.bth.opcode = opcode;
  f.bth.se = rng() & 1;
  f.bth.mig = rng() & 1;
  f.bth.pkey = uint16_t(rng());
  f.bth.resv8a = uint8_t(rng());
  f.bth.dest_qp = uint32_t(rng()) & 0xFFFFFF;
  f.bth.ack_req = rng() & 1;
  f.bth.resv7 = uint8_t(rng() & 0x7F);
  f.bth.psn = uint32_t(rng()) & 0xFFFFFF;
  f.deth = roce::Deth{uint32_t(rng()), uint8_t(rng()), uint32_t(rng()) & 0xFFFFFF};
  f.reth = roce::Reth{rng(), uint32_t(rng()), uint32_t(rng())};
  f.atomic_eth = roce::AtomicEth{rng(), uint32_t(rng()), rng(), rng()};
  f.aeth = roce::Aeth{uint8_t(rng() & 0x7F), uint32_t(rng()) & 0xFFFFFF};
  f.atomic_ack_eth = roce::AtomicAckEth{rng()};
  f.immdt = uint32_t(rng());
  f.ieth = uint32_t(rng());
  f.payload.resize(payload_len);
  for (auto& b : f.payload) b = uint8_t(rng());
  return f;
}

Bytes wire(const roce::Frame& f) { return roce::encode(f); }

// Recomputes the IPv4 header checksum in place (IHL 5).
void fix_ip4_checksum(Bytes& b) {
  b[24] = b[25] = 0;
  roce::put_be16(b.data() + 24, roce::ipv4_checksum(b.data() + 14));
}

// Recomputes the ICRC in place over [0, ip_end - 4).
void fix_icrc(Bytes& b) {
  const bool v6 = roce::get_be16(b.data() + 12) == roce::kEtherTypeIpv6;
  const size_t ip_end = v6 ? 54 + roce::get_be16(b.data() + 18) : 14 + roce::get_be16(b.data() + 16);
  roce::put_le32(b.data() + ip_end - 4, roce::compute_icrc(b.data(), ip_end - 4));
}

// Each case below is a template over the implementation, registered twice
// at the end: RoceRx.<case> (rtl/roce_rx) and RoceRxAlt.<case> (the
// users'-RTL example).

// Every frame of every capture (RoCE and not), three times: back to back,
// with random bubbles inside and between frames, and with a bubble before
// every beat. Each RoCE frame gives the decoder's fields and no syndrome
// (the captures are correct); the others come out on the bypass stream.
template <class TypeParam>
void CapturedFramesMatchDecoderAndReference() {
  init_kernel();
  size_t n_roce = 0;
  const auto caps = load_captures(&n_roce);
  ASSERT_EQ(caps.size(), 246u);
  ASSERT_EQ(n_roce, 100u);
  RxTb<typename TypeParam::Dut> tb("tb");
  std::mt19937_64 rng(0xCA97);
  std::vector<Stim> stims;
  for (int round = 0; round < 3; ++round) {
    const double bubble = round == 0 ? 0.0 : round == 1 ? 0.3 : 1.0;
    append_frames(tb.ops, caps, rng, bubble, round == 2 ? 1 : 3);
    stims.insert(stims.end(), caps.begin(), caps.end());
  }
  const Matched m = run<TypeParam>(tb, stims);
  EXPECT_EQ(tb.descs.size(), 300u);
  EXPECT_EQ(tb.byps.size(), 3u * 146u);
  for (size_t k = 0; k < stims.size(); ++k) {
    if (!m.desc[k]) continue;
    EXPECT_EQ(m.desc[k]->syndrome, 0u) << stims[k].name;
    check_decoder(stims[k], *m.desc[k], m.pay[k].value_or(Bytes{}));
    check_header_bytes(stims[k], *m.desc[k]);
  }
  // The three rounds gave the same descriptors, whatever the bubbles.
  for (size_t i = 0; i < 100 && i + 200 < tb.descs.size(); ++i) {
    EXPECT_EQ(tb.descs[i].d, tb.descs[i + 100].d);
    EXPECT_EQ(tb.descs[i].d, tb.descs[i + 200].d);
  }
}

// What a single flipped bit at byte `at`, bit `bit` of a correct RoCE frame
// must give, from the ICRC/checksum coverage rules alone (not the model):
// kBypass for the bytes the classifier reads, the exact syndrome for plain
// bytes, nullopt for length/opcode/pad/IHL bits (the reference decides; the
// test still requires bit 30, 4 or 8).
constexpr uint32_t kBypass = 0xFFFFFFFF;
std::optional<uint32_t> flip_expect(const Bytes& f, size_t at, int bit) {
  const bool v6 = roce::get_be16(f.data() + 12) == roce::kEtherTypeIpv6;
  const size_t ip_end = v6 ? 54 + roce::get_be16(f.data() + 18) : 14 + roce::get_be16(f.data() + 16);
  if (at < 12) return 0u;                        // MAC addresses: not covered
  if (at >= ip_end) return 0u;                   // Ethernet padding
  if (at == 12 || at == 13) return kBypass;      // EtherType
  if (at == 14 && bit >= 4) return kBypass;      // IP version
  if (!v6) {
    if (at == 14) return std::nullopt;           // IHL: moves the UDP header for the classifier
    if (at == 23 || at == 36 || at == 37) return kBypass;  // protocol, UDP destination port
    if (at == 16 || at == 17 || at == 38 || at == 39) return std::nullopt;  // IP / UDP lengths
    if (at == 42 || (at == 43 && (bit == 4 || bit == 5))) return std::nullopt;  // opcode, PadCnt
    const bool masked = at == 15 || at == 22 || at == 24 || at == 25 || at == 40 || at == 41 || at == 46;
    const uint32_t csum = at < 34 ? kSynIpChecksum : 0u;  // the IPv4 header checksum covers 14..33
    return csum | (masked ? 0u : kSynIcrc);
  }
  if (at == 20 || at == 56 || at == 57) return kBypass;  // next header, UDP destination port
  if (at == 18 || at == 19 || at == 58 || at == 59) return std::nullopt;
  if (at == 62 || (at == 63 && (bit == 4 || bit == 5))) return std::nullopt;
  const bool masked = (at == 14 && bit < 4) || at == 15 || at == 16 || at == 17 || at == 21 || at == 60 ||
                      at == 61 || at == 66;
  return masked ? 0u : kSynIcrc;
}

// One flipped bit at every position of a few frames (IPv4 and IPv6, short,
// padded, with extension headers) and at random positions of every captured
// RoCE frame: every flip in the ICRC-covered bytes that leaves the frame
// RoCE with sane lengths sets bit 30, the masked fields do not, IPv4 header
// bytes set bit 2; each syndrome is exactly the reference model's.
template <class TypeParam>
void OneFlippedBitSetsIcrcSyndrome() {
  init_kernel();
  const auto caps = load_captures();
  std::vector<Bytes> roce_caps;
  for (const Stim& s : caps)
    if (roce::is_roce(s.bytes.data(), s.bytes.size())) roce_caps.push_back(s.bytes);
  ASSERT_EQ(roce_caps.size(), 100u);
  std::mt19937_64 rng(0xF11B);
  // Whole frames: a captured ACK (62 B), READ request (RETH) and WRITE_ONLY;
  // an IPv6 SEND_ONLY_IMM with pad; a 58-byte SEND_LAST padded to 60.
  std::vector<Bytes> full;
  auto find_cap = [&](uint8_t opcode) {
    for (const Bytes& b : roce_caps)
      if (b[42] == opcode) return b;
    return Bytes{};
  };
  full.push_back(find_cap(roce::op::RC_ACK));
  full.push_back(find_cap(roce::op::RC_READ_REQUEST));
  full.push_back(find_cap(roce::op::RC_WRITE_ONLY));
  full.push_back(wire(make_frame(rng, true, roce::op::RC_SEND_ONLY_IMM, 45)));
  Bytes padded = wire(make_frame(rng, false, roce::op::RC_SEND_LAST, 0));
  padded.push_back(0x5A);
  padded.push_back(0xC3);
  full.push_back(padded);
  for (const Bytes& b : full) ASSERT_FALSE(b.empty());

  struct Flip {
    size_t frame, at;
    int bit;
  };
  std::vector<Stim> stims;
  std::vector<Flip> flips;
  std::vector<const Bytes*> originals;
  auto add = [&](const Bytes& orig, size_t at, int bit) {
    Stim s{orig, false, ""};
    s.bytes[at] ^= uint8_t(1 << bit);
    s.name = "flip byte " + std::to_string(at) + " bit " + std::to_string(bit);
    flips.push_back({originals.size() - 1, at, bit});  // the frame pushed last
    stims.push_back(std::move(s));
  };
  for (const Bytes& b : full) {
    originals.push_back(&b);
    for (size_t at = 0; at < b.size(); ++at)
      for (int bit = 0; bit < 8; ++bit) add(b, at, bit);
  }
  for (const Bytes& b : roce_caps) {
    originals.push_back(&b);
    for (int i = 0; i < 16; ++i) add(b, rng() % b.size(), int(rng() % 8));
  }
  RxTb<typename TypeParam::Dut> tb("tb");
  append_frames(tb.ops, stims, rng, 0.1);
  const Matched m = run<TypeParam>(tb, stims);
  size_t icrc_set = 0, masked_clean = 0, csum_set = 0, bypassed = 0;
  int bad = 0;
  for (size_t k = 0; k < stims.size(); ++k) {
    const Flip& fl = flips[k];
    const Bytes& orig = *originals[fl.frame];
    const std::optional<uint32_t> want = flip_expect(orig, fl.at, fl.bit);
    const RxOutput& ref = m.ref[k];
    std::string why;
    if (want && *want == kBypass) {
      if (!ref.bypass) why = "expected bypass";
    } else if (ref.bypass) {
      if (want) why = "unexpected bypass";
    } else if (want) {
      if (ref.desc.syndrome != *want) why = "reference syndrome 0x" + RxTb<Vroce_rx>::hex(ref.desc.syndrome);
      if (m.desc[k] && m.desc[k]->syndrome != *want)
        why = "rtl syndrome 0x" + RxTb<Vroce_rx>::hex(m.desc[k]->syndrome);
    } else if (!(ref.desc.syndrome & (kSynIcrc | kSynLength | kSynHeader))) {
      why = "a covered bit changed, but neither bit 30 nor 4 nor 8 is set";
    }
    if (!why.empty() && ++bad <= 10)
      ADD_FAILURE() << stims[k].name << " of frame " << fl.frame << " (" << orig.size() << " B): " << why
                    << (want && *want != kBypass ? ", expected 0x" + RxTb<Vroce_rx>::hex(*want) : "");
    if (!ref.bypass && (ref.desc.syndrome & kSynIcrc)) ++icrc_set;
    if (!ref.bypass && (ref.desc.syndrome & kSynIpChecksum)) ++csum_set;
    if (want && *want == 0) ++masked_clean;
    if (ref.bypass) ++bypassed;
    if (m.desc[k]) check_header_bytes(stims[k], *m.desc[k]);
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(icrc_set, stims.size() / 2);
  EXPECT_GT(masked_clean, 100u);
  EXPECT_GT(csum_set, 100u);
  EXPECT_GT(bypassed, 50u);
  std::printf("[ flips    ] %zu one-bit flips: %zu set bit 30, %zu bit 2, %zu nothing (masked or not covered), "
              "%zu made the frame non-RoCE\n",
              stims.size(), icrc_set, csum_set, masked_clean, bypassed);
}

// Length and header errors, bad FCS, bad ICRC and checksum, and frames cut
// short, each with the bits the rules name (asserted here) and the exact
// descriptor and payload of the reference model.
template <class TypeParam>
void LengthHeaderFcsAndIcrcErrors() {
  init_kernel();
  std::mt19937_64 rng(0xE44);
  struct Case {
    Stim s;
    uint32_t must;      // bits that must be set
    uint32_t must_not;  // bits that must be clear
  };
  std::vector<Case> cases;
  auto add = [&](Bytes b, const std::string& name, uint32_t must, uint32_t must_not, bool fcs = false) {
    cases.push_back({{std::move(b), fcs, name}, must, must_not});
  };
  const Bytes v4 = wire(make_frame(rng, false, roce::op::RC_SEND_ONLY, 100));   // 158 B
  const Bytes v6 = wire(make_frame(rng, true, roce::op::RC_WRITE_FIRST, 200));  // RETH
  add(v4, "good IPv4", 0, ~0u);
  add(v6, "good IPv6", 0, ~0u);
  add(v4, "bad FCS", kSynFcs, ~kSynFcs, true);
  add(v6, "bad FCS IPv6", kSynFcs, ~kSynFcs, true);
  {
    Bytes b = v4;
    b[100] ^= 0x10;
    add(b, "payload bit: ICRC", kSynIcrc, ~kSynIcrc);
    b = v4;
    b[b.size() - 1] ^= 0x80;
    add(b, "ICRC byte", kSynIcrc, ~kSynIcrc);
    b = v4;
    b[24] ^= 0x01;
    add(b, "IPv4 checksum only", kSynIpChecksum, ~kSynIpChecksum);
    b = v4;
    b[24] ^= 0x01;
    b[100] ^= 0x01;
    add(b, "checksum, ICRC and FCS", kSynIpChecksum | kSynIcrc | kSynFcs, kSynLength | kSynHeader, true);
  }
  // Frames cut short: IP length beyond the bytes received.
  for (size_t n : {42, 50, 54, 57, 58, 63, 64, 65, 100, 127, 128, 129, 150, 153, 154, 157}) {
    Bytes b(v4.begin(), v4.begin() + n);
    add(b, "IPv4 cut at " + std::to_string(n), kSynLength, kSynIcrc | kSynHeader);
  }
  for (size_t n : {62, 80, 100, 180, 290}) {
    Bytes b(v6.begin(), v6.begin() + n);
    add(b, "IPv6 cut at " + std::to_string(n), kSynLength, kSynIcrc | kSynHeader);
  }
  {
    Bytes b = v4;  // IP and UDP lengths 8 bytes beyond the frame (consistent, checksum right)
    roce::put_be16(b.data() + 16, uint16_t(roce::get_be16(b.data() + 16) + 8));
    roce::put_be16(b.data() + 38, uint16_t(roce::get_be16(b.data() + 38) + 8));
    fix_ip4_checksum(b);
    add(b, "IP length beyond the frame", kSynLength, kSynIcrc | kSynHeader | kSynIpChecksum);
    b = v4;
    roce::put_be16(b.data() + 16, 16);
    fix_ip4_checksum(b);
    add(b, "IPv4 total length 16", kSynLength, kSynIcrc | kSynIpChecksum);
    b = v4;
    roce::put_be16(b.data() + 38, uint16_t(roce::get_be16(b.data() + 38) + 4));
    add(b, "UDP length + 4", kSynLength, kSynIcrc | kSynHeader);
    b = v4;
    roce::put_be16(b.data() + 38, uint16_t(roce::get_be16(b.data() + 38) - 4));
    add(b, "UDP length - 4", kSynLength, kSynIcrc | kSynHeader);
    b = v6;
    roce::put_be16(b.data() + 18, uint16_t(roce::get_be16(b.data() + 18) + 4));
    add(b, "IPv6 payload length + 4", kSynLength, kSynIcrc | kSynHeader);
    b = v4;  // IP/UDP lengths shorter than the frame, consistent: the rest is padding
    roce::put_be16(b.data() + 16, uint16_t(roce::get_be16(b.data() + 16) - 40));
    roce::put_be16(b.data() + 38, uint16_t(roce::get_be16(b.data() + 38) - 40));
    fix_ip4_checksum(b);
    fix_icrc(b);
    add(b, "IP length 40 bytes short of the frame (padding)", 0, ~0u);
  }
  {
    // PadCnt larger than the payload: SEND_ONLY with 2 payload bytes, PadCnt 3.
    roce::Frame f = make_frame(rng, false, roce::op::RC_SEND_ONLY, 2);
    f.bth.pad_cnt = 3;
    f.pad.clear();
    roce::EncodeOptions o;
    o.fill_pad = false;
    add(roce::encode(f, o), "PadCnt 3 > 2 payload bytes", kSynLength, kSynIcrc);
    f = make_frame(rng, false, roce::op::RC_ACK, 0);  // AETH and PadCnt 1, nothing to pad
    f.bth.pad_cnt = 1;
    f.pad.clear();
    add(roce::encode(f, o), "ACK with PadCnt 1", kSynLength, kSynIcrc);
    f = make_frame(rng, true, roce::op::RC_SEND_ONLY, 3);  // IPv6, PadCnt 1 after 3 bytes: fine
    add(wire(f), "IPv6 3 bytes + pad 1", 0, ~0u);
  }
  // Unknown opcodes (ICRC right): bit 8, no ICRC check, no payload.
  for (uint8_t op : {0x15, 0x18, 0x1F, 0x20, 0x60, 0x66, 0x80, 0x82, 0xFF}) {
    roce::Frame f = make_frame(rng, op & 1, op, 40);
    add(wire(f), "unknown opcode 0x" + RxTb<Vroce_rx>::hex(op), kSynHeader, kSynIcrc);
  }
  // IPv4 options (IHL > 5): the classifier finds UDP after the options; the
  // fields stay at the offsets of IHL 5 (SEAM.md) and bit 8 is set.
  for (int ihl : {6, 8, 11, 12, 15}) {
    Bytes b = v4;
    const size_t opt = size_t(ihl - 5) * 4;
    b.insert(b.begin() + 34, opt, 0x01);  // NOP options
    b[14] = uint8_t(0x40 | ihl);
    roce::put_be16(b.data() + 16, uint16_t(roce::get_be16(b.data() + 16) + opt));
    add(b, "IHL " + std::to_string(ihl), kSynHeader, kSynIpChecksum | kSynIcrc);
  }
  {
    // IHL 11: the UDP header ends at byte 66, so a frame of 65 bytes is not RoCE.
    Bytes b = v4;
    b.insert(b.begin() + 34, 24, 0x01);
    b[14] = 0x4B;
    add(Bytes(b.begin(), b.begin() + 65), "IHL 11, 65 bytes (bypass)", 0, 0);
    add(Bytes(b.begin(), b.begin() + 66), "IHL 11, 66 bytes", kSynHeader | kSynLength, 0);
    add(Bytes(b.begin(), b.begin() + 64), "IHL 11, 64 bytes (bypass)", 0, 0);
  }
  {
    Bytes b = v4;  // a later fragment still classifies as RoCE (the ERNIC model's check)
    roce::put_be16(b.data() + 20, 0x2010);
    fix_ip4_checksum(b);
    fix_icrc(b);
    add(b, "fragment offset", 0, ~0u);
  }
  std::vector<Stim> stims;
  for (const Case& c : cases) stims.push_back(c.s);
  RxTb<typename TypeParam::Dut> tb("tb");
  append_frames(tb.ops, stims, rng, 0.2);
  const Matched m = run<TypeParam>(tb, stims);
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    if (c.s.name.find("(bypass)") != std::string::npos) {
      EXPECT_TRUE(m.ref[k].bypass) << c.s.name;
      continue;
    }
    ASSERT_TRUE(m.desc[k].has_value()) << c.s.name;
    const uint32_t syn = m.desc[k]->syndrome;
    EXPECT_EQ(syn & c.must, c.must) << c.s.name << ": syndrome 0x" << std::hex << syn;
    EXPECT_EQ(syn & c.must_not, 0u) << c.s.name << ": syndrome 0x" << std::hex << syn;
    check_header_bytes(c.s, *m.desc[k]);
    if (!(syn & (kSynLength | kSynHeader))) check_decoder(c.s, *m.desc[k], m.pay[k].value_or(Bytes{}));
    // A frame cut short delivers the payload bytes it received (SEAM.md).
    if (c.s.name.rfind("IPv4 cut at", 0) == 0 && c.s.bytes.size() > 54) {
      const size_t end = std::min<size_t>(c.s.bytes.size(), 154);
      EXPECT_EQ(m.desc[k]->payload_len, end - 54) << c.s.name;
    }
    if (c.s.name.rfind("unknown opcode", 0) == 0 || c.s.name.rfind("UDP length", 0) == 0)
      EXPECT_EQ(m.desc[k]->payload_len, 0u) << c.s.name;
  }
}

// Every BTH opcode: the extension-header length and syndrome bit 8 follow
// model/roce/opcodes.cpp's table, and the payload starts after them.
template <class TypeParam>
void EveryOpcodeFollowsTheTable() {
  init_kernel();
  std::mt19937_64 rng(0x0BC0);
  std::vector<Stim> stims;
  for (int v6 = 0; v6 < 2; ++v6)
    for (int op = 0; op < 256; ++op)
      stims.push_back({wire(make_frame(rng, v6, uint8_t(op), 8 + rng() % 70)), false,
                       std::string(v6 ? "IPv6 " : "IPv4 ") + roce::opcode_name(uint8_t(op))});
  RxTb<typename TypeParam::Dut> tb("tb");
  append_frames(tb.ops, stims, rng);
  const Matched m = run<TypeParam>(tb, stims);
  for (size_t k = 0; k < stims.size(); ++k) {
    ASSERT_TRUE(m.desc[k].has_value()) << stims[k].name;
    const RxDesc& d = *m.desc[k];
    const roce::OpcodeInfo* oi = roce::opcode_info(d.opcode);
    EXPECT_EQ(d.opcode, k % 256) << stims[k].name;
    EXPECT_EQ(d.ext_len, oi ? oi->ext_len : 0) << stims[k].name;
    EXPECT_EQ(d.syndrome, oi ? 0u : kSynHeader) << stims[k].name;
    EXPECT_EQ(d.hdr_len, (d.ipv6 ? 74 : 54) + d.ext_len) << stims[k].name;
    if (oi) check_decoder(stims[k], d, m.pay[k].value_or(Bytes{}));
  }
}

// Frames that are not RoCE leave on the bypass stream byte for byte, with
// no descriptor and no payload.
template <class TypeParam>
void NonRoceFramesBypassUnchanged() {
  init_kernel();
  std::mt19937_64 rng(0xB1FA);
  const Bytes v4 = wire(make_frame(rng, false, roce::op::RC_SEND_ONLY, 64));
  const Bytes v6 = wire(make_frame(rng, true, roce::op::RC_SEND_ONLY, 64));
  std::vector<Stim> stims;
  auto add = [&](Bytes b, const std::string& name) { stims.push_back({std::move(b), bool(rng() & 1), name}); };
  auto rnd = [&](size_t n) {
    Bytes b(n);
    for (auto& x : b) x = uint8_t(rng());
    return b;
  };
  {
    Bytes arp = rnd(60);  // ARP request, padded to 60
    roce::put_be16(arp.data() + 12, 0x0806);
    add(arp, "ARP");
    Bytes lldp = rnd(60);
    roce::put_be16(lldp.data() + 12, 0x88CC);
    add(lldp, "LLDP");
    Bytes big = rnd(2000);
    roce::put_be16(big.data() + 12, 0x88B5);
    add(big, "2000-byte local EtherType");
  }
  {
    roce::Frame f = make_frame(rng, false, roce::op::RC_SEND_ONLY, 64);
    f.udp.dport = 53;
    add(wire(f), "IPv4 UDP to port 53");
    f.udp.dport = 4792;
    add(wire(f), "IPv4 UDP to port 4792");
    Bytes b = v4;
    b[23] = 6;
    add(b, "IPv4 TCP");
    b = v4;
    b[14] = 0x65;
    add(b, "EtherType IPv4, version 6");
    roce::Frame g = make_frame(rng, true, roce::op::RC_SEND_ONLY, 64);
    g.udp.dport = 4792;
    add(wire(g), "IPv6 UDP to port 4792");
    b = v6;
    b[20] = 0;  // hop-by-hop options header first
    add(b, "IPv6 with an extension header");
    b = v6;
    b[14] = 0x46;
    add(b, "EtherType IPv6, version 4");
  }
  {
    Bytes b = v4;  // 802.1Q tag in front of a RoCE frame
    const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x05};
    b.insert(b.begin() + 12, tag, tag + 4);
    add(b, "VLAN-tagged RoCE");
    b = v6;
    b.insert(b.begin() + 12, tag, tag + 4);
    add(b, "VLAN-tagged RoCE IPv6");
  }
  // Too short for the classifier.
  for (size_t n : {1, 13, 14, 20, 33, 41}) add(Bytes(v4.begin(), v4.begin() + n), "IPv4 RoCE cut to " + std::to_string(n));
  for (size_t n : {53, 61}) add(Bytes(v6.begin(), v6.begin() + n), "IPv6 RoCE cut to " + std::to_string(n));
  add(rnd(64), "64 random bytes");
  add(rnd(65), "65 random bytes");
  add(rnd(1500), "1500 random bytes");
  RxTb<typename TypeParam::Dut> tb("tb");
  // Alone, back to back, and with bubbles.
  std::vector<Stim> all = stims;
  all.insert(all.end(), stims.begin(), stims.end());
  for (size_t i = 0; i < stims.size(); ++i) {
    append_frame(tb.ops, stims[i], rng);
    tb.ops.insert(tb.ops.end(), 8, Op{});
  }
  append_frames(tb.ops, stims, rng, 0.5);
  const Matched m = run<TypeParam>(tb, all);
  for (size_t k = 0; k < all.size(); ++k) EXPECT_TRUE(m.ref[k].bypass) << all[k].name;
  EXPECT_TRUE(tb.descs.empty());
  EXPECT_TRUE(tb.pays.empty());
  EXPECT_EQ(tb.byps.size(), all.size());
}

// Short IPv4 frames padded to 60 bytes, and frames with trailing bytes
// beyond the IP end (into another beat): the ICRC covers [0, ip_end - 4)
// only, the payload stops at the pad, frame_len counts every byte.
template <class TypeParam>
void EthernetPaddingAndTrailers() {
  init_kernel();
  std::mt19937_64 rng(0x9AD);
  std::vector<Stim> stims;
  auto pad_to = [&](Bytes b, size_t n) {
    while (b.size() < n) b.push_back(uint8_t(rng()));
    return b;
  };
  struct Want {
    size_t frame_len, payload_len;
  };
  std::vector<Want> want;
  auto add = [&](const roce::Frame& f, size_t n, const std::string& name) {
    const Bytes b = pad_to(wire(f), n);
    stims.push_back({b, false, name});
    want.push_back({n, f.payload.size()});
  };
  add(make_frame(rng, false, roce::op::RC_SEND_LAST, 0), 60, "SEND_LAST, 0 B, padded to 60");
  add(make_frame(rng, false, roce::op::RC_SEND_MIDDLE, 0), 60, "SEND_MIDDLE, 0 B, padded to 60");
  add(make_frame(rng, false, roce::op::RC_WRITE_LAST, 1), 62, "WRITE_LAST, 1 B + pad 3");
  add(make_frame(rng, false, roce::op::RC_ACK, 0), 72, "ACK + 10 trailing bytes");
  add(make_frame(rng, false, roce::op::RC_SEND_ONLY, 2), 128, "SEND_ONLY 2 B + 66 trailing bytes");
  add(make_frame(rng, false, roce::op::RC_SEND_ONLY, 6), 129, "SEND_ONLY 6 B + 67 trailing bytes");
  add(make_frame(rng, false, roce::op::RC_WRITE_ONLY, 0), 200, "WRITE_ONLY 0 B + trailer");
  add(make_frame(rng, true, roce::op::RC_ACK, 0), 140, "IPv6 ACK + trailer");
  add(make_frame(rng, true, roce::op::RC_SEND_ONLY, 70), 300, "IPv6 SEND_ONLY 70 B + trailer");
  RxTb<typename TypeParam::Dut> tb("tb");
  std::vector<Stim> all;
  for (int round = 0; round < 2; ++round) {
    append_frames(tb.ops, stims, rng, round ? 0.5 : 0.0);
    all.insert(all.end(), stims.begin(), stims.end());
  }
  const Matched m = run<TypeParam>(tb, all);
  for (size_t k = 0; k < all.size(); ++k) {
    ASSERT_TRUE(m.desc[k].has_value()) << all[k].name;
    const Want& w = want[k % want.size()];
    EXPECT_EQ(m.desc[k]->syndrome, 0u) << all[k].name;
    EXPECT_EQ(m.desc[k]->frame_len, w.frame_len) << all[k].name;
    EXPECT_EQ(m.desc[k]->payload_len, w.payload_len) << all[k].name;
    check_decoder(all[k], *m.desc[k], m.pay[k].value_or(Bytes{}));
  }
}

// Payload realignment: every extension-header length (so every hdr_len mod
// 64) for IPv4 and IPv6, payloads of 0..140 bytes (every last-beat length),
// with bubbles.
template <class TypeParam>
void PayloadAlignmentEveryOffsetAndLength() {
  init_kernel();
  std::mt19937_64 rng(0xA119);
  const uint8_t ops[] = {roce::op::RC_SEND_ONLY,      roce::op::RC_SEND_ONLY_IMM, roce::op::UD_SEND_ONLY,
                         roce::op::RC_ATOMIC_ACK,     roce::op::RC_WRITE_ONLY,    roce::op::RC_WRITE_ONLY_IMM,
                         roce::op::RC_CMP_SWAP};  // ext 0, 4, 8, 12, 16, 20, 28
  std::vector<Stim> stims;
  std::set<int> offsets;
  for (int v6 = 0; v6 < 2; ++v6)
    for (uint8_t op : ops)
      for (size_t len = 0; len <= 140; ++len) {
        stims.push_back({wire(make_frame(rng, v6, op, len)), false,
                         std::string(roce::opcode_name(op)) + (v6 ? " IPv6 " : " IPv4 ") + std::to_string(len) + " B"});
        offsets.insert((v6 ? 74 : 54) + roce::opcode_info(op)->ext_len);
      }
  EXPECT_EQ(offsets.size(), 12u);  // 74 and 82 are both IPv4 and IPv6 header lengths
  for (size_t len : {4000, 4093, 4096, 8192})  // PMTU-sized and larger frames
    for (int v6 = 0; v6 < 2; ++v6)
      stims.push_back({wire(make_frame(rng, v6, roce::op::RC_WRITE_MIDDLE, len)), false,
                       "WRITE_MIDDLE " + std::to_string(len) + " B"});
  RxTb<typename TypeParam::Dut> tb("tb");
  append_frames(tb.ops, stims, rng, 0.15);
  const Matched m = run<TypeParam>(tb, stims);
  for (size_t k = 0; k < stims.size(); ++k) {
    ASSERT_TRUE(m.desc[k].has_value()) << stims[k].name;
    EXPECT_EQ(m.desc[k]->syndrome, 0u) << stims[k].name;
    check_decoder(stims[k], *m.desc[k], m.pay[k].value_or(Bytes{}));
  }
}

// scapy (an independent RoCEv2 implementation) builds RoCE/IPv4 frames with
// their ICRC and some non-RoCE frames (tb/rtl/scapy_roce_rx_frames.py); the
// RTL finds scapy's opcode, QP, PSN, ICRC and payload, no syndrome except
// bit 30 on the frame changed after scapy's ICRC, and bypasses the rest.
template <class TypeParam>
void ScapyBuiltFrames() {
  init_kernel();
  const std::string pcap = std::string(ERNIC_RTL_TEST_OUT) + "/scapy_roce_rx_" + TypeParam::kName + ".pcap";
  int st = -1;
  const std::string out = roce_test::run(roce_test::shell_quote(ERNIC_PYTHON) + " " +
                                             roce_test::shell_quote(ERNIC_SOURCE_DIR "/tb/rtl/scapy_roce_rx_frames.py") +
                                             " " + roce_test::shell_quote(pcap) + " 2>&1",
                                         &st);
  ASSERT_EQ(st, 0) << out;
  std::vector<std::string> lines;
  for (const std::string& l : roce_test::split_lines(out))
    if (!l.empty()) lines.push_back(l);
  std::string err;
  const auto frames = roce_test::read_pcap(pcap, &err);
  ASSERT_EQ(frames.size(), lines.size()) << err << "\n" << out;
  ASSERT_EQ(frames.size(), 14u);
  std::vector<Stim> stims;
  for (size_t i = 0; i < frames.size(); ++i) stims.push_back({frames[i], false, "scapy #" + std::to_string(i + 1)});
  RxTb<typename TypeParam::Dut> tb("tb");
  std::mt19937_64 rng(5);
  append_frames(tb.ops, stims, rng, 0.3);
  const Matched m = run<TypeParam>(tb, stims);
  for (size_t k = 0; k < lines.size(); ++k) {
    std::istringstream in(lines[k]);
    std::string kind, payload_hex;
    in >> kind;
    if (kind == "bypass") {
      EXPECT_FALSE(m.desc[k].has_value()) << lines[k];
      continue;
    }
    ASSERT_EQ(kind, "roce") << lines[k];
    unsigned opcode, qp, psn, icrc, bad;
    in >> std::hex >> opcode >> qp >> psn >> icrc >> payload_hex >> bad;
    ASSERT_TRUE(m.desc[k].has_value()) << lines[k];
    const RxDesc& d = *m.desc[k];
    EXPECT_EQ(d.opcode, opcode) << lines[k];
    EXPECT_EQ(d.dest_qp, qp) << lines[k];
    EXPECT_EQ(d.psn, psn) << lines[k];
    EXPECT_EQ(d.icrc, icrc) << lines[k];
    EXPECT_EQ(d.syndrome, bad ? kSynIcrc : 0u) << lines[k];
    Bytes want;
    if (payload_hex != "-")
      for (size_t i = 0; i + 1 < payload_hex.size(); i += 2)
        want.push_back(uint8_t(std::stoul(payload_hex.substr(i, 2), nullptr, 16)));
    EXPECT_EQ(m.pay[k].value_or(Bytes{}), want) << lines[k];
  }
}

// A reset in the middle of a frame drops it (no descriptor, payload or
// bypass frame for it); the frames after the reset are right.
template <class TypeParam>
void ResetAbortsFrame() {
  init_kernel();
  const auto caps = load_captures();
  std::mt19937_64 rng(0x4E5);
  const Stim* big_roce = nullptr;
  const Stim* big_other = nullptr;
  for (const Stim& s : caps) {
    const bool r = roce::is_roce(s.bytes.data(), s.bytes.size());
    if (r && s.bytes.size() > 900 && !big_roce) big_roce = &s;
    if (!r && s.bytes.size() > 130 && !big_other) big_other = &s;
  }
  ASSERT_TRUE(big_roce && big_other);
  RxTb<typename TypeParam::Dut> tb("tb");
  std::vector<Op> beats;
  append_frame(beats, *big_roce, rng);
  tb.ops.insert(tb.ops.end(), beats.begin(), beats.begin() + 5);  // five beats of fifteen
  tb.ops.push_back(Op{Op::Reset});
  beats.clear();
  append_frame(beats, *big_other, rng);
  tb.ops.insert(tb.ops.end(), beats.begin(), beats.begin() + 2);  // two beats of three
  tb.ops.push_back(Op{Op::Reset});
  const std::vector<Stim> after = {caps[0], caps[1], caps[2], *big_roce, *big_other};
  append_frames(tb.ops, after, rng);
  sc_start();
  // The aborted frames left no complete output; the rest compare as usual.
  compare<TypeParam>(tb, after);
}

// The reference model's helpers on their own (no RTL).
TEST(RoceRxRef, DiffNamesTheFirstDifferingField) {
  std::mt19937_64 rng(3);
  const Bytes f = wire(make_frame(rng, false, roce::op::RC_WRITE_FIRST, 100));
  const RxOutput o = ernic::seam::roce_rx_ref(f);
  ASSERT_FALSE(o.bypass);
  EXPECT_EQ(o.desc.syndrome, 0u);
  EXPECT_EQ(o.desc.ihl, 5);
  EXPECT_EQ(ernic::seam::rx_desc_diff(o.desc, o.desc), "");
  RxDesc d = o.desc;
  d.psn ^= 1;
  d.ext[3] ^= 0x10;
  char want[64];
  std::snprintf(want, sizeof want, "psn: 0x%x vs 0x%x", d.psn, o.desc.psn);
  EXPECT_EQ(ernic::seam::rx_desc_diff(d, o.desc), want);
  d.psn ^= 1;
  EXPECT_EQ(ernic::seam::rx_desc_diff(d, o.desc).rfind("ext: ", 0), 0u);
  d = o.desc;
  d.ihl = 6;
  EXPECT_EQ(ernic::seam::rx_desc_diff(d, o.desc), "ihl: 0x6 vs 0x5");
  // ihl survives the descriptor bus (rtl/include/seam.vh RXD_IHL_LO = 33).
  const ernic::seam::RxdBits bits = ernic::seam::pack(d);
  EXPECT_EQ(ernic::seam::get_bits(bits, 33, 4), 6u);
  EXPECT_EQ(ernic::seam::unpack_rx(bits), d);
  // The frame from the descriptor is the frame.
  roce::EncodeOptions raw;
  raw.fill_lengths = raw.fill_ip_checksum = raw.fill_pad = raw.fill_icrc = false;
  EXPECT_EQ(roce::encode(ernic::seam::frame_from_rx_desc(o.desc, o.payload), raw), f);
  EXPECT_EQ(ernic::seam::rx_header_bytes(o.desc), Bytes(f.begin(), f.begin() + 70));
  EXPECT_TRUE(ernic::seam::roce_rx_ref(Bytes(f.begin(), f.begin() + 41)).bypass);  // UDP header incomplete
}

// Speed of the Verilated block in the SystemC testbench: the captures back
// to back (no idle cycle), then idle cycles.
template <class TypeParam>
void BackToBackSpeedAndIdleCost() {
  init_kernel();
  const auto caps = load_captures();
  RxTb<typename TypeParam::Dut> tb("tb");
  std::mt19937_64 rng(1);
  constexpr int kRounds = 10;
  std::vector<Stim> stims;
  for (int r = 0; r < kRounds; ++r) {
    append_frames(tb.ops, caps, rng);
    stims.insert(stims.end(), caps.begin(), caps.end());
  }
  const size_t busy_ops = tb.ops.size();
  tb.garbage_when_idle = false;  // an idle link: inputs hold still
  constexpr int kIdle = 200000;
  tb.ops.insert(tb.ops.end(), kIdle, Op{});
  std::chrono::steady_clock::time_point t_busy_end{};
  uint64_t edge_busy_end = 0;
  tb.on_edge = [&] {
    if (tb.edge == busy_ops + 4 + 64) {  // reset cycles, then the busy part and its tail
      t_busy_end = std::chrono::steady_clock::now();
      edge_busy_end = tb.edge;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  sc_start();
  const auto t1 = std::chrono::steady_clock::now();
  const Matched m = compare<TypeParam>(tb, stims);
  EXPECT_EQ(tb.beats, busy_ops);  // every stimulus cycle carried a beat
  if (!m.latency.empty())
    std::printf("[ latency  ] %s: descriptor %llu..%llu cycles after the frame's last beat (first frame %llu)\n",
                TypeParam::kName, static_cast<unsigned long long>(*std::min_element(m.latency.begin(), m.latency.end())),
                static_cast<unsigned long long>(*std::max_element(m.latency.begin(), m.latency.end())),
                static_cast<unsigned long long>(m.latency.front()));
  const double busy_s = std::chrono::duration<double>(t_busy_end - t0).count();
  const double idle_s = std::chrono::duration<double>(t1 - t_busy_end).count();
  const double idle_cycles = double(tb.edge - edge_busy_end);
  std::printf("[ speed    ] %s + SystemC testbench, back to back: %zu frames, %llu beats, %llu cycles in %.3f s: "
              "%.0f beats/s (%.2f%% of real time at 200 MHz)\n",
              TypeParam::kName, stims.size(), static_cast<unsigned long long>(tb.beats),
              static_cast<unsigned long long>(edge_busy_end), busy_s, double(tb.beats) / busy_s,
              100.0 * double(edge_busy_end) / busy_s / 200e6);
  std::printf("[ speed    ] %s idle: %.0f cycles in %.3f s: %.0f cycles/s\n", TypeParam::kName, idle_cycles, idle_s,
              idle_cycles / idle_s);
}

// Mangled frames (adversarial): RoCE frames of every opcode class cut at a
// random length (down to 1 byte), extended with random trailer bytes, and
// with random values written into the Ethernet/IP/UDP/BTH headers (IHL,
// total and UDP lengths, EtherType, version, protocol, port, opcode,
// PadCnt), some with a bad FCS, back to back and with bubbles: the RTL
// gives the reference model's descriptor, payload and bypass bytes for
// every one, and the next good frame still decodes.
template <class TypeParam>
void MangledFramesMatchReference() {
  init_kernel();
  std::mt19937_64 rng(0xBAD5EED);
  const uint8_t ops[] = {roce::op::RC_SEND_ONLY, roce::op::RC_WRITE_FIRST, roce::op::RC_WRITE_ONLY,
                         roce::op::RC_READ_REQUEST, roce::op::RC_ACK, roce::op::RC_SEND_MIDDLE,
                         roce::op::RC_WRITE_ONLY_IMM, roce::op::UD_SEND_ONLY};
  // Header bytes worth hitting: EtherType, version/IHL, total length, protocol,
  // UDP ports and length, BTH opcode and flags (IPv4 offsets; IPv6 shifts them).
  const size_t spots[] = {12, 13, 14, 16, 17, 23, 36, 37, 38, 39, 42, 43, 54, 56, 57, 58, 59, 62, 63};
  std::vector<Stim> stims;
  for (int k = 0; k < 400; ++k) {
    const bool v6 = rng() % 3 == 0;
    const size_t plen = std::vector<size_t>{0, 1, 3, 4, 60, 64, 65, 200}[rng() % 8];
    Bytes b = wire(make_frame(rng, v6, ops[rng() % std::size(ops)], plen));
    const int kind = int(rng() % 4);
    if (kind == 0 || kind == 3) {  // header values
      for (int i = 1 + int(rng() % 3); i > 0; --i) {
        const size_t at = spots[rng() % std::size(spots)];
        if (at < b.size()) b[at] = rng() % 2 ? uint8_t(rng()) : uint8_t(b[at] ^ (1u << (rng() % 8)));
      }
    }
    if (kind == 1 || kind == 3) b.resize(1 + rng() % b.size());  // cut short, down to a 1-byte runt
    if (kind == 2)
      for (int i = int(rng() % 100); i >= 0; --i) b.push_back(uint8_t(rng()));  // trailer
    stims.push_back({b, rng() % 8 == 0, "mangled " + std::to_string(k) + " kind " + std::to_string(kind)});
    if (k % 50 == 49) stims.push_back({wire(make_frame(rng, false, roce::op::RC_SEND_ONLY, 100)), false, "good"});
  }
  RxTb<typename TypeParam::Dut> tb("tb");
  append_frames(tb.ops, stims, rng, 0.3);
  const Matched m = run<TypeParam>(tb, stims);
  for (size_t k = 0; k < stims.size(); ++k)
    if (stims[k].name == "good") {
      ASSERT_TRUE(m.desc[k].has_value()) << k;
      EXPECT_EQ(m.desc[k]->syndrome, 0u) << k;
    }
}

// Every case for both implementations of the seam.
#define ROCE_RX_BOTH(name)                      \
  TEST(RoceRx, name) { name<CutThrough>(); } \
  TEST(RoceRxAlt, name) { name<StoreAndForward>(); }
ROCE_RX_BOTH(CapturedFramesMatchDecoderAndReference)
ROCE_RX_BOTH(OneFlippedBitSetsIcrcSyndrome)
ROCE_RX_BOTH(LengthHeaderFcsAndIcrcErrors)
ROCE_RX_BOTH(EveryOpcodeFollowsTheTable)
ROCE_RX_BOTH(NonRoceFramesBypassUnchanged)
ROCE_RX_BOTH(EthernetPaddingAndTrailers)
ROCE_RX_BOTH(PayloadAlignmentEveryOffsetAndLength)
ROCE_RX_BOTH(ScapyBuiltFrames)
ROCE_RX_BOTH(ResetAbortsFrame)
ROCE_RX_BOTH(MangledFramesMatchReference)
ROCE_RX_BOTH(BackToBackSpeedAndIdleCost)

}  // namespace
