/* tb/bridge/programs/verbs_checks.c: the verbs layer (ernic_verbs.h) under
 * test, as node A's host in tb/bridge/verbs_checks.yaml (B runs the
 * built-in driver). Each check compares a real value: return codes, errno,
 * bad_wr, the completions' wr_id / opcode / status / vendor_err /
 * byte_len / order, the bytes an RDMA READ and the receives bring back,
 * and the NIC's registers read back over the bridge (an MR's VA, PA, PD,
 * length, access and key; a QP's TIMEOUTCONFi, PDi, QPCONFi, STATQPi). Run with
 * ERNIC_IBV_TEST_WRID_START=65520, so the 16-bit WQE WRIDs wrap during the
 * run (tb/bridge/verbs.py reads the CQEs' WRIDs 65535, 0 in the log).
 * Exit 0 when every check holds; each failure is printed with its line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_regs_c.h"
#include "ernic_verbs.h"

static struct ibv_context* ctx;
static int failures, checks;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    ++checks;                                                         \
    if (!(cond)) {                                                    \
      fprintf(stderr, "verbs_checks.c:%d: %s: ", __LINE__, #cond);    \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, " (last error: %s)\n", ernic_ibv_last_error(ctx)); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static void die(const char* what) {
  fprintf(stderr, "verbs_checks: %s: %s (%s)\n", what, strerror(errno),
          ctx ? ernic_ibv_last_error(ctx) : ernic_ibv_open_error());
  exit(1);
}

static uint64_t env_u64(const char* name) {
  const char* v = getenv(name);
  if (!v) {
    fprintf(stderr, "verbs_checks: %s is not set\n", name);
    exit(2);
  }
  return strtoull(v, NULL, 0);
}

/* Busy-polls cq (an empty poll lets the simulation run on) until `want`
 * completions are in wc or `ns` of simulated time passed; how many. */
static int collect(struct ibv_cq* cq, struct ibv_wc* wc, int want, uint64_t ns) {
  const uint64_t until = ernic_now_ps(ernic_ibv_bridge(ctx)) + ns * 1000;
  int got = 0;
  while (got < want && ernic_now_ps(ernic_ibv_bridge(ctx)) < until) {
    const int n = ibv_poll_cq(cq, want - got, wc + got);
    if (n < 0) die("poll_cq");
    got += n;
  }
  return got;
}

/* A register of A's NIC, read over the bridge (what the driver programmed). */
static uint32_t reg(uint32_t offset) { return ernic_read32(ernic_ibv_bridge(ctx), offset); }

static struct ibv_sge sge(void* p, uint32_t len, uint32_t lkey) {
  struct ibv_sge s;
  s.addr = (uintptr_t)p;
  s.length = len;
  s.lkey = lkey;
  return s;
}

static void wr_init(struct ibv_send_wr* w, uint64_t id, enum ibv_wr_opcode op, struct ibv_sge* s, unsigned flags) {
  memset(w, 0, sizeof *w);
  w->wr_id = id;
  w->opcode = op;
  w->sg_list = s;
  w->num_sge = 1;
  w->send_flags = flags;
}

/* Posts one WR expected to be refused with err; checks bad_wr. */
static void refused(struct ibv_qp* qp, struct ibv_send_wr* w, int err, const char* what) {
  struct ibv_send_wr* bad = NULL;
  const int rc = ibv_post_send(qp, w, &bad);
  CHECK(rc == err && bad == w, "%s: rc %d (want %d), bad_wr %s", what, rc, err, bad == w ? "at it" : "elsewhere");
}

static void modify_checks_and_bring_up(struct ibv_qp* qp) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RESET -> RTR accepted");
  a.qp_state = IBV_QPS_INIT;
  a.qkey = 0x11111111;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY) == EINVAL, "a Q_Key on an RC QP accepted");
  a.port_num = 2;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) == EINVAL, "port 2 accepted");
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE; /* ERNIC cannot refuse remote reads per QP */
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS) == EINVAL, "write-only QP access accepted");
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0, "INIT refused");
  CHECK(qp->state == IBV_QPS_INIT, "state %d after INIT", (int)qp->state);

  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = (uint32_t)env_u64("ERNIC_PEER_QPN");
  a.rq_psn = (uint32_t)env_u64("ERNIC_PEER_PSN");
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid.raw[10] = a.ah_attr.grh.dgid.raw[11] = 0xff;
  struct in_addr ip;
  if (inet_pton(AF_INET, getenv("ERNIC_PEER_IP"), &ip) != 1) die("ERNIC_PEER_IP");
  memcpy(&a.ah_attr.grh.dgid.raw[12], &ip.s_addr, 4);
  const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  CHECK(ibv_modify_qp(qp, &a, rtr & ~IBV_QP_AV) == EINVAL, "RTR without an address vector accepted");
  a.timeout = 14;
  CHECK(ibv_modify_qp(qp, &a, rtr | IBV_QP_TIMEOUT) == EINVAL, "RTR with an RTS attribute accepted");
  a.ah_attr.grh.hop_limit = 1;
  CHECK(ibv_modify_qp(qp, &a, rtr) == EINVAL, "hop_limit 1 accepted (the driver programs TTL 64)");
  a.ah_attr.grh.hop_limit = 64;
  a.min_rnr_timer = 32; /* TIMEOUTCONFi[20:16] holds 0..31 */
  CHECK(ibv_modify_qp(qp, &a, rtr | IBV_QP_MIN_RNR_TIMER) == EINVAL, "min_rnr_timer 32 accepted");
  a.min_rnr_timer = 12;
  a.ah_attr.grh.dgid.raw[15] ^= 0x40; /* an address with no neighbour entry */
  CHECK(ibv_modify_qp(qp, &a, rtr) == EINVAL, "RTR towards an address without a MAC accepted");
  a.ah_attr.grh.dgid.raw[15] ^= 0x40;
  CHECK(ibv_modify_qp(qp, &a, rtr | IBV_QP_MIN_RNR_TIMER) == 0, "RTR refused");

  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = (uint32_t)env_u64("ERNIC_PSN");
  const int rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
  a.timeout = 64; /* TIMEOUTCONFi[5:0] holds 0..63 */
  a.retry_cnt = 5;
  a.rnr_retry = 7;
  CHECK(ibv_modify_qp(qp, &a, rts) == EINVAL, "ACK timeout 64 accepted");
  a.timeout = 10;
  a.retry_cnt = 8; /* [10:8] */
  CHECK(ibv_modify_qp(qp, &a, rts) == EINVAL, "retry_cnt 8 accepted");
  a.retry_cnt = 5;
  a.rnr_retry = 8; /* [13:11] */
  CHECK(ibv_modify_qp(qp, &a, rts) == EINVAL, "rnr_retry 8 accepted");
  a.rnr_retry = 7;
  CHECK(qp->state == IBV_QPS_RTR, "state %d after the refused RTS transitions", (int)qp->state);
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RTS without sq_psn accepted");
  CHECK(ibv_modify_qp(qp, &a, rts) == 0, "RTS refused");
  CHECK(qp->state == IBV_QPS_RTS, "state %d after RTS", (int)qp->state);
  /* TIMEOUTCONFi holds the QP's values, PDi its PD (the driver's
   * program_rc_qp, read back over the bridge). */
  const uint32_t want_to = ERNIC_SET(TIMEOUTCONFi_ACK_TIMEOUT, 10) | ERNIC_SET(TIMEOUTCONFi_RETRY_CNT, 5) |
                           ERNIC_SET(TIMEOUTCONFi_RNR_RETRY_CNT, 7) | ERNIC_SET(TIMEOUTCONFi_RNR_TIMER, 12);
  const uint32_t got_to = reg(ERNIC_QPREG(TIMEOUTCONFi, qp->qp_num));
  CHECK(got_to == want_to, "TIMEOUTCONFi 0x%08x, want 0x%08x", got_to, want_to);
  CHECK(reg(ERNIC_QPREG(PDi, qp->qp_num)) == qp->pd->handle, "PDi %u, the QP's PD is %u",
        reg(ERNIC_QPREG(PDi, qp->qp_num)), qp->pd->handle);
  a.qp_state = IBV_QPS_SQD;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RTS -> SQD accepted (ERNIC has no SQ drain state)");
  struct ibv_qp_init_attr ia;
  CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_RTS && a.path_mtu == IBV_MTU_1024 &&
            a.sq_psn == env_u64("ERNIC_PSN") && a.dest_qp_num == env_u64("ERNIC_PEER_QPN"),
        "query_qp: state %d mtu %d sq_psn %u dest %u", (int)a.qp_state, (int)a.path_mtu, a.sq_psn, a.dest_qp_num);
  CHECK(a.timeout == 10 && a.retry_cnt == 5 && a.rnr_retry == 7 && a.min_rnr_timer == 12,
        "query_qp: timeout %u retry_cnt %u rnr_retry %u min_rnr_timer %u", a.timeout, a.retry_cnt, a.rnr_retry,
        a.min_rnr_timer);
}

