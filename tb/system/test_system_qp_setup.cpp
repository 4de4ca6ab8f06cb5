// tb/system: the QP-setup offload in the system (model/qp_setup/
// qp_setup_fsm.h, scenarios/*/qp_setup_fsm_*.yaml).
//
// - Each qp_setup_fsm scenario passes with the RTL (`datapath: rtl`) and
//   with the C++ reference model (`datapath: model`, the same file with the
//   key added); both give, per node, the same ERNIC register accesses
//   (driver's and the block's, in order, with their values), the same
//   frames, and the same state/status records, whose core cycles differ by
//   at most QpSetupFsm::kModelCycleBound; and each log's records come at
//   the exact cycles derived below from each implementation's documented
//   timing (the RTL's edges, the model's kModelAccessCycles).
// - The link timeout is LINK_TIMEOUT + 1 core cycles long (the scenario's
//   1000: the wait counter runs 0..LINK_TIMEOUT), and a link that comes back
//   2 us into the wait ends it two edges (the synchroniser) after the first
//   edge that sees it, plus the ten path-register accesses.
// - The waveform has the block's model signals and its RTL.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "model/trace/vcd.h"
#include "tb/system/qp_setup_timing.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

// The same scenario with `datapath: model` (after the seed line).
fs::path model_copy(const std::string& scen, const fs::path& dir) {
  std::string text = read_text(kSourceDir + "/scenarios/" + scen);
  const size_t k = text.find("\nseed:");
  EXPECT_NE(k, std::string::npos) << scen;
  const size_t e = text.find('\n', k + 1);
  text.insert(e + 1, "datapath: model\n");
  const fs::path p = dir / "model.yaml";
  write_text(p, text);
  return p;
}

// A scenario and each node's commands in it, in order (from the file).
struct QpScenario {
  const char* file;
  std::vector<std::pair<std::string, std::vector<Command>>> nodes;
};
void PrintTo(const QpScenario& s, std::ostream* os) { *os << s.file; }

class SystemQpSetup : public ::testing::TestWithParam<QpScenario> {};

