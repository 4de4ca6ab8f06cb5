#include "model/datapath/qp_setup_model.h"

#include <algorithm>

#include "model/regs/regs.h"

namespace ernic::qps {

namespace R = regs;

const char* state_name(State s) {
  switch (s) {
    case State::Idle: return "IDLE";
    case State::RegCheck: return "REG_CHECK";
    case State::ResAlloc: return "RES_ALLOC";
    case State::CmacInit: return "CMAC_INIT";
    case State::Ready: return "READY";
  }
  return "?";
}

const char* status_name(uint8_t code) {
  switch (code) {
    case status::kNone: return "none";
    case status::kSuccess: return "success";
    case status::kQpnRange: return "QPN out of range";
    case status::kPoolExhausted: return "pool exhausted";
    case status::kPsnOrActive: return "PSN above 0xFFFFFF or QPN already active";
    case status::kLinkTimeout: return "CMAC link not up in time";
    case status::kBadCommand: return "unsupported command";
  }
  return "unknown";
}

QpSetupModel::QpSetupModel(uint32_t pool_max, uint32_t link_timeout_reset, uint16_t max_qpn_reset)
    : pool_max_(std::clamp<uint32_t>(pool_max, 1, 255)), link_timeout_reset_(link_timeout_reset),
      max_qpn_reset_(max_qpn_reset) {
  reset();
}

void QpSetupModel::reset() {
  qpctrl_ = destqp_ = rip_ = mac_lsb_ = mac_msb_ = sq_psn_ = exp_psn_ = 0;
  udp_ = kRoceV2Port;
  link_timeout_ = link_timeout_reset_;
  pd_ = 1;
  pool_base_lo_ = pool_base_hi_ = slot_bytes_ = 0;
  pool_count_ = pool_max_;
  qdepth_ = kQdepthReset;
  qpconf_ = kQpconfReset;
  advconf_ = kQpadvconfReset;
  timeoutconf_ = kTimeoutconfReset;
  max_qpn_ = max_qpn_reset_;
  layout4x_ = 0;
  info_qpn_ = 0;
  st_ = State::Idle;
  code_ = status::kNone;
  slots_.assign(pool_max_, Slot{});
}

int QpSetupModel::owner(uint16_t q) const {
  for (uint32_t i = 0; i < pool_max_; ++i)
    if (slots_[i].used && slots_[i].qpn == q) return int(i);
  return -1;
}

uint64_t QpSetupModel::slot_base(uint32_t idx) const {
  const uint64_t base = uint64_t(pool_base_hi_) << 32 | pool_base_lo_;
  return base + uint64_t(idx) * slot_bytes_;
}

uint32_t QpSetupModel::qp_addr(uint32_t off) const {
  const uint32_t qcsr = layout4x_ ? R::kLayout4x.qcsr_base : R::kLayout31.qcsr_base;
  return qcsr + (uint32_t(uint16_t(qpn() - 1)) << 8) + off;
}

uint32_t QpSetupModel::g_addr(uint32_t off) const {
  return (layout4x_ ? R::kLayout4x.gcsr_base : R::kLayout31.gcsr_base) + off;
}

uint32_t QpSetupModel::read(uint32_t off) const {
  const uint32_t w = off & ~3u;
  const int info = owner(uint16_t(info_qpn_));
  const SlotLayout l = slot_layout(qdepth_, qpconf_, slot_bytes_);
  const uint64_t ib = info >= 0 ? slot_base(uint32_t(info)) : 0;
  auto half = [&](uint64_t v, bool hi) -> uint32_t { return info < 0 ? 0 : hi ? uint32_t(v >> 32) : uint32_t(v); };
  uint32_t used = 0, free_n = 0;
  for (uint32_t i = 0; i < pool_max_; ++i) {
    used += slots_[i].used;
    free_n += !slots_[i].used && i < pool_count_;
  }
  switch (w) {
    case reg::QPCTRL: return qpctrl_;
    case reg::DESTQP: return destqp_;
    case reg::REMOTE_IP: return rip_;
    case reg::UDP_PORT: return udp_;
    case reg::MAC_LSB: return mac_lsb_;
    case reg::MAC_MSB: return mac_msb_;
    case reg::SQ_PSN: return sq_psn_;
    case reg::EXP_PSN: return exp_psn_;
    case reg::CMD: return 0;
    case reg::STATUS:
      return code_ | uint32_t(st_) << kStatusStateShift | (busy() ? kStatusBusy : 0);
    case reg::LINK_TIMEOUT: return link_timeout_;
    case reg::PD: return pd_;
    case reg::POOL_BASE_LO: return pool_base_lo_;
    case reg::POOL_BASE_HI: return pool_base_hi_;
    case reg::SLOT_BYTES: return slot_bytes_;
    case reg::POOL_COUNT: return pool_count_ | pool_max_ << 8;
    case reg::QDEPTH: return qdepth_;
    case reg::QPCONF: return qpconf_;
    case reg::QPADVCONF: return advconf_;
    case reg::TIMEOUTCONF: return timeoutconf_;
    case reg::MAX_QPN: return max_qpn_;
    case reg::ERNIC_CONF: return layout4x_;
    case reg::INFO_QPN: return info_qpn_;
    case reg::POOL_STATUS: return free_n | used << 8;
    case reg::INFO_SLOT: return info < 0 ? 0 : 0x8000'0000u | uint32_t(info);
    case reg::INFO_SQ_LO: return half(ib, false);
    case reg::INFO_SQ_HI: return half(ib, true);
    case reg::INFO_CQ_LO: return half(ib + l.cq_off, false);
    case reg::INFO_CQ_HI: return half(ib + l.cq_off, true);
    case reg::INFO_RQ_LO: return half(ib + l.rq_off, false);
    case reg::INFO_RQ_HI: return half(ib + l.rq_off, true);
    case reg::INFO_CQDB_LO: return half(ib + l.db_off, false);
    case reg::INFO_CQDB_HI: return half(ib + l.db_off, true);
    case reg::INFO_RQDB_LO: return half(ib + l.db_off + 4, false);
    case reg::INFO_RQDB_HI: return half(ib + l.db_off + 4, true);
    default: return 0;
  }
}

bool QpSetupModel::write(uint32_t off, uint32_t data, uint32_t wstrb) {
  const uint32_t w = off & ~3u;
  uint32_t mask = 0;
  for (int b = 0; b < 4; ++b)
    if (wstrb & (1u << b)) mask |= 0xFFu << (8 * b);
  const uint32_t v = (read(w) & ~mask) | (data & mask);  // the word after the write
  const bool cmd_open = !busy();
  const bool cfg_open = cmd_open && std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.used; });
  if (cmd_open) {
    switch (w) {
      case reg::QPCTRL: qpctrl_ = v; break;
      case reg::DESTQP: destqp_ = v; break;
      case reg::REMOTE_IP: rip_ = v; break;
      case reg::UDP_PORT: udp_ = v & 0xFFFF; break;
      case reg::MAC_LSB: mac_lsb_ = v; break;
      case reg::MAC_MSB: mac_msb_ = v & 0xFFFF; break;
      case reg::SQ_PSN: sq_psn_ = v; break;
      case reg::EXP_PSN: exp_psn_ = v; break;
      case reg::PD: pd_ = v & 0xFFFFFF; break;
      default: break;
    }
  }
  if (cfg_open) {
    switch (w) {
      case reg::POOL_BASE_LO: pool_base_lo_ = v & ~0xFFFu; break;
      case reg::POOL_BASE_HI: pool_base_hi_ = v; break;
      case reg::SLOT_BYTES: slot_bytes_ = v & ~0xFFFu; break;
      case reg::POOL_COUNT: pool_count_ = std::min(v & 0xFF, pool_max_); break;
      case reg::QDEPTH: qdepth_ = v; break;
      case reg::QPCONF: qpconf_ = v; break;
      case reg::QPADVCONF: advconf_ = v; break;
      case reg::TIMEOUTCONF: timeoutconf_ = v; break;
      case reg::MAX_QPN: max_qpn_ = v & 0xFFFF; break;
      case reg::ERNIC_CONF: layout4x_ = v & 1; break;
      default: break;
    }
  }
  if (w == reg::LINK_TIMEOUT) link_timeout_ = v;
  if (w == reg::INFO_QPN) info_qpn_ = v & 0xFFFF;
  if (w == reg::CMD && (wstrb & 1) && (data & 1) && !busy()) {
    info_qpn_ = qpn();
    st_ = State::RegCheck;
    code_ = status::kNone;
    return true;
  }
  return false;
}

