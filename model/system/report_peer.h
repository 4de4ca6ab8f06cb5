// model/system: what the run's report says about a node of kind: peer
// (model/peer/peer.h): its frames, its QPs' responder counters and state,
// and its summary line.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "model/system/system.h"

namespace ernic {

// nodes.<node> for a peer: tx, rx (as every node's), and `peer`.
nlohmann::json peer_node_json(const Node& n);
// The summary's line for a peer node's `peer` object.
std::string peer_node_text(const std::string& name, const nlohmann::json& node);

}  // namespace ernic
