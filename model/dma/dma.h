// model/dma: the ERNIC's AXI4 masters towards host memory, at transaction
// level for the walking skeleton (PG332 names six masters; issue 5 splits
// them and puts a PCIe link model behind them).
// Timing, on the core clock, 512-bit data (64 bytes a beat):
//   read:  read_latency_cycles (request to first data: PCIe read round
//          trip) + ceil(len / 64) beats; the data is taken from memory at
//          the end;
//   write: ceil(len / 64) beats; the write is posted, so the data becomes
//          visible in host memory when its last beat is issued and the
//          caller does not wait for a response (AXI4 ordering: writes from
//          one master land in issue order).
// An access outside host memory is an AXI DECERR: nothing is read or
// written, the call returns false, and the error is counted.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "model/host/host_memory.h"
#include "model/system/clock.h"
#include "model/system/sim_context.h"

namespace ernic {

struct DmaTiming {
  uint32_t read_latency_cycles = 100;  // 500 ns at 200 MHz (assumption A-DMA-1)
  uint32_t bytes_per_beat = 64;        // 512-bit AXI4 data bus (PG332 3.1)
  // PCIe cap on throughput (assumption A-PCIE-1), bytes per ns; 0 = none.
  double pcie_bytes_per_ns = 0;
  // lanes x GT/s x 128/130 / 8 x MPS / (MPS + 24): the payload rate of a
  // PCIe Gen3/Gen4 link carrying MPS-byte TLPs with 24 bytes of overhead.
  static double pcie_rate(uint32_t gen, uint32_t lanes, uint32_t mps) {
    const double gts = gen >= 4 ? 16.0 : 8.0;
    return lanes * gts * (128.0 / 130.0) / 8.0 * double(mps) / double(mps + 24);
  }
};

class Dma {
 public:
  // scope: "top.<node>.ernic.<master>"; node and master name the log records.
  Dma(const ClockDomain& clk, HostMemory& mem, SimContext& ctx, const std::string& scope, const std::string& node,
      const std::string& master, DmaTiming t = {})
      : clk_(clk), mem_(mem), ctx_(ctx), t_(t), node_(node), master_(master) {
    v_rd_ = ctx.var(scope, "rd_busy", 1);
    v_rd_addr_ = ctx.var(scope, "rd_addr", 64);
    v_wr_ = ctx.var(scope, "wr_busy", 1);
    v_wr_addr_ = ctx.var(scope, "wr_addr", 64);
  }
  // Cycles to move len bytes: one beat a cycle, or slower when PCIe caps it.
  uint64_t beats(uint64_t len) const {
    uint64_t b = (len + t_.bytes_per_beat - 1) / t_.bytes_per_beat;
    if (t_.pcie_bytes_per_ns > 0) {
      const double ns = double(len) / t_.pcie_bytes_per_ns;
      const uint64_t c = uint64_t(std::ceil(ns * 1000.0 / double(clk_.period_ps())));
      if (c > b) b = c;
    }
    return b;
  }

  static constexpr uint64_t kIssuedNow = ~uint64_t(0);
  // Timed read. with_latency=false models a prefetched/streaming burst that
  // continues an earlier one (only the beats cost time). issued_ps: the
  // request left earlier (a read issued ahead, e.g. with a prefetched WQE),
  // so only what is left of the latency is waited.
  bool read(uint64_t addr, uint8_t* dst, uint64_t len, bool with_latency = true,
            std::optional<uint32_t> qp = std::nullopt, uint64_t issued_ps = kIssuedNow) {
    clk_.sync();
    if (ctx_.log) ctx_.log->dma(ClockDomain::now_ps(), node_, "core", clk_.cycle(), qp, master_.c_str(), false, addr, len);
    ctx_.set(v_rd_, 1);
    ctx_.set(v_rd_addr_, addr);
    uint64_t n = beats(len);
    if (with_latency) {
      const uint64_t now = ClockDomain::now_ps();
      const uint64_t from = issued_ps == kIssuedNow ? now : std::min(issued_ps, now);
      const uint64_t end = from + uint64_t(t_.read_latency_cycles) * clk_.period_ps();
      n += end > now ? clk_.cycles_for_ps(end - now) : 0;
    }
    if (n) sc_core::wait(clk_.cycles(n));
    ctx_.set(v_rd_, 0);
    ctx_.bump();
    bytes_read_ += len;
    if (!mem_.in_range(addr, len)) {
      ++errors_;
      ctx_.error("dma", "read outside host memory at 0x" + hex(addr));
      return false;
    }
    mem_.read(addr, dst, len);
    return true;
  }
  bool write(uint64_t addr, const uint8_t* src, uint64_t len, std::optional<uint32_t> qp = std::nullopt) {
    clk_.sync();
    if (ctx_.log) ctx_.log->dma(ClockDomain::now_ps(), node_, "core", clk_.cycle(), qp, master_.c_str(), true, addr, len);
    ctx_.set(v_wr_, 1);
    ctx_.set(v_wr_addr_, addr);
    uint64_t n = beats(len);
    if (n) sc_core::wait(clk_.cycles(n));
    ctx_.set(v_wr_, 0);
    ctx_.bump();
    bytes_written_ += len;
    if (!mem_.in_range(addr, len)) {
      ++errors_;
      ctx_.error("dma", "write outside host memory at 0x" + hex(addr));
      return false;
    }
    mem_.write(addr, src, len);
    return true;
  }
  bool write32(uint64_t addr, uint32_t v, std::optional<uint32_t> qp = std::nullopt) {
    uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    return write(addr, b, 4, qp);
  }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t errors() const { return errors_; }

 private:
  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", (unsigned long long)v);
    return b;
  }
  const ClockDomain& clk_;
  HostMemory& mem_;
  SimContext& ctx_;
  DmaTiming t_;
  std::string node_, master_;
  uint64_t bytes_read_ = 0, bytes_written_ = 0, errors_ = 0;
  int v_rd_, v_rd_addr_, v_wr_, v_wr_addr_;
};

}  // namespace ernic
