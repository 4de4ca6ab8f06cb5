// model/system: how a split run ends (split.h): another process's RunEnd
// taken once its instant has settled, or at once at the instant another
// process's model error stops the run (stop_after_error, runner.cpp); the
// other processes told how this one ended.
#include <fmt/format.h>

#include <string>

#include "model/bridge/net_link.h"
#include "model/sim/settle.h"
#include "model/system/split.h"
#include "model/system/system.h"

namespace ernic {

using namespace sc_core;

// The other process's run failed: this one ends with its exit code (its
// failures are in its report; the merged report has them once).
void System::peer_failed(int code, const std::string& why, const std::string& who) {
  split_peer_failed_ = true;
  split_stopped_by_ = (who.empty() ? net_link_->peer_name() : who) + ": " + why;
  if (exit_code == 0) exit_code = code;
  fail_ev_.notify(SC_ZERO_TIME);  // a barrier waiting here ends, as at a failure of this process's
}

// The other process ended its run while this one had not: with a failure
// (its watchdog, its time limit, a model error) this one stops too, at
// once; after a pass (never in step with this one) it is a failure here.
// Each RunEnd at its instant (a star's switch process hears every node's):
// one that changes nothing here leaves this watching for the next.
void System::watch_peer_end() {
  for (;; net_link_->pass_peer_end())
    if (take_peer_end()) return;
}

// The current RunEnd (or the peer gone without one), once its instant has
// settled: true when it ended this run or left the end to the runner.
bool System::take_peer_end() {
  wait(net_link_->peer_end_event());
  // Both runs end at one instant when all is well: this one's runner first.
  settle::wait_settled(settle::Stage::kPeerEnd);
  return end_for_peer(false);
}

// The current RunEnd, taken (above, or at once by stop_after_error when it
// is another process's model error's limit: at_once, this run stops as the
// instant begins whatever the other's steps sent at it).
bool System::end_for_peer(bool at_once) {
  if (finished) return true;
  // Failing already: the other's end (which may be this run's failure,
  // passed back) changes nothing, unless its run stopped early (its
  // watchdog, a livelock, a model error's after_error_us): one process
  // stops there whatever failed before, every node's status taken.
  const uint8_t how = net_link_->peer_run_end() > 0 ? net_link_->peer_run_end_how() : 0;
  if (split_peer_failed_ || exit_code != 0) {
    if (how == bridge::NetControl::kEndedItself) return false;
    stop_how_ = how;
    snapshot_qps(how == bridge::NetControl::kStopWatchdog);
    end_checks();
    sc_stop();
    return true;
  }
  // A failed step's end that came with the RunEnd is the runner's to take
  // (split_barrier): it ends this run as the other's failure says.
  split_drain();
  for (const auto& c : split_pending_)
    if (c.kind == bridge::NetControl::StepEnd && c.b && !at_once) return true;
  const int code = net_link_->peer_run_end() > 0 ? split_peer_exit_code(uint64_t(net_link_->peer_run_end())) : 0;
  if (code > 0) {
    const std::string& why = net_link_->peer_run_end_why();
    peer_failed(code, fmt::format("its run ended with exit code {} at {} ps{}", code, sc_time_stamp().value(),
                                  why.empty() ? "" : " (" + why + ")"));
  } else {
    fail(SourceLoc{}, "split run: " + net_link_->peer_name() + " ended its run before this one (at " +
                          std::to_string(sc_time_stamp().value()) + " ps)");
  }
  // Exit code 3 from another process is its watchdog's or a livelock's
  // (both processes stop at a time limit by themselves): its report has
  // the datapaths' status too, as one process's has.
  stop_how_ = how;  // a star's switch process passes it on
  snapshot_qps(code == 3 || how == bridge::NetControl::kStopWatchdog);
  end_checks();
  sc_stop();
  return true;
}

// After the run (ernic-sim): the other process is told how it ended, and heard.
void System::end_split() {
  if (net_link_) net_link_->finish(exit_code, net_link_->error(), stop_how_);
}

}  // namespace ernic
