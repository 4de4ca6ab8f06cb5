// model/trace: the transaction log (see txlog.h for the record layout).
//
// The typed calls write each record with a moving char pointer into a buffer
// that has room for the record's worst case (every string byte escaped to
// six), so the hot path has no per-field capacity checks; the buffer goes to
// the file in pieces of at least kDrainBytes.
#include "model/trace/txlog.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <algorithm>
#include <cstring>
#include <string_view>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ernic {

namespace {

constexpr size_t kDrainBytes = size_t(1) << 18;   // write to the file in 256 KiB pieces
constexpr size_t kInitialCap = size_t(1) << 19;
constexpr size_t kFixedBound = 1024;              // keys, punctuation and numbers of any record

// Worst-case escaped size of a string (with its quotes): \u00XX for every byte.
inline size_t esc_bound(size_t n) { return 6 * n + 2; }
inline size_t esc_bound(const std::string& s) { return esc_bound(s.size()); }
inline size_t esc_bound(const char* s) { return esc_bound(s ? std::strlen(s) : 0); }

template <size_t N>
inline char* lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

inline char* put_u(char* p, uint64_t v) {
  const fmt::format_int f(v);
  std::memcpy(p, f.data(), f.size());
  return p + f.size();
}

inline char* put_i(char* p, int64_t v) {
  const fmt::format_int f(v);
  std::memcpy(p, f.data(), f.size());
  return p + f.size();
}

inline char* put_bool(char* p, bool v) { return v ? lit(p, "true") : lit(p, "false"); }

// Bytes that JSON strings carry unchanged (printable ASCII but " and \).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
  return t;
}();

// Non-ASCII text: nlohmann's serializer decides (UTF-8 validation and U+FFFD
// replacement), so the typed writer cannot differ from write(). Its output
// is at most esc_bound(n) bytes.
char* put_str_slow(char* p, const char* s, size_t n) {
  const std::string q = nlohmann::json(std::string(s, n)).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::memcpy(p, q.data(), q.size());
  return p + q.size();
}

// A JSON string, escaped as nlohmann::json::dump(-1, ' ', false) does.
char* put_str(char* p, const char* s, size_t n) {
  char* const start = p;
  *p++ = '"';
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (kPlain[c]) {
      *p++ = char(c);
      continue;
    }
    switch (c) {
      case '"': p = lit(p, "\\\""); break;
      case '\\': p = lit(p, "\\\\"); break;
      case 0x08: p = lit(p, "\\b"); break;
      case 0x09: p = lit(p, "\\t"); break;
      case 0x0A: p = lit(p, "\\n"); break;
      case 0x0C: p = lit(p, "\\f"); break;
      case 0x0D: p = lit(p, "\\r"); break;
      default:
        if (c >= 0x80) return put_str_slow(start, s, n);
        static constexpr char hex[] = "0123456789abcdef";
        p = lit(p, "\\u00");
        *p++ = hex[c >> 4];
        *p++ = hex[c & 0xF];
    }
  }
  *p++ = '"';
  return p;
}

inline char* put_str(char* p, const std::string& s) { return put_str(p, s.data(), s.size()); }
inline char* put_str(char* p, const char* s) { return put_str(p, s ? s : "", s ? std::strlen(s) : 0); }

// {"t_ps":N,"node":S,"kind":K,"domain":S,"cycle":N[,"qp":N]
char* head(char* p, uint64_t t_ps, const std::string& node, const char* kind, const char* domain,
           uint64_t cycle, std::optional<uint32_t> qp) {
  p = lit(p, "{\"t_ps\":");
  p = put_u(p, t_ps);
  p = lit(p, ",\"node\":");
  p = put_str(p, node);
  p = lit(p, ",\"kind\":");
  p = put_str(p, kind);
  p = lit(p, ",\"domain\":");
  p = put_str(p, domain);
  p = lit(p, ",\"cycle\":");
  p = put_u(p, cycle);
  if (qp) {
    p = lit(p, ",\"qp\":");
    p = put_u(p, *qp);
  }
  return p;
}

inline char* end(char* p) { return lit(p, "}\n"); }

// Key order for write(): the common keys, then the kind's keys.
const char* const kCommonKeys[] = {"t_ps", "node", "kind", "domain", "cycle", "qp"};

struct KindKeys {
  const char* kind;
  std::initializer_list<const char*> keys;
};

