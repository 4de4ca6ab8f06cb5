// model/bridge: NetLink's own parts (net_link.h), shared by net_link.cpp
// net_link_control.cpp and net_link_hub.cpp; nothing else includes this.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "model/bridge/net_link.h"

namespace ernic::bridge {

constexpr uint64_t kInf = ~uint64_t(0);  // no time: never
inline uint64_t sat_add(uint64_t a, uint64_t b) { return a > kInf - b ? kInf : a + b; }
// While busy, a process promises again every 1/kPromiseDiv of its shortest
// line delay (measured, rc_write_stream_4m rtl split: 4 gave 0.32-0.35 s
// over unix and 0.21-0.24 s over shm, against 0.65-0.70 and 0.24-0.27 s
// promising only at the peers' horizon).
constexpr uint64_t kPromiseDiv = 4;

// A copy waiting to go out: by (stamp, order carried).
struct NetLink::Out : LineOut {
  NetLink* link = nullptr;
  Peer* peer = nullptr;
  void carry(LineFrame lf) override;
};

struct NetLink::Peer {
  std::unique_ptr<NetPeer> peer;
  uint64_t lookahead = 0, preamble = 0;
  uint64_t ctl_floor = 0;   // the latest CONTROL time received: the peer is at or past it
  LineRx* rx = nullptr;
  Out out;
  std::map<std::pair<uint64_t, uint64_t>, LineFrame> outq;
  uint64_t out_seq = 0;
  uint64_t min_out() const { return outq.empty() ? ~uint64_t(0) : outq.begin()->first.first; }
};

}  // namespace ernic::bridge
