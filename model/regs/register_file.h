// model/regs: the ERNIC IP's register file (PG332 v3.1 "Register Space";
// the 4.x layout as a configuration): the global block (GCSR), one block a
// QP (QCSR, QP 1..num_qp), the MR table, and the interrupt status banks
// (RQ, CQ, CNP: one bit a QP). Plain storage with PG332's access rules
// (RW, RO, W1C, and RO registers software may write under SW override,
// XRNICADCONF[0]); what a write sets going (a doorbell, a QP enabled, an MR
// entry changed) is the ERNIC top's (model/ernic/ernic.cpp), which it
// learns from the Write result. Offsets and reset values come from the one
// description, ernic_regs.yaml (model/regs/regs.h).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "model/regs/regs.h"

namespace ernic::regs {

class RegisterFile {
 public:
  RegisterFile(const Layout& layout, uint32_t num_qp, uint32_t num_mr);
  const Layout& layout() const { return layout_; }
  uint32_t num_qp() const { return num_qp_; }
  uint32_t num_mr() const { return num_mr_; }

  // Word access by offset inside the block (QPN 1-based).
  uint32_t& g(uint32_t off) { return g_[off / 4]; }
  uint32_t g(uint32_t off) const { return g_[off / 4]; }
  uint32_t& q(uint32_t qpn, uint32_t off) { return q_[qpn][off / 4]; }
  uint32_t q(uint32_t qpn, uint32_t off) const { return q_[qpn][off / 4]; }
  uint32_t& m(uint32_t idx, uint32_t off) { return mr_[idx][off / 4]; }
  uint32_t m(uint32_t idx, uint32_t off) const { return mr_[idx][off / 4]; }
  const std::vector<uint32_t>& mr_entry(uint32_t idx) const { return mr_[idx]; }
  // A 64-bit address held in a LSB/MSB register pair of a QP block.
  uint64_t q64(uint32_t qpn, uint32_t lo, uint32_t hi) const { return uint64_t(q(qpn, lo)) | uint64_t(q(qpn, hi)) << 32; }
  uint64_t g64(uint32_t lo, uint32_t hi) const { return uint64_t(g(lo)) | uint64_t(g(hi)) << 32; }

  // Every register to its reset value, the interrupt banks to 0.
  void reset();
  // PG332's packed counters: add n to the [15:0] (low) or [31:16] (high)
  // half of a global register, modulo 2^16.
  void add16(uint32_t off, bool high, uint32_t n = 1);
  // Sets QP qpn's bit in the interrupt bank at GCSR offset bank_off (one of
  // the layout's rq_int_bank, cq_int_bank, cnp_bank).
  void bank_set(uint32_t bank_off, uint32_t qpn);

  Decoded decode(uint32_t addr) const { return decode_address(layout_, addr, num_qp_, num_mr_); }
  // The value at an address, no side effect (reserved addresses read 0).
  uint32_t read(const Decoded& d) const;

  // What an AXI4-Lite write did to the storage.
  struct Write {
    enum Kind {
      ignored,   // reserved, read-only (RO, or RO with SW override off)
      bank,      // an interrupt bank bit cleared (W1C)
      w1c,       // a W1C global register's bits cleared (INTSTS)
      global,    // a global register written
      qp,        // a per-QP register written
      mr,        // an MR table word written
    } kind = ignored;
    uint32_t old = 0;  // the word before the write (global, qp)
  };
  Write write(const Decoded& d, uint32_t data);

 private:
  std::optional<uint32_t> bank_read(uint32_t offset) const;
  bool bank_w1c(uint32_t offset, uint32_t data);

  Layout layout_;
  uint32_t num_qp_, num_mr_;
  std::vector<uint32_t> g_;                  // GCSR words
  std::vector<std::vector<uint32_t>> q_;     // [qpn][word], qpn 1..num_qp
  std::vector<std::vector<uint32_t>> mr_;    // [idx][word]
  std::vector<uint32_t> rq_int_, cq_int_, cnp_;
};

}  // namespace ernic::regs
