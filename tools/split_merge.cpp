// tools/split_merge: a split run's parts merged (see split_merge.h for the
// ordering rules and what they rest on). Both merges stream: one record
// (pcap) or one instant's records (log) of each part in memory at a time.
#include "tools/split_merge.h"

#include <fmt/format.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "model/trace/txlog.h"

namespace ernic {

namespace {

using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

FilePtr open_file(const std::string& path, const char* mode, const std::string& what) {
  std::FILE* f = std::fopen(path.c_str(), mode);
  if (!f) throw std::runtime_error(fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
  return FilePtr(f, &std::fclose);
}

// The output must not be one of the inputs (it is truncated first).
void check_out(const std::vector<std::string>& parts, const std::string& out, const char* what) {
  if (parts.empty()) throw std::runtime_error(fmt::format("{}: no parts to merge into '{}'", what, out));
  namespace fs = std::filesystem;
  for (const std::string& p : parts) {
    std::error_code ec;
    if (fs::path(p).lexically_normal() == fs::path(out).lexically_normal() || (fs::equivalent(p, out, ec) && !ec))
      throw std::runtime_error(fmt::format("{}: the output '{}' is the part '{}'", what, out, p));
  }
}

// The output: written through stdio, every error (including the last
// buffer's at close) thrown naming it.
class OutFile {
 public:
  OutFile(const std::string& path, const char* what)
      : path_(path), what_(what), f_(open_file(path, "wb", std::string(what) + ": cannot create")) {}
  void put(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_.get()) != n) fail();
  }
  void close() {
    errno = 0;
    const bool flushed = std::fflush(f_.get()) == 0 && !std::ferror(f_.get());
    const int e = errno;
    const bool closed = std::fclose(f_.release()) == 0;
    if (!flushed) errno = e;
    if (!flushed || !closed) fail();
  }

 private:
  [[noreturn]] void fail() {
    throw std::runtime_error(fmt::format("{}: writing '{}': {}", what_, path_, errno ? std::strerror(errno) : "write error"));
  }
  std::string path_;
  const char* what_;
  FilePtr f_;
};

// ------------------------------------------------------------------ pcap --

constexpr uint32_t kMagicUs = 0xA1B2C3D4, kMagicNs = 0xA1B23C4D;
constexpr size_t kFileHeader = 24, kRecordHeader = 16;

uint32_t load32(const uint8_t* p, bool swap) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}

// One part: its records in file order, each with its time in ns.
class PcapPart {
 public:
  explicit PcapPart(const std::string& path) : path_(path), f_(open_file(path, "rb", "merge pcap: cannot read")) {
    if (std::fread(header_, 1, kFileHeader, f_.get()) != kFileHeader)
      throw std::runtime_error(fmt::format("merge pcap: '{}': truncated: no complete pcap file header (24 bytes)", path_));
    const uint32_t m = load32(header_, false);
    swap_ = m == __builtin_bswap32(kMagicUs) || m == __builtin_bswap32(kMagicNs);
    const uint32_t magic = load32(header_, swap_);
    if (magic != kMagicUs && magic != kMagicNs)
      throw std::runtime_error(fmt::format("merge pcap: '{}': not a pcap file (magic 0x{:08x})", path_, m));
    ns_ = magic == kMagicNs;
    snaplen_ = load32(header_ + 16, swap_);
    offset_ = kFileHeader;
  }
  const uint8_t* header() const { return header_; }
  const std::string& path() const { return path_; }
  bool done() const { return done_; }
  uint64_t time_ns() const { return time_ns_; }
  // The current record, header included, as stored.
  const std::vector<uint8_t>& record() const { return rec_; }

  // Reads the next record; done() at the end of the file.
  void next() {
    rec_.resize(kRecordHeader);
    const size_t got = std::fread(rec_.data(), 1, kRecordHeader, f_.get());
    if (got == 0 && std::feof(f_.get())) {
      done_ = true;
      return;
    }
    if (got != kRecordHeader) truncated("record header");
    const uint64_t sec = load32(rec_.data(), swap_), frac = load32(rec_.data() + 4, swap_);
    const uint32_t caplen = load32(rec_.data() + 8, swap_);
    if (caplen > std::max<uint32_t>(snaplen_, 262144))
      throw std::runtime_error(fmt::format("merge pcap: '{}': frame {} at byte {}: captured length {} exceeds the snap length {}",
                                           path_, frame_ + 1, offset_, caplen, snaplen_));
    rec_.resize(kRecordHeader + caplen);
    if (caplen && std::fread(rec_.data() + kRecordHeader, 1, caplen, f_.get()) != caplen) truncated("frame data");
    const uint64_t t = sec * 1'000'000'000ull + (ns_ ? frac : frac * 1000);
    if (frame_ && t < time_ns_)
      throw std::runtime_error(fmt::format(
          "merge pcap: '{}': frame {} at byte {}: time {} ns is before the previous frame's {} ns (a part must be in "
          "time order)", path_, frame_ + 1, offset_, t, time_ns_));
    time_ns_ = t;
    offset_ += rec_.size();
    ++frame_;
  }

