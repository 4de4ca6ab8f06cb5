// model/trace: reading VCD files: the header and body parsers behind the
// merge (vcd_read.h) and the small reader for tests and tools
// (vcd_list_vars, vcd_has_var, vcd_raw_value_at, vcd_value_at; vcd.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "model/trace/vcd.h"
#include "model/trace/vcd_read.h"

namespace ernic::trace {

namespace detail {

std::runtime_error io_error(const std::string& what, const std::string& path) {
  const int e = errno;
  std::string msg = fmt::format("vcd: {} '{}'", what, path);
  if (e != 0) msg += fmt::format(": {}", std::strerror(e));
  return std::runtime_error(msg);
}

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

namespace {

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

}  // namespace

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

}  // namespace detail

using detail::BodyEvent;
using detail::BodyReader;
using detail::Header;
using detail::HdrVar;
using detail::join_dots;
using detail::parse_header;
using detail::Tokenizer;

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

// "b0101" / "1" / "x" -> integer; nullopt for x/z bits, reals, > 64 bits.
std::optional<uint64_t> vcd_token_to_u64(const std::string& s) {
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

std::optional<uint64_t> vcd_value_at(const std::string& vcd_path,
                                     const std::string& full_var_name, uint64_t time_ps) {
  const auto raw = vcd_raw_value_at(vcd_path, full_var_name, time_ps);
  if (!raw) return std::nullopt;
  return vcd_token_to_u64(*raw);
}

}  // namespace ernic::trace
