// model/monitor: what the wire monitor's files share (message text, 24-bit
// PSNs), internal to model/monitor: only wire_monitor*.cpp include it (the
// API is wire_monitor.h).
#pragma once
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "model/roce/psn.h"

namespace ernic::monitor::detail {

inline std::string fmt_s(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt_s(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

inline unsigned psn24(int64_t u) { return unsigned(uint64_t(u) & roce::kPsnMask); }

}  // namespace ernic::monitor::detail
