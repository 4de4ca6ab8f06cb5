// model/bridge: a process's link ends towards other processes (issue 16,
// items 1-2): the SystemC side of SimBricks' Ethernet conversation
// (net_peer.h), between a line's sending half in this process and the
// receiving half in the other (model/link/line.h).
//
// Sending: each copy a Wire hands to out(i) goes to peer i as a PACKET
// stamped with its first byte's arrival at the receiver. Copies go out in
// stamp order (a copy a fault delays waits for the frames that overtake
// it); a copy is sent once it can no longer be overtaken, at the latest
// when local time reaches its stamp minus the lookahead.
// Receiving: a PACKET is carried into the peer's LineRx when local time
// reaches its stamp; the receiving line does the rest exactly as in one
// process, so the same scenario gives the same bytes either way.
//
// Conservative synchronisation (SimBricks: a message stamped T promises
// nothing earlier follows). One SystemC thread blocks the whole kernel when
// local time reaches the earliest peer horizon and, before it blocks and
// whenever it wakes, promises each peer
//   min(next local activity, queued input, earliest possible input) + lookahead
// (next local activity: sc_time_to_pending_activity; lookahead: the
// propagation delay of the line to that peer, > 0). With one peer that is
// also an ERNIC process, the SYNC extension (eth_proto.h: next activity and
// PACKETs taken in) lets each side compute the other's next possible send
// exactly, so two processes jump over quiet time together: a 655 ms RNR
// wait costs a few messages, not one per lookahead. With a SimBricks peer
// the plain stamps rule.
//
// Split-run control (enable_control; model/system/split.h): besides
// frames, the two processes of a split run exchange CONTROL messages
// (eth_proto.h) about the scenario's steps, with zero lookahead: a step
// that ends in one process at T lets the other's next step start at T, and
// a read of the other process's host memory is answered at the instant it
// was asked. So in control mode each process also stays at or before the
// peer's control horizon, the earliest instant the peer may still act:
//   max(the latest CONTROL time received, min(its next activity (SYNC
//   extension), our PACKETs and CONTROLs it has not taken in, our next send))
// Events at that instant may run (both sides at one instant both proceed);
// none after it until the peer promises more. Reads are served by the
// thread at their instant through the reader given to enable_control; a
// StepQuery at its instant once that has settled (nothing left to run at
// it), before time moves on (one whose step has not begun here is looked
// at again while the instant lasts, then dropped). While one waits this
// process is not passive, and one stamped later counts as activity.
// The control policy (set_control_policy) narrows that to what can reach
// this process at its instant: a peer whose every step waits on this
// process (passive, SYNC extension ctl_ps ~0) sends nothing that must be
// taken at its instant until a CONTROL of ours has set it going, so only
// our CONTROLs it has not taken in bound it; and a peer's model errors and
// wire monitor events (its lax_ps, its unjudged monitor events included)
// end a run limits.after_error_us (at least 1 ps) after their instant, so
// they bound this process that much later. The run stops as that instant
// begins in every process (one process stops there in its first delta
// cycle): a peer's lax_ps flagged as an error it has had (peer_error_ps)
// lets this process enter it, stop there at once and take the peer's
// RunEnd (await_peer_end); one not so flagged keeps this process before it
// (the error may still come). With one process streaming to
// another, the receiver (waiting for the sender's step to end) keeps to the
// sender's control horizon and the sender keeps only to the frames' one (a
// line delay ahead), not one round trip per activity (issue 16).
// A monitor's home takes the other processes' events as they come, stamped
// in its past when it is ahead, and judges them in order once no earlier
// one can come (watch_floor).
//
// Errors: a peer that closes, stops answering for the wall-clock timeout,
// breaks the protocol, or sends a PACKET stamped before the local time: the
// thread records it (error()), stops the simulation (sc_stop) and the
// caller reports it and exits non-zero. A peer that has sent TERMINATE has
// left the link: frames to it are counted (dropped_after_end) and lost.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "model/bridge/net_peer.h"
#include "model/link/line.h"

