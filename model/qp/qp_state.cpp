// model/qp: the QP state machine (see qp_state.h for the transition table).
#include "model/qp/qp_state.h"

#include "model/qp/qp_context.h"
#include "model/regs/regs.h"
#include "model/roce/psn.h"

namespace ernic::qp {

const char* name(HwState s) {
  switch (s) {
    case HwState::disabled: return "disabled";
    case HwState::enabled: return "enabled";
    case HwState::recovery: return "recovery";
    case HwState::fatal: return "fatal";
  }
  return "?";
}

HwState hw_state(uint32_t qpconf, uint32_t statqp) {
  namespace FLD = regs::fld;
  if (!(qpconf & FLD::QPCONFi_EN.bit())) return (qpconf & FLD::QPCONFi_UNDER_RECOVERY.bit()) ? HwState::recovery : HwState::disabled;
  return (statqp & FLD::STATQPi_FATAL.bit()) ? HwState::fatal : HwState::enabled;
}

// The requester's flags by priority: an RNR wait holds everything, a
// pending go-back comes before new WQEs, then transmission, then waiting.
ReqState RequesterState::state(bool outstanding) const {
  if (rnr_until_ps_) return ReqState::rnr_wait;
  if (resend_pending_) return ReqState::retransmit;
  if (sending_) return ReqState::sending;
  return outstanding ? ReqState::wait_ack : ReqState::idle;
}

RespState resp_state(bool rnr_nak_sent, bool nak_psn_sent, bool in_message, uint32_t unacked) {
  if (rnr_nak_sent) return RespState::rnr_nak_sent;
  if (nak_psn_sent) return RespState::nak_psn_sent;
  if (in_message) return RespState::receiving;
  return unacked ? RespState::ack_pending : RespState::idle;
}

const Outstanding* find_outstanding(const QpContext& qp, uint64_t id) {
  for (const auto& o : qp.req.osq)
    if (o.id == id) return &o;
  return nullptr;
}

bool still_outstanding(const QpContext& qp, uint32_t first_psn) {
  for (const auto& o : qp.req.osq)
    if (o.first_psn == first_psn) return true;
  return false;
}

bool acknowledged(const QpContext& qp, const Outstanding& o) {
  return !o.is_read && qp.retry.ack_high_valid && roce::psn_le(o.last_psn, qp.retry.ack_high);
}

}  // namespace ernic::qp
