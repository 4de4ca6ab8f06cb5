// model/scenario: the parser's shared parts, internal to model/scenario
// (nothing outside this folder includes it; the public API is scenario.h).
//
// Structure: every YAML map is read through MapReader, which is given the
// keys the map may hold, reports duplicate and unknown keys (suggesting the
// closest known one), hands out Fields (a node with its key path and a
// position) and, in finish(), reports any key the caller left unused. Typed
// value readers (Field -> uint64, double, name, enum, ...) give the
// "wrong type", "negative" and "out of range" errors. Step kinds are a table
// of name -> parse function; names (nodes, MRs, connections) are resolved in
// step order against a symbol table.
//
// The files:
//   fields.cpp          YAML access: MapReader, Field, typed value readers,
//                       error positions, "did you mean"
//   load.cpp            the entry: parse_scenario, load_scenario
//   topology.cpp        the top level and the topology (limits, clocks,
//                       link, topology, pcie, nodes)
//   steps.cpp           the step list (kinds table, repeat rules) and name
//                       resolution (nodes, MRs, connections)
//   steps_driver.cpp    driver-level steps (README 5.1)
//   steps_regs.cpp      register-level steps (5.2)
//   steps_memory.cpp    host-memory steps (5.3)
//   steps_conn.cpp      connection management (5.4)
//   steps_wire.cpp      the wire: directions, opcodes, faults, link, bypass (5.5)
//   steps_expect.cpp    expectations on the wire and time (5.6)
//   steps_control.cpp   control: repeat, parallel, barrier (5.7)
//   steps_qp_setup.cpp  the QP-setup offload: node key qp_setup_fsm, its steps (5.8)
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/link/mac_params.h"
#include "model/scenario/scenario.h"

namespace ernic::scenario_parse {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
// Caps on times, so that they fit the simulator's 1 ps time base with room.
constexpr uint64_t kMaxTimeUs = 1000000000;  // 1000 s
constexpr uint64_t kMaxDelayNs = 1000000000;  // 1 s
constexpr unsigned kMaxNodes = 16;
// With `topology: switch`, a direction's end may be the switch itself
// ("switch->A": frames the switch sends A's node on its own, and A's port).
constexpr const char* kSwitchEnd = "switch";
constexpr unsigned kMaxMrsPerNode = 256;  // PG332 3.1 MR table entries
// connect's `batch`: its ConnectRequests and ConnectReplies are in QP1's
// send queues at once, 16 entries deep in the driver (one kept free).
constexpr uint64_t kMaxConnectBatch = 15;
// Bounds on what a file may expand to (scenarios/README.md section 7): YAML
// aliases are expanded each time they are used, and nested repeats multiply.
// A file written out in full never reaches the first two: each is a fixed
// part plus a part linear in the file's size (a list item or map entry
// takes at least one byte of the file, a step at least four: every step
// kind's name has four letters or more). The fixed part, what aliases may
// add to a small file, keeps its parse within ~0.1 s (release) and ~1 s
// under ASan, inside the scenario fuzzer's 10-s timeout for two parses
// (1,000,000 nodes took 15 s per parse under ASan, 0.4 s in release); a
// large file's bound grows with it (its comments too). The largest scenario
// in the repository (topology/all_to_all_8, 42 KB) reads 2,913 nodes and
// 352 steps.
constexpr uint64_t kMaxYamlNodesByAliases = 50000;  // list items and map entries read, aliases included
constexpr uint64_t kMaxStepsByAliases = 5000;       // steps parsed, aliases included
inline uint64_t max_yaml_nodes(size_t file_bytes) { return kMaxYamlNodesByAliases + file_bytes; }
inline uint64_t max_parsed_steps(size_t file_bytes) { return kMaxStepsByAliases + file_bytes / 4; }
constexpr uint64_t kMaxStepRuns = 100000000;    // steps run, each once per repetition of its repeats
constexpr size_t kMaxYamlDepth = 64;            // lists and maps nested (the deepest scenario: 12)
// Names longer than this get no "did you mean" (the search is quadratic)
// and are shortened in messages.
constexpr size_t kMaxSuggestName = 64;
constexpr uint32_t kMaxPsn = 0xFFFFFF;
constexpr uint32_t kMaxQpn = 0xFFFFFF;    // BTH DestQP is 24 bits
// corrupt byte offsets: below the CMAC's default maximum frame length.
constexpr uint32_t kMaxFrameBytes = uint32_t(kCtlRxMaxPacketLen);

// ---- names and suggestions (fields.cpp) -------------------------------------

std::string join(const std::vector<std::string>& v);
// The known name `got` is probably a typo of, or nullptr.
const std::string* close_match(const std::string& got, const std::vector<std::string>& known);
// " (did you mean 'x'?)" for a close candidate, else " (expected one of: ...)".
std::string suggest(const std::string& got, const std::vector<std::string>& known,
                    const char* list_intro = "expected one of");
bool valid_name(const std::string& s);
// `s` for a message: as is up to kMaxSuggestName characters, else its start,
// "..." and its length.
std::string shown(const std::string& s);

// ---- positions and fields (fields.cpp) --------------------------------------

struct Ctx {
  std::string file;
  uint64_t max_nodes = kMaxYamlNodesByAliases;  // max_yaml_nodes(the file's size)
  mutable uint64_t nodes_read = 0;  // list items and map entries, aliases counted each use

