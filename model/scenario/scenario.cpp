// model/scenario: scenario file parser (see scenario.h and scenarios/README.md).
//
// Structure: every YAML map is read through MapReader, which is given the
// keys the map may hold, reports duplicate and unknown keys (suggesting the
// closest known one), hands out Fields (a node with its key path and a
// position) and, in finish(), reports any key the caller left unused. Typed
// value readers (Field -> uint64, double, name, enum, ...) give the
// "wrong type", "negative" and "out of range" errors. Step kinds are a table
// of name -> parse function; names (nodes, MRs, connections) are resolved in
// step order against a symbol table.
#include "model/scenario/scenario.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "model/regs/regs.h"
#include "model/roce/opcodes.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
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
  const char* operator()(const RecvStep&) const { return "recv"; }
  const char* operator()(const BypassSendStep&) const { return "bypass_send"; }
  const char* operator()(const ExpectBypassStep&) const { return "expect_bypass"; }
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
  const char* operator()(const RecoverStep&) const { return "recover"; }
  const char* operator()(const HwHandshakeStep&) const { return "hw_handshake"; }
  const char* operator()(const DebugPresetStep&) const { return "debug_preset"; }
  const char* operator()(const FaultStep&) const { return "fault"; }
  const char* operator()(const LinkStep&) const { return "link"; }
  const char* operator()(const ExpectFramesStep&) const { return "expect_frames"; }
  const char* operator()(const ExpectIdleStep&) const { return "expect_idle"; }
  const char* operator()(const WaitUntilStep&) const { return "wait_until"; }
  const char* operator()(const ExpectComplianceStep&) const { return "expect_compliance"; }
  const char* operator()(const BarrierStep&) const { return "barrier"; }
  const char* operator()(const std::shared_ptr<RepeatStep>&) const { return "repeat"; }
  const char* operator()(const std::shared_ptr<ParallelStep>&) const { return "parallel"; }
  const char* operator()(const WaitStep&) const { return "wait"; }
  const char* operator()(const QpSetupStep&) const { return "qp_setup"; }
  const char* operator()(const QpReleaseStep&) const { return "qp_release"; }
  const char* operator()(const QpAdoptStep&) const { return "qp_adopt"; }
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
    case FaultAction::ecn: return "ecn";
  }
  return "?";
}
const char* to_string(Datapath d) {
  switch (d) {
    case Datapath::rtl: return "rtl";
    case Datapath::model: return "model";
    case Datapath::user: return "user";
  }
  return "?";
}
const char* to_string(RegLayout l) { return l == RegLayout::v31 ? "3.1" : "4.x"; }

std::string Scenario::datapath_name() const {
  return datapath == Datapath::user ? "user:" + datapath_user : to_string(datapath);
}

bool set_datapath(Scenario& sc, const std::string& name) {
  if (name == "rtl" || name == "model") {
    sc.datapath = name == "rtl" ? Datapath::rtl : Datapath::model;
    sc.datapath_user.clear();
    return true;
  }
  const std::string prefix = "user:";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) return false;
  const std::string u = name.substr(prefix.size());
  if (!std::all_of(u.begin(), u.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
    return false;
  sc.datapath = Datapath::user;
  sc.datapath_user = u;
  return true;
}

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
constexpr uint32_t kMaxPsn = 0xFFFFFF;
constexpr uint32_t kMaxQpn = 0xFFFFFF;    // BTH DestQP is 24 bits
// corrupt byte offsets: below the CMAC's default maximum frame length
// (ctl_rx_max_packet_len = 9600).
constexpr uint32_t kMaxFrameBytes = 9600;

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

// The known name `got` is probably a typo of, or nullptr.
const std::string* close_match(const std::string& got, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& k : known) {
    const size_t d = edit_distance(got, k);
    if (d < best_d) best_d = d, best = &k;
  }
  if (!best) return nullptr;
  // Close enough to be a typo, and not merely another short name.
  const size_t lo = std::min(got.size(), best->size()), hi = std::max(got.size(), best->size());
  return best_d < lo && best_d <= (hi >= 6 ? 2u : 1u) ? best : nullptr;
}

// " (did you mean 'x'?)" for a close candidate, else " (expected one of: ...)".
std::string suggest(const std::string& got, const std::vector<std::string>& known,
                    const char* list_intro = "expected one of") {
  if (const std::string* best = close_match(got, known)) return " (did you mean '" + *best + "'?)";
  if (known.empty()) return "";
  return std::string(" (") + list_intro + ": " + join(known) + ")";
}

