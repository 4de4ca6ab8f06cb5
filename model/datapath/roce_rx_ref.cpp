// The C++ reference model of roce_rx (see roce_rx_ref.h, rtl/SEAM.md).
#include "model/datapath/roce_rx_ref.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "model/link/classify.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"

namespace ernic::seam {

namespace {

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    s += buf;
  }
  return s;
}

}  // namespace

RxOutput roce_rx_ref(const uint8_t* f, size_t n, bool bad_fcs) {
  RxOutput out;
  if (!ernic::is_rocev2_frame(f, n)) {
    out.bypass = true;
    return out;
  }
  // The frame's bytes as received, zero beyond its end (SEAM.md: fields as
  // far as they were received).
  auto B = [&](size_t i) -> uint8_t { return i < n ? f[i] : 0; };
  auto be16 = [&](size_t i) { return uint16_t(B(i) << 8 | B(i + 1)); };
  auto be24 = [&](size_t i) { return uint32_t(B(i)) << 16 | uint32_t(B(i + 1)) << 8 | B(i + 2); };

  RxDesc& d = out.desc;
  d.ethertype = be16(12);
  d.ipv6 = d.ethertype == roce::kEtherTypeIpv6;
  const bool v6 = d.ipv6;
  d.frame_len = uint16_t(n);
  d.eth_dst = uint64_t(be16(0)) << 32 | uint64_t(be16(2)) << 16 | be16(4);
  d.eth_src = uint64_t(be16(6)) << 32 | uint64_t(be16(8)) << 16 | be16(10);
  // IP header at the offsets of IHL 5 (IPv4) or the fixed IPv6 header.
  const size_t iph = v6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen;
  if (v6) {
    d.tos = uint8_t((B(14) & 0x0F) << 4 | B(15) >> 4);
    d.flow_label = uint32_t(B(15) & 0x0F) << 16 | uint32_t(B(16)) << 8 | B(17);
    d.ip_len = be16(18);
    d.ttl = B(21);
    for (size_t j = 0; j < 16; ++j) {
      d.ip_src[j] = B(22 + j);
      d.ip_dst[j] = B(38 + j);
    }
  } else {
    d.ihl = uint8_t(B(14) & 0x0F);
    d.tos = B(15);
    d.ip_len = be16(16);
    d.ip_id = be16(18);
    d.ip_frag = be16(20);
    d.ttl = B(22);
    d.ip_csum = be16(24);
    for (size_t j = 0; j < 4; ++j) {
      d.ip_src[12 + j] = B(26 + j);
      d.ip_dst[12 + j] = B(30 + j);
    }
  }
  const size_t u = roce::kEthHdrLen + iph, t = u + roce::kUdpHdrLen;
  d.udp_sport = be16(u);
  d.udp_dport = be16(u + 2);
  d.udp_len = be16(u + 4);
  d.udp_csum = be16(u + 6);
  d.opcode = B(t);
  d.se = B(t + 1) & 0x80;
  d.mig = B(t + 1) & 0x40;
  d.pad_cnt = uint8_t((B(t + 1) >> 4) & 3);
  d.tver = uint8_t(B(t + 1) & 0x0F);
  d.pkey = be16(t + 2);
  d.bth_b4 = B(t + 4);
  d.dest_qp = be24(t + 5);
  d.ack_req = B(t + 8) & 0x80;
  d.resv7 = uint8_t(B(t + 8) & 0x7F);
  d.psn = be24(t + 9);
  const roce::OpcodeInfo* oi = roce::opcode_info(d.opcode);
  d.ext_len = oi ? oi->ext_len : 0;
  for (size_t i = 0; i < d.ext_len; ++i) d.ext[i] = B(t + roce::kBthLen + i);
  const size_t hdr_len = t + roce::kBthLen + d.ext_len;
  d.hdr_len = uint8_t(hdr_len);
  const size_t ip_end = v6 ? roce::kEthHdrLen + roce::kIpv6HdrLen + d.ip_len : roce::kEthHdrLen + d.ip_len;
  for (size_t j = 0; j < 4; ++j) d.icrc |= uint32_t(B(ip_end - 4 + j)) << (8 * j);

  // Syndrome (SEAM.md): each bit on its own.
  const bool len_hdr = (!v6 && d.ip_len < roce::kIpv4HdrLen) ||
                       int64_t(d.udp_len) != int64_t(ip_end) - int64_t(u) ||
                       ip_end < hdr_len + roce::kIcrcLen + d.pad_cnt;
  const bool len_bad = len_hdr || ip_end > n || n < hdr_len + roce::kIcrcLen;
  const bool hdr_bad = (!v6 && d.ihl != 5) || !oi;
  uint32_t syn = 0;
  if (!v6 && d.ihl == 5 && roce::ipv4_checksum(f + roce::kEthHdrLen) != d.ip_csum) syn |= kSynIpChecksum;
  if (len_bad) syn |= kSynLength;
  if (hdr_bad) syn |= kSynHeader;
  if (!len_bad && !hdr_bad && roce::compute_icrc(f, ip_end - roce::kIcrcLen) != d.icrc) syn |= kSynIcrc;
  if (bad_fcs) syn |= kSynFcs;
  d.syndrome = syn;

  // Payload: [hdr_len, min(pay_end, n)) unless the headers are bad.
  if (!len_hdr && !hdr_bad) {
    const size_t pay_end = std::min(ip_end - roce::kIcrcLen - d.pad_cnt, n);
    if (pay_end > hdr_len) out.payload.assign(f + hdr_len, f + pay_end);
  }
  d.payload_len = uint16_t(out.payload.size());
  return out;
}

