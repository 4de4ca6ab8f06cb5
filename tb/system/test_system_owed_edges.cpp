// tb/system: the rtl datapath's owed model edges (issue 17;
// model/datapath/sc/rtl_datapath.h, "Quiet model edges"). Without a
// waveform a quiet model edge is done by the next activation instead of
// being one; with --vcd every edge is an activation at its time. The golden
// check compares the two on every scenario, each of which ends with the
// datapath idle. Here runs end in the middle of a 64 KiB WRITE's frames (a
// `wait` of 1..14 us after the post, or the `sim_time_us` limit), with the
// CMAC's tready and the other seams' handshakes randomised, so that some
// end just after a model edge no later activation did: the capture, the
// taps, the log and the JSON report (randomised stall counts included) are
// the same both ways. (A review found one: a model edge owed at the end
// that would have drawn a tready stall, counted in the report.)
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

std::string scenario(const std::string& end) {
  return fmt::format(R"(scenario: owed_edges
description: "a 64 KiB WRITE with randomised handshakes, the run ending in the middle of its frames"
seed: 3
datapath: rtl
handshake_random: {{ seed: 5, ready_pct: 50, valid_pct: 60 }}
limits: {{ sim_time_us: {} }}
nodes:
  A: {{ mac: "02:00:00:00:00:0a", ip: 10.0.0.1 }}
  B: {{ mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }}
steps:
  - init: [A, B]
  - register_mr: {{ node: A, name: a, length: 131072, access: rw }}
  - register_mr: {{ node: B, name: b, length: 131072, access: rw }}
  - fill: {{ node: A, mr: a, pattern: random, seed: 31 }}
  - connect: {{ name: c1, client: A, server: B, client_mr: a, server_mr: b, pmtu: 4096 }}
  - post: {{ conn: c1, node: A, wqes: [ {{ opcode: write, wr_id: 1, local_mr: a, length: 65536 }} ] }}
  - wait: {{ us: {} }}
)",
                     end == "limit" ? 12 : 2000, end == "limit" ? 100 : std::stoi(end));
}

json comparable(json j) {
  for (const char* k : {"wall", "reproduce", "waveform"}) j.erase(k);
  return j;
}

struct Case {
  std::string end;    // the wait in us, or "limit" (sim_time_us 12 during a wait of 100 us)
  bool idle_skip;
};

void PrintTo(const Case& c, std::ostream* os) { *os << "end " << c.end << (c.idle_skip ? "" : ", --no-idle-skip"); }

class SystemOwedEdges : public ::testing::TestWithParam<Case> {};

TEST_P(SystemOwedEdges, SameOutputsAsEveryEdgeAtItsTime) {
  const Case c = GetParam();
  const fs::path dir = test_dir(fmt::format("owed_edges_{}{}", c.end, c.idle_skip ? "" : "_no_skip"));
  fs::create_directories(dir / "owed");
  fs::create_directories(dir / "every");
  {
    std::ofstream f(dir / "s.yaml");
    f << scenario(c.end);
  }
  std::vector<std::string> args = {"run", (dir / "s.yaml").string(), "--pcap", "o.pcap", "--log", "o.jsonl",
                                   "--json", "o.json", "--quiet"};
  if (!c.idle_skip) args.push_back("--no-idle-skip");
  SimResult owed = run_sim(dir / "owed", args);
  args.insert(args.end(), {"--vcd", "o.vcd"});
  SimResult every = run_sim(dir / "every", args);
  // A time limit is exit 3, the run's end otherwise 0 (README, exit codes).
  const int want_exit = c.end == "limit" ? 3 : 0;
  ASSERT_EQ(owed.exit_code, want_exit) << owed.out << owed.err;
  ASSERT_EQ(every.exit_code, want_exit) << every.out << every.err;
  for (const char* f : {"o.pcap", "o.A-tx.pcap", "o.A-rx.pcap", "o.B-tx.pcap", "o.B-rx.pcap", "o.jsonl"}) {
    const std::string a = read_text(dir / "owed" / f), b = read_text(dir / "every" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == b) << f << " differs between owed model edges and every edge at its time";
  }
  const json jo = comparable(json::parse(read_text(dir / "owed" / "o.json")));
  const json je = comparable(json::parse(read_text(dir / "every" / "o.json")));
  EXPECT_EQ(jo, je) << json::diff(jo, je).dump(2);
  // The randomiser ran on A's tready to the CMAC, and A's datapath took
  // frames out to the CMAC (the run is not over before the first).
  EXPECT_GT(jo["handshake_random"]["top.A"]["stall_cycles"]["top.A.datapath.m_cmac.tready"].get<uint64_t>(), 0u);
  EXPECT_GT(jo["nodes"]["A"]["datapath"]["tx_frames"].get<uint64_t>(), 0u);
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (int us = 1; us <= 14; ++us) v.push_back({std::to_string(us), true});
  v.push_back({"limit", true});
  for (const char* e : {"8", "9"}) v.push_back({e, false});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ends, SystemOwedEdges, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return (i.param.end == "limit" ? std::string("sim_time_limit") : "wait_" + i.param.end + "us") +
                                  (i.param.idle_skip ? "" : "_no_idle_skip");
                         });

}  // namespace
