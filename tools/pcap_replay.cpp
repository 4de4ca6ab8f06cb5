// tools: `ernic-sim pcap replay` (see pcap_replay.h): the plan (which
// connection, the mapping, the MRs and their preload), the rewriting of
// the requester's frames, the comparison of ERNIC's answers with the
// capture's responder frames, the report.
#include "tools/pcap_replay.h"

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

constexpr uint32_t kPsnMask = 0xFFFFFF;

struct Pkt {
  const ReplayFrame* cap = nullptr;
  roce::Frame f;  // plain RoCEv2, packet.h's decode
};

bool is_request(uint8_t op) {
  const auto k = roce::wire_opcode(op).kind;
  return op < 0x20 && roce::wire_opcode(op).known &&
         (k == roce::OpKind::Send || k == roce::OpKind::Write || k == roce::OpKind::ReadRequest ||
          k == roce::OpKind::Atomic);
}
bool is_response(uint8_t op) { return op >= 0x0D && op <= 0x12; }
int answer_class(uint8_t op) { return op == 0x11 ? 0 : op == 0x12 ? 2 : 1; }  // ACK/NAK, READ response, atomic ACK
const char* op_name(uint8_t op) { return roce::opcode_name(op); }

std::string ack_fields(const roce::Frame& f) {
  return f.aeth ? fmt::format(" syndrome=0x{:02x} msn={}", f.aeth->syndrome, f.aeth->msn) : std::string();
}

// The capture's RoCEv2/IPv4 frames, decoded by packet.h (RC, UD, CNP).
std::vector<Pkt> decode_all(const std::vector<ReplayFrame>& frames) {
  std::vector<Pkt> out;
  for (const ReplayFrame& c : frames) {
    if (!c.skip.empty() || c.ib) continue;
    const roce::WireDecode d = roce::decode_wire(c.bytes.data(), c.bytes.size());
    if (d.status != roce::WireStatus::Ok || d.w.f.ipv6 || d.w.encap != roce::Encap::RoceV2) continue;
    const roce::Bytes plain = roce::as_plain_rocev2(c.bytes.data(), c.bytes.size(), d.w);
    if (plain.empty()) continue;
    if (auto f = roce::decode(plain)) out.push_back({&c, std::move(*f)});
  }
  return out;
}

struct Plan {
  roce::Ipv4Addr req_ip, resp_ip;
  uint32_t resp_qpn = 0, req_qpn = 0, first_psn = 0;
  std::string source;  // where the mapping came from
  std::vector<const Pkt*> requests, responses;
  struct Mr { uint32_t rkey; uint64_t lo, hi; };
  std::vector<Mr> mrs;
  SimSetup sim;
};

std::string fail_usage(const std::string& s) {
  std::fprintf(stderr, "ernic-sim pcap replay: %s\n", s.c_str());
  return s;
}

