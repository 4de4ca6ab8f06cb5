// model/link: a switch port (see switch.h): its egress queue (buffer,
// ECN marking), its line (one frame at a time at the port's rate), the
// PFC frames it sends for its ingress and the pause frames it honours.
#include <fmt/format.h>

#include "model/link/cmac_describe.h"
#include "model/link/ecn.h"
#include "model/link/switch.h"

#include <cmath>
#include "model/roce/packet.h"

namespace ernic {

using namespace sc_core;
using cmac_detail::describe;

SwitchPort::SwitchPort(sc_module_name name, Switch& sw, size_t index)
    : sc_module(name), sw_(sw), index_(index), line_(sw.cfg_.ports.at(index).rate_gbps), mac_(sw.cfg_.mac) {
  mac_[5] = uint8_t(index + 1);
  const std::string scope = sw.scope_ + "." + sw.cfg_.ports[index].name;
  v_queue_ = sw.ctx_.var(scope, "queue_bytes", 32);
  v_ingress_ = sw.ctx_.var(scope, "ingress_bytes", 32);
  v_xoff_ = sw.ctx_.var(scope, "xoff", 1);
  v_paused_ = sw.ctx_.var(scope, "paused", 1);
  SC_THREAD(egress);
}

SwitchPortCounters SwitchPort::counters_now() const {
  SwitchPortCounters c = counters;
  if (holding_) c.paused_ns += (ClockDomain::now_ps() - hold_since_ps_) / 1000;
  return c;
}

void SwitchPort::rx_arrive(FrameBytes frame, uint64_t, bool bad_fcs) { sw_.arrive(index_, std::move(frame), bad_fcs); }

void SwitchPort::log(const char* what, const std::string& value) {
  if (!sw_.ctx_.log) return;
  const uint64_t t = ClockDomain::now_ps();
  sw_.ctx_.log->state(t, "switch", "cmac", sw_.log_clock_ ? sw_.log_clock_->cycle_at(t) : 0, std::nullopt, what,
                      "port " + sw_.cfg_.ports[index_].name + ": " + value);
}

void SwitchPort::ingress_add(uint64_t bytes) {
  ingress_bytes_ += bytes;
  counters.max_ingress_bytes = std::max(counters.max_ingress_bytes, ingress_bytes_);
  sw_.ctx_.set(v_ingress_, ingress_bytes_);
  const uint16_t bit = uint16_t(1u << sw_.cfg_.pfc.priority);
  if (ingress_bytes_ >= sw_.cfg_.pfc.xoff_bytes && !(tx_pause_.req & bit)) {
    tx_pause_.req |= bit;
    wake_.notify(SC_ZERO_TIME);
  }
}

void SwitchPort::ingress_release(uint64_t bytes) {
  ingress_bytes_ -= bytes;
  sw_.ctx_.set(v_ingress_, ingress_bytes_);
  const uint16_t bit = uint16_t(1u << sw_.cfg_.pfc.priority);
  if (ingress_bytes_ <= sw_.cfg_.pfc.xon_bytes && (tx_pause_.req & bit)) {
    tx_pause_.req &= uint16_t(~bit);
    wake_.notify(SC_ZERO_TIME);
  }
}

// A pause frame from the node: with `pfc`, the priorities it names are
// paused (or resumed) at the egress.
void SwitchPort::rx_pause(const pfc::PauseFrame& p, uint64_t now) {
  ++counters.pause_rx;
  if (!sw_.cfg_.pfc.on) {
    log("pfc_rx", "pause frame ignored (no pfc)");
    return;
  }
  const uint16_t named = rx_pause_.apply(p, now, [this](uint64_t q) { return line_.quanta_ps(q); });
  log("pfc_rx", fmt::format("{} 0x{:03x}: paused 0x{:03x}", p.pfc ? "PFC" : "PAUSE", named, rx_pause_.stat(now)));
  wake_.notify(SC_ZERO_TIME);
}

bool SwitchPort::held(const Entry& e, uint16_t stat) const {
  if (stat >> pfc::kGlobalBit & 1) return true;  // 802.3x PAUSE: everything
  return e.lossless && (stat >> sw_.cfg_.pfc.priority & 1);
}

// The ECN decision for a frame queued now behind q_bytes_ (switch.h).
bool SwitchPort::mark_ecn(FrameBytes& f) {
  const SwitchEcn& c = sw_.cfg_.ecn;
  if (!c.on) return false;
  const auto cp = ecn::field(f.data(), f.size());
  if (!cp || *cp == ecn::kCe || (*cp == ecn::kNotEct && !c.mark_not_ect)) return false;
  const uint64_t q = q_bytes_;
  bool mark;
  if (!c.red) {
    mark = q > c.threshold_bytes;
  } else if (c.weight < 1.0) {  // the average queue
    const double a = red_avg_;
    if (a < double(c.min_bytes))
      mark = false;
    else if (a >= double(c.max_bytes))
      mark = true;
    else
      mark = sw_.draw() < c.probability * (a - double(c.min_bytes)) / double(c.max_bytes - c.min_bytes);
  } else if (q < c.min_bytes) {
    mark = false;
  } else if (q >= c.max_bytes) {
    mark = true;
  } else {
    const double p = c.probability * double(q - c.min_bytes) / double(c.max_bytes - c.min_bytes);
    mark = sw_.draw() < p;
  }
  if (!mark) return false;
  ecn::set_ce(f);
  return true;
}

// RED's average at an arrival (Floyd and Jacobson 1993): after an idle
// period it first decays as if frames of kRedIdleFrameBytes had left at
// line rate meanwhile, then avg <- (1 - w) avg + w q.
void SwitchPort::red_arrival() {
  const SwitchEcn& c = sw_.cfg_.ecn;
  if (!c.on || !c.red || c.weight >= 1.0) return;
  if (q_bytes_ == 0) {
    const uint64_t idle = ClockDomain::now_ps() - idle_since_ps_;
    const double m = double(idle) / double(line_.frame_ps(kRedIdleFrameBytes) + line_.ifg_ps());
    red_avg_ *= std::pow(1.0 - c.weight, m);
  }
  red_avg_ = (1.0 - c.weight) * red_avg_ + c.weight * double(q_bytes_);
}

void SwitchPort::release_departure(uint64_t now) {
  if (!leaving_.n || leaving_.ps > now) return;
  const uint64_t n = leaving_.n;
  leaving_.n = 0;
  q_bytes_ -= n;  // its last byte is out
  if (q_bytes_ == 0) idle_since_ps_ = leaving_.ps;
  sw_.ctx_.set(v_queue_, q_bytes_);
  if (leaving_.lossless) sw_.ports_[leaving_.ingress]->ingress_release(n);
}

uint64_t SwitchPort::now_ps() { return ClockDomain::now_ps(); }

void SwitchPort::enqueue(Entry e) {
  sw_.release_departures(ClockDomain::now_ps());
  const uint64_t n = e.f.size();
  red_arrival();
  if (q_bytes_ + n > sw_.cfg_.buffer_bytes) {
    ++counters.dropped;
    counters.dropped_bytes += n;
    if (n > sw_.cfg_.buffer_bytes) {  // never fits, however empty the queue: an event the first time
      const std::string what = fmt::format("frame larger than the buffer ({} bytes): {} ({} bytes) from port {}",
                                           sw_.cfg_.buffer_bytes, describe(e.f), n, sw_.cfg_.ports[e.ingress].name);
      if (!oversize_seen_)
        sw_.ctx_.event(sw_.scope_ + "." + sw_.cfg_.ports[index_].name, what + "; frames this long never pass");
      oversize_seen_ = true;
      log("switch_drop", what);
    } else {
      log("switch_drop", fmt::format("buffer full ({} of {} bytes queued): {} ({} bytes) from port {}", q_bytes_,
                                     sw_.cfg_.buffer_bytes, describe(e.f), n, sw_.cfg_.ports[e.ingress].name));
    }
    if (e.lossless) sw_.ports_[e.ingress]->ingress_release(n);
    return;
  }
  if (mark_ecn(e.f)) {
    ++counters.ecn_marked;
    if (sw_.cfg_.ecn.red && sw_.cfg_.ecn.weight < 1.0)
      log("ecn_mark", fmt::format("CE at {} bytes queued (average {:.0f}): {}", q_bytes_, red_avg_, describe(e.f)));
    else
      log("ecn_mark", fmt::format("CE at {} bytes queued: {}", q_bytes_, describe(e.f)));
  }
  q_bytes_ += n;
  counters.max_queue_bytes = std::max(counters.max_queue_bytes, q_bytes_);
  sw_.ctx_.set(v_queue_, q_bytes_);
  q_.push_back(std::move(e));
  wake_.notify(SC_ZERO_TIME);
}

// Puts a frame on the line now and waits until its last byte is out.
void SwitchPort::transmit(FrameBytes f, bool own) {
  const uint64_t t0 = ClockDomain::now_ps();
  const uint64_t first = t0 + line_.preamble_ps();
  const uint64_t last = t0 + line_.frame_ps(f.size());
  line_free_ps_ = last + line_.ifg_ps();
  ++counters.frames_out;
  counters.bytes_out += f.size();
  sw_.ctx_.bump();
  if (own) {
    if (sw_.tap_wire) sw_.tap_wire->write_ordered(f.data(), f.size(), first, sw_.tap_wire_source + uint32_t(index_));
    if (sw_.on_tx) sw_.on_tx(index_, f, first);
  }
  if (wire_out) wire_out->send(std::move(f), first, last);
  wait(ps(last - t0));
}

// The port's line: pause frames first at a frame boundary, then the oldest
// queued frame no pause holds; asleep while there is nothing to do.
void SwitchPort::egress() {
  const SwitchPfc& pc = sw_.cfg_.pfc;
  for (;;) {
    uint64_t now = ClockDomain::now_ps();
    if (line_free_ps_ > now) {
      wait(ps(line_free_ps_ - now));
      continue;
    }
    if (auto due = tx_pause_.take(now, pc.quanta, line_.quanta_ps(pc.refresh_quanta))) {
      const bool off = due->xoff;
      if (off)
        ++counters.pfc_xoff_sent;
      else
        ++counters.pfc_xon_sent;
      sw_.ctx_.set(v_xoff_, tx_pause_.standing != 0);
      log("pfc_tx", fmt::format("{} priority {} (time {}), {} bytes of the class from the port inside", off ? "XOFF" : "XON",
                                pc.priority, off ? pc.quanta : 0, ingress_bytes_));
      transmit(pfc::build(mac_.data(), due->frame), /*own=*/true);
      continue;
    }
    uint64_t wake = tx_pause_.next_ps(now);
    if (!q_.empty()) {
      const uint16_t stat = rx_pause_.stat(now);
      const bool head_held = held(q_.front(), stat);
      if (!head_held && holding_) {
        holding_ = false;
        counters.paused_ns += (now - hold_since_ps_) / 1000;
        sw_.ctx_.set(v_paused_, 0);
        log("pfc_release", fmt::format("sending again after {} ns", (now - hold_since_ps_) / 1000));
      }
      if (head_held && !holding_) {
        holding_ = true;
        hold_since_ps_ = now;
        sw_.ctx_.set(v_paused_, 1);
        log("pfc_hold", fmt::format("paused 0x{:03x}: {} waits", stat, describe(q_.front().f)));
      }
      // The oldest frame no pause holds: the head, or a frame of another
      // class behind a held one (a queue per class, served oldest first).
      auto it = q_.begin();
      while (it != q_.end() && held(*it, stat)) ++it;
      if (it != q_.end()) {
        Entry e = std::move(*it);
        q_.erase(it);
        const uint64_t n = e.f.size();
        leaving_ = {now + line_.frame_ps(n), n, e.ingress, e.lossless};
        transmit(std::move(e.f), /*own=*/false);
        release_departure(ClockDomain::now_ps());  // unless an arrival at this instant did it first
        continue;
      }
      wake = std::min(wake, rx_pause_.next_expiry(now));
    }
    if (wake == UINT64_MAX)
      wait(wake_);
    else
      wait(ps(wake - now), wake_);
  }
}

}  // namespace ernic
