// model/bridge: length-prefixed frames over a Boost.Asio stream (channel.h).
#include "model/bridge/channel.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <array>
#include <fstream>
#include <sstream>
#include <boost/asio.hpp>
#include <optional>
#include <thread>

namespace ernic::bridge {
namespace asio = boost::asio;
using Generic = asio::generic::stream_protocol;
using Local = asio::local::stream_protocol;
using Tcp = asio::ip::tcp;

Endpoint Endpoint::parse(const std::string& s) {
  Endpoint e;
  if (s.rfind("tcp:", 0) == 0) {
    const std::string rest = s.substr(4);
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw std::invalid_argument("'" + s + "': a TCP endpoint is tcp:HOST:PORT");
    e.kind = kTcp;
    e.host = rest.substr(0, colon);
    const std::string port = rest.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) > 65535)
      throw std::invalid_argument("'" + s + "': the port must be a number 0..65535");
    e.port = uint16_t(std::stoul(port));
    return e;
  }
  e.path = s.rfind("unix:", 0) == 0 ? s.substr(5) : s;
  if (e.path.empty()) throw std::invalid_argument("'" + s + "': a Unix socket endpoint is unix:PATH");
  if (e.path.size() >= sizeof(sockaddr_un{}.sun_path))
    throw std::invalid_argument("'" + s + "': a Unix socket path is at most 107 bytes");
  return e;
}

std::string Endpoint::str() const {
  return kind == kTcp ? "tcp:" + host + ":" + std::to_string(port) : "unix:" + path;
}

struct Channel::Io {
  asio::io_context ctx;  // owns the socket; Channel does its I/O without running it
  Generic::socket sock{ctx};
  std::array<uint8_t, 65536> rbuf;
};

Channel::Channel(std::unique_ptr<Io> io, std::string peer) : io_(std::move(io)), peer_(std::move(peer)) {
  boost::system::error_code ec;
  io_->sock.non_blocking(true, ec);
  if (ec) error_ = "transport error: " + ec.message();
}

Channel::~Channel() { close(); }

void Channel::close() {
  if (!io_ || !io_->sock.is_open()) return;
  boost::system::error_code ec;
  io_->sock.shutdown(Generic::socket::shutdown_both, ec);
  io_->sock.close(ec);
}

