// tb/fuzz: the scenario parser (model/scenario, parse_scenario). Any bytes
// as a scenario file: either a scenario, or a ScenarioError naming the file
// and a place in it (line >= 1 within the text's lines, column >= 1; what()
// starting "fuzz.yaml:LINE:COLUMN: "); never a crash, a hang or an exception
// of another type. A scenario that parses parses again to the same one
// (nodes, steps, name), and an error is the same error twice.
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>

#include "model/scenario/scenario.h"
#include "tb/fuzz/fuzz_check.h"

namespace {

struct Outcome {
  bool ok = false;
  size_t nodes = 0, steps = 0;
  std::string name, error;
};

Outcome parse(const std::string& text) {
  Outcome o;
  try {
    const ernic::Scenario sc = ernic::parse_scenario(text, "fuzz.yaml");
    FUZZ_CHECK(sc.file == "fuzz.yaml", "scenario file '%s'", sc.file.c_str());
    o.ok = true;
    o.nodes = sc.nodes.size();
    o.steps = sc.steps.size();
    o.name = sc.name;
  } catch (const ernic::ScenarioError& e) {
    // Lines as a reader counts them: \n, \r\n and a lone \r end one.
    size_t lines = 1;
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) ++lines;
    FUZZ_CHECK(e.file() == "fuzz.yaml", "error names file '%s'", e.file().c_str());
    FUZZ_CHECK(e.line() >= 1 && size_t(e.line()) <= lines && e.column() >= 1,
               "error without a place in the text: line %d of %zu, column %d: %s", e.line(), lines, e.column(),
               e.what());
    const std::string head = "fuzz.yaml:" + std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": ";
    FUZZ_CHECK(std::strncmp(e.what(), head.c_str(), head.size()) == 0, "what() is '%s'", e.what());
    FUZZ_CHECK(!e.message().empty(), "an empty message");
    o.error = e.what();
  } catch (const std::exception& e) {
    FUZZ_CHECK(false, "exception %s escaped the parser: %s", typeid(e).name(), e.what());
  } catch (...) {
    FUZZ_CHECK(false, "a non-std exception escaped the parser");
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Outcome a = parse(text);
  const Outcome b = parse(text);
  FUZZ_CHECK(a.ok == b.ok && a.nodes == b.nodes && a.steps == b.steps && a.name == b.name && a.error == b.error,
             "two parses of the same text differ");
  return 0;
}
