// model/host: the driver's core: construction and bookkeeping, PG332's
// bring-up (init), the host-memory allocator, the interrupt thread, and the
// RC QPs' allocation and programming (prepare, establish, adopt).
// Elsewhere: MRs (driver_mr.cpp), QP1 and CM (driver_cm.cpp), posting,
// polling and the receive side (driver_datapath.cpp), QP deletion, fatal
// recovery and the switch to HW handshake (driver_recovery.cpp).
#include "model/host/driver.h"

#include <cmath>
#include <fmt/format.h>

#include "model/regs/cqe.h"
#include "model/regs/wqe.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic::host {

namespace R = regs;
namespace FLD = regs::fld;

const char* verbs_state_name(VerbsState s) {
  switch (s) {
    case VerbsState::Reset: return "RESET";
    case VerbsState::Init: return "INIT";
    case VerbsState::Rtr: return "RTR";
    case VerbsState::Rts: return "RTS";
    case VerbsState::Err: return "ERR";
  }
  return "?";
}

Driver::Driver(HostBus& bus, DriverConfig cfg) : bus_(bus), cfg_(std::move(cfg)), rng_(cfg_.seed) {
  qpn_used_.assign(cfg_.num_qp + 1, false);
  qpn_reserved_.assign(cfg_.num_qp + 1, false);
  qpn_used_[0] = qpn_used_[1] = true;
}

void Driver::set_state(Connection& c, VerbsState s) {
  if (c.state == s) return;
  c.state = s;
  bus_.log_state(c.qpn, "verbs_state", verbs_state_name(s));
  if (s == VerbsState::Rts) bus_.signal(HostBus::kEstablished);
}

void Driver::fail(const std::string& what) const {
  throw DriverError(fmt::format("node {}: {}", cfg_.node, what));
}

uint64_t Driver::alloc(uint64_t bytes, uint64_t align) {
  const uint64_t a = bus_.alloc(bytes, align);
  if (!a) fail(fmt::format("host memory exhausted: {} bytes wanted (aligned to {}), {} bytes of host memory", bytes, align,
                           bus_.mem_size()));
  return a;
}

