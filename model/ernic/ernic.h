// model/ernic: the ERNIC IP (AMD/Xilinx PG332 v3.1) as a SystemC model.
//
// What it models (the run's assumption list names every choice PG332
// leaves open, A-ERNIC-*):
//  - the PG332 3.1 register map (global, per-QP, MR table) behind a timed
//    AXI4-Lite slave (AxiLiteTarget), with RW / RO / W1C / SW-override
//    access rules from model/regs/ernic_regs.def;
//  - QP1 (GSI, UD SEND_ONLY with DETH: CM MADs built by software) and RC QPs;
//  - the SQPIi doorbell (AXI-Lite, QPCONFi[4] = 1), WQE fetch from the SQ in
//    host memory (64-byte WQEs, PG332 Table 2-1), RDMA WRITE / SEND (and
//    their immediate forms) segmented at the PMTU, AckReq on the last packet;
//  - RDMA READ as requester (one READ_REQUEST with RETH using ceil(L/PMTU)
//    PSNs; the READ responses are checked and written to LADDR through
//    rx_pkt_hndler_rdrsp_m_axi; the CQE follows the last one) and as
//    responder (RETH checks with read access, payload read through
//    wqe_proc_top_m_axi, READ_RESP ONLY or FIRST/MIDDLE/LAST with AETH;
//    duplicate READs are re-executed);
//  - the responder: PSN and opcode-sequence checks, the R_Key / PD / key /
//    bounds / access checks of PG332 Fig. 2-9 before any payload is written,
//    SEND payload into RQ elements (STATRQPIDBi + RQWPTRDBADDi write, the
//    RQ doorbell sideband), ImmDt / invalidate keys on ieth_immdt, ACK
//    generation by XRNICCONF[4:3] with coalescing (A-ERNIC-20), duplicate
//    re-ACK, NAKs, RNR NAKs, ECN -> CNPSCHDSTS, CNPs received (A-ERNIC-22);
//  - WQE prefetch into a WQE cache with payload reads issued ahead
//    (A-ERNIC-24), inline SEND data (A-ERNIC-21), go-back-N, the local ACK
//    timer, RNR waits, write-retry buffers, the RoCE RX buffer (A-ERNIC-26);
//  - the response handler: an ACK retires every covered WQE once, writes the
//    4-byte CQE at CQBAi + idx*4 (QPCONFi[5]), CQHEADi and its mirror write
//    to CQDBADDi, INTSTS[4] and the CQ interrupt bank (QPCONFi[3]); fatal
//    NAKs take the fatal path (STATQPi[0], error-status queue, CQEs with
//    ERRFLAG, INTSTS[7]).
//
// Clock: everything runs on the core clock (m_axi_aclk, 200 MHz default).
// Processes: qp_mgr (doorbells, WQE fetch and execution, one QP at a time,
// round robin), tx (frames into the TX datapath), rx (validation,
// responder, response handler). Latencies are ErnicTiming parameters.
//
// Seams to the datapath (rtl/SEAM.md; model/datapath/sc/datapath.h, RTL or
// reference model): the TX side hands each frame to roce_tx as a header
// descriptor (seam::TxDesc, from the roce::Frame it built:
// seam::tx_desc_from_frame) and its payload; QP1's software-built frames go
// as raw descriptors (the payload is the frame; only the ICRC is added).
// roce_tx computes lengths, the IPv4 checksum, PadCnt and the ICRC. The RX
// side receives each RoCE frame from roce_rx as a descriptor (seam::RxDesc:
// header fields and a syndrome with roce_rx's checks: bits 1, 2, 4, 8, 30,
// 31) and its payload; the handler adds its own checks (bits 0 MAC DA, 3 IP
// DA, 5 TVer, 6 QP, 7 source, 1 IP version against the QP), each bit on
// its own, and a frame with any bit set is dropped and logged in the error
// buffer with the header rebuilt from the descriptor
// (seam::rx_header_bytes; A-ERNIC-18). Otherwise the frame is rebuilt from
// the descriptor and payload (seam::frame_from_rx_desc) for the responder
// and response handler.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "model/datapath/seam.h"
#include "model/dma/dma.h"
#include "model/host/host_memory.h"
#include "model/link/axil.h"
#include "model/link/cmac.h"
#include "model/mr/mr_cache.h"
#include "model/link/sideband.h"
#include "model/regs/regs.h"
#include "model/roce/packet.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

