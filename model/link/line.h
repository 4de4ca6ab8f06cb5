// model/link: the two halves of one direction of a line, and what passes
// between them (issue 16: the link as a channel).
//
// A direction of the link is cut where a SimBricks Ethernet PACKET is
// (lib/simbricks/network/proto.h): the sending half (class Wire,
// cmac.h: fault rules, propagation delay) decides every copy of a frame the
// moment its transmitter starts it and stamps it with the instant its first
// byte (after the SFD) reaches the receiver; the receiving half (LineRx)
// puts the copies on the receiving line one at a time, in order of their
// last byte's arrival, and hands each to its FrameSink when that last byte
// is in. Between them a LineOut: in one process LineRx itself (a call), in
// a split run the link end that sends the PACKET to the other process
// (model/bridge/net_link.h). Both paths run this same code, so a run gives
// the same bytes whichever carries its frames.
//
// Time on the line (LineRate, cmac.h): a copy whose first byte arrives at
// first_ps has its last (FCS) byte in at first_ps - preamble + frame, the
// rule the CMAC and a switch port transmit by.
#pragma once
#include <cstdint>
#include <map>
#include <systemc>
#include <utility>
#include <vector>

namespace ernic {

using FrameBytes = std::vector<uint8_t>;
class FrameSink;

// One copy of a frame, as the sending half hands it on.
struct LineFrame {
  FrameBytes f;
  uint64_t first_ps = 0;  // its first byte's arrival at the receiver (ps)
  bool bad_fcs = false;   // its transmitter aborted it: the FCS check fails
};

// Where a sending half puts its copies; called at the simulated time the
// frame's transmitter starts it, in non-decreasing first_ps per line
// except for copies a fault delays (they may be overtaken).
class LineOut {
 public:
  virtual ~LineOut() = default;
  virtual void carry(LineFrame lf) = 0;
};

// The receiving half: one frame at a time on the receiving line (a
// duplicate, a released or a delayed frame pushes what follows it back by
// preamble + frame + FCS, then the IFG); equal last-byte arrivals in the
// order carried.
class LineRx : public sc_core::sc_module, public LineOut {
 public:
  SC_HAS_PROCESS(LineRx);
  LineRx(sc_core::sc_module_name name, double rate_gbps);
  FrameSink* dst = nullptr;
  void carry(LineFrame lf) override;
  uint64_t frames_carried() const { return seq_; }

 private:
  void thread();
  uint64_t ps_per_byte_x1000_;  // LineRate's (cmac.h)
  std::map<std::pair<uint64_t, uint64_t>, LineFrame> q_;  // (arrival of last byte, sequence)
  uint64_t seq_ = 0;
  uint64_t rx_line_free_ = 0;  // the receiving line is busy until then
  sc_core::sc_event ev_;
};

}  // namespace ernic
