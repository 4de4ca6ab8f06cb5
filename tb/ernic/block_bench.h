// tb/ernic: a bench for PG332's blocks of the ERNIC model driven alone, or
// with the minimum of their neighbours, constructed directly from the
// model/ernic headers (no Ernic top): the shared state (register file, QP
// contexts, the six AXI4 masters), the interrupt controller, the WQE cache,
// the write-retry buffers, the response handler and the WQE processor are
// always there (the WQE processor holds the response handler by reference,
// the RX packet handler both of them, the QP manager all four); the RX
// packet handler and the QP manager only when a test asks for them.
//
// What the top would do on a register write (QP enable, doorbell) the bench
// does itself: registers are set in the shared register file, the QP
// context is marked enabled, doorbells are rung on the QP manager's ring().
// TX frames are captured by a RoceDatapath test double; each is rebuilt
// with the reference roce_tx (seam::tx_frame) and decoded by the protocol
// library (roce::decode), so checks read the frame as it would go on the
// wire. AXI4 master traffic is read back from a transaction log (TxLog).
//
// One SystemC elaboration per process: each test builds one bench, whose
// body runs as an SC_THREAD (so timed calls take their cycles), and
// gtest_discover_tests runs each test in its own process.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <vector>

#include "model/datapath/roce_rx_ref.h"
#include "model/datapath/roce_tx_ref.h"
#include "model/datapath/sc/datapath.h"
#include "model/ernic/interrupts.h"
#include "model/ernic/qp_mgr.h"
#include "model/ernic/resp_hndler.h"
#include "model/ernic/retry_buf.h"
#include "model/ernic/rx_pkt_hndler.h"
#include "model/ernic/shared.h"
#include "model/ernic/wqe_cache.h"
#include "model/ernic/wqe_proc.h"
#include "model/host/host_memory.h"
#include "model/regs/wqe.h"
#include "model/roce/packet.h"
#include "model/trace/txlog.h"

namespace ernic::bench {

namespace R = ernic::regs;
namespace FLD = ernic::regs::fld;

// Hand-picked addresses of the bench's node and its peer.
constexpr uint64_t kLocalMac = 0x02000000000Aull, kRemoteMac = 0x02000000000Bull;
constexpr uint32_t kLocalIp = 0x0A000001, kRemoteIp = 0x0A000002;  // 10.0.0.1, 10.0.0.2
constexpr uint16_t kUdpSport = 0xC0DE;
constexpr uint32_t kRemoteQpnBase = 0x100;  // QP n talks to remote QP 0x100 + n

// Host memory map (every region hand-placed, no overlap).
constexpr uint64_t kMemBytes = 8ull << 20;
constexpr uint64_t sq_base(uint32_t n) { return 0x10000 + uint64_t(n) * 0x1000; }   // 16 x 64 B = 1 KiB each
constexpr uint64_t cq_base(uint32_t n) { return 0x20000 + uint64_t(n) * 0x100; }    // 16 x 4 B
constexpr uint64_t cq_db_addr(uint32_t n) { return 0x30000 + uint64_t(n) * 4; }
constexpr uint64_t rq_db_addr(uint32_t n) { return 0x30100 + uint64_t(n) * 4; }
constexpr uint64_t rq_base(uint32_t n) { return 0x40000 + uint64_t(n) * 0x10000; }  // 16 x 4 KiB
constexpr uint64_t kErrBuf = 0xE0000;        // error buffer: 16 entries of 256 B
constexpr uint32_t kErrBufNum = 16, kErrBufSize = 256;
constexpr uint64_t kErrQueue = 0xF0000;      // error-status queue: 16 entries of 8 B
constexpr uint64_t kPayload = 0x100000;      // payload buffers from here

// A frame the WQE processor handed the TX datapath.
struct TxFrame {
  uint64_t t_ps = 0;
  seam::TxDesc desc;
  roce::Bytes payload;   // as handed over (desc.payload_len bytes)
  bool decoded = false;  // the wire bytes decode
  roce::Frame f;         // the frame as roce_tx builds it, decoded again
};

// The TX datapath as a recorder: it takes every descriptor at once.
class CaptureDatapath : public RoceDatapath {
 public:
  CaptureDatapath(sc_core::sc_module_name n, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx)
      : RoceDatapath(n, core, cmac, ctx, "bench.datapath", DatapathConfig{}) {}
  void tx(const seam::TxDesc& d, roce::Bytes payload) override {
    TxFrame t;
    t.t_ps = ClockDomain::now_ps();
    t.desc = d;
    t.payload = payload;
    const roce::Bytes wire = seam::tx_frame(d, payload, sport());
    if (auto f = roce::decode(wire)) {
      t.decoded = true;
      t.f = *f;
    }
    frames.push_back(std::move(t));
  }
  void cmac_rx(FrameBytes, uint64_t) override {}
  const char* kind() const override { return "capture"; }
  const uint8_t* tx_head(size_t*) override { return nullptr; }
  const sc_core::sc_event& tx_head_event() const override { return ev_; }
  Taken tx_take(uint32_t, uint32_t) override { return {}; }
  std::vector<TxFrame> frames;

