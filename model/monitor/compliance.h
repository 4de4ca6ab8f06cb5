// model/monitor: the PG332 compliance checker.
//
// PG332 ("Unsupported Features", PG31) lists requests the real ERNIC does
// not handle. The model follows IB semantics for them (so a scenario runs
// on), and this checker reports each occurrence with the rule it breaks, so
// a user learns that the real IP would not do what their driver asked. It
// watches the frames each node transmits (the requests an ERNIC peer
// receives) and is written apart from the model's code (it uses model/roce
// only).
//
// Rules (ids are stable: scenarios name them):
//   va_align      incoming READ/WRITE virtual address not 64-byte aligned
//   len_64        WRITE length, or READ (response) length, not a multiple of 64 bytes
//   read_small    READ of 4 bytes or less
//   send_zero     zero-length SEND
//   msg_8m        a message over 8 MiB
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace roce {
struct Frame;
}

namespace ernic {

struct ComplianceReport {
  uint64_t t_ps = 0;
  std::string dir;       // "A->B": the requester and the ERNIC that receives
  uint32_t dest_qp = 0;
  uint32_t psn = 0;
  std::string rule;      // one of the ids above
  std::string detail;
};

class ComplianceChecker {
 public:
  static const std::vector<std::string>& rules();
  static const char* rule_text(const std::string& rule);
  // A frame as transmitted on direction `dir` (tx tap).
  void on_frame(const std::vector<uint8_t>& frame, uint64_t t_ps, const std::string& dir);
  // The same frame decoded (roce::decode of its bytes).
  void on_frame(const roce::Frame& f, uint64_t t_ps, const std::string& dir);
  const std::vector<ComplianceReport>& reports() const { return reports_; }
  uint64_t count(const std::string& rule) const;

 private:
  void report(uint64_t t, const std::string& dir, uint32_t qp, uint32_t psn, const char* rule, std::string detail);
  struct SendState { uint64_t bytes = 0; bool active = false; };
  std::map<std::pair<std::string, uint32_t>, SendState> sends_;  // (dir, dest QP)
  std::map<std::string, bool> seen_;   // dir|qp|psn|rule: a retransmission is not a new report
  std::vector<ComplianceReport> reports_;
};

}  // namespace ernic
