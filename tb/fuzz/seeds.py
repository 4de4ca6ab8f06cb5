#!/usr/bin/env python3
"""tb/fuzz: writes the seed corpus of every fuzz target (README "Sanitizers
and fuzzing").

  seeds.py --root REPO --out DIR     DIR/<target>/<name> for each target

Sources: every frame of tb/data/captures (real captures, pcap), every
scenario file (scenarios/, tb/scenario/good and bad), the trigger
expressions of tb/fuzz/trigger_seeds.txt (the README's and the tests'), and
for the CM and bridge parsers messages laid out by the protocols (IBTA CM
MADs carrying rdma_cm private data with the captures' addresses and QPs;
SimBricks PCIe and Ethernet messages carrying the captures' frames; for
the ERNIC RX path, the captures' frames and frames built for the fuzzed
node's QPs and MRs: rx_seeds.py). Each harness reads byte 0 (and the
bridge's byte 1) as its mode: the prefixes below. Deterministic: the same
files each run.
"""
import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rx_seeds  # noqa: E402


def pcap_frames(path):
    """Ethernet frames of a classic pcap (either byte order, us or ns)."""
    data = open(path, 'rb').read()
    if len(data) < 24:
        return []
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        e = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        e = '>'
    else:
        return []  # pcapng: the repository's captures are pcap
    linktype = struct.unpack(e + 'I', data[20:24])[0]
    if linktype != 1:
        return []
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(e + 'IIII', data[off:off + 16])
        off += 16
        out.append(data[off:off + incl])
        off += incl
    return out


def is_rocev2(f):
    return (len(f) >= 14 + 20 + 8 + 12 and f[12:14] == b'\x08\x00' and f[14 + 9] == 17 and
            struct.unpack('>H', f[14 + (f[14] & 15) * 4 + 2:14 + (f[14] & 15) * 4 + 4])[0] == 4791)


def be(n, v):
    return v.to_bytes(n, 'big')


def le(n, v):
    return v.to_bytes(n, 'little')


def cm_mads(frames):
    """CM MADs (IBTA 12.6, offsets of model/roce/cm.cpp) built around the
    captures' connections: their IPv4 addresses, QPNs and PSNs."""
    conns = []
    for f in frames:
        if not is_rocev2(f):
            continue
        ihl = (f[14] & 15) * 4
        bth = 14 + ihl + 8
        conns.append((f[14 + 12:14 + 16], f[14 + 16:14 + 20], int.from_bytes(f[bth + 5:bth + 8], 'big'),
                      int.from_bytes(f[bth + 9:bth + 12], 'big')))
    conns = sorted(set(conns))[:6]
    mads = []
    for i, (src, dst, qpn, psn) in enumerate(conns):
        ip_hdr = bytes([0, 4 << 4]) + be(2, 18515 + i) + bytes(12) + src + bytes(12) + dst
        mr = be(8, 0x10000 * (i + 1)) + be(4, 0x100 + i) + be(8, 65536)
        priv = ip_hdr + mr

        def mad(attr, data, tid=0x1000 + i):
            hdr = bytes([1, 7, 2, 3]) + be(2, 0) + be(2, 0) + be(8, tid) + be(2, attr) + be(2, 0) + be(4, 0)
            data = data + bytes(232 - len(data))
            return hdr + data[:232]

        req = bytearray(232)
        req[0:4] = be(4, 0x100 + i)
        req[8:16] = be(8, 0x0000000001060000 | (18515 + i))
        req[16:24] = be(8, 0x0002c90300000000 + i)
        req[28:32] = be(4, 0)
        req[32:35] = be(3, qpn)
        req[35] = 16
        req[39] = 16
        req[43] = (20 << 3) | 0
        req[44:47] = be(3, psn)
        req[47] = (20 << 3) | 7
        req[48:50] = be(2, 0xFFFF)
        req[50] = (5 << 4) | 7
        req[51] = 15 << 4
        req[52:56] = be(2, 0xFFFF) + be(2, 0xFFFF)
        req[56:72] = bytes(10) + b'\xff\xff' + src
        req[72:88] = bytes(10) + b'\xff\xff' + dst
        req[88:92] = be(4, 0)
        req[92], req[93], req[94], req[95] = 0, 64, 0, 14 << 3
        req[140:140 + len(priv)] = priv
        mads.append(('req', mad(0x10, bytes(req))))
        rep = bytearray(232)
        rep[0:4], rep[4:8] = be(4, 0x200 + i), be(4, 0x100 + i)
        rep[12:15], rep[20:23] = be(3, qpn ^ 1), be(3, psn ^ 0x5555)
        rep[24], rep[25], rep[26], rep[27] = 16, 16, 15 << 3, 7 << 5
        rep[28:36] = be(8, 0x0002c90300000100 + i)
        rep[36:36 + len(priv)] = priv
        mads.append(('rep', mad(0x13, bytes(rep))))
        mads.append(('rtu', mad(0x14, be(4, 0x100 + i) + be(4, 0x200 + i))))
        rej = be(4, 0x200 + i) + be(4, 0x100 + i) + bytes([0, 4 << 1]) + be(2, 28) + b'ARI!' + bytes(68) + b'no'
        mads.append(('rej', mad(0x12, rej)))
        mads.append(('dreq', mad(0x15, be(4, 0x100 + i) + be(4, 0x200 + i) + be(3, qpn ^ 1) + b'\0' + b'bye')))
        mads.append(('drep', mad(0x16, be(4, 0x200 + i) + be(4, 0x100 + i))))
    return mads


