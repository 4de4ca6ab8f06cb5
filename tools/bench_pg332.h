// tools/bench_pg332: `ernic-sim bench --profile pg332`, PG332's reference
// set-up (PG332 "Performance"; ../shared/spec/ernic-pg332.md "Performance
// claims") reproduced against the ideal IBTA peer (model/peer, scenario
// `kind: peer`): ERNIC (node A, 200 MHz core, PCIe Gen3 x16) as the
// initiator of 16 KiB RDMA WRITE, READ and SEND messages to the peer
// (node P) on one RC QP, PMTU 4096, a 100 Gb/s link, HW-handshake doorbells
// (PG332's initiator mode), iterations messages each, posted at once. Each
// figure is bench's BW average (tools/bench.h: messages x 16384 x 8 / (last
// CQE - start of the post), simulated time), printed next to PG332's with
// the difference in %. The incoming figures: the peer as the requester of
// the same messages to ERNIC (the responder; SEND: A's software takes each
// message as it arrives, as bench's send), each the time from the peer's
// post to its last completion.
#pragma once
#include <cstdint>
#include <string>

namespace ernic {

struct BenchPg332Options {
  std::string out_dir = "bench";   // generated scenarios, logs, reports, pg332.csv
  uint32_t iterations = 1000;      // messages per figure
  uint64_t peer_latency_ns = 500;  // the peer's request-to-answer latency
  std::string datapath = "rtl";    // `run --datapath`
};

// Prints the table; 0, or 1 when a run failed, 2 when --out cannot be made.
int bench_pg332_main(const BenchPg332Options& opt, const std::string& self_exe);

}  // namespace ernic
