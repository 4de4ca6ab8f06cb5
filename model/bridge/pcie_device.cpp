// model/bridge: the NIC as a SimBricks PCIe device (pcie_device.h).
#include "model/bridge/pcie_device.h"

#include <algorithm>
#include <cstring>

namespace ernic::bridge {
namespace {
std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}
sc_core::sc_time ps_time(uint64_t ps) { return sc_core::sc_time(double(ps), sc_core::SC_PS); }
}  // namespace

PcieDevice::PcieDevice(sc_core::sc_module_name name, const ClockDomain& core, AxiLitePort& axil, HostMemory& mem,
                       const sc_core::sc_signal_in_if<bool>& intr, SimContext& ctx, DeviceConfig cfg)
    : sc_module(name), core_(core), axil_(axil), mem_(mem), intr_(intr), ctx_(ctx), cfg_(std::move(cfg)) {
  SC_METHOD(on_intr);
  sensitive << intr_.value_changed_event();
  dont_initialize();
  mem_.set_remote(this);
}

PcieDevice::~PcieDevice() { mem_.set_remote(nullptr); }

DevIntro PcieDevice::intro() const {
  DevIntro d;
  d.bars[0].len = cfg_.bar0_bytes;
  d.bars[0].flags = 0;  // 32-bit memory BAR, not prefetchable (registers)
  d.vendor_id = cfg_.vendor_id;
  d.device_id = cfg_.device_id;
  d.pci_class = 0x02;   // network controller
  d.subclass = 0x00;    // Ethernet
  d.msix_nvecs = 1;     // rnic_intr
  return d;
}

void PcieDevice::send(const Msg& m) {
  if (!ch_) throw BridgeError("no program attached to node " + cfg_.node);
  ch_->send(encode(m), silence_);
  if (m.type == MsgType::D2HReadComp || m.type == MsgType::D2HWriteComp || m.type == MsgType::Sync) {
    irqs_at_answer_ = irqs_sent_;  // the program has seen every interrupt before this answer
    dma_writes_at_answer_ = dma_writes_sent_;  // and applied every DMA write
  }
}

[[noreturn]] void PcieDevice::refuse(const std::string& why) {
  ++stats_.refused;
  dead_ = why;
  throw BridgeError("node " + cfg_.node + ": refused the program's message: " + why);
}

Msg PcieDevice::next_from_host() {
  if (!held_.empty()) {
    Msg m = std::move(held_.front());
    held_.pop_front();
    return m;
  }
  const std::vector<uint8_t> f = ch_->recv(silence_);
  std::string why;
  std::optional<Msg> m = decode(f.data(), f.size(), &why);
  if (!m) refuse(why);
  if (!is_h2d(m->type)) refuse(std::string(msg_type_name(m->type)) + " travels device to host, not to the device");
  return std::move(*m);
}

void PcieDevice::serve(Channel& ch, WallTimeout silence) {
  ch_ = &ch;
  silence_ = silence;
  dead_.clear();
  held_.clear();         // a new session owes nothing of the last one
  writes_open_.clear();
  struct Detach {
    PcieDevice& d;
    ~Detach() { d.ch_ = nullptr; }
  } detach{*this};
  try {
    ch.send(encode_device_intro(intro(), kMaxFrame));
    const std::vector<uint8_t> hi = ch.recv(silence_);
    std::string why;
    if (!decode_host_intro(hi.data(), hi.size(), &why)) refuse(why);
    for (;;) {
      if (!dead_.empty()) throw BridgeError("node " + cfg_.node + ": " + dead_);  // a DMA or interrupt failed
      Msg m = next_from_host();
      const uint64_t now = ClockDomain::now_ps();
      if (m.type != MsgType::Sync && m.timestamp_ps > now) sc_core::wait(ps_time(m.timestamp_ps - now));
      switch (m.type) {
        case MsgType::H2DRead:
        case MsgType::H2DWrite:
        case MsgType::H2DWritePosted:
          mmio(m);
          break;
        case MsgType::H2DDevCtrl:
          ctrl_flags_ = m.flags;
          break;
        case MsgType::Sync:
          sync(m);
          break;
        case MsgType::Terminate:
          return;
        case MsgType::H2DWriteComp:  // the program applied a DMA write: they complete in order
          if (writes_open_.empty() || writes_open_.front() != m.req_id)
            refuse("WRITECOMP for req_id " + std::to_string(m.req_id) + (writes_open_.empty()
                       ? std::string(" with no DMA write open")
                       : " while " + std::to_string(writes_open_.front()) + " is the oldest open"));
          writes_open_.pop_front();
          break;
        default:  // READCOMP / WRITECOMP with no DMA waiting
          refuse(std::string(msg_type_name(m.type)) + " (req_id " + std::to_string(m.req_id) +
                 ") answers no request of the device");
      }
    }
  } catch (const ChannelError& e) {
    if (dead_.empty()) {  // the first cause names the failure (a refused DMA answer, ...)
      dead_ = e.what();
      // A close with no TERMINATE before it: the program ended (or closed
      // its socket) without ernic_close.
      if (dead_.find("the peer closed the connection") != std::string::npos &&
          dead_.find("in the middle of a frame") == std::string::npos)
        dead_ += " without a TERMINATE: the program ended or closed its socket without ernic_close";
    }
    throw BridgeError("node " + cfg_.node + ": " + dead_);
  } catch (const BridgeError&) {
    // A refused message: the program hears TERMINATE (the reason is the
    // simulator's to print; SimBricks' messages carry no text).
    try {
      Msg t;
      t.type = MsgType::Terminate;
      t.timestamp_ps = ClockDomain::now_ps();
      ch.send(encode(t));
    } catch (const std::exception&) {
    }
    throw;
  }
}

