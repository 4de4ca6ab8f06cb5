// tools/failure_report: see failure_report.h.
#include "tools/failure_report.h"

#include <fmt/format.h>

namespace ernic {

std::string shell_quote_arg(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                        std::string::npos)
    return s;
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

std::string failure_report(const nlohmann::json& rep, const std::string& scenario_path, const FailureFiles& files,
                           const std::vector<std::string>& argv, const std::string& self_exe, const std::string& cwd,
                           bool details) {
  std::string o = fmt::format("ernic-sim: {}: {}\n", scenario_path, rep.value("result", std::string("fail")));
  if (details) {  // the summary was not printed: say what failed, where and when, and what the wire carried last
    for (const auto& f : rep["failures"])
      o += fmt::format("  FAILED at {:.6f} us (core cycle {}){}{}: {}\n", double(f["time_ps"].get<uint64_t>()) / 1e6,
                       f["core_cycle"].get<uint64_t>(), f["step"].get<std::string>().empty() ? "" : ", ",
                       f["step"].get<std::string>(), f["what"].get<std::string>());
    // A split run's node process stopped by another process's failure (model/system/split.cpp).
    if (rep.contains("split") && !rep["split"].value("stopped_by", std::string()).empty())
      o += "  STOPPED by " + rep["split"]["stopped_by"].get<std::string>() + "\n";
    for (const auto& e : rep["model_errors"])
      o += fmt::format("  MODEL ERROR {} at {:.3f} us: {}\n", e["where"].get<std::string>(),
                       double(e["time_ps"].get<uint64_t>()) / 1e6, e["what"].get<std::string>());
    if (rep.contains("last_frames"))
      for (const auto& [dir, l] : rep["last_frames"].items()) {
        o += fmt::format("  last frames {}:{}\n", dir, l.empty() ? " none" : "");
        for (const auto& x : l) o += "    " + x.get<std::string>() + "\n";
      }
    if (rep.contains("stall_report"))
      for (const auto& s : rep["stall_report"]) o += "  stalled " + s.get<std::string>() + "\n";
  }
  if (!files.pcap.empty()) o += fmt::format("  pcap: {} (+ per-tap files beside it)\n", files.pcap);
  if (!files.vcd.empty()) o += fmt::format("  vcd:  {} (GTKWave: gtkwave {}.gtkw)\n", files.vcd, files.vcd);
  if (!files.json.empty()) o += fmt::format("  json: {}\n", files.json);
  if (!files.log.empty()) o += fmt::format("  log:  {} (timeline: ernic-sim log {})\n", files.log, files.log);
  if (files.pcap.empty() && files.vcd.empty() && files.json.empty() && files.log.empty())
    o += "  files: none (rerun with --pcap, --vcd, --json or --log to keep them)\n";
  if (rep.contains("reproduce") && rep["reproduce"].contains("seed"))
    o += fmt::format("  seed: {} (the scenario's `seed`; the same file and seed rerun the same simulation)\n",
                     rep["reproduce"]["seed"].get<uint64_t>());
  std::string cmd = cwd.empty() ? "" : "cd " + shell_quote_arg(cwd) + " && ";
  for (size_t i = 0; i < argv.size(); ++i)
    cmd += (i ? " " : "") + shell_quote_arg(i == 0 && !self_exe.empty() ? self_exe : argv[i]);
  o += "  repro: " + cmd + "\n";
  return o;
}

}  // namespace ernic
