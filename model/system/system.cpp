#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "model/system/system.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "Vqp_setup_fsm.h"
#include "model/datapath/sc/datapath.h"
#include "model/link/classify.h"
#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"
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

namespace {
uint8_t wqe_code(WqeOpcode o) {
  switch (o) {
    case WqeOpcode::write: return 0x00;
    case WqeOpcode::write_imm: return 0x01;
    case WqeOpcode::send: return 0x02;
    case WqeOpcode::send_imm: return 0x03;
    case WqeOpcode::read: return 0x04;
    case WqeOpcode::send_inv: return 0x0C;
  }
  return 0xFF;
}
monitor::SbOpcode sb_opcode(WqeOpcode o) {
  switch (o) {
    case WqeOpcode::write: return monitor::SbOpcode::write;
    case WqeOpcode::write_imm: return monitor::SbOpcode::write_imm;
    case WqeOpcode::send: return monitor::SbOpcode::send;
    case WqeOpcode::send_imm: return monitor::SbOpcode::send_imm;
    case WqeOpcode::send_inv: return monitor::SbOpcode::send_inv;
    case WqeOpcode::read: return monitor::SbOpcode::read;
  }
  return monitor::SbOpcode::write;
}
std::optional<monitor::SbOpcode> sb_opcode_of_code(uint8_t c) {
  for (WqeOpcode o : {WqeOpcode::write, WqeOpcode::write_imm, WqeOpcode::send, WqeOpcode::send_imm,
                      WqeOpcode::send_inv, WqeOpcode::read})
    if (wqe_code(o) == c) return sb_opcode(o);
  return std::nullopt;
}
std::string at_now() { return fmt::format("at {:.3f} us", double(sc_time_stamp().value()) / 1e6); }
// Register writes after which the scoreboard cannot know where data lands:
// the SQ doorbell (WQEs posted by hand), where the NIC's queues and buffers
// are and where a QP sends to. The MR table is checked by block.
bool places_memory(const std::string& reg, bool* qp_level) {
  static const char* const kQp[] = {"SQPIi", "SQBAi", "SQBAMSBi", "RQBAi", "RQBAMSBi", "QDEPTHi", "QPCONFi",
                                    "DESTQPCONFi", "IPDESADDR1i", "CQBAi", "CQBAMSBi", "CQDBADDi", "CQDBADDMSBi",
                                    "RQWPTRDBADDi", "RQWPTRDBADDMSBi"};
  static const char* const kGlobal[] = {"ERRBUFBA", "ERRBUFBAMSB", "ERRBUFSZ", "IPKTERRQBA", "IPKTERRQBAMSB",
                                        "IPKTERRQSZ", "DATBUFBA", "DATBUFBAMSB", "DATBUFSZ", "RESPERRPKTBA",
                                        "RESPERRPKTBAMSB", "RESPERRSZ"};
  for (const char* r : kQp)
    if (reg == r) return *qp_level = true;
  *qp_level = false;
  for (const char* r : kGlobal)
    if (reg == r) return true;
  return regs::find_register(reg)->block == regs::Block::Mr;
}
uint32_t access_code(Access a) {
  switch (a) {
    case Access::r: return regs::f::ACCESS_READ;
    case Access::w: return regs::f::ACCESS_WRITE;
    case Access::rw: return regs::f::ACCESS_RW;
  }
  return regs::f::ACCESS_RW;
}
// A node's address of the connection's IP version (the parser checked it exists).
roce::IpAddr node_addr(const NodeConfig& n, uint32_t ip_version) {
  if (ip_version == 6 && n.ip6) return *n.ip6;
  return n.ip;
}
}  // namespace

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
  ErnicConfig ec;
  ec.node = c.name;
  ec.num_qp = c.num_qp;
  ec.layout = sc.layout == RegLayout::v4x ? regs::kLayout4x : regs::kLayout31;
  ec.timing.ack_coalesce_packets = c.ack_coalesce_packets;
  ec.timing.ack_timeout_ns = c.ack_timeout_ns;
  ec.timing.rx_buffer_bytes = c.rx_buffer_bytes;
  ec.timing.rx_handler_gbps = c.rx_handler_gbps;
  ec.test_bug_ack_coalescing = c.test_bug_ack_coalescing;  // test only (run --plant-bug)
  if (c.mr_cache_cam) {  // `mr_cache: cam` (model/mr, A-MRC-1..3)
    ec.mr.mode = MrLookupMode::cam;
    ec.mr.entries = c.mr_cache_entries;
  }
  // One PCIe link a node: its six DMA masters and the host's MMIO share it.
  pcie = std::make_unique<PcieLink>(pcie_params(sc.pcie));
  ec.dma.pcie = pcie->params();
  ec.dma.link = pcie.get();
  ec.dma.outstanding = sc.pcie.outstanding;
  ernic = std::make_unique<Ernic>("ernic", core, *mem, ctx, scope + ".ernic", ec);
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
  axil = std::make_unique<AxiLitePort>("s_axi_lite", core, *mmio_target, ctx, scope + ".s_axi_lite", at,
                                       [pl](bool to_nic, uint64_t ready, uint32_t payload) {
                                         return pl->send(to_nic ? PcieLink::kDown : PcieLink::kUp, ready, payload,
                                                         ClockDomain::now_ps());
                                       });
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
  const unsigned sport_shift = ec.layout.udp_sport_shift;
  datapath->udp_sport = [e, xrnicconf_addr, sport_shift]() {
    return uint16_t(e->peek(xrnicconf_addr) >> sport_shift);
  };
  datapath->rx_sink = [e](const seam::RxDesc& d, roce::Bytes payload) { e->rx_push(d, std::move(payload)); };
  datapath->bypass_sink = [this](FrameBytes f) {
    bypass_rx.push_back(std::move(f));
    bypass_ev.notify(SC_ZERO_TIME);
  };
  host::DriverConfig dc;
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
  driver = std::make_unique<host::Driver>("driver", core, *axil, *mem, ernic->intr, ctx, dc);
  host::Driver* d = driver.get();
  ernic->rq_db_sink = [d](uint32_t qpn, uint32_t pi) { d->on_rq_doorbell(qpn, pi); };
  ernic->cq_db_sink = [d](uint32_t qpn, uint32_t head) { d->on_cq_doorbell(qpn, head); };
  sideband = std::make_unique<SidebandPort>(core, *ernic, ctx, scope + ".ernic.sideband");
  d->attach_sideband(sideband.get());
  ernic->ieth_sink = [d](uint64_t entry) { d->on_ieth(entry); };
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

