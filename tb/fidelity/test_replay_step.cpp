// tb/fidelity: the scenario step `replay` (model/system/steps_replay.cpp):
// a kind: peer node plays one side of a real capture against an ERNIC node
// over the scenario's wire. Its report equals `ernic-sim pcap replay`'s
// (node alone, frames straight into its CMAC; the differences of that one
// are pinned and explained in tb/fidelity/replay/*.expect) line for line,
// on both sides, paced and back to back, for the five captures, while the
// run's wire monitor watches the replayed connection; explained
// differences pass and others fail the run (or are reported); an unusable
// capture is exit 2 naming the step; the frames cross the wire.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "model/roce/packet.h"
#include "model/trace/pcap_writer.h"
#include "tb/fidelity/replay_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace replay_run;

struct StepRun {
  int code = -1;
  std::string out;  // ernic-sim's stdout and stderr
  json report;
  const json& replay() const { return report["nodes"]["P"]["peer"]["replays"][0]; }
  std::vector<std::string> lines() const {
    std::vector<std::string> l;
    if (report.contains("nodes")) l = replay()["lines"].get<std::vector<std::string>>();
    return l;
  }
};

// A scenario file's text (written as s.yaml in its own directory) run
// with a JSON report.
StepRun run_yaml(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("ernic_replay_step_" + name);
  fs::create_directories(dir);
  const fs::path yaml = dir / "s.yaml", rep = dir / "s.json";
  fs::remove(rep);
  std::ofstream(yaml) << text;
  StepRun r;
  r.out = ernic::test::run_command(kSim + " run " + yaml.string() + " --quiet --json " + rep.string() + " 2>&1", &r.code);
  std::ifstream in(rep);
  if (in) r.report = json::parse(in, nullptr, false);
  return r;
}

// A scenario with ERNIC node A and peer P at `pcap replay`'s default
// addresses, the replay step's keys as given.
StepRun run_step(const std::string& name, const std::string& keys, const std::string& more_steps = "") {
  return run_yaml(name, "scenario: s\nseed: 1\nlimits: { sim_time_us: 5000 }\nnodes:\n"
                        "  A: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2 }\n"
                        "  P: { kind: peer, mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1 }\n"
                        "steps:\n  - init: [A]\n  - replay: { " + keys + " }\n" + more_steps);
}

std::string capture_key(const std::string& capture) { return "capture: " + kData + capture + ".pcap, node: A, from: P"; }

// A copy of one of the five captures, its frames (number from 1, time in
// ns since the first) changed by edit; the copy's path.
std::string variant(const std::string& capture, const std::string& name,
                    const std::function<void(std::vector<ernic::PcapFrame>&)>& edit) {
  std::vector<ernic::PcapFrame> fr = ernic::PcapReader::read_all(kData + capture + ".pcap");
  edit(fr);
  const fs::path out = fs::temp_directory_path() / ("ernic_replay_step_" + name + ".pcap");
  ernic::PcapWriter w(out.string());
  for (const auto& f : fr) w.write(f.data, f.time_ns * 1000);
  return out.string();
}

struct Case {
  const char* capture;
  bool requester;
  bool fast;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.capture << (c.requester ? " requester" : " responder") << (c.fast ? " fast" : " paced");
}

class ReplayStep : public ::testing::TestWithParam<Case> {};

