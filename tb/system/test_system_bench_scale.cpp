// tb/system: `ernic-sim bench --scale` (issue 17, tools/bench_scale.h) on
// its simulated figures (deterministic) and the shape of its table; wall
// time and RSS are only checked to be there (a benchmark, never asserted).
//
// 16 MiB of 64 KiB RDMA WRITEs per case (256 messages; 255 with 255 active
// QPs, one each) at PMTU 4096: 16 packets a message, each on the line
// preamble/SFD 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 4096 + ICRC 4 +
// FCS 4 + IFG 12 = 4178 bytes, plus the RETH's 16 on the first: the traffic
// cannot take less than that at 100 Gb/s (0.08 ns a byte), and the NIC
// keeps the line busy (goodput >= 95 Gb/s, as the bench's own test asks of
// one QP). An idle QP changes nothing: 255 connected with one active takes
// exactly the simulated time of one connected.
#include <map>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

TEST(SystemBench, ScaleTableOverQpCounts) {
  const fs::path dir = test_dir("bench_scale");
  SimResult r = run_sim(dir, {"bench", "--scale", "--speed-datapaths", "model", "--out", "s"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Scale: wall seconds per simulated ms of line-rate RDMA WRITE traffic"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" QPs act/con     model s/ms  /floor  RSS MiB"), std::string::npos) << r.out;
  const auto rows = roce_test::split_lines(read_text(dir / "s" / "scale.csv"));
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0],
            "active_qps,connected_qps,datapath,traffic_sim_us,traffic_wall_s,wall_s_per_sim_ms,"
            "sim_core_cycles_per_wall_second,floor_cycles_per_wall_second,ratio_to_floor,max_rss_kib");
  const std::vector<std::pair<int, int>> cases = {{1, 1}, {8, 8}, {64, 64}, {255, 255}, {1, 255}};
  std::map<std::pair<int, int>, std::string> sim_us;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto f = roce_test::split_csv(rows[i + 1]);
    ASSERT_EQ(f.size(), 10u) << rows[i + 1];
    const auto [active, connected] = cases[i];
    EXPECT_EQ(std::stoi(f[0]), active);
    EXPECT_EQ(std::stoi(f[1]), connected);
    EXPECT_EQ(f[2], "model");
    const int msgs = active == 255 ? 255 : 256;
    const double line_bytes = double(msgs) * (16 * 4178 + 16);
    const double bound_us = line_bytes * 0.08 / 1000;
    const double us = std::stod(f[3]);
    EXPECT_GE(us, bound_us) << rows[i + 1] << ": faster than the wire";
    EXPECT_GE(double(msgs) * 65536 * 8 / (us * 1e3), 95.0) << rows[i + 1] << ": goodput in Gb/s";
    sim_us[cases[i]] = f[3];
    // Wall-clock columns: present and consistent, never a threshold.
    const double wall = std::stod(f[4]), per_ms = std::stod(f[5]), cps = std::stod(f[6]), floor = std::stod(f[7]),
                 ratio = std::stod(f[8]);
    EXPECT_GE(wall, 0.0) << rows[i + 1];
    EXPECT_NEAR(per_ms, wall / (us / 1e3), 1e-3 + 1e-3 * per_ms) << rows[i + 1];
    EXPECT_GT(floor, 0.0) << rows[i + 1];
    EXPECT_NEAR(ratio, cps / floor, 1e-4 + 1e-3 * ratio) << rows[i + 1];
    EXPECT_GT(std::stol(f[9]), 0) << rows[i + 1];
  }
  const std::string one = sim_us[std::make_pair(1, 1)], one_of_255 = sim_us[std::make_pair(1, 255)];
  EXPECT_EQ(one, one_of_255) << "254 idle QPs changed the active one's traffic";
}

}  // namespace
