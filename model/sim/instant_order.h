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
// Rule: a requester enters with its rank (fixed per requester) and is
// served at a settled point of the instant (model/sim/settle.h: nothing is
// left to run at it), the first pending by (instant entered, rank, the
// entering process's name, entry sequence), one per settled point. Two
// processes of one rank entering at one instant go in the order of their
// names (hierarchical, the node's in them: the same in every composition),
// not in the order they entered, which the kernel chose (gen10/z3168: D's
// QP 1 payload read and a READ response's payload read, both on
// wqe_proc_top_m_axi at one instant, took the link in the other order
// split, 520 ns apart). Which requesters are pending when the
// node's instant settles follows from the node's own events only; the
// delta cycle each entered in does not (it counts the kernel's other work:
// random seed 151 split took the PCIe link in the other order when the
// order counted delta cycles). A requester may wait while it holds its turn
// (the ERNIC's TX queue: for room in it); those behind it wait too, so the
// resource is taken in turn order. leave() lets the next one in at the next
// settled point.
// Users: a node's PCIe link (model/dma/dma.h, A-DMA-6), the ERNIC's TX
// queue (model/ernic/wqe_proc.h).
// Cost: a few delta cycles per use (to the instant's settled point).
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <systemc>

#include "model/sim/settle.h"

namespace ernic {

class InstantOrder final : public settle::Client {
 public:
  InstantOrder() { settle::add(this); }
  ~InstantOrder() override { settle::remove(this); }
  InstantOrder(const InstantOrder&) = delete;
  InstantOrder& operator=(const InstantOrder&) = delete;

  // In an SC_THREAD: returns when it is the caller's turn. A process killed
  // or reset while it waits here leaves no entry behind (its name would
  // dangle) and gives up a turn granted to it.
  void enter(uint32_t rank) {
    const Key k{sc_core::sc_time_stamp().value(), rank, sc_core::sc_get_current_process_b()->name(), seq_++};
    pending_.insert(k);
    settle::poke();
    struct Unwind {
      InstantOrder& o;
      const Key& k;
      bool entered = false;
      ~Unwind() {
        if (entered) return;
        o.pending_.erase(k);
        if (o.held_ && !(*o.held_ != k)) o.held_.reset();
        if (!o.pending_.empty()) settle::poke();
      }
    } unwind{*this, k};
    while (held_ != k) sc_core::wait(turn_);
    unwind.entered = true;
  }
  void leave() {
    pending_.erase(*held_);
    held_.reset();
    if (!pending_.empty()) settle::poke();
  }

  bool wants() const override { return !held_ && !pending_.empty(); }
  bool grant() override {
    if (!wants()) return false;
    held_ = *pending_.begin();
    turn_.notify();  // the holder runs in this delta cycle; the others wait on
    return true;
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
  // (instant entered in ps, rank, entering process's name, entry sequence);
  // the name lives as long as its process, which waits here until it leaves.
  struct Key {
    uint64_t t_ps;
    uint32_t rank;
    const char* who;
    uint64_t seq;
    bool operator<(const Key& o) const {
      if (t_ps != o.t_ps) return t_ps < o.t_ps;
      if (rank != o.rank) return rank < o.rank;
      if (const int c = std::strcmp(who, o.who)) return c < 0;
      return seq < o.seq;
    }
    bool operator!=(const Key& o) const { return t_ps != o.t_ps || rank != o.rank || seq != o.seq; }
  };
  std::set<Key> pending_;
  std::optional<Key> held_;
  uint64_t seq_ = 0;
  sc_core::sc_event turn_;
};

}  // namespace ernic
