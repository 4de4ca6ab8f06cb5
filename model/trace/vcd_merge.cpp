// model/trace: the merge (vcd.h, "Output format"): the union of the model's
// and the RTL's scope trees with fresh identifier codes (the merged header),
// and the merged stream of value changes in time order: the model's
// recorded changes, the RTL VCD's body and the synthesised clock edges.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "model/trace/vcd.h"
#include "model/trace/vcd_merge.h"
#include "model/trace/vcd_read.h"

namespace ernic::trace {

using detail::BodyEvent;
using detail::BodyReader;
using detail::HdrVar;
using detail::io_error;
using detail::join_dots;
using detail::kIoBlock;
using detail::kNoTime;
using detail::parse_header;
using detail::Tokenizer;

namespace {

// VCD identifier codes: printable ASCII '!'..'~', least significant first.
std::string make_code(size_t n) {
  std::string s;
  do {
    s.push_back(static_cast<char>('!' + n % 94));
    n /= 94;
  } while (n != 0);
  return s;
}

// ---- buffered binary reader of our body file --------------------------------
class RecordReader {
 public:
  explicit RecordReader(const std::string& path) : path_(path), buf_(kIoBlock) {
    errno = 0;
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw io_error("cannot reopen temporary body", path);
  }
  ~RecordReader() {
    if (f_) std::fclose(f_);
  }
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;
  // false at end of file.
  bool next(uint32_t& tag, uint64_t& payload) {
    if (len_ - pos_ < 12) {
      std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
      len_ -= pos_;
      pos_ = 0;
      len_ += std::fread(buf_.data() + len_, 1, buf_.size() - len_, f_);
      if (std::ferror(f_)) throw io_error("read error in temporary body", path_);
      if (len_ == 0) return false;
      if (len_ < 12) throw std::runtime_error("vcd: truncated temporary body '" + path_ + "'");
    }
    std::memcpy(&tag, buf_.data() + pos_, 4);
    std::memcpy(&payload, buf_.data() + pos_ + 4, 8);
    pos_ += 12;
    return true;
  }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<unsigned char> buf_;
  size_t pos_ = 0, len_ = 0;
};

// ---- merged scope tree ------------------------------------------------------
struct Item {
  bool rtl;      // false: model variable, true: RTL variable
  size_t index;  // model var id, or RTL variable index (one per RTL code)
  std::string name;
  std::string ref;  // RTL: reference as written; model: built from name/width
  std::string type;
  unsigned width;
  uint64_t clock_ps = 0;  // model: a synthesised clock's period (0: not a clock)
};

struct Node {
  std::string name, type;
  std::vector<std::unique_ptr<Node>> kids;
  std::map<std::string, Node*> kid_by_name;
  std::vector<Item> items;
  std::map<std::string, size_t> item_by_name;

