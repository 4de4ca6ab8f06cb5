// model/bridge: SimBricks' shared-memory queues (lib/simbricks/base/if.h
// and if.c's behaviour, implemented from their description, no code taken):
// the third carrier of a link end's messages (issue 16), the one an
// unmodified SimBricks peer (net_wire, net_switch, a NIC simulator) speaks.
//
// The listener creates the pool: c2l + l2c queues (entries of elen bytes,
// nentries each; c2l first, zeroed) in anonymous memory (memfd, sealed at
// its size: SimBricks' listeners use a file, its peers only the
// descriptor they are sent), binds a Unix socket and,
// when the connecter arrives, sends its intro with the pool's file
// descriptor (SCM_RIGHTS) and the queues' offsets, entry sizes and counts
// in it; the connecter maps the pool from that descriptor and answers with
// its intro. Then each side writes the other's input queue: an entry
// belongs to its producer while bit 7 of its last header byte (own_type) is
// 0, to the consumer once the producer has written the message and set it
// (release); the consumer hands it back by clearing it. Entries are used
// in ring order. A message is its 64-byte header and data up to the entry
// size (PACKET: len bytes).
//
// Waiting: SimBricks' simulators poll the ownership byte. Here a wait spins
// briefly, then sleeps with a backoff from 1 us to 1 ms (2 cores: a peer
// spinning against us would halve the machine), and checks the Unix socket:
// SimBricks has no other sign of a peer that has died (its socket closes).
// Errors: ChannelError (channel.h), naming the peer and what went wrong: a
// timeout, a closed peer, a message longer than an entry, an intro that
// does not fit the pool.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/bridge/channel.h"

namespace ernic::bridge {

class ShmChannel : public Transport {
 public:
  ~ShmChannel() override;
  // The listener: the pool (above), the socket at sock_path (a stale one
  // replaced; a file that is not a socket or a live listener's socket
  // refused: claim_socket_path; removed once the connecter came); waits
  // for one connecter.
  static std::unique_ptr<ShmChannel> listen(const std::string& sock_path, uint64_t nentries, uint64_t elen,
                                            WallTimeout timeout, const std::string& peer = "");
  // The connecter: retries a missing socket until the timeout.
  static std::unique_ptr<ShmChannel> connect(const std::string& sock_path, WallTimeout timeout,
                                             const std::string& peer = "");

  void send(const std::vector<uint8_t>& msg, WallTimeout timeout = kNoTimeout) override;
  std::vector<uint8_t> recv(WallTimeout timeout = kNoTimeout) override;
  bool pending() const override;
  void receive_available() override {}
  const std::string& peer() const override { return peer_; }
  void send_intro(const std::vector<uint8_t>& intro, WallTimeout timeout) override;
  std::vector<uint8_t> recv_intro(WallTimeout timeout) override;
  uint64_t out_entry_bytes() const { return out_elen_; }
  int pool_fd() const { return pool_fd_; }  // the pool's descriptor, as the peer receives it (tests read it)

 private:
  ShmChannel() = default;
  uint8_t* entry(uint8_t* q, uint64_t pos, uint64_t elen) const { return q + pos * elen; }
  void wait_owner(uint8_t* e, bool want_consumer, WallTimeout timeout, const char* what);
  void check_peer_alive(const char* what);
  void map_pool(int fd, uint64_t size);
  int sock_ = -1, pool_fd_ = -1;
  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  uint8_t* in_ = nullptr;
  uint8_t* out_ = nullptr;
  uint64_t in_elen_ = 0, in_n_ = 0, in_pos_ = 0;
  uint64_t out_elen_ = 0, out_n_ = 0, out_pos_ = 0;
  bool listener_ = false;
  std::string peer_, sock_path_;
  // The listener's queues as its intro announces them.
  uint64_t l2c_off_ = 0, c2l_off_ = 0;
};

}  // namespace ernic::bridge
