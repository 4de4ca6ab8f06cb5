"""tb/fuzz: the seed corpus of fuzz_rx (the ERNIC RX path), used by seeds.py.

An input is up to 8 records, each 8 control bytes and a frame (fuzz_rx.cpp):
[fix-ups, QP, PSN delta, MR, VA offset / 64, gap / 8 cycles, length LE]. The
node (rx_node.cpp): QP2 IPv4 PMTU 256 PD 1 with WRITE 600 B (PSN +0..+2),
READ 700 B (+3..+5), SEND 100 B (+6), WRITE_IMM 256 B (+7), READ 64 B (+8)
outstanding; QP3 IPv4 PMTU 1024 PD 2 (the captures' PMTU); QP4 disabled;
QP5 IPv6 PMTU 4096 PD 1 with WRITE 5000 B (+0, +1), READ 4196 B (+2, +3),
SEND_INV (+4) outstanding; QP1 the GSI QP. MRs: 0 PD1 RW, 1 PD1 read, 2 PD1
write, 3 PD2 RW, 4 PD1 RW at the top of the VA space, 5 PD1 zero length,
6 deregistered, 7 PD3, 8 PD1 RW 64 KiB. PSN deltas count from the QP's
expected request PSN (requests) or expected response PSN (answers).

Seeds: frames of the real captures (tb/data/captures) as they are, and
re-addressed to QP3 (PMTU 1024 like theirs) with their message sequences;
and frames built here for each path: ACKs, NAKs, RNR NAKs, READ responses
for the outstanding READs, CNPs, SEND / WRITE / READ requests (in and out of
sequence, every MR), immediate and invalidate forms, a CM MAD to QP1, IPv6
on QP5, and a few broken on purpose. Deterministic.
"""
import struct

FIX_ALL = 1 | 2 | 4 | 8 | 16  # lengths, checksum, ICRC, re-address, PSN
RETH = 32

# IBTA opcodes (RC unless noted)
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
SEND_LAST_IMM, SEND_ONLY_IMM, SEND_ONLY_INV = 0x03, 0x05, 0x17
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY, WRITE_ONLY_IMM = 0x06, 0x07, 0x08, 0x0A, 0x0B
READ_REQ, RRESP_FIRST, RRESP_MIDDLE, RRESP_LAST, RRESP_ONLY = 0x0C, 0x0D, 0x0E, 0x0F, 0x10
ACK, CMP_SWAP, UD_SEND_ONLY, CNP = 0x11, 0x13, 0x64, 0x81

MR_VA = {0: 0x0000100000000000, 1: 0x2000, 2: 0x0000300000000000, 3: 0x4000, 4: 0xFFFFFFFFFFFFF800,
         5: 0x5000, 6: 0x6000, 7: 0x7000, 8: 0x80000000}


def record(frame, fix=FIX_ALL, qp=2, psn=0, mr=0, va=0, gap=0):
    return bytes([fix & 0xFF, qp & 0xFF, psn & 0xFF, mr & 0xFF, va & 0xFF, gap & 0xFF]) + \
        struct.pack('<H', len(frame)) + frame


def frame(op, payload=b'', ext=b'', v6=False, ack_req=True, tver=0, qp=2):
    """Ethernet + IP + UDP + BTH + ext + payload + pad + ICRC placeholder;
    addresses, lengths, checksum, PSN and ICRC left to the harness's fix-ups."""
    pad = (4 - len(payload) % 4) % 4
    bth = bytes([op, (pad << 4) | tver]) + b'\xff\xff' + b'\x00' + qp.to_bytes(3, 'big') + \
        bytes([0x80 if ack_req else 0]) + b'\x00\x00\x00'
    l4 = b'\xd0\x0d' + (4791).to_bytes(2, 'big') + b'\x00\x00\x00\x00' + bth + ext + payload + bytes(pad) + bytes(4)
    if v6:
        ip = b'\x60\x00\x00\x00' + len(l4).to_bytes(2, 'big') + b'\x11\x40' + bytes(32)
        eth = bytes(12) + b'\x86\xdd'
    else:
        ip = b'\x45\x00' + (20 + len(l4)).to_bytes(2, 'big') + b'\x00\x01\x40\x00\x40\x11\x00\x00' + bytes(8)
        eth = bytes(12) + b'\x08\x00'
    return eth + ip + l4


