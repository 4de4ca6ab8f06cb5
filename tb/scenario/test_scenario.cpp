// Tests for model/system/scenario: the full example parses to the right
// values (defaults applied), every file in bad/ fails with the exact
// position and key, the fill generator is deterministic, and the examples in
// scenarios/README.md and the files under scenarios/ parse.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/system/scenario.h"

namespace fs = std::filesystem;
using namespace ernic;

namespace {

const std::string kDir = SCENARIO_TEST_DIR;

template <class T>
const T& step_as(const Scenario& s, size_t i) {
  EXPECT_LT(i, s.steps.size());
  const T* p = std::get_if<T>(&s.steps.at(i));
  EXPECT_NE(p, nullptr) << "step " << i << " is " << step_kind(s.steps.at(i));
  return *p;
}

ScenarioError parse_error(const std::string& text) {
  try {
    parse_scenario(text, "t.yaml");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << text;
  return ScenarioError("", 0, 0, "", "");
}

}  // namespace

// --------------------------------------------------------- valid example ---

TEST(ScenarioParse, FullExample) {
  const std::string path = kDir + "/good/full.yaml";
  const Scenario s = load_scenario(path);
  EXPECT_EQ(s.file, path);
  EXPECT_EQ(s.name, "full_example");
  EXPECT_EQ(s.description, "RC write, send and read between two nodes");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.limits.sim_time_us, 5000u);
  EXPECT_EQ(s.limits.watchdog_us, 200u);  // default
  EXPECT_DOUBLE_EQ(s.clocks.core_mhz, 250.0);
  EXPECT_DOUBLE_EQ(s.clocks.cmac_mhz, 322.265625);  // default
  EXPECT_EQ(s.link.rate_gbps, 100u);                // default
  EXPECT_EQ(s.link.delay_ns, 500u);

  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].name, "A");
  EXPECT_EQ(s.nodes[0].mac.str(), "02:00:00:00:00:0a");
  EXPECT_EQ(s.nodes[0].ip.v, 0x0A000001u);
  EXPECT_EQ(s.nodes[0].num_qp, 8u);       // default
  EXPECT_EQ(s.nodes[0].memory_mib, 64u);  // default
  EXPECT_EQ(s.nodes[0].loc.line, 13);
  EXPECT_EQ(s.nodes[1].name, "B");
  EXPECT_EQ(s.nodes[1].mac.str(), "02:00:00:00:00:0b");
  EXPECT_EQ(s.nodes[1].ip.str(), "10.0.0.2");
  EXPECT_EQ(s.nodes[1].num_qp, 16u);
  EXPECT_EQ(s.nodes[1].memory_mib, 128u);
  EXPECT_EQ(s.nodes[2].name, "C");
  ASSERT_NE(s.find_node("B"), nullptr);
  EXPECT_EQ(s.find_node("B")->num_qp, 16u);
  EXPECT_EQ(s.find_node("Z"), nullptr);

  ASSERT_EQ(s.steps.size(), 12u);
  for (const auto& st : s.steps) EXPECT_EQ(step_loc(st).file, path);

  const auto& init = step_as<InitStep>(s, 0);
  EXPECT_EQ(init.nodes, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(init.loc.line, 24);
  EXPECT_EQ(init.loc.column, 5);
  EXPECT_STREQ(step_kind(s.steps[0]), "init");

  const auto& mr1 = step_as<RegisterMrStep>(s, 1);
  EXPECT_EQ(mr1.node, "A");
  EXPECT_EQ(mr1.name, "src");
  EXPECT_EQ(mr1.length, 65536u);
  EXPECT_EQ(mr1.access, Access::rw);  // default
  EXPECT_EQ(mr1.pd, 1u);              // default
  EXPECT_EQ(mr1.loc.line, 25);
  EXPECT_EQ(mr1.loc.column, 5);
  const auto& mr2 = step_as<RegisterMrStep>(s, 2);
  EXPECT_EQ(mr2.access, Access::w);
  EXPECT_EQ(mr2.pd, 3u);

  const auto& f1 = step_as<FillStep>(s, 3);
  EXPECT_EQ(f1.pattern, Pattern::random);
  EXPECT_EQ(f1.seed, 42u);  // the scenario seed
  EXPECT_EQ(f1.offset, 0u);
  EXPECT_EQ(f1.length, 65536u);  // whole MR
  const auto& f2 = step_as<FillStep>(s, 4);
  EXPECT_EQ(f2.node, "B");
  EXPECT_EQ(f2.mr, "dst");
  EXPECT_EQ(f2.pattern, Pattern::constant);
  EXPECT_EQ(f2.value, 0xAA);
  EXPECT_EQ(f2.offset, 4096u);
  EXPECT_EQ(f2.length, 100u);

  const auto& c = step_as<ConnectStep>(s, 5);
  EXPECT_EQ(c.name, "c1");
  EXPECT_EQ(c.client, "A");
  EXPECT_EQ(c.server, "B");
  EXPECT_EQ(c.client_mr, "src");
  EXPECT_EQ(c.server_mr, "dst");
  EXPECT_EQ(c.pmtu, 1024u);
  EXPECT_EQ(c.sq_depth, 64u);  // default
  EXPECT_EQ(c.rq_depth, 16u);  // default
  EXPECT_EQ(c.client_psn, std::optional<uint32_t>(100));  // from start_psn
  EXPECT_EQ(c.server_psn, std::nullopt);                  // auto overrides start_psn
  EXPECT_EQ(c.client_qp, std::optional<uint32_t>(5));
  EXPECT_EQ(c.server_qp, std::nullopt);
  EXPECT_EQ(c.loc.line, 29);

  const auto& p = step_as<PostStep>(s, 6);
  EXPECT_EQ(p.conn, "c1");
  EXPECT_EQ(p.node, "A");
  EXPECT_EQ(p.doorbell, Doorbell::each);
  EXPECT_EQ(p.repeat, 2u);
  ASSERT_EQ(p.wqes.size(), 2u);
  EXPECT_EQ(p.wqes[0].opcode, WqeOpcode::write);
  EXPECT_EQ(p.wqes[0].wr_id, 1u);
  EXPECT_EQ(p.wqes[0].local_mr, "src");
  EXPECT_EQ(p.wqes[0].local_offset, 0u);
  EXPECT_EQ(p.wqes[0].length, 65536u);
  EXPECT_EQ(p.wqes[0].remote_offset, 0u);
  EXPECT_EQ(p.wqes[0].immdt, 0u);
  EXPECT_EQ(p.wqes[0].loc.line, 45);
  EXPECT_EQ(p.wqes[0].loc.column, 11);
  EXPECT_EQ(p.wqes[1].opcode, WqeOpcode::send_imm);
  EXPECT_EQ(p.wqes[1].local_offset, 64u);
  EXPECT_EQ(p.wqes[1].immdt, 0x12345678u);

  const auto& w = step_as<WaitCompletionsStep>(s, 7);
  EXPECT_EQ(w.conn, "c1");
  EXPECT_EQ(w.node, "A");
  EXPECT_EQ(w.count, 2u);  // default: the number of expect entries
  EXPECT_EQ(w.timeout_us, 500u);
  ASSERT_EQ(w.expect.size(), 2u);
  EXPECT_EQ(w.expect[0].wr_id, std::optional<uint32_t>(1));
  EXPECT_EQ(w.expect[0].opcode, std::optional<WqeOpcode>(WqeOpcode::write));
  EXPECT_EQ(w.expect[0].error, std::optional<bool>(false));
  EXPECT_EQ(w.expect[1].wr_id, std::optional<uint32_t>(2));
  EXPECT_EQ(w.expect[1].opcode, std::nullopt);
  EXPECT_EQ(w.expect[1].error, std::nullopt);

  const auto& m1 = step_as<CheckMemoryStep>(s, 8);
  EXPECT_EQ(m1.node, "B");
  EXPECT_EQ(m1.mr, "dst");
  EXPECT_EQ(m1.offset, 0u);
  EXPECT_EQ(m1.length, 65536u);
  ASSERT_TRUE(m1.equals.has_value());
  EXPECT_FALSE(m1.pattern.has_value());
  EXPECT_EQ(m1.equals->node, "A");
  EXPECT_EQ(m1.equals->mr, "src");
  EXPECT_EQ(m1.equals->offset, 0u);
  const auto& m2 = step_as<CheckMemoryStep>(s, 9);
  EXPECT_EQ(m2.offset, 8u);
  EXPECT_EQ(m2.length, 16u);
  ASSERT_TRUE(m2.pattern.has_value());
  EXPECT_EQ(m2.pattern->pattern, Pattern::random);
  EXPECT_EQ(m2.pattern->seed, 42u);

  EXPECT_EQ(step_as<WaitStep>(s, 10).us, 10u);
  EXPECT_EQ(step_as<InitStep>(s, 11).nodes, (std::vector<std::string>{"C"}));
  EXPECT_STREQ(step_kind(s.steps[11]), "init");
}

