// model/qp: a set of QP numbers 1..num_qp walked in round-robin order, for
// the QP manager's passes (model/ernic/qp_mgr.h): a pass starts at a QPN
// and goes up, wrapping once past num_qp to 1, and visits only the members.
// A bitmap, one bit a QP: insert, erase and membership are O(1); finding
// the next member is a word scan (4 words for 256 QPs), so QPs outside the
// set cost a pass nothing. The QP manager keeps every QP that may have work
// in it, and a pass over it picks the QP a pass over all QPs would pick.
#pragma once
#include <cstdint>
#include <vector>

namespace ernic::qp {

class RoundRobinSet {
 public:
  // QPNs 1..num_qp, all members (all = true) or none.
  explicit RoundRobinSet(uint32_t num_qp, bool all = false)
      : num_qp_(num_qp), bits_((size_t(num_qp) + 1 + 63) / 64, 0) {
    if (all)
      for (uint32_t n = 1; n <= num_qp; ++n) insert(n);
  }

  uint32_t num_qp() const { return num_qp_; }
  void insert(uint32_t qpn) { bits_[qpn >> 6] |= bit(qpn); }
  void erase(uint32_t qpn) { bits_[qpn >> 6] &= ~bit(qpn); }
  bool contains(uint32_t qpn) const { return (bits_[qpn >> 6] & bit(qpn)) != 0; }
  uint32_t size() const {
    uint32_t k = 0;
    for (uint64_t w : bits_) k += uint32_t(__builtin_popcountll(w));
    return k;
  }

  // The members in round-robin order from `start` (1..num_qp): start,
  // start + 1, ..., num_qp, 1, ..., start - 1, each given to visit(qpn),
  // which returns true to stop there. Returns the QPN it stopped at (0:
  // none). visit may erase the QPN it is given (and nothing else).
  template <class Visit>
  uint32_t find_from(uint32_t start, Visit&& visit) const {
    for (uint32_t n = next_member(start, num_qp_); n != 0; n = next_member(n + 1, num_qp_))
      if (visit(n)) return n;
    for (uint32_t n = next_member(1, start - 1); n != 0; n = next_member(n + 1, start - 1))
      if (visit(n)) return n;
    return 0;
  }

 private:
  static uint64_t bit(uint32_t qpn) { return uint64_t(1) << (qpn & 63); }

  // The smallest member in [from, last], or 0.
  uint32_t next_member(uint32_t from, uint32_t last) const {
    if (from > last) return 0;
    size_t w = from >> 6;
    uint64_t word = bits_[w] & (~uint64_t(0) << (from & 63));
    for (;;) {
      if (word) {
        const uint32_t n = uint32_t(w * 64 + size_t(__builtin_ctzll(word)));
        return n <= last ? n : 0;
      }
      if (++w >= bits_.size() || w * 64 > last) return 0;
      word = bits_[w];
    }
  }

  uint32_t num_qp_;
  std::vector<uint64_t> bits_;  // bit n: QPN n (bit 0 unused: QPNs start at 1)
};

}  // namespace ernic::qp