 private:
  sc_core::sc_event ev_;
};

// One AXI4 master transaction from the transaction log.
struct DmaRec {
  uint64_t t_ps = 0;
  std::string master;
  bool write = false;
  uint64_t addr = 0, len = 0;
};

struct BenchOptions {
  ErnicConfig cfg;
  bool with_qp_mgr = false;
  bool with_rx = false;
  bool log = false;  // transaction log (for dma_records())
};

class BlockBench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(BlockBench);
  BlockBench(sc_core::sc_module_name name, BenchOptions o, std::function<void(BlockBench&)> b)
      : sc_module(name),
        opt(o),
        log_(make_log(ctx, o.log)),
        mem(kMemBytes),
        s(core, mem, ctx, "bench.ernic", o.cfg),
        intr(s, intr_line),
        cache(s),
        retry_buf("retry_buf", s),
        resp("resp_hndler", s, intr, cache, retry_buf, cq_db_sink),
        dp("datapath", core, cmac, ctx),
        wqe_proc("wqe_proc", s, intr, resp, retry_buf, dp_ptr, on_tx_committed),
        body(std::move(b)) {
    s.wave.declare(ctx, s.scope, s.scope + ".wqe_proc", s.scope + ".rx_pkt_hndler", s.cfg.num_qp);
    dp_ptr = &dp;
    const R::Field sport = s.cfg.layout.udp_sport;
    dp.udp_sport = [this, sport] { return uint16_t(sport.get(s.G(R::g::XRNICCONF))); };
    if (o.with_rx)
      rx = std::make_unique<RxPktHndler>("rx_pkt_hndler", s, intr, resp, wqe_proc,
                                         RxSinks{&ieth_sink, &rq_db_sink, &rx_taken, &cmac_ptr});
    if (o.with_qp_mgr) qp_mgr = std::make_unique<QpMgr>("qp_mgr", s, cache, wqe_proc, resp, retry_buf);
    SC_THREAD(run);
  }
  ~BlockBench() override {
    if (!log_path_.empty()) ::unlink(log_path_.c_str());
  }

  // --- the blocks and what they stand on ---------------------------------
  BenchOptions opt;
  ClockDomain core{"core", 200.0};  // 5000 ps a cycle
  ClockDomain cmac{"cmac", 322.265625};
  SimContext ctx;

 private:
  std::string log_path_;  // before log_: make_log sets it
  std::unique_ptr<TxLog> log_;
  std::unique_ptr<TxLog> make_log(SimContext& c, bool on) {
    if (!on) return nullptr;
    log_path_ = testing::TempDir() + "ernic_block_bench_" + std::to_string(::getpid()) + ".jsonl";
    auto l = std::make_unique<TxLog>(log_path_);
    c.log = l.get();
    return l;
  }

 public:
  HostMemory mem;
  ErnicShared s;
  IntrLine intr_line{"rnic_intr"};
  Interrupts intr;
  WqeCache cache;
  RetryBuf retry_buf;
  std::function<void(uint32_t, uint32_t)> cq_db_sink;
  RespHndler resp;
  CaptureDatapath dp;
  RoceDatapath* dp_ptr = nullptr;
  std::function<void(const seam::TxDesc&)> on_tx_committed;
  WqeProc wqe_proc;
  std::function<void(uint64_t)> ieth_sink;
  std::function<void(uint32_t, uint32_t)> rq_db_sink;
  std::function<void(const roce::Frame&)> rx_taken;
  Cmac* cmac_ptr = nullptr;
  std::unique_ptr<RxPktHndler> rx;
  std::unique_ptr<QpMgr> qp_mgr;
  std::function<void(BlockBench&)> body;
  bool done = false;

