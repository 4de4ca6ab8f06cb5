// tb/fuzz: the ERNIC node of fuzz_rx (see rx_node.h): its configuration,
// built once, set up by the model's own requester, snapshotted, and run one
// input at a time. The configuration, as PG332's setup flow (chapter 6)
// leaves registers and QP contexts (tb/ernic/block_bench.h's setup_qp):
//   - XRNICCONF: enabled, 5 QPs, ACK on AckReq or the coalescing timeout
//     (mode 00), error buffer on; MAC 02:00:00:00:00:0a, 10.0.0.1, fd00::1;
//   - QP1 (GSI), QP2 (IPv4, PMTU 256, PD 1, five requests outstanding: WRITE
//     600 B, READ 700 B, SEND 100 B, WRITE_IMM 256 B, READ 64 B), QP3 (IPv4,
//     PMTU 1024, PD 2, responder PSN about to wrap), QP4 (configured, not
//     enabled), QP5 (IPv6, PMTU 4096, PD 1, RQ depth 2, a WRITE, a READ and
//     a SEND_INV outstanding across the PSN wrap); no local ACK timer (the
//     requests wait for answers forever), RNR timer code 1 (10 us);
//   - MRs 0..8 (rights, PDs, a zero-length one, one at the top of the VA
//     space, a deregistered one), each followed by an unregistered gap.
#include "tb/fuzz/rx_node.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <systemc>

#include "model/datapath/roce_rx_ref.h"
#include "model/ernic/interrupts.h"
#include "model/ernic/qp_mgr.h"
#include "model/ernic/resp_hndler.h"
#include "model/ernic/retry_buf.h"
#include "model/ernic/rx_pkt_hndler.h"
#include "model/ernic/wqe_cache.h"
#include "model/ernic/wqe_proc.h"
#include "model/regs/wqe.h"
#include "tb/fuzz/fuzz_check.h"

// libsystemc's main() calls sc_main; the fuzzer's and the replay driver's
// main() come first, so this one never runs (the library needs the symbol).
int sc_main(int, char**) { return 0; }