namespace ernic::bridge {

struct NetLinkStats {
  uint64_t packets_sent = 0, packets_received = 0, syncs_sent = 0, syncs_received = 0;
  uint64_t blocks = 0;            // times the kernel waited for a peer
  double wall_blocked_s = 0;      // wall time spent waiting for peers
  uint64_t dropped_after_end = 0; // frames to a peer that had ended
  uint64_t closed_without_terminate = 0;  // peers that closed after this end's TERMINATE without their own
  uint64_t controls_sent = 0, controls_received = 0;  // split-run control (enable_control)
  uint64_t reads_served = 0, reads_asked = 0;
};

// Reads `len` bytes of host memory of the node with scenario index `node`
// at `addr` (a split run's remote read); throws std::runtime_error when the
// node is not this process's or the range is outside its memory.
using NetMemReader = std::function<std::vector<uint8_t>(uint8_t node, uint64_t addr, uint64_t len)>;
// This process's latest watchdog progress before the current instant, in
// ps (a split run's ProgressRequest for `node`: NetControl::kNodeHere or a
// node's index, model/system/split.cpp); throws std::runtime_error for a
// node that is not this process's (refused).
using NetProgressReader = std::function<uint64_t(uint8_t node)>;
// This process's part of step `step_id` (NetControl::StepQuery's id):
// true while it is under way (its StepEnd from here is not out), false once
// it is over, nullopt while its lane has not begun it (asked once this
// process's instant has settled; model/system/split.cpp).
using NetStepUnderway = std::function<std::optional<bool>(uint64_t step_id)>;

class NetLink : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(NetLink);
  // timeout: the longest a peer may stay silent while this process waits.
  NetLink(sc_core::sc_module_name name, WallTimeout timeout);
  ~NetLink() override;
  // Before sc_start. lookahead_ps: the propagation delay of the line to the
  // peer (a copy is stamped at least that far after it was sent); 0 is
  // refused (std::invalid_argument: conservative sync needs a positive
  // lookahead). preamble_ps: preamble + SFD on the line (a copy sent at t
  // is stamped at least t + preamble + lookahead, so copies up to that
  // stamp go out at once). rx: where frames from the peer go (the
  // receiving half of the line into this process). Returns the peer's index.
  size_t add_peer(std::unique_ptr<NetPeer> peer, uint64_t lookahead_ps, uint64_t preamble_ps, LineRx* rx);
  LineOut& out(size_t i);
  // End of run: every peer gets TERMINATE at the current time; returns
  // once every peer has sent its own or closed (a peer still running is
  // waited for, its frames dropped; a silent one for the timeout at most).
  // control mode: a RunEnd with the code goes first, with `why` (text: what
  // failed the run, when this process learned it from one of its peers)
  // and `how` it stopped (NetControl::RunEndHow).
  void finish(int exit_code = 0, const std::string& why = {}, uint8_t how = NetControl::kEndedItself);
  const std::string& error() const { return error_; }
  // Some peer has ended (TERMINATE) or gone; the first peer's name.
  bool peer_gone() const;
  std::string peer_name() const;
  NetLinkStats stats() const;
  // Split-run control (above). Before sc_start.
  void enable_control(NetMemReader reader, NetProgressReader progress, NetStepUnderway underway);
  // The control policy (above; without it every peer's control horizon
  // binds). passive(): this process sends no CONTROL a peer must take at its
  // instant, and does not end its run at once, before a peer's CONTROL
  // reaches it (model/system/split.cpp says when). slack_ps (>= 1): how long
  // after a model error or a wire monitor event a run ends at the soonest.
  // unjudged(): the instant of the oldest wire monitor event this process
  // has not judged (~0: none). erred(): the instant of this process's
  // earliest model error (~0: none); its run ends slack_ps after it, so
  // the peers keep within that (SYNC extension lax_ps). Before sc_start.
  // judge(upto): feeds this process's wire monitors every event before upto
  // (no wait: callable from a thread blocked in ask() or await_peer_end(),
  // which run no other SystemC thread, the monitor's included).
  void set_control_policy(std::function<bool()> passive, uint64_t slack_ps, std::function<uint64_t()> unjudged,
                          std::function<uint64_t()> erred, std::function<void(uint64_t)> judge = {});
  // What the policy reads changed at now (a model error): the link's
  // thread promises again at this instant.
  void policy_changed() { sent_ev_.notify(sc_core::SC_ZERO_TIME); }
  // The earliest model error a peer has had (its SYNC's lax_ps flagged as
  // one, bit 2; a star's switch process relays the nodes'), ~0 while none
  // is known. Every process's run ends slack_ps after it, as the instant
  // begins (System::stop_after_error); it is known before this process may
  // enter that instant: until a peer's lax_ps is an error had, the instant
  // slack_ps after it is beyond the peer's control limit. Notified (at the
  // instant it comes in) when it moves.
  uint64_t peer_error_ps() const;
  sc_core::sc_event& peer_error_event() { return peer_err_ev_; }
  // At that instant, the process whose error it is stops by itself; this
  // one waits, with the kernel, for its RunEnd (or for it to go): every
  // peer's whose error had ends the run now (a star's switch process hears
  // each, and take_run_end's rule picks among them only once all are in).
  // False: the run failed meanwhile (error()).
  bool await_peer_end();
  // The instant before which every peer's wire monitor events (Watch) have
  // all come in; a monitor judges what lies before it and now.
  uint64_t watch_floor();
  // The end of the run: waits, with the kernel, until watch_floor() has
  // reached now (the peers' events before now are all in).
  void await_watches();
  // Sends a StepEnd or Fact to every peer, stamped now (c.time_ps is set).
  void send_control(NetControl c);
  // The StepEnds and Facts received, in arrival order; control_event() is
  // notified at the time of each as it arrives.
  std::optional<NetControl> take_control();
  sc_core::sc_event& control_event() { return ctl_ev_; }
  // The Watch CONTROLs received so far (wire monitor events of another
  // process, model/system/split_monitor.cpp), in arrival order. The thread
  // takes them in as it reads; those stamped before local time are all in.
  std::deque<NetControl> take_watches();
  sc_core::sc_event& watch_event() { return watch_ev_; }  // notified at the instant of each as it comes in
  // The peer's run is over (its RunEnd came): its exit code; -1 until then.
  // RunEnds are kept by instant (a star's switch process hears one from
  // each node, not in time order; several at one instant: take_run_end's
  // rule); these three give the earliest not passed over (pass_peer_end),
  // else the last.
  int peer_run_end() const { return current_end() ? current_end()->code : -1; }
  // Its RunEnd's text (<= 1 KiB, printable).
  const std::string& peer_run_end_why() const { return current_end() ? current_end()->why : no_why_; }
  // Its RunEnd's NetControl::RunEndHow.
  uint8_t peer_run_end_how() const { return current_end() ? current_end()->how : uint8_t(NetControl::kEndedItself); }
  // Notified at the instant of the current RunEnd (again when another
  // peer's wins that instant), and when a peer is gone without one.
  sc_core::sc_event& peer_end_event() { return end_ev_; }
  // The caller is done with the current RunEnd: the next one's (a later
  // instant) becomes current and peer_end_event() is notified at its
  // instant. False when there is none yet (one that comes is notified).
  bool pass_peer_end();
  static constexpr uint64_t kMaxRead = 32768;  // bytes a read may ask for (a message carries at most 65,535)
  // The peer's host memory at this instant (the kernel waits, in wall
  // time, for the answer). Throws NetPeerError when the peer refuses (its
  // message) or goes away.
  std::vector<uint8_t> read_remote(size_t peer, uint8_t node, uint64_t addr, uint64_t len);
  // The latest watchdog progress (ps) of node `node`'s process, or with
  // NetControl::kNodeHere of the peer's own process, before this instant
  // (a ProgressRequest; the kernel waits for the answer). Throws
  // NetPeerError as read_remote.
  uint64_t read_progress(size_t peer, uint8_t node);
  // Test only: sleep a random 0..max_us of wall time before each message
  // sent and each blocking read (results must not change).
  void set_chaos(uint64_t seed, uint32_t max_us);
  // Hub mode (net_link_hub.cpp; a split run's switch process, whose peer i
  // is node i's process, each with this process its only peer): after the
  // peers are added, with control. A peer's CONTROLs are relayed to the
  // others at their instant (a Fact, a StepQuery, a StepUnderway and a
  // StepEnd to every other, the StepEnd's node set to the sender's index;
  // a StepQuery answered here too; a ReadRequest, a
  // ProgressRequest and a Watch to the peer of its node, their replies
  // back; a ProgressRequest for kNodeHere answered here), and each peer is promised what this
  // process may do without it: min(its own next activity, every other
  // peer's next activity and input from here), so no relay comes in a
  // node's past and the nodes' conversation through here needs no cycle.
  void enable_hub();
  static constexpr uint8_t kHubNode = 0xFF;  // a StepEnd's node: the hub's own

