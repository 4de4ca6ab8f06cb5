// tb/bridge: the Boost.Asio channel: framing, both transports, the wall
// timeout, a peer that closes, an oversized frame, two ends that send a lot
// at once (no deadlock on full socket buffers).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "model/bridge/channel.h"

using namespace ernic::bridge;
using namespace std::chrono_literals;

namespace {
std::string sock_path(const char* tag) {
  return "/tmp/ernic-test-" + std::to_string(::getpid()) + "-" + tag + ".sock";
}
// A bare Unix-socket client, to send what the Channel would refuse to.
int raw_connect(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? fd : -1;
}
std::vector<uint8_t> frame(size_t n, uint8_t seed) {
  std::vector<uint8_t> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = uint8_t(seed + i * 7);
  return f;
}
}  // namespace

TEST(BridgeEndpoint, ParsesAndRefuses) {
  EXPECT_EQ(Endpoint::parse("unix:/tmp/a.sock").path, "/tmp/a.sock");
  EXPECT_EQ(Endpoint::parse("/tmp/b.sock").kind, Endpoint::kUnix);
  const Endpoint t = Endpoint::parse("tcp:127.0.0.1:4791");
  EXPECT_EQ(t.kind, Endpoint::kTcp);
  EXPECT_EQ(t.host, "127.0.0.1");
  EXPECT_EQ(t.port, 4791);
  EXPECT_EQ(t.str(), "tcp:127.0.0.1:4791");
  EXPECT_THROW(Endpoint::parse("tcp:localhost"), std::invalid_argument);
  EXPECT_THROW(Endpoint::parse("tcp:localhost:65536"), std::invalid_argument);
  EXPECT_THROW(Endpoint::parse("tcp:localhost:x1"), std::invalid_argument);
  EXPECT_THROW(Endpoint::parse("unix:"), std::invalid_argument);
  EXPECT_THROW(Endpoint::parse("unix:/" + std::string(120, 'a')), std::invalid_argument);
}

class BridgeChannel : public testing::TestWithParam<const char*> {
 protected:
  Endpoint ep() const {
    return std::string(GetParam()) == "unix" ? Endpoint::parse("unix:" + sock_path("rt"))
                                             : Endpoint::parse("tcp:127.0.0.1:0");
  }
};

TEST_P(BridgeChannel, FramesArriveWholeAndInOrder) {
  Listener l(ep());
  const Endpoint at = l.endpoint();
  std::thread peer([at] {
    auto c = Channel::connect(at, 5000ms);
    for (size_t n : {0u, 1u, 64u, 4096u, 64u + 0xFFFFu}) c->send(frame(n, uint8_t(n)));
    const auto back = c->recv(5000ms);
    EXPECT_EQ(back, frame(100, 9));
  });
  auto ch = l.accept(5000ms);
  for (size_t n : {0u, 1u, 64u, 4096u, 64u + 0xFFFFu}) EXPECT_EQ(ch->recv(5000ms), frame(n, uint8_t(n))) << n;
  ch->send(frame(100, 9));
  peer.join();
  EXPECT_EQ(ch->frames_received(), 5u);
  EXPECT_EQ(ch->frames_sent(), 1u);
}

TEST_P(BridgeChannel, BothEndsSendingALotDoNotDeadlock) {
  Listener l(ep());
  const Endpoint at = l.endpoint();
  constexpr int kFrames = 300;  // 300 x 60 KiB = 18 MB each way, far beyond the socket buffers
  std::thread peer([at] {
    auto c = Channel::connect(at, 5000ms);
    for (int i = 0; i < kFrames; ++i) c->send(frame(60000, uint8_t(i)));
    for (int i = 0; i < kFrames; ++i) ASSERT_EQ(c->recv(10000ms), frame(60000, uint8_t(i + 1)));
  });
  auto ch = l.accept(5000ms);
  for (int i = 0; i < kFrames; ++i) ch->send(frame(60000, uint8_t(i + 1)));
  for (int i = 0; i < kFrames; ++i) ASSERT_EQ(ch->recv(10000ms), frame(60000, uint8_t(i)));
  peer.join();
}

TEST_P(BridgeChannel, SilenceTimesOutAndACloseIsNamed) {
  Listener l(ep());
  const Endpoint at = l.endpoint();
  std::thread peer([at] {
    auto c = Channel::connect(at, 5000ms);
    c->send(frame(10, 1));
    std::this_thread::sleep_for(300ms);
    c->close();
  });
  auto ch = l.accept(5000ms);
  EXPECT_EQ(ch->recv(5000ms), frame(10, 1));
  try {
    ch->recv(50ms);
    FAIL() << "no timeout";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("within 50 ms of wall time"), std::string::npos) << e.what();
  }
  try {
    ch->recv(5000ms);
    FAIL() << "no error on close";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("the peer closed the connection"), std::string::npos) << e.what();
  }
  peer.join();
  EXPECT_THROW(ch->send(frame(4, 0)), ChannelError);
}

INSTANTIATE_TEST_SUITE_P(Transports, BridgeChannel, testing::Values("unix", "tcp"));

TEST(BridgeChannelRaw, AnOversizedFrameIsRefused) {
  const std::string path = sock_path("big");
  Listener l(Endpoint::parse("unix:" + path));
  std::thread peer([path] {
    const int fd = raw_connect(path);
    ASSERT_GE(fd, 0);
    const uint8_t len[4] = {0xFF, 0xFF, 0xFF, 0x7F};
    ASSERT_EQ(::write(fd, len, 4), 4);
    std::this_thread::sleep_for(200ms);
    ::close(fd);
  });
  auto ch = l.accept(5000ms);
  try {
    ch->recv(5000ms);
    FAIL() << "accepted";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("frame of 2147483647 bytes announced"), std::string::npos) << e.what();
  }
  peer.join();
}

TEST(BridgeChannelRaw, NobodyListeningIsAClearError) {
  try {
    Channel::connect(Endpoint::parse("unix:" + sock_path("none")), 100ms);
    FAIL();
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("connect to unix:/tmp/ernic-test-"), std::string::npos) << e.what();
  }
}

TEST(BridgeChannelRaw, AFrameCutShortIsNamed) {
  const std::string path = sock_path("cut");
  Listener l(Endpoint::parse("unix:" + path));
  std::thread peer([path] {
    const int fd = raw_connect(path);
    ASSERT_GE(fd, 0);
    const uint8_t part[14] = {100, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // announces 100 bytes, sends 10
    ASSERT_EQ(::write(fd, part, sizeof part), 14);
    ::close(fd);
  });
  auto ch = l.accept(5000ms);
  try {
    ch->recv(5000ms);
    FAIL() << "accepted";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("in the middle of a frame (14 bytes of it received)"), std::string::npos)
        << e.what();
  }
  peer.join();
}
