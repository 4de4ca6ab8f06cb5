// model/regs: the send work-queue element (WQE) of the ERNIC IP, PG332 v3.1
// Table 2-1: 64 bytes in the SQ (host memory, SQBAi + index * 64), written
// by software, read by the QP manager (qp_mgr_m_axi). The only place the
// layout and the opcode values are written: the ERNIC model, the driver,
// the scenario language, the scoreboard and the log view use this header.
//
//   bytes   field    meaning
//   0..1    WRID     work-request id, returned in the CQE
//   4..11   LADDR    local buffer address (host physical)
//   12..15  LENGTH   bytes
//   16      OPCODE   WqeOpcode below
//   20..27  ROFFSET  remote virtual address (WRITE, READ)
//   28..31  RTAG     R_Key (WRITE, READ); the R_Key to invalidate (SEND_INV)
//   32..47  SDATA    inline SEND payload of up to 16 bytes (A-ERNIC-21)
//   48..51  IMMDT    immediate data (WRITE_IMM, SEND_IMM)
//   other bytes reserved (zero)
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ernic::pg332 {

constexpr size_t kWqeBytes = 64;
constexpr uint32_t kInlineMax = 16;  // SDATA bytes

enum class WqeOpcode : uint8_t {
  write = 0x00,
  write_imm = 0x01,
  send = 0x02,
  send_imm = 0x03,
  read = 0x04,
  send_inv = 0x0C,
};

struct Wqe {
  uint16_t wrid = 0;
  uint64_t laddr = 0;
  uint32_t length = 0;
  uint8_t opcode = 0;            // the raw byte (an unknown value is the IP's illegal-opcode path)
  uint64_t roffset = 0;
  uint32_t rtag = 0;
  std::array<uint8_t, kInlineMax> sdata{};
  uint32_t immdt = 0;
};

Wqe decode_wqe(const uint8_t* b);                  // kWqeBytes bytes
void encode_wqe(const Wqe& w, uint8_t* b);         // kWqeBytes bytes, reserved bytes zero

// The opcode kinds (unknown values are none of them).
constexpr bool is_write(uint8_t op) {
  return op == uint8_t(WqeOpcode::write) || op == uint8_t(WqeOpcode::write_imm);
}
constexpr bool is_send(uint8_t op) {
  return op == uint8_t(WqeOpcode::send) || op == uint8_t(WqeOpcode::send_imm) || op == uint8_t(WqeOpcode::send_inv);
}
constexpr bool is_read(uint8_t op) { return op == uint8_t(WqeOpcode::read); }
// A SEND of at most kInlineMax bytes travels in SDATA (no payload read).
constexpr bool is_inline(uint8_t op, uint32_t length) { return is_send(op) && length <= kInlineMax; }

// Names: "write", "write_imm", ... (the scenario language and the JSON) and
// "WRITE", "WRITE_IMM", ... (logs); nullopt / "?" for unknown values.
std::optional<WqeOpcode> wqe_opcode_from_name(std::string_view lower_name);
const char* wqe_opcode_name(WqeOpcode op);        // lower case
const char* wqe_opcode_log_name(uint8_t op);      // upper case, "?" when unknown
constexpr WqeOpcode kAllWqeOpcodes[] = {WqeOpcode::write,    WqeOpcode::write_imm, WqeOpcode::send,
                                        WqeOpcode::send_imm, WqeOpcode::send_inv,  WqeOpcode::read};

}  // namespace ernic::pg332
