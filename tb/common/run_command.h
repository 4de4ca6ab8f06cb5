// tb/common: running a command from a test (the simulator's command line,
// tshark, scapy scripts): its stdout whole and its exit code (every test
// that runs a program uses this).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace ernic::test {

// Runs cmd with /bin/sh; returns its stdout (add 2>&1 for stderr too).
// *status: its exit code, -1 when it could not start or did not exit.
inline std::string run_command(const std::string& cmd, int* status = nullptr) {
  std::string out;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    if (status) *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

}  // namespace ernic::test