namespace ernic {

class RoceDatapath;

struct ErnicTiming {
  uint32_t doorbell_cycles = 2;    // SQPIi write -> QP manager sees it (assumption A-ERNIC-1)
  uint32_t wqe_decode_cycles = 2;  // WQE parse + opcode dispatch
  uint32_t hdr_build_cycles = 2;   // header descriptor build per packet
  uint32_t rx_parse_cycles = 4;    // header parse + validation per packet
  uint32_t ack_build_cycles = 2;   // ACK/NAK frame build
  uint32_t rdrsp_build_cycles = 2; // READ response header build per packet (assumption A-ERNIC-11)
  uint32_t max_outstanding = 16;   // outstanding requests per QP (PG332)
  uint32_t tx_queue_frames = 4;    // frames between the WQE processor and the TX datapath
  // WQE prefetch (PG332 QPMSTS: "WQE cache full / empty"; sizes are
  // assumption A-ERNIC-24): the QP manager fetches WQEs ahead of the WQE
  // processor into a cache shared by all QPs, up to wqe_fetch_burst WQEs
  // per read, at most wqe_cache_per_qp per QP; each cached WRITE/SEND has
  // the read of its first payload chunk issued when it is cached.
  uint32_t wqe_cache_entries = 16;
  uint32_t wqe_cache_per_qp = 4;
  uint32_t wqe_fetch_burst = 4;
  // Responder ACK generation (PG332 gives XRNICCONF[4:3] but no numbers;
  // assumption A-ERNIC-20): an ACK for the newest accepted PSN is sent once
  // `ack_coalesce_packets` accepted packets are unacknowledged (0: no count
  // limit) and at the latest `ack_timeout_ns` after the oldest of them (the
  // "timeout" of modes 00 and 01).
  uint32_t ack_coalesce_packets = 0;
  uint64_t ack_timeout_ns = 10000;
  // The RoCE RX buffer between the CMAC (roce_cmac_s_axis has no tready)
  // and the RX packet handler: bytes of frames (Ethernet header .. ICRC)
  // held from arrival until the handler is done with them (assumption
  // A-ERNIC-26). PG332 gives no size. 64 KiB: the 16-bit XON/XOFF fields
  // of XRNIC_BUF_THRESHOLD_ROCE (counted in bytes here) reach it, and it
  // holds 15 PMTU-4096 frames, 5.2 us of 100 Gb/s; with XOFF at half of it
  // the other half covers the worst PFC response (the frame arriving, the
  // one the sender has begun, the pause frame, the CMAC pipelines and the
  // wire both ways: about 11 KB with 100 ns of wire) several times over.
  // A frame that does not fit is lost: a run error.
  uint32_t rx_buffer_bytes = 65536;
  // Cap on the rate the RX handler drains that buffer, in Gb/s of frame
  // bytes (0: none): a receiver slower than the line (scenario node key
  // rx.handler_gbps).
  double rx_handler_gbps = 0;
};

struct ErnicConfig {
  std::string node = "A";          // node name, for logs
  uint32_t num_qp = 8;             // C_NUM_QP (QP1 + RC QPs 2..num_qp)
  uint32_t num_mr = 256;           // MR table entries (3.x)
  regs::Layout layout = regs::kLayout31;
  ErnicTiming timing;
  DmaTiming dma;
  MrLookupConfig mr;               // MR lookup: PG332's register table, or the `mr_cache: cam` extension (model/mr)
  // Test only, never hardware: a deliberately planted bug, so that a test can
  // show the checks catch it (`ernic-sim run/random --plant-bug
  // ack_coalescing`, tools/random.h). An ACK sent because the coalescing
  // count was reached carries the PSN before the newest accepted one, and
  // the count restarts: that packet is never acknowledged by it.
  bool test_bug_ack_coalescing = false;
};

// Statistics the summary prints (beyond the PG332 counter registers).
struct ErnicStats {
  uint64_t wqes_processed = 0, cqes_written = 0, acks_sent = 0, naks_sent = 0, acks_received = 0,
           naks_received = 0, rx_dropped = 0, rx_icrc_errors = 0, duplicates = 0, mads_received = 0,
           illegal_wqes = 0, fatal_events = 0, validation_errors = 0,
           read_requests_received = 0, read_responses_sent = 0, read_responses_received = 0,
           retransmitted_packets = 0, retries = 0, ack_timeouts = 0, rnr_naks_received = 0;
  // Retransmissions built but not sent because an ACK or response retired
  // their WQE before they left for roce_tx.
  uint64_t resends_cancelled = 0;
  // The RoCE RX buffer: frames lost because it was full, its peak level,
  // XOFF assertions of ctl_tx_pause_req.
  uint64_t rx_overflow_drops = 0, rx_buffer_peak = 0, rx_xoff = 0;
};

class Ernic : public sc_core::sc_module, public AxiLiteTarget, public SidebandTarget {
 public:
  SC_HAS_PROCESS(Ernic);
  Ernic(sc_core::sc_module_name name, const ClockDomain& core, HostMemory& mem, SimContext& ctx,
        const std::string& scope, ErnicConfig cfg);
  ~Ernic() override;

