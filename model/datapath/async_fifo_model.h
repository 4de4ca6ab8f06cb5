// model/datapath/async_fifo_model.h: timed C++ reference model of the
// AXI4-Stream asynchronous FIFO rtl/cdc/axis_async_fifo.sv (the CDC between
// the core clock and the CMAC clock), for `datapath: model`.
//
// Shape: the same registers as the RTL, stepped one clock edge at a time:
//   - a ring of `depth` beats; binary write and read pointers of
//     log2(depth)+1 bits;
//   - each pointer reaches the other clock domain through `sync_stages`
//     flops: at a read-clock edge at time t the first stage samples the
//     write pointer as it was just before t (a write at the same instant t
//     is not seen: non-blocking semantics), and the read logic at that edge
//     uses the last stage's value from before the edge; likewise for the
//     read pointer on the write side;
//   - s_axis_tready = not full, from registers (the state after the
//     previous write edge);
//   - the read side loads an output register (m_axis_tvalid) whenever a beat
//     is available and the register is empty or being taken;
//   - packet mode: the read side starts a frame (loads its first beat) only
//     when a tlast beat lies among the beats it sees (read pointer up to the
//     synchronised write pointer); it then loads the frame's beats one a
//     cycle (as the output register frees) to its tlast without looking at
//     the write pointer.
//
// Latency (N = sync_stages, T_m = read-clock period): a beat accepted at
// write edge t_w is loaded at read edge e1 + N*T_m, e1 being the first read
// edge strictly after t_w, and can be taken at the read edge after that:
// N+1..N+2 read cycles from t_w to the earliest transfer. Packet mode: a
// frame's first beat is loaded, at the earliest, at e1 + N*T_m of the write
// edge that took its last beat (when stream mode would load that last
// beat); the rest follow one a read cycle. The read
// pointer's way back to s_axis_tready takes the same N stages of write
// clock (e1 on the write clock + N*T_s).
//
// Bound against the RTL: given the same s_axis inputs at each write edge and
// the same m_axis_tready at each read edge:
//   - RTL with APERTURE_PS = 0 (plain flops): identical, edge for edge;
//   - APERTURE_PS > 0: a synchroniser bit sampled in its aperture may
//     resolve to the old value, so a pointer change reaches the other side
//     at the model's edge or one cycle of the sampling clock later, never
//     earlier (Gray pointers: the pointer seen is always one the other side
//     really had). With m_axis_tready held high each beat leaves the RTL at
//     the model's read edge or exactly one read-clock period later, and the
//     difference does not accumulate (tb/rtl/test_cdc_rtl.cpp asserts it
//     over whole runs); s_axis_tready rises at the model's write edge or one
//     write-clock period later. Under read-side backpressure the beats and
//     their order are identical but a beat one cycle late may miss a ready
//     cycle, so times can differ by more.
//   - GRAY = 0 (the binary negative control) has no model: its output is
//     wrong by design.
//
// Usage: call write_edge()/read_edge() at every rising edge of the write and
// read clocks in time order (edges at the same instant in either order:
// visibility goes by time stamps, so the result is the same). Between
// edges, s_tready(), m_tvalid() and m_beat() are the outputs. quiescent()
// tells when an edge with no input activity would change nothing, so a
// caller may skip idle edges. Times are picoseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace datapath {

struct AsyncFifoConfig {
  uint32_t depth = 128;       // beats; a power of 2, >= 4 (RTL DEPTH)
  uint32_t sync_stages = 2;   // synchroniser flops per pointer bit, >= 1 (RTL SYNC_STAGES)
  bool packet = false;        // whole frames only on the read side (RTL PACKET)
};

// Beat: any copyable type; `last_of(beat)` must return its tlast.
template <class Beat, class LastOf>
class AsyncFifoModel {
 public:
  explicit AsyncFifoModel(const AsyncFifoConfig& cfg, LastOf last_of = LastOf())
      : cfg_(cfg), last_of_(std::move(last_of)), mem_(cfg.depth),
        ws_(cfg.sync_stages, 0), rs_(cfg.sync_stages, 0) {
    if (cfg.depth < 4 || (cfg.depth & (cfg.depth - 1)) != 0)
      throw std::invalid_argument("AsyncFifoModel: depth must be a power of 2, >= 4");
    if (cfg.sync_stages < 1) throw std::invalid_argument("AsyncFifoModel: sync_stages >= 1");
    mask_ = 2 * cfg.depth - 1;
  }

  const AsyncFifoConfig& config() const { return cfg_; }

