"""tb/matrix: the fault matrix (issue 20, "The fault matrix as one test").

One scenario per cell: fault kind x what it hits x position x opcode, in
both register layouts (PG332 3.1 resends the whole WQE after a NAK or a
timeout, 4.x from the NAKed PSN: spec section 6; the 4.x copy of a cell is
named <cell>_4x). Node A is the requester (client, QP 2, PSNs from 0x100),
B the responder (server, QP 2, PSNs from 0x800), PMTU 1024, A's local ACK
timeout short (TIMEOUTCONFi[5:0] = 2: 2^2 ticks of 2^10 core cycles, the
base count of 200 MHz, 20.48 us) so that a loss no NAK reveals is
recovered quickly.

Kinds, each acting once (count 1): drop; duplicate; reorder (held until
one later frame of its direction has passed, after: 1); corrupt (one bit
of the payload's first byte, of the AETH syndrome for ACK/NAK, of the PSN
for a READ request; not repaired, so the receiver's ICRC check drops it);
delay (3 us, less than the ACK timeout); delay_long (30 us, more: the
requester has resent before the late copy arrives).

Traffic of a cell: three WQEs in one doorbell, `lead` (one packet),
`target` (three packets, FIRST/MIDDLE/LAST, or one, ONLY) and `trail` (one
packet), wr_ids 1, 2, 3. Position means:
  - data (WRITE, SEND, READ response): the packet of the target message:
    first, middle, last of three, or its only packet; opcodes write,
    write_imm; send, send_imm, send_inv; read;
  - single-packet answers and requests (ACK, READ request): the message
    whose packet it is: first (lead), middle (target), last (trail); the
    ACK of write and of send messages;
  - NAK: there is one (a NAK has no position): the NAK-PSN a dropped
    WRITE_MIDDLE provokes, or the RNR NAK of a full RQ (16 SENDs into an RQ
    of 16 elements, which holds 15: PG332 "RQ full when the producer index
    is one behind the consumer index");
  - CM: the message of the connection's life: REQ, REP, RTU (connect),
    DREQ, DREP (disconnect).
Left out, impossible: a NAK, an ACK, a READ request or a CM message as the
first/middle/last packet of a multi-packet message (each is a single
packet; the responder acknowledges a message once, on its AckReq packet).

Each rule matches one packet exactly: the BTH opcode and PSN of the packet
(PSNs follow from the start PSN, one a packet, a READ taking ceil(len /
PMTU): spec section 9, "PSN rules"), or for CM the n-th UD SEND_ONLY to QP1
in its direction. The checker (check_matrix.py) requires each rule's fault
record to name exactly that frame of the sender's tx capture, with the
intended opcode, PSN and, parsed from the frame, the AETH syndrome (ACK
type 00, NAK-PSN 0x60, RNR NAK 0x20|timer) or the MAD attribute (REQ 0x10,
REP 0x13, RTU 0x14, DREQ 0x15, DREP 0x16), and the action on the
receiver's capture.

What every cell's scenario asserts: completions in order, error-free
(wait_completions' expect; the checker also compares the CQE words);
every SEND and immediate delivered once, in order (recv's expect, then,
after 60 us in which held and delayed frames arrive, a sentinel WRITE_IMM
that must be the very next RQ event; STATRQPIDBi = SENDs accepted);
destination bytes equal the source and every other byte of the MRs
unchanged (check_memory against the fill patterns); no QP fatal;
`compliance: fail`; the wire monitor's violations fail the run by
themselves.
"""
from matrix_lib import CM_ATTR, OP, SYN_NAK_PSN, Hex, cqe_word, scenario, step, syn_rnr

KINDS = ["drop", "duplicate", "reorder", "corrupt", "delay", "delay_long"]
TARGETS = ["WRITE data", "SEND data", "ACK", "NAK", "READ request", "READ response", "CM message"]
SLUG = {"WRITE data": "write", "SEND data": "send", "ACK": "ack", "READ request": "rdreq", "READ response": "rdresp"}

PMTU = 1024
PSN_A, PSN_B = 0x100, 0x800
MR_LEN = 16384
LEAD = (1024, 256)
TARGET_MULTI, TARGET_ONLY = (4096, 3072), (4096, 1024)
TRAIL = (9216, 256)
SENTINEL = (14336, 64)
SENTINEL_IMM = 0x5E5E5E5E
ACK_TIMEOUT = 2            # TIMEOUTCONFi[5:0] on A
RNR_TIMER = 3              # TIMEOUTCONFi[20:16] on B: code 3, 0.03 ms (IBTA table)
DELAY_NS = {"delay": 3000, "delay_long": 30000}  # ACK timeout: 2^2 ticks of 2^10 core cycles, 20.48 us
SETTLE_US = 60             # after the completions: longer than any delay or hold of a cell
FILL_SRC, FILL_BSRC = 3, 5  # random seeds: A's source, B's READ source
CONST_BDST, CONST_RDST = 0xA5, 0x5A

