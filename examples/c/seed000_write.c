/* examples/c/seed000_write.c: seed 000's PG332 flow as a user's C program,
 * the host of a node with `host: program` (scenarios/examples/bridge_c_write.yaml).
 *
 *   1. the error buffer first (without it the IP logs nothing), MAC and IP
 *   2. the incoming error-status queue, write-retry and response-error buffers
 *   3. interrupts (completion, fatal, MAD), the base count, XRNICCONF enable
 *   4. QP1 (GSI, seed 000 section 3): its SQ, an RQ of 512-byte elements,
 *      its CQ, the CQ-head and RQ-write-pointer mirrors, QDEPTH, and QPCONF
 *      with the RQ interrupt
 *   5. an MR over the program's source buffer (seed 000 section 4): MR
 *      table entry 0 with PDPDNUM, VIRTADDR (the program's pointer),
 *      BUFBASEADDR (its bus address), BUFRKEY, WRRDBUFLEN and ACCESSDESC
 *      (remote read only)
 *   6. an RC QP towards the peer the scenario connected (out of band: the
 *      QPN, PSNs, MAC, IP and the peer's MR come from the environment), in
 *      the MR's protection domain (PDi = PDPDNUM)
 *   7. an RDMA WRITE of an incrementing pattern into the peer's MR; the
 *      completion interrupt, then the CQ polled through its head mirror
 *      (CQDBADDi) as seed 000 section 6.2 polls it
 *   8. a fatal error on this node alone: a WRITE whose local address is
 *      the first bus address past the host memory. The NIC's payload read
 *      fails, nothing goes on the wire (the peer sees nothing), and the QP
 *      turns fatal with code 0x05 (WQE processor). Checked: the fatal
 *      interrupt, the error-status queue entry (QPN, code), STATQPi[0], the
 *      WQE's CQE with ERRFLAG, and that SQPSNi did not move
 *   9. PG332 ch.6's fatal recovery by hand (seed 000 section 7.1): under
 *      recovery, wait for the queues to drain, disable, SW override, zero
 *      the pointers, wait for CQHEADi to read 0, program the QP again with
 *      the SQ PSN the peer still expects, enable, end the override
 *  10. a WRITE again (8 KiB of 0x3C, into the peer's MR right after the
 *      first WRITE's bytes, at the next PSN) and its completion
 *
 * Every register it writes is read back and compared; each step's results
 * are checked and a failure names the step. Exit 0 only if all of it
 * holds; 2 for a missing or bad environment, 1 for anything else.
 * Build: with the project (libernic_bridge, ernic_bridge.h, ernic_regs_c.h).
 * examples/python/seed000_write.py is the same program, call for call.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ernic_bridge.h"
#include "ernic_regs_c.h"

/* The WQE as this driver posts it (PG332 Table 2-1: 64 bytes). */
struct wqe {
  uint16_t wrid;
  uint8_t rsvd0[2];
  uint64_t laddr;
  uint32_t length;
  uint8_t opcode, rsvd1[3];
  uint64_t roffset;
  uint32_t rtag;
  uint8_t sdata[16];
  uint32_t immdt;
  uint8_t rsvd2[12];
} __attribute__((packed));
enum { WQE_OP_WRITE = 0x00 };
/* The error-status queue's code for a WQE or payload outside host memory
 * (PG332: raised by the WQE processor; model/regs/fatal.h kWqe). */
enum { FATAL_WQE = 0x05 };
enum { QP1_DEPTH = 16, QP1_ELEM = 512 };                       /* as the 3.x drivers set QP1 up */
enum { MR_INDEX = 0, MR_PD = 1, MR_KEY = 0x3D };                 /* R_Key = index << 8 | key byte */
enum { WRID_FIRST = 0x5EED, WRID_BAD = 0xBAD0, WRID_AGAIN = 0x5EEF };
enum { AGAIN_BYTES = 8192, AGAIN_FILL = 0x3C };                  /* the WRITE after the recovery */
enum { OP_RC_WRITE_ONLY = 0x0A };                                /* BTH opcode, a message end */
#define IRQ_TIMEOUT_NS 1000000u                                  /* 1 ms of simulated time */

static ernic_bridge* nic;
static int failures;
static const char* step = "setup";
static uint32_t intsts_seen; /* every INTSTS bit any interrupt showed */

static void fail(const char* fmt, ...) {
  va_list ap;
  fprintf(stderr, "seed000_write: %s: ", step);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  ++failures;
}

/* A failure the next steps cannot go on from: ends the session, exit 1. */
static void give_up(void) {
  fprintf(stderr, "seed000_write: stopping after %s (%d problem(s))\n", step, failures);
  ernic_close(nic);
  exit(1);
}

static uint64_t env_u64(const char* name) {
  const char* v = getenv(name);
  if (!v) {
    fprintf(stderr, "seed000_write: %s is not set (run me from a scenario's program step)\n", name);
    exit(2);
  }
  return strtoull(v, NULL, 0);
}

static void parse_mac(const char* s, uint8_t mac[6]) {
  unsigned b[6];
  if (!s || sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6) {
    fprintf(stderr, "seed000_write: bad MAC address '%s'\n", s ? s : "(none)");
    exit(2);
  }
  for (int i = 0; i < 6; ++i) mac[i] = (uint8_t)b[i];
}