// The step's report is the command's, line for line (the same mapping: the
// nodes have the command's default addresses); the run passes, so the wire
// monitor found the replayed connection legal both ways.
TEST_P(ReplayStep, AgreesWithTheCommand) {
  const Case c = GetParam();
  const std::string name = std::string(c.capture) + (c.requester ? "_req" : "_resp") + (c.fast ? "_fast" : "");
  const StepRun s = run_step(name, capture_key(c.capture) + (c.requester ? ", side: requester" : "") +
                                       (c.fast ? ", fast: true" : "") + ", on_difference: report");
  ASSERT_EQ(s.code, 0) << s.out;
  const Outcome t = replay(c.capture, std::string(c.requester ? "--requester-side" : "") + (c.fast ? " --fast" : "") +
                                          " --report-only");
  ASSERT_EQ(t.code, 0) << t.text();
  EXPECT_EQ(s.lines(), t.lines) << s.out;
  EXPECT_EQ(s.replay()["side"], c.requester ? "requester" : "responder");
  EXPECT_EQ(s.replay()["against"], "A");
  // Paced, the responder side of the two bandwidth captures has ERNIC's two
  // timer ACKs (tb/fidelity/replay/<capture>.expect); everything else is identical.
  const bool timer_acks = !c.requester && !c.fast && (std::string(c.capture) == "rdma_write_bw" ||
                                                      std::string(c.capture) == "rdma_send_bw");
  EXPECT_EQ(s.replay()["code"], timer_acks ? 1 : 0);
  const std::string summary = s.replay()["summary"];
  EXPECT_NE(summary.find(timer_acks ? "2 difference(s), 2 unexplained" : "0 difference(s)"), std::string::npos)
      << summary;
}

INSTANTIATE_TEST_SUITE_P(Captures, ReplayStep, ::testing::ValuesIn([] {
                           std::vector<Case> v;
                           for (const char* cap : {"pingpong_rc", "rdma_read_bw", "rdma_send_bw", "rdma_write_bw",
                                                   "rdma_write_lat"})
                             for (bool req : {false, true})
                               for (bool fast : {false, true}) v.push_back({cap, req, fast});
                           return v;
                         }()),
                         [](const auto& i) {
                           return std::string(i.param.capture) + (i.param.requester ? "_requester" : "_responder") +
                                  (i.param.fast ? "_fast" : "_paced");
                         });

// The explained differences (the .expect file's lines as `expect`) pass;
// without them the run fails at the step naming the first; `report` lists
// them and passes.
TEST(ReplayStepCheck, ExplainedDifferencesPassOthersFail) {
  const std::vector<std::string> ex = expected("rdma_write_bw");
  ASSERT_EQ(ex.size(), 2u);
  const StepRun bad = run_step("diff_fail", capture_key("rdma_write_bw"));
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("s.yaml:9:5: replay of " + kData + "rdma_write_bw.pcap (responder side): 2 unexplained "
                         "difference(s), 0 expected not seen; first: diff: " + ex[0]),
            std::string::npos)
      << bad.out;
  std::string keys = capture_key("rdma_write_bw") + ", expect: [";
  for (const auto& e : ex) keys += "\"" + e + "\", ";
  keys += "]";
  const StepRun good = run_step("diff_expected", keys);
  EXPECT_EQ(good.code, 0) << good.out;
  std::vector<std::string> got;
  for (const auto& l : good.lines())
    if (l.rfind("diff (expected): ", 0) == 0) got.push_back(l.substr(17));
  EXPECT_EQ(got, ex);
  EXPECT_NE(good.replay()["summary"].get<std::string>().find("as expected"), std::string::npos);
  const StepRun rep = run_step("diff_report", capture_key("rdma_write_bw") + ", on_difference: report");
  EXPECT_EQ(rep.code, 0) << rep.out;
  EXPECT_EQ(rep.replay()["code"], 1);
  // An expected difference that does not happen fails too.
  const StepRun missing = run_step("diff_missing", capture_key("rdma_write_bw") + ", fast: true, expect: [\"" + ex[0] +
                                                       "\"]");
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_NE(missing.out.find("0 unexplained difference(s), 1 expected not seen; first: expected difference not seen: " +
                             ex[0]),
            std::string::npos)
      << missing.out;
}

// A capture that cannot be replayed: exit 2 at the step, naming why (the
// step's keys, not the command's options).
TEST(ReplayStepCheck, UnusableCaptureIsExitTwo) {
  const StepRun none = run_step("no_file", "capture: no_such.pcap, node: A, from: P");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_NE(none.out.find("s.yaml:9:5: replay: capture " +
                          (fs::temp_directory_path() / "ernic_replay_step_no_file" / "no_such.pcap").string() +
                          ": no such file"),
            std::string::npos)
      << none.out;
  const StepRun nomatch = run_step("no_match", capture_key("pingpong_rc") + ", requester_ip: 10.9.9.9");
  EXPECT_EQ(nomatch.code, 2) << nomatch.out;
  EXPECT_NE(nomatch.out.find("pingpong_rc.pcap: no RC request in the capture matches (requester IP / qpn)"),
            std::string::npos)
      << nomatch.out;
}

