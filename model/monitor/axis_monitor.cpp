#include "model/monitor/axis_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace ernic::monitor {

std::string ProtocolViolation::str() const { return fmt::format("{} at {} cycle {}: {}", rule, clock, cycle, what); }

AxisMonitor::AxisMonitor(std::string name, std::string clock, AxisRules rules, ViolationSink sink)
    : log_(std::move(name), std::move(clock), std::move(sink)), rules_(rules) {
  rules_.data_bytes = std::clamp(rules_.data_bytes, 1u, 128u);
  if (rules_.data_bytes > 64) rules_.has_keep = false;  // TKEEP is 64 bits here
  if (!rules_.has_keep) rules_.keep_contiguous = false;
  words_ = (rules_.data_bytes + 7) / 8;
}

void AxisMonitor::load(Edge& e, const AxisSample& s) const {
  e.reset = s.reset;
  e.valid = s.valid;
  e.ready = rules_.has_ready ? s.ready : true;
  e.last = rules_.has_last ? s.last : true;
  const uint64_t mask = rules_.data_bytes >= 64 ? ~uint64_t(0) : (uint64_t(1) << rules_.data_bytes) - 1;
  e.keep = rules_.has_keep ? s.keep & mask : mask;
  e.user = s.user;
  // TDATA is compared only across a stall: keep it for a stalled edge and
  // for the edge after one (prev_ is the edge before this one).
  const bool after_stall = have_prev_ && !prev_.reset && prev_.valid && !prev_.ready;
  e.has_data = s.data != nullptr && s.valid && (!e.ready || after_stall);
  if (e.has_data) std::copy(s.data, s.data + words_, e.data.begin());
}

void AxisMonitor::sample(uint64_t cycle, const AxisSample& s) {
  if (have_pending_) {
    if (cycle == pending_cycle_) {  // the last call for an edge wins
      load(pending_, s);
      return;
    }
    if (cycle < pending_cycle_) {
      violation(cycle, "MONITOR_CYCLE_ORDER",
                fmt::format("sample for cycle {} after one for cycle {} (ignored)", cycle, pending_cycle_));
      return;
    }
    evaluate(pending_cycle_, pending_);
    have_pending_ = false;
  } else if (have_prev_ && cycle <= prev_cycle_) {
    violation(cycle, "MONITOR_CYCLE_ORDER",
              fmt::format("sample for cycle {} after cycle {} was evaluated (ignored)", cycle, prev_cycle_));
    return;
  }
  if (have_prev_ && cycle > prev_cycle_ + 1) repeat(cycle - prev_cycle_ - 1);
  load(pending_, s);
  pending_cycle_ = cycle;
  have_pending_ = true;
}

void AxisMonitor::finish() {
  if (!have_pending_) return;
  evaluate(pending_cycle_, pending_);
  have_pending_ = false;
}

std::string AxisMonitor::where_in_frame() const { return fmt::format("frame {} beat {}", n_.frames, frame_beats_); }

void ViolationLog::report(uint64_t cycle, const char* rule, std::string what) {
  if (reported_.size() > kMaxReports) return;
  ProtocolViolation v;
  v.where = name_;
  v.clock = clock_;
  v.cycle = cycle;
  if (reported_.size() == kMaxReports) {
    v.rule = "MONITOR_SUPPRESSED";
    v.what = fmt::format("{} violations reported; further ones on this interface are only counted", kMaxReports);
  } else {
    v.rule = rule;
    v.what = std::move(what);
  }
  reported_.push_back(std::move(v));
  if (sink_) sink_(reported_.back());
}

void AxisMonitor::violation(uint64_t cycle, const char* rule, std::string what) {
  ++n_.violations;
  log_.report(cycle, rule, std::move(what));
}

