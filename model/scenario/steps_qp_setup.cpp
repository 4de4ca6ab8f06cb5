// model/scenario: the QP-setup offload (scenarios/README.md 5.8): the node
// key qp_setup_fsm and the steps qp_setup, qp_release, qp_adopt.
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

// Bytes one slot needs (SQ, CQ, doorbells, RQ; rtl/qp_setup/qp_setup_fsm.sv), rounded up to 4 KiB.
uint64_t fsm_slot_need(const NodeConfig::QpSetupFsm& q) {
  const uint64_t db = (uint64_t(q.sq_depth) * 68 + 63) / 64 * 64;
  const uint64_t rq = (db + 64 + 4095) / 4096 * 4096;
  return (rq + uint64_t(q.rq_depth) * q.rq_elem_bytes + 4095) / 4096 * 4096;
}

const EnumTable<uint8_t>& fsm_states() {
  static const EnumTable<uint8_t> t = {
      {"IDLE", 0}, {"REG_CHECK", 1}, {"RES_ALLOC", 2}, {"CMAC_INIT", 3}, {"READY", 4}};
  return t;
}

}  // namespace

NodeConfig::QpSetupFsm Parser::read_qp_setup_fsm(const Field& f, const NodeConfig& n) {
  MapReader r(f, {"pool", "link_timeout_cycles", "slot_bytes", "sq_depth", "rq_depth", "rq_element_bytes", "pmtu"});
  NodeConfig::QpSetupFsm q;
  q.pool = uint32_t(r.u64("pool", q.pool, 1, 16));
  q.link_timeout_cycles = uint32_t(r.u64("link_timeout_cycles", q.link_timeout_cycles, 0, kMaxU32));
  q.sq_depth = uint32_t(r.u64("sq_depth", q.sq_depth, 16, 65535));
  q.rq_depth = uint32_t(r.u64("rq_depth", q.rq_depth, 16, 65535));
  if (auto ef = r.take("rq_element_bytes")) q.rq_elem_bytes = read_rq_element_bytes(*ef);
  if (auto pf = r.take("pmtu")) q.pmtu = read_pmtu(*pf);
  if (auto sf = r.take("slot_bytes")) {
    q.slot_bytes = read_uint(*sf, 4096, 0xFFFFF000ull);
    if (q.slot_bytes % 4096) sf->fail(fmt::format("slot_bytes must be a multiple of 4096, got {}", q.slot_bytes));
  }
  r.finish();
  if (!n.has_ip) f.fail("qp_setup_fsm sets up IPv4 QPs, and this node has no `ip`");
  // The slots come from host memory (the driver's first MiB stays unused).
  const uint64_t slot = q.slot_bytes ? q.slot_bytes : fsm_slot_need(q);
  const uint64_t mem = uint64_t(n.memory_mib) << 20;
  if (uint64_t(q.pool) * slot > mem / 2)
    f.fail(fmt::format("{} slots of {} bytes take more than half of the node's {} MiB of host memory", q.pool, slot,
                       n.memory_mib));
  return q;
}

// node (initialised, with qp_setup_fsm), expect_status / expect_state / timeout_us.
template <class S>
const NodeConfig& Parser::read_fsm_common(MapReader& r, S& s, uint8_t ok_state) {
  const Field nf = r.req("node");
  s.node = ref_node(nf);
  const NodeConfig& nc = sc_.nodes[node_index_[s.node]];
  if (!nc.qp_setup_fsm) nf.fail("node " + s.node + " has no qp_setup_fsm (add the node key qp_setup_fsm)");
  s.expect_status = uint8_t(r.u64("expect_status", 0x17, 0, 255));
  s.expect_state = r.enm("expect_state", s.expect_status == 0x17 ? ok_state : uint8_t(0), fsm_states());
  // Enough for the link wait (LINK_TIMEOUT cycles) and the register accesses.
  const uint64_t t_us = uint64_t(double(nc.qp_setup_fsm->link_timeout_cycles) / sc_.clocks.core_mhz) + 1;
  s.timeout_us = r.u64("timeout_us", 100 + 2 * t_us, 1, kMaxTimeUs);
  return nc;
}

