// model/link: the switch's ECN and PFC parameters (model/link/switch.h),
// the one description the switch and the scenario parser share (`topology:
// switch`, scenarios/README.md section 4). Plain C++ that includes nothing
// of the model: tb/layout/check_layout.py lets model/scenario include it.
// Bytes are queued frame bytes (Ethernet header .. ICRC).
#pragma once
#include <cmath>
#include <cstdint>

namespace ernic {

// ECN CE marking at an egress port (RFC 3168; RED as Floyd and Jacobson's
// gateway, RFC 2309, on the average queue: avg <- (1 - weight) avg +
// weight q at each frame's arrival, decayed over idle time as if frames of
// kRedIdleFrameBytes had left meanwhile; weight 1 = the instantaneous queue).
struct SwitchEcn {
  bool on = false;
  bool red = false;                  // false: threshold_bytes; true: min/max/probability
  uint64_t threshold_bytes = 0;      // mark when the queue holds more than this
  uint64_t min_bytes = 0, max_bytes = 0;
  double probability = 1.0;          // RED's marking probability at max_bytes
  double weight = 1.0;               // RED's w_q, (0, 1]
  bool mark_not_ect = false;         // mark Not-ECT frames too (ERNIC sends Not-ECT: QPADVCONFi's traffic class is DSCP only)
};

// 802.1Qbb PFC on the ingress side of a port.
struct SwitchPfc {
  bool on = false;
  uint64_t xoff_bytes = 0, xon_bytes = 0;  // pause at >= xoff, resume at <= xon (bytes in the switch from that port)
  uint8_t priority = 3;                     // 0..7
  // The pause time sent and its refresh (the CMAC's, LinkParams; A-PFC-2).
  uint16_t quanta = 0xFFFF, refresh_quanta = 0x8000;
  // The scenario parser refuses thresholds that cannot be lossless (below,
  // pfc_headroom_bytes) unless this is off (to study drops on purpose).
  bool headroom_check = true;
};

constexpr uint64_t kRedIdleFrameBytes = 1500;

// PFC headroom: what may still arrive at a port after it decides XOFF, in
// bytes: the line's round trip (2 x delay at the rate) and two frames of
// the largest size (the one the port's egress is sending when the XOFF
// waits for the frame boundary, the one the node has started when it
// arrives), each with preamble, FCS and IFG. The largest frame ERNIC sends:
// Ethernet 14 + IPv6 40 + UDP 8 + BTH 12 + RETH 16 + PMTU 4096 + ICRC 4.
constexpr uint64_t kPfcLargestFrameBytes = 14 + 40 + 8 + 12 + 16 + 4096 + 4;
constexpr uint64_t kPfcLargestWireBytes = 8 + kPfcLargestFrameBytes + 4 + 12;
inline uint64_t pfc_headroom_bytes(double rate_gbps, uint64_t delay_ps) {
  return uint64_t(std::ceil(2.0 * double(delay_ps) * rate_gbps / 8000.0)) + 2 * kPfcLargestWireBytes;
}

}  // namespace ernic
