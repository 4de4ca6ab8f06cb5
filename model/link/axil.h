// model/link: AXI4-Lite between the host (PCIe MMIO) and the ERNIC register
// file (PG332 s_axi_lite_*: 32-bit data, synchronous to the core clock).
// The host driver reaches the NIC only through AxiLitePort; the NIC
// implements AxiLiteTarget. A transaction is timed on the core clock:
//   write: posted MMIO latency (PCIe, parameter), AW+W handshake on one edge
//          (the slave is always ready), B response on the next edge;
//   read:  MMIO latency, AR handshake, R data read_wait_cycles later, then
//          the completion back to the host (same MMIO latency).
// One transaction at a time per port (threads of one driver share it).
#pragma once
#include <cstdint>
#include <string>
#include <systemc>

#include "model/system/clock.h"
#include "model/system/sim_context.h"

namespace ernic {

class AxiLiteTarget {
 public:
  virtual ~AxiLiteTarget() = default;
  // Called on the core-clock edge at which the handshake completes.
  virtual uint32_t axil_read(uint32_t addr) = 0;
  virtual void axil_write(uint32_t addr, uint32_t data) = 0;
};

struct AxiLiteTiming {
  uint32_t mmio_latency_ns = 0;   // PCIe posted-write / read-request flight time (issue 5 models PCIe)
  uint32_t read_wait_cycles = 1;  // AR accepted -> R valid
};

class AxiLitePort {
 public:
  AxiLitePort(const ClockDomain& clk, AxiLiteTarget& target, SimContext& ctx,
              const std::string& scope, AxiLiteTiming t = {})
      : clk_(clk), target_(target), ctx_(ctx), t_(t) {
    v_awvalid_ = ctx.var(scope, "awvalid", 1);
    v_awaddr_ = ctx.var(scope, "awaddr", 32);
    v_wdata_ = ctx.var(scope, "wdata", 32);
    v_bvalid_ = ctx.var(scope, "bvalid", 1);
    v_arvalid_ = ctx.var(scope, "arvalid", 1);
    v_araddr_ = ctx.var(scope, "araddr", 32);
    v_rvalid_ = ctx.var(scope, "rvalid", 1);
    v_rdata_ = ctx.var(scope, "rdata", 32);
  }

  void write(uint32_t addr, uint32_t data) {
    lock_.lock();
    if (t_.mmio_latency_ns) sc_core::wait(sc_core::sc_time(t_.mmio_latency_ns, sc_core::SC_NS));
    clk_.sync();
    ctx_.set(v_awvalid_, 1);
    ctx_.set(v_awaddr_, addr);
    ctx_.set(v_wdata_, data);
    sc_core::wait(clk_.period());  // handshake edge
    target_.axil_write(addr, data);
    ctx_.bump();
    ++writes_;
    ctx_.set(v_awvalid_, 0);
    ctx_.set(v_bvalid_, 1);
    sc_core::wait(clk_.period());  // B accepted
    ctx_.set(v_bvalid_, 0);
    lock_.unlock();
  }

  uint32_t read(uint32_t addr) {
    lock_.lock();
    if (t_.mmio_latency_ns) sc_core::wait(sc_core::sc_time(t_.mmio_latency_ns, sc_core::SC_NS));
    clk_.sync();
    ctx_.set(v_arvalid_, 1);
    ctx_.set(v_araddr_, addr);
    sc_core::wait(clk_.period());  // AR handshake edge
    ctx_.set(v_arvalid_, 0);
    if (t_.read_wait_cycles) sc_core::wait(clk_.cycles(t_.read_wait_cycles));
    uint32_t v = target_.axil_read(addr);
    ctx_.bump();
    ++reads_;
    ctx_.set(v_rvalid_, 1);
    ctx_.set(v_rdata_, v);
    sc_core::wait(clk_.period());  // R accepted
    ctx_.set(v_rvalid_, 0);
    if (t_.mmio_latency_ns) sc_core::wait(sc_core::sc_time(t_.mmio_latency_ns, sc_core::SC_NS));
    lock_.unlock();
    return v;
  }

  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }

 private:
  const ClockDomain& clk_;
  AxiLiteTarget& target_;
  SimContext& ctx_;
  AxiLiteTiming t_;
  sc_core::sc_mutex lock_;
  uint64_t reads_ = 0, writes_ = 0;
  int v_awvalid_, v_awaddr_, v_wdata_, v_bvalid_, v_arvalid_, v_araddr_, v_rvalid_, v_rdata_;
};

}  // namespace ernic
