#!/usr/bin/python3
"""tb/matrix: runs the fault matrix or the access-violation matrix
(issue 20) and judges every cell from the run's outputs.

  check_matrix.py --matrix fault|access --sim build/ernic-sim --out DIR [--jobs N] [--only S] [--datapath D]
  check_matrix.py --selftest --sim build/ernic-sim --out DIR

Writes the cells' scenarios (gen_matrix.py) into DIR, runs each with
`ernic-sim run S --json --log --pcap`, and requires of every cell:
  - exit code 0, the JSON's result "pass", no failure, no model error (the
    wire monitor's violations are model errors) and no compliance report
    (the scenarios say `compliance: fail` too): the scenario's own checks
    (completions, RQ events, memory, registers) all held;
  - A's CQEs on QP 2, as the log records the words written, are exactly
    the expected ones in order, coded as PG332 section 4 gives them
    (ERRFLAG << 24 | opcode << 16 | WRID);
  - fault cells: each rule acted exactly as often as intended (its fault
    records in the log, and the JSON's faults_applied in total), and on
    the intended frame: the record's index names a frame of the sender's
    tx capture whose BTH opcode, PSN, AETH syndrome or MAD attribute,
    parsed here from the bytes, are the ones the cell names; and the
    action shows on the receiver's rx capture (the frame's copies there:
    one fewer for drop and corrupt, with a copy one bit off for corrupt;
    one more for duplicate; as many for reorder, after the frame that
    overtook it; as many for delay, at least delay_ns later);
  - access cells: no fault; B's RC frames after its ConnectReply are the
    expected answers (opcode, PSN, AETH syndrome parsed from the capture);
    the JSON's "QP fatal, code" events are exactly the expected codes
    (B: 0x15/0x16/0x17, A: 0x0A) or none.
A cell marked a known defect (fault_cells.KNOWN_DEFECTS) must fail the way
the mark says; if it passes, the mark is stale and the run fails. Prints a
table (rows: fault kind or access case; columns: target or opcode) with
passed/total per cell group; exit 1 when a cell failed.

--selftest runs sabotaged copies of a few cells (a rule that never fires,
a rule that hits the wrong packet, a wrong expected fatal code, a scenario
whose own check fails, a known-defect mark on a passing cell) and exits 1
unless the checker fails each of them with the reason it should.
"""
import argparse
import concurrent.futures
import copy
import glob
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_matrix  # noqa: E402
from fault_cells import KINDS, TARGETS  # noqa: E402
from access_cells import COLS, ROWS  # noqa: E402
from matrix_lib import describe, parse, read_pcap  # noqa: E402


def run_cell(sim, out, cell, datapath=None):
    base = os.path.join(out, cell["name"])
    for old in glob.glob(glob.escape(base) + ".*"):  # a previous run's outputs
        if not old.endswith(".yaml"):
            os.remove(old)
    cmd = [sim, "run", cell["file"], "--json", base + ".json", "--log", base + ".log", "--pcap", base + ".pcap",
           "--quiet"] + (["--datapath", datapath] if datapath else [])
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=120)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, text = -1, "wall timeout (120 s)"
    return {"rc": rc, "text": text, "wall": time.monotonic() - t0, "base": base}


def load_log(path):
    recs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                recs.append(json.loads(line))
    return recs


