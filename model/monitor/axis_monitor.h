// model/monitor: AXI4-Stream protocol checker for one interface (one
// direction of one seam), fed with the sampled signals once per clock edge.
// Plain C++ (no SystemC); model/monitor/protocol.h registers one per seam
// and routes its violations into the run's error path.
//
// Rules (names as in ARM's AXI4-Stream protocol assertions, BP063; spec
// sections of ARM IHI 0051A):
//   AXI4STREAM_ERRM_TVALID_RESET   TVALID low during reset and on the first
//                                  edge after ARESETn goes high (2.7.2)
//   AXI4STREAM_ERRM_TVALID_STABLE  once TVALID is high it stays high until
//                                  the handshake (TVALID && TREADY) (2.2.1)
//   AXI4STREAM_ERRM_TDATA_STABLE,  TDATA (bytes whose TKEEP bit is set),
//   _TKEEP_STABLE, _TLAST_STABLE,  TKEEP, TLAST and TUSER do not change
//   _TUSER_STABLE                  while TVALID is high and TREADY low (2.2.1)
// and the seam's own rules (rtl/SEAM.md; not ARM's, switched by AxisRules):
//   SEAM_TKEEP_CONTIGUOUS          on every transferred beat TKEEP is all
//                                  ones, except on a TLAST beat: 1..all ones
//                                  contiguous from bit 0 (no null beat)
//   SEAM_NO_BUBBLE                 once a frame's first beat is transferred,
//                                  TVALID stays high up to its TLAST beat
//                                  (roce_tx's output; the CMAC's TX stream,
//                                  where a bubble is a TX underflow)
// A stream without TREADY (the RX seam) takes TREADY as 1: every edge with
// TVALID high is a transfer, the stability rules cannot fire.
//
// Sampling. sample(cycle, s) gives the signals as a flip-flop clocked at
// rising edge `cycle` sees them (cycle = the edge's index in its clock
// domain: ClockDomain::cycle() of the edge), and says they stay so at every
// later edge until the next call: a caller only calls where it changes a
// signal, or at every edge where it has a new beat. A later call for the
// same edge replaces the earlier one (the last call for an edge wins).
// TDATA matters only next to a stall (the stability rules), so a caller
// presenting N beats back to back (TVALID and TREADY high throughout) may
// sample the first and the last of them only: the edges between count as
// transfers of full (all-ones TKEEP), non-TLAST beats.
// Edges are evaluated lazily, when a call for a later edge (or finish())
// arrives: a violation is reported at most one call after it happened,
// stamped with its own edge. A run of identical edges costs one evaluation
// (counters are advanced in closed form), so a held stall or idle period
// is free. A call for an earlier edge than the last is a caller bug: it is
// reported (rule MONITOR_CYCLE_ORDER) and ignored.
//
// Counters: beats (transfers), frames (transfers with TLAST), stalls (edges
// with TVALID high and TREADY low), bubbles (edges with TVALID low inside a
// frame), violations (each violation once: a held run of one violating
// state counts once; the report callback gets the first kMaxReports of each
// monitor, then one MONITOR_SUPPRESSED note, and counting goes on).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ernic::monitor {

// One protocol violation. where = the monitor's name (the interface, e.g.
// "top.A.cmac.tx_axis"); cycle = the edge of its clock (clock) where it
// happened; rule = the rule's name (above / axil_monitor.h); what = the
// values involved, one line.
struct ProtocolViolation {
  std::string where;
  std::string clock;
  uint64_t cycle = 0;
  std::string rule;
  std::string what;
  std::string str() const;  // "RULE at <clock> cycle N: what"
};
using ViolationSink = std::function<void(const ProtocolViolation&)>;

// One monitor's reports: the first kMaxReports violations go to the sink
// and are kept, then one MONITOR_SUPPRESSED note; later ones are dropped
// (the monitor's counters still count them).
class ViolationLog {
 public:
  static constexpr size_t kMaxReports = 16;
  ViolationLog(std::string name, std::string clock, ViolationSink sink)
      : name_(std::move(name)), clock_(std::move(clock)), sink_(std::move(sink)) {}
  void report(uint64_t cycle, const char* rule, std::string what);
  const std::string& name() const { return name_; }
  const std::string& clock() const { return clock_; }
  const std::vector<ProtocolViolation>& reported() const { return reported_; }

 private:
  std::string name_, clock_;
  ViolationSink sink_;
  std::vector<ProtocolViolation> reported_;
};

