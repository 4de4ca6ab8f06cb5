#include "model/trace/vcd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

namespace ernic::trace {

namespace {

constexpr uint64_t kNoTime = ~uint64_t{0};
constexpr size_t kIoBlock = 1u << 20;

std::runtime_error io_error(const std::string& what, const std::string& path) {
  const int e = errno;
  std::string msg = fmt::format("vcd: {} '{}'", what, path);
  if (e != 0) msg += fmt::format(": {}", std::strerror(e));
  return std::runtime_error(msg);
}

bool is_space(int c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits at '.' without sanitising (names in a VCD file are taken as written).
std::vector<std::string> split_dots(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    if (dot > start) out.emplace_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

std::string join_dots(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += '.';
    out += p;
  }
  return out;
}

// VCD identifier codes: printable ASCII '!'..'~', least significant first.
std::string make_code(size_t n) {
  std::string s;
  do {
    s.push_back(static_cast<char>('!' + n % 94));
    n /= 94;
  } while (n != 0);
  return s;
}

// ---- streaming whitespace tokenizer over a file --------------------------
class Tokenizer {
 public:
  explicit Tokenizer(const std::string& path) : path_(path), buf_(kIoBlock) {
    errno = 0;
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw io_error("cannot open", path);
  }
  ~Tokenizer() {
    if (f_) std::fclose(f_);
  }
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Next whitespace-separated token; false at end of file.
  bool next(std::string& tok) {
    tok.clear();
    int c;
    do {
      c = get();
      if (c < 0) return false;
      if (c == '\n') ++line_;
    } while (is_space(c));
    do {
      tok.push_back(static_cast<char>(c));
      c = get();
    } while (c >= 0 && !is_space(c));
    if (c == '\n') ++line_;
    return true;
  }
  // Next token, which must exist.
  void expect(std::string& tok, const char* what) {
    if (!next(tok)) fail(fmt::format("unexpected end of file, expected {}", what));
  }
  // Skips tokens up to and including "$end".
  void skip_to_end() {
    std::string t;
    do expect(t, "$end");
    while (t != "$end");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("vcd: {}:{}: {}", path_, line_, what));
  }
  const std::string& path() const { return path_; }

 private:
  int get() {
    if (pos_ == len_) {
      if (!f_) return -1;
      len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
      pos_ = 0;
      if (len_ == 0) {
        if (std::ferror(f_)) fail("read error");
        return -1;
      }
    }
    return static_cast<unsigned char>(buf_[pos_++]);
  }

  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t line_ = 1;
};

// ---- VCD header -----------------------------------------------------------
struct HdrScope {
  std::vector<std::string> path;
  std::string type;
};
struct HdrVar {
  std::vector<std::string> scope;
  std::string type;
  unsigned width = 0;
  std::string code;
  std::string ref;    // reference as written, tokens joined by ' ' ("count [7:0]")
  std::string base;   // first token ("count")
  std::string range;  // remaining tokens joined without spaces ("[7:0]")
};
struct Header {
  std::vector<HdrScope> scopes;  // every $scope, in order (path split at '.')
  std::vector<HdrVar> vars;
  uint64_t mult = 1, div = 1;    // time in ps = file time * mult / div
  bool has_timescale = false;
};

void parse_timescale(Tokenizer& tz, Header& h) {
  std::string text, t;
  for (;;) {
    tz.expect(t, "$end");
    if (t == "$end") break;
    text += t;
  }
  size_t i = 0;
  uint64_t num = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') num = num * 10 + uint64_t(text[i++] - '0');
  const std::string unit = text.substr(i);
  if (num != 1 && num != 10 && num != 100) tz.fail("bad $timescale '" + text + "'");
  uint64_t mult = 0, div = 1;
  if (unit == "s") mult = 1'000'000'000'000ull;
  else if (unit == "ms") mult = 1'000'000'000ull;
  else if (unit == "us") mult = 1'000'000ull;
  else if (unit == "ns") mult = 1'000ull;
  else if (unit == "ps") mult = 1;
  else if (unit == "fs") mult = 1, div = 1000;
  else tz.fail("bad $timescale unit '" + text + "'");
  mult *= num;
  if (div > 1 && mult % div == 0) mult /= div, div = 1;
  else if (div == 1000 && mult == 10) mult = 1, div = 100;
  else if (div == 1000 && mult == 100) mult = 1, div = 10;
  h.mult = mult;
  h.div = div;
  h.has_timescale = true;
}

// Reads the declarations up to and including "$enddefinitions $end".
Header parse_header(Tokenizer& tz) {
  Header h;
  std::vector<std::string> path;
  std::vector<size_t> pushed;  // components pushed by each open $scope
  std::string t;
  for (;;) {
    tz.expect(t, "$enddefinitions");
    if (t == "$enddefinitions") {
      tz.skip_to_end();
      break;
    } else if (t == "$scope") {
      std::string type, name;
      tz.expect(type, "scope type");
      tz.expect(name, "scope name");
      tz.skip_to_end();
      auto comps = split_dots(name);
      if (comps.empty()) comps.push_back(name.empty() ? "_" : name);
      for (auto& c : comps) {
        path.push_back(std::move(c));
        h.scopes.push_back({path, type});
      }
      pushed.push_back(comps.size());
    } else if (t == "$upscope") {
      tz.skip_to_end();
      if (pushed.empty()) tz.fail("$upscope without $scope");
      path.resize(path.size() - pushed.back());
      pushed.pop_back();
    } else if (t == "$var") {
      HdrVar v;
      std::string width;
      tz.expect(v.type, "var type");
      tz.expect(width, "var width");
      tz.expect(v.code, "var code");
      char* end = nullptr;
      const unsigned long w = std::strtoul(width.c_str(), &end, 10);
      if (width.empty() || *end != '\0' || w == 0) tz.fail("bad $var width '" + width + "'");
      v.width = static_cast<unsigned>(w);
      for (;;) {
        tz.expect(t, "$end");
        if (t == "$end") break;
        if (v.ref.empty()) {
          v.base = t;
        } else {
          v.ref += ' ';
          v.range += t;
        }
        v.ref += t;
      }
      if (v.ref.empty()) tz.fail("$var without a name");
      if (path.empty()) tz.fail("$var outside any $scope");
      v.scope = path;
      h.vars.push_back(std::move(v));
    } else if (t == "$timescale") {
      parse_timescale(tz, h);
    } else if (!t.empty() && t[0] == '$') {
      tz.skip_to_end();  // $date, $version, $comment, ...
    } else {
      tz.fail("unexpected '" + t + "' in the header");
    }
  }
  return h;
}

// ---- VCD body events --------------------------------------------------------
// Reads value changes and time stamps of a VCD body. Keywords ($dumpvars,
// $dumpall, $dumpon, $dumpoff, $end) are transparent; $comment is skipped.
struct BodyEvent {
  enum Kind { kTime, kChange, kEnd } kind = kEnd;
  uint64_t time_ps = 0;
  std::string value;  // "0", "b1010", "r0.5", ...
  std::string code;
};

class BodyReader {
 public:
  BodyReader(Tokenizer& tz, const Header& h) : tz_(tz), mult_(h.mult), div_(h.div) {}

