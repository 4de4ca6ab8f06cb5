// model/system: building a system from a scenario: each node (host memory,
// PCIe link, ERNIC, the host's MMIO path, CMAC, datapath, driver), then the
// links between the nodes (wires and their faults), the monitors and link
// traces on them, the pcap taps; the RTL waveform; node lookup.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "model/system/system.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "Vqp_setup_fsm.h"
#include "model/datapath/sc/datapath.h"
#include "model/link/classify.h"
#include "model/roce/opcodes.h"
#include "rtl/verilator_fatal.h"
#include <verilated_vcd_sc.h>

namespace ernic {

using namespace sc_core;

namespace {
std::string pcap_stem(const std::string& p) {
  const std::string ext = ".pcap";
  if (p.size() > ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0)
    return p.substr(0, p.size() - ext.size());
  return p;
}
}  // namespace

std::string pcap_tap_path(const std::string& wire_pcap, const std::string& node, const char* dir) {
  return fmt::format("{}.{}-{}.pcap", pcap_stem(wire_pcap), node, dir);
}

bool output_has_side_files(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return true;
  return S_ISREG(st.st_mode);
}

PcieParams pcie_params(const PcieConfig& c) {
  PcieParams p;
  p.gen = c.gen;
  p.lanes = c.lanes;
  p.mps = c.mps;
  p.mrrs = c.mrrs;
  p.rcb = c.rcb;
  p.read_latency_ns = c.read_latency_ns;
  p.mmio_write_latency_ns = c.mmio_write_latency_ns;
  return p;
}

Node::Node(sc_module_name name, const NodeConfig& c, const Scenario& sc, const ClockDomain& core,
           const ClockDomain& cmac_clk, SimContext& ctx, const LinkParams& lp, uint64_t seed, bool idle_skip)
    : sc_module(name), cfg(c) {
  const std::string scope = std::string(this->name());
  mem = std::make_unique<HostMemory>(uint64_t(c.memory_mib) << 20);
  if (c.peer) {  // kind: peer (node_peer.cpp)
    build_peer(c, core, cmac_clk, ctx, lp);
    return;
  }
  ErnicConfig ec;
  ec.node = c.name;
  ec.num_qp = c.num_qp;
  ec.layout = reg_layout(sc.layout);
  ec.timing.ack_coalesce_packets = c.ack_coalesce_packets;
  ec.timing.ack_timeout_ns = c.ack_timeout_ns;
  ec.timing.rx_buffer_bytes = c.rx_buffer_bytes;
  ec.timing.rx_handler_gbps = c.rx_handler_gbps;
  ec.timing.rx_overflow_fails = c.rx_overflow_fails;
  ec.test_bug_ack_coalescing = c.test_bug_ack_coalescing;  // test only (run --plant-bug)
  ec.test_bug_cq_entry_race = c.test_bug_cq_entry_race;
  if (c.mr_cache_cam) {  // `mr_cache: cam` (model/mr, A-MRC-1..3)
    ec.mr.mode = MrLookupMode::cam;
    ec.mr.entries = c.mr_cache_entries;
  }
  if (c.ext.shadow_doorbell) {  // `extensions: shadow_doorbell` (model/ernic/shadow_db.h, X-SHADOW-DB-1..3)
    ec.shadow_db.enabled = true;
    ec.shadow_db.poll_ns = c.ext.shadow_doorbell->poll_ns;
  }
  if (c.ext.qp_ctx_cache) {  // `extensions: qp_ctx_cache` (model/ernic/qp_ctx_cache.h, X-QPC-CACHE-1..3)
    ec.qp_ctx.enabled = true;
    ec.qp_ctx.entries = c.ext.qp_ctx_cache->entries;
    ec.qp_ctx.context_bytes = c.ext.qp_ctx_cache->context_bytes;
  }
  // One PCIe link a node: its six DMA masters and the host's MMIO share it.
  pcie = std::make_unique<PcieLink>(pcie_params(sc.pcie));
  ec.dma.pcie = pcie->params();
  ec.dma.link = pcie.get();
  ec.dma.order = &pcie_order;
  ec.dma.outstanding = sc.pcie.outstanding;
  ernic = std::make_unique<Ernic>("ernic", core, *mem, ctx, scope + ".ernic", ec);
  build_host_port(c, sc, core, ctx, idle_skip);
  build_cmac(c, core, cmac_clk, ctx, lp, ec);
  build_datapath(c, sc, core, cmac_clk, ctx, ec, seed, idle_skip);
  build_driver(c, sc, core, ctx, lp, ec, seed);
  if (c.qp_setup_fsm) {
    host::QpSetupGeometry g;
    g.pool = c.qp_setup_fsm->pool;
    g.slot_bytes = c.qp_setup_fsm->slot_bytes;
    g.sq_depth = c.qp_setup_fsm->sq_depth;
    g.rq_depth = c.qp_setup_fsm->rq_depth;
    g.rq_elem_bytes = c.qp_setup_fsm->rq_elem_bytes;
    g.pmtu = c.qp_setup_fsm->pmtu;
    g.link_timeout_cycles = c.qp_setup_fsm->link_timeout_cycles;
    qp_setup_driver = std::make_unique<host::QpSetupDriver>(*driver, *axil, g);
  }
}

Node::Node(sc_module_name name, const NodeConfig& c) : sc_module(name), cfg(c), remote(true) {}

// The host's MMIO path: with qp_setup_fsm, ERNIC's arbiter, the block and
// the decoder in front of both; the AXI4-Lite port over the PCIe link.
void Node::build_host_port(const NodeConfig& c, const Scenario& sc, const ClockDomain& core, SimContext& ctx,
                           bool idle_skip) {
  const std::string scope = std::string(this->name());
  AxiLiteTarget* mmio_target = ernic.get();
  if (c.qp_setup_fsm) {  // BAR0: ERNIC's registers and the QP-setup block's window; ERNIC shared with its master
    ernic_arb = std::make_unique<AxilArbiter>(core, *ernic);
    QpSetupFsm::Config fc;
    fc.node = c.name;
    fc.rtl = sc.datapath != Datapath::model;  // rtl and user:<name>: the RTL FSM
    fc.free_running = !idle_skip;
    qp_setup = std::make_unique<QpSetupFsm>("qp_setup_fsm", core, ctx, scope + ".qp_setup_fsm", *ernic_arb, fc);
    mmio = std::make_unique<AxilDecoder>(*ernic_arb, *qp_setup, qps::kMmioBase, qps::kWindowBytes);
    mmio_target = mmio.get();
  }
  AxiLiteTiming at;
  at.mmio_latency_ns = sc.pcie.mmio_write_latency_ns;
  PcieLink* pl = pcie.get();
  InstantOrder* po = &pcie_order;
  axil = std::make_unique<AxiLitePort>(
      "s_axi_lite", core, *mmio_target, ctx, scope + ".s_axi_lite", at,
      [pl, po](bool to_nic, uint64_t ready, uint32_t payload, uint32_t issuer) {
        const InstantOrder::Turn turn(po, to_nic ? pcie_mmio_request_rank(issuer) : pcie_rank("mmio_completion"));
        return pl->send(to_nic ? PcieLink::kDown : PcieLink::kUp, ready, payload, ClockDomain::now_ps());
      });
}

// The CMAC: its PFC hold by XRNIC_PAUSE_CONF, a test's TX underflow.
void Node::build_cmac(const NodeConfig& c, const ClockDomain& core, const ClockDomain& cmac_clk, SimContext& ctx,
                      const LinkParams& lp, const ErnicConfig& ec) {
  const std::string scope = std::string(this->name());
  cmac = std::make_unique<Cmac>("cmac", cmac_clk, core, ctx, scope + ".cmac", lp);
  ernic->cmac = cmac.get();
  Ernic* e = ernic.get();
  cmac->node = c.name;
  std::copy(c.mac.b.begin(), c.mac.b.end(), cmac->mac);
  // PFC: ERNIC holds a traffic class paused by stat_rx_pause_req at a frame
  // boundary, by XRNIC_PAUSE_CONF (model/link/pfc.h).
  const uint32_t pause_conf_addr = ec.layout.global(regs::g::XRNIC_PAUSE_CONF);
  cmac->tx_hold = [e, pause_conf_addr](const FrameBytes& f, uint16_t stat) {
    return pfc::tx_held(e->peek(pause_conf_addr), is_rocev2_frame(f.data(), f.size()), stat);
  };
  if (c.test_tx_underflow)
    cmac->inject_tx_bubble(c.test_tx_underflow->frame, c.test_tx_underflow->after_beat, c.test_tx_underflow->cycles);
}

void Node::build_datapath(const NodeConfig& c, const Scenario& sc, const ClockDomain& core,
                          const ClockDomain& cmac_clk, SimContext& ctx, const ErnicConfig& ec, uint64_t seed,
                          bool idle_skip) {
  const std::string scope = std::string(this->name());
  Ernic* e = ernic.get();
  // The RoCEv2 datapath between ERNIC and the CMAC (model/datapath/sc):
  // the Verilated RTL or its reference models, by the scenario's
  // `datapath`. Its roce_rx classifies as PG332 section 8 has it: RoCEv2 to
  // ERNIC, every other frame to the host's bypass path, untouched.
  DatapathConfig dpc;
  dpc.node = c.name;
  dpc.idle_skip = idle_skip;
  dpc.seed = seed;
  if (c.test_datapath_corrupt) {
    const auto& k = *c.test_datapath_corrupt;
    dpc.corrupt.push_back({k.stream, k.frame, k.offset, uint8_t(k.xor_mask)});
  }
  datapath = make_datapath(sc.datapath_name(), "datapath", core, cmac_clk, ctx, scope + ".datapath", dpc);
  if (!datapath)  // ernic-sim checks first; a program building System directly gets the same error
    throw ScenarioError(sc.datapath_loc.file, sc.datapath_loc.line, sc.datapath_loc.column, "datapath",
                        unknown_datapath_message(sc.datapath_name()));
  datapath->attach(*cmac);
  ernic->datapath = datapath.get();
  const uint32_t xrnicconf_addr = ec.layout.global(regs::g::XRNICCONF);
  const regs::Field sport = ec.layout.udp_sport;
  datapath->udp_sport = [e, xrnicconf_addr, sport]() { return uint16_t(sport.get(e->peek(xrnicconf_addr))); };
  datapath->rx_sink = [e](const seam::RxDesc& d, roce::Bytes payload) { e->rx_push(d, std::move(payload)); };
  datapath->bypass_sink = [this](FrameBytes f) {
    bypass_rx.push_back(std::move(f));
    bypass_ev.notify(SC_ZERO_TIME);
  };
}

// The driver, its doorbell and ieth sinks, the sideband port it drives.
void Node::build_driver(const NodeConfig& c, const Scenario& sc, const ClockDomain& core, SimContext& ctx,
                        const LinkParams& lp, const ErnicConfig& ec, uint64_t seed) {
  const std::string scope = std::string(this->name());
  host::DriverConfig& dc = driver_cfg;  // a program host gets it too (model/host/driver_env.h)
  dc.node = c.name;
  dc.mac = c.mac;
  dc.ip = c.ip;
  dc.ip6 = c.ip6;
  dc.num_qp = c.num_qp;
  dc.ack_mode = c.ack_mode;
  dc.core_mhz = sc.clocks.core_mhz;
  dc.seed = seed;
  // A CM try waits for a round trip: the wire both ways plus the peer's
  // interrupt handling and QP programming (about 4000 core cycles).
  dc.cm_timeout_us = uint32_t(std::min<uint64_t>(
      100 + 2 * (lp.delay_ps / 1000000) + uint64_t(std::ceil(4000.0 / sc.clocks.core_mhz)), 1000000000ull));
  dc.layout = ec.layout;
  if (c.mr_cache_cam) dc.mr_ctx_table = ec.mr.table_base;
  if (ec.shadow_db.enabled) dc.shadow_sq_db = ec.shadow_db.table_base;
  dc.doorbell_layout = host::DriverConfig::DoorbellLayout(c.doorbell_layout);
  if (c.host_program) {  // the host is a program: the NIC is its PCIe device, no built-in driver
    bridge::DeviceConfig bc;
    bc.node = c.name;
    uint64_t bar = 4096;
    while (bar < ec.layout.window_bytes) bar <<= 1;  // a BAR is a power of two
    bc.bar0_bytes = bar;
    pcie_dev = std::make_unique<bridge::PcieDevice>("bridge", core, *axil, *mem, ernic->intr, ctx, bc);
    sideband = std::make_unique<SidebandPort>(core, *ernic, ctx, scope + ".ernic.sideband");
    return;
  }
  sc_host = std::make_unique<host::ScHost>("driver", core, *axil, *mem, ernic->intr, ctx, dc);
  driver = &sc_host->driver();
  host::Driver* d = driver;
  ernic->rq_db_sink = [d](uint32_t qpn, uint32_t pi) { d->on_rq_doorbell(qpn, pi); };
  ernic->cq_db_sink = [d](uint32_t qpn, uint32_t head) { d->on_cq_doorbell(qpn, head); };
  sideband = std::make_unique<SidebandPort>(core, *ernic, ctx, scope + ".ernic.sideband");
  sc_host->attach_sideband(sideband.get());
  ernic->ieth_sink = [d](uint64_t entry) { d->on_ieth(entry); };
}

System::System(sc_module_name name, const Scenario& sc, const RunOptions& opt, SimContext& c)
    : sc_module(name), scenario(sc), core("core", sc.clocks.core_mhz), cmac_clk("cmac", sc.clocks.cmac_mhz),
      ctx(c) {
  ctx.livelock_retries = sc.limits.livelock_retries;
  LinkParams lp;
  lp.rate_gbps = sc.link.rate_gbps;
  lp.delay_ps = sc.link.delay_ns * 1000;
  // Each node's link: the one link, or its own to the switch. (A node's
  // delay_ps sizes its driver's CM timeout: with a switch, the longest
  // one-way path from it, the forwarding latency included.)
  std::vector<LinkParams> lps(sc.nodes.size(), lp);
  if (const auto& t = sc.topology_switch) {
    uint64_t longest = 0;
    for (const auto& p : t->ports) longest = std::max(longest, p.delay_ns);
    for (size_t i = 0; i < lps.size(); ++i) {
      lps[i].rate_gbps = t->ports[i].rate_gbps;
      lps[i].delay_ps = (t->ports[i].delay_ns + t->latency_ns + longest) * 1000;
    }
  }
  if (!opt.split.node.empty()) {
    if (std::string why = split_refusal(sc); !why.empty()) throw std::runtime_error("split run: " + why);
    while (split_local_ < sc.nodes.size() && sc.nodes[split_local_].name != opt.split.node) ++split_local_;
    split_hub_ = sc.topology_switch && opt.split.node == kSplitSwitch;  // the switch's process (split_star.cpp)
    if (split_local_ == sc.nodes.size() && !split_hub_)
      throw std::runtime_error("split run: no node '" + opt.split.node + "'" +
                               (sc.topology_switch ? " (the switch's process is --node switch)" : ""));
  }
  randomise_handshakes(opt);
  build_nodes(lps, opt);
  idle_skip = opt.idle_skip;
  serve_overrides = opt.serve;
  if (!idle_skip) start_tickers();
  introduce_nodes();
  if (!opt.split.node.empty() && sc.topology_switch)
    join_split_star(lps, opt.split);
  else if (!opt.split.node.empty())
    join_split(lp, opt.split);
  else if (sc.topology_switch)
    join_switch(lps);
  else if (nodes.size() == 2)
    join_wires(lp);
  // Frame records of each direction, from the taps (expectations, reports).
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t j = 0; j < nodes.size(); ++j) {
      if (i == j) continue;
      const std::string name = nodes[i]->cfg.name + "->" + nodes[j]->cfg.name;
      dirs[name].name = name;
    }
  if (nodes.size() == 2 || sc.topology_switch) watch_link();
  if (!opt.pcap.empty()) open_taps(opt.pcap);
  ctx.trace_clock("top.clocks", "core_clk", core.period_ps());
  ctx.trace_clock("top.clocks", "cmac_clk", cmac_clk.period_ps());
  SC_THREAD(runner);
  SC_THREAD(watchdog);
  SC_THREAD(stop_after_error);
}