bool equal_ci(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
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
const EnumTable<std::string> kCorruptStreams = {
    {"tx", "tx"}, {"rx_desc", "rx_desc"}, {"rx_payload", "rx_payload"}, {"bypass", "bypass"}};
const EnumTable<RegLayout> kLayouts = {{"3.1", RegLayout::v31}, {"4.x", RegLayout::v4x}};
const EnumTable<ComplianceMode> kComplianceModes = {{"report", ComplianceMode::report}, {"fail", ComplianceMode::fail}};
const EnumTable<FaultAction> kFaultActions = {{"drop", FaultAction::drop},
                                              {"duplicate", FaultAction::duplicate},
                                              {"reorder", FaultAction::reorder},
                                              {"corrupt", FaultAction::corrupt},
                                              {"delay", FaultAction::delay},
                                              {"ecn", FaultAction::ecn}};
const EnumTable<Tap> kTaps = {{"tx", Tap::tx}, {"rx", Tap::rx}};
const EnumTable<bool> kLinkStates = {{"down", false}, {"up", true}};
// corrupt: the named fields a fault may flip a bit in.
const std::vector<std::string> kCorruptFields = {
    "bth.opcode", "bth.psn", "bth.dest_qp", "bth.flags", "aeth.syndrome", "eth.dst", "eth.src",  "ip.version",
    "ip.flags",   "ip.ttl",  "ip.checksum", "ip.src",    "ip.dst",        "udp.length", "icrc", "payload"};

// Of two given keys, the one written later in the file (to blame for a
// conflict).
const Field& later(const Field& a, const Field& b) {
  const auto pos = [](const Field& f) { return std::make_pair(f.key_mark.line, f.key_mark.column); };
  return pos(a) < pos(b) ? b : a;
}

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
    missing(key);
  }
  // "missing required key" at the map, with an optional reason.
  [[noreturn]] void missing(const std::string& key, const std::string& why = "") const {
    self_.ctx->fail(self_.mark, key_path(key),
                    "missing required key '" + key + "'" + (why.empty() ? "" : ": " + why));
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
    MapReader r(root, {"scenario", "description", "seed", "limits", "clocks", "link", "pcie", "datapath",
                       "layout", "compliance", "handshake_random", "nodes", "steps"});
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
    if (auto f = r.take("pcie")) parse_pcie(*f);
    sc_.datapath_loc = SourceLoc{ctx_.file, 0, 0};
    if (auto f = r.take("datapath")) {
      sc_.datapath_loc = f->loc();
      if (!f->node.IsScalar()) f->fail("expected rtl, model or user:<name>, got " + describe(f->node));
      const std::string s = read_string(*f);
      if (!set_datapath(sc_, s)) {
        if (s.compare(0, 5, "user:") == 0)
          f->fail("invalid datapath '" + s + "': user:<name> takes a name of letters, digits and '_'");
        f->fail("unknown value '" + s + "'" + suggest(s, {"rtl", "model", "user:<name>"}));
      }
    }
    sc_.layout = r.enm("layout", sc_.layout, kLayouts);
    sc_.compliance = r.enm("compliance", sc_.compliance, kComplianceModes);
    if (auto h = r.take("handshake_random")) sc_.handshake_random = parse_handshake_random(*h);
    parse_nodes(r.req("nodes"));
    const Field steps = r.req("steps");
    r.finish();
    parse_steps(steps, sc_.steps, Scope{});
  }

  // `handshake_random: {seed: S, ready_pct: R, valid_pct: V}` (each key
  // optional), `true` (the defaults) or `false` (off).
  HandshakeRandom parse_handshake_random(const Field& f) {
    HandshakeRandom h;
    h.seed = sc_.seed;
    if (is_plain_scalar(f.node)) {
      h.enabled = read_bool(f);
      return h;
    }
    if (!f.node.IsMap()) f.fail("expected a map {seed, ready_pct, valid_pct}, true or false, got " + describe(f.node));
    MapReader r(f, {"seed", "ready_pct", "valid_pct"});
    h.seed = r.u64("seed", h.seed, 0, kMaxU64);
    h.ready_pct = uint32_t(r.u64("ready_pct", h.ready_pct, 1, 100));
    h.valid_pct = uint32_t(r.u64("valid_pct", h.valid_pct, 1, 100));
    r.finish();
    return h;
  }

  void parse_limits(const Field& f) {
    MapReader r(f, {"sim_time_us", "watchdog_us"});
    sc_.limits.sim_time_us = r.u64("sim_time_us", sc_.limits.sim_time_us, 1, kMaxTimeUs);
    sc_.limits.watchdog_us = r.u64("watchdog_us", sc_.limits.watchdog_us, 1, kMaxTimeUs);
    r.finish();
  }

  void parse_clocks(const Field& f) {
    MapReader r(f, {"core_mhz", "cmac_mhz"});
    // (0.5, 1000]: periods from 1 ns to 2 us, whole picoseconds after rounding.
    sc_.clocks.core_mhz = r.dbl("core_mhz", sc_.clocks.core_mhz, 0.5, 1000.0);
    sc_.clocks.cmac_mhz = r.dbl("cmac_mhz", sc_.clocks.cmac_mhz, 0.5, 1000.0);
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

  void parse_pcie(const Field& f) {
    MapReader r(f, {"gen", "lanes", "mps", "mrrs", "read_latency_ns", "rcb", "mmio_write_latency_ns", "outstanding"});
    PcieConfig& p = sc_.pcie;
    if (auto g = r.take("gen")) {
      const uint64_t v = read_uint(*g, 0, kMaxU32);
      if (v != 3 && v != 4) g->fail(fmt::format("gen must be 3 or 4, got {}", v));
      p.gen = uint32_t(v);
    }
    if (auto l = r.take("lanes")) {
      const uint64_t v = read_uint(*l, 0, kMaxU32);
      if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
        l->fail(fmt::format("lanes must be one of 1, 2, 4, 8, 16, got {}", v));
      p.lanes = uint32_t(v);
    }
    p.mps = read_pow2(r, "mps", p.mps, 128, 1024);
    p.mrrs = read_pow2(r, "mrrs", p.mrrs, 128, 4096);
    p.read_latency_ns = uint32_t(r.u64("read_latency_ns", p.read_latency_ns, 0, kMaxDelayNs));
    p.rcb = read_pow2(r, "rcb", p.rcb, 64, 128);
    p.mmio_write_latency_ns = uint32_t(r.u64("mmio_write_latency_ns", p.mmio_write_latency_ns, 0, kMaxDelayNs));
    p.outstanding = uint32_t(r.u64("outstanding", p.outstanding, 1, 64));
    r.finish();
  }

  // A power of two in [lo, hi], or `def` when the key is absent.
  static uint32_t read_pow2(MapReader& r, const std::string& key, uint32_t def, uint32_t lo, uint32_t hi) {
    auto f = r.take(key);
    if (!f) return def;
    const uint64_t v = read_uint(*f, 0, kMaxU32);
    if (v < lo || v > hi || (v & (v - 1)) != 0)
      f->fail(fmt::format("{} must be a power of two in [{}, {}], got {}", key, lo, hi, v));
    return uint32_t(v);
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
    MapReader r(f, {"mac", "ip", "ipv6", "num_qp", "memory_mib", "ack", "mr_cache", "rx", "test_tx_underflow",
                    "test_datapath_corrupt", "qp_setup_fsm", "handshake_random"});
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
    const auto ip6f = r.take("ipv6");
    if (ip6f) {
      const std::string s = read_string(*ip6f);
      auto ip = roce::Ipv6Addr::parse(s);
      if (!ip) ip6f->fail("malformed IPv6 address '" + s + "' (expected RFC 4291 text, like fd00::a)");
      for (const auto& o : sc_.nodes)
        if (o.ip6 && *o.ip6 == *ip) ip6f->fail("IPv6 address " + ip->str() + " is already used by node " + o.name);
      n.ip6 = *ip;
    }
    if (auto ipf = ip6f ? r.take("ip") : std::optional<Field>(r.req("ip"))) {
      const std::string s = read_string(*ipf);
      auto ip = roce::Ipv4Addr::parse(s);
      if (!ip) ipf->fail("malformed IPv4 address '" + s + "' (expected a.b.c.d)");
      for (const auto& o : sc_.nodes)
        if (o.has_ip && o.ip == *ip) ipf->fail("IP address " + ip->str() + " is already used by node " + o.name);
      n.ip = *ip;
    } else {
      n.has_ip = false;
    }
    n.num_qp = uint32_t(r.u64("num_qp", n.num_qp, 8, 256));
    n.memory_mib = uint32_t(r.u64("memory_mib", n.memory_mib, 2, 4096));
    if (auto a = r.take("ack")) {
      MapReader ar(*a, {"mode", "coalesce_packets", "timeout_ns"});
      static const EnumTable<uint32_t> kAckModes = {{"request_or_timeout", 0}, {"timeout", 1}, {"request", 2}};
      n.ack_mode = ar.enm("mode", n.ack_mode, kAckModes);
      n.ack_coalesce_packets = uint32_t(ar.u64("coalesce_packets", n.ack_coalesce_packets, 0, 4096));
      n.ack_timeout_ns = ar.u64("timeout_ns", n.ack_timeout_ns, 0, 1000000000ull);
      if (n.ack_mode == 1 && n.ack_timeout_ns == 0 && n.ack_coalesce_packets == 0)
        a->fail("ack mode 'timeout' with timeout_ns 0 and no coalesce_packets would never acknowledge");
      ar.finish();
    }
    if (auto m = r.take("mr_cache")) {  // `table` | `cam` | { mode: table|cam, entries: N }
      static const EnumTable<bool> kMrCache = {{"table", false}, {"cam", true}};
      if (m->node.IsMap()) {
        MapReader mr(*m, {"mode", "entries"});
        n.mr_cache_cam = read_enum(mr.req("mode"), kMrCache);
        if (auto e = mr.take("entries")) {
          if (!n.mr_cache_cam) e->fail("entries is a parameter of mode 'cam'");
          n.mr_cache_entries = uint32_t(read_uint(*e, 1, 256));
        }
        mr.finish();
      } else {
        n.mr_cache_cam = read_enum(*m, kMrCache);
      }
    }
    if (auto x = r.take("rx")) {
      MapReader xr(*x, {"buffer_bytes", "handler_gbps"});
      n.rx_buffer_bytes = uint32_t(xr.u64("buffer_bytes", n.rx_buffer_bytes, 256, 1u << 30));
      n.rx_handler_gbps = xr.dbl("handler_gbps", n.rx_handler_gbps, 0.0, 1000.0);
      xr.finish();
    }
    if (auto u = r.take("test_tx_underflow")) {
      MapReader ur(*u, {"frame", "after_beat", "cycles"});
      NodeConfig::TxBubble b;
      b.frame = ur.u64("frame", b.frame, 0, 1ull << 40);
      b.after_beat = uint32_t(ur.u64("after_beat", b.after_beat, 0, 255));
      b.cycles = uint32_t(ur.u64("cycles", b.cycles, 1, 1000000));
      ur.finish();
      n.test_tx_underflow = b;
    }
    if (auto c = r.take("test_datapath_corrupt")) {
      MapReader cr(*c, {"stream", "frame", "offset", "xor"});
      NodeConfig::DatapathCorrupt k;
      k.stream = read_enum(cr.req("stream"), kCorruptStreams);
      k.frame = cr.u64("frame", k.frame, 0, 1ull << 40);
      k.offset = uint32_t(cr.u64("offset", k.offset, 0, k.stream == "rx_desc" ? 1023 : 65535));
      k.xor_mask = uint32_t(cr.u64("xor", k.xor_mask, 1, k.stream == "rx_desc" ? 1 : 255));
      cr.finish();
      n.test_datapath_corrupt = k;
    }
    if (auto q = r.take("qp_setup_fsm")) n.qp_setup_fsm = read_qp_setup_fsm(*q, n);
    if (auto h = r.take("handshake_random")) n.handshake_random = parse_handshake_random(*h);
    r.finish();
    node_index_[name] = sc_.nodes.size();
    sc_.nodes.push_back(std::move(n));
  }

  // -- steps --

  // Where the steps being parsed go, and what they may contain.
  struct Scope {
    int repeat_line = 0;        // > 0: inside a repeat (the innermost one's line)
    uint32_t repeat_count = 0;  //   and its count
    bool in_branch = false;     // inside a parallel branch (at any depth)
    // Directly in a parallel branch's steps: its barriers, in order, with
    // their values (for error positions). nullptr elsewhere.
    std::vector<Field>* barriers = nullptr;
  };

  template <class S>
  void emit(S&& s) { out_->push_back(Step(std::forward<S>(s))); }

  void parse_steps(const Field& f, std::vector<Step>& out, const Scope& scope) {
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
        {"recv", &Parser::step_recv},
        {"bypass_send", &Parser::step_bypass_send},
        {"expect_bypass", &Parser::step_expect_bypass},
        {"wait_until", &Parser::step_wait_until},
        {"expect_compliance", &Parser::step_expect_compliance},
        {"repeat", &Parser::step_repeat},
        {"parallel", &Parser::step_parallel},
        {"barrier", &Parser::step_barrier},
        {"qp_setup", &Parser::step_qp_setup},
        {"qp_release", &Parser::step_qp_release},
        {"qp_adopt", &Parser::step_qp_adopt},
    };
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
    };
    std::vector<std::string> kind_names;
    for (const auto& k : kinds) kind_names.push_back(k.first);

    std::vector<Step>* const saved_out = out_;
    const Scope saved_scope = scope_;
    out_ = &out;
    scope_ = scope;

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
      if (scope_.repeat_line > 0)
        for (const auto& o : kOnce)
          if (o.first == kind)
            ctx_.fail(key.Mark(), path,
                      fmt::format("{} is not allowed inside repeat (the repeat at line {} runs its steps {} "
                                  "times, and {}): put it before or after the repeat",
                                  kind, scope_.repeat_line, scope_.repeat_count, o.second));
      (this->*fn)(make_field(ctx_, kv[0].second, path, key.Mark()), item.loc());
    }
    out_ = saved_out;
    scope_ = saved_scope;
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
      if (auto d = deregistered_[node].find(m); d != deregistered_[node].end())
        f.fail(fmt::format("MR '{}' of node {} was deregistered at line {}", m, node, d->second));
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
      if (auto d = disconnected_.find(c); d != disconnected_.end())
        f.fail(fmt::format("connection '{}' was disconnected at line {}", c, d->second));
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
    emit(std::move(s));
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
    deregistered_[s.node].erase(s.name);
    emit(std::move(s));
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
    emit(std::move(s));
  }

  void step_connect(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"name", "client", "server", "client_mr", "server_mr", "pmtu", "sq_depth", "rq_depth",
                    "rq_element_bytes", "start_psn", "client_psn", "server_psn", "client_qp", "server_qp", "cm", "ip_version", "hw_handshake"});
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
    if (auto ef = r.take("rq_element_bytes")) {
      // QPCONFi[31:16]: the element size in 256-byte units, a power of two.
      const uint64_t v = read_uint(*ef, 256, 256ull << 15);
      if (v % 256 || ((v / 256) & (v / 256 - 1)))
        ef->fail(fmt::format("rq_element_bytes must be 256 times a power of two (256, 512, ..., 8 MiB), got {}", v));
      s.rq_elem_bytes = uint32_t(v);
    }
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
    for (const std::string* n : {&s.client, &s.server}) {
      const uint32_t num_qp = sc_.nodes[node_index_[*n]].num_qp;
      if (++conn_count_[*n] > num_qp - 1)
        nf.fail(fmt::format("node {} has no free QP for this connection (num_qp {} allows {} connections)",
                            *n, num_qp, num_qp - 1));
    }
    conns_[s.name] = ConnSym{s.client, s.server, s.client_mr, s.server_mr, loc.line};
    disconnected_.erase(s.name);
    emit(std::move(s));
  }

  // ip_version of a connection between two nodes: 4 or 6, which both must
  // have an address of; default 4 when both have `ip`, else 6.
  uint32_t read_ip_version(MapReader& r, const std::string& a, const std::string& b) {
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
    emit(std::move(s));
  }

  // peer_mr: the remote MR the connection gives this end ("" = none), named
  // by peer_mr_key in the connect step.
  WqeSpec read_wqe(const Field& f, const std::string& node, const std::string& peer_mr,
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
  void read_waiting(MapReader& r, Step& s, const char* what, ReadItem read_item) {
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

  void step_wait_completions(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"conn", "node", "count", "timeout_us", "expect"});
    WaitCompletionsStep s;
    s.loc = loc;
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

  void step_recv(const Field& f, const SourceLoc& loc) {
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
        m.node = ref_node(mr.req("node"));
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

  void step_bypass_send(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "to", "ethertype", "udp_dport", "length", "pattern", "seed", "value", "count"});
    BypassSendStep s;
    s.loc = loc;
    s.node = ref_node(r.req("node"));
    const Field tf = r.req("to");
    s.to = ref_node(tf);
    if (s.to == s.node) tf.fail("a node does not send to itself");
    const auto ef = r.take("ethertype");
    const auto uf = r.take("udp_dport");
    if (ef && uf) later(*ef, *uf).fail_key("give either ethertype or udp_dport, not both");
    if (!ef && !uf) r.self().fail("bypass_send needs one of 'ethertype' (a raw frame) or 'udp_dport' (IPv4/UDP)");
    if (ef) {
      s.ethertype = uint16_t(read_uint(*ef, 0x0600, 0xFFFF));
      if (*s.ethertype == 0x0800 || *s.ethertype == 0x86DD)
        ef->fail("for an IP frame use udp_dport; ethertype makes a raw frame of another protocol");
    }
    if (uf) {
      s.udp_dport = uint16_t(read_uint(*uf, 0, 0xFFFF));
      if (*s.udp_dport == 4791) uf->fail("UDP port 4791 is RoCEv2: such a frame goes to ERNIC, not to the bypass path");
      for (const std::string& nn : {s.node, s.to})
        if (!sc_.nodes[node_index_.at(nn)].has_ip)
          uf->fail_key("udp_dport makes an IPv4 datagram, and node " + nn + " has no IPv4 address (`ip`)");
    }
    const size_t hdr = s.ethertype ? 14 : 14 + 20 + 8;
    const auto lf = r.take("length");
    if (lf) s.length = uint32_t(read_uint(*lf, 0, 9000));
    if (hdr + s.length < 60)
      (lf ? *lf : r.self()).fail(fmt::format("the frame would have {} bytes; Ethernet needs at least 60 before the FCS"
                                             " (length >= {})", hdr + s.length, 60 - hdr));
    if (r.has("pattern")) {
      const PatternSpec p = read_pattern(r);
      s.pattern = p.pattern;
      s.seed = p.seed;
      s.value = p.value;
    }
    s.count = uint32_t(r.u64("count", 1, 1, 100000));
    r.finish();
    emit(std::move(s));
  }

  void step_expect_bypass(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "count", "timeout_us"});
    ExpectBypassStep s;
    s.loc = loc;
    s.node = ref_node(r.req("node"));
    s.count = uint32_t(r.u64("count", 1, 0, 100000));
    s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
    r.finish();
    emit(std::move(s));
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
    emit(std::move(s));
  }

  void step_wait(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"us"});
    WaitStep s;
    s.loc = loc;
    s.us = r.req_u64("us", 1, kMaxTimeUs);
    r.finish();
    emit(std::move(s));
  }

  // -- register level --

  struct RegTarget {
    RegRef ref;
    uint32_t width = 32;  // bits of the register, or of the field
    std::string what;     // for messages: "register XRNICCONF", "field QPCONFi.PMTU (3 bits)"
  };

  static uint32_t width_mask(uint32_t width) { return width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1; }

  // node / reg / qp / mr / field of a register reference, read from `r`. The
  // node need not be initialised: register steps may bring a node up.
  RegTarget read_reg_ref(MapReader& r) {
    RegTarget t;
    t.ref.node = ref_node(r.req("node"), false);
    const Field rf = r.req("reg");
    const std::string name = read_string(rf);
    const regs::RegInfo* info = regs::find_register(name);
    if (!info) {
      std::vector<std::string> names;
      for (const auto& ri : regs::all_registers()) names.push_back(ri.name);
      for (const auto& n : names)
        if (equal_ci(n, name))
          rf.fail("unknown register '" + name + "' (did you mean '" + n + "'? register names are case-sensitive)");
      if (const std::string* best = close_match(name, names))
        rf.fail("unknown register '" + name + "' (did you mean '" + *best + "'?)");
      rf.fail("unknown register '" + name + "' (register names as PG332 spells them: see model/regs/ernic_regs.def)");
    }
    t.ref.reg = name;
    auto qf = r.take("qp");
    auto mf = r.take("mr");
    switch (info->block) {
      case regs::Block::Qp: {
        if (mf) mf->fail_key(fmt::format("mr does not apply: {} is a per-QP register (give qp)", name));
        if (!qf) r.missing("qp", name + " is a per-QP register");
        const uint32_t num_qp = sc_.nodes[node_index_[t.ref.node]].num_qp;
        const uint32_t q = uint32_t(read_uint(*qf, 1, num_qp));
        if (q == 1 && !info->exists_on_qp1)
          qf->fail(fmt::format("{} does not exist for QP1 (the GSI QP has no such register in PG332)", name));
        t.ref.qp = q;
        break;
      }
      case regs::Block::Mr:
        if (qf) qf->fail_key(fmt::format("qp does not apply: {} is an MR-table register (give mr)", name));
        if (!mf) r.missing("mr", name + " is an MR-table register (give the entry, 0.." +
                                     std::to_string(kMaxMrsPerNode - 1) + ")");
        t.ref.mr = uint32_t(read_uint(*mf, 0, kMaxMrsPerNode - 1));
        break;
      case regs::Block::Global:
        if (qf) qf->fail_key(fmt::format("qp does not apply: {} is a global register", name));
        if (mf) mf->fail_key(fmt::format("mr does not apply: {} is a global register", name));
        break;
    }
    t.what = "register " + name + " (32 bits)";
    if (auto ff = r.take("field")) {
      const std::string fname = read_string(*ff);
      const regs::FieldInfo* fi = regs::find_field(name, fname);
      if (!fi) {
        std::vector<std::string> fields;
        for (const auto* x : regs::fields_of(name)) fields.push_back(x->name);
        if (fields.empty())
          ff->fail(fmt::format("register {} has no named fields: give the whole register (leave out field)", name));
        ff->fail(fmt::format("unknown field '{}' of {}", fname, name) + suggest(fname, fields, "its fields are"));
      }
      t.ref.field = fname;
      t.width = fi->width;
      t.what = fmt::format("field {}.{} ({} bit{})", name, fname, fi->width, fi->width == 1 ? "" : "s");
    }
    return t;
  }

  // A value that must fit the register or field of `t`.
  static uint32_t read_reg_value(const Field& f, const RegTarget& t) {
    const uint64_t v = read_uint(f, 0, kMaxU64);
    if (v > width_mask(t.width))
      f.fail(fmt::format("{} does not fit {}: at most {:#x}", f.node.Scalar(), t.what, width_mask(t.width)));
    return uint32_t(v);
  }

  // value (required) and mask (default: every bit of the register or field)
  // of reg_expect, reg_poll and wait_until; value must lie inside mask.
  static void read_value_mask(MapReader& r, const RegTarget& t, uint32_t& value, uint32_t& mask) {
    const Field vf = r.req("value");
    value = read_reg_value(vf, t);
    mask = width_mask(t.width);
    if (auto mf = r.take("mask")) mask = read_reg_value(*mf, t);
    if (value & ~mask)
      vf.fail(fmt::format("value {:#x} has bits outside mask {:#x}: the comparison could never hold", value, mask));
  }

  void step_reg_write(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "reg", "qp", "mr", "field", "value"});
    RegWriteStep s;
    s.loc = loc;
    const RegTarget t = read_reg_ref(r);
    s.ref = t.ref;
    s.value = read_reg_value(r.req("value"), t);
    r.finish();
    emit(std::move(s));
  }

  void step_debug_preset(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "reg", "qp", "value"});
    DebugPresetStep s;
    s.loc = loc;
    const Field rf = r.req("reg");
    const RegTarget t = read_reg_ref(r);
    if (t.ref.reg != "STATSSNi" && t.ref.reg != "STATMSNi")
      rf.fail(fmt::format("debug_preset sets STATSSNi or STATMSNi only, not {} (write other registers with reg_write)",
                          t.ref.reg));
    s.ref = t.ref;
    s.value = uint32_t(read_uint(r.req("value"), 0, 0xFFFFFF));
    r.finish();
    emit(std::move(s));
  }

  void step_reg_read(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "reg", "qp", "mr", "field"});
    RegReadStep s;
    s.loc = loc;
    s.ref = read_reg_ref(r).ref;
    r.finish();
    emit(std::move(s));
  }

  void step_reg_expect(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "reg", "qp", "mr", "field", "value", "mask", "not"});
    RegExpectStep s;
    s.loc = loc;
    const RegTarget t = read_reg_ref(r);
    s.ref = t.ref;
    read_value_mask(r, t, s.value, s.mask);
    if (auto n = r.take("not")) s.negate = read_bool(*n);
    r.finish();
    emit(std::move(s));
  }

  void step_reg_poll(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"node", "reg", "qp", "mr", "field", "value", "mask", "timeout_us", "interval_ns"});
    RegPollStep s;
    s.loc = loc;
    const RegTarget t = read_reg_ref(r);
    s.ref = t.ref;
    read_value_mask(r, t, s.value, s.mask);
    s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
    s.interval_ns = r.u64("interval_ns", s.interval_ns, 1, kMaxDelayNs);
    r.finish();
    emit(std::move(s));
  }

  // -- host memory --

  // node, addr and one of bytes / u32 / u64 (little-endian), inside the
  // node's memory.
  void read_mem_access(const Field& f, std::string& node, uint64_t& addr, std::vector<uint8_t>& bytes,
                       bool* stray = nullptr) {
    MapReader r(f, stray ? std::vector<std::string>{"node", "addr", "bytes", "u32", "u64", "stray"}
                         : std::vector<std::string>{"node", "addr", "bytes", "u32", "u64"});
    if (stray)
      if (auto x = r.take("stray")) *stray = read_bool(*x);
    node = ref_node(r.req("node"), false);
    const Field af = r.req("addr");
    addr = read_uint(af, 0, kMaxU64);
    static const std::pair<const char*, unsigned> kForms[] = {{"bytes", 1}, {"u32", 4}, {"u64", 8}};
    std::optional<Field> data;
    unsigned size = 0;
    for (const auto& form : kForms)
      if (auto x = r.take(form.first)) {
        if (data) later(*data, *x).fail_key("give exactly one of bytes, u32, u64");
        data = x;
        size = form.second;
      }
    if (!data) r.self().fail("needs the data: one of 'bytes', 'u32' or 'u64' (a list of values)");
    const std::vector<Field> items = read_list(*data);
    if (items.empty()) data->fail("at least one value is required");
    const uint64_t max = size == 8 ? kMaxU64 : (uint64_t(1) << (8 * size)) - 1;
    for (const Field& it : items) {
      const uint64_t v = read_uint(it, 0, max);
      for (unsigned b = 0; b < size; ++b) bytes.push_back(uint8_t(v >> (8 * b)));
    }
    r.finish();
    const uint32_t mib = sc_.nodes[node_index_[node]].memory_mib;
    const uint64_t mem = uint64_t(mib) << 20;
    if (addr >= mem || bytes.size() > mem - addr)
      af.fail(fmt::format("addr {:#x} + {} bytes is outside node {}'s memory ({:#x} bytes, memory_mib {})", addr,
                          bytes.size(), node, mem, mib));
  }

  void step_mem_write(const Field& f, const SourceLoc& loc) {
    MemWriteStep s;
    s.loc = loc;
    read_mem_access(f, s.node, s.addr, s.bytes, &s.stray);
    emit(std::move(s));
  }

  void step_mem_expect(const Field& f, const SourceLoc& loc) {
    MemExpectStep s;
    s.loc = loc;
    read_mem_access(f, s.node, s.addr, s.bytes);
    emit(std::move(s));
  }

  // -- MRs and connections --

  void step_deregister_mr(const Field& f, const SourceLoc& loc) {
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

  void step_connect_reject(const Field& f, const SourceLoc& loc) {
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

  void step_disconnect(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"conn", "node"});
    DisconnectStep s;
    s.loc = loc;
    const Field cf = r.req("conn");
    const ConnSym c = ref_conn(cf);  // a copy: the entry goes below
    s.conn = read_string(cf);
    s.node = ref_conn_end(r.req("node"), s.conn, c);
    r.finish();
    release_conn(c, s.conn, loc.line);  // both QPs are deleted
    emit(std::move(s));
  }

  // After disconnect or recover: the connection's name and its QPs are free again.
  void release_conn(const ConnSym& c, const std::string& name, int line) {
    conns_.erase(name);
    disconnected_[name] = line;
    for (const std::string* n : {&c.client, &c.server}) {
      --conn_count_[*n];
      auto& used = qp_used_[*n];
      for (auto it = used.begin(); it != used.end();) it = it->second == name ? used.erase(it) : std::next(it);
    }
  }

  void step_hw_handshake(const Field& f, const SourceLoc& loc) {
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

  void step_recover(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"conn", "code"});
    RecoverStep s;
    s.loc = loc;
    const Field cf = r.req("conn");
    const ConnSym c = ref_conn(cf);  // a copy: the entry goes below
    s.conn = read_string(cf);
    if (auto k = r.take("code")) s.code = uint32_t(read_uint(*k, 0, 0x1F));
    r.finish();
    release_conn(c, s.conn, loc.line);  // both QPs return to RESET
    emit(std::move(s));
  }

  // -- the QP-setup offload (node key qp_setup_fsm) --

  NodeConfig::QpSetupFsm read_qp_setup_fsm(const Field& f, const NodeConfig& n) {
    MapReader r(f, {"pool", "link_timeout_cycles", "slot_bytes", "sq_depth", "rq_depth", "rq_element_bytes", "pmtu"});
    NodeConfig::QpSetupFsm q;
    q.pool = uint32_t(r.u64("pool", q.pool, 1, 16));
    q.link_timeout_cycles = uint32_t(r.u64("link_timeout_cycles", q.link_timeout_cycles, 0, kMaxU32));
    q.sq_depth = uint32_t(r.u64("sq_depth", q.sq_depth, 16, 65535));
    q.rq_depth = uint32_t(r.u64("rq_depth", q.rq_depth, 16, 65535));
    if (auto ef = r.take("rq_element_bytes")) {
      const uint64_t v = read_uint(*ef, 256, 256ull << 15);
      if (v % 256 || ((v / 256) & (v / 256 - 1)))
        ef->fail(fmt::format("rq_element_bytes must be 256 times a power of two (256, 512, ..., 8 MiB), got {}", v));
      q.rq_elem_bytes = uint32_t(v);
    }
    if (auto pf = r.take("pmtu")) {
      const uint64_t v = read_uint(*pf, 0, kMaxU32);
      if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096)
        pf->fail(fmt::format("pmtu must be one of 256, 512, 1024, 2048, 4096, got {}", v));
      q.pmtu = uint32_t(v);
    }
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

  // Bytes one slot needs (SQ, CQ, doorbells, RQ; rtl/qp_setup/qp_setup_fsm.sv), rounded up to 4 KiB.
  static uint64_t fsm_slot_need(const NodeConfig::QpSetupFsm& q) {
    const uint64_t db = (uint64_t(q.sq_depth) * 68 + 63) / 64 * 64;
    const uint64_t rq = (db + 64 + 4095) / 4096 * 4096;
    return (rq + uint64_t(q.rq_depth) * q.rq_elem_bytes + 4095) / 4096 * 4096;
  }

  static const EnumTable<uint8_t>& fsm_states() {
    static const EnumTable<uint8_t> t = {
        {"IDLE", 0}, {"REG_CHECK", 1}, {"RES_ALLOC", 2}, {"CMAC_INIT", 3}, {"READY", 4}};
    return t;
  }

  // node (initialised, with qp_setup_fsm), expect_status / expect_state / timeout_us.
  template <class S>
  const NodeConfig& read_fsm_common(MapReader& r, S& s, uint8_t ok_state) {
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

  void step_qp_setup(const Field& f, const SourceLoc& loc) {
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
      auto ip = roce::Ipv4Addr::parse(is);
      if (!ip) ipf->fail("malformed IPv4 address '" + is + "' (expected a.b.c.d)");
      auto mac = roce::MacAddr::parse(ms);
      if (!mac) macf->fail("malformed MAC address '" + ms + "' (expected six hex bytes like 02:00:00:00:00:0a)");
      s.remote_ip = *ip;
      s.remote_mac = *mac;
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

  void step_qp_release(const Field& f, const SourceLoc& loc) {
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

  void step_qp_adopt(const Field& f, const SourceLoc& loc) {
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
    struct Side { QpAdoptStep::End* e; const std::optional<Field>* qf; const char* key; };
    Side sides[2] = {{&s.client, &cqf, "client_qp"}, {&s.server, &sqf, "server_qp"}};
    FsmQp* fsm[2] = {nullptr, nullptr};
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
        fsm[i] = &it->second;
        e.fsm = true;
      }
    }
    if (!fsm[0] && !fsm[1])
      r.self().fail("qp_adopt needs an end set up by qp_setup: name it with client_qp or server_qp");
    for (int i = 0; i < 2; ++i) {
      QpAdoptStep::End& e = *sides[i].e;
      QpAdoptStep::End& o = *sides[1 - i].e;
      const Field& at = *sides[i].qf ? **sides[i].qf : r.self();
      if (fsm[i]) {
        const QpSetupStep& st = fsm[i]->setup;
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
      const QpSetupStep& st = fsm[1 - i]->setup;
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
    // Both ends' view of each other must agree.
    for (int i = 0; i < 2; ++i) {
      if (!fsm[i]) continue;
      const QpAdoptStep::End& e = *sides[i].e;
      const QpAdoptStep::End& o = *sides[1 - i].e;
      const QpSetupStep& st = fsm[i]->setup;
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
      if (++conn_count_[e.node] > num_qp - 1)
        nf.fail(fmt::format("node {} has no free QP for this connection (num_qp {} allows {} connections)", e.node,
                            num_qp, num_qp - 1));
      if (fsm[i]) fsm[i]->adopted = s.name;
      qp_used_[e.node][e.qp] = s.name;
    }
    conns_[s.name] = ConnSym{s.client.node, s.server.node, s.client.mr, s.server.mr, loc.line};
    disconnected_.erase(s.name);
    emit(std::move(s));
  }

  // -- the wire: directions, opcodes, faults, link --

  // "X->Y" between two different declared nodes.
  Direction read_dir(const Field& f) {
    const std::string text = read_string(f);
    const size_t arrow = text.find("->");
    if (arrow == std::string::npos)
      f.fail("expected a direction 'X->Y' between two nodes, got '" + text + "'");
    Direction d{trim(text.substr(0, arrow)), trim(text.substr(arrow + 2))};
    for (const std::string* n : {&d.from, &d.to})
      if (!node_index_.count(*n)) {
        std::vector<std::string> names;
        for (const auto& node : sc_.nodes) names.push_back(node.name);
        f.fail("unknown node '" + *n + "' in direction '" + text + "'" + suggest(*n, names, "nodes are"));
      }
    if (d.from == d.to) f.fail("a direction needs two different nodes, got '" + text + "'");
    return d;
  }

  // Both directions of a two-node topology; `fail` reports otherwise.
  template <class Fail>
  std::vector<Direction> both_dirs(Fail&& fail) {
    if (sc_.nodes.size() != 2)
      fail(fmt::format("'both' means both directions of a two-node topology, and this one has {} node{}: "
                       "give 'X->Y'",
                       sc_.nodes.size(), sc_.nodes.size() == 1 ? "" : "s"));
    return {Direction{sc_.nodes[0].name, sc_.nodes[1].name}, Direction{sc_.nodes[1].name, sc_.nodes[0].name}};
  }

  // "X->Y" or "both".
  std::vector<Direction> read_dirs(const Field& f) {
    if (f.node.IsScalar() && f.node.Scalar() == "both")
      return both_dirs([&](const std::string& m) { f.fail(m); });
    return {read_dir(f)};
  }

  // One direction only (expect_frames, wait_until): "both" is an error.
  Direction read_one_dir(const Field& f, const char* why) {
    if (f.node.IsScalar() && f.node.Scalar() == "both") f.fail(std::string("give one direction 'X->Y': ") + why);
    return read_dir(f);
  }

  // A BTH opcode: a name as roce::opcode_name spells it, or a number.
  static uint8_t read_opcode(const Field& f) {
    if (!f.node.IsScalar()) f.fail("expected an opcode name or number, got " + describe(f.node));
    const std::string& s = f.node.Scalar();
    if (is_plain_scalar(f.node) && !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) {
      const uint64_t v = read_uint(f, 0, 255);
      if (!roce::opcode_info(uint8_t(v)))
        f.fail(fmt::format("{} ({:#04x}) is not an opcode the simulator knows (reserved or unsupported)", s, v));
      return uint8_t(v);
    }
    const std::string name = read_string(f);
    std::vector<std::string> names;
    for (unsigned c = 0; c < 256; ++c)
      if (const roce::OpcodeInfo* oi = roce::opcode_info(uint8_t(c))) {
        if (name == oi->name) return uint8_t(c);
        names.push_back(oi->name);
      }
    f.fail("unknown opcode '" + name + "'" + suggest(name, names, "opcodes are"));
  }

  // `opcode:` of match, frame patterns and wait_until: one opcode, a list of
  // them, or `any` (the empty list).
  static std::vector<uint8_t> read_opcodes(const Field& f) {
    if (!f.node.IsSequence()) {
      if (is_plain_scalar(f.node) && f.node.Scalar() == "any") return {};
      return {read_opcode(f)};
    }
    const std::vector<Field> items = read_list(f);
    if (items.empty()) f.fail("expected at least one opcode (or leave opcode out, or write any)");
    std::vector<uint8_t> out;
    for (const Field& it : items) {
      if (is_plain_scalar(it.node) && it.node.Scalar() == "any")
        it.fail("'any' matches every opcode and cannot be part of a list");
      const uint8_t op = read_opcode(it);
      if (std::find(out.begin(), out.end(), op) != out.end())
        it.fail(fmt::format("opcode {} is listed twice", roce::opcode_name(op)));
      out.push_back(op);
    }
    return out;
  }

  FrameMatch read_match(const Field& f) {
    MapReader r(f, {"opcode", "psn", "dest_qp", "nth", "probability"});
    FrameMatch m;
    if (auto o = r.take("opcode")) m.opcodes = read_opcodes(*o);
    if (auto p = r.opt_u64("psn", 0, kMaxPsn)) m.psn = uint32_t(*p);
    if (auto q = r.opt_u64("dest_qp", 0, kMaxQpn)) m.dest_qp = uint32_t(*q);
    if (auto n = r.opt_u64("nth", 1, kMaxU32)) m.nth = uint32_t(*n);
    if (auto p = r.take("probability")) m.probability = read_double(*p, 0.0, 1.0);
    r.finish();
    return m;
  }

  void step_fault(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"name", "dir", "match", "action", "count", "after", "delay_ns", "byte", "field", "bit", "value",
                    "repair"});
    FaultStep s;
    s.loc = loc;
    if (auto nf = r.take("name")) {
      s.name = read_string(*nf);
      if (s.name.empty()) nf->fail("the fault's name must not be empty");
    } else {
      s.name = fmt::format("fault@{}", loc.line);
    }
    s.dirs = read_dirs(r.req("dir"));
    if (auto m = r.take("match")) s.match = read_match(*m);
    s.action = read_enum(r.req("action"), kFaultActions);
    s.count = uint32_t(r.u64("count", s.count, 0, kMaxU32));
    // Keys that belong to one action only.
    const auto only = [&](const char* key, FaultAction a) {
      auto x = r.take(key);
      if (x && s.action != a)
        x->fail_key(fmt::format("{} applies only to action: {}, not {}", key, to_string(a), to_string(s.action)));
      return x;
    };
    if (auto x = only("after", FaultAction::reorder)) s.reorder_after = uint32_t(read_uint(*x, 1, kMaxU32));
    if (auto x = only("delay_ns", FaultAction::delay))
      s.delay_ns = read_uint(*x, 1, kMaxDelayNs);
    else if (s.action == FaultAction::delay)
      r.missing("delay_ns", "action delay needs the extra latency");
    const auto bf = only("byte", FaultAction::corrupt);
    const auto ff = only("field", FaultAction::corrupt);
    const auto bitf = only("bit", FaultAction::corrupt);
    const auto valf = only("value", FaultAction::corrupt);
    const auto repf = only("repair", FaultAction::corrupt);
    if (s.action == FaultAction::corrupt) {
      if (bitf && valf) later(*bitf, *valf).fail_key("give either bit (a flip) or value (the new byte), not both");
      if (valf) s.corrupt_value = uint8_t(read_uint(*valf, 0, 255));
      if (repf) s.repair = read_bool(*repf);
      if (bf && ff) later(*bf, *ff).fail_key("give either byte or field, not both");
      if (!bf && !ff)
        r.self().fail("action corrupt needs 'byte' (an offset in the frame) or 'field' (" + join(kCorruptFields) +
                      ")");
      if (bf) s.corrupt_byte = uint32_t(read_uint(*bf, 0, kMaxFrameBytes - 1));
      if (ff) {
        s.corrupt_field = read_string(*ff);
        if (std::find(kCorruptFields.begin(), kCorruptFields.end(), s.corrupt_field) == kCorruptFields.end())
          ff->fail("unknown field '" + s.corrupt_field + "'" + suggest(s.corrupt_field, kCorruptFields));
      }
      if (bitf) s.corrupt_bit = uint32_t(read_uint(*bitf, 0, 7));
    }
    r.finish();
    emit(std::move(s));
  }

  void step_link(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"dir", "state"});
    LinkStep s;
    s.loc = loc;
    s.dirs = read_dirs(r.req("dir"));
    s.up = read_enum(r.req("state"), kLinkStates);
    r.finish();
    emit(std::move(s));
  }

  // -- expectations on the wire and time --

  // `repeat:` of a frame pattern.
  static void read_frame_repeat(const Field& f, FramePattern& p) {
    constexpr uint64_t kMaxRep = FramePattern::kUnbounded - 1;
    if (f.node.IsSequence()) {
      const std::vector<Field> items = read_list(f);
      if (items.size() != 2) f.fail(fmt::format("expected [min, max], got a list of {}", items.size()));
      const uint64_t lo = read_uint(items[0], 0, kMaxRep);
      const uint64_t hi = read_uint(items[1], 1, kMaxRep);
      if (hi < lo) items[1].fail(fmt::format("max {} is less than min {}", hi, lo));
      p.min = uint32_t(lo);
      p.max = uint32_t(hi);
      return;
    }
    if (f.node.IsScalar() && (f.node.Tag() == "!" || is_plain_scalar(f.node))) {
      const std::string& s = f.node.Scalar();
      if (s == "*" || s == "+") {
        p.min = s == "*" ? 0 : 1;
        p.max = FramePattern::kUnbounded;
        return;
      }
      if (is_plain_scalar(f.node) && !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) {
        p.min = p.max = uint32_t(read_uint(f, 1, kMaxRep));
        return;
      }
    }
    f.fail("expected \"*\" (any number), \"+\" (one or more), a count, or [min, max], got " + describe(f.node));
  }

  static FramePattern read_frame_pattern(const Field& f, bool first) {
    MapReader r(f, {"opcode", "psn", "syndrome", "msn", "dest_qp", "repeat"});
    FramePattern p;
    if (auto o = r.take("opcode")) p.opcodes = read_opcodes(*o);
    if (auto pf = r.take("psn")) {
      const std::string& v = pf->node.IsScalar() ? pf->node.Scalar() : std::string();
      if (is_plain_scalar(pf->node) && v == "next") {
        if (first) pf->fail("psn: next needs a frame before it, and this is the first frame of the list");
        p.psn_next = true;
      } else {
        if (is_plain_scalar(pf->node) && !v.empty() && !std::isdigit(static_cast<unsigned char>(v[0])) &&
            v[0] != '-')
          pf->fail("expected 'next' or a PSN 0..0xFFFFFF, got '" + v + "'");
        p.psn = uint32_t(read_uint(*pf, 0, kMaxPsn));
      }
    }
    if (auto sf = r.take("syndrome")) {
      p.syndrome = uint8_t(read_uint(*sf, 0, 255));
      for (const uint8_t op : p.opcodes)
        if (!(roce::opcode_info(op)->ext & roce::kExtAeth))
          sf->fail_key(fmt::format("syndrome is the AETH's, and {} carries no AETH", roce::opcode_name(op)));
    }
    if (auto mf = r.take("msn")) {
      p.msn = uint32_t(read_uint(*mf, 0, 0xFFFFFF));
      for (const uint8_t op : p.opcodes)
        if (!(roce::opcode_info(op)->ext & roce::kExtAeth))
          mf->fail_key(fmt::format("msn is the AETH's, and {} carries no AETH", roce::opcode_name(op)));
    }
    if (auto q = r.opt_u64("dest_qp", 0, kMaxQpn)) p.dest_qp = uint32_t(*q);
    if (auto rf = r.take("repeat")) read_frame_repeat(*rf, p);
    r.finish();
    return p;
  }

  void step_expect_frames(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"dir", "tap", "frames"});
    ExpectFramesStep s;
    s.loc = loc;
    s.dir = read_one_dir(r.req("dir"), "expect_frames checks the frames of one direction");
    s.tap = r.enm("tap", s.tap, kTaps);
    const std::vector<Field> items = read_list(r.req("frames"));
    for (size_t i = 0; i < items.size(); ++i) s.frames.push_back(read_frame_pattern(items[i], i == 0));
    r.finish();
    emit(std::move(s));
  }

  void step_expect_idle(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"us", "dir"});
    ExpectIdleStep s;
    s.loc = loc;
    s.us = r.req_u64("us", 1, kMaxTimeUs);
    if (auto d = r.take("dir"))
      s.dirs = read_dirs(*d);
    else
      s.dirs = both_dirs([&](const std::string& m) { r.missing("dir", "the default " + m); });
    r.finish();
    emit(std::move(s));
  }

  void step_expect_compliance(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"rule", "count"});
    ExpectComplianceStep s;
    s.loc = loc;
    const Field rf = r.req("rule");
    s.rule = read_string(rf);
    static const char* kRules[] = {"va_align", "len_64", "read_small", "send_zero", "msg_8m"};
    if (std::find(std::begin(kRules), std::end(kRules), s.rule) == std::end(kRules))
      rf.fail("unknown compliance rule '" + s.rule + "' (rules: va_align, len_64, read_small, send_zero, msg_8m)");
    s.count = r.u64("count", 0, 0, kMaxU64);
    r.finish();
    emit(std::move(s));
  }

  void step_wait_until(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"timeout_us", "frames", "reg", "value", "mask"});
    WaitUntilStep s;
    s.loc = loc;
    s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
    const auto ff = r.take("frames");
    const auto rf = r.take("reg");
    if (ff && rf) later(*ff, *rf).fail_key("give either frames or reg, not both");
    if (!ff && !rf) r.self().fail("wait_until needs one of 'frames' or 'reg'");
    if (ff) {
      for (const char* k : {"value", "mask"})
        if (auto x = r.take(k)) x->fail_key(std::string(k) + " applies only with reg, not with frames");
      MapReader fr(*ff, {"dir", "count", "opcode"});
      s.frames_dir = read_one_dir(fr.req("dir"), "wait_until counts the frames of one direction");
      s.frames_count = uint32_t(fr.u64("count", s.frames_count, 1, kMaxU32));
      if (auto o = fr.take("opcode")) s.frames_opcodes = read_opcodes(*o);
      fr.finish();
    } else {
      MapReader rr(*rf, {"node", "reg", "qp", "mr", "field"});
      const RegTarget t = read_reg_ref(rr);
      rr.finish();
      s.reg = t.ref;
      read_value_mask(r, t, s.value, s.mask);
    }
    r.finish();
    emit(std::move(s));
  }

  // -- control: repeat, parallel, barrier --

  void step_repeat(const Field& f, const SourceLoc& loc) {
    MapReader r(f, {"count", "steps"});
    auto s = std::make_shared<RepeatStep>();
    s->loc = loc;
    s->count = uint32_t(r.req_u64("count", 1, kMaxU32));
    const Field sf = r.req("steps");
    r.finish();
    Scope inner = scope_;
    inner.repeat_line = loc.line;
    inner.repeat_count = s->count;
    inner.barriers = nullptr;
    parse_steps(sf, s->steps, inner);
    emit(std::move(s));
  }

  void step_parallel(const Field& f, const SourceLoc& loc) {
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

  void step_barrier(const Field& f, const SourceLoc& loc) {
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

  Ctx ctx_;
  Scenario sc_;
  std::vector<Step>* out_ = nullptr;  // where emit() puts steps
  Scope scope_;
  std::map<std::string, size_t> node_index_;
  std::map<std::string, int> initialised_;  // node -> line of its init step
  std::map<std::string, std::map<std::string, MrSym>> mrs_;
  std::map<std::string, ConnSym> conns_;
  std::map<std::string, std::map<uint32_t, std::string>> qp_used_;  // node -> QPN -> connection
  std::map<std::string, uint32_t> conn_count_;
  std::map<std::string, std::map<std::string, int>> deregistered_;  // node -> MR -> line of deregister_mr
  std::map<std::string, int> disconnected_;                         // connection -> line of disconnect
  // QPs a qp_setup step set up (expecting success) and not released since.
  struct FsmQp {
    QpSetupStep setup;
    std::string adopted;           // the qp_adopt connection that took it ("" = none)
  };
  std::map<std::string, std::map<uint32_t, FsmQp>> fsm_qps_;     // node -> QPN -> its setup
};

}  // namespace

Scenario parse_scenario(const std::string& yaml_text, const std::string& display_name) {
  return Parser(display_name).parse(yaml_text);
}

Scenario load_scenario(const std::string& path) {
  // A scenario is a regular file of sensible size (not a device, a FIFO or
  // a directory): /dev/zero would otherwise be read forever.
  constexpr uintmax_t kMaxBytes = 16u << 20;
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw ScenarioError(path, 0, 0, "", "not a regular file");
  if (!ec && std::filesystem::is_regular_file(st) && std::filesystem::file_size(path, ec) > kMaxBytes)
    throw ScenarioError(path, 0, 0, "", "larger than 16 MiB: not a scenario file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, 0, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ScenarioError(path, 0, 0, "", "read error");
  return parse_scenario(ss.str(), path);
}

}  // namespace ernic