TEST(ScenarioParse, MinimalDefaults) {
  const Scenario s = parse_scenario(
      "scenario: m\nnodes:\n  N1: {mac: '02:00:00:00:00:01', ip: 192.168.1.1}\nsteps:\n  - init: N1\n",
      "m.yaml");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.limits.sim_time_us, 10000u);
  EXPECT_EQ(s.limits.watchdog_us, 200u);
  EXPECT_DOUBLE_EQ(s.clocks.core_mhz, 200.0);
  EXPECT_DOUBLE_EQ(s.clocks.cmac_mhz, 322.265625);
  EXPECT_EQ(s.link.rate_gbps, 100u);
  EXPECT_EQ(s.link.delay_ns, 100u);
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].ip.v, 0xC0A80101u);
  EXPECT_EQ(step_loc(s.steps[0]).str(), "m.yaml:5:5");
}

// ------------------------------------------------------------- bad files ---

struct BadCase {
  const char* file;
  int line;
  int column;
  const char* key;
  const char* message_part;  // a substring of message()
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class ScenarioBadFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(ScenarioBadFile, ExactError) {
  const BadCase& c = GetParam();
  const std::string path = kDir + "/bad/" + c.file;
  try {
    load_scenario(path);
    FAIL() << path << " parsed without error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << e.what();
    // what() = FILE:LINE:COLUMN: key 'KEY': message
    std::string want = path + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
    if (*c.key) want += std::string("key '") + c.key + "': ";
    want += e.message();
    EXPECT_EQ(std::string(e.what()), want);
  }
}

const BadCase kBadCases[] = {
    {"unknown_top_key.yaml", 3, 1, "seeds", "unknown key 'seeds' (did you mean 'seed'?)"},
    {"unknown_step_key.yaml", 11, 40, "steps[1].register_mr.lenght", "unknown key 'lenght' (did you mean 'length'?)"},
    {"misspelled_step_kind.yaml", 11, 5, "steps[1].regster_mr",
     "unknown step kind 'regster_mr' (did you mean 'register_mr'?)"},
    {"string_for_integer.yaml", 14, 15, "steps[1].register_mr.length", "expected a non-negative integer"},
    {"negative_number.yaml", 3, 13, "link.delay_ns", "must not be negative"},
    {"out_of_range.yaml", 6, 13, "nodes.A.num_qp", "1000 is out of range [8, 256]"},
    {"missing_nodes.yaml", 1, 1, "nodes", "missing required key 'nodes'"},
    {"missing_node_ip.yaml", 7, 5, "nodes.B.ip", "missing required key 'ip'"},
    {"malformed_mac.yaml", 4, 10, "nodes.A.mac", "malformed MAC address"},
    {"malformed_ip.yaml", 5, 9, "nodes.A.ip", "malformed IPv4 address '10.0.0.256'"},
    {"step_two_keys.yaml", 11, 5, "steps[0]", "exactly one key"},
    {"undefined_mr.yaml", 12, 26, "steps[2].fill.mr", "unknown MR 'scr' on node A (did you mean 'src'?)"},
    {"undefined_node.yaml", 10, 18, "steps[0].init[2]", "unknown node 'X'"},
    {"undefined_conn.yaml", 15, 13, "steps[4].post.conn", "unknown connection 'c2'"},
    {"yaml_syntax.yaml", 11, 9, "", "YAML syntax error"},
    {"duplicate_mr.yaml", 12, 35, "steps[2].register_mr.name", "MR 'dst' is already registered on node B (at line 11)"},
    {"bad_wqe_opcode.yaml", 19, 21, "steps[4].post.wqes[1].opcode", "unknown value 'wrte' (did you mean 'write'?)"},
    {"link_rate.yaml", 3, 14, "link.rate_gbps", "only 100"},
    {"duplicate_key.yaml", 10, 1, "seed", "duplicate key (first given at line 2)"},
    {"check_equals_and_pattern.yaml", 16, 7, "steps[2].check_memory.pattern", "not both"},
    {"used_before_init.yaml", 11, 26, "steps[1].register_mr.node", "before an init step"},
    {"fill_out_of_mr.yaml", 12, 76, "steps[2].fill.length", "exceeds MR src (4096 bytes)"},
};

INSTANTIATE_TEST_SUITE_P(Files, ScenarioBadFile, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           std::string n = info.param.file;
                           n = n.substr(0, n.find('.'));
                           return n;
                         });

