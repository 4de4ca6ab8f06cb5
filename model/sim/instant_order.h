// model/sim: requesters of one shared resource that act at the same instant
// are served in a fixed order, not in the order the kernel happens to run
// them (issue 16: byte-identical whether a node runs with other nodes in one
// process or alone in its own).
//
// Why: SystemC runs the processes woken at one instant in an order the
// standard leaves open; the reference kernel takes it from its timed-event
// queue, whose ties depend on every event in it, the other nodes' included.
// So two blocks of one node that book a shared resource at the same instant
// (a node's PCIe link: its DMA masters and its MMIO, model/dma/pcie.h) got
// it in one order in a one-process run and in the other in a split run
// (topology/incast_ecn_cnp: a CQE one core cycle apart), and in a split run
// even from one run to the next, as the link's wall-clock timing moved
// events in the kernel's queue (topology/all_to_all_8: E's timeout ACK and
// a WRITE packet entering the TX queue at one instant).
//
// Rule: a requester enters with its rank (fixed per requester), waits one
// delta cycle, and is served after every requester that entered in an
// earlier delta cycle of this instant or in the same one with a lower rank
// (equal ranks: in entry order). Which requesters enter in which delta cycle
// follows from the node's own events only, so the order is the same in
// every composition. leave() lets the next one in at once (an immediate
// notification: no further delta cycle). A requester may wait while it
// holds its turn (the ERNIC's TX queue: for room in it); those behind it
// wait too, so the resource is taken in turn order.
// Users: a node's PCIe link (model/dma/dma.h, A-DMA-6), the ERNIC's TX
// queue (model/ernic/wqe_proc.h).
// Cost: one delta cycle per use.
#pragma once
#include <cstdint>
#include <set>
#include <systemc>
#include <tuple>

namespace ernic {

class InstantOrder {
 public:
  // In an SC_THREAD: returns when it is the caller's turn.
  void enter(uint32_t rank) {
    const Key k{sc_core::sc_delta_count(), rank, seq_++};
    pending_.insert(k);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    while (*pending_.begin() != k) sc_core::wait(turn_);
    held_ = k;
  }
  void leave() {
    pending_.erase(held_);
    if (!pending_.empty()) turn_.notify();
  }
  // enter() ... leave() as a scope; a null order: no arbitration.
  class Turn {
   public:
    Turn(InstantOrder* o, uint32_t rank) : o_(o) {
      if (o_) o_->enter(rank);
    }
    ~Turn() {
      if (o_) o_->leave();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    InstantOrder* o_;
  };

 private:
  using Key = std::tuple<uint64_t, uint32_t, uint64_t>;  // (delta cycle entered, rank, entry sequence)
  std::set<Key> pending_;
  Key held_{};
  uint64_t seq_ = 0;
  sc_core::sc_event turn_;
};

}  // namespace ernic
