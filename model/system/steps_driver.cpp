// model/system: the driver-level steps: init, register_mr, deregister_mr,
// post, wait_completions, recv (each through a node's driver, the
// scoreboard kept up to date).
#include "model/system/system.h"

#include <fmt/format.h>
#include <utility>

namespace ernic {

using namespace sc_core;

namespace {
uint8_t wqe_code(WqeOpcode o) { return uint8_t(o); }  // the WQE's opcode byte (PG332 Table 2-1)
// The opcode a CQE names, if it is one of PG332's (the scoreboard's opcode is the same enum).
std::optional<monitor::SbOpcode> sb_opcode_of_code(uint8_t c) {
  for (WqeOpcode o : pg332::kAllWqeOpcodes)
    if (wqe_code(o) == c) return o;
  return std::nullopt;
}
std::string at_now() { return fmt::format("at {:.3f} us", double(sc_time_stamp().value()) / 1e6); }
uint32_t access_code(Access a) {
  switch (a) {
    case Access::r: return regs::u(regs::val::ACCESSDESC_ACCESS::READ);
    case Access::w: return regs::u(regs::val::ACCESSDESC_ACCESS::WRITE);
    case Access::rw: return regs::u(regs::val::ACCESSDESC_ACCESS::READ_WRITE);
  }
  return regs::u(regs::val::ACCESSDESC_ACCESS::READ_WRITE);
}
}  // namespace

// init: each named node's driver brought up (and its QP-setup driver), one
// after the other. Split (model/system/split.h): a node starts when the
// last node before it with qp_setup_fsm is done, which its process says
// when that is another one (the QP-setup driver's init reads back a
// register: it takes time; the driver's own init takes none). With a
// switch that node's process may tell several: each of them takes its
// word (split_exchange: only that node's).
void System::handle(const InitStep& s, const SourceLoc&, Group*) {
  for (size_t k = 0; k < s.nodes.size(); ++k) {
    const std::string& n = s.nodes[k];
    if (split()) {
      size_t j = k;
      while (j > 0 && !node(s.nodes[j - 1])->cfg.qp_setup_fsm) --j;
      if (j > 0 && local(n) != local(s.nodes[j - 1])) split_exchange({0}, n, s.nodes[j - 1]);
    }
    if (!local(n)) continue;       // a split run: the other process brings it up
    if (node(n)->peer) continue;  // kind: peer: nothing to bring up
    node(n)->driver->init();
    if (node(n)->qp_setup_driver) node(n)->qp_setup_driver->init();
  }
}

// register_mr: an MR through the driver; the scoreboard learns it and its
// guards.
void System::handle(const RegisterMrStep& s, const SourceLoc& loc, Group*) {
  if (node(s.node)->peer) return register_peer_mr(s, loc);  // kind: peer (steps_peer.cpp)
  const host::Mr& m = node(s.node)->driver->register_mr(s.name, s.length, access_code(s.access), s.pd);
  scoreboard.register_mr(s.node, s.name, m.pa, m.length, m.va, m.rkey, m.guard_before, m.guard_after,
                         host::kMrGuardBytes, loc.str());
  split_share_mr(m);
}

// deregister_mr
void System::handle(const DeregisterMrStep& s, const SourceLoc&, Group*) {
  node(s.node)->driver->deregister_mr(s.name);
  scoreboard.deregister_mr(s.node, s.name);
}

// post: WQEs built from the step's list (local ranges checked against
// their MRs), posted `repeat` times.
void System::handle(const PostStep& s, const SourceLoc& loc, Group*) {
  auto it = conns_.find(s.conn);
  if (it == conns_.end()) return fail(loc, "connection '" + s.conn + "' was not established");
  Node* n = node(s.node);
  if (n->peer) return post_peer(s, loc);  // kind: peer (steps_peer.cpp)
  host::Connection& c = side(it->second, s.node);
  std::vector<host::Wqe> wqes;
  std::vector<monitor::Scoreboard::Post> sb_posts;
  for (const WqeSpec& w : s.wqes) {
    const host::Mr* mr = n->driver->find_mr(w.local_mr);
    if (!mr) return fail(w.loc, "no MR '" + w.local_mr + "' on " + s.node);
    // The driver's local protection check (ERNIC WQEs carry physical
    // addresses, so the NIC has none): the local range must lie in the MR.
    if (w.local_offset > mr->length || w.length > mr->length - w.local_offset)
      return fail(w.loc, fmt::format("local range [{}, +{}) lies outside MR '{}' ({} bytes)", w.local_offset,
                                     w.length, w.local_mr, mr->length));
    host::Wqe q;
    q.wr_id = uint16_t(w.wr_id);
    q.opcode = wqe_code(w.opcode);
    q.laddr = mr->pa + w.local_offset;
    q.length = w.length;
    q.remote_va = c.remote_mr.va + w.remote_offset;
    q.rkey = w.opcode == WqeOpcode::send_inv ? w.immdt : w.rkey ? *w.rkey : c.remote_mr.rkey;
    q.immdt = w.immdt;
    wqes.push_back(q);
    const int sb_qp = s.node == it->second.client ? it->second.sb_c : it->second.sb_s;
    if (sb_qp >= 0)  // not tracked: a connection with a program end (its memory is the program's)
      sb_posts.push_back({sb_qp, w.opcode, q.wr_id, q.laddr, q.length, q.remote_va, q.rkey, "post at " + w.loc.str()});
  }
  // `repeat` posts the list again and again without building it N times;
  // with one doorbell, it is rung after the last (and whenever the SQ is
  // full); with none, only when the SQ is full (else nothing would complete).
  const bool each = s.doorbell == Doorbell::each;
  const bool ring_last = s.doorbell == Doorbell::once;
  // A round after the first (the driver may have waited for room in the
  // SQ) stops as a step would not start (lane_stopped): not at a failure's
  // own instant, which one process and a split run reach in different
  // orders (a failure in another branch at this instant).
  for (uint32_t r = 0; r < s.repeat && (r == 0 || !lane_stopped()); ++r) {
    for (const auto& p : sb_posts) scoreboard.post(p);
    n->driver->post(c, wqes, each, /*ring=*/each || (ring_last && r + 1 == s.repeat));
  }
}

// wait_completions: the driver polls the QP's CQ; every CQE to the
// scoreboard, then the expectations.
void System::handle(const WaitCompletionsStep& s, const SourceLoc& loc, Group*) {
  auto it = conns_.find(s.conn);
  if (it == conns_.end()) return fail(loc, "connection '" + s.conn + "' was not established");
  Node* n = node(s.node);
  if (n->peer) return wait_peer(s, loc);  // kind: peer (steps_peer.cpp)
  host::Connection& c = side(it->second, s.node);
  ++bounded_;  // the step times out by itself; the watchdog stays out of it
  host::PollMode mode;
  mode.batch = s.batch;
  mode.mmio = s.cq_head_mmio;
  auto got = n->driver->poll(c, s.count, s.timeout_us * 1000000ull, mode);
  --bounded_;
  const int sb_qp = s.node == it->second.client ? it->second.sb_c : it->second.sb_s;
  if (sb_qp >= 0)
    for (const host::Cqe& q : got)
      for (const std::string& e :
           scoreboard.complete(sb_qp, q.wr_id, sb_opcode_of_code(q.opcode), q.error, at_now()))
        fail(loc, e);
  if (got.size() < s.count) {
    snapshot_qps();
    return fail(loc, fmt::format("expected {} completion(s) on {} QP{} within {} us, got {}{}", s.count, s.node,
                                 c.qpn, s.timeout_us, got.size(),
                                 c.rung != c.posted
                                     ? fmt::format(" ({} WQE(s) written with `doorbell: none` and no doorbell "
                                                   "covering them yet: the NIC has not seen them)",
                                                   c.posted - c.rung)
                                     : std::string()));
  }
  // Completions no expect entry speaks of the error of: error-free unless
  // `errors: allowed` (issue 20: they used to pass unchecked).
  if (!s.errors_allowed)
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i].error && (i >= s.expect.size() || !s.expect[i].error))
        fail(loc, fmt::format("completion {} (wr_id {}) carries an error (CQE ERRFLAG, 0x{:08x}) and nothing expects "
                              "one: say `error: true` in its expect entry, or `errors: allowed`",
                              i, got[i].wr_id, got[i].raw));
  for (size_t i = 0; i < s.expect.size() && i < got.size(); ++i) {
    const CompletionExpect& e = s.expect[i];
    const host::Cqe& q = got[i];
    if (e.wr_id && *e.wr_id != q.wr_id)
      fail(loc, fmt::format("completion {}: wr_id {} expected, CQE has {} (CQE 0x{:08x})", i, *e.wr_id, q.wr_id, q.raw));
    if (e.opcode && wqe_code(*e.opcode) != q.opcode)
      fail(loc, fmt::format("completion {}: opcode {} (0x{:02x}) expected, CQE has 0x{:02x} (CQE 0x{:08x})", i,
                            to_string(*e.opcode), wqe_code(*e.opcode), q.opcode, q.raw));
    if (e.error && *e.error != q.error)
      fail(loc, fmt::format("completion {}: error={} expected, CQE ERRFLAG is {} (CQE 0x{:08x})", i, *e.error,
                            q.error ? 1 : 0, q.raw));
  }
}

