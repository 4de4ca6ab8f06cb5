// model/ernic: the ERNIC's interrupt (PG332 section 2, "Interrupts"):
// INTSTS bits raised by the blocks, masked by INTEN, ORed onto rnic_intr;
// the per-QP RQ / CQ / CNP status banks (register file) say which QP.
// Level changes go to the transaction log and the waveform.
#pragma once
#include <cstdint>
#include <systemc>

#include "model/ernic/shared.h"

namespace ernic {

class Interrupts {
 public:
  Interrupts(ErnicShared& s, sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS>& line) : s_(s), line_(line) {}
  // INTSTS |= bits, then update().
  void raise(uint32_t intsts_bits);
  // Sets QP qpn's bit in the bank at GCSR offset bank_off.
  void bank_set(uint32_t bank_off, uint32_t qpn) { s_.regs.bank_set(bank_off, qpn); }
  // rnic_intr = (INTSTS & INTEN) != 0 (after a write of INTSTS or INTEN too).
  void update();

 private:
  ErnicShared& s_;
  sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS>& line_;
  bool level_ = false;
};

}  // namespace ernic
