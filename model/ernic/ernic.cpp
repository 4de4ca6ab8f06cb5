// model/ernic: the ERNIC top (see ernic.h): the register interface and its
// side effects, the sideband doorbells, the blocks wired together.
#include "model/ernic/ernic.h"

#include <fmt/format.h>

#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;

Ernic::Ernic(sc_module_name name, const ClockDomain& core, HostMemory& mem, SimContext& ctx,
             const std::string& scope, ErnicConfig cfg)
    : sc_module(name),
      s_(core, mem, ctx, scope, std::move(cfg)),
      intr_ctl_(s_, intr),
      cache_(s_),
      qp_mgr_("qp_mgr", s_, cache_, wqe_proc_, resp_, retry_buf_),
      wqe_proc_("wqe_proc", s_, intr_ctl_, resp_, retry_buf_, datapath, on_tx_committed),
      rx_("rx_pkt_hndler", s_, intr_ctl_, resp_, wqe_proc_, RxSinks{&ieth_sink, &rq_db_sink, &on_rx_taken, &cmac}),
      resp_("resp_hndler", s_, intr_ctl_, cache_, retry_buf_, cq_db_sink),
      retry_buf_("retry_buf", s_) {
  s_.wave.declare(ctx, scope, s_.block_scope(wqe_proc_), s_.block_scope(rx_), s_.cfg.num_qp);
  if (s_.cfg.qp_ctx.enabled) {  // X-QPC-CACHE-1..3
    qpc_ = std::make_unique<QpCtxCache>(core, mem, ctx, scope, s_.cfg.node, s_.cfg.qp_ctx, s_.cfg.dma);
    s_.qpc = qpc_.get();
  }
  if (s_.cfg.shadow_db.enabled)  // X-SHADOW-DB-1..3
    shadow_ = std::make_unique<ShadowDb>("shadow_db", s_, [this](uint32_t n, uint32_t pi) { shadow_doorbell(n, pi); });
}

Ernic::~Ernic() = default;

// ---------------------------------------------------------------- registers

void Ernic::backdoor_write(uint32_t addr, uint32_t value) {
  const R::Decoded d = s_.regs.decode(addr);
  if (!d.reg || d.block != R::Block::Qp) return;
  s_.Q(d.index, d.offset) = value;
  qp_mgr_.touch(d.index);  // its depth may have changed: the QP manager's passes look at it again
  s_.ctx.event(s_.qp_scope(d.index),
               fmt::format("debug backdoor: {} := 0x{:08x} (not a PG332 access, A-DEBUG-1)", d.reg->name, value));
  s_.trace(s_.qps[d.index]);
}

uint32_t Ernic::peek(uint32_t addr) const {
  const R::Decoded d = s_.regs.decode(addr);
  uint32_t v = s_.regs.read(d);
  if (!d.reg) return v;
  // RESPHNDSTS[16] "sq pici db check en", which the recovery flows poll:
  // the response handler here takes doorbells at any time (A-ERNIC-19).
  if (d.block == R::Block::Global && d.offset == R::g::RESPHNDSTS) return v | FLD::RESPHNDSTS_SQ_PICI_DB_CHECK_EN.bit();
  if (d.block != R::Block::Qp || d.offset != R::q::STATQPi) return v;
  // STATQPi's queue bits come from the QP's state.
  const uint32_t n = d.index;
  const qp::QpContext& qp = s_.qps[n];
  const uint32_t depth = s_.sq_depth(n);
  const uint32_t pending = depth ? (qp.req.sq_pi % depth + depth - qp.req.sq_ci) % depth : 0;
  v &= ~(FLD::STATQPi_SQ_EMPTY.bit() | FLD::STATQPi_OSQ_EMPTY.bit() | FLD::STATQPi_OSQ_FULL.bit() | FLD::STATQPi_SQ_FULL.bit());
  if (pending == 0) v |= FLD::STATQPi_SQ_EMPTY.bit();
  // SQ full: depth - 1 WQEs posted and not completed. The CQ has the SQ's
  // depth and one entry per WQE, so software that never posts beyond this
  // never has a CQE overwritten before it was read.
  const uint32_t pi = FLD::SQPIi_VALUE.get(s_.Q(n, R::q::SQPIi)), head = FLD::CQHEADi_VALUE.get(s_.Q(n, R::q::CQHEADi));
  const uint32_t uncompleted = depth ? (pi % depth + depth - head % depth) % depth : 0;
  if (depth && uncompleted == depth - 1) v |= FLD::STATQPi_SQ_FULL.bit();
  if (qp.req.osq.empty()) v |= FLD::STATQPi_OSQ_EMPTY.bit();
  if (qp.req.osq.size() >= qp.req.max_out) v |= FLD::STATQPi_OSQ_FULL.bit();
  return v;
}

uint32_t Ernic::axil_read(uint32_t addr) {
  const uint32_t v = peek(addr);
  if (s_.ctx.log) log_reg(false, addr, v);
  return v;
}

