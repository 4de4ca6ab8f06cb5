/* ernic_regs_c.h: PG332's ERNIC registers, fields and field values for C
 * programs on the bridge (C99), from model/regs/ernic_regs.def, which
 * regs-gen generates from model/regs/ernic_regs.yaml: the one source the
 * simulator's model, its driver and the RTL also use.
 *
 * The 3.1 address layout by default; define ERNIC_LAYOUT_4X before
 * including for the 4.x layout (its fields too). Seed 000's style:
 *
 *   ernic_write32(b, ERNIC_REG(ERRBUFBA), (uint32_t)errbuf);
 *   ernic_write32(b, ERNIC_QPREG(SQPIi, qpn), idx + 1);
 *   conf = ERNIC_SET(XRNICCONF_EN, 1) | ERNIC_SET(XRNICCONF_ERRBUF_EN, 1);
 *   ernic_write32(b, ERNIC_MRREG(VIRTADDRLSB, index), (uint32_t)va);
 */
#ifndef ERNIC_REGS_C_H
#define ERNIC_REGS_C_H

#include <stdint.h>

/* Register offsets: ERNIC_G_<name> in the global block (GCSR), ERNIC_Q_<name>
 * in a QP's block, ERNIC_M_<name> in an MR entry. */
#define ERNIC_GREG(name, off, acc, rst, ...) ERNIC_G_##name = (off),
#define ERNIC_QREG(name, off, acc, rst, ...) ERNIC_Q_##name = (off),
#define ERNIC_MREG(name, off, acc, rst, ...) ERNIC_M_##name = (off),
enum ernic_reg_offset {
#include "ernic_regs.def"
  ERNIC_REG_OFFSET_END_
};
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG
#define ERNIC_GREG(...)
#define ERNIC_QREG(...)
#define ERNIC_MREG(...)

/* Layouts: bases and sizes. */
#define ERNIC_LAYOUT(tag, name, gcsr, qcsr, mr, window, max_qps, ...) \
  ERNIC_##tag##_GCSR = (gcsr), ERNIC_##tag##_QCSR = (qcsr), ERNIC_##tag##_MR = (mr), \
  ERNIC_##tag##_WINDOW = (window), ERNIC_##tag##_MAX_QPS = (max_qps),
enum ernic_layout_value {
#include "ernic_regs.def"
  ERNIC_LAYOUT_VALUE_END_
};
#undef ERNIC_LAYOUT

#ifdef ERNIC_LAYOUT_4X
#define ERNIC_GCSR ERNIC_V4X_GCSR
#define ERNIC_QCSR ERNIC_V4X_QCSR
#define ERNIC_MRBASE ERNIC_V4X_MR
#define ERNIC_FIELD_L2(reg, fld, lsb, width) ERNIC_FIELD_L3(reg, fld, lsb, width)
#define ERNIC_FIELD_L1(reg, fld, lsb, width)
#else
#define ERNIC_GCSR ERNIC_V31_GCSR
#define ERNIC_QCSR ERNIC_V31_QCSR
#define ERNIC_MRBASE ERNIC_V31_MR
#define ERNIC_FIELD_L1(reg, fld, lsb, width) ERNIC_FIELD_L3(reg, fld, lsb, width)
#define ERNIC_FIELD_L2(reg, fld, lsb, width)
#endif

/* PG332: a QP's registers are a 256-byte block from QP1 on; an MR entry is
 * 256 bytes (model/regs/regs.h kQpBlockStride / kMrEntryStride; a test
 * checks they agree). */
#define ERNIC_QP_BLOCK_STRIDE 0x100u
#define ERNIC_MR_ENTRY_STRIDE 0x100u

#define ERNIC_REG(name) ((uint32_t)(ERNIC_GCSR + ERNIC_G_##name))
#define ERNIC_QPREG(name, qpn) ((uint32_t)(ERNIC_QCSR + ((uint32_t)(qpn)-1u) * ERNIC_QP_BLOCK_STRIDE + ERNIC_Q_##name))
#define ERNIC_MRREG(name, index) ((uint32_t)(ERNIC_MRBASE + (uint32_t)(index)*ERNIC_MR_ENTRY_STRIDE + ERNIC_M_##name))

/* Fields: ERNIC_F_<register>_<field>_LSB / _WIDTH (those of the layout). */
#define ERNIC_FIELD_L3(reg, fld, lsb, width) ERNIC_F_##reg##_##fld##_LSB = (lsb), ERNIC_F_##reg##_##fld##_WIDTH = (width),
#define ERNIC_FIELD(reg, fld, lsb, width, layouts, ...) ERNIC_FIELD_L##layouts(reg, fld, lsb, width)
enum ernic_field {
#include "ernic_regs.def"
  ERNIC_FIELD_END_
};
#undef ERNIC_FIELD

/* Field values: ERNIC_V_<register>_<field>_<name>. */
#define ERNIC_ENUM_BEGIN(reg, fld)
#define ERNIC_ENUM_END(reg, fld)
#define ERNIC_ENUM_VALUE(reg, fld, name, value, ...) ERNIC_V_##reg##_##fld##_##name = (value),
enum ernic_field_value {
#include "ernic_regs.def"
  ERNIC_FIELD_VALUE_END_
};
#undef ERNIC_ENUM_BEGIN
#undef ERNIC_ENUM_END
#undef ERNIC_ENUM_VALUE
#undef ERNIC_GREG
#undef ERNIC_QREG
#undef ERNIC_MREG

#define ERNIC_MASK_(f) ((uint32_t)((((uint64_t)1) << ERNIC_F_##f##_WIDTH) - 1u))
/* v placed in field f (REGISTER_FIELD), e.g. ERNIC_SET(QPCONFi_PMTU, 4). */
#define ERNIC_SET(f, v) ((uint32_t)(((uint32_t)(v)&ERNIC_MASK_(f)) << ERNIC_F_##f##_LSB))
/* Field f of register value r. */
#define ERNIC_GET(f, r) ((uint32_t)(((uint32_t)(r) >> ERNIC_F_##f##_LSB) & ERNIC_MASK_(f)))

#endif /* ERNIC_REGS_C_H */
