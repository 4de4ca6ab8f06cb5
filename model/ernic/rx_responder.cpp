// model/ernic: the RX packet handler's responder: incoming SEND, WRITE and
// READ requests of an RC QP, the RETH checks, READ responses and ACK
// generation (see rx_pkt_hndler.h).
#include <fmt/format.h>

#include "model/ernic/qp_frame.h"
#include "model/ernic/rx_pkt_hndler.h"
#include "model/regs/fatal.h"
#include "model/regs/ieth.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
using roce::OpPos;
namespace R = regs;
namespace FLD = regs::fld;
namespace fatal = pg332::fatal;
using Acc = regs::val::ACCESSDESC_ACCESS;

namespace {
bool ends_message(const roce::OpcodeInfo& oi) { return oi.pos == OpPos::Last || oi.pos == OpPos::Only; }
bool starts_message(const roce::OpcodeInfo& oi) { return oi.pos == OpPos::First || oi.pos == OpPos::Only; }
}  // namespace

// An opcode ERNIC does not support on an RC QP (atomics, UD opcodes): with
// the expected PSN, NAK-invalid and fatal code 0x04 (PG332 "unsupported
// opcode with a good PSN"); otherwise dropped like any stray request.
void RxPktHndler::unsupported(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const uint32_t expected = roce::psn_add(FLD::LSTRQREQi_PSN.get(s_.Q(n, R::q::LSTRQREQi)), 1);
  if (f.bth.psn != expected) return drop(fmt::format("unsupported opcode {} out of sequence", oi->name));
  send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
  resp_.qp_fatal(qp, fatal::kUnsupportedOp, fmt::format("unsupported opcode {}", oi->name));
}

// The request's PSN against the expected one (IBTA 9.9.4): a duplicate is
// re-ACKed (a READ executed again), an out-of-sequence one NAKed once a
// gap. true: the expected PSN, go on.
bool RxPktHndler::rx_request_psn(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  const uint32_t expected = roce::psn_add(FLD::LSTRQREQi_PSN.get(s_.Q(n, R::q::LSTRQREQi)), 1);
  switch (roce::psn_classify(f.bth.psn, expected)) {
    case roce::PsnClass::Duplicate:
      ++s_.stats.duplicates;
      s_.regs.add16(R::g::ININVDUPCNT, true);
      // A duplicate READ is executed again from its own PSN (IBTA 9.9.4.2).
      if (oi.kind == roce::OpKind::ReadRequest) {
        rx_read_request(qp, f, true);
        return false;
      }
      // Re-ACK without re-executing (IBTA 9.9.4.1).
      send_ack(n, roce::aeth::ack(), roce::psn_add(expected, -1));
      return false;
    case roce::PsnClass::OutOfSequence:
      s_.regs.add16(R::g::ININVDUPCNT, false);
      if (!qp.resp.rs.psn_nak_outstanding()) {
        qp.resp.rs.psn_nak_sent();
        send_ack(n, roce::aeth::kNakPsnSeq, expected);
      }
      return false;
    case roce::PsnClass::Expected:
      qp.resp.rs.psn_in_sequence();
      break;
  }
  return true;
}