void Ernic::log_reg(bool write, uint32_t addr, uint32_t value) {
  const R::Decoded d = s_.regs.decode(addr);
  std::optional<uint32_t> qpn;
  if (d.block == R::Block::Qp) qpn = d.index;
  s_.ctx.log->reg(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), qpn, write, addr,
                  R::address_name(s_.cfg.layout, addr, s_.cfg.num_qp, s_.cfg.num_mr), value);
}

void Ernic::axil_write(uint32_t addr, uint32_t data) {
  if (s_.ctx.log) log_reg(true, addr, data);
  const R::Decoded d = s_.regs.decode(addr);
  const R::RegisterFile::Write w = s_.regs.write(d, data);
  switch (w.kind) {
    case R::RegisterFile::Write::ignored:
    case R::RegisterFile::Write::bank:
      return;
    case R::RegisterFile::Write::w1c:
      intr_ctl_.after_w1c();
      return;
    case R::RegisterFile::Write::global:
      if (d.offset == R::g::INTEN) intr_ctl_.update();
      if (shadow_ && d.offset == R::g::XRNICCONF) shadow_->wake();
      if (d.offset == R::g::XRNICADCONF) qp_mgr_.reconsider();  // a QP may leave SW override
      return;
    case R::RegisterFile::Write::mr:
      s_.mr_lookup->on_register_write(d.index);  // mr_cache: cam drops the cached context
      return;
    case R::RegisterFile::Write::qp:
      return qp_register_written(d.index, d.offset, w.old, data);
  }
}

// What a per-QP register write sets going.
void Ernic::qp_register_written(uint32_t n, uint32_t off, uint32_t old, uint32_t data) {
  qp::QpContext& qp = s_.qps[n];
  qp_mgr_.touch(n);  // the QP may have work now (STATCURSQPTRi, QPCONFi, QDEPTHi): looked at on the next pass
  switch (off) {
    case R::q::QPCONFi: {
      const bool en = data & FLD::QPCONFi_EN.bit(), was = old & FLD::QPCONFi_EN.bit();
      if (en != was && s_.ctx.log)
        s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), n, "qp_enable", en ? "1" : "0");
      if (shadow_) shadow_->wake();  // polling follows the enabled RC QPs
      if (en && !was) {
        qp_enabled(qp, old);
      } else if (!en) {
        qp.enabled = false;
        cache_.drop(qp);
      }
      s_.trace(qp);
      break;
    }
    case R::q::SQPIi: {
      const uint32_t pi = FLD::SQPIi_VALUE.get(data);
      s_.Q(n, off) = pi;
      s_.ctx.set(s_.wave.qp[n].sq_pi, pi);
      // AXI-Lite doorbells count only with HW handshake disabled (QPCONFi[4] = 1).
      if (s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_HW_HANDSHAKE_DIS.bit()) qp_mgr_.ring(n, pi);
      break;
    }
    case R::q::RQCIi:
      s_.Q(n, off) = FLD::RQCIi_VALUE.get(data);
      break;
    case R::q::STATCURSQPTRi: {  // written under SW override (PG332 ch.6 flows): where the QP manager fetches next
      const uint32_t depth = s_.sq_depth(n);
      qp.req.sq_ci = depth ? FLD::STATCURSQPTRi_VALUE.get(data) % depth : 0;
      cache_.drop(qp);  // prefetching restarts from there
      s_.trace(qp);
      break;
    }
    case R::q::SQPSNi:
      // The first response expected is for the first PSN sent (A-CNT-1).
      s_.Q(n, R::q::STATRESPSNi) = data & roce::kPsnMask;
      s_.trace(qp);
      break;
    case R::q::LSTRQREQi:
      s_.trace(qp);
      break;
    case R::q::RQBAi:
    case R::q::RQBAMSBi:
      rx_.set_rq_buf_ca(n, s_.q64(n, R::q::RQBAi, R::q::RQBAMSBi));  // element 0 is current (A-CNT-1)
      break;
    default:
      break;
  }
}