  Node* child(const std::string& n, const std::string& t) {
    auto it = kid_by_name.find(n);
    if (it != kid_by_name.end()) return it->second;
    kids.push_back(std::make_unique<Node>());
    Node* k = kids.back().get();
    k->name = n;
    k->type = t.empty() ? "module" : t;
    kid_by_name.emplace(n, k);
    return k;
  }
  Node* at(const std::vector<std::string>& path, const std::string& scope_type) {
    Node* n = this;
    for (const auto& p : path) n = n->child(p, scope_type);
    return n;
  }
};

// The merged header of the tree, assigning fresh codes in declaration order.
void write_header(detail::MergeState& m, const Node& root) {
  std::string& out = m.header;
  out += "$version ernic-sim (ERNIC RoCEv2 co-simulator) merged model+RTL VCD $end\n";
  out += "$timescale 1ps $end\n";
  std::vector<std::pair<const Node*, size_t>> stack;  // (node, next kid)
  std::vector<std::string> path;
  std::string indent;
  auto emit_node = [&](const Node* n) {
    out += indent;
    out += "$scope ";
    out += n->type;
    out += ' ';
    out += n->name;
    out += " $end\n";
    indent.push_back(' ');
    path.push_back(n->name);
    std::string scope_name = join_dots(path);
    for (const Item& it : n->items) {
      size_t& ord = it.rtl ? m.rtl_ord[it.index] : m.model_ord[it.index];
      if (ord == ~size_t{0}) {
        ord = m.order.size();
        m.order.emplace_back(it.rtl, it.index);
        MergedVar mv;
        mv.code = make_code(ord);
        mv.width = it.width;
        mv.rtl = it.rtl;
        mv.type = it.type;
        m.vars.push_back(std::move(mv));
        m.clock_ps.push_back(it.clock_ps);
      }
      MergedVar& mv = m.vars[ord];
      // "name [7:0]" -> range "[7:0]"
      std::string range;
      const size_t sp = it.ref.find(' ');
      if (sp != std::string::npos)
        for (size_t k = sp; k < it.ref.size(); ++k)
          if (it.ref[k] != ' ') range.push_back(it.ref[k]);
      mv.names.push_back(MergedName{scope_name + "." + it.name, range});
      out += indent;
      out += fmt::format("$var {} {} {} {} $end\n", it.type, it.width, mv.code, it.ref);
    }
  };
  for (const auto& top : root.kids) {
    emit_node(top.get());
    stack.emplace_back(top.get(), 0);
    while (!stack.empty()) {
      auto& [n, k] = stack.back();
      if (k < n->kids.size()) {
        const Node* kid = n->kids[k++].get();
        emit_node(kid);
        stack.emplace_back(kid, 0);
      } else {
        indent.pop_back();
        path.pop_back();
        out += indent;
        out += "$upscope $end\n";
        stack.pop_back();
      }
    }
  }
  out += "$enddefinitions $end\n";
}

// The RTL VCD's body, streamed: its values at time 0, then its changes one
// time stamp at a time. A time stamp without changes is passed over:
// Verilator's writer stamps every time step the kernel makes (its dump runs
// at each), and which steps the kernel makes besides the ones with changes
// (a thread woken to find nothing to do) is no part of the waveform.
class RtlBody {
 public:
  explicit RtlBody(detail::MergeState& m) : m_(m) {
    if (m_.rtl) rb_ = std::make_unique<BodyReader>(*m_.rtl, m_.rh);
  }
  // The time of the next changes (kNoTime: none).
  uint64_t time() const { return time_; }
  // The values at time 0, by RTL variable ("" where none).
  void read_initial(std::vector<std::string>& init) {
    if (!rb_) return;
    for (;;) {
      rb_->next(ev_);
      if (ev_.kind == BodyEvent::kEnd) return;
      if (ev_.kind == BodyEvent::kTime) {
        if (ev_.time_ps == 0) continue;
        stamp_ = ev_.time_ps;
        break;
      }
      init[var_of(ev_.code)] = ev_.value;
    }
    seek();
  }
  // The changes at t == time(), to c, in the merged declaration order (a
  // variable changed twice keeps its two changes in the order written): the
  // order in which Verilator numbers its signals (--sc or --cc, its version)
  // does not show in the merged file.
  void read_changes(uint64_t t, detail::MergeConsumer& c) {
    changes_.clear();
    changes_.emplace_back(m_.rtl_ord[var_of(ev_.code)], ev_.value);  // the change seek() stopped at
    time_ = kNoTime;
    for (;;) {
      rb_->next(ev_);
      if (ev_.kind == BodyEvent::kEnd) break;
      if (ev_.kind == BodyEvent::kTime) {
        if (ev_.time_ps == t) continue;
        if (ev_.time_ps < t)
          m_.rtl->fail(fmt::format("time goes backwards ({} ps after {} ps)", ev_.time_ps, t));
        stamp_ = ev_.time_ps;
        seek();
        break;
      }
      changes_.emplace_back(m_.rtl_ord[var_of(ev_.code)], ev_.value);
    }
    std::stable_sort(changes_.begin(), changes_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [ord, value] : changes_) c.rtl(ord, value);
  }

