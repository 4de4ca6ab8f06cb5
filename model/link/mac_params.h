// model/link: the MAC's limits the scenario parser shares with the CMAC
// model (model/link/cmac.h). Plain C++ that includes nothing of the model:
// tb/layout/check_layout.py lets model/scenario include it.
#pragma once
#include <cstddef>

namespace ernic {

// ctl_rx_max_packet_len (PG203, the CMAC's configuration), its default:
// the longest frame the MAC receives, FCS included (bytes).
constexpr size_t kCtlRxMaxPacketLen = 9600;

}  // namespace ernic
