// model/peer: the ideal IBTA peer's data: its configuration, its MRs and
// its RC queue pairs (plain C++, no SystemC).
//
// The peer (peer.h) is a behavioural RC endpoint, as a commercial NIC plays
// it in PG332's measurements (PG332 "Performance"; issue 18): it answers at
// line rate after a fixed latency and is never the bottleneck unless told
// to be. It is not a second ERNIC: no registers, no DMA, no driver; its
// QPs are configured out of band (the scenario's `connect` with cm: false).
//
// Names follow IBTA vol. 1 chapter 9: expected PSN (ePSN), MSN, PMTU,
// AETH credit count (9.7.5.1); the PSN rules as ../shared/spec/ernic-pg332.md
// section 9 states them.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "model/regs/wqe.h"
#include "model/roce/types.h"

namespace ernic::peer {

struct PeerConfig {
  std::string node;                 // the scenario's node name (messages, log)
  roce::MacAddr mac;
  roce::Ipv4Addr ip;
  bool has_ip = true;
  std::optional<roce::Ipv6Addr> ip6;
  // A request's arrival (its last byte through the MAC's RX) to its
  // answers handed to the MAC's TX, in ps (the scenario's `latency_ns`).
  uint64_t latency_ps = 0;
  // ACK coalescing: an ACK for every packet with AckReq set (IBTA: the
  // responder must answer it) and, when > 0, after every N request packets without one
  // (`ack_every_packets`); 0: on AckReq only.
  uint32_t ack_every_packets = 0;
  // AETH credit count of ACKs: false = the receive queue's free elements
  // (the AETH credit encoding, IBTA 9.7.5.1; the ideal peer's application reposts
  // every element at once, so all of them), true = 31, "invalid" (no
  // end-to-end credits, as a responder with an SRQ sends).
  bool credits_invalid = false;
  // Requester: the local ACK timeout (no progress on an outstanding
  // request for this long: go back N from the oldest), in ps.
  uint64_t ack_timeout_ps = 100'000'000;
  // Requester: READs outstanding at a time (IBTA's initiator depth,
  // max_rd_atomic; ERNIC's own requester keeps 16).
  uint32_t max_reads = 16;
};

// An MR of the peer's host memory (the scenario's register_mr). One
// protection domain: every MR is reachable from every QP of the peer.
struct PeerMr {
  std::string name;
  uint64_t va = 0, pa = 0, length = 0;
  uint32_t rkey = 0;
  bool remote_read = false, remote_write = false;
};

// Counters of one QP (the run report).
struct PeerQpStats {
  uint64_t requests = 0, duplicates = 0, out_of_sequence = 0, dropped_in_error = 0;
  uint64_t acks = 0, naks_psn = 0, naks_invalid = 0, naks_access = 0;
  uint64_t read_responses = 0, bytes_written = 0, bytes_read = 0, messages = 0, sends_received = 0;
};

// A work request the peer's requester executes (the scenario's `post` on
// the peer's end): the opcodes of PG332's WQE (model/regs/wqe.h), local
// and remote addresses resolved.
struct PeerWqe {
  uint16_t wr_id = 0;
  pg332::WqeOpcode op = pg332::WqeOpcode::write;
  uint64_t local_pa = 0;
  uint32_t length = 0;
  uint64_t remote_va = 0;
  uint32_t rkey = 0;
  uint32_t immdt = 0;          // ImmDt, or the R_Key to invalidate (send_inv)
  // The requester's bookkeeping.
  uint32_t first_psn = 0, npkts = 0;  // its PSN span
  uint32_t resp_got = 0;       // READ: responses received, in order
  uint32_t acked = 0;          // SEND / WRITE: packets acknowledged (an ACK may come mid-message)
  bool sent = false;           // every packet handed to the MAC at least once
  bool done = false;           // acknowledged (READ: every response in)
};

// A completion of the peer's requester.
struct PeerCqe {
  uint16_t wr_id = 0;
  pg332::WqeOpcode op = pg332::WqeOpcode::write;
  bool error = false;
  uint8_t syndrome = 0;        // the NAK's, with error
  uint64_t t_ps = 0;
};

// The requester's side of a QP (IBTA 9.7: PSNs, go-back-N, the ACK timer).
struct PeerSendQueue {
  uint32_t npsn = 0;           // the PSN the next posted WQE starts at
  std::deque<PeerWqe> sq;      // posted and not completed, oldest first
  size_t cursor = 0;           // the next packet to send: sq[cursor], packet cursor_pkt
  uint32_t cursor_pkt = 0;
  uint64_t progress_ps = 0;    // the last progress (ACK timer reference)
  uint64_t rnr_until_ps = 0;   // an RNR wait: nothing sent before
  bool error = false;          // a NAK other than PSN / RNR: every WQE flushed with an error
  std::deque<PeerCqe> cq;      // completions not yet waited for
  uint64_t retries = 0, rnr_naks = 0, naks = 0, timeouts = 0, packets = 0;
};

// One RC QP of the peer: its addressing and its responder's state.
struct PeerQp {
  // Addressing (set at connect).
  uint32_t qpn = 0, remote_qpn = 0;
  roce::MacAddr remote_mac;
  roce::IpAddr local_ip, remote_ip;
  uint32_t pmtu = 4096;
  uint16_t udp_sport = 0xC000;      // flow entropy: 0xC000 | the QPNs' hash (RoCEv2 Annex A17.3.1)

  // Responder (IBTA 9.7.1, 9.9).
  uint32_t epsn = 0;                // expected PSN
  uint32_t msn = 0;                 // messages completed, modulo 2^24
  bool nak_seq_sent = false;        // a NAK-PSN sequence error is out; no second until ePSN arrives
  bool error = false;               // the QP is in the Error state (after a NAK it sent): frames dropped
  std::string error_why;
  enum class Msg { None, Send, Write };
  Msg in_msg = Msg::None;           // the message a FIRST opened
  uint64_t write_pa = 0, write_left = 0;  // WRITE: where the next payload byte goes, bytes the RETH still allows
  uint64_t send_off = 0;            // SEND: bytes of the message so far
  uint32_t unacked = 0;             // request packets since the last ACK

  // The receive queue: SEND messages land in rq_count elements of
  // rq_elem_bytes from rq_pa, one after the other (ring).
  uint64_t rq_pa = 0, rq_elem_bytes = 0;
  uint32_t rq_count = 0;
  uint64_t recv_index = 0;          // SEND messages received (the next element: recv_index % rq_count)
  std::optional<uint32_t> last_immdt;  // the last ImmDt / IETH received

  PeerQpStats stats;
  PeerSendQueue req;                // the requester's side
  uint64_t remote_mr_va = 0, remote_mr_len = 0;  // the remote end's MR (connect), for posts
  uint32_t remote_mr_rkey = 0;
};

}  // namespace ernic::peer
