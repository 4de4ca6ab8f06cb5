// model/link: the 100G Ethernet MAC (Xilinx CMAC) and the wire that
// carries a line's frames to a FrameSink: another CMAC (point to point), or
// a switch port (model/link/switch.h).
//
// CMAC side: 512-bit AXI4-Stream (64 bytes a beat) on the CMAC clock,
// 322.265625 MHz (simulated as 3103 ps). TX frames come from the NIC's core
// domain through an asynchronous FIFO (cdc_cycles of the CMAC clock to
// cross); the MAC sends one beat a cycle and then holds tready low while
// the line finishes serialising (line-rate pacing). On the line a frame
// costs preamble+SFD (8 B) + frame + FCS (4 B) + inter-frame gap (12 B) at
// rate_gbps. RX has no backpressure (PG332: roce_cmac_s_axis has no
// tready): a frame is handed on when its last byte (FCS) has arrived plus
// rx_latency_cycles, then crosses into the core domain (cdc_cycles of the
// core clock).
//
// Frames are carried without FCS (the FCS is generated and checked in the
// MAC; its time on the line is counted). pcap taps (ns timestamps = the
// simulated time of the first byte after the SFD): tx = what this MAC
// transmits (before any wire fault), rx = what it receives (after).
//
// TX underflow: once the first beat of a frame is on the CMAC's TX
// AXI4-Stream, every beat must follow back to back up to tlast (the MAC
// serialises as it goes and cannot wait mid-frame). tx_push hands whole
// frames to a packet-mode FIFO, so the NIC cannot cause a bubble today;
// inject_tx_bubble (a test hook) makes the stream drop tvalid inside a
// frame, as a NIC whose TX stream stalls would. The CMAC then aborts the
// frame (it goes out with a stomped FCS; the receiving MAC discards it,
// counted in rx_bad_fcs) and the model reports a run error (ctx.error:
// node, time, frame index, beat).
//
// A received frame longer than ctl_rx_max_packet_len (9600 bytes with the
// FCS, the CMAC's default; PG203: stat_rx_toolong, the frame handed on
// with an error and dropped by the user logic) is discarded by the MAC and
// counted in rx_too_long; nothing the NIC models sends one, a replayed
// capture may.
//
// Flow control (model/link/pfc.h): a received PAUSE (0x0001) or PFC
// (0x0101) frame is consumed by the MAC (taps and observers see it, the
// NIC does not) and sets stat_rx_pause_req[i] for time[i] * 512 bit times
// (0 = resume at once). Before taking a data frame from the FIFO, at a
// frame boundary, the MAC asks `tx_hold` whether the frame's class is held
// (ERNIC's XRNIC_PAUSE_CONF rules); a held frame waits, and so does
// everything behind it in the FIFO. ctl_tx_pause_req (set_tx_pause_req,
// from ERNIC's RX buffer thresholds) makes the MAC send, at the next frame
// boundary, ahead of queued data: on a rising bit an XOFF (PFC frame with
// pfc_quanta for that priority; bit 8: an 802.3x PAUSE), repeated every
// pfc_refresh_quanta while the bit stays set (refresh before expiry), and
// on a falling bit one XON (time 0), as Xilinx MACs do with auto-XON
// (assumption A-PFC-2). Every pause sent, received, holding or releasing
// traffic is a `state` record in the transaction log.
//
// Protocol monitors (model/monitor/protocol.h) on the AXI4-Stream beats
// this model presents itself: TX (<scope>.tx_axis: TREADY, keep contiguous,
// no bubble inside a frame) for the frames it streams (its own FIFO's, a
// `model` datapath's; an RTL datapath streams and checks its own, see
// model/datapath/sc/rtl_datapath.h) and RX (<scope>.rx_axis, no TREADY)
// without a datapath module. Randomised handshakes (`handshake_random`):
// TX TREADY low at random edges inside those frames (<scope>.tx_axis.tready),
// TX TVALID raised late before a frame's first beat (<scope>.tx_axis.tvalid;
// the frame starts later), RX TVALID low at random edges before a beat
// (<scope>.rx_axis.tvalid). MAC control frames are the MAC's own, not on
// the NIC's stream.
#pragma once
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "model/link/mac_params.h"
#include "model/link/fault.h"
#include "model/link/line.h"
#include "model/link/pfc.h"
#include "model/trace/pcap_writer.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic {

