// model/system: the connection-management steps: connect (CM on QP1 or out
// of band), connect_reject, disconnect, hw_handshake, recover; the
// connections they make, by name.
#include "model/system/system.h"

#include <fmt/format.h>

namespace ernic {

using namespace sc_core;

namespace {
// A node's address of the connection's IP version (the parser checked it exists).
roce::IpAddr node_addr(const NodeConfig& n, uint32_t ip_version) {
  if (ip_version == 6 && n.ip6) return *n.ip6;
  return n.ip;
}
}  // namespace

host::Connection& System::side(const Conn& k, const std::string& node_name) {
  return node_name == k.client ? *k.c : *k.s;
}

// connect: two QPs connected by CM on QP1, or out of band (cm: false);
// tracked by the scoreboard.
void System::handle(const ConnectStep& s, const SourceLoc& loc, Group*) {
  Node* cn = node(s.client);
  Node* sn = node(s.server);
  if (!cn || !sn || cn == sn) return fail(loc, "connect needs two different nodes");
  if (!scenario.topology_switch && nodes.size() != 2)
    return fail(loc, "connect needs a two-node topology (one link) or topology: switch");
  host::QpParams sp, cp;
  sp.pmtu = cp.pmtu = s.pmtu;
  sp.sq_depth = cp.sq_depth = s.sq_depth;
  sp.rq_depth = cp.rq_depth = s.rq_depth;
  sp.rq_elem_bytes = cp.rq_elem_bytes = s.rq_elem_bytes;
  sp.qpn = s.server_qp;
  cp.qpn = s.client_qp;
  sp.start_psn = s.server_psn;
  cp.start_psn = s.client_psn;
  sp.sideband = cp.sideband = s.sideband;
  if (!s.program_end.empty()) return connect_program(s, loc, s.program_end == s.client ? cp : sp);
  if (cn->cfg.peer || sn->cfg.peer) return connect_peer(s, loc);  // kind: peer (steps_peer.cpp; split too)
  if (split()) return connect_split(s, loc, cp, sp);
  sp.mr = s.server_mr.empty() ? nullptr : sn->driver->find_mr(s.server_mr);
  cp.mr = s.client_mr.empty() ? nullptr : cn->driver->find_mr(s.client_mr);
  Conn k{s.client, s.server, nullptr, nullptr};
  auto track = [&] {  // both QPs and their RQs, to the scoreboard
    k.sb_c = scoreboard.add_qp(s.client, k.c->qpn, k.c->rq_base, k.c->params.rq_depth, k.c->params.rq_elem_bytes);
    k.sb_s = scoreboard.add_qp(s.server, k.s->qpn, k.s->rq_base, k.s->params.rq_depth, k.s->params.rq_elem_bytes);
    scoreboard.pair_qps(k.sb_c, k.sb_s);
  };
  if (!s.cm) {
    // Out of band: each side learns the other's QPN, PSN and MR directly.
    k.c = &cn->driver->prepare(cp);
    k.s = &sn->driver->prepare(sp);
    auto mr_of = [](const host::QpParams& p) {
      return p.mr ? roce::cm::MrInfo{p.mr->va, p.mr->rkey, p.mr->length} : roce::cm::MrInfo{};
    };
    cn->driver->establish(*k.c, k.s->qpn, k.s->local_psn, node_addr(sn->cfg, s.ip_version), mr_of(sp));
    sn->driver->establish(*k.s, k.c->qpn, k.c->local_psn, node_addr(cn->cfg, s.ip_version), mr_of(cp));
    monitor_connection(s.client, k.c->qpn, s.server, k.s->qpn);
    track();
    conns_[s.name] = k;
    return;
  }
  if (s.batch) return connect_batch(s, loc, cp, sp);
  k.s = &sn->driver->listen(sp);
  k.c = &cn->driver->connect(node_addr(sn->cfg, s.ip_version), cp);
  // The server is RTS once the ReadyToUse has arrived; it resends its
  // ConnectReply while none comes (Driver::await_rtu).
  if (!sn->driver->await_rtu(*k.s))
    return fail(loc, fmt::format("connect '{}': server {} QP{} did not reach RTS (state {})", s.name, s.server,
                                 k.s->qpn, host::verbs_state_name(k.s->state)));
  track();
  conns_[s.name] = k;
}

// connect in a split run (split.h): each process does its end. With CM the
// ends find each other on the wire as in one process; out of band they
// trade their QPN, PSN and MR at this instant.
void System::connect_split(const ConnectStep& s, const SourceLoc& loc, host::QpParams cp, host::QpParams sp) {
  const bool client = local(s.client);
  Node* me = node(client ? s.client : s.server);
  const NodeConfig& other = node(client ? s.server : s.client)->cfg;
  host::QpParams& mine = client ? cp : sp;
  const std::string& mr = client ? s.client_mr : s.server_mr;
  mine.mr = mr.empty() ? nullptr : me->driver->find_mr(mr);
  Conn k{s.client, s.server, nullptr, nullptr};
  host::Connection*& c = client ? k.c : k.s;
  if (!s.cm) {
    c = &me->driver->prepare(mine);
    const roce::cm::MrInfo mi = mine.mr ? roce::cm::MrInfo{mine.mr->va, mine.mr->rkey, mine.mr->length}
                                        : roce::cm::MrInfo{};
    const std::vector<uint64_t> ours = {c->qpn, c->local_psn, mi.va, mi.rkey, mi.length};
    const std::vector<uint64_t> theirs = split_exchange(ours, s.client, s.server);
    me->driver->establish(*c, uint32_t(theirs.at(0)), uint32_t(theirs.at(1)), node_addr(other, s.ip_version),
                          roce::cm::MrInfo{theirs.at(2), uint32_t(theirs.at(3)), theirs.at(4)});
    monitor_connection(s.client, client ? c->qpn : uint32_t(theirs[0]), s.server,
                       client ? uint32_t(theirs[0]) : c->qpn);
  } else if (client) {
    c = &me->driver->connect(node_addr(other, s.ip_version), cp);
    split_exchange({0}, s.client, s.server);  // the server's process waits for this instant (below)
  } else {
    c = &me->driver->listen(sp);
    // In one process the client's connect returned first (the ConnectReply
    // was out); here the server waits for the ConnectRequest itself.
    if (!split_await_request(*me, *c, s.client)) return;
    // ... and waits for the ReadyToUse (resending its ConnectReply) only
    // from the instant the client's connect returned, the client's word;
    // a client whose connect failed fails the step there, nothing more
    // sent here (SplitPartnerFailed), as in one process.
    split_exchange({0}, s.client, s.server);
    if (!me->driver->await_rtu(*c))
      return fail(loc, fmt::format("connect '{}': server {} QP{} did not reach RTS (state {})", s.name, s.server,
                                   c->qpn, host::verbs_state_name(c->state)));
  }
  (client ? k.sb_c : k.sb_s) =
      scoreboard.add_qp(me->cfg.name, c->qpn, c->rq_base, c->params.rq_depth, c->params.rq_elem_bytes);
  conns_[s.name] = k;
}

// A connection with a program end: the driver's end is prepared and moved
// to RTS towards the program's QPN and PSN; the program learns both ends
// from its environment (program_env) and programs its own QP.
void System::connect_program(const ConnectStep& s, const SourceLoc& loc, const host::QpParams& prog) {
  const bool client_is_program = s.program_end == s.client;
  Node* pn = node(s.program_end);
  Node* dn = node(client_is_program ? s.server : s.client);
  host::QpParams dp = prog;
  dp.qpn = client_is_program ? s.server_qp : s.client_qp;
  dp.start_psn = client_is_program ? s.server_psn : s.client_psn;
  const std::string& dmr = client_is_program ? s.server_mr : s.client_mr;
  dp.mr = dmr.empty() ? nullptr : find_mr_any(dn->cfg.name, dmr);
  // Out of band: the driver's end is programmed now, towards the program's
  // QPN and PSN. With CM (the program is the client): the driver's end
  // listens; the program's driver connects over QP1 (the same driver code,
  // model/host/driver_cm.cpp) and the listening end reaches RTS on its RTU.
  // Split (split.h): the driver's end in its node's process, which tells
  // the program's its QPN and first PSN.
  Conn k{s.client, s.server, nullptr, nullptr};
  std::vector<uint64_t> d_end(2);  // the driver's end: QPN, first PSN
  if (local(dn->cfg.name)) {
    host::Connection& dc = s.cm ? dn->driver->listen(dp) : dn->driver->prepare(dp);
    if (!s.cm)
      dn->driver->establish(dc, *prog.qpn, *prog.start_psn, node_addr(pn->cfg, s.ip_version), roce::cm::MrInfo{});
    // The program's writes into this node's memory are not posts the
    // scoreboard sees.
    scoreboard.stand_aside(dn->cfg.name, "connection '" + s.name + "' has a program end (" + s.program_end + ")");
    (client_is_program ? k.s : k.c) = &dc;
    d_end = {dc.qpn, dc.local_psn};
  }
  conns_[s.name] = k;
  if (split()) {
    const std::vector<uint64_t> theirs = split_exchange(d_end, s.client, s.server);
    if (!local(dn->cfg.name)) d_end = theirs;
  }
  if (!local(s.program_end)) return;
  const roce::IpAddr dip = node_addr(dn->cfg, s.ip_version);
  auto& env = program_env[s.program_end];
  env = {{"ERNIC_CONN", s.name},
         {"ERNIC_CM", s.cm ? "1" : "0"},
         {"ERNIC_PMTU", std::to_string(prog.pmtu)},
         {"ERNIC_SQ_DEPTH", std::to_string(prog.sq_depth)},
         {"ERNIC_RQ_DEPTH", std::to_string(prog.rq_depth)},
         {"ERNIC_RQ_ELEMENT_BYTES", std::to_string(prog.rq_elem_bytes)},
         {"ERNIC_PEER_MAC", dn->cfg.mac.str()},
         {"ERNIC_PEER_IP", dip.str()}};
  if (prog.qpn) env.push_back({"ERNIC_QPN", std::to_string(*prog.qpn)});
  if (prog.start_psn) env.push_back({"ERNIC_PSN", std::to_string(*prog.start_psn)});
  if (!s.cm) {  // with CM the peer's QPN, PSN and MR arrive in its ConnectReply
    env.push_back({"ERNIC_PEER_QPN", std::to_string(d_end[0])});
    env.push_back({"ERNIC_PEER_PSN", std::to_string(d_end[1])});
    if (dp.mr) {
      env.push_back({"ERNIC_PEER_VA", std::to_string(dp.mr->va)});
      env.push_back({"ERNIC_PEER_RKEY", std::to_string(dp.mr->rkey)});
      env.push_back({"ERNIC_PEER_LEN", std::to_string(dp.mr->length)});
    }
  }
  (void)loc;
}

// connect_reject: the server refuses the next ConnectRequest with the
// reason; the client must see it.
void System::handle(const ConnectRejectStep& s, const SourceLoc& loc, Group*) {
  Node* cn = node(s.client);
  Node* sn = node(s.server);
  if (local(s.server)) sn->driver->reject_next(uint16_t(s.reason));
  if (!local(s.client)) return;  // a split run: the client's process expects the reject
  const uint16_t got = cn->driver->connect_expect_reject(node_addr(sn->cfg, s.ip_version));
  if (got != s.reason)
    return fail(loc, fmt::format("ConnectReject with reason {} expected, got {}", s.reason, got));
}

// disconnect: DREQ/DREP from one side; the peer's QP must return to
// RESET.
void System::handle(const DisconnectStep& s, const SourceLoc& loc, Group*) {
  auto it = conns_.find(s.conn);
  if (it == conns_.end()) return fail(loc, "connection '" + s.conn + "' was not established");
  Conn k = it->second;
  conns_.erase(it);
  const std::string& other = s.node == k.client ? k.server : k.client;
  if (local(s.node)) node(s.node)->driver->disconnect(side(k, s.node));
  // Split (model/system/split.h): the peer's process waits for the
  // requester's to say its disconnect returned, then watches its own QP
  // from that instant, as one process does.
  if (split()) split_exchange({0}, k.client, k.server);
  if (!local(other)) return;
  host::Connection& peer = side(k, other);
  // The peer deletes its QP when the DisconnectRequest arrives.
  const uint64_t deadline = sc_time_stamp().value() + uint64_t(node(other)->driver->config().cm_timeout_us) * 3000000;
  while (peer.state != host::VerbsState::Reset && sc_time_stamp().value() < deadline) wait(sc_time(1, SC_US));
  if (peer.state != host::VerbsState::Reset)
    return fail(loc, fmt::format("disconnect '{}': the peer's QP{} did not return to RESET", s.conn, peer.qpn));
}

// hw_handshake: one end switched to HW handshake; the scoreboard's RQ
// restarts.
void System::handle(const HwHandshakeStep& s, const SourceLoc& loc, Group*) {
  auto it = conns_.find(s.conn);
  if (it == conns_.end()) return fail(loc, "connection '" + s.conn + "' was not established");
  const uint32_t pending = node(s.node)->driver->switch_to_hw_handshake(side(it->second, s.node));
  scoreboard.rq_restart(s.node == it->second.client ? it->second.sb_c : it->second.sb_s, pending);
}

// recover: PG332's fatal recovery on both ends; the server's fatal code
// checked.
void System::handle(const RecoverStep& s, const SourceLoc& loc, Group*) {
  auto it = conns_.find(s.conn);
  if (it == conns_.end()) return fail(loc, "connection '" + s.conn + "' was not established");
  Conn k = it->second;
  conns_.erase(it);
  // The client's end first, then the server's. Split (model/system/split.h):
  // the server's process waits for the client's to say it is done (the
  // values traded carry nothing), so the server's recovery starts at the
  // same instant as in one process.
  if (local(k.client)) node(k.client)->driver->recover_fatal(*k.c);
  if (split()) split_exchange({0}, k.client, k.server);
  if (!local(k.server)) return;
  const uint32_t code = node(k.server)->driver->recover_fatal(*k.s);
  if (s.code && code != *s.code)
    return fail(loc, fmt::format("the server's error-status queue holds fatal code 0x{:02x} for QP{}, expected 0x{:02x}",
                                 code, k.s->qpn, *s.code));
}

}  // namespace ernic