void RxPktHndler::rx_request(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  if (!rx_request_psn(qp, f)) return;
  const bool is_write = oi.kind == roce::OpKind::Write;
  const bool is_read = oi.kind == roce::OpKind::ReadRequest;
  // Opcode sequence: after a FIRST/MIDDLE of a kind, only MIDDLE/LAST of the
  // same kind; otherwise only FIRST/ONLY.
  const roce::OpcodeInfo* prev = roce::opcode_info(uint8_t(FLD::LSTRQREQi_OPCODE.get(s_.Q(n, R::q::LSTRQREQi))));
  const bool in_msg = prev && (prev->pos == OpPos::First || prev->pos == OpPos::Middle);
  const bool continues = oi.pos == OpPos::Middle || oi.pos == OpPos::Last;
  const uint32_t pmtu = s_.pmtu(n);
  const size_t len = f.payload.size();
  const bool full_pkt = oi.pos == OpPos::First || oi.pos == OpPos::Middle;
  const bool len_bad = !is_read && ((full_pkt && (len != pmtu || f.bth.pad_cnt != 0)) || len > pmtu);
  if (in_msg != continues || (in_msg && prev->kind != oi.kind)) {
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    if (len_bad)  // both at once: 0x03 / 0x13 (PG332 "01 and 02 together")
      return resp_.qp_fatal(qp, is_write ? fatal::kWriteOpSeqAndLen : fatal::kOpSeqAndLen,
                            "opcode sequence and payload length / pad");
    return resp_.qp_fatal(qp, is_write ? fatal::kWriteOpSeq : fatal::kOpSeq, "opcode sequence");
  }
  if (is_read) return rx_read_request(qp, f, false);
  if (len_bad) {
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    return resp_.qp_fatal(qp, is_write ? fatal::kWriteLen : fatal::kLen, "payload length / pad");
  }
  if (!(is_write ? rx_write(qp, f) : rx_send(qp, f))) return;
  // Immediate data and invalidate R_Keys leave on the ieth_immdt stream, not
  // through the RQ (PG332 section 4).
  if (ends_message(oi) && (f.immdt || f.ieth)) rx_immediate(qp, f);
  // Accepted.
  s_.Q(n, R::q::LSTRQREQi) = FLD::LSTRQREQi_OPCODE.set(f.bth.psn, f.bth.opcode);
  if (ends_message(oi)) s_.Q(n, R::q::STATMSNi) = roce::psn_add(s_.Q(n, R::q::STATMSNi), 1);
  ack_accepted(qp, f.bth.psn, f.bth.ack_req);
  s_.trace(qp);
}

// A WRITE packet at the expected PSN: the RETH checked on its first packet,
// the payload written where it points. false: refused (NAK, fatal).
bool RxPktHndler::rx_write(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  auto& rs = qp.resp;
  const size_t len = f.payload.size();
  if (starts_message(oi)) {
    const roce::Reth& r = *f.reth;
    std::string why;
    uint64_t phys = 0;
    if (const uint8_t code = check_reth(n, r, /*read=*/false, phys, why)) {
      send_ack(n, roce::aeth::kNakRemoteAccess, f.bth.psn);
      resp_.qp_fatal(qp, code, why);
      return false;
    }
    rs.wr_phys = phys;
    rs.wr_left = r.dma_len;
    rs.rs.begin_message();
  }
  if (len > rs.wr_left || (ends_message(oi) && len != rs.wr_left)) {
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    resp_.qp_fatal(qp, fatal::kRethLen, "WRITE payload does not match the RETH DMA length");
    return false;
  }
  if (len) s_.dma_rx.write(rs.wr_phys, f.payload.data(), len, n);
  rs.wr_phys += len;
  rs.wr_left -= len;
  if (ends_message(oi)) rs.rs.end_message();
  return true;
}

