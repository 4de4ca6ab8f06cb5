// model/scenario: the step list: the table of step kinds (name -> parse
// function), the one-key rule of a step, the steps repeat may not hold; and
// the resolution of names in step order (nodes, MRs, connections).
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

// A new step kind is one row here (and its parse function).
const std::vector<std::pair<std::string, Parser::StepParser>>& Parser::step_kinds() {
  static const std::vector<std::pair<std::string, StepParser>> kinds = {
      {"init", &Parser::step_init},
      {"register_mr", &Parser::step_register_mr},
      {"fill", &Parser::step_fill},
      {"connect", &Parser::step_connect},
      {"post", &Parser::step_post},
      {"wait_completions", &Parser::step_wait_completions},
      {"check_memory", &Parser::step_check_memory},
      {"wait", &Parser::step_wait},
      {"reg_write", &Parser::step_reg_write},
      {"reg_read", &Parser::step_reg_read},
      {"reg_expect", &Parser::step_reg_expect},
      {"reg_poll", &Parser::step_reg_poll},
      {"mem_write", &Parser::step_mem_write},
      {"mem_expect", &Parser::step_mem_expect},
      {"deregister_mr", &Parser::step_deregister_mr},
      {"connect_reject", &Parser::step_connect_reject},
      {"disconnect", &Parser::step_disconnect},
      {"recover", &Parser::step_recover},
      {"hw_handshake", &Parser::step_hw_handshake},
      {"debug_preset", &Parser::step_debug_preset},
      {"fault", &Parser::step_fault},
      {"link", &Parser::step_link},
      {"expect_frames", &Parser::step_expect_frames},
      {"expect_idle", &Parser::step_expect_idle},
      {"program", &Parser::step_program},
      {"recv", &Parser::step_recv},
      {"bypass_send", &Parser::step_bypass_send},
      {"expect_bypass", &Parser::step_expect_bypass},
      {"replay", &Parser::step_replay},
      {"wait_until", &Parser::step_wait_until},
      {"expect_compliance", &Parser::step_expect_compliance},
      {"expect_switch", &Parser::step_expect_switch},
      {"expect_qp", &Parser::step_expect_qp},
      {"repeat", &Parser::step_repeat},
      {"parallel", &Parser::step_parallel},
      {"barrier", &Parser::step_barrier},
      {"qp_setup", &Parser::step_qp_setup},
      {"qp_release", &Parser::step_qp_release},
      {"qp_adopt", &Parser::step_qp_adopt},
  };
  return kinds;
}

void Parser::parse_steps(const Field& f, std::vector<Step>& out, const Scope& scope) {
  std::vector<std::string> kind_names;
  for (const auto& k : step_kinds()) kind_names.push_back(k.first);

  std::vector<Step>* const saved_out = out_;
  const Scope saved_scope = scope_;
  out_ = &out;
  scope_ = scope;

  const std::vector<Field> items = read_list(f);
  if (items.empty()) f.fail("at least one step is required");
  ++step_depth_;
  for (const Field& item : items) {
    if (step_depth_ == 1) top_step_ = &item;
    parse_step(item, kind_names);
  }
  --step_depth_;
  out_ = saved_out;
  scope_ = saved_scope;
}

void Parser::parse_step(const Field& item, const std::vector<std::string>& kind_names) {
  // Steps that create or delete a name (or initialise a node): running
  // them `count` times would clash, so they may not be repeated.
  static const std::vector<std::pair<std::string, const char*>> kOnce = {
      {"init", "a node is initialised once"},
      {"register_mr", "the MR name would be registered again"},
      {"connect", "the connection name would be created again"},
      {"deregister_mr", "the MR would be deregistered again"},
      {"disconnect", "the connection would be disconnected again"},
      {"recover", "the connection would be recovered again"},
      {"qp_setup", "the QP would be set up again (status 0x0B)"},
      {"qp_release", "the QP would be released again (status 0x01)"},
      {"qp_adopt", "the connection name would be created again"},
      {"replay", "its QP on the ERNIC node stays taken: the next round would need another"},
  };
  if (!item.node.IsMap() || item.node.size() == 0)
    item.fail("a step is a map with one key, the step kind (" + join(kind_names) + "), got " +
              describe(item.node));
  std::vector<std::pair<YAML::Node, YAML::Node>> kv;
  for (const auto& e : item.node) kv.emplace_back(e.first, e.second);
  if (kv.size() > 1)
    ctx_.fail(kv[1].first.Mark(), item.path,
              fmt::format("a step has exactly one key (the step kind), found '{}' and '{}' (indent "
                          "parameters under the kind, or start a new step with '-')",
                          kv[0].first.Scalar(), kv[1].first.Scalar()));
  const YAML::Node key = kv[0].first;
  if (!key.IsScalar()) item.fail("the step kind must be a string");
  const std::string kind = key.Scalar();
  const std::string path = item.path + "." + kind;
  StepParser fn = nullptr;
  for (const auto& k : step_kinds())
    if (k.first == kind) fn = k.second;
  if (!fn) ctx_.fail(key.Mark(), path, "unknown step kind '" + shown(kind) + "'" + suggest(kind, kind_names));
  // Expansion bounds: steps parsed (a YAML alias is parsed again at each
  // use: nested aliases multiply), blamed on the top-level step that holds
  // them; and steps run (nested repeats multiply), blamed on the innermost
  // repeat's count.
  if (++steps_parsed_ > max_steps_)
    top_step_->fail(fmt::format("this step expands to more than {} steps in all (a YAML alias is expanded each time "
                               "it is used; nested aliases multiply): refused",
                               max_steps_));
  step_runs_ = scope_.runs > kMaxStepRuns - step_runs_ ? kMaxStepRuns + 1 : step_runs_ + scope_.runs;
  if (step_runs_ > kMaxStepRuns)
    ctx_.fail(scope_.repeat_count_mark, scope_.repeat_count_path,
              fmt::format("with this count the scenario would run more than {} steps in all (a step inside repeats "
                          "runs once per repetition of each): lower the counts",
                          kMaxStepRuns));
  if (scope_.repeat_line > 0)
    for (const auto& o : kOnce)
      if (o.first == kind)
        ctx_.fail(key.Mark(), path,
                  fmt::format("{} is not allowed inside repeat (the repeat at line {} runs its steps {} "
                              "times, and {}): put it before or after the repeat",
                              kind, scope_.repeat_line, scope_.repeat_count, o.second));
  const std::string saved_kind = step_kind_;  // repeat and parallel parse steps inside
  step_kind_ = kind;
  (this->*fn)(make_field(ctx_, kv[0].second, path, key.Mark()), item.loc());
  step_kind_ = saved_kind;
}

