#!/usr/bin/env python3
"""The bridge under misbehaving host programs (issue 15), and lock-step
determinism under wall-clock jitter.

Each case runs a two-node scenario whose node A is `host: program`, with a
program of tb/bridge/programs misbehaving one way. The run must fail with
exit 1 and a message naming the cause, finish well within its time, and
leave complete output files (the JSON report parses; the pcap has its
header). The control case (a clean program) must pass.

Then examples/bridge_c_write.yaml runs three times with the library's
wall-clock jitter (ERNIC_BRIDGE_TEST_JITTER_US: a random sleep before each
bridge call) and once without: pcaps, log and JSON (minus wall time and
the command line) must be byte-identical.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

SCENARIO = """scenario: bridge_bad_{name}
seed: 1
limits: {{ sim_time_us: 100000, watchdog_us: 500 }}
nodes:
  A: {{ mac: "02:00:00:00:00:0a", ip: 10.0.0.1, host: program }}
  B: {{ mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }}
steps:
  - init: [B]
{pre}  - program: {{ node: A, run: {run}, timeout_s: {timeout}{extra} }}
"""


def cases(a):
    c, p = a.bad_client, a.bad_peer
    return [
        # name, argv, timeout_s, expected exit, text the run's output must hold
        ("ok", [c, "ok"], 30, 0, "result    pass"),
        ("crash", [c, "crash"], 30, 1, "killed by signal 11"),
        ("exit_no_close", [c, "exit-no-close"], 30, 1, "without a TERMINATE: the program ended or closed its socket without ernic_close"),
        ("hang", [c, "hang"], 2, 1, "within 2000 ms of wall time"),
        ("fail", [c, "fail"], 30, 1, "ended the session but then exit status 3"),
        ("dma_unallocated", [c, "dma-unallocated"], 30, 1, "DMA read of 0x3000000 (+64) waited for its data"),
        ("dma_unallocated_client_side", [c, "dma-unallocated"], 30, 1,
         "the NIC read bus address 0x3000000 (+64) outside every buffer this program allocated"),
        ("missing_program", ["/nonexistent/program"], 30, 1, "could not be started: No such file or directory"),
        ("bad_bar", [p, "bad-bar"], 30, 1, "BAR 1 does not exist"),
        ("bad_offset", [p, "bad-offset"], 30, 1, "BAR0 offset 0x10000000 (+4) outside or unaligned"),
        ("unaligned", [p, "unaligned"], 30, 1, "BAR0 offset 0x20002 (+4) outside or unaligned"),
        ("bad_size", [p, "bad-size"], 30, 1, "a register access of 2 bytes"),
        ("unknown_type", [p, "unknown-type"], 30, 1, "unknown message type 0x7e"),
        ("truncated", [p, "truncated"], 30, 1, "shorter than the 64-byte header"),
        ("wrong_direction", [p, "wrong-direction"], 30, 1, "D2H READ travels device to host"),
        ("stray_completion", [p, "stray-completion"], 30, 1, "H2D READCOMP (req_id 77) answers no request"),
        ("wrong_version", [p, "wrong-version"], 30, 1,
         "peer speaks SimBricks protocol version 2, this simulator speaks 1"),
        ("stop_reading", [p, "stop-reading"], 3, 1, "send: no answer from the program within 3000 ms of wall time"),
        ("sync_flags", [p, "sync-flags"], 30, 1, "SYNC with flags 0x4 (known: bit 0 until an interrupt, bit 1"),
        # A cm: true connect whose program client never connects; a step env
        # that contradicts the node (the simulator's ERNIC_* facts).
        ("cm_never_connects", [c, "ok"], 30, 1,
         "ended, but connection 'c' is not up: B's end is in RESET (with cm: true the program must connect to it)",
         "  - connect: { name: c, client: A, server: B }\n", ""),
        ("env_contradicts", [c, "ok"], 30, 1,
         "env ERNIC_NUM_QP=16 would contradict the simulator's ERNIC_NUM_QP=8", "", ', env: ["ERNIC_NUM_QP=16"]'),
    ]


def run(sim, scenario, out, env=None):
    t0 = time.monotonic()
    p = subprocess.run([sim, "run", scenario, "--json", out + ".json", "--pcap", out + ".pcap", "--log",
                        out + ".log"], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    for k in ("sim", "bad_client", "bad_peer", "example", "scenarios"):
        ap.add_argument("--" + k.replace("_", "-"), required=True)
    a = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="ernic-bridge-rob-") as tmp:
        for case in cases(a):
            name, argv, timeout, want_rc, want_text = case[:5]
            pre, extra = case[5:7] if len(case) > 5 else ("", "")
            path = os.path.join(tmp, name + ".yaml")
            with open(path, "w") as f:
                f.write(SCENARIO.format(name=name, run=json.dumps(argv), timeout=timeout, pre=pre, extra=extra))
            out = os.path.join(tmp, name)
            rc, text, wall = run(a.sim, path, out)
            problems = []
            if rc != want_rc:
                problems.append("exit %d, expected %d" % (rc, want_rc))
            if want_text not in text:
                problems.append("no '%s' in the output" % want_text)
            if wall > timeout + 20:
                problems.append("took %.1f s" % wall)
            try:
                with open(out + ".json") as f:
                    j = json.load(f)
                if j.get("exit_code") != want_rc:
                    problems.append("JSON exit_code %s" % j.get("exit_code"))
            except (OSError, ValueError) as e:
                problems.append("JSON report: %s" % e)
            try:
                with open(out + ".pcap", "rb") as f:
                    if f.read(4) not in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
                        problems.append("pcap without its header")
            except OSError as e:
                problems.append("pcap: %s" % e)
            status = "ok  " if not problems else "FAIL"
            print("%s %-28s exit %d  %.2f s  %s" % (status, name, rc, wall, "; ".join(problems) or want_text))
            if problems:
                bad += 1
                print("     output:\n       " + "\n       ".join(text.splitlines()[-12:]))

        # Lock-step: the same outputs however the program is scheduled.
        scen = os.path.join(a.scenarios, "examples", "bridge_c_write.yaml")
        digests = []
        for i, jitter in enumerate(["0", "3000", "3000", "3000"]):
            env = dict(os.environ, ERNIC_BRIDGE_TEST_JITTER_US=jitter)
            out = os.path.join(tmp, "jitter%d" % i)
            rc, text, wall = run(a.sim, scen, out, env)
            if rc != 0:
                print("FAIL jitter run %d: exit %d\n%s" % (i, rc, text[-2000:]))
                bad += 1
                continue
            h = hashlib.sha256()
            for ext in (".pcap", ".log"):
                with open(out + ext, "rb") as f:
                    h.update(f.read())
            for stem in ("A-tx", "A-rx", "B-tx", "B-rx"):
                with open(out + "." + stem + ".pcap", "rb") as f:
                    h.update(f.read())
            with open(out + ".json") as f:
                j = json.load(f)
            j.pop("wall", None)
            j.pop("reproduce", None)  # the command line, with this run's file names
            s = json.dumps(j, sort_keys=True).replace(out, "OUT")
            h.update(s.encode())
            digests.append(h.hexdigest())
            print("ok   jitter %-5s us  wall %.2f s  outputs %s" % (jitter, wall, digests[-1][:16]))
        if len(set(digests)) != 1:
            print("FAIL outputs differ between jittered runs: %s" % digests)
            bad += 1

        # The same program started by hand over TCP (`ernic-sim serve`): the
        # environment it needs is printed; the wire is the same as above.
        out = os.path.join(tmp, "served")
        sim = subprocess.Popen([a.sim, "serve", scen, "--node", "A", "--listen", "tcp:127.0.0.1:0", "--json",
                                out + ".json", "--pcap", out + ".pcap"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        env = dict(os.environ)
        for line in sim.stderr:
            line = line.strip()
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                env[k] = v.strip("'")
            if line.startswith("export ERNIC_PEER_LEN"):
                break
        prog = subprocess.run([a.example], env=env, capture_output=True, text=True, timeout=60)
        sim_out, sim_err = sim.communicate(timeout=60)
        with open(out + ".pcap", "rb") as f1, open(os.path.join(tmp, "jitter0.pcap"), "rb") as f2:
            same = f1.read() == f2.read()
        ok = prog.returncode == 0 and sim.returncode == 0 and same and env.get("ERNIC_BRIDGE", "").startswith("tcp:")
        print("%s serve over %s: program exit %d, simulator exit %d, wire %s" %
              ("ok  " if ok else "FAIL", env.get("ERNIC_BRIDGE"), prog.returncode, sim.returncode,
               "identical to the started run" if same else "DIFFERS"))
        if not ok:
            print(prog.stdout + prog.stderr + sim_out + sim_err)
            bad += 1
    print("bridge robustness: %d problem(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
