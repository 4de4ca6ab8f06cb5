// tools: pcap replay's node (see pcap_replay.h): one ERNIC node
// (model/system's Node: host memory, PCIe, ERNIC, datapath, CMAC and the
// built-in driver) with no wire and no peer. The replay's frames go into
// the CMAC's RX as a line would deliver them (rx_arrive when their last
// byte is in, never faster than the line); every frame the CMAC transmits
// goes to the replay at its first byte.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <systemc>

#include "model/system/system.h"
#include "tools/pcap_replay.h"

namespace pcap_replay {

namespace {

using namespace sc_core;

// Straight into the CMAC's RX at line rate: a frame's first byte at the
// later of now and the end of the previous frame's IFG.
class CmacRxLine : public ernic::replay::Line {
 public:
  explicit CmacRxLine(ernic::Cmac& cmac) : cmac_(cmac), line_(cmac.params().rate_gbps) {}
  void send(roce::Bytes f) override {
    const uint64_t start = std::max<uint64_t>(sc_time_stamp().value(), free_ps_);
    const uint64_t last = start + line_.frame_ps(f.size());  // preamble .. FCS
    free_ps_ = last + line_.ifg_ps();
    const uint64_t now = sc_time_stamp().value();
    if (last > now) wait(sc_time(double(last - now), SC_PS));
    cmac_.rx_arrive(std::move(f), start + line_.preamble_ps(), false);
  }
  uint64_t frame_ps(size_t bytes) const override { return line_.frame_ps(bytes); }

 private:
  ernic::Cmac& cmac_;
  const ernic::LineRate line_;
  uint64_t free_ps_ = 0;  // the line's next free instant (the previous frame's IFG over)
};

class Bench : public sc_module {
 public:
  SC_HAS_PROCESS(Bench);
  Bench(sc_module_name name, ernic::replay::Replay& r, ernic::Node& n) : sc_module(name), r_(r), n_(n), line_(*n.cmac) {
    SC_THREAD(run);
  }

 private:
  void run() {
    r_.run(*n_.driver, *n_.mem, line_, true);
    sc_stop();
  }
  ernic::replay::Replay& r_;
  ernic::Node& n_;
  CmacRxLine line_;
};

}  // namespace

bool run_alone(ernic::replay::Replay& r, std::vector<std::string>* errors, std::string* setup_error) {
  const ReplayOptions& o = r.options();
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  const uint32_t num_qp = std::max<uint32_t>(8, o.node_qpn + 1);
  const std::string yaml = fmt::format(
      "scenario: pcap_replay\nseed: 1\ndatapath: {}\nnodes:\n  dut:\n    mac: \"{}\"\n    {}: \"{}\"\n"
      "    num_qp: {}\n    memory_mib: 64\nsteps:\n  - init: [dut]\n",
      o.datapath, o.node_mac, r.node_ip().v6 ? "ipv6" : "ip", o.node_ip, num_qp);
  ernic::Scenario sc;
  try {
    sc = ernic::parse_scenario(yaml, "pcap replay node");
  } catch (const std::exception& e) {
    *setup_error = std::string("the node: ") + e.what();
    return false;
  }
  sc_report_handler::set_actions("/OSCI/SystemC", SC_INFO, SC_DO_NOTHING);  // "stopped by user"
  sc_set_time_resolution(1, SC_PS);
  ernic::SimContext ctx;
  ernic::ClockDomain core("core", sc.clocks.core_mhz), cmac("cmac", sc.clocks.cmac_mhz);
  ernic::LinkParams lp;
  lp.rate_gbps = sc.link.rate_gbps;
  lp.delay_ps = sc.link.delay_ns * 1000;
  auto node = std::make_unique<ernic::Node>("dut", sc.nodes[0], sc, core, cmac, ctx, lp,
                                            sc.seed * 0x9E3779B97F4A7C15ull + 1, true);
  node->cmac->on_tx = [&r](const ernic::FrameBytes& f, uint64_t t) { r.node_frame(f, t); };
  Bench bench("replay", r, *node);
  sc_start(SC_ZERO_TIME);
  if (sc_get_status() != SC_STOPPED) sc_start(sc_time(10.0, SC_SEC));
  for (const auto& e : ctx.errors) errors->push_back(fmt::format("model error at {} ps: {}: {}", e.time_ps, e.where, e.what));
  return true;
}

}  // namespace pcap_replay
