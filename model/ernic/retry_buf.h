// model/ernic: the write-retry buffers (PG332: DATBUFBA / DATBUFSZ, "data
// buffers for WRITE retransmission"; allocation is assumption A-ERNIC-17).
// A WRITE takes ceil(length / DATBUFSZ[31:16]) buffers before its first
// packet; its payload is copied into them through wqe_proc_wr_ddr_m_axi in
// parallel with transmission (the copy process below); a retransmission
// reads it back through wqe_proc_top_m_axi; they are freed when the WQE
// completes. Without enough free buffers the WQE waits in the SQ
// (WQEPROCSTS[4]); a WRITE larger than all of them, or buffers not
// configured, uses none (its retransmission reads LADDR again).
//
// Clock: the core clock. Process: the copy queue (one AXI4 write at a
// time, posted). Freeing wakes the QP manager (work_ev).
#pragma once
#include <cstdint>
#include <deque>
#include <systemc>
#include <vector>

#include "model/ernic/shared.h"

namespace ernic {

class RetryBuf : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(RetryBuf);
  RetryBuf(sc_core::sc_module_name name, ErnicShared& s);

  bool configured() const;
  // Buffers for a WRITE of `length` bytes (out); false when not enough are
  // free (qp.req.buf_need says how many it waits for).
  bool alloc(qp::QpContext& qp, uint32_t length, std::vector<uint32_t>& out);
  void free(qp::Outstanding& o);
  // Bytes [off, off + len) of a WRITE's payload in its buffers: a write
  // queues copies (posted), a read goes through wqe_proc_top_m_axi.
  void io(const std::vector<uint32_t>& bufs, uint32_t off, uint8_t* data, uint32_t len, bool write,
          bool with_latency, uint32_t qpn);
  // Blocks until every queued copy has been written.
  void wait_copies();
  // Some QP waits for buffers (WQEPROCSTS[4]).
  size_t free_count() const { return free_.size(); }

 private:
  void copy_thread();
  uint64_t addr(uint32_t idx) const;

  ErnicShared& s_;
  std::deque<uint32_t> free_;   // free buffer indices
  uint32_t cfg_ = 0, used_ = 0; // the DATBUFSZ value the pool was built from; buffers in use
  struct CopyJob {
    uint64_t addr;
    std::vector<uint8_t> data;
    uint32_t qpn;
  };
  std::deque<CopyJob> copyq_;
  bool busy_ = false;
  sc_core::sc_event copy_ev_, copy_done_ev_;
};

}  // namespace ernic
