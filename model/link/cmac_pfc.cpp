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
  if (bits == tx_pause_.req) return;
  tx_pause_.req = bits;
  ctx_.set(v_ctl_tx_pause_req_, bits);
  pause_ev_.notify(SC_ZERO_TIME);
}

uint16_t Cmac::stat_rx_pause_req() const { return rx_pause_.stat(ClockDomain::now_ps()); }

// The earliest time a standing XOFF must be refreshed (UINT64_MAX: none),
// or now when an XOFF or XON is due at once.
uint64_t Cmac::next_refresh_ps() const { return tx_pause_.next_ps(ClockDomain::now_ps()); }

std::optional<FrameBytes> Cmac::take_pause_frame(uint64_t now) {
  const auto due = tx_pause_.take(now, p_.pfc_quanta, quanta_ps(p_.pfc_refresh_quanta));
  if (!due) return std::nullopt;
  std::string what;
  for (int i = 0; i < 9; ++i) {
    const uint16_t bit = uint16_t(1u << i);
    if (!((due->xoff | due->xon) & bit)) continue;
    const bool off = due->xoff & bit;
    const uint16_t q = off ? p_.pfc_quanta : 0;
    if (off)
      ++pfc_.xoff_sent;
    else
      ++pfc_.xon_sent;
    what += fmt::format("{}{} {} (time {})", what.empty() ? "" : ", ", off ? "XOFF" : "XON",
                        i < 8 ? fmt::format("priority {}", i) : std::string("all (802.3x PAUSE)"), q);
  }
  log_state("pfc_tx", what);
  return pfc::build(mac, due->frame);
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
  const uint64_t wake = std::min(next_refresh_ps(), rx_pause_.next_expiry(now));
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
  const uint16_t named = rx_pause_.apply(p, now, [this](uint64_t q) { return quanta_ps(q); });
  std::string what;
  for (int i = 0; i < 9; ++i) {
    if (!(named >> i & 1)) continue;
    const uint16_t q = i < 8 ? p.time[i] : p.time[0];
    what += fmt::format("{}{} time {}", what.empty() ? "" : ", ",
                        i < 8 ? fmt::format("priority {}", i) : std::string("all (802.3x PAUSE)"), q);
  }
  const uint16_t stat = stat_rx_pause_req();
  ctx_.set(v_stat_rx_pause_req_, stat);
  log_state("pfc_rx", fmt::format("{}: stat_rx_pause_req = 0x{:03x}", what, stat));
  pause_ev_.notify(SC_ZERO_TIME);
  for (int i = 0; i < 9; ++i)
    if (rx_pause_.until_ps[i] > now) pause_expiry_ev_.notify(ps(rx_pause_.until_ps[i] - now));
}

// A pause timer ran out: stat_rx_pause_req drops that bit.
void Cmac::pause_expiry() {
  const uint64_t now = ClockDomain::now_ps();
  ctx_.set(v_stat_rx_pause_req_, stat_rx_pause_req());
  pause_ev_.notify(SC_ZERO_TIME);
  for (int i = 0; i < 9; ++i)
    if (rx_pause_.until_ps[i] > now) pause_expiry_ev_.notify(ps(rx_pause_.until_ps[i] - now));
}

}  // namespace ernic
