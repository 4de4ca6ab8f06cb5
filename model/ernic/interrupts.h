// model/ernic: the ERNIC's interrupt (PG332 section 2, "Interrupts"):
// INTSTS bits raised by the blocks, masked by INTEN, ORed onto rnic_intr;
// the per-QP RQ / CQ / CNP status banks (register file) say which QP.
// Level changes go to the transaction log and the waveform.
#pragma once
#include <cstdint>
#include <systemc>

#include "model/ernic/shared.h"

namespace ernic {

// rnic_intr: written by whichever block changes INTSTS or INTEN (the AXI-Lite
// slave's write-1-to-clear, a block raising a bit), each time with the level
// the registers then give; two of them in one delta cycle leave the last
// one's, which is the registers' final state (SystemC would refuse two
// writers in one delta under SC_MANY_WRITERS: a split run's different
// composition of processes met that in incast_ecn_cnp with --no-idle-skip).
using IntrLine = sc_core::sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS>;

class Interrupts {
 public:
  Interrupts(ErnicShared& s, IntrLine& line) : s_(s), line_(line) {}
  // INTSTS |= bits, then update().
  void raise(uint32_t intsts_bits);
  // Sets QP qpn's bit in the bank at GCSR offset bank_off.
  void bank_set(uint32_t bank_off, uint32_t qpn) { s_.regs.bank_set(bank_off, qpn); }
  // rnic_intr = (INTSTS & INTEN) != 0 (after a write of INTSTS or INTEN too).
  void update();

 private:
  ErnicShared& s_;
  IntrLine& line_;
  bool level_ = false;
};

}  // namespace ernic
