// model/system: the independent wire monitors (model/monitor/wire_monitor.h)
// fed with a pair's events, in one process or split (issue 16: the wire
// monitor runs per flow).
//
// One process: each event goes to its pair's monitor as it happens.
// Split: a pair's monitor runs in the process of its first node (scenario
// order), its home. The other node's process sends the home the events the
// monitor takes, at their instant, as Watch CONTROLs (eth_proto.h; through
// the switch's process with a star): a frame it transmitted to the home's
// node, with the frame's time and its commit time, and a frame from the
// home's node that its RX handler took. The home keeps its own events and
// those it receives in order of (instant, node index, the node's sequence)
// and feeds an instant's events to the monitor once the instant is over
// here (1 ps after it) and every other process's events of it have come in
// (NetLink::watch_floor: the home may run ahead of the others, by up to
// limits.after_error_us: net_link.h's control policy). What is left at the
// end of the run is fed then, once the others' events before the end are
// in (end_checks). A violation is the model error it is in one process,
// at its event's instant (SimContext::error_at), so the run stops after
// limits.after_error_us as in one process and the outputs are the same
// (tb/data/split/m*.yaml). Same-instant events of two nodes reach the
// monitor in node order here and in kernel order in one process; its
// verdicts do not depend on that order.
#include <fmt/format.h>

#include "model/roce/packet.h"
#include "model/system/system.h"

namespace ernic {

namespace {
enum WatchType : uint8_t { kWatchFrame = 1, kWatchDelivered = 2 };
constexpr size_t kWatchHeader = 3;  // type, from, to (node indices); the frame's bytes after
}  // namespace

std::string System::dir_name(size_t from, size_t to) const {
  return nodes[from]->cfg.name + "->" + nodes[to]->cfg.name;
}

monitor::WireMonitor* System::monitor_of(size_t i, size_t j) {
  auto it = wire_monitors.find({std::min(i, j), std::max(i, j)});
  return it == wire_monitors.end() ? nullptr : it->second.get();
}

// The violations an event brought, as model errors at the event's instant.
void System::monitor_report(monitor::WireMonitor& wm, size_t seen, uint64_t at_ps) {
  for (size_t k = seen; k < wm.violations().size(); ++k) {
    const monitor::Violation& v = wm.violations()[k];
    ctx.error_at(at_ps, "monitor " + v.dir, fmt::format("{}: {} (frame #{})", v.rule, v.what, v.frame_index));
  }
}

void System::monitor_frame(size_t from, size_t to, const FrameBytes& f, const roce::Frame* decoded, uint64_t t,
                           std::optional<uint64_t> committed) {
  if (!split()) {  // at once, as watch() would, without a copy of the frame
    if (auto* wm = monitor_of(from, to)) {
      const size_t seen = wm->violations().size();
      wm->on_frame(f, t, dir_name(from, to), committed, decoded);
      monitor_report(*wm, seen, sc_core::sc_time_stamp().value());
    }
    return;
  }
  WatchEvent e{WatchEvent::Frame, from, to, t, committed, f, {}, 0, {}, 0};
  watch(std::move(e));
}

void System::monitor_delivered(size_t from, size_t to, const roce::Frame& f) {
  if (!split()) {  // the decoded frame as it is
    if (auto* wm = monitor_of(from, to)) {
      const size_t seen = wm->violations().size();
      wm->on_delivered(f, sc_core::sc_time_stamp().value(), dir_name(from, to));
      monitor_report(*wm, seen, sc_core::sc_time_stamp().value());
    }
    return;
  }
  WatchEvent e{WatchEvent::Delivered, from, to, sc_core::sc_time_stamp().value(), std::nullopt, roce::encode(f), {}, 0,
               {}, 0};
  watch(std::move(e));
}

void System::monitor_connection(const std::string& client, uint32_t qp_c, const std::string& server, uint32_t qp_s) {
  const int i = port_of_name(client), j = port_of_name(server);
  if (i < 0 || j < 0) return;
  WatchEvent e{WatchEvent::Connection, size_t(i), size_t(j), sc_core::sc_time_stamp().value(), std::nullopt, {},
               client + "->" + server, qp_s, server + "->" + client, qp_c};
  watch(std::move(e));
}

// An event of this process's node: into its monitor now (one process), into
// the home's order (split: its own, or sent to the other node's process).
void System::watch(WatchEvent e) {
  if (!split()) return monitor_take(e, sc_core::sc_time_stamp().value());
  const size_t home = std::min(e.from, e.to);
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (home == split_local_) {
    if (e.kind == WatchEvent::Connection || wire_monitors.count({home, std::max(e.from, e.to)})) {
      watch_buf_.emplace(std::make_tuple(now, split_local_, watch_seq_++), std::move(e));
      monitor_ev_.notify(sc_core::SC_ZERO_TIME);  // fed once its instant is over (monitor_thread)
    }
    return;
  }
  if (e.kind == WatchEvent::Connection || net_link_->peer_gone()) return;  // the home process makes its own
  bridge::NetControl c;
  c.kind = bridge::NetControl::Watch;
  c.node = uint8_t(home);
  c.id = watch_seq_++;
  c.a = e.t;
  c.b = e.committed ? *e.committed + 1 : 0;
  c.data.reserve(kWatchHeader + e.frame.size());
  c.data = {uint8_t(e.kind == WatchEvent::Frame ? kWatchFrame : kWatchDelivered), uint8_t(e.from), uint8_t(e.to)};
  c.data.insert(c.data.end(), e.frame.begin(), e.frame.end());
  net_link_->send_control(std::move(c));
}

// Split: what the other processes sent so far into the order, then every
// event before upto_ps into its monitor.
void System::monitor_feed(uint64_t upto_ps) {
  if (!net_link_) return;
  for (bridge::NetControl& c : net_link_->take_watches()) {
    const std::string why = watch_refusal(c);
    if (!why.empty()) {  // a protocol violation: the monitor would judge what did not happen
      ctx.error("split run", fmt::format("{} sent a wire monitor event (Watch) of {} bytes at {} ps that {}",
                                         net_link_->peer_name(), c.data.size(), c.time_ps, why));
      continue;
    }
    WatchEvent e;
    e.kind = c.data[0] == kWatchFrame ? WatchEvent::Frame : WatchEvent::Delivered;
    e.from = c.data[1];
    e.to = c.data[2];
    e.t = c.a;
    if (c.b) e.committed = c.b - 1;
    e.frame.assign(c.data.begin() + kWatchHeader, c.data.end());
    const size_t sender = e.kind == WatchEvent::Frame ? e.from : e.to;
    watch_last_seq_[sender] = c.id;
    watch_buf_.emplace(std::make_tuple(c.time_ps, sender, c.id), std::move(e));
  }
  while (!watch_buf_.empty() && std::get<0>(watch_buf_.begin()->first) < upto_ps) {
    monitor_take(watch_buf_.begin()->second, std::get<0>(watch_buf_.begin()->first));
    watch_buf_.erase(watch_buf_.begin());
  }
}

// Split, a process that is some pair's home: feeds the events of an
// instant once it is over (1 ps later) and the other processes' events of
// it are in (watch_floor), woken by a local event, a Watch, or the link
// when the floor has passed an event waiting.
void System::monitor_thread() {
  if (wire_monitors.empty()) return;  // the last node: its events go to the others' monitors
  for (;;) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    monitor_feed(std::min(now, net_link_->watch_floor()));
    const uint64_t t = watch_buf_.empty() ? now : std::get<0>(watch_buf_.begin()->first);
    if (t < now)  // behind the floor: the link wakes this when it passes
      sc_core::wait(monitor_ev_ | net_link_->watch_event());
    else if (watch_buf_.empty())
      sc_core::wait(monitor_ev_ | net_link_->watch_event());
    else
      sc_core::wait(sc_core::sc_time(double(t + 1 - now), sc_core::SC_PS), monitor_ev_ | net_link_->watch_event());
  }
}

