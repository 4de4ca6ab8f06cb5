// tb/ext: the two named extensions in whole runs of ernic-sim (scenarios
// written here), judged from the run's JSON and transaction log against
// values worked out in the test.
//
// PCIe arithmetic (model/dma/pcie.h, model/dma/dma.h, as tb/system's
// latency test derives it): a TLP of n payload bytes takes (n + 24) bytes
// at the raw rate (Gen3 x16: 16 x 8 GT/s x 128/130 / 8 bytes/ns), rounded
// to the ps; a DMA read issued on a core edge sends its request, the host
// answers read_latency_ns (500) later with completions (cut at MPS 256 and
// RCB 64), and its data is in one core cycle (5 ns) after the last
// completion's last byte, on a core edge (A-DMA-4). So a read of 28 bytes
// (the shadow table of 8 QPs) takes edge(1523 + 500000 + 3301) + 5000 =
// 510000 ps and one of 256 bytes (a QP context) edge(1523 + 500000 +
// 17773) + 5000 = 525000 ps.
//
// Shadow doorbells (X-SHADOW-DB-1..3): reads start at multiples of P, one in
// flight (every S = P max(1, ceil(D / P))); a doorbell stored at t is taken
// by the first read issued after t, D later, and the QP manager fetches the
// WQE doorbell_cycles (2) after that. QP-context cache (X-QPC-CACHE-1..3):
// with K >= the active QPs the run is PG332's to the picosecond; with K = 1
// and two QPs alternating, every lookup but the first misses, and each miss
// is the 256-byte read, the write-back's 4 W beats and 1 install cycle.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

constexpr uint64_t kPer = 5000;  // core period at 200 MHz (ps)
uint64_t edge(uint64_t t) { return (t + kPer - 1) / kPer * kPer; }
uint64_t tlp(uint64_t n) { return uint64_t(std::llround(double(n + 24) * 1000.0 / (16 * 8 * 128.0 / 130 / 8))); }
// One request, one completion of n bytes (n <= 256, not crossing an RCB boundary but at its end).
uint64_t read_ps(uint64_t n) { return edge(tlp(0) + 500000 + tlp(n)) + kPer; }

struct SimRun {
  json rep;
  std::vector<json> log;
  std::string out;
};

SimRun run(const fs::path& dir, const std::string& name, const std::string& yaml) {
  write_text(dir / (name + ".yaml"), yaml);
  SimRun r;
  const SimResult s = run_sim(dir, {"run", name + ".yaml", "--json", name + ".json", "--log", name + ".jsonl"});
  EXPECT_EQ(s.exit_code, 0) << s.out << s.err;
  r.out = s.out + s.err;
  r.rep = json::parse(read_text(dir / (name + ".json")), nullptr, false);
  std::istringstream in(read_text(dir / (name + ".jsonl")));
  for (std::string line; std::getline(in, line);) r.log.push_back(json::parse(line));
  return r;
}

std::vector<json> records(const SimRun& r, const std::string& node, const std::string& kind,
                          const std::function<bool(const json&)>& keep = nullptr) {
  std::vector<json> v;
  for (const auto& o : r.log)
    if (o.value("node", "") == node && o.value("kind", "") == kind && (!keep || keep(o))) v.push_back(o);
  return v;
}

std::vector<std::string> ext_ids(const json& rep) {
  std::vector<std::string> v;
  for (const auto& a : rep["assumptions"])
    if (a["id"].get<std::string>().rfind("X-", 0) == 0) v.push_back(a["id"]);
  return v;
}

uint64_t step_start(const json& rep, const std::string& kind, size_t nth = 0) {
  for (const auto& s : rep["steps"])
    if (s["step"] == kind && nth-- == 0) return s["start_ps"];
  ADD_FAILURE() << "no step " << kind;
  return 0;
}

std::string nodes(const std::string& a_ext, const std::string& b_ext) {
  return "nodes:\n  A: { mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1" + a_ext + " }\n  B: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2" +
         b_ext + " }\n";
}

