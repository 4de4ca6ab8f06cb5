// model/trace: trigger expressions, binding (trigger.h): the names of an
// expression resolved against a system (nodes, QPs, streams, registers,
// signal paths, value names) into signal slots, stall trackers, directions
// and register-write watches (Bound); Trigger::bind and Trigger::signals.
#include <fmt/format.h>

#include <algorithm>

#include "model/trace/signal_enums.h"
#include "model/trace/trigger.h"
#include "model/trace/trigger_expr.h"

namespace ernic::trigger {

namespace {

std::vector<std::string> split(const std::string& s) { return trace::detail::split_dots_simple(s); }

std::string join(const std::vector<std::string>& v, const char* sep, size_t max = 8) {
  std::string o;
  for (size_t i = 0; i < v.size() && i < max; ++i) o += (i ? sep : "") + v[i];
  if (v.size() > max) o += fmt::format("{}... ({} in all)", sep, v.size());
  return o;
}

class Binder {
 public:
  Binder(const BindContext& c, Bound& b) : c_(c), b_(b) {
    for (const auto& s : c_.signals) names_.insert(s);
  }

  void bind(Expr& e) {
    switch (e.kind) {
      case Expr::Or:
      case Expr::And:
        bind(*e.a);
        bind(*e.b);
        return;
      case Expr::Not:
        bind(*e.a);
        return;
      case Expr::Leaf:
        if (e.ta->kind == Term::Symbol)
          throw TriggerError(e.ta->col, fmt::format("'{}' alone is not a condition: compare a signal with it "
                                                    "(rtl(A.x.state) == {})", e.ta->sym, e.ta->sym));
        // A number alone is a condition as a signal alone is: true when
        // non-zero (`1` as `1 != 0`: a hit at time 0, as `1 == 1`; `0` never).
        if (e.ta->kind == Term::Number) return;
        term(*e.ta);
        if (e.ta->kind == Term::Axis && e.ta->field == "stall") b_.trackers[size_t(e.ta->tracker)].counts.insert(1);
        return;
      case Expr::Cmp: {
        Term& a = *e.ta;
        Term& b = *e.tb;
        if (a.kind == Term::Symbol && b.kind == Term::Symbol)
          throw TriggerError(a.col, "compare a signal with a name, not two names");
        if (a.kind != Term::Symbol) term(a);
        if (b.kind != Term::Symbol) term(b);
        if (a.kind == Term::Symbol) symbol(a, b);
        if (b.kind == Term::Symbol) symbol(b, a);
        for (auto [x, y] : {std::pair<Term*, Term*>{&a, &b}, {&b, &a}}) {
          if (x->kind != Term::Axis || x->field != "stall") continue;
          if (y->kind != Term::Number)
            throw TriggerError(y->col, "a stall count compares with a number (axis(A.tx).stall >= 16)");
          auto& counts = b_.trackers[size_t(x->tracker)].counts;
          counts.insert(std::max<uint64_t>(y->num, 1));
          if (y->num < ~uint64_t{0}) counts.insert(y->num + 1);
        }
        return;
      }
    }
  }

  // Bare syn/psn/qpn take the direction of the one op()/frame()/syn(A->B) in the expression.
  void inherit(Expr& e) {
    std::set<std::pair<std::string, std::string>> dirs;
    std::vector<Term*> bare;
    collect(e, dirs, bare);
    for (Term* t : bare) {
      if (dirs.size() != 1)
        throw TriggerError(t->col, dirs.empty()
                                       ? fmt::format("'{}' needs a direction: {}(A->B), or op(A->B) in the same expression",
                                                     t->field, t->field)
                                       : fmt::format("'{}': the expression names {} directions; write {}(A->B)",
                                                     t->field, dirs.size(), t->field));
      t->from = dirs.begin()->first;
      t->to = dirs.begin()->second;
    }
  }

 private:
  void collect(Expr& e, std::set<std::pair<std::string, std::string>>& dirs, std::vector<Term*>& bare) {
    if (e.a) collect(*e.a, dirs, bare);
    if (e.b) collect(*e.b, dirs, bare);
    for (Term* t : {e.ta.get(), e.tb.get()}) {
      if (!t || t->kind != Term::Frame) continue;
      if (t->from.empty())
        bare.push_back(t);
      else
        dirs.insert({t->from, t->to});
    }
  }

