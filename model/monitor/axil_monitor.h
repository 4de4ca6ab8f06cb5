// model/monitor: AXI4-Lite protocol checker for one interface (five
// channels AW, W, B, AR, R), fed with the sampled signals once per clock
// edge, with the sampling rules of axis_monitor.h (sample(cycle, s): the
// signals at edge `cycle`, held until the next call; the last call for an
// edge wins; lazy evaluation; violations reported through a sink). Plain
// C++; model/monitor/protocol.h registers one per AXI4-Lite seam.
//
// Rules (names as in ARM's AXI4 / AXI4-Lite protocol assertions, BP063;
// spec sections of ARM IHI 0022E):
//   AXI4_ERRM_AWVALID_RESET, _WVALID_RESET, _ARVALID_RESET,
//   AXI4_ERRS_BVALID_RESET, _RVALID_RESET
//                        no VALID during reset nor on the first edge after
//                        ARESETn goes high (A3.1.2, figure A3-1)
//   AXI4_ERRM_AWVALID_STABLE, _WVALID_STABLE, _ARVALID_STABLE,
//   AXI4_ERRS_BVALID_STABLE, _RVALID_STABLE
//                        once VALID is high it stays high until READY (A3.2.1)
//   AXI4_ERRM_AWADDR_STABLE, _AWPROT_STABLE, _WDATA_STABLE, _WSTRB_STABLE,
//   _ARADDR_STABLE, _ARPROT_STABLE, AXI4_ERRS_BRESP_STABLE, _RDATA_STABLE,
//   _RRESP_STABLE        the payload does not change while VALID is high and
//                        READY low (A3.2.1)
//   AXI4_ERRS_BRESP_AW   no write response before its write address
//                        handshake (A3.3.1, figure A3-7)
//   AXI4_ERRS_BRESP_WLAST no write response before its write data
//                        handshake (A3.3.1)
//   AXI4_ERRS_RID        no read data without an outstanding read address
//                        (A5.3.1: AXI4-Lite has one ID, so read data always
//                        answers the oldest outstanding read)
//   AXI4LITE_ERRS_BRESP_EXOKAY, AXI4LITE_ERRS_RRESP_EXOKAY
//                        no EXOKAY on AXI4-Lite (B1.1.1)
// and the seam's own rule (switched by AxilRules::allow_decerr):
//   SEAM_ERRS_BRESP_DECERR, SEAM_ERRS_RRESP_DECERR
//                        the slave decodes its whole window (the ERNIC
//                        register file: OKAY or SLVERR only)
// Responses are checked when their VALID rises (or a new response follows
// a handshake). AXI4-Lite has no IDs, so responses are in request order by
// construction; one response per request is what BRESP_AW / BRESP_WLAST /
// RID check (an extra response has no request left to answer).
//
// Counters: handshakes per channel (writes = B, reads = R), stalls per
// channel (VALID high, READY low), SLVERR / DECERR responses, violations;
// the writes and reads still open (request taken, no response yet).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/monitor/axis_monitor.h"

namespace ernic::monitor {

struct AxilSample {
  bool reset = false;  // ARESETn low
  bool awvalid = false, awready = false;
  uint64_t awaddr = 0;
  uint32_t awprot = 0;
  bool wvalid = false, wready = false;
  uint64_t wdata = 0;
  uint32_t wstrb = 0xF;
  bool bvalid = false, bready = false;
  uint32_t bresp = 0;  // 0 OKAY, 1 EXOKAY, 2 SLVERR, 3 DECERR
  bool arvalid = false, arready = false;
  uint64_t araddr = 0;
  uint32_t arprot = 0;
  bool rvalid = false, rready = false;
  uint64_t rdata = 0;
  uint32_t rresp = 0;
};

struct AxilRules {
  bool allow_decerr = false;  // false: DECERR is a violation (SEAM_ERRS_*RESP_DECERR)
};

enum AxilChannel { kAw = 0, kW, kB, kAr, kR, kAxilChannels };
const char* axil_channel_name(int ch);  // "AW", "W", "B", "AR", "R"

struct AxilCounters {
  std::array<uint64_t, kAxilChannels> handshakes{}, stalls{};
  uint64_t slverr = 0, decerr = 0, violations = 0, edges = 0;
  uint64_t writes() const { return handshakes[kB]; }
  uint64_t reads() const { return handshakes[kR]; }
  uint64_t total_stalls() const {
    uint64_t s = 0;
    for (uint64_t v : stalls) s += v;
    return s;
  }
};

class AxilMonitor {
 public:
  static constexpr size_t kMaxReports = AxisMonitor::kMaxReports;
  AxilMonitor(std::string name, std::string clock, AxilRules rules = {}, ViolationSink sink = {});

  void sample(uint64_t cycle, const AxilSample& s);
  void finish();

  const std::string& name() const { return log_.name(); }
  const std::string& clock() const { return log_.clock(); }
  const AxilCounters& counters() const { return n_; }
  // Requests taken and not yet answered.
  uint64_t open_writes() const { return std::max(aw_out_, w_out_); }
  uint64_t open_reads() const { return ar_out_; }
  const std::vector<ProtocolViolation>& violations() const { return log_.reported(); }

 private:
  struct Ch {
    bool valid = false, ready = false;
    uint64_t p0 = 0, p1 = 0;  // AW: addr, prot; W: data, strb; B: resp; AR: addr, prot; R: data, resp
  };
  struct Edge {
    bool reset = false;
    std::array<Ch, kAxilChannels> ch;
  };
  static Edge load(const AxilSample& s);
  void evaluate(uint64_t cycle, const Edge& cur);
  void repeat(uint64_t n);
  void check_resp(uint64_t cycle, int ch, uint32_t resp);
  void violation(uint64_t cycle, const char* rule, std::string what);

  ViolationLog log_;
  AxilRules rules_;
  AxilCounters n_;
  bool have_prev_ = false, have_pending_ = false;
  uint64_t prev_cycle_ = 0, pending_cycle_ = 0;
  Edge prev_, pending_;
  uint64_t aw_out_ = 0, w_out_ = 0, ar_out_ = 0;  // handshakes not yet answered by B / R
};

}  // namespace ernic::monitor
