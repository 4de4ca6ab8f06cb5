// tb/fuzz: model/roce's CM MADs and rdma_cm private data (cm.h). Byte 0
// picks the mode (the rest: the input):
//   0: a MAD as received. decode_mad never reads outside it; a MAD that
//      decodes re-encodes to the same header (but reserved bytes 18-19),
//      the same private data (byte-exact) and attribute, and
//      decode(encode(decode(x))) == decode(x) (encode_mad's output is
//      canonical); its private data's rdma_cm IP header and MR info re-encode
//      byte-exact (the IP version's low nibble, not carried, aside).
//   1: a message built from the bytes (any of the six, every field, private
//      data and ARI of any length): decode_mad(encode_mad(m)) gives every
//      field back, cut to its width; private data / ARI cut to their slot
//      and padded with zeros.
//   2: rdma_cm private data built from the bytes: make_private_data, then
//      decode_ip_hdr / decode_mr_info give it back.
#include <algorithm>
#include <cstring>
#include <variant>
#include <vector>

#include "model/roce/cm.h"
#include "tb/fuzz/fuzz_check.h"

using namespace roce;
using namespace roce::cm;

namespace {

// The private-data slot of each message (offset within the MAD, size).
struct Slot { size_t off, len; };
Slot priv_slot(uint16_t attr_id) {
  switch (attr_id) {
    case attr::REQ: return {kMadHdrLen + 140, 92};
    case attr::REP: return {kMadHdrLen + 36, 196};
    case attr::RTU: return {kMadHdrLen + 8, 224};
    case attr::REJ: return {kMadHdrLen + 84, 148};
    case attr::DREQ: return {kMadHdrLen + 12, 220};
    case attr::DREP: return {kMadHdrLen + 8, 224};
  }
  FUZZ_CHECK(false, "attribute 0x%04x decoded", attr_id);
  return {0, 0};
}

bool known_attr(uint16_t id) {
  return id == attr::REQ || id == attr::REP || id == attr::RTU || id == attr::REJ || id == attr::DREQ ||
         id == attr::DREP;
}

const Bytes& priv_of(const Message& m) {
  return std::visit([](const auto& x) -> const Bytes& { return x.private_data; }, m);
}

Bytes slot_bytes(const Bytes& given, size_t len) {
  Bytes b(len, 0);
  std::copy_n(given.begin(), std::min(given.size(), len), b.begin());
  return b;
}

void check_private_data(const Bytes& pd) {
  if (const auto ip = decode_ip_hdr(pd.data(), pd.size())) {
    FUZZ_CHECK(ip->ip_version == 4 || ip->ip_version == 6, "IP version %u", ip->ip_version);
    Bytes want(pd.begin(), pd.begin() + RdmaCmIpHdr::kLen);
    want[1] &= 0xF0;
    FUZZ_CHECK(encode_ip_hdr(*ip) == want, "rdma_cm IP header does not re-encode");
    if (const auto mr = decode_mr_info(pd.data() + RdmaCmIpHdr::kLen, pd.size() - RdmaCmIpHdr::kLen)) {
      const Bytes again = encode_mr_info(*mr);
      FUZZ_CHECK(std::equal(again.begin(), again.end(), pd.begin() + RdmaCmIpHdr::kLen), "MR info does not re-encode");
    }
  } else if (pd.size() >= RdmaCmIpHdr::kLen) {
    FUZZ_CHECK((pd[1] >> 4) != 4 && (pd[1] >> 4) != 6, "a valid IP header refused");
  }
}

void received(const uint8_t* p, size_t n) {
  const std::optional<Mad> m = decode_mad(p, n);
  if (!m) {
    FUZZ_CHECK(n < kMadLen || p[1] != kMgmtClassCm || !known_attr(uint16_t(p[16] << 8 | p[17])), "a CM MAD refused");
    return;
  }
  FUZZ_CHECK(n >= kMadLen, "decoded %zu bytes", n);
  const Bytes e = encode_mad(m->hdr, m->msg);
  FUZZ_CHECK(e.size() == kMadLen, "encoded %zu bytes", e.size());
  FUZZ_CHECK(std::memcmp(e.data(), p, 18) == 0 && std::memcmp(e.data() + 20, p + 20, 4) == 0,
             "MAD header does not re-encode");
  const Slot s = priv_slot(m->hdr.attr_id);
  FUZZ_CHECK(std::memcmp(e.data() + s.off, p + s.off, s.len) == 0, "private data does not re-encode");
  FUZZ_CHECK(priv_of(m->msg).size() == s.len, "private data %zu bytes, slot %zu", priv_of(m->msg).size(), s.len);
  const std::optional<Mad> m2 = decode_mad(e.data(), e.size());
  FUZZ_CHECK(m2 && m2->msg.index() == m->msg.index(), "the re-encoded MAD does not decode alike");
  FUZZ_CHECK(encode_mad(m2->hdr, m2->msg) == e, "encode_mad's output is not canonical");
  if (const auto* r = std::get_if<Rej>(&m->msg))
    FUZZ_CHECK(r->ari.size() == std::min<size_t>(r->ari_length, 72), "REJ ARI %zu bytes, length %u", r->ari.size(),
               r->ari_length);
  check_private_data(priv_of(m->msg));
}

}  // namespace

