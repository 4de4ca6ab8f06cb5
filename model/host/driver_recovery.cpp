// model/host: the driver's flows that stop a QP's traffic (PG332 ch.6): QP
// deletion, fatal recovery, and the switch to HW handshake.
#include "model/host/driver.h"

#include <fmt/format.h>

#include "model/regs/fatal.h"

namespace ernic::host {

namespace R = regs;
namespace FLD = regs::fld;

void Driver::delete_qp(Connection& c) {
  // PG332 ch.6, QP deletion: wait until the SQ and the outstanding queue are
  // empty and every WQE has completed, then with SW override clear the
  // enable, zero the pointers and mark the QP under recovery.
  const uint32_t n = c.qpn;
  const uint64_t deadline = now() + uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (;;) {
    const uint32_t st = rd(qreg(n, R::q::STATQPi));
    const uint32_t head = rd(qreg(n, R::q::CQHEADi));
    const uint32_t pi = rd(qreg(n, R::q::SQPIi));
    const std::optional<uint32_t> want = shadow_pi(c);
    if ((st & FLD::STATQPi_SQ_EMPTY.bit()) && (st & FLD::STATQPi_OSQ_EMPTY.bit()) && head == pi && (!want || pi == *want))
      break;
    if (st & FLD::STATQPi_FATAL.bit()) break;  // nothing more will complete
    if (now() >= deadline)
      fail(fmt::format("QP{} deletion: SQ/outstanding queue not empty after {} us (STATQP=0x{:08x} CQHEAD={} SQPI={})",
                       n, cfg_.cm_timeout_us, st, head, pi));
    sleep_ps(1000000);
  }
  const uint32_t adconf = rd(greg(R::g::XRNICADCONF));
  wr(greg(R::g::XRNICADCONF), cfg_.layout.swovr_qpn.set(adconf | FLD::XRNICADCONF_SW_OVERRIDE.bit(), n));
  const uint32_t qpconf = rd(qreg(n, R::q::QPCONFi));
  wr(qreg(n, R::q::QPCONFi), qpconf & ~FLD::QPCONFi_EN.bit());
  for (uint32_t off : {R::q::RQWPTRDBADDi, R::q::SQPIi, R::q::CQHEADi, R::q::RQCIi, R::q::STATRQPIDBi,
                       R::q::STATCURSQPTRi, R::q::SQPSNi, R::q::LSTRQREQi, R::q::STATMSNi})
    wr(qreg(n, off), 0);
  wr(qreg(n, R::q::QPCONFi), (qpconf & ~FLD::QPCONFi_EN.bit()) | FLD::QPCONFi_UNDER_RECOVERY.bit());
  wr(greg(R::g::XRNICADCONF), adconf);
  clear_shadow_doorbell(n);  // X-SHADOW-DB-3: a reused QPN never rings from this QP's value
  set_state(c, VerbsState::Reset);
  qpn_used_[n] = false;
  fatal_codes_.erase(n);  // a new QP on this QPN starts without one
}

uint32_t Driver::fatal_code(uint32_t qpn) {
  if (!initialised_) fail("fatal_code before init");
  // 64-bit entries, QPN[31:16] | code[15:0] in the low word, written up to
  // IPKTERRQWPTR.
  const uint32_t wp = FLD::IPKTERRQWPTR_VALUE.get(rd(greg(R::g::IPKTERRQWPTR)));
  for (; errq_rd_ != wp; errq_rd_ = (errq_rd_ + 1) & FLD::IPKTERRQWPTR_VALUE.max()) {
    const uint32_t e = mem_read32(errq_ + uint64_t(errq_rd_ % errq_n_) * pg332::kErrQueueEntryBytes);
    fatal_codes_[pg332::err_entry_qpn(e)] = pg332::err_entry_code(e);
  }
  auto it = fatal_codes_.find(qpn);
  return it == fatal_codes_.end() ? 0 : it->second;
}

uint32_t Driver::recover_fatal(Connection& c) {
  const uint32_t n = c.qpn;
  if (!n || c.state == VerbsState::Reset) fail("recover: the connection has no QP");
  // 1. Find the QP and its code in the error-status queue; stop ringing
  //    SQPI (this driver posts nothing while recovering).
  const uint32_t code = fatal_code(n);
  // 2. Under recovery; wait for the SQ and outstanding queue to empty, every
  //    WQE to complete and the response handler's doorbell check.
  const uint32_t qpconf = rd(qreg(n, R::q::QPCONFi));
  wr(qreg(n, R::q::QPCONFi), qpconf | FLD::QPCONFi_UNDER_RECOVERY.bit());
  const uint64_t deadline = now() + uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (;;) {
    const uint32_t st = rd(qreg(n, R::q::STATQPi));
    const bool idle = (st & FLD::STATQPi_SQ_EMPTY.bit()) && (st & FLD::STATQPi_OSQ_EMPTY.bit()) &&
                      rd(qreg(n, R::q::CQHEADi)) == rd(qreg(n, R::q::SQPIi)) &&
                      (rd(greg(R::g::RESPHNDSTS)) & (1u << 16));
    if (idle) break;
    if (now() >= deadline) fail(fmt::format("QP{} recovery: the QP did not drain", n));
    sleep_ps(1000000);
  }
  // 3. Disable, keeping the recovery bit.
  wr(qreg(n, R::q::QPCONFi), (qpconf | FLD::QPCONFi_UNDER_RECOVERY.bit()) & ~FLD::QPCONFi_EN.bit());
  // 4. SW override: zero the pointers; wait until CQHEAD reads 0.
  const uint32_t adconf = rd(greg(R::g::XRNICADCONF));
  wr(greg(R::g::XRNICADCONF), cfg_.layout.swovr_qpn.set(adconf | FLD::XRNICADCONF_SW_OVERRIDE.bit(), n));
  for (uint32_t off : {R::q::STATRQPIDBi, R::q::STATRQBUFCAi, R::q::STATRQBUFCAMSBi, R::q::RQCIi, R::q::STATCURSQPTRi,
                       R::q::SQPIi, R::q::SQPSNi, R::q::LSTRQREQi, R::q::STATMSNi, R::q::CQHEADi})
    wr(qreg(n, off), 0);
  while (rd(qreg(n, R::q::CQHEADi)) != 0) sleep_ps(100000);
  // 5 and 6 (new PSNs, destination, QPCONF enable with [6] cleared) are the
  // next connection's QP programming; end the SW override here.
  wr(greg(R::g::XRNICADCONF), adconf);
  clear_shadow_doorbell(n);  // X-SHADOW-DB-3: a reused QPN never rings from this QP's value
  set_state(c, VerbsState::Reset);
  qpn_used_[n] = false;
  fatal_codes_.erase(n);  // a new QP on this QPN starts without one
  return code;
}

void Driver::clear_shadow_doorbell(uint32_t n) {
  if (cfg_.shadow_sq_db) mem_write32(shadow_entry(n), 0);
}

std::optional<uint32_t> Driver::shadow_pi(const Connection& c) const {
  if (!cfg_.shadow_sq_db || c.sideband) return std::nullopt;
  return c.sq_pi;
}

void Driver::wait_qp_idle(uint32_t n, const char* what, std::optional<uint32_t> want_pi) {
  const uint64_t deadline = now() + uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (;;) {
    const uint32_t st = rd(qreg(n, R::q::STATQPi));
    const uint32_t head = rd(qreg(n, R::q::CQHEADi));
    const uint32_t pi = rd(qreg(n, R::q::SQPIi));
    if ((st & FLD::STATQPi_SQ_EMPTY.bit()) && (st & FLD::STATQPi_OSQ_EMPTY.bit()) && head == pi &&
        (!want_pi || pi == *want_pi))
      return;
    if (st & FLD::STATQPi_FATAL.bit()) fail(fmt::format("QP{} {}: the QP is fatal", n, what));
    if (now() >= deadline)
      fail(fmt::format("QP{} {}: SQ/outstanding queue not empty after {} us (STATQP=0x{:08x} CQHEAD={} SQPI={})", n,
                       what, cfg_.cm_timeout_us, st, head, pi));
    sleep_ps(1000000);
  }
}

uint32_t Driver::switch_to_hw_handshake(Connection& c) {
  const uint32_t n = c.qpn;
  if (c.state != VerbsState::Rts) fail(fmt::format("switch to HW handshake: QP{} is {}, not RTS", n, verbs_state_name(c.state)));
  if (c.sideband) fail(fmt::format("switch to HW handshake: QP{} is already in HW-handshake mode", n));
  if (!bus_.has_sideband()) fail("switch to HW handshake: the NIC has no sideband port");
  // "During the switch the QP must carry no traffic": every posted WQE has
  // completed; its CQEs are collected now (the CQ restarts at 0).
  if (c.rung != c.posted) ring_sq(c);
  wait_qp_idle(n, "switch to HW handshake", shadow_pi(c));
  poll(c, 0, 0);
  if (c.posted != c.completed) fail(fmt::format("switch to HW handshake: QP{} has {} WQEs not completed", n, c.posted - c.completed));
  const uint32_t depth = c.params.rq_depth ? c.params.rq_depth : 1;
  const uint32_t adconf = rd(greg(R::g::XRNICADCONF));
  wr(greg(R::g::XRNICADCONF), cfg_.layout.swovr_qpn.set(adconf | FLD::XRNICADCONF_SW_OVERRIDE.bit(), n));
  for (uint32_t off : {R::q::SQPIi, R::q::CQHEADi, R::q::STATCURSQPTRi}) wr(qreg(n, off), 0);
  const uint32_t wptr = rd(qreg(n, R::q::STATRQPIDBi)) & 0xFFFF;
  const uint32_t rqci = rd(qreg(n, R::q::RQCIi)) & 0xFFFF;
  const uint32_t pending = (wptr % depth + depth - rqci % depth) % depth;
  wr(qreg(n, R::q::STATRQPIDBi), pending);
  wr(qreg(n, R::q::RQCIi), 0);
  const uint32_t qpconf = rd(qreg(n, R::q::QPCONFi));
  wr(qreg(n, R::q::QPCONFi), qpconf & ~FLD::QPCONFi_HW_HANDSHAKE_DIS.bit());
  wr(greg(R::g::XRNICADCONF), adconf);
  rd(greg(R::g::XRNICADCONF));  // the posted writes have arrived
  // The host side starts over with the NIC: SQ, CQ (and its mirror) and RQ at 0.
  c.sq_pi = 0;
  c.cq_ci = 0;
  c.sb_cq_head = 0;
  c.rq_ci = 0;
  mem_write32(c.cq_db, 0);
  c.sideband = true;
  bus_.log_state(n, "doorbells", "sideband");
  return pending;
}

}  // namespace ernic::host