  // One more list item or map entry read (at m, key path `key`): refused
  // past max_nodes (an alias bomb: nested aliases expanding without bound).
  void count_node(const YAML::Mark& m, const std::string& key) const {
    if (++nodes_read > max_nodes)
      fail(m, key, fmt::format("the file expands to more than {} YAML nodes (an alias is expanded each time it is "
                               "used): refused",
                               max_nodes));
  }

  SourceLoc loc(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return SourceLoc{file, 0, 0};
    return SourceLoc{file, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& key, const std::string& msg) const {
    const SourceLoc l = loc(m);
    throw ScenarioError(file, l.line, l.column, key, msg);
  }
};

// A YAML value with its full key path and the positions to blame: the value
// itself (fail), or the key that introduced it (fail_key: for a key that is
// not allowed in this context). For list items both are the item.
struct Field {
  const Ctx* ctx = nullptr;
  YAML::Node node;
  std::string path;
  YAML::Mark mark;
  YAML::Mark key_mark;

  SourceLoc loc() const { return ctx->loc(mark); }
  [[noreturn]] void fail(const std::string& msg) const { ctx->fail(mark, path, msg); }
  [[noreturn]] void fail_key(const std::string& msg) const { ctx->fail(key_mark, path, msg); }
};

// `key_mark` is the key's position (or the item's, for list items). yaml-cpp
// places a null value's mark at the next token: blame the key instead.
Field make_field(const Ctx& ctx, const YAML::Node& n, std::string path, const YAML::Mark& key_mark);

std::string describe(const YAML::Node& n);

// ---- typed value readers (fields.cpp) ---------------------------------------

// A plain scalar (not quoted, no explicit tag): the only form numbers and
// booleans may take.
bool is_plain_scalar(const YAML::Node& n);
std::string read_string(const Field& f);
uint64_t read_uint(const Field& f, uint64_t min, uint64_t max);
// Doubles in (lo, hi] (lo exclusive).
double read_double(const Field& f, double lo, double hi);
bool read_bool(const Field& f);
std::string read_name(const Field& f, const char* what);

template <class E>
using EnumTable = std::vector<std::pair<std::string, E>>;

template <class E>
E read_enum(const Field& f, const EnumTable<E>& table) {
  std::vector<std::string> names;
  for (const auto& e : table) names.push_back(e.first);
  if (!f.node.IsScalar()) f.fail("expected one of " + join(names) + ", got " + describe(f.node));
  const std::string s = read_string(f);
  for (const auto& e : table)
    if (e.first == s) return e.second;
  f.fail("unknown value '" + s + "'" + suggest(s, names));
}

// Of two given keys, the one written later in the file (to blame for a
// conflict).
const Field& later(const Field& a, const Field& b);

// The items of a list field, with paths "path[i]".
std::vector<Field> read_list(const Field& f);

// ---- value forms of several step families -------------------------------------

// pmtu of connect and qp_setup_fsm: 256, 512, 1024, 2048 or 4096
// (steps_driver.cpp).
uint32_t read_pmtu(const Field& f);
// rq_element_bytes of connect and qp_setup_fsm: 256 times a power of two
// (steps_driver.cpp).
uint32_t read_rq_element_bytes(const Field& f);
// The address text `s` read from `f`, or "malformed" at f (topology.cpp).
roce::MacAddr parse_mac(const Field& f, const std::string& s);
roce::Ipv4Addr parse_ipv4(const Field& f, const std::string& s);
// A BTH opcode: a name as roce::opcode_name spells it, or a number
// (steps_wire.cpp).
uint8_t read_opcode(const Field& f);
// `opcode:` of match, frame patterns and wait_until: one opcode, a list of
// them, or `any` (the empty list) (steps_wire.cpp).
std::vector<uint8_t> read_opcodes(const Field& f);

// ---- the field reader (fields.cpp) ------------------------------------------

// Reads one YAML map. The constructor gets the keys the map may hold and
// rejects duplicate and unknown keys at once (so a misspelt key is reported
// before the "missing required key" it causes); take()/req() consume keys;
// finish() rejects keys that are known but were not used in this context.
class MapReader {
 public:
  MapReader(const Field& self, std::vector<std::string> known);

