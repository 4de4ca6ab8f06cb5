// model/ernic: the RX packet handler: the RX buffer, validation, QP1, the
// error buffer, and the dispatch of what passed (see rx_pkt_hndler.h; the
// responder is rx_responder.cpp).
#include "model/ernic/rx_pkt_hndler.h"

#include <fmt/format.h>

#include "model/datapath/roce_rx_ref.h"
#include "model/ernic/qp_ctx_cache.h"
#include "model/ernic/qp_frame.h"
#include "model/link/pfc.h"
#include "model/regs/fatal.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;

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

RxPktHndler::RxPktHndler(sc_module_name name, ErnicShared& s, Interrupts& intr, RespHndler& resp, WqeProc& tx,
                         RxSinks sinks)
    : sc_module(name), s_(s), intr_(intr), resp_(resp), tx_(tx), sinks_(sinks) {
  SC_THREAD(rx_thread);
}

// ------------------------------------------------------------- RX buffer

void RxPktHndler::push(const seam::RxDesc& desc, roce::Bytes payload) {
  // roce_cmac_s_axis has no tready: a frame the RX buffer cannot hold is lost
  // (counted; a run error only with rx.overflow: fail).
  const uint64_t size = desc.frame_len;
  if (buf_bytes_ + size > s_.cfg.timing.rx_buffer_bytes) {
    ++s_.stats.rx_overflow_drops;
    const std::string what = fmt::format(
        "RX buffer overflow on node {}: a {}-byte frame arrived with {} of {} bytes in use; frame lost "
        "({} lost so far; XRNIC_PAUSE_CONF 0x{:x}, XRNIC_BUF_THRESHOLD_ROCE 0x{:08x})",
        s_.cfg.node, size, buf_bytes_, s_.cfg.timing.rx_buffer_bytes, s_.stats.rx_overflow_drops,
        s_.G(R::g::XRNIC_PAUSE_CONF), s_.G(R::g::XRNIC_BUF_THRESHOLD_ROCE));
    if (!overflowing_) {  // once per run of losses
      if (s_.cfg.timing.rx_overflow_fails)
        s_.ctx.error(s_.scope + ".rx_buffer", what);
      else
        s_.ctx.event(s_.scope + ".rx_buffer", what);
    }
    overflowing_ = true;
    if (s_.ctx.log)
      s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), std::nullopt, "rx_overflow", what);
    return;
  }
  overflowing_ = false;
  buf_bytes_ += size;
  s_.stats.rx_buffer_peak = std::max(s_.stats.rx_buffer_peak, buf_bytes_);
  buffer_changed();
  arrival_.push_back(ClockDomain::now_ps());
  rxq_.push_back(RxFrame{desc, std::move(payload)});
  s_.ctx.set(s_.wave.rxb_tvalid, 1);
  s_.rx_ev.notify(SC_ZERO_TIME);
}

// PFC (XRNIC_PAUSE_CONF[0]): ctl_tx_pause_req[RoCE priority] rises when the
// RX buffer level reaches XOFF (XRNIC_BUF_THRESHOLD_ROCE[31:16], bytes;
// 0: never) and falls when it is back at or below XON ([15:0]).
void RxPktHndler::buffer_changed() {
  const uint32_t conf = s_.G(R::g::XRNIC_PAUSE_CONF), thr = s_.G(R::g::XRNIC_BUF_THRESHOLD_ROCE);
  const uint32_t xon = FLD::XRNIC_BUF_THRESHOLD_ROCE_XON.get(thr), xoff = FLD::XRNIC_BUF_THRESHOLD_ROCE_XOFF.get(thr);
  const int bit = pfc::pause_bit(conf, true);
  bool want = xoff_;
  if (bit < 0)
    want = false;
  else if (!xoff_ && xoff != 0 && buf_bytes_ >= xoff)
    want = true;
  else if (xoff_ && buf_bytes_ <= xon)
    want = false;
  if (want == xoff_) return;
  xoff_ = want;
  if (want) ++s_.stats.rx_xoff;
  const uint16_t req = want ? uint16_t(1u << bit) : 0;
  if (*sinks_.cmac) (*sinks_.cmac)->set_tx_pause_req(req);
  if (s_.ctx.log)
    s_.ctx.log->state(ClockDomain::now_ps(), s_.cfg.node, "core", s_.core.cycle(), std::nullopt,
                      want ? "rx_xoff" : "rx_xon",
                      fmt::format("RX buffer {} bytes {} {} {}: ctl_tx_pause_req = 0x{:03x}", buf_bytes_,
                                  want ? ">=" : "<=", want ? "XOFF" : "XON", want ? xoff : xon, req));
}

