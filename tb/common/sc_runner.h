// tb/common: a test's SystemC thread: runs `body` in one SC_THREAD (the
// tests of model/dma and model/sim make several, in an order that is not
// the answer they check).
#pragma once
#include <functional>
#include <systemc>
#include <utility>

namespace ernic::test {

struct Runner : sc_core::sc_module {
  SC_HAS_PROCESS(Runner);
  std::function<void()> body;
  Runner(sc_core::sc_module_name n, std::function<void()> b) : sc_module(n), body(std::move(b)) { SC_THREAD(run); }
  void run() { body(); }
};

}  // namespace ernic::test
