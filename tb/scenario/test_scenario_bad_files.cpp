// Tests for model/scenario/scenario.h: every file in bad/ fails with the exact
// position, key and message, through the parser and through the command
// line (exit 2), and every file there has its case.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "model/scenario/scenario.h"
#include "tb/common/run_command.h"
#include "tb/scenario/scenario_fixtures.h"

namespace fs = std::filesystem;
using namespace ernic;
using namespace ernic::test;

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

// The same files through the command line: exit 2, and stderr names the
// file, line, column and key (issue 3: "any error in a file gives exit 2
// with file, line, column and the key").
TEST_P(ScenarioBadFile, CliExitsTwoNamingThePlace) {
  const BadCase& c = GetParam();
  const std::string path = kDir + "/bad/" + c.file;
  const std::string cmd = std::string(ERNIC_SIM_PROGRAM) + " run '" + path + "' --quiet 2>&1 >/dev/null";
  int code = -1;
  const std::string err = ernic::test::run_command(cmd, &code);
  EXPECT_EQ(code, 2) << err;
  std::string want = path + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
  if (*c.key) want += std::string("key '") + c.key + "': ";
  EXPECT_NE(err.find(want), std::string::npos) << "stderr: " << err << "\nwanted: " << want;
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
    // Issue 3: register level, memory, wire, expectations, control.
    {"reg_unknown_register.yaml", 7, 33, "steps[1].reg_expect.reg",
     "unknown register 'QPCONF' (did you mean 'QPCONFi'?)"},
    {"reg_missing_qp.yaml", 8, 7, "steps[1].reg_write.qp", "missing required key 'qp': SQPIi is a per-QP register"},
    {"reg_not_on_qp1.yaml", 7, 43, "steps[1].reg_read.qp", "SQPSNi does not exist for QP1"},
    {"reg_value_too_wide.yaml", 7, 68, "steps[1].reg_write.value",
     "8 does not fit field QPCONFi.PMTU (3 bits): at most 0x7"},
    {"reg_unknown_field.yaml", 7, 54, "steps[1].reg_poll.field",
     "unknown field 'PMUT' of QPCONFi (did you mean 'PMTU'?)"},
    {"reg_qp_on_global.yaml", 7, 42, "steps[1].reg_read.qp", "qp does not apply: XRNICCONF is a global register"},
    {"mem_two_forms.yaml", 7, 56, "steps[1].mem_write.u32", "give exactly one of bytes, u32, u64"},
    {"mem_outside_memory.yaml", 7, 34, "steps[1].mem_expect.addr",
     "addr 0x3fffffe + 4 bytes is outside node B's memory (0x4000000 bytes, memory_mib 64)"},
    {"fault_unknown_node.yaml", 7, 19, "steps[1].fault.dir", "unknown node 'C' in direction 'A->C'"},
    {"fault_key_of_other_action.yaml", 10, 7, "steps[1].fault.after",
     "after applies only to action: reorder, not drop"},
    {"fault_corrupt_byte_and_field.yaml", 7, 55, "steps[1].fault.byte", "give either byte or field, not both"},
    {"fault_corrupt_bit_and_value.yaml", 7, 69, "steps[1].fault.value",
     "give either bit (a flip) or value (the new byte), not both"},
    {"fault_repair_of_drop.yaml", 7, 39, "steps[1].fault.repair", "repair applies only to action: corrupt, not drop"},
    {"fault_delay_without_delay.yaml", 8, 7, "steps[1].fault.delay_ns", "missing required key 'delay_ns'"},
    {"fault_unknown_opcode.yaml", 7, 59, "steps[1].fault.match.opcode[1]",
     "unknown opcode 'RC_WRITE_MIDLE' (did you mean 'RC_WRITE_MIDDLE'?)"},
    {"fault_probability.yaml", 7, 47, "steps[1].fault.match.probability", "1.5 is out of range (0, 1]"},
    {"frames_psn_next_first.yaml", 10, 42, "steps[1].expect_frames.frames[0].psn", "psn: next needs a frame before it"},
    {"frames_repeat_range.yaml", 11, 50, "steps[1].expect_frames.frames[1].repeat[1]", "max 1 is less than min 3"},
    {"frames_syndrome_without_aeth.yaml", 7, 78, "steps[1].expect_frames.frames[0].syndrome",
     "RC_WRITE_ONLY carries no AETH"},
    {"frames_both_directions.yaml", 7, 27, "steps[1].expect_frames.dir", "give one direction 'X->Y'"},
    {"wait_until_frames_and_reg.yaml", 10, 7, "steps[1].wait_until.frames", "give either frames or reg, not both"},
    {"repeat_connect.yaml", 12, 11, "steps[2].repeat.steps[1].connect",
     "connect is not allowed inside repeat (the repeat at line 8 runs its steps 3 times"},
    {"barrier_outside_parallel.yaml", 8, 5, "steps[2].barrier", "barrier is allowed only in the steps of a parallel branch"},
    {"barrier_mismatch.yaml", 16, 22, "steps[1].parallel[1].steps[1].barrier",
     "barrier 'three' where branch a passes barrier 'two' (line 12)"},
    {"barrier_missing.yaml", 9, 9, "steps[1].parallel[1]",
     "branch b passes 1 barrier, but branch a then passes barrier 'two' (line 8)"},
    {"parallel_one_branch.yaml", 8, 7, "steps[1].parallel", "at least two branches, got 1"},
    {"parallel_nested_unknown_conn.yaml", 16, 27, "steps[4].parallel[1].steps[0].post.conn",
     "unknown connection 'c2' (did you mean 'c1'?)"},
    {"post_after_disconnect.yaml", 11, 19, "steps[5].post.conn", "connection 'c1' was disconnected at line 10"},
    {"fill_after_deregister.yaml", 11, 26, "steps[5].fill.mr", "MR 'dst' of node B was deregistered at line 10"},
    {"layout_unknown.yaml", 2, 9, "layout", "unknown value '4.0' (did you mean '4.x'?)"},
    {"pcie_mps.yaml", 4, 8, "pcie.mps", "mps must be a power of two in [128, 1024], got 200"},
    {"recv_equals_without_length.yaml", 10, 58, "steps[4].recv.expect[0].equals",
     "equals needs the number of bytes to compare: give length"},
    {"recv_write_opcode.yaml", 10, 52, "steps[4].recv.expect[0].opcode",
     "a receiver sees send, send_imm, send_inv or write_imm messages"},
    {"bypass_roce_port.yaml", 7, 47, "steps[1].bypass_send.udp_dport",
     "UDP port 4791 is RoCEv2: such a frame goes to ERNIC, not to the bypass path"},
    {"bypass_runt.yaml", 7, 63, "steps[1].bypass_send.length",
     "the frame would have 24 bytes; Ethernet needs at least 60 before the FCS (length >= 46)"},
    {"replay_capture_empty.yaml", 7, 24, "steps[1].replay.capture",
     "the capture file's path (pcap or pcapng; relative: to this file's folder)"},
    {"replay_expect_empty.yaml", 7, 60, "steps[1].replay.expect[0]",
     "a difference as the report lists it (after `diff: `)"},
    {"replay_from_ernic.yaml", 7, 47, "steps[1].replay.from",
     "node 'A' is an ERNIC node; `from` names the kind: peer node that plays the capture's side"},
    {"replay_node_peer.yaml", 7, 38, "steps[1].replay.node", "node 'P' has kind: peer (the ideal IBTA peer, no ERNIC, "
     "no driver): replay cannot use it"},
    {"replay_node_qpn.yaml", 7, 60, "steps[1].replay.node_qpn", "9 is out of range [2, 8]"},
    {"replay_node_qpn_used.yaml", 8, 60, "steps[2].replay.node_qpn", "QP 3 of node A is already used by connection c"},
    {"replay_va_base_requester.yaml", 7, 67, "steps[1].replay.va_base",
     "va_base moves the MRs ERNIC answers from: the responder side's"},
    {"replay_in_repeat.yaml", 7, 36, "steps[1].repeat.steps[0].replay",
     "replay is not allowed inside repeat (the repeat at line 7 runs its steps 2 times, and its QP on the ERNIC node "
     "stays taken: the next round would need another)"},
    {"replay_on_difference.yaml", 7, 65, "steps[1].replay.on_difference",
     "unknown value 'warn' (expected one of: fail, report)"},
    {"replay_requester_ip.yaml", 7, 64, "steps[1].replay.requester_ip", "'10.1.16.300' is not an IPv4 or IPv6 address"},
    {"replay_side.yaml", 7, 56, "steps[1].replay.side", "unknown value 'initiator' (expected one of: responder, requester)"},
    {"ack_mode_unknown.yaml", 4, 61, "nodes.B.ack.mode", "unknown value 'timeouts' (did you mean 'timeout'?)"},
    {"connect_qpn_256_layout31.yaml", 9, 72, "steps[1].connect.server_qp",
     "QP 256 of node B: the 3.1 layout enables at most 255 QPs (XRNICCONF[15:8])"},
    {"qp_adopt_qpn_256_layout31.yaml", 10, 23, "steps[2].qp_adopt.name",
     "QP 256 of node B: the 3.1 layout enables at most 255 QPs (XRNICCONF[15:8])"},
    {"mr_cache_unknown.yaml", 4, 58, "nodes.B.mr_cache", "unknown value 'cma' (did you mean 'cam'?)"},
    {"mr_cache_entries_table.yaml", 4, 82, "nodes.B.mr_cache.entries", "entries is a parameter of mode 'cam'"},
    {"mr_cache_entries_range.yaml", 4, 80, "nodes.B.mr_cache.entries", "0 is out of range [1, 256]"},
    {"rx_handler_gbps_zero.yaml", 4, 89, "nodes.B.rx.handler_gbps", "0 is out of range (0, 1000]"},
    {"tx_underflow_unknown_key.yaml", 3, 79, "nodes.A.test_tx_underflow.beat",
     "unknown key 'beat' (known keys: frame, after_beat, cycles)"},
    {"malformed_ipv6.yaml", 5, 11, "nodes.A.ipv6", "malformed IPv6 address 'fd00::g'"},
    {"ip_version_missing.yaml", 7, 60, "steps[1].connect.ip_version", "ip_version 6: node B has no `ipv6` address"},
    {"debug_preset_reg.yaml", 6, 35, "steps[1].debug_preset.reg",
     "debug_preset sets STATSSNi or STATMSNi only, not SQPSNi"},
    {"msn_without_aeth.yaml", 7, 67, "steps[1].expect_frames.frames[0].msn",
     "msn is the AETH's, and RC_SEND_ONLY carries no AETH"},
    {"expect_idle_three_nodes.yaml", 8, 18, "steps[1].expect_idle.dir",
     "missing required key 'dir': the default 'both' means both directions of a two-node topology, and this one "
     "has 3 nodes"},
    // The QP-setup offload (node key qp_setup_fsm; qp_setup, qp_release, qp_adopt).
    {"qp_setup_no_fsm.yaml", 7, 23, "steps[1].qp_setup.node", "node B has no qp_setup_fsm"},
    {"qp_setup_twice.yaml", 8, 30, "steps[2].qp_setup.qp",
     "QP 2 of node A is already set up (qp_setup at line 7): this one would end with 0x0B"},
    {"qp_setup_pool_range.yaml", 3, 70, "nodes.A.qp_setup_fsm.pool", "17 is out of range [1, 16]"},
    {"qp_release_unknown.yaml", 6, 32, "steps[1].qp_release.qp",
     "QP 4 of node A was not set up by a qp_setup step: the release would end with 0x01"},
    {"qp_adopt_psn_mismatch.yaml", 9, 49, "steps[3].qp_adopt.client_qp",
     "QP 2 of node A expects PSN 0x000200 first (remote_psn, line 7), but QP 3 of node B starts at 0x000201"},
    {"qp_adopt_no_fsm_end.yaml", 7, 15, "steps[1].qp_adopt", "qp_adopt needs an end set up by qp_setup"},
    // Issue 15: a node whose host is a program (host: program, the program step).
    {"program_node_init.yaml", 8, 12, "steps[1].init[0]", "node 'A' has host: program: its program initialises it"},
    {"program_on_driver_node.yaml", 8, 22, "steps[1].program.node",
     "node 'B' has the built-in driver as its host; a program needs `host: program` on the node"},
    {"program_mr_cache_cam.yaml", 4, 73, "nodes.A.mr_cache", "mr_cache: cam needs the built-in driver"},
    {"wait_both_keys.yaml", 6, 11, "steps[0].wait", "give exactly one of us (a duration) and until_us (a time)"},
    {"program_connect_cm.yaml", 8, 14, "steps[1].connect",
     "with cm: true a program end must be the client (its program connects, the built-in driver listens)"},
    {"program_connect_no_qpn.yaml", 8, 14, "steps[1].connect", "give its QPN and PSN (client_qp, client_psn)"},
    {"program_mem_write.yaml", 8, 24, "steps[1].mem_write.node", "its memory is the program's"},
    {"program_run_and_serve.yaml", 8, 37, "steps[1].program.serve", "give either run (start the program) or serve"},
    {"program_post_on_program_end.yaml", 10, 28, "steps[3].post.node",
     "node 'A' has host: program: its program drives it, the built-in driver's steps cannot"},
    {"program_env_malformed.yaml", 8, 31, "steps[1].program.env[0]", "an environment entry is NAME=VALUE"},
    {"field_other_layout.yaml", 8, 50, "steps[0].reg_write.field",
     "field 'NUM_QP' of XRNICCONF exists in the 3.1 layout only; this scenario has layout 4.x"},
    // Issue 16: N nodes behind a switch (topology: switch, expect_switch).
    {"too_many_nodes.yaml", 20, 3, "nodes.N17", "too many nodes: at most 16"},
    {"topology_unknown.yaml", 5, 11, "topology", "unknown topology 'ring' (expected one of: point_to_point, switch)"},
    {"topology_port_unknown_node.yaml", 7, 36, "topology.switch.ports.X", "unknown key 'X' (known keys: A, B)"},
    {"topology_port_rate.yaml", 8, 23, "topology.switch.ports.B.rate_gbps",
     "rate_gbps must be one of 10, 25, 40, 50, 100, got 30"},
    {"topology_ecn_both_forms.yaml", 7, 36, "topology.switch.ecn.min_bytes",
     "give either threshold_bytes or min_bytes / max_bytes / probability (RED), not both"},
    {"topology_ecn_red_range.yaml", 7, 41, "topology.switch.ecn.max_bytes",
     "max_bytes 20000 must be greater than min_bytes 20000"},
    {"topology_pfc_xon_above_xoff.yaml", 7, 41, "topology.switch.pfc.xon_bytes",
     "xon_bytes 16384 must be below xoff_bytes 8192"},
    {"topology_pfc_xoff_over_buffer.yaml", 8, 24, "topology.switch.pfc.xoff_bytes",
     "xoff_bytes 32768 exceeds buffer_bytes 16384"},
    {"topology_red_weight_zero.yaml", 7, 54, "topology.switch.ecn.weight", "0 is out of range (0, 1]"},
    {"topology_pfc_not_lossless.yaml", 9, 24, "topology.switch.pfc.xoff_bytes",
     "xoff_bytes 16384 is not lossless with buffer_bytes 40000: the egress to A can receive from 2 ports up to "
     "xoff_bytes + headroom each, 54624 bytes in all (headroom of port B: 2 x 100 ns at 100 Gb/s + two 4214-byte "
     "frames on the wire = 10928 bytes); raise buffer_bytes to 54624"},
    {"topology_node_named_switch.yaml", 4, 11, "nodes.switch", "a node may not be named 'switch' with topology: switch"},
    {"expect_switch_point_to_point.yaml", 7, 20, "steps[1].expect_switch", "expect_switch needs a switch"},
    {"expect_switch_bad_value.yaml", 8, 55, "steps[1].expect_switch.ecn_marked",
     "expected a count N, a comparison \">0\""},
    {"expect_switch_unknown_counter.yaml", 8, 31, "steps[1].expect_switch.ecn_marks",
     "unknown key 'ecn_marks' (did you mean 'ecn_marked'?)"},
    {"fault_switch_point_to_point.yaml", 7, 19, "steps[1].fault.dir",
     "'switch' in direction 'switch->B' is the switch of `topology: switch`, and this scenario has none"},
    {"fault_switch_to_switch.yaml", 8, 19, "steps[1].fault.dir", "a direction needs two different nodes"},
    // expect_qp: a QP's outstanding-request limit (16, 8 after a CNP) and outstanding requests.
    {"expect_qp_no_value.yaml", 8, 16, "steps[2].expect_qp",
     "give at least one value to check: outstanding_limit, outstanding"},
    {"expect_qp_qp_range.yaml", 7, 31, "steps[1].expect_qp.qp", "17 is out of range [2, 16]"},
    {"expect_qp_unknown_value.yaml", 7, 34, "steps[1].expect_qp.outstanding_limt",
     "unknown key 'outstanding_limt' (did you mean 'outstanding_limit'?)"},
    {"expect_qp_bad_value.yaml", 7, 51, "steps[1].expect_qp.outstanding[1]", "max 8 is less than min 9"},
    {"node_mac_multicast.yaml", 5, 13, "nodes.B.mac",
     "MAC address 01:00:5e:00:00:0b is a group (multicast or broadcast) address: a node's MAC must be unicast"},
    // Issue 20, tried as a user would: inputs that made yaml-cpp or the
    // parser run without bound. ",a" (3 bytes): yaml-cpp 0.7's LoadAll
    // appended empty documents without end (gigabytes in seconds).
    {"yaml_leading_comma_unbounded_alloc.yaml", 1, 1, "",
     "YAML syntax error: unexpected ',' (a separator of [ ] and { } lists, here outside one)"},
    // Nested anchors and aliases: 10^7 wait steps (> 4 GB, then exit 3 on
    // the simulated-time limit); refused at the top-level step that expands:
    // 5,000 + 1,279 bytes / 4 steps (parse.h max_parsed_steps), passed in
    // r4 (1 + 1 + 11 + 111 + 1,111 + 11,111 steps).
    {"yaml_nested_aliases.yaml", 21, 5, "steps[5]",
     "this step expands to more than 5319 steps in all (a YAML alias is expanded each time it is used; nested "
     "aliases multiply): refused"},
    // Few steps, each reading 500 nodes through aliases: refused past
    // 50,000 + 1,361 bytes nodes (parse.h max_yaml_nodes), at the aliased
    // frame, by the path that reached it. With the bounds of 1,000,000 nodes
    // and 100,000 steps such files took 11-15 s per parse under ASan (the
    // scenario fuzzer's 10-s timeout, CI of 2026-12-03).
    {"yaml_alias_node_bomb.yaml", 11, 48, "steps[4].repeat.steps[9].repeat.steps[0].expect_frames.frames[97]",
     "the file expands to more than 51361 YAML nodes (an alias is expanded each time it is used): refused"},
    // Nested repeats: 10^10 step runs; the inner count is blamed.
    {"repeat_runs_total.yaml", 13, 20, "steps[1].repeat.steps[0].repeat.count",
     "with this count the scenario would run more than 100000000 steps in all (a step inside repeats runs once per "
     "repetition of each): lower the counts"},
    // CR-only line ends: was "empty file" (the whole file one comment line).
    // Found by fuzzing: an alias inside its anchor's node (a node that
    // contains itself: the parser recursed until the stack ran out).
    {"yaml_alias_loop.yaml", 10, 51, "",
     "this alias is inside the node its anchor names: the node would contain itself (a loop): refused"},
    // Depth: 2 block levels + 63 flow brackets; the 63rd opens level 65.
    {"yaml_nested_too_deep.yaml", 10, 654, "", "lists and maps nested more than 64 deep: refused"},
    {"cr_only_line_endings.yaml", 1, 61, "",
     "line ends with a lone carriage return (CR, classic Mac line ends), which YAML readers here do not take as a "
     "line break: use LF or CR LF line ends"},
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
