// model/trace: what the merged stream becomes (vcd.h): the merged VCD text,
// all of it or only trigger windows (write_merged, through a ByteSink), or
// integer values for a MergedValueVisitor (scan_merged); merged_vars.
#include <algorithm>
#include <string_view>

#include "model/trace/vcd.h"
#include "model/trace/vcd_merge.h"
#include "model/trace/vcd_read.h"

namespace ernic::trace {

using detail::kIoBlock;
using detail::kNoTime;

namespace {

// ---- buffered text output into a ByteSink --------------------------------
class Out {
 public:
  explicit Out(ByteSink& sink) : sink_(sink) { buf_.reserve(kIoBlock + 256); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  void put(char c) { buf_.push_back(c); }
  void put(std::string_view s) {
    buf_.append(s.data(), s.size());
    if (buf_.size() >= kIoBlock) drain();
  }
  void put_u64(uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) buf_.push_back(tmp[--n]);
  }
  void put_time(uint64_t t) {
    buf_.push_back('#');
    put_u64(t);
    put('\n');
  }
  // Model value: scalar "1!" or vector "b101 !" (no leading zeros).
  void put_value(uint64_t v, unsigned width, const std::string& code) {
    if (width == 1) {
      buf_.push_back(v ? '1' : '0');
    } else {
      buf_.push_back('b');
      int top = 63;
      while (top > 0 && !((v >> top) & 1)) --top;
      for (int i = top; i >= 0; --i) buf_.push_back(((v >> i) & 1) ? '1' : '0');
      buf_.push_back(' ');
    }
    put(code);
    put('\n');
  }
  // Value token copied from a VCD file.
  void put_raw_value(const std::string& value, const std::string& code) {
    put(value);
    if (value.size() != 1) put(' ');
    put(code);
    put('\n');
  }
  void close() {
    drain();
    sink_.close();
  }

 private:
  void drain() {
    if (buf_.empty()) return;
    sink_.write(buf_.data(), buf_.size());
    buf_.clear();
  }

  ByteSink& sink_;
  std::string buf_;
};


// Writes every change (the classic full dump).
class FullWriter : public detail::MergeConsumer {
 public:
  FullWriter(Out& out, const detail::MergeState& m) : out_(out), m_(m) {}
  void init_model(size_t ord, uint64_t v) override {
    start();
    out_.put_value(v, m_.vars[ord].width == 1 ? 1 : 2, m_.vars[ord].code);
  }
  void init_rtl(size_t ord, const std::string& tok) override {
    start();
    out_.put_raw_value(tok, m_.vars[ord].code);
  }
  void init_done() override {
    start();
    out_.put("$end\n");
  }
  void time(uint64_t t) override {
    out_.put_time(t);
    last_ = t;
  }
  void model(size_t ord, uint64_t v) override { out_.put_value(v, m_.vars[ord].width == 1 ? 1 : 2, m_.vars[ord].code); }
  void rtl(size_t ord, const std::string& tok) override { out_.put_raw_value(tok, m_.vars[ord].code); }
  void end(uint64_t end_time_ps) override {
    if (end_time_ps > last_) out_.put_time(end_time_ps);
  }

 private:
  void start() {
    if (started_) return;
    started_ = true;
    out_.put("#0\n$dumpvars\n");
  }
  Out& out_;
  const detail::MergeState& m_;
  bool started_ = false;
  uint64_t last_ = 0;
};

// Writes only the windows: at each window's start a dump of every value in
// effect then ($dumpvars for the first window, $dumpall after), the changes
// inside the window, and a time stamp at the window's end.
class WindowWriter : public detail::MergeConsumer {
 public:
  WindowWriter(Out& out, const detail::MergeState& m, const std::vector<VcdWindow>& w)
      : out_(out), m_(m), w_(w), mval_(m.vars.size(), 0), rval_(m.vars.size()) {}
  void init_model(size_t ord, uint64_t v) override { mval_[ord] = v; }
  void init_rtl(size_t ord, const std::string& tok) override { rval_[ord] = tok; }
  void init_done() override { cur_ = 0; }
  void time(uint64_t t) override {
    settle(cur_);  // everything at cur_ is known
    advance_to(t);
    cur_ = t;
    stamped_ = false;
  }
  void model(size_t ord, uint64_t v) override {
    mval_[ord] = v;
    if (inside()) {
      stamp();
      out_.put_value(v, m_.vars[ord].width == 1 ? 1 : 2, m_.vars[ord].code);
    }
  }
  void rtl(size_t ord, const std::string& tok) override {
    rval_[ord] = tok;
    if (inside()) {
      stamp();
      out_.put_raw_value(tok, m_.vars[ord].code);
    }
  }
  uint64_t clock_floor(uint64_t t) const override {
    // Inside a window: now; before one: its start; after the last: never.
    auto it = std::lower_bound(w_.begin(), w_.end(), t, [](const VcdWindow& w, uint64_t x) { return w.end_ps < x; });
    if (it == w_.end()) return kNoTime;
    return std::max(t, it->begin_ps);
  }
  void end(uint64_t end_time_ps) override {
    settle(cur_);
    const uint64_t stop = std::max(end_time_ps, cur_);
    advance_to(stop == ~uint64_t{0} ? stop : stop + 1);
    // A window still open at the end of the run ends there.
    if (open_) {
      const uint64_t e = std::min(w_[k_].end_ps, stop);
      if (e > last_written_) out_.put_time(e);
      open_ = false;
    }
  }

