// model/system: the expectation steps on what happens in the system:
// expect_frames (a direction's frames against patterns), expect_idle,
// wait_until (a register value or a frame count), expect_compliance,
// expect_switch (a switch port's counters), expect_qp (a QP's requester
// state).
#include "model/system/system.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic {

using namespace sc_core;

size_t System::frames_seen(const Direction& d, const std::vector<uint8_t>& opcodes) const {
  auto it = dirs.find(d.from + "->" + d.to);
  if (it == dirs.end()) return 0;
  size_t n = 0;
  // Counted in the current window: since the previous expect_frames on this direction.
  const auto& tx = it->second.tx;
  for (size_t i = it->second.cursor_tx; i < tx.size(); ++i)
    if (const auto& f = tx[i]; opcodes.empty() || (f.roce && std::find(opcodes.begin(), opcodes.end(), uint8_t(f.opcode)) != opcodes.end()))
      ++n;
  return n;
}

// Does got[from..] match the pattern sequence exactly (every frame used)?
// Backtracking over the repetition counts; the patterns are short.
bool System::frames_match(const FrameList& got, size_t from, const std::vector<FramePattern>& pat,
                          std::string* why) const {
  size_t best = from;  // furthest frame reached, for the message
  size_t best_pi = 0;  // the pattern that frame was held against
  int64_t best_prev = -1;
  std::function<bool(size_t, size_t, int64_t)> m = [&](size_t fi, size_t pi, int64_t prev_psn) -> bool {
    if (fi > best || (fi == best && pi > best_pi)) {
      best = fi;
      best_pi = pi;
      best_prev = prev_psn;
    }
    if (pi == pat.size()) return fi == got.size();
    const FramePattern& p = pat[pi];
    auto one = [&](const FrameRec& f, int64_t prev) {
      if (!p.opcodes.empty() &&
          (!f.roce || std::find(p.opcodes.begin(), p.opcodes.end(), uint8_t(f.opcode)) == p.opcodes.end()))
        return false;
      if (p.psn && (!f.roce || f.psn != *p.psn)) return false;
      if (p.psn_next && (!f.roce || prev < 0 || f.psn != roce::psn_add(uint32_t(prev), 1))) return false;
      if (p.syndrome && f.syndrome != int(*p.syndrome)) return false;
      if (p.msn && (f.syndrome < 0 || f.msn != *p.msn)) return false;
      if (p.dest_qp && (!f.roce || f.dest_qp != *p.dest_qp)) return false;
      return true;
    };
    // Take k frames for this pattern, k from min up to max (greedy last).
    size_t k = 0;
    int64_t psn = prev_psn;
    std::vector<int64_t> psns{prev_psn};
    while (k < p.max && fi + k < got.size() && one(got[fi + k], psn)) {
      psn = got[fi + k].roce ? int64_t(got[fi + k].psn) : psn;
      ++k;
      psns.push_back(psn);
    }
    for (size_t t = k + 1; t-- > 0;) {
      if (t < p.min) break;
      if (m(fi + t, pi + 1, psns[t])) return true;
    }
    return false;
  };
  if (m(from, 0, -1)) return true;
  // The pattern the failing frame was held against, in the file's terms.
  auto describe = [&](size_t pi, int64_t prev) {
    if (pi >= pat.size()) return std::string("no more frames");
    const FramePattern& p = pat[pi];
    std::string d = fmt::format("frames[{}]: opcode ", pi);
    if (p.opcodes.empty()) d += "any";
    for (size_t i = 0; i < p.opcodes.size(); ++i) d += (i ? "|" : "") + std::string(roce::opcode_name(p.opcodes[i]));
    if (p.psn) d += fmt::format(", psn 0x{:06x}", *p.psn);
    if (p.psn_next)
      d += prev < 0 ? std::string(", psn next") : fmt::format(", psn next = 0x{:06x}", roce::psn_add(uint32_t(prev), 1));
    if (p.syndrome) d += fmt::format(", syndrome 0x{:02x}", *p.syndrome);
    if (p.msn) d += fmt::format(", msn {}", *p.msn);
    if (p.dest_qp) d += fmt::format(", dest_qp {}", *p.dest_qp);
    return d;
  };
  if (why) {
    if (best < got.size())
      *why = fmt::format("frame {} does not fit the expected sequence (it was held against {}): {}", got[best].index,
                         describe(best_pi, best_prev), got[best].str());
    else
      *why = fmt::format("the {} frame(s) seen end before the expected sequence does", got.size() - from);
  }
  return false;
}

// expect_frames: the direction's frames since the previous expect_frames
// against the patterns.
void System::handle(const ExpectFramesStep& s, const SourceLoc& loc, Group*) {
  const std::string name = s.dir.from + "->" + s.dir.to;
  DirFrames& d = dirs[name];
  auto& list = s.tap == Tap::tx ? d.tx : d.rx;
  size_t& cur = s.tap == Tap::tx ? d.cursor_tx : d.cursor_rx;
  std::string why;
  if (!frames_match(list, cur, s.frames, &why))
    fail(loc, fmt::format("frames on {} ({} tap) since the previous expect_frames: {}", name,
                          s.tap == Tap::tx ? "tx" : "rx", why));
  cur = list.size();
}