  void node(const std::string& n, size_t col) {
    if (c_.nodes.count(n)) return;
    std::vector<std::string> known;
    for (const auto& [k, v] : c_.nodes) known.push_back(k);
    throw TriggerError(col, fmt::format("unknown node '{}' (nodes: {})", n, join(known, ", ")));
  }
  int slot(const std::string& full, size_t col) {
    if (!names_.count(full)) throw TriggerError(col, fmt::format("no traced signal '{}'", full));
    auto [it, fresh] = b_.slot_of.emplace(full, int(b_.slots.size()));
    if (fresh) b_.slots.push_back(full);
    return it->second;
  }
  void symbol(Term& sym, Term& other) {
    if (other.kind != Term::Signal && other.kind != Term::Qp)
      throw TriggerError(sym.col, fmt::format("'{}': a name compares only with rtl(...) or qp(...) signals", sym.sym));
    const trace::EnumNames* names = trace::signal_enum(other.full);
    if (!names)
      throw TriggerError(sym.col, fmt::format("'{}': no value names are registered for {}; compare with a number",
                                              sym.sym, other.full));
    for (const auto& [n, v] : *names)
      if (n == sym.sym) {
        sym.kind = Term::Number;
        sym.num = v;
        return;
      }
    std::vector<std::string> known;
    for (const auto& [n, v] : *names) known.push_back(fmt::format("{} {}", n, v));
    throw TriggerError(sym.col, fmt::format("'{}' is not a value of {} (names: {})", sym.sym, other.full, join(known, ", ", 32)));
  }
  int dir(const std::string& from, const std::string& to, size_t col) {
    node(from, col);
    node(to, col);
    if (from == to) throw TriggerError(col, fmt::format("direction {}->{}: the two nodes must differ", from, to));
    const std::string name = from + "->" + to;
    for (size_t i = 0; i < b_.dirs.size(); ++i)
      if (b_.dirs[i].name == name) return int(i);
    DirSlots d;
    d.name = name;
    const std::string p = fmt::format("top.link.{}_to_{}.", from, to);
    d.tx_frames = slot(p + "tx_frames", col);
    d.tx_opcode = slot(p + "tx_opcode", col);
    d.tx_psn = slot(p + "tx_psn", col);
    d.tx_dest_qp = slot(p + "tx_dest_qp", col);
    d.tx_syndrome = slot(p + "tx_syndrome", col);
    d.tx_aeth = slot(p + "tx_aeth", col);
    d.rx_frames = slot(p + "rx_frames", col);
    d.rx_psn_gap = slot(p + "rx_psn_gap", col);
    b_.dirs.push_back(d);
    return int(b_.dirs.size() - 1);
  }
  void term(Term& t) {
    switch (t.kind) {
      case Term::Number:
      case Term::Symbol:
        return;
      case Term::Signal:
        term_signal(t);
        return;
      case Term::Qp:
        term_qp(t);
        return;
      case Term::Axis:
        term_axis(t);
        return;
      case Term::Frame:
      case Term::PsnGap:
        t.dir = dir(t.from, t.to, t.col);
        return;
      case Term::RegWrite:
        term_reg_write(t);
        return;
    }
  }
  // rtl(...) / sig(...): the one traced signal the path names.
  void term_signal(Term& t) {
    const auto& p = t.path;
    std::vector<std::string> hits;
    if (p[0] == "top") {
      std::string full = join(p, ".", p.size());
      if (names_.count(full)) hits.push_back(full);
    } else {
      node(p[0], t.field_col);
      const std::string prefix = "top." + p[0] + ".";
      const std::vector<std::string> want(p.begin() + 1, p.end());
      for (const auto& n : c_.signals) {
        if (n.compare(0, prefix.size(), prefix) != 0) continue;
        const auto comps = split(n.substr(prefix.size()));
        if (comps.size() < want.size()) continue;
        if (std::equal(want.begin(), want.end(), comps.end() - long(want.size()))) hits.push_back(n);
      }
    }
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    // A path that names a signal exactly (top.NODE.<path>) wins over
    // longer ones ending the same way (e.g. the block's own output
    // qp_setup_fsm.state over the RTL's internal rtl.qp_setup_fsm.state).
    if (hits.size() > 1 && p[0] != "top") {
      const std::string exact = "top." + join(p, ".", p.size());
      if (std::binary_search(hits.begin(), hits.end(), exact)) hits = {exact};
    }
    if (hits.empty())
      throw TriggerError(t.field_col, fmt::format("no traced signal matches '{}' (a path under top.NODE ending in "
                                                  "these components, or a full name from top)",
                                                  join(p, ".", p.size())));
    if (hits.size() > 1)
      throw TriggerError(t.field_col, fmt::format("'{}' is ambiguous: {}", join(p, ".", p.size()), join(hits, ", ")));
    t.full = hits[0];
    t.slot = slot(t.full, t.field_col);
  }
  // qp(NODE, QPN).FIELD: a field of a QP's traced state.
  void term_qp(Term& t) {
    node(t.node, t.col + 3);
    const auto& ni = c_.nodes.at(t.node);
    if (t.qpn < 1 || t.qpn > ni.num_qp)
      throw TriggerError(t.col, fmt::format("qp({},{}): node {} has QPs 1..{}", t.node, t.qpn, t.node, ni.num_qp));
    const std::string scope = fmt::format("top.{}.ernic.qp{}.", t.node, t.qpn);
    t.full = scope + t.field;
    if (!names_.count(t.full)) {
      std::vector<std::string> fields;
      for (const auto& n : c_.signals)
        if (n.compare(0, scope.size(), scope) == 0) fields.push_back(n.substr(scope.size()));
      throw TriggerError(t.field_col, fmt::format("QP field '{}' does not exist (fields: {})", t.field,
                                                  join(fields, ", ", 32)));
    }
    t.slot = slot(t.full, t.field_col);
  }
  // axis(NODE.STREAM).FIELD: valid / ready, or the stall tracker.
  void term_axis(Term& t) {
    node(t.node, t.col + 5);
    const StreamInfo* s = nullptr;
    std::vector<std::string> known;
    for (const auto& x : streams()) {
      known.push_back(x.name);
      if (t.stream == x.name) s = &x;
    }
    if (!s)
      throw TriggerError(t.col + 6 + t.node.size(),
                         fmt::format("unknown stream '{}' (streams: {})", t.stream, join(known, ", ")));
    const std::string p = "top." + t.node + ".";
    if (t.field == "valid" || (t.field == "ready" && s->ready[0])) {
      t.full = p + (t.field == "valid" ? s->valid : s->ready);
      t.slot = slot(t.full, t.field_col);
      return;
    }
    if (t.field != "stall")
      throw TriggerError(t.field_col, fmt::format("stream field '{}' does not exist (stall, valid{})", t.field,
                                                  s->ready[0] ? ", ready" : ""));
    const std::string key = t.node + "." + s->name;
    auto it = b_.tracker_of.find(key);
    if (it == b_.tracker_of.end()) {
      Tracker tr;
      tr.valid = slot(p + s->valid, t.field_col);
      tr.ready = s->ready[0] ? slot(p + s->ready, t.field_col) : -1;
      tr.period = std::string(s->clock) == "cmac" ? c_.cmac_period_ps : c_.core_period_ps;
      it = b_.tracker_of.emplace(key, int(b_.trackers.size())).first;
      b_.trackers.push_back(tr);
    }
    t.tracker = it->second;
  }
  // reg_write(NODE, REG[N]): the register's address and the AXI4-Lite write signals.
  void term_reg_write(Term& t) {
    node(t.node, t.col + 10);
    const auto& ni = c_.nodes.at(t.node);
    const regs::RegInfo* ri = regs::find_register(t.reg);
    if (!ri) {
      // A QP register written without its trailing 'i'?
      const regs::RegInfo* alt = regs::find_register(t.reg + "i");
      throw TriggerError(t.field_col, alt ? fmt::format("unknown register '{}' (did you mean {}[N]?)", t.reg, alt->name)
                                          : fmt::format("unknown register '{}' (PG332 names, model/regs/REGISTERS.md)", t.reg));
    }
    uint32_t addr = 0;
    const regs::Layout& L = *ni.layout;
    switch (ri->block) {
      case regs::Block::Global:
        if (t.index) throw TriggerError(t.field_col, fmt::format("{} is a global register: no [index]", t.reg));
        addr = L.global(ri->offset);
        break;
      case regs::Block::Qp:
        if (!t.index || *t.index < 1 || *t.index > ni.num_qp)
          throw TriggerError(t.field_col, fmt::format("{} is a per-QP register: write {}[QPN] with QPN 1..{}", t.reg,
                                                      t.reg, ni.num_qp));
        addr = L.qp(uint32_t(*t.index), ri->offset);
        break;
      case regs::Block::Mr:
        if (!t.index || *t.index >= ni.num_mr)
          throw TriggerError(t.field_col, fmt::format("{} is an MR-table register: write {}[N] with N 0..{}", t.reg,
                                                      t.reg, ni.num_mr ? ni.num_mr - 1 : 0));
        addr = L.mr(uint32_t(*t.index), ri->offset);
        break;
    }
    RegWatch w;
    const std::string p = "top." + t.node + ".s_axi_lite.";
    w.bvalid = slot(p + "bvalid", t.col);
    w.awaddr = slot(p + "awaddr", t.col);
    w.wdata = slot(p + "wdata", t.col);
    w.addr = addr;
    b_.regws.push_back(w);
    t.regw = int(b_.regws.size() - 1);
  }

  const BindContext& c_;
  Bound& b_;
  std::set<std::string> names_;
};

}  // namespace

void Trigger::bind(const BindContext& ctx) {
  if (!expr_) throw TriggerError(0, "no expression");
  ctx_ = ctx;
  auto b = std::make_unique<Bound>();
  Binder binder(ctx_, *b);
  binder.inherit(*expr_);
  binder.bind(*expr_);
  bound_ = std::move(b);
}

std::vector<std::string> Trigger::signals() const {
  if (!bound_) return {};
  return bound_->slots;
}

}  // namespace ernic::trigger