  void next(BodyEvent& ev) {
    for (;;) {
      if (!tz_.next(tok_)) {
        ev.kind = BodyEvent::kEnd;
        return;
      }
      const char c = tok_[0];
      if (c == '#') {
        ev.kind = BodyEvent::kTime;
        ev.time_ps = convert(tok_);
        return;
      }
      if (c == '$') {
        if (tok_ == "$comment") tz_.skip_to_end();
        continue;
      }
      ev.kind = BodyEvent::kChange;
      if (c == 'b' || c == 'B' || c == 'r' || c == 'R') {
        ev.value = tok_;
        tz_.expect(ev.code, "identifier code");
        return;
      }
      if (c == '0' || c == '1' || c == 'x' || c == 'X' || c == 'z' || c == 'Z') {
        if (tok_.size() < 2) tz_.fail("scalar value without identifier code");
        ev.value.assign(1, c);
        ev.code.assign(tok_, 1, std::string::npos);
        return;
      }
      tz_.fail("unexpected '" + tok_ + "' in the value changes");
    }
  }

 private:
  uint64_t convert(const std::string& tok) {
    uint64_t t = 0;
    if (tok.size() < 2) tz_.fail("bad time '" + tok + "'");
    for (size_t i = 1; i < tok.size(); ++i) {
      if (tok[i] < '0' || tok[i] > '9') tz_.fail("bad time '" + tok + "'");
      t = t * 10 + uint64_t(tok[i] - '0');
    }
    t *= mult_;
    if (div_ != 1) {
      if (t % div_ != 0) tz_.fail("time '" + tok + "' is not a whole number of ps");
      t /= div_;
    }
    return t;
  }

  Tokenizer& tz_;
  uint64_t mult_, div_;
  std::string tok_;
};

// ---- buffered binary reader of our body file --------------------------------
class RecordReader {
 public:
  explicit RecordReader(const std::string& path) : path_(path), buf_(kIoBlock) {
    errno = 0;
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw io_error("cannot reopen temporary body", path);
  }
  ~RecordReader() {
    if (f_) std::fclose(f_);
  }
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;
  // false at end of file.
  bool next(uint32_t& tag, uint64_t& payload) {
    if (len_ - pos_ < 12) {
      std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
      len_ -= pos_;
      pos_ = 0;
      len_ += std::fread(buf_.data() + len_, 1, buf_.size() - len_, f_);
      if (std::ferror(f_)) throw io_error("read error in temporary body", path_);
      if (len_ == 0) return false;
      if (len_ < 12) throw std::runtime_error("vcd: truncated temporary body '" + path_ + "'");
    }
    std::memcpy(&tag, buf_.data() + pos_, 4);
    std::memcpy(&payload, buf_.data() + pos_ + 4, 8);
    pos_ += 12;
    return true;
  }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<unsigned char> buf_;
  size_t pos_ = 0, len_ = 0;
};

// ---- buffered text output into a ByteSink --------------------------------
class Out {
 public:
  explicit Out(ByteSink& sink) : sink_(sink) { buf_.reserve(kIoBlock + 256); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  void put(char c) { buf_.push_back(c); }
  void put(std::string_view s) {
    buf_.append(s.data(), s.size());
    if (buf_.size() >= kIoBlock) drain();
  }
  void put_u64(uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) buf_.push_back(tmp[--n]);
  }
  void put_time(uint64_t t) {
    buf_.push_back('#');
    put_u64(t);
    put('\n');
  }
  // Model value: scalar "1!" or vector "b101 !" (no leading zeros).
  void put_value(uint64_t v, unsigned width, const std::string& code) {
    if (width == 1) {
      buf_.push_back(v ? '1' : '0');
    } else {
      buf_.push_back('b');
      int top = 63;
      while (top > 0 && !((v >> top) & 1)) --top;
      for (int i = top; i >= 0; --i) buf_.push_back(((v >> i) & 1) ? '1' : '0');
      buf_.push_back(' ');
    }
    put(code);
    put('\n');
  }
  // Value token copied from a VCD file.
  void put_raw_value(const std::string& value, const std::string& code) {
    put(value);
    if (value.size() != 1) put(' ');
    put(code);
    put('\n');
  }
  void close() {
    drain();
    sink_.close();
  }