// The interface's signals at one edge. TDATA up to 1024 bits as 64-bit
// words (word i = TDATA[64i+63:64i], byte k of the beat = bits [8k+7:8k]).
struct AxisSample {
  bool reset = false;    // ARESETn low at this edge
  bool valid = false;    // TVALID
  bool ready = true;     // TREADY (ignored when the stream has none)
  bool last = false;     // TLAST
  uint64_t keep = ~uint64_t(0);  // TKEEP, bit k = byte k
  uint64_t user = 0;     // TUSER (up to 64 bits)
  const uint64_t* data = nullptr;  // TDATA words (AxisRules::data_bytes / 8, rounded up); nullptr: not checked
};

struct AxisRules {
  unsigned data_bytes = 64;     // TDATA width in bytes, 1..128 (TKEEP: the first 64 bytes)
  bool has_ready = true;        // false: no TREADY (taken as 1)
  bool has_keep = true;         // false: no TKEEP (taken as all ones; every TDATA byte checked)
  bool has_last = true;         // false: no TLAST (every transfer is a frame of one beat)
  bool keep_contiguous = true;  // SEAM_TKEEP_CONTIGUOUS (with has_keep)
  bool no_bubble = false;       // SEAM_NO_BUBBLE
  // rtl/SEAM.md streams: 512-bit, keep contiguous, with or without TREADY,
  // with or without the no-bubble promise.
  static AxisRules seam(bool has_ready, bool no_bubble) {
    AxisRules r;
    r.has_ready = has_ready;
    r.no_bubble = no_bubble;
    return r;
  }
  // A descriptor bus of rtl/SEAM.md (valid, optional ready, `bits` of
  // payload, no TKEEP/TLAST): s_desc (768 bits, ready), m_desc (1024, none).
  static AxisRules descriptor(unsigned bits, bool has_ready) {
    AxisRules r;
    r.data_bytes = (bits + 7) / 8;
    r.has_ready = has_ready;
    r.has_keep = r.has_last = r.keep_contiguous = false;
    return r;
  }
};

struct AxisCounters {
  uint64_t beats = 0, frames = 0, stalls = 0, bubbles = 0, violations = 0;
  uint64_t edges = 0;  // edges evaluated (held runs included)
};

class AxisMonitor {
 public:
  static constexpr size_t kMaxReports = ViolationLog::kMaxReports;
  AxisMonitor(std::string name, std::string clock, AxisRules rules, ViolationSink sink = {});

  void sample(uint64_t cycle, const AxisSample& s);
  // End of the run: evaluates the last sample's edge (once; later calls of
  // sample() continue from it).
  void finish();

  const std::string& name() const { return log_.name(); }
  const std::string& clock() const { return log_.clock(); }
  const AxisRules& rules() const { return rules_; }
  const AxisCounters& counters() const { return n_; }
  bool in_frame() const { return in_frame_; }     // a frame started and its TLAST beat not yet transferred
  // The violations reported so far (at most kMaxReports + 1).
  const std::vector<ProtocolViolation>& violations() const { return log_.reported(); }

 private:
  struct Edge {
    bool reset = false, valid = false, ready = true, last = false, has_data = false;
    uint64_t keep = 0, user = 0;
    std::array<uint64_t, 16> data{};
  };
  void load(Edge& e, const AxisSample& s) const;
  void evaluate(uint64_t cycle, const Edge& cur);
  void repeat(uint64_t n);  // n more edges equal to prev_
  void violation(uint64_t cycle, const char* rule, std::string what);
  std::string where_in_frame() const;

  ViolationLog log_;
  AxisRules rules_;
  unsigned words_;
  AxisCounters n_;
  // Evaluated up to edge prev_cycle_ (prev_ = its signals); pending_ at
  // pending_cycle_ waits for a later call.
  bool have_prev_ = false, have_pending_ = false;
  uint64_t prev_cycle_ = 0, pending_cycle_ = 0;
  Edge prev_, pending_;
  bool in_frame_ = false;
  uint64_t frame_beats_ = 0;  // beats of the current frame transferred so far
};

// Beat `beat` of a byte string cut into data_bytes-wide beats (byte 0 of
// the string = byte 0 of beat 0): its TDATA words (zero beyond the end),
// TKEEP and TLAST. For models that present a frame on an AXI4-Stream.
struct AxisBeat {
  std::array<uint64_t, 8> data{};
  uint64_t keep = 0;
  bool last = false;
};
AxisBeat axis_beat(const uint8_t* bytes, size_t len, size_t beat, unsigned data_bytes = 64);
inline size_t axis_beats(size_t len, unsigned data_bytes = 64) { return (len + data_bytes - 1) / data_bytes; }

}  // namespace ernic::monitor