// expect_idle: no frame on the directions and no CQE anywhere for the
// time given. (A split run: each process watches the directions its node
// sends on, a star's switch process its ports' own frames, and counts its
// node's CQEs; the processes sum the CQEs at the end, so each reports the
// same count, once in the merged report.)
void System::handle(const ExpectIdleStep& s, const SourceLoc& loc, Group*) {
  std::vector<size_t> before;
  for (const Direction& d : s.dirs) before.push_back(dirs[d.from + "->" + d.to].tx.size());
  auto cqes = [this] {
    uint64_t n = 0;
    for (auto& nd : nodes) n += nd->ernic ? nd->ernic->stats().cqes_written : 0;
    return n;
  };
  const uint64_t cqes0 = cqes();
  ++bounded_;
  wait(sc_time(double(s.us), SC_US));
  --bounded_;
  for (size_t i = 0; i < s.dirs.size(); ++i) {
    const auto& list = dirs[s.dirs[i].from + "->" + s.dirs[i].to].tx;
    if (list.size() != before[i])
      fail(loc, fmt::format("{} frame(s) on {} during {} us of expected idleness; first: {}", list.size() - before[i],
                            s.dirs[i].from + "->" + s.dirs[i].to, s.us, list[before[i]].str()));
  }
  uint64_t written = cqes() - cqes0;
  if (split()) written = split_sum({written}).at(0);
  if (written) fail(loc, fmt::format("{} CQE(s) written during {} us of expected idleness", written, s.us));
}

// wait_until: until a register matches or enough matching frames were
// seen, or the timeout.
void System::handle(const WaitUntilStep& s, const SourceLoc& loc, Group*) {
  const uint64_t deadline = sc_time_stamp().value() + s.timeout_us * 1000000ull;
  ++bounded_;
  bool ok = false;
  uint32_t v = 0;
  for (;;) {
    if (s.frames_dir) {
      ok = frames_seen(*s.frames_dir, s.frames_opcodes) >= s.frames_count;
    } else if (s.reg) {
      v = reg_read_value(*s.reg);
      ok = (v & s.mask) == (s.value & s.mask);
    }
    if (ok || sc_time_stamp().value() >= deadline) break;
    if (s.frames_dir)
      wait(sc_time(double(deadline - sc_time_stamp().value()), SC_PS), frame_ev_);
    else
      wait(sc_time(100, SC_NS));
  }
  --bounded_;
  if (!ok) {
    snapshot_qps();
    if (s.frames_dir)
      fail(loc, fmt::format("fewer than {} matching frame(s) on {}->{} within {} us", s.frames_count,
                            s.frames_dir->from, s.frames_dir->to, s.timeout_us));
    else
      fail(loc, fmt::format("{} did not become 0x{:x} within {} us (last 0x{:x})", reg_name(*s.reg),
                            s.value & s.mask, s.timeout_us, v));
  }
}

// expect_compliance: the count of the rule's PG332 compliance reports so
// far.
void System::handle(const ExpectComplianceStep& s, const SourceLoc& loc, Group*) {
  uint64_t n = compliance.count(s.rule);
  if (split()) n = split_sum({n}).at(0);  // each process checks its own node's frames
  if (n != s.count)
    fail(loc, fmt::format("{} compliance report(s) of rule {} so far, expected {}", n, s.rule, s.count));
}

// expect_switch: a port's counters (model/link/switch_counters.h) now.
void System::handle(const ExpectSwitchStep& s, const SourceLoc& loc, Group*) {
  if (!net_switch) return fail(loc, "expect_switch needs topology: switch");
  const int p = net_switch->port_of(node(s.port)->cfg.mac.b.data());
  const SwitchPortCounters c = net_switch->port(size_t(p)).counters_now();
  std::string bad;
  for (const CounterCheck& k : s.checks)
    for (const SwitchCounterName& n : kSwitchCounters)
      if (k.counter == n.name && !k.holds(c.*n.field))
        bad += fmt::format("{}{} is {}, expected {}", bad.empty() ? "" : "; ", k.counter, c.*n.field, k.str());
  if (!bad.empty()) fail(loc, fmt::format("switch port {}: {}", s.port, bad));
}

// expect_qp: an RC QP's requester state in the ERNIC model now.
void System::handle(const ExpectQpStep& s, const SourceLoc& loc, Group*) {
  const Ernic& e = *node(s.node)->ernic;
  std::string bad;
  for (const CounterCheck& k : s.checks) {  // the names of kQpStateNames (steps.h)
    uint64_t v = 0;
    if (k.counter == "outstanding_limit")
      v = e.outstanding_limit(s.qp);
    else if (k.counter == "outstanding")
      v = e.outstanding(s.qp);
    else
      return fail(loc, "internal error: expect_qp has no value named " + k.counter);
    if (!k.holds(v)) bad += fmt::format("{}{} is {}, expected {}", bad.empty() ? "" : "; ", k.counter, v, k.str());
  }
  if (!bad.empty()) fail(loc, fmt::format("node {} QP{}: {}", s.node, s.qp, bad));
}

}  // namespace ernic
