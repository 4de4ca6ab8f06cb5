#!/usr/bin/env python3
"""The verbs layer (model/bridge/client/ernic_verbs.h), ctest bridge.verbs.

1. tb/bridge/verbs_checks.yaml: node A's program (verbs_checks.c) asserts
   refusals, bad_wr, completions, an RDMA READ and receives, and exits 0 only
   if all hold; here the run must pass, the program must report its checks
   with 0 failed, and the transaction log's CQEs of A's QP must carry the
   16-bit WRIDs 65520, 65521, ... consecutively across 65535 -> 0 (the
   library's wr_id mapping wrapped, ERNIC_IBV_TEST_WRID_START=65520), one
   per WQE the program posted (42); and the program's ernic_wait_event
   with ERNIC_WAIT_DMA_WRITE (the SYNC extension) woke right after the NIC's
   first DMA write into A's memory following its post: at or after the
   log's first such record, less than the PCIe write latency later; the
   fatal interrupt of the program's bad-R_Key WRITE was served by the bus
   (the log shows INTSTS read, written back, read as 0).
2. The same scenario with the model datapath passes too.
3. CM from a verbs program (scenarios/examples/bridge_verbs_cm.yaml,
   examples/c/verbs_cm.c: ernic_rdma_connect): on the wire, A's
   ConnectRequest carries rdma_cm's ServiceID for port 7471, A's QPN 2 and
   PSN 0x300 and, in its private data, the MR the program advertised (the
   VA is the program's pointer, its R_Key and length, as the program
   printed them); B's ConnectReply carries B's QPN 3, PSN 0x7000 and B's
   MR, which is what ernic_rdma_connect handed the program (it printed
   them); A's RDMA WRITE's RETH names that VA and R_Key.
4. Lock-step: verbs_checks.yaml, scenarios/examples/bridge_verbs_seed004
   and bridge_verbs_cm run with and without the bridge's wall-clock jitter
   (ERNIC_BRIDGE_TEST_JITTER_US: a random sleep before every message the
   program sends); pcaps, taps, log and JSON (minus wall time and the
   command line) must be byte-identical (the program's DMA memory, and so
   its MR VAs, sit at the same addresses in every run).
"""
import argparse
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

WQES_POSTED = 42  # verbs_checks.c: 1 + 6 + 8 + 24 + 1 + 2 (the WR posted in ERR never reaches the NIC)


def run(sim, scenario, out, env=None, extra=()):
    p = subprocess.run([sim, "run", scenario, "--json", out + ".json", "--pcap", out + ".pcap", "--log", out + ".log",
                        *extra], capture_output=True, text=True, env=env, timeout=240)
    return p.returncode, p.stdout + p.stderr


def frames(pcap):
    """The frames of a classic pcap file, in order."""
    with open(pcap, "rb") as f:
        data = f.read()
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"  # us or ns timestamps
    pos, out = 24, []
    while pos + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[pos + 8:pos + 12])[0]
        out.append(data[pos + 16:pos + 16 + incl])
        pos += 16 + incl
    return out


def roce(frame):
    """(BTH opcode, dest QP, bytes after the BTH) of an IPv4 RoCEv2 frame, or None."""
    if len(frame) < 14 + 20 + 8 + 12 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    ihl = (frame[14] & 0xF) * 4
    udp = 14 + ihl
    if struct.unpack(">H", frame[udp + 2:udp + 4])[0] != 4791:
        return None
    bth = udp + 8
    return frame[bth], int.from_bytes(frame[bth + 5:bth + 8], "big"), frame[bth + 12:]


def cm_mads(pcap):
    """{attribute id: MAD} of the UD SEND_ONLY frames to QP1 (DETH, then the 256-byte MAD)."""
    mads = {}
    for f in frames(pcap):
        r = roce(f)
        if r and r[0] == 0x64 and r[1] == 1:
            mad = r[2][8:8 + 256]
            mads.setdefault(struct.unpack(">H", mad[16:18])[0], mad)
    return mads


def mr_info(b):
    """An MR advertisement (model/roce/cm.cpp): VA, R_Key, length, big-endian."""
    return struct.unpack(">QIQ", b[:20])


