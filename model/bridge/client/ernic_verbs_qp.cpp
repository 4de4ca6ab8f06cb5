// model/bridge/client: the verbs layer's QPs (ernic_verbs.h): creation
// (RC only, a QPN reserved in the driver), the state transitions, whose
// RTS step is the driver's prepare + establish, and the way down (the
// driver's destroy_qp: PG332's QP deletion).
#include <algorithm>
#include <cstdio>

#include "model/bridge/client/ernic_verbs_impl.h"
#include "model/regs/wqe.h"

using namespace ernic;
using namespace ernic::verbs;

namespace {

// What ERNIC has fixed: 16 outstanding requests per QP (PG332), TTL 64
// (the driver's QPADVCONFi).
constexpr uint8_t kOutstanding = 16;
constexpr uint8_t kTtl = 64;
namespace FLD = regs::fld;

const char* state_name(int s) {
  static const char* const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN"};
  return s >= 0 && s <= IBV_QPS_UNKNOWN ? names[s] : "?";
}

std::string hexs(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

// The QPN: the lowest one nobody holds, reserved in the driver until RTS.
uint32_t reserve_qpn(ibv_context* c) {
  const uint32_t top = c->drv->config().num_qp;
  for (uint32_t n = 2; n <= top; ++n)
    if (c->drv->qpn_holder(n) == host::Driver::QpnHolder::none) {
      c->drv->reserve_qpn(n, true);
      return n;
    }
  return 0;
}

// Checks one optional attribute against the only value ERNIC has.
bool fixed(ibv_context* c, int mask, int bit, unsigned got, unsigned want, const char* name, const char* why,
           int* rc) {
  if (!(mask & bit) || got == want) return true;
  *rc = fail(c, EINVAL, std::string("ibv_modify_qp: ") + name + " " + std::to_string(got) + ": ERNIC has " +
                            std::to_string(want) + " (" + why + ")");
  return false;
}

// Checks one optional attribute that goes into a TIMEOUTCONFi field: any
// value the field holds.
bool in_field(ibv_context* c, int mask, int bit, unsigned got, regs::Field f, const char* name, const char* field,
              int* rc) {
  if (!(mask & bit) || got <= f.max()) return true;
  *rc = fail(c, EINVAL, std::string("ibv_modify_qp: ") + name + " " + std::to_string(got) + " does not fit " + field +
                            " (0.." + std::to_string(f.max()) + ")");
  return false;
}

int check_av(ibv_context* c, Qp& q, const ibv_ah_attr& ah) {
  const std::string p = "ibv_modify_qp: ah_attr.";
  if (!ah.is_global) return fail(c, EINVAL, p + "is_global 0: RoCEv2 addresses the peer by its GID (grh.dgid)");
  if (ah.dlid || ah.sl || ah.src_path_bits || ah.static_rate)
    return fail(c, EINVAL, p + "dlid / sl / src_path_bits / static_rate must be 0 (RoCE: no LIDs, no SL, no rate limit)");
  if (ah.port_num > 1) return fail(c, EINVAL, p + "port_num " + std::to_string(ah.port_num) + ": ERNIC has port 1");
  if (ah.grh.sgid_index || ah.grh.flow_label || ah.grh.traffic_class)
    return fail(c, EINVAL, p + "grh.sgid_index / flow_label / traffic_class must be 0 (the driver programs "
                               "traffic class 0 and the node's own address)");
  if (ah.grh.hop_limit != 0 && ah.grh.hop_limit != kTtl)
    return fail(c, EINVAL, p + "grh.hop_limit " + std::to_string(ah.grh.hop_limit) +
                               ": the driver programs TTL 64 (give 64, or 0 for it)");
  roce::IpAddr ip;
  if (!gid_to_ip(ah.grh.dgid, &ip)) return fail(c, EINVAL, p + "grh.dgid :: is no address");
  if (!c->neighbours.count(ip))
    return fail(c, EINVAL, "ibv_modify_qp: no MAC address for " + ip.str() +
                               ": ernic_ibv_add_neighbour (or ERNIC_PEER_IP / ERNIC_PEER_MAC in the environment)");
  q.dest = ip;
  return 0;
}

ibv_mtu mtu_enum(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    default: return IBV_MTU_4096;
  }
}

// The NIC's QP: the driver allocates its queues and programs it towards
// the peer (PG332's QP programming, QPCONFi enable last).
int program(ibv_context* c, Qp& q) {
  return guarded(c, EINVAL, [&]() -> int {
    c->drv->reserve_qpn(q.pub.qp_num, false);
    const host::QpParams p = qp_params(q);
    try {
      host::Connection& conn = c->drv->prepare(p);
      c->drv->establish(conn, q.attr.dest_qp_num & 0xFFFFFF, q.attr.rq_psn & 0xFFFFFF, q.dest, roce::cm::MrInfo{});
      q.conn = &conn;
    } catch (...) {
      if (!q.conn && c->drv->qpn_holder(q.pub.qp_num) == host::Driver::QpnHolder::none)
        c->drv->reserve_qpn(q.pub.qp_num, true);
      throw;
    }
    return 0;
  });
}

// Down to RESET: the NIC's QP (if programmed) deleted by the driver
// (PG332 ch.6 without CM: once idle, or at once when fatal, disabled and
// its pointers zeroed; the next RTS programs and enables it afresh); its
// WRs are dropped without completions (verbs).
int take_down(ibv_context* c, Qp& q) {
  if (q.conn) {
    const int rc = guarded(c, EBUSY, [&]() -> int {
      c->drv->destroy_qp(*q.conn);
      return 0;
    });
    if (rc) return rc;
    q.conn = nullptr;
    c->drv->reserve_qpn(q.pub.qp_num, true);
  }
  for (const SendEntry& e : q.outstanding)
    if (e.mr) --e.mr->inflight;
  for (const RecvEntry& r : q.recvs)
    if (r.mr) --r.mr->inflight;
  q.outstanding.clear();
  q.recvs.clear();
  q.error_seen = false;
  return 0;
}

}  // namespace

