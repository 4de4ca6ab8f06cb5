// tb/roce: 24-bit PSN arithmetic across the 0xFFFFFF wrap.
#include <gtest/gtest.h>

#include "model/roce/psn.h"

using namespace roce;

TEST(Psn, AddWrapsAt24Bits) {
  EXPECT_EQ(psn_add(0xFFFFFF, 1), 0x000000u);
  EXPECT_EQ(psn_add(0xFFFFFE, 5), 0x000003u);
  EXPECT_EQ(psn_add(0x000000, -1), 0xFFFFFFu);
  EXPECT_EQ(psn_add(0x000002, -5), 0xFFFFFDu);
  EXPECT_EQ(psn_add(0x123456, 0x1000000), 0x123456u);  // a full turn
  EXPECT_EQ(psn_add(0x800000, 0x800000), 0x000000u);
  EXPECT_EQ(psn_add(0x000010, 0), 0x000010u);
}

TEST(Psn, DiffIsSignedAcrossTheWrap) {
  EXPECT_EQ(psn_diff(0x000000, 0xFFFFFF), 1);
  EXPECT_EQ(psn_diff(0xFFFFFF, 0x000000), -1);
  EXPECT_EQ(psn_diff(0x000005, 0xFFFFFB), 10);
  EXPECT_EQ(psn_diff(0xFFFFFB, 0x000005), -10);
  EXPECT_EQ(psn_diff(0x100, 0x100), 0);
  // The largest distances either way: 2^23 - 1 ahead, 2^23 behind.
  EXPECT_EQ(psn_diff(0x7FFFFF, 0x000000), 0x7FFFFF);
  EXPECT_EQ(psn_diff(0x800000, 0x000000), -0x800000);
  EXPECT_EQ(psn_diff(0x000000, 0x800000), -0x800000);
  EXPECT_EQ(psn_diff(0x800001, 0x000000), -0x7FFFFF);
  // Upper bits beyond 24 are ignored.
  EXPECT_EQ(psn_diff(0xFF000003, 0x00000001), 2);
}

TEST(Psn, CompareAcrossTheWrap) {
  EXPECT_TRUE(psn_lt(0xFFFFFF, 0x000000));
  EXPECT_TRUE(psn_gt(0x000000, 0xFFFFFF));
  EXPECT_TRUE(psn_le(0xFFFFF0, 0x00000F));
  EXPECT_TRUE(psn_ge(0x00000F, 0xFFFFF0));
  EXPECT_TRUE(psn_le(0x42, 0x42));
  EXPECT_TRUE(psn_ge(0x42, 0x42));
  EXPECT_FALSE(psn_lt(0x42, 0x42));
  EXPECT_FALSE(psn_gt(0x42, 0x42));
  EXPECT_FALSE(psn_lt(0x000001, 0xFFFFFF));
  EXPECT_TRUE(psn_gt(0x7FFFFF, 0x000000));
  EXPECT_TRUE(psn_lt(0x800000, 0x000000));  // exactly half a turn counts as behind
}

TEST(Psn, ClassifyDuplicateWindowEdges) {
  // Expected PSN in the middle of the space.
  EXPECT_EQ(psn_classify(0x400000, 0x400000), PsnClass::Expected);
  EXPECT_EQ(psn_classify(0x3FFFFF, 0x400000), PsnClass::Duplicate);      // e - 1
  EXPECT_EQ(psn_classify(0xC00000, 0x400000), PsnClass::Duplicate);      // e - 2^23
  EXPECT_EQ(psn_classify(0xC00001, 0x400000), PsnClass::Duplicate);      // e - 2^23 + 1
  EXPECT_EQ(psn_classify(0x400001, 0x400000), PsnClass::OutOfSequence);  // e + 1
  EXPECT_EQ(psn_classify(0xBFFFFF, 0x400000), PsnClass::OutOfSequence);  // e - 2^23 - 1 = e + 2^23 - 1

  // Expected PSN 0: the duplicate window wraps to the top of the space.
  EXPECT_EQ(psn_classify(0x000000, 0x000000), PsnClass::Expected);
  EXPECT_EQ(psn_classify(0xFFFFFF, 0x000000), PsnClass::Duplicate);
  EXPECT_EQ(psn_classify(0x800000, 0x000000), PsnClass::Duplicate);
  EXPECT_EQ(psn_classify(0x800001, 0x000000), PsnClass::Duplicate);
  EXPECT_EQ(psn_classify(0x7FFFFF, 0x000000), PsnClass::OutOfSequence);
  EXPECT_EQ(psn_classify(0x000001, 0x000000), PsnClass::OutOfSequence);

  // Expected PSN 2 just after a wrap.
  EXPECT_EQ(psn_classify(0x000001, 0x000002), PsnClass::Duplicate);
  EXPECT_EQ(psn_classify(0xFFFFFF, 0x000002), PsnClass::Duplicate);
  EXPECT_EQ(psn_classify(0x800002, 0x000002), PsnClass::Duplicate);       // e - 2^23
  EXPECT_EQ(psn_classify(0x800003, 0x000002), PsnClass::Duplicate);       // e - 2^23 + 1
  EXPECT_EQ(psn_classify(0x800001, 0x000002), PsnClass::OutOfSequence);   // e - 2^23 - 1
  EXPECT_EQ(psn_classify(0x000003, 0x000002), PsnClass::OutOfSequence);

  // Expected PSN 0xFFFFFF: e + 1 wraps to 0 and is ahead.
  EXPECT_EQ(psn_classify(0x000000, 0xFFFFFF), PsnClass::OutOfSequence);
  EXPECT_EQ(psn_classify(0xFFFFFE, 0xFFFFFF), PsnClass::Duplicate);
  EXPECT_EQ(psn_classify(0x7FFFFF, 0xFFFFFF), PsnClass::Duplicate);       // e - 2^23
  EXPECT_EQ(psn_classify(0x7FFFFE, 0xFFFFFF), PsnClass::OutOfSequence);   // e - 2^23 - 1
}

TEST(Psn, ConstexprUsable) {
  static_assert(psn_add(0xFFFFFF, 1) == 0);
  static_assert(psn_diff(0, 0xFFFFFF) == 1);
  static_assert(psn_classify(0xFFFFFF, 0) == PsnClass::Duplicate);
  SUCCEED();
}
