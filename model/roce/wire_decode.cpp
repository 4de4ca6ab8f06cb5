// model/roce: the capture-grade decoder (see wire_decode.h).
#include "model/roce/wire_decode.h"

#include <algorithm>
#include <array>
#include <boost/crc.hpp>
#include <cstdio>
#include <cstring>
#include <memory>

#include "model/roce/icrc.h"

namespace roce {

namespace {

constexpr size_t kAtomicEthLen = 28, kAtomicAckEthLen = 8;

size_t ext_bytes(uint16_t ext) {
  return ((ext & kExtRdeth) ? kRdethLen : 0) + ((ext & kExtDeth) ? kDethLen : 0) +
         ((ext & kExtXrceth) ? kXrcethLen : 0) + ((ext & kExtReth) ? kRethLen : 0) +
         ((ext & kExtAtomicEth) ? kAtomicEthLen : 0) + ((ext & kExtAeth) ? kAethLen : 0) +
         ((ext & kExtAtomicAckEth) ? kAtomicAckEthLen : 0) + ((ext & kExtImmDt) ? kImmDtLen : 0) +
         ((ext & kExtIeth) ? kIethLen : 0);
}

bool is_response(OpKind k) { return k == OpKind::ReadResponse || k == OpKind::Ack || k == OpKind::AtomicAck; }

// The 256 entries, built once from packet.h's RC table: UC, RD and XRC
// reuse the RC operations of IBTA 9.2 Table 38 with their transport's
// headers.
struct WireTable {
  std::array<WireOpcode, 256> e;
  WireTable() {
    char buf[32];
    for (int c = 0; c < 256; ++c) {
      WireOpcode& o = e[size_t(c)];
      o.code = uint8_t(c);
      o.transport = c >= 0xC0 ? WireTransport::Vendor : WireTransport(c >> 5);
      std::snprintf(buf, sizeof buf, "UNKNOWN_0x%02X", c);
      o.name = buf;
      const uint8_t rc_code = uint8_t(c & 0x1F);
      const OpcodeInfo* rc = opcode_info(rc_code);
      auto take = [&](const char* prefix, uint16_t ext) {
        o.known = true;
        o.name = std::string(prefix) + (rc->name + 3);  // "RC_SEND_FIRST" -> prefix + "SEND_FIRST"
        o.kind = rc->kind;
        o.pos = rc->pos;
        o.ext = ext;
      };
      switch (o.transport) {
        case WireTransport::RC:
          if (const OpcodeInfo* i = opcode_info(uint8_t(c))) take("RC_", i->ext);
          break;
        case WireTransport::UC:  // SEND and WRITE only
          if (rc && rc_code <= op::RC_WRITE_ONLY_IMM) take("UC_", rc->ext);
          break;
        case WireTransport::RD:  // RDETH on every packet, DETH on requests
          if (rc && rc_code <= op::RC_FETCH_ADD)
            take("RD_", uint16_t(kExtRdeth | (is_response(rc->kind) ? 0 : kExtDeth) | rc->ext));
          break;
        case WireTransport::UD:
          if (const OpcodeInfo* i = opcode_info(uint8_t(c))) take("", i->ext);  // "UD_SEND_ONLY"
          if (o.known) o.name = opcode_info(uint8_t(c))->name;
          break;
        case WireTransport::CNP:
          if (c == op::CNP) {
            const OpcodeInfo* i = opcode_info(op::CNP);
            o.known = true;
            o.name = i->name;
            o.kind = i->kind;
            o.pos = i->pos;
            o.ext = i->ext;
          }
          break;
        case WireTransport::XRC:  // XRCETH on requests
          if (rc) take("XRC_", uint16_t((is_response(rc->kind) ? 0 : kExtXrceth) | rc->ext));
          break;
        case WireTransport::Vendor:
          break;
      }
      o.ext_len = ext_bytes(o.ext);
    }
  }
};

const WireTable& table() {
  static const WireTable t;
  return t;
}

Grh read_grh(const uint8_t* p) {
  Grh g;
  const uint32_t w = get_be32(p);
  g.ipver = uint8_t(w >> 28);
  g.tclass = uint8_t(w >> 20);
  g.flow_label = w & 0xFFFFF;
  g.paylen = get_be16(p + 4);
  g.next_header = p[6];
  g.hop_limit = p[7];
  std::copy(p + 8, p + 24, g.sgid.b.begin());
  std::copy(p + 24, p + 40, g.dgid.b.begin());
  return g;
}

// BTH .. ICRC (n bytes, the ICRC included) into w. False with why set
// when the headers do not fit.
bool read_transport(const uint8_t* b, size_t n, WireFrame& w, std::string* why) {
  if (n < kBthLen + kIcrcLen) {
    *why = "BTH and ICRC do not fit in " + std::to_string(n) + " bytes";
    return false;
  }
  Frame& f = w.f;
  f.bth = read_bth(b);
  w.op = &wire_opcode(f.bth.opcode);
  const WireOpcode& o = *w.op;
  if (n < kBthLen + o.ext_len + kIcrcLen) {
    *why = o.name + ": its extension headers (" + std::to_string(o.ext_len) + " bytes) and ICRC do not fit in " +
           std::to_string(n - kBthLen) + " bytes after the BTH";
    return false;
  }
  const uint8_t* p = b + kBthLen;
  const uint16_t ext = o.ext;
  if (ext & kExtRdeth) w.rdeth = get_be24(p + 1), p += kRdethLen;
  if (ext & kExtDeth) f.deth = Deth{get_be32(p), p[4], get_be24(p + 5)}, p += kDethLen;
  if (ext & kExtXrceth) w.xrceth = get_be24(p + 1), p += kXrcethLen;
  if (ext & kExtReth) f.reth = Reth{get_be64(p), get_be32(p + 8), get_be32(p + 12)}, p += kRethLen;
  if (ext & kExtAtomicEth) {
    f.atomic_eth = AtomicEth{get_be64(p), get_be32(p + 8), get_be64(p + 12), get_be64(p + 20)};
    p += kAtomicEthLen;
  }
  if (ext & kExtAeth) f.aeth = Aeth{p[0], get_be24(p + 1)}, p += kAethLen;
  if (ext & kExtAtomicAckEth) f.atomic_ack_eth = AtomicAckEth{get_be64(p)}, p += kAtomicAckEthLen;
  if (ext & kExtImmDt) f.immdt = get_be32(p), p += kImmDtLen;
  if (ext & kExtIeth) f.ieth = get_be32(p), p += kIethLen;
  const size_t rest = n - kBthLen - o.ext_len - kIcrcLen;  // payload + pad
  if (f.bth.pad_cnt > rest) {
    if (o.known) {
      *why = o.name + ": PadCnt " + std::to_string(f.bth.pad_cnt) + " but only " + std::to_string(rest) +
             " bytes follow the headers";
      return false;
    }
  }
  const size_t pad = f.bth.pad_cnt <= rest ? f.bth.pad_cnt : 0;
  f.payload.assign(p, p + rest - pad);
  f.pad.assign(p + rest - pad, p + rest);
  f.icrc = get_le32(p + rest);
  return true;
}

uint32_t crc32(const uint8_t* a, size_t n, const uint8_t* b = nullptr, size_t m = 0) {
  boost::crc_32_type c;
  c.process_bytes(a, n);
  if (b && m) c.process_bytes(b, m);
  return c.checksum();
}

// RoCEv1 / IB ICRC: `lrh8` (8 bytes, already masked), then from `grh_or_bth`
// (GRH when has_grh) `n` bytes up to the ICRC, variant fields masked.
uint32_t icrc_ib(const uint8_t* lrh8, const uint8_t* p, size_t n, bool has_grh) {
  const size_t hdr = std::min(n, (has_grh ? kGrhLen : 0) + kBthLen);
  uint8_t h[kGrhLen + kBthLen + kLrhLen];
  std::memcpy(h, lrh8, kLrhLen);
  std::memcpy(h + kLrhLen, p, hdr);
  uint8_t* x = h + kLrhLen;
  if (has_grh && hdr >= 8) {
    x[0] |= 0x0F;  // traffic class, flow label
    x[1] = x[2] = x[3] = 0xFF;
    x[7] = 0xFF;   // hop limit
  }
  const size_t bth = has_grh ? kGrhLen : 0;
  if (hdr > bth + 4) x[bth + 4] = 0xFF;  // BTH resv8a (FECN, BECN)
  return crc32(h, kLrhLen + hdr, p + hdr, n - hdr);
}

const uint8_t kOnes8[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

}  // namespace

const char* wire_transport_name(WireTransport t) {
  switch (t) {
    case WireTransport::RC: return "RC";
    case WireTransport::UC: return "UC";
    case WireTransport::RD: return "RD";
    case WireTransport::UD: return "UD";
    case WireTransport::CNP: return "CNP";
    case WireTransport::XRC: return "XRC";
    case WireTransport::Vendor: return "vendor";
  }
  return "?";
}

const WireOpcode& wire_opcode(uint8_t code) { return table().e[code]; }

WireDecode decode_wire(const uint8_t* d, size_t len) {
  WireDecode r;
  auto not_roce = [&](std::string why) {
    r.status = WireStatus::NotRoce;
    r.why = std::move(why);
    return r;
  };
  auto bad = [&](std::string why) {
    r.status = WireStatus::Malformed;
    r.why = std::move(why);
    return r;
  };
  auto hex16 = [](uint16_t v) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%04x", v);
    return std::string(b);
  };
  WireFrame& w = r.w;
  if (!d || len < kEthHdrLen) return not_roce("shorter than an Ethernet header");
  std::copy(d, d + 6, w.f.eth.dst.b.begin());
  std::copy(d + 6, d + 12, w.f.eth.src.b.begin());
  size_t off = 12;
  uint16_t et = get_be16(d + off);
  while (et == kEtherTypeVlan || et == kEtherTypeQinQ || et == kEtherTypeVlan9100) {
    if (len < off + kVlanTagLen + 2) return not_roce("VLAN tag cut short");
    w.vlans.push_back(get_be16(d + off + 2));
    off += kVlanTagLen;
    et = get_be16(d + off);
  }
  w.f.eth.ethertype = et;
  const size_t l3 = off + 2;
  const uint8_t* ip = d + l3;
  const size_t avail = len - l3;

