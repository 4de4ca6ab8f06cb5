// model/system: the step runner: runs the scenario's steps in order, each
// by the handler of its kind (std::visit over the Step variant; the
// handlers are in steps_*.cpp); the watchdog, the end-of-run checks,
// failures; and the control-flow steps (wait, barrier, repeat, parallel).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "model/system/system.h"

#include <fmt/format.h>

#include "model/sim/settle.h"

namespace ernic {

using namespace sc_core;

void System::runner() {
  run_steps(scenario.steps, nullptr);
  finished = true;
  end_checks();
  sc_stop();
}

// Canaries: the guard bytes the driver placed around every MR are intact
// (nothing wrote past an MR, whatever the scenario expected).
void System::end_checks() {
  // split: the wire monitors' events not yet fed, once the others' before now are in
  if (net_link_ && !wire_monitors.empty() && sc_is_running()) net_link_->await_watches();
  monitor_feed(~uint64_t(0));
  for (auto& n : nodes)
    if (n->driver)
      for (const std::string& e : n->driver->check_mr_guards()) ctx.error(n->cfg.name + " host memory", e);
  for (const std::string& e : scoreboard.check_all()) fail(SourceLoc{}, e + " (end of run)");
}

void System::run_steps(const std::vector<Step>& steps, Group* g) {
  const std::string base = lane().path;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const std::string place = base + fmt::format("{:08x}", i);
    SplitLane& ln = lane();
    step_boundary(ln.id);
    const bool branch = ln.id != 0;  // a parallel's branch (TxLog: its instants' steps in order)
    if (lane_stopped()) return;
    ln.failed = false;
    ln.ending = false;
    ln.asked_ps = ln.underway_ps = ~uint64_t(0);  // the lanes behind ask again of this step
    StepRecord rec{step_kind(s), step_loc(s), sc_time_stamp().value(), 0, ""};
    if (ctx.log) ctx.log->step(sc_time_stamp().value(), step_loc(s).str(), step_kind(s), "start", "", place + "0", branch);
    const bool repeat = std::holds_alternative<std::shared_ptr<RepeatStep>>(s);
    ln.path = place + "1";
    const uint64_t seq = ++ln.seq;
    ln.loc = step_loc(s);
    ln.kind = step_kind(s);
    try {
      // Split (split.h): the step's participants act; both processes end
      // it together (a repeat's steps each do).
      if (!split() || repeat || split_participates(s)) run_step(s, g);
    } catch (const SplitPartnerFailed&) {
      // The other end's step failed before it traded (split_trade): its
      // failure, taken at the step's end below, ends this one.
    } catch (const host::DriverError& e) {
      fail(step_loc(s), e.what());
    } catch (const std::exception& e) {
      fail(step_loc(s), std::string("internal error: ") + e.what());
    }
    if (split() && !repeat) {
      ln.seq = seq;
      ln.loc = step_loc(s);
      ln.kind = step_kind(s);
      // The lanes behind wait for the other processes' end (step_boundary):
      // one certain to be now or already in (end_due_ps), or one that may
      // be now, asked about (awaiting_end).
      const uint64_t now = sc_time_stamp().value();
      struct EndDue {
        System& sys;
        SplitLane& ln;
        ~EndDue() {
          const bool held = ln.end_due_ps != ~uint64_t(0) || ln.awaiting_end;
          ln.end_due_ps = ~uint64_t(0);
          ln.awaiting_end = false;
          if (held) sys.lane_end_ev_.notify(SC_ZERO_TIME);
        }
      } due{*this, ln};
      ln.ending = true;
      if (split_peer_passes(s)) ln.end_due_ps = now;
      else ln.awaiting_end = split_lanes_wait();
      try {
        split_barrier();
      } catch (const std::exception& e) {
        fail(step_loc(s), e.what());
      }
    }
    step_boundary(ln.id);
    rec.end_ps = sc_time_stamp().value();
    rec.order = place + "2";  // its end's order (after what ran inside it)
    // By end, then place: a parallel's branches ending at one instant are
    // listed alike whichever the kernel ran first (one process or split).
    auto at = steps_done.end();
    while (at != steps_done.begin() && (at[-1].end_ps > rec.end_ps ||
                                        (at[-1].end_ps == rec.end_ps && at[-1].order > rec.order)))
      --at;
    steps_done.insert(at, std::move(rec));
    ln.path = base;
    // A branch's step failed itself; one of the scenario's own lane ends
    // in a failed run (another process's failure before this instant
    // counts as in one process, where it set exit_code: lane_stopped).
    const bool failed = branch ? ln.failed : run_failed_before(rec.end_ps);
    if (ctx.log)
      ctx.log->step(sc_time_stamp().value(), step_loc(s).str(), step_kind(s), "end", failed ? "failed" : "",
                    place + "2", branch);
  }
}

