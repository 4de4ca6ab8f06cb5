// tb/roce: encode/decode unit tests: the opcode table, addresses, header
// layout at fixed byte offsets, every DecodeError, truncated and random
// input (decode must never read out of bounds), encode/decode round trips.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

using namespace roce;

namespace {

TEST(Opcodes, TableEntries) {
  struct Row { uint8_t code; const char* name; uint16_t ext; uint8_t ext_len; bool payload; };
  const Row rows[] = {
      {0x00, "RC_SEND_FIRST", kExtNone, 0, true},
      {0x03, "RC_SEND_LAST_IMM", kExtImmDt, 4, true},
      {0x05, "RC_SEND_ONLY_IMM", kExtImmDt, 4, true},
      {0x06, "RC_WRITE_FIRST", kExtReth, 16, true},
      {0x07, "RC_WRITE_MIDDLE", kExtNone, 0, true},
      {0x09, "RC_WRITE_LAST_IMM", kExtImmDt, 4, true},
      {0x0B, "RC_WRITE_ONLY_IMM", kExtReth | kExtImmDt, 20, true},
      {0x0C, "RC_READ_REQUEST", kExtReth, 16, false},
      {0x0D, "RC_READ_RESP_FIRST", kExtAeth, 4, true},
      {0x0E, "RC_READ_RESP_MIDDLE", kExtNone, 0, true},
      {0x10, "RC_READ_RESP_ONLY", kExtAeth, 4, true},
      {0x11, "RC_ACK", kExtAeth, 4, false},
      {0x12, "RC_ATOMIC_ACK", kExtAeth | kExtAtomicAckEth, 12, false},
      {0x13, "RC_CMP_SWAP", kExtAtomicEth, 28, false},
      {0x14, "RC_FETCH_ADD", kExtAtomicEth, 28, false},
      {0x16, "RC_SEND_LAST_INV", kExtIeth, 4, true},
      {0x17, "RC_SEND_ONLY_INV", kExtIeth, 4, true},
      {0x64, "UD_SEND_ONLY", kExtDeth, 8, true},
      {0x65, "UD_SEND_ONLY_IMM", kExtDeth | kExtImmDt, 12, true},
      {0x81, "CNP", kExtNone, 0, true},
  };
  for (const Row& r : rows) {
    const OpcodeInfo* i = opcode_info(r.code);
    ASSERT_NE(i, nullptr) << int(r.code);
    EXPECT_EQ(i->code, r.code);
    EXPECT_STREQ(i->name, r.name);
    EXPECT_STREQ(opcode_name(r.code), r.name);
    EXPECT_EQ(i->ext, r.ext) << r.name;
    EXPECT_EQ(i->ext_len, r.ext_len) << r.name;
    EXPECT_EQ(i->has_payload, r.payload) << r.name;
  }
  EXPECT_EQ(opcode_info(op::RC_WRITE_FIRST)->pos, OpPos::First);
  EXPECT_EQ(opcode_info(op::RC_WRITE_MIDDLE)->pos, OpPos::Middle);
  EXPECT_EQ(opcode_info(op::RC_READ_RESP_LAST)->pos, OpPos::Last);
  EXPECT_EQ(opcode_info(op::RC_READ_REQUEST)->kind, OpKind::ReadRequest);
  EXPECT_EQ(opcode_info(op::CNP)->kind, OpKind::Cnp);
  // Every RC code 0x00..0x17 except the reserved 0x15 is known.
  int known = 0;
  for (int c = 0; c < 256; ++c) known += opcode_info(uint8_t(c)) != nullptr;
  EXPECT_EQ(known, 23 + 2 + 1);
  EXPECT_EQ(opcode_info(0x15), nullptr);
  EXPECT_EQ(opcode_info(0x18), nullptr);
  EXPECT_EQ(opcode_info(0x20), nullptr);  // UC
  EXPECT_STREQ(opcode_name(0x15), "OPCODE_0x15");
  EXPECT_STREQ(opcode_name(0xFF), "OPCODE_0xFF");
}

TEST(Types, Addresses) {
  auto m = MacAddr::parse("02:00:00:00:00:0A");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->b[0], 0x02);
  EXPECT_EQ(m->b[5], 0x0A);
  EXPECT_EQ(m->str(), "02:00:00:00:00:0a");
  EXPECT_EQ(MacAddr::parse("aa-bb-cc-dd-ee-ff")->str(), "aa:bb:cc:dd:ee:ff");
  EXPECT_FALSE(MacAddr::parse("02:00:00:00:00"));
  EXPECT_FALSE(MacAddr::parse("02:00:00:00:00:0g"));
  EXPECT_FALSE(MacAddr::parse("02:00-00:00:00:00"));
  EXPECT_FALSE(MacAddr::parse("02:00:00:00:00:000"));