TEST_P(SystemQpSetup, RtlAndModelAgree) {
  const std::string scen = GetParam().file;
  const fs::path dir = test_dir("_" + fs::path(scen).stem().string());
  SimResult rtl = run_sim(dir, {"run", kSourceDir + "/scenarios/" + scen, "--log", "rtl.jsonl", "--json", "rtl.json"});
  ASSERT_EQ(rtl.exit_code, 0) << rtl.out << rtl.err;
  SimResult mod = run_sim(dir, {"run", model_copy(scen, dir).string(), "--log", "model.jsonl", "--json", "model.json"});
  ASSERT_EQ(mod.exit_code, 0) << mod.out << mod.err;
  EXPECT_NE(rtl.out.find("qp_setup_fsm (rtl)"), std::string::npos) << rtl.out;
  EXPECT_NE(mod.out.find("qp_setup_fsm (model)"), std::string::npos) << mod.out;
  const auto a = read_log(dir / "rtl.jsonl"), b = read_log(dir / "model.jsonl");
  // Per node: register accesses (op, address, value) and frames in order.
  for (const char* node : {"A", "B"}) {
    auto pick = [&](const std::vector<json>& log, const char* kind) {
      std::vector<std::string> v;
      for (const auto& r : log)
        if (r["kind"] == kind && r["node"] == node) {
          json x = r;
          x.erase("t_ps");
          x.erase("cycle");
          v.push_back(x.dump());
        }
      return v;
    };
    for (const char* kind : {"reg", "frame"}) {
      const auto ra = pick(a, kind), rb = pick(b, kind);
      EXPECT_EQ(ra.size(), rb.size()) << node << " " << kind;
      for (size_t i = 0; i < std::min(ra.size(), rb.size()); ++i)
        if (ra[i] != rb[i]) {
          ADD_FAILURE() << node << " " << kind << " record " << i << ":\n rtl   " << ra[i] << "\n model " << rb[i];
          break;
        }
    }
  }
  // The block's state and status records: same values, cycles within the bound.
  std::vector<json> sa, sb;
  for (const auto& r : a)
    if (r["kind"] == "state" && r["what"].get<std::string>().rfind("qp_setup_fsm.", 0) == 0) sa.push_back(r);
  for (const auto& r : b)
    if (r["kind"] == "state" && r["what"].get<std::string>().rfind("qp_setup_fsm.", 0) == 0) sb.push_back(r);
  ASSERT_EQ(sa.size(), sb.size());
  ASSERT_FALSE(sa.empty());
  uint64_t worst = 0;
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i]["node"], sb[i]["node"]) << i;
    EXPECT_EQ(sa[i]["what"], sb[i]["what"]) << i;
    EXPECT_EQ(sa[i]["value"], sb[i]["value"]) << i;
    EXPECT_EQ(sa[i]["qp"], sb[i]["qp"]) << i;
    const int64_t d = sa[i]["cycle"].get<int64_t>() - sb[i]["cycle"].get<int64_t>();
    worst = std::max<uint64_t>(worst, uint64_t(d < 0 ? -d : d));
  }
  // Each log's records at the cycles its implementation's timing gives
  // (derived above), each command from its REG_CHECK record.
  const json jr0 = json::parse(read_text(dir / "rtl.json"));
  const uint64_t period = jr0["clocks"]["core"]["period_ps"].get<uint64_t>();
  for (const auto& [node, cmds] : GetParam().nodes) {
    const uint64_t link_timeout = jr0["nodes"][node]["qp_setup_fsm"]["link_timeout_cycles"].get<uint64_t>();
    check_block_timing(a, node, cmds, true, link_timeout, period, "rtl");
    check_block_timing(b, node, cmds, false, link_timeout, period, "model");
  }
  // The model's documented contract with the RTL (qp_setup_fsm.h): every
  // state change within kModelCycleBound core cycles. Not a tolerance: the
  // two implementations differ by design (the model has no synchroniser and
  // no per-edge FSM), their exact cycles are checked just above; this is the
  // bound the header promises its users.
  EXPECT_LE(worst, kModelCycleBound);
  std::printf("[ %s ] %zu state records, RTL vs model at most %llu core cycle(s) apart\n", scen.c_str(), sa.size(),
              (unsigned long long)worst);
  // The report counts the commands by status.
  const json jr = json::parse(read_text(dir / "rtl.json")), jm = json::parse(read_text(dir / "model.json"));
  EXPECT_EQ(jr["nodes"]["A"]["qp_setup_fsm"]["status_counts"], jm["nodes"]["A"]["qp_setup_fsm"]["status_counts"]);
  EXPECT_EQ(jr["nodes"]["A"]["qp_setup_fsm"]["datapath"], "rtl");
  EXPECT_EQ(jm["nodes"]["A"]["qp_setup_fsm"]["datapath"], "model");
}

// The commands, from each scenario file's qp_setup / qp_release steps.
const Command kRef01{Cmd::kRefused, 0x01}, kRef0B{Cmd::kRefused, 0x0B}, kOk{Cmd::kCreated}, kRel{Cmd::kReleased},
    kNoSlot{Cmd::kNoSlot};
