// tb/fuzz: fuzz_rx's invariants (see rx_check.h). Whatever frames arrive,
// ERNIC's RX path drops, NAKs or accepts them (PG332 Table 2-3 validation,
// Fig. 2-9 RETH checks; IBTA 9.7 / 9.9 responder and requester rules), and
// after it has settled:
//  - nothing is pending, no model error, no WQE left in the WQE cache;
//  - host memory: no byte changed outside what ERNIC may write for the
//    RX path: MRs with remote write rights and a QP's PD, RQ elements from
//    the write pointer on, the CQEs of the WQEs that completed (each once,
//    oldest first, its WRID and opcode, no ERRFLAG on a QP that is not
//    fatal), the doorbell mirrors (holding the new pointers), the error
//    buffer entries and error-queue entries counted by their pointers,
//    READ destinations up to the bytes their responses brought; guard gaps,
//    SQs, read-only and foreign-PD MRs, send buffers never;
//  - registers: configuration (RW) and the MR table unchanged, and SQPSNi,
//    STATSSNi, STATCURSQPTRi (no new WQE: a go-back ends where it began);
//    a QP not enabled unchanged in every register; only bypass frames: no
//    register changed at all;
//  - QPs: enabled stays enabled or turns fatal, nothing else; a fatal QP
//    has nothing outstanding, no go-back, no RNR wait, no timer; a live one
//    has no go-back, RNR wait or ACK owed left (mode 00: every accepted
//    request is ACKed by the coalescing timeout); the outstanding queue is
//    what it was less its oldest entries; a READ's response offset matches
//    its response PSN; the expected response PSN lies between where it was
//    and the next PSN to send; the responder's expected PSN only moves
//    forward, and it is inside a message exactly when its last request
//    began or continued one, a WRITE's remaining range inside one MR;
//  - counters: every frame counted in, every frame not taken dropped (once),
//    validation failures = error-buffer entries, QPs turned fatal = fatal
//    events = error-queue entries (naming them); ACKs, NAKs and READ
//    responses sent = their counters; a NAK other than PSN-sequence or RNR
//    leaves its QP fatal, an RNR NAK its RQ-overflow bit; every answer goes
//    to an enabled QP's remote QPN with a PSN at or below the expected one.
#include "tb/fuzz/rx_check.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "model/regs/cqe.h"
#include "model/regs/fatal.h"
#include "model/regs/regs.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"
#include "tb/fuzz/fuzz_check.h"