  const Field& self() const { return self_; }
  std::string key_path(const std::string& key) const {
    return self_.path.empty() ? key : self_.path + "." + key;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }

  std::optional<Field> take(const std::string& key) {
    Entry* e = find(key);
    if (!e) return std::nullopt;
    e->used = true;
    return make_field(*self_.ctx, e->value, key_path(key), e->key_mark);
  }
  Field req(const std::string& key) {
    if (auto f = take(key)) return *f;
    missing(key);
  }
  // "missing required key" at the map, with an optional reason.
  [[noreturn]] void missing(const std::string& key, const std::string& why = "") const {
    self_.ctx->fail(self_.mark, key_path(key),
                    "missing required key '" + key + "'" + (why.empty() ? "" : ": " + why));
  }

  // Typed shorthands.
  uint64_t u64(const std::string& key, uint64_t def, uint64_t min, uint64_t max) {
    auto f = take(key);
    return f ? read_uint(*f, min, max) : def;
  }
  std::optional<uint64_t> opt_u64(const std::string& key, uint64_t min, uint64_t max) {
    auto f = take(key);
    if (!f) return std::nullopt;
    return read_uint(*f, min, max);
  }
  uint64_t req_u64(const std::string& key, uint64_t min, uint64_t max) {
    return read_uint(req(key), min, max);
  }
  double dbl(const std::string& key, double def, double lo, double hi) {
    auto f = take(key);
    return f ? read_double(*f, lo, hi) : def;
  }
  std::string str(const std::string& key, const std::string& def) {
    auto f = take(key);
    return f ? read_string(*f) : def;
  }
  template <class E>
  E enm(const std::string& key, E def, const EnumTable<E>& table) {
    auto f = take(key);
    return f ? read_enum(*f, table) : def;
  }

