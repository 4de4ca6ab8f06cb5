// model/roce: RoCEv2 frame encode/decode.
// Frame = Ethernet II | IPv4 (IHL 5) or IPv6 | UDP (dport 4791) | BTH |
// extension headers (opcode-dependent, order DETH, RETH, AtomicETH, AETH,
// AtomicAckETH, ImmDt, IETH) | payload | pad (PadCnt bytes) | ICRC (4 B,
// least-significant byte first). The Ethernet FCS is not part of a Frame
// (captures and the simulator's AXI4-Stream carry frames without it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "model/roce/types.h"

namespace roce {

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr uint16_t kDefaultPkey = 0xFFFF;  // IBTA: the full-membership default partition
constexpr uint16_t kRoceUdpPort = 4791;
constexpr uint8_t kIpProtoUdp = 17;
constexpr uint16_t kIpv4FlagsDf = 0x4000;  // IPv4 flags + fragment offset: DF set, not a fragment
constexpr uint8_t kEcnMask = 0x3, kEcnCe = 0x3;  // the ECN bits of the TOS / traffic class; CE
constexpr size_t kEthHdrLen = 14, kIpv4HdrLen = 20, kIpv6HdrLen = 40, kUdpHdrLen = 8,
                 kBthLen = 12, kRethLen = 16, kAethLen = 4, kDethLen = 8, kImmDtLen = 4,
                 kIethLen = 4, kIcrcLen = 4;

struct EthHdr {
  MacAddr dst, src;
  uint16_t ethertype = kEtherTypeIpv4;
};

struct Ipv4Hdr {
  uint8_t tos = 0;            // DSCP[7:2] ECN[1:0]
  uint16_t total_len = 0;     // filled by encode() when EncodeOptions::fill_lengths
  uint16_t id = 0;
  uint8_t flags = 0x2;        // 3 bits: DF = 0x2
  uint16_t frag_off = 0;      // 13 bits
  uint8_t ttl = 64;
  uint8_t proto = kIpProtoUdp;
  uint16_t checksum = 0;      // filled by encode() when fill_ip_checksum
  Ipv4Addr src, dst;
};

struct Ipv6Hdr {
  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;    // 20 bits
  uint16_t payload_len = 0;   // filled by encode() when fill_lengths
  uint8_t next_header = kIpProtoUdp;
  uint8_t hop_limit = 64;
  Ipv6Addr src, dst;
};

struct UdpHdr {
  uint16_t sport = 0;
  uint16_t dport = kRoceUdpPort;
  uint16_t len = 0;           // filled by encode() when fill_lengths
  uint16_t checksum = 0;      // RoCEv2 sends 0
};

struct Bth {
  uint8_t opcode = 0;
  bool se = false;
  bool mig = false;           // M bit
  uint8_t pad_cnt = 0;        // 2 bits
  uint8_t tver = 0;           // 4 bits
  uint16_t pkey = kDefaultPkey;
  uint8_t resv8a = 0;         // byte 4: FECN bit 7, BECN bit 6 (RoCEv2)
  uint32_t dest_qp = 0;       // 24 bits
  bool ack_req = false;
  uint8_t resv7 = 0;          // byte 8 bits 6:0
  uint32_t psn = 0;           // 24 bits
  bool fecn() const { return resv8a & 0x80; }
  bool becn() const { return resv8a & 0x40; }
};

struct Reth { uint64_t va = 0; uint32_t rkey = 0; uint32_t dma_len = 0; };
struct Aeth {
  uint8_t syndrome = 0;       // [7]=0, [6:5] type (00 ACK, 01 RNR NAK, 11 NAK), [4:0] value
  uint32_t msn = 0;           // 24 bits
};
struct Deth { uint32_t qkey = 0; uint8_t resv = 0; uint32_t src_qp = 0; };
struct AtomicEth { uint64_t va = 0; uint32_t rkey = 0; uint64_t swap_add = 0, compare = 0; };
struct AtomicAckEth { uint64_t orig = 0; };

// AETH syndrome helpers (IBTA 9.7.5.2).
namespace aeth {
constexpr uint8_t ack(uint8_t credits = 0x1F) { return uint8_t(credits & 0x1F); }
constexpr uint8_t rnr_nak(uint8_t timer_code) { return uint8_t(0x20 | (timer_code & 0x1F)); }
constexpr uint8_t kNakPsnSeq = 0x60, kNakInvalid = 0x61, kNakRemoteAccess = 0x62,
                  kNakRemoteOp = 0x63, kNakInvalidRd = 0x64;
// The syndrome's [6:5] type and [4:0] value (credit count, RNR timer code
// or NAK code; IBTA 9.7.5.1). Type 2 and NAK codes above kNakCodeMax are
// reserved.
enum Type : uint8_t { kTypeAck = 0, kTypeRnr = 1, kTypeReserved = 2, kTypeNak = 3 };
constexpr uint8_t type(uint8_t syn) { return uint8_t((syn >> 5) & 3); }
constexpr uint8_t value(uint8_t syn) { return uint8_t(syn & 0x1F); }
constexpr uint8_t kNakCodeMax = 4;
// The RNR NAK timer a code asks for (IBTA Table 45), in units of 10 us;
// code 0 is the longest, 655.36 ms.
constexpr uint32_t kRnrTimer10us[32] = {65536, 1,    2,    3,    4,    6,    8,     12,    16,    24,    32,
                                        48,    64,   96,   128,  192,  256,  384,   512,   768,   1024,  1536,
                                        2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
constexpr uint64_t rnr_timer_ps(uint8_t code) { return uint64_t(kRnrTimer10us[code & 0x1F]) * 10'000'000ull; }
// The credit count of an ACK syndrome (IBTA 9.7.5.1, the AETH credit
// count encoding): code c stands for kCreditCount[c] receive WQEs; code 31
// is "invalid" (no end-to-end credits: a responder with an SRQ).
constexpr uint16_t kCreditCount[31] = {0,    1,    2,    3,    4,    6,    8,     12,    16,    24,   32,
                                       48,   64,   96,   128,  192,  256,  384,   512,   768,   1024, 1536,
                                       2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};
constexpr uint8_t kCreditInvalid = 0x1F;
// The largest code whose count does not exceed n available WQEs.
constexpr uint8_t credit_code(uint32_t n) {
  uint8_t c = 0;
  while (c < 30 && kCreditCount[c + 1] <= n) ++c;
  return c;
}
}  // namespace aeth

// A decoded (or to-be-encoded) RoCEv2 frame.
struct Frame {
  EthHdr eth;
  bool ipv6 = false;
  Ipv4Hdr ip4;                // valid when !ipv6
  Ipv6Hdr ip6;                // valid when ipv6
  UdpHdr udp;
  Bth bth;
  std::optional<Deth> deth;
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomic_eth;
  std::optional<Aeth> aeth;
  std::optional<AtomicAckEth> atomic_ack_eth;
  std::optional<uint32_t> immdt;
  std::optional<uint32_t> ieth;   // R_Key to invalidate
  Bytes payload;              // bytes after the extension headers, before the pad
  Bytes pad;                  // pad bytes as on the wire (normally zero); size == bth.pad_cnt
  uint32_t icrc = 0;          // CRC value; on the wire as LE bytes (icrc & 0xFF first)
  // The IP header's source and destination, of its version.
  IpAddr src_ip() const { return ipv6 ? IpAddr(ip6.src) : IpAddr(ip4.src); }
  IpAddr dst_ip() const { return ipv6 ? IpAddr(ip6.dst) : IpAddr(ip4.dst); }
};

struct EncodeOptions {
  bool fill_lengths = true;      // IPv4 total length / IPv6 payload length / UDP length
  bool fill_ip_checksum = true;  // IPv4 header checksum
  bool fill_pad = true;          // set bth.pad_cnt and zero pad bytes to reach a 4-B multiple
  bool fill_icrc = true;         // compute the ICRC; otherwise write frame.icrc
};

// Encode to wire bytes (Ethernet header .. ICRC, no FCS). The extension
// headers written are those of bth.opcode's table entry; a missing optional
// header is written as zeros. An IP EtherType (0x0800/0x86DD) is written to
// match f.ipv6; any other EtherType is written as given.
Bytes encode(const Frame& f, const EncodeOptions& opt = {});
// The same with the payload at payload[0, len) instead of f.payload (which
// is not read): a frame built around bytes that are elsewhere is not copied
// twice.
Bytes encode(const Frame& f, const uint8_t* payload, size_t len, const EncodeOptions& opt = {});

// Why a decode failed.
enum class DecodeError {
  None, TooShort, NotIp, IpVersion, Ipv4Ihl, NotUdp, NotRocePort, BadLength,
  UnknownOpcode, PadTooLong
};
const char* decode_error_name(DecodeError e);

// Decode wire bytes (Ethernet header .. ICRC, no FCS). Lengths come from the
// IP header (IPv4 total length / IPv6 payload length) when consistent with
// len; trailing bytes beyond it (Ethernet padding) are ignored.
// The 12-byte BTH at p (IBTA 9.2), every field as it is on the wire (also
// the capture decoder's, wire_decode.h).
Bth read_bth(const uint8_t* p);

std::optional<Frame> decode(const uint8_t* data, size_t len, DecodeError* err = nullptr);
inline std::optional<Frame> decode(const Bytes& b, DecodeError* err = nullptr) {
  return decode(b.data(), b.size(), err);
}
// The same checks and fields, but the payload is not copied (payload stays
// empty; pad and ICRC are read): for a frame's headers only.
std::optional<Frame> decode_headers(const uint8_t* data, size_t len, DecodeError* err = nullptr);

// True when the frame is Ethernet/IPv4-or-IPv6/UDP with destination port 4791.
bool is_roce(const uint8_t* data, size_t len);

// IPv4 header checksum (RFC 791) over a 20-byte header with the checksum
// field taken as zero. Returns the value to store.
uint16_t ipv4_checksum(const uint8_t* hdr20);

}  // namespace roce
