#!/usr/bin/env python3
"""Validates a JUnit XML file against the rules of the Apache Ant JUnit
schema that CI tools read (the layout `ernic-sim regress --junit` promises),
with Python's own XML parser, and prints its test cases as JSON.

  check_junit.py FILE

Rules checked: root <testsuites> of <testsuite> elements; a testsuite has
name, package, id (int), timestamp (YYYY-MM-DDTHH:MM:SS, no zone),
hostname, tests, failures, errors (ints), optional skipped (int), time
(decimal); its children are, in order, one <properties> (of <property
name value>), any <testcase>, one <system-out>, one <system-err>; a
testcase has name, classname and time (decimal) and at most one child, a
<skipped>, <error> or <failure>, whose type is required; the suite's
counts equal its test cases, failures and errors. Exit 0 and the JSON
list on stdout when valid, 1 and the problems otherwise.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

DEC = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
INT = re.compile(r"^[+-]?\d+$")
TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")


def main(path):
    errs, cases = [], []
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        errs.append("root element is <%s>, not <testsuites>" % root.tag)
    for si, s in enumerate(root):
        if s.tag != "testsuite":
            errs.append("<testsuites> holds <%s>" % s.tag)
            continue
        for a, pat in (("name", None), ("package", None), ("id", INT), ("timestamp", TS), ("hostname", None),
                       ("tests", INT), ("failures", INT), ("errors", INT), ("time", DEC)):
            v = s.get(a)
            if v is None or not v.strip():
                errs.append("testsuite %d: no %s" % (si, a))
            elif pat and not pat.match(v):
                errs.append("testsuite %d: %s=%r is not valid" % (si, a, v))
        if s.get("skipped") is not None and not INT.match(s.get("skipped")):
            errs.append("testsuite %d: skipped=%r" % (si, s.get("skipped")))
        tags = [c.tag for c in s]
        want = ["properties"] + ["testcase"] * tags.count("testcase") + ["system-out", "system-err"]
        if tags != want:
            errs.append("testsuite %d: children %s, wanted properties, testcase*, system-out, system-err" % (si, tags))
        for p in s.iter("property"):
            if not p.get("name") or p.get("value") is None:
                errs.append("property without name or value")
        nf = ne = 0
        for c in s.findall("testcase"):
            for a in ("name", "classname"):
                if not c.get(a):
                    errs.append("testcase without %s" % a)
            if not DEC.match(c.get("time", "")):
                errs.append("testcase %s: time=%r" % (c.get("name"), c.get("time")))
            kids = list(c)
            if len(kids) > 1 or any(k.tag not in ("skipped", "error", "failure") for k in kids):
                errs.append("testcase %s: children %s" % (c.get("name"), [k.tag for k in kids]))
            case = {"classname": c.get("classname"), "name": c.get("name"), "time": float(c.get("time", "0") or 0),
                    "result": "pass"}
            for k in kids:
                if k.tag in ("error", "failure") and not k.get("type"):
                    errs.append("testcase %s: <%s> without type" % (c.get("name"), k.tag))
                case.update({"result": k.tag, "type": k.get("type"), "message": k.get("message"),
                             "text": k.text or ""})
                nf += k.tag == "failure"
                ne += k.tag == "error"
            cases.append(case)
        n = len(s.findall("testcase"))
        for a, v in (("tests", n), ("failures", nf), ("errors", ne)):
            if s.get(a) and INT.match(s.get(a)) and int(s.get(a)) != v:
                errs.append("testsuite %d: %s=%s but %d counted" % (si, a, s.get(a), v))
    if errs:
        for e in errs:
            print("INVALID: " + e)
        return 1
    print(json.dumps(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