const KindKeys kKindKeys[] = {
    {"reg", {"op", "addr", "name", "value"}},
    {"dma", {"master", "op", "addr", "len", "bursts", "tlps", "cpls"}},
    {"frame", {"dir", "link", "index", "len", "roce", "opcode", "opname", "psn", "dest_qp",
               "ack_req", "syndrome", "msn", "mad", "src", "dst"}},
    {"cqe", {"cq_index", "wr_id", "opcode", "error", "raw"}},
    {"intr", {"level", "intsts"}},
    {"fault", {"link", "index", "rule", "action", "opcode", "psn", "detail"}},
    {"state", {"what", "value"}},
    {"step", {"at", "step", "phase", "detail"}},
};

const std::string kNoNode;

}  // namespace

struct TxLog::Buf {
  std::unique_ptr<char[]> mem;
  size_t cap = 0;
  size_t len = 0;
};

TxLog::TxLog(const std::string& path) : path_(path), buf_(std::make_unique<Buf>()) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_)
    throw std::runtime_error(
        fmt::format("cannot open transaction log '{}': {}", path, std::strerror(errno)));
  // Records are batched in buf_; stdio buffering would only copy them again.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  buf_->mem = std::make_unique<char[]>(kInitialCap);
  buf_->cap = kInitialCap;
}

TxLog::~TxLog() {
  try {
    flush();
  } catch (...) {
  }
  if (file_) std::fclose(file_);
}

namespace {
// The text between the quotes after the first `"key":"` (empty: none).
std::string_view string_field(std::string_view s, std::string_view key) {
  const size_t a = s.find(key);
  if (a == std::string_view::npos) return {};
  const size_t i = a + key.size();
  size_t j = i;
  while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
  return s.substr(i, std::min(j, s.size()) - i);
}
std::string_view record_node(const char* r, size_t len) { return order_node(std::string_view(r, len)); }
uint64_t record_time(const char* r) {  // {"t_ps":N
  uint64_t t = 0;
  for (const char* p = r + 8; *p >= '0' && *p <= '9'; ++p) t = t * 10 + uint64_t(*p - '0');
  return t;
}
}  // namespace

bool record_before(std::string_view x, std::string_view y) {
  const std::string_view nx = order_node(x), ny = order_node(y);
  if (nx != ny) return nx < ny;
  const bool fx = x.find("\"kind\":\"fault\"") != std::string_view::npos;
  const bool fy = y.find("\"kind\":\"fault\"") != std::string_view::npos;
  if (fx != fy) return fy;
  return x < y;
}

std::string_view order_node(std::string_view record) {
  const std::string_view node = string_field(record, "\"node\":\"");
  if (!node.empty() || record.find("\"kind\":\"fault\"") == std::string_view::npos) return node;
  const std::string_view link = string_field(record, "\"link\":\"");
  return link.substr(0, link.find("->"));
}

// A group with a parallel branch's step: its step records move to its end,
// by order (then the usual order sorts the others; the steps, without a
// node, stay where they are).
void TxLog::order_branch_group() {
  std::vector<size_t> rest, steps;
  for (size_t k = 0; k < grp_.size(); ++k) (grp_order_[k].empty() ? rest : steps).push_back(k);
  std::stable_sort(steps.begin(), steps.end(), [&](size_t x, size_t y) { return grp_order_[x] < grp_order_[y]; });
  rest.insert(rest.end(), steps.begin(), steps.end());
  Buf& b = *buf_;
  std::string tmp;
  tmp.reserve(b.len - grp_start_);
  for (size_t k : rest) tmp.append(b.mem.get() + grp_[k].first, grp_[k].second);
  std::copy(tmp.begin(), tmp.end(), b.mem.get() + grp_start_);
  std::vector<std::pair<size_t, size_t>> moved;
  size_t off = grp_start_;
  for (size_t k : rest) moved.push_back({off, grp_[k].second}), off += grp_[k].second;
  grp_ = std::move(moved);
}

