// model/scenario: the parser of the node key `extensions` (extensions.h,
// extensions.cpp), internal to model/scenario like parse.h.
#pragma once
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

// `extensions` of a node (after its `host`, which it checks against).
void read_node_extensions(const Field& f, NodeConfig& n);

}  // namespace ernic::scenario_parse