uint32_t PcieDevice::bar_addr(const Msg& m) const {
  auto self = const_cast<PcieDevice*>(this);
  if (m.bar != 0) self->refuse("BAR " + std::to_string(m.bar) + " does not exist (the device has BAR0 only)");
  const uint16_t len = m.type == MsgType::H2DRead ? m.len : uint16_t(m.data.size());
  if (len != 4 && len != 8)
    self->refuse("a register access of " + std::to_string(len) + " bytes (BAR0 takes 4 or 8)");
  if (m.offset % 4 || m.offset >= cfg_.bar0_bytes || cfg_.bar0_bytes - m.offset < len)
    self->refuse("BAR0 offset " + hex(m.offset) + " (+" + std::to_string(len) + ") outside or unaligned in its " +
                 hex(cfg_.bar0_bytes) + " bytes");
  return uint32_t(m.offset);
}

// A register access; 8 bytes = two words, low address first.
void PcieDevice::mmio(const Msg& m) {
  const uint32_t addr = bar_addr(m);
  if (m.type == MsgType::H2DRead) {
    Msg r;
    r.type = MsgType::D2HReadComp;
    r.req_id = m.req_id;
    r.data.resize(m.len);
    for (uint16_t w = 0; w < m.len / 4; ++w) {
      const uint32_t v = axil_.read(addr + 4u * w);
      for (int i = 0; i < 4; ++i) r.data[size_t(4 * w + i)] = uint8_t(v >> (8 * i));
    }
    ++stats_.mmio_reads;
    r.timestamp_ps = ClockDomain::now_ps();
    send(r);
    return;
  }
  for (size_t w = 0; w < m.data.size() / 4; ++w) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(m.data[4 * w + size_t(i)]) << (8 * i);
    axil_.write(addr + 4u * uint32_t(w), v);
  }
  ++stats_.mmio_writes;
  if (m.type == MsgType::H2DWrite) {  // non-posted: answered once the write reached ERNIC
    while (axil_.writes_in_flight()) sc_core::wait(core_.period());
    Msg r;
    r.type = MsgType::D2HWriteComp;
    r.req_id = m.req_id;
    r.timestamp_ps = ClockDomain::now_ps();
    send(r);
  }
}

// SYNC stamped T: run to T. With kSyncUntilIrq, stop earlier at the first
// interrupt the program has not seen: one sent since the device's last
// answer (then at once: it waits in the program's queue), or the next.
// kSyncUntilDmaWrite is the same for the NIC's DMA writes: stop right after
// the first one the program has not seen (the simulated time it was issued
// at; the program applies it before the SYNC answer). Both: whichever first.
void PcieDevice::sync(const Msg& m) {
  ++stats_.syncs;
  if (m.flags & ~uint64_t(kSyncFlagsKnown))
    refuse("SYNC with flags " + hex(m.flags) + " (known: bit 0 until an interrupt, bit 1 until a DMA write)");
  const uint64_t now = ClockDomain::now_ps();
  const bool until_irq = m.flags & kSyncUntilIrq;
  const bool until_dma = m.flags & kSyncUntilDmaWrite;
  const bool unseen = (until_irq && irqs_sent_ > irqs_at_answer_) ||
                      (until_dma && dma_writes_sent_ > dma_writes_at_answer_);
  if (unseen) {
    // the program finds it in its queue
  } else if (m.timestamp_ps > now) {
    const sc_core::sc_time t = ps_time(m.timestamp_ps - now);
    if (until_irq && until_dma)
      sc_core::wait(t, irq_ev_ | dma_write_ev_);
    else if (until_irq)
      sc_core::wait(t, irq_ev_);
    else if (until_dma)
      sc_core::wait(t, dma_write_ev_);
    else
      sc_core::wait(t);
  }
  Msg r;
  r.type = MsgType::Sync;
  r.timestamp_ps = ClockDomain::now_ps();
  send(r);
}

