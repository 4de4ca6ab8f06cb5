// Tests for model/scenario/scenario.h: inline step texts after kHead each fail
// at the exact line, column and key with the expected message (the first
// steps, then issue 3's registers, memory, faults, frames, control and the
// pcie and datapath keys).
#include <gtest/gtest.h>

#include <string>

#include "model/scenario/scenario.h"
#include "tb/scenario/scenario_fixtures.h"

using namespace ernic;
using namespace ernic::test;

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
      {"  - wait: {time: 1}\n", 9, 12, "steps[3].wait.time", "unknown key 'time' (known keys: us, until_us)"},
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

TEST(ScenarioErrors, Issue3Messages) {
  struct Case {
    std::string extra;
    int line, column;
    std::string key, part;
  };
  // kHead: A and B initialised, MR src on A and dst on B; the next step is
  // steps[3], at line 9.
  const std::string conn = "  - connect: {name: c, client: A, server: B, server_mr: dst}\n";  // steps[3]
  const Case cases[] = {
      {"  - reg_write: {node: A, reg: qpconfi, qp: 2, value: 1}\n", 9, 31, "steps[3].reg_write.reg",
       "did you mean 'QPCONFi'? register names are case-sensitive"},
      {"  - reg_write: {node: A, reg: NOSUCHREGISTERATALL, value: 1}\n", 9, 31, "steps[3].reg_write.reg",
       "see model/regs/ernic_regs.def"},
      {"  - reg_write: {node: A, reg: QPCONFi, qp: 9, value: 1}\n", 9, 44, "steps[3].reg_write.qp",
       "9 is out of range [1, 8]"},
      {"  - reg_write: {node: A, reg: QPCONFi, qp: 2, mr: 1, value: 1}\n", 9, 47, "steps[3].reg_write.mr",
       "mr does not apply: QPCONFi is a per-QP register"},
      {"  - reg_write: {node: A, reg: PDPDNUM, value: 1}\n", 9, 16, "steps[3].reg_write.mr",
       "missing required key 'mr': PDPDNUM is an MR-table register"},
      {"  - reg_write: {node: A, reg: PDPDNUM, mr: 256, value: 1}\n", 9, 44, "steps[3].reg_write.mr",
       "256 is out of range [0, 255]"},
      {"  - reg_write: {node: A, reg: PDPDNUM, mr: 0, qp: 2, value: 1}\n", 9, 47, "steps[3].reg_write.qp",
       "qp does not apply: PDPDNUM is an MR-table register"},
      {"  - reg_write: {node: A, reg: XRNICCONF, value: 0x100000000}\n", 9, 49, "steps[3].reg_write.value",
       "does not fit register XRNICCONF (32 bits)"},
      {"  - reg_write: {node: A, reg: IPv4XADD, field: X, value: 1}\n", 9, 48, "steps[3].reg_write.field",
       "register IPv4XADD has no named fields"},
      {"  - reg_write: {node: A, reg: XRNICCONF}\n", 9, 16, "steps[3].reg_write.value", "missing required key 'value'"},
      {"  - reg_expect: {node: A, reg: STATQPi, qp: 2, field: FATAL, value: 2}\n", 9, 69,
       "steps[3].reg_expect.value", "2 does not fit field STATQPi.FATAL (1 bit)"},
      {"  - reg_expect: {node: A, reg: XRNICCONF, value: 3, mask: 1}\n", 9, 50, "steps[3].reg_expect.value",
       "value 0x3 has bits outside mask 0x1"},
      {"  - reg_expect: {node: A, reg: XRNICCONF, value: 0, not: 1}\n", 9, 58, "steps[3].reg_expect.not",
       "expected true or false"},
      {"  - reg_poll: {node: A, reg: XRNICCONF, value: 0, interval_ns: 0}\n", 9, 64, "steps[3].reg_poll.interval_ns",
       "out of range [1, 1000000000]"},
      {"  - reg_read: {node: Z, reg: XRNICCONF}\n", 9, 22, "steps[3].reg_read.node", "unknown node 'Z'"},
      {"  - mem_write: {node: A, addr: 0}\n", 9, 16, "steps[3].mem_write", "needs the data: one of 'bytes'"},
      {"  - mem_write: {node: A, addr: 0, u64: []}\n", 9, 40, "steps[3].mem_write.u64", "at least one value"},
      {"  - mem_write: {node: A, addr: 0, bytes: [1, 256]}\n", 9, 46, "steps[3].mem_write.bytes[1]",
       "256 is out of range [0, 255]"},
      {"  - mem_write: {node: A, addr: 0, u32: [0x100000000]}\n", 9, 41, "steps[3].mem_write.u32[0]",
       "out of range [0, 4294967295]"},
      {"  - mem_write: {node: A, addr: 0, bytes: [1], stray: 1}\n", 9, 54, "steps[3].mem_write.stray",
       "expected true or false"},
      {"  - mem_expect: {node: A, addr: 0, bytes: [1], stray: true}\n", 9, 48, "steps[3].mem_expect.stray",
       "unknown key 'stray'"},
      {"  - deregister_mr: {node: A, name: dst}\n", 9, 36, "steps[3].deregister_mr.name", "unknown MR 'dst' on node A"},
      {"  - connect_reject: {client: A, server: A}\n", 9, 41, "steps[3].connect_reject.server", "different nodes"},
      {"  - connect_reject: {client: A, server: B, reason: 65536}\n", 9, 52, "steps[3].connect_reject.reason",
       "out of range [0, 65535]"},
      {conn + "  - disconnect: {conn: c, node: C}\n", 10, 33, "steps[4].disconnect.node", "unknown node 'C'"},
      {conn + "  - disconnect: {conn: c, node: A}\n  - disconnect: {conn: c, node: A}\n", 11, 24,
       "steps[5].disconnect.conn", "connection 'c' was disconnected at line 10"},
      {"  - fault: {dir: AB, action: drop}\n", 9, 18, "steps[3].fault.dir", "expected a direction 'X->Y'"},
      {"  - fault: {dir: A->A, action: drop}\n", 9, 18, "steps[3].fault.dir", "two different nodes"},
      {"  - fault: {dir: A->B}\n", 9, 12, "steps[3].fault.action", "missing required key 'action'"},
      {"  - fault: {dir: A->B, action: lose}\n", 9, 32, "steps[3].fault.action", "unknown value 'lose'"},
      {"  - fault: {dir: A->B, action: corrupt}\n", 9, 12, "steps[3].fault", "needs 'byte'"},
      {"  - fault: {dir: A->B, action: corrupt, field: bth.psm}\n", 9, 48, "steps[3].fault.field",
       "did you mean 'bth.psn'?"},
      {"  - fault: {dir: A->B, action: corrupt, byte: 9600}\n", 9, 47, "steps[3].fault.byte",
       "out of range [0, 9599]"},
      {"  - fault: {dir: A->B, action: corrupt, byte: 1, bit: 8}\n", 9, 55, "steps[3].fault.bit",
       "out of range [0, 7]"},
      {"  - fault: {dir: A->B, action: drop, bit: 1}\n", 9, 38, "steps[3].fault.bit", "only to action: corrupt"},
      {"  - fault: {dir: A->B, action: drop, delay_ns: 1}\n", 9, 38, "steps[3].fault.delay_ns",
       "only to action: delay"},
      {"  - fault: {dir: A->B, action: reorder, after: 0}\n", 9, 48, "steps[3].fault.after", "out of range [1,"},
      {"  - fault: {dir: A->B, action: drop, name: ''}\n", 9, 44, "steps[3].fault.name", "must not be empty"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: 0x15}}\n", 9, 54, "steps[3].fault.match.opcode",
       "not an opcode the simulator knows"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: [RC_ACK, any]}}\n", 9, 63,
       "steps[3].fault.match.opcode[1]", "cannot be part of a list"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: [RC_ACK, 0x11]}}\n", 9, 63,
       "steps[3].fault.match.opcode[1]", "RC_ACK is listed twice"},
      {"  - fault: {dir: A->B, action: drop, match: {opcode: []}}\n", 9, 54, "steps[3].fault.match.opcode",
       "at least one opcode"},
      {"  - fault: {dir: A->B, action: drop, match: {nth: 0}}\n", 9, 51, "steps[3].fault.match.nth",
       "out of range [1,"},
      {"  - fault: {dir: A->B, action: drop, match: {psn: 0x1000000}}\n", 9, 51, "steps[3].fault.match.psn",
       "out of range"},
      {"  - fault: {dir: A->B, action: drop, match: {probability: 0}}\n", 9, 59,
       "steps[3].fault.match.probability", "out of range (0, 1]"},
      {"  - link: {dir: both, state: off}\n", 9, 30, "steps[3].link.state", "unknown value 'off'"},
      {"  - expect_frames: {dir: A->B, frames: [{psn: later}]}\n", 9, 47, "steps[3].expect_frames.frames[0].psn",
       "expected 'next' or a PSN"},
      {"  - expect_frames: {dir: A->B, frames: [{repeat: '?'}]}\n", 9, 50,
       "steps[3].expect_frames.frames[0].repeat", "expected \"*\""},
      {"  - expect_frames: {dir: A->B, frames: [{repeat: 0}]}\n", 9, 50, "steps[3].expect_frames.frames[0].repeat",
       "out of range [1,"},
      {"  - expect_frames: {dir: A->B, frames: [{repeat: [1, 2, 3]}]}\n", 9, 50,
       "steps[3].expect_frames.frames[0].repeat", "expected [min, max]"},
      {"  - expect_frames: {dir: A->B, tap: both, frames: []}\n", 9, 37, "steps[3].expect_frames.tap",
       "unknown value 'both'"},
      {"  - expect_frames: {dir: A->B, frames: [{opcode: RC_ACK, syndrome: 256}]}\n", 9, 68,
       "steps[3].expect_frames.frames[0].syndrome", "out of range [0, 255]"},
      {"  - expect_idle: {dir: A->B}\n", 9, 18, "steps[3].expect_idle.us", "missing required key 'us'"},
      {"  - wait_until: {timeout_us: 5}\n", 9, 17, "steps[3].wait_until", "needs one of 'frames' or 'reg'"},
      {"  - wait_until: {frames: {dir: A->B}, value: 1}\n", 9, 39, "steps[3].wait_until.value",
       "applies only with reg"},
      {"  - wait_until: {reg: {node: A, reg: XRNICCONF}}\n", 9, 17, "steps[3].wait_until.value",
       "missing required key 'value'"},
      {"  - wait_until: {reg: {node: A, reg: XRNICCONF, value: 1}}\n", 9, 49, "steps[3].wait_until.reg.value",
       "unknown key 'value'"},
      {"  - wait_until: {frames: {dir: both}}\n", 9, 32, "steps[3].wait_until.frames.dir", "give one direction"},
      {"  - repeat: {count: 0, steps: [wait: {us: 1}]}\n", 9, 21, "steps[3].repeat.count", "out of range [1,"},
      {"  - repeat: {count: 2, steps: []}\n", 9, 31, "steps[3].repeat.steps", "at least one step"},
      {"  - repeat: {count: 2, steps: [init: A]}\n", 9, 32, "steps[3].repeat.steps[0].init",
       "init is not allowed inside repeat"},
      {"  - repeat: {count: 2, steps: [deregister_mr: {node: A, name: src}]}\n", 9, 32,
       "steps[3].repeat.steps[0].deregister_mr", "the MR would be deregistered again"},
      {"  - repeat: {count: 2, steps: [repeat: {count: 2, steps: [register_mr: {node: A, name: x, length: 1}]}]}\n",
       9, 59, "steps[3].repeat.steps[0].repeat.steps[0].register_mr", "the repeat at line 9 runs its steps 2 times"},
      {conn + "  - repeat: {count: 2, steps: [disconnect: {conn: c, node: A}]}\n", 10, 32,
       "steps[4].repeat.steps[0].disconnect", "not allowed inside repeat"},
      {"  - repeat: {count: 2, steps: [parallel: [{name: a, steps: [connect: {name: c, client: A, server: B}]},"
       " {name: b, steps: [wait: {us: 1}]}]]}\n",
       9, 61, "steps[3].repeat.steps[0].parallel[0].steps[0].connect", "not allowed inside repeat"},
      {"  - parallel: {name: a}\n", 9, 15, "steps[3].parallel", "expected a list of branches"},
      {"  - parallel: [{name: a, steps: [wait: {us: 1}]}, {name: a, steps: [wait: {us: 1}]}]\n", 9, 58,
       "steps[3].parallel[1].name", "branch 'a' is already named in this parallel"},
      {"  - parallel: [{name: a, steps: [wait: {us: 1}]}, {steps: [wait: {us: 1}]}]\n", 9, 51,
       "steps[3].parallel[1].name", "missing required key 'name'"},
      {"  - parallel: [{name: a, steps: [barrier: x]}, {name: b, steps: [barrier: x, barrier: y]}]\n", 9, 87,
       "steps[3].parallel[1].steps[1].barrier", "barrier 'y' has no counterpart in branch a"},
      {"  - parallel: [{name: a, steps: [repeat: {count: 2, steps: [barrier: x]}]}, {name: b, steps: [wait: {us: "
       "1}]}]\n",
       9, 61, "steps[3].parallel[0].steps[0].repeat.steps[0].barrier", "barrier is not allowed inside repeat"},
      {"  - parallel: [{name: a, steps: [barrier: x, barrier: x]}, {name: b, steps: [barrier: x, barrier: x]}]\n",
       9, 55, "steps[3].parallel[0].steps[1].barrier", "barrier 'x' is already passed in this branch (at line 9)"},
      {"  - parallel: [{name: a, steps: [barrier: 1x]}, {name: b, steps: [barrier: 1x]}]\n", 9, 43,
       "steps[3].parallel[0].steps[0].barrier", "invalid barrier name '1x'"},
      {"  - parallel: [{name: a, steps: [register_mr: {node: A, name: m, length: 1}]}, {name: b, steps: "
       "[register_mr: {node: A, name: m, length: 1}]}]\n",
       9, 127, "steps[3].parallel[1].steps[0].register_mr.name", "MR 'm' is already registered on node A"},
  };
  for (const Case& c : cases) {
    const ScenarioError e = parse_error(std::string(kHead) + c.extra);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << e.what();
  }
  // pcie ranges.
  const std::string nodes = "nodes: {A: {mac: '02:00:00:00:00:0a', ip: 10.0.0.1}}\nsteps: [init: A]\n";
  const struct {
    const char* pcie;
    int column;
    const char* key;
    const char* part;
  } pcie_cases[] = {
      {"{gen: 5}", 13, "pcie.gen", "gen must be 3 or 4, got 5"},
      {"{lanes: 3}", 15, "pcie.lanes", "lanes must be one of 1, 2, 4, 8, 16, got 3"},
      {"{mps: 2048}", 13, "pcie.mps", "power of two in [128, 1024]"},
      {"{mrrs: 64}", 14, "pcie.mrrs", "power of two in [128, 4096], got 64"},
      {"{mrrs: 8192}", 14, "pcie.mrrs", "got 8192"},
      {"{read_latency_ns: -1}", 25, "pcie.read_latency_ns", "must not be negative"},
      {"{speed: 1}", 8, "pcie.speed", "unknown key 'speed'"},
      {"{rcb: 256}", 13, "pcie.rcb", "power of two in [64, 128], got 256"},
      {"{outstanding: 0}", 21, "pcie.outstanding", "out of range"},
      {"{mmio_write_latency_ns: -5}", 31, "pcie.mmio_write_latency_ns", "must not be negative"},
  };
  for (const auto& c : pcie_cases) {
    const ScenarioError e = parse_error(std::string("scenario: t\npcie: ") + c.pcie + "\n" + nodes);
    EXPECT_EQ(e.line(), 2) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << e.what();
  }
  const ScenarioError dp = parse_error("scenario: t\ndatapath: verilog\n" + nodes);
  EXPECT_EQ(dp.key(), "datapath");
  EXPECT_NE(dp.message().find("unknown value 'verilog'"), std::string::npos) << dp.what();
  EXPECT_NE(dp.message().find("rtl, model, user:<name>"), std::string::npos) << dp.what();
  const ScenarioError du = parse_error("scenario: t\ndatapath: user:my-block\n" + nodes);
  EXPECT_EQ(du.key(), "datapath");
  EXPECT_EQ(du.line(), 2);
  EXPECT_EQ(du.message(), "invalid datapath 'user:my-block': user:<name> takes a name of letters, digits and '_'");
}
