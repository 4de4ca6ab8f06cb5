// model/link: an Ethernet switch for N nodes (a scenario's `topology:
// switch`; scenarios/README.md section 4). Each node's CMAC is joined to a
// port by two wires (model/link/cmac.h): node -> Wire -> port (the port's
// ingress, a FrameSink) and port -> Wire -> node. No clock: the switch
// works in ps and sleeps while nothing is queued or due (its processes
// wait on events and deadlines only).
//
// Forwarding (store and forward, static): a frame whose last byte has
// arrived at time T is queued at its egress port at T + latency_ps. The
// egress port is the one whose node has the frame's destination MAC. A
// frame to no port's node (an unknown or group address: broadcast,
// multicast) is dropped (counted no_route at its ingress port) or, with
// flood_unknown, copied to every other port (counted flooded); a frame to
// the node it came from is dropped (no_route) either way. MAC control
// frames (EtherType 0x8808) end at the port (a PAUSE / PFC frame acts on
// the port's egress, below); a frame with a bad FCS is dropped
// (rx_bad_fcs). Frames arriving at the same ps are queued in port order.
//
// Egress (output queued): one queue per class per port, all holding at most buffer_bytes
// of frames (Ethernet header .. ICRC as carried); a frame counts from its
// queueing until its last byte has left. A frame that does not fit is
// dropped (dropped, dropped_bytes). The port sends one frame at a time at
// its rate, as a CMAC does (LineRate: preamble + SFD, the frame, FCS, IFG;
// the wire gets it when its preamble starts, t0 = max(queued, line free)):
// its first byte leaves at t0 + preamble, its last at t0 + frame time.
//
// ECN (RFC 3168), decided when a frame is queued, from q = the egress
// queue's bytes before it: `threshold` marks when q > threshold_bytes;
// RED (with min_bytes/max_bytes) uses the average queue (weight < 1,
// switch_params.h) or q itself (weight 1, the default) as q here: it
// marks when q >= max_bytes, never when q < min_bytes, and between with
// probability * (q - min_bytes) / (max_bytes - min_bytes), drawn from the
// switch's own random stream (std::mt19937_64 seeded with `seed`, u =
// (rng() >> 11) * 2^-53, marked when u < p; drawn only for a frame that
// could be marked, so a run is a function of its traffic). Marking sets
// the IP ECN field of an ECT(0) or ECT(1) frame to CE (model/link/ecn.h:
// the IPv4 header checksum is recomputed, the ICRC masks the field);
// Not-ECT frames are left alone unless mark_not_ect (then they are marked
// too); CE stays CE; non-IP frames are never marked.
//
// PFC (IEEE 802.1Qbb), with `pfc` (the scenario parser checks the
// thresholds leave headroom: switch_params.h, pfc_headroom_bytes): RoCEv2 frames (UDP port 4791) are the
// lossless class, priority pfc.priority; every other frame is best effort
// (never paused, never counted here). Ingress side: the class's bytes that
// came in on a port and are still inside the switch (forwarding or in any
// egress queue) are counted; reaching xoff_bytes the port sends its node a
// PFC XOFF for the priority (time pfc.quanta), refreshed every
// refresh_quanta while it stands, and an XON (time 0) once the count is
// back at or below xon_bytes (pfc::TxPause, as the CMAC does; frames by
// pfc::build). Pause frames go ahead of queued frames at the next frame
// boundary, from the port's MAC (mac with last byte = port + 1). Pause
// frames received from a node hold the port's egress: a frame of the class
// waits while its priority is paused (an 802.3x PAUSE holds every frame),
// and the class's frames behind it with it; best-effort frames behind it
// go on (a queue per class sharing the port's buffer, served oldest first:
// paused_ns counts the time the oldest frame was held); without `pfc`
// they are counted and ignored.
//
// Counters per port: model/link/switch_counters.h. The transaction log gets
// `state` records of node "switch" (switch_drop, ecn_mark, pfc_tx, pfc_rx,
// pfc_hold, pfc_release, each naming the port); the waveform has
// top.switch.<port>.{queue_bytes, ingress_bytes, xoff, paused}.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "model/link/cmac.h"
#include "model/link/pfc.h"
#include "model/link/switch_counters.h"
#include "model/link/switch_params.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"
#include "model/trace/pcap_writer.h"

namespace ernic {

struct SwitchConfig {
  struct Port {
    std::string name;                  // the node on it: the port's name in counters, logs, waveform
    std::array<uint8_t, 6> node_mac{}; // its forwarding entry
    double rate_gbps = 100.0;          // the port's line (the node's link has the same rate)
  };
  std::vector<Port> ports;
  uint64_t buffer_bytes = 262144;      // per egress port
  uint64_t latency_ps = 300000;        // last byte in -> queued at the egress port
  bool flood_unknown = false;          // unknown / group destination: flood (true) or drop
  SwitchEcn ecn;                       // model/link/switch_params.h
  SwitchPfc pfc;
  uint64_t seed = 1;                   // RED's random stream
  std::array<uint8_t, 6> mac{0x02, 0x5A, 0x00, 0x00, 0x00, 0x00};  // port p: last byte p + 1
};

class Switch;

// One port: its ingress (the FrameSink its node's wire delivers to) and
// its egress queue, line and pause state.
class SwitchPort : public sc_core::sc_module, public FrameSink {
 public:
  SC_HAS_PROCESS(SwitchPort);
  SwitchPort(sc_core::sc_module_name name, Switch& sw, size_t index);
  void rx_arrive(FrameBytes frame, uint64_t first_byte_ps, bool bad_fcs) override;