// Randomised handshakes (model/monitor/handshake.h), per node scope, before
// the nodes' blocks ask for their streams.
void System::randomise_handshakes(const RunOptions& opt) {
  for (const NodeConfig& nc : scenario.nodes) {
    if (!opt.split.node.empty() && nc.name != opt.split.node) continue;  // another process's (split.h)
    std::optional<HandshakeRandom> h = nc.handshake_random ? nc.handshake_random : scenario.handshake_random;
    if (opt.handshake_random_seed) {
      if (!h || !h->enabled) h = HandshakeRandom{};
      h->seed = *opt.handshake_random_seed;
    }
    if (h && h->enabled)
      ctx.protocol.set_random(std::string(this->name()) + "." + nc.name, {h->seed, h->ready_pct, h->valid_pct});
  }
}

// Each node's driver draws from its own stream: seed and node index.
void System::build_nodes(const std::vector<LinkParams>& lps, const RunOptions& opt) {
  for (size_t i = 0; i < scenario.nodes.size(); ++i) {
    const NodeConfig& nc = scenario.nodes[i];
    if (!opt.split.node.empty() && nc.name != opt.split.node) {  // another process runs it (split.h)
      nodes.push_back(std::make_unique<Node>(nc.name.c_str(), nc));
      continue;
    }
    nodes.push_back(std::make_unique<Node>(nc.name.c_str(), nc, scenario, core, cmac_clk, ctx, lps[i],
                                           scenario.seed * 0x9E3779B97F4A7C15ull + i + 1, opt.idle_skip));
  }
}

