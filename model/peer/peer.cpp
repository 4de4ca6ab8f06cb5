// model/peer: see peer.h.
#include "model/peer/peer.h"

#include <fmt/format.h>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic::peer {

using namespace sc_core;

PeerNode::PeerNode(sc_module_name name, const PeerConfig& cfg, HostMemory& mem, Cmac& cmac, SimContext& ctx,
                   const std::string& scope)
    : sc_module(name), cfg_(cfg), mem_(mem), cmac_(cmac), ctx_(ctx), scope_(scope), mrs_(mem.size()),
      responder_(cfg_, mem, mrs_), requester_(cfg_, mem) {
  cmac_.rx_sink = [this](FrameBytes f) { rx(std::move(f)); };
  SC_THREAD(tx_thread);
}

PeerQp* PeerNode::create_qp(const PeerQpParams& p, std::string* why) {
  if (qps_.count(p.qpn) || replays_.count(p.qpn) || replayed_.count(p.qpn)) {
    if (why)
      *why = fmt::format("QP{} of the peer is in use{}", p.qpn,
                         replays_.count(p.qpn)    ? " by a replay"
                         : replayed_.count(p.qpn) ? " (a replay played it: the ERNIC node's replay QP still points at it)"
                                                  : "");
    return nullptr;
  }
  PeerQp q;
  q.qpn = p.qpn;
  q.remote_qpn = p.remote_qpn;
  q.remote_mac = p.remote_mac;
  q.local_ip = p.local_ip;
  q.remote_ip = p.remote_ip;
  q.pmtu = p.pmtu;
  q.epsn = p.epsn & roce::kPsnMask;
  q.req.npsn = p.start_psn & roce::kPsnMask;
  // Flow entropy in the UDP source port (RoCEv2 Annex A17: 0xC000..0xFFFF).
  q.udp_sport = uint16_t(0xC000 | ((p.qpn ^ p.remote_qpn ^ (p.remote_qpn >> 14)) & 0x3FFF));
  q.rq_elem_bytes = p.rq_elem_bytes;
  if (p.recv_mr) {  // the MR's elements, as many as fit (at most rq_depth)
    q.rq_pa = p.recv_mr->pa;
    q.rq_count = uint32_t(std::min<uint64_t>(p.rq_depth, p.recv_mr->length / p.rq_elem_bytes));
  } else {
    const auto pa = mrs_.alloc(uint64_t(p.rq_depth) * p.rq_elem_bytes);
    if (!pa) {
      if (why) *why = "the peer's memory has no room for the receive queue (memory_mib)";
      return nullptr;
    }
    q.rq_pa = *pa;
    q.rq_count = p.rq_depth;
  }
  return &(qps_[p.qpn] = q);
}

bool PeerNode::for_me(const roce::Frame& f) const {
  if (f.eth.dst != cfg_.mac) return false;
  if (f.ipv6) return cfg_.ip6 && f.ip6.dst == *cfg_.ip6;
  return cfg_.has_ip && f.ip4.dst == cfg_.ip;
}

// The header checks decode() leaves to the receiver (it checks the IP
// version, IHL, protocol, UDP port and the lengths).
bool PeerNode::header_ok(const FrameBytes& bytes, const roce::Frame& f) {
  if (!f.ipv6) {
    // RFC 791: a header whose checksum is wrong is discarded.
    if (roce::ipv4_checksum(bytes.data() + roce::kEthHdrLen) != f.ip4.checksum) return false;
    // RoCEv2 packets are never fragmented (annex A17.4: DF set; a
    // fragment, MF set or an offset, is not a whole packet: dropped).
    if ((f.ip4.flags & 0x1) || f.ip4.frag_off != 0) return false;
  }
  // IBTA 9.6.1.1 (BTH TVer, 9.2): a packet whose transport header version
  // is not 0 is silently dropped.
  return f.bth.tver == 0;
}

