// model/regs: the completion-queue element (CQE) of the ERNIC IP, PG332
// v3.1: 4 bytes at CQBAi + index * 4 (the CQ has the SQ's depth), written by
// the response handler (resp_hndler_m_axi) when QPCONFi[5] is set; CQHEADi
// and its mirror at CQDBADDi tell software how far it has written. The only
// place the layout is written.
//
//   bits    field    meaning
//   15..0   WRID     the WQE's work-request id
//   23..16  OPCODE   the WQE's opcode (WqeOpcode, wqe.h)
//   31..24  ERRFLAG  non-zero: the WQE completed in error (fatal QP flush)
#pragma once
#include <cstdint>

namespace ernic::pg332 {

constexpr uint32_t kCqeBytes = 4;

struct Cqe {
  uint16_t wrid = 0;
  uint8_t opcode = 0;
  bool error = false;
};

constexpr uint32_t encode_cqe(const Cqe& c) {
  return uint32_t(c.wrid) | uint32_t(c.opcode) << 16 | uint32_t(c.error ? 1 : 0) << 24;
}
constexpr Cqe decode_cqe(uint32_t raw) { return Cqe{uint16_t(raw), uint8_t(raw >> 16), (raw >> 24) != 0}; }

}  // namespace ernic::pg332
