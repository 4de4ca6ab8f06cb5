// model/monitor: the wire monitor's checks of an answer (see
// wire_monitor.h): its PSN, the AETH syndrome, what it acknowledges, the
// MSN, READ responses.
#include <algorithm>
#include <iterator>
#include <string>

#include "model/monitor/wire_monitor.h"
#include "model/monitor/wire_monitor_util.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"

namespace ernic::monitor {

using detail::fmt_s;
using detail::psn24;

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
    namespace aeth = roce::aeth;
    type = aeth::type(syn);
    if ((syn & 0x80) || type == aeth::kTypeReserved) {
      flag(dir, "aeth_syndrome", fmt_s("%s psn=0x%06x: AETH syndrome 0x%02x is reserved", oi->name, p, syn));
      syn_ok = false;
    } else if (type == aeth::kTypeNak && aeth::value(syn) > aeth::kNakCodeMax) {
      flag(dir, "nak_code", fmt_s("%s psn=0x%06x: NAK code %u (syndrome 0x%02x) is not 0..%u", oi->name, p,
                                  unsigned(aeth::value(syn)), syn, unsigned(aeth::kNakCodeMax)));
      syn_ok = false;
    }
  }
  // The MSN counts messages ending at or before `bound` (what the answer
  // acknowledges is acked_by's).
  int64_t bound = u - 1;
  if (oi->kind == roce::OpKind::ReadResponse || type == roce::aeth::kTypeAck) bound = u;
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
  if (f.aeth && syn_ok) response_msn(s, f, dir, bound, count_to);
  if (oi->kind != roce::OpKind::ReadResponse) return;
  read_response(s, f, dir, u, syn_ok, type);
}

// --- MSN ------------------------------------------------------------------
// The MSN of an answer with a valid AETH; it accounts for the PSNs up to
// `bound`, and the messages that end up to `count_to` may count.
void WireMonitor::response_msn(Stream& s, const roce::Frame& f, const std::string& dir, int64_t bound,
                               int64_t count_to) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
  const uint32_t m = f.aeth->msn & roce::kPsnMask;
  const uint32_t prev = s.msn_seen ? s.msn : 0;
  const uint32_t d = (m - prev) & roce::kPsnMask;
  if (!s.msn_seen && ((d & roce::kPsnHalf) || mid_connection_)) {
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

// --- READ responses -------------------------------------------------------
void WireMonitor::read_response(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u, bool syn_ok,
                                int type) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
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
    read_response_first(s, f, dir, u);
    return;
  }
  read_response_rest(s, f, dir, u);
}

// A FIRST or ONLY response: the READ it answers, its length, the PMTU.
void WireMonitor::read_response_first(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
  const size_t pl = f.payload.size();
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
}

// MIDDLE / LAST: the next response of the READ under way, LAST where its
// span ends, the bytes adding up to its length.
void WireMonitor::read_response_rest(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u) {
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  const unsigned p = f.bth.psn;
  const size_t pl = f.payload.size();
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

}  // namespace ernic::monitor
