// model/system: the QP-setup offload's steps (model/qp_setup/qp_setup_fsm.h):
// qp_setup, qp_release (the block's commands through the node's QP-setup
// driver, their status and state checked), qp_adopt (a connection from the
// QPs the block set up).
#include "model/system/system.h"

#include <fmt/format.h>

namespace ernic {

using namespace sc_core;

namespace {

// One end of a qp_adopt connection on node me: the QP its block set up,
// adopted by the driver, or a QP the driver programs to match the peer's.
host::Connection& adopt_end(Node& me, const QpAdoptStep::End& e, const host::Mr* mine,
                            const roce::cm::MrInfo& peer_info, const NodeConfig& peer, const QpAdoptStep::End& pe) {
  if (e.fsm) return me.qp_setup_driver->adopt(e.qp, peer_info, mine);
  host::QpParams p;
  p.qpn = e.qp;
  p.start_psn = e.psn;
  p.mr = mine;
  if (peer.qp_setup_fsm) p.pmtu = peer.qp_setup_fsm->pmtu;
  host::Connection& c = me.driver->prepare(p);
  me.driver->establish(c, pe.qp, e.remote_psn, peer.ip, peer_info);
  return c;
}

}  // namespace

void System::check_qp_setup(const SourceLoc& loc, const char* what, uint32_t qpn, const host::QpSetupResult& r,
                            uint8_t want_status, uint8_t want_state) {
  const auto ws = qps::State(want_state);
  if (r.status != want_status || r.state != ws)
    fail(loc, fmt::format("qp_setup_fsm {} QP{}: status 0x{:02x} ({}) in state {}; expected 0x{:02x} ({}) in state {}",
                          what, qpn, r.status, qps::status_name(r.status), qps::state_name(r.state), want_status,
                          qps::status_name(want_status), qps::state_name(ws)));
}

// qp_setup: a create command to the node's QP-setup block; status and
// state checked.
void System::handle(const QpSetupStep& s, const SourceLoc& loc, Group*) {
  host::QpSetupRequest q;
  q.qpn = s.qp;
  q.remote_qpn = s.remote_qp;
  q.sq_psn = s.psn;
  q.exp_psn = s.remote_psn;
  q.remote_ip = s.remote_ip.v;
  q.remote_mac = s.remote_mac;
  q.udp_port = s.udp_port;
  q.pd = s.pd;
  ++bounded_;
  const host::QpSetupResult r = node(s.node)->qp_setup_driver->create(q, s.timeout_us * 1000000ull);
  --bounded_;
  check_qp_setup(loc, "create", s.qp, r, s.expect_status, s.expect_state);
}

// qp_release: a release command (not for a QP the driver uses); status
// and state checked.
void System::handle(const QpReleaseStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  if (s.expect_status == qps::status::kSuccess)  // PG332: the QP carries no traffic when it is deleted
    for (const auto& c : n->driver->connections())
      if (c->qpn == s.qp && c->state != host::VerbsState::Reset)
        return fail(loc, fmt::format("QP{} of {} is a connection of the driver: not released", s.qp, s.node));
  ++bounded_;
  const host::QpSetupResult r = n->qp_setup_driver->release(s.qp, s.timeout_us * 1000000ull);
  --bounded_;
  check_qp_setup(loc, "release", s.qp, r, s.expect_status, s.expect_state);
}

// qp_adopt: a named connection from two ends, each set up by the QP-setup
// block or by the driver. The FSM ends first (their QPs exist), then a
// driver end set up to match. Split (model/system/split.h): each process
// takes its own end; the second end's process waits for the first's to say
// it is done (the values traded carry nothing: the parser resolved both
// ends' QPNs and PSNs, the peer's MR record came with its register_mr), so
// the second end starts at the same instant as in one process.
void System::handle(const QpAdoptStep& s, const SourceLoc&, Group*) {
  const bool client_first = s.client.fsm || !s.server.fsm;
  const QpAdoptStep::End& first = client_first ? s.client : s.server;
  const QpAdoptStep::End& second = client_first ? s.server : s.client;
  Conn k{s.client.node, s.server.node, nullptr, nullptr};
  auto take = [&](const QpAdoptStep::End& e, const QpAdoptStep::End& pe) {
    Node* me = node(e.node);
    const host::Mr* mine = e.mr.empty() ? nullptr : me->driver->find_mr(e.mr);
    const host::Mr* theirs = pe.mr.empty() ? nullptr : find_mr_any(pe.node, pe.mr);
    const roce::cm::MrInfo peer_info = theirs ? roce::cm::MrInfo{theirs->va, theirs->rkey, theirs->length}
                                              : roce::cm::MrInfo{};
    (&e == &s.client ? k.c : k.s) = &adopt_end(*me, e, mine, peer_info, node(pe.node)->cfg, pe);
  };
  if (local(first.node)) take(first, second);
  if (split()) split_exchange({0}, s.client.node, s.server.node);
  if (local(second.node)) take(second, first);
  monitor_connection(k.client, k.c ? k.c->qpn : s.client.qp, k.server, k.s ? k.s->qpn : s.server.qp);
  auto track = [&](const std::string& n, const host::Connection& c) {
    return scoreboard.add_qp(n, c.qpn, c.rq_base, c.params.rq_depth, c.params.rq_elem_bytes);
  };
  if (k.c) k.sb_c = track(k.client, *k.c);
  if (k.s) k.sb_s = track(k.server, *k.s);
  if (k.c && k.s) scoreboard.pair_qps(k.sb_c, k.sb_s);
  conns_[s.name] = k;
}

}  // namespace ernic
