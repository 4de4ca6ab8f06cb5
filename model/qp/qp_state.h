// model/qp: the QP state machine of the ERNIC IP (PG332 v3.1 chapter 6,
// "QP state"; the per-QP registers QPCONFi and STATQPi show it).
//
// The hardware state (what QPCONFi[0] enable, QPCONFi[6] under recovery and
// STATQPi[0] fatal say), with the transitions PG332's flows make:
//
//   from         event                                   to          PG332
//   disabled     QPCONFi[0] <- 1 (connection set up)     enabled     6, QP initialisation
//   enabled      a fatal error (error-status queue code) fatal       2, errors / 6, "fatal"
//   enabled      QPCONFi[0] <- 0                         disabled    6, QP deletion
//   fatal        QPCONFi[6] <- 1, [0] <- 0               recovery    6, recovery flow
//   recovery     QPCONFi[0] <- 1 (with [6])              enabled     6, recovery flow (fatal cleared)
//   fatal        QPCONFi[0] <- 0                         disabled    6, QP deletion
//   any          register reset                          disabled
//
// Below the hardware state the QP has two sub-states, one per direction,
// each a classification of its own stored flags (nothing else decides
// them; the waveform shows them as qpN.req_state / qpN.resp_state):
//
//   requester   RNR_WAIT     an RNR NAK's wait runs (it wins over the rest)
//               RETRANSMIT   a go-back-N is pending or under way
//               SENDING      the WQE processor transmits one of its WQEs
//               WAIT_ACK     requests outstanding, nothing to send
//               IDLE         nothing outstanding
//   responder   RNR_NAK_SENT the last SEND FIRST/ONLY found the RQ full
//               NAK_PSN_SENT a PSN sequence NAK is out (sent once a gap)
//               RECEIVING    inside a multi-packet WRITE or SEND
//               ACK_PENDING  accepted packets wait for a coalesced ACK
//               IDLE
//
// Both directions' flags change only through the named transitions below,
// called by PG332's blocks (model/ernic): the requester's by qp_mgr
// (begin_send/end_send, end_retransmit) and resp_hndler (begin_retransmit,
// rnr_wait, rnr_expired), the responder's by rx_pkt_hndler.
// The IB verbs states (RESET..ERR) are the driver's bookkeeping (model/host).
#pragma once
#include <cstdint>

namespace ernic::qp {

enum class HwState : uint8_t { disabled, enabled, recovery, fatal };
const char* name(HwState s);

// Waveform codes (trigger expressions name them: rtl(A.qp2.req_state) == WAIT_ACK).
enum class ReqState : uint8_t { idle = 0, sending = 1, wait_ack = 2, retransmit = 3, rnr_wait = 4 };
enum class RespState : uint8_t { idle = 0, receiving = 1, ack_pending = 2, nak_psn_sent = 3, rnr_nak_sent = 4 };

// The hardware state from QPCONFi and STATQPi (the registers are the
// record; this names what they say).
HwState hw_state(uint32_t qpconf, uint32_t statqp);

// The requester's flags and their transitions.
class RequesterState {
 public:
  // The WQE processor starts / ends transmitting a WQE (or a go-back).
  void begin_send() { sending_ = true; }
  void end_send() { sending_ = false; }
  // A go-back-N was asked for (NAK-PSN, implied NAK, timeout, RNR NAK).
  void begin_retransmit() { resend_pending_ = true; }
  // Everything from the go-back point has been sent again (or nothing is
  // left to send), or the QP was reset, went fatal or disabled.
  void end_retransmit() { resend_pending_ = false; }
  // An RNR NAK: no request until until_ps (> 0).
  void rnr_wait(uint64_t until_ps) { rnr_until_ps_ = until_ps; }
  void rnr_expired() { rnr_until_ps_ = 0; }

  bool sending() const { return sending_; }
  bool retransmit_pending() const { return resend_pending_; }
  bool in_rnr_wait() const { return rnr_until_ps_ != 0; }
  uint64_t rnr_until_ps() const { return rnr_until_ps_; }
  ReqState state(bool outstanding) const;

 private:
  bool sending_ = false;
  bool resend_pending_ = false;
  uint64_t rnr_until_ps_ = 0;
};

// The responder's sub-state from its flags (priority: RNR_NAK_SENT,
// NAK_PSN_SENT, RECEIVING, ACK_PENDING, IDLE).
RespState resp_state(bool rnr_nak_sent, bool nak_psn_sent, bool in_message, uint32_t unacked);

// The responder's flags and their transitions.
class ResponderState {
 public:
  // A packet beyond the expected PSN: a NAK-PSN went out (sent once a gap);
  // the expected PSN arrived.
  void psn_nak_sent() { nak_psn_sent_ = true; }
  void psn_in_sequence() { nak_psn_sent_ = false; }
  // A SEND FIRST/ONLY found the RQ full: an RNR NAK went out; a SEND found
  // room.
  void rnr_nak_sent() { rnr_nak_sent_ = true; }
  void rq_room() { rnr_nak_sent_ = false; }
  // Inside a WRITE or SEND message (its payload being written) / its last
  // packet taken.
  void begin_message() { in_message_ = true; }
  void end_message() { in_message_ = false; }
  // A request packet accepted and not yet covered by an ACK (coalescing) /
  // an ACK or NAK went out and covers them.
  void packet_accepted() { ++unacked_; }
  void acked() { unacked_ = 0; }

  bool psn_nak_outstanding() const { return nak_psn_sent_; }
  bool rnr_nak_outstanding() const { return rnr_nak_sent_; }
  bool in_message() const { return in_message_; }
  uint32_t unacked() const { return unacked_; }
  RespState state() const { return resp_state(rnr_nak_sent_, nak_psn_sent_, in_message_, unacked_); }

 private:
  bool nak_psn_sent_ = false;
  bool rnr_nak_sent_ = false;
  bool in_message_ = false;
  uint32_t unacked_ = 0;
};

}  // namespace ernic::qp
