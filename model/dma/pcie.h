// model/dma: the PCIe link behind a node's six DMA masters (and behind the
// host's MMIO accesses to the NIC's AXI4-Lite slave). Plain C++, no SystemC:
// times are picoseconds passed in by the caller.
//
// What is modelled
//  - A Gen3 (8 GT/s) or Gen4 (16 GT/s) link of 1..16 lanes, 128b/130b
//    encoding: each direction moves
//        raw = lanes x GT/s x 128/130 / 8   bytes per ns
//    (Gen3 x8: 7.877 B/ns; Gen3 x16: 15.754; Gen4 x8: 15.754; Gen4 x16: 31.508).
//  - Every TLP costs its payload plus kTlpOverhead = 24 bytes on the link
//    (framing 2 + sequence number 2 + 4DW header 16 + LCRC 4; no ECRC).
//    DLLPs (ACK, flow-control updates) and flow-control credits are not
//    modelled: the link never stalls for credits.
//  - The two directions are independent, and in each direction every kind
//    of TLP shares the one serialiser (this is the sharing PCIe does):
//      up   (device -> host): memory writes of the DMA masters (MWr, at most
//           MPS bytes each), the masters' read requests (MRd, header only,
//           at most MRRS bytes requested each), and the completions of the
//           host's MMIO reads (CplD, 4 bytes);
//      down (host -> device): completions of the masters' reads (CplD, at
//           most MPS bytes each, split at the read-completion boundary),
//           the host's MMIO writes (doorbells: MWr, 4 bytes) and MMIO read
//           requests (MRd, header only).
//    A TLP goes out at the first time at or after it is ready at which the
//    direction is free for its whole length (a later-ready TLP may use an
//    earlier idle gap: the link arbitrates per TLP).
//  - Splitting (PCIe base spec 2.2.7, 2.3.1.1): no request crosses a 4 KiB
//    address boundary; write TLPs are cut at MPS-aligned addresses; read
//    requests at MRRS-aligned addresses; the host completes a read request
//    with completions of at most MPS bytes, each ending at an RCB-aligned
//    address (RCB = 64 bytes) except the last, greedily: an unaligned
//    request's first completion is shorter than MPS.
//  - Latency: read_latency_ns from the end of a read request on the link to
//    the host's first completion being ready (root complex + memory); MMIO
//    writes reach the NIC mmio_write_latency_ns after the host issues them
//    (posted: the CPU does not wait), MMIO reads pay it both ways.
//
// Throughput (tb/dma derives exact times from these rules): a stream of TLPs with
// P payload bytes each moves
//
//     rate(P) = lanes x GT/s x (128/130) / 8 x P / (P + 24)   bytes per ns
//
// with P = MPS for DMA writes (up) and P = min(MPS, MRRS) for aligned DMA
// reads (the completions, down). Read requests travel up and cost 24 bytes
// each, so a read stream also takes 24/MRRS of the up direction.
// Examples: Gen3 x8 MPS 128: 6.633 B/ns; MPS 256: 7.202; MPS 512: 7.525;
// Gen3 x16 MPS 256: 14.404 B/ns (115.2 Gb/s).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstddef>
#include <string>
#include <vector>

namespace ernic {

constexpr uint32_t kTlpOverhead = 24;   // bytes on the wire besides the payload
constexpr uint64_t k4KiB = 4096;        // no TLP or AXI burst crosses it

struct PcieParams {
  uint32_t gen = 3;                     // 3: 8 GT/s, 4: 16 GT/s (128b/130b both)
  uint32_t lanes = 16;
  uint32_t mps = 256;                   // max payload size (writes, completions)
  uint32_t mrrs = 512;                  // max read request size
  uint32_t rcb = 64;                    // read-completion boundary (root complexes: 64)
  // From the end of a read request on the link to the host's first
  // completion: root complex and DRAM. 500 ns is the usual figure for a
  // Gen3 host (measured MRd->CplD round trips are 400..900 ns); PG332
  // publishes none. Assumption A-PCIE-2.
  uint32_t read_latency_ns = 500;
  // A posted MMIO write (doorbell) from the CPU's store to the TLP reaching
  // the NIC: CPU write-combining/uncore, root port, link flight.
  // 250 ns: the usual figure for a doorbell write on Gen3 hosts (about half
  // an MMIO read round trip of ~500 ns). Assumption A-PCIE-3.
  uint32_t mmio_write_latency_ns = 250;