  // AXI4-Lite slave (called at the handshake edge by AxiLitePort).
  uint32_t axil_read(uint32_t addr) override;
  void axil_write(uint32_t addr, uint32_t data) override;
  // Sideband doorbells in (model/link/sideband.h), for QPs in HW-handshake
  // mode (QPCONFi[4] = 0): i_qp_sq_pidb_* sets SQPIi and rings the QP
  // manager, i_qp_rq_cidb_* sets RQCIi. A QP with QPCONFi[4] = 1 ignores
  // them (counted in sideband_ignored()). Always ready.
  bool sq_pidb(uint32_t wr_addr, uint16_t pi) override;
  bool rq_cidb(uint32_t wr_addr, uint16_t ci) override;
  uint64_t sideband_ignored() const { return sideband_ignored_; }

  // rnic_intr: OR of the enabled INTSTS bits.
  sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS> intr{"rnic_intr"};

  // Datapath connections (before sc_start).
  Cmac* cmac = nullptr;            // ctl_tx_pause_req (PFC)
  RoceDatapath* datapath = nullptr;  // TX frames go there (none: they are dropped; unit tests)
  // A RoCE frame from roce_rx: its descriptor and payload (into the RoCE RX
  // buffer; desc.frame_len bytes of it).
  void rx_push(const seam::RxDesc& desc, roce::Bytes payload);
  // ieth_immdt_axis (PG332 section 4): one 64-bit entry per immediate datum
  // or invalidate R_Key: [31:0] ImmDt or R_Key, [39:32] type (kIeth*),
  // [47:40] QP, [55:48] RQ producer index after the SEND (SEND kinds only).
  std::function<void(uint64_t entry)> ieth_sink;
  // rx_pkt_hndler_o_rq_db_{data,addr}: an RC QP's new RQ write pointer
  // (STATRQPIDBi) once a SEND's payload is in its RQ element.
  std::function<void(uint32_t qpn, uint32_t pi)> rq_db_sink;
  // resp_hndler_o_send_cq_db_{cnt,addr}: a QP in HW-handshake mode
  // (QPCONFi[4] = 0) announces its new CQHEADi after each completion.
  std::function<void(uint32_t qpn, uint32_t cq_head)> cq_db_sink;
  static constexpr uint8_t kIethSendInv = 1, kIethSendImm = 2, kIethWriteImm = 3;
  // Observers for checkers outside the NIC (the wire monitor): every RoCE
  // frame the RX packet handler takes for protocol processing (valid, on an
  // enabled non-fatal QP), when it takes it; every frame descriptor at the
  // moment it is committed to roce_tx (presented, can no longer be withdrawn).
  std::function<void(const roce::Frame&)> on_rx_taken;
  std::function<void(const seam::TxDesc&)> on_tx_committed;

