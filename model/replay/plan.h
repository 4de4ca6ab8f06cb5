// tools: what both sides of `ernic-sim pcap replay` share (pcap_replay.h):
// the capture's RoCE frames decoded, the connection and its mapping, the
// PMTU, the explained differences and the tally of the report. The
// responder side is pcap_replay.cpp, the requester side pcap_replay_req.cpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/pcap_replay.h"

namespace pcap_replay {

constexpr uint32_t kPsnMask = 0xFFFFFF;  // IBTA: PSNs are 24 bits

struct Pkt {
  const ReplayFrame* cap = nullptr;
  roce::Frame f;  // plain RoCEv2, packet.h's decode
};

bool is_request(uint8_t op);   // RC SEND, WRITE, READ request, atomic
bool is_response(uint8_t op);  // RC READ responses, ACK / NAK, atomic ACK
const char* op_name(uint8_t op);
std::string ack_fields(const roce::Frame& f);  // " syndrome=0x.. msn=N", or "" without an AETH

// A frame's source and destination IP address (IPv4 or IPv6).
roce::IpAddr src_ip(const roce::Frame& f);
roce::IpAddr dst_ip(const roce::Frame& f);
// An IPv4 (a.b.c.d) or IPv6 (RFC 4291 text) address.
std::optional<roce::IpAddr> parse_ip(const std::string& s);

// RoCE frames of encapsulations ERNIC does not speak (PG332: RoCEv2 only).
struct OtherTransport {
  size_t rocev1 = 0, ib = 0;  // RoCEv1 (EtherType 0x8915), native InfiniBand
  size_t total() const { return rocev1 + ib; }
  std::string why() const;  // "" when none, else the sentence replay prints
};

// The capture's RoCEv2 frames, over IPv4 and IPv6, decoded by packet.h (RC,
// UD, CNP). What was left out: *malformed gets one line per RoCE frame that
// does not decode ("frame N: why"), *other counts the RoCE frames of the
// encapsulations replay does not take (RoCEv1, native IB).
std::vector<Pkt> decode_all(const std::vector<ReplayFrame>& frames, std::vector<std::string>* malformed,
                            OtherTransport* other);

// One RC connection of the capture: who requests, who answers, their QPNs,
// the first PSN, and its frames each way in capture order.
struct Plan {
  roce::IpAddr req_ip, resp_ip;  // both IPv4 or both IPv6
  uint32_t resp_qpn = 0, req_qpn = 0, first_psn = 0;
  std::string source;  // where the mapping came from
  std::vector<const Pkt*> requests, responses;
  struct Mr { uint32_t rkey; uint64_t lo, hi; };
  std::vector<Mr> mrs;
  SimSetup sim;  // the responder side's node
};
// The connection and the mapping. Empty string: ok; else why not.
std::string make_plan(const std::vector<Pkt>& pk, const ReplayOptions& o, Plan* p);
// The path MTU the capture's segments show (a FIRST/MIDDLE packet's payload,
// of a request or a READ response; else the smallest PMTU holding the
// largest ONLY/LAST payload).
uint32_t detect_pmtu(const Plan& p);

// --node-ip and --peer-ip given, or their defaults for the connection's IP
// version (IPv4 10.0.0.2 / 10.0.0.1, IPv6 fd00::2 / fd00::1); checked:
// both addresses, of one IP version. Empty string: ok; else why not.
std::string resolve_addresses(const Plan& p, ReplayOptions* o);

// A captured frame of the peer ERNIC stands in front of, rewritten for
// ERNIC: from --peer-mac/--peer-ip to --node-mac/--node-ip (the IP header
// of their version: IPv4 or IPv6, the traffic class, flow label and hop
// limit kept), to ERNIC's --node-qpn, its PSN + --psn-delta (mod 2^24).
roce::Frame to_node(const roce::Frame& captured, const ReplayOptions& o);

std::string fail_usage(const std::string& s);  // printed on stderr, returned
std::vector<std::string> read_expect(const std::string& path, bool* ok);

// Each difference printed ("diff: ..." or "diff (expected): ..."), then
// each expected one not seen.
struct DiffTally {
  size_t unexplained = 0, missing = 0;
};
DiffTally report_diffs(const std::vector<std::string>& diffs, const std::vector<std::string>& expected);

// The requester side (pcap_replay_req.cpp): ERNIC posts the capture's
// requester messages as WQEs; the capture's responder frames are injected
// in answer to ERNIC's requests; ERNIC's requests are compared with the
// capture's. Exit code as replay_main's.
// malformed: decode_all's, listed first among the differences.
int replay_requester(Plan& p, const ReplayOptions& o, const std::vector<std::string>& expected,
                     const std::vector<std::string>& malformed);

}  // namespace pcap_replay
