// model/ernic: the QP manager (PG332 v3.1 section 4, qp_mgr): takes the
// SQ doorbells, fetches WQEs from the SQs in host memory through
// qp_mgr_m_axi, and hands them to the WQE processor one QP at a time.
//  - Doorbells: SQPIi over AXI4-Lite (QPCONFi[4] = 1) or the sideband
//    i_qp_sq_pidb (QPCONFi[4] = 0) reach it doorbell_cycles later, each with
//    its own latency (A-ERNIC-1).
//  - Prefetch (A-ERNIC-24): WQEs are read ahead into the WQE cache
//    (wqe_cache.h), round robin over the QPs, up to wqe_fetch_burst
//    contiguous WQEs of one QP per read.
//  - Passes: the dispatcher and the prefetcher each pick the next QP round
//    robin; a pass visits only the QPs that may have work (RoundRobinSet,
//    model/qp/round_robin_set.h), so an idle QP costs nothing, and picks the
//    QP a pass over every QP would (see next_qp).
//  - Dispatch: round robin over the QPs with work; a QP waits while its
//    outstanding queue is at the limit (16, 8 after a CNP), while a WRITE
//    waits for write-retry buffers (WQEPROCSTS[4]), while it is under SW
//    override (XRNICADCONF[0], A-SIDEBAND-2), and during an RNR wait.
//    STATCURSQPTRi, STATWQEi and QPMSTS[31:16] count what it dispatched.
//  - Go-back-N (the response handler asks, through the QP's state and
//    work_ev): before any new WQE of the QP, PSN, MSN (STATSSNi) and the
//    SQ pointer roll back to the WQE holding the go-back PSN, the WQE is
//    fetched again, and every outstanding WQE from there is sent again (3.1
//    from the WQE's start, 4.x from the PSN); acknowledged WRITE / SEND
//    waiting only behind a READ are skipped.
//  - Flushes: a disabled QP's outstanding WQEs, and a fatal QP's SQ (each
//    WQE fetched for its WRID and opcode and completed with ERRFLAG,
//    A-ERNIC-23; PG332's recovery flows wait for CQHEADi == SQPIi).
//
// Clock: the core clock. Timing: doorbell_cycles, the WQE fetch through
// the DMA engine, wqe_decode_cycles (hidden behind the cache when the WQE
// waited there). Processes: the dispatcher (qp_mgr thread) and the
// prefetcher; both sleep until a doorbell, a wake-up from the blocks
// below (work_ev, prefetch_ev) or cache space.
#pragma once
#include <cstdint>
#include <deque>
#include <systemc>

#include "model/ernic/resp_hndler.h"
#include "model/ernic/retry_buf.h"
#include "model/ernic/shared.h"
#include "model/ernic/wqe_cache.h"
#include "model/ernic/wqe_proc.h"
#include "model/qp/round_robin_set.h"

namespace ernic {

class QpMgr : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(QpMgr);
  QpMgr(sc_core::sc_module_name name, ErnicShared& s, WqeCache& cache, WqeProc& wqe_proc, RespHndler& resp,
        RetryBuf& bufs);

  // An SQ doorbell of value `sq_pi`: the QP manager sees it doorbell_cycles
  // from now.
  void ring(uint32_t qpn, uint32_t sq_pi);
  // Something its decisions read changed (XRNICADCONF: a QP may have left
  // SW override).
  void reconsider() { doorbell_ev_.notify(sc_core::SC_ZERO_TIME); }
  // XRNICADCONF[0] set for this QP (A-SIDEBAND-2).
  bool sw_override(uint32_t qpn) const;
  // QP n's state changed outside the QP manager's view (a register write:
  // its SQ pointer, SQ depth or enable): the passes look at it again until
  // one finds it idle. Doorbells (ring) do this themselves.
  void touch(uint32_t qpn) { candidates_.insert(qpn); }
  // Every QP's context replaced at once (a test bench restoring a snapshot).
  void touch_all() { candidates_ = qp::RoundRobinSet(s_.cfg.num_qp, /*all=*/true); }
  // Counters of the passes (tests: what a pass costs): passes made by both
  // processes, QPs visited by them, QPs a pass would visit now.
  uint64_t passes() const { return passes_; }
  uint64_t visits() const { return visits_; }
  uint32_t candidates() const { return candidates_.size(); }

 private:
  void dispatch_thread();
  void prefetch_thread();
  void apply_doorbells();
  qp::QpContext* next_qp();
  bool has_work(const qp::QpContext& qp) const;
  bool idle(const qp::QpContext& qp) const;
  bool can_prefetch(const qp::QpContext& qp) const;
  void dispatch(qp::QpContext& qp);
  void flush_fatal_wqe(qp::QpContext& qp);
  bool take_retry_bufs(qp::QpContext& qp, const pg332::Wqe& w, std::vector<uint32_t>& bufs);
  void resend(qp::QpContext& qp);
  void prefetch(qp::QpContext& qp);

  ErnicShared& s_;
  WqeCache& cache_;
  WqeProc& wqe_proc_;
  RespHndler& resp_;
  RetryBuf& bufs_;
  // Doorbells in flight: visible at t_ps (A-ERNIC-1). Each keeps its own
  // time: one sc_event could not (a pending earlier notification swallows
  // a later one).
  struct Doorbell {
    uint64_t t_ps;
    uint32_t qpn, value;
  };
  std::deque<Doorbell> db_q_;
  sc_core::sc_event doorbell_ev_;
  uint32_t rr_next_ = 1, pf_rr_ = 1;  // round-robin positions (QPN)
  // The QPs the passes visit: every QP that is not idle (idle() below),
  // maybe some idle ones too (left at the first pass that sees them).
  qp::RoundRobinSet candidates_;
  uint64_t passes_ = 0, visits_ = 0;
};

}  // namespace ernic
