// tools: `ernic-sim bench`'s command line: its options on the app
// (add_bench_command), then their checks, each bad one a usage error
// (exit 2) naming it before anything runs, and the run: bench_main
// (tools/bench.h; with --scale, the scale table) or, with --profile pg332,
// bench_pg332_main (tools/bench_pg332.h).
#pragma once
#include <string>
#include <vector>

#include "tools/bench.h"
#include "tools/bench_pg332.h"

namespace CLI {
class App;
}

namespace ernic {

// "a,,b" -> {"a", "b"}: the comma-separated lists of the command line.
std::vector<std::string> split_csv(const std::string& csv);

struct BenchCli {
  BenchOptions bopt;
  BenchPg332Options pgopt;
  std::string ops = "write,read,send", sizes, datapaths = "rtl,model", profile;
  bool no_latency = false, no_speed = false;
  CLI::App* cmd = nullptr;  // the subcommand, once added
};
void add_bench_command(CLI::App& app, BenchCli& b);
// self: this binary's path (the runs are child processes of it).
int bench_cli_main(BenchCli& b, const std::string& self);

}  // namespace ernic
