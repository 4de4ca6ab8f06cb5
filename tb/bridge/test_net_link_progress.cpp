// model/bridge/net_link: the split run's watchdog progress protocol
// (CONTROL kinds ProgressRequest 7 / ProgressReply 8, eth_proto.h;
// NetLink::read_progress and ask, the hub's relays, net_link_hub.cpp):
//   - a star's switch process asks the nodes' processes for their progress
//     itself while a node's request to another node goes through it: each
//     answer reaches its own asker (the relay ids apart from the switch's
//     own, net_link.h kRelayIdBase; commit 3190cdc);
//   - a request naming a node that is not the answering process's is
//     refused by name, and the asker goes on; kNodeHere is answered by the
//     process that gets it (a switch's too), a memory read of kNodeHere is
//     refused by the switch's reader; a node index no process runs fails
//     the switch's run by name;
//   - replies of the wrong kind are refused by the asker, relayed unchanged
//     by the switch; a reply nobody asked for fails the run of the
//     process it reaches by name (never taken for a later request's
//     answer); two processes asking each other at one instant, directly or
//     through the switch, both get their answers at that instant; a peer
//     that ends before answering is named: never a crash or a hang;
//   - a RunEnd whose how (NetControl::RunEndHow) is unknown fails the run
//     of the process it reaches by name (never read as "ended itself");
//     of two nodes' RunEnds at one instant the switch keeps the early stop
//     whichever came in first.
// Every process is a forked child (a SystemC kernel each, or a peer written
// by hand over NetPeer); they meet over Unix sockets.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tb/bridge/net_link_progress_harness.h"

using namespace net_link_progress;
using namespace net_link_test;

// 1. A star: at one instant the switch's process asks node 0's process for
// its progress (kNodeHere) and node 1's process asks for node 0's (relayed
// by the switch to node 0's process): node 0's process holds two requests
// from the switch at that instant, the switch's own and a relay, and each
// answer must reach its own asker (with relay ids drawn from the switch's
// own counter both are id 0: the switch's answer goes to node 1 and the
// relay's is refused as not asked, or the relay's is taken for the
// switch's and node 1 never hears). Later, each while the other is idle,
// node 1 asks the switch's own progress and the switch node 1's (test 1b
// asks both ways at one instant).
TEST(NetLinkProgress, SwitchOwnRequestsAndARelayedOneEachReachTheirAsker) {
  constexpr uint64_t kP0 = 4'100'000, kP1 = 3'300'000, kPs = 2'900'000;  // each process's progress (ps)
  const std::string s0 = sock("own0"), s1 = sock("own1");
  const uint64_t t1 = kAskAt + 1 * kUs, t2 = kAskAt + 2 * kUs;
  Proc sw, n0, n1;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = kPs;
  sw.asks = {{kAskAt, 0, kHere}, {t2, 1, kHere}};
  n0.connect = s0, n0.node = 0, n0.progress = kP0;
  n1.connect = s1, n1.node = 1, n1.progress = kP1;
  n1.asks = {{kAskAt, 0, 0}, {t1, 0, kHere}};
  const auto r = run_all("own", {proc(sw), proc(n0), proc(n1)});
  ASSERT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  ASSERT_EQ(r[1].rc, 0) << r[1].err << r[1].log;
  ASSERT_EQ(r[2].rc, 0) << r[2].err << r[2].log;
  auto at = [](uint64_t t) { return " at " + std::to_string(t); };
  // The switch's own requests: node 0's progress, then node 1's, each at its instant.
  EXPECT_EQ(lines(r[0].log, "ask "),
            (std::vector<std::string>{"ask 0 -> " + std::to_string(kP0) + at(kAskAt),
                                      "ask 1 -> " + std::to_string(kP1) + at(t2)}))
      << r[0].log;
  // Node 1's: node 0's progress (relayed), then the switch's (kNodeHere).
  EXPECT_EQ(lines(r[2].log, "ask "),
            (std::vector<std::string>{"ask 0 -> " + std::to_string(kP0) + at(kAskAt),
                                      "ask 1 -> " + std::to_string(kPs) + at(t1)}))
      << r[2].log;
  // Who was asked what: node 0's process for kNodeHere (the switch) and
  // for node 0 (node 1, relayed); node 1's and the switch's for kNodeHere.
  EXPECT_EQ(lines(r[1].log, "progress"), (std::vector<std::string>{"progress node=0", "progress node=255"}));
  EXPECT_EQ(lines(r[2].log, "progress"), (std::vector<std::string>{"progress node=255"}));
  EXPECT_EQ(lines(r[0].log, "progress"), (std::vector<std::string>{"progress node=255"}));
  // The switch: 2 requests of its own asked, 1 served (node 1's kNodeHere);
  // it took in at least its 2 answers, node 1's 2 requests and node 0's
  // answer to the relay (the nodes' RunEnds may come after its run ended).
  EXPECT_EQ(r[0].reads_asked, 2u);
  EXPECT_EQ(r[0].reads_served, 1u);
  EXPECT_GE(r[0].controls_received, 2u + 2u + 1u);
  EXPECT_EQ(r[1].reads_served, 2u);
  EXPECT_EQ(r[2].reads_served, 1u);
  for (const auto& o : r) EXPECT_LT(o.wall_s, 10.0);
}

