// model/regs: ERNIC register map (PG332 v3.1 "Register Space"), generated
// by the preprocessor from the single description ernic_regs.def.
// All registers are 32 bits. Addresses are byte offsets in the ERNIC
// AXI4-Lite window (256 KB in 3.x, 2 MB in 4.x).
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/roce/mtu.h"

namespace ernic::regs {

enum class Access : uint8_t { RW, RO, W1C, ROSW };
enum class Block : uint8_t { Global, Qp, Mr };

// Offsets inside the global (GCSR) block.
namespace g {
#define ERNIC_GREG(name, off, acc, rst, doc) constexpr uint32_t name = off;
#define ERNIC_QREG(name, off, acc, rst, qp1, doc)
#define ERNIC_MREG(name, off, acc, rst, doc)
#include "model/regs/ernic_regs.def"
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
}  // namespace g

// Offsets inside one QP block (QCSR base + (qpn-1)*0x100).
namespace q {
#define ERNIC_GREG(name, off, acc, rst, doc)
#define ERNIC_QREG(name, off, acc, rst, qp1, doc) constexpr uint32_t name = off;
#define ERNIC_MREG(name, off, acc, rst, doc)
#include "model/regs/ernic_regs.def"
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
}  // namespace q

// Offsets inside one MR table entry (i*0x100).
namespace m {
#define ERNIC_GREG(name, off, acc, rst, doc)
#define ERNIC_QREG(name, off, acc, rst, qp1, doc)
#define ERNIC_MREG(name, off, acc, rst, doc) constexpr uint32_t name = off;
#include "model/regs/ernic_regs.def"
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
}  // namespace m

constexpr uint32_t kQpBlockStride = 0x100;
constexpr uint32_t kMrEntryStride = 0x100;

// Every named field of ernic_regs.yaml as a constant, generated from the
// table: fld::<REG>_<FIELD> (the 3.1 layout's position; fields that moved
// in 4.x also as fld4x::<REG>_<FIELD>). get/set/mask for multi-bit fields,
// bit() for one-bit ones.
struct Field {
  uint32_t lsb = 0, width = 0;
  constexpr uint32_t mask() const { return (width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1)) << lsb; }
  constexpr uint32_t get(uint32_t reg_value) const { return (reg_value & mask()) >> lsb; }
  constexpr uint32_t set(uint32_t reg_value, uint32_t v) const { return (reg_value & ~mask()) | ((v << lsb) & mask()); }
  constexpr uint32_t bit() const { return 1u << lsb; }
  constexpr uint32_t max() const { return mask() >> lsb; }
  // The field plus n, wrapping at its width (PG332's counters).
  constexpr uint32_t inc(uint32_t reg_value, uint32_t n = 1) const { return set(reg_value, get(reg_value) + n); }
};
#define ERNIC_GREG(name, off, acc, rst, doc)
#define ERNIC_QREG(name, off, acc, rst, qp1, doc)
#define ERNIC_MREG(name, off, acc, rst, doc)
#define ERNIC_FIELD(reg, name, lsb, width, layouts, doc) ERNIC_FIELD_L##layouts(reg, name, lsb, width)
#define ERNIC_FIELD_L3(reg, name, lsb, width) constexpr Field reg##_##name{lsb, width};
#define ERNIC_FIELD_L1(reg, name, lsb, width) constexpr Field reg##_##name{lsb, width};
#define ERNIC_FIELD_L2(reg, name, lsb, width)
namespace fld {
#include "model/regs/ernic_regs.def"
}  // namespace fld
#undef ERNIC_FIELD_L1
#undef ERNIC_FIELD_L2
#undef ERNIC_FIELD_L3
#define ERNIC_FIELD_L3(reg, name, lsb, width)
#define ERNIC_FIELD_L1(reg, name, lsb, width)
#define ERNIC_FIELD_L2(reg, name, lsb, width) constexpr Field reg##_##name{lsb, width};
namespace fld4x {
#include "model/regs/ernic_regs.def"
}  // namespace fld4x
#undef ERNIC_FIELD_L1
#undef ERNIC_FIELD_L2
#undef ERNIC_FIELD_L3
#undef ERNIC_FIELD
#define ERNIC_FIELD(reg, name, lsb, width, layouts, doc)
// The named values of a field (ernic_regs.yaml `values`): val::<REG>_<FIELD>
// is an enum class, val::<REG>_<FIELD>_all lists its values in order.
#define ERNIC_ENUM_BEGIN(reg, field) enum class reg##_##field : uint32_t {
#define ERNIC_ENUM_VALUE(reg, field, name, value, doc) name = value,
#define ERNIC_ENUM_END(reg, field) };
namespace val {
#include "model/regs/ernic_regs.def"
}  // namespace val
#undef ERNIC_ENUM_BEGIN
#undef ERNIC_ENUM_VALUE
#undef ERNIC_ENUM_END
#define ERNIC_ENUM_BEGIN(reg, field) constexpr reg##_##field reg##_##field##_all[] = {
#define ERNIC_ENUM_VALUE(reg, field, name, value, doc) reg##_##field::name,
#define ERNIC_ENUM_END(reg, field) };
namespace val {
#include "model/regs/ernic_regs.def"
}  // namespace val
#undef ERNIC_ENUM_BEGIN
#undef ERNIC_ENUM_VALUE
#undef ERNIC_ENUM_END
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
#undef ERNIC_FIELD
template <typename E>
constexpr uint32_t u(E v) { return static_cast<uint32_t>(v); }

