// tb/fidelity: running `ernic-sim pcap replay` from a test: its exit code
// and output lines, the explained differences of a capture
// (tb/fidelity/replay/<capture>.expect). Shared by both sides' tests.
#pragma once
#include <fstream>
#include <string>
#include <vector>

#include "tb/common/run_command.h"

namespace replay_run {

inline const std::string kData = std::string(ERNIC_TEST_DATA) + "/captures/";
inline const std::string kExpect = ERNIC_REPLAY_EXPECT;
inline const std::string kSim = ERNIC_SIM;

struct Outcome {
  int code = -1;
  std::vector<std::string> lines;
  std::vector<std::string> with(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0) out.push_back(l.substr(prefix.size()));
    return out;
  }
  std::string text() const {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

// Any capture file.
inline Outcome replay_file(const std::string& path, const std::string& args) {
  Outcome r;
  const std::string out = ernic::test::run_command(kSim + " pcap replay " + path + " " + args + " 2>&1", &r.code);
  size_t a = 0;
  for (size_t b; (b = out.find('\n', a)) != std::string::npos; a = b + 1) r.lines.push_back(out.substr(a, b - a));
  return r;
}

inline std::vector<std::string> expected(const std::string& capture) {
  std::vector<std::string> out;
  std::ifstream in(kExpect + "/" + capture + ".expect");
  std::string l;
  while (std::getline(in, l))
    if (!l.empty() && l[0] != '#') out.push_back(l);
  return out;
}

// One of the five captures (tb/data/captures/<capture>.pcap).
inline Outcome replay(const std::string& capture, const std::string& args) {
  return replay_file(kData + capture + ".pcap", args);
}

}  // namespace replay_run