// A conventional clocked simulation: each domain evaluated every cycle.
void System::start_tickers() {
  for (const ClockDomain* d : {&core, &cmac_clk}) {
    uint64_t* n = &ticks[d->name()];
    sc_spawn([d, n] {
      for (;;) {
        sc_core::wait(d->period());
        ++*n;
      }
    }, sc_gen_unique_name("ticker"));
  }
}

// Each node's neighbour table (every other node's addresses); each node's
// host memory to the scoreboard.
void System::introduce_nodes() {
  for (auto& a : nodes)
    for (auto& b : nodes)
      if (a != b) {
        if (!a->driver) continue;  // host: program: the program knows its neighbours
        if (b->cfg.has_ip) a->driver->add_neighbour(b->cfg.ip, b->cfg.mac);
        if (b->cfg.ip6) a->driver->add_neighbour(*b->cfg.ip6, b->cfg.mac);
      }
  const bool split_run = std::any_of(nodes.begin(), nodes.end(), [](const auto& n) { return n->remote; });
  for (auto& n : nodes) {
    if (n->remote) continue;
    const HostMemory* m = n->mem.get();  // reads through the const data(): the range stays unwritten
    scoreboard.add_node(
        n->cfg.name,
        [m](uint64_t pa, uint64_t len) -> const uint8_t* { return m->in_range(pa, len) ? m->data(pa, len) : nullptr; },
        [m](uint64_t pa, uint64_t len) { return !m->in_range(pa, len) || m->written(pa, len); });
    if (split_run)
      scoreboard.stand_aside(n->cfg.name, "split run (issue 16, phase 1): the other node's operations on this "
                                          "memory run in the other process; canaries still checked, contents by "
                                          "the scenario's memory steps",
                            /*cqes_too=*/false);
  }
}

