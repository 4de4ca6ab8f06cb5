// tb/ext: the QP-context cache's replacement state alone (QpCtxLru,
// model/ernic/qp_ctx_cache.h): LRU order, eviction of the least recently
// used, a touch of a held QP, and the K = 1 / two-QP ping-pong where every
// access after the first evicts the other QP.
#include <gtest/gtest.h>

#include "model/ernic/qp_ctx_cache.h"

namespace {

using ernic::QpCtxLru;

TEST(QpCtxLru, EvictsTheLeastRecentlyUsed) {
  QpCtxLru c(3);
  EXPECT_EQ(c.capacity(), 3u);
  EXPECT_FALSE(c.insert(2));
  EXPECT_FALSE(c.insert(3));
  EXPECT_FALSE(c.insert(4));
  EXPECT_TRUE(c.full());
  EXPECT_EQ(c.mru_order(), (std::vector<uint32_t>{4, 3, 2}));
  EXPECT_TRUE(c.touch(2));  // 2 becomes the most recent: 3 is the LRU now
  EXPECT_EQ(c.insert(5), std::optional<uint32_t>(3));
  EXPECT_EQ(c.mru_order(), (std::vector<uint32_t>{5, 2, 4}));
  EXPECT_FALSE(c.touch(3));
  EXPECT_FALSE(c.contains(3));
  EXPECT_EQ(c.insert(4), std::nullopt);  // held: touched, nothing leaves
  EXPECT_EQ(c.mru_order(), (std::vector<uint32_t>{4, 5, 2}));
}

TEST(QpCtxLru, OneEntryTwoQpsAlternatingEveryAccessMisses) {
  QpCtxLru c(1);
  uint32_t misses = 0, evictions = 0;
  for (int k = 0; k < 20; ++k) {
    const uint32_t q = 2 + k % 2;
    if (!c.touch(q)) {
      ++misses;
      if (c.insert(q)) ++evictions;
    }
  }
  EXPECT_EQ(misses, 20u);
  EXPECT_EQ(evictions, 19u);  // all but the first, which found the cache empty
}

TEST(QpCtxLru, RoundRobinOverMoreQpsThanEntriesNeverHits) {
  // K entries, K + 1 QPs in turn: LRU evicts each just before its next use.
  for (uint32_t k : {1u, 4u, 16u}) {
    QpCtxLru c(k);
    uint32_t hits = 0;
    for (uint32_t n = 0; n < 10 * (k + 1); ++n) {
      const uint32_t q = 2 + n % (k + 1);
      if (c.touch(q)) ++hits;
      else c.insert(q);
    }
    EXPECT_EQ(hits, 0u) << "K = " << k;
  }
}

}  // namespace
