// model/regs: the WQE codec (see wqe.h for the layout).
#include "model/regs/wqe.h"

#include <algorithm>

namespace ernic::pg332 {

namespace {
uint64_t le(const uint8_t* b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | b[i];
  return v;
}
void put(uint8_t* b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[i] = uint8_t(v >> (8 * i));
}
struct Name {
  WqeOpcode op;
  const char* lower;
  const char* upper;
};
constexpr Name kNames[] = {{WqeOpcode::write, "write", "WRITE"},       {WqeOpcode::write_imm, "write_imm", "WRITE_IMM"},
                           {WqeOpcode::send, "send", "SEND"},          {WqeOpcode::send_imm, "send_imm", "SEND_IMM"},
                           {WqeOpcode::read, "read", "READ"},          {WqeOpcode::send_inv, "send_inv", "SEND_INV"}};
}  // namespace

Wqe decode_wqe(const uint8_t* b) {
  Wqe w;
  w.wrid = uint16_t(le(b + 0, 2));
  w.laddr = le(b + 4, 8);
  w.length = uint32_t(le(b + 12, 4));
  w.opcode = b[16];
  w.roffset = le(b + 20, 8);
  w.rtag = uint32_t(le(b + 28, 4));
  std::copy_n(b + 32, kInlineMax, w.sdata.begin());
  w.immdt = uint32_t(le(b + 48, 4));
  return w;
}

void encode_wqe(const Wqe& w, uint8_t* b) {
  std::fill_n(b, kWqeBytes, 0);
  put(b + 0, w.wrid, 2);
  put(b + 4, w.laddr, 8);
  put(b + 12, w.length, 4);
  b[16] = w.opcode;
  put(b + 20, w.roffset, 8);
  put(b + 28, w.rtag, 4);
  std::copy_n(w.sdata.begin(), kInlineMax, b + 32);
  put(b + 48, w.immdt, 4);
}

std::optional<WqeOpcode> wqe_opcode_from_name(std::string_view n) {
  for (const Name& x : kNames)
    if (n == x.lower) return x.op;
  return std::nullopt;
}

const char* wqe_opcode_name(WqeOpcode op) {
  for (const Name& x : kNames)
    if (x.op == op) return x.lower;
  return "?";
}

const char* wqe_opcode_log_name(uint8_t op) {
  for (const Name& x : kNames)
    if (uint8_t(x.op) == op) return x.upper;
  return "?";
}

}  // namespace ernic::pg332
