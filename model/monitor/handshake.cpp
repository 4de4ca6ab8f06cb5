#include "model/monitor/handshake.h"

namespace ernic::monitor {

namespace {
uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}
}  // namespace

int HandshakeRandomizer::stream(const std::string& name, Kind kind) {
  Stream s;
  s.name = name;
  s.kind = kind;
  s.pct = kind == Kind::ready ? cfg_.ready_pct : cfg_.valid_pct;
  if (s.pct < 1) s.pct = 1;
  if (s.pct > 100) s.pct = 100;
  uint64_t mix = cfg_.seed ^ fnv1a64(name);
  s.state = splitmix64(mix);
  streams_.push_back(std::move(s));
  return int(streams_.size() - 1);
}

bool HandshakeRandomizer::stall(int id) {
  if (!enabled_ || id < 0 || size_t(id) >= streams_.size()) return false;
  Stream& s = streams_[size_t(id)];
  ++s.decisions;
  if (s.pct >= 100) return false;
  // The high 32 bits, scaled to 0..99 (no modulo bias worth the name).
  const uint32_t r = uint32_t((splitmix64(s.state) >> 32) * 100 >> 32);
  const bool st = r >= s.pct;
  if (st) ++s.stalls;
  return st;
}

uint32_t HandshakeRandomizer::hold(int id) {
  uint32_t n = 0;
  while (stall(id)) ++n;
  return n;
}

uint64_t HandshakeRandomizer::total_stalls() const {
  uint64_t n = 0;
  for (const auto& s : streams_) n += s.stalls;
  return n;
}

}  // namespace ernic::monitor
