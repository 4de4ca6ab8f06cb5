// model/ernic: the QP manager (see qp_mgr.h).
#include "model/ernic/qp_mgr.h"

#include <algorithm>
#include <fmt/format.h>

#include "model/ernic/qp_ctx_cache.h"
#include "model/regs/fatal.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;
using W = ErnicWaveform;

QpMgr::QpMgr(sc_module_name name, ErnicShared& s, WqeCache& cache, WqeProc& wqe_proc, RespHndler& resp,
             RetryBuf& bufs)
    : sc_module(name),
      s_(s),
      cache_(cache),
      wqe_proc_(wqe_proc),
      resp_(resp),
      bufs_(bufs),
      candidates_(s.cfg.num_qp, /*all=*/true) {
  SC_THREAD(dispatch_thread);
  SC_THREAD(prefetch_thread);
}

// ---------------------------------------------------------------- doorbells

void QpMgr::ring(uint32_t qpn, uint32_t sq_pi) {
  const uint64_t t = ClockDomain::now_ps() + s_.core.period_ps() * s_.cfg.timing.doorbell_cycles;
  db_q_.push_back({t, qpn, sq_pi});
  // The oldest may be due already (the dispatch thread busy since): not a
  // delay below zero, which wraps to a notification in the past.
  const uint64_t now = ClockDomain::now_ps(), due = db_q_.front().t_ps;
  doorbell_ev_.notify(ps(due > now ? due - now : 0));
}

void QpMgr::apply_doorbells() {
  const uint64_t now = ClockDomain::now_ps();
  while (!db_q_.empty() && db_q_.front().t_ps <= now) {
    s_.qps[db_q_.front().qpn].req.sq_pi = db_q_.front().value;
    candidates_.insert(db_q_.front().qpn);  // it may have WQEs to fetch now
    db_q_.pop_front();
  }
  if (!db_q_.empty()) doorbell_ev_.notify(ps(db_q_.front().t_ps - now));
}

bool QpMgr::sw_override(uint32_t qpn) const {
  return s_.cfg.layout.sw_override(s_.G(R::g::XRNICADCONF), qpn);
}

// ---------------------------------------------------------------- dispatch

bool QpMgr::has_work(const qp::QpContext& qp) const {
  const uint32_t n = qp.qpn;
  const bool nic_on = s_.G(R::g::XRNICCONF) & FLD::XRNICCONF_EN.bit();
  // Disabled with WQEs outstanding: they are flushed (A-ERNIC-27).
  if (!qp.enabled) return !qp.req.osq.empty() && nic_on;
  if (!nic_on) return false;
  // Doorbells come over AXI-Lite (QPCONFi[4] = 1) or the sideband (0); both
  // set sq_pi. A QP under SW override is being re-pointed: left alone (A-SIDEBAND-2).
  if (sw_override(n)) return false;
  const uint32_t depth = s_.sq_depth(n);
  if (depth == 0) return false;
  // A fatal QP flushes what is still in its SQ (A-ERNIC-23).
  if (s_.fatal(n)) return qp.req.sq_pi % depth != qp.req.sq_ci;
  if (qp.rs.retransmit_pending()) return !qp.rs.in_rnr_wait();  // go-back-N first (after an RNR wait)
  if (qp.prefetch.cache.empty()) return false;                   // the prefetcher brings the next WQE
  if (qp.req.buf_need && bufs_.free_count() < qp.req.buf_need) return false;  // waits for write-retry buffers
  return qp.req.osq.size() < qp.req.max_out;
}

// Idle: has_work and can_prefetch are false whatever the gates say
// (enable, NIC enable, SW override, fatal, RNR wait, limits): nothing
// outstanding, cached or to go back for, and no WQE between sq_ci and SQPIi
// nor between sq_ci and the prefetch pointer. Only the QP manager's own
// steps and what calls ring() or touch() end that: a doorbell (sq_pi), a
// register write (STATCURSQPTRi moves sq_ci, QPCONFi[0] re-enables,
// QDEPTHi changes the depth), a WQE dispatched (the OSQ; from a QP a pass
// has just picked) or fetched (the cache; likewise). A go-back needs
// outstanding WQEs, and a cache drop (disable, fatal) sets pf_ci to sq_ci.
bool QpMgr::idle(const qp::QpContext& qp) const {
  if (!qp.req.osq.empty() || !qp.prefetch.cache.empty() || qp.rs.retransmit_pending()) return false;
  const uint32_t depth = s_.sq_depth(qp.qpn);
  return depth == 0 || (qp.req.sq_pi % depth == qp.req.sq_ci && qp.prefetch.pf_ci == qp.req.sq_ci);
}

