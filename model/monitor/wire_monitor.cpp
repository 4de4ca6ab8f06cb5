// model/monitor: the passive wire monitor (see wire_monitor.h).
// Here: frames in (on_frame, on_delivered), the pairing of a request stream
// with its answers (CM, the first answer), the streams' PSN helpers.
// Requests are checked in wire_monitor_request.cpp, answers in
// wire_monitor_response.cpp; what a requester has seen acknowledged is
// wire_monitor_ack.cpp's.
#include "model/monitor/wire_monitor.h"

#include <algorithm>
#include <iterator>
#include <variant>

#include "model/monitor/wire_monitor_util.h"
#include "model/roce/cm.h"
#include "model/roce/icrc.h"
#include "model/roce/mtu.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"

namespace ernic::monitor {

using detail::fmt_s;
using detail::psn24;

namespace {

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

void WireMonitor::new_connection(const std::string& dir_cs, uint32_t qp_s, const std::string& dir_sc, uint32_t qp_c) {
  reset_qp(dir_cs, qp_s);
  reset_qp(dir_sc, qp_c);
  answers_.erase({dir_sc, qp_c});
  answers_.erase({dir_cs, qp_s});
  answers_[{dir_sc, qp_c}] = {dir_cs, qp_s};
  answers_[{dir_cs, qp_s}] = {dir_sc, qp_c};
}

void WireMonitor::reset_qp(const std::string& dir, uint32_t dest_qp) {
  const auto key = std::make_pair(dir, dest_qp);
  streams_.erase(key);
  for (auto it = answers_.begin(); it != answers_.end();)
    it = it->second == key ? answers_.erase(it) : std::next(it);
}

void WireMonitor::on_frame(const std::vector<uint8_t>& frame, uint64_t t_ps, const std::string& dir,
                           std::optional<uint64_t> t_committed, const roce::Frame* decoded) {
  cur_t_ = t_ps;
  cur_index_ = index_[dir]++;
  ++frames_;
  if (!roce::is_roce(frame.data(), frame.size())) return;
  std::optional<roce::Frame> own;
  if (!decoded) {
    roce::DecodeError err = roce::DecodeError::None;
    own = roce::decode(frame, &err);
    if (!own) {
      flag(dir, "decode", fmt_s("RoCEv2 frame of %zu bytes does not decode: %s", frame.size(),
                                roce::decode_error_name(err)));
      return;
    }
    decoded = &*own;
  }
  const roce::Frame* const f = decoded;
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
        // Joined mid-connection: a MIDDLE or LAST continues a message begun before.
        if (mid_connection_ && (oi->pos == roce::OpPos::Middle || oi->pos == roce::OpPos::Last))
          s.msg_kind = oi->kind == roce::OpKind::Send ? 0 : oi->kind == roce::OpKind::Write ? 1 : -1;
        it = streams_.emplace(key, std::move(s)).first;
      }
      if (acks_from_delivery_) apply_deliveries(reverse(dir), t_committed.value_or(t_ps));
      request(it->second, *f, dir);
      break;
    }
    default:
      if (Stream* s = stream_for_response(dir, f->bth.dest_qp, f->bth.psn)) {
        // Joined mid-connection: an answer to a request before the first one seen is not judged.
        if (mid_connection_ && unwrap(*s, f->bth.psn) < s->first) break;
        response(*s, *f, dir);
      }
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
  if (!pick && mid_connection_) return nullptr;  // its requests went before the capture began
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
    new_connection(req_dir, b, dir, a);
    cm_req_.erase(it);
  }
}

}  // namespace ernic::monitor
