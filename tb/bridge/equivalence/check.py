#!/usr/bin/env python3
"""One driver, two hosts (issue 15): node A's driver as the simulator's
built-in host (builtin.yaml) and the same driver code in a program over the
bridge (program.yaml running tb/bridge/programs/driver_write) give the same
outputs, byte for byte:

- the five pcaps (wire, A's and B's TX and RX taps): identical files;
- the transaction log (--log): identical lines, once two kinds are set
  aside that only one run can have: the scenario's step lines (one run has
  seven steps for A, the other one program step) and node A's host-domain
  state lines (the driver's verbs states, which a program's driver keeps
  in its own process: the simulator never sees them);
- the JSON report: identical, except the file names, the steps, the wall
  time, the scoreboard (it follows the built-in driver's posts; it stands
  aside for a program end) and node A's driver bookkeeping (connections) or
  program record (program, bridge).

Where it holds: the two hosts make the same register accesses at the same
times as long as no interrupt's handling overlaps other driver work. The
built-in host serves rnic_intr in its own SystemC thread, concurrently with
the step that waits; a program serves it inline, inside its waiting call,
before it goes on. An interrupt during a wait that is followed by more
driver work (e.g. a CNP interrupt while recv() waits, then RQCIi) therefore
interleaves differently: the outputs differ then, as a single-threaded
driver and a driver with an interrupt thread differ on real hardware.

  check.py --sim ERNIC_SIM --dir tb/bridge/equivalence [--datapath rtl|model|user:alt]
Exit 0 when all hold; 1 naming the first difference of each kind.
  check.py ... --selftest    the program posts 1 us later: the check must
                              name the pcaps, the log and the JSON as different
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

PCAPS = ["w.pcap", "w.A-tx.pcap", "w.A-rx.pcap", "w.B-tx.pcap", "w.B-rx.pcap"]


def run(sim, scenario, out, datapath):
    os.makedirs(out, exist_ok=True)
    cmd = [sim, "run", scenario, "--quiet", "--pcap", os.path.join(out, "w.pcap"), "--log",
           os.path.join(out, "w.log"), "--json", os.path.join(out, "w.json")]
    if datapath:
        cmd += ["--datapath", datapath]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("%s failed (exit %d):\n%s" % (scenario, p.returncode, p.stdout))


def log_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("kind") == "step":
                continue
            if e.get("node") == "A" and e.get("domain") == "host":
                continue
            out.append(line)
    return out


def report(path):
    with open(path) as f:
        j = json.load(f)
    for k in ("file", "reproduce", "steps", "wall", "scoreboard"):
        j.pop(k, None)
    for k in ("connections", "program", "bridge"):
        j["nodes"]["A"].pop(k, None)
    return j


def first_diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s only in %s" % (path, k, "builtin" if k in a else "program")
            d = first_diff(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: builtin %r, program %r" % (path, a, b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--datapath", default="")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bridge_equiv_")
    program = os.path.join(a.dir, "program.yaml")
    if a.selftest:
        with open(program) as f:
            text = f.read()
        assert "ERNIC_POST_AT_US=100" in text
        program = os.path.join(tmp, "program_late.yaml")
        with open(program, "w") as f:
            f.write(text.replace("ERNIC_POST_AT_US=100", "ERNIC_POST_AT_US=101"))
    run(a.sim, os.path.join(a.dir, "builtin.yaml"), os.path.join(tmp, "b"), a.datapath)
    run(a.sim, program, os.path.join(tmp, "p"), a.datapath)
    bad = []
    for f in PCAPS:
        x = open(os.path.join(tmp, "b", f), "rb").read()
        y = open(os.path.join(tmp, "p", f), "rb").read()
        if len(x) <= 24:
            bad.append("%s: no frames" % f)
        elif x != y:
            bad.append("%s differs (%d bytes builtin, %d program)" % (f, len(x), len(y)))
    lb, lp = log_lines(os.path.join(tmp, "b", "w.log")), log_lines(os.path.join(tmp, "p", "w.log"))
    if lb != lp:
        i = next((k for k, (x, y) in enumerate(zip(lb, lp)) if x != y), min(len(lb), len(lp)))
        bad.append("log line %d differs:\n  builtin %s  program %s" % (
            i + 1, lb[i] if i < len(lb) else "(end)\n", lp[i] if i < len(lp) else "(end)\n"))
    d = first_diff(report(os.path.join(tmp, "b", "w.json")), report(os.path.join(tmp, "p", "w.json")))
    if d:
        bad.append("JSON differs at " + d)
    frames = sum(1 for l in lb if '"kind":"frame"' in l)
    regs = sum(1 for l in lb if '"kind":"reg"' in l)
    if a.selftest:
        want = ["w.pcap differs", "log line", "JSON differs"]
        missing = [w for w in want if not any(b.startswith(w) for b in bad)]
        print("\n".join(bad))
        if missing:
            print("selftest: NOT FOUND: " + ", ".join(missing))
            return 1
        print("selftest: a post 1 us later is caught in the pcaps, the log and the JSON")
        return 0
    if bad:
        print("\n".join(bad))
        return 1
    print("equivalence%s: 5 pcaps identical; log identical (%d lines: %d frames, %d register accesses) without step "
          "lines and A's driver states; JSON identical without files, steps, wall, scoreboard and A's driver/program "
          "records" % (" (" + a.datapath + ")" if a.datapath else "", len(lb), frames, regs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
