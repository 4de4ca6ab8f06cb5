#include "model/trace/gtkw.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

namespace ernic::trace {

namespace {
bool is_qp_scope(const std::string& group) {
  const size_t dot = group.rfind('.');
  const std::string last = dot == std::string::npos ? group : group.substr(dot + 1);
  if (last.size() < 3 || last.compare(0, 2, "qp") != 0) return false;
  return last.find_first_not_of("0123456789", 2) == std::string::npos;
}
}  // namespace

std::string gtkw_text(const std::vector<MergedVar>& vars, const GtkwInfo& info) {
  // Groups: scope (without the leading "top.") -> signals, in first-seen order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, unsigned>>> groups;
  for (const auto& v : vars)
    for (const auto& n : v.names) {
      const size_t dot = n.full.rfind('.');
      std::string scope = dot == std::string::npos ? std::string("top") : n.full.substr(0, dot);
      if (scope.compare(0, 4, "top.") == 0) scope = scope.substr(4);
      auto [it, fresh] = groups.try_emplace(scope);
      if (fresh) order.push_back(scope);
      it->second.emplace_back(n.full + n.range, v.width);
    }
  const std::string vcd_name = info.vcd_path;
  std::filesystem::path fst = std::filesystem::path(vcd_name).replace_extension(".fst");
  std::string o;
  o += "[*]\n";
  o += "[*] GTKWave save file written by ernic-sim (signals grouped by block)\n";
  o += fmt::format("[*] FST: vcd2fst {} {} ; gtkwave {} {}.gtkw\n", vcd_name, fst.string(), fst.string(), vcd_name);
  for (const auto& n : info.notes) o += "[*] " + n + "\n";
  o += "[*]\n";
  o += fmt::format("[dumpfile] \"{}\"\n", vcd_name);
  o += fmt::format("[savefile] \"{}.gtkw\"\n", vcd_name);
  o += fmt::format("[timestart] {}\n", info.timestart_ps);
  o += "[size] 1600 1000\n";
  o += "[pos] -1 -1\n";
  // Zoom, primary marker (the first hit, -1: none), 26 named markers unset.
  o += fmt::format("*-20.000000 {}", info.hits_ps.empty() ? std::string("-1") : std::to_string(info.hits_ps.front()));
  for (int i = 0; i < 26; ++i) o += " -1";
  o += "\n";
  o += "[treeopen] top.\n";
  o += "[sst_width] 300\n";
  o += "[signals_width] 360\n";
  o += "[sst_expanded] 1\n";
  o += "[sst_vpaned_height] 300\n";
  for (const auto& g : order) {
    o += is_qp_scope(g) ? "@c00200\n" : "@800200\n";
    o += "-" + g + "\n";
    unsigned last_flags = 0;
    for (const auto& [name, width] : groups[g]) {
      const unsigned flags = width == 1 ? 0x28 : 0x22;
      if (flags != last_flags) o += fmt::format("@{:x}\n", flags);
      last_flags = flags;
      o += name + "\n";
    }
    o += "@1000200\n";
    o += "-" + g + "\n";
  }
  return o;
}

void write_gtkw(const std::string& path, const std::vector<MergedVar>& vars, const GtkwInfo& info) {
  const std::string text = gtkw_text(vars, info);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error(fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
  f << text;
  f.flush();
  if (!f) throw std::runtime_error(fmt::format("write error on '{}'", path));
}

}  // namespace ernic::trace
