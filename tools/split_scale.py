#!/usr/bin/env python3
"""Split-run scale table (issue 16): wall seconds per simulated millisecond
of line-rate WRITE traffic for N nodes behind a switch, in one process and
split (one process per node and one for the switch).

For each N the scenario is generated: N nodes behind a 100G switch, N/2
pairs (node 2k WRITEs to node 2k+1), all pairs at once (a `parallel`), each
16 x 64 KiB at PMTU 4096 with up to 16 outstanding; every completion is
checked. The figure is the command's wall time (process start and the
merge of the split outputs included) over its simulated time
(`sim_time_ps`). A benchmark, not a test: the figures depend on the machine.

    tools/split_scale.py --sim build/ernic-sim [--nodes 2,4,8,16] [--datapath model]
                         [--transport unix] [--runs 3] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WQES = 16
LEN = 65536


def scenario(n, datapath):
    names = [f"N{i:02d}" for i in range(n)]
    lines = [f"scenario: split_scale_{n}",
             f"description: \"{n} nodes behind a switch, {n // 2} WRITE streams at once (tools/split_scale.py)\"",
             "seed: 1",
             f"datapath: {datapath}",
             "limits: { sim_time_us: 20000, watchdog_us: 2000 }",
             "topology:",
             "  switch: { latency_ns: 300, buffer_bytes: 4194304 }",
             "nodes:"]
    for i, nm in enumerate(names):
        lines.append(f"  {nm}: {{ mac: \"02:00:00:00:01:{i:02x}\", ip: 10.0.1.{i + 1} }}")
    lines += ["steps:", f"  - init: [{', '.join(names)}]"]
    for k in range(n // 2):
        a, b = names[2 * k], names[2 * k + 1]
        lines += [f"  - register_mr: {{ node: {a}, name: src, length: {WQES * LEN}, access: rw }}",
                  f"  - register_mr: {{ node: {b}, name: dst, length: {WQES * LEN}, access: rw }}",
                  f"  - fill: {{ node: {a}, mr: src, pattern: random, seed: {k + 1} }}",
                  f"  - connect: {{ name: c{k}, client: {a}, server: {b}, client_mr: src, server_mr: dst, "
                  "pmtu: 4096, sq_depth: 64 }"]
    def stream(k, indent):
        a = names[2 * k]
        wqes = ", ".join(f"{{ opcode: write, wr_id: {w + 1}, local_mr: src, local_offset: {w * LEN}, "
                         f"length: {LEN}, remote_offset: {w * LEN} }}" for w in range(WQES))
        return [f"{indent}- post: {{ conn: c{k}, node: {a}, wqes: [ {wqes} ] }}",
                f"{indent}- wait_completions: {{ conn: c{k}, node: {a}, count: {WQES}, timeout_us: 5000 }}"]
    if n == 2:  # one stream: no parallel (it wants two branches at least)
        lines += stream(0, "  ")
    else:
        lines.append("  - parallel:")
        for k in range(n // 2):
            lines += [f"      - name: s{k}", "        steps:"] + stream(k, "          ")
    return "\n".join(lines) + "\n"


def run(sim, path, split, transport, out):
    js = os.path.join(out, "r.json")
    cmd = [sim, "run", path, "--quiet", "--json", js]
    if split:
        cmd += ["--split", "--split-transport", transport]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"split_scale: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    with open(js) as f:
        r = json.load(f)
    sim_ms = r["sim_time_ps"] / 1e9
    syncs = sum(q["syncs_sent"] for q in r["split"]["processes"]) if split else 0
    return wall, sim_ms, syncs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--nodes", default="2,4,8,16")
    ap.add_argument("--datapath", default="model", choices=["model", "rtl"])
    ap.add_argument("--transport", default="unix", choices=["unix", "tcp", "shm"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="split_scale_")
    os.makedirs(out, exist_ok=True)
    print(f"split scale: {a.datapath} datapath, split over {a.transport}, best of {a.runs}; "
          f"wall seconds per simulated ms (simulated us; SYNCs split)")
    print(f"{'nodes':>5} {'streams':>7} {'sim us':>8} {'one process':>12} {'split':>10} {'split/one':>9} {'SYNCs':>9}")
    for n in [int(x) for x in a.nodes.split(",")]:
        if n < 2 or n % 2:
            sys.exit(f"split_scale: --nodes wants even counts of at least 2, not {n}")
        path = os.path.join(out, f"split_scale_{n}.yaml")
        with open(path, "w") as f:
            f.write(scenario(n, a.datapath))
        one = min(run(a.sim, path, False, a.transport, out)[0] for _ in range(a.runs))
        sp = [run(a.sim, path, True, a.transport, out) for _ in range(a.runs)]
        sim_ms = sp[0][1]
        best = min(s[0] for s in sp)
        print(f"{n:>5} {n // 2:>7} {sim_ms * 1000:>8.1f} {one / sim_ms:>12.2f} {best / sim_ms:>10.2f} "
              f"{best / one:>9.2f} {sp[0][2]:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
