#include "model/qp_setup/qp_setup_fsm.h"

#include <fmt/format.h>

#include "Vqp_setup_fsm.h"
#include "model/trace/signal_enums.h"

namespace ernic {

using namespace sc_core;
namespace Q = qps;

QpSetupFsm::QpSetupFsm(sc_module_name name, const ClockDomain& core, SimContext& ctx, const std::string& scope,
                       AxilArbiter& ernic, Config cfg)
    : sc_module(name), core_(core), ctx_(ctx), arb_(ernic), cfg_(std::move(cfg)), scope_(scope) {
  v_state_ = ctx_.var(scope_, "state", 3);
  v_status_ = ctx_.var(scope_, "status", 8);
  v_busy_ = ctx_.var(scope_, "busy", 1);
  v_link_ = ctx_.var(scope_, "cmac_link_up", 1);
  v_cmds_ = ctx_.var(scope_, "commands", 32);
  if (!cfg_.rtl) {
    model_ = std::make_unique<Q::QpSetupModel>();
    SC_THREAD(model_thread);
    return;
  }
  rtl_ = std::make_unique<Vqp_setup_fsm>("rtl");
  Vqp_setup_fsm& r = *rtl_;
  r.clk(clk_);
  r.rst_n(rst_n_);
  r.s_awvalid(s_awvalid_); r.s_awready(s_awready_); r.s_awaddr(s_awaddr_);
  r.s_wvalid(s_wvalid_); r.s_wready(s_wready_); r.s_wdata(s_wdata_); r.s_wstrb(s_wstrb_);
  r.s_bvalid(s_bvalid_); r.s_bready(s_bready_); r.s_bresp(s_bresp_);
  r.s_arvalid(s_arvalid_); r.s_arready(s_arready_); r.s_araddr(s_araddr_);
  r.s_rvalid(s_rvalid_); r.s_rready(s_rready_); r.s_rdata(s_rdata_); r.s_rresp(s_rresp_);
  r.m_awvalid(m_awvalid_); r.m_awready(m_awready_); r.m_awaddr(m_awaddr_);
  r.m_wvalid(m_wvalid_); r.m_wready(m_wready_); r.m_wdata(m_wdata_); r.m_wstrb(m_wstrb_);
  r.m_bvalid(m_bvalid_); r.m_bready(m_bready_); r.m_bresp(m_bresp_);
  r.m_arvalid(m_arvalid_); r.m_arready(m_arready_); r.m_araddr(m_araddr_);
  r.m_rvalid(m_rvalid_); r.m_rready(m_rready_); r.m_rdata(m_rdata_); r.m_rresp(m_rresp_);
  r.cmac_link_up(cmac_link_up_);
  r.state(state_sig_);
  r.status(status_sig_);
  r.busy(busy_);
  mon_s_ = &ctx_.protocol.axil(scope_ + ".s_axi_lite", core.name(), core.period_ps());
  mon_m_ = &ctx_.protocol.axil(scope_ + ".m_axi_lite", core.name(), core.period_ps());
  using K = monitor::HandshakeRandomizer::Kind;
  rnd_s_awvalid_ = ctx_.protocol.stall(scope_ + ".s_axi_lite.awvalid", K::valid);
  rnd_s_wvalid_ = ctx_.protocol.stall(scope_ + ".s_axi_lite.wvalid", K::valid);
  rnd_s_arvalid_ = ctx_.protocol.stall(scope_ + ".s_axi_lite.arvalid", K::valid);
  rnd_m_awready_ = ctx_.protocol.stall(scope_ + ".m_axi_lite.awready", K::ready);
  rnd_m_arready_ = ctx_.protocol.stall(scope_ + ".m_axi_lite.arready", K::ready);
  rnd_m_bvalid_ = ctx_.protocol.stall(scope_ + ".m_axi_lite.bvalid", K::valid);
  rnd_m_rvalid_ = ctx_.protocol.stall(scope_ + ".m_axi_lite.rvalid", K::valid);
  r.wait_skip(wait_skip_);
  r.link_wait(link_wait_);
  r.link_wait_left(link_wait_left_);
  SC_THREAD(rtl_thread);
  // Value names for trigger expressions: rtl(A.qp_setup_fsm.state) == CMAC_INIT.
  trace::register_signal_enum("qp_setup_fsm.state", {{"IDLE", 0}, {"REG_CHECK", 1}, {"RES_ALLOC", 2},
                                                     {"CMAC_INIT", 3}, {"READY", 4}});
}

QpSetupFsm::~QpSetupFsm() = default;

void QpSetupFsm::link_changed() {
  const bool up = link_up && link_up();
  const uint64_t now = sc_time_stamp().value();
  if (now != link_change_ps_) {  // the value before this time step's changes
    link_before_ = link_now_;
    link_change_ps_ = now;
  }
  link_now_ = up;
  ctx_.set(v_link_, up);
  link_ev_.notify(SC_ZERO_TIME);
}

bool QpSetupFsm::link_sampled() const {
  return link_change_ps_ < sc_time_stamp().value() ? link_now_ : link_before_;
}

// ------------------------------------------------------------------ host side

uint32_t QpSetupFsm::axil_read(uint32_t off) { return host_access(false, off, 0); }
void QpSetupFsm::axil_write(uint32_t off, uint32_t data) { host_access(true, off, data); }

uint32_t QpSetupFsm::host_access(bool write, uint32_t off, uint32_t data) {
  ctx_.bump();
  if (!cfg_.rtl) {
    // The RTL slave answers in the cycle after the access is presented.
    sc_core::wait(core_.period());
    if (!write) return model_->read(off);
    if (model_->write(off, data)) {  // CMD: a command starts
      qpctrl_shadow_ = model_->read(Q::reg::QPCTRL);
      observed(model_->state(), model_->status(), true);
      cmd_ev_.notify(SC_ZERO_TIME);
    }
    return 0;
  }
  while (host_.active) wait(host_done_);  // the MMIO port performs one access at a time anyway
  host_ = HostOp{};
  host_.active = true;
  host_.write = write;
  host_.off = off;
  host_.data = data;
  wake_.notify(SC_ZERO_TIME);
  while (!host_.done) wait(host_done_);
  const uint32_t v = host_.value;
  host_.active = false;
  host_done_.notify(SC_ZERO_TIME);
  return v;
}

// ------------------------------------------------------------------- the RTL

bool QpSetupFsm::needs_clock() const {
  return (host_.active && !host_.done) || busy_.read() || m_exec_ || b_out_ || r_out_ || s_bvalid_.read() ||
         s_rvalid_.read() || m_awvalid_.read() || m_wvalid_.read() || m_arvalid_.read();
}

void QpSetupFsm::rtl_thread() {
  if (link_change_ps_ == kNoChange) link_now_ = link_before_ = link_up && link_up();
  // Synchronous reset for three cycles from time 0, one more cycle to settle.
  s_bready_.write(true);
  s_rready_.write(true);
  s_wstrb_.write(0xF);
  rst_n_.write(false);
  for (int i = 0; i < 3; ++i) cycle();
  rst_n_.write(true);
  cycle();
  for (;;) {
    if (!cfg_.free_running) {
      const bool link_wait = can_stop_in_link_wait();
      if (link_wait || !needs_clock()) {
        // The clock stops with every VALID low: so is the next edge and every
        // one until it runs again (the monitors hold the last sample).
        monitor::AxilSample idle;
        mon_s_->sample(core_.cycle(), idle);
        mon_m_->sample(core_.cycle(), idle);
      }
      if (link_wait) {
        link_wait_stop();
        continue;
      }
      while (!needs_clock()) {
        wait(wake_);
        core_.sync();
      }
    }
    cycle();
  }
}

void QpSetupFsm::cycle() { cycle_from(sc_time_stamp().value()); }

void QpSetupFsm::cycle_from(uint64_t start_ps) {
  const uint64_t half = core_.period_ps() / 2, now = sc_time_stamp().value();
  wait(ps(start_ps + half - now));
  drive();
  // The inputs of this edge settle (and the RTL's combinational outputs
  // with them): what the edge samples, for the protocol monitors.
  wait(SC_ZERO_TIME);
  wait(SC_ZERO_TIME);
  sample_axil();
  clk_.write(true);
  wait(ps(core_.period_ps() - half));
  clk_.write(false);
  ++cycles_;
  observe();
}

// At a core edge, after observe(): the RTL waits in CMAC_INIT for the link
// only (link_wait), the link it will sample next is down, nothing is in
// flight on either AXI4-Lite port, and at least one edge would only count.
bool QpSetupFsm::can_stop_in_link_wait() const {
  return link_wait_.read() && link_wait_left_.read() >= 1 && !link_now_ && !host_.active && !m_exec_ &&
         !b_out_ && !r_out_ && !s_bvalid_.read() && !s_rvalid_.read() && !m_awvalid_.read() && !m_wvalid_.read() &&
         !m_arvalid_.read();
}

// The clock stops at core edge E0 (the last cycle ended there). Rising
// edges would come at E0 + k * period + half (k = 0, 1, ...); edge k =
// link_wait_left is the timeout edge. Sleep until the link changes or a
// host access comes (the edges whose inputs were sampled before that are
// skipped: their link was down, their inputs idle), or until the timeout
// edge's cycle starts; then give the next edge with wait_skip = edges
// skipped, which the RTL adds to its wait counter.
void QpSetupFsm::link_wait_stop() {
  const uint64_t period = core_.period_ps(), half = period / 2, e0 = sc_time_stamp().value();
  const uint64_t left = link_wait_left_.read();
  wait(ps(left * period), wake_ | link_ev_);
  const uint64_t t = sc_time_stamp().value();
  // Drives at or before t saw the link as it was before t's changes
  // (link_sampled): down, so those edges are the skipped ones.
  uint64_t skipped = t >= e0 + half ? (t - e0 - half) / period + 1 : 0;
  if (skipped > left) skipped = left;  // never past the timeout edge
  if (skipped > 0) {
    wait_skip_.write(uint32_t(skipped));
    cycles_skipped_ += skipped;
  }
  cycle_from(e0 + skipped * period);
}

void QpSetupFsm::drive() {
  // Host: present the access until the edge at which its response is seen.
  bool present = host_.active && !host_.done;
  if (present && !host_.drawn) {  // randomised: the host raises its VALIDs late
    host_.drawn = true;
    host_.aw_hold = host_.write ? rnd_s_awvalid_.hold() : rnd_s_arvalid_.hold();
    host_.w_hold = host_.write ? rnd_s_wvalid_.hold() : 0;
  }
  const bool aw_up = present && host_.aw_hold == 0, w_up = present && host_.w_hold == 0;
  if (present && host_.aw_hold) --host_.aw_hold;
  if (present && host_.w_hold) --host_.w_hold;
  present = present && (aw_up || w_up);
  if (present) host_.presented = true;
  s_awvalid_.write(aw_up && host_.write);
  s_wvalid_.write(w_up && host_.write);
  s_awaddr_.write(host_.off);
  s_wdata_.write(host_.data);
  s_arvalid_.write(aw_up && !host_.write);
  s_araddr_.write(host_.off);
  if (present && host_.write && host_.off == Q::reg::QPCTRL && !busy_.read()) qpctrl_shadow_ = host_.data;
  // Master, as ERNIC's side: responses of earlier accesses; then grant a new
  // one (one at a time) if the arbiter gives the next core cycle.
  const bool b_pending = b_out_, r_pending = r_out_;
  bool bv = b_out_, rv = r_out_;
  if (bv && b_hold_) --b_hold_, bv = false;  // randomised: BVALID / RVALID raised late
  if (rv && r_hold_) --r_hold_, rv = false;
  if (bv && m_bready_.read()) b_out_ = false;
  if (rv && m_rready_.read()) r_out_ = false;
  bool awr = false, arr = false;
  if (!m_exec_ && !b_pending && !r_pending) {
    const uint64_t next = core_.cycle() + 1;
    if (m_awvalid_.read() && m_wvalid_.read()) {
      if (!rnd_m_awready_() && arb_.claim(next)) {
        awr = true;
        m_exec_ = true;
        m_exec_write_ = true;
        m_exec_addr_ = m_awaddr_.read();
        m_exec_data_ = m_wdata_.read();
      }
    } else if (m_arvalid_.read() && !rnd_m_arready_() && arb_.claim(next)) {
      arr = true;
      m_exec_ = true;
      m_exec_write_ = false;
      m_exec_addr_ = m_araddr_.read();
    }
  }
  m_awready_.write(awr);
  m_wready_.write(awr);
  m_bvalid_.write(bv);
  m_bresp_.write(0);
  m_arready_.write(arr);
  m_rvalid_.write(rv);
  m_rdata_.write(r_data_);
  m_rresp_.write(0);
  const bool up = link_sampled();
  cmac_link_up_.write(up);
  ctx_.set(v_link_, up);
}

void QpSetupFsm::sample_axil() {
  const uint64_t k = core_.cycle();  // this rising edge (k x period + period / 2)
  const bool reset = !rst_n_.read();
  monitor::AxilSample s;
  s.reset = reset;
  s.awvalid = s_awvalid_.read(), s.awready = s_awready_.read(), s.awaddr = s_awaddr_.read();
  s.wvalid = s_wvalid_.read(), s.wready = s_wready_.read(), s.wdata = s_wdata_.read(), s.wstrb = s_wstrb_.read();
  s.bvalid = s_bvalid_.read(), s.bready = s_bready_.read(), s.bresp = s_bresp_.read();
  s.arvalid = s_arvalid_.read(), s.arready = s_arready_.read(), s.araddr = s_araddr_.read();
  s.rvalid = s_rvalid_.read(), s.rready = s_rready_.read(), s.rdata = s_rdata_.read(), s.rresp = s_rresp_.read();
  mon_s_->sample(k, s);
  monitor::AxilSample m;
  m.reset = reset;
  m.awvalid = m_awvalid_.read(), m.awready = m_awready_.read(), m.awaddr = m_awaddr_.read();
  m.wvalid = m_wvalid_.read(), m.wready = m_wready_.read(), m.wdata = m_wdata_.read(), m.wstrb = m_wstrb_.read();
  m.bvalid = m_bvalid_.read(), m.bready = m_bready_.read(), m.bresp = m_bresp_.read();
  m.arvalid = m_arvalid_.read(), m.arready = m_arready_.read(), m.araddr = m_araddr_.read();
  m.rvalid = m_rvalid_.read(), m.rready = m_rready_.read(), m.rdata = m_rdata_.read(), m.rresp = m_rresp_.read();
  mon_m_->sample(k, m);
}

void QpSetupFsm::observe() {
  if (wait_skip_.read() != 0) wait_skip_.write(0);  // presented at one edge only
  if (m_exec_) {  // the access granted at the rising edge, on ERNIC's register file
    if (m_exec_write_) {
      arb_.slave().axil_write(m_exec_addr_, m_exec_data_);
      b_out_ = true;
      b_hold_ = rnd_m_bvalid_.hold();
    } else {
      r_data_ = arb_.slave().axil_read(m_exec_addr_);
      r_out_ = true;
      r_hold_ = rnd_m_rvalid_.hold();
    }
    m_exec_ = false;
    ctx_.bump();
  }
  if (host_.presented && !host_.done && (host_.write ? s_bvalid_.read() : s_rvalid_.read())) {
    host_.value = host_.write ? 0 : s_rdata_.read();
    host_.done = true;
    host_done_.notify(SC_ZERO_TIME);
  }
  observed(Q::State(state_sig_.read() & 7), uint8_t(status_sig_.read()), busy_.read());
}

// ----------------------------------------------------------------- the model

struct QpSetupFsm::ModelEnv : Q::QpSetupModel::Env {
  explicit ModelEnv(QpSetupFsm& f) : f(f) {}
  QpSetupFsm& f;
  // Issue at a core edge, granted for the next one (as the RTL), performed
  // there; the response and the next issue take the rest of the access.
  void grant() {
    f.core_.sync();
    while (!f.arb_.claim(f.core_.cycle() + 1)) sc_core::wait(f.core_.period());
    sc_core::wait(f.core_.period());
    f.ctx_.bump();
  }
  uint32_t ernic_read(uint32_t addr) override {
    grant();
    const uint32_t v = f.arb_.slave().axil_read(addr);
    sc_core::wait(f.core_.cycles(kModelAccessCycles - 1));
    return v;
  }
  void ernic_write(uint32_t addr, uint32_t data) override {
    grant();
    f.arb_.slave().axil_write(addr, data);
    sc_core::wait(f.core_.cycles(kModelAccessCycles - 1));
  }
  bool wait_link(uint32_t timeout_cycles) override {
    const uint64_t deadline = sc_time_stamp().value() + uint64_t(timeout_cycles) * f.core_.period_ps();
    for (;;) {
      const bool up = f.link_up && f.link_up();
      f.ctx_.set(f.v_link_, up);
      if (up) return true;
      const uint64_t now = sc_time_stamp().value();
      if (now >= deadline) return false;
      sc_core::wait(ps(deadline - now), f.link_ev_);
    }
  }
  void enter(Q::State s) override {
    f.observed(s, f.model_->status(), f.model_->busy());
    if (s == Q::State::ResAlloc) f.core_.wait_cycles(1);  // the RTL's slot pick (or its first release access)
  }
};

void QpSetupFsm::model_thread() {
  ModelEnv env(*this);
  for (;;) {
    wait(cmd_ev_);
    core_.wait_cycles(1);  // REG_CHECK's cycle
    model_->execute(env);
  }
}

// ------------------------------------------------------------- observation

void QpSetupFsm::observed(Q::State s, uint8_t code, bool busy) {
  const uint16_t qpn = uint16_t(qpctrl_shadow_);
  if (s != state_) {
    state_ = s;
    ctx_.set(v_state_, uint32_t(s));
    if (ctx_.log)
      ctx_.log->state(sc_time_stamp().value(), cfg_.node, "core", core_.cycle(), uint32_t(qpn), "qp_setup_fsm.state",
                      Q::state_name(s));
  }
  ctx_.set(v_busy_, busy);
  if (busy) {
    busy_seen_ = true;
    return;
  }
  if (!busy_seen_) return;
  // A command has ended.
  busy_seen_ = false;
  status_ = code;
  ++commands_;
  ++status_counts_[code];
  ctx_.set(v_status_, code);
  ctx_.set(v_cmds_, commands_);
  const uint8_t op = uint8_t(qpctrl_shadow_ >> 24);
  const std::string what = fmt::format("{} QP{}: status 0x{:02x} ({}), state {}",
                                       op == Q::kOpCreate ? "create" : op == Q::kOpRelease ? "release" : "command",
                                       qpn, code, Q::status_name(code), Q::state_name(s));
  ctx_.event(cfg_.node + ".qp_setup_fsm", what);
  if (ctx_.log)
    ctx_.log->state(sc_time_stamp().value(), cfg_.node, "core", core_.cycle(), uint32_t(qpn), "qp_setup_fsm.status",
                    fmt::format("0x{:02x}", code));
}

}  // namespace ernic
