// tools: the sweeps of `ernic-sim experiment` (experiment.h), one Experiment
// each (experiment_kit.h): bandwidth and PCIe MPS here, the queue sweeps in
// experiment_sweeps_queues.cpp; and their registry.
#include "tools/experiment_kit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef ERNIC_SOURCE_DIR
#define ERNIC_SOURCE_DIR "."
#endif

namespace ernic::experiment {
namespace {

// ---- 1. bandwidth vs message size (bench's tables, drawn)

struct Bandwidth : Experiment {
  struct Row {
    std::string dp, op;
    BenchResult r;
    double wire;
  };
  std::vector<Row> rows;
  std::vector<std::string> dps;

  std::string name() const override { return "bandwidth"; }
  std::string title() const override { return "WRITE / READ / SEND bandwidth and message rate vs message size"; }
  static std::vector<BenchPhase> phases(bool full) {
    std::vector<BenchPhase> v;
    if (full) {
      for (uint64_t s = 64; s <= (1u << 20); s *= 2)
        v.push_back({s, uint32_t(std::clamp<uint64_t>((4u << 20) / s, 32, 1000))});
    } else {
      for (uint64_t s : {64u, 4096u, 65536u}) v.push_back({s, uint32_t(std::clamp<uint64_t>((256u << 10) / s, 8, 64))});
    }
    return v;
  }
  std::vector<RunSpec> plan(bool full) const override {
    std::vector<RunSpec> v;
    const auto ph = phases(full);
    for (const std::string dp : full ? std::vector<std::string>{"rtl", "model"} : std::vector<std::string>{"rtl"})
      for (const std::string op : {"write", "read", "send"}) {
        RunSpec s;
        s.id = "bw_" + op + "." + dp;
        s.yaml = bench_scenario_text(op, ph, ph.back().size, false, 0);
        s.log = true;
        s.datapath = dp;
        v.push_back(s);
      }
    return v;
  }
  bool analyse(const std::vector<RunSpec>& specs, const std::vector<RunOut>& outs, Csv* csv, std::string* why) override {
    csv->header = "datapath,op,bytes,iterations,bw_peak_gbps,bw_average_gbps,msg_rate_mpps,wire_limit_gbps";
    const bool full = specs.size() > 3;
    const auto ph = phases(full);
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::string op = specs[i].id.substr(3, specs[i].id.find('.') - 3);
      std::vector<BenchResult> res;
      if (!bench_compute_results(op, ph, bench_scan_log(outs[i].log_file), outs[i].scen, &res)) {
        *why = "the log of " + outs[i].scen + " lacks a phase";
        return false;
      }
      if (std::find(dps.begin(), dps.end(), specs[i].datapath) == dps.end()) dps.push_back(specs[i].datapath);
      for (const auto& r : res) {
        rows.push_back({specs[i].datapath, op, r, wire_limit_gbps(op, r.size)});
        csv->rows.push_back(fmt::format("{},{},{},{},{:.3f},{:.3f},{:.6f},{:.3f}", specs[i].datapath, op, r.size,
                                        r.iters, r.bw_peak, r.bw_avg, r.mpps, rows.back().wire));
      }
    }
    return true;
  }
  const Row* find(const std::string& dp, const std::string& op, uint64_t size) const {
    for (const auto& r : rows)
      if (r.dp == dp && r.op == op && r.r.size == size) return &r;
    return nullptr;
  }
  void report(Doc& d, bool) const override {
    d.kv("Claim", "none from the seeds: the reference curves the other experiments start from (issue 5's `ernic-sim "
                  "bench`, perftest's ib_write_bw / ib_read_bw / ib_send_bw in simulated time), drawn. PG332's reference "
                  "design measured 95.4 Gb/s for RDMA WRITE.");
    d.kv("Configuration", "bench's named configuration: two nodes on a 100 Gb/s link, PCIe Gen3 x16, MPS 256, MRRS 512, "
                          "PMTU 4096, core 200 MHz, one RC QP, SQ depth 1024; per size N messages posted with one "
                          "doorbell, then waited for (N = 4 MiB / size clamped to 32..1000 at the full size). "
                          "Datapaths: " + [&] {
                            std::string s;
                            for (const auto& x : dps) s += (s.empty() ? "" : ", ") + x;
                            return s;
                          }() + ".");
    std::vector<std::vector<std::string>> t;
    const std::string dp0 = dps.empty() ? "rtl" : dps[0];
    for (const auto& r : rows)
      if (r.dp == dp0 && (r.r.size == 64 || r.r.size == 4096 || r.r.size == 16384 || r.r.size == 65536 ||
                          r.r.size == (1u << 20)))
        t.push_back({r.op, std::to_string(r.r.size), f2(r.r.bw_avg), f2(r.r.bw_peak), f2(r.wire), f3(r.r.mpps)});
    d.kv("Result", "BW average, peak and message rate by size (datapath " + dp0 + "; the whole sweep is in `bandwidth.csv`):");
    d.table({"op", "bytes", "BW avg Gb/s", "BW peak Gb/s", "wire limit Gb/s", "Mmsg/s"}, t);
    if (dps.size() >= 2) {
      double worst = 0;
      for (const auto& r : rows)
        if (r.dp != dp0)
          if (const Row* a = find(dp0, r.op, r.r.size)) worst = std::max(worst, std::abs(r.r.bw_avg - a->r.bw_avg));
      d.p(worst == 0 ? "The `" + dps[1] + "` datapath gives the same figures to the last digit (the C++ model and the "
                                          "Verilated RTL are cycle-equivalent at the seams)."
                     : fmt::format("The `{}` datapath differs from `{}` by up to {:.3f} Gb/s.", dps[1], dp0, worst));
    }
    const Row* w64 = find(dp0, "write", 64);
    const Row* r4k = find(dp0, "read", 4096);
    const Row* w4k = find(dp0, "write", 4096);
    d.kv("Verdict", "baseline (no claim to judge).");
    d.kv("Mechanism",
         fmt::format("large messages run at the wire's goodput (the limit line: Ethernet + IPv4 + UDP + BTH framing, 82 "
                     "bytes a packet at PMTU 4096, plus RETH/AETH); small ones are bound by per-message work: each "
                     "64-byte WRITE costs {} ns of the requester (WQE fetch from the WQE cache, payload DMA read, "
                     "header build) and READs of 4 KiB reach only {} Gb/s against {} for WRITEs because B's responder serves "
                     "one READ at a time: its payload is one blocking DMA read that pays the whole 500 ns PCIe read "
                     "latency (A-PCIE-2) before the response goes out, while a WRITE's payload read is issued ahead "
                     "when the prefetcher caches its WQE (A-ERNIC-24).",
                     w64 ? f1(1000.0 / w64->r.mpps) : "?", r4k ? f1(r4k->r.bw_avg) : "?",
                     w4k ? f1(w4k->r.bw_avg) : "?"));
  }
};

// ---- 2. PCIe MPS / MRRS

struct PcieMps : Experiment {
  struct Row {
    uint32_t lanes, mps, mrrs;
    std::string op;
    BenchResult r;
  };
  std::vector<Row> rows;
  std::string name() const override { return "pcie_mps"; }
  std::string title() const override { return "PCIe MPS and MRRS vs WRITE/READ bandwidth and small-message rate"; }
  static std::vector<BenchPhase> phases(bool full) {
    if (full) return {{64, 1000}, {4096, 1000}, {65536, 64}};
    return {{64, 64}, {4096, 64}, {65536, 16}};
  }
  std::vector<RunSpec> plan(bool full) const override {
    std::vector<RunSpec> v;
    const auto ph = phases(full);
    const std::vector<uint32_t> lanes = full ? std::vector<uint32_t>{8, 16} : std::vector<uint32_t>{8};
    const std::vector<uint32_t> mpss = full ? std::vector<uint32_t>{128, 256, 512} : std::vector<uint32_t>{128, 512};
    const std::vector<uint32_t> mrrss = full ? std::vector<uint32_t>{128, 512, 4096} : std::vector<uint32_t>{512};
    const std::vector<std::string> ops = full ? std::vector<std::string>{"write", "read"} : std::vector<std::string>{"write"};
    for (const auto& op : ops)
      for (uint32_t l : lanes)
        for (uint32_t m : mpss)
          for (uint32_t r : mrrss) {
            RunSpec s;
            s.id = fmt::format("mps_{}_x{}_mps{}_mrrs{}", op, l, m, r);
            BenchPcie p;
            p.lanes = l;
            p.mps = m;
            p.mrrs = r;
            s.yaml = bench_scenario_text(op, ph, ph.back().size, false, 0, p);
            s.log = true;
            v.push_back(s);
          }
    return v;
  }
  bool analyse(const std::vector<RunSpec>& specs, const std::vector<RunOut>& outs, Csv* csv, std::string* why) override {
    csv->header =
        "lanes,mps,mrrs,op,bytes,iterations,bw_average_gbps,msg_rate_mpps,tlp_payload_bytes,pcie_formula_gbps,"
        "wire_limit_gbps";
    const bool full = specs.size() > 2;
    for (size_t i = 0; i < specs.size(); ++i) {
      unsigned l = 0, m = 0, r = 0;
      char opb[16] = {};
      if (std::sscanf(specs[i].id.c_str(), "mps_%15[a-z]_x%u_mps%u_mrrs%u", opb, &l, &m, &r) != 4) return false;
      const std::string op = opb;
      std::vector<BenchResult> res;
      if (!bench_compute_results(op, phases(full), bench_scan_log(outs[i].log_file), outs[i].scen, &res)) {
        *why = "the log of " + outs[i].scen + " lacks a phase";
        return false;
      }
      const uint32_t P = std::min(m, r);
      for (const auto& x : res) {
        rows.push_back({l, m, r, op, x});
        csv->rows.push_back(fmt::format("{},{},{},{},{},{},{:.3f},{:.6f},{},{:.3f},{:.3f}", l, m, r, op, x.size, x.iters,
                                        x.bw_avg, x.mpps, P, pcie_gbps(3, l, P), wire_limit_gbps(op, x.size)));
      }
    }
    return true;
  }
  const Row* find(uint32_t l, uint32_t m, uint32_t r, const std::string& op, uint64_t size) const {
    for (const auto& x : rows)
      if (x.lanes == l && x.mps == m && x.mrrs == r && x.op == op && x.r.size == size) return &x;
    return nullptr;
  }
  void report(Doc& d, bool full) const override {
    d.kv("Claim (seed 003, `003_427c70dbe97496c8.txt`, section 4.1)",
         "「默认是128字节，但我们的网卡和CPU都支持512字节。改完之后，吞吐量直接涨了30%。……PCIe的MPS和MRRS（Max Read Request "
         "Size）一定要匹配，否则DMA引擎的效率会大打折扣。」 — \"The default [MPS] was 128 bytes, but our NIC and CPU both "
         "support 512. After the change, throughput rose by 30 %. ... MPS and MRRS must match, or the DMA engine's "
         "efficiency suffers badly.\"");
    d.kv("Configuration",
         std::string("bench's scenario (one RC QP, PMTU 4096, 100 Gb/s, core 200 MHz, read latency 500 ns) with PCIe Gen3 ") +
             (full ? "x8 (a PCIe-bound link: 63 Gb/s raw) and x16 (wire-bound: 126 Gb/s raw), MPS 128/256/512, MRRS "
                     "128/512/4096, WRITE and READ"
                   : "x8, MPS 128 and 512, MRRS 512, WRITE") +
             "; per point 64 B messages (message rate), 4 KiB and 64 KiB messages (bandwidth).");
    // The formula.
    d.p("**Where the formula's +13 % comes from.** `model/dma/pcie.h` charges every TLP 24 bytes besides its payload "
        "(framing 2 + sequence number 2 + 4DW header 16 + LCRC 4); a stream of P-byte TLPs moves `raw x P / (P + 24)` "
        "payload bytes, raw = lanes x 8 GT/s x 128/130 / 8 (Gen3 x8: 7.877 B/ns = 63.0 Gb/s). P = MPS for writes, "
        "min(MPS, MRRS) for read completions:");
    std::vector<std::vector<std::string>> ft;
    for (uint32_t P : {128u, 256u, 512u})
      ft.push_back({std::to_string(P), fmt::format("{}/{} = {:.4f}", P, P + 24, double(P) / (P + 24)),
                    f2(pcie_gbps(3, 8, P)), f2(pcie_gbps(3, 16, P)),
                    pct((double(P) / (P + 24)) / (128.0 / 152.0))});
    d.table({"P (bytes)", "efficiency P/(P+24)", "Gen3 x8 Gb/s", "Gen3 x16 Gb/s", "vs P = 128"}, ft);
    d.p("(512/536) / (128/152) = 0.9552 / 0.8421 = 1.134: **+13.4 %** is all TLP overhead can give from MPS 128 to 512, "
        "and only where PCIe, not the 100 Gb/s wire (97.9 Gb/s of goodput), is the bottleneck. For the formula to give "
        "+30 % a TLP would have to cost X bytes with 4 (128 + X) / (512 + X) = 1.3, X = 153.6 / 2.7 = **56.9 bytes**: "
        "33 bytes more than the 24 of its framing and header, e.g. the DLLPs (ACK/NAK, UpdateFC) a real link adds per "
        "few TLPs, which the model does not send.");
    // The model.
    std::vector<std::vector<std::string>> t;
    for (uint32_t l : {8u, 16u})
      for (const std::string op : {"write", "read"})
        for (uint64_t size : {64u, 4096u, 65536u}) {
          const uint32_t mr = 512;
          const Row* a = find(l, 128, mr, op, size);
          const Row* b = find(l, 512, mr, op, size);
          if (!a || !b) continue;
          const double fa = std::min(pcie_gbps(3, l, 128), wire_limit_gbps(op, size)),
                       fb = std::min(pcie_gbps(3, l, 512), wire_limit_gbps(op, size));
          t.push_back({fmt::format("x{}", l), op, std::to_string(size),
                       size == 64 ? f3(a->r.mpps) + " Mmsg/s" : f2(a->r.bw_avg) + " Gb/s",
                       size == 64 ? f3(b->r.mpps) + " Mmsg/s" : f2(b->r.bw_avg) + " Gb/s",
                       pct(size == 64 ? b->r.mpps / a->r.mpps : b->r.bw_avg / a->r.bw_avg), pct(fb / fa)});
        }
    d.kv("Result", "MPS 128 -> 512 at MRRS 512 (the whole grid, MRRS 128 and 4096 too, is in `pcie_mps.csv`):");
    d.table({"link", "op", "bytes", "MPS 128", "MPS 512", "model", "formula bound (min of PCIe and wire)"}, t);
    // MRRS effect at MPS 512.
    std::vector<std::vector<std::string>> mt;
    for (uint32_t l : {8u, 16u})
      for (const std::string op : {"write", "read"}) {
        const Row* a = find(l, 512, 128, op, 4096);
        const Row* b = find(l, 512, 512, op, 4096);
        const Row* c = find(l, 512, 4096, op, 4096);
        if (a && b && c)
          mt.push_back({fmt::format("x{}", l), op, f2(a->r.bw_avg), f2(b->r.bw_avg), f2(c->r.bw_avg)});
      }
    if (!mt.empty()) {
      d.p("MRRS at MPS 512, 4 KiB messages (Gb/s): a read request of 128 bytes caps the completions at 128 bytes, as "
          "MPS 128 does (\"MPS and MRRS must match\"):");
      d.table({"link", "op", "MRRS 128", "MRRS 512", "MRRS 4096"}, mt);
    }
    const Row* w4a = find(8, 128, 512, "write", 4096);
    const Row* w4b = find(8, 512, 512, "write", 4096);
    const Row* w64a = find(8, 128, 512, "write", 65536);
    const Row* w64b = find(8, 512, 512, "write", 65536);
    const Row* x16a = find(16, 128, 512, "write", 65536);
    const Row* x16b = find(16, 512, 512, "write", 65536);
    std::string verdict = "depends. ";
    if (w64a && w64b)
      verdict += fmt::format("Streaming 64 KiB WRITEs on a PCIe-bound link (Gen3 x8) gain {} from MPS 128 to 512, ",
                             pct(w64b->r.bw_avg / w64a->r.bw_avg));
    if (w4a && w4b)
      verdict += fmt::format("4 KiB WRITEs gain {} (more than the seed's +30 %), ", pct(w4b->r.bw_avg / w4a->r.bw_avg));
    if (x16a && x16b)
      verdict += fmt::format("and on a Gen3 x16 link, where the 100 Gb/s wire is the bound, 64 KiB WRITEs gain only {}",
                             pct(x16b->r.bw_avg / x16a->r.bw_avg));
    else
      verdict += "and on a wire-bound link (Gen3 x16, full size) almost nothing";
    verdict += "; 64-byte messages do not move (one TLP each whatever the MPS). +30 % is real where PCIe is the "
               "bottleneck and messages are a few KiB; it is not a property of MPS alone.";
    d.kv("Verdict", verdict);
    auto per_msg = [&](uint32_t l, uint32_t m) {
      const Row* x = find(l, m, 512, "write", 4096);
      return x ? fmt::format("{:.0f} ns", 1e3 / x->r.mpps) : std::string("?");
    };
    d.kv("Mechanism",
         "two effects add up in the model. (1) TLP overhead (the formula above): at most +13.4 %, reached by long "
         "streams on a PCIe-bound link, where the model comes close to it (64 KiB READs on Gen3 x8). (2) Per-message "
         "work on the requester's PCIe path that scales with the number of TLPs: a 4 KiB WRITE moves its payload "
         "twice over A's link, once read from LADDR (4096 / min(MPS, MRRS) completions, 32 at MPS 128, 8 at 512; "
         "each completion's R beats end one beat after its last byte, on a core-clock edge, A-DMA-4) and once "
         "copied into the write-retry buffers in host memory through `wqe_proc_wr_ddr_m_axi` (4096 / MPS MWr TLPs, "
         "A-ERNIC-17), and the payload read of a packet is one blocking DMA read whose 500 ns latency is hidden only "
         "for the first chunk of each WQE the prefetcher caches (A-ERNIC-24). A 4 KiB WRITE takes " +
             per_msg(8, 128) + " a message at MPS 128 and " + per_msg(8, 512) + " at 512 on Gen3 x8 (" +
             per_msg(16, 128) + " and " + per_msg(16, 512) +
             " on x16): far more than the TLP overhead alone predicts, because these steps are not fully overlapped "
             "for a single QP. Which step is on the critical path at each MPS is not broken down here (open). Real "
             "hardware adds effects of the same sign that the model lacks: DLLPs (the 57-byte figure above), read "
             "tags bounding the bytes in flight (tags x MRRS / latency: MRRS 128 -> 512 is x4 when latency-bound), "
             "completion credits.");
  }
};

}  // namespace

std::vector<std::unique_ptr<Experiment>> registry() {
  std::vector<std::unique_ptr<Experiment>> v;
  v.push_back(std::make_unique<Bandwidth>());
  v.push_back(std::make_unique<PcieMps>());
  add_queue_sweeps(v);  // experiment_sweeps_queues.cpp
  add_submit_sweeps(v); // experiment_sweeps_submit.cpp
  add_host_sweeps(v);   // experiment_sweeps_host.cpp
  add_cm_sweeps(v);     // experiment_sweeps_cm.cpp
  add_shadow_sweeps(v); // experiment_sweeps_shadow.cpp
  add_qpc_sweeps(v);    // experiment_sweeps_qpc.cpp
  return v;
}

}  // namespace ernic::experiment
