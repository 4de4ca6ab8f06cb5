// model/scenario: nodes of `kind: peer`, the ideal IBTA peer (model/peer;
// scenarios/README.md, section 4 "nodes"): the node's keys, the steps that
// may name it, its connections (out of band only).
#include "model/scenario/parse.h"

#include <fmt/format.h>

namespace ernic::scenario_parse {

namespace {
// The keys of an ERNIC node a peer has no use for.
const std::vector<std::string> kErnicOnlyKeys = {"ack", "mr_cache", "doorbell_layout", "rx", "test_tx_underflow",
                                                 "test_datapath_corrupt", "qp_setup_fsm", "handshake_random",
                                                 "host", "extensions"};
}  // namespace

void Parser::read_node_peer(MapReader& r, NodeConfig& n) {
  static const EnumTable<bool> kKinds = {{"ernic", false}, {"peer", true}};
  const bool peer = r.enm("kind", false, kKinds);
  auto pf = r.take("peer");
  if (!peer) {
    if (pf) pf->fail_key("peer sets the parameters of a node of kind: peer; this node is kind: ernic");
    return;
  }
  for (const std::string& k : kErnicOnlyKeys)
    if (auto e = r.take(k))
      e->fail_key(k + " is a key of an ERNIC node; node '" + n.name + "' has kind: peer (the ideal IBTA peer)");
  NodeConfig::Peer p;
  if (pf) {
    MapReader pr(*pf, {"latency_ns", "ack_every_packets", "credits", "ack_timeout_ns", "max_reads", "recv_mr"});
    p.latency_ns = pr.u64("latency_ns", p.latency_ns, 0, kMaxDelayNs);
    p.ack_every_packets = uint32_t(pr.u64("ack_every_packets", p.ack_every_packets, 0, 1u << 20));
    static const EnumTable<bool> kCredits = {{"rq", false}, {"invalid", true}};
    p.credits_invalid = pr.enm("credits", false, kCredits);
    p.ack_timeout_ns = pr.u64("ack_timeout_ns", p.ack_timeout_ns, 1, kMaxDelayNs);
    p.max_reads = uint32_t(pr.u64("max_reads", p.max_reads, 1, 1024));
    if (auto m = pr.take("recv_mr")) {
      p.recv_mr = read_name(*m, "MR");
      p.recv_mr_loc = m->loc();
    }
    pr.finish();
  }
  n.peer = p;
}

// What a peer node takes part in: its memory and MRs, out-of-band
// connections, its requester's posts and completions, the wire and the
// expectations on it, time and control.
bool Parser::peer_step_ok(const std::string& kind) {
  static const std::vector<std::string> kOk = {"init",      "register_mr", "fill",          "connect",
                                               "post",      "wait_completions",
                                               "check_memory", "mem_write", "mem_expect",   "wait",
                                               "fault",     "link",        "bypass_send",   "expect_frames",
                                               "expect_idle", "expect_compliance", "expect_switch", "repeat",
                                               "parallel",  "barrier"};
  for (const std::string& k : kOk)
    if (k == kind) return true;
  return false;
}

void Parser::check_peer_connect(const MapReader& r, const ConnectStep& s) {
  const bool pc = peer_node(s.client), ps = peer_node(s.server);
  if (!pc && !ps) return;
  const std::string p = pc ? s.client : s.server;
  if (pc && ps) r.self().fail("both ends have kind: peer; a peer answers an ERNIC node, one end must be one");
  if (!s.program_end.empty()) r.self().fail("a connection with a program end cannot have a peer end (" + p + ")");
  if (s.cm)
    r.self().fail("node " + p + " has kind: peer, which does not speak CM: connect out of band (cm: false)");
  if (s.batch) r.self().fail("batch needs the built-in driver on both ends (" + p + " has kind: peer)");
  // SENDs to the peer land in its recv_mr: an MR registered on it by now.
  const auto& peer_cfg = sc_.nodes[node_index_[p]].peer;
  if (peer_cfg && !peer_cfg->recv_mr.empty()) {
    const auto& mine = mrs_[p];
    const auto it = mine.find(peer_cfg->recv_mr);
    if (it == mine.end())
      r.self().fail(fmt::format("nodes.{}.peer.recv_mr '{}' (line {}): no MR of that name is registered on {} before "
                                "this connect",
                                p, peer_cfg->recv_mr, peer_cfg->recv_mr_loc.line, p));
  }
}

}  // namespace ernic::scenario_parse
