// model/replay: a replay in SystemC time (see replay.h). Responder side:
// the driver sets up MRs over the capture's VAs with their preload and one
// RC QP towards the capture's requester, then each rewritten request goes
// to the line at its instant. Requester side: the driver posts the
// requester's messages on one RC QP towards the capture's responder; each
// request ERNIC sends may make due the capture's responder frames that
// followed that request, sent the capture's delay after it (never before
// the request's last byte), in the capture's order, by a process of their own.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "model/regs/regs.h"
#include "model/replay/plan.h"
#include "model/roce/packet.h"

namespace ernic::replay {

namespace {

using namespace sc_core;

// The node's driver: PG332's bring-up (tool) and the other side in the
// neighbour table; the other side's IP (IPv4 or IPv6: the QP's IP
// version, QPCONFi[7]).
roce::IpAddr bring_up(host::Driver& d, const ReplayOptions& o, bool init) {
  if (init) d.init();
  const roce::IpAddr peer_ip = *roce::IpAddr::parse(o.peer_ip);
  const roce::MacAddr mac = *roce::MacAddr::parse(o.peer_mac);
  if (peer_ip.v6) d.add_neighbour(peer_ip.ip6, mac);
  else d.add_neighbour(peer_ip.ip4, mac);
  return peer_ip;
}

void wait_until(uint64_t at_ps) {
  const uint64_t now = sc_time_stamp().value();
  if (at_ps > now) wait(sc_time(double(at_ps - now), SC_PS));
}

}  // namespace

void run_responder(Session& ss, host::Driver& d, HostMemory& mem, Line& line, bool init) {
  const SimSetup& s = ss.p.sim;
  const ReplayOptions& o = ss.opt;
  try {
    const auto peer_ip = bring_up(d, o, init);
    for (size_t i = 0; i < s.mrs.size(); ++i) {
      const SimMr& m = s.mrs[i];
      const uint64_t pa = d.alloc(m.length);
      const host::Mr& mr = d.register_mr_at(fmt::format("replay{}", i), pa, m.va, m.length,
                                            regs::u(regs::val::ACCESSDESC_ACCESS::READ_WRITE), 0);
      ss.rkeys.push_back(mr.rkey);
      for (const auto& [va, bytes] : m.preload) mem.write(pa + (va - m.va), bytes);
    }
    host::QpParams p;
    p.pmtu = s.pmtu;
    p.qpn = o.node_qpn;
    p.start_psn = 0x100;  // the node's own requests: none here
    p.rq_depth = s.rq_depth;
    p.rq_elem_bytes = s.rq_elem_bytes;
    p.pd = 0;
    host::Connection& c = d.prepare(p);
    d.establish(c, s.peer_qpn, s.expected_psn, peer_ip, roce::cm::MrInfo{});
    d.flush_posted(c.qpn);  // the MRs and the QP in ERNIC (its writes are posted)
    const uint64_t t0 = sc_time_stamp().value() + 1000000;  // 1 us after the QP is ready
    for (size_t k = 0; k < s.request_t_ns.size(); ++k) {
      wait_until(o.fast ? t0 : t0 + s.request_t_ns[k] * 1000);
      line.send(s.request(k, ss.rkeys));
    }
    ss.injected_all = true;
  } catch (const std::exception& e) {
    ss.setup_errors.push_back(e.what());
  }
  wait(sc_time(double(o.settle_us) * 1e6, SC_PS));
}

namespace {

// The requester side's answers, in the capture's order among those made
// due: an answer goes when it is due and no answer before it in the capture
// whose request ERNIC has sent is still waiting (a responder's answers are
// ordered: the real requester may have paused mid-message where ERNIC does
// not, which brings a later answer's trigger before an earlier one's due
// time; an answer whose request never comes holds up nothing). The line
// paces them.
void injector(Session* ss, Line* line) {
  const size_t n = ss->p.req.answers.size();
  for (;;) {
    if (ss->stop_injector) return;
    size_t i = 0;
    while (i < n && (ss->answered[i] || !ss->due[i])) ++i;
    if (i == n) {
      wait(ss->due_ev);
      continue;
    }
    const uint64_t now = sc_time_stamp().value();
    if (*ss->due[i] > now) {
      wait(sc_time(double(*ss->due[i] - now), SC_PS), ss->due_ev);
      continue;
    }
    ss->answered[i] = true;
    line->send(ss->p.req.answers[i].frame);
  }
}

}  // namespace

void run_requester(Session& ss, host::Driver& d, HostMemory& mem, Line& line, bool init) {
  const ReqSetup& s = ss.p.req;
  const ReplayOptions& o = ss.opt;
  ss.line = &line;
  ss.answered.assign(s.answers.size(), false);
  ss.due.assign(s.answers.size(), std::nullopt);
  ss.stop_injector = false;
  for (size_t i = 0; i < s.answers.size(); ++i)
    ss.by_trigger[{s.answers[i].trigger_psn, s.answers[i].occurrence}].push_back(i);
  sc_process_handle inj = sc_spawn(sc_bind(&injector, &ss, &line), sc_gen_unique_name("replay_injector"));
  try {
    const auto peer_ip = bring_up(d, o, init);
    std::vector<uint64_t> pa;  // each message's buffer
    for (const ReqMessage& m : s.msgs) {
      pa.push_back(d.alloc(std::max<uint64_t>(m.length, 64)));
      if (!m.data.empty()) mem.write(pa.back(), m.data);
    }
    host::QpParams p;
    p.pmtu = s.pmtu;
    p.qpn = o.node_qpn;
    p.start_psn = s.sq_psn;
    p.sq_depth = 64;
    while (p.sq_depth < s.msgs.size() + 2) p.sq_depth <<= 1;
    p.pd = 0;
    host::Connection& c = d.prepare(p);
    d.establish(c, s.dest_qpn, 0, peer_ip, roce::cm::MrInfo{});
    d.flush_posted(c.qpn);  // the QP in ERNIC (its writes are posted)
    const uint64_t t0 = sc_time_stamp().value() + 1000000;  // 1 us after the QP is ready
    for (size_t k = 0; k < s.msgs.size(); ++k) {
      const ReqMessage& m = s.msgs[k];
      wait_until(o.fast ? t0 : t0 + m.t_ns * 1000);
      host::Wqe q;
      q.wr_id = uint16_t(k);
      q.opcode = m.wqe_opcode;
      q.laddr = pa[k];
      q.length = m.length;
      q.remote_va = m.remote_va;
      q.rkey = m.rkey;
      q.immdt = m.immdt;
      d.post(c, {q}, false, true);
    }
    // Every message completes, or the longest answer delay of the capture
    // plus the settle time passes after the last post.
    uint64_t longest = 0;
    for (const ReqAnswer& a : s.answers) longest = std::max(longest, a.delay_ps);
    const auto got = d.poll(c, uint32_t(s.msgs.size()), longest + uint64_t(o.settle_us) * 1000000);
    for (const auto& q : got) ss.completions.push_back({q.wr_id, q.error});
    wait(sc_time(double(o.settle_us) * 1e6, SC_PS));  // late answers, retransmissions
    for (size_t k = 0; k < s.msgs.size(); ++k) {
      roce::Bytes b(s.msgs[k].length);
      if (!b.empty()) mem.read(pa[k], b.data(), b.size());
      ss.landed.push_back(std::move(b));
    }
    ss.done = true;
  } catch (const std::exception& e) {
    ss.setup_errors.push_back(e.what());
  }
  // The injector ends before the line it sends on may go.
  ss.stop_injector = true;
  ss.due_ev.notify(SC_ZERO_TIME);
  if (!inj.terminated()) wait(inj.terminated_event());
  ss.line = nullptr;
}

void Replay::node_frame(const std::vector<uint8_t>& frame, uint64_t t_ps) {
  Session& ss = *s_;
  auto f = roce::decode(frame.data(), frame.size());
  if (!f) return;
  if (ss.opt.requester_side && ss.line && is_request(f->bth.opcode) && !ss.stop_injector) {
    const uint32_t occ = ss.sent[f->bth.psn]++;
    if (auto it = ss.by_trigger.find({f->bth.psn, occ}); it != ss.by_trigger.end())
      for (size_t i : it->second)
        ss.due[i] = t_ps + std::max(ss.p.req.answers[i].delay_ps, ss.line->frame_ps(frame.size()));
    ss.due_ev.notify(SC_ZERO_TIME);
  }
  ss.node_frames.push_back({t_ps, std::move(*f)});
}

}  // namespace ernic::replay