void QpSetupModel::set_state(Env& env, State s) {
  st_ = s;
  env.enter(s);
}

uint8_t QpSetupModel::finish(Env& env, uint8_t code, State s) {
  code_ = code;
  set_state(env, s);
  return code;
}

uint8_t QpSetupModel::execute(Env& env) {
  if (st_ != State::RegCheck) return code_;  // no command started
  env.enter(State::RegCheck);
  const uint8_t op = opcode();
  const uint8_t transport = uint8_t(qpctrl_ >> 16);
  const bool create = op == kOpCreate;
  // REG_CHECK, in order: the command, the QPN range, the PSN range and
  // whether the QPN is active here.
  if ((op != kOpCreate && op != kOpRelease) || transport != kTransportRoceV2 || (create && udp_ != kRoceV2Port))
    return finish(env, status::kBadCommand, State::Idle);
  const uint16_t q = qpn();
  if (q < 2 || q > max_qpn_ || (create && destqp_ > 0xFFFFFF) || (!create && owner(q) < 0))
    return finish(env, status::kQpnRange, State::Idle);
  if (create && (sq_psn_ > 0xFFFFFF || exp_psn_ > 0xFFFFFF || owner(q) >= 0))
    return finish(env, status::kPsnOrActive, State::Idle);
  return create ? this->create(env) : release(env);
}

