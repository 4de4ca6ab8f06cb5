// model/ernic: the response handler's retransmission requests and timers:
// retry counts (A-ERNIC-16), the local ACK timer (A-ERNIC-15), RNR waits,
// the go-back asked of the QP manager, and the one timer thread for every
// QP's deadlines (see resp_hndler.h).
#include <fmt/format.h>

#include "model/ernic/resp_hndler.h"
#include "model/regs/fatal.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;

bool RespHndler::partial_resend() const { return s_.regs.layout().gcsr_base == R::kLayout4x.gcsr_base; }

// An ACK or response made progress: the retry counters start again and the
// local ACK timer restarts (or stops when nothing is outstanding).
void RespHndler::progress(qp::QpContext& qp) {
  qp.retry.retry_cnt = qp.retry.rnr_cnt = 0;
  update_retry_status(qp);
  arm_timer(qp);
}

// STATQPi[26:24] retry count, [30:28] RNR count (saturating at 7).
void RespHndler::update_retry_status(qp::QpContext& qp) {
  uint32_t& st = s_.Q(qp.qpn, R::q::STATQPi);
  st = FLD::STATQPi_RETRY_COUNT.set(st, std::min(qp.retry.retry_cnt, FLD::STATQPi_RETRY_COUNT.max()));
  st = FLD::STATQPi_RNR_COUNT.set(st, std::min(qp.retry.rnr_cnt, FLD::STATQPi_RNR_COUNT.max()));
}

// Local ACK timeout (A-ERNIC-15): 2^TIMEOUTCONFi[5:0] ticks of
// 2^XRNICADCONF[19:16] core cycles; 0 = no timeout.
void RespHndler::arm_timer(qp::QpContext& qp) {
  qp.retry.ack_deadline_ps = 0;
  if (qp.req.osq.empty() || qp.rs.in_rnr_wait()) return;
  const uint32_t t = FLD::TIMEOUTCONFi_ACK_TIMEOUT.get(s_.Q(qp.qpn, R::q::TIMEOUTCONFi));
  if (t == 0) return;
  const uint32_t e = t + FLD::XRNICADCONF_BASE_COUNT.get(s_.G(R::g::XRNICADCONF));
  if (e >= 40) return;  // beyond any simulated run (A-ERNIC-15)
  qp.retry.ack_deadline_ps = ClockDomain::now_ps() + (uint64_t(1) << e) * s_.core.period_ps();
  timed(qp);
  s_.timer_ev.notify(SC_ZERO_TIME);
}

// A retry (NAK-PSN, local ACK timeout, lost READ response, implied NAK):
// counted against TIMEOUTCONFi[10:8]; exhaustion is fatal (code 0x06)
// unless XRNICADCONF[2] retry_cnt_fatal_dis (A-ERNIC-16).
void RespHndler::start_retry(qp::QpContext& qp, uint32_t psn, const std::string& why) {
  const uint32_t n = qp.qpn;
  if (s_.fatal(n)) return;
  // Already going back to this point or before it: nothing new. While a
  // WQE is being sent again, the go-back will still send only what is
  // past its last packet sent (SQPSNi): a NAK for a PSN it already sent
  // again (lost again; the responder NAKs a gap once) is a new go-back.
  if (qp.rs.retransmit_pending()) {
    uint32_t will_send = qp.retry.resend_psn;
    const uint32_t next = s_.Q(n, R::q::SQPSNi) & roce::kPsnMask;
    if (qp.retry.resending && roce::psn_gt(next, will_send)) will_send = next;
    if (roce::psn_ge(psn, will_send)) return;
  }
  ++qp.retry.retry_cnt;
  ++s_.stats.retries;
  const uint32_t max = FLD::TIMEOUTCONFi_RETRY_CNT.get(s_.Q(n, R::q::TIMEOUTCONFi));
  update_retry_status(qp);
  if (qp.retry.retry_cnt > max && !(s_.G(R::g::XRNICADCONF) & FLD::XRNICADCONF_RETRY_CNT_FATAL_DIS.bit()))
    return qp_fatal(qp, pg332::fatal::kRespHndlr, fmt::format("retry count {} exhausted ({})", max, why));
  s_.ctx.event(s_.qp_scope(n), fmt::format("{}: resending from PSN 0x{:06x} (retry {})", why, psn, qp.retry.retry_cnt));
  if (!qp.req.osq.empty()) {
    const qp::Outstanding& head = qp.req.osq.front();
    if (qp.retry.head_wqe_retries == 0 || qp.retry.head_wqe_id != head.id) {
      qp.retry.head_wqe_id = head.id;
      qp.retry.head_wqe_retries = 0;
    }
    if (++qp.retry.head_wqe_retries == s_.ctx.livelock_retries)
      s_.ctx.report_livelock(
          s_.qp_scope(n),
          fmt::format("livelock: {} retries in a row while the WQE wr_id 0x{:04x} (PSN 0x{:06x}..0x{:06x}) was the "
                      "oldest outstanding, and it never completed; the retry count did not run out (progress "
                      "resets it; XRNICADCONF retry_cnt_fatal_dis disables it) (last: {}, resending from PSN "
                      "0x{:06x})",
                      qp.retry.head_wqe_retries, head.wrid, head.first_psn, head.last_psn, why, psn));
  }
  begin_rollback(qp, psn);
}