 private:
  void drain() {
    if (buf_.empty()) return;
    sink_.write(buf_.data(), buf_.size());
    buf_.clear();
  }

  ByteSink& sink_;
  std::string buf_;
};

// ---- merged scope tree ------------------------------------------------------
struct Item {
  bool rtl;      // false: model variable, true: RTL variable
  size_t index;  // model var id, or RTL variable index (one per RTL code)
  std::string name;
  std::string ref;  // RTL: reference as written; model: built from name/width
  std::string type;
  unsigned width;
};

struct Node {
  std::string name, type;
  std::vector<std::unique_ptr<Node>> kids;
  std::map<std::string, Node*> kid_by_name;
  std::vector<Item> items;
  std::map<std::string, size_t> item_by_name;

  Node* child(const std::string& n, const std::string& t) {
    auto it = kid_by_name.find(n);
    if (it != kid_by_name.end()) return it->second;
    kids.push_back(std::make_unique<Node>());
    Node* k = kids.back().get();
    k->name = n;
    k->type = t.empty() ? "module" : t;
    kid_by_name.emplace(n, k);
    return k;
  }
  Node* at(const std::vector<std::string>& path, const std::string& scope_type) {
    Node* n = this;
    for (const auto& p : path) n = n->child(p, scope_type);
    return n;
  }
};

}  // namespace

// ---- names --------------------------------------------------------------------
std::string sanitize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '[' || c == ']';
    out.push_back(ok ? c : '_');
  }
  if (out.empty()) out = "_";
  return out;
}

std::vector<std::string> split_scope(std::string_view scope) {
  std::vector<std::string> out = split_dots(scope);
  for (auto& s : out) s = sanitize_name(s);
  return out;
}

// ---- VcdWriter ------------------------------------------------------------------
VcdWriter::VcdWriter(std::string tmp_body_path) : body_path_(std::move(tmp_body_path)) {
  errno = 0;
  body_ = std::fopen(body_path_.c_str(), "wb");
  if (!body_) throw io_error("cannot create temporary body", body_path_);
  std::setvbuf(body_, nullptr, _IONBF, 0);  // we buffer ourselves
  buf_.resize(kBufBytes);
}

VcdWriter::~VcdWriter() {
  if (body_) std::fclose(body_);
  std::remove(body_path_.c_str());
}

int VcdWriter::add_var(const std::string& scope, const std::string& name, unsigned width,
                       uint64_t initial) {
  if (frozen_ || finished_)
    throw std::logic_error("vcd: add_var(" + scope + "." + name +
                           ") after the first change; declare all variables first");
  if (width < 1 || width > 64)
    throw std::invalid_argument(fmt::format("vcd: {}.{}: width {} not in 1..64", scope, name, width));
  Decl d{split_scope(scope), sanitize_name(name), width};
  if (d.scope.empty()) throw std::invalid_argument("vcd: variable '" + name + "' without a scope");
  // Sanitised names hold no '.', so the joined name identifies the variable.
  if (!full_names_.insert(join_dots(d.scope) + "." + d.name).second)
    throw std::invalid_argument("vcd: duplicate variable " + join_dots(d.scope) + "." + d.name);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  vars_.push_back(Var{mask, initial & mask, initial & mask, 0, false});
  decls_.push_back(std::move(d));
  return static_cast<int>(vars_.size() - 1);
}

int VcdWriter::add_clock(const std::string& scope, const std::string& name, uint64_t period_ps) {
  if (period_ps < 2) throw std::invalid_argument(fmt::format("vcd: clock {}.{}: period {} ps < 2", scope, name, period_ps));
  const int v = add_var(scope, name, 1, 1);
  vars_[static_cast<size_t>(v)].clock_ps = period_ps;
  return v;
}

void VcdWriter::bad_change(int var, uint64_t time_ps) const {
  if (var >= 0 && static_cast<size_t>(var) < vars_.size() && vars_[static_cast<size_t>(var)].clock_ps)
    throw std::invalid_argument(fmt::format("vcd: change() of the clock {}.{}: clock edges are synthesised",
                                            join_dots(decls_[static_cast<size_t>(var)].scope), decls_[static_cast<size_t>(var)].name));
  if (finished_) throw std::logic_error("vcd: change() after close_body() / finish_merged()");
  if (var < 0 || static_cast<size_t>(var) >= vars_.size())
    throw std::invalid_argument(fmt::format("vcd: change() of unknown variable {}", var));
  const Decl& d = decls_[static_cast<size_t>(var)];
  throw std::invalid_argument(fmt::format("vcd: change of {}.{} at {} ps is earlier than {} ps",
                                          join_dots(d.scope), d.name, time_ps, cur_time_));
}

