// model/datapath/sc: the `rtl` datapath (see rtl_datapath.h): construction,
// the protocol monitors on the top's ports, the ERNIC and CMAC models'
// input (tx, cmac_rx), the scoreboard's reports. The core domain's clock
// and ports in rtl_datapath_core.cpp, the CMAC domain's in
// rtl_datapath_cmac.cpp.
#include "model/datapath/sc/rtl_datapath.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "Vroce_datapath.h"
#include "Vroce_datapath___024root.h"
#include "model/datapath/sc/rtl_datapath_bind.h"
#include "model/datapath/roce_rx_ref.h"
#include "model/datapath/roce_tx_ref.h"

namespace ernic {

using namespace sc_core;

RtlDatapath::RtlDatapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                         const std::string& scope, const DatapathConfig& cfg, const RoceDatapathBinder& bind,
                         std::string kind)
    : RoceDatapath(name, core, cmac, ctx, scope, cfg), kind_(std::move(kind)) {
  top_ = bind((std::string(this->name()) + ".rtl").c_str(), p_);
  using R = monitor::AxisRules;
  auto axis = [&](const char* bus, const ClockDomain& clk, const R& r) {
    return Watch{&ctx.protocol.axis(scope + "." + bus, clk.name(), clk.period_ps(), r)};
  };
  w_s_desc_ = axis("s_desc", core, R::descriptor(seam::kTxdBits, /*has_ready=*/true));
  w_s_pay_ = axis("s_pay", core, R::seam(/*has_ready=*/true, /*no_bubble=*/false));
  w_m_desc_ = axis("m_desc", core, R::descriptor(seam::kRxdBits, /*has_ready=*/false));
  w_m_pay_ = axis("m_pay", core, R::seam(false, false));
  w_m_byp_ = axis("m_byp", core, R::seam(false, false));
  w_m_cmac_ = axis("m_cmac", cmac, R::seam(true, /*no_bubble=*/true));
  w_s_cmac_ = axis("s_cmac", cmac, R::seam(/*has_ready=*/false, false));
  using K = monitor::HandshakeRandomizer::Kind;
  rnd_s_desc_valid_ = ctx.protocol.stall(scope + ".s_desc.valid", K::valid);
  rnd_s_pay_valid_ = ctx.protocol.stall(scope + ".s_pay.tvalid", K::valid);
  rnd_m_cmac_ready_ = ctx.protocol.stall(scope + ".m_cmac.tready", K::ready);
  rnd_s_cmac_valid_ = ctx.protocol.stall(scope + ".s_cmac.tvalid", K::valid);
  // Statically sensitive (a timed notification of edge_ev_ per edge): no
  // dynamic sensitivity to build and tear down at every edge, and an edge
  // still pending when wake_ev_ comes first stays valid instead of leaving
  // a cancelled timeout in the kernel's queue.
  SC_METHOD(edges);
  sensitive << edge_ev_ << wake_ev_;
}

// ---------------------------------------------------------------- clocks

void RtlDatapath::start() {
  // Time 0: every input 0 (as Verilator's reset values only are while
  // Verilated::randReset is 0), both resets asserted, the constant inputs;
  // the first rising edges at half a period.
  for (auto* b : {&p_.core_clk, &p_.cmac_clk, &p_.s_desc_valid, &p_.s_pay_tvalid, &p_.s_pay_tlast, &p_.m_cmac_tready,
                  &p_.s_cmac_tvalid, &p_.s_cmac_tlast, &p_.s_cmac_tuser})
    b->write(0);
  for (auto& w : p_.s_desc_w) w.write(0);
  for (auto& w : p_.s_pay_tdata_w) w.write(0);
  for (auto& w : p_.s_cmac_tdata_w) w.write(0);
  p_.s_pay_tkeep.write(0);
  p_.s_cmac_tkeep.write(0);
  p_.cfg_udp_sport.write(0);
  p_.core_rst_n.write(false);
  p_.cmac_rst_n.write(false);
  p_.seed.write(uint32_t(cfg_.seed ^ (cfg_.seed >> 32)));
  top_.eval();
  defer_ = !traced_ && ctx_.vcd == nullptr;
  // Not a user's top: its seam may drive a ready or an output from an
  // input combinationally (AXI4-Stream allows it; rtl/SEAM.md), which the
  // C++ reads before the next rising edge.
  fold_ = defer_ && top_.fell != nullptr && kind_ == "rtl";
  core_next_ps_ = core_.period_ps() / 2;
  cmac_next_ps_ = cmac_.period_ps() / 2;
}

