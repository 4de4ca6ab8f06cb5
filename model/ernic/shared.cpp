// model/ernic: the blocks' shared state (see shared.h).
#include "model/ernic/shared.h"

#include <fmt/format.h>

#include "model/roce/psn.h"

namespace ernic {

namespace R = regs;
namespace FLD = regs::fld;

ErnicShared::ErnicShared(const ClockDomain& core_, HostMemory& mem_, SimContext& ctx_, const std::string& scope_,
                         ErnicConfig cfg_)
    : core(core_),
      mem(mem_),
      ctx(ctx_),
      scope(scope_),
      cfg(std::move(cfg_)),
      regs(cfg.layout, cfg.num_qp, cfg.num_mr),
      dma_wqe(core, mem, ctx, scope + ".qp_mgr_m_axi", cfg.node, "qp_mgr_m_axi", cfg.dma),
      dma_payload(core, mem, ctx, scope + ".wqe_proc_top_m_axi", cfg.node, "wqe_proc_top_m_axi", cfg.dma),
      dma_rx(core, mem, ctx, scope + ".rx_pkt_hndler_ddr_m_axi", cfg.node, "rx_pkt_hndler_ddr_m_axi", cfg.dma),
      dma_cmpl(core, mem, ctx, scope + ".resp_hndler_m_axi", cfg.node, "resp_hndler_m_axi", cfg.dma),
      dma_rdrsp(core, mem, ctx, scope + ".rx_pkt_hndler_rdrsp_m_axi", cfg.node, "rx_pkt_hndler_rdrsp_m_axi", cfg.dma),
      dma_wrddr(core, mem, ctx, scope + ".wqe_proc_wr_ddr_m_axi", cfg.node, "wqe_proc_wr_ddr_m_axi", cfg.dma) {
  // A WQE or payload read outside host memory is fatal code 0x05 for its QP (PG332), not a run error.
  dma_wqe.read_decerr_is_model_error = dma_payload.read_decerr_is_model_error = false;
  mr_lookup = std::make_unique<MrLookup>(core, mem, ctx, scope, cfg.node, cfg.mr, cfg.dma, [this](uint32_t i) {
    MrContext c;
    std::copy_n(regs.mr_entry(i).begin(), MrContext::kWords, c.w.begin());
    return c;
  });
  qps.resize(cfg.num_qp + 1);
  for (uint32_t n = 1; n <= cfg.num_qp; ++n) qps[n].qpn = n;
}

uint32_t ErnicShared::sq_depth(uint32_t qpn) const { return FLD::QDEPTHi_SQ_DEPTH.get(Q(qpn, R::q::QDEPTHi)); }
uint32_t ErnicShared::rq_depth(uint32_t qpn) const { return FLD::QDEPTHi_RQ_DEPTH.get(Q(qpn, R::q::QDEPTHi)); }
uint32_t ErnicShared::pmtu(uint32_t qpn) const {
  return R::pmtu_bytes(FLD::QPCONFi_PMTU.get(Q(qpn, R::q::QPCONFi)));
}
bool ErnicShared::fatal(uint32_t qpn) const { return Q(qpn, R::q::STATQPi) & FLD::STATQPi_FATAL.bit(); }
std::string ErnicShared::qp_scope(uint32_t qpn) const { return fmt::format("{}.qp{}", scope, qpn); }

uint32_t ErnicShared::last_packet(uint8_t opcode, uint32_t qpn, uint32_t psn) {
  static_assert(FLD::LSTINPKT_PSN.mask() == FLD::LSTOUTPKT_PSN.mask() && FLD::LSTINPKT_QP.mask() == FLD::LSTOUTPKT_QP.mask());
  return FLD::LSTOUTPKT_PSN.set(FLD::LSTOUTPKT_QP.set(FLD::LSTOUTPKT_OPCODE.set(0, opcode), qpn), psn);
}

void ErnicShared::trace(const qp::QpContext& qp) {
  if (!ctx.vcd) return;
  const QpWaveform& w = wave.qp[qp.qpn];
  ctx.set(w.state, qp.enabled);
  ctx.set(w.fatal, fatal(qp.qpn));
  ctx.set(w.sq_ci, qp.req.sq_ci);
  ctx.set(w.cq_head, Q(qp.qpn, R::q::CQHEADi));
  ctx.set(w.next_psn, Q(qp.qpn, R::q::SQPSNi) & roce::kPsnMask);
  ctx.set(w.exp_psn, roce::psn_add(Q(qp.qpn, R::q::LSTRQREQi) & roce::kPsnMask, 1));
  ctx.set(w.osq, qp.req.osq.size());
  ctx.set(w.req, uint8_t(qp.req_state()));
  ctx.set(w.resp, uint8_t(qp.resp.state()));
}

}  // namespace ernic
