// tb/system: waveform debugging (README.md "Waveforms and triggers").
//
// - The hierarchy holds the documented signals, with values checked against
//   the pcap (tkeep of each frame's last beat).
// - The .gtkw beside every VCD names only signals the VCD declares (both
//   parsed here, independently of model/system), every one of them, in
//   balanced groups, and points at the VCD.
// - vcd2fst accepts every waveform these tests write (full, windowed,
//   every-hit, no hit).
// - One trigger test per trigger kind: the hit is the instant the scenario
//   set up, taken from outside the trigger code (the transaction log, the
//   pcap with tshark, or the full VCD of the same deterministic run).
// - Trigger syntax / name errors: exit 2 naming the column.
// - Windows: every time stamp of a windowed VCD lies in [hit - PRE, hit +
//   POST] core cycles, and each window starts with every value equal to the
//   full dump's value at that time.
// - Determinism; --vcd with or without a trigger leaves pcap and log as
//   they are without --vcd.
// - A 10 ms run with one trigger writes under 5 % of the full dump's bytes
//   (the full dump measured with the byte-counting sink).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

constexpr uint64_t kCorePs = 5000;  // 200 MHz (the scenarios' core clock)

// ---- an independent VCD reader ---------------------------------------------
struct Vcd {
  struct Var {
    std::string name;  // full dotted name
    unsigned width = 0;
    std::string range;  // "[7:0]" or ""
  };
  std::vector<Var> vars;                             // declaration order (aliases: one entry per name)
  std::map<std::string, std::string> code_of;        // name -> code
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> changes;  // code -> (t, value)
  std::vector<uint64_t> times;                       // every #t, in order
  std::vector<std::pair<uint64_t, std::string>> dumps;  // (t, "$dumpvars"/"$dumpall")
  bool timescale_1ps = false;

  // Value in effect at t (last change at or before t).
  std::optional<std::string> at(const std::string& name, uint64_t t) const {
    auto c = code_of.find(name);
    if (c == code_of.end()) return std::nullopt;
    auto it = changes.find(c->second);
    if (it == changes.end()) return std::nullopt;
    std::optional<std::string> v;
    for (const auto& [tt, val] : it->second) {
      if (tt > t) break;
      v = val;
    }
    return v;
  }
  // 1-bit / vector token -> integer (x: nullopt).
  static std::optional<uint64_t> num(const std::optional<std::string>& s) {
    if (!s || s->empty()) return std::nullopt;
    if (*s == "0") return 0;
    if (*s == "1") return 1;
    if ((*s)[0] != 'b') return std::nullopt;
    if (s->find_first_not_of("01", 1) != std::string::npos) return std::nullopt;
    const std::string digits = s->substr(1);
    const size_t nz = digits.find('1');
    if (nz == std::string::npos) return 0;
    if (digits.size() - nz > 64) return std::nullopt;
    return std::stoull(digits.substr(nz), nullptr, 2);
  }
};

Vcd read_vcd(const fs::path& p) {
  std::ifstream f(p);
  Vcd v;
  std::vector<std::string> scope;
  std::string tok;
  // Header.
  while (f >> tok) {
    if (tok == "$timescale") {
      std::string all;
      while (f >> tok && tok != "$end") all += tok;
      v.timescale_1ps = all == "1ps";
    } else if (tok == "$scope") {
      std::string type, name, end;
      f >> type >> name >> end;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      f >> tok;
      scope.pop_back();
    } else if (tok == "$var") {
      std::string type, width, code, ref, t2;
      f >> type >> width >> code >> ref;
      std::string range;
      while (f >> t2 && t2 != "$end") range += t2;
      std::string full;
      for (const auto& s : scope) full += s + ".";
      full += ref;
      v.vars.push_back({full, unsigned(std::stoul(width)), range});
      v.code_of[full] = code;
    } else if (tok == "$enddefinitions") {
      f >> tok;
      break;
    } else if (tok[0] == '$') {
      while (f >> tok && tok != "$end") {
      }
    }
  }
  uint64_t now = 0;
  while (f >> tok) {
    if (tok[0] == '#') {
      now = std::stoull(tok.substr(1));
      v.times.push_back(now);
    } else if (tok == "$dumpvars" || tok == "$dumpall") {
      v.dumps.emplace_back(now, tok);
    } else if (tok[0] == '$') {
      continue;
    } else if (tok[0] == 'b' || tok[0] == 'r') {
      std::string code;
      f >> code;
      v.changes[code].emplace_back(now, tok);
    } else {
      v.changes[tok.substr(1)].emplace_back(now, tok.substr(0, 1));
    }
  }
  return v;
}

// Times at which a 1-bit signal rises.
std::vector<uint64_t> rises(const Vcd& v, const std::string& name) {
  std::vector<uint64_t> out;
  auto c = v.code_of.find(name);
  if (c == v.code_of.end()) return out;
  std::string prev = "x";
  for (const auto& [t, val] : v.changes.at(c->second)) {
    if (val == "1" && prev != "1") out.push_back(t);
    prev = val;
  }
  return out;
}

