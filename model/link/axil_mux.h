// model/link: AXI4-Lite interconnect pieces around ERNIC's register file
// when a node has a second AXI4-Lite block (the QP-setup offload,
// model/qp_setup/qp_setup_fsm.h):
//
//   host (PCIe MMIO, AxiLitePort) --> AxilDecoder --+--> AxilArbiter --> ERNIC s_axi_lite
//                                                   |         ^
//                                                   |         +-- QP-setup FSM's master
//                                                   +--> QP-setup FSM's slave window
//
// AxilDecoder: one MMIO space (BAR0), split by address: [base, base + size)
// goes to the second target with the address made relative to base,
// everything else to the first, unchanged. Accesses keep their order (one
// AxiLitePort performs them one at a time).
//
// AxilArbiter: ERNIC's slave has two masters, the MMIO path and the FSM.
// ERNIC's register file takes one access a core cycle. The FSM's master
// claims a cycle ahead (claim(), half a cycle before the core edge at which
// its access is performed), so it wins a tie; an MMIO access that finds its
// cycle claimed waits for the next core edge (and again if that is claimed
// too). The order of simultaneous SystemC processes therefore never
// decides who goes first.
#pragma once
#include <cstdint>
#include <systemc>

#include "model/link/axil.h"
#include "model/sim/clock.h"

namespace ernic {

class AxilDecoder : public AxiLiteTarget {
 public:
  AxilDecoder(AxiLiteTarget& first, AxiLiteTarget& second, uint32_t base, uint32_t size)
      : first_(first), second_(second), base_(base), size_(size) {}
  uint32_t axil_read(uint32_t addr) override {
    return hit(addr) ? second_.axil_read(addr - base_) : first_.axil_read(addr);
  }
  void axil_write(uint32_t addr, uint32_t data) override {
    if (hit(addr)) second_.axil_write(addr - base_, data);
    else first_.axil_write(addr, data);
  }

 private:
  bool hit(uint32_t a) const { return a >= base_ && a - base_ < size_; }
  AxiLiteTarget& first_;
  AxiLiteTarget& second_;
  uint32_t base_, size_;
};

class AxilArbiter : public AxiLiteTarget {
 public:
  AxilArbiter(const ClockDomain& clk, AxiLiteTarget& slave) : clk_(clk), slave_(slave) {}

  // The MMIO path (called by AxiLitePort at a core edge, from a thread).
  uint32_t axil_read(uint32_t addr) override {
    wait_turn();
    return slave_.axil_read(addr);
  }
  void axil_write(uint32_t addr, uint32_t data) override {
    wait_turn();
    slave_.axil_write(addr, data);
  }

  // The FSM: claims core cycle `cycle` for an access it will perform at
  // that cycle's edge. Returns false if the cycle is taken already.
  bool claim(uint64_t cycle) {
    if (claimed_ == cycle || used_ == cycle) return false;
    claimed_ = cycle;
    return true;
  }
  AxiLiteTarget& slave() { return slave_; }
  uint64_t mmio_waits() const { return mmio_waits_; }

 private:
  void wait_turn() {
    while (claimed_ == clk_.cycle()) {
      ++mmio_waits_;
      sc_core::wait(clk_.period());
    }
    used_ = clk_.cycle();
  }
  const ClockDomain& clk_;
  AxiLiteTarget& slave_;
  uint64_t claimed_ = ~uint64_t(0), used_ = ~uint64_t(0);
  uint64_t mmio_waits_ = 0;
};

}  // namespace ernic
