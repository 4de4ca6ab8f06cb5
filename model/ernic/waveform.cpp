// model/ernic: the ERNIC's waveform signals (see waveform.h).
#include "model/ernic/waveform.h"

#include <fmt/format.h>

#include "model/qp/qp_state.h"
#include "model/trace/signal_enums.h"

namespace ernic {

void ErnicWaveform::declare(SimContext& ctx, const std::string& scope, const std::string& wqe_proc_scope,
                            const std::string& rx_scope, uint32_t num_qp) {
  intr = ctx.var(scope, "rnic_intr", 1);
  req_state = ctx.var(wqe_proc_scope, "state", 2);
  req_qpn = ctx.var(wqe_proc_scope, "qpn", 8);
  tx_opcode = ctx.var(wqe_proc_scope, "tx_opcode", 8);
  rx_valid = ctx.var(rx_scope, "pkt_valid", 1);
  rx_opcode = ctx.var(rx_scope, "opcode", 8);
  intsts = ctx.var(scope, "INTSTS", 32);
  rxb_tvalid = ctx.var(scope + ".rx_buffer", "m_axis_tvalid", 1);
  rxb_tready = ctx.var(scope + ".rx_buffer", "m_axis_tready", 1, 1);
  cq_db_cnt = ctx.var(scope, "resp_hndler_o_send_cq_db_cnt", 32);
  cq_db_addr = ctx.var(scope, "resp_hndler_o_send_cq_db_addr", 10);
  rq_db_data = ctx.var(scope, "rx_pkt_hndler_o_rq_db_data", 32);
  rq_db_addr = ctx.var(scope, "rx_pkt_hndler_o_rq_db_addr", 10);
  // Value names for trigger expressions (rtl(A.qp2.req_state) == WAIT_ACK).
  using qp::ReqState;
  using qp::RespState;
  trace::register_signal_enum("ernic.qp*.req_state",
                              {{"IDLE", uint8_t(ReqState::idle)}, {"SENDING", uint8_t(ReqState::sending)},
                               {"WAIT_ACK", uint8_t(ReqState::wait_ack)}, {"RETRANSMIT", uint8_t(ReqState::retransmit)},
                               {"RNR_WAIT", uint8_t(ReqState::rnr_wait)}});
  trace::register_signal_enum("ernic.qp*.resp_state",
                              {{"IDLE", uint8_t(RespState::idle)}, {"RECEIVING", uint8_t(RespState::receiving)},
                               {"ACK_PENDING", uint8_t(RespState::ack_pending)},
                               {"NAK_PSN_SENT", uint8_t(RespState::nak_psn_sent)},
                               {"RNR_NAK_SENT", uint8_t(RespState::rnr_nak_sent)}});
  trace::register_signal_enum("ernic.wqe_proc.state",
                              {{"IDLE", kReqIdle}, {"FETCH", kReqFetch}, {"SEND", kReqSend}, {"WAIT_ACK", kReqWaitAck}});
  qp.assign(num_qp + 1, QpWaveform{});
  for (uint32_t n = 1; n <= num_qp; ++n) {
    QpWaveform& w = qp[n];
    const std::string s = fmt::format("{}.qp{}", scope, n);
    w.state = ctx.var(s, "enabled", 1);
    w.fatal = ctx.var(s, "fatal", 1);
    w.sq_pi = ctx.var(s, "SQPI", 16);
    w.sq_ci = ctx.var(s, "sq_ci", 16);
    w.cq_head = ctx.var(s, "CQHEAD", 16);
    w.next_psn = ctx.var(s, "SQPSN", 24);
    w.exp_psn = ctx.var(s, "expected_psn", 24);
    w.osq = ctx.var(s, "outstanding", 5);
    w.req = ctx.var(s, "req_state", 3);    // qp::ReqState
    w.resp = ctx.var(s, "resp_state", 3);  // qp::RespState
  }
}

}  // namespace ernic
