#include "model/ernic/ernic.h"

#include <fmt/format.h>

#include "model/datapath/roce_rx_ref.h"
#include "model/datapath/roce_tx_ref.h"
#include "model/datapath/sc/datapath.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"
#include "model/trace/signal_enums.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace F = regs::f;

namespace {
// WQE opcodes (PG332 Table 2-1, byte 16).
constexpr uint8_t kWqeWrite = 0x00, kWqeWriteImm = 0x01, kWqeSend = 0x02, kWqeSendImm = 0x03,
                  kWqeRead = 0x04, kWqeSendInv = 0x0C;
// Fatal codes (PG332 error-status queue).
constexpr uint8_t kFatalOpSeq = 0x01, kFatalLen = 0x02, kFatalWqe = 0x05, kFatalRemote = 0x0A,
                  kFatalWriteOpSeq = 0x11, kFatalWriteLen = 0x12, kFatalRkey = 0x15,
                  kFatalRethLen = 0x16, kFatalRkeyAndLen = 0x17, kFatalBadAeth = 0x19, kFatalRdRspOnlyLen = 0x1A,
                  kFatalBadResp = 0x1B, kFatalRdRspLastForOnly = 0x1C, kFatalRdRspMiddleLen = 0x1E,
                  kFatalRdRspLast = 0x1F, kFatalRespHndlr = 0x06, kFatalRnr = 0x09, kFatalOpSeqAndLen = 0x03,
                  kFatalWriteOpSeqAndLen = 0x13, kFatalUnsupportedOp = 0x04, kFatalBadAckOpcode = 0x0C;
// IBTA RNR NAK timer codes, in units of 10 us (code 0 = 655.36 ms).
constexpr uint32_t kRnrTimer10us[32] = {65536, 1,    2,    3,    4,    6,    8,     12,    16,    24,    32,
                                        48,    64,   96,   128,  192,  256,  384,   512,   768,   1024,  1536,
                                        2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
constexpr uint32_t kWqeProcRetryBufsUnavail = 1u << 4;  // WQEPROCSTS[4]
constexpr size_t kWqeSize = 64;
constexpr uint32_t kInlineMax = 16;  // SDATA bytes (PG332 Table 2-1)

uint32_t lo16(uint32_t v) { return v & 0xFFFF; }
// Error-buffer syndrome bits. PG332 places the ICRC error at bit 30 and the
// FCS error at bit 31; the other positions are this model's (A-ERNIC-18).
constexpr uint32_t kSynMacDa = 1u << 0, kSynIpVersion = 1u << 1, kSynIpChecksum = 1u << 2, kSynIpDa = 1u << 3,
                   kSynLength = 1u << 4, kSynTver = 1u << 5, kSynQp = 1u << 6, kSynSource = 1u << 7,
                   kSynHeader = 1u << 8, kSynIpFlags = 1u << 9, kSynAeth = 1u << 10, kSynIcrc = 1u << 30,
                   kSynFcs = 1u << 31;
}  // namespace

Ernic::Ernic(sc_module_name name, const ClockDomain& core, HostMemory& mem, SimContext& ctx,
             const std::string& scope, ErnicConfig cfg)
    : sc_module(name),
      core_(core),
      mem_(mem),
      ctx_(ctx),
      scope_(scope),
      cfg_(cfg),
      dma_wqe_(core, mem, ctx, scope + ".qp_mgr_m_axi", cfg.node, "qp_mgr_m_axi", cfg.dma),
      dma_payload_(core, mem, ctx, scope + ".wqe_proc_top_m_axi", cfg.node, "wqe_proc_top_m_axi", cfg.dma),
      dma_rx_(core, mem, ctx, scope + ".rx_pkt_hndler_ddr_m_axi", cfg.node, "rx_pkt_hndler_ddr_m_axi", cfg.dma),
      dma_cmpl_(core, mem, ctx, scope + ".resp_hndler_m_axi", cfg.node, "resp_hndler_m_axi", cfg.dma),
      dma_rdrsp_(core, mem, ctx, scope + ".rx_pkt_hndler_rdrsp_m_axi", cfg.node, "rx_pkt_hndler_rdrsp_m_axi",
                 cfg.dma),
      dma_wrddr_(core, mem, ctx, scope + ".wqe_proc_wr_ddr_m_axi", cfg.node, "wqe_proc_wr_ddr_m_axi", cfg.dma) {
  g_.assign(0x1000 / 4, 0);
  q_.assign(cfg_.num_qp + 1, std::vector<uint32_t>(R::kQpBlockStride / 4, 0));
  mr_.assign(cfg_.num_mr, std::vector<uint32_t>(R::kMrEntryStride / 4, 0));
  // A WQE or payload read outside host memory is fatal code 0x05 for its QP (PG332), not a run error.
  dma_wqe_.read_decerr_is_model_error = dma_payload_.read_decerr_is_model_error = false;
  mr_lookup_ = std::make_unique<MrLookup>(core, mem, ctx, scope, cfg.node, cfg_.mr, cfg.dma, [this](uint32_t i) {
    MrContext c;
    std::copy_n(mr_[i].begin(), MrContext::kWords, c.w.begin());
    return c;
  });
  rq_int_.assign(cfg_.layout.int_banks, 0);
  cq_int_.assign(cfg_.layout.int_banks, 0);
  cnp_.assign(cfg_.layout.int_banks, 0);
  qps_.resize(cfg_.num_qp + 1);
  reset_registers();
  v_intr_ = ctx.var(scope, "rnic_intr", 1);
  v_req_state_ = ctx.var(scope + ".wqe_proc", "state", 2);
  v_req_qpn_ = ctx.var(scope + ".wqe_proc", "qpn", 8);
  v_tx_opcode_ = ctx.var(scope + ".wqe_proc", "tx_opcode", 8);
  v_rx_valid_ = ctx.var(scope + ".rx_pkt_hndler", "pkt_valid", 1);
  v_rx_opcode_ = ctx.var(scope + ".rx_pkt_hndler", "opcode", 8);
  v_intsts_ = ctx.var(scope, "INTSTS", 32);
  v_rxb_tvalid_ = ctx.var(scope + ".rx_buffer", "m_axis_tvalid", 1);
  v_rxb_tready_ = ctx.var(scope + ".rx_buffer", "m_axis_tready", 1, 1);
  v_cq_db_cnt_ = ctx.var(scope, "resp_hndler_o_send_cq_db_cnt", 32);
  v_cq_db_addr_ = ctx.var(scope, "resp_hndler_o_send_cq_db_addr", 10);
  v_rq_db_data_ = ctx.var(scope, "rx_pkt_hndler_o_rq_db_data", 32);
  v_rq_db_addr_ = ctx.var(scope, "rx_pkt_hndler_o_rq_db_addr", 10);
  // Value names for trigger expressions (rtl(A.qp2.req_state) == WAIT_ACK).
  trace::register_signal_enum("ernic.qp*.req_state",
                              {{"IDLE", kQReqIdle}, {"SENDING", kQReqSending}, {"WAIT_ACK", kQReqWaitAck},
                               {"RETRANSMIT", kQReqRetransmit}, {"RNR_WAIT", kQReqRnrWait}});
  trace::register_signal_enum("ernic.qp*.resp_state",
                              {{"IDLE", kQRespIdle}, {"RECEIVING", kQRespReceiving}, {"ACK_PENDING", kQRespAckPending},
                               {"NAK_PSN_SENT", kQRespNakPsn}, {"RNR_NAK_SENT", kQRespRnr}});
  trace::register_signal_enum("ernic.wqe_proc.state",
                              {{"IDLE", kReqIdle}, {"FETCH", kReqFetch}, {"SEND", kReqSend}, {"WAIT_ACK", kReqWaitAck}});
  for (uint32_t n = 1; n <= cfg_.num_qp; ++n) {
    Qp& qp = qps_[n];
    qp.qpn = n;
    const std::string s = fmt::format("{}.qp{}", scope, n);
    qp.v_state = ctx.var(s, "enabled", 1);
    qp.v_fatal = ctx.var(s, "fatal", 1);
    qp.v_sq_pi = ctx.var(s, "SQPI", 16);
    qp.v_sq_ci = ctx.var(s, "sq_ci", 16);
    qp.v_cq_head = ctx.var(s, "CQHEAD", 16);
    qp.v_next_psn = ctx.var(s, "SQPSN", 24);
    qp.v_exp_psn = ctx.var(s, "expected_psn", 24);
    qp.v_osq = ctx.var(s, "outstanding", 5);
    qp.v_req = ctx.var(s, "req_state", 3);    // QpReqState
    qp.v_resp = ctx.var(s, "resp_state", 3);  // QpRespState
  }
  SC_THREAD(qp_mgr_thread);
  SC_THREAD(prefetch_thread);
  SC_THREAD(tx_thread);
  SC_THREAD(rx_thread);
  SC_THREAD(timer_thread);
  SC_THREAD(copy_thread);
}

Ernic::~Ernic() = default;

void Ernic::reset_registers() {
  for (const auto& r : R::all_registers()) {
    if (r.block == R::Block::Global) {
      G(r.offset) = r.reset;
    } else if (r.block == R::Block::Qp) {
      for (uint32_t n = 1; n <= cfg_.num_qp; ++n) Q(n, r.offset) = r.reset;
    } else {
      for (uint32_t i = 0; i < cfg_.num_mr; ++i) M(i, r.offset) = r.reset;
    }
  }
}

// ---------------------------------------------------------------- registers

uint32_t Ernic::sq_depth(uint32_t qpn) const { return Q(qpn, R::q::QDEPTHi) & 0xFFFF; }
uint32_t Ernic::rq_depth(uint32_t qpn) const { return Q(qpn, R::q::QDEPTHi) >> 16; }
uint32_t Ernic::pmtu(uint32_t qpn) const {
  return R::pmtu_bytes((Q(qpn, R::q::QPCONFi) & F::QPCONF_PMTU_MASK) >> F::QPCONF_PMTU_SHIFT);
}

void Ernic::count16(uint32_t off, bool high, uint32_t n) {
  uint32_t& r = G(off);
  if (high) {
    r = (r & 0xFFFF) | (((r >> 16) + n) & 0xFFFF) << 16;
  } else {
    r = (r & 0xFFFF0000u) | ((r + n) & 0xFFFF);
  }
}

void Ernic::count_nak_in(uint32_t qpn) {
  G(R::g::INNAKPKTCNT) = lo16(G(R::g::INNAKPKTCNT) + 1);
  G(R::g::INNCKPKTSTS) = (qpn & 0xFF) | (lo16((G(R::g::INNCKPKTSTS) >> 16) + 1) << 16);
}

// STATRQBUFCAi / MSBi: the address of the RQ element the next SEND fills,
// in RQBAi's format (A-CNT-1).
void Ernic::set_rq_buf_ca(uint32_t qpn, uint64_t addr) {
  Q(qpn, R::q::STATRQBUFCAi) = uint32_t(addr) & ~0xFFu;
  Q(qpn, R::q::STATRQBUFCAMSBi) = uint32_t(addr >> 32);
}

void Ernic::update_intr() {
  bool on = (G(R::g::INTSTS) & G(R::g::INTEN)) != 0;
  if (on != intr_level_) {
    intr_level_ = on;
    intr.write(on);
    if (ctx_.log) ctx_.log->intr(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), on, G(R::g::INTSTS));
  }
  ctx_.set(v_intr_, on);
  ctx_.set(v_intsts_, G(R::g::INTSTS));
}

void Ernic::raise(uint32_t bits) {
  G(R::g::INTSTS) |= bits;
  update_intr();
}

void Ernic::qp_bank_set(uint32_t bank_off, uint32_t qpn) {
  // PG31: bit j of bank n is QP 32(n-1)+j.
  uint32_t bank = qpn / 32, bit = qpn % 32;
  if (bank >= cfg_.layout.int_banks) return;
  if (bank_off == cfg_.layout.rq_int_bank) rq_int_[bank] |= 1u << bit;
  if (bank_off == cfg_.layout.cq_int_bank) cq_int_[bank] |= 1u << bit;
  if (bank_off == cfg_.layout.cnp_bank) cnp_[bank] |= 1u << bit;
}

void Ernic::backdoor_write(uint32_t addr, uint32_t value) {
  R::Decoded d = R::decode_address(cfg_.layout, addr, cfg_.num_qp, cfg_.num_mr);
  if (!d.reg || d.block != R::Block::Qp) return;
  Q(d.index, d.offset) = value;
  ctx_.event(fmt::format("{}.qp{}", scope_, d.index),
             fmt::format("debug backdoor: {} := 0x{:08x} (not a PG332 access, A-DEBUG-1)", d.reg->name, value));
  trace_qp(qps_[d.index]);
}

uint32_t Ernic::peek(uint32_t addr) const {
  const auto& L = cfg_.layout;
  R::Decoded d = R::decode_address(L, addr, cfg_.num_qp, cfg_.num_mr);
  if (d.block == R::Block::Global && !d.reg) {
    auto bank = [&](uint32_t base, const std::vector<uint32_t>& v) -> std::optional<uint32_t> {
      if (d.offset >= base && d.offset < base + 4 * L.int_banks) return v[(d.offset - base) / 4];
      return std::nullopt;
    };
    if (auto v = bank(L.rq_int_bank, rq_int_)) return *v;
    if (auto v = bank(L.cq_int_bank, cq_int_)) return *v;
    if (auto v = bank(L.cnp_bank, cnp_)) return *v;
    return 0;  // reserved: reads as 0
  }
  if (!d.reg) return 0;
  switch (d.block) {
    case R::Block::Global:
      // RESPHNDSTS[16] "sq pici db check en", which the recovery flows poll:
      // the response handler here takes doorbells at any time (A-ERNIC-19).
      if (d.offset == R::g::RESPHNDSTS) return G(d.offset) | 1u << 16;
      return G(d.offset);
    case R::Block::Qp: {
      uint32_t v = Q(d.index, d.offset);
      if (d.offset == R::q::STATQPi) {
        const Qp& qp = qps_[d.index];
        uint32_t depth = sq_depth(d.index);
        uint32_t pending = depth ? (qp.sq_pi % depth + depth - qp.sq_ci) % depth : 0;
        v &= ~(F::STATQP_SQ_EMPTY | F::STATQP_OSQ_EMPTY | F::STATQP_OSQ_FULL | F::STATQP_SQ_FULL);
        if (pending == 0) v |= F::STATQP_SQ_EMPTY;
        // SQ full: depth - 1 WQEs posted and not completed. The CQ has the
        // SQ's depth and one entry per WQE, so software that never posts
        // beyond this never has a CQE overwritten before it was read.
        const uint32_t uncompleted = depth ? (Q(d.index, R::q::SQPIi) % depth + depth - lo16(Q(d.index, R::q::CQHEADi)) % depth) % depth : 0;
        if (depth && uncompleted == depth - 1) v |= F::STATQP_SQ_FULL;
        if (qp.osq.empty()) v |= F::STATQP_OSQ_EMPTY;
        if (qp.osq.size() >= qp.max_out) v |= F::STATQP_OSQ_FULL;
      }
      return v;
    }
    case R::Block::Mr:
      return mr_[d.index][d.offset / 4];
  }
  return 0;
}

uint32_t Ernic::axil_read(uint32_t addr) {
  const uint32_t v = peek(addr);
  if (ctx_.log) log_reg(false, addr, v);
  return v;
}

