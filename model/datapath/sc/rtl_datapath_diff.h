// model/datapath/sc: what the `rtl` datapath's files share
// (rtl_datapath_core.cpp, rtl_datapath_cmac.cpp), internal to
// model/datapath/sc: the scoreboard's byte comparison. The API is
// rtl_datapath.h.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "model/roce/types.h"

namespace ernic::rtl_detail {

// "byte 17: RTL 0x12 reference 0x13" / "length: RTL 60 reference 64".
inline std::string bytes_diff(const roce::Bytes& got, const roce::Bytes& exp) {
  if (got.size() == exp.size() && (got.empty() || std::memcmp(got.data(), exp.data(), got.size()) == 0)) return {};
  const size_t n = std::min(got.size(), exp.size());
  for (size_t i = 0; i < n; ++i)
    if (got[i] != exp[i]) return fmt::format("byte {}: RTL 0x{:02x} reference 0x{:02x}", i, got[i], exp[i]);
  if (got.size() != exp.size()) return fmt::format("length: RTL {} bytes, reference {} bytes", got.size(), exp.size());
  return {};
}

}  // namespace ernic::rtl_detail
