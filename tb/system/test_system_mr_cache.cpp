// tb/system: the MR lookup of B's responder in a sweep of the CAM size N
// against K = 8 active QPs (scenarios/perf/mr_cache_sweep_*.yaml, written
// by gen_mr_cache_sweep.py): each QP sends 16 small (64 B) messages to its
// own MR; A's QP manager serves the QPs round robin, so B looks the 8 MRs
// up in strict round robin.
//
// Asserted, from each run's JSON (simulated time only, never wall clock):
//  - hit rate: every lookup after an MR's first use hits when N >= K (the
//    only misses are the K compulsory ones); no lookup ever hits when N < K
//    (LRU under strict round robin evicts each MR just before it is needed);
//  - message rate (messages / simulated time from the first post to the
//    last completion): READs, whose responder does the lookup and the
//    payload read in line, are slower for every N < K than for every
//    N >= K; PG332's register table is at least as fast as any CAM.
//    WRITEs are printed and must not get faster as the CAM thrashes; their
//    rate is bound today by A's requester (each WQE fetch and payload read
//    pays the DMA read latency in turn), which hides the responder's miss.
// The sweep table is printed (ctest --output-on-failure -V shows it).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using nlohmann::json;

constexpr uint32_t kK = 8, kM = 16;

struct Point {
  std::string op;
  std::optional<uint32_t> n;  // none: the register table
  uint64_t lookups = 0, hits = 0, misses = 0, compulsory = 0, capacity = 0;
  double hit_rate = 0, warm_hit_rate = 0;
  uint64_t window_ps = 0;     // first post .. last completion
  double mmsg_per_s = 0;      // messages per simulated microsecond
};

Point run_point(const fs::path& dir, const std::string& op, std::optional<uint32_t> n) {
  Point p;
  p.op = op;
  p.n = n;
  const std::string name = fmt::format("mr_cache_sweep_{}_{}", op, n ? fmt::format("n{}", *n) : "table");
  const fs::path scen = fs::path(kSourceDir) / "scenarios/perf" / (name + ".yaml");
  const SimResult r = run_sim(dir, {"run", scen.string(), "--json", name + ".json", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << name << ":\n" << r.out << r.err;
  const json j = json::parse(read_text(dir / (name + ".json")));
  const json& m = j["nodes"]["B"]["mr_lookup"];
  EXPECT_EQ(m["mode"], n ? "cam" : "table") << name;
  p.lookups = m["lookups"].get<uint64_t>();
  if (n) {
    EXPECT_EQ(m["entries"].get<uint32_t>(), *n);
    p.hits = m["hits"].get<uint64_t>();
    p.misses = m["misses"].get<uint64_t>();
    p.compulsory = m["compulsory_misses"].get<uint64_t>();
    p.capacity = m["capacity_misses"].get<uint64_t>();
    p.hit_rate = m["hit_rate"].get<double>();
    p.warm_hit_rate = m["warm_hit_rate"].get<double>();
  }
  uint64_t t0 = UINT64_MAX, t1 = 0;
  for (const auto& s : j["steps"]) {
    if (s["step"] == "post") t0 = std::min(t0, s["start_ps"].get<uint64_t>());
    if (s["step"] == "wait_completions") t1 = std::max(t1, s["end_ps"].get<uint64_t>());
  }
  EXPECT_LT(t0, t1) << name;
  p.window_ps = t1 - t0;
  p.mmsg_per_s = double(kK * kM) / (double(p.window_ps) * 1e-6);
  return p;
}

TEST(SystemMrCache, SweepHitRateAndMessageRate) {
  const fs::path dir = test_dir();
  const std::vector<std::optional<uint32_t>> ns = {std::nullopt, 4u, 7u, 8u, 9u, 16u};
  std::string table = fmt::format("MR-cache sweep: K = {} QPs, {} x 64 B messages each, round robin; B's MR lookup\n", kK, kM);
  table += fmt::format("{:<6} {:>6} {:>8} {:>6} {:>7} {:>11} {:>9} {:>9} {:>15} {:>11} {:>10}\n", "op", "N", "lookups",
                       "hits", "misses", "compulsory", "capacity", "hit rate", "warm hit rate", "window us",
                       "Mmsg/s");
  std::map<std::string, std::vector<Point>> pts;
  for (const std::string op : {"write", "read"})
    for (const auto& n : ns) {
      const Point p = run_point(dir, op, n);
      pts[op].push_back(p);
      table += fmt::format("{:<6} {:>6} {:>8} {:>6} {:>7} {:>11} {:>9} {:>9} {:>15} {:>11.3f} {:>10.3f}\n", op,
                           n ? std::to_string(*n) : "table", p.lookups, n ? std::to_string(p.hits) : "-",
                           n ? std::to_string(p.misses) : "0", n ? std::to_string(p.compulsory) : "-",
                           n ? std::to_string(p.capacity) : "-",
                           n ? fmt::format("{:.1f}%", 100 * p.hit_rate) : "100%",
                           n ? fmt::format("{:.1f}%", 100 * p.warm_hit_rate) : "100%", p.window_ps / 1e6,
                           p.mmsg_per_s);
    }
  std::cout << table;
  ::testing::Test::RecordProperty("sweep", table);

  for (const auto& [op, v] : pts) {
    double slowest_fit = 1e300, fastest_thrash = 0, table_rate = 0;
    for (const Point& p : v) {
      const std::string at = fmt::format("{} N={}", op, p.n ? std::to_string(*p.n) : "table");
      EXPECT_EQ(p.lookups, kK * kM) << at << ": one RETH lookup per message";
      if (!p.n) {
        table_rate = p.mmsg_per_s;
        continue;
      }
      EXPECT_EQ(p.compulsory, kK) << at << ": each MR's first use misses";
      if (*p.n >= kK) {
        EXPECT_EQ(p.hits, kK * kM - kK) << at;
        EXPECT_EQ(p.capacity, 0u) << at;
        EXPECT_DOUBLE_EQ(p.warm_hit_rate, 1.0) << at << ": 100% once each MR has been used";
        slowest_fit = std::min(slowest_fit, p.mmsg_per_s);
      } else {
        EXPECT_EQ(p.hits, 0u) << at << ": LRU under strict round robin never hits";
        EXPECT_EQ(p.warm_hit_rate, 0.0) << at;
        EXPECT_LT(p.hit_rate, 1.0) << at;
        fastest_thrash = std::max(fastest_thrash, p.mmsg_per_s);
      }
      EXPECT_LE(p.mmsg_per_s, table_rate * (1 + 1e-9)) << at << ": the register table never misses";
    }
    if (op == "read") {
      EXPECT_LT(fastest_thrash, slowest_fit) << "READ message rate must fall when N < K";
      EXPECT_LT(fastest_thrash, 0.75 * slowest_fit) << "a miss costs a DMA read round trip per message";
    } else {
      EXPECT_LE(fastest_thrash, slowest_fit) << "WRITE message rate must not rise when N < K";
    }
  }
}

}  // namespace
