// The ERNIC model's register file through its AXI4-Lite slave: reset values,
// access rules (RW, RO, W1C, RO-unless-SW-override), QP1's missing
// registers, the interrupt line, and a doorbell that reaches the QP
// manager. Expected values come from PG332 v3.1 (../shared/spec/ernic-pg332.md).
#include <gtest/gtest.h>

#include <systemc>

#include "model/ernic/ernic.h"
#include "model/host/host_memory.h"
#include "model/regs/regs.h"

using namespace ernic;
namespace R = ernic::regs;
namespace FLD = ernic::regs::fld;

namespace {

// One ERNIC with host memory; a test body runs as an SC_THREAD so that the
// AXI4-Lite transactions take their cycles.
struct Bench : sc_core::sc_module {
  SC_HAS_PROCESS(Bench);
  ClockDomain core{"core", 200.0};
  SimContext ctx;
  HostMemory mem{1 << 20};
  Ernic ernic;
  AxiLitePort axil;
  std::function<void(Bench&)> body;
  bool done = false;
  explicit Bench(std::function<void(Bench&)> b)
      : sc_module("bench"), ernic("ernic", core, mem, ctx, "top.ernic", ErnicConfig{}),
        axil("axil", core, ernic, ctx, "top.axil"), body(std::move(b)) {
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    done = true;
    sc_core::sc_stop();
  }
  uint32_t g(uint32_t off) { return axil.read(R::kLayout31.global(off)); }
  void gw(uint32_t off, uint32_t v) { axil.write(R::kLayout31.global(off), v); }
  uint32_t q(uint32_t qpn, uint32_t off) { return axil.read(R::kLayout31.qp(qpn, off)); }
  void qw(uint32_t qpn, uint32_t off, uint32_t v) { axil.write(R::kLayout31.qp(qpn, off), v); }
};

void run_bench(std::function<void(Bench&)> body) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  Bench b(std::move(body));
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_TRUE(b.done);
}

}  // namespace

TEST(ErnicRegs, ResetValuesFromPg332) {
  run_bench([](Bench& b) {
    EXPECT_EQ(b.g(R::g::XRNICCONF), 0u);
    EXPECT_EQ(b.g(R::g::XRNIC_BUF_THRESHOLD_ROCE), 0x965Au);
    EXPECT_EQ(b.g(R::g::XRNIC_BUF_THRESHOLD_NON_ROCE), 0x965Au);
    EXPECT_EQ(b.g(R::g::XRNIC_PAUSE_CONF), 0x800u);
    // A fresh QP: SQ empty (bit 9) and outstanding queue empty (bit 10).
    EXPECT_EQ(b.q(2, R::q::STATQPi), (1u << 9) | (1u << 10));
    EXPECT_EQ(b.q(2, R::q::QPCONFi), 0u);
    // Absolute 3.1 addresses: XRNICCONF at 0x20000, QPCONF2 at 0x20300.
    EXPECT_EQ(R::kLayout31.global(R::g::XRNICCONF), 0x20000u);
    EXPECT_EQ(R::kLayout31.qp(2, R::q::QPCONFi), 0x20300u);
    EXPECT_EQ(R::kLayout31.qp(1, R::q::SQPIi), 0x20238u);
    EXPECT_EQ(R::kLayout4x.qp(2, R::q::SQPIi), 0x180138u);
  });
}

TEST(ErnicRegs, AccessRules) {
  run_bench([](Bench& b) {
    // RW keeps every bit.
    b.gw(R::g::IPv4XADD, 0x0A000001);
    EXPECT_EQ(b.g(R::g::IPv4XADD), 0x0A000001u);
    // RO ignores writes.
    b.gw(R::g::ERRBUFWPTR, 0x1234);
    EXPECT_EQ(b.g(R::g::ERRBUFWPTR), 0u);
    b.qw(2, R::q::STATWQEi, 7);
    EXPECT_EQ(b.q(2, R::q::STATWQEi), 0u);
    // CQHEADi is RO unless XRNICADCONF[0] (SW override) is set and its
    // SW-override QPN field ([31:24] in 3.1) names the QP.
    b.qw(2, R::q::CQHEADi, 5);
    EXPECT_EQ(b.q(2, R::q::CQHEADi), 0u);
    b.gw(R::g::XRNICADCONF, FLD::XRNICADCONF_SW_OVERRIDE.bit());  // names QP 0: none
    b.qw(2, R::q::CQHEADi, 5);
    EXPECT_EQ(b.q(2, R::q::CQHEADi), 0u);
    b.gw(R::g::XRNICADCONF, FLD::XRNICADCONF_SW_OVERRIDE.bit() | 2u << 24);
    b.qw(2, R::q::CQHEADi, 5);
    b.qw(3, R::q::CQHEADi, 5);
    EXPECT_EQ(b.q(2, R::q::CQHEADi), 5u);
    EXPECT_EQ(b.q(3, R::q::CQHEADi), 0u);
    b.gw(R::g::XRNICADCONF, 0);
    b.qw(2, R::q::CQHEADi, 9);
    EXPECT_EQ(b.q(2, R::q::CQHEADi), 5u);
    // QP1 has no QPADVCONFi / SQPSNi: writes vanish, reads give 0.
    b.qw(1, R::q::QPADVCONFi, 0xFFFF4000);
    EXPECT_EQ(b.q(1, R::q::QPADVCONFi), 0u);
    b.qw(2, R::q::QPADVCONFi, 0xFFFF4000);
    EXPECT_EQ(b.q(2, R::q::QPADVCONFi), 0xFFFF4000u);
    // Reserved addresses read 0.
    EXPECT_EQ(b.axil.read(R::kLayout31.global(0x030)), 0u);
    // The MR table: entry 3's ACCESSDESC at 3*0x100 + 0x1C.
    b.axil.write(0x31C, 0x0002);
    EXPECT_EQ(b.axil.read(0x31C), 2u);
  });
}

