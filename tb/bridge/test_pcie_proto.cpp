// tb/bridge: SimBricks' PCIe message layouts, byte for byte, against the
// offsets of simbricks/simbricks lib/simbricks/base/proto.h and
// pcie/proto.h (64-byte headers, timestamp at 48, own_type at 63; the
// per-type fields at the offsets the protocol documents), written out here
// by hand, not produced by the encoder under test.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "model/bridge/pcie_proto.h"

using namespace ernic::bridge;

namespace {

// A 64-byte header with the given bytes set (offset -> byte).
std::vector<uint8_t> header(std::initializer_list<std::pair<size_t, uint8_t>> set, size_t data = 0) {
  std::vector<uint8_t> b(64 + data, 0);
  for (auto [at, v] : set) b[at] = v;
  return b;
}

// The little-endian bytes of timestamp 0x0102030405060708 at 48..55.
std::vector<std::pair<size_t, uint8_t>> ts_bytes() {
  return {{48, 0x08}, {49, 0x07}, {50, 0x06}, {51, 0x05}, {52, 0x04}, {53, 0x03}, {54, 0x02}, {55, 0x01}};
}
constexpr uint64_t kTs = 0x0102030405060708ull;

std::vector<uint8_t> with(std::vector<uint8_t> b, const std::vector<std::pair<size_t, uint8_t>>& more) {
  for (auto [at, v] : more) b[at] = v;
  return b;
}

}  // namespace

TEST(PcieProto, H2DReadLayout) {
  Msg m;
  m.type = MsgType::H2DRead;
  m.req_id = 0x1122334455667788ull;
  m.offset = 0x20060;  // ERRBUFBA in the 3.1 layout
  m.len = 4;
  m.bar = 0;
  m.timestamp_ps = kTs;
  const auto want = with(header({{0, 0x88}, {1, 0x77}, {2, 0x66}, {3, 0x55}, {4, 0x44}, {5, 0x33}, {6, 0x22},
                                 {7, 0x11}, {8, 0x60}, {9, 0x00}, {10, 0x02}, {16, 0x04}, {63, 0x60}}),
                         ts_bytes());
  EXPECT_EQ(encode(m), want);
  std::string why;
  auto d = decode(want.data(), want.size(), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->type, MsgType::H2DRead);
  EXPECT_EQ(d->req_id, m.req_id);
  EXPECT_EQ(d->offset, 0x20060u);
  EXPECT_EQ(d->len, 4);
  EXPECT_EQ(d->timestamp_ps, kTs);
}

TEST(PcieProto, H2DWriteAndPostedCarryDataAfterTheHeader) {
  for (MsgType t : {MsgType::H2DWrite, MsgType::H2DWritePosted}) {
    Msg m;
    m.type = t;
    m.req_id = 7;
    m.offset = 0x20338;  // SQPIi of QP2
    m.bar = 0;
    m.data = {0x01, 0x00, 0x00, 0x00};
    auto want = header({{0, 7}, {8, 0x38}, {9, 0x03}, {10, 0x02}, {16, 4}, {63, uint8_t(t)}}, 4);
    want[64] = 0x01;
    EXPECT_EQ(encode(m), want) << msg_type_name(t);
    auto d = decode(want.data(), want.size(), nullptr);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->data, m.data);
  }
  EXPECT_EQ(uint8_t(MsgType::H2DWrite), 0x61);
  EXPECT_EQ(uint8_t(MsgType::H2DWritePosted), 0x65);
}

TEST(PcieProto, CompletionsDevctrlInterruptSyncTerminate) {
  Msg rc;
  rc.type = MsgType::D2HReadComp;
  rc.req_id = 0x0102;
  rc.data = {0xAA, 0xBB, 0xCC, 0xDD};
  auto want = header({{0, 0x02}, {1, 0x01}, {63, 0x43}}, 4);
  std::memcpy(&want[64], "\xAA\xBB\xCC\xDD", 4);
  EXPECT_EQ(encode(rc), want);

  Msg wc;
  wc.type = MsgType::H2DWriteComp;
  wc.req_id = 9;
  EXPECT_EQ(encode(wc), header({{0, 9}, {63, 0x63}}));

  Msg dc;
  dc.type = MsgType::H2DDevCtrl;
  dc.flags = kCtrlMsixEn;  // bit 2
  EXPECT_EQ(encode(dc), header({{0, 0x04}, {63, 0x64}}));

  Msg in;
  in.type = MsgType::D2HInterrupt;
  in.vector = 0x0102;
  in.inttype = kIntMsix;  // 3
  in.timestamp_ps = kTs;
  EXPECT_EQ(encode(in), with(header({{0, 0x02}, {1, 0x01}, {2, 3}, {63, 0x42}}), ts_bytes()));

  Msg sy;
  sy.type = MsgType::Sync;
  sy.timestamp_ps = kTs;
  EXPECT_EQ(encode(sy), with(header({{63, 0x00}}), ts_bytes()));
  sy.flags = kSyncUntilIrq;  // the extension: byte 0 of SimBricks' padding
  EXPECT_EQ(encode(sy), with(header({{0, 1}, {63, 0x00}}), ts_bytes()));
  sy.flags = kSyncUntilDmaWrite;  // the extension's bit 1: stop after the first DMA write
  EXPECT_EQ(encode(sy), with(header({{0, 2}, {63, 0x00}}), ts_bytes()));
  sy.flags = kSyncUntilIrq | kSyncUntilDmaWrite;
  EXPECT_EQ(encode(sy), with(header({{0, 3}, {63, 0x00}}), ts_bytes()));
  EXPECT_EQ(kSyncUntilIrq, 1);
  EXPECT_EQ(kSyncUntilDmaWrite, 2);
  EXPECT_EQ(kSyncFlagsKnown, 3);
  {
    const auto b = with(header({{0, 2}, {63, 0x00}}), ts_bytes());
    auto d = decode(b.data(), b.size(), nullptr);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->flags, uint64_t(kSyncUntilDmaWrite));
    EXPECT_EQ(d->timestamp_ps, kTs);
  }

  Msg te;
  te.type = MsgType::Terminate;
  EXPECT_EQ(encode(te), header({{63, 0x01}}));
}

