// model/ernic: the response handler: ACKs, NAKs, READ responses, CNPs,
// completions and the fatal path (see resp_hndler.h; timers and retries in
// resp_retry.cpp).
#include "model/ernic/resp_hndler.h"

#include <fmt/format.h>

#include "model/datapath/seam.h"
#include "model/regs/cqe.h"
#include "model/regs/fatal.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;
namespace fatal = pg332::fatal;

RespHndler::RespHndler(sc_module_name name, ErnicShared& s, Interrupts& intr, WqeCache& cache, RetryBuf& bufs,
                       std::function<void(uint32_t, uint32_t)>& cq_db_sink)
    : sc_module(name),
      s_(s),
      intr_(intr),
      cache_(cache),
      bufs_(bufs),
      cq_db_sink_(cq_db_sink),
      timed_(s.cfg.num_qp),
      cq_called_(size_t(s.cfg.num_qp) + 1, 0),
      cq_taken_(size_t(s.cfg.num_qp) + 1, 0) {
  SC_THREAD(timer_thread);
}

// ------------------------------------------------------------ completions

void RespHndler::complete(qp::QpContext& qp, uint16_t wrid, uint8_t wqe_opcode, bool error) {
  const uint32_t n = qp.qpn;
  const uint64_t ticket = cq_called_[n]++;
  while (cq_taken_[n] != ticket && !s_.cfg.test_bug_cq_entry_race) wait(cq_taken_ev_);
  const uint32_t depth = s_.sq_depth(n) ? s_.sq_depth(n) : 1;  // the CQ has the SQ's depth
  const uint32_t head = FLD::CQHEADi_VALUE.get(s_.Q(n, R::q::CQHEADi)) % depth;
  if (s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_CQE_WRITE_EN.bit()) {
    const uint32_t cqe = pg332::encode_cqe({wrid, wqe_opcode, error});
    s_.dma_cmpl.write32(s_.q64(n, R::q::CQBAi, R::q::CQBAMSBi) + uint64_t(head) * pg332::kCqeBytes, cqe, n);
    ++s_.stats.cqes_written;
    if (s_.ctx.log)
      s_.ctx.log->cqe(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), n, head, wrid, wqe_opcode, error,
                      cqe);
  }
  const uint32_t new_head = (head + 1) % depth;
  s_.Q(n, R::q::CQHEADi) = new_head;
  ++cq_taken_[n];  // the next completion may take its entry (its writes queue behind these)
  cq_taken_ev_.notify(SC_ZERO_TIME);
  s_.dma_cmpl.write32(s_.q64(n, R::q::CQDBADDi, R::q::CQDBADDMSBi), new_head, n);
  if (!(s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_HW_HANDSHAKE_DIS.bit()) && cq_db_sink_) {
    s_.ctx.set(s_.wave.cq_db_addr, ErnicWaveform::db_addr(n));
    s_.ctx.set(s_.wave.cq_db_cnt, new_head);
    cq_db_sink_(n, new_head);  // resp_hndler_o_send_cq_db
  }
  if (s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_CQ_IRQ_EN.bit()) {
    intr_.bank_set(s_.regs.layout().cq_int_bank, n);
    intr_.raise(FLD::INTSTS_WQE_DONE.bit());
  }
  s_.trace(qp);
  s_.work_ev.notify(SC_ZERO_TIME);
}

void RespHndler::flush_outstanding(qp::QpContext& qp) {
  while (!qp.req.osq.empty()) {
    qp::Outstanding o = qp.req.osq.front();
    qp.req.osq.pop_front();
    bufs_.free(o);
    complete(qp, o.wrid, o.wqe_opcode, true);
  }
}

