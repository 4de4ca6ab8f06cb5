// model/scenario: YAML access for the parser: the map reader (known,
// duplicate, unknown and unused keys), typed value readers with their
// "wrong type" and "out of range" errors, error positions, and the
// "did you mean" suggestions. See parse.h.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

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

}  // namespace

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

const std::string* close_match(const std::string& got, const std::vector<std::string>& known) {
  // A typo is at most 2 edits away (below), so the lengths differ by at most
  // 2; a long name is no typo of a known one. Both keep the quadratic edit
  // distance off a 1 MB name (28 s per MB before).
  if (got.size() > kMaxSuggestName) return nullptr;
  const std::string* best = nullptr;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& k : known) {
    if (k.size() > got.size() + 2 || got.size() > k.size() + 2) continue;
    const size_t d = edit_distance(got, k);
    if (d < best_d) best_d = d, best = &k;
  }
  if (!best) return nullptr;
  // Close enough to be a typo, and not merely another short name.
  const size_t lo = std::min(got.size(), best->size()), hi = std::max(got.size(), best->size());
  return best_d < lo && best_d <= (hi >= 6 ? 2u : 1u) ? best : nullptr;
}

std::string suggest(const std::string& got, const std::vector<std::string>& known,
                    const char* list_intro) {
  if (const std::string* best = close_match(got, known)) return " (did you mean '" + *best + "'?)";
  if (known.empty()) return "";
  return std::string(" (") + list_intro + ": " + join(known) + ")";
}

std::string shown(const std::string& s) {
  if (s.size() <= kMaxSuggestName) return s;
  return fmt::format("{}... ({} characters)", s.substr(0, kMaxSuggestName), s.size());
}

bool valid_name(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

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

const Field& later(const Field& a, const Field& b) {
  const auto pos = [](const Field& f) { return std::make_pair(f.key_mark.line, f.key_mark.column); };
  return pos(a) < pos(b) ? b : a;
}

std::vector<Field> read_list(const Field& f) {
  if (!f.node.IsSequence()) f.fail("expected a list, got " + describe(f.node));
  std::vector<Field> out;
  size_t i = 0;
  for (const auto& item : f.node) {
    f.ctx->count_node(item.Mark().is_null() ? f.mark : item.Mark(), f.path);
    Field item_f = make_field(*f.ctx, item, fmt::format("{}[{}]", f.path, i), f.mark);
    item_f.key_mark = item_f.mark;
    out.push_back(std::move(item_f));
    ++i;
  }
  return out;
}

// ---- the field reader ------------------------------------------------------

MapReader::MapReader(const Field& self, std::vector<std::string> known)
    : self_(self), known_(std::move(known)) {
  if (!self.node.IsMap()) self.fail("expected a map, got " + describe(self.node));
  for (const auto& kv : self.node) {
    const YAML::Node k = kv.first;
    if (!k.IsScalar())
      self.ctx->fail(k.Mark(), self.path, "map keys must be plain strings, got " + describe(k));
    self.ctx->count_node(k.Mark(), self.path);
    Entry e{k.Scalar(), k.Mark(), kv.second, false};
    const std::string path = key_path(e.key);
    for (const auto& prev : entries_)
      if (prev.key == e.key)
        self.ctx->fail(e.key_mark, path,
                       fmt::format("duplicate key (first given at line {})", prev.key_mark.line + 1));
    if (std::find(known_.begin(), known_.end(), e.key) == known_.end())
      self.ctx->fail(e.key_mark, path, "unknown key '" + shown(e.key) + "'" + suggest(e.key, known_, "known keys"));
    entries_.push_back(std::move(e));
  }
}

}  // namespace ernic::scenario_parse
