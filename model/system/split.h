// model/system: a scenario's nodes in separate processes (issue 16, the
// split run): one node per process, its link to the other process through
// SimBricks' Ethernet protocol (model/bridge/net_link.h), the scenario's
// steps kept in step across the processes.
//
// Every process reads the whole scenario and runs every step at the same
// simulated instant; a step acts only in the processes of the nodes it
// names (its participants: `post` the node's, `connect` the client's and the
// server's, `init` each listed node's, `wait` every process's). After its
// part each process sends the step's end (a CONTROL StepEnd: its time and
// whether it failed) and waits for the other's; the step ends at the later
// of the two, and the next starts there, in both processes. Zero lookahead:
// while it waits, a process stays at or before the instant the other may
// still act at (net_link.h, control mode), so the step's end never lies in
// its past. What one process needs of the other's node it gets at that
// instant: an MR's record by a CONTROL Fact sent at the step's end, memory
// bytes by a read the other process answers at the reading instant.
//
// A `parallel`'s branches run in every process too, each a lane of steps
// kept in step like the scenario's own (controls carry lane << 32 | step):
// a branch whose step acts in one process waits, in the other, for that
// step's end. A failure is told to the other process as a fact at its
// instant, so both stop their branches at the same step boundaries
// (runner.cpp's first_fail_ps_ rule); TxLog orders an instant's branch
// steps by their place in the scenario, so both write the same log.
// One process passes an instant's settled points lane by lane, so a lane
// whose step ends at that instant goes on before the lanes behind it.
// Split, a lane behind waits for the lanes ahead that wait for another
// process's end: one certain to come now (split_peer_passes), and one that
// may (an `own` step elsewhere, e.g. a bypass_send from the other node):
// for that it asks (a StepQuery at the instant, once per step and instant)
// and goes on once the end has come or a process says its part is still
// under way once its instant has settled (StepUnderway; runner.cpp's
// step_boundary, split_lane_ahead_may_end_now).
//
// A switch topology splits into a star (split_star.cpp): a process per node
// and one for the switch (`--node switch`), which relays the nodes'
// CONTROLs and ends each step once every node's process has.
//
// What splits (split_refusal names what does not yet): two nodes joined
// point to point or N nodes behind a switch; built-in hosts, with or without qp_setup_fsm (the
// block's cmac_link_up is the line into its node, as in one process);
// host: program (the program in its node's process; a connect with a
// program end: the driver's end in its process, which tells the program's
// its QPN and PSN); nodes of kind: peer (the ideal peer in its own process
// as an ERNIC node is; its MR records sent as facts; connect with a peer
// end: each process its end, the QPNs, PSNs and MRs traded at the instant,
// the peer's QP created when the ERNIC end's is enabled: steps_peer.cpp).
// With a switch: every node kind, a kind: peer or host: program node in
// its own process as point to point (their connects trade only between
// the two ends, through the switch's process). The steps a
// connection's two ends trade values in (recover, disconnect, qp_adopt;
// init after a qp_setup_fsm node) run in those two processes only, as
// point to point: the second end waits for the first's word, a fact the
// switch's process relays to every other process; it names its sender's
// node, and only the partner takes it (split_exchange), so another pair's
// trade in the same step (init's) is no answer. A partner whose part
// failed first ends the other's part (SplitPartnerFailed), and its failure
// the step, as one process stops. A qp_setup_fsm node's cmac_link_up is
// every direction into it, as in one process (every process has every
// line and its link state). fault and link do split there: every process
// installs the rule (or the state) on the direction's line, and it acts
// only where that line's sending half is, so each fault is applied and
// reported once: on X->Y (X's link, the flow to Y) and X->switch in X's
// process, on switch->X (the port's link to X) in the switch's. expect_idle
// and expect_compliance sum every process's count (split_sum: each hears
// all the others' through the switch's process).
// Every step but connect with batch: expect_switch (in the switch's
// process), init (the nodes one
// after the other, as in one process), register_mr, deregister_mr, fill,
// mem_write, mem_expect, connect (CM or out of band), connect_reject,
// post, wait_completions, recv, check_memory, wait, repeat, parallel and
// barrier, reg_write, reg_read, reg_expect, reg_poll, debug_preset,
// hw_handshake, recover and disconnect (in the connection's two ends'
// processes, the second end after the first),
// fault, link, expect_frames (in the tap's node's process), qp_setup,
// qp_release and expect_qp (in the node's process), qp_adopt (each end in
// its node's process, the second after the first), bypass_send (the
// frames built in every process, sent by the source's), expect_bypass,
// program, expect_idle (each process its node's sends; the CQE counts
// summed), expect_compliance (each its node's frames, summed by
// split_sum), wait_until. An MR's record (a fact) names its node: two
// nodes may give their MRs one name. The independent wire monitor of a
// pair runs in its first node's process, fed the other's events
// (split_monitor.cpp). Weaker
// split: the shadow-memory scoreboard checks each process's own node (it
// stands aside from content comparison: the peer's operations are in the
// other process; the canaries stay checked).
#pragma once
#include <cstdint>
#include <string>

#include "model/scenario/scenario.h"
#include "model/scenario/split_plan.h"

namespace ernic {

struct SplitOptions {
  std::string node;             // this process's node; "" = one process runs every node
  std::string listen, connect;  // the link to the other process: unix:PATH, tcp:HOST:PORT or shm:PATH (one of the two)
  uint32_t timeout_ms = 60000;  // the longest the other process may stay silent (wall time)
  uint32_t chaos_us = 0;        // test only: random 0..chaos_us wall-clock sleeps in the link (outputs must not change)
  uint64_t chaos_seed = 1;
};

// Another process's failure as this run's exit code: 3 (watchdog, time
// limit) or 1 (anything else; a CONTROL carrying another value is no
// reason to exit with it, e.g. 139 would read as a crash).
inline int split_peer_exit_code(uint64_t b) { return b == 3 ? 3 : 1; }


}  // namespace ernic
