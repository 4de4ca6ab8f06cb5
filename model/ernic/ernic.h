// model/ernic: the ERNIC IP (AMD/Xilinx PG332 v3.1) as a SystemC model: the
// top that connects PG332's blocks and presents the IP's ports.
//
// Blocks (each in its own header, each saying what of PG332 it models):
//   qp_mgr.h         QP manager: doorbells, WQE prefetch, dispatch, go-back-N
//   wqe_proc.h       WQE processor: WQEs into packets, the TX queue to roce_tx
//   rx_pkt_hndler.h  RX buffer, validation, QP1 and the responder (rx_responder.cpp)
//   resp_hndler.h    response handler: ACK/NAK/READ responses, CQEs, the
//                    fatal path, retransmission timers (resp_retry.cpp)
//   retry_buf.h      write-retry buffers and their copy master
//   wqe_cache.h      the WQE cache between prefetch and dispatch
//   interrupts.h     INTSTS / INTEN / rnic_intr and the per-QP banks
//   shared.h         what the blocks share: register file, QP contexts
//                    (model/qp), the six AXI4 masters, the MR lookup
// Calls go down this list (the QP manager calls the WQE processor and the
// response handler; the RX packet handler calls the response handler and
// the WQE processor's TX queue); a request upward is an event
// (ErnicShared::work_ev, prefetch_ev, rx_ev, timer_ev).
//
// Ports (PG332 section 4):
//   s_axi_lite          axil_read / axil_write: the register file with
//                       PG332's access rules (RW, RO, W1C, SW override);
//   i_qp_sq_pidb_*, i_qp_rq_cidb_*   sq_pidb / rq_cidb (HW handshake);
//   roce_cmac_s_axis    rx_push (from roce_rx, rtl/SEAM.md RX seam);
//   TX seam             the TX descriptors and payload to `datapath`;
//   rnic_intr           intr;
//   ieth_immdt_axis, rx_pkt_hndler_o_rq_db_*, resp_hndler_o_send_cq_db_*:
//                       the sinks below; ctl_tx_pause_req: `cmac` (PFC);
//   the six m_axi masters: host memory through model/dma.
//
// Clock: everything on the core clock (m_axi_aclk, 200 MHz default).
// Timing parameters: ErnicTiming (config.h), every figure naming the PG332
// fact or the assumption (A-ERNIC-*) it follows. What the model leaves out
// and where it departs from the IP: model/ernic/README.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/datapath/seam.h"
#include "model/ernic/config.h"
#include "model/ernic/interrupts.h"
#include "model/ernic/qp_ctx_cache.h"
#include "model/ernic/qp_mgr.h"
#include "model/ernic/resp_hndler.h"
#include "model/ernic/retry_buf.h"
#include "model/ernic/rx_pkt_hndler.h"
#include "model/ernic/shadow_db.h"
#include "model/ernic/shared.h"
#include "model/ernic/wqe_cache.h"
#include "model/ernic/wqe_proc.h"
#include "model/host/host_memory.h"
#include "model/link/axil.h"
#include "model/link/cmac.h"
#include "model/link/sideband.h"
#include "model/mr/mr_cache.h"
#include "model/roce/packet.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic {

class RoceDatapath;

class Ernic : public sc_core::sc_module, public AxiLiteTarget, public SidebandTarget {
 public:
  Ernic(sc_core::sc_module_name name, const ClockDomain& core, HostMemory& mem, SimContext& ctx,
        const std::string& scope, ErnicConfig cfg);
  ~Ernic() override;

  // AXI4-Lite slave (called at the handshake edge by AxiLitePort).
  uint32_t axil_read(uint32_t addr) override;
  void axil_write(uint32_t addr, uint32_t data) override;
  // Sideband doorbells in (model/link/sideband.h), for QPs in HW-handshake
  // mode (QPCONFi[4] = 0): i_qp_sq_pidb_* sets SQPIi and rings the QP
  // manager, i_qp_rq_cidb_* sets RQCIi. A QP with QPCONFi[4] = 1 ignores
  // them (counted in sideband_ignored()). Always ready.
  bool sq_pidb(uint32_t wr_addr, uint16_t pi) override;
  bool rq_cidb(uint32_t wr_addr, uint16_t ci) override;
  uint64_t sideband_ignored() const { return sideband_ignored_; }

  // rnic_intr: OR of the enabled INTSTS bits.
  IntrLine intr{"rnic_intr"};