// 1b. Asking each other at one instant: the switch's process asks node 1's
// for its progress while node 1's asks the switch's (kNodeHere), and, with
// two processes and no switch, A asks B while B asks A. Each serves the
// request it holds for that instant before it blocks for its own answer,
// so both answers come at that instant (before, both waited out the wall
// timeout and the watchdog read the peer as gone; about 1 run in 5, so a
// few rounds).
TEST(NetLinkProgress, TwoProcessesAskingEachOtherAtOneInstantBothGetAnswers) {
  constexpr uint64_t kPs = 7'700'000, kP0 = 1'100'000, kP1 = 2'200'000;
  const std::string want_sw = "ask 0 -> " + std::to_string(kP1) + " at " + std::to_string(kAskAt);
  const std::string want_n1 = "ask 0 -> " + std::to_string(kPs) + " at " + std::to_string(kAskAt);
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string s0 = sock("both0"), s1 = sock("both1"), s = sock("both");
    Proc sw, n0, n1;
    sw.listen = {s0, s1}, sw.hub = true, sw.progress = kPs;
    sw.asks = {{kAskAt, 1, kHere}};
    n0.connect = s0, n0.node = 0, n0.progress = kP0;
    n1.connect = s1, n1.node = 1, n1.progress = kP1;
    n1.asks = {{kAskAt, 0, kHere}};
    const auto r = run_all("both", {proc(sw), proc(n0), proc(n1)});
    for (const auto& o : r) ASSERT_EQ(o.rc, 0) << o.err << o.log;
    EXPECT_EQ(lines(r[0].log, "ask "), std::vector<std::string>{want_sw}) << r[0].log;
    EXPECT_EQ(lines(r[2].log, "ask "), std::vector<std::string>{want_n1}) << r[2].log;
    EXPECT_EQ(r[0].reads_served, 1u);
    EXPECT_EQ(r[2].reads_served, 1u);
    EXPECT_LT(r[0].wall_s, 4.0);  // the wall timeout is 5 s: nobody waited it out

    Proc a, b;
    a.listen = {s}, a.names = {"node B"}, a.node = 0, a.progress = kP0;
    a.asks = {{kAskAt, 0, kHere}};
    b.connect = s, b.connect_name = "node A", b.node = 1, b.progress = kP1;
    b.asks = {{kAskAt, 0, kHere}};
    const auto q = run_all("both2", {proc(a), proc(b)});
    for (const auto& o : q) ASSERT_EQ(o.rc, 0) << o.err << o.log;
    EXPECT_EQ(lines(q[0].log, "ask "),
              std::vector<std::string>{"ask 0 -> " + std::to_string(kP1) + " at " + std::to_string(kAskAt)});
    EXPECT_EQ(lines(q[1].log, "ask "),
              std::vector<std::string>{"ask 0 -> " + std::to_string(kP0) + " at " + std::to_string(kAskAt)});
    EXPECT_LT(q[0].wall_s, 4.0);
  }
}