  auto a = Ipv4Addr::parse("192.168.1.20");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->v, 0xC0A80114u);
  EXPECT_EQ(a->str(), "192.168.1.20");
  EXPECT_FALSE(Ipv4Addr::parse("192.168.1"));
  EXPECT_FALSE(Ipv4Addr::parse("192.168.1.256"));
  EXPECT_FALSE(Ipv4Addr::parse("192.168.1.2x"));

  auto g = Ipv6Addr::parse("fd00::1:2");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->b[0], 0xFD);
  EXPECT_EQ(g->b[13], 0x01);
  EXPECT_EQ(g->b[15], 0x02);
  EXPECT_EQ(g->str(), "fd00::1:2");
  EXPECT_FALSE(Ipv6Addr::parse("fd00:::1"));
  const Ipv6Addr v4m = Ipv6Addr::v4_mapped(Ipv4Addr{0x0A000001});
  EXPECT_EQ(v4m, *Ipv6Addr::parse("::ffff:10.0.0.1"));
}

TEST(Ipv4Checksum, KnownHeader) {
  // A textbook header (checksum field 0xB861 in the original).
  const uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                         0xB8, 0x61, 0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0xC7};
  EXPECT_EQ(ipv4_checksum(h), 0xB861);
  uint8_t z[20];
  std::memcpy(z, h, 20);
  z[10] = z[11] = 0;  // the checksum field is ignored
  EXPECT_EQ(ipv4_checksum(z), 0xB861);
}

Frame sample(uint8_t opcode) {
  Frame f;
  f.eth.dst = *MacAddr::parse("02:00:00:00:00:02");
  f.eth.src = *MacAddr::parse("02:00:00:00:00:01");
  f.ip4.src = Ipv4Addr{0x0A000001};
  f.ip4.dst = Ipv4Addr{0x0A000002};
  f.ip4.id = 0xBEEF;
  f.ip4.tos = 0x02;  // ECT(0)
  f.udp.sport = 0xC001;
  f.bth.opcode = opcode;
  f.bth.dest_qp = 0xABCDEF;
  f.bth.psn = 0x123456;
  return f;
}

