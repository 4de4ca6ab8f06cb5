// model/scenario: the driver-level steps (scenarios/README.md 5.1): init,
// register_mr, fill, connect, post and its WQEs, wait_completions, recv,
// check_memory, wait.
#include <algorithm>
#include <cctype>

#include "model/roce/mtu.h"
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

const EnumTable<Pattern> kPatterns = {{"random", Pattern::random},
                                      {"zero", Pattern::zero},
                                      {"incrementing", Pattern::incrementing},
                                      {"constant", Pattern::constant}};
const EnumTable<Access> kAccess = {{"r", Access::r}, {"w", Access::w}, {"rw", Access::rw}};
// The WQE opcodes by their scenario names (model/regs/wqe.h), in PG332's order.
const EnumTable<WqeOpcode> kOpcodes = [] {
  EnumTable<WqeOpcode> t;
  for (WqeOpcode o : pg332::kAllWqeOpcodes) t.emplace_back(pg332::wqe_opcode_name(o), o);
  return t;
}();
const EnumTable<Doorbell> kDoorbells = {{"once", Doorbell::once}, {"each", Doorbell::each},
                                        {"none", Doorbell::none}};

}  // namespace

uint32_t read_pmtu(const Field& f) {
  const uint64_t v = read_uint(f, 0, kMaxU32);
  if (!roce::is_pmtu(uint32_t(v))) f.fail(fmt::format("pmtu must be one of {}, got {}", roce::pmtu_list(), v));
  return uint32_t(v);
}

uint32_t read_rq_element_bytes(const Field& f) {
  // QPCONFi[31:16]: the element size in 256-byte units, a power of two.
  const uint64_t v = read_uint(f, 256, 256ull << 15);
  if (v % 256 || ((v / 256) & (v / 256 - 1)))
    f.fail(fmt::format("rq_element_bytes must be 256 times a power of two (256, 512, ..., 8 MiB), got {}", v));
  return uint32_t(v);
}

void Parser::step_init(const Field& f, const SourceLoc& loc) {
  InitStep s;
  s.loc = loc;
  std::vector<Field> names;
  if (f.node.IsSequence())
    names = read_list(f);
  else
    names.push_back(f);
  if (names.empty()) f.fail("expected a node name or a list of node names, got an empty list");
  for (const Field& nf : names) {
    const std::string n = ref_node(nf, false);
    if (program_node(n)) nf.fail("node '" + n + "' has host: program: its program initialises it, not init");
    auto it = initialised_.find(n);
    if (it != initialised_.end())
      nf.fail(fmt::format("node {} is already initialised (at line {})", n, it->second));
    initialised_[n] = loc.line;
    s.nodes.push_back(n);
  }
  emit(std::move(s));
}

void Parser::step_register_mr(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "name", "length", "access", "pd"});
  RegisterMrStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"));
  const Field nf = r.req("name");
  s.name = read_name(nf, "MR");
  auto& table = mrs_[s.node];
  if (auto it = table.find(s.name); it != table.end())
    nf.fail(fmt::format("MR '{}' is already registered on node {} (at line {})", s.name, s.node,
                        it->second.line));
  if (table.size() >= kMaxMrsPerNode)
    nf.fail(fmt::format("too many MRs on node {}: at most {}", s.node, kMaxMrsPerNode));
  const uint64_t mem = uint64_t(sc_.nodes[node_index_[s.node]].memory_mib) << 20;
  const Field lf = r.req("length");
  s.length = read_uint(lf, 1, kMaxU64);
  if (s.length > mem)
    lf.fail(fmt::format("length {} exceeds node {}'s memory ({} bytes, memory_mib)", s.length, s.node, mem));
  s.access = r.enm("access", Access::rw, kAccess);
  s.pd = uint32_t(r.u64("pd", 1, 0, 0xFFFFFF));
  r.finish();
  table[s.name] = MrSym{s.length, loc.line};
  deregistered_[s.node].erase(s.name);
  emit(std::move(s));
}

PatternSpec Parser::read_pattern(MapReader& r) {
  PatternSpec p;
  p.pattern = read_enum(r.req("pattern"), kPatterns);
  auto seed = r.take("seed");
  auto value = r.take("value");
  if (seed && p.pattern != Pattern::random) seed->fail_key("seed applies only to pattern: random");
  if (value && p.pattern != Pattern::constant) value->fail_key("value applies only to pattern: constant");
  p.seed = seed ? read_uint(*seed, 0, kMaxU64) : sc_.seed;
  p.value = value ? uint8_t(read_uint(*value, 0, 255)) : 0;
  return p;
}