// 1c. The same, with B written by hand so that the order is forced: B's
// request for A's progress, stamped T, is in A's process before A asks B
// at T, and B answers A only once it has its own answer (as a process
// blocked in its own request would). A serves what it holds for T before
// it blocks for B's answer: both get their answers at T.
TEST(NetLinkProgress, ARequestHeldForTheInstantIsServedBeforeAskingBlocks) {
  constexpr uint64_t kPa = 6'100'000, kPb = 9'200'000;
  const std::string s = sock("held");
  Proc a;
  a.listen = {s}, a.names = {"node B"}, a.node = 0, a.progress = kPa;
  a.asks = {{kAskAt, 0, kHere}};
  RawAct b = [&](NetPeer& p, std::ostream& log) {
    p.promise(kAskAt + kDelay + kPre);  // A may reach kAskAt, not pass it
    NetControl q;
    q.kind = NetControl::ProgressRequest, q.node = kHere, q.time_ps = kAskAt, q.id = 5;
    p.send_control(q);
    std::optional<NetControl> held;  // A's request, answered once B has its own answer
    bool answered = false;
    while (!answered || held) {
      p.recv_one(kTo);
      while (auto c = p.pop_control()) {
        if (c->kind == NetControl::ProgressRequest) held = *c;
        if (c->kind == NetControl::ProgressReply) {
          log << "reply id=" << c->id << " a=" << c->a << " t=" << c->time_ps << "\n";
          answered = true;
        }
      }
      if (answered && held) {
        p.send_control(reply(NetControl::ProgressReply, held->time_ps, held->id, kPb));
        held.reset();
        break;
      }
    }
    p.promise(kFar);
    raw_serve(p, log);
  };
  const auto r = run_all("held", {proc(a), raw(s, false, b)});
  ASSERT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  EXPECT_EQ(lines(r[0].log, "ask "),
            std::vector<std::string>{"ask 0 -> " + std::to_string(kPb) + " at " + std::to_string(kAskAt)})
      << r[0].log;
  EXPECT_EQ(lines(r[1].log, "reply "), std::vector<std::string>{"reply id=5 a=" + std::to_string(kPa) + " t=" +
                                                                std::to_string(kAskAt)})
      << r[1].log;
  EXPECT_LT(r[0].wall_s, 4.0);  // the wall timeout is 5 s: nobody waited it out
}

// 2a. Two processes: a request naming the answering process's node or
// kNodeHere is answered; one naming another node (5, or the asker's own 0)
// is refused by name, the reason carried back verbatim, and the asker goes
// on (the next request is answered; the run does not fail).
TEST(NetLinkProgress, ARequestForAnotherProcessesNodeIsRefusedByName) {
  constexpr uint64_t kPb = 6'600'000;
  const std::string s = sock("refuse");
  Proc a, b;
  a.listen = {s}, a.names = {"node B"}, a.node = 0, a.progress = 1;
  a.asks = {{kAskAt, 0, kHere}, {kAskAt, 0, 1}, {kAskAt, 0, 5}, {kAskAt + 1 * kUs, 0, 0}, {kAskAt + 2 * kUs, 0, 1}};
  b.connect = s, b.connect_name = "node A", b.node = 1, b.progress = kPb;
  const auto r = run_all("refuse", {proc(a), proc(b)});
  ASSERT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  ASSERT_EQ(r[1].rc, 0) << r[1].err << r[1].log;
  const std::string who = "node B refused a progress request: ";
  EXPECT_EQ(lines(r[0].log, "ask "),
            (std::vector<std::string>{"ask 0 -> " + std::to_string(kPb) + " at " + std::to_string(kAskAt),
                                      "ask 1 -> " + std::to_string(kPb) + " at " + std::to_string(kAskAt),
                                      "ask 2 error: " + who + "node index 5 is not this process's",
                                      "ask 3 error: " + who + "node index 0 is not this process's",
                                      "ask 4 -> " + std::to_string(kPb) + " at " + std::to_string(kAskAt + 2 * kUs)}))
      << r[0].log;
  // B's reader saw each node as A named it, in order.
  EXPECT_EQ(lines(r[1].log, "progress"),
            (std::vector<std::string>{"progress node=0", "progress node=1", "progress node=1", "progress node=255",
                                      "progress node=5"}));
  EXPECT_EQ(r[1].reads_served, 5u);  // refusals are answers too
  EXPECT_EQ(r[0].reads_asked, 5u);
  EXPECT_EQ(r[0].err, "");
}

