// tb/system: protocol features of issue 4 seen from outside the model.
//
// - ECN and CNP (scenarios/traffic/rc_write_ecn_cnp.yaml): on the wire pcap,
//   tshark finds the WRITEs the switch marked with ECN = CE (ip.dsfield.ecn
//   3) with a valid IPv4 header checksum, and the CNPs B's software sent
//   (BTH opcode 0x81 = 129, DestQP = A's QP 2); the CNP's bytes are checked
//   by hand against RoCEv2 Annex A17.9.3: BECN (bit 6 of BTH byte 4), 16
//   reserved zero bytes, then the ICRC (74 bytes with Ethernet/IPv4/UDP).
// - Inline SEND data (scenarios/traffic/rc_send_inline_ieth.yaml, PG332
//   Table 2-1 SDATA): from the transaction log, A's payload master
//   (wqe_proc_top_m_axi) reads only the 17-, 100- and 64-byte payloads; the
//   16- and 1-byte SENDs are read from nowhere but the WQE. The ieth_immdt
//   entries carry PG332 section 4's layout, computed here from the
//   scenario's values: [31:0] data, [39:32] type, [47:40] QP, [55:48] RQ PI.
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

constexpr size_t kBthOff = 14 + 20 + 8;  // Ethernet, IPv4 without options, UDP

