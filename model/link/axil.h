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
//
// The five channels are driven as AXI4-Lite signals (AW/W/B/AR/R VALID and
// READY, AWADDR, WDATA, WSTRB 0xF, BRESP/RRESP OKAY, ARADDR, RDATA) and
// checked by an AXI4-Lite protocol monitor (<scope>, model/monitor). With
// randomised handshakes (`handshake_random`) the bridge raises AWVALID,
// WVALID (independently) and ARVALID late and drops BREADY/RREADY at random
// edges, and the slave drops AWREADY/WREADY/ARREADY at random edges and
// raises BVALID/RVALID late (streams <scope>.<signal>); the write reaches
// the register file at the edge where the later of AW and W is taken, a
// read takes its value where RVALID rises. Unrandomised, the timing is the
// one above.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>

#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

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
// bytes; returns when it has left (PcieLink::send). issuer: the host thread
// that issued it (AxiLitePort::read/write: 0 the steps' or a bridge host's,
// 1 the built-in host's interrupt thread), for the order of requests that
// reach the link at one instant (model/sim/instant_order.h); 0 for
// completions.
using MmioLink = std::function<uint64_t(bool to_nic, uint64_t ready_ps, uint32_t payload, uint32_t issuer)>;

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
    v_wvalid_ = ctx.var(scope, "wvalid", 1);
    v_awready_ = ctx.var(scope, "awready", 1, 1);
    v_wready_ = ctx.var(scope, "wready", 1, 1);
    v_bready_ = ctx.var(scope, "bready", 1, 1);
    v_arready_ = ctx.var(scope, "arready", 1, 1);
    v_rready_ = ctx.var(scope, "rready", 1, 1);
    sig_.awready = sig_.wready = sig_.bready = sig_.arready = sig_.rready = true;  // idle: ready
    shown_ = sig_;
    mon_ = &ctx.protocol.axil(scope, clk.name(), clk.period_ps());
    using K = monitor::HandshakeRandomizer::Kind;
    rnd_awvalid_ = ctx.protocol.stall(scope + ".awvalid", K::valid);
    rnd_wvalid_ = ctx.protocol.stall(scope + ".wvalid", K::valid);
    rnd_arvalid_ = ctx.protocol.stall(scope + ".arvalid", K::valid);
    rnd_bready_ = ctx.protocol.stall(scope + ".bready", K::ready);
    rnd_rready_ = ctx.protocol.stall(scope + ".rready", K::ready);
    rnd_awready_ = ctx.protocol.stall(scope + ".awready", K::ready);
    rnd_wready_ = ctx.protocol.stall(scope + ".wready", K::ready);
    rnd_arready_ = ctx.protocol.stall(scope + ".arready", K::ready);
    rnd_bvalid_ = ctx.protocol.stall(scope + ".bvalid", K::valid);
    rnd_rvalid_ = ctx.protocol.stall(scope + ".rvalid", K::valid);
    SC_THREAD(slave_thread);
  }

  // Posted: returns at once; the write reaches the slave later, in order.
  // issuer: which host thread issues it (MmioLink).
  void write(uint32_t addr, uint32_t data, uint32_t issuer = 0) {
    q_.push_back({arrival(4, issuer), true, addr, data, nullptr, nullptr, nullptr, nullptr});
    ++posted_;
    ev_.notify(sc_core::SC_ZERO_TIME);
  }

  uint32_t read(uint32_t addr, uint32_t issuer = 0) {
    bool done = false;
    uint32_t v = 0;
    uint64_t ready = 0;
    sc_core::sc_event got;
    q_.push_back({arrival(0, issuer), false, addr, 0, &done, &v, &ready, &got});
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
  uint64_t arrival(uint32_t payload, uint32_t issuer) {
    const uint64_t now = ClockDomain::now_ps();
    uint64_t t = link_ ? link_(true, now, payload, issuer) : now;
    t += uint64_t(t_.mmio_latency_ns) * 1000;
    last_arrival_ = std::max(last_arrival_, t);  // in order
    return last_arrival_;
  }
  // The signals from this core edge on (sampled at the next edge): the
  // waveform variables that change, and the monitor.
  void drive(const monitor::AxilSample& n) {
    monitor::AxilSample& o = shown_;
    if (n.awvalid != o.awvalid) ctx_.set(v_awvalid_, n.awvalid);
    if (n.awaddr != o.awaddr) ctx_.set(v_awaddr_, n.awaddr);
    if (n.wvalid != o.wvalid) ctx_.set(v_wvalid_, n.wvalid);
    if (n.wdata != o.wdata) ctx_.set(v_wdata_, n.wdata);
    if (n.awready != o.awready) ctx_.set(v_awready_, n.awready);
    if (n.wready != o.wready) ctx_.set(v_wready_, n.wready);
    if (n.bvalid != o.bvalid) ctx_.set(v_bvalid_, n.bvalid);
    if (n.bready != o.bready) ctx_.set(v_bready_, n.bready);
    if (n.arvalid != o.arvalid) ctx_.set(v_arvalid_, n.arvalid);
    if (n.araddr != o.araddr) ctx_.set(v_araddr_, n.araddr);
    if (n.arready != o.arready) ctx_.set(v_arready_, n.arready);
    if (n.rvalid != o.rvalid) ctx_.set(v_rvalid_, n.rvalid);
    if (n.rdata != o.rdata) ctx_.set(v_rdata_, n.rdata);
    if (n.rready != o.rready) ctx_.set(v_rready_, n.rready);
    o = n;
    mon_->sample(clk_.cycle() + 1, n);
  }
  void edge() { sc_core::wait(clk_.period()); }
  void slave_thread() {
    monitor::AxilSample& s = sig_;
    for (;;) {
      while (q_.empty()) sc_core::wait(ev_);
      const Op op = q_.front();
      const uint64_t now = ClockDomain::now_ps();
      if (op.t_ps > now) sc_core::wait(ps(op.t_ps - now));
      clk_.sync();
      if (op.write) {
        // AW and W, each raised after the bridge's (random) delay, each
        // taken where the slave is ready.
        uint32_t aw_wait = rnd_awvalid_.hold(), w_wait = rnd_wvalid_.hold();
        bool aw_done = false, w_done = false;
        s.awaddr = op.addr;
        s.wdata = op.data;
        s.wstrb = 0xF;
        while (!(aw_done && w_done)) {
          s.awvalid = !aw_done && aw_wait == 0;
          s.wvalid = !w_done && w_wait == 0;
          s.awready = !(s.awvalid && rnd_awready_());
          s.wready = !(s.wvalid && rnd_wready_());
          drive(s);
          edge();  // the handshake edge(s)
          if (s.awvalid) aw_done = s.awready; else if (!aw_done) --aw_wait;
          if (s.wvalid) w_done = s.wready; else if (!w_done) --w_wait;
        }
        // AW and W are taken: their VALIDs drop at once, also when the
        // register file makes the write wait (an arbiter, axil_mux.h).
        s.awvalid = s.wvalid = false;
        s.awready = s.wready = true;
        drive(s);
        target_.axil_write(op.addr, op.data);
        ctx_.bump();
        ++writes_;
        // B, raised after the slave's (random) delay, until the bridge takes it.
        uint32_t b_wait = rnd_bvalid_.hold();
        for (;;) {
          s.bvalid = b_wait == 0;
          s.bresp = 0;  // OKAY: the register file decodes its whole window
          s.bready = !(s.bvalid && rnd_bready_());
          drive(s);
          edge();
          if (s.bvalid && s.bready) break;
          if (!s.bvalid) --b_wait;
        }
        s.bvalid = false;
        s.bready = true;
        drive(s);
        q_.pop_front();
        continue;
      }
      uint32_t ar_wait = rnd_arvalid_.hold();
      s.araddr = op.addr;
      for (;;) {
        s.arvalid = ar_wait == 0;
        s.arready = !(s.arvalid && rnd_arready_());
        drive(s);
        edge();  // AR handshake edge
        if (s.arvalid && s.arready) break;
        if (!s.arvalid) --ar_wait;
      }
      s.arvalid = false;
      s.arready = true;
      drive(s);
      if (t_.read_wait_cycles) sc_core::wait(clk_.cycles(t_.read_wait_cycles));
      if (const uint32_t late = rnd_rvalid_.hold()) sc_core::wait(clk_.cycles(late));
      const uint32_t v = target_.axil_read(op.addr);
      ctx_.bump();
      ++reads_;
      s.rvalid = true;
      s.rdata = v;
      s.rresp = 0;
      for (;;) {
        s.rready = !rnd_rready_();
        drive(s);
        edge();  // R accepted where RREADY is high
        if (s.rready) break;
      }
      s.rvalid = false;
      s.rready = true;
      drive(s);
      q_.pop_front();
      // The completion goes back up the link; the CPU has it after the flight.
      const uint64_t t0 = ClockDomain::now_ps();
      uint64_t back = link_ ? link_(false, t0, 4, 0) : t0;
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
  int v_wvalid_, v_awready_, v_wready_, v_bready_, v_arready_, v_rready_;
  monitor::AxilMonitor* mon_ = nullptr;
  // The bridge's (master's) and the slave's randomised handshake signals.
  monitor::HandshakeStall rnd_awvalid_, rnd_wvalid_, rnd_arvalid_, rnd_bready_, rnd_rready_;
  monitor::HandshakeStall rnd_awready_, rnd_wready_, rnd_arready_, rnd_bvalid_, rnd_rvalid_;
  monitor::AxilSample sig_, shown_;  // driven now; last shown in the waveform
};

}  // namespace ernic
