// model/ernic: the interrupt (see interrupts.h).
#include "model/ernic/interrupts.h"

namespace ernic {

namespace R = regs;

void Interrupts::update() {
  const bool on = (s_.G(R::g::INTSTS) & s_.G(R::g::INTEN)) != 0;
  if (on != level_) {
    level_ = on;
    line_.write(on);
    if (s_.ctx.log)
      s_.ctx.log->intr(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), on, s_.G(R::g::INTSTS));
  }
  s_.ctx.set(s_.wave.intr, on);
  s_.ctx.set(s_.wave.intsts, s_.G(R::g::INTSTS));
}

void Interrupts::raise(uint32_t bits) {
  s_.G(R::g::INTSTS) |= bits;
  update();
}

}  // namespace ernic
