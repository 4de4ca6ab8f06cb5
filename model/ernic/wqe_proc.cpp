// model/ernic: the WQE processor (see wqe_proc.h).
#include "model/ernic/wqe_proc.h"

#include <fmt/format.h>

#include "model/datapath/roce_tx_ref.h"
#include "model/datapath/sc/datapath.h"
#include "model/ernic/qp_frame.h"
#include "model/regs/fatal.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;
using pg332::WqeOpcode;

namespace {

// The BTH opcode of packet i (first / last) of a WRITE or SEND message of npkts.
uint8_t packet_opcode(uint8_t wqe_op, uint32_t npkts, bool first, bool last) {
  using namespace roce::op;
  if (pg332::is_write(wqe_op)) {
    const bool imm = wqe_op == uint8_t(WqeOpcode::write_imm);
    return npkts == 1 ? (imm ? RC_WRITE_ONLY_IMM : RC_WRITE_ONLY)
           : first    ? RC_WRITE_FIRST
           : last     ? (imm ? RC_WRITE_LAST_IMM : RC_WRITE_LAST)
                      : RC_WRITE_MIDDLE;
  }
  const bool imm = wqe_op == uint8_t(WqeOpcode::send_imm), inv = wqe_op == uint8_t(WqeOpcode::send_inv);
  return npkts == 1 ? (imm ? RC_SEND_ONLY_IMM : inv ? RC_SEND_ONLY_INV : RC_SEND_ONLY)
         : first    ? RC_SEND_FIRST
         : last     ? (imm ? RC_SEND_LAST_IMM : inv ? RC_SEND_LAST_INV : RC_SEND_LAST)
                    : RC_SEND_MIDDLE;
}
}  // namespace

WqeProc::WqeProc(sc_module_name name, ErnicShared& s, Interrupts& intr, RespHndler& resp, RetryBuf& bufs,
                 RoceDatapath*& datapath, std::function<void(const seam::TxDesc&)>& on_tx_committed)
    : sc_module(name),
      s_(s),
      intr_(intr),
      resp_(resp),
      bufs_(bufs),
      datapath_(datapath),
      on_tx_committed_(on_tx_committed) {
  SC_THREAD(tx_thread);
}

// ------------------------------------------------------------------ WQEs

void WqeProc::execute(qp::QpContext& qp, const pg332::Wqe& w, uint32_t sq_idx, std::vector<uint32_t> bufs,
                      uint64_t issued_ps) {
  const uint32_t n = qp.qpn;
  if (n == 1) return execute_qp1(qp, w, issued_ps);
  if (pg332::is_read(w.opcode)) {
    // One READ_REQUEST (RETH: ROFFSET, RTAG, LENGTH) with AckReq; it uses
    // ceil(LENGTH / PMTU) PSNs (at least one), one per expected response
    // (IBTA 9.7.1). The WQE stays outstanding until its last response has
    // been written to LADDR (resp_hndler).
    qp::Outstanding o = new_outstanding(qp, w, sq_idx, /*is_read=*/true);
    const uint32_t first_psn = o.first_psn;
    o.resp_psn = first_psn;
    o.req_psn = first_psn;
    qp.req.osq.push_back(o);
    send_read_request(qp, first_psn, /*retry=*/false);
    s_.Q(n, R::q::STATSSNi) = roce::psn_add(s_.Q(n, R::q::STATSSNi), 1);
    return;
  }
  if (!pg332::is_write(w.opcode) && !pg332::is_send(w.opcode)) {
    ++s_.stats.illegal_wqes;
    intr_.raise(FLD::INTSTS_ILLEGAL_OPCODE.bit());  // PG332 INTSTS[5]; the WQE is consumed (assumption A-ERNIC-5)
    return;
  }
  qp::Outstanding o = new_outstanding(qp, w, sq_idx, /*is_read=*/false);
  const uint32_t first_psn = o.first_psn;
  o.immdt = w.immdt;
  o.payload_issued_ps = issued_ps;
  if (pg332::is_inline(w.opcode, w.length)) {
    // PG332 Table 2-1: SDATA carries a SEND payload of up to 16 bytes
    // inline; no payload read from LADDR (A-ERNIC-21).
    o.inline_data = true;
    o.sdata = w.sdata;
  }
  o.bufs = std::move(bufs);
  qp.req.osq.push_back(o);
  send_packets(qp, o, first_psn, /*retry=*/false);
  s_.Q(n, R::q::STATSSNi) = roce::psn_add(s_.Q(n, R::q::STATSSNi), 1);
}