def check_cm(report, out, text):
    """The CM exchange of bridge_verbs_cm on the wire against what the program printed."""
    adv = re.search(r"advertised: va 0x([0-9a-f]+) rkey 0x([0-9a-f]+) length (\d+)", text)
    con = re.search(r"server QP (\d+) \(PSN 0x([0-9a-f]+)\), server MR va 0x([0-9a-f]+) rkey 0x([0-9a-f]+) "
                    r"length (\d+)", text)
    if not adv or not con:
        report(False, "CM: the program printed no advertisement or connection line", text[-2000:])
        return
    a_mr = (int(adv.group(1), 16), int(adv.group(2), 16), int(adv.group(3)))
    b_qpn, b_psn = int(con.group(1)), int(con.group(2), 16)
    b_mr = (int(con.group(3), 16), int(con.group(4), 16), int(con.group(5)))
    req = cm_mads(out + ".A-tx.pcap").get(0x0010)
    rep = cm_mads(out + ".B-tx.pcap").get(0x0013)
    if req is None or rep is None:
        report(False, "CM: no ConnectRequest from A or no ConnectReply from B in the taps")
        return
    d = req[24:]  # the REQ's data (IBTA 12.6.5)
    service = struct.unpack(">Q", d[8:16])[0]
    qpn, psn = int.from_bytes(d[32:35], "big"), int.from_bytes(d[44:47], "big")
    req_mr = mr_info(d[140 + 36:])  # private data: rdma_cm's 36-byte IP header, then the MR
    report(service == 0x0000000001060000 | 7471 and qpn == 2 and psn == 0x300 and req_mr == a_mr,
           "ConnectRequest: ServiceID 0x%x, QPN %d, PSN 0x%x, advertised MR %s (the program's %s)" %
           (service, qpn, psn, tuple(hex(x) for x in req_mr), tuple(hex(x) for x in a_mr)))
    report(a_mr[0] >> 40 == 0x20, "the advertised VA 0x%x is the program's pointer in its fixed DMA arena "
           "(0x200000000000..)" % a_mr[0])
    d = rep[24:]
    qpn, psn = int.from_bytes(d[12:15], "big"), int.from_bytes(d[20:23], "big")
    rep_mr = mr_info(d[36:])
    report(qpn == b_qpn == 3 and psn == b_psn == 0x7000 and rep_mr == b_mr and b_mr[2] == 4096,
           "ConnectReply: QPN %d, PSN 0x%x, MR %s; ernic_rdma_connect gave QPN %d, PSN 0x%x, MR %s" %
           (qpn, psn, tuple(hex(x) for x in rep_mr), b_qpn, b_psn, tuple(hex(x) for x in b_mr)))
    reth = [r[2][:16] for r in map(roce, frames(out + ".A-tx.pcap")) if r and r[0] == 0x06]  # RC WRITE_FIRST
    va, rkey, length = struct.unpack(">QII", reth[0]) if reth else (None, None, None)
    report(len(reth) == 1 and va == b_mr[0] and rkey == b_mr[1] and length == 4096,
           "the WRITE's RETH: VA %s R_Key %s length %s, the server's MR 0x%x / 0x%x" %
           (hex(va) if va is not None else None, hex(rkey) if rkey is not None else None, length, b_mr[0], b_mr[1]))