namespace ernic::fuzz_rx {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;
using pg332::WqeOpcode;

// The longest an input may keep the node busy: an RNR NAK's wait is at most
// 655.36 ms (timer code 0), after which the go-back runs. (Picoseconds: no
// sc_time may exist before the time resolution is set.)
constexpr uint64_t kSettlePs = 2'000'000'000'000ull;

const std::vector<QpSpec>& qp_specs() {
  static const std::vector<QpSpec> v = {
      // qpn en  v6  pmtu pd remote MAC      remote IPv4 dest   RQ  x256  SQ PSN    exp PSN   TIMEOUTCONF
      {1, true, false, 0, 0, 0, 0, 1, 4, 2, 0, 0, 0},
      {2, true, false, 0, 1, 0x02000000000Bull, 0x0A000002, 0x102, 4, 4, 0x000100, 0x000500, 0x00011B00},
      {3, true, false, 2, 2, 0x02000000000Bull, 0x0A000003, 0x203, 4, 8, 0x000700, 0xFFFFFE, 0x00011B00},
      {4, false, false, 2, 1, 0x02000000000Bull, 0x0A000004, 0x204, 4, 8, 0x000800, 0x000900, 0x00011B00},
      {5, true, true, 4, 1, 0x02000000000Cull, 0, 0x305, 2, 16, 0xFFFFFF, 0x7FFFF0, 0x00011B00},
  };
  return v;
}

const QpSpec* qp_spec(uint32_t n) {
  for (const QpSpec& q : qp_specs())
    if (q.qpn == n) return &q;
  return nullptr;
}

roce::Ipv6Addr remote_ip6(uint32_t n) {
  roce::Ipv6Addr a;
  a.b[0] = 0xFD;
  a.b[15] = uint8_t(n);
  return a;
}
roce::Ipv6Addr local_ip6() { return remote_ip6(1); }

uint64_t rq_base(uint32_t n) {
  static const uint64_t base[] = {0, 0x20000, 0x22000, 0x24000, 0x27000, 0x2A000};
  return n < 6 ? base[n] : 0;
}

const std::vector<MrSpec>& mr_specs() {
  static const std::vector<MrSpec> v = {
      // idx key   pd access  VA                      base     length
      {0, 0x11, 1, 2, 0x0000100000000000ull, 0x40000, 0x1000},
      {1, 0x22, 1, 0, 0x2000, 0x42000, 0x1000},
      {2, 0x33, 1, 1, 0x0000300000000000ull, 0x44000, 0x800},
      {3, 0x44, 2, 2, 0x4000, 0x46000, 0x1000},
      {4, 0x55, 1, 2, 0xFFFFFFFFFFFFF800ull, 0x48000, 0x800},
      {5, 0x66, 1, 2, 0x5000, 0x4A000, 0},
      {6, 0x77, 1, 0xF, 0x6000, 0x4C000, 0x1000},
      {7, 0x88, 3, 2, 0x7000, 0x4E000, 0x1000},
      {8, 0x99, 1, 2, 0x80000000, 0x50000, 0x10000},
  };
  return v;
}

// Requests the node's own requester sends during setup (and that wait for
// answers): payloads at 0x16000.., READ destinations at 0x18000...
struct Posted {
  uint32_t qpn;
  WqeOpcode op;
  uint32_t length;
  uint64_t laddr;
};
const Posted kPosted[] = {
    {2, WqeOpcode::write, 600, 0x16000},   {2, WqeOpcode::read, 700, 0x18000},
    {2, WqeOpcode::send, 100, 0x16400},    {2, WqeOpcode::write_imm, 256, 0x16800},
    {2, WqeOpcode::read, 64, 0x18400},     {5, WqeOpcode::write, 5000, 0x16000},
    {5, WqeOpcode::read, 4196, 0x19000},   {5, WqeOpcode::send_inv, 16, 0},
};

struct RxNode::Impl {
  ClockDomain core{"core", 200.0};
  SimContext ctx;
  HostMemory mem{kMemBytes};
  ErnicShared s{core, mem, ctx, "top.A.ernic", config()};
  IntrLine intr_line{"rnic_intr"};
  Interrupts intr{s, intr_line};
  WqeCache cache{s};
  RoceDatapath* datapath = nullptr;  // TX frames are only recorded (on_tx_committed)
  Cmac* cmac = nullptr;              // no PFC (XRNIC_PAUSE_CONF 0)
  std::function<void(const seam::TxDesc&)> on_tx_committed;
  std::function<void(uint64_t)> ieth_sink;
  std::function<void(uint32_t, uint32_t)> rq_db_sink, cq_db_sink;
  std::function<void(const roce::Frame&)> rx_taken;
  // The ERNIC top's order (model/ernic/ernic.h): it fixes the order of
  // processes runnable in the same delta cycle.
  QpMgr qp_mgr{"qp_mgr", s, cache, wqe_proc, resp, retry_buf};
  WqeProc wqe_proc{"wqe_proc", s, intr, resp, retry_buf, datapath, on_tx_committed};
  RxPktHndler rx{"rx_pkt_hndler", s, intr, resp, wqe_proc, RxSinks{&ieth_sink, &rq_db_sink, &rx_taken, &cmac}};
  RespHndler resp{"resp_hndler", s, intr, cache, retry_buf, cq_db_sink};
  RetryBuf retry_buf{"retry_buf", s};
  RunResult* cur = nullptr;

  static ErnicConfig config() {
    ErnicConfig c;
    c.node = "A";
    c.num_qp = kNumQp;
    c.layout = R::kLayout31;
    return c;
  }

  Impl() {
    s.wave.declare(ctx, s.scope, s.scope + ".wqe_proc", s.scope + ".rx_pkt_hndler", s.cfg.num_qp);
    on_tx_committed = [this](const seam::TxDesc& d) {
      if (cur) cur->tx.push_back(d);
    };
    rx_taken = [this](const roce::Frame&) {
      if (cur) ++cur->taken;
    };
  }

  void setup_global() {
    const R::Layout& L = s.cfg.layout;
    uint32_t conf = L.udp_sport.set(FLD::XRNICCONF_EN.bit() | FLD::XRNICCONF_ERRBUF_EN.bit(), 0xC0DE);
    s.G(R::g::XRNICCONF) = FLD::XRNICCONF_NUM_QP.set(conf, kEnabledQps);
    s.G(R::g::MACXADDMSB) = uint32_t(kLocalMac >> 32);
    s.G(R::g::MACXADDLSB) = uint32_t(kLocalMac);
    s.G(R::g::IPv4XADD) = kLocalIp4;
    const roce::Ipv6Addr l6 = local_ip6();  // from_pg332_words: word 1 = bytes 12..15, word 4 = bytes 0..3
    s.G(R::g::IPv6XADD1) = roce::get_be32(&l6.b[12]);
    s.G(R::g::IPv6XADD2) = roce::get_be32(&l6.b[8]);
    s.G(R::g::IPv6XADD3) = roce::get_be32(&l6.b[4]);
    s.G(R::g::IPv6XADD4) = roce::get_be32(&l6.b[0]);
    s.G(R::g::ERRBUFBA) = uint32_t(kErrBuf);
    s.G(R::g::ERRBUFSZ) = FLD::ERRBUFSZ_SIZE.set(FLD::ERRBUFSZ_NUM.set(0, kErrBufNum), kErrBufSize);
    s.G(R::g::IPKTERRQBA) = uint32_t(kErrQueue);
    s.G(R::g::IPKTERRQSZ) = FLD::IPKTERRQSZ_NUM.set(0, kErrQueueNum);
    s.G(R::g::INTEN) = 0x1FF;
  }

