// model/datapath: the C++ reference model of the QP-setup offload
// (rtl/qp_setup/qp_setup_fsm.sv; register map, states and status codes in
// qp_setup_regs.h).
//
// Transaction level: the same register file, the same checks in the same
// order, the same status codes and the same ERNIC register accesses (read
// or write, address, data) in the same order as the RTL, but no cycles. A
// command runs to its end in execute(), which performs its ERNIC accesses
// through an Env and asks the Env whether the CMAC link comes up within
// LINK_TIMEOUT cycles. tb/rtl/test_qp_setup_rtl.cpp holds the RTL to it on a
// table of register programs; model/qp_setup/qp_setup_fsm.h runs it in a
// simulation in place of the RTL (scenario `datapath: model`).
//
// Timing (what the model leaves out, stated for comparisons): the RTL
// synchronises cmac_link_up with two flops, so it sees the link 2 cycles
// after it rises; a link that comes up within 2 cycles of the timeout may
// time out in the RTL and not here. Cycle counts of a command are the
// wrapper's business (qp_setup_fsm.h gives the bound).
//
// Plain C++17, no SystemC. Not thread-safe.
#pragma once
#include <cstdint>
#include <vector>

#include "model/datapath/qp_setup_regs.h"

namespace ernic::qps {

class QpSetupModel {
 public:
  // What a command needs from outside.
  struct Env {
    virtual ~Env() = default;
    // ERNIC register accesses through the block's AXI4-Lite master.
    virtual uint32_t ernic_read(uint32_t addr) = 0;
    virtual void ernic_write(uint32_t addr, uint32_t data) = 0;
    // CMAC_INIT: true if cmac_link_up is (or comes) up within
    // timeout_cycles; false: the link timed out.
    virtual bool wait_link(uint32_t timeout_cycles) = 0;
    // The state changes (called on entry to each state, IDLE/READY at the end).
    virtual void enter(State s) { (void)s; }
  };

  // pool_max, link_timeout_reset and max_qpn_reset: the RTL's parameters.
  explicit QpSetupModel(uint32_t pool_max = kPoolMax, uint32_t link_timeout_reset = kLinkTimeoutReset,
                        uint16_t max_qpn_reset = kMaxQpnReset);
  void reset();

  // AXI4-Lite slave. wstrb: byte enables. Returns true when the write
  // started a command (CMD bit 0 while not busy): the caller then runs
  // execute().
  bool write(uint32_t off, uint32_t data, uint32_t wstrb = 0xF);
  uint32_t read(uint32_t off) const;

  // Runs the started command to its end; returns its status code.
  uint8_t execute(Env& env);

  State state() const { return st_; }
  uint8_t status() const { return code_; }
  bool busy() const { return st_ == State::RegCheck || st_ == State::ResAlloc || st_ == State::CmacInit; }
  uint32_t pool_max() const { return pool_max_; }

 private:
  struct Slot { bool used = false; uint16_t qpn = 0; };
  uint16_t qpn() const { return uint16_t(qpctrl_); }
  uint8_t opcode() const { return uint8_t(qpctrl_ >> 24); }
  int owner(uint16_t qpn) const;  // slot index or -1
  uint64_t slot_base(uint32_t idx) const;
  uint32_t qp_addr(uint32_t off) const;
  uint32_t g_addr(uint32_t off) const;
  void set_state(Env& env, State s);
  uint8_t finish(Env& env, uint8_t code, State s);
  uint8_t create(Env& env);
  uint8_t release(Env& env);

  uint32_t pool_max_, link_timeout_reset_;
  uint16_t max_qpn_reset_;
  // registers (the RTL's *_q)
  uint32_t qpctrl_ = 0, destqp_ = 0, rip_ = 0, udp_ = 0, mac_lsb_ = 0, mac_msb_ = 0, sq_psn_ = 0, exp_psn_ = 0;
  uint32_t link_timeout_ = 0, pd_ = 0, pool_base_lo_ = 0, pool_base_hi_ = 0, slot_bytes_ = 0, pool_count_ = 0;
  uint32_t qdepth_ = 0, qpconf_ = 0, advconf_ = 0, timeoutconf_ = 0, max_qpn_ = 0, layout4x_ = 0, info_qpn_ = 0;
  State st_ = State::Idle;
  uint8_t code_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace ernic::qps