void Ernic::log_reg(bool write, uint32_t addr, uint32_t value) {
  const auto d = R::decode_address(cfg_.layout, addr, cfg_.num_qp, cfg_.num_mr);
  std::optional<uint32_t> qp;
  if (d.block == R::Block::Qp) qp = d.index;
  ctx_.log->reg(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), qp, write, addr,
                R::address_name(cfg_.layout, addr, cfg_.num_qp, cfg_.num_mr), value);
}

void Ernic::axil_write(uint32_t addr, uint32_t data) {
  if (ctx_.log) log_reg(true, addr, data);
  const auto& L = cfg_.layout;
  R::Decoded d = R::decode_address(L, addr, cfg_.num_qp, cfg_.num_mr);
  if (d.block == R::Block::Global && !d.reg) {
    auto w1c = [&](uint32_t base, std::vector<uint32_t>& v) {
      if (d.offset >= base && d.offset < base + 4 * L.int_banks) {
        v[(d.offset - base) / 4] &= ~data;
        return true;
      }
      return false;
    };
    // The CNP bank is W1C like the others (PG332's interrupt flow; A-ERNIC-22).
    if (!w1c(L.rq_int_bank, rq_int_) && !w1c(L.cq_int_bank, cq_int_)) w1c(L.cnp_bank, cnp_);
    return;
  }
  if (!d.reg) return;  // reserved: writes ignored
  const bool swovr = G(R::g::XRNICADCONF) & F::XRNICADCONF_SWOVR;
  switch (d.reg->access) {
    case R::Access::RO:
      return;  // writes to read-only registers have no effect
    case R::Access::ROSW:
      if (!swovr) return;
      break;
    case R::Access::W1C:
      G(d.offset) &= ~data;
      update_intr();
      return;
    case R::Access::RW:
      break;
  }
  if (d.block == R::Block::Global) {
    G(d.offset) = data;
    if (d.offset == R::g::INTEN) update_intr();
    if (d.offset == R::g::XRNICADCONF) doorbell_ev_.notify(SC_ZERO_TIME);  // a QP may leave SW override
    return;
  }
  if (d.block == R::Block::Mr) {
    mr_[d.index][d.offset / 4] = data;
    mr_lookup_->on_register_write(d.index);  // mr_cache: cam drops the cached context
    return;
  }
  // Per-QP register.
  const uint32_t n = d.index;
  Qp& qp = qps_[n];
  const uint32_t old = Q(n, d.offset);
  Q(n, d.offset) = data;
  switch (d.offset) {
    case R::q::QPCONFi:
      if ((data & F::QPCONF_EN) != (old & F::QPCONF_EN) && ctx_.log)
        ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), n, "qp_enable",
                        (data & F::QPCONF_EN) ? "1" : "0");
      if ((data & F::QPCONF_EN) && !(old & F::QPCONF_EN)) {
        qp.enabled = true;
        // Re-enabled after PG332's recovery or deletion flow: the QP starts
        // clean (fatal bit, retry and RNR counts, NAK syndrome cleared).
        if (old & F::QPCONF_RECOVERY) Q(n, R::q::STATQPi) &= ~(F::STATQP_FATAL | F::STATQP_RQ_OVF | F::STATQP_RETRIED |
                                                               0x7Fu << 16 | 0x7u << 24 | 0x7u << 28);
        uint32_t depth = sq_depth(n);
        qp.sq_ci = depth ? lo16(Q(n, R::q::STATCURSQPTRi)) % depth : 0;
        drop_outstanding(qp);
        qp.resend_pending = false;
        qp.ack_high_valid = false;
        qp.retry_cnt = qp.rnr_cnt = 0;
        qp.ack_deadline_ps = qp.rnr_until_ps = 0;
        qp.buf_need = 0;
        qp.nak_psn_sent = qp.rnr_nak_sent = false;
        qp.wr_active = false;
        qp.send_off = 0;
        qp.unacked = 0;
        qp.ack_due_ps = 0;
        qp.ack_fire = false;
        qp.max_out = cfg_.timing.max_outstanding;  // a CNP's cut lasts until the QP is enabled again (A-ERNIC-22)
        drop_wqe_cache(qp);
        ring(n, Q(n, R::q::SQPIi));
      } else if (!(data & F::QPCONF_EN)) {
        qp.enabled = false;
        drop_wqe_cache(qp);
      }
      trace_qp(qp);
      break;
    case R::q::SQPIi:
      Q(n, d.offset) = lo16(data);
      ctx_.set(qp.v_sq_pi, lo16(data));
      // AXI-Lite doorbells count only with HW handshake disabled (QPCONFi[4] = 1).
      if (Q(n, R::q::QPCONFi) & F::QPCONF_HWHS_DIS) ring(n, lo16(data));
      break;
    case R::q::RQCIi:
      Q(n, d.offset) = lo16(data);
      break;
    case R::q::STATCURSQPTRi: {  // written under SW override (PG332 ch.6 flows): where the QP manager fetches next
      const uint32_t depth = sq_depth(n);
      qp.sq_ci = depth ? lo16(data) % depth : 0;
      drop_wqe_cache(qp);  // prefetching restarts from there
      trace_qp(qp);
      break;
    }
    case R::q::SQPSNi:
      // The first response expected is for the first PSN sent (A-CNT-1).
      Q(n, R::q::STATRESPSNi) = data & roce::kPsnMask;
      trace_qp(qp);
      break;
    case R::q::LSTRQREQi:
      trace_qp(qp);
      break;
    case R::q::RQBAi:
    case R::q::RQBAMSBi:
      set_rq_buf_ca(n, q64(n, R::q::RQBAi, R::q::RQBAMSBi));  // element 0 is current (A-CNT-1)
      break;
    default:
      break;
  }
}

void Ernic::trace_qp(const Qp& qp) {
  if (!ctx_.vcd) return;
  ctx_.set(qp.v_state, qp.enabled);
  ctx_.set(qp.v_fatal, Q(qp.qpn, R::q::STATQPi) & F::STATQP_FATAL);
  ctx_.set(qp.v_sq_ci, qp.sq_ci);
  ctx_.set(qp.v_cq_head, Q(qp.qpn, R::q::CQHEADi));
  ctx_.set(qp.v_next_psn, Q(qp.qpn, R::q::SQPSNi) & roce::kPsnMask);
  ctx_.set(qp.v_exp_psn, roce::psn_add(Q(qp.qpn, R::q::LSTRQREQi) & roce::kPsnMask, 1));
  ctx_.set(qp.v_osq, qp.osq.size());
  const QpReqState rq = qp.rnr_until_ps       ? kQReqRnrWait
                        : qp.resend_pending   ? kQReqRetransmit
                        : qp.sending          ? kQReqSending
                        : !qp.osq.empty()     ? kQReqWaitAck
                                              : kQReqIdle;
  const QpRespState rs = qp.rnr_nak_sent                  ? kQRespRnr
                         : qp.nak_psn_sent                ? kQRespNakPsn
                         : qp.wr_active || qp.send_off    ? kQRespReceiving
                         : qp.unacked                     ? kQRespAckPending
                                                          : kQRespIdle;
  ctx_.set(qp.v_req, rq);
  ctx_.set(qp.v_resp, rs);
}

std::vector<std::string> Ernic::qp_status() const {
  std::vector<std::string> out;
  for (uint32_t n = 1; n <= cfg_.num_qp; ++n) {
    const Qp& qp = qps_[n];
    if (!qp.enabled && !(Q(n, R::q::QPCONFi) & F::QPCONF_EN)) continue;
    out.push_back(fmt::format(
        "QP{}: QPCONF=0x{:08x} STATQP=0x{:08x} SQPI={} sq_ci={} outstanding={} CQHEAD={} "
        "SQPSN=0x{:06x} LSTRQREQ=0x{:08x} STATRQPIDB={} RQCI={}",
        n, Q(n, R::q::QPCONFi), peek(cfg_.layout.qp(n, R::q::STATQPi)), Q(n, R::q::SQPIi), qp.sq_ci,
        qp.osq.size(), Q(n, R::q::CQHEADi), Q(n, R::q::SQPSNi) & roce::kPsnMask,
        Q(n, R::q::LSTRQREQi), Q(n, R::q::STATRQPIDBi), Q(n, R::q::RQCIi)));
  }
  return out;
}

// ---------------------------------------------------------------- requester

// A doorbell reaches the QP manager doorbell_cycles after the register
// write; each one is queued with its own time, so that two doorbells close
// together keep their latencies (one sc_event could not: a pending earlier
// notification swallows a later one).
void Ernic::ring(uint32_t qpn, uint32_t value) {
  const uint64_t t = ClockDomain::now_ps() + core_.period_ps() * cfg_.timing.doorbell_cycles;
  db_q_.push_back({t, qpn, value});
  doorbell_ev_.notify(ps(db_q_.front().t_ps - ClockDomain::now_ps()));
}

void Ernic::apply_doorbells() {
  const uint64_t now = ClockDomain::now_ps();
  while (!db_q_.empty() && db_q_.front().t_ps <= now) {
    qps_[db_q_.front().qpn].sq_pi = db_q_.front().value;
    db_q_.pop_front();
  }
  if (!db_q_.empty()) doorbell_ev_.notify(ps(db_q_.front().t_ps - now));
}

bool Ernic::sw_override(uint32_t qpn) const {
  const uint32_t a = G(R::g::XRNICADCONF);
  return (a & F::XRNICADCONF_SWOVR) && ((a >> cfg_.layout.swovr_qpn_shift) & 0xFF) == (qpn & 0xFF);
}

// Sideband doorbells (PG332 section 8; wr_addr_hndshk = QP number, A-SIDEBAND-1).
bool Ernic::sq_pidb(uint32_t wr_addr, uint16_t pi) {
  const uint32_t n = wr_addr;
  if (n < 1 || n > cfg_.num_qp || (Q(n, R::q::QPCONFi) & F::QPCONF_HWHS_DIS)) {
    ++sideband_ignored_;
    ctx_.event(scope_, fmt::format("i_qp_sq_pidb for QP{} ignored: not in HW-handshake mode (QPCONFi[4] = 1)", n));
    return true;
  }
  if (ctx_.log) ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), n, "i_qp_sq_pidb", std::to_string(pi));
  Q(n, R::q::SQPIi) = pi;
  ctx_.set(qps_[n].v_sq_pi, pi);
  ring(n, pi);
  return true;
}

bool Ernic::rq_cidb(uint32_t wr_addr, uint16_t ci) {
  const uint32_t n = wr_addr;
  if (n < 1 || n > cfg_.num_qp || (Q(n, R::q::QPCONFi) & F::QPCONF_HWHS_DIS)) {
    ++sideband_ignored_;
    ctx_.event(scope_, fmt::format("i_qp_rq_cidb for QP{} ignored: not in HW-handshake mode (QPCONFi[4] = 1)", n));
    return true;
  }
  if (ctx_.log) ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), n, "i_qp_rq_cidb", std::to_string(ci));
  Q(n, R::q::RQCIi) = ci;
  return true;
}

bool Ernic::qp_has_work(const Qp& qp) const {
  const uint32_t n = qp.qpn;
  // Disabled with WQEs outstanding: they are flushed (A-ERNIC-27).
  if (!qp.enabled) return !qp.osq.empty() && (G(R::g::XRNICCONF) & F::XRNICCONF_EN);
  if (!(G(R::g::XRNICCONF) & F::XRNICCONF_EN)) return false;
  // Doorbells come over AXI-Lite (QPCONFi[4] = 1) or the sideband (0); both
  // set sq_pi. A QP under SW override is being re-pointed: left alone (A-SIDEBAND-2).
  if (sw_override(n)) return false;
  const uint32_t depth = sq_depth(n);
  if (depth == 0) return false;
  // A fatal QP flushes what is still in its SQ (A-ERNIC-23).
  if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return qp.sq_pi % depth != qp.sq_ci;
  if (qp.resend_pending) return qp.rnr_until_ps == 0;  // go-back-N first (after an RNR wait)
  if (qp.wqe_cache.empty()) return false;  // the prefetcher brings the next WQE
  if (qp.buf_need && free_bufs_.size() < qp.buf_need) return false;  // waits for write-retry buffers
  return qp.osq.size() < qp.max_out;
}

roce::Ipv6Addr Ernic::local_ip6() const {
  return roce::Ipv6Addr::from_pg332_words(G(R::g::IPv6XADD1), G(R::g::IPv6XADD2), G(R::g::IPv6XADD3),
                                          G(R::g::IPv6XADD4));
}

roce::Frame Ernic::frame_template(uint32_t n) const {
  roce::Frame f;
  auto mac = [](uint32_t msb, uint32_t lsb) {
    roce::MacAddr m;
    m.b = {uint8_t(msb >> 8), uint8_t(msb), uint8_t(lsb >> 24), uint8_t(lsb >> 16), uint8_t(lsb >> 8),
           uint8_t(lsb)};
    return m;
  };
  f.eth.src = mac(G(R::g::MACXADDMSB), G(R::g::MACXADDLSB));
  f.eth.dst = mac(Q(n, R::q::MACDESADDMSBi), Q(n, R::q::MACDESADDLSBi));
  const uint32_t adv = Q(n, R::q::QPADVCONFi);
  f.ip4.src.v = G(R::g::IPv4XADD);
  f.ip4.dst.v = Q(n, R::q::IPDESADDR1i);
  f.ip4.tos = uint8_t((adv & 0x3F) << 2);
  f.ip4.ttl = (adv >> 8) & 0xFF ? uint8_t(adv >> 8) : 64;  // assumption A-ERNIC-4
  if (Q(n, R::q::QPCONFi) & F::QPCONF_IPV6) {
    // QPCONFi[7]: IPv6 (next header 17; traffic class and hop limit as the
    // IPv4 TOS and TTL above, flow label 0: assumption A-IPV6-1).
    f.ipv6 = true;
    f.eth.ethertype = roce::kEtherTypeIpv6;
    f.ip6.src = local_ip6();
    f.ip6.dst = roce::Ipv6Addr::from_pg332_words(Q(n, R::q::IPDESADDR1i), Q(n, R::q::IPDESADDR2i),
                                                 Q(n, R::q::IPDESADDR3i), Q(n, R::q::IPDESADDR4i));
    f.ip6.traffic_class = f.ip4.tos;
    f.ip6.hop_limit = f.ip4.ttl;
  }
  f.udp.sport = uint16_t(G(R::g::XRNICCONF) >> cfg_.layout.udp_sport_shift);
  f.bth.pkey = (adv >> 16) ? uint16_t(adv >> 16) : 0xFFFF;
  f.bth.dest_qp = Q(n, R::q::DESTQPCONFi) & 0xFFFFFF;
  return f;
}

// A frame for the TX datapath (rtl/SEAM.md, TX seam): the header descriptor
// and the payload; roce_tx builds the headers' lengths, checksum, PadCnt
// and the ICRC.
void Ernic::tx_enqueue(const roce::Frame& f, std::optional<Resend> resend) {
  push_tx(TxFrame{seam::tx_desc_from_frame(f), f.payload, resend});
}

// QP1: software built the frame (Ethernet .. MAD); a raw descriptor, the
// datapath appends the ICRC only.
void Ernic::tx_enqueue_raw(std::vector<uint8_t> frame) {
  seam::TxDesc d = seam::tx_desc_raw(frame.size());
  push_tx(TxFrame{d, std::move(frame), std::nullopt});
}

