// model/system: the wire steps: fault (rules on a direction's wire), link
// (up or down), and the host's bypass path: bypass_send (non-RoCE frames
// into a CMAC), expect_bypass (what arrived on the peer's bypass path).
#include "model/system/system.h"

#include <fmt/format.h>

#include <algorithm>

namespace ernic {

using namespace sc_core;

// Direction X->Y's line: the wire of a point-to-point link, or with a
// switch X's wire to its port, in the flow of the frames to Y (a fault
// there acts before the switch: a dropped frame never reaches it);
// switch->X: the port's wire to X (every frame X gets: a port fault);
// X->switch: X's wire to its port, for the frames of no flow (to the switch
// itself, or to no node's MAC).
std::optional<System::DirWire> System::wire_for(const Direction& d) {
  if (scenario.topology_switch) {
    int from = -1, to = -1;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i]->cfg.name == d.from) from = int(i);
      if (nodes[i]->cfg.name == d.to) to = int(i);
    }
    if (d.from == "switch" && to >= 0) return DirWire{downlinks[size_t(to)].get(), -1};  // the port's wire to X
    if (d.to == "switch" && from >= 0) return DirWire{uplinks[size_t(from)].get(), -1};  // X's frames of no flow
    if (from < 0 || to < 0 || from == to) return std::nullopt;
    return DirWire{uplinks[size_t(from)].get(), to};
  }
  if (!wire_ab) return std::nullopt;
  const std::string name = d.from + "->" + d.to;
  if (wire_ab->label == name) return DirWire{wire_ab.get(), -1};
  if (wire_ba->label == name) return DirWire{wire_ba.get(), -1};
  return std::nullopt;
}

// fault: a fault rule on each named direction's wire.
void System::handle(const FaultStep& s, const SourceLoc& loc, Group*) {
  for (const Direction& d : s.dirs) {
    auto w = wire_for(d);
    if (!w) return fail(loc, "no link " + d.from + "->" + d.to);
    FaultRule r;
    r.name = s.name;
    r.opcodes = s.match.opcodes;
    r.psn = s.match.psn;
    r.dest_qp = s.match.dest_qp;
    r.nth = s.match.nth;
    r.probability = s.match.probability;
    r.kind = FaultKind(int(s.action));
    r.count = s.count;
    r.reorder_after = s.reorder_after;
    r.delay_ps = s.delay_ns * 1000;
    r.corrupt_byte = s.corrupt_byte;
    r.corrupt_field = s.corrupt_field;
    r.corrupt_bit = s.corrupt_bit;
    r.corrupt_value = s.corrupt_value;
    r.repair = s.repair;
    w->faults().add_rule(r);
  }
}

// link: each named direction up or down; the QP-setup blocks told.
void System::handle(const LinkStep& s, const SourceLoc& loc, Group*) {
  for (const Direction& d : s.dirs) {
    auto w = wire_for(d);
    if (!w) return fail(loc, "no link " + d.from + "->" + d.to);
    w->faults().set_link_up(s.up);
  }
  for (auto& n : nodes)
    if (n->qp_setup) n->qp_setup->link_changed();
}

