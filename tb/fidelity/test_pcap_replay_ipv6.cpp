// tb/fidelity: `ernic-sim pcap replay` on RoCEv2 over IPv6. The five real
// RoCEv2/IPv4 captures converted frame for frame to IPv6 by
// ipv6_capture.py (the ctest fixture fidelity.ipv6_captures; same MACs,
// fd00::a:b:c:d addresses, BTH and payloads unchanged, ICRC recomputed)
// must lint clean and replay, on both sides, with exactly the differences
// of their IPv4 originals (the same lines, field for field), ERNIC's node
// and its peer on IPv6 addresses (an IPv6 QP). A planted AckReq in the
// IPv6 copy is the one difference; a RoCEv1 copy is refused with why; a
// capture holding an IPv4 and an IPv6 connection replays the one chosen.
#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "tb/fidelity/replay_run.h"

namespace {

using namespace replay_run;

const std::string kV6 = std::string(ERNIC_IPV6_CAPTURES) + "/";
// The captures' hosts, 10.1.16.62 and 10.1.16.61, as converted.
const std::string kReqV6 = "fd00::a:1:10:3e", kRespV6 = "fd00::a:1:10:3d";

bool have(const std::string& path) { return std::ifstream(path).good(); }

#define REQUIRE_CAPTURE(path) \
  if (!have(path)) GTEST_SKIP() << path << " not generated (ipv6_capture.py needs scapy)"

// What the two replays must share: every difference, match and summary line.
std::vector<std::string> outcome_lines(const Outcome& r) {
  std::vector<std::string> out;
  for (const auto& l : r.lines)
    if (l.rfind("diff", 0) == 0 || l.rfind("match: ", 0) == 0 || l.rfind("summary: ", 0) == 0 ||
        l.rfind("expected difference", 0) == 0)
      out.push_back(l);
  return out;
}

struct Case {
  const char* capture;
  const char* side;  // "" or "--requester-side"
  size_t diffs;      // of the IPv4 original, hence of the IPv6 copy
  size_t matched;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.capture << " " << c.side; }

class ReplayIpv6 : public ::testing::TestWithParam<Case> {};

TEST_P(ReplayIpv6, SameDifferencesAsIpv4) {
  const Case c = GetParam();
  const std::string v6 = kV6 + c.capture + ".v6.pcap";
  REQUIRE_CAPTURE(v6);
  const Outcome r4 = replay(c.capture, c.side), r6 = replay_file(v6, c.side);
  EXPECT_EQ(r6.code, r4.code) << r6.text();
  EXPECT_EQ(r6.code, c.diffs ? 1 : 0) << r6.text();
  const auto l6 = outcome_lines(r6);
  EXPECT_EQ(l6, outcome_lines(r4)) << r6.text();
  EXPECT_EQ(r6.with("diff: ").size(), c.diffs) << r6.text();
  EXPECT_EQ(r6.with("match: ").size(), c.matched) << r6.text();
  // The same connection, its addresses converted; the mapping over IPv6.
  const auto head4 = r4.with("replay "), head6 = r6.with("replay ");
  ASSERT_EQ(head4.size(), 1u) << r4.text();
  ASSERT_EQ(head6.size(), 1u) << r6.text();
  std::string want = head4[0];
  for (const auto& [from, to] : {std::pair{kData + c.capture + ".pcap", v6}, {std::string("10.1.16.62"), kReqV6},
                                 {std::string("10.1.16.61"), kRespV6}})
    for (size_t at; (at = want.find(from)) != std::string::npos;) want.replace(at, from.size(), to);
  EXPECT_EQ(head6[0], want);
  EXPECT_NE(head6[0].find(" fd00::a:1:10:3"), std::string::npos) << head6[0];
  EXPECT_NE(r6.text().find(std::string(*c.side ? "requester -> ERNIC fd00::2 " : "requester -> fd00::1 ")),
            std::string::npos)
      << r6.text();
}

// rdma_write_bw's and rdma_send_bw's two timer ACKs (replay/*.expect) on
// the responder side, nothing else; the requester side identical.
INSTANTIATE_TEST_SUITE_P(
    Captures, ReplayIpv6,
    ::testing::Values(Case{"pingpong_rc", "", 0, 5}, Case{"rdma_read_bw", "", 0, 15}, Case{"rdma_send_bw", "", 2, 5},
                      Case{"rdma_write_bw", "", 2, 5}, Case{"rdma_write_lat", "", 0, 5},
                      Case{"pingpong_rc", "--requester-side", 0, 5}, Case{"rdma_read_bw", "--requester-side", 0, 5},
                      Case{"rdma_send_bw", "--requester-side", 0, 15},
                      Case{"rdma_write_bw", "--requester-side", 0, 15},
                      Case{"rdma_write_lat", "--requester-side", 0, 5}),
    [](const auto& i) { return std::string(i.param.capture) + (*i.param.side ? "_requester" : "_responder"); });

// The converted captures are clean RoCEv2/IPv6 to the project's checker
// (ICRC with the IPv6 coverage, sequences), flows by IPv6 address.
TEST(ReplayIpv6Check, ConvertedCapturesLintClean) {
  for (const char* c : {"pingpong_rc", "rdma_read_bw", "rdma_send_bw", "rdma_write_bw", "rdma_write_lat"}) {
    const std::string v6 = kV6 + c + ".v6.pcap";
    REQUIRE_CAPTURE(v6);
    FILE* p = popen((kSim + " pcap lint " + v6 + " 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    while (fgets(buf, sizeof buf, p)) out += buf;
    const int st = pclose(p);
    EXPECT_EQ(WEXITSTATUS(st), 0) << out;
    EXPECT_NE(out.find(" 20 RoCE "), std::string::npos) << out;
    EXPECT_NE(out.find("0 finding(s): clean"), std::string::npos) << out;
    EXPECT_NE(out.find("flow " + kReqV6 + " -> " + kRespV6 + " QP"), std::string::npos) << out;
    EXPECT_EQ(out.find("icrc"), std::string::npos) << out;
  }
}

// AckReq set on the first WRITE_FIRST of the IPv6 copy (ICRC recomputed):
// on the requester side that field of that frame is the one difference.
// On the responder side ERNIC acks it (MSN 0): that ACK, not in the
// capture, is the same timer ACK the IPv4 original shows.
TEST(ReplayIpv6Check, PlantedAckReqIsTheOnlyDifference) {
  const std::string f = kV6 + "rdma_write_bw.v6.ackreq22.pcap";
  REQUIRE_CAPTURE(f);
  const Outcome r = replay_file(f, "--requester-side");
  EXPECT_EQ(r.code, 1) << r.text();
  EXPECT_EQ(r.with("diff: "),
            std::vector<std::string>{"frame 22: RC_WRITE_FIRST psn=5454383: AckReq 1 in the capture, 0 from ERNIC"})
      << r.text();
  EXPECT_EQ(r.with("match: ").size(), 14u) << r.text();
  EXPECT_EQ(replay_file(f, "--requester-side --report-only").code, 0);
  const Outcome resp = replay_file(f, "--expect " + kExpect + "/rdma_write_bw.expect");
  EXPECT_EQ(resp.code, 0) << resp.text();
  EXPECT_EQ(resp.with("diff (expected): "), expected("rdma_write_bw")) << resp.text();
}

// RoCEv1 (EtherType 0x8915, GRH): ERNIC speaks RoCEv2 only; refused, saying so.
TEST(ReplayIpv6Check, RoceV1Refused) {
  const std::string f = kV6 + "rdma_write_bw.v6.rocev1.pcap";
  REQUIRE_CAPTURE(f);
  for (const char* side : {"", "--requester-side"}) {
    const Outcome r = replay_file(f, side);
    EXPECT_EQ(r.code, 2) << r.text();
    ASSERT_EQ(r.lines.size(), 1u) << r.text();
    EXPECT_EQ(r.lines[0], "ernic-sim pcap replay: " + f +
                              ": no RoCEv2 frame in the capture: 20 RoCE frame(s) of the capture are 20 RoCEv1 "
                              "(EtherType 0x8915, GRH), not replayed: ERNIC speaks RoCEv2 only (PG332: over IPv4 "
                              "or IPv6, UDP port 4791)");
  }
}

// rdma_write_bw over IPv4 then rdma_read_bw over IPv6 in one capture: the
// first request's connection by default, else the one --requester-ip names.
TEST(ReplayIpv6Check, MixedCaptureReplaysTheChosenConnection) {
  const std::string f = kV6 + "mixed.pcap";
  REQUIRE_CAPTURE(f);
  const Outcome d = replay_file(f, "--expect " + kExpect + "/rdma_write_bw.expect");
  EXPECT_EQ(d.code, 0) << d.text();
  EXPECT_EQ(d.with("diff (expected): "), expected("rdma_write_bw")) << d.text();
  EXPECT_NE(d.text().find("requester 10.1.16.62 QP 0x00001d -> responder 10.1.16.61 QP 0x00001b"), std::string::npos)
      << d.text();
  EXPECT_NE(d.text().find("responder -> ERNIC 10.0.0.2 "), std::string::npos) << d.text();
  for (const char* side : {"", "--requester-side"}) {
    const Outcome r = replay_file(f, "--requester-ip " + kReqV6 + " " + side);
    EXPECT_EQ(r.code, 0) << r.text();
    EXPECT_TRUE(r.with("diff").empty()) << r.text();
    EXPECT_EQ(r.with("match: ").size(), *side ? 5u : 15u) << r.text();
    EXPECT_NE(r.text().find("requester " + kReqV6 + " QP 0x00001e -> responder " + kRespV6 + " QP 0x00001c"),
              std::string::npos)
        << r.text();
  }
  // Addresses of two IP versions for the node and its peer: refused.
  EXPECT_EQ(replay_file(f, "--node-ip fd00::2 --peer-ip 10.0.0.1").code, 2);
  EXPECT_EQ(replay_file(f, "--requester-ip fd00::99").code, 2);
}

}  // namespace
