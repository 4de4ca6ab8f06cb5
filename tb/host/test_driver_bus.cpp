// The driver (model/host/driver.h) on a fake HostBus: plain C++, no
// SystemC, no NIC. The bus keeps a register file, host memory and a clock,
// so each test sees exactly which registers the driver writes with which
// values. Expected offsets and fields are PG332's (../shared/spec/
// ernic-pg332.md, the 3.1 layout): global registers at 0x20000, QP i's at
// 0x20200 + (i-1)*0x100, MR entry i at i*0x100.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "model/host/driver.h"

using namespace ernic;
using namespace ernic::host;

namespace {

constexpr uint32_t kQp(uint32_t qpn, uint32_t off) { return 0x20200 + (qpn - 1) * 0x100 + off; }
constexpr uint32_t kMr(uint32_t idx, uint32_t off) { return idx * 0x100 + off; }
constexpr uint32_t kIpktErrQWptr = 0x20000 + 0x094;

class FakeBus : public HostBus {
 public:
  std::map<uint32_t, uint32_t> regs, reads;  // written values; values reads return (else the written one)
  std::vector<std::pair<uint32_t, uint32_t>> writes;
  std::vector<uint8_t> mem = std::vector<uint8_t>(64u << 20);
  uint64_t brk = 0x100000, now = 0;
  std::vector<std::string> errors;

  uint32_t mmio_read32(uint32_t off) override {
    auto r = reads.find(off);
    if (r != reads.end()) return r->second;
    auto w = regs.find(off);
    return w == regs.end() ? 0 : w->second;
  }
  void mmio_write32(uint32_t off, uint32_t v) override {
    regs[off] = v;
    writes.push_back({off, v});
  }
  void mem_read(uint64_t a, uint8_t* d, uint64_t n) override { std::memcpy(d, &mem.at(a), n); }
  void mem_write(uint64_t a, const uint8_t* s, uint64_t n) override { std::memcpy(&mem.at(a), s, n); }
  uint64_t alloc(uint64_t bytes, uint64_t align) override {
    const uint64_t a = (brk + align - 1) / align * align;
    if (a + bytes > mem.size()) return 0;
    brk = a + bytes;
    return a;
  }
  uint64_t mem_size() const override { return mem.size(); }
  uint64_t now_ps() const override { return now; }
  void sleep_until(uint64_t deadline, unsigned) override { now = deadline == kForever ? now + 1000000 : deadline; }
  void signal(Wake) override {}
  void report_error(const std::string& w) override { errors.push_back(w); }
  void put32(uint64_t a, uint32_t v) { std::memcpy(&mem.at(a), &v, 4); }
};

DriverConfig config() {
  DriverConfig c;
  c.node = "A";
  c.mac = *roce::MacAddr::parse("02:00:00:00:00:0a");
  c.ip = *roce::Ipv4Addr::parse("10.0.0.1");
  c.seed = 1;
  return c;
}

}  // namespace

