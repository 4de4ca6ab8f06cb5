// model/bridge: SimBricks' shared-memory queues (shm_channel.h).
#include "model/bridge/shm_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "model/bridge/simbricks_base.h"

namespace ernic::bridge {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kYieldFor = std::chrono::microseconds(200);  // wait_owner: yielding before it sleeps

[[noreturn]] void fail(const std::string& what) { throw ChannelError(what); }
std::string sys_error(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

sockaddr_un unix_addr(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path)) fail("Unix socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

uint8_t load_own(const uint8_t* e) {
  return __atomic_load_n(e + kOwnTypeOffset, __ATOMIC_ACQUIRE);
}
void store_own(uint8_t* e, uint8_t v) { __atomic_store_n(e + kOwnTypeOffset, v, __ATOMIC_RELEASE); }

// Waits until fd is readable (true) or the deadline (false).
bool poll_in(int fd, Clock::time_point until, bool forever) {
  for (;;) {
    int ms = -1;
    if (!forever) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (left <= 0) return false;
      ms = int(std::min<int64_t>(left, 1000000));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) fail(sys_error("poll"));
  }
}

}  // namespace

ShmChannel::~ShmChannel() {
  if (base_) ::munmap(base_, size_);
  if (pool_fd_ >= 0) ::close(pool_fd_);
  if (sock_ >= 0) ::close(sock_);
}

void ShmChannel::map_pool(int fd, uint64_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail(sys_error("mmap of the shared-memory pool"));
  base_ = static_cast<uint8_t*>(p);
  size_ = size;
}

