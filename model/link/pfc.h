// model/link: Ethernet flow-control frames (IEEE 802.3 Annex 31B PAUSE,
// IEEE 802.1Qbb priority flow control) and ERNIC's XRNIC_PAUSE_CONF rules.
// Plain C++, no SystemC: the CMAC model (cmac_pfc.cpp, cmac_rx.cpp) builds
// and parses the frames; the ERNIC model and the system wiring decide with
// the register values which traffic a received pause holds.
//
// Frames (no FCS, as everywhere in the model), padded to 60 bytes:
//   DA 01:80:C2:00:00:01 | SA | EtherType 0x8808 (MAC control) |
//   PAUSE: opcode 0x0001 | pause_time (2 B)
//   PFC:   opcode 0x0101 | class-enable vector (2 B, bit i = priority i,
//          the upper 8 bits 0) | time[0..7] (2 B each)
// A pause time is in quanta of 512 bit times (5.12 ns at 100 Gb/s); 0
// means resume (XON).
//
// TxPause and RxPause keep a MAC's pause state: the XOFF/XON frames it owes
// for its requests, the pause timers frames it received have set. The
// CMAC (cmac_pfc.cpp) and each port of the switch (model/link/switch.h)
// keep one of each.
//
// stat_rx_pause_req[8:0] (CMAC -> ERNIC): bit i (0..7) = priority i is
// paused by a PFC frame; bit 8 = a PAUSE (802.3x, all traffic) frame.
// ctl_tx_pause_req[8:0] (ERNIC -> CMAC): the same layout, what the CMAC is
// asked to send.
//
// XRNIC_PAUSE_CONF (PG332, reset 0x800): [0] pause enable for RoCE traffic,
// [1] for non-RoCE traffic, [7:4] the RoCE priority, [11:8] the non-RoCE
// priority, [12] disable the priority check (TX only). A priority is an
// index into stat_rx_pause_req / ctl_tx_pause_req: 0..7 a PFC priority, 8
// the 802.3x PAUSE (the reset value puts non-RoCE traffic there); values
// 9..15 are taken as 8 (assumption A-PFC-1). With [12] set, any asserted
// stat_rx_pause_req bit holds the traffic class.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ernic::pfc {

