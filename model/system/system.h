// model/system: one simulated system built from a scenario, and the runner
// that executes the scenario's steps in it.
//
// Files: system.cpp builds nodes and the system (links, wires, monitors,
// taps, pcap); frames.cpp keeps the taps' frame records and feeds the
// monitors; runner.cpp runs the steps (one handler per step kind, by
// std::visit) and holds the control-flow steps; steps_*.cpp hold the other
// handlers by family: driver, connection, registers, memory, wire,
// expect, qp_setup.
//
// Topology (design.md): each node = host memory + host driver + ERNIC model
// + RoCEv2 datapath (model/datapath/sc: the Verilated rtl/datapath top or
// its reference models, scenario key `datapath`) + CMAC; two nodes are
// joined by a wire (one per direction) with the scenario's delay, or (the
// scenario key `topology: switch`) every node by a wire each way to its
// port of one switch (model/link/switch.h). Clock
// domains: core (scenario clocks.core_mhz) and CMAC (clocks.cmac_mhz).
// Hierarchy names (VCD scopes, SystemC names): top.<node>.{ernic,datapath,
// cmac,driver,axil}, RTL under top.<node>.datapath.rtl.roce_datapath; with
// the node key qp_setup_fsm, top.<node>.qp_setup_fsm (its RTL under .rtl).
//
// Exit codes of a run: 0 pass, 1 an expectation failed (or the model
// reported an internal error), 3 no progress (watchdog) or the simulated
// time limit was reached. (2, a bad scenario file or usage, is decided
// before a System exists.)
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "model/bridge/net_link.h"
#include "model/bridge/pcie_device.h"
#include "model/qp_setup/qp_setup_fsm.h"
#include "model/ernic/ernic.h"
#include "model/host/driver.h"
#include "model/host/sc_host.h"
#include "model/host/qp_setup_driver.h"
#include "model/host/host_memory.h"
#include "model/link/axil.h"
#include "model/link/axil_mux.h"
#include "model/link/cmac.h"
#include "model/link/switch.h"
#include "model/datapath/sc/datapath.h"
#include "model/trace/pcap_writer.h"
#include "model/monitor/scoreboard.h"
#include "model/monitor/wire_monitor.h"
#include "model/monitor/compliance.h"
#include "model/peer/peer.h"
#include "model/replay/replay.h"
#include "model/link/link_trace.h"
#include "model/sim/clock.h"
#include "model/scenario/scenario.h"
#include "model/sim/sim_context.h"
#include "model/system/bounded_steps.h"
#include "model/system/split.h"
#include "model/system/split_lane.h"

class VerilatedVcdSc;

