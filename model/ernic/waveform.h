// model/ernic: the ERNIC's signals in the waveform (VCD): the interrupt, the
// WQE processor's and RX packet handler's current work, the RX buffer's
// output stream, the sideband doorbell outputs, and each QP's registers and
// sub-states. Declared once, in this order, under the module hierarchy's
// scopes (top.<node>.ernic, .wqe_proc, .rx_pkt_hndler, .rx_buffer, .qpN);
// the blocks write them through SimContext::set. -1: not tracing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/sim/sim_context.h"

namespace ernic {

struct QpWaveform {
  int state = -1, fatal = -1, sq_pi = -1, sq_ci = -1, cq_head = -1, next_psn = -1, exp_psn = -1, osq = -1,
      req = -1, resp = -1;
};

struct ErnicWaveform {
  int intr = -1, intsts = -1;                                    // rnic_intr, INTSTS
  int req_state = -1, req_qpn = -1, tx_opcode = -1;              // wqe_proc
  int rx_valid = -1, rx_opcode = -1;                             // rx_pkt_hndler
  int rxb_tvalid = -1, rxb_tready = -1;                          // rx_buffer -> rx_pkt_hndler stream
  int cq_db_cnt = -1, cq_db_addr = -1, rq_db_data = -1, rq_db_addr = -1;  // sideband doorbell outputs
  // The 10-bit address of QP n's doorbell on resp_hndler_o_send_cq_db_addr
  // and rx_pkt_hndler_o_rq_db_addr: a 4-byte slot per QP (A-SIDEBAND-1).
  static constexpr uint32_t db_addr(uint32_t qpn) { return (qpn * 4) & 0x3FF; }
  std::vector<QpWaveform> qp;                                    // index = QPN

  // The QP manager's state as wqe_proc.state shows it.
  enum ReqState : uint8_t { kReqIdle = 0, kReqFetch = 1, kReqSend = 2, kReqWaitAck = 3 };

  // Declares every signal (scope: the ERNIC's; wqe_proc, rx_pkt_hndler:
  // those blocks' scopes) and registers the value names trigger
  // expressions use (ernic.qp*.req_state, ...).
  void declare(SimContext& ctx, const std::string& scope, const std::string& wqe_proc_scope,
               const std::string& rx_scope, uint32_t num_qp);
};

}  // namespace ernic
