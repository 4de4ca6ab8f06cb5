// model/peer: the ideal peer's RC requester (IBTA vol. 1 chapter 9: PSNs,
// ACK handling, retries), on decoded frames, with the
// time given: what it sends next, and what an answer does to its send
// queue. Plain C++ over the host memory; the node (peer.h) pulls frames
// from it as its CMAC takes them (line rate).
//
// A posted WQE gets the next PSNs: one per packet of a SEND / WRITE
// (ceil(length / PMTU), at least 1), ceil(length / PMTU) (at least 1) for
// a READ, its responses. Packets: FIRST / MIDDLE / LAST or ONLY, RETH on
// a WRITE's FIRST / ONLY and on a READ request, ImmDt (IETH for send_inv)
// on the LAST / ONLY, AckReq on every LAST / ONLY and READ request. At most
// PeerConfig::max_reads READs outstanding; nothing while an RNR wait runs.
// Answers:
//   ACK at p: every SEND / WRITE whose last PSN is at most p is done; an
//     ACK at or past a READ whose responses are not all in is an implied
//     NAK: the READ is re-issued (from its first missing response);
//   READ response: taken only at the next PSN the READ expects (payload
//     placed at its offset, earlier requests acknowledged), else dropped;
//   NAK-PSN at p: what lies before p is acknowledged, go back N to p;
//   RNR NAK at p: the same after the timer its code gives (IBTA Table 45);
//   NAK invalid / remote access / remote operational: the WQE at p
//     completes with the error, the QP is in Error, the rest is flushed
//     with errors.
//   No progress for PeerConfig::ack_timeout_ps with requests outstanding:
//   go back N to the oldest unacknowledged PSN.
// Completions are made in posting order (PeerSendQueue::cq).
#pragma once
#include <optional>

#include "model/host/host_memory.h"
#include "model/peer/peer_qp.h"
#include "model/roce/packet.h"

namespace ernic::peer {

class Requester {
 public:
  Requester(const PeerConfig& cfg, HostMemory& mem) : cfg_(cfg), mem_(mem) {}

  // Appends a WQE to q's send queue (its PSNs assigned).
  void post(PeerQp& q, PeerWqe w, uint64_t now_ps);
  // The next packet q sends now, if any (nullopt: nothing to send, or
  // waiting: READ credits, an RNR wait, the Error state).
  std::optional<roce::Frame> next_frame(PeerQp& q, uint64_t now_ps);
  // An ACK / NAK or a READ response to q. Returns true when it made
  // progress or changed what is to be sent (the node wakes its sender).
  bool on_answer(PeerQp& q, const roce::Frame& f, uint64_t now_ps);
  // The ACK timer: true when it fired (a go-back from the oldest).
  bool check_timeout(PeerQp& q, uint64_t now_ps);
  // When the timer fires, if something is outstanding (nullopt: never).
  std::optional<uint64_t> timeout_at(const PeerQp& q) const;
  // Whether q has anything posted and not sent (or to resend).
  static bool has_work(const PeerQp& q) { return q.req.cursor < q.req.sq.size(); }

 private:
  void ack_upto(PeerQp& q, uint32_t psn, uint64_t now_ps);  // ACK at psn (and what that implies)
  void go_back(PeerQp& q, uint32_t psn);                    // resend from psn
  void retire(PeerQp& q, uint64_t now_ps);                  // done WQEs at the front -> completions
  void fail_all(PeerQp& q, uint8_t syndrome, uint64_t now_ps);
  roce::Frame packet(const PeerQp& q, const PeerWqe& w, uint32_t k) const;  // packet k of w

  const PeerConfig& cfg_;
  HostMemory& mem_;
};

}  // namespace ernic::peer
