/* examples/c/seed000_write.c: seed 000's PG332 flow as a user's C program,
 * the host of a node with `host: program` (scenarios/examples/bridge_c_write.yaml).
 *
 *   1. the error buffer first (without it the IP logs nothing), MAC and IP
 *   2. the incoming error-status queue, write-retry and response-error buffers
 *   3. interrupts, the base count, XRNICCONF enable
 *   4. an RC QP towards the peer the scenario connected (out of band: the
 *      QPN, PSNs, MAC, IP and the peer's MR come from the environment)
 *   5. an RDMA WRITE of an incrementing pattern into the peer's MR
 *   6. the completion: wait for the interrupt, read the CQE from the CQ
 *
 * Every register it writes is read back and compared; the CQE is checked
 * (wr_id, opcode, no error). Exit 0 only if all of it holds.
 * Build: with the project (libernic_bridge, ernic_bridge.h, ernic_regs_c.h).
 */
#include <inttypes.h>
#include <math.h>
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

static ernic_bridge* nic;
static int failures;

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
  if (got != value) {
    fprintf(stderr, "register 0x%05x: wrote 0x%08x, read back 0x%08x\n", addr, value, got);
    ++failures;
  }
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
  nic = ernic_open(NULL);
  if (!nic) {
    fprintf(stderr, "seed000_write: %s\n", ernic_open_error());
    return 1;
  }
  uint8_t mac[6], peer_mac[6];
  parse_mac(getenv("ERNIC_MAC"), mac);
  parse_mac(getenv("ERNIC_PEER_MAC"), peer_mac);
  const uint32_t ip = parse_ip(getenv("ERNIC_IP")), peer_ip = parse_ip(getenv("ERNIC_PEER_IP"));
  const uint32_t qpn = (uint32_t)env_u64("ERNIC_QPN"), psn = (uint32_t)env_u64("ERNIC_PSN");
  const uint32_t peer_qpn = (uint32_t)env_u64("ERNIC_PEER_QPN"), peer_psn = (uint32_t)env_u64("ERNIC_PEER_PSN");
  const uint64_t peer_va = env_u64("ERNIC_PEER_VA");
  const uint32_t peer_rkey = (uint32_t)env_u64("ERNIC_PEER_RKEY");
  const uint32_t len = (uint32_t)(getenv("WRITE_BYTES") ? env_u64("WRITE_BYTES") : 65536);
  const uint32_t sq_depth = (uint32_t)env_u64("ERNIC_SQ_DEPTH"), rq_depth = (uint32_t)env_u64("ERNIC_RQ_DEPTH");
  const uint32_t rq_elem = (uint32_t)env_u64("ERNIC_RQ_ELEMENT_BYTES");
  const uint32_t pmtu = (uint32_t)env_u64("ERNIC_PMTU");
  const uint32_t num_qp = (uint32_t)env_u64("ERNIC_NUM_QP");
  const double core_mhz = strtod(getenv("ERNIC_CORE_MHZ") ? getenv("ERNIC_CORE_MHZ") : "200", NULL);

  /* 1. Error buffer first; MAC and IP. */
  const uint64_t errbuf = alloc(64 * 256, 4096, NULL);
  write_reg(ERNIC_REG(ERRBUFBA), (uint32_t)errbuf);
  write_reg(ERNIC_REG(ERRBUFBAMSB), (uint32_t)(errbuf >> 32));
  write_reg(ERNIC_REG(ERRBUFSZ), ERNIC_SET(ERRBUFSZ_NUM, 64) | ERNIC_SET(ERRBUFSZ_SIZE, 256));
  write_reg(ERNIC_REG(MACXADDLSB), (uint32_t)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5]);
  write_reg(ERNIC_REG(MACXADDMSB), (uint32_t)mac[0] << 8 | mac[1]);
  write_reg(ERNIC_REG(IPv4XADD), ip);

  /* 2. Error-status queue, write-retry data buffers, response-error buffer. */
  const uint64_t errq = alloc(64 * 8, 4096, NULL);
  write_reg(ERNIC_REG(IPKTERRQBA), (uint32_t)errq);
  write_reg(ERNIC_REG(IPKTERRQBAMSB), (uint32_t)(errq >> 32));
  write_reg(ERNIC_REG(IPKTERRQSZ), 64);
  const uint32_t datbuf_n = 16 * num_qp;
  const uint64_t datbuf = alloc((size_t)datbuf_n * 4096, 4096, NULL);
  write_reg(ERNIC_REG(DATBUFBA), (uint32_t)datbuf);
  write_reg(ERNIC_REG(DATBUFBAMSB), (uint32_t)(datbuf >> 32));
  write_reg(ERNIC_REG(DATBUFSZ), ERNIC_SET(DATBUFSZ_NUM, datbuf_n) | ERNIC_SET(DATBUFSZ_SIZE, 4096));
  const uint64_t resperr = alloc(64 * 256, 4096, NULL);
  write_reg(ERNIC_REG(RESPERRPKTBA), (uint32_t)resperr);
  write_reg(ERNIC_REG(RESPERRPKTBAMSB), (uint32_t)(resperr >> 32));
  write_reg(ERNIC_REG(RESPERRSZ), ERNIC_SET(RESPERRSZ_NUM, 64) | ERNIC_SET(RESPERRSZ_SIZE, 256));

  /* 3. Interrupts: completions and fatal errors; base count; enable. */
  write_reg(ERNIC_REG(INTEN), ERNIC_SET(INTEN_WQE_DONE, 1) | ERNIC_SET(INTEN_FATAL, 1));
  const uint32_t basecnt = (uint32_t)ceil(log2(4.096 * core_mhz));
  write_reg(ERNIC_REG(XRNICADCONF), ERNIC_SET(XRNICADCONF_BASE_COUNT, basecnt));