void Ernic::push_tx(TxFrame t) {
  while (txq_.size() >= cfg_.timing.tx_queue_frames) wait(tx_pop_ev_);
  txq_.push_back(std::move(t));
  tx_ev_.notify(SC_ZERO_TIME);
}

void Ernic::qp_mgr_thread() {
  for (;;) {
    apply_doorbells();
    Qp* next = nullptr;
    for (uint32_t i = 0; i < cfg_.num_qp && !next; ++i) {
      uint32_t n = 1 + (rr_next_ - 1 + i) % cfg_.num_qp;
      if (qp_has_work(qps_[n])) next = &qps_[n];
    }
    if (!next) {
      ctx_.set(v_req_state_, kReqIdle);
      wait(doorbell_ev_ | ack_ev_ | prefetch_ev_);
      continue;
    }
    Qp& qp = *next;
    rr_next_ = qp.qpn % cfg_.num_qp + 1;
    const uint32_t n = qp.qpn;
    ctx_.set(v_req_qpn_, n);
    if (!qp.enabled) {
      // QPCONFi[0] cleared with requests outstanding (PG332 asks for a
      // quiescent QP first): they complete with ERRFLAG rather than vanish.
      ctx_.event(fmt::format("{}.qp{}", scope_, n),
                 fmt::format("QP disabled with {} WQE(s) outstanding: completed with ERRFLAG", qp.osq.size()));
      flush_outstanding(qp);
      trace_qp(qp);
      continue;
    }
    if (qp.resend_pending) {
      ctx_.set(v_req_state_, kReqSend);
      qp.sending = true;
      resend(qp);
      qp.sending = false;
      trace_qp(qp);
      ctx_.set(v_req_state_, qp.osq.empty() ? kReqIdle : kReqWaitAck);
      continue;
    }
    ctx_.set(v_req_state_, kReqFetch);
    uint8_t wqe[kWqeSize];
    const uint64_t sqba = q64(n, R::q::SQBAi, R::q::SQBAMSBi);
    if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) {
      // Flush (A-ERNIC-23): the WQE is fetched for its WRID and opcode and
      // completes with ERRFLAG, nothing is sent. PG332's recovery and
      // deletion flows wait for CQHEADi == SQPIi, which needs this.
      const bool fetched = dma_wqe_.read(sqba + uint64_t(qp.sq_ci) * kWqeSize, wqe, kWqeSize, true, n);
      qp.sq_ci = (qp.sq_ci + 1) % sq_depth(n);
      Q(n, R::q::STATCURSQPTRi) = qp.sq_ci;
      complete(qp, fetched ? roce::get_le16(wqe) : 0, fetched ? wqe[16] : 0, true);
      continue;
    }
    // The next WQE, from the prefetch cache (fetched ahead by prefetch_thread).
    const CachedWqe& cw = qp.wqe_cache.front();
    std::copy_n(cw.w, kWqeSize, wqe);
    const uint32_t sq_idx = cw.sq_idx;
    const bool ok = cw.ok;
    const uint64_t issued_ps = cw.issued_ps;
    // A WRITE needs write-retry buffers for its payload before it is sent;
    // without enough free ones the WQE stays in the SQ (WQEPROCSTS[4]).
    std::vector<uint32_t> bufs;
    if (ok && n != 1 && (wqe[16] == kWqeWrite || wqe[16] == kWqeWriteImm)) {
      const bool got = alloc_bufs(qp, roce::get_le32(wqe + 12), bufs);
      bool waiting = false;
      for (const Qp& q : qps_) waiting = waiting || q.buf_need != 0;
      G(R::g::WQEPROCSTS) = waiting ? G(R::g::WQEPROCSTS) | kWqeProcRetryBufsUnavail
                                    : G(R::g::WQEPROCSTS) & ~kWqeProcRetryBufsUnavail;
      if (!got) continue;
    }
    qp.wqe_cache.pop_front();
    --cached_total_;
    update_cache_status();
    cache_space_ev_.notify(SC_ZERO_TIME);
    qp.sq_ci = (qp.sq_ci + 1) % sq_depth(n);
    Q(n, R::q::STATCURSQPTRi) = qp.sq_ci;
    Q(n, R::q::STATWQEi) = lo16(Q(n, R::q::STATWQEi) + 1);
    G(R::g::QPMSTS) = (G(R::g::QPMSTS) & 0xFFFF) + ((lo16((G(R::g::QPMSTS) >> 16) + 1)) << 16);
    trace_qp(qp);
    if (!ok) {
      qp_fatal(qp, kFatalWqe, "WQE fetch outside host memory");
      continue;
    }
    // Decoded while it waited in the cache (A-ERNIC-25): only what is left
    // of wqe_decode_cycles after it was cached is waited here.
    {
      const uint64_t ready = issued_ps + uint64_t(cfg_.timing.wqe_decode_cycles) * core_.period_ps();
      const uint64_t now = ClockDomain::now_ps();
      core_.wait_cycles(ready > now ? core_.cycles_for_ps(ready - now) : 0);
    }
    ctx_.set(v_req_state_, kReqSend);
    qp.sending = true;
    execute_wqe(qp, wqe, sq_idx, std::move(bufs), issued_ps);
    qp.sending = false;
    // The QP went fatal while this WQE was being sent: qp_fatal completed
    // what was outstanding then; this WQE's entry may have been queued
    // after that, so it completes with ERRFLAG here, in order.
    if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) flush_outstanding(qp);
    trace_qp(qp);
    ++stats_.wqes_processed;
    ctx_.set(v_req_state_, qp.osq.empty() ? kReqIdle : kReqWaitAck);
  }
}

// WQE prefetch (A-ERNIC-24): WQEs are read ahead of the WQE processor into
// a cache shared by the QPs (round robin, up to wqe_fetch_burst WQEs of one
// QP per read, contiguous in its SQ), so that a WQE's fetch latency hides
// behind the previous WQE's transmission.
bool Ernic::can_prefetch(const Qp& qp) const {
  const uint32_t n = qp.qpn;
  if (!qp.enabled || !(G(R::g::XRNICCONF) & F::XRNICCONF_EN)) return false;
  if (sw_override(n)) return false;  // being re-pointed (A-SIDEBAND-2)
  if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return false;
  const uint32_t depth = sq_depth(n);
  if (depth == 0 || qp.sq_pi % depth == qp.pf_ci) return false;
  return qp.wqe_cache.size() < cfg_.timing.wqe_cache_per_qp && cached_total_ < cfg_.timing.wqe_cache_entries;
}

void Ernic::prefetch_thread() {
  for (;;) {
    apply_doorbells();
    Qp* q = nullptr;
    for (uint32_t i = 0; i < cfg_.num_qp && !q; ++i) {
      const uint32_t n = 1 + (pf_rr_ - 1 + i) % cfg_.num_qp;
      if (can_prefetch(qps_[n])) q = &qps_[n];
    }
    if (!q) {
      wait(doorbell_ev_ | cache_space_ev_);
      continue;
    }
    Qp& qp = *q;
    pf_rr_ = qp.qpn % cfg_.num_qp + 1;
    const uint32_t n = qp.qpn, depth = sq_depth(n);
    const uint32_t avail = (qp.sq_pi % depth + depth - qp.pf_ci) % depth;
    const uint32_t k = std::min({avail, cfg_.timing.wqe_fetch_burst,
                                 cfg_.timing.wqe_cache_per_qp - uint32_t(qp.wqe_cache.size()),
                                 cfg_.timing.wqe_cache_entries - cached_total_, depth - qp.pf_ci});
    const uint32_t start = qp.pf_ci, gen = qp.pf_gen;
    // Reserve the slots while the read is in flight.
    qp.pf_ci = (start + k) % depth;
    cached_total_ += k;
    std::vector<uint8_t> buf(size_t(k) * kWqeSize);
    const uint64_t sqba = q64(n, R::q::SQBAi, R::q::SQBAMSBi);
    const bool ok = dma_wqe_.read(sqba + uint64_t(start) * kWqeSize, buf.data(), buf.size(), true, n);
    if (qp.pf_gen != gen) {  // the cache was dropped meanwhile (fatal, re-enable): discard
      cached_total_ -= k;
      update_cache_status();
      continue;
    }
    for (uint32_t j = 0; j < k; ++j) {
      CachedWqe c;
      std::copy_n(buf.data() + size_t(j) * kWqeSize, kWqeSize, c.w);
      c.sq_idx = (start + j) % depth;
      c.ok = ok;
      c.issued_ps = ClockDomain::now_ps();
      qp.wqe_cache.push_back(c);
    }
    update_cache_status();
    prefetch_ev_.notify(SC_ZERO_TIME);
  }
}

void Ernic::drop_wqe_cache(Qp& qp) {
  cached_total_ -= uint32_t(qp.wqe_cache.size());
  qp.wqe_cache.clear();
  qp.pf_ci = qp.sq_ci;
  ++qp.pf_gen;
  update_cache_status();
  cache_space_ev_.notify(SC_ZERO_TIME);
}

// QPMSTS[0] WQE cache full, [1] WQE cache empty.
void Ernic::update_cache_status() {
  uint32_t& v = G(R::g::QPMSTS);
  v &= ~3u;
  if (cached_total_ >= cfg_.timing.wqe_cache_entries) v |= 1u;
  if (cached_total_ == 0) v |= 2u;
}

void Ernic::execute_wqe(Qp& qp, const uint8_t* w, uint32_t sq_idx, std::vector<uint32_t> bufs, uint64_t issued_ps) {
  const uint32_t n = qp.qpn;
  const uint16_t wrid = roce::get_le16(w + 0);
  const uint64_t laddr = roce::get_le64(w + 4);
  const uint32_t length = roce::get_le32(w + 12);
  const uint8_t opc = w[16];
  const uint64_t roffset = roce::get_le64(w + 20);
  const uint32_t rtag = roce::get_le32(w + 28);
  const uint32_t immdt = roce::get_le32(w + 48);

  if (n == 1) {
    // QP1: software built the whole frame (Ethernet .. MAD); ERNIC sends the
    // bytes as they are and appends the ICRC. UD: no ACK, the WQE completes
    // once the frame has been handed to the datapath.
    if (opc != kWqeSend) {
      ++stats_.illegal_wqes;
      raise(F::INT_ILLEGAL_OPC);
      return;
    }
    std::vector<uint8_t> frame(length);
    if (!dma_payload_.read(laddr, frame.data(), length, true, n, issued_ps)) {
      complete(qp, wrid, opc, true);
      return;
    }
    core_.wait_cycles(cfg_.timing.hdr_build_cycles);
    // The BTH opcode after Ethernet, IPv4 or IPv6, and UDP.
    const size_t bth = frame.size() > 13 && frame[12] == 0x86 && frame[13] == 0xDD ? 62 : 42;
    const uint8_t op = frame.size() > bth ? frame[bth] : 0;
    ctx_.set(v_tx_opcode_, op);
    // LSTOUTPKT: the frame's own BTH opcode and PSN, QP 1 (A-CNT-1).
    const uint32_t psn16 = frame.size() > bth + 11 ? uint32_t(frame[bth + 10]) << 8 | frame[bth + 11] : 0;
    G(R::g::LSTOUTPKT) = op | 1u << 8 | psn16 << 16;
    tx_enqueue_raw(std::move(frame));
    // A software-built CNP (PG332: sent on QP1) counts in OUTCNPPKTCNT.
    if (op == roce::op::CNP) G(R::g::OUTCNPPKTCNT) += 1;
    else count16(R::g::OUTAMPKTCNT, true);
    complete(qp, wrid, opc, false);
    return;
  }

  const bool is_write = opc == kWqeWrite || opc == kWqeWriteImm;
  const bool is_send = opc == kWqeSend || opc == kWqeSendImm || opc == kWqeSendInv;
  // The outstanding-queue entry of this WQE: a READ and every other message
  // use ceil(LENGTH / PMTU) PSNs, at least one (64-bit: no wrap).
  auto new_outstanding = [&](bool is_read) {
    const uint32_t mtu = pmtu(n);
    const uint32_t npsn = length == 0 ? 1 : uint32_t((uint64_t(length) + mtu - 1) / mtu);
    const uint32_t first = Q(n, R::q::SQPSNi) & roce::kPsnMask;
    Outstanding o{next_osq_id_++, wrid, opc, first, roce::psn_add(first, npsn - 1), is_read};
    o.laddr = laddr;
    o.length = length;
    o.sq_idx = sq_idx;
    o.ssn = Q(n, R::q::STATSSNi);
    o.roffset = roffset;
    o.rtag = rtag;
    return o;
  };
  if (opc == kWqeRead) {
    // One READ_REQUEST (RETH: ROFFSET, RTAG, LENGTH) with AckReq; it uses
    // ceil(LENGTH / PMTU) PSNs (at least one), one per expected response
    // (IBTA 9.7.1). The WQE stays outstanding until its last response has
    // been written to LADDR (rx_read_resp).
    Outstanding o = new_outstanding(/*is_read=*/true);
    const uint32_t first_psn = o.first_psn;
    o.resp_psn = first_psn;
    o.req_psn = first_psn;
    qp.osq.push_back(o);
    send_read_request(qp, first_psn, /*retry=*/false);
    Q(n, R::q::STATSSNi) = roce::psn_add(Q(n, R::q::STATSSNi), 1);
    return;
  }
  if (!is_write && !is_send) {
    ++stats_.illegal_wqes;
    raise(F::INT_ILLEGAL_OPC);  // PG332 INTSTS[5]; the WQE is consumed (assumption A-ERNIC-5)
    return;
  }
  Outstanding o = new_outstanding(/*is_read=*/false);
  const uint32_t first_psn = o.first_psn;
  o.immdt = immdt;
  o.payload_issued_ps = issued_ps;
  if (is_send && length <= kInlineMax) {
    // PG332 Table 2-1: SDATA carries a SEND payload of up to 16 bytes
    // inline; no payload read from LADDR (A-ERNIC-21).
    o.inline_data = true;
    std::copy_n(w + 32, kInlineMax, o.sdata);
  }
  o.bufs = std::move(bufs);
  qp.osq.push_back(o);
  send_packets(qp, o, first_psn, /*retry=*/false);
  Q(n, R::q::STATSSNi) = roce::psn_add(Q(n, R::q::STATSSNi), 1);
}

