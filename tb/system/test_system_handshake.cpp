// tb/system: the AXI4-Stream / AXI4-Lite protocol monitors on every seam
// and the randomised-handshake mode, through the real ernic-sim.
//
// A handful of scenarios (WRITE, READ, SEND with receive, IPv6, register
// level, sideband doorbells, a QP set up by the RTL QP-setup block) run unrandomised and with --handshake-random
// 1, 2, 3: each run passes; every tap's frames are the same bytes in the
// same order (read with libpcap) while their timestamps move; the CQEs
// (transaction log) and the DMA writes to host memory are the same; the
// shadow-memory scoreboard checked the same bytes with no mismatch; every
// monitor reports zero violations, the same beats and frames, and the
// randomised runs report stalls on every kind of seam. Then: one seed
// twice gives identical outputs; the scenario key (top level, per node,
// opting out) and its errors; a monitor's violation through the run's
// error path (the TX underflow hook breaks the CMAC stream's no-bubble
// rule).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "tb/system/system_test_util.h"

using namespace system_test;
using nlohmann::json;

namespace {

struct Frame {
  uint64_t t_ns;
  roce::Bytes bytes;
};

// Every frame of a (nanosecond) pcap with its timestamp.
std::vector<Frame> read_frames(const fs::path& p) {
  std::vector<Frame> out;
  char eb[PCAP_ERRBUF_SIZE] = {};
  pcap_t* h = pcap_open_offline_with_tstamp_precision(p.c_str(), PCAP_TSTAMP_PRECISION_NANO, eb);
  if (!h) {
    ADD_FAILURE() << p << ": " << eb;
    return out;
  }
  pcap_pkthdr* hdr = nullptr;
  const u_char* d = nullptr;
  while (pcap_next_ex(h, &hdr, &d) == 1)
    out.push_back({uint64_t(hdr->ts.tv_sec) * 1000000000ull + uint64_t(hdr->ts.tv_usec), roce::Bytes(d, d + hdr->caplen)});
  pcap_close(h);
  return out;
}

std::vector<json> read_log(const fs::path& p) {
  std::vector<json> v;
  std::istringstream s(read_text(p));
  for (std::string line; std::getline(s, line);)
    if (!line.empty()) v.push_back(json::parse(line));
  return v;
}

struct SimRun {
  SimResult r;
  json j;
  std::vector<json> log;
  std::map<std::string, std::vector<Frame>> taps;  // "A-tx" -> frames
};

SimRun run(const fs::path& dir, const std::string& scenario, std::optional<uint64_t> seed) {
  SimRun o;
  const std::string tag = seed ? "r" + std::to_string(*seed) : "base";
  std::vector<std::string> args = {"run", scenario, "--pcap", tag + ".pcap", "--json", tag + ".json", "--log",
                                   tag + ".log", "--quiet"};
  if (seed) args.insert(args.end(), {"--handshake-random", std::to_string(*seed)});
  o.r = run_sim(dir, args);
  if (o.r.exit_code != 0) return o;
  o.j = json::parse(read_text(dir / (tag + ".json")));
  o.log = read_log(dir / (tag + ".log"));
  for (const auto& [node, _] : o.j["nodes"].items())
    for (const char* d : {"tx", "rx"}) o.taps[node + "-" + d] = read_frames(dir / (tag + "." + node + "-" + d + ".pcap"));
  return o;
}

std::string fmt_cqe(const json& e) {
  return "index " + std::to_string(e["cq_index"].get<int>()) + " wr_id " + std::to_string(e["wr_id"].get<int>()) +
         " opcode " + std::to_string(e["opcode"].get<int>()) + " error " + (e["error"].get<bool>() ? "1" : "0") +
         " raw " + std::to_string(e["raw"].get<uint64_t>());
}

// CQEs by node and QP, in order, without time.
std::map<std::string, std::vector<std::string>> cqes(const SimRun& r) {
  std::map<std::string, std::vector<std::string>> m;
  for (const json& e : r.log)
    if (e["kind"] == "cqe") m[e["node"].get<std::string>() + " qp" + std::to_string(e["qp"].get<int>())].push_back(fmt_cqe(e));
  return m;
}

// DMA writes into host memory (node, master, address, length), as a multiset:
// masters work concurrently, so their relative order may follow the timing.
std::multiset<std::string> dma_writes(const SimRun& r) {
  std::multiset<std::string> m;
  for (const json& e : r.log)
    if (e["kind"] == "dma" && e["op"] == "write")
      m.insert(e["node"].get<std::string>() + " " + e["master"].get<std::string>() + " " +
               std::to_string(e["addr"].get<uint64_t>()) + " " + std::to_string(e["len"].get<uint64_t>()));
  return m;
}

uint64_t sum(const json& monitors, const std::string& suffix, const char* key) {
  uint64_t n = 0;
  for (const auto& [name, m] : monitors.items())
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      n += m[key].get<uint64_t>();
  return n;
}

class RandomisedHandshakes : public ::testing::TestWithParam<const char*> {};

TEST_P(RandomisedHandshakes, SameResultsOtherTiming) {
  const std::string scenario = kSourceDir + "/scenarios/" + GetParam();
  std::string name = GetParam();
  for (char& c : name)
    if (c == '/' || c == '.') c = '_';
  const fs::path dir = test_dir("." + name);
  const SimRun base = run(dir, scenario, std::nullopt);
  ASSERT_EQ(base.r.exit_code, 0) << base.r.out << base.r.err;
  // Unrandomised: every seam monitored, nothing violated, nothing randomised;
  // the seams the models drive never stall (the RTL's may: a busy roce_tx,
  // the FIFO's next frame waiting for the line).
  const json& bm = base.j["protocol_monitors"];
  ASSERT_FALSE(bm.empty());
  for (const auto& [m, c] : bm.items()) {
    EXPECT_EQ(c["violations"], 0) << m;
    if (m.find(".datapath.") == std::string::npos && m.find(".qp_setup_fsm.") == std::string::npos)
      EXPECT_EQ(c["stalls"], 0) << m;
    if (c["kind"] == "axi4-lite") {
      EXPECT_EQ(c["open_writes"], 0) << m << ": every write address and data transfer answered, none extra";
      EXPECT_EQ(c["open_reads"], 0) << m;
    }
  }
  for (const char* node : {"top.A", "top.B"})
    for (const char* seam : {".cmac.tx_axis", ".cmac.rx_axis", ".s_axi_lite", ".datapath.s_desc", ".datapath.s_pay",
                             ".datapath.m_desc", ".datapath.m_pay", ".datapath.m_byp", ".datapath.m_cmac",
                             ".datapath.s_cmac"})
      EXPECT_TRUE(bm.contains(std::string(node) + seam)) << node << seam;
  // The register path's transfers as the port counts them (nodes.X.axil).
  for (const char* n : {"A", "B"}) {
    EXPECT_EQ(bm[std::string("top.") + n + ".s_axi_lite"]["writes"], base.j["nodes"][n]["axil"]["writes"]) << n;
    EXPECT_EQ(bm[std::string("top.") + n + ".s_axi_lite"]["reads"], base.j["nodes"][n]["axil"]["reads"]) << n;
  }
  EXPECT_TRUE(base.j["handshake_random"].empty());
  // Every frame the CMACs sent went over the RTL's FIFO -> CMAC stream.
  EXPECT_EQ(sum(bm, ".datapath.m_cmac", "frames"),
            base.j["nodes"]["A"]["tx"]["packets"].get<uint64_t>() + base.j["nodes"]["B"]["tx"]["packets"].get<uint64_t>());

  static constexpr const char* kSignals[] = {".s_axi_lite.awready", ".s_axi_lite.bvalid", ".datapath.m_cmac.tready",
                                             ".datapath.s_pay.tvalid", ".datapath.s_desc.valid",
                                             ".datapath.s_cmac.tvalid"};
  std::map<std::string, uint64_t> inserted;
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("--handshake-random " + std::to_string(seed));
    const SimRun r = run(dir, scenario, seed);
    ASSERT_EQ(r.r.exit_code, 0) << r.r.out << r.r.err;
    // Frames: the same bytes in the same order on every tap; the timing moved.
    bool moved = false;
    for (const auto& [tap, frames] : base.taps) {
      const auto& got = r.taps.at(tap);
      ASSERT_EQ(got.size(), frames.size()) << tap;
      for (size_t i = 0; i < frames.size(); ++i) {
        ASSERT_EQ(got[i].bytes, frames[i].bytes) << tap << " frame " << i;
        moved |= got[i].t_ns != frames[i].t_ns;
      }
    }
    EXPECT_TRUE(moved) << "no frame's timestamp changed";
    EXPECT_NE(r.j["sim_time_ps"], base.j["sim_time_ps"]);
    // CQEs, host-memory writes, the scoreboard's view of every MR byte.
    EXPECT_EQ(cqes(r), cqes(base));
    EXPECT_FALSE(cqes(base).empty());
    EXPECT_EQ(dma_writes(r), dma_writes(base));
    EXPECT_EQ(r.j["scoreboard"]["bytes_checked"], base.j["scoreboard"]["bytes_checked"]);
    EXPECT_EQ(r.j["scoreboard"]["mismatches"], 0);
    EXPECT_TRUE(r.j["model_errors"].empty()) << r.j["model_errors"].dump();
    // Monitors: no violation, the same beats and frames on every stream,
    // stalls on every kind of randomised seam.
    const json& m = r.j["protocol_monitors"];
    for (const auto& [k, c] : m.items()) {
      EXPECT_EQ(c["violations"], 0) << k;
      if (c["kind"] == "axi4-stream") {
        EXPECT_EQ(c["beats"], bm[k]["beats"]) << k;
        EXPECT_EQ(c["frames"], bm[k]["frames"]) << k;
        EXPECT_FALSE(c["in_frame_at_end"].get<bool>()) << k;
      } else {
        EXPECT_EQ(c["writes"], bm[k]["writes"]) << k;
        EXPECT_EQ(c["open_writes"], 0) << k;
        EXPECT_EQ(c["open_reads"], 0) << k;
      }
    }
    EXPECT_GT(sum(m, ".datapath.m_cmac", "stalls"), sum(bm, ".datapath.m_cmac", "stalls")) << "CMAC TREADY low";
    EXPECT_GT(sum(m, ".s_axi_lite", "stalls"), 0u) << "AXI4-Lite READY low";
    if (m.contains("top.A.qp_setup_fsm.m_axi_lite"))
      EXPECT_GT(sum(m, ".qp_setup_fsm.m_axi_lite", "stalls"), 0u) << "the QP-setup master's requests granted late";
    const json& hr = r.j["handshake_random"];
    ASSERT_TRUE(hr.contains("top.A") && hr.contains("top.B")) << hr.dump();
    for (const char* node : {"top.A", "top.B"}) {
      EXPECT_EQ(hr[node]["seed"], seed);
      EXPECT_EQ(hr[node]["ready_pct"], 70);
      EXPECT_EQ(hr[node]["valid_pct"], 80);
      EXPECT_GT(hr[node]["total_stall_cycles"].get<uint64_t>(), 0u);
    }
    // Stall cycles inserted on each kind of randomised signal (both nodes; checked over the seeds below).
    for (const char* sig : kSignals)
      for (const char* node : {"top.A", "top.B"})
        inserted[sig] += hr[node]["stall_cycles"].value(node + std::string(sig), uint64_t(0));
  }
  for (const char* sig : kSignals) EXPECT_GT(inserted[sig], 0u) << sig << ": no stall inserted under three seeds";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, RandomisedHandshakes,
                         ::testing::Values("handshake/rc_write_64k.yaml", "traffic/rc_read_64k.yaml",
                                           "traffic/rc_ipv6_write_read_send.yaml", "traffic/rc_send_inline_ieth.yaml",
                                           "traffic/rc_sideband_doorbells.yaml", "examples/register_checks.yaml",
                                           "handshake/qp_setup_fsm_ready.yaml"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = i.param;
                           n = n.substr(n.find('/') + 1);
                           n = n.substr(0, n.find('.'));
                           return n;
                         });

