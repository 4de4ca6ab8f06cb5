// model/bridge/client: the driver's HostBus (model/host/host_bus.h) over the
// bridge's C library (ernic_bridge.h), so a program outside the simulator
// runs the one driver (model/host/driver.h) the simulator's built-in host
// runs:
//   mmio_read32 / mmio_write32  ernic_read32 / ernic_write32 (posted)
//   mem_read / mem_write        the program's own memory (ernic_dma_ptr)
//   alloc                       ernic_dma_alloc
//   now_ps                      ernic_now_ps
//   sleep_until(deadline, on)   ernic_wait_until: runs the simulation until
//                               the deadline, the NIC's interrupt (served
//                               here: Driver::service_interrupt until INTSTS
//                               reads 0) or, with kMemory in `on`, the NIC's
//                               first DMA write into memory; returns on a
//                               signal() of a kind in `on`, memory written
//                               (kMemory), or the deadline.
// An interrupt that arrives while a register read waits is served when the
// read returns (the built-in host's interrupt thread runs while its driver
// waits for a register); never inside the handler itself.
// A program has no FPGA user logic: has_sideband() and has_rx_streams() are
// false (the driver learns of arrivals from the RQ write-pointer mirror and
// cannot see immediate data). A bridge error (ernic_error) becomes a
// BridgeBusError carrying the library's message; the bus never returns a
// value read from a dead session.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/bridge/client/ernic_bridge.h"
#include "model/host/host_bus.h"

namespace ernic::bridge {

class BridgeBusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BridgeBus : public host::HostBus {
 public:
  // b stays the caller's (it closes it after the bus and driver are gone).
  explicit BridgeBus(ernic_bridge* b);
  // The driver whose interrupt handler runs when the NIC interrupts during
  // a sleep (nullptr: interrupts are consumed and left alone).
  void attach(host::Driver* d) { driver_ = d; }

  uint32_t mmio_read32(uint32_t offset) override;
  void mmio_write32(uint32_t offset, uint32_t value) override;
  void mem_read(uint64_t bus, uint8_t* dst, uint64_t len) override;
  void mem_write(uint64_t bus, const uint8_t* src, uint64_t len) override;
  uint64_t alloc(uint64_t bytes, uint64_t align) override;
  uint64_t mem_size() const override;
  bool mem_valid(uint64_t bus, uint64_t len) const override;  // inside the DMA arena
  uint64_t now_ps() const override;
  void sleep_until(uint64_t deadline_ps, unsigned on) override;
  void signal(Wake what) override { signals_ |= unsigned(what); }
  void report_error(const std::string& what) override;

  // Errors the driver reported from work it did on its own (an interrupt's),
  // oldest first; the verbs layer fails its next call that reaches the
  // driver with each one, once (ernic_verbs_impl.h: take_reported).
  const std::vector<std::string>& reported_errors() const { return reported_; }
  // Counters for tests and the curious.
  uint64_t interrupts_served() const { return irq_passes_; }
  uint64_t memory_wakes() const { return mem_wakes_; }

  // One SYNC runs at most this much simulated time; a longer sleep is a
  // chain of them (the simulator idles cheaply; a program never parks the
  // simulator on a deadline far past its scenario's limits in one message).
  static constexpr uint64_t kMaxSyncPs = 10'000'000'000ull;  // 10 ms

 private:
  [[noreturn]] void fail(const char* call) const;
  void check(const char* call) const {
    if (ernic_error(b_)) fail(call);
  }
  void serve_interrupts();
  bool unserved_interrupt() const;  // an interrupt message not yet taken by a wait
  void taken_irq();                 // a wait took every interrupt received so far

  ernic_bridge* b_;
  host::Driver* driver_ = nullptr;
  unsigned signals_ = 0;        // signal()s not yet returned by a sleep
  bool in_service_ = false;     // inside Driver::service_interrupt (a sleep there serves none)
  bool irq_owed_ = false;       // an interrupt came while in_service_
  uint64_t irq_passes_ = 0, mem_wakes_ = 0;
  uint64_t irqs_taken_ = 0;     // the library's interrupt count when a wait last took them
  std::vector<std::string> reported_;
};

}  // namespace ernic::bridge