// Register layout: 3.1 (default) or 4.x (PG332 4.0+: global block at
// 0x100000, QP blocks at 0x180000, 64 interrupt banks); the figures are
// ernic_regs.yaml's `layouts`.
struct Layout {
  const char* name;
  uint32_t gcsr_base;
  uint32_t qcsr_base;
  uint32_t mr_base;
  uint32_t window_bytes;
  uint32_t max_qps;     // C_NUM_QP upper bound
  uint32_t int_banks;   // registers per interrupt bank group (32 QPs a register; bit j of bank n is QP 32n+j)
  uint32_t rq_int_bank, cq_int_bank, cnp_bank;  // offsets in the GCSR block
  // Fields that moved between 3.x and 4.x (XIB4, AUD):
  Field udp_sport;            // XRNICCONF: [31:16] in 3.x, [23:8] in 4.x
  bool qp_count_in_xrnicconf; // 3.x: XRNICCONF[15:8]; 4.x: XRNIC_CONF_QP_EN[11:0]
  Field swovr_qpn;            // XRNICADCONF SW-override QPN: [31:24] in 3.x, [31:20] in 4.x

  uint32_t global(uint32_t off) const { return gcsr_base + off; }
  // qpn is 1-based (QP1 = GSI).
  uint32_t qp(uint32_t qpn, uint32_t off) const { return qcsr_base + (qpn - 1) * kQpBlockStride + off; }
  uint32_t mr(uint32_t idx, uint32_t off) const { return mr_base + idx * kMrEntryStride + off; }
  // PG332 XRNICADCONF: SW override ([0]) makes the read-only pointer
  // registers of one QP writable, and stops its SQ processing: the QP the
  // SW-override QPN field names (its low bits, as wide as the field).
  bool sw_override(uint32_t xrnicadconf, uint32_t qpn) const {
    return fld::XRNICADCONF_SW_OVERRIDE.get(xrnicadconf) && swovr_qpn.get(xrnicadconf) == (qpn & swovr_qpn.max());
  }
};
#define ERNIC_GREG(name, off, acc, rst, doc)
#define ERNIC_QREG(name, off, acc, rst, qp1, doc)
#define ERNIC_MREG(name, off, acc, rst, doc)
#define ERNIC_LAYOUT(tag, name, gcsr, qcsr, mr, window, max_qps, banks, rq, cq, cnp) \
  constexpr Layout kLayoutBase##tag{name, gcsr, qcsr, mr, window, max_qps, banks, rq, cq, cnp, {}, false, {}};
#include "model/regs/ernic_regs.def"
#undef ERNIC_LAYOUT
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
constexpr Layout with_fields(Layout l, Field udp_sport, bool qp_count_in_xrnicconf, Field swovr_qpn) {
  l.udp_sport = udp_sport;
  l.qp_count_in_xrnicconf = qp_count_in_xrnicconf;
  l.swovr_qpn = swovr_qpn;
  return l;
}
constexpr Layout kLayout31 =
    with_fields(kLayoutBaseV31, fld::XRNICCONF_UDP_SPORT, true, fld::XRNICADCONF_SW_OVERRIDE_QPN);
