// tb/fidelity: `ernic-sim pcap replay --requester-side` on the five real
// captures: ERNIC posts the capture's requester messages, the real
// responder's frames answer its requests, and ERNIC's requests must equal
// the real requester's field for field (opcode, PSN, AckReq, RETH, ImmDt,
// payload bytes), the READ data land in its buffers and every message
// complete. Then planted changes to a capture (a request flag ERNIC does
// not set, a NAK in place of an ACK) must show as exactly the differences
// they cause, and fail the run.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "tb/fidelity/replay_run.h"

namespace {

using namespace replay_run;

struct Case {
  const char* capture;
  size_t requests;  // the real requester's packets (the capture's, by tshark and pcap decode)
  size_t answers;   // the real responder's frames to it
  size_t messages;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.capture; }

class ReplayRequester : public ::testing::TestWithParam<Case> {};

TEST_P(ReplayRequester, SameRequestsFieldForField) {
  const Case c = GetParam();
  for (const char* pace : {"", "--fast"}) {
    const Outcome r = replay(c.capture, std::string("--requester-side ") + pace);
    EXPECT_EQ(r.code, 0) << r.text();
    EXPECT_TRUE(r.with("diff").empty()) << r.text();
    EXPECT_EQ(r.with("match: ").size(), c.requests) << r.text();
    const auto sum = r.with("summary: ");
    ASSERT_EQ(sum.size(), 1u) << r.text();
    const std::string want =
        std::to_string(c.requests) + " capture requests, " + std::to_string(c.requests) + " ERNIC requests, " +
        std::to_string(c.requests) + " matched field for field, " + std::to_string(c.answers) + " of " +
        std::to_string(c.answers) + " answers injected, " + std::to_string(c.messages) + " of " +
        std::to_string(c.messages) + " messages completed, 0 difference(s), 0 unexplained, 0 expected not seen: identical";
    EXPECT_EQ(sum[0], want) << pace;
  }
}

// rdma_read_bw: 5 READs of 3000 bytes at PMTU 1024, each answered by
// FIRST / MIDDLE / LAST responses; write_bw and send_bw: 5 messages of 3
// packets, one ACK each; write_lat and pingpong: 5 one-packet messages.
INSTANTIATE_TEST_SUITE_P(Captures, ReplayRequester,
                         ::testing::Values(Case{"pingpong_rc", 5, 5, 5}, Case{"rdma_read_bw", 5, 15, 5},
                                           Case{"rdma_send_bw", 15, 5, 5}, Case{"rdma_write_bw", 15, 5, 5},
                                           Case{"rdma_write_lat", 5, 5, 5}),
                         [](const auto& i) { return std::string(i.param.capture); });

// The mapping: PSNs across the 2^24 wrap, another ERNIC QPN, the RTL datapath.
TEST(ReplayRequesterCheck, MappingChangesNothing) {
  const Outcome r = replay("rdma_read_bw", "--requester-side --psn-delta 16777000 --node-qpn 5 --datapath rtl");
  EXPECT_EQ(r.code, 0) << r.text();
  EXPECT_TRUE(r.with("diff").empty()) << r.text();
  EXPECT_EQ(r.with("match: ").size(), 5u) << r.text();
}

// A copy of a capture with one byte of one frame changed (frame numbers from
// 1; offset from the Ethernet header: the BTH starts at 42, its AckReq bit
// is bit 7 of byte 42 + 8, an AETH's syndrome byte 42 + 12).
std::string mutated(const std::string& capture, uint64_t frame, size_t offset, uint8_t and_mask, uint8_t or_mask) {
  std::ifstream in(kData + capture + ".pcap", std::ios::binary);
  std::vector<uint8_t> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t off = 24;  // the pcap file header, then records: 16 bytes and the frame
  for (uint64_t n = 1; off + 16 <= d.size(); ++n) {
    const uint32_t incl = uint32_t(d[off + 8]) | uint32_t(d[off + 9]) << 8 | uint32_t(d[off + 10]) << 16 |
                          uint32_t(d[off + 11]) << 24;
    if (n == frame && offset < incl) d[off + 16 + offset] = uint8_t((d[off + 16 + offset] & and_mask) | or_mask);
    off += 16 + incl;
  }
  const std::string out = testing::TempDir() + capture + "_f" + std::to_string(frame) + ".pcap";
  std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(d.data()), std::streamsize(d.size()));
  return out;
}

