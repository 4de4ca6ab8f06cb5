// model/bridge/client: the driver's HostBus over the bridge (bridge_bus.h).
#include "model/bridge/client/bridge_bus.h"

#include <cstdio>
#include <cstring>

#include "model/host/driver.h"

namespace ernic::bridge {
namespace {
std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}
// The interrupt handler's passes per interrupt before the bus gives up on a
// status that does not clear (it says so through report_error).
constexpr int kMaxPasses = 64;
}  // namespace

BridgeBus::BridgeBus(ernic_bridge* b) : b_(b) {
  if (!b_) throw BridgeBusError("BridgeBus: no bridge session");
}

void BridgeBus::fail(const char* call) const {
  const char* e = ernic_error(b_);
  throw BridgeBusError(std::string("bridge (") + call + "): " + (e ? e : "unknown error"));
}

uint32_t BridgeBus::mmio_read32(uint32_t offset) {
  const uint32_t v = ernic_read32(b_, offset);
  check("mmio_read32");
  // The read let the simulation run: an interrupt that came meanwhile is
  // served now, as the built-in host's interrupt thread runs while its
  // driver waits for a register (else a flow that never sleeps would leave
  // it pending).
  if (driver_ && !in_service_ && unserved_interrupt()) {
    if (ernic_wait_until(b_, 0, ERNIC_WAIT_IRQ) < 0) fail("mmio_read32");
    taken_irq();
    serve_interrupts();
  }
  return v;
}

bool BridgeBus::unserved_interrupt() const {
  ernic_bridge_stats st{};
  ernic_get_stats(b_, &st);
  return st.interrupts != irqs_taken_;
}

void BridgeBus::taken_irq() {
  ernic_bridge_stats st{};
  ernic_get_stats(b_, &st);
  irqs_taken_ = st.interrupts;  // ernic_wait_until consumed every one received
}

void BridgeBus::mmio_write32(uint32_t offset, uint32_t value) {
  ernic_write32(b_, offset, value);
  check("mmio_write32");
}

void BridgeBus::mem_read(uint64_t bus, uint8_t* dst, uint64_t len) {
  if (len == 0) return;
  const void* p = ernic_dma_ptr(b_, bus, size_t(len));
  if (!p)
    throw BridgeBusError("host memory read [" + hex(bus) + ", +" + std::to_string(len) +
                         ") outside the program's DMA memory");
  std::memcpy(dst, p, size_t(len));
}

void BridgeBus::mem_write(uint64_t bus, const uint8_t* src, uint64_t len) {
  if (len == 0) return;
  void* p = ernic_dma_ptr(b_, bus, size_t(len));
  if (!p)
    throw BridgeBusError("host memory write [" + hex(bus) + ", +" + std::to_string(len) +
                         ") outside the program's DMA memory");
  std::memcpy(p, src, size_t(len));
}

uint64_t BridgeBus::alloc(uint64_t bytes, uint64_t align) {
  check("alloc");
  // 0 when it does not fit: the driver names the failure (the library keeps
  // its own message as the session's error).
  return ernic_dma_alloc(b_, size_t(bytes), size_t(align ? align : 1), nullptr);
}

uint64_t BridgeBus::mem_size() const { return ernic_mem_bytes(b_); }

bool BridgeBus::mem_valid(uint64_t bus, uint64_t len) const {
  return len > 0 && len <= SIZE_MAX && ernic_dma_ptr(b_, bus, size_t(len)) != nullptr;
}

uint64_t BridgeBus::now_ps() const { return ernic_now_ps(b_); }

void BridgeBus::report_error(const std::string& what) {
  reported_.push_back(what);
  std::fprintf(stderr, "ernic driver: %s\n", what.c_str());
}

// The interrupt handler, as often as INTSTS has something (MSI-X sends one
// message per rising edge of rnic_intr: a cause that came while the handler
// ran keeps the line high and sends nothing new, so the handler looks again).
void BridgeBus::serve_interrupts() {
  if (!driver_) return;
  struct Guard {
    bool& f;
    explicit Guard(bool& g) : f(g) { f = true; }
    ~Guard() { f = false; }
  } guard(in_service_);
  uint32_t v = 0;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    v = driver_->service_interrupt();
    ++irq_passes_;
    if (v == 0) return;
  }
  report_error("interrupt status " + hex(v) + " still set after " + std::to_string(kMaxPasses) +
               " passes of the interrupt handler");
}

void BridgeBus::sleep_until(uint64_t deadline_ps, unsigned on) {
  const unsigned sig = on & ~unsigned(kMemory);
  for (;;) {
    if (signals_ & sig) {
      signals_ &= ~sig;
      return;
    }
    if (irq_owed_ && !in_service_) {  // came while the handler itself slept
      irq_owed_ = false;
      serve_interrupts();
      continue;
    }
    const uint64_t now = now_ps();
    if (now >= deadline_ps) return;
    const uint64_t until = deadline_ps - now > kMaxSyncPs ? now + kMaxSyncPs : deadline_ps;
    const unsigned what = ERNIC_WAIT_IRQ | ((on & kMemory) ? ERNIC_WAIT_DMA_WRITE : 0u);
    const int r = ernic_wait_until(b_, until, what);
    if (r < 0) fail("sleep_until");
    if (r & ERNIC_WAIT_IRQ) taken_irq();
    bool written = (on & kMemory) && (r & ERNIC_WAIT_DMA_WRITE);
    if (r & ERNIC_WAIT_IRQ) {
      if (in_service_) {
        irq_owed_ = true;
      } else {
        ernic_bridge_stats before{}, after{};
        ernic_get_stats(b_, &before);
        serve_interrupts();
        ernic_get_stats(b_, &after);
        // the NIC wrote memory while the handler read its registers
        if ((on & kMemory) && after.dma_writes != before.dma_writes) written = true;
      }
    }
    if (written) {
      ++mem_wakes_;
      return;
    }
  }
}

}  // namespace ernic::bridge