// The packets of a WRITE or SEND WQE from from_psn to its last PSN. First
// transmission: the payload is read from LADDR and a WRITE's payload is
// also copied into its write-retry buffers (through wqe_proc_wr_ddr_m_axi,
// in parallel with transmission). Retransmission: a WRITE's payload is read
// back from the retry buffers (LADDR when it has none, A-ERNIC-17), a
// SEND's from LADDR again. Every request sent (re)starts the local ACK timer.
void Ernic::send_packets(Qp& qp, const Outstanding& o, uint32_t from_psn, bool retry) {
  const uint32_t n = qp.qpn;
  const uint8_t opc = o.wqe_opcode;
  const bool is_write = opc == kWqeWrite || opc == kWqeWriteImm;
  const uint32_t pmtu = this->pmtu(n);
  const uint32_t length = o.length;
  const uint32_t npkts = length == 0 ? 1 : uint32_t((uint64_t(length) + pmtu - 1) / pmtu);
  const int32_t d = roce::psn_diff(from_psn, o.first_psn);
  const uint32_t i0 = d < 0 ? 0 : std::min(uint32_t(d), npkts - 1);
  roce::Frame f = frame_template(n);
  bool sent_any = false;
  for (uint32_t i = i0; i < npkts; ++i) {
    if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;  // the QP went fatal meanwhile: stop sending
    if (!qp.enabled) return;
    // A retransmission stops once an ACK has retired the WQE: a completed
    // WQE is never sent again (its SQ slot and buffer are software's again).
    // Within a WQE still outstanding, 3.1 resends from its start (PG332).
    if (retry && !still_outstanding(qp, o.first_psn)) return;
    const bool lead = !sent_any;  // the first packet this call sends: it pays the read latency
    sent_any = true;
    const bool first = i == 0, last = i + 1 == npkts;
    const uint32_t off = i * pmtu;
    const uint32_t chunk = std::min(pmtu, length - off);
    uint8_t op;
    using namespace roce::op;
    if (is_write) {
      const bool imm = opc == kWqeWriteImm;
      op = npkts == 1 ? (imm ? RC_WRITE_ONLY_IMM : RC_WRITE_ONLY)
           : first    ? RC_WRITE_FIRST
           : last     ? (imm ? RC_WRITE_LAST_IMM : RC_WRITE_LAST)
                      : RC_WRITE_MIDDLE;
    } else {
      const bool imm = opc == kWqeSendImm, inv = opc == kWqeSendInv;
      op = npkts == 1 ? (imm ? RC_SEND_ONLY_IMM : inv ? RC_SEND_ONLY_INV : RC_SEND_ONLY)
           : first    ? RC_SEND_FIRST
           : last     ? (imm ? RC_SEND_LAST_IMM : inv ? RC_SEND_LAST_INV : RC_SEND_LAST)
                      : RC_SEND_MIDDLE;
    }
    f.bth.opcode = op;
    f.bth.psn = roce::psn_add(o.first_psn, i);
    f.bth.ack_req = last;  // assumption A-ERNIC-2: AckReq on the last packet of a message
    f.reth.reset();
    f.immdt.reset();
    f.ieth.reset();
    if (is_write && first) f.reth = roce::Reth{o.roffset, o.rtag, length};
    if (last && (opc == kWqeWriteImm || opc == kWqeSendImm)) f.immdt = o.immdt;
    if (last && opc == kWqeSendInv) f.ieth = o.rtag;
    f.payload.resize(chunk);
    if (o.inline_data) {
      std::copy_n(o.sdata, chunk, f.payload.data());
    } else if (retry && is_write && !o.bufs.empty()) {
      // The copy must have landed before it is read back.
      while (!copyq_.empty() || copy_busy_) wait(copy_done_ev_);
      buf_io(o.bufs, off, f.payload.data(), chunk, /*write=*/false, /*with_latency=*/lead, n);
    } else if (!dma_payload_.read(o.laddr + off, f.payload.data(), chunk, /*with_latency=*/lead, n,
                                  retry ? Dma::kIssuedNow : o.payload_issued_ps)) {
      qp_fatal(qp, kFatalWqe, "payload read outside host memory");
      return;
    }
    if (!retry && is_write && !o.bufs.empty() && chunk)
      buf_io(o.bufs, off, f.payload.data(), chunk, /*write=*/true, false, n);
    // The header of a message's first packet is built once its payload is
    // there; the next ones are built while the previous payload streams
    // (pipelined, A-ERNIC-25), so they cost no extra cycles.
    if (lead) core_.wait_cycles(cfg_.timing.hdr_build_cycles);
    else core_.sync();
    if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
    Q(n, R::q::SQPSNi) = roce::psn_add(f.bth.psn, 1);
    const uint32_t lst = op | (n & 0xFF) << 8 | (f.bth.psn & 0xFFFF) << 16;
    ctx_.set(v_tx_opcode_, op);
    trace_qp(qp);
    if (retry) {
      tx_enqueue(f, Resend{n, o.id, lst, is_write});  // counted when it leaves (tx_thread)
    } else {
      G(R::g::LSTOUTPKT) = lst;
      count16(R::g::OUTIOPKTCNT, is_write);
      tx_enqueue(f);
    }
    arm_timer(qp);
  }
}

// A READ_REQUEST for the outstanding READ that starts at first_psn. First
// time: the whole READ. Re-issue (A-ERNIC-12): 3.1 asks for the whole READ
// again (the responses it already has come again as duplicates); 4.x from
// the first missing response PSN, with the RETH's VA and length moved past
// the bytes already written (IBTA 9.7.5.2.x).
void Ernic::send_read_request(Qp& qp, uint32_t first_psn, bool retry) {
  const uint32_t n = qp.qpn;
  Outstanding* e = nullptr;
  for (auto& o : qp.osq)
    if (o.is_read && o.first_psn == first_psn) e = &o;
  if (!e) return;
  // 3.1 asks for the whole READ again; 4.x from the first missing response.
  // Either way the responses already written stay written: the requester
  // still expects resp_psn, and a response below it is a duplicate.
  if (retry) e->reissue_wait = true;
  const bool from_missing = retry && partial_resend();
  const uint32_t skip = from_missing ? e->resp_off : 0;
  e->req_psn = from_missing ? e->resp_psn : e->first_psn;
  const uint32_t psn = e->req_psn, last_psn = e->last_psn;
  roce::Frame f = frame_template(n);
  f.bth.opcode = roce::op::RC_READ_REQUEST;
  f.bth.psn = psn;
  f.bth.ack_req = true;
  f.reth = roce::Reth{e->roffset + skip, e->rtag, e->length - skip};
  const uint64_t id = e->id;
  core_.wait_cycles(cfg_.timing.hdr_build_cycles);
  if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
  Q(n, R::q::SQPSNi) = roce::psn_add(last_psn, 1);
  const uint32_t lst = roce::op::RC_READ_REQUEST | (n & 0xFF) << 8 | (psn & 0xFFFF) << 16;
  ctx_.set(v_tx_opcode_, roce::op::RC_READ_REQUEST);
  trace_qp(qp);
  if (retry) {
    tx_enqueue(f, Resend{n, id, lst, true});  // counted when it leaves (tx_thread)
  } else {
    G(R::g::LSTOUTPKT) = lst;
    count16(R::g::OUTIOPKTCNT, true);
    tx_enqueue(f);
  }
  arm_timer(qp);
}

void Ernic::tx_thread() {
  for (;;) {
    while (txq_.empty()) wait(tx_ev_);
    TxFrame t = std::move(txq_.front());
    txq_.pop_front();
    tx_pop_ev_.notify(SC_ZERO_TIME);
    if (t.resend) {
      // The last moment ERNIC can withdraw a retransmission: once its
      // descriptor is valid towards roce_tx it must stay so (AXI4-Stream).
      // A WQE that an ACK or response retired meanwhile is not requested
      // again (its SQ slot and buffer are software's once its CQE is out).
      const Resend& r = *t.resend;
      if (!resend_wanted(r)) {
        ++stats_.resends_cancelled;
        ctx_.event(fmt::format("{}.qp{}", scope_, r.qpn),
                   fmt::format("retransmission of PSN 0x{:06x} cancelled: its WQE was acknowledged meanwhile",
                               t.desc.psn));
        ctx_.bump();
        continue;
      }
      G(R::g::LSTOUTPKT) = r.lstoutpkt;
      count16(R::g::OUTIOPKTCNT, r.io_high);
      ++G(R::g::RETRYCNTSTS);
      ++stats_.retransmitted_packets;
    }
    if (on_tx_committed) on_tx_committed(t.desc);
    // Blocks until roce_tx has taken the descriptor (the payload streams on).
    if (datapath) datapath->tx(t.desc, std::move(t.payload));
    ctx_.bump();
  }
}

void Ernic::complete(Qp& qp, uint16_t wrid, uint8_t wqe_opcode, bool error) {
  const uint32_t n = qp.qpn;
  const uint32_t depth = sq_depth(n) ? sq_depth(n) : 1;  // the CQ has the SQ's depth
  const uint32_t head = lo16(Q(n, R::q::CQHEADi)) % depth;
  if (Q(n, R::q::QPCONFi) & F::QPCONF_CQE_WR) {
    const uint32_t cqe = wrid | uint32_t(wqe_opcode) << 16 | uint32_t(error ? 1 : 0) << 24;
    dma_cmpl_.write32(q64(n, R::q::CQBAi, R::q::CQBAMSBi) + uint64_t(head) * 4, cqe, n);
    ++stats_.cqes_written;
    if (ctx_.log)
      ctx_.log->cqe(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), n, head, wrid, wqe_opcode, error, cqe);
  }
  const uint32_t new_head = (head + 1) % depth;
  Q(n, R::q::CQHEADi) = new_head;
  dma_cmpl_.write32(q64(n, R::q::CQDBADDi, R::q::CQDBADDMSBi), new_head, n);
  if (!(Q(n, R::q::QPCONFi) & F::QPCONF_HWHS_DIS) && cq_db_sink) {
    ctx_.set(v_cq_db_addr_, (n * 4) & 0x3FF);
    ctx_.set(v_cq_db_cnt_, new_head);
    cq_db_sink(n, new_head);  // resp_hndler_o_send_cq_db
  }
  if (Q(n, R::q::QPCONFi) & F::QPCONF_CQ_IRQ) {
    qp_bank_set(cfg_.layout.cq_int_bank, n);
    raise(F::INT_WQE_DONE);
  }
  trace_qp(qp);
  ack_ev_.notify(SC_ZERO_TIME);
}

bool Ernic::outstanding_id(const Qp& qp, uint64_t id) const {
  for (const auto& o : qp.osq)
    if (o.id == id) return true;
  return false;
}

bool Ernic::resend_wanted(const Resend& r) const {
  const Qp& qp = qps_[r.qpn];
  if (!qp.enabled || (Q(r.qpn, R::q::STATQPi) & F::STATQP_FATAL)) return false;
  for (const auto& o : qp.osq)
    if (o.id == r.osq_id) return !acknowledged(qp, o);
  return false;
}

// A WRITE or SEND still in the outstanding queue that an ACK or NAK has
// covered: it stays there only because a READ before it has not completed
// (completions come in order), and is never resent.
bool Ernic::acknowledged(const Qp& qp, const Outstanding& o) const {
  return !o.is_read && qp.ack_high_valid && roce::psn_le(o.last_psn, qp.ack_high);
}

bool Ernic::still_outstanding(const Qp& qp, uint32_t first_psn) const {
  for (const auto& o : qp.osq)
    if (o.first_psn == first_psn) return true;
  return false;
}

// Every outstanding WQE completes with ERRFLAG, oldest first.
void Ernic::flush_outstanding(Qp& qp) {
  while (!qp.osq.empty()) {
    Outstanding o = qp.osq.front();
    qp.osq.pop_front();
    free_bufs(o);
    complete(qp, o.wrid, o.wqe_opcode, true);
  }
}

void Ernic::qp_fatal(Qp& qp, uint8_t code, const std::string& why) {
  const uint32_t n = qp.qpn;
  if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
  ++stats_.fatal_events;
  Q(n, R::q::STATQPi) |= F::STATQP_FATAL;
  ctx_.set(qp.v_fatal, 1);  // in the waveform at the instant the QP turns fatal
  drop_wqe_cache(qp);  // the flush reads the SQ from sq_ci again
  if (ctx_.log)
    ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), n, "qp_fatal",
                    fmt::format("code 0x{:02x}: {}", code, why));
  ctx_.event(fmt::format("{}.qp{}", scope_, n), fmt::format("QP fatal, code 0x{:02x}: {}", code, why));
  // Error-status queue entry: word 0 = QPN[31:16] | code[15:0] (64-bit entries).
  const uint64_t base = uint64_t(G(R::g::IPKTERRQBA)) | uint64_t(G(R::g::IPKTERRQBAMSB)) << 32;
  const uint32_t size = G(R::g::IPKTERRQSZ) & 0xFFFF;
  if (base && size) {
    const uint32_t wp = lo16(G(R::g::IPKTERRQWPTR)) % size;
    dma_cmpl_.write32(base + uint64_t(wp) * 8, n << 16 | code);
    dma_cmpl_.write32(base + uint64_t(wp) * 8 + 4, 0);
    G(R::g::IPKTERRQWPTR) = (wp + 1) % size;  // the hardware wraps and never checks overflow
  }
  qp.resend_pending = false;
  qp.ack_deadline_ps = qp.rnr_until_ps = 0;
  qp.buf_need = 0;
  flush_outstanding(qp);
  raise(F::INT_FATAL);
  trace_qp(qp);
}

// ------------------------------------------------------------- RX / responder

void Ernic::rx_push(const seam::RxDesc& desc, roce::Bytes payload) {
  // roce_cmac_s_axis has no tready: a frame the RX buffer cannot hold is lost.
  const uint64_t size = desc.frame_len;
  if (rx_buf_bytes_ + size > cfg_.timing.rx_buffer_bytes) {
    ++stats_.rx_overflow_drops;
    const std::string what = fmt::format(
        "RX buffer overflow on node {}: a {}-byte frame arrived with {} of {} bytes in use; frame lost "
        "({} lost so far; XRNIC_PAUSE_CONF 0x{:x}, XRNIC_BUF_THRESHOLD_ROCE 0x{:08x})",
        cfg_.node, size, rx_buf_bytes_, cfg_.timing.rx_buffer_bytes, stats_.rx_overflow_drops,
        G(R::g::XRNIC_PAUSE_CONF), G(R::g::XRNIC_BUF_THRESHOLD_ROCE));
    if (!rx_overflowing_) ctx_.error(scope_ + ".rx_buffer", what);  // once per run of losses
    rx_overflowing_ = true;
    if (ctx_.log) ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), std::nullopt, "rx_overflow", what);
    return;
  }
  rx_overflowing_ = false;
  rx_buf_bytes_ += size;
  stats_.rx_buffer_peak = std::max(stats_.rx_buffer_peak, rx_buf_bytes_);
  rx_buffer_changed();
  rx_arrival_.push_back(ClockDomain::now_ps());
  rxq_.push_back(RxFrame{desc, std::move(payload)});
  ctx_.set(v_rxb_tvalid_, 1);
  rx_ev_.notify(SC_ZERO_TIME);
}

// PFC (XRNIC_PAUSE_CONF[0]): ctl_tx_pause_req[RoCE priority] rises when the
// RX buffer level reaches XOFF (XRNIC_BUF_THRESHOLD_ROCE[31:16], bytes;
// 0: never) and falls when it is back at or below XON ([15:0]).
void Ernic::rx_buffer_changed() {
  const uint32_t conf = G(R::g::XRNIC_PAUSE_CONF), thr = G(R::g::XRNIC_BUF_THRESHOLD_ROCE);
  const uint32_t xon = thr & 0xFFFF, xoff = thr >> 16;
  const int bit = pfc::pause_bit(conf, true);
  bool want = rx_xoff_;
  if (bit < 0)
    want = false;
  else if (!rx_xoff_ && xoff != 0 && rx_buf_bytes_ >= xoff)
    want = true;
  else if (rx_xoff_ && rx_buf_bytes_ <= xon)
    want = false;
  if (want == rx_xoff_) return;
  rx_xoff_ = want;
  if (want) ++stats_.rx_xoff;
  const uint16_t req = want ? uint16_t(1u << bit) : 0;
  if (cmac) cmac->set_tx_pause_req(req);
  if (ctx_.log)
    ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), std::nullopt, want ? "rx_xoff" : "rx_xon",
                    fmt::format("RX buffer {} bytes {} {} {}: ctl_tx_pause_req = 0x{:03x}", rx_buf_bytes_,
                                want ? ">=" : "<=", want ? "XOFF" : "XON", want ? xoff : xon, req));
}