void RxPktHndler::rx_thread() {
  for (;;) {
    // Coalescing timeouts that passed (queued by the timer thread, in order;
    // those due now queued here if the timer thread has not run yet).
    resp_.fire_due_acks(ClockDomain::now_ps());
    if (!s_.ack_fire_q.empty()) {
      qp::QpContext& qp = s_.qps[s_.ack_fire_q.front()];
      s_.ack_fire_q.pop_front();
      if (s_.qpc && qp.resp.ack_fire) s_.qpc->access(qp.qpn, QpCtxCache::kRx);  // X-QPC-CACHE
      if (qp.resp.ack_fire && qp.resp.rs.unacked() && qp.enabled && !s_.fatal(qp.qpn))
        send_ack(qp.qpn, roce::aeth::ack(), qp.resp.unacked_psn);
      qp.resp.ack_fire = false;
      s_.trace(qp);
      continue;
    }
    if (rxq_.empty()) {
      wait(s_.rx_ev);
      continue;
    }
    RxFrame raw = std::move(rxq_.front());
    rxq_.pop_front();
    const uint64_t arrived = arrival_.front();
    arrival_.pop_front();
    const uint64_t t_start = ClockDomain::now_ps();
    s_.ctx.set(s_.wave.rxb_tvalid, !rxq_.empty());
    s_.ctx.set(s_.wave.rxb_tready, 0);
    s_.ctx.set(s_.wave.rx_valid, 1);
    // The parser is pipelined (A-ERNIC-25): a frame is validated
    // rx_parse_cycles after it arrived, overlapping the previous frame's
    // payload write when the handler was still busy with it.
    {
      const uint64_t ready = arrived + uint64_t(s_.cfg.timing.rx_parse_cycles) * s_.core.period_ps();
      const uint64_t now = ClockDomain::now_ps();
      s_.core.wait_cycles(ready > now ? s_.core.cycles_for_ps(ready - now) : 0);
    }
    resp_.fire_due_acks(ClockDomain::now_ps());  // a timeout due now comes before this frame
    handle(raw);
    if (s_.cfg.timing.rx_handler_gbps > 0) {  // a slowed receiver
      const uint64_t until =
          t_start + uint64_t(double(raw.desc.frame_len) * 8000.0 / s_.cfg.timing.rx_handler_gbps);
      if (until > ClockDomain::now_ps()) wait(ps(until - ClockDomain::now_ps()));
    }
    s_.ctx.set(s_.wave.rx_valid, 0);
    s_.ctx.set(s_.wave.rxb_tready, 1);
    buf_bytes_ -= raw.desc.frame_len;  // the handler is done with it: out of the RX buffer
    buffer_changed();
    s_.ctx.bump();
  }
}

// ---------------------------------------------------------- validation

