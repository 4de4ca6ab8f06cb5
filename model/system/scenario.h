// model/system: scenario files.
//
// A scenario is a YAML file (language documented in scenarios/README.md) that
// names a topology (nodes, clocks, link) and a list of steps the runner
// executes in order. load_scenario() parses a file strictly: every unknown
// key, wrong type, out-of-range value, missing field, dangling reference and
// duplicate name is a ScenarioError carrying file, 1-based line and column and
// the full key path (for example `steps[3].post.wqes[0].opcode`).
//
// The parser checks everything that can be known before simulation: names
// (nodes, MRs, connections) are resolved in step order, so a step may only use
// an MR or connection that an earlier step created, and a node only after an
// earlier `init` step. Bounds of posted WQEs against MRs are NOT checked here:
// the NIC checks them at run time, and scenarios may provoke those errors on
// purpose. fill/check_memory ranges (host-side test operations) are checked.
//
// Plain C++17; no SystemC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "model/roce/types.h"

namespace ernic {

// Where something was written: file (display name), 1-based line and column.
// line == 0 means "no position" (e.g. the file could not be read).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column" (or "file" without position)
};

// A scenario file error. what() is "FILE:LINE:COLUMN: key 'KEY': message";
// the "key '...': " part is left out when key() is empty (YAML syntax errors,
// unreadable files), and ":LINE:COLUMN" when line() is 0.
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, int line, int column, std::string key, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }
  SourceLoc loc() const { return SourceLoc{file_, line_, column_}; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string message_;
};

// ---------------------------------------------------------------- enums ----

enum class Pattern { random, zero, incrementing, constant };
enum class Access { r, w, rw };  // MR access rights (remote read / write)
enum class WqeOpcode { write, write_imm, send, send_imm, send_inv, read };
enum class Doorbell { once, each };  // one SQ doorbell for the list, or one per WQE

const char* to_string(Pattern p);
const char* to_string(Access a);
const char* to_string(WqeOpcode o);
const char* to_string(Doorbell d);

// Deterministic test data, shared by `fill` and `check_memory`. Writes the
// bytes at MR offsets [offset_in_mr, offset_in_mr + len) of the pattern:
//   zero:         0
//   constant:     value
//   incrementing: (offset_in_mr + i) & 0xFF
//   random:       byte k of the MR is byte k of the stream produced by
//                 std::mt19937_64(seed), each 64-bit draw giving 8 bytes,
//                 least significant first. (No std::*_distribution, so the
//                 bytes are the same with every standard library.)
// Because bytes depend only on their MR offset, any sub-range of a fill can
// be regenerated. `seed` is ignored except for random, `value` except for
// constant.
void fill_pattern(uint8_t* dst, size_t len, Pattern p, uint64_t seed, uint8_t value,
                  uint64_t offset_in_mr);

// ------------------------------------------------------------- topology ----

struct Limits {
  uint64_t sim_time_us = 10000;  // hard cap on simulated time
  uint64_t watchdog_us = 200;    // no progress for this long -> exit 3
};

struct Clocks {
  double core_mhz = 200.0;
  double cmac_mhz = 322.265625;
};

struct LinkConfig {
  uint32_t rate_gbps = 100;  // only 100 for now
  uint64_t delay_ns = 100;
};

struct NodeConfig {
  std::string name;
  roce::MacAddr mac;
  roce::Ipv4Addr ip;
  uint32_t num_qp = 8;       // C_NUM_QP, 8..256
  uint32_t memory_mib = 64;  // host memory, 1..4096 MiB
  SourceLoc loc;             // the node's key in `nodes`
};

// ---------------------------------------------------------------- steps ----

struct InitStep {
  SourceLoc loc;
  std::vector<std::string> nodes;
};

struct RegisterMrStep {
  SourceLoc loc;
  std::string node;
  std::string name;  // unique per node
  uint64_t length = 0;
  Access access = Access::rw;
  uint32_t pd = 1;
};

struct FillStep {
  SourceLoc loc;
  std::string node;
  std::string mr;
  Pattern pattern = Pattern::zero;
  uint64_t seed = 0;  // resolved: the scenario seed when not given
  uint8_t value = 0;
  uint64_t offset = 0;
  uint64_t length = 0;  // resolved: the rest of the MR when not given
};

struct ConnectStep {
  SourceLoc loc;
  std::string name;
  std::string client;
  std::string server;
  std::string client_mr;  // MR of the client that the server may access ("" = none)
  std::string server_mr;  // MR of the server that the client may access ("" = none)
  uint32_t pmtu = 4096;
  uint32_t sq_depth = 64;
  uint32_t rq_depth = 16;
  std::optional<uint32_t> client_psn;  // nullopt = auto (drawn from the seed by the runner)
  std::optional<uint32_t> server_psn;
  std::optional<uint32_t> client_qp;  // nullopt = auto (chosen by the runner)
  std::optional<uint32_t> server_qp;
};

struct WqeSpec {
  SourceLoc loc;
  WqeOpcode opcode = WqeOpcode::write;
  uint32_t wr_id = 0;  // 0..65535
  std::string local_mr;
  uint64_t local_offset = 0;
  uint32_t length = 0;
  uint64_t remote_offset = 0;  // into the peer's MR (write, write_imm, read)
  uint32_t immdt = 0;          // immediate data, or the R_Key to invalidate (send_inv)
};

struct PostStep {
  SourceLoc loc;
  std::string conn;
  std::string node;  // one end of conn: the requester
  Doorbell doorbell = Doorbell::once;
  std::vector<WqeSpec> wqes;
  uint32_t repeat = 1;  // post the list this many times
};

struct CompletionExpect {
  std::optional<uint32_t> wr_id;
  std::optional<WqeOpcode> opcode;
  std::optional<bool> error;
};

struct WaitCompletionsStep {
  SourceLoc loc;
  std::string conn;
  std::string node;
  uint32_t count = 1;
  uint64_t timeout_us = 1000;
  std::vector<CompletionExpect> expect;  // checked against the first expect.size() completions, in order
};

struct MemRef {
  std::string node;
  std::string mr;
  uint64_t offset = 0;
};

struct PatternSpec {
  Pattern pattern = Pattern::zero;
  uint64_t seed = 0;  // resolved: the scenario seed when not given
  uint8_t value = 0;
};

struct CheckMemoryStep {
  SourceLoc loc;
  std::string node;
  std::string mr;
  uint64_t offset = 0;
  uint64_t length = 0;  // resolved: the rest of the MR when not given
  std::optional<MemRef> equals;       // exactly one of equals / pattern
  std::optional<PatternSpec> pattern;
};

struct WaitStep {
  SourceLoc loc;
  uint64_t us = 0;
};

using Step = std::variant<InitStep, RegisterMrStep, FillStep, ConnectStep, PostStep,
                          WaitCompletionsStep, CheckMemoryStep, WaitStep>;

const SourceLoc& step_loc(const Step& s);
const char* step_kind(const Step& s);  // the YAML key: "init", "register_mr", ...

// ------------------------------------------------------------- scenario ----

struct Scenario {
  std::string file;  // display name given to the parser
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Limits limits;
  Clocks clocks;
  LinkConfig link;
  std::vector<NodeConfig> nodes;  // in file order
  std::vector<Step> steps;

  const NodeConfig* find_node(const std::string& name) const;  // nullptr if absent
};

// Parse a scenario file; errors are ScenarioError (including an unreadable file).
Scenario load_scenario(const std::string& path);
// Parse YAML text; display_name is used as the file in locations and errors.
Scenario parse_scenario(const std::string& yaml_text, const std::string& display_name);

}  // namespace ernic