constexpr Layout kLayout4x =
    with_fields(kLayoutBaseV4X, fld4x::XRNICCONF_UDP_SPORT, false, fld4x::XRNICADCONF_SW_OVERRIDE_QPN);

// QPCONFi[31:16] counts the RQ element size in 256-byte units.
constexpr uint32_t kRqBufSizeUnit = 256;

// PG332's R_Key (and L_Key): [31:8] the MR table index, [7:0] the key byte
// the entry's BUFRKEY must hold.
constexpr uint32_t rkey_index(uint32_t rkey) { return rkey >> 8; }
constexpr uint32_t rkey_key(uint32_t rkey) { return rkey & 0xFF; }
constexpr uint32_t make_rkey(uint32_t index, uint32_t key) { return index << 8 | (key & 0xFF); }

// Description of one register, for lookup by name (scenarios, logs, docs).
struct RegInfo {
  const char* name;    // as PG332 spells it; per-QP names end in "i"
  Block block;
  uint32_t offset;     // inside its block
  Access access;
  uint32_t reset;
  bool exists_on_qp1;  // per-QP registers only
  const char* doc;
};
const std::vector<RegInfo>& all_registers();

// A named bit field of a register (ernic_regs.def ERNIC_FIELD entries).
struct FieldInfo {
  const char* reg;     // register name
  const char* name;    // field name, e.g. "PMTU"
  uint32_t lsb;
  uint32_t width;
  uint32_t layouts;    // bit 0: the 3.1 layout has it, bit 1: 4.x (some fields move)
  const char* doc;
  uint32_t mask() const { return (width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1)) << lsb; }
  uint32_t get(uint32_t reg_value) const { return (reg_value & mask()) >> lsb; }
  uint32_t set(uint32_t reg_value, uint32_t v) const { return (reg_value & ~mask()) | ((v << lsb) & mask()); }
};
const std::vector<FieldInfo>& all_fields();
// The field as the 3.1 layout has it (the default layout).
const FieldInfo* find_field(const std::string& reg, const std::string& field);
struct Layout;
// The field as the given layout has it (nullptr if that layout lacks it).
const FieldInfo* find_field(const std::string& reg, const std::string& field, const Layout& l);
std::vector<const FieldInfo*> fields_of(const std::string& reg);
const RegInfo* find_register(const std::string& name);  // exact, case-sensitive
const char* access_name(Access a);

// Decoded address: which register (if any) an AXI4-Lite address hits.
struct Decoded {
  const RegInfo* reg = nullptr;  // nullptr: reserved address or interrupt bank
  Block block = Block::Global;
  uint32_t index = 0;            // QPN (1-based) or MR index
  uint32_t offset = 0;           // inside the block
};
Decoded decode_address(const Layout& l, uint32_t addr, uint32_t num_qp, uint32_t num_mr);
// "SQPIi[2]" / "XRNICCONF" / "ACCESSDESC[0]" for logs.
std::string address_name(const Layout& l, uint32_t addr, uint32_t num_qp, uint32_t num_mr);

// The path MTU: QPCONFi[10:8] codes (val::QPCONFi_PMTU) are IBTA's MTU
// enumeration minus one (model/roce/mtu.h). Reserved codes 5..7 are taken
// as 4096 by the model.
constexpr uint32_t pmtu_bytes(uint32_t code) {
  return roce::mtu_bytes(uint8_t(std::min(code, u(val::QPCONFi_PMTU::MTU_4096)) + 1));
}
constexpr uint32_t pmtu_bytes(val::QPCONFi_PMTU code) { return pmtu_bytes(u(code)); }
// The code of a PMTU in bytes; nullopt when it is none of 256..4096.
std::optional<val::QPCONFi_PMTU> pmtu_code_of(uint32_t bytes);
// The code for bytes rounded up to a PMTU (at most 4096).
uint32_t pmtu_code(uint32_t bytes);

}  // namespace ernic::regs
