// model/dma: one of the ERNIC's six AXI4 masters towards host memory
// (PG332 section 8: qp_mgr_m_axi, wqe_proc_top_m_axi, wqe_proc_wr_ddr_m_axi,
// rx_pkt_hndler_ddr_m_axi, rx_pkt_hndler_rdrsp_m_axi, resp_hndler_m_axi),
// at transaction level, in front of the node's PCIe link (model/dma/pcie.h),
// which all six share.
//
// AXI4 side, on the core clock (m_axi_aclk), 512-bit data (64 bytes a beat),
// one ID per master (PG332: 1-bit ID, one used):
//  - a call is cut into bursts at 4 KiB address boundaries (AXI4 forbids a
//    burst crossing one; 4 KiB = 64 beats, under AXI4's 256-beat limit);
//  - at most DmaTiming::outstanding read bursts and as many write bursts of
//    one master are in flight (AR issued, last R beat not yet received /
//    AW issued, B not yet received); a burst waits for a free slot;
//  - one AR a cycle; R data one beat a cycle, in issue order (same ID);
//    W data one beat a cycle; B responses in issue order.
// PCIe side (the bridge): a read burst becomes read requests (MRd, cut at
// MRRS-aligned addresses), sent up; the host answers read_latency_ns after
// each request left with completions (cut at MPS and the RCB), sent down;
// R beats follow each completion. A write burst becomes MWr TLPs (cut at
// MPS-aligned addresses), each sent up as soon as its W beats are in; the B
// response comes when the burst's last TLP has left (posted: the host sends
// no response; the bridge answers B then).
//
// The calls are blocking, as the ERNIC model uses them:
//  - read(): returns when the last R beat is in; the data is taken from
//    memory then. The bursts of one call overlap up to the outstanding
//    limit, so a long read streams at the link's rate.
//    with_latency = false: a read that continues an earlier one whose
//    requests the master issued ahead (prefetch): the read latency is not
//    paid again, the link time is.
//  - write(): returns with the B response of its last burst; the data is in
//    host memory from then. So writes of one master land in issue order,
//    and anything a caller does after write() returns (a CQE write on
//    another master, a sideband doorbell) comes after the data.
// An access outside host memory is an AXI DECERR: nothing is read or
// written, the call returns false, and the error is counted.
// Everything is computed from simulated time and call order only:
// deterministic.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "model/dma/pcie.h"
#include "model/host/host_memory.h"
#include "model/sim/clock.h"
#include "model/sim/instant_order.h"
#include "model/sim/sim_context.h"