void AxisMonitor::evaluate(uint64_t cycle, const Edge& cur) {
  ++n_.edges;
  const bool first = !have_prev_;
  if (cur.reset) {
    if (cur.valid) violation(cycle, "AXI4STREAM_ERRM_TVALID_RESET", "TVALID high while ARESETn is low (IHI 0051A 2.7.2)");
    in_frame_ = false;
    frame_beats_ = 0;
  } else {
    if (!first && prev_.reset && cur.valid)
      violation(cycle, "AXI4STREAM_ERRM_TVALID_RESET",
                "TVALID high on the first edge after ARESETn went high (IHI 0051A 2.7.2)");
    if (!first && !prev_.reset && prev_.valid && !prev_.ready) {
      // The previous edge offered a beat that was not taken: it must still be offered, unchanged.
      if (!cur.valid) {
        violation(cycle, "AXI4STREAM_ERRM_TVALID_STABLE",
                  fmt::format("TVALID dropped before the handshake: TREADY was low at cycle {} with {} offered "
                              "(IHI 0051A 2.2.1)",
                              cycle - 1, where_in_frame()));
      } else {
        // Byte by byte (keep applied) only where a word changed: a beat
        // held for many edges compares a few words an edge.
        if (prev_.has_data && cur.has_data &&
            std::memcmp(prev_.data.data(), cur.data.data(), words_ * sizeof(uint64_t)) != 0)
          for (unsigned b = 0; b < rules_.data_bytes; ++b) {
            if (rules_.has_keep && !(prev_.keep >> b & 1)) continue;
            const uint8_t was = uint8_t(prev_.data[b / 8] >> (8 * (b % 8)));
            const uint8_t now = uint8_t(cur.data[b / 8] >> (8 * (b % 8)));
            if (was != now) {
              violation(cycle, "AXI4STREAM_ERRM_TDATA_STABLE",
                        fmt::format("TDATA byte {} changed 0x{:02x} -> 0x{:02x} while TVALID high and TREADY low "
                                    "({}; IHI 0051A 2.2.1)",
                                    b, was, now, where_in_frame()));
              break;
            }
          }
        if (prev_.keep != cur.keep)
          violation(cycle, "AXI4STREAM_ERRM_TKEEP_STABLE",
                    fmt::format("TKEEP changed 0x{:x} -> 0x{:x} while TVALID high and TREADY low ({}; IHI 0051A 2.2.1)",
                                prev_.keep, cur.keep, where_in_frame()));
        if (prev_.last != cur.last)
          violation(cycle, "AXI4STREAM_ERRM_TLAST_STABLE",
                    fmt::format("TLAST changed {} -> {} while TVALID high and TREADY low ({}; IHI 0051A 2.2.1)",
                                int(prev_.last), int(cur.last), where_in_frame()));
        if (prev_.user != cur.user)
          violation(cycle, "AXI4STREAM_ERRM_TUSER_STABLE",
                    fmt::format("TUSER changed 0x{:x} -> 0x{:x} while TVALID high and TREADY low ({}; IHI 0051A 2.2.1)",
                                prev_.user, cur.user, where_in_frame()));
      }
    }
    if (cur.valid) {
      if (!cur.ready) {
        ++n_.stalls;
      } else {
        if (rules_.keep_contiguous) {
          const uint64_t full = rules_.data_bytes >= 64 ? ~uint64_t(0) : (uint64_t(1) << rules_.data_bytes) - 1;
          if (!cur.last && cur.keep != full)
            violation(cycle, "SEAM_TKEEP_CONTIGUOUS",
                      fmt::format("TKEEP 0x{:x} on a beat without TLAST (all ones required; {}; rtl/SEAM.md)", cur.keep,
                                  where_in_frame()));
          else if (cur.last && (cur.keep == 0 || ((cur.keep + 1) & cur.keep) != 0))
            violation(cycle, "SEAM_TKEEP_CONTIGUOUS",
                      fmt::format("TKEEP 0x{:x} on the TLAST beat is not 1..{} ones contiguous from bit 0 ({}; "
                                  "rtl/SEAM.md)",
                                  cur.keep, rules_.data_bytes, where_in_frame()));
        }
        ++n_.beats;
        if (cur.last) {
          ++n_.frames;
          in_frame_ = false;
          frame_beats_ = 0;
        } else {
          in_frame_ = true;
          ++frame_beats_;
        }
      }
    } else if (in_frame_) {
      ++n_.bubbles;
      if (rules_.no_bubble && (first || prev_.valid))
        violation(cycle, "SEAM_NO_BUBBLE",
                  fmt::format("TVALID low inside a frame after {} beat(s) of frame {} (the stream promises no bubble "
                              "between a frame's first beat and its TLAST; rtl/SEAM.md)",
                              frame_beats_, n_.frames));
    }
  }
  prev_ = cur;
  prev_cycle_ = cycle;
  have_prev_ = true;
}

void AxisMonitor::repeat(uint64_t n) {
  n_.edges += n;
  if (!prev_.reset) {
    if (prev_.valid) {
      if (!prev_.ready) {
        n_.stalls += n;
      } else {
        n_.beats += n;
        if (prev_.last)
          n_.frames += n;
        else
          frame_beats_ += n;
      }
    } else if (in_frame_) {
      n_.bubbles += n;
    }
  }
  prev_cycle_ += n;
}

AxisBeat axis_beat(const uint8_t* bytes, size_t len, size_t beat, unsigned data_bytes) {
  AxisBeat b;
  const size_t off = beat * data_bytes;
  const size_t n = off < len ? std::min<size_t>(data_bytes, len - off) : 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n) std::memcpy(b.data.data(), bytes + off, n);  // byte k of the beat = bits [8k+7:8k]
#else
  for (size_t i = 0; i < n; ++i) b.data[i / 8] |= uint64_t(bytes[off + i]) << (8 * (i % 8));
#endif
  b.keep = n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
  b.last = off + data_bytes >= len;
  return b;
}

}  // namespace ernic::monitor