uint32_t Driver::mem_read32(uint64_t a) const {
  uint8_t b[4];
  bus_.mem_read(a, b, 4);
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

void Driver::mem_write32(uint64_t a, uint32_t v) {
  const uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
  bus_.mem_write(a, b, 4);
}

std::vector<uint8_t> Driver::mem_read(uint64_t a, uint64_t len) const {
  std::vector<uint8_t> v(len);
  bus_.mem_read(a, v.data(), len);
  return v;
}

// ------------------------------------------------------------------ init

void Driver::init() {
  if (initialised_) fail("init: already initialised");
  // 1. Error buffer first (seed 000: without it nothing is logged).
  const uint32_t errbuf_n = 64, errbuf_sz = 256;
  const uint64_t errbuf = alloc(uint64_t(errbuf_n) * errbuf_sz);
  wr(greg(R::g::ERRBUFBA), uint32_t(errbuf));
  wr(greg(R::g::ERRBUFBAMSB), uint32_t(errbuf >> 32));
  wr(greg(R::g::ERRBUFSZ), FLD::ERRBUFSZ_SIZE.set(FLD::ERRBUFSZ_NUM.set(0, errbuf_n), errbuf_sz));
  // 2. MAC and IP.
  wr(greg(R::g::MACXADDLSB), cfg_.mac.pg332_lsb());
  wr(greg(R::g::MACXADDMSB), cfg_.mac.pg332_msb());
  wr(greg(R::g::IPv4XADD), cfg_.ip.v);
  if (cfg_.ip6)  // PG332 word order: IPv6XADD1 = bytes 12..15 .. IPv6XADD4 = bytes 0..3
    for (int k = 1; k <= 4; ++k) wr(greg(R::g::IPv6XADD1 + 4 * uint32_t(k - 1)), cfg_.ip6->pg332_word(k));
  // 3. Incoming error-status queue, write-retry data buffers, response-error buffer.
  const uint32_t errq_n = 64;
  const uint64_t errq = alloc(uint64_t(errq_n) * 8);
  errq_ = errq;
  errq_n_ = errq_n;
  wr(greg(R::g::IPKTERRQBA), uint32_t(errq));
  wr(greg(R::g::IPKTERRQBAMSB), uint32_t(errq >> 32));
  wr(greg(R::g::IPKTERRQSZ), errq_n);
  const uint32_t datbuf_n = 16 * cfg_.num_qp, datbuf_sz = 4096;  // 16 outstanding per QP
  const uint64_t datbuf = alloc(uint64_t(datbuf_n) * datbuf_sz);
  wr(greg(R::g::DATBUFBA), uint32_t(datbuf));
  wr(greg(R::g::DATBUFBAMSB), uint32_t(datbuf >> 32));
  wr(greg(R::g::DATBUFSZ), FLD::DATBUFSZ_SIZE.set(FLD::DATBUFSZ_NUM.set(0, datbuf_n), datbuf_sz));
  const uint32_t resperr_n = 64, resperr_sz = 256;
  const uint64_t resperr = alloc(uint64_t(resperr_n) * resperr_sz);
  wr(greg(R::g::RESPERRPKTBA), uint32_t(resperr));
  wr(greg(R::g::RESPERRPKTBAMSB), uint32_t(resperr >> 32));
  wr(greg(R::g::RESPERRSZ), FLD::RESPERRSZ_SIZE.set(FLD::RESPERRSZ_NUM.set(0, resperr_n), resperr_sz));
  // 4. Interrupts, base count, enable.
  // Every interrupt, as the 3.x drivers' 0xFF, and bit 8 (CNP scheduling): this driver sends CNPs.
  wr(greg(R::g::INTEN), FLD::INTEN_PKT_VALID_ERR.bit() | FLD::INTEN_MAD.bit() | FLD::INTEN_BYPASS_PKT.bit() |
                            FLD::INTEN_RNR_NAK.bit() | FLD::INTEN_WQE_DONE.bit() | FLD::INTEN_ILLEGAL_OPCODE.bit() |
                            FLD::INTEN_RQ_PKT.bit() | FLD::INTEN_FATAL.bit() | FLD::INTEN_CNP.bit());
  const uint32_t basecnt = uint32_t(std::ceil(std::log2(4.096 * cfg_.core_mhz)));
  wr(greg(R::g::XRNICADCONF), FLD::XRNICADCONF_BASE_COUNT.set(0, basecnt));
  uint32_t conf = FLD::XRNICCONF_EN.bit() | FLD::XRNICCONF_ERRBUF_EN.bit();
  conf = FLD::XRNICCONF_ACK_MODE.set(conf, cfg_.ack_mode);
  conf = cfg_.layout.udp_sport.set(conf, cfg_.udp_sport);
  if (cfg_.layout.qp_count_in_xrnicconf)  // 3.x: at most 255 (A-ERNIC-9)
    conf = FLD::XRNICCONF_NUM_QP.set(conf, std::min(cfg_.num_qp, FLD::XRNICCONF_NUM_QP.max()));
  else  // 4.x: the QP count has its own register
    wr(greg(R::g::XRNIC_CONF_QP_EN), R::fld4x::XRNIC_CONF_QP_EN_NUM_QP.set(0, cfg_.num_qp));
  wr(greg(R::g::XRNICCONF), conf);
  // 5. QP1 (GSI): SQ, RQ (512-byte elements), CQ, doorbell mirrors.
  qp1_sq_ = alloc(kQp1Depth * pg332::kWqeBytes);
  qp1_rq_ = alloc(kQp1Depth * kQp1Elem);
  qp1_cq_ = alloc(kQp1Depth * pg332::kCqeBytes);
  qp1_send_buf_ = alloc(kQp1Depth * kQp1SendSlot);
  const uint64_t dbpool = alloc(8 * (cfg_.num_qp + 1), 64);
  db_pool_ = dbpool;
  qp1_cq_db_ = dbpool;
  qp1_rq_db_ = dbpool + 4;
  wr(qreg(1, R::q::RQBAi), uint32_t(qp1_rq_));
  wr(qreg(1, R::q::RQBAMSBi), uint32_t(qp1_rq_ >> 32));
  wr(qreg(1, R::q::SQBAi), uint32_t(qp1_sq_));
  wr(qreg(1, R::q::SQBAMSBi), uint32_t(qp1_sq_ >> 32));
  wr(qreg(1, R::q::CQBAi), uint32_t(qp1_cq_));
  wr(qreg(1, R::q::CQBAMSBi), uint32_t(qp1_cq_ >> 32));
  wr(qreg(1, R::q::RQWPTRDBADDi), uint32_t(qp1_rq_db_));
  wr(qreg(1, R::q::RQWPTRDBADDMSBi), uint32_t(qp1_rq_db_ >> 32));
  wr(qreg(1, R::q::CQDBADDi), uint32_t(qp1_cq_db_));
  wr(qreg(1, R::q::CQDBADDMSBi), uint32_t(qp1_cq_db_ >> 32));
  wr(qreg(1, R::q::QDEPTHi), FLD::QDEPTHi_RQ_DEPTH.set(FLD::QDEPTHi_SQ_DEPTH.set(0, kQp1Depth), kQp1Depth));
  wr(qreg(1, R::q::DESTQPCONFi), 1);
  wr(qreg(1, R::q::QPCONFi), FLD::QPCONFi_EN.bit() | FLD::QPCONFi_RQ_IRQ_EN.bit() | FLD::QPCONFi_HW_HANDSHAKE_DIS.bit() | FLD::QPCONFi_CQE_WRITE_EN.bit() |
                                 FLD::QPCONFi_PMTU.set(0, R::pmtu_code(roce::kMtuMax)) |
                                 FLD::QPCONFi_RQ_BUF_SIZE.set(0, kQp1Elem / R::kRqBufSizeUnit));
  initialised_ = true;
}

// -------------------------------------------------------------- RC QPs

uint32_t Driver::flush_posted(uint32_t qpn) { return rd(qreg(qpn, R::q::STATQPi)); }

std::optional<uint32_t> Driver::lowest_free_qpn(const std::set<uint32_t>& avoid) const {
  for (uint32_t n = 2; n <= top_qpn(); ++n)
    if ((n >= qpn_used_.size() || !qpn_used_[n]) && !avoid.count(n)) return n;
  return std::nullopt;
}

// 3.x counts enabled QPs in XRNICCONF[15:8]: at most 255 (A-ERNIC-9).
uint32_t Driver::top_qpn() const {
  return cfg_.layout.qp_count_in_xrnicconf ? std::min(cfg_.num_qp, 255u) : cfg_.num_qp;
}

uint32_t Driver::alloc_qpn(std::optional<uint32_t> want) {
  const uint32_t top = top_qpn();
  if (want) {
    if (*want < 2 || *want > top)
      fail(fmt::format("QPN {} outside 2..{}{}", *want, top,
                       top < cfg_.num_qp ? " (XRNICCONF[15:8] enables at most 255 QPs in the 3.x layout)" : ""));
    if (qpn_used_[*want]) fail(fmt::format("QPN {} already in use", *want));
    qpn_used_[*want] = true;
    return *want;
  }
  for (uint32_t n = 2; n <= top; ++n)
    if (!qpn_used_[n]) {
      qpn_used_[n] = true;
      return n;
    }
  fail("no free QP");
}

void Driver::setup_queues(Connection& c) {
  const QpParams& p = c.params;
  if (p.rq_elem_bytes % 256 || p.rq_elem_bytes == 0) fail("RQ element size must be a multiple of 256");
  c.sq_base = alloc(uint64_t(p.sq_depth) * pg332::kWqeBytes);
  c.cq_base = alloc(uint64_t(p.sq_depth) * pg332::kCqeBytes);
  c.rq_base = alloc(uint64_t(p.rq_depth) * p.rq_elem_bytes);
  switch (cfg_.doorbell_layout) {
    case DriverConfig::DoorbellLayout::qp_line: {
      const uint64_t db = alloc(64, 64);
      c.cq_db = db;
      c.rq_db = db + 4;
      break;
    }
    case DriverConfig::DoorbellLayout::shared_line:
      // The pool's slot of this QPN: a QP set up on it before left its last
      // values there, so both words start at 0 again (host stores).
      c.cq_db = db_pool_ + 8 * uint64_t(c.qpn - 1);
      c.rq_db = c.cq_db + 4;
      mem_write32(c.cq_db, 0);
      mem_write32(c.rq_db, 0);
      break;
    case DriverConfig::DoorbellLayout::spread:
      c.cq_db = alloc(4, 4096);
      c.rq_db = alloc(4, 4096);
      break;
  }
}

void Driver::program_rc_qp(Connection& c) {
  const uint32_t n = c.qpn;
  const QpParams& p = c.params;
  wr(qreg(n, R::q::QDEPTHi), FLD::QDEPTHi_RQ_DEPTH.set(FLD::QDEPTHi_SQ_DEPTH.set(0, p.sq_depth), p.rq_depth));
  wr(qreg(n, R::q::SQBAi), uint32_t(c.sq_base));
  wr(qreg(n, R::q::SQBAMSBi), uint32_t(c.sq_base >> 32));
  wr(qreg(n, R::q::CQBAi), uint32_t(c.cq_base));
  wr(qreg(n, R::q::CQBAMSBi), uint32_t(c.cq_base >> 32));
  wr(qreg(n, R::q::RQBAi), uint32_t(c.rq_base));
  wr(qreg(n, R::q::RQBAMSBi), uint32_t(c.rq_base >> 32));
  wr(qreg(n, R::q::CQDBADDi), uint32_t(c.cq_db));
  wr(qreg(n, R::q::CQDBADDMSBi), uint32_t(c.cq_db >> 32));
  wr(qreg(n, R::q::RQWPTRDBADDi), uint32_t(c.rq_db));
  wr(qreg(n, R::q::RQWPTRDBADDMSBi), uint32_t(c.rq_db >> 32));
  wr(qreg(n, R::q::DESTQPCONFi), FLD::DESTQPCONFi_QPN.set(0, c.remote_qpn));
  wr(qreg(n, R::q::SQPSNi), c.local_psn);
  // (expected PSN - 1) with a message-ending opcode (RecoNIC: WRITE_ONLY).
  wr(qreg(n, R::q::LSTRQREQi), FLD::LSTRQREQi_OPCODE.set(FLD::LSTRQREQi_PSN.set(0, roce::psn_add(c.remote_psn, -1)),
                                                        roce::op::RC_WRITE_ONLY));
  wr(qreg(n, R::q::MACDESADDLSBi), c.remote_mac.pg332_lsb());
  wr(qreg(n, R::q::MACDESADDMSBi), c.remote_mac.pg332_msb());
  if (c.ipv6) {  // IPDESADDR1i = bytes 12..15 .. IPDESADDR4i = bytes 0..3
    for (int k = 1; k <= 4; ++k) wr(qreg(n, R::q::IPDESADDR1i + 4 * uint32_t(k - 1)), c.remote_ip6.pg332_word(k));
  } else {
    wr(qreg(n, R::q::IPDESADDR1i), c.remote_ip.v);
  }
  // ACK timeout exponent 14, retry 3, RNR retry 3, RNR timer 0x1F (LX values but the timeout).
  uint32_t timeout = FLD::TIMEOUTCONFi_ACK_TIMEOUT.set(0, p.ack_timeout);
  timeout = FLD::TIMEOUTCONFi_RETRY_CNT.set(timeout, p.retry_cnt);
  timeout = FLD::TIMEOUTCONFi_RNR_RETRY_CNT.set(timeout, p.rnr_retry_cnt);
  wr(qreg(n, R::q::TIMEOUTCONFi), FLD::TIMEOUTCONFi_RNR_TIMER.set(timeout, p.rnr_timer));
  wr(qreg(n, R::q::PDi), p.pd ? *p.pd : p.mr ? p.mr->pd : 0);
  // Traffic class 0, TTL 64, the default P_Key.
  wr(qreg(n, R::q::QPADVCONFi), FLD::QPADVCONFi_PKEY.set(FLD::QPADVCONFi_TTL.set(0, 64), roce::kDefaultPkey));
  set_state(c, VerbsState::Init);
  if (p.sideband && !bus_.has_sideband()) fail(fmt::format("QP{}: sideband doorbells asked for, but the NIC has no sideband port", n));
  c.sideband = p.sideband;
  // X-SHADOW-DB-3: the entry starts at 0, the NIC's last value once it sees
  // the enable (a store of the CPU: there before any post of this QP).
  if (!p.sideband) clear_shadow_doorbell(n);
  wr(qreg(n, R::q::QPCONFi), FLD::QPCONFi_EN.bit() | (p.sideband ? 0u : FLD::QPCONFi_HW_HANDSHAKE_DIS.bit()) | FLD::QPCONFi_CQE_WRITE_EN.bit() |
                                 (c.ipv6 ? FLD::QPCONFi_IPV6.bit() : 0u) | FLD::QPCONFi_PMTU.set(0, R::pmtu_code(p.pmtu)) |
                                 FLD::QPCONFi_RQ_BUF_SIZE.set(0, p.rq_elem_bytes / R::kRqBufSizeUnit));
}

Connection& Driver::prepare(const QpParams& p) {
  if (!initialised_) fail("connect before init");
  auto cp = std::make_unique<Connection>();
  Connection& c = *cp;
  conns_.push_back(std::move(cp));
  c.params = p;
  c.qpn = alloc_qpn(p.qpn);
  c.local_psn = p.start_psn ? (*p.start_psn & 0xFFFFFF) : rand24();
  setup_queues(c);
  return c;
}

void Driver::establish(Connection& c, uint32_t remote_qpn, uint32_t remote_psn, roce::IpAddr remote_ip,
                       const roce::cm::MrInfo& remote_mr) {
  c.remote_mac = neighbour(remote_ip);
  c.remote_qpn = remote_qpn;
  c.remote_psn = remote_psn;
  set_remote(c, remote_ip);
  c.remote_mr = remote_mr;
  program_rc_qp(c);
  set_state(c, VerbsState::Rts);
}

void Driver::reserve_qpn(uint32_t qpn, bool reserved) {
  if (qpn < 2 || qpn > cfg_.num_qp || qpn_reserved_[qpn] == reserved) return;
  if (reserved && qpn_used_[qpn]) return;  // the driver's own connection: not the offload's
  qpn_reserved_[qpn] = reserved;
  qpn_used_[qpn] = reserved;
}

Driver::QpnHolder Driver::qpn_holder(uint32_t qpn) const {
  if (qpn < 2 || qpn > cfg_.num_qp || !qpn_used_[qpn]) return QpnHolder::none;
  if (qpn_reserved_[qpn]) return QpnHolder::reserved;
  for (auto it = conns_.rbegin(); it != conns_.rend(); ++it)  // the newest holder of the QPN
    if ((*it)->qpn == qpn)
      return (*it)->state == VerbsState::Reset || (*it)->state == VerbsState::Init || (*it)->state == VerbsState::Rtr
                 ? QpnHolder::connecting
                 : QpnHolder::connection;
  return QpnHolder::connection;
}

Connection& Driver::adopt(std::unique_ptr<Connection> c) {
  if (!initialised_) fail("adopt before init");
  if (c->qpn >= 2 && c->qpn <= cfg_.num_qp && qpn_reserved_[c->qpn])
    qpn_reserved_[c->qpn] = false;  // stays used, now by the connection
  else
    alloc_qpn(c->qpn);  // fails when the QPN is out of range or in use
  conns_.push_back(std::move(c));
  Connection& k = *conns_.back();
  set_state(k, VerbsState::Rts);
  return k;
}

// ------------------------------------------------------------ interrupts

uint32_t Driver::service_interrupt() {
  const uint32_t sts = rd(greg(R::g::INTSTS));
  if (sts) wr(greg(R::g::INTSTS), sts);  // W1C
  if (sts & FLD::INTSTS_MAD.bit()) {
    wr(greg(cfg_.layout.rq_int_bank), 0xFFFFFFFF);
    try {
      service_qp1_rq();
      // A batched CM set-up (driver_cm_batch.cpp) gets MADs in bursts: those
      // that land while the RQ is scanned raise INTSTS[1] again before the
      // posted W1C above reaches the NIC, which then clears them too. So
      // the W1C is flushed (a read does not pass a posted write) and the
      // RQ scanned once more.
      if (batch_pending()) {
        rd(greg(R::g::INTSTS));
        service_qp1_rq();
      }
    } catch (const DriverError& e) {
      bus_.report_error(e.what());
    }
  }
  if (sts & FLD::INTSTS_WQE_DONE.bit())
    for (uint32_t b = 0; b < cfg_.layout.int_banks; ++b) wr(greg(cfg_.layout.cq_int_bank + 4 * b), 0xFFFFFFFF);
  if (sts & FLD::INTSTS_FATAL.bit()) ++fatal_irqs_;
  if (sts & FLD::INTSTS_CNP.bit()) {
    try {
      service_cnp();
    } catch (const DriverError& e) {
      bus_.report_error(e.what());
    }
  }
  return sts;
}

}  // namespace ernic::host