static uint32_t parse_ip(const char* s) {
  unsigned a, b, c, d;
  if (!s || sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d) != 4) {
    fprintf(stderr, "seed000_write: bad IPv4 address '%s'\n", s ? s : "(none)");
    exit(2);
  }
  return a << 24 | b << 16 | c << 8 | d;
}

/* write_reg in seed 000's sense, read back and compared. */
static void write_reg(uint32_t addr, uint32_t value) {
  ernic_write32(nic, addr, value);
  const uint32_t got = ernic_read32(nic, addr);
  if (got != value) fail("register 0x%05x: wrote 0x%08x, read back 0x%08x", addr, value, got);
}

static uint64_t alloc(size_t bytes, size_t align, void** va) {
  const uint64_t bus = ernic_dma_alloc(nic, bytes, align, va);
  if (!bus) {
    fprintf(stderr, "seed000_write: %zu bytes of DMA memory: %s\n", bytes,
            ernic_error(nic) ? ernic_error(nic) : "do not fit in the host memory (ERNIC_BRIDGE_MEM_MIB)");
    exit(1);
  }
  return bus;
}

static double us_since(uint64_t t_ps) { return (double)(ernic_now_ps(nic) - t_ps) / 1e6; }

/* Interrupts until INTSTS has shown a bit of `want`: for each MSI-X message
 * INTSTS is read and cleared (W1C). Returns the bits seen; 0 bits of `want`
 * on a timeout (a failure). */
static uint32_t take_irq(uint32_t want) {
  const uint64_t deadline = ernic_now_ps(nic) + (uint64_t)IRQ_TIMEOUT_NS * 1000;
  uint32_t seen = 0;
  while (!(seen & want)) {
    const uint64_t now = ernic_now_ps(nic);
    const int r = now < deadline ? ernic_wait_irq(nic, (deadline - now) / 1000) : 0;
    if (r != 1) {
      fail("no interrupt with INTSTS bits 0x%x within %u us (%s; INTSTS showed 0x%x)", want, IRQ_TIMEOUT_NS / 1000,
           r < 0 ? ernic_error(nic) : "timeout", seen);
      break;
    }
    const uint32_t sts = ernic_read32(nic, ERNIC_REG(INTSTS));
    ernic_write32(nic, ERNIC_REG(INTSTS), sts); /* W1C */
    seen |= sts;
  }
  intsts_seen |= seen;
  return seen;
}

/* A CQ as the program sees it: the ring, the CQ-head mirror (CQDBADDi),
 * and the index of the next CQE to take. */
struct cq {
  volatile uint32_t* ring;
  volatile uint32_t* head_mirror;
  uint32_t depth, ci;
};

/* Seed 000 section 6.2: compare the CQ head with the last one seen and take
 * each new CQE. The head is read from its mirror, which ERNIC writes after
 * the CQE; between looks the program sleeps until the NIC's next DMA write
 * into its memory. Returns how many of `want` CQEs it took into out[]. */
static uint32_t poll_cq(struct cq* q, uint32_t want, uint32_t* out, uint64_t timeout_ns) {
  const uint64_t deadline = ernic_now_ps(nic) + timeout_ns * 1000;
  uint32_t got = 0;
  for (;;) {
    const uint32_t head = *q->head_mirror % q->depth;
    while (q->ci != head && got < want) {
      out[got++] = q->ring[q->ci];
      q->ci = (q->ci + 1) % q->depth;
    }
    if (got == want || ernic_now_ps(nic) >= deadline) return got;
    if (ernic_wait_until(nic, deadline, ERNIC_WAIT_DMA_WRITE) < 0) return got;
  }
}

/* CQE (PG332): [15:0] wr_id, [23:16] opcode, [31:24] error flag. */
static void check_cqe(uint32_t cqe, uint32_t wrid, uint32_t opcode, uint32_t errflag) {
  if ((cqe & 0xFFFF) != wrid || ((cqe >> 16) & 0xFF) != opcode || (cqe >> 24) != errflag)
    fail("CQE 0x%08x: expected wr_id 0x%04x, opcode %u (WRITE), ERRFLAG %u", cqe, wrid, opcode, errflag);
}

/* The RC QP and what the connection gave it. */
struct rc_qp {
  uint32_t qpn, peer_qpn, peer_psn, peer_ip, conf;
  uint8_t peer_mac[6];
};

/* The QP's registers that name the peer and the PSNs: set up in step 6,
 * written again by the recovery (PG332 ch.6 step 5). */
static void program_qp_peer(const struct rc_qp* q, uint32_t sq_psn) {
  const uint32_t n = q->qpn;
  const uint8_t* m = q->peer_mac;
  write_reg(ERNIC_QPREG(DESTQPCONFi, n), ERNIC_SET(DESTQPCONFi_QPN, q->peer_qpn));
  write_reg(ERNIC_QPREG(SQPSNi, n), sq_psn);
  /* The last request "accepted": the peer's PSN - 1, a message-ending opcode (RC WRITE ONLY 0x0A). */
  write_reg(ERNIC_QPREG(LSTRQREQi, n),
            ERNIC_SET(LSTRQREQi_PSN, (q->peer_psn - 1) & 0xFFFFFF) | ERNIC_SET(LSTRQREQi_OPCODE, OP_RC_WRITE_ONLY));
  write_reg(ERNIC_QPREG(MACDESADDLSBi, n), (uint32_t)m[2] << 24 | m[3] << 16 | m[4] << 8 | m[5]);
  write_reg(ERNIC_QPREG(MACDESADDMSBi, n), (uint32_t)m[0] << 8 | m[1]);
  write_reg(ERNIC_QPREG(IPDESADDR1i, n), q->peer_ip);
  write_reg(ERNIC_QPREG(TIMEOUTCONFi, n), ERNIC_SET(TIMEOUTCONFi_ACK_TIMEOUT, 14) | ERNIC_SET(TIMEOUTCONFi_RETRY_CNT, 3) |
                                              ERNIC_SET(TIMEOUTCONFi_RNR_RETRY_CNT, 3) | ERNIC_SET(TIMEOUTCONFi_RNR_TIMER, 0x1F));
  write_reg(ERNIC_QPREG(PDi, n), ERNIC_SET(PDi_PD, MR_PD));
  write_reg(ERNIC_QPREG(QPADVCONFi, n), ERNIC_SET(QPADVCONFi_TTL, 64) | ERNIC_SET(QPADVCONFi_PKEY, 0xFFFF));
}

