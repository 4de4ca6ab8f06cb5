// model/bridge: SimBricks Ethernet messages to and from bytes (eth_proto.h).
#include "model/bridge/eth_proto.h"

#include <cstring>
#include <stdexcept>

namespace ernic::bridge {

namespace {
constexpr char kSyncMagic[4] = {'E', 'R', 'N', '1'};
constexpr char kControlMagic[4] = {'E', 'R', 'N', 'C'};
bool control_kind_known(uint8_t k) { return k >= NetControl::StepEnd && k <= NetControl::StepUnderway; }
}  // namespace

std::vector<uint8_t> encode_net(const NetMsg& m) {
  if (m.kind != NetMsg::Packet && !m.frame.empty())
    throw std::invalid_argument("a SimBricks SYNC or TERMINATE carries no frame");
  if (m.frame.size() > kNetMaxFrame)
    throw std::invalid_argument("a SimBricks PACKET carries at most 65535 bytes, not " + std::to_string(m.frame.size()));
  if (m.kind == NetMsg::Control) {
    if (!control_kind_known(m.control.kind))
      throw std::invalid_argument("a CONTROL of unknown kind " + std::to_string(int(m.control.kind)));
    if (m.control.data.size() > kNetMaxFrame)
      throw std::invalid_argument("a CONTROL carries at most 65535 bytes, not " +
                                  std::to_string(m.control.data.size()));
    std::vector<uint8_t> b = header(kNetTypeControl, m.timestamp_ps, m.control.data.size());
    put_le(b, 0, m.control.data.size(), 2);
    std::memcpy(b.data() + 40, kControlMagic, 4);
    b[4] = uint8_t(m.control.kind);
    b[5] = m.control.node;
    put_le(b, 8, m.control.time_ps, 8);
    put_le(b, 16, m.control.id, 8);
    put_le(b, 24, m.control.a, 8);
    put_le(b, 32, m.control.b, 8);
    std::copy(m.control.data.begin(), m.control.data.end(), b.begin() + kHeaderBytes);
    return b;
  }
  std::vector<uint8_t> b = header(uint8_t(m.kind), m.timestamp_ps, m.frame.size());
  if (m.kind == NetMsg::Packet) {
    put_le(b, 0, m.frame.size(), 2);
    b[2] = m.port;
    b[3] = m.bad_fcs ? 1 : 0;
    std::copy(m.frame.begin(), m.frame.end(), b.begin() + kHeaderBytes);
  }
  if (m.kind == NetMsg::Sync && m.sync_info) {
    std::memcpy(b.data(), kSyncMagic, 4);
    put_le(b, 8, m.sync_info->next_ps, 8);
    put_le(b, 16, m.sync_info->acked, 8);
    put_le(b, 24, m.sync_info->lookahead_ps, 8);
    b[4] = uint8_t((m.sync_info->ctl_ps ? 1 : 0) | (m.sync_info->lax_ps ? 2 : 0) |
                   (m.sync_info->lax_ps && m.sync_info->lax_error ? 4 : 0));
    put_le(b, 32, m.sync_info->ctl_ps.value_or(0), 8);
    put_le(b, 40, m.sync_info->lax_ps.value_or(0), 8);
  }
  return b;
}

std::optional<NetMsg> decode_net(const uint8_t* p, size_t n, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<NetMsg> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (auto bad = check_stream_header(p, n)) return fail(*bad);
  const uint8_t type = p[kOwnTypeOffset] & kTypeMask;
  NetMsg m;
  m.timestamp_ps = get_le(p, kTimestampOffset, 8);
  const size_t data = n - kHeaderBytes;
  switch (type) {
    case kTypeSync:
    case kTypeTerminate:
      if (data) return fail(std::string(type == kTypeSync ? "SYNC" : "TERMINATE") + " with " + std::to_string(data) +
                            " bytes after its header");
      m.kind = NetMsg::Kind(type);
      if (type == kTypeSync && std::memcmp(p, kSyncMagic, 4) == 0) {
        m.sync_info = NetSyncInfo{get_le(p, 8, 8), get_le(p, 16, 8), get_le(p, 24, 8), std::nullopt, std::nullopt};
        if (p[4] & 1) m.sync_info->ctl_ps = get_le(p, 32, 8);
        if (p[4] & 2) m.sync_info->lax_ps = get_le(p, 40, 8);
        m.sync_info->lax_error = (p[4] & 6) == 6;  // an error had is a given lax_ps
      }
      return m;
    case kNetTypePacket: {
      const size_t len = size_t(get_le(p, 0, 2));
      if (len != data)
        return fail("PACKET says len " + std::to_string(len) + " but carries " + std::to_string(data) + " bytes");
      m.kind = NetMsg::Packet;
      m.port = p[2];
      m.bad_fcs = (p[3] & 1) != 0;
      m.frame.assign(p + kHeaderBytes, p + n);
      return m;
    }
    case kNetTypeControl:
      if (std::memcmp(p + 40, kControlMagic, 4) != 0) return fail("CONTROL without its \"ERNC\" magic");
      if (size_t(get_le(p, 0, 2)) != data)
        return fail("CONTROL says len " + std::to_string(get_le(p, 0, 2)) + " but carries " + std::to_string(data) +
                    " bytes");
      if (!control_kind_known(p[4])) return fail("CONTROL of unknown kind " + std::to_string(int(p[4])));
      m.kind = NetMsg::Control;
      m.control.kind = NetControl::Kind(p[4]);
      m.control.node = p[5];
      m.control.time_ps = get_le(p, 8, 8);
      m.control.id = get_le(p, 16, 8);
      m.control.a = get_le(p, 24, 8);
      m.control.b = get_le(p, 32, 8);
      m.control.data.assign(p + kHeaderBytes, p + n);
      return m;
    default:
      return fail("unknown Ethernet message type " + type_hex(type));
  }
}

std::vector<uint8_t> encode_net_listener_intro(uint64_t entry_bytes, uint64_t flags) {
  ListenerIntro li;
  li.flags = flags;
  li.l2c.elen = li.c2l.elen = entry_bytes;
  li.proto = kProtoIdNet;
  return encode_listener_intro(li, {});
}

std::vector<uint8_t> encode_net_connecter_intro(uint64_t flags) {
  ConnecterIntro ci;
  ci.flags = flags;
  ci.proto = kProtoIdNet;
  return encode_connecter_intro(ci, {});
}

std::optional<ListenerIntro> decode_net_listener_intro(const uint8_t* p, size_t n, std::string* why) {
  size_t at = 0;
  return decode_listener_intro(p, n, kProtoIdNet, "Ethernet", 0, &at, why);
}

std::optional<ConnecterIntro> decode_net_connecter_intro(const uint8_t* p, size_t n, std::string* why) {
  size_t at = 0;
  return decode_connecter_intro(p, n, kProtoIdNet, "Ethernet", 0, &at, why);
}

}  // namespace ernic::bridge
