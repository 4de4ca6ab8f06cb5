// model/ernic: the QP frame template (see qp_frame.h).
#include "model/ernic/qp_frame.h"

namespace ernic {

namespace R = regs;
namespace F = regs::f;

roce::Ipv6Addr local_ip6(const regs::RegisterFile& r) {
  return roce::Ipv6Addr::from_pg332_words(r.g(R::g::IPv6XADD1), r.g(R::g::IPv6XADD2), r.g(R::g::IPv6XADD3),
                                          r.g(R::g::IPv6XADD4));
}

roce::Frame frame_template(const regs::RegisterFile& r, uint32_t n) {
  roce::Frame f;
  auto mac = [](uint32_t msb, uint32_t lsb) {
    roce::MacAddr m;
    m.b = {uint8_t(msb >> 8), uint8_t(msb), uint8_t(lsb >> 24), uint8_t(lsb >> 16), uint8_t(lsb >> 8),
           uint8_t(lsb)};
    return m;
  };
  f.eth.src = mac(r.g(R::g::MACXADDMSB), r.g(R::g::MACXADDLSB));
  f.eth.dst = mac(r.q(n, R::q::MACDESADDMSBi), r.q(n, R::q::MACDESADDLSBi));
  const uint32_t adv = r.q(n, R::q::QPADVCONFi);
  f.ip4.src.v = r.g(R::g::IPv4XADD);
  f.ip4.dst.v = r.q(n, R::q::IPDESADDR1i);
  f.ip4.tos = uint8_t((adv & 0x3F) << 2);
  f.ip4.ttl = (adv >> 8) & 0xFF ? uint8_t(adv >> 8) : 64;  // assumption A-ERNIC-4
  if (r.q(n, R::q::QPCONFi) & F::QPCONF_IPV6) {
    // QPCONFi[7]: IPv6 (next header 17; traffic class and hop limit as the
    // IPv4 TOS and TTL above, flow label 0: assumption A-IPV6-1).
    f.ipv6 = true;
    f.eth.ethertype = roce::kEtherTypeIpv6;
    f.ip6.src = local_ip6(r);
    f.ip6.dst = roce::Ipv6Addr::from_pg332_words(r.q(n, R::q::IPDESADDR1i), r.q(n, R::q::IPDESADDR2i),
                                                 r.q(n, R::q::IPDESADDR3i), r.q(n, R::q::IPDESADDR4i));
    f.ip6.traffic_class = f.ip4.tos;
    f.ip6.hop_limit = f.ip4.ttl;
  }
  f.udp.sport = uint16_t(r.g(R::g::XRNICCONF) >> r.layout().udp_sport_shift);
  f.bth.pkey = (adv >> 16) ? uint16_t(adv >> 16) : 0xFFFF;
  f.bth.dest_qp = r.q(n, R::q::DESTQPCONFi) & 0xFFFFFF;
  return f;
}

}  // namespace ernic
