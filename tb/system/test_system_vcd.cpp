// tb/system: the default scenario's merged waveform (model + Verilated RTL).
//
// - GTKWave's vcd2fst accepts it.
// - RTL: the ICRC block inside roce_tx in node A's Verilated datapath
//   (top.A.datapath.rtl.roce_datapath.u_tx.u_icrc) raises crc_valid once
//   per frame A transmits, and at each rise its `crc`
//   output is the ICRC that frame carries on the wire (last 4 bytes of the
//   frame in A's transmit tap, least significant byte first), produced
//   before the frame's first byte leaves.
// - Model: top.A.cmac.tx_axis_tvalid rises once per transmitted frame, on a
//   CMAC clock edge, preamble+SFD time (8 B at 100 Gb/s = 640 ps) before
//   the pcap timestamp (first byte after the SFD, truncated to ns), and
//   stays high for one 64-byte beat a CMAC cycle; the same for B.
// - Model: the CQ head of A's RC QP (top.A.ernic.qp<N>.CQHEAD, N = the
//   LocalQPN of the ConnectRequest as tshark reads it) is 0 until B's ACK
//   has reached A and 1 after it.
// Times come from the pcap files; signal values from the VCD.
#include <fstream>
#include <optional>

#include "model/trace/pcap_writer.h"
#include "model/trace/vcd.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using ernic::PcapFrame;
using ernic::PcapReader;

// A minimal VCD scanner, independent of model/trace/vcd.cpp: the changes
// (time_ps, value token) of the named variables. Only for 1 ps timescale
// files (what the merged VCD declares; checked).
struct Changes {
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> by_name;
};

Changes scan_vcd(const fs::path& path, const std::vector<std::string>& names) {
  std::ifstream f(path);
  std::string line;
  std::vector<std::string> scope;
  std::map<std::string, std::vector<std::string>> code_to_names;
  bool timescale_ok = false;
  std::string pending_kw;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.empty()) continue;
    if (t[0] == "$timescale") {
      std::string all = line;
      while (all.find("$end") == std::string::npos && std::getline(f, line)) all += " " + line;
      timescale_ok = all.find("1ps") != std::string::npos || all.find("1 ps") != std::string::npos;
    } else if (t[0] == "$scope" && t.size() >= 3) {
      scope.push_back(t[2]);
    } else if (t[0] == "$upscope") {
      scope.pop_back();
    } else if (t[0] == "$var" && t.size() >= 5) {
      std::string full;
      for (const auto& s : scope) full += s + ".";
      full += t[4];
      code_to_names[t[3]].push_back(full);
    } else if (t[0] == "$enddefinitions") {
      break;
    }
  }
  EXPECT_TRUE(timescale_ok) << "the merged VCD should use a 1 ps timescale";
  std::map<std::string, std::vector<std::string>> wanted;  // code -> names
  for (const auto& [code, ns] : code_to_names)
    for (const auto& n : ns)
      for (const auto& want : names)
        if (n == want) wanted[code].push_back(n);
  Changes c;
  for (const auto& n : names) c.by_name[n];
  uint64_t now = 0;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      now = std::stoull(line.substr(1));
      continue;
    }
    if (line[0] == '$') continue;
    std::string value, code;
    if (line[0] == 'b' || line[0] == 'B' || line[0] == 'r' || line[0] == 'R') {
      const size_t sp = line.find(' ');
      if (sp == std::string::npos) continue;
      value = line.substr(0, sp);
      code = line.substr(sp + 1);
    } else {
      value = line.substr(0, 1);
      code = line.substr(1);
    }
    auto it = wanted.find(code);
    if (it == wanted.end()) continue;
    for (const auto& n : it->second) c.by_name[n].emplace_back(now, value);
  }
  return c;
}

uint64_t token_value(const std::string& v) {
  if (v.empty()) return ~0ull;
  if (v[0] == 'b' || v[0] == 'B') {
    if (v.find_first_not_of("01", 1) != std::string::npos) return ~0ull;
    return std::stoull(v.substr(1), nullptr, 2);
  }
  return v == "1" ? 1 : v == "0" ? 0 : ~0ull;
}

// Times at which a 1-bit signal goes 0 -> 1, and 1 -> 0.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> edges(const std::vector<std::pair<uint64_t, std::string>>& ch) {
  std::vector<uint64_t> rise, fall;
  std::string prev = "x";
  for (const auto& [t, v] : ch) {
    if (v == "1" && prev != "1") rise.push_back(t);
    if (v == "0" && prev == "1") fall.push_back(t);
    prev = v;
  }
  return {rise, fall};
}

