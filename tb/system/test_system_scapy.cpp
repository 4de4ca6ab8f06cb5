// tb/system: scapy (tb/roce/scapy_icrc.py, Debian's python3-scapy) recomputes
// the ICRC and the IPv4 header checksum of every frame the default scenario
// put on the wire, in the merged capture and in every per-tap file; the
// number of frames it checked must equal the number of frames in the files.
#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

TEST(SystemScapy, IcrcAndIpv4ChecksumOfEveryFrame) {
  const fs::path dir = test_dir();
  ASSERT_NO_FATAL_FAILURE(run_default(dir));
  // One scapy process for all five files (its start-up dominates).
  size_t n = 0;
  std::string files;
  for (const char* name : {"out.pcap", "out.A-tx.pcap", "out.A-rx.pcap", "out.B-tx.pcap", "out.B-rx.pcap"}) {
    const fs::path p = dir / name;
    const size_t k = ernic::PcapReader::read_all(p.string()).size();
    EXPECT_GT(k, 0u) << name;
    n += k;
    files += " " + roce_test::shell_quote(p.string());
  }
  EXPECT_EQ(n, 3u * 20u) << "20 frames on the wire (3 CM, 16 WRITE, 1 ACK), each in the merged file, a tx tap and an rx tap";
  int st = -1;
  const std::string cmd = roce_test::shell_quote(ERNIC_PYTHON) + " " +
                          roce_test::shell_quote(kSourceDir + "/tb/roce/scapy_icrc.py") + " --expect-checked " +
                          std::to_string(n) + files + " 2>&1";
  const std::string out = roce_test::run(cmd, &st);
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("checked " + std::to_string(n) + " RoCE/IPv4 frames, 0 with mismatches"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("MISMATCH"), std::string::npos) << out;
}

}  // namespace
