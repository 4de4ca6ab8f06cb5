// model/datapath: the two datapath seams in C++ (rtl/SEAM.md is the
// specification; rtl/include/seam.vh has the same bit offsets for the RTL).
//
// TxDesc: what the ERNIC model hands roce_tx with each frame's payload.
// RxDesc: what roce_rx hands the ERNIC model with each RoCE frame's payload.
// pack()/unpack() convert to the descriptor buses (LSB-first bit vectors of
// SEAM_TXD_W = 768 and SEAM_RXD_W = 1024 bits, as 64-bit words, word 0 =
// bits 63:0). Header fields are numbers (MAC 02:00:00:00:00:0a =
// 0x02000000000a); IP addresses are kept as 16 bytes in wire order (IPv4 in
// bytes 12..15, i.e. the low 32 bits of the 128-bit field); extension
// headers are raw bytes in wire order.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace ernic::seam {

constexpr unsigned kTxdBits = 768, kRxdBits = 1024;
constexpr unsigned kMaxExt = 28;  // DETH/RETH/AtomicETH/AETH/AtomicAckETH/ImmDt/IETH, the largest set
using TxdBits = std::array<uint64_t, kTxdBits / 64>;
using RxdBits = std::array<uint64_t, kRxdBits / 64>;
using Ip = std::array<uint8_t, 16>;  // wire order; IPv4 = bytes 12..15

// The error-buffer syndrome (PG332 places the ICRC error at bit 30 and the
// FCS error at bit 31; the other positions are this model's, A-ERNIC-18).
// Bits roce_rx sets in its descriptor:
constexpr uint32_t kSynIpVersion = 1u << 1, kSynIpChecksum = 1u << 2, kSynLength = 1u << 4,
                   kSynHeader = 1u << 8, kSynIcrc = 1u << 30, kSynFcs = 1u << 31;
// Bits ERNIC's RX packet handler adds (and bit 1 when the IP version is not
// the QP's):
constexpr uint32_t kSynMacDa = 1u << 0, kSynIpDa = 1u << 3, kSynTver = 1u << 5, kSynQp = 1u << 6,
                   kSynSource = 1u << 7, kSynIpFlags = 1u << 9, kSynAeth = 1u << 10;

struct TxDesc {
  bool raw = false;          // payload is the whole frame; only the ICRC is appended
  bool ipv6 = false;
  uint8_t ext_len = 0;       // bytes of ext, 0..28
  uint16_t payload_len = 0;  // bytes (raw: the frame's length)
  uint64_t eth_dst = 0, eth_src = 0;  // 48 bits
  Ip ip_src{}, ip_dst{};
  uint8_t tos = 0, ttl = 0;
  uint32_t flow_label = 0;   // 20 bits
  uint16_t ip_id = 0;
  uint8_t ip_flags = 2;      // 3 bits, DF
  uint8_t opcode = 0;
  bool se = false, mig = false;
  uint8_t tver = 0;          // 4 bits
  uint16_t pkey = 0xFFFF;
  uint8_t bth_b4 = 0;        // FECN bit 7, BECN bit 6
  uint32_t dest_qp = 0;      // 24 bits
  bool ack_req = false;
  uint8_t resv7 = 0;         // 7 bits
  uint32_t psn = 0;          // 24 bits
  std::array<uint8_t, kMaxExt> ext{};
  bool operator==(const TxDesc& o) const;
};

struct RxDesc {
  uint32_t syndrome = 0;
  bool ipv6 = false;
  uint8_t ihl = 0;           // IPv4 IHL as received (4 bits); 0 for IPv6
  uint8_t hdr_len = 0;
  uint16_t payload_len = 0, frame_len = 0;  // payload_len: bytes on the payload stream
  uint64_t eth_dst = 0, eth_src = 0;
  uint16_t ethertype = 0;
  Ip ip_src{}, ip_dst{};
  uint8_t tos = 0, ttl = 0;
  uint32_t flow_label = 0;
  uint16_t ip_len = 0, ip_id = 0, ip_frag = 0, ip_csum = 0;
  uint16_t udp_sport = 0, udp_dport = 0, udp_len = 0, udp_csum = 0;
  uint8_t opcode = 0;
  bool se = false, mig = false;
  uint8_t pad_cnt = 0, tver = 0;
  uint16_t pkey = 0;
  uint8_t bth_b4 = 0;
  uint32_t dest_qp = 0;
  bool ack_req = false;
  uint8_t resv7 = 0;
  uint32_t psn = 0;
  uint8_t ext_len = 0;
  std::array<uint8_t, kMaxExt> ext{};
  uint32_t icrc = 0;         // wire byte 0 = bits 7:0
  bool operator==(const RxDesc& o) const;
};

TxdBits pack(const TxDesc& d);
TxDesc unpack_tx(const TxdBits& b);
RxdBits pack(const RxDesc& d);
RxDesc unpack_rx(const RxdBits& b);

// Bit-field access on the descriptor words (lo = first bit, w <= 64).
template <size_t N>
inline void put_bits(std::array<uint64_t, N>& b, unsigned lo, unsigned w, uint64_t v) {
  for (unsigned i = 0; i < w; ++i) {
    const unsigned k = lo + i;
    const uint64_t m = uint64_t(1) << (k % 64);
    if ((v >> i) & 1) b[k / 64] |= m;
    else b[k / 64] &= ~m;
  }
}
template <size_t N>
inline uint64_t get_bits(const std::array<uint64_t, N>& b, unsigned lo, unsigned w) {
  uint64_t v = 0;
  for (unsigned i = 0; i < w; ++i) {
    const unsigned k = lo + i;
    v |= ((b[k / 64] >> (k % 64)) & 1) << i;
  }
  return v;
}

}  // namespace ernic::seam
