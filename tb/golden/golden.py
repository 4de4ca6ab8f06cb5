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

Each rtl run is made a second time without --vcd (its capture, taps, log
and JSON, the JSON without its `waveform` key, must hash the same as the
traced run's): the RTL datapath owes quiet model edges only while no
waveform is written (model/datapath/sc/rtl_datapath.h), so this pins the
way every run without --vcd goes to the traced one, scenario by scenario.

--check exits 1 listing every output whose hash differs (and every run that
did not exit 0, or a scenario or output that is new or gone, or an untraced
rtl output unlike its traced one), 0 when all agree. --only SUBSTR restricts to scenario paths containing SUBSTR (with
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


def digest(path, scratch, root, bin_dir, drop=()):
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
        for k in ("wall", "reproduce") + tuple(drop):
            j.pop(k, None)
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


def run_outputs(sim, root, rel, dp, traced):
    """Runs a scenario in a scratch folder: (exit code, {output suffix: hash},
    the hash of the JSON without its `waveform` key)."""
    scratch = tempfile.mkdtemp(prefix="golden_")
    try:
        out = os.path.join(scratch, "o")
        cmd = [sim, "run", os.path.join(root, rel), "--datapath", dp, "--quiet", "--pcap", out + ".pcap",
               "--log", out + ".log", "--json", out + ".json"] + (["--vcd", out + ".vcd"] if traced else [])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        bin_dir = os.path.dirname(os.path.realpath(sim))
        outs = {f[len("o"):] if f.startswith("o") else f: digest(os.path.join(scratch, f), scratch, root, bin_dir)
                for f in sorted(os.listdir(scratch))}
        j = out + ".json"
        bare = digest(j, scratch, root, bin_dir, ("waveform",)) if os.path.exists(j) else None
        return p.returncode, outs, bare
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_one(sim, root, rel, dp):
    """(manifest lines, problems): the traced run's hashes; for rtl, every
    output of the untraced run unlike the traced one's."""
    rc, outs, bare = run_outputs(sim, root, rel, dp, True)
    lines = [(dp, rel, "exit", "exit %d" % rc)] if rc != 0 else []
    lines += [(dp, rel, k, h) for k, h in outs.items()]
    problems = []
    if dp == "rtl":
        rc2, plain, bare2 = run_outputs(sim, root, rel, dp, False)
        if rc2 != rc:
            problems.append("%s %s: exit %d untraced, %d traced" % (dp, rel, rc2, rc))
        for k, h in plain.items():
            got, want = (bare2, bare) if k == ".json" else (h, outs.get(k))
            if got != want:
                problems.append("%s %s %s: untraced %s, traced %s" % (dp, rel, k, got, want))
    return lines, problems


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
    untraced = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for lines, problems in ex.map(lambda j: run_one(os.path.abspath(a.sim), root, j[0], j[1]), jobs):
            for dp, rel, kind, h in lines:
                got[(dp, rel, kind)] = h
            untraced += problems
    for u in untraced:
        print("UNTRACED " + u)
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
        return 1 if untraced else 0
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
    print("golden: %d outputs of %d runs compared, %d differ; %d untraced rtl outputs unlike the traced ones"
          % (len(want), len(jobs), len(bad), len(untraced)))
    return 1 if bad or untraced else 0


if __name__ == "__main__":
    sys.exit(main())
