// model/bridge: one end of a link whose other end is in another process
// (issue 16): SimBricks Ethernet messages (eth_proto.h) over a Channel
// (channel.h), with SimBricks' conservative synchronisation kept as state.
//
// The rule (SimBricks, base protocol): a message stamped T promises that
// nothing stamped earlier follows on this channel. So
//   - what this end sends is stamped in non-decreasing order: PACKET at the
//     simulated time its first byte reaches the receiver, SYNC at a promise
//     (its owner computes it: max(now, its next pending activity) + the
//     link latency, so a quiet link costs one message, not one a cycle);
//   - the peer's largest stamp so far is its horizon: this end's simulator
//     may run up to it and must not pass it without hearing more;
//   - a peer message stamped before its horizon is a protocol violation:
//     named and refused (NetPeerError), never reordered silently.
// Received packets are kept in order and handed out when the local
// simulation reaches their time. Frames of several peers with equal stamps
// are ordered by (time, channel, sequence) (NetPacket::operator<), so a
// run never depends on which process answered first.
//
// Plain C++: the SystemC side that blocks the kernel at the horizon is the
// link's (model/link), this is only the conversation.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/bridge/channel.h"
#include "model/bridge/eth_proto.h"

namespace ernic::bridge {

class NetPeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NetPacket {
  uint64_t t_ps = 0;     // when the frame's first byte reaches the receiver
  uint32_t channel = 0;  // which peer (the owner numbers them)
  uint64_t seq = 0;      // order on that channel
  uint8_t port = 0;
  bool bad_fcs = false;
  std::vector<uint8_t> frame;
  bool operator<(const NetPacket& o) const {
    if (t_ps != o.t_ps) return t_ps < o.t_ps;
    if (channel != o.channel) return channel < o.channel;
    return seq < o.seq;
  }
};

class NetPeer {
 public:
  // After the intros: the listener announces entries of kNetEntryBytes and
  // asks for synchronisation; both refuse a peer of another protocol or
  // version (the intro's message says which). name: for messages ("node B").
  static std::unique_ptr<NetPeer> as_listener(std::unique_ptr<Transport> ch, uint32_t channel, std::string name,
                                              WallTimeout timeout);
  static std::unique_ptr<NetPeer> as_connecter(std::unique_ptr<Transport> ch, uint32_t channel, std::string name,
                                               WallTimeout timeout);

  // Sends a frame arriving at the peer at t_ps. t_ps below this end's last
  // stamp breaks its own promise: NetPeerError (the caller's bug).
  void send_packet(uint64_t t_ps, uint8_t port, const std::vector<uint8_t>& frame, bool bad_fcs = false);
  // Promises that nothing stamped before t_ps follows; sends a SYNC only if
  // t_ps is beyond the last stamp or `info` (eth_proto.h's extension)
  // differs from the last sent (returns whether it sent one).
  bool promise(uint64_t t_ps, const std::optional<NetSyncInfo>& info = std::nullopt);
  // The extension of the peer's latest SYNC, if it sent one since its
  // latest PACKET (a PACKET makes it stale).
  const std::optional<NetSyncInfo>& peer_info() const { return peer_info_; }
  // The earliest stamp (a CONTROL's time) among the PACKETs and CONTROLs
  // this end sent that the peer had not taken in by its latest SYNC
  // extension (nullopt: none); controls_only: among the CONTROLs.
  std::optional<uint64_t> earliest_unacked(bool controls_only = false) const;
  // CONTROL (eth_proto.h; only to an ERNIC process of the same split run):
  // stamped with this end's latest stamp (it promises nothing); counted with
  // the PACKETs in the SYNC extension's acknowledgement, at c.time_ps: the
  // peer may act on it at that instant, so until it acknowledges it, this
  // end's view of the peer's next activity (earliest_unacked) includes it.
  void send_control(const NetControl& c);
  // The oldest CONTROL received and not handed out yet.
  std::optional<NetControl> pop_control();
  // TERMINATE: this end is done (the peer's horizon becomes infinite).
  void terminate(uint64_t t_ps);

  // Reads messages until the peer's horizon reaches t_ps (or it ended).
  // Wall-clock timeout: NetPeerError naming the peer and both times.
  void wait_horizon(uint64_t t_ps, WallTimeout timeout);
  // Takes in what has already arrived, without waiting; NetPeerError when
  // the peer closed or failed without a TERMINATE.
  void poll();
  // Waits for the next message and takes it in (timeout: NetPeerError).
  void recv_one(WallTimeout timeout);
  uint64_t horizon() const { return horizon_; }
  const std::string& name() const { return name_; }
  void rename(std::string name) { name_ = std::move(name); }  // once the intro told who it is
  bool peer_ended() const { return ended_; }
  // The oldest received packet stamped at or before t_ps, if any.
  std::optional<NetPacket> pop_until(uint64_t t_ps);
  // The stamp of the oldest received packet not handed out yet.
  std::optional<uint64_t> next_packet_time() const;

  uint64_t last_sent() const { return last_sent_; }
  uint64_t packets_sent() const { return packets_sent_; }
  uint64_t syncs_sent() const { return syncs_sent_; }
  uint64_t packets_received() const { return packets_received_; }
  uint64_t controls_sent() const { return controls_sent_; }
  uint64_t controls_received() const { return controls_received_; }
  uint64_t taken_in() const { return packets_received_ + controls_received_; }  // what this end acknowledges
  uint64_t syncs_received() const { return syncs_received_; }
  static constexpr uint64_t kEnded = ~uint64_t(0);

 private:
  NetPeer(std::unique_ptr<Transport> ch, uint32_t channel, std::string name);
  void take(const std::vector<uint8_t>& bytes);
  void send(const NetMsg& m);

  std::unique_ptr<Transport> ch_;
  uint32_t channel_;
  std::string name_;
  WallTimeout send_timeout_ = kNoTimeout;  // the intro's timeout: the longest a send waits for room
  uint64_t last_sent_ = 0, horizon_ = 0, seq_ = 0;
  bool sent_any_ = false, ended_ = false;
  std::deque<NetPacket> in_;
  std::optional<NetSyncInfo> peer_info_, last_info_sent_;
  std::deque<NetControl> ctl_in_;
  // The PACKETs and CONTROLs sent and not yet acknowledged (index acked_
  // on), as two running minima (earliest_unacked): (index, a PACKET's stamp
  // or a CONTROL's time), each entry below the ones after it; those of
  // CONTROLs alone in the second. O(1) a look (a scan of every message in
  // flight was 1.3 % of a split stream's CPU, issue 16).
  std::deque<std::pair<uint64_t, uint64_t>> min_all_, min_ctl_;
  uint64_t acked_ = 0;
  void note_sent(uint64_t t_ps, bool control);
  uint64_t packets_sent_ = 0, syncs_sent_ = 0, packets_received_ = 0, syncs_received_ = 0;
  uint64_t controls_sent_ = 0, controls_received_ = 0;
};

}  // namespace ernic::bridge