System::System(sc_module_name name, const Scenario& sc, const RunOptions& opt, SimContext& c)
    : sc_module(name), scenario(sc), core("core", sc.clocks.core_mhz), cmac_clk("cmac", sc.clocks.cmac_mhz),
      ctx(c) {
  LinkParams lp;
  lp.rate_gbps = sc.link.rate_gbps;
  lp.delay_ps = sc.link.delay_ns * 1000;
  // Randomised handshakes (model/monitor/handshake.h), per node scope, before
  // the nodes' blocks ask for their streams.
  for (const NodeConfig& nc : sc.nodes) {
    std::optional<HandshakeRandom> h = nc.handshake_random ? nc.handshake_random : sc.handshake_random;
    if (opt.handshake_random_seed) {
      if (!h || !h->enabled) h = HandshakeRandom{};
      h->seed = *opt.handshake_random_seed;
    }
    if (h && h->enabled)
      ctx.protocol.set_random(std::string(this->name()) + "." + nc.name, {h->seed, h->ready_pct, h->valid_pct});
  }
  // Each node's driver draws from its own stream: seed and node index.
  for (size_t i = 0; i < sc.nodes.size(); ++i) {
    const NodeConfig& nc = sc.nodes[i];
    nodes.push_back(std::make_unique<Node>(nc.name.c_str(), nc, sc, core, cmac_clk, ctx, lp,
                                           sc.seed * 0x9E3779B97F4A7C15ull + i + 1, opt.idle_skip));
  }
  idle_skip = opt.idle_skip;
  if (!idle_skip) {
    // A conventional clocked simulation: each domain evaluated every cycle.
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
  for (auto& a : nodes)
    for (auto& b : nodes)
      if (a != b) {
        if (b->cfg.has_ip) a->driver->add_neighbour(b->cfg.ip, b->cfg.mac);
        if (b->cfg.ip6) a->driver->add_neighbour(*b->cfg.ip6, b->cfg.mac);
      }
  for (auto& n : nodes) {
    HostMemory* m = n->mem.get();
    scoreboard.add_node(n->cfg.name, [m](uint64_t pa, uint64_t len) -> const uint8_t* {
      return m->in_range(pa, len) ? m->data(pa, len) : nullptr;
    });
  }
  if (nodes.size() == 2) {
    // Each direction's fault RNG: its own stream from the scenario seed.
    wire_ab = std::make_unique<Wire>("wire_ab", lp.delay_ps, lp.rate_gbps, sc.seed * 0xD1B54A32D192ED03ull + 1);
    wire_ba = std::make_unique<Wire>("wire_ba", lp.delay_ps, lp.rate_gbps, sc.seed * 0xD1B54A32D192ED03ull + 2);
    nodes[0]->cmac->wire_out = wire_ab.get();
    wire_ab->dst = nodes[1]->cmac.get();
    nodes[1]->cmac->wire_out = wire_ba.get();
    wire_ba->dst = nodes[0]->cmac.get();
    wire_ab->label = nodes[0]->cfg.name + "->" + nodes[1]->cfg.name;
    wire_ba->label = nodes[1]->cfg.name + "->" + nodes[0]->cfg.name;
    // A node's cmac_link_up (stat_rx_status): the direction into it is up.
    for (size_t i = 0; i < 2; ++i)
      if (QpSetupFsm* f = nodes[i]->qp_setup.get()) {
        Wire* in = i == 0 ? wire_ba.get() : wire_ab.get();
        f->link_up = [in] { return in->faults().link_up(); };
      }
    for (Wire* w : {wire_ab.get(), wire_ba.get()}) {
      w->on_fault = [this, w](const FaultApplied& a) {
        ++faults_applied;
        ctx.event("wire " + w->label,
                  fmt::format("fault '{}' {} frame #{}{}{}", a.rule, FaultInjector::kind_name(a.kind), a.frame_index,
                              a.opcode >= 0 ? fmt::format(" {} psn=0x{:06x}", roce::opcode_name(uint8_t(a.opcode)), a.psn)
                                            : std::string(),
                              a.detail.empty() ? "" : " (" + a.detail + ")"));
        if (ctx.log) ctx.log->fault(sc_time_stamp().value(), w->label, a.frame_index, a.rule,
                                    FaultInjector::kind_name(a.kind), a.opcode, a.psn, a.detail);
      };
    }
  }
  // Frame records of each direction, from the taps (expectations, reports).
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t j = 0; j < nodes.size(); ++j) {
      if (i == j) continue;
      const std::string name = nodes[i]->cfg.name + "->" + nodes[j]->cfg.name;
      dirs[name].name = name;
    }
  if (nodes.size() == 2) {
    wire_monitor = std::make_unique<monitor::WireMonitor>(/*acks_from_delivery=*/true);
    // Frames of each direction as waveform signals (top.link.X_to_Y).
    for (size_t i = 0; i < 2; ++i)
      link_traces[nodes[i]->cfg.name + "->" + nodes[1 - i]->cfg.name] =
          std::make_unique<LinkTrace>(ctx, nodes[i]->cfg.name, nodes[1 - i]->cfg.name);
    link_traces.begin()->second->peer = std::next(link_traces.begin())->second.get();
    std::next(link_traces.begin())->second->peer = link_traces.begin()->second.get();
    for (size_t i = 0; i < 2; ++i) {
      Node* me = nodes[i].get();
      Node* peer = nodes[1 - i].get();
      DirFrames* out = &dirs[me->cfg.name + "->" + peer->cfg.name];
      DirFrames* in = &dirs[peer->cfg.name + "->" + me->cfg.name];
      me->cmac->on_tx = [this, me, out, lt = link_traces.at(out->name).get()](const FrameBytes& f, uint64_t t) {
        lt->on_tx(f, t);
        out->tx.push_back(summarize(f, t, out->tx.size()));
        const size_t seen = wire_monitor->violations().size();
        wire_monitor->on_frame(f, t, out->name, commit_time(*me, out->tx.back()));
        for (size_t k = seen; k < wire_monitor->violations().size(); ++k) {
          const monitor::Violation& v = wire_monitor->violations()[k];
          ctx.error("monitor " + v.dir, fmt::format("{}: {} (frame #{})", v.rule, v.what, v.frame_index));
        }
        const size_t reported = compliance.reports().size();
        compliance.on_frame(f, t, out->name);
        for (size_t k = reported; k < compliance.reports().size(); ++k) {
          const ComplianceReport& c = compliance.reports()[k];
          ctx.event("compliance " + c.dir, fmt::format("{}: {} (QP{} PSN 0x{:06x}; {})", c.rule, c.detail, c.dest_qp,
                                                       c.psn, ComplianceChecker::rule_text(c.rule)));
          if (scenario.compliance == ComplianceMode::fail)
            fail(SourceLoc{}, fmt::format("PG332 compliance ({}): {} on {} QP{} PSN 0x{:06x}", c.rule, c.detail,
                                          c.dir, c.dest_qp, c.psn));
        }
        if (ctx.log) log_frame(*me, "tx", out->name, out->tx.back());
        frame_ev_.notify(SC_ZERO_TIME);
      };
      // The requester's view for the monitor: answers as its RX packet
      // handler takes them, requests as its TX commits them (WireMonitor).
      me->ernic->on_rx_taken = [this, name = in->name](const roce::Frame& f) {
        wire_monitor->on_delivered(f, sc_time_stamp().value(), name);
      };
      me->ernic->on_tx_committed = [this, me](const seam::TxDesc& d) {
        me->tx_commits.push_back({d.opcode, d.psn, d.dest_qp, sc_time_stamp().value()});
      };
      me->cmac->on_rx = [this, me, in, lt = link_traces.at(in->name).get()](const FrameBytes& f, uint64_t t) {
        lt->on_rx(f);
        in->rx.push_back(summarize(f, t, in->rx.size()));
        if (ctx.log) log_frame(*me, "rx", in->name, in->rx.back());
        frame_ev_.notify(SC_ZERO_TIME);
      };
    }
  }
  if (!opt.pcap.empty()) {
    tap_wire = std::make_unique<PcapWriter>(opt.pcap);
    uint32_t rank = 0;  // the scenario's node order ranks a same-instant's frames in the merged capture
    for (auto& n : nodes) {
      n->cmac->tap_wire_source = rank++;
      n->tap_tx = std::make_unique<PcapWriter>(pcap_tap_path(opt.pcap, n->cfg.name, "tx"));
      n->tap_rx = std::make_unique<PcapWriter>(pcap_tap_path(opt.pcap, n->cfg.name, "rx"));
      n->cmac->tap_tx = n->tap_tx.get();
      n->cmac->tap_rx = n->tap_rx.get();
      n->cmac->tap_wire = tap_wire.get();
    }
  }
  ctx.trace_clock("top.clocks", "core_clk", core.period_ps());
  ctx.trace_clock("top.clocks", "cmac_clk", cmac_clk.period_ps());
  SC_THREAD(runner);
  SC_THREAD(watchdog);
}

