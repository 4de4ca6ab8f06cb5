// tb/fuzz: the ERNIC node that fuzz_rx drives (issue 20, fuzzing item 3;
// README "Sanitizers and fuzzing"). The blocks of one ERNIC model
// (model/ernic: shared state, interrupts, WQE cache, QP manager, WQE
// processor, RX packet handler, response handler, write-retry buffers),
// constructed and wired as the ERNIC top (model/ernic/ernic.cpp) does, in the
// same order, but without its AXI4-Lite slave, so that the harness reaches
// the shared state (as tb/ernic/block_bench.h does); on a small host memory
// (model/host/host_memory.h) filled with a pattern. No CMAC, no datapath
// module: frames go through the C++ reference roce_rx (seam::roce_rx_ref,
// the `model` datapath's RX) into rx_push, and what ERNIC hands the TX
// datapath is recorded at its commit point (on_tx_committed).
//
// SystemC elaborates once per process, so the node is built on first use
// and brought to one known state: the configuration below (rx_node.cpp:
// QPs, MRs with guard gaps, error buffer and queue), with requests the
// model itself has sent and that wait for answers (QP2 and QP5). That state
// is the snapshot: registers, QP contexts, statistics and host memory. Each
// input's frames are injected, the kernel runs until nothing is pending (a
// bounded simulated time: the longest wait an input can start is an RNR
// NAK's 655 ms), rx_check.cpp compares the result with the snapshot, and
// restore() puts the snapshot back. Not restored (private to the blocks, and
// the same at every idle point): empty queues and FIFOs, the DMA masters'
// and PCIe link's past transfers; the QP manager's round-robin positions
// carry from one input to the next (they only order QPs that have work at
// the same time), and its passes are told every context changed (touch_all).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/datapath/seam.h"
#include "model/ernic/config.h"
#include "model/ernic/shared.h"
#include "model/host/host_memory.h"
#include "model/qp/qp_context.h"
#include "model/regs/register_file.h"
#include "model/roce/types.h"
#include "model/sim/sim_context.h"

namespace ernic::fuzz_rx {

// ------------------------------------------------------------ the node

constexpr uint64_t kMemBytes = 0x80000;  // 512 KiB of host memory
constexpr uint64_t kLocalMac = 0x02000000000Aull;
constexpr uint32_t kLocalIp4 = 0x0A000001;  // 10.0.0.1
constexpr uint32_t kNumQp = 8;              // C_NUM_QP; XRNICCONF enables 5 of them
constexpr uint32_t kEnabledQps = 5;
constexpr uint64_t kErrBuf = 0x14000;       // error buffer: 8 entries of 256 B
constexpr uint32_t kErrBufNum = 8, kErrBufSize = 256;
constexpr uint64_t kErrQueue = 0x15000;     // error-status queue: 8 entries of 8 B
constexpr uint32_t kErrQueueNum = 8;

// One QP's configuration (QP1 = GSI; QP4 is set up but not enabled; QPs
// 6..8 are beyond XRNICCONF's count).
struct QpSpec {
  uint32_t qpn;
  bool enabled, ipv6;
  uint32_t pmtu_code, pd;
  uint64_t remote_mac;
  uint32_t remote_ip4;   // IPv4 QPs; IPv6 QPs: fd00::<qpn>
  uint32_t dest_qp;
  uint32_t rq_depth, rq_elem_units;  // RQ elements of rq_elem_units * 256 B
  uint32_t sq_psn, exp_psn;          // first PSN to send, first PSN expected
  uint32_t timeoutconf;
};
const std::vector<QpSpec>& qp_specs();
const QpSpec* qp_spec(uint32_t qpn);      // nullptr: not configured
roce::Ipv6Addr remote_ip6(uint32_t qpn);  // fd00::<qpn>
roce::Ipv6Addr local_ip6();               // fd00::1

// Host memory map (rx_node.cpp).
constexpr uint64_t sq_base(uint32_t n) { return 0x10000 + uint64_t(n) * 0x400; }  // 16 x 64 B
constexpr uint64_t cq_base(uint32_t n) { return 0x12000 + uint64_t(n) * 0x40; }   // 16 x 4 B
constexpr uint64_t cq_db(uint32_t n) { return 0x13000 + uint64_t(n) * 0x10; }
constexpr uint64_t rq_db(uint32_t n) { return 0x13100 + uint64_t(n) * 0x10; }
uint64_t rq_base(uint32_t n);

// One MR table entry (R_Key = index << 8 | key; access: 0 read, 1 write,
// 2 read+write, 0xF deregistered), each with a guard gap after it.
struct MrSpec {
  uint32_t idx;
  uint8_t key;
  uint32_t pd, access;
  uint64_t va, base, len;
};
const std::vector<MrSpec>& mr_specs();

// ------------------------------------------------------------ a run

struct Snapshot {
  std::optional<regs::RegisterFile> regs;  // no default constructor
  std::vector<qp::QpContext> qps;
  ErnicStats stats;
  uint64_t next_osq_id = 0;
  std::vector<uint8_t> mem;
};

// One frame as the CMAC delivers it (no FCS; bad_fcs: its FCS was wrong)
// and the core cycles before the next one.
struct InFrame {
  std::vector<uint8_t> bytes;
  bool bad_fcs = false;
  uint32_t gap_cycles = 0;
};

struct RunResult {
  size_t pushed = 0, bypass = 0, taken = 0;  // to ERNIC, to the bypass path, taken for protocol processing
  std::vector<seam::TxDesc> tx;              // what ERNIC committed to roce_tx, in order
  bool settled = true;                       // nothing pending after the bounded run
  uint64_t sim_ps = 0;                       // simulated time the input took
};

class RxNode {
 public:
  static RxNode& get();  // built (and set up) on first use
  RunResult run(const std::vector<InFrame>& frames);
  void restore();

  const Snapshot& snapshot() const { return snap_; }
  const ErnicShared& shared() const;
  const HostMemory& mem() const;
  uint32_t wqe_cache_total() const;
  SimContext& ctx();

  struct Impl;

 private:
  RxNode();
  std::unique_ptr<Impl> impl_;
  Snapshot snap_;
};

}  // namespace ernic::fuzz_rx
