#include "model/trace/trigger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "model/trace/signal_enums.h"

namespace ernic::trigger {

const std::vector<StreamInfo>& streams() {
  static const std::vector<StreamInfo> s = {
      {"tx", "datapath.tx_seam.s_desc_valid", "datapath.tx_seam.s_desc_ready", "core",
       "ERNIC into the TX datapath: roce_tx's descriptor handshake (one a frame; ready low while roce_tx holds "
       "one, and while its buffer and the FIFO to the CMAC are full)"},
      {"rx", "ernic.rx_buffer.m_axis_tvalid", "ernic.rx_buffer.m_axis_tready", "core",
       "the RoCE RX buffer into the RX packet handler (one transfer a frame; tready low while the handler is busy)"},
      {"tx_mac", "cmac.tx_axis_tvalid", "cmac.tx_axis_tready", "cmac", "the CMAC's TX beats onto the line"},
      {"rx_mac", "cmac.rx_axis_tvalid", "", "cmac", "the CMAC's RX beats (no tready: never stalls)"},
      {"icrc", "datapath.rtl.roce_datapath.u_tx.u_icrc.s_valid", "datapath.rtl.roce_datapath.u_tx.u_icrc.s_ready",
       "core", "roce_tx's frames into its ICRC block (RTL datapath only)"},
  };
  return s;
}

// ---------------------------------------------------------------- lexer
namespace {

enum class Tok { End, Ident, Number, LParen, RParen, Comma, Dot, LBrack, RBrack, Arrow, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not };

struct Token {
  Tok k = Tok::End;
  std::string text;
  uint64_t num = 0;
  size_t col = 0;  // 1-based
};

const char* tok_name(Tok k) {
  switch (k) {
    case Tok::End: return "the end of the expression";
    case Tok::Ident: return "a name";
    case Tok::Number: return "a number";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::Comma: return "','";
    case Tok::Dot: return "'.'";
    case Tok::LBrack: return "'['";
    case Tok::RBrack: return "']'";
    case Tok::Arrow: return "'->'";
    case Tok::Eq: return "'=='";
    case Tok::Ne: return "'!='";
    case Tok::Lt: return "'<'";
    case Tok::Le: return "'<='";
    case Tok::Gt: return "'>'";
    case Tok::Ge: return "'>='";
    case Tok::And: return "'&&'";
    case Tok::Or: return "'||'";
    case Tok::Not: return "'!'";
  }
  return "?";
}

std::vector<Token> lex(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  auto err = [&](size_t at, const std::string& what) { throw TriggerError(at + 1, what); };
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.col = i + 1;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.k = Tok::Ident;
      t.text = s.substr(i, j - i);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      int base = 10;
      if (c == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) base = 16, j += 2;
      else if (c == '0' && i + 1 < s.size() && (s[i + 1] == 'b' || s[i + 1] == 'B')) base = 2, j += 2;
      const size_t digits = j;
      uint64_t v = 0;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) {
        const char d = static_cast<char>(std::tolower(static_cast<unsigned char>(s[j])));
        int dv = d >= '0' && d <= '9' ? d - '0' : d >= 'a' && d <= 'f' ? d - 'a' + 10 : 99;
        if (d == '_') {
          ++j;
          continue;
        }
        if (dv >= base) err(j, fmt::format("'{}' is not a digit of a base-{} number", s[j], base));
        if (v > (~uint64_t{0} - uint64_t(dv)) / uint64_t(base)) err(i, "number does not fit in 64 bits");
        v = v * uint64_t(base) + uint64_t(dv);
        ++j;
      }
      if (j == digits) err(i, "number without digits");
      t.k = Tok::Number;
      t.num = v;
      t.text = s.substr(i, j - i);
      i = j;
    } else {
      auto two = [&](char a, char b) { return c == a && i + 1 < s.size() && s[i + 1] == b; };
      if (two('-', '>')) t.k = Tok::Arrow, i += 2;
      else if (two('=', '=')) t.k = Tok::Eq, i += 2;
      else if (two('!', '=')) t.k = Tok::Ne, i += 2;
      else if (two('<', '=')) t.k = Tok::Le, i += 2;
      else if (two('>', '=')) t.k = Tok::Ge, i += 2;
      else if (two('&', '&')) t.k = Tok::And, i += 2;
      else if (two('|', '|')) t.k = Tok::Or, i += 2;
      else if (c == '(') t.k = Tok::LParen, ++i;
      else if (c == ')') t.k = Tok::RParen, ++i;
      else if (c == ',') t.k = Tok::Comma, ++i;
      else if (c == '.') t.k = Tok::Dot, ++i;
      else if (c == '[') t.k = Tok::LBrack, ++i;
      else if (c == ']') t.k = Tok::RBrack, ++i;
      else if (c == '<') t.k = Tok::Lt, ++i;
      else if (c == '>') t.k = Tok::Gt, ++i;
      else if (c == '!') t.k = Tok::Not, ++i;
      else if (c == '=') err(i, "'=' is not an operator: compare with '=='");
      else if (c == '&') err(i, "'&' is not an operator: use '&&'");
      else if (c == '|') err(i, "'|' is not an operator: use '||'");
      else if (c == '-') err(i, "'-' is only part of a direction 'A->B'");
      else err(i, fmt::format("unexpected character '{}'", c));
      t.text = s.substr(t.col - 1, i - (t.col - 1));
    }
    out.push_back(std::move(t));
  }
  Token e;
  e.k = Tok::End;
  e.col = s.size() + 1;
  out.push_back(e);
  return out;
}

}  // namespace