roce::Frame frame_from_rx_desc(const RxDesc& d, const roce::Bytes& payload) {
  roce::Frame fr;
  for (int i = 0; i < 6; ++i) {
    fr.eth.dst.b[i] = uint8_t(d.eth_dst >> (40 - 8 * i));
    fr.eth.src.b[i] = uint8_t(d.eth_src >> (40 - 8 * i));
  }
  fr.eth.ethertype = d.ethertype;
  fr.ipv6 = d.ipv6;
  if (d.ipv6) {
    fr.ip6.traffic_class = d.tos;
    fr.ip6.flow_label = d.flow_label & 0xFFFFF;
    fr.ip6.payload_len = d.ip_len;
    fr.ip6.next_header = roce::kIpProtoUdp;
    fr.ip6.hop_limit = d.ttl;
    std::copy(d.ip_src.begin(), d.ip_src.end(), fr.ip6.src.b.begin());
    std::copy(d.ip_dst.begin(), d.ip_dst.end(), fr.ip6.dst.b.begin());
  } else {
    fr.ip4.tos = d.tos;
    fr.ip4.total_len = d.ip_len;
    fr.ip4.id = d.ip_id;
    fr.ip4.flags = uint8_t(d.ip_frag >> 13);
    fr.ip4.frag_off = uint16_t(d.ip_frag & 0x1FFF);
    fr.ip4.ttl = d.ttl;
    fr.ip4.proto = roce::kIpProtoUdp;
    fr.ip4.checksum = d.ip_csum;
    fr.ip4.src.v = roce::get_be32(d.ip_src.data() + 12);
    fr.ip4.dst.v = roce::get_be32(d.ip_dst.data() + 12);
  }
  fr.udp = roce::UdpHdr{d.udp_sport, d.udp_dport, d.udp_len, d.udp_csum};
  roce::Bth& b = fr.bth;
  b.opcode = d.opcode;
  b.se = d.se;
  b.mig = d.mig;
  b.pad_cnt = d.pad_cnt & 3;
  b.tver = d.tver & 0x0F;
  b.pkey = d.pkey;
  b.resv8a = d.bth_b4;
  b.dest_qp = d.dest_qp & 0xFFFFFF;
  b.ack_req = d.ack_req;
  b.resv7 = d.resv7 & 0x7F;
  b.psn = d.psn & 0xFFFFFF;
  // Extension headers in IBTA order (as roce::decode reads them).
  if (const roce::OpcodeInfo* oi = roce::opcode_info(d.opcode)) {
    const uint8_t* p = d.ext.data();
    using roce::get_be24;
    using roce::get_be32;
    using roce::get_be64;
    if (oi->ext & roce::kExtDeth) {
      fr.deth = roce::Deth{get_be32(p), p[4], get_be24(p + 5)};
      p += roce::kDethLen;
    }
    if (oi->ext & roce::kExtReth) {
      fr.reth = roce::Reth{get_be64(p), get_be32(p + 8), get_be32(p + 12)};
      p += roce::kRethLen;
    }
    if (oi->ext & roce::kExtAtomicEth) {
      fr.atomic_eth = roce::AtomicEth{get_be64(p), get_be32(p + 8), get_be64(p + 12), get_be64(p + 20)};
      p += 28;
    }
    if (oi->ext & roce::kExtAeth) {
      fr.aeth = roce::Aeth{p[0], get_be24(p + 1)};
      p += roce::kAethLen;
    }
    if (oi->ext & roce::kExtAtomicAckEth) {
      fr.atomic_ack_eth = roce::AtomicAckEth{get_be64(p)};
      p += 8;
    }
    if (oi->ext & roce::kExtImmDt) {
      fr.immdt = get_be32(p);
      p += roce::kImmDtLen;
    }
    if (oi->ext & roce::kExtIeth) fr.ieth = get_be32(p);
  }
  fr.payload = payload;
  fr.pad.assign(b.pad_cnt, 0);
  fr.icrc = d.icrc;
  return fr;
}

