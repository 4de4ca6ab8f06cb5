// tools/bench: `ernic-sim bench`, perftest's ib_write_bw / ib_read_bw /
// ib_send_bw (and ib_write_lat's one-way figure) in simulated time.
//
// For each operation it writes one scenario (the named configuration: two
// nodes on a 100G link, PCIe Gen3 x16 with MPS 256 and MRRS 512, PMTU
// 4096, a 200 MHz core clock, one RC connection) with one phase per
// message size: `post` of N messages, then `wait_completions` of all N.
// It runs the scenario with this same binary (`run --log --json`) and
// reads the transaction log:
//   BW average = N x size x 8 / (last CQE - start of the post)  [Gb/s]
//   BW peak    = (N - 1) x size x 8 / (last CQE - first CQE)     [Gb/s]
//   MsgRate    = N / (last CQE - start of the post)              [Mpps]
// all in simulated time (deterministic: the same every run). Latency: 64-B
// WRITEs one at a time; one-way = the requester's SQPIi doorbell write
// (AXI4-Lite handshake) to the responder's DMA write of the 64 bytes into
// its memory. Simulation speed: simulated core cycles per wall second of
// every operation's run (streaming) and of an idle-heavy run (20 ms of a
// quiet link around one WRITE), each run once per datapath of `datapaths`
// (`run --datapath`: the Verilated RTL, the C++ reference models), printed
// as a table: one row per run, one column per datapath and the ratio of
// the first two. The tables and bench.csv come from the first datapath's
// runs; the others' simulated figures are compared with them (one line:
// the same, or the largest BW-average difference). bench.csv holds the
// simulated figures only (identical on every run); the wall-clock speed
// goes to speed.csv beside it (run,datapath,sim_core_cycles_per_wall_second).
// With the speed runs and iverilog installed, the table also has `replay`:
// the RTL datapath alone replaying a recorded WRITE stream under Verilator +
// SystemC and under Icarus (tools/icarus_compare.h; rows replay,verilator
// and replay,icarus in speed.csv); without iverilog one line says so.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ernic {

struct BenchOptions {
  std::vector<std::string> ops{"write", "read", "send"};
  std::vector<uint64_t> sizes;       // empty: 64 B .. 1 MiB, powers of two
  uint64_t bytes_per_size = 4u << 20;  // N = clamp(bytes_per_size / size, min_iters, max_iters)
  uint32_t min_iters = 32, max_iters = 1000;
  uint32_t lat_iters = 16;
  bool latency = true;
  bool speed = true;                 // false: only datapaths[0]'s runs, no idle-heavy run
  uint64_t icarus_bytes = 65536;     // with speed: the RTL alone under Verilator and Icarus on this WRITE
                                     // stream (tools/icarus_compare.h); 0: none
  std::vector<std::string> datapaths{"rtl", "model"};  // `run --datapath` values; [0] gives bench.csv
  std::string out_dir = "bench";     // scenarios, logs, reports and the CSV
  std::string csv;                   // default: <out_dir>/bench.csv
  bool scale = false;                // --scale: only the QP-count table (tools/bench_scale.h)
  uint64_t scale_bytes = 16u << 20;  // its WRITE traffic per case
};

// Prints the tables on stdout; returns 0, or 1 when a run failed.
int bench_main(const BenchOptions& opt, const std::string& self_exe);

// The machine's SystemC floor (tools/floor.h) from `self floor` children in
// dir, the best of `tries` (cycles per wall second); 0 when it failed.
double bench_measure_floor(const std::string& self_exe, const std::string& dir, int tries);

// bench's scenario generator and log reader, shared with `ernic-sim
// experiment` (tools/experiment.h), which runs the same scenarios in other
// PCIe configurations and draws them.
struct BenchPhase {
  uint64_t size = 0;
  uint32_t iters = 0;
};
struct BenchResult {
  std::string op;
  uint64_t size = 0;
  uint32_t iters = 0;
  double bw_avg = 0, bw_peak = 0, mpps = 0, us = 0;  // Gb/s, Gb/s, Mpps, us (simulated)
};
struct BenchLogScan {
  std::vector<uint64_t> post_start, wait_end;  // requester steps, in order
  std::vector<uint64_t> cqe_a;                 // A's CQEs on QP 2
  std::vector<uint64_t> db_a;                  // A's SQPIi[2] writes
  std::vector<uint64_t> land_b64;              // B's 64-byte payload writes (rx_pkt_hndler_ddr_m_axi)
};
struct BenchPcie {  // the scenario's pcie block; bench itself uses the defaults (the named configuration)
  uint32_t gen = 3, lanes = 16, mps = 256, mrrs = 512;
};
// The scenario bench writes for one operation: one post + wait_completions
// phase per entry of phases (SEND: with B's recv in parallel), then, with
// latency, lat_iters 64-byte WRITEs one at a time.
std::string bench_scenario_text(const std::string& op, const std::vector<BenchPhase>& phases, uint64_t max_size,
                                bool latency, uint32_t lat_iters, const BenchPcie& pcie = BenchPcie{});
// The records bench measures, from a run's --log (JSON lines).
BenchLogScan bench_scan_log(const std::string& log);
// BW average / peak and message rate per phase, as bench prints them;
// false (with a message on stderr) when the log lacks a phase.
bool bench_compute_results(const std::string& op, const std::vector<BenchPhase>& phases, const BenchLogScan& s,
                           const std::string& file, std::vector<BenchResult>* out);

}  // namespace ernic
