// Tests for model/scenario/scenario.h: errors of the file as a whole: empty or
// not a map, top-level keys, YAML inputs yaml-cpp mishandles, a huge
// unknown name (refused at once, also through the command line), a file
// that cannot be read.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include <chrono>
#include <fstream>
#include <string>

#include "model/scenario/scenario.h"
#include "tb/common/run_command.h"
#include "tb/scenario/scenario_fixtures.h"

using namespace ernic;
using namespace ernic::test;

TEST(ScenarioErrors, TopLevel) {
  EXPECT_NE(parse_error("").message().find("empty file"), std::string::npos);
  // With a place, 1:1, like every error from text (tb/fuzz, issue 20).
  EXPECT_EQ(parse_error("").line(), 1);
  EXPECT_EQ(parse_error("").column(), 1);
  EXPECT_EQ(parse_error("# only a comment\n").line(), 1);
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

// More of issue 20: a token that stops yaml-cpp's document parser anywhere
// (after a first document too) is refused, not looped on; two documents are
// still "exactly one YAML document"; CR LF line ends are fine.
TEST(ScenarioErrors, YamlInputsYamlCppMishandles) {
  const ScenarioError after_seq = parse_error("- a\n,b\n");
  EXPECT_EQ(after_seq.line(), 2);
  EXPECT_EQ(after_seq.column(), 1);
  EXPECT_EQ(after_seq.message(), "YAML syntax error: unexpected ',' (a separator of [ ] and { } lists, here outside one)");
  const ScenarioError lone = parse_error(",");
  EXPECT_EQ(lone.line(), 1);
  EXPECT_NE(lone.message().find("unexpected ','"), std::string::npos) << lone.what();
  const ScenarioError two = parse_error("scenario: a\n---\n,\n");
  EXPECT_EQ(two.line(), 3);
  const ScenarioError cr = parse_error("scenario: t\r\nnodes: {}\rsteps: []\n");
  EXPECT_EQ(cr.line(), 2);
  EXPECT_EQ(cr.column(), 10);
  EXPECT_NE(cr.message().find("lone carriage return"), std::string::npos) << cr.what();
  // CR LF throughout parses as LF does (the error is the missing init, on line 3).
  const ScenarioError crlf = parse_error("scenario: t\r\nnodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\r\n"
                                         "steps: []\r\n");
  EXPECT_EQ(crlf.key(), "steps");
  EXPECT_EQ(crlf.line(), 3);
}

// A 1 MB unknown register name took ~28 s to refuse (a quadratic "did you
// mean" per known name): names over 64 characters get no suggestion, and
// the message shows the first 64 and the length.
TEST(ScenarioErrors, HugeUnknownNameIsRefusedAtOnce) {
  const std::string name(1u << 20, 'X');
  const auto t0 = std::chrono::steady_clock::now();
  const ScenarioError e = parse_error(std::string(kHead) + "  - reg_expect: { node: A, reg: " + name + ", value: 0 }\n");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0) << "28 s per MB before the bound";
  EXPECT_EQ(e.key(), "steps[3].reg_expect.reg");
  EXPECT_EQ(e.line(), 9);
  EXPECT_EQ(e.message(), "unknown register '" + std::string(64, 'X') +
                             "... (1048576 characters)' (register names as PG332 spells them: see "
                             "model/regs/ernic_regs.def)");
  // Short names keep their suggestions.
  EXPECT_NE(parse_error(std::string(kHead) + "  - reg_expect: { node: A, reg: STATQPI, qp: 2, value: 0 }\n")
                .message()
                .find("did you mean"),
            std::string::npos);
  // Through the command line: exit 2, naming the place, at once.
  const std::string path = ::testing::TempDir() + "/huge_register_name.yaml";
  {
    std::ofstream f(path);
    f << kHead << "  - reg_expect: { node: A, reg: " << name << ", value: 0 }\n";
  }
  const std::string cmd = std::string(ERNIC_SIM_PROGRAM) + " run '" + path + "' --quiet 2>&1 >/dev/null";
  int code = -1;
  const std::string err = ernic::test::run_command(cmd, &code);
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find(path + ":9:33: key 'steps[3].reg_expect.reg': unknown register 'XXXX"), std::string::npos) << err;
  EXPECT_LT(err.size(), 1000u);
  std::remove(path.c_str());
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
