// model/peer: see requester.h.
#include "model/peer/requester.h"

#include <algorithm>

#include "model/peer/answers.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic::peer {

namespace op = roce::op;
using pg332::WqeOpcode;

namespace {
bool is_read(const PeerWqe& w) { return w.op == WqeOpcode::read; }
// The first WQE not done, and whether a packet of it has been sent.
size_t first_open(const PeerSendQueue& r) {
  size_t i = 0;
  while (i < r.sq.size() && r.sq[i].done) ++i;
  return i;
}
bool outstanding(const PeerSendQueue& r) {
  const size_t i = first_open(r);
  return i < r.sq.size() && (i < r.cursor || (i == r.cursor && r.cursor_pkt > 0));
}
}  // namespace

void Requester::post(PeerQp& q, PeerWqe w, uint64_t now_ps) {
  PeerSendQueue& r = q.req;
  if (!outstanding(r)) r.progress_ps = now_ps;
  w.first_psn = r.npsn;
  w.npkts = read_span(w.length, q.pmtu);  // packets of a SEND / WRITE, or a READ's responses
  w.resp_got = w.acked = 0;
  w.sent = w.done = false;
  r.npsn = roce::psn_add(r.npsn, w.npkts);
  if (r.error) {  // a QP in Error completes new work with a flush error at once
    r.cq.push_back({w.wr_id, w.op, true, 0, now_ps});
    return;
  }
  r.sq.push_back(w);
}

roce::Frame Requester::packet(const PeerQp& q, const PeerWqe& w, uint32_t k) const {
  roce::Frame f = frame_to_remote(cfg_, q);
  if (is_read(w)) {  // from its first missing response (all of it the first time)
    const uint64_t off = uint64_t(w.resp_got) * q.pmtu;
    f.bth.opcode = op::RC_READ_REQUEST;
    f.bth.psn = roce::psn_add(w.first_psn, w.resp_got);
    f.bth.ack_req = true;
    f.reth = roce::Reth{w.remote_va + off, w.rkey, uint32_t(w.length - off)};
    return f;
  }
  const bool write = w.op == WqeOpcode::write || w.op == WqeOpcode::write_imm;
  const bool imm = w.op == WqeOpcode::write_imm || w.op == WqeOpcode::send_imm;
  const bool inv = w.op == WqeOpcode::send_inv;
  const bool first = k == 0, last = k + 1 == w.npkts;
  if (write)
    f.bth.opcode = first && last ? (imm ? op::RC_WRITE_ONLY_IMM : op::RC_WRITE_ONLY)
                   : first       ? op::RC_WRITE_FIRST
                   : last        ? (imm ? op::RC_WRITE_LAST_IMM : op::RC_WRITE_LAST)
                                 : op::RC_WRITE_MIDDLE;
  else
    f.bth.opcode = first && last ? (imm ? op::RC_SEND_ONLY_IMM : inv ? op::RC_SEND_ONLY_INV : op::RC_SEND_ONLY)
                   : first       ? op::RC_SEND_FIRST
                   : last        ? (imm ? op::RC_SEND_LAST_IMM : inv ? op::RC_SEND_LAST_INV : op::RC_SEND_LAST)
                                 : op::RC_SEND_MIDDLE;
  f.bth.psn = roce::psn_add(w.first_psn, k);
  f.bth.ack_req = last;
  if (write && first) f.reth = roce::Reth{w.remote_va, w.rkey, w.length};
  if (last && imm) f.immdt = w.immdt;
  if (last && inv) f.ieth = w.immdt;
  const uint64_t off = uint64_t(k) * q.pmtu;
  const uint64_t len = std::min<uint64_t>(q.pmtu, w.length - std::min<uint64_t>(off, w.length));
  f.payload = len ? mem_.read(w.local_pa + off, len) : roce::Bytes{};
  return f;
}

std::optional<roce::Frame> Requester::next_frame(PeerQp& q, uint64_t now_ps) {
  PeerSendQueue& r = q.req;
  while (r.cursor < r.sq.size() && r.sq[r.cursor].done) ++r.cursor, r.cursor_pkt = 0;
  if (r.error || now_ps < r.rnr_until_ps || r.cursor >= r.sq.size()) return std::nullopt;
  PeerWqe& w = r.sq[r.cursor];
  if (is_read(w)) {
    uint32_t reads = 0;  // READs sent and not answered in full
    for (size_t i = 0; i < r.cursor; ++i) reads += is_read(r.sq[i]) && !r.sq[i].done;
    if (reads >= cfg_.max_reads) return std::nullopt;
  }
  if (!outstanding(r)) r.progress_ps = now_ps;  // the ACK timer starts with the first packet out
  roce::Frame f = packet(q, w, r.cursor_pkt);
  ++r.packets;
  if (is_read(w) || ++r.cursor_pkt >= w.npkts) {
    w.sent = true;
    ++r.cursor;
    r.cursor_pkt = 0;
  }
  return f;
}

void Requester::go_back(PeerQp& q, uint32_t psn) {
  PeerSendQueue& r = q.req;
  for (size_t i = 0; i < r.sq.size(); ++i) {
    const PeerWqe& w = r.sq[i];
    if (w.done || roce::psn_lt(psn, w.first_psn)) continue;
    if (roce::psn_ge(psn, roce::psn_add(w.first_psn, w.npkts))) continue;
    if (i > r.cursor || (i == r.cursor && !is_read(w) && roce::psn_diff(psn, w.first_psn) >= int32_t(r.cursor_pkt)))
      return;  // not sent yet: nothing to go back for
    r.cursor = i;
    r.cursor_pkt = is_read(w) ? 0 : uint32_t(roce::psn_diff(psn, w.first_psn));
    ++r.retries;
    return;
  }
}

