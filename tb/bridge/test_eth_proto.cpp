// SimBricks' Ethernet protocol (model/bridge/eth_proto.h) byte for byte.
// The expected bytes are written by hand from lib/simbricks/network/proto.h
// and base/proto.h (version 1): PACKET = len u16 @0, port u8 @2, timestamp
// u64 @48, own_type @63 = 0x40, the frame from @64; SYNC 0x00 and
// TERMINATE 0x01 are bare headers; the listener intro is 10 x u64 with
// protocol id NET = 1 and its (empty) upper-layer intro at offset 80; the
// connecter intro 4 x u64 with the intro at offset 32.
#include <gtest/gtest.h>

#include <stdexcept>

#include "model/bridge/eth_proto.h"

using namespace ernic::bridge;

namespace {
std::vector<uint8_t> zeros(size_t n) { return std::vector<uint8_t>(n, 0); }
void le(std::vector<uint8_t>& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
}  // namespace

TEST(EthProto, PacketBytes) {
  NetMsg m;
  m.kind = NetMsg::Packet;
  m.port = 3;
  m.timestamp_ps = 0x0102030405060708ull;
  m.frame = {0xDE, 0xAD, 0xBE, 0xEF, 0x01};
  std::vector<uint8_t> want = zeros(64 + 5);
  want[0] = 0x05;  // len = 5, little-endian
  want[1] = 0x00;
  want[2] = 0x03;  // port
  for (int i = 0; i < 8; ++i) want[48 + i] = uint8_t(0x08 - i);  // timestamp LE
  want[63] = 0x40;
  want[64] = 0xDE, want[65] = 0xAD, want[66] = 0xBE, want[67] = 0xEF, want[68] = 0x01;
  EXPECT_EQ(encode_net(m), want);
  std::string why;
  auto d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->kind, NetMsg::Packet);
  EXPECT_EQ(d->port, 3);
  EXPECT_EQ(d->timestamp_ps, 0x0102030405060708ull);
  EXPECT_EQ(d->frame, m.frame);
}

TEST(EthProto, LargestErnicFrameFitsAnEntry) {
  NetMsg m;
  m.kind = NetMsg::Packet;
  m.frame.assign(4170, 0x5A);
  const auto b = encode_net(m);
  EXPECT_EQ(b.size(), 64u + 4170u);
  EXPECT_EQ(b[0], 4170 & 0xFF);
  EXPECT_EQ(b[1], 4170 >> 8);
  EXPECT_LE(b.size(), kNetEntryBytes);
  m.frame.assign(0x10000, 0);
  EXPECT_THROW(encode_net(m), std::invalid_argument);
}

TEST(EthProto, SyncAndTerminateAreBareHeaders) {
  NetMsg s;
  s.kind = NetMsg::Sync;
  s.timestamp_ps = 1000;
  std::vector<uint8_t> want = zeros(64);
  le(want, 48, 1000, 8);
  EXPECT_EQ(encode_net(s), want);
  NetMsg t;
  t.kind = NetMsg::Terminate;
  want = zeros(64);
  want[63] = 0x01;
  EXPECT_EQ(encode_net(t), want);
  s.frame = {1};
  EXPECT_THROW(encode_net(s), std::invalid_argument);
}

