// tools/experiment: `ernic-sim experiment NAME... | all | --list`, the seed
// articles' performance claims (/work/shared/seeds, issue 19) as sweeps on
// the model, drawn and judged.
//
// For each named experiment it generates the sweep's scenarios (the
// language of scenarios/README.md; bench's generator, tools/bench.h, where
// the sweep is bench's measurement in another configuration), runs each in
// its own `ernic-sim run --quiet --json [--log]` process (--jobs at a time,
// as regress does), reads the figures from the reports and logs (simulated
// time only), and writes
//   DIR/NAME.csv   the sweep, simulated figures only: identical bytes on
//                  every run and every machine;
//   DIR/NAME.png   the plot, drawn from the CSV by tools/plot_experiment.py
//                  (matplotlib, Debian's python3-matplotlib): axes with
//                  units, the model's curves, the seed's claim as a reference
//                  line or point, the wire / PCIe limit where it applies;
//   DIR/report.md, DIR/report.html  per experiment: the claim quoted with
//                  its seed (file, original words and a translation), the
//                  configuration, the result, a verdict (confirmed, refuted,
//                  depends, baseline) and the mechanism in the model behind
//                  it; then the experiments not built yet, with why.
// The report is made from the CSVs only (no dates, no wall-clock figures),
// so it too is the same on every run.
//
// Options: --jobs N (child runs at a time, default 2), --out DIR (default
// experiments/), --size quick|full (default full; quick: a few points
// each, for the test suite), --keep (keep the generated scenarios, logs
// and reports under DIR/work/; removed otherwise). A progress line (runs
// done / total, elapsed, ETA) is drawn on a terminal only.
//
// Exit: 0 every run passed and every file was written; 1 a run failed or a
// file could not be made (the others are still written); 2 bad usage.
#pragma once

namespace ernic::experiment {

// argv[0] is "experiment".
int main(int argc, char** argv);

}  // namespace ernic::experiment
