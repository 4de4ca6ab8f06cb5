#!/usr/bin/env python3
"""Byte-for-byte output manifest of every scenario (issue 14).

For every scenario under SCENARIOS and each datapath (rtl, model) it runs
`ernic-sim run FILE --datapath DP --pcap --log --json --vcd` in a scratch
folder and records the SHA-256 of every output file: the merged capture and
the four taps, the transaction log, the VCD and its GTKWave save file, and
the JSON report. What depends on the run and not on the simulation is left
out before hashing: the JSON's `wall` (wall-clock speed) and `reproduce`
(command line, git revision, tool versions) keys, the scratch folder's path
where the JSON and the GTKWave file name the output files, and the
scenario folder's path where the JSON and the log name a scenario line (so
the manifest holds in any checkout).

  golden.py --sim build/ernic-sim --scenarios scenarios --manifest M --update
  golden.py --sim build/ernic-sim --scenarios scenarios --manifest M --check

--check exits 1 listing every output whose hash differs (and every run that
did not exit 0, or a scenario or output that is new or gone), 0 when all
agree. --only SUBSTR restricts to scenario paths containing SUBSTR (with
--update, the other entries of the manifest are kept).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

DATAPATHS = ("rtl", "model")


def digest(path, scratch, root, bin_dir):
    """SHA-256 of an output with what depends on where it ran replaced: the
    scratch folder, the scenario folder's path and the simulator's folder
    (a program step's `{bin}`), so that any checkout agrees. Large files
    (VCD, captures, logs) are read in pieces."""
    name = os.path.basename(path)
    subs = [(scratch.encode(), b"SCRATCH"), (root.encode(), b"SCENARIOS"), (bin_dir.encode(), b"BIN")]
    if name.endswith(".json"):
        data = open(path, "rb").read()
        for a, b in subs:
            data = data.replace(a, b)
        j = json.loads(data)
        j.pop("wall", None)
        j.pop("reproduce", None)
        return hashlib.sha256(json.dumps(j, sort_keys=True).encode()).hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if name.endswith(".gtkw") or name.endswith(".log"):
            for line in f:
                for a, b in subs:
                    line = line.replace(a, b)
                h.update(line)
        else:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def run_one(sim, root, rel, dp):
    scratch = tempfile.mkdtemp(prefix="golden_")
    try:
        out = os.path.join(scratch, "o")
        cmd = [sim, "run", os.path.join(root, rel), "--datapath", dp, "--quiet", "--pcap", out + ".pcap",
               "--log", out + ".log", "--json", out + ".json", "--vcd", out + ".vcd"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        lines = []
        if p.returncode != 0:
            lines.append((dp, rel, "exit", "exit %d" % p.returncode))
        for f in sorted(os.listdir(scratch)):
            lines.append((dp, rel, f[len("o"):] if f.startswith("o") else f,
                          digest(os.path.join(scratch, f), scratch, root, os.path.dirname(os.path.realpath(sim)))))
        return lines
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--update", action="store_true")
    g.add_argument("--check", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.scenarios)
    files = []
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".yaml"):
                files.append(os.path.relpath(os.path.join(d, f), root))
    files = sorted(f for f in files if a.only in f)
    jobs = [(rel, dp) for rel in files for dp in DATAPATHS]
    got = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for lines in ex.map(lambda j: run_one(os.path.abspath(a.sim), root, j[0], j[1]), jobs):
            for dp, rel, kind, h in lines:
                got[(dp, rel, kind)] = h
    if a.update:
        if a.only and os.path.exists(a.manifest):  # keep the entries outside --only
            for line in open(a.manifest):
                if not line.startswith("#") and line.strip():
                    dp, rel, kind, h = line.split(" ", 3)
                    if a.only not in rel:
                        got[(dp, rel, kind)] = h.strip()
        with open(a.manifest, "w") as m:
            m.write("# tb/golden/golden.py --update: datapath scenario output sha256 (JSON without wall/reproduce)\n")
            for k in sorted(got):
                m.write("%s %s %s %s\n" % (k[0], k[1], k[2], got[k]))
        print("golden: %d outputs of %d runs written to %s" % (len(got), len(jobs), a.manifest))
        return 0
    want = {}
    for line in open(a.manifest):
        if line.startswith("#") or not line.strip():
            continue
        dp, rel, kind, h = line.split(" ", 3)
        if a.only in rel:
            want[(dp, rel, kind)] = h.strip()
    bad = []
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            bad.append("%s %s %s: manifest %s, now %s" % (k[0], k[1], k[2], want.get(k, "(none)"), got.get(k, "(none)")))
    for b in bad:
        print("DIFF " + b)
    print("golden: %d outputs of %d runs compared, %d differ" % (len(want), len(jobs), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
