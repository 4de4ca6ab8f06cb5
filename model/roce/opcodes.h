// model/roce: the BTH opcode table (IBTA 9.2 Table 38; RoCEv2 CNP 0x81).
// Opcodes are the 8-bit BTH values: transport [7:5], operation [4:0].
#pragma once
#include <cstdint>

namespace roce {

namespace op {
// Reliable Connection (transport 000)
constexpr uint8_t RC_SEND_FIRST = 0x00;
constexpr uint8_t RC_SEND_MIDDLE = 0x01;
constexpr uint8_t RC_SEND_LAST = 0x02;
constexpr uint8_t RC_SEND_LAST_IMM = 0x03;
constexpr uint8_t RC_SEND_ONLY = 0x04;
constexpr uint8_t RC_SEND_ONLY_IMM = 0x05;
constexpr uint8_t RC_WRITE_FIRST = 0x06;
constexpr uint8_t RC_WRITE_MIDDLE = 0x07;
constexpr uint8_t RC_WRITE_LAST = 0x08;
constexpr uint8_t RC_WRITE_LAST_IMM = 0x09;
constexpr uint8_t RC_WRITE_ONLY = 0x0A;
constexpr uint8_t RC_WRITE_ONLY_IMM = 0x0B;
constexpr uint8_t RC_READ_REQUEST = 0x0C;
constexpr uint8_t RC_READ_RESP_FIRST = 0x0D;
constexpr uint8_t RC_READ_RESP_MIDDLE = 0x0E;
constexpr uint8_t RC_READ_RESP_LAST = 0x0F;
constexpr uint8_t RC_READ_RESP_ONLY = 0x10;
constexpr uint8_t RC_ACK = 0x11;
constexpr uint8_t RC_ATOMIC_ACK = 0x12;
constexpr uint8_t RC_CMP_SWAP = 0x13;
constexpr uint8_t RC_FETCH_ADD = 0x14;
constexpr uint8_t RC_SEND_LAST_INV = 0x16;
constexpr uint8_t RC_SEND_ONLY_INV = 0x17;
// Unreliable Datagram (transport 011)
constexpr uint8_t UD_SEND_ONLY = 0x64;
constexpr uint8_t UD_SEND_ONLY_IMM = 0x65;
// RoCEv2 congestion notification packet
constexpr uint8_t CNP = 0x81;
}  // namespace op

// The transport of an opcode ([7:5]).
enum class Transport : uint8_t { RC = 0, UC = 1, RD = 2, UD = 3, CNP = 4 };
constexpr Transport transport(uint8_t code) { return Transport(code >> 5); }

// Extension-header flags, in the order they follow the BTH.
enum Ext : uint16_t {
  kExtNone = 0,
  kExtDeth = 1 << 0,        // 8 B
  kExtReth = 1 << 1,        // 16 B
  kExtAtomicEth = 1 << 2,   // 28 B
  kExtAeth = 1 << 3,        // 4 B
  kExtAtomicAckEth = 1 << 4,  // 8 B
  kExtImmDt = 1 << 5,       // 4 B
  kExtIeth = 1 << 6,        // 4 B
};

enum class OpKind : uint8_t { Send, Write, ReadRequest, ReadResponse, Ack, Atomic, AtomicAck, Cnp };
// Position of a packet within its message.
enum class OpPos : uint8_t { First, Middle, Last, Only };

struct OpcodeInfo {
  uint8_t code;
  const char* name;      // e.g. "RC_WRITE_FIRST"
  OpKind kind;
  OpPos pos;
  uint16_t ext;          // Ext flags
  bool has_payload;      // may carry payload
  uint8_t ext_len;       // total bytes of extension headers after the BTH
};

// nullptr for an opcode that is reserved or not supported by this library.
const OpcodeInfo* opcode_info(uint8_t code);
// Name for printing; "OPCODE_0xNN" for unknown codes (static storage).
const char* opcode_name(uint8_t code);

}  // namespace roce
