// model/host: what the driver needs from the machine it runs on, and
// nothing more: the NIC's register window (BAR0, PG332 offsets), host
// memory (bus addresses), simulated time, and a way to sleep until
// something the driver waits for happens. Plain C++ (no SystemC), so the one
// driver (driver.h) runs in two places (issue 15, "one driver
// implementation"):
//   - inside the simulator, as the node's built-in host: ScHost
//     (sc_host.h), a SystemC module over the node's AXI4-Lite port, its
//     HostMemory and rnic_intr, whose interrupt thread calls
//     Driver::service_interrupt();
//   - in a program outside it, over the bridge (model/bridge/client): the
//     same calls become SimBricks PCIe messages; interrupts are served
//     inside sleep().
// Times are simulated picoseconds. Every call may throw (DriverError or the
// transport's error); the driver lets it pass.
#pragma once
#include <cstdint>
#include <string>

namespace ernic::host {

class Driver;

class HostBus {
 public:
  virtual ~HostBus() = default;

  // --- the NIC's registers (AXI4-Lite through PCIe BAR0) ---
  virtual uint32_t mmio_read32(uint32_t offset) = 0;
  virtual void mmio_write32(uint32_t offset, uint32_t value) = 0;  // posted

  // --- host memory, by bus address ---
  virtual void mem_read(uint64_t bus, uint8_t* dst, uint64_t len) = 0;
  virtual void mem_write(uint64_t bus, const uint8_t* src, uint64_t len) = 0;
  // DMA-able memory for the driver: bytes at a multiple of align (a power
  // of two). Returns 0 with no room; the driver names the failure.
  virtual uint64_t alloc(uint64_t bytes, uint64_t align) = 0;
  // Bytes of host memory (for messages).
  virtual uint64_t mem_size() const = 0;
  // Whether [bus, bus + len) is host memory the driver may use (the
  // simulator's: from 0; a program's: its DMA arena).
  virtual bool mem_valid(uint64_t bus, uint64_t len) const { return bus <= mem_size() && len <= mem_size() - bus; }

  // --- time ---
  virtual uint64_t now_ps() const = 0;

  // What a sleep may wake on. Sleeps may end early for other reasons (a
  // caller re-checks its condition) but never later than the deadline.
  enum Wake : unsigned {
    kNone = 0,
    kMemory = 1u << 0,        // the NIC wrote host memory
    kCmReply = 1u << 1,       // signal(): a ConnectReply / Reject arrived
    kDisconnect = 1u << 2,    // signal(): a DisconnectReply arrived
    kRx = 1u << 3,            // signal(): a receive-side event was queued
    kEstablished = 1u << 4,   // signal(): a connection reached RTS
  };
  static constexpr uint64_t kForever = ~uint64_t(0);
  // Sleep until deadline_ps (absolute), or earlier on one of `on`.
  virtual void sleep_until(uint64_t deadline_ps, unsigned on) = 0;
  // The driver's own events (kCmReply .. kEstablished) for sleepers.
  virtual void signal(Wake what) = 0;

  // --- PG332's HW-handshake sideband (i_qp_sq_pidb / i_qp_rq_cidb) ---
  // Only the simulator's FPGA user logic has it; a program's bus says no.
  virtual bool has_sideband() const { return false; }
  virtual void sq_pidb(uint32_t /*qpn*/, uint32_t /*pi*/) {}
  virtual void rq_cidb(uint32_t /*qpn*/, uint32_t /*ci*/) {}
  // True when the NIC's rx_pkt_hndler_o_rq_db and ieth_immdt streams reach
  // the driver (Driver::on_rq_doorbell, on_ieth): the simulator's user
  // logic. Otherwise the driver learns of arrivals from the RQ write-
  // pointer mirror (RQWPTRDBADDi) in host memory, and immediate data is not
  // visible: PG332 hands it only to the ieth_immdt AXI4-Stream.
  virtual bool has_rx_streams() const { return false; }

  // --- reporting ---
  // A driver state change for the transaction log (the simulator logs it;
  // a program's bus may ignore it). qpn 0: not a QP's.
  virtual void log_state(uint32_t /*qpn*/, const char* /*what*/, const char* /*value*/) {}
  // An error in work the driver did on its own (an interrupt's), which has
  // no caller to throw to.
  virtual void report_error(const std::string& what) = 0;
};

}  // namespace ernic::host
