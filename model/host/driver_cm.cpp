// model/host: the driver's QP1: software-built frames (MADs, CNPs) posted on
// QP1's SQ, the MADs on QP1's RQ, and the CM handshakes over them (connect,
// listen, reject, disconnect; IBTA ch.12).
#include "model/host/driver.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/regs/wqe.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"

namespace ernic::host {

namespace R = regs;

// -------------------------------------------------------------------- CM

const roce::MacAddr& Driver::neighbour(const roce::IpAddr& ip) const {
  if (ip.v6) {
    auto it = neigh6_.find(ip.ip6);
    if (it == neigh6_.end()) fail("no neighbour entry (MAC) for " + ip.str());
    return it->second;
  }
  auto it = neigh_.find(ip.ip4.v);
  if (it == neigh_.end()) fail("no neighbour entry (MAC) for " + ip.str());
  return it->second;
}

roce::IpAddr Driver::local_addr(bool v6) const {
  if (!v6) return cfg_.ip;
  if (!cfg_.ip6) fail("IPv6 peer, but this node has no IPv6 address");
  return *cfg_.ip6;
}

void Driver::send_mad(const roce::IpAddr& dst, const roce::cm::Message& msg, uint16_t attr_id) {
  roce::Frame f = qp1_frame(dst);
  f.bth.opcode = roce::op::UD_SEND_ONLY;
  f.bth.pkey = 0xFFFF;
  f.bth.dest_qp = 1;
  f.bth.psn = qp1_psn_;
  qp1_psn_ = roce::psn_add(qp1_psn_, 1);
  f.deth = roce::Deth{roce::cm::kGsiQkey, 0, 1};
  roce::cm::MadHeader h;
  h.attr_id = attr_id;
  h.tid = rng_();
  f.payload = roce::cm::encode_mad(h, msg);
  roce::EncodeOptions eo;
  eo.fill_icrc = false;
  std::vector<uint8_t> bytes = roce::encode(f, eo);
  bytes.resize(bytes.size() - roce::kIcrcLen);  // lengths count the ICRC; ERNIC appends it
  post_qp1(bytes);
}

// A frame software built (Ethernet .. last byte before the ICRC) leaves
// through QP1: a SEND WQE pointing at it (PG332).
// Ethernet, IPv4 or IPv6 (TTL / hop limit 64) and UDP of a frame software
// sends on QP1 (MADs, CNPs) to dst.
roce::Frame Driver::qp1_frame(const roce::IpAddr& dst) {
  roce::Frame f;
  f.eth.src = cfg_.mac;
  f.eth.dst = neighbour(dst);
  if (dst.v6) {  // IPv6 header, next header 17 (UDP), hop limit 64
    f.ipv6 = true;
    f.ip6.src = local_addr(true).ip6;
    f.ip6.dst = dst.ip6;
    f.ip6.hop_limit = 64;
  } else {
    f.ip4.src = cfg_.ip;
    f.ip4.dst = dst.ip4;
    f.ip4.ttl = 64;
  }
  f.udp.sport = cfg_.qp1_udp_sport;
  return f;
}

bool Driver::qp1_sq_full() const {
  // One send slot per SQ entry; the slot is free again once its WQE has
  // completed, which the CQ head mirror tells.
  return (qp1_sq_pi_ + 1) % kQp1Depth == mem_read32(qp1_cq_db_) % kQp1Depth;
}

void Driver::post_qp1(const std::vector<uint8_t>& bytes) {
  if (qp1_sq_full()) fail("QP1 SQ full");
  const uint64_t slot = qp1_send_buf_ + uint64_t(qp1_sq_pi_) * kQp1SendSlot;
  mem_write(slot, bytes);
  pg332::Wqe w;
  w.wrid = uint16_t(qp1_sq_pi_);
  w.laddr = slot;
  w.length = uint32_t(bytes.size());
  w.opcode = uint8_t(pg332::WqeOpcode::send);
  uint8_t wqe[pg332::kWqeBytes];
  pg332::encode_wqe(w, wqe);
  bus_.mem_write(qp1_sq_ + uint64_t(qp1_sq_pi_) * pg332::kWqeBytes, wqe, sizeof wqe);
  qp1_sq_pi_ = (qp1_sq_pi_ + 1) % kQp1Depth;
  wr(qreg(1, R::q::SQPIi), qp1_sq_pi_);
}

Connection& Driver::listen(const QpParams& p) {
  if (!initialised_) fail("listen before init");
  if (listener_) fail("a listen is already pending");
  auto c = std::make_unique<Connection>();
  c->params = p;
  conns_.push_back(std::move(c));
  listener_ = conns_.back().get();
  return *listener_;
}

// The ConnectRequest for c (prepared, its comm id drawn) to server.
roce::cm::Req Driver::cm_req(const Connection& c, const roce::IpAddr& server, const QpParams& p,
                             uint16_t service_port) {
  const roce::IpAddr local = local_addr(server.v6);
  roce::cm::Req req;
  req.local_comm_id = c.local_comm_id;
  req.service_id = 0x0000000001060000ull | service_port;  // rdma_cm, RDMA_PS_TCP
  req.local_ca_guid = 0x0200000000000000ull | (uint64_t(local.v6 ? local.ip6.pg332_word(1) : cfg_.ip.v) << 8);
  req.local_qpn = c.qpn;
  req.resp_resources = 16;
  req.initiator_depth = 16;
  req.remote_cm_timeout = 20;
  req.transport_type = 0;  // RC
  req.start_psn = c.local_psn;
  req.local_cm_timeout = 20;
  req.retry_count = uint8_t(p.retry_cnt);
  req.pkey = 0xFFFF;
  req.path_mtu = uint8_t(R::pmtu_code(p.pmtu) + 1);  // IB enum: 1 = 256 .. 5 = 4096
  req.rnr_retry_count = uint8_t(p.rnr_retry_cnt);
  req.max_cm_retries = 3;
  req.primary_local_gid = local.gid();  // IPv6: the addresses themselves; IPv4: ::ffff:a.b.c.d
  req.primary_remote_gid = server.gid();
  req.primary_hop_limit = 64;
  req.primary_local_ack_timeout = uint8_t(p.ack_timeout);
  roce::cm::RdmaCmIpHdr iph;  // rdma_cm's header: IPv6 form (ip_version 6, whole addresses) or IPv4
  iph.ip_version = server.v6 ? 6 : 4;
  iph.port = uint16_t(0xC000 | (rng_() & 0x3FFF));
  iph.src = local.gid();
  iph.dst = server.gid();
  roce::cm::MrInfo mi;
  if (p.mr) mi = {p.mr->va, p.mr->rkey, p.mr->length};
  req.private_data = roce::cm::make_private_data(iph, mi);
  return req;
}

Connection& Driver::connect(roce::IpAddr server, const QpParams& p, uint16_t service_port) {
  if (!initialised_) fail("connect before init");
  const roce::MacAddr& mac = neighbour(server);
  local_addr(server.v6);  // fails when v6 and no IPv6 address, before a QP is taken
  Connection& c = prepare(p);
  c.local_comm_id = rand32();
  set_remote(c, server);
  c.remote_mac = mac;
  const roce::cm::Req req = cm_req(c, server, p, service_port);

  connecting_ = &c;
  rep_ok_ = false;
  for (int attempt = 0; attempt < 3 && !rep_ok_ && c.state != VerbsState::Err; ++attempt) {
    send_mad(server, req, roce::cm::attr::REQ);
    cm_wait(HostBus::kCmReply);
  }
  connecting_ = nullptr;
  if (c.state == VerbsState::Err) {
    qpn_used_[c.qpn] = false;
    throw CmError(CmError::rejected, fmt::format("node {}: connect to {}: ConnectReject received (reason {})",
                                                 cfg_.node, server.str(), rej_reason_), rej_reason_);
  }
  if (!rep_ok_) {
    set_state(c, VerbsState::Err);
    qpn_used_[c.qpn] = false;
    throw CmError(CmError::timeout,
                  fmt::format("node {}: connect to {}: no ConnectReply after 3 ConnectRequests", cfg_.node, server.str()));
  }
  // REP gave the remote QPN and PSN: program the QP (RESET -> INIT -> RTR -> RTS).
  program_rc_qp(c);
  set_state(c, VerbsState::Rts);
  send_rtu(c);
  return c;
}

void Driver::send_rtu(const Connection& c) {
  roce::cm::Rtu rtu;
  rtu.local_comm_id = c.local_comm_id;
  rtu.remote_comm_id = c.remote_comm_id;
  send_mad(remote_of(c), rtu, roce::cm::attr::RTU);
}

bool Driver::await_rtu(Connection& c) {
  const uint64_t t = uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (int reps = 1; c.state == VerbsState::Rtr;) {
    const uint64_t due = c.rep_sent_ps + t;
    if (now() < due) {
      bus_.sleep_until(due, HostBus::kEstablished);
      continue;
    }
    if (reps == 3) break;
    send_rep(c);  // no ReadyToUse within the timeout: the ConnectReply again
    ++reps;
  }
  return c.state == VerbsState::Rts;
}

void Driver::send_rep(Connection& c) {
  c.rep_sent_ps = now();
  roce::cm::Rep rep;
  rep.local_comm_id = c.local_comm_id;
  rep.remote_comm_id = c.remote_comm_id;
  rep.local_qpn = c.qpn;
  rep.start_psn = c.local_psn;
  rep.resp_resources = 16;
  rep.initiator_depth = 16;
  rep.target_ack_delay = 15;
  rep.rnr_retry_count = uint8_t(c.params.rnr_retry_cnt);
  rep.local_ca_guid = 0x0200000000000000ull |
                      (uint64_t(c.ipv6 && cfg_.ip6 ? cfg_.ip6->pg332_word(1) : cfg_.ip.v) << 8);
  roce::cm::MrInfo mi;
  if (c.params.mr) mi = {c.params.mr->va, c.params.mr->rkey, c.params.mr->length};
  rep.private_data = roce::cm::encode_mr_info(mi);
  send_mad(remote_of(c), rep, roce::cm::attr::REP);
}

// A ConnectRequest from src: answered again when it repeats one already
// answered, refused when nobody listens (or reject_next), else the
// listening connection takes it: its QP programmed, a ConnectReply sent.
void Driver::on_cm_req(const roce::IpAddr& src, const roce::cm::Req& req) {
  for (auto& k : conns_)
    if (k->qpn && k->state != VerbsState::Reset && k->remote_comm_id == req.local_comm_id && remote_of(*k) == src) {
      // A repeated ConnectRequest (our ConnectReply was lost): answer again.
      send_rep(*k);
      return;
    }
  if (!listener_ || reject_reason_) {
    roce::cm::Rej rej;
    rej.remote_comm_id = req.local_comm_id;
    rej.local_comm_id = rand32();
    rej.msg_rejected = 0;  // the REQ
    rej.reason = reject_reason_ ? *reject_reason_ : 28;  // 28: consumer reject (nobody listens)
    reject_reason_.reset();
    send_mad(src, rej, roce::cm::attr::REJ);
    return;
  }
  Connection& c = *listener_;
  listener_ = nullptr;
  if (!listen_queue_.empty()) {  // listen_batch: the next listening connection
    listener_ = listen_queue_.front();
    listen_queue_.pop_front();
  }
  // The path MTU the client asks for (IBTA 12.7.26, IB enum 1 = 256 ..
  // 5 = 4096): both ends must use the same PMTU, so the server's QP takes
  // the smaller of the two.
  if (req.path_mtu >= 1 && req.path_mtu <= 5) c.params.pmtu = std::min(c.params.pmtu, 256u << (req.path_mtu - 1));
  c.qpn = alloc_qpn(c.params.qpn);
  c.local_psn = c.params.start_psn ? (*c.params.start_psn & 0xFFFFFF) : rand24();
  c.local_comm_id = rand32();
  c.remote_comm_id = req.local_comm_id;
  c.remote_qpn = req.local_qpn;
  c.remote_psn = req.start_psn;
  set_remote(c, src);
  c.remote_mac = neighbour(src);
  if (req.private_data.size() >= roce::cm::RdmaCmIpHdr::kLen + roce::cm::MrInfo::kLen) {
    if (auto mi = roce::cm::decode_mr_info(req.private_data.data() + roce::cm::RdmaCmIpHdr::kLen,
                                           roce::cm::MrInfo::kLen))
      c.remote_mr = *mi;
  }
  setup_queues(c);
  program_rc_qp(c);  // enabled before the REP leaves: requests may follow the RTU at once
  set_state(c, VerbsState::Rtr);
  send_rep(c);
}

void Driver::handle_mad(const uint8_t* e, size_t len) {
  // QP1 RQ element (3.x): 40-byte L3 slot, UDP(8), BTH(12), DETH(8), MAD(256).
  const size_t kMadOff = 40 + 8 + 12 + 8;
  if (len < kMadOff + roce::cm::kMadLen || e[48] != roce::op::UD_SEND_ONLY) return;
  // The L3 slot: 20 zero bytes and the IPv4 header, or the IPv6 header.
  roce::IpAddr src;
  if ((e[0] >> 4) == 6) {
    roce::Ipv6Addr a;
    std::copy(e + 8, e + 24, a.b.begin());
    src = a;
  } else {
    src = roce::Ipv4Addr{roce::get_be32(e + 20 + 12)};
  }
  auto mad = roce::cm::decode_mad(e + kMadOff, roce::cm::kMadLen);
  if (!mad) return;
  if (auto* req = std::get_if<roce::cm::Req>(&mad->msg)) {
    on_cm_req(src, *req);
  } else if (auto* rep = std::get_if<roce::cm::Rep>(&mad->msg)) {
    if (batch_reply(*rep)) return;  // a connection of connect_batch (driver_cm_batch.cpp)
    if (!connecting_ || rep->remote_comm_id != connecting_->local_comm_id) {
      // A ConnectReply repeated after we answered it: our ReadyToUse was
      // lost (IBTA 12.9: answer the repeated REP with the RTU again).
      for (auto& k : conns_)
        if (k->state == VerbsState::Rts && k->local_comm_id == rep->remote_comm_id &&
            k->remote_comm_id == rep->local_comm_id)
          send_rtu(*k);
      return;
    }
    Connection& c = *connecting_;
    c.remote_comm_id = rep->local_comm_id;
    c.remote_qpn = rep->local_qpn;
    c.remote_psn = rep->start_psn;
    if (auto mi = roce::cm::decode_mr_info(rep->private_data.data(), rep->private_data.size()))
      c.remote_mr = *mi;
    rep_ok_ = true;
    bus_.signal(HostBus::kCmReply);
  } else if (auto* rtu = std::get_if<roce::cm::Rtu>(&mad->msg)) {
    for (auto& c : conns_)
      if (c->state == VerbsState::Rtr && c->local_comm_id == rtu->remote_comm_id) set_state(*c, VerbsState::Rts);
  } else if (auto* dreq = std::get_if<roce::cm::Dreq>(&mad->msg)) {
    for (auto& k : conns_)
      if (k->qpn && k->local_comm_id == dreq->remote_comm_id && k->remote_comm_id == dreq->local_comm_id) {
        roce::cm::Drep drep;
        drep.local_comm_id = k->local_comm_id;
        drep.remote_comm_id = k->remote_comm_id;
        send_mad(remote_of(*k), drep, roce::cm::attr::DREP);
        if (k->state != VerbsState::Reset) delete_qp(*k);
        return;
      }
  } else if (auto* drep = std::get_if<roce::cm::Drep>(&mad->msg)) {
    if (disconnecting_ && drep->remote_comm_id == disconnecting_->local_comm_id) {
      drep_ok_ = true;
      bus_.signal(HostBus::kDisconnect);
    }
  } else if (auto* rej = std::get_if<roce::cm::Rej>(&mad->msg)) {
    if (batch_reject(*rej)) return;
    if (rej_comm_id_ && rej->remote_comm_id == rej_comm_id_) {
      rej_received_ = rej->reason;
      bus_.signal(HostBus::kCmReply);
    }
    if (connecting_ && rej->remote_comm_id == connecting_->local_comm_id) {
      rej_reason_ = rej->reason;
      set_state(*connecting_, VerbsState::Err);
      bus_.signal(HostBus::kCmReply);  // connect() sees rep_ok_ == false
    }
  }
}

void Driver::service_qp1_rq() {
  const uint32_t pi = mem_read32(qp1_rq_db_) % kQp1Depth;  // STATRQPIDB1 mirror
  bool any = false;
  while (qp1_rq_ci_ != pi) {
    const uint64_t e = qp1_rq_ + uint64_t(qp1_rq_ci_) * kQp1Elem;
    std::vector<uint8_t> elem = mem_read(e, kQp1Elem);
    qp1_rq_ci_ = (qp1_rq_ci_ + 1) % kQp1Depth;
    any = true;
    handle_mad(elem.data(), elem.size());
  }
  if (any) wr(qreg(1, R::q::RQCIi), qp1_rq_ci_);
}

// PG332: ECN-marked arrivals set the QP's CNPSCHDSTS bit and INTSTS[8];
// software builds each CNP (BTH opcode 0x81 to the remote QP, BECN set,
// 16 reserved zero bytes) and sends it on QP1, then clears the bit (W1C).
void Driver::service_cnp() {
  for (uint32_t b = 0; b < cfg_.layout.int_banks; ++b) {
    const uint32_t bits = rd(greg(cfg_.layout.cnp_bank + 4 * b));
    if (!bits) continue;
    for (uint32_t j = 0; j < 32; ++j) {
      if (!(bits & (1u << j))) continue;
      const uint32_t qpn = 32 * b + j;
      Connection* c = by_qpn(qpn);
      if (!c) continue;
      // A notification point may rate-limit its CNPs (RoCEv2 Annex A17.9.3):
      // at most one per QP every cnp_interval_us, and none while QP1's SQ
      // is full (CM MADs keep their slots); the bit is cleared either way
      // (A-HOST-3).
      const uint64_t t = now();
      if ((c->last_cnp_ps && t - c->last_cnp_ps < cfg_.cnp_interval_us * 1000000ull) || qp1_sq_full()) {
        ++cnps_suppressed_;
        continue;
      }
      c->last_cnp_ps = t;
      const roce::IpAddr dst = remote_of(*c);
      roce::Frame f = qp1_frame(dst);
      f.bth.opcode = roce::op::CNP;
      f.bth.pkey = 0xFFFF;
      f.bth.dest_qp = c->remote_qpn;
      f.bth.resv8a = 0x40;  // BECN
      f.bth.psn = 0;
      f.payload.assign(16, 0);
      roce::EncodeOptions eo;
      eo.fill_icrc = false;
      std::vector<uint8_t> bytes = roce::encode(f, eo);
      bytes.resize(bytes.size() - roce::kIcrcLen);
      post_qp1(bytes);
      ++cnps_sent_;
    }
    wr(greg(cfg_.layout.cnp_bank + 4 * b), bits);  // W1C what was served (A-ERNIC-22)
  }
}

void Driver::reject_next(uint16_t reason) { reject_reason_ = reason; }

uint16_t Driver::connect_expect_reject(roce::IpAddr server, uint16_t service_port) {
  if (!initialised_) fail("connect before init");
  roce::cm::Req req;
  req.local_comm_id = rand32();
  req.service_id = 0x0000000001060000ull | service_port;
  req.local_qpn = 0;  // no QP is allocated for a connection expected to fail
  req.start_psn = rand24();
  req.pkey = 0xFFFF;
  req.path_mtu = 5;
  req.primary_local_gid = local_addr(server.v6).gid();
  req.primary_remote_gid = server.gid();
  rej_comm_id_ = req.local_comm_id;
  rej_received_.reset();
  for (int attempt = 0; attempt < 3 && !rej_received_; ++attempt) {
    send_mad(server, req, roce::cm::attr::REQ);
    cm_wait(HostBus::kCmReply);
  }
  rej_comm_id_ = 0;
  if (!rej_received_) fail(fmt::format("connect to {}: no ConnectReject after 3 ConnectRequests", server.str()));
  return *rej_received_;
}

void Driver::disconnect(Connection& c) {
  if (c.state != VerbsState::Rts && c.state != VerbsState::Err)
    fail(fmt::format("disconnect QP{} in state {}", c.qpn, verbs_state_name(c.state)));
  roce::cm::Dreq dreq;
  dreq.local_comm_id = c.local_comm_id;
  dreq.remote_comm_id = c.remote_comm_id;
  dreq.remote_qpn = c.remote_qpn;
  disconnecting_ = &c;
  drep_ok_ = false;
  for (int attempt = 0; attempt < 3 && !drep_ok_; ++attempt) {
    send_mad(remote_of(c), dreq, roce::cm::attr::DREQ);
    cm_wait(HostBus::kDisconnect);
  }
  disconnecting_ = nullptr;
  delete_qp(c);
  if (!drep_ok_) fail(fmt::format("disconnect QP{}: no DisconnectReply after 3 DisconnectRequests", c.qpn));
}

}  // namespace ernic::host
