// tools: `ernic-sim run --record-datapath NODE=FILE` (rtl_record.h): the
// rtl datapath of one node, with a recorder on its Verilated top's ports.
#include "tools/rtl_record.h"

#include <cstdio>
#include <stdexcept>

#include "Vroce_datapath.h"
#include "Vroce_datapath___024root.h"
#include "model/datapath/sc/rtl_datapath_bind.h"
#include "tools/rtl_stim.h"

namespace ernic {

namespace {

using namespace sc_core;

// Watches the top's ports from inside its eval(): every evaluation in
// which a clock rose becomes a stimulus line, recorded before the model
// evaluates, where the ports hold the inputs the edge sees and the outputs
// it was given by the edge before. Closes its files at the end of the
// simulation (or when destroyed).
class DatapathRecorder : public sc_module {
 public:
  DatapathRecorder(sc_module_name name, RoceDatapathPorts& p, const std::string& path) : sc_module(name), p_(p) {
    stim_ = std::fopen(path.c_str(), "w");
    beats_ = std::fopen((path + ".beats").c_str(), "w");
    if (!stim_ || !beats_) throw std::runtime_error("--record-datapath: cannot write " + path + " or its .beats");
  }
  ~DatapathRecorder() override { close(); }

  void fell(bool core, bool cmac) {
    if (core) core_prev_ = false;
    if (cmac) cmac_prev_ = false;
  }

  void before_eval() {
    if (!stim_) return;
    const bool core = p_.core_clk.read(), cmac = p_.cmac_clk.read();
    const int dom = (core && !core_prev_ ? 1 : 0) | (cmac && !cmac_prev_ ? 2 : 0);
    core_prev_ = core;
    cmac_prev_ = cmac;
    if (!dom) return;
    int n = 0;
    uint64_t v[rtl_stim::kInputs];
    for (int i = 0; i < rtl_stim::kInputs; ++i) {
      v[i] = rtl_stim::read_input(p_, i);
      n += v[i] != last_[i];
    }
    std::fprintf(stim_, "%d %llu %d", dom, (unsigned long long)sc_time_stamp().value(), n);
    for (int i = 0; i < rtl_stim::kInputs; ++i)
      if (v[i] != last_[i]) {
        std::fprintf(stim_, " %d %llx", i, (unsigned long long)v[i]);
        last_[i] = v[i];
      }
    std::fputc('\n', stim_);
    rtl_stim::write_beats(beats_, lines_, dom, p_);
    ++lines_;
  }

 private:
  void end_of_simulation() override { close(); }
  void close() {
    if (!stim_) return;
    rtl_stim::write_end(beats_, lines_, p_);
    std::fclose(stim_);
    std::fclose(beats_);
    stim_ = beats_ = nullptr;
  }

  RoceDatapathPorts& p_;
  std::FILE* stim_ = nullptr;
  std::FILE* beats_ = nullptr;
  uint64_t last_[rtl_stim::kInputs] = {};
  uint64_t lines_ = 0;
  bool core_prev_ = false, cmac_prev_ = false;
};

}  // namespace

void record_rtl_datapath(const std::string& node, const std::string& path) {
  register_datapath("rtl", [node, path](sc_module_name name, const ClockDomain& core, const ClockDomain& cmac,
                                        SimContext& ctx, const std::string& scope,
                                        const DatapathConfig& cfg) -> std::unique_ptr<RoceDatapath> {
    if (cfg.node != node) return make_rtl_datapath(name, core, cmac, ctx, scope, cfg);
    RoceDatapathBinder bind = [path](const char* n, RoceDatapathPorts& p) {
      RoceDatapathTop t = bind_roce_datapath<Vroce_datapath>(n, p);
      // The recorder goes before the model (its last line reads an output).
      auto rec = std::make_shared<DatapathRecorder>("rtl_record", p, path);
      std::shared_ptr<void> model = t.model;
      t.model = std::shared_ptr<void>(rec.get(), [rec, model](void*) mutable {
        rec.reset();
        model.reset();
      });
      t.eval = [r = rec.get(), eval = t.eval] {
        r->before_eval();
        eval();
      };
      if (t.fell)  // a clock that went low without an eval (RoceDatapathTop::fell)
        t.fell = [r = rec.get(), fell = t.fell](bool core, bool cmac) {
          r->fell(core, cmac);
          fell(core, cmac);
        };
      return t;
    };
    return std::make_unique<RtlDatapath>(name, core, cmac, ctx, scope, cfg, bind, "rtl");
  });
}

}  // namespace ernic