// One 64-byte WRITE on an idle system, 3 us after the connection is up.
std::string one_write(const std::string& name, const std::string& a_ext) {
  return "scenario: " + name +
         "\nseed: 1\nlimits: { sim_time_us: 2000, watchdog_us: 200 }\npcie: { gen: 3, lanes: 16, mps: 256, mrrs: 512 }\n" +
         nodes(a_ext, "") +
         "steps:\n  - init: [A, B]\n  - register_mr: { node: A, name: a, length: 4096 }\n"
         "  - register_mr: { node: B, name: b, length: 4096 }\n  - fill: { node: A, mr: a, pattern: random }\n"
         "  - connect: { name: c, client: A, server: B, client_mr: a, server_mr: b, client_qp: 2, server_qp: 2 }\n"
         "  - wait: { us: 3 }\n"
         "  - post: { conn: c, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: a, length: 64 } ] }\n"
         "  - wait_completions: { conn: c, node: A, count: 1 }\n"
         "  - check_memory: { node: B, mr: b, length: 64, equals: { node: A, mr: a } }\n";
}

bool is_shadow_read(const json& o) { return o["master"] == "shadow_db_m_axi" && o["op"] == "read"; }

TEST(ShadowDoorbell, FirstFrameWithinTheBoundIdleNic) {
  const fs::path dir = test_dir();
  const uint64_t P = 2000000;  // 2 us, a multiple of the core period
  const SimRun m = run(dir, "mmio", one_write("mmio", ""));
  const SimRun s = run(dir, "shadow", one_write("shadow", ", extensions: { shadow_doorbell: { poll_ns: 2000 } }"));
  const uint64_t D = read_ps(28);
  ASSERT_EQ(D, 510000u);
  // The driver rings QP 2 by MMIO in PG332's mode only; QP1 (CM) in both.
  auto sqpi2 = [](const json& o) { return o["op"] == "write" && o["name"] == "SQPIi[2]"; };
  EXPECT_EQ(records(m, "A", "reg", sqpi2).size(), 1u);
  EXPECT_EQ(records(s, "A", "reg", sqpi2).size(), 0u);
  EXPECT_FALSE(records(s, "A", "reg", [](const json& o) { return o["name"] == "SQPIi[1]"; }).empty());
  // Polls: at multiples of P, P apart (P > D: one read in flight never delays the next).
  const auto reads = records(s, "A", "dma", is_shadow_read);
  ASSERT_GE(reads.size(), 3u);
  for (size_t k = 0; k < reads.size(); ++k) {
    EXPECT_EQ(reads[k]["t_ps"].get<uint64_t>() % P, 0u) << reads[k];
    EXPECT_EQ(reads[k]["len"], 28) << "entries of QPs 2..8";
    if (k) {
      EXPECT_EQ(reads[k]["t_ps"].get<uint64_t>() - reads[k - 1]["t_ps"].get<uint64_t>(), P);
    }
  }
  // The doorbell: taken by the first read issued after the post, D later.
  const uint64_t t_post = step_start(s.rep, "post");
  const uint64_t issue = (t_post / P + 1) * P;
  ASSERT_NE(t_post % P, 0u) << "the post coincides with a poll: pick another wait";
  const auto db = records(s, "A", "state", [](const json& o) { return o["what"] == "shadow_sq_pi"; });
  ASSERT_EQ(db.size(), 1u);
  EXPECT_EQ(db[0]["qp"], 2);
  EXPECT_EQ(db[0]["value"], "1");
  const uint64_t t_db = db[0]["t_ps"];
  EXPECT_EQ(t_db, issue + D);
  // The QP manager sees it doorbell_cycles (2) later and fetches the WQE.
  auto wqe2 = [](const json& o) { return o["master"] == "qp_mgr_m_axi" && o.value("qp", 0) == 2; };
  const auto fetch_s = records(s, "A", "dma", wqe2), fetch_m = records(m, "A", "dma", wqe2);
  ASSERT_EQ(fetch_s.size(), 1u);
  ASSERT_EQ(fetch_m.size(), 1u);
  EXPECT_EQ(fetch_s[0]["t_ps"].get<uint64_t>(), t_db + 2 * kPer);
  // From the WQE fetch on the path is PG332's: the frame leaves as long
  // after it as in the MMIO run, but for the CMAC clock's phase (3103 ps).
  auto tx2 = [](const json& o) { return o["dir"] == "tx" && o.value("qp", 0) == 2; };
  const auto fr_s = records(s, "A", "frame", tx2), fr_m = records(m, "A", "frame", tx2);
  ASSERT_FALSE(fr_s.empty());
  ASSERT_FALSE(fr_m.empty());
  const int64_t path_s = fr_s[0]["t_ps"].get<int64_t>() - fetch_s[0]["t_ps"].get<int64_t>();
  const int64_t path_m = fr_m[0]["t_ps"].get<int64_t>() - fetch_m[0]["t_ps"].get<int64_t>();
  EXPECT_LT(std::abs(path_s - path_m), int64_t(kCmacPeriodPs));
  // The documented bound (X-SHADOW-DB-2): post + S + D + 1 cycle + 2 cycles, then that path.
  EXPECT_LE(fr_s[0]["t_ps"].get<uint64_t>(), t_post + P + D + 3 * kPer + uint64_t(path_m) + kCmacPeriodPs);
  // The report: the extension's counters and assumptions, in this run only.
  const json& sd = s.rep["nodes"]["A"]["shadow_doorbell"];
  EXPECT_EQ(sd["poll_ns"], 2000);
  EXPECT_EQ(sd["bytes_per_poll"], 28);
  EXPECT_EQ(sd["polls"], reads.size());
  EXPECT_EQ(sd["doorbells"], 1);
  EXPECT_FALSE(sd.contains("zero_writes"));
  EXPECT_TRUE(records(s, "A", "dma", [](const json& o) { return o["master"] == "shadow_db_m_axi" && o["op"] != "read"; })
                  .empty())
      << "the table is the driver's: the NIC only reads it (X-SHADOW-DB-3)";
  EXPECT_EQ(sd["bytes_read"].get<uint64_t>() % 28, 0u);
  EXPECT_EQ(ext_ids(s.rep), (std::vector<std::string>{"X-SHADOW-DB-1", "X-SHADOW-DB-2", "X-SHADOW-DB-3"}));
  EXPECT_TRUE(ext_ids(m.rep).empty());
  EXPECT_FALSE(m.rep["nodes"]["A"].contains("shadow_doorbell"));
  EXPECT_NE(s.out.find("shadow_doorbell (extension)"), std::string::npos) << s.out;
}