TEST(ErnicRegs, IllegalOpcodeRaisesIntsts5AndW1CClearsIt) {
  run_bench([](Bench& b) {
    // QP1 with an SQ at 0x1000 holding one WQE whose opcode (0x07) is illegal.
    uint8_t wqe[64] = {};
    wqe[16] = 0x07;
    b.mem.write(0x1000, wqe, 64);
    b.gw(R::g::XRNICCONF, FLD::XRNICCONF_EN.bit() | FLD::XRNICCONF_NUM_QP.set(0, 8));
    b.gw(R::g::INTEN, FLD::INTSTS_ILLEGAL_OPCODE.bit());
    b.qw(1, R::q::SQBAi, 0x1000);
    b.qw(1, R::q::QDEPTHi, 16 | 16u << 16);
    b.qw(1, R::q::QPCONFi, FLD::QPCONFi_EN.bit() | FLD::QPCONFi_HW_HANDSHAKE_DIS.bit());
    EXPECT_FALSE(b.ernic.intr.read());
    b.qw(1, R::q::SQPIi, 1);
    wait(sc_core::sc_time(2, sc_core::SC_US));  // WQE fetch: 100-cycle DMA latency
    EXPECT_EQ(b.g(R::g::INTSTS), FLD::INTSTS_ILLEGAL_OPCODE.bit());
    EXPECT_TRUE(b.ernic.intr.read());
    EXPECT_EQ(b.q(1, R::q::STATWQEi), 1u);         // the QP manager took it
    EXPECT_EQ(b.q(1, R::q::STATCURSQPTRi), 1u);
    b.gw(R::g::INTSTS, FLD::INTSTS_ILLEGAL_OPCODE.bit());         // W1C
    EXPECT_EQ(b.g(R::g::INTSTS), 0u);
    EXPECT_FALSE(b.ernic.intr.read());
  });
}

TEST(ErnicRegs, AxiLiteTiming) {
  run_bench([](Bench& b) {
    // A write is posted (the caller goes on at once) and takes 2 core cycles
    // at the slave (AW/W handshake, B); a read does not pass it, then takes
    // 3 (AR, wait, R). No PCIe flight time in this bench.
    b.core.sync();
    const uint64_t t0 = sc_core::sc_time_stamp().value();
    b.gw(R::g::IPv4XADD, 1);
    const uint64_t t1 = sc_core::sc_time_stamp().value();
    (void)b.g(R::g::IPv4XADD);
    const uint64_t t2 = sc_core::sc_time_stamp().value();
    EXPECT_EQ(t1 - t0, 0u);
    EXPECT_EQ(t2 - t1, (2 + 3) * 5000u);
  });
}

TEST(ErnicRegs, AddressNames) {
  EXPECT_EQ(R::address_name(R::kLayout31, 0x20238 + 0x100, 8, 256), "SQPIi[2]");
  EXPECT_EQ(R::address_name(R::kLayout31, 0x20184, 8, 256), "INTSTS");
  EXPECT_EQ(R::address_name(R::kLayout31, 0x201B0, 8, 256), "CQINTSTS1");
  EXPECT_EQ(R::address_name(R::kLayout31, 0x0214, 8, 256), "BUFRKEY[2]");
  ASSERT_NE(R::find_register("TIMEOUTCONFi"), nullptr);
  EXPECT_EQ(R::find_register("TIMEOUTCONFi")->offset, 0x4Cu);
  EXPECT_EQ(R::find_register("NOPE"), nullptr);
}