// 2b. A star: kNodeHere sent to the switch's process is its own to answer
// (its progress; its reader sees kNodeHere), never relayed; a memory read
// of kNodeHere goes to the switch's reader too, which refuses it (the
// switch has no host memory), and node 1 goes on.
TEST(NetLinkProgress, NodeHereIsAnsweredByTheSwitchAndAReadOfItRefused) {
  constexpr uint64_t kPs = 8'800'000, kP0 = 1'500'000;
  const std::string s0 = sock("here0"), s1 = sock("here1");
  Proc sw, n0, n1;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = kPs;
  n0.connect = s0, n0.node = 0, n0.progress = kP0;
  n1.connect = s1, n1.node = 1, n1.progress = 2;
  Ask rd{kAskAt, 0, kHere, true, 0x1000, 4}, rd0{kAskAt + 2 * kUs, 0, 0, true, 0x2000, 3};
  n1.asks = {{kAskAt, 0, kHere}, rd, {kAskAt + 1 * kUs, 0, kHere}, rd0};
  const auto r = run_all("here", {proc(sw), proc(n0), proc(n1)});
  ASSERT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  ASSERT_EQ(r[1].rc, 0) << r[1].err << r[1].log;
  ASSERT_EQ(r[2].rc, 0) << r[2].err << r[2].log;
  std::string bytes0 = "ask 3 bytes";
  for (uint64_t i = 0; i < 3; ++i) bytes0 += " " + std::to_string(int(mem_byte(0, 0x2000 + i)));
  EXPECT_EQ(lines(r[2].log, "ask "),
            (std::vector<std::string>{"ask 0 -> " + std::to_string(kPs) + " at " + std::to_string(kAskAt),
                                      "ask 1 error: the switch refused a memory read: node index 255 is not this "
                                      "process's",
                                      "ask 2 -> " + std::to_string(kPs) + " at " + std::to_string(kAskAt + 1 * kUs),
                                      bytes0}))
      << r[2].log;
  EXPECT_EQ(lines(r[0].log, "progress"), (std::vector<std::string>{"progress node=255", "progress node=255"}));
  EXPECT_EQ(lines(r[0].log, "read"), (std::vector<std::string>{"read node=255"}));
  EXPECT_EQ(lines(r[1].log, "progress"), std::vector<std::string>{});  // nothing relayed to node 0 but the read
  EXPECT_EQ(lines(r[1].log, "read"), (std::vector<std::string>{"read node=0"}));
  EXPECT_EQ(r[0].reads_served, 3u);
}

// 2c. A star: a request for node index 2 when the switch's process has
// two nodes' processes fails the switch's run by name; its RunEnd carries
// the reason to both nodes; the asker is told its peer ended; nobody hangs.
TEST(NetLinkProgress, ANodeNoProcessRunsFailsTheSwitchByName) {
  const std::string s0 = sock("none0"), s1 = sock("none1");
  Proc sw, n0, n1;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = 1;
  n0.connect = s0, n0.node = 0, n0.progress = 2;
  n1.connect = s1, n1.node = 1, n1.progress = 3;
  n1.asks = {{kAskAt, 0, 2}};
  const auto r = run_all("none", {proc(sw), proc(n0), proc(n1)});
  const std::string why = "node 1's process: a progress request of node index 2, which no process here runs";
  EXPECT_EQ(r[0].rc, 3);
  EXPECT_EQ(r[0].err, why);
  EXPECT_EQ(lines(r[2].log, "ask "),
            (std::vector<std::string>{"ask 0 error: the switch: ended before answering a progress request"}))
      << r[2].log;
  for (int i : {1, 2}) {
    EXPECT_EQ(r[i].rc, 0) << r[i].err;
    EXPECT_EQ(lines(r[i].log, "peer_run_end"), (std::vector<std::string>{"peer_run_end 1 " + why})) << i;
  }
  EXPECT_EQ(lines(r[0].log, "progress"), std::vector<std::string>{});
  EXPECT_EQ(lines(r[1].log, "progress"), std::vector<std::string>{});
  EXPECT_LT(r[0].wall_s, 10.0);
}