void PeerNode::rx(FrameBytes bytes) {
  ++stats_.frames_in;
  ctx_.bump();
  const auto f = roce::decode(bytes);
  if (!f) return void(++stats_.dropped_decode);  // not RoCEv2 (a pause frame ends at the MAC)
  if (!header_ok(bytes, *f)) return void(++stats_.dropped_decode);
  if (bytes.size() < roce::kIcrcLen ||
      roce::compute_icrc(bytes.data(), bytes.size() - roce::kIcrcLen) != f->icrc)
    return void(++stats_.dropped_icrc);
  if (!for_me(*f)) return void(++stats_.dropped_address);
  if (auto rp = replays_.find(f->bth.dest_qp); rp != replays_.end() && rp->second(*f, bytes))
    return void(++stats_.replay_in);
  if (f->bth.dest_qp == 1) return void(++stats_.dropped_cm);
  auto it = qps_.find(f->bth.dest_qp);
  if (it == qps_.end()) return void(++stats_.dropped_no_qp);
  // RC: a packet from another source than the QP's remote is not the
  // connection's (IBTA 9.6.1.5, the RC source check; in RoCEv2 the GRH's
  // SGID is the IP source, annex A17.4). Also an IPv4 packet to an IPv6 QP
  // and the reverse. The source MAC is not checked: RoCEv2 is routed, the
  // MAC is the last hop's (ERNIC, on one segment, checks it too).
  if (f->src_ip() != it->second.remote_ip) return void(++stats_.dropped_address);
  if (on_rx_taken) on_rx_taken(*f);
  const roce::OpcodeInfo* oi = roce::opcode_info(f->bth.opcode);
  PeerQp& q = it->second;
  if (oi && (oi->kind == roce::OpKind::Ack || oi->kind == roce::OpKind::ReadResponse ||
             oi->kind == roce::OpKind::AtomicAck || oi->kind == roce::OpKind::Cnp)) {
    const size_t done = q.req.cq.size();
    const bool was_error = q.req.error;
    if (!requester_.on_answer(q, *f, sc_time_stamp().value())) return void(++stats_.dropped_answers);
    if (q.req.error && !was_error)
      ctx_.event(scope_, fmt::format("peer QP{} requester in the Error state: {} (syndrome 0x{:02x})", q.qpn,
                                     roce::opcode_name(f->bth.opcode), f->aeth ? f->aeth->syndrome : 0));
    if (q.req.cq.size() != done) cq_ev_.notify(SC_ZERO_TIME);
    tx_ev_.notify(SC_ZERO_TIME);
    return;
  }
  const bool was_error = q.error;
  std::vector<roce::Frame> answers;
  responder_.on_request(q, *f, answers);
  if (q.error && !was_error)
    ctx_.event(scope_, fmt::format("peer QP{} in the Error state: {}", q.qpn, q.error_why));
  const uint64_t ready = sc_time_stamp().value() + cfg_.latency_ps;
  for (const roce::Frame& a : answers) txq_.push_back({ready, roce::encode(a)});
  if (!answers.empty()) tx_ev_.notify(SC_ZERO_TIME);
}

bool PeerNode::start_replay(uint32_t qpn, ReplayTake take, std::string* why) {
  if (qps_.count(qpn) || replays_.count(qpn)) {
    *why = fmt::format("QPN {} of the peer is {}: the replay's frames to it could not be told apart", qpn,
                       qps_.count(qpn) ? "one of its QPs" : "another replay's");
    return false;
  }
  replays_[qpn] = std::move(take);
  return true;
}

void PeerNode::end_replay(uint32_t qpn) {
  replays_.erase(qpn);
  replayed_.insert(qpn);
}

void PeerNode::send_frame(FrameBytes f) {
  ++stats_.replay_out;
  txq_.push_back({sc_time_stamp().value(), std::move(f)});
  tx_ev_.notify(SC_ZERO_TIME);
}

bool PeerNode::post(uint32_t qpn, const std::vector<PeerWqe>& wqes) {
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return false;
  const size_t done = it->second.req.cq.size();
  for (const PeerWqe& w : wqes) requester_.post(it->second, w, sc_time_stamp().value());
  if (it->second.req.cq.size() != done) cq_ev_.notify(SC_ZERO_TIME);  // flushed at once (Error state)
  tx_ev_.notify(SC_ZERO_TIME);
  return true;
}

std::vector<PeerCqe> PeerNode::poll(uint32_t qpn, size_t max) {
  std::vector<PeerCqe> out;
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return out;
  auto& cq = it->second.req.cq;
  while (!cq.empty() && out.size() < max) {
    out.push_back(cq.front());
    cq.pop_front();
  }
  return out;
}

size_t PeerNode::completions_ready(uint32_t qpn) const {
  auto it = qps_.find(qpn);
  return it == qps_.end() ? 0 : it->second.req.cq.size();
}

std::optional<roce::Frame> PeerNode::next_request(uint64_t now_ps) {
  if (qps_.empty()) return std::nullopt;
  auto it = qps_.upper_bound(rr_qpn_);
  for (size_t n = 0; n < qps_.size(); ++n, ++it) {
    if (it == qps_.end()) it = qps_.begin();
    if (requester_.check_timeout(it->second, now_ps)) ctx_.event(scope_, fmt::format("peer QP{}: ACK timeout, going back", it->first));
    if (auto f = requester_.next_frame(it->second, now_ps)) {
      rr_qpn_ = it->first;
      return f;
    }
  }
  return std::nullopt;
}

// Answers when due, first; else the requester's next packet; else sleep
// until an answer is due, a timer runs out, or something arrives.
void PeerNode::tx_thread() {
  for (;;) {
    const uint64_t now = sc_time_stamp().value();
    std::optional<roce::Frame> req;
    FrameBytes f;
    if (!txq_.empty() && txq_.front().ready_ps <= now) {
      f = std::move(txq_.front().f);
      txq_.pop_front();
    } else if ((req = next_request(now))) {
      if (on_tx_committed) on_tx_committed(*req);
      f = roce::encode(*req);
    } else {
      std::optional<uint64_t> at;
      if (!txq_.empty()) at = txq_.front().ready_ps;
      for (const auto& [qpn, q] : qps_) {
        std::optional<uint64_t> t = requester_.timeout_at(q);
        if (Requester::has_work(q) && q.req.rnr_until_ps > now) t = std::min(t.value_or(~0ull), q.req.rnr_until_ps);
        if (t) at = std::min(at.value_or(~0ull), std::max(*t, now + 1));
      }
      if (at)
        wait(sc_time(double(*at - now), SC_PS), tx_ev_);
      else
        wait(tx_ev_);
      continue;
    }
    ++stats_.frames_out;
    cmac_.tx_push(std::move(f));  // blocks while the MAC's FIFO is full: line rate
  }
}

}  // namespace ernic::peer