  double gts() const { return gen >= 4 ? 16.0 : 8.0; }
  // Bytes per ns in one direction before TLP overhead (128b/130b applied).
  double raw_bytes_per_ns() const { return double(lanes) * gts() * (128.0 / 130.0) / 8.0; }
  // The formula above: payload bytes per ns of a stream of P-byte TLPs.
  double payload_rate(uint32_t payload) const {
    return raw_bytes_per_ns() * double(payload) / double(payload + kTlpOverhead);
  }
  double write_rate() const { return payload_rate(mps); }
  double read_rate() const { return payload_rate(std::min(mps, mrrs)); }
  // One line for run summaries: link, MPS/MRRS, the formula's payload rates.
  std::string summary() const;
};

// A piece of an address range.
struct Span {
  uint64_t addr;
  uint32_t len;
};

// [addr, addr+len) cut at every multiple of `boundary` (a power of two):
// f(Span) for each piece, in order. No allocation (the DMA's hot path).
template <class F>
inline void for_each_aligned(uint64_t addr, uint64_t len, uint64_t boundary, F&& f) {
  while (len) {
    const uint64_t room = boundary - (addr & (boundary - 1));
    const uint64_t n = std::min(room, len);
    f(Span{addr, uint32_t(n)});
    addr += n;
    len -= n;
  }
}
// The same pieces as a vector.
inline std::vector<Span> split_aligned(uint64_t addr, uint64_t len, uint64_t boundary) {
  std::vector<Span> v;
  for_each_aligned(addr, len, boundary, [&](const Span& s) { v.push_back(s); });
  return v;
}

// The completions a host returns for one read request: each at most MPS
// bytes and, but for the last, ending at an RCB-aligned address. f(Span)
// for each, in order.
template <class F>
inline void for_each_completion(uint64_t addr, uint32_t len, uint32_t mps, uint32_t rcb, F&& f) {
  const uint64_t end = addr + len;
  while (addr < end) {
    uint64_t stop = addr + mps;
    if (stop < end) stop &= ~uint64_t(rcb - 1);
    if (stop <= addr) stop = std::min<uint64_t>(end, addr + rcb);  // cannot happen with MPS >= RCB
    stop = std::min(stop, end);
    f(Span{addr, uint32_t(stop - addr)});
    addr = stop;
  }
}
// The same completions as a vector.
inline std::vector<Span> completions(uint64_t addr, uint32_t len, uint32_t mps, uint32_t rcb) {
  std::vector<Span> v;
  for_each_completion(addr, len, mps, rcb, [&](const Span& s) { v.push_back(s); });
  return v;
}

// What one DMA call becomes on AXI and PCIe (for the log and the tests).
struct DmaPlan {
  uint32_t bursts = 0;       // AXI bursts (cut at 4 KiB)
  uint32_t requests = 0;     // MWr TLPs (write) or MRd TLPs (read)
  uint32_t completions = 0;  // CplD TLPs (read)
};
inline DmaPlan plan_dma(const PcieParams& p, uint64_t addr, uint64_t len, bool write) {
  DmaPlan d;
  for_each_aligned(addr, len, k4KiB, [&](const Span& b) {
    ++d.bursts;
    for_each_aligned(b.addr, b.len, write ? p.mps : p.mrrs, [&](const Span& r) {
      ++d.requests;
      if (!write) for_each_completion(r.addr, r.len, p.mps, p.rcb, [&](const Span&) { ++d.completions; });
    });
  });
  return d;
}

class PcieLink {
 public:
  enum Dir { kUp = 0, kDown = 1 };  // up: device -> host; down: host -> device
  explicit PcieLink(const PcieParams& p = {}) : p_(p), ps_per_byte_(1000.0 / p.raw_bytes_per_ns()) {}
  const PcieParams& params() const { return p_; }