 private:
  size_t var_of(const std::string& code) {
    auto it = m_.rtl_index.find(code);
    if (it == m_.rtl_index.end()) m_.rtl->fail("value change of undeclared identifier '" + code + "'");
    return it->second;
  }

  // From the stamp just read (stamp_) to the first change after it: time_
  // is its stamp (kNoTime at the end), ev_ holds the change.
  void seek() {
    time_ = kNoTime;
    for (;;) {
      rb_->next(ev_);
      if (ev_.kind == BodyEvent::kEnd) return;
      if (ev_.kind == BodyEvent::kTime) {
        if (ev_.time_ps < stamp_)
          m_.rtl->fail(fmt::format("time goes backwards ({} ps after {} ps)", ev_.time_ps, stamp_));
        stamp_ = ev_.time_ps;
        continue;
      }
      time_ = stamp_;
      return;
    }
  }

  detail::MergeState& m_;
  std::unique_ptr<BodyReader> rb_;
  BodyEvent ev_;
  uint64_t stamp_ = 0;      // the last time stamp read
  uint64_t time_ = kNoTime;
  std::vector<std::pair<size_t, std::string>> changes_;  // of one time stamp
};

// Synthesised clocks: the next edge of each (the rising edge at 0 is the initial value).
class ClockEdges {
 public:
  explicit ClockEdges(const std::vector<uint64_t>& clock_ps) {
    for (size_t ord = 0; ord < clock_ps.size(); ++ord)
      if (clock_ps[ord]) clocks_.push_back({ord, clock_ps[ord], clock_ps[ord] / 2});
  }
  bool empty() const { return clocks_.empty(); }
  // The earliest edge the consumer wants, up to end_time_ps (kNoTime: none).
  uint64_t next_time(const detail::MergeConsumer& c, uint64_t end_time_ps) {
    uint64_t tc = kNoTime;
    for (Clk& k : clocks_) {
      if (k.next == kNoTime) continue;
      const uint64_t f = c.clock_floor(k.next);
      if (f == kNoTime || f > end_time_ps) {
        k.next = kNoTime;
        continue;
      }
      if (f > k.next) k.next = first_edge_from(f, k.period);
      if (k.next > end_time_ps) {
        k.next = kNoTime;
        continue;
      }
      tc = std::min(tc, k.next);
    }
    return tc;
  }
  // The edges at t, to c.
  void emit(uint64_t t, detail::MergeConsumer& c) {
    for (Clk& k : clocks_)
      if (k.next == t) {
        c.model(k.ord, detail::clock_level(t, k.period));
        k.next = k.next % k.period == 0 ? k.next + k.period / 2 : (k.next / k.period + 1) * k.period;
      }
  }

 private:
  struct Clk {
    size_t ord;
    uint64_t period, next;
  };
  static uint64_t first_edge_from(uint64_t f, uint64_t p) {
    const uint64_t n = f / p, r = f % p;
    if (r == 0) return f;
    if (r <= p / 2) return n * p + p / 2;
    return (n + 1) * p;
  }