// The frames cross the scenario's wire: the peer sent the capture's five
// ACKs and took ERNIC's 15 WRITE packets (counted apart from its QPs'),
// ERNIC's CMAC sent them, and an expect_frames step after the replay sees
// the ACKs in the capture's MSN order.
TEST(ReplayStepCheck, FramesCrossTheWire) {
  const StepRun s = run_step("wire", capture_key("rdma_write_bw") + ", side: requester",
                             "  - expect_frames:\n      dir: P->A\n      frames: [ { opcode: RC_ACK, msn: 1 }, "
                             "{ opcode: RC_ACK, msn: 2 }, { opcode: RC_ACK, msn: 3 }, { opcode: RC_ACK, msn: 4 }, "
                             "{ opcode: RC_ACK, msn: 5 } ]\n");
  ASSERT_EQ(s.code, 0) << s.out;
  const json& p = s.report["nodes"]["P"]["peer"];
  EXPECT_EQ(p["replay_out"], 5);
  EXPECT_EQ(p["replay_in"], 15);
  EXPECT_EQ(p["dropped_no_qp"], 0);
  EXPECT_EQ(s.report["nodes"]["A"]["tx"]["by_opcode"]["RC_WRITE_FIRST"]["packets"], 5) << s.report["nodes"]["A"]["tx"].dump();
  EXPECT_EQ(s.report["nodes"]["A"]["rx"]["by_opcode"]["RC_ACK"]["packets"], 5) << s.report["nodes"]["A"]["rx"].dump();
}

}  // namespace