uint32_t wire_icrc(const PcapFrame& fr) {
  // RoCEv2/IPv4: the ICRC is the last 4 bytes of the IP datagram (the
  // frame may carry Ethernet padding after it), least significant first.
  const size_t ip_len = size_t(fr.data[16]) << 8 | fr.data[17];
  const size_t end = 14 + ip_len;
  EXPECT_LE(end, fr.data.size());
  return uint32_t(fr.data[end - 4]) | uint32_t(fr.data[end - 3]) << 8 | uint32_t(fr.data[end - 2]) << 16 |
         uint32_t(fr.data[end - 1]) << 24;
}

class SystemVcd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir();
    ASSERT_NO_FATAL_FAILURE(run_default(dir_, /*vcd=*/true));
    vcd_ = dir_ / "out.vcd";
    ASSERT_TRUE(fs::exists(vcd_));
    ASSERT_GT(fs::file_size(vcd_), 0u);
  }
  fs::path dir_, vcd_;
};

TEST_F(SystemVcd, Vcd2fstAcceptsIt) {
  ASSERT_FALSE(std::string(VCD2FST_PROGRAM).empty()) << "vcd2fst (gtkwave) not found";
  const fs::path fst = dir_ / "out.fst";
  int st = -1;
  const std::string out = roce_test::run(roce_test::shell_quote(VCD2FST_PROGRAM) + " " +
                                             roce_test::shell_quote(vcd_.string()) + " " +
                                             roce_test::shell_quote(fst.string()) + " 2>&1",
                                         &st);
  EXPECT_EQ(st, 0) << out;
  ASSERT_TRUE(fs::exists(fst));
  EXPECT_GT(fs::file_size(fst), 0u);
  // Round trip through fst2vcd (gtkwave; tools/bootstrap installs it): the
  // RTL and model signals come back with the same changes at the same times
  // (the ICRC block's crc_valid pulses, A's CMAC tx tvalid).
  ASSERT_FALSE(std::string(FST2VCD_PROGRAM).empty()) << "fst2vcd (gtkwave) not found";
  const fs::path back = dir_ / "back.vcd";
  roce_test::run(roce_test::shell_quote(FST2VCD_PROGRAM) + " " + roce_test::shell_quote(fst.string()) + " > " +
                     roce_test::shell_quote(back.string()) + " 2>/dev/null",
                 &st);
  EXPECT_EQ(st, 0);
  for (const std::string name : {"top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.crc_valid", "top.A.cmac.tx_axis_tvalid"}) {
    const auto a = edges(scan_vcd(vcd_, {name}).by_name[name]);
    const auto b = edges(scan_vcd(back, {name}).by_name[name]);
    EXPECT_FALSE(a.first.empty()) << name;
    EXPECT_EQ(a.first, b.first) << name << ": rising edges";
    EXPECT_EQ(a.second, b.second) << name << ": falling edges";
  }
}

TEST_F(SystemVcd, RtlIcrcPulsesOncePerFrameWithTheWireIcrc) {
  const std::string valid = "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.crc_valid";
  const std::string crc = "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.crc";
  ASSERT_TRUE(ernic::trace::vcd_has_var(vcd_.string(), valid));
  ASSERT_TRUE(ernic::trace::vcd_has_var(vcd_.string(), crc));
  const auto a_tx = PcapReader::read_all((dir_ / "out.A-tx.pcap").string());
  ASSERT_EQ(a_tx.size(), 18u);

  Changes ch = scan_vcd(vcd_, {valid});
  const auto rise = edges(ch.by_name[valid]).first;
  ASSERT_EQ(rise.size(), a_tx.size()) << "crc_valid rises once per frame A transmits";
  for (size_t k = 0; k < rise.size(); ++k) {
    const auto v = ernic::trace::vcd_value_at(vcd_.string(), crc, rise[k]);
    ASSERT_TRUE(v.has_value()) << "crc at " << rise[k] << " ps";
    EXPECT_EQ(uint32_t(*v), wire_icrc(a_tx[k]))
        << std::hex << "frame " << std::dec << k + 1 << ": RTL crc at " << rise[k] << " ps";
    EXPECT_LT(rise[k], a_tx[k].time_ns * 1000) << "the ICRC exists before the frame's first byte leaves";
    // The library reader agrees with the scanner about crc_valid itself.
    EXPECT_EQ(ernic::trace::vcd_value_at(vcd_.string(), valid, rise[k]), std::optional<uint64_t>(1));
    EXPECT_EQ(ernic::trace::vcd_value_at(vcd_.string(), valid, rise[k] - 1), std::optional<uint64_t>(0));
  }
}

