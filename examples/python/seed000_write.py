#!/usr/bin/env python3
"""examples/python/seed000_write.py: seed 000's PG332 flow as a user's Python
program, the host of a node with `host: program`
(tb/bridge/python/bridge_python_write.yaml). The same program as
examples/c/seed000_write.c, call for call: the same register writes and
reads in the same order, the same allocations (sizes, alignment, order),
the same waits, so the wire is byte-identical to the C program's
(tb/bridge/python/test_python.py).

  1. the error buffer first (without it the IP logs nothing), MAC and IP
  2. the incoming error-status queue, write-retry and response-error buffers
  3. interrupts (completion, fatal, MAD), the base count, XRNICCONF enable
  4. QP1 (GSI, seed 000 section 3): its SQ, an RQ of 512-byte elements, its
     CQ, the CQ-head and RQ-write-pointer mirrors, QDEPTH, and QPCONF with
     the RQ interrupt
  5. an MR over the program's source buffer (seed 000 section 4): MR table
     entry 0 with PDPDNUM, VIRTADDR (the program's pointer), BUFBASEADDR
     (its bus address), BUFRKEY, WRRDBUFLEN and ACCESSDESC (remote read
     only)
  6. an RC QP towards the peer the scenario connected (out of band: the
     QPN, PSNs, MAC, IP and the peer's MR come from the environment), in
     the MR's protection domain (PDi = PDPDNUM)
  7. an RDMA WRITE of an incrementing pattern (byte i = i & 0xFF) into the
     peer's MR; the completion interrupt, then the CQ polled through its
     head mirror (CQDBADDi) as seed 000 section 6.2 polls it
  8. a fatal error on this node alone: a WRITE whose local address is the
     first bus address past the host memory. The NIC's payload read fails,
     nothing goes on the wire (the peer sees nothing), and the QP turns
     fatal with code 0x05 (WQE processor). Checked: the fatal interrupt,
     the error-status queue entry (QPN, code), STATQPi[0], the WQE's CQE
     with ERRFLAG, and that SQPSNi did not move
  9. PG332 ch.6's fatal recovery by hand (seed 000 section 7.1): under
     recovery, wait for the queues to drain, disable, SW override, zero the
     pointers, wait for CQHEADi to read 0, program the QP again with the SQ
     PSN the peer still expects, enable, end the override
 10. a WRITE again (8 KiB of 0x3C, into the peer's MR right after the first
     WRITE's bytes, at the next PSN) and its completion

Every register it writes is read back and compared; each step's results
are checked and a failure names the step. Exit 0 only if all of it holds;
2 for a missing or bad environment, 1 for anything else. The last line of
its output is the summary: "WRITE of N bytes: pass, ..." (or FAIL).

Needs ernic_bridge.py (beside this file) and ERNIC_BRIDGE_LIB, which the
simulator sets for the programs it starts. Both register layouts (the
node's ERNIC_LAYOUT).
"""
import ctypes
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ernic_bridge as eb  # noqa: E402

PROG = "seed000_write.py"
WQE_OP_WRITE = 0x00
# The WQE as this driver posts it (PG332 Table 2-1: 64 bytes): wrid, rsvd,
# laddr, length, opcode, rsvd, roffset, rtag, sdata[16], immdt, rsvd.
WQE = struct.Struct("<H2xQIB3xQI16sI12x")
assert WQE.size == 64
# The error-status queue's code for a WQE or payload outside host memory
# (PG332: raised by the WQE processor; model/regs/fatal.h kWqe).
FATAL_WQE = 0x05
QP1_DEPTH, QP1_ELEM = 16, 512                    # as the 3.x drivers set QP1 up
MR_INDEX, MR_PD, MR_KEY = 0, 1, 0x3D             # R_Key = index << 8 | key byte
WRID_FIRST, WRID_BAD, WRID_AGAIN = 0x5EED, 0xBAD0, 0x5EEF
AGAIN_BYTES, AGAIN_FILL = 8192, 0x3C             # the WRITE after the recovery
OP_RC_WRITE_ONLY = 0x0A                          # BTH opcode, a message end
IRQ_TIMEOUT_NS = 1000000                         # 1 ms of simulated time


def die(msg, code=2):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(code)


def strtoull0(s):
    """strtoull(s, NULL, 0): 0x.. hex, 0.. octal, else decimal."""
    t = s.strip().lower()
    if t.startswith("0x"):
        return int(t[2:], 16)
    if len(t) > 1 and t.startswith("0"):
        return int(t[1:], 8)
    return int(t, 10)


