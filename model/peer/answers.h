// model/peer: the frames the ideal peer's responder sends (IBTA vol. 1
// chapter 9: acknowledgements and RDMA READ responses): ACK / NAK (RC_ACK with an AETH) and READ responses
// (FIRST / MIDDLE / LAST or ONLY; an AETH on FIRST, LAST and ONLY, none on
// MIDDLE; every response but the last carries exactly one PMTU). Built as
// roce::Frame (model/roce/packet.h) and encoded there (lengths, IPv4
// checksum, pad, ICRC). Plain C++.
#pragma once
#include <cstdint>
#include <vector>

#include "model/peer/peer_qp.h"
#include "model/roce/packet.h"

namespace ernic::peer {

// The headers every frame of QP q to its remote carries: Ethernet, IPv4 or
// IPv6 (by the QP's addresses), UDP (4791, the QP's source port), a BTH to
// the remote QPN; opcode, PSN and AckReq left to the caller.
roce::Frame frame_to_remote(const PeerConfig& self, const PeerQp& q);

// An RC_ACK at `psn` with AETH {syndrome, q.msn}.
roce::Frame make_ack(const PeerConfig& self, const PeerQp& q, uint32_t psn, uint8_t syndrome);

// The READ responses to a READ request at `psn` whose data is `data`
// (its DMA length): ceil(len / PMTU) packets, at least one, at PSNs psn,
// psn + 1, ...; AETH {ack_syndrome, q.msn} on FIRST, LAST and ONLY.
std::vector<roce::Frame> make_read_responses(const PeerConfig& self, const PeerQp& q, uint32_t psn,
                                             const roce::Bytes& data, uint8_t ack_syndrome);

// Packets a READ of len bytes takes at PMTU pmtu (its PSN span): ceil(len /
// pmtu), at least 1 (IBTA 9.7.1: a zero-length READ has one response).
constexpr uint32_t read_span(uint64_t len, uint32_t pmtu) {
  return len == 0 ? 1 : uint32_t((len + pmtu - 1) / pmtu);
}

}  // namespace ernic::peer