// The real requester asking for an ACK on a FIRST packet (ERNIC asks on a
// message's last packet only): that one field of that one frame differs.
TEST(ReplayRequesterCheck, PlantedFlagIsTheOnlyDifference) {
  const Outcome r = replay_file(mutated("rdma_write_bw", 22, 42 + 8, 0xFF, 0x80), "--requester-side");
  EXPECT_EQ(r.code, 1) << r.text();
  EXPECT_EQ(r.with("diff: "),
            std::vector<std::string>{"frame 22: RC_WRITE_FIRST psn=5454383: AckReq 1 in the capture, 0 from ERNIC"})
      << r.text();
  EXPECT_EQ(r.with("match: ").size(), 14u) << r.text();
  const Outcome ok = replay_file(mutated("rdma_write_bw", 22, 42 + 8, 0xFF, 0x80), "--requester-side --report-only");
  EXPECT_EQ(ok.code, 0) << ok.text();
}

// The first message's ACK turned into a NAK (PSN sequence error, syndrome
// 0x60, PSN 5454385: the responder expects the WRITE's last packet again).
// ERNIC goes back, and as the 3.1 IP does, from the start of the WQE
// holding the NAKed PSN (assumption A-ERNIC-14; IBTA would resend from
// 5454385), so the whole first WRITE goes out a second time, which the real
// requester never had to send; the rest still matches, and every message
// completes (the next ACK covers the resent one). Paced by the capture:
// back to back, that next ACK would arrive before the go-back begins.
TEST(ReplayRequesterCheck, PlantedNakMakesErnicGoBack) {
  const Outcome r = replay_file(mutated("rdma_write_bw", 25, 42 + 12, 0x00, 0x60), "--requester-side");
  EXPECT_EQ(r.code, 1) << r.text();
  const std::vector<std::string> want = {
      "ERNIC RC_WRITE_FIRST psn=5454383 (sent 1 time(s) before): not in the capture",
      "ERNIC RC_WRITE_MIDDLE psn=5454384 (sent 1 time(s) before): not in the capture",
      "ERNIC RC_WRITE_LAST psn=5454385 (sent 1 time(s) before): not in the capture"};
  EXPECT_EQ(r.with("diff: "), want) << r.text();
  EXPECT_EQ(r.with("match: ").size(), 15u) << r.text();
  EXPECT_NE(r.text().find("5 of 5 messages completed"), std::string::npos) << r.text();
}

// A request frame that does not decode (its IPv4 total length made 0xFF..:
// frame 23, the first WRITE's MIDDLE) is never silently left out: the
// responder side lists it as its first difference and fails; the requester
// side cannot rebuild that WRITE and refuses the replay naming the gap.
TEST(ReplayRequesterCheck, UndecodableFrameIsNamed) {
  const std::string bad = mutated("rdma_write_bw", 23, 16, 0x00, 0xFF);
  const Outcome resp = replay_file(bad, "");
  EXPECT_EQ(resp.code, 1) << resp.text();
  const auto d = resp.with("diff: ");
  ASSERT_FALSE(d.empty()) << resp.text();
  EXPECT_EQ(d[0], "frame 23: a RoCE frame that does not decode (IPv4 total length 65324 (frame holds 1068)): left out");
  const Outcome req = replay_file(bad, "--requester-side");
  EXPECT_EQ(req.code, 2) << req.text();
  EXPECT_NE(req.text().find("frame 24: RC_WRITE_LAST psn=5454385: the message's packet psn=5454384 is not in the "
                            "capture (or did not decode)"),
            std::string::npos)
      << req.text();
}

}  // namespace
