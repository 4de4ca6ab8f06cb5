// Tests for model/scenario/scenario.h: the fill generator is deterministic
// (random is std::mt19937_64, little endian) and any sub-range regenerates
// the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "model/scenario/scenario.h"

using namespace ernic;

TEST(FillPattern, RandomIsMt19937_64LittleEndian) {
  // The first output of std::mt19937_64 with the default seed (5489) is fixed
  // by the C++ standard's algorithm: 14514284786278117030.
  uint8_t b[10];
  fill_pattern(b, sizeof b, Pattern::random, 5489, 0, 0);
  const uint64_t first = 14514284786278117030ull;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], uint8_t(first >> (8 * i))) << i;
  std::mt19937_64 g(5489);
  g();
  const uint64_t second = g();
  EXPECT_EQ(b[8], uint8_t(second));
  EXPECT_EQ(b[9], uint8_t(second >> 8));
}

TEST(FillPattern, SubRangesRegenerate) {
  for (Pattern p : {Pattern::random, Pattern::incrementing, Pattern::zero, Pattern::constant}) {
    std::vector<uint8_t> whole(1000);
    fill_pattern(whole.data(), whole.size(), p, 7, 0x5A, 0);
    for (size_t off : {1u, 7u, 8u, 13u, 300u, 999u}) {
      std::vector<uint8_t> part(1000 - off);
      fill_pattern(part.data(), part.size(), p, 7, 0x5A, off);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + off)) << to_string(p) << " " << off;
    }
  }
  uint8_t inc[4];
  fill_pattern(inc, 4, Pattern::incrementing, 0, 0, 254);
  EXPECT_EQ(inc[0], 254);
  EXPECT_EQ(inc[1], 255);
  EXPECT_EQ(inc[2], 0);
  EXPECT_EQ(inc[3], 1);
  uint8_t k[3];
  fill_pattern(k, 3, Pattern::constant, 0, 0xC3, 0);
  EXPECT_EQ(k[2], 0xC3);
}