  const R::Layout& layout() const { return s.cfg.layout; }
  uint32_t G(uint32_t off) const { return s.G(off); }
  uint32_t Q(uint32_t n, uint32_t off) const { return s.Q(n, off); }
  qp::QpContext& qp(uint32_t n) { return s.qps[n]; }
  // An interrupt bank register (RQ / CQ / CNP) by its absolute address.
  uint32_t bank(uint32_t abs_addr) const { return s.regs.read(s.regs.decode(abs_addr)); }

  // ERNIC enabled with `num_qps` QPs (the count where the layout keeps it:
  // XRNICCONF[15:8] in 3.1, XRNIC_CONF_QP_EN[11:0] in 4.x), the UDP source
  // port, the node's MAC and IPv4 address, the error buffer and the
  // error-status queue; every INTEN bit.
  void setup_global(uint32_t num_qps, uint32_t xrnicconf_extra = FLD::XRNICCONF_ERRBUF_EN.bit()) {
    uint32_t conf = layout().udp_sport.set(FLD::XRNICCONF_EN.bit() | xrnicconf_extra, kUdpSport);
    if (layout().qp_count_in_xrnicconf)
      conf = FLD::XRNICCONF_NUM_QP.set(conf, num_qps);
    else
      s.G(R::g::XRNIC_CONF_QP_EN) = num_qps;
    s.G(R::g::XRNICCONF) = conf;
    s.G(R::g::MACXADDMSB) = uint32_t(kLocalMac >> 32);
    s.G(R::g::MACXADDLSB) = uint32_t(kLocalMac);
    s.G(R::g::IPv4XADD) = kLocalIp;
    s.G(R::g::ERRBUFBA) = uint32_t(kErrBuf);
    s.G(R::g::ERRBUFSZ) = kErrBufNum | kErrBufSize << 16;
    s.G(R::g::IPKTERRQBA) = uint32_t(kErrQueue);
    s.G(R::g::IPKTERRQSZ) = 16;
    s.G(R::g::INTEN) = 0x1FF;
  }

  // An RC QP as PG332's setup flow leaves it (chapter 6): queues, doorbell
  // addresses, PMTU, remote MAC / IP / QPN, starting PSNs, then QPCONFi[0];
  // SQ and CQ depth 16, RQ depth 16 of 4 KiB elements; AXI-Lite doorbells
  // (QPCONFi[4] = 1), CQEs written (QPCONFi[5]), CQ and RQ interrupts.
  void setup_qp(uint32_t n, uint32_t pmtu_code, uint32_t sq_psn, uint32_t expected_rq_psn = 0,
                uint32_t timeoutconf = 0x00000300 /* retry count 3, no ACK timer */) {
    s.Q(n, R::q::QPCONFi) = FLD::QPCONFi_EN.bit() | FLD::QPCONFi_RQ_IRQ_EN.bit() | FLD::QPCONFi_CQ_IRQ_EN.bit() |
                            FLD::QPCONFi_HW_HANDSHAKE_DIS.bit() | FLD::QPCONFi_CQE_WRITE_EN.bit() |
                            FLD::QPCONFi_PMTU.set(0, pmtu_code) | FLD::QPCONFi_RQ_BUF_SIZE.set(0, 16);
    s.Q(n, R::q::QPADVCONFi) = 0xFFFF0000 | 64u << 8;
    s.Q(n, R::q::SQBAi) = uint32_t(sq_base(n));
    s.Q(n, R::q::CQBAi) = uint32_t(cq_base(n));
    s.Q(n, R::q::RQBAi) = uint32_t(rq_base(n));
    s.Q(n, R::q::CQDBADDi) = uint32_t(cq_db_addr(n));
    s.Q(n, R::q::RQWPTRDBADDi) = uint32_t(rq_db_addr(n));
    s.Q(n, R::q::QDEPTHi) = 16 | 16u << 16;
    s.Q(n, R::q::SQPSNi) = sq_psn;
    s.Q(n, R::q::STATRESPSNi) = sq_psn;  // what the top does when SQPSNi is written (A-CNT-1)
    // LSTRQREQi: (expected PSN - 1) and a message-ending opcode (SEND_ONLY).
    s.Q(n, R::q::LSTRQREQi) = ((expected_rq_psn - 1) & 0xFFFFFF) | 0x04u << 24;
    s.Q(n, R::q::DESTQPCONFi) = kRemoteQpnBase + n;
    s.Q(n, R::q::TIMEOUTCONFi) = timeoutconf;
    s.Q(n, R::q::MACDESADDMSBi) = uint32_t(kRemoteMac >> 32);
    s.Q(n, R::q::MACDESADDLSBi) = uint32_t(kRemoteMac);
    s.Q(n, R::q::IPDESADDR1i) = kRemoteIp;
    s.Q(n, R::q::STATRQBUFCAi) = uint32_t(rq_base(n));
    qp(n).enabled = true;
    qp(n).req.max_out = s.cfg.timing.max_outstanding;
  }

