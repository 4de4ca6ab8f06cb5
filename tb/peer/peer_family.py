#!/usr/bin/python3
"""tb/peer: the protocol scenarios with one ERNIC node replaced by the ideal
IBTA peer (issue 18: "the ideal peer passes the protocol scenarios in the
roles it can take").

  peer_family.py --source ROOT --out DIR    writes DIR/<scenario>.yaml for
                                            each converted scenario, DIR/
                                            manifest.json, prints the table
  peer_family.py --source ROOT --list       prints the converted names

Each scenario of peer_rules.FOLDERS with nodes A and B (no topology) is
converted with B as the peer, else with A: the node takes no step the peer
refuses (peer_rules.REFUSED_STEPS, REFUSED_NODE_KEYS), becomes `kind: peer`
with its mac / ip / ipv6 / memory_mib / num_qp, its ERNIC keys removed; its
connections go out of band (cm: false), CM frames leave expect_frames, and
steps on its ERNIC internals are dropped (peer_rules.DROPPED_STEPS): every
change with its reason, in the variant's header and in the table. Every check
on the other node and every check_memory stay but the trimmed ones
(peer_rules.TRIMMED, each with its reason; for ERNIC's ACK policy only the
plain ACK patterns are relaxed). A rule that no longer applies is an error.
ctest runs each variant (tb/peer/CMakeLists.txt: peer.family.<scenario>).
"""
import argparse
import collections
import copy
import glob
import json
import os
import sys

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peer_rules as R  # noqa: E402


class Refused(Exception):
    """The candidate node takes a role the peer cannot take (the reason)."""


def step_nodes(kind, args, conns):
    """The nodes a step addresses itself (not those it compares with);
    conns: each connection's ends so far."""
    if kind == "init":
        return set(args if isinstance(args, list) else [args])
    if not isinstance(args, dict):
        return set()
    if kind in ("connect", "connect_reject"):
        return {args.get("client"), args.get("server")}
    if kind == "wait_until" and isinstance(args.get("reg"), dict):
        return {args["reg"].get("node")}
    if kind == "recover":
        return conns.get(args.get("conn"), set())
    return {args.get("node"), args.get("remote")}


def is_cm_pattern(p):
    return isinstance(p, dict) and p.get("opcode") in ("UD_SEND_ONLY", "UD_SEND_ONLY_IMM")


def is_plain_ack(p):
    """An ACK pattern (no NAK or RNR syndrome: AETH type 00, syndrome < 0x20)."""
    syn = p.get("syndrome") if isinstance(p, dict) else None
    return isinstance(p, dict) and p.get("opcode") == "RC_ACK" and (syn is None or int(str(syn), 0) < 0x20)


def acks_relaxed(pats):
    """The patterns but the plain ACKs, in order, with any number of plain
    ACKs allowed before, between and after them: what the responder sends
    besides its ACKs (NAKs, READ responses, its own requests) stays checked."""
    any_acks = {"opcode": "RC_ACK", "syndrome": 0x1F, "repeat": "*"}
    out = [dict(any_acks)]
    for p in pats:
        if not is_plain_ack(p):
            out += [p, dict(any_acks)]
    return out


class StaleRule(Exception):
    """A rule of peer_rules.py that no longer applies (the scenario changed)."""


class Converter:
    def __init__(self, name, node):
        self.name, self.node = name, node
        self.changes = []  # (step kind, reason)
        self.posts = 0
        self.conns = {}  # connection name: its two ends
        self.used_trims = set()  # the TRIMMED rules that matched a step

    def steps(self, steps, top=False):
        out = []
        for s in steps or []:
            (kind, args), = s.items()
            if kind in R.TRUNCATING_STEPS and self.node in step_nodes(kind, args, self.conns):
                if not top:
                    raise Refused(R.TRUNCATING_STEPS[kind] + " (inside repeat or parallel)")
                self.changes.append((kind, R.TRUNCATING_STEPS[kind]))
                break
            kept = self.step(kind, args)
            if kept is not None:
                out.append({kind: kept})
                if kind in R.SETTLING_STEPS and self.node not in step_nodes(kind, args, self.conns):
                    us, why = R.SETTLING_STEPS[kind]
                    out.append({"wait": {"us": us}})
                    self.changes.append((kind + " (then wait)", why))
        return out

    def step(self, kind, args):
        mine = self.node in step_nodes(kind, args, self.conns)
        if kind == "connect":
            self.conns[args.get("name")] = {args.get("client"), args.get("server")}
        elif kind == "repeat":
            args["steps"] = self.steps(args.get("steps"))
        elif kind == "parallel":
            for br in args:
                br["steps"] = self.steps(br.get("steps"))
        for tkind, keys, why in R.TRIMMED.get(self.name, []):
            if tkind == kind and isinstance(args, dict) and all(args.get(k) == v for k, v in keys.items()):
                self.used_trims.add((tkind, tuple(sorted(keys.items()))))
                if kind != "expect_frames":
                    self.changes.append((kind + " (trimmed)", why))
                    return None
                if why == R.ACK_POLICY:  # only the ACKs are relaxed
                    self.changes.append((kind + " (ACKs relaxed)", why))
                    args = self.frames(args)
                    args["frames"] = acks_relaxed(args["frames"])
                    return args
                self.changes.append((kind + " (trimmed)", why))
                args["frames"] = [{"repeat": "*"}]
                return args
        if kind == "expect_frames":
            return self.frames(args)
        elif kind == "post":
            self.posts += 1
        if not mine:
            return args
        if kind in R.REFUSED_STEPS:
            raise Refused(R.REFUSED_STEPS[kind])
        if kind in R.DROPPED_STEPS:
            self.changes.append((kind, R.DROPPED_STEPS[kind]))
            return None
        for key, why in R.DROPPED_KEYS.get(kind, {}).items():
            if key in args:
                del args[key]
                self.changes.append((kind + "." + key, why))
        if kind == "connect":
            if "batch" in args:
                raise Refused("connect batch: the built-in driver's batched setup on both ends")
            if args.get("cm", True):
                args["cm"] = False
                self.changes.append(("connect.cm", "the peer does not speak CM: out of band"))
        return args

    def frames(self, args):
        pats = args.get("frames") or []
        kept = [p for p in pats if not is_cm_pattern(p)]
        if len(kept) != len(pats):
            self.changes.append(("expect_frames.cm", "CM frames: the connection is out of band"))
        args["frames"] = kept
        return args


