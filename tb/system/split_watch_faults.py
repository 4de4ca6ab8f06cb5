#!/usr/bin/env python3
"""A split run's home process refuses a wire monitor event (Watch) that
cannot be one (model/system/split_monitor.cpp, System::watch_refusal).

Node A (scenario index 0, the home of the pair A-B) listens on a Unix
socket; a man-in-the-middle proxy in this script sits between it and node
B's process and forwards the length-prefixed SimBricks messages both ways
(model/bridge/channel.cpp: u32 length, then the message; the intros first),
changing one of B's Watch CONTROLs (eth_proto.h: type 0x7E @63, "ERNC" @40,
kind 6 @4, node @5, time_ps @8, id @16, a @24, b @32, len u16 @0, data
after the 64-byte header = [type, from, to] + the frame's bytes).

  - no change: both processes exit 0, A's model_errors is empty, and B sent
    Watches of both types (frames it transmitted, frames it took);
  - each fault: A exits 1 and its JSON report has exactly one model error,
    where "split run", whose `what` is the refusal with the Watch's real
    size, instant and reason (computed here from the Watch as B sent it):
      data cut to 2 bytes, an unknown type 9, from/to swapped (the sender
      would be A itself), node byte 7, the same Watch twice, a frame whose
      commit is after its instant.
    B's own exit code is not judged: with the Watch sent twice B exits 1
    too (A's SYNC then acknowledges one message more than B sent).
    The message names the process at the link's other end ("node B's
    process"; with a switch it would be the switch's, which relays).

Every process is bounded (killed, and the case failed, after 60 s); the
temporary directories are removed.

  split_watch_faults.py --sim build/ernic-sim --scenario tb/data/split/m1_monitor_msn.yaml [--out DIR]
"""
import argparse
import json
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HDR = 64
WALL_LIMIT_S = 60.0
FRAME, DELIVERED = 1, 2


def is_watch(m):
    return len(m) >= HDR and (m[63] & 0x7F) == 0x7E and m[40:44] == b"ERNC" and m[4] == 6


def fields(m):
    t, mid, a, b = struct.unpack_from("<QQQQ", m, 8)
    return {"node": m[5], "time": t, "id": mid, "a": a, "b": b, "data": bytes(m[HDR:])}


def with_data(m, data):
    h = bytearray(m[:HDR])
    struct.pack_into("<H", h, 0, len(data) & 0xFFFF)
    return bytes(h) + data


def m_short(m):
    return [with_data(m, m[HDR:HDR + 2])]


def m_badtype(m):
    return [with_data(m, bytes([9]) + m[HDR + 1:])]


def m_swap(m):
    d = m[HDR:]
    return [with_data(m, bytes([d[0], d[2], d[1]]) + d[3:])]


def m_node7(m):
    h = bytearray(m)
    h[5] = 7
    return [bytes(h)]


def m_dup(m):
    return [m, m]


def m_commit_after(m):
    h = bytearray(m)
    t = struct.unpack_from("<Q", h, 8)[0]
    struct.pack_into("<Q", h, 32, t + 2)  # b = commit + 1: committed 1 ps after the event
    return [bytes(h)]


# name, which of B's Watches (1-based) of which type, mutation, the expected
# `what` from the Watch as B sent it (fields()).
PREFIX = "node {who}'s process sent a wire monitor event (Watch) of {n} bytes at {t} ps that "
CASES = [
    ("short", DELIVERED, 2, m_short,
     lambda w: PREFIX.format(who="B", n=2, t=w["time"]) + "is shorter than its 3-byte header"),
    ("unknown_type", DELIVERED, 2, m_badtype,
     lambda w: PREFIX.format(who="B", n=len(w["data"]), t=w["time"]) + "has the unknown type 9"),
    # B's frame B -> A turned into A -> B: its sender would be A, this
    # process.
    ("from_to_swapped", FRAME, 1, m_swap,
     lambda w: PREFIX.format(who="B", n=len(w["data"]), t=w["time"]) +
     "claims this process's own node as its sender"),
    ("node_7", DELIVERED, 2, m_node7,
     lambda w: PREFIX.format(who="B", n=len(w["data"]), t=w["time"]) +
     "is not for this process's monitors (node 7, pair 0 -> 1)"),
    ("sent_twice", DELIVERED, 2, m_dup,
     lambda w: PREFIX.format(who="B", n=len(w["data"]), t=w["time"]) +
     f"has sequence number {w['id']} after {w['id']}"),
    # B's frame that has its commit time (b != 0), now 1 ps after its instant.
    ("commit_after_instant", FRAME, 2, m_commit_after,
     lambda w: PREFIX.format(who="B", n=len(w["data"]), t=w["time"]) +
     f"has a frame committed at {w['time'] + 1} ps, after the event"),
]


