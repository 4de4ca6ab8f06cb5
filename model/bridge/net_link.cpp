// model/bridge: a process's link ends towards other processes (net_link.h).
#include "model/bridge/net_link.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

#include "model/sim/clock.h"

namespace ernic::bridge {

using namespace sc_core;

namespace {
constexpr uint64_t kInf = ~uint64_t(0);
uint64_t sat_add(uint64_t a, uint64_t b) { return a > kInf - b ? kInf : a + b; }
}  // namespace

// A copy waiting to go out: by (stamp, order carried).
struct NetLink::Out : LineOut {
  NetLink* link = nullptr;
  Peer* peer = nullptr;
  void carry(LineFrame lf) override;
};

struct NetLink::Peer {
  std::unique_ptr<NetPeer> peer;
  uint64_t lookahead = 0, preamble = 0;
  LineRx* rx = nullptr;
  Out out;
  std::map<std::pair<uint64_t, uint64_t>, LineFrame> outq;
  uint64_t out_seq = 0;
  uint64_t min_out() const { return outq.empty() ? kInf : outq.begin()->first.first; }
};

NetLink::NetLink(sc_module_name name, WallTimeout timeout) : sc_module(name), timeout_(timeout) {
  // A peer that has gone must be an error message, not a SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  SC_THREAD(thread);
}

NetLink::~NetLink() = default;

size_t NetLink::add_peer(std::unique_ptr<NetPeer> peer, uint64_t lookahead_ps, uint64_t preamble_ps, LineRx* rx) {
  if (lookahead_ps == 0)
    throw std::invalid_argument("a link to another process needs a propagation delay above 0 (the lookahead of "
                                "conservative synchronisation)");
  auto p = std::make_unique<Peer>();
  p->peer = std::move(peer);
  p->lookahead = lookahead_ps;
  p->preamble = preamble_ps;
  p->rx = rx;
  p->out.link = this;
  p->out.peer = p.get();
  peers_.push_back(std::move(p));
  return peers_.size() - 1;
}

LineOut& NetLink::out(size_t i) { return peers_.at(i)->out; }

void NetLink::Out::carry(LineFrame lf) {
  if (!link->error_.empty()) return;
  if (peer->peer->peer_ended()) {
    ++link->st_.dropped_after_end;
    return;
  }
  const uint64_t stamp = lf.first_ps;
  peer->outq.emplace(std::make_pair(stamp, peer->out_seq++), std::move(lf));
  try {
    link->send_due(*peer, sat_add(ClockDomain::now_ps(), peer->lookahead + peer->preamble));
  } catch (const NetPeerError& e) {
    link->error_ = e.what();
    sc_stop();
  }
}

// A send failed: the peer may have ended and closed; its TERMINATE is then
// among what it sent before.
bool NetLink::gone(Peer& p) {
  try {
    p.peer->poll();
  } catch (const NetPeerError&) {
  }
  return p.peer->peer_ended();
}

void NetLink::chaos() {
  if (!chaos_us_) return;
  std::this_thread::sleep_for(std::chrono::microseconds(chaos_rng_() % (chaos_us_ + 1)));
}

void NetLink::set_chaos(uint64_t seed, uint32_t max_us) {
  chaos_rng_.seed(seed);
  chaos_us_ = max_us;
}

// Copies no later send can overtake any more: a copy sent at t is stamped
// at least t + preamble + lookahead, and later copies of one frame follow
// the first on the line.
void NetLink::send_due(Peer& p, uint64_t upto_ps) {
  while (!p.outq.empty() && p.outq.begin()->first.first <= upto_ps) {
    auto it = p.outq.begin();
    if (p.peer->peer_ended()) {
      ++st_.dropped_after_end;
    } else {
      chaos();
      try {
        p.peer->send_packet(it->first.first, 0, it->second.f, it->second.bad_fcs);
      } catch (const NetPeerError&) {
        if (!gone(p)) throw;
        ++st_.dropped_after_end;
      }
    }
    p.outq.erase(it);
  }
}

void NetLink::deliver(uint64_t now) {
  for (auto& p : peers_)
    while (auto pk = p->peer->pop_until(now)) {
      if (pk->t_ps < now)
        throw NetPeerError(p->peer->name() + ": a PACKET stamped " + std::to_string(pk->t_ps) +
                           " ps arrived when this process was already at " + std::to_string(now) +
                           " ps (a protocol violation; a SimBricks peer whose sync interval exceeds its link "
                           "latency does this, SimBricks issue #16)");
      if (p->rx) p->rx->carry(LineFrame{std::move(pk->frame), pk->t_ps, pk->bad_fcs});
    }
}

// The earliest this process may still act: its next pending SystemC
// activity, a PACKET received and not yet carried in.
uint64_t NetLink::next_activity(uint64_t now) const {
  const sc_time d = sc_time_to_pending_activity();
  uint64_t t = d >= sc_max_time() - sc_time_stamp() ? kInf : now + d.value();
  for (const auto& p : peers_)
    if (auto n = p->peer->next_packet_time()) t = std::min(t, *n);
  return t;
}

// The earliest stamp peer p can still send. Its SYNC stamp; with one peer
// and its SYNC extension, also what follows from both sides' next
// activities: p sends no earlier than its lookahead (its line's delay, as
// its extension states it: the other direction's may differ) after the
// earliest of its own next activity, a PACKET of ours it had not taken in,
// and our earliest send.
uint64_t NetLink::horizon(const Peer& p, uint64_t t_self) const {
  if (p.peer->peer_ended()) return kInf;
  uint64_t h = p.peer->horizon();
  const auto& info = p.peer->peer_info();
  if (peers_.size() == 1 && info && info->lookahead_ps) {
    uint64_t u = std::min(p.peer->earliest_unacked().value_or(kInf), p.min_out());
    const uint64_t ours = std::min(sat_add(t_self, p.lookahead), p.min_out());
    const uint64_t x = sat_add(std::min({info->next_ps, u, ours}), info->lookahead_ps);
    h = std::max(h, x);
  }
  return h;
}

void NetLink::promise(uint64_t now) {
  const uint64_t t = next_activity(now);
  uint64_t in = kInf;
  for (const auto& p : peers_) in = std::min(in, horizon(*p, t));
  for (auto& p : peers_) {
    if (p->peer->peer_ended()) continue;
    const uint64_t send_at = std::min(sat_add(t, p->lookahead), p->min_out());
    const uint64_t prom = std::min(send_at, sat_add(std::min(t, in), p->lookahead));
    std::optional<NetSyncInfo> info;
    if (peers_.size() == 1)
      info = NetSyncInfo{send_at == kInf ? kInf : send_at - p->lookahead, p->peer->packets_received(), p->lookahead};
    if (prom == kInf && !info) continue;
    bool sent;
    try {
      sent = p->peer->promise(prom == kInf ? p->peer->last_sent() : prom, info);
    } catch (const NetPeerError&) {
      if (!gone(*p)) throw;
      continue;
    }
    if (sent) chaos();
  }
}

// Waits, with the kernel, until some peer lets local time move past now.
void NetLink::block(uint64_t now) {
  ++st_.blocks;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const uint64_t t = next_activity(now);
    Peer* lim = nullptr;
    for (auto& p : peers_)
      if (horizon(*p, t) <= now) lim = p.get();
    if (!lim) break;
    chaos();
    lim->peer->recv_one(timeout_);
    for (auto& p : peers_) p->peer->poll();
    deliver(now);
    promise(now);
  }
  st_.wall_blocked_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void NetLink::thread() {
  try {
    for (;;) {
      const uint64_t now = ClockDomain::now_ps();
      for (auto& p : peers_) p->peer->poll();
      deliver(now);
      for (auto& p : peers_) send_due(*p, sat_add(now, p->lookahead));
      promise(now);
      const uint64_t t = next_activity(now);
      uint64_t target = kInf;
      for (auto& p : peers_) {
        target = std::min(target, horizon(*p, t));
        if (auto n = p->peer->next_packet_time()) target = std::min(target, *n);
        if (!p->outq.empty()) target = std::min(target, p->min_out() - p->lookahead);
      }
      if (target > now) {
        if (target == kInf)
          wait();  // nothing can come any more: every peer has ended
        else
          wait(ps(target - now));
        continue;
      }
      block(now);
    }
  } catch (const NetPeerError& e) {
    error_ = e.what();
    sc_stop();
  }
}

void NetLink::finish() {
  if (finished_) return;
  finished_ = true;
  const uint64_t now = ClockDomain::now_ps();
  for (auto& p : peers_) {
    try {
      send_due(*p, kInf);
      p->peer->terminate(now);  // also to a peer that has ended: it waits for this one
    } catch (const NetPeerError& e) {
      if (!gone(*p) && error_.empty()) error_ = e.what();
    }
  }
  // Both ends close only after both TERMINATEs: what a peer still sends
  // (it may run on after this end) is read and dropped, so that neither
  // closes on the other's unread bytes. A peer that closes instead (as
  // SimBricks' net_wire does: it aborts on a TERMINATE) has nothing more to
  // say to this end, whose run is over: not an error.
  for (auto& p : peers_) {
    try {
      while (!p->peer->peer_ended()) {
        p->peer->recv_one(timeout_);
        while (p->peer->pop_until(kInf)) ++st_.dropped_after_end;
      }
    } catch (const NetPeerError&) {
      ++st_.closed_without_terminate;
    }
  }
}

NetLinkStats NetLink::stats() const {
  NetLinkStats s = st_;
  for (const auto& p : peers_) {
    s.packets_sent += p->peer->packets_sent();
    s.packets_received += p->peer->packets_received();
    s.syncs_sent += p->peer->syncs_sent();
    s.syncs_received += p->peer->syncs_received();
  }
  return s;
}

}  // namespace ernic::bridge
