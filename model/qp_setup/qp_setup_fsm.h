// model/qp_setup: the QP-setup offload (seed 001's queue-management FSM) in
// a node: the Verilated rtl/qp_setup/qp_setup_fsm.sv (scenario `datapath:
// rtl`) or its C++ reference model qp_setup_model.h (`datapath: model`),
// between the host's MMIO and ERNIC's register file.
//
// Wiring (model/link/axil_mux.h): the host reaches the block's AXI4-Lite
// slave in its MMIO space at qps::kMmioBase (an AxilDecoder splits BAR0);
// the block's AXI4-Lite master writes ERNIC's registers through an
// AxilArbiter shared with the MMIO path. cmac_link_up is `link_up()`:
// stat_rx_status of the node's CMAC, i.e. the link direction into the node
// is up (a `link` step takes it down). With one node (no link) it is low.
//
// Clock (RTL): the core clock, rising edges half a period after the core
// edges (as model/datapath/sc/rtl_datapath.h). The clock is gated: it runs only while
// a host access is in flight, a command runs (`busy`) or a master access
// or response is pending; otherwise the block sleeps (no evaluation). With
// idle skipping off (free_running) it runs every core cycle; results and
// their timing are the same. It also stops while the RTL waits in CMAC_INIT
// for the link and nothing else happens (its link_wait output, the link
// down, no access in flight): it sleeps until the link changes, a host
// access comes or the cycle of the timeout edge (link_wait_left), and gives
// the RTL the number of edges it skipped on its wait_skip input at the next
// edge, which adds them to its wait counter: the same status (0x13 or the
// path registers), at the same edge, and the same register values as with
// the clock running (tb/system/test_system_qp_setup.cpp compares both, with
// --no-idle-skip); a LINK_TIMEOUT of 10^7 cycles costs a few evaluations,
// not 10^7. cmac_link_up as the RTL samples it at a rising edge is the link
// as it was before any change at that very picosecond (a `link` step at
// the same time as an edge is seen at the next one, in both modes). Per cycle: host and master inputs are driven
// half a cycle after a core edge, with the rising clock edge; the master's
// access is granted by the arbiter there and performed on ERNIC's register
// file at the next core edge, its response (BVALID / RVALID with the data)
// driven at the rising edge after that. The host's access completes at the
// core edge where BVALID / RVALID is seen.
//
// Model: host accesses reach the model's register file at once; a started
// command runs in a thread that spends kModelAccessCycles core cycles per
// ERNIC access (performed at a core edge, through the same arbiter) and
// waits for the link event-driven up to LINK_TIMEOUT cycles; a host access
// takes one core cycle, as the RTL slave's, and REG_CHECK and RES_ALLOC's
// slot pick one cycle each. The model's state changes come within
// kModelCycleBound core cycles of the RTL's (the RTL's two-flop link
// synchroniser and its wait counter are not modelled); the accesses, their
// order and the status codes are the same.
//
// Protocol monitors (RTL mode, model/monitor): the block's AXI4-Lite slave
// (<scope>.s_axi_lite, the host's side) and master (<scope>.m_axi_lite,
// towards ERNIC) are sampled at every rising edge the clock makes, after the
// inputs of that edge have settled (two delta cycles before the edge: the
// slave's READYs are combinational). Randomised handshakes
// (`handshake_random`): the host raises AWVALID, WVALID and ARVALID late
// (<scope>.s_axi_lite.{awvalid,wvalid,arvalid}); ERNIC's side grants the
// master's request late (<scope>.m_axi_lite.{awready,arready}) and raises
// BVALID / RVALID late (<scope>.m_axi_lite.{bvalid,rvalid}).
//
// Observation: the waveform has top.<node>.qp_setup_fsm.{state, status,
// busy, cmac_link_up, commands} (model signals, both modes) and, with
// `datapath: rtl`, the RTL's ports and registers under
// top.<node>.qp_setup_fsm.rtl.qp_setup_fsm.*; the transaction log has a
// `state` record "qp_setup_fsm.state" per state change and
// "qp_setup_fsm.status" per finished command (qp = the command's QPN).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>

#include "model/datapath/qp_setup_model.h"
#include "model/datapath/qp_setup_regs.h"
#include "model/link/axil.h"
#include "model/link/axil_mux.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

class Vqp_setup_fsm;

namespace ernic {

class QpSetupFsm : public sc_core::sc_module, public AxiLiteTarget {
 public:
  static constexpr uint32_t kModelAccessCycles = 3;  // the RTL's cost of one ERNIC access (issue, handshake, response)
  // |model - RTL| core cycles of every state change (tb/system/test_system_qp_setup.cpp
  // holds both to it on the qp_setup_fsm scenarios; measured: at most 1).
  static constexpr uint32_t kModelCycleBound = 4;

  struct Config {
    std::string node;            // for logs and messages
    bool rtl = true;             // the Verilated RTL, else the C++ reference model
    bool free_running = false;   // idle skipping off: the RTL's clock runs every core cycle
  };

  SC_HAS_PROCESS(QpSetupFsm);
  QpSetupFsm(sc_core::sc_module_name name, const ClockDomain& core, SimContext& ctx, const std::string& scope,
             AxilArbiter& ernic, Config cfg);
  ~QpSetupFsm() override;

  // The block's AXI4-Lite slave (host MMIO; offsets in the window), called
  // at a core edge from the MMIO port's thread; returns when the access is done.
  uint32_t axil_read(uint32_t off) override;
  void axil_write(uint32_t off, uint32_t data) override;

  // cmac_link_up. Set before simulation; call link_changed() when it may
  // have changed (the model waits for it; the waveform shows it).
  std::function<bool()> link_up;
  void link_changed();