void RespHndler::qp_fatal(qp::QpContext& qp, uint8_t code, const std::string& why) {
  const uint32_t n = qp.qpn;
  if (s_.fatal(n)) return;
  ++s_.stats.fatal_events;
  s_.Q(n, R::q::STATQPi) |= FLD::STATQPi_FATAL.bit();
  s_.ctx.set(s_.wave.qp[n].fatal, 1);  // in the waveform at the instant the QP turns fatal
  cache_.drop(qp);                     // the flush reads the SQ from sq_ci again
  if (s_.ctx.log)
    s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), n, "qp_fatal",
                      fmt::format("code 0x{:02x}: {}", code, why));
  s_.ctx.event(s_.qp_scope(n), fmt::format("QP fatal, code 0x{:02x}: {}", code, why));
  // The error-status queue entry (model/regs/fatal.h).
  const uint64_t base = s_.regs.g64(R::g::IPKTERRQBA, R::g::IPKTERRQBAMSB);
  const uint32_t size = FLD::IPKTERRQSZ_NUM.get(s_.G(R::g::IPKTERRQSZ));
  if (base && size) {
    const uint32_t wp = FLD::IPKTERRQWPTR_VALUE.get(s_.G(R::g::IPKTERRQWPTR)) % size;
    s_.dma_cmpl.write32(base + uint64_t(wp) * pg332::kErrQueueEntryBytes, pg332::encode_err_entry(n, code));
    s_.dma_cmpl.write32(base + uint64_t(wp) * pg332::kErrQueueEntryBytes + 4, 0);
    s_.G(R::g::IPKTERRQWPTR) = (wp + 1) % size;  // the hardware wraps and never checks overflow
  }
  qp.rs.end_retransmit();
  qp.retry.ack_deadline_ps = 0;
  qp.rs.rnr_expired();
  qp.req.buf_need = 0;
  flush_outstanding(qp);
  intr_.raise(FLD::INTSTS_FATAL.bit());
  s_.trace(qp);
}

// ---------------------------------------------------------- READ responses

// Requester: a READ response. It must be the next PSN of the oldest
// outstanding READ; FIRST/MIDDLE carry exactly PMTU bytes, LAST/ONLY the
// rest, FIRST/LAST/ONLY an AETH with an ACK syndrome. The payload goes to
// LADDR + offset through rx_pkt_hndler_rdrsp_m_axi. The first response also
// acknowledges every older WQE (IBTA: a response for PSN p covers all PSNs
// up to p); the READ completes after its last response has been written.
std::optional<RxDrop> RespHndler::rx_read_resp(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  auto& osq = qp.req.osq;
  size_t ri = 0;
  while (ri < osq.size() && !osq[ri].is_read) ++ri;
  if (ri == osq.size()) {
    // A response to a READ that has completed (a PSN already acknowledged)
    // is a duplicate; any other is stray. Both are dropped.
    if (roce::psn_lt(f.bth.psn, s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask)) {
      ++s_.stats.duplicates;
      s_.regs.add16(R::g::ININVDUPCNT, true);
      return RxDrop{"duplicate READ response: its READ has completed"};
    }
    return RxDrop{"READ response without an outstanding READ"};
  }
  s_.G(R::g::RESPHNDSTS) = FLD::RESPHNDSTS_ARB_QP.set(s_.G(R::g::RESPHNDSTS), n);
  qp::Outstanding& rd = osq[ri];
  const uint32_t p = f.bth.psn;
  if (roce::psn_lt(p, rd.resp_psn)) {
    // Already seen (a duplicate response, or one for a READ already done): ignored (IBTA 9.9.3.1.3).
    ++s_.stats.duplicates;
    s_.regs.add16(R::g::ININVDUPCNT, true);
    return RxDrop{"duplicate READ response"};
  }
  if (p != rd.resp_psn) {
    // Responses were lost: re-issue the READ (IBTA: an out-of-sequence
    // response is an implied sequence error). Once re-issued, responses
    // out of order are stragglers of an earlier request or a loss the
    // local ACK timer recovers: one go-back, not one per straggler.
    if (!rd.reissue_wait) {
      rd.reissue_wait = true;
      const uint32_t from = rd.resp_psn;
      start_retry(qp, from, fmt::format("READ response PSN 0x{:06x} while 0x{:06x} was expected", p, from));
    }
    return RxDrop{"READ response out of sequence"};
  }
  if (read_resp_valid(qp, rd, f)) accept_read_resp(qp, ri, f);
  return std::nullopt;
}

