// model/host: the driver's data path: posting WQEs and ringing the SQ,
// polling the CQ, and the receive side (RQ doorbells and ieth_immdt entries
// turned into messages).
#include "model/host/driver.h"

#include <fmt/format.h>

#include "model/regs/cqe.h"
#include "model/regs/ieth.h"
#include "model/regs/wqe.h"
#include "model/roce/packet.h"

namespace ernic::host {

using pg332::IethType;

namespace R = regs;

// ------------------------------------------------------------ data path

void Driver::post(Connection& c, const std::vector<Wqe>& wqes, bool doorbell_each, bool ring) {
  if (c.state != VerbsState::Rts && !c.qpn)
    fail("post on a connection that has no QP yet (its end still listens for a ConnectRequest)");
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
        bus_.sleep_until(HostBus::kForever, HostBus::kMemory);
        poll(c, 0, 0);
      }
    }
    pg332::Wqe pw;
    pw.wrid = w.wr_id;
    pw.laddr = w.laddr;
    pw.length = w.length;
    pw.opcode = w.opcode;
    pw.roffset = w.remote_va;
    pw.rtag = w.rkey;
    pw.immdt = w.immdt;
    // SENDs of up to 16 bytes go inline in SDATA (PG332 Table 2-1; XIB does
    // the same); LENGTH keeps the real size (A-ERNIC-21).
    if (pg332::is_inline(w.opcode, w.length)) bus_.mem_read(w.laddr, pw.sdata.data(), w.length);
    uint8_t b[pg332::kWqeBytes];
    pg332::encode_wqe(pw, b);
    bus_.mem_write(c.sq_base + uint64_t(c.sq_pi) * pg332::kWqeBytes, b, sizeof b);
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

// The CQE at c.cq_ci: read from the CQ, decoded, queued for the caller.
void Driver::take_cqe(Connection& c, uint32_t depth) {
  Cqe q;
  q.raw = mem_read32(c.cq_base + uint64_t(c.cq_ci) * pg332::kCqeBytes);
  const pg332::Cqe d = pg332::decode_cqe(q.raw);
  q.wr_id = d.wrid;
  q.opcode = d.opcode;
  q.error = d.error;
  q.time_ps = now();
  c.cqes.push_back(q);
  c.cq_ci = (c.cq_ci + 1) % depth;
  ++c.completed;
  if (q.error) set_state(c, VerbsState::Err);
}

std::vector<Cqe> Driver::poll(Connection& c, uint32_t count, uint64_t timeout_ps) {
  const uint64_t deadline = now() + timeout_ps;
  const uint32_t depth = c.params.sq_depth;
  auto drain = [&] {
    // CQHEADi: its mirror at CQDBADDi, or the sideband count in HW-handshake mode.
    const uint32_t head = (c.sideband ? c.sb_cq_head : mem_read32(c.cq_db)) % depth;
    while (c.cq_ci != head) take_cqe(c, depth);
  };
  drain();
  while (c.cqes.size() < count) {
    if (now() >= deadline) break;
    bus_.sleep_until(deadline, HostBus::kMemory);
    drain();
  }
  std::vector<Cqe> out;
  while (!c.cqes.empty() && out.size() < count) {
    out.push_back(c.cqes.front());
    c.cqes.pop_front();
  }
  return out;
}

// CQE handling in batches and/or CQHEADi read by MMIO (PollMode). The CQEs
// are taken and decoded as above; only when the head is looked at, and how
// many CQEs are taken per look, differ.
std::vector<Cqe> Driver::poll(Connection& c, uint32_t count, uint64_t timeout_ps, const PollMode& m) {
  if (m.plain()) return poll(c, count, timeout_ps);
  const uint64_t deadline = now() + timeout_ps;
  const uint32_t depth = c.params.sq_depth;
  auto head = [&]() -> uint32_t {
    if (c.sideband) return c.sb_cq_head % depth;
    if (m.mmio) return (rd(qreg(c.qpn, R::q::CQHEADi)) & 0xFFFF) % depth;
    return mem_read32(c.cq_db) % depth;
  };
  auto take = [&](uint32_t n) {
    for (uint32_t k = 0; k < n; ++k) take_cqe(c, depth);
  };
  while (c.cqes.size() < count) {
    const uint32_t need = count - uint32_t(c.cqes.size());
    const uint32_t want = m.batch ? std::min(m.batch, need) : 1;
    const uint32_t avail = (head() + depth - c.cq_ci) % depth;
    if (avail >= want) {
      take(m.batch ? want : avail);
      continue;
    }
    if (now() >= deadline) break;
    // MMIO: the next read at once (each read took its round trip);
    // mirror: until the NIC writes host memory.
    if (!m.mmio || c.sideband) bus_.sleep_until(deadline, HostBus::kMemory);
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
    c->rx_events.push_back({false, pi, now()});
    bus_.signal(HostBus::kRx);
  }
}

