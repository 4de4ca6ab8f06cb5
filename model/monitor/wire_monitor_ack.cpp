// model/monitor: what a requester has seen acknowledged, as the wire
// monitor follows it (see wire_monitor.h): the answers it took
// (apply_deliveries), what an answer acknowledges (acked_by, settle_view),
// how far back a go-back may go (retransmit_floor).
#include <algorithm>

#include "model/monitor/wire_monitor.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace ernic::monitor {

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
    namespace aeth = roce::aeth;
    const bool nak = (type == aeth::kTypeNak && aeth::value(syn) == aeth::value(aeth::kNakPsnSeq)) || type == aeth::kTypeRnr;
    const bool implied = type == aeth::kTypeAck && oi->kind == roce::OpKind::Ack && acked <= u;
    if (nak || implied) {
      const int64_t floor = retransmit_floor(s);
      s.goback_floor = s.goback ? std::min(s.goback_floor, floor) : floor;
      if (!s.goback) s.goback = 1;
    }
  }
}

}  // namespace ernic::monitor
