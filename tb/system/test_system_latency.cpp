// tb/system: the latency of one 64-byte RDMA WRITE, from the SQPIi doorbell
// reaching the NIC to the first CMAC tvalid of its packet, is the sum of the
// named parameters on that path (issue 5), worked out here from the
// parameters and the clock/PCIe rules, and compared with the transaction
// log of a real run (tb/system/latency_one_write.yaml, an idle system).
//
// The path and its parameters:
//   doorbell visible to the QP manager      ErnicTiming::doorbell_cycles = 2 core cycles (A-ERNIC-1)
//   WQE fetch (qp_mgr_m_axi, 64 B)          request TLP + pcie.read_latency_ns + 64-B completion TLP,
//                                           then one core cycle after the completion's last byte
//                                           (A-DMA-4), on a core edge
//   WQE decode                              ErnicTiming::wqe_decode_cycles = 2, counted from the fetch
//                                           (decoded while cached, A-ERNIC-25)
//   payload read (wqe_proc_top_m_axi, 64 B) issued when the WQE was cached: the latency left, the
//                                           request and completion TLPs, one cycle (A-DMA-4)
//   header build                            ErnicTiming::hdr_build_cycles = 2, then the frame goes to
//                                           the TX datapath (model/datapath/sc/datapath.h)
//   descriptor to roce_tx                   taken at the RTL edge after the next one (the RTL's core
//                                           edges are at k * P + P / 2; edge D = tx edge / P + 1)
//   roce_tx (rtl/roce_tx, RoceTxTiming)     B = ceil(L / 64) body beats (L = 134 bytes without the
//                                           ICRC: 3), O = ceil((L + 4) / 64) = 3 output beats; the
//                                           first taken at edge D + B + 3, the last at D + B + 2 + O
//   core->CMAC async FIFO (rtl/cdc, PACKET) the first beat loaded at CMAC edge e1 + N (N = 2
//                                           synchroniser stages; e1 = the first CMAC edge, at
//                                           x * C + C / 2, after the edge of the last beat); the
//                                           CMAC takes it on the model edge after: (e1 + N + 1) * C
//   first byte after the SFD                8 bytes of preamble/SFD at 100 Gb/s (80 ps a byte)
// A TLP of n payload bytes takes (n + 24) bytes at the link's raw rate
// (lanes x 8 GT/s x 128/130 / 8 for Gen3), rounded to the picosecond
// (model/dma/pcie.h). The periods and the raw rate come from the run's JSON.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

uint64_t edge(uint64_t t, uint64_t per) { return (t + per - 1) / per * per; }

// The RTL's rising edges: k * per + per / 2. The index of the first one
// strictly after t.
uint64_t rtl_edge_after(uint64_t t, uint64_t per) { return t < per / 2 ? 0 : (t - per / 2) / per + 1; }

constexpr uint64_t kSyncStages = 2;  // rtl/datapath/roce_datapath.sv SYNC_STAGES (rtl/cdc)

// The TX datapath, from the core edge t_enq where ERNIC hands a frame of L
// bytes (without ICRC) over to the CMAC model edge where its first beat
// leaves the core->CMAC FIFO (the line free).
uint64_t tx_datapath(uint64_t t_enq, uint64_t L, uint64_t P, uint64_t C) {
  const uint64_t B = std::max<uint64_t>(1, (L + 63) / 64), O = (L + 4 + 63) / 64;
  const uint64_t D = t_enq / P + 1;
  const uint64_t last_out = D + B + 2 + O;
  const uint64_t e1 = rtl_edge_after(last_out * P + P / 2, C);
  return (e1 + kSyncStages + 1) * C;
}

// One run of tb/system/latency_one_write.yaml: its report, its log records
// and the two clock periods (ps).
struct WriteRun {
  json rep;
  std::vector<json> log;
  uint64_t P = 0, C = 0;
};

