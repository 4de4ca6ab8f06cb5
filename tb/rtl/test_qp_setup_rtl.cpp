// tb/rtl: the Verilated QP-setup offload (rtl/qp_setup/qp_setup_fsm.sv,
// Vqp_setup_fsm) against its C++ reference model (model/datapath/
// qp_setup_model.h) on a table of register programs.
//
// Each case is one program: configuration writes, commands (QP parameters,
// CMD), register dumps. It runs twice: on the RTL in a SystemC testbench
// (an AXI4-Lite host BFM on the slave port; on the master port a fake ERNIC
// register file that answers with seeded random ready/valid delays and
// checks the AXI rules: valid held with stable address and data until
// ready), and on the model with the same fake register file. Both give a
// trace: every command's status code, the states it passed, the ERNIC
// accesses its master made (read/write, address, data, order) and the
// values of every register read; the traces must be equal. Each case also
// states the status codes its commands must end with (seed 001's table),
// and the create case the exact ERNIC writes, computed here from PG332's
// register offsets and the slot layout, apart from both implementations.
// Each case elaborates its own kernel, so they run one per process.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "Vqp_setup_fsm.h"
#include "model/datapath/qp_setup_model.h"
#include "model/regs/regs.h"
#include "verilated.h"

using namespace sc_core;
namespace Q = ernic::qps;
namespace R = ernic::regs;

namespace {

constexpr int kClockPs = 5000;  // 200 MHz core clock

struct MasterOp {
  bool write;
  uint32_t addr, data;
  bool operator==(const MasterOp& o) const { return write == o.write && addr == o.addr && data == o.data; }
};

struct CmdRecord {
  uint8_t status = 0;
  Q::State final_state = Q::State::Idle;
  std::vector<Q::State> path;     // states entered after CMD, the final one included
  std::vector<MasterOp> ops;      // the master's ERNIC accesses, in order
  bool operator==(const CmdRecord& o) const {
    return status == o.status && final_state == o.final_state && path == o.path && ops == o.ops;
  }
};

struct Trace {
  std::vector<CmdRecord> cmds;
  std::vector<std::pair<uint32_t, uint32_t>> reads;  // offset, value
};

enum class Link { up, down, up_after };

// A channel whose valid was high without ready at the last edge: its payload then.
struct Held { bool pending = false; uint32_t a = 0, d = 0; };  // up_after: rises `after` cycles into CMAC_INIT

// QP parameters of one create command.
struct Create {
  uint16_t qpn = 2;
  uint32_t destqp = 3;
  uint32_t ip = 0x0A000002;        // 10.0.0.2
  uint32_t udp = 4791;
  uint32_t mac_lsb = 0x0000000B, mac_msb = 0x0200;  // 02:00:00:00:00:0b
  uint32_t sq_psn = 0x000100, exp_psn = 0x000200;
  uint32_t pd = 1;
  uint8_t opcode = Q::kOpCreate, transport = Q::kTransportRoceV2;
};

// The program's view of the block: the same calls drive the RTL and the model.
class Bus {
 public:
  virtual ~Bus() = default;
  virtual void write(uint32_t off, uint32_t data, uint32_t strb = 0xF) = 0;
  virtual uint32_t read_raw(uint32_t off) = 0;
  virtual void go() = 0;  // CMD = 1, then wait until the command has ended; records it
  virtual void set_link(Link l, uint32_t after = 0) = 0;
  virtual void preset_ernic(uint32_t addr, uint32_t value) = 0;
  Trace tr;

