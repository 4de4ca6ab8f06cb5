// model/sim/settle.h and model/sim/instant_order.h: at one instant, the
// order of grants and releases follows ranks and stages, never the order
// in which the kernel runs the processes (each test makes its threads in an
// order that is not the answer) nor the delta cycle a process came in.
#include <gtest/gtest.h>

#include <string>
#include <systemc>
#include <vector>

#include "model/sim/clock.h"
#include "model/sim/instant_order.h"
#include "model/sim/settle.h"
#include "tb/common/sc_runner.h"

using namespace sc_core;
using namespace ernic;

using test::Runner;

// Requesters that enter at one instant are served by rank once the instant
// has settled, whatever delta cycle each entered in ("late_low" enters five
// delta cycles after the others and still goes first); one at a time, each
// at a settled point; no simulated time passes.
TEST(InstantOrder, OneInstantByRankWhateverTheDeltaCycle) {
  sc_set_time_resolution(1, SC_PS);
  InstantOrder order;
  std::vector<std::string> served;
  std::vector<uint64_t> at;
  bool busy_done = false;
  auto user = [&](const char* tag, uint32_t rank, int deltas) {
    return [&, tag, rank, deltas] {
      wait(sc_time(10, SC_NS));
      for (int i = 0; i < deltas; ++i) wait(SC_ZERO_TIME);
      const InstantOrder::Turn turn(&order, rank);
      EXPECT_TRUE(busy_done) << tag << " served before the instant settled";
      served.push_back(tag);
      at.push_back(ClockDomain::now_ps());
    };
  };
  // Keeps the instant busy for 20 delta cycles: no grant before it is done.
  Runner busy("busy", [&] {
    wait(sc_time(10, SC_NS));
    for (int i = 0; i < 20; ++i) wait(SC_ZERO_TIME);
    busy_done = true;
  });
  Runner a("high", user("high", 9, 0)), b("late_low", user("late_low", 0, 5)), c("mid", user("mid", 5, 0)),
      d("low", user("low", 1, 0));
  sc_start();
  EXPECT_EQ(served, (std::vector<std::string>{"late_low", "low", "mid", "high"}));
  EXPECT_EQ(at, (std::vector<uint64_t>{10000, 10000, 10000, 10000}));
}

// A holder may wait while it holds its turn (the ERNIC's TX queue, for
// room); requesters left from an earlier instant then go before a lower
// rank of the instant the holder leaves at.
TEST(InstantOrder, LeftFromAnEarlierInstantGoFirst) {
  sc_set_time_resolution(1, SC_PS);
  InstantOrder order;
  std::vector<std::string> served;
  std::vector<uint64_t> at;
  auto user = [&](const char* tag, uint32_t rank, uint64_t at_ns, uint64_t hold_ns) {
    return [&, tag, rank, at_ns, hold_ns] {
      wait(sc_time(double(at_ns), SC_NS));
      const InstantOrder::Turn turn(&order, rank);
      served.push_back(tag);
      at.push_back(ClockDomain::now_ps());
      if (hold_ns) wait(sc_time(double(hold_ns), SC_NS));
    };
  };
  Runner a("low_at_15", user("low_at_15", 0, 15, 0)), b("early_at_7", user("early_at_7", 8, 7, 0)),
      c("holder", user("holder", 9, 5, 10)), d("mid_at_7", user("mid_at_7", 3, 7, 0));
  sc_start();
  EXPECT_EQ(served, (std::vector<std::string>{"holder", "mid_at_7", "early_at_7", "low_at_15"}));
  EXPECT_EQ(at, (std::vector<uint64_t>{5000, 15000, 15000, 15000}));
}

// A process killed while it waits for its turn leaves nothing behind: the
// others are served as if it had never asked (its entry, which names it,
// is gone with it).
TEST(InstantOrder, AProcessKilledWhileWaitingLeavesNoEntry) {
  sc_set_time_resolution(1, SC_PS);
  InstantOrder order;
  std::vector<std::string> served;
  sc_process_handle victim;
  Runner v("victim", [&] {
    victim = sc_get_current_process_handle();
    wait(sc_time(10, SC_NS));
    const InstantOrder::Turn turn(&order, 0);
    served.push_back("victim");
  });
  Runner o("other", [&] {
    wait(sc_time(10, SC_NS));
    const InstantOrder::Turn turn(&order, 1);
    served.push_back("other");
  });
  Runner k("killer", [&] {
    wait(sc_time(10, SC_NS));
    wait(SC_ZERO_TIME);  // the victim has entered; the instant has not settled
    victim.kill();
  });
  sc_start();
  EXPECT_EQ(served, (std::vector<std::string>{"other"}));
  EXPECT_FALSE(order.wants());
}

// Threads waiting for the settled point are released by (stage, rank,
// arrival), one per settled point, after the orders' grants; each runs in

// Two processes of one rank at one instant go in the order of their names,
// not in the order they entered (which the kernel chose: gen10/z3168, two
// threads of one node on one DMA master). "b_enters_first" enters three
// delta cycles before "a_enters_late" and still goes second; a lower rank
// goes first whatever its name.
TEST(InstantOrder, OneRankAtOneInstantByProcessName) {
  sc_set_time_resolution(1, SC_PS);
  InstantOrder order;
  std::vector<std::string> served;
  auto user = [&](const char* tag, uint32_t rank, int deltas) {
    return [&, tag, rank, deltas] {
      wait(sc_time(10, SC_NS));
      for (int i = 0; i < deltas; ++i) wait(SC_ZERO_TIME);
      const InstantOrder::Turn turn(&order, rank);
      served.push_back(tag);
    };
  };
  Runner z("z_low_rank", user("z_low_rank", 1, 2)), b("b_enters_first", user("b_enters_first", 4, 0)),
      a("a_enters_late", user("a_enters_late", 4, 3));
  sc_start();
  EXPECT_EQ(served, (std::vector<std::string>{"z_low_rank", "a_enters_late", "b_enters_first"}));
}
// a settled instant, and the last (the link's, which then blocks for its
// peers) finds nothing at all pending, not even the service's next look.
TEST(Settle, ReleasedByStageThenRankAfterTheGrants) {
  sc_set_time_resolution(1, SC_PS);
  InstantOrder order;
  std::vector<std::string> seen;
  auto waiter = [&](const char* tag, settle::Stage s, uint64_t rank) {
    return [&, tag, s, rank] {
      wait(sc_time(10, SC_NS));
      settle::wait_settled(s, rank);
      if (s == settle::Stage::kLink) {
        EXPECT_FALSE(sc_pending_activity_at_current_time());
      }
      seen.push_back(tag);
      wait(SC_ZERO_TIME);  // activity of its own: the next one waits for it
      seen.push_back(std::string(tag) + " done");
    };
  };
  Runner a("link", waiter("link", settle::Stage::kLink, 0)), b("step2", waiter("step2", settle::Stage::kStep, 2)),
      c("peer_end", waiter("peer_end", settle::Stage::kPeerEnd, 0)),
      d("step1", waiter("step1", settle::Stage::kStep, 1)), e("grant", [&] {
        wait(sc_time(10, SC_NS));
        wait(SC_ZERO_TIME);
        const InstantOrder::Turn turn(&order, 0);
        seen.push_back("grant");
      });
  sc_start();
  EXPECT_EQ(seen, (std::vector<std::string>{"grant", "step1", "step1 done", "step2", "step2 done", "peer_end",
                                            "peer_end done", "link", "link done"}));
  EXPECT_EQ(sc_time_stamp().value(), 10000u);
}