// 3a. Two processes, B written by hand: B answers a progress request with a
// ReadReply and a memory read with a ProgressReply (each with the request's
// id): both refused by the asker as answered with another kind; the next
// request gets its right answer. B then ends without answering: named,
// and A's run ends cleanly (test 3d: a reply nobody asked for).
TEST(NetLinkProgress, RepliesOfTheWrongKindAreRefused) {
  constexpr uint64_t kWrong = 777'000, kRight = 3'141'000;
  const std::string s = sock("kind");
  Proc a;
  a.listen = {s}, a.names = {"node B"}, a.node = 0, a.progress = 1;
  a.asks = {{kAskAt, 0, kHere}, {kAskAt + 1 * kUs, 0, 1, true, 0x40, 8}, {kAskAt + 2 * kUs, 0, kHere},
            {kAskAt + 3 * kUs, 0, kHere}};
  RawAct b = [&](NetPeer& p, std::ostream& log) {
    p.promise(kFar);
    int n = 0;
    while (!p.peer_ended()) {
      p.recv_one(kTo);
      while (auto c = p.pop_control()) {
        if (c->kind != NetControl::ProgressRequest && c->kind != NetControl::ReadRequest) continue;
        log << "request " << int(c->kind) << " node=" << int(c->node) << " id=" << c->id << " t=" << c->time_ps << "\n";
        switch (n++) {
          case 0: p.send_control(reply(NetControl::ReadReply, c->time_ps, c->id, kWrong)); break;
          case 1: p.send_control(reply(NetControl::ProgressReply, c->time_ps, c->id, kWrong)); break;
          case 2: p.send_control(reply(NetControl::ProgressReply, c->time_ps, c->id, kRight)); break;
          default:
            p.terminate(kFar);  // gone without an answer; A's TERMINATE still read
            while (!p.peer_ended()) p.recv_one(kTo);
            return;
        }
      }
    }
  };
  const auto r = run_all("kind", {proc(a), raw(s, false, b)});
  ASSERT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  EXPECT_EQ(r[1].rc, 0);
  const std::string who = "node B";
  EXPECT_EQ(lines(r[0].log, "ask "),
            (std::vector<std::string>{"ask 0 error: " + who + ": a progress request answered with another kind",
                                      "ask 1 error: " + who + ": a memory read answered with another kind",
                                      "ask 2 -> " + std::to_string(kRight) + " at " + std::to_string(kAskAt + 2 * kUs),
                                      "ask 3 error: " + who + ": ended before answering a progress request"}))
      << r[0].log;
  // B saw A's 4 requests: the memory read of node 1, three for kNodeHere.
  const auto req = lines(r[1].log, "request ");
  ASSERT_EQ(req.size(), 4u) << r[1].log;
  EXPECT_TRUE(has(req[0], "request 3 node=1 ") && has(req[0], " t=" + std::to_string(kAskAt + 1 * kUs))) << req[0];
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(has(req[i], "request 7 node=255 ")) << req[i];
  EXPECT_EQ(r[0].controls_received, 3u);  // 3 answers
  EXPECT_EQ(r[0].reads_asked, 4u);
  EXPECT_LT(r[0].wall_s, 10.0);
}