// The first QP with work from rr_next_ on, wrapping (PG332: round robin
// over the QPs). A pass visits only the candidates: every QP outside them
// is idle, so has_work is false for it and a pass over all QPs 1..num_qp
// in the same order would pick the same QP. The pass drops the idle QPs it
// visits; only this pass does (the dispatcher's, between two WQEs), so a QP
// being dispatched, whose OSQ entry comes later, is never dropped.
qp::QpContext* QpMgr::next_qp() {
  ++passes_;
  const uint32_t n = candidates_.find_from(rr_next_, [this](uint32_t q) {
    ++visits_;
    if (has_work(s_.qps[q])) return true;
    if (idle(s_.qps[q])) candidates_.erase(q);
    return false;
  });
  return n ? &s_.qps[n] : nullptr;
}

void QpMgr::dispatch_thread() {
  for (;;) {
    s_.at_settled_point();  // the instant's ACKs and prefetched WQEs first (shared.h)
    apply_doorbells();
    qp::QpContext* next = next_qp();
    if (!next) {
      s_.ctx.set(s_.wave.req_state, W::kReqIdle);
      wait(doorbell_ev_ | s_.work_ev | s_.prefetch_ev);
      continue;
    }
    qp::QpContext& qp = *next;
    rr_next_ = qp.qpn % s_.cfg.num_qp + 1;
    // X-QPC-CACHE: the QP's context first; after a miss (time passed) the QP
    // is looked at again.
    if (s_.qpc && s_.qpc->access(qp.qpn, QpCtxCache::kDispatch) && !has_work(qp)) continue;
    s_.ctx.set(s_.wave.req_qpn, qp.qpn);
    if (!qp.enabled) {
      // QPCONFi[0] cleared with requests outstanding (PG332 asks for a
      // quiescent QP first): they complete with ERRFLAG rather than vanish.
      s_.ctx.event(s_.qp_scope(qp.qpn), fmt::format("QP disabled with {} WQE(s) outstanding: completed with ERRFLAG",
                                                    qp.req.osq.size()));
      resp_.flush_outstanding(qp);
      s_.trace(qp);
      continue;
    }
    if (qp.rs.retransmit_pending()) {
      s_.ctx.set(s_.wave.req_state, W::kReqSend);
      qp.rs.begin_send();
      resend(qp);
      qp.rs.end_send();
      s_.trace(qp);
      s_.ctx.set(s_.wave.req_state, qp.req.osq.empty() ? W::kReqIdle : W::kReqWaitAck);
      continue;
    }
    s_.ctx.set(s_.wave.req_state, W::kReqFetch);
    if (s_.fatal(qp.qpn)) {
      flush_fatal_wqe(qp);
      continue;
    }
    dispatch(qp);
  }
}

// Flush (A-ERNIC-23): the WQE is fetched for its WRID and opcode and
// completes with ERRFLAG, nothing is sent. PG332's recovery and deletion
// flows wait for CQHEADi == SQPIi, which needs this.
void QpMgr::flush_fatal_wqe(qp::QpContext& qp) {
  const uint32_t n = qp.qpn;
  uint8_t b[pg332::kWqeBytes];
  const uint64_t sqba = s_.q64(n, R::q::SQBAi, R::q::SQBAMSBi);
  const bool fetched = s_.dma_wqe.read(sqba + uint64_t(qp.req.sq_ci) * pg332::kWqeBytes, b, sizeof b, true, n);
  qp.req.sq_ci = (qp.req.sq_ci + 1) % s_.sq_depth(n);
  s_.Q(n, R::q::STATCURSQPTRi) = qp.req.sq_ci;
  const pg332::Wqe w = fetched ? pg332::decode_wqe(b) : pg332::Wqe{};
  // The WQEs sent before it complete first: the fatal path's flush of
  // them (the RX side's) may still be going on while this fetch returned;
  // taking them here keeps the CQ in WQE order (each takes its entry as
  // it leaves the queue: RespHndler::complete).
  resp_.flush_outstanding(qp);
  resp_.complete(qp, w.wrid, w.opcode, true);
}

// A WRITE needs write-retry buffers for its payload before it is sent;
// without enough free ones the WQE stays in the SQ (WQEPROCSTS[4]).
bool QpMgr::take_retry_bufs(qp::QpContext& qp, const pg332::Wqe& w, std::vector<uint32_t>& bufs) {
  if (qp.qpn == 1 || !pg332::is_write(w.opcode)) return true;
  const bool got = bufs_.alloc(qp, w.length, bufs);
  bool waiting = false;
  for (const qp::QpContext& q : s_.qps) waiting = waiting || q.req.buf_need != 0;
  uint32_t& sts = s_.G(R::g::WQEPROCSTS);
  sts = FLD::WQEPROCSTS_RETRY_BUFS_UNAVAIL.set(sts, waiting);
  return got;
}