uint8_t QpSetupModel::create(Env& env) {
  namespace q = R::q;
  // Active in ERNIC (QPCONFi[0], e.g. a QP the driver connected)?
  if (env.ernic_read(qp_addr(q::QPCONFi)) & R::fld::QPCONFi_EN.bit()) return finish(env, status::kPsnOrActive, State::Idle);
  set_state(env, State::ResAlloc);
  int slot = -1;
  for (uint32_t i = 0; i < pool_max_ && slot < 0; ++i)
    if (!slots_[i].used && i < pool_count_) slot = int(i);
  const SlotLayout l = slot_layout(qdepth_, qpconf_, slot_bytes_);
  if (slot < 0 || !l.ok) return finish(env, status::kPoolExhausted, State::Idle);
  slots_[slot] = Slot{true, qpn()};
  const uint64_t base = slot_base(uint32_t(slot));
  const uint64_t cq = base + l.cq_off, rq = base + l.rq_off, cqdb = base + l.db_off, rqdb = cqdb + 4;
  // The order of the driver's program_rc_qp (model/host/driver.cpp).
  const std::pair<uint32_t, uint32_t> alloc[] = {
      {q::QDEPTHi, qdepth_},
      {q::SQBAi, uint32_t(base)},      {q::SQBAMSBi, uint32_t(base >> 32)},
      {q::CQBAi, uint32_t(cq)},        {q::CQBAMSBi, uint32_t(cq >> 32)},
      {q::RQBAi, uint32_t(rq)},        {q::RQBAMSBi, uint32_t(rq >> 32)},
      {q::CQDBADDi, uint32_t(cqdb)},   {q::CQDBADDMSBi, uint32_t(cqdb >> 32)},
      {q::RQWPTRDBADDi, uint32_t(rqdb)}, {q::RQWPTRDBADDMSBi, uint32_t(rqdb >> 32)}};
  for (const auto& [off, v] : alloc) env.ernic_write(qp_addr(off), v);
  set_state(env, State::CmacInit);
  if (!env.wait_link(link_timeout_)) {
    slots_[slot].used = false;
    return finish(env, status::kLinkTimeout, State::Idle);
  }
  const uint32_t qpconf = qpconf_ & ~0xC1u;
  const std::pair<uint32_t, uint32_t> path[] = {
      {q::DESTQPCONFi, destqp_ & 0xFFFFFF},
      {q::SQPSNi, sq_psn_ & 0xFFFFFF},
      {q::LSTRQREQi, 0x0Au << 24 | ((exp_psn_ - 1) & 0xFFFFFF)},  // RC_WRITE_ONLY, expected PSN - 1
      {q::MACDESADDLSBi, mac_lsb_},
      {q::MACDESADDMSBi, mac_msb_},
      {q::IPDESADDR1i, rip_},
      {q::TIMEOUTCONFi, timeoutconf_},
      {q::PDi, pd_},
      {q::QPADVCONFi, advconf_},
      {q::QPCONFi, qpconf | R::fld::QPCONFi_EN.bit()}};
  for (const auto& [off, v] : path) env.ernic_write(qp_addr(off), v);
  return finish(env, status::kSuccess, State::Ready);
}

uint8_t QpSetupModel::release(Env& env) {
  namespace q = R::q;
  set_state(env, State::ResAlloc);
  const int slot = owner(qpn());
  // PG332 ch.6 QP deletion, as the driver's delete_qp runs it.
  const uint32_t adconf = env.ernic_read(g_addr(R::g::XRNICADCONF));
  const R::Layout& lay = layout4x_ ? R::kLayout4x : R::kLayout31;
  env.ernic_write(g_addr(R::g::XRNICADCONF), lay.swovr_qpn.set(adconf | R::fld::XRNICADCONF_SW_OVERRIDE.bit(), qpn()));
  const uint32_t qpconf = qpconf_ & ~0xC1u;
  env.ernic_write(qp_addr(q::QPCONFi), qpconf);
  for (uint32_t off : {q::RQWPTRDBADDi, q::SQPIi, q::CQHEADi, q::RQCIi, q::STATRQPIDBi, q::STATCURSQPTRi, q::SQPSNi,
                       q::LSTRQREQi, q::STATMSNi})
    env.ernic_write(qp_addr(off), 0);
  env.ernic_write(qp_addr(q::QPCONFi), qpconf | R::fld::QPCONFi_UNDER_RECOVERY.bit());
  env.ernic_write(g_addr(R::g::XRNICADCONF), adconf);
  slots_[slot].used = false;
  return finish(env, status::kSuccess, State::Idle);
}

}  // namespace ernic::qps
