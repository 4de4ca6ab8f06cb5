// tb/roce: small helpers shared by the roce tests: reading pcaps, running a
// command, splitting tshark's field output.
#pragma once
#include <pcap/pcap.h>

#include <cstdio>
#include <string>
#include <vector>

#include "model/roce/types.h"
#include "tb/common/run_command.h"

namespace roce_test {

// All frames of a pcap (captured bytes). Empty with *err set on failure.
inline std::vector<roce::Bytes> read_pcap(const std::string& path, std::string* err = nullptr) {
  std::vector<roce::Bytes> out;
  char eb[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(path.c_str(), eb);
  if (!p) {
    if (err) *err = eb;
    return out;
  }
  pcap_pkthdr* h = nullptr;
  const u_char* d = nullptr;
  while (pcap_next_ex(p, &h, &d) == 1) out.emplace_back(d, d + h->caplen);
  pcap_close(p);
  return out;
}

// Runs a shell command; returns its stdout and sets *status to its exit code.
inline std::string run(const std::string& cmd, int* status = nullptr) { return ernic::test::run_command(cmd, status); }

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Splits one line of `tshark -T fields -E separator=, -E quote=d` output.
inline std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

inline std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

}  // namespace roce_test