// A connection without CM: the driver enables QP 2 and posts at once, its
// doorbell stored in the table before the enable's MMIO write has even
// reached the NIC. The NIC must take it (it used to zero the entry by DMA
// at the enable, after the driver's store: the WRITE never left and the
// run timed out).
TEST(ShadowDoorbell, PostRightAfterTheEnableIsTaken) {
  const fs::path dir = test_dir();
  std::string y = one_write("nocm", ", extensions: { shadow_doorbell: { poll_ns: 500 } }");
  const std::string cm = "client_qp: 2, server_qp: 2 }", wait = "  - wait: { us: 3 }\n";
  y.replace(y.find(cm), cm.size(), "client_qp: 2, server_qp: 2, cm: false }");
  y.erase(y.find(wait), wait.size());
  const SimRun s = run(dir, "nocm", y);
  ASSERT_EQ(s.rep["exit_code"], 0) << s.out;
  // The post is the first thing after the connection: the QP's enable
  // reaches the NIC 250 ns (the MMIO write latency) after it was written,
  // the doorbell was stored before that.
  const uint64_t t_post = step_start(s.rep, "post");
  auto en2 = [](const json& o) { return o["op"] == "write" && o["name"] == "QPCONFi[2]"; };
  const auto en = records(s, "A", "reg", en2);
  ASSERT_FALSE(en.empty());
  EXPECT_GE(en.back()["t_ps"].get<uint64_t>(), t_post) << "the enable lands after the doorbell's store";
  const auto db = records(s, "A", "state", [](const json& o) { return o["what"] == "shadow_sq_pi"; });
  ASSERT_EQ(db.size(), 1u);
  EXPECT_EQ(db[0]["qp"], 2);
  EXPECT_EQ(db[0]["value"], "1");
  EXPECT_GT(db[0]["t_ps"].get<uint64_t>(), en.back()["t_ps"].get<uint64_t>());
  EXPECT_EQ(s.rep["nodes"]["A"]["shadow_doorbell"]["doorbells"], 1);
}

