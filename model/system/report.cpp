// model/system: the run's report: the JSON written with --json
// (make_report), put together from one function a part; the summary printed
// on stdout is report_text.cpp.
#include "model/system/report.h"

#include <fmt/format.h>

#include "model/datapath/sc/datapath.h"
#include "model/link/switch_counters.h"
#include "model/roce/opcodes.h"
#include "model/system/assumptions.h"
#include "model/system/report_ext.h"
#include "model/system/report_peer.h"

#ifndef ERNIC_GIT_HASH
#define ERNIC_GIT_HASH "unknown"
#endif
#ifndef ERNIC_VERILATOR_VERSION
#define ERNIC_VERILATOR_VERSION "unknown"
#endif

namespace ernic {

namespace {
// A node's datapath (model/datapath/sc): its kind, frame counts, the
// scoreboard's counters (rtl) and the clock edges its RTL ran.
nlohmann::json datapath_json(const RoceDatapath& d) {
  const DatapathStats& s = d.stats();
  const bool sb = std::string(d.kind()) != "model";
  return {{"kind", d.kind()},
          {"scoreboard", sb},
          {"tx_frames", s.tx_frames},
          {"rx_frames", s.rx_frames},
          {"bypass_frames", s.bypass_frames},
          {"tx_checked", s.tx_checked},
          {"rx_checked", s.rx_checked},
          {"bypass_checked", s.bypass_checked},
          {"mismatches", s.mismatches},
          {"rx_fifo_overflows", s.rx_fifo_overflows},
          {"meta_events", s.meta_events},
          {"core_cycles_clocked", s.core_cycles_clocked},
          {"cmac_cycles_clocked", s.cmac_cycles_clocked},
          {"unchecked_at_end", {{"tx", d.unchecked().tx}, {"rx", d.unchecked().rx}, {"bypass", d.unchecked().bypass}}}};
}
}  // namespace

using nlohmann::json;

namespace {
json counts_json(const OpcodeCounts& c) {
  json by = json::object();
  for (const auto& [op, v] : c.by_opcode) {
    const std::string name = op == 0x100 ? "NON_ROCE" : roce::opcode_name(uint8_t(op));
    by[name] = {{"packets", v.packets}, {"bytes", v.bytes}};
  }
  return {{"packets", c.packets}, {"bytes", c.bytes}, {"by_opcode", by}};
}
std::string loc_str(const SourceLoc& l) { return l.file.empty() ? "" : l.str(); }
// Every seam's protocol monitor (model/monitor/protocol.h), by interface name.
json protocol_json(const monitor::ProtocolMonitors& p) {
  json m = json::object();
  for (const auto& e : p.axis_monitors()) {
    const monitor::AxisCounters& c = e.mon->counters();
    m[e.mon->name()] = {{"kind", "axi4-stream"}, {"clock", e.mon->clock()}, {"beats", c.beats}, {"frames", c.frames},
                        {"stalls", c.stalls}, {"bubbles", c.bubbles}, {"violations", c.violations},
                        {"in_frame_at_end", e.mon->in_frame()}};
  }
  for (const auto& e : p.axil_monitors()) {
    const monitor::AxilCounters& c = e.mon->counters();
    json st = json::object();
    for (int ch = 0; ch < monitor::kAxilChannels; ++ch) st[monitor::axil_channel_name(ch)] = c.stalls[ch];
    m[e.mon->name()] = {{"kind", "axi4-lite"}, {"clock", e.mon->clock()}, {"writes", c.writes()}, {"reads", c.reads()},
                        {"stalls", c.total_stalls()}, {"stalls_by_channel", st}, {"slverr", c.slverr},
                        {"decerr", c.decerr}, {"violations", c.violations}, {"open_writes", e.mon->open_writes()},
                        {"open_reads", e.mon->open_reads()}};
  }
  return m;
}

// The outcome: failures, and with any the last frames of each direction.
void add_failures(json& r, System& sys) {
  json fails = json::array();
  for (const auto& f : sys.failures)
    fails.push_back({{"what", f.what}, {"step", loc_str(f.loc)}, {"time_ps", f.time_ps},
                     {"core_cycle", sys.core.cycle_at(f.time_ps)}});
  r["failures"] = fails;
  // Split, always: another process's failure at this one's last instant
  // may be one this process never hears of (it stopped as the instant
  // began), and the merge takes each direction's from its sender's part.
  if (!sys.failures.empty() || sys.split()) {
    // The last frames of each direction (tx tap), to read a failure without opening the pcap.
    json last = json::object();
    for (const auto& [name, d] : sys.dirs) {
      if (sys.scenario.topology_switch && d.tx.empty()) continue;  // N nodes: the directions that carried frames
      json l = json::array();
      for (size_t i = d.tx.size() > 6 ? d.tx.size() - 6 : 0; i < d.tx.size(); ++i) l.push_back(d.tx[i].str());
      last[name] = l;
    }
    r["last_frames"] = last;
  }
}

json compliance_json(System& sys) {
  json comp = json::array();
  for (const auto& c : sys.compliance.reports())
    comp.push_back({{"time_ps", c.t_ps}, {"dir", c.dir}, {"qp", c.dest_qp}, {"psn", c.psn}, {"rule", c.rule},
                    {"detail", c.detail}, {"pg332", ComplianceChecker::rule_text(c.rule)}});
  return comp;
}

json scoreboard_json(const monitor::Scoreboard& sb) {
  return {{"summary", sb.summary()},
          {"buffers", sb.buffers()},
          {"operations_tracked", sb.operations_tracked()},
          {"operations_completed", sb.operations_completed()},
          {"bytes_checked", sb.bytes_checked()},
          {"canary_bytes_checked", sb.guard_bytes_checked()},
          {"mismatches", sb.mismatches()},
          {"stood_aside", sb.stood_aside()},
          {"notes", sb.notes()}};
}

json ernic_json(const ErnicStats& s) {
  return {{"wqes_processed", s.wqes_processed}, {"cqes_written", s.cqes_written}, {"acks_sent", s.acks_sent},
          {"naks_sent", s.naks_sent}, {"acks_received", s.acks_received}, {"naks_received", s.naks_received},
          {"rx_dropped", s.rx_dropped}, {"rx_icrc_errors", s.rx_icrc_errors}, {"duplicates", s.duplicates},
          {"mads_received", s.mads_received}, {"illegal_wqes", s.illegal_wqes}, {"fatal_events", s.fatal_events},
          {"validation_errors", s.validation_errors},
          {"read_requests_received", s.read_requests_received}, {"read_responses_sent", s.read_responses_sent},
          {"read_responses_received", s.read_responses_received},
          {"retries", s.retries}, {"ack_timeouts", s.ack_timeouts}, {"retransmitted_packets", s.retransmitted_packets},
          {"resends_cancelled", s.resends_cancelled}};
}

json pcie_link_json(const PcieLink& p) {
  return {{"up", {{"tlps", p.tlps(PcieLink::kUp)}, {"payload_bytes", p.payload_bytes(PcieLink::kUp)},
                  {"busy_ps", p.busy_ps(PcieLink::kUp)}}},
          {"down", {{"tlps", p.tlps(PcieLink::kDown)}, {"payload_bytes", p.payload_bytes(PcieLink::kDown)},
                    {"busy_ps", p.busy_ps(PcieLink::kDown)}}}};
}

// RX buffer, PFC and the CMAC's TX underflows and bad FCS.
json link_json(Node& n, const ErnicStats& s) {
  json j = {{"rx_buffer_bytes", n.ernic->config().timing.rx_buffer_bytes}, {"rx_buffer_peak", s.rx_buffer_peak},
          {"rx_overflow_drops", s.rx_overflow_drops}, {"rx_xoff", s.rx_xoff},
          {"pfc_xoff_sent", n.cmac->pfc_stats().xoff_sent}, {"pfc_xon_sent", n.cmac->pfc_stats().xon_sent},
          {"pause_frames_received", n.cmac->pfc_stats().pause_rx}, {"tx_held", n.cmac->pfc_stats().held},
          {"tx_held_ns", n.cmac->pfc_stats().held_ps / 1000}, {"tx_underflows", n.cmac->pfc_stats().tx_underflows},
          {"rx_bad_fcs", n.cmac->pfc_stats().rx_bad_fcs}};
  if (n.cmac->pfc_stats().rx_too_long) j["rx_too_long"] = n.cmac->pfc_stats().rx_too_long;  // (the key only then)
  return j;
}

json mr_lookup_json(const MrLookup& ml) {
  json mj = {{"mode", to_string(ml.config().mode)}, {"lookups", ml.lookups()}};
  if (ml.config().mode == MrLookupMode::cam) {
    const MrCam::Counters& k = ml.cam_counters();
    mj["entries"] = ml.config().entries;
    mj["hits"] = k.hits;
    mj["misses"] = k.misses;
    mj["compulsory_misses"] = k.compulsory_misses;
    mj["capacity_misses"] = k.capacity_misses;
    mj["invalidation_misses"] = k.invalidation_misses;
    mj["evictions"] = k.evictions;
    mj["invalidations"] = k.invalidations;
    mj["hit_rate"] = k.lookups ? double(k.hits) / double(k.lookups) : 0.0;
    // Hits among the lookups of an MR the CAM had seen before (the first
    // use of every MR is a compulsory miss whatever N is).
    const uint64_t warm = k.lookups - k.compulsory_misses;
    mj["warm_hit_rate"] = warm ? double(k.hits) / double(warm) : 0.0;
    mj["dma_bytes_read"] = ml.dma_bytes_read();
  } else {
    mj["lookup_cycles"] = ml.config().mr_lookup_cycles;
  }
  return mj;
}

// The QP-setup offload (model/qp_setup/qp_setup_fsm.h).
json qp_setup_json(Node& n) {
  json codes = json::object();
  for (const auto& [code, cnt] : n.qp_setup->status_counts()) codes[fmt::format("0x{:02x}", code)] = cnt;
  return {{"datapath", n.qp_setup->is_rtl() ? "rtl" : "model"},
          {"pool", n.cfg.qp_setup_fsm->pool},
          {"window", n.qp_setup_driver->window()},
          {"slot_bytes", n.qp_setup_driver->geometry().slot_size()},
          {"link_timeout_cycles", n.cfg.qp_setup_fsm->link_timeout_cycles},
          {"commands", n.qp_setup->commands()},
          {"status_counts", codes},
          {"state", qps::state_name(n.qp_setup->state())},
          {"status", n.qp_setup->status()},
          {"ernic_mmio_waits", n.ernic_arb->mmio_waits()}};
}

// One node: its frames, connections, ERNIC counters, datapath, host port,
// PCIe link, link, MR lookup and QP-setup offload.
json node_json(Node& n) {
  if (n.peer) return peer_node_json(n);  // kind: peer (report_peer.h)
  const ErnicStats& s = n.ernic->stats();
  json cq = json::array();
  if (n.driver)
    for (const auto& c : n.driver->connections())
    cq.push_back({{"qpn", c->qpn}, {"remote_qpn", c->remote_qpn}, {"state", host::verbs_state_name(c->state)},
                  {"local_psn", c->local_psn}, {"remote_psn", c->remote_psn}, {"posted", c->posted},
                  {"completed", c->completed}});
  json j = {
      {"tx", counts_json(n.cmac->tx_counts())},
      {"rx", counts_json(n.cmac->rx_counts())},
      {"connections", cq},
      {"ernic", ernic_json(s)},
      {"datapath", datapath_json(*n.datapath)},
      {"axil", {{"reads", n.axil->reads()}, {"writes", n.axil->writes()}}},
      {"pcie", pcie_link_json(*n.pcie)},
      {"link", link_json(n, s)}};
  j["mr_lookup"] = mr_lookup_json(n.ernic->mr_lookup());
  if (n.qp_setup) j["qp_setup_fsm"] = qp_setup_json(n);
  add_extension_json(j, n);  // named extensions, when on (report_ext.h)
  if (n.pcie_dev) {
    const bridge::BridgeStats& b = n.pcie_dev->stats();
    j["bridge"] = {{"mmio_reads", b.mmio_reads}, {"mmio_writes", b.mmio_writes}, {"syncs", b.syncs},
                   {"dma_reads", b.dma_reads}, {"dma_writes", b.dma_writes}, {"dma_read_bytes", b.dma_read_bytes},
                   {"dma_write_bytes", b.dma_write_bytes}, {"interrupts", b.interrupts}, {"refused", b.refused}};
  }
  return j;
}

// The PCIe link of every node (model/dma/pcie.h): parameters and the
// formula's payload rates, in GB/s (= bytes per ns).
json pcie_json(const PcieConfig& pc) {
  const PcieParams pp = pcie_params(pc);
  return {{"gen", pc.gen}, {"lanes", pc.lanes}, {"mps", pc.mps}, {"mrrs", pc.mrrs}, {"rcb", pc.rcb},
          {"read_latency_ns", pc.read_latency_ns}, {"mmio_write_latency_ns", pc.mmio_write_latency_ns},
          {"outstanding", pc.outstanding}, {"raw_gbytes_per_s", pp.raw_bytes_per_ns()},
          {"write_payload_gbytes_per_s", pp.write_rate()}, {"read_payload_gbytes_per_s", pp.read_rate()},
          {"summary", pp.summary()}};
}

// A split run (model/system/split.h): this process's node and its link to
// the other process.
json split_json(System& sys) {
  const bridge::NetLinkStats s = sys.net_link()->stats();
  std::string me = sys.split_hub() ? kSplitSwitch : "";
  for (auto& n : sys.nodes)
    if (!n->remote) me = n->cfg.name;
  return {{"node", me},
          {"packets_sent", s.packets_sent},
          {"packets_received", s.packets_received},
          {"syncs_sent", s.syncs_sent},
          {"syncs_received", s.syncs_received},
          {"controls_sent", s.controls_sent},
          {"controls_received", s.controls_received},
          {"reads_asked", s.reads_asked},
          {"reads_served", s.reads_served},
          {"blocks", s.blocks},
          {"wall_blocked_s", s.wall_blocked_s},
          {"stopped_by", sys.split_stopped_by_}};
}

// Idle skipping: with it, a domain is evaluated only where a block has
// something to do (the RTL's clock runs only while it has a frame); the
// rest of its cycles are skipped.
json idle_skip_json(System& sys) {
  json rtl = json::object();
  json rtl_cmac = json::object();
  for (auto& n : sys.nodes) {
    if (!n->datapath) continue;  // kind: peer
    rtl[n->cfg.name] = n->datapath->stats().core_cycles_clocked;
    rtl_cmac[n->cfg.name] = n->datapath->stats().cmac_cycles_clocked;
  }
  json tk = json::object();
  for (const auto& [d, v] : sys.ticks) tk[d] = v;
  json j = {{"enabled", sys.idle_skip}, {"rtl_clocked_core_cycles", rtl},
            {"rtl_clocked_cmac_cycles", rtl_cmac}, {"ticker_cycles", tk}};
  for (auto& n : sys.nodes)
    if (n->qp_setup && n->qp_setup->is_rtl())
      j["qp_setup_fsm_clocked_core_cycles"][n->cfg.name] = n->qp_setup->cycles_clocked();
  return j;
}

// Randomised handshakes: each enabled scope's configuration and stalls.
json handshake_random_json(const monitor::ProtocolMonitors& p) {
  json hr = json::object();
  for (const auto& [scope, rnd] : p.randomizers()) {
    if (!rnd->enabled()) continue;
    json st = json::object();
    for (const auto& s : rnd->streams()) st[s.name] = s.stalls;
    hr[scope] = {{"seed", rnd->config().seed}, {"ready_pct", rnd->config().ready_pct},
                 {"valid_pct", rnd->config().valid_pct}, {"stall_cycles", st}, {"total_stall_cycles", rnd->total_stalls()}};
  }
  return hr;
}

// The switch (topology: switch): its parameters, each port's link and
// counters (model/link/switch_counters.h), and their totals (peaks: the
// largest port's).
json switch_json(System& sys) {
  const Switch& sw = *sys.net_switch;
  const SwitchTopology& t = *sys.scenario.topology_switch;
  json ports = json::object(), totals = json::object();
  for (const SwitchCounterName& n : kSwitchCounters) totals[n.name] = uint64_t(0);
  for (size_t p = 0; p < sw.ports(); ++p) {
    const SwitchPortCounters c = sw.port(p).counters_now();
    json pj = {{"rate_gbps", t.ports[p].rate_gbps}, {"delay_ns", t.ports[p].delay_ns},
               {"queue_bytes_at_end", sw.port(p).queue_bytes()}};
    for (const SwitchCounterName& n : kSwitchCounters) {
      pj[n.name] = c.*n.field;
      const bool peak = std::string(n.name).compare(0, 4, "max_") == 0;
      const uint64_t sofar = totals[n.name].get<uint64_t>();
      totals[n.name] = peak ? std::max(sofar, c.*n.field) : sofar + c.*n.field;
    }
    ports[sw.config().ports[p].name] = pj;
  }
  json j = {{"ports", ports}, {"totals", totals}, {"latency_ns", t.latency_ns}, {"buffer_bytes", t.buffer_bytes},
            {"unknown", t.flood_unknown ? "flood" : "drop"}, {"ecn", nullptr}, {"pfc", nullptr}};
  if (t.ecn.on) {
    j["ecn"] = {{"mode", t.ecn.red ? "red" : "threshold"}, {"mark_not_ect", t.ecn.mark_not_ect}};
    if (t.ecn.red) {
      j["ecn"]["min_bytes"] = t.ecn.min_bytes;
      j["ecn"]["max_bytes"] = t.ecn.max_bytes;
      j["ecn"]["probability"] = t.ecn.probability;
    } else {
      j["ecn"]["threshold_bytes"] = t.ecn.threshold_bytes;
    }
  }
  if (t.pfc.on) j["pfc"] = {{"xoff_bytes", t.pfc.xoff_bytes}, {"xon_bytes", t.pfc.xon_bytes}, {"priority", t.pfc.priority}};
  return j;
}

json reproduce_json(System& sys, const std::vector<std::string>& argv) {
  return {{"git", ERNIC_GIT_HASH},
          {"command_line", argv},
          {"seed", sys.scenario.seed},
          {"tools",
           {{"systemc", sc_core::sc_release()},
            {"verilator", ERNIC_VERILATOR_VERSION},
            {"compiler", __VERSION__},
            {"cplusplus", __cplusplus}}}};
}
}  // namespace

void order_by_time(json& list) {
  std::vector<std::pair<uint64_t, std::string>> keyed;
  for (const json& e : list) keyed.push_back({e.value("time_ps", uint64_t(0)), e.dump()});
  std::vector<size_t> idx(keyed.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return keyed[a] < keyed[b]; });
  json out = json::array();
  for (size_t k : idx) out.push_back(std::move(list[k]));
  list = std::move(out);
}