def sb_header(own_type, ts, fields=b''):
    """A SimBricks 64-byte header: fields from byte 0, timestamp @48, own_type @63."""
    h = bytearray(64)
    h[0:len(fields)] = fields
    h[48:56] = le(8, ts)
    h[63] = own_type
    return bytes(h)


def listener_intro(proto, elen, upper):
    return b''.join(le(8, v) for v in (1, 0, 0, elen, 0, 0, elen, 0, proto, 80)) + upper


def connecter_intro(proto, upper):
    return b''.join(le(8, v) for v in (1, 0, proto, 32)) + upper


def bridge_msgs(frames):
    out = []
    roce = [f for f in frames if is_rocev2(f)]
    for i, f in enumerate(roce[:12]):
        ts = 1_000_000 * (i + 1)
        out.append((f'net_packet_{i}', bytes([1, 0]) + sb_header(0x40, ts, le(2, len(f)) + bytes([i & 1, 0])) + f))
        out.append((f'pcie_h2d_write_{i}', bytes([0, 0]) + sb_header(0x61, ts, le(8, i) + le(8, 0x20000 + 4 * i) +
                                                                     le(2, len(f)) + bytes([0])) + f))
        out.append((f'pcie_d2h_readcomp_{i}', bytes([0, 0]) + sb_header(0x43, ts, le(8, i)) + f))
    out.append(('pcie_h2d_read', bytes([0, 0]) + sb_header(0x60, 5, le(8, 7) + le(8, 0x2000C) + le(2, 4) + b'\0')))
    out.append(('pcie_h2d_posted', bytes([0, 0]) + sb_header(0x65, 6, le(8, 8) + le(8, 0x20000) + le(2, 4) + b'\0') +
                b'\x01\0\0\0'))
    out.append(('pcie_h2d_devctrl', bytes([0, 0]) + sb_header(0x64, 7, le(8, 4))))
    out.append(('pcie_d2h_read', bytes([0, 0]) + sb_header(0x40, 8, le(8, 9) + le(8, 0x1000) + le(2, 64))))
    out.append(('pcie_d2h_interrupt', bytes([0, 0]) + sb_header(0x42, 9, le(2, 3) + bytes([3]))))
    out.append(('pcie_h2d_writecomp', bytes([0, 0]) + sb_header(0x63, 10, le(8, 9))))
    out.append(('pcie_sync', bytes([0, 0]) + sb_header(0x00, 11, bytes([1]))))
    out.append(('pcie_terminate', bytes([0, 0]) + sb_header(0x01, 12)))
    out.append(('net_sync_ern1', bytes([1, 0]) + sb_header(0x00, 13, b'ERN1' + bytes(4) + le(8, 2_000_000) + le(8, 3))))
    out.append(('net_sync', bytes([1, 0]) + sb_header(0x00, 14)))
    dev = bytearray(119)
    dev[0:8] = le(8, 1 << 20)          # BAR0: 1 MiB, 64-bit
    dev[8:16] = le(8, 2)
    dev[96:98], dev[98:100] = le(2, 0x10EE), le(2, 0x9038)
    dev[100], dev[101] = 2, 0
    out.append(('device_intro', bytes([2, 0]) + listener_intro(2, 65536 + 64, bytes(dev))))
    out.append(('host_intro', bytes([3, 0]) + connecter_intro(2, bytes(4))))
    out.append(('net_listener_intro', bytes([4, 0]) + listener_intro(1, 4416, b'')))
    out.append(('net_connecter_intro', bytes([4, 0]) + connecter_intro(1, b'')))
    out.append(('base_listener_intro', bytes([5, 119]) + listener_intro(2, 4096, bytes(dev))))
    out.append(('base_connecter_intro', bytes([5, 0x84]) + connecter_intro(2, bytes(4))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--root', required=True)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    root = a.root
    seeds = {t: [] for t in ('roce_frame', 'wire_decode', 'cm', 'scenario', 'trigger', 'bridge', 'rx')}

    frames, by_file = [], []
    capdir = os.path.join(root, 'tb', 'data', 'captures')
    for name in sorted(os.listdir(capdir)):
        if name.endswith('.pcap'):
            by_file.append((name[:-5], pcap_frames(os.path.join(capdir, name))))
            for i, f in enumerate(by_file[-1][1]):
                frames.append(f)
                stem = f'{name[:-5]}_{i:03d}'
                seeds['wire_decode'].append((stem, b'\x00' + f))
                if is_rocev2(f):
                    seeds['roce_frame'].append((stem, b'\x00' + f))
                    seeds['roce_frame'].append((stem + '_built', b'\x01' + f[14:]))
    # A native IB packet and a RoCEv1 frame made of a capture's RoCEv2 one:
    # LRH (VL 0, LNH 2: BTH follows) + the BTH onwards, then a VCRC.
    for i, f in enumerate([f for f in frames if is_rocev2(f)][:4]):
        bth = 14 + (f[14] & 15) * 4 + 8
        tail = f[bth:]
        lrh = bytes([0x00, 0x02]) + be(2, 1) + be(2, (8 + len(tail) + 2) // 4) + be(2, 2)
        seeds['wire_decode'].append((f'ib_{i}', b'\x01' + lrh + tail + b'\0\0'))
        grh = be(4, 6 << 28) + be(2, len(tail)) + bytes([0x1B, 64]) + bytes(10) + b'\xff\xff' + f[26:30] + \
            bytes(10) + b'\xff\xff' + f[30:34]
        seeds['wire_decode'].append((f'rocev1_{i}', b'\x00' + f[:12] + b'\x89\x15' + grh + tail))
        seeds['wire_decode'].append((f'vlan_{i}', b'\x00' + f[:12] + b'\x81\x00\x00\x05' + f[12:]))
    if not frames:
        sys.exit('seeds.py: no frames in ' + capdir)

    for stem, mad in cm_mads(frames):
        n = len(seeds['cm'])
        seeds['cm'].append((f'{n:02d}_{stem}', b'\x00' + mad))
        seeds['cm'].append((f'{n:02d}_{stem}_built', b'\x01' + mad[4:]))
    seeds['cm'].append(('private_data', b'\x02' + cm_mads(frames)[0][1][24 + 140:24 + 140 + 56]))

    scen_dirs = [os.path.join(root, 'scenarios'), os.path.join(root, 'tb', 'scenario')]
    for d in scen_dirs:
        for dp, _, fs in sorted(os.walk(d)):
            for fn in sorted(fs):
                if fn.endswith(('.yaml', '.yml')):
                    p = os.path.join(dp, fn)
                    rel = os.path.relpath(p, root).replace(os.sep, '__')
                    seeds['scenario'].append((rel, open(p, 'rb').read()))

    for i, line in enumerate(open(os.path.join(root, 'tb', 'fuzz', 'trigger_seeds.txt'), 'rb').read().splitlines()):
        if line.strip():
            seeds['trigger'].append((f'{i:02d}', line))

    seeds['bridge'] = bridge_msgs(frames)
    seeds['rx'] = rx_seeds.rx_seeds(by_file, is_rocev2, cm_mads(frames)[0][1] if frames else b'')

    for t, items in seeds.items():
        d = os.path.join(a.out, t)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            os.remove(os.path.join(d, old))
        for stem, data in items:
            with open(os.path.join(d, stem), 'wb') as f:
                f.write(data)
        print(f'seeds: {t}: {len(items)} inputs, {sum(len(x) for _, x in items)} bytes -> {d}')


if __name__ == '__main__':
    main()
