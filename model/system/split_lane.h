// model/system: a lane of a split run (model/system/split.h): the
// scenario's steps, or one branch of a `parallel`, as it runs in step across
// the processes. System keeps one per SystemC thread (System::lane()).
#pragma once
#include <cstdint>
#include <string>

#include "model/scenario/scenario.h"

namespace ernic {

// A lane: a sequence of steps that runs in step across the processes
// (split.h): the scenario's steps (lane 0), each branch of a `parallel`
// (lanes numbered as the branches are started, alike in every process).
// Its controls carry id = lane << 32 | the step's number in the lane.
struct SplitLane {
  uint64_t id = 0;
  uint64_t seq = 0;          // steps begun in the lane
  SourceLoc loc;             // the step under way (messages)
  std::string kind;
  // The place of the list of steps the lane runs now in the scenario
  // (TxLog::step's order): a step at index i of it is path + i (8 hex
  // digits), its start + "0", its end + "2", the lists inside it (a
  // repeat's rounds, a parallel's branches) + "1" + their index.
  std::string path;
  bool failed = false;       // the step under way failed (its own failure, or its part in the other process)
  bool snapped = false;      // the step under way took the QPs' status (snapshot_qps) in this process
  // The instant the step's end is certain to be (split_barrier waits for
  // the other process's end, sent as its step began at this instant), ~0:
  // none. Lanes after it wait for that end (step_boundary).
  uint64_t end_due_ps = ~uint64_t(0);
  bool barrier_full = false;  // its last barrier step ended with every branch arrived
  // Its step's part here is over: it has reached split_barrier (a node's
  // process has sent its StepEnd there; the switch's sends it last), or it
  // has none to run here. A StepQuery for it is not answered.
  bool ending = false;
  // It waits for another process's end of its step, which may come at any
  // instant (not certain to be now: split_peer_passes). A lane behind it
  // asks at each instant it reaches (a StepQuery, once: asked_ps) whether
  // that step is still under way there, and goes on once a process says
  // so (a StepUnderway at that instant: underway_ps) or the end has come
  // (issue 16: one process lets a lane whose step ends now go first).
  bool awaiting_end = false;
  uint64_t asked_ps = ~uint64_t(0);
  uint64_t underway_ps = ~uint64_t(0);
  // It waits for a lane ahead at this instant (settle_in_lane_order): a
  // step under way here may still end at this instant once that one has
  // gone on, so a StepQuery for it waits too.
  bool held = false;
};

}  // namespace ernic
