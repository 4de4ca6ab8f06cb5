// tb/fuzz: what the harnesses share. FUZZ_CHECK(cond, ...) prints the
// broken invariant and aborts (libFuzzer saves the input as a crash; the
// replay binary fails its test). Input: a small reader over the fuzz bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "FUZZ INVARIANT BROKEN %s:%d: %s: ", __FILE__,      \
                   __LINE__, #cond);                                           \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

namespace ernic_fuzz {

// Takes integers and byte runs from the front of the input; past the end,
// zeros.
class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t u8() { return pos_ < n_ ? d_[pos_++] : 0; }
  uint16_t u16() { return uint16_t(u8() | u8() << 8); }
  uint32_t u32() { return uint32_t(u16()) | uint32_t(u16()) << 16; }
  uint64_t u64() { return uint64_t(u32()) | uint64_t(u32()) << 32; }
  bool flag() { return u8() & 1; }
  std::vector<uint8_t> bytes(size_t max) {
    size_t k = u16() % (max + 1);
    if (k > n_ - pos_) k = n_ - pos_;
    std::vector<uint8_t> v(d_ + pos_, d_ + pos_ + k);
    pos_ += k;
    return v;
  }
  std::vector<uint8_t> rest() {
    std::vector<uint8_t> v(d_ + pos_, d_ + n_);
    pos_ = n_;
    return v;
  }
  size_t left() const { return n_ - pos_; }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
};

inline std::string hex(const uint8_t* p, size_t n, size_t max = 64) {
  static const char* k = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n && i < max; ++i) {
    s += k[p[i] >> 4];
    s += k[p[i] & 15];
  }
  if (n > max) s += "...";
  return s;
}

}  // namespace ernic_fuzz
