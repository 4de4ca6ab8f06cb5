// model/system: a split run's side of the System (split.h): what can run
// split, the link to the other process, each step's participants, the
// step's end across the processes, MR records and memory of the other
// process's node. How the run ends: split_end.cpp.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "model/system/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

#include "model/bridge/net_address.h"
#include "model/bridge/net_link.h"
#include "model/scenario/split_plan.h"
#include "model/sim/settle.h"
#include "model/system/system.h"

namespace ernic {

using namespace sc_core;

namespace {

// A fact's bytes: an MR record (register_mr): its node's index (a star's
// processes hear every node's MRs, and two nodes may name an MR alike),
// then the record.
constexpr uint8_t kFactMr = 'M', kFactExchange = 'X', kFactFailed = 'F';
constexpr size_t kMrFactHeader = 2 + 8 * 8;

std::vector<uint8_t> mr_fact(const host::Mr& m, size_t node) {
  std::vector<uint8_t> b(kMrFactHeader);
  b[0] = kFactMr;
  b[1] = uint8_t(node);
  const uint64_t f[8] = {m.index, m.pd, m.va, m.pa, m.length, m.rkey, m.guard_before, m.guard_after};
  std::memcpy(b.data() + 2, f, sizeof f);
  b.insert(b.end(), m.name.begin(), m.name.end());
  return b;
}

host::Mr mr_of_fact(const std::vector<uint8_t>& b, size_t* node) {
  if (b.size() < kMrFactHeader || b[0] != kFactMr)
    throw std::runtime_error("split run: a malformed MR record from the other process");
  uint64_t f[8];
  std::memcpy(f, b.data() + 2, sizeof f);
  host::Mr m;
  m.index = uint32_t(f[0]), m.pd = uint32_t(f[1]), m.va = f[2], m.pa = f[3], m.length = f[4];
  m.rkey = uint32_t(f[5]), m.guard_before = f[6], m.guard_after = f[7];
  m.name.assign(b.begin() + kMrFactHeader, b.end());
  *node = b[1];
  return m;
}

}  // namespace

SplitLane& System::lane() {
  return lanes_[sc_get_current_process_handle().get_process_object()];
}

bool System::local(const std::string& node_name) const {
  return !net_link_ || (!split_hub_ && node_name == scenario.nodes[split_local_].name);
}

// The link to the other process: its line from this node through the
// bridge, the other's into this node's CMAC (system.cpp's join_wires for
// one process).
void System::join_split(const LinkParams& lp, const SplitOptions& so) {
  const size_t i = split_local_, j = 1 - split_local_;
  wire_ab = std::make_unique<Wire>("wire_ab", lp.delay_ps, lp.rate_gbps, scenario.seed * 0xD1B54A32D192ED03ull + 1);
  wire_ba = std::make_unique<Wire>("wire_ba", lp.delay_ps, lp.rate_gbps, scenario.seed * 0xD1B54A32D192ED03ull + 2);
  wire_ab->label = nodes[0]->cfg.name + "->" + nodes[1]->cfg.name;
  wire_ba->label = nodes[1]->cfg.name + "->" + nodes[0]->cfg.name;
  Wire* out = i == 0 ? wire_ab.get() : wire_ba.get();
  Wire* in = i == 0 ? wire_ba.get() : wire_ab.get();
  nodes[i]->cmac->wire_out = out;
  in->set_dst(nodes[i]->cmac.get());
  // This node's cmac_link_up (stat_rx_status): the line into it is up (a
  // `link` step sets it in every process, as join_wires reads it).
  if (QpSetupFsm* f = nodes[i]->qp_setup.get()) f->link_up = [in] { return in->faults().link_up(); };
  out->on_fault = [this](const std::string& label, const FaultApplied& a) { report_fault(label, a); };
  const bridge::WallTimeout to{std::chrono::milliseconds(so.timeout_ms)};
  const std::string other = "node " + nodes[j]->cfg.name + "'s process";
  const bool listen = !so.listen.empty();
  std::unique_ptr<bridge::NetPeer> peer = bridge::open_net_peer(listen ? so.listen : so.connect, listen, 0, other, to);
  introduce_split(*peer, so, to, nodes[j]->cfg.name);
  net_link_ = std::make_unique<bridge::NetLink>("net_link", to);
  if (so.chaos_us) net_link_->set_chaos(so.chaos_seed + i, so.chaos_us);
  net_link_->add_peer(std::move(peer), lp.delay_ps, LineRate(lp.rate_gbps).preamble_ps(), &in->rx());
  out->out = &net_link_->out(0);
  sc_spawn(sc_bind(&System::watch_peer_end, this), "split_peer_end");
  sc_spawn(sc_bind(&System::monitor_thread, this), "split_monitor");
  net_link_->enable_control(local_reader(), local_progress(),
                            [this](uint64_t id) { return split_underway(id); });
  set_split_policy();
}

// What binds the other processes (net_link.h, the control policy): this
// process is passive while every lane waits for another's word
// (split_next) and nothing of its own can end the run at once: the
// switch's process (it relays the others' words: the link says when), or
// its node is
// an ERNIC node on the built-in host (no program, no qp_setup_fsm, not the
// ideal peer) whose requester is idle when livelocks are watched (a
// livelock ends the run at once). A model error ends the run
// limits.after_error_us after it (at least 1 ps); the wire monitors judge
// events up to that much behind (split_monitor.cpp).
bool System::split_passive() const {
  if (finished || lanes_.empty() || split_waiting_ != lanes_.size()) return false;
  if (split_hub_) return true;  // the switch: its model errors end a run after after_error_us
  const Node& n = *nodes[split_local_];
  if (!n.ernic || !n.sc_host || n.qp_setup || n.peer) return false;
  return ctx.livelock_retries == 0 || n.ernic->requester_idle();
}

void System::set_split_policy() {
  auto unjudged = [this] { return watch_buf_.empty() ? ~uint64_t(0) : std::get<0>(watch_buf_.begin()->first); };
  auto erred = [this] { return ctx.errors.empty() ? ~uint64_t(0) : ctx.errors.front().time_ps; };
  // Not while something is left to run at this instant: a held lane may
  // have been let go (a StepUnderway taken) and count as waiting still.
  auto passive = [this] { return split_passive() && !sc_pending_activity_at_current_time(); };
  net_link_->set_control_policy(passive, scenario.limits.after_error_us * 1000000ull,
                                unjudged, erred, [this](uint64_t upto) { monitor_feed(upto); });
  // A model error is stated (SYNC lax_ps) at its instant, before any
  // CONTROL of a later instant could raise the peers' view of this
  // process's progress past it.
  sc_spawn(
      [this] {
        for (;;) {
          wait(ctx.error_ev);
          net_link_->policy_changed();
        }
      },
      "split_error_said");
}

// The other processes' reads of this process's node's host memory.
bridge::NetMemReader System::local_reader() {
  const size_t i = split_local_;
  Node* me = i < nodes.size() && !split_hub_ ? nodes[i].get() : nullptr;
  return [me, i](uint8_t node, uint64_t addr, uint64_t len) {
    if (!me || node != i) throw std::runtime_error(fmt::format("node index {} is not this process's", int(node)));
    if (!me->mem->in_range(addr, len))
      throw std::runtime_error(fmt::format("[0x{:x}, +{}) lies outside {}'s host memory", addr, len, me->cfg.name));
    const uint8_t* p = std::as_const(*me->mem).data(addr, len);
    return std::vector<uint8_t>(p, p + len);
  };
}

// ... and of its watchdog progress (a ProgressRequest).
bridge::NetProgressReader System::local_progress() {
  return [this](uint8_t node) {
    if (node != bridge::NetControl::kNodeHere && (split_hub_ || node != split_local_))
      throw std::runtime_error(fmt::format("node index {} is not this process's", int(node)));
    // A self-timed step's end (now, while one runs here) counts as
    // progress to the other processes' watchdogs too.
    const uint64_t now = sc_time_stamp().value();
    return std::max(ctx.progress_before(now), bounded_.timed_at(now));
  };
}

std::optional<uint64_t> System::split_progress() {
  uint64_t most = 0;
  bool ended = false;
  auto ask = [&](size_t peer, uint8_t node) {
    if (ended) return;
    try {
      most = std::max(most, net_link_->read_progress(peer, node));
    } catch (const bridge::NetPeerError&) {
      // Gone or ended: this run ends with it (watch_peer_end says how).
      // Another error (a refusal) leaves that process's progress out.
      ended = net_link_->peer_gone();
    }
  };
  if (split_hub_) {
    for (size_t k = 0; k < nodes.size(); ++k) ask(k, bridge::NetControl::kNodeHere);
  } else {
    ask(0, bridge::NetControl::kNodeHere);  // the other node's process, or a star's switch
    if (split_star())
      for (size_t k = 0; k < nodes.size(); ++k)
        if (k != split_local_) ask(0, uint8_t(k));
  }
  if (ended) return std::nullopt;
  return most;
}

// The two processes check they belong together before anything runs: the
// same scenario (its bytes), seed and datapath; returns the other's node
// (checked against `expect` unless it is empty).
std::string System::introduce_split(bridge::NetPeer& peer, const SplitOptions& so, bridge::WallTimeout to,
                                    const std::string& expect) {
  std::ifstream in(scenario.file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (unsigned char ch : text + "|" + scenario.datapath_name()) h = (h ^ ch) * 0x100000001b3ull;
  bridge::NetControl hi;
  hi.kind = bridge::NetControl::Fact;
  hi.id = 0;
  hi.a = h;
  hi.b = scenario.seed;
  hi.data.assign(so.node.begin(), so.node.end());
  peer.send_control(hi);
  std::optional<bridge::NetControl> got;
  while (!(got = peer.pop_control())) peer.recv_one(to);
  const std::string other(got->data.begin(), got->data.end());
  if (got->id != 0 || got->a != h || got->b != scenario.seed)
    throw std::runtime_error("split run: " + peer.name() + " runs another scenario file, seed or datapath than this "
                             "one; both processes must run the same file with the same options");
  if (!expect.empty() && other != expect)
    throw std::runtime_error("split run: the other process runs node '" + other + "', not " + expect);
  return other;
}

bool System::split_peer_passes(const Step& s) {
  if (!split_lanes_wait()) return false;
  // A barrier whose branches have all arrived here has them all there too:
  // the other processes' ended now, or earlier by a failure there (that
  // end is in already). A star's switch process ends a step once every
  // node's process has, so its end is the latest of theirs: now, too.
  switch (split_end(s)) {
    case SplitEnd::alike:
    case SplitEnd::at_start: return true;
    case SplitEnd::barrier: return lane().barrier_full;
    case SplitEnd::own: break;
  }
  // Every participant is this process's node: the others sent their ends
  // as the step began.
  const std::vector<std::string> p = split_participants(s);
  return !p.empty() && std::all_of(p.begin(), p.end(), [&](const std::string& n) { return local(n); });
}

bool System::split_lanes_wait() const { return split_star() || nodes.size() == 2; }

bool System::split_lane_ahead_may_end_now(uint64_t lane_id) {
  const uint64_t now = sc_time_stamp().value();
  bool hold = false;
  std::map<uint64_t, SplitLane*> ask;  // by lane: the queries go out alike in every run
  for (auto& [obj, l] : lanes_) {
    if (l.id >= lane_id) continue;
    if (l.end_due_ps == now) hold = true;
    // After a failure's instant no branch's step starts (runner.cpp): a
    // lane ahead may never end its step then.
    if (l.awaiting_end && l.underway_ps != now && first_fail_ps_ >= now) {
      hold = true;
      if (l.asked_ps != now) ask[l.id] = &l;
    }
  }
  for (auto& [id, l] : ask) {
    l->asked_ps = now;
    bridge::NetControl q;
    q.kind = bridge::NetControl::StepQuery;
    q.id = l->id << 32 | l->seq;
    net_link_->send_control(q);
  }
  return hold;
}

std::optional<bool> System::split_underway(uint64_t id) const {
  for (const auto& [obj, l] : lanes_)
    if (l.id == id >> 32) {
      const uint64_t seq = id & 0xFFFFFFFF;
      if (l.seq < seq || (l.seq == seq && !l.ending && l.held)) return std::nullopt;
      return l.seq == seq && !l.ending;
    }
  // Lanes are numbered as they begin: one made and gone has ended its
  // steps; one not made yet has not begun (its parallel not reached).
  if ((id >> 32) <= lanes_made_) return false;
  return std::nullopt;
}

bool System::split_participates(const Step& s) const {
  const std::vector<std::string> p = split_participants(s);
  if (p.empty()) return true;
  const std::string me = split_hub_ ? kSplitSwitch : scenario.nodes[split_local_].name;
  return std::find(p.begin(), p.end(), me) != p.end();
}

void System::split_share_mr(const host::Mr& m) {
  if (split()) split_fact(mr_fact(m, split_local_));
}

void System::split_fact(const std::vector<uint8_t>& data) {
  bridge::NetControl c;
  c.kind = bridge::NetControl::Fact;
  c.id = split_tag();
  c.data = data;
  net_link_->send_control(c);
}

// The controls the link holds into split_pending_; the other process's
// first failure (a fact sent at its instant, split_tell_failure) is taken
// here, for every lane.
void System::split_drain() {
  while (auto c = net_link_->take_control()) {
    if (c->kind == bridge::NetControl::Fact && c->data.size() == 1 && c->data[0] == kFactFailed)
      first_fail_ps_ = std::min(first_fail_ps_, c->time_ps);
    else
      split_pending_.push_back(std::move(*c));
  }
}

void System::split_tell_failure() {
  if (split() && !net_link_->peer_gone()) split_fact({kFactFailed});
}

// The next control message of this step of the lane from the other
// process (waiting in simulated time, held at the other's control
// horizon); nullopt when the run stops or the other process has gone (then
// the step fails).
std::optional<bridge::NetControl> System::split_next() {
  SplitLane& ln = lane();
  bool peer_end_seen = false;
  for (;;) {
    // This run has stopped in this delta cycle (stop_after_error): a lane
    // that runs after that takes nothing more, as one process's lanes,
    // which reach no settled point, do nothing more.
    if (sc_get_simulator_status() == SC_SIM_USER_STOP) return std::nullopt;
    split_drain();
    // Another process's part of this step is under way at that instant
    // (split_lane_ahead_may_end_now's query): the lanes behind go on then.
    // One for an earlier step of the lane came after its end: dropped.
    for (auto it = split_pending_.begin(); it != split_pending_.end();) {
      if (it->id >> 32 != ln.id || it->kind != bridge::NetControl::StepUnderway) {
        ++it;
        continue;
      }
      if (it->id == split_tag() && ln.awaiting_end) {
        ln.underway_ps = it->time_ps;
        const uint64_t now = sc_time_stamp().value();
        lane_end_ev_.notify(sc_time(double(it->time_ps > now ? it->time_ps - now : 0), SC_PS));
      }
      it = split_pending_.erase(it);
    }
    for (auto it = split_pending_.begin(); it != split_pending_.end(); ++it) {
      if (it->id >> 32 != ln.id) continue;
      bridge::NetControl c = std::move(*it);
      split_pending_.erase(it);
      if (c.id != split_tag())
        throw std::runtime_error(fmt::format("split run: the other process is at step {} of lane {}, this one at "
                                             "step {}", c.id & 0xFFFFFFFF, ln.id, ln.seq));
      return c;
    }
    if (!net_link_->error().empty() || sc_get_status() == SC_STOPPED) return std::nullopt;
    if (net_link_->peer_gone()) {
      // Its RunEnd came before it went: how its run ended is this run's end
      // (watch_peer_end, which goes first at this settled point), not a
      // step left waiting (a race seen under chaos and over shm).
      if (net_link_->peer_run_end() >= 0 && !peer_end_seen) {
        peer_end_seen = true;
        settle::wait_settled(settle::Stage::kPeerEnd, ~uint64_t(0));
        continue;
      }
      fail(ln.loc, "split run: " + net_link_->peer_name() + " ended before step `" + ln.kind + "` ended");
      return std::nullopt;
    }
    // Not a self-timed wait: the step runs in another process, whose answer
    // to the watchdog's ProgressRequest counts its self-timed steps (their
    // end, or now while one runs); a lane waiting here must not hold off the
    // watchdog of this process's other lanes.
    ++split_waiting_;
    wait(net_link_->control_event() | fail_ev_);
    --split_waiting_;
    split_woke_.notify(SC_ZERO_TIME);
  }
}

// The pair's other end is the partner: its process's values. A star's
// switch process relays a fact to every other process, so the one taken
// is the one its node sent: another pair's trade in the same step (init's
// nodes one after the other) stays for that pair.
std::vector<uint64_t> System::split_exchange(const std::vector<uint64_t>& ours, const std::string& a,
                                             const std::string& b) {
  const int partner = port_of_name(local(a) ? b : a);
  if (partner < 0 || local(a) == local(b))
    throw std::runtime_error("split run: a trade between " + a + " and " + b + " in a process that runs " +
                             (local(a) ? "both" : "neither"));
  return split_trade(ours, 1, partner).at(0);
}

// Every other process's values (a star: each node's process hears the
// others' through the switch's, which hears them all: nodes.size() each).
// Every process sums at this instant (expect_idle at its end,
// expect_compliance as it begins), so the lanes behind this one wait while
// it trades, as for its step's end (split_end: alike; runner.cpp's EndDue
// lets them go once the step has ended).
std::vector<uint64_t> System::split_sum(const std::vector<uint64_t>& ours) {
  if (split_lanes_wait()) lane().end_due_ps = sc_time_stamp().value();
  std::vector<uint64_t> sum = ours;
  for (const auto& theirs : split_trade(ours, split_star() ? nodes.size() : 1, -1))
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += theirs[k];
  return sum;
}

// Ours sent as a fact (its first bytes: the kind and this process's node
// index, the switch's NetLink::kHubNode); the next `others` such facts of the
// step (the same size; from node index `from` only, or -1: any process)
// taken, in arrival order; the facts ahead of them stay for the step's end
// (or a later trade of the step).
std::vector<std::vector<uint64_t>> System::split_trade(const std::vector<uint64_t>& ours, size_t others, int from) {
  constexpr size_t kHeader = 2;
  std::vector<uint8_t> b(kHeader + 8 * ours.size());
  b[0] = kFactExchange;
  b[1] = split_hub_ ? bridge::NetLink::kHubNode : uint8_t(split_local_);
  std::memcpy(b.data() + kHeader, ours.data(), 8 * ours.size());
  split_fact(b);
  std::deque<bridge::NetControl> before;  // facts ahead of it stay for the step's end
  std::vector<std::vector<uint64_t>> got;
  while (got.size() < others) {
    std::optional<bridge::NetControl> c = split_next();
    if (!c) {
      // Stopped in this delta cycle (split_next): the step ends unrecorded,
      // as one process's does.
      if (sc_get_simulator_status() == SC_SIM_USER_STOP) throw SplitPartnerFailed{};
      throw std::runtime_error("split run: the other process did not trade its values");
    }
    if (c->kind == bridge::NetControl::Fact && !c->data.empty() && c->data[0] == kFactExchange &&
        c->data.size() == b.size() && (from < 0 || c->data[1] == uint8_t(from))) {
      std::vector<uint64_t> theirs(ours.size());
      std::memcpy(theirs.data(), c->data.data() + kHeader, 8 * ours.size());
      got.push_back(std::move(theirs));
      continue;
    }
    // The partner's step ended without its values (point to point every
    // StepEnd is the other's; a star's names its node): its part failed
    // first (a driver's error), and that failure is the step's.
    const bool partner_end = from >= 0 && c->kind == bridge::NetControl::StepEnd &&
                             (!split_star() || c->node == uint8_t(from));
    const bool failed = partner_end && c->b;
    before.push_back(std::move(*c));
    if (partner_end) {
      split_pending_.insert(split_pending_.begin(), before.begin(), before.end());
      if (failed) throw SplitPartnerFailed{};
      throw std::runtime_error("split run: the other end's process ended the step without trading its values");
    }
  }
  split_pending_.insert(split_pending_.begin(), before.begin(), before.end());
  return got;
}

bool System::split_await_request(Node& server, const host::Connection& c, const std::string& client) {
  const int client_ix = port_of_name(client);
  using W = host::HostBus;
  while (c.state != host::VerbsState::Rtr && c.state != host::VerbsState::Rts) {
    split_drain();
    for (const auto& m : split_pending_)
      if (m.kind == bridge::NetControl::StepEnd && m.id == split_tag() &&
          (!split_star() || m.node == client_ix)) {
        // The client gave up (its step failed there): its failure is the
        // step's, as in one process, where the server's end adds none.
        if (m.b) throw SplitPartnerFailed{};
        fail(lane().loc, fmt::format("connect: no ConnectRequest reached {} QP{}", server.cfg.name, c.qpn));
        return false;
      }
    if (!net_link_->error().empty() || net_link_->peer_gone() || sc_get_status() == SC_STOPPED) return false;
    // As one process's connect: not self-timed (the client's retries are).
    wait(server.sc_host->event(W::kMemory) | server.sc_host->event(W::kEstablished) | net_link_->control_event());
  }
  return true;
}

// The step's end in both processes: ours sent, the other's awaited; both
// continue at the later. A step that failed in the other process ends the
// steps here too (as in one process: no step runs after a failure).
void System::split_barrier() {
  bridge::NetControl e;
  e.kind = bridge::NetControl::StepEnd;
  e.id = split_tag();
  // The switch's process (split_star.cpp) ends the step once every node's
  // has: its end, sent last, is the latest; a node's process waits for it.
  const size_t ends_due = split_hub_ ? nodes.size() : 1;
  std::set<uint8_t> ended;
  // This step's failure took the QPs' status (snapshot_qps, as one process
  // takes every node's at that instant): here (the lane's flag), or in
  // another process (its end says so; the switch's process passes on any
  // node's). Every process whose nodes' status this step did not take
  // takes it at the step's end, whatever failed before: one process's
  // stall_report is the last snapshot's, every node in it.
  const bool snapped_here = std::exchange(lane().snapped, false);
  bool snap = false;  // another process's part of this step took its QPs' status
  auto send = [&] {
    e.node = split_hub_ ? bridge::NetLink::kHubNode : 0;
    e.b = uint64_t(lane().id == 0 || lane().failed ? exit_code : 0);  // a branch: its own step's failure
    e.a = snapped_here || snap ? 1 : 0;
    net_link_->send_control(e);
  };
  if (!split_hub_) send();
  while (ended.size() < ends_due) {
    std::optional<bridge::NetControl> c = split_next();
    if (!c) return;
    if (c->kind == bridge::NetControl::Fact) {
      if (!c->data.empty() && c->data[0] == kFactMr) {
        size_t from = 0;
        host::Mr m = mr_of_fact(c->data, &from);
        if (from >= nodes.size())
          throw std::runtime_error(fmt::format("split run: an MR record of node index {}, which this scenario "
                                               "does not have", from));
        remote_mrs_[{nodes[from]->cfg.name, m.name}] = m;
      }
      continue;
    }
    // A star's node: another node's end, relayed (split_await_request's).
    if (split_star() && !split_hub_ && c->node != bridge::NetLink::kHubNode) continue;
    ended.insert(c->node);
    const uint64_t now = sc_time_stamp().value();
    if (c->time_ps > now) wait(sc_time(double(c->time_ps - now), SC_PS));
    if (c->b) lane().failed = true;
    snap = snap || c->a;
    if (c->b && exit_code == 0) {
      const bool from_node = split_hub_ && c->node < nodes.size();
      peer_failed(split_peer_exit_code(c->b), "its step failed",
                  from_node ? "node " + nodes[c->node]->cfg.name + "'s process" : "");
    }
  }
  if (snap && !snapped_here) {
    snapshot_qps();
    lane().snapped = false;  // taken for this step's end, not the next one's
  }
  if (split_hub_) send();
}

const host::Mr* System::find_mr_any(const std::string& node_name, const std::string& mr) {
  if (local(node_name)) return node(node_name)->find_mr(mr);
  auto it = remote_mrs_.find({node_name, mr});
  return it == remote_mrs_.end() ? nullptr : &it->second;
}

std::vector<uint8_t> System::mem_bytes(const std::string& node_name, uint64_t pa, uint64_t len) {
  if (local(node_name)) {
    Node* n = node(node_name);
    if (!n->mem->in_range(pa, len)) throw std::runtime_error("memory read outside " + node_name + "'s host memory");
    const uint8_t* p = std::as_const(*n->mem).data(pa, len);
    return std::vector<uint8_t>(p, p + len);
  }
  size_t idx = 0;
  while (scenario.nodes[idx].name != node_name) ++idx;
  std::vector<uint8_t> out;
  out.reserve(len);
  for (uint64_t at = 0; at < len;) {  // a message carries at most 65,535 bytes after its header
    const uint64_t n = std::min<uint64_t>(len - at, bridge::NetLink::kMaxRead);
    const std::vector<uint8_t> part = net_link_->read_remote(0, uint8_t(idx), pa + at, n);
    if (part.size() != n)
      throw std::runtime_error("split run: a memory read of " + std::to_string(n) + " bytes answered with " +
                               std::to_string(part.size()));
    out.insert(out.end(), part.begin(), part.end());
    at += n;
  }
  return out;
}

}  // namespace ernic