void VcdWriter::put_record(uint32_t tag, uint64_t payload) {
  if (used_ + 12 > buf_.size()) write_buffer();
  std::memcpy(buf_.data() + used_, &tag, 4);
  std::memcpy(buf_.data() + used_ + 4, &payload, 8);
  used_ += 12;
}

void VcdWriter::write_buffer() {
  if (used_ == 0) return;
  errno = 0;
  if (std::fwrite(buf_.data(), 1, used_, body_) != used_)
    throw io_error("write error on temporary body", body_path_);
  used_ = 0;
}

void VcdWriter::flush_pending() {
  if (touched_.empty()) return;
  bool stamped = false;
  for (uint32_t id : touched_) {
    Var& v = vars_[id];
    v.touched = false;
    if (v.pending == v.cur) continue;
    v.cur = v.pending;
    if (cur_time_ == 0) {
      v.initial = v.cur;  // changes at time 0 are initial values
      continue;
    }
    if (!stamped) {
      put_record(kTimeTag, cur_time_);
      stamped = true;
    }
    put_record(id, v.cur);
  }
  touched_.clear();
}

// ---- sinks ----------------------------------------------------------------------
ByteSink::~ByteSink() = default;

FileSink::FileSink(std::string path) : path_(std::move(path)) {
  errno = 0;
  f_ = std::fopen(path_.c_str(), "wb");
  if (!f_) throw io_error("cannot create", path_);
}

FileSink::~FileSink() {
  if (f_) std::fclose(f_);
}

void FileSink::write(const char* data, size_t n) {
  if (!f_) throw std::logic_error("vcd: write to a closed FileSink '" + path_ + "'");
  errno = 0;
  if (std::fwrite(data, 1, n, f_) != n) throw io_error("write error on", path_);
  bytes_ += n;
}

void FileSink::close() {
  if (!f_) return;
  errno = 0;
  const bool bad = std::fflush(f_) != 0 || std::ferror(f_);
  const bool close_bad = std::fclose(f_) != 0;
  f_ = nullptr;
  if (bad || close_bad) throw io_error("write error on", path_);
}

// ---- the merge ---------------------------------------------------------------------
namespace detail {

// Consumer of the merged stream: values by position in the merged variable
// list (code order). Model values come as integers, RTL values as the
// tokens Verilator wrote.
struct MergeConsumer {
  virtual ~MergeConsumer() = default;
  virtual void init_model(size_t ord, uint64_t v) = 0;
  virtual void init_rtl(size_t ord, const std::string& tok) = 0;
  virtual void init_done() = 0;
  virtual void time(uint64_t t) = 0;
  virtual void model(size_t ord, uint64_t v) = 0;
  virtual void rtl(size_t ord, const std::string& tok) = 0;
  virtual void end(uint64_t end_time_ps) = 0;
  // The earliest time at or after t at which the consumer wants clock edges
  // (kNoTime: never): synthesised edges before it are skipped.
  virtual uint64_t clock_floor(uint64_t t) const { return t; }
};

struct MergeState {
  std::unique_ptr<Tokenizer> rtl;
  Header rh;
  std::unordered_map<std::string, size_t> rtl_index;  // RTL code -> RTL variable
  std::vector<const HdrVar*> rtl_vars;
  std::string header;                 // "$version" .. "$enddefinitions $end\n"
  std::vector<MergedVar> vars;        // by code order
  std::vector<size_t> model_ord, rtl_ord;
  std::vector<std::pair<bool, size_t>> order;  // (rtl, index) by code order
  std::vector<uint64_t> clock_ps;     // by code order: a synthesised clock's period, 0 otherwise
};

// A synthesised clock's level at time t (rising at k*P, falling at k*P + P/2).
inline bool clock_level(uint64_t t, uint64_t p) { return t % p < p / 2; }

}  // namespace detail

namespace {

// "b0101" / "1" / "x" -> integer; nullopt for x/z bits, reals, > 64 bits.
std::optional<uint64_t> token_to_u64(const std::string& s) {
  if (s.empty()) return std::nullopt;
  if (s.size() == 1) {
    if (s[0] == '0') return 0;
    if (s[0] == '1') return 1;
    return std::nullopt;
  }
  if (s[0] != 'b' && s[0] != 'B') return std::nullopt;
  uint64_t v = 0;
  int bits = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] != '0' && s[i] != '1') return std::nullopt;
    if (bits == 0 && s[i] == '0') continue;
    if (++bits > 64) return std::nullopt;
    v = (v << 1) | uint64_t(s[i] - '0');
  }
  return v;
}

// Writes every change (the classic full dump).
class FullWriter : public detail::MergeConsumer {
 public:
  FullWriter(Out& out, const detail::MergeState& m) : out_(out), m_(m) {}
  void init_model(size_t ord, uint64_t v) override {
    start();
    out_.put_value(v, m_.vars[ord].width == 1 ? 1 : 2, m_.vars[ord].code);
  }
  void init_rtl(size_t ord, const std::string& tok) override {
    start();
    out_.put_raw_value(tok, m_.vars[ord].code);
  }
  void init_done() override {
    start();
    out_.put("$end\n");
  }
  void time(uint64_t t) override {
    out_.put_time(t);
    last_ = t;
  }
  void model(size_t ord, uint64_t v) override { out_.put_value(v, m_.vars[ord].width == 1 ? 1 : 2, m_.vars[ord].code); }
  void rtl(size_t ord, const std::string& tok) override { out_.put_raw_value(tok, m_.vars[ord].code); }
  void end(uint64_t end_time_ps) override {
    if (end_time_ps > last_) out_.put_time(end_time_ps);
  }