constexpr uint16_t kEtherType = 0x8808;
constexpr uint16_t kOpPause = 0x0001;   // IEEE 802.3 Annex 31B
constexpr uint16_t kOpPfc = 0x0101;     // IEEE 802.1Qbb
constexpr uint32_t kQuantumBits = 512;
constexpr uint32_t kGlobalBit = 8;      // stat_rx_pause_req / ctl_tx_pause_req bit of the 802.3x PAUSE
constexpr uint8_t kDa[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
constexpr size_t kMinFrame = 60;        // 64 with the FCS

struct PauseFrame {
  bool pfc = false;                     // opcode 0x0101 (else 0x0001)
  uint16_t class_enable = 0;            // PFC: bit i = time[i] is valid
  std::array<uint16_t, 8> time{};       // PFC: per priority; PAUSE: time[0]
};

inline bool is_mac_control(const uint8_t* d, size_t n) {
  return n >= 16 && uint16_t(d[12] << 8 | d[13]) == kEtherType;
}

// A PAUSE or PFC frame, or nullopt (another MAC control opcode, too short).
inline std::optional<PauseFrame> parse(const uint8_t* d, size_t n) {
  if (!is_mac_control(d, n)) return std::nullopt;
  const uint16_t op = uint16_t(d[14] << 8 | d[15]);
  PauseFrame p;
  if (op == kOpPause && n >= 18) {
    p.time[0] = uint16_t(d[16] << 8 | d[17]);
    return p;
  }
  if (op == kOpPfc && n >= 18 + 16) {
    p.pfc = true;
    p.class_enable = uint16_t(d[16] << 8 | d[17]) & 0xFF;
    for (int i = 0; i < 8; ++i) p.time[i] = uint16_t(d[18 + 2 * i] << 8 | d[19 + 2 * i]);
    return p;
  }
  return std::nullopt;
}

inline std::vector<uint8_t> build(const uint8_t src_mac[6], const PauseFrame& p) {
  std::vector<uint8_t> f(kMinFrame, 0);
  for (int i = 0; i < 6; ++i) f[i] = kDa[i], f[6 + i] = src_mac[i];
  f[12] = kEtherType >> 8, f[13] = kEtherType & 0xFF;
  const uint16_t op = p.pfc ? kOpPfc : kOpPause;
  f[14] = uint8_t(op >> 8), f[15] = uint8_t(op);
  if (!p.pfc) {
    f[16] = uint8_t(p.time[0] >> 8), f[17] = uint8_t(p.time[0]);
    return f;
  }
  f[16] = 0, f[17] = uint8_t(p.class_enable);
  for (int i = 0; i < 8; ++i) f[18 + 2 * i] = uint8_t(p.time[i] >> 8), f[19 + 2 * i] = uint8_t(p.time[i]);
  return f;
}

// The pause frames a MAC owes for its requests (ctl_tx_pause_req; bits as
// in stat_rx_pause_req): on a rising bit an XOFF, sent again each refresh
// interval while the bit stays set (before the pause runs out); on a
// falling bit one XON (time 0), as Xilinx MACs do with auto-XON
// (assumption A-PFC-2). Priorities 0..7 share one PFC frame; bit 8 (the
// 802.3x PAUSE) is a frame of its own, at the next frame boundary.
struct TxPause {
  uint16_t req = 0;        // asked for now
  uint16_t standing = 0;   // XOFF sent and no XON since
  uint64_t refresh_at_ps[9] = {};

  // The earliest time a standing XOFF must be refreshed (UINT64_MAX: none),
  // or `now` when an XOFF or XON is due at once.
  uint64_t next_ps(uint64_t now) const {
    uint64_t t = UINT64_MAX;
    for (int i = 0; i < 9; ++i) {
      const uint16_t bit = uint16_t(1u << i);
      const bool r = req & bit, s = standing & bit;
      if (r != s) return now;
      if (r) t = std::min(t, refresh_at_ps[i]);
    }
    return t;
  }
  // The frame due now (nullopt: none) and the bits it sends as XOFF (time
  // `quanta`) and as XON; the state is updated (an XOFF is due again
  // refresh_ps later).
  struct Due {
    PauseFrame frame;
    uint16_t xoff = 0, xon = 0;
  };
  std::optional<Due> take(uint64_t now, uint16_t quanta, uint64_t refresh_ps) {
    uint16_t xoff = 0, xon = 0;
    for (int i = 0; i < 9; ++i) {
      const uint16_t bit = uint16_t(1u << i);
      const bool r = req & bit, s = standing & bit;
      if (r && (!s || now >= refresh_at_ps[i])) xoff |= bit;
      else if (!r && s) xon |= bit;
    }
    if (!(xoff | xon)) return std::nullopt;
    const uint16_t now_bits = (xoff | xon) & 0xFF ? uint16_t((xoff | xon) & 0xFF) : uint16_t(1u << kGlobalBit);
    Due d;
    for (int i = 0; i < 9; ++i) {
      const uint16_t bit = uint16_t(1u << i);
      if (!(now_bits & bit)) continue;
      const bool off = xoff & bit;
      const uint16_t q = off ? quanta : 0;
      if (i < 8) {
        d.frame.pfc = true;
        d.frame.class_enable |= bit;
        d.frame.time[i] = q;
      } else {
        d.frame.time[0] = q;
      }
      if (off) {
        standing |= bit;
        refresh_at_ps[i] = now + refresh_ps;
        d.xoff |= bit;
      } else {
        standing &= uint16_t(~bit);
        d.xon |= bit;
      }
    }
    return d;
  }
};

// The pause timers received PAUSE / PFC frames set: bit i of
// stat_rx_pause_req is set until until_ps[i].
struct RxPause {
  uint64_t until_ps[9] = {};

  // A received frame at `now`: each priority it names (a PAUSE: bit 8)
  // paused for its time (0: resumed). quanta_ps(q): a pause time in ps at
  // the line's rate. Returns the bits it named.
  template <class QuantaPs>
  uint16_t apply(const PauseFrame& p, uint64_t now, QuantaPs quanta_ps) {
    uint16_t named = 0;
    for (int i = 0; i < 9; ++i) {
      const bool on = i < 8 ? p.pfc && (p.class_enable >> i & 1) : !p.pfc;
      if (!on) continue;
      until_ps[i] = now + quanta_ps(i < 8 ? p.time[i] : p.time[0]);
      named |= uint16_t(1u << i);
    }
    return named;
  }
  uint16_t stat(uint64_t now) const {
    uint16_t s = 0;
    for (int i = 0; i < 9; ++i)
      if (until_ps[i] > now) s |= uint16_t(1u << i);
    return s;
  }
  // The earliest running timer's end after now (UINT64_MAX: none runs).
  uint64_t next_expiry(uint64_t now) const {
    uint64_t t = UINT64_MAX;
    for (int i = 0; i < 9; ++i)
      if (until_ps[i] > now) t = std::min(t, until_ps[i]);
    return t;
  }
};

// The stat_rx_pause_req / ctl_tx_pause_req bit of a traffic class under
// XRNIC_PAUSE_CONF, or -1 when pause is not enabled for it.
inline int pause_bit(uint32_t pause_conf, bool roce) {
  if (!(pause_conf & (roce ? 0x1u : 0x2u))) return -1;
  const uint32_t p = (pause_conf >> (roce ? 4 : 8)) & 0xF;
  return int(p > kGlobalBit ? kGlobalBit : p);
}

// True when a frame of this class must wait at a frame boundary.
inline bool tx_held(uint32_t pause_conf, bool roce, uint16_t stat_rx_pause_req) {
  const int bit = pause_bit(pause_conf, roce);
  if (bit < 0) return false;
  if (pause_conf & 0x1000) return (stat_rx_pause_req & 0x1FF) != 0;  // [12]: no priority check
  return (stat_rx_pause_req >> bit) & 1;
}

}  // namespace ernic::pfc
