#include "model/host/driver.h"

#include <cmath>
#include <fmt/format.h>

#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"

namespace ernic::host {

using namespace sc_core;
namespace R = regs;
namespace F = regs::f;

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

Driver::Driver(sc_module_name name, const ClockDomain& core, AxiLitePort& axil, HostMemory& mem,
               const sc_signal_in_if<bool>& intr, SimContext& ctx, DriverConfig cfg)
    : sc_module(name), core_(core), axil_(axil), mem_(mem), intr_(intr), ctx_(ctx), cfg_(std::move(cfg)),
      rng_(cfg_.seed) {
  qpn_used_.assign(cfg_.num_qp + 1, false);
  qpn_reserved_.assign(cfg_.num_qp + 1, false);
  qpn_used_[0] = qpn_used_[1] = true;
  SC_THREAD(irq_thread);
}

void Driver::set_state(Connection& c, VerbsState s) {
  if (c.state == s) return;
  c.state = s;
  if (ctx_.log)
    ctx_.log->state(sc_time_stamp().value(), cfg_.node, "host", core_.cycle(), c.qpn ? std::optional<uint32_t>(c.qpn) : std::nullopt,
                    "verbs_state", verbs_state_name(s));
}

void Driver::fail(const std::string& what) const {
  throw DriverError(fmt::format("node {}: {}", cfg_.node, what));
}

uint64_t Driver::alloc(uint64_t bytes, uint64_t align) {
  uint64_t a = (brk_ + align - 1) / align * align;
  if (bytes > mem_.size() || a > mem_.size() - bytes)
    fail(fmt::format("host memory exhausted: {} bytes wanted, {} bytes of {} used", bytes, brk_, mem_.size()));
  brk_ = a + bytes;
  return a;
}

// ------------------------------------------------------------------ init

void Driver::init() {
  if (initialised_) fail("init: already initialised");
  const auto& mac = cfg_.mac.b;
  // 1. Error buffer first (seed 000: without it nothing is logged).
  const uint32_t errbuf_n = 64, errbuf_sz = 256;
  const uint64_t errbuf = alloc(uint64_t(errbuf_n) * errbuf_sz);
  wr(greg(R::g::ERRBUFBA), uint32_t(errbuf));
  wr(greg(R::g::ERRBUFBAMSB), uint32_t(errbuf >> 32));
  wr(greg(R::g::ERRBUFSZ), errbuf_n | errbuf_sz << 16);  // [15:0] count, [31:16] size (PG332)
  // 2. MAC and IP.
  wr(greg(R::g::MACXADDLSB), uint32_t(mac[2]) << 24 | uint32_t(mac[3]) << 16 | uint32_t(mac[4]) << 8 | mac[5]);
  wr(greg(R::g::MACXADDMSB), uint32_t(mac[0]) << 8 | mac[1]);
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
  wr(greg(R::g::DATBUFSZ), datbuf_n | datbuf_sz << 16);
  const uint64_t resperr = alloc(64 * 256);
  wr(greg(R::g::RESPERRPKTBA), uint32_t(resperr));
  wr(greg(R::g::RESPERRPKTBAMSB), uint32_t(resperr >> 32));
  wr(greg(R::g::RESPERRSZ), 64 | 256u << 16);  // LX: count | size << 16
  // 4. Interrupts, base count, enable.
  wr(greg(R::g::INTEN), 0x1FF);  // 0xFF in the 3.x drivers; bit 8 (CNP scheduling) added: this driver sends CNPs
  const uint32_t basecnt = uint32_t(std::ceil(std::log2(4.096 * cfg_.core_mhz)));
  wr(greg(R::g::XRNICADCONF), basecnt << F::XRNICADCONF_BASECNT_SHIFT);
  const uint32_t ack_bits = (cfg_.ack_mode & 3) << F::XRNICCONF_ACKMODE_SHIFT;
  if (cfg_.layout.qp_count_in_xrnicconf) {
    wr(greg(R::g::XRNICCONF), F::XRNICCONF_EN | F::XRNICCONF_ERRBUF_EN | std::min(cfg_.num_qp, 255u) << 8 |
                                  ack_bits | uint32_t(cfg_.udp_sport) << cfg_.layout.udp_sport_shift);
  } else {  // 4.x: the QP count has its own register, the UDP port sits in [23:8]
    wr(greg(R::g::XRNIC_CONF_QP_EN), cfg_.num_qp & 0xFFF);
    wr(greg(R::g::XRNICCONF), F::XRNICCONF_EN | F::XRNICCONF_ERRBUF_EN | ack_bits |
                                  uint32_t(cfg_.udp_sport) << cfg_.layout.udp_sport_shift);
  }
  // 5. QP1 (GSI): SQ, RQ (512-byte elements), CQ, doorbell mirrors.
  qp1_sq_ = alloc(kQp1Depth * 64);
  qp1_rq_ = alloc(kQp1Depth * kQp1Elem);
  qp1_cq_ = alloc(kQp1Depth * 4);
  qp1_send_buf_ = alloc(kQp1Depth * kQp1SendSlot);
  const uint64_t dbpool = alloc(8 * (cfg_.num_qp + 1), 64);
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
  wr(qreg(1, R::q::QDEPTHi), kQp1Depth | kQp1Depth << 16);
  wr(qreg(1, R::q::DESTQPCONFi), 1);
  wr(qreg(1, R::q::QPCONFi), F::QPCONF_EN | F::QPCONF_RQ_IRQ | F::QPCONF_HWHS_DIS | F::QPCONF_CQE_WR |
                                 R::pmtu_code(4096) << F::QPCONF_PMTU_SHIFT |
                                 (kQp1Elem / 256) << F::QPCONF_RQBUFSZ_SHIFT);
  initialised_ = true;
}

// -------------------------------------------------------------------- MRs

const Mr& Driver::register_mr(const std::string& name, uint64_t length, uint32_t access, uint32_t pd) {
  if (!initialised_) fail("register_mr before init");
  if (mrs_.size() >= 256) fail("MR table full (256 entries)");
  if (length == 0 || length >> 48) fail(fmt::format("MR '{}': length {} not in 1..2^48-1", name, length));
  auto mr = std::make_unique<Mr>();
  mr->name = name;
  mr->index = uint32_t(mrs_.size());
  mr->pd = pd & 0xFFFFFF;
  // [guard 64 B][MR, page aligned][guard 64 B]: the leading guard ends at
  // the page boundary the MR starts on.
  const uint64_t pa = (brk_ + kMrGuardBytes + 4095) / 4096 * 4096;
  alloc(pa - brk_, 1);
  mr->pa = alloc(length + kMrGuardBytes, 1);
  mr->guard_before = mr->pa - kMrGuardBytes;
  mr->guard_after = mr->pa + length;
  for (uint64_t g : {mr->guard_before, mr->guard_after}) {
    uint8_t* p = mem_.data(g, kMrGuardBytes);
    for (uint64_t k = 0; k < kMrGuardBytes; ++k) p[k] = mr_guard_byte(k);
  }
  mr->va = 0x00007F0000000000ull + mr->pa;  // a user-space-like VA, distinct from the PA
  mr->length = length;
  mr->access = access;
  mr->rkey = mr->index << 8 | uint32_t(rng_() & 0xFF);  // XIB: index << 8 | random key byte
  const uint32_t i = mr->index;
  write_mr_ctx(*mr);  // host table first: the register writes invalidate the NIC's cached copy
  wr(mreg(i, R::m::PDPDNUM), mr->pd);
  wr(mreg(i, R::m::VIRTADDRLSB), uint32_t(mr->va));
  wr(mreg(i, R::m::VIRTADDRMSB), uint32_t(mr->va >> 32));
  wr(mreg(i, R::m::BUFBASEADDRLSB), uint32_t(mr->pa));
  wr(mreg(i, R::m::BUFBASEADDRMSB), uint32_t(mr->pa >> 32));
  wr(mreg(i, R::m::BUFRKEY), mr->rkey & 0xFF);
  wr(mreg(i, R::m::WRRDBUFLEN), uint32_t(length));
  wr(mreg(i, R::m::ACCESSDESC), (access & 0xF) | uint32_t(length >> 32) << 16);
  mrs_.push_back(std::move(mr));
  return *mrs_.back();
}

void Driver::write_mr_ctx(const Mr& mr) {
  if (!cfg_.mr_ctx_table) return;
  const uint64_t a = *cfg_.mr_ctx_table + uint64_t(mr.index) * 32;
  const uint32_t w[8] = {mr.pd, uint32_t(mr.va), uint32_t(mr.va >> 32), uint32_t(mr.pa), uint32_t(mr.pa >> 32),
                         mr.rkey & 0xFF, uint32_t(mr.length),
                         // deregistered: 0xF alone, as the register write
                         mr.access == 0xF ? 0xFu : (mr.access & 0xF) | uint32_t(mr.length >> 32) << 16};
  for (uint32_t k = 0; k < 8; ++k) mem_.write32(a + 4 * k, w[k]);  // host stores (A-HOST-1)
}

std::vector<std::string> Driver::check_mr_guards() const {
  std::vector<std::string> out;
  for (const auto& m : mrs_)
    for (int which = 0; which < 2; ++which) {
      const uint64_t g = which ? m->guard_after : m->guard_before;
      const uint8_t* p = mem_.data(g, kMrGuardBytes);
      for (uint64_t k = 0; k < kMrGuardBytes; ++k)
        if (p[k] != mr_guard_byte(k)) {
          uint64_t e = k;
          while (e + 1 < kMrGuardBytes && p[e + 1] != mr_guard_byte(e + 1)) ++e;
          out.push_back(fmt::format("node {}: MR '{}' guard {} the MR corrupted at offset {}{} (address 0x{:x}: 0x{:02x}, "
                                    "expected 0x{:02x})",
                                    cfg_.node, m->name, which ? "after" : "before", k,
                                    e > k ? fmt::format("..{}", e) : std::string(), g + k, p[k], mr_guard_byte(k)));
          k = e;
        }
    }
  return out;
}

const Mr* Driver::find_mr(const std::string& name) const {
  for (const auto& m : mrs_)
    if (m->name == name) return m.get();
  return nullptr;
}

// -------------------------------------------------------------- RC QPs

uint32_t Driver::alloc_qpn(std::optional<uint32_t> want) {
  // 3.x counts enabled QPs in XRNICCONF[15:8]: at most 255 (A-ERNIC-9).
  const uint32_t top = cfg_.layout.qp_count_in_xrnicconf ? std::min(cfg_.num_qp, 255u) : cfg_.num_qp;
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
  c.sq_base = alloc(uint64_t(p.sq_depth) * 64);
  c.cq_base = alloc(uint64_t(p.sq_depth) * 4);
  c.rq_base = alloc(uint64_t(p.rq_depth) * p.rq_elem_bytes);
  const uint64_t db = alloc(64, 64);
  c.cq_db = db;
  c.rq_db = db + 4;
}

void Driver::program_rc_qp(Connection& c) {
  const uint32_t n = c.qpn;
  const QpParams& p = c.params;
  const auto& m = c.remote_mac.b;
  wr(qreg(n, R::q::QDEPTHi), p.sq_depth | p.rq_depth << 16);
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
  wr(qreg(n, R::q::DESTQPCONFi), c.remote_qpn & 0xFFFFFF);
  wr(qreg(n, R::q::SQPSNi), c.local_psn);
  // (expected PSN - 1) with a message-ending opcode (RecoNIC: WRITE_ONLY).
  wr(qreg(n, R::q::LSTRQREQi), uint32_t(roce::op::RC_WRITE_ONLY) << 24 | roce::psn_add(c.remote_psn, -1));
  wr(qreg(n, R::q::MACDESADDLSBi), uint32_t(m[2]) << 24 | uint32_t(m[3]) << 16 | uint32_t(m[4]) << 8 | m[5]);
  wr(qreg(n, R::q::MACDESADDMSBi), uint32_t(m[0]) << 8 | m[1]);
  if (c.ipv6) {  // IPDESADDR1i = bytes 12..15 .. IPDESADDR4i = bytes 0..3
    for (int k = 1; k <= 4; ++k) wr(qreg(n, R::q::IPDESADDR1i + 4 * uint32_t(k - 1)), c.remote_ip6.pg332_word(k));
  } else {
    wr(qreg(n, R::q::IPDESADDR1i), c.remote_ip.v);
  }
  // ACK timeout exponent 14, retry 3, RNR retry 3, RNR timer 0x1F (LX values but the timeout).
  wr(qreg(n, R::q::TIMEOUTCONFi), 14 | 3u << 8 | 3u << 11 | 0x1Fu << 16);
  wr(qreg(n, R::q::PDi), p.mr ? p.mr->pd : 0);
  wr(qreg(n, R::q::QPADVCONFi), 0 | 64u << 8 | 0xFFFFu << 16);  // TC 0, TTL 64, P_Key 0xFFFF
  set_state(c, VerbsState::Init);
  if (p.sideband && !sideband_) fail(fmt::format("QP{}: sideband doorbells asked for, but the NIC has no sideband port", n));
  c.sideband = p.sideband;
  wr(qreg(n, R::q::QPCONFi), F::QPCONF_EN | (p.sideband ? 0u : F::QPCONF_HWHS_DIS) | F::QPCONF_CQE_WR |
                                 (c.ipv6 ? F::QPCONF_IPV6 : 0u) | R::pmtu_code(p.pmtu) << F::QPCONF_PMTU_SHIFT |
                                 (p.rq_elem_bytes / 256) << F::QPCONF_RQBUFSZ_SHIFT);
}

// -------------------------------------------------------------------- CM

const roce::MacAddr& Driver::neighbour(const roce::IpAddr& ip) const {
  if (ip.v6) {
    auto it = neigh6_.find(ip.ip6);
    if (it == neigh6_.end()) fail("no neighbour entry (MAC) for " + ip.str());
    return it->second;
  }
  auto it = neigh_.find(ip.ip4.v);
  if (it == neigh_.end()) fail("no neighbour entry (MAC) for " + ip.str());
  return it->second;
}

roce::IpAddr Driver::local_addr(bool v6) const {
  if (!v6) return cfg_.ip;
  if (!cfg_.ip6) fail("IPv6 peer, but this node has no IPv6 address");
  return *cfg_.ip6;
}

void Driver::send_mad(const roce::IpAddr& dst, const roce::cm::Message& msg, uint16_t attr_id) {
  roce::Frame f = qp1_frame(dst);
  f.bth.opcode = roce::op::UD_SEND_ONLY;
  f.bth.pkey = 0xFFFF;
  f.bth.dest_qp = 1;
  f.bth.psn = qp1_psn_;
  qp1_psn_ = roce::psn_add(qp1_psn_, 1);
  f.deth = roce::Deth{roce::cm::kGsiQkey, 0, 1};
  roce::cm::MadHeader h;
  h.attr_id = attr_id;
  h.tid = rng_();
  f.payload = roce::cm::encode_mad(h, msg);
  roce::EncodeOptions eo;
  eo.fill_icrc = false;
  std::vector<uint8_t> bytes = roce::encode(f, eo);
  bytes.resize(bytes.size() - roce::kIcrcLen);  // lengths count the ICRC; ERNIC appends it
  post_qp1(bytes);
}

// A frame software built (Ethernet .. last byte before the ICRC) leaves
// through QP1: a SEND WQE pointing at it (PG332).
// Ethernet, IPv4 or IPv6 (TTL / hop limit 64) and UDP of a frame software
// sends on QP1 (MADs, CNPs) to dst.
roce::Frame Driver::qp1_frame(const roce::IpAddr& dst) {
  roce::Frame f;
  f.eth.src = cfg_.mac;
  f.eth.dst = neighbour(dst);
  if (dst.v6) {  // IPv6 header, next header 17 (UDP), hop limit 64
    f.ipv6 = true;
    f.ip6.src = local_addr(true).ip6;
    f.ip6.dst = dst.ip6;
    f.ip6.hop_limit = 64;
  } else {
    f.ip4.src = cfg_.ip;
    f.ip4.dst = dst.ip4;
    f.ip4.ttl = 64;
  }
  f.udp.sport = cfg_.qp1_udp_sport;
  return f;
}

bool Driver::qp1_sq_full() const {
  // One send slot per SQ entry; the slot is free again once its WQE has
  // completed, which the CQ head mirror tells.
  return (qp1_sq_pi_ + 1) % kQp1Depth == mem_.read32(qp1_cq_db_) % kQp1Depth;
}

void Driver::post_qp1(const std::vector<uint8_t>& bytes) {
  if (qp1_sq_full()) fail("QP1 SQ full");
  const uint64_t slot = qp1_send_buf_ + uint64_t(qp1_sq_pi_) * kQp1SendSlot;
  mem_.write(slot, bytes);
  uint8_t wqe[64] = {};
  roce::put_le16(wqe + 0, uint16_t(qp1_sq_pi_));
  roce::put_le64(wqe + 4, slot);
  roce::put_le32(wqe + 12, uint32_t(bytes.size()));
  wqe[16] = 0x02;  // SEND
  mem_.write(qp1_sq_ + uint64_t(qp1_sq_pi_) * 64, wqe, 64);
  qp1_sq_pi_ = (qp1_sq_pi_ + 1) % kQp1Depth;
  wr(qreg(1, R::q::SQPIi), qp1_sq_pi_);
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
  c.established.notify(SC_ZERO_TIME);
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
  k.established.notify(SC_ZERO_TIME);
  return k;
}

Connection& Driver::listen(const QpParams& p) {
  if (!initialised_) fail("listen before init");
  if (listener_) fail("a listen is already pending");
  auto c = std::make_unique<Connection>();
  c->params = p;
  conns_.push_back(std::move(c));
  listener_ = conns_.back().get();
  return *listener_;
}

Connection& Driver::connect(roce::IpAddr server, const QpParams& p, uint16_t service_port) {
  if (!initialised_) fail("connect before init");
  const roce::MacAddr& mac = neighbour(server);
  const roce::IpAddr local = local_addr(server.v6);
  Connection& c = prepare(p);
  c.local_comm_id = rand32();
  set_remote(c, server);
  c.remote_mac = mac;

  roce::cm::Req req;
  req.local_comm_id = c.local_comm_id;
  req.service_id = 0x0000000001060000ull | service_port;  // rdma_cm, RDMA_PS_TCP
  req.local_ca_guid = 0x0200000000000000ull | (uint64_t(local.v6 ? local.ip6.pg332_word(1) : cfg_.ip.v) << 8);
  req.local_qpn = c.qpn;
  req.resp_resources = 16;
  req.initiator_depth = 16;
  req.remote_cm_timeout = 20;
  req.transport_type = 0;  // RC
  req.start_psn = c.local_psn;
  req.local_cm_timeout = 20;
  req.retry_count = 3;
  req.pkey = 0xFFFF;
  req.path_mtu = uint8_t(R::pmtu_code(p.pmtu) + 1);  // IB enum: 1 = 256 .. 5 = 4096
  req.rnr_retry_count = 3;
  req.max_cm_retries = 3;
  req.primary_local_gid = local.gid();  // IPv6: the addresses themselves; IPv4: ::ffff:a.b.c.d
  req.primary_remote_gid = server.gid();
  req.primary_hop_limit = 64;
  req.primary_local_ack_timeout = 14;
  roce::cm::RdmaCmIpHdr iph;  // rdma_cm's header: IPv6 form (ip_version 6, whole addresses) or IPv4
  iph.ip_version = server.v6 ? 6 : 4;
  iph.port = uint16_t(0xC000 | (rng_() & 0x3FFF));
  iph.src = local.gid();
  iph.dst = server.gid();
  roce::cm::MrInfo mi;
  if (p.mr) mi = {p.mr->va, p.mr->rkey, p.mr->length};
  req.private_data = roce::cm::make_private_data(iph, mi);

  connecting_ = &c;
  rep_ok_ = false;
  for (int attempt = 0; attempt < 3 && !rep_ok_ && c.state != VerbsState::Err; ++attempt) {
    send_mad(server, req, roce::cm::attr::REQ);
    wait(sc_time(cfg_.cm_timeout_us, SC_US), rep_ev_);
  }
  connecting_ = nullptr;
  if (c.state == VerbsState::Err) {
    qpn_used_[c.qpn] = false;
    fail(fmt::format("connect to {}: ConnectReject received", server.str()));
  }
  if (!rep_ok_) {
    set_state(c, VerbsState::Err);
    qpn_used_[c.qpn] = false;
    fail(fmt::format("connect to {}: no ConnectReply after 3 ConnectRequests", server.str()));
  }
  // REP gave the remote QPN and PSN: program the QP (RESET -> INIT -> RTR -> RTS).
  program_rc_qp(c);
  set_state(c, VerbsState::Rts);
  roce::cm::Rtu rtu;
  rtu.local_comm_id = c.local_comm_id;
  rtu.remote_comm_id = c.remote_comm_id;
  send_mad(server, rtu, roce::cm::attr::RTU);
  c.established.notify(SC_ZERO_TIME);
  return c;
}

void Driver::send_rep(const Connection& c) {
  roce::cm::Rep rep;
  rep.local_comm_id = c.local_comm_id;
  rep.remote_comm_id = c.remote_comm_id;
  rep.local_qpn = c.qpn;
  rep.start_psn = c.local_psn;
  rep.resp_resources = 16;
  rep.initiator_depth = 16;
  rep.target_ack_delay = 15;
  rep.rnr_retry_count = 3;
  rep.local_ca_guid = 0x0200000000000000ull |
                      (uint64_t(c.ipv6 && cfg_.ip6 ? cfg_.ip6->pg332_word(1) : cfg_.ip.v) << 8);
  roce::cm::MrInfo mi;
  if (c.params.mr) mi = {c.params.mr->va, c.params.mr->rkey, c.params.mr->length};
  rep.private_data = roce::cm::encode_mr_info(mi);
  send_mad(remote_of(c), rep, roce::cm::attr::REP);
}

void Driver::handle_mad(const uint8_t* e, size_t len) {
  // QP1 RQ element (3.x): 40-byte L3 slot, UDP(8), BTH(12), DETH(8), MAD(256).
  const size_t kMadOff = 40 + 8 + 12 + 8;
  if (len < kMadOff + roce::cm::kMadLen || e[48] != roce::op::UD_SEND_ONLY) return;
  // The L3 slot: 20 zero bytes and the IPv4 header, or the IPv6 header.
  roce::IpAddr src;
  if ((e[0] >> 4) == 6) {
    roce::Ipv6Addr a;
    std::copy(e + 8, e + 24, a.b.begin());
    src = a;
  } else {
    src = roce::Ipv4Addr{roce::get_be32(e + 20 + 12)};
  }
  auto mad = roce::cm::decode_mad(e + kMadOff, roce::cm::kMadLen);
  if (!mad) return;
  if (auto* req = std::get_if<roce::cm::Req>(&mad->msg)) {
    for (auto& k : conns_)
      if (k->qpn && k->state != VerbsState::Reset && k->remote_comm_id == req->local_comm_id && remote_of(*k) == src) {
        // A repeated ConnectRequest (our ConnectReply was lost): answer again.
        send_rep(*k);
        return;
      }
    if (!listener_ || reject_reason_) {
      roce::cm::Rej rej;
      rej.remote_comm_id = req->local_comm_id;
      rej.local_comm_id = rand32();
      rej.msg_rejected = 0;  // the REQ
      rej.reason = reject_reason_ ? *reject_reason_ : 28;  // 28: consumer reject (nobody listens)
      reject_reason_.reset();
      send_mad(src, rej, roce::cm::attr::REJ);
      return;
    }
    Connection& c = *listener_;
    listener_ = nullptr;
    c.qpn = alloc_qpn(c.params.qpn);
    c.local_psn = c.params.start_psn ? (*c.params.start_psn & 0xFFFFFF) : rand24();
    c.local_comm_id = rand32();
    c.remote_comm_id = req->local_comm_id;
    c.remote_qpn = req->local_qpn;
    c.remote_psn = req->start_psn;
    set_remote(c, src);
    c.remote_mac = neighbour(src);
    if (req->private_data.size() >= roce::cm::RdmaCmIpHdr::kLen + roce::cm::MrInfo::kLen) {
      if (auto mi = roce::cm::decode_mr_info(req->private_data.data() + roce::cm::RdmaCmIpHdr::kLen,
                                             roce::cm::MrInfo::kLen))
        c.remote_mr = *mi;
    }
    setup_queues(c);
    program_rc_qp(c);  // enabled before the REP leaves: requests may follow the RTU at once
    set_state(c, VerbsState::Rtr);
    send_rep(c);
  } else if (auto* rep = std::get_if<roce::cm::Rep>(&mad->msg)) {
    if (!connecting_ || rep->remote_comm_id != connecting_->local_comm_id) return;
    Connection& c = *connecting_;
    c.remote_comm_id = rep->local_comm_id;
    c.remote_qpn = rep->local_qpn;
    c.remote_psn = rep->start_psn;
    if (auto mi = roce::cm::decode_mr_info(rep->private_data.data(), rep->private_data.size()))
      c.remote_mr = *mi;
    rep_ok_ = true;
    rep_ev_.notify(SC_ZERO_TIME);
  } else if (auto* rtu = std::get_if<roce::cm::Rtu>(&mad->msg)) {
    for (auto& c : conns_)
      if (c->state == VerbsState::Rtr && c->local_comm_id == rtu->remote_comm_id) {
        set_state(*c, VerbsState::Rts);
        c->established.notify(SC_ZERO_TIME);
      }
  } else if (auto* dreq = std::get_if<roce::cm::Dreq>(&mad->msg)) {
    for (auto& k : conns_)
      if (k->qpn && k->local_comm_id == dreq->remote_comm_id && k->remote_comm_id == dreq->local_comm_id) {
        roce::cm::Drep drep;
        drep.local_comm_id = k->local_comm_id;
        drep.remote_comm_id = k->remote_comm_id;
        send_mad(remote_of(*k), drep, roce::cm::attr::DREP);
        if (k->state != VerbsState::Reset) delete_qp(*k);
        return;
      }
  } else if (auto* drep = std::get_if<roce::cm::Drep>(&mad->msg)) {
    if (disconnecting_ && drep->remote_comm_id == disconnecting_->local_comm_id) {
      drep_ok_ = true;
      drep_ev_.notify(SC_ZERO_TIME);
    }
  } else if (auto* rej = std::get_if<roce::cm::Rej>(&mad->msg)) {
    if (rej_comm_id_ && rej->remote_comm_id == rej_comm_id_) {
      rej_received_ = rej->reason;
      rep_ev_.notify(SC_ZERO_TIME);
    }
    if (connecting_ && rej->remote_comm_id == connecting_->local_comm_id) {
      set_state(*connecting_, VerbsState::Err);
      rep_ev_.notify(SC_ZERO_TIME);  // connect() sees rep_ok_ == false
    }
  }
}

void Driver::service_qp1_rq() {
  const uint32_t pi = mem_.read32(qp1_rq_db_) % kQp1Depth;  // STATRQPIDB1 mirror
  bool any = false;
  while (qp1_rq_ci_ != pi) {
    const uint64_t e = qp1_rq_ + uint64_t(qp1_rq_ci_) * kQp1Elem;
    std::vector<uint8_t> elem = mem_.read(e, kQp1Elem);
    qp1_rq_ci_ = (qp1_rq_ci_ + 1) % kQp1Depth;
    any = true;
    handle_mad(elem.data(), elem.size());
  }
  if (any) wr(qreg(1, R::q::RQCIi), qp1_rq_ci_);
}

void Driver::irq_thread() {
  for (;;) {
    if (!intr_.read()) wait(intr_.posedge_event());
    const uint32_t sts = rd(greg(R::g::INTSTS));
    if (sts) wr(greg(R::g::INTSTS), sts);  // W1C
    if (sts & F::INT_MAD) {
      wr(greg(cfg_.layout.rq_int_bank), 0xFFFFFFFF);
      try {
        service_qp1_rq();
      } catch (const DriverError& e) {
        ctx_.error(cfg_.node + ".driver", e.what());
      }
    }
    if (sts & F::INT_WQE_DONE)
      for (uint32_t b = 0; b < cfg_.layout.int_banks; ++b) wr(greg(cfg_.layout.cq_int_bank + 4 * b), 0xFFFFFFFF);
    if (sts & F::INT_FATAL) ++fatal_irqs_;
    if (sts & F::INT_CNP) {
      try {
        service_cnp();
      } catch (const DriverError& e) {
        ctx_.error(cfg_.node + ".driver", e.what());
      }
    }
    if (!sts) wait(intr_.value_changed_event());
  }
}

// PG332: ECN-marked arrivals set the QP's CNPSCHDSTS bit and INTSTS[8];
// software builds each CNP (BTH opcode 0x81 to the remote QP, BECN set,
// 16 reserved zero bytes) and sends it on QP1, then clears the bit (W1C).
void Driver::service_cnp() {
  for (uint32_t b = 0; b < cfg_.layout.int_banks; ++b) {
    const uint32_t bits = rd(greg(cfg_.layout.cnp_bank + 4 * b));
    if (!bits) continue;
    for (uint32_t j = 0; j < 32; ++j) {
      if (!(bits & (1u << j))) continue;
      const uint32_t qpn = 32 * b + j;
      Connection* c = by_qpn(qpn);
      if (!c) continue;
      // A notification point may rate-limit its CNPs (RoCEv2 Annex A17.9.3):
      // at most one per QP every cnp_interval_us, and none while QP1's SQ
      // is full (CM MADs keep their slots); the bit is cleared either way
      // (A-HOST-3).
      const uint64_t now = sc_time_stamp().value();
      if ((c->last_cnp_ps && now - c->last_cnp_ps < cfg_.cnp_interval_us * 1000000ull) || qp1_sq_full()) {
        ++cnps_suppressed_;
        continue;
      }
      c->last_cnp_ps = now;
      const roce::IpAddr dst = remote_of(*c);
      roce::Frame f = qp1_frame(dst);
      f.bth.opcode = roce::op::CNP;
      f.bth.pkey = 0xFFFF;
      f.bth.dest_qp = c->remote_qpn;
      f.bth.resv8a = 0x40;  // BECN
      f.bth.psn = 0;
      f.payload.assign(16, 0);
      roce::EncodeOptions eo;
      eo.fill_icrc = false;
      std::vector<uint8_t> bytes = roce::encode(f, eo);
      bytes.resize(bytes.size() - roce::kIcrcLen);
      post_qp1(bytes);
      ++cnps_sent_;
    }
    wr(greg(cfg_.layout.cnp_bank + 4 * b), bits);  // W1C what was served (A-ERNIC-22)
  }
}

// ------------------------------------------------- MR / CM housekeeping

void Driver::deregister_mr(const std::string& name) {
  for (auto it = mrs_.begin(); it != mrs_.end(); ++it) {
    if ((*it)->name != name || (*it)->access == 0xF) continue;
    (*it)->access = 0xF;
    write_mr_ctx(**it);
    wr(mreg((*it)->index, R::m::ACCESSDESC), 0xF);  // XIB: invalid access type
    (*it)->name = "";  // the name may be registered again (a new index)
    return;
  }
  fail("deregister_mr: no MR named '" + name + "'");
}

void Driver::reject_next(uint16_t reason) { reject_reason_ = reason; }

uint16_t Driver::connect_expect_reject(roce::IpAddr server, uint16_t service_port) {
  if (!initialised_) fail("connect before init");
  roce::cm::Req req;
  req.local_comm_id = rand32();
  req.service_id = 0x0000000001060000ull | service_port;
  req.local_qpn = 0;  // no QP is allocated for a connection expected to fail
  req.start_psn = rand24();
  req.pkey = 0xFFFF;
  req.path_mtu = 5;
  req.primary_local_gid = local_addr(server.v6).gid();
  req.primary_remote_gid = server.gid();
  rej_comm_id_ = req.local_comm_id;
  rej_received_.reset();
  for (int attempt = 0; attempt < 3 && !rej_received_; ++attempt) {
    send_mad(server, req, roce::cm::attr::REQ);
    wait(sc_time(cfg_.cm_timeout_us, SC_US), rep_ev_);
  }
  rej_comm_id_ = 0;
  if (!rej_received_) fail(fmt::format("connect to {}: no ConnectReject after 3 ConnectRequests", server.str()));
  return *rej_received_;
}

void Driver::delete_qp(Connection& c) {
  // PG332 ch.6, QP deletion: wait until the SQ and the outstanding queue are
  // empty and every WQE has completed, then with SW override clear the
  // enable, zero the pointers and mark the QP under recovery.
  const uint32_t n = c.qpn;
  const uint64_t deadline = sc_time_stamp().value() + uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (;;) {
    const uint32_t st = rd(qreg(n, R::q::STATQPi));
    const uint32_t head = rd(qreg(n, R::q::CQHEADi));
    const uint32_t pi = rd(qreg(n, R::q::SQPIi));
    if ((st & F::STATQP_SQ_EMPTY) && (st & F::STATQP_OSQ_EMPTY) && head == pi) break;
    if (st & F::STATQP_FATAL) break;  // nothing more will complete
    if (sc_time_stamp().value() >= deadline)
      fail(fmt::format("QP{} deletion: SQ/outstanding queue not empty after {} us (STATQP=0x{:08x} CQHEAD={} SQPI={})",
                       n, cfg_.cm_timeout_us, st, head, pi));
    wait(sc_time(1, SC_US));
  }
  const uint32_t adconf = rd(greg(R::g::XRNICADCONF));
  wr(greg(R::g::XRNICADCONF), adconf | F::XRNICADCONF_SWOVR | (n & 0xFF) << cfg_.layout.swovr_qpn_shift);
  const uint32_t qpconf = rd(qreg(n, R::q::QPCONFi));
  wr(qreg(n, R::q::QPCONFi), qpconf & ~F::QPCONF_EN);
  for (uint32_t off : {R::q::RQWPTRDBADDi, R::q::SQPIi, R::q::CQHEADi, R::q::RQCIi, R::q::STATRQPIDBi,
                       R::q::STATCURSQPTRi, R::q::SQPSNi, R::q::LSTRQREQi, R::q::STATMSNi})
    wr(qreg(n, off), 0);
  wr(qreg(n, R::q::QPCONFi), (qpconf & ~F::QPCONF_EN) | F::QPCONF_RECOVERY);
  wr(greg(R::g::XRNICADCONF), adconf);
  set_state(c, VerbsState::Reset);
  qpn_used_[n] = false;
}

uint32_t Driver::recover_fatal(Connection& c) {
  const uint32_t n = c.qpn;
  if (!n || c.state == VerbsState::Reset) fail("recover: the connection has no QP");
  // 1. Find the QP and its code in the error-status queue (64-bit entries:
  //    QPN[31:16] | code[15:0]); stop ringing SQPI (this driver posts
  //    nothing while recovering).
  uint32_t code = 0;
  const uint32_t wp = rd(greg(R::g::IPKTERRQWPTR)) & 0xFFFF;
  for (; errq_rd_ != wp; errq_rd_ = (errq_rd_ + 1) & 0xFFFF) {
    const uint32_t e = mem_.read32(errq_ + uint64_t(errq_rd_ % errq_n_) * 8);
    if ((e >> 16) == n) code = e & 0xFFFF;
  }
  // 2. Under recovery; wait for the SQ and outstanding queue to empty, every
  //    WQE to complete and the response handler's doorbell check.
  const uint32_t qpconf = rd(qreg(n, R::q::QPCONFi));
  wr(qreg(n, R::q::QPCONFi), qpconf | F::QPCONF_RECOVERY);
  const uint64_t deadline = sc_time_stamp().value() + uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (;;) {
    const uint32_t st = rd(qreg(n, R::q::STATQPi));
    const bool idle = (st & F::STATQP_SQ_EMPTY) && (st & F::STATQP_OSQ_EMPTY) &&
                      rd(qreg(n, R::q::CQHEADi)) == rd(qreg(n, R::q::SQPIi)) &&
                      (rd(greg(R::g::RESPHNDSTS)) & (1u << 16));
    if (idle) break;
    if (sc_time_stamp().value() >= deadline) fail(fmt::format("QP{} recovery: the QP did not drain", n));
    wait(sc_time(1, SC_US));
  }
  // 3. Disable, keeping the recovery bit.
  wr(qreg(n, R::q::QPCONFi), (qpconf | F::QPCONF_RECOVERY) & ~F::QPCONF_EN);
  // 4. SW override: zero the pointers; wait until CQHEAD reads 0.
  const uint32_t adconf = rd(greg(R::g::XRNICADCONF));
  wr(greg(R::g::XRNICADCONF), adconf | F::XRNICADCONF_SWOVR | (n & 0xFF) << cfg_.layout.swovr_qpn_shift);
  for (uint32_t off : {R::q::STATRQPIDBi, R::q::STATRQBUFCAi, R::q::STATRQBUFCAMSBi, R::q::RQCIi, R::q::STATCURSQPTRi,
                       R::q::SQPIi, R::q::SQPSNi, R::q::LSTRQREQi, R::q::STATMSNi, R::q::CQHEADi})
    wr(qreg(n, off), 0);
  while (rd(qreg(n, R::q::CQHEADi)) != 0) wait(sc_time(100, SC_NS));
  // 5 and 6 (new PSNs, destination, QPCONF enable with [6] cleared) are the
  // next connection's QP programming; end the SW override here.
  wr(greg(R::g::XRNICADCONF), adconf);
  set_state(c, VerbsState::Reset);
  qpn_used_[n] = false;
  return code;
}

void Driver::disconnect(Connection& c) {
  if (c.state != VerbsState::Rts && c.state != VerbsState::Err)
    fail(fmt::format("disconnect QP{} in state {}", c.qpn, verbs_state_name(c.state)));
  roce::cm::Dreq dreq;
  dreq.local_comm_id = c.local_comm_id;
  dreq.remote_comm_id = c.remote_comm_id;
  dreq.remote_qpn = c.remote_qpn;
  disconnecting_ = &c;
  drep_ok_ = false;
  for (int attempt = 0; attempt < 3 && !drep_ok_; ++attempt) {
    send_mad(remote_of(c), dreq, roce::cm::attr::DREQ);
    wait(sc_time(cfg_.cm_timeout_us, SC_US), drep_ev_);
  }
  disconnecting_ = nullptr;
  delete_qp(c);
  if (!drep_ok_) fail(fmt::format("disconnect QP{}: no DisconnectReply after 3 DisconnectRequests", c.qpn));
}

// ------------------------------------------------------------ data path

void Driver::post(Connection& c, const std::vector<Wqe>& wqes, bool doorbell_each, bool ring) {
  if (c.state != VerbsState::Rts)
    fail(fmt::format("post on QP{} in state {}: the driver posts only in RTS", c.qpn, verbs_state_name(c.state)));
  const uint32_t depth = c.params.sq_depth;
  for (const Wqe& w : wqes) {
    if (c.posted - c.completed >= depth - 1) {
      // SQ full: ring for what is written (else nothing would ever
      // complete), then wait for completions (they stay queued for poll()).
      if (!doorbell_each && c.rung != c.posted) {
        ring_sq(c);
        c.rung = c.posted;
      }
      poll(c, 0, 0);
      while (c.posted - c.completed >= depth - 1) {
        if (c.state == VerbsState::Err) fail(fmt::format("post on QP{}: the QP went to ERR while the SQ was full", c.qpn));
        wait(mem_.write_event());
        poll(c, 0, 0);
      }
    }
    uint8_t b[64] = {};
    roce::put_le16(b + 0, w.wr_id);
    roce::put_le64(b + 4, w.laddr);
    roce::put_le32(b + 12, w.length);
    b[16] = w.opcode;
    roce::put_le64(b + 20, w.remote_va);
    roce::put_le32(b + 28, w.rkey);
    roce::put_le32(b + 48, w.immdt);
    // SENDs of up to 16 bytes go inline in SDATA (PG332 Table 2-1; XIB does
    // the same); LENGTH keeps the real size (A-ERNIC-21).
    const bool is_send = w.opcode == 2 || w.opcode == 3 || w.opcode == 0x0C;  // SEND, SEND_IMM, SEND_INV
    if (is_send && w.length <= 16) mem_.read(w.laddr, b + 32, w.length);
    mem_.write(c.sq_base + uint64_t(c.sq_pi) * 64, b, 64);
    c.sq_pi = (c.sq_pi + 1) % depth;
    ++c.posted;
    if (doorbell_each) {
      ring_sq(c);
      c.rung = c.posted;
    }
  }
  if (!doorbell_each && ring && c.posted != c.rung) ring_sq(c);
  if (ring || doorbell_each) c.rung = c.posted;
}

std::vector<Cqe> Driver::poll(Connection& c, uint32_t count, uint64_t timeout_ps) {
  const uint64_t deadline = sc_time_stamp().value() + timeout_ps;
  const uint32_t depth = c.params.sq_depth;
  auto drain = [&] {
    // CQHEADi: its mirror at CQDBADDi, or the sideband count in HW-handshake mode.
    const uint32_t head = (c.sideband ? c.sb_cq_head : mem_.read32(c.cq_db)) % depth;
    while (c.cq_ci != head) {
      Cqe q;
      q.raw = mem_.read32(c.cq_base + uint64_t(c.cq_ci) * 4);
      q.wr_id = uint16_t(q.raw);
      q.opcode = uint8_t(q.raw >> 16);
      q.error = (q.raw >> 24) != 0;
      q.time_ps = sc_time_stamp().value();
      c.cqes.push_back(q);
      c.cq_ci = (c.cq_ci + 1) % depth;
      ++c.completed;
      if (q.error) set_state(c, VerbsState::Err);
    }
  };
  drain();
  while (c.cqes.size() < count) {
    const uint64_t now = sc_time_stamp().value();
    if (now >= deadline) break;
    wait(sc_time(double(deadline - now), SC_PS), mem_.write_event());
    drain();
  }
  std::vector<Cqe> out;
  while (!c.cqes.empty() && out.size() < count) {
    out.push_back(c.cqes.front());
    c.cqes.pop_front();
  }
  return out;
}

// ------------------------------------------------------------ receive side

Connection* Driver::by_qpn(uint32_t qpn) {
  for (auto& c : conns_)
    if (c->qpn == qpn && c->state != VerbsState::Reset) return c.get();
  return nullptr;
}

void Driver::on_rq_doorbell(uint32_t qpn, uint32_t pi) {
  if (Connection* c = by_qpn(qpn)) {
    c->rx_events.push_back({false, pi, sc_time_stamp().value()});
    rx_event_.notify(SC_ZERO_TIME);
  }
}

void Driver::on_cq_doorbell(uint32_t qpn, uint32_t cq_head) {
  if (Connection* c = by_qpn(qpn))
    if (c->sideband) c->sb_cq_head = cq_head;
}

void Driver::ring_sq(Connection& c) {
  if (c.sideband) sideband_->sq_pidb(c.qpn, c.sq_pi);
  else wr(qreg(c.qpn, R::q::SQPIi), c.sq_pi);
}

void Driver::wait_qp_idle(uint32_t n, const char* what) {
  const uint64_t deadline = sc_time_stamp().value() + uint64_t(cfg_.cm_timeout_us) * 1000000;
  for (;;) {
    const uint32_t st = rd(qreg(n, R::q::STATQPi));
    const uint32_t head = rd(qreg(n, R::q::CQHEADi));
    const uint32_t pi = rd(qreg(n, R::q::SQPIi));
    if ((st & F::STATQP_SQ_EMPTY) && (st & F::STATQP_OSQ_EMPTY) && head == pi) return;
    if (st & F::STATQP_FATAL) fail(fmt::format("QP{} {}: the QP is fatal", n, what));
    if (sc_time_stamp().value() >= deadline)
      fail(fmt::format("QP{} {}: SQ/outstanding queue not empty after {} us (STATQP=0x{:08x} CQHEAD={} SQPI={})", n,
                       what, cfg_.cm_timeout_us, st, head, pi));
    wait(sc_time(1, SC_US));
  }
}

uint32_t Driver::switch_to_hw_handshake(Connection& c) {
  const uint32_t n = c.qpn;
  if (c.state != VerbsState::Rts) fail(fmt::format("switch to HW handshake: QP{} is {}, not RTS", n, verbs_state_name(c.state)));
  if (c.sideband) fail(fmt::format("switch to HW handshake: QP{} is already in HW-handshake mode", n));
  if (!sideband_) fail("switch to HW handshake: the NIC has no sideband port");
  // "During the switch the QP must carry no traffic": every posted WQE has
  // completed; its CQEs are collected now (the CQ restarts at 0).
  if (c.rung != c.posted) ring_sq(c);
  wait_qp_idle(n, "switch to HW handshake");
  poll(c, 0, 0);
  if (c.posted != c.completed) fail(fmt::format("switch to HW handshake: QP{} has {} WQEs not completed", n, c.posted - c.completed));
  const uint32_t depth = c.params.rq_depth ? c.params.rq_depth : 1;
  const uint32_t adconf = rd(greg(R::g::XRNICADCONF));
  wr(greg(R::g::XRNICADCONF), adconf | F::XRNICADCONF_SWOVR | (n & 0xFF) << cfg_.layout.swovr_qpn_shift);
  for (uint32_t off : {R::q::SQPIi, R::q::CQHEADi, R::q::STATCURSQPTRi}) wr(qreg(n, off), 0);
  const uint32_t wptr = rd(qreg(n, R::q::STATRQPIDBi)) & 0xFFFF;
  const uint32_t rqci = rd(qreg(n, R::q::RQCIi)) & 0xFFFF;
  const uint32_t pending = (wptr % depth + depth - rqci % depth) % depth;
  wr(qreg(n, R::q::STATRQPIDBi), pending);
  wr(qreg(n, R::q::RQCIi), 0);
  const uint32_t qpconf = rd(qreg(n, R::q::QPCONFi));
  wr(qreg(n, R::q::QPCONFi), qpconf & ~F::QPCONF_HWHS_DIS);
  wr(greg(R::g::XRNICADCONF), adconf);
  rd(greg(R::g::XRNICADCONF));  // the posted writes have arrived
  // The host side starts over with the NIC: SQ, CQ (and its mirror) and RQ at 0.
  c.sq_pi = 0;
  c.cq_ci = 0;
  c.sb_cq_head = 0;
  c.rq_ci = 0;
  mem_.write32(c.cq_db, 0);
  c.sideband = true;
  if (ctx_.log)
    ctx_.log->state(sc_time_stamp().value(), cfg_.node, "host", core_.cycle(), n, "doorbells", "sideband");
  return pending;
}

void Driver::on_ieth(uint64_t entry) {
  if (Connection* c = by_qpn(uint32_t(entry >> 40) & 0xFF)) {
    c->rx_events.push_back({true, entry, sc_time_stamp().value()});
    rx_event_.notify(SC_ZERO_TIME);
  }
}

// Turns the arrival-ordered events into messages: an RQ doorbell announces
// the element before the new pointer; an ieth entry of a SEND kind that
// follows it for that pointer (8 bits of it) names its kind and datum; a
// WRITE_IMM entry is a message of its own.
std::vector<RecvMsg> Driver::recv(Connection& c, uint32_t count, uint64_t timeout_ps, bool consume) {
  const uint64_t deadline = sc_time_stamp().value() + timeout_ps;
  const uint32_t depth = c.params.rq_depth ? c.params.rq_depth : 1;
  auto ready = [&] {
    uint32_t n = 0;
    for (size_t i = 0; i < c.rx_events.size(); ++i) {
      const auto& e = c.rx_events[i];
      if (!e.ieth || (uint8_t(e.value >> 32) == 3)) ++n;  // a doorbell or a WRITE_IMM entry
    }
    return n;
  };
  while (ready() < count) {
    const uint64_t now = sc_time_stamp().value();
    if (now >= deadline) break;
    wait(sc_time(double(deadline - now), SC_PS), rx_event_);
  }
  std::vector<RecvMsg> out;
  while (!c.rx_events.empty() && out.size() < count) {
    const auto e = c.rx_events.front();
    c.rx_events.pop_front();
    RecvMsg m;
    m.time_ps = e.time_ps;
    if (e.ieth) {
      const uint8_t type = uint8_t(e.value >> 32);
      if (type != 3) continue;  // a SEND kind's entry without its doorbell: not expected
      m.kind = RecvMsg::kWriteImm;
      m.data = uint32_t(e.value);
      out.push_back(m);
      continue;
    }
    const uint32_t pi = uint32_t(e.value) % depth;
    m.rq_index = (pi + depth - 1) % depth;
    m.elem_addr = c.rq_base + uint64_t(m.rq_index) * c.params.rq_elem_bytes;
    if (!c.rx_events.empty() && c.rx_events.front().ieth) {
      const uint64_t v = c.rx_events.front().value;
      const uint8_t type = uint8_t(v >> 32);
      if ((type == 1 || type == 2) && uint8_t(v >> 48) == uint8_t(pi)) {
        m.kind = type == 1 ? RecvMsg::kSendInv : RecvMsg::kSendImm;
        m.data = uint32_t(v);
        c.rx_events.pop_front();
      }
    }
    c.rq_ci = pi;
    out.push_back(m);
  }
  if (consume && !out.empty()) {
    if (c.sideband) sideband_->rq_cidb(c.qpn, c.rq_ci);
    else wr(qreg(c.qpn, R::q::RQCIi), c.rq_ci);
  }
  return out;
}

}  // namespace ernic::host