// Our extension in a SYNC's padding (eth_proto.h): "ERN1" @0, flags u8 @4
// (bit 0 ctl_ps given, bit 1 lax_ps given, bit 2 lax_ps is a model error
// had), next_ps @8, acked @16,
// lookahead_ps @24, ctl_ps @32, lax_ps @40; the stamp @48 and type @63 as
// SimBricks has them.
TEST(EthProto, SyncExtensionBytes) {
  NetMsg s;
  s.kind = NetMsg::Sync;
  s.timestamp_ps = 7000;
  s.sync_info = NetSyncInfo{5000, 12, 100000, std::nullopt, std::nullopt};
  std::vector<uint8_t> want = zeros(64);
  want[0] = 'E', want[1] = 'R', want[2] = 'N', want[3] = '1';
  le(want, 8, 5000, 8);
  le(want, 16, 12, 8);
  le(want, 24, 100000, 8);
  le(want, 48, 7000, 8);
  EXPECT_EQ(encode_net(s), want);  // neither given: flags 0, zeros there
  s.sync_info->ctl_ps = ~uint64_t(0);  // passive: no CONTROL of its own
  s.sync_info->lax_ps = 0;             // an unjudged monitor event at 0 ps is given, not "absent"
  want[4] = 0x03;
  le(want, 32, ~uint64_t(0), 8);
  EXPECT_EQ(encode_net(s), want);
  std::string why;
  auto d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  ASSERT_TRUE(d->sync_info);
  EXPECT_EQ(d->sync_info->next_ps, 5000u);
  EXPECT_EQ(d->sync_info->acked, 12u);
  EXPECT_EQ(d->sync_info->lookahead_ps, 100000u);
  EXPECT_EQ(d->sync_info->ctl(), ~uint64_t(0));
  EXPECT_EQ(d->sync_info->lax(), 0u);
  want[4] = 0x02;  // ctl_ps not given: next_ps stands for it, whatever @32 holds
  d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_FALSE(d->sync_info->ctl_ps);
  EXPECT_EQ(d->sync_info->ctl(), 5000u);
  EXPECT_EQ(d->sync_info->lax(), 0u);
  EXPECT_FALSE(d->sync_info->lax_error);
  // A model error had at 9,000 ps: bit 2 with lax_ps.
  s.sync_info->lax_ps = 9000;
  s.sync_info->lax_error = true;
  want[4] = 0x07;
  le(want, 40, 9000, 8);
  EXPECT_EQ(encode_net(s), want);
  d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->sync_info->lax_error);
  EXPECT_EQ(d->sync_info->lax(), 9000u);
  want[4] = 0x05;  // bit 2 without lax_ps given: no error is said
  d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_FALSE(d->sync_info->lax_error);
  EXPECT_FALSE(d->sync_info->lax_ps);
}

TEST(EthProto, MalformedMessagesAreRefusedByName) {
  std::string why;
  std::vector<uint8_t> b = zeros(63);
  EXPECT_FALSE(decode_net(b.data(), b.size(), &why));
  EXPECT_NE(why.find("shorter than the 64-byte header"), std::string::npos) << why;
  b = zeros(64);
  b[63] = 0x80;  // ownership bit on a stream
  EXPECT_FALSE(decode_net(b.data(), b.size(), &why));
  EXPECT_NE(why.find("ownership bit"), std::string::npos) << why;
  b[63] = 0x41;
  EXPECT_FALSE(decode_net(b.data(), b.size(), &why));
  EXPECT_EQ(why, "unknown Ethernet message type 0x41");
  b = zeros(64 + 10);
  b[63] = 0x40;
  b[0] = 9;  // says 9, carries 10
  EXPECT_FALSE(decode_net(b.data(), b.size(), &why));
  EXPECT_EQ(why, "PACKET says len 9 but carries 10 bytes");
  b[63] = 0x00;
  EXPECT_FALSE(decode_net(b.data(), b.size(), &why));
  EXPECT_EQ(why, "SYNC with 10 bytes after its header");
}

// Our CONTROL 0x7E (eth_proto.h), written by hand from its layout: len @0,
// kind @4, node @5, time @8, id @16, a @24, b @32, "ERNC" @40, stamp @48, type @63,
// data after the header.
TEST(EthProto, ControlBytes) {
  NetMsg m;
  m.kind = NetMsg::Control;
  m.timestamp_ps = 0x1122;
  m.control.kind = NetControl::ReadRequest;
  m.control.node = 1;
  m.control.time_ps = 0x0A0B0C;
  m.control.id = 7;
  m.control.a = 0x100000;
  m.control.b = 32768;
  m.control.data = {0xEE, 0xFF};
  std::vector<uint8_t> want = zeros(64 + 2);
  want[0] = 2;  // len: the data's bytes
  want[40] = 'E', want[41] = 'R', want[42] = 'N', want[43] = 'C';
  want[4] = 3;  // a read request
  want[5] = 1;
  le(want, 8, 0x0A0B0C, 8);
  le(want, 16, 7, 8);
  le(want, 24, 0x100000, 8);
  le(want, 32, 32768, 8);
  le(want, 48, 0x1122, 8);
  want[63] = 0x7E;
  want[64] = 0xEE, want[65] = 0xFF;
  EXPECT_EQ(encode_net(m), want);
  std::string why;
  auto d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->kind, NetMsg::Control);
  EXPECT_EQ(d->control.kind, NetControl::ReadRequest);
  EXPECT_EQ(d->control.node, 1);
  EXPECT_EQ(d->control.time_ps, 0x0A0B0Cu);
  EXPECT_EQ(d->control.id, 7u);
  EXPECT_EQ(d->control.a, 0x100000u);
  EXPECT_EQ(d->control.b, 32768u);
  EXPECT_EQ(d->control.data, m.control.data);
  // Without the magic, or of a kind not defined: refused by name.
  want[40] = 'X';
  EXPECT_FALSE(decode_net(want.data(), want.size(), &why));
  EXPECT_EQ(why, "CONTROL without its \"ERNC\" magic");
  want[40] = 'E';
  want[0] = 3;  // a len that is not the data's
  EXPECT_FALSE(decode_net(want.data(), want.size(), &why));
  EXPECT_EQ(why, "CONTROL says len 3 but carries 2 bytes");
  want[0] = 2;
  want[4] = 10;  // StepUnderway, the last kind defined
  EXPECT_TRUE(decode_net(want.data(), want.size(), &why));
  want[4] = 11;
  EXPECT_FALSE(decode_net(want.data(), want.size(), &why));
  EXPECT_EQ(why, "CONTROL of unknown kind 11");
  m.control.kind = NetControl::Kind(0);
  EXPECT_THROW(encode_net(m), std::invalid_argument);
}

