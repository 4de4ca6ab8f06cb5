// model/roce: RoCEv2 frame encode/decode (see packet.h).
#include "model/roce/packet.h"

#include <algorithm>
#include <cassert>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"

namespace roce {

namespace {

constexpr size_t kAtomicEthLen = 28, kAtomicAckEthLen = 8;

// Extension headers of an opcode; unknown opcodes carry none.
uint16_t ext_of(uint8_t opcode) {
  const OpcodeInfo* i = opcode_info(opcode);
  return i ? i->ext : uint16_t(kExtNone);
}

size_t ext_len_of(uint8_t opcode) {
  const OpcodeInfo* i = opcode_info(opcode);
  return i ? i->ext_len : 0;
}

void write_bth(uint8_t* p, const Bth& b) {
  p[0] = b.opcode;
  p[1] = uint8_t((b.se ? 0x80 : 0) | (b.mig ? 0x40 : 0) | (b.pad_cnt & 3) << 4 | (b.tver & 0x0F));
  put_be16(p + 2, b.pkey);
  p[4] = b.resv8a;
  put_be24(p + 5, b.dest_qp & 0xFFFFFF);
  p[8] = uint8_t((b.ack_req ? 0x80 : 0) | (b.resv7 & 0x7F));
  put_be24(p + 9, b.psn & 0xFFFFFF);
}


// Writes the extension headers of `ext` in wire order; returns bytes written.
size_t write_ext(uint8_t* p, uint16_t ext, const Frame& f) {
  uint8_t* const start = p;
  if (ext & kExtDeth) {
    const Deth d = f.deth.value_or(Deth{});
    put_be32(p, d.qkey);
    p[4] = d.resv;
    put_be24(p + 5, d.src_qp & 0xFFFFFF);
    p += kDethLen;
  }
  if (ext & kExtReth) {
    const Reth r = f.reth.value_or(Reth{});
    put_be64(p, r.va);
    put_be32(p + 8, r.rkey);
    put_be32(p + 12, r.dma_len);
    p += kRethLen;
  }
  if (ext & kExtAtomicEth) {
    const AtomicEth a = f.atomic_eth.value_or(AtomicEth{});
    put_be64(p, a.va);
    put_be32(p + 8, a.rkey);
    put_be64(p + 12, a.swap_add);
    put_be64(p + 20, a.compare);
    p += kAtomicEthLen;
  }
  if (ext & kExtAeth) {
    const Aeth a = f.aeth.value_or(Aeth{});
    p[0] = a.syndrome;
    put_be24(p + 1, a.msn & 0xFFFFFF);
    p += kAethLen;
  }
  if (ext & kExtAtomicAckEth) {
    put_be64(p, f.atomic_ack_eth.value_or(AtomicAckEth{}).orig);
    p += kAtomicAckEthLen;
  }
  if (ext & kExtImmDt) {
    put_be32(p, f.immdt.value_or(0));
    p += kImmDtLen;
  }
  if (ext & kExtIeth) {
    put_be32(p, f.ieth.value_or(0));
    p += kIethLen;
  }
  return size_t(p - start);
}

void read_ext(const uint8_t* p, uint16_t ext, Frame& f) {
  if (ext & kExtDeth) {
    f.deth = Deth{get_be32(p), p[4], get_be24(p + 5)};
    p += kDethLen;
  }
  if (ext & kExtReth) {
    f.reth = Reth{get_be64(p), get_be32(p + 8), get_be32(p + 12)};
    p += kRethLen;
  }
  if (ext & kExtAtomicEth) {
    f.atomic_eth = AtomicEth{get_be64(p), get_be32(p + 8), get_be64(p + 12), get_be64(p + 20)};
    p += kAtomicEthLen;
  }
  if (ext & kExtAeth) {
    f.aeth = Aeth{p[0], get_be24(p + 1)};
    p += kAethLen;
  }
  if (ext & kExtAtomicAckEth) {
    f.atomic_ack_eth = AtomicAckEth{get_be64(p)};
    p += kAtomicAckEthLen;
  }
  if (ext & kExtImmDt) {
    f.immdt = get_be32(p);
    p += kImmDtLen;
  }
  if (ext & kExtIeth) {
    f.ieth = get_be32(p);
    p += kIethLen;
  }
}

}  // namespace

Bth read_bth(const uint8_t* p) {
  Bth b;
  b.opcode = p[0];
  b.se = p[1] & 0x80;
  b.mig = p[1] & 0x40;
  b.pad_cnt = (p[1] >> 4) & 3;
  b.tver = p[1] & 0x0F;
  b.pkey = get_be16(p + 2);
  b.resv8a = p[4];
  b.dest_qp = get_be24(p + 5);
  b.ack_req = p[8] & 0x80;
  b.resv7 = p[8] & 0x7F;
  b.psn = get_be24(p + 9);
  return b;
}

uint16_t ipv4_checksum(const uint8_t* h) {
  uint32_t sum = 0;
  for (size_t i = 0; i < kIpv4HdrLen; i += 2) {
    if (i == 10) continue;  // the checksum field itself counts as zero
    sum += get_be16(h + i);
  }
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return uint16_t(~sum);
}

Bytes encode(const Frame& f, const EncodeOptions& opt) { return encode(f, f.payload.data(), f.payload.size(), opt); }

Bytes encode(const Frame& f, const uint8_t* payload, size_t len, const EncodeOptions& opt) {
  Bth bth = f.bth;
  const uint8_t* pad = f.pad.data();
  size_t pad_len = f.pad.size();
  static constexpr uint8_t kZeroPad[4] = {};
  if (opt.fill_pad) {
    bth.pad_cnt = uint8_t((4 - len % 4) % 4);
    pad = kZeroPad;
    pad_len = bth.pad_cnt;
  }
  const size_t ip_len = f.ipv6 ? kIpv6HdrLen : kIpv4HdrLen;
  const size_t ext_len = ext_len_of(bth.opcode);
  const size_t udp_payload = kBthLen + ext_len + len + pad_len + kIcrcLen;
  const size_t headers = kEthHdrLen + ip_len + kUdpHdrLen + kBthLen + ext_len;
  // The headers zeroed (a field not written stays 0, the IPv4 checksum is
  // summed over a zero checksum), the payload, pad and ICRC appended: no
  // zero fill of the payload's bytes first.
  Bytes out;
  out.reserve(headers + len + pad_len + kIcrcLen);
  out.resize(headers, 0);
  uint8_t* p = out.data();

  // Ethernet II
  std::copy(f.eth.dst.b.begin(), f.eth.dst.b.end(), p);
  std::copy(f.eth.src.b.begin(), f.eth.src.b.end(), p + 6);
  // An IP EtherType follows the IP version chosen by f.ipv6 (so a frame
  // built with ipv6 = true needs no EtherType of its own); others as given.
  uint16_t ethertype = f.eth.ethertype;
  if (ethertype == kEtherTypeIpv4 || ethertype == kEtherTypeIpv6)
    ethertype = f.ipv6 ? kEtherTypeIpv6 : kEtherTypeIpv4;
  put_be16(p + 12, ethertype);
  p += kEthHdrLen;

  // IP
  if (f.ipv6) {
    const Ipv6Hdr& h = f.ip6;
    put_be32(p, 6u << 28 | uint32_t(h.traffic_class) << 20 | (h.flow_label & 0xFFFFF));
    put_be16(p + 4, opt.fill_lengths ? uint16_t(kUdpHdrLen + udp_payload) : h.payload_len);
    p[6] = h.next_header;
    p[7] = h.hop_limit;
    std::copy(h.src.b.begin(), h.src.b.end(), p + 8);
    std::copy(h.dst.b.begin(), h.dst.b.end(), p + 24);
  } else {
    const Ipv4Hdr& h = f.ip4;
    p[0] = 0x45;
    p[1] = h.tos;
    put_be16(p + 2, opt.fill_lengths ? uint16_t(kIpv4HdrLen + kUdpHdrLen + udp_payload) : h.total_len);
    put_be16(p + 4, h.id);
    put_be16(p + 6, uint16_t((h.flags & 7) << 13 | (h.frag_off & 0x1FFF)));
    p[8] = h.ttl;
    p[9] = h.proto;
    put_be32(p + 12, h.src.v);
    put_be32(p + 16, h.dst.v);
    put_be16(p + 10, opt.fill_ip_checksum ? ipv4_checksum(p) : h.checksum);
  }
  p += ip_len;

  // UDP
  put_be16(p, f.udp.sport);
  put_be16(p + 2, f.udp.dport);
  put_be16(p + 4, opt.fill_lengths ? uint16_t(kUdpHdrLen + udp_payload) : f.udp.len);
  put_be16(p + 6, f.udp.checksum);
  p += kUdpHdrLen;

  // BTH, extension headers, payload, pad
  write_bth(p, bth);
  p += kBthLen;
  [[maybe_unused]] const size_t ext_written = write_ext(p, ext_of(bth.opcode), f);
  assert(ext_written == ext_len);
  out.insert(out.end(), payload, payload + len);
  out.insert(out.end(), pad, pad + pad_len);

  // ICRC, least-significant byte first
  const size_t icrc_at = out.size();
  out.resize(icrc_at + kIcrcLen);
  put_le32(out.data() + icrc_at, opt.fill_icrc ? compute_icrc(out.data(), icrc_at) : f.icrc);
  return out;
}

const char* decode_error_name(DecodeError e) {
  switch (e) {
    case DecodeError::None: return "None";
    case DecodeError::TooShort: return "TooShort";
    case DecodeError::NotIp: return "NotIp";
    case DecodeError::IpVersion: return "IpVersion";
    case DecodeError::Ipv4Ihl: return "Ipv4Ihl";
    case DecodeError::NotUdp: return "NotUdp";
    case DecodeError::NotRocePort: return "NotRocePort";
    case DecodeError::BadLength: return "BadLength";
    case DecodeError::UnknownOpcode: return "UnknownOpcode";
    case DecodeError::PadTooLong: return "PadTooLong";
  }
  return "?";
}

namespace {
std::optional<Frame> decode_impl(const uint8_t* d, size_t len, DecodeError* err, bool with_payload) {
  auto fail = [err](DecodeError e) -> std::optional<Frame> {
    if (err) *err = e;
    return std::nullopt;
  };
  if (err) *err = DecodeError::None;
  if (!d || len < kEthHdrLen) return fail(DecodeError::TooShort);

  Frame f;
  std::copy(d, d + 6, f.eth.dst.b.begin());
  std::copy(d + 6, d + 12, f.eth.src.b.begin());
  f.eth.ethertype = get_be16(d + 12);
  const uint8_t* ip = d + kEthHdrLen;
  const size_t avail = len - kEthHdrLen;  // bytes after the Ethernet header

  size_t ip_len = 0, end = 0;  // end: bytes of IP datagram actually used
  if (f.eth.ethertype == kEtherTypeIpv4) {
    if (avail < kIpv4HdrLen) return fail(DecodeError::TooShort);
    if ((ip[0] >> 4) != 4) return fail(DecodeError::IpVersion);
    if ((ip[0] & 0x0F) != 5) return fail(DecodeError::Ipv4Ihl);
    Ipv4Hdr& h = f.ip4;
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
    if (h.proto != kIpProtoUdp) return fail(DecodeError::NotUdp);
    ip_len = kIpv4HdrLen;
    if (h.total_len < kIpv4HdrLen || h.total_len > avail) return fail(DecodeError::BadLength);
    end = h.total_len;
  } else if (f.eth.ethertype == kEtherTypeIpv6) {
    f.ipv6 = true;
    if (avail < kIpv6HdrLen) return fail(DecodeError::TooShort);
    if ((ip[0] >> 4) != 6) return fail(DecodeError::IpVersion);
    Ipv6Hdr& h = f.ip6;
    const uint32_t w = get_be32(ip);
    h.traffic_class = uint8_t(w >> 20);
    h.flow_label = w & 0xFFFFF;
    h.payload_len = get_be16(ip + 4);
    h.next_header = ip[6];
    h.hop_limit = ip[7];
    std::copy(ip + 8, ip + 24, h.src.b.begin());
    std::copy(ip + 24, ip + 40, h.dst.b.begin());
    if (h.next_header != kIpProtoUdp) return fail(DecodeError::NotUdp);
    ip_len = kIpv6HdrLen;
    if (size_t(h.payload_len) + kIpv6HdrLen > avail) return fail(DecodeError::BadLength);
    end = kIpv6HdrLen + h.payload_len;
  } else {
    return fail(DecodeError::NotIp);
  }

  // UDP
  if (end < ip_len + kUdpHdrLen) return fail(DecodeError::TooShort);
  const uint8_t* u = ip + ip_len;
  f.udp.sport = get_be16(u);
  f.udp.dport = get_be16(u + 2);
  f.udp.len = get_be16(u + 4);
  f.udp.checksum = get_be16(u + 6);
  if (f.udp.dport != kRoceUdpPort) return fail(DecodeError::NotRocePort);
  // The UDP length must agree with the IP length (no trailing IP payload).
  if (size_t(f.udp.len) != end - ip_len) return fail(DecodeError::BadLength);

  // BTH .. ICRC
  const uint8_t* b = u + kUdpHdrLen;
  const size_t roce_len = end - ip_len - kUdpHdrLen;
  if (roce_len < kBthLen + kIcrcLen) return fail(DecodeError::TooShort);
  f.bth = read_bth(b);
  const OpcodeInfo* info = opcode_info(f.bth.opcode);
  if (!info) return fail(DecodeError::UnknownOpcode);
  if (roce_len < kBthLen + info->ext_len + kIcrcLen) return fail(DecodeError::TooShort);
  read_ext(b + kBthLen, info->ext, f);
  const size_t rest = roce_len - kBthLen - info->ext_len - kIcrcLen;  // payload + pad
  if (f.bth.pad_cnt > rest) return fail(DecodeError::PadTooLong);
  const uint8_t* pl = b + kBthLen + info->ext_len;
  const size_t payload_len = rest - f.bth.pad_cnt;
  if (with_payload) f.payload.assign(pl, pl + payload_len);
  f.pad.assign(pl + payload_len, pl + rest);
  f.icrc = get_le32(pl + rest);
  return f;
}
}  // namespace

std::optional<Frame> decode(const uint8_t* d, size_t len, DecodeError* err) {
  return decode_impl(d, len, err, true);
}
std::optional<Frame> decode_headers(const uint8_t* d, size_t len, DecodeError* err) {
  return decode_impl(d, len, err, false);
}

bool is_roce(const uint8_t* d, size_t len) {
  if (!d || len < kEthHdrLen) return false;
  const uint16_t et = get_be16(d + 12);
  const uint8_t* ip = d + kEthHdrLen;
  const size_t avail = len - kEthHdrLen;
  size_t ip_len = 0;
  if (et == kEtherTypeIpv4) {
    if (avail < kIpv4HdrLen || (ip[0] >> 4) != 4) return false;
    ip_len = size_t(ip[0] & 0x0F) * 4;
    if (ip_len < kIpv4HdrLen || ip[9] != kIpProtoUdp) return false;
    if (get_be16(ip + 6) & 0x1FFF) return false;  // a later fragment has no UDP header
  } else if (et == kEtherTypeIpv6) {
    if (avail < kIpv6HdrLen || (ip[0] >> 4) != 6 || ip[6] != kIpProtoUdp) return false;
    ip_len = kIpv6HdrLen;
  } else {
    return false;
  }
  if (avail < ip_len + kUdpHdrLen) return false;
  return get_be16(ip + ip_len + 2) == kRoceUdpPort;
}

}  // namespace roce
