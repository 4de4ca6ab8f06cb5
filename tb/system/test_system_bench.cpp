// tb/system: `ernic-sim bench` (issue 5's benchmark), on simulated figures
// only (deterministic; never wall-clock time).
//
// The named configuration (PCIe Gen3 x16, MPS 256, MRRS 512, PMTU 4096,
// 100G link, core 200 MHz) must carry 16 KiB RDMA WRITEs at 95 Gb/s or
// more (PG332's reference design measured 95.4). The wire bound is worked
// out here from Ethernet and RoCEv2 framing: a 16 KiB message at PMTU 4096
// is 4 packets; each costs preamble/SFD 8 + Ethernet 14 + IPv4 20 + UDP 8
// + BTH 12 (+ RETH 16 on the first) + 4096 payload + ICRC 4 + FCS 4 + IFG
// 12 bytes on the line at 100 Gb/s. The simulated peak may not exceed it.
#include <fstream>
#include <sstream>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

TEST(SystemBench, NamedConfigurationWrites16KiBAtLineRate) {
  const fs::path dir = test_dir("bench_write16k");
  SimResult r = run_sim(dir, {"bench", "--op", "write", "--sizes", "16384", "--no-speed", "--no-latency", "--out", "b"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // perftest's column layout.
  EXPECT_NE(r.out.find(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"),
            std::string::npos)
      << r.out;
  std::ifstream csv(dir / "b" / "bench.csv");
  std::string header, line;
  std::getline(csv, header);
  ASSERT_EQ(header, "op,bytes,iterations,bw_peak_gbps,bw_average_gbps,msg_rate_mpps,sim_time_us");
  ASSERT_TRUE(std::getline(csv, line));
  const auto f = roce_test::split_csv(line);
  ASSERT_EQ(f.size(), 7u) << line;
  EXPECT_EQ(f[0], "write");
  EXPECT_EQ(f[1], "16384");
  const double iters = std::stod(f[2]), peak = std::stod(f[3]), avg = std::stod(f[4]), mpps = std::stod(f[5]),
               us = std::stod(f[6]);
  const double line_bytes = 4 * (8 + 14 + 20 + 8 + 12 + 4096 + 4 + 4 + 12) + 16;  // per message, on the line
  const double wire_gbps = 16384.0 * 8 / (line_bytes * 8 / 100.0);                 // 100 Gb/s: 0.08 ns a byte
  EXPECT_GE(avg, 95.0) << "WRITE goodput in the named configuration";
  EXPECT_LE(peak, wire_gbps + 0.01) << "faster than the wire allows (" << wire_gbps << " Gb/s)";
  EXPECT_LE(avg, peak);
  // The three figures agree with each other: rate = iterations / time.
  EXPECT_NEAR(mpps, iters / us, 1e-4);
  EXPECT_NEAR(avg, iters * 16384 * 8 / (us * 1e3), 0.01);
}

// The same command twice gives the same bench.csv (simulated time only);
// the wall-clock speed lands in speed.csv, one row per run.
TEST(SystemBench, Deterministic) {
  const fs::path dir = test_dir("bench_determinism");
  SimResult a = run_sim(dir, {"bench", "--op", "read,send", "--sizes", "64,65536", "--out", "a"});
  SimResult b = run_sim(dir, {"bench", "--op", "read,send", "--sizes", "64,65536", "--out", "b"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_EQ(read_text(dir / "a" / "bench.csv"), read_text(dir / "b" / "bench.csv"));
  EXPECT_EQ(read_text(dir / "a" / "bench.csv").find("wall"), std::string::npos);
  const auto rows = roce_test::split_lines(read_text(dir / "a" / "speed.csv"));
  ASSERT_GE(rows.size(), 4u);
  EXPECT_EQ(rows[0], "run,sim_core_cycles_per_wall_second");
  EXPECT_EQ(rows[1].substr(0, 5), "read,");
  EXPECT_EQ(rows[2].substr(0, 5), "send,");
  EXPECT_EQ(rows[3].substr(0, 5), "idle,");
}

}  // namespace