 private:
  // Changes at cur_ go out only inside an open window that started before cur_.
  bool inside() const { return open_ && cur_ > w_[k_].begin_ps && cur_ <= w_[k_].end_ps; }
  void stamp() {
    if (stamped_) return;
    stamped_ = true;
    out_.put_time(cur_);
    last_written_ = cur_;
  }
  // All changes at time t are applied: a window starting at t dumps now.
  void settle(uint64_t t) {
    if (!open_ && k_ < w_.size() && w_[k_].begin_ps == t) dump(t);
  }
  // Windows that start or end before t (no change between the last time and t).
  void advance_to(uint64_t t) {
    for (;;) {
      if (open_) {
        if (w_[k_].end_ps >= t) return;
        if (w_[k_].end_ps > last_written_) out_.put_time(w_[k_].end_ps);
        open_ = false;
        ++k_;
        continue;
      }
      if (k_ >= w_.size() || w_[k_].begin_ps >= t) return;
      dump(w_[k_].begin_ps);
    }
  }
  void dump(uint64_t t) {
    out_.put_time(t);
    out_.put(first_ ? "$dumpvars\n" : "$dumpall\n");
    first_ = false;
    for (size_t i = 0; i < m_.vars.size(); ++i) {
      if (m_.clock_ps[i]) mval_[i] = detail::clock_level(t, m_.clock_ps[i]);
      if (m_.vars[i].rtl)
        out_.put_raw_value(rval_[i], m_.vars[i].code);
      else
        out_.put_value(mval_[i], m_.vars[i].width == 1 ? 1 : 2, m_.vars[i].code);
    }
    out_.put("$end\n");
    last_written_ = t;
    open_ = true;
    if (t == cur_) stamped_ = true;  // later changes at this time are already in the dump
  }

  Out& out_;
  const detail::MergeState& m_;
  const std::vector<VcdWindow>& w_;
  std::vector<uint64_t> mval_;
  std::vector<std::string> rval_;
  size_t k_ = 0;        // current / next window
  bool open_ = false;
  bool first_ = true;
  bool stamped_ = false;
  uint64_t cur_ = 0, last_written_ = 0;
};

// Integer values for a MergedValueVisitor.
class ValueAdapter : public detail::MergeConsumer {
 public:
  explicit ValueAdapter(MergedValueVisitor& v) : v_(v) {}
  void init_model(size_t ord, uint64_t v) override { v_.initial(ord, v); }
  void init_rtl(size_t ord, const std::string& tok) override { v_.initial(ord, vcd_token_to_u64(tok)); }
  void init_done() override {}
  void time(uint64_t t) override { v_.time(t); }
  void model(size_t ord, uint64_t v) override { v_.change(ord, v); }
  void rtl(size_t ord, const std::string& tok) override { v_.change(ord, vcd_token_to_u64(tok)); }
  void end(uint64_t end_time_ps) override { v_.end(end_time_ps); }
  uint64_t clock_floor(uint64_t t) const override { return v_.wants_clock_edges() ? t : kNoTime; }

 private:
  MergedValueVisitor& v_;
};

}  // namespace

std::vector<MergedVar> VcdWriter::merged_vars(const std::string& rtl_vcd_path) const {
  detail::MergeState m;
  open_merge(m, rtl_vcd_path);
  return std::move(m.vars);
}

void VcdWriter::scan_merged(const std::string& rtl_vcd_path, MergedValueVisitor& v, uint64_t end_time_ps) const {
  detail::MergeState m;
  open_merge(m, rtl_vcd_path);
  v.begin(m.vars);
  ValueAdapter a(v);
  stream_merge(m, a, end_time_ps);
}

uint64_t VcdWriter::write_merged(ByteSink& sink, const std::string& rtl_vcd_path, uint64_t end_time_ps,
                                 const std::vector<VcdWindow>* windows) const {
  detail::MergeState m;
  open_merge(m, rtl_vcd_path);
  const uint64_t before = sink.bytes();
  Out out(sink);
  out.put(m.header);
  if (windows) {
    for (size_t i = 0; i < windows->size(); ++i) {
      const VcdWindow& w = (*windows)[i];
      if (w.begin_ps > w.end_ps || (i > 0 && w.begin_ps <= (*windows)[i - 1].end_ps))
        throw std::invalid_argument("vcd: windows must be ordered, disjoint and non-empty");
    }
    WindowWriter ww(out, m, *windows);
    stream_merge(m, ww, end_time_ps);
  } else {
    FullWriter fw(out, m);
    stream_merge(m, fw, end_time_ps);
  }
  out.close();
  return sink.bytes() - before;
}

}  // namespace ernic::trace