def check_rule(base, rule, recs):
    """Problems with one rule's records and its frame (empty: fine)."""
    errs = []
    mine = [r for r in recs if r.get("kind") == "fault" and r.get("rule") == rule["rule"]]
    if len(mine) != rule["count"]:
        return [f"rule '{rule['rule']}' acted {len(mine)} times, intended {rule['count']}"
                + (" (the fault never fired)" if not mine else "")]
    src, dst = rule["dir"].split("->")
    tx = read_pcap(f"{base}.{src}-tx.pcap")
    rx = read_pcap(f"{base}.{dst}-rx.pcap")
    for r in mine:
        if r.get("link") != rule["dir"]:
            errs.append(f"rule '{rule['rule']}' acted on {r.get('link')}, intended {rule['dir']}")
            continue
        idx = r["index"]
        if idx >= len(tx):
            errs.append(f"rule '{rule['rule']}': frame #{idx} is not in {src}'s tx capture ({len(tx)} frames)")
            continue
        t_tx, frame = tx[idx]
        f = parse(frame)
        want = {k: rule.get(k) for k in ("opcode", "psn", "syndrome", "mad_attr")}
        got_ok = f is not None and all(v is None or f[k] == v for k, v in want.items())
        if got_ok and rule.get("syndrome_type") is not None:
            got_ok = f["syndrome"] is not None and (f["syndrome"] >> 5) & 3 == rule["syndrome_type"]
        if not got_ok:
            errs.append(f"rule '{rule['rule']}' hit {rule['dir']} frame #{idx}, {describe(f)}; intended "
                        + ", ".join(f"{k} {v:#x}" for k, v in want.items() if v is not None)
                        + (f", AETH type {rule['syndrome_type']}" if rule.get("syndrome_type") is not None else ""))
            continue
        act = r.get("action")
        if act != rule["action"]:
            errs.append(f"rule '{rule['rule']}' did {act}, intended {rule['action']}")
            continue
        errs += check_action(act, frame, t_tx, tx, idx, rx, rule["rule"], rule.get("delay_ns"))
    return errs


def check_action(act, frame, t_tx, tx, idx, rx, name, delay_ns):
    """The action as the receiver's rx capture shows it."""
    n_tx = sum(1 for _, b in tx if b == frame)
    at = [k for k, (_, b) in enumerate(rx) if b == frame]
    want = {"drop": n_tx - 1, "corrupt": n_tx - 1, "duplicate": n_tx + 1}.get(act, n_tx)
    if len(at) != want:
        return [f"rule '{name}' ({act}): the frame is {len(at)} times on the rx capture, {n_tx} on tx: "
                f"expected {want}"]
    if act == "corrupt":
        def one_bit_off(b):
            return len(b) == len(frame) and sum(bin(x ^ y).count("1") for x, y in zip(b, frame)) == 1
        if not any(one_bit_off(b) for _, b in rx):
            return [f"rule '{name}' (corrupt): no rx frame differs from it by one bit"]
    if act == "reorder" and idx + 1 < len(tx):
        nxt = [k for k, (_, b) in enumerate(rx) if b == tx[idx + 1][1]]
        if not at or not nxt or min(at) < min(nxt):
            return [f"rule '{name}' (reorder): the held frame did not arrive after the frame that followed it"]
    if act == "delay":  # one copy arrives delay_ns later (+ the wire's 100 ns and the frame's own time)
        lags = [rx[k][0] - t_tx for k in at]
        if not any(delay_ns <= lag <= delay_ns + 1000 for lag in lags):
            return [f"rule '{name}' (delay): its copies reach the rx capture {lags} ns after it left, "
                    f"none {delay_ns}..{delay_ns + 1000} ns"]
    return []


FATAL_RE = re.compile(r"QP fatal, code 0x([0-9a-fA-F]+)")


