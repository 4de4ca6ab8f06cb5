// model/roce: ICRC computation (see icrc.h for the covered bytes).
#include "model/roce/icrc.h"

#include <algorithm>
#include <boost/crc.hpp>
#include <cstring>

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

}  // namespace

uint32_t compute_icrc(const uint8_t* frame, size_t len) {
  const Layout l = layout_of(frame, len);
  uint8_t hdr[128];
  const size_t n = masked_headers(frame, len, l, hdr);
  boost::crc_32_type crc;
  crc.process_bytes(kDummyLrh, sizeof kDummyLrh);
  crc.process_bytes(hdr, n);
  if (len > l.ip_off + n) crc.process_bytes(frame + l.ip_off + n, len - l.ip_off - n);
  return crc.checksum();
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
