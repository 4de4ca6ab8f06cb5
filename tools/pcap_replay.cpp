// tools: `ernic-sim pcap replay` (see pcap_replay.h): the plan (which
// connection, the mapping, the MRs and their preload), the rewriting of
// the requester's frames, the comparison of ERNIC's answers with the
// capture's responder frames, the report.
#include "tools/pcap_replay.h"
#include "tools/pcap_replay_plan.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/wire_decode.h"

namespace pcap_replay {

namespace {

int answer_class(uint8_t op) { return op == 0x11 ? 0 : op == 0x12 ? 2 : 1; }  // ACK/NAK, READ response, atomic ACK

// PMTU, RQ geometry, MRs and their preload; the frame rewriting.
void plan_node(Plan& p, const ReplayOptions& o) {
  SimSetup& s = p.sim;
  s.opt = o;
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
  for (const Pkt* k : p.requests) s.request_t_ns.push_back(k->cap->t_ns - t_first);
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
}

}  // namespace

CLI::App* add_subcommand(CLI::App& app, std::string& file, ReplayOptions& o) {
  auto* rep = app.add_subcommand(
      "replay", "one side of an RC connection of a capture replayed against a simulated ERNIC node in the other's "
                "place (by default the requester's frames into ERNIC as the responder); ERNIC's frames against the "
                "capture's, field by field; exit 1 on an unexplained difference");
  rep->add_option("file", file, "capture (pcap or pcapng)")->required();
  auto* resp = rep->add_flag("--responder-side", "ERNIC takes the responder's place (the default)");
  rep->add_flag("--requester-side", o.requester_side,
                "ERNIC takes the requester's place: it posts the requester's messages as WQEs, the capture's "
                "responder frames answer its requests, its requests are compared with the capture's")
      ->excludes(resp);
  rep->add_option("--requester-ip", o.requester_ip,
                  "the capture's requester, IPv4 or IPv6 (default: the first RC request's source)");
  rep->add_option("--qpn", o.qpn, "the capture's responder QPN the requests address (default: the first request's)")
      ->check(CLI::Range(0u, 0xFFFFFFu));
  rep->add_option("--requester-qpn", o.requester_qpn, "the capture's requester QPN (default: from the CM exchange, else the answers)")
      ->check(CLI::Range(0u, 0xFFFFFFu));
  rep->add_option("--first-psn", o.first_psn, "the responder's expected PSN at the start (default: CM, else the first request's)")
      ->check(CLI::Range(0u, 0xFFFFFFu));
  rep->add_option("--node-qpn", o.node_qpn, "ERNIC's QP standing for the responder's")->capture_default_str();
  rep->add_option("--psn-delta", o.psn_delta, "simulated PSN = captured PSN + this (mod 2^24)")
      ->check(CLI::Range(0u, 0xFFFFFFu))
      ->capture_default_str();
  rep->add_option("--va-base", o.va_base, "simulated VA of the capture's lowest VA (default: the same VAs)");
  rep->add_option("--node-ip", o.node_ip,
                  "ERNIC node's IPv4 or IPv6 address (default: 10.0.0.2, fd00::2 for an IPv6 connection)");
  rep->add_option("--node-mac", o.node_mac, "ERNIC node's MAC")->capture_default_str();
  rep->add_option("--peer-ip", o.peer_ip,
                  "the other side's address after rewriting, of --node-ip's IP version (default: 10.0.0.1, fd00::1 "
                  "for an IPv6 connection)");
  rep->add_option("--peer-mac", o.peer_mac, "the requester's MAC after rewriting")->capture_default_str();
  rep->add_option("--datapath", o.datapath, "rtl or model")->check(CLI::IsMember({"rtl", "model"}))->capture_default_str();
  rep->add_flag("--fast", o.fast, "inject back to back at line rate (default: paced by the capture's timestamps)");
  rep->add_option("--settle-us", o.settle_us, "simulated time after the last request")->capture_default_str();
  rep->add_flag("--report-only", o.report_only, "exit 0 whatever the differences");
  rep->add_option("--expect", o.expect_file, "explained differences, one a line as listed ('#' comments)")
      ->check(CLI::ExistingFile);
  return rep;
}

int replay_main(const std::vector<ReplayFrame>& frames, const ReplayOptions& given) {
  ReplayOptions o = given;
  for (const auto& [what, v] : {std::pair{"--node-ip", o.node_ip}, {"--peer-ip", o.peer_ip}})
    if (!v.empty() && !parse_ip(v)) return fail_usage(std::string(what) + " " + v + ": not an IPv4 or IPv6 address"), 2;
  for (const auto& [what, v] : {std::pair{"--node-mac", o.node_mac}, {"--peer-mac", o.peer_mac}})
    if (!roce::MacAddr::parse(v)) return fail_usage(std::string(what) + " " + v + ": not a MAC address"), 2;
  if (o.node_qpn < 2 || o.node_qpn > 255) return fail_usage(fmt::format("--node-qpn {}: give 2..255", o.node_qpn)), 2;
  std::vector<std::string> expected;
  if (!o.expect_file.empty()) {
    bool ok = false;
    expected = read_expect(o.expect_file, &ok);
    if (!ok) return fail_usage("--expect " + o.expect_file + ": cannot read"), 2;
  }
  std::vector<std::string> malformed;
  OtherTransport other;
  const std::vector<Pkt> pk = decode_all(frames, &malformed, &other);
  auto plan = std::make_unique<Plan>();
  Plan& p = *plan;
  if (std::string why = make_plan(pk, o, &p); !why.empty()) {
    if (pk.empty() && other.total()) why = "no RoCEv2 frame in the capture: " + other.why();
    else if (other.total()) why += " (" + other.why() + ")";
    return fail_usage(o.file + ": " + why), 2;
  }
  if (std::string why = resolve_addresses(p, &o); !why.empty()) return fail_usage(why), 2;
  if (other.total()) std::printf("note: %s\n", other.why().c_str());
  if (o.requester_side) return replay_requester(p, o, expected, malformed);
  plan_node(p, o);
  std::printf("replay %s: requester %s QP 0x%06x -> responder %s QP 0x%06x, first PSN %u (from %s)\n", o.file.c_str(),
              p.req_ip.str().c_str(), p.req_qpn, p.resp_ip.str().c_str(), p.resp_qpn, p.first_psn, p.source.c_str());
  std::printf("map: requester -> %s %s, responder -> ERNIC %s %s QP 0x%06x, PSN +%u, PMTU %u\n", o.peer_ip.c_str(),
              o.peer_mac.c_str(), o.node_ip.c_str(), o.node_mac.c_str(), o.node_qpn, o.psn_delta, p.sim.pmtu);
  const SimResult r = run_sim(p.sim);
  if (!r.setup_errors.empty()) {
    for (const auto& e : r.setup_errors) std::fprintf(stderr, "ernic-sim pcap replay: cannot replay: %s\n", e.c_str());
    return 2;
  }
  size_t preload = 0;
  for (size_t i = 0; i < p.mrs.size(); ++i) {
    for (const auto& [va, b] : p.sim.mrs[i].preload) preload += b.size();
    std::printf("map: R_Key 0x%08x -> 0x%08x, VA 0x%016llx..0x%016llx -> 0x%016llx (%llu bytes)\n", p.mrs[i].rkey,
                i < r.rkeys.size() ? r.rkeys[i] : 0, (unsigned long long)p.mrs[i].lo, (unsigned long long)p.mrs[i].hi,
                (unsigned long long)p.sim.mrs[i].va, (unsigned long long)p.sim.mrs[i].length);
  }
  std::printf("inject: %zu request frames (frames %llu..%llu) %s; preload: %zu bytes of READ response payload\n",
              p.requests.size(), (unsigned long long)p.requests.front()->cap->n,
              (unsigned long long)p.requests.back()->cap->n,
              o.fast ? "back to back at line rate" : "paced by the capture's timestamps", preload);
  std::vector<std::string> diffs = malformed;
  for (const auto& e : r.errors) diffs.push_back("ERNIC node: " + e);
  // ERNIC's answers (PSNs mapped back), matched to the capture's by answer class and PSN.
  auto req_frame = [&p](uint32_t psn) -> uint64_t {
    for (const Pkt* q : p.requests)
      if (q->f.bth.psn == psn) return q->cap->n;
    return 0;
  };
  std::vector<roce::Frame> sim;
  for (const SimAnswer& a : r.answers) {
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
    if (sf.bth.opcode != cf.bth.opcode)
      diffs.push_back(fmt::format("{}: opcode {} from ERNIC", what, op_name(sf.bth.opcode)));
    if (sf.bth.dest_qp != p.req_qpn)
      diffs.push_back(fmt::format("{}: ERNIC's answer goes to QP 0x{:06x}", what, sf.bth.dest_qp));
    if (dst_ip(sf) != *parse_ip(o.peer_ip) || sf.eth.dst.str() != roce::MacAddr::parse(o.peer_mac)->str())
      diffs.push_back(fmt::format("{}: ERNIC's answer goes to {} {}", what, dst_ip(sf).str(), sf.eth.dst.str()));
    if (bool(sf.aeth) != bool(cf.aeth))
      diffs.push_back(fmt::format("{}: AETH {} in the capture, {} from ERNIC", what, cf.aeth ? "present" : "absent",
                                  sf.aeth ? "present" : "absent"));
    else if (cf.aeth && sf.aeth->syndrome != cf.aeth->syndrome)
      diffs.push_back(fmt::format("{}: syndrome 0x{:02x} in the capture, 0x{:02x} from ERNIC", what,
                                  cf.aeth->syndrome, sf.aeth->syndrome));
    if (cf.aeth && sf.aeth && sf.aeth->msn != cf.aeth->msn)
      diffs.push_back(fmt::format("{}: MSN {} in the capture, {} from ERNIC", what, cf.aeth->msn, sf.aeth->msn));
    if (sf.payload.size() != cf.payload.size())
      diffs.push_back(fmt::format("{}: payload {} bytes in the capture, {} from ERNIC", what, cf.payload.size(),
                                  sf.payload.size()));
    else if (sf.payload != cf.payload) {
      size_t b = 0;
      while (sf.payload[b] == cf.payload[b]) ++b;
      diffs.push_back(fmt::format("{}: payload differs from byte {}", what, b));
    }
    if (diffs.size() == before) {
      ++matched;
      std::printf("match: %s%s len=%zu\n", what.c_str(), ack_fields(cf).c_str(), cf.payload.size());
    }
  }
  for (size_t j = 0; j < sim.size(); ++j)
    if (!used[j]) {
      const uint64_t n = req_frame(sim[j].bth.psn);
      diffs.push_back(fmt::format("ERNIC {} psn={}{}: not in the capture ({})", op_name(sim[j].bth.opcode),
                                  sim[j].bth.psn, ack_fields(sim[j]),
                                  n ? fmt::format("answers the request in frame {}", n) : "no request has this PSN"));
    }
  const DiffTally tally = report_diffs(diffs, expected);
  const size_t unexplained = tally.unexplained, missing = tally.missing;
  const bool bad = unexplained || missing;
  std::printf("summary: %zu capture answers, %zu ERNIC answers, %zu matched field for field, %zu difference(s), %zu "
              "unexplained, %zu expected not seen: %s\n",
              p.responses.size(), sim.size(), matched, diffs.size(), unexplained, missing,
              bad ? "DIFFERENT" : diffs.empty() ? "identical" : "as expected");
  return bad && !o.report_only ? 1 : 0;
}

}  // namespace pcap_replay