using FrameBytes = std::vector<uint8_t>;

struct LinkParams {
  double rate_gbps = 100.0;
  uint64_t delay_ps = 100000;     // wire propagation delay (100 ns = about 20 m of fibre)
  uint32_t tx_fifo_frames = 4;    // depth of the core->CMAC async FIFO, in frames
  uint32_t cdc_cycles = 4;        // async FIFO crossing: two-flop synchroniser + pointer compare
  uint32_t rx_latency_cycles = 8; // CMAC RX pipeline after the last byte (assumption A-CMAC-2)
  // ctl_tx_pause_quanta / ctl_tx_pause_refresh_timer of the Xilinx CMAC
  // (assumption A-PFC-2): the largest pause, refreshed at half of it.
  uint16_t pfc_quanta = 0xFFFF;
  uint16_t pfc_refresh_quanta = 0x8000;
  static constexpr uint32_t kPreambleSfd = 8, kFcs = 4, kIfg = 12;
};

// Time on a line of rate_gbps, as the CMAC, the wire and a switch port
// (model/link/switch.h) count it: 8000 / rate_gbps ps a byte, kept in
// 1/1000 ps; a span of bytes is rounded up to whole ps.
struct LineRate {
  uint64_t ps_per_byte_x1000 = 80000;  // 100 Gb/s
  LineRate() = default;
  explicit LineRate(double rate_gbps) : ps_per_byte_x1000(uint64_t(std::llround(8.0e6 / rate_gbps))) {}
  uint64_t ps(uint64_t bytes) const { return (bytes * ps_per_byte_x1000 + 999) / 1000; }
  // Preamble + SFD: the start of the preamble to the frame's first byte.
  uint64_t preamble_ps() const { return ps(LinkParams::kPreambleSfd); }
  // Preamble + SFD + frame + FCS: the start of the preamble to the FCS's last byte.
  uint64_t frame_ps(uint64_t len) const { return ps(LinkParams::kPreambleSfd + len + LinkParams::kFcs); }
  uint64_t ifg_ps() const { return ps(LinkParams::kIfg); }
  // A pause time of q quanta (512 bit times each).
  uint64_t quanta_ps(uint64_t q) const { return ps(q * pfc::kQuantumBits / 8); }
};

// Where a line delivers frames: a CMAC's RX, or a switch port's ingress.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Called when the last byte of a frame has arrived; first_byte_ps = the
  // arrival of its first byte after the SFD. bad_fcs: its transmitter
  // aborted it (TX underflow), the FCS check fails.
  virtual void rx_arrive(FrameBytes frame, uint64_t first_byte_ps, bool bad_fcs) = 0;
};

// Packets and bytes seen, by BTH opcode (non-RoCE frames under 0x100).
struct OpcodeCounts {
  struct C { uint64_t packets = 0, bytes = 0; };
  std::map<uint32_t, C> by_opcode;
  uint64_t packets = 0, bytes = 0;
  void add(const FrameBytes& f);
};

class Wire;

// The CMAC side of the NIC's core->CMAC async FIFO (a datapath module,
// model/datapath/sc), as the MAC's TX path sees it. Without one the Cmac
// keeps its own frame FIFO (tx_push) with a crossing of cdc_cycles.
class CmacTxSource {
 public:
  virtual ~CmacTxSource() = default;
  // The next frame's first beat when it is valid at the FIFO's output now
  // (nullptr: none); *len = bytes available there (at least min(frame, 64)):
  // what the pause-class check (tx_hold) reads.
  virtual const uint8_t* tx_head(size_t* len) = 0;
  // Notified whenever tx_head may have become non-null.
  virtual const sc_core::sc_event& tx_head_event() const = 0;
  struct Taken {
    FrameBytes f;
    // true: the source moves the frame's beats over the AXI4-Stream itself
    // from t0_ps on (and traces them); the MAC only puts it on the line.
    // false: the MAC times the beats (transmit()).
    bool streamed = false;
    uint64_t t0_ps = 0;             // streamed: the CMAC edge of its first beat (now)
    uint32_t bubble_after = 0, bubble_cycles = 0;  // streamed: the bubble (tvalid low) the source makes
  };
  // Takes the frame at tx_head, its first beat at this CMAC edge (called
  // on one, with the line free). bubble_after/bubble_cycles (cycles 0:
  // none) is the test hook's bubble (inject_tx_bubble): a streaming source
  // makes it when the frame has more than bubble_after + 1 beats and says
  // so in the result; another leaves it to the MAC.
  virtual Taken tx_take(uint32_t bubble_after, uint32_t bubble_cycles) = 0;
};

