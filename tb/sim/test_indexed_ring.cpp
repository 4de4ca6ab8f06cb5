// model/sim/indexed_ring: entries keep their push index across wrap-around
// and growth; forgetting moves base() and never more than what is kept.
#include <gtest/gtest.h>

#include <cstdint>

#include "model/sim/indexed_ring.h"

using ernic::IndexedRing;

// A sliding window of 40 values over 10,000 pushes (the ring wraps its
// 64-entry buffer many times): every kept index holds its own value.
TEST(IndexedRing, SlidingWindowKeepsEachIndexsValueAcrossWraps) {
  IndexedRing<uint64_t> r;
  for (uint64_t i = 0; i < 10000; ++i) {
    r.push_back(i * 3 + 1);
    if (i >= 40) r.drop_below(i - 39);
    ASSERT_EQ(r.end(), i + 1);
    ASSERT_EQ(r.base(), i >= 40 ? i - 39 : 0);
    ASSERT_EQ(r.size(), i >= 40 ? 40u : i + 1);
    for (uint64_t k = r.base(); k < r.end(); k += 7) ASSERT_EQ(r.at(k), k * 3 + 1) << "index " << k;
  }
}

// Growth while the ring has wrapped (head not at 0) keeps the order.
TEST(IndexedRing, GrowingAfterAWrapKeepsTheOrder) {
  IndexedRing<uint32_t> r;
  for (uint32_t i = 0; i < 16; ++i) r.push_back(i);  // fills the first 16 entries
  r.drop_below(10);                                  // head at 10
  for (uint32_t i = 16; i < 100; ++i) r.push_back(i);  // wraps, then grows twice
  EXPECT_EQ(r.base(), 10u);
  EXPECT_EQ(r.end(), 100u);
  for (uint32_t k = 10; k < 100; ++k) EXPECT_EQ(r.at(k), k);
}

// Forgetting below base() does nothing; beyond end() it empties the ring
// and base() stops at end(): the next push gets end()'s index.
TEST(IndexedRing, ForgettingStopsAtWhatIsKept) {
  IndexedRing<int> r;
  r.drop_below(5);
  EXPECT_EQ(r.base(), 0u);
  EXPECT_TRUE(r.empty());
  r.push_back(7);
  r.push_back(8);
  r.drop_below(0);
  EXPECT_EQ(r.size(), 2u);
  r.drop_below(100);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.base(), 2u);
  r.push_back(9);
  EXPECT_EQ(r.base(), 2u);
  EXPECT_EQ(r.at(2), 9);
}
