// tb/system: IPv6 end to end, judged by tools apart from the model.
// scenarios/traffic/rc_ipv6_write_read_send.yaml runs CM, a WRITE, a READ
// and a SEND between two IPv6-only nodes; its capture is read by tshark
// (IPv6, UDP, the InfiniBand dissector: opcodes, PSNs, destination QPs, the
// ConnectRequest's GIDs and rdma_cm header) and every frame's ICRC is
// recomputed here with a CRC and a masking written in this file (scapy
// 2.5 writes a zero ICRC for IPv6, so it cannot be the oracle;
// ../shared/spec/icrc-and-oracles.md).
//
// Expected values come from the scenario file (addresses, QPNs 2 and 3,
// PSNs 0x100 / 0x800, 16 KiB WRITE and 8 KiB READ at PMTU 1024, a 256-byte
// SEND) and from IBTA (opcodes, ICRC coverage and masking).
#include <map>
#include <tuple>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

const std::string kScenario = kSourceDir + "/scenarios/traffic/rc_ipv6_write_read_send.yaml";
const std::string kA = "fd00::a", kB = "fd00:0:0:1::b";

class SystemIpv6 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir();
    SimResult r = run_sim(dir_, {"run", kScenario, "--pcap", "out.pcap", "--json", "out.json", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << "ernic-sim failed in " << dir_ << "\n" << r.out << r.err;
  }
  fs::path dir_;
};

// Bitwise CRC-32 (reflected 0xEDB88320, init and final XOR all ones).
uint32_t crc32(const std::vector<uint8_t>& d) {
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t b : d) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

TEST_F(SystemIpv6, TsharkSeesRoceV2OverIpv6) {
  const std::vector<std::string> f = {
      "frame.number",             // 0
      "frame.protocols",          // 1
      "ipv6.src",                 // 2
      "ipv6.dst",                 // 3
      "udp.dstport",              // 4
      "infiniband.bth.opcode",    // 5
      "infiniband.bth.psn",       // 6
      "infiniband.bth.destqp",    // 7
      "_ws.malformed",            // 8
      "ip.src",                   // 9
      "ipv6.nxt",                 // 10
      "ipv6.hlim",                // 11
  };
  int st = 0;
  const auto rows = tshark_fields(dir_ / "out.pcap", f, &st);
  ASSERT_EQ(st, 0);
  ASSERT_FALSE(rows.empty());
  // Per direction: (opcode, PSN, DestQP) in order.
  std::map<std::string, std::vector<std::tuple<int, uint64_t, uint64_t>>> seq;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), f.size());
    EXPECT_NE(r[1].find(":ipv6:udp:infiniband"), std::string::npos) << "frame " << r[0] << ": " << r[1];
    EXPECT_TRUE(r[8].empty()) << "frame " << r[0] << " is malformed";
    EXPECT_TRUE(r[9].empty()) << "frame " << r[0] << " has an IPv4 header";
    EXPECT_EQ(r[4], "4791") << "frame " << r[0];
    EXPECT_EQ(r[10], "17") << "frame " << r[0] << ": next header UDP";
    EXPECT_EQ(r[11], "64") << "frame " << r[0] << ": hop limit";
    const bool ab = r[2] == kA && r[3] == kB, ba = r[2] == kB && r[3] == kA;
    EXPECT_TRUE(ab || ba) << "frame " << r[0] << ": " << r[2] << " -> " << r[3];
    seq[ab ? "A->B" : "B->A"].emplace_back(int(to_u64(r[5])), to_u64(r[6]), to_u64(r[7]));
  }
  // IBTA opcodes.
  constexpr int kUd = 100, kWF = 6, kWM = 7, kWL = 8, kRdReq = 12, kRF = 13, kRM = 14, kRL = 15, kAck = 17,
                kSendOnly = 4;
  const auto& got_ab = seq["A->B"];
  const auto& got_ba = seq["B->A"];
  // A->B: ConnectRequest, ReadyToUse, WRITE 0x100..0x10F to QP 3, READ_REQUEST 0x110, ACK of B's SEND.
  ASSERT_EQ(got_ab.size(), 2u + 16u + 1u + 1u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(std::get<0>(got_ab[k]), kUd);
    EXPECT_EQ(std::get<2>(got_ab[k]), 1u);
  }
  for (size_t k = 0; k < 16; ++k) {
    const auto& [op, psn, qp] = got_ab[2 + k];
    EXPECT_EQ(op, k == 0 ? kWF : k == 15 ? kWL : kWM) << "WRITE packet " << k;
    EXPECT_EQ(psn, 0x100u + k);
    EXPECT_EQ(qp, 3u);
  }
  EXPECT_EQ(got_ab[18], std::make_tuple(kRdReq, uint64_t(0x110), uint64_t(3)));
  EXPECT_EQ(got_ab[19], std::make_tuple(kAck, uint64_t(0x800), uint64_t(3)));
  // B->A: ConnectReply, ACK 0x10F, READ responses 0x110..0x117, SEND_ONLY 0x800, all to QP 2.
  ASSERT_EQ(got_ba.size(), 1u + 1u + 8u + 1u);
  EXPECT_EQ(std::get<0>(got_ba[0]), kUd);
  EXPECT_EQ(got_ba[1], std::make_tuple(kAck, uint64_t(0x10F), uint64_t(2)));
  for (size_t k = 0; k < 8; ++k) {
    const auto& [op, psn, qp] = got_ba[2 + k];
    EXPECT_EQ(op, k == 0 ? kRF : k == 7 ? kRL : kRM) << "READ response " << k;
    EXPECT_EQ(psn, 0x110u + k);
    EXPECT_EQ(qp, 2u);
  }
  EXPECT_EQ(got_ba[10], std::make_tuple(kSendOnly, uint64_t(0x800), uint64_t(2)));
}