namespace ernic {

struct DmaTiming {
  uint32_t bytes_per_beat = 64;  // 512-bit AXI4 data bus (PG332 3.1)
  // Bursts in flight per master and direction (assumption A-DMA-3): PG332
  // gives no figure; 8 covers the read round trip at Gen3/Gen4 rates
  // (8 x 4 KiB in flight against 500 ns x 15.75 B/ns = 7.9 KB).
  uint32_t outstanding = 8;
  PcieParams pcie;               // the link's parameters (a private link when `link` is null)
  PcieLink* link = nullptr;      // the node's link, shared by its masters and its MMIO
  // Who uses the shared link first when several ask at one instant
  // (model/sim/instant_order.h; null: one requester, no arbitration).
  InstantOrder* order = nullptr;
  // A completed transfer is progress (the watchdog's): not for a poller
  // whose reads are progress only when they find something (shadow_db).
  bool progress = true;
  // The formula of model/dma/pcie.h (kept for callers of the first model).
  static double pcie_rate(uint32_t gen, uint32_t lanes, uint32_t mps) {
    PcieParams p;
    p.gen = gen;
    p.lanes = lanes;
    return p.payload_rate(mps);
  }
};

// A requester's rank on a node's PCIe link among those that ask at the
// same instant (InstantOrder): the host's MMIO (requests by issuing thread:
// the steps' and a bridge host's, then the interrupt thread's; then read
// completions), then the ERNIC's masters in
// PG332's order (section 8), then the extensions' (assumption A-DMA-6:
// PG332 names no arbitration; any fixed order serves determinism).
inline uint32_t pcie_rank(const std::string& requester) {
  static const char* const kOrder[] = {"mmio_request_irq", "mmio_request", "mmio_completion", "qp_mgr_m_axi",
                                       "wqe_proc_top_m_axi",
                                       "wqe_proc_wr_ddr_m_axi", "rx_pkt_hndler_ddr_m_axi", "rx_pkt_hndler_rdrsp_m_axi",
                                       "resp_hndler_m_axi", "qp_ctx_m_axi", "mr_cache_m_axi", "shadow_db_m_axi"};
  for (uint32_t i = 0; i < sizeof kOrder / sizeof kOrder[0]; ++i)
    if (requester == kOrder[i]) return i;
  return sizeof kOrder / sizeof kOrder[0];
}
// An MMIO request's rank by its issuer (AxiLitePort::read/write): 0 the
// scenario's steps or a bridge's host program, 1 the built-in host's
// interrupt thread (model/host/sc_host.h).
inline uint32_t pcie_mmio_request_rank(uint32_t issuer) {
  return issuer == 1 ? pcie_rank("mmio_request_irq") : pcie_rank("mmio_request");
}

class Dma {
 public:
  // A read DECERR is a model error (it fails the run) unless the caller
  // handles it as the IP does: ERNIC's WQE fetch and payload reads make the
  // QP fatal with code 0x05 instead (then only a run event names it).
  bool read_decerr_is_model_error = true;
  // scope: "top.<node>.ernic.<master>"; node and master name the log records.
  Dma(const ClockDomain& clk, HostMemory& mem, SimContext& ctx, const std::string& scope, const std::string& node,
      const std::string& master, DmaTiming t = {})
      : clk_(clk), mem_(mem), ctx_(ctx), t_(t), node_(node), master_(master), rank_(pcie_rank(master)) {
    if (!t_.link) {
      own_link_ = std::make_unique<PcieLink>(t_.pcie);
      t_.link = own_link_.get();
    }
    if (t_.outstanding == 0) t_.outstanding = 1;
    v_rd_ = ctx.var(scope, "rd_busy", 1);
    v_rd_addr_ = ctx.var(scope, "rd_addr", 64);
    v_rd_out_ = ctx.var(scope, "rd_outstanding", 8);
    v_wr_ = ctx.var(scope, "wr_busy", 1);
    v_wr_addr_ = ctx.var(scope, "wr_addr", 64);
    v_wr_out_ = ctx.var(scope, "wr_outstanding", 8);
    v_rd_len_ = ctx.var(scope, "rd_len", 32);
    v_wr_len_ = ctx.var(scope, "wr_len", 32);
    v_rd_resp_ = ctx.var(scope, "rd_resp", 32);  // reads whose data has all arrived
    v_wr_resp_ = ctx.var(scope, "wr_resp", 32);  // writes whose data has all been accepted
  }
  Dma(const Dma&) = delete;
  Dma& operator=(const Dma&) = delete;