namespace ernic {

// The pcap tap files beside the wire pcap: "out.pcap" -> "out.A-tx.pcap".
std::string pcap_tap_path(const std::string& wire_pcap, const std::string& node, const char* dir /*"tx"|"rx"*/);
// Whether files go beside this output path (a wire pcap's taps, a VCD's
// GTKWave save file and temporaries): only when it is a regular file or
// does not exist yet; not beside a device, a pipe or a socket (`--pcap
// /dev/null`, `--vcd /dev/stdout` would create files in /dev).
bool output_has_side_files(const std::string& path);

struct RunOptions {
  std::string pcap;   // wire view (both directions); taps beside it: <stem>.<node>-tx.pcap / -rx.pcap
  std::string vcd;    // merged waveform
  // Idle skipping (default): clocks are not simulated where nothing happens;
  // blocks wake at their next event or deadline. Off: every clock domain is
  // evaluated every cycle (a ticking process per domain, the RTL clocked
  // every core cycle). The results are the same; only the speed differs.
  bool idle_skip = true;
  // Test only, never hardware: `--plant-bug NAME` plants a named bug in
  // every node's ERNIC model (tools/random.h kPlantableBugs); "" = none.
  std::string test_plant_bug;
  // --handshake-random SEED: randomised handshakes on every node with this
  // seed (percentages from the scenario's handshake_random, else defaults).
  std::optional<uint64_t> handshake_random_seed;
  // `--serve NODE=ADDR` / `ernic-sim serve`: that node's program step waits
  // on ADDR for a program started by hand (e.g. under gdb) instead of
  // starting the one its `run` names.
  std::map<std::string, std::string> serve;
  // `ernic-sim node` (split.h): this process runs one node of the scenario;
  // split.node "" = every node in this process.
  SplitOptions split;
};

// The scenario's pcie block as the link model takes it.
PcieParams pcie_params(const PcieConfig& c);

class Node : public sc_core::sc_module {
 public:
  Node(sc_core::sc_module_name name, const NodeConfig& cfg, const Scenario& sc, const ClockDomain& core,
       const ClockDomain& cmac_clk, SimContext& ctx, const LinkParams& lp, uint64_t seed, bool idle_skip = true);
  // A node another process runs (split.h): its configuration only; every
  // block, the memory and the driver stay null.
  Node(sc_core::sc_module_name name, const NodeConfig& cfg);
  bool remote = false;
  NodeConfig cfg;
  std::unique_ptr<HostMemory> mem;
  std::unique_ptr<PcieLink> pcie;  // behind the DMA masters and the MMIO (model/dma/pcie.h)
  InstantOrder pcie_order;         // their turns on it at one instant (model/sim/instant_order.h)
  std::unique_ptr<Ernic> ernic;
  std::unique_ptr<AxiLitePort> axil;
  std::unique_ptr<SidebandPort> sideband;  // i_qp_sq_pidb_* / i_qp_rq_cidb_* (the driver plays the user logic)
  std::unique_ptr<Cmac> cmac;
  std::unique_ptr<RoceDatapath> datapath;  // between ernic and cmac
  std::unique_ptr<host::ScHost> sc_host;          // the built-in host: the driver's bus; null with `host: program`
  host::Driver* driver = nullptr;               // sc_host->driver(), or null
  host::DriverConfig driver_cfg;                // the driver's configuration (a program host gets it as environment)
  std::unique_ptr<bridge::PcieDevice> pcie_dev; // `host: program`: the NIC as the program's PCIe device
  std::unique_ptr<PcapWriter> tap_tx, tap_rx;
  // Frames ERNIC committed to its TX datapath and not yet seen on the CMAC
  // tap: when (the wire monitor judges requests at that instant).
  struct TxCommit { int opcode; uint32_t psn, dest_qp; uint64_t t_ps; };
  std::deque<TxCommit> tx_commits;
  // Non-RoCE frames the classifier (model/link/classify.h) passed to the
  // host's bypass path, in arrival order; and an event per arrival.
  std::vector<FrameBytes> bypass_rx;
  sc_core::sc_event bypass_ev;
  // `qp_setup_fsm` (model/qp_setup/qp_setup_fsm.h): the block, the MMIO
  // decoder in front of it and ERNIC, the arbiter in front of ERNIC's
  // register file, and the host software that drives it. Null without the key.
  std::unique_ptr<AxilArbiter> ernic_arb;
  std::unique_ptr<QpSetupFsm> qp_setup;
  std::unique_ptr<AxilDecoder> mmio;
  std::unique_ptr<host::QpSetupDriver> qp_setup_driver;
  // `kind: peer` (model/peer/peer.h): the ideal IBTA peer on this node's
  // CMAC, and its MRs as the memory steps read them; no ERNIC, PCIe,
  // datapath, AXI4-Lite port or driver then (those stay null).
  std::unique_ptr<peer::PeerNode> peer;
  std::map<std::string, host::Mr> peer_mrs;
  // The replay steps this peer played (steps_replay.cpp), for the report.
  struct ReplayRecord {
    std::string at, capture, side, against;  // the step's place, the capture as given, ERNIC's side, the ERNIC node
    int code = 0;                            // the verdict (model/replay/replay.h)
    std::string summary;
    std::vector<std::string> lines;          // the replay's report, line by line
  };
  std::vector<ReplayRecord> replays;
  // An MR of the node by name: the driver's, or the peer's; nullptr: none.
  const host::Mr* find_mr(const std::string& name) const;