// The QP's next WQE, from the WQE cache, to the WQE processor.
void QpMgr::dispatch(qp::QpContext& qp) {
  const uint32_t n = qp.qpn;
  const qp::CachedWqe cw = qp.prefetch.cache.front();
  const pg332::Wqe w = pg332::decode_wqe(cw.w.data());
  std::vector<uint32_t> bufs;
  if (cw.ok && !take_retry_bufs(qp, w, bufs)) return;
  cache_.pop(qp);
  qp.req.sq_ci = (qp.req.sq_ci + 1) % s_.sq_depth(n);
  s_.Q(n, R::q::STATCURSQPTRi) = qp.req.sq_ci;
  uint32_t& statwqe = s_.Q(n, R::q::STATWQEi);
  statwqe = FLD::STATWQEi_VALUE.set(statwqe, FLD::STATWQEi_VALUE.get(statwqe) + 1);
  uint32_t& qpmsts = s_.G(R::g::QPMSTS);
  qpmsts = FLD::QPMSTS_WQES.set(qpmsts, FLD::QPMSTS_WQES.get(qpmsts) + 1);
  s_.trace(qp);
  if (!cw.ok) {
    // Fatal 0x05; the WQE itself completes with ERRFLAG after the ones
    // outstanding before it (its WRID and opcode are unknown: 0), so that
    // CQHEADi reaches SQPIi as PG332's recovery flow waits for.
    resp_.qp_fatal(qp, pg332::fatal::kWqe, "WQE fetch outside host memory");
    return resp_.complete(qp, 0, 0, true);
  }
  // Decoded while it waited in the cache (A-ERNIC-25): only what is left
  // of wqe_decode_cycles after it was cached is waited here.
  const uint64_t ready = cw.issued_ps + uint64_t(s_.cfg.timing.wqe_decode_cycles) * s_.core.period_ps();
  const uint64_t now = ClockDomain::now_ps();
  s_.core.wait_cycles(ready > now ? s_.core.cycles_for_ps(ready - now) : 0);
  s_.ctx.set(s_.wave.req_state, W::kReqSend);
  qp.rs.begin_send();
  wqe_proc_.execute(qp, w, cw.sq_idx, std::move(bufs), cw.issued_ps);
  qp.rs.end_send();
  // The QP went fatal while this WQE was being sent: qp_fatal completed
  // what was outstanding then; this WQE's entry may have been queued after
  // that, so it completes with ERRFLAG here, in order.
  if (s_.fatal(n)) resp_.flush_outstanding(qp);
  s_.trace(qp);
  ++s_.stats.wqes_processed;
  s_.ctx.set(s_.wave.req_state, qp.req.osq.empty() ? W::kReqIdle : W::kReqWaitAck);
}

// ---------------------------------------------------------------- go-back-N

// PSN, MSN (STATSSNi) and the SQ pointer (STATCURSQPTRi) roll back to the
// WQE that holds resend_psn, the WQE is fetched again, and every
// outstanding WQE from there is sent again: 3.1 from the WQE's start, 4.x
// from resend_psn. The PSN and SSN of new WQEs continue where they were.
void QpMgr::resend(qp::QpContext& qp) {
  const uint32_t n = qp.qpn;
  const uint64_t sqba = s_.q64(n, R::q::SQBAi, R::q::SQBAMSBi);
  const uint32_t saved_psn = s_.Q(n, R::q::SQPSNi), saved_ssn = s_.Q(n, R::q::STATSSNi);
  while (qp.rs.retransmit_pending() && !qp.rs.in_rnr_wait() && qp.enabled && !s_.fatal(n)) {
    // The next WQE to resend: a WRITE or SEND an ACK or NAK has already
    // acknowledged (it waits only for a READ before it to complete) is
    // skipped, as a READ whose responses have all come.
    const qp::Outstanding* e = nullptr;
    for (const auto& o : qp.req.osq)
      if (roce::psn_le(qp.retry.resend_psn, o.last_psn) && !qp::acknowledged(qp, o)) {
        e = &o;
        break;
      }
    if (!e) {
      qp.rs.end_retransmit();
      break;
    }
    const qp::Outstanding o = *e;  // a copy: ACKs may retire the WQE meanwhile
    const uint32_t gen = qp.retry.gen;
    uint32_t from = o.first_psn;
    if (resp_.partial_resend() && !o.is_read && roce::psn_gt(qp.retry.resend_psn, o.first_psn))
      from = qp.retry.resend_psn;
    s_.Q(n, R::q::SQPSNi) = from;
    s_.Q(n, R::q::STATSSNi) = o.ssn;
    s_.Q(n, R::q::STATCURSQPTRi) = o.sq_idx;
    s_.trace(qp);
    uint8_t b[pg332::kWqeBytes];
    s_.dma_wqe.read(sqba + uint64_t(o.sq_idx) * pg332::kWqeBytes, b, sizeof b, true, n);
    s_.core.wait_cycles(s_.cfg.timing.wqe_decode_cycles);
    // An ACK may have retired it while it was fetched again: nothing to resend.
    if (!qp::still_outstanding(qp, o.first_psn)) {
      if (qp.retry.gen == gen && roce::psn_le(qp.retry.resend_psn, o.last_psn))
        qp.retry.resend_psn = roce::psn_add(o.last_psn, 1);
      continue;
    }
    qp.retry.resending = true;
    if (o.is_read)
      wqe_proc_.reissue_read(qp, o.first_psn);
    else
      wqe_proc_.resend_packets(qp, o, from);
    qp.retry.resending = false;
    if (qp.retry.gen == gen) qp.retry.resend_psn = roce::psn_add(o.last_psn, 1);
  }
  s_.Q(n, R::q::SQPSNi) = saved_psn;
  s_.Q(n, R::q::STATSSNi) = saved_ssn;
  s_.Q(n, R::q::STATCURSQPTRi) = qp.req.sq_ci;
  s_.trace(qp);
}

