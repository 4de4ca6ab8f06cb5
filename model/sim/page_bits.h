// model/sim/page_bits: a bit per 4 KiB page of a byte range, set where
// something may have written (host memory, HostMemory::written; the
// scoreboard's shadows, ShadowBytes::written). A page whose bit is clear
// holds zeros still, so a reader may skip it: reading memory nothing wrote
// costs a page fault a page (issue 17). Plain C++.
#pragma once
#include <cstdint>
#include <vector>

namespace ernic {

class PageBits {
 public:
  static constexpr uint64_t kPage = 4096;  // bytes
  PageBits() = default;
  explicit PageBits(uint64_t bytes) : w_((bytes + 64 * kPage - 1) / (64 * kPage)) {}
  // [off, off + len) (inside the range given; len 0: nothing) may have been written.
  void mark(uint64_t off, uint64_t len) {
    for (uint64_t p = off / kPage; len && p <= (off + len - 1) / kPage; ++p) w_[p / 64] |= uint64_t(1) << (p % 64);
  }
  // Whether a page of [off, off + len) was marked (len 0: false).
  bool any(uint64_t off, uint64_t len) const {
    for (uint64_t p = off / kPage; len && p <= (off + len - 1) / kPage; ++p)
      if (w_[p / 64] >> (p % 64) & 1) return true;
    return false;
  }

 private:
  std::vector<uint64_t> w_;
};

}  // namespace ernic