 private:
  void build_peer(const NodeConfig& c, const ClockDomain& core, const ClockDomain& cmac_clk, SimContext& ctx,
                  const LinkParams& lp);  // node_peer.cpp
  // Parts of the construction, called in this order (system.cpp).
  void build_host_port(const NodeConfig& c, const Scenario& sc, const ClockDomain& core, SimContext& ctx,
                       bool idle_skip);  // qp_setup_fsm's arbiter, block and decoder; the AXI4-Lite port
  void build_cmac(const NodeConfig& c, const ClockDomain& core, const ClockDomain& cmac_clk, SimContext& ctx,
                  const LinkParams& lp, const ErnicConfig& ec);
  void build_datapath(const NodeConfig& c, const Scenario& sc, const ClockDomain& core, const ClockDomain& cmac_clk,
                      SimContext& ctx, const ErnicConfig& ec, uint64_t seed, bool idle_skip);
  void build_driver(const NodeConfig& c, const Scenario& sc, const ClockDomain& core, SimContext& ctx,
                    const LinkParams& lp, const ErnicConfig& ec, uint64_t seed);  // and the sideband
};

// A program step's run (host: program): what ran, how it ended, what
// crossed the bridge.
struct ProgramRun {
  std::vector<std::string> argv;  // empty: a program started by hand (serve)
  std::string status;             // "exit status 0", "killed by signal 9 (Killed)"
  std::string output;             // its stdout and stderr (the last 16 KiB)
  bridge::BridgeStats stats;
  bool ok = false;
  // While its step runs: the process and its output file (end_programs()
  // stops a program the run outlives: watchdog, time limit, failure).
  bool active = false;
  int pid = -1;
  std::string out_path;
};

struct Failure {
  std::string what;
  SourceLoc loc;       // the step (empty file when not tied to a step)
  uint64_t time_ps = 0;
};

// A frame as a tap saw it (for expectations and failure reports).
struct FrameRec {
  uint64_t t_ps = 0;
  uint64_t index = 0;     // position in this direction's tap stream
  bool roce = false;
  int opcode = -1;
  uint32_t psn = 0, dest_qp = 0, len = 0;
  int syndrome = -1;      // AETH syndrome, -1 without AETH
  uint32_t msn = 0;
  bool ack_req = false;
  roce::IpAddr src, dst;  // IP addresses (RoCE frames; formatted only for the log)
  std::string mad;        // CM attribute name on QP1
  std::string str() const;  // one line: time, opcode, PSN, QP, length
};

// A direction's frames in order; a deque: appending never moves the
// records already there (a vector's growth copied every record, 1 % of a
// model run of 100,000 frames, issue 17).
using FrameList = std::deque<FrameRec>;

// One direction of the link, "A->B": what A's CMAC sent (tx tap) and what
// B's CMAC received (rx tap). With a switch, the frames A sent to B's MAC
// and those B received from A's; frames between a node and the switch
// itself (pause frames) are under "A->switch" / "switch->A".
struct DirFrames {
  std::string name;
  FrameList tx, rx;
  size_t cursor_tx = 0, cursor_rx = 0;  // expect_frames consumed up to here
};

struct StepRecord {
  std::string kind;
  SourceLoc loc;
  uint64_t start_ps = 0, end_ps = 0;
  std::string detail;
  std::string order;  // its place in the scenario (runner.cpp): steps ending at one instant are listed by it
};

class System : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(System);
  System(sc_core::sc_module_name name, const Scenario& sc, const RunOptions& opt, SimContext& ctx);
  ~System() override;

  const Scenario& scenario;
  std::map<std::string, std::string> serve_overrides;  // RunOptions::serve
  ClockDomain core, cmac_clk;
  SimContext& ctx;
  std::vector<std::unique_ptr<Node>> nodes;
  std::unique_ptr<Wire> wire_ab, wire_ba;   // point to point
  // topology: switch: the switch, and each node's wires to its port and back
  // (by node index; a fault on X->Y acts on X's uplink, in the flow to Y).
  std::unique_ptr<Switch> net_switch;
  std::vector<std::unique_ptr<Wire>> uplinks, downlinks;
  std::unique_ptr<PcapWriter> tap_wire;

