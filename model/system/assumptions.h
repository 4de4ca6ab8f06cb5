// model/system: the choices the model makes where PG332 is silent. Every run
// prints this list in its JSON (design.md: "one list of assumptions").
#pragma once
#include <string>
#include <vector>

namespace ernic {

struct Assumption {
  const char* id;
  const char* text;
  const char* reason;
};

const std::vector<Assumption>& assumptions();
// The named extensions' assumptions (X-*, assumptions_ext.cpp): in the
// JSON of a run only when a node uses the extension (report_ext.h).
const std::vector<Assumption>& extension_assumptions();

}  // namespace ernic