// 3b. A star of the switch's process and two written by hand: node 1's
// request for node 0 (id 41) reaches node 0's process under a relay id
// (2^63 up, net_link.h: apart from the switch's own, which count from 0);
// node 0's process answers it with a ReadReply. The switch relays the
// answer as it came, kind and progress, under node 1's id 41; its run ends
// cleanly.
TEST(NetLinkProgress, TheSwitchRelaysAWrongKindAnswerUnderTheAskersId) {
  constexpr uint64_t kP0 = 5'050'000;
  const std::string s0 = sock("relay0"), s1 = sock("relay1");
  Proc sw;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = 1;
  RawAct n0 = [&](NetPeer& p, std::ostream& log) {
    p.promise(kFar);
    raw_serve(p, log, [&](const NetControl& c) {
      log << "request " << int(c.kind) << " node=" << int(c.node) << " t=" << c.time_ps << " id=" << c.id << "\n";
      p.send_control(reply(NetControl::ReadReply, c.time_ps, c.id, kP0));
    });
  };
  RawAct n1 = [&](NetPeer& p, std::ostream& log) {
    p.promise(kAskAt + kDelay + kPre);  // the switch may reach kAskAt, not pass it
    NetControl q;
    q.kind = NetControl::ProgressRequest, q.node = 0, q.time_ps = kAskAt, q.id = 41;
    p.send_control(q);
    bool got = false;
    while (!got) {
      p.recv_one(kTo);
      while (auto c = p.pop_control()) {
        log << "reply kind=" << int(c->kind) << " id=" << c->id << " a=" << c->a << " b=" << c->b << " t=" << c->time_ps
            << "\n";
        got = true;
      }
    }
    p.promise(kFar);
    raw_serve(p, log);
  };
  const auto r = run_all("relay", {proc(sw), raw(s0, false, n0), raw(s1, false, n1)});
  ASSERT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  EXPECT_EQ(r[1].rc, 0);
  EXPECT_EQ(r[2].rc, 0);
  const auto req = lines(r[1].log, "request ");
  ASSERT_EQ(req.size(), 1u) << r[1].log;
  const std::string head = "request 7 node=0 t=" + std::to_string(kAskAt) + " id=";
  ASSERT_EQ(req[0].rfind(head, 0), 0u) << req[0];
  const uint64_t relay_id = std::stoull(req[0].substr(head.size()));
  EXPECT_GE(relay_id, kRelayBase);
  EXPECT_NE(relay_id, 41u);
  EXPECT_EQ(lines(r[2].log, "reply "), (std::vector<std::string>{"reply kind=4 id=41 a=" + std::to_string(kP0) +
                                                                  " b=0 t=" + std::to_string(kAskAt)}))
      << r[2].log;
  EXPECT_EQ(lines(r[0].log, "progress"), std::vector<std::string>{});  // the switch answered nothing itself
  EXPECT_EQ(r[0].controls_received, 2u);  // node 1's request, node 0's reply
  EXPECT_EQ(r[0].controls_sent, 2u);      // the relay there and back
  for (int i : {1, 2}) EXPECT_EQ(lines(r[i].log, "runend"), (std::vector<std::string>{"runend 0 "})) << r[i].log;
}

// 3c. A star: node 0's process sends the switch's a ProgressReply with a
// relay id (2^63 + 5) that was never relayed, or with an id of the
// switch's own kind (7) that it never asked: the switch's run fails
// naming the sender and the id; both nodes get its RunEnd with the reason.
static void stray_to_switch(uint64_t bad) {
  const std::string s0 = sock("stray0"), s1 = sock("stray1");
  Proc sw;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = 1;
  RawAct n0 = [&](NetPeer& p, std::ostream& log) {
    p.promise(kAskAt + kDelay + kPre);
    p.send_control(reply(NetControl::ProgressReply, kAskAt, bad, 42));
    p.promise(kFar);
    raw_serve(p, log);
  };
  RawAct n1 = [&](NetPeer& p, std::ostream& log) {
    try {
      p.promise(kFar);
    } catch (const NetPeerError&) {  // the switch's run may have failed and closed already
    }
    raw_serve(p, log);
  };
  const auto r = run_all("stray", {proc(sw), raw(s0, false, n0), raw(s1, false, n1)});
  const std::string why = "node 0's process: an answer to request " + std::to_string(bad) + ", which was not asked";
  EXPECT_EQ(r[0].rc, 3);
  EXPECT_EQ(r[0].err, why);
  for (int i : {1, 2}) {
    EXPECT_EQ(r[i].rc, 0);
    EXPECT_EQ(lines(r[i].log, "runend"), (std::vector<std::string>{"runend 1 " + why})) << r[i].log;
  }
  EXPECT_EQ(r[0].controls_received, 1u);
  EXPECT_LT(r[0].wall_s, 10.0);
}
TEST(NetLinkProgress, AnAnswerToARelayNeverAskedFailsTheSwitchByName) { stray_to_switch(kRelayBase + 5); }
TEST(NetLinkProgress, AnAnswerToItsOwnRequestNeverAskedFailsTheSwitchByName) { stray_to_switch(7); }

