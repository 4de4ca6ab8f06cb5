// tb/system: nodes behind a switch (topology: switch), judged from what the
// runs wrote. In topology/incast_ecn_cnp.yaml every frame B received with
// ECN = CE still has a right IPv4 header checksum (RFC 1071, summed here)
// and ICRC, and differs from the frame its sender sent in the ECN bits and
// the checksum only; the CNPs B sent are in its capture; the counts agree
// with the JSON report. In topology/incast_pfc.yaml the switch's PFC frames
// are in the merged capture and the senders' taps. A fault on a switched
// direction acts on that pair's frames only; a fault on switch->X on
// everything X gets. The switch's pause frames stay the switch's when a
// node has a port's MAC; a PFC deadlock ends at the waiting step's timeout
// with the ports' holds counted. expect_qp names every value that differs.
// A three-node run gives byte-identical outputs twice.
#include <nlohmann/json.hpp>

#include <map>

#include "model/link/pfc.h"
#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using Bytes = std::vector<uint8_t>;

std::vector<Bytes> frames_of(const fs::path& p) {
  ernic::PcapReader r(p.string());
  std::vector<Bytes> v;
  while (auto f = r.next()) v.push_back(f->data);
  return v;
}

// RFC 1071: the one's-complement sum of the header's 16-bit words, its
// checksum included, is 0xFFFF.
bool ipv4_checksum_ok(const Bytes& f) {
  uint32_t sum = 0;
  for (size_t i = 0; i < 20; i += 2) sum += uint32_t(f[14 + i]) << 8 | f[14 + i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;
}

bool ipv4(const Bytes& f) { return f.size() >= 34 && f[12] == 0x08 && f[13] == 0x00; }

TEST(SystemSwitch, EcnMarkedFramesStayValidAndCnpsAnswerThem) {
  const fs::path d = test_dir();
  const SimResult r = run_sim(d, {"run", kSourceDir + "/scenarios/topology/incast_ecn_cnp.yaml", "--pcap", "out.pcap",
                                  "--json", "out.json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_text(d / "out.json"));
  // What the senders sent, ECN and checksum masked: where each frame B got came from.
  std::multiset<Bytes> sent;
  for (const char* n : {"A", "C", "D", "E"})
    for (Bytes f : frames_of(d / (std::string("out.") + n + "-tx.pcap")))
      if (ipv4(f)) {
        f[15] &= uint8_t(~roce::kEcnMask), f[24] = f[25] = 0;
        sent.insert(f);
      }
  size_t ce = 0, roce_frames = 0;
  for (const Bytes& f : frames_of(d / "out.B-rx.pcap")) {
    if (!ipv4(f)) continue;
    ++roce_frames;
    EXPECT_TRUE(ipv4_checksum_ok(f));
    EXPECT_EQ(roce::compute_icrc(f.data(), f.size() - 4), roce::stored_icrc(f.data(), f.size()));
    if ((f[15] & roce::kEcnMask) == roce::kEcnCe) ++ce;
    Bytes m = f;
    m[15] &= uint8_t(~roce::kEcnMask), m[24] = m[25] = 0;
    auto it = sent.find(m);
    EXPECT_NE(it, sent.end()) << "a frame B received that no sender sent (beyond ECN and checksum)";
    if (it != sent.end()) sent.erase(it);
  }
  EXPECT_EQ(roce_frames, 72u);
  EXPECT_EQ(ce, 54u);
  EXPECT_EQ(j["switch"]["ports"]["B"]["ecn_marked"], 54);
  EXPECT_EQ(j["switch"]["ports"]["B"]["max_queue_bytes"], 203546);
  // B's CNPs: opcode 0x81 on QP1's path to each sender's QP 2, BECN set.
  size_t cnps = 0;
  for (const Bytes& f : frames_of(d / "out.B-tx.pcap")) {
    const auto x = roce::decode(f);
    if (!x || x->bth.opcode != roce::op::CNP) continue;
    ++cnps;
    EXPECT_TRUE(x->bth.becn());
    EXPECT_EQ(x->bth.dest_qp, 2u);
  }
  EXPECT_EQ(cnps, 19u);
  EXPECT_EQ(j["nodes"]["B"]["tx"]["by_opcode"]["CNP"]["packets"], 19);
  // The merged capture: every frame the five nodes sent, once (no pause frames here).
  uint64_t tx = 0;
  for (const char* n : {"A", "B", "C", "D", "E"}) tx += j["nodes"][n]["tx"]["packets"].get<uint64_t>();
  EXPECT_EQ(frames_of(d / "out.pcap").size(), tx);
}

TEST(SystemSwitch, PfcFramesAreInTheCaptures) {
  const fs::path d = test_dir();
  const SimResult r = run_sim(d, {"run", kSourceDir + "/scenarios/topology/incast_pfc.yaml", "--pcap", "out.pcap",
                                  "--json", "out.json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_text(d / "out.json"));
  std::map<int, int> xoff, xon;  // by the sending port's MAC (last byte: port + 1)
  for (const Bytes& f : frames_of(d / "out.pcap")) {
    const auto p = ernic::pfc::parse(f.data(), f.size());
    if (!p) continue;
    EXPECT_TRUE(p->pfc);
    EXPECT_EQ(p->class_enable, 1u << 3);
    EXPECT_EQ(Bytes(f.begin() + 6, f.begin() + 11), (Bytes{0x02, 0x5A, 0, 0, 0}));
    (p->time[3] ? xoff : xon)[f[11]]++;
  }
  // Ports 1 (A), 3 (C), 4 (D), 5 (E): 3 XOFF and 3 XON each; none to B.
  EXPECT_EQ(xoff, (std::map<int, int>{{1, 3}, {3, 3}, {4, 3}, {5, 3}}));
  EXPECT_EQ(xon, (std::map<int, int>{{1, 3}, {3, 3}, {4, 3}, {5, 3}}));
  EXPECT_EQ(j["switch"]["totals"]["pfc_xoff_sent"], 12);
  EXPECT_EQ(j["switch"]["totals"]["dropped"], 0);
  size_t at_a = 0;
  for (const Bytes& f : frames_of(d / "out.A-rx.pcap")) at_a += ernic::pfc::parse(f.data(), f.size()) ? 1 : 0;
  EXPECT_EQ(at_a, 6u);
  EXPECT_EQ(j["nodes"]["A"]["link"]["pause_frames_received"], 6);
}

// A three-node scenario: A writes 16 KiB to B and to C, with faults given.
std::string three_nodes(const std::string& faults) {
  return R"(scenario: t
seed: 5
limits: { sim_time_us: 2000 }
topology: switch
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1 }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }
  C: { mac: "02:00:00:00:00:0c", ip: 10.0.0.3 }
steps:
  - init: [A, B, C]
  - register_mr: { node: A, name: src, length: 16384 }
  - register_mr: { node: B, name: dst, length: 16384 }
  - register_mr: { node: C, name: dst, length: 16384 }
  - fill: { node: A, mr: src, pattern: random, seed: 2 }
  - connect: { name: ab, client: A, server: B, client_mr: src, server_mr: dst, client_qp: 2, client_psn: 0x100 }
  - connect: { name: ac, client: A, server: C, client_mr: src, server_mr: dst, client_qp: 3, client_psn: 0x200 }
)" + faults + R"(  - post: { conn: ab, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 16384 } ] }
  - post: { conn: ac, node: A, wqes: [ { opcode: write, wr_id: 2, local_mr: src, length: 16384 } ] }
  - wait_completions: { conn: ab, node: A, count: 1, timeout_us: 500, expect: [ { wr_id: 1, error: false } ] }
  - wait_completions: { conn: ac, node: A, count: 1, timeout_us: 500, expect: [ { wr_id: 2, error: false } ] }
  - check_memory: { node: B, mr: dst, equals: { node: A, mr: src } }
  - check_memory: { node: C, mr: dst, equals: { node: A, mr: src } }
)";
}

