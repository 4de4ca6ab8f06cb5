// model/host: the host software side of the QP-setup offload
// (rtl/qp_setup/qp_setup_fsm.sv; register map model/datapath/qp_setup_regs.h).
// It reaches the block as a driver would: MMIO through the node's
// AXI4-Lite port, at qps::kMmioBase in BAR0, next to ERNIC's registers.
//
// - init(): after the ERNIC driver's init: allocates the pool window
//   (pool * slot_bytes, 4 KiB aligned) from host memory and writes the
//   block's geometry registers (window, slot size, N, queue depths, QPCONF
//   template, MAX_QPN = C_NUM_QP, ERNIC layout, LINK_TIMEOUT).
// - create() / release(): write the QP parameters and CMD, then poll STATUS
//   (every poll_ns) until the command has ended; the status code and state.
//   The QPN is reserved in the ERNIC driver from the command's start (kept
//   when it ends 0x17), so the driver picks other QPNs for its own
//   connections; a release frees it. A create for a QPN one of the
//   driver's connections is still establishing is a DriverError.
// - adopt(): turns a QP the block set up into a Connection of the ERNIC
//   driver (model/host/driver.h), in RTS: its queue addresses come from the
//   block's read-back registers (INFO_QPN, INFO_*), its remote QPN, PSNs and
//   remote address from ERNIC's per-QP registers (DESTQPCONFi, SQPSNi,
//   LSTRQREQi, MACDESADD*i, IPDESADDR1i). The CQ head and RQ write-pointer
//   mirrors of the slot are zeroed by host stores (a reused slot holds the
//   previous QP's values; ERNIC's pointers are zeroed by the release).
//   From then on post / poll / recv work on it as on any connection.
// - The block has one set of command registers, so the driver runs one
//   register sequence (create, release, adopt's read-back) at a time, as a
//   real driver holds a lock around it: a call made while another is in
//   progress (steps in parallel branches) waits until that one has ended,
//   then runs (callers in the order the kernel wakes them).
// Errors are DriverError (node named).
#pragma once
#include <cstdint>
#include <string>

#include "model/datapath/qp_setup_regs.h"
#include "model/host/driver.h"
#include "model/link/axil.h"

namespace ernic::host {

struct QpSetupGeometry {
  uint32_t pool = 4;                 // N slots (1..qps::kPoolMax)
  uint64_t slot_bytes = 0;           // 0: what the queues need, rounded up to 4 KiB
  uint32_t sq_depth = 64, rq_depth = 16, rq_elem_bytes = 4096, pmtu = 4096;
  uint32_t link_timeout_cycles = qps::kLinkTimeoutReset;
  // The QPCONFi template the block writes (bit 0 set by it).
  uint32_t qpconf() const;
  uint64_t slot_size() const;        // slot_bytes, or the default
};

struct QpSetupRequest {
  uint32_t qpn = 2;                  // local QPN (16 bits are written; the block checks the range)
  uint32_t remote_qpn = 2;           // DESTQP (32 bits written)
  uint32_t sq_psn = 0, exp_psn = 0;  // SQ_PSN, EXP_PSN (32 bits written)
  uint32_t remote_ip = 0;            // IPv4, host order
  roce::MacAddr remote_mac;
  uint32_t udp_port = qps::kRoceV2Port;
  uint32_t pd = 1;
};

struct QpSetupResult {
  uint8_t status = 0;
  qps::State state = qps::State::Idle;
};

class QpSetupDriver {
 public:
  QpSetupDriver(Driver& drv, AxiLitePort& axil, QpSetupGeometry g, uint32_t poll_ns = 100);
  void init();
  // Runs one command; waits at most timeout_ps for it to end (DriverError after).
  QpSetupResult create(const QpSetupRequest& r, uint64_t timeout_ps);
  QpSetupResult release(uint32_t qpn, uint64_t timeout_ps);
  // The QP qpn the block set up, as a connection in RTS; the peer's MR (its
  // VA, R_Key, length) as the out-of-band exchange gave it.
  Connection& adopt(uint32_t qpn, const roce::cm::MrInfo& remote_mr, const Mr* local_mr);
  uint64_t window() const { return window_; }
  const QpSetupGeometry& geometry() const { return g_; }

 private:
  QpSetupResult run(uint64_t timeout_ps);
  void wr(uint32_t off, uint32_t v) { axil_.write(qps::kMmioBase + off, v); }
  uint32_t rd(uint32_t off) { return axil_.read(qps::kMmioBase + off); }
  [[noreturn]] void fail(const std::string& what) const;
  // Holds the block's command registers for one call (see above).
  class Lock {
   public:
    explicit Lock(QpSetupDriver& d);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
   private:
    QpSetupDriver& d_;
  };
  bool busy_ = false;
  sc_core::sc_event free_;
  Driver& drv_;
  AxiLitePort& axil_;
  QpSetupGeometry g_;
  uint32_t poll_ns_;
  uint64_t window_ = 0;
  bool initialised_ = false;
};

}  // namespace ernic::host