  Wire* wire_out = nullptr;            // to the port's node
  SwitchPortCounters counters;
  // The counters as they stand now: paused_ns with a hold still running
  // (counters.paused_ns adds a hold when it ends).
  SwitchPortCounters counters_now() const;
  uint64_t queue_bytes() const { return q_bytes_ - (leaving_.n && leaving_.ps <= now_ps() ? leaving_.n : 0); }
  uint64_t ingress_bytes() const { return ingress_bytes_; }
  uint16_t xoff_standing() const { return tx_pause_.standing; }

 private:
  friend class Switch;
  struct Entry {
    FrameBytes f;
    size_t ingress;
    bool lossless;                     // the PFC class (counted at its ingress port)
  };
  // A frame for this port, queued now (or dropped: no room).
  void enqueue(Entry e);
  // The PFC class's bytes from this port inside the switch.
  void ingress_add(uint64_t bytes);
  void ingress_release(uint64_t bytes);
  void rx_pause(const pfc::PauseFrame& p, uint64_t now);
  bool mark_ecn(FrameBytes& f);        // the ECN decision for a frame queued now
  bool held(const Entry& e, uint16_t stat) const;
  void egress();                       // SC_THREAD
  // The frame on the line leaves the queue's count (and its ingress port's
  // PFC class) once its last byte is out: at that instant before anything
  // else there reads the counts, whichever process the kernel runs first
  // (Switch::release_departures: a split run's switch process ordered an arrival and a
  // departure at one instant unlike one process did).
  void release_departure(uint64_t now);
  static uint64_t now_ps();
  // Puts f on the line now (the line free) and returns when its last byte is out.
  void transmit(FrameBytes f, bool own);
  void log(const char* what, const std::string& value);

  Switch& sw_;
  size_t index_;
  LineRate line_;
  std::array<uint8_t, 6> mac_;
  std::deque<Entry> q_;
  uint64_t q_bytes_ = 0, ingress_bytes_ = 0;
  uint64_t line_free_ps_ = 0;
  pfc::TxPause tx_pause_;
  pfc::RxPause rx_pause_;
  bool holding_ = false;
  uint64_t hold_since_ps_ = 0;
  bool oversize_seen_ = false;         // a frame larger than the buffer came (an event the first time)
  double red_avg_ = 0;                 // RED's average queue (bytes), ecn.weight < 1
  uint64_t idle_since_ps_ = 0;         // the queue has been empty since then
  struct Leaving {
    uint64_t ps = 0, n = 0;            // last byte out at ps; n bytes (0: none)
    size_t ingress = 0;
    bool lossless = false;
  } leaving_;                          // the frame on the line, still counted
  void red_arrival();                  // RED's average at a frame's arrival
  sc_core::sc_event wake_;
  int v_queue_, v_ingress_, v_xoff_, v_paused_;
};

class Switch : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Switch);
  // scope: the waveform scope ("top.switch"); log_clock: the clock whose
  // cycle the transaction log's records carry (nullptr: cycle 0).
  Switch(sc_core::sc_module_name name, SimContext& ctx, const std::string& scope, SwitchConfig cfg,
         const ClockDomain* log_clock = nullptr);

  size_t ports() const { return ports_.size(); }
  SwitchPort& port(size_t p) { return *ports_.at(p); }
  const SwitchPort& port(size_t p) const { return *ports_.at(p); }
  const SwitchConfig& config() const { return cfg_; }
  // The port whose node has this MAC, or -1.
  int port_of(const uint8_t mac[6]) const;

  // The switch's own frames (pause frames to a node) as they go on the
  // line: the merged capture (tap_wire, at rank tap_wire_source + port)
  // and an observer.
  PcapWriter* tap_wire = nullptr;
  uint32_t tap_wire_source = 0;
  std::function<void(size_t port, const FrameBytes&, uint64_t first_byte_ps)> on_tx;

 private:
  friend class SwitchPort;
  // A frame whose last byte arrived at port `in` now.
  void arrive(size_t in, FrameBytes f, bool bad_fcs);
  void forward();                      // SC_THREAD: frames to their egress queues after latency_ps
  void release_departures(uint64_t now);  // every port's departures due by now (SwitchPort::release_departure)
  double draw();                       // RED: u in [0, 1)

  SimContext& ctx_;
  std::string scope_;
  SwitchConfig cfg_;
  const ClockDomain* log_clock_;
  std::vector<std::unique_ptr<SwitchPort>> ports_;
  struct Pending {
    size_t egress;
    SwitchPort::Entry e;
  };
  std::map<std::tuple<uint64_t, size_t, uint64_t>, Pending> pending_;  // (queued at, ingress port, sequence)
  uint64_t seq_ = 0;
  sc_core::sc_event pending_ev_;
  std::mt19937_64 rng_;
};

}  // namespace ernic