INSTANTIATE_TEST_SUITE_P(
    Scenarios, SystemQpSetup,
    ::testing::Values(
        // A: QP 2, 4, 3 set up; B: QP 3.
        QpScenario{"handshake/qp_setup_fsm_ready.yaml", {{"A", {kOk, kOk, kOk}}, {"B", {kOk}}}},
        // QPN 1, 0, 9, remote 0x1000000: 0x01; release of QP 5 (unknown): 0x01; QP 8 set up.
        QpScenario{"errors/qp_setup_fsm_qpn_range.yaml", {{"A", {kRef01, kRef01, kRef01, kRef01, kRef01, kOk}}}},
        // A: QP 2, 3 set up, QP 4 no slot, QP 2 released, QP 4 set up; B: a slot too small.
        QpScenario{"errors/qp_setup_fsm_pool_exhausted.yaml",
                   {{"A", {kOk, kOk, kNoSlot, kRel, kOk}}, {"B", {kNoSlot}}}},
        // SQ PSN 0x1000000, expected PSN 0xFFFFFFFF: 0x0B in REG_CHECK; PSN 0xFFFFFF set up.
        QpScenario{"errors/qp_setup_fsm_psn_range.yaml", {{"A", {kRef0B, kRef0B, kOk}}}},
        // QP 2 set up, again (held here: 0x0B), QP 3 (CM's, enabled in ERNIC:
        // 0x0B after the read), QP 2 released, set up again.
        QpScenario{"errors/qp_setup_fsm_qpn_active.yaml",
                   {{"A", {kOk, kRef0B, Command{Cmd::kEnabledInErnic}, kRel, kOk}}}},
        // QP 2 times out, QP 2 set up, released, QP 3 with the link back 2 us in, released, QP 2 set up.
        QpScenario{"errors/qp_setup_fsm_link_timeout.yaml",
                   {{"A", {Command{Cmd::kTimedOut}, kOk, kRel, Command{Cmd::kCreatedLinkBack}, kRel, kOk}}}}),
    [](const ::testing::TestParamInfo<QpScenario>& i) {
      std::string n = fs::path(i.param.file).stem().string();
      for (char& c : n)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

// CMAC_INIT lasts LINK_TIMEOUT + 1 cycles when the link stays down, 30 when
// it is up, and ends two edges after the first edge that sees it come back
// (plus the 30); the status and state records say how it ended. The QP 3
// command is derived from the parallel's start on: the host's writes, the
// block's states, the link's return.
TEST(SystemQpSetupTiming, LinkTimeoutIsLinkTimeoutCycles) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"run", kSourceDir + "/scenarios/errors/qp_setup_fsm_link_timeout.yaml", "--log", "o.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto log = read_log(dir / "o.jsonl");
  std::vector<std::pair<std::string, uint64_t>> seq;  // state or status value, cycle
  for (const auto& x : block_records(log, "A")) seq.emplace_back(x.value, x.cycle);
  // Commands: create QP2 (0x13), create QP2 (0x17), release, create QP3 in
  // the parallel (0x17), release, create QP2 (0x17).
  std::vector<std::pair<uint64_t, uint64_t>> waits;  // CMAC_INIT entry -> its end
  std::vector<uint64_t> checks;                      // REG_CHECK entries
  std::vector<std::string> codes;
  for (size_t i = 0; i < seq.size(); ++i) {
    if (seq[i].first == "CMAC_INIT" && i + 1 < seq.size()) waits.emplace_back(seq[i].second, seq[i + 1].second);
    if (seq[i].first == "REG_CHECK") checks.push_back(seq[i].second);
    if (seq[i].first.rfind("0x", 0) == 0) codes.push_back(seq[i].first);
  }
  EXPECT_EQ(codes, (std::vector<std::string>{"0x13", "0x17", "0x17", "0x17", "0x17", "0x17"}));
  ASSERT_EQ(waits.size(), 4u);
  ASSERT_EQ(checks.size(), 6u);
  constexpr uint64_t kLinkTimeout = 1000;  // the scenario's link_timeout_cycles
  constexpr uint64_t kPeriod = 5000;       // core 200 MHz (the scenario sets no clocks)
  // Timed out: the edge that finds wait_q == LINK_TIMEOUT gives 0x13, the
  // (LINK_TIMEOUT + 1)-th after entry (the link was down long before: the
  // synchroniser reads 0 from the entry on).
  EXPECT_EQ(waits[0].second - waits[0].first, kLinkTimeout + 1);
  // Link up (and synchronised) at entry: the ten path registers, 3 edges each.
  EXPECT_EQ(waits[1].second - waits[1].first, 30u);
  EXPECT_EQ(waits[3].second - waits[3].first, 30u);

  // QP 3: the parallel's two branches start at t_s; the `setup` branch's
  // qp_setup writes QPCTRL, DESTQP, REMOTE_IP, UDP_PORT, MAC_LSB, MAC_MSB,
  // SQ_PSN, EXP_PSN, PD and CMD (model/host/qp_setup_driver.cpp create, run),
  // ten posted MMIO writes issued at t_s. The host port is idle then (the
  // step before, a qp_release, ended with a STATUS read, which does not
  // pass posted writes: model/link/axil.h), so they leave on the
  // host->device direction back to back, 4 + 24 bytes each at Gen3 x16
  // (scenarios/README.md pcie defaults): 28 x 130000 / 2048 = 1777.34 ->
  // 1777 ps (A-PCIE-1). The first reaches the NIC 250 ns after it left
  // (A-PCIE-3) and the port performs it from the next core edge E0: the
  // AW+W handshake edge, then the block's slave (one cycle: presented with
  // the RTL's rising edge, BVALID seen at the next core edge; qp_setup_fsm.h),
  // then the B edge (axil.h): 3 cycles a write, the later ones having
  // arrived long before. The CMD is taken at E0 + 28 cycles, the RTL's `go`
  // edge half a cycle later: REG_CHECK logged at cycle E0 / period + 29.
  uint64_t t_s = 0, t_link = 0;
  for (const auto& x : log) {
    if (x["kind"] == "step" && x["step"] == "parallel" && x["phase"] == "start") t_s = x["t_ps"].get<uint64_t>();
    if (t_s && !t_link && x["kind"] == "step" && x["step"] == "link" && x["phase"] == "start")
      t_link = x["t_ps"].get<uint64_t>();
  }
  ASSERT_NE(t_s, 0u);
  EXPECT_EQ(t_link, t_s + 2000000);  // the `cable` branch: wait 2 us, then the link
  // (4 + 24) x 8 x 130 x 1000 / (16 x 8 x 128) ps, to the nearest ps.
  const uint64_t tlp4 = (2 * 28 * 130000ull + 2048) / (2 * 2048);
  EXPECT_EQ(tlp4, 1777u);
  const uint64_t e0 = (t_s + tlp4 + 250000 + kPeriod - 1) / kPeriod;  // the first write's edge, in cycles
  const uint64_t reg_check = e0 + 29;
  EXPECT_EQ(checks[3], reg_check);
  // REG_CHECK 3 (the QPCONFi read), RES_ALLOC 34 (the slot, 11 writes).
  const uint64_t init = reg_check + 3 + 34;
  EXPECT_EQ(waits[2].first, init);
  // The link back at t_link: the first rising edge after it, two more for
  // the synchroniser, the ten accesses: READY at rtl_edge_after + 32.
  const uint64_t ready = rtl_ready_after_link(t_link, kPeriod);
  EXPECT_EQ(waits[2].second, ready);
  std::printf("QP 3: parallel at %llu ps, REG_CHECK cycle %llu, CMAC_INIT %llu, link back at %llu ps, READY %llu: "
              "%llu cycles of CMAC_INIT\n",
              (unsigned long long)t_s, (unsigned long long)reg_check, (unsigned long long)init,
              (unsigned long long)t_link, (unsigned long long)ready, (unsigned long long)(ready - init));
  // 2 us is 400 cycles: the wait ended inside the 1000 (a property of the scenario, now exact).
  EXPECT_EQ(waits[2].second - waits[2].first, ready - init);
  EXPECT_LT(ready - init, kLinkTimeout);
}

// The clock stopped in the link wait (model/qp_setup/qp_setup_fsm.h): with
// a LINK_TIMEOUT of 100000 cycles, a command that times out, one whose
// link comes back (after a zero-time up/down flap and a change of the other
// direction) and one whose link comes back later, run with the clock
// stopped while the RTL only waits (default) and with the clock running
// every cycle (--no-idle-skip). Both give the same transaction log (every
// state and status record with its cycle, every ERNIC register access and
// reg_read value, every step's start and end, hence the driver's STATUS
// polls ending at the same time), the same frames and the same report (but
// for the RTL datapath's clocked cycles);
// status 0x13 comes LINK_TIMEOUT cycles (+ the synchroniser) after
// CMAC_INIT; the stopped clock gives the RTL a few thousand edges, not
// 100000. Two core clocks put the link changes at different phases of the
// cycle: before the RTL's rising edge (mid-cycle) and after it.
TEST(SystemQpSetupTiming, LinkWaitWithStoppedClockEqualsEveryCycle) {
  const fs::path dir = test_dir();
  constexpr uint64_t kTimeout = 100000;
  bool phase_before_edge = false, phase_after_edge = false;
  for (const char* mhz : {"200", "250"}) {
    std::string y = R"(scenario: qp_setup_link_wait_skip
seed: 3
clocks: { core_mhz: MHZ }
limits: { sim_time_us: 3000 }
nodes:
  A:
    mac: "02:00:00:00:00:0a"
    ip: 10.0.0.1
    qp_setup_fsm: { pool: 2, link_timeout_cycles: 100000 }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2 }
steps:
  - init: [A, B]
  - link: { dir: B->A, state: down }
  - qp_setup: { node: A, qp: 2, remote: B, remote_qp: 2, psn: 0x100, expect_status: 0x13 }
  - reg_read: { node: A, reg: QDEPTHi, qp: 2 }
  - reg_read: { node: A, reg: QPCONFi, qp: 2 }
  - parallel:
      - name: setup
        steps:
          - qp_setup: { node: A, qp: 3, remote: B, remote_qp: 3, psn: 0x300, expect_status: 0x17 }
      - name: cable
        steps:
          - wait: { us: 3 }
          - link: { dir: B->A, state: up }
          - link: { dir: B->A, state: down }
          - reg_read: { node: A, reg: QDEPTHi, qp: 3 }
          - wait: { us: 4 }
          - link: { dir: A->B, state: down }
          - wait: { us: 4 }
          - link: { dir: B->A, state: up }
  - reg_expect: { node: A, reg: DESTQPCONFi, qp: 3, value: 3 }
  - reg_read: { node: A, reg: QPCONFi, qp: 3 }
  - link: { dir: A->B, state: up }
  - link: { dir: B->A, state: down }
  - parallel:
      - name: setup
        steps:
          - qp_setup: { node: A, qp: 4, remote: B, remote_qp: 4, psn: 0x400, expect_status: 0x17 }
      - name: cable
        steps:
          - wait: { us: 17 }
          - link: { dir: B->A, state: up }
  - reg_read: { node: A, reg: QPCONFi, qp: 4 }
)";
    y.replace(y.find("MHZ"), 3, mhz);
    const std::string tag = mhz;
    write_text(dir / (tag + ".yaml"), y);
    SimResult a = run_sim(dir, {"run", tag + ".yaml", "--log", tag + "_stop.jsonl", "--json", tag + "_stop.json",
                                "--pcap", tag + "_stop.pcap"});
    ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
    SimResult b = run_sim(dir, {"run", tag + ".yaml", "--log", tag + "_tick.jsonl", "--json", tag + "_tick.json",
                                "--pcap", tag + "_tick.pcap", "--no-idle-skip"});
    ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
    EXPECT_EQ(read_text(dir / (tag + "_stop.jsonl")), read_text(dir / (tag + "_tick.jsonl"))) << mhz;
    EXPECT_EQ(read_text(dir / (tag + "_stop.pcap")), read_text(dir / (tag + "_tick.pcap"))) << mhz;
    json ja = json::parse(read_text(dir / (tag + "_stop.json")));
    json jb = json::parse(read_text(dir / (tag + "_tick.json")));
    // The report's nodes, but for the RTL datapath's clocked cycles (what
    // --no-idle-skip changes).
    json na = ja["nodes"], nb = jb["nodes"];
    for (json* n : {&na, &nb})
      for (auto& [name, node] : n->items()) {
        node["datapath"].erase("core_cycles_clocked");
        node["datapath"].erase("cmac_cycles_clocked");
      }
    EXPECT_EQ(na, nb) << mhz;
    EXPECT_EQ(ja["nodes"]["A"]["qp_setup_fsm"]["status_counts"], (json{{"0x13", 1}, {"0x17", 2}}));
    const uint64_t clocked_stop = ja["idle_skip"]["qp_setup_fsm_clocked_core_cycles"]["A"].get<uint64_t>();
    const uint64_t clocked_tick = jb["idle_skip"]["qp_setup_fsm_clocked_core_cycles"]["A"].get<uint64_t>();
    const uint64_t period = uint64_t(std::llround(1e6 / std::stod(mhz)));
    // Every cycle: the RTL's clock runs at every core cycle of the run
    // (qp_setup_fsm.h, free_running), so it clocked floor(sim time /
    // period) cycles (the run does not end on an edge: no cycle half counted).
    const uint64_t sim_ps = jb["sim_time_ps"].get<uint64_t>();
    ASSERT_NE(sim_ps % period, 0u) << mhz;
    EXPECT_EQ(clocked_tick, sim_ps / period) << mhz;
    EXPECT_GT(clocked_tick, kTimeout) << mhz;  // so the timed-out wait was clocked edge by edge
    // Stopped: a cost bound, not a timing result (which is exact below and
    // equal to the every-cycle run's above). The edges the block is given are
    // the driver's: each STATUS poll (every 100 ns of the wait) clocks it, so
    // the count is the host's polling, not the block's behaviour; what the
    // test holds is that the stopped clock does not tick through the
    // 100000-cycle wait.
    EXPECT_LT(clocked_stop, kTimeout / 20) << mhz;
    // The statuses and the cycles they came at (the same in both logs,
    // as compared above); the timed-out wait's length.
    const auto log = read_log(dir / (tag + "_stop.jsonl"));
    const std::vector<uint64_t> links = link_steps(log);
    for (uint64_t t : links) {
      const uint64_t ph = t % period;
      if (ph > 0 && ph < period / 2) phase_before_edge = true;
      if (ph > period / 2) phase_after_edge = true;
    }
    std::vector<std::string> codes;
    uint64_t init_at = 0, timeout_at = 0;
    for (const auto& r : block_records(log, "A")) {
      if (r.value == "CMAC_INIT" && codes.empty()) init_at = r.cycle;
      if (r.value == "READY") {
        // The link that ended the wait: the last `link` step before READY
        // (B->A up; the A->B and zero-time up/down changes before it leave
        // cmac_link_up low at every edge). READY two synchroniser edges and
        // ten accesses after the first edge that saw it.
        uint64_t t_link = 0;
        for (uint64_t t : links)
          if (t < r.t_ps) t_link = t;
        EXPECT_EQ(r.cycle, rtl_ready_after_link(t_link, period)) << mhz << " MHz, link back at " << t_link << " ps";
      }
      if (r.value.rfind("0x", 0) == 0) {
        if (r.value == "0x13") timeout_at = r.cycle;
        codes.push_back(r.value);
      }
    }
    EXPECT_EQ(codes, (std::vector<std::string>{"0x13", "0x17", "0x17"})) << mhz;
    // wait_q counts 0..LINK_TIMEOUT; the edge that finds LINK_TIMEOUT gives
    // 0x13: LINK_TIMEOUT + 1 edges after CMAC_INIT, clocked or skipped.
    EXPECT_EQ(timeout_at - init_at, kTimeout + 1) << mhz;
    std::printf("[ %s MHz ] RTL clocked %llu cycles with the clock stopped in the link wait, %llu every cycle\n", mhz,
                (unsigned long long)clocked_stop, (unsigned long long)clocked_tick);
  }
  EXPECT_TRUE(phase_before_edge);
  EXPECT_TRUE(phase_after_edge);
}