// A step starts and ends once its instant has settled (model/sim/settle.h):
// every process the instant woke has run, so what the step does, and its
// end, come after them whatever order the kernel woke them in, and a split
// run (model/system/split.h), whose processes learn of a step's end only
// after their own instant has settled, puts them at the same point (e.g.
// another node's DMA the step did not wait for is logged before the end).
// Parallel branches pass theirs one per settled point, by lane. The
// boundary is progress: the watchdog counts from here (a self-timed step
// that just ended must not find it expired while it settles).
//
// Split, a lane ahead of this one may be waiting for the other process's
// end of a step that ended at this instant here, an end certain to be
// stamped now (split_peer_passes: e.g. a wait_until already true on this
// node, a fault, a barrier): one process would have let that lane go on
// first, so this one waits for that end (issue 16: a reg_poll after such a
// step and another lane's reg_write to the same node took the node's MMIO
// in the other order split). A lane ahead waiting for an end that may be
// now (a step of another node's) is asked about (a StepQuery): this one
// waits for that end, or for the word that the step is still under way
// there once that instant has settled (split.h). Both waits are for another
// process's word: they count as passive (split_passive).
void System::step_boundary(uint64_t lane_id) {
  ctx.note_progress(sc_time_stamp().value());
  settle_in_lane_order(lane_id);
}

// A settled point of this instant, and in a split run every lane ahead
// that waits for another process's word at it heard (step_boundary).
void System::settle_in_lane_order(uint64_t lane_id) {
  settle::wait_settled(settle::Stage::kStep, lane_id);
  while (split() && split_lane_ahead_may_end_now(lane_id)) {
    // Waiting for another process's word (passive: split_passive).
    ++split_waiting_;
    lane().held = true;
    wait(lane_end_ev_ | fail_ev_);
    lane().held = false;
    --split_waiting_;
    split_woke_.notify(SC_ZERO_TIME);
    settle::wait_settled(settle::Stage::kStep, lane_id);
  }
}

// After a failure no step starts; a branch's step at the failure's
// instant does (as the other branches' may have: an order-free rule, which
// a split run's processes, each learning of the other's failure at its own
// point of that instant, follow alike). The scenario's own lane stops at
// this process's failure at once, and at another's from the instant after
// it (the failure's Fact: first_fail_ps_), as one process has then.
bool System::lane_stopped() {
  if (split()) split_drain();
  const uint64_t now = sc_time_stamp().value();
  if (lane().id != 0) return first_fail_ps_ < now;
  return run_failed_before(now);
}

// This process's failure at any time, another's (its Fact) before t: for
// the scenario's own lane, as one process has it (lane_stopped, a step's
// end record).
bool System::run_failed_before(uint64_t t) const { return exit_code || split_peer_failed_ || first_fail_ps_ < t; }

void System::run_step(const Step& step, Group* g) {
  const SourceLoc& loc = step_loc(step);
  std::visit([&](const auto& s) { handle(s, loc, g); }, step);
}

void System::run_branch(const std::vector<Step>* steps, Group* g, uint64_t lane_id, std::string path) {
  const sc_object* me = sc_get_current_process_handle().get_process_object();
  lanes_[me].id = lane_id;
  lanes_[me].path = std::move(path);
  run_steps(*steps, g);
  lanes_.erase(me);
  --g->running;
  g->changed.notify(SC_ZERO_TIME);
}

