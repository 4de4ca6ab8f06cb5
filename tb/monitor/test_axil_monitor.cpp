// model/monitor/axil_monitor: every AXI4-Lite rule fires on a hand-written
// bad sequence and stays silent on the legal one; counters.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "model/monitor/axil_monitor.h"

using namespace ernic::monitor;

namespace {

using Rules = std::vector<std::string>;

struct Fixture {
  std::vector<ProtocolViolation> got;
  AxilMonitor mon;
  explicit Fixture(AxilRules r = {})
      : mon("top.X.s_axi_lite", "core", r, [this](const ProtocolViolation& v) { got.push_back(v); }) {}
  void at(uint64_t c, const std::function<void(AxilSample&)>& f) {
    AxilSample s;
    s.awready = s.wready = s.arready = s.bready = s.rready = true;
    f(s);
    mon.sample(c, s);
  }
  void idle(uint64_t c) {
    at(c, [](AxilSample&) {});
  }
  Rules rules() const {
    Rules r;
    for (const auto& v : got) r.push_back(v.rule);
    return r;
  }
};

// A legal write: AW and W together at edge c, B at c + 1.
void write(Fixture& f, uint64_t c, uint64_t addr, uint64_t data) {
  f.at(c, [&](AxilSample& s) { s.awvalid = s.wvalid = true, s.awaddr = addr, s.wdata = data; });
  f.at(c + 1, [](AxilSample& s) { s.bvalid = true; });
}

TEST(AxilMonitor, LegalTrafficIsSilent) {
  Fixture f;
  f.idle(0);
  write(f, 1, 0x20000, 0x1234);
  // W before AW, both stalled; B stalled by the master.
  f.at(3, [](AxilSample& s) { s.wvalid = true, s.wdata = 7, s.wready = false; });
  f.at(4, [](AxilSample& s) { s.wvalid = true, s.wdata = 7; });
  f.at(5, [](AxilSample& s) { s.awvalid = true, s.awaddr = 0x20004, s.awready = false; });
  f.at(7, [](AxilSample& s) { s.awvalid = true, s.awaddr = 0x20004; });
  f.at(8, [](AxilSample& s) { s.bvalid = true, s.bready = false, s.bresp = 2; });  // SLVERR is legal
  f.at(9, [](AxilSample& s) { s.bvalid = true, s.bresp = 2; });
  // A read with a late RVALID and a stalled R.
  f.at(10, [](AxilSample& s) { s.arvalid = true, s.araddr = 0x20008, s.arready = false; });
  f.at(11, [](AxilSample& s) { s.arvalid = true, s.araddr = 0x20008; });
  f.idle(12);
  f.at(14, [](AxilSample& s) { s.rvalid = true, s.rdata = 0xabcd, s.rready = false; });
  f.at(16, [](AxilSample& s) { s.rvalid = true, s.rdata = 0xabcd; });
  f.idle(17);
  f.mon.finish();
  EXPECT_TRUE(f.got.empty()) << f.got[0].str();
  const AxilCounters& n = f.mon.counters();
  EXPECT_EQ(n.writes(), 2u);
  EXPECT_EQ(n.reads(), 1u);
  EXPECT_EQ(n.handshakes[kAw], 2u);
  EXPECT_EQ(n.stalls[kW], 1u);
  EXPECT_EQ(n.stalls[kAw], 2u);
  EXPECT_EQ(n.stalls[kB], 1u);
  EXPECT_EQ(n.stalls[kAr], 1u);
  EXPECT_EQ(n.stalls[kR], 2u);
  EXPECT_EQ(n.slverr, 1u);
  EXPECT_EQ(f.mon.open_writes(), 0u);
  EXPECT_EQ(f.mon.open_reads(), 0u);
}

// VALID dropped before READY, on each channel (after the request a response needs).
TEST(AxilMonitor, ValidDroppedBeforeReadyOnEveryChannel) {
  struct Case {
    const char* rule;
    std::function<void(Fixture&)> seq;
  };
  const std::vector<Case> cases = {
      {"AXI4_ERRM_AWVALID_STABLE",
       [](Fixture& f) { f.at(1, [](AxilSample& s) { s.awvalid = true, s.awready = false; }); }},
      {"AXI4_ERRM_WVALID_STABLE", [](Fixture& f) { f.at(1, [](AxilSample& s) { s.wvalid = true, s.wready = false; }); }},
      {"AXI4_ERRM_ARVALID_STABLE",
       [](Fixture& f) { f.at(1, [](AxilSample& s) { s.arvalid = true, s.arready = false; }); }},
      {"AXI4_ERRS_BVALID_STABLE",
       [](Fixture& f) {
         f.at(1, [](AxilSample& s) { s.awvalid = s.wvalid = true; });
         f.at(2, [](AxilSample& s) { s.bvalid = true, s.bready = false; });
       }},
      {"AXI4_ERRS_RVALID_STABLE",
       [](Fixture& f) {
         f.at(1, [](AxilSample& s) { s.arvalid = true; });
         f.at(2, [](AxilSample& s) { s.rvalid = true, s.rready = false; });
       }},
  };
  for (const Case& k : cases) {
    Fixture f;
    f.idle(0);
    k.seq(f);
    f.idle(10);
    f.mon.finish();
    EXPECT_EQ(f.rules(), Rules{k.rule}) << k.rule;
    if (!f.got.empty()) {
      EXPECT_EQ(f.got[0].cycle, 10u) << k.rule;
    }
  }
}

TEST(AxilMonitor, PayloadChangedWhileStalled) {
  struct Case {
    const char* rule;
    std::function<void(AxilSample&, bool)> set;  // second: the changed value
    bool needs_write, needs_read;
  };
  const std::vector<Case> cases = {
      {"AXI4_ERRM_AWADDR_STABLE", [](AxilSample& s, bool c) { s.awvalid = true, s.awaddr = c ? 8 : 4; }, false, false},
      {"AXI4_ERRM_AWPROT_STABLE", [](AxilSample& s, bool c) { s.awvalid = true, s.awprot = c ? 2 : 0; }, false, false},
      {"AXI4_ERRM_WDATA_STABLE", [](AxilSample& s, bool c) { s.wvalid = true, s.wdata = c ? 0xdead : 0xbeef; }, false,
       false},
      {"AXI4_ERRM_WSTRB_STABLE", [](AxilSample& s, bool c) { s.wvalid = true, s.wstrb = c ? 0x3 : 0xF; }, false, false},
      {"AXI4_ERRM_ARADDR_STABLE", [](AxilSample& s, bool c) { s.arvalid = true, s.araddr = c ? 0x10 : 0x14; }, false,
       false},
      {"AXI4_ERRM_ARPROT_STABLE", [](AxilSample& s, bool c) { s.arvalid = true, s.arprot = c ? 1 : 0; }, false, false},
      {"AXI4_ERRS_BRESP_STABLE", [](AxilSample& s, bool c) { s.bvalid = true, s.bresp = c ? 2 : 0; }, true, false},
      {"AXI4_ERRS_RDATA_STABLE", [](AxilSample& s, bool c) { s.rvalid = true, s.rdata = c ? 1 : 2; }, false, true},
      {"AXI4_ERRS_RRESP_STABLE", [](AxilSample& s, bool c) { s.rvalid = true, s.rresp = c ? 2 : 0; }, false, true},
  };
  for (const Case& k : cases) {
    Fixture f;
    if (k.needs_write) f.at(0, [](AxilSample& s) { s.awvalid = s.wvalid = true; });
    if (k.needs_read) f.at(0, [](AxilSample& s) { s.arvalid = true; });
    f.at(1, [&](AxilSample& s) {
      k.set(s, false);
      s.awready = s.wready = s.arready = s.bready = s.rready = false;
    });
    f.at(2, [&](AxilSample& s) { k.set(s, true); });
    f.idle(3);
    f.mon.finish();
    EXPECT_EQ(f.rules(), Rules{k.rule}) << k.rule;
    if (!f.got.empty()) {
      EXPECT_EQ(f.got[0].cycle, 2u);
      EXPECT_NE(f.got[0].what.find("changed 0x"), std::string::npos) << f.got[0].what;
    }
    // Legal: the payload held until the handshake.
    Fixture g;
    if (k.needs_write) g.at(0, [](AxilSample& s) { s.awvalid = s.wvalid = true; });
    if (k.needs_read) g.at(0, [](AxilSample& s) { s.arvalid = true; });
    g.at(1, [&](AxilSample& s) {
      k.set(s, false);
      s.awready = s.wready = s.arready = s.bready = s.rready = false;
    });
    g.at(2, [&](AxilSample& s) { k.set(s, false); });
    g.idle(3);
    g.mon.finish();
    EXPECT_TRUE(g.got.empty()) << k.rule << ": " << g.got[0].str();
  }
}

TEST(AxilMonitor, ResponseWithoutRequest) {
  {  // B with nothing asked
    Fixture f;
    f.idle(0);
    f.at(1, [](AxilSample& s) { s.bvalid = true; });
    f.idle(2);
    f.mon.finish();
    EXPECT_EQ(f.rules(), (Rules{"AXI4_ERRS_BRESP_AW", "AXI4_ERRS_BRESP_WLAST"}));
    EXPECT_EQ(f.got[0].cycle, 1u);
  }
  {  // B after AW but before W
    Fixture f;
    f.at(1, [](AxilSample& s) { s.awvalid = true; });
    f.at(2, [](AxilSample& s) { s.bvalid = true; });
    f.at(3, [](AxilSample& s) { s.wvalid = true; });
    f.idle(4);
    f.mon.finish();
    EXPECT_EQ(f.rules(), Rules{"AXI4_ERRS_BRESP_WLAST"});
    EXPECT_EQ(f.got[0].cycle, 2u);
  }
  {  // B in the same edge as its AW/W handshake (must come after)
    Fixture f;
    f.at(1, [](AxilSample& s) { s.awvalid = s.wvalid = s.bvalid = true; });
    f.idle(2);
    f.mon.finish();
    EXPECT_EQ(f.rules(), (Rules{"AXI4_ERRS_BRESP_AW", "AXI4_ERRS_BRESP_WLAST"}));
  }
  {  // two writes, three responses
    Fixture f;
    f.at(1, [](AxilSample& s) { s.awvalid = s.wvalid = true; });
    f.at(2, [](AxilSample& s) { s.awvalid = s.wvalid = true; });
    f.at(3, [](AxilSample& s) { s.bvalid = true; });  // held 3 edges: 3 responses
    f.idle(6);
    f.mon.finish();
    EXPECT_EQ(f.rules(), (Rules{"AXI4_ERRS_BRESP_AW", "AXI4_ERRS_BRESP_WLAST"}));
    EXPECT_EQ(f.got[0].cycle, 5u);
    EXPECT_EQ(f.mon.counters().writes(), 3u);
  }
  {  // R without AR
    Fixture f;
    f.at(1, [](AxilSample& s) { s.rvalid = true, s.rdata = 0x55; });
    f.idle(2);
    f.mon.finish();
    ASSERT_EQ(f.rules(), Rules{"AXI4_ERRS_RID"});
    EXPECT_NE(f.got[0].what.find("RDATA 0x55"), std::string::npos);
  }
  {  // one read, one response each: the second read answered only after its AR
    Fixture f;
    f.at(1, [](AxilSample& s) { s.arvalid = true; });
    f.at(2, [](AxilSample& s) { s.rvalid = true; });
    f.at(3, [](AxilSample& s) { s.arvalid = true; });
    f.at(4, [](AxilSample& s) { s.rvalid = true; });
    f.idle(5);
    f.mon.finish();
    EXPECT_TRUE(f.got.empty());
    EXPECT_EQ(f.mon.counters().reads(), 2u);
  }
}

TEST(AxilMonitor, ResponseCodes) {
  for (uint32_t code : {0u, 1u, 2u, 3u}) {
    for (bool read : {false, true}) {
      Fixture f;
      f.at(1, [&](AxilSample& s) { read ? void(s.arvalid = true) : void(s.awvalid = s.wvalid = true); });
      f.at(2, [&](AxilSample& s) {
        if (read)
          s.rvalid = true, s.rresp = code;
        else
          s.bvalid = true, s.bresp = code;
      });
      f.idle(3);
      f.mon.finish();
      Rules want;
      if (code == 1) want = {read ? "AXI4LITE_ERRS_RRESP_EXOKAY" : "AXI4LITE_ERRS_BRESP_EXOKAY"};
      if (code == 3) want = {read ? "SEAM_ERRS_RRESP_DECERR" : "SEAM_ERRS_BRESP_DECERR"};
      EXPECT_EQ(f.rules(), want) << "resp " << code << (read ? " R" : " B");
    }
  }
  AxilRules r;
  r.allow_decerr = true;
  Fixture f(r);
  f.at(1, [](AxilSample& s) { s.awvalid = s.wvalid = true; });
  f.at(2, [](AxilSample& s) { s.bvalid = true, s.bresp = 3; });
  f.idle(3);
  f.mon.finish();
  EXPECT_TRUE(f.got.empty());
  EXPECT_EQ(f.mon.counters().decerr, 1u);
}

TEST(AxilMonitor, ValidDuringReset) {
  Fixture f;
  f.at(0, [](AxilSample& s) { s.reset = true, s.arvalid = true; });
  f.at(1, [](AxilSample& s) { s.reset = true; });
  f.at(2, [](AxilSample& s) { s.awvalid = s.wvalid = true; });  // first edge after reset
  f.idle(3);
  f.mon.finish();
  EXPECT_EQ(f.rules(), (Rules{"AXI4_ERRM_ARVALID_RESET", "AXI4_ERRM_AWVALID_RESET", "AXI4_ERRM_WVALID_RESET"}));
  EXPECT_EQ(f.got[0].cycle, 0u);
  EXPECT_EQ(f.got[1].cycle, 2u);
  Fixture g;
  g.at(0, [](AxilSample& s) { s.reset = true; });
  g.idle(2);
  write(g, 3, 0, 0);
  g.idle(5);
  g.mon.finish();
  EXPECT_TRUE(g.got.empty());
  EXPECT_EQ(g.mon.counters().writes(), 1u);
}

TEST(AxilMonitor, OpenTransactionsAtTheEnd) {
  Fixture f;
  f.at(1, [](AxilSample& s) { s.awvalid = s.wvalid = s.arvalid = true; });
  f.idle(2);
  f.mon.finish();
  EXPECT_TRUE(f.got.empty());
  EXPECT_EQ(f.mon.open_writes(), 1u);
  EXPECT_EQ(f.mon.open_reads(), 1u);
}

}  // namespace
