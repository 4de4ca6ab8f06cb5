// model/bridge: SimBricks PCIe messages to and from bytes (pcie_proto.h).
#include "model/bridge/pcie_proto.h"

#include <cstdio>
#include <stdexcept>

namespace ernic::bridge {
namespace {

void put(std::vector<uint8_t>& b, size_t at, uint64_t v, int bytes) { put_le(b, at, v, bytes); }
uint64_t get(const uint8_t* p, size_t at, int bytes) { return get_le(p, at, bytes); }

bool carries_data(MsgType t) {
  return t == MsgType::H2DWrite || t == MsgType::H2DWritePosted || t == MsgType::D2HWrite ||
         t == MsgType::H2DReadComp || t == MsgType::D2HReadComp;
}
bool has_addr(MsgType t) {
  return t == MsgType::H2DRead || t == MsgType::H2DWrite || t == MsgType::H2DWritePosted ||
         t == MsgType::D2HRead || t == MsgType::D2HWrite;
}
bool has_req_id(MsgType t) {
  return has_addr(t) || t == MsgType::H2DReadComp || t == MsgType::H2DWriteComp || t == MsgType::D2HReadComp ||
         t == MsgType::D2HWriteComp;
}
bool is_write(MsgType t) {
  return t == MsgType::H2DWrite || t == MsgType::H2DWritePosted || t == MsgType::D2HWrite;
}
bool known(uint8_t t) {
  switch (MsgType(t)) {
    case MsgType::Sync: case MsgType::Terminate:
    case MsgType::D2HRead: case MsgType::D2HWrite: case MsgType::D2HInterrupt:
    case MsgType::D2HReadComp: case MsgType::D2HWriteComp:
    case MsgType::H2DRead: case MsgType::H2DWrite: case MsgType::H2DReadComp:
    case MsgType::H2DWriteComp: case MsgType::H2DDevCtrl: case MsgType::H2DWritePosted:
      return true;
  }
  return false;
}

}  // namespace

const char* msg_type_name(MsgType t) {
  switch (t) {
    case MsgType::Sync: return "SYNC";
    case MsgType::Terminate: return "TERMINATE";
    case MsgType::D2HRead: return "D2H READ";
    case MsgType::D2HWrite: return "D2H WRITE";
    case MsgType::D2HInterrupt: return "D2H INTERRUPT";
    case MsgType::D2HReadComp: return "D2H READCOMP";
    case MsgType::D2HWriteComp: return "D2H WRITECOMP";
    case MsgType::H2DRead: return "H2D READ";
    case MsgType::H2DWrite: return "H2D WRITE";
    case MsgType::H2DReadComp: return "H2D READCOMP";
    case MsgType::H2DWriteComp: return "H2D WRITECOMP";
    case MsgType::H2DDevCtrl: return "H2D DEVCTRL";
    case MsgType::H2DWritePosted: return "H2D WRITE_POSTED";
  }
  return "unknown";
}

bool is_h2d(MsgType t) { return t == MsgType::Sync || t == MsgType::Terminate || (uint8_t(t) & 0x60) == 0x60; }
bool is_d2h(MsgType t) {
  return t == MsgType::Sync || t == MsgType::Terminate || (uint8_t(t) >= 0x40 && uint8_t(t) <= 0x44);
}

std::vector<uint8_t> encode(const Msg& m) {
  if (m.data.size() > kMaxData) throw std::invalid_argument("SimBricks PCIe message data longer than 65535 bytes");
  if (!m.data.empty() && !carries_data(m.type))
    throw std::invalid_argument(std::string("a ") + msg_type_name(m.type) + " message carries no data");
  std::vector<uint8_t> b = header(uint8_t(m.type), m.timestamp_ps, m.data.size());
  if (has_req_id(m.type)) put(b, 0, m.req_id, 8);
  if (has_addr(m.type)) {
    put(b, 8, m.offset, 8);
    put(b, 16, is_write(m.type) ? m.data.size() : m.len, 2);
    if (is_h2d(m.type)) b[18] = m.bar;
  }
  if (m.type == MsgType::D2HInterrupt) {
    put(b, 0, m.vector, 2);
    b[2] = m.inttype;
  }
  if (m.type == MsgType::H2DDevCtrl) put(b, 0, m.flags, 8);
  if (m.type == MsgType::Sync) b[0] = uint8_t(m.flags);
  std::copy(m.data.begin(), m.data.end(), b.begin() + kHeaderBytes);
  return b;
}

std::optional<Msg> decode(const uint8_t* p, size_t n, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<Msg> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (auto bad = check_stream_header(p, n)) return fail(*bad);
  const uint8_t own_type = p[kOwnTypeOffset];
  if (!known(own_type & kTypeMask)) return fail("unknown message type " + type_hex(own_type));
  Msg m;
  m.type = MsgType(own_type & kTypeMask);
  m.timestamp_ps = get(p, kTimestampOffset, 8);
  const size_t data = n - kHeaderBytes;
  if (data && !carries_data(m.type))
    return fail(std::string(msg_type_name(m.type)) + " with " + std::to_string(data) + " bytes after its header");
  if (data > kMaxData) return fail("message data longer than 65535 bytes");
  if (has_req_id(m.type)) m.req_id = get(p, 0, 8);
  if (has_addr(m.type)) {
    m.offset = get(p, 8, 8);
    m.len = uint16_t(get(p, 16, 2));
    if (is_h2d(m.type)) m.bar = p[18];
    if (is_write(m.type) && m.len != data)
      return fail(std::string(msg_type_name(m.type)) + " says len " + std::to_string(m.len) + " but carries " +
                  std::to_string(data) + " bytes");
  }
  if (m.type == MsgType::D2HInterrupt) {
    m.vector = uint16_t(get(p, 0, 2));
    m.inttype = p[2];
  }
  if (m.type == MsgType::H2DDevCtrl) m.flags = get(p, 0, 8);
  if (m.type == MsgType::Sync) m.flags = p[0];
  m.data.assign(p + kHeaderBytes, p + n);
  return m;
}

std::vector<uint8_t> encode_device_intro(const DevIntro& d, uint64_t max_msg) {
  std::vector<uint8_t> b(kDevIntroBytes, 0);
  size_t o = 0;
  for (const Bar& bar : d.bars) {
    put(b, o, bar.len, 8);
    put(b, o + 8, bar.flags, 8);
    o += 16;
  }
  put(b, o, d.vendor_id, 2);
  put(b, o + 2, d.device_id, 2);
  b[o + 4] = d.pci_class;
  b[o + 5] = d.subclass;
  b[o + 6] = d.revision;
  b[o + 7] = d.progif;
  b[o + 8] = d.msi_nvecs;
  put(b, o + 9, d.msix_nvecs, 2);
  b[o + 11] = d.msix_table_bar;
  b[o + 12] = d.msix_pba_bar;
  put(b, o + 13, d.msix_table_offset, 4);
  put(b, o + 17, d.msix_pba_offset, 4);
  put(b, o + 21, d.msix_cap_offset, 2);
  ListenerIntro li;  // flags 0: no synchronisation requested (lock-step is the bridge's own)
  li.l2c.elen = li.c2l.elen = max_msg;
  li.proto = kProtoIdPcie;
  return encode_listener_intro(li, b);
}

std::optional<DevIntro> decode_device_intro(const uint8_t* p, size_t n, std::string* why) {
  size_t o = 0;
  if (!decode_listener_intro(p, n, kProtoIdPcie, "PCIe", kDevIntroBytes, &o, why)) return std::nullopt;
  DevIntro d;
  for (Bar& bar : d.bars) {
    bar.len = get(p, o, 8);
    bar.flags = get(p, o + 8, 8);
    o += 16;
  }
  d.vendor_id = uint16_t(get(p, o, 2));
  d.device_id = uint16_t(get(p, o + 2, 2));
  d.pci_class = p[o + 4];
  d.subclass = p[o + 5];
  d.revision = p[o + 6];
  d.progif = p[o + 7];
  d.msi_nvecs = p[o + 8];
  d.msix_nvecs = uint16_t(get(p, o + 9, 2));
  d.msix_table_bar = p[o + 11];
  d.msix_pba_bar = p[o + 12];
  d.msix_table_offset = uint32_t(get(p, o + 13, 4));
  d.msix_pba_offset = uint32_t(get(p, o + 17, 4));
  d.msix_cap_offset = uint16_t(get(p, o + 21, 2));
  return d;
}

std::vector<uint8_t> encode_host_intro() {
  ConnecterIntro ci;
  ci.proto = kProtoIdPcie;
  return encode_connecter_intro(ci, std::vector<uint8_t>(kHostIntroBytes, 0));
}

bool decode_host_intro(const uint8_t* p, size_t n, std::string* why) {
  size_t o = 0;
  return decode_connecter_intro(p, n, kProtoIdPcie, "PCIe", kHostIntroBytes, &o, why).has_value();
}

}  // namespace ernic::bridge
