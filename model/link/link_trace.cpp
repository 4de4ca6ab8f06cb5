#include "model/link/link_trace.h"

#include <fmt/format.h>

#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"

namespace ernic {

namespace {
bool rc_request(uint8_t op) { return op <= 0x0C || op == 0x13 || op == 0x14 || op == 0x16 || op == 0x17; }
bool first_or_middle(uint8_t op) { return op == 0x00 || op == 0x01 || op == 0x06 || op == 0x07; }
}  // namespace

LinkTrace::LinkTrace(SimContext& ctx, const std::string& from, const std::string& to) : ctx_(ctx) {
  const std::string s = fmt::format("top.link.{}_to_{}", from, to);
  v_tx_frames_ = ctx.var(s, "tx_frames", 32);
  v_tx_opcode_ = ctx.var(s, "tx_opcode", 8);
  v_tx_psn_ = ctx.var(s, "tx_psn", 24);
  v_tx_dest_qp_ = ctx.var(s, "tx_dest_qp", 24);
  v_tx_aeth_ = ctx.var(s, "tx_aeth", 1);
  v_tx_syndrome_ = ctx.var(s, "tx_syndrome", 8);
  v_rx_frames_ = ctx.var(s, "rx_frames", 32);
  v_rx_opcode_ = ctx.var(s, "rx_opcode", 8);
  v_rx_psn_ = ctx.var(s, "rx_psn", 24);
  v_rx_dest_qp_ = ctx.var(s, "rx_dest_qp", 24);
  v_rx_expected_ = ctx.var(s, "rx_expected_psn", 24);
  v_rx_gap_ = ctx.var(s, "rx_psn_gap", 1);
  v_rx_gaps_ = ctx.var(s, "rx_psn_gaps", 32);
}

void LinkTrace::on_tx(const FrameBytes& f, uint64_t first_byte_ps) {
  if (!ctx_.vcd) return;
  ++tx_;
  auto d = roce::decode(f);
  const uint64_t t = first_byte_ps;
  ctx_.set_at(v_tx_opcode_, d ? d->bth.opcode : 0xFF, t);
  ctx_.set_at(v_tx_psn_, d ? d->bth.psn : 0, t);
  ctx_.set_at(v_tx_dest_qp_, d ? d->bth.dest_qp : 0, t);
  ctx_.set_at(v_tx_aeth_, d && d->aeth ? 1 : 0, t);
  ctx_.set_at(v_tx_syndrome_, d && d->aeth ? d->aeth->syndrome : 0, t);
  ctx_.set_at(v_tx_frames_, tx_, t);
}

void LinkTrace::on_rx(const FrameBytes& f) {
  if (!ctx_.vcd) return;
  ++rx_;
  auto d = roce::decode(f);
  bool gap = false;
  uint32_t expected = 0;
  if (d && (d->bth.dest_qp == 1 || d->bth.opcode >= 0x60)) {  // UD / CM: connections may start over
    forget();
    if (peer) peer->forget();
  } else if (d && rc_request(d->bth.opcode)) {
    Expect& e = expect_[d->bth.dest_qp];
    const uint32_t psn = d->bth.psn;
    if (first_or_middle(d->bth.opcode) && e.pmtu == 0) e.pmtu = uint32_t(d->payload.size());
    expected = e.known ? e.psn : psn;
    gap = e.known && psn != e.psn;
    if (!gap) {
      uint32_t span = 1;
      bool known = true;
      if (d->bth.opcode == roce::op::RC_READ_REQUEST) {
        const uint32_t len = d->reth ? d->reth->dma_len : 0;
        if (len == 0) span = 1;
        else if (e.pmtu) span = (len + e.pmtu - 1) / e.pmtu;
        else known = false;
      }
      e.known = known;
      e.psn = roce::psn_add(psn, span);
    }
  }
  if (gap) ++gaps_;
  ctx_.set(v_rx_opcode_, d ? d->bth.opcode : 0xFF);
  ctx_.set(v_rx_psn_, d ? d->bth.psn : 0);
  ctx_.set(v_rx_dest_qp_, d ? d->bth.dest_qp : 0);
  ctx_.set(v_rx_expected_, expected);
  ctx_.set(v_rx_gap_, gap);
  ctx_.set(v_rx_gaps_, gaps_);
  ctx_.set(v_rx_frames_, rx_);
}

}  // namespace ernic