// A QPN reused by the QP-setup block: the old connection left 3 in QP 2's
// entry. The block enables QP 2 itself (not through the driver), so the
// entry must be 0 by then: zeroed when the driver deleted the QP and when
// the block's driver issued the create. It used to ring 3 stale WQEs.
TEST(ShadowDoorbell, QpNumberReusedByTheSetupBlockDoesNotRing) {
  const fs::path dir = test_dir();
  const std::string y =
      "scenario: reuse\nseed: 1\nlimits: { sim_time_us: 500 }\n" +
      nodes(", qp_setup_fsm: { pool: 2 }, extensions: { shadow_doorbell: { poll_ns: 500 } }", "") +
      "steps:\n  - init: [A, B]\n  - register_mr: { node: A, name: src, length: 4096 }\n"
      "  - register_mr: { node: B, name: dst, length: 4096 }\n"
      "  - connect: { name: c0, client: A, server: B, client_mr: src, server_mr: dst, client_qp: 2, server_qp: 2 }\n"
      "  - post: { conn: c0, node: A, repeat: 3, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 64 } ] }\n"
      "  - wait_completions: { conn: c0, node: A, count: 3 }\n"
      "  - disconnect: { conn: c0, node: A }\n"
      "  - qp_setup: { node: A, qp: 2, remote: B, remote_qp: 3, psn: 0x100, remote_psn: 0x200 }\n"
      "  - expect_idle: { us: 5 }\n";
  const SimRun s = run(dir, "reuse", y);
  ASSERT_EQ(s.rep["exit_code"], 0) << s.out;
  const auto db = records(s, "A", "state", [](const json& o) { return o["what"] == "shadow_sq_pi"; });
  const uint64_t t_setup = step_start(s.rep, "qp_setup");
  for (const auto& d : db) EXPECT_LT(d["t_ps"].get<uint64_t>(), t_setup) << d;
  EXPECT_EQ(db.size(), 1u) << "the three WRITEs' one doorbell (repeat: one post, one doorbell)";
}

// hw_handshake right after a post: the QP is idle only once the NIC has
// taken the shadow doorbell (SQPIi = the driver's producer index), not
// while SQPIi still reads 0 because no poll has come yet (20 us apart).
TEST(ShadowDoorbell, SwitchToHwHandshakeWaitsForTheShadowDoorbell) {
  const fs::path dir = test_dir();
  const std::string y =
      "scenario: switch\nseed: 3\nlimits: { sim_time_us: 3000 }\n" +
      nodes(", extensions: { shadow_doorbell: { poll_ns: 20000 } }", "") +
      "steps:\n  - init: [A, B]\n  - register_mr: { node: A, name: src, length: 4096 }\n"
      "  - register_mr: { node: B, name: dst, length: 4096 }\n"
      "  - connect: { name: c1, client: A, server: B, client_mr: src, server_mr: dst, client_qp: 2, server_qp: 2 }\n"
      "  - post: { conn: c1, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 64 } ] }\n"
      "  - hw_handshake: { conn: c1, node: A }\n"
      "  - wait_completions: { conn: c1, node: A, count: 1 }\n";
  const SimRun s = run(dir, "switch", y);
  ASSERT_EQ(s.rep["exit_code"], 0) << s.out;
  const auto db = records(s, "A", "state", [](const json& o) { return o["what"] == "shadow_sq_pi"; });
  ASSERT_EQ(db.size(), 1u);
  EXPECT_EQ(db[0]["t_ps"].get<uint64_t>() % 20000000u, 510000u) << "taken by a poll (every 20 us), D = 510 ns later";
  uint64_t switch_end = 0;
  for (const auto& st : s.rep["steps"])
    if (st["step"] == "hw_handshake") switch_end = st["end_ps"];
  EXPECT_GT(switch_end, db[0]["t_ps"].get<uint64_t>());
}

