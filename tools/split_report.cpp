// tools/split_report: a split run's JSON report from its parts (split_report.h).
#include "tools/split_report.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "model/system/report.h"

namespace ernic {

using nlohmann::json;

namespace {

json read_part(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("split report: cannot read " + path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error("split report: " + path + ": " + e.what());
  }
}

// tools/split_run.h's order, worst first: 2, 1, 3, 0.
int rank(int code) { return code == 2 ? 3 : code == 1 ? 2 : code == 3 ? 1 : 0; }

// Every part's entries of a time-stamped list, in the one-process order
// (order_by_time: by time_ps, then text). What several processes saw (the
// time limit) is kept once: an entry is kept as many times as the part
// that has it most often has it (one node's two equal events at one
// instant, e.g. two debug_presets alike, stay two).
json by_time(const std::vector<json>& parts, const char* key) {
  std::vector<json> all;
  std::map<std::string, size_t> kept;  // an entry's text -> its copies in all
  for (const json& p : parts) {
    if (!p.contains(key)) continue;
    std::map<std::string, size_t> mine;  // ... in this part so far
    for (const json& e : p[key]) {
      const std::string text = e.dump();
      if (++mine[text] > kept[text]) {
        ++kept[text];
        all.push_back(e);
      }
    }
  }
  json list(all);
  order_by_time(list);
  return list;
}

// A model error's stop (limits.after_error_us) is the process's where the
// first error happened; another process stopped with it (its RunEnd's how)
// does not say so. One process's report names the earliest error; of equal
// ones, the lower part's. Null when no part stopped so.
const json* first_stop_after_error(const std::vector<json>& parts) {
  const json* first = nullptr;
  for (const json& p : parts)
    if (p.contains("stopped_after_error") &&
        (!first || p["stopped_after_error"].value("first_error_ps", uint64_t(0)) <
                       (*first).value("first_error_ps", uint64_t(0))))
      first = &p["stopped_after_error"];
  return first;
}

}  // namespace

void merge_split_reports(const std::vector<std::string>& paths, const std::string& out, const std::string& transport) {
  if (paths.empty()) throw std::runtime_error("split report: no parts");
  std::vector<json> parts;
  for (const auto& p : paths) parts.push_back(read_part(p));
  json r = parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    for (const char* k : {"steps", "sim_time_ps"})
      if (parts[i][k] != r[k])
        throw std::runtime_error(std::string("split report: ") + paths[i] + " and " + paths[0] + " disagree on `" + k +
                                 "`");
  int code = 0;
  double wall = 0;
  json procs = json::array();
  for (size_t i = 0; i < parts.size(); ++i) {
    const json& p = parts[i];
    for (const auto& [name, n] : p["nodes"].items()) r["nodes"][name] = n;
    for (const char* k : {"rtl_clocked_core_cycles", "rtl_clocked_cmac_cycles", "qp_setup_fsm_clocked_core_cycles"})
      if (p["idle_skip"].contains(k))
        for (const auto& [name, v] : p["idle_skip"][k].items()) r["idle_skip"][k][name] = v;
    for (const auto& [name, v] : p["protocol_monitors"].items()) r["protocol_monitors"][name] = v;
    if (p.contains("switch")) r["switch"] = p["switch"];  // a switch topology: the switch's process's
    if (i > 0) {
      json& sb = r["scoreboard"];
      for (const auto& [k, v] : p["scoreboard"].items()) {
        if (v.is_number_unsigned()) sb[k] = sb.value(k, uint64_t(0)) + v.get<uint64_t>();
        else if (v.is_array()) for (const json& e : v) sb[k].push_back(e);
        else if (v.is_string() && k == "summary") sb[k] = sb.value(k, "") + "; " + v.get<std::string>();
      }
    }
    if (rank(p.value("exit_code", 0)) > rank(code)) code = p.value("exit_code", 0);
    const double w = p.contains("wall") ? p["wall"].value("seconds", 0.0) : 0.0;
    wall = std::max(wall, w);
    json proc = p.value("split", json::object());
    proc["wall_seconds"] = w;
    procs.push_back(proc);
  }
  for (const char* k : {"failures", "model_errors", "events", "compliance"}) r[k] = by_time(parts, k);
  // The last frames of a direction are its sender's (tx tap).
  for (const json& p : parts)
    if (p.contains("last_frames") && p.contains("split"))
      for (const auto& [dir, l] : p["last_frames"].items())
        if (dir.rfind(p["split"].value("node", "") + "->", 0) == 0) r["last_frames"][dir] = l;
  json stalls = json::array();  // each node's QPs, in node order
  for (const json& p : parts)
    if (p.contains("stall_report"))
      for (const json& e : p["stall_report"]) stalls.push_back(e);
  if (!stalls.empty()) r["stall_report"] = stalls;
  uint64_t faults = 0;
  for (const json& p : parts) faults += p.value("faults_applied", uint64_t(0));
  r["faults_applied"] = faults;
  for (size_t i = 1; i < parts.size(); ++i) {
    for (const auto& [scope, v] : parts[i]["handshake_random"].items()) r["handshake_random"][scope] = v;
    // Assumptions: each part lists the extensions its node uses; one list,
    // every entry where the part that has it puts it.
    json& as = r["assumptions"];
    std::string prev;
    for (const json& e : parts[i]["assumptions"]) {
      const std::string id = e.value("id", "");
      auto has = [&](const std::string& x) {
        return std::find_if(as.begin(), as.end(), [&](const json& y) { return y.value("id", "") == x; });
      };
      if (has(id) == as.end()) {
        auto at = prev.empty() ? as.begin() : has(prev);
        as.insert(at == as.end() ? as.end() : at + (prev.empty() ? 0 : 1), e);
      }
      prev = id;
    }
  }
  r.erase("stopped_after_error");
  if (const json* s = first_stop_after_error(parts)) r["stopped_after_error"] = *s;
  r["exit_code"] = code;
  for (const json& p : parts)
    if (p.value("exit_code", 0) == code) r["result"] = p["result"];
  if (r.contains("last_frames") && !by_time(parts, "failures").size()) r.erase("last_frames");
  r["split"] = {{"processes", procs}, {"transport", transport + ", SimBricks Ethernet protocol"}};
  r["wall"] = {{"seconds", wall}};
  r.erase("reproduce");
  std::ofstream f(out);
  f << r.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  if (!f) throw std::runtime_error("split report: cannot write " + out);
}

}  // namespace ernic
