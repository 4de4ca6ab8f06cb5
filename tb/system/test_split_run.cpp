// tb/system: split runs (issue 16): split_run (tools/split_run.h) with a
// fake `ernic-sim node`, a shell script this file writes, standing for the
// node processes: the arguments each gets, exit codes and signals, the
// grace period and the wall-clock bound, the messages, the merge of the
// parts into the user's outputs (against split_merge's merge of the same
// parts, itself tested against one writer in test_split_merge.cpp), the
// taps and reports moved beside them, the private directory.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/trace/pcap_writer.h"
#include "model/trace/txlog.h"
#include "tb/system/split_test_util.h"
#include "tools/split_merge.h"
#include "tools/split_run.h"

namespace {

namespace fs = std::filesystem;
using namespace ernic;

using namespace split_test;  // test_dir, slurp, lines

std::vector<uint8_t> frame(uint8_t tag) { return std::vector<uint8_t>(60, tag); }

// A node's log part: its records at two instants and the two steps, with
// instant marks (tools/split_merge.h).
void write_log(const fs::path& p, const std::string& node, uint32_t value) {
  uint64_t now = 0;
  TxLog l(p.string());
  l.clock = [&] { return now; };
  for (uint64_t t : {1000, 2000}) {
    now = t;
    l.write(nlohmann::json{{"instant_ps", t}});
    if (t == 1000) l.step(t, "s.yaml:3:5", "wait", "start", "");
    l.reg(t, node, "core", t / 5000, std::nullopt, true, 0x20, "REG", value);
    if (t == 2000) l.step(t, "s.yaml:3:5", "wait", "end", "");
  }
}

const std::string kScenario = std::string(ERNIC_SOURCE_DIR) + "/scenarios/handshake/rc_write_64k.yaml";  // nodes A, B

// A fake `ernic-sim node`: writes its arguments to $FAKE_DIR/args.<node>,
// copies the parts prepared in $FAKE_DIR/parts/<node>.* to the paths it
// was given, then does what $FAKE_<node> says: exitN, signal (SIGKILL
// itself), sleep (30 s), nothing (exit 0).
const char* const kFakeNode = R"SH(#!/bin/sh
node=; pcap=; log=; json=; prev=
for a in "$@"; do
  case "$prev" in --node) node=$a;; --pcap) pcap=$a;; --log) log=$a;; --json) json=$a;; esac
  prev=$a
done
printf '%s\n' "$@" > "$FAKE_DIR/args.$node"
echo "fake node $node: started"
src="$FAKE_DIR/parts/$node"
if [ -n "$pcap" ]; then
  stem=${pcap%.pcap}
  cp "$src.pcap" "$pcap"; cp "$src.tx.pcap" "$stem.$node-tx.pcap"; cp "$src.rx.pcap" "$stem.$node-rx.pcap"
fi
if [ -n "$log" ]; then cp "$src.log" "$log"; fi
if [ -n "$json" ]; then echo "{\"node\":\"$node\"}" > "$json"; fi
eval "action=\$FAKE_$node"
case "$action" in
  sleep) exec sleep 30;;
  signal) echo "fake node $node: crashing"; kill -KILL $$;;
  exit*) echo "fake node $node: expectation failed (${action})"; exit ${action#exit};;
esac
exit 0
)SH";

class SplitRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = test_dir();
    fs::create_directories(dir / "parts");
    fake = (dir / "fake-ernic-sim").string();
    std::ofstream(fake) << kFakeNode;
    fs::permissions(fake, fs::perms::owner_all);
    // The runs' private directories: a short path in the build tree (a
    // unix socket's path has at most 107 bytes).
    tmp = fs::path(ERNIC_SYSTEM_OUT) / "split" / "tmp";
    fs::create_directories(tmp);
    setenv("TMPDIR", tmp.c_str(), 1);
    setenv("FAKE_DIR", dir.c_str(), 1);
    setenv("FAKE_A", "", 1);
    setenv("FAKE_B", "", 1);
    // Each node's parts (its wire pcap, taps, log) and what merging them gives.
    const fs::path parts = dir / "parts";
    for (const char* n : {"A", "B"}) {
      PcapWriter w((parts / (std::string(n) + ".pcap")).string());
      w.write(frame(uint8_t(n[0])), 3743);
      w.write(frame(uint8_t(n[0] + 0x20)), 9949 + (n[0] - 'A') * 3103);
      for (const char* t : {"tx", "rx"}) {
        PcapWriter tap((parts / (std::string(n) + "." + t + ".pcap")).string());
        tap.write(frame(uint8_t(n[0] + t[0])), 5000);
      }
      write_log(parts / (std::string(n) + ".log"), n, n[0]);
    }
    merge_wire_pcaps({(parts / "A.pcap").string(), (parts / "B.pcap").string()}, (parts / "expect.pcap").string());
    merge_logs({(parts / "A.log").string(), (parts / "B.log").string()}, (parts / "expect.log").string());
    args.self = fake;
    args.scenario = kScenario;
    args.grace_s = 0.3;
    args.timeout_s = 20;
    args.out = &out;
    args.err = &err;
  }
  // The private directory the run used (from node A's --listen).
  fs::path run_dir() {
    for (const auto& l : lines(slurp(dir / "args.A")))
      if (l.rfind("unix:", 0) == 0) return fs::path(l.substr(5)).parent_path();
    return {};
  }
  int run_with(const char* a, const char* b) {
    setenv("FAKE_A", a, 1);
    setenv("FAKE_B", b, 1);
    out.str("");
    err.str("");
    const int rc = split_run(args);
    const std::string e = err.str(), k = "files are kept in ";
    if (const size_t at = e.find(k); at != std::string::npos) kept.push_back(e.substr(at + k.size(), e.find('\n', at) - at - k.size()));
    return rc;
  }
  // The directories failed runs keep (the fallback may put them in /tmp).
  void TearDown() override {
    for (const auto& k : kept) fs::remove_all(k);
  }
  fs::path dir, tmp;
  std::vector<std::string> kept;
  std::string fake;
  SplitRunArgs args;
  std::ostringstream out, err;
};

