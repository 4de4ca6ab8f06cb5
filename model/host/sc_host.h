// model/host: the node's built-in host inside the simulator: the HostBus
// (host_bus.h) the driver runs on, as a SystemC module. Register accesses
// are timed AXI4-Lite transactions on the node's port (model/link/axil.h),
// memory is the node's HostMemory (whose writes wake kMemory sleepers),
// time is SystemC's, and the interrupt thread calls
// Driver::service_interrupt() while rnic_intr is high. The NIC's RX streams
// (rx_pkt_hndler_o_rq_db, ieth_immdt) and CQ doorbell count reach the
// driver through the sinks System wires; the HW-handshake sideband is the
// node's SidebandPort (the driver plays the FPGA user logic).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <systemc>

#include "model/host/driver.h"
#include "model/host/host_bus.h"
#include "model/host/host_memory.h"
#include "model/link/axil.h"
#include "model/link/sideband.h"
#include "model/sim/clock.h"
#include "model/sim/deadline.h"
#include "model/sim/sim_context.h"

namespace ernic::host {

class ScHost : public sc_core::sc_module, public HostBus {
 public:
  SC_HAS_PROCESS(ScHost);
  // The driver is built here over this bus (cfg as Driver's).
  ScHost(sc_core::sc_module_name name, const ClockDomain& core, AxiLitePort& axil, HostMemory& mem,
         const sc_core::sc_signal_in_if<bool>& intr, SimContext& ctx, DriverConfig cfg);

  Driver& driver() { return *driver_; }
  void attach_sideband(SidebandPort* p) { sideband_ = p; }
  // The event a kind of signal() notifies (e.g. kEstablished for steps
  // waiting for a connection).
  const sc_core::sc_event& event(Wake w) const { return events_[index(w)]; }

  // HostBus
  // The interrupt thread's MMIO is issuer 1 (AxiLitePort: the order of one
  // instant's requests on the PCIe link), the steps' 0.
  uint32_t mmio_read32(uint32_t offset) override { return axil_.read(offset, issuer()); }
  void mmio_write32(uint32_t offset, uint32_t value) override { axil_.write(offset, value, issuer()); }
  void mem_read(uint64_t bus, uint8_t* dst, uint64_t len) override { mem_.read(bus, dst, len); }
  void mem_write(uint64_t bus, const uint8_t* src, uint64_t len) override { mem_.write(bus, src, len); }
  uint64_t alloc(uint64_t bytes, uint64_t align) override;
  uint64_t mem_size() const override { return mem_.size(); }
  uint64_t now_ps() const override { return sc_core::sc_time_stamp().value(); }
  void sleep_until(uint64_t deadline_ps, unsigned on) override;
  void signal(Wake what) override { events_[index(what)].notify(sc_core::SC_ZERO_TIME); }
  bool has_sideband() const override { return sideband_ != nullptr; }
  void sq_pidb(uint32_t qpn, uint32_t pi) override { sideband_->sq_pidb(qpn, pi); }
  void rq_cidb(uint32_t qpn, uint32_t ci) override { sideband_->rq_cidb(qpn, ci); }
  bool has_rx_streams() const override { return true; }
  void log_state(uint32_t qpn, const char* what, const char* value) override;
  void report_error(const std::string& what) override;

 private:
  static constexpr size_t kEvents = 5;  // one per Wake bit
  static size_t index(Wake w);
  void irq_thread();
  uint32_t issuer() const { return sc_core::sc_get_current_process_handle() == irq_ ? 1 : 0; }

  const ClockDomain& core_;
  AxiLitePort& axil_;
  HostMemory& mem_;
  const sc_core::sc_signal_in_if<bool>& intr_;
  SimContext& ctx_;
  std::string node_;
  SidebandPort* sideband_ = nullptr;
  uint64_t brk_ = 0x100000;  // bump allocator (bus addresses); the first MiB stays unused
  std::array<sc_core::sc_event, kEvents> events_;
  Deadline deadline_;  // sleep_until's timeout
  std::unique_ptr<Driver> driver_;
  sc_core::sc_process_handle irq_;
};

}  // namespace ernic::host
