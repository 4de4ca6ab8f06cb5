// model/ernic: the QP-context cache, a named extension that is not PG332
// (node key `extensions: { qp_ctx_cache: ... }`, assumptions
// X-QPC-CACHE-1..3; seed 003's "half-hardware QP": contexts partly in host
// memory, fetched by DMA, against PG332's "full-hardware" contexts all on
// chip).
//
// RC QP n's context lives in host memory at table_base + context_bytes
// (n - 1); the NIC holds `entries` of them on chip, least recently used
// evicted first. QP1's context (CM) stays on chip. A block about to use a
// QP's context calls access() in its own thread:
//  - the QP manager's dispatcher, each time it serves a QP (a WQE, a
//    go-back-N round, a flush);
//  - the QP manager's prefetcher, before each WQE read of a QP;
//  - the RX packet handler, for each valid frame on an RC QP (request,
//    ACK / NAK, READ response) and each ACK the coalescing timer asks for.
// A hit costs nothing beyond what the on-chip context costs (the tag
// compare is taken to fit in the cycles the block already spends,
// A-ERNIC-1/25): with every active QP held, timing is PG332's mode to the
// picosecond. A miss stalls that block (and, in the RX handler, the frames
// behind it): the context_bytes are read through the extension's own AXI4
// master `qp_ctx_m_axi` (PCIe read latency plus the completions, A-DMA-1),
// then the victim, if the cache was full, is written back (a posted write:
// the block waits only while the master takes its W beats, A-DMA-5), then
// it is installed (fill_cycles). Another block that needs the context
// being fetched waits for that fetch (a "merged" miss: no second read).
// A QP enabled (QPCONFi[0] 0 -> 1) is installed at once when a slot is
// free (the NIC builds the context from the registers just written); with
// no free slot its first use misses. Register accesses (AXI4-Lite) are the
// register file's, as PG332 has them: the cache only times the datapath's
// use of contexts; the model's state is kept whole on chip either way (the
// bytes fetched are not interpreted).
//
// Clock: the core clock (the calling block's). Waveform: the master's
// top.<node>.ernic.qp_ctx_m_axi.* signals (only when the extension is on).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <systemc>
#include <vector>

#include "model/dma/dma.h"
#include "model/ernic/ext_config.h"
#include "model/host/host_memory.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic {

// The replacement state alone, no timing (unit-tested in tb/ernic): up to
// `entries` QPNs, the least recently used one leaves first.
class QpCtxLru {
 public:
  explicit QpCtxLru(uint32_t entries) : cap_(entries ? entries : 1) {}
  uint32_t capacity() const { return cap_; }
  uint32_t size() const { return uint32_t(order_.size()); }
  bool full() const { return order_.size() >= cap_; }
  bool contains(uint32_t qpn) const;
  // Held: it becomes the most recently used (true). Not held: nothing (false).
  bool touch(uint32_t qpn);
  // It becomes the most recently used; when the cache was full, the least
  // recently used QP leaves and is returned. One already held is touched.
  std::optional<uint32_t> insert(uint32_t qpn);
  // QPNs held, most recently used first.
  const std::vector<uint32_t>& mru_order() const { return order_; }

 private:
  uint32_t cap_;
  std::vector<uint32_t> order_;  // most recently used first (entries <= 256: a scan is cheap)
};

class QpCtxCache {
 public:
  enum Use : uint8_t { kDispatch = 0, kPrefetch = 1, kRx = 2 };
  static constexpr size_t kUses = 3;
  static const char* use_name(Use u);

  QpCtxCache(const ClockDomain& core, HostMemory& mem, SimContext& ctx, const std::string& ernic_scope,
             const std::string& node, const QpCtxCacheConfig& cfg, const DmaTiming& dma);

  // Timed (call from an SC_THREAD): `use` is about to use QP qpn's context.
  // QP1: nothing. A hit returns false at once; a miss (or waiting for
  // another block's fetch of it) returns true once the context is there,
  // and the caller looks again at what the QP needs (it may have changed).
  bool access(uint32_t qpn, Use use);
  // QPCONFi[0] 0 -> 1 (not timed): installed if a slot is free.
  void on_enable(uint32_t qpn);

  struct Counters {
    uint64_t lookups = 0, hits = 0, misses = 0, merged = 0;  // lookups = hits + misses + merged
    uint64_t fetches = 0, writebacks = 0, installs = 0;      // DMA reads, DMA writes, installs at enable
    std::array<uint64_t, kUses> use_lookups{}, use_misses{};
  };
  const Counters& counters() const { return c_; }
  const QpCtxCacheConfig& config() const { return cfg_; }
  const QpCtxLru& lru() const { return lru_; }
  uint64_t bytes_read() const { return dma_.bytes_read(); }
  uint64_t bytes_written() const { return dma_.bytes_written(); }
  uint64_t read_requests() const { return dma_.read_requests(); }
  uint64_t read_completions() const { return dma_.read_completions(); }
  uint64_t write_tlps() const { return dma_.write_tlps(); }

 private:
  uint64_t entry_addr(uint32_t qpn) const { return cfg_.table_base + uint64_t(cfg_.context_bytes) * (qpn - 1); }
  const ClockDomain& core_;
  QpCtxCacheConfig cfg_;
  Dma dma_;                       // qp_ctx_m_axi
  QpCtxLru lru_;
  std::set<uint32_t> filling_;    // QPs whose context is being read
  sc_core::sc_event fill_ev_;
  Counters c_;
};

}  // namespace ernic
