#include "model/host/qp_setup_driver.h"

#include <fmt/format.h>

#include "model/roce/psn.h"

namespace ernic::host {

using namespace sc_core;
namespace Q = qps;
namespace R = regs;

uint32_t QpSetupGeometry::qpconf() const {
  return R::fld::QPCONFi_HW_HANDSHAKE_DIS.bit() | R::fld::QPCONFi_CQE_WRITE_EN.bit() | R::fld::QPCONFi_PMTU.set(0, R::pmtu_code(pmtu)) |
         R::fld::QPCONFi_RQ_BUF_SIZE.set(0, rq_elem_bytes / R::kRqBufSizeUnit);
}

uint64_t QpSetupGeometry::slot_size() const {
  if (slot_bytes) return slot_bytes;
  const Q::SlotLayout l = Q::slot_layout(sq_depth | rq_depth << 16, qpconf(), ~uint64_t(0));
  return (l.need + 4095) / 4096 * 4096;
}

QpSetupDriver::QpSetupDriver(Driver& drv, AxiLitePort& axil, QpSetupGeometry g, uint32_t poll_ns)
    : drv_(drv), axil_(axil), g_(g), poll_ns_(poll_ns) {}

void QpSetupDriver::fail(const std::string& what) const {
  throw DriverError(fmt::format("node {}: qp_setup_fsm: {}", drv_.config().node, what));
}

QpSetupDriver::Lock::Lock(QpSetupDriver& d) : d_(d) {
  while (d_.busy_) wait(d_.free_);
  d_.busy_ = true;
}

QpSetupDriver::Lock::~Lock() {
  d_.busy_ = false;
  d_.free_.notify(SC_ZERO_TIME);
}

void QpSetupDriver::init() {
  if (initialised_) fail("init: already initialised");
  const uint64_t slot = g_.slot_size();
  window_ = drv_.alloc(uint64_t(g_.pool) * slot, 4096);
  wr(Q::reg::POOL_BASE_LO, uint32_t(window_));
  wr(Q::reg::POOL_BASE_HI, uint32_t(window_ >> 32));
  wr(Q::reg::SLOT_BYTES, uint32_t(slot));
  wr(Q::reg::POOL_COUNT, g_.pool);
  wr(Q::reg::QDEPTH, g_.sq_depth | g_.rq_depth << 16);
  wr(Q::reg::QPCONF, g_.qpconf());
  const R::Layout& L = drv_.config().layout;
  const uint32_t top = L.qp_count_in_xrnicconf ? std::min(drv_.config().num_qp, 255u) : drv_.config().num_qp;
  wr(Q::reg::MAX_QPN, top);
  wr(Q::reg::ERNIC_CONF, L.qcsr_base == R::kLayout4x.qcsr_base ? 1 : 0);
  wr(Q::reg::LINK_TIMEOUT, g_.link_timeout_cycles);
  // The block keeps what fits (POOL_COUNT is clamped to POOL_MAX).
  const uint32_t pc = rd(Q::reg::POOL_COUNT);
  if ((pc & 0xFF) != g_.pool)
    fail(fmt::format("POOL_COUNT reads {} after writing {} (POOL_MAX {})", pc & 0xFF, g_.pool, (pc >> 8) & 0xFF));
  initialised_ = true;
}

QpSetupResult QpSetupDriver::run(uint64_t timeout_ps) {
  wr(Q::reg::CMD, 1);
  const uint64_t deadline = sc_time_stamp().value() + timeout_ps;
  for (;;) {
    const uint32_t st = rd(Q::reg::STATUS);
    if (!(st & Q::kStatusBusy))
      return {uint8_t(st & Q::kStatusCodeMask), Q::State((st >> Q::kStatusStateShift) & 7)};
    if (sc_time_stamp().value() >= deadline)
      fail(fmt::format("the command did not end within {} us (STATUS 0x{:08x})", timeout_ps / 1000000, st));
    wait(sc_time(poll_ns_, SC_NS));
  }
}

QpSetupResult QpSetupDriver::create(const QpSetupRequest& r, uint64_t timeout_ps) {
  if (!initialised_) fail("create before init");
  const Lock lock(*this);
  // The QPN is the block's from the command's start, so that a connect
  // running meanwhile picks another; one the driver is establishing (its
  // QP maybe not programmed yet, so the block could not see it active) is
  // refused rather than programmed twice.
  const Driver::QpnHolder holder = drv_.qpn_holder(r.qpn);
  if (holder == Driver::QpnHolder::connecting)
    fail(fmt::format("create QP{}: QP {} is being established by a connection of the driver (a connect at the same "
                     "time?)", r.qpn, r.qpn));
  if (holder == Driver::QpnHolder::none) drv_.reserve_qpn(r.qpn, true);
  drv_.clear_shadow_doorbell(r.qpn);  // the block enables the QP (X-SHADOW-DB-3)
  wr(Q::reg::QPCTRL, Q::qpctrl(Q::kOpCreate, uint16_t(r.qpn)));
  wr(Q::reg::DESTQP, r.remote_qpn);
  wr(Q::reg::REMOTE_IP, r.remote_ip);
  wr(Q::reg::UDP_PORT, r.udp_port);
  wr(Q::reg::MAC_LSB, r.remote_mac.pg332_lsb());
  wr(Q::reg::MAC_MSB, r.remote_mac.pg332_msb());
  wr(Q::reg::SQ_PSN, r.sq_psn);
  wr(Q::reg::EXP_PSN, r.exp_psn);
  wr(Q::reg::PD, r.pd);
  const QpSetupResult res = run(timeout_ps);
  if (res.status != Q::status::kSuccess && holder == Driver::QpnHolder::none) drv_.reserve_qpn(r.qpn, false);
  return res;
}

QpSetupResult QpSetupDriver::release(uint32_t qpn, uint64_t timeout_ps) {
  if (!initialised_) fail("release before init");
  const Lock lock(*this);
  wr(Q::reg::QPCTRL, Q::qpctrl(Q::kOpRelease, uint16_t(qpn)));
  const QpSetupResult res = run(timeout_ps);
  if (res.status == Q::status::kSuccess) drv_.reserve_qpn(qpn, false);
  return res;
}

Connection& QpSetupDriver::adopt(uint32_t qpn, const roce::cm::MrInfo& remote_mr, const Mr* local_mr) {
  if (!initialised_) fail("adopt before init");
  const Lock lock(*this);
  wr(Q::reg::INFO_QPN, qpn);
  const uint32_t slot = rd(Q::reg::INFO_SLOT);
  if (!(slot & 0x8000'0000u)) fail(fmt::format("adopt: QP{} holds no slot (INFO_SLOT 0x{:08x})", qpn, slot));
  auto rd64 = [&](uint32_t lo, uint32_t hi) { return uint64_t(rd(lo)) | uint64_t(rd(hi)) << 32; };
  auto c = std::make_unique<Connection>();
  c->qpn = qpn;
  c->sq_base = rd64(Q::reg::INFO_SQ_LO, Q::reg::INFO_SQ_HI);
  c->cq_base = rd64(Q::reg::INFO_CQ_LO, Q::reg::INFO_CQ_HI);
  c->rq_base = rd64(Q::reg::INFO_RQ_LO, Q::reg::INFO_RQ_HI);
  c->cq_db = rd64(Q::reg::INFO_CQDB_LO, Q::reg::INFO_CQDB_HI);
  c->rq_db = rd64(Q::reg::INFO_RQDB_LO, Q::reg::INFO_RQDB_HI);
  const uint32_t qdepth = rd(Q::reg::QDEPTH), qpconf = rd(Q::reg::QPCONF);
  c->params.sq_depth = qdepth & 0xFFFF;
  c->params.rq_depth = qdepth >> 16;
  c->params.rq_elem_bytes = R::fld::QPCONFi_RQ_BUF_SIZE.get(qpconf) * R::kRqBufSizeUnit;
  c->params.pmtu = R::pmtu_bytes(R::fld::QPCONFi_PMTU.get(qpconf));
  c->params.qpn = qpn;
  c->params.mr = local_mr;
  // What the block programmed into ERNIC for this QP.
  const R::Layout& L = drv_.config().layout;
  auto q = [&](uint32_t off) { return axil_.read(L.qp(qpn, off)); };
  if (!(q(R::q::QPCONFi) & R::fld::QPCONFi_EN.bit())) fail(fmt::format("adopt: ERNIC's QP{} is not enabled", qpn));
  c->remote_qpn = R::fld::DESTQPCONFi_QPN.get(q(R::q::DESTQPCONFi));
  c->local_psn = q(R::q::SQPSNi) & roce::kPsnMask;
  c->remote_psn = roce::psn_add(R::fld::LSTRQREQi_PSN.get(q(R::q::LSTRQREQi)), 1);
  c->remote_mac = roce::MacAddr::from_pg332_words(q(R::q::MACDESADDMSBi), q(R::q::MACDESADDLSBi));
  c->remote_ip = roce::Ipv4Addr{q(R::q::IPDESADDR1i)};
  c->remote_mr = remote_mr;
  // The slot's doorbell mirrors start at 0 with the QP (host stores).
  const uint8_t zero[4] = {};
  drv_.bus().mem_write(c->cq_db, zero, 4);
  drv_.bus().mem_write(c->rq_db, zero, 4);
  return drv_.adopt(std::move(c));
}

}  // namespace ernic::host
