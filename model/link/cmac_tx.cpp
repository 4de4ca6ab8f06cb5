// model/link: the CMAC's TX path (see cmac.h): its frame FIFO or a datapath
// module's, frame boundaries, the beats' timing, the line and the wire, TX
// underflow.
#include <fmt/format.h>

#include "model/link/cmac.h"
#include "model/link/cmac_describe.h"
#include "model/sim/deadline.h"

namespace ernic {

using namespace sc_core;
using cmac_detail::describe;

void Cmac::tx_push(FrameBytes frame) {
  ctx_.set(v_fifo_s_tvalid_, 1);
  while (fifo_.size() >= p_.tx_fifo_frames) wait(fifo_pop_ev_);
  fifo_.push_back(std::move(frame));
  ctx_.set(v_fifo_s_tvalid_, 0);
  ctx_.set(v_fifo_s_tready_, fifo_.size() < p_.tx_fifo_frames);
  fifo_ready_.push_back(ClockDomain::now_ps() + cmac_clk_.ps_to_edge() + p_.cdc_cycles * cmac_clk_.period_ps());
  ctx_.set(v_tx_fifo_level_, fifo_.size());
  fifo_push_ev_.notify(SC_ZERO_TIME);
}

void Cmac::tx_thread() {
  if (tx_source) return tx_thread_src();
  // The next pause refresh is a deadline that frames push back: a Deadline
  // leaves no timeout in the timed queue per frame (model/sim/deadline.h).
  Deadline idle{&fifo_push_ev_, &pause_ev_};
  for (;;) {
    // Idle until a data frame is queued or a pause frame is due.
    for (;;) {
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t r = next_refresh_ps();
      if (!fifo_.empty() || r <= now) break;
      if (r == UINT64_MAX)
        wait(fifo_push_ev_ | pause_ev_);
      else
        idle.wait_until(r);
    }
    tx_busy_ = true;
    // Async FIFO crossing: a data frame is visible to the CMAC domain after
    // cdc_cycles of its clock. Pause frames are made in the CMAC domain.
    if (!fifo_.empty())
      cmac_clk_.wait_cycles(p_.cdc_cycles);
    else
      cmac_clk_.sync();
    wait_line_free();
    const uint64_t now = ClockDomain::now_ps();
    // A frame boundary: MAC control frames go ahead of queued data.
    if (auto pf = take_pause_frame(now)) {
      transmit(std::move(*pf), 0, 0, /*axis=*/false);
      tx_busy_ = false;
      continue;
    }
    if (fifo_.empty()) {
      tx_busy_ = false;
      continue;
    }
    // A paused traffic class waits here, and the FIFO behind it.
    const uint16_t stat = stat_rx_pause_req();
    if (tx_hold && tx_hold(fifo_.front(), stat)) {
      hold(fifo_.front(), stat, now);
      continue;
    }
    release(stat, now);
    transmit_host_frame();
    tx_busy_ = false;
  }
}

// TX with a datapath module (tx_source): its frames, and the host's bypass
// frames (tx_push: non_roce_dma_s_axis, merged into cmac_m_axis after their
// own crossing of cdc_cycles), taken in turn at frame boundaries when both
// wait; a held class (PFC) does not hold the other source.
void Cmac::tx_thread_src() {
  bool prefer_host = false;
  auto host_visible = [this](uint64_t now) { return !fifo_.empty() && fifo_ready_.front() <= now; };
  Deadline idle{&tx_source->tx_head_event(), &fifo_push_ev_, &pause_ev_};  // as in tx_thread
  for (;;) {
    for (;;) {
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t r = next_refresh_ps();
      size_t n = 0;
      if (tx_source->tx_head(&n) || host_visible(now) || r <= now) break;
      uint64_t w = r;
      if (!fifo_.empty()) w = std::min(w, fifo_ready_.front());
      if (w == UINT64_MAX)
        wait(tx_source->tx_head_event() | fifo_push_ev_ | pause_ev_);
      else
        idle.wait_until(w);
    }
    tx_busy_ = true;
    cmac_clk_.sync();
    wait_line_free();
    const uint64_t now = ClockDomain::now_ps();
    if (auto pf = take_pause_frame(now)) {
      transmit(std::move(*pf), 0, 0, /*axis=*/false);
      tx_busy_ = false;
      continue;
    }
    size_t n = 0;
    const uint8_t* h = tx_source->tx_head(&n);
    const bool host_vis = host_visible(now);
    if (!h && !host_vis) {
      tx_busy_ = false;
      continue;
    }
    // The datapath's frame is judged by its first beat.
    FrameBytes head;
    if (h) head.assign(h, h + n);
    const uint16_t stat = stat_rx_pause_req();
    const bool src_ok = h && !(tx_hold && tx_hold(head, stat));
    const bool host_ok = host_vis && !(tx_hold && tx_hold(fifo_.front(), stat));
    if (!src_ok && !host_ok) {
      hold(h ? head : fifo_.front(), stat, now);
      continue;
    }
    release(stat, now);
    const bool take_host = host_ok && (!src_ok || prefer_host);
    prefer_host = !take_host;
    if (take_host) {
      transmit_host_frame();
      tx_busy_ = false;
      continue;
    }
    const bool plan = bubble_.armed && tx_index_ >= bubble_.frame;
    CmacTxSource::Taken t = tx_source->tx_take(plan ? bubble_.after_beat : 0, plan ? bubble_.cycles : 0);
    if (t.streamed) {
      // The datapath moves (and traces) its beats from now on; the line
      // takes it from its first beat.
      if (t.bubble_cycles) bubble_.armed = false;
      const uint64_t index = tx_index_++;
      put_on_line(t.f, t.t0_ps, t.bubble_cycles > 0);
      if (t.bubble_cycles) {
        const uint64_t at = t.t0_ps + (uint64_t(t.bubble_after) + 1) * cmac_clk_.period_ps();
        streamed_underflow_ = StreamedUnderflow{t.f, index, t.bubble_after, t.bubble_cycles, at};
        const uint64_t t_now = ClockDomain::now_ps();
        streamed_underflow_ev_.notify(ps(at > t_now ? at - t_now : 0));
      }
    } else {
      transmit_with_bubble(std::move(t.f));
    }
    tx_busy_ = false;
  }
}

// Waits for the line (the previous frame's IFG) to be free, tready low meanwhile.
void Cmac::wait_line_free() {
  const uint64_t now = ClockDomain::now_ps();
  if (line_free_ps_ > now) {
    ctx_.set(v_tx_tready_, 0);
    wait(ps(line_free_ps_ - now));
    cmac_clk_.sync();
    ctx_.set(v_tx_tready_, 1);
  }
}

// The frame at the head of the own FIFO, with the test hook's bubble.
void Cmac::transmit_host_frame() {
  FrameBytes f = std::move(fifo_.front());
  fifo_.pop_front();
  fifo_ready_.pop_front();
  ctx_.set(v_tx_fifo_level_, fifo_.size());
  ctx_.set(v_fifo_s_tready_, 1);
  fifo_pop_ev_.notify(SC_ZERO_TIME);
  transmit_with_bubble(std::move(f));
}

void Cmac::transmit_with_bubble(FrameBytes f) {
  uint32_t after = 0, cycles = 0;
  const uint64_t beats = (f.size() + 63) / 64;
  if (bubble_.armed && tx_index_ >= bubble_.frame && beats > uint64_t(bubble_.after_beat) + 1) {
    after = bubble_.after_beat;
    cycles = bubble_.cycles;
    bubble_.armed = false;
  }
  transmit(std::move(f), after, cycles);
}

// The line side of a frame whose first beat the MAC took at t0 (a CMAC
// edge): the taps and observers, the wire (faults are decided now), the
// line busy until its IFG is over; a TX underflow is a run error.
void Cmac::put_on_line(const FrameBytes& f, uint64_t t0, bool underflow) {
  const uint64_t first_byte = t0 + line_ps(LinkParams::kPreambleSfd);
  const uint64_t last_byte = t0 + line_ps(LinkParams::kPreambleSfd + f.size() + LinkParams::kFcs);
  line_free_ps_ = last_byte + line_ps(LinkParams::kIfg);
  tx_counts_.add(f);
  if (tap_tx) tap_tx->write(f.data(), f.size(), first_byte);
  if (tap_wire) tap_wire->write_ordered(f.data(), f.size(), first_byte, tap_wire_source);
  if (on_tx) on_tx(f, first_byte);
  ctx_.bump();
  if (wire_out) wire_out->send(f, first_byte, last_byte, underflow);
}

void Cmac::report_streamed_underflow() {
  if (!streamed_underflow_) return;
  const StreamedUnderflow& u = *streamed_underflow_;
  report_underflow(u.f, u.index, u.after, u.cycles, u.t_ps);
  streamed_underflow_.reset();
}

void Cmac::report_underflow(const FrameBytes& f, uint64_t index, uint32_t bubble_after, uint32_t bubble_cycles,
                            uint64_t t_bubble) {
  const uint64_t beats = (f.size() + 63) / 64;
  ++pfc_.tx_underflows;
  const std::string what = fmt::format(
      "TX underflow on node {} at {:.3f} ns: tx_axis_tvalid low for {} CMAC cycles after beat {} of {} of TX "
      "frame #{} ({} bytes, {}); the CMAC aborts the frame (stomped FCS, the receiver discards it)",
      node, double(t_bubble) / 1000.0, bubble_cycles, bubble_after, beats, index, f.size(), describe(f));
  ctx_.error(scope_, what);
  log_state("tx_underflow", what);
}

// Puts one frame on the line now (a frame boundary, the line free).
void Cmac::transmit(FrameBytes f, uint32_t bubble_after, uint32_t bubble_cycles, bool axis) {
  const uint64_t bpb = 64;  // bytes a beat on the 512-bit stream
  // Randomised handshake: the NIC's stream raises TVALID late (the frame starts later).
  if (axis)
    if (const uint32_t h = tx_tvalid_stall_.hold()) wait(cmac_clk_.cycles(h));
  const uint64_t index = tx_index_++;
  const uint64_t t0 = ClockDomain::now_ps();
  const uint64_t beats = (f.size() + bpb - 1) / bpb;
  // The AXI4-Stream into the MAC must deliver every beat of a frame back
  // to back once its first beat is taken: a bubble is a TX underflow.
  const bool underflow = bubble_cycles > 0 && beats > uint64_t(bubble_after) + 1;
  // The frame is on the line from t0 (cut-through: the MAC serialises the
  // beats as they come); the wire sees it now, faults are decided now.
  put_on_line(f, t0, underflow);
  // AXI4-Stream beats: one a cycle, tlast on the last; TREADY low where the
  // randomised handshake stalls; TVALID low for the underflow hook's bubble.
  std::vector<AxisRun> runs;
  for (uint64_t i = 0; i < beats; ++i) {
    if (underflow && i == uint64_t(bubble_after) + 1) runs.push_back({false, true, i, bubble_cycles});
    if (axis)
      if (const uint32_t h = tx_tready_stall_.hold()) runs.push_back({true, false, i, h});
    add_beat(runs, i);
  }
  walk_axis(f, runs, axis ? mon_tx_ : nullptr, v_tx_tvalid_, v_tx_tready_, v_tx_tlast_, v_tx_tkeep_, [&] {
    // Detected on the first cycle tvalid is low inside the frame.
    report_underflow(f, index, bubble_after, bubble_cycles, ClockDomain::now_ps());
  });
}

}  // namespace ernic