System::~System() = default;

void System::open_rtl_trace(const std::string& path) {
  rtl_vcd_ = std::make_unique<VerilatedVcdSc>();
  for (auto& n : nodes) n->datapath->trace(rtl_vcd_.get(), 99);
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

void System::fail(const SourceLoc& loc, const std::string& what, int code) {
  failures.push_back({what, loc, sc_time_stamp().value()});
  if (exit_code == 0) exit_code = code;
  fail_ev_.notify(SC_ZERO_TIME);
}

void System::log_frame(const Node& n, const char* dir, const std::string& link, const FrameRec& r) {
  FrameFields ff;
  ff.len = r.len;
  ff.roce = r.roce;
  std::optional<uint32_t> qp;
  if (r.roce) {
    ff.opcode = r.opcode;
    ff.opname = roce::opcode_name(uint8_t(r.opcode));
    ff.psn = r.psn;
    ff.dest_qp = r.dest_qp;
    ff.ack_req = r.ack_req;
    if (r.syndrome >= 0) {
      ff.syndrome = uint8_t(r.syndrome);
      ff.msn = r.msn;
    }
    ff.mad = r.mad;
    ff.src = r.src;
    ff.dst = r.dst;
    // The local QP: the destination QP for a received frame; for a sent one
    // the QP whose remote is the frame's destination QP (QP1 for CM).
    if (std::string(dir) == "rx" || r.dest_qp == 1) {
      qp = r.dest_qp;
    } else {
      for (const auto& c : n.driver->connections())
        if (c->qpn && c->remote_qpn == r.dest_qp && c->state != host::VerbsState::Reset) qp = c->qpn;
    }
  }
  ctx.log->frame(r.t_ps, n.cfg.name, "cmac", cmac_clk.cycle_at(r.t_ps), qp, dir, link, r.index, ff);
}

Wire* System::wire_for(const Direction& d) {
  if (!wire_ab) return nullptr;
  const std::string name = d.from + "->" + d.to;
  if (wire_ab->label == name) return wire_ab.get();
  if (wire_ba->label == name) return wire_ba.get();
  return nullptr;
}

host::Connection& System::side(const Conn& k, const std::string& node_name) {
  return node_name == k.client ? *k.c : *k.s;
}

void System::watchdog() {
  // Fires watchdog_us after the latest progress (frame, register access,
  // DMA, completion), outside steps that time out by themselves.
  const uint64_t period_ps = scenario.limits.watchdog_us * 1000000ull;
  for (;;) {
    const uint64_t now = sc_time_stamp().value();
    const uint64_t deadline = ctx.last_progress_ps + period_ps;
    if (deadline > now) {
      wait(sc_time(double(deadline - now), SC_PS));
      continue;
    }
    if (finished) return;
    if (bounded_ != 0) {  // a self-timed step is running: the watchdog counts from now
      ctx.last_progress_ps = now;
      continue;
    }
    {
      fail(SourceLoc{}, fmt::format("no progress for {} us of simulated time (watchdog)",
                                    scenario.limits.watchdog_us),
           3);
      for (auto& n : nodes) {
        for (auto& s : n->ernic->qp_status()) stall_report.push_back(n->cfg.name + " " + s);
        if (std::string d = n->datapath->status(); !d.empty()) stall_report.push_back(n->cfg.name + " " + d);
      }
      end_checks();
      sc_stop();
      return;
    }
  }
}

void System::runner() {
  run_steps(scenario.steps, nullptr);
  finished = true;
  end_checks();
  sc_stop();
}

// Canaries: the guard bytes the driver placed around every MR are intact
// (nothing wrote past an MR, whatever the scenario expected).
void System::end_checks() {
  for (auto& n : nodes)
    for (const std::string& e : n->driver->check_mr_guards()) ctx.error(n->cfg.name + " host memory", e);
  for (const std::string& e : scoreboard.check_all()) fail(SourceLoc{}, e + " (end of run)");
}

void System::run_steps(const std::vector<Step>& steps, Group* g) {
  for (const Step& s : steps) {
    if (exit_code) return;
    StepRecord rec{step_kind(s), step_loc(s), sc_time_stamp().value(), 0, ""};
    if (ctx.log) ctx.log->step(sc_time_stamp().value(), step_loc(s).str(), step_kind(s), "start", "");
    try {
      run_step(s, g);
    } catch (const host::DriverError& e) {
      fail(step_loc(s), e.what());
    } catch (const std::exception& e) {
      fail(step_loc(s), std::string("internal error: ") + e.what());
    }
    rec.end_ps = sc_time_stamp().value();
    steps_done.push_back(rec);
    if (ctx.log) ctx.log->step(sc_time_stamp().value(), step_loc(s).str(), step_kind(s), "end", exit_code ? "failed" : "");
  }
}

void System::run_branch(const std::vector<Step>* steps, Group* g) {
  run_steps(*steps, g);
  --g->running;
  g->changed.notify(SC_ZERO_TIME);
}

void System::snapshot_qps() {
  stall_report.clear();
  for (auto& n : nodes)
    for (auto& st : n->ernic->qp_status()) stall_report.push_back(n->cfg.name + " " + st);
}

std::string FrameRec::str() const {
  std::string o = fmt::format("{:12.6f} us #{:<4} ", double(t_ps) / 1e6, index);
  if (!roce) return o + fmt::format("non-RoCE len={}", len);
  o += fmt::format("{:<18} psn=0x{:06x} qp={} len={}", roce::opcode_name(uint8_t(opcode)), psn, dest_qp, len);
  if (syndrome >= 0) o += fmt::format(" syn=0x{:02x} msn={}", syndrome, msn);
  if (!mad.empty()) o += " " + mad;
  return o;
}

// When node n committed the RoCE frame r to its TX datapath: the oldest
// commit with r's opcode, PSN and QP among the first few still unmatched
// (frames leave in the order they were committed; a frame lost inside the
// datapath leaves its commit behind). nullopt: not a frame of the NIC.
std::optional<uint64_t> System::commit_time(Node& n, const FrameRec& r) {
  if (!r.roce) return std::nullopt;
  auto& q = n.tx_commits;
  for (size_t k = 0; k < q.size() && k < 8; ++k)
    if (q[k].opcode == r.opcode && q[k].psn == r.psn && q[k].dest_qp == r.dest_qp) {
      const uint64_t t = q[k].t_ps;
      q.erase(q.begin(), q.begin() + long(k) + 1);
      return t;
    }
  return std::nullopt;
}

FrameRec System::summarize(const FrameBytes& f, uint64_t t_ps, uint64_t index) {
  FrameRec r;
  r.t_ps = t_ps;
  r.index = index;
  r.len = uint32_t(f.size());
  if (auto d = roce::decode(f)) {
    r.roce = true;
    r.opcode = d->bth.opcode;
    r.psn = d->bth.psn;
    r.dest_qp = d->bth.dest_qp;
    r.ack_req = d->bth.ack_req;
    r.src = d->ipv6 ? d->ip6.src.str() : d->ip4.src.str();
    r.dst = d->ipv6 ? d->ip6.dst.str() : d->ip4.dst.str();
    if (d->aeth) {
      r.syndrome = d->aeth->syndrome;
      r.msn = d->aeth->msn;
    }
    if (d->bth.opcode == roce::op::UD_SEND_ONLY && d->payload.size() >= roce::cm::kMadLen)
      if (auto m = roce::cm::decode_mad(d->payload.data(), d->payload.size()))
        r.mad = roce::cm::attr_name(m->hdr.attr_id);
  }
  return r;
}

uint32_t System::reg_addr(const RegRef& r) const {
  const regs::RegInfo* ri = regs::find_register(r.reg);
  const Node* n = nullptr;
  for (auto& x : nodes)
    if (x->cfg.name == r.node) n = x.get();
  const regs::Layout& L = n->ernic->config().layout;
  switch (ri->block) {
    case regs::Block::Global: return L.global(ri->offset);
    case regs::Block::Qp: return L.qp(*r.qp, ri->offset);
    case regs::Block::Mr: return L.mr(*r.mr, ri->offset);
  }
  return 0;
}

std::string System::reg_name(const RegRef& r) const {
  std::string o = r.node + " " + r.reg;
  if (r.qp) o += fmt::format("[{}]", *r.qp);
  if (r.mr) o += fmt::format("[{}]", *r.mr);
  if (!r.field.empty()) o += "." + r.field;
  return o;
}

// Timed AXI4-Lite read of the register (through the node's host port);
// returns the field's value when a field is named.
uint32_t System::reg_read_value(const RegRef& r, uint32_t* raw) {
  const uint32_t v = node(r.node)->axil->read(reg_addr(r));
  if (raw) *raw = v;
  if (r.field.empty()) return v;
  return regs::find_field(r.reg, r.field)->get(v);
}

size_t System::frames_seen(const Direction& d, const std::vector<uint8_t>& opcodes) const {
  auto it = dirs.find(d.from + "->" + d.to);
  if (it == dirs.end()) return 0;
  size_t n = 0;
  // Counted in the current window: since the previous expect_frames on this direction.
  const auto& tx = it->second.tx;
  for (size_t i = it->second.cursor_tx; i < tx.size(); ++i)
    if (const auto& f = tx[i]; opcodes.empty() || (f.roce && std::find(opcodes.begin(), opcodes.end(), uint8_t(f.opcode)) != opcodes.end()))
      ++n;
  return n;
}

// Does got[from..] match the pattern sequence exactly (every frame used)?
// Backtracking over the repetition counts; the patterns are short.
bool System::frames_match(const std::vector<FrameRec>& got, size_t from, const std::vector<FramePattern>& pat,
                          std::string* why) const {
  size_t best = from;  // furthest frame reached, for the message
  size_t best_pi = 0;  // the pattern that frame was held against
  int64_t best_prev = -1;
  std::function<bool(size_t, size_t, int64_t)> m = [&](size_t fi, size_t pi, int64_t prev_psn) -> bool {
    if (fi > best || (fi == best && pi > best_pi)) {
      best = fi;
      best_pi = pi;
      best_prev = prev_psn;
    }
    if (pi == pat.size()) return fi == got.size();
    const FramePattern& p = pat[pi];
    auto one = [&](const FrameRec& f, int64_t prev) {
      if (!p.opcodes.empty() &&
          (!f.roce || std::find(p.opcodes.begin(), p.opcodes.end(), uint8_t(f.opcode)) == p.opcodes.end()))
        return false;
      if (p.psn && (!f.roce || f.psn != *p.psn)) return false;
      if (p.psn_next && (!f.roce || prev < 0 || f.psn != roce::psn_add(uint32_t(prev), 1))) return false;
      if (p.syndrome && f.syndrome != int(*p.syndrome)) return false;
      if (p.msn && (f.syndrome < 0 || f.msn != *p.msn)) return false;
      if (p.dest_qp && (!f.roce || f.dest_qp != *p.dest_qp)) return false;
      return true;
    };
    // Take k frames for this pattern, k from min up to max (greedy last).
    size_t k = 0;
    int64_t psn = prev_psn;
    std::vector<int64_t> psns{prev_psn};
    while (k < p.max && fi + k < got.size() && one(got[fi + k], psn)) {
      psn = got[fi + k].roce ? int64_t(got[fi + k].psn) : psn;
      ++k;
      psns.push_back(psn);
    }
    for (size_t t = k + 1; t-- > 0;) {
      if (t < p.min) break;
      if (m(fi + t, pi + 1, psns[t])) return true;
    }
    return false;
  };
  if (m(from, 0, -1)) return true;
  // The pattern the failing frame was held against, in the file's terms.
  auto describe = [&](size_t pi, int64_t prev) {
    if (pi >= pat.size()) return std::string("no more frames");
    const FramePattern& p = pat[pi];
    std::string d = fmt::format("frames[{}]: opcode ", pi);
    if (p.opcodes.empty()) d += "any";
    for (size_t i = 0; i < p.opcodes.size(); ++i) d += (i ? "|" : "") + std::string(roce::opcode_name(p.opcodes[i]));
    if (p.psn) d += fmt::format(", psn 0x{:06x}", *p.psn);
    if (p.psn_next)
      d += prev < 0 ? std::string(", psn next") : fmt::format(", psn next = 0x{:06x}", roce::psn_add(uint32_t(prev), 1));
    if (p.syndrome) d += fmt::format(", syndrome 0x{:02x}", *p.syndrome);
    if (p.msn) d += fmt::format(", msn {}", *p.msn);
    if (p.dest_qp) d += fmt::format(", dest_qp {}", *p.dest_qp);
    return d;
  };
  if (why) {
    if (best < got.size())
      *why = fmt::format("frame {} does not fit the expected sequence (it was held against {}): {}", got[best].index,
                         describe(best_pi, best_prev), got[best].str());
    else
      *why = fmt::format("the {} frame(s) seen end before the expected sequence does", got.size() - from);
  }
  return false;
}

void System::run_step(const Step& step, Group* g) {
  const SourceLoc& loc = step_loc(step);
  if (run_qp_setup_step(step)) return;
  if (auto* s = std::get_if<InitStep>(&step)) {
    for (const auto& n : s->nodes) {
      node(n)->driver->init();
      if (node(n)->qp_setup_driver) node(n)->qp_setup_driver->init();
    }
  } else if (auto* s = std::get_if<RegisterMrStep>(&step)) {
    const host::Mr& m = node(s->node)->driver->register_mr(s->name, s->length, access_code(s->access), s->pd);
    scoreboard.register_mr(s->node, s->name, m.pa, m.length, m.va, m.rkey, m.guard_before, m.guard_after,
                           host::kMrGuardBytes, loc.str());
  } else if (auto* s = std::get_if<DeregisterMrStep>(&step)) {
    node(s->node)->driver->deregister_mr(s->name);
    scoreboard.deregister_mr(s->node, s->name);
  } else if (auto* s = std::get_if<FillStep>(&step)) {
    Node* n = node(s->node);
    const host::Mr* mr = n->driver->find_mr(s->mr);
    if (!mr) return fail(loc, "no MR '" + s->mr + "' on " + s->node);
    fill_pattern(n->mem->data(mr->pa + s->offset, s->length), s->length, s->pattern, s->seed, s->value, s->offset);
    scoreboard.host_write(s->node, mr->pa + s->offset, n->mem->data(mr->pa + s->offset, s->length), s->length,
                          "fill at " + loc.str());
  } else if (auto* s = std::get_if<ConnectStep>(&step)) {
    Node* cn = node(s->client);
    Node* sn = node(s->server);
    if (!cn || !sn || cn == sn) return fail(loc, "connect needs two different nodes");
    if (nodes.size() != 2) return fail(loc, "connect needs a two-node topology (one link)");
    host::QpParams sp, cp;
    sp.pmtu = cp.pmtu = s->pmtu;
    sp.sq_depth = cp.sq_depth = s->sq_depth;
    sp.rq_depth = cp.rq_depth = s->rq_depth;
    sp.rq_elem_bytes = cp.rq_elem_bytes = s->rq_elem_bytes;
    sp.qpn = s->server_qp;
    cp.qpn = s->client_qp;
    sp.start_psn = s->server_psn;
    cp.start_psn = s->client_psn;
    sp.sideband = cp.sideband = s->sideband;
    sp.mr = s->server_mr.empty() ? nullptr : sn->driver->find_mr(s->server_mr);
    cp.mr = s->client_mr.empty() ? nullptr : cn->driver->find_mr(s->client_mr);
    Conn k{s->client, s->server, nullptr, nullptr};
    auto track = [&] {  // both QPs and their RQs, to the scoreboard
      k.sb_c = scoreboard.add_qp(s->client, k.c->qpn, k.c->rq_base, k.c->params.rq_depth, k.c->params.rq_elem_bytes);
      k.sb_s = scoreboard.add_qp(s->server, k.s->qpn, k.s->rq_base, k.s->params.rq_depth, k.s->params.rq_elem_bytes);
      scoreboard.pair_qps(k.sb_c, k.sb_s);
    };
    if (!s->cm) {
      // Out of band: each side learns the other's QPN, PSN and MR directly.
      k.c = &cn->driver->prepare(cp);
      k.s = &sn->driver->prepare(sp);
      auto mr_of = [](const host::QpParams& p) {
        return p.mr ? roce::cm::MrInfo{p.mr->va, p.mr->rkey, p.mr->length} : roce::cm::MrInfo{};
      };
      cn->driver->establish(*k.c, k.s->qpn, k.s->local_psn, node_addr(sn->cfg, s->ip_version), mr_of(sp));
      sn->driver->establish(*k.s, k.c->qpn, k.c->local_psn, node_addr(cn->cfg, s->ip_version), mr_of(cp));
      track();
      conns_[s->name] = k;
      return;
    }
    k.s = &sn->driver->listen(sp);
    k.c = &cn->driver->connect(node_addr(sn->cfg, s->ip_version), cp);
    // The server is RTS once the ReadyToUse has arrived (one CM try later at most).
    const sc_time limit(double(sn->driver->config().cm_timeout_us) * 3, SC_US);
    if (k.s->state != host::VerbsState::Rts) wait(limit, k.s->established);
    if (k.s->state != host::VerbsState::Rts)
      return fail(loc, fmt::format("connect '{}': server {} QP{} did not reach RTS (state {})", s->name, s->server,
                                   k.s->qpn, host::verbs_state_name(k.s->state)));
    track();
    conns_[s->name] = k;
  } else if (auto* s = std::get_if<ConnectRejectStep>(&step)) {
    Node* cn = node(s->client);
    Node* sn = node(s->server);
    sn->driver->reject_next(uint16_t(s->reason));
    const uint16_t got = cn->driver->connect_expect_reject(node_addr(sn->cfg, s->ip_version));
    if (got != s->reason)
      return fail(loc, fmt::format("ConnectReject with reason {} expected, got {}", s->reason, got));
  } else if (auto* s = std::get_if<DisconnectStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Conn k = it->second;
    conns_.erase(it);
    host::Connection& mine = side(k, s->node);
    host::Connection& peer = s->node == k.client ? *k.s : *k.c;
    node(s->node)->driver->disconnect(mine);
    // The peer deletes its QP when the DisconnectRequest arrives.
    const uint64_t deadline = sc_time_stamp().value() + uint64_t(node(s->node)->driver->config().cm_timeout_us) * 3000000;
    while (peer.state != host::VerbsState::Reset && sc_time_stamp().value() < deadline) wait(sc_time(1, SC_US));
    if (peer.state != host::VerbsState::Reset)
      return fail(loc, fmt::format("disconnect '{}': the peer's QP{} did not return to RESET", s->conn, peer.qpn));
  } else if (auto* s = std::get_if<HwHandshakeStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    const uint32_t pending = node(s->node)->driver->switch_to_hw_handshake(side(it->second, s->node));
    scoreboard.rq_restart(s->node == it->second.client ? it->second.sb_c : it->second.sb_s, pending);
  } else if (auto* s = std::get_if<RecoverStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Conn k = it->second;
    conns_.erase(it);
    node(k.client)->driver->recover_fatal(*k.c);
    const uint32_t code = node(k.server)->driver->recover_fatal(*k.s);
    if (s->code && code != *s->code)
      return fail(loc, fmt::format("the server's error-status queue holds fatal code 0x{:02x} for QP{}, expected 0x{:02x}",
                                   code, k.s->qpn, *s->code));
  } else if (auto* s = std::get_if<PostStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Node* n = node(s->node);
    host::Connection& c = side(it->second, s->node);
    std::vector<host::Wqe> wqes;
    std::vector<monitor::Scoreboard::Post> sb_posts;
    for (const WqeSpec& w : s->wqes) {
      const host::Mr* mr = n->driver->find_mr(w.local_mr);
      if (!mr) return fail(w.loc, "no MR '" + w.local_mr + "' on " + s->node);
      // The driver's local protection check (ERNIC WQEs carry physical
      // addresses, so the NIC has none): the local range must lie in the MR.
      if (w.local_offset > mr->length || w.length > mr->length - w.local_offset)
        return fail(w.loc, fmt::format("local range [{}, +{}) lies outside MR '{}' ({} bytes)", w.local_offset,
                                       w.length, w.local_mr, mr->length));
      host::Wqe q;
      q.wr_id = uint16_t(w.wr_id);
      q.opcode = wqe_code(w.opcode);
      q.laddr = mr->pa + w.local_offset;
      q.length = w.length;
      q.remote_va = c.remote_mr.va + w.remote_offset;
      q.rkey = w.opcode == WqeOpcode::send_inv ? w.immdt : w.rkey ? *w.rkey : c.remote_mr.rkey;
      q.immdt = w.immdt;
      wqes.push_back(q);
      sb_posts.push_back({s->node == it->second.client ? it->second.sb_c : it->second.sb_s, sb_opcode(w.opcode),
                          q.wr_id, q.laddr, q.length, q.remote_va, q.rkey, "post at " + w.loc.str()});
    }
    // `repeat` posts the list again and again without building it N times;
    // with one doorbell, it is rung after the last (and whenever the SQ is full).
    const bool each = s->doorbell == Doorbell::each;
    for (uint32_t r = 0; r < s->repeat && !exit_code; ++r) {
      for (const auto& p : sb_posts) scoreboard.post(p);
      n->driver->post(c, wqes, each, /*ring=*/each || r + 1 == s->repeat);
    }
  } else if (auto* s = std::get_if<WaitCompletionsStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Node* n = node(s->node);
    host::Connection& c = side(it->second, s->node);
    ++bounded_;  // the step times out by itself; the watchdog stays out of it
    auto got = n->driver->poll(c, s->count, s->timeout_us * 1000000ull);
    --bounded_;
    const int sb_qp = s->node == it->second.client ? it->second.sb_c : it->second.sb_s;
    for (const host::Cqe& q : got)
      for (const std::string& e :
           scoreboard.complete(sb_qp, q.wr_id, sb_opcode_of_code(q.opcode), q.error, at_now()))
        fail(loc, e);
    if (got.size() < s->count) {
      snapshot_qps();
      return fail(loc, fmt::format("expected {} completion(s) on {} QP{} within {} us, got {}", s->count, s->node,
                                   c.qpn, s->timeout_us, got.size()));
    }
    for (size_t i = 0; i < s->expect.size() && i < got.size(); ++i) {
      const CompletionExpect& e = s->expect[i];
      const host::Cqe& q = got[i];
      if (e.wr_id && *e.wr_id != q.wr_id)
        fail(loc, fmt::format("completion {}: wr_id {} expected, CQE has {} (CQE 0x{:08x})", i, *e.wr_id, q.wr_id, q.raw));
      if (e.opcode && wqe_code(*e.opcode) != q.opcode)
        fail(loc, fmt::format("completion {}: opcode {} (0x{:02x}) expected, CQE has 0x{:02x} (CQE 0x{:08x})", i,
                              to_string(*e.opcode), wqe_code(*e.opcode), q.opcode, q.raw));
      if (e.error && *e.error != q.error)
        fail(loc, fmt::format("completion {}: error={} expected, CQE ERRFLAG is {} (CQE 0x{:08x})", i, *e.error,
                              q.error ? 1 : 0, q.raw));
    }
  } else if (auto* s = std::get_if<RecvStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Node* n = node(s->node);
    host::Connection& c = side(it->second, s->node);
    ++bounded_;
    auto got = n->driver->recv(c, s->count, s->timeout_us * 1000000ull, s->consume);
    --bounded_;
    if (got.size() < s->count) {
      snapshot_qps();
      return fail(loc, fmt::format("expected {} received message(s) on {} QP{} within {} us, got {}", s->count,
                                   s->node, c.qpn, s->timeout_us, got.size()));
    }
    static const char* kKinds[] = {"send", "send_imm", "send_inv", "write_imm"};
    for (size_t i = 0; i < s->expect.size(); ++i) {
      const RecvExpect& e = s->expect[i];
      const host::RecvMsg& m = got[i];
      if (e.opcode) {
        const char* want = to_string(*e.opcode);
        if (std::string(want) != kKinds[m.kind])
          fail(loc, fmt::format("message {}: {} expected, {} received", i, want, kKinds[m.kind]));
      }
      if (e.immdt && (m.kind == host::RecvMsg::kSend || *e.immdt != m.data))
        fail(loc, fmt::format("message {}: {} 0x{:08x} expected, {}", i,
                              m.kind == host::RecvMsg::kSendInv ? "invalidate R_Key" : "ImmDt", *e.immdt,
                              m.kind == host::RecvMsg::kSend ? std::string("a plain SEND has none")
                                                             : fmt::format("got 0x{:08x}", m.data)));
      if (e.equals) {
        if (m.kind == host::RecvMsg::kWriteImm) {
          fail(loc, fmt::format("message {}: a write_imm has no RQ element to compare", i));
          continue;
        }
        Node* src = node(e.equals->node);
        const host::Mr* mr = src->driver->find_mr(e.equals->mr);
        if (!mr) return fail(loc, "no MR '" + e.equals->mr + "' on " + e.equals->node);
        if (e.length > c.params.rq_elem_bytes) {
          fail(loc, fmt::format("message {}: length {} exceeds the RQ element ({} bytes)", i, e.length,
                                c.params.rq_elem_bytes));
          continue;
        }
        const uint8_t* want = src->mem->data(mr->pa + e.equals->offset, e.length);
        const uint8_t* have = n->mem->data(m.elem_addr, e.length);
        for (uint64_t k = 0; k < e.length; ++k)
          if (want[k] != have[k]) {
            fail(loc, fmt::format("message {}: RQ element {} byte {} is 0x{:02x}, {} {} offset {} has 0x{:02x}", i,
                                  m.rq_index, k, have[k], e.equals->node, e.equals->mr, e.equals->offset + k,
                                  want[k]));
            break;
          }
      }
    }
  } else if (auto* s = std::get_if<BypassSendStep>(&step)) {
    Node* src = node(s->node);
    Node* dst = node(s->to);
    const bool udp = s->udp_dport.has_value();
    if (udp && (!src->cfg.has_ip || !dst->cfg.has_ip))
      return fail(loc, "bypass_send with udp_dport needs IPv4 addresses on both nodes");
    for (uint32_t k = 0; k < s->count; ++k) {
      FrameBytes fr(14 + (udp ? 28 : 0) + s->length, 0);
      std::copy_n(dst->cfg.mac.b.data(), 6, fr.begin());
      std::copy_n(src->cfg.mac.b.data(), 6, fr.begin() + 6);
      const uint16_t et = udp ? 0x0800 : *s->ethertype;
      fr[12] = uint8_t(et >> 8);
      fr[13] = uint8_t(et);
      size_t off = 14;
      if (udp) {  // IPv4 (DF, TTL 64, protocol 17) + UDP (source port 49152, no checksum)
        uint8_t* ip = fr.data() + 14;
        const uint16_t total = uint16_t(20 + 8 + s->length);
        ip[0] = 0x45;
        ip[2] = uint8_t(total >> 8);
        ip[3] = uint8_t(total);
        ip[6] = 0x40;
        ip[8] = 64;
        ip[9] = 17;
        for (int i = 0; i < 4; ++i) {
          ip[12 + i] = uint8_t(src->cfg.ip.v >> (24 - 8 * i));
          ip[16 + i] = uint8_t(dst->cfg.ip.v >> (24 - 8 * i));
        }
        const uint16_t c = roce::ipv4_checksum(ip);
        ip[10] = uint8_t(c >> 8);
        ip[11] = uint8_t(c);
        uint8_t* u = ip + 20;
        u[0] = 0xC0;
        u[2] = uint8_t(*s->udp_dport >> 8);
        u[3] = uint8_t(*s->udp_dport);
        u[4] = uint8_t((8 + s->length) >> 8);
        u[5] = uint8_t(8 + s->length);
        off = 14 + 28;
      }
      fill_pattern(fr.data() + off, s->length, s->pattern, s->seed + k, s->value, 0);
      bypass_sent_[s->to].push_back(fr);
      src->cmac->tx_push(std::move(fr));  // non_roce_dma_s_axis, merged into cmac_m_axis
    }
  } else if (auto* s = std::get_if<ExpectBypassStep>(&step)) {
    Node* n = node(s->node);
    size_t& done = bypass_checked_[s->node];
    const uint64_t deadline = sc_time_stamp().value() + s->timeout_us * 1000000ull;
    ++bounded_;
    while (n->bypass_rx.size() < done + s->count && sc_time_stamp().value() < deadline)
      wait(sc_time(double(deadline - sc_time_stamp().value()), SC_PS), n->bypass_ev);
    --bounded_;
    const size_t got = n->bypass_rx.size() - done;
    if (got != s->count)
      return fail(loc, fmt::format("{} non-RoCE frame(s) on {}'s bypass path since the previous expect_bypass, "
                                   "expected {}", got, s->node, s->count));
    const auto& sent = bypass_sent_[s->node];
    for (size_t i = done; i < done + s->count; ++i) {
      if (i >= sent.size()) {
        fail(loc, fmt::format("bypass frame {} on {} ({} bytes) was not sent by a bypass_send", i, s->node,
                              n->bypass_rx[i].size()));
        break;
      }
      const FrameBytes& a = sent[i];
      const FrameBytes& b = n->bypass_rx[i];
      if (a != b) {
        size_t k = 0;
        while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
        fail(loc, fmt::format("bypass frame {} on {} differs from the one sent: {} bytes sent, {} received, first "
                              "difference at byte {}", i, s->node, a.size(), b.size(), k));
        break;
      }
    }
    done += s->count;
  } else if (auto* s = std::get_if<CheckMemoryStep>(&step)) {
    Node* n = node(s->node);
    const host::Mr* mr = n->driver->find_mr(s->mr);
    if (!mr) return fail(loc, "no MR '" + s->mr + "' on " + s->node);
    const uint8_t* got = n->mem->data(mr->pa + s->offset, s->length);
    std::vector<uint8_t> want(s->length);
    if (s->equals) {
      Node* m = node(s->equals->node);
      const host::Mr* om = m->driver->find_mr(s->equals->mr);
      if (!om) return fail(loc, "no MR '" + s->equals->mr + "' on " + s->equals->node);
      if (s->equals->offset > om->length || s->length > om->length - s->equals->offset)
        return fail(loc, "check_memory: the range to compare with lies outside MR '" + s->equals->mr + "'");
      std::memcpy(want.data(), m->mem->data(om->pa + s->equals->offset, s->length), s->length);
    } else {
      fill_pattern(want.data(), s->length, s->pattern->pattern, s->pattern->seed, s->pattern->value, s->offset);
    }
    uint64_t diffs = 0, first = 0;
    for (uint64_t i = 0; i < s->length; ++i)
      if (got[i] != want[i] && diffs++ == 0) first = i;
    if (diffs)
      fail(loc, fmt::format("memory of {} MR '{}' differs in {} of {} bytes; first at offset {}: 0x{:02x}, expected 0x{:02x}",
                            s->node, s->mr, diffs, s->length, s->offset + first, got[first], want[first]));
  } else if (auto* s = std::get_if<WaitStep>(&step)) {
    ++bounded_;
    wait(sc_time(double(s->us), SC_US));
    --bounded_;
  } else if (auto* s = std::get_if<DebugPresetStep>(&step)) {
    node(s->ref.node)->ernic->backdoor_write(reg_addr(s->ref), s->value);
  } else if (auto* s = std::get_if<RegWriteStep>(&step)) {
    Node* n = node(s->ref.node);
    bool qp_level = false;
    if (places_memory(s->ref.reg, &qp_level)) {
      const std::string why = fmt::format("register-level write of {} at {} (the scoreboard cannot see where data "
                                          "lands, e.g. WQEs posted by hand)", reg_name(s->ref), loc.str());
      for (auto& o : nodes)  // a QP reaches its peers' memory too
        if (o.get() == n || qp_level) scoreboard.stand_aside(o->cfg.name, why);
    }
    const uint32_t addr = reg_addr(s->ref);
    if (s->ref.field.empty()) {
      n->axil->write(addr, s->value);
    } else {
      const regs::FieldInfo* f = regs::find_field(s->ref.reg, s->ref.field);
      // W1C registers: write only the field's bits (a read-modify-write would
      // clear every other pending bit).
      const bool w1c = regs::find_register(s->ref.reg)->access == regs::Access::W1C;
      const uint32_t old = w1c ? 0 : n->axil->read(addr);
      n->axil->write(addr, f->set(old, s->value));
    }
  } else if (auto* s = std::get_if<RegReadStep>(&step)) {
    uint32_t raw = 0;
    const uint32_t v = reg_read_value(s->ref, &raw);
    ctx.event(reg_name(s->ref), fmt::format("read 0x{:08x} ({})", v, v));
  } else if (auto* s = std::get_if<RegExpectStep>(&step)) {
    uint32_t raw = 0;
    const uint32_t v = reg_read_value(s->ref, &raw);
    const bool eq = (v & s->mask) == (s->value & s->mask);
    if (eq == s->negate)
      fail(loc, fmt::format("{} is 0x{:x} (register 0x{:08x}); expected {}0x{:x}{}", reg_name(s->ref), v, raw,
                            s->negate ? "anything but " : "", s->value & s->mask,
                            s->mask == 0xFFFFFFFF ? "" : fmt::format(" under mask 0x{:x}", s->mask)));
  } else if (auto* s = std::get_if<RegPollStep>(&step)) {
    const uint64_t deadline = sc_time_stamp().value() + s->timeout_us * 1000000ull;
    ++bounded_;
    uint32_t v = 0, raw = 0;
    for (;;) {
      v = reg_read_value(s->ref, &raw);
      if ((v & s->mask) == (s->value & s->mask)) break;
      if (sc_time_stamp().value() >= deadline) break;
      wait(sc_time(double(std::max<uint64_t>(s->interval_ns, 1)), SC_NS));
    }
    --bounded_;
    if ((v & s->mask) != (s->value & s->mask)) {
      snapshot_qps();
      fail(loc, fmt::format("{} did not become 0x{:x} within {} us (last read 0x{:x}, register 0x{:08x})",
                            reg_name(s->ref), s->value & s->mask, s->timeout_us, v, raw));
    }
  } else if (auto* s = std::get_if<MemWriteStep>(&step)) {
    Node* n = node(s->node);
    if (!n->mem->in_range(s->addr, s->bytes.size())) return fail(loc, "mem_write outside host memory");
    n->mem->write(s->addr, s->bytes);
    if (!s->stray) scoreboard.host_write(s->node, s->addr, s->bytes.data(), s->bytes.size(), "mem_write at " + loc.str());
  } else if (auto* s = std::get_if<MemExpectStep>(&step)) {
    Node* n = node(s->node);
    if (!n->mem->in_range(s->addr, s->bytes.size())) return fail(loc, "mem_expect outside host memory");
    const uint8_t* got = n->mem->data(s->addr, s->bytes.size());
    for (size_t i = 0; i < s->bytes.size(); ++i)
      if (got[i] != s->bytes[i])
        return fail(loc, fmt::format("{} memory at 0x{:x}: 0x{:02x}, expected 0x{:02x}", s->node, s->addr + i,
                                     got[i], s->bytes[i]));
  } else if (auto* s = std::get_if<FaultStep>(&step)) {
    for (const Direction& d : s->dirs) {
      Wire* w = wire_for(d);
      if (!w) return fail(loc, "no link " + d.from + "->" + d.to);
      FaultRule r;
      r.name = s->name;
      r.opcodes = s->match.opcodes;
      r.psn = s->match.psn;
      r.dest_qp = s->match.dest_qp;
      r.nth = s->match.nth;
      r.probability = s->match.probability;
      r.kind = FaultKind(int(s->action));
      r.count = s->count;
      r.reorder_after = s->reorder_after;
      r.delay_ps = s->delay_ns * 1000;
      r.corrupt_byte = s->corrupt_byte;
      r.corrupt_field = s->corrupt_field;
      r.corrupt_bit = s->corrupt_bit;
      r.corrupt_value = s->corrupt_value;
      r.repair = s->repair;
      w->faults().add_rule(r);
    }
  } else if (auto* s = std::get_if<LinkStep>(&step)) {
    for (const Direction& d : s->dirs) {
      Wire* w = wire_for(d);
      if (!w) return fail(loc, "no link " + d.from + "->" + d.to);
      w->set_link_up(s->up);
    }
    for (auto& n : nodes)
      if (n->qp_setup) n->qp_setup->link_changed();
  } else if (auto* s = std::get_if<ExpectFramesStep>(&step)) {
    const std::string name = s->dir.from + "->" + s->dir.to;
    DirFrames& d = dirs[name];
    auto& list = s->tap == Tap::tx ? d.tx : d.rx;
    size_t& cur = s->tap == Tap::tx ? d.cursor_tx : d.cursor_rx;
    std::string why;
    if (!frames_match(list, cur, s->frames, &why))
      fail(loc, fmt::format("frames on {} ({} tap) since the previous expect_frames: {}", name,
                            s->tap == Tap::tx ? "tx" : "rx", why));
    cur = list.size();
  } else if (auto* s = std::get_if<ExpectIdleStep>(&step)) {
    std::vector<size_t> before;
    for (const Direction& d : s->dirs) before.push_back(dirs[d.from + "->" + d.to].tx.size());
    uint64_t cqes = 0;
    for (auto& n : nodes) cqes += n->ernic->stats().cqes_written;
    ++bounded_;
    wait(sc_time(double(s->us), SC_US));
    --bounded_;
    for (size_t i = 0; i < s->dirs.size(); ++i) {
      const auto& list = dirs[s->dirs[i].from + "->" + s->dirs[i].to].tx;
      if (list.size() != before[i])
        fail(loc, fmt::format("{} frame(s) on {} during {} us of expected idleness; first: {}", list.size() - before[i],
                              s->dirs[i].from + "->" + s->dirs[i].to, s->us, list[before[i]].str()));
    }
    uint64_t cqes2 = 0;
    for (auto& n : nodes) cqes2 += n->ernic->stats().cqes_written;
    if (cqes2 != cqes) fail(loc, fmt::format("{} CQE(s) written during {} us of expected idleness", cqes2 - cqes, s->us));
  } else if (auto* s = std::get_if<WaitUntilStep>(&step)) {
    const uint64_t deadline = sc_time_stamp().value() + s->timeout_us * 1000000ull;
    ++bounded_;
    bool ok = false;
    uint32_t v = 0;
    for (;;) {
      if (s->frames_dir) {
        ok = frames_seen(*s->frames_dir, s->frames_opcodes) >= s->frames_count;
      } else if (s->reg) {
        v = reg_read_value(*s->reg);
        ok = (v & s->mask) == (s->value & s->mask);
      }
      if (ok || sc_time_stamp().value() >= deadline) break;
      if (s->frames_dir)
        wait(sc_time(double(deadline - sc_time_stamp().value()), SC_PS), frame_ev_);
      else
        wait(sc_time(100, SC_NS));
    }
    --bounded_;
    if (!ok) {
      snapshot_qps();
      if (s->frames_dir)
        fail(loc, fmt::format("fewer than {} matching frame(s) on {}->{} within {} us", s->frames_count,
                              s->frames_dir->from, s->frames_dir->to, s->timeout_us));
      else
        fail(loc, fmt::format("{} did not become 0x{:x} within {} us (last 0x{:x})", reg_name(*s->reg),
                              s->value & s->mask, s->timeout_us, v));
    }
  } else if (auto* s = std::get_if<ExpectComplianceStep>(&step)) {
    const uint64_t n = compliance.count(s->rule);
    if (n != s->count)
      fail(loc, fmt::format("{} compliance report(s) of rule {} so far, expected {}", n, s->rule, s->count));
  } else if (auto* s = std::get_if<BarrierStep>(&step)) {
    if (!g) return fail(loc, "barrier outside a parallel block");
    size_t& a = g->arrived[s->name];
    ++a;
    g->changed.notify(SC_ZERO_TIME);
    while (g->arrived[s->name] < g->branches && !exit_code) wait(g->changed | fail_ev_);
  } else if (auto* sp = std::get_if<std::shared_ptr<RepeatStep>>(&step)) {
    for (uint32_t i = 0; i < (*sp)->count && !exit_code; ++i) run_steps((*sp)->steps, g);
  } else if (auto* sp = std::get_if<std::shared_ptr<ParallelStep>>(&step)) {
    Group grp;
    grp.branches = grp.running = (*sp)->branches.size();
    for (const auto& b : (*sp)->branches)
      sc_spawn(sc_bind(&System::run_branch, this, &b.steps, &grp), sc_gen_unique_name("branch"));
    while (grp.running > 0) wait(grp.changed);
  }
}

// The QP-setup offload's steps (model/qp_setup/qp_setup_fsm.h): qp_setup,
// qp_release, qp_adopt. Returns false for every other step.
bool System::run_qp_setup_step(const Step& step) {
  const SourceLoc& loc = step_loc(step);
  auto check = [&](const char* what, uint32_t qpn, const host::QpSetupResult& r, uint8_t want_status,
                   uint8_t want_state) {
    const auto ws = qps::State(want_state);
    if (r.status != want_status || r.state != ws)
      fail(loc, fmt::format("qp_setup_fsm {} QP{}: status 0x{:02x} ({}) in state {}; expected 0x{:02x} ({}) in state {}",
                            what, qpn, r.status, qps::status_name(r.status), qps::state_name(r.state), want_status,
                            qps::status_name(want_status), qps::state_name(ws)));
  };
  if (auto* s = std::get_if<QpSetupStep>(&step)) {
    host::QpSetupRequest q;
    q.qpn = s->qp;
    q.remote_qpn = s->remote_qp;
    q.sq_psn = s->psn;
    q.exp_psn = s->remote_psn;
    q.remote_ip = s->remote_ip.v;
    q.remote_mac = s->remote_mac;
    q.udp_port = s->udp_port;
    q.pd = s->pd;
    ++bounded_;
    const host::QpSetupResult r = node(s->node)->qp_setup_driver->create(q, s->timeout_us * 1000000ull);
    --bounded_;
    check("create", s->qp, r, s->expect_status, s->expect_state);
    return true;
  }
  if (auto* s = std::get_if<QpReleaseStep>(&step)) {
    Node* n = node(s->node);
    if (s->expect_status == qps::status::kSuccess)  // PG332: the QP carries no traffic when it is deleted
      for (const auto& c : n->driver->connections())
        if (c->qpn == s->qp && c->state != host::VerbsState::Reset)
          return fail(loc, fmt::format("QP{} of {} is a connection of the driver: not released", s->qp, s->node)), true;
    ++bounded_;
    const host::QpSetupResult r = n->qp_setup_driver->release(s->qp, s->timeout_us * 1000000ull);
    --bounded_;
    check("release", s->qp, r, s->expect_status, s->expect_state);
    return true;
  }
  if (auto* s = std::get_if<QpAdoptStep>(&step)) {
    Node* cn = node(s->client.node);
    Node* sn = node(s->server.node);
    auto mr_info = [](Node* n, const std::string& mr) {
      const host::Mr* m = mr.empty() ? nullptr : n->driver->find_mr(mr);
      return std::make_pair(m, m ? roce::cm::MrInfo{m->va, m->rkey, m->length} : roce::cm::MrInfo{});
    };
    const auto [cmr, cinfo] = mr_info(cn, s->client.mr);
    const auto [smr, sinfo] = mr_info(sn, s->server.mr);
    // The FSM ends first (their QPs exist), then a driver end set up to match.
    auto take = [&](Node* me, const QpAdoptStep::End& e, const host::Mr* mine, const roce::cm::MrInfo& peer_info,
                    Node* peer, const QpAdoptStep::End& pe) -> host::Connection& {
      if (e.fsm) return me->qp_setup_driver->adopt(e.qp, peer_info, mine);
      host::QpParams p;
      p.qpn = e.qp;
      p.start_psn = e.psn;
      p.mr = mine;
      if (peer->cfg.qp_setup_fsm) p.pmtu = peer->cfg.qp_setup_fsm->pmtu;
      host::Connection& c = me->driver->prepare(p);
      me->driver->establish(c, pe.qp, e.remote_psn, peer->cfg.ip, peer_info);
      return c;
    };
    Conn k{s->client.node, s->server.node, nullptr, nullptr};
    if (s->client.fsm || !s->server.fsm) {
      k.c = &take(cn, s->client, cmr, sinfo, sn, s->server);
      k.s = &take(sn, s->server, smr, cinfo, cn, s->client);
    } else {
      k.s = &take(sn, s->server, smr, cinfo, cn, s->client);
      k.c = &take(cn, s->client, cmr, sinfo, sn, s->server);
    }
    k.sb_c = scoreboard.add_qp(k.client, k.c->qpn, k.c->rq_base, k.c->params.rq_depth, k.c->params.rq_elem_bytes);
    k.sb_s = scoreboard.add_qp(k.server, k.s->qpn, k.s->rq_base, k.s->params.rq_depth, k.s->params.rq_elem_bytes);
    scoreboard.pair_qps(k.sb_c, k.sb_s);
    conns_[s->name] = k;
    return true;
  }
  return false;
}

}  // namespace ernic
