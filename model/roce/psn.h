// model/roce: 24-bit PSN and MSN arithmetic (IBTA 9.7.1: PSNs are modulo
// 2^24; a is "after" b when ((a - b) << 8) read as a signed 32-bit value is
// positive).
#pragma once
#include <cstdint>

namespace roce {

constexpr uint32_t kPsnMask = 0xFFFFFF;
constexpr uint32_t kPsnHalf = 0x800000;  // 2^23: the duplicate/ahead window

constexpr uint32_t psn_add(uint32_t psn, int64_t n) {
  return uint32_t((int64_t(psn) + n) & kPsnMask);
}
// Signed distance a - b in [-2^23, 2^23 - 1] (half a turn apart reads as -2^23).
constexpr int32_t psn_diff(uint32_t a, uint32_t b) {
  return int32_t(uint32_t((a - b) << 8)) >> 8;
}
constexpr bool psn_lt(uint32_t a, uint32_t b) { return psn_diff(a, b) < 0; }
constexpr bool psn_le(uint32_t a, uint32_t b) { return psn_diff(a, b) <= 0; }
constexpr bool psn_gt(uint32_t a, uint32_t b) { return psn_diff(a, b) > 0; }
constexpr bool psn_ge(uint32_t a, uint32_t b) { return psn_diff(a, b) >= 0; }

// Responder classification of an incoming request PSN against the expected
// PSN e (IBTA 9.9.4 / o9-21): duplicates lie in [e - 2^23, e - 1].
enum class PsnClass { Expected, Duplicate, OutOfSequence };
constexpr PsnClass psn_classify(uint32_t psn, uint32_t expected) {
  const uint32_t back = (expected - psn) & kPsnMask;  // how far behind e
  if (back == 0) return PsnClass::Expected;
  if (back <= kPsnHalf) return PsnClass::Duplicate;
  return PsnClass::OutOfSequence;
}

}  // namespace roce
