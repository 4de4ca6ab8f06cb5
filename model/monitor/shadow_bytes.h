// model/monitor/shadow_bytes: the bytes of one scoreboard shadow
// (scoreboard.h): what a buffer's memory should hold. Plain C++.
//
// Its storage comes from calloc, so a large shadow (glibc: from 32 MiB at
// the latest) is mapped zero pages that cost nothing until written, and
// assign() writes only the 4 KiB pages of the source that are not all
// zero. A receive queue that nothing has written yet (ernic-sim bench's
// SEND sets up 64 elements of 1 MiB) costs one read of its memory instead
// of a page fault and a copy per page: the bench's SEND run spent 11 % of
// its time in that copy.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <vector>

namespace ernic::monitor {

class ShadowBytes {
 public:
  static constexpr uint64_t kPage = 4096;
  // A copy of [m, m + n) (n may be 0; m null: n zero bytes). unwritten(at,
  // k), if given, says [m + at, +k) is known to be zero (HostMemory::written):
  // that page is not read at all (reading memory nothing wrote costs a page
  // fault). Throws std::bad_alloc.
  void assign(const uint8_t* m, uint64_t n, const std::function<bool(uint64_t, uint64_t)>& unwritten = {}) {
    p_.reset(static_cast<uint8_t*>(std::calloc(n ? n : 1, 1)));
    if (!p_) throw std::bad_alloc();
    n_ = n;
    written_.assign((n + 64 * kPage - 1) / (64 * kPage), 0);
    static const uint8_t zero[kPage] = {};
    for (uint64_t at = 0; m && at < n; at += kPage) {
      const uint64_t k = n - at < kPage ? n - at : kPage;
      if (unwritten && unwritten(at, k)) continue;
      if (std::memcmp(m + at, zero, k) != 0) std::memcpy(write(at, k), m + at, k);
    }
  }
  ShadowBytes() = default;
  ShadowBytes(ShadowBytes&& o) noexcept : p_(std::move(o.p_)), n_(o.n_), written_(std::move(o.written_)) {
    o.n_ = 0;
    o.written_.clear();
  }
  ShadowBytes& operator=(ShadowBytes&& o) noexcept {
    p_ = std::move(o.p_);
    n_ = o.n_;
    written_ = std::move(o.written_);
    o.n_ = 0;
    o.written_.clear();
    return *this;
  }
  // Where to write [off, off + len) (off + len <= size()): those pages are
  // written from now on.
  uint8_t* write(uint64_t off, uint64_t len) {
    for (uint64_t p = off / kPage; len && p <= (off + len - 1) / kPage; ++p) written_[p / 64] |= uint64_t(1) << (p % 64);
    return p_.get() + off;
  }
  // Whether a byte of [off, off + len) may differ from zero: its page was
  // copied from a non-zero source page or written (write()). False: all zero.
  bool written(uint64_t off, uint64_t len) const {
    for (uint64_t p = off / kPage; len && p <= (off + len - 1) / kPage; ++p)
      if (written_[p / 64] >> (p % 64) & 1) return true;
    return false;
  }
  const uint8_t* data() const { return p_.get(); }
  uint64_t size() const { return n_; }
  uint8_t operator[](uint64_t i) const { return p_.get()[i]; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> p_;
  uint64_t n_ = 0;
  std::vector<uint64_t> written_;  // a bit per page (kPage, from byte 0)
};

}  // namespace ernic::monitor
