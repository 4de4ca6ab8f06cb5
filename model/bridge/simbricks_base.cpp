// model/bridge: SimBricks' base protocol (simbricks_base.h).
#include "model/bridge/simbricks_base.h"

#include <cstdio>

namespace ernic::bridge {

void put_le(std::vector<uint8_t>& b, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i));
}

uint64_t get_le(const uint8_t* p, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(p[at + size_t(i)]) << (8 * i);
  return v;
}

std::vector<uint8_t> header(uint8_t type, uint64_t timestamp_ps, size_t data) {
  std::vector<uint8_t> b(kHeaderBytes + data, 0);
  put_le(b, kTimestampOffset, timestamp_ps, 8);
  b[kOwnTypeOffset] = type;
  return b;
}

std::string type_hex(uint8_t type) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", type);
  return b;
}

std::optional<std::string> check_stream_header(const uint8_t* p, size_t n) {
  if (n < kHeaderBytes) return "message of " + std::to_string(n) + " bytes, shorter than the 64-byte header";
  if (p[kOwnTypeOffset] & kOwnMask) return std::string("ownership bit set on a stream message");
  return std::nullopt;
}

namespace {

std::vector<uint8_t> with_upper(std::vector<uint8_t> b, const std::vector<uint8_t>& upper) {
  b.insert(b.end(), upper.begin(), upper.end());
  return b;
}

// version @0, protocol id @id_at, upper-layer intro offset @off_at.
bool check_intro(const uint8_t* p, size_t n, size_t head, size_t id_at, size_t off_at, uint64_t want,
                 const char* want_name, size_t body, size_t* body_at, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (n < head) return fail("intro of " + std::to_string(n) + " bytes, shorter than " + std::to_string(head));
  const uint64_t version = get_le(p, 0, 8);
  if (version != kProtoVersion)
    return fail("peer speaks SimBricks protocol version " + std::to_string(version) + ", this simulator speaks " +
                std::to_string(kProtoVersion));
  const uint64_t proto = get_le(p, id_at, 8);
  if (proto != want)
    return fail("peer's upper-layer protocol is " + std::to_string(proto) + ", not " + want_name + " (" +
                std::to_string(want) + ")");
  const uint64_t off = get_le(p, off_at, 8);
  if (off < head || off > n || n - off < body) return fail("upper-layer intro outside the intro message");
  *body_at = size_t(off);
  return true;
}

}  // namespace

std::vector<uint8_t> encode_listener_intro(const ListenerIntro& li, const std::vector<uint8_t>& upper) {
  std::vector<uint8_t> b(kListenerIntroBytes, 0);
  put_le(b, 0, kProtoVersion, 8);
  put_le(b, 8, li.flags, 8);
  put_le(b, 16, li.l2c.offset, 8);
  put_le(b, 24, li.l2c.elen, 8);
  put_le(b, 32, li.l2c.nentries, 8);
  put_le(b, 40, li.c2l.offset, 8);
  put_le(b, 48, li.c2l.elen, 8);
  put_le(b, 56, li.c2l.nentries, 8);
  put_le(b, 64, li.proto, 8);
  put_le(b, 72, kListenerIntroBytes, 8);
  return with_upper(std::move(b), upper);
}

std::vector<uint8_t> encode_connecter_intro(const ConnecterIntro& ci, const std::vector<uint8_t>& upper) {
  std::vector<uint8_t> b(kConnecterIntroBytes, 0);
  put_le(b, 0, kProtoVersion, 8);
  put_le(b, 8, ci.flags, 8);
  put_le(b, 16, ci.proto, 8);
  put_le(b, 24, kConnecterIntroBytes, 8);
  return with_upper(std::move(b), upper);
}

std::optional<ListenerIntro> decode_listener_intro(const uint8_t* p, size_t n, uint64_t want, const char* want_name,
                                                   size_t upper_bytes, size_t* upper_at, std::string* why) {
  if (!check_intro(p, n, kListenerIntroBytes, 64, 72, want, want_name, upper_bytes, upper_at, why))
    return std::nullopt;
  ListenerIntro li;
  li.flags = get_le(p, 8, 8);
  li.l2c = {get_le(p, 16, 8), get_le(p, 24, 8), get_le(p, 32, 8)};
  li.c2l = {get_le(p, 40, 8), get_le(p, 48, 8), get_le(p, 56, 8)};
  li.proto = want;
  return li;
}

std::optional<ConnecterIntro> decode_connecter_intro(const uint8_t* p, size_t n, uint64_t want, const char* want_name,
                                                     size_t upper_bytes, size_t* upper_at, std::string* why) {
  if (!check_intro(p, n, kConnecterIntroBytes, 16, 24, want, want_name, upper_bytes, upper_at, why))
    return std::nullopt;
  ConnecterIntro ci;
  ci.flags = get_le(p, 8, 8);
  ci.proto = want;
  return ci;
}

}  // namespace ernic::bridge
