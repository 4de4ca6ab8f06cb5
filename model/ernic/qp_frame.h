// model/ernic: a QP's headers as its registers set them (PG332: MACXADD*,
// IPv4XADD / IPv6XADD1..4, XRNICCONF UDP source port; per QP:
// MACDESADD*i, IPDESADDR1..4i, QPADVCONFi TOS/TTL/P_Key, DESTQPCONFi,
// QPCONFi[7] IPv6). The WQE processor starts every frame it sends from
// this template; the RX packet handler checks arriving frames against it.
#pragma once
#include <cstdint>

#include "model/regs/register_file.h"
#include "model/roce/packet.h"

namespace ernic {

// The node's IPv6 address (IPv6XADD1..4).
roce::Ipv6Addr local_ip6(const regs::RegisterFile& r);
// Ethernet / IP / UDP / BTH of QP qpn, no opcode, PSN or payload yet.
roce::Frame frame_template(const regs::RegisterFile& r, uint32_t qpn);

}  // namespace ernic
