// model/trace: reading VCD text, internal to model/trace (vcd_read.cpp,
// vcd_merge.cpp): a streaming tokenizer, the header ($scope, $var,
// $timescale) and the body's value changes and time stamps; helpers the
// writer shares (error text, dotted names).
#pragma once
#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ernic::trace::detail {

constexpr uint64_t kNoTime = ~uint64_t{0};
constexpr size_t kIoBlock = 1u << 20;

std::runtime_error io_error(const std::string& what, const std::string& path);

inline bool is_space(int c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits at '.' without sanitising (names in a VCD file are taken as written).
std::vector<std::string> split_dots(std::string_view s);
std::string join_dots(const std::vector<std::string>& parts);

// ---- streaming whitespace tokenizer over a file --------------------------
class Tokenizer {
 public:
  explicit Tokenizer(const std::string& path) : path_(path), buf_(kIoBlock) {
    errno = 0;
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw io_error("cannot open", path);
  }
  ~Tokenizer() {
    if (f_) std::fclose(f_);
  }
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Next whitespace-separated token; false at end of file.
  bool next(std::string& tok) {
    tok.clear();
    int c;
    do {
      c = get();
      if (c < 0) return false;
      if (c == '\n') ++line_;
    } while (is_space(c));
    do {
      tok.push_back(static_cast<char>(c));
      c = get();
    } while (c >= 0 && !is_space(c));
    if (c == '\n') ++line_;
    return true;
  }
  // Next token, which must exist.
  void expect(std::string& tok, const char* what) {
    if (!next(tok)) fail(fmt::format("unexpected end of file, expected {}", what));
  }
  // Skips tokens up to and including "$end".
  void skip_to_end() {
    std::string t;
    do expect(t, "$end");
    while (t != "$end");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("vcd: {}:{}: {}", path_, line_, what));
  }
  const std::string& path() const { return path_; }

 private:
  int get() {
    if (pos_ == len_) {
      if (!f_) return -1;
      len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
      pos_ = 0;
      if (len_ == 0) {
        if (std::ferror(f_)) fail("read error");
        return -1;
      }
    }
    return static_cast<unsigned char>(buf_[pos_++]);
  }

  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t line_ = 1;
};

// ---- VCD header -----------------------------------------------------------
struct HdrScope {
  std::vector<std::string> path;
  std::string type;
};
struct HdrVar {
  std::vector<std::string> scope;
  std::string type;
  unsigned width = 0;
  std::string code;
  std::string ref;    // reference as written, tokens joined by ' ' ("count [7:0]")
  std::string base;   // first token ("count")
  std::string range;  // remaining tokens joined without spaces ("[7:0]")
};
struct Header {
  std::vector<HdrScope> scopes;  // every $scope, in order (path split at '.')
  std::vector<HdrVar> vars;
  uint64_t mult = 1, div = 1;    // time in ps = file time * mult / div
  bool has_timescale = false;
};

// Reads the declarations up to and including "$enddefinitions $end".
Header parse_header(Tokenizer& tz);

// ---- VCD body events --------------------------------------------------------
// Reads value changes and time stamps of a VCD body. Keywords ($dumpvars,
// $dumpall, $dumpon, $dumpoff, $end) are transparent; $comment is skipped.
struct BodyEvent {
  enum Kind { kTime, kChange, kEnd } kind = kEnd;
  uint64_t time_ps = 0;
  std::string value;  // "0", "b1010", "r0.5", ...
  std::string code;
};

class BodyReader {
 public:
  BodyReader(Tokenizer& tz, const Header& h) : tz_(tz), mult_(h.mult), div_(h.div) {}

  void next(BodyEvent& ev) {
    for (;;) {
      if (!tz_.next(tok_)) {
        ev.kind = BodyEvent::kEnd;
        return;
      }
      const char c = tok_[0];
      if (c == '#') {
        ev.kind = BodyEvent::kTime;
        ev.time_ps = convert(tok_);
        return;
      }
      if (c == '$') {
        if (tok_ == "$comment") tz_.skip_to_end();
        continue;
      }
      ev.kind = BodyEvent::kChange;
      if (c == 'b' || c == 'B' || c == 'r' || c == 'R') {
        ev.value = tok_;
        tz_.expect(ev.code, "identifier code");
        return;
      }
      if (c == '0' || c == '1' || c == 'x' || c == 'X' || c == 'z' || c == 'Z') {
        if (tok_.size() < 2) tz_.fail("scalar value without identifier code");
        ev.value.assign(1, c);
        ev.code.assign(tok_, 1, std::string::npos);
        return;
      }
      tz_.fail("unexpected '" + tok_ + "' in the value changes");
    }
  }

 private:
  uint64_t convert(const std::string& tok) {
    uint64_t t = 0;
    if (tok.size() < 2) tz_.fail("bad time '" + tok + "'");
    for (size_t i = 1; i < tok.size(); ++i) {
      if (tok[i] < '0' || tok[i] > '9') tz_.fail("bad time '" + tok + "'");
      t = t * 10 + uint64_t(tok[i] - '0');
    }
    t *= mult_;
    if (div_ != 1) {
      if (t % div_ != 0) tz_.fail("time '" + tok + "' is not a whole number of ps");
      t /= div_;
    }
    return t;
  }

  Tokenizer& tz_;
  uint64_t mult_, div_;
  std::string tok_;
};

}  // namespace ernic::trace::detail
