#!/usr/bin/python3
"""RoCEv2 and other frames built by scapy, the independent oracle of the
roce_rx test (tb/rtl/test_roce_rx_rtl.cpp).

Writes OUT.pcap and prints one line per frame, in order:
  roce OPCODE DEST_QP PSN ICRC PAYLOAD_HEX BAD_ICRC
  bypass
OPCODE, DEST_QP, PSN, ICRC are hex numbers as scapy sees them (ICRC: the
four bytes before the IP end, read least-significant first, i.e. the value
scapy.contrib.roce computed, which it appends to every RoCE/IPv4 frame);
PAYLOAD_HEX is the payload after the extension headers ("-" when empty);
BAD_ICRC is 1 for the frame whose payload was changed after scapy appended
its ICRC. Non-RoCE frames (ARP, UDP to another port, TCP, a VLAN-tagged
RoCE frame, IPv6 UDP to another port) print "bypass".

Run with /usr/bin/python3 (Debian's python3-scapy 2.5).
usage: scapy_roce_rx_frames.py OUT.pcap
"""
import logging
import random
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import ARP, Dot1Q, Ether, IP, IPv6, TCP, UDP, Raw, raw, wrpcap  # noqa: E402
from scapy.contrib.roce import AETH, BTH, cnp  # noqa: E402

MAC_A, MAC_B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
IP_A, IP_B = "192.168.10.1", "192.168.10.2"


def eth():
    return Ether(src=MAC_A, dst=MAC_B)


def ip():
    return IP(src=IP_A, dst=IP_B, flags="DF", ttl=64, id=0x1234)


def udp():
    return UDP(sport=0xC123, dport=4791, chksum=0)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    rnd = random.Random(0x5CA9)
    frames, lines = [], []

    def roce(pkt, opcode, qp, psn, payload, ext_len=0, bad_icrc=False, eth_pad=0):
        b = bytearray(raw(pkt))
        built = Ether(bytes(b))
        ip_end = 14 + built[IP].len
        pad = built[BTH].padcount
        if bad_icrc:  # change one payload byte after scapy appended its ICRC
            b[ip_end - 5 - pad] ^= 0x01
            payload = bytes(b[ip_end - 4 - pad - len(payload):ip_end - 4 - pad])
        icrc = int.from_bytes(bytes(b[ip_end - 4:ip_end]), "little")
        b += bytes(rnd.randrange(256) for _ in range(eth_pad))  # Ethernet padding (any bytes)
        frames.append(Ether(bytes(b)))
        lines.append("roce %x %x %x %x %s %d" % (opcode, qp, psn, icrc, payload.hex() or "-", int(bad_icrc)))

    def bypass(pkt):
        frames.append(pkt)
        lines.append("bypass")

    def rbytes(n):
        return bytes(rnd.randrange(256) for _ in range(n))

    # RC SEND_ONLY, 32 bytes.
    p = rbytes(32)
    roce(eth() / ip() / udp() / BTH(opcode=0x04, dqpn=0x12, psn=0x100, ackreq=1) / Raw(p), 0x04, 0x12, 0x100, p)
    # RC ACK with its AETH (ext 4 bytes, no payload).
    roce(eth() / ip() / udp() / BTH(opcode=0x11, dqpn=0x13, psn=0xFFFFFE) / AETH(syndrome=0x1F, msn=5),
         0x11, 0x13, 0xFFFFFE, b"")
    # CNP: BTH and 16 reserved bytes, carried as payload (model/roce/opcodes.cpp).
    roce(eth() / ip() / udp() / cnp(0x22), 0x81, 0x22, 0, bytes(16))
    # RC WRITE_ONLY: RETH (raw bytes here) and 64 bytes.
    reth = bytes.fromhex("00000000deadbe40" "00001234" "00000040")
    p = rbytes(64)
    roce(eth() / ip() / udp() / BTH(opcode=0x0A, dqpn=0x14, psn=0x200) / Raw(reth + p), 0x0A, 0x14, 0x200, p)
    # RC SEND_ONLY, 3 bytes and one pad byte.
    p = rbytes(3)
    roce(eth() / ip() / udp() / BTH(opcode=0x04, dqpn=0x15, psn=0x201, padcount=1) / Raw(p + b"\0"),
         0x04, 0x15, 0x201, p)
    # RC SEND_LAST without payload: 58 bytes, Ethernet-padded to 60.
    roce(eth() / ip() / udp() / BTH(opcode=0x02, dqpn=0x16, psn=0x202), 0x02, 0x16, 0x202, b"", eth_pad=2)
    # RC SEND_ONLY, 1000 bytes (16 beats).
    p = rbytes(1000)
    roce(eth() / ip() / udp() / BTH(opcode=0x04, dqpn=0x17, psn=0x203) / Raw(p), 0x04, 0x17, 0x203, p)
    # UD SEND_ONLY: DETH (raw bytes here) and 20 bytes.
    deth = bytes.fromhex("11111111" "00000001")
    p = rbytes(20)
    roce(eth() / ip() / udp() / BTH(opcode=0x64, dqpn=1, psn=0x300) / Raw(deth + p), 0x64, 1, 0x300, p)
    # The first frame with a payload bit changed after the ICRC was appended.
    p = rbytes(32)
    roce(eth() / ip() / udp() / BTH(opcode=0x04, dqpn=0x18, psn=0x101) / Raw(p), 0x04, 0x18, 0x101, p,
         bad_icrc=True)
    # Not RoCE.
    bypass(Ether(raw(Ether(src=MAC_A, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=IP_A, pdst=IP_B)) + bytes(18)))
    bypass(eth() / ip() / UDP(sport=1234, dport=53) / Raw(rbytes(40)))
    bypass(eth() / ip() / TCP(sport=1234, dport=4791) / Raw(rbytes(100)))
    bypass(eth() / Dot1Q(vlan=5) / ip() / udp() / BTH(opcode=0x04, dqpn=0x19) / Raw(rbytes(8)))
    bypass(eth() / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=1, dport=4792) / Raw(rbytes(30)))

    for i, f in enumerate(frames):
        f.time = i * 0.001  # no wall clock in the output
    wrpcap(sys.argv[1], frames)
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