  // Outcome.
  bool finished = false;        // the runner reached the end of the steps
  int exit_code = 0;
  std::vector<Failure> failures;
  std::map<std::string, ProgramRun> programs;  // node -> its program step's run
  // node -> what its program learns of its connection (connect steps with a program end)
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> program_env;
  std::vector<StepRecord> steps_done;
  std::vector<std::string> stall_report;   // per-QP status when the watchdog fired
  uint64_t faults_applied = 0;
  bool idle_skip = true;
  std::map<std::string, uint64_t> ticks;   // idle skipping off: cycles each domain's ticker evaluated
  bool time_limit_hit = false;
  bool stopped_after_error = false;        // limits.after_error_us ran out before the last step

  Node* node(const std::string& name);
  // A connection set up out of band (connect cm: false, qp_adopt): its pair's
  // wire monitor starts these QPs afresh (WireMonitor::new_connection).
  void monitor_connection(const std::string& client, uint32_t qp_c, const std::string& server, uint32_t qp_s);
  void close_taps();
  std::map<std::string, DirFrames> dirs;   // by "A->B"
  // Independent protocol monitors, one per node pair (flow) on both its
  // directions, by the pair's node indices (lower first): each violation
  // becomes a model error "monitor A->B" as it is seen. Split: the pairs
  // whose first node is this process's (split_monitor.cpp).
  std::map<std::pair<size_t, size_t>, std::unique_ptr<monitor::WireMonitor>> wire_monitors;
  // PG332 compliance checker (requests the real IP does not support).
  ComplianceChecker compliance;
  // Shadow-memory scoreboard (model/monitor/scoreboard.h): every MR and RQ
  // byte against what the completed operations imply, and the canaries.
  monitor::Scoreboard scoreboard;
  static FrameRec summarize(const FrameBytes& f, uint64_t t_ps, uint64_t index);
  // The same with d = roce::decode(f) done by the caller.
  static FrameRec summarize(const FrameBytes& f, const std::optional<roce::Frame>& d, uint64_t t_ps, uint64_t index);
  static std::optional<uint64_t> commit_time(Node& n, const FrameRec& r);
  // RTL waveform (Verilator's writer, merged later with the model's VCD).
  // Call after elaboration (sc_start(SC_ZERO_TIME)); close before merging.
  void open_rtl_trace(const std::string& path);
  void flush_rtl_trace();  // the RTL file's header is on disk after this (trigger names)
  // Throws std::runtime_error when Verilator's writer failed to write it
  // (disk full: rtl/verilator_fatal.h).
  void close_rtl_trace();
  // Frames of each direction in the waveform (top.link.X_to_Y; two nodes only), by "X->Y".
  std::map<std::string, std::unique_ptr<LinkTrace>> link_traces;