// The same with `--datapath model` (the reference models, no RTL): the
// CMAC presents the TX beats itself, with TREADY stalls and late TVALIDs.
TEST(RandomisedHandshakes, ModelDatapathSameResultsOtherTiming) {
  const fs::path d1 = test_dir(".base"), d2 = test_dir(".random");
  const auto go = [&](const fs::path& d, bool rnd) {
    std::vector<std::string> a = {"run", kDefaultScenario, "--datapath", "model", "--pcap", "out.pcap", "--json",
                                  "out.json", "--log", "out.log", "--quiet"};
    if (rnd) a.insert(a.end(), {"--handshake-random", "2"});
    return run_sim(d, a);
  };
  SimResult b = go(d1, false), r = go(d2, true);
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* tap : {"out.A-tx.pcap", "out.B-tx.pcap", "out.A-rx.pcap", "out.B-rx.pcap"}) {
    const auto x = read_frames(d1 / tap), y = read_frames(d2 / tap);
    ASSERT_EQ(x.size(), y.size()) << tap;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].bytes, y[i].bytes) << tap << " frame " << i;
  }
  const json jb = json::parse(read_text(d1 / "out.json")), jr = json::parse(read_text(d2 / "out.json"));
  const json& mb = jb["protocol_monitors"];
  const json& mr = jr["protocol_monitors"];
  EXPECT_FALSE(mr.contains("top.A.datapath.m_cmac")) << "no RTL datapath";
  for (const char* k : {"top.A.cmac.tx_axis", "top.B.cmac.tx_axis"}) {
    EXPECT_EQ(mr[k]["frames"], mb[k]["frames"]) << k;
    EXPECT_EQ(mr[k]["beats"], mb[k]["beats"]) << k;
    EXPECT_EQ(mr[k]["violations"], 0) << k;
    EXPECT_EQ(mb[k]["stalls"], 0) << k;
  }
  EXPECT_GT(mb["top.A.cmac.tx_axis"]["frames"].get<uint64_t>(), 0u);
  EXPECT_GT(mr["top.A.cmac.tx_axis"]["stalls"].get<uint64_t>(), 0u);
  EXPECT_EQ(mr["top.A.cmac.tx_axis"]["stalls"], jr["handshake_random"]["top.A"]["stall_cycles"]["top.A.cmac.tx_axis.tready"]);
}

