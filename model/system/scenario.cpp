// model/system: scenario file parser (see scenario.h and scenarios/README.md).
//
// Structure: every YAML map is read through MapReader, which is given the
// keys the map may hold, reports duplicate and unknown keys (suggesting the
// closest known one), hands out Fields (a node with its key path and a
// position) and, in finish(), reports any key the caller left unused. Typed
// value readers (Field -> uint64, double, name, enum, ...) give the
// "wrong type", "negative" and "out of range" errors. Step kinds are a table
// of name -> parse function; names (nodes, MRs, connections) are resolved in
// step order against a symbol table.
#include "model/system/scenario.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <utility>

namespace ernic {

// ------------------------------------------------------------ basics -------

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

static std::string format_error(const std::string& file, int line, int column,
                                const std::string& key, const std::string& message) {
  std::string s = SourceLoc{file, line, column}.str() + ": ";
  if (!key.empty()) s += "key '" + key + "': ";
  return s + message;
}

ScenarioError::ScenarioError(std::string file, int line, int column, std::string key,
                             std::string message)
    : std::runtime_error(format_error(file, line, column, key, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_(std::move(key)),
      message_(std::move(message)) {}

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::random: return "random";
    case Pattern::zero: return "zero";
    case Pattern::incrementing: return "incrementing";
    case Pattern::constant: return "constant";
  }
  return "?";
}
const char* to_string(Access a) {
  switch (a) {
    case Access::r: return "r";
    case Access::w: return "w";
    case Access::rw: return "rw";
  }
  return "?";
}
const char* to_string(WqeOpcode o) {
  switch (o) {
    case WqeOpcode::write: return "write";
    case WqeOpcode::write_imm: return "write_imm";
    case WqeOpcode::send: return "send";
    case WqeOpcode::send_imm: return "send_imm";
    case WqeOpcode::send_inv: return "send_inv";
    case WqeOpcode::read: return "read";
  }
  return "?";
}
const char* to_string(Doorbell d) {
  switch (d) {
    case Doorbell::once: return "once";
    case Doorbell::each: return "each";
  }
  return "?";
}

void fill_pattern(uint8_t* dst, size_t len, Pattern p, uint64_t seed, uint8_t value,
                  uint64_t offset_in_mr) {
  switch (p) {
    case Pattern::zero:
      std::memset(dst, 0, len);
      return;
    case Pattern::constant:
      std::memset(dst, value, len);
      return;
    case Pattern::incrementing:
      for (size_t i = 0; i < len; ++i) dst[i] = uint8_t((offset_in_mr + i) & 0xFF);
      return;
    case Pattern::random: {
      std::mt19937_64 gen(seed);
      gen.discard(offset_in_mr / 8);
      unsigned byte = unsigned(offset_in_mr % 8);
      size_t i = 0;
      while (i < len) {
        const uint64_t w = gen();
        for (; byte < 8 && i < len; ++byte) dst[i++] = uint8_t(w >> (8 * byte));
        byte = 0;
      }
      return;
    }
  }
}

namespace {
template <class T>
const SourceLoc& loc_of(const T& st) { return st.loc; }
template <class T>
const SourceLoc& loc_of(const std::shared_ptr<T>& st) { return st->loc; }
}  // namespace

const SourceLoc& step_loc(const Step& s) {
  return std::visit([](const auto& st) -> const SourceLoc& { return loc_of(st); }, s);
}

namespace {
struct KindName {
  const char* operator()(const InitStep&) const { return "init"; }
  const char* operator()(const RegisterMrStep&) const { return "register_mr"; }
  const char* operator()(const FillStep&) const { return "fill"; }
  const char* operator()(const ConnectStep&) const { return "connect"; }
  const char* operator()(const PostStep&) const { return "post"; }
  const char* operator()(const WaitCompletionsStep&) const { return "wait_completions"; }
  const char* operator()(const CheckMemoryStep&) const { return "check_memory"; }
  const char* operator()(const RegWriteStep&) const { return "reg_write"; }
  const char* operator()(const RegReadStep&) const { return "reg_read"; }
  const char* operator()(const RegExpectStep&) const { return "reg_expect"; }
  const char* operator()(const RegPollStep&) const { return "reg_poll"; }
  const char* operator()(const MemWriteStep&) const { return "mem_write"; }
  const char* operator()(const MemExpectStep&) const { return "mem_expect"; }
  const char* operator()(const DeregisterMrStep&) const { return "deregister_mr"; }
  const char* operator()(const ConnectRejectStep&) const { return "connect_reject"; }
  const char* operator()(const DisconnectStep&) const { return "disconnect"; }
  const char* operator()(const FaultStep&) const { return "fault"; }
  const char* operator()(const LinkStep&) const { return "link"; }
  const char* operator()(const ExpectFramesStep&) const { return "expect_frames"; }
  const char* operator()(const ExpectIdleStep&) const { return "expect_idle"; }
  const char* operator()(const WaitUntilStep&) const { return "wait_until"; }
  const char* operator()(const BarrierStep&) const { return "barrier"; }
  const char* operator()(const std::shared_ptr<RepeatStep>&) const { return "repeat"; }
  const char* operator()(const std::shared_ptr<ParallelStep>&) const { return "parallel"; }
  const char* operator()(const WaitStep&) const { return "wait"; }
};
}  // namespace

const char* step_kind(const Step& s) { return std::visit(KindName{}, s); }

const char* to_string(FaultAction a) {
  switch (a) {
    case FaultAction::drop: return "drop";
    case FaultAction::duplicate: return "duplicate";
    case FaultAction::reorder: return "reorder";
    case FaultAction::corrupt: return "corrupt";
    case FaultAction::delay: return "delay";
  }
  return "?";
}
const char* to_string(Datapath d) { return d == Datapath::rtl ? "rtl" : "model"; }
const char* to_string(RegLayout l) { return l == RegLayout::v31 ? "3.1" : "4.x"; }

const NodeConfig* Scenario::find_node(const std::string& n) const {
  for (const auto& node : nodes)
    if (node.name == n) return &node;
  return nullptr;
}

// ------------------------------------------------------------ parsing ------

namespace {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
// Caps on times, so that they fit the simulator's 1 ps time base with room.
constexpr uint64_t kMaxTimeUs = 1000000000;  // 1000 s
constexpr uint64_t kMaxDelayNs = 1000000000;  // 1 s
constexpr unsigned kMaxNodes = 8;
constexpr unsigned kMaxMrsPerNode = 256;  // PG332 3.1 MR table entries

// Edit distance counting insertions, deletions, substitutions and swaps of
// two adjacent characters (optimal string alignment), for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// " (did you mean 'x'?)" for a close candidate, else " (expected one of: ...)".
std::string suggest(const std::string& got, const std::vector<std::string>& known,
                    const char* list_intro = "expected one of") {
  const std::string* best = nullptr;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& k : known) {
    const size_t d = edit_distance(got, k);
    if (d < best_d) best_d = d, best = &k;
  }
  if (best) {
    // Close enough to be a typo, and not merely another short name.
    const size_t lo = std::min(got.size(), best->size()), hi = std::max(got.size(), best->size());
    if (best_d < lo && best_d <= (hi >= 6 ? 2u : 1u)) return " (did you mean '" + *best + "'?)";
  }
  if (known.empty()) return "";
  return std::string(" (") + list_intro + ": " + join(known) + ")";
}

bool valid_name(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

struct Ctx {
  std::string file;

  SourceLoc loc(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return SourceLoc{file, 0, 0};
    return SourceLoc{file, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& key, const std::string& msg) const {
    const SourceLoc l = loc(m);
    throw ScenarioError(file, l.line, l.column, key, msg);
  }
};

// A YAML value with its full key path and the positions to blame: the value
// itself (fail), or the key that introduced it (fail_key: for a key that is
// not allowed in this context). For list items both are the item.
struct Field {
  const Ctx* ctx = nullptr;
  YAML::Node node;
  std::string path;
  YAML::Mark mark;
  YAML::Mark key_mark;

  SourceLoc loc() const { return ctx->loc(mark); }
  [[noreturn]] void fail(const std::string& msg) const { ctx->fail(mark, path, msg); }
  [[noreturn]] void fail_key(const std::string& msg) const { ctx->fail(key_mark, path, msg); }
};

// `key_mark` is the key's position (or the item's, for list items). yaml-cpp
// places a null value's mark at the next token: blame the key instead.
Field make_field(const Ctx& ctx, const YAML::Node& n, std::string path, const YAML::Mark& key_mark) {
  YAML::Mark m = n.Mark();
  if (n.IsNull() || m.is_null()) m = key_mark;
  return Field{&ctx, n, std::move(path), m, key_mark};
}

std::string describe(const YAML::Node& n) {
  if (n.IsNull()) return "nothing (null)";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.Tag() == "!") return "the quoted string \"" + n.Scalar() + "\"";
  return "'" + n.Scalar() + "'";
}

// ---- typed value readers ---------------------------------------------------

// A plain scalar (not quoted, no explicit tag): the only form numbers and
// booleans may take.
bool is_plain_scalar(const YAML::Node& n) { return n.IsScalar() && n.Tag() == "?"; }

std::string read_string(const Field& f) {
  const std::string& tag = f.node.Tag();
  if (!f.node.IsScalar() || (tag != "?" && tag != "!" && tag != "tag:yaml.org,2002:str"))
    f.fail("expected a string, got " + describe(f.node));
  return f.node.Scalar();
}

uint64_t read_uint(const Field& f, uint64_t min, uint64_t max) {
  if (!is_plain_scalar(f.node)) f.fail("expected a non-negative integer, got " + describe(f.node));
  const std::string& s = f.node.Scalar();
  if (!s.empty() && s[0] == '-') {
    // A negative number or something else starting with '-'.
    const bool numeric = s.size() > 1 && std::all_of(s.begin() + 1, s.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
    });
    if (numeric) f.fail("must not be negative, got " + s);
    f.fail("expected a non-negative integer, got '" + s + "'");
  }
  int base = 10;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, first += 2;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(first, last, v, base);
  if (ec == std::errc::result_out_of_range)
    f.fail(fmt::format("{} is out of range [{}, {}]", s, min, max));
  if (ec != std::errc() || ptr != last || first == last)
    f.fail("expected a non-negative integer, got '" + s + "'");
  if (v < min || v > max) f.fail(fmt::format("{} is out of range [{}, {}]", s, min, max));
  return v;
}

// Doubles in (lo, hi] (lo exclusive).
double read_double(const Field& f, double lo, double hi) {
  if (!is_plain_scalar(f.node)) f.fail("expected a number, got " + describe(f.node));
  const std::string& s = f.node.Scalar();
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    f.fail("expected a number, got '" + s + "'");
  if (!(v > lo && v <= hi)) f.fail(fmt::format("{} is out of range ({}, {}]", s, lo, hi));
  return v;
}

bool read_bool(const Field& f) {
  if (is_plain_scalar(f.node)) {
    if (f.node.Scalar() == "true") return true;
    if (f.node.Scalar() == "false") return false;
  }
  f.fail("expected true or false, got " + describe(f.node));
}

std::string read_name(const Field& f, const char* what) {
  const std::string s = read_string(f);
  if (!valid_name(s))
    f.fail(fmt::format("invalid {} name '{}': use a letter then letters, digits or '_'", what, s));
  return s;
}

template <class E>
using EnumTable = std::vector<std::pair<std::string, E>>;

template <class E>
E read_enum(const Field& f, const EnumTable<E>& table) {
  std::vector<std::string> names;
  for (const auto& e : table) names.push_back(e.first);
  if (!f.node.IsScalar()) f.fail("expected one of " + join(names) + ", got " + describe(f.node));
  const std::string s = read_string(f);
  for (const auto& e : table)
    if (e.first == s) return e.second;
  f.fail("unknown value '" + s + "'" + suggest(s, names));
}

const EnumTable<Pattern> kPatterns = {{"random", Pattern::random},
                                      {"zero", Pattern::zero},
                                      {"incrementing", Pattern::incrementing},
                                      {"constant", Pattern::constant}};
const EnumTable<Access> kAccess = {{"r", Access::r}, {"w", Access::w}, {"rw", Access::rw}};
const EnumTable<WqeOpcode> kOpcodes = {{"write", WqeOpcode::write},     {"write_imm", WqeOpcode::write_imm},
                                       {"send", WqeOpcode::send},       {"send_imm", WqeOpcode::send_imm},
                                       {"send_inv", WqeOpcode::send_inv}, {"read", WqeOpcode::read}};
const EnumTable<Doorbell> kDoorbells = {{"once", Doorbell::once}, {"each", Doorbell::each}};

// The items of a list field, with paths "path[i]".
std::vector<Field> read_list(const Field& f) {
  if (!f.node.IsSequence()) f.fail("expected a list, got " + describe(f.node));
  std::vector<Field> out;
  size_t i = 0;
  for (const auto& item : f.node) {
    Field item_f = make_field(*f.ctx, item, fmt::format("{}[{}]", f.path, i), f.mark);
    item_f.key_mark = item_f.mark;
    out.push_back(std::move(item_f));
    ++i;
  }
  return out;
}

// ---- the field reader ------------------------------------------------------

// Reads one YAML map. The constructor gets the keys the map may hold and
// rejects duplicate and unknown keys at once (so a misspelt key is reported
// before the "missing required key" it causes); take()/req() consume keys;
// finish() rejects keys that are known but were not used in this context.
class MapReader {
 public:
  MapReader(const Field& self, std::vector<std::string> known)
      : self_(self), known_(std::move(known)) {
    if (!self.node.IsMap()) self.fail("expected a map, got " + describe(self.node));
    for (const auto& kv : self.node) {
      const YAML::Node k = kv.first;
      if (!k.IsScalar())
        self.ctx->fail(k.Mark(), self.path, "map keys must be plain strings, got " + describe(k));
      Entry e{k.Scalar(), k.Mark(), kv.second, false};
      const std::string path = key_path(e.key);
      for (const auto& prev : entries_)
        if (prev.key == e.key)
          self.ctx->fail(e.key_mark, path,
                         fmt::format("duplicate key (first given at line {})", prev.key_mark.line + 1));
      if (std::find(known_.begin(), known_.end(), e.key) == known_.end())
        self.ctx->fail(e.key_mark, path, "unknown key '" + e.key + "'" + suggest(e.key, known_, "known keys"));
      entries_.push_back(std::move(e));
    }
  }

