// tb/system: the RoCEv2 datapath in the loop (issue 6, "Co-simulation").
//
// 1. `--datapath rtl` (the Verilated rtl/datapath/roce_datapath.sv per
//    node: roce_tx, the two async FIFOs, roce_rx) and `--datapath model`
//    (their C++ reference models, model/datapath/sc/model_datapath.h) give
//    the same frames on each node's TX tap: same count, same bytes, same
//    order; each frame's timestamp within the bound model_datapath.h states
//    (kTimeBoundNs here). The rtl run's scoreboard compared every frame
//    each datapath emitted with the reference models and found no
//    difference: its counters equal the taps' frame counts.
// 2. The scoreboard catches a planted difference (scenario node key
//    test_datapath_corrupt): a flipped bit of one RX descriptor field, or
//    of one byte of one TX frame, is a run error naming the frame, the
//    field (or byte offset) and both values, which the test works out from
//    the captures.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;
using ernic::PcapFrame;
using ernic::PcapReader;

// model/datapath/sc/model_datapath.h: the model's frame times equal the
// RTL's (bound 0), also under backpressure (a stream faster than the line,
// PFC pauses).
constexpr uint64_t kTimeBoundNs = 0;

struct ModeRun {
  SimResult r;
  json rep;
};

ModeRun run_mode(const fs::path& dir, const std::string& scen, const char* mode) {
  ModeRun run;
  fs::create_directories(dir / mode);
  run.r = run_sim(dir / mode, {"run", kSourceDir + "/scenarios/" + scen, "--datapath", mode, "--pcap", "o.pcap",
                               "--json", "o.json", "--quiet"});
  if (fs::exists(dir / mode / "o.json")) run.rep = json::parse(read_text(dir / mode / "o.json"));
  return run;
}

// Ethernet II, IPv4 or IPv6, UDP to port 4791.
bool is_rocev2(const std::vector<uint8_t>& f) {
  if (f.size() < 14 + 40 + 8) return false;
  if (f[12] == 0x08 && f[13] == 0x00) return f[23] == 17 && f[36] == 0x12 && f[37] == 0xB7;
  if (f[12] == 0x86 && f[13] == 0xDD) return f[20] == 17 && f[56] == 0x12 && f[57] == 0xB7;
  return false;
}

class SystemDatapath : public ::testing::TestWithParam<const char*> {};