 private:
  void start() {
    if (started_) return;
    started_ = true;
    out_.put("#0\n$dumpvars\n");
  }
  Out& out_;
  const detail::MergeState& m_;
  bool started_ = false;
  uint64_t last_ = 0;
};

// Writes only the windows: at each window's start a dump of every value in
// effect then ($dumpvars for the first window, $dumpall after), the changes
// inside the window, and a time stamp at the window's end.
class WindowWriter : public detail::MergeConsumer {
 public:
  WindowWriter(Out& out, const detail::MergeState& m, const std::vector<VcdWindow>& w)
      : out_(out), m_(m), w_(w), mval_(m.vars.size(), 0), rval_(m.vars.size()) {}
  void init_model(size_t ord, uint64_t v) override { mval_[ord] = v; }
  void init_rtl(size_t ord, const std::string& tok) override { rval_[ord] = tok; }
  void init_done() override { cur_ = 0; }
  void time(uint64_t t) override {
    settle(cur_);  // everything at cur_ is known
    advance_to(t);
    cur_ = t;
    stamped_ = false;
  }
  void model(size_t ord, uint64_t v) override {
    mval_[ord] = v;
    if (inside()) {
      stamp();
      out_.put_value(v, m_.vars[ord].width == 1 ? 1 : 2, m_.vars[ord].code);
    }
  }
  void rtl(size_t ord, const std::string& tok) override {
    rval_[ord] = tok;
    if (inside()) {
      stamp();
      out_.put_raw_value(tok, m_.vars[ord].code);
    }
  }
  uint64_t clock_floor(uint64_t t) const override {
    // Inside a window: now; before one: its start; after the last: never.
    auto it = std::lower_bound(w_.begin(), w_.end(), t, [](const VcdWindow& w, uint64_t x) { return w.end_ps < x; });
    if (it == w_.end()) return kNoTime;
    return std::max(t, it->begin_ps);
  }
  void end(uint64_t end_time_ps) override {
    settle(cur_);
    const uint64_t stop = std::max(end_time_ps, cur_);
    advance_to(stop == ~uint64_t{0} ? stop : stop + 1);
    // A window still open at the end of the run ends there.
    if (open_) {
      const uint64_t e = std::min(w_[k_].end_ps, stop);
      if (e > last_written_) out_.put_time(e);
      open_ = false;
    }
  }

 private:
  // Changes at cur_ go out only inside an open window that started before cur_.
  bool inside() const { return open_ && cur_ > w_[k_].begin_ps && cur_ <= w_[k_].end_ps; }
  void stamp() {
    if (stamped_) return;
    stamped_ = true;
    out_.put_time(cur_);
    last_written_ = cur_;
  }
  // All changes at time t are applied: a window starting at t dumps now.
  void settle(uint64_t t) {
    if (!open_ && k_ < w_.size() && w_[k_].begin_ps == t) dump(t);
  }
  // Windows that start or end before t (no change between the last time and t).
  void advance_to(uint64_t t) {
    for (;;) {
      if (open_) {
        if (w_[k_].end_ps >= t) return;
        if (w_[k_].end_ps > last_written_) out_.put_time(w_[k_].end_ps);
        open_ = false;
        ++k_;
        continue;
      }
      if (k_ >= w_.size() || w_[k_].begin_ps >= t) return;
      dump(w_[k_].begin_ps);
    }
  }
  void dump(uint64_t t) {
    out_.put_time(t);
    out_.put(first_ ? "$dumpvars\n" : "$dumpall\n");
    first_ = false;
    for (size_t i = 0; i < m_.vars.size(); ++i) {
      if (m_.clock_ps[i]) mval_[i] = detail::clock_level(t, m_.clock_ps[i]);
      if (m_.vars[i].rtl)
        out_.put_raw_value(rval_[i], m_.vars[i].code);
      else
        out_.put_value(mval_[i], m_.vars[i].width == 1 ? 1 : 2, m_.vars[i].code);
    }
    out_.put("$end\n");
    last_written_ = t;
    open_ = true;
    if (t == cur_) stamped_ = true;  // later changes at this time are already in the dump
  }

  Out& out_;
  const detail::MergeState& m_;
  const std::vector<VcdWindow>& w_;
  std::vector<uint64_t> mval_;
  std::vector<std::string> rval_;
  size_t k_ = 0;        // current / next window
  bool open_ = false;
  bool first_ = true;
  bool stamped_ = false;
  uint64_t cur_ = 0, last_written_ = 0;
};

// Integer values for a MergedValueVisitor.
class ValueAdapter : public detail::MergeConsumer {
 public:
  explicit ValueAdapter(MergedValueVisitor& v) : v_(v) {}
  void init_model(size_t ord, uint64_t v) override { v_.initial(ord, v); }
  void init_rtl(size_t ord, const std::string& tok) override { v_.initial(ord, token_to_u64(tok)); }
  void init_done() override {}
  void time(uint64_t t) override { v_.time(t); }
  void model(size_t ord, uint64_t v) override { v_.change(ord, v); }
  void rtl(size_t ord, const std::string& tok) override { v_.change(ord, token_to_u64(tok)); }
  void end(uint64_t end_time_ps) override { v_.end(end_time_ps); }
  uint64_t clock_floor(uint64_t t) const override { return v_.wants_clock_edges() ? t : kNoTime; }

