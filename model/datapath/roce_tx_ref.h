// model/datapath: the C++ reference model of rtl/roce_tx (rtl/SEAM.md, "TX
// seam"): what frame the RTL emits for a descriptor and a payload, and when.
// Plain C++ (no SystemC); the frame bytes come from the protocol library's
// encoder (roce::encode, model/roce/packet.h) and ICRC (roce::compute_icrc).
//
// Frame (tx_frame): Ethernet II | IPv4 (IHL 5, fragment offset 0, protocol
// 17, header checksum) or IPv6 (next header 17) | UDP (sport = cfg_udp_sport,
// dport 4791, checksum 0) | BTH (PadCnt = (4 - payload_len % 4) % 4) | ext
// (min(ext_len, 28) bytes) | payload | zero pad | ICRC. A raw descriptor's
// payload is the frame; only its ICRC is appended.
//
// Timing of the RTL (cycles of the core clock; "edge k" = the k-th rising
// edge; handshakes happen at edges). B = body beats = ceil(L / 64), L =
// header + payload + pad bytes (raw: payload_len), at least 1; O = output
// beats = ceil((L + 4) / 64). The RTL is store-and-forward:
//   - a frame's assembly starts (is "loaded") at load = max(descriptor
//     handshake, the edge that assembled the previous frame's last body
//     beat); body beat i is assembled at the first edge after the previous
//     one (after load, for i = 0) where, if it carries payload, the payload
//     beat is valid (that edge is the payload beat's handshake). Header
//     beats and the flush beat need no payload.
//   - the frame is committed 2 edges after its last body beat (commit =
//     end + 2: one edge into the buffer and rtl/icrc, one for crc_valid);
//   - its first output beat is loaded into the output register at
//     start = max(commit, previous start + previous O), and with
//     m_axis_tready high, output beat n is taken at edge start + 1 + n.
//   Idle block, descriptor at edge D, payload without bubbles: the first
//   output beat is taken at edge D + B + 3, i.e. tvalid rises B + 2 cycles
//   after the descriptor, 2 cycles after the last payload beat (3 when the
//   frame has a flush beat: TxShape::flush). Per-frame overhead: none;
//   frames leave back to back at one beat a cycle, O cycles per frame, when
//   each frame's B is at most the previous frame's O (a frame cannot leave
//   before it is whole). Single-beat frames (ACKs) go at one a cycle.
// RoceTxTiming computes these edges. Bound: the output edges are exact (0
// cycles) while m_axis_tready stays high (tb/rtl/test_roce_tx_rtl checks
// every edge); when the consumer stalls (m_axis_tready low) the RTL keeps
// frames, order and bytes, and each stall cycle delays the beats behind it
// by one cycle, which the model does not count (TxPathTiming,
// model/datapath/tx_path_timing.h, does: roce_tx behind the FIFO to the
// CMAC, every edge under backpressure). The payload handshakes are
// exact too unless the RTL's buffer (kTxBufBeats) or frame count
// (kTxMaxFrames) is full, which happens only while the output is the
// bottleneck (e.g. frames whose ICRC needs an extra beat, back to back):
// then the payload is taken later than the model says, the output edges
// stay exact.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/datapath/seam.h"
#include "model/roce/packet.h"

namespace ernic::seam {

// rtl/roce_tx parameters (BUF_AW = 8, REC_AW = 5).
constexpr size_t kTxBufBeats = 256;              // beat buffer: 64 bytes each
constexpr size_t kTxMaxBody = kTxBufBeats * 64;  // largest L (bytes without ICRC)
constexpr size_t kTxMaxFrames = 32;              // frames loaded for assembly, not yet started on m_axis
constexpr unsigned kTxCommitAfterEnd = 2;        // commit = last body beat's edge + 2

// Sizes of one frame as roce_tx builds it.
struct TxShape {
  size_t header_len = 0;     // Ethernet .. ext (0 for raw)
  size_t pad_len = 0;        // zero bytes after the payload (0 for raw)
  size_t body_len = 0;       // L = header + payload + pad
  size_t frame_len = 0;      // L + 4 (ICRC)
  size_t payload_beats = 0;  // ceil(payload_len / 64): beats taken from s_pay
  size_t body_beats = 0;     // B = max(1, ceil(L / 64)): cycles of assembly
  size_t out_beats = 0;      // O = ceil((L + 4) / 64): cycles on m_axis
  bool flush = false;        // one assembly beat after the last payload beat
};
TxShape tx_shape(const TxDesc& d);

// The frame roce_tx emits. payload must hold payload_len bytes. Throws
// std::invalid_argument when it does not or when L exceeds kTxMaxBody.
roce::Bytes tx_frame(const TxDesc& d, const uint8_t* payload, size_t len, uint16_t udp_sport);
inline roce::Bytes tx_frame(const TxDesc& d, const roce::Bytes& payload, uint16_t udp_sport) {
  return tx_frame(d, payload.data(), payload.size(), udp_sport);
}

// The descriptor for a frame the ERNIC model built: tx_frame(tx_desc_from_frame(f),
// f.payload, f.udp.sport) == roce::encode(f) for every frame that the seam
// can carry, i.e. with an IP EtherType, UDP dport 4791 and checksum 0, IPv4
// fragment offset 0 and protocol 17, IPv6 next header 17, zero pad bytes and
// the default EncodeOptions (tx_desc_fits tells). ext holds the opcode's
// extension headers as roce::encode writes them (none for an opcode not in
// the table).
TxDesc tx_desc_from_frame(const roce::Frame& f);
// True when the seam carries f unchanged (see above); udp_sport = cfg_udp_sport.
bool tx_desc_fits(const roce::Frame& f, uint16_t udp_sport);
// A raw descriptor: the payload is the whole frame of len bytes (Ethernet ..
// last byte before the ICRC). Throws std::invalid_argument when len >
// kTxMaxBody.
TxDesc tx_desc_raw(size_t len);

// Edges of rtl/roce_tx's handshakes, frame by frame, in order (see above).
class RoceTxTiming {
 public:
  struct Frame {
    uint64_t load = 0;          // assembly starts
    uint64_t end = 0;           // last body beat assembled
    std::vector<uint64_t> pay;  // payload handshakes
    uint64_t first_out = 0;     // first output beat taken (m_axis_tready high)
    uint64_t last_out = 0;      // last output beat taken
  };
  // desc: edge of the descriptor's handshake (or the first edge it is
  // valid); pay_valid[j]: first edge at which payload beat j is valid (at
  // least payload_beats entries). Frames must be given in order.
  Frame push(const TxDesc& d, uint64_t desc, const std::vector<uint64_t>& pay_valid);

 private:
  bool any_ = false;
  uint64_t prev_end_ = 0;
  uint64_t next_start_ = 0;  // earliest edge the next frame's first beat may be loaded
};

}  // namespace ernic::seam
