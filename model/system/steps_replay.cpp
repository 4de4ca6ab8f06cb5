// model/system: the replay step (scenarios/README.md, replay): a peer node
// plays one side of a real capture's RC connection against an ERNIC node
// over the scenario's wire (model/replay/replay.h does the plan, the
// driving and the comparison). The peer puts the capture's frames on its
// MAC as they are (send_frame) and hands the replay the frames the ERNIC
// node sends to the capture side's QPN (start_replay), so taps, pcaps, the
// wire monitor and faults see the replay as any traffic.
#include <fmt/format.h>

#include <filesystem>

#include "model/system/system.h"

namespace ernic {

namespace {

// The capture's frames onto the peer's MAC, paced by its CMAC.
class PeerLine : public replay::Line {
 public:
  PeerLine(peer::PeerNode& p, double rate_gbps) : p_(p), line_(rate_gbps) {}
  void send(roce::Bytes f) override { p_.send_frame(std::move(f)); }
  uint64_t frame_ps(size_t bytes) const override { return line_.frame_ps(bytes); }

 private:
  peer::PeerNode& p_;
  const LineRate line_;
};

// The step's keys and the two nodes' addresses as the replay's options.
replay::ReplayOptions replay_options(const ReplayStep& s, const Node& n, const Node& p) {
  replay::ReplayOptions o;
  o.file = s.capture;
  o.scenario_keys = true;
  o.requester_side = s.requester_side;
  o.requester_ip = s.requester_ip;
  o.qpn = s.qpn;
  o.requester_qpn = s.requester_qpn;
  o.first_psn = s.first_psn;
  o.psn_delta = s.psn_delta;
  o.va_base = s.va_base;
  o.fast = s.fast;
  o.settle_us = s.settle_us;
  o.report_only = !s.fail_on_difference;
  o.expected = s.expect;
  o.node_mac = n.cfg.mac.str();
  o.peer_mac = p.cfg.mac.str();
  // The nodes' addresses, of the capture connection's IP version when both
  // have one (replay's resolve_addresses picks).
  if (n.cfg.has_ip) o.node_ip4 = n.cfg.ip.str();
  if (p.cfg.has_ip) o.peer_ip4 = p.cfg.ip.str();
  if (n.cfg.ip6) o.node_ip6 = n.cfg.ip6->str();
  if (p.cfg.ip6) o.peer_ip6 = p.cfg.ip6->str();
  return o;
}

}  // namespace

void System::handle(const ReplayStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  Node* p = node(s.from);
  std::filesystem::path path(s.capture);
  if (path.is_relative() && !loc.file.empty()) path = std::filesystem::path(loc.file).parent_path() / path;
  std::string why;
  const auto cap = read_capture(path.string(), &why);
  if (!cap) return fail(loc, fmt::format("replay: capture {}: {}", path.string(), why), 2);
  replay::ReplayOptions o = replay_options(s, *n, *p);
  if (s.node_qpn) {
    o.node_qpn = *s.node_qpn;
  } else if (const auto it = scenario.named_qpns.find(s.node);
             const auto q = n->driver->lowest_free_qpn(it == scenario.named_qpns.end() ? std::set<uint32_t>{} : it->second)) {
    o.node_qpn = *q;
  } else {
    return fail(loc, fmt::format("replay: node {} has no free QP", s.node), 2);
  }
  replays_.push_back(std::make_unique<replay::Replay>());
  replay::Replay& r = *replays_.back();
  Node::ReplayRecord rec;
  rec.at = loc.str();
  rec.capture = s.capture;
  rec.side = s.requester_side ? "requester" : "responder";
  rec.against = s.node;
  if (const std::string w = r.plan(cap->frames, o); !w.empty()) return fail(loc, "replay: " + w, 2);
  const std::string scope = "replay " + s.from;
  const roce::IpAddr node_ip = r.node_ip();
  const uint32_t qpn = r.capture_qpn();
  const bool taken = p->peer->start_replay(
      qpn,
      [&r, node_ip](const roce::Frame& f, const FrameBytes& b) {
        if (f.src_ip() != node_ip) return false;  // not the ERNIC node's
        r.node_frame(b, sc_core::sc_time_stamp().value());
        return true;
      },
      &why);
  if (!taken) return fail(loc, fmt::format("replay: peer {}: {}", s.from, why), 2);
  if (s.requester_side) monitor_connection(s.node, o.node_qpn, s.from, qpn);
  else monitor_connection(s.from, qpn, s.node, o.node_qpn);
  PeerLine line(*p->peer, p->cmac->params().rate_gbps);
  ++bounded_;  // paced by the capture: quiet stretches are not a stall
  r.run(*n->driver, *n->mem, line, false);
  --bounded_;
  p->peer->end_replay(qpn);
  const replay::Verdict v = r.judge({});
  rec.lines = r.take_lines();
  rec.code = v.code == 2 ? 2 : (v.unexplained || v.missing) ? 1 : 0;  // whether or not it fails the run
  rec.summary = v.summary;
  ctx.event(scope, fmt::format("{} side of {} against {}: {}", rec.side, s.capture, s.node,
                               v.code == 2 ? "not replayed" : v.summary));
  for (const std::string& l : rec.lines)
    if (l.rfind("diff", 0) == 0 || l.rfind("expected difference", 0) == 0) ctx.event(scope, l);
  p->replays.push_back(rec);
  if (v.code == 2) {
    std::string all;
    for (const auto& e : v.setup_errors) all += (all.empty() ? "" : "; ") + e;
    return fail(loc, "replay: cannot replay: " + all, 2);
  }
  if (v.code == 1) {
    std::string first;
    for (const std::string& l : rec.lines)
      if (l.rfind("diff: ", 0) == 0 || l.rfind("expected difference not seen", 0) == 0) {
        first = l;
        break;
      }
    fail(loc, fmt::format("replay of {} ({} side): {} unexplained difference(s), {} expected not seen; first: {}",
                          s.capture, rec.side, v.unexplained, v.missing, first));
  }
}

}  // namespace ernic