def judge(cell, res):
    """The problems of one cell's run (empty: it passed)."""
    if res["rc"] != 0:
        first = next((ln.strip() for ln in res["text"].splitlines() if "FAILED" in ln), res["text"].strip()[:200])
        return [f"exit code {res['rc']}: {first}"]
    base = res["base"]
    try:
        js = json.load(open(base + ".json"))
        recs = load_log(base + ".log")
    except (OSError, ValueError) as e:
        return [f"outputs unreadable: {e}"]
    errs = []
    if js.get("result") != "pass" or js.get("failures"):
        errs.append(f"JSON result {js.get('result')}, failures {js.get('failures')}")
    if js.get("model_errors"):
        errs.append(f"model errors (wire monitor, ...): {js['model_errors'][:2]}")
    if js.get("compliance"):
        errs.append(f"compliance reports: {js['compliance'][:2]}")
    cqes = [r.get("raw") for r in recs if r.get("kind") == "cqe" and r.get("node") == "A" and r.get("qp") == 2]
    if cqes != cell["cqes"]:
        errs.append(f"A's QP2 CQEs {[hex(c) for c in cqes]}, expected {[hex(c) for c in cell['cqes']]} "
                    "(PG332: ERRFLAG << 24 | opcode << 16 | WRID)")
    if cell["matrix"] == "fault":
        for rule in cell["rules"]:
            errs += check_rule(base, rule, recs)
        total = sum(r["count"] for r in cell["rules"])
        if js.get("faults_applied") != total:
            errs.append(f"JSON faults_applied {js.get('faults_applied')}, intended {total}")
    else:
        if js.get("faults_applied"):
            errs.append(f"{js['faults_applied']} faults applied in an access cell")
        rc_frames = [parse(b) for _, b in read_pcap(base + ".B-tx.pcap")]
        got = [f for f in rc_frames if f and f["opcode"] != 0x64]
        want = cell["answers"]
        ok = len(got) == len(want) and all(
            g["opcode"] == w["opcode"] and g["psn"] == w["psn"]
            and (w["syndrome"] is None or g["syndrome"] == w["syndrome"])
            and (w["syndrome_type"] is None or (g["syndrome"] is not None and (g["syndrome"] >> 5) & 3 == w["syndrome_type"]))
            for g, w in zip(got, want))
        if not ok:
            errs.append(f"B's answers {[describe(g) for g in got]}, expected {want}")
        for node in ("A", "B"):
            codes = [int(m.group(1), 16) for e in js.get("events", [])
                     if e.get("where") == f"top.{node}.ernic.qp2" for m in [FATAL_RE.search(e.get("what", ""))] if m]
            exp = [cell["fatal"][node]] if node in cell["fatal"] else []
            if codes != exp:
                errs.append(f"{node}'s fatal codes {[hex(c) for c in codes]}, expected {[hex(c) for c in exp]}")
    return errs


def verdict(cell, res):
    """('pass' | 'FAIL' | 'known' | 'XPASS', reasons)."""
    errs = judge(cell, res)
    kd = cell.get("known_defect")
    if not kd:
        return ("pass", []) if not errs else ("FAIL", errs)
    if not errs:
        return "XPASS", [f"marked a known defect ({kd['defect']}) but passed: remove the mark"]
    if res["rc"] == kd["exit_code"] and re.search(kd["signature"], res["text"]):
        return "known", [kd["defect"]]
    return "FAIL", errs + [f"(known defect {kd['defect']}, but not its signature)"]


def run_all(sim, out, cells, jobs, datapath=None):
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        results = list(ex.map(lambda c: run_cell(sim, out, c, datapath), cells))
    return [(c, r, *verdict(c, r)) for c, r in zip(cells, results)]


def table(matrix, judged):
    rows, cols = (KINDS, TARGETS) if matrix == "fault" else (ROWS, COLS)
    w0 = max(len(r) for r in rows) + 2
    widths = [max(len(c), 9) + 2 for c in cols]
    lines = ["".ljust(w0) + "".join(c.ljust(w) for c, w in zip(cols, widths))]
    for r in rows:
        line = r.ljust(w0)
        for c, w in zip(cols, widths):
            cs = [(st) for cell, _, st, _ in judged if cell["kind"] == r and cell["target"] == c]
            if not cs:
                txt = "-"
            else:
                txt = f"{sum(s == 'pass' for s in cs)}/{len(cs)}"
                if any(s == "known" for s in cs):
                    txt += f" ({sum(s == 'known' for s in cs)}K)"
            line += txt.ljust(w)
        lines.append(line)
    return "\n".join(lines)


def report(matrix, judged, wall, datapath=None):
    n = len(judged)
    by = {s: sum(1 for *_, st, _ in judged if st == s) for s in ("pass", "FAIL", "known", "XPASS")}
    title = "fault matrix: kind x target" if matrix == "fault" else "access-violation matrix: case x opcode"
    print(f"\n{title}, datapath {datapath or 'model'} (passed/cells; K: known model defect, failing as "
          "recorded)\n")
    print(table(matrix, judged))
    print(legend(matrix, judged))
    print(f"\n{n} cells: {by['pass']} passed, {by['FAIL']} failed, {by['known']} known defects, "
          f"{by['XPASS']} known defects that passed; {wall:.1f} s wall")
    for cell, res, st, why in judged:
        if st != "pass":
            print(f"  {st:5} {cell['name']}: " + "; ".join(why))
            if st in ("FAIL", "XPASS"):
                print(f"        outputs {res['base']}.{{json,log,pcap}}; repro: ernic-sim run {cell['file']}")
    return by["FAIL"] == 0 and by["XPASS"] == 0


