// model/link: a switch port's counters (model/link/switch.h) and their
// names, the one list the switch, the run's report and the scenario step
// `expect_switch` share. Plain C++ that includes nothing of the model: the
// scenario parser reads it (tb/layout/check_layout.py lets model/scenario
// include this file and no other of model/link).
//
// Bytes are frame bytes as carried (Ethernet header .. ICRC; no preamble,
// SFD or FCS), as in the taps and the opcode counts.
#pragma once
#include <cstdint>

namespace ernic {

struct SwitchPortCounters {
  uint64_t frames_in = 0, bytes_in = 0;     // received from the port's node (every frame, pause frames too)
  uint64_t frames_out = 0, bytes_out = 0;   // sent to it (forwarded frames and the switch's own pause frames)
  uint64_t dropped = 0, dropped_bytes = 0;  // egress: frames for this port that did not fit its buffer
  uint64_t no_route = 0;                    // ingress: frames dropped for want of another port to go to
  uint64_t flooded = 0;                     // ingress: frames copied to every other port (unknown: flood)
  uint64_t ecn_marked = 0;                  // egress: frames whose ECN field was set to CE here
  uint64_t pfc_xoff_sent = 0;               // to the node, for this port's ingress (refreshes counted)
  uint64_t pfc_xon_sent = 0;
  uint64_t pause_rx = 0;                    // pause frames (PAUSE / PFC) received from the node
  uint64_t paused_ns = 0;                   // egress held by them (a hold counts here once it ends;
                                            // SwitchPort::counters_now() adds the one running)
  uint64_t max_queue_bytes = 0;             // peak of the egress queue
  uint64_t max_ingress_bytes = 0;           // peak of the PFC class's bytes from this port inside the switch
  uint64_t rx_bad_fcs = 0;                  // received with a bad FCS (dropped)
};

struct SwitchCounterName {
  const char* name;
  uint64_t SwitchPortCounters::*field;
};

inline constexpr SwitchCounterName kSwitchCounters[] = {
    {"frames_in", &SwitchPortCounters::frames_in},
    {"bytes_in", &SwitchPortCounters::bytes_in},
    {"frames_out", &SwitchPortCounters::frames_out},
    {"bytes_out", &SwitchPortCounters::bytes_out},
    {"dropped", &SwitchPortCounters::dropped},
    {"dropped_bytes", &SwitchPortCounters::dropped_bytes},
    {"no_route", &SwitchPortCounters::no_route},
    {"flooded", &SwitchPortCounters::flooded},
    {"ecn_marked", &SwitchPortCounters::ecn_marked},
    {"pfc_xoff_sent", &SwitchPortCounters::pfc_xoff_sent},
    {"pfc_xon_sent", &SwitchPortCounters::pfc_xon_sent},
    {"pause_rx", &SwitchPortCounters::pause_rx},
    {"paused_ns", &SwitchPortCounters::paused_ns},
    {"max_queue_bytes", &SwitchPortCounters::max_queue_bytes},
    {"max_ingress_bytes", &SwitchPortCounters::max_ingress_bytes},
    {"rx_bad_fcs", &SwitchPortCounters::rx_bad_fcs},
};

}  // namespace ernic