TEST_F(SplitRun, PassMergesThePartsAndRemovesItsDirectory) {
  args.pcap = (dir / "run.pcap").string();
  args.log = (dir / "run.log").string();
  args.json = (dir / "run.json").string();
  args.datapath = "model";
  args.no_idle_skip = true;
  args.handshake_random = "7";
  EXPECT_EQ(run_with("", ""), 0) << err.str();
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(out.str().rfind("split run: nodes A, B in 2 processes: exit 0, ", 0), 0u) << out.str();
  const fs::path rd = run_dir();
  ASSERT_FALSE(rd.empty());
  // Under $TMPDIR, or /tmp when DIR/link.sock would not fit a socket address.
  EXPECT_EQ(rd.parent_path(), tmp.string().size() + 29 < 108 ? tmp : fs::path("/tmp"));
  EXPECT_FALSE(fs::exists(rd));  // removed on success
  const std::string r = rd.string();
  EXPECT_EQ(lines(slurp(dir / "args.A")),
            (std::vector<std::string>{"node", kScenario, "--node", "A", "--listen", "unix:" + r + "/link.sock", "--quiet",
                                      "--pcap", r + "/node0.pcap", "--log", r + "/node0.log", "--json", r + "/node0.json",
                                      "--datapath", "model", "--no-idle-skip", "--handshake-random", "7"}));
  EXPECT_EQ(lines(slurp(dir / "args.B"))[4], "--connect");
  EXPECT_EQ(lines(slurp(dir / "args.B"))[8], r + "/node1.pcap");
  // The merged outputs are one writer's; the taps and reports beside them.
  EXPECT_EQ(slurp(dir / "run.pcap"), slurp(dir / "parts" / "expect.pcap"));
  EXPECT_EQ(slurp(dir / "run.log"), slurp(dir / "parts" / "expect.log"));
  const auto frames = PcapReader::read_all((dir / "run.pcap").string());
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0].data[0], 'A');  // 3743 ps: A, then B (node order)
  EXPECT_EQ(frames[1].data[0], 'B');
  EXPECT_EQ(frames[2].data[0], 'A' + 0x20);
  EXPECT_EQ(frames[3].data[0], 'B' + 0x20);
  const auto log = lines(slurp(dir / "run.log"));
  ASSERT_EQ(log.size(), 6u);  // each step once, then A's and B's records
  EXPECT_NE(log[0].find(R"("kind":"step")"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find(R"("node":"A")"), std::string::npos) << log[1];
  EXPECT_NE(log[2].find(R"("node":"B")"), std::string::npos) << log[2];
  EXPECT_NE(log[5].find(R"("phase":"end")"), std::string::npos) << log[5];
  for (const char* n : {"A", "B"}) {
    for (const char* t : {"tx", "rx"})
      EXPECT_EQ(slurp(dir / (std::string("run.") + n + "-" + t + ".pcap")),
                slurp(dir / "parts" / (std::string(n) + "." + t + ".pcap")));
    EXPECT_EQ(slurp(dir / (std::string("run.") + n + ".json")), std::string("{\"node\":\"") + n + "\"}\n");
  }
}

