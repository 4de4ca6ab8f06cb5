// model/host: batched CM set-up (driver.h: listen_batch, connect_batch).
// Seed 001 sets connections up faster with "several REQ packets handled at
// once"; here the active side puts n ConnectRequests on QP1 back to back
// instead of one per round trip, and the passive side's interrupt handler
// answers every ConnectRequest it finds in QP1's RQ in one pass (as it
// always does: service_qp1_rq drains the RQ). Everything else is connect()'s
// and on_cm_req()'s: the same MADs, QP programming and ReadyToUse.
#include "model/host/driver.h"

#include <fmt/format.h>

#include <algorithm>

namespace ernic::host {

std::vector<Connection*> Driver::listen_batch(const QpParams& p, uint32_t n) {
  if (!initialised_) fail("listen before init");
  if (listener_ || !listen_queue_.empty()) fail("a listen is already pending");
  if (n == 0 || n >= kQp1Depth) fail(fmt::format("listen_batch of {}: 1..{} connections", n, kQp1Depth - 1));
  std::vector<Connection*> v;
  for (uint32_t i = 0; i < n; ++i) {
    auto c = std::make_unique<Connection>();
    c->params = p;
    conns_.push_back(std::move(c));
    v.push_back(conns_.back().get());
    batch_listeners_.push_back(v.back());
    if (i == 0) listener_ = v.back();
    else listen_queue_.push_back(v.back());
  }
  return v;
}

bool Driver::batch_pending() {
  if (!batch_.empty()) return true;
  // Listeners are done once in RTS (or failed); until then their ReadyToUse
  // may come in a burst.
  batch_listeners_.erase(std::remove_if(batch_listeners_.begin(), batch_listeners_.end(),
                                        [](const Connection* c) {
                                          return c->state == VerbsState::Rts || c->state == VerbsState::Err;
                                        }),
                         batch_listeners_.end());
  return !batch_listeners_.empty();
}

bool Driver::batch_reply(const roce::cm::Rep& rep) {
  for (auto& e : batch_) {
    if (e.replied || e.c->local_comm_id != rep.remote_comm_id) continue;
    Connection& c = *e.c;
    c.remote_comm_id = rep.local_comm_id;
    c.remote_qpn = rep.local_qpn;
    c.remote_psn = rep.start_psn;
    if (auto mi = roce::cm::decode_mr_info(rep.private_data.data(), rep.private_data.size())) c.remote_mr = *mi;
    e.replied = true;
    bus_.signal(HostBus::kCmReply);
    return true;
  }
  return false;
}

bool Driver::batch_reject(const roce::cm::Rej& rej) {
  for (auto& e : batch_) {
    if (e.replied || e.c->local_comm_id != rej.remote_comm_id || e.c->state == VerbsState::Err) continue;
    e.rej_reason = rej.reason;
    set_state(*e.c, VerbsState::Err);
    bus_.signal(HostBus::kCmReply);
    return true;
  }
  return false;
}

std::vector<Connection*> Driver::connect_batch(roce::IpAddr server, const QpParams& p, uint32_t n,
                                               uint16_t service_port) {
  if (!initialised_) fail("connect before init");
  if (!batch_.empty()) fail("a connect_batch is already in progress");
  if (n == 0 || n >= kQp1Depth) fail(fmt::format("connect_batch of {}: 1..{} connections", n, kQp1Depth - 1));
  const roce::MacAddr& mac = neighbour(server);
  local_addr(server.v6);  // fails when v6 and no IPv6 address, before a QP is taken
  std::vector<Connection*> cs;
  std::vector<roce::cm::Req> reqs;
  for (uint32_t i = 0; i < n; ++i) {
    Connection& c = prepare(p);
    c.local_comm_id = rand32();
    set_remote(c, server);
    c.remote_mac = mac;
    reqs.push_back(cm_req(c, server, p, service_port));
    cs.push_back(&c);
    batch_.push_back({&c, false, 0});
  }
  auto settled = [&](const BatchEntry& e) { return e.replied || e.c->state == VerbsState::Err; };
  for (int attempt = 0; attempt < 3; ++attempt) {
    bool any = false;
    for (uint32_t i = 0; i < n; ++i)
      if (!settled(batch_[i])) {
        send_mad(server, reqs[i], roce::cm::attr::REQ);
        any = true;
      }
    if (!any) break;
    // Until every one is answered, or one CM try has passed.
    const uint64_t until = now() + uint64_t(cfg_.cm_timeout_us) * 1000000;
    while (now() < until && !std::all_of(batch_.begin(), batch_.end(), settled))
      bus_.sleep_until(until, HostBus::kCmReply);
  }
  const std::vector<BatchEntry> done = batch_;
  batch_.clear();
  for (const auto& e : done) {
    if (e.c->state == VerbsState::Err) {
      for (const auto& x : done) qpn_used_[x.c->qpn] = false;
      throw CmError(CmError::rejected,
                    fmt::format("node {}: connect_batch to {}: ConnectReject received for QP{} (reason {})", cfg_.node,
                                server.str(), e.c->qpn, e.rej_reason),
                    e.rej_reason);
    }
    if (!e.replied) {
      for (const auto& x : done) {
        set_state(*x.c, VerbsState::Err);
        qpn_used_[x.c->qpn] = false;
      }
      throw CmError(CmError::timeout, fmt::format("node {}: connect_batch to {}: QP{} got no ConnectReply after 3 "
                                                  "ConnectRequests", cfg_.node, server.str(), e.c->qpn));
    }
  }
  // Every ConnectReply is in: program each QP (RESET -> INIT -> RTR -> RTS)
  // and send its ReadyToUse, in order.
  for (Connection* c : cs) {
    program_rc_qp(*c);
    set_state(*c, VerbsState::Rts);
    roce::cm::Rtu rtu;
    rtu.local_comm_id = c->local_comm_id;
    rtu.remote_comm_id = c->remote_comm_id;
    send_mad(server, rtu, roce::cm::attr::RTU);
  }
  return cs;
}

}  // namespace ernic::host
