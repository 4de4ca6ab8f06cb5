// model/regs: an entry of the ERNIC IP's ieth_immdt_axis stream (PG332
// v3.1 section 4): one 64-bit entry per immediate datum or invalidate
// R_Key the RX packet handler receives, for software or a user's logic.
// The only place the layout is written (the ERNIC model encodes it, the
// driver decodes it).
//
//   bits    field    meaning
//   31..0   DATA     the ImmDt, or the R_Key to invalidate
//   39..32  TYPE     IethType below
//   47..40  QPN      the QP it arrived on (8 bits)
//   55..48  RQ_PI    the RQ producer index after the SEND (SEND kinds only;
//                    8 bits): the RQ element it belongs to is the one before
#pragma once
#include <cstdint>

namespace ernic::pg332 {

enum class IethType : uint8_t { send_inv = 1, send_imm = 2, write_imm = 3 };

struct IethEntry {
  uint32_t data = 0;
  IethType type = IethType::send_imm;
  uint8_t qpn = 0;
  uint8_t rq_pi = 0;
};

constexpr uint64_t encode_ieth(const IethEntry& e) {
  return uint64_t(e.data) | uint64_t(e.type) << 32 | uint64_t(e.qpn) << 40 | uint64_t(e.rq_pi) << 48;
}
constexpr IethEntry decode_ieth(uint64_t raw) {
  return IethEntry{uint32_t(raw), IethType(uint8_t(raw >> 32)), uint8_t(raw >> 40), uint8_t(raw >> 48)};
}

}  // namespace ernic::pg332
