// model/ernic: the interrupt (see interrupts.h).
#include "model/ernic/interrupts.h"

namespace ernic {

namespace R = regs;

void Interrupts::update() {
  if (pending_) return;
  pending_ = true;
  settle::poke();
}

bool Interrupts::grant() {
  if (!pending_) return false;
  pending_ = false;
  const bool on = (s_.G(R::g::INTSTS) & s_.G(R::g::INTEN)) != 0;
  if (on != level_) {
    level_ = on;
    line_.write(on);
    if (s_.ctx.log)
      s_.ctx.log->intr(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), on, s_.G(R::g::INTSTS));
  }
  s_.ctx.set(s_.wave.intr, on);
  s_.ctx.set(s_.wave.intsts, s_.G(R::g::INTSTS));
  return true;
}

void Interrupts::raise(uint32_t bits) {
  const uint64_t now = ClockDomain::now_ps();
  if (raised_ps_ != now) raised_ps_ = now, raised_bits_ = 0;
  raised_bits_ |= bits;
  s_.G(R::g::INTSTS) |= bits;
  update();
}

void Interrupts::after_w1c() {
  if (raised_ps_ == ClockDomain::now_ps()) s_.G(R::g::INTSTS) |= raised_bits_;
  update();
}

}  // namespace ernic