// QP1: software built the whole frame (Ethernet .. MAD); ERNIC sends the
// bytes as they are and appends the ICRC. UD: no ACK, the WQE completes
// once the frame has been handed to the datapath.
void WqeProc::execute_qp1(qp::QpContext& qp, const pg332::Wqe& w, uint64_t issued_ps) {
  const uint32_t n = qp.qpn;
  if (w.opcode != uint8_t(WqeOpcode::send)) {
    ++s_.stats.illegal_wqes;
    intr_.raise(FLD::INTSTS_ILLEGAL_OPCODE.bit());
    return;
  }
  std::vector<uint8_t> frame(w.length);
  if (!s_.dma_payload.read(w.laddr, frame.data(), w.length, true, n, issued_ps)) {
    resp_.complete(qp, w.wrid, w.opcode, true);
    return;
  }
  s_.core.wait_cycles(s_.cfg.timing.hdr_build_cycles);
  // The BTH opcode after Ethernet, IPv4 or IPv6, and UDP.
  const bool ip6 = frame.size() >= roce::kEthHdrLen && roce::get_be16(&frame[12]) == roce::kEtherTypeIpv6;
  const size_t bth = roce::kEthHdrLen + (ip6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen) + roce::kUdpHdrLen;
  const uint8_t op = frame.size() > bth ? frame[bth] : 0;
  s_.ctx.set(s_.wave.tx_opcode, op);
  // LSTOUTPKT: the frame's own BTH opcode and PSN, QP 1 (A-CNT-1).
  const uint32_t psn16 = frame.size() >= bth + roce::kBthLen ? roce::get_be16(&frame[bth + 10]) : 0;
  s_.G(R::g::LSTOUTPKT) = ErnicShared::last_packet(op, 1, psn16);
  tx_enqueue_raw(std::move(frame));
  // A software-built CNP (PG332: sent on QP1) counts in OUTCNPPKTCNT.
  if (op == roce::op::CNP) s_.G(R::g::OUTCNPPKTCNT) += 1;
  else s_.regs.add16(R::g::OUTAMPKTCNT, true);
  resp_.complete(qp, w.wrid, w.opcode, false);
}

// The outstanding-queue entry of a WQE: a READ and every other message use
// ceil(LENGTH / PMTU) PSNs, at least one (64-bit: no wrap).
qp::Outstanding WqeProc::new_outstanding(qp::QpContext& qp, const pg332::Wqe& w, uint32_t sq_idx, bool is_read) {
  const uint32_t n = qp.qpn;
  const uint32_t mtu = s_.pmtu(n);
  const uint32_t npsn = w.length == 0 ? 1 : uint32_t((uint64_t(w.length) + mtu - 1) / mtu);
  const uint32_t first = s_.Q(n, R::q::SQPSNi) & roce::kPsnMask;
  qp::Outstanding o;
  o.id = s_.next_osq_id++;
  o.wrid = w.wrid;
  o.wqe_opcode = w.opcode;
  o.first_psn = first;
  o.last_psn = roce::psn_add(first, npsn - 1);
  o.is_read = is_read;
  o.laddr = w.laddr;
  o.length = w.length;
  o.sq_idx = sq_idx;
  o.ssn = s_.Q(n, R::q::STATSSNi);
  o.roffset = w.roffset;
  o.rtag = w.rtag;
  return o;
}