 private:
  MergedValueVisitor& v_;
};

}  // namespace

void VcdWriter::close_body() {
  if (finished_) return;
  flush_pending();
  write_buffer();
  finished_ = true;
  frozen_ = true;
  errno = 0;
  const bool close_bad = std::fclose(body_) != 0;
  body_ = nullptr;
  if (close_bad) throw io_error("write error on temporary body", body_path_);
}

void VcdWriter::remove_body() {
  if (body_) {
    std::fclose(body_);
    body_ = nullptr;
  }
  std::remove(body_path_.c_str());
}

void VcdWriter::finish_merged(const std::string& out_path, const std::string& rtl_vcd_path,
                              uint64_t end_time_ps) {
  if (merged_) throw std::logic_error("vcd: finish_merged() called twice");
  merged_ = true;
  close_body();
  try {
    FileSink sink(out_path);
    write_merged(sink, rtl_vcd_path, end_time_ps);
  } catch (...) {
    std::remove(out_path.c_str());  // no half-written waveform
    throw;
  }
  remove_body();
}

void VcdWriter::open_merge(detail::MergeState& m, const std::string& rtl_vcd_path) const {
  if (!finished_) throw std::logic_error("vcd: close_body() before reading the merged view");
  // The RTL file: header now, body streamed below. A missing or empty file
  // (Verilator writes nothing before its first dump) means no RTL signals.
  std::error_code ec;
  if (!rtl_vcd_path.empty() && std::filesystem::exists(rtl_vcd_path, ec) &&
      std::filesystem::file_size(rtl_vcd_path, ec) > 0 && !ec) {
    m.rtl = std::make_unique<Tokenizer>(rtl_vcd_path);
    m.rh = parse_header(*m.rtl);
  }

  // Union of the scope trees. Model variables first, then the RTL's.
  Node root;
  std::vector<std::pair<Node*, size_t>> model_items(vars_.size());
  for (size_t i = 0; i < decls_.size(); ++i) {
    Node* n = root.at(decls_[i].scope, "module");
    n->item_by_name.emplace(decls_[i].name, n->items.size());
    model_items[i] = {n, n->items.size()};
    n->items.push_back(Item{false, i, decls_[i].name, {}, "wire", decls_[i].width});
  }
  for (const auto& s : m.rh.scopes) root.at(s.path, s.type);
  for (const auto& v : m.rh.vars) {
    auto [it, fresh] = m.rtl_index.emplace(v.code, m.rtl_vars.size());
    if (fresh) m.rtl_vars.push_back(&v);
    Node* n = root.at(v.scope, "module");
    auto clash = n->item_by_name.find(v.base);
    if (clash != n->item_by_name.end() && !n->items[clash->second].rtl) {
      // A model variable with the RTL signal's name: the model one is renamed.
      Item& mi = n->items[clash->second];
      std::string renamed = mi.name + "_model";
      for (int k = 2; n->item_by_name.count(renamed); ++k) renamed = fmt::format("{}_model{}", mi.name, k);
      const size_t pos = clash->second;
      n->item_by_name.erase(clash);
      mi.name = renamed;
      n->item_by_name.emplace(renamed, pos);
    }
    n->item_by_name.emplace(v.base, n->items.size());
    n->items.push_back(Item{true, it->second, v.base, v.ref, v.type, v.width});
  }
  for (size_t i = 0; i < decls_.size(); ++i) {
    Item& mi = model_items[i].first->items[model_items[i].second];
    mi.ref = mi.width > 1 ? fmt::format("{} [{}:0]", mi.name, mi.width - 1) : mi.name;
  }

  // Header, assigning fresh codes in declaration order.
  std::string& out = m.header;
  out += "$version ernic-sim (ERNIC RoCEv2 co-simulator) merged model+RTL VCD $end\n";
  out += "$timescale 1ps $end\n";
  m.model_ord.assign(vars_.size(), ~size_t{0});
  m.rtl_ord.assign(m.rtl_vars.size(), ~size_t{0});
  std::vector<std::pair<const Node*, size_t>> stack;  // (node, next kid)
  std::vector<std::string> path;
  std::string indent;
  auto emit_node = [&](const Node* n) {
    out += indent;
    out += "$scope ";
    out += n->type;
    out += ' ';
    out += n->name;
    out += " $end\n";
    indent.push_back(' ');
    path.push_back(n->name);
    std::string scope_name = join_dots(path);
    for (const Item& it : n->items) {
      size_t& ord = it.rtl ? m.rtl_ord[it.index] : m.model_ord[it.index];
      if (ord == ~size_t{0}) {
        ord = m.order.size();
        m.order.emplace_back(it.rtl, it.index);
        MergedVar mv;
        mv.code = make_code(ord);
        mv.width = it.width;
        mv.rtl = it.rtl;
        mv.type = it.type;
        m.vars.push_back(std::move(mv));
        m.clock_ps.push_back(it.rtl ? 0 : vars_[it.index].clock_ps);
      }
      MergedVar& mv = m.vars[ord];
      // "name [7:0]" -> range "[7:0]"
      std::string range;
      const size_t sp = it.ref.find(' ');
      if (sp != std::string::npos)
        for (size_t k = sp; k < it.ref.size(); ++k)
          if (it.ref[k] != ' ') range.push_back(it.ref[k]);
      mv.names.push_back(MergedName{scope_name + "." + it.name, range});
      out += indent;
      out += fmt::format("$var {} {} {} {} $end\n", it.type, it.width, mv.code, it.ref);
    }
  };
  for (const auto& top : root.kids) {
    emit_node(top.get());
    stack.emplace_back(top.get(), 0);
    while (!stack.empty()) {
      auto& [n, k] = stack.back();
      if (k < n->kids.size()) {
        const Node* kid = n->kids[k++].get();
        emit_node(kid);
        stack.emplace_back(kid, 0);
      } else {
        indent.pop_back();
        path.pop_back();
        out += indent;
        out += "$upscope $end\n";
        stack.pop_back();
      }
    }
  }
  out += "$enddefinitions $end\n";
}