TEST_F(SplitRun, ExpectationFailureNamesTheNodeAndKeepsTheDirectory) {
  args.log = (dir / "run.log").string();
  args.quiet = true;
  args.grace_s = 5;  // A ends by itself (the run does not wait for the grace)
  EXPECT_EQ(run_with("", "exit1"), 1);
  const std::string e = err.str();
  EXPECT_NE(e.find("ernic-sim: split run: node B: exit status 1 (an expectation failed); its output:\n"
                   "  | fake node B: started\n  | fake node B: expectation failed (exit1)\n"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("node A"), std::string::npos) << e;
  EXPECT_NE(e.find("the node processes' files are kept in " + run_dir().string() + "\n"), std::string::npos) << e;
  EXPECT_TRUE(fs::exists(run_dir() / "node1.out"));
  EXPECT_EQ(slurp(dir / "run.log"), slurp(dir / "parts" / "expect.log"));  // a finished failing run keeps its log
  EXPECT_EQ(out.str(), "");
}

TEST_F(SplitRun, SignalKillsTheOthersAfterTheGrace) {
  args.log = (dir / "run.log").string();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run_with("sleep", "signal"), 1);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(wall, 10.0);
  const std::string e = err.str();
  EXPECT_NE(e.find("node B: killed by signal 9 (Killed); its output:\n  | fake node B: started\n  | fake node B: crashing\n"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("node A: still running 0.3 s after node B ended: killed\n"), std::string::npos) << e;
  EXPECT_NE(e.find("the outputs were not merged (a node did not finish its run)"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir / "run.log"));
  EXPECT_TRUE(fs::exists(run_dir()));
}

TEST_F(SplitRun, ExitCodeIsTheWorstNodes) {
  struct Case {
    const char *a, *b;
    int want;
  };
  const Case cases[] = {{"", "", 0},         {"exit3", "", 3},      {"", "exit3", 3},      {"exit3", "exit1", 1},
                        {"exit1", "exit3", 1}, {"exit2", "exit1", 2}, {"exit3", "exit2", 2}, {"exit7", "", 1},
                        {"exit3", "signal", 1}};
  args.grace_s = 5;  // every node ends by itself
  for (const Case& c : cases) {
    EXPECT_EQ(run_with(c.a, c.b), c.want) << "A " << c.a << ", B " << c.b << "\n" << err.str();
    if (c.want == 0) {
      EXPECT_FALSE(fs::exists(run_dir()));
    }
  }
  run_with("exit7", "");
  EXPECT_NE(err.str().find("node A: exit status 7; its output:"), std::string::npos) << err.str();
  run_with("exit3", "");
  EXPECT_NE(err.str().find("node A: exit status 3 (no progress, or the simulated time limit)"), std::string::npos);
}

TEST_F(SplitRun, WallClockBoundKillsEveryNode) {
  args.timeout_s = 0.5;
  EXPECT_EQ(run_with("sleep", "sleep"), 3);
  for (const char* n : {"A", "B"})
    EXPECT_NE(err.str().find(std::string("node ") + n + ": still running after 0.5 s of wall time: killed; its output:\n" +
                             "  | fake node " + n + ": started\n"),
              std::string::npos)
        << err.str();
}

TEST_F(SplitRun, RefusedBeforeAnyNodeStarts) {
  // Each file written, run split: exit 2 and `why` on stderr before any node starts.
  const std::string nodes = "nodes:\n  A: { mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1 }\n"
                            "  B: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2 }\nsteps:\n  - init: [A, B]\n";
  auto refused = [&](const std::string& name, const std::string& text, const std::string& why) {
    args.scenario = (dir / (name + ".yaml")).string();
    std::ofstream(args.scenario) << "scenario: " << name << "\n" << text;
    EXPECT_EQ(run_with("", ""), 2) << name;
    EXPECT_NE(err.str().find(why), std::string::npos) << err.str();
    err.str("");
  };
  // No propagation delay: no lookahead (model/scenario/split_plan.h).
  refused("no_delay", "link: { delay_ns: 0 }\n" + nodes,
          "no_delay.yaml: link.delay_ns 0 cannot run split (a split run needs a propagation delay above 0: the "
          "lookahead)");
  // A star's port without one: named by its own key's line and path.
  refused("port_no_delay", "topology:\n  switch:\n    ports:\n      B:\n        delay_ns: 0\n" + nodes,
          "port_no_delay.yaml:6:19: topology.switch.ports.B.delay_ns 0 cannot run split (a split run needs a "
          "propagation delay above 0: the lookahead)");
  // A step phase 1 cannot split: named by file, line and kind (model/scenario/split_plan.h).
  refused("batch", nodes + "  - connect: { name: c, client: A, server: B, cm: true, batch: 2 }\n",
          "batch.yaml:7:5: the step `connect` with batch cannot run split yet");
  args.scenario = (dir / "missing.yaml").string();
  EXPECT_EQ(run_with("", ""), 2);
  EXPECT_NE(err.str().find("missing.yaml"), std::string::npos) << err.str();
  args.scenario = kScenario;
  args.log = (dir / "parts").string();  // a directory
  EXPECT_EQ(run_with("", ""), 2);
  EXPECT_EQ(err.str(), "ernic-sim: --log " + (dir / "parts").string() + ": is a directory\n");
  args.log.clear();
  args.self = (dir / "no-such-program").string();
  EXPECT_EQ(run_with("", ""), 2);
  EXPECT_NE(err.str().find("split run: node A: cannot start " + args.self), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(dir / "args.A"));
}

}  // namespace
