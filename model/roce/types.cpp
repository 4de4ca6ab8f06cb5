// model/roce: address parsing and printing.
#include "model/roce/types.h"

#include <arpa/inet.h>

#include <cstdio>

namespace roce {

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<MacAddr> MacAddr::parse(const std::string& s) {
  // Exactly six two-digit hex groups separated by one kind of separator.
  if (s.size() != 17) return std::nullopt;
  const char sep = s[2];
  if (sep != ':' && sep != '-') return std::nullopt;
  MacAddr m;
  for (size_t i = 0; i < 6; ++i) {
    const size_t at = i * 3;
    if (i > 0 && s[at - 1] != sep) return std::nullopt;
    const int hi = hex_value(s[at]), lo = hex_value(s[at + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    m.b[i] = uint8_t(hi << 4 | lo);
  }
  return m;
}

std::string MacAddr::str() const {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return buf;
}

std::optional<Ipv4Addr> Ipv4Addr::parse(const std::string& s) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return std::nullopt;
  const auto* p = reinterpret_cast<const uint8_t*>(&a.s_addr);
  return Ipv4Addr{get_be32(p)};
}

std::string Ipv4Addr::str() const {
  // "a.b.c.d" by hand (as "%u.%u.%u.%u" gives): the transaction log formats
  // two addresses a frame.
  char buf[16];
  char* o = buf;
  for (int k = 3; k >= 0; --k) {
    const unsigned x = v >> (8 * k) & 0xFF;
    if (x >= 100) *o++ = char('0' + x / 100);
    if (x >= 10) *o++ = char('0' + x / 10 % 10);
    *o++ = char('0' + x % 10);
    if (k) *o++ = '.';
  }
  return std::string(buf, size_t(o - buf));
}

std::optional<Ipv6Addr> Ipv6Addr::parse(const std::string& s) {
  Ipv6Addr r;
  if (inet_pton(AF_INET6, s.c_str(), r.b.data()) != 1) return std::nullopt;
  return r;
}

std::string Ipv6Addr::str() const {
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(AF_INET6, b.data(), buf, sizeof buf)) return "";
  return buf;
}

uint32_t Ipv6Addr::pg332_word(int k) const { return get_be32(&b[size_t(4 * (4 - k))]); }

Ipv6Addr Ipv6Addr::from_pg332_words(uint32_t w1, uint32_t w2, uint32_t w3, uint32_t w4) {
  Ipv6Addr r;
  put_be32(&r.b[12], w1);
  put_be32(&r.b[8], w2);
  put_be32(&r.b[4], w3);
  put_be32(&r.b[0], w4);
  return r;
}

Ipv6Addr Ipv6Addr::v4_mapped(Ipv4Addr a) {
  Ipv6Addr r;
  r.b[10] = 0xFF;
  r.b[11] = 0xFF;
  put_be32(&r.b[12], a.v);
  return r;
}

}  // namespace roce
