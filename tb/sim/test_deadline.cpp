// model/sim/deadline.h: a wait for events or a deadline returns when the
// first of them comes, as sc_core::wait(t, ev) does, also when the
// deadline moves later at every wait (its earlier notifications wake the
// thread at times it must not return at).
#include <gtest/gtest.h>

#include <systemc>
#include <vector>

#include "model/sim/clock.h"
#include "model/sim/deadline.h"
#include "tb/common/sc_runner.h"

using namespace sc_core;
using namespace ernic;

using test::Runner;

namespace {
constexpr uint64_t kNs = 1000;  // ps
}

// The local ACK timer's pattern: each event pushes the deadline 50 ns past
// it. The thread returns at the events (10, 20, 30 ns) and then at the last
// deadline (80 ns), never at the deadlines passed over (60, 70 ns), and in
// the delta cycle of each event.
TEST(Deadline, DeadlinePushedLaterReturnsOnlyAtEventsAndTheLastDeadline) {
  sc_set_time_resolution(1, SC_PS);
  sc_event ev;
  std::vector<uint64_t> at;
  std::vector<bool> by_event;
  Runner waiter("waiter", [&] {
    Deadline d{&ev};
    for (int i = 0; i < 4; ++i) {
      d.wait_until(ClockDomain::now_ps() + 50 * kNs);
      at.push_back(ClockDomain::now_ps());
      by_event.push_back(ev.triggered());
    }
  });
  Runner source("source", [&] {
    for (int i = 0; i < 3; ++i) {
      wait(sc_time(10, SC_NS));
      ev.notify(SC_ZERO_TIME);
    }
  });
  sc_start();
  EXPECT_EQ(at, (std::vector<uint64_t>{10 * kNs, 20 * kNs, 30 * kNs, 80 * kNs}));
  EXPECT_EQ(by_event, (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(ClockDomain::now_ps(), 80 * kNs);  // the notifications left behind (60, 70 ns) came before
}

// A deadline moved earlier than the pending notification replaces it; one
// at the current time returns at once; several events in the list.
TEST(Deadline, DeadlineMovedEarlierAndAnyOfSeveralEvents) {
  sc_set_time_resolution(1, SC_PS);
  sc_event a, b;
  std::vector<uint64_t> at;
  Runner waiter("waiter", [&] {
    Deadline d{&a, &b};
    d.wait_until(100 * kNs);  // b at 10 ns
    at.push_back(ClockDomain::now_ps());
    d.wait_until(40 * kNs);   // earlier than the pending 100 ns: returns at 40 ns
    at.push_back(ClockDomain::now_ps());
    d.wait_until(40 * kNs);   // not after now: returns at once
    at.push_back(ClockDomain::now_ps());
    d.wait_until(200 * kNs);  // a at 50 ns (the 100 ns notification is still pending)
    at.push_back(ClockDomain::now_ps());
    d.wait_until(150 * kNs);  // nothing: 150 ns, not the pending 100 ns
    at.push_back(ClockDomain::now_ps());
  });
  Runner source("source", [&] {
    wait(sc_time(10, SC_NS));
    b.notify();
    wait(sc_time(40, SC_NS));
    a.notify(SC_ZERO_TIME);
  });
  sc_start();
  EXPECT_EQ(at, (std::vector<uint64_t>{10 * kNs, 40 * kNs, 40 * kNs, 50 * kNs, 150 * kNs}));
}
