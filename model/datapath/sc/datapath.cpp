// model/datapath/sc: the registry of datapath implementations by name (see
// datapath.h); the base class itself is datapath_base.cpp.
#include "model/datapath/sc/datapath.h"

#include <map>

namespace ernic {

namespace {
std::map<std::string, DatapathFactory>& registry() {
  static std::map<std::string, DatapathFactory> r = [] {
    std::map<std::string, DatapathFactory> m = {{"rtl", &make_rtl_datapath}, {"model", &make_model_datapath}};
    for (auto& [name, f] : user_datapath_factories()) m[name] = std::move(f);
    return m;
  }();
  return r;
}
}  // namespace

void register_datapath(const std::string& name, DatapathFactory f) { registry()[name] = std::move(f); }

std::unique_ptr<RoceDatapath> make_datapath(const std::string& kind, sc_core::sc_module_name name,
                                        const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                                        const std::string& scope, const DatapathConfig& cfg) {
  auto it = registry().find(kind);
  if (it == registry().end()) return nullptr;
  return it->second(name, core, cmac, ctx, scope, cfg);
}

std::vector<std::string> datapath_names() {
  std::vector<std::string> v;
  for (const auto& [k, f] : registry()) v.push_back(k);
  return v;
}

bool datapath_registered(const std::string& name) { return registry().count(name) != 0; }

std::string unknown_datapath_message(const std::string& name) {
  std::string known;
  for (const auto& n : datapath_names()) known += (known.empty() ? "" : ", ") + n;
  return "unknown datapath '" + name + "' (registered: " + known + ")";
}

}  // namespace ernic
