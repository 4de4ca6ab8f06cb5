// model/bridge: a link process as the hub of a star of node processes
// (net_link.h, enable_hub): relays and per-peer promises.
//
// Why per-peer promises: node i may act at once on a CONTROL this process
// relays from node j, so what this process promises node i must not pass
// what node j may still send it; but it must leave out what node i itself
// may cause here (node i knows that: its own activity), or two nodes'
// promises would wait on each other through this one for ever. So node i
// is promised self_for(i) = min(this process's next activity, every other
// node's raw bound), where a node's raw bound is the earliest it may act
// by itself: its next activity (its SYNC extension, which with one peer
// leaves out what that peer causes) and what this process sent it that it
// has not taken in. Nothing computed from a promise goes back into one: no
// cycle, so quiet time is crossed by all the processes together.
#include <algorithm>
#include <chrono>
#include <thread>

#include "model/bridge/net_link.h"
#include "model/bridge/net_link_impl.h"
#include "model/sim/clock.h"

namespace ernic::bridge {

void NetLink::enable_hub() {
  if (!control_) throw std::logic_error("NetLink::enable_hub: enable_control first");
  hub_ = true;
}

size_t NetLink::index_of(const Peer* p) const {
  for (size_t i = 0; i < peers_.size(); ++i)
    if (peers_[i].get() == p) return i;
  return peers_.size();
}

// A peer's CONTROL in hub mode, at the instant it is taken: what is the
// other peers' goes to them at its time (relays_); true when this
// process takes it too (a Fact, a StepEnd, a RunEnd, a StepQuery it
// answers as well, a StepUnderway).
bool NetLink::route(size_t from, NetControl& c) {
  sent_ev_.notify(sc_core::SC_ZERO_TIME);  // the thread sends the relays at their instant
  auto to_others = [&](const NetControl& x) {
    for (size_t k = 0; k < peers_.size(); ++k)
      if (k != from) relays_.emplace(x.time_ps, std::make_pair(k, x));
  };
  switch (c.kind) {
    case NetControl::Fact:
    case NetControl::StepQuery:     // every node's process answers, and this one
    case NetControl::StepUnderway:  // every process may be waiting for it
      to_others(c);
      return true;
    case NetControl::StepEnd:
      c.node = uint8_t(from);
      to_others(c);
      return true;
    case NetControl::Watch:  // to the process of the monitor's node only
      if (c.node >= peers_.size())
        throw NetPeerError(peers_[from]->peer->name() + ": a wire monitor event for node index " +
                           std::to_string(c.node) + ", which no process here runs");
      relays_.emplace(c.time_ps, std::make_pair(size_t(c.node), c));
      return false;
    case NetControl::ReadRequest:
    case NetControl::ProgressRequest: {
      if (c.node == NetControl::kNodeHere) return true;  // this process answers (a read of it is refused)
      if (c.node >= peers_.size())
        throw NetPeerError(peers_[from]->peer->name() + ": a " +
                           (c.kind == NetControl::ReadRequest ? "memory read" : "progress request") +
                           " of node index " + std::to_string(c.node) + ", which no process here runs");
      NetControl f = c;
      f.id = next_relay_id_++;
      relayed_reads_[f.id] = {from, c.id};
      relays_.emplace(f.time_ps, std::make_pair(size_t(c.node), f));
      return false;
    }
    case NetControl::ReadReply:
    case NetControl::ProgressReply: {
      if (c.id < kRelayIdBase) return true;  // the answer to this process's own request
      auto it = relayed_reads_.find(c.id);
      if (it == relayed_reads_.end())
        throw NetPeerError(peers_[from]->peer->name() + ": an answer to request " + std::to_string(c.id) +
                           ", which was not asked");
      NetControl r = c;
      r.id = it->second.second;
      relays_.emplace(r.time_ps, std::make_pair(it->second.first, r));
      relayed_reads_.erase(it);
      return false;
    }
    default:
      return true;
  }
}

void NetLink::send_relays(uint64_t now) {
  while (!relays_.empty() && relays_.begin()->first <= now) {
    auto [to, c] = std::move(relays_.begin()->second);
    relays_.erase(relays_.begin());
    Peer& p = *peers_[to];
    if (p.peer->peer_ended()) continue;
    send_due(p, c.time_ps);  // its frames up to the instant go first (as read_remote does)
    p.peer->send_control(c);
    ++st_.controls_sent;
  }
}

// The earliest peer q may act by itself (above): its next activity as its
// SYNC extension states it, or, without one, what its stamp allows; and
// what we sent it that it has not taken in.
uint64_t NetLink::raw(const Peer& q, bool lax) const {
  if (q.peer->peer_ended()) return kInf;
  const uint64_t u = std::min(q.peer->earliest_unacked().value_or(kInf), q.min_out());
  const auto& info = q.peer->peer_info();
  uint64_t own;
  if (info && info->lookahead_ps) {
    own = lax ? info->lax() : info->next_ps;  // lax: or a monitor event of its not judged yet
  } else {
    const uint64_t stamp = q.peer->horizon(), back = q.lookahead + q.preamble;
    own = stamp > back ? stamp - back : 0;
  }
  const uint64_t r = std::max(q.ctl_floor, std::min(own, u));
  // lax: its model error or unjudged monitor event is not moved by the
  // CONTROLs it sent since (control_horizon).
  return lax && info && info->lookahead_ps && info->lax_ps ? std::min(r, *info->lax_ps) : r;
}

// A passive process's earliest CONTROL to p that p must take at its
// instant (the SYNC extension's ctl_ps): none of its own (~0); a hub's
// relays of the other peers' (their strict control horizons), and those
// waiting to go.
uint64_t NetLink::ctl_for(const Peer& p, uint64_t t) const {
  if (!hub_) return kInf;
  uint64_t c = kInf;
  for (const auto& q : peers_)
    if (q.get() != &p) c = std::min(c, control_horizon(*q, t, Horizon::Strict));
  const size_t i = index_of(&p);
  for (const auto& [at, r] : relays_)
    if (r.first == i) c = std::min(c, at);
  return c;
}

// A model error had is relayed as one when it is what bounds the others'
// lax horizon (raw(q, true) is that error itself).
uint64_t NetLink::errors_for(const Peer& p) const {
  uint64_t e = kInf;
  for (const auto& q : peers_) {
    if (q.get() == &p) continue;
    const auto& info = q->peer->peer_info();
    if (info && info->lax_error && info->lax_ps && raw(*q, true) == *info->lax_ps) e = std::min(e, *info->lax_ps);
  }
  return e;
}

uint64_t NetLink::self_for(const Peer& p, uint64_t t, bool lax) const {
  for (const auto& q : peers_)
    if (q.get() != &p) t = std::min(t, raw(*q, lax));
  return t;
}

// Hub mode's wait: whichever peer speaks next (a node waiting for another
// one's step speaks only after that one): poll all, briefly yielding, until
// one has; silent for the timeout: the limiting peer is named.
void NetLink::wait_any(Peer& lim) {
  auto count = [this] {
    uint64_t n = 0;
    for (const auto& p : peers_)
      n += p->peer->packets_received() + p->peer->syncs_received() + p->peer->controls_received() +
           (p->peer->peer_ended() ? 1 : 0);
    return n;
  };
  const uint64_t before = count();
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0;; ++k) {
    for (auto& p : peers_) p->peer->poll();
    if (count() != before) return;
    if (timeout_ != kNoTimeout && std::chrono::steady_clock::now() - t0 >= timeout_)
      throw NetPeerError(lim.peer->name() + ": waiting beyond its promise of " + std::to_string(lim.peer->horizon()) +
                         " ps: no answer within " + std::to_string(timeout_.count()) + " ms of wall time");
    if (k < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace ernic::bridge