/* An MR with remote access over part of a buffer: the NIC's MR table
 * entry (read back over the bridge) has the program's pointer as its VA,
 * the buffer's bus address as its PA, the PD, length, access and key byte;
 * deregistration invalidates it (ACCESSDESC 0xF). */
static void mr_checks(struct ibv_pd* pd, uint8_t* buf) {
  uint8_t* at = buf + 192; /* any range of DMA memory (no guards, no alignment) */
  struct ibv_mr* mr = ibv_reg_mr(pd, at, 4000, IBV_ACCESS_REMOTE_READ);
  CHECK(mr != NULL, "a remote MR over part of a buffer refused");
  if (!mr) return;
  const uint64_t va = (uint64_t)(uintptr_t)at;
  const uint32_t i = mr->rkey >> 8;
  CHECK(mr->addr == (void*)at && mr->length == 4000 && mr->lkey == mr->rkey && ernic_ibv_mr_remote_addr(mr) == va,
        "addr %p length %zu lkey 0x%x rkey 0x%x remote_addr 0x%" PRIx64, mr->addr, mr->length, mr->lkey, mr->rkey,
        ernic_ibv_mr_remote_addr(mr));
  const uint64_t nic_va = (uint64_t)reg(ERNIC_MRREG(VIRTADDRMSB, i)) << 32 | reg(ERNIC_MRREG(VIRTADDRLSB, i));
  const uint64_t nic_pa = (uint64_t)reg(ERNIC_MRREG(BUFBASEADDRMSB, i)) << 32 | reg(ERNIC_MRREG(BUFBASEADDRLSB, i));
  const uint64_t bus = ernic_dma_bus(ernic_ibv_bridge(ctx), at, 4000);
  CHECK(nic_va == va, "MR %u: VIRTADDR 0x%" PRIx64 ", the program's pointer is 0x%" PRIx64, i, nic_va, va);
  CHECK(bus != 0 && nic_pa == bus, "MR %u: BUFBASEADDR 0x%" PRIx64 ", the bus address is 0x%" PRIx64, i, nic_pa, bus);
  CHECK(reg(ERNIC_MRREG(WRRDBUFLEN, i)) == 4000 && reg(ERNIC_MRREG(PDPDNUM, i)) == pd->handle &&
            ERNIC_GET(ACCESSDESC_ACCESS, reg(ERNIC_MRREG(ACCESSDESC, i))) == ERNIC_V_ACCESSDESC_ACCESS_READ &&
            ERNIC_GET(BUFRKEY_KEY, reg(ERNIC_MRREG(BUFRKEY, i))) == (mr->rkey & 0xFF),
        "MR %u: length %u PD %u ACCESSDESC 0x%x BUFRKEY 0x%x", i, reg(ERNIC_MRREG(WRRDBUFLEN, i)),
        reg(ERNIC_MRREG(PDPDNUM, i)), reg(ERNIC_MRREG(ACCESSDESC, i)), reg(ERNIC_MRREG(BUFRKEY, i)));
  CHECK(ibv_dereg_mr(mr) == 0 && reg(ERNIC_MRREG(ACCESSDESC, i)) == 0xF, "deregistration: ACCESSDESC 0x%x",
        reg(ERNIC_MRREG(ACCESSDESC, i)));
}

/* ernic_rdma_connect's refusals, each leaving no QP behind; then a real
 * ConnectRequest to B, which does not listen (the scenario connected it
 * out of band): its ConnectReject is ECONNREFUSED. */
static void cm_checks(struct ibv_pd* pd, struct ibv_cq* cq, struct ibv_mr* local_mr) {
  struct ibv_qp_init_attr qia;
  memset(&qia, 0, sizeof qia);
  qia.send_cq = qia.recv_cq = cq;
  qia.cap.max_send_wr = qia.cap.max_recv_wr = 4;
  qia.cap.max_send_sge = qia.cap.max_recv_sge = 1;
  qia.qp_type = IBV_QPT_RC;
  struct ernic_rdma_conn_param cp;
  memset(&cp, 0, sizeof cp);
  cp.server_ip = getenv("ERNIC_PEER_IP");
  cp.port = 7471;
  cp.path_mtu = IBV_MTU_1024;
  cp.sq_psn = ERNIC_RDMA_PSN_AUTO;
  struct ernic_rdma_peer peer;
  struct ernic_rdma_conn_param bad = cp;
  bad.server_ip = "10.0.0.300";
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &bad, &peer) && errno == EINVAL, "server_ip 10.0.0.300: errno %d", errno);
  bad.server_ip = "10.0.0.77"; /* no neighbour entry */
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &bad, &peer) && errno == EINVAL, "a server without a MAC: errno %d", errno);
  bad = cp;
  bad.path_mtu = (enum ibv_mtu)6;
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &bad, &peer) && errno == EINVAL, "path_mtu 6: errno %d", errno);
  bad = cp;
  bad.sq_psn = 1u << 24;
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &bad, &peer) && errno == EINVAL, "sq_psn 2^24: errno %d", errno);
  bad = cp;
  bad.advertise = local_mr; /* the NIC does not know a local MR */
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &bad, &peer) && errno == EINVAL, "advertising a local MR: errno %d", errno);
  qia.qp_type = IBV_QPT_UD;
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &cp, &peer) && errno == EINVAL, "a UD QP: errno %d", errno);
  qia.qp_type = IBV_QPT_RC;
  errno = 0;
  CHECK(!ernic_rdma_connect(NULL, &qia, &cp, &peer) && errno == EINVAL, "no PD: errno %d", errno);
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, NULL, &peer) && errno == EINVAL, "no parameters: errno %d", errno);
  errno = 0;
  CHECK(!ernic_rdma_connect(pd, &qia, &cp, &peer) && errno == ECONNREFUSED,
        "a ConnectRequest to B, which does not listen: errno %d (want ECONNREFUSED)", errno);
}