void Requester::ack_upto(PeerQp& q, uint32_t psn, uint64_t now_ps) {
  PeerSendQueue& r = q.req;
  for (size_t i = 0; i < r.sq.size() && i < r.cursor + 1; ++i) {
    PeerWqe& w = r.sq[i];
    if (w.done) continue;
    if (roce::psn_lt(psn, w.first_psn)) break;
    if (is_read(w)) {  // an ACK at or past a READ not answered in full: its responses were lost
      go_back(q, roce::psn_add(w.first_psn, w.resp_got));
      break;
    }
    if (!roce::psn_le(roce::psn_add(w.first_psn, w.npkts - 1), psn)) {
      // Part of a long message acknowledged (IBTA 9.7.5.1: an ACK covers
      // every packet up to its PSN): progress, and a go-back starts after it.
      const uint32_t got = uint32_t(roce::psn_diff(psn, w.first_psn)) + 1;
      if (got > w.acked) {
        w.acked = got;
        r.progress_ps = now_ps;
      }
      break;
    }
    w.done = true;
    r.progress_ps = now_ps;
  }
}

void Requester::retire(PeerQp& q, uint64_t now_ps) {
  PeerSendQueue& r = q.req;
  while (!r.sq.empty() && r.sq.front().done) {
    r.cq.push_back({r.sq.front().wr_id, r.sq.front().op, false, 0, now_ps});
    r.sq.pop_front();
    if (r.cursor > 0) --r.cursor;
    else r.cursor_pkt = 0;
  }
}

void Requester::fail_all(PeerQp& q, uint8_t syndrome, uint64_t now_ps) {
  PeerSendQueue& r = q.req;
  bool first = true;
  for (const PeerWqe& w : r.sq)
    if (!w.done || first) {
      r.cq.push_back({w.wr_id, w.op, true, first ? syndrome : uint8_t(0), now_ps});
      first = false;
    }
  r.sq.clear();
  r.cursor = r.cursor_pkt = 0;
  r.error = true;
}

bool Requester::on_answer(PeerQp& q, const roce::Frame& f, uint64_t now_ps) {
  PeerSendQueue& r = q.req;
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  if (r.error || !oi) return false;
  const uint32_t psn = f.bth.psn & roce::kPsnMask;
  if (oi->kind == roce::OpKind::ReadResponse) {
    size_t i = 0;
    while (i < r.sq.size() && !(is_read(r.sq[i]) && !r.sq[i].done)) ++i;
    if (i >= r.sq.size()) return false;  // no READ waits for it
    PeerWqe& w = r.sq[i];
    if (!w.sent && i >= r.cursor) return false;  // not issued yet
    if (psn != roce::psn_add(w.first_psn, w.resp_got)) return false;  // a duplicate, or a gap the timer recovers
    const uint64_t off = uint64_t(w.resp_got) * q.pmtu;
    if (off + f.payload.size() > w.length) return false;
    if (!f.payload.empty()) mem_.write(w.local_pa + off, f.payload.data(), f.payload.size());
    ++w.resp_got;
    ack_upto(q, roce::psn_add(w.first_psn, -1), now_ps);  // the requests before the READ
    if (w.resp_got >= w.npkts) w.done = true;
    r.progress_ps = now_ps;
    retire(q, now_ps);
    return true;
  }
  if (oi->kind != roce::OpKind::Ack || !f.aeth) return false;
  const uint8_t syn = f.aeth->syndrome;
  switch (roce::aeth::type(syn)) {
    case roce::aeth::kTypeAck:
      ack_upto(q, psn, now_ps);
      break;
    case roce::aeth::kTypeRnr:
      ++r.rnr_naks;
      ack_upto(q, roce::psn_add(psn, -1), now_ps);
      go_back(q, psn);
      r.rnr_until_ps = now_ps + roce::aeth::rnr_timer_ps(roce::aeth::value(syn));
      r.progress_ps = r.rnr_until_ps;
      break;
    default:
      ++r.naks;
      ack_upto(q, roce::psn_add(psn, -1), now_ps);
      retire(q, now_ps);
      if (syn == roce::aeth::kNakPsnSeq) {
        go_back(q, psn);
        r.progress_ps = now_ps;
      } else {
        fail_all(q, syn, now_ps);
      }
      return true;
  }
  retire(q, now_ps);
  return true;
}

std::optional<uint64_t> Requester::timeout_at(const PeerQp& q) const {
  if (q.req.error || !outstanding(q.req)) return std::nullopt;
  return std::max(q.req.progress_ps, q.req.rnr_until_ps) + cfg_.ack_timeout_ps;
}

bool Requester::check_timeout(PeerQp& q, uint64_t now_ps) {
  const auto at = timeout_at(q);
  if (!at || now_ps < *at) return false;
  PeerSendQueue& r = q.req;
  const PeerWqe& w = r.sq[first_open(r)];
  ++r.timeouts;
  go_back(q, roce::psn_add(w.first_psn, is_read(w) ? w.resp_got : w.acked));  // the oldest unacknowledged PSN
  r.progress_ps = now_ps;
  return true;
}

}  // namespace ernic::peer