// The expected PSN's response: its position, AETH and length against the
// READ; a mismatch makes the QP fatal (0x19..0x1F) and returns false.
bool RespHndler::read_resp_valid(qp::QpContext& qp, const qp::Outstanding& rd, const roce::Frame& f) {
  using roce::OpPos;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  const uint32_t p = f.bth.psn;
  const bool is_last = rd.resp_psn == rd.last_psn;
  const bool is_first = rd.resp_psn == rd.req_psn;   // the first response to the latest request
  const bool single = rd.req_psn == rd.last_psn;
  // Opcode position against what this PSN of the READ must carry.
  OpPos want = single ? OpPos::Only : is_first ? OpPos::First : is_last ? OpPos::Last : OpPos::Middle;
  // A partial re-issue (4.x) asks again from resp_psn: that request's
  // responses start a new stream there (FIRST or ONLY), while a late
  // response of an earlier request for the same PSN is a MIDDLE or LAST,
  // and a responder that replays its earlier response stream (Linux rxe)
  // answers with those positions too. The bytes for a PSN are the same in
  // every stream, so the first copy to arrive is taken whatever its
  // position and the other is a duplicate, dropped and counted (IBTA: a
  // requester ignores responses it has already received); the READ
  // completes either way (rxe "IB/rxe: fixes for rdma read retry").
  const OpPos earlier = is_last ? OpPos::Last : OpPos::Middle;
  const bool reissue_start = is_first && rd.req_psn != rd.first_psn;
  if (reissue_start && oi.pos == earlier) want = earlier;
  if (oi.pos != want) {
    const uint8_t code = (want == OpPos::Only && oi.pos == OpPos::Last) ? fatal::kRdRspLastForOnly : fatal::kBadResp;
    qp_fatal(qp, code, fmt::format("{} at PSN 0x{:06x} of a READ of {} bytes", oi.name, p, rd.length));
    return false;
  }
  if (oi.pos != OpPos::Middle) {
    if (!f.aeth) {
      qp_fatal(qp, fatal::kBadAeth, fmt::format("{} without AETH", oi.name));
      return false;
    }
    if (roce::aeth::type(f.aeth->syndrome) != roce::aeth::kTypeAck) {
      qp_fatal(qp, fatal::kBadAeth, fmt::format("{} with AETH syndrome 0x{:02x}", oi.name, f.aeth->syndrome));
      return false;
    }
  }
  const size_t len = f.payload.size();
  const uint32_t want_len = std::min(s_.pmtu(qp.qpn), rd.length - rd.resp_off);
  if (len != want_len || ((oi.pos == OpPos::First || oi.pos == OpPos::Middle) && f.bth.pad_cnt != 0)) {
    const uint8_t code = oi.pos == OpPos::Only     ? fatal::kRdRspOnlyLen
                         : oi.pos == OpPos::Middle ? fatal::kRdRspMiddleLen
                         : oi.pos == OpPos::Last   ? fatal::kRdRspLast
                                                   : fatal::kBadResp;
    qp_fatal(qp, code, fmt::format("{} carries {} bytes, {} expected", oi.name, len, want_len));
    return false;
  }
  return true;
}