def env_u64(name):
    v = os.environ.get(name)
    if v is None:
        die("%s is not set (run me from a scenario's program step)" % name)
    try:
        return strtoull0(v)
    except ValueError:
        die("%s='%s' is not a number" % (name, v))


def parse_mac(s):
    try:
        b = [int(x, 16) for x in s.split(":")]
        if len(b) != 6 or any(not 0 <= x <= 255 for x in b):
            raise ValueError
        return b
    except (AttributeError, ValueError):
        die("bad MAC address '%s'" % (s if s is not None else "(none)"))


def parse_ip(s):
    try:
        b = [int(x, 10) for x in s.split(".")]
        if len(b) != 4 or any(not 0 <= x <= 255 for x in b):
            raise ValueError
        return b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
    except (AttributeError, ValueError):
        die("bad IPv4 address '%s'" % (s if s is not None else "(none)"))


class GiveUp(Exception):
    """A failure the next steps cannot go on from."""


def lo(v):
    return v & 0xFFFFFFFF


def hi(v):
    return (v >> 32) & 0xFFFFFFFF


def u32_at(view, index):
    return struct.unpack_from("<I", view, 4 * index)[0]


def main():
    regs = eb.load_regs()  # the layout (ERNIC_LAYOUT) before the session: no wire change
    v4x = regs.layout == "4.x"
    mac = parse_mac(os.environ.get("ERNIC_MAC"))
    peer_mac = parse_mac(os.environ.get("ERNIC_PEER_MAC"))
    ip, peer_ip = parse_ip(os.environ.get("ERNIC_IP")), parse_ip(os.environ.get("ERNIC_PEER_IP"))
    n, psn = env_u64("ERNIC_QPN") & 0xFFFFFFFF, env_u64("ERNIC_PSN") & 0xFFFFFFFF
    peer_qpn, peer_psn = env_u64("ERNIC_PEER_QPN") & 0xFFFFFFFF, env_u64("ERNIC_PEER_PSN") & 0xFFFFFFFF
    peer_va = env_u64("ERNIC_PEER_VA")
    peer_rkey = env_u64("ERNIC_PEER_RKEY") & 0xFFFFFFFF
    peer_len = env_u64("ERNIC_PEER_LEN")
    length = (env_u64("WRITE_BYTES") if "WRITE_BYTES" in os.environ else 65536) & 0xFFFFFFFF
    sq_depth, rq_depth = env_u64("ERNIC_SQ_DEPTH"), env_u64("ERNIC_RQ_DEPTH")
    rq_elem = env_u64("ERNIC_RQ_ELEMENT_BYTES")
    pmtu = env_u64("ERNIC_PMTU")
    num_qp = env_u64("ERNIC_NUM_QP")
    core_mhz = float(os.environ.get("ERNIC_CORE_MHZ", "200"))
    if length == 0 or peer_len < length + AGAIN_BYTES:
        die("the peer's MR (ERNIC_PEER_LEN %d) must hold the WRITE (%d bytes) and the WRITE after the recovery "
            "(%d bytes) behind it" % (peer_len, length, AGAIN_BYTES))
    if sq_depth < 4:
        die("ERNIC_SQ_DEPTH %d: this program needs 4 or more" % sq_depth)
    try:
        nic = eb.Bridge()
    except eb.BridgeError as e:
        die(str(e), 1)

    failures = []
    at = {"step": "setup"}
    intsts_seen = [0]  # every INTSTS bit any interrupt showed

    def fail(msg):
        text = "%s: %s: %s" % (PROG, at["step"], msg)
        print(text, file=sys.stderr)
        failures.append(text)

    def write_reg(addr, value):
        """write_reg in seed 000's sense, read back and compared."""
        nic.write32(addr, value)
        got = nic.read32(addr)
        if got != value:
            fail("register 0x%05x: wrote 0x%08x, read back 0x%08x" % (addr, value, got))

    def us_since(t_ps):
        return (nic.now_ps() - t_ps) / 1e6

    def take_irq(want):
        """Interrupts until INTSTS has shown a bit of `want`: for each MSI-X
        message INTSTS is read and cleared (W1C). Returns the bits seen."""
        deadline = nic.now_ps() + IRQ_TIMEOUT_NS * 1000
        seen = 0
        while not seen & want:
            now = nic.now_ps()
            got = nic.wait_irq((deadline - now) // 1000) if now < deadline else False
            if not got:
                fail("no interrupt with INTSTS bits 0x%x within %d us (timeout; INTSTS showed 0x%x)"
                     % (want, IRQ_TIMEOUT_NS // 1000, seen))
                break
            sts = nic.read32(R("INTSTS"))
            nic.write32(R("INTSTS"), sts)  # W1C
            seen |= sts
        intsts_seen[0] |= seen
        return seen

    def poll_cq(cq, want, timeout_ns):
        """Seed 000 section 6.2: compare the CQ head with the last one seen and
        take each new CQE. The head is read from its mirror, which ERNIC writes
        after the CQE; between looks the program sleeps until the NIC's next
        DMA write into its memory. Returns the CQEs taken (up to `want`)."""
        deadline = nic.now_ps() + timeout_ns * 1000
        out = []
        while True:
            head = u32_at(cq["mirror"], 0) % cq["depth"]
            while cq["ci"] != head and len(out) < want:
                out.append(u32_at(cq["ring"], cq["ci"]))
                cq["ci"] = (cq["ci"] + 1) % cq["depth"]
            if len(out) == want or nic.now_ps() >= deadline:
                return out
            nic.wait_until(deadline, eb.WAIT_DMA_WRITE)

    def check_cqe(cqe, wrid, opcode, errflag):
        # CQE (PG332): [15:0] wr_id, [23:16] opcode, [31:24] error flag.
        if (cqe & 0xFFFF) != wrid or ((cqe >> 16) & 0xFF) != opcode or (cqe >> 24) != errflag:
            fail("CQE 0x%08x: expected wr_id 0x%04x, opcode %d (WRITE), ERRFLAG %d" % (cqe, wrid, opcode, errflag))

    def program_qp_peer(sq_psn):
        """The QP's registers that name the peer and the PSNs: set up in step
        6, written again by the recovery (PG332 ch.6 step 5)."""
        m = peer_mac
        write_reg(Q("DESTQPCONFi", n), S("DESTQPCONFi", "QPN", peer_qpn))
        write_reg(Q("SQPSNi", n), sq_psn)
        # The last request "accepted": the peer's PSN - 1, a message-ending opcode (RC WRITE ONLY 0x0A).
        write_reg(Q("LSTRQREQi", n),
                  S("LSTRQREQi", "PSN", (peer_psn - 1) & 0xFFFFFF) | S("LSTRQREQi", "OPCODE", OP_RC_WRITE_ONLY))
        write_reg(Q("MACDESADDLSBi", n), m[2] << 24 | m[3] << 16 | m[4] << 8 | m[5])
        write_reg(Q("MACDESADDMSBi", n), m[0] << 8 | m[1])
        write_reg(Q("IPDESADDR1i", n), peer_ip)
        write_reg(Q("TIMEOUTCONFi", n),
                  S("TIMEOUTCONFi", "ACK_TIMEOUT", 14) | S("TIMEOUTCONFi", "RETRY_CNT", 3) |
                  S("TIMEOUTCONFi", "RNR_RETRY_CNT", 3) | S("TIMEOUTCONFi", "RNR_TIMER", 0x1F))
        write_reg(Q("PDi", n), S("PDi", "PD", MR_PD))
        write_reg(Q("QPADVCONFi", n), S("QPADVCONFi", "TTL", 64) | S("QPADVCONFi", "PKEY", 0xFFFF))

    def post_write(sq, slot, wrid, laddr, nbytes, roffset, rkey):
        sq[slot * WQE.size:(slot + 1) * WQE.size] = WQE.pack(wrid, laddr, nbytes, WQE_OP_WRITE, roffset, rkey,
                                                            bytes(16), 0)

    def wait_drained(timeout_ns):
        """PG332 ch.6 recovery step 2: the SQ and the outstanding queue empty
        (STATQPi[9], [10]), every WQE completed (CQHEADi == SQPIi), and the
        response handler's doorbell check (RESPHNDSTS[16]). Returns the number
        of looks it took, 0 if the QP never drained."""
        deadline = nic.now_ps() + timeout_ns * 1000
        looks = 1
        while True:
            st = nic.read32(Q("STATQPi", n))
            head = nic.read32(Q("CQHEADi", n))
            pi = nic.read32(Q("SQPIi", n))
            rh = nic.read32(R("RESPHNDSTS"))
            if (G("STATQPi", "SQ_EMPTY", st) and G("STATQPi", "OSQ_EMPTY", st) and
                    G("CQHEADi", "VALUE", head) == G("SQPIi", "VALUE", pi) and
                    G("RESPHNDSTS", "SQ_PICI_DB_CHECK_EN", rh)):
                return looks
            if nic.now_ps() >= deadline:
                fail("QP%d did not drain within %d us (STATQPi 0x%08x, CQHEADi %d, SQPIi %d, RESPHNDSTS 0x%08x)"
                     % (n, timeout_ns // 1000, st, head, pi, rh))
                return 0
            nic.delay_ns(1000)
            looks += 1

    R, Q, M, S, G = eb.reg, eb.qpreg, eb.mrreg, eb.field_set, eb.field_get
    report = []
    try:
        # 1. Error buffer first; MAC and IP.
        at["step"] = "1 (error buffer, MAC, IP)"
        errbuf, _ = nic.dma_alloc(64 * 256, 4096)
        write_reg(R("ERRBUFBA"), lo(errbuf))
        write_reg(R("ERRBUFBAMSB"), hi(errbuf))
        write_reg(R("ERRBUFSZ"), S("ERRBUFSZ", "NUM", 64) | S("ERRBUFSZ", "SIZE", 256))
        write_reg(R("MACXADDLSB"), mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5])
        write_reg(R("MACXADDMSB"), mac[0] << 8 | mac[1])
        write_reg(R("IPv4XADD"), ip)

        # 2. Error-status queue, write-retry data buffers, response-error buffer.
        at["step"] = "2 (error-status queue, retry and response-error buffers)"
        errq_n = 64
        errq_bus, errq = nic.dma_alloc(errq_n * 8, 4096)
        write_reg(R("IPKTERRQBA"), lo(errq_bus))
        write_reg(R("IPKTERRQBAMSB"), hi(errq_bus))
        write_reg(R("IPKTERRQSZ"), S("IPKTERRQSZ", "NUM", errq_n))
        datbuf_n = 16 * num_qp
        datbuf, _ = nic.dma_alloc(datbuf_n * 4096, 4096)
        write_reg(R("DATBUFBA"), lo(datbuf))
        write_reg(R("DATBUFBAMSB"), hi(datbuf))
        write_reg(R("DATBUFSZ"), S("DATBUFSZ", "NUM", datbuf_n & 0xFFFF) | S("DATBUFSZ", "SIZE", 4096))
        resperr, _ = nic.dma_alloc(64 * 256, 4096)
        write_reg(R("RESPERRPKTBA"), lo(resperr))
        write_reg(R("RESPERRPKTBAMSB"), hi(resperr))
        write_reg(R("RESPERRSZ"), S("RESPERRSZ", "NUM", 64) | S("RESPERRSZ", "SIZE", 256))

        # 3. Interrupts: completions, fatal errors, MADs on QP1; base count; enable.
        at["step"] = "3 (interrupts, enable)"
        write_reg(R("INTEN"), S("INTEN", "WQE_DONE", 1) | S("INTEN", "FATAL", 1) | S("INTEN", "MAD", 1))
        basecnt = math.ceil(math.log2(4.096 * core_mhz))
        adconf = S("XRNICADCONF", "BASE_COUNT", basecnt)
        write_reg(R("XRNICADCONF"), adconf)
        conf = S("XRNICCONF", "EN", 1) | S("XRNICCONF", "ERRBUF_EN", 1) | S("XRNICCONF", "UDP_SPORT", 0x12B7)
        if v4x:  # 4.x: the QP count has its own register
            write_reg(R("XRNIC_CONF_QP_EN"), S("XRNIC_CONF_QP_EN", "NUM_QP", num_qp))
        else:  # 3.x: XRNICCONF[15:8], at most 255
            conf |= S("XRNICCONF", "NUM_QP", min(num_qp, 255))
        write_reg(R("XRNICCONF"), conf)

        # 4. QP1 (GSI): SQ, RQ of 512-byte elements, CQ, the two mirrors. CM
        #    runs over it in software; here it is only made ready (the scenario
        #    connects out of band), so it must stay quiet: checked at the end.
        at["step"] = "4 (QP1)"
        qp1_sq, _ = nic.dma_alloc(QP1_DEPTH * WQE.size, 4096)
        qp1_rq, _ = nic.dma_alloc(QP1_DEPTH * QP1_ELEM, 4096)
        qp1_cq, _ = nic.dma_alloc(QP1_DEPTH * 4, 4096)
        qp1_db_bus, qp1_db = nic.dma_alloc(64, 64)  # [0] CQ head mirror, [1] RQ write-pointer mirror
        write_reg(Q("RQBAi", 1), lo(qp1_rq))
        write_reg(Q("RQBAMSBi", 1), hi(qp1_rq))
        write_reg(Q("SQBAi", 1), lo(qp1_sq))
        write_reg(Q("SQBAMSBi", 1), hi(qp1_sq))
        write_reg(Q("CQBAi", 1), lo(qp1_cq))
        write_reg(Q("CQBAMSBi", 1), hi(qp1_cq))
        write_reg(Q("RQWPTRDBADDi", 1), lo(qp1_db_bus + 4))
        write_reg(Q("RQWPTRDBADDMSBi", 1), hi(qp1_db_bus + 4))
        write_reg(Q("CQDBADDi", 1), lo(qp1_db_bus))
        write_reg(Q("CQDBADDMSBi", 1), hi(qp1_db_bus))
        write_reg(Q("QDEPTHi", 1), S("QDEPTHi", "SQ_DEPTH", QP1_DEPTH) | S("QDEPTHi", "RQ_DEPTH", QP1_DEPTH))
        write_reg(Q("DESTQPCONFi", 1), S("DESTQPCONFi", "QPN", 1))
        qp1_conf = (S("QPCONFi", "EN", 1) | S("QPCONFi", "RQ_IRQ_EN", 1) | S("QPCONFi", "HW_HANDSHAKE_DIS", 1) |
                    S("QPCONFi", "CQE_WRITE_EN", 1) | S("QPCONFi", "PMTU", eb.field_value("QPCONFi", "PMTU", "MTU_4096")) |
                    S("QPCONFi", "RQ_BUF_SIZE", QP1_ELEM // 256))
        write_reg(Q("QPCONFi", 1), qp1_conf)
        qp1_stat = nic.read32(Q("STATQPi", 1))
        if G("STATQPi", "FATAL", qp1_stat) or not G("STATQPi", "SQ_EMPTY", qp1_stat):
            fail("QP1's STATQPi 0x%08x: expected an empty SQ and no fatal bit" % qp1_stat)
        print("QP1: SQ 0x%x, RQ 0x%x (%d x %d bytes), CQ 0x%x, mirrors 0x%x, QPCONF 0x%08x, STATQPi 0x%08x" % (
            qp1_sq, qp1_rq, QP1_DEPTH, QP1_ELEM, qp1_cq, qp1_db_bus, qp1_conf, qp1_stat))

        # 5. The source buffer (the first WRITE's bytes, then the bytes of the
        #    WRITE after the recovery) and its MR: remote read only (seed 000:
        #    grant no more than the peer needs; remote write is for B's MR).
        at["step"] = "5 (MR)"
        src_len = length + AGAIN_BYTES
        src_bus, src = nic.dma_alloc(src_len, 4096)
        src[:length] = (bytes(range(256)) * (length // 256 + 1))[:length]
        src[length:src_len] = bytes([AGAIN_FILL]) * AGAIN_BYTES
        mr_va = ctypes.addressof(ctypes.c_ubyte.from_buffer(src))  # as rdma-core: the program's pointer
        mr_access = S("ACCESSDESC", "ACCESS", eb.field_value("ACCESSDESC", "ACCESS", "READ")) | S("ACCESSDESC", "LEN_HI", 0)
        mr_rkey = MR_INDEX << 8 | MR_KEY
        write_reg(M("PDPDNUM", MR_INDEX), S("PDPDNUM", "PD", MR_PD))
        write_reg(M("VIRTADDRLSB", MR_INDEX), lo(mr_va))
        write_reg(M("VIRTADDRMSB", MR_INDEX), hi(mr_va))
        write_reg(M("BUFBASEADDRLSB", MR_INDEX), lo(src_bus))
        write_reg(M("BUFBASEADDRMSB", MR_INDEX), hi(src_bus))
        write_reg(M("BUFRKEY", MR_INDEX), S("BUFRKEY", "KEY", MR_KEY))
        write_reg(M("WRRDBUFLEN", MR_INDEX), src_len)
        write_reg(M("ACCESSDESC", MR_INDEX), mr_access)
        print("MR %d: PD %d, VA 0x%x, PA 0x%x, %d bytes, R_Key 0x%x, ACCESSDESC 0x%x (remote read)" % (
            MR_INDEX, MR_PD, mr_va, src_bus, src_len, mr_rkey, mr_access))

        # 6. The RC QP, in the MR's PD.
        at["step"] = "6 (RC QP)"
        sq_bus, sq = nic.dma_alloc(sq_depth * WQE.size, 4096)
        cq_bus, cq_ring = nic.dma_alloc(sq_depth * 4, 4096)
        rq_bus, _ = nic.dma_alloc(rq_depth * rq_elem, 4096)
        db_bus, db = nic.dma_alloc(64, 64)  # [0] CQ head mirror, [1] RQ write-pointer mirror
        cq = {"ring": cq_ring, "mirror": db, "depth": sq_depth, "ci": 0}
        pmtu_code = 0
        while (256 << pmtu_code) < pmtu:
            pmtu_code += 1
        write_reg(Q("QDEPTHi", n), S("QDEPTHi", "SQ_DEPTH", sq_depth) | S("QDEPTHi", "RQ_DEPTH", rq_depth))
        write_reg(Q("SQBAi", n), lo(sq_bus))
        write_reg(Q("SQBAMSBi", n), hi(sq_bus))
        write_reg(Q("CQBAi", n), lo(cq_bus))
        write_reg(Q("CQBAMSBi", n), hi(cq_bus))
        write_reg(Q("RQBAi", n), lo(rq_bus))
        write_reg(Q("RQBAMSBi", n), hi(rq_bus))
        write_reg(Q("CQDBADDi", n), lo(db_bus))
        write_reg(Q("CQDBADDMSBi", n), hi(db_bus))
        write_reg(Q("RQWPTRDBADDi", n), lo(db_bus + 4))
        write_reg(Q("RQWPTRDBADDMSBi", n), hi(db_bus + 4))
        program_qp_peer(psn)
        qp_conf = (S("QPCONFi", "EN", 1) | S("QPCONFi", "CQ_IRQ_EN", 1) | S("QPCONFi", "HW_HANDSHAKE_DIS", 1) |
                   S("QPCONFi", "CQE_WRITE_EN", 1) | S("QPCONFi", "PMTU", pmtu_code) |
                   S("QPCONFi", "RQ_BUF_SIZE", rq_elem // 256))
        write_reg(Q("QPCONFi", n), qp_conf)

        # 7. The WRITE; the completion interrupt; the CQ polled.
        at["step"] = "7 (WRITE, completion)"
        post_write(sq, 0, WRID_FIRST, src_bus, length, peer_va, peer_rkey)
        t_post = nic.now_ps()
        nic.write32(Q("SQPIi", n), 1)
        sts = take_irq(S("INTSTS", "WQE_DONE", 1))
        t_first = us_since(t_post)
        got = poll_cq(cq, 1, IRQ_TIMEOUT_NS)
        if len(got) != 1:
            fail("no CQE behind the CQ head mirror (mirror %d) within 1 ms" % u32_at(db, 0))
            raise GiveUp()
        check_cqe(got[0], WRID_FIRST, WQE_OP_WRITE, 0)
        head = nic.read32(Q("CQHEADi", n))
        if head != 1 or u32_at(db, 0) != 1:
            fail("CQHEADi %d / CQ mirror %d, expected 1" % (head, u32_at(db, 0)))
        packets = (length + pmtu - 1) // pmtu
        next_psn = (psn + packets) & 0xFFFFFF
        first = (t_first, sts, head, u32_at(db, 0), got[0])
        print("WRITE: completion after %.3f us, INTSTS 0x%x, CQHEADi %d, CQ mirror %d, CQE 0x%08x" % first)

        # 8. A fatal error on this QP alone: the WQE's payload lies past the
        #    host memory (the first bus address after it, in no buffer of the
        #    program). The NIC's DMA read fails before a packet is built.
        at["step"] = "8 (fatal error)"
        bad_laddr = nic.mem_bytes()
        if not bad_laddr or nic.dma_view(bad_laddr, 1) is not None:
            fail("bus address 0x%x is in the program's memory" % bad_laddr)
        post_write(sq, 1, WRID_BAD, bad_laddr, AGAIN_BYTES, peer_va + length, peer_rkey)
        t_bad = nic.now_ps()
        nic.write32(Q("SQPIi", n), 2)
        sts = take_irq(S("INTSTS", "FATAL", 1))
        t_fatal = us_since(t_bad)
        if not G("INTSTS", "FATAL", sts):
            raise GiveUp()
        # The error-status queue: one 8-byte entry, QPN[31:16] | code[15:0], 0.
        wptr = G("IPKTERRQWPTR", "VALUE", nic.read32(R("IPKTERRQWPTR")))
        entry, entry_hi = u32_at(errq, 0), u32_at(errq, 1)
        if wptr != 1:
            fail("IPKTERRQWPTR %d, expected 1 (one entry)" % wptr)
        if entry >> 16 != n or (entry & 0xFFFF) != FATAL_WQE or entry_hi != 0:
            fail("error-status queue entry 0x%08x 0x%08x: expected QP%d, code 0x%02x (WQE or payload outside host "
                 "memory)" % (entry, entry_hi, n, FATAL_WQE))
        stat_fatal = nic.read32(Q("STATQPi", n))
        if not G("STATQPi", "FATAL", stat_fatal):
            fail("STATQPi 0x%08x: the fatal bit is clear" % stat_fatal)
        # The failed WQE still completes, with ERRFLAG (PG332: the QP entered the fatal state).
        got = poll_cq(cq, 1, IRQ_TIMEOUT_NS)
        if len(got) != 1:
            fail("no CQE for the failed WRITE (CQ mirror %d)" % u32_at(db, 0))
            raise GiveUp()
        check_cqe(got[0], WRID_BAD, WQE_OP_WRITE, 1)
        psn_after = G("SQPSNi", "PSN", nic.read32(Q("SQPSNi", n)))
        if psn_after != next_psn:
            fail("SQPSNi %d, expected %d: the failed WRITE must not use a PSN" % (psn_after, next_psn))
        print("fatal: WRITE of %d bytes from 0x%x (past the host memory): fatal interrupt after %.3f us, INTSTS 0x%x, "
              "error-status queue QP%d code 0x%02x, STATQPi 0x%08x, CQE 0x%08x, SQPSNi %d" % (
                  AGAIN_BYTES, bad_laddr, t_fatal, sts, entry >> 16, entry & 0xFFFF, stat_fatal, got[0], psn_after))

        # 9. PG332 ch.6 fatal recovery. (1: the entry is read above; nothing
        #    is posted until the QP is back.)
        at["step"] = "9 (fatal recovery)"
        t_rec = nic.now_ps()
        # 2. Under recovery; wait for the queues to drain.
        conf_now = nic.read32(Q("QPCONFi", n))
        write_reg(Q("QPCONFi", n), conf_now | S("QPCONFi", "UNDER_RECOVERY", 1))
        drain_looks = wait_drained(100000)
        if not drain_looks:
            raise GiveUp()
        # 3. Disable, keeping the recovery bit.
        write_reg(Q("QPCONFi", n), (conf_now | S("QPCONFi", "UNDER_RECOVERY", 1)) & ~S("QPCONFi", "EN", 1))
        # 4. SW override for this QP; zero the pointers; wait until CQHEADi reads 0.
        write_reg(R("XRNICADCONF"),
                  adconf | S("XRNICADCONF", "SW_OVERRIDE", 1) | S("XRNICADCONF", "SW_OVERRIDE_QPN", n))
        for name in ("STATRQPIDBi", "STATRQBUFCAi", "STATRQBUFCAMSBi", "RQCIi", "STATCURSQPTRi", "SQPIi", "SQPSNi",
                     "LSTRQREQi", "STATMSNi", "CQHEADi"):
            write_reg(Q(name, n), 0)
        head_looks = 1
        head_deadline = nic.now_ps() + 100000000  # 100 us
        while True:
            head = G("CQHEADi", "VALUE", nic.read32(Q("CQHEADi", n)))
            if head == 0:
                break
            if nic.now_ps() >= head_deadline:
                fail("CQHEADi still %d 100 us after it was zeroed" % head)
                raise GiveUp()
            nic.delay_ns(100)
            head_looks += 1
        # 5. The QP again: the SQ PSN the peer still expects (the failed WRITE
        #    used none), its last request PSN, MAC, IP (IPv4: QPCONFi[7] = 0),
        #    timeouts, PD, QPADVCONF; the MR's rights again (PG332 writes
        #    ACCESSDESC here; this MR keeps remote read only). The retry and
        #    RNR counts of STATQPi start over when the QP is enabled.
        program_qp_peer(next_psn)
        write_reg(M("ACCESSDESC", MR_INDEX), mr_access)
        # 6. Enabled, not under recovery; the SW override ends.
        write_reg(Q("QPCONFi", n), qp_conf)
        write_reg(R("XRNICADCONF"), adconf)
        t_recovery = us_since(t_rec)
        stat_back = nic.read32(Q("STATQPi", n))
        if (G("STATQPi", "FATAL", stat_back) or G("STATQPi", "RETRY_COUNT", stat_back) or
                G("STATQPi", "RNR_COUNT", stat_back) or not G("STATQPi", "SQ_EMPTY", stat_back) or
                not G("STATQPi", "OSQ_EMPTY", stat_back)):
            fail("STATQPi 0x%08x after the recovery: expected not fatal, retry and RNR counts 0, SQ and outstanding "
                 "queue empty" % stat_back)
        # The program's side starts over with the NIC: SQ, CQ and its mirror at 0.
        cq_ring[:] = bytes(len(cq_ring))
        db[0:4] = bytes(4)
        cq["ci"] = 0
        print("recovery: drained after %d look(s), CQHEADi 0 after %d look(s), %.3f us from under-recovery to the end "
              "of the SW override; STATQPi 0x%08x, SQPSNi %d again" % (drain_looks, head_looks, t_recovery, stat_back,
                                                                       next_psn))

        # 10. A WRITE again: AGAIN_BYTES of AGAIN_FILL into the peer's MR after the first WRITE's bytes.
        at["step"] = "10 (WRITE after the recovery)"
        post_write(sq, 0, WRID_AGAIN, src_bus + length, AGAIN_BYTES, peer_va + length, peer_rkey)
        t_again = nic.now_ps()
        nic.write32(Q("SQPIi", n), 1)
        sts = take_irq(S("INTSTS", "WQE_DONE", 1))
        got = poll_cq(cq, 1, IRQ_TIMEOUT_NS)
        if len(got) != 1:
            fail("no CQE behind the CQ head mirror (mirror %d) within 1 ms" % u32_at(db, 0))
            raise GiveUp()
        t_done = us_since(t_again)
        check_cqe(got[0], WRID_AGAIN, WQE_OP_WRITE, 0)
        head = nic.read32(Q("CQHEADi", n))
        if head != 1 or u32_at(db, 0) != 1:
            fail("CQHEADi %d / CQ mirror %d, expected 1" % (head, u32_at(db, 0)))
        again_packets = (AGAIN_BYTES + pmtu - 1) // pmtu
        psn_end = G("SQPSNi", "PSN", nic.read32(Q("SQPSNi", n)))
        if psn_end != (next_psn + again_packets) & 0xFFFFFF:
            fail("SQPSNi %d, expected %d (%d packet(s) from %d)" % (
                psn_end, (next_psn + again_packets) & 0xFFFFFF, again_packets, next_psn))
        stat_end = nic.read32(Q("STATQPi", n))
        if G("STATQPi", "FATAL", stat_end):
            fail("STATQPi 0x%08x: fatal again" % stat_end)
        print("WRITE again of %d bytes at PSN %d: completion after %.3f us, INTSTS 0x%x, CQHEADi %d, CQ mirror %d, "
              "CQE 0x%08x, SQPSNi %d" % (AGAIN_BYTES, next_psn, t_done, sts, head, u32_at(db, 0), got[0], psn_end))

        # QP1 stayed quiet: no MAD interrupt, nothing in its RQ.
        at["step"] = "end (QP1, counters)"
        qp1_rq_pi = G("STATRQPIDBi", "VALUE", nic.read32(Q("STATRQPIDBi", 1)))
        if G("INTSTS", "MAD", intsts_seen[0]) or qp1_rq_pi != 0 or u32_at(qp1_db, 1) != 0:
            fail("QP1 received something (INTSTS seen 0x%x, STATRQPIDBi %d, RQ mirror %d): the peer sends no MADs" % (
                intsts_seen[0], qp1_rq_pi, u32_at(qp1_db, 1)))
        st = nic.stats()
        if st["dma_read_bytes"] < length + AGAIN_BYTES:
            fail("the NIC read fewer bytes than the two payloads")
        report = [entry & 0xFFFF, t_recovery, next_psn, t_done, st]
        nic.close()
    except (eb.BridgeError, GiveUp) as e:
        if isinstance(e, eb.BridgeError):
            fail("bridge: %s" % e)
        try:
            nic.close()
        except eb.BridgeError:
            pass
        print("WRITE of %d bytes: FAIL (%d problem(s)), stopped in step %s" % (length, len(failures), at["step"]))
        return 1

    code, t_recovery, next_psn, t_done, st = report
    print("WRITE of %d bytes: %s, completion after %.3f us, INTSTS 0x%x, CQHEADi %d, CQ mirror %d, CQE 0x%08x; "
          "fatal 0x%02x recovered in %.3f us, WRITE again at PSN %d done after %.3f us; "
          "bridge: %d MMIO reads, %d MMIO writes, %d DMA reads (%d bytes), %d DMA writes, %d interrupts" % (
              (length, "FAIL (%d problem(s))" % len(failures) if failures else "pass") + first +
              (code, t_recovery, next_psn, t_done, st["mmio_reads"], st["mmio_writes"], st["dma_reads"],
               st["dma_read_bytes"], st["dma_writes"], st["interrupts"])))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