// CM over IPv6: the ConnectRequest's primary-path GIDs are the IPv6
// addresses and rdma_cm's private-data header is in its IPv6 form.
TEST_F(SystemIpv6, ConnectRequestCarriesIpv6Gids) {
  const std::vector<std::string> f = {"infiniband.mad.attributeid", "infiniband.cm.req.prim_localgid",
                                      "infiniband.cm.req.prim_remotegid", "infiniband.cm.req.ip_cm.ipv",
                                      "infiniband.cm.req.ip_cm.sip6", "infiniband.cm.req.ip_cm.dip6"};
  int st = 0;
  const auto rows = tshark_fields(dir_ / "out.pcap", f, &st);
  ASSERT_EQ(st, 0);
  int reqs = 0;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), f.size());
    if (r[0] != "0x0010") continue;
    ++reqs;
    EXPECT_EQ(r[1], kA);
    EXPECT_EQ(r[2], kB);
    EXPECT_EQ(to_u64(r[3]), 6u) << "rdma_cm IP version";
    EXPECT_EQ(r[4], kA);
    EXPECT_EQ(r[5], kB);
  }
  EXPECT_EQ(reqs, 1);
}

// Every frame's ICRC, recomputed here: 8 bytes of ones, then the IPv6
// header with traffic class, flow label and hop limit set to ones, UDP with
// its checksum set to ones, the BTH with byte 4 set to ones, and the rest up
// to the ICRC, which is stored least-significant byte first.
TEST_F(SystemIpv6, EveryIcrcIsRightByAnIndependentCrc) {
  const auto frames = ernic::PcapReader::read_all((dir_ / "out.pcap").string());
  ASSERT_EQ(frames.size(), 31u) << "20 frames A->B, 11 B->A";
  for (size_t i = 0; i < frames.size(); ++i) {
    const std::vector<uint8_t>& b = frames[i].data;
    ASSERT_GE(b.size(), 14u + 40u + 8u + 12u + 4u) << "frame " << i + 1;
    ASSERT_EQ(b[12], 0x86);
    ASSERT_EQ(b[13], 0xDD) << "frame " << i + 1 << " is not IPv6";
    ASSERT_EQ(b[14] >> 4, 6);
    const size_t end = 14 + 40 + (size_t(b[18]) << 8 | b[19]);  // Ethernet + IPv6 header + payload length
    ASSERT_LE(end, b.size()) << "frame " << i + 1;
    std::vector<uint8_t> m(8, 0xFF);
    m.insert(m.end(), b.begin() + 14, b.begin() + long(end) - 4);
    m[8 + 0] |= 0x0F;                               // traffic class (high nibble)
    m[8 + 1] = m[8 + 2] = m[8 + 3] = 0xFF;          // traffic class (low nibble), flow label
    m[8 + 7] = 0xFF;                                // hop limit
    m[8 + 40 + 6] = m[8 + 40 + 7] = 0xFF;           // UDP checksum
    m[8 + 48 + 4] = 0xFF;                           // BTH resv8a (FECN, BECN)
    const uint32_t want = crc32(m);
    const uint32_t stored = uint32_t(b[end - 4]) | uint32_t(b[end - 3]) << 8 | uint32_t(b[end - 2]) << 16 |
                            uint32_t(b[end - 1]) << 24;
    EXPECT_EQ(stored, want) << "frame " << i + 1 << " ICRC";
  }
}

}  // namespace
