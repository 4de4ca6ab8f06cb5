// tools/failure_report: what `ernic-sim run` prints on stderr when a run
// does not pass (exit 1 or 3), so that a failure can be understood and
// rerun from the log of a CI job alone:
//
//   ernic-sim: FILE: RESULT
//     FAILED at T us (core cycle C), FILE:LINE:COL: WHAT     } with --quiet only (the
//     MODEL ERROR WHERE: WHAT                                 } summary on stdout has
//     last frames A->B: / B->A: (the last 6 of each direction) } them otherwise)
//     stalled NODE QP...                                      }
//     pcap: F (+ per-tap files beside it)     the files the run left, as given
//     vcd:  F (GTKWave: gtkwave F.gtkw)
//     json: F
//     log:  F (timeline: ernic-sim log F)
//     seed: S (the scenario's `seed`; the same file and seed rerun the same simulation)
//     repro: cd DIR && BINARY ARGS...          the exact command line, shell-quoted
//
// Every line comes from the run's JSON report (model/system/report.h) and
// the command line; nothing else is consulted.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ernic {

struct FailureFiles {
  std::string pcap, vcd, json, log;
};

// argv: the command line as typed (argv[0] as given); self_exe and cwd make
// the repro line (self_exe replaces argv[0] when not empty; no "cd" when cwd
// is empty). details: also the FAILED / MODEL ERROR / last frames / stalled
// lines (when the summary was not printed).
std::string failure_report(const nlohmann::json& report, const std::string& scenario_path, const FailureFiles& files,
                           const std::vector<std::string>& argv, const std::string& self_exe, const std::string& cwd,
                           bool details);

// One argument quoted for a POSIX shell (unchanged when it needs no quotes).
std::string shell_quote_arg(const std::string& s);

}  // namespace ernic
