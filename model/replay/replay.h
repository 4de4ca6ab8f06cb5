// model/replay: capture replay (issue 18): one side of an RC connection in
// a real capture played against one simulated ERNIC node standing in the
// other side's place, ERNIC's frames compared with the capture's field by
// field (opcode, PSN, AETH syndrome and MSN, destination, lengths, payload;
// READ data and completions on the requester side). RoCEv2 over IPv4 and
// IPv6 (the node gets an IPv6 QP, QPCONFi[7] = 1, for an IPv6 connection);
// RoCEv1 and native InfiniBand are refused (ERNIC speaks RoCEv2 only,
// PG332).
//
// Responder side (default): the capture's requester frames, rewritten
// (MACs, IPs, QPN, PSN + delta, R_Keys and VAs of the MRs ERNIC registers
// over the captured VAs, preloaded with the captured READ response
// payloads), go to ERNIC; its answers are compared with the capture's
// responder frames. Requester side: ERNIC posts the capture's requester
// messages as WQEs; each captured responder frame goes to ERNIC when ERNIC
// has sent the request it followed in the capture (by PSN and sending);
// ERNIC's requests are compared with the capture's.
//
// Two users: `ernic-sim pcap replay` / `ernic-sim replay` (tools/
// pcap_replay*.cpp: one node alone, frames straight into its CMAC's RX)
// and the scenario step `replay` (model/system/steps_replay.cpp: the
// frames come from a `kind: peer` node over the scenario's wire). Both
// give the same lines: `match:` / `diff:` / `summary:` (README.md "Real
// captures").
//
// Files: plan.cpp picks the connection and infers the mapping (the
// capture's CM exchange, else its data frames, overridable by options);
// responder.cpp and requester.cpp plan and judge each side; run.cpp drives
// the node in SystemC time (driver set-up, injection, the requester side's
// answers); replay.cpp is this class.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "model/host/driver.h"
#include "model/host/host_memory.h"
#include "model/roce/packet.h"
#include "model/trace/capture_file.h"

namespace ernic::replay {

using ReplayFrame = CaptureFrame;

struct ReplayOptions {
  std::string file;
  std::string requester_ip;               // the capture's requester, IPv4 or IPv6 ("": the first RC request's source)
  std::optional<uint32_t> qpn;            // the capture's responder QPN the requests address
  std::optional<uint32_t> requester_qpn;  // the capture's requester QPN (the answers' destination)
  std::optional<uint32_t> first_psn;      // the responder's expected PSN at the start
  uint32_t node_qpn = 2;                  // the ERNIC QP standing for the capture's side
  uint32_t psn_delta = 0;                 // simulated PSN = captured PSN + delta (mod 2^24)
  std::optional<uint64_t> va_base;        // simulated VA of the lowest captured VA (default: the same VA)
  // The ERNIC node and the other side, rewritten to. IP: IPv4 or IPv6, both
  // of one version; "": 10.0.0.2 / 10.0.0.1, or fd00::2 / fd00::1 when the
  // capture's connection is over IPv6 (resolve_addresses, plan.h).
  std::string node_ip, node_mac = "02:00:00:00:00:0b";
  std::string peer_ip, peer_mac = "02:00:00:00:00:0a";
  // When node_ip and peer_ip are not given: the nodes' own addresses by IP
  // version (the scenario step), those of the connection's version when
  // both nodes have one, else of the other version, else the defaults.
  std::string node_ip4, node_ip6, peer_ip4, peer_ip6;
  std::string datapath = "model";         // rtl or model (the tool's node)
  bool fast = false;                      // back to back at line rate instead of the capture's pacing
  uint32_t settle_us = 200;               // simulated time after the last request
  bool report_only = false;               // exit 0 whatever the differences
  std::string expect_file;                // explained differences, one a line ('#' comments)
  std::vector<std::string> expected;      // more of them (the scenario step's `expect` list)
  bool requester_side = false;            // ERNIC in the requester's place
  // Messages name the options as the command line spells them
  // ("--node-ip") or, for the scenario step, as its keys ("node_ip").
  bool scenario_keys = false;
  std::string key(const std::string& cli) const;
};

// Where the injected frames go: towards the ERNIC node.
class Line {
 public:
  virtual ~Line() = default;
  // Called in a SystemC thread at the instant the frame is due to leave
  // (ns after the first request by the capture, or at once with `fast`);
  // it may wait while the line is busy (line-rate pacing).
  virtual void send(roce::Bytes frame) = 0;
  // A frame of this many bytes (Ethernet header .. ICRC) on the line, from
  // its first byte to its last (ps): the requester side's answers never
  // come back before the request they answer has wholly arrived.
  virtual uint64_t frame_ps(size_t bytes) const = 0;
};

struct Verdict {
  // 0 every answer matched (or each difference explained, or report_only),
  // 1 an unexplained difference or an expected one not seen, 2 no
  // comparison possible (the node could not be set up, the frames not all
  // injected: setup_errors).
  int code = 0;
  size_t differences = 0, unexplained = 0, missing = 0, matched = 0;
  std::vector<std::string> setup_errors;
  std::string summary;  // the `summary:` line's text
};

class Session;  // plan.h

// One replay: planned, run in SystemC time, judged.
class Replay {
 public:
  Replay();
  ~Replay();
  // Decodes the capture and plans the replay (connection, mapping, MRs,
  // messages). "" when it can go ahead, else why not (the option or the
  // frame at fault); lines() then holds the plan's header.
  std::string plan(const std::vector<ReplayFrame>& frames, const ReplayOptions& o);
  const ReplayOptions& options() const;
  uint32_t pmtu() const;
  // The capture side's QPN (the answers' destination: the requester's on
  // the responder side, the responder's on the requester side).
  uint32_t capture_qpn() const;
  roce::IpAddr node_ip() const;  // the node's address the replay uses

  // In a SystemC thread: sets up the node through its driver (bring_up:
  // init and the neighbour entry first; a scenario's node has had its init
  // step), then injects (responder side) or posts and answers (requester
  // side), then waits settle_us. Returns at the end; a failed set-up goes
  // to the verdict's setup_errors.
  void run(host::Driver& d, HostMemory& mem, Line& line, bool bring_up);
  // Each frame the node transmits, as seen at t_ps (the tool: its first
  // byte at the node's CMAC; the step: taken by the peer).
  void node_frame(const std::vector<uint8_t>& frame, uint64_t t_ps);

  // ERNIC's frames against the capture's; errors (model errors) are listed
  // as differences first. lines() then holds the report.
  Verdict judge(const std::vector<std::string>& errors);
  // Lines written so far, taken (the plan's header, the set-up's, the report's).
  std::vector<std::string> take_lines();

 private:
  std::unique_ptr<Session> s_;
};

}  // namespace ernic::replay
