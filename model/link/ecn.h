// model/link: the IP ECN field of a frame (RFC 3168) as a congested hop
// sets it: the `ecn` fault action (fault.cpp) and the switch's marking
// (model/link/switch.h). Plain C++.
//
// The field is IPv4 TOS[1:0] (frame byte 15) or the IPv6 traffic class's
// [1:0] (frame byte 15, bits 5:4), by the EtherType: 00 Not-ECT, 01 ECT(1),
// 10 ECT(0), 11 CE. Setting CE recomputes the IPv4 header checksum
// (roce::ipv4_checksum, RFC 1071; IPv6 has none). The RoCEv2 ICRC stays
// valid: it covers the IP header with the TOS / traffic class masked to
// ones (IBTA A17.3.3, model/roce/icrc.h), so a hop may mark without
// recomputing it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/roce/packet.h"

namespace ernic::ecn {

constexpr uint8_t kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = roce::kEcnCe;

// The frame's ECN codepoint, nullopt when it is not IPv4 / IPv6 (by its
// EtherType) or too short for the header.
inline std::optional<uint8_t> field(const uint8_t* f, size_t n) {
  const uint16_t et = n >= 14 ? uint16_t(f[12] << 8 | f[13]) : 0;
  if (et == roce::kEtherTypeIpv4 && n >= roce::kEthHdrLen + roce::kIpv4HdrLen) return uint8_t(f[15] & roce::kEcnMask);
  if (et == roce::kEtherTypeIpv6 && n >= roce::kEthHdrLen + roce::kIpv6HdrLen)
    return uint8_t((f[15] >> 4) & roce::kEcnMask);
  return std::nullopt;
}

// ECN := CE (IPv4: and its header checksum again). Returns what it did,
// "IPv4 ECN = CE" / "IPv6 ECN = CE", or nullptr for a frame that is not
// IP (left unchanged).
inline const char* set_ce(std::vector<uint8_t>& f) {
  const uint16_t et = f.size() >= 14 ? uint16_t(f[12] << 8 | f[13]) : 0;
  if (et == roce::kEtherTypeIpv4 && f.size() >= roce::kEthHdrLen + roce::kIpv4HdrLen) {
    uint8_t* ip = f.data() + roce::kEthHdrLen;
    ip[1] |= kCe;
    ip[10] = ip[11] = 0;
    const uint16_t c = roce::ipv4_checksum(ip);
    ip[10] = uint8_t(c >> 8);
    ip[11] = uint8_t(c);
    return "IPv4 ECN = CE";
  }
  if (et == roce::kEtherTypeIpv6 && f.size() >= roce::kEthHdrLen + roce::kIpv6HdrLen) {
    f[15] |= uint8_t(kCe << 4);
    return "IPv6 ECN = CE";
  }
  return nullptr;
}

}  // namespace ernic::ecn
