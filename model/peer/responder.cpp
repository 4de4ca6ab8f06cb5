// model/peer: see responder.h.
#include "model/peer/responder.h"

#include <fmt/format.h>

#include "model/peer/answers.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic::peer {

namespace {
bool first_or_only(roce::OpPos p) { return p == roce::OpPos::First || p == roce::OpPos::Only; }
bool last_or_only(roce::OpPos p) { return p == roce::OpPos::Last || p == roce::OpPos::Only; }
}  // namespace

uint8_t Responder::ack_syndrome(const PeerQp& q) const {
  return roce::aeth::ack(cfg_.credits_invalid ? roce::aeth::kCreditInvalid : roce::aeth::credit_code(q.rq_count));
}

void Responder::nak(PeerQp& q, uint32_t psn, uint8_t syndrome, const std::string& why,
                    std::vector<roce::Frame>& out) {
  out.push_back(make_ack(cfg_, q, psn, syndrome));
  if (syndrome == roce::aeth::kNakPsnSeq) {
    ++q.stats.naks_psn;
    return;
  }
  (syndrome == roce::aeth::kNakRemoteAccess ? q.stats.naks_access : q.stats.naks_invalid) += 1;
  q.error = true;
  q.error_why = why;
  q.in_msg = PeerQp::Msg::None;
}

void Responder::on_request(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out) {
  if (q.error) {
    ++q.stats.dropped_in_error;
    return;
  }
  const uint32_t psn = f.bth.psn & roce::kPsnMask;
  switch (roce::psn_classify(psn, q.epsn)) {
    case roce::PsnClass::Duplicate:
      ++q.stats.duplicates;
      return duplicate(q, f, out);
    case roce::PsnClass::OutOfSequence:
      ++q.stats.out_of_sequence;
      if (!q.nak_seq_sent) {
        q.nak_seq_sent = true;
        nak(q, q.epsn, roce::aeth::kNakPsnSeq, "", out);
      }
      return;
    case roce::PsnClass::Expected:
      break;
  }
  q.nak_seq_sent = false;
  ++q.stats.requests;
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  if (!oi || roce::transport(f.bth.opcode) != roce::Transport::RC || oi->kind == roce::OpKind::Atomic)
    return nak(q, psn, roce::aeth::kNakInvalid,
               fmt::format("{} is not supported", roce::opcode_name(f.bth.opcode)), out);
  // The opcode sequence: inside a message only its MIDDLE / LAST; outside
  // one only a FIRST, an ONLY or a READ request.
  const PeerQp::Msg kind = oi->kind == roce::OpKind::Send    ? PeerQp::Msg::Send
                           : oi->kind == roce::OpKind::Write ? PeerQp::Msg::Write
                                                             : PeerQp::Msg::None;
  const bool seq_ok = q.in_msg == PeerQp::Msg::None ? first_or_only(oi->pos) : kind == q.in_msg && !first_or_only(oi->pos);
  if (!seq_ok)
    return nak(q, psn, roce::aeth::kNakInvalid,
               fmt::format("opcode sequence: {} {} message", roce::opcode_name(f.bth.opcode),
                           q.in_msg == PeerQp::Msg::None ? "outside a" : "inside another"),
               out);
  if (oi->kind == roce::OpKind::ReadRequest) return read(q, f, out);
  if (oi->kind != roce::OpKind::Send && oi->kind != roce::OpKind::Write)
    return nak(q, psn, roce::aeth::kNakInvalid, fmt::format("{} is not a request", roce::opcode_name(f.bth.opcode)),
               out);
  // Payload sizes: FIRST / MIDDLE one PMTU exactly and no pad; LAST / ONLY at most one PMTU.
  const size_t len = f.payload.size();
  const bool full = oi->pos == roce::OpPos::First || oi->pos == roce::OpPos::Middle;
  if (full ? (len != q.pmtu || f.bth.pad_cnt != 0) : len > q.pmtu)
    return nak(q, psn, roce::aeth::kNakInvalid,
               fmt::format("{} carries {} bytes (pad {}) at PMTU {}", roce::opcode_name(f.bth.opcode), len,
                           f.bth.pad_cnt, q.pmtu),
               out);
  if (!(kind == PeerQp::Msg::Write ? write_payload(q, f, out) : send_payload(q, f, out))) return;
  q.in_msg = last_or_only(oi->pos) ? PeerQp::Msg::None : kind;
  q.epsn = roce::psn_add(psn, 1);
  if (last_or_only(oi->pos)) {
    q.msn = roce::psn_add(q.msn, 1);
    ++q.stats.messages;
  }
  ++q.unacked;
  if (f.bth.ack_req || (cfg_.ack_every_packets && q.unacked >= cfg_.ack_every_packets)) {
    out.push_back(make_ack(cfg_, q, psn, ack_syndrome(q)));
    ++q.stats.acks;
    q.unacked = 0;
  }
}

