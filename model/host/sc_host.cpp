// model/host: ScHost, the simulator's HostBus (sc_host.h).
#include "model/host/sc_host.h"

#include <optional>

namespace ernic::host {

using namespace sc_core;

ScHost::ScHost(sc_module_name name, const ClockDomain& core, AxiLitePort& axil, HostMemory& mem,
               const sc_signal_in_if<bool>& intr, SimContext& ctx, DriverConfig cfg)
    : sc_module(name), core_(core), axil_(axil), mem_(mem), intr_(intr), ctx_(ctx), node_(cfg.node),
      driver_(std::make_unique<Driver>(*this, std::move(cfg))) {
  SC_THREAD(irq_thread);
  irq_ = sc_core::sc_get_last_created_process_handle();
}

size_t ScHost::index(Wake w) {
  unsigned v = unsigned(w);
  size_t i = 0;
  while (v > 1) {
    v >>= 1;
    ++i;
  }
  return i < kEvents ? i : 0;
}

uint64_t ScHost::alloc(uint64_t bytes, uint64_t align) {
  if (!align) align = 1;
  const uint64_t a = (brk_ + align - 1) / align * align;
  if (bytes > mem_.size() || a > mem_.size() - bytes) return 0;
  brk_ = a + bytes;
  return a;
}

void ScHost::sleep_until(uint64_t deadline_ps, unsigned on) {
  const uint64_t now = now_ps();
  if (deadline_ps != kForever && deadline_ps <= now) {
    wait(SC_ZERO_TIME);
    return;
  }
  sc_event_or_list any;
  bool some = false;
  if (on & kMemory) {
    any |= mem_.write_event();
    some = true;
  }
  for (unsigned b = 1; b < kEvents; ++b)
    if (on & (1u << b)) {
      any |= events_[b];
      some = true;
    }
  if (deadline_ps == kForever) {
    if (some) wait(any);
    else wait();  // nothing to wake on, for ever: as the driver asked
    return;
  }
  // The deadline through a Deadline (model/sim/deadline.h): a poll woken
  // by each completion leaves no timeout behind in the timed queue.
  any |= deadline_.arm(deadline_ps);
  for (;;) {
    wait(any);
    if (now_ps() >= deadline_ps) return;
    if ((on & kMemory) && mem_.write_event().triggered()) return;
    for (unsigned b = 1; b < kEvents; ++b)
      if ((on & (1u << b)) && events_[b].triggered()) return;
    deadline_.arm(deadline_ps);  // woken by an earlier deadline's notification (another wait's)
  }
}

void ScHost::log_state(uint32_t qpn, const char* what, const char* value) {
  if (ctx_.log)
    ctx_.log->state(now_ps(), node_, "host", core_.cycle(), qpn ? std::optional<uint32_t>(qpn) : std::nullopt, what, value);
}

void ScHost::report_error(const std::string& what) { ctx_.error(node_ + ".driver", what); }

void ScHost::irq_thread() {
  for (;;) {
    if (!intr_.read()) wait(intr_.posedge_event());
    const uint32_t sts = driver_->service_interrupt();
    if (!sts) wait(intr_.value_changed_event());
  }
}

}  // namespace ernic::host