namespace ernic::verbs {

void reset_attrs(Qp& q) {
  const host::QpParams d;  // the driver's TIMEOUTCONFi defaults
  q.attr = ibv_qp_attr{};
  q.attr.qp_state = q.attr.cur_qp_state = IBV_QPS_RESET;
  q.attr.cap = q.init.cap;
  q.attr.path_mtu = IBV_MTU_4096;
  q.attr.timeout = uint8_t(d.ack_timeout);
  q.attr.retry_cnt = uint8_t(d.retry_cnt);
  q.attr.rnr_retry = uint8_t(d.rnr_retry_cnt);
  q.attr.min_rnr_timer = uint8_t(d.rnr_timer);
  q.attr.max_rd_atomic = q.attr.max_dest_rd_atomic = kOutstanding;
}

host::QpParams qp_params(const Qp& q) {
  host::QpParams p;
  p.pmtu = 128u << q.attr.path_mtu;
  p.sq_depth = q.sq_depth;
  p.rq_depth = q.rq_depth;
  p.rq_elem_bytes = q.rq_elem_bytes;
  p.qpn = q.pub.qp_num;
  p.start_psn = q.attr.sq_psn & 0xFFFFFF;
  p.pd = q.pd->pub.handle;  // PDi: the QP's protection domain
  p.ack_timeout = q.attr.timeout;
  p.retry_cnt = q.attr.retry_cnt;
  p.rnr_retry_cnt = q.attr.rnr_retry;
  p.rnr_timer = q.attr.min_rnr_timer;
  return p;
}

}  // namespace ernic::verbs

