// model/bridge: SimBricks' PCIe protocol, the messages a host process and
// the simulated NIC exchange (simbricks/simbricks lib/simbricks/base/proto.h
// and pcie/proto.h, protocol version 1; implemented from their description,
// no code taken). Plain C++, no SystemC: the client library uses it too.
//
// The header, SYNC, TERMINATE and the intros are the base layer's
// (simbricks_base.h); data follows the header for WRITE and READCOMP. Per
// type (offsets from byte 0):
//   H2D READ 0x60 / WRITE 0x61 / WRITE_POSTED 0x65: req_id u64 @0,
//       offset u64 @8, len u16 @16, bar u8 @18; WRITE data follows.
//   H2D READCOMP 0x62: req_id @0, data follows. H2D WRITECOMP 0x63: req_id.
//   H2D DEVCTRL 0x64: flags u64 @0 (INTX_EN 1, MSI_EN 2, MSIX_EN 4).
//   D2H READ 0x40 / WRITE 0x41: req_id @0, offset (the bus address) @8,
//       len u16 @16; WRITE data follows.
//   D2H INTERRUPT 0x42: vector u16 @0, inttype u8 @2 (LEGACY_HI 0,
//       LEGACY_LO 1, MSI 2, MSIX 3).
//   D2H READCOMP 0x43: req_id @0, data follows. D2H WRITECOMP 0x44: req_id.
//   SYNC 0x00, TERMINATE 0x01 (base protocol, both directions).
// Intros (on connection, before any message): the listener (the device)
// sends the base listener intro (protocol id PCIe 2) followed by the PCIe
// device intro (6 BARs x
// {len u64, flags u64}, vendor u16, device u16, class, subclass, revision,
// progif, msi_nvecs u8, msix_nvecs u16, msix table bar u8, pba bar u8,
// table offset u32, pba offset u32, msix cap offset u16: 119 bytes); the
// connecter (the host) sends the base connecter intro followed by the host
// intro (u32 0).
//
// One extension, in bytes SimBricks leaves as padding (a SimBricks peer
// sends zeros there, which means "plain"): byte 0 of a host SYNC, bit 0
// (kSyncUntilIrq) asks the device to stop early at its first interrupt the
// program has not seen, bit 1 (kSyncUntilDmaWrite) right after its first
// DMA WRITE the program has not seen; other bits are refused.
// See model/bridge/README.md for the lock-step rules.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/bridge/simbricks_base.h"

namespace ernic::bridge {

// The largest data a message carries here: len is u16 on the wire.
constexpr size_t kMaxData = 0xFFFF;

enum class MsgType : uint8_t {
  Sync = kTypeSync,
  Terminate = kTypeTerminate,
  D2HRead = 0x40,
  D2HWrite = 0x41,
  D2HInterrupt = 0x42,
  D2HReadComp = 0x43,
  D2HWriteComp = 0x44,
  H2DRead = 0x60,
  H2DWrite = 0x61,
  H2DReadComp = 0x62,
  H2DWriteComp = 0x63,
  H2DDevCtrl = 0x64,
  H2DWritePosted = 0x65,
};
const char* msg_type_name(MsgType t);
// Which direction a type travels in (Sync and Terminate: both).
bool is_h2d(MsgType t);
bool is_d2h(MsgType t);

enum IntType : uint8_t { kIntLegacyHi = 0, kIntLegacyLo = 1, kIntMsi = 2, kIntMsix = 3 };
enum DevCtrlFlags : uint64_t { kCtrlIntxEn = 1, kCtrlMsiEn = 2, kCtrlMsixEn = 4 };
enum BarFlags : uint64_t { kBarIo = 1, kBarIs64 = 2, kBarPrefetch = 4, kBarDummy = 8 };
constexpr uint8_t kSyncUntilIrq = 1;       // extension, see above
constexpr uint8_t kSyncUntilDmaWrite = 2;  // extension, see above
constexpr uint8_t kSyncFlagsKnown = kSyncUntilIrq | kSyncUntilDmaWrite;

struct Msg {
  MsgType type = MsgType::Sync;
  uint64_t timestamp_ps = 0;
  uint64_t req_id = 0;      // READ / WRITE / completions
  uint64_t offset = 0;      // READ / WRITE: BAR offset (H2D) or bus address (D2H)
  uint16_t len = 0;         // READ: bytes asked; WRITE: data.size()
  uint8_t bar = 0;          // H2D READ / WRITE
  uint16_t vector = 0;      // INTERRUPT
  uint8_t inttype = 0;      // INTERRUPT
  uint64_t flags = 0;       // DEVCTRL; SYNC (byte 0, the extension)
  std::vector<uint8_t> data;  // WRITE, READCOMP
};

// The message as bytes: header then data. Throws std::invalid_argument for
// data longer than kMaxData or on a type that carries none.
std::vector<uint8_t> encode(const Msg& m);
// Parses one whole message; nullopt with `why` set for a size that does not
// fit its type, an unknown type, a set ownership bit, WRITE len != data
// bytes. Never reads outside [p, p+n).
std::optional<Msg> decode(const uint8_t* p, size_t n, std::string* why);

struct Bar {
  uint64_t len = 0;
  uint64_t flags = 0;
};
struct DevIntro {
  std::array<Bar, 6> bars{};
  uint16_t vendor_id = 0, device_id = 0;
  uint8_t pci_class = 0, subclass = 0, revision = 0, progif = 0;
  uint8_t msi_nvecs = 0;
  uint16_t msix_nvecs = 0;
  uint8_t msix_table_bar = 0, msix_pba_bar = 0;
  uint32_t msix_table_offset = 0, msix_pba_offset = 0;
  uint16_t msix_cap_offset = 0;
};
constexpr size_t kDevIntroBytes = 119, kHostIntroBytes = 4;

// Listener intro + device intro; `max_msg` goes in both elen fields.
std::vector<uint8_t> encode_device_intro(const DevIntro& d, uint64_t max_msg);
// nullopt with `why` on a short buffer, another protocol version ("peer
// speaks SimBricks protocol version N, we speak 1"), another upper-layer
// protocol, an intro offset outside the buffer.
std::optional<DevIntro> decode_device_intro(const uint8_t* p, size_t n, std::string* why);
std::vector<uint8_t> encode_host_intro();
bool decode_host_intro(const uint8_t* p, size_t n, std::string* why);

}  // namespace ernic::bridge
