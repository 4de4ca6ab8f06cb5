// model/datapath/sc: the `model` datapath, the C++ reference models in
// place of rtl/datapath/roce_datapath.sv: seam::tx_frame (roce_tx's bytes)
// with seam::TxPathTiming (roce_tx and the core->CMAC FIFO: every edge,
// backpressure included), the RX FIFO's latency (as
// model/datapath/async_fifo_model.h), seam::roce_rx_ref (roce_rx's outputs)
// with kRoceRxDescLatency. Frames are handled whole, at the times these
// give: no process runs per clock cycle (TX costs a few operations per
// frame and per beat, when a frame is handed in or taken).
//
// Edges: "core edge k" is the RTL's k-th rising edge (k * P + P / 2), as in
// RtlDatapath, whose C++ driver this model mirrors (a descriptor queued on
// core model edge j is valid from edge j + 1; a received frame due on CMAC
// model edge x has its beats on edges x .. x + B - 1).
//  TX: tx() gives TxPathTiming the descriptor's first valid edge and
//      returns on the model edge after its handshake; while the handshake
//      depends on frames the CMAC has not taken yet (roce_tx full because
//      the FIFO is full because the line or PFC holds frames back) it waits
//      for the CMAC's takes. The CMAC sees the oldest frame not taken on the
//      model edge after the CMAC edge that loads its first beat into the
//      FIFO's output register (TxPathTiming::head); tx_take at CMAC model
//      edge x takes its beats at edges x .. x + O - 1 (the Cmac model waits
//      them out), which is TxPathTiming's input for the FIFO's read pointer.
//  RX: beat b written at CMAC edge w_b is loaded by the core side at
//      r_b = max(e1(w_b) + N, r_{b-1} + 1) and taken by roce_rx at r_b + 1;
//      the descriptor (or the last bypass beat) is registered
//      kRoceRxDescLatency - 1 edges after the last beat's and delivered on
//      the model edge after it.
// Bound against the RTL: 0. Same frames, same order, same times: every
// descriptor handshake (tx() returns), every frame the CMAC sees and every
// RX delivery on the RTL's edge, with the synchronisers' aperture at 0 (the
// RTL's default), under any backpressure (line pacing, PFC pauses, the
// host's bypass frames sharing the CMAC); so ERNIC makes the same choices
// (round robin, ACK coalescing) and every tap is identical
// (tb/system/test_system_datapath.cpp, kTimeBoundNs = 0, on the saturating
// traffic matrices and a PFC scenario). Outside the bound: randomised
// handshakes (`handshake_random`) stall different signals in the two
// datapaths (the RTL's ports; the CMAC model's own stream here), so their
// times differ by design; a frame longer than the FIFO (the RTL deadlocks).
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
