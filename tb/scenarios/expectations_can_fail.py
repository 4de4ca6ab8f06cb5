#!/usr/bin/env python3
"""Every expectation step kind can fail (issue 20).

For each step kind below, the first passing scenarios under scenarios/ that
use it get one expected value changed (a copy in --out; the rest of the file
untouched), are run with `ernic-sim run --datapath model`, and must exit 1
with a failure that names the changed step's file:line. A kind with no
candidate, or a changed expectation that still passes, is a failure of this
test: an expectation that cannot fail checks nothing.

  expectations_can_fail.py --source ROOT --sim ERNIC_SIM --out DIR [--per-kind N]
"""
import argparse
import os
import re
import subprocess
import sys

FOLDERS = ["handshake", "traffic", "errors", "examples", "topology"]


def bump_int(m, delta=1):
    v = m.group(2)
    n = int(v, 0) + delta
    return m.group(1) + (hex(n) if v.lower().startswith("0x") else str(n))


def sub_once(pattern, repl, text):
    new, n = re.subn(pattern, repl, text, count=1)
    return new if n else None


# kind -> (step line regex, mutation of the step's text: returns new text or None)
def m_reg_expect(t):
    if "not:" in t or "mask" in t:
        return None
    return sub_once(r"(\bvalue: )(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + hex(int(m.group(2), 0) ^ 1), t)


def m_mem_expect(t):
    return sub_once(r"(bytes: \[\s*)(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + hex(int(m.group(2), 0) ^ 0x80), t)


def m_psn(t):
    return sub_once(r"(\bpsn: )(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + hex((int(m.group(2), 0) + 0x10) & 0xFFFFFF), t)


def m_count(t):
    return sub_once(r"(\bcount: )(\d+)", bump_int, t)


def m_recv(t):
    return sub_once(r"(\blength: )(\d+)", bump_int, t)


def m_code(t):
    return sub_once(r"(\bcode: )(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + hex(int(m.group(2), 0) ^ 1), t)


def m_poll(t):
    if "field:" in t or "mask" in t:
        return None
    return sub_once(r"(\bvalue: )(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + "0xDEAD", t)


def m_wait_until(t):
    if "reg:" not in t:
        return None
    return sub_once(r"(\}, value: )(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + "0xDEAD", t)


def m_wc(t):
    return sub_once(r"(\berror: )false", lambda m: m.group(1) + "true", t)


def m_check_memory(t):
    if "equals:" in t:
        return None
    new = sub_once(r"(\bseed: )(\d+)", bump_int, t)
    if new is None:
        new = sub_once(r"(\bvalue: )(0x[0-9a-fA-F]+|\d+)", lambda m: m.group(1) + hex(int(m.group(2), 0) ^ 1), t)
    return new


def m_switch(t):
    return sub_once(r"(\bframes_in: )(\d+)", bump_int, t)


def m_qp(t):
    return sub_once(r"(\boutstanding_limit: )(\d+)", bump_int, t)


KINDS = {
    "reg_expect": m_reg_expect,
    "mem_expect": m_mem_expect,
    "expect_frames": m_psn,
    "expect_bypass": m_count,
    "expect_compliance": m_count,
    "recv": m_recv,
    "recover": m_code,
    "reg_poll": m_poll,
    "wait_until": m_wait_until,
    "wait_completions": m_wc,
    "check_memory": m_check_memory,
    "expect_switch": m_switch,
    "expect_qp": m_qp,
}


def step_blocks(lines):
    """(index, kind, end) of each top-level or nested step `- kind:` and the
    lines of its text (the step line and the more-indented lines after it)."""
    out = []
    for i, l in enumerate(lines):
        m = re.match(r"^(\s*)- ([a-z_]+):", l)
        if not m or m.group(2) not in KINDS:
            continue
        ind = len(m.group(1))
        j = i + 1
        while j < len(lines) and (lines[j].strip() == "" or len(lines[j]) - len(lines[j].lstrip()) > ind + 1
                                  or lines[j].lstrip().startswith("#")):
            if re.match(r"^\s*- [a-z_]+:", lines[j]) and len(lines[j]) - len(lines[j].lstrip()) <= ind:
                break
            j += 1
        out.append((i, m.group(2), j))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-kind", type=int, default=2)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    done = {k: 0 for k in KINDS}
    problems = []
    files = []
    for folder in FOLDERS:
        d = os.path.join(a.source, "scenarios", folder)
        files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".yaml"))
    for path in files:
        text = open(path).read()
        if "program" in text or "host:" in text:
            continue  # programs run from the scenario's folder
        lines = text.split("\n")
        for (i, kind, j) in step_blocks(lines):
            if done[kind] >= a.per_kind:
                continue
            block = "\n".join(lines[i:j])
            new = KINDS[kind](block)
            if new is None or new == block:
                continue
            mutated = "\n".join(lines[:i] + new.split("\n") + lines[j:])
            name = "%s_%d_%s" % (kind, done[kind], os.path.basename(path))
            mp = os.path.join(a.out, name)
            with open(mp, "w") as f:
                f.write(mutated)
            r = subprocess.run([a.sim, "run", mp, "--datapath", "model", "--quiet"], capture_output=True, text=True,
                               timeout=600)
            where = "%s:%d:" % (mp, i + 1)
            rel = os.path.relpath(path, a.source)
            if r.returncode == 1 and where in r.stdout + r.stderr:
                done[kind] += 1
                print("ok   %-18s %s:%d" % (kind, rel, i + 1))
            elif r.returncode == 0:
                problems.append("%s at %s:%d still passes with %r" % (kind, rel, i + 1, new.strip()[:120]))
                done[kind] += 1
            else:
                # Failed for another reason or elsewhere: not this step's proof; try the next candidate.
                print("skip %-18s %s:%d (exit %d, not at the step)" % (kind, rel, i + 1, r.returncode))
    # Kinds no value change can make fail (an expect_idle is idle or not by
    # where it stands): a hand-made must-fail file each, named in its
    # comment's "names line N".
    cf = os.path.join(a.source, "tb", "scenarios", "can_fail")
    for f in sorted(os.listdir(cf)):
        path = os.path.join(cf, f)
        kind = f.split("_sees_")[0]
        line = int(re.search(r"names line (\d+)", open(path).read()).group(1))
        r = subprocess.run([a.sim, "run", path, "--datapath", "model", "--quiet"], capture_output=True, text=True,
                           timeout=600)
        if r.returncode == 1 and "%s:%d:" % (path, line) in r.stdout + r.stderr:
            done[kind] = done.get(kind, 0) + 1
            print("ok   %-18s %s:%d" % (kind, os.path.relpath(path, a.source), line))
        else:
            problems.append("%s: exit %d, no failure at line %d" % (path, r.returncode, line))
    for k in ["expect_idle"]:
        done.setdefault(k, 0)
    for k, n in done.items():
        if n == 0:
            problems.append("no scenario shows that %s can fail" % k)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("%d step kinds, %d changed expectations, each failed naming its step" % (len(done), sum(done.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
