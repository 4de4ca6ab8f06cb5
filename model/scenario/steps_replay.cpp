// model/scenario: the capture replay step (scenarios/README.md, replay;
// model/replay/replay.h).
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

const EnumTable<bool> kSides = {{"responder", false}, {"requester", true}};
const EnumTable<bool> kOnDifference = {{"fail", true}, {"report", false}};

}  // namespace

// replay: { capture: FILE, node: A, from: P, side: responder | requester,
//           requester_ip, qpn, requester_qpn, first_psn, node_qpn, psn_delta,
//           va_base, fast, settle_us, expect: [difference, ...],
//           on_difference: fail | report }
void Parser::step_replay(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"capture", "node", "from", "side", "requester_ip", "qpn", "requester_qpn", "first_psn", "node_qpn",
                  "psn_delta", "va_base", "fast", "settle_us", "expect", "on_difference"});
  ReplayStep s;
  s.loc = loc;
  const Field cf = r.req("capture");
  s.capture = read_string(cf);
  if (s.capture.empty()) cf.fail("the capture file's path (pcap or pcapng; relative: to this file's folder)");
  const Field nf = r.req("node");
  s.node = ref_node(nf);
  const Field pf = r.req("from");
  s.from = ref_node(pf, false, false);
  if (!peer_node(s.from))
    pf.fail("node '" + s.from + "' is an ERNIC node; `from` names the kind: peer node that plays the capture's side");
  s.requester_side = r.enm("side", false, kSides);
  if (const auto ipf = r.take("requester_ip")) {
    s.requester_ip = read_string(*ipf);
    if (!roce::Ipv4Addr::parse(s.requester_ip) && !roce::Ipv6Addr::parse(s.requester_ip))
      ipf->fail("'" + s.requester_ip + "' is not an IPv4 or IPv6 address");
  }
  for (const auto& [key, out] : {std::pair{"qpn", &s.qpn}, {"requester_qpn", &s.requester_qpn},
                                 {"first_psn", &s.first_psn}})
    if (const auto v = r.opt_u64(key, 0, kMaxPsn)) *out = uint32_t(*v);
  const uint32_t num_qp = sc_.nodes[node_index_.at(s.node)].num_qp;
  s.node_qpn = uint32_t(r.u64("node_qpn", 2, 2, std::min<uint64_t>(num_qp - 1, 255)));
  s.psn_delta = uint32_t(r.u64("psn_delta", 0, 0, kMaxPsn));
  s.va_base = r.opt_u64("va_base", 0, ~uint64_t(0));
  if (const auto ff = r.take("fast")) s.fast = read_bool(*ff);
  s.settle_us = uint32_t(r.u64("settle_us", s.settle_us, 0, 1000000));
  if (const auto ef = r.take("expect"))
    for (const Field& e : read_list(*ef)) {
      s.expect.push_back(read_string(e));
      if (s.expect.back().empty()) e.fail("a difference as the report lists it (after `diff: `)");
    }
  s.fail_on_difference = r.enm("on_difference", true, kOnDifference);
  r.finish();
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
