/* examples/c/seed004_verbs.c: seed 004's verbs program against the
 * simulated ERNIC (ernic_verbs.h), the host of node A in
 * scenarios/examples/bridge_verbs_seed004.yaml.
 *
 *   1. open the device (the bridge; the driver's PG332 bring-up), a PD
 *   2. buffers in DMA memory, MRs (a local one for the data we send, one
 *      with remote access the NIC's MR table holds)
 *   3. a CQ with a completion channel, an RC QP
 *   4. INIT -> RTR -> RTS towards the peer the scenario connected (its QPN,
 *      PSN and address come from the environment: ERNIC_PEER_QPN, ...)
 *   5. one chained ibv_post_send: SEND, SEND_WITH_IMM, RDMA WRITE into the
 *      peer's MR (ERNIC_PEER_VA / ERNIC_PEER_RKEY)
 *   6. event mode: req_notify_cq, get_cq_event, ack, poll_cq until all three
 *      completions are in; every one is checked (status, opcode, wr_id,
 *      byte_len, qp_num)
 *   7. tear down in the verbs order
 * Exit 0 only if every call and every check holds; otherwise a message
 * names what failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_verbs.h"

#define SEND0_BYTES 256u
#define SEND1_BYTES 300u
#define WRITE_BYTES 4096u
#define IMM 0x5EED0004u

static struct ibv_context* ctx;
static int failures;

static void die(const char* what) {
  fprintf(stderr, "seed004_verbs: %s failed: %s (%s)\n", what, strerror(errno),
          ctx ? ernic_ibv_last_error(ctx) : ernic_ibv_open_error());
  exit(1);
}

static void check(int ok, const char* fmt, uint64_t got, uint64_t want) {
  if (ok) return;
  fprintf(stderr, "seed004_verbs: ");
  fprintf(stderr, fmt, got, want);
  fprintf(stderr, "\n");
  ++failures;
}

static uint64_t env_u64(const char* name) {
  const char* v = getenv(name);
  if (!v) {
    fprintf(stderr, "seed004_verbs: %s is not set (run me from a scenario's program step)\n", name);
    exit(2);
  }
  return strtoull(v, NULL, 0);
}

static enum ibv_mtu mtu_of(uint64_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    default: return IBV_MTU_4096;
  }
}

/* The peer's GID: its IPv4 address as ::ffff:a.b.c.d. */
static union ibv_gid peer_gid(void) {
  union ibv_gid g;
  struct in_addr a;
  const char* ip = getenv("ERNIC_PEER_IP");
  if (!ip || inet_pton(AF_INET, ip, &a) != 1) {
    fprintf(stderr, "seed004_verbs: ERNIC_PEER_IP '%s' is not an IPv4 address\n", ip ? ip : "");
    exit(2);
  }
  memset(&g, 0, sizeof g);
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  memcpy(&g.raw[12], &a.s_addr, 4);
  return g;
}

static void bring_up(struct ibv_qp* qp) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("modify_qp INIT");

  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = mtu_of(env_u64("ERNIC_PMTU"));
  a.dest_qp_num = (uint32_t)env_u64("ERNIC_PEER_QPN");
  a.rq_psn = (uint32_t)env_u64("ERNIC_PEER_PSN");
  a.max_dest_rd_atomic = 16;
  a.min_rnr_timer = 31;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = 1;
  a.ah_attr.grh.dgid = peer_gid();
  a.ah_attr.grh.hop_limit = 64;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    die("modify_qp RTR");

  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = (uint32_t)env_u64("ERNIC_PSN");
  a.timeout = 14;
  a.retry_cnt = 3;
  a.rnr_retry = 3;
  a.max_rd_atomic = 16;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                IBV_QP_MAX_QP_RD_ATOMIC))
    die("modify_qp RTS");

  struct ibv_qp_init_attr ia;
  if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_SQ_PSN, &ia)) die("query_qp");
  check(a.qp_state == IBV_QPS_RTS, "QP state %" PRIu64 ", expected RTS (%" PRIu64 ")", a.qp_state, IBV_QPS_RTS);
  check(a.dest_qp_num == env_u64("ERNIC_PEER_QPN"), "dest_qp_num %" PRIu64 ", expected %" PRIu64, a.dest_qp_num,
        env_u64("ERNIC_PEER_QPN"));
  check(a.sq_psn == env_u64("ERNIC_PSN"), "sq_psn %" PRIu64 ", expected %" PRIu64, a.sq_psn, env_u64("ERNIC_PSN"));
}

