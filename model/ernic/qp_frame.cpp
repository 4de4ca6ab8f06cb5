// model/ernic: the QP frame template (see qp_frame.h).
#include "model/ernic/qp_frame.h"

namespace ernic {

namespace R = regs;
namespace FLD = regs::fld;

roce::Ipv6Addr local_ip6(const regs::RegisterFile& r) {
  return roce::Ipv6Addr::from_pg332_words(r.g(R::g::IPv6XADD1), r.g(R::g::IPv6XADD2), r.g(R::g::IPv6XADD3),
                                          r.g(R::g::IPv6XADD4));
}

roce::Frame frame_template(const regs::RegisterFile& r, uint32_t n) {
  roce::Frame f;
  f.eth.src = roce::MacAddr::from_pg332_words(r.g(R::g::MACXADDMSB), r.g(R::g::MACXADDLSB));
  f.eth.dst = roce::MacAddr::from_pg332_words(r.q(n, R::q::MACDESADDMSBi), r.q(n, R::q::MACDESADDLSBi));
  const uint32_t adv = r.q(n, R::q::QPADVCONFi);
  f.ip4.src.v = r.g(R::g::IPv4XADD);
  f.ip4.dst.v = r.q(n, R::q::IPDESADDR1i);
  f.ip4.tos = uint8_t(FLD::QPADVCONFi_TRAFFIC_CLASS.get(adv) << 2);  // the DSCP, ECN 0
  const uint32_t ttl = FLD::QPADVCONFi_TTL.get(adv);
  f.ip4.ttl = ttl ? uint8_t(ttl) : 64;  // assumption A-ERNIC-4
  if (r.q(n, R::q::QPCONFi) & FLD::QPCONFi_IPV6.bit()) {
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
  f.udp.sport = uint16_t(r.layout().udp_sport.get(r.g(R::g::XRNICCONF)));
  const uint32_t pkey = FLD::QPADVCONFi_PKEY.get(adv);
  f.bth.pkey = pkey ? uint16_t(pkey) : roce::kDefaultPkey;
  f.bth.dest_qp = FLD::DESTQPCONFi_QPN.get(r.q(n, R::q::DESTQPCONFi));
  return f;
}

}  // namespace ernic