// bypass_send: non-RoCE frames (raw EtherType or IPv4/UDP) into the
// source CMAC, kept for expect_bypass (split: built in every process from
// the scenario, sent by the source's).
void System::handle(const BypassSendStep& s, const SourceLoc& loc, Group*) {
  Node* src = node(s.node);
  Node* dst = node(s.to);
  const bool udp = s.udp_dport.has_value();
  if (udp && (!src->cfg.has_ip || !dst->cfg.has_ip))
    return fail(loc, "bypass_send with udp_dport needs IPv4 addresses on both nodes");
  for (uint32_t k = 0; k < s.count; ++k) {
    FrameBytes fr(14 + (udp ? 28 : 0) + s.length, 0);
    std::copy_n(dst->cfg.mac.b.data(), 6, fr.begin());
    std::copy_n(src->cfg.mac.b.data(), 6, fr.begin() + 6);
    const uint16_t et = udp ? 0x0800 : *s.ethertype;
    fr[12] = uint8_t(et >> 8);
    fr[13] = uint8_t(et);
    size_t off = 14;
    if (udp) {  // IPv4 (DF, TTL 64, protocol 17) + UDP (source port 49152, no checksum)
      uint8_t* ip = fr.data() + 14;
      const uint16_t total = uint16_t(20 + 8 + s.length);
      ip[0] = 0x45;
      ip[2] = uint8_t(total >> 8);
      ip[3] = uint8_t(total);
      ip[6] = 0x40;
      ip[8] = 64;
      ip[9] = 17;
      for (int i = 0; i < 4; ++i) {
        ip[12 + i] = uint8_t(src->cfg.ip.v >> (24 - 8 * i));
        ip[16 + i] = uint8_t(dst->cfg.ip.v >> (24 - 8 * i));
      }
      const uint16_t c = roce::ipv4_checksum(ip);
      ip[10] = uint8_t(c >> 8);
      ip[11] = uint8_t(c);
      uint8_t* u = ip + 20;
      u[0] = 0xC0;
      u[2] = uint8_t(*s.udp_dport >> 8);
      u[3] = uint8_t(*s.udp_dport);
      u[4] = uint8_t((8 + s.length) >> 8);
      u[5] = uint8_t(8 + s.length);
      off = 14 + 28;
    }
    fill_pattern(fr.data() + off, s.length, s.pattern, s.seed + k, s.value, 0);
    bypass_sent_[s.to].push_back(fr);  // split: every process keeps them, the receiver's checks them
    if (local(s.node)) src->cmac->tx_push(std::move(fr));  // non_roce_dma_s_axis, merged into cmac_m_axis
  }
}

// expect_bypass: the frames on the node's bypass path since the previous
// expect_bypass, against those sent.
void System::handle(const ExpectBypassStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  size_t& done = bypass_checked_[s.node];
  const uint64_t deadline = sc_time_stamp().value() + s.timeout_us * 1000000ull;
  auto short_of = [&] { return n->bypass_rx.size() < done + s.count; };
  // Judged once the instant has settled, lane by lane: a frame taken at
  // the deadline's instant counts whichever ran first, the timeout or the
  // frame (a split run's link thread delivers it in a delta cycle of its
  // own), and of two branches' expect_bypass on one node woken at one
  // instant the one ahead takes the frames first (a break-it finding,
  // tb/data/split/t17, t18, t19); the other waits on for more.
  ++bounded_;
  for (;;) {
    while (short_of() && sc_time_stamp().value() < deadline)
      wait(sc_time(double(deadline - sc_time_stamp().value()), SC_PS), n->bypass_ev);
    settle_in_lane_order(lane().id);  // split: a lane ahead held for the other's word goes first too
    if (!short_of() || sc_time_stamp().value() >= deadline) break;
  }
  --bounded_;
  const size_t got = n->bypass_rx.size() - done;
  if (got != s.count)
    return fail(loc, fmt::format("{} non-RoCE frame(s) on {}'s bypass path since the previous expect_bypass, "
                                 "expected {}", got, s.node, s.count));
  const auto& sent = bypass_sent_[s.node];
  for (size_t i = done; i < done + s.count; ++i) {
    if (i >= sent.size()) {
      fail(loc, fmt::format("bypass frame {} on {} ({} bytes) was not sent by a bypass_send", i, s.node,
                            n->bypass_rx[i].size()));
      break;
    }
    const FrameBytes& a = sent[i];
    const FrameBytes& b = n->bypass_rx[i];
    if (a != b) {
      size_t k = 0;
      while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
      fail(loc, fmt::format("bypass frame {} on {} differs from the one sent: {} bytes sent, {} received, first "
                            "difference at byte {}", i, s.node, a.size(), b.size(), k));
      break;
    }
  }
  done += s.count;
}

}  // namespace ernic
