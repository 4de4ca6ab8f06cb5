// model/scenario: the node key `extensions` (scenarios/README.md,
// "extensions"): the ERNIC model's named extensions that are not PG332
// (seed 003's ideas, issue 19 experiments 3 and 4). Each is off unless the
// key names it, so a scenario without the key runs PG332's model unchanged.
//
//   extensions:
//     shadow_doorbell: { poll_ns: P }                 # X-SHADOW-DB-1..3
//     qp_ctx_cache: { entries: K, context_bytes: S }  # X-QPC-CACHE-1..3
//
// The parser (extensions.cpp) checks ranges and that the node has the
// built-in driver; model/system maps them onto model/ernic's
// ShadowDbConfig and QpCtxCacheConfig (model/ernic/ext_config.h).
//
// Plain C++17; no SystemC.
#pragma once
#include <cstdint>
#include <optional>

namespace ernic {

struct NodeExtensions {
  // The NIC polls a copy of every RC QP's SQ producer index in host memory
  // every poll_ns instead of taking SQPIi writes; the driver writes the
  // copy and no SQPIi.
  struct ShadowDoorbell {
    uint64_t poll_ns = 1000;  // 10..10^7
  };
  std::optional<ShadowDoorbell> shadow_doorbell;
  // RC QP contexts live in host memory behind an on-chip cache of
  // `entries` contexts (LRU); a miss reads context_bytes by DMA.
  struct QpCtxCache {
    uint32_t entries = 16;        // 1..256
    uint32_t context_bytes = 256;  // 64..1024, a multiple of 64
  };
  std::optional<QpCtxCache> qp_ctx_cache;
  bool any() const { return shadow_doorbell.has_value() || qp_ctx_cache.has_value(); }
};

}  // namespace ernic