// The watchdog's progress request (kind 7, node 0xFF: the process that
// gets it) and its reply (kind 8, a: the progress in ps), by hand.
TEST(EthProto, ProgressControlBytes) {
  NetMsg q;
  q.kind = NetMsg::Control;
  q.timestamp_ps = 0x2000;
  q.control.kind = NetControl::ProgressRequest;
  q.control.node = NetControl::kNodeHere;
  q.control.time_ps = 3796637;
  q.control.id = 4;
  std::vector<uint8_t> want = zeros(64);
  want[40] = 'E', want[41] = 'R', want[42] = 'N', want[43] = 'C';
  want[4] = 7;
  want[5] = 0xFF;
  le(want, 8, 3796637, 8);
  le(want, 16, 4, 8);
  le(want, 48, 0x2000, 8);
  want[63] = 0x7E;
  EXPECT_EQ(encode_net(q), want);
  std::string why;
  auto d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->control.kind, NetControl::ProgressRequest);
  EXPECT_EQ(d->control.node, 0xFF);
  EXPECT_EQ(d->control.time_ps, 3796637u);
  NetMsg r = q;
  r.control.kind = NetControl::ProgressReply;
  r.control.node = 0;
  r.control.a = 1796001;
  want[4] = 8;
  want[5] = 0;
  le(want, 24, 1796001, 8);
  EXPECT_EQ(encode_net(r), want);
  d = decode_net(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->control.kind, NetControl::ProgressReply);
  EXPECT_EQ(d->control.a, 1796001u);
  EXPECT_EQ(d->control.b, 0u);
}

TEST(EthProto, IntroBytes) {
  std::vector<uint8_t> want = zeros(80);
  le(want, 0, 1, 8);      // version
  le(want, 8, 1, 8);      // flags: sync requested
  le(want, 24, 4416, 8);  // l2c_elen
  le(want, 48, 4416, 8);  // c2l_elen
  le(want, 64, 1, 8);     // upper-layer protocol: NET
  le(want, 72, 80, 8);    // upper-layer intro right after (empty)
  EXPECT_EQ(encode_net_listener_intro(kNetEntryBytes, kIntroFlagSync), want);
  EXPECT_EQ(kNetEntryBytes, 4416u);
  std::string why;
  auto li = decode_net_listener_intro(want.data(), want.size(), &why);
  ASSERT_TRUE(li) << why;
  EXPECT_EQ(li->flags, 1u);
  EXPECT_EQ(li->l2c.elen, 4416u);
  std::vector<uint8_t> co = zeros(32);
  le(co, 0, 1, 8);
  le(co, 16, 1, 8);
  le(co, 24, 32, 8);
  EXPECT_EQ(encode_net_connecter_intro(), co);
  EXPECT_TRUE(decode_net_connecter_intro(co.data(), co.size(), &why)) << why;
  // A PCIe peer, or another version, is refused by name.
  le(co, 16, 2, 8);
  EXPECT_FALSE(decode_net_connecter_intro(co.data(), co.size(), &why));
  EXPECT_EQ(why, "peer's upper-layer protocol is 2, not Ethernet (1)");
  le(want, 0, 2, 8);
  EXPECT_FALSE(decode_net_listener_intro(want.data(), want.size(), &why));
  EXPECT_EQ(why, "peer speaks SimBricks protocol version 2, this simulator speaks 1");
}
