#!/usr/bin/python3
"""Decode every frame of a pcap with scapy and print its fields as JSON.

An oracle apart from the project's own encoder for tb/rtl/test_roce_tx_rtl:
the test writes roce_tx's output to a pcap, this script dissects it with
scapy (Debian's python3-scapy, scapy.contrib.roce binds UDP 4791 to BTH) and
prints one JSON object per frame, which the test compares with the
descriptors it gave the RTL:

  n, len             frame number (from 1), bytes
  ip                 4 or 6 (0 when scapy found no IP layer)
  IPv4: ihl tos tlen id flags frag ttl proto chksum chksum_ok src dst
  IPv6: tc fl plen nh hlim src dst
  (addresses as lower-case hex of their wire bytes)
  sport dport ulen uchksum
  BTH: opcode se m pad tver pkey fecn becn resv6 dqpn ackreq resv7 psn
  icrc_ok            scapy's recomputed ICRC equals the frame's last 4 bytes
                     (IPv4; null for IPv6, which scapy 2.5 cannot compute)

usage: scapy_roce_tx.py PCAP      (exit 2 when the file cannot be read)
"""
import json
import logging
import socket
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import Ether, IP, IPv6, UDP, raw  # noqa: E402
from scapy.utils import PcapReader  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402


def decode(num, frame):
    b = raw(frame)
    out = {"n": num, "len": len(b), "ip": 0}
    if IP in frame:
        ip = frame[IP]
        hdr = ip.copy()
        hdr.remove_payload()
        hdr.chksum = None
        want = IP(raw(hdr)).chksum
        out.update(ip=4, ihl=ip.ihl, tos=ip.tos, tlen=ip.len, id=ip.id, flags=int(ip.flags),
                   frag=ip.frag, ttl=ip.ttl, proto=ip.proto, chksum=ip.chksum,
                   chksum_ok=(ip.chksum == want),
                   src=socket.inet_aton(ip.src).hex(), dst=socket.inet_aton(ip.dst).hex())
    elif IPv6 in frame:
        ip = frame[IPv6]
        out.update(ip=6, tc=ip.tc, fl=ip.fl, plen=ip.plen, nh=ip.nh, hlim=ip.hlim,
                   src=socket.inet_pton(socket.AF_INET6, ip.src).hex(),
                   dst=socket.inet_pton(socket.AF_INET6, ip.dst).hex())
    if UDP in frame:
        u = frame[UDP]
        out.update(sport=u.sport, dport=u.dport, ulen=u.len, uchksum=u.chksum)
    if BTH in frame:
        t = frame[BTH]
        out.update(opcode=t.opcode, se=t.solicited, m=t.migreq, pad=t.padcount, tver=t.version,
                   pkey=t.pkey, fecn=t.fecn, becn=t.becn, resv6=t.resv6, dqpn=t.dqpn,
                   ackreq=t.ackreq, resv7=t.resv7, psn=t.psn)
        if out["ip"] == 4:
            end = 14 + frame[IP].len
            out["icrc_ok"] = t.compute_icrc(b"") == b[end - 4:end]
        else:
            out["icrc_ok"] = None
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        reader = PcapReader(sys.argv[1])
    except Exception as e:  # noqa: BLE001
        print("%s: cannot read: %s" % (sys.argv[1], e), file=sys.stderr)
        return 2
    with reader:
        for num, frame in enumerate(reader, start=1):
            if not isinstance(frame, Ether):
                print(json.dumps({"n": num, "ip": 0}))
                continue
            print(json.dumps(decode(num, frame)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