void System::snapshot_qps(bool with_datapath) {
  // A step's failure: a split run's other processes take their nodes' too
  // at its end (split_barrier).
  if (auto it = lanes_.find(sc_get_current_process_handle().get_process_object()); it != lanes_.end())
    it->second.snapped = true;
  stall_report.clear();
  for (auto& n : nodes) {
    if (!n->ernic) continue;  // kind: peer: no ERNIC
    for (auto& st : n->ernic->qp_status()) stall_report.push_back(n->cfg.name + " " + st);
    if (with_datapath)
      if (std::string d = n->datapath->status(); !d.empty()) stall_report.push_back(n->cfg.name + " " + d);
  }
}

void System::fail(const SourceLoc& loc, const std::string& what, int code) {
  const uint64_t now = sc_time_stamp().value();
  failures.push_back({what, loc, now});
  if (exit_code == 0) exit_code = code;
  auto it = lanes_.find(sc_get_current_process_handle().get_process_object());
  if (it != lanes_.end()) it->second.failed = true;
  if (first_fail_ps_ > now) {
    first_fail_ps_ = now;
    split_tell_failure();
  }
  fail_ev_.notify(SC_ZERO_TIME);
}

void System::watchdog() {
  // Fires watchdog_us after the latest progress (frame, register access,
  // DMA, completion) or the end of the latest step that times out by
  // itself (none counts while one runs); and at once when a QP livelocks
  // (SimContext::livelock: progress that never completes the WQE, which
  // resets the watchdog forever). Progress is the latest before the instant
  // looked at (SimContext::progress_before), a self-timed step's end judged
  // by what ran as the instant began (BoundedSteps::timed_at), so the
  // instant it fires depends on the run alone, not on when it looked.
  // A split run's other processes' count too (split_progress).
  const uint64_t period_ps = scenario.limits.watchdog_us * 1000000ull;
  uint64_t others_ps = 0;  // the other processes' latest (a split run)
  for (;;) {
    const uint64_t now = sc_time_stamp().value();
    const bool livelock = !ctx.livelock.empty();
    if (bounded_.n > 0 && bounded_.ran_before(now) && !livelock) {  // counted from its end
      wait(bounded_.ended | ctx.livelock_ev);
      continue;
    }
    const uint64_t deadline =
        std::max({ctx.progress_before(now), bounded_.timed_at(now), others_ps}) + period_ps;
    if (deadline > now && !livelock) {
      wait(sc_time(double(deadline - now), SC_PS), ctx.livelock_ev);
      continue;
    }
    if (finished) return;
    if (!livelock && split()) {
      // A passive process promised the others no CONTROL of its own (no
      // request, no end): the processes whose lanes run steps watch.
      if (split_passive()) {
        wait(split_woke_ | ctx.livelock_ev | fail_ev_);
        continue;
      }
      const std::optional<uint64_t> o = split_progress();
      // The link failed meanwhile (a peer broke the protocol), or another
      // process's run ended (a failed step there ends this one at its
      // instant): that is the run's end, not this watchdog's.
      if (finished || !net_link_->error().empty() || !o) return;
      if (*o + period_ps > now) {
        others_ps = *o;
        continue;
      }
    }
    if (livelock)
      fail(SourceLoc{}, fmt::format("{} (limits.livelock_retries: {})", ctx.livelock,
                                    scenario.limits.livelock_retries),
           3);
    else
      fail(SourceLoc{}, fmt::format("no progress for {} us of simulated time (watchdog)",
                                    scenario.limits.watchdog_us),
           3);
    snapshot_qps(true);
    stop_how_ = bridge::NetControl::kStopWatchdog;
    end_checks();
    sc_stop();
    return;
  }
}

