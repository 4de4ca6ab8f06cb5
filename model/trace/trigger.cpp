// model/trace: trigger expressions (trigger.h): the named streams, the
// Trigger object, and the evaluation of a bound expression over the merged
// value changes of a run (hit times: rising edges of the condition, events,
// stall-count crossings). Syntax in trigger_parse.cpp, binding in
// trigger_bind.cpp.
#include "model/trace/trigger.h"

#include <algorithm>

#include "model/trace/trigger_expr.h"

namespace ernic::trigger {

const std::vector<StreamInfo>& streams() {
  static const std::vector<StreamInfo> s = {
      {"tx", "datapath.tx_seam.s_desc_valid", "datapath.tx_seam.s_desc_ready", "core",
       "ERNIC into the TX datapath: roce_tx's descriptor handshake (one a frame; ready low while roce_tx holds "
       "one, and while its buffer and the FIFO to the CMAC are full)"},
      {"rx", "ernic.rx_buffer.m_axis_tvalid", "ernic.rx_buffer.m_axis_tready", "core",
       "the RoCE RX buffer into the RX packet handler (one transfer a frame; tready low while the handler is busy)"},
      {"tx_mac", "cmac.tx_axis_tvalid", "cmac.tx_axis_tready", "cmac", "the CMAC's TX beats onto the line"},
      {"rx_mac", "cmac.rx_axis_tvalid", "", "cmac", "the CMAC's RX beats (no tready: never stalls)"},
      {"icrc", "datapath.rtl.roce_datapath.u_tx.u_icrc.s_valid", "datapath.rtl.roce_datapath.u_tx.u_icrc.s_ready",
       "core", "roce_tx's frames into its ICRC block (RTL datapath only)"},
  };
  return s;
}

Trigger::Trigger() = default;
Trigger::~Trigger() = default;
Trigger::Trigger(Trigger&&) noexcept = default;
Trigger& Trigger::operator=(Trigger&&) noexcept = default;

// ---------------------------------------------------------------- evaluation
namespace {

class Eval : public trace::MergedValueVisitor {
 public:
  Eval(const Expr& e, const Bound& b, Mode mode) : e_(e), b_(b), mode_(mode) {
    cur_.assign(b.slots.size(), std::nullopt);
    prev_.assign(b.slots.size(), std::nullopt);
    changed_.assign(b.slots.size(), 0);
    since_.assign(b.trackers.size(), std::nullopt);
  }
  std::vector<uint64_t> hits;

  bool wants_clock_edges() const override {
    for (const auto& s : b_.slots)
      if (s.compare(0, 11, "top.clocks.") == 0) return true;
    return false;
  }
  void begin(const std::vector<trace::MergedVar>& vars) override {
    slots_of_.assign(vars.size(), {});
    std::vector<char> found(b_.slots.size(), 0);
    for (size_t i = 0; i < vars.size(); ++i)
      for (const auto& n : vars[i].names) {
        auto it = b_.slot_of.find(n.full);
        if (it != b_.slot_of.end()) {
          slots_of_[i].push_back(it->second);
          found[size_t(it->second)] = 1;
        }
      }
    for (size_t s = 0; s < found.size(); ++s)
      if (!found[s]) throw std::runtime_error("trigger: signal " + b_.slots[s] + " is not in the waveform");
  }
  void initial(size_t var, std::optional<uint64_t> v) override {
    for (int s : slots_of_[var]) cur_[size_t(s)] = v;
  }
  void time(uint64_t t) override {
    finish_instant();
    crossings_before(t);
    now_ = t;
    prev_ = cur_;
    std::fill(changed_.begin(), changed_.end(), 0);
  }
  void change(size_t var, std::optional<uint64_t> v) override {
    for (int s : slots_of_[var]) {
      cur_[size_t(s)] = v;
      changed_[size_t(s)] = 1;
    }
  }
  void end(uint64_t end_time_ps) override {
    finish_instant();
    if (end_time_ps >= now_) crossings_before(end_time_ps + 1);
  }

 private:
  bool done() const { return mode_ == Mode::first && !hits.empty(); }
  std::optional<uint64_t> val(int slot) const { return cur_[size_t(slot)]; }
  bool is1(int slot) const { return val(slot) == std::optional<uint64_t>(1); }