class Cmac : public sc_core::sc_module, public FrameSink {
 public:
  SC_HAS_PROCESS(Cmac);
  Cmac(sc_core::sc_module_name name, const ClockDomain& cmac_clk, const ClockDomain& core_clk,
       SimContext& ctx, const std::string& scope, LinkParams p);

  // From the NIC's TX path (core domain), or with a datapath module
  // (tx_source) the host's non-RoCE frames (non_roce_dma_s_axis, merged into
  // cmac_m_axis). Blocks the calling thread while the async FIFO is full.
  void tx_push(FrameBytes frame);
  bool tx_idle() const { return fifo_.empty() && !tx_busy_; }

  // ctl_tx_pause_req[8:0] (pfc.h). Takes effect at the next frame boundary.
  void set_tx_pause_req(uint16_t bits);
  uint16_t tx_pause_req() const { return tx_pause_.req; }
  // stat_rx_pause_req[8:0] now.
  uint16_t stat_rx_pause_req() const;
  // Asked before a data frame starts: true = its traffic class is paused
  // by stat_rx_pause_req (unset: nothing is ever held).
  std::function<bool(const FrameBytes&, uint16_t stat_rx_pause_req)> tx_hold;
  // Source MAC of the pause frames this MAC sends.
  uint8_t mac[6] = {0, 0, 0, 0, 0, 0};
  std::string node;   // for the transaction log and error messages

  // Test hook (TX underflow): the first data frame transmitted at or after
  // TX frame index `frame` (0-based, every frame this MAC sends counts, as
  // in the tx tap) that has more than after_beat + 1 beats gets tvalid low
  // for `cycles` CMAC cycles after its beat `after_beat` (0-based).
  void inject_tx_bubble(uint64_t frame, uint32_t after_beat, uint32_t cycles) {
    bubble_ = Bubble{frame, after_beat, cycles, true};
  }

  struct PfcStats {
    uint64_t xoff_sent = 0, xon_sent = 0, pause_rx = 0, held = 0, held_ps = 0;
    uint64_t tx_underflows = 0, rx_bad_fcs = 0;
    uint64_t rx_too_long = 0;  // longer than kCtlRxMaxPacketLen: discarded
  };
  const PfcStats& pfc_stats() const { return pfc_; }

  // Wiring (before sc_start).
  Wire* wire_out = nullptr;
  std::function<void(FrameBytes)> rx_sink;   // into the NIC's RX path (core domain)
  // A datapath module in front of the MAC (model/datapath/sc): TX frames
  // come from tx_source (tx_push then carries the host's non-RoCE frames
  // only), and each received data frame (not a MAC-control frame, FCS good)
  // goes to rx_stream(frame, start_ps) one CMAC cycle before start_ps, the
  // CMAC edge where its first beat is due on the RX AXI4-Stream (when the
  // MAC hands it on: rx_latency_cycles after its last byte); the taps see it
  // then. The datapath does the crossing into the core domain (no
  // cdc_cycles here). With axis_traced, the datapath drives the
  // AXI4-Stream waveform variables (set_tx_axis / set_rx_axis) beat by beat.
  CmacTxSource* tx_source = nullptr;
  std::function<void(FrameBytes, uint64_t start_ps)> rx_stream;
  bool axis_traced = false;
  void set_tx_axis(bool tvalid, bool tlast, uint64_t tkeep);
  void set_rx_axis(bool tvalid, bool tlast, uint64_t tkeep);
  void set_tx_tready(bool tready);  // the MAC's tready (waveform; randomised stalls)
  PcapWriter* tap_tx = nullptr;
  PcapWriter* tap_rx = nullptr;
  PcapWriter* tap_wire = nullptr;            // shared view of every transmitted frame
  uint32_t tap_wire_source = 0;              // this MAC's rank among a same-instant's frames there
  // Observers of the two taps (expectations, transaction log); same frames,
  // same times as the pcap files.
  std::function<void(const FrameBytes&, uint64_t first_byte_ps)> on_tx, on_rx;