# Packet opcodes of a message: ONLY, or FIRST / MIDDLE* / LAST (IBTA 9.2).
OPCODES = {
    "write": ("WRITE_ONLY", "WRITE_FIRST", "WRITE_MIDDLE", "WRITE_LAST"),
    "write_imm": ("WRITE_ONLY_IMM", "WRITE_FIRST", "WRITE_MIDDLE", "WRITE_LAST_IMM"),
    "send": ("SEND_ONLY", "SEND_FIRST", "SEND_MIDDLE", "SEND_LAST"),
    "send_imm": ("SEND_ONLY_IMM", "SEND_FIRST", "SEND_MIDDLE", "SEND_LAST_IMM"),
    "send_inv": ("SEND_ONLY_INV", "SEND_FIRST", "SEND_MIDDLE", "SEND_LAST_INV"),
    "read": ("READ_RESP_ONLY", "READ_RESP_FIRST", "READ_RESP_MIDDLE", "READ_RESP_LAST"),
}
SENDS = ("send", "send_imm", "send_inv")
IMMS = ("write_imm", "send_imm", "send_inv")


def packet_opcodes(op, n):
    only, first, middle, last = OPCODES[op]
    return [OP[only]] if n == 1 else [OP[first]] + [OP[middle]] * (n - 2) + [OP[last]]


