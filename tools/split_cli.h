// tools/split_cli: the command line of split runs (model/system/split.h):
// the `node` subcommand (one node of a scenario in this process) and
// `run --split` (every node in its own process, tools/split_run.h).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "model/system/system.h"

namespace ernic {

// The run's own variables the options fill (shared with `run`).
struct SplitCli {
  std::string* scenario = nullptr;
  RunOptions* opt = nullptr;
  std::string *json = nullptr, *log = nullptr, *datapath = nullptr, *handshake = nullptr;
  bool *quiet = nullptr, *no_idle_skip = nullptr;
  CLI::App* node = nullptr;  // set by add_split_cli
  CLI::Option* handshake_opt = nullptr;  // node's --handshake-random (parsed as run's)
  bool split = false;        // run --split
  std::string transport = "unix";  // --split-transport unix|tcp
  uint32_t chaos_us = 0;           // --split-chaos-us (test only)
};

// Adds `node` to app and `--split` to run.
void add_split_cli(CLI::App& app, CLI::App& run, SplitCli& c);
// After parsing: a usage error of `node` ("" = none).
std::string split_cli_error(const SplitCli& c);
// `run --split`: exit code (2 when an option is one process's only:
// one_process_only names them, "" = none given).
int run_split_main(const SplitCli& c, const std::string& self, const std::string& one_process_only);

}  // namespace ernic