  void finish_instant() {
    // Trackers follow the values at now_.
    for (size_t i = 0; i < b_.trackers.size(); ++i) {
      const Tracker& tr = b_.trackers[i];
      const bool c = is1(tr.valid) && tr.ready >= 0 && val(tr.ready) == std::optional<uint64_t>(0);
      if (!c) since_[i].reset();
      else if (!since_[i]) since_[i] = (now_ + tr.period - 1) / tr.period * tr.period;  // first edge at or after now
    }
    evaluate_at(now_, true);
  }
  // Evaluations where a stall count reaches an interesting count, before t.
  void crossings_before(uint64_t t) {
    while (!done()) {
      uint64_t best = ~uint64_t{0};
      for (size_t i = 0; i < b_.trackers.size(); ++i) {
        if (!since_[i]) continue;
        for (uint64_t k : b_.trackers[i].counts) {
          const uint64_t x = *since_[i] + (k - 1) * b_.trackers[i].period;
          if (x > last_eval_) {
            best = std::min(best, x);
            break;  // counts are sorted: the first past last_eval_ is the next
          }
        }
      }
      if (best >= t) return;
      evaluate_at(best, false);
    }
  }
  void evaluate_at(uint64_t t, bool events) {
    last_eval_ = t;
    if (done()) return;
    at_ = t;
    events_ = events;
    const bool level_at = eval(e_);
    events_ = false;
    const bool level_after = level_at ? eval(e_) : false;
    if (level_at && !level_) hits.push_back(t);
    level_ = level_after;
  }
  uint64_t stall_count(int tracker) const {
    const auto& s = since_[size_t(tracker)];
    if (!s || at_ < *s) return 0;
    return (at_ - *s) / b_.trackers[size_t(tracker)].period + 1;
  }
  bool frame_event(int dir) const { return events_ && changed_[size_t(b_.dirs[size_t(dir)].tx_frames)]; }
  std::optional<uint64_t> value(const Term& t) const {
    switch (t.kind) {
      case Term::Number: return t.num;
      case Term::Symbol: return std::nullopt;
      case Term::Signal:
      case Term::Qp: return val(t.slot);
      case Term::Axis:
        if (t.tracker >= 0) return stall_count(t.tracker);
        return val(t.slot);
      case Term::Frame: {
        if (!frame_event(t.dir)) return std::nullopt;
        const DirSlots& d = b_.dirs[size_t(t.dir)];
        if (t.field == "op") return val(d.tx_opcode);
        if (t.field == "psn") return val(d.tx_psn);
        if (t.field == "qpn") return val(d.tx_dest_qp);
        if (t.field == "frame") return 1;
        if (!is1(d.tx_aeth)) return std::nullopt;  // syn
        return val(d.tx_syndrome);
      }
      case Term::PsnGap: {
        const DirSlots& d = b_.dirs[size_t(t.dir)];
        if (events_ && changed_[size_t(d.rx_frames)] && is1(d.rx_psn_gap)) return 1;
        return std::nullopt;
      }
      case Term::RegWrite: {
        const RegWatch& w = b_.regws[size_t(t.regw)];
        if (events_ && changed_[size_t(w.bvalid)] && prev_[size_t(w.bvalid)] == std::optional<uint64_t>(0) &&
            is1(w.bvalid) && val(w.awaddr) == std::optional<uint64_t>(w.addr))
          return val(w.wdata);
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
  bool truth(const Term& t) const {
    const auto v = value(t);
    if (!v) return false;
    if (t.kind == Term::Frame || t.kind == Term::PsnGap || t.kind == Term::RegWrite) return true;  // events
    return *v != 0;
  }
  bool eval(const Expr& e) const {
    switch (e.kind) {
      case Expr::Or: return eval(*e.a) || eval(*e.b);
      case Expr::And: return eval(*e.a) && eval(*e.b);
      case Expr::Not: return !eval(*e.a);
      case Expr::Leaf: return truth(*e.ta);
      case Expr::Cmp: {
        const auto a = value(*e.ta), b = value(*e.tb);
        if (!a || !b) return false;
        switch (e.op) {
          case Tok::Eq: return *a == *b;
          case Tok::Ne: return *a != *b;
          case Tok::Lt: return *a < *b;
          case Tok::Le: return *a <= *b;
          case Tok::Gt: return *a > *b;
          case Tok::Ge: return *a >= *b;
          default: return false;
        }
      }
    }
    return false;
  }

  const Expr& e_;
  const Bound& b_;
  Mode mode_;
  std::vector<std::vector<int>> slots_of_;
  std::vector<std::optional<uint64_t>> cur_, prev_;
  std::vector<char> changed_;
  std::vector<std::optional<uint64_t>> since_;
  uint64_t now_ = 0, at_ = 0, last_eval_ = 0;
  bool events_ = false;
  bool level_ = false;
};

}  // namespace

std::vector<uint64_t> Trigger::hits(const trace::VcdWriter& w, const std::string& rtl_vcd_path, uint64_t end_time_ps,
                                    Mode mode) const {
  if (!bound_) throw std::logic_error("trigger: bind() before hits()");
  Eval ev(*expr_, *bound_, mode);
  w.scan_merged(rtl_vcd_path, ev, end_time_ps);
  return ev.hits;
}

}  // namespace ernic::trigger
