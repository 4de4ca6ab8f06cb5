// tb/system: helpers for the whole-system tests. Every test runs the real
// ernic-sim binary (ERNIC_SIM_PROGRAM) into its own output directory under
// the build tree (ERNIC_SYSTEM_OUT/<Suite>.<Test>), and checks what it wrote
// with independent tools (tshark, scapy, vcd2fst) and small readers.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tb/roce/test_util.h"
#include "tb/system/split_test_util.h"

namespace system_test {

namespace fs = std::filesystem;

// The binary under test: the build's ernic-sim, or $ERNIC_SIM when set (to
// run these tests against another build or an installed binary).
inline const std::string kSim = std::getenv("ERNIC_SIM") && *std::getenv("ERNIC_SIM") ? std::getenv("ERNIC_SIM")
                                                                                       : ERNIC_SIM_PROGRAM;
inline const std::string kDefaultScenario = ERNIC_DEFAULT_SCENARIO;
inline const std::string kSourceDir = ERNIC_SOURCE_DIR;
inline const std::string kSystemDir = ERNIC_SYSTEM_TEST_DIR;  // tb/system
inline const std::string kTshark = TSHARK_PROGRAM;

// The line time of preamble+SFD at 100 Gb/s (8 bytes of 80 ps): how long
// before the pcap timestamp (first byte after the SFD) a frame starts.
constexpr uint64_t kPreamblePs = 8 * 80;
constexpr uint64_t kCmacPeriodPs = 3103;  // 322.265625 MHz as simulated (assumption A-CLK-1)

inline std::string read_text(const fs::path& p);

// The default scenario's link.delay_ns, read from the file (100).
inline uint64_t default_link_delay_ns() {
  std::istringstream s(read_text(kDefaultScenario));
  for (std::string line; std::getline(s, line);) {
    const size_t k = line.find("delay_ns:");
    if (k != std::string::npos && line.find('#') > k) return std::stoull(line.substr(k + 9));
  }
  ADD_FAILURE() << "no delay_ns in " << kDefaultScenario;
  return 0;
}

// A fresh, empty output directory for the running test.
inline fs::path test_dir(const std::string& suffix = "") {
  return split_test::fresh_test_dir(fs::path(ERNIC_SYSTEM_OUT), suffix);
}

inline std::string read_text(const fs::path& p) { return split_test::slurp(p); }

inline void write_text(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

struct SimResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `ernic-sim ARGS` with `cwd` as the working directory; stdout and
// stderr go to files in cwd (sim.stdout / sim.stderr) and are returned.
inline SimResult run_sim(const fs::path& cwd, const std::vector<std::string>& args) {
  std::string cmd = "cd " + roce_test::shell_quote(cwd.string()) + " && " + roce_test::shell_quote(kSim);
  for (const auto& a : args) cmd += " " + roce_test::shell_quote(a);
  cmd += " >sim.stdout 2>sim.stderr";
  const int rc = std::system(cmd.c_str());
  SimResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = read_text(cwd / "sim.stdout");
  r.err = read_text(cwd / "sim.stderr");
  return r;
}

// Runs the default scenario in `dir` with pcap, vcd and json outputs
// (out.pcap, out.vcd, out.json). Fails the test unless it passes.
inline void run_default(const fs::path& dir, bool vcd = false) {
  std::vector<std::string> args = {"run", kDefaultScenario, "--pcap", "out.pcap", "--json", "out.json", "--quiet"};
  if (vcd) args.insert(args.end(), {"--vcd", "out.vcd"});
  SimResult r = run_sim(dir, args);
  ASSERT_EQ(r.exit_code, 0) << "ernic-sim failed in " << dir << "\n" << r.out << r.err;
}

// tshark's fields for every frame of a capture: one row per frame, one
// string per field (first occurrence; empty when absent).
inline std::vector<std::vector<std::string>> tshark_fields(const fs::path& pcap, const std::vector<std::string>& fields,
                                                          int* status = nullptr) {
  std::string cmd = roce_test::shell_quote(kTshark) +
                    " --disable-protocol rpcordma -n -r " + roce_test::shell_quote(pcap.string()) +
                    " -T fields -E separator=, -E quote=d -E occurrence=f";
  for (const auto& f : fields) cmd += " -e " + f;
  cmd += " 2>/dev/null";
  int st = 0;
  const std::string out = roce_test::run(cmd, &st);
  if (status) *status = st;
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : roce_test::split_lines(out)) {
    if (line.empty()) continue;
    rows.push_back(roce_test::split_csv(line));
  }
  return rows;
}

// "0x0000ab" or "171" -> 171.
inline uint64_t to_u64(const std::string& s) { return std::stoull(s, nullptr, 0); }

}  // namespace system_test
