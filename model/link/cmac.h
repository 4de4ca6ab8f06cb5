// model/link: the 100G Ethernet MAC (Xilinx CMAC) and the wire between two
// of them.
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
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "model/link/fault.h"
#include "model/link/pcap_writer.h"
#include "model/system/clock.h"
#include "model/system/sim_context.h"

namespace ernic {

using FrameBytes = std::vector<uint8_t>;

struct LinkParams {
  double rate_gbps = 100.0;
  uint64_t delay_ps = 100000;     // wire propagation delay (100 ns = about 20 m of fibre)
  uint32_t tx_fifo_frames = 4;    // depth of the core->CMAC async FIFO, in frames
  uint32_t cdc_cycles = 4;        // async FIFO crossing: two-flop synchroniser + pointer compare
  uint32_t rx_latency_cycles = 8; // CMAC RX pipeline after the last byte (assumption A-CMAC-2)
  static constexpr uint32_t kPreambleSfd = 8, kFcs = 4, kIfg = 12;
};

// Packets and bytes seen, by BTH opcode (non-RoCE frames under 0x100).
struct OpcodeCounts {
  struct C { uint64_t packets = 0, bytes = 0; };
  std::map<uint32_t, C> by_opcode;
  uint64_t packets = 0, bytes = 0;
  void add(const FrameBytes& f);
};

class Wire;

class Cmac : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Cmac);
  Cmac(sc_core::sc_module_name name, const ClockDomain& cmac_clk, const ClockDomain& core_clk,
       SimContext& ctx, const std::string& scope, LinkParams p);

  // From the NIC's TX path (core domain). Blocks the calling thread while
  // the async FIFO is full.
  void tx_push(FrameBytes frame);
  bool tx_idle() const { return fifo_.empty() && !tx_busy_; }

  // Wiring (before sc_start).
  Wire* wire_out = nullptr;
  std::function<void(FrameBytes)> rx_sink;   // into the NIC's RX path (core domain)
  PcapWriter* tap_tx = nullptr;
  PcapWriter* tap_rx = nullptr;
  PcapWriter* tap_wire = nullptr;            // shared view of every transmitted frame
  // Observers of the two taps (expectations, transaction log); same frames,
  // same times as the pcap files.
  std::function<void(const FrameBytes&, uint64_t first_byte_ps)> on_tx, on_rx;

  // Called by the wire when the last byte of a frame has arrived;
  // first_byte_ps = arrival of the first byte after the SFD.
  void rx_arrive(FrameBytes frame, uint64_t first_byte_ps);

  const OpcodeCounts& tx_counts() const { return tx_counts_; }
  const OpcodeCounts& rx_counts() const { return rx_counts_; }
  const LinkParams& params() const { return p_; }
  uint64_t ps_per_byte_x1000() const { return ps_per_byte_x1000_; }

 private:
  void tx_thread();
  void rx_thread();
  uint64_t line_ps(uint64_t bytes) const { return (bytes * ps_per_byte_x1000_ + 999) / 1000; }

  const ClockDomain& cmac_clk_;
  const ClockDomain& core_clk_;
  SimContext& ctx_;
  LinkParams p_;
  uint64_t ps_per_byte_x1000_;   // 8000 / rate_gbps, in 1/1000 ps
  std::deque<FrameBytes> fifo_;
  sc_core::sc_event fifo_push_ev_, fifo_pop_ev_;
  bool tx_busy_ = false;
  uint64_t line_free_ps_ = 0;
  struct RxItem { FrameBytes f; uint64_t first_byte_ps; uint64_t ready_ps; };
  std::deque<RxItem> rxq_;
  sc_core::sc_event rx_ev_;
  OpcodeCounts tx_counts_, rx_counts_;
  int v_tx_tvalid_, v_tx_tready_, v_tx_tlast_, v_rx_tvalid_, v_rx_tlast_, v_tx_fifo_level_;
};

// One direction of the link: delivers frames after the propagation delay,
// through the scenario's fault rules (model/link/fault.h). A frame that a
// rule duplicates or releases (reorder) follows the frame that caused it
// back to back on the line (its own serialisation time plus the IFG); a
// delayed frame arrives later by the rule's delay and may be overtaken.
// While the link is down every frame entering it is lost.
class Wire : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Wire);
  Wire(sc_core::sc_module_name name, uint64_t delay_ps, double rate_gbps, uint64_t seed);
  Cmac* dst = nullptr;
  std::string label;                        // "A->B"
  // Every fault applied (and every frame lost to a down link), as it happens.
  std::function<void(const FaultApplied&)> on_fault;
  // first_byte_ps / last_byte_ps: when the transmitter put them on the line.
  void send(FrameBytes f, uint64_t first_byte_ps, uint64_t last_byte_ps);
  uint64_t delay_ps() const { return delay_ps_; }
  FaultInjector& faults() { return inj_; }
  void set_link_up(bool up);
  uint64_t frames_lost() const { return lost_; }

 private:
  void thread();
  struct Item { FrameBytes f; uint64_t first_ps; };
  uint64_t delay_ps_;
  uint64_t ps_per_byte_x1000_;
  FaultInjector inj_;
  std::map<std::pair<uint64_t, uint64_t>, Item> q_;   // (arrival of last byte, sequence)
  uint64_t seq_ = 0, lost_ = 0;
  uint64_t rx_line_free_ = 0;   // the receiving line is busy until then
  sc_core::sc_event ev_;
};

}  // namespace ernic
