#include "model/monitor/axil_monitor.h"

#include <fmt/format.h>

namespace ernic::monitor {

namespace {
struct ChInfo {
  const char* name;
  const char* reset_rule;
  const char* valid_rule;
  const char* p0_name;
  const char* p0_rule;
  const char* p1_name;
  const char* p1_rule;
};
// Per channel: ARM's rule names (BP063) for reset, VALID and payload stability.
const ChInfo kInfo[kAxilChannels] = {
    {"AW", "AXI4_ERRM_AWVALID_RESET", "AXI4_ERRM_AWVALID_STABLE", "AWADDR", "AXI4_ERRM_AWADDR_STABLE", "AWPROT",
     "AXI4_ERRM_AWPROT_STABLE"},
    {"W", "AXI4_ERRM_WVALID_RESET", "AXI4_ERRM_WVALID_STABLE", "WDATA", "AXI4_ERRM_WDATA_STABLE", "WSTRB",
     "AXI4_ERRM_WSTRB_STABLE"},
    {"B", "AXI4_ERRS_BVALID_RESET", "AXI4_ERRS_BVALID_STABLE", "BRESP", "AXI4_ERRS_BRESP_STABLE", nullptr, nullptr},
    {"AR", "AXI4_ERRM_ARVALID_RESET", "AXI4_ERRM_ARVALID_STABLE", "ARADDR", "AXI4_ERRM_ARADDR_STABLE", "ARPROT",
     "AXI4_ERRM_ARPROT_STABLE"},
    {"R", "AXI4_ERRS_RVALID_RESET", "AXI4_ERRS_RVALID_STABLE", "RDATA", "AXI4_ERRS_RDATA_STABLE", "RRESP",
     "AXI4_ERRS_RRESP_STABLE"},
};
}  // namespace

const char* axil_channel_name(int ch) { return ch >= 0 && ch < kAxilChannels ? kInfo[ch].name : "?"; }

AxilMonitor::AxilMonitor(std::string name, std::string clock, AxilRules rules, ViolationSink sink)
    : log_(std::move(name), std::move(clock), std::move(sink)), rules_(rules) {}

AxilMonitor::Edge AxilMonitor::load(const AxilSample& s) {
  Edge e;
  e.reset = s.reset;
  e.ch[kAw] = {s.awvalid, s.awready, s.awaddr, s.awprot};
  e.ch[kW] = {s.wvalid, s.wready, s.wdata, s.wstrb};
  e.ch[kB] = {s.bvalid, s.bready, s.bresp, 0};
  e.ch[kAr] = {s.arvalid, s.arready, s.araddr, s.arprot};
  e.ch[kR] = {s.rvalid, s.rready, s.rdata, s.rresp};
  return e;
}

void AxilMonitor::sample(uint64_t cycle, const AxilSample& s) {
  if (have_pending_) {
    if (cycle == pending_cycle_) {
      pending_ = load(s);
      return;
    }
    if (cycle < pending_cycle_) {
      violation(cycle, "MONITOR_CYCLE_ORDER",
                fmt::format("sample for cycle {} after one for cycle {} (ignored)", cycle, pending_cycle_));
      return;
    }
    evaluate(pending_cycle_, pending_);
    have_pending_ = false;
  } else if (have_prev_ && cycle <= prev_cycle_) {
    violation(cycle, "MONITOR_CYCLE_ORDER",
              fmt::format("sample for cycle {} after cycle {} was evaluated (ignored)", cycle, prev_cycle_));
    return;
  }
  if (have_prev_ && cycle > prev_cycle_ + 1) repeat(cycle - prev_cycle_ - 1);
  pending_ = load(s);
  pending_cycle_ = cycle;
  have_pending_ = true;
}

void AxilMonitor::finish() {
  if (!have_pending_) return;
  evaluate(pending_cycle_, pending_);
  have_pending_ = false;
}

void AxilMonitor::violation(uint64_t cycle, const char* rule, std::string what) {
  ++n_.violations;
  log_.report(cycle, rule, std::move(what));
}

void AxilMonitor::check_resp(uint64_t cycle, int ch, uint32_t resp) {
  const bool b = ch == kB;
  resp &= 3;
  if (resp == 1)
    violation(cycle, b ? "AXI4LITE_ERRS_BRESP_EXOKAY" : "AXI4LITE_ERRS_RRESP_EXOKAY",
              fmt::format("{} = EXOKAY on an AXI4-Lite interface (IHI 0022E B1.1.1)", b ? "BRESP" : "RRESP"));
  if (resp == 2) ++n_.slverr;
  if (resp == 3) {
    ++n_.decerr;
    if (!rules_.allow_decerr)
      violation(cycle, b ? "SEAM_ERRS_BRESP_DECERR" : "SEAM_ERRS_RRESP_DECERR",
                fmt::format("{} = DECERR: this slave decodes its whole window (OKAY or SLVERR only)",
                            b ? "BRESP" : "RRESP"));
  }
}

void AxilMonitor::evaluate(uint64_t cycle, const Edge& cur) {
  ++n_.edges;
  const bool first = !have_prev_;
  if (cur.reset) {
    for (int c = 0; c < kAxilChannels; ++c)
      if (cur.ch[c].valid)
        violation(cycle, kInfo[c].reset_rule,
                  fmt::format("{}VALID high while ARESETn is low (IHI 0022E A3.1.2)", kInfo[c].name));
    aw_out_ = w_out_ = ar_out_ = 0;  // a reset ends every transaction
  } else {
    for (int c = 0; c < kAxilChannels; ++c) {
      const Ch& p = prev_.ch[c];
      const Ch& n = cur.ch[c];
      if (!first && prev_.reset && n.valid)
        violation(cycle, kInfo[c].reset_rule,
                  fmt::format("{}VALID high on the first edge after ARESETn went high (IHI 0022E A3.1.2)",
                              kInfo[c].name));
      if (first || prev_.reset || !p.valid || p.ready) continue;
      // The previous edge offered a transfer that was not taken.
      if (!n.valid) {
        violation(cycle, kInfo[c].valid_rule,
                  fmt::format("{0}VALID dropped before the handshake: {0}READY was low at cycle {1} with {2} = 0x{3:x} "
                              "offered (IHI 0022E A3.2.1)",
                              kInfo[c].name, cycle - 1, kInfo[c].p0_name, p.p0));
        continue;
      }
      if (p.p0 != n.p0)
        violation(cycle, kInfo[c].p0_rule,
                  fmt::format("{} changed 0x{:x} -> 0x{:x} while {}VALID high and {}READY low (IHI 0022E A3.2.1)",
                              kInfo[c].p0_name, p.p0, n.p0, kInfo[c].name, kInfo[c].name));
      if (kInfo[c].p1_name && p.p1 != n.p1)
        violation(cycle, kInfo[c].p1_rule,
                  fmt::format("{} changed 0x{:x} -> 0x{:x} while {}VALID high and {}READY low (IHI 0022E A3.2.1)",
                              kInfo[c].p1_name, p.p1, n.p1, kInfo[c].name, kInfo[c].name));
    }
    // A response starts where VALID rises or follows a handshake.
    const auto starts = [&](int c) {
      return cur.ch[c].valid && (first || prev_.reset || !prev_.ch[c].valid || prev_.ch[c].ready);
    };
    if (starts(kB)) {
      if (aw_out_ == 0)
        violation(cycle, "AXI4_ERRS_BRESP_AW",
                  fmt::format("BVALID with no write address taken and unanswered ({} writes answered so far; "
                              "IHI 0022E A3.3.1)",
                              n_.handshakes[kB]));
      if (w_out_ == 0)
        violation(cycle, "AXI4_ERRS_BRESP_WLAST",
                  fmt::format("BVALID with no write data taken and unanswered ({} writes answered so far; "
                              "IHI 0022E A3.3.1)",
                              n_.handshakes[kB]));
      check_resp(cycle, kB, uint32_t(cur.ch[kB].p0));
    }
    if (starts(kR)) {
      if (ar_out_ == 0)
        violation(cycle, "AXI4_ERRS_RID",
                  fmt::format("RVALID (RDATA 0x{:x}) with no read address taken and unanswered ({} reads answered "
                              "so far; IHI 0022E A5.3.1)",
                              cur.ch[kR].p0, n_.handshakes[kR]));
      check_resp(cycle, kR, uint32_t(cur.ch[kR].p1));
    }
    // Transfers and stalls at this edge: responses retire requests first.
    for (int c : {kB, kR, kAw, kW, kAr}) {
      const Ch& n = cur.ch[c];
      if (!n.valid) continue;
      if (!n.ready) {
        ++n_.stalls[c];
        continue;
      }
      ++n_.handshakes[c];
      switch (c) {
        case kB:
          if (aw_out_) --aw_out_;
          if (w_out_) --w_out_;
          break;
        case kR:
          if (ar_out_) --ar_out_;
          break;
        case kAw: ++aw_out_; break;
        case kW: ++w_out_; break;
        case kAr: ++ar_out_; break;
      }
    }
  }
  prev_ = cur;
  prev_cycle_ = cycle;
  have_prev_ = true;
}

void AxilMonitor::repeat(uint64_t n) {
  bool transfers = false;
  if (!prev_.reset)
    for (const Ch& c : prev_.ch) transfers |= c.valid && c.ready;
  if (transfers) {
    // Held handshakes are repeated transfers: evaluate them one by one (a
    // stuck interface floods at most this many).
    const uint64_t k = std::min<uint64_t>(n, 1u << 20);
    const Edge e = prev_;
    for (uint64_t i = 0; i < k; ++i) evaluate(prev_cycle_ + 1, e);
    n -= k;
    if (n == 0) return;
  }
  n_.edges += n;
  if (!prev_.reset)
    for (int c = 0; c < kAxilChannels; ++c)
      if (prev_.ch[c].valid && !prev_.ch[c].ready) n_.stalls[c] += n;
  prev_cycle_ += n;
}

}  // namespace ernic::monitor
