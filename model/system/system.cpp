#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "model/system/system.h"

#include <fmt/format.h>

#include <cstring>

#include "Vicrc.h"
#include "model/ernic/tx_icrc.h"
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
uint32_t access_code(Access a) {
  switch (a) {
    case Access::r: return regs::f::ACCESS_READ;
    case Access::w: return regs::f::ACCESS_WRITE;
    case Access::rw: return regs::f::ACCESS_RW;
  }
  return regs::f::ACCESS_RW;
}
}  // namespace

Node::Node(sc_module_name name, const NodeConfig& c, const Scenario& sc, const ClockDomain& core,
           const ClockDomain& cmac_clk, SimContext& ctx, const LinkParams& lp, uint64_t seed)
    : sc_module(name), cfg(c) {
  const std::string scope = std::string(this->name());
  mem = std::make_unique<HostMemory>(uint64_t(c.memory_mib) << 20);
  ErnicConfig ec;
  ec.num_qp = c.num_qp;
  ernic = std::make_unique<Ernic>("ernic", core, *mem, ctx, scope + ".ernic", ec);
  axil = std::make_unique<AxiLitePort>(core, *ernic, ctx, scope + ".s_axi_lite");
  cmac = std::make_unique<Cmac>("cmac", cmac_clk, core, ctx, scope + ".cmac", lp);
  ernic->cmac = cmac.get();
  Ernic* e = ernic.get();
  cmac->rx_sink = [e](FrameBytes f) { e->rx_push(std::move(f)); };
  host::DriverConfig dc;
  dc.node = c.name;
  dc.mac = c.mac;
  dc.ip = c.ip;
  dc.num_qp = c.num_qp;
  dc.core_mhz = sc.clocks.core_mhz;
  dc.seed = seed;
  driver = std::make_unique<host::Driver>("driver", core, *axil, *mem, ernic->intr, ctx, dc);
}

System::System(sc_module_name name, const Scenario& sc, const RunOptions& opt, SimContext& c)
    : sc_module(name), scenario(sc), core("core", sc.clocks.core_mhz), cmac_clk("cmac", sc.clocks.cmac_mhz),
      ctx(c) {
  LinkParams lp;
  lp.rate_gbps = sc.link.rate_gbps;
  lp.delay_ps = sc.link.delay_ns * 1000;
  // Each node's driver draws from its own stream: seed and node index.
  for (size_t i = 0; i < sc.nodes.size(); ++i) {
    const NodeConfig& nc = sc.nodes[i];
    nodes.push_back(std::make_unique<Node>(nc.name.c_str(), nc, sc, core, cmac_clk, ctx, lp,
                                           sc.seed * 0x9E3779B97F4A7C15ull + i + 1));
  }
  for (auto& a : nodes)
    for (auto& b : nodes)
      if (a != b) a->driver->add_neighbour(b->cfg.ip, b->cfg.mac);
  if (nodes.size() == 2) {
    wire_ab = std::make_unique<Wire>("wire_ab", lp.delay_ps);
    wire_ba = std::make_unique<Wire>("wire_ba", lp.delay_ps);
    nodes[0]->cmac->wire_out = wire_ab.get();
    wire_ab->dst = nodes[1]->cmac.get();
    nodes[1]->cmac->wire_out = wire_ba.get();
    wire_ba->dst = nodes[0]->cmac.get();
  }
  if (!opt.pcap.empty()) {
    tap_wire = std::make_unique<PcapWriter>(opt.pcap);
    const std::string stem = pcap_stem(opt.pcap);
    for (auto& n : nodes) {
      n->tap_tx = std::make_unique<PcapWriter>(fmt::format("{}.{}-tx.pcap", stem, n->cfg.name));
      n->tap_rx = std::make_unique<PcapWriter>(fmt::format("{}.{}-rx.pcap", stem, n->cfg.name));
      n->cmac->tap_tx = n->tap_tx.get();
      n->cmac->tap_rx = n->tap_rx.get();
      n->cmac->tap_wire = tap_wire.get();
    }
  }
  if (ctx.vcd) {
    clk_vars_.push_back(ctx.var("top.clocks", "core_clk", 1));
    clk_vars_.push_back(ctx.var("top.clocks", "cmac_clk", 1));
    sc_spawn(sc_bind(&System::clock_tracer, this, &core, clk_vars_[0]), "core_clk_tracer");
    sc_spawn(sc_bind(&System::clock_tracer, this, &cmac_clk, clk_vars_[1]), "cmac_clk_tracer");
  }
  SC_THREAD(runner);
  SC_THREAD(watchdog);
}

System::~System() = default;