TEST(DriverBus, RegisterMrAtProgramsTheCallersAddressesWithoutGuards) {
  FakeBus bus;
  Driver d(bus, config());
  d.init();
  const Mr& m = d.register_mr_at("buf", 0x300000, 0x7FFF12340000ull, 0x10000 + 5, 1 /* write only */, 7);
  EXPECT_EQ(m.index, 0u);
  EXPECT_EQ(bus.regs.at(kMr(0, 0x00)), 7u);                  // PDPDNUM
  EXPECT_EQ(bus.regs.at(kMr(0, 0x04)), 0x12340000u);         // VIRTADDRLSB
  EXPECT_EQ(bus.regs.at(kMr(0, 0x08)), 0x7FFFu);             // VIRTADDRMSB
  EXPECT_EQ(bus.regs.at(kMr(0, 0x0C)), 0x300000u);           // BUFBASEADDRLSB
  EXPECT_EQ(bus.regs.at(kMr(0, 0x10)), 0u);                  // BUFBASEADDRMSB
  EXPECT_EQ(bus.regs.at(kMr(0, 0x14)), m.rkey & 0xFF);       // BUFRKEY: the R_Key's key byte
  EXPECT_EQ(m.rkey >> 8, 0u);                                // R_Key[31:8]: the MR index
  EXPECT_EQ(bus.regs.at(kMr(0, 0x18)), 0x10005u);            // WRRDBUFLEN
  EXPECT_EQ(bus.regs.at(kMr(0, 0x1C)), 1u);                  // ACCESSDESC: write only, length[47:32] = 0
  EXPECT_EQ(m.guard_before, 0u);
  EXPECT_EQ(m.guard_after, 0u);
  bus.mem[0x300000 - 1] = 0xEE;  // bytes around it are the caller's: no guard to break
  EXPECT_TRUE(d.check_mr_guards().empty());
  // A second one takes the next index; one outside memory is refused by name.
  const Mr& m2 = d.register_mr_at("b2", 0x400000, 0x1000, 4096, 2, 7);
  EXPECT_EQ(m2.index, 1u);
  EXPECT_EQ(bus.regs.at(kMr(1, 0x0C)), 0x400000u);
  try {
    d.register_mr_at("far", bus.mem.size() - 100, 0, 4096, 2, 7);
    FAIL() << "an MR outside host memory was accepted";
  } catch (const DriverError& e) {
    EXPECT_NE(std::string(e.what()).find("MR 'far'"), std::string::npos) << e.what();
  }
}

TEST(DriverBus, QpParamsSetPdAndTimeoutconf) {
  FakeBus bus;
  Driver d(bus, config());
  d.init();
  d.add_neighbour(*roce::Ipv4Addr::parse("10.0.0.2"), *roce::MacAddr::parse("02:00:00:00:00:0b"));
  QpParams p;
  p.qpn = 3;
  p.start_psn = 100;
  p.pd = 9;
  p.ack_timeout = 20;
  p.retry_cnt = 7;
  p.rnr_retry_cnt = 6;
  p.rnr_timer = 0x0E;
  Connection& c = d.prepare(p);
  d.establish(c, 5, 200, roce::IpAddr(*roce::Ipv4Addr::parse("10.0.0.2")), {});
  EXPECT_EQ(bus.regs.at(kQp(3, 0xB0)), 9u);  // PDi
  // TIMEOUTCONFi: [5:0] ACK timeout, [10:8] retry, [13:11] RNR retry, [20:16] RNR timer
  EXPECT_EQ(bus.regs.at(kQp(3, 0x4C)), 20u | 7u << 8 | 6u << 11 | 0x0Eu << 16);
  EXPECT_EQ(bus.regs.at(kQp(3, 0x48)), 5u);  // DESTQPCONFi
  // The defaults are LX's but the timeout: 14, 3, 3, 0x1F; PDi from the MR when no pd is given.
  const Mr& mr = d.register_mr("m", 4096, 2, 4);
  QpParams q;
  q.qpn = 4;
  q.start_psn = 1;
  q.mr = &mr;
  Connection& c2 = d.prepare(q);
  d.establish(c2, 6, 1, roce::IpAddr(*roce::Ipv4Addr::parse("10.0.0.2")), {});
  EXPECT_EQ(bus.regs.at(kQp(4, 0x4C)), 14u | 3u << 8 | 3u << 11 | 0x1Fu << 16);
  EXPECT_EQ(bus.regs.at(kQp(4, 0xB0)), 4u);
}

