// model/system: what the run's report (report.h) says about the ERNIC
// model's named extensions that are not PG332 (model/ernic/ext_config.h):
// a node's counters, its summary line and the extension assumptions
// (X-SHADOW-DB-*, X-QPC-CACHE-*). Nothing of it appears in a run that uses
// no extension, so such a run's report is as it always was.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "model/system/system.h"

namespace ernic {

// nodes.<node>.shadow_doorbell and nodes.<node>.qp_ctx_cache, when on.
void add_extension_json(nlohmann::json& node, const Node& n);
// The summary's lines for a node's extensions ("" when none).
std::string extension_text(const std::string& name, const nlohmann::json& node);
// The extension assumptions of the extensions some node uses, appended.
void add_extension_assumptions(nlohmann::json& assumptions, const System& sys);

}  // namespace ernic