// 3d. Two processes, B written by hand: B answers A's request (id 0) right,
// but first sends a ProgressReply to id 1, the id A's next request will
// have. A refuses it at once: its run fails naming B and the id, the
// request being asked reports the same, and the stray is never taken for
// the next request's answer (A's second request is never asked).
TEST(NetLinkProgress, AReplyToTheNextRequestsIdFailsTheRunInsteadOfAnsweringIt) {
  constexpr uint64_t kRight = 4'400'000, kStray = 999'999;
  const std::string s = sock("next");
  Proc a;
  a.listen = {s}, a.names = {"node B"}, a.node = 0, a.progress = 1;
  a.asks = {{kAskAt, 0, kHere}, {kAskAt + 1 * kUs, 0, kHere}};
  RawAct b = [&](NetPeer& p, std::ostream& log) {
    p.promise(kFar);
    raw_serve(p, log, [&](const NetControl& c) {
      if (c.kind != NetControl::ProgressRequest) return;
      log << "request id=" << c.id << "\n";
      try {
        p.send_control(reply(NetControl::ProgressReply, c.time_ps, c.id + 1, kStray));
        p.send_control(reply(NetControl::ProgressReply, c.time_ps, c.id, kRight));
      } catch (const NetPeerError&) {  // A may have failed on the first and closed before the second
      }
    });
  };
  const auto r = run_all("next", {proc(a), raw(s, false, b)});
  const std::string why = "node B: an answer to request 1, which was not asked";
  EXPECT_EQ(r[0].rc, 3);
  EXPECT_EQ(r[0].err, why);
  EXPECT_EQ(lines(r[0].log, "ask "), std::vector<std::string>{"ask 0 error: " + why}) << r[0].log;
  EXPECT_EQ(lines(r[1].log, "request "), std::vector<std::string>{"request id=0"}) << r[1].log;
  EXPECT_EQ(lines(r[1].log, "runend"), std::vector<std::string>{"runend 1 " + why}) << r[1].log;
  EXPECT_EQ(r[0].reads_asked, 1u);
  EXPECT_LT(r[0].wall_s, 10.0);
}

// 4. Two processes, B written by hand: B ends its run with a RunEnd whose
// how is 3 (RunEndHow knows 0 to 2). A cannot tell whether to stop there:
// its run fails at once naming B and the value, and B hears A's RunEnd with
// that reason; A's watchdog never asks.
TEST(NetLinkProgress, ARunEndWithAnUnknownHowFailsTheRunByName) {
  const std::string s = sock("how");
  Proc a;
  a.listen = {s}, a.names = {"node B"}, a.node = 0, a.progress = 1;
  RawAct b = [&](NetPeer& p, std::ostream& log) {
    NetControl e;
    e.kind = NetControl::RunEnd, e.time_ps = 2 * kUs, e.a = 3, e.b = 0;
    try {
      p.promise(2 * kUs);
      p.send_control(e);
    } catch (const NetPeerError&) {
    }
    raw_serve(p, log);
  };
  const auto r = run_all("how", {proc(a), raw(s, false, b)});
  const std::string why = "node B: a RunEnd whose how is 3 (known: 0 to 2)";
  EXPECT_EQ(r[0].rc, 3);
  EXPECT_EQ(r[0].err, why);
  EXPECT_EQ(lines(r[1].log, "runend"), std::vector<std::string>{"runend 1 " + why}) << r[1].log;
  EXPECT_EQ(r[0].reads_asked, 0u);
  EXPECT_LT(r[0].wall_s, 10.0);
}

// A star's node written by hand, promising as a node's process does (a
// SYNC with NetSyncInfo: its next activity `hold`, so the switch's process
// may reach `hold` while a CONTROL stamped then may still come): it waits
// lag_ms of wall time, then sends a RunEnd stamped `at` (how, exit code,
// reason) and promises far ahead.
RawAct ending_node(uint64_t hold, uint64_t at, uint8_t how, uint64_t code, const std::string& why, int lag_ms) {
  return [=](NetPeer& p, std::ostream& log) {
    NetControl e;
    e.kind = NetControl::RunEnd, e.time_ps = at, e.a = how, e.b = code;
    e.data.assign(why.begin(), why.end());
    try {
      p.promise(hold + kDelay, NetSyncInfo{hold, p.taken_in(), kDelay, std::nullopt, std::nullopt});
      std::this_thread::sleep_for(std::chrono::milliseconds(lag_ms));
      p.send_control(e);
      p.promise(kFar);
    } catch (const NetPeerError&) {
    }
    raw_serve(p, log);
  };
}