TEST(DriverBus, FatalCodeReadsTheErrorStatusQueuePerQp) {
  FakeBus bus;
  Driver d(bus, config());
  d.init();
  // Where init put the queue: IPKTERRQBA (global 0x088 in the 3.1 layout).
  const uint64_t q = bus.regs.at(0x20000 + 0x088);
  ASSERT_NE(q, 0u);
  EXPECT_EQ(d.fatal_code(3), 0u);
  // Two entries (8 bytes each, word 0 = QPN[31:16] | code[15:0]): QP 3 remote access, QP 5 RNR.
  bus.put32(q + 0, 3u << 16 | 0x0A);
  bus.put32(q + 8, 5u << 16 | 0x09);
  bus.reads[kIpktErrQWptr] = 2;
  EXPECT_EQ(d.fatal_code(3), 0x0Au);
  EXPECT_EQ(d.fatal_code(5), 0x09u);  // read with QP 3's, kept
  EXPECT_EQ(d.fatal_code(4), 0u);
  bus.put32(q + 16, 3u << 16 | 0x15);  // a later entry for QP 3 replaces the code
  bus.reads[kIpktErrQWptr] = 3;
  EXPECT_EQ(d.fatal_code(3), 0x15u);
}

TEST(DriverBus, DestroyQpRunsPg332DeletionAndFreesTheQpn) {
  FakeBus bus;
  Driver d(bus, config());
  d.init();
  d.add_neighbour(*roce::Ipv4Addr::parse("10.0.0.2"), *roce::MacAddr::parse("02:00:00:00:00:0b"));
  QpParams p;
  p.qpn = 2;
  p.start_psn = 1;
  Connection& c = d.prepare(p);
  d.establish(c, 2, 1, roce::IpAddr(*roce::Ipv4Addr::parse("10.0.0.2")), {});
  const uint32_t qpconf = bus.regs.at(kQp(2, 0x00));
  EXPECT_EQ(qpconf & 1u, 1u);                          // enabled
  bus.reads[kQp(2, 0x88)] = 1u << 9 | 1u << 10;        // STATQPi: SQ empty, outstanding queue empty
  bus.writes.clear();
  d.destroy_qp(c);
  EXPECT_EQ(c.state, VerbsState::Reset);
  // XRNICADCONF (0x20004): SW override with the QPN in [31:24], then restored.
  ASSERT_GE(bus.writes.size(), 4u);
  EXPECT_EQ(bus.writes.front().first, 0x20004u);
  EXPECT_EQ(bus.writes.front().second & 1u, 1u);
  EXPECT_EQ(bus.writes.front().second >> 24, 2u);
  EXPECT_EQ(bus.writes.back().first, 0x20004u);
  EXPECT_EQ(bus.writes.back().second & 1u, 0u);
  // QPCONFi: enable cleared, under recovery ([6]) set; SQPIi, CQHEADi zero.
  EXPECT_EQ(bus.regs.at(kQp(2, 0x00)), (qpconf & ~1u) | 1u << 6);
  EXPECT_EQ(bus.regs.at(kQp(2, 0x38)), 0u);
  EXPECT_EQ(bus.regs.at(kQp(2, 0x30)), 0u);
  // QPN 2 is free again: a new connection may take it.
  QpParams again;
  again.qpn = 2;
  again.start_psn = 1;
  EXPECT_EQ(d.prepare(again).qpn, 2u);
}

TEST(DriverBus, ServiceInterruptClearsWhatItReadAndTheCqBanks) {
  FakeBus bus;
  Driver d(bus, config());
  d.init();
  bus.writes.clear();
  bus.reads[0x20000 + 0x184] = 1u << 4 | 1u << 7;  // INTSTS: WQE completed, fatal
  EXPECT_EQ(d.service_interrupt(), 0x90u);
  ASSERT_FALSE(bus.writes.empty());
  EXPECT_EQ(bus.writes[0], std::make_pair(0x20184u, 0x90u));  // W1C of what was read
  // The CQ interrupt banks (3.1: 0x201B0 + 4 * b, 8 banks) are cleared.
  for (uint32_t b = 0; b < 8; ++b) EXPECT_EQ(bus.regs.at(0x201B0 + 4 * b), 0xFFFFFFFFu) << b;
  EXPECT_EQ(d.fatal_interrupts(), 1u);
  bus.reads[0x20000 + 0x184] = 0;
  bus.writes.clear();
  EXPECT_EQ(d.service_interrupt(), 0u);  // nothing pending: one read, no write
  EXPECT_TRUE(bus.writes.empty());
}
