// tb/fuzz: model/roce's RoCEv2 codec (packet.h: encode / decode / is_roce).
// Byte 0 picks the mode:
//   even: the rest is wire bytes. decode() never reads outside them; a frame
//     that decodes re-encodes byte-exact (every fill option off) to the bytes
//     the IP length covers; re-encoding with every fill option on gives a
//     frame that decodes to the same fields with correct lengths, checksum,
//     pad and ICRC; is_roce() agrees with decode().
//   odd: the rest builds a Frame (any known opcode, IPv4 or IPv6, every
//     field): decode(encode(f)) == f for every field encode writes.
#include <cstring>
#include <vector>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/fuzz/fuzz_check.h"

using namespace roce;
using ernic_fuzz::hex;

namespace {

const std::vector<uint8_t>& known_opcodes() {
  static const std::vector<uint8_t> v = [] {
    std::vector<uint8_t> r;
    for (int c = 0; c < 256; ++c)
      if (opcode_info(uint8_t(c))) r.push_back(uint8_t(c));
    return r;
  }();
  return v;
}

// Field-by-field equality of what encode() writes and decode() reads,
// lengths, checksum, pad and ICRC included.
void expect_same(const Frame& a, const Frame& b, const char* what) {
  FUZZ_CHECK(a.eth.dst == b.eth.dst && a.eth.src == b.eth.src && a.eth.ethertype == b.eth.ethertype, "%s: eth", what);
  FUZZ_CHECK(a.ipv6 == b.ipv6, "%s: ipv6", what);
  if (!a.ipv6) {
    const Ipv4Hdr &x = a.ip4, &y = b.ip4;
    FUZZ_CHECK(x.tos == y.tos && x.total_len == y.total_len && x.id == y.id && x.flags == y.flags &&
                   x.frag_off == y.frag_off && x.ttl == y.ttl && x.proto == y.proto && x.checksum == y.checksum &&
                   x.src == y.src && x.dst == y.dst,
               "%s: IPv4 header", what);
  } else {
    const Ipv6Hdr &x = a.ip6, &y = b.ip6;
    FUZZ_CHECK(x.traffic_class == y.traffic_class && x.flow_label == y.flow_label && x.payload_len == y.payload_len &&
                   x.next_header == y.next_header && x.hop_limit == y.hop_limit && x.src == y.src && x.dst == y.dst,
               "%s: IPv6 header", what);
  }
  FUZZ_CHECK(a.udp.sport == b.udp.sport && a.udp.dport == b.udp.dport && a.udp.len == b.udp.len &&
                 a.udp.checksum == b.udp.checksum,
             "%s: UDP", what);
  const Bth &p = a.bth, &q = b.bth;
  FUZZ_CHECK(p.opcode == q.opcode && p.se == q.se && p.mig == q.mig && p.pad_cnt == q.pad_cnt && p.tver == q.tver &&
                 p.pkey == q.pkey && p.resv8a == q.resv8a && p.dest_qp == q.dest_qp && p.ack_req == q.ack_req &&
                 p.resv7 == q.resv7 && p.psn == q.psn,
             "%s: BTH", what);
  auto same_opt = [](const auto& x, const auto& y, auto eq) { return x.has_value() == y.has_value() && (!x || eq(*x, *y)); };
  FUZZ_CHECK(same_opt(a.deth, b.deth, [](const Deth& x, const Deth& y) {
               return x.qkey == y.qkey && x.resv == y.resv && x.src_qp == y.src_qp; }), "%s: DETH", what);
  FUZZ_CHECK(same_opt(a.reth, b.reth, [](const Reth& x, const Reth& y) {
               return x.va == y.va && x.rkey == y.rkey && x.dma_len == y.dma_len; }), "%s: RETH", what);
  FUZZ_CHECK(same_opt(a.atomic_eth, b.atomic_eth, [](const AtomicEth& x, const AtomicEth& y) {
               return x.va == y.va && x.rkey == y.rkey && x.swap_add == y.swap_add && x.compare == y.compare; }),
             "%s: AtomicETH", what);
  FUZZ_CHECK(same_opt(a.aeth, b.aeth, [](const Aeth& x, const Aeth& y) {
               return x.syndrome == y.syndrome && x.msn == y.msn; }), "%s: AETH", what);
  FUZZ_CHECK(same_opt(a.atomic_ack_eth, b.atomic_ack_eth, [](const AtomicAckEth& x, const AtomicAckEth& y) {
               return x.orig == y.orig; }), "%s: AtomicAckETH", what);
  FUZZ_CHECK(a.immdt == b.immdt, "%s: ImmDt", what);
  FUZZ_CHECK(a.ieth == b.ieth, "%s: IETH", what);
  FUZZ_CHECK(a.payload == b.payload, "%s: payload (%zu vs %zu bytes)", what, a.payload.size(), b.payload.size());
  FUZZ_CHECK(a.pad == b.pad, "%s: pad", what);
  FUZZ_CHECK(a.icrc == b.icrc, "%s: ICRC %08x vs %08x", what, a.icrc, b.icrc);
}

void wire_bytes(const uint8_t* d, size_t n) {
  DecodeError err = DecodeError::None;
  const std::optional<Frame> f = decode(d, n, &err);
  FUZZ_CHECK(std::strcmp(decode_error_name(err), "?") != 0, "error name");
  if (!f) {
    FUZZ_CHECK(err != DecodeError::None, "a refused frame names its error");
    return;
  }
  FUZZ_CHECK(err == DecodeError::None, "a decoded frame has error None, got %s", decode_error_name(err));
  FUZZ_CHECK(is_roce(d, n) || (!f->ipv6 && f->ip4.frag_off != 0), "decode() took a frame is_roce() refuses");
  // The bytes the IP length covers.
  const size_t used = kEthHdrLen + (f->ipv6 ? kIpv6HdrLen + f->ip6.payload_len : f->ip4.total_len);
  FUZZ_CHECK(used <= n, "used %zu of %zu bytes", used, n);
  const OpcodeInfo* info = opcode_info(f->bth.opcode);
  FUZZ_CHECK(info, "decoded an unknown opcode 0x%02x", f->bth.opcode);
  // Extension headers: exactly the opcode's.
  FUZZ_CHECK(f->deth.has_value() == bool(info->ext & kExtDeth), "DETH presence");
  FUZZ_CHECK(f->reth.has_value() == bool(info->ext & kExtReth), "RETH presence");
  FUZZ_CHECK(f->aeth.has_value() == bool(info->ext & kExtAeth), "AETH presence");
  FUZZ_CHECK(f->immdt.has_value() == bool(info->ext & kExtImmDt), "ImmDt presence");
  FUZZ_CHECK(f->ieth.has_value() == bool(info->ext & kExtIeth), "IETH presence");
  FUZZ_CHECK(f->pad.size() == f->bth.pad_cnt, "pad %zu bytes, PadCnt %u", f->pad.size(), f->bth.pad_cnt);

  // Byte-exact re-encoding with nothing filled in.
  EncodeOptions raw;
  raw.fill_lengths = raw.fill_ip_checksum = raw.fill_pad = raw.fill_icrc = false;
  const Bytes again = encode(*f, raw);
  FUZZ_CHECK(again.size() == used && std::memcmp(again.data(), d, used) == 0,
             "re-encoding is not byte-exact: %zu bytes, want %zu\n  in:  %s\n  out: %s", again.size(), used,
             hex(d, used, 200).c_str(), hex(again.data(), again.size(), 200).c_str());
  const std::optional<Frame> g = decode(again);
  FUZZ_CHECK(g, "the re-encoded frame does not decode");
  expect_same(*f, *g, "decode(encode(decode(x)))");

  // Re-encoding with every fill on: a well-formed frame with the same fields.
  const Bytes filled = encode(*f);
  if (filled.size() - kEthHdrLen > 0xFFFF) return;  // lengths beyond 16 bits do not fit the headers
  const std::optional<Frame> h = decode(filled);
  FUZZ_CHECK(h, "the filled re-encoding does not decode");
  FUZZ_CHECK(h->payload == f->payload && h->bth.opcode == f->bth.opcode && h->bth.psn == f->bth.psn &&
                 h->bth.dest_qp == f->bth.dest_qp,
             "filled re-encoding changed a field");
  FUZZ_CHECK(h->pad.size() == (4 - f->payload.size() % 4) % 4, "fill_pad");
  FUZZ_CHECK(h->icrc == compute_icrc(filled.data(), filled.size() - kIcrcLen), "fill_icrc");
  if (!h->ipv6) FUZZ_CHECK(h->ip4.checksum == ipv4_checksum(filled.data() + kEthHdrLen), "fill_ip_checksum");
}

void structured(ernic_fuzz::Input& in) {
  Frame f;
  for (auto& b : f.eth.dst.b) b = in.u8();
  for (auto& b : f.eth.src.b) b = in.u8();
  f.ipv6 = in.flag();
  f.eth.ethertype = f.ipv6 ? kEtherTypeIpv6 : kEtherTypeIpv4;
  f.ip4.tos = in.u8();
  f.ip4.id = in.u16();
  f.ip4.flags = in.u8() & 7;
  f.ip4.frag_off = in.u16() & 0x1FFF;
  f.ip4.ttl = in.u8();
  f.ip4.src.v = in.u32();
  f.ip4.dst.v = in.u32();
  f.ip6.traffic_class = in.u8();
  f.ip6.flow_label = in.u32() & 0xFFFFF;
  f.ip6.hop_limit = in.u8();
  for (auto& b : f.ip6.src.b) b = in.u8();
  for (auto& b : f.ip6.dst.b) b = in.u8();
  f.udp.sport = in.u16();
  f.udp.checksum = in.u16();
  const auto& ops = known_opcodes();
  f.bth.opcode = ops[in.u8() % ops.size()];
  f.bth.se = in.flag();
  f.bth.mig = in.flag();
  f.bth.tver = in.u8() & 0x0F;
  f.bth.pkey = in.u16();
  f.bth.resv8a = in.u8();
  f.bth.dest_qp = in.u32() & 0xFFFFFF;
  f.bth.ack_req = in.flag();
  f.bth.resv7 = in.u8() & 0x7F;
  f.bth.psn = in.u32() & 0xFFFFFF;
  const uint16_t ext = opcode_info(f.bth.opcode)->ext;
  // Each header the opcode has: present with values, or absent (written as
  // zeros); headers it lacks are given too (encode must leave them out).
  const uint8_t present = in.u8();
  if (present & 1) f.deth = Deth{in.u32(), in.u8(), in.u32() & 0xFFFFFF};
  if (present & 2) f.reth = Reth{in.u64(), in.u32(), in.u32()};
  if (present & 4) f.atomic_eth = AtomicEth{in.u64(), in.u32(), in.u64(), in.u64()};
  if (present & 8) f.aeth = Aeth{in.u8(), in.u32() & 0xFFFFFF};
  if (present & 16) f.atomic_ack_eth = AtomicAckEth{in.u64()};
  if (present & 32) f.immdt = in.u32();
  if (present & 64) f.ieth = in.u32();
  f.payload = in.bytes(4096);
  const bool own_icrc = in.flag();
  f.icrc = in.u32();

  EncodeOptions opt;
  opt.fill_icrc = !own_icrc;
  const Bytes w = encode(f, opt);
  const size_t ip_len = f.ipv6 ? kIpv6HdrLen : kIpv4HdrLen;
  const size_t ext_len = opcode_info(f.bth.opcode)->ext_len;
  const size_t pad = (4 - f.payload.size() % 4) % 4;
  FUZZ_CHECK(w.size() == kEthHdrLen + ip_len + kUdpHdrLen + kBthLen + ext_len + f.payload.size() + pad + kIcrcLen,
             "encoded size %zu", w.size());
  DecodeError err;
  const std::optional<Frame> g = decode(w.data(), w.size(), &err);
  FUZZ_CHECK(g, "decode(encode(f)) failed: %s (opcode 0x%02x)", decode_error_name(err), f.bth.opcode);

  // What decode must give back: f with the fills applied and the opcode's
  // headers present (zeros when f lacked them), the others absent.
  Frame want = f;
  const size_t udp_len = kUdpHdrLen + kBthLen + ext_len + f.payload.size() + pad + kIcrcLen;
  want.ip4.proto = kIpProtoUdp;
  want.ip4.total_len = uint16_t(kIpv4HdrLen + udp_len);
  want.ip4.checksum = ipv4_checksum(w.data() + kEthHdrLen);
  want.ip6.payload_len = uint16_t(udp_len);
  want.ip6.next_header = kIpProtoUdp;
  if (f.ipv6) want.ip4 = g->ip4;  // not on the wire
  else want.ip6 = g->ip6;
  want.udp.dport = kRoceUdpPort;
  want.udp.len = uint16_t(udp_len);
  want.bth.pad_cnt = uint8_t(pad);
  want.pad.assign(pad, 0);
  want.icrc = own_icrc ? f.icrc : compute_icrc(w.data(), w.size() - kIcrcLen);
  auto keep = [ext](auto& o, uint16_t bit, auto zero) {
    if (ext & bit) { if (!o) o = zero; } else o.reset();
  };
  keep(want.deth, kExtDeth, Deth{});
  keep(want.reth, kExtReth, Reth{});
  keep(want.atomic_eth, kExtAtomicEth, AtomicEth{});
  keep(want.aeth, kExtAeth, Aeth{});
  keep(want.atomic_ack_eth, kExtAtomicAckEth, AtomicAckEth{});
  keep(want.immdt, kExtImmDt, uint32_t(0));
  keep(want.ieth, kExtIeth, uint32_t(0));
  expect_same(want, *g, "decode(encode(f))");
  FUZZ_CHECK(is_roce(w.data(), w.size()) || f.ip4.frag_off != 0, "is_roce refuses an encoded frame");
  FUZZ_CHECK(stored_icrc(w.data(), w.size()) == want.icrc, "stored_icrc");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    // A copy of exactly the bytes, so that a read past them is caught.
    std::vector<uint8_t> b(data + 1, data + size);
    wire_bytes(b.empty() ? nullptr : b.data(), b.size());
  } else {
    ernic_fuzz::Input in(data + 1, size - 1);
    structured(in);
  }
  return 0;
}