// recv: messages the responder delivered on the QP, against the
// expectations.
void System::handle(const RecvStep& s, const SourceLoc& loc, Group*) {
  auto it = conns_.find(s.conn);
  if (it == conns_.end()) return fail(loc, "connection '" + s.conn + "' was not established");
  Node* n = node(s.node);
  host::Connection& c = side(it->second, s.node);
  ++bounded_;
  auto got = n->driver->recv(c, s.count, s.timeout_us * 1000000ull, s.consume);
  --bounded_;
  if (got.size() < s.count) {
    snapshot_qps();
    return fail(loc, fmt::format("expected {} received message(s) on {} QP{} within {} us, got {}", s.count,
                                 s.node, c.qpn, s.timeout_us, got.size()));
  }
  static const char* kKinds[] = {"send", "send_imm", "send_inv", "write_imm"};
  for (size_t i = 0; i < s.expect.size(); ++i) {
    const RecvExpect& e = s.expect[i];
    const host::RecvMsg& m = got[i];
    if (e.opcode) {
      const char* want = to_string(*e.opcode);
      if (std::string(want) != kKinds[m.kind])
        fail(loc, fmt::format("message {}: {} expected, {} received", i, want, kKinds[m.kind]));
    }
    if (e.immdt && (m.kind == host::RecvMsg::kSend || *e.immdt != m.data))
      fail(loc, fmt::format("message {}: {} 0x{:08x} expected, {}", i,
                            m.kind == host::RecvMsg::kSendInv ? "invalidate R_Key" : "ImmDt", *e.immdt,
                            m.kind == host::RecvMsg::kSend ? std::string("a plain SEND has none")
                                                           : fmt::format("got 0x{:08x}", m.data)));
    if (e.equals) {
      if (m.kind == host::RecvMsg::kWriteImm) {
        fail(loc, fmt::format("message {}: a write_imm has no RQ element to compare", i));
        continue;
      }
      const host::Mr* mr = find_mr_any(e.equals->node, e.equals->mr);
      if (!mr) return fail(loc, "no MR '" + e.equals->mr + "' on " + e.equals->node);
      if (e.length > c.params.rq_elem_bytes) {
        fail(loc, fmt::format("message {}: length {} exceeds the RQ element ({} bytes)", i, e.length,
                              c.params.rq_elem_bytes));
        continue;
      }
      const std::vector<uint8_t> src = mem_bytes(e.equals->node, mr->pa + e.equals->offset, e.length);
      const uint8_t* want = src.data();
      const uint8_t* have = std::as_const(*n->mem).data(m.elem_addr, e.length);
      for (uint64_t k = 0; k < e.length; ++k)
        if (want[k] != have[k]) {
          fail(loc, fmt::format("message {}: RQ element {} byte {} is 0x{:02x}, {} {} offset {} has 0x{:02x}", i,
                                m.rq_index, k, have[k], e.equals->node, e.equals->mr, e.equals->offset + k,
                                want[k]));
          break;
        }
    }
  }
}

}  // namespace ernic
