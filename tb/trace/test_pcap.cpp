// PcapWriter / PcapReader: nanosecond timestamps, exact bytes, files that
// libpcap and tshark read.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "model/trace/pcap_writer.h"
#include "tb/trace/test_util.h"

using ernic::PcapFrame;
using ernic::PcapReader;
using ernic::PcapWriter;
using trace_test::have_program;
using trace_test::run;
using trace_test::slurp;
using trace_test::test_dir;

namespace {

// Ethernet + IPv4 + UDP (dst port 4791) with `payload` bytes of a pattern;
// checksums are not checked by the tests.
std::vector<uint8_t> udp_frame(size_t payload, uint8_t seed) {
  std::vector<uint8_t> f = {
      0x02, 0x00, 0x00, 0x00, 0x00, 0x02,  // dst MAC
      0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  // src MAC
      0x08, 0x00,                          // IPv4
      0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
      10,   0,    0,    1,    10,   0,    0,    2,     // addresses
      0xC0, 0x00, 0x12, 0xB7, 0x00, 0x00, 0x00, 0x00,  // UDP 49152 -> 4791
  };
  const size_t ip_len = 20 + 8 + payload;
  f[16] = uint8_t(ip_len >> 8);
  f[17] = uint8_t(ip_len);
  f[38] = uint8_t((8 + payload) >> 8);
  f[39] = uint8_t(8 + payload);
  for (size_t i = 0; i < payload; ++i) f.push_back(uint8_t(seed + i * 7));
  return f;
}

struct Sample {
  uint64_t time_ps;
  uint64_t time_ns;
  std::vector<uint8_t> frame;
};

std::vector<Sample> samples() {
  return {
      {0, 0, udp_frame(18, 1)},                                  // minimum size
      {1'234'567'999, 1'234'567, udp_frame(100, 2)},             // ps truncated to ns
      {999'999'999'999, 999'999'999, udp_frame(1024, 3)},        // just below 1 s
      {3'000'000'123'456, 3'000'000'123, udp_frame(4096, 4)},    // > 1 s
  };
}

}  // namespace

TEST(Pcap, RoundTripExactBytesAndNanoseconds) {
  const auto dir = test_dir();
  const auto path = (dir / "rt.pcap").string();
  const auto in = samples();
  {
    PcapWriter w(path);
    for (const auto& s : in) w.write(s.frame, s.time_ps);
    EXPECT_EQ(w.frames_written(), in.size());
  }
  PcapReader r(path);
  EXPECT_EQ(r.linktype(), 1);  // DLT_EN10MB
  for (const auto& s : in) {
    auto f = r.next();
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->time_ns, s.time_ns);
    EXPECT_EQ(f->orig_len, s.frame.size());
    EXPECT_EQ(f->data, s.frame);
  }
  EXPECT_FALSE(r.next().has_value());
}

TEST(Pcap, FileHeaderIsNanosecondEthernet) {
  const auto dir = test_dir();
  const auto path = dir / "hdr.pcap";
  {
    PcapWriter w(path.string());
    w.write(udp_frame(10, 0), 5'000);
  }
  const std::string bytes = slurp(path);
  ASSERT_GE(bytes.size(), 24u + 16u);
  uint32_t magic, snaplen, linktype, sec, nsec, caplen, len;
  std::memcpy(&magic, bytes.data(), 4);
  std::memcpy(&snaplen, bytes.data() + 16, 4);
  std::memcpy(&linktype, bytes.data() + 20, 4);
  std::memcpy(&sec, bytes.data() + 24, 4);
  std::memcpy(&nsec, bytes.data() + 28, 4);
  std::memcpy(&caplen, bytes.data() + 32, 4);
  std::memcpy(&len, bytes.data() + 36, 4);
  EXPECT_EQ(magic, 0xA1B23C4Du);  // nanosecond pcap, host byte order
  EXPECT_EQ(snaplen, 65535u);
  EXPECT_EQ(linktype, 1u);
  EXPECT_EQ(sec, 0u);
  EXPECT_EQ(nsec, 5u);
  EXPECT_EQ(caplen, udp_frame(10, 0).size());  // no FCS added
  EXPECT_EQ(len, caplen);
}

TEST(Pcap, IdenticalInputsGiveIdenticalFiles) {
  const auto dir = test_dir();
  for (const char* name : {"a.pcap", "b.pcap"}) {
    PcapWriter w((dir / name).string());
    for (const auto& s : samples()) w.write(s.frame, s.time_ps);
  }
  EXPECT_EQ(slurp(dir / "a.pcap"), slurp(dir / "b.pcap"));
}

TEST(Pcap, LongFramesAreTruncatedToSnapLength) {
  const auto dir = test_dir();
  const auto path = (dir / "long.pcap").string();
  std::vector<uint8_t> big(70000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i);
  {
    PcapWriter w(path);
    w.write(big, 1'000);
  }
  const auto frames = PcapReader::read_all(path);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].orig_len, 70000u);
  ASSERT_EQ(frames[0].data.size(), 65535u);
  EXPECT_TRUE(std::equal(frames[0].data.begin(), frames[0].data.end(), big.begin()));
}

TEST(Pcap, ErrorsNameThePath) {
  const std::string bad = "/nonexistent-dir-ernic/x.pcap";
  try {
    PcapWriter w(bad);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  try {
    PcapReader r(bad);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

// write_ordered of the frame udp_frame(name, 0) (its payload size names it).
void put(PcapWriter& w, size_t name, uint64_t t_ps, uint32_t source) {
  const auto f = udp_frame(name, 0);
  w.write_ordered(f.data(), f.size(), t_ps, source);
}

// The file holds the frames named in `want`, in order, at those ns.
void expect_frames(const std::string& path, const std::vector<std::pair<size_t, uint64_t>>& want) {
  const auto f = PcapReader::read_all(path);
  ASSERT_EQ(f.size(), want.size());
  for (size_t k = 0; k < f.size(); ++k) {
    EXPECT_EQ(f[k].data, udp_frame(want[k].first, 0)) << "frame " << k;
    EXPECT_EQ(f[k].time_ns, want[k].second) << "frame " << k;
  }
}

// The link's two-direction capture: frames of one instant are written in
// source order whatever the order they came in; times stay in order, and
// the held frames reach the file at the next instant, flush() and close().
TEST(Pcap, WriteOrderedRanksFramesOfOneInstantBySource) {
  const auto dir = test_dir();
  const auto path = (dir / "o.pcap").string();
  PcapWriter w(path);
  // Payload size names the frame: a = 11, b = 12, ...
  put(w, 11, 5'000, 1);
  put(w, 12, 5'000, 0);
  put(w, 13, 5'000, 1);
  put(w, 14, 7'000, 1);
  w.flush();  // the 7 ns frame is written too
  EXPECT_EQ(PcapReader::read_all(path).size(), 4u);
  put(w, 15, 7'000, 0);
  put(w, 16, 9'000, 1);
  put(w, 17, 9'000, 0);
  w.close();
  expect_frames(path, {{12, 5}, {11, 5}, {13, 5}, {14, 7}, {15, 7}, {17, 9}, {16, 9}});
}

// Lines of several rates: a frame may come up to the order lag (the
// longest preamble less the shortest) after a later-stamped one; it still
// goes first, and what no later frame can precede reaches the file at once.
// Frames of one ns go by source.
TEST(Pcap, WriteOrderedTakesFramesUpToTheLagLate) {
  const auto dir = test_dir();
  const auto path = (dir / "lag.pcap").string();
  PcapWriter w(path);
  w.set_order_lag(5'760);  // 10 Gb/s and 100 Gb/s lines: 6,400 - 640 ps
  put(w, 11, 14'000, 1);  // a 10 Gb/s port, written first
  put(w, 12, 13'000, 0);  // a 100 Gb/s one, 1 ns earlier
  put(w, 13, 19'000, 0);
  EXPECT_EQ(w.frames_written(), 0u) << "19 ns - 5.76 ns: one may still come in the 13th ns";
  put(w, 14, 19'761, 2);
  EXPECT_EQ(w.frames_written(), 1u) << "none can come before 14.001 ns now: the 13 ns frame is sure";
  put(w, 18, 20'760, 0);
  EXPECT_EQ(w.frames_written(), 2u) << "none can come in the 14th ns now";
  w.flush();
  EXPECT_EQ(w.frames_written(), 5u);
  // One ns, two sources, the lower one 400 ps later: by source, as the
  // file's ns and a split run's merge have them.
  put(w, 16, 20'300, 1);
  put(w, 17, 20'700, 0);
  put(w, 15, 30'000, 1);
  w.close();
  expect_frames(path, {{12, 13}, {11, 14}, {13, 19}, {14, 19}, {18, 20}, {17, 20}, {16, 20}, {15, 30}});
}

TEST(Pcap, WriteAfterCloseThrows) {
  const auto dir = test_dir();
  PcapWriter w((dir / "c.pcap").string());
  w.write(udp_frame(10, 0), 0);
  w.close();
  w.close();  // idempotent
  EXPECT_THROW(w.write(udp_frame(10, 0), 1000), std::runtime_error);
  EXPECT_EQ(PcapReader::read_all((dir / "c.pcap").string()).size(), 1u);
}

TEST(Pcap, TsharkReadsTimestampsAndLengths) {
  ASSERT_TRUE(have_program(TSHARK_PROGRAM)) << "tshark not found (tools/bootstrap installs it)";
  const auto dir = test_dir();
  const auto path = (dir / "ts.pcap").string();
  {
    PcapWriter w(path);
    for (const auto& s : samples()) w.write(s.frame, s.time_ps);
  }
  int status = 0;
  const std::string out =
      run(std::string(TSHARK_PROGRAM) + " -r '" + path +
              "' -T fields -e frame.time_epoch -e frame.len -e udp.dstport 2>/dev/null",
          &status);
  ASSERT_EQ(status, 0) << out;
  std::string expect;
  for (const auto& s : samples()) {
    char line[96];
    std::snprintf(line, sizeof line, "%llu.%09llu\t%zu\t4791\n",
                  (unsigned long long)(s.time_ns / 1'000'000'000ull),
                  (unsigned long long)(s.time_ns % 1'000'000'000ull), s.frame.size());
    expect += line;
  }
  EXPECT_EQ(out, expect);
}

TEST(Pcap, ReaderReadsMicrosecondCaptures) {
  const std::filesystem::path cap =
      std::filesystem::path(ERNIC_TEST_DATA) / "captures" / "pingpong_rc.pcap";
  ASSERT_TRUE(std::filesystem::exists(cap)) << cap << " missing";
  // The oracle: the file's own record headers, read here byte by byte
  // (magic 0xa1b2c3d4: microsecond stamps; ts_sec, ts_usec, incl_len).
  std::ifstream in(cap, std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u32 = [&](size_t at) {
    return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
  };
  ASSERT_GE(b.size(), 24u);
  ASSERT_EQ(u32(0), 0xa1b2c3d4u) << "a microsecond-stamped capture";
  PcapReader r(cap.string());
  size_t at = 24, n = 0;
  while (at + 16 <= b.size()) {
    const uint64_t want_ns = uint64_t(u32(at)) * 1000000000ull + uint64_t(u32(at + 4)) * 1000ull;
    const uint32_t len = u32(at + 8);
    auto f = r.next();
    ASSERT_TRUE(f.has_value()) << "record " << n;
    EXPECT_EQ(f->time_ns, want_ns) << "record " << n << ": ts_usec " << u32(at + 4) << " -> ns";
    EXPECT_EQ(f->data.size(), len) << "record " << n;
    EXPECT_TRUE(std::equal(f->data.begin(), f->data.end(), b.begin() + long(at + 16))) << "record " << n;
    at += 16 + len;
    ++n;
  }
  EXPECT_FALSE(r.next().has_value());
  EXPECT_EQ(n, 31u);  // pingpong_rc.pcap: 31 frames (tshark -r ... | wc -l)
}
