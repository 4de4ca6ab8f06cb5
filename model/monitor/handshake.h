// model/monitor: randomised handshake timing. Under a seed, the drivers of
// VALID and READY on the seams insert stall cycles at random, so that every
// block is exercised with back-pressure and gaps it would meet in hardware;
// the results (frame bytes and order, memory, CQEs) must not change, only
// their timing (scenario key `handshake_random`, `ernic-sim run
// --handshake-random SEED`; README.md).
//
// Each handshake signal is a stream with its own PRNG (splitmix64), seeded
// from the seed and the signal's name, so the draws of one signal do not
// depend on how often another one draws: a run is reproducible from the
// seed, and a change in one block's timing does not reshuffle the others'.
// One draw per decision (one clock edge of that signal):
//   READY signals (Kind::ready):  low with probability (100 - ready_pct) %
//   VALID signals (Kind::valid):  held low before an item with probability
//                                 (100 - valid_pct) % per edge
// A VALID that is high stays high until its handshake (AXI rules): the
// randomiser only delays raising it (and, on streams that allow it, the
// next beat inside a frame). Streams that promise no bubble (roce_tx's
// output, the CMAC's TX) draw VALID delays only before a frame's first beat.
//
// Disabled (the default, and for nodes without the key) a stream never
// stalls and draws nothing: the run is cycle-for-cycle the unrandomised one.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ernic::monitor {

struct HandshakeRandomConfig {
  uint64_t seed = 1;
  uint32_t ready_pct = 70;  // 1..100: percentage of edges a randomised READY is high
  uint32_t valid_pct = 80;  // 1..100: percentage of edges a pending VALID is raised
};

class HandshakeRandomizer {
 public:
  enum class Kind { ready, valid };
  struct Stream {
    std::string name;    // the signal, e.g. "top.A.cmac.tx_axis.tready"
    Kind kind = Kind::ready;
    uint64_t state = 0;  // splitmix64 state
    uint32_t pct = 100;  // go probability in percent
    uint64_t decisions = 0, stalls = 0;
  };

  HandshakeRandomizer() = default;  // disabled
  explicit HandshakeRandomizer(const HandshakeRandomConfig& c) : enabled_(true), cfg_(c) {}
  bool enabled() const { return enabled_; }
  const HandshakeRandomConfig& config() const { return cfg_; }

  // Registers a signal; returns its id. Names should be unique per run.
  int stream(const std::string& name, Kind kind);
  // One edge's decision for stream `id`: true = stall (READY low / VALID
  // held low) at this edge. Always false when disabled.
  bool stall(int id);
  // The number of consecutive stalls before the next go (stall() called
  // until it returns false): the cycles to wait before this transfer.
  uint32_t hold(int id);
  const std::vector<Stream>& streams() const { return streams_; }
  uint64_t total_stalls() const;

 private:
  bool enabled_ = false;
  HandshakeRandomConfig cfg_;
  std::vector<Stream> streams_;
};

// A handle on one stream of a randomiser, for the driver of that signal.
// Default-constructed (or from a disabled randomiser): never stalls.
class HandshakeStall {
 public:
  HandshakeStall() = default;
  HandshakeStall(HandshakeRandomizer* r, int id) : r_(r && r->enabled() ? r : nullptr), id_(id) {}
  explicit operator bool() const { return r_ != nullptr; }  // randomised at all
  bool operator()() { return r_ && r_->stall(id_); }       // stall at this edge?
  uint32_t hold() { return r_ ? r_->hold(id_) : 0; }       // stall edges before the next transfer
 private:
  HandshakeRandomizer* r_ = nullptr;
  int id_ = -1;
};

}  // namespace ernic::monitor