extern "C" {

struct ibv_qp* ibv_create_qp(struct ibv_pd* pdp, struct ibv_qp_init_attr* ia) {
  Pd* pd = find<Pd>(pdp);
  if (!pd) return errno = EINVAL, nullptr;
  ibv_context* c = pd->ctx;
  if (!ia) return fail(c, EINVAL, "ibv_create_qp: no attributes"), nullptr;
  if (ia->qp_type != IBV_QPT_RC)
    return fail(c, EINVAL, "ibv_create_qp: QP type " + std::to_string(int(ia->qp_type)) +
                               ": ERNIC's data QPs are RC (IBV_QPT_RC); UD is QP1's, for CM only"),
           nullptr;
  if (ia->srq) return fail(c, EINVAL, "ibv_create_qp: ERNIC has no shared receive queue (srq must be NULL)"), nullptr;
  Cq* scq = find<Cq>(ia->send_cq);
  Cq* rcq = find<Cq>(ia->recv_cq);
  if (!scq || !rcq || scq->ctx != c || rcq->ctx != c)
    return fail(c, EINVAL, "ibv_create_qp: send_cq and recv_cq must be CQs of this context"), nullptr;
  const ibv_qp_cap& cap = ia->cap;
  if (cap.max_send_wr < 1 || cap.max_send_wr > 65534 || cap.max_recv_wr < 1 || cap.max_recv_wr > 65535)
    return fail(c, EINVAL, "ibv_create_qp: max_send_wr 1..65534 and max_recv_wr 1..65535"), nullptr;
  if (cap.max_send_sge > 1 || cap.max_recv_sge > 1)
    return fail(c, EINVAL, "ibv_create_qp: max_send_sge / max_recv_sge " + std::to_string(cap.max_send_sge) + " / " +
                               std::to_string(cap.max_recv_sge) + ": ERNIC's WQE and RQ element have one buffer (1)"),
           nullptr;
  if (cap.max_inline_data > pg332::kInlineMax)
    return fail(c, EINVAL, "ibv_create_qp: max_inline_data " + std::to_string(cap.max_inline_data) +
                               ": ERNIC carries at most 16 bytes in a WQE (SENDs only)"),
           nullptr;
  uint32_t qpn = 0;
  if (guarded(c, EIO, [&]() -> int {
        qpn = reserve_qpn(c);
        return 0;
      }))
    return nullptr;
  if (!qpn) return fail(c, ENOMEM, "ibv_create_qp: every QPN of the NIC is in use (ERNIC_NUM_QP)"), nullptr;
  Qp& q = adopt(c, std::make_unique<Qp>());
  q.pd = pd;
  q.scq = scq;
  q.rcq = rcq;
  q.init = *ia;
  q.sq_depth = std::max<uint32_t>(cap.max_send_wr + 1, 16);
  q.rq_depth = std::max<uint32_t>(cap.max_recv_wr, 16);
  q.rq_elem_bytes = c->rq_elem_bytes;
  q.next_wrid = c->wrid_start;
  reset_attrs(q);
  q.pub.context = c;
  q.pub.qp_context = ia->qp_context;
  q.pub.pd = pdp;
  q.pub.send_cq = ia->send_cq;
  q.pub.recv_cq = ia->recv_cq;
  q.pub.handle = c->next_handle++;
  q.pub.qp_num = qpn;
  q.pub.state = IBV_QPS_RESET;
  q.pub.qp_type = IBV_QPT_RC;
  enroll(&q.pub, &q);
  c->qps.push_back(&q);
  ++pd->users;
  ++scq->users;
  ++rcq->users;
  return &q.pub;
}

int ibv_destroy_qp(struct ibv_qp* qpp) {
  Qp* q = find<Qp>(qpp);
  if (!q) return errno = EINVAL, EINVAL;
  ibv_context* c = q->ctx;
  if (const int rc = take_down(c, *q)) return rc;
  c->drv->reserve_qpn(q->pub.qp_num, false);
  --q->pd->users;
  --q->scq->users;
  --q->rcq->users;
  c->qps.erase(std::remove(c->qps.begin(), c->qps.end(), q), c->qps.end());
  destroy(c, q, qpp);
  return 0;
}

int ibv_modify_qp(struct ibv_qp* qpp, struct ibv_qp_attr* a, int mask) {
  Qp* qp = find<Qp>(qpp);
  if (!qp) return errno = EINVAL, EINVAL;
  Qp& q = *qp;
  ibv_context* c = q.ctx;
  if (!a) return fail(c, EINVAL, "ibv_modify_qp: no attributes");
  if (c->dead) return fail(c, EIO, "the bridge session failed earlier: " + c->last_error);
  const int cur = q.pub.state;
  const int to = (mask & IBV_QP_STATE) ? int(a->qp_state) : cur;
  if ((mask & IBV_QP_CUR_STATE) && int(a->cur_qp_state) != cur)
    return fail(c, EINVAL, std::string("ibv_modify_qp: cur_qp_state ") + state_name(a->cur_qp_state) + ", the QP is " +
                               state_name(cur));
  int allowed = 0, required = 0;
  if (to == IBV_QPS_RESET) {
    allowed = 0;
  } else if ((cur == IBV_QPS_RESET || cur == IBV_QPS_INIT) && to == IBV_QPS_INIT) {
    allowed = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  } else if (cur == IBV_QPS_INIT && to == IBV_QPS_RTR) {
    required = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    allowed = required | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS;
  } else if (cur == IBV_QPS_RTR && to == IBV_QPS_RTS) {
    required = IBV_QP_SQ_PSN;
    allowed = required | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
              IBV_QP_ACCESS_FLAGS;
  } else if (cur == IBV_QPS_RTS && to == IBV_QPS_RTS) {
    allowed = 0;
  } else {
    return fail(c, EINVAL, std::string("ibv_modify_qp: ") + state_name(cur) + " -> " + state_name(to) +
                               ": this library moves RESET -> INIT -> RTR -> RTS and any state to RESET (ERNIC has no "
                               "SQD, and a QP reaches ERR only through an error completion)");
  }
  const int extra = mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE | allowed);
  if (extra)
    return fail(c, EINVAL, std::string("ibv_modify_qp: attribute mask bits ") + hexs(unsigned(extra)) + " for " +
                               state_name(cur) + " -> " + state_name(to) +
                               " (ERNIC has no register for them, or they belong to another transition)");
  if ((mask & required) != required)
    return fail(c, EINVAL, std::string("ibv_modify_qp: ") + state_name(cur) + " -> " + state_name(to) +
                               " needs mask bits " + hexs(unsigned(required & ~mask)));
  int rc = 0;
  if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
    return fail(c, EINVAL, "ibv_modify_qp: pkey_index " + std::to_string(a->pkey_index) + ": ERNIC has the default P_Key (index 0)");
  if ((mask & IBV_QP_PORT) && a->port_num != 1)
    return fail(c, EINVAL, "ibv_modify_qp: port_num " + std::to_string(a->port_num) + ": ERNIC has port 1");
  const unsigned acc_known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const unsigned acc_need = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if ((mask & IBV_QP_ACCESS_FLAGS) && ((a->qp_access_flags & ~acc_known) || (a->qp_access_flags & acc_need) != acc_need))
    return fail(c, EINVAL, "ibv_modify_qp: qp_access_flags " + hexs(a->qp_access_flags) +
                               ": an ERNIC QP admits remote writes and reads, the MR's access decides (give "
                               "IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, LOCAL_WRITE optional; no atomics)");
  if (!fixed(c, mask, IBV_QP_MAX_DEST_RD_ATOMIC, a->max_dest_rd_atomic, kOutstanding, "max_dest_rd_atomic",
             "16 requests outstanding per QP, fixed", &rc) ||
      !fixed(c, mask, IBV_QP_MAX_QP_RD_ATOMIC, a->max_rd_atomic, kOutstanding, "max_rd_atomic",
             "16 requests outstanding per QP, fixed", &rc) ||
      !in_field(c, mask, IBV_QP_MIN_RNR_TIMER, a->min_rnr_timer, FLD::TIMEOUTCONFi_RNR_TIMER, "min_rnr_timer",
                "TIMEOUTCONFi[20:16], the RNR timer code of the RNR NAKs the QP sends", &rc) ||
      !in_field(c, mask, IBV_QP_TIMEOUT, a->timeout, FLD::TIMEOUTCONFi_ACK_TIMEOUT, "timeout",
                "TIMEOUTCONFi[5:0], the ACK timeout exponent (4.096 us x 2^n; 0: none)", &rc) ||
      !in_field(c, mask, IBV_QP_RETRY_CNT, a->retry_cnt, FLD::TIMEOUTCONFi_RETRY_CNT, "retry_cnt",
                "TIMEOUTCONFi[10:8], the retry count", &rc) ||
      !in_field(c, mask, IBV_QP_RNR_RETRY, a->rnr_retry, FLD::TIMEOUTCONFi_RNR_RETRY_CNT, "rnr_retry",
                "TIMEOUTCONFi[13:11], the RNR retry count (7: for ever)", &rc))
    return rc;
  if (mask & IBV_QP_PATH_MTU) {
    if (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096)
      return fail(c, EINVAL, "ibv_modify_qp: path_mtu " + std::to_string(int(a->path_mtu)) + " (IBV_MTU_256..IBV_MTU_4096)");
  }
  if ((mask & IBV_QP_DEST_QPN) && (a->dest_qp_num < 2 || a->dest_qp_num > 0xFFFFFF))
    return fail(c, EINVAL, "ibv_modify_qp: dest_qp_num " + std::to_string(a->dest_qp_num) + " (an RC QP: 2..2^24-1)");
  if ((mask & IBV_QP_RQ_PSN) && a->rq_psn > 0xFFFFFF)
    return fail(c, EINVAL, "ibv_modify_qp: rq_psn " + hexs(a->rq_psn) + " is wider than 24 bits");
  if ((mask & IBV_QP_SQ_PSN) && a->sq_psn > 0xFFFFFF)
    return fail(c, EINVAL, "ibv_modify_qp: sq_psn " + hexs(a->sq_psn) + " is wider than 24 bits");
  if ((mask & IBV_QP_AV) && (rc = check_av(c, q, a->ah_attr))) return rc;

  if (to == IBV_QPS_RESET) {
    if ((rc = take_down(c, q))) return rc;
    reset_attrs(q);
  }
  if (mask & IBV_QP_PATH_MTU) q.attr.path_mtu = a->path_mtu;
  if (mask & IBV_QP_DEST_QPN) q.attr.dest_qp_num = a->dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) q.attr.rq_psn = a->rq_psn;
  if (mask & IBV_QP_SQ_PSN) q.attr.sq_psn = a->sq_psn;
  if (mask & IBV_QP_AV) q.attr.ah_attr = a->ah_attr;
  if (mask & IBV_QP_ACCESS_FLAGS) q.attr.qp_access_flags = a->qp_access_flags;
  if (mask & IBV_QP_MIN_RNR_TIMER) q.attr.min_rnr_timer = a->min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) q.attr.timeout = a->timeout;
  if (mask & IBV_QP_RETRY_CNT) q.attr.retry_cnt = a->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) q.attr.rnr_retry = a->rnr_retry;
  if (to == IBV_QPS_RTS && cur == IBV_QPS_RTR && (rc = program(c, q))) return rc;
  q.attr.qp_state = q.attr.cur_qp_state = ibv_qp_state(to);
  q.pub.state = ibv_qp_state(to);
  return 0;
}