  // A WQE into QP n's SQ slot idx (PG332 Table 2-1 layout, wqe.h codec).
  void post(uint32_t n, uint32_t idx, const pg332::Wqe& w) {
    uint8_t b[pg332::kWqeBytes];
    pg332::encode_wqe(w, b);
    mem.write(sq_base(n) + uint64_t(idx % 16) * pg332::kWqeBytes, b, sizeof b);
  }
  // Host memory filled with a recognisable pattern (byte i = seed + 7i).
  roce::Bytes fill(uint64_t addr, size_t len, uint8_t seed) {
    roce::Bytes v(len);
    for (size_t i = 0; i < len; ++i) v[i] = uint8_t(seed + 7 * i);
    if (len) mem.write(addr, v.data(), len);
    return v;
  }

  // The transaction log's AXI4 master records so far (optionally one master).
  std::vector<DmaRec> dma_records(const std::string& master = "") {
    std::vector<DmaRec> out;
    if (!log_) return out;
    log_->flush();
    std::ifstream in(log_path_);
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("kind", "") != "dma") continue;
      DmaRec r{j["t_ps"].get<uint64_t>(), j["master"].get<std::string>(), j["op"].get<std::string>() == "write",
               j["addr"].get<uint64_t>(), j["len"].get<uint64_t>()};
      if (master.empty() || r.master == master) out.push_back(r);
    }
    return out;
  }

  // Simulated time helpers (the body runs as an SC_THREAD).
  static uint64_t now() { return ClockDomain::now_ps(); }
  void wait_ns(uint64_t ns) { sc_core::wait(sc_core::sc_time(double(ns), sc_core::SC_NS)); }

 private:
  void run() {
    core.sync();
    body(*this);
    done = true;
    sc_core::sc_stop();
  }
};

// Builds the bench, runs the body to its end (at most `limit_us` of
// simulated time), and checks it ended.
inline void run_bench(BenchOptions o, std::function<void(BlockBench&)> body, uint64_t limit_us = 1000) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  BlockBench b("bench", std::move(o), std::move(body));
  sc_core::sc_start(sc_core::sc_time(double(limit_us), sc_core::SC_US));
  ASSERT_TRUE(b.done) << "the bench body did not finish within " << limit_us << " us";
  for (const auto& e : b.ctx.errors) ADD_FAILURE() << "model error at " << e.time_ps << " ps, " << e.where << ": " << e.what;
}

// An inline SEND (PG332: SDATA, <= 16 bytes): no payload read, so its
// packet leaves hdr_build_cycles after dispatch. sdata[0] tags it (the QP
// manager's tests tell the order of service by it).
inline pg332::Wqe tagged_send(uint8_t tag) {
  pg332::Wqe w;
  w.wrid = tag;
  w.opcode = uint8_t(pg332::WqeOpcode::send);
  w.length = 4;
  w.sdata = {tag, 0xAA, 0xBB, 0xCC};
  return w;
}

constexpr uint64_t kCoreCyclePs = 5000;  // the bench's core clock, 200 MHz

}  // namespace ernic::bench
