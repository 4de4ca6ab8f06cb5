// model/bridge: a link end's conversation with a peer process (net_peer.h).
#include "model/bridge/net_peer.h"

#include <algorithm>


namespace ernic::bridge {

NetPeer::NetPeer(std::unique_ptr<Transport> ch, uint32_t channel, std::string name)
    : ch_(std::move(ch)), channel_(channel), name_(std::move(name)) {}

namespace {
std::vector<uint8_t> recv_intro(Transport& ch, const std::string& name, WallTimeout timeout) {
  try {
    return ch.recv_intro(timeout);
  } catch (const ChannelError& e) {
    throw NetPeerError(name + ": no intro: " + e.what());
  }
}
}  // namespace

std::unique_ptr<NetPeer> NetPeer::as_listener(std::unique_ptr<Transport> ch, uint32_t channel, std::string name,
                                              WallTimeout timeout) {
  ch->send_intro(encode_net_listener_intro(kNetEntryBytes, kIntroFlagSync), timeout);
  const std::vector<uint8_t> intro = recv_intro(*ch, name, timeout);
  std::string why;
  if (!decode_net_connecter_intro(intro.data(), intro.size(), &why)) throw NetPeerError(name + ": " + why);
  std::unique_ptr<NetPeer> p(new NetPeer(std::move(ch), channel, std::move(name)));
  p->send_timeout_ = timeout;
  return p;
}

std::unique_ptr<NetPeer> NetPeer::as_connecter(std::unique_ptr<Transport> ch, uint32_t channel, std::string name,
                                               WallTimeout timeout) {
  const std::vector<uint8_t> intro = recv_intro(*ch, name, timeout);
  std::string why;
  auto li = decode_net_listener_intro(intro.data(), intro.size(), &why);
  if (!li) throw NetPeerError(name + ": " + why);
  if (li->c2l.elen && li->c2l.elen < kHeaderBytes + 4170)
    throw NetPeerError(name + ": the peer takes messages of " + std::to_string(li->c2l.elen) +
                       " bytes at most; a 4,170-byte frame needs " + std::to_string(kHeaderBytes + 4170));
  ch->send_intro(encode_net_connecter_intro(kIntroFlagSync), timeout);
  std::unique_ptr<NetPeer> p(new NetPeer(std::move(ch), channel, std::move(name)));
  p->send_timeout_ = timeout;
  return p;
}

void NetPeer::send(const NetMsg& m) {
  if (sent_any_ && m.timestamp_ps < last_sent_)
    throw NetPeerError(name_ + ": a message stamped " + std::to_string(m.timestamp_ps) + " ps after one stamped " +
                       std::to_string(last_sent_) + " ps breaks this end's promise");
  try {
    ch_->send(encode_net(m), send_timeout_);  // a stopped peer whose buffer is full: an error, not a hang
  } catch (const ChannelError& e) {
    throw NetPeerError(name_ + ": " + e.what());
  }
  last_sent_ = m.timestamp_ps;
  sent_any_ = true;
}

void NetPeer::send_packet(uint64_t t_ps, uint8_t port, const std::vector<uint8_t>& frame, bool bad_fcs) {
  NetMsg m;
  m.kind = NetMsg::Packet;
  m.timestamp_ps = t_ps;
  m.port = port;
  m.bad_fcs = bad_fcs;
  m.frame = frame;
  send(m);
  note_sent(t_ps, false);
  ++packets_sent_;
  last_info_sent_.reset();
}

bool NetPeer::promise(uint64_t t_ps, const std::optional<NetSyncInfo>& info) {
  const bool later = !sent_any_ || t_ps > last_sent_;
  if (!later && (!info || info == last_info_sent_)) return false;
  NetMsg m;
  m.kind = NetMsg::Sync;
  m.timestamp_ps = std::max(t_ps, sent_any_ ? last_sent_ : 0);
  m.sync_info = info;
  send(m);
  last_info_sent_ = info;
  ++syncs_sent_;
  return true;
}

// A CONTROL's time may precede a PACKET's stamp: the least of them.
std::optional<uint64_t> NetPeer::earliest_unacked(bool controls_only) const {
  const auto& q = controls_only ? min_ctl_ : min_all_;
  if (q.empty()) return std::nullopt;
  return q.front().second;
}

// Message packets_sent_ + controls_sent_ (before this one counts) into the
// running minima: an entry at or above t can no longer be the least.
void NetPeer::note_sent(uint64_t t_ps, bool control) {
  const uint64_t i = packets_sent_ + controls_sent_;
  for (auto* q : {&min_all_, control ? &min_ctl_ : nullptr}) {
    if (!q) continue;
    while (!q->empty() && q->back().second >= t_ps) q->pop_back();
    q->push_back({i, t_ps});
  }
}

void NetPeer::send_control(const NetControl& c) {
  NetMsg m;
  m.kind = NetMsg::Control;
  m.timestamp_ps = sent_any_ ? last_sent_ : 0;
  m.control = c;
  send(m);
  note_sent(c.time_ps, true);
  ++controls_sent_;
  last_info_sent_.reset();
}

std::optional<NetControl> NetPeer::pop_control() {
  if (ctl_in_.empty()) return std::nullopt;
  NetControl c = std::move(ctl_in_.front());
  ctl_in_.pop_front();
  return c;
}

void NetPeer::terminate(uint64_t t_ps) {
  NetMsg m;
  m.kind = NetMsg::Terminate;
  m.timestamp_ps = std::max(t_ps, last_sent_);
  send(m);
}

void NetPeer::take(const std::vector<uint8_t>& bytes) {
  std::string why;
  auto m = decode_net(bytes.data(), bytes.size(), &why);
  if (!m) throw NetPeerError(name_ + ": " + why);
  if (ended_) throw NetPeerError(name_ + ": a message after its TERMINATE");
  if (m->timestamp_ps < horizon_)
    throw NetPeerError(name_ + ": a message stamped " + std::to_string(m->timestamp_ps) + " ps, before the " +
                       std::to_string(horizon_) + " ps it promised (a protocol violation)");
  horizon_ = m->timestamp_ps;
  switch (m->kind) {
    case NetMsg::Sync:
      ++syncs_received_;
      peer_info_ = m->sync_info;
      if (peer_info_) {
        if (peer_info_->acked > packets_sent_ + controls_sent_ || peer_info_->acked < acked_)
          throw NetPeerError(name_ + ": a SYNC acknowledging " + std::to_string(peer_info_->acked) + " PACKETs, " +
                             std::to_string(packets_sent_ + controls_sent_) + " sent and " + std::to_string(acked_) +
                             " acknowledged before (a protocol violation)");
        acked_ = peer_info_->acked;
        for (auto* q : {&min_all_, &min_ctl_})
          while (!q->empty() && q->front().first < acked_) q->pop_front();
      }
      break;
    case NetMsg::Terminate:
      ended_ = true;
      horizon_ = kEnded;
      break;
    case NetMsg::Packet:
      ++packets_received_;
      peer_info_.reset();
      in_.push_back(NetPacket{m->timestamp_ps, channel_, seq_++, m->port, m->bad_fcs, std::move(m->frame)});
      break;
    case NetMsg::Control:
      ++controls_received_;
      ctl_in_.push_back(std::move(m->control));
      break;
  }
}

void NetPeer::poll() {
  try {
    if (!ended_) ch_->receive_available();
    while (!ended_ && ch_->pending()) take(ch_->recv(WallTimeout(1)));
    // Gone without a TERMINATE: said now, not when a wait for it times out
    // (a star's switch polls its nodes and would otherwise wait on).
    if (!ended_ && ch_->failed()) take(ch_->recv(WallTimeout(1)));
  } catch (const ChannelError& e) {
    throw NetPeerError(name_ + ": " + e.what());
  }
}

void NetPeer::recv_one(WallTimeout timeout) {
  if (ended_) return;
  try {
    take(ch_->recv(timeout));
  } catch (const ChannelError& e) {
    throw NetPeerError(name_ + ": waiting beyond its promise of " + std::to_string(horizon_) + " ps: " + e.what());
  }
}

void NetPeer::wait_horizon(uint64_t t_ps, WallTimeout timeout) {
  while (!ended_ && horizon_ < t_ps) {
    try {
      take(ch_->recv(timeout));
    } catch (const ChannelError& e) {
      throw NetPeerError(name_ + ": waiting for its promise to reach " + std::to_string(t_ps) + " ps (it is at " +
                         std::to_string(horizon_) + " ps): " + e.what());
    }
  }
}

std::optional<NetPacket> NetPeer::pop_until(uint64_t t_ps) {
  if (in_.empty() || in_.front().t_ps > t_ps) return std::nullopt;
  NetPacket p = std::move(in_.front());
  in_.pop_front();
  return p;
}

std::optional<uint64_t> NetPeer::next_packet_time() const {
  if (in_.empty()) return std::nullopt;
  return in_.front().t_ps;
}

}  // namespace ernic::bridge