class Proxy(threading.Thread):
    """Forwards B (connecter) <-> A (listener); the nth Watch of type `wtype`
    going B -> A goes through `mutate` (None: nothing changed)."""

    def __init__(self, listen_path, target_path, wtype=None, nth=0, mutate=None):
        super().__init__(daemon=True)
        self.ls = socket.socket(socket.AF_UNIX)
        self.ls.bind(listen_path)
        self.ls.listen(1)
        self.target_path = target_path
        self.wtype, self.nth, self.mutate = wtype, nth, mutate
        self.stop = threading.Event()
        self.watches = []  # B's Watches as sent (fields())
        self.mutated = None  # the one changed, as B sent it
        self.error = None

    def run(self):
        try:
            self._run()
        except Exception as e:  # said by the case
            self.error = f"proxy: {type(e).__name__}: {e}"

    def _run(self):
        self.ls.settimeout(0.2)
        c = None
        while c is None and not self.stop.is_set():
            try:
                c, _ = self.ls.accept()
            except socket.timeout:
                pass
        if c is None:
            return
        t = socket.socket(socket.AF_UNIX)
        t.connect(self.target_path)
        bufs = {c: b"", t: b""}
        other = {c: t, t: c}
        first = {c: True, t: True}  # the intro comes first
        seen = 0
        try:
            while not self.stop.is_set():
                r, _, _ = select.select([c, t], [], [], 0.2)
                for s in r:
                    try:
                        d = s.recv(1 << 20)
                    except ConnectionError:
                        d = b""
                    if not d:  # a process ended: the run is over
                        return
                    bufs[s] += d
                    out = []
                    while len(bufs[s]) >= 4:
                        n = struct.unpack_from("<I", bufs[s])[0]
                        if len(bufs[s]) < 4 + n:
                            break
                        m = bufs[s][4:4 + n]
                        bufs[s] = bufs[s][4 + n:]
                        msgs = [m]
                        if s is c and not first[s] and is_watch(m):
                            w = fields(m)
                            self.watches.append(w)
                            if self.mutate and w["data"][:1] == bytes([self.wtype]):
                                seen += 1
                                if seen == self.nth:
                                    self.mutated = w
                                    msgs = self.mutate(m)
                        first[s] = False
                        out += [struct.pack("<I", len(x)) + x for x in msgs]
                    if out:
                        try:
                            other[s].sendall(b"".join(out))
                        except ConnectionError:  # the other one ended (after an error of its own)
                            return
        finally:
            c.close()
            t.close()
            self.ls.close()


def wait_bounded(procs, deadline):
    """Waits for every process; kills all and says so after the deadline."""
    late = []
    for name, p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            late.append(name)
    if late:
        for _, p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return late


def run_case(sim, scenario, out_root, name, wtype=None, nth=0, mutate=None):
    """One split run through the proxy: {a_rc, b_rc, a_json, proxy, late, wall, dir}."""
    d = tempfile.mkdtemp(prefix=name[:8] + "_", dir=out_root)
    a_sock, p_sock = os.path.join(d, "a.sock"), os.path.join(d, "p.sock")
    common = ["--timeout-ms", "5000", "--quiet"]
    t0 = time.time()
    deadline = t0 + WALL_LIMIT_S
    a_out = open(os.path.join(d, "a.out"), "w")
    b_out = open(os.path.join(d, "b.out"), "w")
    a = subprocess.Popen([sim, "node", scenario, "--node", "A", "--listen", "unix:" + a_sock,
                          "--json", os.path.join(d, "a.json")] + common, stdout=a_out, stderr=subprocess.STDOUT)
    procs = [("A", a)]
    res = {"dir": d, "late": [], "a_rc": None, "b_rc": None, "a_json": None, "proxy": None}
    proxy = None
    try:
        while not os.path.exists(a_sock) and a.poll() is None and time.time() < t0 + 10:
            time.sleep(0.02)
        if not os.path.exists(a_sock):
            res["late"] = ["A's socket"]
            return res
        proxy = Proxy(p_sock, a_sock, wtype, nth, mutate)
        proxy.start()
        b = subprocess.Popen([sim, "node", scenario, "--node", "B", "--connect", "unix:" + p_sock,
                              "--json", os.path.join(d, "b.json")] + common, stdout=b_out, stderr=subprocess.STDOUT)
        procs.append(("B", b))
        res["late"] = wait_bounded(procs, deadline)
        res["a_rc"], res["b_rc"] = a.returncode, b.returncode
        try:
            with open(os.path.join(d, "a.json")) as f:
                res["a_json"] = json.load(f)
        except (OSError, ValueError) as e:
            res["a_json_error"] = str(e)
    finally:
        for _, p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if proxy is not None:
            proxy.stop.set()
            proxy.join(5)
        a_out.close()
        b_out.close()
        res["proxy"] = proxy
        res["wall"] = time.time() - t0
    return res


