// model/replay: the responder side (see replay.h): the plan (MRs over the
// captured VAs and their preload, the RQ, the rewriting of the requester's
// frames) and the judgement (ERNIC's answers against the capture's
// responder frames, matched by answer class and PSN).
#include <fmt/format.h>

#include <algorithm>

#include "model/replay/plan.h"
#include "model/roce/opcodes.h"
#include "model/roce/wire_decode.h"

namespace ernic::replay {

namespace {

int answer_class(uint8_t op) { return op == 0x11 ? 0 : op == 0x12 ? 2 : 1; }  // ACK/NAK, READ response, atomic ACK


void lines_header(Session& ss) {
  const Plan& p = ss.p;
  const ReplayOptions& o = ss.opt;
  ss.lines.push_back(connection_line(ss));
  ss.lines.push_back(fmt::format("map: requester -> {} {}, responder -> ERNIC {} {} QP 0x{:06x}, PSN +{}, PMTU {}",
                                 o.peer_ip, o.peer_mac, o.node_ip, o.node_mac, o.node_qpn, o.psn_delta, p.sim.pmtu));
}

// ERNIC's answer against the capture's: the fields either side sets.
void compare_answer(const roce::Frame& sf, const roce::Frame& cf, const Plan& p, const ReplayOptions& o,
                    const std::string& what, std::vector<std::string>* diffs) {
  compare_route(sf, cf, p.req_qpn, o, "answer", what, diffs);
  if (bool(sf.aeth) != bool(cf.aeth))
    diffs->push_back(fmt::format("{}: AETH {} in the capture, {} from ERNIC", what, cf.aeth ? "present" : "absent",
                                sf.aeth ? "present" : "absent"));
  else if (cf.aeth && sf.aeth->syndrome != cf.aeth->syndrome)
    diffs->push_back(fmt::format("{}: syndrome 0x{:02x} in the capture, 0x{:02x} from ERNIC", what,
                                cf.aeth->syndrome, sf.aeth->syndrome));
  if (cf.aeth && sf.aeth && sf.aeth->msn != cf.aeth->msn)
    diffs->push_back(fmt::format("{}: MSN {} in the capture, {} from ERNIC", what, cf.aeth->msn, sf.aeth->msn));
  compare_payload(sf, cf, what, diffs);
}

}  // namespace

// PMTU, RQ geometry, MRs and their preload; the frame rewriting.
std::string plan_responder(Session& ss) {
  Plan& p = ss.p;
  const ReplayOptions& o = ss.opt;
  SimSetup& s = p.sim;
  uint32_t msg = 0, max_msg = 0, sends = 0;
  for (const Pkt* k : p.requests) {
    const auto& w = roce::wire_opcode(k->f.bth.opcode);
    const uint32_t len = uint32_t(k->f.payload.size());
    if (w.kind == roce::OpKind::Send) {
      msg = (w.pos == roce::OpPos::First || w.pos == roce::OpPos::Only) ? len : msg + len;
      max_msg = std::max(max_msg, msg);
      if (w.pos == roce::OpPos::Last || w.pos == roce::OpPos::Only) ++sends;
    }
    if (k->f.reth) {
      auto it = std::find_if(p.mrs.begin(), p.mrs.end(), [&](const Plan::Mr& m) { return m.rkey == k->f.reth->rkey; });
      const uint64_t lo = k->f.reth->va, hi = lo + std::max<uint32_t>(k->f.reth->dma_len, 1);
      if (it == p.mrs.end()) p.mrs.push_back({k->f.reth->rkey, lo, hi});
      else it->lo = std::min(it->lo, lo), it->hi = std::max(it->hi, hi);
    }
  }
  s.pmtu = detect_pmtu(p);
  s.rq_elem_bytes = 256;
  while (s.rq_elem_bytes < max_msg) s.rq_elem_bytes <<= 1;
  s.rq_depth = 16;
  while (s.rq_depth < sends + 2) s.rq_depth <<= 1;
  s.peer_qpn = p.req_qpn;
  s.expected_psn = (p.first_psn + o.psn_delta) & kPsnMask;
  uint64_t glo = UINT64_MAX;
  for (const auto& m : p.mrs) glo = std::min(glo, m.lo);
  auto sim_va = [&o, glo](size_t, uint64_t va) {
    return o.va_base ? *o.va_base + (va - glo) : va;
  };
  for (size_t i = 0; i < p.mrs.size(); ++i)
    s.mrs.push_back({sim_va(i, p.mrs[i].lo), (p.mrs[i].hi - p.mrs[i].lo + 63) & ~uint64_t(63), {}});
  // READ responses' payloads preloaded where the READ request read them.
  for (const Pkt* k : p.responses) {
    if (k->f.bth.opcode < 0x0D || k->f.bth.opcode > 0x10 || k->f.payload.empty()) continue;
    for (const Pkt* q : p.requests) {
      if (q->f.bth.opcode != 0x0C || !q->f.reth) continue;
      const uint32_t npk = std::max<uint32_t>(1, (q->f.reth->dma_len + s.pmtu - 1) / s.pmtu);
      const uint32_t d = (k->f.bth.psn - q->f.bth.psn) & kPsnMask;
      if (d >= npk) continue;
      for (size_t i = 0; i < p.mrs.size(); ++i)
        if (p.mrs[i].rkey == q->f.reth->rkey)
          s.mrs[i].preload.push_back({sim_va(i, q->f.reth->va) + uint64_t(d) * s.pmtu, k->f.payload});
      break;
    }
  }
  const uint64_t t_first = p.requests.front()->cap->t_ns;
  for (const Pkt* k : p.requests) s.request_t_ns.push_back(ns_after(t_first, k->cap->t_ns));
  const Plan* pp = &p;
  s.request = [pp, o, sim_va](size_t k, const std::vector<uint32_t>& rkeys) {
    roce::Frame f = to_node(pp->requests[k]->f, o);
    if (f.reth)
      for (size_t i = 0; i < pp->mrs.size() && i < rkeys.size(); ++i)
        if (pp->mrs[i].rkey == f.reth->rkey) {
          f.reth->rkey = rkeys[i];
          f.reth->va = sim_va(i, f.reth->va);
          break;
        }
    return roce::encode(f);
  };
  lines_header(ss);
  return "";
}

Verdict judge_responder(Session& ss, std::vector<std::string> diffs) {
  const Plan& p = ss.p;
  const ReplayOptions& o = ss.opt;
  Verdict v;
  if (cut_short(ss, ss.injected_all, "the capture's requests span more than the run: not all were injected (" +
                                         o.key("--fast") + " injects them back to back)", &v))
    return v;
  size_t preload = 0;
  for (size_t i = 0; i < p.mrs.size(); ++i) {
    for (const auto& [va, b] : p.sim.mrs[i].preload) preload += b.size();
    ss.lines.push_back(fmt::format("map: R_Key 0x{:08x} -> 0x{:08x}, VA 0x{:016x}..0x{:016x} -> 0x{:016x} ({} bytes)",
                                   p.mrs[i].rkey, i < ss.rkeys.size() ? ss.rkeys[i] : 0, p.mrs[i].lo, p.mrs[i].hi,
                                   p.sim.mrs[i].va, p.sim.mrs[i].length));
  }
  ss.lines.push_back(fmt::format("inject: {} request frames (frames {}..{}) {}; preload: {} bytes of READ response payload",
                                 p.requests.size(), p.requests.front()->cap->n, p.requests.back()->cap->n,
                                 o.fast ? "back to back at line rate" : "paced by the capture's timestamps", preload));
  // ERNIC's answers (PSNs mapped back), matched to the capture's by answer class and PSN.
  auto req_frame = [&p](uint32_t psn) -> uint64_t {
    for (const Pkt* q : p.requests)
      if (q->f.bth.psn == psn) return q->cap->n;
    return 0;
  };
  std::vector<roce::Frame> sim;
  for (const SimAnswer& a : ss.node_frames) {
    roce::Frame f = a.f;
    f.bth.psn = (f.bth.psn - o.psn_delta) & kPsnMask;
    sim.push_back(std::move(f));
  }
  std::vector<bool> used(sim.size(), false);
  size_t matched = 0;
  for (const Pkt* c : p.responses) {
    const roce::Frame& cf = c->f;
    const std::string what = fmt::format("frame {}: {} psn={}", c->cap->n, op_name(cf.bth.opcode), cf.bth.psn);
    size_t j = 0;
    while (j < sim.size() && (used[j] || sim[j].bth.psn != cf.bth.psn || !is_response(sim[j].bth.opcode) ||
                              answer_class(sim[j].bth.opcode) != answer_class(cf.bth.opcode)))
      ++j;
    if (j == sim.size()) {
      diffs.push_back(what + ack_fields(cf) + ": no answer from ERNIC with this PSN");
      continue;
    }
    used[j] = true;
    const roce::Frame& sf = sim[j];
    const size_t before = diffs.size();
    compare_answer(sf, cf, p, o, what, &diffs);
    if (diffs.size() == before) {
      ++matched;
      ss.lines.push_back(fmt::format("match: {}{} len={}", what, ack_fields(cf), cf.payload.size()));
    }
  }
  for (size_t j = 0; j < sim.size(); ++j)
    if (!used[j]) {
      const uint64_t n = req_frame(sim[j].bth.psn);
      diffs.push_back(fmt::format("ERNIC {} psn={}{}: not in the capture ({})", op_name(sim[j].bth.opcode),
                                  sim[j].bth.psn, ack_fields(sim[j]),
                                  n ? fmt::format("answers the request in frame {}", n) : "no request has this PSN"));
    }
  return tally(ss, diffs, matched,
               fmt::format("{} capture answers, {} ERNIC answers, {} matched field for field", p.responses.size(),
                           sim.size(), matched));
}

}  // namespace ernic::replay