// ---------------------------------------------------------------- AST
struct Term {
  enum Kind { Number, Symbol, Signal, Qp, Axis, Frame, PsnGap, RegWrite } kind = Number;
  size_t col = 0, field_col = 0;
  uint64_t num = 0;
  std::string sym;
  std::string node, field, from, to, reg, stream;
  std::vector<std::string> path;
  uint64_t qpn = 0;
  std::optional<uint64_t> index;
  // bound
  std::string full;       // Signal / Qp / Axis valid|ready
  int slot = -1;          // Signal / Qp / Axis valid|ready
  int tracker = -1;       // Axis stall
  int dir = -1;           // Frame / PsnGap
  int regw = -1;          // RegWrite
};

struct Expr {
  enum Kind { Or, And, Not, Cmp, Leaf } kind = Leaf;
  Tok op = Tok::Eq;
  std::unique_ptr<Expr> a, b;
  std::unique_ptr<Term> ta, tb;
  size_t col = 0;
};

// ---------------------------------------------------------------- parser
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : toks_(lex(s)) {}
  std::unique_ptr<Expr> parse() {
    auto e = parse_or();
    if (peek().k != Tok::End)
      fail(peek(), fmt::format("expected '&&', '||' or the end of the expression, found {}", describe(peek())));
    return e;
  }

 private:
  const Token& peek() const { return toks_[pos_]; }
  const Token& take() { return toks_[pos_++]; }
  static std::string describe(const Token& t) {
    if (t.k == Tok::Ident) return "'" + t.text + "'";
    if (t.k == Tok::Number) return "number " + t.text;
    return tok_name(t.k);
  }
  [[noreturn]] static void fail(const Token& t, const std::string& what) { throw TriggerError(t.col, what); }
  const Token& expect(Tok k, const char* context) {
    if (peek().k != k) fail(peek(), fmt::format("expected {} {}, found {}", tok_name(k), context, describe(peek())));
    return take();
  }
  std::string ident(const char* what) {
    if (peek().k != Tok::Ident) fail(peek(), fmt::format("expected {}, found {}", what, describe(peek())));
    return take().text;
  }

  std::unique_ptr<Expr> parse_or() {
    auto l = parse_and();
    while (peek().k == Tok::Or) {
      const size_t col = take().col;
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Or;
      e->col = col;
      e->a = std::move(l);
      e->b = parse_and();
      l = std::move(e);
    }
    return l;
  }
  std::unique_ptr<Expr> parse_and() {
    auto l = parse_unary();
    while (peek().k == Tok::And) {
      const size_t col = take().col;
      auto e = std::make_unique<Expr>();
      e->kind = Expr::And;
      e->col = col;
      e->a = std::move(l);
      e->b = parse_unary();
      l = std::move(e);
    }
    return l;
  }
  // '(' and '!' nest by recursion: a bound keeps a hostile expression
  // (60,000 '!') from overflowing the stack; an error names its column.
  static constexpr int kMaxNesting = 100;
  void enter(const Token& t) {
    if (++depth_ > kMaxNesting)
      fail(t, fmt::format("'(' and '!' nest deeper than {} levels", kMaxNesting));
  }
  std::unique_ptr<Expr> parse_unary() {
    if (peek().k == Tok::Not) {
      enter(peek());
      const size_t col = take().col;
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Not;
      e->col = col;
      e->a = parse_unary();
      --depth_;
      return e;
    }
    return parse_cmp();
  }
  static bool is_cmp(Tok k) {
    return k == Tok::Eq || k == Tok::Ne || k == Tok::Lt || k == Tok::Le || k == Tok::Gt || k == Tok::Ge;
  }
  std::unique_ptr<Expr> parse_cmp() {
    if (peek().k == Tok::LParen) {
      enter(peek());
      take();
      auto e = parse_or();
      expect(Tok::RParen, "to close the parenthesis");
      --depth_;
      if (is_cmp(peek().k)) fail(peek(), "a parenthesised condition cannot be compared; compare signals or numbers");
      return e;
    }
    auto e = std::make_unique<Expr>();
    e->col = peek().col;
    e->ta = parse_term();
    if (is_cmp(peek().k)) {
      e->kind = Expr::Cmp;
      e->op = take().k;
      e->tb = parse_term();
      if (is_cmp(peek().k)) fail(peek(), "comparisons do not chain: combine them with '&&'");
    } else {
      e->kind = Expr::Leaf;
    }
    return e;
  }
  void dir(Term& t) {
    t.from = ident("a node name before '->'");
    expect(Tok::Arrow, "between the two nodes of a direction");
    t.to = ident("a node name after '->'");
  }
  std::unique_ptr<Term> parse_term() {
    auto t = std::make_unique<Term>();
    const Token& first = peek();
    t->col = first.col;
    if (first.k == Tok::Number) {
      t->kind = Term::Number;
      t->num = take().num;
      return t;
    }
    if (first.k != Tok::Ident)
      fail(first, fmt::format("expected a signal, a number or '(', found {}", describe(first)));
    const std::string name = take().text;
    const bool call = peek().k == Tok::LParen;
    if (name == "qp" && call) {
      take();
      t->kind = Term::Qp;
      t->node = ident("a node name");
      expect(Tok::Comma, "after the node in qp(NODE, QPN)");
      const Token& n = expect(Tok::Number, "(the QP number) in qp(NODE, QPN)");
      t->qpn = n.num;
      expect(Tok::RParen, "after qp(NODE, QPN");
      expect(Tok::Dot, "after qp(NODE, QPN): qp(A,2).FIELD");
      t->field_col = peek().col;
      t->field = ident("a QP field (fatal, SQPSN, req_state, ...)");
    } else if (name == "axis" && call) {
      take();
      t->kind = Term::Axis;
      t->node = ident("a node name");
      expect(Tok::Dot, "in axis(NODE.STREAM)");
      t->field_col = peek().col;
      t->stream = ident("a stream name (tx, rx, tx_mac, rx_mac, icrc)");
      expect(Tok::RParen, "after axis(NODE.STREAM");
      expect(Tok::Dot, "after axis(NODE.STREAM): axis(A.tx).stall");
      t->field_col = peek().col;
      t->field = ident("a stream field (stall, valid, ready)");
    } else if ((name == "op" || name == "syn" || name == "psn" || name == "qpn" || name == "frame") ) {
      t->kind = Term::Frame;
      t->field = name;
      if (call) {
        take();
        dir(*t);
        expect(Tok::RParen, "after the direction");
      } else if (name == "op" || name == "frame") {
        fail(peek(), fmt::format("expected '(' after '{}': {}(A->B)", name, name));
      }
    } else if (name == "psn_gap") {
      if (!call) fail(peek(), "expected '(' after 'psn_gap': psn_gap(A->B)");
      take();
      t->kind = Term::PsnGap;
      dir(*t);
      expect(Tok::RParen, "after the direction");
    } else if (name == "reg_write") {
      if (!call) fail(peek(), "expected '(' after 'reg_write': reg_write(NODE, REG) or reg_write(NODE, REGi[QPN])");
      take();
      t->kind = Term::RegWrite;
      t->node = ident("a node name");
      expect(Tok::Comma, "after the node in reg_write(NODE, REG)");
      t->field_col = peek().col;
      t->reg = ident("a PG332 register name");
      if (peek().k == Tok::LBrack) {
        take();
        t->index = expect(Tok::Number, "(the QP or MR index) in REG[N]").num;
        expect(Tok::RBrack, "after the index");
      }
      expect(Tok::RParen, "after reg_write(NODE, REG");
    } else if (name == "rtl" || name == "sig") {
      if (!call) fail(peek(), fmt::format("expected '(' after '{}': {}(NODE.path.to.signal)", name, name));
      take();
      t->kind = Term::Signal;
      t->field_col = peek().col;
      t->path.push_back(ident("a node name or 'top'"));
      while (peek().k == Tok::Dot) {
        take();
        std::string c = ident("a signal path component");
        if (peek().k == Tok::LBrack) {  // mem[3]
          take();
          c += fmt::format("[{}]", expect(Tok::Number, "(an index)").num);
          expect(Tok::RBrack, "after the index");
        }
        t->path.push_back(c);
      }
      if (t->path.size() < 2) fail(peek(), fmt::format("expected '.' and a signal path: {}(NODE.block.signal)", name));
      expect(Tok::RParen, fmt::format("after {}(PATH", name).c_str());
    } else if (call) {
      fail(first, fmt::format("unknown function '{}' (qp, axis, op, syn, psn, qpn, frame, psn_gap, reg_write, rtl)", name));
    } else {
      t->kind = Term::Symbol;
      t->sym = name;
    }
    return t;
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;  // '(' and '!' open around the current point
};

}  // namespace

