// model/roce: the InfiniBand path MTU (IBTA vol. 1, 7.7.3 / 9.6.1): a
// packet's payload is at most the PMTU, one of 256, 512, 1024, 2048 or
// 4096 bytes; CM MADs and SA records carry it as the IB MTU enumeration,
// 1 = 256 .. 5 = 4096. The only place these values are written: the ERNIC
// register code (QPCONFi[10:8] = enumeration - 1, model/regs), the scenario
// parser, the driver and the wire monitor use this.
#pragma once
#include <cstdint>
#include <string>

namespace roce {

constexpr uint8_t kMtuEnumMin = 1, kMtuEnumMax = 5;                 // 256 .. 4096
constexpr uint32_t mtu_bytes(uint8_t ib_enum) { return 128u << ib_enum; }  // 1 -> 256
constexpr uint32_t kMtuMin = mtu_bytes(kMtuEnumMin), kMtuMax = mtu_bytes(kMtuEnumMax);
// The enumeration of a PMTU in bytes, 0 when it is none.
constexpr uint8_t mtu_enum(uint32_t bytes) {
  for (uint8_t e = kMtuEnumMin; e <= kMtuEnumMax; ++e)
    if (mtu_bytes(e) == bytes) return e;
  return 0;
}
constexpr bool is_pmtu(uint32_t bytes) { return mtu_enum(bytes) != 0; }
// "256, 512, 1024, 2048, 4096" (messages).
inline std::string pmtu_list() {
  std::string out;
  for (uint8_t e = kMtuEnumMin; e <= kMtuEnumMax; ++e) out += (out.empty() ? "" : ", ") + std::to_string(mtu_bytes(e));
  return out;
}

}  // namespace roce
