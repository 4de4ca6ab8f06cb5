// model/peer: the ideal peer's RC responder (IBTA vol. 1 chapter 9: PSNs,
// request execution, ACK/NAK generation, responder errors), on decoded frames, with no time: what a request packet does to
// the QP and the peer's memory, and the answers it causes, in order.
// Plain C++ over the host memory; the node (peer.h) adds the timing.
//
// A request to QP q with PSN p, ePSN e (PSN classes as
// ../shared/spec/ernic-pg332.md section 9 states them):
//   duplicate (p in [e - 2^23, e - 1]): not executed again; a SEND / WRITE
//     packet with AckReq is re-ACKed at e - 1 with the current MSN; a READ
//     is executed again (its responses from p, with the current MSN).
//   out of sequence (beyond e): dropped; one NAK-PSN sequence error
//     (syndrome 0x60) at e, no second one until e arrives.
//   expected: checked, then executed:
//     opcode sequence (FIRST, MIDDLE*, LAST or ONLY of one kind), payload
//       (FIRST / MIDDLE exactly one PMTU with no pad, LAST / ONLY at most
//       one), a WRITE's bytes against its RETH DMA length, a SEND's against
//       the receive element: NAK invalid request (0x61);
//     R_Key, access right and bounds of a WRITE's or READ's RETH
//       (PeerMrTable::check): NAK remote access error (0x62) at p;
//     atomics (not supported): NAK invalid request.
//     After a NAK other than the sequence error the QP is in the Error
//     state (IBTA: such responder errors end the connection) and drops
//     every frame.
//   The MSN counts completed messages: a SEND / WRITE at its LAST or ONLY
//   packet, a READ when it is accepted (its responses carry it).
//   ACKs: an RC_ACK at p for every packet with AckReq, and every
//   `ack_every_packets` packets without one when that is > 0; its AETH
//   credit count is the receive queue's (PeerConfig::credits_invalid).
//   READ responses (answers.h) acknowledge every request before them.
#pragma once
#include <vector>

#include "model/host/host_memory.h"
#include "model/peer/mr_table.h"
#include "model/peer/peer_qp.h"
#include "model/roce/packet.h"

namespace ernic::peer {

class Responder {
 public:
  Responder(const PeerConfig& cfg, HostMemory& mem, const PeerMrTable& mrs) : cfg_(cfg), mem_(mem), mrs_(mrs) {}

  // A request packet (RC SEND, WRITE, READ request or atomic) to QP q; its
  // answers are appended to out in the order they go on the wire.
  void on_request(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out);

  // The AETH syndrome of an ACK from q (its credit count).
  uint8_t ack_syndrome(const PeerQp& q) const;

 private:
  void duplicate(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out);
  // An accepted READ request: the MSN, its responses, the next ePSN.
  void read(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out);
  // The payload of an accepted SEND / WRITE packet; false after a NAK.
  bool write_payload(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out);
  bool send_payload(PeerQp& q, const roce::Frame& f, std::vector<roce::Frame>& out);
  // A NAK at psn; every code but the sequence error puts q in Error.
  void nak(PeerQp& q, uint32_t psn, uint8_t syndrome, const std::string& why, std::vector<roce::Frame>& out);

  const PeerConfig& cfg_;
  HostMemory& mem_;
  const PeerMrTable& mrs_;
};

}  // namespace ernic::peer
