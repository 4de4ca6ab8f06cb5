// model/system: the QP-setup offload's steps (model/qp_setup/qp_setup_fsm.h):
// qp_setup, qp_release (the block's commands through the node's QP-setup
// driver, their status and state checked), qp_adopt (a connection from the
// QPs the block set up).
#include "model/system/system.h"

#include <fmt/format.h>

namespace ernic {

using namespace sc_core;

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
// block or by the driver.
void System::handle(const QpAdoptStep& s, const SourceLoc&, Group*) {
  Node* cn = node(s.client.node);
  Node* sn = node(s.server.node);
  auto mr_info = [](Node* n, const std::string& mr) {
    const host::Mr* m = mr.empty() ? nullptr : n->driver->find_mr(mr);
    return std::make_pair(m, m ? roce::cm::MrInfo{m->va, m->rkey, m->length} : roce::cm::MrInfo{});
  };
  const auto [cmr, cinfo] = mr_info(cn, s.client.mr);
  const auto [smr, sinfo] = mr_info(sn, s.server.mr);
  // The FSM ends first (their QPs exist), then a driver end set up to match.
  auto take = [&](Node* me, const QpAdoptStep::End& e, const host::Mr* mine, const roce::cm::MrInfo& peer_info,
                  Node* peer, const QpAdoptStep::End& pe) -> host::Connection& {
    if (e.fsm) return me->qp_setup_driver->adopt(e.qp, peer_info, mine);
    host::QpParams p;
    p.qpn = e.qp;
    p.start_psn = e.psn;
    p.mr = mine;
    if (peer->cfg.qp_setup_fsm) p.pmtu = peer->cfg.qp_setup_fsm->pmtu;
    host::Connection& c = me->driver->prepare(p);
    me->driver->establish(c, pe.qp, e.remote_psn, peer->cfg.ip, peer_info);
    return c;
  };
  Conn k{s.client.node, s.server.node, nullptr, nullptr};
  if (s.client.fsm || !s.server.fsm) {
    k.c = &take(cn, s.client, cmr, sinfo, sn, s.server);
    k.s = &take(sn, s.server, smr, cinfo, cn, s.client);
  } else {
    k.s = &take(sn, s.server, smr, cinfo, cn, s.client);
    k.c = &take(cn, s.client, cmr, sinfo, sn, s.server);
  }
  monitor_connection(k.client, k.c->qpn, k.server, k.s->qpn);
  k.sb_c = scoreboard.add_qp(k.client, k.c->qpn, k.c->rq_base, k.c->params.rq_depth, k.c->params.rq_elem_bytes);
  k.sb_s = scoreboard.add_qp(k.server, k.s->qpn, k.s->rq_base, k.s->params.rq_depth, k.s->params.rq_elem_bytes);
  scoreboard.pair_qps(k.sb_c, k.sb_s);
  conns_[s.name] = k;
}

}  // namespace ernic