 private:
  struct Conn {
    std::string client, server;
    host::Connection* c = nullptr;
    host::Connection* s = nullptr;
    int sb_c = -1, sb_s = -1;   // the two QPs in the scoreboard
  };
  // A group of concurrently running branches (parallel) and their barriers.
  struct Group {
    size_t branches = 0, running = 0;
    std::map<std::string, size_t> arrived;
    sc_core::sc_event changed;
  };
  // Building (system.cpp), in the constructor's order.
  void randomise_handshakes(const RunOptions& opt);
  void build_nodes(const std::vector<LinkParams>& lps, const RunOptions& opt);
  void start_tickers();          // idle skipping off
  void introduce_nodes();        // neighbour tables; host memories to the scoreboard
  void join_wires(const LinkParams& lp);  // two nodes, point to point
  void join_switch(const std::vector<LinkParams>& lps);  // topology: switch
  void build_switch(const std::vector<LinkParams>& lps);
  void attach_port(size_t i);
  int port_of_mac(const uint8_t* mac) const;
  int port_of_name(const std::string& name) const;  // the node's index, or -1
  // A star over shm:PATH: node X's link at PATH.X (split_star.cpp).
  static std::string star_shm_address(const std::string& addr, const std::string& node);
  void report_fault(const std::string& label, const FaultApplied& a);
  void watch_link();             // two nodes or a switch: monitors, link traces, frame records
  void open_taps(const std::string& pcap);
  // Frames (frames.cpp).
  // The node at the other end of a frame node i sent (tx: its destination
  // MAC) or received (its source MAC); -1: the switch (every pause frame,
  // with a switch) or no node.
  int peer_of(size_t i, const uint8_t* frame, size_t len, bool tx) const;
  void on_tx_frame(Node* me, size_t from, size_t to, DirFrames* out, LinkTrace* lt, const FrameBytes& f, uint64_t t);
  // The wire monitors' events (split_monitor.cpp): a frame node `from` sent
  // to `to` (first byte at t, committed then), a frame from `from` that
  // `to`'s RX handler took (now), an out-of-band connection (now).
  struct WatchEvent {
    enum Kind { Frame, Delivered, Connection } kind = Frame;
    size_t from = 0, to = 0;             // node indices (scenario order)
    uint64_t t = 0;                      // ps: the frame's first byte (Frame), the take (Delivered)
    std::optional<uint64_t> committed;   // ps: when its sender committed to the frame (Frame)
    std::vector<uint8_t> frame;          // Ethernet .. ICRC, no FCS
    std::string dir_cs;  // Connection: WireMonitor::new_connection's arguments
    uint32_t qp_s = 0;
    std::string dir_sc;
    uint32_t qp_c = 0;
  };
  // decoded: roce::decode(f) when it decodes (else nullptr).
  void monitor_frame(size_t from, size_t to, const FrameBytes& f, const roce::Frame* decoded, uint64_t t,
                     std::optional<uint64_t> committed);
  void monitor_delivered(size_t from, size_t to, const roce::Frame& f);
  void watch(WatchEvent e);
  void monitor_feed(uint64_t upto_ps);  // split: the home's events before upto_ps into its monitors
  void monitor_thread();
  sc_core::sc_event monitor_ev_;
  void monitor_take(const WatchEvent& e, uint64_t at_ps);
  void monitor_report(monitor::WireMonitor& wm, size_t seen, uint64_t at_ps);
  monitor::WireMonitor* monitor_of(size_t i, size_t j);
  std::string dir_name(size_t from, size_t to) const;
  std::string watch_refusal(const bridge::NetControl& c) const;
  std::map<std::tuple<uint64_t, size_t, uint64_t>, WatchEvent> watch_buf_;  // (instant, node, its sequence)
  std::map<size_t, uint64_t> watch_last_seq_;                              // the latest sequence per sender
  uint64_t watch_seq_ = 0;
  void log_frame(const Node& n, const char* dir, const std::string& link, const FrameRec& r);

  // The runner (runner.cpp).
  void runner();
  void end_checks();            // MR guards intact (every end of a run but the time limit)
  void watchdog();
  void stop_after_error();        // limits.after_error_us after the first model error
  void run_steps(const std::vector<Step>& steps, Group* g);
  void step_boundary(uint64_t lane_id);  // a step's start or end: at its instant's settled point
  bool lane_stopped();                   // the calling lane starts no more steps (a failure: runner.cpp)
  bool run_failed_before(uint64_t t) const;  // the scenario's own lane's view of a failure (runner.cpp)
  // A settled point, the lanes ahead waited for as at a step's boundary (a
  // step that judges within its instant, lane by lane: expect_bypass).
  void settle_in_lane_order(uint64_t lane_id);
  void run_step(const Step& s, Group* g);  // std::visit: the handler of the step's kind
  void run_branch(const std::vector<Step>* steps, Group* g, uint64_t lane_id, std::string path);
  void fail(const SourceLoc& loc, const std::string& what, int code = 1);
  void snapshot_qps(bool with_datapath = false);  // stall_report: every QP's status (and each datapath's)

