#!/usr/bin/env python3
"""examples/python/seed000_write.py: seed 000's PG332 flow as a user's Python
program, the host of a node with `host: program`
(tb/bridge/python/bridge_python_write.yaml). The same program as
examples/c/seed000_write.c, call for call: the same register writes in the
same order, the same allocations (sizes, alignment, order), so the wire is
byte-identical to the C program's (tb/bridge/python/test_python.py).

  1. the error buffer first (without it the IP logs nothing), MAC and IP
  2. the incoming error-status queue, write-retry and response-error buffers
  3. interrupts, the base count, XRNICCONF enable
  4. an RC QP towards the peer the scenario connected (out of band: the
     QPN, PSNs, MAC, IP and the peer's MR come from the environment)
  5. an RDMA WRITE of an incrementing pattern (byte i = i & 0xFF) into the
     peer's MR
  6. the completion: wait for the interrupt, read the CQE from the CQ

Every register it writes is read back and compared; the CQE is checked
(wr_id, opcode, no error), INTSTS must hold WQE_DONE, the CQ head (register
and memory mirror) must be 1. Exit 0 only if all of it holds; 2 for a
missing or bad environment, 1 for anything else.

Needs ernic_bridge.py (beside this file) and ERNIC_BRIDGE_LIB, which the
simulator sets for the programs it starts.
"""
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