bool Channel::read_some() {
  if (!error_.empty() && !write_failed_) return false;  // after a failed write, what the peer sent is still read
  boost::system::error_code ec;
  const size_t n = io_->sock.read_some(asio::buffer(io_->rbuf), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return false;
  if (ec) {
    write_failed_ = false;
    if (ec == asio::error::connection_reset)
      error_ = "the peer closed the connection (reset)";
    else if (ec != asio::error::eof)
      error_ = "transport error: " + ec.message();
    else if (buf_.empty())
      error_ = "the peer closed the connection";
    else  // a frame cut short: what it announced and what came
      error_ = "the peer closed the connection in the middle of a frame (" + std::to_string(buf_.size()) +
               " bytes of it received)";
    return false;
  }
  buf_.insert(buf_.end(), io_->rbuf.begin(), io_->rbuf.begin() + long(n));
  take_frames();
  return true;
}

void Channel::take_frames() {
  size_t at = 0;
  while (buf_.size() - at >= 4) {
    const uint32_t len = uint32_t(buf_[at]) | uint32_t(buf_[at + 1]) << 8 | uint32_t(buf_[at + 2]) << 16 |
                         uint32_t(buf_[at + 3]) << 24;
    if (len > kMaxFrame) {
      error_ = "frame of " + std::to_string(len) + " bytes announced, more than the " + std::to_string(kMaxFrame) +
               " a frame may carry";
      buf_.clear();
      write_failed_ = false;  // the stream is unusable: read no more, even after a failed write
      return;
    }
    if (buf_.size() - at - 4 < len) break;
    inq_.emplace_back(buf_.begin() + long(at + 4), buf_.begin() + long(at + 4 + len));
    ++received_;
    at += 4 + len;
  }
  buf_.erase(buf_.begin(), buf_.begin() + long(at));
}

// Blocks in poll(2) until the socket is readable (or, for_write, writable
// or readable), or the timeout: then throws naming what waited.
void Channel::wait(bool for_write, WallTimeout timeout, const char* what) {
  pollfd p{};
  p.fd = io_->sock.native_handle();
  p.events = short(POLLIN | (for_write ? POLLOUT : 0));
  const int ms = timeout == kNoTimeout ? -1 : int(std::min<int64_t>(timeout.count(), INT32_MAX));
  for (;;) {
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return;
    if (r == 0)
      throw ChannelError(std::string(what) + ": no answer from " + peer_ + " within " +
                         std::to_string(timeout.count()) + " ms of wall time");
    if (errno != EINTR) throw ChannelError(std::string(what) + ": poll: " + std::strerror(errno));
  }
}

void Channel::send(const std::vector<uint8_t>& frame, WallTimeout timeout) {
  if (frame.size() > kMaxFrame) throw ChannelError("frame of " + std::to_string(frame.size()) + " bytes too long");
  if (!error_.empty()) throw ChannelError("send to " + peer_ + ": " + error_);
  std::vector<uint8_t> out(4 + frame.size());
  const uint32_t len = uint32_t(frame.size());
  for (int i = 0; i < 4; ++i) out[size_t(i)] = uint8_t(len >> (8 * i));
  std::copy(frame.begin(), frame.end(), out.begin() + 4);
  size_t done = 0;
  while (done < out.size()) {
    boost::system::error_code ec;
    done += io_->sock.write_some(asio::buffer(out.data() + done, out.size() - done), ec);
    if (!ec) continue;
    if (ec != asio::error::would_block && ec != asio::error::try_again) {
      error_ = ec == asio::error::broken_pipe || ec == asio::error::connection_reset
                   ? "the peer closed the connection"
                   : "transport error: " + ec.message();
      write_failed_ = true;
      throw ChannelError("send to " + peer_ + ": " + error_);
    }
    // No room: take in what the peer sends meanwhile, then try again.
    wait(true, timeout, "send");
    while (read_some()) {
    }
  }
  ++sent_;
}

void Channel::receive_available() {
  while (read_some()) {
  }
}

std::vector<uint8_t> Channel::recv(WallTimeout timeout) {
  while (inq_.empty()) {
    if (read_some()) continue;
    if (!error_.empty()) throw ChannelError("receive from " + peer_ + ": " + error_);
    wait(false, timeout, "receive");
  }
  std::vector<uint8_t> f = std::move(inq_.front());
  inq_.pop_front();
  return f;
}

std::unique_ptr<Channel> Channel::connect(const Endpoint& ep, WallTimeout timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::string last;
  for (;;) {
    auto io = std::make_unique<Io>();
    boost::system::error_code ec;
    if (ep.kind == Endpoint::kUnix) {
      io->sock.connect(Generic::endpoint(Local::endpoint(ep.path)), ec);
    } else {
      Tcp::resolver r(io->ctx);
      auto found = r.resolve(ep.host, std::to_string(ep.port), ec);
      if (!ec) {
        ec = asio::error::host_not_found;
        for (const auto& e : found) {
          boost::system::error_code one;
          if (io->sock.is_open()) io->sock.close(one);
          io->sock.connect(Generic::endpoint(e.endpoint()), one);
          ec = one;
          if (!one) break;
        }
      }
      if (!ec) io->sock.set_option(asio::detail::socket_option::boolean<IPPROTO_TCP, TCP_NODELAY>(true), ec);
    }
    if (!ec) return std::unique_ptr<Channel>(new Channel(std::move(io), ep.str()));
    last = ec.message();
    if (timeout == kNoTimeout || std::chrono::steady_clock::now() >= until)
      throw ChannelError("connect to " + ep.str() + ": " + last);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the listener may still be starting
  }
}

struct Listener::Io {
  asio::io_context ctx;
  std::optional<Local::acceptor> local;
  std::optional<Tcp::acceptor> tcp;
  asio::steady_timer timer{ctx};
};

void claim_socket_path(const std::string& path, const std::string& what) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode)) throw ChannelError("listen on " + what + ": " + path + " exists and is not a socket");
  // A live listener, told without connecting to it (it would take a probe
  // for its peer): Linux lists bound Unix sockets in /proc/net/unix, a
  // listening one with flag __SO_ACCEPTCON (0x10000).
  std::ifstream in("/proc/net/unix");
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string num, refs, proto, flags, type, state, inode, name;
    if (!(f >> num >> refs >> proto >> flags >> type >> state >> inode >> name)) continue;
    if (name == path && (std::stoul(flags, nullptr, 16) & 0x10000))
      throw ChannelError("listen on " + what + ": another process listens on " + path);
  }
  ::unlink(path.c_str());
}

