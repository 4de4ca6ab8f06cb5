// model/regs: the register file (see register_file.h).
#include "model/regs/register_file.h"

#include <algorithm>

namespace ernic::regs {

RegisterFile::RegisterFile(const Layout& layout, uint32_t num_qp, uint32_t num_mr)
    : layout_(layout), num_qp_(num_qp), num_mr_(num_mr) {
  g_.assign(0x1000 / 4, 0);
  q_.assign(num_qp + 1, std::vector<uint32_t>(kQpBlockStride / 4, 0));
  mr_.assign(num_mr, std::vector<uint32_t>(kMrEntryStride / 4, 0));
  rq_int_.assign(layout.int_banks, 0);
  cq_int_.assign(layout.int_banks, 0);
  cnp_.assign(layout.int_banks, 0);
  reset();
}

void RegisterFile::reset() {
  for (const auto& r : all_registers()) {
    if (r.block == Block::Global) {
      g(r.offset) = r.reset;
    } else if (r.block == Block::Qp) {
      for (uint32_t n = 1; n <= num_qp_; ++n) q(n, r.offset) = r.reset;
    } else {
      for (uint32_t i = 0; i < num_mr_; ++i) m(i, r.offset) = r.reset;
    }
  }
  for (auto* v : {&rq_int_, &cq_int_, &cnp_}) std::fill(v->begin(), v->end(), 0u);
}

void RegisterFile::add16(uint32_t off, bool high, uint32_t n) {
  uint32_t& r = g(off);
  if (high) {
    r = (r & 0xFFFF) | (((r >> 16) + n) & 0xFFFF) << 16;
  } else {
    r = (r & 0xFFFF0000u) | ((r + n) & 0xFFFF);
  }
}

void RegisterFile::bank_set(uint32_t bank_off, uint32_t qpn) {
  // PG31: bit j of bank n is QP 32(n-1)+j.
  const uint32_t bank = qpn / 32, bit = qpn % 32;
  if (bank >= layout_.int_banks) return;
  if (bank_off == layout_.rq_int_bank) rq_int_[bank] |= 1u << bit;
  if (bank_off == layout_.cq_int_bank) cq_int_[bank] |= 1u << bit;
  if (bank_off == layout_.cnp_bank) cnp_[bank] |= 1u << bit;
}

std::optional<uint32_t> RegisterFile::bank_read(uint32_t offset) const {
  auto bank = [&](uint32_t base, const std::vector<uint32_t>& v) -> std::optional<uint32_t> {
    if (offset >= base && offset < base + 4 * layout_.int_banks) return v[(offset - base) / 4];
    return std::nullopt;
  };
  if (auto v = bank(layout_.rq_int_bank, rq_int_)) return v;
  if (auto v = bank(layout_.cq_int_bank, cq_int_)) return v;
  return bank(layout_.cnp_bank, cnp_);
}

bool RegisterFile::bank_w1c(uint32_t offset, uint32_t data) {
  auto w1c = [&](uint32_t base, std::vector<uint32_t>& v) {
    if (offset >= base && offset < base + 4 * layout_.int_banks) {
      v[(offset - base) / 4] &= ~data;
      return true;
    }
    return false;
  };
  // The CNP bank is W1C like the others (PG332's interrupt flow; A-ERNIC-22).
  return w1c(layout_.rq_int_bank, rq_int_) || w1c(layout_.cq_int_bank, cq_int_) || w1c(layout_.cnp_bank, cnp_);
}

uint32_t RegisterFile::read(const Decoded& d) const {
  if (d.block == Block::Global && !d.reg) return bank_read(d.offset).value_or(0);  // reserved: reads as 0
  if (!d.reg) return 0;
  switch (d.block) {
    case Block::Global: return g(d.offset);
    case Block::Qp: return q(d.index, d.offset);
    case Block::Mr: return mr_[d.index][d.offset / 4];
  }
  return 0;
}

RegisterFile::Write RegisterFile::write(const Decoded& d, uint32_t data) {
  Write w;
  if (d.block == Block::Global && !d.reg) {
    if (bank_w1c(d.offset, data)) w.kind = Write::bank;
    return w;
  }
  if (!d.reg) return w;  // reserved: writes ignored
  // ROSW registers are per QP: writable for the QP under SW override only.
  const bool swovr = d.block == Block::Qp && layout_.sw_override(g(g::XRNICADCONF), d.index);
  switch (d.reg->access) {
    case Access::RO:
      return w;  // writes to read-only registers have no effect
    case Access::ROSW:
      if (!swovr) return w;
      break;
    case Access::W1C:
      g(d.offset) &= ~data;
      w.kind = Write::w1c;
      return w;
    case Access::RW:
      break;
  }
  if (d.block == Block::Global) {
    w.old = g(d.offset);
    g(d.offset) = data;
    w.kind = Write::global;
  } else if (d.block == Block::Mr) {
    mr_[d.index][d.offset / 4] = data;
    w.kind = Write::mr;
  } else {
    w.old = q(d.index, d.offset);
    q(d.index, d.offset) = data;
    w.kind = Write::qp;
  }
  return w;
}

}  // namespace ernic::regs
