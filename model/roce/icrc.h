// model/roce: the RoCEv2 invariant CRC (IBTA Annex A17.3.3; RXE rxe_icrc.c).
// CRC-32 (reflected 0x04C11DB7, init 0xFFFFFFFF, final XOR 0xFFFFFFFF, i.e.
// Boost.CRC's crc_32_type) over: 8 bytes of 0xFF (the dummy LRH), the IP
// header with IPv4 TOS/TTL/checksum (IPv6 traffic class/flow label/hop
// limit) set to all ones, the UDP header with checksum 0xFFFF, the BTH with
// byte 4 (resv8a) 0xFF, then every byte up to the ICRC. Ethernet header and
// FCS excluded. Sent least-significant byte first.
#pragma once
#include <cstddef>
#include <cstdint>

#include "model/roce/types.h"

namespace roce {

// frame: starts at the Ethernet header; len: bytes up to (excluding) the
// ICRC. The IP version is read from the frame. Returns the CRC value; the
// four wire bytes are value & 0xFF, value >> 8 & 0xFF, ...
uint32_t compute_icrc(const uint8_t* frame, size_t len);

// The ICRC stored in the last 4 bytes of a frame (wire bytes read LE).
inline uint32_t stored_icrc(const uint8_t* frame, size_t len_with_icrc) {
  return get_le32(frame + len_with_icrc - 4);
}

// Copy of the ICRC-covered region (from the IP header) with the variant
// fields masked to ones, prefixed with 8 bytes of 0xFF: the exact byte
// string the CRC runs over. For tests and for the RTL reference.
Bytes icrc_masked_input(const uint8_t* frame, size_t len);

}  // namespace roce
