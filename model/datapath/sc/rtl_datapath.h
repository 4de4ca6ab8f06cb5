// model/datapath/sc: the `rtl` datapath, one Verilated top per node
// (rtl/datapath/roce_datapath.sv: roce_tx -> async FIFO -> CMAC TX, CMAC RX
// -> async FIFO -> roce_rx) driven from C++ through 64-bit-word ports, with
// a scoreboard against the C++ reference models.
//
// Clocks: one SC_METHOD (edges) makes both of the top's clocks, core_clk
// and cmac_clk (rising at k * period + period / 2, falling on the model's
// edge k * period), and does each domain's port work: at the RTL's rising
// edge it records the handshakes that happen at it (valid and ready as
// they stand) and picks the next inputs; on the model edge that follows it
// writes those inputs and reads the outputs the edge produced. The top is
// a Verilated --cc model (issue 17): the process writes its input fields
// and calls eval() once per instant at which either clock has an edge,
// after both domains' work at that instant, so every edge sees the inputs
// and outputs as they stood before it whichever domain was handled first.
// The other writer is tx_take (m_cmac_tready, from the CMAC model's
// process), which evaluates the top itself (no edge: combinational logic
// only). An input queued by the ERNIC or CMAC model at time t is picked up
// at the first RTL edge after t (ties: strictly after) and presented from
// the model edge that follows (a received frame: not before its start
// time), so the result does not depend on the order in which the kernel
// runs processes at one time.
// Quiet model edges (issue 17): a model edge that would change nothing
// outside the top and the process's own state (inputs, its frame buffers,
// meta_events), and after which its clock surely keeps running, is not an
// activation of its own. It is owed: done, as at its time, by the first
// activation at or after it (the rising edge that follows, or the other
// clock's edge in between), before that activation's own work; a run that
// ends with one owed reports meta_events as the edge would have read it
// (stats()). Between a model edge and that activation no edge of either
// clock is evaluated (tx_take's evaluation changes the CMAC side's
// combinational logic only), so the top, the ports the edge reads and the
// counters stand as they stood at the model edge. Quiet (core_quiet,
// cmac_quiet): the core edge delivers no RX descriptor, payload end or
// bypass frame, and the clock runs on whatever other processes do at that
// instant (in reset, a descriptor or payload queued, a received frame in
// flight, or --no-idle-skip); the CMAC edge shows no new head, none waits,
// it draws no randomised tready, and the clock runs on (in reset, a
// received beat queued, a frame being taken or in flight, --no-idle-skip).
// Off while a waveform is written (the VCD shows every edge at its time).
// Gating: both clocks run while a frame is in flight anywhere in the top
// (queued, in roce_tx, in a FIFO, in roce_rx) and for kSettleCycles edges
// after (the synchronisers settle); then they stop until new input. An edge
// of an idle top changes nothing, so with idle skipping off (the clocks run
// every cycle) the outputs are the same.
//
// Scoreboard: each frame roce_tx hands the TX FIFO (read from the top's
// internal seam stream as it is written) is compared byte for byte with
// seam::tx_frame() of the descriptor and payload it came from, and each
// frame the CMAC reads out of the FIFO with what went in; each RX
// descriptor, payload and bypass frame with seam::roce_rx_ref() of the
// frame the CMAC gave. The first difference is a run error (ctx.error)
// "RTL datapath (rtl) vs reference model, node N: <what> #i: <field or byte
// offset>: RTL 0x.. reference 0x.. at core/CMAC cycle C"; DatapathStats
// counts checks and mismatches.
//
// Protocol monitors (model/monitor): every port of the top is checked at
// every rising edge its clock makes, with the signals as they stand there:
// <scope>.s_desc (768-bit descriptor, ready), .s_pay (payload AXI4-Stream),
// .m_desc (1024-bit descriptor, no ready), .m_pay, .m_byp (no ready) on the
// core clock; .m_cmac (FIFO -> CMAC, no bubble inside a frame) and .s_cmac
// (CMAC -> FIFO, no ready) on the CMAC clock. When a clock stops, its next
// edge is declared idle. Randomised handshakes (`handshake_random`):
// s_desc_valid and s_pay_tvalid raised late (<scope>.s_desc.valid,
// <scope>.s_pay.tvalid), m_cmac_tready low at random edges of a frame the
// CMAC takes (<scope>.m_cmac.tready), s_cmac_tvalid low at random edges
// before a received beat (<scope>.s_cmac.tvalid).
//
// TX to the CMAC: the PACKET FIFO shows a frame's first beat only once the
// whole frame is in, so when the CMAC takes it (tx_take) its bytes are
// known (as roce_tx wrote them): the CMAC puts it on the line at once and
// the beats follow one a CMAC cycle (tready high; the waveform variables
// follow them).
#pragma once
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "model/datapath/sc/datapath.h"
#include "model/datapath/sc/cc_port.h"