  // Step handlers, one per step kind: the step, its location in the file,
  // the parallel group it runs in (nullptr outside parallel).
  // Driver level (steps_driver.cpp).
  void handle(const InitStep& s, const SourceLoc& loc, Group* g);
  void handle(const RegisterMrStep& s, const SourceLoc& loc, Group* g);
  void handle(const DeregisterMrStep& s, const SourceLoc& loc, Group* g);
  void handle(const PostStep& s, const SourceLoc& loc, Group* g);
  void handle(const WaitCompletionsStep& s, const SourceLoc& loc, Group* g);
  void handle(const RecvStep& s, const SourceLoc& loc, Group* g);
  // Connection management (steps_connection.cpp).
  void handle(const ConnectStep& s, const SourceLoc& loc, Group* g);
  void handle(const ConnectRejectStep& s, const SourceLoc& loc, Group* g);
  void handle(const DisconnectStep& s, const SourceLoc& loc, Group* g);
  void handle(const HwHandshakeStep& s, const SourceLoc& loc, Group* g);
  void handle(const RecoverStep& s, const SourceLoc& loc, Group* g);
  host::Connection& side(const Conn& k, const std::string& node_name);
  // Register level (steps_registers.cpp).
  void handle(const DebugPresetStep& s, const SourceLoc& loc, Group* g);
  void handle(const RegWriteStep& s, const SourceLoc& loc, Group* g);
  void handle(const RegReadStep& s, const SourceLoc& loc, Group* g);
  void handle(const RegExpectStep& s, const SourceLoc& loc, Group* g);
  void handle(const RegPollStep& s, const SourceLoc& loc, Group* g);
  uint32_t reg_addr(const RegRef& r) const;
  uint32_t reg_read_value(const RegRef& r, uint32_t* raw = nullptr);
  std::string reg_name(const RegRef& r) const;
  // Host memory (steps_memory.cpp).
  void handle(const FillStep& s, const SourceLoc& loc, Group* g);
  void handle(const MemWriteStep& s, const SourceLoc& loc, Group* g);
  void handle(const MemExpectStep& s, const SourceLoc& loc, Group* g);
  void handle(const CheckMemoryStep& s, const SourceLoc& loc, Group* g);
  // Wire, faults, the bypass path (steps_wire.cpp).
  void handle(const FaultStep& s, const SourceLoc& loc, Group* g);
  void handle(const LinkStep& s, const SourceLoc& loc, Group* g);
  void handle(const BypassSendStep& s, const SourceLoc& loc, Group* g);
  void handle(const ExpectBypassStep& s, const SourceLoc& loc, Group* g);
  // A capture replayed by a peer node against an ERNIC node (steps_replay.cpp).
  void handle(const ReplayStep& s, const SourceLoc& loc, Group* g);
  std::vector<std::unique_ptr<replay::Replay>> replays_;  // kept for the run (a requester side's answer process)
  // The line (and flow on it, or -1) whose fault rules and state are
  // direction d's; nullopt: no such direction.
  struct DirWire {
    Wire* w;
    int flow;
    FaultInjector& faults() { return flow < 0 ? w->faults() : w->faults(flow); }
  };
  std::optional<DirWire> wire_for(const Direction& d);
  // Expectations on frames, idleness, conditions, compliance (steps_expect.cpp).
  void handle(const ExpectFramesStep& s, const SourceLoc& loc, Group* g);
  void handle(const ExpectIdleStep& s, const SourceLoc& loc, Group* g);
  void handle(const WaitUntilStep& s, const SourceLoc& loc, Group* g);
  void handle(const ExpectComplianceStep& s, const SourceLoc& loc, Group* g);
  void handle(const ExpectSwitchStep& s, const SourceLoc& loc, Group* g);
  void handle(const ExpectQpStep& s, const SourceLoc& loc, Group* g);
  void handle(const ProgramStep& s, const SourceLoc& loc, Group* g);
  void connect_program(const ConnectStep& s, const SourceLoc& loc, const host::QpParams& prog);
  void connect_split(const ConnectStep& s, const SourceLoc& loc, host::QpParams cp, host::QpParams sp);
  // connect with `batch` (steps_connect_batch.cpp).
  void connect_batch(const ConnectStep& s, const SourceLoc& loc, const host::QpParams& cp, const host::QpParams& sp);
 public:
  // At the end of a run: every program still attached is killed, its exit
  // and output recorded (a watchdog, the time limit or a failure ended the
  // run before its step did). Called by ernic-sim before the report.
  void end_programs();
  // A split run (split.h), after sc_start: the other process is told the
  // run is over and heard (its TERMINATE). Nothing in one process.
  void end_split();
  bool split() const { return net_link_ != nullptr; }
  bool split_hub() const { return split_hub_; }  // a switch topology's switch process (split_star.cpp)
  // Whether the node runs in this process (always, in one process).
  bool local(const std::string& node_name) const;
  const bridge::NetLink* net_link() const { return net_link_.get(); }
  // Why this process stopped with the other's exit code ("": it did not).
  std::string split_stopped_by_;
 private:
  bool frames_match(const FrameList& got, size_t from, const std::vector<FramePattern>& pat,
                    std::string* why) const;
  size_t frames_seen(const Direction& d, const std::vector<uint8_t>& opcodes) const;
  // Control flow (runner.cpp).
  void handle(const WaitStep& s, const SourceLoc& loc, Group* g);
  void handle(const BarrierStep& s, const SourceLoc& loc, Group* g);
  void handle(const std::shared_ptr<RepeatStep>& sp, const SourceLoc& loc, Group* g);
  void handle(const std::shared_ptr<ParallelStep>& sp, const SourceLoc& loc, Group* g);
  // The QP-setup offload (steps_qp_setup.cpp).
  void handle(const QpSetupStep& s, const SourceLoc& loc, Group* g);
  void handle(const QpReleaseStep& s, const SourceLoc& loc, Group* g);
  void handle(const QpAdoptStep& s, const SourceLoc& loc, Group* g);
  // Nodes of kind: peer (steps_peer.cpp): register_mr and connect (out of band).
  void register_peer_mr(const RegisterMrStep& s, const SourceLoc& loc);
  void connect_peer(const ConnectStep& s, const SourceLoc& loc);
  void post_peer(const PostStep& s, const SourceLoc& loc);                        // the peer's requester
  void wait_peer(const WaitCompletionsStep& s, const SourceLoc& loc);
  void check_qp_setup(const SourceLoc& loc, const char* what, uint32_t qpn, const host::QpSetupResult& r,
                      uint8_t want_status, uint8_t want_state);

