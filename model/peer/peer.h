// model/peer: the ideal IBTA peer node (scenario `kind: peer`; issue 18):
// a behavioural RC endpoint with its own host memory, the MRs the scenario
// registers on it and QPs configured out of band. Not a second ERNIC: no
// registers, DMA, PCIe or driver; it stands where a node's NIC stands, on
// its own CMAC (model/link/cmac.h: line-rate pacing, taps, the wire and
// its faults, unchanged), and speaks model/roce's frames.
//
// Timing (the whole model): a frame the CMAC hands on (its last byte in,
// plus the MAC's RX latency and crossing) is decoded and, when it is
// RoCEv2 to this node, executed at once (memory written or read); its
// answers (responder.h) are handed to the CMAC's TX `latency_ns` later, in
// order; the CMAC sends them back to back at line rate. So the peer is
// never the bottleneck: it answers as fast as its link carries.
//
// As a requester (requester.h; the scenario's `post` on the peer's end) it
// hands the MAC its next packet whenever the MAC takes one: a posted WQE
// goes out at line rate from the post's instant on, interleaved with the
// answers that are due (those first). Its completions wait in each QP's
// completion queue for `wait_completions`.
//
// Dropped (counted, PeerStats): frames that do not decode or fail a
// header check (dropped_decode: an IPv4 header checksum, an IPv4 fragment,
// BTH TVer not 0), whose ICRC is wrong, to another MAC or IP or, on a QP,
// from another IP than its remote (dropped_address), to QP1 (CM: not
// spoken; connect with cm: false), to a QPN with no QP, and answers no
// request of the peer waits for.
//
// Clocks: none of its own; the CMAC's. Ports: the CMAC (tx_push, rx_sink).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>
#include <memory>
#include <string>
#include <systemc>

#include "model/host/host_memory.h"
#include "model/link/cmac.h"
#include "model/peer/mr_table.h"
#include "model/peer/peer_qp.h"
#include "model/peer/requester.h"
#include "model/peer/responder.h"
#include "model/sim/sim_context.h"

namespace ernic::peer {

struct PeerStats {
  uint64_t frames_in = 0, frames_out = 0;
  // dropped_decode: also the header checks; dropped_address: also the source.
  uint64_t dropped_decode = 0, dropped_icrc = 0, dropped_address = 0, dropped_cm = 0, dropped_no_qp = 0,
           dropped_answers = 0;
  uint64_t replay_in = 0, replay_out = 0;  // a replay step's frames (start_replay, send_frame)
};

// What a connect step gives the peer's end of an RC connection.
struct PeerQpParams {
  uint32_t qpn = 0;                 // this end's QPN
  uint32_t remote_qpn = 0;
  uint32_t epsn = 0;                // the PSN the remote's first request carries
  uint32_t start_psn = 0;           // the PSN of this end's first request
  roce::MacAddr remote_mac;
  roce::IpAddr local_ip, remote_ip;
  uint32_t pmtu = 4096;
  uint32_t rq_depth = 16;           // receive elements (a ring)
  uint32_t rq_elem_bytes = 4096;
  const PeerMr* recv_mr = nullptr;  // where SENDs land, at least one element (else memory of the peer's own)
};

class PeerNode : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(PeerNode);
  PeerNode(sc_core::sc_module_name name, const PeerConfig& cfg, HostMemory& mem, Cmac& cmac, SimContext& ctx,
           const std::string& scope);

  const PeerConfig& config() const { return cfg_; }
  PeerMrTable& mrs() { return mrs_; }
  // A QP towards a remote (connect, cm: false); nullptr with *why when the
  // QPN is taken or the receive ring does not fit the memory.
  PeerQp* create_qp(const PeerQpParams& p, std::string* why);
  const std::map<uint32_t, PeerQp>& qps() const { return qps_; }
  const PeerStats& stats() const { return stats_; }
  // Each decoded frame to this node as it is taken (the wire monitor's
  // requester view when the peer requests; the transaction log).
  std::function<void(const roce::Frame&)> on_rx_taken;
  // Each frame as the peer commits it to its MAC (the wire monitor judges
  // a request against the answers taken before then).
  std::function<void(const roce::Frame&)> on_tx_committed;

  // A capture replay (the scenario step `replay`, model/replay) plays the
  // capture's side on this node: RoCE frames to this node's address and to
  // QPN qpn are offered to `take` (their time: now) instead of a QP (true:
  // taken, counted in replay_in; false: as to a QPN with no QP); one replay
  // a QPN at a time (false, *why set: the QPN is a QP's or another running
  // replay's), and no QP of the peer's own with a QPN a replay played, then
  // or after (the ERNIC node's replay QP still points at it).
  // send_frame queues a frame of the capture for the MAC as it is, behind
  // the answers already queued (replay_out).
  using ReplayTake = std::function<bool(const roce::Frame&, const FrameBytes&)>;
  bool start_replay(uint32_t qpn, ReplayTake take, std::string* why);
  void end_replay(uint32_t qpn);
  void send_frame(FrameBytes f);

  // The requester: WQEs posted on QP qpn (false: no such QP), and its
  // completions taken (at most max), oldest first; cq_event() is notified
  // at each new completion.
  bool post(uint32_t qpn, const std::vector<PeerWqe>& wqes);
  std::vector<PeerCqe> poll(uint32_t qpn, size_t max);
  size_t completions_ready(uint32_t qpn) const;
  const sc_core::sc_event& cq_event() const { return cq_ev_; }

  // One frame from the CMAC (its rx_sink).
  void rx(FrameBytes f);

 private:
  void tx_thread();
  bool for_me(const roce::Frame& f) const;
  static bool header_ok(const FrameBytes& bytes, const roce::Frame& f);

  PeerConfig cfg_;
  HostMemory& mem_;
  Cmac& cmac_;
  SimContext& ctx_;
  std::string scope_;
  PeerMrTable mrs_;
  Responder responder_;
  Requester requester_;
  sc_core::sc_event cq_ev_;
  // The next requester frame due now, round robin over the QPs.
  std::optional<roce::Frame> next_request(uint64_t now_ps);
  uint32_t rr_qpn_ = 0;
  std::map<uint32_t, PeerQp> qps_;
  std::map<uint32_t, ReplayTake> replays_;  // start_replay's, by QPN
  std::set<uint32_t> replayed_;             // QPNs replays have played (no QP of the peer's may take one)
  PeerStats stats_;
  struct Out {
    uint64_t ready_ps;
    FrameBytes f;
  };
  std::deque<Out> txq_;
  sc_core::sc_event tx_ev_;
};

}  // namespace ernic::peer