roce::Bytes rx_header_bytes(const RxDesc& d) {
  roce::Bytes h(d.hdr_len, 0);
  auto put = [&](size_t at, uint64_t v, size_t nbytes) {  // big-endian, bounded
    for (size_t i = 0; i < nbytes; ++i)
      if (at + i < h.size()) h[at + i] = uint8_t(v >> (8 * (nbytes - 1 - i)));
  };
  auto put_ip = [&](size_t at, const Ip& ip, size_t from) {
    for (size_t j = from; j < 16; ++j)
      if (at + j - from < h.size()) h[at + j - from] = ip[j];
  };
  put(0, d.eth_dst, 6);
  put(6, d.eth_src, 6);
  put(12, d.ethertype, 2);
  size_t u;
  if (d.ipv6) {
    put(14, uint64_t(6) << 28 | uint64_t(d.tos) << 20 | (d.flow_label & 0xFFFFF), 4);
    put(18, d.ip_len, 2);
    put(20, roce::kIpProtoUdp, 1);
    put(21, d.ttl, 1);
    put_ip(22, d.ip_src, 0);
    put_ip(38, d.ip_dst, 0);
    u = 54;
  } else {
    put(14, 0x40u | (d.ihl & 0x0F), 1);
    put(15, d.tos, 1);
    put(16, d.ip_len, 2);
    put(18, d.ip_id, 2);
    put(20, d.ip_frag, 2);
    put(22, d.ttl, 1);
    put(23, roce::kIpProtoUdp, 1);
    put(24, d.ip_csum, 2);
    put_ip(26, d.ip_src, 12);
    put_ip(30, d.ip_dst, 12);
    u = 34;
  }
  put(u, d.udp_sport, 2);
  put(u + 2, d.udp_dport, 2);
  put(u + 4, d.udp_len, 2);
  put(u + 6, d.udp_csum, 2);
  const size_t t = u + 8;
  put(t, d.opcode, 1);
  put(t + 1, uint64_t((d.se ? 0x80 : 0) | (d.mig ? 0x40 : 0) | (d.pad_cnt & 3) << 4 | (d.tver & 0x0F)), 1);
  put(t + 2, d.pkey, 2);
  put(t + 4, d.bth_b4, 1);
  put(t + 5, d.dest_qp & 0xFFFFFF, 3);
  put(t + 8, uint64_t((d.ack_req ? 0x80 : 0) | (d.resv7 & 0x7F)), 1);
  put(t + 9, d.psn & 0xFFFFFF, 3);
  for (size_t i = 0; i < d.ext_len && i < kMaxExt; ++i)
    if (t + 12 + i < h.size()) h[t + 12 + i] = d.ext[i];
  if (h.size() > d.frame_len) h.resize(d.frame_len);
  return h;
}