// Two nodes: a wire each way (delay, rate, fault RNG), the QP-setup blocks'
// link status, fault reports to the log.
void System::join_wires(const LinkParams& lp) {
  // Each direction's fault RNG: its own stream from the scenario seed.
  wire_ab = std::make_unique<Wire>("wire_ab", lp.delay_ps, lp.rate_gbps, scenario.seed * 0xD1B54A32D192ED03ull + 1);
  wire_ba = std::make_unique<Wire>("wire_ba", lp.delay_ps, lp.rate_gbps, scenario.seed * 0xD1B54A32D192ED03ull + 2);
  nodes[0]->cmac->wire_out = wire_ab.get();
  wire_ab->set_dst(nodes[1]->cmac.get());
  nodes[1]->cmac->wire_out = wire_ba.get();
  wire_ba->set_dst(nodes[0]->cmac.get());
  wire_ab->label = nodes[0]->cfg.name + "->" + nodes[1]->cfg.name;
  wire_ba->label = nodes[1]->cfg.name + "->" + nodes[0]->cfg.name;
  // A node's cmac_link_up (stat_rx_status): the direction into it is up.
  for (size_t i = 0; i < 2; ++i)
    if (QpSetupFsm* f = nodes[i]->qp_setup.get()) {
      Wire* in = i == 0 ? wire_ba.get() : wire_ab.get();
      f->link_up = [in] { return in->faults().link_up(); };
    }
  for (Wire* w : {wire_ab.get(), wire_ba.get()})
    w->on_fault = [this](const std::string& label, const FaultApplied& a) { report_fault(label, a); };
}

