#include "model/ernic/tx_icrc.h"

#include "Vicrc.h"

namespace ernic {

using namespace sc_core;

TxIcrc::TxIcrc(sc_module_name name, const ClockDomain& core, SimContext& ctx, bool free_running)
    : sc_module(name), core_(core), ctx_(ctx), rtl_(new Vicrc("icrc")), free_running_(free_running) {
  rtl_->clk(clk_);
  rtl_->rst_n(rst_n_);
  rtl_->s_valid(s_valid_);
  rtl_->s_data(s_data_);
  rtl_->s_keep(s_keep_);
  rtl_->s_last(s_last_);
  rtl_->s_ready(s_ready_);
  rtl_->crc_valid(crc_valid_);
  rtl_->crc(crc_);
  const std::string scope = std::string(this->name()) + ".s_axis";
  mon_ = &ctx.protocol.axis(scope, core.name(), core.period_ps(),
                            monitor::AxisRules::seam(/*has_ready=*/true, /*no_bubble=*/false));
  rnd_valid_ = ctx.protocol.stall(scope + ".tvalid", monitor::HandshakeRandomizer::Kind::valid);
  SC_THREAD(reset_thread);
  if (free_running_) SC_THREAD(clock_thread);
}

void TxIcrc::clock_thread() {
  const uint64_t half = core_.period_ps() / 2;
  for (;;) {
    wait(ps(half));
    clk_.write(true);
    wait(ps(core_.period_ps() - half));
    clk_.write(false);
    ++cycles_;
  }
}

void TxIcrc::reset_thread() {
  // Synchronous reset for two cycles from time 0, before any frame.
  rst_n_.write(false);
  monitor::AxisSample in_reset;
  in_reset.reset = true;
  mon_->sample(core_.cycle(), in_reset);
  tick();
  tick();
  rst_n_.write(true);
  mon_->sample(core_.cycle(), monitor::AxisSample{});
  tick();
  reset_done_ = true;
}

TxIcrc::~TxIcrc() = default;

void TxIcrc::tick() {
  if (free_running_) {  // clock_thread makes this cycle's edge
    wait(core_.period());
    return;
  }
  const uint64_t half = core_.period_ps() / 2;
  wait(ps(half));
  clk_.write(true);
  wait(ps(core_.period_ps() - half));
  clk_.write(false);
  ++cycles_;
}

uint32_t TxIcrc::compute(const uint8_t* frame, size_t len) {
  core_.sync();
  while (!reset_done_) tick();  // only if a frame came within the first 3 cycles
  sc_dt::sc_bv<512> beat;
  bool run = false;  // the previous edge was a transfer (the monitor holds it: full, non-last beats)
  for (size_t off = 0; off < len; off += 64) {
    if (const uint32_t h = rnd_valid_.hold()) {  // randomised: s_valid low before this beat
      s_valid_.write(false);
      s_last_.write(false);
      mon_->sample(core_.cycle(), monitor::AxisSample{});
      run = false;
      for (uint32_t i = 0; i < h; ++i) tick();
    }
    const size_t n = std::min<size_t>(64, len - off);
    for (int w = 0; w < 16; ++w) {
      uint32_t word = 0;
      for (int b = 0; b < 4; ++b) {
        size_t i = size_t(w) * 4 + b;
        if (i < n) word |= uint32_t(frame[off + i]) << (8 * b);
      }
      beat.set_word(w, word);
    }
    s_data_.write(beat);
    s_keep_.write(n == 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1));
    s_valid_.write(true);
    s_last_.write(off + 64 >= len);
    // The monitor sees every beat that is not one more full transfer after
    // a transfer (those it takes from the held sample).
    const bool ready = s_ready_.read(), last = off + 64 >= len;
    if (!run || !ready || last) {
      const monitor::AxisBeat b = monitor::axis_beat(frame, len, off / 64);
      monitor::AxisSample m;
      m.valid = true;
      m.ready = ready;
      m.last = b.last;
      m.keep = b.keep;
      m.data = b.data.data();
      mon_->sample(core_.cycle(), m);
    }
    run = ready;
    tick();
  }
  s_valid_.write(false);
  s_last_.write(false);
  mon_->sample(core_.cycle(), monitor::AxisSample{});
  // Wait for the result (fixed latency; bounded so a broken RTL cannot hang).
  for (int i = 0; i < 16; ++i) {
    if (crc_valid_.read()) return crc_.read();
    tick();
  }
  ctx_.error("tx_icrc", "rtl/icrc gave no crc_valid within 16 cycles of the last beat");
  return 0;
}

}  // namespace ernic