void Driver::on_cq_doorbell(uint32_t qpn, uint32_t cq_head) {
  if (Connection* c = by_qpn(qpn))
    if (c->sideband) c->sb_cq_head = cq_head;
}

void Driver::ring_sq(Connection& c) {
  if (c.sideband) bus_.sq_pidb(c.qpn, c.sq_pi);
  else if (cfg_.shadow_sq_db) mem_write32(shadow_entry(c.qpn), c.sq_pi);  // X-SHADOW-DB-1
  else wr(qreg(c.qpn, R::q::SQPIi), c.sq_pi);
}

void Driver::on_ieth(uint64_t entry) {
  if (Connection* c = by_qpn(pg332::decode_ieth(entry).qpn)) {
    c->rx_events.push_back({true, entry, now()});
    bus_.signal(HostBus::kRx);
  }
}

// Without the NIC's RX streams (a program's bus), the RQ write pointer the
// NIC mirrors at RQWPTRDBADDi tells of arrivals: one doorbell event per
// step it moved since last read. Immediate data is not visible there.
void Driver::poll_rq_mirror(Connection& c) {
  const uint32_t depth = c.params.rq_depth ? c.params.rq_depth : 1;
  const uint32_t wptr = mem_read32(c.rq_db) & 0xFFFF;
  while (c.rq_mirror % depth != wptr % depth) {
    c.rq_mirror = (c.rq_mirror + 1) % depth;
    c.rx_events.push_back({false, c.rq_mirror, now()});
  }
}

// Turns the arrival-ordered events into messages: an RQ doorbell announces
// the element before the new pointer; an ieth entry of a SEND kind that
// follows it for that pointer (8 bits of it) names its kind and datum; a
// WRITE_IMM entry is a message of its own.
std::vector<RecvMsg> Driver::recv(Connection& c, uint32_t count, uint64_t timeout_ps, bool consume) {
  const uint64_t deadline = now() + timeout_ps;
  const uint32_t depth = c.params.rq_depth ? c.params.rq_depth : 1;
  const bool streams = bus_.has_rx_streams();
  auto ready = [&] {
    if (!streams) poll_rq_mirror(c);
    uint32_t n = 0;
    for (size_t i = 0; i < c.rx_events.size(); ++i) {
      const auto& e = c.rx_events[i];
      if (!e.ieth || pg332::decode_ieth(e.value).type == IethType::write_imm) ++n;  // a doorbell or a WRITE_IMM entry
    }
    return n;
  };
  while (ready() < count) {
    if (now() >= deadline) break;
    bus_.sleep_until(deadline, streams ? HostBus::kRx : HostBus::kMemory);
  }
  std::vector<RecvMsg> out;
  while (!c.rx_events.empty() && out.size() < count) {
    const auto e = c.rx_events.front();
    c.rx_events.pop_front();
    RecvMsg m;
    m.time_ps = e.time_ps;
    if (e.ieth) {
      const pg332::IethEntry ie = pg332::decode_ieth(e.value);
      if (ie.type != IethType::write_imm) continue;  // a SEND kind's entry without its doorbell: not expected
      m.kind = RecvMsg::kWriteImm;
      m.data = ie.data;
      out.push_back(m);
      continue;
    }
    const uint32_t pi = uint32_t(e.value) % depth;
    m.rq_index = (pi + depth - 1) % depth;
    m.elem_addr = c.rq_base + uint64_t(m.rq_index) * c.params.rq_elem_bytes;
    if (!c.rx_events.empty() && c.rx_events.front().ieth) {
      const pg332::IethEntry ie = pg332::decode_ieth(c.rx_events.front().value);
      if ((ie.type == IethType::send_inv || ie.type == IethType::send_imm) && ie.rq_pi == uint8_t(pi)) {
        m.kind = ie.type == IethType::send_inv ? RecvMsg::kSendInv : RecvMsg::kSendImm;
        m.data = ie.data;
        c.rx_events.pop_front();
      }
    }
    c.rq_ci = pi;
    out.push_back(m);
  }
  if (consume && !out.empty()) {
    if (c.sideband) bus_.rq_cidb(c.qpn, c.rq_ci);
    else wr(qreg(c.qpn, R::q::RQCIi), c.rq_ci);
  }
  return out;
}

}  // namespace ernic::host
