#include "model/datapath/tx_path_timing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ernic::seam {

uint64_t TxPathTiming::push(const TxDesc& d, uint64_t valid) {
  const TxShape s = tx_shape(d);
  if (s.out_beats > cfg_.fifo_depth)
    throw std::invalid_argument("TxPathTiming: a frame of " + std::to_string(s.out_beats) +
                                " beats does not fit the FIFO of " + std::to_string(cfg_.fifo_depth));
  Rec r;
  r.valid = valid;
  r.B = uint32_t(s.body_beats);
  r.O = uint32_t(s.out_beats);
  recs_.push_back(r);
  const uint64_t f = frames() - 1;
  advance();
  return f;
}

void TxPathTiming::take(uint64_t x) {
  if (f_take_ >= frames() || rec(f_take_).head == kUnknown || x <= rec(f_take_).head)
    throw std::logic_error("TxPathTiming: take of a frame whose head is not loaded");
  const Rec& r = rec(f_take_);
  // Beat j is taken at x + j; taking it loads beat j + 1 (rptr moves).
  if (r.O > 1) push_loads(x, r.O - 1);
  prev_take_last_ = x + r.O - 1;
  any_take_ = true;
  ++f_take_;
  advance();
}

void TxPathTiming::advance() {
  const uint64_t N = cfg_.sync_stages;
  for (bool progress = true; progress;) {
    progress = false;
    // Descriptor handshake and load (roce_tx W stage intake).
    while (f_load_ < frames()) {
      Rec& r = rec(f_load_);
      if (r.acc == kUnknown) r.acc = f_load_ ? std::max(r.valid, prev_load_ + 1) : r.valid;
      uint64_t l = r.acc;
      if (f_load_) {
        if (f_asm_ < f_load_) break;  // the previous frame is still being assembled
        l = std::max(l, last_end_);
      }
      if (f_load_ >= cfg_.max_frames) {
        const uint64_t i = f_load_ - cfg_.max_frames;  // its rd_start frees a record
        if (i >= S_.end()) break;
        l = std::max(l, S_.at(i) + 1);
      }
      r.load = prev_load_ = l;
      ++f_load_;
      progress = true;
    }
    // Assembly, one body beat an edge while the beat buffer has room.
    while (f_asm_ < f_load_) {
      Rec& r = rec(f_asm_);
      uint64_t w = (i_asm_ ? w_prev_ : r.load) + 1;
      if (g_asm_ >= cfg_.buf_beats) {
        const uint64_t i = g_asm_ - cfg_.buf_beats;  // its pop frees a slot
        if (i >= P_.end()) break;
        w = std::max(w, P_.at(i) + 1);
      }
      w_prev_ = w;
      ++g_asm_;
      if (++i_asm_ == r.B) {
        r.end = last_end_ = w;
        i_asm_ = 0;
        ++f_asm_;
      }
      progress = true;
    }
    // Read-out into the FIFO, one beat an edge while it is not full.
    while (f_out_ < f_asm_) {
      Rec& r = rec(f_out_);
      if (l_cur_ == kUnknown) {
        if (j_out_ == 0) {
          const uint64_t commit = r.end + kTxCommitAfterEnd;
          l_cur_ = any_out_ ? std::max(t_prev_, commit) : commit;
          S_.push_back(l_cur_);
        } else {
          l_cur_ = t_prev_;
        }
        if (j_out_ < r.B) P_.push_back(l_cur_);
      }
      uint64_t t = l_cur_ + 1;
      if (n_out_ >= cfg_.fifo_depth) {
        const uint64_t i = n_out_ - cfg_.fifo_depth;  // its read frees a FIFO entry
        if (i >= R_.end()) break;
        t = std::max(t, R_.at(i));
      }
      t_prev_ = t;
      any_out_ = true;
      l_cur_ = kUnknown;
      ++n_out_;
      if (++j_out_ == r.O) {
        r.tlast = t;
        j_out_ = 0;
        ++f_out_;
      }
      progress = true;
    }
    // The FIFO loads the oldest untaken frame's first beat once its last
    // beat is seen and the previous frame is gone.
    if (f_take_ < f_out_ && rec(f_take_).head == kUnknown) {
      Rec& r = rec(f_take_);
      uint64_t h = cmac_edge_after(core_edge_ps(r.tlast)) + N;
      if (any_take_) h = std::max(h, prev_take_last_);
      r.head = h;
      push_loads(h, 1);
      progress = true;
    }
  }
  trim();
}

// R_ for FIFO loads at CMAC edges x .. x + n - 1: e1_core + N of each.
// Consecutive CMAC edges are C ps apart, so after the first the core edge
// follows by adding C to a remainder: one division a call, not one a beat
// (it was 8 % of a model run's instructions, issue 17).
void TxPathTiming::push_loads(uint64_t x, uint64_t n) {
  const uint64_t P = cfg_.core_ps, C = cfg_.cmac_ps, N = cfg_.sync_stages;
  uint64_t t = cmac_edge_ps(x);
  for (; n && t < P / 2; --n, t += C) R_.push_back(N);  // before core edge 0 (edge_after: 0)
  if (!n) return;
  uint64_t q = (t - P / 2) / P, rem = (t - P / 2) % P;  // core_edge_after(t) = q + 1
  for (;;) {
    R_.push_back(q + 1 + N);
    if (!--n) return;
    for (rem += C; rem >= P; rem -= P) ++q;
  }
}

void TxPathTiming::trim() {
  if (f_load_ > cfg_.max_frames) S_.drop_below(f_load_ - cfg_.max_frames);
  if (g_asm_ > cfg_.buf_beats) P_.drop_below(g_asm_ - cfg_.buf_beats);
  if (n_out_ > cfg_.fifo_depth) R_.drop_below(n_out_ - cfg_.fifo_depth);
  // The newest frame is always kept (accept() reads it).
  recs_.drop_below(std::min({f_out_, f_take_, frames() - 1}));
}

}  // namespace ernic::seam