// scenarios/traffic/rc_handshake_random.yaml (randomised by its own key)
// sends the frames, writes the memory and completes the CQEs of its twin
// without the key.
TEST(RandomisedHandshakes, ScenarioFileMatchesItsUnrandomisedTwin) {
  const fs::path d1 = test_dir(".keyed"), d2 = test_dir(".twin");
  const std::string file = kSourceDir + "/scenarios/traffic/rc_handshake_random.yaml";
  std::string y = read_text(file);
  const size_t k = y.find("\nhandshake_random:");
  ASSERT_NE(k, std::string::npos);
  y.erase(k + 1, y.find('\n', k + 1) - k);
  write_text(d2 / "twin.yaml", y);
  const SimRun keyed = run(d1, file, std::nullopt), twin = run(d2, (d2 / "twin.yaml").string(), std::nullopt);
  ASSERT_EQ(keyed.r.exit_code, 0) << keyed.r.out << keyed.r.err;
  ASSERT_EQ(twin.r.exit_code, 0) << twin.r.out << twin.r.err;
  EXPECT_EQ(keyed.j["handshake_random"]["top.A"]["ready_pct"], 50);
  EXPECT_TRUE(twin.j["handshake_random"].empty());
  for (const auto& [tap, frames] : twin.taps) {
    const auto& got = keyed.taps.at(tap);
    ASSERT_EQ(got.size(), frames.size()) << tap;
    for (size_t i = 0; i < frames.size(); ++i) ASSERT_EQ(got[i].bytes, frames[i].bytes) << tap << " frame " << i;
  }
  EXPECT_EQ(cqes(keyed), cqes(twin));
  EXPECT_EQ(dma_writes(keyed), dma_writes(twin));
  EXPECT_GT(sum(keyed.j["protocol_monitors"], ".s_axi_lite", "stalls"), 0u);
}