uint64_t RtlDatapath::next_rise(uint64_t now, uint64_t period) {
  const uint64_t H = period / 2, r = now % period;
  return r <= H ? now - r + H : now - r + period + H;
}

void RtlDatapath::edges() {
  const uint64_t now = ClockDomain::now_ps();
  if (!started_) {
    started_ = true;
    start();
    arm(now);
    return;
  }
  // A clock woken by new input resumes at its next rising edge (now, if on
  // one), from the delta after the wake (wake_ev_), whichever process ran
  // first in the delta of the wake.
  owed_edges(now);
  const bool woken = wake_ev_.triggered();
  if (woken && core_idle_ && core_woken_) {
    core_idle_ = false;
    core_rise_next_ = true;
    core_next_ps_ = next_rise(now, core_.period_ps());
  }
  if (woken && cmac_idle_ && cmac_woken_) {
    cmac_idle_ = false;
    cmac_rise_next_ = true;
    cmac_next_ps_ = next_rise(now, cmac_.period_ps());
  }
  if (woken) core_woken_ = cmac_woken_ = false;
  const bool core_due = !core_idle_ && core_next_ps_ == now;
  const bool cmac_due = !cmac_idle_ && cmac_next_ps_ == now;
  const bool core_model = core_due && !core_rise_next_, cmac_model = cmac_due && !cmac_rise_next_;
  // Both domains' work reads the ports as they stand and writes inputs of
  // its own domain only; then one evaluation takes every edge of the instant.
  if (core_due) core_model ? core_model_edge() : core_rise(now);
  if (cmac_due) cmac_model ? cmac_model_edge() : cmac_rise(now);
  if (core_due || cmac_due) evaluate(core_due && !core_model, cmac_due && !cmac_model);
  if (core_model) core_gate(now);
  if (cmac_model) cmac_gate(now);
  // A rising edge whose model edge will be quiet: that edge is owed, and
  // the clock's next activation is the rising edge after it.
  if (defer_ && core_due && !core_model && core_quiet()) {
    core_owed_ = true;
    core_owed_ps_ = core_next_ps_;
    core_next_ps_ += core_.period_ps() / 2;
  }
  if (defer_ && cmac_due && !cmac_model && cmac_quiet()) {
    cmac_owed_ = true;
    cmac_owed_ps_ = cmac_next_ps_;
    cmac_next_ps_ += cmac_.period_ps() / 2;
  }
  arm(now);
}

// The top evaluated for this instant's edges (rising: the clocks with a
// rising edge now). With no waveform, a model edge alone is not evaluated
// (fold_): its inputs and its clock's fall wait for the next rising edge's
// eval, which takes them as they stand, as an eval at the model edge
// would have left them (nothing reads an output between the two that an
// input drives: the ports read are registered or the model's own);
// `fell` tells the top that the rising clocks went low in between.
void RtlDatapath::evaluate(bool core_rising, bool cmac_rising) {
  if (fold_) {
    if (!core_rising && !cmac_rising) return;
    top_.fell(core_rising, cmac_rising);
  }
  top_.eval();
}

// An owed model edge due now is this instant's model edge, as if it had not
// been owed; one whose time has passed is done first, as it would have been
// then (nothing was evaluated since: the top and the ports stand as then),
// with one evaluation for both domains' (their inputs are their own).
void RtlDatapath::owed_edges(uint64_t now) {
  if (core_owed_ && core_owed_ps_ == now) {
    core_owed_ = false;
    core_next_ps_ = now;
  }
  if (cmac_owed_ && cmac_owed_ps_ == now) {
    cmac_owed_ = false;
    cmac_next_ps_ = now;
  }
  const bool core = core_owed_ && core_owed_ps_ < now, cmac = cmac_owed_ && cmac_owed_ps_ < now;
  if (!core && !cmac) return;
  if (core) core_model_edge();
  if (cmac) cmac_model_edge();
  evaluate(false, false);
  if (core) {
    core_owed_ = false;
    core_gate(core_owed_ps_);
  }
  if (cmac) {
    cmac_owed_ = false;
    cmac_gate(cmac_owed_ps_);
  }
}