  void finish() const {
    for (const auto& e : entries_)
      if (!e.used) self_.ctx->fail(e.key_mark, key_path(e.key), "key '" + e.key + "' is not used here");
  }

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
    bool used;
  };
  Entry* find(const std::string& key) {
    for (auto& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }
  const Entry* find(const std::string& key) const {
    for (const auto& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }

  Field self_;
  std::vector<std::string> known_;
  std::vector<Entry> entries_;
};

// ---- the scenario parser ------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::string file) { ctx_.file = std::move(file); }

  Scenario parse(const std::string& text);  // load.cpp
  // Refuses what yaml-cpp mishandles (load.cpp): lone CRs, a token that
  // stops its document parser (an endless LoadAll), more than one document.
  void precheck(const std::string& text);

 private:
  struct MrSym {
    uint64_t length;
    int line;
  };
  struct MrRef {
    std::string name;
    uint64_t length;
  };
  struct ConnSym {
    std::string client, server, client_mr, server_mr;
    int line;
    std::string program_end;  // the end whose host is a program ("" = none)
  };
  using StepParser = void (Parser::*)(const Field&, const SourceLoc&);

  // -- top level and topology (topology.cpp) --

  void parse_top(const Field& root);
  HandshakeRandom parse_handshake_random(const Field& f);
  void parse_limits(const Field& f);
  void parse_clocks(const Field& f);
  void parse_link(const Field& f);
  void parse_topology(const Field& f);  // after the nodes (a switch's ports name them)
  void check_pfc_headroom(const SwitchTopology& t, const Field& xoff);  // topology.cpp
  void parse_pcie(const Field& f);
  void parse_nodes(const Field& f);
  void parse_node(const std::string& name, const Field& f);
  // mac, ipv6, ip of a node: well-formed, and not used by another node.
  void read_node_addresses(MapReader& r, NodeConfig& n);

  // -- steps (steps.cpp) --

  // Where the steps being parsed go, and what they may contain.
  struct Scope {
    int repeat_line = 0;        // > 0: inside a repeat (the innermost one's line)
    uint32_t repeat_count = 0;  //   and its count
    bool in_branch = false;     // inside a parallel branch (at any depth)
    // Directly in a parallel branch's steps: its barriers, in order, with
    // their values (for error positions). nullptr elsewhere.
    std::vector<Field>* barriers = nullptr;
    // How many times a step here runs: the product of the enclosing repeats'
    // counts (saturating), and the innermost count's position (to blame).
    uint64_t runs = 1;
    YAML::Mark repeat_count_mark;
    std::string repeat_count_path;
  };

  template <class S>
  void emit(S&& s) { out_->push_back(Step(std::forward<S>(s))); }

  static const std::vector<std::pair<std::string, StepParser>>& step_kinds();
  void parse_steps(const Field& f, std::vector<Step>& out, const Scope& scope);
  void parse_step(const Field& item, const std::vector<std::string>& kind_names);

  // Resolve a node name; it must be declared and initialised. drives:
  // the step drives that node (a peer node takes only peer_step_ok's
  // steps); false for a node whose MR a step only reads (recv's equals).
  std::string ref_node(const Field& f, bool must_be_initialised = true, bool drives = true);
  MrRef ref_mr(const Field& f, const std::string& node);
  const ConnSym& ref_conn(const Field& f);
  // The node given in `f` must be one end of `conn`.
  std::string ref_conn_end(const Field& f, const std::string& conn_name, const ConnSym& c);
  // [offset, offset+length) inside an MR of `mr_len` bytes; length resolved
  // to the rest of the MR when absent.
  uint64_t resolve_range(MapReader& r, const Field& offset_f, uint64_t offset, uint64_t mr_len,
                         const std::string& mr_desc);

  // -- driver level (steps_driver.cpp) --

  void step_init(const Field& f, const SourceLoc& loc);
  void step_register_mr(const Field& f, const SourceLoc& loc);
  // pattern / seed / value of fill, check_memory's pattern map and bypass_send.
  PatternSpec read_pattern(MapReader& r);
  void step_fill(const Field& f, const SourceLoc& loc);
  void step_connect(const Field& f, const SourceLoc& loc);
  // ip_version of a connection between two nodes: 4 or 6, which both must
  // have an address of; default 4 when both have `ip`, else 6.
  uint32_t read_ip_version(MapReader& r, const std::string& a, const std::string& b);
  // 'auto' -> nullopt, or a 24-bit PSN.
  std::optional<uint32_t> read_psn(const Field& f);
  uint32_t read_qpn(const Field& f, const std::string& node, const std::string& conn);
  void step_post(const Field& f, const SourceLoc& loc);
  WqeSpec read_wqe(const Field& f, const std::string& node, const std::string& peer_mr,
                   const char* peer_mr_key, const std::string& conn);
  template <class Step, class ReadItem>
  void read_waiting(MapReader& r, Step& s, const char* what, ReadItem read_item);
  void step_wait_completions(const Field& f, const SourceLoc& loc);
  void step_recv(const Field& f, const SourceLoc& loc);
  void step_check_memory(const Field& f, const SourceLoc& loc);
  void step_wait(const Field& f, const SourceLoc& loc);

  // -- register level (steps_regs.cpp) --

  struct RegTarget {
    RegRef ref;
    uint32_t width = 32;  // bits of the register, or of the field
    std::string what;     // for messages: "register XRNICCONF", "field QPCONFi.PMTU (3 bits)"
  };

  static uint32_t width_mask(uint32_t width) { return width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1; }
  // node / reg / qp / mr / field of a register reference, read from `r`. The
  // node need not be initialised: register steps may bring a node up.
  RegTarget read_reg_ref(MapReader& r);
  // A value that must fit the register or field of `t`.
  static uint32_t read_reg_value(const Field& f, const RegTarget& t);
  // value (required) and mask (default: every bit of the register or field)
  // of reg_expect, reg_poll and wait_until; value must lie inside mask.
  static void read_value_mask(MapReader& r, const RegTarget& t, uint32_t& value, uint32_t& mask);
  void step_reg_write(const Field& f, const SourceLoc& loc);
  void step_debug_preset(const Field& f, const SourceLoc& loc);
  void step_reg_read(const Field& f, const SourceLoc& loc);
  void step_reg_expect(const Field& f, const SourceLoc& loc);
  void step_reg_poll(const Field& f, const SourceLoc& loc);

  // -- host memory (steps_memory.cpp) --

  // node, addr and one of bytes / u32 / u64 (little-endian), inside the
  // node's memory.
  void read_mem_access(const Field& f, std::string& node, uint64_t& addr, std::vector<uint8_t>& bytes,
                       bool* stray = nullptr);
  void step_mem_write(const Field& f, const SourceLoc& loc);
  void step_mem_expect(const Field& f, const SourceLoc& loc);

  // -- MRs and connections (steps_conn.cpp) --

  void step_deregister_mr(const Field& f, const SourceLoc& loc);
  void step_connect_reject(const Field& f, const SourceLoc& loc);
  void step_disconnect(const Field& f, const SourceLoc& loc);
  // After disconnect or recover: the connection's name and its QPs are free again.
  void release_conn(const ConnSym& c, const std::string& name, int line);
  void step_hw_handshake(const Field& f, const SourceLoc& loc);
  void step_recover(const Field& f, const SourceLoc& loc);

  // -- the QP-setup offload (steps_qp_setup.cpp) --

  // QPs a qp_setup step set up (expecting success) and not released since.
  struct FsmQp {
    QpSetupStep setup;
    std::string adopted;           // the qp_adopt connection that took it ("" = none)
  };
  // One end of a qp_adopt connection while it is resolved.
  struct AdoptSide {
    QpAdoptStep::End* e;
    const std::optional<Field>* qf;  // its client_qp / server_qp, if given
    const char* key;
    FsmQp* fsm = nullptr;            // set up by qp_setup (else by the driver)
  };

  NodeConfig::QpSetupFsm read_qp_setup_fsm(const Field& f, const NodeConfig& n);
  template <class S>
  const NodeConfig& read_fsm_common(MapReader& r, S& s, uint8_t ok_state);
  void step_qp_setup(const Field& f, const SourceLoc& loc);
  void step_qp_release(const Field& f, const SourceLoc& loc);
  void step_qp_adopt(const Field& f, const SourceLoc& loc);
  void find_adopt_ends(const MapReader& r, AdoptSide (&sides)[2]);
  void resolve_adopt_ends(const MapReader& r, AdoptSide (&sides)[2]);

  // -- the wire (steps_wire.cpp) --

  // "X->Y" between two different declared nodes (or a node and `switch`).
  Direction read_dir(const Field& f);
  // Both directions of a two-node topology; `fail` reports otherwise.
  template <class Fail>
  std::vector<Direction> both_dirs(Fail&& fail) {
    if (sc_.nodes.size() != 2)
      fail(fmt::format("'both' means both directions of a two-node topology, and this one has {} node{}: "
                       "give 'X->Y'",
                       sc_.nodes.size(), sc_.nodes.size() == 1 ? "" : "s"));
    return {Direction{sc_.nodes[0].name, sc_.nodes[1].name}, Direction{sc_.nodes[1].name, sc_.nodes[0].name}};
  }
  // "X->Y" or "both".
  std::vector<Direction> read_dirs(const Field& f);
  // One direction only (expect_frames, wait_until): "both" is an error.
  Direction read_one_dir(const Field& f, const char* why);
  FrameMatch read_match(const Field& f);
  void step_fault(const Field& f, const SourceLoc& loc);
  void step_link(const Field& f, const SourceLoc& loc);
  void step_bypass_send(const Field& f, const SourceLoc& loc);
  void step_expect_bypass(const Field& f, const SourceLoc& loc);

  // -- expectations on the wire and time (steps_expect.cpp) --

  void step_expect_frames(const Field& f, const SourceLoc& loc);
  void step_expect_idle(const Field& f, const SourceLoc& loc);
  void step_program(const Field& f, const SourceLoc& loc);
  void step_replay(const Field& f, const SourceLoc& loc);  // steps_replay.cpp
  void step_expect_compliance(const Field& f, const SourceLoc& loc);
  void step_wait_until(const Field& f, const SourceLoc& loc);
  void step_expect_switch(const Field& f, const SourceLoc& loc);
  void step_expect_qp(const Field& f, const SourceLoc& loc);

  // -- control: repeat, parallel, barrier (steps_control.cpp) --

  void step_repeat(const Field& f, const SourceLoc& loc);
  void step_parallel(const Field& f, const SourceLoc& loc);
  void step_barrier(const Field& f, const SourceLoc& loc);

  Ctx ctx_;
  Scenario sc_;
  std::vector<Step>* out_ = nullptr;  // where emit() puts steps
  Scope scope_;
  // Expansion bounds (max_parsed_steps, kMaxStepRuns): steps parsed and run
  // so far, and the top-level step being parsed (blamed for an alias bomb).
  uint64_t max_steps_ = kMaxStepsByAliases;
  uint64_t steps_parsed_ = 0;
  uint64_t step_runs_ = 0;
  int step_depth_ = 0;
  // A pointer, not a copy: assigning a Field assigns its YAML::Node, which
  // in yaml-cpp rewrites the node it referred to (the tree would change).
  const Field* top_step_ = nullptr;
  std::map<std::string, size_t> node_index_;
  std::map<std::string, int> initialised_;  // node -> line of its init step
  // kind: peer (peer.cpp): the node's keys; whether step `kind` may name a
  // peer node; a connect step with a peer end.
  void read_node_peer(MapReader& r, NodeConfig& n);
  static bool peer_step_ok(const std::string& kind);
  void check_peer_connect(const MapReader& r, const ConnectStep& s);
  bool peer_node(const std::string& n) const {
    auto it = node_index_.find(n);
    return it != node_index_.end() && sc_.nodes[it->second].peer.has_value();
  }
  std::string step_kind_;  // the step being parsed (peer_step_ok)
  bool program_node(const std::string& n) const {  // host: program
    auto it = node_index_.find(n);
    return it != node_index_.end() && sc_.nodes[it->second].host_program;
  }
  std::map<std::string, std::map<std::string, MrSym>> mrs_;
  std::map<std::string, ConnSym> conns_;
  std::map<std::string, std::map<uint32_t, std::string>> qp_used_;  // node -> QPN -> connection
  std::map<std::string, uint32_t> conn_count_;
  std::map<std::string, std::map<std::string, int>> deregistered_;  // node -> MR -> line of deregister_mr
  std::map<std::string, int> disconnected_;                         // connection -> line of disconnect
  std::map<std::string, std::map<uint32_t, FsmQp>> fsm_qps_;     // node -> QPN -> its setup
};

}  // namespace ernic::scenario_parse
