// model/roce: InfiniBand Communication Management MADs carried on QP1
// (IBTA chapter 12; MAD header 13.4.2). CM MADs are 256 bytes: a 24-byte
// common MAD header and 232 bytes of attribute data. On RoCEv2 they travel
// as UD SEND_ONLY (0x64) to DestQP 1 with P_Key 0xFFFF and a DETH carrying
// Q_Key 0x80010000 and SrcQP 1. Byte offsets below are within the 232-byte
// data (see ../shared/spec/ernic-pg332.md §9, "CM MADs").
#pragma once
#include <cstdint>
#include <optional>
#include <variant>

#include "model/roce/types.h"

namespace roce::cm {

constexpr size_t kMadLen = 256, kMadHdrLen = 24, kMadDataLen = 232;
constexpr uint8_t kBaseVersion = 1, kMgmtClassCm = 0x07, kClassVersion = 2, kMethodSend = 0x03;
constexpr uint32_t kGsiQkey = 0x80010000;

namespace attr {
constexpr uint16_t ClassPortInfo = 0x0001, REQ = 0x0010, MRA = 0x0011, REJ = 0x0012, REP = 0x0013,
                   RTU = 0x0014, DREQ = 0x0015, DREP = 0x0016, SIDR_REQ = 0x0017, SIDR_REP = 0x0018,
                   LAP = 0x0019, APR = 0x001A;
}
const char* attr_name(uint16_t attr_id);  // "ConnectRequest", ... as tshark names them

struct MadHeader {
  uint8_t base_version = kBaseVersion;
  uint8_t mgmt_class = kMgmtClassCm;
  uint8_t class_version = kClassVersion;
  uint8_t method = kMethodSend;     // R bit [7] | method [6:0]
  uint16_t status = 0;
  uint16_t class_specific = 0;
  uint64_t tid = 0;
  uint16_t attr_id = 0;
  uint32_t attr_mod = 0;
};

// rdma_cm's IP-addressing header at the start of REQ private data (36 B):
// cma_version(1) = 0, ip_version(1) = 4<<4 or 6<<4, port(2), src(16), dst(16);
// IPv4 addresses occupy the last 4 bytes of each 16-byte slot.
struct RdmaCmIpHdr {
  uint8_t cma_version = 0;
  uint8_t ip_version = 4;      // 4 or 6 (stored as ip_version << 4)
  uint16_t port = 0;
  Ipv6Addr src, dst;           // for IPv4: bytes 12..15 hold the address, rest zero
  static constexpr size_t kLen = 36;
};

// The simulator's MR advertisement, following the IP CM header in REQ and
// REP private data (both sides advertise one MR): VA(8) R_Key(4) length(8),
// big-endian. 20 bytes.
struct MrInfo {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint64_t length = 0;
  static constexpr size_t kLen = 20;
};

struct Req {
  uint32_t local_comm_id = 0;
  uint64_t service_id = 0;         // rdma_cm TCP port space: 0x0000000001060000 | port
  uint64_t local_ca_guid = 0;
  uint32_t qkey = 0;
  uint32_t local_qpn = 0;          // 24 bits
  uint8_t resp_resources = 0;
  uint32_t local_eecn = 0;         // 24 bits
  uint8_t initiator_depth = 0;
  uint8_t remote_cm_timeout = 0;   // 5 bits
  uint8_t transport_type = 0;      // 2 bits: 0 RC
  bool e2e_flow_control = false;
  uint32_t start_psn = 0;          // 24 bits
  uint8_t local_cm_timeout = 0;    // 5 bits
  uint8_t retry_count = 0;         // 3 bits
  uint16_t pkey = 0xFFFF;
  uint8_t path_mtu = 0;            // 4 bits, IB enum: 1=256 2=512 3=1024 4=2048 5=4096
  bool rdc_exists = false;
  uint8_t rnr_retry_count = 0;     // 3 bits
  uint8_t max_cm_retries = 0;      // 4 bits
  bool srq = false;
  // primary path
  uint16_t primary_local_lid = 0xFFFF, primary_remote_lid = 0xFFFF;
  Ipv6Addr primary_local_gid, primary_remote_gid;
  uint32_t primary_flow_label = 0; // 20 bits
  uint8_t primary_packet_rate = 0; // 6 bits
  uint8_t primary_traffic_class = 0;
  uint8_t primary_hop_limit = 0;
  uint8_t primary_sl = 0;          // 4 bits
  bool primary_subnet_local = false;
  uint8_t primary_local_ack_timeout = 0;  // 5 bits
  Bytes private_data;              // up to 92 B
};

struct Rep {
  uint32_t local_comm_id = 0;
  uint32_t remote_comm_id = 0;
  uint32_t local_qkey = 0;
  uint32_t local_qpn = 0;          // 24 bits
  uint32_t local_eecn = 0;         // 24 bits
  uint32_t start_psn = 0;          // 24 bits
  uint8_t resp_resources = 0;
  uint8_t initiator_depth = 0;
  uint8_t target_ack_delay = 0;    // 5 bits
  uint8_t failover_accepted = 0;   // 2 bits
  bool e2e_flow_control = false;
  uint8_t rnr_retry_count = 0;     // 3 bits
  bool srq = false;
  uint64_t local_ca_guid = 0;
  Bytes private_data;              // up to 196 B
};

struct Rtu { uint32_t local_comm_id = 0, remote_comm_id = 0; Bytes private_data; /* up to 224 B */ };

struct Rej {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint8_t msg_rejected = 0;        // 2 bits: 0 REQ, 1 REP, 2 other
  uint8_t ari_length = 0;          // 7 bits
  uint16_t reason = 0;             // e.g. 28 consumer reject
  Bytes ari;                       // up to 72 B
  Bytes private_data;              // up to 148 B
};

struct Dreq { uint32_t local_comm_id = 0, remote_comm_id = 0; uint32_t remote_qpn = 0; Bytes private_data; };
struct Drep { uint32_t local_comm_id = 0, remote_comm_id = 0; Bytes private_data; };

using Message = std::variant<Req, Rep, Rtu, Rej, Dreq, Drep>;

// 256-byte MAD for a message (header attr_id set from the message type).
Bytes encode_mad(const MadHeader& hdr, const Message& msg);
struct Mad { MadHeader hdr; Message msg; };
// std::nullopt when len < 256, the class is not CM, or the attribute is not
// one of the six above.
std::optional<Mad> decode_mad(const uint8_t* mad, size_t len);

Bytes encode_ip_hdr(const RdmaCmIpHdr& h);
std::optional<RdmaCmIpHdr> decode_ip_hdr(const uint8_t* p, size_t len);
Bytes encode_mr_info(const MrInfo& m);
std::optional<MrInfo> decode_mr_info(const uint8_t* p, size_t len);

// Private data = IP CM header followed by MrInfo (56 bytes).
Bytes make_private_data(const RdmaCmIpHdr& ip, const MrInfo& mr);

}  // namespace roce::cm
