// tb/system: users' own RTL as a datapath (issue 6, "Users' own RTL";
// cmake/ErnicUserDatapath.cmake, rtl/SEAM.md).
//
// The in-tree example user:alt is roce_datapath.sv with
// rtl/examples/roce_rx_alt (store-and-forward) in place of roce_rx. Against
// the `rtl` datapath (cut-through roce_rx), the same scenario gives:
//  - the same frames on every tap (count, bytes, order);
//  - the same completions (node, QP, CQ index, wr_id, opcode, error, the
//    raw CQE word) in the same order, from the transaction log;
//  - no frame earlier than with rtl, and some later (its RX descriptor
//    comes after the whole frame is stored: rtl/README.md "roce_rx_alt"),
//    A's first frame, sent before anything was received, at the same time;
//  - a report naming user:alt, whose scoreboard checked every frame with
//    no mismatch, and reports a planted payload difference.
// And an unknown user:<name> is exit 2 naming file, line, column, key and
// the registered datapaths (scenario key), or the option (command line).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

// The registered datapaths as ernic-sim lists them ("model, rtl, user:alt"
// in this repo's build; a build with ERNIC_USER_RTL adds its blocks, and the
// suite must still pass there, rtl/SEAM.md step 5).
// ERNIC_REGISTERED_DATAPATHS: tb/system/CMakeLists.txt, from the calls.
inline std::string registered_datapaths() { return ERNIC_REGISTERED_DATAPATHS; }

using namespace system_test;
using json = nlohmann::json;
using ernic::PcapFrame;
using ernic::PcapReader;

struct UserRun {
  SimResult r;
  json rep;
  std::vector<json> cqes;  // the log's cqe records, in order
};

// The scenario under scenarios/ with `datapath: <dp>` written into the
// file (the scenario key, not --datapath), run with pcap, log and JSON.
UserRun run_with(const fs::path& dir, const std::string& scen, const std::string& dp) {
  std::string text = read_text(kSourceDir + "/scenarios/" + scen);
  EXPECT_EQ(text.find("\ndatapath:"), std::string::npos) << scen << " has its own datapath key";
  const size_t at = text.find("\nscenario:");
  EXPECT_NE(at, std::string::npos) << scen;
  text.insert(text.find('\n', at + 1) + 1, "datapath: " + dp + "\n");
  fs::create_directories(dir);
  write_text(dir / "s.yaml", text);
  UserRun run;
  run.r = run_sim(dir, {"run", "s.yaml", "--pcap", "o.pcap", "--json", "o.json", "--log", "o.log", "--quiet"});
  if (fs::exists(dir / "o.json")) run.rep = json::parse(read_text(dir / "o.json"));
  if (fs::exists(dir / "o.log")) {
    std::istringstream in(read_text(dir / "o.log"));
    for (std::string line; std::getline(in, line);) {
      json r = json::parse(line);
      if (r["kind"] == "cqe") run.cqes.push_back(std::move(r));
    }
  }
  return run;
}

class SystemUserDatapath : public ::testing::TestWithParam<const char*> {};

