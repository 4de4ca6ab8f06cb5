#!/usr/bin/env python3
"""A scenario run split (`ernic-sim run S --split`: each node in its own
process, model/system/split.h) against the same scenario in one process:
the same exit code, and byte-identical wire pcap, per-node taps and
transaction log; the JSON reports equal once the keys that differ by
construction are left out (tools/split_report.h: scoreboard, split, wall,
reproduce). Exit 0 identical, 1 a difference (named), 77 the scenario
cannot run split yet (ctest: skipped; the reason printed). --transport tcp
carries the link over TCP on 127.0.0.1, --transport shm over SimBricks'
shared-memory queues; --chaos-us N --runs K runs the
split K times with random wall-clock sleeps of up to N us in the link
(determinism under chaos: every run must equal one process).
--plant-bug NAME runs both with that planted model bug (test only);
--expect-error TEXT also requires a model error ("where: what", e.g.
"monitor B->A: msn") or a failure containing TEXT in both reports, at the
same times.

  split_identity.py --sim build/ernic-sim --datapath model --out DIR S.yaml
                    [--transport unix|tcp|shm] [--chaos-us N --runs K]
                    [--plant-bug NAME --expect-error TEXT]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
JSON_DIFFER = {"scoreboard", "split", "wall", "reproduce"}


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)


def outputs(d, mode):
    stem = os.path.join(d, mode)
    return ["--pcap", stem + ".pcap", "--log", stem + ".log", "--json", stem + ".json"]


def compare(d, one, split, mode, expect_error=None):
    bad = []
    if one.returncode != split.returncode:
        bad.append(f"exit code {one.returncode} in one process, {split.returncode} split")
    suffixes = sorted(f[len("one"):] for f in os.listdir(d) if f.startswith("one.") and f.endswith(".pcap"))
    suffixes.append(".log")
    for suffix in suffixes:
        x, y = os.path.join(d, "one" + suffix), os.path.join(d, mode + suffix)
        if not os.path.exists(y):
            bad.append(f"{mode}{suffix} missing")
        elif open(x, "rb").read() != open(y, "rb").read():
            bad.append(f"one{suffix} and {mode}{suffix} differ")
    if not os.path.exists(os.path.join(d, mode + ".json")):  # the merge failed: the run's output says why
        return bad + [f"{mode}.json missing; the split run said:\n{split.stdout[-3000:]}"]
    j1 = json.load(open(os.path.join(d, "one.json")))
    j2 = json.load(open(os.path.join(d, mode + ".json")))
    for k in sorted(set(j1) | set(j2)):
        if k not in JSON_DIFFER and j1.get(k) != j2.get(k):
            bad.append(f"JSON key '{k}' differs")
    if expect_error:
        found = [[e["time_ps"] for e in j.get("model_errors", []) if expect_error in e["where"] + ": " + e["what"]] +
                 [f["time_ps"] for f in j.get("failures", []) if expect_error in f["what"]]
                 for j in (j1, j2)]
        if not found[0] or found[0] != found[1]:
            bad.append(f"model error or failure '{expect_error}': at {found[0]} ps in one process, at {found[1]} ps "
                       "split")
    procs = len(j1.get("nodes", {})) + (1 if "switch" in j1 else 0)  # a switch runs in a process of its own
    if "split" not in j2 or len(j2["split"]["processes"]) != procs:
        bad.append(f"the split report has no 'split' section of {procs} processes")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--datapath", default="model")
    ap.add_argument("--out", required=True)
    ap.add_argument("--transport", default="unix", choices=["unix", "tcp", "shm"])
    ap.add_argument("--chaos-us", type=int, default=0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--plant-bug", default="")
    ap.add_argument("--expect-error", default="")
    ap.add_argument("scenario")
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    bug = ["--plant-bug", a.plant_bug] if a.plant_bug else []
    one = run([a.sim, "run", a.scenario, "--quiet", "--datapath", a.datapath] + bug + outputs(a.out, "one"))
    bad = []
    for k in range(a.runs):
        mode = f"split{k}"
        cmd = [a.sim, "run", a.scenario, "--quiet", "--datapath", a.datapath, "--split",
               "--split-transport", a.transport] + bug + outputs(a.out, mode)
        if a.chaos_us:
            cmd += ["--split-chaos-us", str(a.chaos_us)]
        split = run(cmd)
        # A run that does not pass keeps its node processes' files: not here.
        for line in split.stdout.splitlines():
            if "the node processes' files are kept in " in line:
                shutil.rmtree(line.split(" kept in ", 1)[1].strip(), ignore_errors=True)
        # Refused by split_plan.h (exit 2, "... cannot run split ..."); any other
        # exit 2 (a node that could not build its system) is a failure.
        if split.returncode == 2 and ("cannot run split" in split.stdout or "splits over" in split.stdout):
            print("not splittable yet:", split.stdout.strip().splitlines()[-1])
            return SKIP
        bad += [f"run {k}: {b}" for b in compare(a.out, one, split, mode, a.expect_error)]
    if bad:
        print("split run differs from one process:\n  " + "\n  ".join(bad))
        print("one process said:\n" + one.stdout[-2000:] + "\nsplit said:\n" + split.stdout[-2000:])
        return 1
    files = [f for f in os.listdir(a.out) if f.startswith("one.")]
    print(f"identical: {len(files)} files, exit code {one.returncode}, {a.runs} split run(s) over {a.transport}"
          + (f" with up to {a.chaos_us} us of wall-clock chaos" if a.chaos_us else ""))
    shutil.rmtree(a.out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
