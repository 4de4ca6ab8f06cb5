// tb/rtl: the Verilated TX datapath (rtl/roce_tx/roce_tx.sv, Vroce_tx)
// against the C++ encoder (roce::encode), the reference model
// (model/datapath/roce_tx_ref.h), captured frames and scapy.
//
// A SystemC testbench drives Vroce_tx at 200 MHz: descriptors (packed with
// seam::pack, reserved bits set to junk that the RTL must ignore) and
// payload beats (bytes past payload_len filled with junk), each with a
// seeded random number of idle cycles before it or none; m_axis_tready high
// or random under the seed. One SC_THREAD samples every rising edge, so
// handshakes are counted at the edge where valid and ready were both high.
// Checked on every frame: bytes (the first difference named by offset and
// field), tkeep contiguous and all ones except on the tlast beat, tlast only
// on the last beat, tdata zero past tkeep, tvalid high from a frame's first
// beat to its tlast, AXI4-Stream stability while stalled; with
// m_axis_tready high, every handshake edge equals RoceTxTiming's. Each TEST
// elaborates its own kernel (one per process, gtest_discover_tests).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "Vroce_tx.h"
#include "model/datapath/roce_tx_ref.h"
#include "model/datapath/seam.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "verilated.h"

using roce::Bytes;
using namespace sc_core;
using namespace ernic::seam;
using sc_dt::sc_bv;

