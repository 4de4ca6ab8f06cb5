// model/ernic: the response handler (PG332 v3.1 section 4, resp_hndler):
// the requester's half of the RX path and its completions.
//  - ACK / NAK / RNR NAK handling: every WQE an ACK covers is retired once,
//    oldest first (an ACK never retires a READ, nor past one still waiting
//    for data: IBTA's implied NAK re-issues it); NAK-PSN starts a go-back;
//    NAK-invalid / remote access / remote operational are fatal (0x0A);
//    answers below what is acknowledged are stale and ignored.
//  - READ responses: in PSN order, position, AETH and length checked
//    (fatal 0x19..0x1F), payload written to LADDR through
//    rx_pkt_hndler_rdrsp_m_axi, the CQE after the last one.
//  - CNPs: the outstanding-request limit 16 -> 8 (A-ERNIC-22).
//  - Completions: the 4-byte CQE (model/regs/cqe.h) at CQBAi + idx * 4,
//    CQHEADi and its mirror at CQDBADDi through resp_hndler_m_axi, the
//    sideband resp_hndler_o_send_cq_db in HW-handshake mode, INTSTS[4].
//  - The fatal path: STATQPi[0], the error-status queue entry
//    (model/regs/fatal.h), every outstanding WQE completed with ERRFLAG,
//    INTSTS[7].
//  - Retransmission requests and timers (resp_retry.cpp): the local ACK
//    timeout (A-ERNIC-15), RNR waits (IBTA timer codes), retry counts and
//    their fatal exhaustion (A-ERNIC-16); a go-back is asked of the QP
//    manager above through the QP's state and an event (work_ev).
//
// Clock: the core clock. Process: one timer thread for every QP's
// deadlines (local ACK timeout, RNR wait, the responder's coalescing ACK
// timeout), asleep until the earliest. It looks only at the QPs in
// timed_ (resp_retry.cpp), so an idle QP costs it nothing (issue 17).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <systemc>

#include "model/ernic/interrupts.h"
#include "model/ernic/retry_buf.h"
#include "model/ernic/shared.h"
#include "model/ernic/wqe_cache.h"
#include "model/qp/round_robin_set.h"
#include "model/roce/packet.h"
#include "model/sim/deadline.h"

namespace ernic {

class RespHndler : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(RespHndler);
  RespHndler(sc_core::sc_module_name name, ErnicShared& s, Interrupts& intr, WqeCache& cache, RetryBuf& bufs,
             std::function<void(uint32_t, uint32_t)>& cq_db_sink);

  // Answers the RX packet handler passes on (the frame already validated);
  // nullopt: taken, else the RX packet handler drops it.
  std::optional<RxDrop> rx_ack(qp::QpContext& qp, const roce::Frame& f);
  std::optional<RxDrop> rx_read_resp(qp::QpContext& qp, const roce::Frame& f);
  void rx_cnp(qp::QpContext& qp);

  // A CQE for the WQE (ERRFLAG when error), CQHEADi, its mirror, the
  // sideband and the CQ interrupt. Timed (DMA writes). A QP's completions
  // take their CQ entries in the order they are called, one after the
  // other: one called while another of the QP is being written (its
  // outstanding WQEs flushed by the RX side's fatal path and by the
  // requester at once) waits for the entry before it to be taken.
  void complete(qp::QpContext& qp, uint16_t wrid, uint8_t wqe_opcode, bool error);
  // Every outstanding WQE completes with ERRFLAG, oldest first.
  void flush_outstanding(qp::QpContext& qp);
  // The fatal path (PG332 code, model/regs/fatal.h); nothing if already fatal.
  void qp_fatal(qp::QpContext& qp, uint8_t code, const std::string& why);

  // --- retransmission (resp_retry.cpp) ---------------------------------
  // A retry (NAK-PSN, local ACK timeout, lost READ response, implied NAK):
  // counted against TIMEOUTCONFi[10:8], fatal 0x06 when exhausted.
  void start_retry(qp::QpContext& qp, uint32_t psn, const std::string& why);
  // The local ACK timer (re)starts, or stops when nothing is outstanding.
  void arm_timer(qp::QpContext& qp);
  // The responder's coalescing timeout (qp.resp.ack_due_ps) was set.
  void timers_changed(const qp::QpContext& qp) {
    timed(qp);
    s_.timer_ev.notify(sc_core::SC_ZERO_TIME);
  }
  // The coalescing timeouts due by now, queued for the RX handler as the
  // timer thread queues them (ascending QPN). The RX handler calls it before
  // it acts at an instant, so a timeout due then comes first whichever of
  // the two threads the kernel runs first (a split run's order differed).
  void fire_due_acks(uint64_t now);
  // 4.x resends from the NAKed PSN, 3.1 from the WQE start.
  bool partial_resend() const;

 private:
  bool read_resp_valid(qp::QpContext& qp, const qp::Outstanding& rd, const roce::Frame& f);
  void accept_read_resp(qp::QpContext& qp, size_t ri, const roce::Frame& f);
  bool retire_before(qp::QpContext& qp, uint32_t psn);
  void retire_acked(qp::QpContext& qp);
  void note_acked(qp::QpContext& qp, uint32_t psn);
  void count_nak_in(uint32_t qpn);
  void progress(qp::QpContext& qp);
  void update_retry_status(qp::QpContext& qp);
  void begin_rollback(qp::QpContext& qp, uint32_t psn);
  std::optional<RxDrop> rx_ack_ack(qp::QpContext& qp, uint32_t psn);
  std::optional<RxDrop> rx_ack_nak(qp::QpContext& qp, uint8_t syn, uint32_t psn);
  std::optional<RxDrop> rx_ack_rnr(qp::QpContext& qp, uint8_t syn, uint32_t psn);
  void timer_thread();
  void timer_expired(qp::QpContext& qp, uint64_t now);
  void fire_ack(qp::QpContext& qp, uint64_t now);  // its coalescing timeout, if due
  // The QP has just been given a deadline: the timer thread looks at it.
  void timed(const qp::QpContext& qp) { timed_.insert(qp.qpn); }

  ErnicShared& s_;
  Interrupts& intr_;
  WqeCache& cache_;
  RetryBuf& bufs_;
  std::function<void(uint32_t, uint32_t)>& cq_db_sink_;
  // Every QP that holds a deadline, and perhaps some that no longer do
  // (issue 17): a bitmap over QPNs 1..num_qp (model/qp/round_robin_set.h),
  // walked in ascending order. A QPN goes in wherever one of its three
  // deadlines is set (arm_timer, rx_ack_rnr, timers_changed), and out when
  // the timer thread finds it has none left; so the thread costs the QPs
  // with a deadline plus a word scan, not num_qp (see timer_thread).
  qp::RoundRobinSet timed_;
  Deadline timer_wait_{&s_.timer_ev};  // the timer thread's sleep (model/sim/deadline.h)
  // By QPN: completions called (tickets given) and entries taken (complete).
  std::vector<uint64_t> cq_called_, cq_taken_;
  sc_core::sc_event cq_taken_ev_;  // an entry was taken
};

}  // namespace ernic
