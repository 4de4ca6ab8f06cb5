// model/link: the switch's ECN and PFC parameters (model/link/switch.h),
// the one description the switch and the scenario parser share (`topology:
// switch`, scenarios/README.md section 4). Plain C++ that includes nothing
// of the model: tb/layout/check_layout.py lets model/scenario include it.
// Bytes are queued frame bytes (Ethernet header .. ICRC).
#pragma once
#include <cstdint>

namespace ernic {

// ECN CE marking at an egress port (RFC 3168; RED as RFC 2309 on the
// instantaneous queue).
struct SwitchEcn {
  bool on = false;
  bool red = false;                  // false: threshold_bytes; true: min/max/probability
  uint64_t threshold_bytes = 0;      // mark when the queue holds more than this
  uint64_t min_bytes = 0, max_bytes = 0;
  double probability = 1.0;          // RED's marking probability at max_bytes
  bool mark_not_ect = false;         // mark Not-ECT frames too (ERNIC sends Not-ECT: QPADVCONFi's traffic class is DSCP only)
};

// 802.1Qbb PFC on the ingress side of a port.
struct SwitchPfc {
  bool on = false;
  uint64_t xoff_bytes = 0, xon_bytes = 0;  // pause at >= xoff, resume at <= xon (bytes in the switch from that port)
  uint8_t priority = 3;                     // 0..7
  // The pause time sent and its refresh (the CMAC's, LinkParams; A-PFC-2).
  uint16_t quanta = 0xFFFF, refresh_quanta = 0x8000;
};

}  // namespace ernic
