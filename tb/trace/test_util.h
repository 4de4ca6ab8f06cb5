// Helpers shared by the trace tests.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tb/common/file_util.h"
#include "tb/common/run_command.h"

namespace trace_test {

// A fresh directory for the running test (tests may run in parallel),
// removed at the end of the test unless it failed.
class ScopedDir {
 public:
  ScopedDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(::testing::TempDir()) /
            ("ernic_trace_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScopedDir() {
    std::error_code ec;
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(path_, ec);
  }
  ScopedDir(const ScopedDir&) = delete;
  ScopedDir& operator=(const ScopedDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};
inline ScopedDir test_dir() { return ScopedDir(); }

using ernic::test::slurp;

inline void spit(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// True if a program path from CMake's find_program was found.
inline bool have_program(const std::string& p) {
  return !p.empty() && p.find("NOTFOUND") == std::string::npos;
}

// Runs a shell command, returns its stdout; *status gets the exit status.
inline std::string run(const std::string& cmd, int* status) { return ernic::test::run_command(cmd, status); }

}  // namespace trace_test