namespace ernic::fuzz_rx {

namespace R = regs;
namespace FLD = regs::fld;
using roce::psn_ge;
using roce::psn_le;

namespace {

RxNode* g_node = nullptr;
void dump_events() {
  if (!g_node) return;
  for (const auto& e : g_node->ctx().events)
    std::fprintf(stderr, "  event @%llu ps %s: %s\n", (unsigned long long)e.time_ps, e.where.c_str(), e.what.c_str());
  for (const auto& e : g_node->ctx().errors)
    std::fprintf(stderr, "  MODEL ERROR @%llu ps %s: %s\n", (unsigned long long)e.time_ps, e.where.c_str(),
                 e.what.c_str());
}

#define RX_CHECK(cond, ...)         \
  do {                              \
    if (!(cond)) {                  \
      dump_events();                \
      FUZZ_CHECK(cond, __VA_ARGS__); \
    }                               \
  } while (0)

struct Range {
  uint64_t lo, hi;  // [lo, hi)
  const char* what;
};

uint32_t lo16(uint32_t v) { return v & 0xFFFF; }
uint32_t hi16(uint32_t v) { return v >> 16; }
uint32_t d16(uint32_t now, uint32_t was) { return (now - was) & 0xFFFF; }
bool live(const R::RegisterFile& g, uint32_t n) {
  return qp::hw_state(g.q(n, R::q::QPCONFi), g.q(n, R::q::STATQPi)) == qp::HwState::enabled;
}
bool fatal(const R::RegisterFile& g, uint32_t n) {
  return qp::hw_state(g.q(n, R::q::QPCONFi), g.q(n, R::q::STATQPi)) == qp::HwState::fatal;
}

void check_registers(const R::RegisterFile& S, const R::RegisterFile& P, bool only_bypass) {
  for (const R::RegInfo& ri : R::all_registers()) {
    if (ri.block == R::Block::Global) {
      RX_CHECK(!(ri.access == R::Access::RW || only_bypass) || S.g(ri.offset) == P.g(ri.offset),
               "global %s changed: 0x%08x -> 0x%08x", ri.name, S.g(ri.offset), P.g(ri.offset));
    } else if (ri.block == R::Block::Qp) {
      const uint32_t o = ri.offset;
      const bool fixed = (ri.access == R::Access::RW && o != R::q::LSTRQREQi) || o == R::q::STATSSNi ||
                         o == R::q::STATCURSQPTRi;
      for (uint32_t n = 1; n <= kNumQp; ++n) {
        const bool off = !(S.q(n, R::q::QPCONFi) & FLD::QPCONFi_EN.bit()) || n > kEnabledQps;
        RX_CHECK(!(fixed || off || only_bypass) || S.q(n, o) == P.q(n, o), "QP%u %s changed: 0x%08x -> 0x%08x", n,
                 ri.name, S.q(n, o), P.q(n, o));
      }
    } else {
      for (uint32_t i = 0; i < S.num_mr(); ++i)
        RX_CHECK(S.m(i, ri.offset) == P.m(i, ri.offset), "MR %u %s changed", i, ri.name);
    }
  }
  if (only_bypass)
    for (uint32_t k = 0; k < 3; ++k)
      for (const uint32_t bank : {S.layout().rq_int_bank, S.layout().cq_int_bank, S.layout().cnp_bank}) {
        const R::Decoded d = S.decode(S.layout().global(bank + 4 * k));
        RX_CHECK(S.read(d) == P.read(d), "interrupt bank 0x%x changed by bypass frames", bank + 4 * k);
      }
}

}  // namespace

void check_run(RxNode& node, const RunResult& r) {
  g_node = &node;
  const Snapshot& snap = node.snapshot();
  const R::RegisterFile& S = *snap.regs;
  const ErnicShared& sh = node.shared();
  const R::RegisterFile& P = sh.regs;
  const ErnicStats &s0 = snap.stats, &s1 = sh.stats;
  const uint8_t* m0 = snap.mem.data();
  const uint8_t* m1 = node.mem().data(0, kMemBytes);

  // ---- settled
  RX_CHECK(r.settled, "the node did not settle within 2 s of simulated time");
  RX_CHECK(node.ctx().errors.empty(), "model error: %s: %s", node.ctx().errors[0].where.c_str(),
           node.ctx().errors[0].what.c_str());
  RX_CHECK(sh.ack_fire_q.empty(), "coalescing ACKs queued after settling");
  RX_CHECK(node.wqe_cache_total() == 0, "WQE cache holds %u entries after settling", node.wqe_cache_total());
  const bool only_bypass = r.pushed == 0;
  check_registers(S, P, only_bypass);
  if (only_bypass) RX_CHECK(r.tx.empty(), "bypass frames made ERNIC send %zu frames", r.tx.size());

  // ---- QPs
  std::set<uint32_t> newly_fatal;
  std::vector<Range> ok;  // where ERNIC may have written
  for (uint32_t n = 1; n <= kNumQp; ++n) {
    const qp::QpContext &a = snap.qps[n], &b = sh.qps[n];
    const qp::HwState h0 = qp::hw_state(S.q(n, R::q::QPCONFi), S.q(n, R::q::STATQPi));
    const qp::HwState h1 = qp::hw_state(P.q(n, R::q::QPCONFi), P.q(n, R::q::STATQPi));
    RX_CHECK(h1 == h0 || (h0 == qp::HwState::enabled && h1 == qp::HwState::fatal), "QP%u: %s -> %s", n,
             qp::name(h0), qp::name(h1));
    RX_CHECK(b.enabled == bool(P.q(n, R::q::QPCONFi) & FLD::QPCONFi_EN.bit()), "QP%u: context enabled %d, QPCONFi 0x%x",
             n, b.enabled, P.q(n, R::q::QPCONFi));
    if (h0 != h1) newly_fatal.insert(n);
    RX_CHECK(b.prefetch.cache.empty(), "QP%u: %zu WQEs cached after settling", n, b.prefetch.cache.size());
    RX_CHECK(b.req.max_out == 16 || b.req.max_out == 8, "QP%u: outstanding limit %u", n, b.req.max_out);
    // Outstanding: the snapshot's less its oldest entries.
    const size_t done = a.req.osq.size() - std::min(a.req.osq.size(), b.req.osq.size());
    RX_CHECK(b.req.osq.size() <= a.req.osq.size(), "QP%u: %zu outstanding, %zu before", n, b.req.osq.size(),
             a.req.osq.size());
    for (size_t i = 0; i < b.req.osq.size(); ++i)
      RX_CHECK(b.req.osq[i].id == a.req.osq[done + i].id, "QP%u: outstanding entry %zu is not the snapshot's", n, i);
    const uint32_t pmtu = R::pmtu_bytes(FLD::QPCONFi_PMTU.get(P.q(n, R::q::QPCONFi)));
    for (const qp::Outstanding& o : b.req.osq) {
      if (!o.is_read) continue;
      const int32_t k = roce::psn_diff(o.resp_psn, o.first_psn);
      RX_CHECK(k >= 0 && psn_le(o.resp_psn, o.last_psn), "QP%u: READ 0x%x expects response PSN 0x%06x outside 0x%06x..0x%06x",
               n, o.wrid, o.resp_psn, o.first_psn, o.last_psn);
      RX_CHECK(o.resp_off == std::min<uint64_t>(o.length, uint64_t(k) * pmtu), "QP%u: READ 0x%x: %u bytes in at PSN +%d", n,
               o.wrid, o.resp_off, k);
    }
    for (size_t i = 0; i < a.req.osq.size(); ++i) {  // READ destinations, up to what arrived
      const qp::Outstanding& o = a.req.osq[i];
      const uint32_t got = i < done ? o.length : b.req.osq[i - done].resp_off;
      if (o.is_read) ok.push_back({o.laddr, o.laddr + got, "READ destination"});
    }
    if (h1 == qp::HwState::fatal) {
      RX_CHECK(b.req.osq.empty() && !b.rs.retransmit_pending() && !b.rs.in_rnr_wait() && b.retry.ack_deadline_ps == 0,
               "QP%u fatal with %zu outstanding, go-back %d, RNR wait %d, ACK timer %llu", n, b.req.osq.size(),
               b.rs.retransmit_pending(), b.rs.in_rnr_wait(), (unsigned long long)b.retry.ack_deadline_ps);
    } else if (h1 == qp::HwState::enabled && n != 1) {
      RX_CHECK(!b.rs.retransmit_pending() && !b.rs.in_rnr_wait() && !b.rs.sending(),
               "QP%u live, settled, yet go-back %d, RNR wait %d, sending %d", n, b.rs.retransmit_pending(),
               b.rs.in_rnr_wait(), b.rs.sending());
      RX_CHECK(b.resp.rs.unacked() == 0 && b.resp.ack_due_ps == 0 && !b.resp.ack_fire,
               "QP%u: %u accepted packets never ACKed", n, b.resp.rs.unacked());
    }
    if (n == 1 || !(S.q(n, R::q::QPCONFi) & FLD::QPCONFi_EN.bit()) || n > kEnabledQps) continue;
    // Requester PSNs: the expected response PSN between its old value and the next PSN to send.
    const uint32_t rp0 = S.q(n, R::q::STATRESPSNi) & roce::kPsnMask, rp1 = P.q(n, R::q::STATRESPSNi) & roce::kPsnMask;
    const uint32_t next = P.q(n, R::q::SQPSNi) & roce::kPsnMask;
    RX_CHECK(psn_ge(rp1, rp0) && psn_le(rp1, next), "QP%u: STATRESPSNi 0x%06x -> 0x%06x, next PSN to send 0x%06x", n, rp0,
             rp1, next);
    // Completions: one CQE each, oldest first, at CQBAi + CQHEADi * 4.
    const uint32_t depth = FLD::QDEPTHi_SQ_DEPTH.get(S.q(n, R::q::QDEPTHi));
    const uint32_t h_0 = S.q(n, R::q::CQHEADi), h_1 = P.q(n, R::q::CQHEADi);
    RX_CHECK((h_1 + depth - h_0) % depth == done % depth, "QP%u: CQHEADi %u -> %u for %zu completions", n, h_0, h_1, done);
    const uint64_t cq = S.q64(n, R::q::CQBAi, R::q::CQBAMSBi);
    for (size_t i = 0; i < done; ++i) {
      const uint64_t at = cq + ((h_0 + i) % depth) * pg332::kCqeBytes;
      const pg332::Cqe c = pg332::decode_cqe(node.mem().read32(at));
      const qp::Outstanding& o = a.req.osq[i];
      RX_CHECK(c.wrid == o.wrid && c.opcode == o.wqe_opcode && (h1 == qp::HwState::fatal || !c.error),
               "QP%u: CQE %zu = wrid 0x%x op %u err %d, want wrid 0x%x op %u", n, i, c.wrid, c.opcode, c.error, o.wrid,
               o.wqe_opcode);
      ok.push_back({at, at + pg332::kCqeBytes, "CQE"});
    }
    if (done) {
      const uint64_t db = S.q64(n, R::q::CQDBADDi, R::q::CQDBADDMSBi);
      RX_CHECK(node.mem().read32(db) == h_1, "QP%u: CQ doorbell mirror %u, CQHEADi %u", n, node.mem().read32(db), h_1);
      ok.push_back({db, db + 4, "CQ doorbell"});
    }
    // Responder: the expected PSN moves forward; in a message iff the last request began or continued one.
    const uint32_t e0 = roce::psn_add(S.q(n, R::q::LSTRQREQi), 1), e1 = roce::psn_add(P.q(n, R::q::LSTRQREQi), 1);
    RX_CHECK(psn_ge(e1, e0), "QP%u: expected PSN 0x%06x -> 0x%06x", n, e0, e1);
    const roce::OpcodeInfo* last = roce::opcode_info(uint8_t(FLD::LSTRQREQi_OPCODE.get(P.q(n, R::q::LSTRQREQi))));
    const bool cont = last && (last->pos == roce::OpPos::First || last->pos == roce::OpPos::Middle);
    RX_CHECK(h1 == qp::HwState::fatal || b.resp.rs.in_message() == cont, "QP%u: in message %d, last request %s", n,
             b.resp.rs.in_message(), last ? last->name : "?");
    const uint32_t rq_depth = FLD::QDEPTHi_RQ_DEPTH.get(P.q(n, R::q::QDEPTHi));
    const uint64_t esz = uint64_t(FLD::QPCONFi_RQ_BUF_SIZE.get(P.q(n, R::q::QPCONFi))) * R::kRqBufSizeUnit;
    RX_CHECK(b.resp.send_off <= esz && P.q(n, R::q::STATRQPIDBi) < rq_depth, "QP%u: RQ offset %llu, write pointer %u",
             n, (unsigned long long)b.resp.send_off, P.q(n, R::q::STATRQPIDBi));
    if (cont && last->kind == roce::OpKind::Write && b.resp.wr_left) {
      bool inside = false;
      for (const MrSpec& mr : mr_specs())
        inside = inside || (b.resp.wr_phys >= mr.base && b.resp.wr_phys + b.resp.wr_left <= mr.base + mr.len);
      RX_CHECK(inside, "QP%u: WRITE continues at 0x%llx for %llu bytes, outside every MR", n,
               (unsigned long long)b.resp.wr_phys, (unsigned long long)b.resp.wr_left);
    }
  }
  // RQ elements from the snapshot's write pointer on (a SEND fills the
  // current one; QP1 too), the RQ doorbell mirrors.
  for (uint32_t n = 1; n <= kEnabledQps; ++n) {
    if (!(S.q(n, R::q::QPCONFi) & FLD::QPCONFi_EN.bit())) continue;
    const uint32_t d = FLD::QDEPTHi_RQ_DEPTH.get(S.q(n, R::q::QDEPTHi));
    const uint64_t esz = uint64_t(FLD::QPCONFi_RQ_BUF_SIZE.get(S.q(n, R::q::QPCONFi))) * R::kRqBufSizeUnit;
    const uint32_t p0 = S.q(n, R::q::STATRQPIDBi), p1 = P.q(n, R::q::STATRQPIDBi);
    for (uint32_t k = 0; k <= (p1 + d - p0) % d; ++k) {
      const uint64_t e = rq_base(n) + ((p0 + k) % d) * esz;
      ok.push_back({e, e + esz, "RQ element"});
    }
    const uint64_t db = S.q64(n, R::q::RQWPTRDBADDi, R::q::RQWPTRDBADDMSBi);
    if (p1 != p0) RX_CHECK(node.mem().read32(db) == p1, "QP%u: RQ doorbell mirror %u, STATRQPIDBi %u", n, node.mem().read32(db), p1);
    ok.push_back({db, db + 4, "RQ doorbell"});
  }
  // MRs a remote may write: write rights and the PD of an enabled RC QP.
  for (const MrSpec& mr : mr_specs()) {
    bool pd_ok = false;
    for (uint32_t n = 2; n <= kEnabledQps; ++n) pd_ok = pd_ok || (live(S, n) && S.q(n, R::q::PDi) == mr.pd);
    if (pd_ok && (mr.access == 1 || mr.access == 2)) ok.push_back({mr.base, mr.base + mr.len, "writable MR"});
  }
  // Error buffer and error-status queue: the entries their pointers counted.
  const uint32_t eb0 = S.g(R::g::ERRBUFWPTR), eb1 = P.g(R::g::ERRBUFWPTR);
  RX_CHECK(eb1 - eb0 == s1.validation_errors - s0.validation_errors, "error buffer: %u entries, %llu validation failures",
           eb1 - eb0, (unsigned long long)(s1.validation_errors - s0.validation_errors));
  for (uint32_t k = 0; k < std::min(eb1 - eb0, kErrBufNum); ++k) {
    const uint64_t e = kErrBuf + uint64_t((eb0 + k) % kErrBufNum) * kErrBufSize;
    ok.push_back({e, e + kErrBufSize, "error buffer entry"});
  }
  const uint32_t q0 = S.g(R::g::IPKTERRQWPTR), q1 = P.g(R::g::IPKTERRQWPTR);
  RX_CHECK(s1.fatal_events - s0.fatal_events == newly_fatal.size() && (q1 + kErrQueueNum - q0) % kErrQueueNum ==
                                                                           newly_fatal.size() % kErrQueueNum,
           "%zu QPs turned fatal, %llu fatal events, error queue %u -> %u", newly_fatal.size(),
           (unsigned long long)(s1.fatal_events - s0.fatal_events), q0, q1);
  for (uint32_t k = 0; k < newly_fatal.size() && k < kErrQueueNum; ++k) {
    const uint64_t e = kErrQueue + uint64_t((q0 + k) % kErrQueueNum) * pg332::kErrQueueEntryBytes;
    const uint32_t qpn = pg332::err_entry_qpn(node.mem().read32(e));
    RX_CHECK(newly_fatal.count(qpn), "error queue entry %u names QP%u, not one that turned fatal", k, qpn);
    ok.push_back({e, e + pg332::kErrQueueEntryBytes, "error queue entry"});
  }
  // Host memory, byte for byte (blocks that differ, then their bytes).
  for (uint64_t a = 0; a < kMemBytes; ++a) {
    if (a % 1024 == 0 && std::memcmp(m0 + a, m1 + a, 1024) == 0) {
      a += 1023;
      continue;
    }
    if (m0[a] == m1[a]) continue;
    bool allowed = false;
    for (const Range& g : ok) allowed = allowed || (a >= g.lo && a < g.hi);
    if (!allowed) {
      const char* near = "unregistered memory";
      for (const MrSpec& mr : mr_specs())
        if (a >= mr.base && a < mr.base + 0x2000) near = a < mr.base + mr.len ? "an MR without remote write for a QP's PD" : "the guard gap after an MR";
      if (a >= 0x10000 && a < 0x12000) near = "an SQ";
      if (a >= 0x16000 && a < 0x18000) near = "a send buffer";
      RX_CHECK(allowed, "host memory 0x%llx changed (0x%02x -> 0x%02x): %s", (unsigned long long)a, m0[a], m1[a], near);
    }
    if (only_bypass) RX_CHECK(false, "bypass frames changed host memory at 0x%llx", (unsigned long long)a);
  }

  // ---- counters and what was sent
  const uint32_t c0 = S.g(R::g::INALLDRPPKTCNT), c1 = P.g(R::g::INALLDRPPKTCNT);
  const uint64_t dropped = s1.rx_dropped - s0.rx_dropped;
  RX_CHECK(d16(lo16(c1), lo16(c0)) == r.pushed && d16(hi16(c1), hi16(c0)) == dropped % 65536,
           "INALLDRPPKTCNT 0x%08x -> 0x%08x for %zu frames, %llu dropped", c0, c1, r.pushed, (unsigned long long)dropped);
  RX_CHECK(r.taken <= r.pushed && dropped <= r.pushed && r.taken + dropped >= r.pushed,
           "%zu frames in, %zu taken, %llu dropped", r.pushed, r.taken, (unsigned long long)dropped);
  size_t acks = 0, naks = 0, rdrsp = 0;
  for (const seam::TxDesc& t : r.tx) {
    uint32_t n = 0;
    for (uint32_t k = 2; k <= kEnabledQps; ++k)
      if (live(S, k) && (S.q(k, R::q::DESTQPCONFi) & roce::kPsnMask) == t.dest_qp) n = k;
    RX_CHECK(n != 0, "a frame (opcode 0x%02x) sent to QPN 0x%x, no enabled QP's remote", t.opcode, t.dest_qp);
    const roce::OpcodeInfo* oi = roce::opcode_info(t.opcode);
    RX_CHECK(oi != nullptr, "sent an unknown opcode 0x%02x", t.opcode);
    const uint32_t e1 = roce::psn_add(P.q(n, R::q::LSTRQREQi), 1);
    if (oi->kind == roce::OpKind::Ack) {
      const uint8_t syn = t.ext[0];
      const uint8_t type = roce::aeth::type(syn);
      (type == roce::aeth::kTypeAck ? acks : naks)++;
      RX_CHECK(psn_le(t.psn, e1), "QP%u: answer syndrome 0x%02x for PSN 0x%06x beyond the expected 0x%06x", n, syn, t.psn, e1);
      if (type == roce::aeth::kTypeNak && syn != roce::aeth::kNakPsnSeq)
        RX_CHECK(fatal(P, n), "QP%u: NAK 0x%02x sent, the QP is not fatal", n, syn);
      if (type == roce::aeth::kTypeRnr)
        RX_CHECK(P.q(n, R::q::STATQPi) & FLD::STATQPi_RQ_OVERFLOW.bit(), "QP%u: RNR NAK without STATQPi RQ overflow", n);
    } else if (oi->kind == roce::OpKind::ReadResponse) {
      ++rdrsp;
      RX_CHECK(psn_le(t.psn, e1), "QP%u: READ response PSN 0x%06x beyond the expected 0x%06x", n, t.psn, e1);
      RX_CHECK(t.payload_len <= R::pmtu_bytes(FLD::QPCONFi_PMTU.get(P.q(n, R::q::QPCONFi))),
               "QP%u: READ response of %u bytes", n, t.payload_len);
    } else {  // a request resent by a go-back: PSNs the snapshot had outstanding
      const auto& osq = snap.qps[n].req.osq;
      RX_CHECK(!osq.empty() && psn_ge(t.psn, osq.front().first_psn) && psn_le(t.psn, osq.back().last_psn),
               "QP%u: request 0x%02x PSN 0x%06x sent, not outstanding", n, t.opcode, t.psn);
    }
  }
  RX_CHECK(lo16(P.g(R::g::OUTAMPKTCNT)) - lo16(S.g(R::g::OUTAMPKTCNT)) == acks && s1.acks_sent - s0.acks_sent == acks,
           "%zu ACKs sent, OUTAMPKTCNT %u -> %u", acks, S.g(R::g::OUTAMPKTCNT), P.g(R::g::OUTAMPKTCNT));
  RX_CHECK(FLD::OUTNAKPKTCNT_COUNT.get(P.g(R::g::OUTNAKPKTCNT)) - FLD::OUTNAKPKTCNT_COUNT.get(S.g(R::g::OUTNAKPKTCNT)) ==
                   naks &&
               s1.naks_sent - s0.naks_sent == naks,
           "%zu NAKs sent, OUTNAKPKTCNT %u -> %u", naks, S.g(R::g::OUTNAKPKTCNT), P.g(R::g::OUTNAKPKTCNT));
  RX_CHECK(P.g(R::g::OUTRDRSPPKTCNT) - S.g(R::g::OUTRDRSPPKTCNT) == rdrsp &&
               s1.read_responses_sent - s0.read_responses_sent == rdrsp,
           "%zu READ responses sent, OUTRDRSPPKTCNT %u -> %u", rdrsp, S.g(R::g::OUTRDRSPPKTCNT), P.g(R::g::OUTRDRSPPKTCNT));
  g_node = nullptr;
}

}  // namespace ernic::fuzz_rx