// The packets of a WRITE or SEND WQE from from_psn to its last PSN. First
// transmission: the payload is read from LADDR and a WRITE's payload is
// also copied into its write-retry buffers (through wqe_proc_wr_ddr_m_axi,
// in parallel with transmission). Retransmission: a WRITE's payload is read
// back from the retry buffers (LADDR when it has none, A-ERNIC-17), a
// SEND's from LADDR again. Every request sent (re)starts the local ACK timer.
void WqeProc::send_packets(qp::QpContext& qp, const qp::Outstanding& o, uint32_t from_psn, bool retry) {
  const uint32_t n = qp.qpn;
  const uint8_t opc = o.wqe_opcode;
  const bool is_write = pg332::is_write(opc);
  const uint32_t pmtu = s_.pmtu(n);
  const uint32_t length = o.length;
  const uint32_t npkts = length == 0 ? 1 : uint32_t((uint64_t(length) + pmtu - 1) / pmtu);
  const int32_t d = roce::psn_diff(from_psn, o.first_psn);
  const uint32_t i0 = d < 0 ? 0 : std::min(uint32_t(d), npkts - 1);
  roce::Frame f = frame_template(s_.regs, n);
  bool sent_any = false;
  for (uint32_t i = i0; i < npkts; ++i) {
    if (s_.fatal(n)) return;  // the QP went fatal meanwhile: stop sending
    if (!qp.enabled) return;
    // A retransmission stops once an ACK has retired the WQE: a completed
    // WQE is never sent again (its SQ slot and buffer are software's again).
    // Within a WQE still outstanding, 3.1 resends from its start (PG332).
    if (retry && !qp::still_outstanding(qp, o.first_psn)) return;
    const bool lead = !sent_any;  // the first packet this call sends: it pays the read latency
    sent_any = true;
    const bool first = i == 0, last = i + 1 == npkts;
    const uint32_t off = i * pmtu;
    const uint32_t chunk = std::min(pmtu, length - off);
    const uint8_t op = packet_opcode(opc, npkts, first, last);
    f.bth.opcode = op;
    f.bth.psn = roce::psn_add(o.first_psn, i);
    f.bth.ack_req = last;  // assumption A-ERNIC-2: AckReq on the last packet of a message
    f.reth.reset();
    f.immdt.reset();
    f.ieth.reset();
    if (is_write && first) f.reth = roce::Reth{o.roffset, o.rtag, length};
    if (last && (opc == uint8_t(WqeOpcode::write_imm) || opc == uint8_t(WqeOpcode::send_imm))) f.immdt = o.immdt;
    if (last && opc == uint8_t(WqeOpcode::send_inv)) f.ieth = o.rtag;
    if (!read_payload(qp, o, off, chunk, lead, retry, f.payload)) return;
    // The header of a message's first packet is built once its payload is
    // there; the next ones are built while the previous payload streams
    // (pipelined, A-ERNIC-25), so they cost no extra cycles.
    if (lead) s_.core.wait_cycles(s_.cfg.timing.hdr_build_cycles);
    else s_.core.sync();
    // What the instant brings (a NAK that makes the QP fatal, an ACK) is
    // seen before the packet goes, whichever process the kernel ran first.
    s_.at_settled_point();
    if (s_.fatal(n)) return;
    s_.Q(n, R::q::SQPSNi) = roce::psn_add(f.bth.psn, 1);
    const uint32_t lst = ErnicShared::last_packet(op, n, f.bth.psn);
    s_.ctx.set(s_.wave.tx_opcode, op);
    s_.trace(qp);
    if (retry) {
      tx_enqueue(f, Resend{n, o.id, lst, is_write});  // counted when it leaves (tx_thread)
    } else {
      s_.G(R::g::LSTOUTPKT) = lst;
      s_.regs.add16(R::g::OUTIOPKTCNT, is_write);
      tx_enqueue(f);
    }
    resp_.arm_timer(qp);
  }
}

// One packet's payload: SDATA, the retry buffers (a WRITE resent), or
// LADDR; a first transmission of a WRITE also copies it into its retry
// buffers. false: LADDR outside host memory (the QP went fatal, 0x05).
bool WqeProc::read_payload(qp::QpContext& qp, const qp::Outstanding& o, uint32_t off, uint32_t chunk, bool lead,
                           bool retry, roce::Bytes& payload) {
  const uint32_t n = qp.qpn;
  const bool is_write = pg332::is_write(o.wqe_opcode);
  payload.resize(chunk);
  if (o.inline_data) {
    std::copy_n(o.sdata.begin(), chunk, payload.data());
  } else if (retry && is_write && !o.bufs.empty()) {
    bufs_.wait_copies();  // the copy must have landed before it is read back
    bufs_.io(o.bufs, off, payload.data(), chunk, /*write=*/false, /*with_latency=*/lead, n);
  } else if (!s_.dma_payload.read(o.laddr + off, payload.data(), chunk, /*with_latency=*/lead, n,
                                  retry ? Dma::kIssuedNow : o.payload_issued_ps)) {
    resp_.qp_fatal(qp, pg332::fatal::kWqe, "payload read outside host memory");
    return false;
  }
  if (!retry && is_write && !o.bufs.empty() && chunk)
    bufs_.io(o.bufs, off, payload.data(), chunk, /*write=*/true, false, n);
  return true;
}

