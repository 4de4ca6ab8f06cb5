// model/roce: ICRC computation (see icrc.h for the covered bytes).
#include "model/roce/icrc.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ROCE_CRC_PCLMUL 1
#endif

#include "model/roce/packet.h"

namespace roce {

namespace {

// Where the variant fields sit in a frame; everything is bounded by len so
// a short or garbage frame never reads past its end.
struct Layout {
  size_t ip_off = kEthHdrLen;
  size_t ip_len = 0;   // IP header bytes (IPv4: IHL * 4, IPv6: 40)
  bool v6 = false;
};

Layout layout_of(const uint8_t* f, size_t len) {
  Layout l;
  bool v6 = false;
  if (len >= kEthHdrLen) {
    const uint16_t et = get_be16(f + 12);
    if (et == kEtherTypeIpv6) {
      v6 = true;
    } else if (et != kEtherTypeIpv4 && len > kEthHdrLen) {
      v6 = (f[kEthHdrLen] >> 4) == 6;  // not IP by EtherType: go by the version nibble
    }
  }
  l.v6 = v6;
  if (v6) {
    l.ip_len = kIpv6HdrLen;
  } else {
    const size_t ihl = len > kEthHdrLen ? size_t(f[kEthHdrLen] & 0x0F) * 4 : kIpv4HdrLen;
    l.ip_len = std::max(ihl, kIpv4HdrLen);
  }
  return l;
}

// Copy of the first min(len - ip_off, ip_len + UDP + BTH) bytes after the
// Ethernet header, with the variant fields set to ones. Returns its length.
size_t masked_headers(const uint8_t* f, size_t len, const Layout& l, uint8_t* out /* >= 120 */) {
  if (len <= l.ip_off) return 0;
  const size_t want = l.ip_len + kUdpHdrLen + kBthLen;  // at most 60 + 20
  const size_t n = std::min(want, len - l.ip_off);
  std::memcpy(out, f + l.ip_off, n);
  auto ones = [&](size_t at) {
    if (at < n) out[at] = 0xFF;
  };
  if (l.v6) {
    // version (4) | traffic class (8) | flow label (20): keep only the version.
    if (n > 0) out[0] |= 0x0F;
    ones(1);
    ones(2);
    ones(3);
    ones(7);  // hop limit
  } else {
    ones(1);   // TOS
    ones(8);   // TTL
    ones(10);  // header checksum
    ones(11);
  }
  ones(l.ip_len + 6);  // UDP checksum
  ones(l.ip_len + 7);
  ones(l.ip_len + kUdpHdrLen + 4);  // BTH resv8a (FECN/BECN)
  return n;
}

const uint8_t kDummyLrh[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

// CRC-32 (reflected polynomial 0xEDB88320: the same function as Boost.CRC's
// crc_32_type), slicing-by-16: 16 bytes per step through 16 tables of 256
// entries (table k advances a byte through k further zero bytes). Several
// times faster than a byte at a time; the ICRC runs over every frame up to
// three times (encoder, wire monitor, receiver), the simulator's hottest loop.
struct Crc32Tables {
  std::array<std::array<uint32_t, 256>, 16> t{};
  constexpr Crc32Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (size_t k = 1; k < 16; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
};
constexpr Crc32Tables kCrc;

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The running (pre-final-XOR) register c over n bytes at p, a table step
// at a time.
uint32_t crc32_tables(uint32_t c, const uint8_t* p, size_t n) {
  const auto& t = kCrc.t;
  while (n >= 16) {
    const uint32_t a = load_le32(p) ^ c, b = load_le32(p + 4), d = load_le32(p + 8), e = load_le32(p + 12);
    c = t[15][a & 0xFF] ^ t[14][(a >> 8) & 0xFF] ^ t[13][(a >> 16) & 0xFF] ^ t[12][a >> 24] ^  //
        t[11][b & 0xFF] ^ t[10][(b >> 8) & 0xFF] ^ t[9][(b >> 16) & 0xFF] ^ t[8][b >> 24] ^     //
        t[7][d & 0xFF] ^ t[6][(d >> 8) & 0xFF] ^ t[5][(d >> 16) & 0xFF] ^ t[4][d >> 24] ^       //
        t[3][e & 0xFF] ^ t[2][(e >> 8) & 0xFF] ^ t[1][(e >> 16) & 0xFF] ^ t[0][e >> 24];
    p += 16;
    n -= 16;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return c;
}

#ifdef ROCE_CRC_PCLMUL
// Carry-less multiplication folding (Intel, "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction", 2009; the bit-reflected
// constants for 0xEDB88320 as in zlib/Chromium's crc32_simd.c and Linux's
// crc32-pclmul): 64 bytes a step, then Barrett reduction. n >= 64 and a
// multiple of 16; same register in and out as crc32_tables.
__attribute__((target("pclmul,sse4.1"))) uint32_t crc32_pclmul(uint32_t crc, const uint8_t* buf, size_t len) {
  alignas(16) static const uint64_t k1k2[] = {0x0154442bd4, 0x01c6e41596};
  alignas(16) static const uint64_t k3k4[] = {0x01751997d0, 0x00ccaa009e};
  alignas(16) static const uint64_t k5k0[] = {0x0163cd6124, 0x0000000000};
  alignas(16) static const uint64_t poly[] = {0x01db710641, 0x01f7011641};
  __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;
  x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x00));
  x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x10));
  x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x20));
  x4 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x30));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128(int(crc)));
  x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(k1k2));
  buf += 64;
  len -= 64;
  while (len >= 64) {
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
    x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
    x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
    x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
    y5 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x00));
    y6 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x10));
    y7 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x20));
    y8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + 0x30));
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
    buf += 64;
    len -= 64;
  }
  // Fold into 128 bits.
  x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(k3k4));
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
  while (len >= 16) {
    x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf));
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    buf += 16;
    len -= 16;
  }
  // 128 -> 64 bits.
  x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
  x3 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_srli_si128(x1, 8);
  x1 = _mm_xor_si128(x1, x2);
  x0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k5k0));
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_and_si128(x1, x3);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  // Barrett reduction to 32 bits.
  x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(poly));
  x2 = _mm_and_si128(x1, x3);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
  x2 = _mm_and_si128(x2, x3);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return uint32_t(_mm_extract_epi32(x1, 1));
}