int ibv_query_qp(struct ibv_qp* qpp, struct ibv_qp_attr* a, int /*attr_mask*/, struct ibv_qp_init_attr* ia) {
  Qp* q = find<Qp>(qpp);
  if (!q) return errno = EINVAL, EINVAL;
  if (!a || !ia) return fail(q->ctx, EINVAL, "ibv_query_qp: attr and init_attr are needed");
  *a = q->attr;
  a->qp_state = a->cur_qp_state = q->pub.state;
  a->path_mtu = q->conn ? mtu_enum(q->conn->params.pmtu) : q->attr.path_mtu;
  a->cap = q->init.cap;
  a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | (q->attr.qp_access_flags & IBV_ACCESS_LOCAL_WRITE);
  a->ah_attr.is_global = 1;
  a->ah_attr.port_num = 1;
  a->ah_attr.grh.hop_limit = kTtl;
  a->port_num = 1;
  a->pkey_index = 0;
  a->max_rd_atomic = a->max_dest_rd_atomic = kOutstanding;
  if (q->conn) {  // what the NIC was programmed with
    a->dest_qp_num = q->conn->remote_qpn;
    a->rq_psn = q->conn->remote_psn;
    a->sq_psn = q->conn->local_psn;
  }
  *ia = q->init;
  return 0;
}

}  // extern "C"