// A SEND packet at the expected PSN: into the current RQ element (RNR NAK
// when the RQ is full at its first packet); its last packet moves the RQ
// write pointer (STATRQPIDBi, its mirror, the sideband, INTSTS[6]).
// false: refused (RNR NAK, or NAK and fatal).
bool RxPktHndler::rx_send(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  auto& rs = qp.resp;
  const size_t len = f.payload.size();
  const uint32_t depth = s_.rq_depth(n);
  const uint32_t pi = depth ? FLD::STATRQPIDBi_VALUE.get(s_.Q(n, R::q::STATRQPIDBi)) % depth : 0;
  const uint32_t ci = depth ? FLD::RQCIi_VALUE.get(s_.Q(n, R::q::RQCIi)) % depth : 0;
  if (starts_message(oi)) {
    if (depth == 0 || (pi + 1) % depth == ci) {
      // RQ full: RNR NAK with TIMEOUTCONFi[20:16]; the PSN is not consumed.
      const uint8_t timer = uint8_t(FLD::TIMEOUTCONFi_RNR_TIMER.get(s_.Q(n, R::q::TIMEOUTCONFi)));
      s_.Q(n, R::q::STATQPi) |= FLD::STATQPi_RQ_OVERFLOW.bit();
      uint32_t& sts = s_.G(R::g::OUTRNRPKTSTS);
      sts = FLD::OUTRNRPKTSTS_COUNT.inc(FLD::OUTRNRPKTSTS_QP.set(sts, n));
      intr_.raise(FLD::INTSTS_RNR_NAK.bit());
      rs.rs.rnr_nak_sent();
      send_ack(n, roce::aeth::rnr_nak(timer), f.bth.psn);
      s_.trace(qp);
      return false;
    }
    rs.rs.rq_room();
    rs.send_off = 0;
  }
  const uint64_t esz = uint64_t(FLD::QPCONFi_RQ_BUF_SIZE.get(s_.Q(n, R::q::QPCONFi))) * R::kRqBufSizeUnit;
  if (rs.send_off + len > esz) {
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    resp_.qp_fatal(qp, fatal::kLen, "SEND larger than the RQ element");
    return false;
  }
  const uint64_t rqba = s_.q64(n, R::q::RQBAi, R::q::RQBAMSBi);
  if (len) s_.dma_rx.write(rqba + pi * esz + rs.send_off, f.payload.data(), len, n);
  rs.send_off += len;
  if (rs.send_off) rs.rs.begin_message();
  s_.regs.add16(R::g::INSRRPKTCNT, false);  // every accepted SEND packet (A-CNT-1)
  if (ends_message(oi)) {
    const uint32_t npi = (pi + 1) % depth;
    s_.Q(n, R::q::STATRQPIDBi) = npi;
    set_rq_buf_ca(n, rqba + npi * esz);
    s_.dma_rx.write32(s_.q64(n, R::q::RQWPTRDBADDi, R::q::RQWPTRDBADDMSBi), npi, n);
    if (*sinks_.rq_db) {
      s_.ctx.set(s_.wave.rq_db_addr, ErnicWaveform::db_addr(n));
      s_.ctx.set(s_.wave.rq_db_data, npi);
      (*sinks_.rq_db)(n, npi);
    }
    if (s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_RQ_IRQ_EN.bit()) {
      intr_.bank_set(s_.regs.layout().rq_int_bank, n);
      intr_.raise(FLD::INTSTS_RQ_PKT.bit());
    }
    rs.send_off = 0;
    rs.rs.end_message();
  }
  return true;
}

// ieth_immdt_axis (PG332 section 4): one 64-bit entry per immediate datum
// or invalidate R_Key: [31:0] ImmDt or R_Key, [39:32] type, [47:40] QP,
// [55:48] RQ producer index after the SEND (SEND kinds only).
void RxPktHndler::rx_immediate(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const bool is_write = roce::opcode_info(f.bth.opcode)->kind == roce::OpKind::Write;
  using pg332::IethType;
  const IethType type = f.ieth ? IethType::send_inv : is_write ? IethType::write_imm : IethType::send_imm;
  const uint32_t data = f.ieth ? *f.ieth : *f.immdt;
  const uint8_t rq_pi = is_write ? 0 : uint8_t(FLD::STATRQPIDBi_VALUE.get(s_.Q(n, R::q::STATRQPIDBi)));
  const uint64_t entry = pg332::encode_ieth({data, type, uint8_t(n), rq_pi});
  if (s_.ctx.log)
    s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), n, "ieth_immdt",
                      fmt::format("0x{:014x} ({} 0x{:08x}{})", entry,
                                  type == IethType::send_inv   ? "SEND_INV"
                                  : type == IethType::send_imm ? "SEND_IMM"
                                                               : "WRITE_IMM",
                                  data, is_write ? "" : fmt::format(", RQ PI {}", rq_pi)));
  if (*sinks_.ieth) (*sinks_.ieth)(entry);
}