class Msg:
    """One WQE and what it puts on the wire: its PSNs and packet opcodes
    (for a READ, the responses; the request is one packet at psns[0])."""

    def __init__(self, wr_id, op, region, psn, immdt=None):
        self.wr_id, self.op, self.immdt = wr_id, op, immdt
        self.off, self.length = region
        self.npkts = -(-self.length // PMTU)
        self.psns = [psn + k for k in range(self.npkts)]
        self.opcodes = packet_opcodes(op, self.npkts)

    def wqe(self):
        w = {"opcode": self.op, "wr_id": self.wr_id, "local_mr": "rdst" if self.op == "read" else "src",
             "local_offset": self.off, "length": self.length}
        if self.op not in SENDS:
            w["remote_offset"] = self.off
        if self.immdt is not None:
            w["immdt"] = Hex(self.immdt)
        return w


def three(op, only=False, ops=None):
    """lead, target, trail of one opcode (or ops = three opcodes)."""
    ops = ops or (op, op, op)
    regions = (LEAD, TARGET_ONLY if only else TARGET_MULTI, TRAIL)
    msgs, psn = [], PSN_A
    for k in range(3):
        imm = 0x1001 + k if ops[k] in IMMS else None
        m = Msg(k + 1, ops[k], regions[k], psn, imm)
        msgs.append(m)
        psn += m.npkts
    return msgs


def action(kind, corrupt_field):
    a = {"action": "delay" if kind in DELAY_NS else kind, "count": 1}
    if kind == "reorder":
        a["after"] = 1
    elif kind in DELAY_NS:
        a["delay_ns"] = DELAY_NS[kind]
    elif kind == "corrupt":
        a.update({"field": corrupt_field, "bit": 0})  # not repaired: the receiver's ICRC check drops it
    return a


def rule(name, direction, match, kind, corrupt_field, expect):
    """A fault step and what its record must show (expect: opcode, psn,
    and syndrome / syndrome_type / mad_attr where they apply)."""
    act = action(kind, corrupt_field)
    body = {"name": name, "dir": direction, "match": match, **act}
    return step("fault", body), dict(rule=name, dir=direction, count=1, action=act["action"],
                                     delay_ns=act.get("delay_ns"), **expect)


def ranges_complement(written, length):
    out, at = [], 0
    for off, n in sorted(written):
        if off > at:
            out.append((at, off - at))
        at = max(at, off + n)
    if at < length:
        out.append((at, length - at))
    return out


def build(name, comment, msgs, rules, cm_rules=(), rnr=False, disconnect=False):
    """The scenario of one cell. rules: fault steps installed after connect
    (the CM handshake's frames are not theirs to count); cm_rules before."""
    reads = any(m.op == "read" for m in msgs)
    s = [step("init", ["A", "B"]),
         step("register_mr", {"node": "A", "name": "src", "length": MR_LEN}),
         step("register_mr", {"node": "A", "name": "rdst", "length": MR_LEN}),
         step("register_mr", {"node": "B", "name": "bmr", "length": MR_LEN}),
         step("fill", {"node": "A", "mr": "src", "pattern": "random", "seed": FILL_SRC}),
         step("fill", {"node": "A", "mr": "rdst", "pattern": "constant", "value": Hex(CONST_RDST)})]
    b_fill = {"pattern": "random", "seed": FILL_BSRC} if reads else {"pattern": "constant", "value": Hex(CONST_BDST)}
    s.append(step("fill", {"node": "B", "mr": "bmr", **b_fill}))
    s += list(cm_rules)
    conn = {"name": "c1", "client": "A", "server": "B", "client_mr": "src", "server_mr": "bmr", "pmtu": PMTU,
            "rq_depth": 16, "client_psn": Hex(PSN_A), "server_psn": Hex(PSN_B), "client_qp": 2, "server_qp": 2}
    s.append(step("connect", conn))
    s.append(step("reg_write", {"node": "A", "reg": "TIMEOUTCONFi", "qp": 2, "field": "ACK_TIMEOUT",
                                "value": ACK_TIMEOUT}))
    if rnr:
        s.append(step("reg_write", {"node": "B", "reg": "TIMEOUTCONFi", "qp": 2, "field": "RNR_TIMER",
                                    "value": RNR_TIMER}))
    s += list(rules)
    s.append(step("post", {"conn": "c1", "node": "A", "wqes": [m.wqe() for m in msgs]}))
    events = [m for m in msgs if m.op in SENDS or m.op in IMMS]

    def recv_entry(m):
        e = {"opcode": m.op}
        if m.immdt is not None:
            e["immdt"] = Hex(m.immdt)
        if m.op in SENDS:
            e.update({"length": m.length, "equals": {"node": "A", "mr": "src", "offset": m.off}})
        return e

    if rnr:  # B's software drains the RQ once the RNR NAK has left B (its tx tap: 15 ACKs + the RNR NAK)
        s.append(step("wait_until", {"timeout_us": 100, "frames": {"dir": "B->A", "count": len(msgs),
                                                                   "opcode": Hex(OP["ACK"])}}))
        s.append(step("recv", {"conn": "c1", "node": "B", "count": len(msgs) - 1,
                               "expect": [recv_entry(m) for m in events[:-1]]}))
        events = events[-1:]
    exp = [{"wr_id": m.wr_id, "opcode": m.op, "error": False} for m in msgs]
    s.append(step("wait_completions", {"conn": "c1", "node": "A", "count": len(msgs), "timeout_us": 2000,
                                       "expect": exp}))
    if events:
        s.append(step("recv", {"conn": "c1", "node": "B", "count": len(events),
                               "expect": [recv_entry(m) for m in events]}))
    nsends = sum(m.op in SENDS for m in msgs)
    s.append(step("reg_expect", {"node": "B", "reg": "STATRQPIDBi", "qp": 2, "value": nsends % 16}))
    for node in ("A", "B"):
        s.append(step("reg_expect", {"node": node, "reg": "STATQPi", "qp": 2, "field": "FATAL", "value": 0}))
    # Frames still held or delayed on the wire arrive now (stale copies the
    # responder must not execute, stale answers the requester must ignore).
    s.append(step("wait", {"us": SETTLE_US}))
    # The sentinel: the next RQ event must be its immediate (no copy of an
    # earlier message came in between).
    sent = Msg(9, "write_imm", SENTINEL, 0, SENTINEL_IMM)
    s.append(step("post", {"conn": "c1", "node": "A", "wqes": [sent.wqe()]}))
    s.append(step("wait_completions", {"conn": "c1", "node": "A", "count": 1,
                                       "expect": [{"wr_id": 9, "opcode": "write_imm", "error": False}]}))
    s.append(step("recv", {"conn": "c1", "node": "B", "count": 1,
                           "expect": [{"opcode": "write_imm", "immdt": Hex(SENTINEL_IMM)}]}))
    # Memory: each destination range equals its source; everything else as filled.
    dest = {("B", "bmr"): [(SENTINEL[0], SENTINEL[1], ("A", "src"))], ("A", "rdst"): []}
    for m in msgs:
        if m.op == "read":
            dest[("A", "rdst")].append((m.off, m.length, ("B", "bmr")))
        elif m.op not in SENDS:
            dest[("B", "bmr")].append((m.off, m.length, ("A", "src")))
    fills = {("B", "bmr"): b_fill, ("A", "rdst"): {"pattern": "constant", "value": Hex(CONST_RDST)}}
    for (node, mr), ranges in dest.items():
        for off, n, (snode, smr) in ranges:
            s.append(step("check_memory", {"node": node, "mr": mr, "offset": off, "length": n,
                                           "equals": {"node": snode, "mr": smr, "offset": off}}))
        for off, n in ranges_complement([(o, n) for o, n, _ in ranges], MR_LEN):
            s.append(step("check_memory", {"node": node, "mr": mr, "offset": off, "length": n,
                                           "pattern": fills[(node, mr)]}))
    s.append(step("check_memory", {"node": "A", "mr": "src", "pattern": {"pattern": "random", "seed": FILL_SRC}}))
    if disconnect:
        s.append(step("disconnect", {"conn": "c1", "node": "A"}))
    return scenario(name, comment[0], comment, s)


def cell(kind, target, position, op, name, comment, msgs, rules, **kw):
    steps_rules = [r[0] for r in rules if not kw.get("cm")]
    cm_rules = [r[0] for r in rules if kw.get("cm")]
    text = build(name, comment, msgs, steps_rules, cm_rules, rnr=kw.get("rnr", False),
                 disconnect=kw.get("cm", False))
    cqes = [cqe_word(m.wr_id, m.op, False) for m in msgs] + [cqe_word(9, "write_imm", False)]
    return {"matrix": "fault", "kind": kind, "target": target, "position": position, "op": op, "name": name,
            "text": text, "rules": [r[1] for r in rules], "cqes": cqes, "known_defect": KNOWN_DEFECTS.get(name),
            "layout": "3.1"}


def data_cells(kind, target, ops):
    out = []
    for op in ops:
        for pos in ("first", "middle", "last", "only"):
            msgs = three(op, only=pos == "only")
            m = msgs[1]
            k = {"first": 0, "middle": 1, "last": 2, "only": 0}[pos]
            if op == "read":  # the response to the target READ, B->A
                d, field = "B->A", "payload"
            else:
                d, field = "A->B", "payload"
            opc, psn = m.opcodes[k], m.psns[k]
            name = f"fm_{kind}_{SLUG[target]}_{pos}_{op}"
            comment = [f"fault matrix: {kind} of the {pos} packet of the target {op} ({target}), "
                       f"opcode {opc:#04x} PSN {psn:#x} on {d}; every WQE completes once, in order"]
            r = rule("hit", d, {"opcode": Hex(opc), "psn": Hex(psn)}, kind, field, {"opcode": opc, "psn": psn})
            out.append(cell(kind, target, pos, op, name, comment, msgs, [r]))
    return out


def single_cells(kind, target, ops):
    """ACK and READ request: the packet of the first, middle or last message."""
    out = []
    for op in ops:
        for pos, k in (("first", 0), ("middle", 1), ("last", 2)):
            msgs = three(op)
            m = msgs[k]
            if target == "ACK":  # one ACK a message, at its last PSN (AckReq there)
                d, opc, psn, field = "B->A", OP["ACK"], m.psns[-1], "aeth.syndrome"
                exp = {"opcode": opc, "psn": psn, "syndrome_type": 0}
            else:  # the READ request: one packet at the READ's first PSN
                d, opc, psn, field = "A->B", OP["READ_REQUEST"], m.psns[0], "bth.psn"
                exp = {"opcode": opc, "psn": psn}
            name = f"fm_{kind}_{SLUG[target]}_{pos}_{op}"
            comment = [f"fault matrix: {kind} of the {target} of the {pos} of three {op} messages "
                       f"(PSN {psn:#x} on {d}); every WQE completes once, in order"]
            r = rule("hit", d, {"opcode": Hex(opc), "psn": Hex(psn)}, kind, field, exp)
            out.append(cell(kind, target, pos, op, name, comment, msgs, [r]))
    return out


def nak_cells(kind):
    out = []
    # NAK-PSN: WRITE_MIDDLE 0x102 dropped; B NAKs 0x102 (the PSN it expects)
    # when 0x103 arrives, once (IBTA 9.9.4). No ACK carries 0x102 before it.
    msgs = three("write")
    mid = msgs[1].psns[1]
    provoke = rule("provoke", "A->B", {"opcode": Hex(OP["WRITE_MIDDLE"]), "psn": Hex(mid)}, "drop", None,
                   {"opcode": OP["WRITE_MIDDLE"], "psn": mid})
    r = rule("hit", "B->A", {"opcode": Hex(OP["ACK"]), "psn": Hex(mid)}, kind, "aeth.syndrome",
             {"opcode": OP["ACK"], "psn": mid, "syndrome": SYN_NAK_PSN})
    comment = [f"fault matrix: {kind} of the NAK-PSN (0x60, PSN {mid:#x}) that a lost WRITE_MIDDLE provokes; "
               "every WQE completes once, in order"]
    out.append(cell(kind, "NAK", "nak_psn", "write", f"fm_{kind}_nak_psn", comment, msgs, [provoke, r]))
    # RNR NAK: 16 SENDs of 64 B into an RQ of 16 elements (holds 15): the 16th
    # is RNR-NAKed at its PSN with B's timer code; B's software then drains.
    msgs, psn = [], PSN_A
    for k in range(16):
        msgs.append(Msg(k + 1, "send", (k * 64, 64), psn))
        psn += 1
    last = msgs[-1].psns[0]
    r = rule("hit", "B->A", {"opcode": Hex(OP["ACK"]), "psn": Hex(last)}, kind, "aeth.syndrome",
             {"opcode": OP["ACK"], "psn": last, "syndrome": syn_rnr(RNR_TIMER)})
    comment = [f"fault matrix: {kind} of the RNR NAK ({syn_rnr(RNR_TIMER):#04x}, PSN {last:#x}) of a full RQ; "
               "B drains its RQ, every SEND lands once, in order"]
    out.append(cell(kind, "NAK", "rnr_nak", "send", f"fm_{kind}_nak_rnr", comment, msgs, [r], rnr=True))
    return out


# CM messages: direction and rank among the UD SEND_ONLYs to QP1 of that
# direction (A->B: REQ, RTU, DREQ; B->A: REP, DREP).
CM_MSGS = [("REQ", "A->B", 1), ("REP", "B->A", 1), ("RTU", "A->B", 2), ("DREQ", "A->B", 3), ("DREP", "B->A", 2)]


def cm_cells(kind):
    out = []
    for msg, d, nth in CM_MSGS:
        msgs = three("write")
        r = rule("hit", d, {"opcode": Hex(OP["UD_SEND_ONLY"]), "dest_qp": 1, "nth": nth}, kind, "payload",
                 {"opcode": OP["UD_SEND_ONLY"], "psn": None, "mad_attr": CM_ATTR[msg]})
        comment = [f"fault matrix: {kind} of the CM {msg} (MAD attribute {CM_ATTR[msg]:#06x}) on {d}; "
                   "the connection comes up, carries three WRITEs and is torn down"]
        out.append(cell(kind, "CM message", msg, "cm", f"fm_{kind}_cm_{msg.lower()}", comment, msgs, [r], cm=True))
    return out


# Cells that fail because of a model defect, each failing the way recorded
# here ({"defect": what, "exit_code": N, "signature": a pattern of its
# output}); check_matrix.py fails a cell that fails otherwise, and a marked
# cell that passes (the mark is then stale). None today: the last ones, a
# lost RTU (the passive side never resent its REP, so connect hung), were
# fixed in model/host/driver_cm.cpp (Driver::await_rtu, IBTA vol. 1 12.9).
KNOWN_DEFECTS = {}


# Both retransmission schemes: PG332 3.1 resends the whole WQE after a NAK
# or timeout, 4.x from the NAKed PSN (spec section 6); every cell runs in
# each register layout (`layout:`), the 4.x copy named <cell>_4x.
LAYOUTS = ["3.1", "4.x"]


def in_layout(c, layout):
    if layout == "3.1":
        return c
    c = dict(c, name=c["name"] + "_4x", layout=layout)
    c["text"] = c["text"].replace(f"scenario: {c['name'][:-3]}\n", f"scenario: {c['name']}\n", 1).replace(
        "datapath: model\n", f'datapath: model\nlayout: "{layout}"\n', 1)
    return c


def cells():
    return [in_layout(c, layout) for layout in LAYOUTS for c in cells_31()]


def cells_31():
    out = []
    for kind in KINDS:
        out += data_cells(kind, "WRITE data", ["write", "write_imm"])
        out += data_cells(kind, "SEND data", ["send", "send_imm", "send_inv"])
        out += single_cells(kind, "ACK", ["write", "send"])
        out += nak_cells(kind)
        out += single_cells(kind, "READ request", ["read"])
        out += data_cells(kind, "READ response", ["read"])
        out += cm_cells(kind)
    return out