  // s_axis_tready in the current write cycle.
  bool s_tready() const { return ((wptr_ - rptr_s()) & mask_) != cfg_.depth; }

  // Rising write-clock edge at t_ps; `valid`/`beat` are s_axis_tvalid and
  // the beat of the cycle ending here. Returns true if the beat was taken.
  bool write_edge(uint64_t t_ps, bool valid, const Beat& beat) {
    const bool take = valid && s_tready();
    shift(rs_, rchg_, rsrc_, t_ps);
    if (take) {
      mem_[wptr_ & (cfg_.depth - 1)] = beat;
      wptr_ = (wptr_ + 1) & mask_;
      wchg_.emplace_back(t_ps, wptr_);
    }
    return take;
  }

  // m_axis_tvalid and the beat on m_axis_* in the current read cycle.
  bool m_tvalid() const { return out_valid_; }
  const Beat& m_beat() const { return out_; }

  // Rising read-clock edge at t_ps; `ready` is m_axis_tready of the cycle
  // ending here. Returns the beat transferred at this edge, if any.
  std::optional<Beat> read_edge(uint64_t t_ps, bool ready) {
    std::optional<Beat> moved;
    if (out_valid_ && ready) moved = out_;
    const uint32_t wptr_m = ws_.back();  // last stage, before this edge
    const bool avail = cfg_.packet ? in_frame_ || frame_seen(wptr_m) : rptr_ != wptr_m;
    const bool rd = avail && (!out_valid_ || ready);
    if (rd && cfg_.packet) in_frame_ = !last_of_(mem_[rptr_ & (cfg_.depth - 1)]);
    if (rd) {
      out_ = mem_[rptr_ & (cfg_.depth - 1)];
      out_valid_ = true;
      rptr_ = (rptr_ + 1) & mask_;
      rchg_.emplace_back(t_ps, rptr_);
    } else if (ready) {
      out_valid_ = false;
    }
    shift(ws_, wchg_, wsrc_, t_ps);
    return moved;
  }

  // True when edges without input activity (write valid low; any ready)
  // change nothing but time: everything crossed, nothing left to load.
  bool quiescent() const {
    return wchg_.empty() && rchg_.empty() && all_equal(ws_, wptr_) && all_equal(rs_, rptr_) &&
           !out_valid_ && (cfg_.packet ? !in_frame_ && !frame_seen(wptr_) : rptr_ == wptr_);
  }

  // Beats in the FIFO memory (written, not yet loaded into the output register).
  uint32_t occupancy() const { return (wptr_ - rptr_) & mask_; }

 private:
  uint32_t rptr_s() const { return rs_.back(); }

  // One synchroniser edge at time t: the stages shift; the first samples
  // the other side's pointer as it was just before t (changes strictly
  // before t are applied to `src`, the pointer as last sampled).
  static void shift(std::vector<uint32_t>& stages,
                    std::deque<std::pair<uint64_t, uint32_t>>& chg, uint32_t& src, uint64_t t) {
    while (!chg.empty() && chg.front().first < t) {
      src = chg.front().second;
      chg.pop_front();
    }
    for (size_t k = stages.size() - 1; k > 0; --k) stages[k] = stages[k - 1];
    stages[0] = src;
  }

  // Packet mode: a tlast among the beats from rptr_ up to wptr_m.
  bool frame_seen(uint32_t wptr_m) const {
    for (uint32_t p = rptr_; p != wptr_m; p = (p + 1) & mask_)
      if (last_of_(mem_[p & (cfg_.depth - 1)])) return true;
    return false;
  }

  static bool all_equal(const std::vector<uint32_t>& v, uint32_t x) {
    for (uint32_t e : v)
      if (e != x) return false;
    return true;
  }

  AsyncFifoConfig cfg_;
  LastOf last_of_;
  uint32_t mask_ = 0;
  std::vector<Beat> mem_;
  // Write domain.
  uint32_t wptr_ = 0;
  std::vector<uint32_t> rs_;  // read pointer's synchroniser, write clock
  // Read domain.
  uint32_t rptr_ = 0;
  std::vector<uint32_t> ws_;  // write pointer's synchroniser, read clock
  bool out_valid_ = false;
  Beat out_{};
  bool in_frame_ = false;     // packet: a frame started, its tlast not yet loaded
  // Pointer changes not yet sampled by the other side: (time, new value).
  std::deque<std::pair<uint64_t, uint32_t>> wchg_, rchg_;
  uint32_t wsrc_ = 0, rsrc_ = 0;  // each pointer as the other side's first stage last saw it
};

}  // namespace datapath
