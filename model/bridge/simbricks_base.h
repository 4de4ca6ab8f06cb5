// model/bridge: SimBricks' base protocol, shared by its upper layers (PCIe:
// pcie_proto.h; Ethernet: eth_proto.h), from lib/simbricks/base/proto.h,
// protocol version 1 (implemented from its description, no code taken).
// Plain C++, no SystemC.
//
// Every message is a 64-byte header (then data for the kinds that carry
// it), little-endian: bytes 48..55 the timestamp (ps), byte 63 own_type =
// bit 7 ownership (shared-memory queues; 0 on a stream), bits 6..0 the type.
// Types 0x00 SYNC and 0x01 TERMINATE belong to the base layer; 0x40 and up
// to the upper layer.
//
// On connection the listener sends SimbricksProtoListenerIntro (10 x u64:
// version, flags (bit 0 sync requested, bit 1 sync forced), the
// listener-to-connecter queue's offset / entry length / entries, the
// connecter-to-listener queue's, the upper-layer protocol id (NET 1, PCIE 2,
// MEM 3), the upper-layer intro's offset) and its upper-layer intro; the
// connecter sends SimbricksProtoConnecterIntro (4 x u64: version, flags,
// protocol id, intro offset) and its upper-layer intro. On a stream the
// queue fields carry no queues: offsets 0, entry length the largest message
// the sender accepts, 0 entries.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ernic::bridge {

constexpr uint64_t kProtoVersion = 1;
constexpr uint64_t kProtoIdNet = 1, kProtoIdPcie = 2;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kTimestampOffset = 48;
constexpr size_t kOwnTypeOffset = 63;
constexpr uint8_t kOwnMask = 0x80, kTypeMask = 0x7F;
constexpr uint8_t kTypeSync = 0x00, kTypeTerminate = 0x01, kTypeUpperStart = 0x40;
constexpr uint64_t kIntroFlagSync = 1, kIntroFlagSyncForce = 2;
constexpr size_t kListenerIntroBytes = 80, kConnecterIntroBytes = 32;

// Little-endian field access (bytes 1..8).
void put_le(std::vector<uint8_t>& b, size_t at, uint64_t v, int bytes);
uint64_t get_le(const uint8_t* p, size_t at, int bytes);

// A header with the timestamp and own_type set, the rest zero, `data` bytes
// after it.
std::vector<uint8_t> header(uint8_t type, uint64_t timestamp_ps, size_t data = 0);
// Checks the parts every message has: at least the header, ownership bit
// clear (a stream). nullopt: fine; else the reason.
std::optional<std::string> check_stream_header(const uint8_t* p, size_t n);
std::string type_hex(uint8_t type);  // "0x4f"

struct QueueInfo {
  uint64_t offset = 0, elen = 0, nentries = 0;
};
struct ListenerIntro {
  uint64_t flags = 0;
  QueueInfo l2c, c2l;
  uint64_t proto = 0;
};
struct ConnecterIntro {
  uint64_t flags = 0;
  uint64_t proto = 0;
};
// The intro, its upper-layer intro right after it (offset = the intro's size).
std::vector<uint8_t> encode_listener_intro(const ListenerIntro& li, const std::vector<uint8_t>& upper);
std::vector<uint8_t> encode_connecter_intro(const ConnecterIntro& ci, const std::vector<uint8_t>& upper);
// Decodes and checks: the version ("peer speaks SimBricks protocol version
// N, this simulator speaks 1"), the upper-layer protocol (`want`, named
// `want_name` in the message), an upper-layer intro of `upper_bytes` inside
// the message. *upper_at: where it starts.
std::optional<ListenerIntro> decode_listener_intro(const uint8_t* p, size_t n, uint64_t want, const char* want_name,
                                                   size_t upper_bytes, size_t* upper_at, std::string* why);
std::optional<ConnecterIntro> decode_connecter_intro(const uint8_t* p, size_t n, uint64_t want, const char* want_name,
                                                     size_t upper_bytes, size_t* upper_at, std::string* why);

}  // namespace ernic::bridge