 private:
  [[noreturn]] void truncated(const char* what) {
    if (std::ferror(f_.get()))
      throw std::runtime_error(fmt::format("merge pcap: '{}': read error at byte {}: {}", path_, offset_, std::strerror(errno)));
    throw std::runtime_error(fmt::format("merge pcap: '{}': truncated: frame {} at byte {} ends inside its {}", path_,
                                         frame_ + 1, offset_, what));
  }
  std::string path_;
  FilePtr f_;
  uint8_t header_[kFileHeader] = {};
  bool swap_ = false, ns_ = true, done_ = false;
  uint32_t snaplen_ = 0;
  uint64_t offset_ = 0, frame_ = 0, time_ns_ = 0;
  std::vector<uint8_t> rec_;
};

// ------------------------------------------------------------------- log --

// One instant's records ordered as TxLog::close_group orders a group.
void sort_like_txlog(std::vector<std::string>& g) {
  auto by_node_text = [](const std::string& x, const std::string& y) { return record_before(x, y); };
  size_t i = 0;
  while (i < g.size()) {
    size_t j = i;
    while (j < g.size() && !order_node(g[j]).empty()) ++j;
    std::stable_sort(g.begin() + long(i), g.begin() + long(j), by_node_text);
    i = j + 1;  // past the node-less record, which stays
  }
}

bool parse_u64(std::string_view s, size_t* pos, uint64_t* v) {
  const size_t start = *pos;
  uint64_t r = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
    if (r > (~uint64_t(0) - 9) / 10) return false;
    r = r * 10 + uint64_t(s[(*pos)++] - '0');
  }
  *v = r;
  return *pos > start;
}

// One part: its lines, instant marks consumed, the next step or record
// (with its instant) in head().
class LogPart {
 public:
  enum class Kind { record, step, end };
  struct Item {
    Kind kind = Kind::end;
    std::string text;  // the line with its '\n'
    uint64_t line = 0;
    uint64_t instant = 0;
  };

  explicit LogPart(const std::string& path) : path_(path), f_(open_file(path, "rb", "merge log: cannot read")) { advance(); }
  ~LogPart() { std::free(buf_); }
  LogPart(const LogPart&) = delete;
  LogPart& operator=(const LogPart&) = delete;
  const std::string& path() const { return path_; }
  const Item& head() const { return head_; }
  uint64_t steps() const { return steps_; }

  void advance() {
    if (head_.kind == Kind::step) ++steps_;
    for (;;) {
      std::string line;
      if (!read_line(&line)) {
        head_ = Item{Kind::end, "", line_, 0};
        return;
      }
      std::string_view s(line);
      static constexpr std::string_view kMark = "{\"instant_ps\":", kRec = "{\"t_ps\":",
                                        kStep = ",\"node\":\"\",\"kind\":\"step\",";
      if (s.substr(0, kMark.size()) == kMark) {
        size_t p = kMark.size();
        uint64_t t = 0;
        if (!parse_u64(s, &p, &t) || s.substr(p) != "}\n") bad("an instant mark other than {\"instant_ps\":N}");
        if (marked_ && t < instant_)
          throw std::runtime_error(fmt::format("merge log: '{}' line {}: instant {} ps goes back (the previous mark was {} ps)",
                                               path_, line_, t, instant_));
        marked_ = true;
        instant_ = t;
        continue;
      }
      size_t p = kRec.size();
      uint64_t t = 0;
      if (s.substr(0, kRec.size()) != kRec || !parse_u64(s, &p, &t) || s.size() < p + 3 || s.substr(s.size() - 2) != "}\n")
        bad("not a transaction log record ({\"t_ps\":N,...})");
      const bool step = s.substr(p, kStep.size()) == kStep;
      head_ = Item{step ? Kind::step : Kind::record, std::move(line), line_, marked_ ? instant_ : t};
      return;
    }
  }

