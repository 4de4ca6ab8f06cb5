// model/ernic: the WQE processor (PG332 v3.1 section 4, wqe_proc): turns a
// WQE the QP manager hands it into packets, and owns the TX side towards
// the RoCEv2 datapath.
//  - RDMA WRITE / SEND (and their immediate and invalidate forms) are cut at
//    the PMTU into FIRST / MIDDLE... / LAST or ONLY, AckReq on the last
//    packet (A-ERNIC-2), RETH on the first WRITE packet, ImmDt / IETH on the
//    last; payload read through wqe_proc_top_m_axi (SEND of <= 16 bytes:
//    the WQE's SDATA, A-ERNIC-21), a WRITE's payload also copied into its
//    write-retry buffers (retry_buf.h).
//  - RDMA READ: one READ_REQUEST using ceil(L / PMTU) PSNs (at least one);
//    a re-issue asks again for the whole READ (3.1) or from its first
//    missing response (4.x), A-ERNIC-12.
//  - QP1: software-built frames (CM MADs, CNPs) sent as they are.
//  - Retransmissions (for the QP manager's go-back): the same packets from
//    a PSN, payload from the retry buffers or LADDR again; each names its
//    WQE and is withdrawn if an ACK retired it before it reaches roce_tx.
//  - The TX queue (ErnicTiming::tx_queue_frames frames) in front of the
//    datapath (rtl/SEAM.md TX seam: a header descriptor and the payload),
//    shared with the RX packet handler's ACKs and READ responses.
//
// Clock: the core clock. Timing: hdr_build_cycles per message's first
// packet (the next ones are pipelined, A-ERNIC-25), payload-read latency of
// the DMA engine. Process: the TX thread (one descriptor at a time to
// roce_tx; blocks until roce_tx takes it).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <systemc>
#include <vector>

#include "model/datapath/seam.h"
#include "model/ernic/interrupts.h"
#include "model/ernic/resp_hndler.h"
#include "model/ernic/retry_buf.h"
#include "model/ernic/shared.h"
#include "model/regs/wqe.h"
#include "model/roce/packet.h"
#include "model/sim/instant_order.h"

namespace ernic {

class RoceDatapath;

class WqeProc : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(WqeProc);
  WqeProc(sc_core::sc_module_name name, ErnicShared& s, Interrupts& intr, RespHndler& resp, RetryBuf& bufs,
          RoceDatapath*& datapath, std::function<void(const seam::TxDesc&)>& on_tx_committed);

  // Executes one WQE of the QP (fetched into the WQE cache at issued_ps);
  // bufs: the write-retry buffers a WRITE was given.
  void execute(qp::QpContext& qp, const pg332::Wqe& w, uint32_t sq_idx, std::vector<uint32_t> bufs,
               uint64_t issued_ps);
  // Retransmission: the WRITE / SEND's packets from from_psn, or a READ
  // re-issued.
  void resend_packets(qp::QpContext& qp, const qp::Outstanding& o, uint32_t from_psn) {
    send_packets(qp, o, from_psn, /*retry=*/true);
  }
  void reissue_read(qp::QpContext& qp, uint32_t first_psn) { send_read_request(qp, first_psn, /*retry=*/true); }
  // A frame of the RX packet handler's (ACK, NAK, READ response) into the
  // TX queue; blocks while the queue is full.
  void send(const roce::Frame& f);

 private:
  // A retransmitted request names the outstanding WQE it belongs to: the
  // TX thread hands it to roce_tx only if that WQE is still outstanding
  // and unacknowledged then, and counts it (LSTOUTPKT, OUTIOPKTCNT,
  // RETRYCNTSTS) when it leaves.
  struct Resend {
    uint32_t qpn = 0;
    uint64_t osq_id = 0;
    uint32_t lstoutpkt = 0;
    bool io_high = false;          // OUTIOPKTCNT half: [31:16] WRITE/READ, [15:0] SEND
  };
  struct TxFrame {
    seam::TxDesc desc;
    roce::Bytes payload;
    std::optional<Resend> resend;
  };

  void execute_qp1(qp::QpContext& qp, const pg332::Wqe& w, uint64_t issued_ps);
  qp::Outstanding new_outstanding(qp::QpContext& qp, const pg332::Wqe& w, uint32_t sq_idx, bool is_read);
  void send_packets(qp::QpContext& qp, const qp::Outstanding& o, uint32_t from_psn, bool retry);
  bool read_payload(qp::QpContext& qp, const qp::Outstanding& o, uint32_t off, uint32_t chunk, bool lead, bool retry,
                    roce::Bytes& payload);
  void send_read_request(qp::QpContext& qp, uint32_t first_psn, bool retry);
  void tx_enqueue(const roce::Frame& f, std::optional<Resend> resend = std::nullopt);
  void tx_enqueue_raw(std::vector<uint8_t> frame);
  // The TX queue in a fixed order among frames pushed at one instant
  // (model/sim/instant_order.h): the RX handler's responses (ACK, NAK,
  // READ response), retransmissions, requests, QP1's raw frames; the turn
  // spans the wait for room (the queue is taken in turn order).
  enum TxRank : uint32_t { kTxResponse = 0, kTxResend = 1, kTxRequest = 2, kTxRaw = 3 };
  void push_tx(TxFrame t, TxRank rank);
  bool resend_wanted(const Resend& r) const;
  void tx_thread();

  ErnicShared& s_;
  Interrupts& intr_;
  RespHndler& resp_;
  RetryBuf& bufs_;
  RoceDatapath*& datapath_;
  std::function<void(const seam::TxDesc&)>& on_tx_committed_;
  std::deque<TxFrame> txq_;
  sc_core::sc_event tx_ev_, tx_pop_ev_;
  InstantOrder tx_order_;
};

}  // namespace ernic