  // Datapath connections (before sc_start).
  Cmac* cmac = nullptr;              // ctl_tx_pause_req (PFC)
  RoceDatapath* datapath = nullptr;  // TX frames go there (none: they are dropped; unit tests)
  // A RoCE frame from roce_rx: its descriptor and payload (into the RoCE RX
  // buffer; desc.frame_len bytes of it).
  void rx_push(const seam::RxDesc& desc, roce::Bytes payload) { rx_.push(desc, std::move(payload)); }
  // ieth_immdt_axis (PG332 section 4): one 64-bit entry per immediate datum
  // or invalidate R_Key (layout: model/regs/ieth.h).
  std::function<void(uint64_t entry)> ieth_sink;
  // rx_pkt_hndler_o_rq_db_{data,addr}: an RC QP's new RQ write pointer
  // (STATRQPIDBi) once a SEND's payload is in its RQ element.
  std::function<void(uint32_t qpn, uint32_t pi)> rq_db_sink;
  // resp_hndler_o_send_cq_db_{cnt,addr}: a QP in HW-handshake mode
  // (QPCONFi[4] = 0) announces its new CQHEADi after each completion.
  std::function<void(uint32_t qpn, uint32_t cq_head)> cq_db_sink;
  // Observers for checkers outside the NIC (the wire monitor): every RoCE
  // frame the RX packet handler takes for protocol processing (valid, on an
  // enabled non-fatal QP), when it takes it; every frame descriptor at the
  // moment it is committed to roce_tx (presented, can no longer be withdrawn).
  std::function<void(const roce::Frame&)> on_rx_taken;
  std::function<void(const seam::TxDesc&)> on_tx_committed;

  const ErnicStats& stats() const { return s_.stats; }
  const ErnicConfig& config() const { return s_.cfg; }
  // Register value by absolute address, without side effects (reports, tests).
  uint32_t peek(uint32_t addr) const;
  // Simulator backdoor (scenario step debug_preset, assumption A-DEBUG-1):
  // sets a register's value directly, without an AXI4-Lite access and its
  // access rules (STATSSNi is read-only in PG332). Logged as an event.
  void backdoor_write(uint32_t addr, uint32_t value);
  // A short description of each enabled QP's state (watchdog, failures).
  std::vector<std::string> qp_status() const;
  // A QP's outstanding-request limit (16, 8 after a CNP: A-ERNIC-22) and
  // the requests it has outstanding now (scenario step expect_qp).
  uint32_t outstanding_limit(uint32_t qpn) const { return s_.qps.at(qpn).req.max_out; }
  size_t outstanding(uint32_t qpn) const { return s_.qps.at(qpn).req.osq.size(); }
  // No QP has a request outstanding or posted and not yet sent: nothing
  // can retry, so no livelock can be reported (a split run's control
  // policy, model/system/split.cpp).
  bool requester_idle() const;
  const MrLookup& mr_lookup() const { return *s_.mr_lookup; }
  // The named extensions that are not PG332 (ext_config.h); null when off.
  const ShadowDb* shadow_db() const { return shadow_.get(); }
  const QpCtxCache* qp_ctx_cache() const { return qpc_.get(); }

 private:
  void log_reg(bool write, uint32_t addr, uint32_t value);
  void qp_register_written(uint32_t qpn, uint32_t off, uint32_t old, uint32_t data);
  void qp_enabled(qp::QpContext& qp, uint32_t old_qpconf);
  bool hw_handshake(uint32_t qpn, const char* port, uint32_t value);
  void shadow_doorbell(uint32_t qpn, uint32_t pi);  // X-SHADOW-DB: a doorbell the poller took

  // Declaration order is construction order: the shared state first, then
  // the blocks in the order their processes were always created (qp_mgr's
  // dispatcher and prefetcher, wqe_proc's TX, rx_pkt_hndler's RX,
  // resp_hndler's timer, retry_buf's copy queue), which fixes SystemC's
  // order among processes runnable in the same delta cycle.
  ErnicShared s_;
  Interrupts intr_ctl_;
  WqeCache cache_;
  QpMgr qp_mgr_;
  WqeProc wqe_proc_;
  RxPktHndler rx_;
  RespHndler resp_;
  RetryBuf retry_buf_;
  // Extensions (built only when on, after the blocks: their processes come last).
  std::unique_ptr<QpCtxCache> qpc_;
  std::unique_ptr<ShadowDb> shadow_;
  uint64_t sideband_ignored_ = 0;
};

}  // namespace ernic