void VcdWriter::stream_merge(detail::MergeState& m, detail::MergeConsumer& c, uint64_t end_time_ps) const {
  // RTL values at time 0 become initial values.
  std::vector<std::string> rtl_init(m.rtl_vars.size());
  BodyEvent ev;
  std::unique_ptr<BodyReader> rb;
  uint64_t rtl_time = kNoTime;
  auto rtl_var_of = [&](const std::string& code) {
    auto it = m.rtl_index.find(code);
    if (it == m.rtl_index.end()) m.rtl->fail("value change of undeclared identifier '" + code + "'");
    return it->second;
  };
  if (m.rtl) {
    rb = std::make_unique<BodyReader>(*m.rtl, m.rh);
    for (;;) {
      rb->next(ev);
      if (ev.kind == BodyEvent::kEnd) break;
      if (ev.kind == BodyEvent::kTime) {
        if (ev.time_ps == 0) continue;
        rtl_time = ev.time_ps;
        break;
      }
      rtl_init[rtl_var_of(ev.code)] = ev.value;
    }
  }
  for (size_t ord = 0; ord < m.order.size(); ++ord) {
    const auto& [is_rtl, idx] = m.order[ord];
    if (!is_rtl) {
      c.init_model(ord, vars_[idx].initial);
    } else if (!rtl_init[idx].empty()) {
      c.init_rtl(ord, rtl_init[idx]);
    } else {
      const HdrVar& v = *m.rtl_vars[idx];
      c.init_rtl(ord, v.type == "real" ? "r0" : v.width == 1 ? "x" : "bx");
    }
  }
  c.init_done();
  rtl_init.clear();
  rtl_init.shrink_to_fit();

  // Synthesised clocks: the next edge of each (the rising edge at 0 is the initial value).
  struct Clk {
    size_t ord;
    uint64_t period, next;
  };
  std::vector<Clk> clocks;
  for (size_t ord = 0; ord < m.clock_ps.size(); ++ord)
    if (m.clock_ps[ord]) clocks.push_back({ord, m.clock_ps[ord], m.clock_ps[ord] / 2});
  auto first_edge_from = [](uint64_t f, uint64_t p) {
    const uint64_t n = f / p, r = f % p;
    if (r == 0) return f;
    if (r <= p / 2) return n * p + p / 2;
    return (n + 1) * p;
  };
  auto next_clock_time = [&]() {
    uint64_t tc = kNoTime;
    for (Clk& k : clocks) {
      if (k.next == kNoTime) continue;
      const uint64_t f = c.clock_floor(k.next);
      if (f == kNoTime || f > end_time_ps) {
        k.next = kNoTime;
        continue;
      }
      if (f > k.next) k.next = first_edge_from(f, k.period);
      if (k.next > end_time_ps) {
        k.next = kNoTime;
        continue;
      }
      tc = std::min(tc, k.next);
    }
    return tc;
  };

  // Value changes of both sources (and the clocks) in time order.
  RecordReader mb(body_path_);
  uint32_t tag = 0;
  uint64_t payload = 0;
  uint64_t model_time = kNoTime;
  if (mb.next(tag, payload)) {
    if (tag != kTimeTag) throw std::runtime_error("vcd: corrupt temporary body '" + body_path_ + "'");
    model_time = payload;
  }
  for (;;) {
    const uint64_t tc = clocks.empty() ? kNoTime : next_clock_time();
    const uint64_t t = std::min(std::min(model_time, rtl_time), tc);
    if (t == kNoTime) break;
    c.time(t);
    if (tc == t)
      for (Clk& k : clocks)
        if (k.next == t) {
          c.model(k.ord, detail::clock_level(t, k.period));
          k.next = k.next % k.period == 0 ? k.next + k.period / 2 : (k.next / k.period + 1) * k.period;
        }
    if (model_time == t) {
      model_time = kNoTime;
      while (mb.next(tag, payload)) {
        if (tag == kTimeTag) {
          model_time = payload;
          break;
        }
        c.model(m.model_ord[tag], payload);
      }
    }
    if (rtl_time == t) {
      rtl_time = kNoTime;
      for (;;) {
        rb->next(ev);
        if (ev.kind == BodyEvent::kEnd) break;
        if (ev.kind == BodyEvent::kTime) {
          if (ev.time_ps == t) continue;
          if (ev.time_ps < t)
            m.rtl->fail(fmt::format("time goes backwards ({} ps after {} ps)", ev.time_ps, t));
          rtl_time = ev.time_ps;
          break;
        }
        c.rtl(m.rtl_ord[rtl_var_of(ev.code)], ev.value);
      }
    }
  }
  c.end(end_time_ps);
}