def convert_as(doc, name, node):
    """The variant with `node` as the peer, or raises Refused."""
    d = copy.deepcopy(doc)
    n = d["nodes"][node]
    for key, why in R.REFUSED_NODE_KEYS.items():
        if key in n:
            raise Refused(why)
    c = Converter(name, node)
    d["steps"] = c.steps(d.get("steps"), top=True)
    for key in R.ERNIC_NODE_KEYS:
        if n.pop(key, None) is not None:
            c.changes.append(("node." + key, "a key of an ERNIC node"))
    n = dict({"kind": "peer"}, **n)
    n["peer"] = {}
    for key, (value, why) in R.PEER_PARAMS.items():
        n["peer"][key] = value
        c.changes.append(("peer." + key, why))
    d["nodes"][node] = n
    if c.posts == 0:
        raise Refused("no post step: no RC traffic for the peer to take part in")
    d["scenario"] = name + "_peer_" + node
    for tkind, keys, why in R.TRIMMED.get(name, []):
        if (tkind, tuple(sorted(keys.items()))) not in c.used_trims:
            raise StaleRule("%s: the TRIMMED rule %s %s matches no step: take it off" % (name, tkind, keys))
    return d, c.changes


def convert(doc, name):
    """(variant, replaced node, changes) or (None, None, reason)."""
    if name in R.SKIPPED:
        return None, None, R.SKIPPED[name]
    nodes = doc.get("nodes") or {}
    if sorted(nodes) != ["A", "B"] or "topology" in doc:
        return None, None, "not two nodes A and B point to point"
    reasons = []
    for node in ("B", "A"):
        try:
            d, changes = convert_as(doc, name, node)
            return d, node, changes
        except Refused as e:
            reasons.append(str(e))
    return None, None, "B: " + reasons[0] + "; A: " + reasons[1]


def scenarios(root):
    for folder in R.FOLDERS:
        for f in sorted(glob.glob(os.path.join(root, "scenarios", folder, "*.yaml"))):
            yield folder, os.path.splitext(os.path.basename(f))[0], f


def header(src, node, changes):
    lines = ["# Generated by tb/peer/peer_family.py from scenarios/%s: node %s is the ideal IBTA peer." % (src, node)]
    for kind, why in sorted(set(changes)):
        lines.append("#   %s: %s" % (kind, why))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True, help="the repository's root")
    ap.add_argument("--out", help="write the variants here")
    ap.add_argument("--list", action="store_true", help="print the converted scenarios' names")
    a = ap.parse_args()
    manifest, skipped, dropped = [], collections.Counter(), collections.Counter()
    names = {name for _, name, _ in scenarios(a.source)}
    stale = ["%s: SKIPPED/TRIMMED names no scenario: take it off" % n
             for n in sorted((set(R.SKIPPED) | set(R.TRIMMED)) - names)]
    for folder, name, path in scenarios(a.source):
        with open(path) as f:
            doc = yaml.safe_load(f)
        try:
            d, node, changes = convert(doc, name)
        except StaleRule as e:
            stale.append(str(e))
            continue
        if d is None:
            skipped[changes] += 1
            continue
        rel = folder + "/" + name + ".yaml"
        manifest.append({"name": name, "source": rel, "peer": node, "changes": sorted(set(changes))})
        for kind, why in set(changes):
            dropped[(kind, why)] += 1
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            with open(os.path.join(a.out, name + ".yaml"), "w") as f:
                f.write(header(rel, node, changes))
                yaml.safe_dump(d, f, sort_keys=False, default_flow_style=None, width=120)
    if stale:
        sys.exit("peer_family.py: stale rules in peer_rules.py:\n  " + "\n  ".join(stale))
    if a.list:
        print("\n".join(m["name"] for m in manifest))
        return
    if a.out:
        with open(os.path.join(a.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
    by_node = collections.Counter(m["peer"] for m in manifest)
    print("converted: %d (B as the peer %d, A %d); skipped: %d"
          % (len(manifest), by_node["B"], by_node["A"], sum(skipped.values())))
    for why, n in skipped.most_common():
        print("  skipped %3d  %s" % (n, why))
    for (kind, why), n in sorted(dropped.items()):
        print("  changed %3d  %s: %s" % (n, kind, why))


if __name__ == "__main__":
    main()
