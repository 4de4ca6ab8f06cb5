// tools: `ernic-sim bench`'s command line (see bench_cli.h).
#include "tools/bench_cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "model/datapath/sc/datapath.h"

namespace ernic {

std::vector<std::string> split_csv(const std::string& csv) {
  std::vector<std::string> v;
  std::stringstream ss(csv);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) v.push_back(item);
  return v;
}

void add_bench_command(CLI::App& app, BenchCli& b) {
  b.cmd = app.add_subcommand("bench",
                             "perftest-style bandwidth, message rate and latency by message size, in simulated time");
  b.cmd->add_option("--op", b.ops, "operations: write,read,send (comma-separated)");
  b.cmd->add_option("--sizes", b.sizes, "message sizes in bytes (comma-separated; default 64..1048576, powers of two)");
  b.cmd->add_option("--bytes-per-size", b.bopt.bytes_per_size, "bytes moved per size (iterations = this / size)");
  b.cmd->add_option("--min-iters", b.bopt.min_iters, "at least this many messages per size");
  b.cmd->add_option("--max-iters", b.bopt.max_iters, "at most this many messages per size");
  b.cmd->add_option("--out", b.bopt.out_dir, "directory for the generated scenarios, logs and reports");
  b.cmd->add_option("--csv", b.bopt.csv, "CSV file (default: <out>/bench.csv)");
  b.cmd->add_flag("--no-latency", b.no_latency, "skip the 64-byte latency phase");
  b.cmd
      ->add_option("--icarus-bytes", b.bopt.icarus_bytes,
                   "with the speed runs: the RTL datapath alone replaying a recorded WRITE stream of this many bytes "
                   "under Verilator + SystemC and under Icarus (default 65536; 0: none; ernic-sim icarus)")
      ->check(CLI::Range(uint64_t(0), uint64_t(64) << 20));
  b.cmd->add_flag("--scale", b.bopt.scale,
                  "only the scale table: wall seconds per simulated ms of line-rate WRITE traffic and max RSS with "
                  "1, 8, 64, 255 active QPs and 255 connected / 1 active, per --speed-datapaths datapath (scale.csv)");
  b.cmd->add_option("--scale-bytes", b.bopt.scale_bytes, "--scale: WRITE traffic per case in bytes (default 16 MiB)")
      ->check(CLI::Range(uint64_t(65536), uint64_t(1) << 34));
  b.cmd->add_flag("--no-speed", b.no_speed,
                  "skip the speed runs: no idle-heavy run, and only the first --speed-datapaths datapath");
  b.cmd->add_option(
      "--speed-datapaths", b.datapaths,
      "datapaths to run each run with, side by side (comma-separated: rtl, model, user:<name>; the first gives "
      "bench.csv)");
  b.cmd
      ->add_option("--profile", b.profile,
                   "pg332: PG332's reference set-up against the ideal IBTA peer (16 KiB, PMTU 4096, 100G), "
                   "--max-iters messages per figure")
      ->check(CLI::IsMember({"pg332"}));
  b.cmd->add_option("--peer-latency-ns", b.pgopt.peer_latency_ns, "--profile pg332: the peer's answer latency")
      ->check(CLI::Range(uint64_t(0), uint64_t(1000000000)));
}

int bench_cli_main(BenchCli& b, const std::string& self) {
  b.bopt.ops = split_csv(b.ops);
  for (const auto& o : b.bopt.ops)
    if (o != "write" && o != "read" && o != "send") {
      std::fprintf(stderr, "ernic-sim bench: --op %s: not one of write, read, send\n", o.c_str());
      return 2;
    }
  for (const auto& s : split_csv(b.sizes)) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
    if (!end || *end || v == 0 || v > (8ull << 20)) {
      std::fprintf(stderr, "ernic-sim bench: --sizes %s: a size is 1..8388608 bytes\n", s.c_str());
      return 2;
    }
    b.bopt.sizes.push_back(v);
  }
  if (b.profile.empty() ? b.bopt.min_iters == 0 || b.bopt.max_iters < b.bopt.min_iters : b.bopt.max_iters == 0) {
    std::fprintf(stderr, b.profile.empty() ? "ernic-sim bench: need 1 <= --min-iters <= --max-iters\n"
                                           : "ernic-sim bench: --profile: need --max-iters >= 1\n");
    return 2;
  }
  b.bopt.datapaths = split_csv(b.datapaths);
  if (b.bopt.datapaths.empty()) {
    std::fprintf(stderr, "ernic-sim bench: --speed-datapaths: name at least one of rtl, model\n");
    return 2;
  }
  for (size_t i = 0; i < b.bopt.datapaths.size(); ++i) {
    const std::string& d = b.bopt.datapaths[i];
    if (!datapath_registered(d)) {  // rtl, model, user:<name>
      std::fprintf(stderr, "ernic-sim bench: --speed-datapaths %s: %s\n", d.c_str(),
                   unknown_datapath_message(d).c_str());
      return 2;
    }
    for (size_t k = 0; k < i; ++k)
      if (b.bopt.datapaths[k] == d) {
        std::fprintf(stderr, "ernic-sim bench: --speed-datapaths: %s twice\n", d.c_str());
        return 2;
      }
  }
  b.bopt.latency = !b.no_latency;
  b.bopt.speed = !b.no_speed;
  if (b.profile == "pg332") {  // tools/bench_pg332.h; the options checked above first
    b.pgopt.out_dir = b.bopt.out_dir;
    b.pgopt.iterations = b.bopt.max_iters;
    b.pgopt.datapath = b.bopt.datapaths[0];
    return bench_pg332_main(b.pgopt, self);
  }
  return bench_main(b.bopt, self);
}

}  // namespace ernic
