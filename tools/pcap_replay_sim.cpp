// tools: pcap replay's simulated responder (see pcap_replay.h): one ERNIC
// node (model/system's Node: host memory, PCIe, ERNIC, datapath, CMAC and
// the built-in driver) with no wire and no peer. The bench programs it
// through the driver (init, MRs over the capture's VAs with their preload,
// one RC QP established out of band towards the requester), then puts each
// rewritten request frame into the CMAC's RX as a line would deliver it
// (rx_arrive when its last byte is in, never faster than 100 Gb/s), and
// keeps every RoCE frame the CMAC transmits.
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

class Bench : public sc_module {
 public:
  SC_HAS_PROCESS(Bench);
  Bench(sc_module_name name, const SimSetup& s, ernic::Node& n, SimResult& r) : sc_module(name), s_(s), n_(n), r_(r) {
    SC_THREAD(run);
  }

 private:
  void run() {
    try {
      setup();
      inject();
      r_.injected = true;
    } catch (const std::exception& e) {
      r_.setup_errors.push_back(e.what());
    }
    wait(sc_time(double(s_.opt.settle_us) * 1e6, SC_PS));
    sc_stop();
  }

  void setup() {
    ernic::host::Driver& d = *n_.driver;
    d.init();
    const auto peer_ip = *roce::Ipv4Addr::parse(s_.opt.peer_ip);
    d.add_neighbour(peer_ip, *roce::MacAddr::parse(s_.opt.peer_mac));
    for (size_t i = 0; i < s_.mrs.size(); ++i) {
      const SimMr& m = s_.mrs[i];
      const uint64_t pa = d.alloc(m.length);
      const ernic::host::Mr& mr =
          d.register_mr_at(fmt::format("replay{}", i), pa, m.va, m.length,
                           ernic::regs::u(ernic::regs::val::ACCESSDESC_ACCESS::READ_WRITE), 0);
      r_.rkeys.push_back(mr.rkey);
      for (const auto& [va, bytes] : m.preload) n_.mem->write(pa + (va - m.va), bytes);
    }
    ernic::host::QpParams p;
    p.pmtu = s_.pmtu;
    p.qpn = s_.opt.node_qpn;
    p.start_psn = 0x100;  // the node's own requests: none here
    p.rq_depth = s_.rq_depth;
    p.rq_elem_bytes = s_.rq_elem_bytes;
    p.pd = 0;
    ernic::host::Connection& c = d.prepare(p);
    d.establish(c, s_.peer_qpn, s_.expected_psn, roce::IpAddr(peer_ip), roce::cm::MrInfo{});
  }

  void inject() {
    const ernic::LineRate line(n_.cmac->params().rate_gbps);
    const uint64_t t0 = sc_time_stamp().value() + 1000000;  // 1 us after the QP is ready
    uint64_t free_ps = 0;  // the line's next free instant (the previous frame's IFG over)
    for (size_t k = 0; k < s_.request_t_ns.size(); ++k) {
      roce::Bytes f = s_.request(k, r_.rkeys);
      const uint64_t span = line.frame_ps(f.size());  // preamble .. FCS
      uint64_t start = s_.opt.fast ? t0 : t0 + s_.request_t_ns[k] * 1000;
      start = std::max(start, free_ps);
      const uint64_t last = start + span;
      free_ps = last + line.ifg_ps();
      const uint64_t now = sc_time_stamp().value();
      if (last > now) wait(sc_time(double(last - now), SC_PS));
      n_.cmac->rx_arrive(std::move(f), start + line.preamble_ps(), false);
    }
  }

  const SimSetup& s_;
  ernic::Node& n_;
  SimResult& r_;
};

}  // namespace

SimResult run_sim(const SimSetup& s) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  SimResult r;
  const uint32_t num_qp = std::max<uint32_t>(8, s.opt.node_qpn + 1);
  const std::string yaml = fmt::format(
      "scenario: pcap_replay\nseed: 1\ndatapath: {}\nnodes:\n  dut:\n    mac: \"{}\"\n    ip: {}\n"
      "    num_qp: {}\n    memory_mib: 64\nsteps:\n  - init: [dut]\n",
      s.opt.datapath, s.opt.node_mac, s.opt.node_ip, num_qp);
  ernic::Scenario sc;
  try {
    sc = ernic::parse_scenario(yaml, "pcap replay node");
  } catch (const std::exception& e) {
    r.setup_errors.push_back(std::string("the node: ") + e.what());
    return r;
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
  node->cmac->on_tx = [&r](const ernic::FrameBytes& f, uint64_t t) {
    if (auto d = roce::decode(f.data(), f.size())) r.answers.push_back({t, std::move(*d)});
  };
  Bench bench("replay", s, *node, r);
  sc_start(SC_ZERO_TIME);
  if (sc_get_status() != SC_STOPPED) sc_start(sc_time(10.0, SC_SEC));
  if (!r.injected && r.setup_errors.empty())
    r.setup_errors.push_back("the capture's requests span more than the run's 10 s of simulated time: not all were "
                             "injected (--fast injects them back to back)");
  for (const auto& e : ctx.errors) r.errors.push_back(fmt::format("model error at {} ps: {}: {}", e.time_ps, e.where, e.what));
  return r;
}

}  // namespace pcap_replay