  // A split run (split.cpp).
  void join_split(const LinkParams& lp, const SplitOptions& so);
  // A switch topology split (split_star.cpp): each node's process joined to
  // the switch's, which relays between them (NetLink::enable_hub).
  void join_split_star(const std::vector<LinkParams>& lps, const SplitOptions& so);
  void star_wires(const std::vector<LinkParams>& lps);
  void star_link_up(size_t i);  // node i's QP-setup block's cmac_link_up
  bool split_hub_ = false;      // this process runs the switch (and no node)
  bridge::NetMemReader local_reader();
  bridge::NetProgressReader local_progress();
  // The latest progress of every other process of the run before this
  // instant, a self-timed step's end included (ProgressRequests at this
  // instant, NetLink::read_progress): the watchdog counts the whole run's
  // progress, as in one process. nullopt when one of them has ended its
  // run or gone: this run ends there too (watch_peer_end).
  std::optional<uint64_t> split_progress();
  bool split_star() const { return split() && scenario.topology_switch.has_value(); }
  std::string introduce_split(bridge::NetPeer& peer, const SplitOptions& so, bridge::WallTimeout to,
                              const std::string& expect);
  bool split_participates(const Step& s) const;
  void split_fact(const std::vector<uint8_t>& data);  // to the other process, with this step's end
  void split_share_mr(const host::Mr& m);             // register_mr's record (nothing in one process)
  // The pair of nodes a and b (one of them this process's) trade values at
  // this instant: ours given, the other's returned (a star: relayed by the
  // switch's process; only the other's fact taken).
  std::vector<uint64_t> split_exchange(const std::vector<uint64_t>& ours, const std::string& a, const std::string& b);
  // Every process of the run gives its values at this instant (a step every
  // process runs; a star: the switch's too); each gets their sums, its own
  // included (expect_compliance's reports, expect_idle's CQEs).
  std::vector<uint64_t> split_sum(const std::vector<uint64_t>& ours);
  std::vector<std::vector<uint64_t>> split_trade(const std::vector<uint64_t>& ours, size_t others, int from);
  // Thrown by a pair's trade when the other end's step failed before it
  // traded (its driver's error): this process's part stops there, and the
  // other's failure ends the step (split_barrier), as one process stops.
  struct SplitPartnerFailed {};
  std::deque<bridge::NetControl> split_pending_;      // taken from the link, not used yet (any lane)
  void split_barrier();
  std::optional<bridge::NetControl> split_next();
  // connect's server end: until the ConnectRequest came (the state left
  // RESET); false when the run stops or the client's step ended without
  // failing (then the step failed here); SplitPartnerFailed when the
  // client's step failed (its failure is the step's).
  bool split_await_request(Node& server, const host::Connection& c, const std::string& client);
  // A lane numbered before lane_id waits at this instant for the other
  // process's end of a step that began here now (SplitLane::end_due_ps),
  // or for one that may end now (SplitLane::awaiting_end: asked here, a
  // StepQuery, unless it was at this instant already).
  bool split_lane_ahead_may_end_now(uint64_t lane_id);
  // Lanes behind wait for the ones ahead of them: point to point, or a
  // star (the switch's process's lanes too: tb/data/split/t11).
  bool split_lanes_wait() const;
  // The other processes' StepQuery for step `id` (lane << 32 | its number):
  // true while this process's part of it is under way, false once it is
  // over, nullopt before the lane has begun it.
  std::optional<bool> split_underway(uint64_t id) const;
  // The other processes' end of step s, which ended here now, is certain
  // to be stamped now or earlier (point to point, or a star's node through
  // the switch's process): no other node is among s's participants (their
  // ends were sent as the step began), the step takes no time anywhere
  // (fault, link), or it ends at one instant everywhere (wait; barrier,
  // when every branch had arrived here).
  bool split_peer_passes(const Step& s);
  sc_core::sc_event lane_end_ev_;  // a lane's end_due_ps or awaiting_end was cleared, or its underway_ps set
  // The instant of the run's first failure (this process's, or the other's
  // told by a fact at that instant); a branch's step starts unless it lies
  // before (runner.cpp: simultaneous branches decide alike in any order).
  uint64_t first_fail_ps_ = ~uint64_t(0);
  void split_drain();          // the link's controls into split_pending_, a failure's instant taken
  void split_tell_failure();   // this process's first failure, to the other at its instant
  SplitLane& lane();           // the calling SystemC thread's
  uint64_t split_tag() { return lane().id << 32 | lane().seq; }
  std::map<const sc_core::sc_object*, SplitLane> lanes_;  // by thread; the runner's made on first use
  uint64_t lanes_made_ = 0;
  // An MR of any node (the other process's from its register_mr's record);
  // host memory of any node (the other process's read at this instant).
  const host::Mr* find_mr_any(const std::string& node_name, const std::string& mr);
  std::vector<uint8_t> mem_bytes(const std::string& node_name, uint64_t pa, uint64_t len);
  std::unique_ptr<bridge::NetLink> net_link_;
  size_t split_local_ = 0;      // this process's node, by scenario index
  bool split_peer_failed_ = false;
  uint8_t stop_how_ = 0;        // how this run stopped early (bridge::NetControl::RunEndHow; its RunEnd says it)
  void peer_failed(int code, const std::string& why, const std::string& who = "");  // who: "" = the peer
  void watch_peer_end();
  bool take_peer_end();
  bool end_for_peer(bool at_once);
  std::map<std::pair<std::string, std::string>, host::Mr> remote_mrs_;  // the other processes' nodes' MRs, by (node, name)

  std::map<std::string, Conn> conns_;
  std::map<std::string, uint32_t> peer_qpn_;  // connection -> the QPN of its kind: peer end
  // bypass_send frames by destination node, and how far expect_bypass has checked.
  std::map<std::string, std::vector<FrameBytes>> bypass_sent_;
  std::map<std::string, size_t> bypass_checked_;
  sc_core::sc_event frame_ev_;
  BoundedSteps bounded_;
  size_t split_waiting_ = 0;    // lanes waiting for another process's word (split_next)
  sc_core::sc_event split_woke_;  // a lane stopped waiting there
  bool split_passive() const;   // this process promised no CONTROL of its own (set_split_policy)
  void set_split_policy();      // the link's control policy (split.cpp)
  sc_core::sc_event fail_ev_;
  std::unique_ptr<VerilatedVcdSc> rtl_vcd_;
};

}  // namespace ernic
