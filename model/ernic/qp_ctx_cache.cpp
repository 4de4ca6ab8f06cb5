// model/ernic: the QP-context cache extension (see qp_ctx_cache.h).
#include "model/ernic/qp_ctx_cache.h"

#include <algorithm>

namespace ernic {

bool QpCtxLru::contains(uint32_t qpn) const { return std::find(order_.begin(), order_.end(), qpn) != order_.end(); }

bool QpCtxLru::touch(uint32_t qpn) {
  const auto it = std::find(order_.begin(), order_.end(), qpn);
  if (it == order_.end()) return false;
  std::rotate(order_.begin(), it, it + 1);
  return true;
}

std::optional<uint32_t> QpCtxLru::insert(uint32_t qpn) {
  if (touch(qpn)) return std::nullopt;
  std::optional<uint32_t> victim;
  if (full()) {
    victim = order_.back();
    order_.pop_back();
  }
  order_.insert(order_.begin(), qpn);
  return victim;
}

const char* QpCtxCache::use_name(Use u) {
  switch (u) {
    case kDispatch: return "dispatch";
    case kPrefetch: return "prefetch";
    case kRx: return "rx";
  }
  return "?";
}

QpCtxCache::QpCtxCache(const ClockDomain& core, HostMemory& mem, SimContext& ctx, const std::string& ernic_scope,
                       const std::string& node, const QpCtxCacheConfig& cfg, const DmaTiming& dma)
    : core_(core),
      cfg_(cfg),
      dma_(core, mem, ctx, ernic_scope + ".qp_ctx_m_axi", node, "qp_ctx_m_axi", dma),
      lru_(cfg.entries) {}

void QpCtxCache::on_enable(uint32_t qpn) {
  if (qpn < 2 || lru_.touch(qpn) || lru_.full() || filling_.count(qpn)) return;
  lru_.insert(qpn);
  ++c_.installs;
}

bool QpCtxCache::access(uint32_t qpn, Use use) {
  if (qpn < 2) return false;  // QP1's context stays on chip
  ++c_.lookups;
  ++c_.use_lookups[use];
  if (filling_.count(qpn)) {  // another block is reading it: wait for that read
    ++c_.merged;
    while (filling_.count(qpn)) sc_core::wait(fill_ev_);
    return true;
  }
  if (lru_.touch(qpn)) {
    ++c_.hits;
    return false;
  }
  ++c_.misses;
  ++c_.use_misses[use];
  filling_.insert(qpn);
  const std::optional<uint32_t> victim = lru_.insert(qpn);  // the slot is taken now
  std::vector<uint8_t> b(cfg_.context_bytes);
  dma_.read(entry_addr(qpn), b.data(), b.size(), true, qpn);
  ++c_.fetches;
  if (victim) {
    // Posted: the block goes on once the master has the W beats (A-DMA-5).
    // The bytes: the victim's QPN in every word (the model keeps the state).
    for (size_t i = 0; i + 4 <= b.size(); i += 4)
      for (size_t k = 0; k < 4; ++k) b[i + k] = uint8_t(*victim >> (8 * k));
    dma_.write(entry_addr(*victim), b.data(), b.size(), *victim);
    ++c_.writebacks;
  }
  core_.wait_cycles(cfg_.fill_cycles);
  filling_.erase(qpn);
  fill_ev_.notify(sc_core::SC_ZERO_TIME);
  return true;
}

}  // namespace ernic
