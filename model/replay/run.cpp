// tools: pcap replay's simulated node (see pcap_replay.h): one ERNIC node
// (model/system's Node: host memory, PCIe, ERNIC, datapath, CMAC and the
// built-in driver) with no wire and no peer; frames go into the CMAC's RX
// as a line would deliver them (rx_arrive when their last byte is in, never
// faster than the line), every RoCE frame the CMAC transmits is kept.
// Responder side (Bench): the driver sets up MRs over the capture's VAs
// with their preload and one RC QP towards the requester, then each
// rewritten request goes in. Requester side (ReqBench): the driver posts
// the requester's messages on one RC QP towards the capture's responder,
// and the responder's frames go in as answers to ERNIC's requests.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <cstdlib>
#include <systemc>

#include "model/system/system.h"
#include "tools/pcap_replay.h"
#include "tools/pcap_replay_plan.h"

namespace pcap_replay {

namespace {

using namespace sc_core;

// PG332's bring-up by the driver, the peer in its neighbour table; the
// peer's IP (IPv4 or IPv6: the QP's IP version, QPCONFi[7]).
roce::IpAddr bring_up(ernic::host::Driver& d, const ReplayOptions& o) {
  d.init();
  const roce::IpAddr peer_ip = *parse_ip(o.peer_ip);
  const roce::MacAddr mac = *roce::MacAddr::parse(o.peer_mac);
  if (peer_ip.v6) d.add_neighbour(peer_ip.ip6, mac);
  else d.add_neighbour(peer_ip.ip4, mac);
  return peer_ip;
}

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
    const auto peer_ip = bring_up(d, s_.opt);
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
    d.establish(c, s_.peer_qpn, s_.expected_psn, peer_ip, roce::cm::MrInfo{});
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

// The requester side: ERNIC posts the capture's requester messages; each
// request it sends may trigger the capture's responder frames that followed
// that request, injected the capture's delay after it (never before its
// last byte), one after another on the line.
class ReqBench : public sc_module {
 public:
  SC_HAS_PROCESS(ReqBench);
  ReqBench(sc_module_name name, const ReqSetup& s, ernic::Node& n, ReqResult& r)
      : sc_module(name), s_(s), n_(n), r_(r), line_(n.cmac->params().rate_gbps) {
    r_.injected.assign(s_.answers.size(), false);
    for (size_t i = 0; i < s_.answers.size(); ++i) by_trigger_[{s_.answers[i].trigger_psn, s_.answers[i].occurrence}].push_back(i);
    SC_THREAD(run);
    SC_THREAD(injector);
  }
  bool done() const { return done_; }

  // Every frame ERNIC transmits (the CMAC's TX, at its first byte).
  void on_tx(const ernic::FrameBytes& f, uint64_t t) {
    auto d = roce::decode(f.data(), f.size());
    if (!d) return;
    if (is_request(d->bth.opcode)) {
      const uint32_t occ = sent_[d->bth.psn]++;
      if (auto it = by_trigger_.find({d->bth.psn, occ}); it != by_trigger_.end())
        for (size_t i : it->second) {
          const uint64_t due = t + std::max(s_.answers[i].delay_ps, line_.frame_ps(f.size()));
          due_.insert({due, i});
        }
      due_ev_.notify(SC_ZERO_TIME);
    }
    r_.sent.push_back({t, std::move(*d)});
  }

 private:
  void run() {
    try {
      setup();
      post();
      // Every message completes, or the longest answer delay of the capture
      // plus the settle time passes after the last post.
      uint64_t longest = 0;
      for (const ReqAnswer& a : s_.answers) longest = std::max(longest, a.delay_ps);
      auto got = n_.driver->poll(*c_, uint32_t(s_.msgs.size()), longest + uint64_t(s_.opt.settle_us) * 1000000);
      for (const auto& q : got) r_.completions.push_back({q.wr_id, q.error});
      wait(sc_time(double(s_.opt.settle_us) * 1e6, SC_PS));  // late answers, retransmissions
      for (size_t k = 0; k < s_.msgs.size(); ++k) {
        roce::Bytes b(s_.msgs[k].length);
        if (!b.empty()) n_.mem->read(pa_[k], b.data(), b.size());
        r_.landed.push_back(std::move(b));
      }
      done_ = true;
    } catch (const std::exception& e) {
      r_.setup_errors.push_back(e.what());
    }
    sc_stop();
  }

  void setup() {
    ernic::host::Driver& d = *n_.driver;
    const auto peer_ip = bring_up(d, s_.opt);
    for (const ReqMessage& m : s_.msgs) {
      pa_.push_back(d.alloc(std::max<uint64_t>(m.length, 64)));
      if (!m.data.empty()) n_.mem->write(pa_.back(), m.data);
    }
    ernic::host::QpParams p;
    p.pmtu = s_.pmtu;
    p.qpn = s_.opt.node_qpn;
    p.start_psn = s_.sq_psn;
    p.sq_depth = 64;
    while (p.sq_depth < s_.msgs.size() + 2) p.sq_depth <<= 1;
    p.pd = 0;
    c_ = &d.prepare(p);
    d.establish(*c_, s_.dest_qpn, 0, peer_ip, roce::cm::MrInfo{});
  }