// After a core rising edge's evaluation. The model edge reads the outputs
// as they stand now (only a core edge changes roce_rx's registered
// outputs); it delivers nothing and keeps the clock running whatever else
// happens at its instant: a queued descriptor or payload leaves only at a
// rising edge, and a received frame in flight only at a model edge that
// delivers it.
bool RtlDatapath::core_quiet() const {
  const bool busy = core_reset_ || !txd_q_.empty() || !pay_q_.empty() || rx_in_flight_ || !cfg_.idle_skip;
  if (!busy || p_.m_desc_valid.read()) return false;
  if (p_.m_pay_tvalid.read() && p_.m_pay_tlast.read()) return false;
  if (p_.m_byp_tvalid.read() && p_.m_byp_tlast.read()) return false;
  return rx_desc_wait_.empty() || (rx_desc_wait_.front().payload_len != 0 && rx_pay_done_.empty());
}

// After a CMAC rising edge's evaluation: no head shows at the model edge
// (none waits either, so the CMAC model takes no frame before it), it draws
// no randomised tready (a draw counts a stall in the report even if the run
// ends before the edge is done), and the clock runs on: a queued received
// beat or a frame being taken leaves only at a CMAC rising edge.
bool RtlDatapath::cmac_quiet() const {
  const bool busy = cmac_reset_ || !rx_q_.empty() || take_.active || tx_in_flight_ || !cfg_.idle_skip;
  const bool draws = rnd_m_cmac_ready_ && take_.active && !take_.hold && !take_.done;
  return busy && !draws && !head_valid_ && (take_.active || !p_.m_cmac_tvalid.read());
}

void RtlDatapath::arm(uint64_t now) {
  uint64_t next = ~uint64_t(0);
  if (!core_idle_) next = core_next_ps_;
  if (!cmac_idle_) next = std::min(next, cmac_next_ps_);
  // An earlier pending notification stays (an activation with no edge due
  // does nothing but arm again).
  if (next != ~uint64_t(0)) edge_ev_.notify(sc_time::from_value(next - now));
}

// ------------------------------------------------------------- monitors

void RtlDatapath::watch(Watch& w, uint64_t edge, bool reset, bool valid, bool ready, bool last, uint64_t keep,
                        uint64_t user, const Port<uint64_t>* words, int n) {
  if (!valid && !reset && w.idle) return;  // still idle: the monitor holds it
  monitor::AxisSample s;
  s.reset = reset;
  s.valid = valid;
  s.ready = ready;
  s.last = last;
  s.keep = keep;
  s.user = user;
  std::array<uint64_t, 16> d;
  if (valid) {
    for (int i = 0; i < n; ++i) d[size_t(i)] = words[i].read();
    s.data = d.data();
  }
  w.mon->sample(edge, s);
  w.idle = !valid && !reset;
}

void RtlDatapath::watch_idle(Watch& w, uint64_t edge) {
  if (w.idle) return;
  w.mon->sample(edge, monitor::AxisSample{});
  w.idle = true;
}

// The core ports at the rising edge `edge`, as they stand.
void RtlDatapath::watch_core(uint64_t edge) {
  const bool r = !p_.core_rst_n.read();
  watch(w_s_desc_, edge, r, p_.s_desc_valid.read(), p_.s_desc_ready.read(), true, ~uint64_t(0), 0, p_.s_desc_w, 12);
  watch(w_s_pay_, edge, r, p_.s_pay_tvalid.read(), p_.s_pay_tready.read(), p_.s_pay_tlast.read(),
        p_.s_pay_tkeep.read(), 0, p_.s_pay_tdata_w, 8);
  watch(w_m_desc_, edge, r, p_.m_desc_valid.read(), true, true, ~uint64_t(0), 0, p_.m_desc_w, 16);
  watch(w_m_pay_, edge, r, p_.m_pay_tvalid.read(), true, p_.m_pay_tlast.read(), p_.m_pay_tkeep.read(), 0,
        p_.m_pay_tdata_w, 8);
  watch(w_m_byp_, edge, r, p_.m_byp_tvalid.read(), true, p_.m_byp_tlast.read(), p_.m_byp_tkeep.read(), 0,
        p_.m_byp_tdata_w, 8);
}

