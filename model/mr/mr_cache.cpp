#include "model/mr/mr_cache.h"

#include <algorithm>

namespace ernic {

MrContext MrContext::from_bytes(const uint8_t* b) {
  MrContext c;
  for (uint32_t k = 0; k < kWords; ++k)
    c.w[k] = uint32_t(b[4 * k]) | uint32_t(b[4 * k + 1]) << 8 | uint32_t(b[4 * k + 2]) << 16 |
             uint32_t(b[4 * k + 3]) << 24;
  return c;
}

void MrContext::to_bytes(uint8_t* b) const {
  for (uint32_t k = 0; k < kWords; ++k)
    for (uint32_t j = 0; j < 4; ++j) b[4 * k + j] = uint8_t(w[k] >> (8 * j));
}

// ------------------------------------------------------------------ MrCam

MrCam::MrCam(uint32_t entries) : slots_(std::max<uint32_t>(entries, 1)) {}

uint32_t MrCam::size() const {
  return uint32_t(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.valid; }));
}

int MrCam::find(uint32_t index) const {
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].valid && slots_[i].index == index) return int(i);
  return -1;
}

bool MrCam::contains(uint32_t index) const { return find(index) >= 0; }

const MrContext* MrCam::lookup(uint32_t index) {
  ++c_.lookups;
  const int i = find(index);
  if (i >= 0) {
    ++c_.hits;
    slots_[size_t(i)].last_use = ++tick_;
    return &slots_[size_t(i)].ctx;
  }
  ++c_.misses;
  const auto g = gone_.find(index);
  if (g == gone_.end()) ++c_.compulsory_misses;
  else if (g->second == Gone::evicted) ++c_.capacity_misses;
  else ++c_.invalidation_misses;
  return nullptr;
}

std::optional<uint32_t> MrCam::insert(uint32_t index, const MrContext& ctx) {
  std::optional<uint32_t> evicted;
  int i = find(index);
  if (i < 0) {
    // The lowest free slot, else the least recently used one.
    for (size_t k = 0; k < slots_.size() && i < 0; ++k)
      if (!slots_[k].valid) i = int(k);
    if (i < 0) {
      i = 0;
      for (size_t k = 1; k < slots_.size(); ++k)
        if (slots_[k].last_use < slots_[size_t(i)].last_use) i = int(k);
      evicted = slots_[size_t(i)].index;
      gone_[*evicted] = Gone::evicted;
      ++c_.evictions;
    }
  }
  Slot& s = slots_[size_t(i)];
  s.valid = true;
  s.index = index;
  s.ctx = ctx;
  s.last_use = ++tick_;
  gone_.erase(index);
  return evicted;
}

bool MrCam::invalidate(uint32_t index) {
  const int i = find(index);
  if (i < 0) return false;
  slots_[size_t(i)].valid = false;
  gone_[index] = Gone::invalidated;
  ++c_.invalidations;
  return true;
}

std::vector<uint32_t> MrCam::lru_order() const {
  std::vector<const Slot*> v;
  for (const Slot& s : slots_)
    if (s.valid) v.push_back(&s);
  std::sort(v.begin(), v.end(), [](const Slot* a, const Slot* b) { return a->last_use > b->last_use; });
  std::vector<uint32_t> out;
  for (const Slot* s : v) out.push_back(s->index);
  return out;
}

// --------------------------------------------------------------- MrLookup

const char* to_string(MrLookupMode m) { return m == MrLookupMode::cam ? "cam" : "table"; }

MrLookup::MrLookup(const ClockDomain& core, HostMemory& mem, SimContext& ctx, const std::string& ernic_scope,
                   const std::string& node, const MrLookupConfig& cfg, const DmaTiming& dma,
                   std::function<MrContext(uint32_t)> table_reader)
    : core_(core), ctx_(ctx), cfg_(cfg), table_reader_(std::move(table_reader)), cam_(cfg.entries) {
  if (cfg_.mode != MrLookupMode::cam) {
    v_lookup_ = ctx.var(ernic_scope + ".mr_lookup", "lookup", 1);
    v_index_ = ctx.var(ernic_scope + ".mr_lookup", "index", 12);
    return;
  }
  dma_.emplace(core, mem, ctx, ernic_scope + ".mr_cache_m_axi", node, "mr_cache_m_axi", dma);
  const std::string s = ernic_scope + ".mr_cache";
  v_lookup_ = ctx.var(s, "lookup", 1);
  v_hit_ = ctx.var(s, "hit", 1);
  v_miss_ = ctx.var(s, "miss", 1);
  v_index_ = ctx.var(s, "index", 12);
  v_hits_ = ctx.var(s, "hits", 32);
  v_misses_ = ctx.var(s, "misses", 32);
}

bool MrLookup::lookup(uint32_t index, MrContext& out, std::optional<uint32_t> qpn) {
  ++lookups_;
  if (cfg_.mode == MrLookupMode::table) {
    core_.sync();
    ctx_.set(v_lookup_, 1);
    ctx_.set(v_index_, index);
    core_.wait_cycles(cfg_.mr_lookup_cycles);
    out = table_reader_(index);
    ctx_.set(v_lookup_, 0);
    return true;
  }
  core_.sync();
  ctx_.set(v_lookup_, 1);
  ctx_.set(v_index_, index);
  const MrContext* hit = cam_.lookup(index);
  ctx_.set(hit ? v_hit_ : v_miss_, 1);
  ctx_.set(hit ? v_hits_ : v_misses_, hit ? cam_.counters().hits : cam_.counters().misses);
  if (hit) out = *hit;  // the compare and the context read
  core_.wait_cycles(cfg_.cam_lookup_cycles);
  bool ok = true;
  if (!hit) {
    const uint64_t gen = inval_gen_[index];
    uint8_t b[MrContext::kBytes];
    ok = dma_->read(cfg_.table_base + uint64_t(index) * MrContext::kBytes, b, sizeof b, true, qpn);
    if (ok) {
      out = MrContext::from_bytes(b);
      core_.wait_cycles(cfg_.cam_fill_cycles);
      if (inval_gen_[index] == gen) cam_.insert(index, out);
    }
  }
  ctx_.set(hit ? v_hit_ : v_miss_, 0);
  ctx_.set(v_lookup_, 0);
  ctx_.bump();
  return ok;
}

void MrLookup::on_register_write(uint32_t index) {
  if (cfg_.mode != MrLookupMode::cam) return;
  ++inval_gen_[index];
  cam_.invalidate(index);
}

}  // namespace ernic
