// model/ernic: the parameters of the ERNIC model's named extensions that
// are not PG332 (seed 003's ideas; issue 19 experiments 3 and 4). Each is
// off by default: with `enabled` false nothing of it is built, no process,
// no DMA master, no waveform signal, no cost on any path.
//  - ShadowDbConfig (shadow_db.h; assumptions X-SHADOW-DB-1..3): the NIC
//    polls a copy of the RC QPs' SQ producer indices in host memory by DMA
//    instead of taking SQPIi writes.
//  - QpCtxCacheConfig (qp_ctx_cache.h; X-QPC-CACHE-1..3): RC QP contexts in
//    host memory behind an on-chip cache of `entries` contexts.
// Both tables lie in the first MiB of host memory, which the built-in
// driver leaves unused (the MR cache's table is at 0x80000, A-MRC-2).
#pragma once
#include <cstdint>

namespace ernic {

struct ShadowDbConfig {
  bool enabled = false;
  uint64_t poll_ns = 1000;  // a table read starts at each multiple of this (X-SHADOW-DB-2)
  // Entry of QP n (4 bytes, little-endian: the SQ producer index) at
  // table_base + 4 (n - 1); QP1's is unused (CM stays on SQPIi).
  uint64_t table_base = kDefaultTableBase;
  static constexpr uint64_t kDefaultTableBase = 0xA0000;
};

struct QpCtxCacheConfig {
  bool enabled = false;
  uint32_t entries = 16;         // contexts held on chip (RC QPs; QP1's stays on chip)
  uint32_t context_bytes = 256;  // one context: PG332's per-QP register stride (0x100)
  uint32_t fill_cycles = 1;      // install after the fetch (as the MR cache's, A-MRC-1)
  // Context of QP n at table_base + context_bytes (n - 1): 256 x 1024 bytes
  // at most, up to 0x100000.
  uint64_t table_base = kDefaultTableBase;
  static constexpr uint64_t kDefaultTableBase = 0xC0000;
};

}  // namespace ernic