  const Field& self() const { return self_; }
  std::string key_path(const std::string& key) const {
    return self_.path.empty() ? key : self_.path + "." + key;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }

  std::optional<Field> take(const std::string& key) {
    Entry* e = find(key);
    if (!e) return std::nullopt;
    e->used = true;
    return make_field(*self_.ctx, e->value, key_path(key), e->key_mark);
  }
  Field req(const std::string& key) {
    if (auto f = take(key)) return *f;
    self_.ctx->fail(self_.mark, key_path(key), "missing required key '" + key + "'");
  }

  // Typed shorthands.
  uint64_t u64(const std::string& key, uint64_t def, uint64_t min, uint64_t max) {
    auto f = take(key);
    return f ? read_uint(*f, min, max) : def;
  }
  std::optional<uint64_t> opt_u64(const std::string& key, uint64_t min, uint64_t max) {
    auto f = take(key);
    if (!f) return std::nullopt;
    return read_uint(*f, min, max);
  }
  uint64_t req_u64(const std::string& key, uint64_t min, uint64_t max) {
    return read_uint(req(key), min, max);
  }
  double dbl(const std::string& key, double def, double lo, double hi) {
    auto f = take(key);
    return f ? read_double(*f, lo, hi) : def;
  }
  std::string str(const std::string& key, const std::string& def) {
    auto f = take(key);
    return f ? read_string(*f) : def;
  }
  template <class E>
  E enm(const std::string& key, E def, const EnumTable<E>& table) {
    auto f = take(key);
    return f ? read_enum(*f, table) : def;
  }