// A model error fails the run; it goes on for limits.after_error_us so the
// outputs show what followed, then stops (a broken model can otherwise run
// for minutes and fill the disk) as that instant begins. Split, another
// process's error (NetLink::peer_error_ps, known before this process may
// enter that instant) stops this one there too, as one process stops.
void System::stop_after_error() {
  const uint64_t none = ~uint64_t(0);
  auto peer_error = [&] { return net_link_ ? net_link_->peer_error_ps() : none; };
  auto own_error = [&] { return ctx.errors.empty() ? none : ctx.errors.front().time_ps; };
  for (;;) {
    // At least 1 ps after: a split run's monitor reports an error there
    // (stamped at its instant), and both runs must end at one time. An
    // error found later but stamped earlier (that monitor, judging behind)
    // moves the end.
    const uint64_t first = std::min(own_error(), peer_error());
    const uint64_t now = sc_time_stamp().value();
    const uint64_t until =
        first == none ? none : first + std::max<uint64_t>(scenario.limits.after_error_us * 1000000ull, 1);
    if (until <= now) break;
    if (!net_link_)
      until == none ? wait(ctx.error_ev) : wait(sc_time(double(until - now), SC_PS), ctx.error_ev);
    else if (until == none)
      wait(ctx.error_ev | net_link_->peer_error_event());
    else
      wait(sc_time(double(until - now), SC_PS), ctx.error_ev | net_link_->peer_error_event());
  }
  if (finished) return;
  if (peer_error() < own_error()) {
    // Its process stops as this instant begins, by itself; its RunEnd says
    // how, taken now as take_peer_end would take it once the instant had
    // settled (this process would then have run the instant on: a step's
    // end logged there that one process never reaches, stop 42's 3e).
    if (net_link_->await_peer_end()) end_for_peer(true);
    return;
  }
  stopped_after_error = true;
  if (exit_code == 0) exit_code = 1;
  snapshot_qps();
  stop_how_ = bridge::NetControl::kStopAfterError;
  end_checks();
  sc_stop();
}

// wait
void System::handle(const WaitStep& s, const SourceLoc& loc, Group*) {
  sc_time d(double(s.us), SC_US);
  if (s.until) {
    if (sc_time_stamp() > d)
      return fail(loc, fmt::format("wait until {} us: simulated time is already {} ps", s.us, sc_time_stamp().value()));
    d -= sc_time_stamp();
  }
  ++bounded_;
  wait(d);
  --bounded_;
}

// barrier: waits until every branch of the parallel group has arrived.
void System::handle(const BarrierStep& s, const SourceLoc& loc, Group* g) {
  if (!g) return fail(loc, "barrier outside a parallel block");
  size_t& a = g->arrived[s.name];
  ++a;
  g->changed.notify(SC_ZERO_TIME);
  while (g->arrived[s.name] < g->branches && !exit_code) wait(g->changed | fail_ev_);
  if (split()) lane().barrier_full = g->arrived[s.name] >= g->branches;  // split_peer_passes
}

// repeat
void System::handle(const std::shared_ptr<RepeatStep>& sp, const SourceLoc&, Group* g) {
  const std::string inside = lane().path;
  // A round starts as a step does (lane_stopped; a branch's repeat beside
  // a failure at this instant goes on, as the step after it would: split,
  // B's process took A's failure at that instant after its repeat had
  // looked, or before it, from run to run).
  for (uint32_t i = 0; i < sp->count && !lane_stopped(); ++i) {
    lane().path = inside + fmt::format("{:08x}", i);
    run_steps(sp->steps, g);
  }
  lane().path = inside;
}

// parallel: each branch in its own process; waits for all.
void System::handle(const std::shared_ptr<ParallelStep>& sp, const SourceLoc&, Group*) {
  Group grp;
  grp.branches = grp.running = sp->branches.size();
  const std::string inside = lane().path;
  for (size_t i = 0; i < sp->branches.size(); ++i)
    sc_spawn(sc_bind(&System::run_branch, this, &sp->branches[i].steps, &grp, ++lanes_made_,
                     inside + fmt::format("{:08x}", i)),
             sc_gen_unique_name("branch"));
  while (grp.running > 0) wait(grp.changed);
}

}  // namespace ernic