TEST(ShadowDoorbell, PollingFasterThanAReadIsOneReadInFlight) {
  const fs::path dir = test_dir();
  const SimRun s = run(dir, "fast", one_write("fast", ", extensions: { shadow_doorbell: { poll_ns: 100 } }"));
  const auto reads = records(s, "A", "dma", is_shadow_read);
  ASSERT_GE(reads.size(), 3u);
  // S = 100 ns x ceil(510 / 100) = 600 ns: the first multiple of 100 ns after the last read ended.
  for (size_t k = 1; k < reads.size(); ++k)
    EXPECT_EQ(reads[k]["t_ps"].get<uint64_t>() - reads[k - 1]["t_ps"].get<uint64_t>(), 600000u) << k;
}

// QP-context cache scenarios: three QPs, messages alternating between them
// one at a time, then a burst of 8 on each posted at once.
std::string qpc_traffic(const std::string& name, const std::string& ext_a, const std::string& ext_b) {
  std::string y = "scenario: " + name +
                  "\nseed: 1\nlimits: { sim_time_us: 3000, watchdog_us: 200 }\npcie: { gen: 3, lanes: 16, mps: 256, "
                  "mrrs: 512 }\n" +
                  nodes(ext_a, ext_b) +
                  "steps:\n  - init: [A, B]\n  - register_mr: { node: A, name: a, length: 4096 }\n"
                  "  - register_mr: { node: B, name: b, length: 4096 }\n  - fill: { node: A, mr: a, pattern: random }\n";
  for (int i = 1; i <= 3; ++i)
    y += fmt::format("  - connect: {{ name: c{0}, client: A, server: B, client_mr: a, server_mr: b, client_qp: {1}, "
                     "server_qp: {1} }}\n",
                     i, i + 1);
  for (int r = 0; r < 2; ++r)
    for (int i = 1; i <= 3; ++i)
      y += fmt::format("  - post: {{ conn: c{0}, node: A, wqes: [ {{ opcode: write, wr_id: {0}, local_mr: a, length: 64 }} ] }}\n"
                       "  - wait_completions: {{ conn: c{0}, node: A, count: 1 }}\n",
                       i);
  for (int i = 1; i <= 3; ++i)
    y += fmt::format("  - post: {{ conn: c{0}, node: A, repeat: 8, wqes: [ {{ opcode: write, wr_id: {0}, local_mr: a, length: 256 }} ] }}\n", i);
  for (int i = 1; i <= 3; ++i) y += fmt::format("  - wait_completions: {{ conn: c{0}, node: A, count: 8 }}\n", i);
  return y;
}