  void post() {
    const uint64_t t0 = sc_time_stamp().value() + 1000000;  // 1 us after the QP is ready
    for (size_t k = 0; k < s_.msgs.size(); ++k) {
      const ReqMessage& m = s_.msgs[k];
      const uint64_t at = s_.opt.fast ? t0 : t0 + m.t_ns * 1000, now = sc_time_stamp().value();
      if (at > now) wait(sc_time(double(at - now), SC_PS));
      ernic::host::Wqe q;
      q.wr_id = uint16_t(k);
      q.opcode = m.wqe_opcode;
      q.laddr = pa_[k];
      q.length = m.length;
      q.remote_va = m.remote_va;
      q.rkey = m.rkey;
      q.immdt = m.immdt;
      n_.driver->post(*c_, {q}, false, true);
    }
  }

  void injector() {
    uint64_t free_ps = 0;  // the line's next free instant (the previous frame's IFG over)
    for (;;) {
      if (due_.empty()) {
        wait(due_ev_);
        continue;
      }
      const auto [due, i] = *due_.begin();
      const roce::Bytes& f = s_.answers[i].frame;
      const uint64_t start = std::max(due, free_ps), last = start + line_.frame_ps(f.size());
      const uint64_t now = sc_time_stamp().value();
      if (last > now) {
        wait(sc_time(double(last - now), SC_PS), due_ev_);  // an earlier one may come meanwhile
        continue;
      }
      due_.erase(due_.begin());
      free_ps = last + line_.ifg_ps();
      r_.injected[i] = true;
      n_.cmac->rx_arrive(roce::Bytes(f), start + line_.preamble_ps(), false);
    }
  }

  const ReqSetup& s_;
  ernic::Node& n_;
  ReqResult& r_;
  const ernic::LineRate line_;
  ernic::host::Connection* c_ = nullptr;
  std::vector<uint64_t> pa_;  // each message's buffer
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> by_trigger_;  // (PSN, occurrence) -> answers
  std::map<uint32_t, uint32_t> sent_;                                          // PSN -> times ERNIC sent it
  std::set<std::pair<uint64_t, size_t>> due_;                                   // (due time, answer)
  sc_event due_ev_;
  bool done_ = false;
};

// The node alone (no wire, no peer), bench(node) driving it, run until the
// bench stops the simulation or for 10 s of simulated time; its TX frames
// to on_tx. False (why in *setup_error) when the node cannot be built.
bool run_node(const ReplayOptions& o, const std::function<void(ernic::Node&)>& bench,
              const std::function<void(const ernic::FrameBytes&, uint64_t)>& on_tx, std::vector<std::string>* errors,
              std::string* setup_error) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  const uint32_t num_qp = std::max<uint32_t>(8, o.node_qpn + 1);
  const std::string yaml = fmt::format(
      "scenario: pcap_replay\nseed: 1\ndatapath: {}\nnodes:\n  dut:\n    mac: \"{}\"\n    {}: \"{}\"\n"
      "    num_qp: {}\n    memory_mib: 64\nsteps:\n  - init: [dut]\n",
      o.datapath, o.node_mac, parse_ip(o.node_ip)->v6 ? "ipv6" : "ip", o.node_ip, num_qp);
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
  node->cmac->on_tx = on_tx;
  bench(*node);
  sc_start(SC_ZERO_TIME);
  if (sc_get_status() != SC_STOPPED) sc_start(sc_time(10.0, SC_SEC));
  for (const auto& e : ctx.errors) errors->push_back(fmt::format("model error at {} ps: {}: {}", e.time_ps, e.where, e.what));
  return true;
}

}  // namespace

SimResult run_sim(const SimSetup& s) {
  SimResult r;
  std::unique_ptr<Bench> bench;
  std::string why;
  const bool ok = run_node(
      s.opt, [&](ernic::Node& n) { bench = std::make_unique<Bench>("replay", s, n, r); },
      [&r](const ernic::FrameBytes& f, uint64_t t) {
        if (auto d = roce::decode(f.data(), f.size())) r.answers.push_back({t, std::move(*d)});
      },
      &r.errors, &why);
  if (!ok) {
    r.setup_errors.push_back(why);
    return r;
  }
  if (!r.injected && r.setup_errors.empty())
    r.setup_errors.push_back("the capture's requests span more than the run's 10 s of simulated time: not all were "
                             "injected (--fast injects them back to back)");
  return r;
}

ReqResult run_req_sim(const ReqSetup& s) {
  ReqResult r;
  std::unique_ptr<ReqBench> bench;
  std::string why;
  const bool ok = run_node(
      s.opt, [&](ernic::Node& n) { bench = std::make_unique<ReqBench>("replay", s, n, r); },
      [&](const ernic::FrameBytes& f, uint64_t t) { bench->on_tx(f, t); }, &r.errors, &why);
  if (!ok) r.setup_errors.push_back(why);
  else if (!bench->done())
    r.setup_errors.push_back("the capture's messages span more than the run's 10 s of simulated time: not all were "
                             "posted (--fast posts them at once)");
  return r;
}

}  // namespace pcap_replay