Trigger::Trigger() = default;
Trigger::~Trigger() = default;
Trigger::Trigger(Trigger&&) noexcept = default;
Trigger& Trigger::operator=(Trigger&&) noexcept = default;

Trigger Trigger::parse(const std::string& text) {
  Trigger t;
  t.text_ = text;
  bool blank = true;
  for (char c : text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) throw TriggerError(1, "empty trigger expression");
  t.expr_ = Parser(text).parse();
  return t;
}

// ---------------------------------------------------------------- binding and evaluation
namespace {

struct Tracker {  // one stream's stall count
  int valid = -1, ready = -1;
  uint64_t period = 1;
  std::set<uint64_t> counts;  // counts at which a comparison may change
};
struct DirSlots {
  std::string name;  // "A->B"
  int tx_frames = -1, tx_opcode = -1, tx_psn = -1, tx_dest_qp = -1, tx_syndrome = -1, tx_aeth = -1;
  int rx_frames = -1, rx_psn_gap = -1;
};
struct RegWatch {
  int bvalid = -1, awaddr = -1, wdata = -1;
  uint32_t addr = 0;
};

}  // namespace

struct Bound {
  std::vector<std::string> slots;
  std::unordered_map<std::string, int> slot_of;
  std::vector<Tracker> trackers;
  std::map<std::string, int> tracker_of;
  std::vector<DirSlots> dirs;
  std::vector<RegWatch> regws;
};

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
      case Term::Signal: {
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
        return;
      }
      case Term::Qp: {
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
        return;
      }
      case Term::Axis: {
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
        return;
      }
      case Term::Frame:
      case Term::PsnGap:
        t.dir = dir(t.from, t.to, t.col);
        return;
      case Term::RegWrite: {
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
        return;
      }
    }
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