void TxLog::close_group() {
  Buf& b = *buf_;
  if (grp_branch_ && grp_.size() > 1) order_branch_group();
  if (grp_.size() > 1) {
    const char* base = b.mem.get();
    // Segments between records without a node; in each, a stable sort by node.
    std::vector<std::pair<size_t, size_t>> out;
    out.reserve(grp_.size());
    size_t i = 0;
    bool moved = false;
    while (i < grp_.size()) {
      size_t j = i;
      while (j < grp_.size() && !record_node(base + grp_[j].first, grp_[j].second).empty()) ++j;
      std::vector<std::pair<size_t, size_t>> seg(grp_.begin() + long(i), grp_.begin() + long(j));
      // By node, then by the record's text: the order of one instant's
      // records must not depend on the kernel's order of processes.
      std::stable_sort(seg.begin(), seg.end(), [&](const auto& x, const auto& y) {
        return record_before(std::string_view(base + x.first, x.second), std::string_view(base + y.first, y.second));
      });
      for (size_t k = 0; k < seg.size(); ++k) moved = moved || seg[k] != grp_[i + k];
      out.insert(out.end(), seg.begin(), seg.end());
      if (j < grp_.size()) out.push_back(grp_[j++]);
      i = j;
    }
    if (moved) {
      std::string tmp;
      tmp.reserve(b.len - grp_start_);
      for (const auto& [off, len] : out) tmp.append(base + off, len);
      std::copy(tmp.begin(), tmp.end(), b.mem.get() + grp_start_);
    }
  }
  grp_.clear();
  grp_order_.clear();
  grp_branch_ = false;
  grp_start_ = b.len;
  grp_t_ = ~uint64_t(0);
}

void TxLog::drain() {
  Buf& b = *buf_;
  if (!b.len) return;
  // The open group stays in the buffer (it may still be reordered) unless
  // it is all there is.
  if (grp_start_ == 0) close_group();
  const size_t keep = b.len - grp_start_;
  errno = 0;
  const size_t n = std::fwrite(b.mem.get(), 1, grp_start_, file_);
  const int err = errno ? errno : EIO;
  const bool ok = n == grp_start_;
  if (keep) std::memmove(b.mem.get(), b.mem.get() + grp_start_, keep);
  for (auto& r : grp_) r.first -= grp_start_;
  b.len = keep;
  grp_start_ = 0;
  if (!ok) {
    std::clearerr(file_);
    throw std::runtime_error(
        fmt::format("writing transaction log '{}': {}", path_, std::strerror(err)));
  }
}

void TxLog::flush() {
  close_group();
  drain();
  if (std::fflush(file_) != 0)
    throw std::runtime_error(
        fmt::format("writing transaction log '{}': {}", path_, std::strerror(errno)));
}

char* TxLog::begin(size_t bound) {
  Buf& b = *buf_;
  const bool mark = mark_instants && clock && clock() != grp_t_;
  if (mark) bound += 48;  // {"instant_ps":N}\n
  if (b.cap - b.len < bound) {
    drain();
    if (b.cap - b.len < bound) {  // grow, keeping the open group
      auto mem = std::make_unique<char[]>(b.len + bound);
      std::copy_n(b.mem.get(), b.len, mem.get());
      b.mem = std::move(mem);
      b.cap = b.len + bound;
    }
  }
  if (mark) {  // a new instant of writing: its mark opens the group (no node: it stays first)
    const uint64_t t = clock();
    close_group();
    grp_t_ = t;
    grp_start_ = b.len;
    char* p = b.mem.get() + b.len;
    const auto r = fmt::format_to_n(p, 48, "{{\"instant_ps\":{}}}\n", t);
    grp_.push_back({b.len, size_t(r.out - p)});
    grp_order_.emplace_back();
    b.len += size_t(r.out - p);
  }
  return b.mem.get() + b.len;
}

void TxLog::commit(char* end) {
  Buf& b = *buf_;
  const size_t start = b.len;
  // Grouped by the instant of writing (a record may carry an earlier time,
  // e.g. a received frame's first byte).
  const uint64_t t = clock ? clock() : record_time(b.mem.get() + start);
  if (t != grp_t_) {
    close_group();
    grp_t_ = t;
    grp_start_ = start;
  }
  b.len = size_t(end - b.mem.get());
  grp_.push_back({start, b.len - start});
  grp_order_.push_back(std::move(next_order_));
  next_order_.clear();
  grp_branch_ = grp_branch_ || next_branch_;
  next_branch_ = false;
  ++records_;
  if (b.len >= kDrainBytes) drain();
}

std::string TxLog::quote(const std::string& s) {
  std::string r(esc_bound(s), '\0');
  r.resize(size_t(put_str(r.data(), s) - r.data()));
  return r;
}