  const ErnicStats& stats() const { return stats_; }
  const ErnicConfig& config() const { return cfg_; }
  // Register value by absolute address, without side effects (reports, tests).
  uint32_t peek(uint32_t addr) const;
  // Simulator backdoor (scenario step debug_preset, assumption A-DEBUG-1):
  // sets a register's value directly, without an AXI4-Lite access and its
  // access rules (STATSSNi is read-only in PG332). Logged as an event.
  void backdoor_write(uint32_t addr, uint32_t value);
  // A short description of each enabled QP's state (watchdog, failures).
  std::vector<std::string> qp_status() const;
  const MrLookup& mr_lookup() const { return *mr_lookup_; }

 private:
  struct Outstanding {
    uint64_t id = 0;               // unique for the run: a retransmission names the WQE it belongs to
    uint16_t wrid;
    uint8_t wqe_opcode;
    uint32_t first_psn, last_psn;
    bool is_read;
    uint64_t laddr = 0;
    uint32_t length = 0;
    // What a retransmission needs (the WQE is fetched again for timing).
    uint32_t sq_idx = 0;           // SQ index of the WQE
    uint32_t ssn = 0;              // STATSSNi before this WQE (MSN rollback)
    uint64_t roffset = 0;
    uint32_t rtag = 0, immdt = 0;
    bool inline_data = false;      // a SEND of <= 16 bytes: the payload is the WQE's SDATA (A-ERNIC-21)
    uint8_t sdata[16] = {};
    std::vector<uint32_t> bufs;    // write-retry buffers holding a WRITE's payload (empty: none)
    uint64_t payload_issued_ps = 0;  // first transmission: when its first payload read was issued
    // READ only: how far the responses have come.
    uint32_t resp_psn = 0;         // PSN of the next expected READ response
    uint32_t resp_off = 0;         // bytes written to LADDR so far
    uint32_t req_psn = 0;          // PSN of the latest READ_REQUEST sent for it
    // A re-issue has been asked for: out-of-sequence responses are ignored
    // (stragglers of an earlier request, or a loss the local ACK timer
    // recovers) until the READ completes; no second go-back is started by
    // them (A-ERNIC-14).
    bool reissue_wait = false;
  };
  struct CachedWqe {
    uint8_t w[64];
    uint32_t sq_idx = 0;
    bool ok = true;                // false: the fetch failed (outside host memory)
    uint64_t issued_ps = 0;        // when its fetch completed and its payload read was issued
  };
  struct Qp {
    uint32_t qpn = 0;
    std::deque<CachedWqe> wqe_cache;  // prefetched, not yet processed (SQ order from sq_ci)
    uint32_t pf_ci = 0;            // next SQ index to prefetch
    uint32_t pf_gen = 0;           // bumped whenever the cache is dropped
    bool enabled = false;
    // requester
    uint32_t sq_ci = 0;            // next WQE index to fetch (mod depth)
    uint32_t sq_pi = 0;            // SQPIi as the QP manager sees it (doorbell latency applied)
    std::deque<Outstanding> osq;
    // responder
    bool nak_psn_sent = false;
    uint64_t wr_phys = 0;          // next byte of a multi-packet WRITE
    uint64_t wr_left = 0;          // bytes the RETH still allows
    bool wr_active = false;
    uint64_t send_off = 0;         // bytes written into the current RQ element
    uint32_t unacked = 0;          // accepted packets not yet covered by an ACK (coalescing)
    uint32_t unacked_psn = 0;      // the newest of them
    uint64_t ack_due_ps = 0;       // coalescing timeout (0: none)
    bool ack_fire = false;         // the timeout passed: the RX handler sends the ACK
    bool rnr_nak_sent = false;     // the last SEND FIRST/ONLY found the RQ full
    bool sending = false;          // the WQE processor works on this QP now
    uint32_t max_out = 16;         // outstanding-request limit: 16, cut to 8 by the first CNP (PG332)
    // retransmission (go-back-N, local ACK timeout, RNR)
    bool resend_pending = false;   // the QP manager resends from resend_psn before new WQEs
    uint32_t resend_psn = 0;
    uint32_t gen = 0;              // bumped by every rollback
    bool ack_high_valid = false;   // the highest PSN an ACK or NAK has acknowledged (retire_acked)
    uint32_t ack_high = 0;
    uint32_t rnr_psn = 0;          // the PSN the running RNR wait resends
    uint32_t retry_cnt = 0, rnr_cnt = 0;  // retries since the last progress
    uint64_t ack_deadline_ps = 0;  // local ACK timeout (0: not running)
    uint64_t rnr_until_ps = 0;     // RNR wait (0: none)
    uint32_t buf_need = 0;         // write-retry buffers the next WQE waits for (0: none)
    // trace vars
    int v_state = -1, v_sq_pi = -1, v_sq_ci = -1, v_cq_head = -1, v_next_psn = -1, v_exp_psn = -1,
        v_fatal = -1, v_osq = -1, v_req = -1, v_resp = -1;
  };
  // Per-QP sub-states in the waveform (qpN.req_state / qpN.resp_state).
  enum QpReqState : uint8_t { kQReqIdle = 0, kQReqSending = 1, kQReqWaitAck = 2, kQReqRetransmit = 3, kQReqRnrWait = 4 };
  enum QpRespState : uint8_t { kQRespIdle = 0, kQRespReceiving = 1, kQRespAckPending = 2, kQRespNakPsn = 3, kQRespRnr = 4 };
  enum ReqState : uint8_t { kReqIdle = 0, kReqFetch = 1, kReqSend = 2, kReqWaitAck = 3 };