void Parser::step_qp_setup(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "qp", "remote", "remote_ip", "remote_mac", "remote_qp", "psn", "remote_psn", "udp_port",
                  "pd", "expect_status", "expect_state", "timeout_us"});
  QpSetupStep s;
  s.loc = loc;
  read_fsm_common(r, s, 4);
  const Field qf = r.req("qp");
  s.qp = uint32_t(read_uint(qf, 0, 0xFFFF));
  s.remote_qp = uint32_t(r.req_u64("remote_qp", 0, kMaxU32));
  s.psn = uint32_t(r.u64("psn", 0, 0, kMaxU32));
  s.remote_psn = uint32_t(r.u64("remote_psn", s.psn, 0, kMaxU32));
  s.udp_port = uint32_t(r.u64("udp_port", s.udp_port, 0, 0xFFFF));
  s.pd = uint32_t(r.u64("pd", s.pd, 0, 0xFFFFFF));
  const auto rf = r.take("remote");
  const auto ipf = r.take("remote_ip");
  const auto macf = r.take("remote_mac");
  if (rf && (ipf || macf)) later(*rf, ipf ? *ipf : *macf).fail_key("give either remote (a node) or remote_ip and remote_mac");
  if (rf) {
    s.remote = ref_node(*rf, false);
    if (s.remote == s.node) rf->fail("the remote end must be another node");
    const NodeConfig& rn = sc_.nodes[node_index_[s.remote]];
    if (!rn.has_ip) rf->fail("node " + s.remote + " has no `ip`: qp_setup_fsm sets up IPv4 QPs");
    s.remote_ip = rn.ip;
    s.remote_mac = rn.mac;
  } else {
    if (!ipf || !macf) r.self().fail("qp_setup needs the destination: remote (a node), or remote_ip and remote_mac");
    const std::string is = read_string(*ipf), ms = read_string(*macf);
    s.remote_ip = parse_ipv4(*ipf, is);
    s.remote_mac = parse_mac(*macf, ms);
  }
  r.finish();
  if (s.expect_status == 0x17) {
    auto& mine = fsm_qps_[s.node];
    if (auto it = mine.find(s.qp); it != mine.end())
      qf.fail(fmt::format("QP {} of node {} is already set up (qp_setup at line {}): this one would end with 0x0B",
                          s.qp, s.node, it->second.setup.loc.line));
    auto& used = qp_used_[s.node];
    if (auto it = used.find(s.qp); it != used.end())
      qf.fail(fmt::format("QP {} of node {} is already used by connection {}", s.qp, s.node, it->second));
    mine[s.qp] = FsmQp{s, ""};
    used[s.qp] = fmt::format("qp_setup@{}", loc.line);
  }
  emit(std::move(s));
}

void Parser::step_qp_release(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "qp", "expect_status", "expect_state", "timeout_us"});
  QpReleaseStep s;
  s.loc = loc;
  read_fsm_common(r, s, 0);
  const Field qf = r.req("qp");
  s.qp = uint32_t(read_uint(qf, 0, 0xFFFF));
  r.finish();
  if (s.expect_status == 0x17) {
    auto& mine = fsm_qps_[s.node];
    auto it = mine.find(s.qp);
    if (it == mine.end())
      qf.fail(fmt::format("QP {} of node {} was not set up by a qp_setup step: the release would end with 0x01",
                          s.qp, s.node));
    if (!it->second.adopted.empty())
      qf.fail(fmt::format("QP {} of node {} belongs to connection {}: an adopted QP stays with its driver", s.qp,
                          s.node, it->second.adopted));
    mine.erase(it);
    qp_used_[s.node].erase(s.qp);
  }
  emit(std::move(s));
}

void Parser::step_qp_adopt(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"name", "client", "server", "client_qp", "server_qp", "client_mr", "server_mr"});
  QpAdoptStep s;
  s.loc = loc;
  const Field nf = r.req("name");
  s.name = read_name(nf, "connection");
  if (auto it = conns_.find(s.name); it != conns_.end())
    nf.fail(fmt::format("connection '{}' already exists (at line {})", s.name, it->second.line));
  s.client.node = ref_node(r.req("client"));
  const Field sf = r.req("server");
  s.server.node = ref_node(sf);
  if (s.server.node == s.client.node) sf.fail("client and server must be different nodes");
  if (auto m = r.take("client_mr")) s.client.mr = ref_mr(*m, s.client.node).name;
  if (auto m = r.take("server_mr")) s.server.mr = ref_mr(*m, s.server.node).name;
  const auto cqf = r.take("client_qp");
  const auto sqf = r.take("server_qp");
  r.finish();
  AdoptSide sides[2] = {{&s.client, &cqf, "client_qp"}, {&s.server, &sqf, "server_qp"}};
  find_adopt_ends(r, sides);
  resolve_adopt_ends(r, sides);
  // Both ends' view of each other must agree.
  for (int i = 0; i < 2; ++i) {
    if (!sides[i].fsm) continue;
    const QpAdoptStep::End& e = *sides[i].e;
    const QpAdoptStep::End& o = *sides[1 - i].e;
    const QpSetupStep& st = sides[i].fsm->setup;
    const Field& at = **sides[i].qf;
    if (st.remote_qp != o.qp)
      at.fail(fmt::format("QP {} of node {} was set up (line {}) with remote_qp {}, but the other end is QP {}", e.qp,
                          e.node, st.loc.line, st.remote_qp, o.qp));
    if (e.remote_psn != o.psn)
      at.fail(fmt::format("QP {} of node {} expects PSN 0x{:06x} first (remote_psn, line {}), but QP {} of node {} "
                          "starts at 0x{:06x}", e.qp, e.node, e.remote_psn, st.loc.line, o.qp, o.node, o.psn));
  }
  for (int i = 0; i < 2; ++i) {
    QpAdoptStep::End& e = *sides[i].e;
    const uint32_t num_qp = sc_.nodes[node_index_[e.node]].num_qp;
    // A driver end's QP is enabled by the driver: 3.x counts enabled QPs in
    // XRNICCONF[15:8] (A-ERNIC-9), as connect's read_qpn checks.
    if (!sides[i].fsm && reg_layout(sc_.layout).qp_count_in_xrnicconf && e.qp > 255)
      (*sides[i].qf ? **sides[i].qf : nf)
          .fail(fmt::format("QP {} of node {}: the {} layout enables at most 255 QPs (XRNICCONF[15:8]); use 2..255, "
                            "or layout: \"4.x\"",
                            e.qp, e.node, to_string(sc_.layout)));
    if (++conn_count_[e.node] > num_qp - 1)
      nf.fail(fmt::format("node {} has no free QP for this connection (num_qp {} allows {} connections)", e.node,
                          num_qp, num_qp - 1));
    if (sides[i].fsm) sides[i].fsm->adopted = s.name;
    qp_used_[e.node][e.qp] = s.name;
  }
  conns_[s.name] = ConnSym{s.client.node, s.server.node, s.client.mr, s.server.mr, loc.line};
  disconnected_.erase(s.name);
  emit(std::move(s));
}