  std::vector<Clk> clocks_;
};

}  // namespace

void VcdWriter::open_merge(detail::MergeState& m, const std::string& rtl_vcd_path) const {
  if (!finished_) throw std::logic_error("vcd: close_body() before reading the merged view");
  // The RTL file: header now, body streamed below. A missing or empty file
  // (Verilator writes nothing before its first dump) means no RTL signals.
  std::error_code ec;
  if (!rtl_vcd_path.empty() && std::filesystem::exists(rtl_vcd_path, ec) &&
      std::filesystem::file_size(rtl_vcd_path, ec) > 0 && !ec) {
    m.rtl = std::make_unique<Tokenizer>(rtl_vcd_path);
    m.rh = parse_header(*m.rtl);
  }

  // Union of the scope trees. Model variables first, then the RTL's.
  Node root;
  std::vector<std::pair<Node*, size_t>> model_items(vars_.size());
  for (size_t i = 0; i < decls_.size(); ++i) {
    Node* n = root.at(decls_[i].scope, "module");
    n->item_by_name.emplace(decls_[i].name, n->items.size());
    model_items[i] = {n, n->items.size()};
    n->items.push_back(Item{false, i, decls_[i].name, {}, "wire", decls_[i].width, vars_[i].clock_ps});
  }
  for (const auto& s : m.rh.scopes) root.at(s.path, s.type);
  for (const auto& v : m.rh.vars) {
    auto [it, fresh] = m.rtl_index.emplace(v.code, m.rtl_vars.size());
    if (fresh) m.rtl_vars.push_back(&v);
    Node* n = root.at(v.scope, "module");
    auto clash = n->item_by_name.find(v.base);
    if (clash != n->item_by_name.end() && !n->items[clash->second].rtl) {
      // A model variable with the RTL signal's name: the model one is renamed.
      Item& mi = n->items[clash->second];
      std::string renamed = mi.name + "_model";
      for (int k = 2; n->item_by_name.count(renamed); ++k) renamed = fmt::format("{}_model{}", mi.name, k);
      const size_t pos = clash->second;
      n->item_by_name.erase(clash);
      mi.name = renamed;
      n->item_by_name.emplace(renamed, pos);
    }
    n->item_by_name.emplace(v.base, n->items.size());
    n->items.push_back(Item{true, it->second, v.base, v.ref, v.type, v.width});
  }
  for (size_t i = 0; i < decls_.size(); ++i) {
    Item& mi = model_items[i].first->items[model_items[i].second];
    mi.ref = mi.width > 1 ? fmt::format("{} [{}:0]", mi.name, mi.width - 1) : mi.name;
  }
  m.model_ord.assign(vars_.size(), ~size_t{0});
  m.rtl_ord.assign(m.rtl_vars.size(), ~size_t{0});
  write_header(m, root);
}

void VcdWriter::stream_merge(detail::MergeState& m, detail::MergeConsumer& c, uint64_t end_time_ps) const {
  // RTL values at time 0 become initial values.
  std::vector<std::string> rtl_init(m.rtl_vars.size());
  RtlBody rtl(m);
  rtl.read_initial(rtl_init);
  for (size_t ord = 0; ord < m.order.size(); ++ord) {
    const auto& [is_rtl, idx] = m.order[ord];
    if (!is_rtl) {
      c.init_model(ord, vars_[idx].initial);
    } else if (!rtl_init[idx].empty()) {
      c.init_rtl(ord, rtl_init[idx]);
    } else {
      const HdrVar& v = *m.rtl_vars[idx];
      c.init_rtl(ord, v.type == "real" ? "r0" : v.width == 1 ? "x" : "bx");
    }
  }
  c.init_done();
  rtl_init.clear();
  rtl_init.shrink_to_fit();

  ClockEdges clocks(m.clock_ps);

  // Value changes of both sources (and the clocks) in time order.
  RecordReader mb(body_path_);
  uint32_t tag = 0;
  uint64_t payload = 0;
  uint64_t model_time = kNoTime;
  if (mb.next(tag, payload)) {
    if (tag != kTimeTag) throw std::runtime_error("vcd: corrupt temporary body '" + body_path_ + "'");
    model_time = payload;
  }
  for (;;) {
    const uint64_t tc = clocks.empty() ? kNoTime : clocks.next_time(c, end_time_ps);
    const uint64_t t = std::min(std::min(model_time, rtl.time()), tc);
    if (t == kNoTime) break;
    c.time(t);
    if (tc == t) clocks.emit(t, c);
    if (model_time == t) {
      model_time = kNoTime;
      while (mb.next(tag, payload)) {
        if (tag == kTimeTag) {
          model_time = payload;
          break;
        }
        c.model(m.model_ord[tag], payload);
      }
    }
    if (rtl.time() == t) rtl.read_changes(t, c);
  }
  c.end(end_time_ps);
}

}  // namespace ernic::trace