TEST(QpCtxCache, EntriesForEveryActiveQpIsPg332ToThePicosecond) {
  const fs::path dir = test_dir();
  const SimRun on = run(dir, "on_chip", qpc_traffic("on_chip", "", ""));
  const std::string ext = ", extensions: { qp_ctx_cache: { entries: 3 } }";
  const SimRun c = run(dir, "cache3", qpc_traffic("cache3", ext, ext));
  // Every frame and every DMA of the PG332 masters at the same time, both nodes.
  auto key = [](const SimRun& r) {
    std::vector<std::string> v;
    for (const auto& o : r.log) {
      const std::string k = o.value("kind", "");
      if (k == "frame" || k == "cqe" || (k == "dma" && o["master"] != "qp_ctx_m_axi")) {
        json x = o;
        x.erase("at");
        v.push_back(x.dump());
      }
    }
    return v;
  };
  const auto ko = key(on), kc = key(c);
  ASSERT_GT(ko.size(), 50u);
  EXPECT_EQ(ko, kc);
  EXPECT_EQ(on.rep["sim_time_ps"], c.rep["sim_time_ps"]);
  for (const char* n : {"A", "B"}) {
    const json& q = c.rep["nodes"][n]["qp_ctx_cache"];
    EXPECT_GT(q["lookups"].get<uint64_t>(), 0u) << n;
    EXPECT_EQ(q["hits"], q["lookups"]) << n;
    EXPECT_EQ(q["hit_rate"], 1.0) << n;
    EXPECT_EQ(q["fetches"], 0) << n;
    EXPECT_EQ(q["writebacks"], 0) << n;
    EXPECT_EQ(q["installs"], 3) << n << ": QPs 2..4 at their enable";
  }
  // B looks up once per request packet: 2 x 3 + 3 x 8 single-packet WRITEs.
  EXPECT_EQ(c.rep["nodes"]["B"]["qp_ctx_cache"]["by_use"]["rx"]["lookups"], 30);
  EXPECT_EQ(ext_ids(c.rep), (std::vector<std::string>{"X-QPC-CACHE-1", "X-QPC-CACHE-2", "X-QPC-CACHE-3"}));
  EXPECT_TRUE(ext_ids(on.rep).empty());
}

TEST(QpCtxCache, OneEntryTwoQpsAlternatingEveryLookupMisses) {
  const fs::path dir = test_dir();
  constexpr int kRounds = 4;
  std::string y =
      "scenario: ping_pong\nseed: 1\nlimits: { sim_time_us: 2000, watchdog_us: 200 }\n"
      "pcie: { gen: 3, lanes: 16, mps: 256, mrrs: 512 }\n" +
      nodes("", ", extensions: { qp_ctx_cache: { entries: 1 } }") +
      "steps:\n  - init: [A, B]\n  - register_mr: { node: A, name: a, length: 4096 }\n"
      "  - register_mr: { node: B, name: b, length: 4096 }\n  - fill: { node: A, mr: a, pattern: random }\n"
      "  - connect: { name: c1, client: A, server: B, client_mr: a, server_mr: b, client_qp: 2, server_qp: 2 }\n"
      "  - connect: { name: c2, client: A, server: B, client_mr: a, server_mr: b, client_qp: 3, server_qp: 3 }\n";
  for (int r = 0; r < kRounds; ++r)
    for (int i = 1; i <= 2; ++i)
      y += fmt::format("  - post: {{ conn: c{0}, node: A, wqes: [ {{ opcode: write, wr_id: {0}, local_mr: a, length: 64 }} ] }}\n"
                       "  - wait_completions: {{ conn: c{0}, node: A, count: 1 }}\n",
                       i);
  const SimRun c = run(dir, "ping_pong", y);
  // B's only lookups: one per WRITE (the RX handler), QPs 2, 3, 2, 3, ...
  // QP 2 was installed at its enable (the cache was empty), QP 3 found it
  // full: the first lookup hits, every later one misses and evicts the other.
  const uint64_t n = 2 * kRounds;
  const json& q = c.rep["nodes"]["B"]["qp_ctx_cache"];
  EXPECT_EQ(q["lookups"], n);
  EXPECT_EQ(q["hits"], 1);
  EXPECT_EQ(q["misses"], n - 1);
  EXPECT_EQ(q["merged"], 0);
  EXPECT_EQ(q["installs"], 1);
  EXPECT_EQ(q["fetches"], n - 1);
  EXPECT_EQ(q["writebacks"], n - 1);
  EXPECT_EQ(q["bytes_read"], (n - 1) * 256);
  EXPECT_EQ(q["bytes_written"], (n - 1) * 256);
  EXPECT_EQ(q["read_requests"], n - 1);
  EXPECT_EQ(q["read_completions"], n - 1);
  EXPECT_EQ(q["by_use"]["rx"]["misses"], n - 1);
  EXPECT_FALSE(c.rep["nodes"]["A"].contains("qp_ctx_cache"));
  // The DMA: a read of the missing QP's 256 bytes at 0xC0000 + 256 (n - 1),
  // the write-back of the other one read_ps(256) later, and the WRITE's
  // payload 4 W beats + 1 install cycle + the MR lookup's 2 cycles after that.
  const auto ctx = records(c, "B", "dma", [](const json& o) { return o["master"] == "qp_ctx_m_axi"; });
  const auto pay = records(c, "B", "dma", [](const json& o) { return o["master"] == "rx_pkt_hndler_ddr_m_axi" && o["len"] == 64; });
  ASSERT_EQ(ctx.size(), 2 * (n - 1));
  ASSERT_EQ(pay.size(), n);
  const uint64_t D = read_ps(256);
  ASSERT_EQ(D, 525000u);
  for (uint64_t k = 0; k + 1 < n; ++k) {
    const json& rd = ctx[2 * k];
    const json& wb = ctx[2 * k + 1];
    const uint32_t qp = 3 - k % 2, other = 5 - qp;  // 3, 2, 3, ...
    EXPECT_EQ(rd["op"], "read");
    EXPECT_EQ(rd["qp"], qp);
    EXPECT_EQ(rd["addr"], 0xC0000 + 256 * (qp - 1));
    EXPECT_EQ(wb["op"], "write");
    EXPECT_EQ(wb["qp"], other);
    EXPECT_EQ(wb["t_ps"].get<uint64_t>() - rd["t_ps"].get<uint64_t>(), D);
    EXPECT_EQ(pay[k + 1]["qp"], qp);
    EXPECT_EQ(pay[k + 1]["t_ps"].get<uint64_t>() - rd["t_ps"].get<uint64_t>(), D + 4 * kPer + kPer + 2 * kPer);
  }
}