namespace {

// A retransmission in the capture (rdma_write_bw's frames 24 and 25, its
// second WRITE_LAST and that ACK, sent again right after): ERNIC sends the
// packet once, so the capture's second ACK is never due and the second
// sending never comes; every other answer still goes (none waits behind
// the one whose request never comes), every message completes.
TEST(ReplayStepCheck, AnAnswerNeverDueHoldsUpNothing) {
  const std::string cap = variant("rdma_write_bw", "retransmitted", [](std::vector<ernic::PcapFrame>& fr) {
    std::vector<ernic::PcapFrame> again = {fr[23], fr[24]};  // frames 24, 25
    for (auto& f : again) f.time_ns = fr[24].time_ns + 1000;
    fr.insert(fr.begin() + 25, again.begin(), again.end());  // as frames 26, 27
  });
  const Outcome t = replay_file(cap, "--requester-side --report-only");
  ASSERT_EQ(t.code, 0) << t.text();
  EXPECT_EQ(t.with("diff: "),
            (std::vector<std::string>{"frame 26: RC_WRITE_LAST psn=5454385 (sent 1 time(s) before): ERNIC did not send it",
                                      "frame 27: RC_ACK psn=5454385 syndrome=0x1f msn=1: not injected: ERNIC did not "
                                      "send the request it answers (frame 26)"}))
      << t.text();
  const auto sum = t.with("summary: ");
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_NE(sum[0].find("15 matched field for field, 5 of 6 answers injected, 5 of 5 messages completed"),
            std::string::npos)
      << sum[0];
  const StepRun s = run_step("retransmitted", "capture: " + cap + ", node: A, from: P, side: requester, "
                                              "on_difference: report");
  ASSERT_EQ(s.code, 0) << s.out;
  std::vector<std::string> step_lines = s.lines(), tool_lines = t.lines;
  EXPECT_EQ(step_lines, tool_lines);
}

// Timestamps that step back (a capture merged from several sources): the
// third READ request stamped 1 ms before the first goes right after the
// second; the replay is as the original's.
TEST(ReplayStepCheck, TimestampsSteppingBackGoAtOnce) {
  const std::string cap = variant("rdma_read_bw", "time_back", [](std::vector<ernic::PcapFrame>& fr) {
    for (auto& f : fr) f.time_ns += 2000000;  // room to step back
    fr[23].time_ns = fr[21].time_ns - 1000000;  // frame 24: the third READ request
  });
  for (const char* side : {"", ", side: requester"}) {
    const StepRun s = run_step("time_back", "capture: " + cap + ", node: A, from: P" + side);
    EXPECT_EQ(s.code, 0) << s.out;
    EXPECT_NE(s.replay()["summary"].get<std::string>().find(*side ? "5 matched field for field, 15 of 15 answers injected"
                                                                   : "15 matched field for field, 0 difference(s)"),
              std::string::npos)
        << s.replay()["summary"];
  }
}

// A frame longer than the MAC takes (ctl_rx_max_packet_len, 9600 bytes
// with the FCS): ERNIC's CMAC discards it and counts it; no answer.
TEST(ReplayStepCheck, AFrameTooLongForTheMacIsDiscarded) {
  const std::string cap = variant("rdma_write_lat", "too_long", [](std::vector<ernic::PcapFrame>& fr) {
    for (auto& pf : fr) {
      auto f = roce::decode(pf.data.data(), pf.data.size());
      if (!f || f->bth.opcode != 0x0A) continue;  // the first RC_WRITE_ONLY
      f->payload.assign(12000, 0x5A);
      f->reth->dma_len = 12000;
      pf.data = roce::encode(*f);
      pf.orig_len = uint32_t(pf.data.size());
      break;
    }
  });
  const StepRun s = run_step("too_long", "capture: " + cap + ", node: A, from: P, on_difference: report");
  ASSERT_EQ(s.code, 0) << s.out;
  EXPECT_EQ(s.report["nodes"]["A"]["link"]["rx_too_long"], 1) << s.report["nodes"]["A"]["link"].dump();
  bool no_answer = false;
  for (const auto& l : s.lines()) no_answer = no_answer || l.find(": no answer from ERNIC with this PSN") != std::string::npos;
  EXPECT_TRUE(no_answer) << s.out;
}

// Two replays at once from one peer, each to its own QPN, both as the
// original; a replay to a QPN the peer has a QP of, or another replay is
// playing, is refused: their frames could not be told apart.
TEST(ReplayStepCheck, OneReplayAQpn) {
  const std::string both = "  - parallel:\n"
                           "    - { name: a, steps: [ { replay: { " + capture_key("rdma_read_bw") + " } } ] }\n"
                           "    - { name: b, steps: [ { replay: { " + capture_key("rdma_write_bw") +
                           ", node_qpn: 3, fast: true } } ] }\n";
  const StepRun two = run_step("two", capture_key("pingpong_rc"), both);
  ASSERT_EQ(two.code, 0) << two.out;
  const json& rs = two.report["nodes"]["P"]["peer"]["replays"];
  ASSERT_EQ(rs.size(), 3u);
  for (const auto& r : rs) EXPECT_EQ(r["code"], 0) << r["summary"];
  const StepRun same = run_step("same", capture_key("pingpong_rc"),
                                "  - parallel:\n"
                                "    - { name: a, steps: [ { replay: { " + capture_key("rdma_write_bw") + " } } ] }\n"
                                "    - { name: b, steps: [ { replay: { " + capture_key("rdma_write_bw") +
                                ", node_qpn: 3 } } ] }\n");
  EXPECT_EQ(same.code, 2) << same.out;
  EXPECT_NE(same.out.find("replay: peer P: QPN 29 of the peer is another replay's: the replay's frames to it could "
                          "not be told apart"),
            std::string::npos)
      << same.out;
}

// The nodes' addresses: of the capture's IP version when both nodes have
// one; none in common is exit 2 naming why.
TEST(ReplayStepCheck, NodesWithoutACommonIpVersion) {
  const StepRun r = run_yaml("ipver", "scenario: s\nnodes:\n  A: { mac: \"02:00:00:00:00:0b\", ipv6: \"fd00::2\" }\n"
                                      "  P: { kind: peer, mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1 }\nsteps:\n"
                                      "  - init: [A]\n  - replay: { " + capture_key("pingpong_rc") + " }\n");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("s.yaml:7:5: replay: the two nodes have no IP version in common (ERNIC's node: IPv6 only; the "
                       "other: IPv4 only)"),
            std::string::npos)
      << r.out;
}

