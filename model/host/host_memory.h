// model/host: host memory (DDR behind PCIe, seen by the NIC through its AXI4
// masters and by the driver directly). Flat, zero-initialised, byte
// addressed from physical address 0. Every write notifies write_event() so
// that a polling driver can sleep until memory changes instead of spinning.
//
// Held elsewhere: when a program outside the simulator is the node's host
// (model/bridge), its memory lives in that program; set_remote() sends
// every read and write there (the bridge's device-to-host DMA messages), and
// data() refuses, naming the node: nothing in the simulator may look at
// memory the program owns except through the NIC's DMA.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

namespace ernic {

// Memory held by another process (implemented by model/bridge).
class RemoteMemory {
 public:
  virtual ~RemoteMemory() = default;
  virtual void read(uint64_t addr, uint8_t* dst, uint64_t len) = 0;
  virtual void write(uint64_t addr, const uint8_t* src, uint64_t len) = 0;
  virtual std::string holder() const = 0;  // for messages: "the program of node A"
};

class HostMemory {
 public:
  // calloc: large sizes come from mmap as zero pages that cost nothing
  // until touched, so a 4 GiB node is as cheap as a 64 MiB one.
  explicit HostMemory(uint64_t size_bytes)
      : mem_(static_cast<uint8_t*>(std::calloc(size_bytes ? size_bytes : 1, 1))), size_(size_bytes),
        written_((size_bytes + 64 * kPage - 1) / (64 * kPage)) {
    if (!mem_) throw std::bad_alloc();
  }
  ~HostMemory() { std::free(mem_); }
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  uint64_t size() const { return size_; }
  bool in_range(uint64_t addr, uint64_t len) const {
    return addr <= size_ && len <= size_ - addr;
  }
  // Out-of-range accesses throw std::out_of_range naming the address; the
  // NIC's DMA checks in_range first and takes its error path instead.
  void read(uint64_t addr, uint8_t* dst, uint64_t len) const {
    check(addr, len);
    if (remote_) return remote_->read(addr, dst, len);
    if (len) std::memcpy(dst, &mem_[addr], len);
  }
  std::vector<uint8_t> read(uint64_t addr, uint64_t len) const {
    std::vector<uint8_t> v(len);
    read(addr, v.data(), len);
    return v;
  }
  void write(uint64_t addr, const uint8_t* src, uint64_t len) {
    check(addr, len);
    if (remote_) {
      remote_->write(addr, src, len);
    } else if (len) {
      mark(addr, len);
      std::memcpy(&mem_[addr], src, len);
    }
    ev_.notify(sc_core::SC_ZERO_TIME);
  }
  void write(uint64_t addr, const std::vector<uint8_t>& v) { write(addr, v.data(), v.size()); }
  uint32_t read32(uint64_t addr) const {
    uint8_t b[4];
    read(addr, b, 4);
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  }
  void write32(uint64_t addr, uint32_t v) {
    uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    write(addr, b, 4);
  }
  // Writable: the range counts as written (written()).
  uint8_t* data(uint64_t addr, uint64_t len) {
    check(addr, len);
    local_only();
    mark(addr, len);
    return &mem_[addr];
  }
  const uint8_t* data(uint64_t addr, uint64_t len) const {
    check(addr, len);
    local_only();
    return &mem_[addr];
  }
  // Whether anything may have written a byte of [addr, addr + len) (held
  // elsewhere: always): a range never written is all zero, and a reader
  // that knows it need not touch it (the scoreboard's shadows: reading
  // memory nothing wrote costs a page fault per 4 KiB page; issue 17).
  // Tracked by 4 KiB page: write() and the writable data().
  bool written(uint64_t addr, uint64_t len) const {
    check(addr, len);
    if (remote_) return true;
    if (!len) return false;
    for (uint64_t p = addr / kPage, last = (addr + len - 1) / kPage; p <= last; ++p)
      if (written_[p / 64] >> (p % 64) & 1) return true;
    return false;
  }
  void set_remote(RemoteMemory* r) { remote_ = r; }
  bool is_remote() const { return remote_ != nullptr; }
  const sc_core::sc_event& write_event() const { return ev_; }

 private:
  static constexpr uint64_t kPage = 4096;
  void mark(uint64_t addr, uint64_t len) {
    if (!len) return;
    for (uint64_t p = addr / kPage, last = (addr + len - 1) / kPage; p <= last; ++p)
      written_[p / 64] |= uint64_t(1) << (p % 64);
  }
  void check(uint64_t addr, uint64_t len) const {
    if (!in_range(addr, len))
      throw std::out_of_range("host memory access [0x" + hex(addr) + ", +" + std::to_string(len) +
                              ") outside 0x" + hex(size_) + " bytes");
  }
  void local_only() const {
    if (remote_)
      throw std::logic_error("host memory held by " + remote_->holder() +
                             ": the simulator reaches it only through the NIC's DMA");
  }
  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", (unsigned long long)v);
    return b;
  }
  uint8_t* mem_;
  uint64_t size_;
  std::vector<uint64_t> written_;  // a bit per 4 KiB page: written (mark)
  RemoteMemory* remote_ = nullptr;
  sc_core::sc_event ev_;
};

}  // namespace ernic