TEST(Extensions, BadValuesExit2WithFileLineAndKey) {
  const fs::path dir = test_dir();
  struct Case {
    std::string ext, want;
  };
  const std::vector<Case> cases = {
      {"shadow_doorbell: { poll_ns: 5 }", "key 'nodes.A.extensions.shadow_doorbell.poll_ns': 5 is out of range [10, 10000000]"},
      {"shadow_doorbell: { poll_ns: 20000000 }", "key 'nodes.A.extensions.shadow_doorbell.poll_ns'"},
      {"qp_ctx_cache: { entries: 0 }", "key 'nodes.A.extensions.qp_ctx_cache.entries': 0 is out of range [1, 256]"},
      {"qp_ctx_cache: { entries: 257 }", "key 'nodes.A.extensions.qp_ctx_cache.entries'"},
      {"qp_ctx_cache: { context_bytes: 100 }", "context_bytes must be a multiple of 64"},
      {"qp_ctx_cache: { context_bytes: 2048 }", "is out of range [64, 1024]"},
      {"shadow_doorbel: {}", "unknown key 'shadow_doorbel' (did you mean 'shadow_doorbell'?)"},
      {"qp_ctx_cache: { size: 3 }", "key 'nodes.A.extensions.qp_ctx_cache.size': unknown key 'size'"},
  };
  for (const auto& c : cases) {
    const std::string y = "scenario: bad\nnodes:\n  A: { mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1,\n       extensions: { " +
                          c.ext + " } }\nsteps:\n  - init: [A]\n";
    write_text(dir / "bad.yaml", y);
    const SimResult r = run_sim(dir, {"run", "bad.yaml", "--quiet"});
    EXPECT_EQ(r.exit_code, 2) << c.ext;
    EXPECT_NE(r.err.find("bad.yaml:4:"), std::string::npos) << c.ext << ": " << r.err;
    EXPECT_NE(r.err.find(c.want), std::string::npos) << c.ext << ": " << r.err;
  }
  // A program's host has no built-in driver to write the doorbell copies.
  write_text(dir / "prog.yaml",
             "scenario: prog\nnodes:\n  A: { mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1, host: program,\n"
             "       extensions: { shadow_doorbell: { poll_ns: 500 } } }\nsteps:\n  - init: [A]\n");
  const SimResult r = run_sim(dir, {"run", "prog.yaml", "--quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("prog.yaml:4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shadow_doorbell needs the built-in driver"), std::string::npos) << r.err;
}

}  // namespace
