// model/bridge: a link end to another process opened from its address
// (issue 16: `ernic-sim node --listen|--connect ADDR`), whichever carrier
// the address names:
//   unix:PATH        a Unix stream socket (channel.h)
//   tcp:HOST:PORT    TCP (channel.h)
//   shm:PATH         SimBricks' shared-memory queues (shm_channel.h): the
//                    Unix socket of the intro at PATH (removed once the
//                    connecter came), the pool in anonymous memory
// The listener waits for one connecter; the connecter retries a missing
// socket until the timeout. Then the SimBricks Ethernet intros
// (NetPeer::as_listener / as_connecter).
// Errors: std::invalid_argument for an address of no known carrier;
// ChannelError or NetPeerError (naming `peer`) for a peer that does not
// come, closes or speaks another protocol.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "model/bridge/net_peer.h"

namespace ernic::bridge {

// A listener's shared-memory queues for a split run: each entry holds a
// frame (kNetEntryBytes) or a CONTROL carrying a memory read's answer (up
// to NetLink::kMaxRead = 32 KiB of data), 64 entries each way: 2 x 2.1 MiB.
constexpr uint64_t kSplitShmEntries = 64;
constexpr uint64_t kSplitShmEntryBytes = kHeaderBytes + 32768 + 256;

// True for an address of a carrier open_net_peer knows (above).
bool net_address_valid(const std::string& addr);
// True for shm:PATH.
bool is_shm_address(const std::string& addr);

// listen: this end waits for the other at addr; else it connects to addr.
// channel: the NetPeer's channel number (frame order among peers).
std::unique_ptr<NetPeer> open_net_peer(const std::string& addr, bool listen, uint32_t channel,
                                       const std::string& peer, WallTimeout timeout);

}  // namespace ernic::bridge
