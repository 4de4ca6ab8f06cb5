// model/system: a switch topology split over processes (split.h): one
// process per node and one for the switch, joined as a star: each node's
// process to the switch's, which carries the frames between the nodes'
// lines and its ports and relays the processes' CONTROLs (NetLink hub
// mode: a step's ends, facts, memory reads).
//
// Every process builds every wire (System::star_wires, the same seeds as
// one process) and joins its own ends: node X's process its line to the
// switch (sending half) and the switch's line to X (receiving half); the
// switch's process the switch, the receiving halves of the nodes' lines
// and the sending halves of its ports' lines. Each link's lookahead is its
// port's propagation delay (above 0).
//
// Carriers: the switch's process listens on one unix:PATH or tcp:HOST:PORT
// for every node's process; over shm:PATH (SimBricks' queues: one listener
// per connecter) it listens at PATH.<node> for each node, and each node's
// process given --connect shm:PATH connects to PATH.<its node>.
//
// Steps: the switch's process takes part in the steps every process runs
// (wait, parallel, repeat, ...) and in expect_switch; a step's end is the
// latest of all: each node's process sends its end to the switch's, which
// answers with its own once every node's has come (split_barrier).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <fmt/format.h>

#include <set>

#include "model/bridge/net_address.h"
#include "model/bridge/net_link.h"
#include "model/system/split.h"
#include "model/system/system.h"

namespace ernic {

using namespace sc_core;

void System::join_split_star(const std::vector<LinkParams>& lps, const SplitOptions& so) {
  const SwitchTopology& t = *scenario.topology_switch;
  const size_t n = nodes.size();
  if (split_hub_) build_switch(lps);
  star_wires(lps);
  const bridge::WallTimeout to{std::chrono::milliseconds(so.timeout_ms)};
  net_link_ = std::make_unique<bridge::NetLink>("net_link", to);
  if (so.chaos_us) net_link_->set_chaos(so.chaos_seed + split_local_, so.chaos_us);
  auto preamble = [&](size_t i) { return LineRate(lps[i].rate_gbps).preamble_ps(); };
  if (split_hub_) {
    if (so.listen.empty())
      throw std::runtime_error("split run: the switch's process listens for the nodes' processes on unix:PATH, "
                               "tcp:HOST:PORT or shm:PATH (--listen)");
    std::vector<std::unique_ptr<bridge::NetPeer>> peers(n);
    if (bridge::is_shm_address(so.listen)) {
      // One pool and intro socket per node (a SimBricks listener serves one
      // connecter): node X's at PATH.X, taken in port order.
      for (size_t i = 0; i < n; ++i) {
        const std::string& name = nodes[i]->cfg.name;
        peers[i] = bridge::open_net_peer(star_shm_address(so.listen, name), true, 0,
                                         "node " + name + "'s process", to);
        introduce_split(*peers[i], so, to, name);
      }
    } else {
      bridge::Listener l(bridge::Endpoint::parse(so.listen));
      for (size_t k = 0; k < n; ++k) {
        auto peer = bridge::NetPeer::as_listener(l.accept(to, "a node's process"), 0, "a node's process", to);
        const std::string who = introduce_split(*peer, so, to, "");
        const int idx = port_of_name(who);
        if (idx < 0 || peers[size_t(idx)])
          throw std::runtime_error("split run: a process says it runs node '" + who + "': " +
                                   (idx < 0 ? "no such node" : "another process runs it"));
        peer->rename("node " + who + "'s process");
        peers[size_t(idx)] = std::move(peer);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      attach_port(i);
      net_link_->add_peer(std::move(peers[i]), t.ports[i].delay_ns * 1000, preamble(i), &uplinks[i]->rx());
      downlinks[i]->out = &net_link_->out(i);
    }
  } else {
    if (so.connect.empty()) throw std::runtime_error("split run: a node's process connects to the switch's (--connect)");
    const size_t i = split_local_;
    const std::string addr =
        bridge::is_shm_address(so.connect) ? star_shm_address(so.connect, nodes[i]->cfg.name) : so.connect;
    auto peer = bridge::open_net_peer(addr, false, 0, "the switch's process", to);
    introduce_split(*peer, so, to, kSplitSwitch);
    nodes[i]->cmac->wire_out = uplinks[i].get();
    downlinks[i]->set_dst(nodes[i]->cmac.get());
    star_link_up(i);  // as in one process: every direction into the node (each process has them all)
    net_link_->add_peer(std::move(peer), t.ports[i].delay_ns * 1000, preamble(i), &downlinks[i]->rx());
    uplinks[i]->out = &net_link_->out(0);
  }
  sc_spawn(sc_bind(&System::watch_peer_end, this), "split_peer_end");
  if (!split_hub_) sc_spawn(sc_bind(&System::monitor_thread, this), "split_monitor");
  net_link_->enable_control(local_reader(), local_progress(),
                            [this](uint64_t id) { return split_underway(id); });
  if (split_hub_) net_link_->enable_hub();
  set_split_policy();
}

std::string System::star_shm_address(const std::string& addr, const std::string& node) { return addr + "." + node; }

int System::port_of_name(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i]->cfg.name == name) return int(i);
  return -1;
}

}  // namespace ernic
