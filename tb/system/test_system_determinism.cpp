// tb/system: determinism. The default scenario run twice with the same
// command line (relative output paths) in two different working directories
// gives byte-identical captures (the merged pcap and the four taps),
// byte-identical VCD, and the same JSON report once the wall-clock figures
// ("wall") are removed.
#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

const std::vector<std::string> kOutputs = {"out.pcap", "out.A-tx.pcap", "out.A-rx.pcap",
                                           "out.B-tx.pcap", "out.B-rx.pcap", "out.vcd", "out.vcd.gtkw"};

TEST(SystemDeterminism, TwoRunsGiveIdenticalOutputs) {
  const fs::path d1 = test_dir(".run1"), d2 = test_dir(".run2");
  const std::vector<std::string> args = {"run", kDefaultScenario, "--pcap", "out.pcap", "--vcd", "out.vcd",
                                         "--json", "out.json", "--quiet"};
  SimResult r1 = run_sim(d1, args);
  SimResult r2 = run_sim(d2, args);
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  ASSERT_EQ(r2.exit_code, 0) << r2.out << r2.err;
  for (const auto& name : kOutputs) {
    ASSERT_TRUE(fs::exists(d1 / name)) << name;
    const std::string a = read_text(d1 / name), b = read_text(d2 / name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_TRUE(a == b) << name << " differs between the two runs (" << a.size() << " vs " << b.size() << " bytes)";
  }
  // No temporary files left behind, nothing written elsewhere.
  for (const fs::path& d : {d1, d2}) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    std::vector<std::string> want = kOutputs;
    want.insert(want.end(), {"out.json", "sim.stderr", "sim.stdout"});
    std::sort(want.begin(), want.end());
    EXPECT_EQ(names, want) << d;
  }
  auto j1 = nlohmann::json::parse(read_text(d1 / "out.json"));
  auto j2 = nlohmann::json::parse(read_text(d2 / "out.json"));
  ASSERT_TRUE(j1.contains("wall"));
  j1.erase("wall");
  j2.erase("wall");
  EXPECT_EQ(j1, j2) << "JSON reports differ beyond \"wall\":\n" << nlohmann::json::diff(j1, j2).dump(2);
  // Nothing else in the report depends on the wall clock: no key named like
  // a wall-clock figure outside "wall".
  const std::string flat = j1.dump();
  EXPECT_EQ(flat.find("\"wall"), std::string::npos);
  EXPECT_EQ(j1["result"], "pass");
  EXPECT_EQ(j1["exit_code"], 0);
}

// Waveform tracing is an observer: the same scenario with and without --vcd
// puts the same frames on the wire at the same times.
// (Once failed: two doorbells in one cycle shared one sc_event, and the
// clock-tracer processes that --vcd added changed which fired first. Now
// doorbells are queued with their own times and clocks are traced lazily.)
TEST(SystemDeterminism, TracingDoesNotChangeTheSimulation) {
  const fs::path d1 = test_dir(".plain"), d2 = test_dir(".traced");
  SimResult r1 = run_sim(d1, {"run", kDefaultScenario, "--pcap", "out.pcap", "--json", "out.json", "--quiet"});
  SimResult r2 = run_sim(d2, {"run", kDefaultScenario, "--pcap", "out.pcap", "--json", "out.json", "--quiet",
                              "--vcd", "out.vcd"});
  ASSERT_EQ(r1.exit_code, 0) << r1.out << r1.err;
  ASSERT_EQ(r2.exit_code, 0) << r2.out << r2.err;
  for (const auto& name : {"out.pcap", "out.A-tx.pcap", "out.A-rx.pcap", "out.B-tx.pcap", "out.B-rx.pcap"})
    EXPECT_TRUE(read_text(d1 / name) == read_text(d2 / name)) << name << " differs with --vcd";
  auto j1 = nlohmann::json::parse(read_text(d1 / "out.json"));
  auto j2 = nlohmann::json::parse(read_text(d2 / "out.json"));
  for (const char* k : {"sim_time_ps", "clocks", "steps", "nodes"})
    EXPECT_EQ(j1[k], j2[k]) << k << " differs with --vcd:\n" << nlohmann::json::diff(j1[k], j2[k]).dump(2);
}

}  // namespace