def legend(matrix, judged):
    """What a table cell counts: per column, its positions, opcodes, layouts."""
    if matrix != "fault":
        return "each cell: one scenario (SEND_INV has no VA: no bounds or va_wrap cell)"
    out = ["each table cell counts the scenarios of one kind and target over:"]
    for t in TARGETS:
        cs = [c for c, *_ in judged if c["target"] == t and c["kind"] == KINDS[0]]
        pos = sorted({c["position"] for c in cs}, key=lambda p: [c["position"] for c in cs].index(p))
        ops = sorted({c["op"] for c in cs})
        lay = sorted({c.get("layout", "3.1") for c in cs})
        if len(pos) * len(ops) * len(lay) == len(cs):
            what = f"positions {', '.join(pos)} x opcodes {', '.join(ops)}"
        else:
            what = ", ".join(f"{p} ({next(c['op'] for c in cs if c['position'] == p)})" for p in pos)
        out.append(f"  {t}: {what} x layouts {', '.join(lay)} = {len(cs)}")
    return "\n".join(out)


def selftest(sim, out):
    """Sabotaged cells the checker must fail, each for its reason."""
    cells = {c["name"]: c for c in gen_matrix.all_cells("all")}
    cases = []
    c = copy.deepcopy(cells["fm_drop_write_middle_write"])  # the rule's PSN matches nothing
    c["name"], c["text"] = "st_never_fires", c["text"].replace("psn: 0x102 }", "psn: 0x1102 }")
    cases.append((c, "the fault never fired"))
    c = copy.deepcopy(cells["fm_duplicate_write_middle_write"])  # the manifest names another packet
    c["name"] = "st_wrong_packet"
    c["rules"][0]["psn"] = 0x103
    cases.append((c, "intended opcode 0x7, psn 0x103"))
    c = copy.deepcopy(cells["av_key_byte_write"])  # a wrong expected requester code
    c["name"], c["fatal"] = "st_wrong_code", {"B": 0x15, "A": 0x0B}
    cases.append((c, "A's fatal codes ['0xa'], expected ['0xb']"))
    c = copy.deepcopy(cells["fm_delay_ack_first_write"])  # the scenario's own memory check fails
    c["name"], c["text"] = "st_memory", c["text"].replace("value: 0xa5 } }", "value: 0xa6 } }", 1)
    cases.append((c, "exit code 1"))
    c = copy.deepcopy(cells["fm_drop_ack_middle_write"])  # a stale known-defect mark
    c["name"], c["known_defect"] = "st_stale_mark", {"defect": "none", "exit_code": 3, "signature": "x"}
    cases.append((c, "remove the mark"))
    for c, _ in cases:
        c["text"] = c["text"].replace(f"scenario: {c['text'].split('scenario: ')[1].split()[0]}",
                                      f"scenario: {c['name']}")
    manifest = gen_matrix.write([c for c, _ in cases], out)
    judged = run_all(sim, out, manifest, 2)
    ok = True
    for (c, want), (_, _, st, why) in zip(cases, judged):
        good = st in ("FAIL", "XPASS") and any(want in w for w in why)
        ok &= good
        print(f"{'ok  ' if good else 'BAD '} {c['name']}: {st}: {'; '.join(why)[:300]}"
              + ("" if good else f"  (expected a failure saying '{want}')"))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", choices=["fault", "access"])
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--sim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--datapath", help="override the scenarios' datapath (model): rtl, user:alt, ...")
    a = ap.parse_args()
    sim, out = os.path.abspath(a.sim), os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    if a.selftest:
        sys.exit(0 if selftest(sim, out) else 1)
    if not a.matrix:
        ap.error("--matrix or --selftest")
    t0 = time.monotonic()
    cells = [c for c in gen_matrix.all_cells(a.matrix) if a.only in c["name"]]
    manifest = gen_matrix.write(cells, out)
    judged = run_all(sim, out, manifest, a.jobs, a.datapath)
    sys.exit(0 if report(a.matrix, judged, time.monotonic() - t0, a.datapath) else 1)


if __name__ == "__main__":
    main()
