// tb/system: `ernic-sim random` (issue 7's constrained-random mode).
//
// - generation is deterministic: a seed gives byte-identical YAML whatever
//   the other seeds of the command, and the same per-seed results whatever
//   --jobs;
// - the generated scenarios cover what the mode promises (every WQE opcode,
//   inline SENDs, the PMTU edges, PMTUs 256/1024/4096, IPv6, the MR CAM,
//   ACK coalescing, each recoverable fault action), read back with yaml-cpp;
// - a planted bug (`--plant-bug ack_coalescing`, test only) is caught within
//   30 seeds and reduced to a scenario of at most 5 steps that fails with the
//   bug and passes without it.
// The 200-seed run is the ctest `system.random_200_seeds` (label long).
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

std::vector<std::string> lines_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> v;
  for (const auto& l : roce_test::split_lines(text))
    if (l.rfind(prefix, 0) == 0) v.push_back(l);
  return v;
}

TEST(SystemRandom, GenerationIsDeterministic) {
  const fs::path dir = test_dir();
  SimResult a = run_sim(dir, {"random", "--seed", "1", "--count", "6", "--generate", "--out", "a"});
  SimResult b = run_sim(dir, {"random", "--seed", "4", "--count", "3", "--generate", "--out", "b"});
  SimResult c = run_sim(dir, {"random", "--seed", "1", "--count", "6", "--generate", "--out", "c"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  std::set<std::string> distinct;
  for (int s = 1; s <= 6; ++s) {
    const std::string name = "seed_" + std::to_string(s) + ".yaml";
    const std::string ya = read_text(dir / "a" / name);
    ASSERT_FALSE(ya.empty()) << name;
    EXPECT_EQ(ya, read_text(dir / "c" / name)) << name << ": same command, different YAML";
    if (s >= 4) {
      EXPECT_EQ(ya, read_text(dir / "b" / name)) << name << ": depends on the other seeds of the command";
    }
    EXPECT_EQ(YAML::Load(ya)["scenario"].as<std::string>(), "random_" + std::to_string(s));
    distinct.insert(ya);
  }
  EXPECT_EQ(distinct.size(), 6u) << "two seeds gave the same scenario";
  // The last seeds of the 64-bit range: seed + count - 1 must fit (it did not
  // for --count 1 at 2^64-1); one more overflows; a negative seed is refused.
  SimResult top = run_sim(dir, {"random", "--seed", "18446744073709551614", "--count", "2", "--generate", "--out", "t"});
  ASSERT_EQ(top.exit_code, 0) << top.out << top.err;
  EXPECT_TRUE(fs::exists(dir / "t/seed_18446744073709551615.yaml"));
  EXPECT_EQ(run_sim(dir, {"random", "--seed", "18446744073709551615", "--count", "2", "--generate", "--out", "t"}).exit_code, 2);
  EXPECT_EQ(run_sim(dir, {"random", "--seed", "-1", "--count", "1", "--generate", "--out", "t"}).exit_code, 2);
  // Negative counts are refused with the option named, not wrapped to 2^64-1.
  for (const char* opt : {"--reduce", "--reduce-runs", "--max-failures"})
    for (const char* v : {"-1", "-0", "-18446744073709551615"}) {
      SimResult neg = run_sim(dir, {"random", "--seed", "1", "--count", "1", "--generate", "--out", "t", opt, v});
      EXPECT_EQ(neg.exit_code, 2) << opt << " " << v << neg.out;
      EXPECT_NE(neg.err.find(std::string(opt) + " is 0.."), std::string::npos) << opt << " " << v << neg.err;
      EXPECT_NE(neg.err.find(std::string("got ") + v), std::string::npos) << neg.err;
    }
  SimResult zero = run_sim(dir, {"random", "--seed", "1", "--count", "1", "--generate", "--out", "t", "--reduce", "0"});
  EXPECT_EQ(zero.exit_code, 0) << zero.err;

  // Running them: the per-seed lines (stdout) do not depend on --jobs.
  SimResult j1 = run_sim(dir, {"random", "--seed", "3", "--count", "4", "--jobs", "1", "--out", "j1"});
  SimResult j2 = run_sim(dir, {"random", "--seed", "3", "--count", "4", "--jobs", "2", "--out", "j2"});
  ASSERT_EQ(j1.exit_code, 0) << j1.out << j1.err;
  ASSERT_EQ(j2.exit_code, 0) << j2.out << j2.err;
  EXPECT_EQ(j1.out, j2.out);
  EXPECT_EQ(lines_with(j1.out, "seed ").size(), 4u) << j1.out;
  EXPECT_NE(j1.out.find("random: seeds 3..6: 4 passed, 0 failed"), std::string::npos) << j1.out;
  // Passing seeds leave nothing behind without --keep.
  EXPECT_TRUE(fs::is_empty(dir / "j1"));
}

// What the generator promises, over the first 60 seeds, read with yaml-cpp.
TEST(SystemRandom, GeneratedScenariosCoverTheMix) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"random", "--seed", "1", "--count", "60", "--generate", "--out", "g"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::set<std::string> opcodes, actions, ack_modes, qp_counts;
  std::set<uint64_t> pmtus;
  bool ipv6 = false, cam = false, coalesce = false, inline_send = false, pmtu_minus1 = false, pmtu_exact = false,
       pmtu_plus1 = false, one_byte = false, big = false, storm_both_ways = false;
  std::string storm_answers_dir;
  std::set<std::string> storm_answer_actions;
  for (int s = 1; s <= 60; ++s) {
    const YAML::Node y = YAML::LoadFile((dir / "g" / ("seed_" + std::to_string(s) + ".yaml")).string());
    storm_answers_dir.clear();
    for (const auto& n : y["nodes"]) {
      if (n.second["ipv6"]) ipv6 = true;
      if (n.second["mr_cache"]) cam = true;
      if (n.second["ack"]) {
        ack_modes.insert(n.second["ack"]["mode"].as<std::string>());
        if (n.second["ack"]["coalesce_packets"]) coalesce = true;
      }
    }
    std::map<std::string, uint64_t> pmtu_of;  // connection -> PMTU
    size_t conns = 0;
    for (const auto& st : y["steps"]) {
      if (st["connect"]) {
        ++conns;
        pmtu_of[st["connect"]["name"].as<std::string>()] = st["connect"]["pmtu"].as<uint64_t>();
        pmtus.insert(st["connect"]["pmtu"].as<uint64_t>());
      }
      if (st["fault"]) {
        const YAML::Node& f = st["fault"];
        actions.insert(f["action"].as<std::string>());
        // Storms (issue 13): probabilistic reorder/delay of the answers one
        // way and of the requests the other way, in the same phase.
        if (f["match"]["probability"]) {
          const std::string dir = f["dir"].as<std::string>(), act = f["action"].as<std::string>();
          EXPECT_TRUE(act == "reorder" || act == "delay") << act;
          EXPECT_GE(f["count"].as<int>(), 1);
          const bool answers = f["match"]["opcode"] && f["match"]["opcode"].size() == 5 &&
                               f["match"]["opcode"][0].as<std::string>() == "RC_ACK";
          if (answers) storm_answers_dir = dir, storm_answer_actions.insert(act);
          else if (!storm_answers_dir.empty() && dir != storm_answers_dir) storm_both_ways = true;
        }
      }
      if (!st["post"]) continue;
      const uint64_t pmtu = pmtu_of.at(st["post"]["conn"].as<std::string>());
      for (const auto& w : st["post"]["wqes"]) {
        const std::string op = w["opcode"].as<std::string>();
        const uint64_t len = w["length"].as<uint64_t>();
        opcodes.insert(op);
        if (op.rfind("send", 0) == 0 && len <= 16) inline_send = true;
        pmtu_minus1 |= len == pmtu - 1;
        pmtu_exact |= len == pmtu;
        pmtu_plus1 |= len == pmtu + 1;
        one_byte |= len == 1;
        big |= len >= (64u << 10);
        EXPECT_LE(len, 256u << 10);
        EXPECT_GE(len, 1u);
      }
    }
    qp_counts.insert(std::to_string(conns));
  }
  EXPECT_EQ(opcodes, (std::set<std::string>{"write", "write_imm", "send", "send_imm", "send_inv", "read"}));
  EXPECT_EQ(actions, (std::set<std::string>{"drop", "duplicate", "reorder", "corrupt", "delay", "ecn"}));
  EXPECT_EQ(ack_modes, (std::set<std::string>{"request_or_timeout", "timeout", "request"}));
  EXPECT_EQ(qp_counts, (std::set<std::string>{"1", "2", "3", "4"}));
  for (uint64_t p : {256u, 1024u, 4096u}) EXPECT_TRUE(pmtus.count(p)) << "PMTU " << p;
  EXPECT_TRUE(ipv6);
  EXPECT_TRUE(cam);
  EXPECT_TRUE(coalesce);
  EXPECT_TRUE(inline_send);
  EXPECT_TRUE(pmtu_minus1 && pmtu_exact && pmtu_plus1 && one_byte && big);
  EXPECT_TRUE(storm_both_ways) << "no storm on the answers and the requests at once";
  EXPECT_EQ(storm_answer_actions, (std::set<std::string>{"reorder", "delay"}));
}

int count_steps(const fs::path& yaml) { return int(YAML::LoadFile(yaml.string())["steps"].size()); }

TEST(SystemRandom, PlantedAckCoalescingBugIsCaughtAndReduced) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"random", "--seed", "1", "--count", "30", "--jobs", "2", "--plant-bug", "ack_coalescing",
                              "--max-failures", "1", "--out", "o"});
  ASSERT_EQ(r.exit_code, 1) << "the planted bug was not caught in 30 seeds\n" << r.out << r.err;
  // The failing seed: its line names the check that caught it.
  const auto fails = lines_with(r.out, "FAILED seed ");
  ASSERT_EQ(fails.size(), 1u) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(fails[0], m, std::regex("^FAILED seed ([0-9]+): ([a-z:_-]+): ")));
  const std::string seed = m[1];
  EXPECT_EQ(m[2], "monitor:msn") << "the wire monitor's MSN rule is the first check to see the wrong ACK PSN";
  // The reduced scenario.
  const auto red = lines_with(r.out, "REDUCED seed " + seed + ":");
  ASSERT_EQ(red.size(), 1u) << r.out;
  const fs::path min = dir / "o" / ("seed_" + seed + ".min.yaml");
  ASSERT_TRUE(fs::exists(min)) << r.out;
  const int steps = count_steps(min);
  EXPECT_LE(steps, 5) << read_text(min);
  EXPECT_NE(red[0].find(std::to_string(steps) + " steps"), std::string::npos) << red[0];
  EXPECT_NE(r.out.find("run o/seed_" + seed + ".min.yaml --plant-bug ack_coalescing"), std::string::npos) << r.out;
  // It fails with the bug, caught by the monitor (and the completion check) ...
  SimResult with = run_sim(dir, {"run", min.string(), "--plant-bug", "ack_coalescing", "--json", "with.json", "--quiet"});
  EXPECT_EQ(with.exit_code, 1) << with.out << with.err;
  nlohmann::json jw = nlohmann::json::parse(read_text(dir / "with.json"));
  bool msn = false;
  for (const auto& e : jw["model_errors"])
    msn |= e["where"].get<std::string>().rfind("monitor", 0) == 0 && e["what"].get<std::string>().rfind("msn:", 0) == 0;
  EXPECT_TRUE(msn) << jw["model_errors"].dump(1);
  // ... and passes without it, with the scoreboard comparing memory.
  SimResult without = run_sim(dir, {"run", min.string(), "--json", "without.json", "--quiet"});
  EXPECT_EQ(without.exit_code, 0) << without.out << without.err;
  nlohmann::json jo = nlohmann::json::parse(read_text(dir / "without.json"));
  EXPECT_GT(jo["scoreboard"]["bytes_checked"].get<uint64_t>(), 0u);
  EXPECT_TRUE(jo["model_errors"].empty());
  // An unknown bug name is a usage error.
  EXPECT_EQ(run_sim(dir, {"run", min.string(), "--plant-bug", "nonsense"}).exit_code, 2);
  EXPECT_EQ(run_sim(dir, {"random", "--plant-bug", "nonsense"}).exit_code, 2);
}

}  // namespace
