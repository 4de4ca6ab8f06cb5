// model/ernic: the WQE cache (see wqe_cache.h).
#include "model/ernic/wqe_cache.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;

void WqeCache::pop(qp::QpContext& qp) {
  qp.prefetch.cache.pop_front();
  --total_;
  update_status();
  space_ev.notify(SC_ZERO_TIME);
}

void WqeCache::drop(qp::QpContext& qp) {
  total_ -= uint32_t(qp.prefetch.cache.size());
  qp.prefetch.cache.clear();
  qp.prefetch.pf_ci = qp.req.sq_ci;
  ++qp.prefetch.pf_gen;
  update_status();
  space_ev.notify(SC_ZERO_TIME);
}

void WqeCache::update_status() {
  uint32_t& v = s_.G(R::g::QPMSTS);
  v &= ~3u;
  if (total_ >= s_.cfg.timing.wqe_cache_entries) v |= 1u;
  if (total_ == 0) v |= 2u;
}

}  // namespace ernic
