// model/system: one simulated system built from a scenario, and the runner
// that executes the scenario's steps in it.
//
// Topology (design.md): each node = host memory + host driver + ERNIC model
// (with the Verilated rtl/icrc in its TX datapath) + CMAC; two nodes are
// joined by a wire (one per direction) with the scenario's delay. Clock
// domains: core (scenario clocks.core_mhz) and CMAC (clocks.cmac_mhz).
// Hierarchy names (VCD scopes, SystemC names): top.<node>.{ernic,cmac,
// driver,axil}, RTL under top.<node>.ernic.tx_icrc.icrc.
//
// Exit codes of a run: 0 pass, 1 an expectation failed (or the model
// reported an internal error), 3 no progress (watchdog) or the simulated
// time limit was reached. (2, a bad scenario file or usage, is decided
// before a System exists.)
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/ernic/ernic.h"
#include "model/host/driver.h"
#include "model/host/host_memory.h"
#include "model/link/axil.h"
#include "model/link/cmac.h"
#include "model/link/pcap_writer.h"
#include "model/system/clock.h"
#include "model/system/scenario.h"
#include "model/system/sim_context.h"

class VerilatedVcdSc;

namespace ernic {

struct RunOptions {
  std::string pcap;   // wire view (both directions); taps beside it: <stem>.<node>-tx.pcap / -rx.pcap
  std::string vcd;    // merged waveform
};

class Node : public sc_core::sc_module {
 public:
  Node(sc_core::sc_module_name name, const NodeConfig& cfg, const Scenario& sc, const ClockDomain& core,
       const ClockDomain& cmac_clk, SimContext& ctx, const LinkParams& lp, uint64_t seed);
  NodeConfig cfg;
  std::unique_ptr<HostMemory> mem;
  std::unique_ptr<Ernic> ernic;
  std::unique_ptr<AxiLitePort> axil;
  std::unique_ptr<Cmac> cmac;
  std::unique_ptr<host::Driver> driver;
  std::unique_ptr<PcapWriter> tap_tx, tap_rx;
};

struct Failure {
  std::string what;
  SourceLoc loc;       // the step (empty file when not tied to a step)
  uint64_t time_ps = 0;
};

struct StepRecord {
  std::string kind;
  SourceLoc loc;
  uint64_t start_ps = 0, end_ps = 0;
  std::string detail;
};

class System : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(System);
  System(sc_core::sc_module_name name, const Scenario& sc, const RunOptions& opt, SimContext& ctx);
  ~System() override;

  const Scenario& scenario;
  ClockDomain core, cmac_clk;
  SimContext& ctx;
  std::vector<std::unique_ptr<Node>> nodes;
  std::unique_ptr<Wire> wire_ab, wire_ba;
  std::unique_ptr<PcapWriter> tap_wire;

  // Outcome.
  bool finished = false;        // the runner reached the end of the steps
  int exit_code = 0;
  std::vector<Failure> failures;
  std::vector<StepRecord> steps_done;
  std::vector<std::string> stall_report;   // per-QP status when the watchdog fired

  Node* node(const std::string& name);
  void close_taps();
  // RTL waveform (Verilator's writer, merged later with the model's VCD).
  // Call after elaboration (sc_start(SC_ZERO_TIME)); close before merging.
  void open_rtl_trace(const std::string& path);
  void close_rtl_trace();

 private:
  struct Conn {
    std::string client, server;
    host::Connection* c = nullptr;
    host::Connection* s = nullptr;
  };
  void runner();
  void watchdog();
  void clock_tracer(const ClockDomain* d, int var);
  void run_step(const Step& s);
  void fail(const SourceLoc& loc, const std::string& what, int code = 1);
  host::Connection& side(const Conn& k, const std::string& node_name);

  std::map<std::string, Conn> conns_;
  bool bounded_wait_ = false;   // a step that times out by itself: the watchdog stays out
  std::vector<int> clk_vars_;
  std::unique_ptr<VerilatedVcdSc> rtl_vcd_;
};

}  // namespace ernic