// The connection and the mapping. Empty string: ok; else why not.
std::string make_plan(const std::vector<Pkt>& pk, const ReplayOptions& o, Plan* p) {
  const Pkt* first = nullptr;
  std::optional<roce::Ipv4Addr> want_src;
  if (!o.requester_ip.empty()) {
    want_src = roce::Ipv4Addr::parse(o.requester_ip);
    if (!want_src) return "--requester-ip " + o.requester_ip + ": not an IPv4 address";
  }
  for (const Pkt& k : pk)
    if (is_request(k.f.bth.opcode) && (!want_src || k.f.ip4.src == *want_src) &&
        (!o.qpn || k.f.bth.dest_qp == *o.qpn)) {
      first = &k;
      break;
    }
  if (!first) return "no RC request in the capture matches (requester IP / --qpn)";
  p->req_ip = first->f.ip4.src;
  p->resp_ip = first->f.ip4.dst;
  p->resp_qpn = first->f.bth.dest_qp;
  std::set<uint32_t> req_psns;
  for (const Pkt& k : pk)
    if (is_request(k.f.bth.opcode) && k.f.ip4.src == p->req_ip && k.f.ip4.dst == p->resp_ip &&
        k.f.bth.dest_qp == p->resp_qpn) {
      p->requests.push_back(&k);
      req_psns.insert(k.f.bth.psn);
    }
  // The CM exchange: a ConnectRequest from the requester whose ConnectReply names the responder's QP.
  std::optional<uint32_t> cm_rqpn, cm_psn;
  std::map<uint32_t, std::pair<const Pkt*, roce::cm::Req>> reqs;  // local comm id ->
  for (const Pkt& k : pk) {
    if (k.f.bth.opcode != 0x64 || k.f.bth.dest_qp != 1) continue;
    const auto mad = roce::cm::decode_mad(k.f.payload.data(), k.f.payload.size());
    if (!mad) continue;
    if (auto* rq = std::get_if<roce::cm::Req>(&mad->msg); rq && k.f.ip4.src == p->req_ip)
      reqs[rq->local_comm_id] = {&k, *rq};
    if (auto* rp = std::get_if<roce::cm::Rep>(&mad->msg);
        rp && k.f.ip4.src == p->resp_ip && rp->local_qpn == p->resp_qpn && reqs.count(rp->remote_comm_id)) {
      const auto& [rf, rq] = reqs[rp->remote_comm_id];
      cm_rqpn = rq.local_qpn;
      cm_psn = rq.start_psn;
      p->source = fmt::format("the CM exchange (frames {} and {})", rf->cap->n, k.cap->n);
    }
  }
  if (p->source.empty()) p->source = "the data frames";
  // The requester's QPN: the CM's, else the first answer to one of the requests' PSNs.
  if (o.requester_qpn) p->req_qpn = *o.requester_qpn;
  else if (cm_rqpn) p->req_qpn = *cm_rqpn;
  else {
    bool found = false;
    for (const Pkt& k : pk)
      if (is_response(k.f.bth.opcode) && k.f.ip4.src == p->resp_ip && k.f.ip4.dst == p->req_ip &&
          req_psns.count(k.f.bth.psn)) {
        p->req_qpn = k.f.bth.dest_qp;
        found = true;
        break;
      }
    if (!found) return "no answer to the requests in the capture: give --requester-qpn";
  }
  p->first_psn = o.first_psn ? *o.first_psn : cm_psn ? *cm_psn : p->requests.front()->f.bth.psn;
  for (const Pkt& k : pk)
    if (is_response(k.f.bth.opcode) && k.f.ip4.src == p->resp_ip && k.f.ip4.dst == p->req_ip &&
        k.f.bth.dest_qp == p->req_qpn)
      p->responses.push_back(&k);
  return "";
}

