// Tests for model/scenario/scenario.h: the examples in scenarios/README.md are
// its example files, the examples use the whole language, and every
// scenario file in the repository parses.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "model/scenario/scenario.h"

namespace fs = std::filesystem;
using namespace ernic;

// scenarios/README.md shows every example as a complete scenario file: each
// ```yaml block follows a line `<!-- example: scenarios/examples/NAME.yaml -->`
// and equals that file byte for byte; every file in scenarios/examples/ is
// shown exactly once; and each example parses.
TEST(ScenarioDocs, ReadmeExamplesAreTheFiles) {
  const fs::path root = SCENARIO_ROOT_DIR;
  std::ifstream in(root / "README.md");
  ASSERT_TRUE(in) << "scenarios/README.md missing";
  const std::regex marker(R"(^<!-- example: scenarios/examples/([A-Za-z0-9_.-]+\.yaml) -->$)");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::map<std::string, int> shown;  // file -> README line of its marker
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, marker)) {
      const std::string name = m[1];
      const int at = int(i) + 1;
      if (i + 1 >= lines.size() || lines[i + 1] != "```yaml") {
        ADD_FAILURE() << "README.md:" << at << ": the example marker is not followed by a ```yaml line";
        continue;
      }
      std::string block;
      size_t j = i + 2;
      for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) block += lines[j] + "\n";
      EXPECT_LT(j, lines.size()) << "README.md:" << at << ": unterminated ```yaml block";
      EXPECT_FALSE(shown.count(name)) << "README.md:" << at << ": " << name << " is shown twice (first at line "
                                      << shown[name] << ")";
      shown[name] = at;
      std::ifstream f(root / "examples" / name, std::ios::binary);
      if (!f) {
        ADD_FAILURE() << "README.md:" << at << ": scenarios/examples/" << name << " does not exist";
        continue;
      }
      std::ostringstream file;
      file << f.rdbuf();
      EXPECT_EQ(block, file.str()) << "README.md:" << at << ": the block differs from scenarios/examples/" << name;
      i = j;
    } else if (lines[i].rfind("```yaml", 0) == 0) {
      ADD_FAILURE() << "README.md:" << i + 1
                    << ": a ```yaml block without the line <!-- example: scenarios/examples/NAME.yaml --> "
                       "before it (every example must be a complete file under scenarios/examples/)";
    }
  }
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(root / "examples")) {
    if (!e.is_regular_file()) continue;
    ++files;
    const std::string name = e.path().filename().string();
    EXPECT_EQ(e.path().extension(), ".yaml") << "scenarios/examples/" << name << ": not a .yaml file";
    EXPECT_TRUE(shown.count(name)) << "scenarios/examples/" << name << " is not shown in scenarios/README.md";
    try {
      const Scenario s = load_scenario(e.path().string());
      EXPECT_EQ(s.name, e.path().stem().string()) << "the scenario name of an example is its file name";
    } catch (const ScenarioError& err) {
      ADD_FAILURE() << err.what();
    }
  }
  EXPECT_GE(files, 10u);
}

namespace {
// Step kinds and fault actions used by a step list, nested steps included.
void collect(const std::vector<Step>& steps, std::set<std::string>& kinds, std::set<FaultAction>& actions) {
  for (const Step& st : steps) {
    kinds.insert(step_kind(st));
    if (const auto* f = std::get_if<FaultStep>(&st)) actions.insert(f->action);
    if (const auto* r = std::get_if<std::shared_ptr<RepeatStep>>(&st)) collect((*r)->steps, kinds, actions);
    if (const auto* p = std::get_if<std::shared_ptr<ParallelStep>>(&st))
      for (const auto& b : (*p)->branches) collect(b.steps, kinds, actions);
  }
}
template <size_t... I>
std::vector<std::string> all_step_kinds(std::index_sequence<I...>) {
  return {step_kind(Step(std::in_place_index<I>))...};
}
}  // namespace

// Together, the examples use every step kind and every fault action.
TEST(ScenarioDocs, ExamplesCoverTheLanguage) {
  std::set<std::string> kinds;
  std::set<FaultAction> actions;
  for (const auto& e : fs::directory_iterator(fs::path(SCENARIO_ROOT_DIR) / "examples")) {
    try {
      collect(load_scenario(e.path().string()).steps, kinds, actions);
    } catch (const ScenarioError& err) {
      ADD_FAILURE() << err.what();
    }
  }
  for (const std::string& k : all_step_kinds(std::make_index_sequence<std::variant_size_v<Step>>()))
    EXPECT_TRUE(kinds.count(k)) << "no example uses the step kind " << k;
  for (FaultAction a : {FaultAction::drop, FaultAction::duplicate, FaultAction::reorder, FaultAction::corrupt,
                        FaultAction::delay})
    EXPECT_TRUE(actions.count(a)) << "no example uses the fault action " << to_string(a);
}

// Every scenario file in the repository parses.
TEST(ScenarioDocs, RepositoryScenariosParse) {
  const fs::path root = SCENARIO_ROOT_DIR;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      load_scenario(f.string());
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}