bool have_pclmul() {
  static const bool yes = [] {
    __builtin_cpu_init();  // may run before the library's own constructor
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  }();
  return yes;
}
#endif

// The running register over n bytes: folded with PCLMULQDQ where the CPU
// has it (bulk of a frame), tables for the rest. Same value either way
// (tb/roce checks it against Boost.CRC).
uint32_t crc32_update(uint32_t c, const uint8_t* p, size_t n) {
#ifdef ROCE_CRC_PCLMUL
  if (n >= 64 && have_pclmul()) {
    const size_t bulk = n & ~size_t(15);
    c = crc32_pclmul(c, p, bulk);
    p += bulk;
    n -= bulk;
  }
#endif
  return crc32_tables(c, p, n);
}

}  // namespace

uint32_t compute_icrc(const uint8_t* frame, size_t len) {
  const Layout l = layout_of(frame, len);
  uint8_t hdr[128] = {};  // zeroed: the compiler cannot see that only the first n bytes are read
  const size_t n = masked_headers(frame, len, l, hdr);
  uint32_t c = 0xFFFFFFFFu;
  c = crc32_tables(c, kDummyLrh, sizeof kDummyLrh);
  c = crc32_tables(c, hdr, n);  // at most 80 bytes
  if (len > l.ip_off + n) c = crc32_update(c, frame + l.ip_off + n, len - l.ip_off - n);
  return c ^ 0xFFFFFFFFu;
}

Bytes icrc_masked_input(const uint8_t* frame, size_t len) {
  const Layout l = layout_of(frame, len);
  uint8_t hdr[128];
  const size_t n = masked_headers(frame, len, l, hdr);
  const size_t tail = len > l.ip_off + n ? len - l.ip_off - n : 0;
  Bytes out(sizeof kDummyLrh + n + tail);
  std::memcpy(out.data(), kDummyLrh, sizeof kDummyLrh);
  if (n) std::memcpy(out.data() + sizeof kDummyLrh, hdr, n);
  if (tail) std::memcpy(out.data() + sizeof kDummyLrh + n, frame + l.ip_off + n, tail);
  return out;
}

}  // namespace roce
