// tools: the checks `ernic-sim run` makes before it builds anything
// (run_checks.h).
#include "tools/run_checks.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "model/bridge/channel.h"
#include "model/datapath/sc/datapath.h"
#include "model/system/system.h"
#include "tools/same_file.h"

namespace ernic {

bool check_scenario_for_run(Scenario& sc, const RunOptions& opt, const std::string& datapath) {
  // --datapath overrides the scenario's `datapath` key (checked by the option's validator).
  if (!datapath.empty()) {
    set_datapath(sc, datapath);
    sc.datapath_loc = SourceLoc{};
  }
  if (!datapath_registered(sc.datapath_name())) {
    if (sc.datapath_loc.file.empty())
      std::fprintf(stderr, "ernic-sim: --datapath %s: %s\n", datapath.c_str(),
                   unknown_datapath_message(sc.datapath_name()).c_str());
    else
      std::fprintf(stderr, "ernic-sim: %s\n",
                   ScenarioError(sc.datapath_loc.file, sc.datapath_loc.line, sc.datapath_loc.column, "datapath",
                                 unknown_datapath_message(sc.datapath_name()))
                       .what());
    return false;
  }
  if (!opt.test_plant_bug.empty()) {  // test only: a planted bug in the model (tools/random.h)
    std::fprintf(stderr, "ernic-sim: test only: the model carries the planted bug '%s'\n", opt.test_plant_bug.c_str());
    for (auto& n : sc.nodes) {
      n.test_bug_ack_coalescing = opt.test_plant_bug == "ack_coalescing";
      n.test_bug_cq_entry_race = opt.test_plant_bug == "cq_entry_race";
    }
  }
  // Does a program step (at any depth) name this node?
  std::function<bool(const std::vector<Step>&, const std::string&)> has_program_step =
      [&](const std::vector<Step>& steps, const std::string& node) {
        for (const Step& st : steps) {
          if (const auto* p = std::get_if<ProgramStep>(&st); p && p->node == node) return true;
          if (const auto* r = std::get_if<std::shared_ptr<RepeatStep>>(&st); r && has_program_step((*r)->steps, node))
            return true;
          if (const auto* q = std::get_if<std::shared_ptr<ParallelStep>>(&st))
            for (const auto& b : (*q)->branches)
              if (has_program_step(b.steps, node)) return true;
        }
        return false;
      };
  for (const auto& [node, addr] : opt.serve) {  // --serve / serve --node: a node whose host is a program
    const auto it = std::find_if(sc.nodes.begin(), sc.nodes.end(), [&](const NodeConfig& n) { return n.name == node; });
    if (it == sc.nodes.end() || !it->host_program) {
      std::fprintf(stderr, "ernic-sim: serve: node '%s' %s\n", node.c_str(),
                   it == sc.nodes.end() ? "is not in the scenario" : "has the built-in driver (no host: program)");
      return false;
    }
    if (!has_program_step(sc.steps, node)) {
      std::fprintf(stderr, "ernic-sim: serve: node '%s' has no program step: nothing would wait for a program\n",
                   node.c_str());
      return false;
    }
    try {
      bridge::Endpoint::parse(addr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ernic-sim: serve: %s\n", e.what());
      return false;
    }
  }
  if (sc.nodes.size() > 2 && !sc.topology_switch) {
    const auto& l = sc.nodes[2].loc;
    std::fprintf(stderr,
                 "ernic-sim: %s: key 'nodes': a point-to-point link joins at most two nodes (give `topology: switch` "
                 "for more)\n",
                 l.str().c_str());
    return false;
  }
  return true;
}

bool check_output_paths(const std::string& path, const Scenario& sc, const RunOptions& opt, const std::string& json_path,
                        const std::string& log_path, const std::string& vcd_side, bool vcd_gtkw, bool* vcd_existed) {
  std::vector<std::pair<std::string, std::string>> outs;  // path, option
  if (!opt.pcap.empty()) {
    outs.push_back({opt.pcap, "--pcap"});
    if (output_has_side_files(opt.pcap))
      for (const auto& n : sc.nodes)
        for (const char* t : {"tx", "rx"}) outs.push_back({pcap_tap_path(opt.pcap, n.name, t), "--pcap (tap)"});
  }
  if (!opt.vcd.empty()) {
    outs.push_back({opt.vcd, "--vcd"});
    if (vcd_gtkw) outs.push_back({opt.vcd + ".gtkw", "--vcd (GTKWave save file)"});
    outs.push_back({vcd_side + ".model.tmp", "--vcd (temporary)"});
    outs.push_back({vcd_side + ".rtl.tmp", "--vcd (temporary)"});
  }
  if (!json_path.empty()) outs.push_back({json_path, "--json"});
  if (!log_path.empty()) outs.push_back({log_path, "--log"});
  // No output may be the scenario itself (`--json S` would overwrite the
  // input), nor another output: compared as written, and as files (a
  // symlink, another spelling of the same path, a hard link).
  for (const auto& [p, o] : outs)
    if (same_file(p, path)) {
      std::fprintf(stderr, "ernic-sim: %s %s is the scenario file itself: refusing to overwrite the input\n",
                   o.c_str(), p.c_str());
      return false;
    }
  for (size_t i = 0; i < outs.size(); ++i)
    for (size_t j = i + 1; j < outs.size(); ++j)
      if (same_file(outs[i].first, outs[j].first)) {
        std::fprintf(stderr, "ernic-sim: %s and %s would both write %s\n", outs[i].second.c_str(),
                     outs[j].second.c_str(), outs[i].first.c_str());
        return false;
      }
  for (const auto& [p, o] : outs) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::fprintf(stderr, "ernic-sim: %s %s: is a directory\n", o.c_str(), p.c_str());
      return false;
    }
    const bool existed = std::filesystem::exists(p, ec);
    if (p == opt.vcd) *vcd_existed = existed;
    FILE* f = std::fopen(p.c_str(), "ab");
    if (!f) {
      std::fprintf(stderr, "ernic-sim: %s %s: cannot write: %s\n", o.c_str(), p.c_str(), std::strerror(errno));
      return false;
    }
    std::fclose(f);
    if (!existed) std::remove(p.c_str());
  }
  return true;
}

}  // namespace ernic
