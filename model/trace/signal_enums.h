// model/trace: symbolic names for the values of traced signals (state
// encodings), for trigger expressions such as
//   rtl(A.qp_setup_fsm.state) == CMAC_INIT
//   rtl(A.qp2.req_state) == WAIT_ACK
// A block registers the names of its signal's values once (typically in
// its constructor); the trigger parser looks a symbol up by the full VCD
// name of the signal it is compared with.
//
// Pattern: dot-separated components matched against the END of a full
// signal name ("top.A.ernic.qp2.req_state"), component by component; a
// component may hold '*' wildcards ("qp*" matches "qp2"). The longest
// matching pattern wins. Registering the same pattern again replaces its
// names (registration is idempotent across systems built in one process).
// Header-only; one registry per process.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ernic::trace {

using EnumNames = std::vector<std::pair<std::string, uint64_t>>;

namespace detail {
inline std::map<std::string, EnumNames>& enum_registry() {
  static std::map<std::string, EnumNames> r;
  return r;
}
inline std::vector<std::string> split_dots_simple(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '.') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}
// '*' matches any run of characters.
inline bool glob_match(const char* p, const char* s) {
  if (*p == '\0') return *s == '\0';
  if (*p == '*') return glob_match(p + 1, s) || (*s != '\0' && glob_match(p, s + 1));
  return *s != '\0' && *p == *s && glob_match(p + 1, s + 1);
}
}  // namespace detail

inline void register_signal_enum(const std::string& pattern, EnumNames names) {
  detail::enum_registry()[pattern] = std::move(names);
}

// The names registered for the signal with this full name (nullptr: none).
inline const EnumNames* signal_enum(const std::string& full_name) {
  const auto comps = detail::split_dots_simple(full_name);
  const EnumNames* best = nullptr;
  size_t best_len = 0;
  for (const auto& [pat, names] : detail::enum_registry()) {
    const auto pc = detail::split_dots_simple(pat);
    if (pc.empty() || pc.size() > comps.size() || pc.size() <= best_len) continue;
    bool ok = true;
    for (size_t i = 0; i < pc.size() && ok; ++i)
      ok = detail::glob_match(pc[i].c_str(), comps[comps.size() - pc.size() + i].c_str());
    if (ok) {
      best = &names;
      best_len = pc.size();
    }
  }
  return best;
}

inline std::optional<uint64_t> signal_enum_value(const std::string& full_name, const std::string& symbol) {
  if (const EnumNames* n = signal_enum(full_name))
    for (const auto& [name, v] : *n)
      if (name == symbol) return v;
  return std::nullopt;
}

}  // namespace ernic::trace