static void post_write(struct wqe* slot, uint16_t wrid, uint64_t laddr, uint32_t length, uint64_t roffset,
                       uint32_t rkey) {
  memset(slot, 0, sizeof *slot);
  slot->wrid = wrid;
  slot->laddr = laddr;
  slot->length = length;
  slot->opcode = WQE_OP_WRITE;
  slot->roffset = roffset;
  slot->rtag = rkey;
}

/* PG332 ch.6 recovery step 2: the SQ and the outstanding queue empty
 * (STATQPi[9], [10]), every WQE completed (CQHEADi == SQPIi), and the
 * response handler's doorbell check (RESPHNDSTS[16]). Returns the number of
 * looks it took, 0 if the QP never drained. */
static unsigned wait_drained(uint32_t n, uint64_t timeout_ns) {
  const uint64_t deadline = ernic_now_ps(nic) + timeout_ns * 1000;
  for (unsigned looks = 1;; ++looks) {
    const uint32_t st = ernic_read32(nic, ERNIC_QPREG(STATQPi, n));
    const uint32_t head = ernic_read32(nic, ERNIC_QPREG(CQHEADi, n));
    const uint32_t pi = ernic_read32(nic, ERNIC_QPREG(SQPIi, n));
    const uint32_t rh = ernic_read32(nic, ERNIC_REG(RESPHNDSTS));
    if (ERNIC_GET(STATQPi_SQ_EMPTY, st) && ERNIC_GET(STATQPi_OSQ_EMPTY, st) &&
        ERNIC_GET(CQHEADi_VALUE, head) == ERNIC_GET(SQPIi_VALUE, pi) && ERNIC_GET(RESPHNDSTS_SQ_PICI_DB_CHECK_EN, rh))
      return looks;
    if (ernic_now_ps(nic) >= deadline) {
      fail("QP%u did not drain within %" PRIu64 " us (STATQPi 0x%08x, CQHEADi %u, SQPIi %u, RESPHNDSTS 0x%08x)", n,
           timeout_ns / 1000, st, head, pi, rh);
      return 0;
    }
    ernic_delay_ns(nic, 1000);
  }
}

