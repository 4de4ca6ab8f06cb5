// model/datapath/sc: the datapath module's base class (RoceDatapath, see
// datapath.h): its constructor, destructor (the key function: the class's
// vtable and type information live here) and attach(). Apart from the
// registry of implementations (datapath.cpp), so that the ERNIC model, which
// uses the class only through a pointer, links without the Verilated RTL
// (the sanitizer build's ernic_ernic, model/CMakeLists.txt).
#include "model/datapath/sc/datapath.h"

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

}  // namespace ernic
