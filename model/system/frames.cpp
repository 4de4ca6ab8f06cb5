// model/system: the frames the taps see: one record a frame (FrameRec), the
// monitors and the compliance checker fed as each frame leaves a CMAC, the
// commit time of a request, the transaction log's frame lines.
#include "model/system/system.h"

#include <fmt/format.h>

#include "model/link/pfc.h"
#include "model/roce/cm.h"
#include "model/roce/opcodes.h"

namespace ernic {

using namespace sc_core;

std::string FrameRec::str() const {
  std::string o = fmt::format("{:12.6f} us #{:<4} ", double(t_ps) / 1e6, index);
  if (!roce) return o + fmt::format("non-RoCE len={}", len);
  o += fmt::format("{:<18} psn=0x{:06x} qp={} len={}", roce::opcode_name(uint8_t(opcode)), psn, dest_qp, len);
  if (syndrome >= 0) o += fmt::format(" syn=0x{:02x} msn={}", syndrome, msn);
  if (!mad.empty()) o += " " + mad;
  return o;
}

// When node n committed the RoCE frame r to its TX datapath: the oldest
// commit with r's opcode, PSN and QP among the first few still unmatched
// (frames leave in the order they were committed; a frame lost inside the
// datapath leaves its commit behind). nullopt: not a frame of the NIC.
std::optional<uint64_t> System::commit_time(Node& n, const FrameRec& r) {
  if (!r.roce) return std::nullopt;
  auto& q = n.tx_commits;
  for (size_t k = 0; k < q.size() && k < 8; ++k)
    if (q[k].opcode == r.opcode && q[k].psn == r.psn && q[k].dest_qp == r.dest_qp) {
      const uint64_t t = q[k].t_ps;
      q.erase(q.begin(), q.begin() + long(k) + 1);
      return t;
    }
  return std::nullopt;
}

FrameRec System::summarize(const FrameBytes& f, uint64_t t_ps, uint64_t index) {
  // The payload only for a CM MAD's name (a UD SEND): not copied otherwise.
  std::optional<roce::Frame> d = roce::decode_headers(f.data(), f.size());
  if (d && d->bth.opcode == roce::op::UD_SEND_ONLY) d = roce::decode(f);
  return summarize(f, d, t_ps, index);
}

FrameRec System::summarize(const FrameBytes& f, const std::optional<roce::Frame>& d, uint64_t t_ps, uint64_t index) {
  FrameRec r;
  r.t_ps = t_ps;
  r.index = index;
  r.len = uint32_t(f.size());
  if (d) {
    r.roce = true;
    r.opcode = d->bth.opcode;
    r.psn = d->bth.psn;
    r.dest_qp = d->bth.dest_qp;
    r.ack_req = d->bth.ack_req;
    r.src = d->src_ip();
    r.dst = d->dst_ip();
    if (d->aeth) {
      r.syndrome = d->aeth->syndrome;
      r.msn = d->aeth->msn;
    }
    if (d->bth.opcode == roce::op::UD_SEND_ONLY && d->payload.size() >= roce::cm::kMadLen)
      if (auto m = roce::cm::decode_mad(d->payload.data(), d->payload.size()))
        r.mad = roce::cm::attr_name(m->hdr.attr_id);
  }
  return r;
}

int System::peer_of(size_t i, const uint8_t* frame, size_t len, bool tx) const {
  if (!scenario.topology_switch) return nodes.size() == 2 ? int(1 - i) : -1;  // the one link's other end
  // A pause frame ends at the MAC it is sent to: between a node and the
  // switch, whatever MAC it carries (a node's own MAC may be the one a
  // switch port sends its pause frames from).
  if (pfc::is_mac_control(frame, len)) return -1;
  const size_t off = tx ? 0 : 6;                                 // destination / source MAC
  if (len < off + 6) return -1;
  const int p = port_of_mac(frame + off);
  return p == int(i) ? -1 : p;
}

// A frame node me (index from) sent to node `to` on direction out: its
// record, the pair's wire monitor (violations are model errors,
// split_monitor.cpp), the compliance checker, the log.
void System::on_tx_frame(Node* me, size_t from, size_t to, DirFrames* out, LinkTrace* lt, const FrameBytes& f,
                         uint64_t t) {
  lt->on_tx(f, t);
  const std::optional<roce::Frame> d = roce::decode(f);  // once, for the record and both checkers
  out->tx.push_back(summarize(f, d, t, out->tx.size()));
  monitor_frame(from, to, f, d ? &*d : nullptr, t, commit_time(*me, out->tx.back()));
  const size_t reported = compliance.reports().size();
  if (d) compliance.on_frame(*d, t, out->name);
  for (size_t k = reported; k < compliance.reports().size(); ++k) {
    const ComplianceReport& c = compliance.reports()[k];
    ctx.event("compliance " + c.dir, fmt::format("{}: {} (QP{} PSN 0x{:06x}; {})", c.rule, c.detail, c.dest_qp,
                                                 c.psn, ComplianceChecker::rule_text(c.rule)));
    if (scenario.compliance == ComplianceMode::fail)
      fail(SourceLoc{}, fmt::format("PG332 compliance ({}): {} on {} QP{} PSN 0x{:06x}", c.rule, c.detail,
                                    c.dir, c.dest_qp, c.psn));
  }
  if (ctx.log) log_frame(*me, "tx", out->name, out->tx.back());
  frame_ev_.notify(SC_ZERO_TIME);
}

void System::log_frame(const Node& n, const char* dir, const std::string& link, const FrameRec& r) {
  FrameFields ff;
  ff.len = r.len;
  ff.roce = r.roce;
  std::optional<uint32_t> qp;
  if (r.roce) {
    ff.opcode = r.opcode;
    ff.opname = roce::opcode_name(uint8_t(r.opcode));
    ff.psn = r.psn;
    ff.dest_qp = r.dest_qp;
    ff.ack_req = r.ack_req;
    if (r.syndrome >= 0) {
      ff.syndrome = uint8_t(r.syndrome);
      ff.msn = r.msn;
    }
    ff.mad = r.mad;
    ff.src = r.src.str();
    ff.dst = r.dst.str();
    // The local QP: the destination QP for a received frame; for a sent one
    // the QP whose remote is the frame's destination QP (QP1 for CM).
    if (std::string(dir) == "rx" || r.dest_qp == 1) {
      qp = r.dest_qp;
    } else if (n.driver) {
      for (const auto& c : n.driver->connections()) {
        // With a switch several peers may use one QPN: the frame's destination address tells them apart.
        if (scenario.topology_switch && !ff.dst.empty() && (c->ipv6 ? c->remote_ip6.str() : c->remote_ip.str()) != ff.dst) continue;
        if (c->qpn && c->remote_qpn == r.dest_qp && c->state != host::VerbsState::Reset) qp = c->qpn;
      }
    } else if (n.peer) {  // kind: peer: its QP towards that QPN
      for (const auto& [qpn, pq] : n.peer->qps())
        if (pq.remote_qpn == r.dest_qp) qp = qpn;
    } else if (n.ernic) {  // a program's host keeps its connections: the NIC's enabled QP towards that QPN
      const regs::Layout& L = n.ernic->config().layout;
      for (uint32_t q = 2; q <= n.cfg.num_qp; ++q)
        if ((n.ernic->peek(L.qp(q, regs::q::QPCONFi)) & regs::fld::QPCONFi_EN.bit()) &&
            regs::fld::DESTQPCONFi_QPN.get(n.ernic->peek(L.qp(q, regs::q::DESTQPCONFi))) == r.dest_qp)
          qp = q;
    }
  }
  ctx.log->frame(r.t_ps, n.cfg.name, "cmac", cmac_clk.cycle_at(r.t_ps), qp, dir, link, r.index, ff);
}

}  // namespace ernic
