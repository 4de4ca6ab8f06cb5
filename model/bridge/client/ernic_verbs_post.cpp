// model/bridge/client: posting work (ernic_verbs.h): send WRs become the
// driver's WQEs (Driver::post writes them into the SQ and rings SQPIi),
// receive WRs wait in the library for the RQ elements the NIC fills.
#include <algorithm>
#include <cstring>

#include "model/bridge/client/ernic_verbs_impl.h"
#include "model/regs/pg332_limits.h"
#include "model/regs/wqe.h"

using namespace ernic;
using namespace ernic::verbs;
using pg332::WqeOpcode;

namespace {

struct OpMap {
  WqeOpcode wqe;
  ibv_wc_opcode wc;
};

bool map_opcode(int op, OpMap* m) {
  switch (op) {
    case IBV_WR_RDMA_WRITE: *m = {WqeOpcode::write, IBV_WC_RDMA_WRITE}; return true;
    case IBV_WR_RDMA_WRITE_WITH_IMM: *m = {WqeOpcode::write_imm, IBV_WC_RDMA_WRITE}; return true;
    case IBV_WR_SEND: *m = {WqeOpcode::send, IBV_WC_SEND}; return true;
    case IBV_WR_SEND_WITH_IMM: *m = {WqeOpcode::send_imm, IBV_WC_SEND}; return true;
    case IBV_WR_SEND_WITH_INV: *m = {WqeOpcode::send_inv, IBV_WC_SEND}; return true;
    case IBV_WR_RDMA_READ: *m = {WqeOpcode::read, IBV_WC_RDMA_READ}; return true;
    default: return false;
  }
}

// A 32-bit value stored in network byte order, as a number.
uint32_t from_be(uint32_t stored) {
  const auto* b = reinterpret_cast<const uint8_t*>(&stored);
  return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3];
}

// The MR of lkey in q's PD that holds [addr, +len), or why not.
Mr* local_mr(ibv_context* c, const Qp& q, const ibv_sge& s, bool need_write, std::string* why) {
  auto it = c->by_lkey.find(s.lkey);
  if (it == c->by_lkey.end()) {
    *why = "lkey " + std::to_string(s.lkey) + " is no MR of this context";
    return nullptr;
  }
  Mr* m = it->second;
  if (m->pd != q.pd) {
    *why = "lkey " + std::to_string(s.lkey) + " belongs to another protection domain than the QP's";
    return nullptr;
  }
  const uint64_t base = reinterpret_cast<uintptr_t>(m->pub.addr);
  if (s.addr < base || s.addr - base > m->pub.length || s.length > m->pub.length - (s.addr - base)) {
    *why = "[addr, +" + std::to_string(s.length) + ") is outside the MR of lkey " + std::to_string(s.lkey);
    return nullptr;
  }
  if (need_write && !(m->access & IBV_ACCESS_LOCAL_WRITE)) {
    *why = "the MR of lkey " + std::to_string(s.lkey) + " has no IBV_ACCESS_LOCAL_WRITE";
    return nullptr;
  }
  return m;
}

