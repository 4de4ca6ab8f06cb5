// model/datapath: timed reference model of the whole TX path of
// rtl/datapath/roce_datapath.sv, rtl/roce_tx feeding the core->CMAC
// axis_async_fifo (PACKET, DEPTH beats, SYNC_STAGES), including the
// backpressure that reaches roce_tx and its descriptor handshake when the
// FIFO fills (the CMAC holding frames for the line's pace or PFC). Plain
// C++ (no SystemC), one step per frame and per beat, never per idle cycle.
//
// Edges: "core edge k" is the RTL's k-th rising core edge (k * P + P / 2),
// "CMAC edge x" its x-th CMAC edge (x * C + C / 2); periods in ps.
// Inputs: each descriptor with the first core edge it is valid (it stays
// valid until taken; its payload is valid from then on, one beat after the
// other, as RtlDatapath presents it), and each frame's take by the CMAC
// (m_axis_tready high from CMAC edge x for the frame's O beats).
// The recurrences (B body beats, O output beats per frame; global indices:
// f frames, g body beats, n output beats = FIFO beats; max over the terms
// that exist):
//   acc_f   = max(valid_f, load_{f-1} + 1)             s_desc handshake (one
//                                                      descriptor held)
//   load_f  = max(acc_f, end_{f-1}, S_{f-32} + 1)      assembly starts (frames_full)
//   W_g     = max(W_{g-1} or load_f, P_{g-256}) + 1    body beat assembled (buf_full)
//   end_f   = W of its last body beat; commit_f = end_f + 2
//   L_n     = first beat: max(T_{n-1}, commit_f) = S_f; else T_{n-1}
//                                                      output register loaded
//   P_g     = L_n of the output beat that carries body beat g (popped)
//   T_n     = max(L_n + 1, e1_core(R_{n-256}) + N)     written into the FIFO
//                                                      (s_axis_tready: not full)
//   R_n     = first beat: max(e1_cmac(T_last) + N, X_last of frame f-1);
//             else X_{n-1}                             loaded into the FIFO's
//                                                      output register (rptr)
//   X_n     = x_f + j (beat j)                         taken by the CMAC
// e1_core(R) / e1_cmac(T): the first edge of that clock strictly after the
// other clock's edge (a pointer changed at the same instant is not seen).
// The CMAC sees frame f's first beat from the model edge after R (its
// "head"). Everything for frame f depends only on earlier frames, their
// takes and f's descriptor, so the values become known in order as the
// inputs arrive, and each is known strictly before its time comes (every
// unknown input lies in the future).
//
// Bound against the RTL (APERTURE_PS = 0, the default), given the same
// descriptors and takes: every edge above is exact (0 cycles), under any
// backpressure; tests: tb/system/test_system_datapath.cpp (whole runs,
// frame times on the taps), tb/rtl/test_tx_path_rtl.cpp (every edge against
// the Verilated roce_datapath). Not modelled: the synchronisers' aperture
// (APERTURE_PS > 0 may add a cycle per crossing), reset (the block is out
// of reset before the first descriptor), payload gaps (RtlDatapath presents
// a frame's payload from its descriptor's valid edge without a gap), a frame
// longer than DEPTH beats (the RTL deadlocks).
#pragma once
#include <cstddef>
#include <cstdint>

#include "model/datapath/roce_tx_ref.h"
#include "model/datapath/seam.h"
#include "model/sim/indexed_ring.h"

namespace ernic::seam {

class TxPathTiming {
 public:
  static constexpr uint64_t kUnknown = UINT64_MAX;
  struct Config {
    uint64_t core_ps = 5000;           // core clock period
    uint64_t cmac_ps = 3103;           // CMAC clock period
    unsigned sync_stages = 2;          // roce_datapath SYNC_STAGES
    size_t fifo_depth = 256;           // roce_datapath TX_FIFO_DEPTH (beats)
    size_t buf_beats = kTxBufBeats;    // roce_tx 2**BUF_AW
    size_t max_frames = kTxMaxFrames;  // roce_tx 2**REC_AW
  };
  explicit TxPathTiming(const Config& cfg) : cfg_(cfg) {}

  // A descriptor, valid from core edge `valid` (not before the previous
  // one's handshake); returns its frame index (0, 1, ...).
  uint64_t push(const TxDesc& d, uint64_t valid);
  // The CMAC takes the oldest frame not yet taken, its first beat at CMAC
  // edge x and one beat a CMAC edge after; its head must be known and x
  // after it (x > head(f)).
  void take(uint64_t x);

  // Results for frame f (kUnknown until the inputs so far decide them; f
  // must be the newest frame for accept, the oldest not taken for head).
  uint64_t accept(uint64_t f) const { return rec(f).acc; }
  uint64_t head(uint64_t f) const { return rec(f).head; }
  uint64_t last_write(uint64_t f) const { return rec(f).tlast; }  // core edge of its last FIFO write
  uint64_t frames() const { return recs_.end(); }
  uint64_t first_kept() const { return recs_.base(); }  // older frames' results are dropped
  uint64_t taken() const { return f_take_; }
  size_t out_beats(uint64_t f) const { return rec(f).O; }

  // Edge arithmetic.
  uint64_t core_edge_ps(uint64_t k) const { return k * cfg_.core_ps + cfg_.core_ps / 2; }
  uint64_t cmac_edge_ps(uint64_t x) const { return x * cfg_.cmac_ps + cfg_.cmac_ps / 2; }
  uint64_t core_edge_after(uint64_t t_ps) const { return edge_after(t_ps, cfg_.core_ps); }
  uint64_t cmac_edge_after(uint64_t t_ps) const { return edge_after(t_ps, cfg_.cmac_ps); }

 private:
  struct Rec {
    uint64_t valid = 0;
    uint32_t B = 0, O = 0;
    uint64_t acc = kUnknown, load = kUnknown, end = kUnknown, tlast = kUnknown, head = kUnknown;
  };
  static uint64_t edge_after(uint64_t t, uint64_t p) { return t < p / 2 ? 0 : (t - p / 2) / p + 1; }
  const Rec& rec(uint64_t f) const { return recs_.at(f); }
  Rec& rec(uint64_t f) { return recs_.at(f); }
  void advance();
  void push_loads(uint64_t x, uint64_t n);
  void trim();

  Config cfg_;
  IndexedRing<Rec> recs_;  // frames from min(f_out_, f_take_) on
  // Values looked up 32 frames / 256 beats back.
  // rd_start per frame; pop per body beat; per FIFO load (R_n, a CMAC
  // edge) the core edge that sees the entry it frees: e1_core(R_n) + N.
  IndexedRing<uint64_t> S_, P_, R_;
  // Cursors: next frame to load, to assemble (body beat i_asm_, global
  // g_asm_), to read out (output beat j_out_, global n_out_), to take.
  uint64_t f_load_ = 0, prev_load_ = 0;
  uint64_t f_asm_ = 0, i_asm_ = 0, g_asm_ = 0, w_prev_ = 0, last_end_ = 0;
  uint64_t f_out_ = 0, j_out_ = 0, n_out_ = 0, t_prev_ = 0, l_cur_ = kUnknown;
  bool any_out_ = false;
  uint64_t f_take_ = 0, prev_take_last_ = 0;
  bool any_take_ = false;
};

}  // namespace ernic::seam
