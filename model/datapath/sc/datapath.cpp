#include "model/datapath/sc/datapath.h"

#include <map>

namespace ernic {

RoceDatapath::RoceDatapath(sc_core::sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                   std::string scope, DatapathConfig cfg)
    : sc_module(name), core_(core), cmac_(cmac), ctx_(ctx), scope_(std::move(scope)), cfg_(std::move(cfg)) {
  v_desc_valid_ = ctx_.var(scope_ + ".tx_seam", "s_desc_valid", 1);
  v_desc_ready_ = ctx_.var(scope_ + ".tx_seam", "s_desc_ready", 1, 1);
}

RoceDatapath::~RoceDatapath() = default;

void RoceDatapath::attach(Cmac& c) {
  cmac_model_ = &c;
  c.tx_source = this;
  c.rx_stream = [this](FrameBytes f, uint64_t start_ps) { cmac_rx(std::move(f), start_ps); };
  c.axis_traced = traces_axis();
}

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
