// model/system: a node of `kind: peer` (model/peer/peer.h): its host
// memory (built by the Node constructor), a CMAC as every node's, and the
// ideal peer on it. Nothing else: the node's ernic, pcie, datapath, axil
// and driver stay null.
#include "model/system/system.h"

namespace ernic {

void Node::build_peer(const NodeConfig& c, const ClockDomain& core, const ClockDomain& cmac_clk, SimContext& ctx,
                      const LinkParams& lp) {
  const std::string scope = std::string(this->name());
  cmac = std::make_unique<Cmac>("cmac", cmac_clk, core, ctx, scope + ".cmac", lp);
  cmac->node = c.name;
  std::copy(c.mac.b.begin(), c.mac.b.end(), cmac->mac);
  peer::PeerConfig pc;
  pc.node = c.name;
  pc.mac = c.mac;
  pc.ip = c.ip;
  pc.has_ip = c.has_ip;
  pc.ip6 = c.ip6;
  pc.latency_ps = c.peer->latency_ns * 1000;
  pc.ack_every_packets = c.peer->ack_every_packets;
  pc.credits_invalid = c.peer->credits_invalid;
  pc.ack_timeout_ps = c.peer->ack_timeout_ns * 1000;
  pc.max_reads = c.peer->max_reads;
  peer = std::make_unique<peer::PeerNode>("peer", pc, *mem, *cmac, ctx, scope + ".peer");
}

const host::Mr* Node::find_mr(const std::string& name) const {
  if (driver) return driver->find_mr(name);
  auto it = peer_mrs.find(name);
  return it == peer_mrs.end() ? nullptr : &it->second;
}

}  // namespace ernic
