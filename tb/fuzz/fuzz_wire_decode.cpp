// tb/fuzz: model/roce's capture-grade decoder (wire_decode.h). Byte 0 picks
// decode_wire (even: an Ethernet frame) or decode_wire_ib (odd: a native
// InfiniBand packet); the rest is the bytes, in a buffer of exactly their
// size. Invariants: no read outside them; a status and, unless Ok, a reason;
// an Ok frame accounts for every byte (used + trailing = length), its
// opcode entry is the BTH's, its BTH lies inside the used bytes;
// as_plain_rocev2 gives, for RC/UD/CNP opcodes and only for them, bytes that
// packet.h's decode() takes with the same BTH, extension headers, payload
// and pad, and a correct ICRC; and whatever packet.h's decode() takes,
// decode_wire takes too (Ok, RoCEv2) with the same fields.
#include <cstring>
#include <vector>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/wire_decode.h"
#include "tb/fuzz/fuzz_check.h"

using namespace roce;

namespace {

bool same_bth(const Bth& p, const Bth& q) {
  return p.opcode == q.opcode && p.se == q.se && p.mig == q.mig && p.pad_cnt == q.pad_cnt && p.tver == q.tver &&
         p.pkey == q.pkey && p.dest_qp == q.dest_qp && p.ack_req == q.ack_req && p.psn == q.psn;
}

bool same_ext(const Frame& a, const Frame& b) {
  auto eq = [](const auto& x, const auto& y, auto f) { return x.has_value() == y.has_value() && (!x || f(*x, *y)); };
  return eq(a.deth, b.deth, [](const Deth& x, const Deth& y) { return x.qkey == y.qkey && x.src_qp == y.src_qp; }) &&
         eq(a.reth, b.reth,
            [](const Reth& x, const Reth& y) { return x.va == y.va && x.rkey == y.rkey && x.dma_len == y.dma_len; }) &&
         eq(a.aeth, b.aeth, [](const Aeth& x, const Aeth& y) { return x.syndrome == y.syndrome && x.msn == y.msn; }) &&
         eq(a.atomic_eth, b.atomic_eth,
            [](const AtomicEth& x, const AtomicEth& y) {
              return x.va == y.va && x.rkey == y.rkey && x.swap_add == y.swap_add && x.compare == y.compare;
            }) &&
         eq(a.atomic_ack_eth, b.atomic_ack_eth,
            [](const AtomicAckEth& x, const AtomicAckEth& y) { return x.orig == y.orig; }) &&
         a.immdt == b.immdt && a.ieth == b.ieth;
}

void check(const uint8_t* d, size_t n, bool ib) {
  const WireDecode r = ib ? decode_wire_ib(d, n) : decode_wire(d, n);
  if (r.status != WireStatus::Ok) {
    FUZZ_CHECK(!r.why.empty(), "a refused frame names a reason");
  } else {
    const WireFrame& w = r.w;
    FUZZ_CHECK(w.used + w.trailing == n, "used %zu + trailing %zu != %zu", w.used, w.trailing, n);
    FUZZ_CHECK(w.op && w.op->code == w.f.bth.opcode, "opcode entry");
    FUZZ_CHECK(&wire_opcode(w.f.bth.opcode) == w.op, "opcode entry is the table's");
    FUZZ_CHECK(w.bth_off + kBthLen <= w.used, "BTH at %zu beyond %zu used bytes", w.bth_off, w.used);
    FUZZ_CHECK(d[w.bth_off] == w.f.bth.opcode, "the BTH's offset");
    // The pad is PadCnt bytes; an unknown opcode whose PadCnt exceeds the
    // bytes after its BTH is taken whole as payload (wire_decode.h).
    FUZZ_CHECK(w.f.pad.size() == w.f.bth.pad_cnt || (!w.op->known && w.f.pad.empty() && w.f.payload.size() < w.f.bth.pad_cnt),
               "pad %zu bytes, PadCnt %u", w.f.pad.size(), w.f.bth.pad_cnt);
    FUZZ_CHECK(ib == (w.encap == Encap::Ib), "encapsulation");
    if (w.op->known) FUZZ_CHECK(!w.op->name.empty() && w.op->name.rfind("UNKNOWN", 0) != 0, "known name");
    const Bytes plain = as_plain_rocev2(d, n, w);
    const bool codec_speaks = w.op->known && opcode_info(w.f.bth.opcode) != nullptr;
    FUZZ_CHECK(plain.empty() != codec_speaks, "as_plain_rocev2 gave %zu bytes for %s", plain.size(),
               w.op->name.c_str());
    if (!plain.empty()) {
      DecodeError err;
      const std::optional<Frame> p = decode(plain, &err);
      FUZZ_CHECK(p, "as_plain_rocev2's bytes do not decode: %s (%s, encap %d)", decode_error_name(err),
                 w.op->name.c_str(), int(w.encap));
      FUZZ_CHECK(same_bth(p->bth, w.f.bth), "as_plain_rocev2 changed the BTH");
      FUZZ_CHECK(same_ext(*p, w.f), "as_plain_rocev2 changed an extension header");
      FUZZ_CHECK(p->payload == w.f.payload, "as_plain_rocev2 changed the payload");
      FUZZ_CHECK(p->pad == w.f.pad, "as_plain_rocev2 changed the pad");
      FUZZ_CHECK(p->icrc == compute_icrc(plain.data(), plain.size() - kIcrcLen), "as_plain_rocev2's ICRC");
    }
  }
  if (ib) return;
  // What the simulator's codec takes, the capture decoder takes alike, but
  // IPv4 fragments: packet.h's decode() reads their fields and leaves them
  // to the NIC's validation (PG332 drops them, syndrome bit 9; the RX
  // datapath tests feed such frames), decode_wire calls them not RoCE (a
  // later fragment) or malformed (more-fragments set).
  const std::optional<Frame> f = decode(d, n);
  if (f && !f->ipv6 && ((f->ip4.flags & 1) || f->ip4.frag_off)) {
    FUZZ_CHECK(r.status != WireStatus::Ok, "decode_wire took an IPv4 fragment");
  } else if (f) {
    FUZZ_CHECK(r.status == WireStatus::Ok, "decode() takes a frame decode_wire calls %s: %s",
               r.status == WireStatus::NotRoce ? "not RoCE" : "malformed", r.why.c_str());
    const WireFrame& w = r.w;
    FUZZ_CHECK(w.encap == Encap::RoceV2 && w.vlans.empty(), "encapsulation of a plain RoCEv2 frame");
    FUZZ_CHECK(same_bth(f->bth, w.f.bth) && same_ext(*f, w.f), "BTH / extension headers differ");
    FUZZ_CHECK(f->payload == w.f.payload && f->pad == w.f.pad && f->icrc == w.f.icrc, "payload / pad / ICRC differ");
    FUZZ_CHECK(f->udp.sport == w.f.udp.sport && f->eth.src == w.f.eth.src && f->eth.dst == w.f.eth.dst, "headers differ");
    FUZZ_CHECK(w.icrc_ok() == (f->icrc == compute_icrc(d, w.used - kIcrcLen)), "icrc_ok disagrees with compute_icrc");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> b(data + 1, data + size);
  check(b.empty() ? nullptr : b.data(), b.size(), data[0] & 1);
  return 0;
}
