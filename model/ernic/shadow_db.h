// model/ernic: shadow doorbells, a named extension that is not PG332 (node
// key `extensions: { shadow_doorbell: { poll_ns: P } }`, assumptions
// X-SHADOW-DB-1..3; seed 003: "keep a shadow copy of the doorbell in host
// memory; the NIC polls it by DMA, fewer MMIO writes").
//
// The driver keeps each RC QP's SQ producer index in a table in host memory
// (entry of QP n: 4 bytes, little-endian, at table_base + 4 (n - 1)) and
// writes no SQPIi for it; QP1 (CM) rings SQPIi as in PG332. This block (an
// AXI4 master of its own, `shadow_db_m_axi`) reads the entries of QPs
// 2..num_qp in one DMA read (4 (num_qp - 1) bytes: the request and its
// completions on the node's PCIe link, A-DMA-1) starting at every multiple
// of poll_ns of simulated time (on the next core-clock edge), one read in
// flight: a multiple that passes while a read is in flight is skipped. A
// read returns the entries as host memory held them when it was issued
// (the completer reads them as the request arrives: a store that lands
// while the read is in flight waits for the next one); the NIC has them
// with the read's last beat. For every enabled RC QP with AXI doorbells
// (QPCONFi[4] = 1) whose entry changed since the last read, SQPIi takes
// the entry and the QP manager sees it doorbell_cycles later, as after an
// SQPIi write (A-ERNIC-1). With D the read's duration, reads start every
// S = P x max(1, ceil(D / P)) (P = poll_ns), so a doorbell the driver
// writes at time t reaches the QP manager after D + doorbell_cycles at
// least and S + D + one core cycle + doorbell_cycles at most
// (X-SHADOW-DB-2; S + D with P a multiple of the core period).
//
// Polling runs while the NIC is enabled and some RC QP is enabled with AXI
// doorbells; otherwise the block sleeps. When an RC QP is enabled
// (QPCONFi[0] 0 -> 1) 0 is its last value: the table is software's, which
// stores 0 in the entry before it enables the QP and when it deletes it
// (host::Driver::clear_shadow_doorbell; the NIC writes nothing there: a
// write of its own could land after the first doorbell, which may follow
// the enable at once). A read that was in flight across
// the enable is not used for that QP. SQPIi writes over AXI4-Lite still
// ring (the register is PG332's); the built-in driver just makes none for
// RC QPs. A poll that finds nothing new is not progress for the watchdog.
//
// Clock: the core clock. Process: the poller. Log: a `state` record
// `shadow_sq_pi` (QP, new value) for each doorbell taken; the master's
// `dma` records.
#pragma once
#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "model/dma/dma.h"
#include "model/ernic/shared.h"

namespace ernic {

class ShadowDb : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ShadowDb);
  // take(qpn, pi): what an SQPIi write of pi does (the ERNIC top's).
  ShadowDb(sc_core::sc_module_name name, ErnicShared& s, std::function<void(uint32_t, uint32_t)> take);

  // QPCONFi[0] 0 -> 1 of an RC QP: 0 is its last value.
  void on_enable(uint32_t qpn);
  // A QP's QPCONFi or XRNICCONF changed: whether to poll is looked at again.
  void wake() { wake_ev_.notify(sc_core::SC_ZERO_TIME); }

  struct Counters {
    uint64_t polls = 0, doorbells = 0;
  };
  const Counters& counters() const { return c_; }
  const ShadowDbConfig& config() const { return s_.cfg.shadow_db; }
  uint32_t bytes_per_poll() const { return 4 * (s_.cfg.num_qp - 1); }
  uint64_t bytes_read() const { return dma_.bytes_read(); }
  uint64_t read_requests() const { return dma_.read_requests(); }
  uint64_t read_completions() const { return dma_.read_completions(); }

 private:
  void poll_thread();
  void poll();
  bool active() const;
  bool axi_doorbells(uint32_t qpn) const;
  uint64_t entry_addr(uint32_t qpn) const { return s_.cfg.shadow_db.table_base + 4ull * (qpn - 1); }

  ErnicShared& s_;
  std::function<void(uint32_t, uint32_t)> take_;
  Dma dma_;                         // shadow_db_m_axi
  std::vector<uint32_t> last_;      // per QPN: the entry's last value
  std::vector<uint32_t> gen_;       // per QPN: bumped at each enable
  sc_core::sc_event wake_ev_;
  Counters c_;
};

}  // namespace ernic
