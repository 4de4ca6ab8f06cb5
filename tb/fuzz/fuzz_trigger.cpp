// tb/fuzz: the trigger-expression parser and binder (model/trace,
// Trigger::parse / bind / signals). Any text: either an expression, or a
// TriggerError whose column lies in the text (1..length+1; 0 only for the
// expression as a whole); never another exception. A parsed expression is
// bound against a two-node system (QPs, MRs, a few model and RTL signals):
// again an expression or a TriggerError with a column in the text, and the
// signals it reads are signals of the system. Parsing twice gives the same.
#include <algorithm>
#include <exception>
#include <string>
#include <typeinfo>

#include "model/trace/trigger.h"
#include "tb/fuzz/fuzz_check.h"

using namespace ernic::trigger;

namespace {

const BindContext& context() {
  static const BindContext c = [] {
    BindContext ctx;
    ctx.nodes["A"] = BindContext::NodeInfo{&ernic::regs::kLayout31, 8, 8};
    ctx.nodes["B"] = BindContext::NodeInfo{&ernic::regs::kLayout31, 8, 8};
    for (const char* n : {"A", "B"}) {
      const std::string t = std::string("top.") + n + ".";
      for (const char* s : {"ernic.qp2.fatal", "ernic.qp2.state", "ernic.qp1.fatal", "datapath.qp2.req_state",
                            "cmac.tx_axis.tvalid", "cmac.tx_axis.tready", "cmac.rx_axis.tvalid",
                            "datapath.s_desc_valid", "datapath.s_desc_ready", "s_axi_lite.bvalid",
                            "s_axi_lite.awaddr", "s_axi_lite.wdata"})
        ctx.signals.push_back(t + s);
    }
    ctx.signals.push_back("top.link.A_to_B.frames");
    return ctx;
  }();
  return c;
}

std::string attempt(const std::string& text) {
  try {
    Trigger t = Trigger::parse(text);
    FUZZ_CHECK(t.text() == text, "text() changed");
    try {
      t.bind(context());
      for (const std::string& s : t.signals())
        FUZZ_CHECK(!s.empty(), "an empty signal name");
      return "bound";
    } catch (const TriggerError& e) {
      FUZZ_CHECK(e.column() <= text.size() + 1, "bind error column %zu beyond %zu characters: %s", e.column(),
                 text.size(), e.what());
      FUZZ_CHECK(*e.what(), "an empty bind error");
      return std::string("bind:") + std::to_string(e.column()) + e.what();
    }
  } catch (const TriggerError& e) {
    FUZZ_CHECK(e.column() <= text.size() + 1, "parse error column %zu beyond %zu characters: %s", e.column(),
               text.size(), e.what());
    FUZZ_CHECK(*e.what(), "an empty parse error");
    return std::string("parse:") + std::to_string(e.column()) + e.what();
  } catch (const std::exception& e) {
    FUZZ_CHECK(false, "exception %s escaped: %s", typeid(e).name(), e.what());
  } catch (...) {
    FUZZ_CHECK(false, "a non-std exception escaped");
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string a = attempt(text), b = attempt(text);
  FUZZ_CHECK(a == b, "two attempts differ: %s / %s", a.c_str(), b.c_str());
  return 0;
}