  static constexpr uint64_t kIssuedNow = ~uint64_t(0);
  // Timed read. with_latency=false models a prefetched/streaming burst that
  // continues an earlier one (only the beats cost time). issued_ps: the
  // request left earlier (a read issued ahead, e.g. with a prefetched WQE),
  // so only what is left of the latency is waited.
  bool read(uint64_t addr, uint8_t* dst, uint64_t len, bool with_latency = true,
            std::optional<uint32_t> qp = std::nullopt, uint64_t issued_ps = kIssuedNow) {
    clk_.sync();
    const PcieParams& p = params();
    const DmaPlan plan = plan_dma(p, addr, len, false);
    if (ctx_.log)
      ctx_.log->dma(ClockDomain::now_ps(), node_, "core", clk_.cycle(), qp, master_.c_str(), false, addr, len,
                    plan.bursts, plan.requests, plan.completions);
    ctx_.set(v_rd_, 1);
    ctx_.set(v_rd_addr_, addr);
    ctx_.set(v_rd_len_, len);
    uint64_t lat = with_latency ? uint64_t(p.read_latency_ns) * 1000 : 0;
    // A read issued ahead (issued_ps): the time since then is latency already spent.
    if (issued_ps != kIssuedNow && issued_ps < ClockDomain::now_ps())
      lat -= std::min(lat, ClockDomain::now_ps() - issued_ps);
    const uint64_t per = clk_.period_ps();
    uint64_t done = ClockDomain::now_ps();
    for_each_aligned(addr, len, k4KiB, [&](const Span& b) {
      slot(rd_q_, v_rd_out_);
      const InstantOrder::Turn turn(t_.order, rank_);  // the burst's TLPs are booked without a wait
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t ar = std::max(edge(now), ar_free_);
      ar_free_ = ar + per;
      for_each_aligned(b.addr, b.len, p.mrrs, [&](const Span& r) {
        const uint64_t req_end = t_.link->send(PcieLink::kUp, ar, 0, now);
        const uint64_t avail = req_end + lat;
        for_each_completion(r.addr, r.len, p.mps, p.rcb, [&](const Span& c) {
          const uint64_t cpl_end = t_.link->send(PcieLink::kDown, avail, c.len, now);
          // Cut-through: a completion's beats go onto the AXI bus as it
          // arrives; the bus is done with it one beat-time after the bus is
          // free, and not before the TLP's last byte is in (A-DMA-4).
          r_free_ = std::max(r_free_ + beats(c.addr, c.len) * per, edge(cpl_end) + per);
        });
        ++read_requests_;
      });
      ++read_bursts_;
      rd_q_.push_back(r_free_);
      ctx_.set(v_rd_out_, rd_q_.size());
      done = r_free_;
    });
    read_completions_ += plan.completions;
    wait_until(done);
    ctx_.set(v_rd_, 0);
    ctx_.set(v_rd_resp_, ++rd_resps_);
    if (t_.progress) ctx_.bump();
    bytes_read_ += len;
    if (!mem_.in_range(addr, len)) {
      ++errors_;
      if (read_decerr_is_model_error)
        ctx_.error("dma", "read outside host memory at 0x" + hex(addr));
      else
        ctx_.event(node_ + "." + master_, "read outside host memory at 0x" + hex(addr) + " (AXI DECERR)");
      return false;
    }
    {
      // Host memory at one instant in a fixed order (a read and a write of the same bytes, as the masters
      // rank (A-DMA-6), not as the kernel runs them: tb/data/split/d1; about 3 % more instructions a run).
      const InstantOrder::Turn turn(t_.order, rank_);
      mem_.read(addr, dst, len);
    }
    return true;
  }