def reth(mr, length, off=0):
    return struct.pack('>QII', (MR_VA[mr] + off) & (2**64 - 1), mr << 8, length)


def aeth(syndrome, msn=0):
    return bytes([syndrome]) + msn.to_bytes(3, 'big')


def pay(n, seed=0x41):
    return bytes((seed + 3 * i) & 0xFF for i in range(n))


def ipv4_to_v6(f):
    """A capture's IPv4 RoCEv2 frame as IPv6 (addresses left to the fix-ups)."""
    ihl = (f[14] & 15) * 4
    l4 = f[14 + ihl:]
    return f[:12] + b'\x86\xdd' + b'\x60\x00\x00\x00' + len(l4).to_bytes(2, 'big') + b'\x11\x40' + bytes(32) + l4


def synthetic(mad):
    s = []
    # Requester side of QP2: answers to its outstanding requests.
    s.append(('qp2_ack_write', record(frame(ACK, ext=aeth(0x1F, 1)), psn=2)))
    s.append(('qp2_ack_past_read', record(frame(ACK, ext=aeth(0x1F, 1)), psn=6)))
    s.append(('qp2_ack_all', record(frame(ACK, ext=aeth(0x1F, 5)), psn=8)))
    s.append(('qp2_ack_ghost', record(frame(ACK, ext=aeth(0x1F, 9)), psn=40)))
    s.append(('qp2_read_responses', record(frame(ACK, ext=aeth(0x1F, 1)), psn=2) +
              record(frame(RRESP_FIRST, pay(256), aeth(0x1F, 2)), psn=3) +
              record(frame(RRESP_MIDDLE, pay(256, 7)), psn=4) +
              record(frame(RRESP_LAST, pay(188, 9), aeth(0x1F, 2)), psn=5) +
              record(frame(ACK, ext=aeth(0x1F, 4)), psn=7) +
              record(frame(RRESP_ONLY, pay(64, 3), aeth(0x1F, 5)), psn=8)))
    s.append(('qp2_read_resp_out_of_order', record(frame(RRESP_MIDDLE, pay(256)), psn=4)))
    s.append(('qp2_read_resp_short', record(frame(RRESP_FIRST, pay(100), aeth(0x1F)), psn=3)))
    s.append(('qp2_nak_psn', record(frame(ACK, ext=aeth(0x60, 0)), psn=1)))
    s.append(('qp2_nak_psn_then_ack', record(frame(ACK, ext=aeth(0x60, 0)), psn=1, gap=40) +
              record(frame(ACK, ext=aeth(0x1F, 1)), psn=2)))
    s.append(('qp2_rnr_nak', record(frame(ACK, ext=aeth(0x21, 0)), psn=0)))
    s.append(('qp2_nak_invalid', record(frame(ACK, ext=aeth(0x61, 0)), psn=0)))
    s.append(('qp2_nak_remote_access', record(frame(ACK, ext=aeth(0x62, 0)), psn=3)))
    s.append(('qp2_aeth_reserved', record(frame(ACK, ext=aeth(0x40, 0)), psn=0)))
    s.append(('qp2_atomic_ack', record(frame(0x12, ext=aeth(0x1F) + bytes(8)), psn=0)))
    s.append(('qp2_cnp', record(frame(CNP, bytes(16), ack_req=False), fix=FIX_ALL & ~16)))
    # Responder side: requests to QP2 (PMTU 256, PD 1) and QP3 (PMTU 1024, PD 2).
    s.append(('qp2_send_only', record(frame(SEND_ONLY, pay(100)))))
    s.append(('qp2_send_3', record(frame(SEND_FIRST, pay(256), ack_req=False)) +
              record(frame(SEND_MIDDLE, pay(256, 1), ack_req=False), psn=1) +
              record(frame(SEND_LAST, pay(10, 2)), psn=2)))
    s.append(('qp2_send_rq_full', b''.join(record(frame(SEND_ONLY, pay(8, i)), psn=i) for i in range(5))))
    s.append(('qp2_send_imm_inv', record(frame(SEND_ONLY_IMM, pay(20), b'\x12\x34\x56\x78')) +
              record(frame(SEND_ONLY_INV, pay(4), b'\x00\x00\x01\x11'), psn=1) +
              record(frame(SEND_LAST_IMM, pay(4), b'\x00\x00\x00\x01'), psn=2)))
    s.append(('qp2_send_no_ackreq', record(frame(SEND_ONLY, pay(32), ack_req=False))))
    s.append(('qp2_send_dup_and_gap', record(frame(SEND_ONLY, pay(8))) + record(frame(SEND_ONLY, pay(8)), psn=-1) +
              record(frame(SEND_ONLY, pay(8)), psn=5) + record(frame(SEND_ONLY, pay(8)), psn=1)))
    s.append(('qp2_send_too_long', record(frame(SEND_ONLY, pay(300)))))
    for mr in range(9):
        s.append((f'qp2_write_only_mr{mr}', record(frame(WRITE_ONLY, pay(64), reth(mr, 64)), fix=FIX_ALL | RETH, mr=mr)))
        s.append((f'qp2_read_mr{mr}', record(frame(READ_REQ, ext=reth(mr, 700)), fix=FIX_ALL | RETH, mr=mr)))
    s.append(('qp2_write_3', record(frame(WRITE_FIRST, pay(256), reth(0, 600)), fix=FIX_ALL | RETH, mr=0) +
              record(frame(WRITE_MIDDLE, pay(256, 5)), psn=1) + record(frame(WRITE_LAST, pay(88, 6)), psn=2)))
    s.append(('qp2_write_imm', record(frame(WRITE_ONLY_IMM, pay(16), reth(8, 16) + b'\xca\xfe\xba\xbe'),
                                      fix=FIX_ALL | RETH, mr=8)))
    s.append(('qp2_write_top_of_va', record(frame(WRITE_ONLY, pay(64), reth(4, 64, 0x7C0)), fix=FIX_ALL | RETH,
                                            mr=4, va=0x1F)))
    s.append(('qp2_write_wrong_key', record(frame(WRITE_ONLY, pay(64), reth(0, 64)), fix=FIX_ALL | RETH, mr=0x10)))
    s.append(('qp2_write_zero', record(frame(WRITE_ONLY, b'', reth(5, 0)), fix=FIX_ALL | RETH, mr=5)))
    s.append(('qp2_read_dup', record(frame(READ_REQ, ext=reth(1, 512)), fix=FIX_ALL | RETH, mr=1) +
              record(frame(READ_REQ, ext=reth(1, 512)), fix=FIX_ALL | RETH, mr=1)))
    s.append(('qp2_atomic', record(frame(CMP_SWAP, ext=bytes(28)))))
    s.append(('qp2_bad_sequence', record(frame(SEND_MIDDLE, pay(256)))))
    s.append(('qp2_ecn_ce', record(frame(SEND_ONLY, pay(16)), fix=FIX_ALL | 128)))
    s.append(('qp3_send_wrap', record(frame(SEND_FIRST, pay(1024), ack_req=False), qp=3) +
              record(frame(SEND_MIDDLE, pay(1024, 1), ack_req=False), qp=3, psn=1) +
              record(frame(SEND_LAST, pay(17, 2)), qp=3, psn=2)))
    s.append(('qp3_write_mr3', record(frame(WRITE_ONLY, pay(1000), reth(3, 1000)), fix=FIX_ALL | RETH, qp=3, mr=3)))
    s.append(('qp3_write_mr0_other_pd', record(frame(WRITE_ONLY, pay(8), reth(0, 8)), fix=FIX_ALL | RETH, qp=3, mr=0)))
    # QP5: IPv6, PMTU 4096.
    s.append(('qp5_read_response', record(frame(ACK, ext=aeth(0x1F, 1), v6=True), qp=5, psn=1) +
              record(frame(RRESP_FIRST, pay(4096), aeth(0x1F, 2), v6=True), qp=5, psn=2) +
              record(frame(RRESP_LAST, pay(100, 4), aeth(0x1F, 2), v6=True), qp=5, psn=3)))
    s.append(('qp5_write_mr8', record(frame(WRITE_FIRST, pay(4096), reth(8, 4100), v6=True), fix=FIX_ALL | RETH,
                                      qp=5, mr=8) +
              record(frame(WRITE_LAST, pay(4, 1), v6=True), qp=5, psn=1)))
    s.append(('qp5_send_rq_depth2', record(frame(SEND_ONLY, pay(64), v6=True), qp=5) +
              record(frame(SEND_ONLY, pay(64), v6=True), qp=5, psn=1)))
    s.append(('qp5_ipv4_frame', record(frame(SEND_ONLY, pay(8)), qp=5)))
    # QP1: a CM MAD (UD SEND_ONLY, DETH Q_Key 0x80010000, source QP 1).
    if mad:
        s.append(('qp1_mad', record(frame(UD_SEND_ONLY, mad, struct.pack('>II', 0x80010000, 1), qp=1),
                                    fix=FIX_ALL & ~16, qp=1)))
    # Validation: no fix-ups at all, a bad ICRC, a bad FCS, TVer, QPs 4 and 7.
    s.append(('raw_unfixed', record(frame(SEND_ONLY, pay(8)), fix=0)))
    s.append(('bad_icrc', record(frame(SEND_ONLY, pay(8)), fix=FIX_ALL & ~4)))
    s.append(('bad_fcs', record(frame(SEND_ONLY, pay(8)), fix=FIX_ALL | 64)))
    s.append(('tver', record(frame(SEND_ONLY, pay(8), tver=1))))
    s.append(('qp4_disabled', record(frame(SEND_ONLY, pay(8)), qp=4)))
    s.append(('qp7_beyond', record(frame(SEND_ONLY, pay(8)), qp=7)))
    return s


