// The C++ reference model of rtl/roce_tx (see roce_tx_ref.h).
#include "model/datapath/roce_tx_ref.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"

namespace ernic::seam {
namespace {

constexpr size_t kAtomicEthLen = 28, kAtomicAckEthLen = 8;

size_t ext_bytes(const TxDesc& d) { return std::min<size_t>(d.ext_len, kMaxExt); }

roce::MacAddr mac_of(uint64_t v) {
  roce::MacAddr m;
  for (int i = 0; i < 6; ++i) m.b[size_t(i)] = uint8_t(v >> (8 * (5 - i)));
  return m;
}
uint64_t mac_num(const roce::MacAddr& m) {
  uint64_t v = 0;
  for (uint8_t b : m.b) v = v << 8 | b;
  return v;
}

// The extension headers of `ext` (opcode table flags) read from wire bytes,
// the inverse of roce::encode's writer.
void read_ext(const uint8_t* p, uint16_t ext, roce::Frame& f) {
  using namespace roce;
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
  if (ext & kExtIeth) f.ieth = get_be32(p);
}

// Offset of the BTH in a frame.
size_t bth_offset(bool ipv6) {
  return roce::kEthHdrLen + (ipv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen) + roce::kUdpHdrLen;
}

}  // namespace

TxShape tx_shape(const TxDesc& d) {
  TxShape s;
  const size_t p = d.payload_len;
  if (d.raw) {
    s.body_len = p;
  } else {
    s.header_len = bth_offset(d.ipv6) + roce::kBthLen + ext_bytes(d);
    s.pad_len = (4 - p % 4) % 4;
    s.body_len = s.header_len + p + s.pad_len;
  }
  s.frame_len = s.body_len + roce::kIcrcLen;
  s.payload_beats = (p + 63) / 64;
  s.body_beats = std::max<size_t>(1, (s.body_len + 63) / 64);
  s.out_beats = (s.frame_len + 63) / 64;
  const size_t header_beats = s.header_len >= 64 ? 1 : 0;  // beats with no payload byte
  s.flush = s.body_beats > header_beats + s.payload_beats;
  return s;
}

roce::Bytes tx_frame(const TxDesc& d, const uint8_t* payload, size_t len, uint16_t udp_sport) {
  if (len != d.payload_len)
    throw std::invalid_argument("roce_tx: payload of " + std::to_string(len) + " bytes, descriptor says " +
                                std::to_string(d.payload_len));
  const TxShape shape = tx_shape(d);
  if (shape.body_len > kTxMaxBody)
    throw std::invalid_argument("roce_tx: frame of " + std::to_string(shape.body_len) +
                                " bytes exceeds the beat buffer (" + std::to_string(kTxMaxBody) + ")");
  if (d.raw) {
    roce::Bytes out(payload, payload + len);
    out.resize(len + roce::kIcrcLen);
    roce::put_le32(out.data() + len, roce::compute_icrc(out.data(), len));
    return out;
  }

  roce::Frame f;
  f.eth.dst = mac_of(d.eth_dst);
  f.eth.src = mac_of(d.eth_src);
  f.ipv6 = d.ipv6;
  f.eth.ethertype = d.ipv6 ? roce::kEtherTypeIpv6 : roce::kEtherTypeIpv4;
  if (d.ipv6) {
    f.ip6.traffic_class = d.tos;
    f.ip6.flow_label = d.flow_label & 0xFFFFF;
    f.ip6.hop_limit = d.ttl;
    std::copy(d.ip_src.begin(), d.ip_src.end(), f.ip6.src.b.begin());
    std::copy(d.ip_dst.begin(), d.ip_dst.end(), f.ip6.dst.b.begin());
  } else {
    f.ip4.tos = d.tos;
    f.ip4.id = d.ip_id;
    f.ip4.flags = d.ip_flags & 7;
    f.ip4.ttl = d.ttl;
    f.ip4.src.v = roce::get_be32(d.ip_src.data() + 12);
    f.ip4.dst.v = roce::get_be32(d.ip_dst.data() + 12);
  }
  f.udp.sport = udp_sport;
  f.bth.opcode = d.opcode;
  f.bth.se = d.se;
  f.bth.mig = d.mig;
  f.bth.tver = d.tver & 0x0F;
  f.bth.pkey = d.pkey;
  f.bth.resv8a = d.bth_b4;
  f.bth.dest_qp = d.dest_qp & 0xFFFFFF;
  f.bth.ack_req = d.ack_req;
  f.bth.resv7 = d.resv7 & 0x7F;
  f.bth.psn = d.psn & 0xFFFFFF;

  const size_t e = ext_bytes(d);
  const roce::OpcodeInfo* info = roce::opcode_info(d.opcode);
  const size_t table_ext = info ? info->ext_len : 0;
  if (e == table_ext) {
    // The usual case: the opcode's own extension headers.
    if (info) read_ext(d.ext.data(), info->ext, f);
    return roce::encode(f, payload, len);
  }
  // ext_len differs from the opcode's table entry: the RTL still places
  // ext_len bytes after the BTH. Encode them as the payload of an opcode
  // without extension headers, with the pad of the real payload, then put
  // the opcode back and recompute the ICRC.
  f.bth.opcode = roce::op::RC_SEND_MIDDLE;
  f.payload.assign(d.ext.begin(), d.ext.begin() + ptrdiff_t(e));
  f.payload.insert(f.payload.end(), payload, payload + len);
  f.bth.pad_cnt = uint8_t(shape.pad_len);
  f.pad.assign(shape.pad_len, 0);
  roce::EncodeOptions o;
  o.fill_pad = false;
  roce::Bytes out = roce::encode(f, o);
  out[bth_offset(d.ipv6)] = d.opcode;
  roce::put_le32(out.data() + out.size() - 4, roce::compute_icrc(out.data(), out.size() - 4));
  return out;
}

TxDesc tx_desc_from_frame(const roce::Frame& f) {
  TxDesc d;
  d.raw = false;
  d.ipv6 = f.ipv6;
  if (f.payload.size() > 0xFFFF)
    throw std::invalid_argument("roce_tx: payload of " + std::to_string(f.payload.size()) + " bytes");
  d.payload_len = uint16_t(f.payload.size());
  d.eth_dst = mac_num(f.eth.dst);
  d.eth_src = mac_num(f.eth.src);
  if (f.ipv6) {
    std::copy(f.ip6.src.b.begin(), f.ip6.src.b.end(), d.ip_src.begin());
    std::copy(f.ip6.dst.b.begin(), f.ip6.dst.b.end(), d.ip_dst.begin());
    d.tos = f.ip6.traffic_class;
    d.ttl = f.ip6.hop_limit;
    d.flow_label = f.ip6.flow_label & 0xFFFFF;
  } else {
    roce::put_be32(d.ip_src.data() + 12, f.ip4.src.v);
    roce::put_be32(d.ip_dst.data() + 12, f.ip4.dst.v);
    d.tos = f.ip4.tos;
    d.ttl = f.ip4.ttl;
    d.ip_id = f.ip4.id;
    d.ip_flags = f.ip4.flags & 7;
  }
  d.opcode = f.bth.opcode;
  d.se = f.bth.se;
  d.mig = f.bth.mig;
  d.tver = f.bth.tver & 0x0F;
  d.pkey = f.bth.pkey;
  d.bth_b4 = f.bth.resv8a;
  d.dest_qp = f.bth.dest_qp & 0xFFFFFF;
  d.ack_req = f.bth.ack_req;
  d.resv7 = f.bth.resv7 & 0x7F;
  d.psn = f.bth.psn & 0xFFFFFF;
  // The extension headers exactly as the encoder writes them.
  const roce::OpcodeInfo* info = roce::opcode_info(f.bth.opcode);
  d.ext_len = info ? info->ext_len : 0;
  if (d.ext_len) {
    roce::Frame h = f;
    h.payload.clear();
    const roce::Bytes wire = roce::encode(h);
    const size_t at = bth_offset(f.ipv6) + roce::kBthLen;
    std::copy(wire.begin() + ptrdiff_t(at), wire.begin() + ptrdiff_t(at + d.ext_len), d.ext.begin());
  }
  return d;
}

bool tx_desc_fits(const roce::Frame& f, uint16_t udp_sport) {
  const uint16_t et = f.eth.ethertype;
  if (et != roce::kEtherTypeIpv4 && et != roce::kEtherTypeIpv6) return false;
  if (f.udp.sport != udp_sport || f.udp.dport != roce::kRoceUdpPort || f.udp.checksum != 0) return false;
  if (f.ipv6 ? f.ip6.next_header != roce::kIpProtoUdp
             : (f.ip4.frag_off != 0 || f.ip4.proto != roce::kIpProtoUdp))
    return false;
  if (f.payload.size() > 0xFFFF) return false;
  return tx_shape(tx_desc_from_frame(f)).body_len <= kTxMaxBody;
}

TxDesc tx_desc_raw(size_t len) {
  if (len > kTxMaxBody)
    throw std::invalid_argument("roce_tx: raw frame of " + std::to_string(len) + " bytes exceeds " +
                                std::to_string(kTxMaxBody));
  TxDesc d;
  d.raw = true;
  d.payload_len = uint16_t(len);
  return d;
}

RoceTxTiming::Frame RoceTxTiming::push(const TxDesc& d, uint64_t desc, const std::vector<uint64_t>& pay_valid) {
  const TxShape s = tx_shape(d);
  if (pay_valid.size() < s.payload_beats)
    throw std::invalid_argument("RoceTxTiming: " + std::to_string(pay_valid.size()) + " payload edges for " +
                                std::to_string(s.payload_beats) + " beats");
  Frame f;
  f.load = any_ ? std::max(desc, prev_end_) : desc;
  const size_t header_beats = s.header_len >= 64 ? 1 : 0;
  uint64_t t = f.load;
  for (size_t i = 0; i < s.body_beats; ++i) {
    t += 1;
    if (i >= header_beats && i < header_beats + s.payload_beats) {
      t = std::max(t, pay_valid[i - header_beats]);
      f.pay.push_back(t);
    }
  }
  f.end = t;
  const uint64_t commit = f.end + kTxCommitAfterEnd;
  const uint64_t start = any_ ? std::max(commit, next_start_) : commit;
  f.first_out = start + 1;
  f.last_out = start + s.out_beats;
  next_start_ = start + s.out_beats;
  prev_end_ = f.end;
  any_ = true;
  return f;
}

}  // namespace ernic::seam