void Ernic::rx_thread() {
  for (;;) {
    // Coalescing timeouts that passed (queued by timer_thread, in order).
    if (!ack_fire_q_.empty()) {
      Qp& qp = qps_[ack_fire_q_.front()];
      ack_fire_q_.pop_front();
      if (qp.ack_fire && qp.unacked && qp.enabled && !(Q(qp.qpn, R::q::STATQPi) & F::STATQP_FATAL))
        send_ack(qp.qpn, roce::aeth::ack(), qp.unacked_psn);
      qp.ack_fire = false;
      trace_qp(qp);
      continue;
    }
    if (rxq_.empty()) {
      wait(rx_ev_);
      continue;
    }
    RxFrame raw = std::move(rxq_.front());
    rxq_.pop_front();
    const uint64_t arrived = rx_arrival_.front();
    rx_arrival_.pop_front();
    const uint64_t t_start = ClockDomain::now_ps();
    ctx_.set(v_rxb_tvalid_, !rxq_.empty());
    ctx_.set(v_rxb_tready_, 0);
    ctx_.set(v_rx_valid_, 1);
    // The parser is pipelined (A-ERNIC-25): a frame is validated
    // rx_parse_cycles after it arrived, overlapping the previous frame's
    // payload write when the handler was still busy with it.
    {
      const uint64_t ready = arrived + uint64_t(cfg_.timing.rx_parse_cycles) * core_.period_ps();
      const uint64_t now = ClockDomain::now_ps();
      core_.wait_cycles(ready > now ? core_.cycles_for_ps(ready - now) : 0);
    }
    handle_rx(raw);
    if (cfg_.timing.rx_handler_gbps > 0) {  // a slowed receiver
      const uint64_t until = t_start + uint64_t(double(raw.desc.frame_len) * 8000.0 / cfg_.timing.rx_handler_gbps);
      if (until > ClockDomain::now_ps()) wait(ps(until - ClockDomain::now_ps()));
    }
    ctx_.set(v_rx_valid_, 0);
    ctx_.set(v_rxb_tready_, 1);
    rx_buf_bytes_ -= raw.desc.frame_len;  // the handler is done with it: out of the RX buffer
    rx_buffer_changed();
    ctx_.bump();
  }
}

void Ernic::drop(const std::string& why, uint32_t syndrome) {
  ++stats_.rx_dropped;
  count16(R::g::INALLDRPPKTCNT, true);
  if (syndrome == 0 || !rx_desc_) return;  // not a validation failure (duplicates, full RQ, ...)
  // Error buffer (PG332): with XRNICCONF[5] every validation failure is
  // logged as a 32-bit syndrome followed by a copy of the packet's header
  // (from the Ethernet header to the last extension header, rebuilt from
  // roce_rx's descriptor: seam::rx_header_bytes; zeros after it), in
  // ERRBUFSZ[31:16]-byte entries; ERRBUFWPTR counts them; INTSTS[0] is
  // raised (A-ERNIC-18).
  ++stats_.validation_errors;
  raise(F::INT_PKT_VALID_ERR);
  if (!(G(R::g::XRNICCONF) & F::XRNICCONF_ERRBUF_EN)) return;
  const uint64_t base = uint64_t(G(R::g::ERRBUFBA)) | uint64_t(G(R::g::ERRBUFBAMSB)) << 32;
  const uint32_t num = G(R::g::ERRBUFSZ) & 0xFFFF, size = G(R::g::ERRBUFSZ) >> 16;
  if (!base || !num || size < 4) return;
  const uint32_t wp = lo16(G(R::g::ERRBUFWPTR));
  std::vector<uint8_t> e(size, 0);
  roce::put_le32(e.data(), syndrome);
  const roce::Bytes hdr = seam::rx_header_bytes(*rx_desc_);
  std::copy_n(hdr.begin(), std::min<size_t>(size - 4, hdr.size()), e.begin() + 4);
  dma_rx_.write(base + uint64_t(wp % num) * size, e.data(), e.size());
  G(R::g::ERRBUFWPTR) = lo16(wp + 1);
  ctx_.event(scope_ + ".rx_pkt_hndler", fmt::format("validation failure ({}), syndrome 0x{:08x}, error buffer entry {}",
                                                    why, syndrome, wp % num));
}

namespace {
roce::Ipv6Addr ip6_of(const seam::Ip& ip) {
  roce::Ipv6Addr a;
  std::copy(ip.begin(), ip.end(), a.b.begin());
  return a;
}
uint32_t ip4_of(const seam::Ip& ip) {
  return uint32_t(ip[12]) << 24 | uint32_t(ip[13]) << 16 | uint32_t(ip[14]) << 8 | ip[15];
}
uint64_t mac_of(const roce::MacAddr& m) {
  uint64_t v = 0;
  for (uint8_t b : m.b) v = v << 8 | b;
  return v;
}
}  // namespace

void Ernic::handle_rx(const RxFrame& r) {
  const seam::RxDesc& d = r.desc;
  rx_desc_ = &d;
  struct Clear { const seam::RxDesc*& p; ~Clear() { p = nullptr; } } clear{rx_desc_};
  count16(R::g::INALLDRPPKTCNT, false);
  if (!(G(R::g::XRNICCONF) & F::XRNICCONF_EN)) return drop("ERNIC disabled");
  ctx_.set(v_rx_opcode_, d.opcode);
  // PG332's validation (Table 2-3). roce_rx's checks come in the syndrome
  // (1 IP version, 2 IPv4 checksum, 4 lengths, 8 header, 30 ICRC, 31 FCS);
  // the handler adds its own, each bit on its own (several may be set).
  uint32_t syn = d.syndrome;
  std::string why;
  auto fail = [&](uint32_t bit, const std::string& what) {
    syn |= bit;
    why += (why.empty() ? "" : ", ") + what;
  };
  if (syn & kSynIpVersion) why += "IP version";
  if (syn & kSynIpChecksum) why += std::string(why.empty() ? "" : ", ") + "IPv4 header checksum";
  if (syn & kSynLength) why += std::string(why.empty() ? "" : ", ") + "length";
  if (syn & kSynHeader) why += std::string(why.empty() ? "" : ", ") + "header (IHL or opcode)";
  if (syn & kSynIcrc) {
    ++stats_.rx_icrc_errors;
    why += std::string(why.empty() ? "" : ", ") + "ICRC";
  }
  if (syn & kSynFcs) why += std::string(why.empty() ? "" : ", ") + "FCS";
  // PG332 Table 2-3: IPv4 flags other than 010 (DF) or a fragment offset.
  if (!d.ipv6 && d.ip_frag != 0x4000) fail(kSynIpFlags, "IPv4 flags / fragment offset");
  const roce::Frame tmpl_local = frame_template(1);
  if (d.eth_dst != mac_of(tmpl_local.eth.src)) fail(kSynMacDa, "MAC DA");
  if (d.ipv6 ? ip6_of(d.ip_dst) != local_ip6() : ip4_of(d.ip_dst) != G(R::g::IPv4XADD)) fail(kSynIpDa, "IP DA");
  if (d.tver != 0) fail(kSynTver, "TVer");
  const uint32_t n = d.dest_qp;
  const uint32_t enabled_qps = cfg_.layout.qp_count_in_xrnicconf
                                   ? (G(R::g::XRNICCONF) & F::XRNICCONF_NUMQP_MASK) >> F::XRNICCONF_NUMQP_SHIFT
                                   : G(R::g::XRNIC_CONF_QP_EN) & 0xFFF;
  const bool qp_ok = n != 0 && n <= cfg_.num_qp && n <= enabled_qps && qps_[n].enabled;
  if (!qp_ok) fail(kSynQp, n == 0 || n > cfg_.num_qp || n > enabled_qps ? "QP unsupported" : "QP disabled");
  if (qp_ok && n != 1) {
    // RC: the IP version must be the QP's (QPCONFi[7]) and the source the QP's remote.
    const roce::Frame t = frame_template(n);
    if (d.ipv6 != t.ipv6) fail(kSynIpVersion, d.ipv6 ? "IPv6 frame for an IPv4 QP" : "IPv4 frame for an IPv6 QP");
    else if (d.eth_src != mac_of(t.eth.dst) ||
             (d.ipv6 ? ip6_of(d.ip_src) != t.ip6.dst : ip4_of(d.ip_src) != t.ip4.dst.v))
      fail(kSynSource, "source is not the QP's remote");
  }
  if (syn) return drop(why, syn);
  Qp& qp = qps_[n];
  // A fatal RC QP takes nothing more in (no ACK, no NAK) until recovered.
  if (n != 1 && (Q(n, R::q::STATQPi) & F::STATQP_FATAL)) return drop("QP fatal");
  const roce::Frame f = seam::frame_from_rx_desc(d, r.payload);
  if (on_rx_taken) on_rx_taken(f);
  G(R::g::LSTINPKT) = f.bth.opcode | (n & 0xFF) << 8 | (f.bth.psn & 0xFFFF) << 16;
  if (n == 1) return rx_qp1(f, d);
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  if (!oi) return drop("unknown opcode");
  if (oi->kind == roce::OpKind::Cnp) return rx_cnp(qp, f);
  // ECN CE (11) on an arriving packet: a CNP must be sent to its sender;
  // software does that on QP1 (PG332): CNPSCHDSTS bit and INTSTS[8].
  if (((f.ipv6 ? f.ip6.traffic_class : f.ip4.tos) & 0x3) == 0x3) {
    qp_bank_set(cfg_.layout.cnp_bank, n);
    raise(F::INT_CNP);
  }
  // An opcode ERNIC does not support on an RC QP (atomics, UD opcodes): with
  // the expected PSN, NAK-invalid and fatal code 0x04 (PG332 "unsupported
  // opcode with a good PSN"); otherwise dropped like any stray request.
  const auto unsupported = [&]() {
    const uint32_t expected = roce::psn_add(Q(n, R::q::LSTRQREQi) & roce::kPsnMask, 1);
    if (f.bth.psn != expected) return drop(fmt::format("unsupported opcode {} out of sequence", oi->name));
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    qp_fatal(qp, kFatalUnsupportedOp, fmt::format("unsupported opcode {}", oi->name));
  };
  switch (oi->kind) {
    case roce::OpKind::Ack:
      return rx_ack(qp, f);
    case roce::OpKind::Send:
    case roce::OpKind::Write:
      if ((f.bth.opcode >> 5) != 0) return unsupported();
      return rx_request(qp, f);
    case roce::OpKind::ReadRequest:
      return rx_request(qp, f);
    case roce::OpKind::ReadResponse:
      return rx_read_resp(qp, f);
    case roce::OpKind::Atomic:
      return unsupported();
    case roce::OpKind::AtomicAck:  // the requester issues no atomics (A-ERNIC-31)
      return qp_fatal(qp, kFatalBadAckOpcode, fmt::format("{} at PSN 0x{:06x}: no atomic was issued", oi->name,
                                                          f.bth.psn));
    default:
      ctx_.error(fmt::format("{}.qp{}", scope_, n),
                 fmt::format("incoming {}: this opcode is not modelled yet", oi->name));
      return drop("opcode not modelled");
  }
}

void Ernic::rx_qp1(const roce::Frame& f, const seam::RxDesc& d) {
  if (f.bth.opcode != roce::op::UD_SEND_ONLY || !f.deth) return drop("QP1 accepts UD SEND_ONLY only");
  const uint32_t depth = rq_depth(1);
  if (depth == 0) return drop("QP1 RQ depth is 0");
  const uint32_t pi = lo16(Q(1, R::q::STATRQPIDBi)) % depth;
  const uint32_t ci = lo16(Q(1, R::q::RQCIi)) % depth;
  if ((pi + 1) % depth == ci) return drop("QP1 RQ full");
  // 3.x QP1 element: a 40-byte L3 slot (IPv4: 20 zero bytes then the IPv4
  // header; IPv6: the IPv6 header), then UDP, BTH, DETH and the MAD.
  const size_t ip_len = f.ipv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen;
  std::vector<uint8_t> elem(40 - ip_len, 0);
  const roce::Bytes hdr = seam::rx_header_bytes(d);  // the headers as received
  elem.insert(elem.end(), hdr.begin() + roce::kEthHdrLen, hdr.end());
  elem.insert(elem.end(), f.payload.begin(), f.payload.end());
  elem.insert(elem.end(), f.pad.begin(), f.pad.end());
  const uint64_t esz = uint64_t(Q(1, R::q::QPCONFi) >> F::QPCONF_RQBUFSZ_SHIFT) * 256;
  if (elem.size() > esz) return drop("MAD larger than the QP1 RQ element");
  const uint64_t rqba = q64(1, R::q::RQBAi, R::q::RQBAMSBi);
  dma_rx_.write(rqba + pi * esz, elem.data(), elem.size(), 1u);
  const uint32_t npi = (pi + 1) % depth;
  Q(1, R::q::STATRQPIDBi) = npi;
  set_rq_buf_ca(1, rqba + npi * esz);
  dma_rx_.write32(q64(1, R::q::RQWPTRDBADDi, R::q::RQWPTRDBADDMSBi), npi, 1u);
  count16(R::g::INAMPKTCNT, true);
  ++stats_.mads_received;
  if (Q(1, R::q::QPCONFi) & F::QPCONF_RQ_IRQ) qp_bank_set(cfg_.layout.rq_int_bank, 1);
  raise(F::INT_MAD);
}

void Ernic::send_ack(uint32_t n, uint8_t syndrome, uint32_t psn) {
  // Every ACK/NAK covers the packets accepted so far (coalescing restarts).
  Qp& qp = qps_[n];
  qp.unacked = 0;
  qp.ack_due_ps = 0;
  qp.ack_fire = false;
  const uint32_t msn = Q(n, R::q::STATMSNi) & roce::kPsnMask;
  core_.wait_cycles(cfg_.timing.ack_build_cycles);
  roce::Frame a = frame_template(n);
  a.bth.opcode = roce::op::RC_ACK;
  a.bth.psn = psn & roce::kPsnMask;
  a.aeth = roce::Aeth{syndrome, msn};
  G(R::g::LSTOUTPKT) = roce::op::RC_ACK | (n & 0xFF) << 8 | (psn & 0xFFFF) << 16;
  if (roce::aeth::type(syndrome) == 0) {
    count16(R::g::OUTAMPKTCNT, false);
    ++stats_.acks_sent;
  } else {
    G(R::g::OUTNAKPKTCNT) = lo16(G(R::g::OUTNAKPKTCNT) + 1);
    ++stats_.naks_sent;
    // A request refused with NAK-invalid / remote access / remote operational
    // is an invalid packet; out-of-sequence ones count where they arrive (A-CNT-1).
    if (roce::aeth::type(syndrome) == 3 && syndrome != roce::aeth::kNakPsnSeq) count16(R::g::ININVDUPCNT, false);
  }
  tx_enqueue(a);
}