TEST_P(SystemDatapath, RtlAndModelGiveTheSameFrames) {
  const std::string scen = GetParam();
  const fs::path dir = test_dir("_" + fs::path(scen).stem().string());
  const ModeRun rtl = run_mode(dir, scen, "rtl");
  const ModeRun model = run_mode(dir, scen, "model");
  ASSERT_EQ(rtl.r.exit_code, 0) << rtl.r.out << rtl.r.err;
  ASSERT_EQ(model.r.exit_code, 0) << model.r.out << model.r.err;
  // The two-direction capture too: same frames, times and order (frames of
  // one instant ranked by node, model/trace/pcap_writer.h write_ordered).
  EXPECT_TRUE(read_text(dir / "rtl" / "o.pcap") == read_text(dir / "model" / "o.pcap"))
      << "o.pcap differs, rtl vs model";
  for (const char* node : {"A", "B"}) {
    const std::string tap = std::string("o.") + node + "-tx.pcap";
    const auto a = PcapReader::read_all((dir / "rtl" / tap).string());
    const auto m = PcapReader::read_all((dir / "model" / tap).string());
    ASSERT_FALSE(a.empty()) << node;
    ASSERT_EQ(a.size(), m.size()) << node << ": frames transmitted, rtl vs model";
    uint64_t worst = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      ASSERT_EQ(a[k].data, m[k].data) << node << " TX frame #" << k << ": bytes differ, rtl vs model";
      const uint64_t d = a[k].time_ns > m[k].time_ns ? a[k].time_ns - m[k].time_ns : m[k].time_ns - a[k].time_ns;
      worst = std::max(worst, d);
      EXPECT_LE(d, kTimeBoundNs) << node << " TX frame #" << k << ": rtl " << a[k].time_ns << " ns, model "
                                 << m[k].time_ns << " ns";
    }
    // The scoreboard saw every frame both ways (the host's own non-RoCE
    // frames join the CMAC's stream after the datapath); the model has none.
    size_t roce_tx = 0;
    for (const auto& f : a) roce_tx += is_rocev2(f.data);
    const json& d = rtl.rep["nodes"][node]["datapath"];
    EXPECT_EQ(d["kind"], "rtl");
    EXPECT_TRUE(d["scoreboard"].get<bool>());
    EXPECT_EQ(d["mismatches"].get<uint64_t>(), 0u) << node;
    EXPECT_EQ(d["tx_checked"].get<uint64_t>(), roce_tx) << node;
    // (MAC control frames, PFC's, stay in the CMAC.)
    const uint64_t rx_frames = rtl.rep["nodes"][node]["rx"]["packets"].get<uint64_t>() -
                               rtl.rep["nodes"][node]["link"]["pause_frames_received"].get<uint64_t>();
    EXPECT_EQ(d["rx_checked"].get<uint64_t>() + d["bypass_checked"].get<uint64_t>(), rx_frames) << node;
    EXPECT_GT(d["core_cycles_clocked"].get<uint64_t>(), 0u) << node;
    const json& dm = model.rep["nodes"][node]["datapath"];
    EXPECT_EQ(dm["kind"], "model");
    EXPECT_FALSE(dm["scoreboard"].get<bool>());
    EXPECT_EQ(dm["tx_frames"].get<uint64_t>(), roce_tx) << node;
    std::printf("%s %s: %zu TX frames equal, timestamps within %llu ns\n", scen.c_str(), node, a.size(),
                static_cast<unsigned long long>(worst));
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SystemDatapath,
                         ::testing::Values("handshake/rc_write_64k.yaml", "traffic/rc_read_64k.yaml",
                                           "traffic/rc_ipv6_write_read_send.yaml", "examples/bypass.yaml",
                                           "errors/rx_error_buffer.yaml", "traffic/rc_send_inline_ieth.yaml",
                                           // Backpressure: the FIFO to the CMAC fills while the line
                                           // paces back-to-back frames and PFC holds node A's (139 us
                                           // at PMTU 256): ERNIC's round robin and ACK coalescing
                                           // follow the handshake times.
                                           "traffic/rc_matrix_pmtu256.yaml", "traffic/rc_matrix_pmtu1024.yaml",
                                           "traffic/rc_write_pfc.yaml"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = fs::path(i.param).stem().string();
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The default scenario with one planted difference on `node`.
ModeRun run_corrupted(const fs::path& dir, const std::string& node, const std::string& hook) {
  std::string text = read_text(kDefaultScenario);
  const std::string key = "\n  " + node + ":\n";  // the node's block map
  const size_t at = text.find(key);
  EXPECT_NE(at, std::string::npos) << "node " << node << " in " << kDefaultScenario;
  text.insert(at + key.size(), "    test_datapath_corrupt: " + hook + "\n");
  write_text(dir / "s.yaml", text);
  ModeRun run;
  run.r = run_sim(dir, {"run", "s.yaml", "--pcap", "o.pcap", "--json", "o.json"});
  if (fs::exists(dir / "o.json")) run.rep = json::parse(read_text(dir / "o.json"));
  return run;
}

// The RoCE frames of a tap, in order.
std::vector<PcapFrame> roce_frames(const fs::path& p) {
  std::vector<PcapFrame> v;
  for (auto& f : PcapReader::read_all(p.string()))
    if (f.data.size() > 42 && f.data[12] == 0x08 && f.data[13] == 0x00 && f.data[36] == 0x12 && f.data[37] == 0xB7)
      v.push_back(std::move(f));
  return v;
}

// Node B's fourth RX descriptor (#3: the second WRITE packet) gets bit 0 of
// its PSN (descriptor bit 688, rtl/SEAM.md) flipped on its way out of the RTL.
TEST(SystemDatapathScoreboard, ReportsACorruptedDescriptorField) {
  const fs::path dir = test_dir();
  const ModeRun run = run_corrupted(dir, "B", "{ stream: rx_desc, frame: 3, offset: 688 }");
  EXPECT_EQ(run.r.exit_code, 1) << run.r.out << run.r.err;
  const auto rx = roce_frames(dir / "o.B-rx.pcap");
  ASSERT_GT(rx.size(), 3u);
  const uint32_t psn = uint32_t(rx[3].data[42 + 9]) << 16 | uint32_t(rx[3].data[42 + 10]) << 8 | rx[3].data[42 + 11];
  const std::string want = fmt::format("RX descriptor #3: psn: 0x{:x} vs 0x{:x}", psn ^ 1, psn);
  EXPECT_NE(run.r.out.find(want), std::string::npos) << "expected '" << want << "' in\n" << run.r.out;
  EXPECT_NE(run.r.out.find("node B"), std::string::npos) << run.r.out;
  EXPECT_NE(run.r.out.find("at core cycle"), std::string::npos) << run.r.out;
  const json& d = run.rep["nodes"]["B"]["datapath"];
  EXPECT_EQ(d["mismatches"].get<uint64_t>(), 1u);
  EXPECT_EQ(run.rep["nodes"]["A"]["datapath"]["mismatches"].get<uint64_t>(), 0u);
}

// Node A's third TX frame (#2) gets byte 30 (the first byte of the IPv4
// destination address: 14 + 16) XORed with 0x10 on its way from the RTL to
// the CMAC; the tap shows the byte as the RTL sent it.
TEST(SystemDatapathScoreboard, ReportsACorruptedFrameByte) {
  const fs::path dir = test_dir();
  const ModeRun run = run_corrupted(dir, "A", "{ stream: tx, frame: 2, offset: 30, xor: 0x10 }");
  EXPECT_EQ(run.r.exit_code, 1) << run.r.out << run.r.err;
  const auto tx = PcapReader::read_all((dir / "o.A-tx.pcap").string());
  ASSERT_GT(tx.size(), 2u);
  const uint8_t got = tx[2].data[30];
  const std::string want =
      fmt::format("TX frame #2: byte 30: RTL 0x{:02x} reference 0x{:02x}", got, uint8_t(got ^ 0x10));
  EXPECT_NE(run.r.out.find(want), std::string::npos) << "expected '" << want << "' in\n" << run.r.out;
  EXPECT_NE(run.r.out.find("at core cycle"), std::string::npos) << run.r.out;
  EXPECT_EQ(run.rep["nodes"]["A"]["datapath"]["mismatches"].get<uint64_t>(), 1u);
}

}  // namespace

// A run that ends with frames inside the datapath (the default scenario cut
// 3 us after its post): the report says how many reference outputs the RTL
// had not produced yet per stream (not checked), and they are exactly the
// frames handed in or received and not yet checked.
TEST(SystemDatapathScoreboard, FramesStillInsideAtTheEndAreCountedAsUnchecked) {
  const fs::path dir = test_dir();
  std::string text = read_text(kDefaultScenario);
  const size_t at = text.find("  - wait_completions:");
  ASSERT_NE(at, std::string::npos);
  write_text(dir / "s.yaml", text.substr(0, at) + "  - wait: { us: 3 }\n");
  const SimResult r = run_sim(dir, {"run", "s.yaml", "--json", "o.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json rep = json::parse(read_text(dir / "o.json"));
  uint64_t inside = 0;
  for (const char* node : {"A", "B"}) {
    const json& d = rep["nodes"][node]["datapath"];
    const json& u = d["unchecked_at_end"];
    EXPECT_EQ(u["tx"].get<uint64_t>(), d["tx_frames"].get<uint64_t>() - d["tx_checked"].get<uint64_t>()) << node;
    EXPECT_EQ(u["rx"].get<uint64_t>() + u["bypass"].get<uint64_t>(),
              rep["nodes"][node]["rx"]["packets"].get<uint64_t>() - d["rx_checked"].get<uint64_t>() -
                  d["bypass_checked"].get<uint64_t>())
        << node;
    inside += u["tx"].get<uint64_t>() + u["rx"].get<uint64_t>();
  }
  // 64 KiB as 16 frames of 4 KiB take 5.4 us on the wire: at 3 us after the
  // post, node A's datapath holds TX frames and node B's an RX frame.
  EXPECT_GT(rep["nodes"]["A"]["datapath"]["unchecked_at_end"]["tx"].get<uint64_t>(), 0u);
  EXPECT_GT(rep["nodes"]["B"]["datapath"]["unchecked_at_end"]["rx"].get<uint64_t>(), 0u);
  EXPECT_NE(r.out.find("frame(s) still inside at the end (not checked)"), std::string::npos) << r.out;
  EXPECT_GT(inside, 0u);
}
