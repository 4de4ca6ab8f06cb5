/* examples/c/verbs_cm.c: a verbs program that connects with CM, the host
 * of node A in scenarios/examples/bridge_verbs_cm.yaml (the scenario's
 * connect step has cm: true: B's built-in driver listens, and this program
 * gets ERNIC_CM=1 and B's address).
 *
 *   1. open the device (the bridge; the driver's PG332 bring-up), a PD
 *   2. buffers in DMA memory: what we send (a local MR), an area a peer may
 *      write (an MR with remote access: its VA is its pointer)
 *   3. a CQ, then ernic_rdma_connect: ConnectRequest over QP1 (the area's
 *      VA, R_Key and length in its private data), ConnectReply (B's QPN,
 *      PSN and the MR B advertises), ReadyToUse; the RC QP is in RTS
 *   4. one chained ibv_post_send: a 4 KiB RDMA WRITE into B's advertised
 *      MR, a 200-byte SEND
 *   5. busy-poll the CQ until both completions are in; each is checked
 *      (status, wr_id, opcode, byte_len, qp_num, src_qp)
 *   6. tear down in the verbs order
 * Exit 0 only if every call and every check holds; otherwise a message
 * names what failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_verbs.h"

#define WRITE_BYTES 4096u
#define SEND_OFFSET 512u
#define SEND_BYTES 200u
#define CM_PORT 7471

static struct ibv_context* ctx;
static int failures;

static void die(const char* what) {
  fprintf(stderr, "verbs_cm: %s failed: %s (%s)\n", what, strerror(errno),
          ctx ? ernic_ibv_last_error(ctx) : ernic_ibv_open_error());
  exit(1);
}

static void check(int ok, const char* fmt, uint64_t got, uint64_t want) {
  if (ok) return;
  fprintf(stderr, "verbs_cm: ");
  fprintf(stderr, fmt, got, want);
  fprintf(stderr, "\n");
  ++failures;
}

/* A variable of the scenario's environment; `dflt` when unset. */
static uint64_t env_u64(const char* name, uint64_t dflt) {
  const char* v = getenv(name);
  return v && *v ? strtoull(v, NULL, 0) : dflt;
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

int main(void) {
  if (env_u64("ERNIC_CM", 0) != 1 || !getenv("ERNIC_PEER_IP")) {
    fprintf(stderr, "verbs_cm: run me from a scenario whose connect step has cm: true (ERNIC_CM=1, ERNIC_PEER_IP)\n");
    return 2;
  }
  ctx = ernic_ibv_open(NULL);
  if (!ctx) die("ernic_ibv_open");
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  if (!pd) die("alloc_pd");

  uint8_t* src = ernic_ibv_alloc_buf(ctx, WRITE_BYTES, 4096);
  uint8_t* area = ernic_ibv_alloc_buf(ctx, 8192, 4096);
  if (!src || !area) die("ernic_ibv_alloc_buf");
  for (uint32_t k = 0; k < WRITE_BYTES; ++k) src[k] = (uint8_t)k;
  struct ibv_mr* src_mr = ibv_reg_mr(pd, src, WRITE_BYTES, 0);
  struct ibv_mr* area_mr =
      ibv_reg_mr(pd, area, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!src_mr || !area_mr) die("reg_mr");
  check(ernic_ibv_mr_remote_addr(area_mr) == (uint64_t)(uintptr_t)area,
        "the area's remote address 0x%" PRIx64 ", its pointer 0x%" PRIx64, ernic_ibv_mr_remote_addr(area_mr),
        (uint64_t)(uintptr_t)area);

  printf("advertised: va 0x%" PRIx64 " rkey 0x%x length %zu\n", (uint64_t)(uintptr_t)area_mr->addr, area_mr->rkey,
         area_mr->length);

  struct ibv_cq* cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  if (!cq) die("create_cq");

  /* rdma_cm's client side: the QP comes back connected, in RTS. */
  struct ibv_qp_init_attr qia;
  memset(&qia, 0, sizeof qia);
  qia.send_cq = cq;
  qia.recv_cq = cq;
  qia.cap.max_send_wr = 16;
  qia.cap.max_recv_wr = 16;
  qia.cap.max_send_sge = 1;
  qia.cap.max_recv_sge = 1;
  qia.qp_type = IBV_QPT_RC;
  struct ernic_rdma_conn_param cp;
  memset(&cp, 0, sizeof cp);
  cp.server_ip = getenv("ERNIC_PEER_IP");
  cp.port = CM_PORT;
  /* VERBS_CM_PATH_MTU: ask for another path MTU than the connection's (a
   * test: the server must take the smaller one). */
  cp.path_mtu = mtu_of(env_u64("VERBS_CM_PATH_MTU", env_u64("ERNIC_PMTU", 4096)));
  cp.sq_psn = getenv("ERNIC_PSN") ? (uint32_t)env_u64("ERNIC_PSN", 0) : ERNIC_RDMA_PSN_AUTO;
  cp.advertise = area_mr;
  struct ernic_rdma_peer peer;
  struct ibv_qp* qp = ernic_rdma_connect(pd, &qia, &cp, &peer);
  if (!qp) die("ernic_rdma_connect");
  printf("connected: QP %u -> server QP %u (PSN 0x%x), server MR va 0x%" PRIx64 " rkey 0x%x length %" PRIu64
         " at %.3f us\n",
         qp->qp_num, peer.qp_num, peer.psn, peer.remote_addr, peer.rkey, peer.length,
         (double)ernic_now_ps(ernic_ibv_bridge(ctx)) / 1e6);
  check(qp->state == IBV_QPS_RTS, "QP state %" PRIu64 ", expected RTS (%" PRIu64 ")", qp->state, IBV_QPS_RTS);
  if (getenv("ERNIC_QPN"))
    check(qp->qp_num == env_u64("ERNIC_QPN", 0), "QPN %" PRIu64 ", the scenario gave %" PRIu64, qp->qp_num,
          env_u64("ERNIC_QPN", 0));
  check(peer.length >= WRITE_BYTES, "the server's MR has %" PRIu64 " bytes, %" PRIu64 " needed", peer.length,
        WRITE_BYTES);
  check(peer.rkey != 0, "the server advertised R_Key %" PRIu64 ", want one (its server_mr) other than %" PRIu64,
        peer.rkey, 0);
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &ia)) die("query_qp");
  check(a.dest_qp_num == peer.qp_num, "dest_qp_num %" PRIu64 ", the server's QPN %" PRIu64, a.dest_qp_num,
        peer.qp_num);
  check(a.rq_psn == peer.psn, "rq_psn 0x%" PRIx64 ", the server's PSN 0x%" PRIx64, a.rq_psn, peer.psn);
  if (cp.sq_psn != ERNIC_RDMA_PSN_AUTO)
    check(a.sq_psn == cp.sq_psn, "sq_psn 0x%" PRIx64 ", asked for 0x%" PRIx64, a.sq_psn, cp.sq_psn);
  if (failures) return 1;

  /* One chain: RDMA WRITE into the server's MR, then a SEND. */
  struct ibv_sge sge[2] = {{(uintptr_t)src, WRITE_BYTES, src_mr->lkey},
                           {(uintptr_t)src + SEND_OFFSET, SEND_BYTES, src_mr->lkey}};
  struct ibv_send_wr wr[2], *bad = NULL;
  memset(wr, 0, sizeof wr);
  wr[0].wr_id = 0xC0000000000000C1ull;
  wr[0].opcode = IBV_WR_RDMA_WRITE;
  wr[0].wr.rdma.remote_addr = peer.remote_addr;
  wr[0].wr.rdma.rkey = peer.rkey;
  wr[1].wr_id = 0xC0000000000000C2ull;
  wr[1].opcode = IBV_WR_SEND;
  for (int i = 0; i < 2; ++i) {
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].send_flags = IBV_SEND_SIGNALED;
  }
  wr[0].next = &wr[1];
  errno = ibv_post_send(qp, &wr[0], &bad);
  if (errno) die("post_send");

  /* Busy-poll: an empty poll lets the simulation run on (at most 1 us). */
  const enum ibv_wc_opcode want_op[2] = {IBV_WC_RDMA_WRITE, IBV_WC_SEND};
  const uint32_t want_len[2] = {WRITE_BYTES, SEND_BYTES};
  struct ibv_wc wc[2];
  int got = 0, polls = 0;
  while (got < 2 && polls++ < 1000) {
    const int n = ibv_poll_cq(cq, 2 - got, wc + got);
    if (n < 0) die("poll_cq");
    got += n;
  }
  check(got == 2, "%" PRIu64 " completions, want %" PRIu64, (uint64_t)got, 2);
  for (int i = 0; i < got; ++i) {
    printf("wc %d: wr_id 0x%" PRIx64 " status %s opcode %d byte_len %u qp %u src_qp %u\n", i, wc[i].wr_id,
           ibv_wc_status_str(wc[i].status), (int)wc[i].opcode, wc[i].byte_len, wc[i].qp_num, wc[i].src_qp);
    check(wc[i].status == IBV_WC_SUCCESS, "status %" PRIu64 ", expected %" PRIu64, wc[i].status, IBV_WC_SUCCESS);
    check(wc[i].wr_id == wr[i].wr_id, "wr_id 0x%" PRIx64 ", expected 0x%" PRIx64, wc[i].wr_id, wr[i].wr_id);
    check(wc[i].opcode == want_op[i], "opcode %" PRIu64 ", expected %" PRIu64, wc[i].opcode, want_op[i]);
    check(wc[i].byte_len == want_len[i], "byte_len %" PRIu64 ", expected %" PRIu64, wc[i].byte_len, want_len[i]);
    check(wc[i].qp_num == qp->qp_num, "qp_num %" PRIu64 ", expected %" PRIu64, wc[i].qp_num, qp->qp_num);
    check(wc[i].src_qp == peer.qp_num, "src_qp %" PRIu64 ", expected %" PRIu64, wc[i].src_qp, peer.qp_num);
  }

  /* Tear down in the verbs order (the QP: PG332's deletion, no CM). */
  if (ibv_destroy_qp(qp)) die("destroy_qp");
  if (ibv_dereg_mr(src_mr) || ibv_dereg_mr(area_mr)) die("dereg_mr");
  if (ibv_destroy_cq(cq)) die("destroy_cq");
  if (ibv_dealloc_pd(pd)) die("dealloc_pd");
  if (ibv_close_device(ctx)) {
    ctx = NULL;
    die("close_device");
  }
  if (failures) {
    fprintf(stderr, "verbs_cm: %d check(s) failed\n", failures);
    return 1;
  }
  printf("verbs_cm: pass\n");
  return 0;
}