Listener::Listener(const Endpoint& ep) : io_(std::make_unique<Io>()), ep_(ep) {
  boost::system::error_code ec;
  if (ep.kind == Endpoint::kUnix) {
    claim_socket_path(ep.path, ep.str());
    io_->local.emplace(io_->ctx);
    io_->local->open(Local(), ec);
    if (!ec) io_->local->bind(Local::endpoint(ep.path), ec);
    if (!ec) io_->local->listen(1, ec);
  } else {
    Tcp::resolver r(io_->ctx);
    auto found = r.resolve(ep.host, std::to_string(ep.port), ec);
    if (!ec && found.empty()) ec = asio::error::host_not_found;
    if (!ec) {
      const Tcp::endpoint at = found.begin()->endpoint();
      io_->tcp.emplace(io_->ctx);
      io_->tcp->open(at.protocol(), ec);
      if (!ec) io_->tcp->set_option(Tcp::acceptor::reuse_address(true), ec);
      if (!ec) io_->tcp->bind(at, ec);
      if (!ec) io_->tcp->listen(1, ec);
      if (!ec) ep_.port = io_->tcp->local_endpoint().port();
    }
  }
  if (ec) throw ChannelError("listen on " + ep.str() + ": " + ec.message());
}

Listener::~Listener() {
  if (ep_.kind == Endpoint::kUnix && io_->local && io_->local->is_open()) ::unlink(ep_.path.c_str());
}

std::unique_ptr<Channel> Listener::accept(WallTimeout timeout, const std::string& peer) {
  auto cio = std::make_unique<Channel::Io>();
  bool done = false, timed_out = false;
  boost::system::error_code aec;
  auto on_accept = [&](const boost::system::error_code& ec) {
    aec = ec;
    done = true;
    io_->timer.cancel();
  };
  if (io_->local)
    io_->local->async_accept(cio->sock, on_accept);
  else
    io_->tcp->async_accept(cio->sock, on_accept);
  if (timeout != kNoTimeout) {
    io_->timer.expires_after(timeout);
    io_->timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec || done) return;
      timed_out = true;
      if (io_->local) io_->local->cancel(); else io_->tcp->cancel();
    });
  }
  io_->ctx.restart();
  io_->ctx.run();  // both handlers done
  if (timed_out) throw ChannelError("no program connected to " + ep_.str() + " within " +
                                    std::to_string(timeout.count()) + " ms of wall time");
  if (aec) throw ChannelError("accept on " + ep_.str() + ": " + aec.message());
  if (ep_.kind == Endpoint::kTcp) {
    boost::system::error_code ec;
    cio->sock.set_option(asio::detail::socket_option::boolean<IPPROTO_TCP, TCP_NODELAY>(true), ec);
  }
  return std::unique_ptr<Channel>(new Channel(std::move(cio), peer.empty() ? "the program on " + ep_.str() : peer));
}

}  // namespace ernic::bridge