  uint32_t read(uint32_t off) {
    const uint32_t v = read_raw(off);
    tr.reads.emplace_back(off, v);
    return v;
  }
  void dump() {
    for (uint32_t off = 0; off <= Q::reg::kLast + 4; off += 4) read(off);
  }
  // Pool at 0x200000, 128 KiB slots, `n` of them; ERNIC with 8 QPs.
  void configure(uint32_t n, uint32_t slot_bytes = 0x20000) {
    write(Q::reg::POOL_BASE_LO, 0x0020'0000);
    write(Q::reg::POOL_BASE_HI, 0);
    write(Q::reg::SLOT_BYTES, slot_bytes);
    write(Q::reg::POOL_COUNT, n);
    write(Q::reg::MAX_QPN, 8);
  }
  void create(const Create& c) {
    write(Q::reg::QPCTRL, Q::qpctrl(c.opcode, c.qpn, c.transport));
    write(Q::reg::DESTQP, c.destqp);
    write(Q::reg::REMOTE_IP, c.ip);
    write(Q::reg::UDP_PORT, c.udp);
    write(Q::reg::MAC_LSB, c.mac_lsb);
    write(Q::reg::MAC_MSB, c.mac_msb);
    write(Q::reg::SQ_PSN, c.sq_psn);
    write(Q::reg::EXP_PSN, c.exp_psn);
    write(Q::reg::PD, c.pd);
    go();
  }
  void release(uint16_t qpn) {
    write(Q::reg::QPCTRL, Q::qpctrl(Q::kOpRelease, qpn));
    go();
  }
};

// ---- the model ---------------------------------------------------------------

class ModelBus : public Bus, Q::QpSetupModel::Env {
 public:
  void write(uint32_t off, uint32_t data, uint32_t strb) override {
    if (!m_.write(off, data, strb)) return;
    rec_ = CmdRecord{};
    m_.execute(*this);
    rec_.status = m_.status();
    rec_.final_state = m_.state();
    tr.cmds.push_back(rec_);
  }
  uint32_t read_raw(uint32_t off) override { return m_.read(off); }
  void go() override { write(Q::reg::CMD, 1, 0xF); }
  void set_link(Link l, uint32_t after) override { link_ = l, after_ = after; }
  void preset_ernic(uint32_t addr, uint32_t value) override { ernic_[addr] = value; }

 private:
  uint32_t ernic_read(uint32_t addr) override {
    rec_.ops.push_back({false, addr, ernic_[addr]});
    return ernic_[addr];
  }
  void ernic_write(uint32_t addr, uint32_t data) override {
    rec_.ops.push_back({true, addr, data});
    ernic_[addr] = data;
  }
  bool wait_link(uint32_t timeout) override {
    return link_ == Link::up || (link_ == Link::up_after && after_ <= timeout);
  }
  void enter(Q::State s) override { rec_.path.push_back(s); }

