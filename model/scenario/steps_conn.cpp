// model/scenario: the connection-management steps (scenarios/README.md
// 5.4): deregister_mr, connect_reject, disconnect, hw_handshake, recover,
// and the release of a connection's name and QPs.
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

void Parser::step_deregister_mr(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "name"});
  DeregisterMrStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"));
  s.name = ref_mr(r.req("name"), s.node).name;
  r.finish();
  mrs_[s.node].erase(s.name);
  deregistered_[s.node][s.name] = loc.line;
  emit(std::move(s));
}

void Parser::step_connect_reject(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"client", "server", "reason", "ip_version"});
  ConnectRejectStep s;
  s.loc = loc;
  s.client = ref_node(r.req("client"));
  const Field sf = r.req("server");
  s.server = ref_node(sf);
  if (s.server == s.client) sf.fail("client and server must be different nodes");
  s.reason = uint32_t(r.u64("reason", s.reason, 0, 65535));
  s.ip_version = read_ip_version(r, s.client, s.server);
  r.finish();
  emit(std::move(s));
}

void Parser::step_disconnect(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"conn", "node"});
  DisconnectStep s;
  s.loc = loc;
  const Field cf = r.req("conn");
  const ConnSym c = ref_conn(cf);  // a copy: the entry goes below
  s.conn = read_string(cf);
  if (!c.program_end.empty()) cf.fail("connection '" + s.conn + "' has a program end (" + c.program_end +
                                      "): disconnecting it is the program's and the driver's business, not a step's");
  s.node = ref_conn_end(r.req("node"), s.conn, c);
  s.client = c.client;
  s.server = c.server;
  r.finish();
  release_conn(c, s.conn, loc.line);  // both QPs are deleted
  emit(std::move(s));
}

void Parser::release_conn(const ConnSym& c, const std::string& name, int line) {
  conns_.erase(name);
  disconnected_[name] = line;
  for (const std::string* n : {&c.client, &c.server}) {
    --conn_count_[*n];
    auto& used = qp_used_[*n];
    for (auto it = used.begin(); it != used.end();) it = it->second == name ? used.erase(it) : std::next(it);
  }
}

void Parser::step_hw_handshake(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"conn", "node"});
  HwHandshakeStep s;
  s.loc = loc;
  const Field cf = r.req("conn");
  const ConnSym& c = ref_conn(cf);
  s.conn = read_string(cf);
  s.node = ref_conn_end(r.req("node"), s.conn, c);
  r.finish();
  emit(std::move(s));
}

void Parser::step_recover(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"conn", "code"});
  RecoverStep s;
  s.loc = loc;
  const Field cf = r.req("conn");
  const ConnSym c = ref_conn(cf);  // a copy: the entry goes below
  s.conn = read_string(cf);
  if (!c.program_end.empty())
    cf.fail("connection '" + s.conn + "' has a program end (" + c.program_end + "): recover needs both drivers");
  if (peer_node(c.client) || peer_node(c.server))
    cf.fail("connection '" + s.conn + "' has an end of kind: peer: recover needs both drivers");
  if (auto k = r.take("code")) s.code = uint32_t(read_uint(*k, 0, 0x1F));
  s.client = c.client;
  s.server = c.server;
  r.finish();
  release_conn(c, s.conn, loc.line);  // both QPs return to RESET
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
