// tb/system: the QP-setup offload in the system (model/qp_setup/
// qp_setup_fsm.h, scenarios/*/qp_setup_fsm_*.yaml).
//
// - Each qp_setup_fsm scenario passes with the RTL (`datapath: rtl`) and
//   with the C++ reference model (`datapath: model`, the same file with the
//   key added); both give, per node, the same ERNIC register accesses
//   (driver's and the block's, in order, with their values), the same
//   frames, and the same state/status records, whose core cycles differ by
//   at most QpSetupFsm::kModelCycleBound.
// - The link timeout is LINK_TIMEOUT core cycles long (the scenario's 1000,
//   plus the RTL's two-flop synchroniser), and a link that comes back 2 us
//   into the wait ends it early.
// - The waveform has the block's model signals and its RTL.
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/trace/vcd.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

constexpr uint64_t kModelCycleBound = 4;  // model/qp_setup/qp_setup_fsm.h

std::vector<json> read_log(const fs::path& p) {
  std::vector<json> out;
  std::istringstream s(read_text(p));
  for (std::string line; std::getline(s, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

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

class SystemQpSetup : public ::testing::TestWithParam<const char*> {};

TEST_P(SystemQpSetup, RtlAndModelAgree) {
  const std::string scen = GetParam();
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
  EXPECT_LE(worst, kModelCycleBound);
  std::printf("[ %s ] %zu state records, RTL vs model at most %llu core cycle(s) apart\n", scen.c_str(), sa.size(),
              (unsigned long long)worst);
  // The report counts the commands by status.
  const json jr = json::parse(read_text(dir / "rtl.json")), jm = json::parse(read_text(dir / "model.json"));
  EXPECT_EQ(jr["nodes"]["A"]["qp_setup_fsm"]["status_counts"], jm["nodes"]["A"]["qp_setup_fsm"]["status_counts"]);
  EXPECT_EQ(jr["nodes"]["A"]["qp_setup_fsm"]["datapath"], "rtl");
  EXPECT_EQ(jm["nodes"]["A"]["qp_setup_fsm"]["datapath"], "model");
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SystemQpSetup,
                         ::testing::Values("handshake/qp_setup_fsm_ready.yaml", "errors/qp_setup_fsm_qpn_range.yaml",
                                           "errors/qp_setup_fsm_pool_exhausted.yaml",
                                           "errors/qp_setup_fsm_psn_range.yaml", "errors/qp_setup_fsm_qpn_active.yaml",
                                           "errors/qp_setup_fsm_link_timeout.yaml"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = fs::path(i.param).stem().string();
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// CMAC_INIT lasts LINK_TIMEOUT cycles when the link stays down, less when
// it comes back in time; the status and state records say how it ended.
TEST(SystemQpSetupTiming, LinkTimeoutIsLinkTimeoutCycles) {
  const fs::path dir = test_dir();
  SimResult r = run_sim(dir, {"run", kSourceDir + "/scenarios/errors/qp_setup_fsm_link_timeout.yaml", "--log", "o.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::pair<std::string, uint64_t>> seq;  // state or status value, cycle
  for (const auto& x : read_log(dir / "o.jsonl"))
    if (x["kind"] == "state" && x["node"] == "A" && x["what"].get<std::string>().rfind("qp_setup_fsm.", 0) == 0)
      seq.emplace_back(x["value"].get<std::string>(), x["cycle"].get<uint64_t>());
  // Commands: create QP2 (0x13), create QP2 (0x17), release, create QP3 in
  // the parallel (0x17), release, create QP2 (0x17).
  std::vector<std::pair<uint64_t, uint64_t>> waits;  // CMAC_INIT entry -> its end
  std::vector<std::string> codes;
  for (size_t i = 0; i < seq.size(); ++i) {
    if (seq[i].first == "CMAC_INIT" && i + 1 < seq.size()) waits.emplace_back(seq[i].second, seq[i + 1].second);
    if (seq[i].first.rfind("0x", 0) == 0) codes.push_back(seq[i].first);
  }
  EXPECT_EQ(codes, (std::vector<std::string>{"0x13", "0x17", "0x17", "0x17", "0x17", "0x17"}));
  ASSERT_EQ(waits.size(), 4u);
  // Timed out: 1000 cycles of waiting (wait counter 0..1000), the 2-flop synchroniser aside.
  EXPECT_GE(waits[0].second - waits[0].first, 1000u);
  EXPECT_LE(waits[0].second - waits[0].first, 1003u);
  // Link up: the path registers (10 accesses, 3 cycles each) right away.
  EXPECT_LE(waits[1].second - waits[1].first, 40u);
  // The link came back 2 us (400 cycles) after the qp_setup started: the
  // wait ended then, well inside the 1000 cycles.
  const uint64_t w = waits[2].second - waits[2].first;
  EXPECT_GT(w, 300u) << w;
  EXPECT_LT(w, 450u) << w;
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
    EXPECT_GT(clocked_tick, kTimeout) << mhz;
    EXPECT_LT(clocked_stop, kTimeout / 20) << mhz;
    // The statuses and the cycles they came at (the same in both logs,
    // as compared above); the timed-out wait's length.
    const auto log = read_log(dir / (tag + "_stop.jsonl"));
    std::vector<std::pair<std::string, uint64_t>> seq;
    const uint64_t period = uint64_t(std::llround(1e6 / std::stod(mhz)));
    for (const auto& x : log) {
      if (x["kind"] == "state" && x["node"] == "A" && x["what"].get<std::string>().rfind("qp_setup_fsm.", 0) == 0)
        seq.emplace_back(x["value"].get<std::string>(), x["cycle"].get<uint64_t>());
      if (x["kind"] == "step" && x["step"] == "link" && x["phase"] == "start") {
        const uint64_t ph = x["t_ps"].get<uint64_t>() % period;
        if (ph > 0 && ph < period / 2) phase_before_edge = true;
        if (ph > period / 2) phase_after_edge = true;
      }
    }
    std::vector<std::string> codes;
    uint64_t init_at = 0, timeout_at = 0;
    for (const auto& [v, c] : seq) {
      if (v == "CMAC_INIT" && codes.empty()) init_at = c;
      if (v.rfind("0x", 0) == 0) {
        if (v == "0x13") timeout_at = c;
        codes.push_back(v);
      }
    }
    EXPECT_EQ(codes, (std::vector<std::string>{"0x13", "0x17", "0x17"})) << mhz;
    EXPECT_GE(timeout_at - init_at, kTimeout) << mhz;
    EXPECT_LE(timeout_at - init_at, kTimeout + 3) << mhz;
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
