// tb/system: idle skipping (issue 5). By default no clock is simulated
// where nothing happens: blocks wait for their next event or deadline and
// the Verilated RTL's clock is gated. `--no-idle-skip` evaluates every
// cycle instead (a ticking process per clock domain, the RTL clocked every
// core cycle). The two must give byte-identical captures (wire and taps),
// transaction logs and reports (all but the wall-clock figures and the
// idle-skip accounting itself), on scenarios that exercise timers (local
// ACK timeout, RNR timer, coalescing timeout), faults and READs.
#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

class SystemIdleSkip : public ::testing::TestWithParam<const char*> {};

json comparable(json j) {
  j.erase("wall");
  j.erase("idle_skip");
  j.erase("reproduce");  // the command line differs by the flag
  for (auto& [name, n] : j["nodes"].items()) {
    n["datapath"].erase("core_cycles_clocked");
    n["datapath"].erase("cmac_cycles_clocked");
  }
  return j;
}

TEST_P(SystemIdleSkip, SameOutputsWithEveryCycleEvaluated) {
  const std::string scen = GetParam();
  const fs::path dir = test_dir("idle_skip_" + fs::path(scen).stem().string());
  fs::create_directories(dir / "on");
  fs::create_directories(dir / "off");
  const std::string file = kSourceDir + "/scenarios/" + scen;
  SimResult on = run_sim(dir / "on", {"run", file, "--pcap", "o.pcap", "--log", "o.jsonl", "--json", "o.json"});
  SimResult off = run_sim(dir / "off", {"run", file, "--pcap", "o.pcap", "--log", "o.jsonl", "--json", "o.json",
                                        "--no-idle-skip"});
  ASSERT_EQ(on.exit_code, 0) << on.out << on.err;
  ASSERT_EQ(off.exit_code, 0) << off.out << off.err;
  for (const char* f : {"o.pcap", "o.A-tx.pcap", "o.A-rx.pcap", "o.B-tx.pcap", "o.B-rx.pcap", "o.jsonl"}) {
    const std::string a = read_text(dir / "on" / f), b = read_text(dir / "off" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == b) << f << " differs between idle skipping on and off";
  }
  const json jon = json::parse(read_text(dir / "on" / "o.json")), joff = json::parse(read_text(dir / "off" / "o.json"));
  EXPECT_EQ(comparable(jon), comparable(joff));
  // The accounting: with skipping the RTL is clocked on fewer cycles than
  // the core clock has; without, on every one, and the tickers ran them all.
  const uint64_t core = jon["clocks"]["core"]["cycles"].get<uint64_t>();
  EXPECT_TRUE(jon["idle_skip"]["enabled"].get<bool>());
  EXPECT_FALSE(joff["idle_skip"]["enabled"].get<bool>());
  const uint64_t cmac = jon["clocks"]["cmac"]["cycles"].get<uint64_t>();
  for (const char* n : {"A", "B"}) {
    EXPECT_LT(jon["idle_skip"]["rtl_clocked_core_cycles"][n].get<uint64_t>(), core) << n;
    EXPECT_GE(joff["idle_skip"]["rtl_clocked_core_cycles"][n].get<uint64_t>() + 1, core) << n;
    EXPECT_LT(jon["idle_skip"]["rtl_clocked_cmac_cycles"][n].get<uint64_t>(), cmac) << n;
    EXPECT_GE(joff["idle_skip"]["rtl_clocked_cmac_cycles"][n].get<uint64_t>() + 1, cmac) << n;
  }
  EXPECT_EQ(joff["idle_skip"]["ticker_cycles"]["core"].get<uint64_t>(), core);
  EXPECT_NE(on.out.find("idle skip on: RTL clocked on"), std::string::npos) << on.out;
  EXPECT_NE(off.out.find("idle skip off: every cycle evaluated"), std::string::npos) << off.out;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SystemIdleSkip,
                         ::testing::Values("handshake/rc_write_64k.yaml", "examples/fault_drop.yaml",
                                           "errors/rc_write_drop_ack_recovered.yaml",
                                           "errors/rc_send_rnr_recovered.yaml",
                                           "errors/rc_read_lost_response_recovered.yaml",
                                           "traffic/rc_write_ack_coalesced.yaml", "traffic/rc_write_ecn_cnp.yaml",
                                           "handshake/qp_setup_fsm_ready.yaml", "errors/qp_setup_fsm_link_timeout.yaml"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = fs::path(i.param).stem().string();
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