void RtlDatapath::watch_cmac(uint64_t edge) {
  const bool r = !p_.cmac_rst_n.read();
  watch(w_m_cmac_, edge, r, p_.m_cmac_tvalid.read(), p_.m_cmac_tready.read(), p_.m_cmac_tlast.read(),
        p_.m_cmac_tkeep.read(), 0, p_.m_cmac_tdata_w, 8);
  watch(w_s_cmac_, edge, r, p_.s_cmac_tvalid.read(), true, p_.s_cmac_tlast.read(), p_.s_cmac_tkeep.read(),
        p_.s_cmac_tuser.read(), p_.s_cmac_tdata_w, 8);
}

RtlDatapath::~RtlDatapath() = default;

void RtlDatapath::trace(VerilatedVcdSc* t, int levels) {
  if (top_.trace) top_.trace(t, levels);
  traced_ = true;
}

const DatapathStats& RtlDatapath::stats() const {
  // An owed CMAC model edge reads meta_events; nothing was evaluated since.
  if (cmac_owed_ && cmac_owed_ps_ <= ClockDomain::now_ps())
    const_cast<DatapathStats&>(stats_).meta_events = p_.meta_events.read();
  return stats_;
}

bool RtlDatapath::in_flight() const {
  return tx_in_flight_ || rx_in_flight_ || !txd_q_.empty() || !pay_q_.empty() || !rx_q_.empty() || take_.active;
}

void RtlDatapath::wake() {
  // Both clocks: a frame in flight needs the two sides of its FIFO.
  if (core_idle_) core_woken_ = true;
  if (cmac_idle_) cmac_woken_ = true;
  if (core_idle_ || cmac_idle_) wake_ev_.notify(SC_ZERO_TIME);
}

void RtlDatapath::tx(const seam::TxDesc& d, roce::Bytes payload) {
  const uint64_t now = ClockDomain::now_ps();
  const uint16_t sp = sport();
  // The reference frame for the scoreboard (the FIFO keeps the order).
  tx_exp_.push_back(seam::tx_frame(d, payload, sp));
  const uint64_t seq = ++desc_seq_;
  txd_q_.push_back({now, seam::pack(d), sp, {}, seq});
  if (!payload.empty()) pay_q_.push_back({now, std::move(payload), 0});
  ++tx_in_flight_;
  ++stats_.tx_frames;
  wake();
  while (desc_taken_ < seq) wait(desc_ev_);
  core_.sync();
}

void RtlDatapath::cmac_rx(FrameBytes f, uint64_t start_ps) {
  // The reference outputs for the scoreboard, in order per stream.
  seam::RxOutput o = seam::roce_rx_ref(f, false);
  RxExp e{o.bypass, o.desc, std::move(o.payload), {}};
  if (o.bypass) {
    e.frame = f;
    byp_exp_.push_back(std::move(e));
  } else {
    rx_exp_.push_back(std::move(e));
  }
  rx_q_.push_back({ClockDomain::now_ps(), start_ps, std::move(f), 0});
  ++rx_in_flight_;
  ++stats_.rx_in;
  wake();
}

const DatapathCorrupt* RtlDatapath::corruption(const char* stream, uint64_t index) const {
  for (const auto& c : cfg_.corrupt)
    if (c.stream == stream && c.frame == index) return &c;
  return nullptr;
}

void RtlDatapath::mismatch(const std::string& what, bool core_domain) {
  ++stats_.mismatches;
  if (reported_) return;  // the first difference is the run error; the rest are counted
  reported_ = true;
  ctx_.error(scope_ + ".scoreboard",
             fmt::format("RTL datapath ({}) vs reference model, node {}: {} at {} cycle {}", kind_, cfg_.node, what,
                         core_domain ? "core" : "CMAC", core_domain ? core_.cycle() : cmac_.cycle()));
}

std::string RtlDatapath::status() const {
  if (!in_flight()) return {};
  return fmt::format("datapath {}: {} TX frame(s) in flight ({} descriptor(s) queued), {} RX frame(s) in flight; "
                     "clocks {} / {} edges",
                     kind_, tx_in_flight_, txd_q_.size(), rx_in_flight_, stats_.core_cycles_clocked,
                     stats_.cmac_cycles_clocked);
}

std::unique_ptr<RoceDatapath> make_rtl_datapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac,
                                            SimContext& ctx, const std::string& scope, const DatapathConfig& cfg) {
  return std::make_unique<RtlDatapath>(name, core, cmac, ctx, scope, cfg, &bind_roce_datapath<Vroce_datapath>,
                                       "rtl");
}

}  // namespace ernic
