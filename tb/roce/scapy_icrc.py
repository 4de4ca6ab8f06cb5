#!/usr/bin/python3
"""Independent oracle for RoCEv2 frames in pcap files, using scapy.

For every RoCEv2 frame (Ethernet / IPv4 / UDP dport 4791) in the given pcap
files, recompute the ICRC with scapy.contrib.roce and compare it with the
ICRC carried in the frame, and check the IPv4 header checksum. Frames that
are not RoCE are skipped, and so are IPv6 RoCE frames (scapy 2.5 cannot
compute an IPv6 ICRC); both are counted and reported as skipped.

Run with /usr/bin/python3 (Debian's python3-scapy). Exit status: 0 when all
checked frames agree (and the --expect-* counts, when given, hold), 1 on a
mismatch or a count that differs, 2 when a file cannot be read.

usage: scapy_icrc.py [--expect-checked N] [--expect-skipped-ipv6 N]
                     [--expect-bad N] PCAP...
(--expect-bad N: exit 0 only when exactly N frames mismatch; for testing the
oracle itself on deliberately corrupted frames.)
"""
import argparse
import logging
import struct
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import Ether, IP, IPv6, UDP, Raw, raw  # noqa: E402
from scapy.utils import PcapReader  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402,F401  (binds UDP 4791 -> BTH)

ROCE_PORT = 4791


def icrc_wire_bytes(frame):
    """The 4 ICRC bytes as on the wire: the last 4 bytes of the UDP payload
    (bounded by the IP total length, so Ethernet padding is ignored)."""
    ip = frame[IP]
    ip_start = len(raw(frame)) - len(raw(ip))  # offset of the IP header
    end = ip_start + ip.len
    return raw(frame)[end - 4:end]


def check_frame(frame):
    """Returns a list of problems (empty when the frame is correct)."""
    problems = []
    ip = frame[IP]

    # IPv4 header checksum: rebuild the header with the field cleared.
    hdr = ip.copy()
    hdr.remove_payload()
    hdr.chksum = None
    want_chksum = IP(raw(hdr)).chksum
    if ip.chksum != want_chksum:
        problems.append("IPv4 checksum 0x%04x, expected 0x%04x" % (ip.chksum, want_chksum))

    # ICRC: scapy computes it from the dissected BTH and what follows.
    if BTH not in frame:
        problems.append("scapy did not dissect a BTH")
        return problems
    want = frame[BTH].compute_icrc(b"")
    got = icrc_wire_bytes(frame)
    if want != got:
        problems.append("ICRC 0x%08x, scapy computes 0x%08x (values as wire bytes LE)"
                        % (struct.unpack("<I", got)[0], struct.unpack("<I", want)[0]))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcaps", nargs="+", metavar="PCAP")
    ap.add_argument("--expect-checked", type=int, default=None,
                    help="fail unless exactly N RoCE/IPv4 frames were checked")
    ap.add_argument("--expect-skipped-ipv6", type=int, default=None,
                    help="fail unless exactly N RoCE/IPv6 frames were skipped")
    ap.add_argument("--expect-bad", type=int, default=0,
                    help="number of frames expected to mismatch (default 0)")
    args = ap.parse_args()

    checked = skipped_other = skipped_ipv6 = bad = 0
    for path in args.pcaps:
        try:
            reader = PcapReader(path)
        except Exception as e:  # noqa: BLE001
            print("%s: cannot read: %s" % (path, e))
            return 2
        with reader:
            for num, frame in enumerate(reader, start=1):
                where = "%s frame %d" % (path, num)
                if not isinstance(frame, Ether) or UDP not in frame or frame[UDP].dport != ROCE_PORT:
                    skipped_other += 1
                    continue
                if IPv6 in frame and IP not in frame:
                    skipped_ipv6 += 1
                    print("%s: skipped (IPv6: scapy 2.5 has no IPv6 ICRC)" % where)
                    continue
                if IP not in frame:
                    skipped_other += 1
                    continue
                checked += 1
                try:
                    problems = check_frame(frame)
                except Exception as e:  # noqa: BLE001
                    problems = ["scapy failed: %r" % (e,)]
                for p in problems:
                    print("%s: MISMATCH: %s" % (where, p))
                if problems:
                    bad += 1

    print("checked %d RoCE/IPv4 frames, %d with mismatches; skipped %d IPv6 RoCE frames "
          "and %d non-RoCE frames" % (checked, bad, skipped_ipv6, skipped_other))
    status = 0
    if bad != args.expect_bad:
        if args.expect_bad:
            print("expected %d frames with mismatches, got %d" % (args.expect_bad, bad))
        status = 1
    if args.expect_checked is not None and checked != args.expect_checked:
        print("expected %d checked frames, got %d" % (args.expect_checked, checked))
        status = 1
    if args.expect_skipped_ipv6 is not None and skipped_ipv6 != args.expect_skipped_ipv6:
        print("expected %d skipped IPv6 frames, got %d" % (args.expect_skipped_ipv6, skipped_ipv6))
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
