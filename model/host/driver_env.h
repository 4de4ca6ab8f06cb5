// model/host: the driver's configuration as environment variables, both
// ways, so that a program outside the simulator (model/bridge/client) runs
// the driver exactly as the node's built-in host would: same MAC and IP,
// same QP count and layout, same seed (PSNs, key bytes, CM ids), same CM
// timeout and ACK mode (issue 15, "one driver implementation").
//   ERNIC_NODE, ERNIC_MAC, ERNIC_IP, ERNIC_IP6, ERNIC_NUM_QP,
//   ERNIC_CORE_MHZ, ERNIC_LAYOUT ("3.1" | "4.x"), ERNIC_SEED,
//   ERNIC_ACK_MODE, ERNIC_CM_TIMEOUT_US, ERNIC_MR_CTX_TABLE (bus address,
//   `mr_cache: cam` only).
// The simulator writes them (program step); the client reads them.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/host/driver.h"

namespace ernic::host {

std::vector<std::pair<std::string, std::string>> driver_env(const DriverConfig& c);

// Reads the variables through get (getenv's shape: null when unset).
// Unset ones keep DriverConfig's defaults, except ERNIC_MAC, which is
// required. A malformed value throws DriverError naming the variable.
DriverConfig driver_config_from_env(const std::function<const char*(const char*)>& get);

}  // namespace ernic::host