// One seed, twice: byte-identical captures (timestamps included), log and report.
TEST(RandomisedHandshakes, ReproducibleFromTheSeed) {
  const fs::path d1 = test_dir(".1"), d2 = test_dir(".2");
  for (const fs::path& d : {d1, d2}) {
    SimResult r = run_sim(d, {"run", kDefaultScenario, "--pcap", "out.pcap", "--json", "out.json", "--log", "out.log",
                              "--quiet", "--handshake-random", "5"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  for (const char* f : {"out.pcap", "out.A-tx.pcap", "out.B-rx.pcap", "out.log"})
    EXPECT_EQ(read_text(d1 / f), read_text(d2 / f)) << f;
  json a = json::parse(read_text(d1 / "out.json")), b = json::parse(read_text(d2 / "out.json"));
  a.erase("wall"), b.erase("wall");
  EXPECT_EQ(a, b);
  EXPECT_GT(a["handshake_random"]["top.A"]["total_stall_cycles"].get<uint64_t>(), 0u);
}

// The scenario key: top level, a node's own, a node opting out.
TEST(RandomisedHandshakes, ScenarioKey) {
  const fs::path dir = test_dir();
  std::string y = read_text(kDefaultScenario);
  auto put = [&](const std::string& after, const std::string& text) {
    const size_t k = y.find(after);
    ASSERT_NE(k, std::string::npos) << after;
    y.insert(k + after.size(), text);
  };
  put("seed: 1\n", "handshake_random: { seed: 9, ready_pct: 50, valid_pct: 90 }\n");
  put("    ip: 10.0.0.2\n", "    handshake_random: false\n");
  write_text(dir / "hr.yaml", y);
  SimResult r = run_sim(dir, {"run", "hr.yaml", "--json", "out.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(read_text(dir / "out.json"));
  const json& hr = j["handshake_random"];
  ASSERT_EQ(hr.size(), 1u) << hr.dump();
  EXPECT_EQ(hr["top.A"]["seed"], 9);
  EXPECT_EQ(hr["top.A"]["ready_pct"], 50);
  EXPECT_EQ(hr["top.A"]["valid_pct"], 90);
  const json& m = j["protocol_monitors"];
  EXPECT_GT(hr["top.A"]["stall_cycles"]["top.A.datapath.m_cmac.tready"].get<uint64_t>(), 0u);
  EXPECT_GT(m["top.A.s_axi_lite"]["stalls"].get<uint64_t>(), 0u);
  EXPECT_EQ(m["top.B.s_axi_lite"]["stalls"], 0) << "B opted out";
  EXPECT_EQ(m["top.B.datapath.s_cmac"]["bubbles"], 0);
  EXPECT_NE(r.out.find("handshake random top.A: seed 9, READY high 50%, VALID raised 90%"), std::string::npos) << r.out;
  // --handshake-random overrides the seed everywhere (B too), keeping the percentages.
  r = run_sim(dir, {"run", "hr.yaml", "--json", "cli.json", "--quiet", "--handshake-random", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json c = json::parse(read_text(dir / "cli.json"));
  EXPECT_EQ(c["handshake_random"]["top.A"]["seed"], 4);
  EXPECT_EQ(c["handshake_random"]["top.A"]["ready_pct"], 50);
  EXPECT_EQ(c["handshake_random"]["top.B"]["seed"], 4);
  EXPECT_EQ(c["handshake_random"]["top.B"]["ready_pct"], 70);
}

TEST(RandomisedHandshakes, BadKeysNameFileLineAndKey) {
  const fs::path dir = test_dir();
  const std::string y = read_text(kDefaultScenario);
  const size_t k = y.find("seed: 1\n") + 8;
  const int line = int(std::count(y.begin(), y.begin() + long(k), '\n')) + 1;
  struct Case {
    std::string text, want;
  };
  for (const Case& c : {Case{"handshake_random: { ready_pct: 0 }\n", "key 'handshake_random.ready_pct': 0 is out of range [1, 100]"},
                        Case{"handshake_random: { valid: 50 }\n", "key 'handshake_random.valid': unknown key 'valid'"},
                        Case{"handshake_random: 7\n", "key 'handshake_random': expected true or false"}}) {
    write_text(dir / "bad.yaml", y.substr(0, k) + c.text + y.substr(k));
    SimResult r = run_sim(dir, {"run", "bad.yaml"});
    EXPECT_EQ(r.exit_code, 2) << c.text;
    EXPECT_NE(r.err.find("bad.yaml:" + std::to_string(line) + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
  }
}

// --handshake-random SEED takes what the scenario key takes: an integer
// 0..2^64-1, decimal or 0x hex. A negative, empty, fractional or too large
// seed is an error (exit 2, naming the option), not a silently wrapped or
// saturated seed (-1 and 2^64 used to run as 2^64-1, '' as 0).
TEST(RandomisedHandshakes, BadCliSeedExits2) {
  const fs::path dir = test_dir();
  for (const char* bad : {"-1", "-5", "18446744073709551616", "99999999999999999999999", "", "abc", "1.5", " 5", "5x",
                          "0x", "0x1g", "+5"}) {
    SimResult r = run_sim(dir, {"run", kDefaultScenario, "--quiet", "--json", "bad.json", "--handshake-random", bad});
    EXPECT_EQ(r.exit_code, 2) << "'" << bad << "'\n" << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("--handshake-random"), std::string::npos) << "'" << bad << "'\n" << r.out << r.err;
    EXPECT_FALSE(fs::exists(dir / "bad.json")) << bad;
  }
  // The extremes run, with exactly that seed.
  for (const auto& [arg, seed] : {std::pair<const char*, uint64_t>{"18446744073709551615", ~0ull}, {"0x10", 16}, {"0", 0}}) {
    SimResult r = run_sim(dir, {"run", kDefaultScenario, "--quiet", "--json", "ok.json", "--handshake-random", arg});
    ASSERT_EQ(r.exit_code, 0) << arg << "\n" << r.out << r.err;
    const json j = json::parse(read_text(dir / "ok.json"));
    EXPECT_EQ(j["handshake_random"]["top.A"]["seed"].get<uint64_t>(), seed) << arg;
    EXPECT_EQ(j["handshake_random"]["top.B"]["seed"].get<uint64_t>(), seed) << arg;
  }
}

// A protocol violation goes through the run's error path: the TX underflow
// hook drops TVALID inside a frame of the CMAC's TX stream, which promises
// no bubble (with the `model` datapath the CMAC presents those beats; the
// RTL datapath holds its FIFO with TREADY low instead, no violation there).
// Besides the CMAC's own error, the monitor names the stream, the rule,
// the CMAC cycle and the frame; the JSON counts it.
TEST(ProtocolMonitors, ViolationFailsTheRunWithStreamRuleAndCycle) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"run", kSystemDir + "/pfc/tx_underflow.yaml", "--datapath", "model", "--json", "out.json"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const json j = json::parse(read_text(dir / "out.json"));
  ASSERT_EQ(j["model_errors"].size(), 2u) << j["model_errors"].dump();
  // One instant's entries by their text (model/system/report.h: order_by_time): "SEAM..." before "TX underflow".
  const json& mon = j["model_errors"][0];
  const json& cmac = j["model_errors"][1];
  EXPECT_EQ(cmac["where"], "top.A.cmac");
  EXPECT_EQ(mon["where"], "top.A.cmac.tx_axis");
  const std::string what = mon["what"];
  EXPECT_EQ(what.rfind("SEAM_NO_BUBBLE at cmac cycle ", 0), 0u) << what;
  EXPECT_NE(what.find("TVALID low inside a frame after 3 beat(s) of frame 4"), std::string::npos) << what;
  // The same edge as the CMAC's own detection: cycle x 3103 ps.
  EXPECT_EQ(mon["time_ps"], cmac["time_ps"]);
  const uint64_t cycle = std::stoull(what.substr(std::string("SEAM_NO_BUBBLE at cmac cycle ").size()));
  EXPECT_EQ(cycle * kCmacPeriodPs, mon["time_ps"].get<uint64_t>());
  EXPECT_EQ(j["protocol_monitors"]["top.A.cmac.tx_axis"]["violations"], 1);
  EXPECT_EQ(j["protocol_monitors"]["top.A.cmac.tx_axis"]["bubbles"], 3) << "tvalid low for 3 CMAC cycles";
  EXPECT_NE(r.out.find("MODEL ERROR top.A.cmac.tx_axis"), std::string::npos) << r.out;
}

}  // namespace
