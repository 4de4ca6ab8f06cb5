// model/bridge/client: ernic_rdma_connect (ernic_verbs.h): a verbs QP
// connected by CM over QP1, the driver's Driver::connect doing the
// ConnectRequest / ConnectReply / ReadyToUse exchange and the QP
// programming, as the simulator's built-in host does.
#include <cstring>

#include "model/bridge/client/ernic_verbs_impl.h"

using namespace ernic;
using namespace ernic::verbs;

namespace {

// The address of a dotted IPv4 or an IPv6 string, or false.
bool parse_ip(const char* s, roce::IpAddr* out) {
  if (!s) return false;
  const auto a = roce::IpAddr::parse(s);
  if (a) *out = *a;
  return a.has_value();
}


// Checks what ibv_create_qp does not: the parameters of the connection.
int check_param(ibv_context* c, Pd* pd, const ernic_rdma_conn_param* cp, roce::IpAddr* server, const host::Mr** adv) {
  const std::string p = "ernic_rdma_connect: ";
  if (!cp) return fail(c, EINVAL, p + "no connection parameters");
  if (!parse_ip(cp->server_ip, server))
    return fail(c, EINVAL, p + "server_ip '" + (cp->server_ip ? cp->server_ip : "(null)") +
                               "' is no IPv4 or IPv6 address");
  if (!c->neighbours.count(*server))
    return fail(c, EINVAL, p + "no MAC address for " + server->str() +
                               ": ernic_ibv_add_neighbour (or ERNIC_PEER_IP / ERNIC_PEER_MAC in the environment)");
  if (cp->path_mtu < IBV_MTU_256 || cp->path_mtu > IBV_MTU_4096)
    return fail(c, EINVAL, p + "path_mtu " + std::to_string(int(cp->path_mtu)) + " (IBV_MTU_256..IBV_MTU_4096)");
  if (cp->sq_psn != ERNIC_RDMA_PSN_AUTO && cp->sq_psn > 0xFFFFFF)
    return fail(c, EINVAL,
                p + "sq_psn " + std::to_string(cp->sq_psn) + " is wider than 24 bits (or ERNIC_RDMA_PSN_AUTO)");
  *adv = nullptr;
  if (cp->advertise) {
    Mr* m = find<Mr>(cp->advertise);
    if (!m || m->ctx != c || m->pd != pd || !m->remote)
      return fail(c, EINVAL, p + "advertise is not an MR of this PD with remote access (the NIC knows no other)");
    *adv = c->drv->find_mr(m->name);
    if (!*adv) return fail(c, EINVAL, p + "the driver has no MR '" + m->name + "'");
  }
  return 0;
}

// The QP as ibv_modify_qp INIT, RTR, RTS would have left it, from what the
// driver connected.
void connected(Qp& q, host::Connection& conn, const roce::IpAddr& server, ibv_mtu mtu) {
  q.conn = &conn;
  q.dest = server;
  q.attr.path_mtu = mtu;
  q.attr.dest_qp_num = conn.remote_qpn;
  q.attr.rq_psn = conn.remote_psn;
  q.attr.sq_psn = conn.local_psn;
  q.attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  q.attr.ah_attr = ibv_ah_attr{};
  q.attr.ah_attr.is_global = 1;
  q.attr.ah_attr.port_num = 1;
  q.attr.ah_attr.grh.hop_limit = 64;
  const roce::Ipv6Addr gid = server.gid();
  std::memcpy(q.attr.ah_attr.grh.dgid.raw, gid.b.data(), 16);
  q.attr.port_num = 1;
  q.attr.qp_state = q.attr.cur_qp_state = IBV_QPS_RTS;
  q.pub.state = IBV_QPS_RTS;
}

}  // namespace

extern "C" struct ibv_qp* ernic_rdma_connect(struct ibv_pd* pdp, struct ibv_qp_init_attr* ia,
                                             const struct ernic_rdma_conn_param* cp, struct ernic_rdma_peer* peer) {
  Pd* pd = find<Pd>(pdp);
  if (!pd) return errno = EINVAL, nullptr;
  ibv_context* c = pd->ctx;
  if (c->dead) return fail(c, EIO, "the bridge session failed earlier: " + c->last_error), nullptr;
  roce::IpAddr server;
  const host::Mr* adv = nullptr;
  if (check_param(c, pd, cp, &server, &adv)) return nullptr;
  ibv_qp* qpp = ibv_create_qp(pdp, ia);  // the QP's checks, its QPN reserved
  if (!qpp) return nullptr;
  Qp& q = *find<Qp>(qpp);
  q.attr.path_mtu = cp->path_mtu;
  if (cp->sq_psn != ERNIC_RDMA_PSN_AUTO) q.attr.sq_psn = cp->sq_psn;
  host::QpParams p = qp_params(q);
  if (cp->sq_psn == ERNIC_RDMA_PSN_AUTO) p.start_psn.reset();  // drawn from the driver's seed
  p.mr = adv;
  int err = 0;
  std::string why;
  try {
    c->drv->reserve_qpn(q.pub.qp_num, false);
    host::Connection& conn = c->drv->connect(server, p, cp->port);
    connected(q, conn, server, cp->path_mtu);
  } catch (const bridge::BridgeBusError& e) {
    c->dead = true;
    err = EIO;
    why = e.what();
  } catch (const host::CmError& e) {  // the server refused, or never answered
    err = e.kind == host::CmError::rejected ? ECONNREFUSED : ETIMEDOUT;
    why = std::string("ernic_rdma_connect: ") + e.what();
  } catch (const host::DriverError& e) {
    err = EINVAL;
    why = std::string("ernic_rdma_connect: ") + e.what();
  } catch (const std::exception& e) {
    err = EIO;
    why = std::string("ernic_rdma_connect: ") + e.what();
  }
  if (err) {
    ibv_destroy_qp(qpp);  // its QPN is free again
    fail(c, err, why);
    return nullptr;
  }
  if (peer) {
    *peer = ernic_rdma_peer{};
    peer->qp_num = q.conn->remote_qpn;
    peer->psn = q.conn->remote_psn;
    peer->remote_addr = q.conn->remote_mr.va;
    peer->rkey = q.conn->remote_mr.rkey;
    peer->length = q.conn->remote_mr.length;
  }
  return qpp;
}