def capture_seeds(frames_by_file, is_rocev2):
    """Each capture's first frames as they are (ERNIC's validation drops
    them: other addresses) and its RoCE frames re-addressed to QP3 in their
    order, PSN deltas from the first request's / first answer's PSN, RETH
    onto MR 3 (message length kept); also the same as IPv6 to QP5."""
    s = []
    for name, frames in frames_by_file:
        s.append((f'{name}_raw', b''.join(record(f, fix=0) for f in frames[:4])))
        roce = [f for f in frames if is_rocev2(f)][:8]
        recs, recs6, base = [], [], {}
        for f in roce:
            bth = 14 + (f[14] & 15) * 4 + 8
            op, psn = f[bth], int.from_bytes(f[bth + 9:bth + 12], 'big')
            kind = 'answer' if op in (0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12) else 'request'
            base.setdefault(kind, psn)
            delta = (psn - base[kind]) & 0xFFFFFF
            delta = delta if delta < 128 else 0
            recs.append(record(f, fix=FIX_ALL | RETH, qp=3, psn=delta, mr=3))
            recs6.append(record(ipv4_to_v6(f), fix=FIX_ALL | RETH, qp=5, psn=delta, mr=8))
        s.append((f'{name}_qp3', b''.join(recs)))
        s.append((f'{name}_qp5_ipv6', b''.join(recs6[:2])))
    return s


def rx_seeds(frames_by_file, is_rocev2, mad):
    return capture_seeds(frames_by_file, is_rocev2) + synthetic(mad)
