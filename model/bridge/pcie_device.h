// model/bridge: a node's NIC as a SimBricks PCIe device (pcie_proto.h) for
// a host program in another process (issue 15; design.md "the bridge").
//
// The device: BAR0 = ERNIC's AXI4-Lite register space (PG332 offsets, the
// scenario's layout; 32-bit accesses at 4-byte-aligned offsets), rnic_intr
// = MSI-X vector 0 (or legacy INTx, as the host's DEVCTRL enables), the
// node's DMA masters reach host memory through device-to-host READ / WRITE
// messages (the PCIe link model with MPS / MRRS / latency stays in the
// simulator: it decides when; the program's memory decides what).
//
// Strict lock-step time (model/bridge/README.md): the simulator runs only
// while the program waits in a bridge call. serve() is a SystemC thread's
// loop that blocks the whole kernel while it waits for the program's next
// message, so simulated time stands still whatever the program does
// between calls, and the outputs do not depend on how the OS schedules it:
//   H2D READ         the AXI4-Lite read (its PCIe + AXI cost), READCOMP
//   H2D WRITE_POSTED the posted AXI4-Lite write (queued: costs the host no time)
//   H2D WRITE        the write, once it reached ERNIC; WRITECOMP
//   H2D DEVCTRL      interrupt mode
//   SYNC T           run until T (with kSyncUntilIrq: or the first interrupt
//                    the program has not seen; with kSyncUntilDmaWrite: or
//                    right after the first DMA WRITE it has not seen),
//                    answer SYNC at the time reached
//   TERMINATE        the program is done: serve() returns
// A message stamped later than now takes effect at its stamp.
//
// Refused (the run fails naming the cause; counted in stats()): a message
// of the wrong direction or unknown, BAR other than 0, offset outside BAR0
// or unaligned, length other than 4 (or 8 for two words), a completion that
// answers nothing, a peer that closes or goes silent past the wall timeout.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/bridge/channel.h"
#include "model/bridge/pcie_proto.h"
#include "model/host/host_memory.h"
#include "model/link/axil.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic::bridge {

class BridgeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DeviceConfig {
  std::string node;                  // for messages
  uint64_t bar0_bytes = 0x40000;     // ERNIC's register space (256 KiB)
  uint16_t vendor_id = 0x10EE;       // Xilinx/AMD
  uint16_t device_id = 0x9038;       // a placeholder for the ERNIC example design (PG332 names none)
};

// What crossed the bridge (the report's counters).
struct BridgeStats {
  uint64_t mmio_reads = 0, mmio_writes = 0, syncs = 0;
  uint64_t dma_reads = 0, dma_writes = 0, dma_read_bytes = 0, dma_write_bytes = 0;
  uint64_t interrupts = 0, refused = 0;
};

class PcieDevice : public sc_core::sc_module, public RemoteMemory {
 public:
  SC_HAS_PROCESS(PcieDevice);
  PcieDevice(sc_core::sc_module_name name, const ClockDomain& core, AxiLitePort& axil, HostMemory& mem,
             const sc_core::sc_signal_in_if<bool>& intr, SimContext& ctx, DeviceConfig cfg);
  ~PcieDevice() override;

  // The device intro this device sends (BAR0, MSI-X 1 vector, legacy).
  DevIntro intro() const;
  // Serves a connected program from the calling SystemC thread until it
  // sends TERMINATE (returns) or fails (throws BridgeError naming the
  // cause). The node's host memory is the program's while attached.
  // silence: the longest wall-clock wait for the program (kNoTimeout: none).
  void serve(Channel& ch, WallTimeout silence);
  const BridgeStats& stats() const { return stats_; }

  // RemoteMemory: the NIC's DMA, as device-to-host messages.
  void read(uint64_t addr, uint8_t* dst, uint64_t len) override;
  void write(uint64_t addr, const uint8_t* src, uint64_t len) override;
  std::string holder() const override { return "the program of node " + cfg_.node; }

 private:
  void on_intr();                       // SC_METHOD on rnic_intr
  Msg next_from_host();                 // held messages first, then the channel
  void send(const Msg& m);
  void mmio(const Msg& m);
  void sync(const Msg& m);
  [[noreturn]] void refuse(const std::string& why);
  uint32_t bar_addr(const Msg& m) const;  // validated register address (throws via refuse)
  bool attached(const char* what, uint64_t addr, uint64_t len);  // a session to DMA into, else a model error

  const ClockDomain& core_;
  AxiLitePort& axil_;
  HostMemory& mem_;
  const sc_core::sc_signal_in_if<bool>& intr_;
  SimContext& ctx_;
  DeviceConfig cfg_;
  Channel* ch_ = nullptr;               // while serving
  WallTimeout silence_ = kNoTimeout;    // serve()'s
  std::string dead_;                    // why the program can no longer be reached
  std::deque<Msg> held_;                // host messages that came while a DMA waited
  uint64_t next_req_ = 1;
  uint64_t ctrl_flags_ = kCtrlMsixEn;   // until DEVCTRL says otherwise
  bool intr_level_ = false;
  uint64_t irqs_sent_ = 0;
  uint64_t irqs_at_answer_ = 0;         // irqs_sent_ when the device last answered the program
  uint64_t dma_writes_sent_ = 0;        // DMA writes (whole write() calls) sent
  uint64_t dma_writes_at_answer_ = 0;   // dma_writes_sent_ when the device last answered the program
  std::deque<uint64_t> writes_open_;    // DMA writes sent, their WRITECOMP not yet in
  sc_core::sc_event irq_ev_;
  sc_core::sc_event dma_write_ev_;      // a DMA write was sent (kSyncUntilDmaWrite)
  BridgeStats stats_;
};

}  // namespace ernic::bridge