namespace {

class Eval : public trace::MergedValueVisitor {
 public:
  Eval(const Expr& e, const Bound& b, Mode mode) : e_(e), b_(b), mode_(mode) {
    cur_.assign(b.slots.size(), std::nullopt);
    prev_.assign(b.slots.size(), std::nullopt);
    changed_.assign(b.slots.size(), 0);
    since_.assign(b.trackers.size(), std::nullopt);
  }
  std::vector<uint64_t> hits;

  bool wants_clock_edges() const override {
    for (const auto& s : b_.slots)
      if (s.compare(0, 11, "top.clocks.") == 0) return true;
    return false;
  }
  void begin(const std::vector<trace::MergedVar>& vars) override {
    slots_of_.assign(vars.size(), {});
    std::vector<char> found(b_.slots.size(), 0);
    for (size_t i = 0; i < vars.size(); ++i)
      for (const auto& n : vars[i].names) {
        auto it = b_.slot_of.find(n.full);
        if (it != b_.slot_of.end()) {
          slots_of_[i].push_back(it->second);
          found[size_t(it->second)] = 1;
        }
      }
    for (size_t s = 0; s < found.size(); ++s)
      if (!found[s]) throw std::runtime_error("trigger: signal " + b_.slots[s] + " is not in the waveform");
  }
  void initial(size_t var, std::optional<uint64_t> v) override {
    for (int s : slots_of_[var]) cur_[size_t(s)] = v;
  }
  void time(uint64_t t) override {
    finish_instant();
    crossings_before(t);
    now_ = t;
    prev_ = cur_;
    std::fill(changed_.begin(), changed_.end(), 0);
  }
  void change(size_t var, std::optional<uint64_t> v) override {
    for (int s : slots_of_[var]) {
      cur_[size_t(s)] = v;
      changed_[size_t(s)] = 1;
    }
  }
  void end(uint64_t end_time_ps) override {
    finish_instant();
    if (end_time_ps >= now_) crossings_before(end_time_ps + 1);
  }