  void setup_qp(const QpSpec& q) {
    const uint32_t n = q.qpn;
    uint32_t conf = FLD::QPCONFi_RQ_IRQ_EN.bit() | FLD::QPCONFi_CQ_IRQ_EN.bit() |
                    FLD::QPCONFi_HW_HANDSHAKE_DIS.bit() | FLD::QPCONFi_CQE_WRITE_EN.bit() |
                    FLD::QPCONFi_PMTU.set(0, q.pmtu_code) | FLD::QPCONFi_RQ_BUF_SIZE.set(0, q.rq_elem_units);
    if (q.enabled) conf |= FLD::QPCONFi_EN.bit();
    if (q.ipv6) conf |= FLD::QPCONFi_IPV6.bit();
    s.Q(n, R::q::QPCONFi) = conf;
    s.Q(n, R::q::SQBAi) = uint32_t(sq_base(n));
    s.Q(n, R::q::CQBAi) = uint32_t(cq_base(n));
    s.Q(n, R::q::RQBAi) = uint32_t(rq_base(n));
    s.Q(n, R::q::CQDBADDi) = uint32_t(cq_db(n));
    s.Q(n, R::q::RQWPTRDBADDi) = uint32_t(rq_db(n));
    s.Q(n, R::q::QDEPTHi) = FLD::QDEPTHi_RQ_DEPTH.set(FLD::QDEPTHi_SQ_DEPTH.set(0, 16), q.rq_depth);
    rx.set_rq_buf_ca(n, rq_base(n));
    if (n != 1) {
      s.Q(n, R::q::QPADVCONFi) = 0xFFFF0000 | 64u << 8;
      s.Q(n, R::q::PDi) = q.pd;
      s.Q(n, R::q::SQPSNi) = q.sq_psn;
      s.Q(n, R::q::STATRESPSNi) = q.sq_psn;  // what the top does when SQPSNi is written (A-CNT-1)
      // LSTRQREQi: expected PSN - 1 and a message-ending opcode (SEND_ONLY).
      s.Q(n, R::q::LSTRQREQi) = ((q.exp_psn - 1) & 0xFFFFFF) | 0x04u << 24;
      s.Q(n, R::q::DESTQPCONFi) = q.dest_qp;
      s.Q(n, R::q::TIMEOUTCONFi) = q.timeoutconf;
      s.Q(n, R::q::MACDESADDMSBi) = uint32_t(q.remote_mac >> 32);
      s.Q(n, R::q::MACDESADDLSBi) = uint32_t(q.remote_mac);
      if (q.ipv6) {
        const roce::Ipv6Addr r6 = remote_ip6(n);
        s.Q(n, R::q::IPDESADDR1i) = roce::get_be32(&r6.b[12]);
        s.Q(n, R::q::IPDESADDR2i) = roce::get_be32(&r6.b[8]);
        s.Q(n, R::q::IPDESADDR3i) = roce::get_be32(&r6.b[4]);
        s.Q(n, R::q::IPDESADDR4i) = roce::get_be32(&r6.b[0]);
      } else {
        s.Q(n, R::q::IPDESADDR1i) = q.remote_ip4;
      }
    }
    qp::QpContext& c = s.qps[n];
    c.enabled = q.enabled;
    c.req.max_out = s.cfg.timing.max_outstanding;
  }

  void setup_mr(const MrSpec& m) {
    s.regs.m(m.idx, R::m::PDPDNUM) = m.pd;
    s.regs.m(m.idx, R::m::VIRTADDRLSB) = uint32_t(m.va);
    s.regs.m(m.idx, R::m::VIRTADDRMSB) = uint32_t(m.va >> 32);
    s.regs.m(m.idx, R::m::BUFBASEADDRLSB) = uint32_t(m.base);
    s.regs.m(m.idx, R::m::BUFBASEADDRMSB) = uint32_t(m.base >> 32);
    s.regs.m(m.idx, R::m::BUFRKEY) = m.key;
    s.regs.m(m.idx, R::m::WRRDBUFLEN) = uint32_t(m.len);
    s.regs.m(m.idx, R::m::ACCESSDESC) =
        FLD::ACCESSDESC_LEN_HI.set(FLD::ACCESSDESC_ACCESS.set(0, m.access), uint32_t(m.len >> 32));
  }

  // Runs the kernel until nothing is pending (or kSettle has passed).
  bool settle() {
    if (sc_pending_activity()) sc_start(ps(kSettlePs), SC_EXIT_ON_STARVATION);
    return !sc_pending_activity();
  }

