// model/monitor: the wire monitor's checks of a request (see
// wire_monitor.h): PSN sequence and go-backs, retransmissions, opcode
// sequence, AckReq, pad, PMTU; where the stream goes next.
#include <algorithm>
#include <string>

#include "model/monitor/wire_monitor.h"
#include "model/monitor/wire_monitor_util.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace ernic::monitor {

using detail::fmt_s;
using detail::psn24;

namespace {

int kind_of(roce::OpKind k) {
  if (k == roce::OpKind::Send) return 0;
  if (k == roce::OpKind::Write) return 1;
  return -1;
}
const char* kind_name(int k) { return k == 0 ? "SEND" : k == 1 ? "WRITE" : "no"; }

}  // namespace

void WireMonitor::resolve_span(Stream& s, int64_t next_psn) {
  s.cursor = next_psn;
  s.high = std::max(s.span_prev_high, next_psn);
  s.span_uncertain = false;
}

void WireMonitor::request(Stream& s, const roce::Frame& f, const std::string& dir) {
  const int64_t u = unwrap(s, f.bth.psn);
  request_psn(s, f, dir, u);
  request_opcode(s, f, dir, u);
  request_format(s, f, dir);
  request_advance(s, f, u);
}

// --- PSN sequence ---------------------------------------------------------
void WireMonitor::request_psn(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
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
  } else if (u == s.high && (s.acked_view >= s.high || rest_acknowledged(s))) {
    // Everything sent so far is acknowledged, or everything from here on
    // that a retransmission under way would resend: it may stop there and
    // new requests follow (nothing acknowledged is resent). The message
    // state is the one after the last packet first sent.
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
  if (resent) request_resent(s, f, dir, u);
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
}

// An ACK reached past every PSN from the cursor to `high` and no READ among
// them is unanswered: the responder has executed them all, so a go-back
// that resent what came before (an implied NAK's READ) may skip them. The
// READs re-issued below the cursor may still be waiting for responses.
bool WireMonitor::rest_acknowledged(const Stream& s) const {
  if (s.ack_reach_view < s.high || s.cursor >= s.high) return false;
  for (auto it = s.reads.lower_bound(s.cursor); it != s.reads.end() && it->first < s.high; ++it)
    if (!it->second.done_view) return false;
  return true;  // (a READ resent below the cursor ends before it: the cursor is past its span)
}

// A PSN sent before: the opcode first sent there (a READ may be re-issued
// from inside its span), and the message state before it.
void WireMonitor::request_resent(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const bool is_read = oi->kind == roce::OpKind::ReadRequest;
  const unsigned p = f.bth.psn;
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

// --- opcode sequence ----------------------------------------------------
void WireMonitor::request_opcode(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
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
}

// --- AckReq, pad, PMTU ----------------------------------------------------
void WireMonitor::request_format(Stream& s, const roce::Frame& f, const std::string& dir) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
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
}

// --- advance --------------------------------------------------------------
void WireMonitor::request_advance(Stream& s, const roce::Frame& f, int64_t u) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const bool is_read = oi->kind == roce::OpKind::ReadRequest;
  const bool last = oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only;
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

}  // namespace ernic::monitor