TEST(SystemQpSetupWaveform, StateAndRtlSignals) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"run", kSourceDir + "/scenarios/handshake/qp_setup_fsm_ready.yaml", "--vcd", "o.vcd",
                              "--log", "o.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string vcd = (dir / "o.vcd").string();
  for (const char* v : {"top.A.qp_setup_fsm.state", "top.A.qp_setup_fsm.status", "top.A.qp_setup_fsm.busy",
                        "top.A.qp_setup_fsm.cmac_link_up", "top.B.qp_setup_fsm.state",
                        "top.A.qp_setup_fsm.rtl.qp_setup_fsm.state", "top.A.qp_setup_fsm.rtl.qp_setup_fsm.m_awvalid",
                        "top.A.qp_setup_fsm.rtl.qp_setup_fsm.m_awaddr", "top.A.qp_setup_fsm.rtl.qp_setup_fsm.s_wdata"})
    EXPECT_TRUE(ernic::trace::vcd_has_var(vcd, v)) << v;
  // At each state record's time the waveform shows that state (model and RTL signal).
  static const std::map<std::string, uint64_t> kCode = {
      {"IDLE", 0}, {"REG_CHECK", 1}, {"RES_ALLOC", 2}, {"CMAC_INIT", 3}, {"READY", 4}};
  size_t checked = 0;
  for (const auto& x : read_log(dir / "o.jsonl"))
    if (x["kind"] == "state" && x["node"] == "A" && x["what"] == "qp_setup_fsm.state") {
      const uint64_t t = x["t_ps"].get<uint64_t>(), want = kCode.at(x["value"].get<std::string>());
      EXPECT_EQ(ernic::trace::vcd_value_at(vcd, "top.A.qp_setup_fsm.state", t), want) << t;
      EXPECT_EQ(ernic::trace::vcd_value_at(vcd, "top.A.qp_setup_fsm.rtl.qp_setup_fsm.state", t), want) << t;
      ++checked;
    }
  EXPECT_EQ(checked, 12u);  // three creates on A: REG_CHECK, RES_ALLOC, CMAC_INIT, READY each
}

}  // namespace

