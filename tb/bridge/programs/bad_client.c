/* tb/bridge/programs/bad_client.c: a host program that misbehaves through
 * the C library, one way per mode (argv[1]); tb/bridge/robustness.py runs
 * each under a program step and checks the simulator's verdict.
 *   crash            a few register reads, then SIGSEGV
 *   exit-no-close    a register read, then exit(0) without ernic_close
 *   hang             a register read, then sleeps far beyond the timeout
 *   fail             a clean session, then exit status 3
 *   dma-unallocated  a QP whose SQ base is a bus address never allocated,
 *                    then its doorbell: the NIC's WQE fetch reads there
 *   ok               a register read and a clean close (the control case)
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ernic_bridge.h"
#include "ernic_regs_c.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ok";
  ernic_bridge* b = ernic_open(NULL);
  if (!b) {
    fprintf(stderr, "bad_client: %s\n", ernic_open_error());
    return 1;
  }
  const uint32_t conf = ernic_read32(b, ERNIC_REG(XRNICCONF));
  printf("XRNICCONF at reset: 0x%08x\n", conf);
  if (!strcmp(mode, "crash")) {
    ernic_read32(b, ERNIC_REG(INTSTS));
    fflush(stdout);
    raise(SIGSEGV);
  }
  if (!strcmp(mode, "exit-no-close")) return 0;
  if (!strcmp(mode, "hang")) {
    sleep(600);
    return 0;
  }
  if (!strcmp(mode, "dma-unallocated")) {
    void* va;
    const uint64_t cq = ernic_dma_alloc(b, 4096, 4096, &va);
    const uint32_t qpn = 2, nowhere = 0x3000000; /* inside the node's memory, allocated by nobody */
    ernic_write32(b, ERNIC_QPREG(QDEPTHi, qpn), ERNIC_SET(QDEPTHi_SQ_DEPTH, 16) | ERNIC_SET(QDEPTHi_RQ_DEPTH, 16));
    ernic_write32(b, ERNIC_QPREG(SQBAi, qpn), nowhere);
    ernic_write32(b, ERNIC_QPREG(CQBAi, qpn), (uint32_t)cq);
    ernic_write32(b, ERNIC_QPREG(QPCONFi, qpn), ERNIC_SET(QPCONFi_EN, 1) | ERNIC_SET(QPCONFi_HW_HANDSHAKE_DIS, 1) |
                                                     ERNIC_SET(QPCONFi_PMTU, 4) | ERNIC_SET(QPCONFi_RQ_BUF_SIZE, 16));
    ernic_write32(b, ERNIC_REG(XRNICCONF), ERNIC_SET(XRNICCONF_EN, 1) | ERNIC_SET(XRNICCONF_NUM_QP, 8));
    ernic_write32(b, ERNIC_QPREG(SQPIi, qpn), 1);
    ernic_delay_ns(b, 20000);
    const char* e = ernic_error(b);
    fprintf(stderr, "bad_client: %s\n", e ? e : "no error seen");
    ernic_close(b);
    return e ? 1 : 0;
  }
  const int rc = ernic_close(b);
  if (!strcmp(mode, "fail")) return 3;
  return rc ? 1 : 0;
}
