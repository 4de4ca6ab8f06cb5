// model/link: what the CMAC's TX, RX and PFC files share (cmac_tx.cpp,
// cmac_rx.cpp, cmac_pfc.cpp), internal to model/link: a frame named for
// messages and the transaction log. The API is cmac.h.
#pragma once
#include <fmt/format.h>

#include <string>

#include "model/link/cmac.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace ernic::cmac_detail {

// "RC_WRITE_MIDDLE psn=0x000012" for a RoCE frame, "EtherType 0x8808" else.
inline std::string describe(const FrameBytes& f) {
  if (roce::is_roce(f.data(), f.size())) {
    const size_t off = roce::kEthHdrLen + roce::kUdpHdrLen +
                       (roce::get_be16(&f[12]) == roce::kEtherTypeIpv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen);
    if (off + roce::kBthLen <= f.size())
      return fmt::format("{} psn=0x{:06x}", roce::opcode_name(f[off]), roce::get_be24(&f[off + 9]));
  }
  return f.size() >= 14 ? fmt::format("EtherType 0x{:04x}", roce::get_be16(&f[12])) : "runt";
}

}  // namespace ernic::cmac_detail