void RxPktHndler::drop(const std::string& why, uint32_t syndrome) {
  ++s_.stats.rx_dropped;
  s_.regs.add16(R::g::INALLDRPPKTCNT, true);
  if (syndrome == 0 || !desc_) return;  // not a validation failure (duplicates, full RQ, ...)
  // Error buffer (PG332): with XRNICCONF[5] every validation failure is
  // logged as a 32-bit syndrome followed by a copy of the packet's header
  // (from the Ethernet header to the last extension header, rebuilt from
  // roce_rx's descriptor: seam::rx_header_bytes; zeros after it), in
  // ERRBUFSZ[31:16]-byte entries; ERRBUFWPTR counts them; INTSTS[0] is
  // raised (A-ERNIC-18).
  ++s_.stats.validation_errors;
  intr_.raise(FLD::INTSTS_PKT_VALID_ERR.bit());
  if (!(s_.G(R::g::XRNICCONF) & FLD::XRNICCONF_ERRBUF_EN.bit())) return;
  const uint64_t base = s_.regs.g64(R::g::ERRBUFBA, R::g::ERRBUFBAMSB);
  const uint32_t num = FLD::ERRBUFSZ_NUM.get(s_.G(R::g::ERRBUFSZ)), size = FLD::ERRBUFSZ_SIZE.get(s_.G(R::g::ERRBUFSZ));
  if (!base || !num || size < 4) return;
  const uint32_t wp = FLD::ERRBUFWPTR_VALUE.get(s_.G(R::g::ERRBUFWPTR));
  std::vector<uint8_t> e(size, 0);
  roce::put_le32(e.data(), syndrome);
  const roce::Bytes hdr = seam::rx_header_bytes(*desc_);
  std::copy_n(hdr.begin(), std::min<size_t>(size - 4, hdr.size()), e.begin() + 4);
  s_.dma_rx.write(base + uint64_t(wp % num) * size, e.data(), e.size());
  s_.G(R::g::ERRBUFWPTR) = FLD::ERRBUFWPTR_VALUE.set(0, wp + 1);
  s_.ctx.event(s_.block_scope(*this), fmt::format("validation failure ({}), syndrome 0x{:08x}, error buffer entry {}",
                                                why, syndrome, wp % num));
}

// PG332's validation (Table 2-3). roce_rx's checks come in the syndrome
// (1 IP version, 2 IPv4 checksum, 4 lengths, 8 header, 30 ICRC, 31 FCS);
// the handler adds its own, each bit on its own (several may be set).
uint32_t RxPktHndler::validate(const seam::RxDesc& d, std::string& why) {
  uint32_t syn = d.syndrome;
  auto fail = [&](uint32_t bit, const std::string& what) {
    syn |= bit;
    why += (why.empty() ? "" : ", ") + what;
  };
  if (syn & seam::kSynIpVersion) why += "IP version";
  if (syn & seam::kSynIpChecksum) why += std::string(why.empty() ? "" : ", ") + "IPv4 header checksum";
  if (syn & seam::kSynLength) why += std::string(why.empty() ? "" : ", ") + "length";
  if (syn & seam::kSynHeader) why += std::string(why.empty() ? "" : ", ") + "header (IHL or opcode)";
  if (syn & seam::kSynIcrc) {
    ++s_.stats.rx_icrc_errors;
    why += std::string(why.empty() ? "" : ", ") + "ICRC";
  }
  if (syn & seam::kSynFcs) why += std::string(why.empty() ? "" : ", ") + "FCS";
  // PG332 Table 2-3: IPv4 flags other than 010 (DF) or a fragment offset.
  if (!d.ipv6 && d.ip_frag != roce::kIpv4FlagsDf) fail(seam::kSynIpFlags, "IPv4 flags / fragment offset");
  const roce::Frame tmpl_local = frame_template(s_.regs, 1);
  if (d.eth_dst != mac_of(tmpl_local.eth.src)) fail(seam::kSynMacDa, "MAC DA");
  if (d.ipv6 ? ip6_of(d.ip_dst) != local_ip6(s_.regs) : ip4_of(d.ip_dst) != s_.G(R::g::IPv4XADD))
    fail(seam::kSynIpDa, "IP DA");
  if (d.tver != 0) fail(seam::kSynTver, "TVer");
  const uint32_t n = d.dest_qp;
  const uint32_t enabled_qps = s_.regs.layout().qp_count_in_xrnicconf
                                   ? FLD::XRNICCONF_NUM_QP.get(s_.G(R::g::XRNICCONF))
                                   : regs::fld4x::XRNIC_CONF_QP_EN_NUM_QP.get(s_.G(R::g::XRNIC_CONF_QP_EN));
  const bool qp_ok = n != 0 && n <= s_.cfg.num_qp && n <= enabled_qps && s_.qps[n].enabled;
  if (!qp_ok)
    fail(seam::kSynQp, n == 0 || n > s_.cfg.num_qp || n > enabled_qps ? "QP unsupported" : "QP disabled");
  if (qp_ok && n != 1) {
    // RC: the IP version must be the QP's (QPCONFi[7]) and the source the QP's remote.
    const roce::Frame t = frame_template(s_.regs, n);
    if (d.ipv6 != t.ipv6) fail(seam::kSynIpVersion, d.ipv6 ? "IPv6 frame for an IPv4 QP" : "IPv4 frame for an IPv6 QP");
    else if (d.eth_src != mac_of(t.eth.dst) ||
             (d.ipv6 ? ip6_of(d.ip_src) != t.ip6.dst : ip4_of(d.ip_src) != t.ip4.dst.v))
      fail(seam::kSynSource, "source is not the QP's remote");
  }
  return syn;
}