  // registers
  uint32_t& G(uint32_t off) { return g_[off / 4]; }
  uint32_t G(uint32_t off) const { return g_[off / 4]; }
  uint32_t& Q(uint32_t qpn, uint32_t off) { return q_[qpn][off / 4]; }
  uint32_t Q(uint32_t qpn, uint32_t off) const { return q_[qpn][off / 4]; }
  uint32_t& M(uint32_t idx, uint32_t off) { return mr_[idx][off / 4]; }
  void reset_registers();
  void update_intr();
  void raise(uint32_t intsts_bits);
  void qp_bank_set(uint32_t bank_off, uint32_t qpn);
  uint32_t sq_depth(uint32_t qpn) const;
  uint32_t rq_depth(uint32_t qpn) const;
  uint64_t q64(uint32_t qpn, uint32_t lo, uint32_t hi) const {
    return uint64_t(Q(qpn, lo)) | uint64_t(Q(qpn, hi)) << 32;
  }
  void count16(uint32_t off, bool high, uint32_t n = 1);
  void count_nak_in(uint32_t qpn);                       // INNAKPKTCNT, INNCKPKTSTS
  void set_rq_buf_ca(uint32_t qpn, uint64_t addr);       // STATRQBUFCAi / MSBi

  // processes
  void qp_mgr_thread();
  void prefetch_thread();
  bool can_prefetch(const Qp& qp) const;
  void drop_wqe_cache(Qp& qp);     // pf_ci back to sq_ci
  void update_cache_status();
  uint32_t cached_total_ = 0;
  uint32_t pf_rr_ = 1;
  sc_core::sc_event prefetch_ev_, cache_space_ev_;
  void tx_thread();
  void rx_thread();

