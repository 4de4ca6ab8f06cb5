// model/bridge/net_link: StepQuery and StepUnderway (eth_proto.h; issue
// 16). A process asks whether another's part of a step is still under way
// at an instant; the other answers at that instant once nothing is left to
// run at it (NetLink::serve_queries), and only when its part is under way;
// a star's switch process relays the query to every other node's process,
// answers it itself, and relays the answers. The processes are forked
// children meeting over Unix sockets (tb/bridge/net_link_progress_harness.h);
// the asking end is written by hand.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tb/bridge/net_link_progress_harness.h"

using namespace net_link_progress;
using namespace net_link_test;

namespace {

constexpr uint64_t kStep = uint64_t(1) << 32 | 2;  // lane 1's second step (System::split_tag)

NetControl query(uint64_t at) {
  NetControl q;
  q.kind = NetControl::StepQuery, q.time_ps = at, q.id = kStep;
  return q;
}

// The hand-written asker: it may reach kAskAt (its promise lets the other
// end reach it, not pass it), asks there, then promises far and logs what
// comes back ("underway <id> at <ps>").
RawAct asker() {
  return [](NetPeer& p, std::ostream& log) {
    p.promise(kAskAt + kDelay + kPre);
    p.send_control(query(kAskAt));
    p.promise(kFar);
    raw_serve(p, log, [&](const NetControl& c) {
      log << (c.kind == NetControl::StepUnderway ? "underway " : "other ") << c.id << " at " << c.time_ps << "\n";
    });
  };
}

std::string underway_at(uint64_t t) { return "underway " + std::to_string(kStep) + " at " + std::to_string(t); }

// One process whose own thread runs three delta cycles at the query's
// instant: its answer waits for them (settled), then says what its part
// is. Returns (the answering process's log, the asker's).
std::pair<std::string, std::string> ask_once(const std::string& tag, std::optional<bool> underway) {
  const std::string s = sock(tag);
  Proc a;
  a.listen = {s}, a.names = {"node B"}, a.node = 0, a.underway = underway, a.busy_at = kAskAt;
  const auto r = run_all(tag, {proc(a), raw(s, false, asker())});
  EXPECT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  EXPECT_LT(r[0].wall_s, 4.0);  // the wall timeout is 5 s: nobody waited it out
  return {r[0].log, r[1].log};
}

}  // namespace

// Under way: one StepUnderway with the query's id, stamped at its instant,
// asked of the process once its busy thread is done (not before: an answer
// taken while something ran there could miss a step's end at that instant).
TEST(NetLinkQuery, AStepUnderWayIsSaidAtTheQuerysInstantOnceItHasSettled) {
  const auto [a, b] = ask_once("qunder", true);
  EXPECT_EQ(lines(a, "query "), std::vector<std::string>{"query step=" + std::to_string(kStep) + " at " +
                                                         std::to_string(kAskAt) + " busy done"})
      << a;
  EXPECT_EQ(lines(b, "underway "), std::vector<std::string>{underway_at(kAskAt)}) << b;
  EXPECT_EQ(lines(b, "other "), std::vector<std::string>{}) << b;
}

// Over (its StepEnd went out already): nothing is said.
TEST(NetLinkQuery, AStepWhosePartIsOverGetsNoAnswer) {
  const auto [a, b] = ask_once("qover", false);
  EXPECT_EQ(lines(a, "query ").size(), 1u) << a;
  EXPECT_EQ(lines(b, "underway "), std::vector<std::string>{}) << b;
}

// Not begun there: asked again at each settled point of the instant (its
// lane may still begin it there), then dropped once time moves on; never
// answered, and the process is not held at that instant.
TEST(NetLinkQuery, AStepNotBegunIsAskedAgainAtTheInstantThenDropped) {
  const auto [a, b] = ask_once("qnotyet", std::nullopt);
  const std::vector<std::string> asked = lines(a, "query ");
  ASSERT_FALSE(asked.empty()) << a;
  for (const std::string& l : asked)
    EXPECT_EQ(l, "query step=" + std::to_string(kStep) + " at " + std::to_string(kAskAt) + " busy done") << a;
  EXPECT_EQ(lines(b, "underway "), std::vector<std::string>{}) << b;
}

// A star: node 0 asks; the switch's process relays the query to node 1 and
// answers it itself (its own part under way); node 1 answers too, and the
// switch relays that to node 0. Node 0 hears both answers, node 1 hears the
// switch's, and the query reaches node 1 with its instant and id.
TEST(NetLinkQuery, TheSwitchRelaysAQueryAndItsAnswersAndAnswersItself) {
  const std::string s0 = sock("qstar0"), s1 = sock("qstar1");
  Proc sw;
  sw.listen = {s0, s1}, sw.hub = true, sw.underway = true;
  RawAct answering = [](NetPeer& p, std::ostream& log) {
    p.promise(kAskAt + kDelay + kPre);
    bool answered = false;
    raw_serve(p, log, [&](const NetControl& c) {
      log << (c.kind == NetControl::StepQuery ? "query " : c.kind == NetControl::StepUnderway ? "underway " : "other ")
          << c.id << " at " << c.time_ps << "\n";
      if (c.kind == NetControl::StepQuery && !answered) {
        NetControl u;
        u.kind = NetControl::StepUnderway, u.time_ps = c.time_ps, u.id = c.id;
        p.send_control(u);
        answered = true;
        p.promise(kFar);
      }
    });
  };
  const auto r = run_all("qstar", {proc(sw), raw(s0, false, asker()), raw(s1, false, answering)});
  EXPECT_EQ(r[0].rc, 0) << r[0].err << r[0].log;
  EXPECT_EQ(lines(r[0].log, "query ").size(), 1u) << r[0].log;
  EXPECT_EQ(lines(r[1].log, "underway "), (std::vector<std::string>{underway_at(kAskAt), underway_at(kAskAt)}))
      << r[1].log;
  EXPECT_EQ(lines(r[2].log, "query "), std::vector<std::string>{"query " + std::to_string(kStep) + " at " +
                                                                std::to_string(kAskAt)})
      << r[2].log;
  EXPECT_EQ(lines(r[2].log, "underway "), std::vector<std::string>{underway_at(kAskAt)}) << r[2].log;
  EXPECT_LT(r[0].wall_s, 4.0);
}