// QPCONFi[0] 0 -> 1: the QP (set up, or re-enabled after PG332's recovery
// or deletion flow) starts clean: its SQ pointer from STATCURSQPTRi, no
// outstanding WQEs, no retransmission, no responder message; after the
// recovery flow (QPCONFi[6]) the fatal bit, retry and RNR counts and NAK
// syndrome are cleared too.
void Ernic::qp_enabled(qp::QpContext& qp, uint32_t old_qpconf) {
  const uint32_t n = qp.qpn;
  qp.enabled = true;
  if (old_qpconf & FLD::QPCONFi_UNDER_RECOVERY.bit()) {
    uint32_t& st = s_.Q(n, R::q::STATQPi);
    st &= ~(FLD::STATQPi_FATAL.bit() | FLD::STATQPi_RQ_OVERFLOW.bit() | FLD::STATQPi_RETRIED.bit());
    for (const R::Field f : {FLD::STATQPi_NAK_SYNDROME, FLD::STATQPi_RETRY_COUNT, FLD::STATQPi_RNR_COUNT})
      st = f.set(st, 0);
  }
  const uint32_t depth = s_.sq_depth(n);
  qp.req.sq_ci = depth ? FLD::STATCURSQPTRi_VALUE.get(s_.Q(n, R::q::STATCURSQPTRi)) % depth : 0;
  for (auto& o : qp.req.osq) retry_buf_.free(o);
  qp.req.osq.clear();
  qp.req.buf_need = 0;
  qp.req.max_out = s_.cfg.timing.max_outstanding;  // a CNP's cut lasts until the QP is enabled again (A-ERNIC-22)
  qp.rs.end_retransmit();
  qp.rs.rnr_expired();
  qp.retry.ack_high_valid = false;
  qp.retry.retry_cnt = qp.retry.rnr_cnt = 0;
  qp.retry.ack_deadline_ps = 0;
  qp.resp = qp::ResponderCtx{};
  cache_.drop(qp);
  if (qpc_) qpc_->on_enable(n);      // X-QPC-CACHE: installed if a slot is free
  if (shadow_) shadow_->on_enable(n);  // X-SHADOW-DB: its entry zeroed
  qp_mgr_.ring(n, s_.Q(n, R::q::SQPIi));
}

// X-SHADOW-DB: the poller found a new SQ producer index for QP n in host
// memory: as an SQPIi write of it (A-ERNIC-1).
void Ernic::shadow_doorbell(uint32_t n, uint32_t pi) {
  s_.Q(n, R::q::SQPIi) = pi;
  s_.ctx.set(s_.wave.qp[n].sq_pi, pi);
  qp_mgr_.ring(n, pi);
}

// ---------------------------------------------------------------- sideband

// Sideband doorbells (PG332 section 8; wr_addr_hndshk = QP number,
// A-SIDEBAND-1): taken only from a QP in HW-handshake mode.
bool Ernic::hw_handshake(uint32_t n, const char* port, uint32_t value) {
  if (n < 1 || n > s_.cfg.num_qp || (s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_HW_HANDSHAKE_DIS.bit())) {
    ++sideband_ignored_;
    s_.ctx.event(s_.scope,
                 fmt::format("{} for QP{} ignored: not in HW-handshake mode (QPCONFi[4] = 1)", port, n));
    return false;
  }
  if (s_.ctx.log)
    s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), n, port, std::to_string(value));
  return true;
}

bool Ernic::sq_pidb(uint32_t wr_addr, uint16_t pi) {
  const uint32_t n = wr_addr;
  if (!hw_handshake(n, "i_qp_sq_pidb", pi)) return true;
  s_.Q(n, R::q::SQPIi) = pi;
  s_.ctx.set(s_.wave.qp[n].sq_pi, pi);
  qp_mgr_.ring(n, pi);
  return true;
}

bool Ernic::rq_cidb(uint32_t wr_addr, uint16_t ci) {
  const uint32_t n = wr_addr;
  if (!hw_handshake(n, "i_qp_rq_cidb", ci)) return true;
  s_.Q(n, R::q::RQCIi) = ci;
  return true;
}

// ---------------------------------------------------------------- status

bool Ernic::requester_idle() const {
  for (uint32_t n = 1; n <= s_.cfg.num_qp; ++n) {
    const qp::QpContext& qp = s_.qps[n];
    if (!qp.req.osq.empty() || (qp.enabled && s_.Q(n, R::q::SQPIi) != qp.req.sq_ci)) return false;
  }
  return true;
}

std::vector<std::string> Ernic::qp_status() const {
  std::vector<std::string> out;
  const auto& L = s_.cfg.layout;
  for (uint32_t n = 1; n <= s_.cfg.num_qp; ++n) {
    const qp::QpContext& qp = s_.qps[n];
    if (!qp.enabled && !(s_.Q(n, R::q::QPCONFi) & FLD::QPCONFi_EN.bit())) continue;
    out.push_back(fmt::format(
        "QP{}: QPCONF=0x{:08x} STATQP=0x{:08x} SQPI={} sq_ci={} outstanding={} CQHEAD={} "
        "SQPSN=0x{:06x} LSTRQREQ=0x{:08x} STATRQPIDB={} RQCI={}",
        n, s_.Q(n, R::q::QPCONFi), peek(L.qp(n, R::q::STATQPi)), s_.Q(n, R::q::SQPIi), qp.req.sq_ci,
        qp.req.osq.size(), s_.Q(n, R::q::CQHEADi), s_.Q(n, R::q::SQPSNi) & roce::kPsnMask,
        s_.Q(n, R::q::LSTRQREQi), s_.Q(n, R::q::STATRQPIDBi), s_.Q(n, R::q::RQCIi)));
  }
  return out;
}

}  // namespace ernic
