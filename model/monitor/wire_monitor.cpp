// model/monitor: the passive wire monitor (see wire_monitor.h).
#include "model/monitor/wire_monitor.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <variant>

#include "model/roce/cm.h"
#include "model/roce/icrc.h"
#include "model/roce/mtu.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"

namespace ernic::monitor {

namespace {

std::string fmt_s(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt_s(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

unsigned psn24(int64_t u) { return unsigned(uint64_t(u) & roce::kPsnMask); }

int kind_of(roce::OpKind k) {
  if (k == roce::OpKind::Send) return 0;
  if (k == roce::OpKind::Write) return 1;
  return -1;
}
const char* kind_name(int k) { return k == 0 ? "SEND" : k == 1 ? "WRITE" : "no"; }

// Frame length up to and including the ICRC, from the IP header.
size_t roce_len(const roce::Frame& f) {
  return f.ipv6 ? roce::kEthHdrLen + roce::kIpv6HdrLen + f.ip6.payload_len : roce::kEthHdrLen + f.ip4.total_len;
}

bool icrc_ok(const std::vector<uint8_t>& b, const roce::Frame& f) {
  const size_t n = roce_len(f);
  if (n < roce::kEthHdrLen + roce::kIcrcLen || n > b.size()) return false;
  return roce::compute_icrc(b.data(), n - roce::kIcrcLen) == roce::stored_icrc(b.data(), n);
}

}  // namespace

std::string Violation::str() const {
  return fmt_s("%s: %s (%s frame #%llu at %.6f us)", rule.c_str(), what.c_str(), dir.c_str(),
               (unsigned long long)frame_index, double(t_ps) / 1e6);
}

std::string WireMonitor::reverse(const std::string& dir) {
  const size_t p = dir.find("->");
  if (p == std::string::npos) return dir;
  return dir.substr(p + 2) + "->" + dir.substr(0, p);
}

void WireMonitor::flag(const std::string& dir, const std::string& rule, const std::string& what) {
  violations_.push_back({cur_t_, dir, cur_index_, rule, what});
}

int64_t WireMonitor::unwrap(Stream& s, uint32_t raw) const {
  const int64_t base = s.high - 1;
  return base + roce::psn_diff(raw & roce::kPsnMask, psn24(base));
}

int64_t WireMonitor::read_span(const Stream& s, uint32_t len) const {
  if (!s.pmtu) return 0;
  return std::max<int64_t>(1, (int64_t(len) + s.pmtu - 1) / s.pmtu);
}

void WireMonitor::set_pmtu(Stream& s, uint32_t pmtu, const std::string& dir, const char* from) {
  if (!roce::is_pmtu(pmtu))
    flag(dir, "pmtu", fmt_s("%s carries %u bytes: not a PMTU (%s)", from, pmtu, roce::pmtu_list().c_str()));
  s.pmtu = pmtu;
  if (s.span_uncertain && s.pmtu) {
    // The READ sent before the PMTU was known: its span is now certain.
    const auto it = s.reads.find(s.span_read);
    const int64_t next = s.span_read + read_span(s, it == s.reads.end() ? 0 : it->second.len);
    if (s.cursor == s.span_min) {  // nothing sent since
      s.cursor = next;
      s.high = std::max(s.span_prev_high, next);
    }
    s.span_uncertain = false;
  }
}

int64_t WireMonitor::acked_by(Stream& s, uint8_t opcode, bool ack_aeth, int64_t u, bool view) {
  const roce::OpcodeInfo* oi = roce::opcode_info(opcode);
  int64_t acked = u;
  if (oi->kind == roce::OpKind::ReadResponse && view) {
    // The requester takes READ responses in PSN order, one expected PSN at
    // a time: the next one of the READ it is receiving, or else the first
    // PSN of the oldest READ it has not finished. Any other response (a
    // gap, a repeat, one behind an unfinished READ) it drops, AETH and all
    // (IBTA 9.9.3.1.3): it acknowledges nothing. What it has taken it
    // keeps, so after a re-issue the response at the expected PSN is taken
    // whatever its position in the stream (a late one of the first
    // request, or the re-issue's FIRST). In sequence from a READ's first
    // response to its last, the READ is done; until then it stays
    // unacknowledged (it may be sent again).
    int64_t expected = s.vr_next;
    if (!s.vr_active) {
      expected = -1;
      for (auto it = s.reads.lower_bound(s.acked_view); it != s.reads.end(); ++it)
        if (!it->second.done_view) {
          expected = it->first;
          break;
        }
    }
    if (u != expected) return s.acked_view;
    if (!s.vr_active) s.vr_active = true, s.vr_read = u, s.vr_next = u;
    ++s.vr_next;
    acked = s.vr_read;
    if (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only) {
      s.vr_active = false;
      acked = u + 1;
      for (auto it = s.reads.upper_bound(u); it != s.reads.begin();) {
        --it;
        const int64_t n = read_span(s, it->second.len);
        if (n && it->first + n - 1 == u) it->second.done_view = true;
        if (it->first < s.vr_read) break;
      }
    }
  } else if (oi->kind == roce::OpKind::ReadResponse) {
    if (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only) {
      acked = u + 1;
      int k = 0;
      for (auto it = s.reads.upper_bound(u); it != s.reads.begin() && k < 64; ++k) {
        --it;
        const int64_t n = read_span(s, it->second.len);
        if (n && it->first + n - 1 == u) it->second.done_wire = true;
      }
    }
  } else if (ack_aeth) {
    acked = u + 1;
  }
  // An ACK beyond a READ whose responses have not come (IBTA implied NAK)
  // leaves that READ unacknowledged, and with it what follows it until the
  // READ completes; the requester remembers how far the ACK reached
  // (ack_reach_view, settle_view).
  if (view && acked <= s.high) s.ack_reach_view = std::max(s.ack_reach_view, acked);
  const int64_t from = view ? s.acked_view : s.acked_wire;
  for (auto it = s.reads.lower_bound(from); it != s.reads.end() && it->first < acked; ++it)
    if (!(view ? it->second.done_view : it->second.done_wire) && it->first < u + (acked > u ? 1 : 0) &&
        !(oi->kind == roce::OpKind::ReadResponse && it->first == u)) {
      acked = it->first;
      break;
    }
  return acked;
}

// What an ACK or NAK taken earlier covered beyond a READ that was then
// unfinished is acknowledged once the READs before it have completed.
void WireMonitor::settle_view(Stream& s) {
  int64_t lim = s.ack_reach_view;
  for (auto it = s.reads.lower_bound(s.acked_view); it != s.reads.end() && it->first < lim; ++it)
    if (!it->second.done_view) {
      lim = it->first;
      break;
    }
  if (lim > s.acked_view && lim <= s.high) s.acked_view = lim;
}

// The lowest PSN a go-back may return to: the oldest PSN the requester has
// not seen acknowledged, or the start of the message it lies in (PG332 3.1
// resends a whole WQE: its acknowledged packets again, as duplicates).
int64_t WireMonitor::retransmit_floor(const Stream& s) const {
  auto it = s.sent.find(s.acked_view);
  if (it == s.sent.end() || it->second.kind_before == -1) return s.acked_view;
  int64_t floor = s.acked_view;
  for (int k = 0; it != s.sent.begin() && k < (1 << 20); ++k) {
    --it;
    floor = it->first;
    if (it->second.kind_before == -1) break;
  }
  return floor;
}

void WireMonitor::resolve_span(Stream& s, int64_t next_psn) {
  s.cursor = next_psn;
  s.high = std::max(s.span_prev_high, next_psn);
  s.span_uncertain = false;
}

void WireMonitor::reset_qp(const std::string& dir, uint32_t dest_qp) {
  const auto key = std::make_pair(dir, dest_qp);
  streams_.erase(key);
  for (auto it = answers_.begin(); it != answers_.end();)
    it = it->second == key ? answers_.erase(it) : std::next(it);
}

void WireMonitor::on_frame(const std::vector<uint8_t>& frame, uint64_t t_ps, const std::string& dir,
                           std::optional<uint64_t> t_committed) {
  cur_t_ = t_ps;
  cur_index_ = index_[dir]++;
  ++frames_;
  if (!roce::is_roce(frame.data(), frame.size())) return;
  roce::DecodeError err = roce::DecodeError::None;
  auto f = roce::decode(frame, &err);
  if (!f) {
    flag(dir, "decode", fmt_s("RoCEv2 frame of %zu bytes does not decode: %s", frame.size(),
                              roce::decode_error_name(err)));
    return;
  }
  const uint8_t op = f->bth.opcode;
  const roce::OpcodeInfo* oi = roce::opcode_info(op);
  if (!oi || op == roce::op::CNP) return;
  if (!icrc_ok(frame, *f)) flag(dir, "decode", fmt_s("%s psn=0x%06x: ICRC wrong", oi->name, f->bth.psn));
  if (op == roce::op::UD_SEND_ONLY || op == roce::op::UD_SEND_ONLY_IMM) {
    if (f->bth.dest_qp != 1)
      flag(dir, "ud_send", fmt_s("%s to QP %u: UD SENDs go to QP1", oi->name, f->bth.dest_qp));
    if (!f->deth)
      flag(dir, "ud_send", fmt_s("%s without a DETH", oi->name));
    else if (f->deth->qkey != roce::cm::kGsiQkey)
      flag(dir, "ud_send", fmt_s("%s DETH Q_Key 0x%08x, QP1 takes 0x%08x", oi->name, f->deth->qkey, roce::cm::kGsiQkey));
    if ((f->payload.size() + f->bth.pad_cnt) % 4)
      flag(dir, "padcnt", fmt_s("%s payload %zu + pad %u is not a multiple of 4", oi->name, f->payload.size(),
                                unsigned(f->bth.pad_cnt)));
    cm(*f, dir);
    return;
  }
  if (op >= 0x20) return;  // not RC: UC and the rest are not watched
  switch (oi->kind) {
    case roce::OpKind::Send:
    case roce::OpKind::Write:
    case roce::OpKind::ReadRequest:
    case roce::OpKind::Atomic: {
      auto key = std::make_pair(dir, f->bth.dest_qp);
      auto it = streams_.find(key);
      if (it == streams_.end()) {
        Stream s;
        s.dir = dir;
        s.dest_qp = f->bth.dest_qp;
        s.first = s.cursor = s.high = s.acked_view = s.acked_wire = s.ack_reach_view = f->bth.psn;
        s.msn_bound = s.first - 1;
        for (const auto& [ak, sk] : answers_)
          if (sk == key) s.paired = true, s.req_qp = ak.second;
        it = streams_.emplace(key, std::move(s)).first;
      }
      if (acks_from_delivery_) apply_deliveries(reverse(dir), t_committed.value_or(t_ps));
      request(it->second, *f, dir);
      break;
    }
    default:
      if (Stream* s = stream_for_response(dir, f->bth.dest_qp, f->bth.psn)) response(*s, *f, dir);
      break;
  }
}

void WireMonitor::on_delivered(const std::vector<uint8_t>& frame, uint64_t t_ps, const std::string& dir) {
  if (!acks_from_delivery_ || !roce::is_roce(frame.data(), frame.size())) return;
  auto f = roce::decode(frame);
  if (!f || !icrc_ok(frame, *f)) return;  // the receiver drops it
  on_delivered(*f, t_ps, dir);
}

void WireMonitor::on_delivered(const roce::Frame& f, uint64_t t_ps, const std::string& dir) {
  if (!acks_from_delivery_) return;
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  if (!oi || f.bth.opcode >= 0x20) return;
  if (oi->kind != roce::OpKind::Ack && oi->kind != roce::OpKind::AtomicAck && oi->kind != roce::OpKind::ReadResponse)
    return;
  Delivery d;
  d.t_ps = t_ps;
  d.opcode = f.bth.opcode;
  d.dest_qp = f.bth.dest_qp;
  d.psn = f.bth.psn;
  d.has_aeth = f.aeth.has_value();
  d.syndrome = f.aeth ? f.aeth->syndrome : 0;
  pending_[dir].push_back(d);
}

void WireMonitor::apply_deliveries(const std::string& dir, uint64_t before_ps) {
  auto q = pending_.find(dir);
  if (q == pending_.end()) return;
  while (!q->second.empty() && q->second.front().t_ps < before_ps) {
    const Delivery d = q->second.front();
    q->second.pop_front();
    apply_delivery(d, dir);
  }
}

void WireMonitor::apply_delivery(const Delivery& d, const std::string& dir) {
  const roce::OpcodeInfo* oi = roce::opcode_info(d.opcode);
  auto a = answers_.find({dir, d.dest_qp});
  if (a == answers_.end()) return;
  auto st = streams_.find(a->second);
  if (st == streams_.end()) return;
  Stream& s = st->second;
  const int64_t u = unwrap(s, d.psn);
  const int64_t acked = acked_by(s, d.opcode, d.has_aeth && roce::aeth::type(d.syndrome) == 0, u, true);
  if (acked <= s.high) s.acked_view = std::max(s.acked_view, acked);
  settle_view(s);
  // A go-back asked for: NAK-PSN (syndrome 0x60), RNR NAK (type 01), or an
  // ACK beyond a READ still unanswered (IBTA's implied NAK).
  if (d.has_aeth && s.acked_view < s.high) {
    const uint8_t syn = d.syndrome;
    const int type = roce::aeth::type(syn);
    const bool nak = (type == 3 && (syn & 0x1F) == 0) || type == 1;
    const bool implied = type == 0 && oi->kind == roce::OpKind::Ack && acked <= u;
    if (nak || implied) {
      const int64_t floor = retransmit_floor(s);
      s.goback_floor = s.goback ? std::min(s.goback_floor, floor) : floor;
      if (!s.goback) s.goback = 1;
    }
  }
}

WireMonitor::Stream* WireMonitor::stream_for_response(const std::string& resp_dir, uint32_t qp, uint32_t psn) {
  auto a = answers_.find({resp_dir, qp});
  if (a != answers_.end()) {
    auto st = streams_.find(a->second);
    if (st != streams_.end()) return &st->second;
    flag(resp_dir, "ack_psn",
         fmt_s("answer psn=0x%06x to QP %u: no request has been sent on its connection", psn, qp));
    return nullptr;
  }
  const std::string req_dir = reverse(resp_dir);
  Stream* pick = nullptr;
  Stream* only = nullptr;
  int unpaired = 0;
  for (auto& [k, s] : streams_) {
    if (k.first != req_dir || s.paired) continue;
    ++unpaired;
    only = &s;
    const int64_t u = unwrap(s, psn);
    if (!pick && u >= s.first && u < s.high) pick = &s;
  }
  if (!pick && unpaired == 1) pick = only;
  if (!pick) {
    flag(resp_dir, "ack_psn",
         fmt_s("answer psn=0x%06x to QP %u: no request stream on %s it could answer", psn, qp, req_dir.c_str()));
    return nullptr;
  }
  pick->paired = true;
  pick->req_qp = qp;
  answers_[{resp_dir, qp}] = {pick->dir, pick->dest_qp};
  return pick;
}

void WireMonitor::request(Stream& s, const roce::Frame& f, const std::string& dir) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const bool is_read = oi->kind == roce::OpKind::ReadRequest;
  const int64_t u = unwrap(s, f.bth.psn);
  const unsigned p = f.bth.psn;
  // --- PSN sequence ---------------------------------------------------------
  bool ok = true, resent = false;  // resent: a PSN sent before (go-back-N and what follows it)
  if (s.span_uncertain && u >= s.span_min && u <= s.span_max) {
    resolve_span(s, u);
  } else if (u == s.cursor) {
    resent = u < s.high;
  } else if (u >= (s.goback ? std::min(s.goback_floor, retransmit_floor(s)) : retransmit_floor(s)) && u < s.high) {
    // A go-back while a READ's span is unknown (sent before the PMTU was):
    // nothing followed that READ, so it ends somewhere in [span_min,
    // span_max]; `high` counts only its certain part from now on (a later
    // span opened on top of span_max would otherwise outlive the READ).
    // Its responses may still come up to span_max: high_bound keeps that.
    if (s.span_uncertain) {
      s.high_bound = std::max(s.high_bound, s.span_max);
      s.high = std::max(s.span_prev_high, s.span_min);
    }
    s.span_uncertain = false;
    resent = true;
  } else if (u == s.high && s.acked_view >= s.high) {
    // Everything sent so far is acknowledged: a retransmission under way may
    // stop there and new requests follow (nothing acknowledged is resent).
    // The message state is the one after the last packet first sent.
    s.msg_kind = -1;
    auto it = s.sent.find(s.high - 1);
    if (it != s.sent.end()) {
      const roce::OpcodeInfo* pi = roce::opcode_info(it->second.opcode);
      if (pi && (pi->pos == roce::OpPos::First || pi->pos == roce::OpPos::Middle)) s.msg_kind = kind_of(pi->kind);
    }
  } else {
    ok = false;
  }
  if (s.goback) {  // a go-back asked for: under way with a resent packet, over with a new one after that
    if (resent) s.goback = 2;
    else if (ok && s.goback == 2) s.goback = 0;
  }
  if (resent) {
    auto it = s.sent.find(u);
    if (it != s.sent.end()) {
      if (it->second.opcode != f.bth.opcode)
        flag(dir, "retransmit", fmt_s("retransmitted psn=0x%06x is %s, first sent as %s", p, oi->name,
                                      roce::opcode_name(it->second.opcode)));
      s.msg_kind = it->second.kind_before;
    } else {
      // a READ may be re-issued for its missing responses, inside its span
      bool inside_read = false;
      auto r = s.reads.upper_bound(u);
      if (r != s.reads.begin()) {
        --r;
        const int64_t n = read_span(s, r->second.len);
        inside_read = n == 0 || u < r->first + n;
      }
      if (!(is_read && inside_read))
        flag(dir, "retransmit", fmt_s("retransmitted %s psn=0x%06x: no packet was sent with that PSN", oi->name, p));
      s.msg_kind = -1;
    }
  }
  if (!ok) {
    if (u < s.acked_view && u >= s.first)
      flag(dir, "psn_sequence",
           fmt_s("%s psn=0x%06x goes back to an acknowledged PSN (acknowledged up to 0x%06x, next 0x%06x)", oi->name, p,
                 psn24(s.acked_view - 1), psn24(s.cursor)));
    else
      flag(dir, "psn_sequence",
           fmt_s("%s psn=0x%06x: expected 0x%06x (or a retransmission from 0x%06x..0x%06x)", oi->name, p,
                 psn24(s.cursor), psn24(s.acked_view), psn24(s.high - 1)));
    s.span_uncertain = false;
    s.cursor = u;
    if (u > s.high) s.high = u;
    if (u < s.acked_view) s.acked_view = s.acked_wire = u;
  }
  // --- opcode sequence ----------------------------------------------------
  const int kind = kind_of(oi->kind);
  const int before = s.msg_kind;
  switch (oi->pos) {
    case roce::OpPos::First:
      if (s.msg_kind != -1)
        flag(dir, "opcode_sequence", fmt_s("%s psn=0x%06x while a %s message is unfinished", oi->name, p,
                                           kind_name(s.msg_kind)));
      s.msg_kind = kind;
      break;
    case roce::OpPos::Middle:
    case roce::OpPos::Last:
      if (s.msg_kind != kind)
        flag(dir, "opcode_sequence",
             fmt_s("%s psn=0x%06x: %s", oi->name, p,
                   s.msg_kind == -1 ? "no message is open (FIRST missing)"
                                    : (std::string("inside a ") + kind_name(s.msg_kind) + " message").c_str()));
      s.msg_kind = oi->pos == roce::OpPos::Last ? -1 : kind;
      break;
    case roce::OpPos::Only:
      if (s.msg_kind != -1)
        flag(dir, "opcode_sequence", fmt_s("%s psn=0x%06x while a %s message is unfinished", oi->name, p,
                                           kind_name(s.msg_kind)));
      s.msg_kind = -1;
      break;
  }
  s.sent[u] = {f.bth.opcode, before};
  // --- AckReq, pad, PMTU ----------------------------------------------------
  const bool last = oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only;
  if (last && !f.bth.ack_req) flag(dir, "ackreq", fmt_s("%s psn=0x%06x without AckReq", oi->name, p));
  const size_t pl = f.payload.size();
  if (!last && f.bth.pad_cnt)
    flag(dir, "padcnt", fmt_s("%s psn=0x%06x has PadCnt %u: only a LAST or ONLY packet is padded", oi->name, p,
                              unsigned(f.bth.pad_cnt)));
  if ((pl + f.bth.pad_cnt) % 4)
    flag(dir, "padcnt", fmt_s("%s psn=0x%06x: payload %zu + pad %u is not a multiple of 4", oi->name, p, pl,
                              unsigned(f.bth.pad_cnt)));
  if (!last) {
    if (!s.pmtu)
      set_pmtu(s, uint32_t(pl), dir, oi->name);
    else if (pl != s.pmtu)
      flag(dir, "pmtu", fmt_s("%s psn=0x%06x carries %zu bytes, the connection's PMTU is %u", oi->name, p, pl, s.pmtu));
  } else if (s.pmtu && pl > s.pmtu) {
    flag(dir, "pmtu", fmt_s("%s psn=0x%06x carries %zu bytes, more than the PMTU %u", oi->name, p, pl, s.pmtu));
  }
  // --- advance --------------------------------------------------------------
  if (last) s.msg_ends.insert(u);
  if (is_read) {
    const uint32_t len = f.reth ? f.reth->dma_len : 0;
    // A READ sent again (a re-issue, whole or from inside its span) asks
    // for what the responder has answered before when the READ it repeats
    // was answered: its responses are those of a duplicate (current MSN).
    bool answered = false;
    auto prev = s.reads.upper_bound(u);
    if (prev != s.reads.begin()) {
      --prev;
      const int64_t n = read_span(s, prev->second.len);
      if (prev->first == u || n == 0 || u < prev->first + n) answered = prev->second.answered;
    }
    s.reads[u] = {len};
    s.reads[u].answered = answered;
    const int64_t n = read_span(s, len);
    if (n == 0) {
      s.span_uncertain = true;
      s.span_read = u;
      s.span_prev_high = s.high;
      s.span_min = u + std::max<int64_t>(1, (int64_t(len) + 4095) / 4096);
      s.span_max = u + std::max<int64_t>(1, (int64_t(len) + 255) / 256);
      s.cursor = s.span_min;
      s.high = std::max(s.high, s.span_max);
      return;
    }
    s.cursor = u + n;
  } else {
    s.cursor = u + 1;
  }
  s.high = std::max(s.high, s.cursor);
}

void WireMonitor::response(Stream& s, const roce::Frame& f, const std::string& dir) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const int64_t u = unwrap(s, f.bth.psn);
  const unsigned p = f.bth.psn;
  if (u >= std::max(s.high, s.high_bound))
    flag(dir, "ack_psn", fmt_s("%s psn=0x%06x is beyond the highest request PSN sent (0x%06x)", oi->name, p,
                               psn24(std::max(s.high, s.high_bound) - 1)));
  bool syn_ok = true;
  int type = 0;
  if (f.aeth) {
    const uint8_t syn = f.aeth->syndrome;
    type = roce::aeth::type(syn);
    if ((syn & 0x80) || type == 2) {
      flag(dir, "aeth_syndrome", fmt_s("%s psn=0x%06x: AETH syndrome 0x%02x is reserved", oi->name, p, syn));
      syn_ok = false;
    } else if (type == 3 && (syn & 0x1F) > 4) {
      flag(dir, "nak_code", fmt_s("%s psn=0x%06x: NAK code %u (syndrome 0x%02x) is not 0..4", oi->name, p,
                                  unsigned(syn & 0x1F), syn));
      syn_ok = false;
    }
  }
  // The MSN counts messages ending at or before `bound` (what the answer
  // acknowledges is acked_by's).
  int64_t bound = u - 1;
  if (oi->kind == roce::OpKind::ReadResponse || type == 0) bound = u;
  // The responses of a READ answered before (a duplicate, executed again)
  // may carry the responder's current MSN: every message sent so far may
  // count (IBTA leaves it open; PG332 model assumption A-ERNIC-11). What
  // that MSN accounts for stays open: later answers are counted from the
  // READ on.
  int64_t count_to = bound;
  if (oi->kind == roce::OpKind::ReadResponse) {
    if (oi->pos == roce::OpPos::First || oi->pos == roce::OpPos::Only) {
      auto r = s.reads.find(u);
      s.resp_dup = r != s.reads.end() && r->second.answered;
      if (r != s.reads.end()) r->second.answered = true;
    }
    if (s.resp_dup) count_to = std::max(bound, s.high - 1);
  }
  if (syn_ok) {
    const int64_t a = acked_by(s, f.bth.opcode, f.aeth && roce::aeth::type(f.aeth->syndrome) == 0, u, false);
    if (a <= s.high) {
      s.acked_wire = std::max(s.acked_wire, a);
      if (!acks_from_delivery_) s.acked_view = std::max(s.acked_view, s.acked_wire);
    }
  }
  // --- MSN ------------------------------------------------------------------
  if (f.aeth && syn_ok) {
    const uint32_t m = f.aeth->msn & roce::kPsnMask;
    const uint32_t prev = s.msn_seen ? s.msn : 0;
    const uint32_t d = (m - prev) & roce::kPsnMask;
    if (!s.msn_seen && (d & roce::kPsnHalf)) {
      // The first MSN of a connection in the upper half of the 24-bit
      // space: not a decrease from 0 but a responder whose MSN was preset
      // below the wrap (PG332 STATMSNi under SW override). Taken as the
      // start; its growth is checked from here, across the wrap.
      s.msn = m;
      s.msn_seen = true;
    } else if (d & roce::kPsnHalf) {
      flag(dir, "msn", fmt_s("%s psn=0x%06x: MSN went down from %u to %u", oi->name, p, prev, m));
    } else {
      int64_t count = 0;
      if (count_to > s.msn_bound)
        count = std::distance(s.msg_ends.upper_bound(s.msn_bound), s.msg_ends.upper_bound(count_to));
      if (d > count)
        flag(dir, "msn", fmt_s("%s psn=0x%06x: MSN grew from %u to %u but only %lld message(s) end after the last "
                               "acknowledged PSN, up to 0x%06x",
                               oi->name, p, prev, m, (long long)count, psn24(bound)));
      s.msn = m;
      s.msn_seen = true;
    }
    s.msn_bound = std::max(s.msn_bound, bound);
  }
  if (oi->kind != roce::OpKind::ReadResponse) return;
  // --- READ responses -------------------------------------------------------
  if (f.aeth && syn_ok && type != 0)
    flag(dir, "read_resp", fmt_s("%s psn=0x%06x: AETH syndrome 0x%02x is not an ACK", oi->name, p, f.aeth->syndrome));
  const size_t pl = f.payload.size();
  const bool last = oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only;
  if (!last && f.bth.pad_cnt)
    flag(dir, "padcnt", fmt_s("%s psn=0x%06x has PadCnt %u: only a LAST or ONLY packet is padded", oi->name, p,
                              unsigned(f.bth.pad_cnt)));
  if ((pl + f.bth.pad_cnt) % 4)
    flag(dir, "padcnt", fmt_s("%s psn=0x%06x: payload %zu + pad %u is not a multiple of 4", oi->name, p, pl,
                              unsigned(f.bth.pad_cnt)));
  if (oi->pos == roce::OpPos::First || oi->pos == roce::OpPos::Only) {
    s.in_resp = false;
    auto r = s.reads.find(u);
    if (r == s.reads.end()) {
      flag(dir, "read_resp", fmt_s("%s psn=0x%06x: no READ request was sent with that PSN", oi->name, p));
      return;
    }
    const uint32_t len = r->second.len;
    if (oi->pos == roce::OpPos::First) {
      if (!s.pmtu)
        set_pmtu(s, uint32_t(pl), dir, oi->name);
      else if (pl != s.pmtu)
        flag(dir, "pmtu", fmt_s("%s psn=0x%06x carries %zu bytes, the connection's PMTU is %u", oi->name, p, pl, s.pmtu));
    }
    const int64_t n = read_span(s, len);
    if (oi->pos == roce::OpPos::Only) {
      if (n > 1)
        flag(dir, "read_resp", fmt_s("%s psn=0x%06x answers a READ of %u bytes, which needs %lld responses", oi->name, p,
                                     len, (long long)n));
      else if (pl != len)
        flag(dir, "read_resp", fmt_s("%s psn=0x%06x carries %zu bytes, the READ asked for %u", oi->name, p, pl, len));
      return;
    }
    if (n == 1) {
      flag(dir, "read_resp", fmt_s("%s psn=0x%06x answers a READ of %u bytes: one ONLY response is due", oi->name, p, len));
      return;
    }
    s.in_resp = true;
    s.resp_read = u;
    s.resp_next = u + 1;
    s.resp_n = n;
    s.resp_bytes = pl;
    return;
  }
  // MIDDLE / LAST
  if (!s.in_resp || u != s.resp_next) {
    if (!s.in_resp)
      flag(dir, "read_resp", fmt_s("%s psn=0x%06x: no READ response is in progress (FIRST missing)", oi->name, p));
    else
      flag(dir, "read_resp", fmt_s("%s psn=0x%06x: the next response of the READ at 0x%06x is 0x%06x", oi->name, p,
                                   psn24(s.resp_read), psn24(s.resp_next)));
    s.in_resp = false;
    return;
  }
  const int64_t last_psn = s.resp_read + s.resp_n - 1;
  const uint32_t len = s.reads.count(s.resp_read) ? s.reads[s.resp_read].len : 0;
  s.resp_bytes += pl;
  s.resp_next = u + 1;
  if (oi->pos == roce::OpPos::Middle) {
    if (u >= last_psn) {
      flag(dir, "read_resp", fmt_s("%s psn=0x%06x: the READ at 0x%06x has %lld responses, this one must be LAST", oi->name,
                                   p, psn24(s.resp_read), (long long)s.resp_n));
      s.in_resp = false;
    } else if (pl != s.pmtu) {
      flag(dir, "pmtu", fmt_s("%s psn=0x%06x carries %zu bytes, the connection's PMTU is %u", oi->name, p, pl, s.pmtu));
    }
    return;
  }
  s.in_resp = false;
  if (u != last_psn)
    flag(dir, "read_resp", fmt_s("%s psn=0x%06x: the READ at 0x%06x of %u bytes needs %lld responses, LAST at 0x%06x",
                                 oi->name, p, psn24(s.resp_read), len, (long long)s.resp_n, psn24(last_psn)));
  else if (s.resp_bytes != len)
    flag(dir, "read_resp", fmt_s("%s psn=0x%06x: the responses carry %llu bytes, the READ at 0x%06x asked for %u",
                                 oi->name, p, (unsigned long long)s.resp_bytes, psn24(s.resp_read), len));
}

void WireMonitor::cm(const roce::Frame& f, const std::string& dir) {
  if (f.bth.dest_qp != 1) return;
  auto mad = roce::cm::decode_mad(f.payload.data(), f.payload.size());
  if (!mad) return;
  if (auto* req = std::get_if<roce::cm::Req>(&mad->msg)) {
    cm_req_[req->local_comm_id] = {dir, req->local_qpn};
  } else if (auto* rep = std::get_if<roce::cm::Rep>(&mad->msg)) {
    auto it = cm_req_.find(rep->remote_comm_id);
    if (it == cm_req_.end()) return;
    const std::string req_dir = it->second.first;
    const uint32_t a = it->second.second, b = rep->local_qpn;
    // A new connection on these QPs: whatever ran on them before is over.
    reset_qp(req_dir, b);
    reset_qp(dir, a);
    answers_.erase({dir, a});
    answers_.erase({req_dir, b});
    answers_[{dir, a}] = {req_dir, b};
    answers_[{req_dir, b}] = {dir, a};
    cm_req_.erase(it);
  }
}

}  // namespace ernic::monitor