 private:
  struct Out;
  struct Peer;
  void thread();
  void send_due(Peer& p, uint64_t upto_ps);   // queued copies stamped <= upto_ps, in order
  void deliver(uint64_t now);                 // PACKETs stamped <= now into their LineRx
  uint64_t next_activity(uint64_t now) const; // local, including queued input and output
  uint64_t horizon(const Peer& p, uint64_t t_self) const;  // the earliest stamp p can still send
  void promise(uint64_t now);
  void block(uint64_t now, bool watches_only = false);
  void chaos();
  bool gone(Peer& p);
  // The earliest instant p may still send a CONTROL we must take at its
  // instant (Strict), end the run after an error (Lax), send a monitor
  // event (Watch): net_link_control.cpp.
  enum class Horizon { Strict, Lax, Watch };
  uint64_t control_horizon(const Peer& p, uint64_t t_self, Horizon k) const;
  uint64_t control_limit(const Peer& p, uint64_t t_self) const;  // the latest instant p lets us reach
  void note_peer_errors();  // peer_error_ps() moved: peer_err_ev_
  uint64_t peer_err_known_ = ~uint64_t(0);
  sc_core::sc_event peer_err_ev_;
  std::function<bool()> passive_;
  std::function<uint64_t()> unjudged_, erred_;
  std::function<void(uint64_t)> judge_;
  void judge_behind(uint64_t now);
  uint64_t slack_ps_ = 1;
  bool acting_now_ = false;  // await_watches: a process acts at now
  // Hub mode (net_link_hub.cpp).
  // The earliest q may act by itself (lax: or have a monitor event or a model error).
  uint64_t raw(const Peer& q, bool lax = false) const;
  uint64_t self_for(const Peer& p, uint64_t t, bool lax = false) const;  // our earliest activity not caused by p
  uint64_t ctl_for(const Peer& p, uint64_t t) const;   // passive: our earliest CONTROL p must take at its instant
  uint64_t errors_for(const Peer& p) const;            // the other peers' earliest model error had (~0: none)
  bool route(size_t from, NetControl& c);              // a peer's CONTROL: relayed; true: also ours
  void send_relays(uint64_t now);                      // relays due by now
  void wait_any(Peer& lim);                            // the next message from any peer
  size_t index_of(const Peer* p) const;
  bool hub_ = false;
  std::multimap<uint64_t, std::pair<size_t, NetControl>> relays_;    // time -> (to peer, control)
  std::map<uint64_t, std::pair<size_t, uint64_t>> relayed_reads_;   // our read id -> (asking peer, its id)
  // Relayed requests' ids, apart from this process's own (next_read_id_ counts
  // up from 0): a reply with a relay id goes back to its asker, any other is ours.
  static constexpr uint64_t kRelayIdBase = uint64_t(1) << 63;
  uint64_t next_relay_id_ = kRelayIdBase;
  void take_controls(uint64_t now);   // from every peer into ctl_q_ / reads_; events notified
  void take_run_end(size_t peer, const NetControl& c, uint64_t now);  // into peer_ends_
  void serve_reads(uint64_t now);     // requests stamped now answered
  // StepQuerys stamped now answered once nothing is left to run at now
  // (the instant has settled); true while one stamped now waits for that.
  // One whose step has not begun here is kept: the thread looks again when
  // it comes back at this instant (a CONTROL that starts the lane brings
  // it back); once time has moved past it, it is dropped.
  bool serve_queries(uint64_t now);
  void fail_run(const NetPeerError& e);  // the run fails with e (error(): the first one; sc_stop), from any process
  NetControl ask(size_t peer, NetControl r, const char* what);  // a request; its reply (the kernel waits)
  std::vector<std::unique_ptr<Peer>> peers_;
  WallTimeout timeout_;
  std::string error_;
  NetLinkStats st_;
  std::mt19937_64 chaos_rng_;
  uint32_t chaos_us_ = 0;
  bool finished_ = false;
  bool control_ = false;
  NetMemReader reader_;
  NetProgressReader progress_;
  NetStepUnderway underway_;
  std::deque<NetControl> queries_;                     // StepQuerys to answer, by time
  std::deque<NetControl> ctl_q_;                       // StepEnds and Facts for the System
  std::deque<NetControl> watch_q_;                     // Watch controls for the System's wire monitors
  sc_core::sc_event watch_ev_;
  std::deque<std::pair<Peer*, NetControl>> reads_;     // requests (memory, progress) to serve, by time
  std::map<uint64_t, NetControl> replies_;             // request id -> its reply
  uint64_t next_read_id_ = 0;
  std::optional<uint64_t> asking_;                     // the id ask() waits for the answer to
  sc_core::sc_event ctl_ev_;
  sc_core::sc_event sent_ev_;
  sc_core::sc_event end_ev_;
  struct PeerEnd {
    int code = 0;
    uint8_t how = NetControl::kEndedItself;
    size_t from = 0;  // the peer (index) it came from
    std::string why;
  };
  std::map<uint64_t, PeerEnd> peer_ends_;  // every RunEnd taken in, by instant (ps)
  std::vector<uint64_t> run_end_at_;       // by peer: the instant of its RunEnd (~0: none yet)
  uint64_t end_cursor_ = 0;               // those before this instant are passed over
  const PeerEnd* current_end() const;
  static inline const std::string no_why_;
  bool end_told_ = false;  // a CONTROL went out: the thread's promise changed
};

}  // namespace ernic::bridge