void System::open_rtl_trace(const std::string& path) {
  rtl_vcd_ = std::make_unique<VerilatedVcdSc>();
  for (auto& n : nodes) n->ernic->tx_icrc().rtl().trace(rtl_vcd_.get(), 99);
  rtl_vcd_->open(path.c_str());
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

void System::clock_tracer(const ClockDomain* d, int var) {
  // Waveform only: the model never waits on these edges.
  const uint64_t p = d->period_ps(), hi = p / 2;
  for (;;) {
    ctx.set(var, 1);
    wait(ps(hi));
    ctx.set(var, 0);
    wait(ps(p - hi));
  }
}

void System::fail(const SourceLoc& loc, const std::string& what, int code) {
  failures.push_back({what, loc, sc_time_stamp().value()});
  if (exit_code == 0) exit_code = code;
}

host::Connection& System::side(const Conn& k, const std::string& node_name) {
  return node_name == k.client ? *k.c : *k.s;
}

void System::watchdog() {
  const sc_time period(double(scenario.limits.watchdog_us), SC_US);
  uint64_t last = ctx.progress;
  for (;;) {
    wait(period);
    if (finished) return;
    if (ctx.progress == last && !bounded_wait_) {
      fail(SourceLoc{}, fmt::format("no progress for {} us of simulated time (watchdog)",
                                    scenario.limits.watchdog_us),
           3);
      for (auto& n : nodes)
        for (auto& s : n->ernic->qp_status()) stall_report.push_back(n->cfg.name + " " + s);
      sc_stop();
      return;
    }
    last = ctx.progress;
  }
}

void System::runner() {
  for (const Step& s : scenario.steps) {
    StepRecord rec{step_kind(s), step_loc(s), sc_time_stamp().value(), 0, ""};
    try {
      run_step(s);
    } catch (const host::DriverError& e) {
      fail(step_loc(s), e.what());
    } catch (const std::exception& e) {
      fail(step_loc(s), std::string("internal error: ") + e.what());
    }
    rec.end_ps = sc_time_stamp().value();
    steps_done.push_back(rec);
    if (exit_code) break;
  }
  finished = true;
  sc_stop();
}

void System::run_step(const Step& step) {
  const SourceLoc& loc = step_loc(step);
  if (auto* s = std::get_if<InitStep>(&step)) {
    for (const auto& n : s->nodes) node(n)->driver->init();
  } else if (auto* s = std::get_if<RegisterMrStep>(&step)) {
    node(s->node)->driver->register_mr(s->name, s->length, access_code(s->access), s->pd);
  } else if (auto* s = std::get_if<FillStep>(&step)) {
    Node* n = node(s->node);
    const host::Mr* mr = n->driver->find_mr(s->mr);
    fill_pattern(n->mem->data(mr->pa + s->offset, s->length), s->length, s->pattern, s->seed, s->value, s->offset);
  } else if (auto* s = std::get_if<ConnectStep>(&step)) {
    Node* cn = node(s->client);
    Node* sn = node(s->server);
    if (!cn || !sn || cn == sn) return fail(loc, "connect needs two different nodes");
    if (nodes.size() != 2) return fail(loc, "connect needs a two-node topology (one link)");
    host::QpParams sp, cp;
    sp.pmtu = cp.pmtu = s->pmtu;
    sp.sq_depth = cp.sq_depth = s->sq_depth;
    sp.rq_depth = cp.rq_depth = s->rq_depth;
    sp.qpn = s->server_qp;
    cp.qpn = s->client_qp;
    sp.start_psn = s->server_psn;
    cp.start_psn = s->client_psn;
    sp.mr = s->server_mr.empty() ? nullptr : sn->driver->find_mr(s->server_mr);
    cp.mr = s->client_mr.empty() ? nullptr : cn->driver->find_mr(s->client_mr);
    Conn k{s->client, s->server, nullptr, nullptr};
    k.s = &sn->driver->listen(sp);
    k.c = &cn->driver->connect(sn->cfg.ip, cp);
    // The server is RTS once the ReadyToUse has arrived.
    const sc_time limit(double(scenario.limits.watchdog_us), SC_US);
    if (k.s->state != host::VerbsState::Rts) wait(limit, k.s->established);
    if (k.s->state != host::VerbsState::Rts)
      return fail(loc, fmt::format("connect '{}': server {} QP{} did not reach RTS (state {})", s->name, s->server,
                                   k.s->qpn, host::verbs_state_name(k.s->state)));
    conns_[s->name] = k;
  } else if (auto* s = std::get_if<PostStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Node* n = node(s->node);
    host::Connection& c = side(it->second, s->node);
    std::vector<host::Wqe> wqes;
    for (uint32_t r = 0; r < s->repeat; ++r)
      for (const WqeSpec& w : s->wqes) {
        const host::Mr* mr = n->driver->find_mr(w.local_mr);
        host::Wqe q;
        q.wr_id = uint16_t(w.wr_id);
        q.opcode = wqe_code(w.opcode);
        q.laddr = mr->pa + w.local_offset;
        q.length = w.length;
        q.remote_va = c.remote_mr.va + w.remote_offset;
        q.rkey = w.opcode == WqeOpcode::send_inv ? w.immdt : c.remote_mr.rkey;
        q.immdt = w.immdt;
        wqes.push_back(q);
      }
    n->driver->post(c, wqes, s->doorbell == Doorbell::each);
  } else if (auto* s = std::get_if<WaitCompletionsStep>(&step)) {
    auto it = conns_.find(s->conn);
    if (it == conns_.end()) return fail(loc, "connection '" + s->conn + "' was not established");
    Node* n = node(s->node);
    host::Connection& c = side(it->second, s->node);
    bounded_wait_ = true;  // the step times out by itself; the watchdog stays out of it
    auto got = n->driver->poll(c, s->count, s->timeout_us * 1000000ull);
    bounded_wait_ = false;
    if (got.size() < s->count) {
      for (auto& nn : nodes)
        for (auto& st : nn->ernic->qp_status()) stall_report.push_back(nn->cfg.name + " " + st);
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
  } else if (auto* s = std::get_if<CheckMemoryStep>(&step)) {
    Node* n = node(s->node);
    const host::Mr* mr = n->driver->find_mr(s->mr);
    const uint8_t* got = n->mem->data(mr->pa + s->offset, s->length);
    std::vector<uint8_t> want(s->length);
    if (s->equals) {
      Node* m = node(s->equals->node);
      const host::Mr* om = m->driver->find_mr(s->equals->mr);
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
    bounded_wait_ = true;
    wait(sc_time(double(s->us), SC_US));
    bounded_wait_ = false;
  }
}

}  // namespace ernic