// 5. A star, both nodes written by hand: at one instant node 0's run ends
// by itself (how 0, exit code 1) and node 1's is stopped by its watchdog
// (how 2, exit code 3). The switch's process keeps node 1's end, the early
// stop it must pass on, whether node 0's RunEnd reaches it first or last
// (each node waits `lag` of wall time before sending). Its watcher (as
// System's, passing over an end that changes nothing) hears `heard` at
// 2 us: node 1's end at that instant even when it came after node 0's had
// been taken and passed over.
void same_instant_ends(int lag0_ms, int lag1_ms, const std::vector<std::string>& heard) {
  const std::string tag = "ends" + std::to_string(lag0_ms), s0 = sock(tag + "0"), s1 = sock(tag + "1");
  Proc sw;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = 1, sw.watch_ends = true;
  auto node = [&](uint8_t how, uint64_t code, const std::string& why, int lag_ms) {
    return ending_node(2 * kUs, 2 * kUs, how, code, why, lag_ms);
  };
  const auto r = run_all(tag, {proc(sw), raw(s0, false, node(0, 1, "ended itself", lag0_ms)),
                               raw(s1, false, node(2, 3, "its watchdog", lag1_ms))});
  EXPECT_EQ(r[0].rc, 0) << r[0].err;
  EXPECT_EQ(lines(r[0].log, "peer_run_end"), (std::vector<std::string>{"peer_run_end 3 its watchdog"})) << r[0].log;
  EXPECT_EQ(lines(r[0].log, "run_end_how"), (std::vector<std::string>{"run_end_how 2"})) << r[0].log;
  EXPECT_EQ(lines(r[0].log, "end_at"), heard) << r[0].log;
  EXPECT_LT(r[0].wall_s, 10.0);
}
TEST(NetLinkProgress, OfTwoEndsAtOneInstantTheSwitchKeepsTheEarlyStopWhenItComesLast) {
  same_instant_ends(0, 300, {"end_at 2000000 1 0 ended itself", "end_at 2000000 3 2 its watchdog"});
}
TEST(NetLinkProgress, OfTwoEndsAtOneInstantTheSwitchKeepsTheEarlyStopWhenItComesFirst) {
  same_instant_ends(300, 0, {"end_at 2000000 3 2 its watchdog"});
}

// 6. A star, both nodes written by hand: node 0's run stops at 2 us (its
// watchdog), node 1's at 3 us (after an error). Node 0's RunEnd reaches
// the switch's process first; node 1 holds the switch before 2 us (it
// promises 1 us and waits 300 ms of wall time), then sends its own. Each
// RunEnd is the link's at its own instant: node 0's at 2 us, node 1's at
// 3 us once the first is passed over. (The link kept one RunEnd: the later
// one wrote over the earlier, which was then reported at 2 us.)
TEST(NetLinkProgress, ALaterStampedRunEndWaitsForItsInstantInsteadOfOverwritingAnEarlierOne) {
  const std::string s0 = sock("later0"), s1 = sock("later1");
  Proc sw;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = 1, sw.watch_ends = true;
  auto node = [&](uint64_t at, uint8_t how, uint64_t code, const std::string& why, int lag_ms) {
    return ending_node(1 * kUs, at, how, code, why, lag_ms);
  };
  const auto r = run_all("later", {proc(sw), raw(s0, false, node(2 * kUs, 2, 3, "its watchdog", 0)),
                                   raw(s1, false, node(3 * kUs, 1, 1, "after its error", 300))});
  EXPECT_EQ(r[0].rc, 0) << r[0].err;
  EXPECT_EQ(lines(r[0].log, "end_at"), (std::vector<std::string>{"end_at 2000000 3 2 its watchdog",
                                                                   "end_at 3000000 1 1 after its error"}))
      << r[0].log;
  EXPECT_LT(r[0].wall_s, 10.0);
}