  // requester
  bool qp_has_work(const Qp& qp) const;
  void execute_wqe(Qp& qp, const uint8_t* wqe, uint32_t sq_idx, std::vector<uint32_t> bufs, uint64_t issued_ps);
  roce::Frame frame_template(uint32_t qpn) const;
  roce::Ipv6Addr local_ip6() const;  // IPv6XADD1..4
  // A retransmitted request names the outstanding WQE it belongs to: the
  // TX thread hands it to roce_tx only if that WQE is still outstanding
  // then (an ACK or response that retired it meanwhile cancels it), and
  // counts it (LSTOUTPKT, OUTIOPKTCNT, RETRYCNTSTS) when it leaves.
  struct Resend {
    uint32_t qpn = 0;
    uint64_t osq_id = 0;
    uint32_t lstoutpkt = 0;
    bool io_high = false;          // OUTIOPKTCNT half: [31:16] WRITE/READ, [15:0] SEND
  };
  struct TxFrame { seam::TxDesc desc; roce::Bytes payload; std::optional<Resend> resend; };
  struct RxFrame { seam::RxDesc desc; roce::Bytes payload; };
  void tx_enqueue(const roce::Frame& f, std::optional<Resend> resend = std::nullopt);  // header descriptor + payload
  void tx_enqueue_raw(std::vector<uint8_t> frame);  // QP1: a raw descriptor, the frame as payload
  void push_tx(TxFrame t);
  void complete(Qp& qp, uint16_t wrid, uint8_t wqe_opcode, bool error);

  // responder / response handler
  void handle_rx(const RxFrame& r);
  void rx_qp1(const roce::Frame& f, const seam::RxDesc& d);
  void rx_request(Qp& qp, const roce::Frame& f);
  void rx_ack(Qp& qp, const roce::Frame& f);
  void rx_read_request(Qp& qp, const roce::Frame& f, bool duplicate);
  void rx_read_resp(Qp& qp, const roce::Frame& f);
  void rx_cnp(Qp& qp, const roce::Frame& f);
  // retransmission
  void send_packets(Qp& qp, const Outstanding& o, uint32_t from_psn, bool retry);
  void send_read_request(Qp& qp, uint32_t first_psn, bool retry);
  void resend(Qp& qp);
  void start_retry(Qp& qp, uint32_t psn, const std::string& why);
  void begin_rollback(Qp& qp, uint32_t psn);
  bool retire_before(Qp& qp, uint32_t psn);  // true when a WQE was retired
  void retire_acked(Qp& qp);                  // after a READ completes: what an earlier ACK covered
  void note_acked(Qp& qp, uint32_t psn);
  bool partial_resend() const;                // 4.x: resend from the NAKed PSN
  void progress(Qp& qp);
  void arm_timer(Qp& qp);
  void timer_thread();
  void copy_thread();
  void update_retry_status(Qp& qp);
  bool retry_bufs_configured() const;
  uint64_t retry_buf_addr(uint32_t idx) const;
  void free_bufs(Outstanding& o);
  void drop_outstanding(Qp& qp);  // frees the retry buffers of every outstanding WQE
  bool alloc_bufs(Qp& qp, uint32_t length, std::vector<uint32_t>& out);
  void buf_io(const std::vector<uint32_t>& bufs, uint32_t off, uint8_t* data, uint32_t len, bool write,
              bool with_latency, uint32_t qpn);
  // PG332 Fig. 2-9 checks of an incoming RETH; 0 when valid (phys set), else
  // the fatal code with the reason in why. Timed: the MR lookup (model/mr).
  uint8_t check_reth(uint32_t qpn, const roce::Reth& r, bool read, uint64_t& phys, std::string& why);
  uint32_t pmtu(uint32_t qpn) const;
  void send_ack(uint32_t qpn, uint8_t syndrome, uint32_t psn);
  // An accepted request packet: ACK it now (AckReq by the XRNICCONF mode,
  // coalescing count) or start the coalescing timeout.
  void ack_accepted(Qp& qp, uint32_t psn, bool ack_req);
  uint32_t ack_mode() const;
  void qp_fatal(Qp& qp, uint8_t code, const std::string& why);
  void flush_outstanding(Qp& qp);
  bool still_outstanding(const Qp& qp, uint32_t first_psn) const;
  bool outstanding_id(const Qp& qp, uint64_t id) const;
  bool resend_wanted(const Resend& r) const;  // its WQE still outstanding, unacknowledged, on an enabled, non-fatal QP
  bool acknowledged(const Qp& qp, const Outstanding& o) const;
  uint64_t next_osq_id_ = 1;
  void drop(const std::string& why, uint32_t syndrome = 0);  // syndrome != 0: a validation failure (error buffer)
  void trace_qp(const Qp& qp);
  void log_reg(bool write, uint32_t addr, uint32_t value);