std::unique_ptr<ShmChannel> ShmChannel::listen(const std::string& sock_path, uint64_t nentries, uint64_t elen,
                                               WallTimeout timeout, const std::string& peer) {
  if (elen < kHeaderBytes || nentries == 0) fail("shared-memory queues need entries of at least 64 bytes");
  std::unique_ptr<ShmChannel> c(new ShmChannel());
  c->listener_ = true;
  c->peer_ = peer.empty() ? "the peer on " + sock_path : peer;
  const uint64_t qlen = nentries * elen;
  claim_socket_path(sock_path, "shm:" + sock_path);
  // The pool: anonymous memory sealed at its size (no file to clobber or
  // leave behind; a peer cannot shrink it under us).
  c->pool_fd_ = ::memfd_create("ernic-shm-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (c->pool_fd_ < 0) fail(sys_error("memfd_create of the shared-memory pool"));
  if (::ftruncate(c->pool_fd_, off_t(2 * qlen)) != 0) fail(sys_error("ftruncate of the shared-memory pool"));
  if (::fcntl(c->pool_fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    fail(sys_error("sealing the shared-memory pool"));
  c->map_pool(c->pool_fd_, 2 * qlen);
  std::memset(c->base_, 0, 2 * qlen);
  // As SimBricks' listener: its input (connecter to listener) first.
  c->c2l_off_ = 0, c->l2c_off_ = qlen;
  c->in_ = c->base_ + c->c2l_off_, c->in_elen_ = elen, c->in_n_ = nentries;
  c->out_ = c->base_ + c->l2c_off_, c->out_elen_ = elen, c->out_n_ = nentries;

  const int ls = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ls < 0) fail(sys_error("socket"));
  const sockaddr_un a = unix_addr(sock_path);
  if (::bind(ls, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(ls, 1) != 0) {
    const std::string e = sys_error(("bind/listen " + sock_path).c_str());
    ::close(ls);
    fail(e);
  }
  const bool forever = timeout == kNoTimeout;
  const bool came = poll_in(ls, Clock::now() + timeout, forever);
  if (came) c->sock_ = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(ls);
  ::unlink(sock_path.c_str());
  if (!came) fail("no peer connected to " + sock_path + " within " + std::to_string(timeout.count()) + " ms");
  if (c->sock_ < 0) fail(sys_error("accept"));
  return c;
}

std::unique_ptr<ShmChannel> ShmChannel::connect(const std::string& sock_path, WallTimeout timeout,
                                                const std::string& peer) {
  std::unique_ptr<ShmChannel> c(new ShmChannel());
  c->peer_ = peer.empty() ? "the peer on " + sock_path : peer;
  const sockaddr_un a = unix_addr(sock_path);
  const auto until = Clock::now() + timeout;
  for (;;) {
    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) fail(sys_error("socket"));
    if (::connect(s, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {
      c->sock_ = s;
      return c;
    }
    const std::string e = sys_error(("connect " + sock_path).c_str());
    ::close(s);
    if (timeout == kNoTimeout || Clock::now() >= until) fail(e);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The listener's intro carries its queues and, beside it, the pool's
// descriptor; the connecter's goes as it is.
void ShmChannel::send_intro(const std::vector<uint8_t>& intro, WallTimeout) {
  std::vector<uint8_t> b = intro;
  msghdr msg{};
  iovec iov{b.data(), b.size()};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  if (listener_) {
    if (b.size() < kListenerIntroBytes) fail("listener intro too short");
    put_le(b, 16, l2c_off_, 8);
    put_le(b, 24, out_elen_, 8);
    put_le(b, 32, out_n_, 8);
    put_le(b, 40, c2l_off_, 8);
    put_le(b, 48, in_elen_, 8);
    put_le(b, 56, in_n_, 8);
    std::memset(ctl, 0, sizeof ctl);
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &pool_fd_, sizeof(int));
  }
  const ssize_t n = ::sendmsg(sock_, &msg, MSG_NOSIGNAL);
  if (n != ssize_t(b.size())) fail("intro to " + peer_ + ": " + (n < 0 ? sys_error("sendmsg") : "sent short"));
}

std::vector<uint8_t> ShmChannel::recv_intro(WallTimeout timeout) {
  if (!poll_in(sock_, Clock::now() + timeout, timeout == kNoTimeout))
    fail("no intro from " + peer_ + " within " + std::to_string(timeout.count()) + " ms");
  std::vector<uint8_t> b(2048);
  msghdr msg{};
  iovec iov{b.data(), b.size()};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  if (!listener_) {
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
  }
  const ssize_t n = ::recvmsg(sock_, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) fail(sys_error("recvmsg"));
  if (n == 0) fail(peer_ + " closed the connection before its intro");
  b.resize(size_t(n));
  if (!listener_) {
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
      fail("the intro from " + peer_ + " carries no shared-memory pool (a stream peer, not SimBricks' queues?)");
    std::memcpy(&pool_fd_, CMSG_DATA(cm), sizeof(int));
    if (b.size() < kListenerIntroBytes) fail("intro from " + peer_ + " too short");
    struct stat st {};
    if (::fstat(pool_fd_, &st) != 0) fail(sys_error("fstat of the shared-memory pool"));
    map_pool(pool_fd_, uint64_t(st.st_size));
    const uint64_t l2c_off = get_le(b.data(), 16, 8), l2c_elen = get_le(b.data(), 24, 8),
                   l2c_n = get_le(b.data(), 32, 8), c2l_off = get_le(b.data(), 40, 8),
                   c2l_elen = get_le(b.data(), 48, 8), c2l_n = get_le(b.data(), 56, 8);
    auto fits = [&](uint64_t off, uint64_t elen, uint64_t n) {
      return elen >= kHeaderBytes && n > 0 && n <= size_ / elen && off <= size_ && size_ - off >= n * elen;
    };
    if (!fits(l2c_off, l2c_elen, l2c_n) || !fits(c2l_off, c2l_elen, c2l_n))
      fail("the queues " + peer_ + " announces do not fit its " + std::to_string(size_) + "-byte pool");
    // Queues sharing bytes: this end would read its own messages as the peer's.
    if (l2c_off < c2l_off + c2l_n * c2l_elen && c2l_off < l2c_off + l2c_n * l2c_elen)
      fail("the queues " + peer_ + " announces overlap in its pool (l2c at " + std::to_string(l2c_off) + ", c2l at " +
           std::to_string(c2l_off) + ")");
    in_ = base_ + l2c_off, in_elen_ = l2c_elen, in_n_ = l2c_n;
    out_ = base_ + c2l_off, out_elen_ = c2l_elen, out_n_ = c2l_n;
  }
  return b;
}

void ShmChannel::check_peer_alive(const char* what) {
  pollfd p{sock_, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0) {
    char c;
    const ssize_t n = ::recv(sock_, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
      fail(std::string(what) + ": " + peer_ + " closed the connection (its Unix socket)");
  }
}

// Until the entry's owner is the consumer (want_consumer) or the producer.
void ShmChannel::wait_owner(uint8_t* e, bool want_consumer, WallTimeout timeout, const char* what) {
  auto ready = [&] { return ((load_own(e) & kOwnMask) != 0) == want_consumer; };
  for (int i = 0; i < 200; ++i)
    if (ready()) return;
  const auto start = Clock::now();
  // A peer that answers at once (a split run's other process: every step
  // and sync is a round trip) is met by yielding, not sleeping: a sleep
  // costs some 60 us on Linux however short it is asked to be.
  while (Clock::now() - start < kYieldFor) {
    if (ready()) return;
    std::this_thread::yield();
  }
  auto last_check = start;
  std::chrono::microseconds nap(1);
  while (!ready()) {
    const auto now = Clock::now();
    if (now - last_check >= std::chrono::milliseconds(1)) {
      check_peer_alive(what);
      last_check = now;
    }
    if (timeout != kNoTimeout && now - start >= timeout)
      fail(std::string(what) + ": no answer from " + peer_ + " within " + std::to_string(timeout.count()) +
           " ms of wall time");
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

void ShmChannel::send(const std::vector<uint8_t>& msg, WallTimeout timeout) {
  if (msg.size() < kHeaderBytes) fail("a SimBricks message has at least its 64-byte header");
  if (msg.size() > out_elen_)
    fail("a message of " + std::to_string(msg.size()) + " bytes does not fit " + peer_ + "'s queue entries of " +
         std::to_string(out_elen_) + " bytes");
  uint8_t* e = entry(out_, out_pos_, out_elen_);
  wait_owner(e, /*want_consumer=*/false, timeout, "send");
  std::memcpy(e, msg.data(), kOwnTypeOffset);
  std::memcpy(e + kHeaderBytes, msg.data() + kHeaderBytes, msg.size() - kHeaderBytes);
  store_own(e, uint8_t((msg[kOwnTypeOffset] & kTypeMask) | kOwnMask));
  out_pos_ = (out_pos_ + 1) % out_n_;
}

bool ShmChannel::pending() const {
  return (load_own(entry(in_, in_pos_, in_elen_)) & kOwnMask) != 0;
}

std::vector<uint8_t> ShmChannel::recv(WallTimeout timeout) {
  uint8_t* e = entry(in_, in_pos_, in_elen_);
  wait_owner(e, /*want_consumer=*/true, timeout, "receive");
  const uint8_t type = load_own(e) & kTypeMask;
  // The message's length: the header, and for a PACKET its len bytes (the
  // only upper-layer message of the Ethernet protocol); an entry's worth
  // at most.
  size_t n = kHeaderBytes;
  if (type >= kTypeUpperStart) n += size_t(get_le(e, 0, 2));
  n = std::min<size_t>(n, in_elen_);
  std::vector<uint8_t> m(e, e + n);
  m[kOwnTypeOffset] = type;
  store_own(e, type);  // back to the producer
  in_pos_ = (in_pos_ + 1) % in_n_;
  return m;
}

}  // namespace ernic::bridge