// A fault applied on a line (or a flow of it): counted, an event, the log.
void System::report_fault(const std::string& label, const FaultApplied& a) {
  ++faults_applied;
  ctx.event("wire " + label,
            fmt::format("fault '{}' {} frame #{}{}{}", a.rule, FaultInjector::kind_name(a.kind), a.frame_index,
                        a.opcode >= 0 ? fmt::format(" {} psn=0x{:06x}", roce::opcode_name(uint8_t(a.opcode)), a.psn)
                                      : std::string(),
                        a.detail.empty() ? "" : " (" + a.detail + ")"));
  if (ctx.log) ctx.log->fault(sc_time_stamp().value(), label, a.frame_index, a.rule, FaultInjector::kind_name(a.kind),
                              a.opcode, a.psn, a.detail);
}

// Two nodes or a switch: a wire monitor per node pair, the link traces,
// and each CMAC's frames into the records of their direction (on_tx_frame;
// with a switch the direction is the frame's other node by MAC, and frames
// between a node and the switch itself are recorded under "X->switch" /
// "switch->X" only); the requester's view for the monitors.
void System::watch_link() {
  const size_t n = nodes.size();
  // Frames of each direction as waveform signals (top.link.X_to_Y).
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j)
        link_traces[nodes[i]->cfg.name + "->" + nodes[j]->cfg.name] =
            std::make_unique<LinkTrace>(ctx, nodes[i]->cfg.name, nodes[j]->cfg.name);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j)
        link_traces.at(nodes[i]->cfg.name + "->" + nodes[j]->cfg.name)->peer =
            link_traces.at(nodes[j]->cfg.name + "->" + nodes[i]->cfg.name).get();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if (!split() || (!split_hub_ && i == split_local_))  // split: in the pair's first node's process
        wire_monitors[{i, j}] = std::make_unique<monitor::WireMonitor>(/*acks_from_delivery=*/true);
  if (net_switch)  // the switch's own frames to a node (pause frames): "switch->X", tx
    net_switch->on_tx = [this](size_t port, const FrameBytes& f, uint64_t t) {
      DirFrames& d = dirs["switch->" + nodes[port]->cfg.name];
      d.name = "switch->" + nodes[port]->cfg.name;
      d.tx.push_back(summarize(f, t, d.tx.size()));
      frame_ev_.notify(SC_ZERO_TIME);
    };
  for (size_t i = 0; i < n; ++i) {
    Node* me = nodes[i].get();
    if (me->remote) continue;  // its frames are watched in its process
    const std::string& x = me->cfg.name;
    me->cmac->on_tx = [this, i, me, x](const FrameBytes& f, uint64_t t) {
      const int j = peer_of(i, f.data(), f.size(), /*tx=*/true);
      if (j < 0) {  // to the switch itself
        DirFrames& d = dirs[x + "->switch"];
        d.name = x + "->switch";
        d.tx.push_back(summarize(f, t, d.tx.size()));
        if (ctx.log) log_frame(*me, "tx", d.name, d.tx.back());
        frame_ev_.notify(SC_ZERO_TIME);
        return;
      }
      const std::string name = x + "->" + nodes[size_t(j)]->cfg.name;
      on_tx_frame(me, i, size_t(j), &dirs[name], link_traces.at(name).get(), f, t);
    };
    // The requester's view for the monitor: answers as its RX packet
    // handler takes them, requests as its TX commits them (WireMonitor).
    auto taken = [this, i](const roce::Frame& f) {
      uint8_t macs[12];  // the frame's destination and source MACs, as peer_of reads a frame
      std::copy(f.eth.dst.b.begin(), f.eth.dst.b.end(), macs);
      std::copy(f.eth.src.b.begin(), f.eth.src.b.end(), macs + 6);
      const int j = peer_of(i, macs, sizeof macs, /*tx=*/false);
      if (j >= 0) monitor_delivered(size_t(j), i, f);
    };
    if (me->peer) {  // kind: peer: no ERNIC; its requests as it commits them to its MAC
      me->peer->on_rx_taken = taken;
      me->peer->on_tx_committed = [me](const roce::Frame& f) {
        me->tx_commits.push_back({f.bth.opcode, f.bth.psn, f.bth.dest_qp, sc_time_stamp().value()});
      };
    } else {
      me->ernic->on_rx_taken = taken;
    }
    if (me->ernic) me->ernic->on_tx_committed = [this, me](const seam::TxDesc& d) {
      me->tx_commits.push_back({d.opcode, d.psn, d.dest_qp, sc_time_stamp().value()});
    };
    me->cmac->on_rx = [this, i, me, x](const FrameBytes& f, uint64_t t) {
      const int j = peer_of(i, f.data(), f.size(), /*tx=*/false);
      const std::string name = j < 0 ? "switch->" + x : nodes[size_t(j)]->cfg.name + "->" + x;
      DirFrames* in = &dirs[name];
      in->name = name;
      if (j >= 0) link_traces.at(name)->on_rx(f);
      in->rx.push_back(summarize(f, t, in->rx.size()));
      if (ctx.log) log_frame(*me, "rx", in->name, in->rx.back());
      frame_ev_.notify(SC_ZERO_TIME);
    };
  }
}

