// model/link/pfc.h: PAUSE / PFC frames as IEEE 802.3 Annex 31B and 802.1Qbb
// lay them out, and the XRNIC_PAUSE_CONF rules (assumption A-PFC-1).
#include <gtest/gtest.h>

#include "model/link/pfc.h"

using namespace ernic;

namespace {
const uint8_t kMac[6] = {0x02, 0, 0, 0, 0, 0x0b};
}

TEST(Pfc, FrameLayoutIs8021Qbb) {
  pfc::PauseFrame p;
  p.pfc = true;
  p.class_enable = 0x08;
  p.time[3] = 0xFFFF;
  const auto f = pfc::build(kMac, p);
  ASSERT_EQ(f.size(), 60u);
  const std::vector<uint8_t> head = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x0b,
                                     0x88, 0x08, 0x01, 0x01, 0x00, 0x08};
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 18), head);
  EXPECT_EQ(f[18 + 6], 0xFF);  // time[3], big-endian
  EXPECT_EQ(f[18 + 7], 0xFF);
  for (size_t i = 34; i < 60; ++i) EXPECT_EQ(f[i], 0) << i;
  const auto q = pfc::parse(f.data(), f.size());
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->pfc);
  EXPECT_EQ(q->class_enable, 0x08);
  EXPECT_EQ(q->time[3], 0xFFFF);
  EXPECT_EQ(q->time[2], 0);
}

TEST(Pfc, GlobalPauseAndOtherControlFrames) {
  pfc::PauseFrame p;
  p.time[0] = 0x1234;
  auto f = pfc::build(kMac, p);
  EXPECT_EQ(f[14], 0x00);
  EXPECT_EQ(f[15], 0x01);
  auto q = pfc::parse(f.data(), f.size());
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->pfc);
  EXPECT_EQ(q->time[0], 0x1234);
  f[15] = 0x02;  // another MAC control opcode: not a pause
  EXPECT_FALSE(pfc::parse(f.data(), f.size()));
  f[12] = 0x08, f[13] = 0x00;  // IPv4
  EXPECT_FALSE(pfc::is_mac_control(f.data(), f.size()));
}

TEST(Pfc, PauseConfRules) {
  // Reset value 0x800: pause disabled for both; non-RoCE priority 8 (802.3x).
  EXPECT_EQ(pfc::pause_bit(0x800, true), -1);
  EXPECT_EQ(pfc::pause_bit(0x800, false), -1);
  EXPECT_EQ(pfc::pause_bit(0x802, false), 8);
  EXPECT_EQ(pfc::pause_bit(0x831, true), 3);
  EXPECT_EQ(pfc::pause_bit(0x8F1, true), 8) << "9..15 taken as 8";
  EXPECT_TRUE(pfc::tx_held(0x831, true, 0x008));
  EXPECT_FALSE(pfc::tx_held(0x831, true, 0x004)) << "another priority";
  EXPECT_FALSE(pfc::tx_held(0x830, true, 0x008)) << "RoCE pause disabled";
  EXPECT_TRUE(pfc::tx_held(0x1831, true, 0x004)) << "[12]: no priority check";
  EXPECT_FALSE(pfc::tx_held(0x831, false, 0x1FF)) << "non-RoCE pause disabled";
  EXPECT_TRUE(pfc::tx_held(0x802, false, 0x100));
}
