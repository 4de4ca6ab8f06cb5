"""tb/matrix: the access-violation matrix (issue 20).

Rows: what is wrong with the request's R_Key or range; columns: WRITE,
WRITE_IMM, READ (RETH requests) and SEND_INV. One scenario a cell. B (the
responder) has four MRs, each 4 KiB filled with 0xC3, their key bytes set
to known values (BUFRKEY) so that every R_Key is written out here as
PG332 section 3 builds it, (MR-table index << 8) | key byte:

  index 0 `dst`   rw, PD 1, key 0x11   the connection's MR (B's QP is in PD 1)
  index 1 `other` rw, PD 2, key 0x22   1 MiB, registered right after dst
  index 2 `ro`    r,  PD 1, key 0x33
  index 3 `wo`    w,  PD 1, key 0x44

PG332 section 3 (Fig. 2-9) checks an incoming RETH in order: index ->
entry, PDPDNUM == PDi, R_Key[7:0] == BUFRKEY, [VA, VA+len) inside the MR,
ACCESSDESC allows the operation; a failure makes the QP fatal with 0x15
(R_Key or access) or 0x16 (RETH DMA length), 0x17 for both (section 6),
and a NAK is sent: IBTA's NAK remote access error, AETH syndrome 0x62
(section 9). The requester takes that NAK as fatal code 0x0A ("NAK invalid /
remote access / remote operational received") and its CQE carries ERRFLAG
(section 4). The expected B codes:

  unknown_rkey  R_Key 0x12345: index 0x123 beyond the 256-entry table   0x15
  unused_entry  R_Key 0xC811: entry 200, never written (PDPDNUM 0 is not
                PD 1, length 0: the range is outside too)               0x17
  other_pd      R_Key 0x122: `other`, an MR of PD 2, at VA = dst + 64 KiB,
                inside `other` (the driver allocates MRs upward, each
                after the one before, scenarios/README.md 5.3), so that
                only the PD check fails                                 0x15
  key_byte      R_Key 0x0EE: `dst` with key byte 0xEE (not 0x11)        0x15
  bounds        `dst`, VA = start + 3072, 2048 bytes: 1 KiB past its end 0x16
  va_wrap       `dst`, VA = start - 1024 (offset 2^64 - 1024), 2048 bytes:
                VA - start + len wraps past 2^64 to 1024, inside a naive
                offset check; the range is not inside the MR            0x16
  no_right      WRITE / WRITE_IMM into `ro`, READ from `wo`             0x15

Every such cell checks: one NAK 0x62 at the request's PSN and nothing else
from B after the ConnectReply (no ACK, no READ response), A's CQE with
error, A's STATQPi NAK syndrome 0x62, both QPs fatal, B's error-status
queue entry (`recover`'s code), the fatal events of the run's JSON (B: the
code above, A: 0x0A), and every byte of B's four MRs still 0xC3, A's READ
destination still 0x5A and A's source unchanged.

SEND_INV carries no RETH: its IETH names an R_Key to invalidate. PG332
(sections 4 and 6: "no local invalidate"; IETH R_Keys "go out on the
ieth_immdt AXIS port") leaves the invalidation to software, and IBTA's
remote access NAK is the RETH checks' answer, so the ERNIC accepts it: an
ACK (type 00), an error-free CQE, the payload in the RQ and the R_Key on
ieth_immdt (recv), the MRs unchanged. Rows bounds and va_wrap have no
SEND_INV cell: a SEND has no VA or length to check against an MR.
"""
from matrix_lib import (FATAL_NAK_RECEIVED, FATAL_RETH_LEN, FATAL_RKEY_ACCESS, FATAL_RKEY_AND_LEN, OP,
                        SYN_NAK_REMOTE_ACCESS, Hex, cqe_word, scenario, step)

ROWS = ["unknown_rkey", "unused_entry", "other_pd", "key_byte", "bounds", "va_wrap", "no_right"]
COLS = ["write", "write_imm", "read", "send_inv"]

PSN_A, PSN_B = 0x100, 0x800
MR_LEN = 4096
CANARY, RDST_FILL, SRC_SEED = 0xC3, 0x5A, 3
OTHER_LEN, OTHER_OFF = 1 << 20, 1 << 16
B_MRS = [("dst", "rw", 1, 0x11, MR_LEN), ("other", "rw", 2, 0x22, OTHER_LEN), ("ro", "r", 1, 0x33, MR_LEN),
         ("wo", "w", 1, 0x44, MR_LEN)]
IDX = {m[0]: k for k, m in enumerate(B_MRS)}
KEY = {m[0]: m[3] for m in B_MRS}


def rkey(mr):
    return (IDX[mr] << 8) | KEY[mr]


# row -> (server MR, R_Key, remote_offset, B's fatal code); no_right is per column.
CASES = {
    "unknown_rkey": ("dst", 0x12345, 0, FATAL_RKEY_ACCESS),
    "unused_entry": ("dst", (200 << 8) | 0x11, 0, FATAL_RKEY_AND_LEN),
    "other_pd": ("dst", rkey("other"), OTHER_OFF, FATAL_RKEY_ACCESS),
    "key_byte": ("dst", (IDX["dst"] << 8) | 0xEE, 0, FATAL_RKEY_ACCESS),
    "bounds": ("dst", rkey("dst"), MR_LEN - 1024, FATAL_RETH_LEN),
    "va_wrap": ("dst", rkey("dst"), (1 << 64) - 1024, FATAL_RETH_LEN),
}
LEN = {"write": 2048, "write_imm": 2048, "read": 2048, "send_inv": 256}