// qp_adopt: the ends set up by qp_setup (named by client_qp / server_qp;
// at least one), each on a node with an IPv4 address.
void Parser::find_adopt_ends(const MapReader& r, AdoptSide (&sides)[2]) {
  for (int i = 0; i < 2; ++i) {
    QpAdoptStep::End& e = *sides[i].e;
    if (!sc_.nodes[node_index_[e.node]].has_ip)
      r.self().fail("node " + e.node + " has no `ip`: a qp_adopt connection runs over IPv4");
    if (!*sides[i].qf) continue;
    e.qp = uint32_t(read_uint(**sides[i].qf, 0, 0xFFFF));
    auto& mine = fsm_qps_[e.node];
    if (auto it = mine.find(e.qp); it != mine.end()) {
      if (!it->second.adopted.empty())
        (*sides[i].qf)->fail(fmt::format("QP {} of node {} is already adopted by connection {}", e.qp, e.node,
                                         it->second.adopted));
      sides[i].fsm = &it->second;
      e.fsm = true;
    }
  }
  if (!sides[0].fsm && !sides[1].fsm)
    r.self().fail("qp_adopt needs an end set up by qp_setup: name it with client_qp or server_qp");
}

// qp_adopt: an end set up by qp_setup must have been set up for the other
// node; an end set up by the driver takes the QP and PSNs the other end's
// qp_setup named as remote.
void Parser::resolve_adopt_ends(const MapReader& r, AdoptSide (&sides)[2]) {
  for (int i = 0; i < 2; ++i) {
    QpAdoptStep::End& e = *sides[i].e;
    QpAdoptStep::End& o = *sides[1 - i].e;
    const Field& at = *sides[i].qf ? **sides[i].qf : r.self();
    if (sides[i].fsm) {
      const QpSetupStep& st = sides[i].fsm->setup;
      e.psn = st.psn & 0xFFFFFF;
      e.remote_psn = st.remote_psn & 0xFFFFFF;
      const NodeConfig& on = sc_.nodes[node_index_[o.node]];
      if (!(st.remote_ip == on.ip) || !(st.remote_mac == on.mac))
        at.fail(fmt::format("QP {} of node {} was set up (line {}) for {} / {}, not for node {} ({} / {})", e.qp,
                            e.node, st.loc.line, st.remote_ip.str(), st.remote_mac.str(), o.node, on.ip.str(),
                            on.mac.str()));
      continue;
    }
    // Set up by the driver, to match the other end.
    const QpSetupStep& st = sides[1 - i].fsm->setup;
    const uint32_t want = st.remote_qp;
    if (*sides[i].qf && e.qp != want)
      at.fail(fmt::format("{} {} is not the remote QP of node {}'s QP {} (set up at line {} with remote_qp {})",
                          sides[i].key, e.qp, o.node, st.qp, st.loc.line, want));
    const uint32_t num_qp = sc_.nodes[node_index_[e.node]].num_qp;
    if (want < 2 || want > num_qp)
      at.fail(fmt::format("node {}'s QP for this connection would be {} (the remote_qp at line {}), outside 2..{}",
                          e.node, want, st.loc.line, num_qp));
    auto& used = qp_used_[e.node];
    if (auto it = used.find(want); it != used.end())
      at.fail(fmt::format("QP {} of node {} is already used by connection {}", want, e.node, it->second));
    e.qp = want;
    e.psn = st.remote_psn & 0xFFFFFF;
    e.remote_psn = st.psn & 0xFFFFFF;
  }
}

}  // namespace ernic::scenario_parse
