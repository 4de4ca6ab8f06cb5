// model/link: PG332's sideband doorbell inputs (section 8), used instead of
// AXI4-Lite SQPIi / RQCIi writes by a QP in hardware-handshake mode
// (QPCONFi[4] = 0):
//   i_qp_sq_pidb_{hndshk[15:0], wr_addr_hndshk[31:0]}, valid/ready, answered
//   by o_qp_sq_pidb_wr_rdy: a new SQ producer index for a QP;
//   i_qp_rq_cidb_{hndshk[15:0], wr_addr_hndshk[31:0]}, same handshake: a new
//   RQ consumer index.
// hndshk carries the index, wr_addr_hndshk the QP number (assumption
// A-SIDEBAND-1: PG332's port list does not spell the address coding out).
// These ports belong to FPGA user logic next to the ERNIC, on the AXI4 clock,
// not to the host's PCIe: a doorbell costs the valid/ready handshake (one
// core-clock edge while the target is ready) and no MMIO latency. In the
// simulator the host driver plays that user logic.
// The ERNIC's sideband outputs (rx_pkt_hndler_o_rq_db_*,
// resp_hndler_o_send_cq_db_*) are callbacks on the Ernic (rq_db_sink,
// cq_db_sink).
#pragma once
#include <cstdint>
#include <string>
#include <systemc>

#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic {

class SidebandTarget {
 public:
  virtual ~SidebandTarget() = default;
  // Called at the edge where valid and ready meet; returns the ready the
  // target gives (false: not ready this cycle, the source holds valid).
  virtual bool sq_pidb(uint32_t wr_addr, uint16_t pi) = 0;
  virtual bool rq_cidb(uint32_t wr_addr, uint16_t ci) = 0;
};

class SidebandPort {
 public:
  SidebandPort(const ClockDomain& clk, SidebandTarget& target, SimContext& ctx, const std::string& scope)
      : clk_(clk), target_(target), ctx_(ctx) {
    v_sq_valid_ = ctx.var(scope, "i_qp_sq_pidb_valid", 1);
    v_sq_pi_ = ctx.var(scope, "i_qp_sq_pidb_hndshk", 16);
    v_sq_addr_ = ctx.var(scope, "i_qp_sq_pidb_wr_addr_hndshk", 32);
    v_rq_valid_ = ctx.var(scope, "i_qp_rq_cidb_valid", 1);
    v_rq_ci_ = ctx.var(scope, "i_qp_rq_cidb_hndshk", 16);
    v_rq_addr_ = ctx.var(scope, "i_qp_rq_cidb_wr_addr_hndshk", 32);
  }
  // Blocking: returns once the doorbell was accepted. One at a time.
  void sq_pidb(uint32_t qpn, uint32_t pi) {
    transfer(v_sq_valid_, v_sq_pi_, v_sq_addr_, qpn, pi, true);
  }
  void rq_cidb(uint32_t qpn, uint32_t ci) {
    transfer(v_rq_valid_, v_rq_ci_, v_rq_addr_, qpn, ci, false);
  }
  uint64_t sq_doorbells() const { return sq_; }
  uint64_t rq_doorbells() const { return rq_; }

 private:
  void transfer(int v_valid, int v_data, int v_addr, uint32_t qpn, uint32_t idx, bool sq) {
    lock_.lock();
    clk_.sync();
    ctx_.set(v_valid, 1);
    ctx_.set(v_data, idx & 0xFFFF);
    ctx_.set(v_addr, qpn);
    for (;;) {
      sc_core::wait(clk_.period());  // the edge where valid is seen
      const bool rdy = sq ? target_.sq_pidb(qpn, uint16_t(idx)) : target_.rq_cidb(qpn, uint16_t(idx));
      if (rdy) break;
    }
    ctx_.bump();
    ++(sq ? sq_ : rq_);
    ctx_.set(v_valid, 0);
    lock_.unlock();
  }
  const ClockDomain& clk_;
  SidebandTarget& target_;
  SimContext& ctx_;
  sc_core::sc_mutex lock_;
  uint64_t sq_ = 0, rq_ = 0;
  int v_sq_valid_, v_sq_pi_, v_sq_addr_, v_rq_valid_, v_rq_ci_, v_rq_addr_;
};

}  // namespace ernic
