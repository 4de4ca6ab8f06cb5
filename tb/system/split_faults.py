#!/usr/bin/env python3
"""Faults around a split run (`ernic-sim run S --split`, model/system/split.h):
a node process killed mid-run, and the run itself stopped by SIGTERM.

  - SIGKILL to node B's process while the 4 MiB WRITE stream runs (rtl
    datapath, every cycle evaluated: seconds of wall time): the run exits 1
    within 30 s, naming node B and signal 9; node A's process is gone too;
    the directory with the node processes' files is kept and named.
  - SIGTERM to `run --split`: it exits 143 within 30 s, both node processes
    are gone, and the run's directory is removed.
  - With --star S.yaml (a switch topology with a node S3): SIGKILL to node
    S3's process mid-run: the switch's process names S3's closed
    connection, every other node says it was STOPPED by the switch's
    process with that reason (not a protocol violation: the switch stops
    where it was, before the others' now), all within 30 s.

  split_faults.py --sim build/ernic-sim --scenario scenarios/traffic/rc_write_stream_4m.yaml
                  [--star scenarios/topology/incast_8to1_pfc.yaml]
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            cmd = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
        except (OSError, ValueError):
            continue
        if ppid == pid:
            out.append((int(d), [c.decode(errors="replace") for c in cmd]))
    return out


def node_pid(launcher, node, deadline):
    while time.time() < deadline:
        for pid, cmd in children(launcher):
            if "node" in cmd and "--node" in cmd and cmd[cmd.index("--node") + 1] == node:
                return pid
        time.sleep(0.05)
    return None


def start(sim, scenario):
    # Slowed by wall-clock chaos (outputs unchanged) so that the run is still
    # under way when a node is killed: without it the 4 MiB stream ends
    # split in under a second since the processes no longer go in step.
    return subprocess.Popen([sim, "run", scenario, "--split", "--datapath", "rtl", "--no-idle-skip", "--quiet",
                             "--split-chaos-us", "300"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(p, after):
    """The run's output once it ended; None (said) when it ran on 30 s after `after`."""
    try:
        return p.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        print(f"run --split did not end within 30 s of {after}")
        return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def kept_dirs(out):
    """The node processes' directories `run --split` says it kept."""
    return [l.split(" kept in ", 1)[1].strip() for l in out.splitlines() if " kept in " in l]


def star_kill(sim, scenario):
    """Node S3 of a star killed: the others name it through the switch."""
    bad = []
    p = start(sim, scenario)
    s3 = node_pid(p.pid, "S3", time.time() + 10)
    if s3 is None:
        p.kill()
        return ["star: node S3's process did not start"]
    time.sleep(1.0)
    os.kill(s3, signal.SIGKILL)
    out = finish(p, "node S3's death (star)")
    if out is None:
        return ["star: the run did not end"]
    if p.returncode != 1:
        bad.append(f"star: exit code {p.returncode} after node S3 was killed, expected 1")
    if "node S3: killed by signal 9" not in out:
        bad.append("star: the launcher does not name node S3 and signal 9:\n" + out[-1500:])
    if "horizon was broken" in out:
        bad.append("star: a node reports a protocol violation instead of S3's death:\n" + out[-1500:])
    stopped = [l for l in out.splitlines() if "STOPPED by the switch's process" in l and "node S3's process" in l]
    if len(stopped) < 2:
        bad.append("star: the other nodes do not say they were stopped by S3's death through the switch:\n" +
                   out[-2500:])
    for d in kept_dirs(out):
        shutil.rmtree(d, ignore_errors=True)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--star", default="")
    a = ap.parse_args()
    bad = []
    if a.star:
        bad += star_kill(a.sim, a.star)
    # 1. A node process killed mid-run.
    p = start(a.sim, a.scenario)
    b = node_pid(p.pid, "B", time.time() + 10)
    a_pid = node_pid(p.pid, "A", time.time() + 10)
    if b is None or a_pid is None:
        p.kill()
        print("the node processes did not start")
        return 1
    time.sleep(0.5)
    os.kill(b, signal.SIGKILL)
    out = finish(p, "node B's death")
    if out is None:
        return 1
    if p.returncode != 1:
        bad.append(f"exit code {p.returncode} after node B was killed, expected 1")
    if "node B" not in out or "signal 9" not in out:
        bad.append("the message does not name node B and signal 9:\n" + out[-1500:])
    if alive(a_pid):
        bad.append("node A's process still runs")
    kept = kept_dirs(out)
    if not kept or not os.path.isdir(kept[0]):
        bad.append("the node processes' directory was not kept and named")
    for d in kept:
        shutil.rmtree(d, ignore_errors=True)
    # 2. The run stopped by SIGTERM.
    p = start(a.sim, a.scenario)
    kids = [node_pid(p.pid, n, time.time() + 10) for n in ("A", "B")]
    # The run's own directory: where node A listens (unix:DIR/link.sock).
    run_dir = None
    for pid, cmd in children(p.pid):
        if pid == kids[0] and "--listen" in cmd:
            run_dir = os.path.dirname(cmd[cmd.index("--listen") + 1][len("unix:"):])
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out = finish(p, "SIGTERM")
    if out is None:
        return 1
    if p.returncode != 128 + signal.SIGTERM:
        bad.append(f"exit code {p.returncode} after SIGTERM, expected {128 + signal.SIGTERM}")
    time.sleep(0.2)
    for k in kids:
        if k is not None and alive(k):
            bad.append(f"node process {k} still runs after SIGTERM")
            os.kill(k, signal.SIGKILL)
    if not run_dir or os.path.exists(run_dir):
        bad.append(f"the run's directory {run_dir} was left behind (or not found)")
    if bad:
        print("\n".join(bad))
        return 1
    print("a killed node: exit 1, named, the other gone, the files kept; SIGTERM: exit 143, nothing left" +
          ("; a star's killed node: named by every other node through the switch" if a.star else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