TEST(ScenarioBadFile, EveryFileHasACase) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kDir + "/bad")) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const bool covered = std::any_of(std::begin(kBadCases), std::end(kBadCases),
                                     [&](const BadCase& c) { return f == c.file; });
    EXPECT_TRUE(covered) << "bad/" << f << " has no expected error in kBadCases";
  }
}

// ------------------------------------------------------- inline messages ---

const char* kHead =
    "scenario: t\n"
    "nodes:\n"
    "  A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\n"
    "  B: {mac: '02:00:00:00:00:0b', ip: 10.0.0.2}\n"
    "steps:\n"
    "  - init: [A, B]\n"
    "  - register_mr: {node: A, name: src, length: 4096}\n"
    "  - register_mr: {node: B, name: dst, length: 4096}\n";  // steps[2], line 8

TEST(ScenarioErrors, Messages) {
  struct Case {
    std::string extra;
    int line, column;
    std::string key, part;
  };
  const Case cases[] = {
      {"  - connect: {name: c, client: A, server: A}\n", 9, 43, "steps[3].connect.server", "different nodes"},
      {"  - connect: {name: c, client: A, server: B, pmtu: 1500}\n", 9, 52, "steps[3].connect.pmtu",
       "pmtu must be one of"},
      {"  - connect: {name: c, client: A, server: B, client_psn: 0x1000000}\n", 9, 58,
       "steps[3].connect.client_psn", "out of range"},
      {"  - connect: {name: c, client: A, server: B, start_psn: never}\n", 9, 57, "steps[3].connect.start_psn",
       "expected 'auto'"},
      {"  - connect: {name: c, client: A, server: B, client_qp: 1}\n", 9, 57, "steps[3].connect.client_qp",
       "out of range [2, 8]"},
      {"  - connect: {name: c, client: A, server: B}\n  - post: {conn: c, node: A, wqes: [{opcode: write, "
       "wr_id: 1, local_mr: src, length: 8}]}\n",
       10, 46, "steps[4].post.wqes[0].opcode", "no server_mr"},
      {"  - connect: {name: c, client: A, server: B, server_mr: dst}\n  - post: {conn: c, node: A, wqes: "
       "[{opcode: send, wr_id: 1, local_mr: src, length: 8, remote_offset: 0}]}\n",
       10, 88, "steps[4].post.wqes[0].remote_offset", "does not apply to send"},
      {"  - connect: {name: c, client: A, server: B, server_mr: dst}\n  - post: {conn: c, node: A, wqes: "
       "[{opcode: send, wr_id: 70000, local_mr: src, length: 8}]}\n",
       10, 59, "steps[4].post.wqes[0].wr_id", "out of range [0, 65535]"},
      {"  - connect: {name: c, client: A, server: B}\n  - connect: {name: c, client: B, server: A}\n", 10, 21,
       "steps[4].connect.name", "already exists"},
      {"  - connect: {name: c, client: A, server: B}\n  - wait_completions: {conn: c, node: A, count: 1, "
       "expect: [{}, {}]}\n",
       10, 60, "steps[4].wait_completions.expect", "2 expected completions but count is 1"},
      {"  - connect: {name: c, client: A, server: B}\n  - wait_completions: {conn: c, node: A, expect: "
       "[{error: no}]}\n",
       10, 59, "steps[4].wait_completions.expect[0].error", "expected true or false"},
      {"  - fill: {node: A, mr: src, pattern: zero, seed: 3}\n", 9, 45, "steps[3].fill.seed",
       "only to pattern: random"},
      {"  - fill: {node: A, mr: src, pattern: constant, value: 256}\n", 9, 56, "steps[3].fill.value",
       "out of range [0, 255]"},
      {"  - check_memory: {node: A, mr: src}\n", 9, 19, "steps[3].check_memory", "needs one of"},
      {"  - check_memory: {node: A, mr: src, equals: {node: B, mr: dst, offset: 1}}\n", 9, 73,
       "steps[3].check_memory.equals.offset", "exceeds MR dst"},
      {"  - wait: {us: 1.5}\n", 9, 16, "steps[3].wait.us", "expected a non-negative integer, got '1.5'"},
      {"  - wait: {ms: 1}\n", 9, 12, "steps[3].wait.ms", "unknown key 'ms' (did you mean 'us'?)"},
      {"  - wait: {time: 1}\n", 9, 12, "steps[3].wait.time", "unknown key 'time' (known keys: us)"},
      {"  - wait:\n", 9, 5, "steps[3].wait", "expected a map, got nothing"},
      {"  - init: [A]\n", 9, 12, "steps[3].init[0]", "node A is already initialised (at line 6)"},
      {"  - register_mr: {node: A, name: big, length: 67108865}\n", 9, 47, "steps[3].register_mr.length",
       "exceeds node A's memory"},
      {"  - register_mr: {node: A, name: x, length: 8, access: rx}\n", 9, 56, "steps[3].register_mr.access",
       "unknown value 'rx'"},
      {"  - 5\n", 9, 5, "steps[3]", "a step is a map with one key"},
  };
  for (const Case& c : cases) {
    const ScenarioError e = parse_error(std::string(kHead) + c.extra);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << e.what();
  }
}