json make_report(System& sys, const std::vector<std::string>& argv, const WallClock& wall,
                 const std::string& scenario_path) {
  const uint64_t t = sc_core::sc_time_stamp().value();
  json r;
  r["scenario"] = sys.scenario.name;
  r["file"] = scenario_path;
  r["datapath"] = sys.scenario.datapath_name();   // as run (the scenario's key, or run --datapath)
  r["result"] = sys.exit_code == 0 ? "pass" : sys.exit_code == 3 ? (sys.time_limit_hit ? "time-limit" : "no-progress") : "fail";
  r["exit_code"] = sys.exit_code;
  add_failures(r, sys);
  r["faults_applied"] = sys.faults_applied;
  r["compliance"] = compliance_json(sys);
  r["scoreboard"] = scoreboard_json(sys.scoreboard);
  json errs = json::array();
  for (const auto& e : sys.ctx.errors) errs.push_back({{"time_ps", e.time_ps}, {"where", e.where}, {"what", e.what}});
  r["model_errors"] = errs;
  json evs = json::array();
  for (const auto& e : sys.ctx.events) evs.push_back({{"time_ps", e.time_ps}, {"where", e.where}, {"what", e.what}});
  r["events"] = evs;
  for (const char* k : {"failures", "model_errors", "events", "compliance"}) order_by_time(r[k]);
  if (!sys.stall_report.empty()) r["stall_report"] = sys.stall_report;
  if (sys.stopped_after_error)  // only then: a passing run's report is as it was
    r["stopped_after_error"] = {{"first_error_ps", sys.ctx.errors.front().time_ps},
                                {"after_error_us", sys.scenario.limits.after_error_us}};
  r["sim_time_ps"] = t;
  r["sim_time_us"] = double(t) / 1e6;
  r["clocks"] = {
      {"core", {{"mhz", sys.core.mhz()}, {"period_ps", sys.core.period_ps()}, {"cycles", sys.core.cycle_at(t)}}},
      {"cmac", {{"mhz", sys.cmac_clk.mhz()}, {"period_ps", sys.cmac_clk.period_ps()}, {"cycles", sys.cmac_clk.cycle_at(t)}}}};
  json steps = json::array();
  for (const auto& s : sys.steps_done)
    steps.push_back({{"step", s.kind}, {"at", loc_str(s.loc)}, {"start_ps", s.start_ps}, {"end_ps", s.end_ps}});
  r["steps"] = steps;
  json nodes = json::object();
  for (auto& n : sys.nodes)
    if (!n->remote) nodes[n->cfg.name] = node_json(*n);  // a split run: the other node in its process's report
  for (const auto& [node, p] : sys.programs)
    nodes[node]["program"] = {{"argv", p.argv}, {"status", p.status}, {"ok", p.ok}, {"output", p.output}};
  r["nodes"] = nodes;
  if (sys.net_switch) r["switch"] = switch_json(sys);
  if (sys.split()) r["split"] = split_json(sys);
  r["pcie"] = pcie_json(sys.scenario.pcie);
  r["idle_skip"] = idle_skip_json(sys);
  r["protocol_monitors"] = protocol_json(sys.ctx.protocol);
  r["handshake_random"] = handshake_random_json(sys.ctx.protocol);
  json as = json::array();
  for (const auto& a : assumptions()) as.push_back({{"id", a.id}, {"text", a.text}, {"reason", a.reason}});
  add_extension_assumptions(as, sys);  // only those of extensions in use (report_ext.h)
  r["assumptions"] = as;
  r["reproduce"] = reproduce_json(sys, argv);
  const double cyc = double(sys.core.cycle_at(t));
  r["wall"] = {{"seconds", wall.seconds},
               {"sim_core_cycles_per_wall_second", wall.seconds > 0 ? cyc / wall.seconds : 0.0},
               {"sim_time_per_wall_time", wall.seconds > 0 ? (double(t) * 1e-12) / wall.seconds : 0.0}};
  return r;
}

}  // namespace ernic