namespace {

constexpr int kClockPs = 5000;  // 200 MHz core clock
constexpr uint16_t kSport = 0xC0DE;

// One frame to send and what must come out.
struct Item {
  std::string name;
  TxDesc desc;
  Bytes payload;
  Bytes expected;  // from roce::encode (or a capture), never from the RTL
};

// Stimulus timing: the probability that an idle cycle comes before a
// descriptor / payload beat (repeated: geometric), and that m_axis_tready is
// high in a cycle.
struct Timing {
  double desc_idle = 0, pay_idle = 0, ready = 1;
  uint64_t seed = 1;
};

struct OutBeat {
  uint8_t data[64];
  uint64_t keep;
  bool last;
  uint64_t edge;
};

SC_MODULE(RoceTxTb) {
  sc_clock clk{"clk", sc_time(kClockPs, SC_PS)};
  sc_signal<bool> rst_n{"rst_n"}, s_desc_valid{"s_desc_valid"}, s_desc_ready{"s_desc_ready"},
      s_pay_tvalid{"s_pay_tvalid"}, s_pay_tready{"s_pay_tready"}, s_pay_tlast{"s_pay_tlast"},
      m_axis_tvalid{"m_axis_tvalid"}, m_axis_tready{"m_axis_tready"}, m_axis_tlast{"m_axis_tlast"};
  sc_signal<sc_bv<768>> s_desc{"s_desc"};
  sc_signal<sc_bv<512>> s_pay_tdata{"s_pay_tdata"}, m_axis_tdata{"m_axis_tdata"};
  sc_signal<uint64_t> s_pay_tkeep{"s_pay_tkeep"}, m_axis_tkeep{"m_axis_tkeep"};
  sc_signal<uint32_t> cfg_udp_sport{"cfg_udp_sport"};
  Vroce_tx dut{"dut"};

  std::vector<Item> items;
  Timing timing;
  uint16_t sport = kSport;
  uint64_t reset_at_edge = 0;  // > 3: rst_n low at this edge too, then resume at resume_item
  size_t resume_item = 0;

  // Recorded.
  uint64_t edge = 0;
  std::vector<uint64_t> desc_hs;                    // per item
  std::vector<std::vector<uint64_t>> pay_valid_from, pay_hs;  // per item, per beat
  std::vector<std::vector<OutBeat>> out;            // per output frame
  std::vector<std::string> errors;                  // protocol errors (bubbles, stability)
  uint64_t out_beats = 0;
  size_t out_at_reset = 0;                          // frames out before reset_at_edge
  uint64_t idle_tail = 0;                           // idle cycles to run after the last frame
  uint64_t ready_low_until = 0;                     // m_axis_tready low up to this edge
  std::chrono::steady_clock::time_point busy_end;   // wall time when the last frame was out
  uint64_t busy_end_edge = 0;
  bool done = false, timed_out = false;

  SC_CTOR(RoceTxTb) {
    dut.clk(clk);
    dut.rst_n(rst_n);
    dut.s_desc_valid(s_desc_valid);
    dut.s_desc_ready(s_desc_ready);
    dut.s_desc(s_desc);
    dut.s_pay_tvalid(s_pay_tvalid);
    dut.s_pay_tready(s_pay_tready);
    dut.s_pay_tdata(s_pay_tdata);
    dut.s_pay_tkeep(s_pay_tkeep);
    dut.s_pay_tlast(s_pay_tlast);
    dut.cfg_udp_sport(cfg_udp_sport);
    dut.m_axis_tvalid(m_axis_tvalid);
    dut.m_axis_tready(m_axis_tready);
    dut.m_axis_tdata(m_axis_tdata);
    dut.m_axis_tkeep(m_axis_tkeep);
    dut.m_axis_tlast(m_axis_tlast);
    SC_THREAD(run);
    sensitive << clk.posedge_event();
  }

  static sc_bv<768> desc_bits(const TxDesc& d, std::mt19937_64& rng) {
    TxdBits b = pack(d);
    // Reserved bits (rtl/SEAM.md: zero) carry junk: the RTL must not look.
    put_bits(b, 2, 6, rng());
    put_bits(b, 420, 4, rng());
    put_bits(b, 443, 5, rng());
    put_bits(b, 462, 2, rng());
    sc_bv<768> v;
    for (int w = 0; w < 12; ++w) {
      v.set_word(2 * w, uint32_t(b[size_t(w)]));
      v.set_word(2 * w + 1, uint32_t(b[size_t(w)] >> 32));
    }
    return v;
  }

  struct PayBeat {
    size_t item;
    sc_bv<512> data;
    uint64_t keep;
    bool last;
  };

  // Payload beats of all items, in order (built before the simulation so
  // that the measured speed is the simulation's).
  std::vector<PayBeat> beats;
  std::vector<size_t> first_beat;  // per item, and one past the end
  void prepare() {
    std::mt19937_64 rng(timing.seed ^ 0x9A7);
    beats.clear();
    first_beat.assign(items.size() + 1, 0);
    for (size_t k = 0; k < items.size(); ++k) {
      first_beat[k] = beats.size();
      const Bytes& p = items[k].payload;
      for (size_t off = 0; off < p.size(); off += 64) {
        // Junk past payload_len in the last beat: the RTL must ignore it.
        uint8_t chunk[64];
        for (auto& c : chunk) c = uint8_t(rng() | 0x80);
        const size_t n = std::min<size_t>(64, p.size() - off);
        std::memcpy(chunk, p.data() + off, n);
        PayBeat b{k, {}, n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1, off + 64 >= p.size()};
        for (int w = 0; w < 16; ++w) b.data.set_word(w, roce::get_le32(chunk + 4 * w));
        beats.push_back(b);
      }
    }
    first_beat[items.size()] = beats.size();
    desc_hs.assign(items.size(), 0);
    pay_valid_from.assign(items.size(), {});
    pay_hs.assign(items.size(), {});
    out.reserve(items.size());
  }

  void run() {
    std::mt19937_64 rng(timing.seed);
    std::bernoulli_distribution desc_idle(timing.desc_idle), pay_idle(timing.pay_idle), ready(timing.ready);
    size_t total_out_beats = 0;
    for (const Item& it : items) total_out_beats += tx_shape(it.desc).out_beats;
    const uint64_t limit = 20 * (total_out_beats + beats.size()) + 20 * items.size() + 2000;

    cfg_udp_sport.write(sport);
    rst_n.write(false);
    s_desc_valid.write(false);
    s_pay_tvalid.write(false);
    m_axis_tready.write(false);
    size_t next_desc = 0, next_beat = 0;
    bool desc_pending = false, pay_pending = false;  // valid held until the handshake
    bool in_frame = false, stalled = false;
    OutBeat held{};
    std::vector<OutBeat> cur;
    uint64_t quiet = 0;
    while (true) {
      wait();
      ++edge;
      const bool in_reset = edge <= 3 || edge == reset_at_edge;
      // --- what the RTL sampled at this edge ---
      if (!in_reset && s_desc_valid.read() && s_desc_ready.read()) {
        desc_hs[next_desc++] = edge;
        desc_pending = false;
        s_desc_valid.write(false);
      }
      if (!in_reset && s_pay_tvalid.read() && s_pay_tready.read()) {
        pay_hs[beats[next_beat++].item].push_back(edge);
        pay_pending = false;
        s_pay_tvalid.write(false);
      }
      const bool tv = m_axis_tvalid.read(), tr = m_axis_tready.read();
      if (edge == reset_at_edge) {
        // The RTL drops what it held: so does the testbench; the stimulus
        // goes on with the items from resume_item.
        cur.clear();
        in_frame = stalled = false;
        out_at_reset = out.size();
        next_desc = resume_item;
        next_beat = first_beat[resume_item];
        desc_pending = pay_pending = false;
        s_desc_valid.write(false);
        s_pay_tvalid.write(false);
      } else if (!in_reset) {
        OutBeat b{};
        if (tv) {
          const sc_bv<512>& v = m_axis_tdata.read();
          for (int w = 0; w < 16; ++w) roce::put_le32(b.data + 4 * w, v.get_word(w));
          b.keep = m_axis_tkeep.read();
          b.last = m_axis_tlast.read();
          b.edge = edge;
        }
        if (stalled) {
          if (!tv)
            errors.push_back("edge " + std::to_string(edge) + ": tvalid dropped while stalled");
          else if (std::memcmp(b.data, held.data, 64) || b.keep != held.keep || b.last != held.last)
            errors.push_back("edge " + std::to_string(edge) + ": beat changed while stalled");
        }
        if (in_frame && !tv) errors.push_back("edge " + std::to_string(edge) + ": bubble inside a frame");
        if (tv && tr) {
          cur.push_back(b);
          ++out_beats;
          in_frame = !b.last;
          if (b.last) {
            out.push_back(std::move(cur));
            cur.clear();
          }
        }
        stalled = tv && !tr;
        held = b;
      }
      // --- what the RTL samples at the next edge ---
      rst_n.write(!(edge + 1 <= 3 || edge + 1 == reset_at_edge));
      if (!desc_pending && next_desc < items.size() && edge + 1 != reset_at_edge && !desc_idle(rng)) {
        s_desc.write(desc_bits(items[next_desc].desc, rng));
        s_desc_valid.write(true);
        desc_pending = true;
      }
      if (!pay_pending && next_beat < beats.size() && edge + 1 != reset_at_edge && !pay_idle(rng)) {
        const PayBeat& b = beats[next_beat];
        s_pay_tdata.write(b.data);
        s_pay_tkeep.write(b.keep);
        s_pay_tlast.write(b.last);
        s_pay_tvalid.write(true);
        pay_valid_from[b.item].push_back(edge + 1);
        pay_pending = true;
      }
      m_axis_tready.write(edge + 1 > ready_low_until && ready(rng));
      // Done when the stimulus is used up and the output has been quiet a while.
      const bool all_in = next_desc == items.size() && next_beat == beats.size();
      quiet = (all_in && !tv && edge > 3) ? quiet + 1 : 0;
      if (quiet == 16) {
        done = true;
        busy_end = std::chrono::steady_clock::now();
        busy_end_edge = edge;
      }
      if (quiet >= 16 + idle_tail) break;
      if (edge > limit) {
        timed_out = true;
        break;
      }
    }
    sc_stop();
  }
};

void init_kernel() {
  static bool once = false;
  if (!once) {
    sc_set_time_resolution(1, SC_PS);
    once = true;
  }
}

// ---- frames ------------------------------------------------------------------

// A frame with every header field random (the ICRC-masked ones too).
roce::Frame random_frame(std::mt19937_64& rng, uint8_t opcode, bool v6, size_t payload_len) {
  roce::Frame f;
  for (auto& b : f.eth.dst.b) b = uint8_t(rng());
  for (auto& b : f.eth.src.b) b = uint8_t(rng());
  f.ipv6 = v6;
  f.eth.ethertype = v6 ? roce::kEtherTypeIpv6 : roce::kEtherTypeIpv4;
  if (v6) {
    f.ip6.traffic_class = uint8_t(rng());  // DSCP and ECN
    f.ip6.flow_label = uint32_t(rng()) & 0xFFFFF;
    f.ip6.hop_limit = uint8_t(rng());
    for (auto& b : f.ip6.src.b) b = uint8_t(rng());
    for (auto& b : f.ip6.dst.b) b = uint8_t(rng());
  } else {
    f.ip4.tos = uint8_t(rng());  // DSCP and ECN
    f.ip4.ttl = uint8_t(rng());
    f.ip4.id = uint16_t(rng());
    f.ip4.flags = uint8_t(rng() & 7);
    f.ip4.src.v = uint32_t(rng());
    f.ip4.dst.v = uint32_t(rng());
  }
  f.udp.sport = kSport;
  f.bth.opcode = opcode;
  f.bth.se = rng() & 1;
  f.bth.mig = rng() & 1;
  f.bth.tver = uint8_t(rng() & 0xF);
  f.bth.pkey = uint16_t(rng());
  f.bth.resv8a = uint8_t(rng());  // FECN, BECN and the reserved 6 bits
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

Item item_from_frame(std::string name, const roce::Frame& f) {
  Item it;
  it.name = std::move(name);
  it.desc = tx_desc_from_frame(f);
  it.payload = f.payload;
  it.expected = roce::encode(f);
  return it;
}

const std::vector<uint8_t>& table_opcodes() {
  using namespace roce::op;
  static const std::vector<uint8_t> ops = {
      RC_SEND_FIRST,      RC_SEND_MIDDLE,   RC_SEND_LAST,       RC_SEND_LAST_IMM,  RC_SEND_ONLY,
      RC_SEND_ONLY_IMM,   RC_SEND_LAST_INV, RC_SEND_ONLY_INV,   RC_WRITE_FIRST,    RC_WRITE_MIDDLE,
      RC_WRITE_LAST,      RC_WRITE_LAST_IMM, RC_WRITE_ONLY,     RC_WRITE_ONLY_IMM, RC_READ_REQUEST,
      RC_READ_RESP_FIRST, RC_READ_RESP_MIDDLE, RC_READ_RESP_LAST, RC_READ_RESP_ONLY, RC_ACK,
      RC_ATOMIC_ACK,      RC_CMP_SWAP,      RC_FETCH_ADD,       UD_SEND_ONLY,      UD_SEND_ONLY_IMM,
      CNP};
  return ops;
}

// The table: every opcode with its extension headers, IPv4 and IPv6, payload
// lengths 0, 1, 2, 3, 4, 63, 64, 65, PMTU-1 and PMTU (4096) for opcodes that
// carry payload (CNP: its 16 reserved bytes), random header fields.
std::vector<Item> table_items(uint64_t seed) {
  static const size_t kLens[] = {0, 1, 2, 3, 4, 63, 64, 65, 4095, 4096};
  std::mt19937_64 rng(seed);
  std::vector<Item> items;
  for (uint8_t op : table_opcodes()) {
    const roce::OpcodeInfo* info = roce::opcode_info(op);
    for (int v6 = 0; v6 < 2; ++v6) {
      std::vector<size_t> lens;
      if (op == roce::op::CNP) lens = {16};
      else if (info->has_payload) lens.assign(std::begin(kLens), std::end(kLens));
      else lens = {0};
      for (size_t len : lens) {
        const roce::Frame f = random_frame(rng, op, v6, len);
        items.push_back(item_from_frame(std::string(info->name) + (v6 ? "/ipv6/" : "/ipv4/") +
                                            std::to_string(len),
                                        f));
      }
    }
  }
  return items;
}

// Descriptors the encoder's opcode table does not describe: the RTL places
// min(ext_len, 28) ext bytes whatever the opcode, and ignores ext bytes past
// ext_len. Expected bytes from the reference model (its generic path).
std::vector<Item> odd_items(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Item> items;
  auto add = [&](std::string name, uint8_t op, bool v6, uint8_t ext_len, size_t len) {
    roce::Frame f = random_frame(rng, op, v6, len);
    Item it;
    it.name = std::move(name);
    it.desc = tx_desc_from_frame(f);
    it.desc.ext_len = ext_len;
    for (auto& b : it.desc.ext) b = uint8_t(rng());
    it.payload = f.payload;
    it.expected = tx_frame(it.desc, it.payload, kSport);
    items.push_back(std::move(it));
  };
  add("SEND_ONLY with a 4-byte ext", roce::op::RC_SEND_ONLY, false, 4, 100);
  add("SEND_ONLY_IMM, junk past ext_len", roce::op::RC_SEND_ONLY_IMM, true, 4, 33);
  add("unknown opcode 0x1f, 8-byte ext", 0x1F, false, 8, 7);
  add("unknown opcode 0xff, no ext", 0xFF, true, 0, 64);
  add("CMP_SWAP, ext_len 200 taken as 28", roce::op::RC_CMP_SWAP, true, 200, 0);
  add("ext_len 10 (header of 64 bytes)", roce::op::RC_SEND_MIDDLE, false, 10, 129);
  add("ext_len 28 on IPv6 (102-byte header)", roce::op::RC_WRITE_MIDDLE, true, 28, 4096);
  return items;
}

// Raw frames (software-built: the payload is the frame, the ICRC appended).
std::vector<Item> raw_items(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Item> items;
  auto add = [&](std::string name, Bytes with_icrc) {
    Item it;
    it.name = std::move(name);
    it.payload.assign(with_icrc.begin(), with_icrc.end() - 4);
    it.desc = tx_desc_raw(it.payload.size());
    it.expected = std::move(with_icrc);
    items.push_back(std::move(it));
  };
  for (int v6 = 0; v6 < 2; ++v6)
    add(std::string("raw CNP ") + (v6 ? "ipv6" : "ipv4"),
        roce::encode(random_frame(rng, roce::op::CNP, v6, 16)));
  // A UD SEND to QP1 (a MAD's shape) and the largest frames the buffer takes.
  add("raw UD SEND 256", roce::encode(random_frame(rng, roce::op::UD_SEND_ONLY, false, 256)));
  add("raw 8192-byte frame", roce::encode(random_frame(rng, roce::op::RC_SEND_ONLY, false, 8192 - 58 - 4)));
  add("raw 16382-byte frame (256 beats, the buffer)",
      roce::encode(random_frame(rng, roce::op::RC_SEND_ONLY, true, kTxMaxBody - 74 - 2)));
  return items;
}

// RoCE frames of the real captures (tb/data/captures), given raw: the RTL's
// ICRC must equal the captured one.
std::vector<Item> capture_items(size_t max_per_file) {
  static const char* kFiles[] = {"pingpong_rc.pcap", "rdma_write_bw.pcap", "rdma_read_bw.pcap",
                                 "rdma_send_bw.pcap", "rdma_write_lat.pcap"};
  std::vector<Item> items;
  for (const char* name : kFiles) {
    const std::string path = std::string(ERNIC_TEST_DATA) + "/captures/" + name;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    EXPECT_NE(p, nullptr) << path << ": " << err;
    if (!p) continue;
    pcap_pkthdr* h;
    const u_char* data;
    size_t idx = 0, n = 0;
    while (pcap_next_ex(p, &h, &data) == 1 && n < max_per_file) {
      ++idx;
      if (h->caplen != h->len || !roce::is_roce(data, h->caplen)) continue;
      ++n;
      Item it;
      it.name = std::string(name) + " #" + std::to_string(idx);
      it.expected.assign(data, data + h->caplen);
      it.payload.assign(data, data + h->caplen - 4);
      it.desc = tx_desc_raw(it.payload.size());
      items.push_back(std::move(it));
    }
    pcap_close(p);
  }
  return items;
}

// ---- checks -------------------------------------------------------------------

// Which header field a frame offset falls in (for the first-difference report).
std::string field_at(const TxDesc& d, size_t off, size_t frame_len) {
  if (off >= frame_len - 4) return "ICRC byte " + std::to_string(off - (frame_len - 4));
  if (d.raw) return "raw frame byte";
  if (off < 6) return "Ethernet destination";
  if (off < 12) return "Ethernet source";
  if (off < 14) return "EtherType";
  size_t o = off - 14;
  static const char* v4[20] = {"IPv4 version/IHL", "IPv4 TOS",   "IPv4 total length", "IPv4 total length",
                               "IPv4 id",          "IPv4 id",    "IPv4 flags/fragment", "IPv4 flags/fragment",
                               "IPv4 TTL",         "IPv4 protocol", "IPv4 header checksum", "IPv4 header checksum",
                               "IPv4 source",      "IPv4 source", "IPv4 source",       "IPv4 source",
                               "IPv4 destination", "IPv4 destination", "IPv4 destination", "IPv4 destination"};
  const size_t iplen = d.ipv6 ? 40 : 20;
  if (o < iplen) {
    if (!d.ipv6) return v4[o];
    if (o < 4) return "IPv6 version/traffic class/flow label";
    if (o < 6) return "IPv6 payload length";
    if (o == 6) return "IPv6 next header";
    if (o == 7) return "IPv6 hop limit";
    return o < 24 ? "IPv6 source" : "IPv6 destination";
  }
  o -= iplen;
  static const char* udp[8] = {"UDP source port", "UDP source port", "UDP destination port", "UDP destination port",
                               "UDP length",      "UDP length",      "UDP checksum",         "UDP checksum"};
  if (o < 8) return udp[o];
  o -= 8;
  static const char* bth[12] = {"BTH opcode", "BTH SE/M/PadCnt/TVer", "BTH P_Key", "BTH P_Key",
                                "BTH byte 4 (FECN/BECN)", "BTH destination QP", "BTH destination QP",
                                "BTH destination QP", "BTH AckReq/resv7", "BTH PSN", "BTH PSN", "BTH PSN"};
  if (o < 12) return bth[o];
  o -= 12;
  const size_t e = std::min<size_t>(d.ext_len, kMaxExt);
  if (o < e) return "extension header byte " + std::to_string(o);
  o -= e;
  if (o < d.payload_len) return "payload byte " + std::to_string(o);
  return "pad byte " + std::to_string(o - d.payload_len);
}

// Checks one output frame's beats and returns its bytes.
Bytes check_beats(const std::vector<OutBeat>& beats, const std::string& what) {
  Bytes bytes;
  for (size_t i = 0; i < beats.size(); ++i) {
    const OutBeat& b = beats[i];
    const bool last = i + 1 == beats.size();
    const int n = __builtin_popcountll(b.keep);
    const uint64_t contiguous = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
    EXPECT_EQ(b.keep, contiguous) << what << " beat " << i << ": tkeep not contiguous from bit 0";
    if (!last) EXPECT_EQ(n, 64) << what << " beat " << i << ": partial tkeep before tlast";
    EXPECT_GT(n, 0) << what << " beat " << i << ": empty beat";
    EXPECT_EQ(b.last, last) << what << " beat " << i << " of " << beats.size() << ": tlast";
    for (int j = n; j < 64; ++j)
      if (b.data[j]) {
        ADD_FAILURE() << what << " beat " << i << ": tdata byte " << j << " past tkeep is 0x" << std::hex
                      << int(b.data[j]);
        break;
      }
    bytes.insert(bytes.end(), b.data, b.data + n);
  }
  return bytes;
}

// Compares every output frame with its item; returns the number of bad frames.
size_t compare_frames(const std::vector<std::vector<OutBeat>>& out, const std::vector<Item>& items) {
  EXPECT_EQ(out.size(), items.size());
  size_t bad = 0;
  for (size_t k = 0; k < std::min(out.size(), items.size()); ++k) {
    const Item& it = items[k];
    const std::string what = "frame " + std::to_string(k) + " (" + it.name + ")";
    const Bytes got = check_beats(out[k], what);
    EXPECT_EQ(out[k].size(), tx_shape(it.desc).out_beats) << what << ": beats";
    if (got == it.expected) continue;
    ++bad;
    size_t i = 0;
    while (i < got.size() && i < it.expected.size() && got[i] == it.expected[i]) ++i;
    if (bad > 10) continue;
    if (i < got.size() && i < it.expected.size()) {
      ADD_FAILURE() << what << ": first difference at byte " << i << " (beat " << i / 64 << " byte " << i % 64
                    << ", " << field_at(it.desc, i, it.expected.size()) << "): rtl 0x" << std::hex
                    << int(got[i]) << ", expected 0x" << int(it.expected[i]);
    } else {
      ADD_FAILURE() << what << ": rtl frame of " << got.size() << " bytes, expected " << it.expected.size()
                    << " (equal up to the shorter)";
    }
  }
  return bad;
}

// Handshake edges against RoceTxTiming (valid while m_axis_tready stays high;
// with check_pay false only the output edges are compared).
void compare_timing(const RoceTxTb& tb, const std::vector<Item>& items, bool check_pay = true) {
  RoceTxTiming model;
  size_t bad = 0;
  for (size_t k = 0; k < std::min(tb.out.size(), items.size()); ++k) {
    const auto m = model.push(items[k].desc, tb.desc_hs[k], tb.pay_valid_from[k]);
    const std::string what = "frame " + std::to_string(k) + " (" + items[k].name + ")";
    const bool ok = m.first_out == tb.out[k].front().edge && m.last_out == tb.out[k].back().edge &&
                    (!check_pay || m.pay == tb.pay_hs[k]);
    if (!ok && ++bad <= 5) {
      ADD_FAILURE() << what << ": descriptor at edge " << tb.desc_hs[k] << "; first/last output beat at edges "
                    << tb.out[k].front().edge << "/" << tb.out[k].back().edge << ", model "
                    << m.first_out << "/" << m.last_out << "; payload handshakes "
                    << (m.pay == tb.pay_hs[k] ? "equal" : "differ");
    }
  }
  EXPECT_EQ(bad, 0u);
}

struct RunStats {
  double wall_s = 0;  // sc_start
  double busy_s = 0;  // until the last frame was out (+16 quiet cycles)
};

RunStats run(RoceTxTb& tb) {
  tb.prepare();
  const auto t0 = std::chrono::steady_clock::now();
  sc_start();
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_FALSE(tb.timed_out) << "no progress: " << tb.out.size() << " of " << tb.items.size()
                             << " frames out after " << tb.edge << " edges";
  EXPECT_TRUE(tb.done);
  for (size_t i = 0; i < std::min<size_t>(tb.errors.size(), 10); ++i) ADD_FAILURE() << tb.errors[i];
  EXPECT_TRUE(tb.errors.empty()) << tb.errors.size() << " protocol errors";
  return {std::chrono::duration<double>(t1 - t0).count(),
          std::chrono::duration<double>(tb.busy_end - t0).count()};
}

// ---- the reference model on its own ---------------------------------------------

TEST(RoceTxRef, TableFramesRoundTripThroughTheSeam) {
  size_t n = 0;
  for (const Item& it : table_items(0x7AB1E)) {
    const roce::Frame f = *roce::decode(it.expected);
    EXPECT_TRUE(tx_desc_fits(f, kSport)) << it.name;
    EXPECT_EQ(tx_frame(it.desc, it.payload, kSport), it.expected) << it.name;
    EXPECT_EQ(unpack_tx(pack(it.desc)), it.desc) << it.name;
    // PadCnt and lengths as the shape says.
    const TxShape s = tx_shape(it.desc);
    EXPECT_EQ(s.frame_len, it.expected.size()) << it.name;
    EXPECT_EQ(f.bth.pad_cnt, s.pad_len) << it.name;
    ++n;
  }
  EXPECT_EQ(n, 2u * (20 * 10 + 5 + 1));  // 20 opcodes with payload x 10 lengths, 5 without, CNP; x IPv4/IPv6
}

TEST(RoceTxRef, ShapesOfKnownFrames) {
  TxDesc d;
  d.opcode = roce::op::RC_ACK;
  d.ext_len = 4;  // AETH
  TxShape s = tx_shape(d);  // 14 + 20 + 8 + 12 + 4 = 58 bytes, one beat, ICRC fits
  EXPECT_EQ(s.header_len, 58u);
  EXPECT_EQ(s.body_len, 58u);
  EXPECT_EQ(s.frame_len, 62u);
  EXPECT_EQ(s.body_beats, 1u);
  EXPECT_EQ(s.out_beats, 1u);
  EXPECT_TRUE(s.flush);  // no payload: the header's only beat comes from the carry
  d.opcode = roce::op::RC_WRITE_MIDDLE;
  d.ext_len = 0;
  d.ipv6 = true;
  d.payload_len = 4096;
  s = tx_shape(d);  // 74 + 4096 = 4170 bytes: 66 beats (4170 = 65*64 + 10), ICRC fits
  EXPECT_EQ(s.body_len, 4170u);
  EXPECT_EQ(s.payload_beats, 64u);
  EXPECT_EQ(s.body_beats, 66u);
  EXPECT_EQ(s.out_beats, 66u);
  EXPECT_TRUE(s.flush);
  d.ipv6 = false;
  d.payload_len = 7;  // 54 + 7 + 1 pad = 62: the ICRC spills into a second beat
  s = tx_shape(d);
  EXPECT_EQ(s.pad_len, 1u);
  EXPECT_EQ(s.body_len, 62u);
  EXPECT_EQ(s.body_beats, 1u);
  EXPECT_EQ(s.out_beats, 2u);
  EXPECT_FALSE(s.flush);
  s = tx_shape(tx_desc_raw(8192));
  EXPECT_EQ(s.body_beats, 128u);
  EXPECT_EQ(s.out_beats, 129u);
  EXPECT_THROW(tx_desc_raw(kTxMaxBody + 1), std::invalid_argument);
  EXPECT_THROW(tx_frame(d, Bytes(6), kSport), std::invalid_argument);
}

TEST(RoceTxRef, TimingOfAnIdleBlock) {
  // Idle block, descriptor at edge 10, payload valid from edge 11: B body
  // beats at edges 11..10+B, commit at 12+B, first beat taken at 13+B.
  RoceTxTiming t;
  TxDesc d;
  d.opcode = roce::op::RC_SEND_ONLY;
  d.payload_len = 4096;  // 54 + 4096 = 4150: B = 65 (flush), O = 65
  std::vector<uint64_t> pv(64, 11);
  auto f = t.push(d, 10, pv);
  EXPECT_EQ(f.load, 10u);
  EXPECT_EQ(f.pay.front(), 11u);
  EXPECT_EQ(f.pay.back(), 74u);
  EXPECT_EQ(f.end, 75u);
  EXPECT_EQ(f.first_out, 78u);
  EXPECT_EQ(f.last_out, 142u);
  // The next frame, given in time, leaves right behind it.
  auto g = t.push(d, 11, std::vector<uint64_t>(64, 12));
  EXPECT_EQ(g.load, 75u);
  EXPECT_EQ(g.first_out, 143u);
}

// The checker itself: beats cut from the expected bytes pass; a changed
// byte is reported at its offset with its field's name.
TEST(RoceTxRef, FirstDifferenceIsNamed) {
  std::vector<Item> items = table_items(0x7AB1E);
  items.resize(40);
  auto beats_of = [](const Bytes& b) {
    std::vector<OutBeat> out;
    for (size_t off = 0; off < b.size(); off += 64) {
      OutBeat ob{};
      const size_t n = std::min<size_t>(64, b.size() - off);
      std::memcpy(ob.data, b.data() + off, n);
      ob.keep = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
      ob.last = off + 64 >= b.size();
      out.push_back(ob);
    }
    return out;
  };
  std::vector<std::vector<OutBeat>> out;
  for (const Item& it : items) out.push_back(beats_of(it.expected));
  EXPECT_EQ(compare_frames(out, items), 0u);
  out[3][0].data[40] ^= 1;  // item 3 is IPv4: byte 40 is the UDP checksum
  EXPECT_NONFATAL_FAILURE(compare_frames(out, items), "first difference at byte 40 (beat 0 byte 40, UDP checksum)");
  out[3][0].data[40] ^= 1;
  out[5].back().data[(items[5].expected.size() - 1) % 64] ^= 0x80;
  EXPECT_NONFATAL_FAILURE(compare_frames(out, items), "ICRC byte 3");
}

// ---- the RTL ------------------------------------------------------------------

TEST(RoceTxRtl, TableMatchesEncoderBackToBack) {
  init_kernel();
  RoceTxTb tb("tb");
  tb.items = table_items(0x7AB1E);
  const auto odd = odd_items(0x0DD);
  tb.items.insert(tb.items.end(), odd.begin(), odd.end());
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  compare_timing(tb, tb.items);
}

TEST(RoceTxRtl, RandomValidAndReadySameBytes) {
  init_kernel();
  RoceTxTb tb("tb");
  tb.items = table_items(0x5EED);
  tb.timing = {0.3, 0.3, 0.6, 0x5EED};  // idle before descriptors and beats, tready 60 %
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  // Output stalls really happened (while beats were waiting).
  size_t stalled_frames = 0;
  for (const auto& f : tb.out)
    if (f.back().edge - f.front().edge + 1 > f.size()) ++stalled_frames;
  EXPECT_GT(stalled_frames, tb.out.size() / 4);
}

TEST(RoceTxRtl, PayloadBubblesTimingMatchesModel) {
  init_kernel();
  RoceTxTb tb("tb");
  tb.items = table_items(0xB0B);
  tb.timing = {0.5, 0.4, 1.0, 0xB0B};  // upstream stalls, consumer always ready
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  compare_timing(tb, tb.items);
}

TEST(RoceTxRtl, RawFramesAndCaptures) {
  init_kernel();
  RoceTxTb tb("tb");
  tb.items = raw_items(0x4A3);
  const auto cap = capture_items(20);
  ASSERT_EQ(cap.size(), 100u);
  tb.items.insert(tb.items.end(), cap.begin(), cap.end());
  for (const Item& it : tb.items) EXPECT_EQ(tx_frame(it.desc, it.payload, kSport), it.expected) << it.name;
  tb.timing = {0.1, 0.1, 0.8, 0x4A3};
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
}

// Full rate: equal frames back to back leave with no idle cycle between
// beats, O cycles per frame; then a run of single-beat ACKs, one a cycle.
TEST(RoceTxRtl, BackToBackFullRateAndSpeed) {
  init_kernel();
  RoceTxTb tb("tb");
  std::mt19937_64 rng(0xFA57);
  constexpr size_t kBig = 400, kAcks = 2000;
  // IPv4 with 4096 bytes and IPv6 with 4076: both 4150-byte bodies, 65 beats.
  for (size_t i = 0; i < kBig; ++i)
    tb.items.push_back(item_from_frame("WRITE_MIDDLE #" + std::to_string(i),
                                       random_frame(rng, roce::op::RC_WRITE_MIDDLE, i % 2, i % 2 ? 4076 : 4096)));
  for (size_t i = 0; i < kAcks; ++i)
    tb.items.push_back(item_from_frame("ACK #" + std::to_string(i), random_frame(rng, roce::op::RC_ACK, false, 0)));
  tb.idle_tail = 200000;  // then idle cycles, to show what an idle cycle costs
  const RunStats st = run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  compare_timing(tb, tb.items);
  ASSERT_EQ(tb.out.size(), tb.items.size());
  // Beats of the big frames: contiguous from the first to the last.
  size_t want = 0;
  for (size_t i = 0; i < kBig; ++i) want += tx_shape(tb.items[i].desc).out_beats;
  EXPECT_EQ(want, 65 * kBig);
  EXPECT_EQ(tb.out[kBig - 1].back().edge - tb.out[0].front().edge + 1, want) << "idle cycles between big frames";
  // ACKs: one frame a cycle.
  EXPECT_EQ(tb.out.back().back().edge - tb.out[kBig].front().edge + 1, kAcks) << "ACKs not one a cycle";
  const double cycles = double(tb.busy_end_edge), idle_cycles = double(tb.edge - tb.busy_end_edge);
  const double idle_s = st.wall_s - st.busy_s;
  std::printf("[ speed    ] Vroce_tx + SystemC testbench: %zu frames, %llu output beats, %.0f cycles in %.3f s: "
              "%.0f beats/s, %.0f cycles/s (%.3f%% of real time at 200 MHz)\n",
              tb.out.size(), static_cast<unsigned long long>(tb.out_beats), cycles, st.busy_s,
              tb.out_beats / st.busy_s, cycles / st.busy_s, 100.0 * cycles / st.busy_s / 200e6);
  std::printf("[ speed    ] idle: %.0f cycles in %.3f s: %.0f cycles/s\n", idle_cycles, idle_s,
              idle_cycles / idle_s);
  ::testing::Test::RecordProperty("beats_per_s", std::to_string(int64_t(tb.out_beats / st.busy_s)));
}

// Frames whose ICRC spills into an extra beat (O = B + 1) back to back: the
// output is the bottleneck, the buffer fills and the payload waits, and the
// output still goes at one beat a cycle with the model's edges.
TEST(RoceTxRtl, IcrcSpillFramesBackToBack) {
  init_kernel();
  RoceTxTb tb("tb");
  std::mt19937_64 rng(0x5B111);
  constexpr size_t kFrames = 300;
  for (size_t i = 0; i < kFrames; ++i)  // 54 + 4040 = 4094 bytes: 64 body beats, 65 out
    tb.items.push_back(item_from_frame("SEND_MIDDLE 4040 #" + std::to_string(i),
                                       random_frame(rng, roce::op::RC_SEND_MIDDLE, false, 4040)));
  const TxShape s = tx_shape(tb.items[0].desc);
  ASSERT_EQ(s.body_beats, 64u);
  ASSERT_EQ(s.out_beats, 65u);
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  compare_timing(tb, tb.items, /*check_pay=*/false);
  ASSERT_EQ(tb.out.size(), kFrames);
  EXPECT_EQ(tb.out.back().back().edge - tb.out.front().front().edge + 1, 65 * kFrames);
  // The payload had to wait for room: it was not taken one beat a cycle.
  EXPECT_GT(tb.pay_hs.back().front(), 64 * (kFrames - 1) + 10);
}

// m_axis_tready held low: the block takes frames until its limits (rtl
// parameters BUF_AW = 8, REC_AW = 5): 256 beats in the buffer; 32 frames
// between assembly and the output register, plus the one in it, plus one
// held descriptor. Then everything comes out in order.
TEST(RoceTxRtl, LimitsUnderOutputStall) {
  init_kernel();
  RoceTxTb tb("tb");
  std::mt19937_64 rng(0x57A11);
  for (int i = 0; i < 60; ++i)
    tb.items.push_back(item_from_frame("ACK #" + std::to_string(i), random_frame(rng, roce::op::RC_ACK, false, 0)));
  for (int i = 0; i < 8; ++i)
    tb.items.push_back(item_from_frame("WRITE_MIDDLE 4096 #" + std::to_string(i),
                                       random_frame(rng, roce::op::RC_WRITE_MIDDLE, false, 4096)));
  constexpr uint64_t kStall = 3000;
  tb.ready_low_until = kStall;
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  size_t desc_in_stall = 0;
  for (uint64_t e : tb.desc_hs) desc_in_stall += e <= kStall;
  EXPECT_EQ(desc_in_stall, kTxMaxFrames + 2);
  EXPECT_GT(tb.out.front().front().edge, kStall);
}

// The buffer's limit: 4096-byte frames (65 body beats) under a stall. The
// first beat sits in the output register, the buffer holds 256 more: 64 of
// frame 0, 65 each of frames 1 and 2, 62 of frame 3, i.e. 254 payload beats.
TEST(RoceTxRtl, BufferFullUnderOutputStall) {
  init_kernel();
  RoceTxTb tb("tb");
  std::mt19937_64 rng(0xB0FF);
  for (int i = 0; i < 8; ++i)
    tb.items.push_back(item_from_frame("WRITE_MIDDLE 4096 #" + std::to_string(i),
                                       random_frame(rng, roce::op::RC_WRITE_MIDDLE, false, 4096)));
  constexpr uint64_t kStall = 2000;
  tb.ready_low_until = kStall;
  run(tb);
  EXPECT_EQ(compare_frames(tb.out, tb.items), 0u);
  size_t beats_in_stall = 0;
  for (const auto& f : tb.pay_hs)
    for (uint64_t e : f) beats_in_stall += e <= kStall;
  EXPECT_EQ(beats_in_stall, kTxBufBeats - 2);
}

// A reset in the middle of a frame drops what the block held (the frame
// being assembled and the descriptor waiting); frames given after it come
// out right.
TEST(RoceTxRtl, ResetDropsFramesInFlight) {
  init_kernel();
  RoceTxTb tb("tb");
  std::mt19937_64 rng(0x4E5E7);
  tb.items.push_back(item_from_frame("cut", random_frame(rng, roce::op::RC_SEND_FIRST, false, 4096)));
  tb.items.push_back(item_from_frame("waiting", random_frame(rng, roce::op::RC_SEND_MIDDLE, true, 4096)));
  for (int i = 0; i < 6; ++i)
    tb.items.push_back(item_from_frame("after reset #" + std::to_string(i),
                                       random_frame(rng, table_opcodes()[size_t(i) * 4], i % 2, 100 * size_t(i))));
  tb.reset_at_edge = 30;  // the first frame is being assembled, the second is held
  tb.resume_item = 2;
  run(tb);
  EXPECT_EQ(tb.out_at_reset, 0u);
  ASSERT_GE(tb.desc_hs[1], 1u) << "the second descriptor was not taken before the reset";
  const std::vector<std::vector<OutBeat>> after(tb.out.begin() + ptrdiff_t(tb.out_at_reset), tb.out.end());
  const std::vector<Item> want(tb.items.begin() + 2, tb.items.end());
  EXPECT_EQ(compare_frames(after, want), 0u);
}

// The RTL's output in a pcap, decoded by scapy: IP checksum, lengths, ports,
// BTH fields and (IPv4) the ICRC as the descriptors say.
TEST(RoceTxRtl, ScapyDecodesOutput) {
  init_kernel();
  RoceTxTb tb("tb");
  tb.items = table_items(0x5CA9);
  tb.timing = {0.2, 0.2, 0.7, 0x5CA9};
  run(tb);
  ASSERT_EQ(compare_frames(tb.out, tb.items), 0u);
  const std::string pcap_path = std::string(ERNIC_RTL_TEST_OUT) + "/roce_tx_out.pcap";
  {
    pcap_t* p = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* dump = pcap_dump_open(p, pcap_path.c_str());
    ASSERT_NE(dump, nullptr) << pcap_path;
    for (size_t k = 0; k < tb.out.size(); ++k) {
      const Bytes b = check_beats(tb.out[k], "frame " + std::to_string(k));
      pcap_pkthdr h{};
      h.ts.tv_sec = long(k);
      h.caplen = h.len = uint32_t(b.size());
      pcap_dump(reinterpret_cast<u_char*>(dump), &h, b.data());
    }
    pcap_dump_close(dump);
    pcap_close(p);
  }
  const std::string cmd = std::string(ERNIC_PYTHON) + " " + ERNIC_RTL_TB_DIR + "/scapy_roce_tx.py " + pcap_path;
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  ASSERT_EQ(pclose(f), 0) << cmd;
  std::istringstream lines(text);
  std::string line;
  size_t k = 0, v4_icrc = 0;
  auto hex = [](const Ip& ip, size_t from) {
    std::string s;
    char b[3];
    for (size_t i = from; i < 16; ++i) {
      std::snprintf(b, sizeof b, "%02x", ip[i]);
      s += b;
    }
    return s;
  };
  while (std::getline(lines, line)) {
    ASSERT_LT(k, tb.items.size());
    const auto j = nlohmann::json::parse(line);
    const TxDesc& d = tb.items[k].desc;
    const TxShape s = tx_shape(d);
    const std::string what = "frame " + std::to_string(k + 1) + " (" + tb.items[k].name + ")";
    EXPECT_EQ(j["len"], s.frame_len) << what;
    const size_t udp_len = s.frame_len - 14 - (d.ipv6 ? 40 : 20);
    if (d.ipv6) {
      ASSERT_EQ(j["ip"], 6) << what;
      EXPECT_EQ(j["tc"], d.tos) << what;
      EXPECT_EQ(j["fl"], d.flow_label) << what;
      EXPECT_EQ(j["plen"], udp_len) << what;
      EXPECT_EQ(j["nh"], 17) << what;
      EXPECT_EQ(j["hlim"], d.ttl) << what;
      EXPECT_EQ(j["src"], hex(d.ip_src, 0)) << what;
      EXPECT_EQ(j["dst"], hex(d.ip_dst, 0)) << what;
    } else {
      ASSERT_EQ(j["ip"], 4) << what;
      EXPECT_EQ(j["ihl"], 5) << what;
      EXPECT_EQ(j["tos"], d.tos) << what;
      EXPECT_EQ(j["tlen"], udp_len + 20) << what;
      EXPECT_EQ(j["id"], d.ip_id) << what;
      EXPECT_EQ(j["flags"], d.ip_flags) << what;
      EXPECT_EQ(j["frag"], 0) << what;
      EXPECT_EQ(j["ttl"], d.ttl) << what;
      EXPECT_EQ(j["proto"], 17) << what;
      EXPECT_EQ(j["chksum_ok"], true) << what;
      EXPECT_EQ(j["src"], hex(d.ip_src, 12)) << what;
      EXPECT_EQ(j["dst"], hex(d.ip_dst, 12)) << what;
      EXPECT_EQ(j["icrc_ok"], true) << what;
      ++v4_icrc;
    }
    EXPECT_EQ(j["sport"], kSport) << what;
    EXPECT_EQ(j["dport"], 4791) << what;
    EXPECT_EQ(j["ulen"], udp_len) << what;
    EXPECT_EQ(j["uchksum"], 0) << what;
    EXPECT_EQ(j["opcode"], d.opcode) << what;
    EXPECT_EQ(j["se"], int(d.se)) << what;
    EXPECT_EQ(j["m"], int(d.mig)) << what;
    EXPECT_EQ(j["pad"], s.pad_len) << what;
    EXPECT_EQ(j["tver"], d.tver) << what;
    EXPECT_EQ(j["pkey"], d.pkey) << what;
    EXPECT_EQ(j["fecn"], d.bth_b4 >> 7) << what;
    EXPECT_EQ(j["becn"], (d.bth_b4 >> 6) & 1) << what;
    EXPECT_EQ(j["resv6"], d.bth_b4 & 0x3F) << what;
    EXPECT_EQ(j["dqpn"], d.dest_qp) << what;
    EXPECT_EQ(j["ackreq"], int(d.ack_req)) << what;
    EXPECT_EQ(j["resv7"], d.resv7) << what;
    EXPECT_EQ(j["psn"], d.psn) << what;
    ++k;
  }
  EXPECT_EQ(k, tb.items.size());
  EXPECT_EQ(v4_icrc, tb.items.size() / 2);
}

}  // namespace