namespace ernic {

// The top's ports (names and widths of rtl/datapath/roce_datapath.sv;
// <bus>_w[i] = bits [64i+63:64i]), bound to the fields of the Verilated
// --cc model (cc_port.h): a one-bit port is a CData, cfg_udp_sport an
// SData, seed an IData, a 64-bit word a QData.
struct RoceDatapathPorts {
  using B = Port<uint8_t>;
  using W = Port<uint64_t>;
  // inputs
  B core_clk, core_rst_n, cmac_clk, cmac_rst_n;
  Port<uint16_t> cfg_udp_sport;
  Port<uint32_t> seed;
  B s_desc_valid;
  W s_desc_w[12];
  B s_pay_tvalid, s_pay_tlast;
  W s_pay_tdata_w[8], s_pay_tkeep;
  B m_cmac_tready;
  B s_cmac_tvalid, s_cmac_tlast, s_cmac_tuser;
  W s_cmac_tdata_w[8], s_cmac_tkeep;
  // outputs
  B s_desc_ready, s_pay_tready;
  B m_desc_valid;
  W m_desc_w[16];
  B m_pay_tvalid, m_pay_tlast;
  W m_pay_tdata_w[8], m_pay_tkeep;
  B m_byp_tvalid, m_byp_tlast;
  W m_byp_tdata_w[8], m_byp_tkeep;
  B m_cmac_tvalid, m_cmac_tlast;
  W m_cmac_tdata_w[8], m_cmac_tkeep;
  B s_cmac_tready;
  W meta_events;
};

// One beat of the top's internal TX seam stream (roce_tx -> FIFO), read
// from the Verilated model's public signals (no port).
struct TxSeamBeat {
  uint8_t data[64];
  uint64_t keep = 0;
  bool last = false;
};

// A Verilated top with roce_datapath's ports, built and its ports bound
// (rtl_datapath_bind.h has bind_roce_datapath<V>, one per top).
struct RoceDatapathTop {
  std::shared_ptr<void> model;      // owns the Verilated model (and whatever wraps it)
  std::function<void()> eval;       // the model's eval(): the inputs as written, at SystemC's time
  std::function<void(VerilatedVcdSc*, int)> trace;
  // The beat roce_tx hands the FIFO at the coming core edge (tvalid and
  // tready as they stand); false when none.
  std::function<bool(TxSeamBeat&)> tx_seam;
  // Tells the model that the named clocks went low since its last eval()
  // (their model edge was not evaluated), so that the next eval() takes
  // their rising edge: the model's record of each clock's last value, from
  // which Verilator tells an edge. Empty when the top has no such record
  // (another Verilator): then every model edge is evaluated.
  std::function<void(bool core, bool cmac)> fell;
};
using RoceDatapathBinder = std::function<RoceDatapathTop(const char* name, RoceDatapathPorts& p)>;

class RtlDatapath : public RoceDatapath {
 public:
  SC_HAS_PROCESS(RtlDatapath);
  // kind: the name it is registered under ("rtl", "user:<name>", ...).
  RtlDatapath(sc_core::sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
              const std::string& scope, const DatapathConfig& cfg, const RoceDatapathBinder& bind,
              std::string kind);
  ~RtlDatapath() override;

