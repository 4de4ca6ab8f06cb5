// model/trace: trigger expressions, the syntax (trigger.h): the lexer, the
// recursive-descent parser (||, &&, !, comparisons, terms such as qp(A,2).x,
// axis(A.tx).stall, op(A->B), reg_write(A, REG[N]), rtl(A.path)) and
// Trigger::parse.
#include <fmt/format.h>

#include <cctype>

#include "model/trace/trigger.h"
#include "model/trace/trigger_expr.h"

namespace ernic::trigger {

// ---------------------------------------------------------------- lexer
namespace {

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
      uint64_t v = 0;
      size_t ndigits = 0;
      // '_' separates digits (1_000, 0xff_ff): between two digits only, so
      // 0x_, 1_ and 1__0 are refused as 0x is.
      bool prev_digit = false;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) {
        const char d = static_cast<char>(std::tolower(static_cast<unsigned char>(s[j])));
        int dv = d >= '0' && d <= '9' ? d - '0' : d >= 'a' && d <= 'f' ? d - 'a' + 10 : 99;
        if (d == '_') {
          const bool next_digit = j + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[j + 1]));
          if (ndigits == 0) err(i, "number without digits");
          if (!prev_digit || !next_digit) err(j, "'_' in a number goes between two digits");
          prev_digit = false;
          ++j;
          continue;
        }
        if (dv >= base) err(j, fmt::format("'{}' is not a digit of a base-{} number", s[j], base));
        if (v > (~uint64_t{0} - uint64_t(dv)) / uint64_t(base)) err(i, "number does not fit in 64 bits");
        v = v * uint64_t(base) + uint64_t(dv);
        ++ndigits;
        prev_digit = true;
        ++j;
      }
      if (ndigits == 0) err(i, "number without digits");
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
      qp_term(*t);
    } else if (name == "axis" && call) {
      axis_term(*t);
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
      reg_write_term(*t, call);
    } else if (name == "rtl" || name == "sig") {
      signal_term(*t, name, call);
    } else if (call) {
      fail(first, fmt::format("unknown function '{}' (qp, axis, op, syn, psn, qpn, frame, psn_gap, reg_write, rtl)", name));
    } else {
      t->kind = Term::Symbol;
      t->sym = name;
    }
    return t;
  }
  // qp(NODE, QPN).FIELD, after the name.
  void qp_term(Term& t) {
    take();
    t.kind = Term::Qp;
    t.node = ident("a node name");
    expect(Tok::Comma, "after the node in qp(NODE, QPN)");
    const Token& n = expect(Tok::Number, "(the QP number) in qp(NODE, QPN)");
    t.qpn = n.num;
    expect(Tok::RParen, "after qp(NODE, QPN");
    expect(Tok::Dot, "after qp(NODE, QPN): qp(A,2).FIELD");
    t.field_col = peek().col;
    t.field = ident("a QP field (fatal, SQPSN, req_state, ...)");
  }
  // axis(NODE.STREAM).FIELD, after the name.
  void axis_term(Term& t) {
    take();
    t.kind = Term::Axis;
    t.node = ident("a node name");
    expect(Tok::Dot, "in axis(NODE.STREAM)");
    t.field_col = peek().col;
    t.stream = ident("a stream name (tx, rx, tx_mac, rx_mac, icrc)");
    expect(Tok::RParen, "after axis(NODE.STREAM");
    expect(Tok::Dot, "after axis(NODE.STREAM): axis(A.tx).stall");
    t.field_col = peek().col;
    t.field = ident("a stream field (stall, valid, ready)");
  }
  // reg_write(NODE, REG) or reg_write(NODE, REG[N]), after the name.
  void reg_write_term(Term& t, bool call) {
    if (!call) fail(peek(), "expected '(' after 'reg_write': reg_write(NODE, REG) or reg_write(NODE, REGi[QPN])");
    take();
    t.kind = Term::RegWrite;
    t.node = ident("a node name");
    expect(Tok::Comma, "after the node in reg_write(NODE, REG)");
    t.field_col = peek().col;
    t.reg = ident("a PG332 register name");
    if (peek().k == Tok::LBrack) {
      take();
      t.index = expect(Tok::Number, "(the QP or MR index) in REG[N]").num;
      expect(Tok::RBrack, "after the index");
    }
    expect(Tok::RParen, "after reg_write(NODE, REG");
  }
  // rtl(NODE.path.to.signal) or sig(...), after the name.
  void signal_term(Term& t, const std::string& name, bool call) {
    if (!call) fail(peek(), fmt::format("expected '(' after '{}': {}(NODE.path.to.signal)", name, name));
    take();
    t.kind = Term::Signal;
    t.field_col = peek().col;
    t.path.push_back(ident("a node name or 'top'"));
    while (peek().k == Tok::Dot) {
      take();
      std::string c = ident("a signal path component");
      if (peek().k == Tok::LBrack) {  // mem[3]
        take();
        c += fmt::format("[{}]", expect(Tok::Number, "(an index)").num);
        expect(Tok::RBrack, "after the index");
      }
      t.path.push_back(c);
    }
    if (t.path.size() < 2) fail(peek(), fmt::format("expected '.' and a signal path: {}(NODE.block.signal)", name));
    expect(Tok::RParen, fmt::format("after {}(PATH", name).c_str());
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;  // '(' and '!' open around the current point
};

}  // namespace

Trigger Trigger::parse(const std::string& text) {
  Trigger t;
  t.text_ = text;
  bool blank = true;
  for (char c : text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) throw TriggerError(1, "empty trigger expression");
  t.expr_ = Parser(text).parse();
  return t;
}

}  // namespace ernic::trigger
