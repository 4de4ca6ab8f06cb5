#!/usr/bin/env python3
"""The Python side of the bridge (issue 15): examples/python/seed000_write.py
over examples/python/ernic_bridge.py (ctypes on libernic_bridge.so) must
pass its scenario, and put on the wire exactly what the C program
examples/c/seed000_write.c does.

1. `<sim> run bridge_python_write.yaml` (beside this file): exit 0, the
   program's one-line summary says pass.
2. `<sim> run <scenarios>/examples/bridge_c_write.yaml`: exit 0.
3. The two runs' wire pcaps (the link's, and the taps A-tx, A-rx, B-tx,
   B-rx) are byte-identical: the same register sequence and memory layout
   make the same packets at the same simulated times. Also compared: the
   transaction logs without their `step` records (those name the scenario
   file and line), i.e. every register access, DMA, interrupt, CQE and
   frame of both nodes with its time; and the bridge counters of node A in
   the JSON reports.

The program finds libernic_bridge.so through ERNIC_BRIDGE_LIB, which the
simulator sets for the programs it starts; this test removes any inherited
ERNIC_BRIDGE_LIB so it checks that. --lib PATH sets it in the simulator's
environment instead (the program inherits it), for a simulator built
before it set ERNIC_BRIDGE_LIB.

  test_python.py --sim build/ernic-sim --scenarios scenarios [--lib build/model/libernic_bridge.so]
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WIRES = ("", ".A-tx", ".A-rx", ".B-tx", ".B-rx")  # <stem>.pcap and its taps


def run(sim, scenario, out, env):
    cmd = [sim, "run", scenario, "--json", out + ".json", "--pcap", out + ".pcap", "--log", out + ".log"]
    print("run  %s" % " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout + p.stderr


def pcap_packets(data):
    """Records in a classic pcap (either byte order), or None if it is not one."""
    if len(data) < 24:
        return None
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        return None
    n, at = 0, 24
    while at + 16 <= len(data):
        incl = struct.unpack_from(e + "I", data, at + 8)[0]
        at += 16 + incl
        n += 1
    return n if at == len(data) else None


def log_records(path):
    with open(path) as f:
        return [line for line in f if '"kind":"step"' not in line]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", required=True, help="ernic-sim")
    ap.add_argument("--scenarios", required=True, help="the scenarios folder (examples/bridge_c_write.yaml in it)")
    ap.add_argument("--lib", help="libernic_bridge.so, put in the simulator's environment as ERNIC_BRIDGE_LIB")
    ap.add_argument("--scenario", default=os.path.join(HERE, "bridge_python_write.yaml"),
                    help="the Python program's scenario (default: the one beside this file)")
    ap.add_argument("--keep", help="write the outputs in this folder (kept) instead of a temporary one")
    a = ap.parse_args()

    env = dict(os.environ)
    env.pop("ERNIC_BRIDGE_LIB", None)
    if a.lib:
        env["ERNIC_BRIDGE_LIB"] = os.path.abspath(a.lib)
        print("ERNIC_BRIDGE_LIB=%s (from --lib, inherited by the program)" % env["ERNIC_BRIDGE_LIB"])
    else:
        print("ERNIC_BRIDGE_LIB: not inherited; the simulator must set it for the program")
    c_scenario = os.path.join(a.scenarios, "examples", "bridge_c_write.yaml")

    problems = []
    with tempfile.TemporaryDirectory(prefix="ernic-bridge-py-") as tmp:
        outdir = a.keep or tmp
        os.makedirs(outdir, exist_ok=True)
        py, c = os.path.join(outdir, "python"), os.path.join(outdir, "c")

        # 1 and 2: both runs pass.
        reports = {}
        for label, scen, out in (("python", a.scenario, py), ("c", c_scenario, c)):
            rc, text = run(a.sim, scen, out, env)
            try:
                with open(out + ".json") as f:
                    reports[label] = json.load(f)
            except (OSError, ValueError) as e:
                reports[label] = {}
                problems.append("%s run: JSON report: %s" % (label, e))
            prog = reports[label].get("nodes", {}).get("A", {}).get("program", {})
            summary = [l for l in prog.get("output", "").splitlines() if l.startswith("WRITE of")]
            print("%s %-6s exit %d; program %s: %s" % ("ok  " if rc == 0 else "FAIL", label, rc,
                                                      prog.get("status", "?"), summary[0] if summary else "-"))
            if rc != 0:
                problems.append("%s run: exit %d, expected 0" % (label, rc))
                print("     output:\n       " + "\n       ".join(text.splitlines()[-20:]))
            if label == "python" and rc == 0 and not (summary and ": pass," in summary[0]):
                problems.append("python run: the program's summary does not say pass")

        # 3. The wire, byte for byte.
        for w in WIRES:
            f1, f2 = py + w + ".pcap", c + w + ".pcap"
            try:
                with open(f1, "rb") as f:
                    b1 = f.read()
                with open(f2, "rb") as f:
                    b2 = f.read()
            except OSError as e:
                problems.append("pcap%s: %s" % (w, e))
                print("FAIL pcap %-6s %s" % (w or "(link)", e))
                continue
            n1, n2 = pcap_packets(b1), pcap_packets(b2)
            same = b1 == b2
            at = next((i for i in range(min(len(b1), len(b2))) if b1[i] != b2[i]), min(len(b1), len(b2)))
            print("%s pcap %-6s python %6d bytes %3s packets sha256 %s | C %6d bytes %3s packets sha256 %s: %s" % (
                "ok  " if same else "FAIL", w.lstrip(".") or "link", len(b1), n1, hashlib.sha256(b1).hexdigest()[:16],
                len(b2), n2, hashlib.sha256(b2).hexdigest()[:16],
                "byte-identical" if same else "DIFFER from byte %d" % at))
            if not same:
                problems.append("pcap%s differs" % w)
            if n1 in (None, 0):
                problems.append("pcap%s: no packets (or not a pcap)" % w)

        # The transaction logs without step records: every register access, DMA, interrupt, frame, in time.
        try:
            l1, l2 = log_records(py + ".log"), log_records(c + ".log")
            regs = sum('"kind":"reg"' in l and '"node":"A"' in l for l in l1)
            same = l1 == l2
            first = next((i for i in range(min(len(l1), len(l2))) if l1[i] != l2[i]), None)
            print("%s log    %d records (%d register accesses on A) python vs %d C, step records aside: %s" % (
                "ok  " if same else "FAIL", len(l1), regs, len(l2),
                "identical" if same else "first difference at record %s:\n       python %s       C      %s" % (
                    first, l1[first] if first is not None else "-", l2[first] if first is not None else "-")))
            if not same:
                problems.append("transaction logs differ")
        except OSError as e:
            problems.append("log: %s" % e)

        # Node A's bridge counters.
        b1 = reports.get("python", {}).get("nodes", {}).get("A", {}).get("bridge")
        b2 = reports.get("c", {}).get("nodes", {}).get("A", {}).get("bridge")
        same = b1 is not None and b1 == b2
        print("%s bridge counters of A: python %s, C %s" % ("ok  " if same else "FAIL", json.dumps(b1, sort_keys=True),
                                                        "the same" if same else json.dumps(b2, sort_keys=True)))
        if not same:
            problems.append("bridge counters differ")

    for p in problems:
        print("problem: %s" % p)
    print("bridge python: %d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