  Q::QpSetupModel m_;
  CmdRecord rec_;
  std::map<uint32_t, uint32_t> ernic_;
  Link link_ = Link::up;
  uint32_t after_ = 0;
};

// ---- the RTL -----------------------------------------------------------------

SC_MODULE(QpsTb), public Bus {
  sc_clock clk{"clk", sc_time(kClockPs, SC_PS)};
  sc_signal<bool> rst_n{"rst_n"}, s_awvalid{"s_awvalid"}, s_awready{"s_awready"}, s_wvalid{"s_wvalid"},
      s_wready{"s_wready"}, s_bvalid{"s_bvalid"}, s_bready{"s_bready"}, s_arvalid{"s_arvalid"},
      s_arready{"s_arready"}, s_rvalid{"s_rvalid"}, s_rready{"s_rready"};
  sc_signal<uint32_t> s_awaddr{"s_awaddr"}, s_wdata{"s_wdata"}, s_wstrb{"s_wstrb"}, s_bresp{"s_bresp"},
      s_araddr{"s_araddr"}, s_rdata{"s_rdata"}, s_rresp{"s_rresp"};
  sc_signal<bool> m_awvalid{"m_awvalid"}, m_awready{"m_awready"}, m_wvalid{"m_wvalid"}, m_wready{"m_wready"},
      m_bvalid{"m_bvalid"}, m_bready{"m_bready"}, m_arvalid{"m_arvalid"}, m_arready{"m_arready"},
      m_rvalid{"m_rvalid"}, m_rready{"m_rready"};
  sc_signal<uint32_t> m_awaddr{"m_awaddr"}, m_wdata{"m_wdata"}, m_wstrb{"m_wstrb"}, m_bresp{"m_bresp"},
      m_araddr{"m_araddr"}, m_rdata{"m_rdata"}, m_rresp{"m_rresp"};
  sc_signal<bool, SC_MANY_WRITERS> cmac_link_up{"cmac_link_up"};  // the host sets the mode, the monitor raises it
  sc_signal<bool> busy{"busy"};
  sc_signal<uint32_t> state{"state"}, status{"status"};
  sc_signal<uint32_t> wait_skip{"wait_skip"}, link_wait_left{"link_wait_left"};  // the clock runs: no skip
  sc_signal<bool> link_wait{"link_wait"};
  Vqp_setup_fsm dut{"dut"};

  std::function<void(Bus&)> program;
  std::vector<std::string> violations;  // AXI rule breaches on the master port
  std::vector<uint64_t> cmd_cycles;     // CMD write to the end, per command
  uint64_t edge = 0;

  SC_HAS_PROCESS(QpsTb);
  QpsTb(sc_module_name n, uint64_t seed) : sc_module(n), rng_(seed) {
    dut.clk(clk); dut.rst_n(rst_n);
    dut.s_awvalid(s_awvalid); dut.s_awready(s_awready); dut.s_awaddr(s_awaddr);
    dut.s_wvalid(s_wvalid); dut.s_wready(s_wready); dut.s_wdata(s_wdata); dut.s_wstrb(s_wstrb);
    dut.s_bvalid(s_bvalid); dut.s_bready(s_bready); dut.s_bresp(s_bresp);
    dut.s_arvalid(s_arvalid); dut.s_arready(s_arready); dut.s_araddr(s_araddr);
    dut.s_rvalid(s_rvalid); dut.s_rready(s_rready); dut.s_rdata(s_rdata); dut.s_rresp(s_rresp);
    dut.m_awvalid(m_awvalid); dut.m_awready(m_awready); dut.m_awaddr(m_awaddr);
    dut.m_wvalid(m_wvalid); dut.m_wready(m_wready); dut.m_wdata(m_wdata); dut.m_wstrb(m_wstrb);
    dut.m_bvalid(m_bvalid); dut.m_bready(m_bready); dut.m_bresp(m_bresp);
    dut.m_arvalid(m_arvalid); dut.m_arready(m_arready); dut.m_araddr(m_araddr);
    dut.m_rvalid(m_rvalid); dut.m_rready(m_rready); dut.m_rdata(m_rdata); dut.m_rresp(m_rresp);
    dut.cmac_link_up(cmac_link_up);
    dut.state(state); dut.status(status); dut.busy(busy);
    dut.wait_skip(wait_skip); dut.link_wait(link_wait); dut.link_wait_left(link_wait_left);
    SC_THREAD(host);
    SC_METHOD(ernic);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  // -- the host BFM (values written after edge k are sampled at edge k+1) --
  void step() { wait(clk.posedge_event()); }
  void write(uint32_t off, uint32_t data, uint32_t strb) override {
    s_awvalid = true; s_awaddr = off; s_wvalid = true; s_wdata = data; s_wstrb = strb; s_bready = true;
    do step(); while (!(s_awready.read() && s_wready.read()));
    s_awvalid = false; s_wvalid = false;
    do step(); while (!s_bvalid.read());
  }
  uint32_t read_raw(uint32_t off) override {
    s_arvalid = true; s_araddr = off; s_rready = true;
    do step(); while (!s_arready.read());
    s_arvalid = false;
    do step(); while (!s_rvalid.read());
    return s_rdata.read();
  }
  void go() override {
    rec_ = CmdRecord{};
    last_state_ = Q::State(state.read());
    recording_ = true;
    const uint64_t start = edge;
    write(Q::reg::CMD, 1, 0xF);
    uint32_t st;
    do st = read_raw(Q::reg::STATUS); while (st & Q::kStatusBusy);
    recording_ = false;
    cmd_cycles.push_back(edge - start);
    rec_.status = uint8_t(st & Q::kStatusCodeMask);
    rec_.final_state = Q::State((st >> Q::kStatusStateShift) & 7);
    tr.cmds.push_back(rec_);
  }
  void set_link(Link l, uint32_t after) override {
    link_ = l;
    after_ = after;
    in_init_ = 0;
    cmac_link_up = l == Link::up;
  }
  void preset_ernic(uint32_t addr, uint32_t value) override { regs_[addr] = value; }

  void host() {
    rst_n = false;
    s_awvalid = s_wvalid = s_arvalid = false;
    s_bready = s_rready = true;
    s_wstrb = 0xF;
    cmac_link_up = true;
    for (int i = 0; i < 3; ++i) step();
    rst_n = true;
    step();
    program(*this);
    sc_stop();
  }

  // -- the fake ERNIC register file on the master port --
  bool coin(int percent) { return int(rng_() % 100) < percent; }
  void check_held(const char* ch, bool valid, bool ready, uint32_t a, uint32_t d, Held& h) {
    if (h.pending && (!valid || a != h.a || d != h.d))
      violations.push_back(std::string(ch) + ": valid dropped or payload changed before ready, at edge " +
                           std::to_string(edge));
    h.pending = valid && !ready;
    h.a = a;
    h.d = d;
  }
  void ernic() {
    ++edge;
    // Values held during the cycle that ends at this edge.
    const bool awv = m_awvalid.read(), wv = m_wvalid.read(), arv = m_arvalid.read();
    const bool awr = m_awready.read(), wr = m_wready.read(), arr = m_arready.read();
    check_held("AW", awv, awr, m_awaddr.read(), 0, aw_h_);
    check_held("W", wv, wr, m_wdata.read(), m_wstrb.read(), w_h_);
    check_held("AR", arv, arr, m_araddr.read(), 0, ar_h_);
    if (awv && awr) { aw_got_ = true; aw_addr_ = m_awaddr.read(); }
    if (wv && wr) {
      w_got_ = true;
      w_data_ = m_wdata.read();
      if (m_wstrb.read() != 0xF) violations.push_back("W: partial strobe");
    }
    if (m_bvalid.read() && m_bready.read()) m_bvalid = false;
    if (m_rvalid.read() && m_rready.read()) m_rvalid = false;
    if (aw_got_ && w_got_) {
      regs_[aw_addr_] = w_data_;
      if (recording_) rec_.ops.push_back({true, aw_addr_, w_data_});
      aw_got_ = w_got_ = false;
      b_wait_ = 1 + int(rng_() % 3);
    }
    if (arv && arr) {
      r_val_ = regs_[m_araddr.read()];
      if (recording_) rec_.ops.push_back({false, m_araddr.read(), r_val_});
      r_wait_ = 1 + int(rng_() % 3);
    }
    if (b_wait_ > 0 && --b_wait_ == 0) m_bvalid = true;
    if (r_wait_ > 0 && --r_wait_ == 0) {
      m_rvalid = true;
      m_rdata = r_val_;
    }
    m_bresp = 0;
    m_rresp = 0;
    m_awready = !aw_got_ && b_wait_ == 0 && coin(60);
    m_wready = !w_got_ && b_wait_ == 0 && coin(60);
    m_arready = r_wait_ == 0 && !m_rvalid.read() && coin(60);
    // The state during the cycle that ended here, and the link.
    const auto s = Q::State(state.read());
    if (recording_ && s != last_state_) rec_.path.push_back(s);
    last_state_ = s;
    if (link_ == Link::up_after && s == Q::State::CmacInit && ++in_init_ >= after_) cmac_link_up = true;
  }

 private:
  std::mt19937_64 rng_;
  std::map<uint32_t, uint32_t> regs_;
  CmdRecord rec_;
  bool recording_ = false;
  Q::State last_state_ = Q::State::Idle;
  Link link_ = Link::up;
  uint32_t after_ = 0, in_init_ = 0;
  bool aw_got_ = false, w_got_ = false;
  uint32_t aw_addr_ = 0, w_data_ = 0, r_val_ = 0;
  int b_wait_ = 0, r_wait_ = 0;
  Held aw_h_, w_h_, ar_h_;
};

// ---- the table ----------------------------------------------------------------

struct Case {
  const char* name;
  std::function<void(Bus&)> program;
  std::vector<uint8_t> codes;  // every command's expected status, in order
};

constexpr uint8_t OK = Q::status::kSuccess, QPN = Q::status::kQpnRange, POOL = Q::status::kPoolExhausted,
                  PSN = Q::status::kPsnOrActive, LINK = Q::status::kLinkTimeout, BAD = Q::status::kBadCommand;

Create qp(uint16_t n) {
  Create c;
  c.qpn = n;
  c.destqp = n + 1;
  return c;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> t = {
      {"create_ready",  // 0x17: READY, the 21 writes (checked below)
       [](Bus& b) {
         b.configure(4);
         b.dump();
         b.create(qp(2));
         b.dump();
       },
       {OK}},
      {"qpn_out_of_range",  // 0x01: QPN 0, 1, 9 > MAX_QPN 8, remote QPN > 24 bits; release of a QP not set up
       [](Bus& b) {
         b.configure(4);
         for (uint16_t n : {0, 1, 9, 0xFFFF}) b.create(qp(n));
         Create c = qp(3);
         c.destqp = 0x0100'0000;
         b.create(c);
         b.release(4);
         b.dump();
       },
       {QPN, QPN, QPN, QPN, QPN, QPN}},
      {"psn_out_of_range",  // 0x0B: SQ_PSN or EXP_PSN above 0xFFFFFF; 0xFFFFFF itself is fine
       [](Bus& b) {
         b.configure(4);
         Create c = qp(2);
         c.sq_psn = 0x0100'0000;
         b.create(c);
         c.sq_psn = 0;
         c.exp_psn = 0xFFFF'FFFF;
         b.create(c);
         c.sq_psn = 0xFFFFFF;
         c.exp_psn = 0;  // LSTRQREQi wraps to 0xFFFFFF
         b.create(c);
         b.dump();
       },
       {PSN, PSN, OK}},
      {"qpn_already_active",  // 0x0B: set up here twice; enabled in ERNIC (QPCONFi[0]); release frees it
       [](Bus& b) {
         b.configure(4);
         b.create(qp(2));
         b.create(qp(2));
         b.preset_ernic(R::kLayout31.qp(5, R::q::QPCONFi), 0x431);
         b.create(qp(5));
         b.release(2);
         b.dump();
         b.create(qp(2));
       },
       {OK, PSN, PSN, OK, OK}},
      {"pool_exhausted",  // 0x05: two slots; the third QP fails; a release makes room (slot 0 again)
       [](Bus& b) {
         b.configure(2);
         b.create(qp(2));
         b.create(qp(3));
         b.dump();
         b.create(qp(4));
         b.release(2);
         b.create(qp(4));
         b.dump();
       },
       {OK, OK, POOL, OK, OK}},
      {"slot_too_small",  // 0x05: the queues need 0x12000 bytes, the slots have 0x10000
       [](Bus& b) {
         b.configure(4, 0x10000);
         b.create(qp(2));
         b.write(Q::reg::QDEPTH, 64 | 8u << 16);  // 8 RQ elements: 0xA000 bytes fit
         b.create(qp(2));
         b.dump();
       },
       {POOL, OK}},
      {"link_timeout",  // 0x13 after LINK_TIMEOUT cycles; the slot is free again; then the link is up
       [](Bus& b) {
         b.configure(4);
         b.write(Q::reg::LINK_TIMEOUT, 40);
         b.set_link(Link::down);
         b.create(qp(2));
         b.dump();
         b.set_link(Link::up_after, 10);
         b.create(qp(2));
         b.dump();
       },
       {LINK, OK}},
      {"unsupported_command",  // 0x02: opcode 3, transport 4, UDP port 4792
       [](Bus& b) {
         b.configure(4);
         Create c = qp(2);
         c.opcode = 3;
         b.create(c);
         c = qp(2);
         c.transport = 4;
         b.create(c);
         c = qp(2);
         c.udp = 4792;
         b.create(c);
       },
       {BAD, BAD, BAD}},
      {"layout_4x_and_strobes",  // ERNIC 4.x addresses; byte-strobed register writes
       [](Bus& b) {
         b.configure(4);
         b.write(Q::reg::ERNIC_CONF, 1);
         b.write(Q::reg::MAX_QPN, 0x0200'0000, 0x8);  // strobe 8: MAX_QPN keeps 8 (bits above 15 unused)
         b.write(Q::reg::QDEPTH, 0x0000'0020, 0x1);   // SQ depth 32, RQ depth kept
         b.write(Q::reg::POOL_COUNT, 0xFF);           // clamped to POOL_MAX
         b.dump();
         Create c = qp(7);
         c.qpn = 7;
         b.create(c);
         b.release(7);
         b.dump();
       },
       {OK, OK}},
  };
  return t;
}

class QpSetupRtl : public ::testing::TestWithParam<size_t> {};

std::string str(const MasterOp& o) {
  char b[64];
  std::snprintf(b, sizeof b, "%s 0x%06x 0x%08x", o.write ? "W" : "R", o.addr, o.data);
  return b;
}

TEST_P(QpSetupRtl, MatchesModel) {
  const Case& c = cases()[GetParam()];
  sc_set_time_resolution(1, SC_PS);
  QpsTb tb("tb", 0x5EED + GetParam());
  tb.program = c.program;
  sc_start(sc_time(100, SC_MS));
  ModelBus model;
  c.program(model);
  const Trace& rt = tb.tr;
  const Trace& mt = model.tr;
  EXPECT_TRUE(tb.violations.empty()) << tb.violations.front();
  // Status codes from the table (outside both implementations).
  ASSERT_EQ(rt.cmds.size(), c.codes.size());
  for (size_t i = 0; i < c.codes.size(); ++i)
    EXPECT_EQ(int(rt.cmds[i].status), int(c.codes[i])) << "command " << i;
  // RTL == model, command by command, access by access.
  ASSERT_EQ(rt.cmds.size(), mt.cmds.size());
  for (size_t i = 0; i < rt.cmds.size(); ++i) {
    const CmdRecord &a = rt.cmds[i], &m = mt.cmds[i];
    EXPECT_EQ(int(a.status), int(m.status)) << "command " << i;
    EXPECT_EQ(a.final_state, m.final_state) << "command " << i;
    EXPECT_EQ(a.path, m.path) << "command " << i;
    for (size_t k = 0; k < std::max(a.ops.size(), m.ops.size()); ++k) {
      const std::string ra = k < a.ops.size() ? str(a.ops[k]) : "(none)";
      const std::string ma = k < m.ops.size() ? str(m.ops[k]) : "(none)";
      EXPECT_EQ(ra, ma) << "command " << i << " access " << k;
      if (ra != ma) break;
    }
    std::printf("[ %s ] command %zu: status 0x%02x %s, %zu ERNIC accesses, %llu cycles\n", c.name, i, a.status,
                Q::state_name(a.final_state), a.ops.size(), (unsigned long long)tb.cmd_cycles[i]);
  }
  ASSERT_EQ(rt.reads.size(), mt.reads.size());
  for (size_t i = 0; i < rt.reads.size(); ++i)
    EXPECT_EQ(rt.reads[i], mt.reads[i]) << "read " << i << " of offset 0x" << std::hex << rt.reads[i].first;
  if (std::string(c.name) == "create_ready") {
    // The ERNIC writes of a create, from PG332's offsets: slot 0 of a
    // window at 0x200000 with 64 SQ and 16 RQ entries of 4096 B: SQ at
    // +0, CQ at +0x1000 (64 * 64), doorbells at +0x1100, RQ at +0x2000.
    auto qa = [](uint32_t off) { return R::kLayout31.qp(2, off); };
    const std::vector<MasterOp> want = {
        {false, qa(R::q::QPCONFi), 0},
        {true, qa(R::q::QDEPTHi), 64 | 16 << 16},
        {true, qa(R::q::SQBAi), 0x200000},        {true, qa(R::q::SQBAMSBi), 0},
        {true, qa(R::q::CQBAi), 0x201000},        {true, qa(R::q::CQBAMSBi), 0},
        {true, qa(R::q::RQBAi), 0x202000},        {true, qa(R::q::RQBAMSBi), 0},
        {true, qa(R::q::CQDBADDi), 0x201100},     {true, qa(R::q::CQDBADDMSBi), 0},
        {true, qa(R::q::RQWPTRDBADDi), 0x201104}, {true, qa(R::q::RQWPTRDBADDMSBi), 0},
        {true, qa(R::q::DESTQPCONFi), 3},
        {true, qa(R::q::SQPSNi), 0x100},
        {true, qa(R::q::LSTRQREQi), 0x0A0001FF},  // RC_WRITE_ONLY, 0x200 - 1
        {true, qa(R::q::MACDESADDLSBi), 0x0B},    {true, qa(R::q::MACDESADDMSBi), 0x0200},
        {true, qa(R::q::IPDESADDR1i), 0x0A000002},
        {true, qa(R::q::TIMEOUTCONFi), 14 | 3u << 8 | 3u << 11 | 0x1Fu << 16},
        {true, qa(R::q::PDi), 1},
        {true, qa(R::q::QPADVCONFi), 64u << 8 | 0xFFFFu << 16},
        {true, qa(R::q::QPCONFi), R::fld::QPCONFi_EN.bit() | R::fld::QPCONFi_HW_HANDSHAKE_DIS.bit() | R::fld::QPCONFi_CQE_WRITE_EN.bit() |
                                      R::fld::QPCONFi_PMTU.set(0, R::u(R::val::QPCONFi_PMTU::MTU_4096)) | R::fld::QPCONFi_RQ_BUF_SIZE.set(0, 16)}};
    ASSERT_EQ(rt.cmds[0].ops.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(str(rt.cmds[0].ops[k]), str(want[k])) << "access " << k;
    EXPECT_EQ(rt.cmds[0].path, (std::vector<Q::State>{Q::State::RegCheck, Q::State::ResAlloc, Q::State::CmacInit,
                                                     Q::State::Ready}));
  }
  if (std::string(c.name) == "link_timeout") {
    // The first command waited LINK_TIMEOUT = 40 cycles in CMAC_INIT.
    EXPECT_EQ(rt.cmds[0].path, (std::vector<Q::State>{Q::State::RegCheck, Q::State::ResAlloc, Q::State::CmacInit,
                                                     Q::State::Idle}));
    EXPECT_GT(tb.cmd_cycles[0], 40u);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, QpSetupRtl, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) { return std::string(cases()[i.param].name); });

}  // namespace
