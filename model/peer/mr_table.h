// model/peer: the ideal peer's MRs: allocation in its host memory, R_Key
// lookup and the responder's access check (IBTA vol. 1 chapter 9, memory
// access by a responder: R_Key valid, the
// access right, [VA, VA + length) inside the MR; a failure is a remote
// access error, NAK code 2). Plain C++.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/peer/peer_qp.h"

namespace ernic::peer {

class PeerMrTable {
 public:
  // memory_bytes: the host memory the MRs are placed in (from 1 MiB up,
  // 4 KiB aligned; the first MiB stays free, as the built-in driver's).
  explicit PeerMrTable(uint64_t memory_bytes) : memory_bytes_(memory_bytes) {}

  // A new MR of `length` bytes (access: "r", "w" or "rw"); nullopt when the
  // memory is full or the name is taken (*why says which).
  std::optional<PeerMr> add(const std::string& name, uint64_t length, bool remote_read, bool remote_write,
                            std::string* why);
  // Memory for the peer's own use (a receive ring no MR names), 4 KiB aligned.
  std::optional<uint64_t> alloc(uint64_t length);
  const PeerMr* find(const std::string& name) const;

  // The responder's check of a RETH (va, rkey, len) for a WRITE (write) or
  // a READ: the physical address of va, or nullopt (a remote access error).
  // A zero-length access checks no R_Key (IBTA: a zero-length RDMA
  // operation accesses no memory) and gives 0.
  std::optional<uint64_t> check(uint32_t rkey, uint64_t va, uint64_t len, bool write) const;

  static constexpr uint64_t kBase = 1ull << 20;      // first byte the table allocates
  static constexpr uint64_t kAlign = 4096;
  // VA = PA + kVaOffset: a requester that sent a physical address (or
  // another MR's VA) misses.
  static constexpr uint64_t kVaOffset = 0x7f0000000000ull;

 private:
  uint64_t memory_bytes_;
  uint64_t next_ = kBase;
  std::vector<PeerMr> mrs_;
};

}  // namespace ernic::peer
