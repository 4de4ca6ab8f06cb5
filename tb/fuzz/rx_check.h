// tb/fuzz: the invariants fuzz_rx checks after each input (rx_check.cpp),
// comparing the node (rx_node.h) with its snapshot. A broken one prints the
// input's run events (QP fatal, validation failures, ...) and aborts.
#pragma once
#include "tb/fuzz/rx_node.h"

namespace ernic::fuzz_rx {

void check_run(RxNode& node, const RunResult& r);

}  // namespace ernic::fuzz_rx
