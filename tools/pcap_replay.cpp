// tools: `ernic-sim pcap replay` (see pcap_replay.h): the options, the
// lines printed.
#include "tools/pcap_replay.h"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace pcap_replay {

CLI::App* add_subcommand(CLI::App& app, std::string& file, ReplayOptions& o) {
  auto* rep = app.add_subcommand(
      "replay", "one side of an RC connection of a capture replayed against a simulated ERNIC node in the other's "
                "place (by default the requester's frames into ERNIC as the responder); ERNIC's frames against the "
                "capture's, field by field; exit 1 on an unexplained difference");
  rep->add_option("file", file, "capture (pcap or pcapng)")->required();
  auto* resp = rep->add_flag("--responder-side", "ERNIC takes the responder's place (the default)");
  rep->add_flag("--requester-side", o.requester_side,
                "ERNIC takes the requester's place: it posts the requester's messages as WQEs, the capture's "
                "responder frames answer its requests, its requests are compared with the capture's")
      ->excludes(resp);
  rep->add_option("--requester-ip", o.requester_ip,
                  "the capture's requester, IPv4 or IPv6 (default: the first RC request's source)");
  rep->add_option("--qpn", o.qpn, "the capture's responder QPN the requests address (default: the first request's)")
      ->check(CLI::Range(0u, 0xFFFFFFu));
  rep->add_option("--requester-qpn", o.requester_qpn, "the capture's requester QPN (default: from the CM exchange, else the answers)")
      ->check(CLI::Range(0u, 0xFFFFFFu));
  rep->add_option("--first-psn", o.first_psn, "the responder's expected PSN at the start (default: CM, else the first request's)")
      ->check(CLI::Range(0u, 0xFFFFFFu));
  rep->add_option("--node-qpn", o.node_qpn, "ERNIC's QP, in the place of the capture's side it stands for")->capture_default_str();
  rep->add_option("--psn-delta", o.psn_delta, "simulated PSN = captured PSN + this (mod 2^24)")
      ->check(CLI::Range(0u, 0xFFFFFFu))
      ->capture_default_str();
  rep->add_option("--va-base", o.va_base, "simulated VA of the capture's lowest VA (default: the same VAs)");
  rep->add_option("--node-ip", o.node_ip,
                  "ERNIC node's IPv4 or IPv6 address (default: 10.0.0.2, fd00::2 for an IPv6 connection)");
  rep->add_option("--node-mac", o.node_mac, "ERNIC node's MAC")->capture_default_str();
  rep->add_option("--peer-ip", o.peer_ip,
                  "the other side's address after rewriting, of --node-ip's IP version (default: 10.0.0.1, fd00::1 "
                  "for an IPv6 connection)");
  rep->add_option("--peer-mac", o.peer_mac, "the requester's MAC after rewriting")->capture_default_str();
  rep->add_option("--datapath", o.datapath, "rtl or model")->check(CLI::IsMember({"rtl", "model"}))->capture_default_str();
  rep->add_flag("--fast", o.fast, "inject back to back at line rate (default: paced by the capture's timestamps)");
  rep->add_option("--settle-us", o.settle_us, "simulated time after the last request")->capture_default_str();
  rep->add_flag("--report-only", o.report_only, "exit 0 whatever the differences");
  rep->add_option("--expect", o.expect_file, "explained differences, one a line as listed ('#' comments)")
      ->check(CLI::ExistingFile);
  return rep;
}

int replay_main(const std::vector<ReplayFrame>& frames, const ReplayOptions& opt) {
  ernic::replay::Replay r;
  auto print = [&r] {
    for (const std::string& l : r.take_lines()) std::printf("%s\n", l.c_str());
    std::fflush(stdout);
  };
  if (opt.node_qpn < 2 || opt.node_qpn > 255) {  // the node's num_qp is at least node_qpn + 1 (pcap_replay_sim.cpp)
    std::fprintf(stderr, "ernic-sim pcap replay: --node-qpn %u: give 2..255\n", opt.node_qpn);
    return 2;
  }
  if (const std::string why = r.plan(frames, opt); !why.empty()) {
    print();  // a note on left-out frames
    std::fprintf(stderr, "ernic-sim pcap replay: %s\n", why.c_str());
    return 2;
  }
  print();
  std::vector<std::string> errors;
  std::string why;
  if (!run_alone(r, &errors, &why)) {
    std::fprintf(stderr, "ernic-sim pcap replay: cannot replay: %s\n", why.c_str());
    return 2;
  }
  const ernic::replay::Verdict v = r.judge(errors);
  for (const auto& e : v.setup_errors) std::fprintf(stderr, "ernic-sim pcap replay: cannot replay: %s\n", e.c_str());
  print();
  return v.code;
}

}  // namespace pcap_replay
