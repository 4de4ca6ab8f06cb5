// model/link: the packet classification in front of ERNIC.
//
// ERNIC does not tell RoCE from other traffic itself (PG332 section 8): the
// RX stream `roce_cmac_s_axis` carries RoCE packets only, other frames go
// to `non_roce_cmac_s_axis` and on to the host through the bypass DMA, and
// the host's non-RoCE frames (`non_roce_dma_s_axis`) are merged into
// `cmac_m_axis`. The reference designs classify on the UDP destination
// port 4791 (RoCEv2, IBTA Annex A17). This is that classifier: untagged
// Ethernet II; IPv4 (any IHL) or IPv6 (no extension headers) carrying UDP
// to port 4791 is RoCE, everything else (ARP, LLDP, other UDP ports, TCP,
// VLAN-tagged frames) goes to the bypass path untouched.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ernic {

inline bool is_rocev2_frame(const uint8_t* d, size_t n) {
  constexpr uint16_t kRoceV2Port = 4791;
  if (n < 14) return false;
  const uint16_t ethertype = uint16_t(d[12] << 8 | d[13]);
  size_t udp = 0;
  if (ethertype == 0x0800) {
    if (n < 14 + 20 || (d[14] >> 4) != 4 || d[14 + 9] != 17) return false;
    udp = 14 + size_t(d[14] & 0x0F) * 4;
  } else if (ethertype == 0x86DD) {
    if (n < 14 + 40 || (d[14] >> 4) != 6 || d[14 + 6] != 17) return false;
    udp = 14 + 40;
  } else {
    return false;
  }
  if (n < udp + 8) return false;
  return uint16_t(d[udp + 2] << 8 | d[udp + 3]) == kRoceV2Port;
}

}  // namespace ernic
