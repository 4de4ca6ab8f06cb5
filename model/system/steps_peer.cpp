// model/system: the steps that set up a node of `kind: peer` (model/peer):
// register_mr (an MR in the peer's memory) and connect (out of band: the
// ERNIC end prepared and moved to RTS by its driver towards the peer's QPN
// and PSN, the peer's QP created towards the ERNIC end's). The scoreboard
// stands aside on both nodes: the peer's memory is written by no post it
// tracks, and the ERNIC end's by the peer's answers. Split (split.h): the
// peer node runs in its own process as an ERNIC node does; its MR records
// go to the other process, and connect trades each end's values.
#include "model/system/system.h"

#include <fmt/format.h>

namespace ernic {

namespace {
roce::IpAddr addr_of(const NodeConfig& n, uint32_t ip_version) {
  if (ip_version == 6 && n.ip6) return *n.ip6;
  return n.ip;
}

// What one end of a connection with a peer end tells the other: its QPN,
// its first PSN, its MR (has_mr, va, rkey, length). Split: traded at the
// connect's instant, as values (split_exchange).
struct EndInfo {
  uint64_t qpn = 0, psn = 0, has_mr = 0, va = 0, rkey = 0, length = 0;
  std::vector<uint64_t> values() const { return {qpn, psn, has_mr, va, rkey, length}; }
  static EndInfo of(const std::vector<uint64_t>& v) { return {v.at(0), v.at(1), v.at(2), v.at(3), v.at(4), v.at(5)}; }
  static EndInfo of_qp(uint32_t qpn, uint32_t psn, const host::Mr* mr) {
    return mr ? EndInfo{qpn, psn, 1, mr->va, mr->rkey, mr->length} : EndInfo{qpn, psn};
  }
  roce::cm::MrInfo mr() const {
    return has_mr ? roce::cm::MrInfo{va, uint32_t(rkey), length} : roce::cm::MrInfo{};
  }
};

// The peer's end before its QP exists: its QPN (the one given, else the
// lowest free from 2), its first PSN as a requester (the one given, else
// 0), its MR (named and registered, else none).
EndInfo peer_end(const ConnectStep& s, const Node& pn, bool client_is_peer) {
  const std::string& pmr = client_is_peer ? s.client_mr : s.server_mr;
  const peer::PeerMr* pm = pmr.empty() ? nullptr : pn.peer->mrs().find(pmr);
  uint32_t pqpn = 2;
  if (auto q = client_is_peer ? s.client_qp : s.server_qp) {
    pqpn = *q;
  } else {
    while (pn.peer->qps().count(pqpn)) ++pqpn;
  }
  EndInfo e{pqpn, (client_is_peer ? s.client_psn : s.server_psn).value_or(0)};
  if (pm) e.has_mr = 1, e.va = pm->va, e.rkey = pm->rkey, e.length = pm->length;
  return e;
}

// The peer's QP of a connection, towards the ERNIC end ee: "" once
// created, else why not (*where: the key at fault).
std::string create_peer_end(const ConnectStep& s, const SourceLoc& loc, Node& pn, const Node& en, const EndInfo& pe,
                            const EndInfo& ee, SourceLoc* where) {
  peer::PeerQpParams pp;
  pp.qpn = uint32_t(pe.qpn);
  pp.remote_qpn = uint32_t(ee.qpn);
  pp.epsn = uint32_t(ee.psn);
  pp.remote_mac = en.cfg.mac;
  pp.local_ip = addr_of(pn.cfg, s.ip_version);
  pp.remote_ip = addr_of(en.cfg, s.ip_version);
  pp.pmtu = s.pmtu;
  pp.rq_depth = s.rq_depth;
  pp.rq_elem_bytes = s.rq_elem_bytes;
  // SENDs land in the node's recv_mr, else in memory of the peer's own.
  if (const std::string& rm = pn.cfg.peer->recv_mr; !rm.empty()) {
    pp.recv_mr = pn.peer->mrs().find(rm);
    if (!pp.recv_mr || pp.recv_mr->length < s.rq_elem_bytes) {
      *where = pn.cfg.peer->recv_mr_loc;
      return fmt::format("recv_mr '{}' of {}: {} before connect '{}' (line {}), of at least one receive element "
                         "({} bytes)",
                         rm, pn.cfg.name, pp.recv_mr ? "too short: register it" : "register it", s.name, loc.line,
                         s.rq_elem_bytes);
    }
  }
  pp.start_psn = uint32_t(pe.psn);
  std::string why;
  peer::PeerQp* q = pn.peer->create_qp(pp, &why);
  if (!q) {
    *where = loc;
    return fmt::format("connect '{}': {}", s.name, why);
  }
  if (ee.has_mr) {  // what the peer's posts write to and read from
    q->remote_mr_va = ee.va;
    q->remote_mr_len = ee.length;
    q->remote_mr_rkey = uint32_t(ee.rkey);
  }
  return "";
}
}  // namespace

void System::register_peer_mr(const RegisterMrStep& s, const SourceLoc& loc) {
  Node* n = node(s.node);
  std::string why;
  const bool rd = s.access == Access::r || s.access == Access::rw;
  const bool wr = s.access == Access::w || s.access == Access::rw;
  const auto m = n->peer->mrs().add(s.name, s.length, rd, wr, &why);
  if (!m) return fail(loc, fmt::format("register_mr on {} (kind: peer): {}", s.node, why));
  host::Mr h;
  h.name = m->name;
  h.pd = s.pd;
  h.va = m->va;
  h.pa = m->pa;
  h.length = m->length;
  h.rkey = m->rkey;
  n->peer_mrs[s.name] = h;
  split_share_mr(h);  // split: the other process's steps may name it (check_memory's equals)
  scoreboard.stand_aside(s.node, "node of kind: peer (the ideal IBTA peer: its memory changes with no post)");
}

// connect with a peer end (out of band): the ERNIC end prepared and moved
// to RTS towards the peer's QPN and PSN, then the peer's QP created towards
// the ERNIC end's. Split (split.h): each process does its own end; the two
// trade their values at the step's instant, and the peer's process creates
// its QP when the ERNIC end is enabled, the instant one process does.
void System::connect_peer(const ConnectStep& s, const SourceLoc& loc) {
  const bool client_is_peer = node(s.client)->cfg.peer.has_value();
  Node* pn = node(client_is_peer ? s.client : s.server);
  Node* en = node(client_is_peer ? s.server : s.client);
  // (The other process's node: its configuration says whether it has the built-in driver.)
  if (en->remote ? en->cfg.peer || en->cfg.host_program : !en->driver)
    return fail(loc, "connect: the end facing the peer needs the built-in driver");
  const bool peer_here = local(pn->cfg.name), ernic_here = local(en->cfg.name);
  EndInfo pe, ee;  // the peer's end, the ERNIC end
  if (peer_here) pe = peer_end(s, *pn, client_is_peer);
  host::Connection* dc = nullptr;
  if (ernic_here) {
    host::QpParams ep;
    ep.pmtu = s.pmtu;
    ep.sq_depth = s.sq_depth;
    ep.rq_depth = s.rq_depth;
    ep.rq_elem_bytes = s.rq_elem_bytes;
    ep.qpn = client_is_peer ? s.server_qp : s.client_qp;
    ep.start_psn = client_is_peer ? s.server_psn : s.client_psn;
    ep.sideband = s.sideband;  // hw_handshake: the ERNIC end's doorbells on the sideband (PG332)
    const std::string& emr = client_is_peer ? s.server_mr : s.client_mr;
    ep.mr = emr.empty() ? nullptr : en->driver->find_mr(emr);
    dc = &en->driver->prepare(ep);
    ee = EndInfo::of_qp(dc->qpn, dc->local_psn, ep.mr);
  }
  if (split())
    (peer_here ? ee : pe) = EndInfo::of(split_exchange(peer_here ? pe.values() : ee.values(), s.client, s.server));
  if (ernic_here) {
    en->driver->establish(*dc, uint32_t(pe.qpn), uint32_t(pe.psn), addr_of(pn->cfg, s.ip_version), pe.mr());
    // The driver's register writes are posted: a read of the QP's QPCONFi
    // returns once they have all landed (PCIe ordering), so the peer's first
    // request cannot reach the QP before it is enabled.
    en->axil->read(en->ernic->config().layout.qp(dc->qpn, regs::q::QPCONFi));
  }
  if (split()) split_exchange({0}, s.client, s.server);  // the peer's process waits for that read to return
  if (peer_here) {
    SourceLoc where;
    if (std::string why = create_peer_end(s, loc, *pn, *en, pe, ee, &where); !why.empty()) return fail(where, why);
  }
  peer_qpn_[s.name] = uint32_t(pe.qpn);
  if (ernic_here)
    scoreboard.stand_aside(en->cfg.name, "connection '" + s.name + "' has an end of kind: peer (" + pn->cfg.name + ")");
  if (peer_here)
    scoreboard.stand_aside(pn->cfg.name, "node of kind: peer (the ideal IBTA peer: its memory changes with no post)");
  Conn k{s.client, s.server, nullptr, nullptr};
  (client_is_peer ? k.s : k.c) = dc;  // the peer's process: no ERNIC end here
  conns_[s.name] = k;
}

// post on the peer's end: its requester's WQEs (local ranges checked
// against the peer's MRs), `repeat` times.
void System::post_peer(const PostStep& s, const SourceLoc& loc) {
  Node* n = node(s.node);
  const uint32_t qpn = peer_qpn_.at(s.conn);
  const peer::PeerQp& q = n->peer->qps().at(qpn);
  std::vector<peer::PeerWqe> wqes;
  for (const WqeSpec& w : s.wqes) {
    const host::Mr* mr = n->find_mr(w.local_mr);
    if (!mr) return fail(w.loc, "no MR '" + w.local_mr + "' on " + s.node);
    if (w.local_offset > mr->length || w.length > mr->length - w.local_offset)
      return fail(w.loc, fmt::format("local range [{}, +{}) lies outside MR '{}' ({} bytes)", w.local_offset,
                                     w.length, w.local_mr, mr->length));
    peer::PeerWqe p;
    p.wr_id = uint16_t(w.wr_id);
    p.op = w.opcode;
    p.local_pa = mr->pa + w.local_offset;
    p.length = w.length;
    p.remote_va = q.remote_mr_va + w.remote_offset;
    p.rkey = w.rkey ? *w.rkey : q.remote_mr_rkey;
    p.immdt = w.immdt;
    wqes.push_back(p);
  }
  for (uint32_t r = 0; r < s.repeat && (r == 0 || !lane_stopped()); ++r) n->peer->post(qpn, wqes);  // as steps_driver.cpp's
}

// wait_completions on the peer's end: its requester's completions, within
// the timeout, against the expectations.
void System::wait_peer(const WaitCompletionsStep& s, const SourceLoc& loc) {
  Node* n = node(s.node);
  const uint32_t qpn = peer_qpn_.at(s.conn);
  const uint64_t deadline = sc_core::sc_time_stamp().value() + s.timeout_us * 1000000ull;
  ++bounded_;  // the step times out by itself
  while (n->peer->completions_ready(qpn) < s.count) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (now >= deadline) break;
    sc_core::wait(sc_core::sc_time(double(deadline - now), sc_core::SC_PS), n->peer->cq_event());
  }
  --bounded_;
  const std::vector<peer::PeerCqe> got = n->peer->poll(qpn, s.count);
  if (got.size() < s.count)
    return fail(loc, fmt::format("expected {} completion(s) on {} (kind: peer) QP{} within {} us, got {}", s.count,
                                 s.node, qpn, s.timeout_us, got.size()));
  for (size_t i = 0; i < got.size(); ++i) {
    const CompletionExpect* e = i < s.expect.size() ? &s.expect[i] : nullptr;
    if (got[i].error && !s.errors_allowed && !(e && e->error && *e->error))
      fail(loc, fmt::format("completion {} (wr_id {}) carries an error (NAK syndrome 0x{:02x}) and nothing expects one",
                            i, got[i].wr_id, got[i].syndrome));
    if (!e) continue;
    if (e->wr_id && *e->wr_id != got[i].wr_id)
      fail(loc, fmt::format("completion {}: wr_id {} expected, got {}", i, *e->wr_id, got[i].wr_id));
    if (e->opcode && *e->opcode != got[i].op)
      fail(loc, fmt::format("completion {}: opcode {} expected, got {}", i, to_string(*e->opcode), to_string(got[i].op)));
    if (e->error && *e->error != got[i].error)
      fail(loc, fmt::format("completion {}: error={} expected, got {}", i, *e->error, got[i].error));
  }
}

}  // namespace ernic
