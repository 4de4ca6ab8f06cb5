// model/link: the CMAC's flow control (see cmac.h, model/link/pfc.h):
// ctl_tx_pause_req and the XOFF/XON frames it sends, the pause frames it
// receives (stat_rx_pause_req and their timers), holding a paused class.
#include <fmt/format.h>

#include "model/link/cmac.h"
#include "model/link/cmac_describe.h"

namespace ernic {

using namespace sc_core;
using cmac_detail::describe;

void Cmac::set_tx_pause_req(uint16_t bits) {
  bits &= 0x1FF;
  if (bits == pause_req_) return;
  pause_req_ = bits;
  ctx_.set(v_ctl_tx_pause_req_, bits);
  pause_ev_.notify(SC_ZERO_TIME);
}

uint16_t Cmac::stat_rx_pause_req() const {
  const uint64_t now = ClockDomain::now_ps();
  uint16_t s = 0;
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) s |= uint16_t(1u << i);
  return s;
}

// The earliest time a standing XOFF must be refreshed (UINT64_MAX: none),
// or now when an XOFF or XON is due at once.
uint64_t Cmac::next_refresh_ps() const {
  uint64_t t = UINT64_MAX;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    const bool req = pause_req_ & bit, standing = xoff_standing_ & bit;
    if (req != standing) return ClockDomain::now_ps();
    if (req) t = std::min(t, refresh_at_ps_[i]);
  }
  return t;
}

std::optional<FrameBytes> Cmac::take_pause_frame(uint64_t now) {
  uint16_t xoff = 0, xon = 0;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    const bool req = pause_req_ & bit, standing = xoff_standing_ & bit;
    if (req && (!standing || now >= refresh_at_ps_[i])) xoff |= bit;
    else if (!req && standing) xon |= bit;
  }
  if (!(xoff | xon)) return std::nullopt;
  pfc::PauseFrame p;
  // Priorities 0..7 share one PFC frame; the 802.3x PAUSE (bit 8) is a
  // frame of its own (the next boundary).
  const uint16_t now_bits = (xoff | xon) & 0xFF ? uint16_t((xoff | xon) & 0xFF) : uint16_t(0x100);
  std::string what;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    if (!(now_bits & bit)) continue;
    const bool off = xoff & bit;
    const uint16_t q = off ? p_.pfc_quanta : 0;
    if (i < 8) {
      p.pfc = true;
      p.class_enable |= bit;
      p.time[i] = q;
    } else {
      p.time[0] = q;
    }
    if (off) {
      xoff_standing_ |= bit;
      refresh_at_ps_[i] = now + quanta_ps(p_.pfc_refresh_quanta);
      ++pfc_.xoff_sent;
    } else {
      xoff_standing_ &= uint16_t(~bit);
      ++pfc_.xon_sent;
    }
    what += fmt::format("{}{} {} (time {})", what.empty() ? "" : ", ", off ? "XOFF" : "XON",
                        i < 8 ? fmt::format("priority {}", i) : std::string("all (802.3x PAUSE)"), q);
  }
  log_state("pfc_tx", what);
  return pfc::build(mac, p);
}

// A paused traffic class waits (and what is queued behind it) until the
// pause state changes.
void Cmac::hold(const FrameBytes& front, uint16_t stat, uint64_t now) {
  if (!holding_) {
    holding_ = true;
    hold_since_ps_ = now;
    ++pfc_.held;
    log_state("pfc_hold", fmt::format("stat_rx_pause_req = 0x{:03x}: {} waits", stat, describe(front)));
  }
  tx_busy_ = false;
  uint64_t wake = next_refresh_ps();
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) wake = std::min(wake, rx_pause_until_ps_[i]);
  if (wake == UINT64_MAX)
    wait(pause_ev_);
  else if (wake > now)
    wait(ps(wake - now), pause_ev_);
}

void Cmac::release(uint16_t stat, uint64_t now) {
  if (!holding_) return;
  holding_ = false;
  pfc_.held_ps += now - hold_since_ps_;
  log_state("pfc_release", fmt::format("stat_rx_pause_req = 0x{:03x}: sending again after {} ns", stat,
                                       (now - hold_since_ps_) / 1000));
}

void Cmac::rx_pause(const pfc::PauseFrame& p, uint64_t now) {
  ++pfc_.pause_rx;
  std::string what;
  for (int i = 0; i < 9; ++i) {
    const bool on = i < 8 ? p.pfc && (p.class_enable >> i & 1) : !p.pfc;
    if (!on) continue;
    const uint16_t q = i < 8 ? p.time[i] : p.time[0];
    rx_pause_until_ps_[i] = now + quanta_ps(q);
    what += fmt::format("{}{} time {}", what.empty() ? "" : ", ",
                        i < 8 ? fmt::format("priority {}", i) : std::string("all (802.3x PAUSE)"), q);
  }
  const uint16_t stat = stat_rx_pause_req();
  ctx_.set(v_stat_rx_pause_req_, stat);
  log_state("pfc_rx", fmt::format("{}: stat_rx_pause_req = 0x{:03x}", what, stat));
  pause_ev_.notify(SC_ZERO_TIME);
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) pause_expiry_ev_.notify(ps(rx_pause_until_ps_[i] - now));
}

// A pause timer ran out: stat_rx_pause_req drops that bit.
void Cmac::pause_expiry() {
  const uint64_t now = ClockDomain::now_ps();
  ctx_.set(v_stat_rx_pause_req_, stat_rx_pause_req());
  pause_ev_.notify(SC_ZERO_TIME);
  for (int i = 0; i < 9; ++i)
    if (rx_pause_until_ps_[i] > now) pause_expiry_ev_.notify(ps(rx_pause_until_ps_[i] - now));
}

}  // namespace ernic