TEST(ScenarioErrors, TopLevel) {
  EXPECT_NE(parse_error("").message().find("empty file"), std::string::npos);
  EXPECT_EQ(parse_error("- a\n").key(), "");
  EXPECT_NE(parse_error("- a\n").message().find("expected a map"), std::string::npos);
  const ScenarioError two = parse_error("scenario: a\n---\nscenario: b\n");
  EXPECT_EQ(two.line(), 3);
  const ScenarioError core = parse_error(
      "scenario: t\nclocks: {core_mhz: 0}\nnodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\n"
      "steps: [init: A]\n");
  EXPECT_EQ(core.key(), "clocks.core_mhz");
  EXPECT_EQ(core.line(), 2);
  EXPECT_EQ(core.column(), 20);
  const ScenarioError dupip = parse_error(
      "scenario: t\nnodes:\n  A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\n"
      "  B: {mac: '02:00:00:00:00:0b', ip: 10.0.0.1}\nsteps: [init: A]\n");
  EXPECT_EQ(dupip.key(), "nodes.B.ip");
  EXPECT_NE(dupip.message().find("already used by node A"), std::string::npos);
  const ScenarioError badname = parse_error(
      "scenario: t\nnodes:\n  9A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}\nsteps: [init: A]\n");
  EXPECT_EQ(badname.key(), "nodes.9A");
  EXPECT_EQ(badname.line(), 3);
  EXPECT_EQ(badname.column(), 3);
  const ScenarioError nosteps =
      parse_error("scenario: t\nnodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\nsteps: []\n");
  EXPECT_EQ(nosteps.key(), "steps");
  EXPECT_NE(nosteps.message().find("at least one step"), std::string::npos);
}