  // Edges each clock keeps running after the last frame left (the FIFOs'
  // pointer synchronisers settle within SYNC_STAGES + 1 edges).
  static constexpr unsigned kSettleCycles = 8;
  static constexpr unsigned kResetCycles = 4;  // both resets held low from time 0 (>= SYNC_STAGES + 1)

  void tx(const seam::TxDesc& d, roce::Bytes payload) override;
  void cmac_rx(FrameBytes f, uint64_t start_ps) override;
  const uint8_t* tx_head(size_t* len) override;
  const sc_core::sc_event& tx_head_event() const override { return head_ev_; }
  Taken tx_take(uint32_t bubble_after, uint32_t bubble_cycles) override;
  const char* kind() const override { return kind_.c_str(); }
  bool traces_axis() const override { return true; }
  void trace(VerilatedVcdSc* t, int levels) override;
  const DatapathStats& stats() const override;
  std::string status() const override;
  Unchecked unchecked() const override { return {tx_exp_.size(), rx_exp_.size(), byp_exp_.size()}; }

 private:
  struct TxItem {
    uint64_t t_ps;                 // queued at (presented from the first RTL edge after it)
    seam::TxdBits bits;
    uint16_t sport;
    roce::Bytes payload;
    uint64_t seq;
  };
  struct PayItem {
    uint64_t t_ps;
    roce::Bytes bytes;
    size_t off = 0;                // next byte to present
  };
  struct RxItem {
    uint64_t t_ps;                 // queued at
    uint64_t start_ps;             // its first beat presented on this CMAC model edge (or later)
    FrameBytes f;
    size_t off = 0;
  };
  // The one process of the top: both clocks' edges at their times, then
  // one eval() of the top (file comment).
  void edges();
  void start();                    // time 0: resets low, constant inputs
  void evaluate(bool core_rising, bool cmac_rising);
  void arm(uint64_t now);          // the next activation: the next edge of a running clock (edge_ev_), or a wake
  void owed_edges(uint64_t now);   // the model edges owed (file comment) whose time has come
  bool core_quiet() const;         // after a core rising edge's evaluation: its model edge may be owed
  bool cmac_quiet() const;
  static uint64_t next_rise(uint64_t now, uint64_t period);  // the first rising edge at or after now
  void core_rise(uint64_t now);    // the core clock's rising edge
  void core_model_edge();          // the model edge after it
  void core_gate(uint64_t now);    // after the instant: keep clocking, settle or stop
  void cmac_rise(uint64_t now);
  void take_beat();                // there, the beat of the frame the CMAC is taking
  void cmac_model_edge();
  void cmac_gate(uint64_t now);
  bool in_flight() const;
  void wake();
  void core_outputs();             // read at the model edge after an RTL edge
  void deliver_rx_desc(const seam::RxDesc& got_desc, roce::Bytes got_payload);
  void deliver_waiting_rx_desc(bool force);  // the waiting descriptor, once its payload ended (or force)
  void tx_seam_beat();             // at a core rising edge
  void mismatch(const std::string& what, bool core_domain);
  const DatapathCorrupt* corruption(const char* stream, uint64_t index) const;
  static void read_beat(const Port<uint64_t>* w, uint64_t keep, roce::Bytes& out);
  static uint64_t keep_of(size_t n) { return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1; }

  RoceDatapathPorts p_;
  RoceDatapathTop top_;
  std::string kind_;

