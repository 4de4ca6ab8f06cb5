#!/usr/bin/env python3
"""The regression suite's own checks (tb/scenarios/CMakeLists.txt runs them).

  check_suite.py --source ROOT names
      Every scenario under scenarios/{handshake,traffic,errors,perf} is named
      <subject>_<purpose>.yaml (lower case, words joined by '_', a subject
      from SUBJECTS, at least one purpose word), every scenario file's
      `scenario:` key is its file name, and there are at least 40 of them.
  check_suite.py --source ROOT coverage
      The coverage table of scenarios/README.md (between the markers
      <!-- coverage:begin --> and <!-- coverage:end -->): every row names
      scenarios that exist, or says why none can ("none: <reason>"); every
      required row is there: each PG332 fatal code (the spec's table, below),
      each fatal code the model raises (the fatal::k* constants of
      model/regs/fatal.h that the blocks in model/ernic/ use: those rows
      must name a scenario, and each named
      scenario's file must mention the code), each opcode of the opcode table
      (model/roce/opcodes.cpp), each validation outcome, NAK and RNR
      syndrome, recovery flow and qp_setup_fsm status listed below.
  check_suite.py --source ROOT coverage-runs --sim ERNIC_SIM --out DIR
      A file that merely mentions a fatal code is no evidence: each scenario
      a fatal-code row names (for the codes the model raises) is run
      (`--datapath model --json`) and its report must show the code (an
      event "QP fatal, code 0xNN").
  check_suite.py --source ROOT coverage-selftest
      The coverage check finds a missing row, a scenario that does not
      exist, an empty scenario cell and a model fatal code without a
      scenario (on altered copies of the table).
  check_suite.py --source ROOT labels --ctest CTEST --build DIR --sim ERNIC_SIM
      ctest's labels of scenario.<datapath>.<name> equal the labels that
      `ernic-sim regress --list` gives the file, plus scenario and the
      datapath, and every scenario has both tests.
  check_suite.py --source ROOT ctest-junit --ctest CTEST --build DIR --out FILE
      `ctest --output-junit FILE` writes JUnit XML (one test run through it).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

FOLDERS = ["handshake", "traffic", "errors", "perf"]
MIN_SCENARIOS = 40
# The subjects a scenario name starts with (scenarios/README.md, "The suite").
SUBJECTS = ["init", "rc", "rx", "cm", "mr_cache", "qp_setup_fsm"]

# PG332 fatal codes (PG332 "Fatal codes", the error-status queue's 5-bit code).
PG332_FATAL = {
    0x01: "opcode sequence", 0x02: "length != PMTU or bad pad", 0x03: "01 and 02 together",
    0x04: "unsupported opcode with a good PSN", 0x05: "raised by the WQE processor",
    0x06: "raised by the response handler", 0x09: "RNR counter expired",
    0x0A: "NAK invalid / remote access / remote operational received", 0x0C: "bad ACK response opcode",
    0x0D: "RNR NAK down-counter expired", 0x10: "read-request resources full", 0x11: "WRITE opcode sequence",
    0x12: "WRITE length or pad", 0x13: "11 and 12 together", 0x15: "R_Key or access check",
    0x16: "RETH DMA length", 0x17: "15 and 16 together", 0x19: "bad AETH syndrome",
    0x1A: "READ_RESPONSE_ONLY length", 0x1B: "bad response", 0x1C: "READ_RESPONSE_LAST where ONLY was due",
    0x1E: "READ_RESPONSE_MIDDLE length", 0x1F: "READ_RESPONSE_LAST error",
}

# Incoming validation outcomes (PG332 Table 2-3 as the spec lists them).
VALIDATION = [
    "mac_da", "ip_version", "ipv4_ihl", "ipv4_flags_fragment", "ip_da", "ipv4_checksum", "length", "bth_tver",
    "qp_unsupported", "qp_disabled", "pad", "pmtu", "malformed_aeth", "source_ip_mac", "icrc", "fcs",
    "opcode_sequence", "unsupported_opcode", "rq_full", "psn_out_of_sequence", "psn_duplicate", "bad_response",
    "nak_received",
]
# AETH syndromes: NAK codes and the RNR NAK with its timer.
NAK = ["0x60", "0x61", "0x62", "0x63", "0x64", "rnr_timer_0", "rnr_timer_1", "rnr_timer_3", "rnr_retry_exhausted",
       "rnr_retry_infinite", "ack_0x1f"]
RECOVERY = ["go_back_n", "ack_timeout_resend", "retry_exhausted", "rnr_wait_resend", "read_reissue_gap",
            "read_reissue_timeout", "implied_nak", "duplicate_reack", "fatal_recovery", "qp_deletion", "fatal_flush",
            "hw_handshake_switch", "link_down_up", "cm_reject"]
# qp_setup_fsm statuses and the scenarios that must show them (issue 7).
QP_SETUP_FSM = {
    "0x17": ["handshake/qp_setup_fsm_ready"],
    "0x01": ["errors/qp_setup_fsm_qpn_range"],
    "0x05": ["errors/qp_setup_fsm_pool_exhausted"],
    "0x0B": ["errors/qp_setup_fsm_psn_range", "errors/qp_setup_fsm_qpn_active"],
    "0x13": ["errors/qp_setup_fsm_link_timeout"],
}
AREAS = ["fatal", "validation", "nak", "opcode", "recovery", "qp_setup_fsm"]

BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def scenario_files(root):
    out = []
    base = os.path.join(root, "scenarios")
    for d, _, files in os.walk(base):
        for f in files:
            if f.endswith(".yaml"):
                out.append(os.path.relpath(os.path.join(d, f), base))
    return sorted(out)


# ------------------------------------------------------------------ names --
def check_names(root):
    errs = []
    name_re = re.compile(r"^(%s)_[a-z0-9]+(_[a-z0-9]+)*\.yaml$" % "|".join(re.escape(s) for s in SUBJECTS))
    n = 0
    for rel in scenario_files(root):
        parts = rel.split(os.sep)
        text = read(os.path.join(root, "scenarios", rel))
        m = re.search(r"^scenario:\s*(\S+)\s*$", text, re.M)
        stem = os.path.splitext(parts[-1])[0]
        if not m or m.group(1).strip("\"'") != stem:
            errs.append("scenarios/%s: its `scenario:` key must be %s" % (rel, stem))
        if parts[0] not in FOLDERS:
            continue
        n += 1
        if len(parts) != 2:
            errs.append("scenarios/%s: scenarios sit directly in %s/" % (rel, parts[0]))
        if not name_re.match(parts[-1]):
            errs.append("scenarios/%s: not <subject>_<purpose>.yaml with a subject from %s" % (rel, ", ".join(SUBJECTS)))
    if n < MIN_SCENARIOS:
        errs.append("only %d scenarios under scenarios/{%s}; at least %d wanted" % (n, ",".join(FOLDERS), MIN_SCENARIOS))
    return errs, n


# --------------------------------------------------------------- coverage --
def model_fatal_codes(root):
    values = dict(re.findall(r"constexpr\s+uint8_t\s+(k\w+)\s*=\s*(0x[0-9A-Fa-f]+)",
                             read(os.path.join(root, "model/regs/fatal.h"))))
    used = set()
    ernic = os.path.join(root, "model/ernic")
    for f in sorted(os.listdir(ernic)):
        if f.endswith(".cpp"):
            used |= set(re.findall(r"\bfatal::(k\w+)", read(os.path.join(ernic, f))))
    unknown = used - set(values)
    if unknown:
        raise SystemExit("model/ernic uses fatal codes model/regs/fatal.h lacks: " + ", ".join(sorted(unknown)))
    return sorted({int(values[k], 16) for k in used})


def model_opcodes(root):
    text = read(os.path.join(root, "model/roce/opcodes.cpp"))
    return re.findall(r"mk\(op::\w+,\s*\"(\w+)\"", text)


def parse_table(readme):
    if BEGIN not in readme or END not in readme:
        return None, ["scenarios/README.md has no coverage table (markers %s ... %s)" % (BEGIN, END)]
    body = readme[readme.index(BEGIN) + len(BEGIN):readme.index(END)]
    rows, errs = [], []
    for ln, line in enumerate(body.splitlines()):
        line = line.strip()
        if not line.startswith("|") or re.match(r"^\|[\s:|-]+\|$", line):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[:2] == ["area", "key"]:
            continue
        if len(cells) != 4:
            errs.append("coverage row with %d cells, 4 wanted: %s" % (len(cells), line))
            continue
        area, key, what, scen = cells
        key = key.strip("`")
        rows.append({"area": area, "key": key, "what": what, "scenario": scen, "line": line})
    return rows, errs


def row_scenarios(cell):
    return re.findall(r"`([a-z_]+/[a-z0-9_]+)`", cell)


def check_coverage_text(readme, existing, fatal_model, opcodes, scenario_text):
    """existing: set of 'folder/name'; scenario_text(ref) -> file text."""
    rows, errs = parse_table(readme)
    if rows is None:
        return errs
    have = {}
    for r in rows:
        if r["area"] not in AREAS:
            errs.append("coverage row of unknown area '%s': %s" % (r["area"], r["line"]))
            continue
        have.setdefault((r["area"], r["key"].lower()), []).append(r)
        refs = row_scenarios(r["scenario"])
        none = re.match(r"^none:\s*(.+)$", r["scenario"])
        if not refs and not (none and len(none.group(1)) >= 20):
            errs.append("coverage row %s %s names no scenario and gives no reason ('none: <why>'): %s"
                        % (r["area"], r["key"], r["line"]))
        for ref in refs:
            if ref not in existing:
                errs.append("coverage row %s %s names %s, which does not exist (scenarios/%s.yaml)"
                            % (r["area"], r["key"], ref, ref))

    def need(area, key, must_have_scenario=False, mention=None, exact=None):
        rs = have.get((area, key.lower()))
        if not rs:
            errs.append("coverage table: no row for %s %s" % (area, key))
            return
        refs = [x for r in rs for x in row_scenarios(r["scenario"])]
        if must_have_scenario and not refs:
            errs.append("coverage table: %s %s is produced by the model, so its row must name a scenario" % (area, key))
        if mention:
            for ref in refs:
                if ref in existing and mention.lower() not in scenario_text(ref).lower():
                    errs.append("coverage row %s %s names %s, whose file never mentions %s"
                                % (area, key, ref, mention))
        if exact is not None and sorted(refs) != sorted(exact):
            errs.append("coverage row %s %s must name exactly %s (names %s)" % (area, key, ", ".join(exact),
                                                                               ", ".join(refs) or "none"))

    for code in sorted(set(PG332_FATAL) | set(fatal_model)):
        k = "0x%02X" % code
        need("fatal", k, must_have_scenario=code in fatal_model, mention=k if code in fatal_model else None)
    for k in VALIDATION:
        need("validation", k)
    for k in NAK:
        need("nak", k)
    for name in opcodes:
        need("opcode", name)
    for k in RECOVERY:
        need("recovery", k)
    for k, refs in QP_SETUP_FSM.items():
        need("qp_setup_fsm", k, exact=refs)
    return errs


def coverage_inputs(root):
    readme = read(os.path.join(root, "scenarios/README.md"))
    existing = {os.path.splitext(p)[0].replace(os.sep, "/") for p in scenario_files(root)}
    texts = {}

    def text(ref):
        if ref not in texts:
            texts[ref] = read(os.path.join(root, "scenarios", ref + ".yaml"))
        return texts[ref]
    return readme, existing, model_fatal_codes(root), model_opcodes(root), text


def check_coverage(root):
    readme, existing, fatal, ops, text = coverage_inputs(root)
    errs = check_coverage_text(readme, existing, fatal, ops, text)
    return errs, fatal, ops


def coverage_selftest(root):
    readme, existing, fatal, ops, text = coverage_inputs(root)
    rows, _ = parse_table(readme)
    problems = []

    def expect(mutated, needle, what):
        errs = check_coverage_text(mutated, existing, fatal, ops, text)
        if not any(needle in e for e in errs):
            problems.append("%s was not caught (wanted an error with '%s'; got %s)" % (what, needle, errs[:3]))

    # 1. a row removed: the first opcode's
    row = next(r for r in rows if r["area"] == "opcode")
    expect(readme.replace(row["line"] + "\n", ""), "no row for opcode " + row["key"], "a missing opcode row")
    # 2. a scenario that does not exist
    row = next(r for r in rows if row_scenarios(r["scenario"]))
    ref = row_scenarios(row["scenario"])[0]
    expect(readme.replace(row["line"], row["line"].replace("`%s`" % ref, "`errors/no_such_scenario`")),
           "errors/no_such_scenario, which does not exist", "a row naming a missing scenario")
    # 3. an empty scenario cell
    cells = row["line"].strip().strip("|").split("|")
    expect(readme.replace(row["line"], "|" + "|".join(cells[:3] + [" "]) + "|"), "names no scenario",
           "an empty scenario cell")
    # 4. a fatal code the model raises, explained away instead of shown
    code = "0x%02X" % fatal[0]
    row = next(r for r in rows if r["area"] == "fatal" and r["key"].upper() == code.upper())
    cells = row["line"].strip().strip("|").split("|")
    expect(readme.replace(row["line"], "|" + "|".join(cells[:3] + [" none: the model cannot produce it, it is said "]) + "|"),
           "must name a scenario", "a model fatal code without a scenario")
    return problems


def check_coverage_runs(root, sim, out):
    readme, existing, fatal, ops, text = coverage_inputs(root)
    rows, errs = parse_table(readme)
    if rows is None:
        return errs, 0
    os.makedirs(out, exist_ok=True)
    runs = {}  # scenario -> the fatal codes its report shows
    shown = 0
    for code in fatal:
        k = "0x%02X" % code
        refs = [x for r in rows if r["area"] == "fatal" and r["key"].upper() == k.upper()
                for x in row_scenarios(r["scenario"])]
        for ref in refs:
            if ref not in existing:
                continue  # the coverage check names it
            if ref not in runs:
                rep = os.path.join(out, ref.replace("/", "_") + ".json")
                subprocess.run([sim, "run", os.path.join(root, "scenarios", ref + ".yaml"), "--datapath", "model",
                                "--quiet", "--json", rep], capture_output=True, text=True)
                codes = set()
                try:
                    with open(rep) as f:
                        for e in json.load(f).get("events", []):
                            m = re.match(r"QP fatal, code 0x([0-9a-fA-F]{2})\b", e.get("what", ""))
                            if m:
                                codes.add(int(m.group(1), 16))
                except (OSError, ValueError) as e:
                    errs.append("%s: no report (%s)" % (ref, e))
                runs[ref] = codes
            if code in runs[ref]:
                shown += 1
            else:
                errs.append("coverage row fatal %s names %s, whose run shows no QP fatal with code %s (codes seen: %s)"
                            % (k, ref, k, ", ".join("0x%02X" % c for c in sorted(runs[ref])) or "none"))
    return errs, shown


# ----------------------------------------------------------------- labels --
def check_labels(root, ctest, build, sim):
    shown = json.loads(subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True, capture_output=True,
                                      text=True).stdout)
    ct = {}
    for t in shown["tests"]:
        m = re.match(r"^scenario\.(rtl|model|user_alt)\.(.+)$", t["name"])
        if not m:
            continue
        labels = []
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = p["value"]
        ct[(m.group(1), m.group(2))] = set(labels)
    out = subprocess.run([sim, "regress", os.path.join(root, "scenarios"), "--list"], check=True, capture_output=True,
                         text=True).stdout
    errs, n = [], 0
    for line in out.splitlines():
        name, labels = line.split()
        n += 1
        want = set(labels.split(","))
        # ctest family -> its datapath label (user_alt: `--datapath user:alt`, label user)
        for dp, dp_label in (("rtl", "rtl"), ("model", "model"), ("user_alt", "user")):
            key = (dp, name.replace("/", "."))
            if key not in ct:
                errs.append("no ctest test scenario.%s.%s" % key)
                continue
            if ct[key] != want | {"scenario", dp_label}:
                errs.append("scenario.%s.%s: ctest labels %s, regress labels %s" % (key[0], key[1], sorted(ct[key]),
                                                                                    sorted(want | {"scenario", dp_label})))
    if len(ct) != 3 * n:
        errs.append("%d scenario tests in ctest for %d scenarios (3 each wanted)" % (len(ct), n))
    return errs, n


def check_ctest_junit(ctest, build, out):
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([ctest, "-R", r"^scenarios\.names$", "--output-junit", out], cwd=build, capture_output=True,
                       text=True)
    if r.returncode != 0:
        return ["ctest --output-junit exited %d: %s%s" % (r.returncode, r.stdout, r.stderr)]
    root = ET.parse(out).getroot()
    errs = []
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return ["%s: no <testsuite>" % out]
    cases = suite.findall("testcase")
    if suite.get("tests") != "1" or suite.get("failures") != "0" or len(cases) != 1:
        errs.append("%s: tests=%s failures=%s, %d testcase(s); 1, 0, 1 wanted" % (out, suite.get("tests"),
                                                                                   suite.get("failures"), len(cases)))
    elif cases[0].get("name") != "scenarios.names" or float(cases[0].get("time", "-1")) < 0:
        errs.append("%s: testcase %s time %s" % (out, cases[0].get("name"), cases[0].get("time")))
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("what", choices=["names", "coverage", "coverage-runs", "coverage-selftest", "labels",
                                     "ctest-junit"])
    ap.add_argument("--ctest")
    ap.add_argument("--build")
    ap.add_argument("--sim")
    ap.add_argument("--out")
    a = ap.parse_args()
    root = a.source
    if a.what == "names":
        errs, n = check_names(root)
        ok = "%d scenarios named <subject>_<purpose>.yaml" % n
    elif a.what == "coverage":
        errs, fatal, ops = check_coverage(root)
        ok = "coverage table complete: %d model fatal codes, %d PG332 fatal codes, %d opcodes" % (
            len(fatal), len(PG332_FATAL), len(ops))
    elif a.what == "coverage-runs":
        errs, n = check_coverage_runs(root, a.sim, a.out)
        ok = "%d (fatal code, scenario) pairs of the coverage table shown by a run" % n
    elif a.what == "coverage-selftest":
        errs = coverage_selftest(root)
        ok = "the coverage check catches a missing row, a missing scenario, an empty cell, an unshown fatal code"
    elif a.what == "labels":
        errs, n = check_labels(root, a.ctest, a.build, a.sim)
        ok = "ctest and regress agree on the labels of %d scenarios" % n
    else:
        errs = check_ctest_junit(a.ctest, a.build, a.out)
        ok = "ctest --output-junit wrote %s" % a.out
    for e in errs:
        print("FAIL: " + e)
    if errs:
        print("%d problem(s)" % len(errs))
        return 1
    print(ok)
    return 0


if __name__ == "__main__":
    sys.exit(main())