// Asks the QP manager for a go-back from psn (it runs it before any new
// WQE of the QP, after an RNR wait if one runs).
void RespHndler::begin_rollback(qp::QpContext& qp, uint32_t psn) {
  qp.rs.begin_retransmit();
  qp.retry.resend_psn = psn;
  ++qp.retry.gen;
  qp.retry.ack_deadline_ps = 0;
  s_.Q(qp.qpn, R::q::STATQPi) |= FLD::STATQPi_RETRIED.bit();
  update_retry_status(qp);
  s_.trace(qp);
  s_.timer_ev.notify(SC_ZERO_TIME);
  s_.work_ev.notify(SC_ZERO_TIME);
}

// The earliest of a QP's three deadlines (UINT64_MAX: none): the local ACK
// timer, the RNR wait, the responder's coalescing ACK timeout.
static uint64_t earliest_deadline(const qp::QpContext& qp) {
  uint64_t t = UINT64_MAX;
  if (qp.retry.ack_deadline_ps) t = std::min(t, qp.retry.ack_deadline_ps);
  if (qp.rs.in_rnr_wait()) t = std::min(t, qp.rs.rnr_until_ps());
  if (qp.resp.ack_due_ps) t = std::min(t, qp.resp.ack_due_ps);
  return t;
}

// One thread for every QP's local ACK timer and RNR wait, and the
// responder's coalescing ACK timeout: it sleeps until the earliest
// deadline, so idle time costs nothing. It walks only timed_ (issue 17: an
// idle QP costs nothing either), which holds every QP with a deadline: the
// same earliest deadline, so the same waits, as a walk over every QP; and
// at a deadline the same timer_expired calls in ascending QPN order, since
// for a QP without a deadline timer_expired does nothing. The walk reads
// the bitmap as it goes, so a QP given a deadline meanwhile (timer_expired
// may wait on DMA) is visited if it lies ahead, as before. Only this
// thread takes QPNs out, when their last deadline is gone.
void RespHndler::timer_thread() {
  for (;;) {
    const uint64_t now = ClockDomain::now_ps();
    uint64_t next = UINT64_MAX;
    timed_.find_from(1, [&](uint32_t n) {
      const uint64_t t = earliest_deadline(s_.qps[n]);
      if (t == UINT64_MAX) timed_.erase(n);
      next = std::min(next, t);
      return false;
    });
    if (next == UINT64_MAX) {
      wait(s_.timer_ev);
      continue;
    }
    if (next > now) {
      timer_wait_.wait_until(next);  // deadlines move at every packet: no timeout left per wait
      continue;
    }
    timed_.find_from(1, [&](uint32_t n) {
      timer_expired(s_.qps[n], now);
      return false;
    });
  }
}

void RespHndler::fire_ack(qp::QpContext& qp, uint64_t now) {
  if (!qp.resp.ack_due_ps || qp.resp.ack_due_ps > now) return;
  // Coalescing timeout: the RX handler sends the ACK (it owns ACK order).
  qp.resp.ack_due_ps = 0;
  if (!qp.resp.ack_fire) s_.ack_fire_q.push_back(qp.qpn);
  qp.resp.ack_fire = true;
  s_.rx_ev.notify(SC_ZERO_TIME);
}

void RespHndler::fire_due_acks(uint64_t now) {
  timed_.find_from(1, [&](uint32_t n) {
    fire_ack(s_.qps[n], now);
    return false;
  });
}

void RespHndler::timer_expired(qp::QpContext& qp, uint64_t now) {
  const uint32_t n = qp.qpn;
  fire_ack(qp, now);
  if (qp.rs.in_rnr_wait() && qp.rs.rnr_until_ps() <= now) {
    qp.rs.rnr_expired();
    s_.work_ev.notify(SC_ZERO_TIME);  // the QP manager resends
  }
  if (qp.retry.ack_deadline_ps && qp.retry.ack_deadline_ps <= now) {
    qp.retry.ack_deadline_ps = 0;
    if (qp.req.osq.empty() || !qp.enabled || s_.fatal(n)) return;
    ++s_.stats.ack_timeouts;
    qp::Outstanding& fr = qp.req.osq.front();
    uint32_t from = fr.first_psn;
    if (fr.is_read) {
      from = fr.resp_psn;
    } else {
      const uint32_t r = s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask;
      if (roce::psn_gt(r, fr.first_psn) && roce::psn_le(r, fr.last_psn)) from = r;
    }
    if (fr.is_read) fr.reissue_wait = true;
    start_retry(qp, from, "local ACK timeout");
  }
}

}  // namespace ernic
