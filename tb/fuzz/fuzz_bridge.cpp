// tb/fuzz: the bridge's message parsers (model/bridge: SimBricks' base
// intros, the PCIe messages and intros, the Ethernet messages and intros),
// which take bytes from a host program or a peer process. Byte 0 picks the
// parser, the rest is one message in a buffer of exactly its size.
// Invariants: no read outside the buffer; a refusal says why; a message
// that decodes re-encodes (encode / encode_net do not throw on it) to a
// message of the same size, type, timestamp and data, whose fields decode
// to the same values (padding bytes SimBricks leaves undefined aside); an
// intro that decodes re-encodes to one that decodes to the same fields.
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "model/bridge/eth_proto.h"
#include "model/bridge/pcie_proto.h"
#include "model/bridge/simbricks_base.h"
#include "tb/fuzz/fuzz_check.h"

using namespace ernic::bridge;

namespace {

bool same(const Msg& a, const Msg& b) {
  return a.type == b.type && a.timestamp_ps == b.timestamp_ps && a.req_id == b.req_id && a.offset == b.offset &&
         a.len == b.len && a.bar == b.bar && a.vector == b.vector && a.inttype == b.inttype && a.flags == b.flags &&
         a.data == b.data;
}

bool same(const NetMsg& a, const NetMsg& b) {
  return a.kind == b.kind && a.timestamp_ps == b.timestamp_ps && a.port == b.port && a.bad_fcs == b.bad_fcs &&
         a.frame == b.frame && a.sync_info == b.sync_info;
}

bool same(const DevIntro& a, const DevIntro& b) {
  for (size_t i = 0; i < a.bars.size(); ++i)
    if (a.bars[i].len != b.bars[i].len || a.bars[i].flags != b.bars[i].flags) return false;
  return a.vendor_id == b.vendor_id && a.device_id == b.device_id && a.pci_class == b.pci_class &&
         a.subclass == b.subclass && a.revision == b.revision && a.progif == b.progif && a.msi_nvecs == b.msi_nvecs &&
         a.msix_nvecs == b.msix_nvecs && a.msix_table_bar == b.msix_table_bar && a.msix_pba_bar == b.msix_pba_bar &&
         a.msix_table_offset == b.msix_table_offset && a.msix_pba_offset == b.msix_pba_offset &&
         a.msix_cap_offset == b.msix_cap_offset;
}

void common_header(const std::vector<uint8_t>& e, const uint8_t* p, size_t n) {
  FUZZ_CHECK(e.size() == n, "re-encoded %zu bytes, had %zu", e.size(), n);
  FUZZ_CHECK(std::memcmp(e.data() + kTimestampOffset, p + kTimestampOffset, 8) == 0, "timestamp bytes");
  FUZZ_CHECK(e[kOwnTypeOffset] == p[kOwnTypeOffset], "own_type byte");
  FUZZ_CHECK(std::memcmp(e.data() + kHeaderBytes, p + kHeaderBytes, n - kHeaderBytes) == 0, "data bytes");
}

void pcie_msg(const uint8_t* p, size_t n) {
  std::string why;
  const std::optional<Msg> m = decode(p, n, &why);
  if (!m) {
    FUZZ_CHECK(!why.empty(), "PCIe message refused without a reason");
    return;
  }
  FUZZ_CHECK(n >= kHeaderBytes && !(p[kOwnTypeOffset] & kOwnMask), "took a short message or a set ownership bit");
  std::vector<uint8_t> e;
  try {
    e = encode(*m);
  } catch (const std::exception& x) {
    FUZZ_CHECK(false, "a decoded %s does not re-encode: %s", msg_type_name(m->type), x.what());
  }
  common_header(e, p, n);
  const std::optional<Msg> m2 = decode(e.data(), e.size(), &why);
  FUZZ_CHECK(m2 && same(*m, *m2), "decode(encode(m)) != m for %s", msg_type_name(m->type));
}

void net_msg(const uint8_t* p, size_t n) {
  std::string why;
  const std::optional<NetMsg> m = decode_net(p, n, &why);
  if (!m) {
    FUZZ_CHECK(!why.empty(), "Ethernet message refused without a reason");
    return;
  }
  FUZZ_CHECK(n >= kHeaderBytes && !(p[kOwnTypeOffset] & kOwnMask), "took a short message or a set ownership bit");
  std::vector<uint8_t> e;
  try {
    e = encode_net(*m);
  } catch (const std::exception& x) {
    FUZZ_CHECK(false, "a decoded message does not re-encode: %s", x.what());
  }
  common_header(e, p, n);
  const std::optional<NetMsg> m2 = decode_net(e.data(), e.size(), &why);
  FUZZ_CHECK(m2 && same(*m, *m2), "decode_net(encode_net(m)) != m");
}

void device_intro(const uint8_t* p, size_t n) {
  std::string why;
  const std::optional<DevIntro> d = decode_device_intro(p, n, &why);
  if (!d) {
    FUZZ_CHECK(!why.empty(), "device intro refused without a reason");
    return;
  }
  const std::vector<uint8_t> e = encode_device_intro(*d, 4096);
  const std::optional<DevIntro> d2 = decode_device_intro(e.data(), e.size(), &why);
  FUZZ_CHECK(d2 && same(*d, *d2), "device intro does not re-encode");
}

void host_intro(const uint8_t* p, size_t n) {
  std::string why;
  if (!decode_host_intro(p, n, &why)) FUZZ_CHECK(!why.empty(), "host intro refused without a reason");
}

void net_intros(const uint8_t* p, size_t n) {
  std::string why;
  if (const auto li = decode_net_listener_intro(p, n, &why)) {
    FUZZ_CHECK(li->proto == kProtoIdNet, "listener intro of protocol %llu", (unsigned long long)li->proto);
    const std::vector<uint8_t> e = encode_net_listener_intro(li->c2l.elen, li->flags);
    const auto li2 = decode_net_listener_intro(e.data(), e.size(), &why);
    FUZZ_CHECK(li2 && li2->flags == li->flags && li2->c2l.elen == li->c2l.elen, "listener intro does not re-encode");
  } else {
    FUZZ_CHECK(!why.empty(), "listener intro refused without a reason");
  }
  why.clear();
  if (const auto ci = decode_net_connecter_intro(p, n, &why)) {
    FUZZ_CHECK(ci->proto == kProtoIdNet, "connecter intro of protocol %llu", (unsigned long long)ci->proto);
    const std::vector<uint8_t> e = encode_net_connecter_intro(ci->flags);
    const auto ci2 = decode_net_connecter_intro(e.data(), e.size(), &why);
    FUZZ_CHECK(ci2 && ci2->flags == ci->flags, "connecter intro does not re-encode");
  } else {
    FUZZ_CHECK(!why.empty(), "connecter intro refused without a reason");
  }
}

void base_intros(const uint8_t* p, size_t n, uint8_t sel) {
  // Any upper-layer size and protocol, as a peer may claim them.
  const size_t upper = sel & 0x7F;
  const uint64_t want = (sel >> 7) ? kProtoIdPcie : kProtoIdNet;
  std::string why;
  size_t at = ~size_t(0);
  if (const auto li = decode_listener_intro(p, n, want, "X", upper, &at, &why)) {
    FUZZ_CHECK(at + upper <= n, "upper-layer intro at %zu + %zu beyond %zu bytes", at, upper, n);
    FUZZ_CHECK(li->proto == want, "listener protocol");
  } else {
    FUZZ_CHECK(!why.empty(), "listener intro refused without a reason");
  }
  at = ~size_t(0);
  why.clear();
  if (const auto ci = decode_connecter_intro(p, n, want, "X", upper, &at, &why)) {
    FUZZ_CHECK(at + upper <= n, "upper-layer intro at %zu + %zu beyond %zu bytes", at, upper, n);
    FUZZ_CHECK(ci->proto == want, "connecter protocol");
  } else {
    FUZZ_CHECK(!why.empty(), "connecter intro refused without a reason");
  }
  const auto bad = check_stream_header(p, n);
  FUZZ_CHECK(bad.has_value() == (n < kHeaderBytes || (p[kOwnTypeOffset] & kOwnMask)), "check_stream_header");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t sel = data[0], arg = data[1];
  std::vector<uint8_t> b(data + 2, data + size);
  const uint8_t* p = b.empty() ? nullptr : b.data();
  switch (sel % 6) {
    case 0: pcie_msg(p, b.size()); break;
    case 1: net_msg(p, b.size()); break;
    case 2: device_intro(p, b.size()); break;
    case 3: host_intro(p, b.size()); break;
    case 4: net_intros(p, b.size()); break;
    default: base_intros(p, b.size(), arg); break;
  }
  return 0;
}