TEST(SystemProtocol, EcnMarksAndCnpsOnTheWire) {
  const fs::path dir = test_dir("protocol_ecn");
  SimResult r = run_sim(dir, {"run", kSourceDir + "/scenarios/traffic/rc_write_ecn_cnp.yaml", "--pcap", "out.pcap",
                              "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The wire capture shows frames as sent; the receivers' rx taps show
  // them after the switch (the fault) acted.
  auto fields = [&](const std::string& pcap) {
  const std::string tshark = roce_test::shell_quote(kTshark) + " -n -o ip.check_checksum:TRUE -r " +
                             roce_test::shell_quote((dir / pcap).string()) +
                             " -T fields -E separator=, -e frame.number -e ip.dsfield.ecn -e ip.checksum.status"
                             " -e infiniband.bth.opcode -e infiniband.bth.destqp 2>/dev/null";
  int st = 0;
  const std::string out = roce_test::run(tshark, &st);
  EXPECT_EQ(st, 0) << pcap;
  return out;
  };
  std::vector<int> marked, cnps;
  std::string all = fields("out.B-rx.pcap");
  for (const auto& line : roce_test::split_lines(all)) {
    if (line.empty()) continue;
    const auto f = roce_test::split_csv(line);
    ASSERT_EQ(f.size(), 5u) << line;
    if (f[1] == "3") {
      EXPECT_EQ(f[2], "1") << "marked frame " << f[0] << ": IPv4 checksum not good after marking (tshark: 1 = good)";
      EXPECT_EQ(f[3], "10") << "marked frame " << f[0] << " is not an RC_WRITE_ONLY";
      marked.push_back(std::stoi(f[0]));
    }
  }
  for (const auto& line : roce_test::split_lines(fields("out.A-rx.pcap"))) {
    if (line.empty()) continue;
    const auto f = roce_test::split_csv(line);
    ASSERT_EQ(f.size(), 5u) << line;
    if (f[3] == "129") {
      EXPECT_EQ(to_u64(f[4]), 2u) << "CNP " << f[0] << " not addressed to A's QP 2";
      EXPECT_NE(f[1], "3") << "a CNP was marked";
      cnps.push_back(std::stoi(f[0]));
    }
  }
  ASSERT_EQ(marked.size(), 2u) << "the scenario installs two ecn rules of count 1";
  ASSERT_EQ(cnps.size(), 2u);
  const auto frames = ernic::PcapReader::read_all((dir / "out.A-rx.pcap").string());
  for (int n : cnps) {
    const auto& d = frames.at(size_t(n - 1)).data;
    ASSERT_EQ(d.size(), kBthOff + 12 + 16 + 4u) << "CNP " << n << " length";
    EXPECT_EQ(d[kBthOff], 0x81);
    EXPECT_EQ(d[kBthOff + 4], 0x40) << "BTH byte 4: BECN (bit 6) only";
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(d[kBthOff + 12 + i], 0) << "CNP reserved byte " << i;
  }
}

TEST(SystemProtocol, InlineSendsReadNoPayloadAndIethEntriesFollowPg332) {
  const fs::path dir = test_dir("protocol_inline");
  SimResult r = run_sim(dir, {"run", kSourceDir + "/scenarios/traffic/rc_send_inline_ieth.yaml", "--log",
                              "out.jsonl", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream in(read_text(dir / "out.jsonl"));
  std::vector<uint64_t> payload_reads;
  std::vector<std::string> ieth;
  for (std::string line; std::getline(in, line);) {
    const json o = json::parse(line);
    if (o["kind"] == "dma" && o["node"] == "A" && o["master"] == "wqe_proc_top_m_axi" && o.value("qp", 0) == 2)
      payload_reads.push_back(o["len"].get<uint64_t>());
    if (o["kind"] == "state" && o["node"] == "B" && o["what"] == "ieth_immdt") ieth.push_back(o["value"]);
  }
  // The scenario's SENDs of 16 and 1 bytes are inline; 17 (SEND), 100
  // (SEND_INV) and 64 (WRITE_IMM) bytes are read from LADDR.
  EXPECT_EQ(payload_reads, (std::vector<uint64_t>{17, 100, 64}));
  // type 2 SEND_IMM / 1 SEND_INV / 3 WRITE_IMM, QP 2; the SEND_IMM is the
  // third RQ element (PI 3 after it), the SEND_INV the fourth.
  const uint64_t e1 = 0x11223344ull | 2ull << 32 | 2ull << 40 | 3ull << 48;
  const uint64_t e2 = 0x00000105ull | 1ull << 32 | 2ull << 40 | 4ull << 48;
  const uint64_t e3 = 0x00C0FFEEull | 3ull << 32 | 2ull << 40;
  ASSERT_EQ(ieth.size(), 3u);
  auto hex = [](uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%014llx", static_cast<unsigned long long>(v));
    return std::string(b);
  };
  EXPECT_EQ(ieth[0].substr(0, 16), hex(e1));
  EXPECT_EQ(ieth[1].substr(0, 16), hex(e2));
  EXPECT_EQ(ieth[2].substr(0, 16), hex(e3));
}

// scenarios/examples/bypass.yaml: on B's rx tap tshark finds the two raw
// frames (EtherType 0x88b5) and the three UDP datagrams to port 4792 with a
// good IPv4 checksum; none of them reaches ERNIC, whose incoming-packet
// count (INALLDRPPKTCNT[15:0], checked by the scenario) covers RoCE only.
TEST(SystemProtocol, NonRoceFramesCrossTheWireUntouched) {
  const fs::path dir = test_dir("protocol_bypass");
  SimResult r = run_sim(dir, {"run", kSourceDir + "/scenarios/examples/bypass.yaml", "--pcap", "out.pcap", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string cmd = roce_test::shell_quote(kTshark) + " -n -o ip.check_checksum:TRUE -r " +
                          roce_test::shell_quote((dir / "out.B-rx.pcap").string()) +
                          " -Y 'not infiniband' -T fields -E separator=, -e eth.type -e udp.dstport -e ip.checksum.status"
                          " -e frame.len 2>/dev/null";
  int st = 0;
  const std::string out = roce_test::run(cmd, &st);
  ASSERT_EQ(st, 0);
  int raw = 0, udp = 0;
  for (const auto& line : roce_test::split_lines(out)) {
    if (line.empty()) continue;
    const auto f = roce_test::split_csv(line);
    ASSERT_EQ(f.size(), 4u) << line;
    if (f[0] == "0x88b5") {
      ++raw;
      EXPECT_EQ(f[3], "114") << "14-byte Ethernet header + 100 bytes";
    } else if (f[1] == "4792") {
      ++udp;
      EXPECT_EQ(f[2], "1") << "IPv4 checksum (tshark: 1 = good)";
      EXPECT_EQ(f[3], "242") << "14 + 20 + 8 + 200 bytes";
    } else {
      ADD_FAILURE() << "unexpected non-RoCE frame: " << line;
    }
  }
  EXPECT_EQ(raw, 2);
  EXPECT_EQ(udp, 3);
}

}  // namespace
