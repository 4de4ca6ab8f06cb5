// model/link: AXI4-Lite between the host (PCIe MMIO) and the ERNIC register
// file (PG332 s_axi_lite_*: 32-bit data, synchronous to the core clock).
// The host driver reaches the NIC only through AxiLitePort; the NIC
// implements AxiLiteTarget.
//
// The host's accesses are PCIe MMIO (model/dma/pcie.h, reached through the
// `link` hook so that the driver's headers stay apart from the NIC's):
//   write: a posted MWr. The CPU does not wait: write() returns at once.
//          The TLP takes its turn on the link's host->device direction and
//          reaches the NIC's bridge mmio_write_latency_ns after it left;
//          there the AXI4-Lite AW+W handshake takes one edge (the slave is
//          always ready) and the B response the next.
//   read:  non-posted: MRd down (the same flight), the AR handshake, R data
//          read_wait_cycles later, then the CplD back up the link with the
//          same flight time; read() returns the value then. A read does
//          not pass the posted writes before it (PCIe ordering).
// Accesses reach the slave one at a time, in issue order (one thread of
// this port performs them). Threads of one driver share the port.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
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
  uint32_t mmio_latency_ns = 0;   // one-way MMIO flight, host -> NIC (PcieParams::mmio_write_latency_ns)
  uint32_t read_wait_cycles = 1;  // AR accepted -> R valid
};

// Sends one MMIO TLP on the node's PCIe link: to_nic (host->device, which
// the MMIO writes and read requests share with the DMA read completions) or
// back (device->host: a read completion), ready at ready_ps, with `payload`
// bytes; returns when it has left (PcieLink::send).
using MmioLink = std::function<uint64_t(bool to_nic, uint64_t ready_ps, uint32_t payload)>;

class AxiLitePort : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(AxiLitePort);
  // link: empty = no link occupancy, only the flight time.
  AxiLitePort(sc_core::sc_module_name name, const ClockDomain& clk, AxiLiteTarget& target, SimContext& ctx,
              const std::string& scope, AxiLiteTiming t = {}, MmioLink link = {})
      : sc_module(name), clk_(clk), target_(target), ctx_(ctx), t_(t), link_(std::move(link)) {
    v_awvalid_ = ctx.var(scope, "awvalid", 1);
    v_awaddr_ = ctx.var(scope, "awaddr", 32);
    v_wdata_ = ctx.var(scope, "wdata", 32);
    v_bvalid_ = ctx.var(scope, "bvalid", 1);
    v_arvalid_ = ctx.var(scope, "arvalid", 1);
    v_araddr_ = ctx.var(scope, "araddr", 32);
    v_rvalid_ = ctx.var(scope, "rvalid", 1);
    v_rdata_ = ctx.var(scope, "rdata", 32);
    SC_THREAD(slave_thread);
  }

  // Posted: returns at once; the write reaches the slave later, in order.
  void write(uint32_t addr, uint32_t data) {
    q_.push_back({arrival(4), true, addr, data, nullptr, nullptr, nullptr, nullptr});
    ++posted_;
    ev_.notify(sc_core::SC_ZERO_TIME);
  }

  uint32_t read(uint32_t addr) {
    bool done = false;
    uint32_t v = 0;
    uint64_t ready = 0;
    sc_core::sc_event got;
    q_.push_back({arrival(0), false, addr, 0, &done, &v, &ready, &got});
    ev_.notify(sc_core::SC_ZERO_TIME);
    while (!done) sc_core::wait(got);
    const uint64_t now = ClockDomain::now_ps();
    if (ready > now) sc_core::wait(ps(ready - now));
    return v;
  }

  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }
  // Writes issued but not yet at the slave.
  uint64_t writes_in_flight() const { return posted_ - writes_; }

 private:
  struct Op {
    uint64_t t_ps;       // when the TLP reaches the NIC's bridge
    bool write;
    uint32_t addr, data;
    bool* done;              // reads: the caller's result
    uint32_t* value;
    uint64_t* ready_ps;      // when the completion is back at the CPU
    sc_core::sc_event* got;
  };
  uint64_t arrival(uint32_t payload) {
    const uint64_t now = ClockDomain::now_ps();
    uint64_t t = link_ ? link_(true, now, payload) : now;
    t += uint64_t(t_.mmio_latency_ns) * 1000;
    last_arrival_ = std::max(last_arrival_, t);  // in order
    return last_arrival_;
  }
  void slave_thread() {
    for (;;) {
      while (q_.empty()) sc_core::wait(ev_);
      const Op op = q_.front();
      const uint64_t now = ClockDomain::now_ps();
      if (op.t_ps > now) sc_core::wait(ps(op.t_ps - now));
      clk_.sync();
      if (op.write) {
        ctx_.set(v_awvalid_, 1);
        ctx_.set(v_awaddr_, op.addr);
        ctx_.set(v_wdata_, op.data);
        sc_core::wait(clk_.period());  // handshake edge
        target_.axil_write(op.addr, op.data);
        ctx_.bump();
        ++writes_;
        ctx_.set(v_awvalid_, 0);
        ctx_.set(v_bvalid_, 1);
        sc_core::wait(clk_.period());  // B accepted
        ctx_.set(v_bvalid_, 0);
        q_.pop_front();
        continue;
      }
      ctx_.set(v_arvalid_, 1);
      ctx_.set(v_araddr_, op.addr);
      sc_core::wait(clk_.period());  // AR handshake edge
      ctx_.set(v_arvalid_, 0);
      if (t_.read_wait_cycles) sc_core::wait(clk_.cycles(t_.read_wait_cycles));
      const uint32_t v = target_.axil_read(op.addr);
      ctx_.bump();
      ++reads_;
      ctx_.set(v_rvalid_, 1);
      ctx_.set(v_rdata_, v);
      sc_core::wait(clk_.period());  // R accepted
      ctx_.set(v_rvalid_, 0);
      q_.pop_front();
      // The completion goes back up the link; the CPU has it after the flight.
      const uint64_t t0 = ClockDomain::now_ps();
      uint64_t back = link_ ? link_(false, t0, 4) : t0;
      back += uint64_t(t_.mmio_latency_ns) * 1000;
      *op.value = v;
      *op.ready_ps = back;
      *op.done = true;
      op.got->notify(sc_core::SC_ZERO_TIME);
    }
  }
  const ClockDomain& clk_;
  AxiLiteTarget& target_;
  SimContext& ctx_;
  AxiLiteTiming t_;
  MmioLink link_;
  std::deque<Op> q_;
  sc_core::sc_event ev_;
  uint64_t last_arrival_ = 0;
  uint64_t reads_ = 0, writes_ = 0, posted_ = 0;
  int v_awvalid_, v_awaddr_, v_wdata_, v_bvalid_, v_arvalid_, v_araddr_, v_rvalid_, v_rdata_;
};

}  // namespace ernic