// PMTU, RQ geometry, MRs and their preload; the frame rewriting.
void plan_node(Plan& p, const ReplayOptions& o) {
  SimSetup& s = p.sim;
  s.opt = o;
  uint32_t seg = 0, only = 0, msg = 0, max_msg = 0, sends = 0;
  for (const Pkt* k : p.requests) {
    const auto& w = roce::wire_opcode(k->f.bth.opcode);
    const uint32_t len = uint32_t(k->f.payload.size());
    if (w.pos == roce::OpPos::First || w.pos == roce::OpPos::Middle) seg = std::max(seg, len);
    else only = std::max(only, len);
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
  for (const Pkt* k : p.responses)
    if (k->f.bth.opcode == 0x0D || k->f.bth.opcode == 0x0E) seg = std::max(seg, uint32_t(k->f.payload.size()));
  s.pmtu = 4096;
  for (uint32_t m : {256u, 512u, 1024u, 2048u, 4096u})
    if (seg ? m == seg : m >= only) {
      s.pmtu = m;
      break;
    }
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
  const auto peer_mac = *roce::MacAddr::parse(o.peer_mac), node_mac = *roce::MacAddr::parse(o.node_mac);
  const auto peer_ip = *roce::Ipv4Addr::parse(o.peer_ip), node_ip = *roce::Ipv4Addr::parse(o.node_ip);
  const uint64_t t_first = p.requests.front()->cap->t_ns;
  for (const Pkt* k : p.requests) s.request_t_ns.push_back(k->cap->t_ns - t_first);
  const Plan* pp = &p;
  s.request = [pp, peer_mac, node_mac, peer_ip, node_ip, o, sim_va](size_t k, const std::vector<uint32_t>& rkeys) {
    roce::Frame f = pp->requests[k]->f;
    f.eth.src = peer_mac;
    f.eth.dst = node_mac;
    f.ip4.src = peer_ip;
    f.ip4.dst = node_ip;
    f.bth.dest_qp = o.node_qpn;
    f.bth.psn = (f.bth.psn + o.psn_delta) & kPsnMask;
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

std::vector<std::string> read_expect(const std::string& path, bool* ok) {
  std::vector<std::string> out;
  std::ifstream in(path);
  *ok = bool(in);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r");
    if (a == std::string::npos || line[a] == '#') continue;
    out.push_back(line.substr(a, b - a + 1));
  }
  return out;
}

}  // namespace

CLI::App* add_subcommand(CLI::App& app, std::string& file, ReplayOptions& o) {
  auto* rep = app.add_subcommand(
      "replay", "the requester side of one RC connection into a simulated ERNIC node (the responder); its answers "
                "against the capture's, field by field; exit 1 on an unexplained difference");
  rep->add_option("file", file, "capture (pcap or pcapng)")->required();
  rep->add_flag("--responder-side", "ERNIC takes the responder's place (the only side replayed today)");
  rep->add_option("--requester-ip", o.requester_ip, "the capture's requester (default: the first RC request's source)");
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
  rep->add_option("--node-ip", o.node_ip, "ERNIC node's IPv4 address")->capture_default_str();
  rep->add_option("--node-mac", o.node_mac, "ERNIC node's MAC")->capture_default_str();
  rep->add_option("--peer-ip", o.peer_ip, "the requester's IPv4 address after rewriting")->capture_default_str();
  rep->add_option("--peer-mac", o.peer_mac, "the requester's MAC after rewriting")->capture_default_str();
  rep->add_option("--datapath", o.datapath, "rtl or model")->check(CLI::IsMember({"rtl", "model"}))->capture_default_str();
  rep->add_flag("--fast", o.fast, "inject back to back at line rate (default: paced by the capture's timestamps)");
  rep->add_option("--settle-us", o.settle_us, "simulated time after the last request")->capture_default_str();
  rep->add_flag("--report-only", o.report_only, "exit 0 whatever the differences");
  rep->add_option("--expect", o.expect_file, "explained differences, one a line as listed ('#' comments)")
      ->check(CLI::ExistingFile);
  return rep;
}

int replay_main(const std::vector<ReplayFrame>& frames, const ReplayOptions& o) {
  for (const auto& [what, v] : {std::pair{"--node-ip", o.node_ip}, {"--peer-ip", o.peer_ip}})
    if (!roce::Ipv4Addr::parse(v)) return fail_usage(std::string(what) + " " + v + ": not an IPv4 address"), 2;
  for (const auto& [what, v] : {std::pair{"--node-mac", o.node_mac}, {"--peer-mac", o.peer_mac}})
    if (!roce::MacAddr::parse(v)) return fail_usage(std::string(what) + " " + v + ": not a MAC address"), 2;
  if (o.node_qpn < 2 || o.node_qpn > 255) return fail_usage(fmt::format("--node-qpn {}: give 2..255", o.node_qpn)), 2;
  std::vector<std::string> expected;
  if (!o.expect_file.empty()) {
    bool ok = false;
    expected = read_expect(o.expect_file, &ok);
    if (!ok) return fail_usage("--expect " + o.expect_file + ": cannot read"), 2;
  }
  const std::vector<Pkt> pk = decode_all(frames);
  auto plan = std::make_unique<Plan>();
  Plan& p = *plan;
  if (std::string why = make_plan(pk, o, &p); !why.empty()) return fail_usage(o.file + ": " + why), 2;
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
  std::vector<std::string> diffs;
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
    if (sf.ip4.dst.str() != o.peer_ip || sf.eth.dst.str() != roce::MacAddr::parse(o.peer_mac)->str())
      diffs.push_back(fmt::format("{}: ERNIC's answer goes to {} {}", what, sf.ip4.dst.str(), sf.eth.dst.str()));
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
  size_t unexplained = 0;
  for (const std::string& d : diffs) {
    const bool ex = std::find(expected.begin(), expected.end(), d) != expected.end();
    unexplained += !ex;
    std::printf("diff%s: %s\n", ex ? " (expected)" : "", d.c_str());
  }
  size_t missing = 0;
  for (const std::string& e : expected)
    if (std::find(diffs.begin(), diffs.end(), e) == diffs.end()) {
      ++missing;
      std::printf("expected difference not seen: %s\n", e.c_str());
    }
  const bool bad = unexplained || missing;
  std::printf("summary: %zu capture answers, %zu ERNIC answers, %zu matched field for field, %zu difference(s), %zu "
              "unexplained, %zu expected not seen: %s\n",
              p.responses.size(), sim.size(), matched, diffs.size(), unexplained, missing,
              bad ? "DIFFERENT" : diffs.empty() ? "identical" : "as expected");
  return bad && !o.report_only ? 1 : 0;
}

}  // namespace pcap_replay