void Parser::step_fill(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "mr", "pattern", "seed", "value", "offset", "length"});
  FillStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"));
  const MrRef mr = ref_mr(r.req("mr"), s.node);
  s.mr = mr.name;
  const PatternSpec p = read_pattern(r);
  s.pattern = p.pattern;
  s.seed = p.seed;
  s.value = p.value;
  const auto of = r.take("offset");
  s.offset = of ? read_uint(*of, 0, kMaxU64) : 0;
  s.length = resolve_range(r, of ? *of : r.self(), s.offset, mr.length, "MR " + s.mr);
  r.finish();
  emit(std::move(s));
}

void Parser::step_connect(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"name", "client", "server", "client_mr", "server_mr", "pmtu", "sq_depth", "rq_depth",
                  "rq_element_bytes", "start_psn", "client_psn", "server_psn", "client_qp", "server_qp", "cm", "ip_version", "hw_handshake",
                  "batch"});
  ConnectStep s;
  s.loc = loc;
  const Field nf = r.req("name");
  s.name = read_name(nf, "connection");
  const auto batch_f = r.take("batch");
  if (batch_f) s.batch = uint32_t(read_uint(*batch_f, 1, kMaxConnectBatch));
  // The names this step makes: <name>, or <name>1..<name>N with batch.
  std::vector<std::string> names;
  if (!s.batch) names.push_back(s.name);
  for (uint32_t i = 1; i <= s.batch; ++i) names.push_back(s.name + std::to_string(i));
  for (const auto& n : names)
    if (auto it = conns_.find(n); it != conns_.end())
      nf.fail(fmt::format("connection '{}' already exists (at line {})", n, it->second.line));
  // An end whose host is a program is not initialised by a step.
  auto end = [&](const Field& ef) {
    const std::string n = ref_node(ef, false);
    return program_node(n) ? n : ref_node(ef);
  };
  const Field cf = r.req("client");
  s.client = end(cf);
  const Field sf = r.req("server");
  s.server = end(sf);
  if (s.server == s.client) sf.fail("client and server must be different nodes");
  if (program_node(s.client) && program_node(s.server))
    sf.fail("both ends have host: program; a connect step programs the built-in driver's end, so one end needs it");
  s.program_end = program_node(s.client) ? s.client : program_node(s.server) ? s.server : "";
  for (const char* k : {"client_mr", "server_mr"})
    if (auto m = r.take(k)) {
      const std::string& owner = std::string(k) == "client_mr" ? s.client : s.server;
      if (owner == s.program_end)
        m->fail_key("node " + owner + " has host: program: its MRs are the program's, not the scenario's");
      (std::string(k) == "client_mr" ? s.client_mr : s.server_mr) = ref_mr(*m, owner).name;
    }
  if (auto pf = r.take("pmtu")) s.pmtu = read_pmtu(*pf);
  s.sq_depth = uint32_t(r.u64("sq_depth", s.sq_depth, 16, 65535));
  s.rq_depth = uint32_t(r.u64("rq_depth", s.rq_depth, 16, 65535));
  if (auto ef = r.take("rq_element_bytes")) s.rq_elem_bytes = read_rq_element_bytes(*ef);
  std::optional<uint32_t> start;
  if (auto p = r.take("start_psn")) start = read_psn(*p);
  s.client_psn = start;
  s.server_psn = start;
  if (auto p = r.take("client_psn")) s.client_psn = read_psn(*p);
  if (auto p = r.take("server_psn")) s.server_psn = read_psn(*p);
  if (auto q = r.take("client_qp")) s.client_qp = read_qpn(*q, s.client, s.name);
  if (auto q = r.take("server_qp")) s.server_qp = read_qpn(*q, s.server, s.name);
  if (auto c = r.take("cm")) s.cm = read_bool(*c);
  if (auto h = r.take("hw_handshake")) s.sideband = read_bool(*h);
  s.ip_version = read_ip_version(r, s.client, s.server);
  r.finish();
  check_peer_connect(r, s);  // kind: peer ends (peer.cpp)
  if (s.batch) {
    if (!s.cm) batch_f->fail_key("batch sets connections up through CM: it needs cm: true");
    if (!s.program_end.empty()) batch_f->fail_key("batch needs the built-in driver on both ends");
    if (s.client_qp || s.server_qp)
      batch_f->fail_key("batch: the drivers choose the QPNs (client_qp / server_qp name one QP)");
  }
  if (!s.program_end.empty()) {
    const bool client = s.program_end == s.client;
    if (s.cm && !client)
      r.self().fail("node " + s.program_end + " has host: program: with cm: true a program end must be the client "
                    "(its program connects, the built-in driver listens); as the server, connect out of band (cm: false)");
    if (s.sideband) r.self().fail("hw_handshake needs the built-in driver on both ends");
    if (!s.cm && (!(client ? s.client_qp : s.server_qp) || !(client ? s.client_psn : s.server_psn)))
      r.self().fail(std::string("node ") + s.program_end + " has host: program: give its QPN and PSN (" +
                    (client ? "client_qp, client_psn" : "server_qp, server_psn") + "); its program programs them");
  }
  for (const std::string* n : {&s.client, &s.server}) {
    const uint32_t num_qp = sc_.nodes[node_index_[*n]].num_qp;
    conn_count_[*n] += uint32_t(names.size());
    if (conn_count_[*n] > num_qp - 1)
      nf.fail(fmt::format("node {} has no free QP for {} (num_qp {} allows {} connections)", *n,
                          s.batch ? "these connections" : "this connection", num_qp, num_qp - 1));
  }
  for (const auto& n : names) {
    conns_[n] = ConnSym{s.client, s.server, s.client_mr, s.server_mr, loc.line, s.program_end};
    disconnected_.erase(n);
  }
  emit(std::move(s));
}

