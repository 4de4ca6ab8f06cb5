// model/trace: the VCD writer (vcd.h): variable and clock declarations,
// the recording of changes into the temporary body, closing it; the byte
// sinks; trigger windows. The merge that writes the final VCD is in
// vcd_merge.cpp and vcd_dump.cpp.
#include "model/trace/vcd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "model/trace/vcd_read.h"

namespace ernic::trace {

using detail::io_error;
using detail::join_dots;
using detail::split_dots;

// ---- names --------------------------------------------------------------------
std::string sanitize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '[' || c == ']';
    out.push_back(ok ? c : '_');
  }
  if (out.empty()) out = "_";
  return out;
}

std::vector<std::string> split_scope(std::string_view scope) {
  std::vector<std::string> out = split_dots(scope);
  for (auto& s : out) s = sanitize_name(s);
  return out;
}

// ---- VcdWriter ------------------------------------------------------------------
VcdWriter::VcdWriter(std::string tmp_body_path) : body_path_(std::move(tmp_body_path)) {
  errno = 0;
  body_ = std::fopen(body_path_.c_str(), "wb");
  if (!body_) throw io_error("cannot create temporary body", body_path_);
  std::setvbuf(body_, nullptr, _IONBF, 0);  // we buffer ourselves
  buf_.resize(kBufBytes);
}

VcdWriter::~VcdWriter() {
  if (body_) std::fclose(body_);
  std::remove(body_path_.c_str());
}

int VcdWriter::add_var(const std::string& scope, const std::string& name, unsigned width,
                       uint64_t initial) {
  if (frozen_ || finished_)
    throw std::logic_error("vcd: add_var(" + scope + "." + name +
                           ") after the first change; declare all variables first");
  if (width < 1 || width > 64)
    throw std::invalid_argument(fmt::format("vcd: {}.{}: width {} not in 1..64", scope, name, width));
  Decl d{split_scope(scope), sanitize_name(name), width};
  if (d.scope.empty()) throw std::invalid_argument("vcd: variable '" + name + "' without a scope");
  // Sanitised names hold no '.', so the joined name identifies the variable.
  if (!full_names_.insert(join_dots(d.scope) + "." + d.name).second)
    throw std::invalid_argument("vcd: duplicate variable " + join_dots(d.scope) + "." + d.name);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  vars_.push_back(Var{mask, initial & mask, initial & mask, 0, false});
  decls_.push_back(std::move(d));
  return static_cast<int>(vars_.size() - 1);
}

int VcdWriter::add_clock(const std::string& scope, const std::string& name, uint64_t period_ps) {
  if (period_ps < 2) throw std::invalid_argument(fmt::format("vcd: clock {}.{}: period {} ps < 2", scope, name, period_ps));
  const int v = add_var(scope, name, 1, 1);
  vars_[static_cast<size_t>(v)].clock_ps = period_ps;
  return v;
}

void VcdWriter::bad_change(int var, uint64_t time_ps) const {
  if (var >= 0 && static_cast<size_t>(var) < vars_.size() && vars_[static_cast<size_t>(var)].clock_ps)
    throw std::invalid_argument(fmt::format("vcd: change() of the clock {}.{}: clock edges are synthesised",
                                            join_dots(decls_[static_cast<size_t>(var)].scope), decls_[static_cast<size_t>(var)].name));
  if (finished_) throw std::logic_error("vcd: change() after close_body() / finish_merged()");
  if (var < 0 || static_cast<size_t>(var) >= vars_.size())
    throw std::invalid_argument(fmt::format("vcd: change() of unknown variable {}", var));
  const Decl& d = decls_[static_cast<size_t>(var)];
  throw std::invalid_argument(fmt::format("vcd: change of {}.{} at {} ps is earlier than {} ps",
                                          join_dots(d.scope), d.name, time_ps, cur_time_));
}

void VcdWriter::put_record(uint32_t tag, uint64_t payload) {
  if (used_ + 12 > buf_.size()) write_buffer();
  std::memcpy(buf_.data() + used_, &tag, 4);
  std::memcpy(buf_.data() + used_ + 4, &payload, 8);
  used_ += 12;
}