void RxPktHndler::handle(const RxFrame& r) {
  const seam::RxDesc& d = r.desc;
  desc_ = &d;
  struct Clear {
    const seam::RxDesc*& p;
    ~Clear() { p = nullptr; }
  } clear{desc_};
  s_.regs.add16(R::g::INALLDRPPKTCNT, false);
  if (!(s_.G(R::g::XRNICCONF) & FLD::XRNICCONF_EN.bit())) return drop("ERNIC disabled");
  s_.ctx.set(s_.wave.rx_opcode, d.opcode);
  std::string why;
  if (const uint32_t syn = validate(d, why)) return drop(why, syn);
  const uint32_t n = d.dest_qp;
  qp::QpContext& qp = s_.qps[n];
  // A fatal RC QP takes nothing more in (no ACK, no NAK) until recovered.
  if (n != 1 && s_.fatal(n)) return drop("QP fatal");
  // X-QPC-CACHE: the QP's context first (the frames behind wait too); the
  // QP may have changed meanwhile.
  if (n != 1 && s_.qpc && s_.qpc->access(n, QpCtxCache::kRx) && (!qp.enabled || s_.fatal(n)))
    return drop(qp.enabled ? "QP fatal" : "QP disabled");
  const roce::Frame f = seam::frame_from_rx_desc(d, r.payload);
  if (*sinks_.rx_taken) (*sinks_.rx_taken)(f);
  s_.G(R::g::LSTINPKT) = ErnicShared::last_packet(f.bth.opcode, n, f.bth.psn);
  if (n == 1) return rx_qp1(f, d);
  dispatch(qp, f);
}

// A valid frame on an RC QP, by what it is.
void RxPktHndler::dispatch(qp::QpContext& qp, const roce::Frame& f) {
  const uint32_t n = qp.qpn;
  const roce::OpcodeInfo* oi = roce::opcode_info(f.bth.opcode);
  if (!oi) return drop("unknown opcode");
  if (oi->kind == roce::OpKind::Cnp) return resp_.rx_cnp(qp);
  // ECN CE (11) on an arriving packet: a CNP must be sent to its sender;
  // software does that on QP1 (PG332): CNPSCHDSTS bit and INTSTS[8].
  if (((f.ipv6 ? f.ip6.traffic_class : f.ip4.tos) & roce::kEcnMask) == roce::kEcnCe) {
    intr_.bank_set(s_.regs.layout().cnp_bank, n);
    intr_.raise(FLD::INTSTS_CNP.bit());
  }
  std::optional<RxDrop> refused;
  switch (oi->kind) {
    case roce::OpKind::Ack:
      refused = resp_.rx_ack(qp, f);
      break;
    case roce::OpKind::Send:
    case roce::OpKind::Write:
      if (roce::transport(f.bth.opcode) != roce::Transport::RC) return unsupported(qp, f);
      return rx_request(qp, f);
    case roce::OpKind::ReadRequest:
      return rx_request(qp, f);
    case roce::OpKind::ReadResponse:
      refused = resp_.rx_read_resp(qp, f);
      break;
    case roce::OpKind::Atomic:
      return unsupported(qp, f);
    case roce::OpKind::AtomicAck:  // the requester issues no atomics (A-ERNIC-31)
      return resp_.qp_fatal(qp, pg332::fatal::kBadAckOpcode,
                            fmt::format("{} at PSN 0x{:06x}: no atomic was issued", oi->name, f.bth.psn));
    default:
      s_.ctx.error(s_.qp_scope(n), fmt::format("incoming {}: this opcode is not modelled yet", oi->name));
      return drop("opcode not modelled");
  }
  if (refused) drop(refused->why, refused->syndrome);
}

