// model/replay: what both sides of a replay share (replay.h): the
// capture's RoCE frames decoded, the connection and its mapping, the PMTU,
// the node's set-up, the explained differences and the tally of the
// report; and the Session a Replay keeps from plan to verdict. The
// responder side is responder.cpp, the requester side requester.cpp, the
// SystemC driving run.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "model/replay/replay.h"
#include "model/roce/psn.h"

namespace ernic::replay {

using roce::kPsnMask;  // IBTA: PSNs are 24 bits

struct Pkt {
  const ReplayFrame* cap = nullptr;
  roce::Frame f;  // plain RoCEv2, packet.h's decode
};

bool is_request(uint8_t op);   // RC SEND, WRITE, READ request, atomic
bool is_response(uint8_t op);  // RC READ responses, ACK / NAK, atomic ACK
const char* op_name(uint8_t op);
std::string ack_fields(const roce::Frame& f);  // " syndrome=0x.. msn=N", or "" without an AETH


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

// The responder side's node: MRs over the captured VAs and their preload.
struct SimMr {
  uint64_t va = 0, length = 0;                           // simulated VA
  std::vector<std::pair<uint64_t, roce::Bytes>> preload;  // (simulated VA, bytes)
};
struct SimSetup {
  uint32_t pmtu = 1024;
  uint32_t peer_qpn = 0;       // the answers' destination QP
  uint32_t expected_psn = 0;   // the node's expected PSN (simulated)
  uint32_t rq_depth = 16, rq_elem_bytes = 4096;
  std::vector<SimMr> mrs;
  // Request k's bytes once the MRs' R_Keys are known; its injection time
  // (ns after the first request, by the capture; ignored with opt.fast).
  std::function<roce::Bytes(size_t k, const std::vector<uint32_t>& rkeys)> request;
  std::vector<uint64_t> request_t_ns;
};
struct SimAnswer {
  uint64_t t_ps = 0;
  roce::Frame f;  // decoded by packet.h
};

// The requester side's node: ERNIC's QP towards the capture's responder,
// the requester's messages to post and the responder's frames to inject.
struct ReqMessage {
  uint8_t wqe_opcode = 0;  // pg332::WqeOpcode
  uint32_t length = 0;
  uint64_t remote_va = 0;
  uint32_t rkey = 0, immdt = 0;
  roce::Bytes data;        // a WRITE's or SEND's payload (the capture's)
  uint64_t t_ns = 0;       // its first packet, ns after the first request
};
struct ReqAnswer {
  // Injected once ERNIC has sent the request with this (simulated) PSN for
  // the (occurrence + 1)-th time, delay_ps after it (never before its last
  // byte could have come back).
  uint32_t trigger_psn = 0, occurrence = 0;
  uint64_t delay_ps = 0;
  roce::Bytes frame;       // rewritten to ERNIC's addresses and QP
};
struct ReqSetup {
  uint32_t pmtu = 1024;
  uint32_t dest_qpn = 0;   // the capture's responder QPN
  uint32_t sq_psn = 0;     // ERNIC's first PSN (simulated)
  std::vector<ReqMessage> msgs;
  std::vector<ReqAnswer> answers;
};
struct ReqCompletion {
  uint16_t wr_id = 0;
  bool error = false;
};

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
  // The requester side's.
  ReqSetup req;
  std::vector<const Pkt*> first_pkt;               // per message: the capture's first packet
  std::vector<std::vector<const Pkt*>> read_resp;  // per message: the READ responses that carried its data
  std::vector<const Pkt*> answer_pkt;              // per answer: the capture's frame
  std::vector<const Pkt*> trigger_pkt;             // per answer: the request it followed
};
// The connection and the mapping. Empty string: ok; else why not.
std::string make_plan(const std::vector<Pkt>& pk, const ReplayOptions& o, Plan* p);
// The path MTU the capture's segments show (a FIRST/MIDDLE packet's payload,
// of a request or a READ response; else the smallest PMTU holding the
// largest ONLY/LAST payload).
uint32_t detect_pmtu(const Plan& p);

