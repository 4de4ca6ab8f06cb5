// model/roce: the opcode table.
#include "model/roce/opcodes.h"

#include <array>
#include <cstdio>

#include "model/roce/packet.h"

namespace roce {

namespace {

constexpr uint8_t ext_len_of(uint16_t ext) {
  return uint8_t(((ext & kExtDeth) ? kDethLen : 0) + ((ext & kExtReth) ? kRethLen : 0) +
                 ((ext & kExtAtomicEth) ? 28 : 0) + ((ext & kExtAeth) ? kAethLen : 0) +
                 ((ext & kExtAtomicAckEth) ? 8 : 0) + ((ext & kExtImmDt) ? kImmDtLen : 0) +
                 ((ext & kExtIeth) ? kIethLen : 0));
}

constexpr OpcodeInfo mk(uint8_t code, const char* name, OpKind kind, OpPos pos, uint16_t ext,
                        bool payload) {
  return OpcodeInfo{code, name, kind, pos, ext, payload, ext_len_of(ext)};
}

using K = OpKind;
using P = OpPos;

// IBTA 9.2 Table 38 (RC and UD rows used by RoCEv2), plus the RoCEv2 CNP
// (Annex A17.9.3: BTH followed by 16 reserved bytes, carried as payload).
constexpr OpcodeInfo kTable[] = {
    mk(op::RC_SEND_FIRST, "RC_SEND_FIRST", K::Send, P::First, kExtNone, true),
    mk(op::RC_SEND_MIDDLE, "RC_SEND_MIDDLE", K::Send, P::Middle, kExtNone, true),
    mk(op::RC_SEND_LAST, "RC_SEND_LAST", K::Send, P::Last, kExtNone, true),
    mk(op::RC_SEND_LAST_IMM, "RC_SEND_LAST_IMM", K::Send, P::Last, kExtImmDt, true),
    mk(op::RC_SEND_ONLY, "RC_SEND_ONLY", K::Send, P::Only, kExtNone, true),
    mk(op::RC_SEND_ONLY_IMM, "RC_SEND_ONLY_IMM", K::Send, P::Only, kExtImmDt, true),
    mk(op::RC_WRITE_FIRST, "RC_WRITE_FIRST", K::Write, P::First, kExtReth, true),
    mk(op::RC_WRITE_MIDDLE, "RC_WRITE_MIDDLE", K::Write, P::Middle, kExtNone, true),
    mk(op::RC_WRITE_LAST, "RC_WRITE_LAST", K::Write, P::Last, kExtNone, true),
    mk(op::RC_WRITE_LAST_IMM, "RC_WRITE_LAST_IMM", K::Write, P::Last, kExtImmDt, true),
    mk(op::RC_WRITE_ONLY, "RC_WRITE_ONLY", K::Write, P::Only, kExtReth, true),
    mk(op::RC_WRITE_ONLY_IMM, "RC_WRITE_ONLY_IMM", K::Write, P::Only, kExtReth | kExtImmDt, true),
    mk(op::RC_READ_REQUEST, "RC_READ_REQUEST", K::ReadRequest, P::Only, kExtReth, false),
    mk(op::RC_READ_RESP_FIRST, "RC_READ_RESP_FIRST", K::ReadResponse, P::First, kExtAeth, true),
    mk(op::RC_READ_RESP_MIDDLE, "RC_READ_RESP_MIDDLE", K::ReadResponse, P::Middle, kExtNone, true),
    mk(op::RC_READ_RESP_LAST, "RC_READ_RESP_LAST", K::ReadResponse, P::Last, kExtAeth, true),
    mk(op::RC_READ_RESP_ONLY, "RC_READ_RESP_ONLY", K::ReadResponse, P::Only, kExtAeth, true),
    mk(op::RC_ACK, "RC_ACK", K::Ack, P::Only, kExtAeth, false),
    mk(op::RC_ATOMIC_ACK, "RC_ATOMIC_ACK", K::AtomicAck, P::Only, kExtAeth | kExtAtomicAckEth, false),
    mk(op::RC_CMP_SWAP, "RC_CMP_SWAP", K::Atomic, P::Only, kExtAtomicEth, false),
    mk(op::RC_FETCH_ADD, "RC_FETCH_ADD", K::Atomic, P::Only, kExtAtomicEth, false),
    mk(op::RC_SEND_LAST_INV, "RC_SEND_LAST_INV", K::Send, P::Last, kExtIeth, true),
    mk(op::RC_SEND_ONLY_INV, "RC_SEND_ONLY_INV", K::Send, P::Only, kExtIeth, true),
    mk(op::UD_SEND_ONLY, "UD_SEND_ONLY", K::Send, P::Only, kExtDeth, true),
    mk(op::UD_SEND_ONLY_IMM, "UD_SEND_ONLY_IMM", K::Send, P::Only, kExtDeth | kExtImmDt, true),
    mk(op::CNP, "CNP", K::Cnp, P::Only, kExtNone, true),
};

// 256-entry lookup built once: index = opcode, value = row + 1 (0 = none).
struct Index {
  std::array<uint8_t, 256> row{};
  Index() {
    for (size_t i = 0; i < sizeof kTable / sizeof kTable[0]; ++i) row[kTable[i].code] = uint8_t(i + 1);
  }
};
const Index& index() {
  static const Index idx;
  return idx;
}

}  // namespace

const OpcodeInfo* opcode_info(uint8_t code) {
  const uint8_t r = index().row[code];
  return r ? &kTable[r - 1] : nullptr;
}

const char* opcode_name(uint8_t code) {
  if (const OpcodeInfo* i = opcode_info(code)) return i->name;
  // One static string per possible code, built once.
  static const auto names = [] {
    std::array<std::array<char, 12>, 256> n{};
    for (int c = 0; c < 256; ++c) std::snprintf(n[c].data(), n[c].size(), "OPCODE_0x%02X", c);
    return n;
  }();
  return names[code].data();
}

}  // namespace roce
