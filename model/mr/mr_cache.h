// model/mr: the MR lookup of the responder (PG332 Fig. 2-9 step 1: the
// R_Key's index bits select an MR context) in its two forms.
//
//  - `table` (PG332, the default): the MR table is the IP's register array
//    (section 3 of ../shared/spec/ernic-pg332.md; 256 entries in 3.x). A
//    lookup reads the entry in a fixed `mr_lookup_cycles` core cycles
//    and never misses (assumption A-MR-1).
//  - `cam` (a named extension, scenario node key `mr_cache: cam`): seed
//    003's MR cache. A fully associative CAM of `entries` MR contexts,
//    keyed by the MR index, with LRU replacement, sits in front of a table
//    of MR contexts kept in host memory (the driver writes every context
//    there as well as into the registers). A hit costs
//    `cam_lookup_cycles`; a miss also fetches the 32-byte context through
//    this block's own AXI4 master (`mr_cache_m_axi`, a timed read of the
//    model's Dma: PCIe read latency plus one beat) and installs it in
//    `cam_fill_cycles`, evicting the least recently used entry when the CAM
//    is full (assumptions A-MRC-1..3).
//
// Host table layout (cam): entry i at table_base + 32 * i, eight
// little-endian 32-bit words in the order of the MR register entry
// (PDPDNUM, VIRTADDRLSB, VIRTADDRMSB, BUFBASEADDRLSB, BUFBASEADDRMSB,
// BUFRKEY, WRRDBUFLEN, ACCESSDESC: byte 4k = register offset 4k).
//
// Invalidation (cam): any AXI4-Lite write to a word of MR entry i drops
// entry i from the CAM. The driver writes the host table first and the
// registers after, so a registration (a new one at the same index
// included) and deregister_mr (ACCESSDESC := 0xF) are seen by the next
// lookup. A context fetched while its index was invalidated is used for
// that lookup (it was read after the invalidating write's data reached
// host memory) but is not installed.
//
// Clock: the core clock. The lookup runs in the calling thread (the RX
// packet handler), which it stalls: later packets wait behind a miss.
// Waveform (cam): top.<node>.ernic.mr_cache.{lookup, hit, miss, index,
// hits, misses} and the master's top.<node>.ernic.mr_cache_m_axi.*.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/dma/dma.h"
#include "model/host/host_memory.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic {

// One MR context: the eight words of an MR-table entry, PG332 order.
struct MrContext {
  static constexpr uint32_t kWords = 8, kBytes = 32;
  std::array<uint32_t, kWords> w{};
  uint32_t word(uint32_t reg_offset) const { return w[reg_offset / 4]; }
  static MrContext from_bytes(const uint8_t* b);
  void to_bytes(uint8_t* b) const;
  bool operator==(const MrContext& o) const { return w == o.w; }
};

// The CAM itself, no timing (unit-tested in tb/mr): `entries` slots, each
// holding one MR index and its context; LRU replacement. Misses are
// classified: compulsory (the index was never held), capacity (it was
// evicted to make room) or invalidation (an invalidation dropped it).
class MrCam {
 public:
  explicit MrCam(uint32_t entries);
  uint32_t capacity() const { return uint32_t(slots_.size()); }
  uint32_t size() const;
  // A hit returns the context and makes its slot the most recently used; a
  // miss returns nullptr. Both are counted.
  const MrContext* lookup(uint32_t index);
  // After a miss: a free slot (the lowest) or the least recently used one
  // takes the context. Returns the MR index evicted, if any. An index
  // already present is updated in place.
  std::optional<uint32_t> insert(uint32_t index, const MrContext& ctx);
  // Drops the index; true when a slot held it.
  bool invalidate(uint32_t index);
  bool contains(uint32_t index) const;  // no LRU update, not counted
  // MR indices held, most recently used first.
  std::vector<uint32_t> lru_order() const;

  struct Counters {
    uint64_t lookups = 0, hits = 0, misses = 0;
    uint64_t compulsory_misses = 0, capacity_misses = 0, invalidation_misses = 0;
    uint64_t evictions = 0, invalidations = 0;
  };
  const Counters& counters() const { return c_; }

 private:
  struct Slot {
    bool valid = false;
    uint32_t index = 0;
    uint64_t last_use = 0;
    MrContext ctx;
  };
  enum class Gone : uint8_t { evicted, invalidated };
  int find(uint32_t index) const;
  std::vector<Slot> slots_;
  std::map<uint32_t, Gone> gone_;  // why an index once held is not held now
  uint64_t tick_ = 0;
  Counters c_;
};

enum class MrLookupMode : uint8_t { table, cam };
const char* to_string(MrLookupMode m);

struct MrLookupConfig {
  MrLookupMode mode = MrLookupMode::table;
  // table: the register array read: index register + BRAM/LUTRAM read
  // (A-MR-1).
  uint32_t mr_lookup_cycles = 2;
  // cam: CAM entries, the compare + context read of a hit, the install
  // after a miss (A-MRC-1), and where the context table is (A-MRC-2).
  uint32_t entries = 16;
  uint32_t cam_lookup_cycles = 2;
  uint32_t cam_fill_cycles = 1;
  uint64_t table_base = kDefaultTableBase;
  // In the first MiB of host memory, which the driver leaves unused.
  static constexpr uint64_t kDefaultTableBase = 0x80000;
};

class MrLookup {
 public:
  // table_reader: the register array (table mode). ernic_scope:
  // "top.<node>.ernic".
  MrLookup(const ClockDomain& core, HostMemory& mem, SimContext& ctx, const std::string& ernic_scope,
           const std::string& node, const MrLookupConfig& cfg, const DmaTiming& dma,
           std::function<MrContext(uint32_t)> table_reader);
  // Timed: call from an SC_THREAD. The context of MR `index` (which the
  // caller has checked is < the table size). false when a miss fetch
  // failed (outside host memory: an AXI DECERR, a model error).
  bool lookup(uint32_t index, MrContext& out, std::optional<uint32_t> qpn = std::nullopt);
  // An AXI4-Lite write to a word of MR entry `index` (cam: invalidates it).
  void on_register_write(uint32_t index);

  const MrLookupConfig& config() const { return cfg_; }
  uint64_t lookups() const { return lookups_; }
  // cam mode only (zeros in table mode).
  const MrCam::Counters& cam_counters() const { return cam_.counters(); }
  const MrCam& cam() const { return cam_; }
  uint64_t dma_bytes_read() const { return dma_ ? dma_->bytes_read() : 0; }

 private:
  const ClockDomain& core_;
  SimContext& ctx_;
  MrLookupConfig cfg_;
  std::function<MrContext(uint32_t)> table_reader_;
  MrCam cam_;
  std::optional<Dma> dma_;  // cam mode only (table mode adds no master, no signals)
  std::map<uint32_t, uint64_t> inval_gen_;  // invalidations seen per index (fetch races)
  uint64_t lookups_ = 0;
  int v_lookup_ = -1, v_hit_ = -1, v_miss_ = -1, v_index_ = -1, v_hits_ = -1, v_misses_ = -1;
};

}  // namespace ernic