def case(row, col):
    if row == "no_right":
        mr = "wo" if col == "read" else "ro"
        return mr, rkey(mr), 0, FATAL_RKEY_ACCESS
    return CASES[row]


def build(row, col):
    mr, key, roff, code = case(row, col)
    reth = col != "send_inv"
    name = f"av_{row}_{col}"
    s = [step("init", ["A", "B"]),
         step("register_mr", {"node": "A", "name": "src", "length": MR_LEN}),
         step("register_mr", {"node": "A", "name": "rdst", "length": MR_LEN}),
         step("fill", {"node": "A", "mr": "src", "pattern": "random", "seed": SRC_SEED}),
         step("fill", {"node": "A", "mr": "rdst", "pattern": "constant", "value": Hex(RDST_FILL)})]
    for n, acc, pd, k, length in B_MRS:
        s.append(step("register_mr", {"node": "B", "name": n, "length": length, "access": acc, "pd": pd}))
        s.append(step("reg_write", {"node": "B", "reg": "BUFRKEY", "mr": IDX[n], "value": Hex(k)}))
        s.append(step("fill", {"node": "B", "mr": n, "pattern": "constant", "value": Hex(CANARY)}))
    s.append(step("connect", {"name": "c1", "client": "A", "server": "B", "client_mr": "src", "server_mr": mr,
                              "pmtu": 1024, "client_psn": Hex(PSN_A), "server_psn": Hex(PSN_B),
                              "client_qp": 2, "server_qp": 2}))
    w = {"opcode": col, "wr_id": 1, "local_mr": "rdst" if col == "read" else "src", "length": LEN[col]}
    if reth:
        w.update({"remote_offset": Hex(roff), "rkey": Hex(key)})
    if col == "write_imm":
        w["immdt"] = Hex(0x1234)
    if col == "send_inv":
        w["immdt"] = Hex(key)  # the R_Key to invalidate (IETH)
    s.append(step("post", {"conn": "c1", "node": "A", "wqes": [w]}))
    s.append(step("wait_completions", {"conn": "c1", "node": "A", "count": 1, "timeout_us": 200,
                                       "expect": [{"wr_id": 1, "opcode": col, "error": reth}]}))
    s.append(step("wait", {"us": 5}))
    ack = {"opcode": Hex(OP["ACK"]), "psn": Hex(PSN_A)}
    if reth:
        ack["syndrome"] = Hex(SYN_NAK_REMOTE_ACCESS)
        s.append(step("reg_expect", {"node": "A", "reg": "STATQPi", "qp": 2, "field": "NAK_SYNDROME",
                                     "value": Hex(SYN_NAK_REMOTE_ACCESS)}))
        for node in ("A", "B"):
            s.append(step("reg_expect", {"node": node, "reg": "STATQPi", "qp": 2, "field": "FATAL", "value": 1}))
    else:
        s.append(step("recv", {"conn": "c1", "node": "B", "count": 1,
                               "expect": [{"opcode": "send_inv", "immdt": Hex(key), "length": LEN[col],
                                           "equals": {"node": "A", "mr": "src"}}]}))
        for node in ("A", "B"):
            s.append(step("reg_expect", {"node": node, "reg": "STATQPi", "qp": 2, "field": "FATAL", "value": 0}))
    # B's answers after its ConnectReply: the one NAK (or ACK), nothing else.
    s.append(step("expect_frames", {"dir": "B->A", "frames": [
        {"opcode": Hex(OP["UD_SEND_ONLY"]), "dest_qp": 1}, ack]}))
    if reth:
        s.append(step("recover", {"conn": "c1", "code": Hex(code)}))
        s.append(step("expect_frames", {"dir": "B->A", "frames": []}))
    for n, *_ in B_MRS:
        s.append(step("check_memory", {"node": "B", "mr": n, "pattern": {"pattern": "constant",
                                                                          "value": Hex(CANARY)}}))
    s.append(step("check_memory", {"node": "A", "mr": "rdst", "pattern": {"pattern": "constant",
                                                                          "value": Hex(RDST_FILL)}}))
    s.append(step("check_memory", {"node": "A", "mr": "src", "pattern": {"pattern": "random", "seed": SRC_SEED}}))
    what = (f"R_Key {key:#x}, offset {roff:#x}" if reth else f"IETH R_Key {key:#x}")
    if reth:
        outcome = f"NAK 0x62, B fatal {code:#04x}, A fatal 0x0a, error CQE, 0 bytes changed"
    else:
        outcome = "accepted (invalidation is software's, PG332), R_Key on ieth_immdt, 0 MR bytes changed"
    comment = [f"access-violation matrix: {row} x {col}: {what} -> {outcome}"]
    text = scenario(name, comment[0], comment, s, sim_time_us=2000)
    answers = [{"opcode": OP["ACK"], "psn": PSN_A,
                "syndrome": SYN_NAK_REMOTE_ACCESS if reth else None, "syndrome_type": None if reth else 0}]
    fatal = {"B": code, "A": FATAL_NAK_RECEIVED} if reth else {}
    return {"matrix": "access", "kind": row, "target": col, "position": "", "op": col, "name": name,
            "text": text, "rules": [], "answers": answers, "fatal": fatal, "cqes": [cqe_word(1, col, reth)]}


def cells():
    out = []
    for row in ROWS:
        for col in COLS:
            if col == "send_inv" and row in ("bounds", "va_wrap"):
                continue  # no VA or length in a SEND (see above)
            out.append(build(row, col))
    return out