uint32_t Parser::read_ip_version(MapReader& r, const std::string& a, const std::string& b) {
  const NodeConfig& na = sc_.nodes[node_index_[a]];
  const NodeConfig& nb = sc_.nodes[node_index_[b]];
  const bool v4 = na.has_ip && nb.has_ip, v6 = na.ip6 && nb.ip6;
  auto vf = r.take("ip_version");
  if (!vf) {
    if (!v4 && !v6)
      r.self().fail(fmt::format("nodes {} and {} share no IP version (one has only `ip`, the other only `ipv6`)",
                                a, b));
    return v4 ? 4 : 6;
  }
  const uint64_t v = read_uint(*vf, 0, 255);
  if (v != 4 && v != 6) vf->fail(fmt::format("ip_version must be 4 or 6, got {}", v));
  if (v == 4 && !v4) vf->fail(fmt::format("ip_version 4: node {} has no `ip` (IPv4) address", na.has_ip ? b : a));
  if (v == 6 && !v6) vf->fail(fmt::format("ip_version 6: node {} has no `ipv6` address", na.ip6 ? b : a));
  return uint32_t(v);
}

std::optional<uint32_t> Parser::read_psn(const Field& f) {
  if (is_plain_scalar(f.node) && f.node.Scalar() == "auto") return std::nullopt;
  if (is_plain_scalar(f.node) && !f.node.Scalar().empty() &&
      !std::isdigit(static_cast<unsigned char>(f.node.Scalar()[0])) && f.node.Scalar()[0] != '-')
    f.fail("expected 'auto' or a PSN 0..0xFFFFFF, got '" + f.node.Scalar() + "'");
  return uint32_t(read_uint(f, 0, 0xFFFFFF));
}

uint32_t Parser::read_qpn(const Field& f, const std::string& node, const std::string& conn) {
  // 3.x counts enabled QPs in XRNICCONF[15:8]: QPN 256 cannot be enabled
  // there even with num_qp 256 (A-ERNIC-9; the driver's alloc_qpn).
  const uint32_t num_qp = sc_.nodes[node_index_[node]].num_qp;
  const uint32_t top = reg_layout(sc_.layout).qp_count_in_xrnicconf ? std::min(num_qp, 255u) : num_qp;
  const uint32_t q = uint32_t(read_uint(f, 2, num_qp));
  if (q > top)
    f.fail(fmt::format("QP {} of node {}: the {} layout enables at most 255 QPs (XRNICCONF[15:8]); use 2..255, "
                       "or layout: \"4.x\"",
                       q, node, to_string(sc_.layout)));
  auto& used = qp_used_[node];
  if (auto it = used.find(q); it != used.end())
    f.fail(fmt::format("QP {} of node {} is already used by connection {}", q, node, it->second));
  used[q] = conn;
  sc_.named_qpns[node].insert(q);
  return q;
}