// One send WR checked and turned into a WQE; 0 or the errno value.
int check_send(ibv_context* c, Qp& q, const ibv_send_wr& wr, size_t taken, SendEntry* e, host::Wqe* w) {
  const std::string p = "ibv_post_send: ";
  // The program's opcode as the int a C caller may have stored there: not
  // loaded as the enum (a value outside it, e.g. 99, is undefined to load
  // in C++; UBSan's enum check stops at it).
  int raw_op = 0;
  static_assert(sizeof(wr.opcode) == sizeof(raw_op), "ibv_wr_opcode is an int-sized enum");
  std::memcpy(&raw_op, &wr.opcode, sizeof raw_op);
  OpMap op;
  if (!map_opcode(raw_op, &op))
    return fail(c, EINVAL, p + "opcode " + std::to_string(raw_op) +
                               ": ERNIC's WQE opcodes are RDMA WRITE (with immediate), SEND (with immediate, with "
                               "invalidate) and RDMA READ; no atomics, memory windows, local invalidate or TSO");
  const unsigned known = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
  if (wr.send_flags & ~known)
    return fail(c, EINVAL, p + "send_flags " + std::to_string(wr.send_flags) +
                               ": ERNIC has no fence, solicited event or checksum offload (SIGNALED and INLINE only)");
  if (wr.num_sge != 1)
    return fail(c, EINVAL, p + "num_sge " + std::to_string(wr.num_sge) +
                               ": an ERNIC WQE has exactly one buffer (one SGE per WR)");
  if (!wr.sg_list) return fail(c, EINVAL, p + "num_sge 1 but sg_list is NULL");
  const ibv_sge& s = wr.sg_list[0];
  const bool send_kind = pg332::is_send(uint8_t(op.wqe));
  // PG332's unsupported lengths (model/regs/pg332_limits.h): the NIC
  // would not do what the WR asks.
  if (send_kind && s.length < pg332::kSendMinBytes)
    return fail(c, EINVAL, p + "a SEND of " + std::to_string(s.length) + " bytes: " + pg332::kSendZeroText);
  if (op.wqe == WqeOpcode::read && s.length <= pg332::kReadSmallMaxBytes)
    return fail(c, EINVAL, p + "an RDMA READ of " + std::to_string(s.length) + " bytes: " + pg332::kReadSmallText);
  if (s.length > pg332::kMaxMessageBytes)
    return fail(c, EINVAL, p + "a message of " + std::to_string(s.length) + " bytes: " + pg332::kMsg8mText);
  if (q.outstanding.size() + taken >= q.init.cap.max_send_wr)
    return fail(c, ENOMEM, p + "the send queue holds max_send_wr (" + std::to_string(q.init.cap.max_send_wr) +
                               ") WRs not yet completed");
  Mr* m = nullptr;
  uint64_t laddr = 0;
  if (wr.send_flags & IBV_SEND_INLINE) {
    if (!send_kind || s.length > q.init.cap.max_inline_data)
      return fail(c, EINVAL, p + "IBV_SEND_INLINE: ERNIC inlines SENDs of up to max_inline_data (" +
                                 std::to_string(q.init.cap.max_inline_data) + ") bytes only");
    laddr = dma_bus(c, reinterpret_cast<const void*>(uintptr_t(s.addr)), s.length);
    if (!laddr) return fail(c, EINVAL, p + "inline data is not in DMA memory of this context (ernic_ibv_alloc_buf)");
  } else {
    std::string why;
    m = local_mr(c, q, s, op.wqe == WqeOpcode::read, &why);
    if (!m) return fail(c, EINVAL, p + why);
    laddr = m->bus + (s.addr - reinterpret_cast<uintptr_t>(m->pub.addr));
  }
  w->opcode = uint8_t(op.wqe);
  w->laddr = laddr;
  w->length = s.length;
  if (!send_kind) {
    w->remote_va = wr.wr.rdma.remote_addr;
    w->rkey = wr.wr.rdma.rkey;
  }
  if (op.wqe == WqeOpcode::send_inv) w->rkey = wr.invalidate_rkey;
  if (op.wqe == WqeOpcode::write_imm || op.wqe == WqeOpcode::send_imm) w->immdt = from_be(wr.imm_data);
  e->wr_id = wr.wr_id;
  e->wqe_opcode = uint8_t(op.wqe);
  e->wc_opcode = op.wc;
  e->signaled = (wr.send_flags & IBV_SEND_SIGNALED) || q.init.sq_sig_all;
  e->length = s.length;
  e->mr = m;
  return 0;
}

}  // namespace

