// model/peer: see mr_table.h.
#include "model/peer/mr_table.h"

namespace ernic::peer {

std::optional<uint64_t> PeerMrTable::alloc(uint64_t length) {
  const uint64_t pa = next_;
  if (length > memory_bytes_ || pa > memory_bytes_ - length) return std::nullopt;
  next_ = (pa + length + kAlign - 1) / kAlign * kAlign;
  return pa;
}

std::optional<PeerMr> PeerMrTable::add(const std::string& name, uint64_t length, bool remote_read, bool remote_write,
                                       std::string* why) {
  if (find(name)) {
    if (why) *why = "an MR named '" + name + "' exists";
    return std::nullopt;
  }
  const auto pa = alloc(length);
  if (!pa) {
    if (why) *why = "the peer's memory is full (memory_mib)";
    return std::nullopt;
  }
  PeerMr m;
  m.name = name;
  m.pa = *pa;
  m.va = *pa + kVaOffset;
  m.length = length;
  // An 8-bit key byte and the table index above it, as verbs R_Keys look.
  m.rkey = uint32_t(mrs_.size() + 1) << 8 | 0x5A;
  m.remote_read = remote_read;
  m.remote_write = remote_write;
  mrs_.push_back(m);
  return m;
}

const PeerMr* PeerMrTable::find(const std::string& name) const {
  for (const PeerMr& m : mrs_)
    if (m.name == name) return &m;
  return nullptr;
}

std::optional<uint64_t> PeerMrTable::check(uint32_t rkey, uint64_t va, uint64_t len, bool write) const {
  if (len == 0) return uint64_t(0);
  for (const PeerMr& m : mrs_) {
    if (m.rkey != rkey) continue;
    if (write ? !m.remote_write : !m.remote_read) return std::nullopt;
    if (va < m.va || va - m.va > m.length || len > m.length - (va - m.va)) return std::nullopt;
    return m.pa + (va - m.va);
  }
  return std::nullopt;
}

}  // namespace ernic::peer
