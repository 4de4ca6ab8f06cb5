// Register-level steps can drive the whole PG332 init flow with no
// driver-level step and give the same pcap as the driver-level flow
// (issue 3): scenarios/handshake/init_register_level.yaml against its twin
// init_driver_level.yaml, every tap byte for byte. The expected frames
// themselves are checked by tshark: FIRST/LAST at PSN 0x100/0x101 to QP2,
// then the ACK of 0x101.
#include <algorithm>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "system_test_util.h"

using namespace system_test;

namespace {

TEST(SystemRegisterLevel, InitFlowGivesTheDriverLevelPcap) {
  const fs::path d1 = test_dir(".driver"), d2 = test_dir(".register");
  const std::string src = ERNIC_SOURCE_DIR;
  SimResult r1 = run_sim(d1, {"run", src + "/scenarios/handshake/init_driver_level.yaml", "--pcap", "out.pcap",
                              "--log", "out.log", "--quiet"});
  SimResult r2 = run_sim(d2, {"run", src + "/scenarios/handshake/init_register_level.yaml", "--pcap", "out.pcap",
                              "--log", "out.log", "--quiet"});
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  ASSERT_EQ(r2.exit_code, 0) << r2.out << r2.err;
  for (const char* name : {"out.pcap", "out.A-tx.pcap", "out.A-rx.pcap", "out.B-tx.pcap", "out.B-rx.pcap"}) {
    const std::string a = read_text(d1 / name), b = read_text(d2 / name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_TRUE(a == b) << name << " differs between the driver-level and register-level flows";
  }
  auto rows = tshark_fields(d2 / "out.pcap", {"infiniband.bth.opcode", "infiniband.bth.psn", "infiniband.bth.destqp"});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(to_u64(rows[0][0]), 6u);   // RC RDMA WRITE FIRST
  EXPECT_EQ(to_u64(rows[0][1]), 0x100u);
  EXPECT_EQ(to_u64(rows[1][0]), 8u);   // RC RDMA WRITE LAST
  EXPECT_EQ(to_u64(rows[1][1]), 0x101u);
  EXPECT_EQ(to_u64(rows[2][0]), 17u);  // ACK
  EXPECT_EQ(to_u64(rows[2][1]), 0x101u);
  for (const auto& r : rows) EXPECT_EQ(to_u64(r[2]), 2u);
  // The register-level run made no driver call: its log holds register
  // writes from steps only, the same writes as the driver's, in order.
  auto writes = [](const fs::path& log) {
    std::vector<std::string> w;
    std::istringstream in(read_text(log));
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      if (j["kind"] == "reg" && j["op"] == "write")
        w.push_back(j["node"].get<std::string>() + " " + j["name"].get<std::string>() + "=" +
                    std::to_string(j["value"].get<uint64_t>()) + "@" + std::to_string(j["t_ps"].get<uint64_t>()));
    }
    // Writes of two nodes at the same simulated time (posted MMIO writes
    // reach both NICs together) are ordered by node: which node's AXI4-Lite
    // process the kernel runs first is not part of the flow.
    std::stable_sort(w.begin(), w.end(), [](const std::string& a, const std::string& b) {
      const auto ta = std::stoull(a.substr(a.rfind('@') + 1)), tb = std::stoull(b.substr(b.rfind('@') + 1));
      return ta != tb ? ta < tb : a.substr(0, a.find(' ')) < b.substr(0, b.find(' '));
    });
    return w;
  };
  EXPECT_EQ(writes(d1 / "out.log"), writes(d2 / "out.log"));
}

}  // namespace