// ------------------------------------------------------------------ QP1

// STATRQBUFCAi / MSBi: the address of the RQ element the next SEND fills,
// in RQBAi's format (A-CNT-1).
void RxPktHndler::set_rq_buf_ca(uint32_t qpn, uint64_t addr) {
  s_.Q(qpn, R::q::STATRQBUFCAi) = uint32_t(addr) & FLD::STATRQBUFCAi_ADDR.mask();
  s_.Q(qpn, R::q::STATRQBUFCAMSBi) = uint32_t(addr >> 32);
}

void RxPktHndler::rx_qp1(const roce::Frame& f, const seam::RxDesc& d) {
  if (f.bth.opcode != roce::op::UD_SEND_ONLY || !f.deth) return drop("QP1 accepts UD SEND_ONLY only");
  const uint32_t depth = s_.rq_depth(1);
  if (depth == 0) return drop("QP1 RQ depth is 0");
  const uint32_t pi = FLD::STATRQPIDBi_VALUE.get(s_.Q(1, R::q::STATRQPIDBi)) % depth;
  const uint32_t ci = FLD::RQCIi_VALUE.get(s_.Q(1, R::q::RQCIi)) % depth;
  if ((pi + 1) % depth == ci) return drop("QP1 RQ full");
  // 3.x QP1 element: a 40-byte L3 slot (IPv4: 20 zero bytes then the IPv4
  // header; IPv6: the IPv6 header), then UDP, BTH, DETH and the MAD.
  const size_t ip_len = f.ipv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen;
  std::vector<uint8_t> elem(40 - ip_len, 0);
  const roce::Bytes hdr = seam::rx_header_bytes(d);  // the headers as received
  elem.insert(elem.end(), hdr.begin() + roce::kEthHdrLen, hdr.end());
  elem.insert(elem.end(), f.payload.begin(), f.payload.end());
  elem.insert(elem.end(), f.pad.begin(), f.pad.end());
  const uint64_t esz = uint64_t(FLD::QPCONFi_RQ_BUF_SIZE.get(s_.Q(1, R::q::QPCONFi))) * R::kRqBufSizeUnit;
  if (elem.size() > esz) return drop("MAD larger than the QP1 RQ element");
  const uint64_t rqba = s_.q64(1, R::q::RQBAi, R::q::RQBAMSBi);
  s_.dma_rx.write(rqba + pi * esz, elem.data(), elem.size(), 1u);
  const uint32_t npi = (pi + 1) % depth;
  s_.Q(1, R::q::STATRQPIDBi) = npi;
  set_rq_buf_ca(1, rqba + npi * esz);
  s_.dma_rx.write32(s_.q64(1, R::q::RQWPTRDBADDi, R::q::RQWPTRDBADDMSBi), npi, 1u);
  s_.regs.add16(R::g::INAMPKTCNT, true);
  ++s_.stats.mads_received;
  if (s_.Q(1, R::q::QPCONFi) & FLD::QPCONFi_RQ_IRQ_EN.bit()) intr_.bank_set(s_.regs.layout().rq_int_bank, 1);
  intr_.raise(FLD::INTSTS_MAD.bit());
}

}  // namespace ernic