  // Called by the wire when the last byte of a frame has arrived;
  // first_byte_ps = arrival of the first byte after the SFD.
  // bad_fcs: the frame was aborted by its transmitter (TX underflow).
  void rx_arrive(FrameBytes frame, uint64_t first_byte_ps, bool bad_fcs = false) override;

  const OpcodeCounts& tx_counts() const { return tx_counts_; }
  const OpcodeCounts& rx_counts() const { return rx_counts_; }
  const LinkParams& params() const { return p_; }
  uint64_t ps_per_byte_x1000() const { return line_.ps_per_byte_x1000; }

 private:
  void tx_thread();
  void tx_thread_src();
  void wait_line_free();
  void hold(const FrameBytes& front, uint16_t stat, uint64_t now);
  void release(uint16_t stat, uint64_t now);
  void transmit_host_frame();
  void transmit_with_bubble(FrameBytes f);
  void rx_thread();
  void cdc_thread();
  void pause_expiry();
  uint64_t line_ps(uint64_t bytes) const { return line_.ps(bytes); }
  uint64_t quanta_ps(uint64_t q) const { return line_.quanta_ps(q); }
  // A pause frame due now (XOFF, refresh, XON), with the state updated.
  std::optional<FrameBytes> take_pause_frame(uint64_t now);
  uint64_t next_refresh_ps() const;
  // axis: the frame came over the NIC's TX stream (not a MAC control frame).
  void transmit(FrameBytes f, uint32_t bubble_after, uint32_t bubble_cycles, bool axis = true);
  // A run of `cycles` edges of a frame's AXI4-Stream from beat `beat` on:
  // TVALID and TREADY high: `cycles` beats transferred back to back; else
  // beat `beat` offered and not taken (stall) or TVALID low, `cycles` edges.
  struct AxisRun { bool valid, ready; uint64_t beat, cycles; };
  // Appends the transfer of `beat`, extending a run of transfers it follows.
  static void add_beat(std::vector<AxisRun>& runs, uint64_t beat);
  // Presents a frame's beats from this CMAC edge, run by run: the waveform
  // variables change where they change (the thread waits until then), the
  // monitor sees every run, on_bubble is called where TVALID drops inside
  // the frame. Returns on the edge after the last beat, TVALID low.
  void walk_axis(const FrameBytes& f, const std::vector<AxisRun>& runs, monitor::AxisMonitor* mon, int v_valid,
                 int v_ready, int v_last, int v_keep, const std::function<void()>& on_bubble);
  // The line and wire side of a frame whose first beat was taken at t0.
  void put_on_line(const FrameBytes& f, uint64_t t0, bool underflow);
  void report_underflow(const FrameBytes& f, uint64_t index, uint32_t bubble_after, uint32_t bubble_cycles,
                        uint64_t t_bubble);
  // A frame the datapath streams itself (tx_take) with the test hook's
  // bubble: its underflow is reported at the cycle TVALID is first low, as
  // transmit() reports its own, not as the frame starts (SC_METHOD).
  struct StreamedUnderflow { FrameBytes f; uint64_t index; uint32_t after, cycles; uint64_t t_ps; };
  std::optional<StreamedUnderflow> streamed_underflow_;
  sc_core::sc_event streamed_underflow_ev_;
  void report_streamed_underflow();
  void rx_pause(const pfc::PauseFrame& p, uint64_t now);
  void log_state(const char* what, const std::string& value);

