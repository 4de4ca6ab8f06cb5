// model/replay: see replay.h.
#include "model/replay/replay.h"

#include <fmt/format.h>

#include "model/replay/plan.h"

namespace ernic::replay {

Replay::Replay() : s_(std::make_unique<Session>()) {}
Replay::~Replay() = default;

std::string Replay::plan(const std::vector<ReplayFrame>& frames, const ReplayOptions& given) {
  Session& ss = *s_;
  ss.opt = given;
  ReplayOptions& o = ss.opt;
  for (const auto& [what, v] : {std::pair{"--node-ip", o.node_ip}, {"--peer-ip", o.peer_ip}})
    if (!v.empty() && !roce::IpAddr::parse(v)) return o.key(what) + " " + v + ": not an IPv4 or IPv6 address";
  for (const auto& [what, v] : {std::pair{"--node-mac", o.node_mac}, {"--peer-mac", o.peer_mac}})
    if (!roce::MacAddr::parse(v)) return o.key(what) + " " + v + ": not a MAC address";
  if (!o.expect_file.empty()) {
    bool ok = false;
    ss.expected = read_expect(o.expect_file, &ok);
    if (!ok) return o.key("--expect") + " " + o.expect_file + ": cannot read";
  }
  ss.expected.insert(ss.expected.end(), o.expected.begin(), o.expected.end());
  OtherTransport other;
  ss.pk = decode_all(frames, &ss.malformed, &other);
  if (std::string why = make_plan(ss.pk, o, &ss.p); !why.empty()) {
    if (ss.pk.empty() && other.total()) why = "no RoCEv2 frame in the capture: " + other.why();
    else if (other.total()) why += " (" + other.why() + ")";
    return o.file + ": " + why;
  }
  if (std::string why = resolve_addresses(ss.p, &o); !why.empty()) return why;
  if (other.total()) ss.lines.push_back("note: " + other.why());
  const std::string why = o.requester_side ? plan_requester(ss) : plan_responder(ss);
  return why.empty() ? "" : o.file + ": " + why;
}

const ReplayOptions& Replay::options() const { return s_->opt; }
uint32_t Replay::pmtu() const { return s_->opt.requester_side ? s_->p.req.pmtu : s_->p.sim.pmtu; }
uint32_t Replay::capture_qpn() const { return s_->opt.requester_side ? s_->p.resp_qpn : s_->p.req_qpn; }

roce::IpAddr Replay::node_ip() const { return *roce::IpAddr::parse(s_->opt.node_ip); }

void Replay::run(host::Driver& d, HostMemory& mem, Line& line, bool bring_up) {
  if (s_->opt.requester_side) run_requester(*s_, d, mem, line, bring_up);
  else run_responder(*s_, d, mem, line, bring_up);
}

Verdict Replay::judge(const std::vector<std::string>& errors) {
  std::vector<std::string> diffs = s_->malformed;
  for (const auto& e : errors) diffs.push_back("ERNIC node: " + e);
  return s_->opt.requester_side ? judge_requester(*s_, std::move(diffs)) : judge_responder(*s_, std::move(diffs));
}

void compare_route(const roce::Frame& sf, const roce::Frame& cf, uint32_t qpn, const ReplayOptions& o,
                   const char* kind, const std::string& what, std::vector<std::string>* diffs) {
  if (sf.bth.opcode != cf.bth.opcode)
    diffs->push_back(fmt::format("{}: opcode {} from ERNIC", what, op_name(sf.bth.opcode)));
  if (sf.bth.dest_qp != qpn) diffs->push_back(fmt::format("{}: ERNIC's {} goes to QP 0x{:06x}", what, kind, sf.bth.dest_qp));
  if (sf.dst_ip() != *roce::IpAddr::parse(o.peer_ip) || !(sf.eth.dst == *roce::MacAddr::parse(o.peer_mac)))
    diffs->push_back(fmt::format("{}: ERNIC's {} goes to {} {}", what, kind, sf.dst_ip().str(), sf.eth.dst.str()));
}

void compare_payload(const roce::Frame& sf, const roce::Frame& cf, const std::string& what,
                     std::vector<std::string>* diffs) {
  if (sf.payload.size() != cf.payload.size()) {
    diffs->push_back(fmt::format("{}: payload {} bytes in the capture, {} from ERNIC", what, cf.payload.size(),
                                 sf.payload.size()));
  } else if (sf.payload != cf.payload) {
    size_t b = 0;
    while (sf.payload[b] == cf.payload[b]) ++b;
    diffs->push_back(fmt::format("{}: payload differs from byte {}", what, b));
  }
}

std::string connection_line(const Session& ss) {
  const Plan& p = ss.p;
  return fmt::format("replay {}: requester {} QP 0x{:06x} -> responder {} QP 0x{:06x}, first PSN {} (from {})",
                     ss.opt.file, p.req_ip.str(), p.req_qpn, p.resp_ip.str(), p.resp_qpn, p.first_psn, p.source);
}

bool cut_short(Session& ss, bool reached_end, const std::string& why_short, Verdict* v) {
  if (!reached_end && ss.setup_errors.empty()) ss.setup_errors.push_back(why_short);
  if (ss.setup_errors.empty()) return false;
  v->code = 2;
  v->setup_errors = ss.setup_errors;
  return true;
}

Verdict tally(Session& ss, const std::vector<std::string>& diffs, size_t matched, const std::string& counts) {
  const DiffTally t = report_diffs(diffs, ss.expected, &ss.lines);
  const bool bad = t.unexplained || t.missing;
  Verdict v;
  v.summary = fmt::format("{}, {} difference(s), {} unexplained, {} expected not seen: {}", counts, diffs.size(),
                          t.unexplained, t.missing, bad ? "DIFFERENT" : diffs.empty() ? "identical" : "as expected");
  ss.lines.push_back("summary: " + v.summary);
  v.code = bad && !ss.opt.report_only ? 1 : 0;
  v.differences = diffs.size();
  v.unexplained = t.unexplained;
  v.missing = t.missing;
  v.matched = matched;
  return v;
}

std::vector<std::string> Replay::take_lines() {
  std::vector<std::string> out;
  out.swap(s_->lines);
  return out;
}

}  // namespace ernic::replay