// A qp_setup and a CM connect on one node in parallel branches must not
// both take the same QPN. The connect picks the lowest free QPN when it
// starts: (1) when the qp_setup's command is already in flight, the QPN is
// the block's from the command's start, so the connect takes another one;
// (2) when the connect has taken the QPN first and is still establishing
// it, the qp_setup is refused (exit 1, naming the step) instead of the
// block programming the QP and the CM overwriting it afterwards (both
// claimed QP 2; DESTQPCONFi[2] ended as the CM's 2, not the block's 5).
TEST(SystemQpSetupParallel, ConnectAndQpSetupDoNotShareAQpn) {
  const fs::path dir = test_dir();
  auto scenario = [](const std::string& x, const std::string& y, const std::string& after) {
    return "scenario: race\nseed: 3\nlimits: { sim_time_us: 300 }\nnodes:\n"
           "  A: { mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1, qp_setup_fsm: { pool: 2, link_timeout_cycles: 500 } }\n"
           "  B: { mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2 }\n"
           "steps:\n"
           "  - init: [A, B]\n"
           "  - register_mr: { node: A, name: src, length: 4096 }\n"
           "  - register_mr: { node: B, name: dst, length: 4096 }\n"
           "  - parallel:\n"
           "      - name: x\n"
           "        steps:\n" + x +
           "      - name: y\n"
           "        steps:\n" + y + after;
  };
  const std::string setup = "          - qp_setup: { node: A, qp: 2, remote: B, remote_qp: 5 }\n";
  const std::string connect = "          - connect: { name: c1, client: A, server: B, client_mr: src, server_mr: dst }\n";
  const std::string use =
      "  - post: { conn: c1, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: src, length: 4096 } ] }\n"
      "  - wait_completions: { conn: c1, node: A, expect: [ { wr_id: 1, error: false } ] }\n";
  // (1) The command first: the connect (1 us later) gets QP 3.
  write_text(dir / "first.yaml", scenario(setup, "          - wait: { us: 1 }\n" + connect,
                                          use + "  - reg_expect: { node: A, reg: DESTQPCONFi, qp: 2, value: 5 }\n"
                                                "  - reg_expect: { node: A, reg: QPCONFi, qp: 3, field: EN, value: 1 }\n"));
  SimResult r = run_sim(dir, {"run", "first.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // (2) The connect first: QP 2 is its, being established; the qp_setup fails.
  write_text(dir / "second.yaml", scenario(connect, setup, use));
  r = run_sim(dir, {"run", "second.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("second.yaml:17:13:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("QP 2 is being established by a connection of the driver"), std::string::npos) << r.out;
}
