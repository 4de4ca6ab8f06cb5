// model/ernic: the shadow-doorbell extension (see shadow_db.h).
#include "model/ernic/shadow_db.h"

#include <fmt/format.h>

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;

namespace {
// A poll is progress only when it finds a doorbell (poll()).
DmaTiming quiet(DmaTiming t) {
  t.progress = false;
  return t;
}
}  // namespace

ShadowDb::ShadowDb(sc_module_name name, ErnicShared& s, std::function<void(uint32_t, uint32_t)> take)
    : sc_module(name),
      s_(s),
      take_(std::move(take)),
      dma_(s.core, s.mem, s.ctx, s.scope + ".shadow_db_m_axi", s.cfg.node, "shadow_db_m_axi", quiet(s.cfg.dma)),
      last_(s.cfg.num_qp + 1, 0),
      gen_(s.cfg.num_qp + 1, 0) {
  SC_THREAD(poll_thread);
}

bool ShadowDb::axi_doorbells(uint32_t n) const {
  return s_.qps[n].enabled && (s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_HW_HANDSHAKE_DIS.bit());
}

bool ShadowDb::active() const {
  if (!(s_.G(R::g::XRNICCONF) & FLD::XRNICCONF_EN.bit())) return false;
  for (uint32_t n = 2; n <= s_.cfg.num_qp; ++n)
    if (axi_doorbells(n)) return true;
  return false;
}

void ShadowDb::on_enable(uint32_t n) {
  if (n < 2) return;
  last_[n] = 0;
  ++gen_[n];
  wake();
}

void ShadowDb::poll_thread() {
  const uint64_t P = config().poll_ns * 1000;
  for (;;) {
    if (!active()) {
      wait(wake_ev_);
      continue;
    }
    const uint64_t now = ClockDomain::now_ps(), next = (now + P - 1) / P * P;
    if (next > now) {
      wait(sc_time(double(next - now), SC_PS), wake_ev_);
      continue;
    }
    poll();
  }
}

// One read of the entries of QPs 2..num_qp; every change is a doorbell.
void ShadowDb::poll() {
  const uint32_t nq = s_.cfg.num_qp;
  const std::vector<uint32_t> gen = gen_;
  std::vector<uint8_t> b(bytes_per_poll()), got(b.size());
  ++c_.polls;
  // The entries as host memory holds them when the read is issued (the
  // completer reads them as the request arrives); the NIC has them when
  // the read's last beat is in (X-SHADOW-DB-2).
  s_.core.sync();
  if (!s_.mem.in_range(entry_addr(2), b.size())) return;
  s_.mem.read(entry_addr(2), b.data(), b.size());
  if (!dma_.read(entry_addr(2), got.data(), got.size())) return;
  bool any = false;
  for (uint32_t n = 2; n <= nq; ++n) {
    if (gen[n] != gen_[n] || !axi_doorbells(n)) continue;  // enabled meanwhile: the read may predate its entry's 0
    const size_t o = 4 * size_t(n - 2);
    const uint32_t v = FLD::SQPIi_VALUE.get(uint32_t(b[o]) | uint32_t(b[o + 1]) << 8 | uint32_t(b[o + 2]) << 16 |
                                            uint32_t(b[o + 3]) << 24);
    if (v == last_[n]) continue;
    last_[n] = v;
    ++c_.doorbells;
    any = true;
    if (s_.ctx.log)
      s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), n, "shadow_sq_pi",
                        std::to_string(v));
    take_(n, v);
  }
  if (any) s_.ctx.bump();  // a doorbell found: progress (watchdog); a poll that finds none is not
}

}  // namespace ernic