// XRNICCONF[4:3]: 00 ACK on AckReq or on timeout, 01 on timeout only, 10 on
// AckReq only; 11 is reserved and taken as 00 (A-ERNIC-20). The timeout and
// the packet count are ErnicTiming parameters (A-ERNIC-20).
uint32_t RxPktHndler::ack_mode() const {
  const uint32_t m = FLD::XRNICCONF_ACK_MODE.get(s_.G(R::g::XRNICCONF));
  return m == 3 ? 0 : m;
}

// An accepted request packet: ACK it now (AckReq by the XRNICCONF mode,
// coalescing count) or start the coalescing timeout.
void RxPktHndler::ack_accepted(qp::QpContext& qp, uint32_t psn, bool ack_req) {
  const uint32_t mode = ack_mode();
  auto& rs = qp.resp;
  rs.rs.packet_accepted();
  rs.unacked_psn = psn;
  const uint32_t cap = s_.cfg.timing.ack_coalesce_packets;
  const bool on_request = ack_req && mode != 1;
  const bool on_count = mode != 2 && cap != 0 && rs.rs.unacked() >= cap;
  if (on_request || on_count) {
    if (s_.cfg.test_bug_ack_coalescing && !on_request)  // test-only planted bug (ErnicConfig): the wrong PSN
      return send_ack(qp.qpn, roce::aeth::ack(), (psn + roce::kPsnMask) & roce::kPsnMask);
    return send_ack(qp.qpn, roce::aeth::ack(), psn);
  }
  if (mode != 2 && rs.ack_due_ps == 0 && s_.cfg.timing.ack_timeout_ns) {
    rs.ack_due_ps = ClockDomain::now_ps() + s_.cfg.timing.ack_timeout_ns * 1000;
    resp_.timers_changed(qp);
  }
}

void RxPktHndler::send_ack(uint32_t n, uint8_t syndrome, uint32_t psn) {
  // Every ACK/NAK covers the packets accepted so far (coalescing restarts).
  auto& rs = s_.qps[n].resp;
  rs.rs.acked();
  rs.ack_due_ps = 0;
  rs.ack_fire = false;
  const uint32_t msn = s_.Q(n, R::q::STATMSNi) & roce::kPsnMask;
  s_.core.wait_cycles(s_.cfg.timing.ack_build_cycles);
  roce::Frame a = frame_template(s_.regs, n);
  a.bth.opcode = roce::op::RC_ACK;
  a.bth.psn = psn & roce::kPsnMask;
  a.aeth = roce::Aeth{syndrome, msn};
  s_.G(R::g::LSTOUTPKT) = ErnicShared::last_packet(roce::op::RC_ACK, n, psn);
  if (roce::aeth::type(syndrome) == roce::aeth::kTypeAck) {
    s_.regs.add16(R::g::OUTAMPKTCNT, false);
    ++s_.stats.acks_sent;
  } else {
    s_.G(R::g::OUTNAKPKTCNT) = FLD::OUTNAKPKTCNT_COUNT.inc(s_.G(R::g::OUTNAKPKTCNT));
    ++s_.stats.naks_sent;
    // A request refused with NAK-invalid / remote access / remote operational
    // is an invalid packet; out-of-sequence ones count where they arrive (A-CNT-1).
    if (roce::aeth::type(syndrome) == roce::aeth::kTypeNak && syndrome != roce::aeth::kNakPsnSeq) s_.regs.add16(R::g::ININVDUPCNT, false);
  }
  tx_.send(a);
}

