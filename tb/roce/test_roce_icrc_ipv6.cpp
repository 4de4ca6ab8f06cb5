// tb/roce: the IPv6 ICRC. scapy 2.5 writes a wrong IPv6 ICRC, so the oracle
// here is built by hand: the masked byte string is written out byte by byte
// and run through a bitwise CRC-32 written in this file, and the result is
// also compared with a constant worked out once (Python zlib.crc32 over the
// same 76 bytes gave 0xA449A0BA).
#include <gtest/gtest.h>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

using namespace roce;

namespace {

// Plain bitwise CRC-32 (reflected polynomial 0xEDB88320, init and final XOR
// 0xFFFFFFFF), independent of Boost.
uint32_t crc32_bitwise(const Bytes& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
  }
  return crc ^ 0xFFFFFFFFu;
}

constexpr uint32_t kExpectedIcrc = 0xA449A0BAu;

// IPv6 RC SEND_ONLY from 2001:db8::1 to 2001:db8::2: TC 0xB8, flow label
// 0xABCDE, hop limit 64, UDP checksum 0x1234, BTH with FECN+BECN set,
// PadCnt 3, AckReq, DestQP 0x123, PSN 0xABCD, 5 payload bytes 01..05, 3 pad
// bytes. Without the ICRC.
Bytes frame_without_icrc() {
  return Bytes{
      0x02, 0x00, 0x00, 0x00, 0x00, 0x02,              // dst MAC
      0x02, 0x00, 0x00, 0x00, 0x00, 0x01,              // src MAC
      0x86, 0xDD,                                      // IPv6
      0x6B, 0x8A, 0xBC, 0xDE,                          // version 6, TC 0xB8, flow 0xABCDE
      0x00, 0x20, 0x11, 0x40,                          // payload length 32, UDP, hop limit 64
      0x20, 0x01, 0x0D, 0xB8, 0x00, 0x00, 0x00, 0x00,  // src
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
      0x20, 0x01, 0x0D, 0xB8, 0x00, 0x00, 0x00, 0x00,  // dst
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
      0xD0, 0x0D, 0x12, 0xB7, 0x00, 0x20, 0x12, 0x34,  // UDP
      0x04, 0x30, 0xFF, 0xFF, 0xC0, 0x00, 0x01, 0x23,  // BTH
      0x80, 0x00, 0xAB, 0xCD,
      0x01, 0x02, 0x03, 0x04, 0x05, 0x00, 0x00, 0x00,  // payload, pad
  };
}

// The bytes the ICRC covers, variant fields set to ones, by hand.
Bytes masked_by_hand() {
  return Bytes{
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // dummy LRH
      0x6F, 0xFF, 0xFF, 0xFF,                          // version 6; TC and flow label ones
      0x00, 0x20, 0x11, 0xFF,                          // length, next header; hop limit ones
      0x20, 0x01, 0x0D, 0xB8, 0x00, 0x00, 0x00, 0x00,  // src
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
      0x20, 0x01, 0x0D, 0xB8, 0x00, 0x00, 0x00, 0x00,  // dst
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
      0xD0, 0x0D, 0x12, 0xB7, 0x00, 0x20, 0xFF, 0xFF,  // UDP; checksum ones
      0x04, 0x30, 0xFF, 0xFF, 0xFF, 0x00, 0x01, 0x23,  // BTH; byte 4 ones
      0x80, 0x00, 0xAB, 0xCD,
      0x01, 0x02, 0x03, 0x04, 0x05, 0x00, 0x00, 0x00,  // payload, pad
  };
}

TEST(IcrcIpv6, HandBuiltOracle) {
  const Bytes masked = masked_by_hand();
  ASSERT_EQ(masked.size(), 76u);
  EXPECT_EQ(crc32_bitwise(masked), kExpectedIcrc);

  const Bytes f = frame_without_icrc();
  EXPECT_EQ(icrc_masked_input(f.data(), f.size()), masked);
  EXPECT_EQ(compute_icrc(f.data(), f.size()), kExpectedIcrc);
}

TEST(IcrcIpv6, BitwiseCrcMatchesKnownCheckValue) {
  // The CRC-32 check value: "123456789" -> 0xCBF43926.
  const Bytes s = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(crc32_bitwise(s), 0xCBF43926u);
}

TEST(IcrcIpv6, VariantFieldsDoNotChangeTheIcrc) {
  Bytes f = frame_without_icrc();
  // Change traffic class, flow label, hop limit, UDP checksum and FECN/BECN.
  f[14] = 0x60;
  f[15] = 0x00;
  f[16] = 0x00;
  f[17] = 0x07;
  f[21] = 0x01;
  f[60] = 0x00;
  f[61] = 0x00;
  f[66] = 0x00;
  EXPECT_EQ(compute_icrc(f.data(), f.size()), kExpectedIcrc);
  // An invariant field (PSN low byte) does.
  f[73] ^= 1;
  EXPECT_NE(compute_icrc(f.data(), f.size()), kExpectedIcrc);
}

TEST(IcrcIpv6, EncodeBuildsTheSameFrame) {
  Frame fr;
  fr.eth.dst = *MacAddr::parse("02:00:00:00:00:02");
  fr.eth.src = *MacAddr::parse("02:00:00:00:00:01");
  fr.ipv6 = true;
  fr.ip6.traffic_class = 0xB8;
  fr.ip6.flow_label = 0xABCDE;
  fr.ip6.hop_limit = 64;
  fr.ip6.src = *Ipv6Addr::parse("2001:db8::1");
  fr.ip6.dst = *Ipv6Addr::parse("2001:db8::2");
  fr.udp.sport = 0xD00D;
  fr.udp.checksum = 0x1234;
  fr.bth.opcode = op::RC_SEND_ONLY;
  fr.bth.resv8a = 0xC0;
  fr.bth.dest_qp = 0x123;
  fr.bth.ack_req = true;
  fr.bth.psn = 0xABCD;
  fr.payload = {1, 2, 3, 4, 5};
  Bytes expected = frame_without_icrc();
  // ICRC least-significant byte first.
  expected.insert(expected.end(), {0xBA, 0xA0, 0x49, 0xA4});
  const Bytes got = encode(fr);
  EXPECT_EQ(got, expected);

  const auto d = decode(got);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->ipv6);
  EXPECT_EQ(d->ip6.traffic_class, 0xB8);
  EXPECT_EQ(d->ip6.flow_label, 0xABCDEu);
  EXPECT_EQ(d->ip6.payload_len, 32);
  EXPECT_EQ(d->bth.pad_cnt, 3);
  EXPECT_TRUE(d->bth.fecn());
  EXPECT_TRUE(d->bth.becn());
  EXPECT_EQ(d->icrc, kExpectedIcrc);
  EXPECT_EQ(encode(*d, EncodeOptions{false, false, false, false}), got);
}

}  // namespace