// A READ_REQUEST for the outstanding READ that starts at first_psn. First
// time: the whole READ. Re-issue (A-ERNIC-12): 3.1 asks for the whole READ
// again (the responses it already has come again as duplicates); 4.x from
// the first missing response PSN, with the RETH's VA and length moved past
// the bytes already written (IBTA 9.7.5.2.x).
void WqeProc::send_read_request(qp::QpContext& qp, uint32_t first_psn, bool retry) {
  const uint32_t n = qp.qpn;
  qp::Outstanding* e = nullptr;
  for (auto& o : qp.req.osq)
    if (o.is_read && o.first_psn == first_psn) e = &o;
  if (!e) return;
  // 3.1 asks for the whole READ again; 4.x from the first missing response.
  // Either way the responses already written stay written: the requester
  // still expects resp_psn, and a response below it is a duplicate. Sending
  // it again does not latch reissue_wait: the retry that found this READ's
  // responses missing did; a go-back from an earlier WQE only passes over
  // it, and a gap in its responses is then a lost response as ever.
  const bool from_missing = retry && resp_.partial_resend();
  const uint32_t skip = from_missing ? e->resp_off : 0;
  e->req_psn = from_missing ? e->resp_psn : e->first_psn;
  const uint32_t psn = e->req_psn, last_psn = e->last_psn;
  roce::Frame f = frame_template(s_.regs, n);
  f.bth.opcode = roce::op::RC_READ_REQUEST;
  f.bth.psn = psn;
  f.bth.ack_req = true;
  f.reth = roce::Reth{e->roffset + skip, e->rtag, e->length - skip};
  const uint64_t id = e->id;
  s_.core.wait_cycles(s_.cfg.timing.hdr_build_cycles);
  s_.at_settled_point();  // as in send_packets
  if (s_.fatal(n)) return;
  s_.Q(n, R::q::SQPSNi) = roce::psn_add(last_psn, 1);
  const uint32_t lst = ErnicShared::last_packet(roce::op::RC_READ_REQUEST, n, psn);
  s_.ctx.set(s_.wave.tx_opcode, roce::op::RC_READ_REQUEST);
  s_.trace(qp);
  if (retry) {
    tx_enqueue(f, Resend{n, id, lst, true});  // counted when it leaves (tx_thread)
  } else {
    s_.G(R::g::LSTOUTPKT) = lst;
    s_.regs.add16(R::g::OUTIOPKTCNT, true);
    tx_enqueue(f);
  }
  resp_.arm_timer(qp);
}

// -------------------------------------------------------------- the TX side

// A frame for the TX datapath (rtl/SEAM.md, TX seam): the header descriptor
// and the payload; roce_tx builds the headers' lengths, checksum, PadCnt
// and the ICRC.
void WqeProc::send(const roce::Frame& f) {
  push_tx(TxFrame{seam::tx_desc_from_frame(f), f.payload, std::nullopt}, kTxResponse);
}

void WqeProc::tx_enqueue(const roce::Frame& f, std::optional<Resend> resend) {
  push_tx(TxFrame{seam::tx_desc_from_frame(f), f.payload, resend}, resend ? kTxResend : kTxRequest);
}

// QP1: software built the frame (Ethernet .. MAD); a raw descriptor, the
// datapath appends the ICRC only.
void WqeProc::tx_enqueue_raw(std::vector<uint8_t> frame) {
  seam::TxDesc d = seam::tx_desc_raw(frame.size());
  push_tx(TxFrame{d, std::move(frame), std::nullopt}, kTxRaw);
}

void WqeProc::push_tx(TxFrame t, TxRank rank) {
  const InstantOrder::Turn turn(&tx_order_, rank);
  while (txq_.size() >= s_.cfg.timing.tx_queue_frames) wait(tx_pop_ev_);
  txq_.push_back(std::move(t));
  tx_ev_.notify(SC_ZERO_TIME);
}

bool WqeProc::resend_wanted(const Resend& r) const {
  const qp::QpContext& qp = s_.qps[r.qpn];
  if (!qp.enabled || s_.fatal(r.qpn)) return false;
  const qp::Outstanding* o = qp::find_outstanding(qp, r.osq_id);
  return o && !qp::acknowledged(qp, *o);
}

void WqeProc::tx_thread() {
  for (;;) {
    while (txq_.empty()) wait(tx_ev_);
    TxFrame t = std::move(txq_.front());
    txq_.pop_front();
    tx_pop_ev_.notify(SC_ZERO_TIME);
    if (t.resend) {
      // The last moment ERNIC can withdraw a retransmission: once its
      // descriptor is valid towards roce_tx it must stay so (AXI4-Stream).
      // A WQE that an ACK or response retired meanwhile is not requested
      // again (its SQ slot and buffer are software's once its CQE is out).
      const Resend& r = *t.resend;
      if (!resend_wanted(r)) {
        ++s_.stats.resends_cancelled;
        s_.ctx.event(s_.qp_scope(r.qpn),
                     fmt::format("retransmission of PSN 0x{:06x} cancelled: its WQE was acknowledged meanwhile",
                                 t.desc.psn));
        s_.ctx.bump();
        continue;
      }
      s_.G(R::g::LSTOUTPKT) = r.lstoutpkt;
      s_.regs.add16(R::g::OUTIOPKTCNT, r.io_high);
      ++s_.G(R::g::RETRYCNTSTS);
      ++s_.stats.retransmitted_packets;
    }
    if (on_tx_committed_) on_tx_committed_(t.desc);
    // Blocks until roce_tx has taken the descriptor (the payload streams on).
    if (datapath_) datapath_->tx(t.desc, std::move(t.payload));
    s_.ctx.bump();
  }
}

}  // namespace ernic
