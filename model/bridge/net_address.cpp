// model/bridge: a link end opened from its address (net_address.h).
#include "model/bridge/net_address.h"

#include <stdexcept>

#include "model/bridge/channel.h"
#include "model/bridge/shm_channel.h"

namespace ernic::bridge {

namespace {
constexpr char kShm[] = "shm:";
}  // namespace

bool is_shm_address(const std::string& a) { return a.rfind(kShm, 0) == 0; }

bool net_address_valid(const std::string& addr) {
  if (is_shm_address(addr)) return addr.size() > sizeof kShm - 1;
  try {
    Endpoint::parse(addr);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::unique_ptr<NetPeer> open_net_peer(const std::string& addr, bool listen, uint32_t channel,
                                       const std::string& peer, WallTimeout timeout) {
  if (is_shm_address(addr)) {
    const std::string sock = addr.substr(sizeof kShm - 1);
    if (sock.empty()) throw std::invalid_argument("'" + addr + "': a shared-memory link is shm:PATH");
    if (listen)
      return NetPeer::as_listener(
          ShmChannel::listen(sock, kSplitShmEntries, kSplitShmEntryBytes, timeout, peer), channel,
          peer, timeout);
    return NetPeer::as_connecter(ShmChannel::connect(sock, timeout, peer), channel, peer, timeout);
  }
  const Endpoint ep = Endpoint::parse(addr);  // std::invalid_argument names what is wrong
  if (listen) {
    Listener l(ep);
    return NetPeer::as_listener(l.accept(timeout, peer), channel, peer, timeout);
  }
  return NetPeer::as_connecter(Channel::connect(ep, timeout), channel, peer, timeout);
}

}  // namespace ernic::bridge