#ifdef ERNIC_LAYOUT_4X /* 4.x: the QP count has its own register */
  write_reg(ERNIC_REG(XRNIC_CONF_QP_EN), ERNIC_SET(XRNIC_CONF_QP_EN_NUM_QP, num_qp));
  const uint32_t qp_count = 0;
#else /* 3.x: XRNICCONF[15:8], at most 255 */
  const uint32_t qp_count = ERNIC_SET(XRNICCONF_NUM_QP, num_qp > 255 ? 255 : num_qp);
#endif
  write_reg(ERNIC_REG(XRNICCONF), ERNIC_SET(XRNICCONF_EN, 1) | ERNIC_SET(XRNICCONF_ERRBUF_EN, 1) | qp_count |
                                      ERNIC_SET(XRNICCONF_UDP_SPORT, 0x12B7));

  /* 4. The RC QP. */
  volatile uint32_t* cq;
  volatile uint32_t* db;
  struct wqe* sq;
  const uint64_t sq_bus = alloc((size_t)sq_depth * sizeof(struct wqe), 4096, (void**)&sq);
  const uint64_t cq_bus = alloc((size_t)sq_depth * 4, 4096, (void**)&cq);
  const uint64_t rq_bus = alloc((size_t)rq_depth * rq_elem, 4096, NULL);
  const uint64_t db_bus = alloc(64, 64, (void**)&db);  /* CQ head mirror, RQ write-pointer mirror */
  uint32_t pmtu_code = 0;
  while ((256u << pmtu_code) < pmtu) ++pmtu_code;
  write_reg(ERNIC_QPREG(QDEPTHi, qpn), ERNIC_SET(QDEPTHi_SQ_DEPTH, sq_depth) | ERNIC_SET(QDEPTHi_RQ_DEPTH, rq_depth));
  write_reg(ERNIC_QPREG(SQBAi, qpn), (uint32_t)sq_bus);
  write_reg(ERNIC_QPREG(SQBAMSBi, qpn), (uint32_t)(sq_bus >> 32));
  write_reg(ERNIC_QPREG(CQBAi, qpn), (uint32_t)cq_bus);
  write_reg(ERNIC_QPREG(CQBAMSBi, qpn), (uint32_t)(cq_bus >> 32));
  write_reg(ERNIC_QPREG(RQBAi, qpn), (uint32_t)rq_bus);
  write_reg(ERNIC_QPREG(RQBAMSBi, qpn), (uint32_t)(rq_bus >> 32));
  write_reg(ERNIC_QPREG(CQDBADDi, qpn), (uint32_t)db_bus);
  write_reg(ERNIC_QPREG(CQDBADDMSBi, qpn), (uint32_t)(db_bus >> 32));
  write_reg(ERNIC_QPREG(RQWPTRDBADDi, qpn), (uint32_t)(db_bus + 4));
  write_reg(ERNIC_QPREG(RQWPTRDBADDMSBi, qpn), (uint32_t)((db_bus + 4) >> 32));
  write_reg(ERNIC_QPREG(DESTQPCONFi, qpn), ERNIC_SET(DESTQPCONFi_QPN, peer_qpn));
  write_reg(ERNIC_QPREG(SQPSNi, qpn), psn);
  /* The last request "accepted": the peer's PSN - 1, a message-ending opcode (RC WRITE ONLY 0x0A). */
  write_reg(ERNIC_QPREG(LSTRQREQi, qpn),
            ERNIC_SET(LSTRQREQi_PSN, (peer_psn - 1) & 0xFFFFFF) | ERNIC_SET(LSTRQREQi_OPCODE, 0x0A));
  write_reg(ERNIC_QPREG(MACDESADDLSBi, qpn), (uint32_t)peer_mac[2] << 24 | peer_mac[3] << 16 | peer_mac[4] << 8 | peer_mac[5]);
  write_reg(ERNIC_QPREG(MACDESADDMSBi, qpn), (uint32_t)peer_mac[0] << 8 | peer_mac[1]);
  write_reg(ERNIC_QPREG(IPDESADDR1i, qpn), peer_ip);
  write_reg(ERNIC_QPREG(TIMEOUTCONFi, qpn), ERNIC_SET(TIMEOUTCONFi_ACK_TIMEOUT, 14) | ERNIC_SET(TIMEOUTCONFi_RETRY_CNT, 3) |
                                                ERNIC_SET(TIMEOUTCONFi_RNR_RETRY_CNT, 3) | ERNIC_SET(TIMEOUTCONFi_RNR_TIMER, 0x1F));
  write_reg(ERNIC_QPREG(PDi, qpn), 0);
  write_reg(ERNIC_QPREG(QPADVCONFi, qpn), ERNIC_SET(QPADVCONFi_TTL, 64) | ERNIC_SET(QPADVCONFi_PKEY, 0xFFFF));
  write_reg(ERNIC_QPREG(QPCONFi, qpn), ERNIC_SET(QPCONFi_EN, 1) | ERNIC_SET(QPCONFi_CQ_IRQ_EN, 1) |
                                           ERNIC_SET(QPCONFi_HW_HANDSHAKE_DIS, 1) | ERNIC_SET(QPCONFi_CQE_WRITE_EN, 1) |
                                           ERNIC_SET(QPCONFi_PMTU, pmtu_code) |
                                           ERNIC_SET(QPCONFi_RQ_BUF_SIZE, rq_elem / 256));

  /* 5. The payload and the WQE; the doorbell. */
  uint8_t* src;
  const uint64_t src_bus = alloc(len, 4096, (void**)&src);
  for (uint32_t i = 0; i < len; ++i) src[i] = (uint8_t)i;
  memset(&sq[0], 0, sizeof sq[0]);
  sq[0].wrid = 0x5EED;
  sq[0].laddr = src_bus;
  sq[0].length = len;
  sq[0].opcode = WQE_OP_WRITE;
  sq[0].roffset = peer_va;
  sq[0].rtag = peer_rkey;
  const uint64_t t_post = ernic_now_ps(nic);
  ernic_write32(nic, ERNIC_QPREG(SQPIi, qpn), 1);

  /* 6. The completion. */
  int irq = ernic_wait_irq(nic, 1000000); /* 1 ms of simulated time at most */
  if (irq != 1) {
    fprintf(stderr, "no completion interrupt within 1 ms (%s)\n", irq < 0 ? ernic_error(nic) : "timeout");
    ++failures;
  }
  const uint32_t sts = ernic_read32(nic, ERNIC_REG(INTSTS));
  ernic_write32(nic, ERNIC_REG(INTSTS), sts); /* W1C */
  const uint32_t head = ernic_read32(nic, ERNIC_QPREG(CQHEADi, qpn));
  const uint32_t cqe = cq[0];
  printf("WRITE of %u bytes: completion after %.3f us, INTSTS 0x%x, CQHEADi %u, CQ mirror %u, CQE 0x%08x\n", len,
         (double)(ernic_now_ps(nic) - t_post) / 1e6, sts, head, db[0], cqe);
  if (!ERNIC_GET(INTSTS_WQE_DONE, sts)) { fprintf(stderr, "INTSTS lacks WQE_DONE\n"); ++failures; }
  if (head != 1 || db[0] != 1) { fprintf(stderr, "CQ head %u / mirror %u, expected 1\n", head, db[0]); ++failures; }
  /* CQE (PG332): [15:0] wr_id, [23:16] opcode, [31:24] error flag. */
  if ((cqe & 0xFFFF) != 0x5EED || ((cqe >> 16) & 0xFF) != WQE_OP_WRITE || (cqe >> 24) != 0) {
    fprintf(stderr, "CQE 0x%08x: expected wr_id 0x5eed, opcode WRITE, no error\n", cqe);
    ++failures;
  }
  ernic_bridge_stats st;
  ernic_get_stats(nic, &st);
  printf("bridge: %" PRIu64 " MMIO reads, %" PRIu64 " MMIO writes, %" PRIu64 " DMA reads (%" PRIu64
         " bytes), %" PRIu64 " DMA writes, %" PRIu64 " interrupts\n",
         st.mmio_reads, st.mmio_writes, st.dma_reads, st.dma_read_bytes, st.dma_writes, st.interrupts);
  if (st.dma_read_bytes < len) { fprintf(stderr, "the NIC read fewer bytes than the payload\n"); ++failures; }
  if (ernic_close(nic) != 0) ++failures;
  return failures ? 1 : 0;
}
