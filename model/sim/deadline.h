// model/sim: a thread's wait for events or a deadline, whichever comes
// first, that leaves nothing behind in SystemC's timed queue when an event
// comes first (issue 17).
//
// sc_core::wait(t, ev) puts a timeout into the kernel's timed queue (a
// binary heap); when ev wins, the timeout is cancelled but its entry stays
// in the heap until its time comes. A deadline pushed back at every packet
// (the local ACK timer, milliseconds away) left one entry per packet: a
// 4 MiB WRITE stream kept about 1,100 of them, and every timed notification
// of the run (the RTL datapath's edges above all) paid for that heap.
// A Deadline owns one sc_event for its deadline. sc_event::notify keeps a
// pending notification that is earlier than the new one (IEEE 1666-2011,
// sc_event::notify), so a deadline moved later costs no entry: the thread wakes at
// the old time, finds it early and waits again, with no other effect. A
// deadline moved earlier replaces the pending one (one entry left behind,
// as with wait(t, ev)).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <systemc>
#include <vector>

namespace ernic {

class Deadline {
 public:
  // The events that end a wait besides the deadline (fixed for the
  // object's life).
  Deadline(std::initializer_list<const sc_core::sc_event*> events = {}) : events_(events) {
    for (const sc_core::sc_event* e : events_) any_ |= *e;
    any_ |= timer_;
  }

  // As sc_core::wait(t_ps - now, events...): returns at t_ps (simulated
  // ps, > now) or in the delta one of the events triggers in, whichever is
  // first. That equivalence holds for delta and timed notifications of the
  // events (tb/sim/test_deadline.cpp); after an immediate notify() the
  // delta it returns in may differ from wait(t, ev)'s: notify events a
  // Deadline waits on with SC_ZERO_TIME or later (every user does).
  void wait_until(uint64_t t_ps) {
    for (;;) {
      if (sc_core::sc_time_stamp().value() >= t_ps) return;
      arm(t_ps);
      sc_core::wait(any_);
      if (sc_core::sc_time_stamp().value() >= t_ps) return;
      for (const sc_core::sc_event* e : events_)
        if (e->triggered()) return;
      // Only an earlier deadline's notification: wait on.
    }
  }

  // For a thread whose events change from wait to wait (it loops the same
  // way itself): the deadline's event, notified for t_ps (> now) unless a
  // notification at or before t_ps is pending.
  const sc_core::sc_event& arm(uint64_t t_ps) {
    timer_.notify(sc_core::sc_time::from_value(t_ps - sc_core::sc_time_stamp().value()));
    return timer_;
  }

 private:
  std::vector<const sc_core::sc_event*> events_;
  sc_core::sc_event timer_;
  sc_core::sc_event_or_list any_;
};

}  // namespace ernic