TEST(PcieProto, DeviceToHostDmaLayout) {
  Msg r;
  r.type = MsgType::D2HRead;
  r.req_id = 3;
  r.offset = 0x100040;
  r.len = 0x1000;
  EXPECT_EQ(encode(r), header({{0, 3}, {8, 0x40}, {10, 0x10}, {16, 0x00}, {17, 0x10}, {63, 0x40}}));
  Msg w;
  w.type = MsgType::D2HWrite;
  w.req_id = 4;
  w.offset = 0x200000;
  w.data.assign(300, 0x5A);
  auto want = header({{0, 4}, {10, 0x20}, {16, 0x2C}, {17, 0x01}, {63, 0x41}}, 300);
  std::fill(want.begin() + 64, want.end(), 0x5A);
  EXPECT_EQ(encode(w), want);
}

TEST(PcieProto, MalformedMessagesAreRefusedWithAReason) {
  std::string why;
  std::vector<uint8_t> b(63, 0);
  EXPECT_FALSE(decode(b.data(), b.size(), &why));
  EXPECT_NE(why.find("shorter than the 64-byte header"), std::string::npos) << why;

  auto unknown = header({{63, 0x7E}});
  EXPECT_FALSE(decode(unknown.data(), unknown.size(), &why));
  EXPECT_NE(why.find("unknown message type 0x7e"), std::string::npos) << why;

  auto owned = header({{63, 0x80 | 0x60}});
  EXPECT_FALSE(decode(owned.data(), owned.size(), &why));
  EXPECT_NE(why.find("ownership bit"), std::string::npos) << why;

  auto lying = header({{16, 8}, {63, 0x65}}, 4);  // says 8 bytes, carries 4
  EXPECT_FALSE(decode(lying.data(), lying.size(), &why));
  EXPECT_NE(why.find("says len 8 but carries 4"), std::string::npos) << why;

  auto trailing = header({{63, 0x60}}, 2);  // a READ carries no data
  EXPECT_FALSE(decode(trailing.data(), trailing.size(), &why));
  EXPECT_NE(why.find("bytes after its header"), std::string::npos) << why;

  Msg toolong;
  toolong.type = MsgType::D2HWrite;
  toolong.data.resize(kMaxData + 1);
  EXPECT_THROW(encode(toolong), std::invalid_argument);
}

TEST(PcieProto, DeviceIntroLayout) {
  DevIntro d;
  d.bars[0].len = 0x40000;
  d.vendor_id = 0x10EE;
  d.device_id = 0x9038;
  d.pci_class = 0x02;
  d.msix_nvecs = 1;
  const std::vector<uint8_t> b = encode_device_intro(d, 0x1003F);
  ASSERT_EQ(b.size(), 80u + 119u);
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(b[at + size_t(i)]) << (8 * i);
    return v;
  };
  EXPECT_EQ(u64(0), 1u);          // version
  EXPECT_EQ(u64(24), 0x1003Fu);   // l2c_elen
  EXPECT_EQ(u64(48), 0x1003Fu);   // c2l_elen
  EXPECT_EQ(u64(64), 2u);         // upper layer: PCIe
  EXPECT_EQ(u64(72), 80u);        // its intro right after
  EXPECT_EQ(u64(80), 0x40000u);   // bars[0].len
  EXPECT_EQ(b[80 + 96], 0xEE);    // vendor id
  EXPECT_EQ(b[80 + 97], 0x10);
  EXPECT_EQ(b[80 + 98], 0x38);    // device id
  EXPECT_EQ(b[80 + 100], 0x02);   // class
  EXPECT_EQ(b[80 + 105], 1);      // msix_nvecs (u16 at 105)
  std::string why;
  auto back = decode_device_intro(b.data(), b.size(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->bars[0].len, 0x40000u);
  EXPECT_EQ(back->msix_nvecs, 1);
}

TEST(PcieProto, AnotherProtocolVersionIsRefusedAtTheIntro) {
  std::vector<uint8_t> host = encode_host_intro();
  ASSERT_EQ(host.size(), 36u);
  std::string why;
  EXPECT_TRUE(decode_host_intro(host.data(), host.size(), &why)) << why;
  host[0] = 2;
  EXPECT_FALSE(decode_host_intro(host.data(), host.size(), &why));
  EXPECT_EQ(why, "peer speaks SimBricks protocol version 2, this simulator speaks 1");
  host[0] = 1;
  host[16] = 1;  // the network protocol
  EXPECT_FALSE(decode_host_intro(host.data(), host.size(), &why));
  EXPECT_NE(why.find("not PCIe"), std::string::npos);
  std::vector<uint8_t> dev = encode_device_intro(DevIntro{}, 64);
  EXPECT_FALSE(decode_device_intro(dev.data(), 100, &why));  // truncated
  EXPECT_NE(why.find("outside the intro"), std::string::npos) << why;
}