def tail(path, n=1200):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return "(none)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--out", help="where the temporary run directories go (removed after)")
    a = ap.parse_args()
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    # A fresh directory of our own; AF_UNIX paths are short (108 bytes): in
    # the system's temporary directory if DIR is too long for them.
    root = tempfile.mkdtemp(prefix="swf_", dir=a.out if a.out and len(a.out) < 64 else None)
    bad = []
    t_all = time.time()
    try:
        # 1. Nothing changed.
        r = run_case(a.sim, a.scenario, root, "none")
        p = r["proxy"]
        errs = (r["a_json"] or {}).get("model_errors")
        types = sorted({w["data"][0] for w in p.watches}) if p else []
        print(f"none: A rc={r['a_rc']} B rc={r['b_rc']} {len(p.watches) if p else 0} Watches from B "
              f"(types {types}) model_errors={errs} ({r['wall']:.2f} s)")
        if r["late"]:
            bad.append(f"none: {r['late']} still ran after {WALL_LIMIT_S:.0f} s")
        if r["a_rc"] != 0 or r["b_rc"] != 0:
            bad.append(f"none: exit codes A {r['a_rc']} B {r['b_rc']}, expected 0 0\nA: "
                       f"{tail(os.path.join(r['dir'], 'a.out'))}\nB: {tail(os.path.join(r['dir'], 'b.out'))}")
        if errs != []:
            bad.append(f"none: A's model_errors {errs!r}, expected []")
        if p is None or p.error or types != [FRAME, DELIVERED]:
            bad.append(f"none: the proxy saw Watches of types {types} (error {p and p.error}), expected [1, 2]")
        # 2. The faults.
        for name, wtype, nth, mutate, expect in CASES:
            r = run_case(a.sim, a.scenario, root, name, wtype, nth, mutate)
            p = r["proxy"]
            if r["late"]:
                bad.append(f"{name}: {r['late']} still ran after {WALL_LIMIT_S:.0f} s: killed")
                continue
            if p is None or p.error or p.mutated is None:
                bad.append(f"{name}: B's Watch #{nth} of type {wtype} was not changed "
                           f"({p and p.error}; {len(p.watches) if p else 0} Watches seen)")
                continue
            want = expect(p.mutated)
            errs = (r["a_json"] or {}).get("model_errors")
            whats = [e.get("what") for e in errs or []]
            print(f"{name}: A rc={r['a_rc']} B rc={r['b_rc']} ({r['wall']:.2f} s) model_errors: "
                  + "; ".join(f"[{e.get('where')}] {e.get('what')}" for e in errs or []))
            if r["a_rc"] != 1:
                bad.append(f"{name}: A exited {r['a_rc']}, expected 1\nA: {tail(os.path.join(r['dir'], 'a.out'))}")
            if p.mutated["b"] == 0 and mutate is m_commit_after:
                bad.append(f"{name}: B's Watch #{nth} of type {wtype} had no commit time to move")
            if errs is None:
                bad.append(f"{name}: A's report has no model_errors ({r.get('a_json_error')})")
                continue
            split_errs = [e for e in errs if e.get("where") == "split run"]
            if len(errs) != 1 or len(split_errs) != 1:
                bad.append(f"{name}: A's model_errors {whats!r}, expected exactly one (split run)")
            if not any(w == want for w in [e.get("what") for e in split_errs]):
                bad.append(f"{name}: expected the split run model error\n  {want!r}\ngot\n  {whats!r}")
            if name != "from_to_swapped" and not all("node B's process" in (w or "") for w in whats):
                bad.append(f"{name}: the error does not name node B's process: {whats!r}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"total {time.time() - t_all:.1f} s")
    for b in bad:
        print("FAIL:", b)
    print("split_watch_faults: " + ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