  const ClockDomain& core_;
  HostMemory& mem_;
  SimContext& ctx_;
  std::string scope_;
  ErnicConfig cfg_;
  ErnicStats stats_;

  std::vector<uint32_t> g_;                       // GCSR words
  std::vector<std::vector<uint32_t>> q_;          // [qpn][word], qpn 1..num_qp
  std::vector<std::vector<uint32_t>> mr_;         // [idx][word]
  std::vector<uint32_t> rq_int_, cq_int_, cnp_;   // interrupt banks
  std::vector<Qp> qps_;                           // index = qpn

  Dma dma_wqe_, dma_payload_, dma_rx_, dma_cmpl_, dma_rdrsp_, dma_wrddr_;  // PG332's masters
  std::unique_ptr<MrLookup> mr_lookup_;

  sc_core::sc_event doorbell_ev_, ack_ev_, tx_ev_, tx_pop_ev_, rx_ev_, timer_ev_, copy_ev_, copy_done_ev_;
  // Write-retry buffers (DATBUFBA/DATBUFSZ): free indices, and the DATBUFSZ
  // value the pool was built from.
  std::deque<uint32_t> free_bufs_;
  uint32_t bufs_cfg_ = 0, bufs_used_ = 0;
  struct CopyJob { uint64_t addr; std::vector<uint8_t> data; uint32_t qpn; };
  std::deque<CopyJob> copyq_;
  bool copy_busy_ = false;
  std::deque<TxFrame> txq_;
  // Doorbells in flight to the QP manager: visible at t_ps (A-ERNIC-1).
  struct DoorbellMsg { uint64_t t_ps; uint32_t qpn; uint32_t value; };
  std::deque<DoorbellMsg> db_q_;
  void ring(uint32_t qpn, uint32_t value);
  void apply_doorbells();
  std::deque<RxFrame> rxq_;
  std::deque<uint64_t> rx_arrival_;   // when each frame of rxq_ arrived
  std::deque<uint32_t> ack_fire_q_;   // QPs whose coalescing timeout passed (the RX handler ACKs them)
  uint64_t rx_buf_bytes_ = 0;   // RX buffer level (ErnicTiming::rx_buffer_bytes)
  bool rx_xoff_ = false, rx_overflowing_ = false;
  void rx_buffer_changed();     // XON/XOFF against XRNIC_BUF_THRESHOLD_ROCE
  uint32_t rr_next_ = 1;
  uint64_t sideband_ignored_ = 0;
  bool sw_override(uint32_t qpn) const;  // XRNICADCONF[0] set for this QP
  bool intr_level_ = false;
  const seam::RxDesc* rx_desc_ = nullptr;  // the frame handle_rx is validating
  int v_intr_ = -1, v_req_state_ = -1, v_req_qpn_ = -1, v_rx_opcode_ = -1, v_rx_valid_ = -1,
      v_tx_opcode_ = -1;
  // Waveform only: INTSTS, the RX buffer -> RX packet handler stream (a
  // frame at a time), the sideband doorbell outputs.
  int v_intsts_ = -1, v_rxb_tvalid_ = -1, v_rxb_tready_ = -1, v_cq_db_cnt_ = -1, v_cq_db_addr_ = -1,
      v_rq_db_data_ = -1, v_rq_db_addr_ = -1;
};

}  // namespace ernic