// Why a Watch from another process cannot be one (empty: it can): its
// header, its pair (ours, the other end the sender), its times (a frame's
// commit at or before its instant; a take at its instant) and its
// sequence (rising per sender: none twice).
std::string System::watch_refusal(const bridge::NetControl& c) const {
  if (c.data.size() < kWatchHeader) return "is shorter than its 3-byte header";
  if (c.data[0] != kWatchFrame && c.data[0] != kWatchDelivered)
    return fmt::format("has the unknown type {}", int(c.data[0]));
  const size_t from = c.data[1], to = c.data[2];
  if (from >= nodes.size() || to >= nodes.size() || from == to)
    return fmt::format("names no pair of nodes ({} -> {})", from, to);
  if (c.node != split_local_ || std::min(from, to) != split_local_ ||
      !wire_monitors.count({split_local_, std::max(from, to)}))
    return fmt::format("is not for this process's monitors (node {}, pair {} -> {})", int(c.node), from, to);
  const size_t sender = c.data[0] == kWatchFrame ? from : to;
  if (sender == split_local_) return "claims this process's own node as its sender";
  if (c.data[0] == kWatchFrame && c.b && c.b - 1 > c.time_ps)
    return fmt::format("has a frame committed at {} ps, after the event", c.b - 1);
  if (c.data[0] == kWatchDelivered && c.a != c.time_ps) return fmt::format("takes a frame at {} ps", c.a);
  auto it = watch_last_seq_.find(sender);
  if (it != watch_last_seq_.end() && c.id <= it->second)
    return fmt::format("has sequence number {} after {}", c.id, it->second);
  return "";
}

// One event into its pair's monitor; `at_ps`: the instant it happened.
void System::monitor_take(const WatchEvent& e, uint64_t at_ps) {
  monitor::WireMonitor* wm = monitor_of(e.from, e.to);
  if (!wm) return;
  const size_t seen = wm->violations().size();
  switch (e.kind) {
    case WatchEvent::Frame:
      wm->on_frame(e.frame, e.t, dir_name(e.from, e.to), e.committed);
      break;
    case WatchEvent::Delivered:
      wm->on_delivered(e.frame, e.t, dir_name(e.from, e.to));
      break;
    case WatchEvent::Connection:
      wm->new_connection(e.dir_cs, e.qp_s, e.dir_sc, e.qp_c);
      break;
  }
  monitor_report(*wm, seen, at_ps);
}

}  // namespace ernic
