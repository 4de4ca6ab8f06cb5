// model/scenario: the capture replay step (scenarios/README.md, replay;
// model/replay/replay.h).
#include <tuple>

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
    if (!roce::IpAddr::parse(s.requester_ip))
      ipf->fail("'" + s.requester_ip + "' is not an IPv4 or IPv6 address");
  }
  for (const auto& [key, out, top] : {std::tuple{"qpn", &s.qpn, kMaxQpn}, {"requester_qpn", &s.requester_qpn, kMaxQpn},
                                      {"first_psn", &s.first_psn, kMaxPsn}})
    if (const auto v = r.opt_u64(key, 0, top)) *out = uint32_t(*v);
  // ERNIC's QP: one of the node's, taken for the rest of the run (as a
  // connection's: counted against num_qp, a given QPN against the others').
  const std::string name = fmt::format("replay@{}", loc.line);  // as qp_setup's (steps_qp_setup.cpp)
  if (const auto q = r.take("node_qpn")) s.node_qpn = read_qpn(*q, s.node, name);
  const uint32_t num_qp = sc_.nodes[node_index_.at(s.node)].num_qp;
  if (++conn_count_[s.node] > num_qp - 1)
    nf.fail(fmt::format("node {} has no free QP for the replay (num_qp {} allows {} connections)", s.node, num_qp,
                        num_qp - 1));
  s.psn_delta = uint32_t(r.u64("psn_delta", 0, 0, kMaxPsn));
  if (const auto vf = r.take("va_base")) {
    if (s.requester_side) vf->fail_key("va_base moves the MRs ERNIC answers from: the responder side's");
    s.va_base = read_uint(*vf, 0, ~uint64_t(0));
  }
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
