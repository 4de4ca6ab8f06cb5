// model/system: `connect` with `batch: N` (scenarios/README.md): N CM
// connections <name>1..<name>N set up at once through the drivers' batched
// CM (model/host/driver_cm_batch.cpp), each tracked by the scoreboard as a
// single connect's.
#include <fmt/format.h>

#include "model/system/system.h"

namespace ernic {

using namespace sc_core;

void System::connect_batch(const ConnectStep& s, const SourceLoc& loc, const host::QpParams& cp,
                           const host::QpParams& sp) {
  Node* cn = node(s.client);
  Node* sn = node(s.server);
  const roce::IpAddr server = s.ip_version == 6 && sn->cfg.ip6 ? roce::IpAddr(*sn->cfg.ip6) : roce::IpAddr(sn->cfg.ip);
  const std::vector<host::Connection*> servers = sn->driver->listen_batch(sp, s.batch);
  const std::vector<host::Connection*> clients = cn->driver->connect_batch(server, cp, s.batch);
  // Each server QP is RTS once its ReadyToUse has arrived; each resends
  // its ConnectReply while none comes (Driver::await_rtu, as a single connect).
  for (host::Connection* k : servers) sn->driver->await_rtu(*k);
  for (uint32_t i = 0; i < s.batch; ++i) {
    host::Connection* c = clients[i];
    // The server end that answered this client's ConnectRequest.
    host::Connection* k = nullptr;
    for (host::Connection* x : servers)
      if (x->remote_comm_id == c->local_comm_id && x->qpn == c->remote_qpn) k = x;
    const std::string name = s.name + std::to_string(i + 1);
    if (!k || k->state != host::VerbsState::Rts)
      return fail(loc, fmt::format("connect '{}': the server {} QP{} did not reach RTS", name, s.server,
                                   k ? k->qpn : c->remote_qpn));
    Conn cc{s.client, s.server, c, k};
    cc.sb_c = scoreboard.add_qp(s.client, c->qpn, c->rq_base, c->params.rq_depth, c->params.rq_elem_bytes);
    cc.sb_s = scoreboard.add_qp(s.server, k->qpn, k->rq_base, k->params.rq_depth, k->params.rq_elem_bytes);
    scoreboard.pair_qps(cc.sb_c, cc.sb_s);
    conns_[name] = cc;
  }
}

}  // namespace ernic