void Parser::step_post(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"conn", "node", "doorbell", "wqes", "repeat"});
  PostStep s;
  s.loc = loc;
  const Field cf = r.req("conn");
  const ConnSym& c = ref_conn(cf);
  s.conn = read_string(cf);
  s.node = ref_conn_end(r.req("node"), s.conn, c);
  const bool is_client = s.node == c.client;
  const std::string& peer_mr = is_client ? c.server_mr : c.client_mr;
  const char* peer_mr_key = is_client ? "server_mr" : "client_mr";
  s.doorbell = r.enm("doorbell", Doorbell::once, kDoorbells);
  const Field wf = r.req("wqes");
  const std::vector<Field> items = read_list(wf);
  if (items.empty()) wf.fail("at least one WQE is required");
  for (const Field& item : items) s.wqes.push_back(read_wqe(item, s.node, peer_mr, peer_mr_key, s.conn));
  s.repeat = uint32_t(r.u64("repeat", 1, 1, kMaxU32));
  r.finish();
  emit(std::move(s));
}

// peer_mr: the remote MR the connection gives this end ("" = none), named
// by peer_mr_key in the connect step.
WqeSpec Parser::read_wqe(const Field& f, const std::string& node, const std::string& peer_mr,
                         const char* peer_mr_key, const std::string& conn) {
  MapReader r(f, {"opcode", "wr_id", "local_mr", "local_offset", "length", "remote_offset", "immdt", "rkey"});
  WqeSpec w;
  w.loc = f.loc();
  const Field of = r.req("opcode");
  w.opcode = read_enum(of, kOpcodes);
  const bool rdma = w.opcode == WqeOpcode::write || w.opcode == WqeOpcode::write_imm ||
                    w.opcode == WqeOpcode::read;
  const bool has_imm = w.opcode == WqeOpcode::write_imm || w.opcode == WqeOpcode::send_imm ||
                       w.opcode == WqeOpcode::send_inv;
  if (rdma && peer_mr.empty())
    of.fail(fmt::format("{} needs a remote MR, but connection {} has no {}", to_string(w.opcode), conn,
                        peer_mr_key));
  w.wr_id = uint32_t(r.req_u64("wr_id", 0, 65535));
  w.local_mr = ref_mr(r.req("local_mr"), node).name;
  w.local_offset = r.u64("local_offset", 0, 0, kMaxU64);
  w.length = uint32_t(r.req_u64("length", 0, kMaxU32));
  if (auto ro = r.take("remote_offset")) {
    if (!rdma) ro->fail_key(std::string("remote_offset does not apply to ") + to_string(w.opcode));
    w.remote_offset = read_uint(*ro, 0, kMaxU64);
  }
  if (auto im = r.take("immdt")) {
    if (!has_imm) im->fail_key(std::string("immdt applies only to write_imm, send_imm and send_inv, not ") +
                           to_string(w.opcode));
    w.immdt = uint32_t(read_uint(*im, 0, kMaxU32));
  }
  if (auto rk = r.take("rkey")) {
    if (!rdma) rk->fail_key(std::string("rkey does not apply to ") + to_string(w.opcode));
    w.rkey = uint32_t(read_uint(*rk, 0, kMaxU32));
  }
  r.finish();
  return w;
}

// The keys a step that waits for things on one end of a connection
// shares (wait_completions, recv): conn, node, timeout_us, and count with
// its expect list (count defaults to the list's length, at least 1, and
// may not be below it). read_item reads one expect entry.
template <class Step, class ReadItem>
void Parser::read_waiting(MapReader& r, Step& s, const char* what, ReadItem read_item) {
  const Field cf = r.req("conn");
  const ConnSym& c = ref_conn(cf);
  s.conn = read_string(cf);
  s.node = ref_conn_end(r.req("node"), s.conn, c);
  const auto count = r.opt_u64("count", 1, kMaxU32);
  s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
  if (auto ef = r.take("expect")) {
    for (const Field& item : read_list(*ef)) s.expect.push_back(read_item(item));
    if (count && s.expect.size() > *count)
      ef->fail(fmt::format("{} expected {} but count is {}", s.expect.size(), what, *count));
  }
  s.count = count ? uint32_t(*count) : uint32_t(std::max<size_t>(1, s.expect.size()));
}

void Parser::step_wait_completions(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"conn", "node", "count", "timeout_us", "expect", "errors", "batch", "cq_head"});
  WaitCompletionsStep s;
  s.loc = loc;
  static const EnumTable<bool> kErrors = {{"none", false}, {"allowed", true}};
  s.errors_allowed = r.enm("errors", false, kErrors);
  s.batch = uint32_t(r.u64("batch", 0, 1, 65535));
  static const EnumTable<bool> kCqHead = {{"mirror", false}, {"mmio", true}};
  s.cq_head_mmio = r.enm("cq_head", false, kCqHead);
  read_waiting(r, s, "completions", [&](const Field& item) {
    MapReader er(item, {"wr_id", "opcode", "error"});
    CompletionExpect e;
    if (auto w = er.opt_u64("wr_id", 0, 65535)) e.wr_id = uint32_t(*w);
    if (auto o = er.take("opcode")) e.opcode = read_enum(*o, kOpcodes);
    if (auto b = er.take("error")) e.error = read_bool(*b);
    er.finish();
    return e;
  });
  r.finish();
  emit(std::move(s));
}