std::string Parser::ref_node(const Field& f, bool must_be_initialised, bool drives) {
  const std::string n = read_name(f, "node");
  if (!node_index_.count(n)) {
    std::vector<std::string> names;
    for (const auto& node : sc_.nodes) names.push_back(node.name);
    f.fail("unknown node '" + n + "'" + suggest(n, names, "nodes are"));
  }
  if (drives && peer_node(n) && !peer_step_ok(step_kind_))
    f.fail("node '" + n + "' has kind: peer (the ideal IBTA peer, no ERNIC, no driver): " + step_kind_ +
           " cannot use it (scenarios/README.md, kind: peer)");
  if (must_be_initialised && program_node(n))
    f.fail("node '" + n + "' has host: program: its program drives it, the built-in driver's steps cannot");
  if (must_be_initialised && !initialised_.count(n))
    f.fail("node '" + n + "' is used before an init step for it");
  return n;
}

Parser::MrRef Parser::ref_mr(const Field& f, const std::string& node) {
  const std::string m = read_name(f, "MR");
  auto& table = mrs_[node];
  auto it = table.find(m);
  if (it == table.end()) {
    if (auto d = deregistered_[node].find(m); d != deregistered_[node].end())
      f.fail(fmt::format("MR '{}' of node {} was deregistered at line {}", m, node, d->second));
    std::vector<std::string> names;
    for (const auto& e : table) names.push_back(e.first);
    if (names.empty()) f.fail("unknown MR '" + m + "': node " + node + " has no MR registered yet");
    f.fail("unknown MR '" + m + "' on node " + node + suggest(m, names, "its MRs are"));
  }
  return MrRef{m, it->second.length};
}

const Parser::ConnSym& Parser::ref_conn(const Field& f) {
  const std::string c = read_name(f, "connection");
  auto it = conns_.find(c);
  if (it == conns_.end()) {
    if (auto d = disconnected_.find(c); d != disconnected_.end())
      f.fail(fmt::format("connection '{}' was disconnected at line {}", c, d->second));
    std::vector<std::string> names;
    for (const auto& e : conns_) names.push_back(e.first);
    if (names.empty()) f.fail("unknown connection '" + c + "': no connect step before this one");
    f.fail("unknown connection '" + c + "'" + suggest(c, names, "connections are"));
  }
  return it->second;
}

std::string Parser::ref_conn_end(const Field& f, const std::string& conn_name, const ConnSym& c) {
  const std::string n = ref_node(f);
  if (n != c.client && n != c.server)
    f.fail(fmt::format("node {} is not an end of connection {} ({} <-> {})", n, conn_name, c.client,
                       c.server));
  return n;
}

uint64_t Parser::resolve_range(MapReader& r, const Field& offset_f, uint64_t offset, uint64_t mr_len,
                               const std::string& mr_desc) {
  if (offset >= mr_len)
    offset_f.fail(fmt::format("offset {} is outside {} ({} bytes)", offset, mr_desc, mr_len));
  auto lf = r.take("length");
  if (!lf) return mr_len - offset;
  const uint64_t len = read_uint(*lf, 1, kMaxU64);
  if (len > mr_len - offset)
    lf->fail(fmt::format("offset {} + length {} exceeds {} ({} bytes)", offset, len, mr_desc, mr_len));
  return len;
}

}  // namespace ernic::scenario_parse
