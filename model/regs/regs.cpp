#include "model/regs/regs.h"

#include <cstdio>

namespace ernic::regs {

const std::vector<RegInfo>& all_registers() {
  static const std::vector<RegInfo> v = {
#define ERNIC_GREG(name, off, acc, rst, doc) {#name, Block::Global, off, Access::acc, rst, true, doc},
#define ERNIC_QREG(name, off, acc, rst, qp1, doc) {#name, Block::Qp, off, Access::acc, rst, qp1, doc},
#define ERNIC_MREG(name, off, acc, rst, doc) {#name, Block::Mr, off, Access::acc, rst, true, doc},
#include "model/regs/ernic_regs.def"
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
  };
  return v;
}

const std::vector<FieldInfo>& all_fields() {
  static const std::vector<FieldInfo> v = {
#define ERNIC_GREG(name, off, acc, rst, doc)
#define ERNIC_QREG(name, off, acc, rst, qp1, doc)
#define ERNIC_MREG(name, off, acc, rst, doc)
#define ERNIC_FIELD(reg, name, lsb, width, layouts, doc) {#reg, #name, lsb, width, layouts, doc},
#include "model/regs/ernic_regs.def"
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
#undef ERNIC_FIELD
  };
  return v;
}

const FieldInfo* find_field(const std::string& reg, const std::string& field) {
  return find_field(reg, field, kLayout31);
}

const FieldInfo* find_field(const std::string& reg, const std::string& field, const Layout& l) {
  const uint32_t bit = l.gcsr_base == kLayout4x.gcsr_base ? 2 : 1;
  for (const auto& f : all_fields())
    if (reg == f.reg && field == f.name && (f.layouts & bit)) return &f;
  return nullptr;
}

std::vector<const FieldInfo*> fields_of(const std::string& reg) {
  std::vector<const FieldInfo*> out;
  for (const auto& f : all_fields())
    if (reg == f.reg && (f.layouts & 1)) out.push_back(&f);
  return out;
}

const RegInfo* find_register(const std::string& name) {
  for (const auto& r : all_registers())
    if (name == r.name) return &r;
  return nullptr;
}

const char* access_name(Access a) {
  switch (a) {
    case Access::RW: return "RW";
    case Access::RO: return "RO";
    case Access::W1C: return "W1C";
    case Access::ROSW: return "RO (RW with SW override)";
  }
  return "?";
}

static const RegInfo* find_in_block(Block b, uint32_t off) {
  for (const auto& r : all_registers())
    if (r.block == b && r.offset == off) return &r;
  return nullptr;
}

Decoded decode_address(const Layout& l, uint32_t addr, uint32_t num_qp, uint32_t num_mr) {
  Decoded d;
  if (addr >= l.qcsr_base && addr < l.qcsr_base + num_qp * kQpBlockStride) {
    d.block = Block::Qp;
    d.index = (addr - l.qcsr_base) / kQpBlockStride + 1;
    d.offset = (addr - l.qcsr_base) % kQpBlockStride;
    d.reg = find_in_block(Block::Qp, d.offset);
    if (d.reg && d.index == 1 && !d.reg->exists_on_qp1) d.reg = nullptr;
  } else if (addr >= l.gcsr_base && addr < l.qcsr_base) {
    d.block = Block::Global;
    d.offset = addr - l.gcsr_base;
    d.reg = find_in_block(Block::Global, d.offset);
  } else if (addr >= l.mr_base && addr < l.mr_base + num_mr * kMrEntryStride) {
    d.block = Block::Mr;
    d.index = (addr - l.mr_base) / kMrEntryStride;
    d.offset = (addr - l.mr_base) % kMrEntryStride;
    d.reg = find_in_block(Block::Mr, d.offset);
  }
  return d;
}

std::string address_name(const Layout& l, uint32_t addr, uint32_t num_qp, uint32_t num_mr) {
  Decoded d = decode_address(l, addr, num_qp, num_mr);
  char buf[96];
  if (d.block == Block::Global && !d.reg && d.offset >= l.rq_int_bank &&
      d.offset < l.rq_int_bank + 4 * l.int_banks) {
    std::snprintf(buf, sizeof buf, "RQINTSTS%u", (d.offset - l.rq_int_bank) / 4 + 1);
  } else if (d.block == Block::Global && !d.reg && d.offset >= l.cq_int_bank &&
             d.offset < l.cq_int_bank + 4 * l.int_banks) {
    std::snprintf(buf, sizeof buf, "CQINTSTS%u", (d.offset - l.cq_int_bank) / 4 + 1);
  } else if (d.block == Block::Global && !d.reg && d.offset >= l.cnp_bank &&
             d.offset < l.cnp_bank + 4 * l.int_banks) {
    std::snprintf(buf, sizeof buf, "CNPSCHDSTS%uREG", (d.offset - l.cnp_bank) / 4 + 1);
  } else if (!d.reg) {
    std::snprintf(buf, sizeof buf, "reserved@0x%05x", addr);
  } else if (d.block == Block::Global) {
    std::snprintf(buf, sizeof buf, "%s", d.reg->name);
  } else {
    std::snprintf(buf, sizeof buf, "%s[%u]", d.reg->name, d.index);
  }
  return buf;
}

std::optional<val::QPCONFi_PMTU> pmtu_code_of(uint32_t bytes) {
  for (const auto c : val::QPCONFi_PMTU_all)
    if (pmtu_bytes(c) == bytes) return c;
  return std::nullopt;
}

uint32_t pmtu_code(uint32_t bytes) {
  for (const auto c : val::QPCONFi_PMTU_all)
    if (pmtu_bytes(c) >= bytes) return u(c);
  return u(val::QPCONFi_PMTU::MTU_4096);
}

}  // namespace ernic::regs