bool Responder::write_payload(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const uint32_t psn = f.bth.psn & roce::kPsnMask;
  if (first_or_only(oi->pos)) {
    const roce::Reth r = f.reth.value_or(roce::Reth{});
    const auto pa = mrs_.check(r.rkey, r.va, r.dma_len, /*write=*/true);
    if (!pa) {
      nak(q, psn, roce::aeth::kNakRemoteAccess,
          fmt::format("WRITE R_Key 0x{:08x} VA 0x{:x} length {}: no MR allows it", r.rkey, r.va, r.dma_len), out);
      return false;
    }
    q.write_pa = *pa;
    q.write_left = r.dma_len;
  }
  const uint64_t len = f.payload.size();
  if (len > q.write_left || (last_or_only(oi->pos) && len != q.write_left)) {
    nak(q, psn, roce::aeth::kNakInvalid,
        fmt::format("WRITE payload {} bytes where the RETH leaves {}", len, q.write_left), out);
    return false;
  }
  if (len) mem_.write(q.write_pa, f.payload.data(), len);
  q.write_pa += len;
  q.write_left -= len;
  q.stats.bytes_written += len;
  if (f.immdt) q.last_immdt = *f.immdt;
  return true;
}

bool Responder::send_payload(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const uint64_t len = f.payload.size();
  if (first_or_only(oi->pos)) q.send_off = 0;
  if (q.rq_count == 0 || q.send_off + len > q.rq_elem_bytes) {
    nak(q, f.bth.psn & roce::kPsnMask, roce::aeth::kNakInvalid,
        fmt::format("SEND of {}+ bytes into a {}-byte receive element", q.send_off + len, q.rq_elem_bytes), out);
    return false;
  }
  const uint64_t elem = q.rq_pa + (q.recv_index % q.rq_count) * q.rq_elem_bytes;
  if (len) mem_.write(elem + q.send_off, f.payload.data(), len);
  q.send_off += len;
  q.stats.bytes_written += len;
  if (last_or_only(oi->pos)) {
    ++q.recv_index;
    ++q.stats.sends_received;
    if (f.immdt) q.last_immdt = *f.immdt;
    if (f.ieth) q.last_immdt = *f.ieth;
  }
  return true;
}

void Responder::read(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out) {
  const uint32_t psn = f.bth.psn & roce::kPsnMask;
  const roce::Reth r = f.reth.value_or(roce::Reth{});
  const auto pa = mrs_.check(r.rkey, r.va, r.dma_len, /*write=*/false);
  if (!pa)
    return nak(q, psn, roce::aeth::kNakRemoteAccess,
               fmt::format("READ R_Key 0x{:08x} VA 0x{:x} length {}: no MR allows it", r.rkey, r.va, r.dma_len),
               out);
  q.msn = roce::psn_add(q.msn, 1);
  ++q.stats.messages;
  const roce::Bytes data = r.dma_len ? mem_.read(*pa, r.dma_len) : roce::Bytes{};
  for (roce::Frame& a : make_read_responses(cfg_, q, psn, data, ack_syndrome(q))) out.push_back(std::move(a));
  q.stats.read_responses += read_span(r.dma_len, q.pmtu);
  q.stats.bytes_read += r.dma_len;
  q.epsn = roce::psn_add(psn, read_span(r.dma_len, q.pmtu));
  q.unacked = 0;  // the responses acknowledge every request before the READ
}

void Responder::duplicate(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  if (oi && oi->kind == roce::OpKind::ReadRequest) {
    // Executed again from its PSN (a requester may re-issue from inside the
    // READ's span, VA and length moved), with the current MSN.
    const roce::Reth r = f.reth.value_or(roce::Reth{});
    const auto pa = mrs_.check(r.rkey, r.va, r.dma_len, /*write=*/false);
    if (!pa) return;  // a duplicate is not executed when it fails: nothing to answer
    const roce::Bytes data = r.dma_len ? mem_.read(*pa, r.dma_len) : roce::Bytes{};
    for (roce::Frame& a : make_read_responses(cfg_, q, f.bth.psn, data, ack_syndrome(q))) out.push_back(std::move(a));
    q.stats.read_responses += read_span(r.dma_len, q.pmtu);
    return;
  }
  if (f.bth.ack_req) {
    out.push_back(make_ack(cfg_, q, roce::psn_add(q.epsn, -1), ack_syndrome(q)));
    ++q.stats.acks;
  }
}

}  // namespace ernic::peer