int main(void) {
  ctx = ernic_ibv_open(NULL);
  if (!ctx) die("ernic_ibv_open");
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  if (!pd) die("alloc_pd");

  /* Buffers: what we send (an incrementing pattern), a receive area the
   * peer could write into (registered with remote access: an MR the NIC's
   * table holds, R_Key = index << 8 | key byte). */
  uint8_t* src = ernic_ibv_alloc_buf(ctx, WRITE_BYTES, 4096);
  uint8_t* area = ernic_ibv_alloc_buf(ctx, 8192, 4096);
  if (!src || !area) die("ernic_ibv_alloc_buf");
  for (uint32_t k = 0; k < WRITE_BYTES; ++k) src[k] = (uint8_t)k;
  struct ibv_mr* src_mr = ibv_reg_mr(pd, src, WRITE_BYTES, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mr* area_mr =
      ibv_reg_mr(pd, area, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!src_mr || !area_mr) die("reg_mr");
  check(area_mr->rkey >> 8 == 0, "the first NIC MR has index %" PRIu64 ", expected %" PRIu64, area_mr->rkey >> 8, 0);
  check(area_mr->lkey == area_mr->rkey, "lkey %" PRIu64 " != rkey %" PRIu64, area_mr->lkey, area_mr->rkey);
  check(src_mr->rkey == 0, "a local MR has rkey %" PRIu64 ", expected %" PRIu64, src_mr->rkey, 0);

  struct ibv_comp_channel* channel = ibv_create_comp_channel(ctx);
  if (!channel) die("create_comp_channel");
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, (void*)ctx, channel, 0);
  if (!cq) die("create_cq");

  struct ibv_qp_init_attr qia;
  memset(&qia, 0, sizeof qia);
  qia.send_cq = cq;
  qia.recv_cq = cq;
  qia.cap.max_send_wr = 16;
  qia.cap.max_recv_wr = 16;
  qia.cap.max_send_sge = 1;
  qia.cap.max_recv_sge = 1;
  qia.qp_type = IBV_QPT_RC;
  struct ibv_qp* qp = ibv_create_qp(pd, &qia);
  if (!qp) die("create_qp");
  check(qp->qp_num == env_u64("ERNIC_QPN"), "QPN %" PRIu64 ", the scenario connected QPN %" PRIu64, qp->qp_num,
        env_u64("ERNIC_QPN"));
  bring_up(qp);

  /* One chain: SEND, SEND_WITH_IMM, RDMA WRITE (64-bit wr_ids). */
  struct ibv_sge sge[3] = {{(uintptr_t)src, SEND0_BYTES, src_mr->lkey},
                           {(uintptr_t)src + SEND0_BYTES, SEND1_BYTES, src_mr->lkey},
                           {(uintptr_t)src, WRITE_BYTES, src_mr->lkey}};
  struct ibv_send_wr wr[3], *bad = NULL;
  const uint64_t ids[3] = {0xA000000000000001ull, 0xA000000000000002ull, 0xA000000000000003ull};
  memset(wr, 0, sizeof wr);
  for (int i = 0; i < 3; ++i) {
    wr[i].wr_id = ids[i];
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].send_flags = IBV_SEND_SIGNALED;
    wr[i].next = i < 2 ? &wr[i + 1] : NULL;
  }
  wr[0].opcode = IBV_WR_SEND;
  wr[1].opcode = IBV_WR_SEND_WITH_IMM;
  wr[1].imm_data = htonl(IMM);
  wr[2].opcode = IBV_WR_RDMA_WRITE;
  wr[2].wr.rdma.remote_addr = env_u64("ERNIC_PEER_VA");
  wr[2].wr.rdma.rkey = (uint32_t)env_u64("ERNIC_PEER_RKEY");
  if (env_u64("ERNIC_PEER_LEN") < WRITE_BYTES) {
    fprintf(stderr, "seed004_verbs: the peer's MR has %" PRIu64 " bytes, %u needed\n", env_u64("ERNIC_PEER_LEN"),
            WRITE_BYTES);
    return 2;
  }
  if (ibv_req_notify_cq(cq, 0)) die("req_notify_cq");
  errno = ibv_post_send(qp, &wr[0], &bad);
  if (errno) die("post_send");

  /* Event mode: wait, acknowledge, re-arm, then poll the CQ empty. */
  const enum ibv_wc_opcode want_op[3] = {IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE};
  const uint32_t want_len[3] = {SEND0_BYTES, SEND1_BYTES, WRITE_BYTES};
  int got = 0, events = 0;
  while (got < 3) {
    struct ibv_cq* ev_cq;
    void* ev_ctx;
    if (ibv_get_cq_event(channel, &ev_cq, &ev_ctx)) die("get_cq_event");
    ++events;
    check(ev_cq == cq && ev_ctx == (void*)ctx, "event for another CQ (%" PRIu64 "/%" PRIu64 ")", ev_cq == cq,
          ev_ctx == (void*)ctx);
    ibv_ack_cq_events(ev_cq, 1);
    if (ibv_req_notify_cq(ev_cq, 0)) die("req_notify_cq");
    struct ibv_wc wc[4];
    int n;
    while ((n = ibv_poll_cq(cq, 4, wc)) > 0) {
      for (int i = 0; i < n; ++i, ++got) {
        if (got >= 3) {
          fprintf(stderr, "seed004_verbs: completion %d beyond the 3 posted (wr_id 0x%" PRIx64 ")\n", got + 1,
                  wc[i].wr_id);
          ++failures;
          continue;
        }
        printf("wc %d: wr_id 0x%" PRIx64 " status %s opcode %d byte_len %u qp %u at %.3f us\n", got, wc[i].wr_id,
               ibv_wc_status_str(wc[i].status), (int)wc[i].opcode, wc[i].byte_len, wc[i].qp_num,
               (double)ernic_now_ps(ernic_ibv_bridge(ctx)) / 1e6);
        check(wc[i].status == IBV_WC_SUCCESS, "status %" PRIu64 ", expected %" PRIu64, wc[i].status, IBV_WC_SUCCESS);
        check(wc[i].wr_id == ids[got], "wr_id 0x%" PRIx64 ", expected 0x%" PRIx64, wc[i].wr_id, ids[got]);
        check(wc[i].opcode == want_op[got], "opcode %" PRIu64 ", expected %" PRIu64, wc[i].opcode, want_op[got]);
        check(wc[i].byte_len == want_len[got], "byte_len %" PRIu64 ", expected %" PRIu64, wc[i].byte_len,
              want_len[got]);
        check(wc[i].qp_num == qp->qp_num, "qp_num %" PRIu64 ", expected %" PRIu64, wc[i].qp_num, qp->qp_num);
      }
    }
    if (n < 0) die("poll_cq");
  }
  struct ibv_cq* ev_cq;
  void* ev_ctx;
  ernic_ibv_set_event_timeout(ctx, 20000); /* nothing more may come: 20 us */
  const int late = ibv_get_cq_event(channel, &ev_cq, &ev_ctx);
  const int late_errno = errno;
  check(late == -1 && late_errno == ETIMEDOUT,
        "an event after the last completion (errno %" PRIu64 "), expected ETIMEDOUT (%" PRIu64 ")", late_errno, ETIMEDOUT);
  printf("%d completions in %d events\n", got, events);

  /* Tear down in the verbs order. */
  if (ibv_destroy_qp(qp)) die("destroy_qp");
  if (ibv_dereg_mr(src_mr) || ibv_dereg_mr(area_mr)) die("dereg_mr");
  if (ibv_destroy_cq(cq)) die("destroy_cq");
  if (ibv_destroy_comp_channel(channel)) die("destroy_comp_channel");
  if (ibv_dealloc_pd(pd)) die("dealloc_pd");
  if (ibv_close_device(ctx)) {
    ctx = NULL;
    die("close_device");
  }
  if (failures) {
    fprintf(stderr, "seed004_verbs: %d check(s) failed\n", failures);
    return 1;
  }
  printf("seed004_verbs: pass\n");
  return 0;
}