// PG332 Fig. 2-9 checks of an incoming RETH: index from the R_Key, PD, key
// byte, access, bounds; 0 when valid (phys set), else the fatal code with
// the reason in why. Timed: the MR lookup (model/mr).
uint8_t RxPktHndler::check_reth(uint32_t n, const roce::Reth& r, bool read, uint64_t& phys, std::string& why) {
  auto fail = [&why](uint8_t code, const char* reason) {
    why = reason;
    return code;
  };
  const uint32_t idx = R::rkey_index(r.rkey);
  if (idx >= s_.cfg.num_mr) return fail(fatal::kRkey, "R_Key index beyond the MR table");
  MrContext e;  // the register entry (table) or the CAM / host-table context (mr_cache: cam)
  if (!s_.mr_lookup->lookup(idx, e, n)) return fail(fatal::kRkey, "MR context fetch failed");
  const uint64_t va0 = uint64_t(e.word(R::m::VIRTADDRLSB)) | uint64_t(e.word(R::m::VIRTADDRMSB)) << 32;
  const uint64_t mlen = uint64_t(e.word(R::m::WRRDBUFLEN)) | uint64_t(FLD::ACCESSDESC_LEN_HI.get(e.word(R::m::ACCESSDESC))) << 32;
  const uint32_t acc = FLD::ACCESSDESC_ACCESS.get(e.word(R::m::ACCESSDESC));
  // The key checks (0x15) and the bounds check (0x16) are both made; both
  // failing give 0x17 (A-ERNIC-7).
  const char* key_fail = nullptr;
  if (FLD::PDi_PD.get(e.word(R::m::PDPDNUM)) != FLD::PDi_PD.get(s_.Q(n, R::q::PDi))) key_fail = "PD mismatch";
  else if (FLD::BUFRKEY_KEY.get(e.word(R::m::BUFRKEY)) != R::rkey_key(r.rkey)) key_fail = "R_Key key byte mismatch";
  else if (read && acc != R::u(Acc::READ) && acc != R::u(Acc::READ_WRITE)) key_fail = "MR does not allow remote read";
  else if (!read && acc != R::u(Acc::WRITE) && acc != R::u(Acc::READ_WRITE)) key_fail = "MR does not allow remote write";
  const bool out = r.va < va0 || r.va - va0 > mlen || uint64_t(r.dma_len) > mlen - (r.va - va0);
  if (key_fail && out) {
    why = std::string(key_fail) + ", and the RETH range is outside the MR";
    return fatal::kRkeyAndLen;
  }
  if (key_fail) return fail(fatal::kRkey, key_fail);
  if (out) return fail(fatal::kRethLen, "RETH range outside the MR");
  phys = (uint64_t(e.word(R::m::BUFBASEADDRLSB)) | uint64_t(e.word(R::m::BUFBASEADDRMSB)) << 32) + (r.va - va0);
  return 0;
}