void Ernic::rx_request(Qp& qp, const roce::Frame& f) {
  using roce::OpPos;
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  const uint32_t last = Q(n, R::q::LSTRQREQi);
  const uint32_t expected = roce::psn_add(last & roce::kPsnMask, 1);
  switch (roce::psn_classify(f.bth.psn, expected)) {
    case roce::PsnClass::Duplicate:
      ++stats_.duplicates;
      count16(R::g::ININVDUPCNT, true);
      // A duplicate READ is executed again from its own PSN (IBTA 9.9.4.2).
      if (oi.kind == roce::OpKind::ReadRequest) return rx_read_request(qp, f, true);
      // Re-ACK without re-executing (IBTA 9.9.4.1).
      send_ack(n, roce::aeth::ack(), roce::psn_add(expected, -1));
      return;
    case roce::PsnClass::OutOfSequence:
      count16(R::g::ININVDUPCNT, false);
      if (!qp.nak_psn_sent) {
        qp.nak_psn_sent = true;
        send_ack(n, roce::aeth::kNakPsnSeq, expected);
      }
      return;
    case roce::PsnClass::Expected:
      qp.nak_psn_sent = false;
      break;
  }
  const bool is_write = oi.kind == roce::OpKind::Write;
  const bool is_read = oi.kind == roce::OpKind::ReadRequest;
  // Opcode sequence: after a FIRST/MIDDLE of a kind, only MIDDLE/LAST of the
  // same kind; otherwise only FIRST/ONLY.
  const roce::OpcodeInfo* prev = roce::opcode_info(uint8_t(last >> 24));
  const bool in_msg = prev && (prev->pos == OpPos::First || prev->pos == OpPos::Middle);
  const bool continues = oi.pos == OpPos::Middle || oi.pos == OpPos::Last;
  const uint32_t pmtu = this->pmtu(n);
  const size_t len = f.payload.size();
  const bool full_pkt = oi.pos == OpPos::First || oi.pos == OpPos::Middle;
  const bool len_bad = !is_read && ((full_pkt && (len != pmtu || f.bth.pad_cnt != 0)) || len > pmtu);
  if (in_msg != continues || (in_msg && prev->kind != oi.kind)) {
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    if (len_bad)  // both at once: 0x03 / 0x13 (PG332 "01 and 02 together")
      return qp_fatal(qp, is_write ? kFatalWriteOpSeqAndLen : kFatalOpSeqAndLen, "opcode sequence and payload length / pad");
    return qp_fatal(qp, is_write ? kFatalWriteOpSeq : kFatalOpSeq, "opcode sequence");
  }
  if (is_read) return rx_read_request(qp, f, false);
  if (len_bad) {
    send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
    return qp_fatal(qp, is_write ? kFatalWriteLen : kFatalLen, "payload length / pad");
  }
  if (is_write) {
    if (oi.pos == OpPos::First || oi.pos == OpPos::Only) {
      const roce::Reth& r = *f.reth;
      std::string why;
      uint64_t phys = 0;
      if (const uint8_t code = check_reth(n, r, /*read=*/false, phys, why)) {
        send_ack(n, roce::aeth::kNakRemoteAccess, f.bth.psn);
        return qp_fatal(qp, code, why);
      }
      qp.wr_phys = phys;
      qp.wr_left = r.dma_len;
      qp.wr_active = true;
    }
    if (len > qp.wr_left || ((oi.pos == OpPos::Last || oi.pos == OpPos::Only) && len != qp.wr_left)) {
      send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
      return qp_fatal(qp, kFatalRethLen, "WRITE payload does not match the RETH DMA length");
    }
    if (len) dma_rx_.write(qp.wr_phys, f.payload.data(), len, n);
    qp.wr_phys += len;
    qp.wr_left -= len;
    if (oi.pos == OpPos::Last || oi.pos == OpPos::Only) qp.wr_active = false;
  } else {
    const uint32_t depth = rq_depth(n);
    const uint32_t pi = depth ? lo16(Q(n, R::q::STATRQPIDBi)) % depth : 0;
    const uint32_t ci = depth ? lo16(Q(n, R::q::RQCIi)) % depth : 0;
    if (oi.pos == OpPos::First || oi.pos == OpPos::Only) {
      if (depth == 0 || (pi + 1) % depth == ci) {
        // RQ full: RNR NAK with TIMEOUTCONFi[20:16]; the PSN is not consumed.
        const uint8_t timer = (Q(n, R::q::TIMEOUTCONFi) >> 16) & 0x1F;
        Q(n, R::q::STATQPi) |= F::STATQP_RQ_OVF;
        G(R::g::OUTRNRPKTSTS) = (n & 0xFF) | (lo16((G(R::g::OUTRNRPKTSTS) >> 16) + 1) << 16);
        raise(F::INT_RNR_NAK);
        qp.rnr_nak_sent = true;
        send_ack(n, roce::aeth::rnr_nak(timer), f.bth.psn);
        trace_qp(qp);
        return;
      }
      qp.rnr_nak_sent = false;
      qp.send_off = 0;
    }
    const uint64_t esz = uint64_t(Q(n, R::q::QPCONFi) >> F::QPCONF_RQBUFSZ_SHIFT) * 256;
    if (qp.send_off + len > esz) {
      send_ack(n, roce::aeth::kNakInvalid, f.bth.psn);
      return qp_fatal(qp, kFatalLen, "SEND larger than the RQ element");
    }
    const uint64_t rqba = q64(n, R::q::RQBAi, R::q::RQBAMSBi);
    if (len) dma_rx_.write(rqba + pi * esz + qp.send_off, f.payload.data(), len, n);
    qp.send_off += len;
    count16(R::g::INSRRPKTCNT, false);  // every accepted SEND packet (A-CNT-1)
    if (oi.pos == OpPos::Last || oi.pos == OpPos::Only) {
      const uint32_t npi = (pi + 1) % depth;
      Q(n, R::q::STATRQPIDBi) = npi;
      set_rq_buf_ca(n, rqba + npi * esz);
      dma_rx_.write32(q64(n, R::q::RQWPTRDBADDi, R::q::RQWPTRDBADDMSBi), npi, n);
      if (rq_db_sink) {
        ctx_.set(v_rq_db_addr_, (n * 4) & 0x3FF);
        ctx_.set(v_rq_db_data_, npi);
        rq_db_sink(n, npi);
      }
      if (Q(n, R::q::QPCONFi) & F::QPCONF_RQ_IRQ) {
        qp_bank_set(cfg_.layout.rq_int_bank, n);
        raise(F::INT_RQ_PKT);
      }
      qp.send_off = 0;
    }
  }
  // Immediate data and invalidate R_Keys leave on the ieth_immdt stream, not
  // through the RQ (PG332 section 4).
  if ((oi.pos == OpPos::Last || oi.pos == OpPos::Only) && (f.immdt || f.ieth)) {
    const uint8_t type = f.ieth ? kIethSendInv : is_write ? kIethWriteImm : kIethSendImm;
    const uint32_t data = f.ieth ? *f.ieth : *f.immdt;
    const uint32_t rq_pi = is_write ? 0 : lo16(Q(n, R::q::STATRQPIDBi)) & 0xFF;
    const uint64_t entry = uint64_t(data) | uint64_t(type) << 32 | uint64_t(n & 0xFF) << 40 | uint64_t(rq_pi) << 48;
    if (ctx_.log)
      ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), n, "ieth_immdt",
                      fmt::format("0x{:014x} ({} 0x{:08x}{})", entry,
                                  type == kIethSendInv ? "SEND_INV" : type == kIethSendImm ? "SEND_IMM" : "WRITE_IMM",
                                  data, is_write ? "" : fmt::format(", RQ PI {}", rq_pi)));
    if (ieth_sink) ieth_sink(entry);
  }
  // Accepted.
  Q(n, R::q::LSTRQREQi) = uint32_t(f.bth.opcode) << 24 | f.bth.psn;
  if (oi.pos == OpPos::Last || oi.pos == OpPos::Only)
    Q(n, R::q::STATMSNi) = roce::psn_add(Q(n, R::q::STATMSNi), 1);
  ack_accepted(qp, f.bth.psn, f.bth.ack_req);
  trace_qp(qp);
}

// XRNICCONF[4:3]: 00 ACK on AckReq or on timeout, 01 on timeout only, 10 on
// AckReq only; 11 is reserved and taken as 00 (A-ERNIC-20). The timeout and
// the packet count are ErnicTiming parameters (A-ERNIC-20).
uint32_t Ernic::ack_mode() const {
  const uint32_t m = (G(R::g::XRNICCONF) & F::XRNICCONF_ACKMODE_MASK) >> F::XRNICCONF_ACKMODE_SHIFT;
  return m == 3 ? 0 : m;
}

void Ernic::ack_accepted(Qp& qp, uint32_t psn, bool ack_req) {
  const uint32_t mode = ack_mode();
  ++qp.unacked;
  qp.unacked_psn = psn;
  const uint32_t cap = cfg_.timing.ack_coalesce_packets;
  const bool on_request = ack_req && mode != 1;
  const bool on_count = mode != 2 && cap != 0 && qp.unacked >= cap;
  if (on_request || on_count) {
    if (cfg_.test_bug_ack_coalescing && !on_request)  // test-only planted bug (ErnicConfig): the wrong PSN
      return send_ack(qp.qpn, roce::aeth::ack(), (psn + roce::kPsnMask) & roce::kPsnMask);
    return send_ack(qp.qpn, roce::aeth::ack(), psn);
  }
  if (mode != 2 && qp.ack_due_ps == 0 && cfg_.timing.ack_timeout_ns) {
    qp.ack_due_ps = ClockDomain::now_ps() + cfg_.timing.ack_timeout_ns * 1000;
    timer_ev_.notify(SC_ZERO_TIME);
  }
}

uint8_t Ernic::check_reth(uint32_t n, const roce::Reth& r, bool read, uint64_t& phys, std::string& why) {
  // PG332 Fig. 2-9: index from the R_Key, PD, key byte, access, bounds.
  auto fail = [&why](uint8_t code, const char* reason) {
    why = reason;
    return code;
  };
  const uint32_t idx = r.rkey >> 8;
  if (idx >= cfg_.num_mr) return fail(kFatalRkey, "R_Key index beyond the MR table");
  MrContext e;  // the register entry (table) or the CAM / host-table context (mr_cache: cam)
  if (!mr_lookup_->lookup(idx, e, n)) return fail(kFatalRkey, "MR context fetch failed");
  const uint64_t va0 = uint64_t(e.word(R::m::VIRTADDRLSB)) | uint64_t(e.word(R::m::VIRTADDRMSB)) << 32;
  const uint64_t mlen = uint64_t(e.word(R::m::WRRDBUFLEN)) | uint64_t(e.word(R::m::ACCESSDESC) >> 16) << 32;
  const uint32_t acc = e.word(R::m::ACCESSDESC) & 0xF;
  // The key checks (0x15) and the bounds check (0x16) are both made; both
  // failing give 0x17 (A-ERNIC-7).
  const char* key_fail = nullptr;
  if ((e.word(R::m::PDPDNUM) & 0xFFFFFF) != (Q(n, R::q::PDi) & 0xFFFFFF)) key_fail = "PD mismatch";
  else if ((e.word(R::m::BUFRKEY) & 0xFF) != (r.rkey & 0xFF)) key_fail = "R_Key key byte mismatch";
  else if (read && acc != F::ACCESS_READ && acc != F::ACCESS_RW) key_fail = "MR does not allow remote read";
  else if (!read && acc != F::ACCESS_WRITE && acc != F::ACCESS_RW) key_fail = "MR does not allow remote write";
  const bool out = r.va < va0 || r.va - va0 > mlen || uint64_t(r.dma_len) > mlen - (r.va - va0);
  if (key_fail && out) {
    why = std::string(key_fail) + ", and the RETH range is outside the MR";
    return kFatalRkeyAndLen;
  }
  if (key_fail) return fail(kFatalRkey, key_fail);
  if (out) return fail(kFatalRethLen, "RETH range outside the MR");
  phys = (uint64_t(e.word(R::m::BUFBASEADDRLSB)) | uint64_t(e.word(R::m::BUFBASEADDRMSB)) << 32) + (r.va - va0);
  return 0;
}

// Responder: a READ_REQUEST at the expected PSN (duplicate = false) or
// behind it (duplicate = true, executed again from its own PSN without
// moving the expected PSN or the MSN). The RETH is checked as for a WRITE
// but needs read access; the responses (ONLY, or FIRST / MIDDLE... / LAST)
// take the PSNs from the request's on, their payload is read from host
// memory through wqe_proc_top_m_axi, and they go out through the TX queue
// as ACKs do. The RX handler waits while it sends them (assumption A-ERNIC-11).
void Ernic::rx_read_request(Qp& qp, const roce::Frame& f, bool duplicate) {
  using namespace roce::op;
  const uint32_t n = qp.qpn;
  ++stats_.read_requests_received;
  if (!f.reth) return drop("READ_REQUEST without RETH");
  const roce::Reth& r = *f.reth;
  std::string why;
  uint64_t phys = 0;
  if (const uint8_t code = check_reth(n, r, /*read=*/true, phys, why)) {
    send_ack(n, roce::aeth::kNakRemoteAccess, f.bth.psn);
    return qp_fatal(qp, code, why);
  }
  const uint32_t mtu = pmtu(n);
  const uint32_t npkts = r.dma_len == 0 ? 1 : uint32_t((uint64_t(r.dma_len) + mtu - 1) / mtu);
  if (!duplicate) {
    // Accepted: the expected PSN moves past every response PSN; the READ is
    // one message for the MSN the responses carry.
    Q(n, R::q::LSTRQREQi) = uint32_t(RC_READ_REQUEST) << 24 | roce::psn_add(f.bth.psn, npkts - 1);
    Q(n, R::q::STATMSNi) = roce::psn_add(Q(n, R::q::STATMSNi), 1);
    // The responses' AETH acknowledges every earlier request: nothing is
    // left for the coalescing timeout.
    qp.unacked = 0;
    qp.ack_due_ps = 0;
    trace_qp(qp);
  }
  roce::Frame rsp = frame_template(n);
  uint32_t off = 0;
  for (uint32_t i = 0; i < npkts; ++i) {
    if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;  // the QP went fatal meanwhile: stop sending
    const bool first = i == 0, last = i + 1 == npkts;
    const uint32_t chunk = std::min(mtu, r.dma_len - off);
    const uint8_t op = npkts == 1 ? RC_READ_RESP_ONLY
                       : first    ? RC_READ_RESP_FIRST
                       : last     ? RC_READ_RESP_LAST
                                  : RC_READ_RESP_MIDDLE;
    rsp.bth.opcode = op;
    rsp.bth.psn = roce::psn_add(f.bth.psn, i);
    rsp.bth.ack_req = false;
    rsp.aeth.reset();
    if (op != RC_READ_RESP_MIDDLE) rsp.aeth = roce::Aeth{roce::aeth::ack(), Q(n, R::q::STATMSNi) & roce::kPsnMask};
    rsp.payload.resize(chunk);
    if (chunk && !dma_payload_.read(phys + off, rsp.payload.data(), chunk, /*with_latency=*/first, n)) {
      // The MR table points outside host memory: the responder cannot
      // answer (remote operational error, IBTA 9.7.5.2.4). Nothing was
      // sent for this READ yet: it is not a completed message, and the
      // NAK's MSN does not count it.
      if (!duplicate && first) Q(n, R::q::STATMSNi) = roce::psn_add(Q(n, R::q::STATMSNi), -1);
      send_ack(n, roce::aeth::kNakRemoteOp, f.bth.psn);
      return qp_fatal(qp, kFatalWqe, "READ response payload outside host memory");
    }
    core_.wait_cycles(cfg_.timing.rdrsp_build_cycles);
    G(R::g::LSTOUTPKT) = op | (n & 0xFF) << 8 | (rsp.bth.psn & 0xFFFF) << 16;
    ++G(R::g::OUTRDRSPPKTCNT);
    ++stats_.read_responses_sent;
    tx_enqueue(rsp);
    off += chunk;
  }
}

