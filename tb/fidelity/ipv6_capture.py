#!/usr/bin/env python3
"""RoCEv2-over-IPv6 (and RoCEv1) copies of the real RoCEv2/IPv4 captures,
for `ernic-sim pcap replay`'s IPv6 tests (test_pcap_replay_ipv6.cpp).

  ipv6_capture.py --data tb/data/captures --out DIR [--tshark /usr/bin/tshark]

Each frame keeps its number, time and MACs. An IPv4 frame becomes IPv6:
the address a.b.c.d becomes fd00::a:b:c:d (hex, e.g. 10.1.16.62 ->
fd00::a:1:10:3e), traffic class = the TOS, flow label 0, hop limit = the
TTL, the payload unchanged (TCP: its checksum recomputed). A RoCEv2 frame
keeps its UDP header (length, checksum 0: RoCEv2 sends 0, IBTA A17.3.3),
BTH, extension headers, payload and pad; its ICRC is recomputed with the
IPv6 coverage (traffic class, flow label, hop limit masked; the ICRC
functions of decode_vs_tshark.py, none written here). Ethernet padding
after the IPv4 length is dropped. Written to DIR:

  <capture>.v6.pcap               the five captures, every frame over IPv6
  rdma_write_bw.v6.ackreq22.pcap  frame 22 (WRITE_FIRST) with AckReq set, ICRC recomputed
  rdma_write_bw.v6.rocev1.pcap    the RoCE frames as RoCEv1 (EtherType 0x8915, GRH, BTH)
  mixed.pcap                      rdma_write_bw as captured (IPv4), then
                                  rdma_read_bw over IPv6, 1 s after its last frame

With --tshark, every converted RoCE frame must decode in tshark as
InfiniBand over IPv6 with the original's BTH fields and the ICRC written.
Exit 0 done, 1 a check failed, 77 skipped (no scapy).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_vs_tshark import with_icrc_v1, with_icrc_v6  # noqa: E402  (exits 77 without scapy)
from scapy.all import Ether, IP, IPv6, TCP, UDP, Raw, rdpcap, wrpcap  # noqa: E402
from scapy.contrib.roce import GRH  # noqa: E402

CAPTURES = ["pingpong_rc", "rdma_read_bw", "rdma_send_bw", "rdma_write_bw", "rdma_write_lat"]
ROCE_PORT = 4791
BTH_ACKREQ = 8  # the BTH byte holding AckReq (bit 7)


def v6_addr(a):
    return "fd00::" + ":".join(f"{int(x):x}" for x in a.split("."))


def roce_l4(ip):
    """The UDP header .. ICRC of a RoCEv2/IPv4 frame, None for anything else."""
    if UDP not in ip or ip[UDP].dport != ROCE_PORT:
        return None
    return bytes(ip)[ip.ihl * 4:ip.len]


def to_v6(pkt, ackreq=False):
    if IP not in pkt:
        return pkt
    ip = pkt[IP]
    hdr = IPv6(tc=ip.tos, fl=0, hlim=ip.ttl, nh=ip.proto, src=v6_addr(ip.src), dst=v6_addr(ip.dst))
    eth = Ether(src=pkt.src, dst=pkt.dst, type=0x86DD)
    l4 = roce_l4(ip)
    if l4 is None:
        inner = ip.payload.copy()
        if TCP in inner:
            del inner[TCP].chksum
        out = eth / hdr / inner
    else:
        b = bytearray(l4)
        if ackreq:
            b[8 + BTH_ACKREQ] |= 0x80
        out = Ether(with_icrc_v6(bytes(eth / hdr / Raw(bytes(b)))))
    out.time = pkt.time
    return out


def to_v1(pkt):
    """A RoCEv2/IPv4 frame as RoCEv1: Ethernet (0x8915), GRH, BTH .. ICRC."""
    if IP not in pkt or roce_l4(pkt[IP]) is None:
        return pkt
    ip = pkt[IP]
    body = roce_l4(ip)[8:]  # BTH .. ICRC
    g = GRH(ipver=6, tclass=ip.tos, flowlabel=0, paylen=len(body), nexthdr=0x1B, hoplmt=ip.ttl,
            sgid=int.from_bytes(bytes.fromhex("fe80000000000000") + bytes(4) + bytes(map(int, ip.src.split("."))), "big"),
            dgid=int.from_bytes(bytes.fromhex("fe80000000000000") + bytes(4) + bytes(map(int, ip.dst.split("."))), "big"))
    out = Ether(with_icrc_v1(bytes(Ether(src=pkt.src, dst=pkt.dst, type=0x8915) / g / Raw(body))))
    out.time = pkt.time
    return out


def tshark_check(tshark, orig, conv_path):
    """Every RoCE frame of conv_path: IPv6, InfiniBand with orig's BTH and the ICRC written."""
    fields = ["frame.number", "ipv6.src", "ipv6.dst", "infiniband.bth.opcode", "infiniband.bth.destqp",
              "infiniband.bth.psn", "infiniband.bth.a", "infiniband.invariant.crc"]
    cmd = [tshark, "-r", conv_path, "--disable-protocol", "rpcordma", "-Y", "infiniband", "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    rows = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    conv = rdpcap(conv_path)
    want = 0
    bad = 0
    for n, p in enumerate(orig, 1):
        if IP in p and roce_l4(p[IP]) is not None:
            want += 1
    if len(rows) != want:
        print(f"{conv_path}: tshark decodes {len(rows)} InfiniBand frames, {want} RoCE frames converted")
        return 1
    for r in rows:
        v = r.split("\t")
        n = int(v[0])
        o = bytes(orig[n - 1][IP])[28:40]  # the original's BTH
        c = bytes(conv[n - 1])
        got = (v[1], v[2], int(v[3]), int(v[4], 0), int(v[5]), v[6] in ("1", "True"), int(v[7], 0))
        exp = (v6_addr(orig[n - 1][IP].src), v6_addr(orig[n - 1][IP].dst), o[0], int.from_bytes(o[5:8], "big"),
               int.from_bytes(o[9:12], "big") , bool(c[14 + 40 + 8 + BTH_ACKREQ] & 0x80),
               int.from_bytes(c[len(c) - 4:], "big"))
        if got != exp:
            print(f"{conv_path}: frame {n}: tshark {got}, built {exp}")
            bad += 1
    print(f"{os.path.basename(conv_path)}: {len(rows)} RoCEv2/IPv6 frames agree with tshark" if not bad else "")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="the real captures' folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tshark", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    bad = 0
    orig = {c: rdpcap(os.path.join(a.data, c + ".pcap")) for c in CAPTURES}
    for c in CAPTURES:
        path = os.path.join(a.out, c + ".v6.pcap")
        wrpcap(path, [to_v6(p) for p in orig[c]])
        if a.tshark:
            bad |= tshark_check(a.tshark, orig[c], path)
    w = orig["rdma_write_bw"]
    path = os.path.join(a.out, "rdma_write_bw.v6.ackreq22.pcap")
    wrpcap(path, [to_v6(p, ackreq=(n == 22)) for n, p in enumerate(w, 1)])
    if a.tshark:
        bad |= tshark_check(a.tshark, w, path)
    wrpcap(os.path.join(a.out, "rdma_write_bw.v6.rocev1.pcap"), [to_v1(p) for p in w])
    shift = float(w[-1].time) + 1.0 - float(orig["rdma_read_bw"][0].time)
    tail = [to_v6(p) for p in orig["rdma_read_bw"]]
    for p in tail:
        p.time = float(p.time) + shift
    wrpcap(os.path.join(a.out, "mixed.pcap"), list(w) + tail)
    if not a.tshark:
        print("tshark not given: the converted captures are not checked against it")
    print(f"wrote {len(CAPTURES) + 3} captures to {a.out}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
