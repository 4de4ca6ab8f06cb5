// model/datapath/sc: the `model` datapath, the C++ reference models in
// place of rtl/datapath/roce_datapath.sv: seam::tx_frame (roce_tx's bytes)
// with seam::RoceTxTiming (its edges), the async FIFOs' latencies
// (model/datapath/async_fifo_model.h), seam::roce_rx_ref (roce_rx's outputs)
// with kRoceRxDescLatency. Frames are handled whole, at the times these
// give: no process runs per clock cycle.
//
// Edges: "core edge k" is the RTL's k-th rising edge (k * P + P / 2), as in
// RtlDatapath, whose C++ driver this model mirrors (a descriptor queued on
// core model edge j is valid from edge j + 1; a received frame due on CMAC
// model edge x has its beats on edges x .. x + B - 1).
//  TX: descriptor handshake a_i = max(valid, load of the previous frame + 1)
//      (roce_tx holds one descriptor while a frame is assembled); payload
//      valid from the same edge, after the previous frame's payload;
//      RoceTxTiming gives the output beats' edges (m_axis_tready high). The
//      PACKET FIFO loads the frame's first beat at CMAC edge e1 + N (e1: the
//      first CMAC edge after the core edge that wrote its last beat; N =
//      kSyncStages), and not before the CMAC took the previous frame's last
//      beat; the CMAC sees it on the model edge after that.
//  RX: beat b written at CMAC edge w_b is loaded by the core side at
//      r_b = max(e1(w_b) + N, r_{b-1} + 1) and taken by roce_rx at r_b + 1;
//      the descriptor (or the last bypass beat) is registered
//      kRoceRxDescLatency - 1 edges after the last beat's and delivered on
//      the model edge after it.
// Bound against the RTL: exact (0 cycles) with the synchronisers' aperture
// at 0 while the CMAC takes frames as they come and the FIFOs do not fill.
// Not modelled: m_axis_tready stalls inside roce_tx (the FIFO full while the
// CMAC holds frames back for PFC or the line), where the RTL's frames leave
// roce_tx later than the model says; the CMAC then has frames queued, so
// the line's pace decides the wire times in both. Backpressure here: the
// frames handed in and not yet taken by the CMAC stay within what the RTL
// holds (tx() waits): kMaxBeatsHeld beats (roce_tx's beat buffer and the
// FIFO) and kMaxFramesHeld frames (roce_tx's records, its output register
// and held descriptor, the FIFO's frames).
#pragma once
#include <deque>
#include <memory>
#include <string>

#include "model/datapath/roce_tx_ref.h"
#include "model/datapath/tx_path_timing.h"
#include "model/datapath/sc/datapath.h"

namespace ernic {

class ModelDatapath : public RoceDatapath {
 public:
  SC_HAS_PROCESS(ModelDatapath);
  ModelDatapath(sc_core::sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                const std::string& scope, const DatapathConfig& cfg);
  ~ModelDatapath() override;

  static constexpr unsigned kSyncStages = 2;     // rtl/datapath/roce_datapath.sv SYNC_STAGES
  static constexpr size_t kTxFifoDepth = 256;    // rtl/datapath/roce_datapath.sv TX_FIFO_DEPTH (beats)

  void tx(const seam::TxDesc& d, roce::Bytes payload) override;
  void cmac_rx(FrameBytes f, uint64_t start_ps) override;
  const uint8_t* tx_head(size_t* len) override;
  const sc_core::sc_event& tx_head_event() const override { return head_ev_; }
  Taken tx_take(uint32_t bubble_after, uint32_t bubble_cycles) override;
  const char* kind() const override { return "model"; }
  std::string status() const override;

 private:
  struct RxOut {
    uint64_t t_ps;               // delivery (a core model edge)
    bool bypass;
    seam::RxDesc desc;
    roce::Bytes payload;         // or the bypass frame
  };
  void rx_method();
  // Edge index arithmetic: core edge k at k*P + P/2, CMAC edge x at x*C + C/2.
  uint64_t core_edge_after(uint64_t t_ps) const { return timing_.core_edge_after(t_ps); }
  uint64_t cmac_edge_after(uint64_t t_ps) const { return timing_.cmac_edge_after(t_ps); }
  uint64_t cmac_edge_ps(uint64_t x) const { return timing_.cmac_edge_ps(x); }
  uint64_t visible_ps() const;  // the oldest frame not taken: when the CMAC sees it (UINT64_MAX: not yet known)
  void notify_head();           // head_ev_ at that time, once a frame

  // TX
  seam::TxPathTiming timing_;
  std::deque<FrameBytes> txq_;              // frames not yet taken by the CMAC
  uint64_t head_notified_ = 0;              // 1 + the frame whose head_ev_ is notified
  sc_core::sc_event head_ev_, taken_ev_;
  // RX
  uint64_t rx_next_in_ = 0;                 // first CMAC edge the RX stream is free
  uint64_t rx_prev_load_ = 0;               // core edge of the previous beat's load
  std::deque<RxOut> rxq_;
  sc_core::sc_event rx_ev_;
};

}  // namespace ernic