  qps::State state() const { return state_; }
  uint8_t status() const { return status_; }
  uint64_t commands() const { return commands_; }
  const std::map<uint8_t, uint64_t>& status_counts() const { return status_counts_; }
  uint64_t cycles_clocked() const { return cycles_; }
  uint64_t cycles_skipped_in_link_wait() const { return cycles_skipped_; }  // edges given as wait_skip
  bool is_rtl() const { return cfg_.rtl; }
  Vqp_setup_fsm* rtl() { return rtl_.get(); }  // nullptr with the model

 private:
  struct HostOp {
    bool active = false, write = false, presented = false, accepted = false, done = false;
    uint32_t off = 0, data = 0, value = 0;
    bool drawn = false;                 // randomised: the VALID delays drawn
    uint32_t aw_hold = 0, w_hold = 0;   // edges before AWVALID / WVALID (ARVALID: aw_hold) rise
  };
  // RTL mode
  void rtl_thread();
  void cycle();       // one core cycle from a core edge to the next
  void cycle_from(uint64_t start_ps);  // the cycle starting at core edge start_ps (now <= its rising edge)
  bool can_stop_in_link_wait() const;
  void link_wait_stop();                // sleep in the link wait, then one cycle with wait_skip
  bool link_sampled() const;            // cmac_link_up for a rising edge now
  void drive();       // half a cycle in: inputs for the rising edge
  void observe();     // at the next core edge: outputs of that edge
  void sample_axil(); // both AXI4-Lite interfaces at the rising edge, for the monitors
  bool needs_clock() const;
  // model mode
  void model_thread();
  struct ModelEnv;
  // both
  uint32_t host_access(bool write, uint32_t off, uint32_t data);
  void observed(qps::State s, uint8_t code, bool busy);  // VCD, log, counters

  const ClockDomain& core_;
  SimContext& ctx_;
  AxilArbiter& arb_;
  Config cfg_;
  std::string scope_;
  // RTL
  using Wire1 = sc_core::sc_signal<bool>;
  using Word = sc_core::sc_signal<uint32_t>;
  Wire1 clk_{"clk"}, rst_n_{"rst_n"};
  Wire1 s_awvalid_{"s_awvalid"}, s_awready_{"s_awready"}, s_wvalid_{"s_wvalid"}, s_wready_{"s_wready"},
      s_bvalid_{"s_bvalid"}, s_bready_{"s_bready"}, s_arvalid_{"s_arvalid"}, s_arready_{"s_arready"},
      s_rvalid_{"s_rvalid"}, s_rready_{"s_rready"};
  Word s_awaddr_{"s_awaddr"}, s_wdata_{"s_wdata"}, s_wstrb_{"s_wstrb"}, s_bresp_{"s_bresp"}, s_araddr_{"s_araddr"},
      s_rdata_{"s_rdata"}, s_rresp_{"s_rresp"};
  Wire1 m_awvalid_{"m_awvalid"}, m_awready_{"m_awready"}, m_wvalid_{"m_wvalid"}, m_wready_{"m_wready"},
      m_bvalid_{"m_bvalid"}, m_bready_{"m_bready"}, m_arvalid_{"m_arvalid"}, m_arready_{"m_arready"},
      m_rvalid_{"m_rvalid"}, m_rready_{"m_rready"};
  Word m_awaddr_{"m_awaddr"}, m_wdata_{"m_wdata"}, m_wstrb_{"m_wstrb"}, m_bresp_{"m_bresp"}, m_araddr_{"m_araddr"},
      m_rdata_{"m_rdata"}, m_rresp_{"m_rresp"};
  Wire1 cmac_link_up_{"cmac_link_up"}, busy_{"busy"};
  Word state_sig_{"state"}, status_sig_{"status"};
  Word wait_skip_{"wait_skip"}, link_wait_left_{"link_wait_left"};
  Wire1 link_wait_{"link_wait"};
  static constexpr uint64_t kNoChange = ~uint64_t(0);
  bool link_now_ = false, link_before_ = false;  // the link now, and before the last change's time step
  uint64_t link_change_ps_ = kNoChange;          // time of the last link_changed()
  uint64_t cycles_skipped_ = 0;
  std::unique_ptr<Vqp_setup_fsm> rtl_;
  sc_core::sc_event wake_, host_done_;
  HostOp host_;
  // The master port, as ERNIC's side of it: an access granted at the last
  // rising edge (performed at the next core edge), responses to drive.
  bool m_exec_ = false, m_exec_write_ = false;
  uint32_t m_exec_addr_ = 0, m_exec_data_ = 0;
  bool b_out_ = false, r_out_ = false;
  uint32_t r_data_ = 0;
  uint32_t b_hold_ = 0, r_hold_ = 0;  // randomised: edges before BVALID / RVALID rise
  monitor::AxilMonitor* mon_s_ = nullptr;
  monitor::AxilMonitor* mon_m_ = nullptr;
  monitor::HandshakeStall rnd_s_awvalid_, rnd_s_wvalid_, rnd_s_arvalid_, rnd_m_awready_, rnd_m_arready_,
      rnd_m_bvalid_, rnd_m_rvalid_;
  uint32_t qpctrl_shadow_ = 0;  // the QPCTRL the running command took (for logs)
  // model
  std::unique_ptr<qps::QpSetupModel> model_;
  sc_core::sc_event cmd_ev_, link_ev_;
  // observation
  qps::State state_ = qps::State::Idle;
  uint8_t status_ = 0;
  bool busy_seen_ = false;
  uint64_t cycles_ = 0, commands_ = 0;
  std::map<uint8_t, uint64_t> status_counts_;
  int v_state_ = -1, v_status_ = -1, v_busy_ = -1, v_link_ = -1, v_cmds_ = -1;
};

}  // namespace ernic