// The replay's QP is in ERNIC before the first frame comes: six MR
// registrations before the step leave posted register writes queued on
// the node's PCIe link (steps end before their writes land); the replay
// flushes them (a non-posted read) before it starts.
TEST(ReplayStepCheck, AfterABacklogOfRegisterWrites) {
  std::string mrs;
  for (int i = 0; i < 6; ++i) mrs += "  - register_mr: { node: A, name: m" + std::to_string(i) + ", length: 4096 }\n";
  const StepRun r = run_yaml("backlog", "scenario: s\nnodes:\n  A: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2 }\n"
                                        "  P: { kind: peer, mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1 }\nsteps:\n"
                                        "  - init: [A]\n" + mrs + "  - replay: { " + capture_key("rdma_read_bw") +
                                        ", fast: true }\n");
  EXPECT_EQ(r.code, 0) << r.out;
  // Every captured answer went in and ERNIC's frames matched (without the
  // flush its first READs met a QP not yet enabled: no answer, a failed step).
  ASSERT_TRUE(r.report.contains("nodes")) << r.out;
  EXPECT_EQ(r.replay()["code"].get<int>(), 0) << r.out;
  EXPECT_NE(r.replay()["summary"].get<std::string>().find("matched field for field"), std::string::npos)
      << r.replay()["summary"];
}

// A captured answer before any request of the connection (the capture
// starts mid-exchange) has no request to follow: listed as a note, not
// injected; the rest replays as the original.
TEST(ReplayStepCheck, AnAnswerBeforeEveryRequestIsNoted) {
  const std::string cap = variant("rdma_write_bw", "early_ack", [](std::vector<ernic::PcapFrame>& fr) {
    ernic::PcapFrame ack = fr[24];  // frame 25: the first message's ACK
    ack.time_ns = fr[21].time_ns;
    fr.insert(fr.begin() + 21, ack);  // as frame 22, before the first WRITE
  });
  const Outcome t = replay_file(cap, "--requester-side");
  EXPECT_EQ(t.code, 0) << t.text();
  EXPECT_EQ(t.with("note: "), (std::vector<std::string>{"frame 22: RC_ACK psn=5454385 syndrome=0x1f msn=1 comes before "
                                                        "every request of the connection: not injected"}))
      << t.text();
  const auto sum = t.with("summary: ");
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_NE(sum[0].find("15 matched field for field, 5 of 5 answers injected"), std::string::npos) << sum[0];
}

// After a replay, the ERNIC node's replay QP still points at the capture
// side's QPN on the peer: a connection that would give the peer a QP of
// that number is refused (the wire monitor could not tell the two apart);
// the same capture replayed again is fine.
TEST(ReplayStepCheck, APlayedQpnIsNotAPeerQpAfterwards) {
  const StepRun again = run_step("again", capture_key("pingpong_rc") + ", fast: true",
                                 "  - replay: { " + capture_key("pingpong_rc") + ", fast: true }\n");
  EXPECT_EQ(again.code, 0) << again.out;
  const StepRun r = run_yaml("conn_after", "scenario: s\nnodes:\n  A: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2 }\n"
                                           "  P: { kind: peer, mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1, num_qp: 64 }\n"
                                           "steps:\n  - init: [A, P]\n  - replay: { " + capture_key("pingpong_rc") +
                                           ", fast: true }\n"
                                           "  - connect: { name: c, client: A, server: P, server_qp: 33, cm: false }\n");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("s.yaml:8:5: connect 'c': QP33 of the peer is in use (a replay played it: the ERNIC node's "
                       "replay QP still points at it)"),
            std::string::npos)
      << r.out;
}

}  // namespace