std::vector<MergedVar> VcdWriter::merged_vars(const std::string& rtl_vcd_path) const {
  detail::MergeState m;
  open_merge(m, rtl_vcd_path);
  return std::move(m.vars);
}

void VcdWriter::scan_merged(const std::string& rtl_vcd_path, MergedValueVisitor& v, uint64_t end_time_ps) const {
  detail::MergeState m;
  open_merge(m, rtl_vcd_path);
  v.begin(m.vars);
  ValueAdapter a(v);
  stream_merge(m, a, end_time_ps);
}

uint64_t VcdWriter::write_merged(ByteSink& sink, const std::string& rtl_vcd_path, uint64_t end_time_ps,
                                 const std::vector<VcdWindow>* windows) const {
  detail::MergeState m;
  open_merge(m, rtl_vcd_path);
  const uint64_t before = sink.bytes();
  Out out(sink);
  out.put(m.header);
  if (windows) {
    for (size_t i = 0; i < windows->size(); ++i) {
      const VcdWindow& w = (*windows)[i];
      if (w.begin_ps > w.end_ps || (i > 0 && w.begin_ps <= (*windows)[i - 1].end_ps))
        throw std::invalid_argument("vcd: windows must be ordered, disjoint and non-empty");
    }
    WindowWriter ww(out, m, *windows);
    stream_merge(m, ww, end_time_ps);
  } else {
    FullWriter fw(out, m);
    stream_merge(m, fw, end_time_ps);
  }
  out.close();
  return sink.bytes() - before;
}

std::vector<std::pair<std::string, unsigned>> VcdWriter::model_var_names() const {
  std::vector<std::pair<std::string, unsigned>> out;
  out.reserve(decls_.size());
  for (const Decl& d : decls_) out.emplace_back(join_dots(d.scope) + "." + d.name, d.width);
  return out;
}

std::vector<VcdWindow> make_windows(const std::vector<uint64_t>& hits_ps, uint64_t pre_ps, uint64_t post_ps) {
  std::vector<uint64_t> h = hits_ps;
  std::sort(h.begin(), h.end());
  std::vector<VcdWindow> out;
  for (uint64_t t : h) {
    const uint64_t b = t > pre_ps ? t - pre_ps : 0;
    const uint64_t e = t > ~uint64_t{0} - post_ps ? ~uint64_t{0} : t + post_ps;
    if (!out.empty() && b <= out.back().end_ps + 1) {
      out.back().end_ps = std::max(out.back().end_ps, e);
    } else {
      out.push_back({b, e});
    }
  }
  return out;
}

// ---- reader -------------------------------------------------------------------
namespace {
std::string full_name(const HdrVar& v) { return join_dots(v.scope) + "." + v.base; }

bool matches(const HdrVar& v, const std::string& name) {
  const std::string f = full_name(v);
  return name == f || (!v.range.empty() && name == f + v.range);
}
}  // namespace

std::vector<VcdVarInfo> vcd_list_vars(const std::string& vcd_path) {
  Tokenizer tz(vcd_path);
  const Header h = parse_header(tz);
  std::vector<VcdVarInfo> out;
  for (const auto& v : h.vars) out.push_back({full_name(v), v.type, v.width, v.code});
  return out;
}

bool vcd_has_var(const std::string& vcd_path, const std::string& full_var_name) {
  Tokenizer tz(vcd_path);
  const Header h = parse_header(tz);
  return std::any_of(h.vars.begin(), h.vars.end(),
                     [&](const HdrVar& v) { return matches(v, full_var_name); });
}

std::optional<std::string> vcd_raw_value_at(const std::string& vcd_path,
                                            const std::string& full_var_name,
                                            uint64_t time_ps) {
  Tokenizer tz(vcd_path);
  const Header h = parse_header(tz);
  auto it = std::find_if(h.vars.begin(), h.vars.end(),
                         [&](const HdrVar& v) { return matches(v, full_var_name); });
  if (it == h.vars.end()) return std::nullopt;
  const std::string code = it->code;
  BodyReader rb(tz, h);
  BodyEvent ev;
  std::optional<std::string> value;
  for (;;) {
    rb.next(ev);
    if (ev.kind == BodyEvent::kEnd) break;
    if (ev.kind == BodyEvent::kTime) {
      if (ev.time_ps > time_ps) break;
      continue;
    }
    if (ev.code == code) value = ev.value;
  }
  return value;
}

std::optional<uint64_t> vcd_value_at(const std::string& vcd_path,
                                     const std::string& full_var_name, uint64_t time_ps) {
  const auto raw = vcd_raw_value_at(vcd_path, full_var_name, time_ps);
  if (!raw || raw->empty()) return std::nullopt;
  const std::string& s = *raw;
  if (s == "0") return 0;
  if (s == "1") return 1;
  if (s[0] != 'b' && s[0] != 'B') return std::nullopt;
  uint64_t v = 0;
  int bits = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] != '0' && s[i] != '1') return std::nullopt;
    if (bits == 0 && s[i] == '0') continue;
    if (++bits > 64) return std::nullopt;
    v = (v << 1) | uint64_t(s[i] - '0');
  }
  return v;
}

}  // namespace ernic::trace