  bool write(uint64_t addr, const uint8_t* src, uint64_t len, std::optional<uint32_t> qp = std::nullopt) {
    clk_.sync();
    const PcieParams& p = params();
    const DmaPlan plan = plan_dma(p, addr, len, true);
    if (ctx_.log)
      ctx_.log->dma(ClockDomain::now_ps(), node_, "core", clk_.cycle(), qp, master_.c_str(), true, addr, len,
                    plan.bursts, plan.requests, -1);
    ctx_.set(v_wr_, 1);
    ctx_.set(v_wr_addr_, addr);
    ctx_.set(v_wr_len_, len);
    const uint64_t per = clk_.period_ps();
    uint64_t done = ClockDomain::now_ps();
    for_each_aligned(addr, len, k4KiB, [&](const Span& b) {
      slot(wr_q_, v_wr_out_);
      const InstantOrder::Turn turn(t_.order, rank_);  // the burst's TLPs are booked without a wait
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t w0 = std::max(edge(now), w_free_);  // AW and the first W beat
      uint64_t last = w0;
      for_each_aligned(b.addr, b.len, p.mps, [&](const Span& t) {
        // The TLP is ready once its last W beat is in.
        const uint64_t ready = w0 + beats(b.addr, t.addr + t.len - b.addr) * per;
        last = t_.link->send(PcieLink::kUp, ready, t.len, now);
        ++write_tlps_;
      });
      w_free_ = w0 + beats(b.addr, b.len) * per;
      b_last_ = std::max(b_last_, edge(last));  // B responses in order
      ++write_bursts_;
      wr_q_.push_back(b_last_);
      ctx_.set(v_wr_out_, wr_q_.size());
      // Posted (AXI4): the master goes on once its W beats are accepted; the
      // B response (b_last_) only bounds the bursts in flight (A-DMA-5). The
      // link carries writes in issue order, so they land in order.
      done = w_free_;
    });
    wait_until(done);
    ctx_.set(v_wr_, 0);
    ctx_.set(v_wr_resp_, ++wr_resps_);
    if (t_.progress) ctx_.bump();
    bytes_written_ += len;
    if (!mem_.in_range(addr, len)) {
      ++errors_;
      ctx_.error("dma", "write outside host memory at 0x" + hex(addr));
      return false;
    }
    {
      const InstantOrder::Turn turn(t_.order, rank_);
      mem_.write(addr, src, len);
    }
    return true;
  }
  // When the last write issued so far has left on the link (its B response).
  uint64_t writes_done_ps() const { return b_last_; }
  bool write32(uint64_t addr, uint32_t v, std::optional<uint32_t> qp = std::nullopt) {
    uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    return write(addr, b, 4, qp);
  }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t errors() const { return errors_; }
  // AXI bursts and PCIe TLPs this master caused.
  uint64_t read_bursts() const { return read_bursts_; }
  uint64_t read_requests() const { return read_requests_; }
  uint64_t read_completions() const { return read_completions_; }
  uint64_t write_bursts() const { return write_bursts_; }
  uint64_t write_tlps() const { return write_tlps_; }
  const PcieParams& params() const { return t_.link->params(); }
  PcieLink& link() { return *t_.link; }

 private:
  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", (unsigned long long)v);
    return b;
  }
  // Beats of `len` bytes from `addr` on the 512-bit bus.
  uint64_t beats(uint64_t addr, uint64_t len) const {
    const uint64_t bpb = t_.bytes_per_beat;
    return len ? ((addr % bpb) + len + bpb - 1) / bpb : 0;
  }
  uint64_t edge(uint64_t t) const {
    const uint64_t per = clk_.period_ps();
    return (t + per - 1) / per * per;
  }
  void wait_until(uint64_t t) const {
    const uint64_t now = ClockDomain::now_ps();
    if (t > now) sc_core::wait(ps(t - now));
    clk_.sync();
  }
  // Waits until fewer than `outstanding` bursts are in flight in q (end times, ascending).
  void slot(std::deque<uint64_t>& q, int var) {
    for (;;) {
      const uint64_t now = ClockDomain::now_ps();
      while (!q.empty() && q.front() <= now) q.pop_front();
      ctx_.set(var, q.size());
      if (q.size() < t_.outstanding) return;
      sc_core::wait(ps(q.front() - now));
    }
  }
  const ClockDomain& clk_;
  HostMemory& mem_;
  SimContext& ctx_;
  DmaTiming t_;
  std::unique_ptr<PcieLink> own_link_;
  std::string node_, master_;
  uint32_t rank_;
  uint64_t bytes_read_ = 0, bytes_written_ = 0, errors_ = 0;
  uint64_t read_bursts_ = 0, read_requests_ = 0, read_completions_ = 0, write_bursts_ = 0, write_tlps_ = 0;
  uint64_t ar_free_ = 0, r_free_ = 0, w_free_ = 0, b_last_ = 0;  // channel times (ps)
  std::deque<uint64_t> rd_q_, wr_q_;                              // bursts in flight: when each ends
  int v_rd_, v_rd_addr_, v_rd_out_, v_wr_, v_wr_addr_, v_wr_out_;
  int v_rd_len_ = -1, v_wr_len_ = -1, v_rd_resp_ = -1, v_wr_resp_ = -1;  // waveform only
  uint32_t rd_resps_ = 0, wr_resps_ = 0;
};

}  // namespace ernic
