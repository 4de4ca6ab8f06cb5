// model/peer: see answers.h.
#include "model/peer/answers.h"

#include <algorithm>

#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic::peer {

roce::Frame frame_to_remote(const PeerConfig& self, const PeerQp& q) {
  roce::Frame f;
  f.eth.src = self.mac;
  f.eth.dst = q.remote_mac;
  f.ipv6 = q.remote_ip.v6;
  if (f.ipv6) {
    f.eth.ethertype = roce::kEtherTypeIpv6;
    f.ip6.src = q.local_ip.ip6;
    f.ip6.dst = q.remote_ip.ip6;
  } else {
    f.eth.ethertype = roce::kEtherTypeIpv4;
    f.ip4.src = q.local_ip.ip4;
    f.ip4.dst = q.remote_ip.ip4;
  }
  f.udp.sport = q.udp_sport;
  f.udp.dport = roce::kRoceUdpPort;
  f.bth.dest_qp = q.remote_qpn & roce::kPsnMask;
  return f;
}

roce::Frame make_ack(const PeerConfig& self, const PeerQp& q, uint32_t psn, uint8_t syndrome) {
  roce::Frame f = frame_to_remote(self, q);
  f.bth.opcode = roce::op::RC_ACK;
  f.bth.psn = psn & roce::kPsnMask;
  f.aeth = roce::Aeth{syndrome, q.msn & roce::kPsnMask};
  return f;
}

std::vector<roce::Frame> make_read_responses(const PeerConfig& self, const PeerQp& q, uint32_t psn,
                                             const roce::Bytes& data, uint8_t ack_syndrome) {
  const uint32_t n = read_span(data.size(), q.pmtu);
  std::vector<roce::Frame> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    roce::Frame f = frame_to_remote(self, q);
    f.bth.psn = roce::psn_add(psn, i);
    f.bth.opcode = n == 1            ? roce::op::RC_READ_RESP_ONLY
                   : i == 0          ? roce::op::RC_READ_RESP_FIRST
                   : i + 1 == n      ? roce::op::RC_READ_RESP_LAST
                                     : roce::op::RC_READ_RESP_MIDDLE;
    if (f.bth.opcode != roce::op::RC_READ_RESP_MIDDLE) f.aeth = roce::Aeth{ack_syndrome, q.msn & roce::kPsnMask};
    const size_t off = size_t(i) * q.pmtu;
    const size_t len = std::min<size_t>(q.pmtu, data.size() - std::min(off, data.size()));
    f.payload.assign(data.begin() + long(off), data.begin() + long(off + len));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ernic::peer