std::vector<nlohmann::json> read_log(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream f(p);
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string scen(const std::string& rel) { return kSourceDir + "/" + rel; }

struct WaveRun {
  SimResult r;
  nlohmann::json report;
  std::vector<uint64_t> hits() const {
    std::vector<uint64_t> h;
    for (const auto& x : report["waveform"]["trigger"]["hits"]) h.push_back(x["time_ps"].get<uint64_t>());
    return h;
  }
};

// ernic-sim run SCENARIO --vcd out.vcd --json out.json --quiet EXTRA... in dir.
WaveRun run_wave(const fs::path& dir, const std::string& scenario, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", scenario, "--vcd", "out.vcd", "--json", "out.json", "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  WaveRun r;
  r.r = run_sim(dir, args);
  if (fs::exists(dir / "out.json")) r.report = nlohmann::json::parse(read_text(dir / "out.json"));
  return r;
}

void expect_vcd2fst_accepts(const fs::path& vcd) {
  ASSERT_FALSE(std::string(VCD2FST_PROGRAM).empty()) << "vcd2fst (gtkwave) not found";
  const fs::path fst = fs::path(vcd).replace_extension(".fst");
  int st = -1;
  const std::string out = roce_test::run(roce_test::shell_quote(VCD2FST_PROGRAM) + " " +
                                             roce_test::shell_quote(vcd.string()) + " " +
                                             roce_test::shell_quote(fst.string()) + " 2>&1",
                                         &st);
  EXPECT_EQ(st, 0) << vcd << ": " << out;
  ASSERT_TRUE(fs::exists(fst)) << fst;
  EXPECT_GT(fs::file_size(fst), 0u) << fst;
}

// ---- hierarchy ---------------------------------------------------------------
TEST(SystemWave, HierarchyHasTheDocumentedSignals) {
  const fs::path dir = test_dir();
  WaveRun r = run_wave(dir, kDefaultScenario, {"--pcap", "out.pcap"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  const Vcd v = read_vcd(dir / "out.vcd");
  ASSERT_TRUE(v.timescale_1ps);
  std::vector<std::string> want = {
      "top.clocks.core_clk", "top.clocks.cmac_clk",
      // streams: CMAC TX/RX beats, the host's bypass TX FIFO, the TX seam's descriptor handshake, the RX
      // buffer's read side, roce_tx's ICRC stream in the RTL datapath
      "top.A.cmac.tx_axis_tvalid", "top.A.cmac.tx_axis_tready", "top.A.cmac.tx_axis_tlast", "top.A.cmac.tx_axis_tkeep",
      "top.A.cmac.rx_axis_tvalid", "top.A.cmac.rx_axis_tlast", "top.A.cmac.rx_axis_tkeep",
      "top.A.cmac.tx_fifo.s_axis_tvalid", "top.A.cmac.tx_fifo.s_axis_tready",
      "top.A.datapath.tx_seam.s_desc_valid", "top.A.datapath.tx_seam.s_desc_ready",
      "top.A.ernic.rx_buffer.m_axis_tvalid", "top.A.ernic.rx_buffer.m_axis_tready",
      "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.s_valid", "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.s_ready",
      "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.s_last", "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.s_keep",
      // QP state and PSNs, doorbells, interrupts
      "top.A.ernic.qp2.req_state", "top.A.ernic.qp2.resp_state", "top.A.ernic.qp2.fatal", "top.A.ernic.qp2.SQPSN",
      "top.A.ernic.qp2.expected_psn", "top.A.ernic.qp2.SQPI", "top.A.ernic.qp2.CQHEAD",
      "top.A.ernic.resp_hndler_o_send_cq_db_cnt", "top.A.ernic.rx_pkt_hndler_o_rq_db_data",
      "top.A.ernic.rnic_intr", "top.A.ernic.INTSTS",
      // MR lookups, AXI4-Lite, the link's frames
      "top.B.ernic.mr_lookup.lookup", "top.B.ernic.mr_lookup.index",
      "top.A.s_axi_lite.awvalid", "top.A.s_axi_lite.awaddr", "top.A.s_axi_lite.bvalid",
      "top.link.A_to_B.tx_frames", "top.link.A_to_B.tx_opcode", "top.link.A_to_B.tx_psn",
      "top.link.B_to_A.tx_syndrome", "top.link.A_to_B.rx_psn_gap", "top.link.A_to_B.rx_expected_psn"};
  // DMA requests and responses of every master
  for (const char* m : {"qp_mgr_m_axi", "wqe_proc_top_m_axi", "wqe_proc_wr_ddr_m_axi", "rx_pkt_hndler_ddr_m_axi",
                        "rx_pkt_hndler_rdrsp_m_axi", "resp_hndler_m_axi"})
    for (const char* s : {"rd_busy", "rd_addr", "rd_len", "rd_resp", "wr_busy", "wr_addr", "wr_len", "wr_resp"})
      want.push_back(std::string("top.A.ernic.") + m + "." + s);
  for (const auto& n : want) EXPECT_TRUE(v.code_of.count(n)) << n;

  // Values: one tx_axis_tlast pulse per frame A sent, and tkeep at it
  // covers the frame's last beat (bytes from the pcap).
  const auto tx = ernic::PcapReader::read_all((dir / "out.A-tx.pcap").string());
  const auto last = rises(v, "top.A.cmac.tx_axis_tlast");
  ASSERT_EQ(last.size(), tx.size());
  for (size_t k = 0; k < tx.size(); ++k) {
    const size_t n = tx[k].data.size() % 64;
    const uint64_t keep = n ? (uint64_t{1} << n) - 1 : ~uint64_t{0};
    EXPECT_EQ(Vcd::num(v.at("top.A.cmac.tx_axis_tkeep", last[k])), keep) << "frame " << k << " (" << tx[k].data.size() << " bytes)";
  }
  // The link's frame counter counts A's frames, at the pcap timestamps (ns).
  const auto frames = v.changes.at(v.code_of.at("top.link.A_to_B.tx_frames"));
  ASSERT_EQ(frames.size(), tx.size() + 1);  // + the initial value
  for (size_t k = 0; k < tx.size(); ++k) EXPECT_EQ(frames[k + 1].first / 1000, tx[k].time_ns) << k;
  // The payload-read master's rd_resp counts one per completed read.
  const auto resp = v.changes.at(v.code_of.at("top.A.ernic.wqe_proc_top_m_axi.rd_resp"));
  EXPECT_EQ(Vcd::num(resp.back().second), resp.size() - 1);
}

// ---- .gtkw -------------------------------------------------------------------
TEST(SystemWave, GtkwNamesExactlyTheVcdSignalsInGroups) {
  const fs::path dir = test_dir();
  WaveRun r = run_wave(dir, kDefaultScenario, {});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  const Vcd v = read_vcd(dir / "out.vcd");
  std::ifstream g(dir / "out.vcd.gtkw");
  ASSERT_TRUE(g.good()) << "no out.vcd.gtkw";
  std::string dumpfile;
  std::set<std::string> named;
  std::vector<std::string> open_groups;
  size_t groups = 0;
  unsigned flags = 0;
  for (std::string line; std::getline(g, line);) {
    if (line.empty() || line.rfind("[*]", 0) == 0 || line[0] == '*') continue;
    if (line.rfind("[dumpfile]", 0) == 0) {
      dumpfile = line.substr(line.find('"') + 1);
      dumpfile.pop_back();
      continue;
    }
    if (line[0] == '[') continue;
    if (line[0] == '@') {
      flags = unsigned(std::stoul(line.substr(1), nullptr, 16));
      continue;
    }
    if (line[0] == '-') {
      if (flags & 0x800000) {
        open_groups.push_back(line.substr(1));
        ++groups;
      } else if (flags & 0x1000000) {
        ASSERT_FALSE(open_groups.empty()) << "group end without begin: " << line;
        EXPECT_EQ(open_groups.back(), line.substr(1));
        open_groups.pop_back();
      }
      continue;
    }
    // A signal: "top.A.cmac.tx_fifo_level[7:0]" -> name + range as the VCD declares it.
    ASSERT_EQ(open_groups.size(), 1u) << line << " outside a group";
    std::string name = line, range;
    if (name.back() == ']' && name.find(':') != std::string::npos) {
      range = name.substr(name.rfind('['));
      name = name.substr(0, name.rfind('['));
    }
    auto it = std::find_if(v.vars.begin(), v.vars.end(), [&](const Vcd::Var& x) { return x.name == name; });
    ASSERT_NE(it, v.vars.end()) << "the .gtkw names " << line << ", which the VCD does not declare";
    EXPECT_EQ(it->range, range) << line;
    // grouped by block: the group is the signal's scope under top
    EXPECT_EQ("top." + open_groups.back(), name.substr(0, name.rfind('.'))) << line;
    named.insert(name);
  }
  EXPECT_TRUE(open_groups.empty());
  EXPECT_EQ(dumpfile, "out.vcd");
  EXPECT_GT(groups, 20u);
  for (const auto& x : v.vars) EXPECT_TRUE(named.count(x.name)) << x.name << " is not in the .gtkw";
}

// ---- trigger kinds --------------------------------------------------------------
TEST(SystemWave, TriggerQpFatalAtTheLoggedTime) {
  const fs::path dir = test_dir();
  WaveRun r = run_wave(dir, scen("scenarios/errors/rc_write_silent_peer_fatal.yaml"),
                   {"--log", "out.log", "--trigger", "qp(A,2).fatal", "--window", "100,100"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  std::optional<uint64_t> logged;
  for (const auto& j : read_log(dir / "out.log"))
    if (j["kind"] == "state" && j["what"] == "qp_fatal" && j["node"] == "A" && j["qp"] == 2 && !logged)
      logged = j["t_ps"].get<uint64_t>();
  ASSERT_TRUE(logged);
  EXPECT_EQ(r.hits(), std::vector<uint64_t>{*logged});
  const Vcd v = read_vcd(dir / "out.vcd");
  EXPECT_EQ(Vcd::num(v.at("top.A.ernic.qp2.fatal", *logged)), 1u);
  EXPECT_EQ(Vcd::num(v.at("top.A.ernic.qp2.fatal", *logged - 1)), 0u);
  expect_vcd2fst_accepts(dir / "out.vcd");
}

TEST(SystemWave, TriggerOpAndSyndromeFindTheNak) {
  // A reordered WRITE packet: B answers with a NAK, PSN sequence error (AETH syndrome 0x60).
  const fs::path dir = test_dir();
  WaveRun r = run_wave(dir, scen("scenarios/errors/rc_write_reorder_resend_acked.yaml"),
                   {"--pcap", "out.pcap", "--log", "out.log", "--trigger", "op(B->A) == 0x11 && syn == 0x60",
                    "--trigger-mode", "every", "--window", "50,50"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  // tshark: the NAKs B sent, and their pcap times (ns).
  int st = 0;
  const auto rows = tshark_fields(dir / "out.B-tx.pcap", {"infiniband.bth.opcode", "infiniband.aeth.syndrome"}, &st);
  ASSERT_EQ(st, 0);
  const auto tx = ernic::PcapReader::read_all((dir / "out.B-tx.pcap").string());
  ASSERT_EQ(rows.size(), tx.size());
  std::vector<uint64_t> nak_ns;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i][0].empty() && to_u64(rows[i][0]) == 0x11 && !rows[i][1].empty() && to_u64(rows[i][1]) == 0x60)
      nak_ns.push_back(tx[i].time_ns);
  ASSERT_FALSE(nak_ns.empty());
  const auto hits = r.hits();
  ASSERT_EQ(hits.size(), nak_ns.size());
  // The log's time of those frames, in ps; the pcap's in ns.
  std::vector<uint64_t> logged;
  for (const auto& j : read_log(dir / "out.log"))
    if (j["kind"] == "frame" && j["dir"] == "tx" && j["link"] == "B->A" && j["opcode"] == 0x11 && j.value("syndrome", -1) == 0x60)
      logged.push_back(j["t_ps"].get<uint64_t>());
  EXPECT_EQ(hits, logged);
  for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i] / 1000, nak_ns[i]);
  expect_vcd2fst_accepts(dir / "out.vcd");
}

TEST(SystemWave, TriggerPsnGapAtTheReorderedArrival) {
  const fs::path dir = test_dir();
  const std::string s = scen("scenarios/errors/rc_write_reorder_resend_acked.yaml");
  fs::create_directories(dir / "full");
  ASSERT_EQ(run_wave(dir / "full", s, {"--pcap", "out.pcap"}).r.exit_code, 0);
  WaveRun r = run_wave(dir, s, {"--trigger", "psn_gap(A->B)", "--window", "20,20"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  // B's receive tap (tshark): the first RC request whose PSN is not the
  // previous request's + 1 (WRITEs only here).
  int st = 0;
  const auto rows = tshark_fields(dir / "full" / "out.B-rx.pcap", {"infiniband.bth.opcode", "infiniband.bth.psn"}, &st);
  ASSERT_EQ(st, 0);
  std::optional<size_t> k;
  std::optional<uint64_t> expect;
  for (size_t i = 0; i < rows.size() && !k; ++i) {
    if (rows[i][0].empty()) continue;
    const uint64_t op = to_u64(rows[i][0]), psn = to_u64(rows[i][1]);
    if (op > 0x0C) continue;  // not an RC request
    if (expect && psn != *expect) k = i;
    expect = (psn + 1) & 0xFFFFFF;
  }
  ASSERT_TRUE(k) << "the scenario should reorder a request";
  // That frame is handed on by B's CMAC when its rx_axis_tvalid rises (the k-th rise).
  const Vcd full = read_vcd(dir / "full" / "out.vcd");
  const auto rx = rises(full, "top.B.cmac.rx_axis_tvalid");
  ASSERT_GT(rx.size(), *k);
  ASSERT_EQ(r.hits().size(), 1u);
  EXPECT_EQ(r.hits()[0], rx[*k]);
}

// First core edge at which valid & !ready has held for n consecutive core edges (from a full VCD).
std::optional<uint64_t> first_stall(const Vcd& v, const std::string& valid, const std::string& ready, uint64_t n) {
  std::set<uint64_t> ts;
  for (const auto& name : {valid, ready})
    for (const auto& [t, val] : v.changes.at(v.code_of.at(name))) ts.insert(t);
  std::optional<uint64_t> since;
  for (auto it = ts.begin(); it != ts.end(); ++it) {
    const bool c = Vcd::num(v.at(valid, *it)) == 1u && Vcd::num(v.at(ready, *it)) == 0u;
    if (c && !since) since = (*it + kCorePs - 1) / kCorePs * kCorePs;
    if (!c) since.reset();
    const auto nx = std::next(it);
    const uint64_t until = nx == ts.end() ? ~uint64_t{0} : *nx;  // the condition holds in [*it, until)
    if (since && *since + (n - 1) * kCorePs < until) return *since + (n - 1) * kCorePs;
  }
  return std::nullopt;
}

TEST(SystemWave, TriggerAxisStallUnderPfcAndASlowReceiver) {
  // rc_write_pfc: B drains at 25 Gb/s; its RX buffer backs up (B.rx stalls)
  // and its PFC pause holds A's TX, whose datapath fills (A.tx stalls).
  const fs::path dir = test_dir();
  const std::string s = scen("scenarios/traffic/rc_write_pfc.yaml");
  fs::create_directories(dir / "full");
  ASSERT_EQ(run_wave(dir / "full", s, {}).r.exit_code, 0);
  const Vcd full = read_vcd(dir / "full" / "out.vcd");
  const auto a =
      first_stall(full, "top.A.datapath.tx_seam.s_desc_valid", "top.A.datapath.tx_seam.s_desc_ready", 16);
  const auto b = first_stall(full, "top.B.ernic.rx_buffer.m_axis_tvalid", "top.B.ernic.rx_buffer.m_axis_tready", 100);
  ASSERT_TRUE(a && b);
  WaveRun ra = run_wave(dir, s, {"--trigger", "axis(A.tx).stall >= 16", "--window", "10,10"});
  ASSERT_EQ(ra.r.exit_code, 0) << ra.r.err;
  EXPECT_EQ(ra.hits(), std::vector<uint64_t>{*a});
  fs::create_directories(dir / "b");
  WaveRun rb = run_wave(dir / "b", s, {"--trigger", "axis(B.rx).stall >= 100", "--window", "10,10"});
  ASSERT_EQ(rb.r.exit_code, 0) << rb.r.err;
  EXPECT_EQ(rb.hits(), std::vector<uint64_t>{*b});
  // == 100 hits at the same edge; > 100 one edge later.
  fs::create_directories(dir / "c");
  WaveRun rc = run_wave(dir / "c", s, {"--trigger", "axis(B.rx).stall > 100", "--window", "10,10"});
  EXPECT_EQ(rc.hits(), std::vector<uint64_t>{*b + kCorePs});
}

TEST(SystemWave, TriggerRegWriteAtTheLoggedWrite) {
  const fs::path dir = test_dir();
  WaveRun r = run_wave(dir, kDefaultScenario, {"--log", "out.log", "--trigger", "reg_write(A, SQPIi[2])", "--window", "5,5"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  std::vector<uint64_t> logged;
  for (const auto& j : read_log(dir / "out.log"))
    if (j["kind"] == "reg" && j["node"] == "A" && j["op"] == "write" && j["name"] == "SQPIi[2]")
      logged.push_back(j["t_ps"].get<uint64_t>());
  ASSERT_FALSE(logged.empty());
  EXPECT_EQ(r.hits(), std::vector<uint64_t>{logged[0]});
  // A written value: the first doorbell writes 1.
  fs::create_directories(dir / "v");
  WaveRun r2 = run_wave(dir / "v", kDefaultScenario, {"--trigger", "reg_write(A, SQPIi[2]) == 1", "--window", "5,5"});
  EXPECT_EQ(r2.hits(), std::vector<uint64_t>{logged[0]});
  fs::create_directories(dir / "n");
  WaveRun r3 = run_wave(dir / "n", kDefaultScenario, {"--trigger", "reg_write(B, SQPIi[2])", "--window", "5,5"});
  EXPECT_TRUE(r3.hits().empty()) << "B posts no WQE";
  expect_vcd2fst_accepts(dir / "n" / "out.vcd");  // no hit: declarations only
}

TEST(SystemWave, TriggerRtlSignalsByNameAndNumber) {
  const fs::path dir = test_dir();
  fs::create_directories(dir / "full");
  ASSERT_EQ(run_wave(dir / "full", kDefaultScenario, {}).r.exit_code, 0);
  const Vcd full = read_vcd(dir / "full" / "out.vcd");
  // Model signal with registered value names: qp2.req_state WAIT_ACK (2).
  std::optional<uint64_t> wait_ack;
  for (const auto& [t, val] : full.changes.at(full.code_of.at("top.A.ernic.qp2.req_state")))
    if (Vcd::num(val) == 2u && !wait_ack) wait_ack = t;
  ASSERT_TRUE(wait_ack);
  WaveRun r = run_wave(dir, kDefaultScenario, {"--trigger", "rtl(A.qp2.req_state) == WAIT_ACK", "--window", "5,5"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  EXPECT_EQ(r.hits(), std::vector<uint64_t>{*wait_ack});
  // A Verilated RTL signal, every hit: the ICRC block's crc_valid pulses.
  fs::create_directories(dir / "rtl");
  WaveRun r2 = run_wave(dir / "rtl", kDefaultScenario,
                    {"--trigger", "rtl(A.u_tx.u_icrc.crc_valid) == 1", "--trigger-mode", "every", "--window", "2,2"});
  ASSERT_EQ(r2.r.exit_code, 0) << r2.r.err;
  const auto pulses = rises(full, "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.crc_valid");
  ASSERT_EQ(pulses.size(), 18u);
  EXPECT_EQ(r2.hits(), pulses);
  // Combined: && binds tighter than ||, parentheses and ! work.
  fs::create_directories(dir / "comb");
  WaveRun r3 = run_wave(dir / "comb", kDefaultScenario,
                    {"--trigger", "!(rtl(A.qp2.req_state) != WAIT_ACK) || (qp(A,2).fatal && qp(A,2).SQPI == 7)",
                     "--window", "5,5"});
  EXPECT_EQ(r3.hits(), std::vector<uint64_t>{*wait_ack});
}

// rtl(A.qp_setup_fsm.state) == CMAC_INIT: the QP-setup FSM waits for a link
// held down (errors/qp_setup_fsm_link_timeout); every entry into CMAC_INIT is
// a hit, at the times the transaction log's qp_setup_fsm.state records give.
TEST(SystemWave, TriggerQpSetupFsmStateByName) {
  const fs::path dir = test_dir();
  const std::string sc = scen("scenarios/errors/qp_setup_fsm_link_timeout.yaml");
  WaveRun r = run_wave(dir, sc, {"--trigger", "rtl(A.qp_setup_fsm.state) == CMAC_INIT", "--trigger-mode", "every",
                                 "--window", "4,4", "--log", "out.log"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  std::vector<uint64_t> logged;
  for (const auto& j : read_log(dir / "out.log"))
    if (j.value("kind", "") == "state" && j.value("node", "") == "A" && j.dump().find("qp_setup_fsm.state") != std::string::npos &&
        j.dump().find("CMAC_INIT") != std::string::npos)
      logged.push_back(j["t_ps"].get<uint64_t>());
  ASSERT_GE(logged.size(), 2u) << "the scenario enters CMAC_INIT more than once";
  EXPECT_EQ(r.hits(), logged);
  expect_vcd2fst_accepts(dir / "out.vcd");
}

// ---- errors -------------------------------------------------------------------
TEST(SystemWave, TriggerErrorsNameTheColumn) {
  const fs::path dir = test_dir();
  struct Case {
    const char* expr;
    size_t column;
    const char* says;
  };
  // Nesting beyond 100 levels is an error at the 101st '(' or '!', not a
  // stack overflow (60,000 '!' crashed the recursive-descent parser).
  const std::string deep_not = std::string(101, '!') + "qp(A,2).fatal";
  const std::string deep_paren = "qp(A,2).fatal || " + std::string(60000, '(') + "qp(A,2).fatal" + std::string(60000, ')');
  const Case cases[] = {
      {deep_not.c_str(), 101, "nest deeper than 100 levels"},
      {deep_paren.c_str(), 118, "nest deeper than 100 levels"},
      {"qp(A,2).fatal &&", 17, "expected a signal"},
      {"qp(A,2).fatal & qp(A,3).fatal", 15, "use '&&'"},
      {"op(A->B) = 0x11", 10, "compare with '=='"},
      {"op(A-B) == 0x11", 5, "direction"},
      {"op(A->B) == 0x1G", 16, "not a digit"},
      // '_' separates digits: 0x_ has none (as 0x), 1_ and 1__0 misplace it.
      {"op(A->B) == 0x", 13, "number without digits"},
      {"op(A->B) == 0x_", 13, "number without digits"},
      {"op(A->B) == 0b_1", 13, "number without digits"},
      {"op(A->B) == 1_", 14, "'_' in a number goes between two digits"},
      {"op(A->B) == 1__0", 14, "'_' in a number goes between two digits"},
      {"op(A->B) == 0x1_", 16, "'_' in a number goes between two digits"},
      {"(qp(A,2).fatal", 15, "')'"},
      {"qp(A,2).fatal)", 14, "end of the expression"},
      {"foo(A)", 1, "unknown function 'foo'"},
      {"qp(C,2).fatal", 4, "unknown node 'C'"},
      {"qp(A,99).fatal", 1, "QPs 1..8"},
      {"qp(A,2).fatl", 9, "QP field 'fatl' does not exist"},
      {"axis(A.txx).stall >= 16", 8, "unknown stream 'txx'"},
      {"axis(A.tx).stall >= qp(A,2).SQPI", 21, "compares with a number"},
      {"reg_write(A, SQPI[2])", 14, "did you mean SQPIi[N]"},
      {"reg_write(A, SQPIi)", 14, "per-QP register"},
      {"rtl(A.nope.state) == 3", 5, "no traced signal matches"},
      {"rtl(A.qp2.req_state) == WAITING", 25, "'WAITING' is not a value"},
      {"rtl(A.u_tx.u_icrc.crc) == IDLE", 27, "no value names are registered"},
      {"syn == 0x60", 1, "needs a direction"},
      {"1 < 2 < 3", 7, "do not chain"},
      {"", 1, "empty"},
  };
  for (const auto& c : cases) {
    SimResult r = run_sim(dir, {"run", kDefaultScenario, "--vcd", "out.vcd", "--quiet", "--trigger", c.expr});
    EXPECT_EQ(r.exit_code, 2) << c.expr << "\n" << r.err;
    EXPECT_NE(r.err.find(fmt::format("column {}:", c.column)), std::string::npos) << c.expr << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.expr << "\n" << r.err;
  }
  // 100 levels are still fine.
  EXPECT_EQ(run_sim(dir, {"run", kDefaultScenario, "--vcd", "out.vcd", "--quiet", "--trigger",
                          std::string(100, '!') + "qp(A,2).fatal"})
                .exit_code,
            0);
  // Option errors.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--trigger", "qp(A,2).fatal", "--window", "10"},
        std::vector<std::string>{"--trigger", "qp(A,2).fatal", "--window", "-1,5"},
        std::vector<std::string>{"--trigger", "qp(A,2).fatal", "--trigger-mode", "last"},
        std::vector<std::string>{"--window", "10,10"}}) {
    std::vector<std::string> args = {"run", kDefaultScenario, "--vcd", "out.vcd", "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(run_sim(dir, args).exit_code, 2) << extra[1];
  }
  EXPECT_EQ(run_sim(dir, {"run", kDefaultScenario, "--quiet", "--trigger", "qp(A,2).fatal"}).exit_code, 2)
      << "--trigger without --vcd";
  EXPECT_FALSE(fs::exists(dir / "out.vcd.rtl.tmp"));
  EXPECT_FALSE(fs::exists(dir / "out.vcd.model.tmp"));
}

// A number alone is a condition, true when non-zero (README "Triggers"):
// `1` and `0x10` hit once at time 0, exactly as `1 == 1` and `1 != 0`; `0`
// never, as `0 == 1`.
TEST(SystemWave, TriggerBareNumberIsNonZero) {
  const fs::path dir = test_dir();
  for (const char* e : {"1", "0x10", "1 == 1", "1 != 0", "0", "0 == 1", "!0"}) {
    const WaveRun r = run_wave(dir, kDefaultScenario, {"--trigger", e});
    ASSERT_EQ(r.r.exit_code, 0) << e << "\n" << r.r.err;
    const bool truthy = std::string(e) != "0" && std::string(e) != "0 == 1";
    EXPECT_EQ(r.hits(), truthy ? std::vector<uint64_t>{0} : std::vector<uint64_t>{}) << e;
    EXPECT_EQ(r.report["waveform"]["trigger"]["hits"].size(), truthy ? 1u : 0u) << e;
  }
}

// ---- windows ---------------------------------------------------------------------
TEST(SystemWave, WindowsHoldOnlyTheCyclesAroundEveryHit) {
  const fs::path dir = test_dir();
  const std::string s = scen("scenarios/traffic/rc_write_pfc.yaml");
  fs::create_directories(dir / "full");
  ASSERT_EQ(run_wave(dir / "full", s, {}).r.exit_code, 0);
  const uint64_t pre = 40, post = 120;
  WaveRun r = run_wave(dir, s, {"--trigger", "op(B->A) == 0x11 || axis(A.tx).stall == 30", "--trigger-mode", "every",
                            "--window", fmt::format("{},{}", pre, post)});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  const auto hits = r.hits();
  ASSERT_GT(hits.size(), 3u);
  const Vcd w = read_vcd(dir / "out.vcd");
  auto inside = [&](uint64_t t) {
    for (uint64_t h : hits)
      if (t + pre * kCorePs >= h && t <= h + post * kCorePs) return true;
    return false;
  };
  ASSERT_FALSE(w.times.empty());
  for (uint64_t t : w.times) EXPECT_TRUE(inside(t)) << "time " << t << " ps is outside every window";
  // Each window opens with a dump of every value, equal to the full dump's then.
  const Vcd full = read_vcd(dir / "full" / "out.vcd");
  ASSERT_EQ(w.dumps.size(), r.report["waveform"]["trigger"]["windows"].get<size_t>());
  EXPECT_EQ(w.dumps.front().second, "$dumpvars");
  for (const auto& [t, kw] : w.dumps) {
    EXPECT_TRUE(inside(t));
    for (const auto& x : w.vars) ASSERT_EQ(w.at(x.name, t), full.at(x.name, t)) << x.name << " at " << t << " ps";
  }
  // ...and inside the windows, the same values as the full dump at every time.
  for (uint64_t t : w.times)
    for (const char* n : {"top.A.cmac.tx_axis_tvalid", "top.link.B_to_A.tx_frames", "top.clocks.core_clk",
                          "top.A.datapath.tx_seam.s_desc_ready",
                          "top.A.datapath.rtl.roce_datapath.u_tx.u_icrc.crc"})
      EXPECT_EQ(w.at(n, t), full.at(n, t)) << n << " at " << t;
  expect_vcd2fst_accepts(dir / "out.vcd");
  expect_vcd2fst_accepts(dir / "full" / "out.vcd");
}

// ---- determinism, and the simulation left as it is ----------------------------------
TEST(SystemWave, DeterministicAndTheSimulationUnchanged) {
  const fs::path dir = test_dir();
  const std::string s = scen("scenarios/errors/rc_write_reorder_resend_acked.yaml");
  const std::vector<std::string> trig = {"--trigger", "psn_gap(A->B) || op(B->A) == 0x11", "--trigger-mode", "every",
                                         "--window", "30,60"};
  std::map<std::string, fs::path> d;
  for (const char* k : {"plain", "vcd", "trig1", "trig2"}) {
    d[k] = dir / k;
    fs::create_directories(d[k]);
  }
  ASSERT_EQ(run_sim(d["plain"], {"run", s, "--pcap", "out.pcap", "--log", "out.log", "--quiet"}).exit_code, 0);
  ASSERT_EQ(run_wave(d["vcd"], s, {"--pcap", "out.pcap", "--log", "out.log"}).r.exit_code, 0);
  for (const char* k : {"trig1", "trig2"}) {
    std::vector<std::string> a = {"--pcap", "out.pcap", "--log", "out.log"};
    a.insert(a.end(), trig.begin(), trig.end());
    ASSERT_EQ(run_wave(d[k], s, a).r.exit_code, 0);
  }
  for (const char* f : {"out.pcap", "out.A-tx.pcap", "out.B-rx.pcap", "out.log"})
    for (const char* k : {"vcd", "trig1"})
      EXPECT_TRUE(read_text(d["plain"] / f) == read_text(d[k] / f)) << f << " differs with " << k;
  for (const char* f : {"out.vcd", "out.vcd.gtkw"}) {
    EXPECT_FALSE(read_text(d["trig1"] / f).empty());
    EXPECT_TRUE(read_text(d["trig1"] / f) == read_text(d["trig2"] / f)) << f << " differs between two runs";
  }
}

// ---- size: the byte-counting sink ----------------------------------------------------
TEST(SystemWave, TenMillisecondRunWithOneTriggerWritesUnderFivePercent) {
  const fs::path dir = test_dir();
  const std::string s = ERNIC_SOURCE_DIR "/tb/data/wave/write_idle_10ms.yaml";
  WaveRun r = run_wave(dir, s, {"--trigger", "reg_write(A, SQPIi[2]) == 2", "--window", "2000,2000", "--vcd-measure-full"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  EXPECT_GE(r.report["sim_time_ps"].get<uint64_t>(), 10'000'000'000ull) << "a 10 ms run";
  const auto& w = r.report["waveform"];
  const uint64_t bytes = w["bytes"].get<uint64_t>(), full = w["full_dump_bytes"].get<uint64_t>();
  EXPECT_EQ(bytes, fs::file_size(dir / "out.vcd"));
  ASSERT_EQ(r.hits().size(), 1u);
  EXPECT_GT(r.hits()[0], 10'000'000'000ull) << "the second WRITE's doorbell, after the idle 10 ms";
  EXPECT_LT(double(bytes), 0.05 * double(full));
  std::cout << "10 ms run: windowed VCD " << bytes << " bytes, full dump " << full << " bytes (counting sink): "
            << fmt::format("{:.3f} %", 100.0 * double(bytes) / double(full)) << "\n";
  RecordProperty("windowed_bytes", std::to_string(bytes));
  RecordProperty("full_dump_bytes", std::to_string(full));
  expect_vcd2fst_accepts(dir / "out.vcd");
}

TEST(SystemWave, CountingSinkCountsWhatTheFileHolds) {
  const fs::path dir = test_dir();
  WaveRun r = run_wave(dir, kDefaultScenario, {"--vcd-measure-full"});
  ASSERT_EQ(r.r.exit_code, 0) << r.r.err;
  EXPECT_EQ(r.report["waveform"]["full_dump_bytes"].get<uint64_t>(), fs::file_size(dir / "out.vcd"));
  EXPECT_EQ(r.report["waveform"]["bytes"].get<uint64_t>(), fs::file_size(dir / "out.vcd"));
}

}  // namespace
