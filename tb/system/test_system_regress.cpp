// tb/system: `ernic-sim regress` (tools/regress.h), `run --datapath`, and the
// failure report `run` prints (tools/failure_report.h), on the small
// scenario folder tb/data/regress (four scenarios that pass,
// errors/check_memory_fail.yaml that fails on purpose, errors/bad_key_error.yaml
// that is a bad file). Expected values come from those files (their names,
// seeds, PSNs and lines) and from the JUnit layout CI tools read, checked by
// tb/system/check_junit.py with Python's XML parser.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

const fs::path kData = fs::path(kSourceDir) / "tb/data/regress";
// tb/data/regress, sorted by path: what `regress --list` must print, in order.
const std::vector<std::string> kAll = {"errors/bad_key_error",   "errors/check_memory_fail", "errors/remote_access_pass",
                                       "handshake/connect_only", "traffic/send_pass",        "traffic/write_4k_pass"};

std::vector<std::string> listed(const std::string& out) {
  std::vector<std::string> names;
  for (const auto& line : roce_test::split_lines(out))
    if (!line.empty()) names.push_back(line.substr(0, line.find(' ')));
  return names;
}

TEST(SystemRegress, ListIsSortedAndShardsPartitionItExactly) {
  const fs::path dir = test_dir();
  SimResult all = run_sim(dir, {"regress", kData.string(), "--list"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(listed(all.out), kAll);
  // Labels come from the folders.
  EXPECT_NE(all.out.find("errors/check_memory_fail  error,quick"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("handshake/connect_only  handshake,quick"), std::string::npos) << all.out;
  for (unsigned n : {1u, 2u, 3u, 4u, 7u}) {
    std::multiset<std::string> uni;
    for (unsigned i = 0; i < n; ++i) {
      const std::string shard = std::to_string(i) + "/" + std::to_string(n);
      SimResult r = run_sim(dir, {"regress", kData.string(), "--list", "--shard", shard});
      std::vector<std::string> want;
      for (size_t k = 0; k < kAll.size(); ++k)
        if (k % n == i) want.push_back(kAll[k]);
      if (want.empty()) {  // shard 6/7 of 6 scenarios: an empty selection is an error
        EXPECT_EQ(r.exit_code, 2) << shard << r.out;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.err.find("no scenario selected under " + kData.string() + " in shard " + shard + " (6 found)"),
                  std::string::npos)
            << r.err;
        continue;
      }
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(listed(r.out), want) << "shard " << i << "/" << n;
      for (const auto& s : listed(r.out)) uni.insert(s);
    }
    // Union = all, and disjoint (a multiset holds each name once).
    EXPECT_EQ(std::vector<std::string>(uni.begin(), uni.end()), kAll) << n << " shards";
  }
  // --label filters before sharding.
  SimResult e = run_sim(dir, {"regress", kData.string(), "--list", "--label", "error"});
  EXPECT_EQ(listed(e.out), (std::vector<std::string>{kAll[0], kAll[1], kAll[2]}));
  SimResult e1 = run_sim(dir, {"regress", kData.string(), "--list", "--label", "error", "--shard", "1/2"});
  EXPECT_EQ(listed(e1.out), (std::vector<std::string>{kAll[1]}));
  // Bad shards and a missing folder are usage errors.
  for (const char* bad : {"2/2", "1", "a/b", "0/0", "/3"})
    EXPECT_EQ(run_sim(dir, {"regress", kData.string(), "--shard", bad}).exit_code, 2) << bad;
  EXPECT_EQ(run_sim(dir, {"regress", (dir / "nowhere").string()}).exit_code, 2);
  EXPECT_EQ(run_sim(dir, {"regress", kData.string(), "--label", "nosuchlabel"}).exit_code, 2);
  // --list with nothing selected: exit 2 with a message, nothing listed.
  SimResult none = run_sim(dir, {"regress", kData.string(), "--list", "--label", "nosuchlabel"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find("no scenario selected under " + kData.string() + " with labels nosuchlabel (6 found)"),
            std::string::npos)
      << none.err;
  const fs::path empty = dir / "empty";
  fs::create_directories(empty);
  SimResult e0 = run_sim(dir, {"regress", empty.string(), "--list"});
  EXPECT_EQ(e0.exit_code, 2);
  EXPECT_NE(e0.err.find("no scenario selected under " + empty.string() + " (0 found)"), std::string::npos) << e0.err;
}

// One result line: "PASS  name  sim 12.345 us  wall 0.21 s  (...)" -> status, name, sim time.
std::vector<std::string> results(const std::string& out) {
  std::vector<std::string> v;
  const std::regex line("^(PASS|FAIL|ERROR) +(\\S+)  sim ([0-9.]+) us  wall [0-9.]+ s(.*)$");
  for (const auto& l : roce_test::split_lines(out)) {
    std::smatch m;
    if (std::regex_match(l, m, line)) v.push_back(m[1].str() + " " + m[2].str() + " " + m[3].str() + m[4].str());
  }
  return v;
}

json junit_cases(const fs::path& xml) {
  int st = 0;
  const std::string out =
      roce_test::run(std::string(ERNIC_PYTHON) + " " + roce_test::shell_quote((fs::path(kSystemDir) / "check_junit.py").string()) +
                         " " + roce_test::shell_quote(xml.string()),
                     &st);
  EXPECT_EQ(st, 0) << out;
  return st == 0 ? json::parse(out) : json::array();
}

TEST(SystemRegress, RunsEveryScenarioWritesJUnitAndJobs2MatchesJobs1) {
  const fs::path dir = test_dir();
  SimResult r1 = run_sim(dir, {"regress", kData.string(), "--jobs", "1", "--out", "o1", "--junit", "j1.xml"});
  SimResult r2 = run_sim(dir, {"regress", kData.string(), "--jobs", "2", "--out", "o2", "--junit", "j2.xml"});
  EXPECT_EQ(r1.exit_code, 1) << r1.out << r1.err;
  EXPECT_EQ(r2.exit_code, 1) << r2.out << r2.err;
  const auto v1 = results(r1.out), v2 = results(r2.out);
  ASSERT_EQ(v1.size(), kAll.size()) << r1.out;
  // Same order, statuses, simulated times and failure messages with 1 and 2 jobs.
  EXPECT_EQ(v1, v2);
  for (size_t k = 0; k < kAll.size(); ++k) {
    const std::string want = k == 0 ? "ERROR " : k == 1 ? "FAIL " : "PASS ";
    EXPECT_EQ(v1[k].substr(0, want.size() + kAll[k].size()), want + kAll[k]) << v1[k];
  }
  EXPECT_NE(r1.out.find("regress: 6 scenario(s): 4 passed, 1 failed, 1 error(s)"), std::string::npos) << r1.out;
  EXPECT_NE(r1.out.find("regress: total wall time "), std::string::npos) << r1.out;
  EXPECT_NE(r1.out.find("FAIL errors/check_memory_fail (seed 42)"), std::string::npos) << r1.out;
  // Each run left its report and output.
  EXPECT_TRUE(fs::exists(dir / "o1/errors/check_memory_fail.json"));
  EXPECT_TRUE(fs::exists(dir / "o2/traffic/write_4k_pass.json"));
  EXPECT_NE(read_text(dir / "o1/errors/check_memory_fail.out").find("repro: "), std::string::npos);

  for (const char* j : {"j1.xml", "j2.xml"}) {
    const json cases = junit_cases(dir / j);
    ASSERT_EQ(cases.size(), kAll.size()) << j;
    for (size_t k = 0; k < kAll.size(); ++k) {
      const std::string folder = kAll[k].substr(0, kAll[k].find('/')), name = kAll[k].substr(kAll[k].find('/') + 1);
      EXPECT_EQ(cases[k]["classname"], "scenario." + folder);
      EXPECT_EQ(cases[k]["name"], name);
      EXPECT_GT(cases[k]["time"].get<double>(), 0.0);
    }
    EXPECT_EQ(cases[0]["result"], "error");
    EXPECT_EQ(cases[0]["type"], "bad-scenario");
    EXPECT_NE(cases[0]["message"].get<std::string>().find("bad_key_error.yaml:3:1: key 'sead'"), std::string::npos);
    EXPECT_EQ(cases[1]["result"], "failure");
    EXPECT_EQ(cases[1]["type"], "fail");
    // The message: the failed step (check_memory_fail.yaml line 21) and what it found.
    EXPECT_NE(cases[1]["message"].get<std::string>().find("check_memory_fail.yaml:21:5: memory of B MR 'dst' differs"),
              std::string::npos)
        << cases[1]["message"];
    EXPECT_NE(cases[1]["text"].get<std::string>().find("seed 42"), std::string::npos);
    EXPECT_NE(cases[1]["text"].get<std::string>().find("last frames A->B:"), std::string::npos);
    for (size_t k = 2; k < kAll.size(); ++k) EXPECT_EQ(cases[k]["result"], "pass") << kAll[k];
  }
  // All passing: exit 0, and a JUnit file without failures.
  SimResult ok = run_sim(dir, {"regress", kData.string(), "--label", "traffic", "--out", "o3", "--junit", "j3.xml"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const json c3 = junit_cases(dir / "j3.xml");
  ASSERT_EQ(c3.size(), 2u);
  EXPECT_EQ(c3[0]["result"], "pass");
  EXPECT_EQ(c3[1]["result"], "pass");
}

// Hostile folders (found by adversarial testing): a directory symlink back
// to an ancestor, a scenario whose bytes are not UTF-8 (the parser's message
// quotes them), and a --junit that cannot be written.
TEST(SystemRegress, SymlinkLoopsNonUtf8AndAnUnwritableJunit) {
  const fs::path dir = test_dir();
  const fs::path in = dir / "in";
  fs::create_directories(in / "sub");
  fs::copy_file(kData / "traffic/send_pass.yaml", in / "pass.yaml");
  write_text(in / "bytes.yaml", std::string("\xff\xfe\x00 scenario", 12));
  write_text(in / "sub/name.yaml", "scenario: \"\xc3\x28\xef\xbf\xbe\"\nnodes: 1\n");
  fs::create_directory_symlink("..", in / "sub/up");       // a loop
  fs::create_directory_symlink("../sub", in / "sub/again");  // the same folder again
  // Each file once, under its own path (the loop used to repeat all ~40 times).
  SimResult l = run_sim(dir, {"regress", in.string(), "--list"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_EQ(listed(l.out), (std::vector<std::string>{"bytes", "pass", "sub/name"})) << l.out;
  // An unwritable --junit is refused before anything runs.
  for (const fs::path& j : {dir / "nowhere/j.xml", dir}) {
    SimResult r = run_sim(dir, {"regress", in.string(), "--out", "o", "--junit", j.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--junit " + j.string() + ": cannot write"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  }
  // The JUnit file stays well-formed UTF-8 XML whatever bytes the runs print.
  SimResult r = run_sim(dir, {"regress", in.string(), "--out", "o", "--junit", "j.xml"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const json cases = junit_cases(dir / "j.xml");
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0]["result"], "error");
  EXPECT_EQ(cases[0]["type"], "bad-scenario");
  EXPECT_EQ(cases[1]["result"], "pass");
  EXPECT_EQ(cases[2]["type"], "bad-scenario");
  EXPECT_NE(cases[2]["message"].get<std::string>().find("invalid scenario name '?(?"), std::string::npos)
      << cases[2]["message"];
}

TEST(SystemRegress, DatapathOverrideReachesEveryRun) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"regress", (kData / "traffic").string(), "--datapath", "model", "--out", "o", "--junit", "j.xml"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* n : {"o/send_pass.json", "o/write_4k_pass.json"}) {
    const json rep = json::parse(read_text(dir / n));
    EXPECT_EQ(rep["datapath"], "model") << n;
    // The C++ reference models ran the datapath: no RTL, no scoreboard.
    EXPECT_EQ(rep["nodes"]["A"]["datapath"]["kind"], "model") << n;
    EXPECT_EQ(rep["nodes"]["A"]["datapath"]["tx_checked"], 0) << n;
  }
  const json cases = junit_cases(dir / "j.xml");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0]["classname"], "scenario.model");
}

TEST(SystemRun, DatapathOptionOverridesTheScenarioKey) {
  const fs::path dir = test_dir();
  // rc_write_64k.yaml has no datapath key (rtl by default): A's 18 frames through the RTL datapath,
  // each checked by its scoreboard.
  SimResult r = run_sim(dir, {"run", kDefaultScenario, "--json", "rtl.json", "--quiet", "--datapath", "rtl"});
  SimResult m = run_sim(dir, {"run", kDefaultScenario, "--json", "model.json", "--quiet", "--datapath", "model"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const json jr = json::parse(read_text(dir / "rtl.json")), jm = json::parse(read_text(dir / "model.json"));
  EXPECT_EQ(jr["datapath"], "rtl");
  EXPECT_EQ(jm["datapath"], "model");
  EXPECT_EQ(jr["nodes"]["A"]["datapath"]["tx_checked"].get<uint64_t>(), 18u);
  EXPECT_EQ(jm["nodes"]["A"]["datapath"]["tx_checked"].get<uint64_t>(), 0u);
  EXPECT_EQ(jm["nodes"]["A"]["datapath"]["tx_frames"].get<uint64_t>(), 18u);
  // Same cycles either way (the model is the RTL's cycle-accurate reference).
  EXPECT_EQ(jr["sim_time_ps"], jm["sim_time_ps"]);
  EXPECT_EQ(run_sim(dir, {"run", kDefaultScenario, "--datapath", "verilog"}).exit_code, 2);
}

// The failure report of `run` on tb/data/regress/errors/check_memory_fail.yaml:
// what failed and when, the last frames of each direction, the files left,
// the seed and the exact command that reproduces the run.
TEST(SystemFailureReport, NamesWhatWhenFramesFilesSeedAndRepro) {
  const fs::path dir = test_dir();
  fs::copy_file(kData / "errors/check_memory_fail.yaml", dir / "check_memory_fail.yaml");
  const std::vector<std::string> args = {"run", "check_memory_fail.yaml", "--quiet", "--pcap", "out.pcap", "--vcd",
                                         "out.vcd", "--json", "out.json", "--log", "out.log"};
  SimResult r = run_sim(dir, args);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");  // --quiet: everything is on stderr
  const std::string& e = r.err;
  EXPECT_NE(e.find("ernic-sim: check_memory_fail.yaml: fail\n"), std::string::npos) << e;
  // What and when: the check_memory step at line 21, with its time and core cycle.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(e, m, std::regex("FAILED at ([0-9.]+) us \\(core cycle ([0-9]+)\\), "
                                                 "check_memory_fail\\.yaml:21:5: memory of B MR 'dst' differs")))
      << e;
  // core cycle = time / 5 ns at the scenario's 200 MHz core clock (the default).
  EXPECT_EQ(std::stoull(m[2].str()), uint64_t(std::stod(m[1].str()) * 1000.0 / 5.0 + 0.5));
  const json rep = json::parse(read_text(dir / "out.json"));
  EXPECT_DOUBLE_EQ(std::stod(m[1].str()), rep["failures"][0]["time_ps"].get<uint64_t>() / 1e6);
  // Last frames: A's WRITE at the scenario's client_psn 0x123 on QP 2, B's ACK of it.
  const size_t ab = e.find("  last frames A->B:\n"), ba = e.find("  last frames B->A:\n");
  ASSERT_NE(ab, std::string::npos) << e;
  ASSERT_NE(ba, std::string::npos) << e;
  EXPECT_TRUE(std::regex_search(e.substr(ab, ba - ab), std::regex("#2 +RC_WRITE_ONLY +psn=0x000123 qp=2 len=4170")))
      << e;
  EXPECT_TRUE(std::regex_search(e.substr(ba), std::regex("RC_ACK +psn=0x000123 qp=2 len=62 syn=0x1f msn=1"))) << e;
  // The files left, as named on the command line, and that they exist.
  for (const char* line : {"  pcap: out.pcap (+ per-tap files beside it)\n", "  vcd:  out.vcd (GTKWave: gtkwave out.vcd.gtkw)\n", "  json: out.json\n",
                           "  log:  out.log (timeline: ernic-sim log out.log)\n"})
    EXPECT_NE(e.find(line), std::string::npos) << line << e;
  for (const char* f : {"out.pcap", "out.A-tx.pcap", "out.vcd", "out.vcd.gtkw", "out.json", "out.log"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  // The seed of the scenario file (seed: 42).
  EXPECT_NE(e.find("  seed: 42 "), std::string::npos) << e;
  // The repro line: cd to the run's directory, the binary, the same arguments
  // (quoted for the shell only where they need it; these paths do not).
  const auto plain = [](const std::string& s) {
    EXPECT_EQ(s.find_first_of(" '\"$`\\;&|<>()*?"), std::string::npos) << s;
    return s;
  };
  std::string want = "  repro: cd " + plain(fs::canonical(dir).string()) + " && " + plain(fs::canonical(kSim).string());
  for (const auto& a : args) want += " " + a;
  EXPECT_NE(e.find(want + "\n"), std::string::npos) << "want: " << want << "\n" << e;
  // ... and running it from elsewhere fails the same way, at the same time.
  const std::string cmd = e.substr(e.find("  repro: ") + 9, e.find('\n', e.find("  repro: ")) - e.find("  repro: ") - 9);
  const fs::path other = dir / "elsewhere";
  fs::create_directories(other);
  const int st = std::system(("cd " + roce_test::shell_quote(other.string()) + " && (" + cmd + ") >rerun.out 2>rerun.err").c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << cmd;
  EXPECT_NE(read_text(other / "rerun.err").find(m[0].str()), std::string::npos) << read_text(other / "rerun.err");

  // Without --quiet the summary on stdout says what failed and shows the
  // frames; stderr keeps the files, the seed and the repro line.
  SimResult v = run_sim(dir, {"run", "check_memory_fail.yaml", "--json", "v.json"});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.out.find("check_memory_fail.yaml:21:5: memory of B MR 'dst' differs"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("  last frames A->B:\n"), std::string::npos) << v.out;
  EXPECT_NE(v.err.find("  json: v.json\n"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("  seed: 42 "), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("  repro: cd "), std::string::npos) << v.err;
}

}  // namespace
