// model/ernic: the ERNIC model's parameters (timing in core cycles and ns,
// sizes), its configuration per node, and its statistics. Every timing
// figure names the PG332 fact or the assumption (A-ERNIC-*) it follows.
#pragma once
#include <cstdint>
#include <string>

#include "model/dma/dma.h"
#include "model/ernic/ext_config.h"
#include "model/mr/mr_cache.h"
#include "model/regs/regs.h"

namespace ernic {

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
  // A frame that does not fit is lost, as the hardware loses it (no
  // tready): counted (rx_overflow_drops), an event, and RC recovers it by
  // its retransmission; rx_overflow_fails makes it a run error instead
  // (scenario node key rx.overflow: fail).
  uint32_t rx_buffer_bytes = 65536;
  bool rx_overflow_fails = false;
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
  // Named extensions, not PG332, off by default (ext_config.h).
  ShadowDbConfig shadow_db;
  QpCtxCacheConfig qp_ctx;
  // Test only, never hardware: a deliberately planted bug, so that a test can
  // show the checks catch it (`ernic-sim run/random --plant-bug
  // ack_coalescing`, tools/random.h). An ACK sent because the coalescing
  // count was reached carries the PSN before the newest accepted one, and
  // the count restarts: that packet is never acknowledged by it.
  bool test_bug_ack_coalescing = false;
  // cq_entry_race: a QP's completions do not wait for each other's CQ entry
  // (RespHndler::complete as it was before stop 46): two at once take one.
  bool test_bug_cq_entry_race = false;
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

}  // namespace ernic
