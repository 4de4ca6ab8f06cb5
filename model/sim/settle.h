// model/sim: what must happen once an instant has settled, in a fixed order
// (issue 16: byte-identical whether a node runs with other nodes in one
// process or alone in its own).
//
// An instant has settled when every process it woke has run and nothing is
// left to run at it: no delta notification, no runnable process, no channel
// update pending (sc_pending_activity_at_current_time()). What a node does
// up to that point follows from its own events only; how many delta cycles
// it took, and in which order the kernel ran the processes of one delta
// cycle, does not (both depend on every other event in the kernel, the
// other nodes' included, and on how a split run's link thread delivers a
// frame). So a choice made at a settled point is the same in every
// composition, and one made by counting delta cycles is not (random seed
// 151 split: a retry-buffer copy entered the PCIe order one delta cycle
// earlier than in one process and took the link first).
//
// One service per kernel acts at each settled point, once: the first of
//   1. the clients (InstantOrder, model/sim/instant_order.h), in the order
//      they registered, the first that has something to grant;
//   2. the threads waiting in wait_settled(), by (stage, rank, arrival).
// Then it looks again at the next settled point of the same instant while
// anything is left to serve. A thread released by wait_settled() runs in a
// settled instant: nothing is pending there but the service's next look,
// and that only while more is waiting (the last one released, e.g. the
// split link's thread before it blocks, finds nothing pending).
#pragma once
#include <cstdint>

namespace ernic::settle {

// Who goes first among the threads released at one instant's settled points.
enum class Stage : uint8_t {
  kStep = 0,     // the scenario runner starts a step (model/system/runner.cpp)
  kPeerEnd = 1,  // a split run takes the other process's end (model/system/split.cpp)
  kLink = 2,     // the split link's thread blocks for its peers (model/bridge/net_link.cpp)
};

class Client {
 public:
  virtual ~Client() = default;
  // At a settled point: grant what is pending (an immediate notification
  // of the process that gets it); true if something was granted.
  virtual bool grant() = 0;
  // Something is pending that grant() would serve now.
  virtual bool wants() const = 0;
};

void add(Client* c);     // clients are served in the order they were added
void remove(Client* c);  // before the client goes
void poke();             // something may be served at the next settled point

// In an SC_THREAD: returns at a settled point of the current instant (not
// before one delta cycle has passed), after the clients' grants and the
// threads waiting at it with a lower (stage, rank); rank tells apart the
// threads of one stage (the runner's lanes), equal ones go in arrival order.
void wait_settled(Stage s, uint64_t rank = 0);

}  // namespace ernic::settle
