// model/roce: RoCEv2 protocol library (plain C++, no SystemC).
// Basic value types: byte buffers, MAC and IP addresses.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roce {

using Bytes = std::vector<uint8_t>;

// 48-bit Ethernet MAC address, b[0] is the first byte on the wire.
struct MacAddr {
  std::array<uint8_t, 6> b{};
  // "02:00:00:00:00:0a" (also accepts '-'); std::nullopt when malformed.
  static std::optional<MacAddr> parse(const std::string& s);
  std::string str() const;  // lower-case, colon-separated
  // As PG332's register pairs hold it (MACXADDMSB/LSB, MACDESADDMSBi/LSBi):
  // MSB [15:0] = bytes 0..1, LSB = bytes 2..5, each big-endian.
  uint32_t pg332_lsb() const { return uint32_t(b[2]) << 24 | uint32_t(b[3]) << 16 | uint32_t(b[4]) << 8 | b[5]; }
  uint32_t pg332_msb() const { return uint32_t(b[0]) << 8 | b[1]; }
  static MacAddr from_pg332_words(uint32_t msb, uint32_t lsb) {
    return MacAddr{{uint8_t(msb >> 8), uint8_t(msb), uint8_t(lsb >> 24), uint8_t(lsb >> 16), uint8_t(lsb >> 8),
                    uint8_t(lsb)}};
  }
  bool operator==(const MacAddr& o) const { return b == o.b; }
  bool operator!=(const MacAddr& o) const { return b != o.b; }
};

// IPv4 address as a host-order number: a.b.c.d = a<<24 | b<<16 | c<<8 | d
// (the PG332 IPv4XADD / IPDESADDR1i register value).
struct Ipv4Addr {
  uint32_t v = 0;
  static std::optional<Ipv4Addr> parse(const std::string& s);
  std::string str() const;
  bool operator==(const Ipv4Addr& o) const { return v == o.v; }
  bool operator!=(const Ipv4Addr& o) const { return v != o.v; }
};

// IPv6 address, network byte order (b[0] first on the wire).
struct Ipv6Addr {
  std::array<uint8_t, 16> b{};
  static std::optional<Ipv6Addr> parse(const std::string& s);
  std::string str() const;
  // ::ffff:a.b.c.d, the GID form of an IPv4 address used in CM REQ paths.
  static Ipv6Addr v4_mapped(Ipv4Addr a);
  bool operator==(const Ipv6Addr& o) const { return b == o.b; }
  bool operator!=(const Ipv6Addr& o) const { return b != o.b; }
  bool operator<(const Ipv6Addr& o) const { return b < o.b; }
  // PG332 register word k (1..4) of the address (IPv6XADDk, IPDESADDRki):
  // word 1 = bytes 12..15, word 4 = bytes 0..3, each a big-endian number.
  uint32_t pg332_word(int k) const;
  static Ipv6Addr from_pg332_words(uint32_t w1, uint32_t w2, uint32_t w3, uint32_t w4);
};

// An IPv4 or an IPv6 address: a RoCEv2 endpoint (implicit from either).
struct IpAddr {
  bool v6 = false;
  Ipv4Addr ip4;               // valid when !v6
  Ipv6Addr ip6;               // valid when v6
  IpAddr() = default;
  IpAddr(Ipv4Addr a) : ip4(a) {}              // NOLINT(google-explicit-constructor)
  IpAddr(Ipv6Addr a) : v6(true), ip6(a) {}    // NOLINT(google-explicit-constructor)
  // The GID of the address (CM paths): IPv6 itself, IPv4 as ::ffff:a.b.c.d.
  Ipv6Addr gid() const { return v6 ? ip6 : Ipv6Addr::v4_mapped(ip4); }
  std::string str() const { return v6 ? ip6.str() : ip4.str(); }
  // An IPv4 (a.b.c.d) or IPv6 (RFC 4291 text) address; nullopt: neither.
  static std::optional<IpAddr> parse(const std::string& s) {
    if (auto a = Ipv4Addr::parse(s)) return IpAddr(*a);
    if (auto a = Ipv6Addr::parse(s)) return IpAddr(*a);
    return std::nullopt;
  }
  bool operator==(const IpAddr& o) const { return v6 == o.v6 && (v6 ? ip6 == o.ip6 : ip4 == o.ip4); }
  bool operator!=(const IpAddr& o) const { return !(*this == o); }
  bool operator<(const IpAddr& o) const {
    if (v6 != o.v6) return !v6;
    return v6 ? ip6 < o.ip6 : ip4.v < o.ip4.v;
  }
};

// Big-endian (network order) helpers.
inline uint16_t get_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get_be24(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; }
inline uint32_t get_be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline uint64_t get_be64(const uint8_t* p) { return uint64_t(get_be32(p)) << 32 | get_be32(p + 4); }
inline void put_be16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
inline void put_be24(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 16); p[1] = uint8_t(v >> 8); p[2] = uint8_t(v); }
inline void put_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24); p[1] = uint8_t(v >> 16); p[2] = uint8_t(v >> 8); p[3] = uint8_t(v);
}
inline void put_be64(uint8_t* p, uint64_t v) { put_be32(p, uint32_t(v >> 32)); put_be32(p + 4, uint32_t(v)); }
// Little-endian helpers (PG332 WQE/CQE layouts are little-endian).
inline uint16_t get_le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
inline uint32_t get_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t get_le64(const uint8_t* p) { return uint64_t(get_le32(p)) | uint64_t(get_le32(p + 4)) << 32; }
inline void put_le16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
inline void put_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); p[2] = uint8_t(v >> 16); p[3] = uint8_t(v >> 24);
}
inline void put_le64(uint8_t* p, uint64_t v) { put_le32(p, uint32_t(v)); put_le32(p + 4, uint32_t(v >> 32)); }

}  // namespace roce
