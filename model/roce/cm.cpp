// model/roce: CM MAD encode/decode (IBTA 12.6; offsets in cm.h and the spec).
#include "model/roce/cm.h"

#include <algorithm>
#include <type_traits>

namespace roce::cm {

namespace {

// Byte offsets of the attribute data within the MAD.
constexpr size_t D = kMadHdrLen;

// Private-data slots: offset within the data, size.
constexpr size_t kReqPriv = 140, kReqPrivLen = 92;
constexpr size_t kRepPriv = 36, kRepPrivLen = 196;
constexpr size_t kRtuPriv = 8, kRtuPrivLen = 224;
constexpr size_t kRejAri = 12, kRejAriLen = 72, kRejPriv = 84, kRejPrivLen = 148;
constexpr size_t kDreqPriv = 12, kDreqPrivLen = 220;
constexpr size_t kDrepPriv = 8, kDrepPrivLen = 224;

// Copies at most max bytes of b into p (the rest of the slot stays zero).
void put_bytes(uint8_t* p, const Bytes& b, size_t max) {
  std::copy_n(b.begin(), std::min(b.size(), max), p);
}
Bytes get_bytes(const uint8_t* p, size_t n) { return Bytes(p, p + n); }

void put_gid(uint8_t* p, const Ipv6Addr& g) { std::copy(g.b.begin(), g.b.end(), p); }
Ipv6Addr get_gid(const uint8_t* p) {
  Ipv6Addr g;
  std::copy(p, p + 16, g.b.begin());
  return g;
}

void enc(uint8_t* d, const Req& m) {
  put_be32(d + 0, m.local_comm_id);
  put_be64(d + 8, m.service_id);
  put_be64(d + 16, m.local_ca_guid);
  put_be32(d + 28, m.qkey);
  put_be24(d + 32, m.local_qpn & 0xFFFFFF);
  d[35] = m.resp_resources;
  put_be24(d + 36, m.local_eecn & 0xFFFFFF);
  d[39] = m.initiator_depth;
  // d[40..42]: remote EECN (0 for RC)
  d[43] = uint8_t((m.remote_cm_timeout & 0x1F) << 3 | (m.transport_type & 3) << 1 |
                  (m.e2e_flow_control ? 1 : 0));
  put_be24(d + 44, m.start_psn & 0xFFFFFF);
  d[47] = uint8_t((m.local_cm_timeout & 0x1F) << 3 | (m.retry_count & 7));
  put_be16(d + 48, m.pkey);
  d[50] = uint8_t((m.path_mtu & 0x0F) << 4 | (m.rdc_exists ? 0x08 : 0) | (m.rnr_retry_count & 7));
  d[51] = uint8_t((m.max_cm_retries & 0x0F) << 4 | (m.srq ? 0x08 : 0));
  put_be16(d + 52, m.primary_local_lid);
  put_be16(d + 54, m.primary_remote_lid);
  put_gid(d + 56, m.primary_local_gid);
  put_gid(d + 72, m.primary_remote_gid);
  put_be32(d + 88, (m.primary_flow_label & 0xFFFFF) << 12 | (m.primary_packet_rate & 0x3F));
  d[92] = m.primary_traffic_class;
  d[93] = m.primary_hop_limit;
  d[94] = uint8_t((m.primary_sl & 0x0F) << 4 | (m.primary_subnet_local ? 0x08 : 0));
  d[95] = uint8_t((m.primary_local_ack_timeout & 0x1F) << 3);
  // d[96..139]: alternate path (unused, zero)
  put_bytes(d + kReqPriv, m.private_data, kReqPrivLen);
}

Req dec_req(const uint8_t* d) {
  Req m;
  m.local_comm_id = get_be32(d + 0);
  m.service_id = get_be64(d + 8);
  m.local_ca_guid = get_be64(d + 16);
  m.qkey = get_be32(d + 28);
  m.local_qpn = get_be24(d + 32);
  m.resp_resources = d[35];
  m.local_eecn = get_be24(d + 36);
  m.initiator_depth = d[39];
  m.remote_cm_timeout = d[43] >> 3;
  m.transport_type = (d[43] >> 1) & 3;
  m.e2e_flow_control = d[43] & 1;
  m.start_psn = get_be24(d + 44);
  m.local_cm_timeout = d[47] >> 3;
  m.retry_count = d[47] & 7;
  m.pkey = get_be16(d + 48);
  m.path_mtu = d[50] >> 4;
  m.rdc_exists = d[50] & 0x08;
  m.rnr_retry_count = d[50] & 7;
  m.max_cm_retries = d[51] >> 4;
  m.srq = d[51] & 0x08;
  m.primary_local_lid = get_be16(d + 52);
  m.primary_remote_lid = get_be16(d + 54);
  m.primary_local_gid = get_gid(d + 56);
  m.primary_remote_gid = get_gid(d + 72);
  const uint32_t w = get_be32(d + 88);
  m.primary_flow_label = w >> 12;
  m.primary_packet_rate = w & 0x3F;
  m.primary_traffic_class = d[92];
  m.primary_hop_limit = d[93];
  m.primary_sl = d[94] >> 4;
  m.primary_subnet_local = d[94] & 0x08;
  m.primary_local_ack_timeout = d[95] >> 3;
  m.private_data = get_bytes(d + kReqPriv, kReqPrivLen);
  return m;
}

void enc(uint8_t* d, const Rep& m) {
  put_be32(d + 0, m.local_comm_id);
  put_be32(d + 4, m.remote_comm_id);
  put_be32(d + 8, m.local_qkey);
  put_be24(d + 12, m.local_qpn & 0xFFFFFF);
  put_be24(d + 16, m.local_eecn & 0xFFFFFF);
  put_be24(d + 20, m.start_psn & 0xFFFFFF);
  d[24] = m.resp_resources;
  d[25] = m.initiator_depth;
  d[26] = uint8_t((m.target_ack_delay & 0x1F) << 3 | (m.failover_accepted & 3) << 1 |
                  (m.e2e_flow_control ? 1 : 0));
  d[27] = uint8_t((m.rnr_retry_count & 7) << 5 | (m.srq ? 0x10 : 0));
  put_be64(d + 28, m.local_ca_guid);
  put_bytes(d + kRepPriv, m.private_data, kRepPrivLen);
}

Rep dec_rep(const uint8_t* d) {
  Rep m;
  m.local_comm_id = get_be32(d + 0);
  m.remote_comm_id = get_be32(d + 4);
  m.local_qkey = get_be32(d + 8);
  m.local_qpn = get_be24(d + 12);
  m.local_eecn = get_be24(d + 16);
  m.start_psn = get_be24(d + 20);
  m.resp_resources = d[24];
  m.initiator_depth = d[25];
  m.target_ack_delay = d[26] >> 3;
  m.failover_accepted = (d[26] >> 1) & 3;
  m.e2e_flow_control = d[26] & 1;
  m.rnr_retry_count = d[27] >> 5;
  m.srq = d[27] & 0x10;
  m.local_ca_guid = get_be64(d + 28);
  m.private_data = get_bytes(d + kRepPriv, kRepPrivLen);
  return m;
}

void enc(uint8_t* d, const Rtu& m) {
  put_be32(d + 0, m.local_comm_id);
  put_be32(d + 4, m.remote_comm_id);
  put_bytes(d + kRtuPriv, m.private_data, kRtuPrivLen);
}

Rtu dec_rtu(const uint8_t* d) {
  return Rtu{get_be32(d), get_be32(d + 4), get_bytes(d + kRtuPriv, kRtuPrivLen)};
}

void enc(uint8_t* d, const Rej& m) {
  put_be32(d + 0, m.local_comm_id);
  put_be32(d + 4, m.remote_comm_id);
  d[8] = uint8_t((m.msg_rejected & 3) << 6);
  // ARI length: the field when set, else the size of the ARI given.
  const size_t ari_len = m.ari_length ? m.ari_length : std::min(m.ari.size(), kRejAriLen);
  d[9] = uint8_t((ari_len & 0x7F) << 1);
  put_be16(d + 10, m.reason);
  put_bytes(d + kRejAri, m.ari, kRejAriLen);
  put_bytes(d + kRejPriv, m.private_data, kRejPrivLen);
}

Rej dec_rej(const uint8_t* d) {
  Rej m;
  m.local_comm_id = get_be32(d + 0);
  m.remote_comm_id = get_be32(d + 4);
  m.msg_rejected = d[8] >> 6;
  m.ari_length = d[9] >> 1;
  m.reason = get_be16(d + 10);
  m.ari = get_bytes(d + kRejAri, std::min<size_t>(m.ari_length, kRejAriLen));
  m.private_data = get_bytes(d + kRejPriv, kRejPrivLen);
  return m;
}

void enc(uint8_t* d, const Dreq& m) {
  put_be32(d + 0, m.local_comm_id);
  put_be32(d + 4, m.remote_comm_id);
  put_be24(d + 8, m.remote_qpn & 0xFFFFFF);
  put_bytes(d + kDreqPriv, m.private_data, kDreqPrivLen);
}

Dreq dec_dreq(const uint8_t* d) {
  return Dreq{get_be32(d), get_be32(d + 4), get_be24(d + 8), get_bytes(d + kDreqPriv, kDreqPrivLen)};
}

void enc(uint8_t* d, const Drep& m) {
  put_be32(d + 0, m.local_comm_id);
  put_be32(d + 4, m.remote_comm_id);
  put_bytes(d + kDrepPriv, m.private_data, kDrepPrivLen);
}

Drep dec_drep(const uint8_t* d) {
  return Drep{get_be32(d), get_be32(d + 4), get_bytes(d + kDrepPriv, kDrepPrivLen)};
}

template <class T>
constexpr uint16_t attr_of() {
  if constexpr (std::is_same_v<T, Req>) return attr::REQ;
  else if constexpr (std::is_same_v<T, Rep>) return attr::REP;
  else if constexpr (std::is_same_v<T, Rtu>) return attr::RTU;
  else if constexpr (std::is_same_v<T, Rej>) return attr::REJ;
  else if constexpr (std::is_same_v<T, Dreq>) return attr::DREQ;
  else return attr::DREP;
}

}  // namespace

const char* attr_name(uint16_t id) {
  // The names Wireshark's InfiniBand dissector prints for the CM attributes.
  switch (id) {
    case attr::ClassPortInfo: return "ClassPortInfo";
    case attr::REQ: return "ConnectRequest";
    case attr::MRA: return "MsgRcptAck";
    case attr::REJ: return "ConnectReject";
    case attr::REP: return "ConnectReply";
    case attr::RTU: return "ReadyToUse";
    case attr::DREQ: return "DisconnectRequest";
    case attr::DREP: return "DisconnectReply";
    case attr::SIDR_REQ: return "ServiceIDResReq";
    case attr::SIDR_REP: return "ServiceIDResReqResp";
    case attr::LAP: return "LoadAlternatePath";
    case attr::APR: return "AlternatePathResponse";
  }
  return "Unknown";
}

Bytes encode_mad(const MadHeader& h, const Message& msg) {
  Bytes out(kMadLen, 0);
  uint8_t* p = out.data();
  p[0] = h.base_version;
  p[1] = h.mgmt_class;
  p[2] = h.class_version;
  p[3] = h.method;
  put_be16(p + 4, h.status);
  put_be16(p + 6, h.class_specific);
  put_be64(p + 8, h.tid);
  const uint16_t id = std::visit([](const auto& m) { return attr_of<std::decay_t<decltype(m)>>(); }, msg);
  put_be16(p + 16, id);
  put_be32(p + 20, h.attr_mod);
  std::visit([p](const auto& m) { enc(p + D, m); }, msg);
  return out;
}

std::optional<Mad> decode_mad(const uint8_t* p, size_t len) {
  if (!p || len < kMadLen) return std::nullopt;
  MadHeader h;
  h.base_version = p[0];
  h.mgmt_class = p[1];
  h.class_version = p[2];
  h.method = p[3];
  h.status = get_be16(p + 4);
  h.class_specific = get_be16(p + 6);
  h.tid = get_be64(p + 8);
  h.attr_id = get_be16(p + 16);
  h.attr_mod = get_be32(p + 20);
  if (h.mgmt_class != kMgmtClassCm) return std::nullopt;
  const uint8_t* d = p + D;
  switch (h.attr_id) {
    case attr::REQ: return Mad{h, dec_req(d)};
    case attr::REP: return Mad{h, dec_rep(d)};
    case attr::RTU: return Mad{h, dec_rtu(d)};
    case attr::REJ: return Mad{h, dec_rej(d)};
    case attr::DREQ: return Mad{h, dec_dreq(d)};
    case attr::DREP: return Mad{h, dec_drep(d)};
  }
  return std::nullopt;
}

Bytes encode_ip_hdr(const RdmaCmIpHdr& h) {
  Bytes out(RdmaCmIpHdr::kLen, 0);
  out[0] = h.cma_version;
  out[1] = uint8_t(h.ip_version << 4);
  put_be16(&out[2], h.port);
  put_gid(&out[4], h.src);
  put_gid(&out[20], h.dst);
  return out;
}

std::optional<RdmaCmIpHdr> decode_ip_hdr(const uint8_t* p, size_t len) {
  if (!p || len < RdmaCmIpHdr::kLen) return std::nullopt;
  RdmaCmIpHdr h;
  h.cma_version = p[0];
  h.ip_version = p[1] >> 4;
  if (h.ip_version != 4 && h.ip_version != 6) return std::nullopt;
  h.port = get_be16(p + 2);
  h.src = get_gid(p + 4);
  h.dst = get_gid(p + 20);
  return h;
}

Bytes encode_mr_info(const MrInfo& m) {
  Bytes out(MrInfo::kLen, 0);
  put_be64(&out[0], m.va);
  put_be32(&out[8], m.rkey);
  put_be64(&out[12], m.length);
  return out;
}

std::optional<MrInfo> decode_mr_info(const uint8_t* p, size_t len) {
  if (!p || len < MrInfo::kLen) return std::nullopt;
  return MrInfo{get_be64(p), get_be32(p + 8), get_be64(p + 12)};
}

Bytes make_private_data(const RdmaCmIpHdr& ip, const MrInfo& mr) {
  Bytes out = encode_ip_hdr(ip);
  const Bytes m = encode_mr_info(mr);
  out.insert(out.end(), m.begin(), m.end());
  return out;
}

}  // namespace roce::cm
