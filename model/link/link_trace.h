// model/link: the frames on each direction of the link as waveform
// signals, for viewing and for triggers (op(A->B), syn, psn_gap(A->B)).
//
// Scope top.link.<X>_to_<Y> (direction X->Y), signals:
//   tx_frames    32  frames X's CMAC transmitted (before wire faults); it
//                    counts up at each frame's first byte after the SFD
//                    (the pcap / log timestamp), and the tx_* fields below
//                    change with it
//   tx_opcode     8  BTH opcode (0xFF: not a RoCE frame)
//   tx_psn       24  BTH PSN
//   tx_dest_qp   24  BTH destination QP
//   tx_aeth       1  the frame has an AETH
//   tx_syndrome   8  AETH syndrome (0 without an AETH)
//   rx_frames    32  frames Y's CMAC received (after wire faults), counting
//                    up when the CMAC hands the frame on (its rx_axis_tvalid
//                    rises), with the rx_* fields
//   rx_opcode, rx_psn, rx_dest_qp   as above
//   rx_expected_psn 24  the PSN the responder expects next on rx_dest_qp
//                    (before this frame; see below)
//   rx_psn_gap    1  this RC request's PSN is not rx_expected_psn
//   rx_psn_gaps  32  how many requests so far had a gap
//
// Expected PSN (the responder's ePSN as the wire shows it, IBTA 9.7.5):
// per destination QP, the first RC request sets it (no gap); a request at
// the expected PSN advances it by 1, a READ request by ceil(DMA length /
// PMTU) (the PMTU learnt from the first FIRST/MIDDLE payload on that QP;
// unknown: the next request re-synchronises); a request elsewhere (ahead:
// lost or reordered frames; behind: a duplicate or go-back-N resend) is a
// gap and leaves it. A CM MAD on QP1 in either direction forgets every
// expectation (a new connection may reuse a QP number).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/link/cmac.h"
#include "model/sim/sim_context.h"

namespace ernic {

class LinkTrace {
 public:
  // from/to: node names of this direction.
  LinkTrace(SimContext& ctx, const std::string& from, const std::string& to);
  // A frame X transmitted; first_byte_ps >= now (the pcap timestamp).
  void on_tx(const FrameBytes& f, uint64_t first_byte_ps);
  // A frame Y received, now.
  void on_rx(const FrameBytes& f);
  uint64_t psn_gaps() const { return gaps_; }

 private:
  struct Expect {
    bool known = false;
    uint32_t psn = 0;
    uint32_t pmtu = 0;
  };
  SimContext& ctx_;
  int v_tx_frames_, v_tx_opcode_, v_tx_psn_, v_tx_dest_qp_, v_tx_aeth_, v_tx_syndrome_;
  int v_rx_frames_, v_rx_opcode_, v_rx_psn_, v_rx_dest_qp_, v_rx_expected_, v_rx_gap_, v_rx_gaps_;
  uint64_t tx_ = 0, rx_ = 0, gaps_ = 0;
  std::map<uint32_t, Expect> expect_;  // by destination QP
  // Cross-direction reset on CM traffic (both LinkTraces share it).
 public:
  LinkTrace* peer = nullptr;
  void forget() { expect_.clear(); }
};

}  // namespace ernic