 private:
  // The next line with its '\n'; false at the end of the file.
  bool read_line(std::string* out) {
    errno = 0;
    const ssize_t n = ::getline(&buf_, &cap_, f_.get());
    if (n < 0) {
      if (std::ferror(f_.get()))
        throw std::runtime_error(fmt::format("merge log: '{}' line {}: read error: {}", path_, line_ + 1,
                                             std::strerror(errno ? errno : EIO)));
      return false;
    }
    out->assign(buf_, size_t(n));
    ++line_;
    if (out->back() != '\n') bad("truncated (the last line has no newline)");
    return true;
  }
  [[noreturn]] void bad(const char* what) {
    throw std::runtime_error(fmt::format("merge log: '{}' line {}: {}", path_, line_, what));
  }
  std::string path_;
  FilePtr f_;
  char* buf_ = nullptr;  // getline's
  size_t cap_ = 0;
  uint64_t line_ = 0, steps_ = 0;
  bool marked_ = false;
  uint64_t instant_ = 0;
  Item head_;
};

std::string clip(const std::string& line) {
  std::string s = line.substr(0, line.size() - (line.empty() || line.back() != '\n' ? 0 : 1));
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

// Every head is a step or the end: they must agree with part 0's.
void check_steps(const std::vector<std::unique_ptr<LogPart>>& parts) {
  const LogPart& a = *parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const LogPart& b = *parts[i];
    const auto& x = a.head();
    const auto& y = b.head();
    if (x.kind == y.kind && x.text == y.text) continue;
    const std::string pre = fmt::format("merge log: the step records differ (every part must have the same): after {} equal step records, ",
                                        a.steps());
    if (x.kind == LogPart::Kind::end)
      throw std::runtime_error(pre + fmt::format("'{}' ends after line {} where '{}' line {} has {}", a.path(), x.line, b.path(),
                                                 y.line, clip(y.text)));
    if (y.kind == LogPart::Kind::end)
      throw std::runtime_error(pre + fmt::format("'{}' ends after line {} where '{}' line {} has {}", b.path(), y.line, a.path(),
                                                 x.line, clip(x.text)));
    throw std::runtime_error(pre + fmt::format("'{}' line {} has {} and '{}' line {} has {}", a.path(), x.line, clip(x.text),
                                               b.path(), y.line, clip(y.text)));
  }
}

}  // namespace

void merge_wire_pcaps(const std::vector<std::string>& parts, const std::string& out) {
  check_out(parts, out, "merge pcap");
  std::vector<std::unique_ptr<PcapPart>> in;
  for (const std::string& p : parts) {
    in.push_back(std::make_unique<PcapPart>(p));
    if (std::memcmp(in.back()->header(), in[0]->header(), kFileHeader) != 0)
      throw std::runtime_error(fmt::format("merge pcap: '{}': its file header (magic, version, snap length, link type) "
                                           "differs from '{}''s", p, parts[0]));
    in.back()->next();
  }
  OutFile o(out, "merge pcap");
  o.put(in[0]->header(), kFileHeader);
  for (;;) {
    // The earliest record; on equal times the first part (node order).
    PcapPart* best = nullptr;
    for (auto& p : in)
      if (!p->done() && (!best || p->time_ns() < best->time_ns())) best = p.get();
    if (!best) break;
    o.put(best->record().data(), best->record().size());
    best->next();
  }
  o.close();
}

void merge_logs(const std::vector<std::string>& parts, const std::string& out) {
  check_out(parts, out, "merge log");
  std::vector<std::unique_ptr<LogPart>> in;
  for (const std::string& p : parts) in.push_back(std::make_unique<LogPart>(p));
  OutFile o(out, "merge log");
  std::vector<std::string> group;
  for (;;) {
    // Before the next step: the smallest instant any part has next.
    bool any = false;
    uint64_t t = 0;
    for (auto& p : in)
      if (p->head().kind == LogPart::Kind::record && (!any || p->head().instant < t)) {
        t = p->head().instant;
        any = true;
      }
    if (any) {
      group.clear();
      for (auto& p : in)
        while (p->head().kind == LogPart::Kind::record && p->head().instant == t) {
          group.push_back(p->head().text);
          p->advance();
        }
      sort_like_txlog(group);
      for (const std::string& r : group) o.put(r.data(), r.size());
      continue;
    }
    check_steps(in);
    if (in[0]->head().kind == LogPart::Kind::end) break;
    o.put(in[0]->head().text.data(), in[0]->head().text.size());
    for (auto& p : in) p->advance();
  }
  o.close();
}

}  // namespace ernic