// Requester: a READ response. It must be the next PSN of the oldest
// outstanding READ; FIRST/MIDDLE carry exactly PMTU bytes, LAST/ONLY the
// rest, FIRST/LAST/ONLY an AETH with an ACK syndrome. The payload goes to
// LADDR + offset through rx_pkt_hndler_rdrsp_m_axi. The first response also
// acknowledges every older WQE (IBTA: a response for PSN p covers all PSNs
// up to p); the READ completes after its last response has been written.
void Ernic::rx_read_resp(Qp& qp, const roce::Frame& f) {
  using roce::OpPos;
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo& oi = *roce::opcode_info(f.bth.opcode);
  size_t ri = 0;
  while (ri < qp.osq.size() && !qp.osq[ri].is_read) ++ri;
  if (ri == qp.osq.size()) {
    // A response to a READ that has completed (a PSN already acknowledged)
    // is a duplicate; any other is stray. Both are dropped.
    if (roce::psn_lt(f.bth.psn, Q(n, R::q::STATRESPSNi) & roce::kPsnMask)) {
      ++stats_.duplicates;
      count16(R::g::ININVDUPCNT, true);
      return drop("duplicate READ response: its READ has completed");
    }
    return drop("READ response without an outstanding READ");
  }
  G(R::g::RESPHNDSTS) = (G(R::g::RESPHNDSTS) & ~0xFFu) | (n & 0xFF);
  Outstanding& rd = qp.osq[ri];
  const uint32_t p = f.bth.psn;
  if (roce::psn_lt(p, rd.resp_psn)) {
    // Already seen (a duplicate response, or one for a READ already done): ignored (IBTA 9.9.3.1.3).
    ++stats_.duplicates;
    count16(R::g::ININVDUPCNT, true);
    return drop("duplicate READ response");
  }
  if (p != rd.resp_psn) {
    // Responses were lost: re-issue the READ (IBTA: an out-of-sequence
    // response is an implied sequence error). Once re-issued, responses
    // out of order are stragglers of an earlier request or a loss the
    // local ACK timer recovers: one go-back, not one per straggler.
    if (!rd.reissue_wait) {
      rd.reissue_wait = true;
      const uint32_t from = rd.resp_psn;
      start_retry(qp, from, fmt::format("READ response PSN 0x{:06x} while 0x{:06x} was expected", p, from));
    }
    return drop("READ response out of sequence");
  }
  const uint32_t mtu = pmtu(n);
  const uint32_t left = rd.length - rd.resp_off;
  const bool is_last = rd.resp_psn == rd.last_psn;
  const bool is_first = rd.resp_psn == rd.req_psn;   // the first response to the latest request
  const bool single = rd.req_psn == rd.last_psn;
  // Opcode position against what this PSN of the READ must carry.
  OpPos want = single ? OpPos::Only : is_first ? OpPos::First : is_last ? OpPos::Last : OpPos::Middle;
  // A partial re-issue (4.x) asks again from resp_psn: that request's
  // responses start a new stream there (FIRST or ONLY), while a late
  // response of an earlier request for the same PSN is a MIDDLE or LAST,
  // and a responder that replays its earlier response stream (Linux rxe)
  // answers with those positions too. The bytes for a PSN are the same in
  // every stream, so the first copy to arrive is taken whatever its
  // position and the other is a duplicate, dropped and counted (IBTA: a
  // requester ignores responses it has already received); the READ
  // completes either way (rxe "IB/rxe: fixes for rdma read retry").
  const OpPos earlier = is_last ? OpPos::Last : OpPos::Middle;
  const bool reissue_start = is_first && rd.req_psn != rd.first_psn;
  if (reissue_start && oi.pos == earlier) want = earlier;
  if (oi.pos != want) {
    const uint8_t code = (want == OpPos::Only && oi.pos == OpPos::Last) ? kFatalRdRspLastForOnly : kFatalBadResp;
    return qp_fatal(qp, code,
                    fmt::format("{} at PSN 0x{:06x} of a READ of {} bytes", oi.name, p, rd.length));
  }
  if (oi.pos != OpPos::Middle) {
    if (!f.aeth) return qp_fatal(qp, kFatalBadAeth, fmt::format("{} without AETH", oi.name));
    if (roce::aeth::type(f.aeth->syndrome) != 0)
      return qp_fatal(qp, kFatalBadAeth,
                      fmt::format("{} with AETH syndrome 0x{:02x}", oi.name, f.aeth->syndrome));
  }
  const size_t len = f.payload.size();
  const uint32_t want_len = std::min(mtu, left);
  if (len != want_len || ((oi.pos == OpPos::First || oi.pos == OpPos::Middle) && f.bth.pad_cnt != 0)) {
    const uint8_t code = oi.pos == OpPos::Only     ? kFatalRdRspOnlyLen
                         : oi.pos == OpPos::Middle ? kFatalRdRspMiddleLen
                         : oi.pos == OpPos::Last   ? kFatalRdRspLast
                                                   : kFatalBadResp;
    return qp_fatal(qp, code, fmt::format("{} carries {} bytes, {} expected", oi.name, len, want_len));
  }
  // Accepted. Older WQEs are acknowledged by this response.
  ++stats_.read_responses_received;
  count16(R::g::INSRRPKTCNT, true);
  for (size_t k = 0; k < ri; ++k) {
    Outstanding o = qp.osq.front();
    qp.osq.pop_front();
    free_bufs(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    // complete() takes time; the QP manager may have made the QP fatal
    // meanwhile (every outstanding WQE then completed with ERRFLAG).
    if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
  }
  // Account for the response before its (timed) write, so that nothing
  // refers into the outstanding queue across a wait.
  Outstanding& cur = qp.osq.front();
  const uint64_t dst = cur.laddr + cur.resp_off;
  cur.resp_off += uint32_t(len);
  cur.resp_psn = roce::psn_add(cur.resp_psn, 1);
  if (roce::psn_gt(roce::psn_add(p, 1), Q(n, R::q::STATRESPSNi) & roce::kPsnMask))
    Q(n, R::q::STATRESPSNi) = roce::psn_add(p, 1);
  const Outstanding done = cur;
  if (is_last) qp.osq.pop_front();
  progress(qp);
  if (len) dma_rdrsp_.write(dst, f.payload.data(), len, n);
  // The CQE follows the last response's write (posted; the data is in host
  // memory when its last beat has been issued). A QP that went fatal while
  // the data was written completes the READ with ERRFLAG, as qp_fatal did
  // for every WQE still outstanding.
  if (is_last) {
    complete(qp, done.wrid, done.wqe_opcode, (Q(n, R::q::STATQPi) & F::STATQP_FATAL) != 0);
    retire_acked(qp);
  }
  trace_qp(qp);
  ack_ev_.notify(SC_ZERO_TIME);
}

// The WRITE/SEND WQEs behind a READ that has just completed, which an ACK or
// NAK taken earlier already covered (it could not retire them past the
// unanswered READ): they complete now, in order, up to the next READ.
void Ernic::retire_acked(Qp& qp) {
  if (!qp.ack_high_valid) return;
  while (!qp.osq.empty() && !qp.osq.front().is_read && roce::psn_le(qp.osq.front().last_psn, qp.ack_high)) {
    Outstanding o = qp.osq.front();
    qp.osq.pop_front();
    free_bufs(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    if (Q(qp.qpn, R::q::STATQPi) & F::STATQP_FATAL) return;
  }
}

// An answer acknowledged every PSN up to `psn`: the highest such PSN is
// kept for retire_acked.
void Ernic::note_acked(Qp& qp, uint32_t psn) {
  if (!qp.ack_high_valid || roce::psn_gt(psn, qp.ack_high)) qp.ack_high = psn;
  qp.ack_high_valid = true;
}

// A CNP for one of our QPs (RoCEv2 Annex A17.9.3): the QP's outstanding-
// request limit drops from 16 to 8, once; later CNPs change nothing
// (PG332: no DCQCN rate engine).
void Ernic::rx_cnp(Qp& qp, const roce::Frame& f) {
  (void)f;
  G(R::g::INCNPPKTCNT) += 1;
  if (qp.max_out > cfg_.timing.max_outstanding / 2) {
    qp.max_out = cfg_.timing.max_outstanding / 2;
    ctx_.event(fmt::format("{}.qp{}", scope_, qp.qpn),
               fmt::format("CNP received: outstanding-request limit {} -> {}", cfg_.timing.max_outstanding, qp.max_out));
    if (ctx_.log)
      ctx_.log->state(ClockDomain::now_ps(), cfg_.node, "core", core_.cycle(), qp.qpn, "max_outstanding",
                      std::to_string(qp.max_out));
  }
}

void Ernic::rx_ack(Qp& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  if (!f.aeth) return drop("ACK without AETH");
  G(R::g::RESPHNDSTS) = (G(R::g::RESPHNDSTS) & ~0xFFu) | (n & 0xFF);  // the QP the response handler took
  const uint8_t syn = f.aeth->syndrome;
  const uint32_t psn = f.bth.psn;
  // IBTA 9.7.5.1: type 10 is reserved, and NAK codes above 4 (0x65..0x7F).
  if (roce::aeth::type(syn) == 2 || (roce::aeth::type(syn) == 3 && (syn & 0x1F) > 4))
    return drop(fmt::format("malformed AETH: syndrome 0x{:02x}", syn), kSynAeth);
  switch (roce::aeth::type(syn)) {
    case 0: {  // ACK: retire every covered WQE, oldest first, exactly once
      count16(R::g::INAMPKTCNT, false);
      ++stats_.acks_received;
      note_acked(qp, psn);
      // A READ completes only through its responses: an ACK whose PSN
      // reaches an unanswered READ means its responses were lost (an implied
      // NAK, IBTA 9.9.3.1.3): the READ is re-issued.
      // An ACK inside a multi-packet message (coalescing timeout) retires
      // nothing but is progress all the same: the local ACK timer restarts.
      const bool advanced = roce::psn_ge(psn, Q(n, R::q::STATRESPSNi) & roce::kPsnMask) && !qp.osq.empty() &&
                            !qp.osq.front().is_read && roce::psn_ge(psn, qp.osq.front().first_psn);
      bool retired = false;
      while (!qp.osq.empty() && !qp.osq.front().is_read && roce::psn_le(qp.osq.front().last_psn, psn)) {
        Outstanding o = qp.osq.front();
        qp.osq.pop_front();
        free_bufs(o);
        complete(qp, o.wrid, o.wqe_opcode, false);
        retired = true;
        if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
      }
      // STATRESPSNi only moves forward: a late duplicate ACK acknowledges
      // nothing new (IBTA 9.9.3.1.1: the requester ignores it).
      if (roce::psn_gt(roce::psn_add(psn, 1), Q(n, R::q::STATRESPSNi) & roce::kPsnMask))
        Q(n, R::q::STATRESPSNi) = roce::psn_add(psn, 1);
      // A go-back-N under way restarts past what this ACK covered; an ACK
      // never covers a READ still outstanding below its PSN (its responses
      // are missing: IBTA's implied NAK), so the go-back keeps that READ.
      if (qp.resend_pending) {
        uint32_t covered = roce::psn_add(psn, 1);
        for (const auto& o : qp.osq)
          if (o.is_read && roce::psn_le(o.first_psn, psn)) {
            covered = o.resp_psn;
            break;
          }
        if (roce::psn_gt(covered, qp.resend_psn)) qp.resend_psn = covered;
      }
      if (retired || advanced) progress(qp);
      if (!qp.osq.empty() && qp.osq.front().is_read && roce::psn_ge(psn, qp.osq.front().resp_psn) &&
          !qp.osq.front().reissue_wait) {
        qp.osq.front().reissue_wait = true;
        const uint32_t from = qp.osq.front().resp_psn;
        start_retry(qp, from, fmt::format("ACK PSN 0x{:06x} beyond the unanswered READ at PSN 0x{:06x} (implied NAK)",
                                          psn, from));
      }
      trace_qp(qp);
      ack_ev_.notify(SC_ZERO_TIME);
      return;
    }
    case 3: {  // NAK
      ++stats_.naks_received;
      count_nak_in(n);
      Q(n, R::q::STATQPi) = (Q(n, R::q::STATQPi) & ~(0x7Fu << 16)) | uint32_t(syn & 0x7F) << 16;
      if (syn == roce::aeth::kNakPsnSeq) {
        // A NAK for a PSN already acknowledged was overtaken by a later
        // ACK or NAK: stale, ignored (rxe check_psn). A NAK for what a
        // go-back under way will resend is one go-back already
        // (start_retry). Any other NAK is acted on, even one for a PSN a
        // finished go-back resent: the responder NAKs a gap once until the
        // PSN it expects arrives, so that resend was lost too.
        if (roce::psn_lt(psn, Q(n, R::q::STATRESPSNi) & roce::kPsnMask)) {
          ++stats_.duplicates;
          count16(R::g::ININVDUPCNT, true);
          ctx_.event(fmt::format("{}.qp{}", scope_, n),
                     fmt::format("NAK PSN sequence error for PSN 0x{:06x} ignored: already acknowledged", psn));
          return;
        }
        // Go-back-N: the NAK's PSN is the one the responder expects; every
        // earlier PSN is acknowledged. Resend from there (3.1: from the
        // start of the WQE that holds it).
        note_acked(qp, roce::psn_add(psn, -1));
        const bool retired = retire_before(qp, psn);
        if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
        if (roce::psn_gt(psn, Q(n, R::q::STATRESPSNi) & roce::kPsnMask)) Q(n, R::q::STATRESPSNi) = psn;
        if (retired) progress(qp);
        if (qp.osq.empty()) return;
        uint32_t from = psn;
        if (qp.osq.front().is_read && roce::psn_lt(qp.osq.front().resp_psn, from)) from = qp.osq.front().resp_psn;
        return start_retry(qp, from, fmt::format("NAK PSN sequence error, expected PSN 0x{:06x}", psn));
      }
      return qp_fatal(qp, kFatalRemote, fmt::format("NAK 0x{:02x} received", syn));
    }
    default: {  // RNR NAK (type 01): wait the timer of its code, then resend
      ++stats_.naks_received;
      ++stats_.rnr_naks_received;
      count_nak_in(n);  // an RNR NAK is a NAK (A-CNT-1)
      Q(n, R::q::STATQPi) = (Q(n, R::q::STATQPi) & ~(0x7Fu << 16)) | uint32_t(syn & 0x7F) << 16;
      // Stale (that PSN is acknowledged), or a repeat of the RNR NAK whose
      // wait is running (same PSN): ignored, neither counted against the
      // RNR retry count nor restarting the wait (qib, blue-rdma).
      const bool stale = roce::psn_lt(psn, Q(n, R::q::STATRESPSNi) & roce::kPsnMask);
      if (stale || (qp.rnr_until_ps && psn == qp.rnr_psn)) {
        ++stats_.duplicates;
        count16(R::g::ININVDUPCNT, true);
        ctx_.event(fmt::format("{}.qp{}", scope_, n),
                   fmt::format("RNR NAK for PSN 0x{:06x} ignored: {}", psn,
                               stale ? "already acknowledged" : "the RNR wait for it is running"));
        return;
      }
      note_acked(qp, roce::psn_add(psn, -1));
      const bool retired = retire_before(qp, psn);
      if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
      if (retired) progress(qp);
      if (qp.osq.empty()) return;
      ++qp.rnr_cnt;
      const uint32_t max = (Q(n, R::q::TIMEOUTCONFi) >> 11) & 7;
      update_retry_status(qp);
      if (max != 7 && qp.rnr_cnt > max)
        return qp_fatal(qp, kFatalRnr, fmt::format("RNR retry count {} exhausted (RNR NAK at PSN 0x{:06x})", max, psn));
      const uint64_t wait_ps = uint64_t(kRnrTimer10us[syn & 0x1F]) * 10'000'000ull;
      ctx_.event(fmt::format("{}.qp{}", scope_, n),
                 fmt::format("RNR NAK (timer code {}) at PSN 0x{:06x}: resending after {} us (RNR retry {})",
                             syn & 0x1F, psn, wait_ps / 1'000'000, qp.rnr_cnt));
      qp.rnr_until_ps = ClockDomain::now_ps() + wait_ps;
      qp.rnr_psn = psn;
      // The RNR NAK acknowledges every PSN before it: a READ still waiting
      // for responses below it lost them (an implied NAK). After the wait
      // the go-back starts at that READ, which is re-issued.
      uint32_t from = psn;
      if (qp.osq.front().is_read && roce::psn_lt(qp.osq.front().resp_psn, psn)) from = qp.osq.front().resp_psn;
      begin_rollback(qp, from);
      return;
    }
  }
}

// ------------------------------------------------------------ retransmission

bool Ernic::partial_resend() const { return cfg_.layout.gcsr_base == R::kLayout4x.gcsr_base; }

// Retires every WRITE/SEND WQE that ends before psn (a NAK acknowledges all
// earlier PSNs). A READ stops the walk: it completes only through responses.
bool Ernic::retire_before(Qp& qp, uint32_t psn) {
  bool any = false;
  while (!qp.osq.empty() && !qp.osq.front().is_read && roce::psn_lt(qp.osq.front().last_psn, psn)) {
    Outstanding o = qp.osq.front();
    qp.osq.pop_front();
    free_bufs(o);
    complete(qp, o.wrid, o.wqe_opcode, false);
    any = true;
    if (Q(qp.qpn, R::q::STATQPi) & F::STATQP_FATAL) break;
  }
  return any;
}

// An ACK or response made progress: the retry counters start again and the
// local ACK timer restarts (or stops when nothing is outstanding).
void Ernic::progress(Qp& qp) {
  qp.retry_cnt = qp.rnr_cnt = 0;
  update_retry_status(qp);
  arm_timer(qp);
}

void Ernic::update_retry_status(Qp& qp) {
  uint32_t& st = Q(qp.qpn, R::q::STATQPi);
  st = (st & ~(7u << 24 | 7u << 28)) | std::min(qp.retry_cnt, 7u) << 24 | std::min(qp.rnr_cnt, 7u) << 28;
}

// Local ACK timeout (A-ERNIC-15): 2^TIMEOUTCONFi[5:0] ticks of
// 2^XRNICADCONF[19:16] core cycles; 0 = no timeout.
void Ernic::arm_timer(Qp& qp) {
  qp.ack_deadline_ps = 0;
  if (qp.osq.empty() || qp.rnr_until_ps) return;
  const uint32_t t = Q(qp.qpn, R::q::TIMEOUTCONFi) & 0x3F;
  if (t == 0) return;
  const uint32_t e = t + ((G(R::g::XRNICADCONF) & F::XRNICADCONF_BASECNT_MASK) >> F::XRNICADCONF_BASECNT_SHIFT);
  if (e >= 40) return;  // beyond any simulated run (A-ERNIC-15)
  qp.ack_deadline_ps = ClockDomain::now_ps() + (uint64_t(1) << e) * core_.period_ps();
  timer_ev_.notify(SC_ZERO_TIME);
}

// A retry (NAK-PSN, local ACK timeout, lost READ response, implied NAK):
// counted against TIMEOUTCONFi[10:8]; exhaustion is fatal (code 0x06)
// unless XRNICADCONF[2] retry_cnt_fatal_dis (A-ERNIC-16).
void Ernic::start_retry(Qp& qp, uint32_t psn, const std::string& why) {
  const uint32_t n = qp.qpn;
  if (Q(n, R::q::STATQPi) & F::STATQP_FATAL) return;
  // Already going back to this point or before it: nothing new.
  if (qp.resend_pending && roce::psn_ge(psn, qp.resend_psn)) return;
  ++qp.retry_cnt;
  ++stats_.retries;
  const uint32_t max = (Q(n, R::q::TIMEOUTCONFi) >> 8) & 7;
  update_retry_status(qp);
  if (qp.retry_cnt > max && !(G(R::g::XRNICADCONF) & (1u << 2)))
    return qp_fatal(qp, kFatalRespHndlr, fmt::format("retry count {} exhausted ({})", max, why));
  ctx_.event(fmt::format("{}.qp{}", scope_, n),
             fmt::format("{}: resending from PSN 0x{:06x} (retry {})", why, psn, qp.retry_cnt));
  begin_rollback(qp, psn);
}

void Ernic::begin_rollback(Qp& qp, uint32_t psn) {
  qp.resend_pending = true;
  qp.resend_psn = psn;
  ++qp.gen;
  qp.ack_deadline_ps = 0;
  Q(qp.qpn, R::q::STATQPi) |= F::STATQP_RETRIED;
  update_retry_status(qp);
  trace_qp(qp);
  timer_ev_.notify(SC_ZERO_TIME);
  ack_ev_.notify(SC_ZERO_TIME);
}

// Go-back-N, run by the QP manager before any new WQE of the QP: PSN, MSN
// (STATSSNi) and the SQ pointer (STATCURSQPTRi) roll back to the WQE that
// holds resend_psn, the WQE is fetched again, and every outstanding WQE from
// there is sent again: 3.1 from the WQE's start, 4.x from resend_psn. The
// PSN and SSN of new WQEs continue where they were.
void Ernic::resend(Qp& qp) {
  const uint32_t n = qp.qpn;
  const uint64_t sqba = q64(n, R::q::SQBAi, R::q::SQBAMSBi);
  const uint32_t saved_psn = Q(n, R::q::SQPSNi), saved_ssn = Q(n, R::q::STATSSNi);
  while (qp.resend_pending && qp.rnr_until_ps == 0 && qp.enabled && !(Q(n, R::q::STATQPi) & F::STATQP_FATAL)) {
    // The next WQE to resend: a WRITE or SEND an ACK or NAK has already
    // acknowledged (it waits only for a READ before it to complete) is
    // skipped, as a READ whose responses have all come.
    const Outstanding* e = nullptr;
    for (const auto& o : qp.osq)
      if (roce::psn_le(qp.resend_psn, o.last_psn) && !acknowledged(qp, o)) {
        e = &o;
        break;
      }
    if (!e) {
      qp.resend_pending = false;
      break;
    }
    const Outstanding o = *e;  // a copy: ACKs may retire the WQE meanwhile
    const uint32_t gen = qp.gen;
    uint32_t from = o.first_psn;
    if (partial_resend() && !o.is_read && roce::psn_gt(qp.resend_psn, o.first_psn)) from = qp.resend_psn;
    Q(n, R::q::SQPSNi) = from;
    Q(n, R::q::STATSSNi) = o.ssn;
    Q(n, R::q::STATCURSQPTRi) = o.sq_idx;
    trace_qp(qp);
    uint8_t wqe[kWqeSize];
    dma_wqe_.read(sqba + uint64_t(o.sq_idx) * kWqeSize, wqe, kWqeSize, true, n);
    core_.wait_cycles(cfg_.timing.wqe_decode_cycles);
    // An ACK may have retired it while it was fetched again: nothing to resend.
    if (!still_outstanding(qp, o.first_psn)) {
      if (qp.gen == gen && roce::psn_le(qp.resend_psn, o.last_psn)) qp.resend_psn = roce::psn_add(o.last_psn, 1);
      continue;
    }
    if (o.is_read)
      send_read_request(qp, o.first_psn, /*retry=*/true);
    else
      send_packets(qp, o, from, /*retry=*/true);
    if (qp.gen == gen) qp.resend_psn = roce::psn_add(o.last_psn, 1);
  }
  Q(n, R::q::SQPSNi) = saved_psn;
  Q(n, R::q::STATSSNi) = saved_ssn;
  Q(n, R::q::STATCURSQPTRi) = qp.sq_ci;
  trace_qp(qp);
}

// One thread for every QP's local ACK timer and RNR wait: it sleeps until
// the earliest deadline, so idle time costs nothing.
void Ernic::timer_thread() {
  for (;;) {
    const uint64_t now = ClockDomain::now_ps();
    uint64_t next = UINT64_MAX;
    for (const Qp& qp : qps_) {
      if (qp.ack_deadline_ps) next = std::min(next, qp.ack_deadline_ps);
      if (qp.rnr_until_ps) next = std::min(next, qp.rnr_until_ps);
      if (qp.ack_due_ps) next = std::min(next, qp.ack_due_ps);
    }
    if (next == UINT64_MAX) {
      wait(timer_ev_);
      continue;
    }
    if (next > now) {
      wait(ps(next - now), timer_ev_);
      continue;
    }
    for (uint32_t n = 1; n <= cfg_.num_qp; ++n) {
      Qp& qp = qps_[n];
      if (qp.ack_due_ps && qp.ack_due_ps <= now) {
        // Coalescing timeout: the RX handler sends the ACK (it owns ACK order).
        qp.ack_due_ps = 0;
        if (!qp.ack_fire) ack_fire_q_.push_back(n);
        qp.ack_fire = true;
        rx_ev_.notify(SC_ZERO_TIME);
      }
      if (qp.rnr_until_ps && qp.rnr_until_ps <= now) {
        qp.rnr_until_ps = 0;
        ack_ev_.notify(SC_ZERO_TIME);  // the QP manager resends
      }
      if (qp.ack_deadline_ps && qp.ack_deadline_ps <= now) {
        qp.ack_deadline_ps = 0;
        if (qp.osq.empty() || !qp.enabled || (Q(n, R::q::STATQPi) & F::STATQP_FATAL)) continue;
        ++stats_.ack_timeouts;
        const Outstanding& fr = qp.osq.front();
        uint32_t from = fr.first_psn;
        if (fr.is_read) {
          from = fr.resp_psn;
        } else {
          const uint32_t r = Q(n, R::q::STATRESPSNi) & roce::kPsnMask;
          if (roce::psn_gt(r, fr.first_psn) && roce::psn_le(r, fr.last_psn)) from = r;
        }
        if (fr.is_read) qp.osq.front().reissue_wait = true;
        start_retry(qp, from, "local ACK timeout");
      }
    }
  }
}

// ----------------------------------------------------- write-retry buffers

bool Ernic::retry_bufs_configured() const {
  const uint32_t sz = G(R::g::DATBUFSZ);
  return (G(R::g::DATBUFBA) | G(R::g::DATBUFBAMSB)) != 0 && (sz & 0xFFFF) != 0 && (sz >> 16) != 0;
}

uint64_t Ernic::retry_buf_addr(uint32_t idx) const {
  const uint64_t base = uint64_t(G(R::g::DATBUFBA)) | uint64_t(G(R::g::DATBUFBAMSB)) << 32;
  return base + uint64_t(idx) * (bufs_cfg_ >> 16);
}

// Buffers for a WRITE of `length` bytes (A-ERNIC-17): ceil(length / size),
// the payload packed in them. false when not enough are free (the WQE
// waits); true with none when the buffers are not configured or the WRITE
// is larger than all of them (its retransmission then reads LADDR again).
bool Ernic::alloc_bufs(Qp& qp, uint32_t length, std::vector<uint32_t>& out) {
  qp.buf_need = 0;
  if (!retry_bufs_configured() || length == 0) return true;
  const uint32_t cfg = G(R::g::DATBUFSZ);
  if (cfg != bufs_cfg_ && bufs_used_ == 0) {
    bufs_cfg_ = cfg;
    free_bufs_.clear();
    for (uint32_t i = 0; i < (cfg & 0xFFFF); ++i) free_bufs_.push_back(i);
  }
  const uint32_t size = bufs_cfg_ >> 16, total = bufs_cfg_ & 0xFFFF;
  const uint32_t need = uint32_t((uint64_t(length) + size - 1) / size);
  if (need > total) return true;
  if (free_bufs_.size() < need) {
    qp.buf_need = need;
    return false;
  }
  for (uint32_t i = 0; i < need; ++i) {
    out.push_back(free_bufs_.front());
    free_bufs_.pop_front();
  }
  bufs_used_ += need;
  return true;
}

void Ernic::free_bufs(Outstanding& o) {
  if (o.bufs.empty()) return;
  for (uint32_t b : o.bufs) free_bufs_.push_back(b);
  bufs_used_ -= uint32_t(o.bufs.size());
  o.bufs.clear();
  ack_ev_.notify(SC_ZERO_TIME);  // a WQE waiting for buffers may go
}

void Ernic::drop_outstanding(Qp& qp) {
  for (auto& o : qp.osq) free_bufs(o);
  qp.osq.clear();
}

// Bytes [off, off + len) of a WRITE's payload in its retry buffers. Writes
// are queued for wqe_proc_wr_ddr_m_axi (posted, in parallel with TX); reads
// go through wqe_proc_top_m_axi like any payload read.
void Ernic::buf_io(const std::vector<uint32_t>& bufs, uint32_t off, uint8_t* data, uint32_t len, bool write,
                   bool with_latency, uint32_t qpn) {
  const uint32_t size = bufs_cfg_ >> 16;
  uint32_t done = 0;
  while (done < len) {
    const uint32_t pos = off + done;
    const uint32_t k = pos / size, in = pos % size;
    const uint32_t piece = std::min(len - done, size - in);
    if (k >= bufs.size()) return;
    const uint64_t addr = retry_buf_addr(bufs[k]) + in;
    if (write) {
      copyq_.push_back({addr, std::vector<uint8_t>(data + done, data + done + piece), qpn});
      copy_ev_.notify(SC_ZERO_TIME);
    } else {
      dma_payload_.read(addr, data + done, piece, with_latency && done == 0, qpn);
    }
    done += piece;
  }
}

void Ernic::copy_thread() {
  for (;;) {
    while (copyq_.empty()) wait(copy_ev_);
    copy_busy_ = true;
    CopyJob j = std::move(copyq_.front());
    copyq_.pop_front();
    dma_wrddr_.write(j.addr, j.data.data(), j.data.size(), j.qpn);
    copy_busy_ = false;
    if (copyq_.empty()) copy_done_ev_.notify(SC_ZERO_TIME);
  }
}

}  // namespace ernic