  // Link time of a TLP with `payload` bytes, in ps.
  uint64_t tlp_ps(uint32_t payload) const {
    if (payload != memo_payload_) {  // a stream's TLPs are mostly of one size (MPS)
      memo_payload_ = payload;
      memo_ps_ = uint64_t(std::llround(double(payload + kTlpOverhead) * ps_per_byte_));
    }
    return memo_ps_;
  }
  // Sends one TLP that is ready at ready_ps (>= now_ps); returns when its
  // last byte has left (the earliest idle stretch of its length).
  uint64_t send(Dir d, uint64_t ready_ps, uint32_t payload, uint64_t now_ps) {
    Lane& l = lanes_[d];
    const uint64_t dur = tlp_ps(payload);
    // Forget what ended before now: nothing can be placed there. The live
    // stretches are busy[head..]; the vector is compacted now and then, so
    // a stream of TLPs (booked at its end) allocates nothing.
    while (l.head < l.busy.size() && l.busy[l.head].end <= now_ps) ++l.head;
    if (l.head >= 64 && 2 * l.head >= l.busy.size()) {
      l.busy.erase(l.busy.begin(), l.busy.begin() + std::ptrdiff_t(l.head));
      l.head = 0;
    }
    ++l.tlps;
    l.payload_bytes += payload;
    l.busy_ps += dur;
    // Ready after everything booked (a stream's usual case): booked at
    // ready_ps, at the end, as the search below would.
    if (l.head == l.busy.size() || l.busy.back().end <= ready_ps) {
      if (l.head < l.busy.size() && l.busy.back().end == ready_ps)
        l.busy.back().end = ready_ps + dur;
      else
        l.busy.push_back(Stretch{ready_ps, ready_ps + dur});
      return ready_ps + dur;
    }
    const auto first = l.busy.begin() + std::ptrdiff_t(l.head);
    uint64_t t = ready_ps;
    auto it = std::upper_bound(first, l.busy.end(), t, [](uint64_t v, const Stretch& s) { return v < s.start; });
    if (it != first && std::prev(it)->end > t) t = std::prev(it)->end;
    while (it != l.busy.end() && it->start < t + dur) {
      t = std::max(t, it->end);
      ++it;
    }
    // Book [t, t+dur), merged with its neighbours when they touch. [t,
    // t+dur) is idle, so the first stretch from t on starts at t+dur or
    // later; merging into the previous stretch extends it in place.
    uint64_t e = t + dur;
    size_t nx = size_t(std::lower_bound(first, l.busy.end(), t,
                                        [](const Stretch& s, uint64_t v) { return s.start < v; }) -
                       l.busy.begin());
    if (nx < l.busy.size() && l.busy[nx].start == e) {
      e = l.busy[nx].end;
      l.busy.erase(l.busy.begin() + std::ptrdiff_t(nx));
    }
    if (nx > l.head && l.busy[nx - 1].end == t)
      l.busy[nx - 1].end = e;
    else
      l.busy.insert(l.busy.begin() + std::ptrdiff_t(nx), Stretch{t, e});
    return t + dur;
  }
  uint64_t tlps(Dir d) const { return lanes_[d].tlps; }
  uint64_t payload_bytes(Dir d) const { return lanes_[d].payload_bytes; }
  uint64_t busy_ps(Dir d) const { return lanes_[d].busy_ps; }

 private:
  struct Stretch {
    uint64_t start, end;  // ps, [start, end)
  };
  struct Lane {
    std::vector<Stretch> busy;  // booked stretches, disjoint, by start; those before head are forgotten
    size_t head = 0;
    uint64_t tlps = 0, payload_bytes = 0, busy_ps = 0;
  };
  PcieParams p_;
  double ps_per_byte_;
  // tlp_ps's last payload (none is UINT32_MAX bytes) and its time. A
  // PcieLink is one node's, used from its SystemC kernel's thread only.
  mutable uint32_t memo_payload_ = UINT32_MAX;
  mutable uint64_t memo_ps_ = 0;
  Lane lanes_[2];
};

inline std::string PcieParams::summary() const {
  char b[200];
  std::snprintf(b, sizeof b,
                "PCIe Gen%u x%u (%.3f GB/s raw a direction), MPS %u / MRRS %u / RCB %u: write %.3f GB/s, "
                "read %.3f GB/s payload (formula); read latency %u ns, MMIO write %u ns",
                gen, lanes, raw_bytes_per_ns(), mps, mrrs, rcb, write_rate(), read_rate(), read_latency_ns,
                mmio_write_latency_ns);
  return b;
}

}  // namespace ernic