  const ClockDomain& cmac_clk_;
  const ClockDomain& core_clk_;
  SimContext& ctx_;
  std::string scope_;
  LinkParams p_;
  LineRate line_;
  std::deque<FrameBytes> fifo_;
  std::deque<uint64_t> fifo_ready_;   // when each frame of fifo_ has crossed (with a tx_source)
  uint64_t tx_index_ = 0;                // frames transmitted (tap order)
  struct Bubble { uint64_t frame = 0; uint32_t after_beat = 0, cycles = 0; bool armed = false; } bubble_;
  // PFC: TX requests and what has been sent for them; RX pause timers.
  pfc::TxPause tx_pause_;
  pfc::RxPause rx_pause_;
  bool holding_ = false;
  uint64_t hold_since_ps_ = 0;
  sc_core::sc_event pause_ev_, pause_expiry_ev_;
  PfcStats pfc_;
  sc_core::sc_event fifo_push_ev_, fifo_pop_ev_;
  bool tx_busy_ = false;
  uint64_t line_free_ps_ = 0;
  struct RxItem { FrameBytes f; uint64_t first_byte_ps; uint64_t ready_ps; bool bad_fcs; };
  std::deque<RxItem> rxq_;
  sc_core::sc_event rx_ev_;
  struct CdcItem { FrameBytes f; uint64_t ready_ps; };
  std::deque<CdcItem> cdcq_;          // RX frames crossing into the core domain
  sc_core::sc_event cdc_ev_;
  OpcodeCounts tx_counts_, rx_counts_;
  int v_tx_tvalid_, v_tx_tready_, v_tx_tlast_, v_rx_tvalid_, v_rx_tlast_, v_tx_fifo_level_;
  int v_ctl_tx_pause_req_, v_stat_rx_pause_req_;
  int v_tx_tkeep_ = -1, v_rx_tkeep_ = -1, v_fifo_s_tvalid_ = -1, v_fifo_s_tready_ = -1;  // waveform only
  monitor::AxisMonitor* mon_tx_ = nullptr;
  monitor::AxisMonitor* mon_rx_ = nullptr;
  monitor::HandshakeStall tx_tready_stall_, tx_tvalid_stall_, rx_tvalid_stall_;
};

// One direction of the link: delivers frames after the propagation delay,
// through the scenario's fault rules (model/link/fault.h). A frame that a
// rule duplicates or releases (reorder) follows the frame that caused it
// back to back on the line (its own serialisation time plus the IFG); a
// delayed frame arrives later by the rule's delay and may be overtaken.
// While the link is down every frame entering it is lost.
//
// Flows: a line that carries frames for several nodes (a node's link into a
// switch) may split them into flows (flow_of: a frame's flow id, or -1),
// each with its own fault rules, link state and frame count: the scenario's
// directions "A->B" on a switched path. Frames of no flow meet the line's
// own rules (faults()).
//
// The sending half of the line (line.h): what it decides goes to `out`,
// by default its own receiving half (rx(), whose dst is the FrameSink the
// line delivers to); a split run points `out` at the link end that carries
// the copies to another process (model/bridge/net_link.h).
class Wire : public sc_core::sc_module {
 public:
  Wire(sc_core::sc_module_name name, uint64_t delay_ps, double rate_gbps, uint64_t seed);
  LineOut* out = nullptr;
  LineRx& rx() { return rx_; }
  void set_dst(FrameSink* d) { rx_.dst = d; }
  std::string label;                        // "A->B"
  // Every fault applied (and every frame lost to a down link), as it
  // happens, with the label of the line or flow it happened on.
  std::function<void(const std::string& label, const FaultApplied&)> on_fault;
  // first_byte_ps / last_byte_ps: when the transmitter put them on the line.
  // bad_fcs: the transmitter aborted the frame (TX underflow); every copy
  // the faults make of it arrives with a bad FCS.
  void send(FrameBytes f, uint64_t first_byte_ps, uint64_t last_byte_ps, bool bad_fcs = false);
  uint64_t delay_ps() const { return delay_ps_; }
  FaultInjector& faults() { return inj_; }
  void set_link_up(bool up);
  uint64_t frames_lost() const { return lost_; }
  // Flows (before the first frame): id >= 0, its label ("A->B") and the
  // seed of its fault rules' random stream.
  std::function<int(const FrameBytes&)> flow_of;
  void add_flow(int id, const std::string& flow_label, uint64_t seed);
  FaultInjector& faults(int id) { return flows_.at(id).inj; }

 private:
  struct Flow {
    std::string label;
    FaultInjector inj;
  };
  uint64_t delay_ps_;
  LineRate line_;
  FaultInjector inj_;
  std::map<int, Flow> flows_;
  uint64_t lost_ = 0;
  LineRx rx_;
};

}  // namespace ernic