WriteRun run_one_write(const std::string& suffix) {
  WriteRun run;
  const fs::path dir = test_dir(suffix);
  SimResult r = run_sim(dir, {"run", kSystemDir + "/latency_one_write.yaml", "--log", "o.jsonl", "--json", "o.json",
                              "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (r.exit_code != 0) return run;
  run.rep = json::parse(read_text(dir / "o.json"));
  run.P = run.rep["clocks"]["core"]["period_ps"].get<uint64_t>();
  run.C = run.rep["clocks"]["cmac"]["period_ps"].get<uint64_t>();
  std::istringstream in(read_text(dir / "o.jsonl"));
  for (std::string line; std::getline(in, line);) run.log.push_back(json::parse(line));
  return run;
}

TEST(SystemLatency, DoorbellToFirstTvalidIsTheSumOfTheParameters) {
  const WriteRun run = run_one_write("latency");
  ASSERT_FALSE(run.log.empty());
  const json& rep = run.rep;
  const uint64_t P = run.P, C = run.C;
  ASSERT_EQ(rep["pcie"]["gen"].get<int>(), 3);
  const double raw = double(rep["pcie"]["lanes"].get<int>()) * 8.0 * 128.0 / 130.0 / 8.0;  // bytes per ns
  EXPECT_NEAR(raw, rep["pcie"]["raw_gbytes_per_s"].get<double>(), 1e-9);
  const uint64_t L = rep["pcie"]["read_latency_ns"].get<uint64_t>() * 1000;
  auto tlp = [&](uint64_t n) { return uint64_t(std::llround(double(n + 24) * 1000.0 / raw)); };

  // From the log: when the doorbell reached A's NIC, and the records on the path.
  uint64_t t_db = 0, t_fetch = 0, t_payload = 0, t_first = 0;
  for (const json& o : run.log) {
    if (o["node"] != "A") continue;
    const uint64_t t = o["t_ps"].get<uint64_t>();
    if (o["kind"] == "reg" && o["op"] == "write" && o["name"] == "SQPIi[2]" && !t_db) t_db = t;
    if (!t_db) continue;
    if (o["kind"] == "dma" && o["master"] == "qp_mgr_m_axi" && o.value("qp", 0) == 2 && !t_fetch) t_fetch = t;
    if (o["kind"] == "dma" && o["master"] == "wqe_proc_top_m_axi" && !t_payload) t_payload = t;
    if (o["kind"] == "frame" && o["dir"] == "tx" && o["opname"] == "RC_WRITE_ONLY" && !t_first) t_first = t;
  }
  ASSERT_TRUE(t_db && t_fetch && t_payload && t_first);

  const uint64_t doorbell_cycles = 2, wqe_decode_cycles = 2, hdr_build_cycles = 2;
  const uint64_t frame_bytes = 14 + 20 + 8 + 12 + 16 + 64;  // Ethernet, IPv4, UDP, BTH, RETH, payload
  const uint64_t want_fetch = t_db + doorbell_cycles * P;
  const uint64_t cached = edge(want_fetch + tlp(0) + L + tlp(64), P) + P;
  const uint64_t want_payload = cached + wqe_decode_cycles * P;
  const uint64_t lat_left = L - (want_payload - cached);
  const uint64_t payload_in = edge(want_payload + tlp(0) + lat_left + tlp(64), P) + P;
  const uint64_t t_enq = payload_in + hdr_build_cycles * P;
  const uint64_t tvalid = tx_datapath(t_enq, frame_bytes, P, C);
  const uint64_t want_first = tvalid + 8 * 80;

  EXPECT_EQ(t_fetch, want_fetch) << "doorbell -> WQE fetch";
  EXPECT_EQ(t_payload, want_payload) << "WQE fetch + decode -> payload read";
  EXPECT_EQ(t_first, want_first) << "payload read + header + roce_tx + FIFO + preamble -> first byte";
  std::printf("doorbell at %.3f ns; first CMAC tvalid %.3f ns later (%llu core cycles to the datapath); "
              "expected %.3f\n",
              t_db / 1e3, (t_first - 640 - t_db) / 1e3, static_cast<unsigned long long>((t_enq - t_db) / P),
              (want_first - 640 - t_db) / 1e3);
}

// The responder's side of the same WRITE: from the first byte of the packet
// at B's CMAC to the first byte of B's ACK.
//   CMAC RX: the frame's last byte (first byte + (frame + FCS 4) x 80 ps),
//   then LinkParams::rx_latency_cycles = 8 CMAC cycles from a CMAC edge
//   (model edge x); its 3 beats go into the CMAC->core FIFO at the RTL's
//   CMAC edges x .. x + 2; the FIFO (rtl/cdc, stream mode) loads beat b
//   at core edge r_b = max(e1_b + N, r_{b-1} + 1) and roce_rx takes it at
//   r_b + 1; roce_rx's descriptor comes kRoceRxDescLatency = 2 cycles after
//   the last beat's edge a (registered at a + 1, handed to ERNIC on the
//   model edge (a + 2) * P); ERNIC: rx_parse_cycles = 4, the MR lookup
//   mr_lookup_cycles = 2 (A-MR-1), the payload write (posted, one beat,
//   A-DMA-5), ack_build_cycles = 2, then the ACK (58 bytes without the
//   ICRC) through the TX datapath as above, and the preamble.
TEST(SystemLatency, ArrivalToAckIsTheSumOfTheParameters) {
  const WriteRun run = run_one_write("latency_ack");
  ASSERT_FALSE(run.log.empty());
  const uint64_t P = run.P, C = run.C;
  uint64_t t_in = 0, t_write = 0, t_ack = 0;
  for (const json& o : run.log) {
    if (o["node"] != "B") continue;
    const uint64_t t = o["t_ps"].get<uint64_t>();
    if (o["kind"] == "frame" && o["dir"] == "rx" && o["opname"] == "RC_WRITE_ONLY" && !t_in) t_in = t;
    if (!t_in) continue;
    if (o["kind"] == "dma" && o["master"] == "rx_pkt_hndler_ddr_m_axi" && !t_write) t_write = t;
    if (o["kind"] == "frame" && o["dir"] == "tx" && o["opname"] == "RC_ACK" && !t_ack) t_ack = t;
  }
  ASSERT_TRUE(t_in && t_write && t_ack);
  const uint64_t frame = 14 + 20 + 8 + 12 + 16 + 64 + 4;  // with the ICRC, as on the wire
  const uint64_t rx_latency_cycles = 8, rx_parse_cycles = 4, mr_lookup_cycles = 2, rx_desc_latency = 2;
  const uint64_t ack_build_cycles = 2, ack_bytes = 14 + 20 + 8 + 12 + 4;  // Ethernet, IPv4, UDP, BTH, AETH
  const uint64_t last_byte = t_in + (frame + 4) * 80;
  const uint64_t x = (edge(last_byte, C) + rx_latency_cycles * C) / C;
  uint64_t load = 0;
  for (uint64_t b = 0; b < (frame + 63) / 64; ++b)
    load = std::max(rtl_edge_after((x + b) * C + C / 2, P) + kSyncStages, load + 1);
  const uint64_t a = load + 1;  // roce_rx takes the last beat
  const uint64_t in_core = (a + rx_desc_latency) * P;
  const uint64_t want_write = in_core + rx_parse_cycles * P + mr_lookup_cycles * P;
  const uint64_t t_enq = want_write + P + ack_build_cycles * P;
  const uint64_t want_ack = tx_datapath(t_enq, ack_bytes, P, C) + 8 * 80;
  EXPECT_EQ(t_write, want_write) << "arrival -> payload write";
  EXPECT_EQ(t_ack, want_ack) << "payload write -> ACK's first byte";
  std::printf("WRITE's first byte at B %.3f ns; ACK's first byte %.3f ns later; expected %.3f\n", t_in / 1e3,
              (t_ack - t_in) / 1e3, (want_ack - t_in) / 1e3);
}

}  // namespace