 private:
  bool done() const { return mode_ == Mode::first && !hits.empty(); }
  std::optional<uint64_t> val(int slot) const { return cur_[size_t(slot)]; }
  bool is1(int slot) const { return val(slot) == std::optional<uint64_t>(1); }

  void finish_instant() {
    // Trackers follow the values at now_.
    for (size_t i = 0; i < b_.trackers.size(); ++i) {
      const Tracker& tr = b_.trackers[i];
      const bool c = is1(tr.valid) && tr.ready >= 0 && val(tr.ready) == std::optional<uint64_t>(0);
      if (!c) since_[i].reset();
      else if (!since_[i]) since_[i] = (now_ + tr.period - 1) / tr.period * tr.period;  // first edge at or after now
    }
    evaluate_at(now_, true);
  }
  // Evaluations where a stall count reaches an interesting count, before t.
  void crossings_before(uint64_t t) {
    while (!done()) {
      uint64_t best = ~uint64_t{0};
      for (size_t i = 0; i < b_.trackers.size(); ++i) {
        if (!since_[i]) continue;
        for (uint64_t k : b_.trackers[i].counts) {
          const uint64_t x = *since_[i] + (k - 1) * b_.trackers[i].period;
          if (x > last_eval_) {
            best = std::min(best, x);
            break;  // counts are sorted: the first past last_eval_ is the next
          }
        }
      }
      if (best >= t) return;
      evaluate_at(best, false);
    }
  }
  void evaluate_at(uint64_t t, bool events) {
    last_eval_ = t;
    if (done()) return;
    at_ = t;
    events_ = events;
    const bool level_at = eval(e_);
    events_ = false;
    const bool level_after = level_at ? eval(e_) : false;
    if (level_at && !level_) hits.push_back(t);
    level_ = level_after;
  }
  uint64_t stall_count(int tracker) const {
    const auto& s = since_[size_t(tracker)];
    if (!s || at_ < *s) return 0;
    return (at_ - *s) / b_.trackers[size_t(tracker)].period + 1;
  }
  bool frame_event(int dir) const { return events_ && changed_[size_t(b_.dirs[size_t(dir)].tx_frames)]; }
  std::optional<uint64_t> value(const Term& t) const {
    switch (t.kind) {
      case Term::Number: return t.num;
      case Term::Symbol: return std::nullopt;
      case Term::Signal:
      case Term::Qp: return val(t.slot);
      case Term::Axis:
        if (t.tracker >= 0) return stall_count(t.tracker);
        return val(t.slot);
      case Term::Frame: {
        if (!frame_event(t.dir)) return std::nullopt;
        const DirSlots& d = b_.dirs[size_t(t.dir)];
        if (t.field == "op") return val(d.tx_opcode);
        if (t.field == "psn") return val(d.tx_psn);
        if (t.field == "qpn") return val(d.tx_dest_qp);
        if (t.field == "frame") return 1;
        if (!is1(d.tx_aeth)) return std::nullopt;  // syn
        return val(d.tx_syndrome);
      }
      case Term::PsnGap: {
        const DirSlots& d = b_.dirs[size_t(t.dir)];
        if (events_ && changed_[size_t(d.rx_frames)] && is1(d.rx_psn_gap)) return 1;
        return std::nullopt;
      }
      case Term::RegWrite: {
        const RegWatch& w = b_.regws[size_t(t.regw)];
        if (events_ && changed_[size_t(w.bvalid)] && prev_[size_t(w.bvalid)] == std::optional<uint64_t>(0) &&
            is1(w.bvalid) && val(w.awaddr) == std::optional<uint64_t>(w.addr))
          return val(w.wdata);
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
  bool truth(const Term& t) const {
    const auto v = value(t);
    if (!v) return false;
    if (t.kind == Term::Frame || t.kind == Term::PsnGap || t.kind == Term::RegWrite) return true;  // events
    return *v != 0;
  }
  bool eval(const Expr& e) const {
    switch (e.kind) {
      case Expr::Or: return eval(*e.a) || eval(*e.b);
      case Expr::And: return eval(*e.a) && eval(*e.b);
      case Expr::Not: return !eval(*e.a);
      case Expr::Leaf: return truth(*e.ta);
      case Expr::Cmp: {
        const auto a = value(*e.ta), b = value(*e.tb);
        if (!a || !b) return false;
        switch (e.op) {
          case Tok::Eq: return *a == *b;
          case Tok::Ne: return *a != *b;
          case Tok::Lt: return *a < *b;
          case Tok::Le: return *a <= *b;
          case Tok::Gt: return *a > *b;
          case Tok::Ge: return *a >= *b;
          default: return false;
        }
      }
    }
    return false;
  }

  const Expr& e_;
  const Bound& b_;
  Mode mode_;
  std::vector<std::vector<int>> slots_of_;
  std::vector<std::optional<uint64_t>> cur_, prev_;
  std::vector<char> changed_;
  std::vector<std::optional<uint64_t>> since_;
  uint64_t now_ = 0, at_ = 0, last_eval_ = 0;
  bool events_ = false;
  bool level_ = false;
};

}  // namespace

std::vector<uint64_t> Trigger::hits(const trace::VcdWriter& w, const std::string& rtl_vcd_path, uint64_t end_time_ps,
                                    Mode mode) const {
  if (!bound_) throw std::logic_error("trigger: bind() before hits()");
  Eval ev(*expr_, *bound_, mode);
  w.scan_merged(rtl_vcd_path, ev, end_time_ps);
  return ev.hits;
}

}  // namespace ernic::trigger