TEST(ScenarioErrors, UnreadableFile) {
  try {
    load_scenario(kDir + "/does/not/exist.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.key(), "");
    EXPECT_EQ(std::string(e.what()).rfind(kDir + "/does/not/exist.yaml: cannot open file", 0), 0u) << e.what();
  }
}

// -------------------------------------------------------- fill generator ---

TEST(FillPattern, RandomIsMt19937_64LittleEndian) {
  // The first output of std::mt19937_64 with the default seed (5489) is fixed
  // by the C++ standard's algorithm: 14514284786278117030.
  uint8_t b[10];
  fill_pattern(b, sizeof b, Pattern::random, 5489, 0, 0);
  const uint64_t first = 14514284786278117030ull;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], uint8_t(first >> (8 * i))) << i;
  std::mt19937_64 g(5489);
  g();
  const uint64_t second = g();
  EXPECT_EQ(b[8], uint8_t(second));
  EXPECT_EQ(b[9], uint8_t(second >> 8));
}

TEST(FillPattern, SubRangesRegenerate) {
  for (Pattern p : {Pattern::random, Pattern::incrementing, Pattern::zero, Pattern::constant}) {
    std::vector<uint8_t> whole(1000);
    fill_pattern(whole.data(), whole.size(), p, 7, 0x5A, 0);
    for (size_t off : {1u, 7u, 8u, 13u, 300u, 999u}) {
      std::vector<uint8_t> part(1000 - off);
      fill_pattern(part.data(), part.size(), p, 7, 0x5A, off);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + off)) << to_string(p) << " " << off;
    }
  }
  uint8_t inc[4];
  fill_pattern(inc, 4, Pattern::incrementing, 0, 0, 254);
  EXPECT_EQ(inc[0], 254);
  EXPECT_EQ(inc[1], 255);
  EXPECT_EQ(inc[2], 0);
  EXPECT_EQ(inc[3], 1);
  uint8_t k[3];
  fill_pattern(k, 3, Pattern::constant, 0, 0xC3, 0);
  EXPECT_EQ(k[2], 0xC3);
}