void PcieDevice::on_intr() {
  const bool level = intr_.read();
  if (level == intr_level_) return;
  intr_level_ = level;
  Msg m;
  m.type = MsgType::D2HInterrupt;
  m.timestamp_ps = ClockDomain::now_ps();
  if (ctrl_flags_ & kCtrlMsixEn) {
    if (!level) return;  // MSI-X: one message per rising edge
    m.inttype = kIntMsix;
  } else if (ctrl_flags_ & kCtrlMsiEn) {
    if (!level) return;
    m.inttype = kIntMsi;
  } else if (ctrl_flags_ & kCtrlIntxEn) {
    m.inttype = level ? kIntLegacyHi : kIntLegacyLo;
  } else {
    return;  // interrupts disabled by the host
  }
  ++irqs_sent_;
  irq_ev_.notify(sc_core::SC_ZERO_TIME);
  if (!ch_ || !dead_.empty()) return;  // no program attached: nothing to tell
  ++stats_.interrupts;
  try {
    send(m);
  } catch (const ChannelError& e) {
    dead_ = e.what();
    ctx_.error("bridge", "node " + cfg_.node + ": interrupt not delivered: " + e.what());
  }
}

// A DMA with no live session is a model error (the NIC reaches memory no
// program holds); false then.
bool PcieDevice::attached(const char* what, uint64_t addr, uint64_t len) {
  if (ch_ && dead_.empty()) return true;
  ctx_.error("bridge", "node " + cfg_.node + ": DMA " + what + " of " + hex(addr) + " (+" + std::to_string(len) +
                           ") with no program attached" + (dead_.empty() ? "" : " (" + dead_ + ")"));
  return false;
}

// DMA read: the program answers from its memory (READCOMP); whatever else
// it sends meanwhile waits in held_ for serve().
void PcieDevice::read(uint64_t addr, uint8_t* dst, uint64_t len) {
  uint64_t done = 0;
  while (done < len) {
    const uint16_t n = uint16_t(std::min<uint64_t>(len - done, kMaxData));
    if (!attached("read", addr + done, len - done)) {
      std::memset(dst + done, 0, len - done);
      return;
    }
    Msg q;
    q.type = MsgType::D2HRead;
    q.req_id = next_req_++;
    q.offset = addr + done;
    q.len = n;
    q.timestamp_ps = ClockDomain::now_ps();
    try {
      send(q);
      for (;;) {
        const std::vector<uint8_t> f = ch_->recv(silence_);
        std::string why;
        std::optional<Msg> m = decode(f.data(), f.size(), &why);
        if (!m) refuse(why);
        if (m->type == MsgType::Terminate)
          refuse("the program ended while the NIC's DMA read of " + hex(q.offset) + " (+" + std::to_string(n) +
                 ") waited for its data");
        if (m->type != MsgType::H2DReadComp) {
          if (!is_h2d(m->type)) refuse(std::string(msg_type_name(m->type)) + " travels device to host");
          held_.push_back(std::move(*m));
          continue;
        }
        if (m->req_id != q.req_id)
          refuse("READCOMP for req_id " + std::to_string(m->req_id) + " while " + std::to_string(q.req_id) +
                 " waits");
        if (m->data.size() != n)
          refuse("READCOMP with " + std::to_string(m->data.size()) + " bytes for a read of " + std::to_string(n));
        std::memcpy(dst + done, m->data.data(), n);
        break;
      }
    } catch (const std::exception& e) {
      // The session is over: serve() ends it (TERMINATE) and the program
      // step fails with this; the NIC's read returns zeros meanwhile.
      if (dead_.empty()) dead_ = e.what();
      std::memset(dst + done, 0, len - done);
      return;
    }
    ++stats_.dma_reads;
    stats_.dma_read_bytes += n;
    done += n;
  }
}

// DMA write: posted, in order with everything else on the stream; the
// program's WRITECOMP is taken (and checked) when it comes.
void PcieDevice::write(uint64_t addr, const uint8_t* src, uint64_t len) {
  uint64_t done = 0;
  while (done < len) {
    const uint16_t n = uint16_t(std::min<uint64_t>(len - done, kMaxData));
    if (!attached("write", addr + done, len - done)) return;
    Msg q;
    q.type = MsgType::D2HWrite;
    q.req_id = next_req_++;
    q.offset = addr + done;
    q.data.assign(src + done, src + done + n);
    q.timestamp_ps = ClockDomain::now_ps();
    try {
      send(q);
      writes_open_.push_back(q.req_id);
    } catch (const std::exception& e) {
      dead_ = e.what();
      ctx_.error("bridge", e.what());
      return;
    }
    ++stats_.dma_writes;
    stats_.dma_write_bytes += n;
    done += n;
  }
  if (len) {
    ++dma_writes_sent_;
    dma_write_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace ernic::bridge
