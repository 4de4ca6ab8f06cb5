// model/ernic: the WQE cache in front of the QP manager (PG332 QPMSTS[1:0]
// "WQE cache full / empty"; sizes are assumption A-ERNIC-24): WQEs fetched
// ahead, up to ErnicTiming::wqe_cache_entries in all and wqe_cache_per_qp a
// QP, each QP's in its context (qp::PrefetchCtx). The QP manager's
// prefetcher fills it and its dispatcher takes from it; a QP's entries are
// dropped when it is disabled, re-pointed or made fatal.
#pragma once
#include <cstdint>
#include <systemc>

#include "model/ernic/shared.h"

namespace ernic {

class WqeCache {
 public:
  explicit WqeCache(ErnicShared& s) : s_(s) {}
  uint32_t total() const { return total_; }
  bool full() const { return total_ >= s_.cfg.timing.wqe_cache_entries; }
  // Slots reserved for a fetch in flight (k WQEs), and given back when its
  // result is discarded.
  void reserve(uint32_t k) { total_ += k; }
  void release(uint32_t k) { total_ -= k; }
  // The QP's next cached WQE goes to the WQE processor.
  void pop(qp::QpContext& qp);
  // Every cached WQE of the QP goes; prefetching restarts at its sq_ci.
  void drop(qp::QpContext& qp);
  // QPMSTS[0] full, [1] empty.
  void update_status();
  // Space freed: the prefetcher may go on.
  sc_core::sc_event space_ev;

 private:
  ErnicShared& s_;
  uint32_t total_ = 0;
};

}  // namespace ernic
