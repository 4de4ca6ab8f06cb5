// model/scenario: the control steps (scenarios/README.md 5.7): repeat,
// parallel (branches and their barriers), barrier.
#include <algorithm>

#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

void Parser::step_repeat(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"count", "steps"});
  auto s = std::make_shared<RepeatStep>();
  s->loc = loc;
  const Field cf = r.req("count");
  s->count = uint32_t(read_uint(cf, 1, kMaxU32));
  const Field sf = r.req("steps");
  r.finish();
  Scope inner = scope_;
  inner.repeat_line = loc.line;
  inner.repeat_count = s->count;
  inner.runs = scope_.runs > kMaxU64 / s->count ? kMaxU64 : scope_.runs * s->count;
  inner.repeat_count_mark = cf.mark;
  inner.repeat_count_path = cf.path;
  inner.barriers = nullptr;
  parse_steps(sf, s->steps, inner);
  emit(std::move(s));
}

void Parser::step_parallel(const Field& f, const SourceLoc& loc) {
  auto s = std::make_shared<ParallelStep>();
  s->loc = loc;
  if (!f.node.IsSequence())
    f.fail("expected a list of branches like { name: a, steps: [...] }, got " + describe(f.node));
  const std::vector<Field> items = read_list(f);
  if (items.size() < 2) f.fail(fmt::format("a parallel step needs at least two branches, got {}", items.size()));
  std::vector<std::vector<Field>> barriers(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    MapReader r(items[i], {"name", "steps"});
    ParallelStep::Branch b;
    b.loc = items[i].loc();
    const Field nf = r.req("name");
    b.name = read_name(nf, "branch");
    for (const auto& other : s->branches)
      if (other.name == b.name)
        nf.fail(fmt::format("branch '{}' is already named in this parallel (at line {})", b.name, other.loc.line));
    const Field sf = r.req("steps");
    r.finish();
    Scope inner = scope_;
    inner.in_branch = true;
    inner.barriers = &barriers[i];
    parse_steps(sf, b.steps, inner);
    s->branches.push_back(std::move(b));
  }
  // Every branch passes the same barriers in the same order as the first.
  const std::vector<Field>& ref = barriers[0];
  const std::string& a = s->branches[0].name;
  const char* rule = "every branch of a parallel must pass the same barriers in the same order";
  for (size_t i = 1; i < items.size(); ++i) {
    const std::vector<Field>& mine = barriers[i];
    const std::string& b = s->branches[i].name;
    for (size_t k = 0; k < std::max(ref.size(), mine.size()); ++k) {
      if (k >= mine.size())
        items[i].fail(fmt::format("branch {} passes {} barrier{}, but branch {} then passes barrier '{}' (line {}): {}",
                                  b, mine.size(), mine.size() == 1 ? "" : "s", a, ref[k].node.Scalar(),
                                  ref[k].loc().line, rule));
      if (k >= ref.size())
        mine[k].fail(fmt::format("barrier '{}' has no counterpart in branch {}, which passes {} barrier{}: {}",
                                 mine[k].node.Scalar(), a, ref.size(), ref.size() == 1 ? "" : "s", rule));
      if (mine[k].node.Scalar() != ref[k].node.Scalar())
        mine[k].fail(fmt::format("barrier '{}' where branch {} passes barrier '{}' (line {}): {}",
                                 mine[k].node.Scalar(), a, ref[k].node.Scalar(), ref[k].loc().line, rule));
    }
  }
  emit(std::move(s));
}

void Parser::step_barrier(const Field& f, const SourceLoc& loc) {
  if (!scope_.barriers) {
    if (scope_.in_branch)
      f.fail_key("barrier is not allowed inside repeat: put it directly in the steps of the parallel branch");
    f.fail_key("barrier is allowed only in the steps of a parallel branch");
  }
  BarrierStep s;
  s.loc = loc;
  s.name = read_name(f, "barrier");
  // A branch passes each barrier once (the runner counts arrivals by name).
  for (const Field& prev : *scope_.barriers)
    if (prev.node.Scalar() == s.name)
      f.fail(fmt::format("barrier '{}' is already passed in this branch (at line {}): use a new name",
                         s.name, prev.loc().line));
  scope_.barriers->push_back(f);
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse

namespace ernic::scenario_parse {

// program: { node: A, run: [path, args...], env: ["K=V", ...], timeout_s: 60 }
//       or { node: A, serve: unix:PATH | tcp:HOST:PORT, timeout_s: 600 }
void Parser::step_program(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "run", "env", "serve", "timeout_s", "same_cpu"});
  ProgramStep s;
  s.loc = loc;
  const Field nf = r.req("node");
  s.node = ref_node(nf, false);
  if (!program_node(s.node))
    nf.fail("node '" + s.node + "' has the built-in driver as its host; a program needs `host: program` on the node");
  const auto run = r.take("run");
  const auto serve = r.take("serve");
  if (run && serve) later(*run, *serve).fail_key("give either run (start the program) or serve (wait for one)");
  if (!run && !serve) r.self().fail("needs run: [program, args...] or serve: ADDRESS");
  if (run) {
    for (const Field& a : read_list(*run)) s.argv.push_back(read_string(a));
    if (s.argv.empty() || s.argv[0].empty()) run->fail("the program's path is missing");
  }
  if (serve) {
    s.serve = read_string(*serve);
    if (s.serve.empty()) serve->fail("an address: unix:PATH or tcp:HOST:PORT");
  }
  if (const auto env = r.take("env"))
    for (const Field& e : read_list(*env)) {
      const std::string kv = read_string(e);
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) e.fail("an environment entry is NAME=VALUE");
      s.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  s.timeout_s = r.u64("timeout_s", s.timeout_s, 1, 86400);
  if (const auto sc = r.take("same_cpu")) s.same_cpu = read_bool(*sc);
  r.finish();
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