def digest(out):
    h = hashlib.sha256()
    for ext in (".pcap", ".log", ".A-tx.pcap", ".A-rx.pcap", ".B-tx.pcap", ".B-rx.pcap"):
        with open(out + ext, "rb") as f:
            h.update(f.read())
    with open(out + ".json") as f:
        j = json.load(f)
    j.pop("wall", None)
    j.pop("reproduce", None)
    h.update(json.dumps(j, sort_keys=True).replace(out, "OUT").encode())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--checks", required=True)
    ap.add_argument("--scenarios", required=True)
    a = ap.parse_args()
    bad = 0

    def report(ok, what, detail=""):
        nonlocal bad
        print("%s %s%s" % ("ok  " if ok else "FAIL", what, ("\n" + detail) if detail and not ok else ""))
        bad += not ok

    with tempfile.TemporaryDirectory(prefix="ernic-verbs-") as tmp:
        out = os.path.join(tmp, "checks")
        rc, text = run(a.sim, a.checks, out)
        m = re.search(r"verbs_checks: (\d+) checks, (\d+) failed", text)
        report(rc == 0 and m is not None and m.group(2) == "0" and int(m.group(1)) > 50,
               "verbs_checks: exit %d, %s" % (rc, m.group(0) if m else "no summary line"), text[-3000:])
        log = subprocess.run([a.sim, "log", out + ".log", "--node", "A", "--kind", "cqe", "--qp", "2"],
                             capture_output=True, text=True).stdout
        wrids = [int(x) for x in re.findall(r"wr_id=(\d+)", log)]
        want = [(65520 + i) % 65536 for i in range(WQES_POSTED)]
        report(wrids == want, "CQE WRIDs of QP2: %d, %s .. %s (want 65520.. across 65535 -> 0, %d of them)" %
               (len(wrids), wrids[:2], wrids[-2:], WQES_POSTED), log[-2000:])

        m = re.search(r"dma-write wait from (\d+) ps woke at (\d+) ps", text)
        dma = subprocess.run([a.sim, "log", out + ".log", "--node", "A", "--kind", "dma"], capture_output=True,
                             text=True).stdout
        writes = [round(float(t) * 1e6) for t in re.findall(r"^\s*([0-9.]+) us\s+A .* write addr=", dma, re.M)]
        if m:
            t1, t2 = int(m.group(1)), int(m.group(2))
            first = min([w for w in writes if w >= t1], default=None)
            report(first is not None and first <= t2 < first + 100000,
                   "DMA-write wait: posted at %d ps, woke at %d ps, the NIC's first write record after it at %s ps" %
                   (t1, t2, first), dma[-2000:])
        else:
            report(False, "DMA-write wait: the program printed no wake time", text[-2000:])

        # The fatal interrupt of the bad-R_Key WRITE is served by the bus
        # (Driver::service_interrupt: INTSTS read, cleared, read again as 0).
        regs = subprocess.run([a.sim, "log", out + ".log", "--node", "A", "--kind", "reg,intr"], capture_output=True,
                              text=True).stdout
        served = re.search(r"intr\s+level=1 intsts=0x00000080.*?read INTSTS = 0x00000080.*?write INTSTS = 0x00000080"
                           r".*?read INTSTS = 0x00000000", regs, re.S)
        report(served is not None, "the fatal interrupt was served over the bridge (INTSTS 0x80 read, cleared, 0)",
               regs[-2000:])

        # A 2^62 ns wait saturates (ernic_delay_ns, ernic_wait_irq): the
        # program is still waiting when the run reaches its time limit.
        for which in ("delay", "wait_irq"):
            scen = os.path.join(tmp, "huge_%s.yaml" % which)
            with open(scen, "w") as f:
                f.write("scenario: bridge_huge_%s\nseed: 1\nlimits: { sim_time_us: 300, watchdog_us: 1000 }\n"
                        "nodes:\n  A: { mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1, host: program }\n"
                        "  B: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2 }\nsteps:\n  - init: [B]\n"
                        "  - program: { node: A, run: [\"{bin}/tb/bridge/bridge_verbs_checks\", \"%s\"], "
                        "timeout_s: 60 }\n" % (which, which))
            rc, text = run(a.sim, scen, os.path.join(tmp, "huge_" + which))
            report(rc == 3 and "simulated time limit of 300 us reached" in text and "returned" not in text,
                   "ernic_%s(2^62 ns) ran the simulation to its time limit: exit %d" %
                   ("delay_ns" if which == "delay" else which, rc), text[-2000:])

        rc, text = run(a.sim, a.checks, os.path.join(tmp, "checks_model"), extra=("--datapath", "model"))
        report(rc == 0, "verbs_checks on the model datapath: exit %d" % rc, text[-3000:])

        cm = os.path.join(a.scenarios, "examples", "bridge_verbs_cm.yaml")
        out = os.path.join(tmp, "cm")
        rc, text = run(a.sim, cm, out)
        report(rc == 0, "bridge_verbs_cm: exit %d" % rc, text[-3000:])
        check_cm(report, out, text)

        seed004 = os.path.join(a.scenarios, "examples", "bridge_verbs_seed004.yaml")
        for name, scen in (("checks", a.checks), ("seed004", seed004), ("cm", cm)):
            digests = []
            for i, jitter in enumerate(["0", "1000", "1000"]):
                o = os.path.join(tmp, "%s_jitter%d" % (name, i))
                rc, text = run(a.sim, scen, o, dict(os.environ, ERNIC_BRIDGE_TEST_JITTER_US=jitter))
                if rc != 0:
                    report(False, "%s with jitter %s us: exit %d" % (name, jitter, rc), text[-3000:])
                    continue
                digests.append(digest(o))
            report(len(digests) == 3 and len(set(digests)) == 1,
                   "%s: outputs identical with and without wall-clock jitter (%s)" %
                   (name, ", ".join(d[:12] for d in digests)))
    print("bridge verbs: %d problem(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
