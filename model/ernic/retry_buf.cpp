// model/ernic: the write-retry buffers (see retry_buf.h).
#include "model/ernic/retry_buf.h"

namespace ernic {

using namespace sc_core;
namespace R = regs;
namespace FLD = regs::fld;

RetryBuf::RetryBuf(sc_module_name name, ErnicShared& s) : sc_module(name), s_(s) { SC_THREAD(copy_thread); }

bool RetryBuf::configured() const {
  const uint32_t sz = s_.G(R::g::DATBUFSZ);
  return s_.regs.g64(R::g::DATBUFBA, R::g::DATBUFBAMSB) != 0 && FLD::DATBUFSZ_NUM.get(sz) != 0 &&
         FLD::DATBUFSZ_SIZE.get(sz) != 0;
}

uint64_t RetryBuf::addr(uint32_t idx) const {
  return s_.regs.g64(R::g::DATBUFBA, R::g::DATBUFBAMSB) + uint64_t(idx) * FLD::DATBUFSZ_SIZE.get(cfg_);
}

bool RetryBuf::alloc(qp::QpContext& qp, uint32_t length, std::vector<uint32_t>& out) {
  qp.req.buf_need = 0;
  if (!configured() || length == 0) return true;
  const uint32_t cfg = s_.G(R::g::DATBUFSZ);
  if (cfg != cfg_ && used_ == 0) {
    cfg_ = cfg;
    free_.clear();
    for (uint32_t i = 0; i < FLD::DATBUFSZ_NUM.get(cfg); ++i) free_.push_back(i);
  }
  const uint32_t size = FLD::DATBUFSZ_SIZE.get(cfg_), total = FLD::DATBUFSZ_NUM.get(cfg_);
  const uint32_t need = uint32_t((uint64_t(length) + size - 1) / size);
  if (need > total) return true;
  if (free_.size() < need) {
    qp.req.buf_need = need;
    return false;
  }
  for (uint32_t i = 0; i < need; ++i) {
    out.push_back(free_.front());
    free_.pop_front();
  }
  used_ += need;
  return true;
}

void RetryBuf::free(qp::Outstanding& o) {
  if (o.bufs.empty()) return;
  for (uint32_t b : o.bufs) free_.push_back(b);
  used_ -= uint32_t(o.bufs.size());
  o.bufs.clear();
  s_.work_ev.notify(SC_ZERO_TIME);  // a WQE waiting for buffers may go
}

void RetryBuf::io(const std::vector<uint32_t>& bufs, uint32_t off, uint8_t* data, uint32_t len, bool write,
                  bool with_latency, uint32_t qpn) {
  const uint32_t size = FLD::DATBUFSZ_SIZE.get(cfg_);
  uint32_t done = 0;
  while (done < len) {
    const uint32_t pos = off + done;
    const uint32_t k = pos / size, in = pos % size;
    const uint32_t piece = std::min(len - done, size - in);
    if (k >= bufs.size()) return;
    const uint64_t a = addr(bufs[k]) + in;
    if (write) {
      copyq_.push_back({a, std::vector<uint8_t>(data + done, data + done + piece), qpn});
      copy_ev_.notify(SC_ZERO_TIME);
    } else {
      s_.dma_payload.read(a, data + done, piece, with_latency && done == 0, qpn);
    }
    done += piece;
  }
}

void RetryBuf::wait_copies() {
  while (!copyq_.empty() || busy_) wait(copy_done_ev_);
}

void RetryBuf::copy_thread() {
  for (;;) {
    while (copyq_.empty()) wait(copy_ev_);
    busy_ = true;
    CopyJob j = std::move(copyq_.front());
    copyq_.pop_front();
    s_.dma_wrddr.write(j.addr, j.data.data(), j.data.size(), j.qpn);
    busy_ = false;
    if (copyq_.empty()) copy_done_ev_.notify(SC_ZERO_TIME);
  }
}

}  // namespace ernic