// ---------------------------------------------------------------- prefetch

bool QpMgr::can_prefetch(const qp::QpContext& qp) const {
  const uint32_t n = qp.qpn;
  if (!qp.enabled || !(s_.G(R::g::XRNICCONF) & FLD::XRNICCONF_EN.bit())) return false;
  if (sw_override(n)) return false;  // being re-pointed (A-SIDEBAND-2)
  if (s_.fatal(n)) return false;
  const uint32_t depth = s_.sq_depth(n);
  if (depth == 0 || qp.req.sq_pi % depth == qp.prefetch.pf_ci) return false;
  return qp.prefetch.cache.size() < s_.cfg.timing.wqe_cache_per_qp && !cache_.full();
}

void QpMgr::prefetch_thread() {
  for (;;) {
    apply_doorbells();
    // Round robin from pf_rr_ over the candidates (can_prefetch is false
    // for an idle QP; see next_qp).
    ++passes_;
    const uint32_t pick = candidates_.find_from(pf_rr_, [this](uint32_t n) {
      ++visits_;
      return can_prefetch(s_.qps[n]);
    });
    qp::QpContext* q = pick ? &s_.qps[pick] : nullptr;
    if (!q) {
      wait(doorbell_ev_ | cache_.space_ev);
      continue;
    }
    pf_rr_ = q->qpn % s_.cfg.num_qp + 1;
    if (s_.qpc && s_.qpc->access(q->qpn, QpCtxCache::kPrefetch) && !can_prefetch(*q)) continue;  // X-QPC-CACHE
    prefetch(*q);
  }
}

// One read of up to wqe_fetch_burst WQEs, contiguous in the QP's SQ.
void QpMgr::prefetch(qp::QpContext& qp) {
  const uint32_t n = qp.qpn, depth = s_.sq_depth(n);
  qp::PrefetchCtx& pf = qp.prefetch;
  const uint32_t avail = (qp.req.sq_pi % depth + depth - pf.pf_ci) % depth;
  const uint32_t k = std::min({avail, s_.cfg.timing.wqe_fetch_burst,
                               s_.cfg.timing.wqe_cache_per_qp - uint32_t(pf.cache.size()),
                               s_.cfg.timing.wqe_cache_entries - cache_.total(), depth - pf.pf_ci});
  const uint32_t start = pf.pf_ci, gen = pf.pf_gen;
  // The slots are reserved while the read is in flight.
  pf.pf_ci = (start + k) % depth;
  cache_.reserve(k);
  std::vector<uint8_t> buf(size_t(k) * pg332::kWqeBytes);
  const uint64_t sqba = s_.q64(n, R::q::SQBAi, R::q::SQBAMSBi);
  const bool ok = s_.dma_wqe.read(sqba + uint64_t(start) * pg332::kWqeBytes, buf.data(), buf.size(), true, n);
  if (pf.pf_gen != gen) {  // the cache was dropped meanwhile (fatal, re-enable): discard
    cache_.release(k);
    cache_.update_status();
    return;
  }
  for (uint32_t j = 0; j < k; ++j) {
    qp::CachedWqe c;
    std::copy_n(buf.data() + size_t(j) * pg332::kWqeBytes, pg332::kWqeBytes, c.w.begin());
    c.sq_idx = (start + j) % depth;
    c.ok = ok;
    c.issued_ps = ClockDomain::now_ps();
    pf.cache.push_back(c);
  }
  cache_.update_status();
  s_.prefetch_ev.notify(SC_ZERO_TIME);
}

}  // namespace ernic
