// model/roce: the capture-grade decoder. Decodes every RoCE transport as
// real captures carry it, where packet.h's decode() (the simulator's own
// RoCEv2 RC/UD codec, which the ERNIC model, the link and the monitors
// build on) refuses what it does not speak:
//   - transports: RC, UC (0x20-0x2B), RD (0x40-0x54, RDETH [+ DETH]),
//     UD (0x64, 0x65), CNP (0x81), XRC (0xA0-0xB7, XRCETH on requests);
//     reserved and manufacturer-specific opcodes decode as "unknown" with
//     the BTH (everything after it up to the ICRC is payload);
//   - encapsulations: RoCEv2 over IPv4 (any IHL) and IPv6, RoCEv1
//     (EtherType 0x8915, GRH), native InfiniBand (LRH [+ GRH], VCRC);
//     802.1Q / 802.1ad VLAN tags; Ethernet padding (or an FCS) after the
//     IP / GRH length.
// The ICRC is checked for each encapsulation (RoCEv2: icrc.h's coverage;
// RoCEv1: 8 bytes of ones for the LRH, then the GRH with traffic class,
// flow label and hop limit set to ones, BTH byte 4 to ones; native IB: the
// LRH itself with VL set to ones, otherwise as RoCEv1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace roce {

constexpr uint16_t kEtherTypeRoceV1 = 0x8915;
constexpr uint16_t kEtherTypeVlan = 0x8100, kEtherTypeQinQ = 0x88A8, kEtherTypeVlan9100 = 0x9100;
constexpr uint8_t kGrhNextHeaderBth = 0x1B;  // IBTA: "IBA transport" as the GRH's next header
constexpr size_t kGrhLen = 40, kLrhLen = 8, kVcrcLen = 2, kRdethLen = 4, kXrcethLen = 4, kVlanTagLen = 4;
// Extension headers packet.h's Ext lacks (RD and XRC).
constexpr uint16_t kExtRdeth = 1 << 8, kExtXrceth = 1 << 9;

// BTH opcode[7:5]; 110b and 111b are manufacturer-specific.
enum class WireTransport : uint8_t { RC, UC, RD, UD, CNP, XRC, Vendor };
const char* wire_transport_name(WireTransport t);  // "RC", "UC", ..., "vendor"

struct WireOpcode {
  uint8_t code = 0;
  bool known = false;        // false: reserved or manufacturer-specific ("unknown", no extension headers)
  WireTransport transport = WireTransport::RC;
  std::string name;          // "RC_SEND_FIRST", "UC_WRITE_ONLY", "XRC_READ_REQUEST", "CNP", "UNKNOWN_0xNN"
  OpKind kind = OpKind::Send;
  OpPos pos = OpPos::Only;
  uint16_t ext = 0;          // Ext flags | kExtRdeth | kExtXrceth
  size_t ext_len = 0;
};
// Every code 0..255 has an entry.
const WireOpcode& wire_opcode(uint8_t code);

struct Grh {
  uint8_t ipver = 6, tclass = 0;
  uint32_t flow_label = 0;
  uint16_t paylen = 0;
  uint8_t next_header = kGrhNextHeaderBth, hop_limit = 0;
  Ipv6Addr sgid, dgid;
};

struct Lrh {
  uint8_t vl = 0, lver = 0, sl = 0, lnh = 0;  // LNH: 2 = BTH follows, 3 = GRH follows
  uint16_t dlid = 0, slid = 0, pkt_len = 0;   // pkt_len in 4-byte words, LRH to VCRC excluded
};

enum class Encap : uint8_t { RoceV2, RoceV1, Ib };

struct WireFrame {
  Encap encap = Encap::RoceV2;
  std::vector<uint16_t> vlans;   // 802.1Q/ad TCIs, outermost first
  std::optional<Lrh> lrh;        // native IB
  std::optional<Grh> grh;        // RoCEv1; native IB with LNH 3
  // eth (ethertype: the one after the VLAN tags), ipv6 / ip4 / ip6 / udp
  // (RoCEv2), bth, the extension headers Frame has, payload, pad, icrc.
  Frame f;
  std::optional<uint32_t> rdeth;   // RD: EE context (24 bits)
  std::optional<uint32_t> xrceth;  // XRC: XRC SRQ number (24 bits)
  const WireOpcode* op = nullptr;
  size_t ip_hdr_len = 0;         // RoCEv2: IPv4 IHL * 4 or 40
  size_t bth_off = 0;            // the BTH's offset in the bytes given
  size_t used = 0;               // bytes through the ICRC (IB: the VCRC)
  size_t trailing = 0;           // bytes after them (Ethernet padding, an FCS)
  uint32_t icrc_calc = 0;        // the ICRC the covered bytes give (compare f.icrc)
  bool icrc_ok() const { return icrc_calc == f.icrc; }
  std::optional<uint16_t> vcrc;  // native IB: as carried (not checked)
  bool ipv4_checksum_ok = true;  // RoCEv2 over IPv4: the header checksum
};

enum class WireStatus : uint8_t { Ok, NotRoce, Malformed };
struct WireDecode {
  WireStatus status = WireStatus::NotRoce;
  std::string why;               // NotRoce / Malformed: a short reason
  WireFrame w;                   // Ok: the frame; Malformed: what was read before the fault
};

// An Ethernet frame (destination MAC first; an FCS, if captured, is
// trailing bytes).
WireDecode decode_wire(const uint8_t* d, size_t len);
// A native InfiniBand packet (LRH first, VCRC last).
WireDecode decode_wire_ib(const uint8_t* d, size_t len);

// The frame as plain RoCEv2 bytes for code that takes those (the wire
// monitor): a 14-byte Ethernet header without VLAN tags, no trailing bytes,
// a correct ICRC (RoCEv1 and IB: RoCEv2 over IPv6 with the GRH's GIDs as
// addresses). Empty when the opcode is not one packet.h encodes (RC, UD,
// CNP): UC, RD, XRC and unknown opcodes.
Bytes as_plain_rocev2(const uint8_t* d, size_t len, const WireFrame& w);

}  // namespace roce
