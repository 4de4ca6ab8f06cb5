// model/ernic: the ERNIC's interrupt (PG332 section 2, "Interrupts"):
// INTSTS bits raised by the blocks, masked by INTEN, ORed onto rnic_intr;
// the per-QP RQ / CQ / CNP status banks (register file) say which QP.
// Level changes go to the transaction log and the waveform.
#pragma once
#include <cstdint>
#include <systemc>

#include "model/ernic/shared.h"
#include "model/sim/settle.h"

namespace ernic {

// rnic_intr: written by whichever block changes INTSTS or INTEN (the AXI-Lite
// slave's write-1-to-clear, a block raising a bit), each time with the level
// the registers then give; two of them in one delta cycle leave the last
// one's, which is the registers' final state (SystemC would refuse two
// writers in one delta under SC_MANY_WRITERS: a split run's different
// composition of processes met that in incast_ecn_cnp with --no-idle-skip).
using IntrLine = sc_core::sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS>;

// One instant, two writers of INTSTS: a block raising a bit and the AXI-Lite
// slave's write-1-to-clear can act at the same core edge, in an order the
// SystemC kernel picks (and a split run's kernel picks differently). As a
// status register in RTL does (set wins over clear in one cycle), a bit
// raised at the instant of a W1C survives it, whichever ran first; and the
// line's level, its log line and the waveform are taken once the instant
// has settled (model/sim/settle.h), from the registers' final state, so a
// clear-then-raise at one instant is no 1 -> 0 -> 1 blip (issue 16:
// topology/incast_ecn_cnp lost INTSTS[8] in one order).
class Interrupts final : public settle::Client {
 public:
  Interrupts(ErnicShared& s, IntrLine& line) : s_(s), line_(line) { settle::add(this); }
  ~Interrupts() override { settle::remove(this); }
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  // INTSTS |= bits, then update().
  void raise(uint32_t intsts_bits);
  // After INTSTS's write-1-to-clear: the bits raised at this instant are
  // set again, then update().
  void after_w1c();
  // Sets QP qpn's bit in the bank at GCSR offset bank_off.
  void bank_set(uint32_t bank_off, uint32_t qpn) { s_.regs.bank_set(bank_off, qpn); }
  // rnic_intr = (INTSTS & INTEN) != 0 (after a write of INTSTS or INTEN
  // too), evaluated at the instant's next settled point.
  void update();

  // settle::Client: the level evaluated.
  bool wants() const override { return pending_; }
  bool grant() override;

 private:
  ErnicShared& s_;
  IntrLine& line_;
  bool level_ = false;
  bool pending_ = false;
  uint64_t raised_ps_ = ~uint64_t(0);  // the instant of raised_bits_
  uint32_t raised_bits_ = 0;          // bits raised at raised_ps_
};

}  // namespace ernic