// A rule on A->C counts and acts on A's frames to C only, before the
// switch (the dropped frame never reaches it); A->B is untouched. A rule
// on switch->B acts on B's port, after the switch (the switch sent it).
TEST(SystemSwitch, FaultsActOnTheirDirection) {
  const fs::path d = test_dir();
  write_text(d / "t.yaml", three_nodes("  - fault: { name: lose_c, dir: A->C, match: { nth: 2, opcode: RC_WRITE_MIDDLE }, "
                                       "action: drop }\n"
                                       "  - fault: { name: lose_b, dir: switch->B, match: { opcode: RC_WRITE_MIDDLE, nth: 1 }, "
                                       "action: drop }\n"));
  const SimResult r = run_sim(d, {"run", "t.yaml", "--json", "out.json", "--log", "out.log", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_text(d / "out.json"));
  EXPECT_EQ(j["faults_applied"], 2);
  std::vector<std::string> where;
  for (const auto& e : j["events"])
    if (e["where"].get<std::string>().rfind("wire ", 0) == 0) where.push_back(e["where"].get<std::string>());
  EXPECT_EQ(where, (std::vector<std::string>{"wire switch->B", "wire A->C"}));
  // A->C's lost frame never reached the switch: A sent 4 + 4 (go-back) to C,
  // the switch got one fewer from A than A sent and forwarded them all;
  // switch->B's lost frame left the switch (counted out) and B missed it.
  const auto& a = j["switch"]["ports"]["A"];
  const uint64_t a_tx = j["nodes"]["A"]["tx"]["packets"].get<uint64_t>();
  EXPECT_EQ(a["frames_in"].get<uint64_t>(), a_tx - 1);
  const auto& b = j["switch"]["ports"]["B"];
  EXPECT_EQ(b["frames_out"].get<uint64_t>(), j["nodes"]["B"]["rx"]["packets"].get<uint64_t>() + 1);
  const std::string log = read_text(d / "out.log");
  EXPECT_NE(log.find("\"link\":\"A->C\",\"index\":4,\"rule\":\"lose_c\""), std::string::npos);
  EXPECT_NE(log.find("\"rule\":\"lose_b\""), std::string::npos);
}

// A node's MAC may be the one a switch port sends its pause frames from
// (02:5a:00:00:00:<port + 1>): A here has port C's. The XOFFs and XONs the
// switch sends C are still the switch's (switch->C), not A's (A->C).
TEST(SystemSwitch, PauseFramesAreTheSwitchsWhateverTheNodesMacs) {
  const fs::path d = test_dir();
  write_text(d / "t.yaml", R"(scenario: t
limits: { sim_time_us: 2000 }
topology: { switch: { pfc: { xoff_bytes: 8192, xon_bytes: 4096 } } }
nodes:
  A: { mac: "02:5a:00:00:00:03", ip: 10.0.0.1 }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }
  C: { mac: "02:00:00:00:00:0c", ip: 10.0.0.3 }
steps:
  - init: [A, B, C]
  - reg_write: { node: A, reg: XRNIC_PAUSE_CONF, value: 0x831 }
  - reg_write: { node: C, reg: XRNIC_PAUSE_CONF, value: 0x831 }
  - register_mr: { node: A, name: src, length: 65536 }
  - register_mr: { node: C, name: src, length: 65536 }
  - register_mr: { node: B, name: da, length: 65536 }
  - register_mr: { node: B, name: dc, length: 65536 }
  - fill: { node: A, mr: src, pattern: random, seed: 1 }
  - fill: { node: C, mr: src, pattern: random, seed: 2 }
  - connect: { name: ab, client: A, server: B, client_mr: src, server_mr: da }
  - connect: { name: cb, client: C, server: B, client_mr: src, server_mr: dc }
  - post: { conn: ab, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 65536 } ] }
  - post: { conn: cb, node: C, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 65536 } ] }
  - wait_completions: { conn: ab, node: A, count: 1, timeout_us: 500, expect: [ { error: false } ] }
  - wait_completions: { conn: cb, node: C, count: 1, timeout_us: 500, expect: [ { error: false } ] }
  - check_memory: { node: B, mr: da, equals: { node: A, mr: src } }
  - check_memory: { node: B, mr: dc, equals: { node: C, mr: src } }
  - expect_switch: { port: C, pfc_xoff_sent: ">0" }
  - expect_frames: { dir: switch->C, tap: rx, frames: [ { opcode: any, repeat: "+" } ] }
  - expect_frames: { dir: A->C, tap: rx, frames: [] }
)");
  const SimResult r = run_sim(d, {"run", "t.yaml", "--json", "out.json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_text(d / "out.json"));
  EXPECT_EQ(j["nodes"]["C"]["link"]["pause_frames_received"],
            j["switch"]["ports"]["C"]["pfc_xoff_sent"].get<uint64_t>() +
                j["switch"]["ports"]["C"]["pfc_xon_sent"].get<uint64_t>());
}

// A PFC deadlock: A and B READ from each other and pause the switch from
// small RX buffers, and the switch pauses them back; the READ responses wait
// behind the switch's XOFFs, which wait for the RX buffers, which wait for
// the responses. Only refreshed pause frames move. The waiting step fails
// at its own timeout (no hang), and the ports' paused_ns count the holds
// still running at the end.
TEST(SystemSwitch, PfcDeadlockEndsAtTheStepsTimeout) {
  const fs::path d = test_dir();
  write_text(d / "t.yaml", R"(scenario: t
limits: { sim_time_us: 5000 }
topology: { switch: { buffer_bytes: 65536, pfc: { xoff_bytes: 8192, xon_bytes: 4096 } } }
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1, rx: { buffer_bytes: 16384, handler_gbps: 20 } }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2, rx: { buffer_bytes: 16384, handler_gbps: 20 } }
steps:
  - init: [A, B]
  - reg_write: { node: A, reg: XRNIC_PAUSE_CONF, value: 0x831 }
  - reg_write: { node: B, reg: XRNIC_PAUSE_CONF, value: 0x831 }
  - reg_write: { node: A, reg: XRNIC_BUF_THRESHOLD_ROCE, value: 0x10000800 }
  - reg_write: { node: B, reg: XRNIC_BUF_THRESHOLD_ROCE, value: 0x10000800 }
  - register_mr: { node: A, name: m, length: 1048576, access: rw }
  - register_mr: { node: B, name: m, length: 1048576, access: rw }
  - register_mr: { node: A, name: l, length: 1048576, access: rw }
  - register_mr: { node: B, name: l, length: 1048576, access: rw }
  - connect: { name: ab, client: A, server: B, client_mr: m, server_mr: m }
  - connect: { name: ba, client: B, server: A, client_mr: m, server_mr: m }
  - post: { conn: ab, node: A, wqes: [ { opcode: read, wr_id: 1, local_mr: l, length: 1048576 },
                                       { opcode: write, wr_id: 2, local_mr: m, length: 1048576 } ] }
  - post: { conn: ba, node: B, wqes: [ { opcode: read, wr_id: 1, local_mr: l, length: 1048576 },
                                       { opcode: write, wr_id: 2, local_mr: m, length: 1048576 } ] }
  - wait_completions: { conn: ab, node: A, count: 2, timeout_us: 1000 }
)");
  const SimResult r = run_sim(d, {"run", "t.yaml", "--datapath", "model", "--json", "out.json", "--quiet"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_text(d / "out.json"));
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_NE(j["failures"][0]["what"].get<std::string>().find("expected 2 completion(s) on A QP2 within 1000 us, got 0"),
            std::string::npos);
  for (const char* p : {"A", "B"}) {
    const auto& c = j["switch"]["ports"][p];
    EXPECT_GT(c["pause_rx"].get<uint64_t>(), 3u) << p;        // the node's XOFF, refreshed
    EXPECT_GT(c["pfc_xoff_sent"].get<uint64_t>(), 3u) << p;   // the switch's, refreshed
    EXPECT_GT(c["paused_ns"].get<uint64_t>(), 900000u) << p;  // held from about 20 us on
    EXPECT_GT(c["queue_bytes_at_end"].get<uint64_t>(), 0u) << p;
  }
}

