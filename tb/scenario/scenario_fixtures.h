// tb/scenario: what the test_scenario_*.cpp files share: the folder of
// good/ and bad/ (kDir), a step of a parsed scenario as its type, the
// ScenarioError a text gives, and the head of the inline error cases (kHead).
#pragma once
#include <cstddef>
#include <gtest/gtest.h>
#include <string>
#include <variant>

#include "model/scenario/scenario.h"

namespace ernic::test {

inline const std::string kDir = SCENARIO_TEST_DIR;

template <class T>
const T& step_as(const Scenario& s, size_t i) {
  EXPECT_LT(i, s.steps.size());
  const T* p = std::get_if<T>(&s.steps.at(i));
  EXPECT_NE(p, nullptr) << "step " << i << " is " << step_kind(s.steps.at(i));
  return *p;
}

inline ScenarioError parse_error(const std::string& text) {
  try {
    parse_scenario(text, "t.yaml");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << text;
  return ScenarioError("", 0, 0, "", "");
}

// Nodes A and B initialised, MR src on A and dst on B: the next step is
// steps[3], at line 9.
inline const char* const kHead =
    "scenario: t\n"
    "nodes:\n"
    "  A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\n"
    "  B: {mac: '02:00:00:00:00:0b', ip: 10.0.0.2}\n"
    "steps:\n"
    "  - init: [A, B]\n"
    "  - register_mr: {node: A, name: src, length: 4096}\n"
    "  - register_mr: {node: B, name: dst, length: 4096}\n";  // steps[2], line 8

}  // namespace ernic::test
