// model/ernic: what PG332's blocks of one ERNIC share, as the IP's blocks
// share its register file and context memories: the register file, the QP
// contexts (model/qp), the six AXI4 DMA masters under PG332's names, the MR
// lookup, the statistics, the waveform handles, and the events by which a
// block asks the QP manager above it for attention (a request upward
// travels as an event, never as a call). The ERNIC top (ernic.h) owns one
// and hands it to every block.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "model/dma/dma.h"
#include "model/ernic/config.h"
#include "model/ernic/waveform.h"
#include "model/host/host_memory.h"
#include "model/mr/mr_cache.h"
#include "model/qp/qp_context.h"
#include "model/regs/register_file.h"
#include "model/sim/clock.h"
#include "model/sim/instant_order.h"
#include "model/sim/sim_context.h"

namespace ernic {

class QpCtxCache;  // qp_ctx_cache.h

// A frame the RX packet handler passed to a block below it (the response
// handler) and that block refused: the RX packet handler counts it dropped,
// and with a validation syndrome (seam::kSyn*) logs it in the error buffer.
struct RxDrop {
  std::string why;
  uint32_t syndrome = 0;
};

struct ErnicShared {
  ErnicShared(const ClockDomain& core, HostMemory& mem, SimContext& ctx, const std::string& scope, ErnicConfig cfg);

  const ClockDomain& core;
  HostMemory& mem;
  SimContext& ctx;
  const std::string scope;         // the ERNIC's waveform scope (its module name)
  const ErnicConfig cfg;
  ErnicStats stats;
  regs::RegisterFile regs;
  std::vector<qp::QpContext> qps;  // index = QPN (1..num_qp)

  // PG332's AXI4 masters (section 4, "AXI4 interfaces").
  Dma dma_wqe;      // qp_mgr_m_axi: WQE fetch
  Dma dma_payload;  // wqe_proc_top_m_axi: SEND/WRITE payload, READ response payload, retry-buffer reads
  Dma dma_rx;       // rx_pkt_hndler_ddr_m_axi: incoming WRITE/SEND payload, RQ, error buffer
  Dma dma_cmpl;     // resp_hndler_m_axi: CQEs, CQ doorbells, error-status queue
  Dma dma_rdrsp;    // rx_pkt_hndler_rdrsp_m_axi: READ response payload into LADDR
  Dma dma_wrddr;    // wqe_proc_wr_ddr_m_axi: write-retry buffer copies
  std::unique_ptr<MrLookup> mr_lookup;
  // The QP-context cache extension (qp_ctx_cache.h), owned by the top; null
  // when off (PG332: every context on chip), so the blocks' check is one test.
  QpCtxCache* qpc = nullptr;

  ErnicWaveform wave;

  // Wake-ups of the QP manager: something that can change which QP has
  // work (an ACK retired a WQE, a go-back was asked for, buffers were
  // freed, an RNR wait ended) and WQEs arriving in the WQE cache.
  sc_core::sc_event work_ev, prefetch_ev;
  // The timer thread (resp_hndler) re-reads its deadlines; the RX thread
  // (rx_pkt_hndler) has a coalescing ACK to send.
  sc_core::sc_event timer_ev, rx_ev;
  // The requester's decisions that what the instant brings can change (the
  // QP manager's pick of the next QP; whether a packet still goes, after a
  // NAK that made its QP fatal) wait for the instant's settled point
  // through this order (at_settled_point), so they see every ACK, NAK and
  // prefetched WQE of the instant, whichever process the kernel ran first
  // (model/sim/instant_order.h; a client of the settled point like the
  // PCIe link's order, so it goes before the runner's steps).
  InstantOrder requester_instant;
  void at_settled_point() { const InstantOrder::Turn turn(&requester_instant, 0); }
  uint64_t next_osq_id = 1;        // Outstanding::id
  // QPs whose coalescing ACK timeout passed, in order: the timer thread
  // (resp_hndler) queues them, the RX packet handler sends the ACKs.
  std::deque<uint32_t> ack_fire_q;

  // Register helpers used by several blocks.
  uint32_t& G(uint32_t off) { return regs.g(off); }
  uint32_t G(uint32_t off) const { return regs.g(off); }
  uint32_t& Q(uint32_t qpn, uint32_t off) { return regs.q(qpn, off); }
  uint32_t Q(uint32_t qpn, uint32_t off) const { return regs.q(qpn, off); }
  uint64_t q64(uint32_t qpn, uint32_t lo, uint32_t hi) const { return regs.q64(qpn, lo, hi); }
  uint32_t sq_depth(uint32_t qpn) const;
  uint32_t rq_depth(uint32_t qpn) const;
  uint32_t pmtu(uint32_t qpn) const;
  bool fatal(uint32_t qpn) const;
  std::string qp_scope(uint32_t qpn) const;  // "<scope>.qpN"
  std::string block_scope(const sc_core::sc_module& m) const { return scope + "." + m.basename(); }
  // A LSTINPKT / LSTOUTPKT word (both lay out [7:0] opcode, [15:8] QP,
  // [31:16] PSN[15:0]).
  static uint32_t last_packet(uint8_t opcode, uint32_t qpn, uint32_t psn);
  // The QP's registers and sub-states into the waveform (qpN.*).
  void trace(const qp::QpContext& qp);
};

}  // namespace ernic
