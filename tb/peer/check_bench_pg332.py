#!/usr/bin/env python3
"""`ernic-sim bench --profile pg332` prints its table with every row: the
three initiator figures measured (a number and a difference in %) and the
three incoming ones, and writes pg332.csv. The figures are a benchmark,
not checked here (16 messages a figure keep the test short)."""
import argparse
import re
import subprocess
import sys

ROWS = ["initiator WRITE", "initiator READ", "initiator SEND", "incoming WRITE", "incoming READ", "incoming SEND"]
PG332 = {"initiator WRITE": "95.4", "initiator READ": "94.9", "initiator SEND": "94.7",
         "incoming WRITE": "97.5", "incoming READ": "78.7", "incoming SEND": "91-93"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    r = subprocess.run([a.sim, "bench", "--profile", "pg332", "--max-iters", "16", "--out", a.out],
                       capture_output=True, text=True, timeout=110)
    print(r.stdout)
    print(r.stderr, file=sys.stderr)
    errs = []
    if r.returncode != 0:
        errs.append("exit status %d" % r.returncode)
    for row in ROWS:
        line = next((l for l in r.stdout.splitlines() if l.startswith(" " + row + " ")), None)
        if line is None:
            errs.append("no row '%s'" % row)
            continue
        if PG332[row] not in line.split():
            errs.append("row '%s' lacks PG332's figure %s: %s" % (row, PG332[row], line))
        measured = re.match(r"\s*\S+ \S+\s+(\d+\.\d\d)\s+\S+\s+([+-]\d+\.\d\d)%", line)
        if row.startswith("initiator") and not measured:
            errs.append("row '%s' has no simulated figure and difference: %s" % (row, line))
        if row.startswith("incoming") and not (measured or "not measured" in line):
            errs.append("row '%s' neither measured nor saying why not: %s" % (row, line))
    try:
        with open(a.out + "/pg332.csv") as f:
            lines = f.read().splitlines()
        if len(lines) != 1 + len(ROWS):
            errs.append("pg332.csv has %d lines, expected %d" % (len(lines), 1 + len(ROWS)))
    except OSError as e:
        errs.append("pg332.csv: %s" % e)
    # Bad options are usage errors before anything runs (exit 2, nothing written).
    for bad, says in ((["--max-iters", "0"], "--max-iters >= 1"),
                      (["--speed-datapaths", "bogus"], "unknown datapath 'bogus'"),
                      (["--peer-latency-ns", "-5"], "--peer-latency-ns")):
        b = subprocess.run([a.sim, "bench", "--profile", "pg332", "--out", a.out + "/bad"] + bad,
                           capture_output=True, text=True, timeout=30)
        if b.returncode != 2 or says not in b.stderr:
            errs.append("%s: exit %d, stderr %r" % (" ".join(bad), b.returncode, b.stderr))
    for e in errs:
        print("FAIL:", e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