// expect_qp names every value that differs, with what it found: no CNP
// came, so the limit is PG332's 16, and the WRITE is acknowledged.
TEST(SystemSwitch, ExpectQpNamesEveryMismatch) {
  const fs::path d = test_dir();
  write_text(d / "t.yaml", R"(scenario: t
topology: switch
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1 }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }
steps:
  - init: [A, B]
  - register_mr: { node: A, name: src, length: 4096 }
  - register_mr: { node: B, name: dst, length: 4096 }
  - connect: { name: ab, client: A, server: B, client_mr: src, server_mr: dst, client_qp: 2 }
  - post: { conn: ab, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 4096 } ] }
  - wait_completions: { conn: ab, node: A, count: 1 }
  - expect_qp: { node: A, qp: 2, outstanding_limit: 16, outstanding: 0 }
  - expect_qp: { node: A, qp: 2, outstanding_limit: 8, outstanding: ">0" }
)");
  const SimResult r = run_sim(d, {"run", "t.yaml", "--json", "out.json", "--quiet"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_text(d / "out.json"));
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["what"], "node A QP2: outstanding_limit is 16, expected == 8; outstanding is 0, expected > 0");
  EXPECT_NE(j["failures"][0]["step"].get<std::string>().find("t.yaml:14:"), std::string::npos) << j["failures"][0];
}