TEST_F(SystemVcd, CmacTvalidMatchesPcapTimestamps) {
  for (const char* node : {"A", "B"}) {
    const std::string tvalid = std::string("top.") + node + ".cmac.tx_axis_tvalid";
    ASSERT_TRUE(ernic::trace::vcd_has_var(vcd_.string(), tvalid));
    const auto tx = PcapReader::read_all((dir_ / (std::string("out.") + node + "-tx.pcap")).string());
    ASSERT_FALSE(tx.empty());
    Changes ch = scan_vcd(vcd_, {tvalid});
    const auto [rise, fall] = edges(ch.by_name[tvalid]);
    ASSERT_EQ(rise.size(), tx.size()) << node << ": one tvalid burst per frame";
    ASSERT_EQ(fall.size(), tx.size()) << node;
    for (size_t k = 0; k < tx.size(); ++k) {
      EXPECT_EQ(rise[k] % kCmacPeriodPs, 0u) << node << " frame " << k + 1 << ": tvalid not on a CMAC edge";
      EXPECT_EQ((rise[k] + kPreamblePs) / 1000, tx[k].time_ns)
          << node << " frame " << k + 1 << ": tvalid rose at " << rise[k] << " ps";
      const uint64_t beats = (tx[k].data.size() + 63) / 64;
      EXPECT_EQ(fall[k] - rise[k], beats * kCmacPeriodPs) << node << " frame " << k + 1;
    }
  }
  // The brief's spot check with the library reader: tvalid is 1 at the
  // first WRITE frame's pcap time minus the preamble (rounded up to cover
  // the ns truncation) and 0 just before.
  int st = 0;
  auto rows = tshark_fields(dir_ / "out.A-tx.pcap", {"infiniband.bth.opcode"}, &st);
  const auto a_tx = PcapReader::read_all((dir_ / "out.A-tx.pcap").string());
  ASSERT_EQ(rows.size(), a_tx.size());
  size_t first_write = rows.size();
  for (size_t i = 0; i < rows.size(); ++i)
    if (to_u64(rows[i][0]) == 6) {
      first_write = i;
      break;
    }
  ASSERT_LT(first_write, rows.size());
  const uint64_t t = a_tx[first_write].time_ns * 1000;
  EXPECT_EQ(ernic::trace::vcd_value_at(vcd_.string(), "top.A.cmac.tx_axis_tvalid", t - kPreamblePs + 999),
            std::optional<uint64_t>(1));
  EXPECT_EQ(ernic::trace::vcd_value_at(vcd_.string(), "top.A.cmac.tx_axis_tvalid", t - kPreamblePs - 1),
            std::optional<uint64_t>(0));
}

TEST_F(SystemVcd, CqHeadBecomesOneAfterTheAck) {
  int st = 0;
  auto req = tshark_fields(dir_ / "out.pcap", {"infiniband.cm.req.localqpn"}, &st);
  ASSERT_EQ(st, 0);
  uint64_t qpn = 0;
  for (const auto& r : req)
    if (!r[0].empty()) qpn = to_u64(r[0]);
  ASSERT_GE(qpn, 2u);
  auto rx = tshark_fields(dir_ / "out.A-rx.pcap", {"infiniband.bth.opcode"}, &st);
  const auto a_rx = PcapReader::read_all((dir_ / "out.A-rx.pcap").string());
  ASSERT_EQ(rx.size(), a_rx.size());
  std::optional<uint64_t> ack_ps;
  for (size_t i = 0; i < rx.size(); ++i)
    if (to_u64(rx[i][0]) == 17) ack_ps = a_rx[i].time_ns * 1000;
  ASSERT_TRUE(ack_ps.has_value()) << "no ACK reached A";

  const std::string head = "top.A.ernic.qp" + std::to_string(qpn) + ".CQHEAD";
  ASSERT_TRUE(ernic::trace::vcd_has_var(vcd_.string(), head)) << head;
  EXPECT_EQ(ernic::trace::vcd_value_at(vcd_.string(), head, *ack_ps), std::optional<uint64_t>(0));
  EXPECT_EQ(ernic::trace::vcd_value_at(vcd_.string(), head, *ack_ps + 10'000'000), std::optional<uint64_t>(1));
  Changes ch = scan_vcd(vcd_, {head});
  std::optional<uint64_t> became_one;
  for (const auto& [t, v] : ch.by_name[head])
    if (token_value(v) == 1) {
      became_one = t;
      break;
    }
  ASSERT_TRUE(became_one.has_value());
  EXPECT_GT(*became_one, *ack_ps) << "CQHEAD moved before the ACK arrived";
}

}  // namespace