int main(void) {
#ifdef ERNIC_LAYOUT_4X
  const char* built_for = "4.x";
#else
  const char* built_for = "3.1";
#endif
  if (getenv("ERNIC_LAYOUT") && strcmp(getenv("ERNIC_LAYOUT"), built_for) != 0) {
    fprintf(stderr, "seed000_write: built for the %s register layout, the node has %s (rebuild with%s "
            "-DERNIC_LAYOUT_4X)\n", built_for, getenv("ERNIC_LAYOUT"), strcmp(built_for, "3.1") ? "out" : "");
    return 2;
  }
  uint8_t mac[6];
  struct rc_qp qp;
  parse_mac(getenv("ERNIC_MAC"), mac);
  parse_mac(getenv("ERNIC_PEER_MAC"), qp.peer_mac);
  const uint32_t ip = parse_ip(getenv("ERNIC_IP"));
  qp.peer_ip = parse_ip(getenv("ERNIC_PEER_IP"));
  qp.qpn = (uint32_t)env_u64("ERNIC_QPN");
  const uint32_t psn = (uint32_t)env_u64("ERNIC_PSN");
  qp.peer_qpn = (uint32_t)env_u64("ERNIC_PEER_QPN");
  qp.peer_psn = (uint32_t)env_u64("ERNIC_PEER_PSN");
  const uint64_t peer_va = env_u64("ERNIC_PEER_VA");
  const uint32_t peer_rkey = (uint32_t)env_u64("ERNIC_PEER_RKEY");
  const uint64_t peer_len = env_u64("ERNIC_PEER_LEN");
  const uint32_t len = (uint32_t)(getenv("WRITE_BYTES") ? env_u64("WRITE_BYTES") : 65536);
  const uint32_t sq_depth = (uint32_t)env_u64("ERNIC_SQ_DEPTH"), rq_depth = (uint32_t)env_u64("ERNIC_RQ_DEPTH");
  const uint32_t rq_elem = (uint32_t)env_u64("ERNIC_RQ_ELEMENT_BYTES");
  const uint32_t pmtu = (uint32_t)env_u64("ERNIC_PMTU");
  const uint32_t num_qp = (uint32_t)env_u64("ERNIC_NUM_QP");
  const double core_mhz = strtod(getenv("ERNIC_CORE_MHZ") ? getenv("ERNIC_CORE_MHZ") : "200", NULL);
  if (len == 0 || peer_len < (uint64_t)len + AGAIN_BYTES) {
    fprintf(stderr, "seed000_write: the peer's MR (ERNIC_PEER_LEN %" PRIu64 ") must hold the WRITE (%u bytes) and "
            "the WRITE after the recovery (%u bytes) behind it\n", peer_len, len, (unsigned)AGAIN_BYTES);
    return 2;
  }
  if (sq_depth < 4) {
    fprintf(stderr, "seed000_write: ERNIC_SQ_DEPTH %u: this program needs 4 or more\n", sq_depth);
    return 2;
  }
  nic = ernic_open(NULL);
  if (!nic) {
    fprintf(stderr, "seed000_write: %s\n", ernic_open_error());
    return 1;
  }

  /* 1. Error buffer first; MAC and IP. */
  step = "1 (error buffer, MAC, IP)";
  const uint64_t errbuf = alloc(64 * 256, 4096, NULL);
  write_reg(ERNIC_REG(ERRBUFBA), (uint32_t)errbuf);
  write_reg(ERNIC_REG(ERRBUFBAMSB), (uint32_t)(errbuf >> 32));
  write_reg(ERNIC_REG(ERRBUFSZ), ERNIC_SET(ERRBUFSZ_NUM, 64) | ERNIC_SET(ERRBUFSZ_SIZE, 256));
  write_reg(ERNIC_REG(MACXADDLSB), (uint32_t)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5]);
  write_reg(ERNIC_REG(MACXADDMSB), (uint32_t)mac[0] << 8 | mac[1]);
  write_reg(ERNIC_REG(IPv4XADD), ip);

  /* 2. Error-status queue, write-retry data buffers, response-error buffer. */
  step = "2 (error-status queue, retry and response-error buffers)";
  volatile uint32_t* errq;
  const uint32_t errq_n = 64;
  const uint64_t errq_bus = alloc(errq_n * 8, 4096, (void**)&errq);
  write_reg(ERNIC_REG(IPKTERRQBA), (uint32_t)errq_bus);
  write_reg(ERNIC_REG(IPKTERRQBAMSB), (uint32_t)(errq_bus >> 32));
  write_reg(ERNIC_REG(IPKTERRQSZ), ERNIC_SET(IPKTERRQSZ_NUM, errq_n));
  const uint32_t datbuf_n = 16 * num_qp;
  const uint64_t datbuf = alloc((size_t)datbuf_n * 4096, 4096, NULL);
  write_reg(ERNIC_REG(DATBUFBA), (uint32_t)datbuf);
  write_reg(ERNIC_REG(DATBUFBAMSB), (uint32_t)(datbuf >> 32));
  write_reg(ERNIC_REG(DATBUFSZ), ERNIC_SET(DATBUFSZ_NUM, datbuf_n) | ERNIC_SET(DATBUFSZ_SIZE, 4096));
  const uint64_t resperr = alloc(64 * 256, 4096, NULL);
  write_reg(ERNIC_REG(RESPERRPKTBA), (uint32_t)resperr);
  write_reg(ERNIC_REG(RESPERRPKTBAMSB), (uint32_t)(resperr >> 32));
  write_reg(ERNIC_REG(RESPERRSZ), ERNIC_SET(RESPERRSZ_NUM, 64) | ERNIC_SET(RESPERRSZ_SIZE, 256));

  /* 3. Interrupts: completions, fatal errors, MADs on QP1; base count; enable. */
  step = "3 (interrupts, enable)";
  write_reg(ERNIC_REG(INTEN), ERNIC_SET(INTEN_WQE_DONE, 1) | ERNIC_SET(INTEN_FATAL, 1) | ERNIC_SET(INTEN_MAD, 1));
  const uint32_t basecnt = (uint32_t)ceil(log2(4.096 * core_mhz));
  const uint32_t adconf = ERNIC_SET(XRNICADCONF_BASE_COUNT, basecnt);
  write_reg(ERNIC_REG(XRNICADCONF), adconf);
#ifdef ERNIC_LAYOUT_4X /* 4.x: the QP count has its own register */
  write_reg(ERNIC_REG(XRNIC_CONF_QP_EN), ERNIC_SET(XRNIC_CONF_QP_EN_NUM_QP, num_qp));
  const uint32_t qp_count = 0;
#else /* 3.x: XRNICCONF[15:8], at most 255 */
  const uint32_t qp_count = ERNIC_SET(XRNICCONF_NUM_QP, num_qp > 255 ? 255 : num_qp);