void VcdWriter::write_buffer() {
  if (used_ == 0) return;
  errno = 0;
  if (std::fwrite(buf_.data(), 1, used_, body_) != used_)
    throw io_error("write error on temporary body", body_path_);
  used_ = 0;
}

void VcdWriter::flush_pending() {
  if (touched_.empty()) return;
  // A time's changes in variable order, not in the order the kernel ran
  // the processes that made them (the same bytes in every composition:
  // model/sim/instant_order.h).
  std::sort(touched_.begin(), touched_.end());
  bool stamped = false;
  for (uint32_t id : touched_) {
    Var& v = vars_[id];
    v.touched = false;
    if (v.pending == v.cur) continue;
    v.cur = v.pending;
    if (cur_time_ == 0) {
      v.initial = v.cur;  // changes at time 0 are initial values
      continue;
    }
    if (!stamped) {
      put_record(kTimeTag, cur_time_);
      stamped = true;
    }
    put_record(id, v.cur);
  }
  touched_.clear();
}

void VcdWriter::close_body() {
  if (finished_) return;
  flush_pending();
  write_buffer();
  finished_ = true;
  frozen_ = true;
  errno = 0;
  const bool close_bad = std::fclose(body_) != 0;
  body_ = nullptr;
  if (close_bad) throw io_error("write error on temporary body", body_path_);
}

void VcdWriter::remove_body() {
  if (body_) {
    std::fclose(body_);
    body_ = nullptr;
  }
  std::remove(body_path_.c_str());
}

void VcdWriter::finish_merged(const std::string& out_path, const std::string& rtl_vcd_path,
                              uint64_t end_time_ps) {
  if (merged_) throw std::logic_error("vcd: finish_merged() called twice");
  merged_ = true;
  close_body();
  try {
    FileSink sink(out_path);
    write_merged(sink, rtl_vcd_path, end_time_ps);
  } catch (...) {
    std::remove(out_path.c_str());  // no half-written waveform
    throw;
  }
  remove_body();
}

std::vector<std::pair<std::string, unsigned>> VcdWriter::model_var_names() const {
  std::vector<std::pair<std::string, unsigned>> out;
  out.reserve(decls_.size());
  for (const Decl& d : decls_) out.emplace_back(join_dots(d.scope) + "." + d.name, d.width);
  return out;
}

// ---- sinks ----------------------------------------------------------------------
ByteSink::~ByteSink() = default;

FileSink::FileSink(std::string path) : path_(std::move(path)) {
  errno = 0;
  f_ = std::fopen(path_.c_str(), "wb");
  if (!f_) throw io_error("cannot create", path_);
}

FileSink::~FileSink() {
  if (f_) std::fclose(f_);
}

void FileSink::write(const char* data, size_t n) {
  if (!f_) throw std::logic_error("vcd: write to a closed FileSink '" + path_ + "'");
  errno = 0;
  if (std::fwrite(data, 1, n, f_) != n) throw io_error("write error on", path_);
  bytes_ += n;
}

void FileSink::close() {
  if (!f_) return;
  errno = 0;
  const bool bad = std::fflush(f_) != 0 || std::ferror(f_);
  const bool close_bad = std::fclose(f_) != 0;
  f_ = nullptr;
  if (bad || close_bad) throw io_error("write error on", path_);
}

// ---- trigger windows -------------------------------------------------------------
std::vector<VcdWindow> make_windows(const std::vector<uint64_t>& hits_ps, uint64_t pre_ps, uint64_t post_ps) {
  std::vector<uint64_t> h = hits_ps;
  std::sort(h.begin(), h.end());
  std::vector<VcdWindow> out;
  for (uint64_t t : h) {
    const uint64_t b = t > pre_ps ? t - pre_ps : 0;
    const uint64_t e = t > ~uint64_t{0} - post_ps ? ~uint64_t{0} : t + post_ps;
    if (!out.empty() && b <= out.back().end_ps + 1) {
      out.back().end_ps = std::max(out.back().end_ps, e);
    } else {
      out.push_back({b, e});
    }
  }
  return out;
}

}  // namespace ernic::trace