void TxLog::write(const nlohmann::json& rec) {
  if (!rec.is_object()) throw std::invalid_argument("TxLog::write: the record is not a JSON object");
  const std::initializer_list<const char*>* kind_keys = nullptr;
  if (auto k = rec.find("kind"); k != rec.end() && k->is_string())
    for (const KindKeys& kk : kKindKeys)
      if (k->get_ref<const std::string&>() == kk.kind) kind_keys = &kk.keys;

  std::string line;
  auto emit = [&](const std::string& key, const nlohmann::json& v) {
    line += line.empty() ? '{' : ',';
    line += quote(key);
    line += ':';
    line += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  auto known = [&](const std::string& key) {
    for (const char* c : kCommonKeys)
      if (key == c) return true;
    if (kind_keys)
      for (const char* c : *kind_keys)
        if (key == c) return true;
    return false;
  };
  for (const char* key : kCommonKeys)
    if (auto it = rec.find(key); it != rec.end()) emit(it.key(), *it);
  if (kind_keys)
    for (const char* key : *kind_keys)
      if (auto it = rec.find(key); it != rec.end()) emit(it.key(), *it);
  for (auto it = rec.begin(); it != rec.end(); ++it)
    if (!known(it.key())) emit(it.key(), it.value());
  if (line.empty()) line += '{';
  line += "}\n";

  char* p = begin(line.size());
  std::memcpy(p, line.data(), line.size());
  commit(p + line.size());
}

void TxLog::reg(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
                std::optional<uint32_t> qp, bool write, uint32_t addr, const std::string& name,
                uint32_t value) {
  char* p = begin(kFixedBound + esc_bound(node) + esc_bound(domain) + esc_bound(name));
  p = head(p, t_ps, node, "reg", domain, cycle, qp);
  p = write ? lit(p, ",\"op\":\"write\",\"addr\":") : lit(p, ",\"op\":\"read\",\"addr\":");
  p = put_u(p, addr);
  p = lit(p, ",\"name\":");
  p = put_str(p, name);
  p = lit(p, ",\"value\":");
  p = put_u(p, value);
  commit(end(p));
}

void TxLog::dma(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
                std::optional<uint32_t> qp, const char* master, bool write, uint64_t addr,
                uint64_t len, int64_t bursts, int64_t tlps, int64_t cpls) {
  char* p = begin(kFixedBound + 3 * 32 + esc_bound(node) + esc_bound(domain) + esc_bound(master));
  p = head(p, t_ps, node, "dma", domain, cycle, qp);
  p = lit(p, ",\"master\":");
  p = put_str(p, master);
  p = write ? lit(p, ",\"op\":\"write\",\"addr\":") : lit(p, ",\"op\":\"read\",\"addr\":");
  p = put_u(p, addr);
  p = lit(p, ",\"len\":");
  p = put_u(p, len);
  if (bursts >= 0) p = put_u(lit(p, ",\"bursts\":"), uint64_t(bursts));
  if (tlps >= 0) p = put_u(lit(p, ",\"tlps\":"), uint64_t(tlps));
  if (cpls >= 0) p = put_u(lit(p, ",\"cpls\":"), uint64_t(cpls));
  commit(end(p));
}

void TxLog::frame(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
                  std::optional<uint32_t> qp, const char* dir, const std::string& link,
                  uint64_t index, const FrameFields& f) {
  char* p = begin(kFixedBound + esc_bound(node) + esc_bound(domain) + esc_bound(dir) +
                  esc_bound(link) + esc_bound(f.opname) + esc_bound(f.mad) + esc_bound(f.src) +
                  esc_bound(f.dst));
  p = head(p, t_ps, node, "frame", domain, cycle, qp);
  p = lit(p, ",\"dir\":");
  p = put_str(p, dir);
  p = lit(p, ",\"link\":");
  p = put_str(p, link);
  p = lit(p, ",\"index\":");
  p = put_u(p, index);
  p = lit(p, ",\"len\":");
  p = put_u(p, f.len);
  if (f.roce) {
    p = lit(p, ",\"roce\":true,\"opcode\":");
    p = put_i(p, f.opcode);
    p = lit(p, ",\"opname\":");
    p = put_str(p, f.opname);
    p = lit(p, ",\"psn\":");
    p = put_u(p, f.psn);
    p = lit(p, ",\"dest_qp\":");
    p = put_u(p, f.dest_qp);
    p = lit(p, ",\"ack_req\":");
    p = put_bool(p, f.ack_req);
    if (f.syndrome) {
      p = lit(p, ",\"syndrome\":");
      p = put_u(p, *f.syndrome);
    }
    if (f.msn) {
      p = lit(p, ",\"msn\":");
      p = put_u(p, *f.msn);
    }
    if (!f.mad.empty()) {
      p = lit(p, ",\"mad\":");
      p = put_str(p, f.mad);
    }
  } else {
    p = lit(p, ",\"roce\":false");
  }
  p = lit(p, ",\"src\":");
  p = put_str(p, f.src);
  p = lit(p, ",\"dst\":");
  p = put_str(p, f.dst);
  commit(end(p));
}

void TxLog::cqe(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
                uint32_t qp, uint32_t cq_index, uint16_t wr_id, uint8_t opcode, bool error,
                uint32_t raw) {
  char* p = begin(kFixedBound + esc_bound(node) + esc_bound(domain));
  p = head(p, t_ps, node, "cqe", domain, cycle, qp);
  p = lit(p, ",\"cq_index\":");
  p = put_u(p, cq_index);
  p = lit(p, ",\"wr_id\":");
  p = put_u(p, wr_id);
  p = lit(p, ",\"opcode\":");
  p = put_u(p, opcode);
  p = lit(p, ",\"error\":");
  p = put_bool(p, error);
  p = lit(p, ",\"raw\":");
  p = put_u(p, raw);
  commit(end(p));
}

void TxLog::intr(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
                 bool level, uint32_t intsts) {
  char* p = begin(kFixedBound + esc_bound(node) + esc_bound(domain));
  p = head(p, t_ps, node, "intr", domain, cycle, std::nullopt);
  p = lit(p, ",\"level\":");
  p = put_bool(p, level);
  p = lit(p, ",\"intsts\":");
  p = put_u(p, intsts);
  commit(end(p));
}

void TxLog::fault(uint64_t t_ps, const std::string& link, uint64_t index, const std::string& rule,
                  const char* action, int opcode, int64_t psn, const std::string& detail) {
  char* p = begin(kFixedBound + esc_bound(link) + esc_bound(rule) + esc_bound(action) +
                  esc_bound(detail));
  p = head(p, t_ps, kNoNode, "fault", "wire", 0, std::nullopt);
  p = lit(p, ",\"link\":");
  p = put_str(p, link);
  p = lit(p, ",\"index\":");
  p = put_u(p, index);
  p = lit(p, ",\"rule\":");
  p = put_str(p, rule);
  p = lit(p, ",\"action\":");
  p = put_str(p, action);
  p = lit(p, ",\"opcode\":");
  p = put_i(p, opcode);
  p = lit(p, ",\"psn\":");
  p = put_i(p, psn);
  p = lit(p, ",\"detail\":");
  p = put_str(p, detail);
  commit(end(p));
}

void TxLog::state(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
                  std::optional<uint32_t> qp, const std::string& what, const std::string& value) {
  char* p = begin(kFixedBound + esc_bound(node) + esc_bound(domain) + esc_bound(what) +
                  esc_bound(value));
  p = head(p, t_ps, node, "state", domain, cycle, qp);
  p = lit(p, ",\"what\":");
  p = put_str(p, what);
  p = lit(p, ",\"value\":");
  p = put_str(p, value);
  commit(end(p));
}

void TxLog::step(uint64_t t_ps, const std::string& at, const char* kind, const char* phase,
                 const std::string& detail, const std::string& order, bool branch) {
  char* p = begin(kFixedBound + esc_bound(at) + esc_bound(kind) + esc_bound(phase) +
                  esc_bound(detail));
  p = head(p, t_ps, kNoNode, "step", "scenario", 0, std::nullopt);
  p = lit(p, ",\"at\":");
  p = put_str(p, at);
  p = lit(p, ",\"step\":");
  p = put_str(p, kind);
  p = lit(p, ",\"phase\":");
  p = put_str(p, phase);
  p = lit(p, ",\"detail\":");
  p = put_str(p, detail);
  next_order_ = order;
  next_branch_ = branch;
  commit(end(p));
}

}  // namespace ernic
