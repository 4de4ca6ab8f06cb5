// model/bridge: a byte stream between two processes (Boost.Asio), carrying
// whole messages, each behind a 4-byte little-endian length. Unix socket
// ("unix:PATH") by default, TCP ("tcp:HOST:PORT") for another machine.
//
// Blocking and event-driven: the sockets are Asio's, in non-blocking mode;
// a call that cannot go on waits in poll(2) on the socket (no busy loop,
// no timer object: the timeout is poll's) until it can or until its
// wall-clock timeout. While a send waits for room, whatever the peer sends
// meanwhile is taken in and queued: two ends that both send a lot never
// deadlock on full socket buffers. (An Asio io_context per message, with a
// timer and the epoll reactor, cost twice the system calls of this: the
// MMIO round trip is the bridge's hot path.)
//
// Errors (ChannelError, a message naming the cause): the peer closed the
// connection, a transport error, a wall-clock timeout, a frame longer than
// kMaxFrame (the stream is then unusable: no resynchronisation is tried).
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ernic::bridge {

class ChannelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "unix:PATH" or "tcp:HOST:PORT"; a bare path means unix. Throws
// std::invalid_argument naming what is wrong.
struct Endpoint {
  enum Kind { kUnix, kTcp } kind = kUnix;
  std::string path;           // kUnix
  std::string host;           // kTcp
  uint16_t port = 0;          // kTcp
  static Endpoint parse(const std::string& s);
  std::string str() const;
};

// The largest frame either end accepts: an intro, or a 64-byte header with
// 65,535 bytes of data.
constexpr size_t kMaxFrame = 64 + 0xFFFF;

using WallTimeout = std::chrono::milliseconds;
constexpr WallTimeout kNoTimeout = WallTimeout::zero();  // wait for ever

// What a SimBricks conversation needs of its carrier, whichever it is: this
// stream (Channel) or SimBricks' shared-memory queues (shm_channel.h).
// Messages are whole SimBricks messages (64-byte header and data), the
// ownership bit clear. The intros: on a stream, messages like the others;
// on shared memory, over the Unix socket beside the queues (the listener's
// with the queues' file descriptor, its queue fields filled in by the
// transport).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void send(const std::vector<uint8_t>& msg, WallTimeout timeout = kNoTimeout) = 0;
  virtual std::vector<uint8_t> recv(WallTimeout timeout = kNoTimeout) = 0;
  virtual bool pending() const = 0;      // a whole message can be received without waiting
  virtual void receive_available() = 0;  // takes in what is there, without waiting
  // A close or an error was seen and every message before it handed out:
  // the next recv() throws (at once) why.
  virtual bool failed() const { return false; }
  virtual const std::string& peer() const = 0;
  virtual void send_intro(const std::vector<uint8_t>& intro, WallTimeout timeout) { send(intro, timeout); }
  virtual std::vector<uint8_t> recv_intro(WallTimeout timeout) { return recv(timeout); }
};

class Channel : public Transport {
 public:
  ~Channel() override;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // The connecter side. Retries a refused or missing endpoint until the
  // timeout (the listener may still be starting).
  static std::unique_ptr<Channel> connect(const Endpoint& ep, WallTimeout timeout);

  // timeout: the longest wait for room (a peer that stops reading).
  void send(const std::vector<uint8_t>& frame, WallTimeout timeout = kNoTimeout) override;
  // The next frame; throws ChannelError on timeout, close or error.
  std::vector<uint8_t> recv(WallTimeout timeout = kNoTimeout) override;
  // A frame already received and queued (no waiting)?
  bool pending() const override { return !inq_.empty(); }
  // Takes in whatever the socket holds now, without waiting; then pending()
  // tells whether a whole frame is there. A close or an error is kept for
  // the next recv() (frames received before it are still handed out).
  void receive_available() override;
  bool failed() const override { return !error_.empty() && inq_.empty(); }
  void close();
  const std::string& peer() const override { return peer_; }

  uint64_t frames_sent() const { return sent_; }
  uint64_t frames_received() const { return received_; }

 private:
  friend class Listener;
  struct Io;
  explicit Channel(std::unique_ptr<Io> io, std::string peer);
  bool read_some();                       // takes in what is there; false: nothing (would block)
  void take_frames();
  void wait(bool for_write, WallTimeout timeout, const char* what);  // poll(2) until readable (or writable)
  std::unique_ptr<Io> io_;
  std::string peer_;
  std::vector<uint8_t> buf_;            // bytes received, not yet whole frames
  std::deque<std::vector<uint8_t>> inq_;
  std::string error_;                   // a transport error or the close, once seen
  bool write_failed_ = false;           // error_ came from a write: reading goes on until its own end
  uint64_t sent_ = 0, received_ = 0;
};

// The listener side: binds at construction (a stale Unix socket file is
// replaced; the file is removed again at destruction), accepts one peer.
// Before a listener binds a Unix socket at `path`: a socket file a run
// that ended left there is removed; anything else is refused (ChannelError
// naming `what`): a file that is not a socket, a socket a live process
// listens on (its run would lose its peer).
void claim_socket_path(const std::string& path, const std::string& what);

class Listener {
 public:
  explicit Listener(const Endpoint& ep);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  // peer: how messages name the other end ("" = "the program on ADDR").
  std::unique_ptr<Channel> accept(WallTimeout timeout, const std::string& peer = "");
  // The bound endpoint (tcp port 0 becomes the port the system chose).
  const Endpoint& endpoint() const { return ep_; }

 private:
  struct Io;
  std::unique_ptr<Io> io_;
  Endpoint ep_;
};

}  // namespace ernic::bridge
