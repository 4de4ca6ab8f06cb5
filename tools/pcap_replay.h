// tools: `ernic-sim pcap replay CAPTURE`: one side of an RC connection in a
// real capture against one simulated ERNIC node in the other side's place,
// ERNIC's frames compared with the capture's field by field (README.md
// "Real captures", pcap replay). RoCEv2 over IPv4 and over IPv6 (the
// connection's IP version is the node's, an IPv6 QP: QPCONFi[7] = 1,
// IPDESADDR1..4i); RoCEv1 and native InfiniBand are refused (ERNIC speaks
// RoCEv2 only, PG332). Responder side (default): the requester's
// frames injected into ERNIC, its answers against the responder's.
// Requester side (--requester-side): ERNIC posts the requester's messages,
// the responder's frames are injected in answer to ERNIC's requests, its
// requests against the requester's.
//
// Files: pcap_replay_plan.cpp picks the connection and infers the mapping
// (from the capture's CM exchange, else from its data frames, overridable
// by options); pcap_replay.cpp plans the responder's MRs and their
// preload, rewrites the requester's frames, compares and reports;
// pcap_replay_sim.cpp builds the node (host memory, driver, ERNIC,
// datapath, CMAC; no peer: frames go straight into the CMAC's RX, ERNIC's
// are taken from its TX) and runs either side; pcap_replay_req.cpp plans
// and reports the requester side.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/roce/packet.h"

namespace CLI {
class App;
}

namespace pcap_replay {

// One captured frame as pcap_cmd.cpp reads it.
struct ReplayFrame {
  uint64_t n = 0;     // frame number, from 1
  uint64_t t_ns = 0;  // since the first frame
  std::vector<uint8_t> bytes;
  bool ib = false;    // native InfiniBand (not replayed)
  std::string skip;   // not decodable (why)
};

struct ReplayOptions {
  std::string file;
  std::string requester_ip;               // the capture's requester, IPv4 or IPv6 ("": the first RC request's source)
  std::optional<uint32_t> qpn;            // the capture's responder QPN the requests address
  std::optional<uint32_t> requester_qpn;  // the capture's requester QPN (the answers' destination)
  std::optional<uint32_t> first_psn;      // the responder's expected PSN at the start
  uint32_t node_qpn = 2;                  // the ERNIC QP standing for the responder's
  uint32_t psn_delta = 0;                 // simulated PSN = captured PSN + delta (mod 2^24)
  std::optional<uint64_t> va_base;        // simulated VA of the lowest captured VA (default: the same VA)
  // The ERNIC node and the other side, rewritten to. IP: IPv4 or IPv6, both
  // of one version; "": 10.0.0.2 / 10.0.0.1, or fd00::2 / fd00::1 when the
  // capture's connection is over IPv6 (pcap_replay_plan.h, resolve_addresses).
  std::string node_ip, node_mac = "02:00:00:00:00:0b";
  std::string peer_ip, peer_mac = "02:00:00:00:00:0a";
  std::string datapath = "model";         // rtl or model
  bool fast = false;                      // back to back at line rate instead of the capture's pacing
  uint32_t settle_us = 200;               // simulated time after the last request
  bool report_only = false;               // exit 0 whatever the differences
  std::string expect_file;                // explained differences, one a line ('#' comments)
  bool requester_side = false;            // ERNIC in the requester's place (pcap_replay_req.cpp)
};

// What the simulated node is given (pcap_replay_sim.cpp).
struct SimMr {
  uint64_t va = 0, length = 0;                           // simulated VA
  std::vector<std::pair<uint64_t, roce::Bytes>> preload;  // (simulated VA, bytes)
};
struct SimSetup {
  ReplayOptions opt;
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
struct SimResult {
  std::vector<SimAnswer> answers;  // the node's RoCE frames, in order
  std::vector<std::string> errors;  // model errors, driver errors
  // The node could not be set up or the requests not all injected (a bad
  // mapping, memory too small, a capture longer than the run): no
  // comparison is possible; `pcap replay` exits 2 naming them.
  std::vector<std::string> setup_errors;
  bool injected = false;  // every request went in
  std::vector<uint32_t> rkeys;
};
SimResult run_sim(const SimSetup& s);

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
  // the (occurrence + 1)-th time, delay_ps after it started on the line.
  uint32_t trigger_psn = 0, occurrence = 0;
  uint64_t delay_ps = 0;
  roce::Bytes frame;       // rewritten to ERNIC's addresses and QP
};
struct ReqSetup {
  ReplayOptions opt;
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
struct ReqResult {
  std::vector<SimAnswer> sent;          // ERNIC's RoCE frames, in order
  std::vector<bool> injected;           // per answer
  std::vector<roce::Bytes> landed;      // per message: ERNIC's buffer at the end (READ: the data that landed)
  std::vector<ReqCompletion> completions;
  std::vector<std::string> errors, setup_errors;
};
ReqResult run_req_sim(const ReqSetup& s);

// `pcap replay`'s options on app (tools/pcap_cmd.cpp); file gets the capture.
CLI::App* add_subcommand(CLI::App& app, std::string& file, ReplayOptions& o);

// argv-free entry: exit 0 all match (or explained, or --report-only),
// 1 an unexplained difference, 2 an unusable capture or usage.
int replay_main(const std::vector<ReplayFrame>& frames, const ReplayOptions& opt);

}  // namespace pcap_replay