extern "C" {

int ibv_post_send(struct ibv_qp* qpp, struct ibv_send_wr* wr, struct ibv_send_wr** bad_wr) {
  if (bad_wr) *bad_wr = nullptr;
  Qp* qp = find<Qp>(qpp);
  if (!qp) {
    if (bad_wr) *bad_wr = wr;
    return errno = EINVAL, EINVAL;
  }
  Qp& q = *qp;
  ibv_context* c = q.ctx;
  auto refuse = [&](ibv_send_wr* at, int err) {
    if (bad_wr) *bad_wr = at;
    return err;
  };
  if (!wr) return refuse(wr, fail(c, EINVAL, "ibv_post_send: no WR"));
  if (c->dead) return refuse(wr, fail(c, EIO, "the bridge session failed earlier: " + c->last_error));
  if (q.pub.state != IBV_QPS_RTS && q.pub.state != IBV_QPS_ERR)
    return refuse(wr, fail(c, EINVAL, std::string("ibv_post_send: the QP is not in RTS (state ") +
                                          std::to_string(int(q.pub.state)) + ")"));
  std::vector<host::Wqe> wqes;
  std::vector<SendEntry> entries;
  ibv_send_wr* bad = nullptr;
  int err = 0;
  for (ibv_send_wr* p = wr; p; p = p->next) {  // a cycle ends at max_send_wr (ENOMEM)
    SendEntry e;
    host::Wqe w;
    if ((err = check_send(c, q, *p, entries.size(), &e, &w))) {
      bad = p;
      break;
    }
    e.wrid = w.wr_id = uint16_t(q.next_wrid + entries.size());
    entries.push_back(e);
    wqes.push_back(w);
  }
  if (q.pub.state == IBV_QPS_ERR) {  // verbs: a QP in ERR completes every WR with a flush error
    for (const SendEntry& e : entries) complete_send(q, e, IBV_WC_WR_FLUSH_ERR, 0);
  } else if (!wqes.empty()) {
    const int rc = guarded(c, EIO, [&]() -> int {
      c->drv->post(*q.conn, wqes, /*doorbell_each=*/false, /*ring=*/true);
      return 0;
    });
    if (rc) return refuse(wr, rc);
    q.next_wrid = uint16_t(q.next_wrid + entries.size());
    for (const SendEntry& e : entries) {
      if (e.mr) ++e.mr->inflight;
      q.outstanding.push_back(e);
    }
  }
  if (err) {
    errno = err;
    return refuse(bad, err);
  }
  return 0;
}

int ibv_post_recv(struct ibv_qp* qpp, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr) {
  if (bad_wr) *bad_wr = nullptr;
  Qp* qp = find<Qp>(qpp);
  if (!qp) {
    if (bad_wr) *bad_wr = wr;
    return errno = EINVAL, EINVAL;
  }
  Qp& q = *qp;
  ibv_context* c = q.ctx;
  int err = 0;
  ibv_recv_wr* bad = nullptr;
  std::vector<RecvEntry> entries;
  if (!wr) {
    err = fail(c, EINVAL, "ibv_post_recv: no WR");
  } else if (q.pub.state == IBV_QPS_RESET) {
    err = fail(c, EINVAL, "ibv_post_recv: the QP is in RESET");
    bad = wr;
  }
  for (ibv_recv_wr* p = err ? nullptr : wr; p; p = p->next) {
    RecvEntry r;
    r.wr_id = p->wr_id;
    if (p->num_sge < 0 || p->num_sge > 1) {
      err = fail(c, EINVAL, "ibv_post_recv: num_sge " + std::to_string(p->num_sge) +
                                ": an ERNIC RQ element is one buffer (0 or 1 SGE)");
    } else if (p->num_sge == 1 && !p->sg_list) {
      err = fail(c, EINVAL, "ibv_post_recv: num_sge 1 but sg_list is NULL");
    } else if (q.recvs.size() + entries.size() >= q.init.cap.max_recv_wr) {
      err = fail(c, ENOMEM, "ibv_post_recv: max_recv_wr (" + std::to_string(q.init.cap.max_recv_wr) +
                                ") receive WRs are waiting");
    } else if (p->num_sge == 1) {
      std::string why;
      r.mr = local_mr(c, q, p->sg_list[0], true, &why);
      if (!r.mr) err = fail(c, EINVAL, "ibv_post_recv: " + why);
      r.dst = reinterpret_cast<uint8_t*>(uintptr_t(p->sg_list[0].addr));
      r.length = p->sg_list[0].length;
    }
    if (err) {
      bad = p;
      break;
    }
    entries.push_back(r);
  }
  for (const RecvEntry& r : entries) {
    if (q.pub.state == IBV_QPS_ERR) {
      complete_recv(q, r, IBV_WC_WR_FLUSH_ERR, 0);
      continue;
    }
    if (r.mr) ++r.mr->inflight;
    q.recvs.push_back(r);
  }
  if (err) {
    if (bad_wr) *bad_wr = bad;
    errno = err;
  }
  return err;
}

}  // extern "C"
