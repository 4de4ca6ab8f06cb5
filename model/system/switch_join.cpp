// model/system: a switch topology's switch and wires (scenario key
// `topology: switch`; model/link/switch.h): built and joined in one
// process here, and the parts a split run's star (split_star.cpp) joins
// in each process.
#include "model/system/system.h"

namespace ernic {

// topology: switch: the switch (a port per node, in node order), and for
// each node X a wire to its port ("X->switch", its flows "X->Y" one per
// other node: the directions' fault rules and link state) and one back
// ("switch->X"); each node's cmac_link_up: every direction into it is up
// (its port's wire, and each other node's flow to it).
void System::join_switch(const std::vector<LinkParams>& lps) {
  build_switch(lps);
  star_wires(lps);
  for (size_t i = 0; i < nodes.size(); ++i) {
    attach_port(i);
    nodes[i]->cmac->wire_out = uplinks[i].get();
    downlinks[i]->set_dst(nodes[i]->cmac.get());
  }
  for (size_t i = 0; i < nodes.size(); ++i) star_link_up(i);
}

// Node i's cmac_link_up (its QP-setup block's): every direction into it is
// up, its port's wire and each other node's flow to it (a split run: each
// process has every wire, and a `link` step sets its state in every one).
void System::star_link_up(size_t i) {
  if (QpSetupFsm* f = nodes[i]->qp_setup.get())
    f->link_up = [this, i] {
      if (!downlinks[i]->faults().link_up()) return false;
      for (size_t j = 0; j < uplinks.size(); ++j)
        if (j != i && !uplinks[j]->faults(int(i)).link_up()) return false;
      return true;
    };
}

// The switch of topology: switch (its ports in node order).
void System::build_switch(const std::vector<LinkParams>& lps) {
  const SwitchTopology& t = *scenario.topology_switch;
  SwitchConfig c;
  for (size_t i = 0; i < nodes.size(); ++i) {
    SwitchConfig::Port p;
    p.name = nodes[i]->cfg.name;
    std::copy(nodes[i]->cfg.mac.b.begin(), nodes[i]->cfg.mac.b.end(), p.node_mac.begin());
    p.rate_gbps = lps[i].rate_gbps;
    c.ports.push_back(p);
  }
  c.buffer_bytes = t.buffer_bytes;
  c.latency_ps = t.latency_ns * 1000;
  c.flood_unknown = t.flood_unknown;
  c.ecn = t.ecn;
  c.pfc = t.pfc;
  c.seed = scenario.seed * 0x9E3779B97F4A7C15ull + 0x5A;
  net_switch = std::make_unique<Switch>("switch", ctx, std::string(this->name()) + ".switch", c, &cmac_clk);
}

// Every node's wires to its port and back, with their flows and fault
// reports (a split run builds them all in every process: each joins its
// own ends, split_star.cpp).
void System::star_wires(const std::vector<LinkParams>& lps) {
  const SwitchTopology& t = *scenario.topology_switch;
  const uint64_t seed = scenario.seed * 0xD1B54A32D192ED03ull;
  const size_t n = nodes.size();
  for (size_t i = 0; i < n; ++i) {
    const std::string& x = nodes[i]->cfg.name;
    const uint64_t d = t.ports[i].delay_ns * 1000;
    uplinks.push_back(std::make_unique<Wire>(("up_" + x).c_str(), d, lps[i].rate_gbps, seed + 1 + 2 * i * (n + 1)));
    downlinks.push_back(std::make_unique<Wire>(("down_" + x).c_str(), d, lps[i].rate_gbps, seed + 2 + 2 * i * (n + 1)));
    Wire* up = uplinks.back().get();
    Wire* down = downlinks.back().get();
    up->label = x + "->switch";
    down->label = "switch->" + x;
    up->flow_of = [this](const FrameBytes& f) { return f.size() >= 6 ? port_of_mac(f.data()) : -1; };
    for (size_t j = 0; j < n; ++j)
      if (j != i) up->add_flow(int(j), x + "->" + nodes[j]->cfg.name, seed + 3 + 2 * i * (n + 1) + j);
    for (Wire* w : {up, down})
      w->on_fault = [this](const std::string& label, const FaultApplied& a) { report_fault(label, a); };
  }
}

// Port i of the switch: node i's wire into it, and its wire back.
void System::attach_port(size_t i) {
  uplinks[i]->set_dst(&net_switch->port(i));
  net_switch->port(i).wire_out = downlinks[i].get();
}

// The node whose MAC this is (a switch port's), or -1 (Switch::port_of's rule).
int System::port_of_mac(const uint8_t* mac) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (std::equal(nodes[i]->cfg.mac.b.begin(), nodes[i]->cfg.mac.b.end(), mac)) return int(i);
  return -1;
}

}  // namespace ernic