TEST(SystemSwitch, TwoRunsGiveIdenticalOutputs) {
  const fs::path d1 = test_dir(".run1"), d2 = test_dir(".run2");
  const std::vector<std::string> args = {"run", kSourceDir + "/scenarios/examples/switch_three_nodes.yaml", "--pcap",
                                         "out.pcap", "--vcd", "out.vcd", "--log", "out.log", "--json", "out.json",
                                         "--quiet"};
  ASSERT_EQ(run_sim(d1, args).exit_code, 0);
  ASSERT_EQ(run_sim(d2, args).exit_code, 0);
  for (const char* name : {"out.pcap", "out.A-tx.pcap", "out.A-rx.pcap", "out.B-tx.pcap", "out.B-rx.pcap",
                           "out.C-tx.pcap", "out.C-rx.pcap", "out.vcd", "out.log"}) {
    const std::string a = read_text(d1 / name), b = read_text(d2 / name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_TRUE(a == b) << name << " differs between the two runs";
  }
  auto j1 = nlohmann::json::parse(read_text(d1 / "out.json"));
  auto j2 = nlohmann::json::parse(read_text(d2 / "out.json"));
  j1.erase("wall");
  j2.erase("wall");
  EXPECT_EQ(j1, j2);
  EXPECT_TRUE(j1.contains("switch"));
}

}  // namespace