// The wire pcap and each node's tx and rx taps beside it.
void System::open_taps(const std::string& pcap) {
  tap_wire = std::make_unique<PcapWriter>(pcap);
  // A frame's first byte is stamped one preamble (its line's rate) after
  // the frame is written: with lines of several rates a later write may
  // carry an earlier stamp, by at most the longest preamble less the shortest.
  uint64_t pre_min = UINT64_MAX, pre_max = 0;
  auto line = [&](double gbps) {
    const uint64_t p = LineRate(gbps).preamble_ps();
    pre_min = std::min(pre_min, p);
    pre_max = std::max(pre_max, p);
  };
  line(scenario.link.rate_gbps);
  if (const auto& t = scenario.topology_switch)
    for (const auto& p : t->ports) line(p.rate_gbps);
  tap_wire->set_order_lag(pre_max - pre_min);
  uint32_t rank = 0;  // the scenario's node order ranks a same-instant's frames in the merged capture
  const bool taps = output_has_side_files(pcap);
  for (auto& n : nodes) {
    if (n->remote) {  // its own process writes its frames (split.h)
      ++rank;
      continue;
    }
    n->cmac->tap_wire_source = rank++;
    if (taps) {
      n->tap_tx = std::make_unique<PcapWriter>(pcap_tap_path(pcap, n->cfg.name, "tx"));
      n->tap_rx = std::make_unique<PcapWriter>(pcap_tap_path(pcap, n->cfg.name, "rx"));
      n->cmac->tap_tx = n->tap_tx.get();
      n->cmac->tap_rx = n->tap_rx.get();
    }
    n->cmac->tap_wire = tap_wire.get();
  }
  if (net_switch) {  // the switch's own frames (pause frames) after the nodes'
    net_switch->tap_wire = tap_wire.get();
    net_switch->tap_wire_source = rank;
  }
}