// Responder: a READ_REQUEST at the expected PSN (duplicate = false) or
// behind it (duplicate = true, executed again from its own PSN without
// moving the expected PSN or the MSN). The RETH is checked as for a WRITE
// but needs read access; the responses (ONLY, or FIRST / MIDDLE... / LAST)
// take the PSNs from the request's on, their payload is read from host
// memory through wqe_proc_top_m_axi, and they go out through the TX queue
// as ACKs do. The RX handler waits while it sends them (assumption A-ERNIC-11).
void RxPktHndler::rx_read_request(qp::QpContext& qp, const roce::Frame& f, bool duplicate) {
  using namespace roce::op;
  const uint32_t n = qp.qpn;
  ++s_.stats.read_requests_received;
  if (!f.reth) return drop("READ_REQUEST without RETH");
  const roce::Reth& r = *f.reth;
  const uint32_t mtu = s_.pmtu(n);
  const uint32_t npkts = r.dma_len == 0 ? 1 : uint32_t((uint64_t(r.dma_len) + mtu - 1) / mtu);
  // A duplicate is an earlier READ asked again: its responses take PSNs below
  // the expected one. One whose responses would reach the expected PSN or
  // beyond (PSNs no request has used yet) is no earlier READ: dropped
  // (IBTA 9.9.4.2; rxe drops a duplicate READ that is not a subset of one it
  // executed). Found by fuzz_rx (tb/fuzz).
  if (duplicate) {
    const uint32_t expected = roce::psn_add(FLD::LSTRQREQi_PSN.get(s_.Q(n, R::q::LSTRQREQi)), 1);
    if (!roce::psn_lt(roce::psn_add(f.bth.psn, npkts - 1), expected))
      return drop(fmt::format("duplicate READ_REQUEST at PSN 0x{:06x} for {} responses reaches the expected PSN "
                              "0x{:06x}", f.bth.psn, npkts, expected));
  }
  std::string why;
  uint64_t phys = 0;
  if (const uint8_t code = check_reth(n, r, /*read=*/true, phys, why)) {
    send_ack(n, roce::aeth::kNakRemoteAccess, f.bth.psn);
    return resp_.qp_fatal(qp, code, why);
  }
  if (!duplicate) {
    // Accepted: the expected PSN moves past every response PSN; the READ is
    // one message for the MSN the responses carry.
    s_.Q(n, R::q::LSTRQREQi) = FLD::LSTRQREQi_OPCODE.set(roce::psn_add(f.bth.psn, npkts - 1), RC_READ_REQUEST);
    s_.Q(n, R::q::STATMSNi) = roce::psn_add(s_.Q(n, R::q::STATMSNi), 1);
    // The responses' AETH acknowledges every earlier request: nothing is
    // left for the coalescing timeout.
    qp.resp.rs.acked();
    qp.resp.ack_due_ps = 0;
    s_.trace(qp);
  }
  roce::Frame rsp = frame_template(s_.regs, n);
  uint32_t off = 0;
  for (uint32_t i = 0; i < npkts; ++i) {
    if (s_.fatal(n)) return;  // the QP went fatal meanwhile: stop sending
    const bool first = i == 0, last = i + 1 == npkts;
    const uint32_t chunk = std::min(mtu, r.dma_len - off);
    const uint8_t op = npkts == 1 ? RC_READ_RESP_ONLY
                       : first    ? RC_READ_RESP_FIRST
                       : last     ? RC_READ_RESP_LAST
                                  : RC_READ_RESP_MIDDLE;
    rsp.bth.opcode = op;
    rsp.bth.psn = roce::psn_add(f.bth.psn, i);
    rsp.bth.ack_req = false;
    rsp.aeth.reset();
    if (op != RC_READ_RESP_MIDDLE) rsp.aeth = roce::Aeth{roce::aeth::ack(), s_.Q(n, R::q::STATMSNi) & roce::kPsnMask};
    rsp.payload.resize(chunk);
    if (chunk && !s_.dma_payload.read(phys + off, rsp.payload.data(), chunk, /*with_latency=*/first, n)) {
      // The MR table points outside host memory: the responder cannot
      // answer (remote operational error, IBTA 9.7.5.2.4). Nothing was
      // sent for this READ yet: it is not a completed message, and the
      // NAK's MSN does not count it.
      if (!duplicate && first) s_.Q(n, R::q::STATMSNi) = roce::psn_add(s_.Q(n, R::q::STATMSNi), -1);
      send_ack(n, roce::aeth::kNakRemoteOp, f.bth.psn);
      return resp_.qp_fatal(qp, fatal::kWqe, "READ response payload outside host memory");
    }
    s_.core.wait_cycles(s_.cfg.timing.rdrsp_build_cycles);
    s_.G(R::g::LSTOUTPKT) = ErnicShared::last_packet(op, n, rsp.bth.psn);
    ++s_.G(R::g::OUTRDRSPPKTCNT);
    ++s_.stats.read_responses_sent;
    tx_.send(rsp);
    off += chunk;
  }
}

}  // namespace ernic
