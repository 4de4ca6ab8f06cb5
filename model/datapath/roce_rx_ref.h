// model/datapath: the C++ reference model of roce_rx, the RX datapath
// block at the RX seam (rtl/SEAM.md "RX seam"; RTL rtl/roce_rx/roce_rx.sv).
//
// roce_rx_ref() takes one frame as the block receives it (Ethernet header ..
// last byte, no FCS; `bad_fcs` = s_axis_tuser on its last beat) and returns
// what the block puts on its outputs for it: either the bypass stream (the
// frame unchanged, no descriptor) or one RX descriptor (RxDesc, the fields
// and syndrome of SEAM.md) and the payload stream's bytes (desc.payload_len
// of them). It is built from the project's independent pieces: the
// classifier ernic::is_rocev2_frame (model/link/classify.h), the opcode
// table roce::opcode_info, roce::compute_icrc and roce::ipv4_checksum; the
// fields of a frame with syndrome bits 4 and 8 clear equal roce::decode's.
//
// Timing of the RTL, in core-clock cycles counted as rtl/icrc counts them
// (latency N = the output is high in the N-th cycle after the rising edge
// that accepts the frame's last beat; cycle 1 follows that edge directly):
// - rtl/roce_rx/roce_rx.sv (cut-through): m_desc_valid after
//   kRoceRxDescLatency = 2 cycles, fixed, whatever the frame length, the
//   bubbles or the next frame. Payload and bypass beats leave one input
//   beat behind: an output beat is registered at the edge accepting the
//   input beat after the one holding its first byte, or at the edge after
//   the frame's last beat; so a frame's last payload beat comes after at
//   most kRoceRxPayloadLatency = 2 cycles (never after its descriptor), and
//   a frame's last bypass beat after exactly 2 cycles.
// - rtl/examples/roce_rx_alt (store-and-forward, a users'-RTL example):
//   the descriptor comes after the frame was stored and read back, after
//   r + 3 cycles when the block was idle, r = the
//   beats its parse stage reads = max(ceil(min(ip_end, n) / 64),
//   min(ceil(n / 64), 2)) (4 cycles for a 62-byte ACK, 20 for a 1082-byte
//   SEND); behind earlier frames it waits its turn (measured on the
//   captures back to back: 20..45 cycles). Its payload follows its
//   descriptor.
// A model of the datapath that hands a frame's descriptor and payload to
// the ERNIC model kRoceRxDescLatency cycles after the frame's last beat
// matches roce_rx exactly (bound 0 cycles, payload included: roce_rx's
// last payload beat is never later than the descriptor); against users'
// RTL the bound is that RTL's own latency minus kRoceRxDescLatency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/datapath/seam.h"
#include "model/roce/packet.h"

namespace ernic::seam {

constexpr unsigned kRoceRxDescLatency = 2;     // cycles, last beat's edge -> m_desc_valid
constexpr unsigned kRoceRxPayloadLatency = 2;  // cycles, last beat's edge -> last payload beat, at most

struct RxOutput {
  bool bypass = false;   // not RoCE: the frame goes to m_byp_* unchanged, no descriptor
  RxDesc desc;           // valid when !bypass
  roce::Bytes payload;   // valid when !bypass: the payload stream's bytes (desc.payload_len)
};

// What roce_rx outputs for one frame (bytes as received, without FCS).
RxOutput roce_rx_ref(const uint8_t* frame, size_t len, bool bad_fcs);
inline RxOutput roce_rx_ref(const roce::Bytes& frame, bool bad_fcs = false) {
  return roce_rx_ref(frame.data(), frame.size(), bad_fcs);
}

// The frame a descriptor describes, for the ERNIC model's validation:
// headers from the descriptor's fields (IPv4 protocol / IPv6 next header
// 17, the extension headers parsed from `ext` by the opcode's table entry),
// `payload`, PadCnt zero bytes of pad, and the received ICRC.
roce::Frame frame_from_rx_desc(const RxDesc& d, const roce::Bytes& payload);

// The frame's first min(hdr_len, frame_len) bytes rebuilt from the
// descriptor (Ethernet, IP, UDP, BTH, extension headers). Equal to the
// received bytes for every RoCE frame, whatever its syndrome (the IPv4
// version/IHL byte comes from `ihl`; the classifier fixed the version and
// protocol). PG332's error buffer stores the first bytes of a dropped frame.
roce::Bytes rx_header_bytes(const RxDesc& d);

// "" when a == b, else the first differing field in the descriptor's bit
// order, as "name: 0x<a> vs 0x<b>" (addresses and ext as hex bytes).
std::string rx_desc_diff(const RxDesc& a, const RxDesc& b);

}  // namespace ernic::seam
