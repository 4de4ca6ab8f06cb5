// model/qp: one QP's context inside the ERNIC model, split by role. The
// architectural part lives in the per-QP registers (model/regs: QPCONFi,
// SQPIi, SQPSNi, LSTRQREQi, STATQPi, ...); this is the state the hardware
// keeps beside them: the QP manager's view of the SQ and its WQE cache, the
// requester's outstanding queue (OSQ), the responder's message and ACK
// state, and the retransmission state. Plain data: PG332's blocks
// (model/ernic) read and change it; the QP state machine is qp_state.h.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "model/qp/qp_state.h"
#include "model/regs/wqe.h"

namespace ernic::qp {

// One entry of the outstanding queue: a WQE sent and not yet completed.
struct Outstanding {
  uint64_t id = 0;               // unique for the run: a retransmission names the WQE it belongs to
  uint16_t wrid = 0;
  uint8_t wqe_opcode = 0;
  uint32_t first_psn = 0, last_psn = 0;
  bool is_read = false;
  uint64_t laddr = 0;
  uint32_t length = 0;
  // What a retransmission needs (the WQE is fetched again for timing).
  uint32_t sq_idx = 0;           // SQ index of the WQE
  uint32_t ssn = 0;              // STATSSNi before this WQE (MSN rollback)
  uint64_t roffset = 0;
  uint32_t rtag = 0, immdt = 0;
  bool inline_data = false;      // a SEND of <= 16 bytes: the payload is the WQE's SDATA (A-ERNIC-21)
  std::array<uint8_t, pg332::kInlineMax> sdata{};
  std::vector<uint32_t> bufs;    // write-retry buffers holding a WRITE's payload (empty: none)
  uint64_t payload_issued_ps = 0;  // first transmission: when its first payload read was issued
  // READ only: how far the responses have come.
  uint32_t resp_psn = 0;         // PSN of the next expected READ response
  uint32_t resp_off = 0;         // bytes written to LADDR so far
  uint32_t req_psn = 0;          // PSN of the latest READ_REQUEST sent for it
  // A re-issue has been asked for: out-of-sequence responses are ignored
  // (stragglers of an earlier request, or a loss the local ACK timer
  // recovers) until the READ completes; no second go-back is started by
  // them (A-ERNIC-12).
  bool reissue_wait = false;
};

// A WQE fetched ahead into the WQE cache (PG332 QPMSTS; A-ERNIC-24).
struct CachedWqe {
  std::array<uint8_t, pg332::kWqeBytes> w{};
  uint32_t sq_idx = 0;
  bool ok = true;                // false: the fetch failed (outside host memory)
  uint64_t issued_ps = 0;        // when its fetch completed and its payload read was issued
};

// The QP manager's prefetch state.
struct PrefetchCtx {
  std::deque<CachedWqe> cache;   // prefetched, not yet processed (SQ order from sq_ci)
  uint32_t pf_ci = 0;            // next SQ index to prefetch
  uint32_t pf_gen = 0;           // bumped whenever the cache is dropped
};

// The requester: SQ pointers, the outstanding queue, its limits.
struct RequesterCtx {
  uint32_t sq_ci = 0;            // next WQE index to fetch (mod depth)
  uint32_t sq_pi = 0;            // SQPIi as the QP manager sees it (doorbell latency applied)
  std::deque<Outstanding> osq;
  uint32_t max_out = 16;         // outstanding-request limit: 16, cut to 8 by the first CNP (PG332)
  uint32_t buf_need = 0;         // write-retry buffers the next WQE waits for (0: none)
};

// The responder: the message being received and the ACKs owed.
struct ResponderCtx {
  ResponderState rs;             // the responder's sub-state flags (qp_state.h)
  uint64_t wr_phys = 0;          // next byte of a multi-packet WRITE
  uint64_t wr_left = 0;          // bytes the RETH still allows
  uint64_t send_off = 0;         // bytes written into the current RQ element
  uint32_t unacked_psn = 0;      // the newest accepted packet not covered by an ACK
  uint64_t ack_due_ps = 0;       // coalescing timeout (0: none)
  bool ack_fire = false;         // the timeout passed: the RX handler sends the ACK
  RespState state() const { return rs.state(); }
};

// Retransmission: go-back-N, the local ACK timer, RNR waits.
struct RetryCtx {
  uint32_t resend_psn = 0;       // a go-back resends from here (RequesterState::retransmit_pending)
  bool resending = false;        // QpMgr::resend is sending a WQE again (SQPSNi: its next PSN)
  uint32_t gen = 0;              // bumped by every rollback
  bool ack_high_valid = false;   // the highest PSN an ACK or NAK has acknowledged (retire_acked)
  uint32_t ack_high = 0;
  uint32_t rnr_psn = 0;          // the PSN the running RNR wait resends
  uint32_t retry_cnt = 0, rnr_cnt = 0;  // retries since the last progress
  // Retries in a row while the same WQE was the oldest outstanding
  // (Outstanding::id; progress in between resets retry_cnt, not this): a
  // livelock when it keeps growing (SimContext::livelock_retries).
  uint64_t head_wqe_id = 0;
  uint32_t head_wqe_retries = 0;
  uint64_t ack_deadline_ps = 0;  // local ACK timeout (0: not running)
};

struct QpContext {
  uint32_t qpn = 0;
  bool enabled = false;          // QPCONFi[0] as the hardware took it
  RequesterState rs;             // the requester's sub-state flags (qp_state.h)
  RequesterCtx req;
  ResponderCtx resp;
  RetryCtx retry;
  PrefetchCtx prefetch;
  ReqState req_state() const { return rs.state(!req.osq.empty()); }
};

// The outstanding WQE with this id (nullptr: completed).
const Outstanding* find_outstanding(const QpContext& qp, uint64_t id);
// The outstanding WQE whose first PSN is first_psn is still there.
bool still_outstanding(const QpContext& qp, uint32_t first_psn);
// A WRITE or SEND still in the outstanding queue that an ACK or NAK has
// covered: it waits there only because a READ before it has not completed
// (completions come in order), and is never resent.
bool acknowledged(const QpContext& qp, const Outstanding& o);

}  // namespace ernic::qp