def main():
    v4x = eb.load_regs().layout == "4.x"  # the layout (ERNIC_LAYOUT) before the session: no wire change
    try:
        nic = eb.Bridge()
    except eb.BridgeError as e:
        die(str(e), 1)
    failures = []

    def fail(msg):
        print(msg, file=sys.stderr)
        failures.append(msg)

    def write_reg(addr, value):
        """write_reg in seed 000's sense, read back and compared."""
        nic.write32(addr, value)
        got = nic.read32(addr)
        if got != value:
            fail("register 0x%05x: wrote 0x%08x, read back 0x%08x" % (addr, value, got))

    R, Q, S = eb.reg, eb.qpreg, eb.field_set

    mac = parse_mac(os.environ.get("ERNIC_MAC"))
    peer_mac = parse_mac(os.environ.get("ERNIC_PEER_MAC"))
    ip, peer_ip = parse_ip(os.environ.get("ERNIC_IP")), parse_ip(os.environ.get("ERNIC_PEER_IP"))
    qpn, psn = env_u64("ERNIC_QPN") & 0xFFFFFFFF, env_u64("ERNIC_PSN") & 0xFFFFFFFF
    peer_qpn, peer_psn = env_u64("ERNIC_PEER_QPN") & 0xFFFFFFFF, env_u64("ERNIC_PEER_PSN") & 0xFFFFFFFF
    peer_va = env_u64("ERNIC_PEER_VA")
    peer_rkey = env_u64("ERNIC_PEER_RKEY") & 0xFFFFFFFF
    length = (env_u64("WRITE_BYTES") if "WRITE_BYTES" in os.environ else 65536) & 0xFFFFFFFF
    sq_depth, rq_depth = env_u64("ERNIC_SQ_DEPTH"), env_u64("ERNIC_RQ_DEPTH")
    rq_elem = env_u64("ERNIC_RQ_ELEMENT_BYTES")
    pmtu = env_u64("ERNIC_PMTU")
    num_qp = env_u64("ERNIC_NUM_QP")
    core_mhz = float(os.environ.get("ERNIC_CORE_MHZ", "200"))

    try:
        # 1. Error buffer first; MAC and IP.
        errbuf, _ = nic.dma_alloc(64 * 256, 4096)
        write_reg(R("ERRBUFBA"), errbuf & 0xFFFFFFFF)
        write_reg(R("ERRBUFBAMSB"), errbuf >> 32)
        write_reg(R("ERRBUFSZ"), S("ERRBUFSZ", "NUM", 64) | S("ERRBUFSZ", "SIZE", 256))
        write_reg(R("MACXADDLSB"), mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5])
        write_reg(R("MACXADDMSB"), mac[0] << 8 | mac[1])
        write_reg(R("IPv4XADD"), ip)

        # 2. Error-status queue, write-retry data buffers, response-error buffer.
        errq, _ = nic.dma_alloc(64 * 8, 4096)
        write_reg(R("IPKTERRQBA"), errq & 0xFFFFFFFF)
        write_reg(R("IPKTERRQBAMSB"), errq >> 32)
        write_reg(R("IPKTERRQSZ"), 64)
        datbuf_n = 16 * num_qp
        datbuf, _ = nic.dma_alloc(datbuf_n * 4096, 4096)
        write_reg(R("DATBUFBA"), datbuf & 0xFFFFFFFF)
        write_reg(R("DATBUFBAMSB"), datbuf >> 32)
        write_reg(R("DATBUFSZ"), S("DATBUFSZ", "NUM", datbuf_n & 0xFFFF) | S("DATBUFSZ", "SIZE", 4096))
        resperr, _ = nic.dma_alloc(64 * 256, 4096)
        write_reg(R("RESPERRPKTBA"), resperr & 0xFFFFFFFF)
        write_reg(R("RESPERRPKTBAMSB"), resperr >> 32)
        write_reg(R("RESPERRSZ"), S("RESPERRSZ", "NUM", 64) | S("RESPERRSZ", "SIZE", 256))

        # 3. Interrupts: completions and fatal errors; base count; enable.
        write_reg(R("INTEN"), S("INTEN", "WQE_DONE", 1) | S("INTEN", "FATAL", 1))
        basecnt = math.ceil(math.log2(4.096 * core_mhz))
        write_reg(R("XRNICADCONF"), S("XRNICADCONF", "BASE_COUNT", basecnt))
        conf = S("XRNICCONF", "EN", 1) | S("XRNICCONF", "ERRBUF_EN", 1) | S("XRNICCONF", "UDP_SPORT", 0x12B7)
        if v4x:  # 4.x moved the QP count to its own register (the C example is 3.1 only)
            write_reg(R("XRNIC_CONF_QP_EN"), S("XRNIC_CONF_QP_EN", "NUM_QP", num_qp))
        else:
            conf |= S("XRNICCONF", "NUM_QP", min(num_qp, 255))
        write_reg(R("XRNICCONF"), conf)

        # 4. The RC QP.
        sq_bus, sq = nic.dma_alloc(sq_depth * WQE.size, 4096)
        cq_bus, cq = nic.dma_alloc(sq_depth * 4, 4096)
        rq_bus, _ = nic.dma_alloc(rq_depth * rq_elem, 4096)
        db_bus, db = nic.dma_alloc(64, 64)  # CQ head mirror, RQ write-pointer mirror
        pmtu_code = 0
        while (256 << pmtu_code) < pmtu:
            pmtu_code += 1

        def lo(v):
            return v & 0xFFFFFFFF

        def hi(v):
            return (v >> 32) & 0xFFFFFFFF

        write_reg(Q("QDEPTHi", qpn), S("QDEPTHi", "SQ_DEPTH", sq_depth) | S("QDEPTHi", "RQ_DEPTH", rq_depth))
        write_reg(Q("SQBAi", qpn), lo(sq_bus))
        write_reg(Q("SQBAMSBi", qpn), hi(sq_bus))
        write_reg(Q("CQBAi", qpn), lo(cq_bus))
        write_reg(Q("CQBAMSBi", qpn), hi(cq_bus))
        write_reg(Q("RQBAi", qpn), lo(rq_bus))
        write_reg(Q("RQBAMSBi", qpn), hi(rq_bus))
        write_reg(Q("CQDBADDi", qpn), lo(db_bus))
        write_reg(Q("CQDBADDMSBi", qpn), hi(db_bus))
        write_reg(Q("RQWPTRDBADDi", qpn), lo(db_bus + 4))
        write_reg(Q("RQWPTRDBADDMSBi", qpn), hi(db_bus + 4))
        write_reg(Q("DESTQPCONFi", qpn), S("DESTQPCONFi", "QPN", peer_qpn))
        write_reg(Q("SQPSNi", qpn), psn)
        # The last request "accepted": the peer's PSN - 1, a message-ending opcode (RC WRITE ONLY 0x0A).
        write_reg(Q("LSTRQREQi", qpn),
                  S("LSTRQREQi", "PSN", (peer_psn - 1) & 0xFFFFFF) | S("LSTRQREQi", "OPCODE", 0x0A))
        write_reg(Q("MACDESADDLSBi", qpn), peer_mac[2] << 24 | peer_mac[3] << 16 | peer_mac[4] << 8 | peer_mac[5])
        write_reg(Q("MACDESADDMSBi", qpn), peer_mac[0] << 8 | peer_mac[1])
        write_reg(Q("IPDESADDR1i", qpn), peer_ip)
        write_reg(Q("TIMEOUTCONFi", qpn),
                  S("TIMEOUTCONFi", "ACK_TIMEOUT", 14) | S("TIMEOUTCONFi", "RETRY_CNT", 3) |
                  S("TIMEOUTCONFi", "RNR_RETRY_CNT", 3) | S("TIMEOUTCONFi", "RNR_TIMER", 0x1F))
        write_reg(Q("PDi", qpn), 0)
        write_reg(Q("QPADVCONFi", qpn), S("QPADVCONFi", "TTL", 64) | S("QPADVCONFi", "PKEY", 0xFFFF))
        write_reg(Q("QPCONFi", qpn),
                  S("QPCONFi", "EN", 1) | S("QPCONFi", "CQ_IRQ_EN", 1) | S("QPCONFi", "HW_HANDSHAKE_DIS", 1) |
                  S("QPCONFi", "CQE_WRITE_EN", 1) | S("QPCONFi", "PMTU", pmtu_code) |
                  S("QPCONFi", "RQ_BUF_SIZE", rq_elem // 256))

        # 5. The payload (byte i = i & 0xFF) and the WQE; the doorbell.
        src_bus, src = nic.dma_alloc(length, 4096)
        src[:] = (bytes(range(256)) * (length // 256 + 1))[:length]
        sq[0:WQE.size] = WQE.pack(0x5EED, src_bus, length, WQE_OP_WRITE, peer_va, peer_rkey, bytes(16), 0)
        t_post = nic.now_ps()
        nic.write32(Q("SQPIi", qpn), 1)

        # 6. The completion.
        if not nic.wait_irq(1000000):  # 1 ms of simulated time at most
            fail("no completion interrupt within 1 ms (timeout)")
        sts = nic.read32(R("INTSTS"))
        nic.write32(R("INTSTS"), sts)  # W1C
        head = nic.read32(Q("CQHEADi", qpn))
        cqe = struct.unpack_from("<I", cq, 0)[0]
        mirror = struct.unpack_from("<I", db, 0)[0]
        t_done = nic.now_ps()
        if not eb.field_get("INTSTS", "WQE_DONE", sts):
            fail("INTSTS lacks WQE_DONE")
        if head != 1 or mirror != 1:
            fail("CQ head %u / mirror %u, expected 1" % (head, mirror))
        # CQE (PG332): [15:0] wr_id, [23:16] opcode, [31:24] error flag.
        if (cqe & 0xFFFF) != 0x5EED or ((cqe >> 16) & 0xFF) != WQE_OP_WRITE or (cqe >> 24) != 0:
            fail("CQE 0x%08x: expected wr_id 0x5eed, opcode WRITE, no error" % cqe)
        st = nic.stats()
        if st["dma_read_bytes"] < length:
            fail("the NIC read fewer bytes than the payload")
        nic.close()
    except eb.BridgeError as e:
        fail("bridge: %s" % e)
        try:
            nic.close()
        except eb.BridgeError:
            pass
        print("%s: FAIL (%d problem(s))" % (PROG, len(failures)))
        return 1

    print("WRITE of %u bytes: %s, completion after %.3f us, INTSTS 0x%x, CQHEADi %u, CQ mirror %u, CQE 0x%08x; "
          "bridge: %d MMIO reads, %d MMIO writes, %d DMA reads (%d bytes), %d DMA writes, %d interrupts" % (
              length, "FAIL (%d problem(s))" % len(failures) if failures else "pass",
              (t_done - t_post) / 1e6, sts, head, mirror, cqe, st["mmio_reads"], st["mmio_writes"],
              st["dma_reads"], st["dma_read_bytes"], st["dma_writes"], st["interrupts"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