  if (et == kEtherTypeRoceV1) {
    w.encap = Encap::RoceV1;
    if (avail < kGrhLen) return bad("RoCEv1: GRH cut short");
    w.grh = read_grh(ip);
    const Grh& g = *w.grh;
    if (g.ipver != 6) return bad("RoCEv1: GRH IP version " + std::to_string(g.ipver) + ", not 6");
    if (g.next_header != kGrhNextHeaderBth) return not_roce("RoCEv1: GRH next header " + std::to_string(g.next_header));
    if (size_t(g.paylen) + kGrhLen > avail)
      return bad("RoCEv1: GRH payload length " + std::to_string(g.paylen) + " beyond the frame");
    w.bth_off = l3 + kGrhLen;
    w.used = w.bth_off + g.paylen;
    w.trailing = len - w.used;
    std::string why;
    if (!read_transport(d + w.bth_off, g.paylen, w, &why)) return bad(why);
    w.icrc_calc = icrc_ib(kOnes8, ip, kGrhLen + g.paylen - kIcrcLen, true);
    r.status = WireStatus::Ok;
    return r;
  }

  size_t ip_len = 0, end = 0;  // end: bytes of the IP datagram (from ip)
  if (et == kEtherTypeIpv4) {
    if (avail < kIpv4HdrLen) return not_roce("IPv4 header cut short");
    if ((ip[0] >> 4) != 4) return not_roce("EtherType IPv4, version " + std::to_string(ip[0] >> 4));
    ip_len = size_t(ip[0] & 0x0F) * 4;
    if (ip_len < kIpv4HdrLen || ip_len > avail) return not_roce("IPv4 IHL " + std::to_string(ip[0] & 0x0F));
    if (ip[9] != kIpProtoUdp) return not_roce("IPv4 protocol " + std::to_string(ip[9]));
    if (get_be16(ip + 6) & 0x1FFF) return not_roce("IPv4 fragment");
    Ipv4Hdr& h = w.f.ip4;
    h.tos = ip[1];
    h.total_len = get_be16(ip + 2);
    h.id = get_be16(ip + 4);
    h.flags = uint8_t(ip[6] >> 5);
    h.frag_off = uint16_t(get_be16(ip + 6) & 0x1FFF);
    h.ttl = ip[8];
    h.proto = ip[9];
    h.checksum = get_be16(ip + 10);
    h.src.v = get_be32(ip + 12);
    h.dst.v = get_be32(ip + 16);
    if (avail < ip_len + kUdpHdrLen) return not_roce("UDP header cut short");
    if (get_be16(ip + ip_len + 2) != kRoceUdpPort)
      return not_roce("UDP port " + std::to_string(get_be16(ip + ip_len + 2)));
    if (h.flags & 1) return bad("IPv4 more-fragments set on a RoCEv2 packet");
    if (h.total_len < ip_len + kUdpHdrLen || h.total_len > avail)
      return bad("IPv4 total length " + std::to_string(h.total_len) + " (frame holds " + std::to_string(avail) + ")");
    end = h.total_len;
    // The header checksum over IHL * 4 bytes sums to 0xFFFF when correct.
    uint32_t sum = 0;
    for (size_t i = 0; i < ip_len; i += 2) sum += get_be16(ip + i);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    w.ipv4_checksum_ok = sum == 0xFFFF;
  } else if (et == kEtherTypeIpv6) {
    w.f.ipv6 = true;
    if (avail < kIpv6HdrLen) return not_roce("IPv6 header cut short");
    if ((ip[0] >> 4) != 6) return not_roce("EtherType IPv6, version " + std::to_string(ip[0] >> 4));
    Ipv6Hdr& h = w.f.ip6;
    const uint32_t v = get_be32(ip);
    h.traffic_class = uint8_t(v >> 20);
    h.flow_label = v & 0xFFFFF;
    h.payload_len = get_be16(ip + 4);
    h.next_header = ip[6];
    h.hop_limit = ip[7];
    std::copy(ip + 8, ip + 24, h.src.b.begin());
    std::copy(ip + 24, ip + 40, h.dst.b.begin());
    if (h.next_header != kIpProtoUdp) return not_roce("IPv6 next header " + std::to_string(h.next_header));
    ip_len = kIpv6HdrLen;
    if (avail < ip_len + kUdpHdrLen) return not_roce("UDP header cut short");
    if (get_be16(ip + ip_len + 2) != kRoceUdpPort)
      return not_roce("UDP port " + std::to_string(get_be16(ip + ip_len + 2)));
    if (size_t(h.payload_len) + kIpv6HdrLen > avail)
      return bad("IPv6 payload length " + std::to_string(h.payload_len) + " beyond the frame");
    end = kIpv6HdrLen + h.payload_len;
  } else {
    return not_roce("EtherType " + hex16(et));
  }
  w.encap = Encap::RoceV2;
  w.ip_hdr_len = ip_len;
  const uint8_t* u = ip + ip_len;
  w.f.udp.sport = get_be16(u);
  w.f.udp.dport = get_be16(u + 2);
  w.f.udp.len = get_be16(u + 4);
  w.f.udp.checksum = get_be16(u + 6);
  if (size_t(w.f.udp.len) != end - ip_len)
    return bad("UDP length " + std::to_string(w.f.udp.len) + ", the IP header says " + std::to_string(end - ip_len));
  w.bth_off = l3 + ip_len + kUdpHdrLen;
  w.used = l3 + end;
  w.trailing = len - w.used;
  std::string why;
  if (!read_transport(d + w.bth_off, end - ip_len - kUdpHdrLen, w, &why)) return bad(why);
  // icrc.h's coverage starts at a 14-byte Ethernet header: drop the tags.
  if (w.vlans.empty()) {
    w.icrc_calc = compute_icrc(d, w.used - kIcrcLen);
  } else {
    Bytes plain(kEthHdrLen + end - kIcrcLen);
    std::memcpy(plain.data(), d, 12);
    put_be16(plain.data() + 12, et);
    std::memcpy(plain.data() + kEthHdrLen, ip, end - kIcrcLen);
    w.icrc_calc = compute_icrc(plain.data(), plain.size());
  }
  r.status = WireStatus::Ok;
  return r;
}

WireDecode decode_wire_ib(const uint8_t* d, size_t len) {
  WireDecode r;
  WireFrame& w = r.w;
  w.encap = Encap::Ib;
  auto bad = [&](std::string why) {
    r.status = WireStatus::Malformed;
    r.why = std::move(why);
    return r;
  };
  if (!d || len < kLrhLen) return bad("shorter than an LRH");
  Lrh l;
  l.vl = d[0] >> 4;
  l.lver = d[0] & 0x0F;
  l.sl = d[1] >> 4;
  l.lnh = d[1] & 3;
  l.dlid = get_be16(d + 2);
  l.pkt_len = get_be16(d + 4) & 0x7FF;
  l.slid = get_be16(d + 6);
  w.lrh = l;
  if (l.lnh != 2 && l.lnh != 3) {
    r.status = WireStatus::NotRoce;
    r.why = "LRH next header " + std::to_string(l.lnh) + " (raw packet, not IBA transport)";
    return r;
  }
  const size_t pkt = size_t(l.pkt_len) * 4;  // LRH .. ICRC
  if (pkt < kLrhLen || pkt + kVcrcLen > len)
    return bad("LRH packet length " + std::to_string(pkt) + " bytes, " + std::to_string(len) + " captured");
  size_t off = kLrhLen;
  const bool has_grh = l.lnh == 3;
  if (has_grh) {
    if (pkt < off + kGrhLen) return bad("GRH cut short");
    w.grh = read_grh(d + off);
    off += kGrhLen;
  }
  w.bth_off = off;
  w.used = pkt + kVcrcLen;
  w.trailing = len - w.used;
  w.vcrc = get_be16(d + pkt);
  std::string why;
  if (!read_transport(d + off, pkt - off, w, &why)) return bad(why);
  uint8_t lrh[kLrhLen];
  std::memcpy(lrh, d, kLrhLen);
  lrh[0] |= 0xF0;  // VL
  w.icrc_calc = icrc_ib(lrh, d + kLrhLen, pkt - kLrhLen - kIcrcLen, has_grh);
  r.status = WireStatus::Ok;
  return r;
}

Bytes as_plain_rocev2(const uint8_t* d, size_t len, const WireFrame& w) {
  const uint8_t code = w.f.bth.opcode;
  if (!w.op || !w.op->known || !opcode_info(code)) return {};
  if (w.encap == Encap::RoceV2 && w.vlans.empty() && (w.f.ipv6 || w.ip_hdr_len == kIpv4HdrLen) && w.used <= len) {
    Bytes b(d, d + w.used);
    put_le32(b.data() + b.size() - kIcrcLen, compute_icrc(b.data(), b.size() - kIcrcLen));
    return b;
  }
  Frame f = w.f;
  if (w.encap != Encap::RoceV2) {
    f.ipv6 = true;
    f.eth.ethertype = kEtherTypeIpv6;
    if (w.grh) {
      f.ip6.traffic_class = w.grh->tclass;
      f.ip6.flow_label = w.grh->flow_label;
      f.ip6.hop_limit = w.grh->hop_limit;
      f.ip6.src = w.grh->sgid;
      f.ip6.dst = w.grh->dgid;
    } else if (w.lrh) {  // LIDs only: fe80::<lid>
      f.ip6.src.b[0] = f.ip6.dst.b[0] = 0xFE;
      f.ip6.src.b[1] = f.ip6.dst.b[1] = 0x80;
      put_be16(&f.ip6.src.b[14], w.lrh->slid);
      put_be16(&f.ip6.dst.b[14], w.lrh->dlid);
    }
    f.udp = UdpHdr{};
    f.udp.sport = 0xC000;
  }
  EncodeOptions o;
  o.fill_pad = false;  // the pad as carried
  return encode(f, o);
}

}  // namespace roce
