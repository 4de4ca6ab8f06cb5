// model/bridge/client: completions (ernic_verbs.h): the software CQs, the
// completion channels, and how finished work reaches them: the send side
// from the driver's poll of each QP's hardware CQ (its 16-bit WRIDs matched
// to the posted WRs, in order), the receive side from the driver's view of
// each QP's RQ (copied into the receive WRs waiting in the library).
#include <algorithm>
#include <cstring>

#include "model/bridge/client/ernic_verbs_impl.h"
#include "model/bridge/client/ernic_verbs_status.h"

using namespace ernic;
using namespace ernic::verbs;

namespace ernic::verbs {

void complete_send(Qp& q, const SendEntry& e, ibv_wc_status st, uint32_t vendor_err) {
  ibv_wc wc{};
  wc.wr_id = e.wr_id;
  wc.status = st;
  wc.opcode = e.wc_opcode;
  wc.vendor_err = vendor_err;
  wc.byte_len = e.length;
  wc.qp_num = q.pub.qp_num;
  wc.src_qp = q.attr.dest_qp_num;
  q.scq->ready.push_back(wc);
  if (q.scq->ready.size() > size_t(q.scq->pub.cqe)) q.scq->overrun = true;
}

void complete_recv(Qp& q, const RecvEntry& r, ibv_wc_status st, uint32_t byte_len) {
  ibv_wc wc{};
  wc.wr_id = r.wr_id;
  wc.status = st;
  wc.opcode = IBV_WC_RECV;
  wc.byte_len = byte_len;
  wc.qp_num = q.pub.qp_num;
  wc.src_qp = q.attr.dest_qp_num;
  q.rcq->ready.push_back(wc);
  if (q.rcq->ready.size() > size_t(q.rcq->pub.cqe)) q.rcq->overrun = true;
}

void flush(Qp& q) {
  q.pub.state = IBV_QPS_ERR;
  q.attr.qp_state = IBV_QPS_ERR;
  while (!q.outstanding.empty()) {
    const SendEntry e = q.outstanding.front();
    q.outstanding.pop_front();
    if (e.mr) --e.mr->inflight;
    complete_send(q, e, IBV_WC_WR_FLUSH_ERR, 0);
  }
  while (!q.recvs.empty()) {
    const RecvEntry r = q.recvs.front();
    q.recvs.pop_front();
    if (r.mr) --r.mr->inflight;
    complete_recv(q, r, IBV_WC_WR_FLUSH_ERR, 0);
  }
}

namespace {

// The send side of q: every CQE the NIC wrote, matched to the oldest
// outstanding WR (ERNIC completes an RC QP's WQEs in order).
void collect_send(ibv_context* c, Qp& q) {
  const std::vector<host::Cqe> cqes = c->drv->poll(*q.conn, ~uint32_t(0), 0);
  for (const host::Cqe& cqe : cqes) {
    if (q.pub.state == IBV_QPS_ERR || q.outstanding.empty()) continue;  // flushed already
    const SendEntry e = q.outstanding.front();
    q.outstanding.pop_front();
    if (e.mr) --e.mr->inflight;
    if (cqe.wr_id != e.wrid || cqe.opcode != e.wqe_opcode) {
      c->last_error = "QP" + std::to_string(q.pub.qp_num) + ": CQE with WRID " + std::to_string(cqe.wr_id) +
                      " opcode " + std::to_string(cqe.opcode) + " where WRID " + std::to_string(e.wrid) + " opcode " +
                      std::to_string(e.wqe_opcode) + " was next";
      complete_send(q, e, IBV_WC_GENERAL_ERR, 0);
      flush(q);
    } else if (cqe.error) {
      // ERNIC's CQE says only "in error" (ERRFLAG); the QP is fatal: the
      // cause is its fatal code (ernic_verbs_status.h), the rest of its
      // work is flushed (verbs' ERR state).
      const uint32_t code = c->drv->fatal_code(q.pub.qp_num);
      const uint32_t nak = status_needs_nak_syndrome(code)
                               ? regs::fld::STATQPi_NAK_SYNDROME.get(c->bus->mmio_read32(
                                     c->drv->config().layout.qp(q.pub.qp_num, regs::q::STATQPi)))
                               : 0;
      complete_send(q, e, wc_status_of_fatal(code, nak), code);
      flush(q);
    } else if (e.signaled) {
      complete_send(q, e, IBV_WC_SUCCESS, 0);
    }
  }
}

// The receive side of q: SENDs that arrived in RQ elements, one per
// waiting receive WR, copied out; the elements go back to the NIC (RQCIi).
void collect_recv(ibv_context* c, Qp& q) {
  const std::vector<host::RecvMsg> msgs = c->drv->recv(*q.conn, uint32_t(q.recvs.size()), 0, /*consume=*/true);
  for (const host::RecvMsg& m : msgs) {
    if (m.kind == host::RecvMsg::kWriteImm) continue;  // takes no element (not visible over the bridge anyway)
    if (q.recvs.empty()) break;                       // cannot happen: asked for at most recvs.size()
    const RecvEntry r = q.recvs.front();
    q.recvs.pop_front();
    if (r.mr) --r.mr->inflight;
    const uint32_t n = r.dst ? std::min(r.length, q.rq_elem_bytes) : 0;
    if (n) {
      const void* src = ernic_dma_ptr(c->br, m.elem_addr, n);
      if (!src) throw std::logic_error("RQ element at bus address outside the program's memory");
      std::memcpy(r.dst, src, n);
    }
    complete_recv(q, r, IBV_WC_SUCCESS, n);
  }
}

}  // namespace

void collect(ibv_context* c) {
  for (Qp* q : c->qps) {
    if (!q->conn || q->pub.state == IBV_QPS_ERR) continue;
    if (!q->outstanding.empty()) collect_send(c, *q);
    if (!q->recvs.empty() && q->pub.state != IBV_QPS_ERR) collect_recv(c, *q);
  }
}

}  // namespace ernic::verbs

