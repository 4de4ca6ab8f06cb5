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
3. Lock-step: verbs_checks.yaml and scenarios/examples/bridge_verbs_seed004
   run with and without the bridge's wall-clock jitter
   (ERNIC_BRIDGE_TEST_JITTER_US: a random sleep before every message the
   program sends); pcaps, taps, log and JSON (minus wall time and the
   command line) must be byte-identical.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

WQES_POSTED = 42  # verbs_checks.c: 1 + 6 + 8 + 24 + 1 + 2 (the WR posted in ERR never reaches the NIC)


def run(sim, scenario, out, env=None, extra=()):
    p = subprocess.run([sim, "run", scenario, "--json", out + ".json", "--pcap", out + ".pcap", "--log", out + ".log",
                        *extra], capture_output=True, text=True, env=env, timeout=240)
    return p.returncode, p.stdout + p.stderr


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

        rc, text = run(a.sim, a.checks, os.path.join(tmp, "checks_model"), extra=("--datapath", "model"))
        report(rc == 0, "verbs_checks on the model datapath: exit %d" % rc, text[-3000:])

        seed004 = os.path.join(a.scenarios, "examples", "bridge_verbs_seed004.yaml")
        for name, scen in (("checks", a.checks), ("seed004", seed004)):
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