// ------------------------------------------- README and scenario files ----

// Every ```yaml block of scenarios/README.md that starts with "scenario:" is a
// whole scenario and must parse.
TEST(ScenarioDocs, ReadmeExamplesParse) {
  std::ifstream in(std::string(SCENARIO_ROOT_DIR) + "/README.md");
  ASSERT_TRUE(in) << "scenarios/README.md missing";
  std::string line, block;
  bool in_yaml = false;
  int block_line = 0, n = 0, lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!in_yaml && line.rfind("```yaml", 0) == 0) {
      in_yaml = true;
      block.clear();
      block_line = lineno + 1;
    } else if (in_yaml && line.rfind("```", 0) == 0) {
      in_yaml = false;
      if (block.rfind("scenario:", 0) == 0) {
        ++n;
        try {
          parse_scenario(block, "README.md@" + std::to_string(block_line));
        } catch (const ScenarioError& e) {
          ADD_FAILURE() << e.what();
        }
      }
    } else if (in_yaml) {
      block += line + "\n";
    }
  }
  EXPECT_GE(n, 1) << "no whole-scenario example in scenarios/README.md";
}

// Every scenario file in the repository parses.
TEST(ScenarioDocs, RepositoryScenariosParse) {
  const fs::path root = SCENARIO_ROOT_DIR;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      load_scenario(f.string());
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}