TEST(ErnicRegs, FieldTableMatchesPg332AndTheModelConstants) {
  // Every field names a register of the description and fits in 32 bits;
  // no two fields of a register overlap.
  for (const auto& f : R::all_fields()) {
    ASSERT_NE(R::find_register(f.reg), nullptr) << f.reg << "." << f.name;
    EXPECT_LE(f.lsb + f.width, 32u) << f.reg << "." << f.name;
    for (const auto& g : R::all_fields())
      if (&g != &f && std::string(g.reg) == f.reg && (g.layouts & f.layouts))
        EXPECT_EQ(f.mask() & g.mask(), 0u) << f.reg << "." << f.name << " vs " << g.name;
  }
  // Positions from PG332 v3.1 (spec sections 1-3).
  EXPECT_EQ(R::find_field("QPCONFi", "PMTU")->mask(), 0x700u);
  EXPECT_EQ(R::find_field("XRNICCONF", "UDP_SPORT")->mask(), 0xFFFF0000u);
  EXPECT_EQ(R::find_field("TIMEOUTCONFi", "RNR_TIMER")->mask(), 0x1F0000u);
  EXPECT_EQ(R::find_field("STATQPi", "OSQ_EMPTY")->mask(), 1u << 10);
  EXPECT_EQ(R::find_field("QPCONFi", "CQE_WRITE_EN")->mask(), 1u << 5);
  EXPECT_EQ(R::find_field("INTSTS", "MAD")->mask(), 1u << 1);
  // The generated constants are the table's fields, and the named values
  // PG332's codes (QPCONFi[10:8]: 0 = 256 .. 4 = 4096 bytes).
  EXPECT_EQ(FLD::STATQPi_OSQ_EMPTY.mask(), R::find_field("STATQPi", "OSQ_EMPTY")->mask());
  EXPECT_EQ(FLD::QPCONFi_PMTU.mask(), 0x700u);
  EXPECT_EQ(R::fld4x::XRNICCONF_UDP_SPORT.mask(), 0x00FFFF00u);
  EXPECT_EQ(R::u(R::val::QPCONFi_PMTU::MTU_256), 0u);
  EXPECT_EQ(R::u(R::val::QPCONFi_PMTU::MTU_4096), 4u);
  EXPECT_EQ(R::pmtu_bytes(R::val::QPCONFi_PMTU::MTU_1024), 1024u);
  EXPECT_EQ(R::pmtu_code_of(2048), R::val::QPCONFi_PMTU::MTU_2048);
  EXPECT_EQ(R::pmtu_code_of(1000), std::nullopt);
  EXPECT_EQ(roce::pmtu_list(), "256, 512, 1024, 2048, 4096");
  EXPECT_EQ(R::pmtu_bytes(5), 4096u);  // reserved codes: 4096
  EXPECT_EQ(R::u(R::val::ACCESSDESC_ACCESS::READ_WRITE), 2u);
  EXPECT_EQ(R::find_field("QPCONFi", "PMTU")->set(0x21, 4), 0x421u);
  EXPECT_EQ(R::find_field("LSTRQREQi", "OPCODE")->get(0x0A123456), 0x0Au);
  // Fields the 4.x layout moves (XIB4, AUD): the UDP port to [23:8], the QP
  // count out of XRNICCONF, the SW-override QPN to [31:20].
  EXPECT_EQ(R::find_field("XRNICCONF", "UDP_SPORT", R::kLayout4x)->mask(), 0x00FFFF00u);
  EXPECT_EQ(R::find_field("XRNICCONF", "NUM_QP", R::kLayout4x), nullptr);
  EXPECT_EQ(R::find_field("XRNIC_CONF_QP_EN", "NUM_QP", R::kLayout4x)->mask(), 0xFFFu);
  EXPECT_EQ(R::find_field("XRNICADCONF", "SW_OVERRIDE_QPN", R::kLayout4x)->mask(), 0xFFF00000u);
  EXPECT_EQ(R::find_field("XRNICADCONF", "SW_OVERRIDE_QPN")->mask(), 0xFF000000u);
  // The layout constants the model uses agree with the description.
  EXPECT_EQ(R::find_field("XRNICCONF", "UDP_SPORT", R::kLayout4x)->mask(), R::kLayout4x.udp_sport.mask());
  EXPECT_EQ(R::find_field("XRNICCONF", "UDP_SPORT", R::kLayout31)->mask(), R::kLayout31.udp_sport.mask());
  EXPECT_EQ(R::find_field("XRNICADCONF", "SW_OVERRIDE_QPN", R::kLayout4x)->mask(), R::kLayout4x.swovr_qpn.mask());
  EXPECT_EQ(R::find_field("XRNICADCONF", "SW_OVERRIDE_QPN", R::kLayout31)->mask(), R::kLayout31.swovr_qpn.mask());
  // The layouts' block bases and banks (ernic_regs.yaml `layouts`, PG332).
  EXPECT_EQ(R::kLayout31.gcsr_base, 0x20000u);
  EXPECT_EQ(R::kLayout4x.qcsr_base, 0x180000u);
  EXPECT_EQ(R::kLayout31.cq_int_bank, 0x1B0u);
  EXPECT_EQ(R::kLayout4x.cnp_bank, 0x390u);
  EXPECT_EQ(R::kLayout4x.int_banks, 64u);
}