std::string rx_desc_diff(const RxDesc& a, const RxDesc& b) {
  if (a == b) return "";  // the common case, without building the field table
  struct Num {
    const char* name;
    std::function<uint64_t(const RxDesc&)> get;
  };
  // In the descriptor's bit order (SEAM.md), the byte fields at their place.
  const std::vector<Num> nums = {
      {"syndrome", [](const RxDesc& d) { return d.syndrome; }},
      {"ipv6", [](const RxDesc& d) { return d.ipv6; }},
      {"ihl", [](const RxDesc& d) { return d.ihl; }},
      {"hdr_len", [](const RxDesc& d) { return d.hdr_len; }},
      {"payload_len", [](const RxDesc& d) { return d.payload_len; }},
      {"frame_len", [](const RxDesc& d) { return d.frame_len; }},
      {"eth_dst", [](const RxDesc& d) { return d.eth_dst; }},
      {"eth_src", [](const RxDesc& d) { return d.eth_src; }},
      {"ethertype", [](const RxDesc& d) { return d.ethertype; }},
  };
  const std::vector<Num> nums2 = {
      {"tos", [](const RxDesc& d) { return d.tos; }},
      {"ttl", [](const RxDesc& d) { return d.ttl; }},
      {"flow_label", [](const RxDesc& d) { return d.flow_label; }},
      {"ip_len", [](const RxDesc& d) { return d.ip_len; }},
      {"ip_id", [](const RxDesc& d) { return d.ip_id; }},
      {"ip_frag", [](const RxDesc& d) { return d.ip_frag; }},
      {"ip_csum", [](const RxDesc& d) { return d.ip_csum; }},
      {"udp_sport", [](const RxDesc& d) { return d.udp_sport; }},
      {"udp_dport", [](const RxDesc& d) { return d.udp_dport; }},
      {"udp_len", [](const RxDesc& d) { return d.udp_len; }},
      {"udp_csum", [](const RxDesc& d) { return d.udp_csum; }},
      {"opcode", [](const RxDesc& d) { return d.opcode; }},
      {"se", [](const RxDesc& d) { return d.se; }},
      {"mig", [](const RxDesc& d) { return d.mig; }},
      {"pad_cnt", [](const RxDesc& d) { return d.pad_cnt; }},
      {"tver", [](const RxDesc& d) { return d.tver; }},
      {"pkey", [](const RxDesc& d) { return d.pkey; }},
      {"bth_b4", [](const RxDesc& d) { return d.bth_b4; }},
      {"dest_qp", [](const RxDesc& d) { return d.dest_qp; }},
      {"ack_req", [](const RxDesc& d) { return d.ack_req; }},
      {"resv7", [](const RxDesc& d) { return d.resv7; }},
      {"psn", [](const RxDesc& d) { return d.psn; }},
      {"ext_len", [](const RxDesc& d) { return d.ext_len; }},
  };
  char buf[96];
  auto num_diff = [&](const std::vector<Num>& v) -> std::string {
    for (const Num& x : v) {
      const uint64_t va = x.get(a), vb = x.get(b);
      if (va != vb) {
        std::snprintf(buf, sizeof buf, "%s: 0x%llx vs 0x%llx", x.name, static_cast<unsigned long long>(va),
                      static_cast<unsigned long long>(vb));
        return buf;
      }
    }
    return "";
  };
  std::string r = num_diff(nums);
  if (!r.empty()) return r;
  if (a.ip_src != b.ip_src) return "ip_src: " + hex_bytes(a.ip_src.data(), 16) + " vs " + hex_bytes(b.ip_src.data(), 16);
  if (a.ip_dst != b.ip_dst) return "ip_dst: " + hex_bytes(a.ip_dst.data(), 16) + " vs " + hex_bytes(b.ip_dst.data(), 16);
  r = num_diff(nums2);
  if (!r.empty()) return r;
  if (a.ext != b.ext) return "ext: " + hex_bytes(a.ext.data(), kMaxExt) + " vs " + hex_bytes(b.ext.data(), kMaxExt);
  if (a.icrc != b.icrc) {
    std::snprintf(buf, sizeof buf, "icrc: 0x%08x vs 0x%08x", a.icrc, b.icrc);
    return buf;
  }
  if (!(a == b)) return "reserved bits";  // cannot happen: every field is compared above
  return "";
}

}  // namespace ernic::seam