// A valid response to the READ at osq[ri]: the WQEs before it are
// acknowledged, the payload is written to LADDR, and after the last one
// the READ completes.
void RespHndler::accept_read_resp(qp::QpContext& qp, size_t ri, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  auto& osq = qp.req.osq;
  const uint32_t p = f.bth.psn;
  const size_t len = f.payload.size();
  const bool is_last = osq[ri].resp_psn == osq[ri].last_psn;
  ++s_.stats.read_responses_received;
  s_.regs.add16(R::g::INSRRPKTCNT, true);
  for (size_t k = 0; k < ri; ++k) {
    qp::Outstanding o = osq.front();
    osq.pop_front();
    bufs_.free(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    // complete() takes time; the QP manager may have made the QP fatal
    // meanwhile (every outstanding WQE then completed with ERRFLAG).
    if (s_.fatal(n)) return;
  }
  // Account for the response before its (timed) write, so that nothing
  // refers into the outstanding queue across a wait.
  qp::Outstanding& cur = osq.front();
  const uint64_t dst = cur.laddr + cur.resp_off;
  cur.resp_off += uint32_t(len);
  cur.resp_psn = roce::psn_add(cur.resp_psn, 1);
  if (roce::psn_gt(roce::psn_add(p, 1), s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask))
    s_.Q(n, R::q::STATRESPSNi) = roce::psn_add(p, 1);
  const qp::Outstanding done = cur;
  if (is_last) osq.pop_front();
  progress(qp);
  if (len) s_.dma_rdrsp.write(dst, f.payload.data(), len, n);
  // The CQE follows the last response's write (posted; the data is in host
  // memory when its last beat has been issued). A QP that went fatal while
  // the data was written completes the READ with ERRFLAG, as qp_fatal did
  // for every WQE still outstanding.
  if (is_last) {
    complete(qp, done.wrid, done.wqe_opcode, s_.fatal(n));
    retire_acked(qp);
  }
  s_.trace(qp);
  s_.work_ev.notify(SC_ZERO_TIME);
}

// The WRITE/SEND WQEs behind a READ that has just completed, which an ACK or
// NAK taken earlier already covered (it could not retire them past the
// unanswered READ): they complete now, in order, up to the next READ.
void RespHndler::retire_acked(qp::QpContext& qp) {
  if (!qp.retry.ack_high_valid) return;
  auto& osq = qp.req.osq;
  while (!osq.empty() && !osq.front().is_read && roce::psn_le(osq.front().last_psn, qp.retry.ack_high)) {
    qp::Outstanding o = osq.front();
    osq.pop_front();
    bufs_.free(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    if (s_.fatal(qp.qpn)) return;
  }
}

// An answer acknowledged every PSN up to `psn`: the highest such PSN is
// kept for retire_acked.
void RespHndler::note_acked(qp::QpContext& qp, uint32_t psn) {
  if (!qp.retry.ack_high_valid || roce::psn_gt(psn, qp.retry.ack_high)) qp.retry.ack_high = psn;
  qp.retry.ack_high_valid = true;
}

// Retires every WRITE/SEND WQE that ends before psn (a NAK acknowledges all
// earlier PSNs). A READ stops the walk: it completes only through responses.
bool RespHndler::retire_before(qp::QpContext& qp, uint32_t psn) {
  bool any = false;
  auto& osq = qp.req.osq;
  while (!osq.empty() && !osq.front().is_read && roce::psn_lt(osq.front().last_psn, psn)) {
    qp::Outstanding o = osq.front();
    osq.pop_front();
    bufs_.free(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    any = true;
    if (s_.fatal(qp.qpn)) break;
  }
  return any;
}

// ---------------------------------------------------------------- CNPs

// A CNP for one of our QPs (RoCEv2 Annex A17.9.3): the QP's outstanding-
// request limit drops from 16 to 8, once; later CNPs change nothing
// (PG332: no DCQCN rate engine).
void RespHndler::rx_cnp(qp::QpContext& qp) {
  s_.G(R::g::INCNPPKTCNT) += 1;
  const uint32_t max = s_.cfg.timing.max_outstanding;
  if (qp.req.max_out > max / 2) {
    qp.req.max_out = max / 2;
    s_.ctx.event(s_.qp_scope(qp.qpn), fmt::format("CNP received: outstanding-request limit {} -> {}", max, qp.req.max_out));
    if (s_.ctx.log)
      s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), qp.qpn, "max_outstanding",
                        std::to_string(qp.req.max_out));
  }
}

// ------------------------------------------------------------ ACK / NAK

void RespHndler::count_nak_in(uint32_t qpn) {
  s_.G(R::g::INNAKPKTCNT) = FLD::INNAKPKTCNT_COUNT.inc(s_.G(R::g::INNAKPKTCNT));
  uint32_t& sts = s_.G(R::g::INNCKPKTSTS);
  sts = FLD::INNCKPKTSTS_COUNT.inc(FLD::INNCKPKTSTS_QP.set(sts, qpn));
}

std::optional<RxDrop> RespHndler::rx_ack(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  if (!f.aeth) return RxDrop{"ACK without AETH"};
  s_.G(R::g::RESPHNDSTS) = FLD::RESPHNDSTS_ARB_QP.set(s_.G(R::g::RESPHNDSTS), n);  // the QP the response handler took
  const uint8_t syn = f.aeth->syndrome;
  const uint32_t psn = f.bth.psn;
  // IBTA 9.7.5.1: type 10 is reserved, and NAK codes above 4 (0x65..0x7F).
  namespace aeth = roce::aeth;
  if (aeth::type(syn) == aeth::kTypeReserved || (aeth::type(syn) == aeth::kTypeNak && aeth::value(syn) > aeth::kNakCodeMax))
    return RxDrop{fmt::format("malformed AETH: syndrome 0x{:02x}", syn), seam::kSynAeth};
  // A "ghost" answer: its PSN at or past the PSN after the newest request
  // sent (nothing outstanding: the expected response PSN). An ACK or NAK
  // acknowledges requests that were sent (IBTA 9.7.5.1 / 9.9.3.1); one for
  // a PSN not sent yet is invalid and discarded (blue-rdma WR_ACK_GHOST; rxe
  // drops an answer with no request sent), never moving STATRESPSNi past
  // the next PSN to send, where it would make later NAKs for the requests
  // sent next look stale (found by fuzz_rx, tb/fuzz).
  const uint32_t sent_end = qp.req.osq.empty() ? s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask
                                               : roce::psn_add(qp.req.osq.back().last_psn, 1);
  if (roce::psn_ge(psn, sent_end)) {
    s_.regs.add16(R::g::ININVDUPCNT, false);
    return RxDrop{fmt::format("{} for PSN 0x{:06x}, not sent yet (next expected answer 0x{:06x}, end of the "
                              "requests sent 0x{:06x})", aeth::type(syn) == aeth::kTypeAck ? "ACK" : "NAK", psn,
                              s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask, sent_end)};
  }
  switch (aeth::type(syn)) {
    case aeth::kTypeAck: return rx_ack_ack(qp, psn);
    case aeth::kTypeNak: return rx_ack_nak(qp, syn, psn);
    default: return rx_ack_rnr(qp, syn, psn);
  }
}

// ACK: retire every covered WQE, oldest first, exactly once.
std::optional<RxDrop> RespHndler::rx_ack_ack(qp::QpContext& qp, uint32_t psn) {
  const uint32_t n = qp.qpn;
  auto& osq = qp.req.osq;
  s_.regs.add16(R::g::INAMPKTCNT, false);
  ++s_.stats.acks_received;
  note_acked(qp, psn);
  // A READ completes only through its responses: an ACK whose PSN
  // reaches an unanswered READ means its responses were lost (an implied
  // NAK, IBTA 9.9.3.1.3): the READ is re-issued.
  // An ACK inside a multi-packet message (coalescing timeout) retires
  // nothing but is progress all the same: the local ACK timer restarts.
  const bool advanced = roce::psn_ge(psn, s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask) && !osq.empty() &&
                        !osq.front().is_read && roce::psn_ge(psn, osq.front().first_psn);
  bool retired = false;
  while (!osq.empty() && !osq.front().is_read && roce::psn_le(osq.front().last_psn, psn)) {
    qp::Outstanding o = osq.front();
    osq.pop_front();
    bufs_.free(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    retired = true;
    if (s_.fatal(n)) return std::nullopt;
  }
  // STATRESPSNi only moves forward: a late duplicate ACK acknowledges
  // nothing new (IBTA 9.9.3.1.1: the requester ignores it).
  if (roce::psn_gt(roce::psn_add(psn, 1), s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask))
    s_.Q(n, R::q::STATRESPSNi) = roce::psn_add(psn, 1);
  // A go-back-N under way restarts past what this ACK covered; an ACK
  // never covers a READ still outstanding below its PSN (its responses
  // are missing: IBTA's implied NAK), so the go-back keeps that READ.
  if (qp.rs.retransmit_pending()) {
    uint32_t covered = roce::psn_add(psn, 1);
    for (const auto& o : osq)
      if (o.is_read && roce::psn_le(o.first_psn, psn)) {
        covered = o.resp_psn;
        break;
      }
    if (roce::psn_gt(covered, qp.retry.resend_psn)) qp.retry.resend_psn = covered;
  }
  if (retired || advanced) progress(qp);
  if (!osq.empty() && osq.front().is_read && roce::psn_ge(psn, osq.front().resp_psn) && !osq.front().reissue_wait) {
    osq.front().reissue_wait = true;
    const uint32_t from = osq.front().resp_psn;
    start_retry(qp, from,
                fmt::format("ACK PSN 0x{:06x} beyond the unanswered READ at PSN 0x{:06x} (implied NAK)", psn, from));
  }
  s_.trace(qp);
  s_.work_ev.notify(SC_ZERO_TIME);
  return std::nullopt;
}

// NAK: PSN sequence error starts a go-back, the others are fatal (0x0A).
std::optional<RxDrop> RespHndler::rx_ack_nak(qp::QpContext& qp, uint8_t syn, uint32_t psn) {
  const uint32_t n = qp.qpn;
  ++s_.stats.naks_received;
  count_nak_in(n);
  s_.Q(n, R::q::STATQPi) = FLD::STATQPi_NAK_SYNDROME.set(s_.Q(n, R::q::STATQPi), syn);
  if (syn != roce::aeth::kNakPsnSeq) {
    qp_fatal(qp, fatal::kRemote, fmt::format("NAK 0x{:02x} received", syn));
    return std::nullopt;
  }
  // A NAK for a PSN already acknowledged was overtaken by a later ACK or
  // NAK: stale, ignored (rxe check_psn). A NAK for what a go-back under way
  // will resend is one go-back already (start_retry). Any other NAK is acted
  // on, even one for a PSN a finished go-back resent: the responder NAKs a
  // gap once until the PSN it expects arrives, so that resend was lost too.
  if (roce::psn_lt(psn, s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask)) {
    ++s_.stats.duplicates;
    s_.regs.add16(R::g::ININVDUPCNT, true);
    s_.ctx.event(s_.qp_scope(n),
                 fmt::format("NAK PSN sequence error for PSN 0x{:06x} ignored: already acknowledged", psn));
    return std::nullopt;
  }
  // Go-back-N: the NAK's PSN is the one the responder expects; every
  // earlier PSN is acknowledged. Resend from there (3.1: from the start of
  // the WQE that holds it).
  note_acked(qp, roce::psn_add(psn, -1));
  const bool retired = retire_before(qp, psn);
  if (s_.fatal(n)) return std::nullopt;
  if (roce::psn_gt(psn, s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask)) s_.Q(n, R::q::STATRESPSNi) = psn;
  if (retired) progress(qp);
  if (qp.req.osq.empty()) return std::nullopt;
  // A READ below the NAKed PSN still waiting for responses lost them (an
  // implied NAK): it is re-issued (A-ERNIC-12).
  uint32_t from = psn;
  qp::Outstanding& front = qp.req.osq.front();
  if (front.is_read && roce::psn_lt(front.resp_psn, from)) {
    from = front.resp_psn;
    front.reissue_wait = true;
  }
  start_retry(qp, from, fmt::format("NAK PSN sequence error, expected PSN 0x{:06x}", psn));
  return std::nullopt;
}

// RNR NAK (type 01): wait the timer of its code, then resend.
std::optional<RxDrop> RespHndler::rx_ack_rnr(qp::QpContext& qp, uint8_t syn, uint32_t psn) {
  const uint32_t n = qp.qpn;
  ++s_.stats.naks_received;
  ++s_.stats.rnr_naks_received;
  count_nak_in(n);  // an RNR NAK is a NAK (A-CNT-1)
  s_.Q(n, R::q::STATQPi) = FLD::STATQPi_NAK_SYNDROME.set(s_.Q(n, R::q::STATQPi), syn);
  // Stale (that PSN is acknowledged), or a repeat of the RNR NAK whose wait
  // is running (same PSN): ignored, neither counted against the RNR retry
  // count nor restarting the wait (qib, blue-rdma).
  const bool stale = roce::psn_lt(psn, s_.Q(n, R::q::STATRESPSNi) & roce::kPsnMask);
  if (stale || (qp.rs.in_rnr_wait() && psn == qp.retry.rnr_psn)) {
    ++s_.stats.duplicates;
    s_.regs.add16(R::g::ININVDUPCNT, true);
    s_.ctx.event(s_.qp_scope(n), fmt::format("RNR NAK for PSN 0x{:06x} ignored: {}", psn,
                                             stale ? "already acknowledged" : "the RNR wait for it is running"));
    return std::nullopt;
  }
  note_acked(qp, roce::psn_add(psn, -1));
  const bool retired = retire_before(qp, psn);
  if (s_.fatal(n)) return std::nullopt;
  if (retired) progress(qp);
  if (qp.req.osq.empty()) return std::nullopt;
  ++qp.retry.rnr_cnt;
  const uint32_t max = FLD::TIMEOUTCONFi_RNR_RETRY_CNT.get(s_.Q(n, R::q::TIMEOUTCONFi));
  update_retry_status(qp);
  if (max != 7 && qp.retry.rnr_cnt > max) {
    qp_fatal(qp, fatal::kRnr, fmt::format("RNR retry count {} exhausted (RNR NAK at PSN 0x{:06x})", max, psn));
    return std::nullopt;
  }
  const uint64_t wait_ps = roce::aeth::rnr_timer_ps(roce::aeth::value(syn));
  s_.ctx.event(s_.qp_scope(n), fmt::format("RNR NAK (timer code {}) at PSN 0x{:06x}: resending after {} us (RNR retry {})",
                                           roce::aeth::value(syn), psn, wait_ps / 1'000'000, qp.retry.rnr_cnt));
  qp.rs.rnr_wait(ClockDomain::now_ps() + wait_ps);
  timed(qp);  // begin_rollback below wakes the timer thread
  qp.retry.rnr_psn = psn;
  // The RNR NAK acknowledges every PSN before it: a READ still waiting for
  // responses below it lost them (an implied NAK). After the wait the
  // go-back starts at that READ, which is re-issued.
  uint32_t from = psn;
  qp::Outstanding& front = qp.req.osq.front();
  if (front.is_read && roce::psn_lt(front.resp_psn, psn)) {
    from = front.resp_psn;
    front.reissue_wait = true;
  }
  begin_rollback(qp, from);
  return std::nullopt;
}

}  // namespace ernic