// node_ip and peer_ip given, or their defaults for the connection's IP
// version (IPv4 10.0.0.2 / 10.0.0.1, IPv6 fd00::2 / fd00::1); checked:
// both addresses, of one IP version. Empty string: ok; else why not.
std::string resolve_addresses(const Plan& p, ReplayOptions* o);

// A captured frame of the side the node stands in front of, rewritten for
// the node: from peer_mac/peer_ip to node_mac/node_ip (the IP header of
// their version: IPv4 or IPv6, the traffic class, flow label and hop limit
// kept), to the node's node_qpn, its PSN + psn_delta (mod 2^24).
roce::Frame to_node(const roce::Frame& captured, const ReplayOptions& o);

// b - a in ns, or 0 when b is earlier (a capture merged from several
// sources may step back in time).
inline uint64_t ns_after(uint64_t a, uint64_t b) { return b > a ? b - a : 0; }

std::vector<std::string> read_expect(const std::string& path, bool* ok);

// Each difference as a line ("diff: ..." or "diff (expected): ..."), then
// each expected one not seen.
struct DiffTally {
  size_t unexplained = 0, missing = 0;
};
DiffTally report_diffs(const std::vector<std::string>& diffs, const std::vector<std::string>& expected,
                       std::vector<std::string>* lines);

// Everything a Replay keeps from plan to verdict.
class Session {
 public:
  ReplayOptions opt;
  std::vector<std::string> expected, malformed, lines;
  std::vector<Pkt> pk;
  Plan p;
  // The run's outcome.
  std::vector<std::string> setup_errors;
  bool injected_all = false;            // responder side: every request went in
  std::vector<uint32_t> rkeys;          // responder side: the MRs' R_Keys
  std::vector<SimAnswer> node_frames;   // the node's RoCE frames, in order
  std::vector<bool> answered;           // requester side: per answer, injected
  std::vector<roce::Bytes> landed;      // requester side: per message, ERNIC's buffer at the end
  std::vector<ReqCompletion> completions;
  bool done = false;                    // requester side: the run reached its end

  // The requester side's answers (run.cpp): each due once its trigger was
  // sent, injected in the capture's order.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> by_trigger;  // (PSN, occurrence) -> answers
  std::map<uint32_t, uint32_t> sent;                                          // PSN -> times ERNIC sent it
  std::vector<std::optional<uint64_t>> due;                                   // per answer: when due (ps)
  sc_core::sc_event due_ev;
  Line* line = nullptr;  // while the requester side runs
  bool stop_injector = false;
};

// Each side's planning (after make_plan and resolve_addresses): "" or why
// not; the header lines. Their run (run.cpp) and their judgement.
std::string plan_responder(Session& s);
std::string plan_requester(Session& s);
void run_responder(Session& s, host::Driver& d, HostMemory& mem, Line& line, bool bring_up);
void run_requester(Session& s, host::Driver& d, HostMemory& mem, Line& line, bool bring_up);
Verdict judge_responder(Session& s, std::vector<std::string> diffs);
// What both judgements share (replay.cpp): a run that did not reach its
// end (why_short, unless a set-up error says more) is a verdict of 2
// (true); the differences listed against the expected ones, the summary
// (counts, then the tally) and the verdict.
// ERNIC's frame sf against the capture's cf: its opcode, and that it goes
// to the capture side's QP `qpn` at the peer's address (o.peer_ip,
// o.peer_mac); `kind` names the frame in the lines ("answer", "request").
void compare_route(const roce::Frame& sf, const roce::Frame& cf, uint32_t qpn, const ReplayOptions& o,
                   const char* kind, const std::string& what, std::vector<std::string>* diffs);
// Payload length and bytes, ERNIC's frame sf against the capture's cf: a
// difference line for what into *diffs when they differ.
void compare_payload(const roce::Frame& sf, const roce::Frame& cf, const std::string& what,
                     std::vector<std::string>* diffs);
// The report's first line: the capture's connection and where its mapping came from.
std::string connection_line(const Session& s);
bool cut_short(Session& s, bool reached_end, const std::string& why_short, Verdict* v);
Verdict tally(Session& s, const std::vector<std::string>& diffs, size_t matched, const std::string& counts);
Verdict judge_requester(Session& s, std::vector<std::string> diffs);

}  // namespace ernic::replay
