// model/trace: a real capture read whole (pcap or pcapng, through
// libpcap, nanosecond timestamps) and reduced to what the RoCE decoder
// reads: Ethernet frames (LINKTYPE_ETHERNET 1; Linux cooked 113, its MACs
// zero; ERF 197 Ethernet records) or native InfiniBand packets (247; ERF
// InfiniBand records). `ernic-sim pcap decode / lint / replay` and the
// scenario step `replay` (model/replay) read captures with it. Plain C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ernic {

// One captured frame: an Ethernet frame or a native IB packet.
struct CaptureFrame {
  uint64_t n = 0;        // frame number, from 1 (as tshark counts)
  uint64_t t_ns = 0;     // since the first frame
  std::vector<uint8_t> bytes;
  bool ib = false;       // native InfiniBand (else Ethernet)
  std::string skip;      // not decodable here (an ERF record type, ...): why
};

struct Capture {
  int linktype = 0;
  std::vector<CaptureFrame> frames;
};

// The whole file; nullopt with *why set when it cannot be used (no such
// file, a directory, not a capture libpcap reads, another link type, a
// read error).
std::optional<Capture> read_capture(const std::string& path, std::string* why);

}  // namespace ernic