  void setup() {
    // Every byte a pattern (byte i = 7i + i / 251): a write of any value
    // shows, zeros included.
    uint8_t* m = mem.data(0, kMemBytes);
    for (uint64_t i = 0; i < kMemBytes; ++i) m[i] = uint8_t(7 * i + i / 251);
    setup_global();
    for (const QpSpec& q : qp_specs()) setup_qp(q);
    for (const MrSpec& mr : mr_specs()) setup_mr(mr);
    uint32_t pi[kNumQp + 1] = {};
    for (const Posted& p : kPosted) {
      pg332::Wqe w;
      w.wrid = uint16_t(0xA000 + p.qpn * 0x100 + pi[p.qpn]);
      w.laddr = p.laddr;
      w.length = p.length;
      w.opcode = uint8_t(p.op);
      w.roffset = 0x1000 * (pi[p.qpn] + 1);
      w.rtag = 0x1234;
      w.immdt = 0xC0FFEE00 + pi[p.qpn];
      for (size_t i = 0; i < w.sdata.size(); ++i) w.sdata[i] = uint8_t(0x30 + i);
      uint8_t b[pg332::kWqeBytes];
      pg332::encode_wqe(w, b);
      mem.write(sq_base(p.qpn) + uint64_t(pi[p.qpn]) * pg332::kWqeBytes, b, sizeof b);
      ++pi[p.qpn];
    }
    for (uint32_t n = 1; n <= kNumQp; ++n)
      if (pi[n]) {
        s.Q(n, R::q::SQPIi) = pi[n];
        qp_mgr.ring(n, pi[n]);
      }
    FUZZ_CHECK(settle(), "rx_node setup: the node did not go idle");
    for (uint32_t n = 1; n <= kNumQp; ++n)
      FUZZ_CHECK(s.qps[n].req.osq.size() == pi[n], "rx_node setup: QP%u has %zu requests outstanding, %u posted", n,
                 s.qps[n].req.osq.size(), pi[n]);
    FUZZ_CHECK(ctx.errors.empty(), "rx_node setup: model error: %s", ctx.errors[0].what.c_str());
    ctx.events.clear();
  }
};

RxNode::RxNode() : impl_(std::make_unique<Impl>()) {
  impl_->setup();
  Impl& I = *impl_;
  snap_.regs.emplace(I.s.regs);
  snap_.qps = I.s.qps;
  snap_.stats = I.s.stats;
  snap_.next_osq_id = I.s.next_osq_id;
  snap_.mem.assign(I.mem.data(0, kMemBytes), I.mem.data(0, kMemBytes) + kMemBytes);
}

RxNode& RxNode::get() {
  static RxNode* node = [] {
    ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    sc_set_time_resolution(1, SC_PS);
    return new RxNode();  // lives for the process (SystemC elaborates once)
  }();
  return *node;
}

RunResult RxNode::run(const std::vector<InFrame>& frames) {
  Impl& I = *impl_;
  RunResult r;
  I.cur = &r;
  const uint64_t t0 = ClockDomain::now_ps();
  for (const InFrame& f : frames) {
    seam::RxOutput o = seam::roce_rx_ref(f.bytes.data(), f.bytes.size(), f.bad_fcs);
    if (o.bypass) {
      ++r.bypass;  // the host's bypass path: nothing for ERNIC
    } else {
      I.rx.push(o.desc, std::move(o.payload));
      ++r.pushed;
    }
    if (f.gap_cycles) sc_start(I.core.cycles(f.gap_cycles));
  }
  r.settled = I.settle();
  r.sim_ps = ClockDomain::now_ps() - t0;
  I.cur = nullptr;
  return r;
}

void RxNode::restore() {
  Impl& I = *impl_;
  I.s.regs = *snap_.regs;
  I.s.qps = snap_.qps;
  I.qp_mgr.touch_all();  // contexts replaced behind the QP manager: its passes look at every QP again
  I.s.stats = snap_.stats;
  I.s.next_osq_id = snap_.next_osq_id;
  I.s.ack_fire_q.clear();
  std::memcpy(I.mem.data(0, kMemBytes), snap_.mem.data(), kMemBytes);
  I.intr.update();  // rnic_intr from the restored INTSTS
  I.ctx.events.clear();
  I.ctx.errors.clear();
}

const ErnicShared& RxNode::shared() const { return impl_->s; }
const HostMemory& RxNode::mem() const { return impl_->mem; }
uint32_t RxNode::wqe_cache_total() const { return impl_->cache.total(); }
SimContext& RxNode::ctx() { return impl_->ctx; }

}  // namespace ernic::fuzz_rx
