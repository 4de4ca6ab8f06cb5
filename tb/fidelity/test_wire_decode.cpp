// tb/fidelity: model/roce's capture-grade decoder (wire_decode.h) against
// the simulator's RoCEv2 codec (packet.h) on the real captures and on
// encoded RC/UD frames (the same fields, the same ICRC verdict: what the
// codec decodes, the capture decoder decodes identically), and on what the
// codec refuses: UC, RD, XRC, unknown opcodes, RoCEv1, VLAN tags, padding;
// malformed frames are refused with a reason, never read past their end.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/wire_decode.h"
#include "tb/roce/test_util.h"

using namespace roce;

namespace {

const std::string kData = std::string(ERNIC_TEST_DATA) + "/captures/";

// Everything packet.h's Frame holds, compared field by field.
void expect_same(const Frame& a, const Frame& b, const std::string& where) {
  EXPECT_EQ(encode(a, EncodeOptions{false, false, false, false}), encode(b, EncodeOptions{false, false, false, false}))
      << where;
  EXPECT_EQ(a.bth.opcode, b.bth.opcode) << where;
  EXPECT_EQ(a.bth.psn, b.bth.psn) << where;
  EXPECT_EQ(a.bth.dest_qp, b.bth.dest_qp) << where;
  EXPECT_EQ(a.payload, b.payload) << where;
  EXPECT_EQ(a.pad, b.pad) << where;
  EXPECT_EQ(a.icrc, b.icrc) << where;
  EXPECT_EQ(a.reth.has_value(), b.reth.has_value()) << where;
  EXPECT_EQ(a.aeth.has_value(), b.aeth.has_value()) << where;
  EXPECT_EQ(a.deth.has_value(), b.deth.has_value()) << where;
  EXPECT_EQ(a.immdt, b.immdt) << where;
  EXPECT_EQ(a.ieth, b.ieth) << where;
}

Frame sample(uint8_t code, size_t payload = 40) {
  Frame f;
  f.eth.src = *MacAddr::parse("02:00:00:00:00:0a");
  f.eth.dst = *MacAddr::parse("02:00:00:00:00:0b");
  f.ip4.src = *Ipv4Addr::parse("10.0.0.1");
  f.ip4.dst = *Ipv4Addr::parse("10.0.0.2");
  f.udp.sport = 0xC000;
  f.bth.opcode = code;
  f.bth.dest_qp = 0x12;
  f.bth.psn = 0x123456;
  const OpcodeInfo* i = opcode_info(code);
  if (i && (i->ext & kExtReth)) f.reth = Reth{0x1000, 0x77, uint32_t(payload)};
  if (i && (i->ext & kExtAeth)) f.aeth = Aeth{0x1F, 5};
  if (i && (i->ext & kExtDeth)) f.deth = Deth{0x80010000, 0, 0x21};
  if (i && (i->ext & kExtImmDt)) f.immdt = 0xABCD;
  if (i && (i->ext & kExtIeth)) f.ieth = 0x99;
  if (i && (i->ext & kExtAtomicEth)) f.atomic_eth = AtomicEth{0x2000, 0x5, 1, 2};
  if (i && (i->ext & kExtAtomicAckEth)) f.atomic_ack_eth = AtomicAckEth{7};
  if (!i || i->has_payload)
    for (size_t k = 0; k < payload; ++k) f.payload.push_back(uint8_t(k * 7));
  return f;
}

TEST(WireDecode, AgreesWithTheCodecOnTheRealCaptures) {
  size_t roce_frames = 0;
  for (const char* c : {"pingpong_rc.pcap", "rdma_write_bw.pcap", "rdma_read_bw.pcap", "rdma_send_bw.pcap",
                        "rdma_write_lat.pcap"}) {
    std::string err;
    const auto frames = roce_test::read_pcap(kData + c, &err);
    ASSERT_TRUE(err.empty()) << err;
    for (size_t i = 0; i < frames.size(); ++i) {
      const Bytes& b = frames[i];
      const auto old = decode(b);
      const WireDecode w = decode_wire(b.data(), b.size());
      const std::string where = std::string(c) + " frame " + std::to_string(i + 1);
      if (!old) {
        EXPECT_EQ(w.status, WireStatus::NotRoce) << where << ": " << w.why;
        continue;
      }
      ++roce_frames;
      ASSERT_EQ(w.status, WireStatus::Ok) << where << ": " << w.why;
      expect_same(*old, w.w.f, where);
      EXPECT_TRUE(w.w.icrc_ok()) << where;
      EXPECT_TRUE(w.w.ipv4_checksum_ok) << where;
      EXPECT_EQ(w.w.op->name, opcode_name(old->bth.opcode)) << where;
      EXPECT_EQ(as_plain_rocev2(b.data(), b.size(), w.w), b) << where;  // already plain: the same bytes
    }
  }
  EXPECT_EQ(roce_frames, 100u);
}

TEST(WireDecode, AgreesWithTheCodecOnEveryRcAndUdOpcode) {
  for (int c = 0; c < 256; ++c) {
    const OpcodeInfo* i = opcode_info(uint8_t(c));
    if (!i) continue;
    for (bool v6 : {false, true})
      for (size_t pl : {size_t(0), size_t(1), size_t(61), size_t(256)}) {
        Frame f = sample(uint8_t(c), pl);
        f.ipv6 = v6;
        const Bytes b = encode(f);
        const auto old = decode(b);
        ASSERT_TRUE(old);
        const WireDecode w = decode_wire(b.data(), b.size());
        ASSERT_EQ(w.status, WireStatus::Ok) << i->name << " " << w.why;
        expect_same(*old, w.w.f, std::string(i->name) + (v6 ? " IPv6" : " IPv4") + " payload " + std::to_string(pl));
        EXPECT_TRUE(w.w.icrc_ok()) << i->name;
        EXPECT_EQ(w.w.op->transport, c == op::CNP ? WireTransport::CNP
                                                  : c >= 0x60 ? WireTransport::UD
                                                              : WireTransport::RC);
      }
  }
}

TEST(WireDecode, EveryOpcodeHasAnEntry) {
  int known = 0;
  for (int c = 0; c < 256; ++c) {
    const WireOpcode& o = wire_opcode(uint8_t(c));
    EXPECT_EQ(o.code, c);
    EXPECT_FALSE(o.name.empty());
    known += o.known;
    if (!o.known) EXPECT_EQ(o.name.rfind("UNKNOWN_0x", 0), 0u) << o.name;
  }
  // RC 23, UC 12, RD 21, UD 2, CNP 1, XRC 23 (RC's operations).
  EXPECT_EQ(known, 23 + 12 + 21 + 2 + 1 + 23);
  EXPECT_EQ(wire_opcode(0x2A).name, "UC_WRITE_ONLY");
  EXPECT_EQ(wire_opcode(0x2A).ext, kExtReth);
  EXPECT_EQ(wire_opcode(0x44).name, "RD_SEND_ONLY");
  EXPECT_EQ(wire_opcode(0x44).ext, kExtRdeth | kExtDeth);
  EXPECT_EQ(wire_opcode(0x51).ext, kExtRdeth | kExtAeth);
  EXPECT_EQ(wire_opcode(0x4E).ext, kExtRdeth);  // RD READ response MIDDLE
  EXPECT_EQ(wire_opcode(0xAA).name, "XRC_WRITE_ONLY");
  EXPECT_EQ(wire_opcode(0xAA).ext, kExtXrceth | kExtReth);
  EXPECT_EQ(wire_opcode(0xB1).ext, kExtAeth);  // XRC ACK: no XRCETH
  EXPECT_FALSE(wire_opcode(0x2C).known);       // UC has no READ
  EXPECT_FALSE(wire_opcode(0x15).known);
  EXPECT_EQ(wire_opcode(0xC5).transport, WireTransport::Vendor);
}

// UC and unknown opcodes: decoded (the codec refuses them), ICRC checked.
TEST(WireDecode, UcAndUnknownOpcodesAreDecoded) {
  const Frame rc = sample(op::RC_WRITE_ONLY, 64);
  Bytes b = encode(rc);
  const size_t bth = 14 + 20 + 8;
  auto with_opcode = [&](uint8_t code) {
    Bytes x = b;
    x[bth] = code;
    put_le32(&x[x.size() - 4], compute_icrc(x.data(), x.size() - 4));
    return x;
  };
  // UC WRITE_ONLY: RC's headers (RETH), which the codec refuses.
  const Bytes uc = with_opcode(0x2A);
  DecodeError e = DecodeError::None;
  EXPECT_FALSE(decode(uc, &e));
  EXPECT_EQ(e, DecodeError::UnknownOpcode);
  WireDecode w = decode_wire(uc.data(), uc.size());
  ASSERT_EQ(w.status, WireStatus::Ok) << w.why;
  EXPECT_EQ(w.w.op->name, "UC_WRITE_ONLY");
  EXPECT_EQ(w.w.op->transport, WireTransport::UC);
  ASSERT_TRUE(w.w.f.reth);
  EXPECT_EQ(w.w.f.reth->va, rc.reth->va);
  EXPECT_EQ(w.w.f.reth->dma_len, 64u);
  EXPECT_EQ(w.w.f.payload, rc.payload);
  EXPECT_TRUE(w.w.icrc_ok());
  EXPECT_TRUE(as_plain_rocev2(uc.data(), uc.size(), w.w).empty());  // not for the RC/UD monitor
  // A vendor opcode: the BTH, everything after it is payload.
  const Bytes vendor = with_opcode(0xC5);
  w = decode_wire(vendor.data(), vendor.size());
  ASSERT_EQ(w.status, WireStatus::Ok) << w.why;
  EXPECT_FALSE(w.w.op->known);
  EXPECT_EQ(w.w.op->name, "UNKNOWN_0xC5");
  EXPECT_EQ(w.w.f.bth.psn, rc.bth.psn);
  EXPECT_EQ(w.w.f.bth.dest_qp, rc.bth.dest_qp);
  EXPECT_EQ(w.w.f.payload.size(), 16u + 64u);
  EXPECT_TRUE(w.w.icrc_ok());
  // A corrupted byte: decoded, the ICRC says so.
  Bytes bad = uc;
  bad[bth + 30] ^= 1;
  w = decode_wire(bad.data(), bad.size());
  ASSERT_EQ(w.status, WireStatus::Ok);
  EXPECT_FALSE(w.w.icrc_ok());
}

TEST(WireDecode, VlanRoceV1PaddingAndMalformed) {
  const Frame f = sample(op::RC_SEND_ONLY, 13);
  const Bytes plain = encode(f);
  // 802.1Q + 802.1ad tags and 6 trailing bytes: the same frame, the same ICRC.
  Bytes t = plain;
  const uint8_t tags[8] = {0x88, 0xA8, 0x00, 0x05, 0x81, 0x00, 0x20, 0x64};
  t.insert(t.begin() + 12, tags, tags + 8);
  t.insert(t.end(), 6, 0);
  WireDecode w = decode_wire(t.data(), t.size());
  ASSERT_EQ(w.status, WireStatus::Ok) << w.why;
  EXPECT_EQ(w.w.vlans, (std::vector<uint16_t>{0x0005, 0x2064}));
  EXPECT_EQ(w.w.trailing, 6u);
  EXPECT_TRUE(w.w.icrc_ok());
  expect_same(*decode(plain), w.w.f, "vlan");
  EXPECT_EQ(as_plain_rocev2(t.data(), t.size(), w.w), plain);

  // RoCEv1: Ethernet | GRH | BTH ... built from the IPv6 form of the frame.
  Frame f6 = f;
  f6.ipv6 = true;
  const Bytes v2 = encode(f6);
  Bytes v1(v2.begin(), v2.begin() + 12);
  v1.push_back(0x89);
  v1.push_back(0x15);
  const size_t bth_len = v2.size() - 14 - 40 - 8;  // BTH .. ICRC
  Bytes grh(v2.begin() + 14, v2.begin() + 54);
  put_be16(&grh[4], uint16_t(bth_len));
  grh[6] = kGrhNextHeaderBth;
  v1.insert(v1.end(), grh.begin(), grh.end());
  v1.insert(v1.end(), v2.begin() + 62, v2.end());
  w = decode_wire(v1.data(), v1.size());
  ASSERT_EQ(w.status, WireStatus::Ok) << w.why;
  EXPECT_EQ(w.w.encap, Encap::RoceV1);
  EXPECT_EQ(w.w.f.payload, f.payload);
  EXPECT_FALSE(w.w.icrc_ok());  // the RoCEv2 ICRC carried over: RoCEv1's coverage differs
  put_le32(&v1[v1.size() - 4], w.w.icrc_calc);
  EXPECT_TRUE(decode_wire(v1.data(), v1.size()).w.icrc_ok());

  // Malformed: every truncation is refused or not RoCE, never read past the end.
  for (size_t n = 0; n < plain.size(); ++n) {
    std::vector<uint8_t> cut(plain.begin(), plain.begin() + long(n));
    const WireDecode c = decode_wire(cut.data(), cut.size());
    EXPECT_NE(c.status, WireStatus::Ok) << n;
  }
  // PadCnt larger than the bytes after the headers.
  Frame ack = sample(op::RC_ACK);
  Bytes a = encode(ack);
  a[14 + 20 + 8 + 1] |= 0x30;
  w = decode_wire(a.data(), a.size());
  EXPECT_EQ(w.status, WireStatus::Malformed);
  EXPECT_NE(w.why.find("PadCnt"), std::string::npos) << w.why;
  // Not RoCE: ARP, TCP, another UDP port.
  Bytes arp = plain;
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(decode_wire(arp.data(), arp.size()).status, WireStatus::NotRoce);
  Bytes port = plain;
  put_be16(&port[36], 4792);
  EXPECT_EQ(decode_wire(port.data(), port.size()).status, WireStatus::NotRoce);
}

}  // namespace
