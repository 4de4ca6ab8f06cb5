// model/ernic: the RX packet handler (PG332 v3.1 section 4, rx_pkt_hndler)
// and the RoCE RX buffer in front of it.
//  - The RX buffer (A-ERNIC-26): roce_cmac_s_axis has no tready, so every
//    frame roce_rx delivers is held here (ErnicTiming::rx_buffer_bytes)
//    until the handler is done with it; PFC's ctl_tx_pause_req rises and
//    falls at XRNIC_BUF_THRESHOLD_ROCE's XOFF / XON (802.1Qbb); a frame that
//    does not fit is lost (a run error).
//  - Validation (PG332 Table 2-3): roce_rx's syndrome bits (IP version,
//    IPv4 checksum, lengths, header, ICRC, FCS) and the handler's own (MAC
//    DA, IP DA, TVer, QP unsupported or disabled, source not the QP's
//    remote, IPv4 flags, malformed AETH), each bit on its own
//    (model/datapath/seam.h); a failure is dropped, counted and logged in
//    the error buffer with the header rebuilt from the descriptor
//    (A-ERNIC-18), INTSTS[0].
//  - QP1: CM MADs into QP1's RQ (40-byte L3 slot, then UDP, BTH, DETH, MAD).
//  - The responder (rx_responder.cpp): PSN and opcode-sequence checks, the
//    RETH checks of PG332 Fig. 2-9 through the MR lookup, WRITE and SEND
//    payload written through rx_pkt_hndler_ddr_m_axi, RQ doorbells and the
//    ieth_immdt stream, READ responses (A-ERNIC-11), ACK generation by
//    XRNICCONF[4:3] with coalescing (A-ERNIC-20), duplicates re-ACKed,
//    NAK-PSN once a gap, RNR NAKs, ECN marks (CNPSCHDSTS, INTSTS[8]).
//  - Answers to the requester (ACK, NAK, READ responses, CNPs) go to the
//    response handler below it.
//
// Clock: the core clock. Timing: rx_parse_cycles after a frame arrived
// (pipelined, A-ERNIC-25), ack_build_cycles, rdrsp_build_cycles per READ
// response. Process: the RX thread (one frame at a time; coalescing ACKs
// the timer thread queued).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>

#include "model/datapath/seam.h"
#include "model/ernic/interrupts.h"
#include "model/ernic/resp_hndler.h"
#include "model/ernic/shared.h"
#include "model/ernic/wqe_proc.h"
#include "model/link/cmac.h"
#include "model/roce/packet.h"

namespace ernic {

// The ERNIC's outputs a block below the top drives (set by the system).
struct RxSinks {
  std::function<void(uint64_t entry)>* ieth = nullptr;          // ieth_immdt_axis
  std::function<void(uint32_t qpn, uint32_t pi)>* rq_db = nullptr;  // rx_pkt_hndler_o_rq_db
  std::function<void(const roce::Frame&)>* rx_taken = nullptr;   // checkers: every frame taken
  Cmac** cmac = nullptr;                                         // ctl_tx_pause_req
};

class RxPktHndler : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(RxPktHndler);
  RxPktHndler(sc_core::sc_module_name name, ErnicShared& s, Interrupts& intr, RespHndler& resp, WqeProc& tx,
              RxSinks sinks);

  // A RoCE frame from roce_rx: its descriptor and payload, into the RX buffer.
  void push(const seam::RxDesc& desc, roce::Bytes payload);

  // STATRQBUFCAi / MSBi: the RQ element the next SEND fills (RQBAi's
  // format, A-CNT-1); the top sets element 0 when RQBAi is written.
  void set_rq_buf_ca(uint32_t qpn, uint64_t addr);


 private:
  struct RxFrame {
    seam::RxDesc desc;
    roce::Bytes payload;
  };
  void rx_thread();
  void buffer_changed();  // XON/XOFF against XRNIC_BUF_THRESHOLD_ROCE
  void handle(const RxFrame& r);
  uint32_t validate(const seam::RxDesc& d, std::string& why);
  void dispatch(qp::QpContext& qp, const roce::Frame& f);
  void drop(const std::string& why, uint32_t syndrome = 0);
  void rx_qp1(const roce::Frame& f, const seam::RxDesc& d);

  // --- the responder (rx_responder.cpp) ---------------------------------
  void rx_request(qp::QpContext& qp, const roce::Frame& f);
  bool rx_request_psn(qp::QpContext& qp, const roce::Frame& f);  // false: not the expected PSN
  bool rx_write(qp::QpContext& qp, const roce::Frame& f);
  bool rx_send(qp::QpContext& qp, const roce::Frame& f);
  void rx_immediate(qp::QpContext& qp, const roce::Frame& f);
  void rx_read_request(qp::QpContext& qp, const roce::Frame& f, bool duplicate);
  void unsupported(qp::QpContext& qp, const roce::Frame& f);
  uint8_t check_reth(uint32_t qpn, const roce::Reth& r, bool read, uint64_t& phys, std::string& why);
  void send_ack(uint32_t qpn, uint8_t syndrome, uint32_t psn);
  void ack_accepted(qp::QpContext& qp, uint32_t psn, bool ack_req);
  uint32_t ack_mode() const;

  ErnicShared& s_;
  Interrupts& intr_;
  RespHndler& resp_;
  WqeProc& tx_;
  RxSinks sinks_;
  std::deque<RxFrame> rxq_;
  std::deque<uint64_t> arrival_;      // when each frame of rxq_ arrived
  uint64_t buf_bytes_ = 0;            // RX buffer level
  bool xoff_ = false, overflowing_ = false;
  const seam::RxDesc* desc_ = nullptr;  // the frame handle() is validating (its error-buffer entry)
};

}  // namespace ernic