System::~System() = default;

void System::open_rtl_trace(const std::string& path) {
  rtl_vcd_ = std::make_unique<VerilatedVcdSc>();
  for (auto& n : nodes)
    if (n->datapath) n->datapath->trace(rtl_vcd_.get(), 99);
  for (auto& n : nodes)
    if (n->qp_setup && n->qp_setup->rtl()) n->qp_setup->rtl()->trace(rtl_vcd_.get(), 99);
  rtl_vcd_->open(path.c_str());
}

void System::flush_rtl_trace() {
  if (rtl_vcd_) rtl_vcd_->flush();
}

void System::close_rtl_trace() {
  if (!rtl_vcd_) return;
  rtl_vcd_->flush();
  rtl_vcd_->close();
  const std::string err = rtl::trace_write_error();
  if (!err.empty()) throw std::runtime_error("vcd: writing the RTL waveform failed: " + err);
}

Node* System::node(const std::string& name) {
  for (auto& n : nodes)
    if (n->cfg.name == name) return n.get();
  return nullptr;
}

void System::close_taps() {
  if (tap_wire) tap_wire->close();
  for (auto& n : nodes) {
    if (n->tap_tx) n->tap_tx->close();
    if (n->tap_rx) n->tap_rx->close();
  }
}

}  // namespace ernic