TEST(Encode, HeaderBytesAtFixedOffsets) {
  Frame f = sample(op::RC_WRITE_ONLY_IMM);
  f.bth.se = true;
  f.bth.ack_req = true;
  f.bth.pkey = 0x8001;
  f.bth.resv8a = 0x80;  // FECN
  f.reth = Reth{0x1122334455667788ull, 0x99AABBCC, 0x00000006};
  f.immdt = 0xA1B2C3D4;
  f.payload = {1, 2, 3, 4, 5, 6};
  const Bytes b = encode(f);
  // 14 + 20 + 8 + 12 + 16 + 4 + 6 + 2 + 4
  ASSERT_EQ(b.size(), 86u);
  EXPECT_EQ(get_be16(&b[12]), 0x0800);
  EXPECT_EQ(b[14], 0x45);
  EXPECT_EQ(b[15], 0x02);
  EXPECT_EQ(get_be16(&b[16]), 72);       // IPv4 total length
  EXPECT_EQ(get_be16(&b[18]), 0xBEEF);
  EXPECT_EQ(get_be16(&b[20]), 0x4000);   // DF
  EXPECT_EQ(b[22], 64);
  EXPECT_EQ(b[23], 17);
  EXPECT_EQ(get_be32(&b[26]), 0x0A000001u);
  EXPECT_EQ(get_be32(&b[30]), 0x0A000002u);
  EXPECT_EQ(get_be16(&b[34]), 0xC001);   // UDP
  EXPECT_EQ(get_be16(&b[36]), 4791);
  EXPECT_EQ(get_be16(&b[38]), 52);
  EXPECT_EQ(get_be16(&b[40]), 0);
  EXPECT_EQ(b[42], 0x0B);                // BTH
  EXPECT_EQ(b[43], 0x80 | 0x20);         // SE, PadCnt 2
  EXPECT_EQ(get_be16(&b[44]), 0x8001);
  EXPECT_EQ(b[46], 0x80);
  EXPECT_EQ(get_be24(&b[47]), 0xABCDEFu);
  EXPECT_EQ(b[50], 0x80);
  EXPECT_EQ(get_be24(&b[51]), 0x123456u);
  EXPECT_EQ(get_be64(&b[54]), 0x1122334455667788ull);  // RETH
  EXPECT_EQ(get_be32(&b[62]), 0x99AABBCCu);
  EXPECT_EQ(get_be32(&b[66]), 6u);
  EXPECT_EQ(get_be32(&b[70]), 0xA1B2C3D4u);           // ImmDt
  EXPECT_EQ(b[74], 1);
  EXPECT_EQ(b[79], 6);
  EXPECT_EQ(b[80], 0);
  EXPECT_EQ(b[81], 0);
  // IPv4 checksum verifies (one's-complement sum of the header is 0xFFFF).
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += get_be16(&b[14 + i]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  EXPECT_EQ(sum, 0xFFFFu);
  EXPECT_EQ(get_le32(&b[82]), compute_icrc(b.data(), 82));
}

// The payload given by pointer (f.payload not read: it holds other bytes
// here) gives the bytes encode(f) gives with that payload in f: the same
// frame as HeaderBytesAtFixedOffsets, and with the caller's pad kept.
TEST(Encode, PayloadByPointerGivesTheSameBytes) {
  Frame f = sample(op::RC_WRITE_ONLY_IMM);
  f.reth = Reth{0x1122334455667788ull, 0x99AABBCC, 0x00000006};
  f.immdt = 0xA1B2C3D4;
  const Bytes payload = {1, 2, 3, 4, 5, 6};
  Frame with = f;
  with.payload = payload;
  f.payload = {9, 9, 9};
  const Bytes b = encode(f, payload.data(), payload.size());
  ASSERT_EQ(b.size(), 86u);
  EXPECT_EQ(b, encode(with));
  EXPECT_EQ(Bytes(b.begin() + 74, b.begin() + 80), payload);  // after RETH and ImmDt
  EXPECT_EQ(b[80], 0);                                         // pad
  EXPECT_EQ(b[81], 0);
  EXPECT_EQ(get_le32(&b[82]), compute_icrc(b.data(), 82));
  EncodeOptions o;
  o.fill_pad = false;
  f.bth.pad_cnt = with.bth.pad_cnt = 3;
  f.pad = with.pad = {0xAA, 0xBB, 0xCC};
  const Bytes c = encode(f, payload.data(), payload.size(), o);
  EXPECT_EQ(c, encode(with, o));
  ASSERT_EQ(c.size(), 87u);
  EXPECT_EQ(c[80], 0xAA);
  EXPECT_EQ(c[82], 0xCC);
  EXPECT_EQ(encode(f, nullptr, 0), [&] { Frame e = with; e.payload.clear(); return encode(e); }());
}

TEST(Encode, ExtensionHeaderLayouts) {
  {
    Frame f = sample(op::UD_SEND_ONLY_IMM);
    f.deth = Deth{0x80010000, 0x00, 0x000001};
    f.immdt = 0x01020304;
    const Bytes b = encode(f);
    EXPECT_EQ(get_be32(&b[54]), 0x80010000u);
    EXPECT_EQ(b[58], 0);
    EXPECT_EQ(get_be24(&b[59]), 1u);
    EXPECT_EQ(get_be32(&b[62]), 0x01020304u);
    EXPECT_EQ(b.size(), 54u + 12 + 4);
  }
  {
    Frame f = sample(op::RC_ATOMIC_ACK);
    f.aeth = Aeth{0x1F, 0x000042};
    f.atomic_ack_eth = AtomicAckEth{0x0102030405060708ull};
    const Bytes b = encode(f);
    EXPECT_EQ(b[54], 0x1F);
    EXPECT_EQ(get_be24(&b[55]), 0x42u);
    EXPECT_EQ(get_be64(&b[58]), 0x0102030405060708ull);
    EXPECT_EQ(b.size(), 54u + 12 + 4);
  }
  {
    Frame f = sample(op::RC_CMP_SWAP);
    f.atomic_eth = AtomicEth{0x1000, 0x77, 0xAAAA, 0xBBBB};
    const Bytes b = encode(f);
    EXPECT_EQ(get_be64(&b[54]), 0x1000u);
    EXPECT_EQ(get_be32(&b[62]), 0x77u);
    EXPECT_EQ(get_be64(&b[66]), 0xAAAAu);
    EXPECT_EQ(get_be64(&b[74]), 0xBBBBu);
    EXPECT_EQ(b.size(), 54u + 28 + 4);
  }
  {
    // A missing optional header is written as zeros.
    Frame f = sample(op::RC_SEND_ONLY_INV);
    const Bytes b = encode(f);
    EXPECT_EQ(b.size(), 54u + 4 + 4);
    EXPECT_EQ(get_be32(&b[54]), 0u);
  }
  {
    // CNP: BTH + 16 reserved bytes as payload.
    Frame f = sample(op::CNP);
    f.payload.assign(16, 0);
    const Bytes b = encode(f);
    EXPECT_EQ(b.size(), 54u + 16 + 4);
    const auto d = decode(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->payload.size(), 16u);
  }
}

TEST(Encode, FillOptionsOff) {
  Frame f = sample(op::RC_SEND_ONLY);
  f.payload = {9, 9, 9};
  f.bth.pad_cnt = 2;
  f.pad = {0xAA, 0xBB};
  f.ip4.total_len = 0x1111;
  f.ip4.checksum = 0x2222;
  f.udp.len = 0x3333;
  f.icrc = 0x44556677;
  const Bytes b = encode(f, EncodeOptions{false, false, false, false});
  ASSERT_EQ(b.size(), 54u + 3 + 2 + 4);
  EXPECT_EQ(get_be16(&b[16]), 0x1111);
  EXPECT_EQ(get_be16(&b[24]), 0x2222);
  EXPECT_EQ(get_be16(&b[38]), 0x3333);
  EXPECT_EQ((b[43] >> 4) & 3, 2);
  EXPECT_EQ(b[57], 0xAA);
  EXPECT_EQ(b[58], 0xBB);
  EXPECT_EQ(get_le32(&b[59]), 0x44556677u);
  EXPECT_EQ(b[59], 0x77);  // least-significant byte first
}

TEST(Encode, PadCountForEveryPayloadLength) {
  for (size_t n = 0; n <= 9; ++n) {
    Frame f = sample(op::RC_SEND_ONLY);
    f.payload.assign(n, 0x5A);
    f.bth.pad_cnt = 3;          // overwritten by fill_pad
    f.pad = {1, 2, 3, 4, 5};   // likewise
    const Bytes b = encode(f);
    const size_t pad = (4 - n % 4) % 4;
    EXPECT_EQ(b.size(), 54 + n + pad + 4);
    EXPECT_EQ((b.size() - 54 - 4) % 4, 0u);
    EXPECT_EQ((b[43] >> 4) & 3, int(pad));
    for (size_t i = 0; i < pad; ++i) EXPECT_EQ(b[54 + n + i], 0);
    const auto d = decode(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->payload.size(), n);
    EXPECT_EQ(d->pad.size(), pad);
  }
}

// Random field values for every known opcode survive encode -> decode.
TEST(Codec, RoundTripEveryOpcode) {
  std::mt19937_64 rng(20240611);
  for (int c = 0; c < 256; ++c) {
    const OpcodeInfo* info = opcode_info(uint8_t(c));
    if (!info) continue;
    for (int rep = 0; rep < 8; ++rep) {
      SCOPED_TRACE(info->name);
      Frame f = sample(uint8_t(c));
      f.ipv6 = rep % 2;
      if (f.ipv6) {
        f.ip6.traffic_class = uint8_t(rng());
        f.ip6.flow_label = uint32_t(rng() & 0xFFFFF);
        f.ip6.hop_limit = uint8_t(rng());
        f.ip6.src.b[15] = 1;
        f.ip6.dst.b[15] = 2;
      }
      f.bth.se = rng() & 1;
      f.bth.mig = rng() & 1;
      f.bth.pkey = uint16_t(rng());
      f.bth.resv8a = uint8_t(rng()) & 0xC0;
      f.bth.dest_qp = uint32_t(rng() & 0xFFFFFF);
      f.bth.ack_req = rng() & 1;
      f.bth.psn = uint32_t(rng() & 0xFFFFFF);
      if (info->ext & kExtDeth) f.deth = Deth{uint32_t(rng()), 0, uint32_t(rng() & 0xFFFFFF)};
      if (info->ext & kExtReth) f.reth = Reth{rng(), uint32_t(rng()), uint32_t(rng())};
      if (info->ext & kExtAtomicEth) f.atomic_eth = AtomicEth{rng(), uint32_t(rng()), rng(), rng()};
      if (info->ext & kExtAeth) f.aeth = Aeth{uint8_t(rng() & 0x7F), uint32_t(rng() & 0xFFFFFF)};
      if (info->ext & kExtAtomicAckEth) f.atomic_ack_eth = AtomicAckEth{rng()};
      if (info->ext & kExtImmDt) f.immdt = uint32_t(rng());
      if (info->ext & kExtIeth) f.ieth = uint32_t(rng());
      if (info->has_payload) {
        f.payload.resize(rng() % 300);
        for (auto& x : f.payload) x = uint8_t(rng());
      }
      const Bytes b = encode(f);
      DecodeError e;
      const auto d = decode(b, &e);
      ASSERT_TRUE(d) << decode_error_name(e);
      EXPECT_EQ(d->ipv6, f.ipv6);
      EXPECT_EQ(d->eth.ethertype, f.ipv6 ? kEtherTypeIpv6 : kEtherTypeIpv4);
      EXPECT_EQ(d->bth.opcode, c);
      EXPECT_EQ(d->bth.se, f.bth.se);
      EXPECT_EQ(d->bth.mig, f.bth.mig);
      EXPECT_EQ(d->bth.pkey, f.bth.pkey);
      EXPECT_EQ(d->bth.resv8a, f.bth.resv8a);
      EXPECT_EQ(d->bth.dest_qp, f.bth.dest_qp);
      EXPECT_EQ(d->bth.ack_req, f.bth.ack_req);
      EXPECT_EQ(d->bth.psn, f.bth.psn);
      EXPECT_EQ(d->bth.pad_cnt, (4 - f.payload.size() % 4) % 4);
      EXPECT_EQ(d->deth.has_value(), f.deth.has_value());
      if (f.deth) {
        EXPECT_EQ(d->deth->qkey, f.deth->qkey);
        EXPECT_EQ(d->deth->src_qp, f.deth->src_qp);
      }
      if (f.reth) {
        ASSERT_TRUE(d->reth);
        EXPECT_EQ(d->reth->va, f.reth->va);
        EXPECT_EQ(d->reth->rkey, f.reth->rkey);
        EXPECT_EQ(d->reth->dma_len, f.reth->dma_len);
      } else {
        EXPECT_FALSE(d->reth);
      }
      if (f.atomic_eth) {
        ASSERT_TRUE(d->atomic_eth);
        EXPECT_EQ(d->atomic_eth->va, f.atomic_eth->va);
        EXPECT_EQ(d->atomic_eth->rkey, f.atomic_eth->rkey);
        EXPECT_EQ(d->atomic_eth->swap_add, f.atomic_eth->swap_add);
        EXPECT_EQ(d->atomic_eth->compare, f.atomic_eth->compare);
      }
      if (f.aeth) {
        ASSERT_TRUE(d->aeth);
        EXPECT_EQ(d->aeth->syndrome, f.aeth->syndrome);
        EXPECT_EQ(d->aeth->msn, f.aeth->msn);
      } else {
        EXPECT_FALSE(d->aeth);
      }
      if (f.atomic_ack_eth) {
        ASSERT_TRUE(d->atomic_ack_eth);
        EXPECT_EQ(d->atomic_ack_eth->orig, f.atomic_ack_eth->orig);
      }
      EXPECT_EQ(d->immdt, f.immdt);
      EXPECT_EQ(d->ieth, f.ieth);
      EXPECT_EQ(d->payload, f.payload);
      EXPECT_EQ(d->icrc, compute_icrc(b.data(), b.size() - 4));
      EXPECT_EQ(encode(*d, EncodeOptions{false, false, false, false}), b);
    }
  }
}

TEST(Decode, TrailingEthernetPaddingIgnored) {
  Frame f = sample(op::RC_ACK);
  f.aeth = Aeth{0x1F, 5};
  Bytes b = encode(f);
  ASSERT_EQ(b.size(), 62u);
  b.insert(b.end(), {0, 0, 0, 0});  // e.g. an FCS or pad the capture kept
  const auto d = decode(b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->aeth->msn, 5u);
  EXPECT_EQ(encode(*d, EncodeOptions{false, false, false, false}).size(), 62u);
}

// decode_headers: decode's fields without the payload (empty), on nine
// opcodes (each extension-header shape, UD_SEND_ONLY: a CM MAD's) over both
// IP versions, and decode's error on every truncation.
TEST(Decode, HeadersOnlyLeavesThePayloadOut) {
  for (uint8_t c : {op::RC_SEND_ONLY, op::RC_WRITE_FIRST, op::RC_WRITE_ONLY_IMM, op::RC_ACK, op::RC_CMP_SWAP,
                    op::RC_ATOMIC_ACK, op::UD_SEND_ONLY, op::UD_SEND_ONLY_IMM, op::CNP}) {
    for (bool v6 : {false, true}) {
      Frame f = sample(c);
      f.ipv6 = v6;
      f.payload.assign(c == op::CNP ? 16 : 7, 0x5A);
      const Bytes b = encode(f);
      const auto full = decode(b);
      const auto hdr = decode_headers(b.data(), b.size());
      ASSERT_TRUE(full && hdr) << int(c);
      EXPECT_TRUE(hdr->payload.empty()) << int(c);
      EXPECT_EQ(full->payload.size(), c == op::CNP ? 16u : 7u) << int(c);
      Frame h = *hdr;
      h.payload = full->payload;  // then the same frame: the same bytes
      EXPECT_EQ(encode(h, EncodeOptions{false, false, false, false}), b) << int(c) << " v6 " << v6;
      EXPECT_EQ(hdr->pad, full->pad);
      EXPECT_EQ(hdr->icrc, get_le32(&b[b.size() - 4]));
      for (size_t n = 0; n < b.size(); ++n) {
        DecodeError e1 = DecodeError::None, e2 = DecodeError::None;
        EXPECT_EQ(decode(b.data(), n, &e1).has_value(), decode_headers(b.data(), n, &e2).has_value()) << n;
        EXPECT_EQ(e1, e2) << int(c) << " at " << n;
      }
    }
  }
}

DecodeError decode_err(const Bytes& b) {
  DecodeError e = DecodeError::None;
  EXPECT_FALSE(decode(b, &e).has_value());
  return e;
}

TEST(Decode, EveryError) {
  Frame f = sample(op::RC_SEND_ONLY);
  f.payload = {1, 2, 3, 4};
  const Bytes good = encode(f);
  ASSERT_TRUE(decode(good));

  EXPECT_EQ(decode_err(Bytes(good.begin(), good.begin() + 13)), DecodeError::TooShort);
  EXPECT_EQ(decode_err(Bytes(good.begin(), good.begin() + 30)), DecodeError::TooShort);
  Bytes b = good;
  b[12] = 0x08; b[13] = 0x06;  // ARP
  EXPECT_EQ(decode_err(b), DecodeError::NotIp);
  b = good;
  b[14] = 0x65;
  EXPECT_EQ(decode_err(b), DecodeError::IpVersion);
  b = good;
  b[14] = 0x46;
  EXPECT_EQ(decode_err(b), DecodeError::Ipv4Ihl);
  b = good;
  b[23] = 6;  // TCP
  EXPECT_EQ(decode_err(b), DecodeError::NotUdp);
  b = good;
  put_be16(&b[36], 4792);
  EXPECT_EQ(decode_err(b), DecodeError::NotRocePort);
  b = good;
  put_be16(&b[16], uint16_t(good.size()));  // IP length beyond the frame
  EXPECT_EQ(decode_err(b), DecodeError::BadLength);
  b = good;
  put_be16(&b[38], 8);  // UDP length disagrees with IP length
  EXPECT_EQ(decode_err(b), DecodeError::BadLength);
  b = good;
  b[42] = 0x15;  // reserved opcode
  EXPECT_EQ(decode_err(b), DecodeError::UnknownOpcode);
  b = good;
  b[42] = op::RC_WRITE_ONLY;  // RETH (16) + ICRC no longer fit in 8 bytes
  EXPECT_EQ(decode_err(b), DecodeError::TooShort);

  // PadCnt larger than what follows the headers: ACK (AETH) with PadCnt 1.
  Frame a = sample(op::RC_ACK);
  a.aeth = Aeth{0, 0};
  b = encode(a);
  b[43] |= 0x10;
  EXPECT_EQ(decode_err(b), DecodeError::PadTooLong);

  // IPv6 with a bad next header, and truncated.
  Frame v6 = sample(op::RC_SEND_ONLY);
  v6.ipv6 = true;
  const Bytes g6 = encode(v6);
  ASSERT_TRUE(decode(g6));
  b = g6;
  b[20] = 6;
  EXPECT_EQ(decode_err(b), DecodeError::NotUdp);
  b = g6;
  b[14] = 0x40;
  EXPECT_EQ(decode_err(b), DecodeError::IpVersion);
  EXPECT_EQ(decode_err(Bytes(g6.begin(), g6.begin() + 50)), DecodeError::TooShort);
  EXPECT_EQ(decode_err(Bytes(g6.begin(), g6.end() - 1)), DecodeError::BadLength);

  EXPECT_FALSE(decode(nullptr, 0).has_value());
  EXPECT_STREQ(decode_error_name(DecodeError::PadTooLong), "PadTooLong");
}

TEST(IsRoce, Classification) {
  Frame f = sample(op::RC_SEND_ONLY);
  Bytes b = encode(f);
  EXPECT_TRUE(is_roce(b.data(), b.size()));
  EXPECT_TRUE(is_roce(b.data(), 42));  // headers up to UDP suffice
  EXPECT_FALSE(is_roce(b.data(), 41));
  put_be16(&b[36], 53);
  EXPECT_FALSE(is_roce(b.data(), b.size()));
  f.ipv6 = true;
  b = encode(f);
  EXPECT_TRUE(is_roce(b.data(), b.size()));
  b[20] = 58;  // ICMPv6
  EXPECT_FALSE(is_roce(b.data(), b.size()));
  EXPECT_FALSE(is_roce(nullptr, 0));
}

// Every prefix of valid frames, and random and mutated bytes: decode,
// is_roce and compute_icrc must not read outside the buffer (each input is
// copied into a buffer of exactly its size, so ASan builds catch any
// overread) and decode of a strict prefix must fail.
TEST(Decode, TruncatedAndGarbageInput) {
  std::vector<Bytes> seeds;
  for (uint8_t c : {op::RC_SEND_ONLY, op::RC_WRITE_ONLY_IMM, op::RC_ACK, op::RC_CMP_SWAP,
                    op::RC_ATOMIC_ACK, op::UD_SEND_ONLY_IMM, op::CNP}) {
    Frame f = sample(c);
    f.payload.assign(c == op::CNP ? 16 : 7, 0x33);
    seeds.push_back(encode(f));
    f.ipv6 = true;
    seeds.push_back(encode(f));
  }
  for (const Bytes& s : seeds) {
    for (size_t n = 0; n < s.size(); ++n) {
      std::unique_ptr<uint8_t[]> buf(new uint8_t[n ? n : 1]);
      if (n) std::memcpy(buf.get(), s.data(), n);
      DecodeError e = DecodeError::None;
      EXPECT_FALSE(decode(buf.get(), n, &e).has_value()) << n;
      EXPECT_NE(e, DecodeError::None);
      (void)is_roce(buf.get(), n);
      (void)compute_icrc(buf.get(), n);
      (void)icrc_masked_input(buf.get(), n);
    }
  }
  std::mt19937_64 rng(7);
  size_t decoded = 0;
  for (int it = 0; it < 20000; ++it) {
    Bytes b;
    if (it % 2) {
      b.resize(rng() % 200);
      for (auto& x : b) x = uint8_t(rng());
      if (b.size() > 14 && (it % 4) == 1) {  // make the outer headers plausible
        b[12] = 0x08; b[13] = 0x00; b[14] = 0x45;
        if (b.size() > 23) b[23] = 17;
      }
    } else {
      b = seeds[rng() % seeds.size()];
      const int flips = 1 + int(rng() % 4);
      for (int k = 0; k < flips; ++k) b[rng() % b.size()] = uint8_t(rng());
      if (rng() % 2) b.resize(rng() % (b.size() + 1));
    }
    std::unique_ptr<uint8_t[]> buf(new uint8_t[b.size() ? b.size() : 1]);
    if (!b.empty()) std::memcpy(buf.get(), b.data(), b.size());
    const auto d = decode(buf.get(), b.size());
    if (d) {
      ++decoded;
      // What decodes re-encodes to the bytes it came from (up to IP length).
      const Bytes re = encode(*d, EncodeOptions{false, false, false, false});
      ASSERT_LE(re.size(), b.size());
      EXPECT_TRUE(std::equal(re.begin(), re.end(), b.begin()));
    }
    (void)is_roce(buf.get(), b.size());
    (void)compute_icrc(buf.get(), b.size());
  }
  EXPECT_GT(decoded, 0u);
}

}  // namespace