/* A second QP (QPN 3: the failed connects left it free) through RESET and
 * back: ibv_modify_qp RESET deletes the NIC's QP (the driver's destroy_qp:
 * disabled), the next RTS programs it again, enabled and not under
 * recovery, with the new TIMEOUTCONFi values; ibv_destroy_qp disables it.
 * It carries no traffic (its peer QPN 9 does not exist). */
static void reset_cycle(struct ibv_pd* pd, struct ibv_cq* cq) {
  struct ibv_qp_init_attr qia;
  memset(&qia, 0, sizeof qia);
  qia.send_cq = qia.recv_cq = cq;
  qia.cap.max_send_wr = qia.cap.max_recv_wr = 4;
  qia.qp_type = IBV_QPT_RC;
  struct ibv_qp* q = ibv_create_qp(pd, &qia);
  if (!q) die("create_qp (second QP)");
  const uint32_t n = q->qp_num;
  CHECK(n == env_u64("ERNIC_QPN") + 1, "second QP: QPN %u, want %" PRIu64, n, env_u64("ERNIC_QPN") + 1);
  struct in_addr ip;
  if (inet_pton(AF_INET, getenv("ERNIC_PEER_IP"), &ip) != 1) die("ERNIC_PEER_IP");
  for (int round = 0; round < 2; ++round) {
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    CHECK(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0, "round %d: INIT", round);
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_4096;
    a.dest_qp_num = 9;
    a.rq_psn = 0x1000;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid.raw[10] = a.ah_attr.grh.dgid.raw[11] = 0xff;
    memcpy(&a.ah_attr.grh.dgid.raw[12], &ip.s_addr, 4);
    CHECK(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) == 0,
          "round %d: RTR", round);
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0x2000;
    a.timeout = (uint8_t)(round ? 20 : 0); /* round 0: no timeout given: the driver's 14 */
    CHECK(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | (round ? IBV_QP_TIMEOUT : 0)) == 0, "round %d: RTS",
          round);
    const uint32_t conf = reg(ERNIC_QPREG(QPCONFi, n)), to = reg(ERNIC_QPREG(TIMEOUTCONFi, n));
    const uint32_t want_to = ERNIC_SET(TIMEOUTCONFi_ACK_TIMEOUT, round ? 20 : 14) |
                             ERNIC_SET(TIMEOUTCONFi_RETRY_CNT, 3) | ERNIC_SET(TIMEOUTCONFi_RNR_RETRY_CNT, 3) |
                             ERNIC_SET(TIMEOUTCONFi_RNR_TIMER, 31);
    CHECK(ERNIC_GET(QPCONFi_EN, conf) == 1 && ERNIC_GET(QPCONFi_UNDER_RECOVERY, conf) == 0 && to == want_to,
          "round %d in RTS: QPCONFi 0x%08x, TIMEOUTCONFi 0x%08x (want 0x%08x)", round, conf, to, want_to);
    if (round == 0) {
      memset(&a, 0, sizeof a);
      a.qp_state = IBV_QPS_RESET;
      CHECK(ibv_modify_qp(q, &a, IBV_QP_STATE) == 0 && q->state == IBV_QPS_RESET && q->qp_num == n,
            "RTS -> RESET: state %d QPN %u", (int)q->state, q->qp_num);
      CHECK(ERNIC_GET(QPCONFi_EN, reg(ERNIC_QPREG(QPCONFi, n))) == 0, "QPCONFi 0x%08x after RESET",
            reg(ERNIC_QPREG(QPCONFi, n)));
    }
  }
  CHECK(ibv_destroy_qp(q) == 0 && ERNIC_GET(QPCONFi_EN, reg(ERNIC_QPREG(QPCONFi, n))) == 0,
        "destroying the second QP: QPCONFi 0x%08x", reg(ERNIC_QPREG(QPCONFi, n)));
}

/* PG332's unsupported lengths (model/regs/pg332_limits.h) are refused
 * with EINVAL at the WR, the restriction named in the last error. */