  // Protocol monitors on the ports, fed at each rising edge.
  struct Watch {
    monitor::AxisMonitor* mon = nullptr;
    bool idle = false;  // the last sample was idle (TVALID low, out of reset): held
  };
  void watch(Watch& w, uint64_t edge, bool reset, bool valid, bool ready, bool last, uint64_t keep, uint64_t user,
             const Port<uint64_t>* words, int n);
  void watch_core(uint64_t edge);
  void watch_cmac(uint64_t edge);
  static void watch_idle(Watch& w, uint64_t edge);
  Watch w_s_desc_, w_s_pay_, w_m_desc_, w_m_pay_, w_m_byp_, w_m_cmac_, w_s_cmac_;
  monitor::HandshakeStall rnd_s_desc_valid_, rnd_s_pay_valid_, rnd_m_cmac_ready_, rnd_s_cmac_valid_;
  bool started_ = false;
  bool traced_ = false;            // the top is in a waveform
  bool defer_ = false;             // quiet model edges are owed (no waveform)
  bool fold_ = false;              // model edges are not evaluated: the next rising edge's eval takes their inputs
  bool core_owed_ = false, cmac_owed_ = false;  // a quiet model edge is owed, at:
  uint64_t core_owed_ps_ = 0, cmac_owed_ps_ = 0;
  sc_core::sc_event wake_ev_;      // an idle clock has new input
  sc_core::sc_event edge_ev_;      // the next edge of a running clock (arm)

  // core domain
  bool core_rise_next_ = true;     // next edge: the RTL's rising edge (else the model edge)
  bool core_idle_ = false, core_woken_ = false;
  uint64_t core_next_ps_ = 0;      // the next edge, while running
  unsigned core_settle_ = 0, core_reset_ = kResetCycles;
  std::deque<TxItem> txd_q_;       // descriptors not yet taken
  std::deque<PayItem> pay_q_;      // payload streams not yet taken
  bool drv_desc_ = false, drv_pay_ = false;  // what the inputs present now
  bool drv_pay_last_ = false;
  bool v_ready_ = true;            // s_desc_ready as last written to the waveform
  bool nxt_desc_ = false, nxt_pay_ = false, nxt_pay_last_ = false;  // for the next edge
  uint64_t nxt_pay_keep_ = 0;
  std::array<uint64_t, 8> nxt_pay_w_{};
  uint64_t desc_taken_ = 0, desc_seq_ = 0, presented_seq_ = 0;
  sc_core::sc_event desc_ev_;
  roce::Bytes rx_pay_cur_, byp_cur_;
  std::deque<roce::Bytes> rx_pay_done_;
  std::deque<seam::RxDesc> rx_desc_wait_;  // at most one: a descriptor whose payload has not ended yet
  uint64_t rx_desc_index_ = 0, rx_pay_index_ = 0, byp_index_ = 0;

  // CMAC domain
  bool cmac_rise_next_ = true;
  bool cmac_idle_ = false, cmac_woken_ = false;
  uint64_t cmac_next_ps_ = 0;
  unsigned cmac_settle_ = 0, cmac_reset_ = kResetCycles;
  std::deque<RxItem> rx_q_;        // frames for the CMAC RX stream
  bool drv_rx_ = false, nxt_rx_ = false, nxt_rx_last_ = false;
  uint64_t nxt_rx_keep_ = 0;
  std::array<uint64_t, 8> nxt_rx_w_{};
  std::array<uint8_t, 64> head_{};
  size_t head_len_ = 0;
  bool head_valid_ = false;
  sc_core::sc_event head_ev_, take_ev_;
  uint64_t tx_cap_index_ = 0;
  struct Take {
    bool active = false, done = false;
    FrameBytes f;                               // beats read out of the FIFO
    FrameBytes in;                              // the frame as roce_tx wrote it in
    uint64_t index = 0;
    uint32_t plan_after = 0, plan_cycles = 0;   // test hook bubble
    uint32_t hold = 0;                          // cycles of tready low left (hook)
    bool underflow_reported = false;
    uint64_t beats = 0;
  } take_;
  roce::Bytes tx_cap_;                          // roce_tx's frame being written into the FIFO
  std::deque<FrameBytes> tx_written_;           // whole frames in the FIFO, in order
  bool tready_low_next_ = false;   // drive m_cmac_tready low at the next model edge

  // shared
  uint64_t tx_in_flight_ = 0, rx_in_flight_ = 0;
  std::deque<FrameBytes> tx_exp_;                 // reference frames, in order
  struct RxExp { bool bypass; seam::RxDesc desc; roce::Bytes payload; FrameBytes frame; };
  std::deque<RxExp> rx_exp_, byp_exp_;
  bool reported_ = false;
  bool rx_overflow_reported_ = false;
};

}  // namespace ernic
