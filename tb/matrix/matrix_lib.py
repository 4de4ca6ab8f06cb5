"""tb/matrix: what the fault matrix and the access-violation matrix share.

The values here are typed from the specifications, not taken from the
simulator: BTH opcodes, AETH syndromes and CM attribute IDs from IBTA as
../shared/spec/ernic-pg332.md section 9 lists them, fatal codes from its
section 6 table. Also: a YAML flow-style writer for the generated
scenarios, a reader of the pcap files `ernic-sim run --pcap F` writes
(F.<node>-tx.pcap: each node's frames as transmitted, before any wire
fault) and a parser of the headers a cell's checks need, written by hand
from the same section (Ethernet 14, IPv4 20, UDP 8, BTH 12, AETH 4, DETH 8,
MAD header 24 bytes).
"""
import struct

# ---- IBTA BTH opcodes (spec section 9, "RC opcodes"; UD SEND_ONLY 0x64)
OP = {
    "SEND_FIRST": 0x00, "SEND_MIDDLE": 0x01, "SEND_LAST": 0x02, "SEND_LAST_IMM": 0x03,
    "SEND_ONLY": 0x04, "SEND_ONLY_IMM": 0x05,
    "WRITE_FIRST": 0x06, "WRITE_MIDDLE": 0x07, "WRITE_LAST": 0x08, "WRITE_LAST_IMM": 0x09,
    "WRITE_ONLY": 0x0A, "WRITE_ONLY_IMM": 0x0B,
    "READ_REQUEST": 0x0C, "READ_RESP_FIRST": 0x0D, "READ_RESP_MIDDLE": 0x0E,
    "READ_RESP_LAST": 0x0F, "READ_RESP_ONLY": 0x10, "ACK": 0x11,
    "SEND_LAST_INV": 0x16, "SEND_ONLY_INV": 0x17,
    "UD_SEND_ONLY": 0x64,
}
OP_NAME = {v: k for k, v in OP.items()}
# Opcodes that carry an AETH (spec section 9: READ_RESP_FIRST/LAST/ONLY, ACK).
AETH_OPS = {0x0D, 0x0F, 0x10, 0x11, 0x12}

# ---- AETH syndromes (spec section 9, "AETH syndrome")
SYN_NAK_PSN = 0x60        # NAK, PSN sequence error
SYN_NAK_INVALID = 0x61    # NAK, invalid request
SYN_NAK_REMOTE_ACCESS = 0x62
def syn_rnr(timer): return 0x20 | timer     # RNR NAK carrying the 5-bit timer code
def syn_type(s): return (s >> 5) & 3        # 0 ACK, 1 RNR NAK, 3 NAK

# ---- CM attribute IDs (spec section 9, "CM MADs")
CM_ATTR = {"REQ": 0x0010, "REJ": 0x0012, "REP": 0x0013, "RTU": 0x0014, "DREQ": 0x0015, "DREP": 0x0016}

# ---- PG332 fatal codes (spec section 6; section 3 for the RETH checks)
FATAL_RKEY_ACCESS = 0x15     # R_Key or access check (PD, key byte, rights)
FATAL_RETH_LEN = 0x16        # RETH DMA length: [VA, VA+len) outside the MR
FATAL_RKEY_AND_LEN = 0x17    # 0x15 and 0x16 together
FATAL_NAK_RECEIVED = 0x0A    # NAK invalid / remote access / remote operational received
# ---- PG332 section 4: the 4-byte CQE, [15:0] WRID, [23:16] the opcode coded
# as in the WQE, [31:24] ERRFLAG (1 when the QP entered the fatal state).
CQE_OPCODE = {"write": 0x00, "write_imm": 0x01, "send": 0x02, "send_imm": 0x03, "read": 0x04, "send_inv": 0x0C}


def cqe_word(wr_id, op, error):
    return (int(error) << 24) | (CQE_OPCODE[op] << 16) | wr_id


# ---- YAML flow style
def yval(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Hex):
        return f"{int(v):#x}"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict):
        return flow(v)
    if isinstance(v, (list, tuple)):
        return "[ " + ", ".join(yval(x) for x in v) + " ]" if v else "[]"
    s = str(v)
    return f'"{s}"' if any(c in s for c in ':{}[],#*&!|>"\'%@`') or s != s.strip() else s


class Hex(int):
    """An integer written in hexadecimal in the scenario (PSNs, keys, opcodes)."""


def flow(d):
    return "{ " + ", ".join(f"{k}: {yval(v)}" for k, v in d.items()) + " }"


def step(kind, body):
    """One step line: `- kind: { ... }` (or `- kind: value`)."""
    return f"  - {kind}: {yval(body)}"


NODES = ['  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1 }',
         '  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }']


def scenario(name, description, comment, steps, sim_time_us=3000):
    """A whole scenario file: the C++ datapath model (fast; the matrices test
    the protocol engine, not the RTL), compliance reports fail the run."""
    out = [f"# {line}" if line else "#" for line in comment]
    out += [f"scenario: {name}", f"description: {yval(description)}", "seed: 1", "datapath: model",
            "compliance: fail", f"limits: {{ sim_time_us: {sim_time_us} }}", "nodes:", *NODES, "steps:"]
    out += steps
    return "\n".join(out) + "\n"


# ---- pcap
def read_pcap(path):
    """The frames of a pcap file (classic format, us or ns timestamps):
    a list of (time in ns, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file")
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        raise ValueError(f"{path}: bad pcap magic {magic:#x}")
    frac = 1 if struct.unpack(end + "I", data[:4])[0] == 0xA1B23C4D else 1000  # ns or us
    frames, off = [], 24
    while off + 16 <= len(data):
        sec, sub, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        off += 16
        frames.append((sec * 1_000_000_000 + sub * frac, data[off:off + incl]))
        off += incl
    return frames


def parse(frame):
    """The fields of a RoCEv2/IPv4 frame a cell checks, parsed by hand:
    opcode, psn, dest_qp, syndrome (frames with an AETH), mad_attr (UD
    SEND_ONLY to QP1). None for anything else."""
    if len(frame) < 14 + 20 + 8 + 12 or frame[12:14] != b"\x08\x00":
        return None
    ihl = (frame[14] & 0x0F) * 4
    if frame[14 + 9] != 17:
        return None
    udp = 14 + ihl
    if struct.unpack(">H", frame[udp + 2:udp + 4])[0] != 4791:
        return None
    bth = udp + 8
    f = {"opcode": frame[bth], "dest_qp": int.from_bytes(frame[bth + 5:bth + 8], "big"),
         "psn": int.from_bytes(frame[bth + 9:bth + 12], "big"), "syndrome": None, "mad_attr": None}
    if f["opcode"] in AETH_OPS:
        f["syndrome"] = frame[bth + 12]
    if f["opcode"] == OP["UD_SEND_ONLY"]:
        mad = bth + 12 + 8  # after the DETH
        if len(frame) >= mad + 24:
            f["mad_attr"] = struct.unpack(">H", frame[mad + 16:mad + 18])[0]
    return f


def describe(f):
    if f is None:
        return "a non-RoCE frame"
    s = f"{OP_NAME.get(f['opcode'], hex(f['opcode']))} psn {f['psn']:#x}"
    if f["syndrome"] is not None:
        s += f" syndrome {f['syndrome']:#04x}"
    if f["mad_attr"] is not None:
        s += f" MAD attr {f['mad_attr']:#06x}"
    return s