static void pg332_length_checks(struct ibv_qp* qp, uint8_t* src, struct ibv_mr* src_mr, uint8_t* rd,
                                struct ibv_mr* rd_mr) {
  struct ibv_send_wr w;
  struct ibv_sge s = sge(src, 0, src_mr->lkey);
  wr_init(&w, 7, IBV_WR_SEND, &s, IBV_SEND_SIGNALED);
  refused(qp, &w, EINVAL, "a zero-length SEND");
  CHECK(strstr(ernic_ibv_last_error(ctx), "PG332: zero-length SENDs") != NULL, "zero SEND: restriction not named");
  wr_init(&w, 7, IBV_WR_SEND_WITH_IMM, &s, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
  refused(qp, &w, EINVAL, "a zero-length inline SEND with immediate");
  CHECK(strstr(ernic_ibv_last_error(ctx), "PG332: zero-length SENDs") != NULL, "zero inline SEND: not named");
  for (uint32_t len = 0; len <= 4; len += 4) {
    struct ibv_sge r = sge(rd, len, rd_mr->lkey);
    wr_init(&w, 7, IBV_WR_RDMA_READ, &r, IBV_SEND_SIGNALED);
    w.wr.rdma.remote_addr = env_u64("ERNIC_PEER_VA");
    w.wr.rdma.rkey = (uint32_t)env_u64("ERNIC_PEER_RKEY");
    refused(qp, &w, EINVAL, len ? "a 4-byte READ" : "a zero-length READ");
    CHECK(strstr(ernic_ibv_last_error(ctx), "PG332: READs of 4 bytes or less") != NULL, "READ of %u: not named", len);
  }
  const enum ibv_wr_opcode big_ops[3] = {IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_WR_RDMA_READ};
  for (int i = 0; i < 3; ++i) {
    struct ibv_sge b = sge(src, (8u << 20) + 1, src_mr->lkey);
    wr_init(&w, 7, big_ops[i], &b, IBV_SEND_SIGNALED);
    refused(qp, &w, EINVAL, "a message of 8 MiB + 1");
    CHECK(strstr(ernic_ibv_last_error(ctx), "PG332: RDMA messages are limited to 8 MiB") != NULL,
          "8 MiB + 1 (opcode %d): not named", (int)big_ops[i]);
  }
}

/* A destroyed object's handle stays invalid for the life of the context:
 * its address is not handed out again to the next object of its kind. */
static void tombstone_checks(struct ibv_pd* pd, struct ibv_cq* cq, uint8_t* buf) {
  struct ibv_wc wc;
  struct ibv_qp_init_attr qia;
  memset(&qia, 0, sizeof qia);
  qia.send_cq = qia.recv_cq = cq;
  qia.cap.max_send_wr = qia.cap.max_recv_wr = 4;
  qia.qp_type = IBV_QPT_RC;
  struct ibv_qp* q1 = ibv_create_qp(pd, &qia);
  if (!q1 || ibv_destroy_qp(q1)) die("create_qp / destroy_qp (tombstones)");
  struct ibv_qp* q2 = ibv_create_qp(pd, &qia);
  if (!q2) die("create_qp (tombstones)");
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  CHECK(q2 != q1 && ibv_query_qp(q1, &a, 0, &ia) == EINVAL && ibv_destroy_qp(q1) == EINVAL,
        "a destroyed QP's handle: %s", q2 == q1 ? "reused" : "live");
  CHECK(ibv_query_qp(q2, &a, 0, &ia) == 0 && ibv_destroy_qp(q2) == 0, "the new QP suffered from the stale handle");

  struct ibv_cq* c1 = ibv_create_cq(ctx, 4, NULL, NULL, 0);
  if (!c1 || ibv_destroy_cq(c1)) die("create_cq / destroy_cq (tombstones)");
  struct ibv_cq* c2 = ibv_create_cq(ctx, 4, NULL, NULL, 0);
  CHECK(c2 && c2 != c1 && ibv_poll_cq(c1, 1, &wc) == -EINVAL && ibv_destroy_cq(c1) == EINVAL,
        "a destroyed CQ's handle is live again");
  if (!c2 || ibv_destroy_cq(c2)) die("destroy_cq (tombstones)");

  struct ibv_mr* m1 = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
  if (!m1 || ibv_dereg_mr(m1)) die("reg_mr / dereg_mr (tombstones)");
  struct ibv_mr* m2 = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
  CHECK(m2 && m2 != m1 && ibv_dereg_mr(m1) == EINVAL,
        "a deregistered MR's handle is live again");
  if (!m2 || ibv_dereg_mr(m2)) die("dereg_mr (tombstones)");

  struct ibv_pd* p1 = ibv_alloc_pd(ctx);
  if (!p1 || ibv_dealloc_pd(p1)) die("alloc_pd / dealloc_pd (tombstones)");
  struct ibv_pd* p2 = ibv_alloc_pd(ctx);
  errno = 0;
  CHECK(p2 && p2 != p1 && ibv_dealloc_pd(p1) == EINVAL && !ibv_reg_mr(p1, buf, 64, 0) && errno == EINVAL,
        "a deallocated PD's handle is live again");
  if (!p2 || ibv_dealloc_pd(p2)) die("dealloc_pd (tombstones)");

  struct ibv_comp_channel* h1 = ibv_create_comp_channel(ctx);
  if (!h1 || ibv_destroy_comp_channel(h1)) die("create / destroy comp_channel (tombstones)");
  struct ibv_comp_channel* h2 = ibv_create_comp_channel(ctx);
  errno = 0;
  CHECK(h2 && h2 != h1 && ibv_destroy_comp_channel(h1) == EINVAL && !ibv_create_cq(ctx, 4, NULL, h1, 0) &&
            errno == EINVAL,
        "a destroyed channel's handle is live again");
  if (!h2 || ibv_destroy_comp_channel(h2)) die("destroy comp_channel (tombstones)");
}

/* NULL and foreign pointers everywhere: errors, no crash. */
static void null_checks(void) {
  struct ibv_send_wr* sb = NULL;
  struct ibv_recv_wr* rb = NULL;
  struct ibv_cq* cqp = NULL;
  void* cctx = NULL;
  struct ibv_wc wc;
  CHECK(ibv_close_device(NULL) == EINVAL, "close_device(NULL)");
  CHECK(!ibv_alloc_pd(NULL) && errno == EINVAL, "alloc_pd(NULL): errno %d", errno);
  CHECK(!ibv_reg_mr(NULL, NULL, 0, 0) && errno == EINVAL, "reg_mr(NULL): errno %d", errno);
  CHECK(!ibv_create_cq(NULL, 1, NULL, NULL, 0) && errno == EINVAL, "create_cq(NULL): errno %d", errno);
  CHECK(!ibv_create_comp_channel(NULL), "create_comp_channel(NULL)");
  CHECK(!ibv_create_qp(NULL, NULL), "create_qp(NULL, NULL)");
  CHECK(ibv_post_send(NULL, NULL, &sb) == EINVAL, "post_send(NULL)");
  CHECK(ibv_post_recv(NULL, NULL, &rb) == EINVAL, "post_recv(NULL)");
  CHECK(ibv_modify_qp(NULL, NULL, 0) == EINVAL, "modify_qp(NULL)");
  CHECK(ibv_query_qp(NULL, NULL, 0, NULL) == EINVAL, "query_qp(NULL)");
  CHECK(ibv_poll_cq(NULL, 1, &wc) < 0, "poll_cq(NULL)");
  CHECK(ibv_req_notify_cq(NULL, 0) == EINVAL, "req_notify_cq(NULL)");
  CHECK(ibv_get_cq_event(NULL, &cqp, &cctx) == -1 && errno == EINVAL, "get_cq_event(NULL): errno %d", errno);
  ibv_ack_cq_events(NULL, 1);
  CHECK(ibv_destroy_cq(NULL) == EINVAL && ibv_destroy_qp(NULL) == EINVAL && ibv_dereg_mr(NULL) == EINVAL &&
            ibv_dealloc_pd(NULL) == EINVAL && ibv_destroy_comp_channel(NULL) == EINVAL,
        "destroying NULLs");
  CHECK(strcmp(ibv_wc_status_str((enum ibv_wc_status)999), "unknown") == 0, "status 999: %s",
        ibv_wc_status_str((enum ibv_wc_status)999));
  CHECK(!ernic_ibv_alloc_buf(NULL, 64, 0) && !ernic_ibv_bridge(NULL) && ernic_ibv_mr_remote_addr(NULL) == 0 &&
            ernic_ibv_add_neighbour(NULL, NULL, NULL) == EINVAL,
        "the ernic_ibv_ calls with NULL");
  errno = 0;
  CHECK(!ernic_rdma_connect(NULL, NULL, NULL, NULL) && errno == EINVAL, "ernic_rdma_connect(NULL...): errno %d", errno);
  ernic_ibv_set_event_timeout(NULL, 1);
}

/* `bridge_verbs_checks delay|wait_irq` (tb/bridge/verbs.py): a wait of
 * 2^62 ns, whose picoseconds do not fit in 64 bits, saturates: it runs the
 * simulation to the scenario's time limit instead of wrapping to a short
 * wait (the run ends there; the program must not get past the call). */
static int huge_wait(const char* which) {
  ernic_bridge* b = ernic_open(NULL);
  if (!b) {
    fprintf(stderr, "verbs_checks: %s\n", ernic_open_error());
    return 1;
  }
  const int r = strcmp(which, "delay") == 0 ? ernic_delay_ns(b, 1ull << 62) : ernic_wait_irq(b, 1ull << 62);
  printf("huge %s returned %d at %" PRIu64 " ps\n", which, r, ernic_now_ps(b));
  ernic_close(b);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1) return huge_wait(argv[1]);
  null_checks();
  ctx = ernic_ibv_open(NULL);
  if (!ctx) die("ernic_ibv_open");
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  struct ibv_pd* pd2 = ibv_alloc_pd(ctx);
  if (!pd || !pd2) die("alloc_pd");
  uint8_t* src = ernic_ibv_alloc_buf(ctx, 65536, 4096);
  uint8_t* rd = ernic_ibv_alloc_buf(ctx, 4096, 4096);
  uint8_t* rx = ernic_ibv_alloc_buf(ctx, 1024, 4096);
  if (!src || !rd || !rx) die("alloc_buf");
  for (int k = 0; k < 65536; ++k) src[k] = (uint8_t)(k * 7 + 3);
  struct ibv_mr* src_mr = ibv_reg_mr(pd, src, 65536, 0);
  struct ibv_mr* rd_mr = ibv_reg_mr(pd, rd, 4096, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mr* rx_mr = ibv_reg_mr(pd, rx, 1024, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_mr* other_pd_mr = ibv_reg_mr(pd2, src, 65536, IBV_ACCESS_LOCAL_WRITE);
  if (!src_mr || !rd_mr || !rx_mr || !other_pd_mr) die("reg_mr");

  /* MR registration errors. */
  errno = 0;
  CHECK(!ibv_reg_mr(pd, src, 65536, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
        "an atomic MR: errno %d", errno);
  errno = 0;
  CHECK(!ibv_reg_mr(pd, src, 65536, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
        "REMOTE_WRITE without LOCAL_WRITE: errno %d", errno);
  mr_checks(pd, src);
  static uint8_t not_dma[64];
  errno = 0;
  CHECK(!ibv_reg_mr(pd, not_dma, sizeof not_dma, 0) && errno == EINVAL, "memory outside DMA: errno %d", errno);
  /* Only a range inside one buffer of ernic_ibv_alloc_buf: not the
   * driver's memory just below the first buffer, not across two buffers. */
  errno = 0;
  CHECK(!ibv_reg_mr(pd, src - 1, 2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
        "[buf - 1, +2) (the driver's memory) accepted: errno %d", errno);
  errno = 0;
  CHECK(!ibv_reg_mr(pd, rd + 4096 - 16, (size_t)(rx - (rd + 4096)) + 32, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
        "a range across two buffers accepted: errno %d", errno);
  CHECK(ernic_dma_bus(ernic_ibv_bridge(ctx), rd + 4096 - 16, (size_t)(rx - (rd + 4096)) + 32) == 0,
        "ernic_dma_bus of a range across two allocations");

  struct ibv_cq* cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
  if (!cq) die("create_cq");
  errno = 0;
  CHECK(!ibv_create_cq(ctx, 16, NULL, NULL, 3) && errno == EINVAL, "comp_vector 3: errno %d", errno);
  CHECK(ibv_req_notify_cq(cq, 0) == EINVAL, "arming a CQ without a channel accepted");

  /* QP creation errors. */
  struct ibv_qp_init_attr qia;
  memset(&qia, 0, sizeof qia);
  qia.send_cq = qia.recv_cq = cq;
  qia.cap.max_send_wr = 8;
  qia.cap.max_recv_wr = 4;
  qia.cap.max_send_sge = qia.cap.max_recv_sge = 1;
  qia.cap.max_inline_data = 16;
  qia.qp_type = IBV_QPT_UD;
  errno = 0;
  CHECK(!ibv_create_qp(pd, &qia) && errno == EINVAL, "a UD QP: errno %d", errno);
  qia.qp_type = IBV_QPT_UC;
  errno = 0;
  CHECK(!ibv_create_qp(pd, &qia) && errno == EINVAL, "a UC QP: errno %d", errno);
  qia.qp_type = IBV_QPT_RC;
  qia.cap.max_send_sge = 2;
  errno = 0;
  CHECK(!ibv_create_qp(pd, &qia) && errno == EINVAL, "max_send_sge 2: errno %d", errno);
  qia.cap.max_send_sge = 1;
  qia.srq = (struct ibv_srq*)&qia; /* any non-NULL SRQ */
  errno = 0;
  CHECK(!ibv_create_qp(pd, &qia) && errno == EINVAL, "an SRQ: errno %d", errno);
  qia.srq = NULL;
  errno = 0;
  CHECK(!ibv_create_qp((struct ibv_pd*)&qia, &qia) && errno == EINVAL, "a PD the library never gave: errno %d", errno);
  struct ibv_qp* qp = ibv_create_qp(pd, &qia);
  if (!qp) die("create_qp");
  CHECK(qp->qp_num == env_u64("ERNIC_QPN"), "QPN %u, the scenario connected %" PRIu64, qp->qp_num, env_u64("ERNIC_QPN"));
  {
    struct ibv_send_wr w;
    struct ibv_sge s = sge(src, 8, src_mr->lkey);
    wr_init(&w, 1, IBV_WR_SEND, &s, IBV_SEND_SIGNALED);
    refused(qp, &w, EINVAL, "post_send in RESET");
  }
  CHECK(ibv_modify_qp(qp, NULL, IBV_QP_STATE) == EINVAL, "modify_qp(qp, NULL)");
  {
    struct ibv_recv_wr* rb = NULL;
    struct ibv_cq* cqp = NULL;
    CHECK(ibv_post_recv(qp, NULL, &rb) == EINVAL, "post_recv(qp, NULL)");
    CHECK(ibv_query_qp(qp, NULL, 0, NULL) == EINVAL, "query_qp(qp, NULL)");
    CHECK(ibv_poll_cq(cq, 1, NULL) < 0, "poll_cq(cq, 1, NULL)");
    CHECK(!ibv_create_qp(pd, NULL), "create_qp(pd, NULL)");
    CHECK(ibv_get_cq_event((struct ibv_comp_channel*)&qia, &cqp, NULL) == -1, "get_cq_event on a foreign pointer");
  }
  modify_checks_and_bring_up(qp);
  cm_checks(pd, cq, rd_mr);
  reset_cycle(pd, cq);

  /* Receive WRs first: B's SENDs come later (tb/bridge/verbs_checks.yaml). */
  struct ibv_sge rs[2] = {sge(rx, 512, rx_mr->lkey), sge(rx + 512, 512, rx_mr->lkey)};
  struct ibv_recv_wr rw[2], *rbad = NULL;
  memset(rw, 0, sizeof rw);
  rw[0].wr_id = 0x500;
  rw[0].sg_list = &rs[0];
  rw[0].num_sge = 1;
  rw[0].next = &rw[1];
  rw[1].wr_id = 0x501;
  rw[1].sg_list = &rs[1];
  rw[1].num_sge = 1;
  CHECK(ibv_post_recv(qp, rw, &rbad) == 0 && rbad == NULL, "post_recv refused");
  {
    struct ibv_sge bs = sge(src, 512, src_mr->lkey); /* no LOCAL_WRITE */
    struct ibv_recv_wr b;
    memset(&b, 0, sizeof b);
    b.sg_list = &bs;
    b.num_sge = 1;
    CHECK(ibv_post_recv(qp, &b, &rbad) == EINVAL && rbad == &b, "a receive into an MR without LOCAL_WRITE accepted");
  }

  /* Send WRs the library must refuse, each alone: bad_wr points at it. */
  struct ibv_send_wr w[9], *bad = NULL;
  struct ibv_sge s[9];
  for (int i = 0; i < 9; ++i) s[i] = sge(src + 64 * i, 64, src_mr->lkey);
  wr_init(&w[0], 7, IBV_WR_ATOMIC_FETCH_AND_ADD, &s[0], IBV_SEND_SIGNALED);
  refused(qp, &w[0], EINVAL, "an atomic");
  wr_init(&w[0], 7, IBV_WR_LOCAL_INV, &s[0], IBV_SEND_SIGNALED);
  refused(qp, &w[0], EINVAL, "a local invalidate");
  wr_init(&w[0], 7, (enum ibv_wr_opcode)99, &s[0], IBV_SEND_SIGNALED);
  refused(qp, &w[0], EINVAL, "opcode 99");
  wr_init(&w[0], 7, IBV_WR_RDMA_WRITE, &s[0], IBV_SEND_SIGNALED | IBV_SEND_FENCE);
  refused(qp, &w[0], EINVAL, "a fence");
  wr_init(&w[0], 7, IBV_WR_SEND, &s[0], IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
  refused(qp, &w[0], EINVAL, "a solicited event");
  wr_init(&w[0], 7, IBV_WR_RDMA_WRITE, &s[0], IBV_SEND_SIGNALED);
  w[0].num_sge = 2;
  refused(qp, &w[0], EINVAL, "two SGEs");
  w[0].num_sge = 0;
  refused(qp, &w[0], EINVAL, "no SGE");
  wr_init(&w[0], 7, IBV_WR_RDMA_WRITE, &s[0], IBV_SEND_SIGNALED | IBV_SEND_INLINE);
  refused(qp, &w[0], EINVAL, "an inline WRITE");
  struct ibv_sge big = sge(src, 17, src_mr->lkey);
  wr_init(&w[0], 7, IBV_WR_SEND, &big, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
  refused(qp, &w[0], EINVAL, "17 inline bytes");
  struct ibv_sge wrong_pd = sge(src, 64, other_pd_mr->lkey);
  wr_init(&w[0], 7, IBV_WR_SEND, &wrong_pd, IBV_SEND_SIGNALED);
  refused(qp, &w[0], EINVAL, "an lkey of another PD");
  struct ibv_sge outside = sge(src + 65536 - 32, 64, src_mr->lkey);
  wr_init(&w[0], 7, IBV_WR_SEND, &outside, IBV_SEND_SIGNALED);
  refused(qp, &w[0], EINVAL, "a range past the MR's end");
  struct ibv_sge no_write = sge(src, 64, src_mr->lkey);
  wr_init(&w[0], 7, IBV_WR_RDMA_READ, &no_write, IBV_SEND_SIGNALED);
  refused(qp, &w[0], EINVAL, "a READ into an MR without LOCAL_WRITE");
  {
    struct ibv_send_wr* b2 = NULL;
    wr_init(&w[0], 7, IBV_WR_SEND, &s[0], IBV_SEND_SIGNALED);
    CHECK(ibv_post_send((struct ibv_qp*)&qia, &w[0], &b2) == EINVAL && b2 == &w[0], "a QP the library never gave");
  }
  {
    /* A NULL sg_list with num_sge 1 is named as such. */
    wr_init(&w[0], 7, IBV_WR_SEND, NULL, IBV_SEND_SIGNALED);
    refused(qp, &w[0], EINVAL, "num_sge 1 with a NULL sg_list");
    CHECK(strstr(ernic_ibv_last_error(ctx), "sg_list is NULL") != NULL, "NULL sg_list not named");
  }
  pg332_length_checks(qp, src, src_mr, rd, rd_mr);
  struct ibv_wc wc[80];
  CHECK(collect(cq, wc, 1, 5000) == 0, "a refused WR completed (wr_id %" PRIu64 ")", wc[0].wr_id);

  /* A chain with a bad WR in the middle: the first is posted, the bad one
   * and the one after it are not. */
  const uint64_t peer_va = env_u64("ERNIC_PEER_VA");
  const uint32_t peer_rkey = (uint32_t)env_u64("ERNIC_PEER_RKEY");
  wr_init(&w[0], 0x100, IBV_WR_RDMA_WRITE, &s[0], IBV_SEND_SIGNALED);
  w[0].wr.rdma.remote_addr = peer_va;
  w[0].wr.rdma.rkey = peer_rkey;
  wr_init(&w[1], 0x101, IBV_WR_RDMA_WRITE, &s[1], IBV_SEND_SIGNALED);
  w[1].num_sge = 3;
  wr_init(&w[2], 0x102, IBV_WR_SEND, &s[2], IBV_SEND_SIGNALED);
  w[0].next = &w[1];
  w[1].next = &w[2];
  CHECK(ibv_post_send(qp, &w[0], &bad) == EINVAL && bad == &w[1], "the chain's bad WR: bad_wr %s",
        bad == &w[1] ? "at it" : "elsewhere");
  int n = collect(cq, wc, 2, 20000);
  CHECK(n == 1 && wc[0].wr_id == 0x100 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RDMA_WRITE,
        "after the chain: %d completions, first wr_id 0x%" PRIx64 " (want exactly 0x100)", n, wc[0].wr_id);

  /* Every opcode, in one chain; unsignaled ones give no completion. */
  struct ibv_sge rds = sge(rd, 64, rd_mr->lkey);
  wr_init(&w[0], 0x200, IBV_WR_RDMA_WRITE, &s[3], IBV_SEND_SIGNALED);
  wr_init(&w[1], 0x201, IBV_WR_RDMA_WRITE_WITH_IMM, &s[4], 0); /* unsignaled */
  wr_init(&w[2], 0x202, IBV_WR_SEND, &s[5], IBV_SEND_SIGNALED);
  wr_init(&w[3], 0x203, IBV_WR_SEND_WITH_IMM, &s[6], IBV_SEND_SIGNALED);
  wr_init(&w[4], 0x204, IBV_WR_SEND_WITH_INV, &s[7], IBV_SEND_SIGNALED);
  wr_init(&w[5], 0x205, IBV_WR_RDMA_READ, &rds, IBV_SEND_SIGNALED);
  w[0].wr.rdma.remote_addr = peer_va + 4096;
  w[1].wr.rdma.remote_addr = peer_va + 8192;
  w[5].wr.rdma.remote_addr = peer_va + 4096; /* reads back what w[0] wrote */
  w[0].wr.rdma.rkey = w[1].wr.rdma.rkey = w[5].wr.rdma.rkey = peer_rkey;
  w[1].imm_data = htonl(0xC0FFEE);
  w[3].imm_data = htonl(0xABCD);
  w[4].invalidate_rkey = 0xFF05; /* MR index 0xFF: none */
  for (int i = 0; i < 5; ++i) w[i].next = &w[i + 1];
  CHECK(ibv_post_send(qp, &w[0], &bad) == 0 && bad == NULL, "the opcode chain refused");
  n = collect(cq, wc, 5, 50000);
  const uint64_t want_id[5] = {0x200, 0x202, 0x203, 0x204, 0x205};
  const enum ibv_wc_opcode want_op[5] = {IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_READ};
  CHECK(n == 5, "%d completions of the opcode chain, want 5", n);
  for (int i = 0; i < n && i < 5; ++i)
    CHECK(wc[i].wr_id == want_id[i] && wc[i].opcode == want_op[i] && wc[i].status == IBV_WC_SUCCESS &&
              wc[i].byte_len == 64 && wc[i].qp_num == qp->qp_num && wc[i].src_qp == env_u64("ERNIC_PEER_QPN"),
          "completion %d: wr_id 0x%" PRIx64 " opcode %d status %s byte_len %u", i, wc[i].wr_id, (int)wc[i].opcode,
          ibv_wc_status_str(wc[i].status), wc[i].byte_len);
  CHECK(memcmp(rd, src + 3 * 64, 64) == 0, "the READ brought back other bytes than the WRITE put there");
  CHECK(collect(cq, wc, 1, 5000) == 0, "a completion for the unsignaled WR (wr_id 0x%" PRIx64 ")", wc[0].wr_id);

  /* The SQ holds max_send_wr (8) WRs: the ninth of a chain is refused. */
  for (int i = 0; i < 9; ++i) {
    wr_init(&w[i], 0x300 + (uint64_t)i, IBV_WR_RDMA_WRITE, &s[i], IBV_SEND_SIGNALED);
    w[i].wr.rdma.remote_addr = peer_va + 12288 + 64 * (uint64_t)i;
    w[i].wr.rdma.rkey = peer_rkey;
    w[i].next = i < 8 ? &w[i + 1] : NULL;
  }
  CHECK(ibv_post_send(qp, &w[0], &bad) == ENOMEM && bad == &w[8], "a ninth WR: bad_wr %s",
        bad == &w[8] ? "at it" : "elsewhere");
  n = collect(cq, wc, 8, 50000);
  CHECK(n == 8, "%d completions of 8", n);
  for (int i = 0; i < n; ++i)
    CHECK(wc[i].wr_id == 0x300 + (uint64_t)i && wc[i].status == IBV_WC_SUCCESS, "completion %d: wr_id 0x%" PRIx64, i,
          wc[i].wr_id);

  /* Across the 16-bit WRID wrap (the run starts at 65520): 64-bit wr_ids
   * come back in order, batch after batch. */
  int in_order = 0;
  for (int batch = 0; batch < 3; ++batch) {
    for (int i = 0; i < 8; ++i) {
      wr_init(&w[i], 0xFEED000000000000ull | (uint64_t)(batch * 8 + i), IBV_WR_RDMA_WRITE, &s[i], IBV_SEND_SIGNALED);
      w[i].wr.rdma.remote_addr = peer_va + 16384 + 64 * (uint64_t)i;
      w[i].wr.rdma.rkey = peer_rkey;
      w[i].next = i < 7 ? &w[i + 1] : NULL;
    }
    CHECK(ibv_post_send(qp, &w[0], &bad) == 0, "batch %d refused", batch);
    n = collect(cq, wc, 8, 50000);
    for (int i = 0; i < n; ++i) in_order += wc[i].wr_id == (0xFEED000000000000ull | (uint64_t)(batch * 8 + i));
  }
  CHECK(in_order == 24, "%d of 24 wr_ids came back in order across the WRID wrap", in_order);

  /* B's two SENDs (tb/bridge/verbs_checks.yaml: 100 and 200 bytes of its
   * incrementing pattern): one receive completion each. */
  n = collect(cq, wc, 2, 200000);
  CHECK(n == 2, "%d receive completions, want 2", n);
  for (int i = 0; i < n && i < 2; ++i) {
    CHECK(wc[i].wr_id == 0x500 + (uint64_t)i && wc[i].opcode == IBV_WC_RECV && wc[i].status == IBV_WC_SUCCESS &&
              wc[i].byte_len == 512 && wc[i].wc_flags == 0,
          "receive %d: wr_id 0x%" PRIx64 " opcode %d byte_len %u flags %u", i, wc[i].wr_id, (int)wc[i].opcode,
          wc[i].byte_len, wc[i].wc_flags);
  }
  int same = 0;
  for (int k = 0; k < 100; ++k) same += rx[k] == (uint8_t)k;
  for (int k = 0; k < 200; ++k) same += rx[512 + k] == (uint8_t)(100 + k);
  CHECK(same == 300, "%d of the 300 received bytes are B's", same);

  /* The bridge's DMA-write stop (ernic_wait_event, the SYNC extension):
   * nothing in flight runs to the timeout; after a post, the first of the
   * NIC's DMA writes into this program's memory ends the wait, long before
   * the timeout (verbs.py compares the time with the log's DMA records). */
  {
    ernic_bridge* br = ernic_ibv_bridge(ctx);
    const uint64_t t0 = ernic_now_ps(br);
    const int r0 = ernic_wait_event(br, 3000, ERNIC_WAIT_DMA_WRITE);
    CHECK(r0 == 0 && ernic_now_ps(br) - t0 == 3000000, "an idle wait: %d after %" PRIu64 " ps", r0,
          ernic_now_ps(br) - t0);
    wr_init(&w[0], 0x600, IBV_WR_RDMA_WRITE, &s[0], IBV_SEND_SIGNALED);
    w[0].wr.rdma.remote_addr = peer_va + 20480;
    w[0].wr.rdma.rkey = peer_rkey;
    CHECK(ibv_post_send(qp, &w[0], &bad) == 0, "the WRITE for the DMA-write wait refused");
    const uint64_t t1 = ernic_now_ps(br);
    const int r1 = ernic_wait_event(br, 100000, ERNIC_WAIT_DMA_WRITE);
    const uint64_t t2 = ernic_now_ps(br);
    CHECK(r1 == (int)ERNIC_WAIT_DMA_WRITE && t2 > t1 && t2 - t1 < 10000000, "the DMA-write wait: %d after %" PRIu64 " ps",
          r1, t2 - t1);
    printf("dma-write wait from %" PRIu64 " ps woke at %" PRIu64 " ps\n", t1, t2);
    n = collect(cq, wc, 1, 50000);
    CHECK(n == 1 && wc[0].wr_id == 0x600 && wc[0].status == IBV_WC_SUCCESS, "the WRITE's completion: %d", n);
  }

  /* An error completion (last: it makes both QPs fatal): a WRITE with a
   * wrong R_Key is NAKed (remote access), ERNIC's CQE says "error", the
   * QP goes to ERR and the WR after it is flushed; a WR posted in ERR
   * completes at once with a flush error. The fatal interrupt is served by
   * the bus (Driver::service_interrupt) while the library waits. */
  {
    wr_init(&w[0], 0x700, IBV_WR_RDMA_WRITE, &s[0], IBV_SEND_SIGNALED);
    w[0].wr.rdma.remote_addr = peer_va;
    w[0].wr.rdma.rkey = peer_rkey ^ 0x80; /* another key byte */
    wr_init(&w[1], 0x701, IBV_WR_SEND, &s[1], 0); /* unsignaled: a flush is reported anyway */
    w[0].next = &w[1];
    CHECK(ibv_post_send(qp, &w[0], &bad) == 0, "the bad-R_Key chain refused");
    n = collect(cq, wc, 2, 100000);
    /* A's QP went fatal on the NAK (PG332 code 0x0A, NAK syndrome 0x62:
     * remote access): IBV_WC_REM_ACCESS_ERR, vendor_err the code. */
    CHECK(n == 2 && wc[0].wr_id == 0x700 && wc[0].status == IBV_WC_REM_ACCESS_ERR && wc[0].vendor_err == 0x0A &&
              wc[0].opcode == IBV_WC_RDMA_WRITE && wc[1].wr_id == 0x701 && wc[1].status == IBV_WC_WR_FLUSH_ERR &&
              wc[1].opcode == IBV_WC_SEND,
          "%d completions: 0x%" PRIx64 " %s (vendor_err 0x%x), 0x%" PRIx64 " %s", n, wc[0].wr_id,
          ibv_wc_status_str(wc[0].status), wc[0].vendor_err, wc[1].wr_id, ibv_wc_status_str(wc[1].status));
    CHECK(ERNIC_GET(STATQPi_FATAL, reg(ERNIC_QPREG(STATQPi, qp->qp_num))) == 1 &&
              ERNIC_GET(STATQPi_NAK_SYNDROME, reg(ERNIC_QPREG(STATQPi, qp->qp_num))) == 0x62,
          "STATQPi 0x%08x: fatal with NAK syndrome 0x62 expected", reg(ERNIC_QPREG(STATQPi, qp->qp_num)));
    CHECK(qp->state == IBV_QPS_ERR, "state %d after the error completion, want ERR", (int)qp->state);
    wr_init(&w[0], 0x702, IBV_WR_SEND, &s[0], IBV_SEND_SIGNALED);
    CHECK(ibv_post_send(qp, &w[0], &bad) == 0 && ibv_poll_cq(cq, 2, wc) == 1 && wc[0].wr_id == 0x702 &&
              wc[0].status == IBV_WC_WR_FLUSH_ERR,
          "a WR posted in ERR: wr_id 0x%" PRIx64 " %s", wc[0].wr_id, ibv_wc_status_str(wc[0].status));
  }

  /* The CQ holds cqe (64) completions: WRs posted in ERR complete at once
   * (flushed); 64 waiting are fine, a 65th is a CQ overrun: the CQ is in
   * error and every poll fails (EOVERFLOW). */
  {
    int posted = 0;
    for (int round = 0; round < 2; ++round) {
      const int want = round ? 65 : 64;
      posted = 0;
      while (posted < want) {
        const int k = want - posted < 7 ? want - posted : 7; /* max_send_wr 8 per chain */
        for (int i = 0; i < k; ++i) {
          wr_init(&w[i], 0x800 + (uint64_t)(posted + i), IBV_WR_SEND, &s[i], IBV_SEND_SIGNALED);
          w[i].next = i + 1 < k ? &w[i + 1] : NULL;
        }
        if (ibv_post_send(qp, &w[0], &bad)) die("post_send in ERR");
        posted += k;
      }
      n = ibv_poll_cq(cq, 80, wc);
      if (round == 0)
        CHECK(n == 64 && wc[63].wr_id == 0x800 + 63 && wc[63].status == IBV_WC_WR_FLUSH_ERR,
              "64 completions in a CQ of 64: poll %d", n);
      else
        CHECK(n == -EOVERFLOW && errno == EOVERFLOW && strstr(ernic_ibv_last_error(ctx), "overrun") != NULL &&
                  ibv_poll_cq(cq, 80, wc) == -EOVERFLOW,
              "65 completions in a CQ of 64: poll %d errno %d", n, errno);
    }
  }

  /* Pointers the library does not know are EINVAL, not crashes. */
  CHECK(ibv_destroy_qp((struct ibv_qp*)&qia) == EINVAL, "destroying a QP the library never gave");
  CHECK(ibv_poll_cq((struct ibv_cq*)&qia, 1, wc) < 0, "polling a CQ the library never gave");
  CHECK(ibv_poll_cq(cq, -1, wc) < 0, "num_entries -1");
  CHECK(ibv_dealloc_pd(pd) == EBUSY, "a PD in use deallocated");
  tombstone_checks(pd2, cq, src);
  CHECK(ibv_destroy_cq(cq) == EBUSY, "a CQ in use destroyed");

  /* Destroying the fatal QP: the driver's QP deletion disables it at once
   * (it is fatal: nothing more completes). */
  const uint32_t qpn = qp->qp_num;
  if (ibv_destroy_qp(qp)) die("destroy_qp");
  CHECK(ERNIC_GET(QPCONFi_EN, reg(ERNIC_QPREG(QPCONFi, qpn))) == 0, "QPCONFi 0x%08x after destroy_qp",
        reg(ERNIC_QPREG(QPCONFi, qpn)));
  CHECK(ibv_destroy_qp(qp) == EINVAL, "a QP destroyed twice");
  if (ibv_dereg_mr(src_mr) || ibv_dereg_mr(rd_mr) || ibv_dereg_mr(rx_mr) || ibv_dereg_mr(other_pd_mr)) die("dereg_mr");
  CHECK(ibv_dereg_mr(src_mr) == EINVAL, "an MR deregistered twice");
  if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_dealloc_pd(pd2)) die("destroy");
  CHECK(ibv_dealloc_pd(pd) == EINVAL, "a PD deallocated twice");
  if (ibv_close_device(ctx)) {
    ctx = NULL;
    die("close_device");
  }
  ctx = NULL;
  printf("verbs_checks: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
