// tb/system: what the split-run tests share (test_split_merge.cpp,
// test_split_run.cpp): a fresh directory per test, a file's bytes, lines.
// Light (no ernic-sim, no tools): system_test_util.h builds on it.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tb/common/file_util.h"

namespace split_test {

namespace fs = std::filesystem;

// A fresh, empty directory for the running test: base/<Suite>.<Test><suffix>.
inline fs::path fresh_test_dir(const fs::path& base, const std::string& suffix = "") {
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = base / (std::string(t->test_suite_name()) + "." + t->name() + suffix);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline fs::path test_dir() { return fresh_test_dir(fs::path(ERNIC_SYSTEM_OUT) / "split"); }

using ernic::test::slurp;

inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace split_test