void Parser::step_recv(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"conn", "node", "count", "timeout_us", "consume", "expect"});
  RecvStep s;
  s.loc = loc;
  if (auto b = r.take("consume")) s.consume = read_bool(*b);
  read_waiting(r, s, "messages", [&](const Field& item) {
    MapReader er(item, {"opcode", "immdt", "length", "equals"});
    RecvExpect e;
    if (auto o = er.take("opcode")) {
      e.opcode = read_enum(*o, kOpcodes);
      if (*e.opcode == WqeOpcode::write || *e.opcode == WqeOpcode::read)
        o->fail("a receiver sees send, send_imm, send_inv or write_imm messages");
    }
    if (auto i = er.opt_u64("immdt", 0, 0xFFFFFFFFull)) e.immdt = uint32_t(*i);
    const auto lf = er.take("length");
    if (lf) e.length = read_uint(*lf, 1, kMaxU32);
    if (auto eq = er.take("equals")) {
      if (!lf) eq->fail_key("equals needs the number of bytes to compare: give length");
      if (e.opcode && *e.opcode == WqeOpcode::write_imm)
        eq->fail_key("a write_imm message has no RQ element to compare");
      MapReader mr(*eq, {"node", "mr", "offset"});
      MemRef m;
      m.node = ref_node(mr.req("node"), true, false);  // only read: a peer's MR too, as check_memory's
      const Field mf = mr.req("mr");
      const MrRef other = ref_mr(mf, m.node);
      m.mr = other.name;
      const auto of = mr.take("offset");
      m.offset = of ? read_uint(*of, 0, kMaxU64) : 0;
      if (m.offset > other.length || e.length > other.length - m.offset)
        (of ? *of : mf).fail(fmt::format("offset {} + length {} exceeds MR {} of node {} ({} bytes)", m.offset,
                                         e.length, m.mr, m.node, other.length));
      mr.finish();
      e.equals = m;
    } else if (lf) {
      lf->fail_key("length is the number of bytes compared with equals: give equals");
    }
    er.finish();
    return e;
  });
  r.finish();
  emit(std::move(s));
}

void Parser::step_check_memory(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "mr", "offset", "length", "equals", "pattern"});
  CheckMemoryStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"));
  const MrRef mr = ref_mr(r.req("mr"), s.node);
  s.mr = mr.name;
  const auto of = r.take("offset");
  s.offset = of ? read_uint(*of, 0, kMaxU64) : 0;
  s.length = resolve_range(r, of ? *of : r.self(), s.offset, mr.length, "MR " + s.mr);
  auto eq = r.take("equals");
  auto pat = r.take("pattern");
  if (eq && pat) pat->fail_key("give either equals or pattern, not both");
  if (!eq && !pat) r.self().fail("check_memory needs one of 'equals' or 'pattern'");
  if (eq) {
    MapReader er(*eq, {"node", "mr", "offset"});
    MemRef m;
    m.node = ref_node(er.req("node"));
    const Field emf = er.req("mr");
    const MrRef other = ref_mr(emf, m.node);
    m.mr = other.name;
    const auto eof = er.take("offset");
    m.offset = eof ? read_uint(*eof, 0, kMaxU64) : 0;
    if (m.offset > other.length || s.length > other.length - m.offset)
      (eof ? *eof : emf)
          .fail(fmt::format("offset {} + length {} exceeds MR {} of node {} ({} bytes)", m.offset, s.length,
                            m.mr, m.node, other.length));
    er.finish();
    s.equals = m;
  } else {
    if (!pat->node.IsMap())
      pat->fail("expected a map like {pattern: random, seed: 7}, got " + describe(pat->node));
    MapReader pr(*pat, {"pattern", "seed", "value"});
    s.pattern = read_pattern(pr);
    pr.finish();
  }
  r.finish();
  emit(std::move(s));
}

void Parser::step_wait(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"us", "until_us"});
  WaitStep s;
  s.loc = loc;
  if (r.has("us") == r.has("until_us")) r.self().fail("give exactly one of us (a duration) and until_us (a time)");
  if (auto u = r.opt_u64("until_us", 0, kMaxTimeUs)) {
    s.us = *u;
    s.until = true;
  } else {
    s.us = r.req_u64("us", 1, kMaxTimeUs);
  }
  r.finish();
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