namespace {

void built(ernic_fuzz::Input& in) {
  MadHeader h;
  h.base_version = in.u8();
  h.mgmt_class = kMgmtClassCm;
  h.class_version = in.u8();
  h.method = in.u8();
  h.status = in.u16();
  h.class_specific = in.u16();
  h.tid = in.u64();
  h.attr_mod = in.u32();
  const int kind = in.u8() % 6;
  const size_t max_pd = 260;
  Message msg;
  switch (kind) {
    case 0: {
      Req m;
      m.local_comm_id = in.u32(); m.service_id = in.u64(); m.local_ca_guid = in.u64(); m.qkey = in.u32();
      m.local_qpn = in.u32(); m.resp_resources = in.u8(); m.local_eecn = in.u32(); m.initiator_depth = in.u8();
      m.remote_cm_timeout = in.u8(); m.transport_type = in.u8(); m.e2e_flow_control = in.flag();
      m.start_psn = in.u32(); m.local_cm_timeout = in.u8(); m.retry_count = in.u8(); m.pkey = in.u16();
      m.path_mtu = in.u8(); m.rdc_exists = in.flag(); m.rnr_retry_count = in.u8(); m.max_cm_retries = in.u8();
      m.srq = in.flag(); m.primary_local_lid = in.u16(); m.primary_remote_lid = in.u16();
      for (auto& b : m.primary_local_gid.b) b = in.u8();
      for (auto& b : m.primary_remote_gid.b) b = in.u8();
      m.primary_flow_label = in.u32(); m.primary_packet_rate = in.u8(); m.primary_traffic_class = in.u8();
      m.primary_hop_limit = in.u8(); m.primary_sl = in.u8(); m.primary_subnet_local = in.flag();
      m.primary_local_ack_timeout = in.u8(); m.private_data = in.bytes(max_pd);
      msg = m;
      break;
    }
    case 1: {
      Rep m;
      m.local_comm_id = in.u32(); m.remote_comm_id = in.u32(); m.local_qkey = in.u32(); m.local_qpn = in.u32();
      m.local_eecn = in.u32(); m.start_psn = in.u32(); m.resp_resources = in.u8(); m.initiator_depth = in.u8();
      m.target_ack_delay = in.u8(); m.failover_accepted = in.u8(); m.e2e_flow_control = in.flag();
      m.rnr_retry_count = in.u8(); m.srq = in.flag(); m.local_ca_guid = in.u64(); m.private_data = in.bytes(max_pd);
      msg = m;
      break;
    }
    case 2: msg = Rtu{in.u32(), in.u32(), in.bytes(max_pd)}; break;
    case 3: {
      Rej m;
      m.local_comm_id = in.u32(); m.remote_comm_id = in.u32(); m.msg_rejected = in.u8(); m.ari_length = in.u8();
      m.reason = in.u16(); m.ari = in.bytes(100); m.private_data = in.bytes(max_pd);
      msg = m;
      break;
    }
    case 4: msg = Dreq{in.u32(), in.u32(), in.u32(), in.bytes(max_pd)}; break;
    default: msg = Drep{in.u32(), in.u32(), in.bytes(max_pd)}; break;
  }
  const Bytes e = encode_mad(h, msg);
  FUZZ_CHECK(e.size() == kMadLen, "encoded %zu bytes", e.size());
  const std::optional<Mad> d = decode_mad(e.data(), e.size());
  FUZZ_CHECK(d, "decode_mad(encode_mad(m)) failed");
  FUZZ_CHECK(d->msg.index() == msg.index(), "message type");
  const MadHeader& g = d->hdr;
  FUZZ_CHECK(g.base_version == h.base_version && g.mgmt_class == h.mgmt_class && g.class_version == h.class_version &&
                 g.method == h.method && g.status == h.status && g.class_specific == h.class_specific &&
                 g.tid == h.tid && g.attr_mod == h.attr_mod,
             "MAD header");
  const Slot s = priv_slot(g.attr_id);
  FUZZ_CHECK(priv_of(d->msg) == slot_bytes(priv_of(msg), s.len), "private data");
  constexpr uint32_t k24 = 0xFFFFFF;
  if (const auto* a = std::get_if<Req>(&msg)) {
    const Req& b = std::get<Req>(d->msg);
    FUZZ_CHECK(b.local_comm_id == a->local_comm_id && b.service_id == a->service_id &&
                   b.local_ca_guid == a->local_ca_guid && b.qkey == a->qkey && b.local_qpn == (a->local_qpn & k24) &&
                   b.resp_resources == a->resp_resources && b.local_eecn == (a->local_eecn & k24) &&
                   b.initiator_depth == a->initiator_depth && b.remote_cm_timeout == (a->remote_cm_timeout & 0x1F) &&
                   b.transport_type == (a->transport_type & 3) && b.e2e_flow_control == a->e2e_flow_control &&
                   b.start_psn == (a->start_psn & k24) && b.local_cm_timeout == (a->local_cm_timeout & 0x1F) &&
                   b.retry_count == (a->retry_count & 7) && b.pkey == a->pkey && b.path_mtu == (a->path_mtu & 0xF) &&
                   b.rdc_exists == a->rdc_exists && b.rnr_retry_count == (a->rnr_retry_count & 7) &&
                   b.max_cm_retries == (a->max_cm_retries & 0xF) && b.srq == a->srq,
               "REQ fields");
    FUZZ_CHECK(b.primary_local_lid == a->primary_local_lid && b.primary_remote_lid == a->primary_remote_lid &&
                   b.primary_local_gid == a->primary_local_gid && b.primary_remote_gid == a->primary_remote_gid &&
                   b.primary_flow_label == (a->primary_flow_label & 0xFFFFF) &&
                   b.primary_packet_rate == (a->primary_packet_rate & 0x3F) &&
                   b.primary_traffic_class == a->primary_traffic_class &&
                   b.primary_hop_limit == a->primary_hop_limit && b.primary_sl == (a->primary_sl & 0xF) &&
                   b.primary_subnet_local == a->primary_subnet_local &&
                   b.primary_local_ack_timeout == (a->primary_local_ack_timeout & 0x1F),
               "REQ primary path");
  } else if (const auto* a = std::get_if<Rep>(&msg)) {
    const Rep& b = std::get<Rep>(d->msg);
    FUZZ_CHECK(b.local_comm_id == a->local_comm_id && b.remote_comm_id == a->remote_comm_id &&
                   b.local_qkey == a->local_qkey && b.local_qpn == (a->local_qpn & k24) &&
                   b.local_eecn == (a->local_eecn & k24) && b.start_psn == (a->start_psn & k24) &&
                   b.resp_resources == a->resp_resources && b.initiator_depth == a->initiator_depth &&
                   b.target_ack_delay == (a->target_ack_delay & 0x1F) &&
                   b.failover_accepted == (a->failover_accepted & 3) && b.e2e_flow_control == a->e2e_flow_control &&
                   b.rnr_retry_count == (a->rnr_retry_count & 7) && b.srq == a->srq &&
                   b.local_ca_guid == a->local_ca_guid,
               "REP fields");
  } else if (const auto* a = std::get_if<Rtu>(&msg)) {
    const Rtu& b = std::get<Rtu>(d->msg);
    FUZZ_CHECK(b.local_comm_id == a->local_comm_id && b.remote_comm_id == a->remote_comm_id, "RTU fields");
  } else if (const auto* a = std::get_if<Rej>(&msg)) {
    const Rej& b = std::get<Rej>(d->msg);
    FUZZ_CHECK(b.local_comm_id == a->local_comm_id && b.remote_comm_id == a->remote_comm_id &&
                   b.msg_rejected == (a->msg_rejected & 3) && b.reason == a->reason,
               "REJ fields");
    const size_t len = (a->ari_length ? a->ari_length : std::min<size_t>(a->ari.size(), 72)) & 0x7F;
    FUZZ_CHECK(b.ari_length == len, "REJ ARI length %u, want %zu", b.ari_length, len);
    const Bytes slot = slot_bytes(a->ari, 72);
    FUZZ_CHECK(b.ari == Bytes(slot.begin(), slot.begin() + std::min<size_t>(len, 72)), "REJ ARI");
  } else if (const auto* a = std::get_if<Dreq>(&msg)) {
    const Dreq& b = std::get<Dreq>(d->msg);
    FUZZ_CHECK(b.local_comm_id == a->local_comm_id && b.remote_comm_id == a->remote_comm_id &&
                   b.remote_qpn == (a->remote_qpn & k24),
               "DREQ fields");
  } else {
    const Drep& x = std::get<Drep>(msg);
    const Drep& y = std::get<Drep>(d->msg);
    FUZZ_CHECK(y.local_comm_id == x.local_comm_id && y.remote_comm_id == x.remote_comm_id, "DREP fields");
  }
  received(e.data(), e.size());
}

void private_data(ernic_fuzz::Input& in) {
  RdmaCmIpHdr ip;
  ip.cma_version = in.u8();
  ip.ip_version = in.flag() ? 6 : 4;
  ip.port = in.u16();
  for (auto& b : ip.src.b) b = in.u8();
  for (auto& b : ip.dst.b) b = in.u8();
  MrInfo mr{in.u64(), in.u32(), in.u64()};
  const Bytes pd = make_private_data(ip, mr);
  FUZZ_CHECK(pd.size() == RdmaCmIpHdr::kLen + MrInfo::kLen, "private data %zu bytes", pd.size());
  const auto ip2 = decode_ip_hdr(pd.data(), pd.size());
  FUZZ_CHECK(ip2 && ip2->cma_version == ip.cma_version && ip2->ip_version == ip.ip_version && ip2->port == ip.port &&
                 ip2->src == ip.src && ip2->dst == ip.dst,
             "IP header");
  const auto mr2 = decode_mr_info(pd.data() + RdmaCmIpHdr::kLen, MrInfo::kLen);
  FUZZ_CHECK(mr2 && mr2->va == mr.va && mr2->rkey == mr.rkey && mr2->length == mr.length, "MR info");
  FUZZ_CHECK(!decode_ip_hdr(pd.data(), RdmaCmIpHdr::kLen - 1) && !decode_mr_info(pd.data(), MrInfo::kLen - 1),
             "a short buffer decodes");
  // And the rest of the input as received private data.
  const Bytes rest = in.rest();
  check_private_data(rest);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> b(data + 1, data + size);
  ernic_fuzz::Input in(b.data(), b.size());
  switch (data[0] % 3) {
    case 0: received(b.empty() ? nullptr : b.data(), b.size()); break;
    case 1: built(in); break;
    default: private_data(in); break;
  }
  return 0;
}
