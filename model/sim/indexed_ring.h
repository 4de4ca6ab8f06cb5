#pragma once
// model/sim/indexed_ring: a FIFO whose entries keep the index they were
// pushed with (0, 1, 2, ...; the oldest kept is base()), for models that
// look values up some fixed distance back and forget older ones
// (seam::TxPathTiming: 32 frames, 256 beats). A ring buffer that doubles
// when full: once it has grown to its working size, pushing and forgetting
// allocate nothing and cost a few instructions (std::deque's cost more).
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ernic {

template <class T>
class IndexedRing {
 public:
  uint64_t base() const { return base_; }     // index of the oldest entry kept
  uint64_t end() const { return base_ + n_; }  // index the next push gets
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  // Entry i, base() <= i < end() (unchecked in a release build). A push
  // that grows the ring moves its entries: references into it do not
  // survive a push.
  T& at(uint64_t i) {
    assert(i - base_ < n_);
    return buf_[(head_ + size_t(i - base_)) & mask_];
  }
  const T& at(uint64_t i) const {
    assert(i - base_ < n_);
    return buf_[(head_ + size_t(i - base_)) & mask_];
  }
  void push_back(T v) {  // by value: v may be one of its own entries
    if (n_ == buf_.size()) grow();
    buf_[(head_ + n_) & mask_] = std::move(v);
    ++n_;
  }
  // Forgets the entries below index i (as many as are kept).
  void drop_below(uint64_t i) {
    if (i <= base_) return;
    const size_t k = size_t(std::min<uint64_t>(i - base_, n_));
    head_ = (head_ + k) & mask_;
    n_ -= k;
    base_ += k;
  }

 private:
  void grow() {
    std::vector<T> b(std::max<size_t>(16, 2 * buf_.size()));  // a power of two
    for (size_t j = 0; j < n_; ++j) b[j] = buf_[(head_ + j) & mask_];
    buf_.swap(b);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }
  std::vector<T> buf_;
  size_t head_ = 0, n_ = 0, mask_ = 0;
  uint64_t base_ = 0;
};

}  // namespace ernic