extern "C" {

struct ibv_comp_channel* ibv_create_comp_channel(struct ibv_context* context) {
  ibv_context* c = find<ibv_context>(context);
  if (!c) return errno = EINVAL, nullptr;
  Channel& ch = adopt(c, std::make_unique<Channel>());
  ch.pub.context = c;
  ch.pub.fd = -1;
  enroll(&ch.pub, &ch);
  return &ch.pub;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel* chp) {
  Channel* ch = find<Channel>(chp);
  if (!ch) return errno = EINVAL, EINVAL;
  if (!ch->cqs.empty())
    return fail(ch->ctx, EBUSY, "ibv_destroy_comp_channel: " + std::to_string(ch->cqs.size()) + " CQs use it");
  destroy(ch->ctx, ch, chp);
  return 0;
}

struct ibv_cq* ibv_create_cq(struct ibv_context* context, int cqe, void* cq_context, struct ibv_comp_channel* chp,
                             int comp_vector) {
  ibv_context* c = find<ibv_context>(context);
  if (!c) return errno = EINVAL, nullptr;
  if (cqe < 1 || cqe > 65536) return fail(c, EINVAL, "ibv_create_cq: cqe " + std::to_string(cqe) + " (1..65536)"), nullptr;
  if (comp_vector != 0)
    return fail(c, EINVAL, "ibv_create_cq: comp_vector " + std::to_string(comp_vector) + ": ERNIC has one interrupt (0)"),
           nullptr;
  Channel* ch = nullptr;
  if (chp && (!(ch = find<Channel>(chp)) || ch->ctx != c))
    return fail(c, EINVAL, "ibv_create_cq: the channel is not one of this context"), nullptr;
  Cq& q = adopt(c, std::make_unique<Cq>());
  q.channel = ch;
  q.pub.context = c;
  q.pub.channel = chp;
  q.pub.cq_context = cq_context;
  q.pub.handle = c->next_handle++;
  q.pub.cqe = cqe;
  enroll(&q.pub, &q);
  if (ch) {
    ch->cqs.push_back(&q);
    ch->pub.refcnt = int(ch->cqs.size());
  }
  return &q.pub;
}

int ibv_destroy_cq(struct ibv_cq* cqp) {
  Cq* q = find<Cq>(cqp);
  if (!q) return errno = EINVAL, EINVAL;
  if (q->users) return fail(q->ctx, EBUSY, "ibv_destroy_cq: " + std::to_string(q->users) + " QPs use it");
  if (q->events != q->pub.comp_events_completed)
    return fail(q->ctx, EBUSY, "ibv_destroy_cq: " + std::to_string(q->events - q->pub.comp_events_completed) +
                                   " events not acknowledged (ibv_ack_cq_events)");
  if (Channel* ch = q->channel) {
    ch->cqs.erase(std::remove(ch->cqs.begin(), ch->cqs.end(), q), ch->cqs.end());
    ch->pub.refcnt = int(ch->cqs.size());
  }
  destroy(q->ctx, q, cqp);
  return 0;
}

int ibv_req_notify_cq(struct ibv_cq* cqp, int solicited_only) {
  Cq* q = find<Cq>(cqp);
  if (!q) return errno = EINVAL, EINVAL;
  if (solicited_only)
    return fail(q->ctx, EINVAL, "ibv_req_notify_cq: solicited_only: ERNIC reports no solicited-event bit");
  if (!q->channel) return fail(q->ctx, EINVAL, "ibv_req_notify_cq: the CQ has no completion channel");
  q->armed = true;
  return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel* chp, struct ibv_cq** cq, void** cq_context) {
  Channel* ch = find<Channel>(chp);
  if (!ch) return errno = EINVAL, -1;
  ibv_context* c = ch->ctx;
  if (!cq || !cq_context) return fail(c, EINVAL, "ibv_get_cq_event: cq and cq_context are needed"), -1;
  if (std::none_of(ch->cqs.begin(), ch->cqs.end(), [](const Cq* q) { return q->armed; }))
    return fail(c, EINVAL, "ibv_get_cq_event: no CQ of the channel is armed (ibv_req_notify_cq): no event can come"), -1;
  const uint64_t span = c->event_timeout_ps ? c->event_timeout_ps : kDefaultEventTimeoutPs;
  const uint64_t now0 = c->bus ? c->bus->now_ps() : 0;
  const uint64_t deadline = span > ~uint64_t(0) - now0 ? ~uint64_t(0) : now0 + span;
  const int rc = guarded(c, EIO, [&]() -> int {
    for (;;) {
      collect(c);
      for (Cq* q : ch->cqs)
        if (q->armed && !q->ready.empty()) {
          q->armed = false;
          ++q->events;
          *cq = &q->pub;
          *cq_context = q->pub.cq_context;
          return 0;
        }
      if (c->bus->now_ps() >= deadline)
        return fail(c, ETIMEDOUT, "ibv_get_cq_event: no completion within " + std::to_string(span / 1000) +
                                      " ns of simulated time (ernic_ibv_set_event_timeout)");
      // Runs the simulation until the NIC writes memory (a CQE, a doorbell
      // mirror, a SEND's payload) or interrupts, or the deadline.
      c->bus->sleep_until(deadline, host::HostBus::kMemory);
    }
  });
  if (rc) return errno = rc, -1;
  return 0;
}

void ibv_ack_cq_events(struct ibv_cq* cqp, unsigned int nevents) {
  Cq* q = find<Cq>(cqp);
  if (!q) return;
  const uint32_t open = q->events - q->pub.comp_events_completed;
  q->pub.comp_events_completed += std::min<uint32_t>(nevents, open);
}

int ibv_poll_cq(struct ibv_cq* cqp, int num_entries, struct ibv_wc* wc) {
  Cq* q = find<Cq>(cqp);
  if (!q) return errno = EINVAL, -EINVAL;
  ibv_context* c = q->ctx;
  if (num_entries < 0 || (num_entries > 0 && !wc))
    return -fail(c, EINVAL, "ibv_poll_cq: num_entries " + std::to_string(num_entries) + " and no wc array");
  // Nothing to return: the simulation runs on as the NIC would while a CPU
  // polls, until the NIC writes this program's memory or interrupts, or a
  // poll quantum has passed (lock-step time: else a busy-polling loop
  // would spin with the simulation standing still).
  if (const int rc = guarded(c, EIO, [&]() -> int {
        collect(c);
        if (q->ready.empty() && num_entries > 0) {
          c->bus->sleep_until(c->bus->now_ps() + kPollQuantumPs, host::HostBus::kMemory);
          collect(c);
        }
        return 0;
      }))
    return -rc;
  if (q->overrun)  // as a CQ overrun in rdma-core (IBV_EVENT_CQ_ERR): the CQ is in error from now on
    return -fail(c, EOVERFLOW, "ibv_poll_cq: CQ overrun: more than cqe (" + std::to_string(q->pub.cqe) +
                                   ") completions waited in it at once; the CQ is in error");
  int n = 0;
  while (n < num_entries && !q->ready.empty()) {
    wc[n++] = q->ready.front();
    q->ready.pop_front();
  }
  return n;
}

}  // extern "C"