TEST_P(SystemUserDatapath, AltGivesTheSameFramesAndCompletionsAsRtl) {
  const std::string scen = GetParam();
  const fs::path dir = test_dir("_" + fs::path(scen).stem().string());
  const UserRun rtl = run_with(dir / "rtl", scen, "rtl");
  const UserRun alt = run_with(dir / "alt", scen, "user:alt");
  ASSERT_EQ(rtl.r.exit_code, 0) << rtl.r.out << rtl.r.err;
  ASSERT_EQ(alt.r.exit_code, 0) << alt.r.out << alt.r.err;
  EXPECT_EQ(rtl.rep["datapath"], "rtl");
  EXPECT_EQ(alt.rep["datapath"], "user:alt");
  uint64_t later = 0, worst = 0;
  for (const char* node : {"A", "B"}) {
    for (const char* tap : {"tx", "rx"}) {
      const std::string f = std::string("o.") + node + "-" + tap + ".pcap";
      const auto a = PcapReader::read_all((dir / "rtl" / f).string());
      const auto u = PcapReader::read_all((dir / "alt" / f).string());
      ASSERT_FALSE(a.empty()) << f;
      ASSERT_EQ(a.size(), u.size()) << f << ": frames, rtl vs user:alt";
      for (size_t k = 0; k < a.size(); ++k) {
        ASSERT_EQ(a[k].data, u[k].data) << f << " frame #" << k << ": bytes differ, rtl vs user:alt";
        EXPECT_GE(u[k].time_ns, a[k].time_ns) << f << " frame #" << k << ": user:alt earlier than rtl";
        if (u[k].time_ns > a[k].time_ns) {
          ++later;
          worst = std::max(worst, u[k].time_ns - a[k].time_ns);
        }
      }
      if (f == "o.A-tx.pcap") {  // the first frame of the run: nothing received before it
        EXPECT_EQ(u[0].time_ns, a[0].time_ns) << f;
      }
    }
    const json& d = alt.rep["nodes"][node]["datapath"];
    EXPECT_EQ(d["kind"], "user:alt") << node;
    EXPECT_TRUE(d["scoreboard"].get<bool>()) << node;
    EXPECT_EQ(d["mismatches"].get<uint64_t>(), 0u) << node;
    const uint64_t rx = alt.rep["nodes"][node]["rx"]["packets"].get<uint64_t>();
    EXPECT_GT(rx, 0u) << node;
    EXPECT_EQ(d["rx_checked"].get<uint64_t>() + d["bypass_checked"].get<uint64_t>(), rx) << node;
    EXPECT_EQ(d["tx_checked"], rtl.rep["nodes"][node]["datapath"]["tx_checked"]) << node;
  }
  EXPECT_GT(later, 0u) << "user:alt (store-and-forward) delayed no frame: is roce_rx_alt in the loop?";
  ASSERT_FALSE(rtl.cqes.empty());
  ASSERT_EQ(rtl.cqes.size(), alt.cqes.size()) << "completions, rtl vs user:alt";
  for (size_t k = 0; k < rtl.cqes.size(); ++k)
    for (const char* field : {"node", "qp", "cq_index", "wr_id", "opcode", "error", "raw"})
      EXPECT_EQ(rtl.cqes[k][field], alt.cqes[k][field]) << "CQE #" << k << " " << field;
  std::printf("%s: frames and %zu CQEs equal; %llu frame(s) later with user:alt, by at most %llu ns\n", scen.c_str(),
              rtl.cqes.size(), static_cast<unsigned long long>(later), static_cast<unsigned long long>(worst));
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SystemUserDatapath,
                         ::testing::Values("handshake/rc_write_64k.yaml", "traffic/rc_read_64k.yaml",
                                           "examples/bypass.yaml", "errors/rx_error_buffer.yaml"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = fs::path(i.param).stem().string();
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The scoreboard stays on for a user's block: one payload byte of node B's
// fourth RX frame (#3, the second WRITE packet: no RETH, payload from frame
// byte 14 + 20 + 8 + 12 = 54), flipped on its way out of roce_rx_alt (whose
// payload follows its descriptor), is a run error with both values.
TEST(SystemUserDatapathScoreboard, ReportsACorruptedPayloadByte) {
  const fs::path dir = test_dir();
  std::string text = read_text(kDefaultScenario);
  const std::string key = "\n  B:\n";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + key.size(), "    test_datapath_corrupt: { stream: rx_payload, frame: 3, offset: 5, xor: 0x01 }\n");
  write_text(dir / "s.yaml", text);
  const SimResult r = run_sim(dir, {"run", "s.yaml", "--datapath", "user:alt", "--pcap", "o.pcap", "--json", "o.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  std::vector<PcapFrame> rx;
  for (auto& f : PcapReader::read_all((dir / "o.B-rx.pcap").string()))
    if (f.data.size() > 42 && f.data[12] == 0x08 && f.data[13] == 0x00 && f.data[36] == 0x12 && f.data[37] == 0xB7)
      rx.push_back(std::move(f));
  ASSERT_GT(rx.size(), 3u);
  ASSERT_EQ(rx[3].data[42], 0x07) << "RC_WRITE_MIDDLE expected as B's fourth RoCE frame";
  const uint8_t ref = rx[3].data[54 + 5];
  char want[160];
  std::snprintf(want, sizeof want,
                "RTL datapath (user:alt) vs reference model, node B: RX payload #3: byte 5: RTL 0x%02x reference 0x%02x",
                ref ^ 1, ref);
  EXPECT_NE(r.out.find(want), std::string::npos) << "expected '" << want << "' in\n" << r.out;
  const json rep = json::parse(read_text(dir / "o.json"));
  EXPECT_EQ(rep["nodes"]["B"]["datapath"]["mismatches"].get<uint64_t>(), 1u);
  EXPECT_EQ(rep["nodes"]["A"]["datapath"]["mismatches"].get<uint64_t>(), 0u);
}

// `datapath: user:nope` in a file: exit 2, the file's line and column, the
// key, the registered names; nothing simulated.
TEST(SystemUserDatapathErrors, UnknownNameInTheScenarioFile) {
  const fs::path dir = test_dir();
  std::string text = read_text(kDefaultScenario);
  const size_t at = text.find("\nscenario:");
  ASSERT_NE(at, std::string::npos);
  const size_t eol = text.find('\n', at + 1) + 1;
  text.insert(eol, "datapath: user:nope\n");
  const int line = 1 + int(std::count(text.begin(), text.begin() + long(eol), '\n'));
  write_text(dir / "s.yaml", text);
  const SimResult r = run_sim(dir, {"run", "s.yaml", "--json", "o.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "ernic-sim: s.yaml:" + std::to_string(line) +
                       ":11: key 'datapath': unknown datapath 'user:nope' (registered: " + registered_datapaths() + ")\n")
      << r.out;
  EXPECT_FALSE(fs::exists(dir / "o.json"));
}

// --datapath user:nope on run and regress: a usage error (exit 2) naming
// the option and the registered names.
TEST(SystemUserDatapathErrors, UnknownNameOnTheCommandLine) {
  const fs::path dir = test_dir();
  const SimResult r = run_sim(dir, {"run", kDefaultScenario, "--datapath", "user:nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--datapath: unknown datapath 'user:nope' (registered: " + registered_datapaths() + ")"),
            std::string::npos)
      << r.err;
  const SimResult g = run_sim(dir, {"regress", kSourceDir + "/scenarios/examples", "--datapath", "user:no-pe"});
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_NE(g.err.find("--datapath: unknown datapath 'user:no-pe' (registered: " + registered_datapaths() + ")"),
            std::string::npos)
      << g.err;
  EXPECT_FALSE(fs::exists(dir / "regress"));
}

}  // namespace