#endif
  write_reg(ERNIC_REG(XRNICCONF), ERNIC_SET(XRNICCONF_EN, 1) | ERNIC_SET(XRNICCONF_ERRBUF_EN, 1) | qp_count |
                                      ERNIC_SET(XRNICCONF_UDP_SPORT, 0x12B7));

  /* 4. QP1 (GSI): SQ, RQ of 512-byte elements, CQ, the two mirrors. CM
   *    runs over it in software; here it is only made ready (the scenario
   *    connects out of band), so it must stay quiet: checked at the end. */
  step = "4 (QP1)";
  volatile uint32_t* qp1_db;
  const uint64_t qp1_sq = alloc(QP1_DEPTH * sizeof(struct wqe), 4096, NULL);
  const uint64_t qp1_rq = alloc(QP1_DEPTH * QP1_ELEM, 4096, NULL);
  const uint64_t qp1_cq = alloc(QP1_DEPTH * 4, 4096, NULL);
  const uint64_t qp1_db_bus = alloc(64, 64, (void**)&qp1_db); /* [0] CQ head mirror, [1] RQ write-pointer mirror */
  write_reg(ERNIC_QPREG(RQBAi, 1), (uint32_t)qp1_rq);
  write_reg(ERNIC_QPREG(RQBAMSBi, 1), (uint32_t)(qp1_rq >> 32));
  write_reg(ERNIC_QPREG(SQBAi, 1), (uint32_t)qp1_sq);
  write_reg(ERNIC_QPREG(SQBAMSBi, 1), (uint32_t)(qp1_sq >> 32));
  write_reg(ERNIC_QPREG(CQBAi, 1), (uint32_t)qp1_cq);
  write_reg(ERNIC_QPREG(CQBAMSBi, 1), (uint32_t)(qp1_cq >> 32));
  write_reg(ERNIC_QPREG(RQWPTRDBADDi, 1), (uint32_t)(qp1_db_bus + 4));
  write_reg(ERNIC_QPREG(RQWPTRDBADDMSBi, 1), (uint32_t)((qp1_db_bus + 4) >> 32));
  write_reg(ERNIC_QPREG(CQDBADDi, 1), (uint32_t)qp1_db_bus);
  write_reg(ERNIC_QPREG(CQDBADDMSBi, 1), (uint32_t)(qp1_db_bus >> 32));
  write_reg(ERNIC_QPREG(QDEPTHi, 1), ERNIC_SET(QDEPTHi_SQ_DEPTH, QP1_DEPTH) | ERNIC_SET(QDEPTHi_RQ_DEPTH, QP1_DEPTH));
  write_reg(ERNIC_QPREG(DESTQPCONFi, 1), ERNIC_SET(DESTQPCONFi_QPN, 1));
  const uint32_t qp1_conf = ERNIC_SET(QPCONFi_EN, 1) | ERNIC_SET(QPCONFi_RQ_IRQ_EN, 1) |
                            ERNIC_SET(QPCONFi_HW_HANDSHAKE_DIS, 1) | ERNIC_SET(QPCONFi_CQE_WRITE_EN, 1) |
                            ERNIC_SET(QPCONFi_PMTU, ERNIC_V_QPCONFi_PMTU_MTU_4096) | ERNIC_SET(QPCONFi_RQ_BUF_SIZE, QP1_ELEM / 256);
  write_reg(ERNIC_QPREG(QPCONFi, 1), qp1_conf);
  const uint32_t qp1_stat = ernic_read32(nic, ERNIC_QPREG(STATQPi, 1));
  if (ERNIC_GET(STATQPi_FATAL, qp1_stat) || !ERNIC_GET(STATQPi_SQ_EMPTY, qp1_stat))
    fail("QP1's STATQPi 0x%08x: expected an empty SQ and no fatal bit", qp1_stat);
  printf("QP1: SQ 0x%" PRIx64 ", RQ 0x%" PRIx64 " (%u x %u bytes), CQ 0x%" PRIx64 ", mirrors 0x%" PRIx64
         ", QPCONF 0x%08x, STATQPi 0x%08x\n", qp1_sq, qp1_rq, (unsigned)QP1_DEPTH, (unsigned)QP1_ELEM, qp1_cq,
         qp1_db_bus, qp1_conf, qp1_stat);

  /* 5. The source buffer (the first WRITE's bytes, then the bytes of the
   *    WRITE after the recovery) and its MR: remote read only (seed 000:
   *    grant no more than the peer needs; remote write is for B's MR). */
  step = "5 (MR)";
  uint8_t* src;
  const uint32_t src_len = len + AGAIN_BYTES;
  const uint64_t src_bus = alloc(src_len, 4096, (void**)&src);
  for (uint32_t i = 0; i < len; ++i) src[i] = (uint8_t)i;
  memset(src + len, AGAIN_FILL, AGAIN_BYTES);
  const uint64_t mr_va = (uint64_t)(uintptr_t)src; /* as rdma-core: the program's pointer */
  const uint32_t mr_access = ERNIC_SET(ACCESSDESC_ACCESS, ERNIC_V_ACCESSDESC_ACCESS_READ) | ERNIC_SET(ACCESSDESC_LEN_HI, 0);
  const uint32_t mr_rkey = (uint32_t)MR_INDEX << 8 | MR_KEY;
  write_reg(ERNIC_MRREG(PDPDNUM, MR_INDEX), ERNIC_SET(PDPDNUM_PD, MR_PD));
  write_reg(ERNIC_MRREG(VIRTADDRLSB, MR_INDEX), (uint32_t)mr_va);
  write_reg(ERNIC_MRREG(VIRTADDRMSB, MR_INDEX), (uint32_t)(mr_va >> 32));
  write_reg(ERNIC_MRREG(BUFBASEADDRLSB, MR_INDEX), (uint32_t)src_bus);
  write_reg(ERNIC_MRREG(BUFBASEADDRMSB, MR_INDEX), (uint32_t)(src_bus >> 32));
  write_reg(ERNIC_MRREG(BUFRKEY, MR_INDEX), ERNIC_SET(BUFRKEY_KEY, MR_KEY));
  write_reg(ERNIC_MRREG(WRRDBUFLEN, MR_INDEX), src_len);
  write_reg(ERNIC_MRREG(ACCESSDESC, MR_INDEX), mr_access);
  printf("MR %u: PD %u, VA 0x%" PRIx64 ", PA 0x%" PRIx64 ", %u bytes, R_Key 0x%x, ACCESSDESC 0x%x (remote read)\n",
         (unsigned)MR_INDEX, (unsigned)MR_PD, mr_va, src_bus, src_len, mr_rkey, mr_access);

  /* 6. The RC QP, in the MR's PD. */
  step = "6 (RC QP)";
  const uint32_t n = qp.qpn;
  volatile uint32_t* cq_ring;
  volatile uint32_t* db;
  struct wqe* sq;
  const uint64_t sq_bus = alloc((size_t)sq_depth * sizeof(struct wqe), 4096, (void**)&sq);
  const uint64_t cq_bus = alloc((size_t)sq_depth * 4, 4096, (void**)&cq_ring);
  const uint64_t rq_bus = alloc((size_t)rq_depth * rq_elem, 4096, NULL);
  const uint64_t db_bus = alloc(64, 64, (void**)&db); /* [0] CQ head mirror, [1] RQ write-pointer mirror */
  struct cq cq = {cq_ring, &db[0], sq_depth, 0};
  uint32_t pmtu_code = 0;
  while ((256u << pmtu_code) < pmtu) ++pmtu_code;
  write_reg(ERNIC_QPREG(QDEPTHi, n), ERNIC_SET(QDEPTHi_SQ_DEPTH, sq_depth) | ERNIC_SET(QDEPTHi_RQ_DEPTH, rq_depth));
  write_reg(ERNIC_QPREG(SQBAi, n), (uint32_t)sq_bus);
  write_reg(ERNIC_QPREG(SQBAMSBi, n), (uint32_t)(sq_bus >> 32));
  write_reg(ERNIC_QPREG(CQBAi, n), (uint32_t)cq_bus);
  write_reg(ERNIC_QPREG(CQBAMSBi, n), (uint32_t)(cq_bus >> 32));
  write_reg(ERNIC_QPREG(RQBAi, n), (uint32_t)rq_bus);
  write_reg(ERNIC_QPREG(RQBAMSBi, n), (uint32_t)(rq_bus >> 32));
  write_reg(ERNIC_QPREG(CQDBADDi, n), (uint32_t)db_bus);
  write_reg(ERNIC_QPREG(CQDBADDMSBi, n), (uint32_t)(db_bus >> 32));
  write_reg(ERNIC_QPREG(RQWPTRDBADDi, n), (uint32_t)(db_bus + 4));
  write_reg(ERNIC_QPREG(RQWPTRDBADDMSBi, n), (uint32_t)((db_bus + 4) >> 32));
  program_qp_peer(&qp, psn);
  qp.conf = ERNIC_SET(QPCONFi_EN, 1) | ERNIC_SET(QPCONFi_CQ_IRQ_EN, 1) | ERNIC_SET(QPCONFi_HW_HANDSHAKE_DIS, 1) |
            ERNIC_SET(QPCONFi_CQE_WRITE_EN, 1) | ERNIC_SET(QPCONFi_PMTU, pmtu_code) |
            ERNIC_SET(QPCONFi_RQ_BUF_SIZE, rq_elem / 256);
  write_reg(ERNIC_QPREG(QPCONFi, n), qp.conf);

  /* 7. The WRITE; the completion interrupt; the CQ polled. */
  step = "7 (WRITE, completion)";
  post_write(&sq[0], WRID_FIRST, src_bus, len, peer_va, peer_rkey);
  const uint64_t t_post = ernic_now_ps(nic);
  ernic_write32(nic, ERNIC_QPREG(SQPIi, n), 1);
  uint32_t sts = take_irq(ERNIC_SET(INTSTS_WQE_DONE, 1));
  const double t_first = us_since(t_post);
  uint32_t cqe[2] = {0, 0};
  if (poll_cq(&cq, 1, cqe, IRQ_TIMEOUT_NS) != 1) {
    fail("no CQE behind the CQ head mirror (mirror %u) within 1 ms", db[0]);
    give_up();
  }
  check_cqe(cqe[0], WRID_FIRST, WQE_OP_WRITE, 0);
  uint32_t head = ernic_read32(nic, ERNIC_QPREG(CQHEADi, n));
  if (head != 1 || db[0] != 1) fail("CQHEADi %u / CQ mirror %u, expected 1", head, db[0]);
  const uint32_t packets = (len + pmtu - 1) / pmtu;
  const uint32_t next_psn = (psn + packets) & 0xFFFFFF;
  printf("WRITE of %u bytes: completion after %.3f us, INTSTS 0x%x, CQHEADi %u, CQ mirror %u, CQE 0x%08x\n", len,
         t_first, sts, head, db[0], cqe[0]);

  /* 8. A fatal error on this QP alone: the WQE's payload lies past the host
   *    memory (the first bus address after it, in no buffer of the program).
   *    The NIC's DMA read fails before a packet is built. */
  step = "8 (fatal error)";
  const uint64_t bad_laddr = ernic_mem_bytes(nic);
  if (!bad_laddr || ernic_dma_ptr(nic, bad_laddr, 1)) fail("bus address 0x%" PRIx64 " is in the program's memory", bad_laddr);
  post_write(&sq[1], WRID_BAD, bad_laddr, AGAIN_BYTES, peer_va + len, peer_rkey);
  const uint64_t t_bad = ernic_now_ps(nic);
  ernic_write32(nic, ERNIC_QPREG(SQPIi, n), 2);
  sts = take_irq(ERNIC_SET(INTSTS_FATAL, 1));
  const double t_fatal = us_since(t_bad);
  if (!ERNIC_GET(INTSTS_FATAL, sts)) give_up();
  /* The error-status queue: one 8-byte entry, QPN[31:16] | code[15:0], 0. */
  const uint32_t wptr = ERNIC_GET(IPKTERRQWPTR_VALUE, ernic_read32(nic, ERNIC_REG(IPKTERRQWPTR)));
  const uint32_t entry = errq[0], entry_hi = errq[1];
  if (wptr != 1) fail("IPKTERRQWPTR %u, expected 1 (one entry)", wptr);
  if (entry >> 16 != n || (entry & 0xFFFF) != FATAL_WQE || entry_hi != 0)
    fail("error-status queue entry 0x%08x 0x%08x: expected QP%u, code 0x%02x (WQE or payload outside host memory)",
         entry, entry_hi, n, (unsigned)FATAL_WQE);
  const uint32_t stat_fatal = ernic_read32(nic, ERNIC_QPREG(STATQPi, n));
  if (!ERNIC_GET(STATQPi_FATAL, stat_fatal)) fail("STATQPi 0x%08x: the fatal bit is clear", stat_fatal);
  /* The failed WQE still completes, with ERRFLAG (PG332: the QP entered the fatal state). */
  if (poll_cq(&cq, 1, cqe, IRQ_TIMEOUT_NS) != 1) {
    fail("no CQE for the failed WRITE (CQ mirror %u)", db[0]);
    give_up();
  }
  check_cqe(cqe[0], WRID_BAD, WQE_OP_WRITE, 1);
  const uint32_t psn_after = ERNIC_GET(SQPSNi_PSN, ernic_read32(nic, ERNIC_QPREG(SQPSNi, n)));
  if (psn_after != next_psn) fail("SQPSNi %u, expected %u: the failed WRITE must not use a PSN", psn_after, next_psn);
  printf("fatal: WRITE of %u bytes from 0x%" PRIx64 " (past the host memory): fatal interrupt after %.3f us, "
         "INTSTS 0x%x, error-status queue QP%u code 0x%02x, STATQPi 0x%08x, CQE 0x%08x, SQPSNi %u\n",
         (unsigned)AGAIN_BYTES, bad_laddr, t_fatal, sts, entry >> 16, entry & 0xFFFF, stat_fatal, cqe[0], psn_after);

  /* 9. PG332 ch.6 fatal recovery. (1: the entry is read above; nothing is
   *    posted until the QP is back.) */
  step = "9 (fatal recovery)";
  const uint64_t t_rec = ernic_now_ps(nic);
  /* 2. Under recovery; wait for the queues to drain. */
  const uint32_t conf_now = ernic_read32(nic, ERNIC_QPREG(QPCONFi, n));
  write_reg(ERNIC_QPREG(QPCONFi, n), conf_now | ERNIC_SET(QPCONFi_UNDER_RECOVERY, 1));
  const unsigned drain_looks = wait_drained(n, 100000);
  if (!drain_looks) give_up();
  /* 3. Disable, keeping the recovery bit. */
  write_reg(ERNIC_QPREG(QPCONFi, n), (conf_now | ERNIC_SET(QPCONFi_UNDER_RECOVERY, 1)) & ~ERNIC_SET(QPCONFi_EN, 1));
  /* 4. SW override for this QP; zero the pointers; wait until CQHEADi reads 0. */
  write_reg(ERNIC_REG(XRNICADCONF),
            adconf | ERNIC_SET(XRNICADCONF_SW_OVERRIDE, 1) | ERNIC_SET(XRNICADCONF_SW_OVERRIDE_QPN, n));
  write_reg(ERNIC_QPREG(STATRQPIDBi, n), 0);
  write_reg(ERNIC_QPREG(STATRQBUFCAi, n), 0);
  write_reg(ERNIC_QPREG(STATRQBUFCAMSBi, n), 0);
  write_reg(ERNIC_QPREG(RQCIi, n), 0);
  write_reg(ERNIC_QPREG(STATCURSQPTRi, n), 0);
  write_reg(ERNIC_QPREG(SQPIi, n), 0);
  write_reg(ERNIC_QPREG(SQPSNi, n), 0);
  write_reg(ERNIC_QPREG(LSTRQREQi, n), 0);
  write_reg(ERNIC_QPREG(STATMSNi, n), 0);
  write_reg(ERNIC_QPREG(CQHEADi, n), 0);
  unsigned head_looks = 1;
  const uint64_t head_deadline = ernic_now_ps(nic) + 100000000ull; /* 100 us */
  while ((head = ERNIC_GET(CQHEADi_VALUE, ernic_read32(nic, ERNIC_QPREG(CQHEADi, n)))) != 0) {
    if (ernic_now_ps(nic) >= head_deadline) {
      fail("CQHEADi still %u 100 us after it was zeroed", head);
      give_up();
    }
    ernic_delay_ns(nic, 100);
    ++head_looks;
  }
  /* 5. The QP again: the SQ PSN the peer still expects (the failed WRITE
   *    used none), its last request PSN, MAC, IP (IPv4: QPCONFi[7] = 0),
   *    timeouts, PD, QPADVCONF; the MR's rights again (PG332 writes
   *    ACCESSDESC here; this MR keeps remote read only). The retry and
   *    RNR counts of STATQPi start over when the QP is enabled. */
  program_qp_peer(&qp, next_psn);
  write_reg(ERNIC_MRREG(ACCESSDESC, MR_INDEX), mr_access);
  /* 6. Enabled, not under recovery; the SW override ends. */
  write_reg(ERNIC_QPREG(QPCONFi, n), qp.conf);
  write_reg(ERNIC_REG(XRNICADCONF), adconf);
  const double t_recovery = us_since(t_rec);
  const uint32_t stat_back = ernic_read32(nic, ERNIC_QPREG(STATQPi, n));
  if (ERNIC_GET(STATQPi_FATAL, stat_back) || ERNIC_GET(STATQPi_RETRY_COUNT, stat_back) ||
      ERNIC_GET(STATQPi_RNR_COUNT, stat_back) || !ERNIC_GET(STATQPi_SQ_EMPTY, stat_back) ||
      !ERNIC_GET(STATQPi_OSQ_EMPTY, stat_back))
    fail("STATQPi 0x%08x after the recovery: expected not fatal, retry and RNR counts 0, SQ and outstanding queue "
         "empty", stat_back);
  /* The program's side starts over with the NIC: SQ, CQ and its mirror at 0. */
  memset((void*)cq_ring, 0, (size_t)sq_depth * 4);
  db[0] = 0;
  cq.ci = 0;
  printf("recovery: drained after %u look(s), CQHEADi 0 after %u look(s), %.3f us from under-recovery to the end "
         "of the SW override; STATQPi 0x%08x, SQPSNi %u again\n", drain_looks, head_looks, t_recovery, stat_back,
         next_psn);

  /* 10. A WRITE again: AGAIN_BYTES of AGAIN_FILL into the peer's MR after the first WRITE's bytes. */
  step = "10 (WRITE after the recovery)";
  post_write(&sq[0], WRID_AGAIN, src_bus + len, AGAIN_BYTES, peer_va + len, peer_rkey);
  const uint64_t t_again = ernic_now_ps(nic);
  ernic_write32(nic, ERNIC_QPREG(SQPIi, n), 1);
  sts = take_irq(ERNIC_SET(INTSTS_WQE_DONE, 1));
  if (poll_cq(&cq, 1, cqe, IRQ_TIMEOUT_NS) != 1) {
    fail("no CQE behind the CQ head mirror (mirror %u) within 1 ms", db[0]);
    give_up();
  }
  const double t_done = us_since(t_again);
  check_cqe(cqe[0], WRID_AGAIN, WQE_OP_WRITE, 0);
  head = ernic_read32(nic, ERNIC_QPREG(CQHEADi, n));
  if (head != 1 || db[0] != 1) fail("CQHEADi %u / CQ mirror %u, expected 1", head, db[0]);
  const uint32_t again_packets = (AGAIN_BYTES + pmtu - 1) / pmtu;
  const uint32_t psn_end = ERNIC_GET(SQPSNi_PSN, ernic_read32(nic, ERNIC_QPREG(SQPSNi, n)));
  if (psn_end != ((next_psn + again_packets) & 0xFFFFFF))
    fail("SQPSNi %u, expected %u (%u packet(s) from %u)", psn_end, (next_psn + again_packets) & 0xFFFFFF,
         again_packets, next_psn);
  const uint32_t stat_end = ernic_read32(nic, ERNIC_QPREG(STATQPi, n));
  if (ERNIC_GET(STATQPi_FATAL, stat_end)) fail("STATQPi 0x%08x: fatal again", stat_end);
  printf("WRITE again of %u bytes at PSN %u: completion after %.3f us, INTSTS 0x%x, CQHEADi %u, CQ mirror %u, "
         "CQE 0x%08x, SQPSNi %u\n", (unsigned)AGAIN_BYTES, next_psn, t_done, sts, head, db[0], cqe[0], psn_end);

  /* QP1 stayed quiet: no MAD interrupt, nothing in its RQ. */
  step = "end (QP1, counters)";
  const uint32_t qp1_rq_pi = ERNIC_GET(STATRQPIDBi_VALUE, ernic_read32(nic, ERNIC_QPREG(STATRQPIDBi, 1)));
  if (ERNIC_GET(INTSTS_MAD, intsts_seen) || qp1_rq_pi != 0 || qp1_db[1] != 0)
    fail("QP1 received something (INTSTS seen 0x%x, STATRQPIDBi %u, RQ mirror %u): the peer sends no MADs",
         intsts_seen, qp1_rq_pi, qp1_db[1]);
  ernic_bridge_stats st;
  ernic_get_stats(nic, &st);
  printf("bridge: %" PRIu64 " MMIO reads, %" PRIu64 " MMIO writes, %" PRIu64 " DMA reads (%" PRIu64
         " bytes), %" PRIu64 " DMA writes, %" PRIu64 " interrupts\n",
         st.mmio_reads, st.mmio_writes, st.dma_reads, st.dma_read_bytes, st.dma_writes, st.interrupts);
  if (st.dma_read_bytes < (uint64_t)len + AGAIN_BYTES) fail("the NIC read fewer bytes than the two payloads");
  if (ernic_close(nic) != 0) ++failures;
  if (failures) fprintf(stderr, "seed000_write: %d problem(s)\n", failures);
  return failures ? 1 : 0;
}
