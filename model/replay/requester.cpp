// model/replay: the requester side (see replay.h): ERNIC in the capture's
// requester's place. The plan: the requester's
// messages as WQEs (retransmitted packets left out), each responder frame
// tied to the request it followed in the capture; then ERNIC's requests
// compared with the capture's, field by field, READ data and completions
// checked, the report.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "model/regs/wqe.h"
#include "model/replay/plan.h"
#include "model/roce/opcodes.h"
#include "model/roce/wire_decode.h"

namespace ernic::replay {

namespace {

using Op = pg332::WqeOpcode;

// The WQE opcode of a message starting with this RC opcode; false: none
// (atomics: ERNIC's WQE has none).
bool wqe_opcode_of(const roce::Frame& f, uint8_t* op) {
  const auto& w = roce::wire_opcode(f.bth.opcode);
  const bool imm = f.immdt.has_value(), inv = f.ieth.has_value();
  switch (w.kind) {
    case roce::OpKind::Write: *op = uint8_t(imm ? Op::write_imm : Op::write); return true;
    case roce::OpKind::Send: *op = uint8_t(inv ? Op::send_inv : imm ? Op::send_imm : Op::send); return true;
    case roce::OpKind::ReadRequest: *op = uint8_t(Op::read); return true;
    default: return false;
  }
}

// Each responder frame tied to the request it followed (requester side).
void plan_answers(Session& ss) {
  Plan& p = ss.p;
  Plan* rp = &p;
  const ReplayOptions& o = ss.opt;
  ReqSetup& s = p.req;
  // Each responder frame answers the request that preceded it most recently
  // in the capture (that PSN's n-th sending).
  for (const Pkt* a : p.responses) {
    const Pkt* trig = nullptr;
    uint32_t occ = 0;
    for (const Pkt* q : p.requests) {
      if (q->cap->n > a->cap->n) break;
      trig = q;
    }
    if (!trig) {  // an answer before any request: nothing to tie it to
      ss.lines.push_back(fmt::format("note: frame {}: {} psn={}{} comes before every request of the connection: not "
                                     "injected",
                                     a->cap->n, op_name(a->f.bth.opcode), a->f.bth.psn, ack_fields(a->f)));
      continue;
    }
    for (const Pkt* q : p.requests) {
      if (q == trig) break;
      occ += q->f.bth.psn == trig->f.bth.psn;
    }
    ReqAnswer ans;
    ans.trigger_psn = (trig->f.bth.psn + o.psn_delta) & kPsnMask;
    ans.occurrence = occ;
    ans.delay_ps = o.fast ? 0 : ns_after(trig->cap->t_ns, a->cap->t_ns) * 1000;
    ans.frame = roce::encode(to_node(a->f, o));
    s.answers.push_back(std::move(ans));
    rp->answer_pkt.push_back(a);
    rp->trigger_pkt.push_back(trig);
  }
}

// Per READ message, the responses that carried its data.
void plan_read_data(Session& ss) {
  Plan& p = ss.p;
  Plan* rp = &p;
  ReqSetup& s = p.req;
  // READ data: the responses whose PSN lies in a READ's span, first sending each.
  for (size_t k = 0; k < s.msgs.size(); ++k) {
    if (s.msgs[k].wqe_opcode != uint8_t(Op::read)) continue;
    const uint32_t psn0 = rp->first_pkt[k]->f.bth.psn;
    const uint32_t npk = std::max<uint32_t>(1, (s.msgs[k].length + s.pmtu - 1) / s.pmtu);
    std::map<uint32_t, const Pkt*> by_psn;
    for (const Pkt* a : p.responses)
      if (a->f.bth.opcode >= 0x0D && a->f.bth.opcode <= 0x10 && ((a->f.bth.psn - psn0) & kPsnMask) < npk)
        by_psn.emplace((a->f.bth.psn - psn0) & kPsnMask, a);
    for (const auto& [d, a] : by_psn) rp->read_resp[k].push_back(a);
  }
}

// Messages, answers and the rewriting. Empty string: ok; else why not.
std::string plan_requester_(Session& ss) {
  Plan& p = ss.p;
  Plan* rp = &p;
  const ReplayOptions& o = ss.opt;
  ReqSetup& s = p.req;
  s.pmtu = detect_pmtu(p);
  s.dest_qpn = p.resp_qpn;
  s.sq_psn = (p.first_psn + o.psn_delta) & kPsnMask;
  const uint64_t t_first = p.requests.front()->cap->t_ns;
  std::map<uint32_t, uint32_t> seen;  // PSN -> occurrences so far
  bool open = false;
  uint32_t last_psn = 0;  // the open message's last packet so far
  for (const Pkt* k : p.requests) {
    if (seen[k->f.bth.psn]++) continue;  // a retransmission: ERNIC resends by itself
    const auto pos = roce::wire_opcode(k->f.bth.opcode).pos;
    if (pos == roce::OpPos::First || pos == roce::OpPos::Only) {
      ReqMessage m;
      if (!wqe_opcode_of(k->f, &m.wqe_opcode))
        return fmt::format("frame {}: {}: ERNIC's WQE has no such operation (PG332 Table 2-1)", k->cap->n,
                           op_name(k->f.bth.opcode));
      if (k->f.reth) {
        m.remote_va = k->f.reth->va;
        m.rkey = k->f.reth->rkey;
        if (m.wqe_opcode == uint8_t(Op::read)) m.length = k->f.reth->dma_len;
      }
      m.t_ns = ns_after(t_first, k->cap->t_ns);
      s.msgs.push_back(std::move(m));
      rp->first_pkt.push_back(k);
      rp->read_resp.emplace_back();
      open = pos == roce::OpPos::First;
    } else if (!open) {
      return fmt::format("frame {}: {} psn={} continues a message whose first packet is not in the capture",
                         k->cap->n, op_name(k->f.bth.opcode), k->f.bth.psn);
    } else if (k->f.bth.psn != ((last_psn + 1) & kPsnMask)) {
      return fmt::format("frame {}: {} psn={}: the message's packet psn={} is not in the capture (or did not decode)",
                         k->cap->n, op_name(k->f.bth.opcode), k->f.bth.psn, (last_psn + 1) & kPsnMask);
    }
    last_psn = k->f.bth.psn;
    ReqMessage& m = s.msgs.back();
    if (m.wqe_opcode != uint8_t(Op::read)) {
      m.data.insert(m.data.end(), k->f.payload.begin(), k->f.payload.end());
      m.length = uint32_t(m.data.size());
    }
    // The immediate or the key to invalidate come with the last packet.
    if (k->f.immdt) {
      m.immdt = *k->f.immdt;
      if (m.wqe_opcode == uint8_t(Op::write)) m.wqe_opcode = uint8_t(Op::write_imm);
      if (m.wqe_opcode == uint8_t(Op::send)) m.wqe_opcode = uint8_t(Op::send_imm);
    }
    if (k->f.ieth) {
      m.rkey = *k->f.ieth;
      if (m.wqe_opcode == uint8_t(Op::send)) m.wqe_opcode = uint8_t(Op::send_inv);
    }
    if (pos == roce::OpPos::Last || pos == roce::OpPos::Only) open = false;
  }
  plan_answers(ss);
  plan_read_data(ss);
  return "";
}

std::string reth_str(const roce::Frame& f) {
  return f.reth ? fmt::format("va=0x{:x} rkey=0x{:08x} dmalen={}", f.reth->va, f.reth->rkey, f.reth->dma_len) : "none";
}

// ERNIC's request against the capture's: the fields either side sets.
void compare_request(const roce::Frame& sf, const roce::Frame& cf, const Plan& p, const ReplayOptions& o,
                     const std::string& what, std::vector<std::string>* diffs) {
  compare_route(sf, cf, p.resp_qpn, o, "request", what, diffs);
  if (sf.bth.ack_req != cf.bth.ack_req)
    diffs->push_back(fmt::format("{}: AckReq {} in the capture, {} from ERNIC", what, int(cf.bth.ack_req),
                                 int(sf.bth.ack_req)));
  if (reth_str(sf) != reth_str(cf))
    diffs->push_back(fmt::format("{}: RETH {} in the capture, {} from ERNIC", what, reth_str(cf), reth_str(sf)));
  if (sf.immdt != cf.immdt)
    diffs->push_back(fmt::format("{}: ImmDt {} in the capture, {} from ERNIC", what,
                                 cf.immdt ? fmt::format("0x{:08x}", *cf.immdt) : "none",
                                 sf.immdt ? fmt::format("0x{:08x}", *sf.immdt) : "none"));
  if (sf.ieth != cf.ieth)
    diffs->push_back(fmt::format("{}: IETH {} in the capture, {} from ERNIC", what,
                                 cf.ieth ? fmt::format("0x{:08x}", *cf.ieth) : "none",
                                 sf.ieth ? fmt::format("0x{:08x}", *sf.ieth) : "none"));
  compare_payload(sf, cf, what, diffs);
}

// ERNIC's requests by (PSN mapped back, n-th sending) against the capture's:
// one `match:` line per equal one, the differences into *diffs. The
// numbers of capture requests matched and of ERNIC's requests.
std::pair<size_t, size_t> compare_requests(Session& ss, std::vector<std::string>* diffs_out) {
  const Plan& p = ss.p;
  const ReplayOptions& o = ss.opt;
  std::vector<std::string>& diffs = *diffs_out;
  std::map<std::pair<uint32_t, uint32_t>, const roce::Frame*> ernic;
  std::vector<std::pair<uint32_t, uint32_t>> ernic_order;
  std::map<uint32_t, uint32_t> count;
  for (const SimAnswer& a : ss.node_frames) {
    if (!is_request(a.f.bth.opcode)) continue;
    const uint32_t psn = (a.f.bth.psn - o.psn_delta) & kPsnMask;
    const std::pair<uint32_t, uint32_t> key{psn, count[psn]++};
    ernic[key] = &a.f;
    ernic_order.push_back(key);
  }
  std::map<std::pair<uint32_t, uint32_t>, bool> used;
  std::map<uint32_t, uint32_t> ccount;
  size_t matched = 0;
  for (const Pkt* c : p.requests) {
    const std::pair<uint32_t, uint32_t> key{c->f.bth.psn, ccount[c->f.bth.psn]++};
    const std::string what = fmt::format("frame {}: {} psn={}", c->cap->n, op_name(c->f.bth.opcode), c->f.bth.psn);
    auto it = ernic.find(key);
    if (it == ernic.end()) {
      diffs.push_back(what + (key.second ? fmt::format(" (sent {} time(s) before)", key.second) : std::string()) +
                      ": ERNIC did not send it");
      continue;
    }
    used[key] = true;
    const size_t before = diffs.size();
    roce::Frame sf = *it->second;
    sf.bth.psn = c->f.bth.psn;
    compare_request(sf, c->f, p, o, what, &diffs);
    if (diffs.size() == before) {
      ++matched;
      ss.lines.push_back(fmt::format("match: {} len={}", what, c->f.payload.size()));
    }
  }
  for (const auto& key : ernic_order)
    if (!used.count(key))
      diffs.push_back(fmt::format("ERNIC {} psn={}{}: not in the capture", op_name(ernic[key]->bth.opcode), key.first,
                                  key.second ? fmt::format(" (sent {} time(s) before)", key.second) : std::string()));
  return {matched, ernic_order.size()};
}

// The answers never injected, READ data in ERNIC's buffers against the
// capture's responses, completions (all, none in error). The number of
// answers injected.
size_t check_outcome(const Session& ss, std::vector<std::string>* diffs_out) {
  std::vector<std::string>& diffs = *diffs_out;
  const Plan& rp = ss.p;
  const ReqSetup& s = rp.req;
  size_t injected = 0;
  for (size_t i = 0; i < s.answers.size(); ++i) {
    if (i < ss.answered.size() && ss.answered[i]) {
      ++injected;
      continue;
    }
    const Pkt* a = rp.answer_pkt[i];
    diffs.push_back(fmt::format("frame {}: {} psn={}{}: not injected: ERNIC did not send the request it answers "
                                "(frame {})",
                                a->cap->n, op_name(a->f.bth.opcode), a->f.bth.psn, ack_fields(a->f),
                                rp.trigger_pkt[i]->cap->n));
  }
  for (size_t k = 0; k < s.msgs.size() && k < ss.landed.size(); ++k) {
    if (s.msgs[k].wqe_opcode != uint8_t(Op::read)) continue;
    roce::Bytes want;
    for (const Pkt* a : rp.read_resp[k]) want.insert(want.end(), a->f.payload.begin(), a->f.payload.end());
    const std::string what = fmt::format("frame {}: READ psn={} ({} bytes)", rp.first_pkt[k]->cap->n,
                                         rp.first_pkt[k]->f.bth.psn, s.msgs[k].length);
    if (want.size() != s.msgs[k].length)
      diffs.push_back(fmt::format("{}: the capture's responses carry {} bytes", what, want.size()));
    else if (want != ss.landed[k]) {
      size_t b = 0;
      while (want[b] == ss.landed[k][b]) ++b;
      diffs.push_back(fmt::format("{}: the data in ERNIC's buffer differs from the capture's responses from byte {}",
                                  what, b));
    }
  }
  if (ss.completions.size() != s.msgs.size())
    diffs.push_back(fmt::format("ERNIC completed {} of {} messages", ss.completions.size(), s.msgs.size()));
  for (const ReqCompletion& q : ss.completions)
    if (q.error && q.wr_id < rp.first_pkt.size())
      diffs.push_back(fmt::format("frame {}: {}: ERNIC's completion carries an error", rp.first_pkt[q.wr_id]->cap->n,
                                  op_name(rp.first_pkt[q.wr_id]->f.bth.opcode)));
  return injected;
}

}  // namespace

std::string plan_requester(Session& ss) {
  if (std::string why = plan_requester_(ss); !why.empty()) return why;
  const Plan& p = ss.p;
  const ReplayOptions& o = ss.opt;
  ss.lines.push_back(connection_line(ss));
  ss.lines.push_back(fmt::format("map: requester -> ERNIC {} {} QP 0x{:06x}, responder -> {} {}, PSN +{}, PMTU {}",
                                 o.node_ip, o.node_mac, o.node_qpn, o.peer_ip, o.peer_mac, o.psn_delta, p.req.pmtu));
  return "";
}

Verdict judge_requester(Session& ss, std::vector<std::string> diffs) {
  const Plan& p = ss.p;
  const ReplayOptions& o = ss.opt;
  const ReqSetup& s = p.req;
  Verdict v;
  if (cut_short(ss, ss.done, "the capture's messages span more than the run: not all were posted (" + o.key("--fast") +
                                 " posts them at once)", &v))
    return v;
  ss.lines.push_back(fmt::format("post: {} messages (frames {}..{}) {}; inject: {} responder frames in answer to "
                                 "ERNIC's requests",
                                 s.msgs.size(), p.first_pkt.front()->cap->n, p.first_pkt.back()->cap->n,
                                 o.fast ? "at once" : "paced by the capture's timestamps", s.answers.size()));
  const auto [matched, ernic_requests] = compare_requests(ss, &diffs);
  const size_t injected = check_outcome(ss, &diffs);
  return tally(ss, diffs, matched,
               fmt::format("{} capture requests, {} ERNIC requests, {} matched field for field, {} of {} answers "
                           "injected, {} of {} messages completed",
                           p.requests.size(), ernic_requests, matched, injected, s.answers.size(),
                           ss.completions.size(), s.msgs.size()));
}

}  // namespace ernic::replay