  void finish() const {
    for (const auto& e : entries_)
      if (!e.used) self_.ctx->fail(e.key_mark, key_path(e.key), "key '" + e.key + "' is not used here");
  }

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
    bool used;
  };
  Entry* find(const std::string& key) {
    for (auto& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }
  const Entry* find(const std::string& key) const {
    for (const auto& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }

  Field self_;
  std::vector<std::string> known_;
  std::vector<Entry> entries_;
};

// ---- the scenario parser ---------------------------------------------------

class Parser {
 public:
  explicit Parser(std::string file) { ctx_.file = std::move(file); }

  Scenario parse(const std::string& text) {
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      ctx_.fail(e.mark, "", "YAML syntax error: " + e.msg);
    }
    if (docs.empty()) ctx_.fail(YAML::Mark::null_mark(), "", "empty file: expected a scenario map");
    if (docs.size() > 1) ctx_.fail(docs[1].Mark(), "", "a scenario file holds exactly one YAML document");
    YAML::Mark top;  // 1:1
    const Field root = make_field(ctx_, docs[0], "", top);
    sc_.file = ctx_.file;
    parse_top(root);
    return std::move(sc_);
  }

 private:
  struct MrSym {
    uint64_t length;
    int line;
  };
  struct MrRef {
    std::string name;
    uint64_t length;
  };
  struct ConnSym {
    std::string client, server, client_mr, server_mr;
    int line;
  };
  using StepParser = void (Parser::*)(const Field&, const SourceLoc&);

  // -- top level and topology --

  void parse_top(const Field& root) {
    MapReader r(root, {"scenario", "description", "seed", "limits", "clocks", "link", "nodes", "steps"});
    {
      const Field f = r.req("scenario");
      sc_.name = read_string(f);
      const bool ok = !sc_.name.empty() &&
                      std::isalnum(static_cast<unsigned char>(sc_.name[0])) &&
                      std::all_of(sc_.name.begin(), sc_.name.end(), [](char c) {
                        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                      });
      if (!ok) f.fail("invalid scenario name '" + sc_.name + "': use letters, digits, '_', '-', '.'");
    }
    sc_.description = r.str("description", "");
    sc_.seed = r.u64("seed", 1, 0, kMaxU64);
    if (auto f = r.take("limits")) parse_limits(*f);
    if (auto f = r.take("clocks")) parse_clocks(*f);
    if (auto f = r.take("link")) parse_link(*f);
    parse_nodes(r.req("nodes"));
    const Field steps = r.req("steps");
    r.finish();
    parse_steps(steps);
  }

  void parse_limits(const Field& f) {
    MapReader r(f, {"sim_time_us", "watchdog_us"});
    sc_.limits.sim_time_us = r.u64("sim_time_us", sc_.limits.sim_time_us, 1, kMaxTimeUs);
    sc_.limits.watchdog_us = r.u64("watchdog_us", sc_.limits.watchdog_us, 1, kMaxTimeUs);
    r.finish();
  }

  void parse_clocks(const Field& f) {
    MapReader r(f, {"core_mhz", "cmac_mhz"});
    sc_.clocks.core_mhz = r.dbl("core_mhz", sc_.clocks.core_mhz, 0.0, 1000.0);
    sc_.clocks.cmac_mhz = r.dbl("cmac_mhz", sc_.clocks.cmac_mhz, 0.0, 1000.0);
    r.finish();
  }

  void parse_link(const Field& f) {
    MapReader r(f, {"rate_gbps", "delay_ns"});
    if (auto rate = r.take("rate_gbps")) {
      const uint64_t v = read_uint(*rate, 1, kMaxU32);
      if (v != 100) rate->fail(fmt::format("only 100 Gb/s links are supported, got {}", v));
      sc_.link.rate_gbps = uint32_t(v);
    }
    sc_.link.delay_ns = r.u64("delay_ns", sc_.link.delay_ns, 0, kMaxDelayNs);
    r.finish();
  }

  void parse_nodes(const Field& f) {
    if (!f.node.IsMap()) f.fail("expected a map of node name -> node, got " + describe(f.node));
    if (f.node.size() == 0) f.fail("at least one node is required");
    // Node names are free, so list the present keys as the known ones.
    std::vector<std::string> names;
    for (const auto& kv : f.node)
      if (kv.first.IsScalar()) names.push_back(kv.first.Scalar());
    MapReader r(f, names);
    size_t i = 0;
    for (const auto& kv : f.node) {
      const std::string name = kv.first.Scalar();
      const Field key{&ctx_, kv.first, r.key_path(name), kv.first.Mark(), kv.first.Mark()};
      if (!valid_name(name))
        key.fail("invalid node name '" + name + "': use a letter then letters, digits or '_'");
      if (i >= kMaxNodes) key.fail(fmt::format("too many nodes: at most {}", kMaxNodes));
      parse_node(name, *r.take(name));
      ++i;
    }
    r.finish();
  }

  void parse_node(const std::string& name, const Field& f) {
    MapReader r(f, {"mac", "ip", "num_qp", "memory_mib"});
    NodeConfig n;
    n.name = name;
    n.loc = f.loc();
    {
      const Field m = r.req("mac");
      const std::string s = read_string(m);
      auto mac = roce::MacAddr::parse(s);
      if (!mac) m.fail("malformed MAC address '" + s + "' (expected six hex bytes like 02:00:00:00:00:0a)");
      for (const auto& o : sc_.nodes)
        if (o.mac == *mac) m.fail("MAC address " + mac->str() + " is already used by node " + o.name);
      n.mac = *mac;
    }
    {
      const Field ipf = r.req("ip");
      const std::string s = read_string(ipf);
      auto ip = roce::Ipv4Addr::parse(s);
      if (!ip) ipf.fail("malformed IPv4 address '" + s + "' (expected a.b.c.d)");
      for (const auto& o : sc_.nodes)
        if (o.ip == *ip) ipf.fail("IP address " + ip->str() + " is already used by node " + o.name);
      n.ip = *ip;
    }
    n.num_qp = uint32_t(r.u64("num_qp", n.num_qp, 8, 256));
    n.memory_mib = uint32_t(r.u64("memory_mib", n.memory_mib, 1, 4096));
    r.finish();
    node_index_[name] = sc_.nodes.size();
    sc_.nodes.push_back(std::move(n));
  }

  // -- steps --

  void parse_steps(const Field& f) {
    static const std::vector<std::pair<std::string, StepParser>> kinds = {
        {"init", &Parser::step_init},
        {"register_mr", &Parser::step_register_mr},
        {"fill", &Parser::step_fill},
        {"connect", &Parser::step_connect},
        {"post", &Parser::step_post},
        {"wait_completions", &Parser::step_wait_completions},
        {"check_memory", &Parser::step_check_memory},
        {"wait", &Parser::step_wait},
    };
    std::vector<std::string> kind_names;
    for (const auto& k : kinds) kind_names.push_back(k.first);

    const std::vector<Field> items = read_list(f);
    if (items.empty()) f.fail("at least one step is required");
    for (const Field& item : items) {
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
      for (const auto& k : kinds)
        if (k.first == kind) fn = k.second;
      if (!fn) ctx_.fail(key.Mark(), path, "unknown step kind '" + kind + "'" + suggest(kind, kind_names));
      (this->*fn)(make_field(ctx_, kv[0].second, path, key.Mark()), item.loc());
    }
  }

  // Resolve a node name; it must be declared and initialised.
  std::string ref_node(const Field& f, bool must_be_initialised = true) {
    const std::string n = read_name(f, "node");
    if (!node_index_.count(n)) {
      std::vector<std::string> names;
      for (const auto& node : sc_.nodes) names.push_back(node.name);
      f.fail("unknown node '" + n + "'" + suggest(n, names, "nodes are"));
    }
    if (must_be_initialised && !initialised_.count(n))
      f.fail("node '" + n + "' is used before an init step for it");
    return n;
  }

  MrRef ref_mr(const Field& f, const std::string& node) {
    const std::string m = read_name(f, "MR");
    auto& table = mrs_[node];
    auto it = table.find(m);
    if (it == table.end()) {
      std::vector<std::string> names;
      for (const auto& e : table) names.push_back(e.first);
      if (names.empty()) f.fail("unknown MR '" + m + "': node " + node + " has no MR registered yet");
      f.fail("unknown MR '" + m + "' on node " + node + suggest(m, names, "its MRs are"));
    }
    return MrRef{m, it->second.length};
  }

  const ConnSym& ref_conn(const Field& f) {
    const std::string c = read_name(f, "connection");
    auto it = conns_.find(c);
    if (it == conns_.end()) {
      std::vector<std::string> names;
      for (const auto& e : conns_) names.push_back(e.first);
      if (names.empty()) f.fail("unknown connection '" + c + "': no connect step before this one");
      f.fail("unknown connection '" + c + "'" + suggest(c, names, "connections are"));
    }
    return it->second;
  }

  // The node given in `f` must be one end of `conn`.
  std::string ref_conn_end(const Field& f, const std::string& conn_name, const ConnSym& c) {
    const std::string n = ref_node(f);
    if (n != c.client && n != c.server)
      f.fail(fmt::format("node {} is not an end of connection {} ({} <-> {})", n, conn_name, c.client,
                         c.server));
    return n;
  }

  // [offset, offset+length) inside an MR of `mr_len` bytes; length resolved
  // to the rest of the MR when absent.
  uint64_t resolve_range(MapReader& r, const Field& offset_f, uint64_t offset, uint64_t mr_len,
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

  void step_init(const Field& f, const SourceLoc& loc) {
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
      auto it = initialised_.find(n);
      if (it != initialised_.end())
        nf.fail(fmt::format("node {} is already initialised (at line {})", n, it->second));
      initialised_[n] = loc.line;
      s.nodes.push_back(n);
    }
    sc_.steps.push_back(std::move(s));
  }

  void step_register_mr(const Field& f, const SourceLoc& loc) {
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
    sc_.steps.push_back(std::move(s));
  }

  // pattern / seed / value of fill and of check_memory's pattern map.
  PatternSpec read_pattern(MapReader& r) {
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

  void step_fill(const Field& f, const SourceLoc& loc) {
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
    sc_.steps.push_back(std::move(s));
  }

  void step_connect(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"name", "client", "server", "client_mr", "server_mr", "pmtu", "sq_depth", "rq_depth",
                    "start_psn", "client_psn", "server_psn", "client_qp", "server_qp"});
    ConnectStep s;
    s.loc = loc;
    const Field nf = r.req("name");
    s.name = read_name(nf, "connection");
    if (auto it = conns_.find(s.name); it != conns_.end())
      nf.fail(fmt::format("connection '{}' already exists (at line {})", s.name, it->second.line));
    s.client = ref_node(r.req("client"));
    const Field sf = r.req("server");
    s.server = ref_node(sf);
    if (s.server == s.client) sf.fail("client and server must be different nodes");
    if (auto m = r.take("client_mr")) s.client_mr = ref_mr(*m, s.client).name;
    if (auto m = r.take("server_mr")) s.server_mr = ref_mr(*m, s.server).name;
    if (auto pf = r.take("pmtu")) {
      const uint64_t v = read_uint(*pf, 0, kMaxU32);
      if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096)
        pf->fail(fmt::format("pmtu must be one of 256, 512, 1024, 2048, 4096, got {}", v));
      s.pmtu = uint32_t(v);
    }
    s.sq_depth = uint32_t(r.u64("sq_depth", s.sq_depth, 16, 65535));
    s.rq_depth = uint32_t(r.u64("rq_depth", s.rq_depth, 16, 65535));
    std::optional<uint32_t> start;
    if (auto p = r.take("start_psn")) start = read_psn(*p);
    s.client_psn = start;
    s.server_psn = start;
    if (auto p = r.take("client_psn")) s.client_psn = read_psn(*p);
    if (auto p = r.take("server_psn")) s.server_psn = read_psn(*p);
    if (auto q = r.take("client_qp")) s.client_qp = read_qpn(*q, s.client, s.name);
    if (auto q = r.take("server_qp")) s.server_qp = read_qpn(*q, s.server, s.name);
    r.finish();
    for (const std::string* n : {&s.client, &s.server}) {
      const uint32_t num_qp = sc_.nodes[node_index_[*n]].num_qp;
      if (++conn_count_[*n] > num_qp - 1)
        nf.fail(fmt::format("node {} has no free QP for this connection (num_qp {} allows {} connections)",
                            *n, num_qp, num_qp - 1));
    }
    conns_[s.name] = ConnSym{s.client, s.server, s.client_mr, s.server_mr, loc.line};
    sc_.steps.push_back(std::move(s));
  }

  // 'auto' -> nullopt, or a 24-bit PSN.
  std::optional<uint32_t> read_psn(const Field& f) {
    if (is_plain_scalar(f.node) && f.node.Scalar() == "auto") return std::nullopt;
    if (is_plain_scalar(f.node) && !f.node.Scalar().empty() &&
        !std::isdigit(static_cast<unsigned char>(f.node.Scalar()[0])) && f.node.Scalar()[0] != '-')
      f.fail("expected 'auto' or a PSN 0..0xFFFFFF, got '" + f.node.Scalar() + "'");
    return uint32_t(read_uint(f, 0, 0xFFFFFF));
  }

  uint32_t read_qpn(const Field& f, const std::string& node, const std::string& conn) {
    const uint32_t num_qp = sc_.nodes[node_index_[node]].num_qp;
    const uint32_t q = uint32_t(read_uint(f, 2, num_qp));
    auto& used = qp_used_[node];
    if (auto it = used.find(q); it != used.end())
      f.fail(fmt::format("QP {} of node {} is already used by connection {}", q, node, it->second));
    used[q] = conn;
    return q;
  }

  void step_post(const Field& f, const SourceLoc& loc) {
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
    sc_.steps.push_back(std::move(s));
  }

  // peer_mr: the remote MR the connection gives this end ("" = none), named
  // by peer_mr_key in the connect step.
  WqeSpec read_wqe(const Field& f, const std::string& node, const std::string& peer_mr,
                   const char* peer_mr_key, const std::string& conn) {
    MapReader r(f, {"opcode", "wr_id", "local_mr", "local_offset", "length", "remote_offset", "immdt"});
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
    r.finish();
    return w;
  }

  void step_wait_completions(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"conn", "node", "count", "timeout_us", "expect"});
    WaitCompletionsStep s;
    s.loc = loc;
    const Field cf = r.req("conn");
    const ConnSym& c = ref_conn(cf);
    s.conn = read_string(cf);
    s.node = ref_conn_end(r.req("node"), s.conn, c);
    const auto count = r.opt_u64("count", 1, kMaxU32);
    s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
    if (auto ef = r.take("expect")) {
      const std::vector<Field> items = read_list(*ef);
      for (const Field& item : items) {
        MapReader er(item, {"wr_id", "opcode", "error"});
        CompletionExpect e;
        if (auto w = er.opt_u64("wr_id", 0, 65535)) e.wr_id = uint32_t(*w);
        if (auto o = er.take("opcode")) e.opcode = read_enum(*o, kOpcodes);
        if (auto b = er.take("error")) e.error = read_bool(*b);
        er.finish();
        s.expect.push_back(e);
      }
      if (count && s.expect.size() > *count)
        ef->fail(fmt::format("{} expected completions but count is {}", s.expect.size(), *count));
    }
    s.count = count ? uint32_t(*count) : uint32_t(std::max<size_t>(1, s.expect.size()));
    r.finish();
    sc_.steps.push_back(std::move(s));
  }

  void step_check_memory(const Field& f, const SourceLoc& loc) {
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
    sc_.steps.push_back(std::move(s));
  }

  void step_wait(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"us"});
    WaitStep s;
    s.loc = loc;
    s.us = r.req_u64("us", 1, kMaxTimeUs);
    r.finish();
    sc_.steps.push_back(std::move(s));
  }

  Ctx ctx_;
  Scenario sc_;
  std::map<std::string, size_t> node_index_;
  std::map<std::string, int> initialised_;  // node -> line of its init step
  std::map<std::string, std::map<std::string, MrSym>> mrs_;
  std::map<std::string, ConnSym> conns_;
  std::map<std::string, std::map<uint32_t, std::string>> qp_used_;  // node -> QPN -> connection
  std::map<std::string, uint32_t> conn_count_;
};

}  // namespace

Scenario parse_scenario(const std::string& yaml_text, const std::string& display_name) {
  return Parser(display_name).parse(yaml_text);
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, 0, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ScenarioError(path, 0, 0, "", "read error");
  return parse_scenario(ss.str(), path);
}

}  // namespace ernic
