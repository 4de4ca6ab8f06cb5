// tb/roce: the real captures in tb/data/captures (see its README): decode
// every RoCE frame, check its ICRC and IPv4 checksum, re-encode it to the
// same bytes, compare decoded fields with tshark, reject non-RoCE frames.
#include <gtest/gtest.h>

#include <boost/crc.hpp>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "tb/roce/test_util.h"

using namespace roce;
using roce_test::read_pcap;

namespace {

struct CaptureFacts {
  const char* file;
  size_t frames;                       // all frames in the file
  size_t roce;                         // RoCE frames
  std::map<uint8_t, size_t> opcodes;   // opcode -> count
};

// From tb/data/captures/README.md.
const CaptureFacts kCaptures[] = {
    {"pingpong_rc.pcap", 31, 20, {{op::RC_SEND_ONLY, 10}, {op::RC_ACK, 10}}},
    {"rdma_write_bw.pcap", 60, 20,
     {{op::RC_WRITE_FIRST, 5}, {op::RC_WRITE_MIDDLE, 5}, {op::RC_WRITE_LAST, 5}, {op::RC_ACK, 5}}},
    {"rdma_read_bw.pcap", 60, 20,
     {{op::RC_READ_REQUEST, 5}, {op::RC_READ_RESP_FIRST, 5}, {op::RC_READ_RESP_MIDDLE, 5},
      {op::RC_READ_RESP_LAST, 5}}},
    {"rdma_send_bw.pcap", 50, 20,
     {{op::RC_SEND_FIRST, 5}, {op::RC_SEND_MIDDLE, 5}, {op::RC_SEND_LAST, 5}, {op::RC_ACK, 5}}},
    {"rdma_write_lat.pcap", 45, 20, {{op::RC_WRITE_ONLY, 10}, {op::RC_ACK, 10}}},
};

// gtest prints a parameter with this (instead of its bytes).
void PrintTo(const CaptureFacts& c, std::ostream* os) { *os << c.file; }

std::string capture_path(const char* file) { return std::string(ERNIC_TEST_DATA) + "/captures/" + file; }

class Capture : public ::testing::TestWithParam<CaptureFacts> {};

TEST_P(Capture, DecodeIcrcChecksumReencode) {
  const CaptureFacts& c = GetParam();
  std::string err;
  const auto frames = read_pcap(capture_path(c.file), &err);
  ASSERT_TRUE(err.empty()) << err;
  EXPECT_EQ(frames.size(), c.frames);

  size_t roce_frames = 0;
  std::map<uint8_t, size_t> opcodes;
  const EncodeOptions raw{false, false, false, false};
  for (size_t i = 0; i < frames.size(); ++i) {
    const Bytes& b = frames[i];
    SCOPED_TRACE(std::string(c.file) + " frame " + std::to_string(i + 1));
    if (!is_roce(b.data(), b.size())) {
      DecodeError e = DecodeError::None;
      EXPECT_FALSE(decode(b, &e).has_value());
      EXPECT_NE(e, DecodeError::None);
      continue;
    }
    ++roce_frames;
    DecodeError e = DecodeError::None;
    const auto f = decode(b, &e);
    ASSERT_TRUE(f.has_value()) << decode_error_name(e);
    EXPECT_EQ(e, DecodeError::None);
    ++opcodes[f->bth.opcode];

    // ICRC: recomputed == stored in the frame == decoded field.
    const uint32_t stored = stored_icrc(b.data(), b.size());
    EXPECT_EQ(f->icrc, stored);
    EXPECT_EQ(compute_icrc(b.data(), b.size() - kIcrcLen), stored);
    // The masked input run through a CRC-32 gives the same value.
    const Bytes masked = icrc_masked_input(b.data(), b.size() - kIcrcLen);
    EXPECT_EQ(masked.size(), 8 + b.size() - kIcrcLen - kEthHdrLen);
    boost::crc_32_type crc;
    crc.process_bytes(masked.data(), masked.size());
    EXPECT_EQ(crc.checksum(), stored);

    // IPv4 header checksum as captured.
    ASSERT_FALSE(f->ipv6);
    EXPECT_EQ(ipv4_checksum(b.data() + kEthHdrLen), f->ip4.checksum);
    EXPECT_EQ(f->pad.size(), f->bth.pad_cnt);

    // Re-encode: with every fill option off, and with all on (the captures
    // are consistent, so filling must give the same bytes).
    EXPECT_EQ(encode(*f, raw), b);
    EXPECT_EQ(encode(*f), b);
  }
  EXPECT_EQ(roce_frames, c.roce);
  EXPECT_EQ(opcodes, c.opcodes);
}

// Every decoded field against tshark's reading of the same capture.
TEST_P(Capture, FieldsAgreeWithTshark) {
  const CaptureFacts& c = GetParam();
  const char* fields[] = {"frame.number", "infiniband.bth.opcode", "infiniband.bth.se",
                          "infiniband.bth.m", "infiniband.bth.padcnt", "infiniband.bth.p_key",
                          "infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
                          "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.reth.va",
                          "infiniband.reth.r_key", "infiniband.reth.dmalen",
                          "infiniband.invariant.crc", "udp.srcport", "udp.length", "ip.checksum"};
  std::string cmd = std::string(TSHARK_PROGRAM) + " --disable-protocol rpcordma -r " +
                    roce_test::shell_quote(capture_path(c.file)) +
                    " -Y infiniband -T fields -E separator=, -E quote=d -E occurrence=f";
  for (const char* fl : fields) cmd += std::string(" -e ") + fl;
  int status = 0;
  const std::string out = roce_test::run(cmd + " 2>/dev/null", &status);
  ASSERT_EQ(status, 0) << cmd;
  const auto frames = read_pcap(capture_path(c.file));
  size_t rows = 0;
  for (const std::string& line : roce_test::split_lines(out)) {
    if (line.empty()) continue;
    const auto v = roce_test::split_csv(line);
    ASSERT_EQ(v.size(), std::size(fields)) << line;
    const size_t n = std::stoul(v[0]);
    ASSERT_GE(n, 1u);
    ASSERT_LE(n, frames.size());
    SCOPED_TRACE(std::string(c.file) + " frame " + v[0]);
    const auto f = decode(frames[n - 1]);
    ASSERT_TRUE(f.has_value());
    ++rows;
    auto hex = [](uint64_t x, int digits) {
      std::ostringstream s;
      s << "0x" << std::hex << std::setfill('0') << std::setw(digits) << x;
      return s.str();
    };
    EXPECT_EQ(v[1], std::to_string(f->bth.opcode));
    EXPECT_EQ(v[2], f->bth.se ? "1" : "0");
    EXPECT_EQ(v[3], f->bth.mig ? "1" : "0");
    EXPECT_EQ(v[4], std::to_string(f->bth.pad_cnt));
    EXPECT_EQ(v[5], std::to_string(f->bth.pkey));
    EXPECT_EQ(v[6], hex(f->bth.dest_qp, 6));
    EXPECT_EQ(v[7], f->bth.ack_req ? "1" : "0");
    EXPECT_EQ(v[8], std::to_string(f->bth.psn));
    EXPECT_EQ(v[9], f->aeth ? std::to_string(f->aeth->syndrome) : "");
    EXPECT_EQ(v[10], f->aeth ? std::to_string(f->aeth->msn) : "");
    EXPECT_EQ(v[11], f->reth ? hex(f->reth->va, 16) : "");
    EXPECT_EQ(v[12], f->reth ? hex(f->reth->rkey, 8) : "");
    EXPECT_EQ(v[13], f->reth ? std::to_string(f->reth->dma_len) : "");
    // tshark shows the ICRC as the four wire bytes read big-endian.
    EXPECT_EQ(v[14], hex(__builtin_bswap32(f->icrc), 8));
    EXPECT_EQ(v[15], std::to_string(f->udp.sport));
    EXPECT_EQ(v[16], std::to_string(f->udp.len));
    EXPECT_EQ(v[17], hex(f->ip4.checksum, 4));
  }
  EXPECT_EQ(rows, c.roce);
}

INSTANTIATE_TEST_SUITE_P(Roce, Capture, ::testing::ValuesIn(kCaptures),
                         [](const ::testing::TestParamInfo<CaptureFacts>& i) {
                           std::string n = i.param.file;
                           return n.substr(0, n.find('.'));
                         });

// compute_icrc's fast paths (PCLMULQDQ folding for 64 bytes and more, then
// slicing tables) against Boost.CRC over the masked input, for every length
// up to 600 and around frame sizes, IPv4, IPv6 and neither.
TEST(Icrc, MatchesBoostCrcAtEveryLength) {
  std::mt19937_64 rng(17);
  std::vector<size_t> lens;
  for (size_t n = 0; n <= 600; ++n) lens.push_back(n);
  for (size_t base : {1024, 2048, 4096, 4160, 9000})
    for (size_t d = 0; d < 80; ++d) lens.push_back(base + d);
  for (size_t n : lens)
    for (int kind = 0; kind < 3; ++kind) {
      Bytes b(n);
      for (auto& x : b) x = uint8_t(rng());
      if (n >= 14 && kind == 0) b[12] = 0x08, b[13] = 0x00;
      if (n >= 14 && kind == 1) b[12] = 0x86, b[13] = 0xDD;
      const Bytes masked = icrc_masked_input(b.data(), n);
      boost::crc_32_type crc;
      crc.process_bytes(masked.data(), masked.size());
      ASSERT_EQ(compute_icrc(b.data(), n), crc.checksum()) << "length " << n << " kind " << kind;
    }
}

}  // namespace
