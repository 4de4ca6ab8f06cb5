// model/bridge/client: the host program's side of the bridge (ernic_bridge.h),
// over the same protocol code and channel as the simulator's side.
#include "model/bridge/client/ernic_bridge.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "model/bridge/channel.h"
#include "model/bridge/pcie_proto.h"

using namespace ernic::bridge;

namespace {
thread_local std::string g_open_error;
constexpr uint64_t kArenaBase = 0x100000;  // bus addresses start at 1 MiB (0 stays invalid)
// Where the program's DMA memory is mapped: a fixed virtual address, so
// that pointers into it (and the VAs a verbs program registers its MRs at,
// which reach the NIC's registers and the wire) are the same in every run
// whatever the address-space randomisation does. The n-th session of a
// process asks for kArenaVa + n * kArenaVaStride (an arena is at most
// 1 TiB); a range the kernel cannot give there is mapped where it can.
constexpr uint64_t kArenaVa = 0x200000000000ull;  // 32 TiB
constexpr uint64_t kArenaVaStride = uint64_t(1) << 40;
constexpr unsigned kArenaVaSlots = 32;
std::atomic<unsigned> g_sessions{0};

uint8_t* map_arena(uint64_t bytes) {
  const unsigned n = g_sessions.fetch_add(1);
  void* hint = n < kArenaVaSlots ? reinterpret_cast<void*>(uintptr_t(kArenaVa + n * kArenaVaStride)) : nullptr;
  void* p = ::mmap(hint, size_t(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}
}  // namespace

struct ernic_bridge {
  std::unique_ptr<Channel> ch;
  std::string error;
  uint64_t now_ps = 0;
  uint64_t next_req = 1;
  uint64_t pending_irqs = 0;
  void (*irq_handler)(void*, uint16_t) = nullptr;
  void* irq_ctx = nullptr;
  uint8_t* arena = nullptr;            // bus address kArenaBase + i is arena[i]
  uint64_t arena_bytes = 0, brk = 0;   // allocated: [kArenaBase, kArenaBase + brk)
  std::map<uint64_t, uint64_t> allocs; // each ernic_dma_alloc: arena offset -> bytes
  uint64_t mem_bytes = 0;              // the node's host memory: bus addresses [0, mem_bytes)
  ernic_bridge_stats stats{};

  ~ernic_bridge() {
    if (arena) ::munmap(arena, size_t(arena_bytes));
  }

  bool failed() const { return !error.empty(); }
  void fail(const std::string& why) {
    if (error.empty()) error = why;
  }
  uint8_t* mem(uint64_t bus, uint64_t len) {
    if (bus < kArenaBase || len > brk || bus - kArenaBase > brk - len) return nullptr;
    return arena + (bus - kArenaBase);
  }
  // Test hook (tb/bridge/robustness.py): ERNIC_BRIDGE_TEST_JITTER_US=N
  // sleeps a random 0..N us of wall time before each message, as an OS
  // scheduling the program badly would; lock-step keeps the outputs equal.
  unsigned jitter_us = 0;
  uint64_t jitter_state = 0;
  void jitter() {
    if (!jitter_us) return;
    jitter_state = jitter_state * 6364136223846793005ull + 1442695040888963407ull + uint64_t(::getpid());
    ::usleep(useconds_t((jitter_state >> 33) % jitter_us));
  }
  void send(const Msg& m) {
    jitter();
    Msg s = m;
    s.timestamp_ps = now_ps;
    ch->send(encode(s));
  }
  // Takes one message from the simulator and acts on it; returns it.
  Msg take() {
    const std::vector<uint8_t> f = ch->recv();
    std::string why;
    std::optional<Msg> m = decode(f.data(), f.size(), &why);
    if (!m) throw ChannelError("bad message from the simulator: " + why);
    if (!is_d2h(m->type))
      throw ChannelError(std::string(msg_type_name(m->type)) + " from the simulator travels host to device");
    if (m->timestamp_ps > now_ps) now_ps = m->timestamp_ps;
    switch (m->type) {
      case MsgType::D2HRead: {
        uint8_t* p = mem(m->offset, m->len);
        if (!p) {
          const std::string e = "the NIC read bus address " + hex(m->offset) + " (+" + std::to_string(m->len) +
                                ") outside every buffer this program allocated";
          Msg t;
          t.type = MsgType::Terminate;
          send(t);
          throw ChannelError(e);
        }
        Msg r;
        r.type = MsgType::H2DReadComp;
        r.req_id = m->req_id;
        r.data.assign(p, p + m->len);
        send(r);
        ++stats.dma_reads;
        stats.dma_read_bytes += m->len;
        break;
      }
      case MsgType::D2HWrite: {
        uint8_t* p = mem(m->offset, m->data.size());
        if (!p) {
          const std::string e = "the NIC wrote bus address " + hex(m->offset) + " (+" +
                                std::to_string(m->data.size()) + ") outside every buffer this program allocated";
          Msg t;
          t.type = MsgType::Terminate;
          send(t);
          throw ChannelError(e);
        }
        std::memcpy(p, m->data.data(), m->data.size());
        Msg r;
        r.type = MsgType::H2DWriteComp;
        r.req_id = m->req_id;
        send(r);
        ++stats.dma_writes;
        stats.dma_write_bytes += m->data.size();
        break;
      }
      case MsgType::D2HInterrupt:
        ++pending_irqs;
        ++stats.interrupts;
        if (irq_handler) irq_handler(irq_ctx, m->vector);
        break;
      case MsgType::Terminate:
        throw ChannelError("the simulator ended the session (it refused a message of this program, or its run "
                           "failed: its output says why)");
      default:
        break;
    }
    return std::move(*m);
  }
  // Serves the simulator until a message of type t (and req_id, for completions) arrives.
  Msg wait_for(MsgType t, uint64_t req_id) {
    for (;;) {
      Msg m = take();
      if (m.type != t) continue;
      if ((t == MsgType::D2HReadComp || t == MsgType::D2HWriteComp) && m.req_id != req_id)
        throw ChannelError("completion for req_id " + std::to_string(m.req_id) + " while " +
                           std::to_string(req_id) + " waits");
      return m;
    }
  }
};

template <typename F>
static auto guarded(ernic_bridge* b, F f, decltype(f()) on_error) -> decltype(f()) {
  if (!b || b->failed()) return on_error;
  try {
    return f();
  } catch (const std::exception& e) {
    b->fail(e.what());
    return on_error;
  }
}

extern "C" {

ernic_bridge* ernic_open(const char* addr) {
  g_open_error.clear();
  const char* a = addr ? addr : std::getenv("ERNIC_BRIDGE");
  if (!a || !*a) {
    g_open_error = "no simulator address: pass one or set ERNIC_BRIDGE (unix:PATH or tcp:HOST:PORT)";
    return nullptr;
  }
  try {
    auto b = std::make_unique<ernic_bridge>();
    uint64_t mib = 64;
    if (const char* m = std::getenv("ERNIC_BRIDGE_MEM_MIB")) mib = std::strtoull(m, nullptr, 10);
    if (mib < 2 || mib > (1u << 20)) throw std::invalid_argument("ERNIC_BRIDGE_MEM_MIB must be 2..1048576");
    // The node's host memory is bus addresses [0, mib MiB); the arena is
    // all of it above the first MiB, so every address it hands out is one
    // the NIC's DMA reaches.
    b->mem_bytes = mib << 20;
    b->arena_bytes = b->mem_bytes - kArenaBase;
    if (const char* j = std::getenv("ERNIC_BRIDGE_TEST_JITTER_US")) b->jitter_us = unsigned(std::strtoul(j, nullptr, 10));
    b->arena = map_arena(b->arena_bytes);  // zero-filled
    if (!b->arena) throw std::runtime_error("cannot allocate " + std::to_string(mib) + " MiB of host memory");
    b->ch = Channel::connect(Endpoint::parse(a), std::chrono::milliseconds(10000));
    const std::vector<uint8_t> intro = b->ch->recv(std::chrono::milliseconds(60000));
    std::string why;
    std::optional<DevIntro> d = decode_device_intro(intro.data(), intro.size(), &why);
    if (!d) throw std::runtime_error("the simulator's intro: " + why);
    b->ch->send(encode_host_intro());
    Msg ctl;
    ctl.type = MsgType::H2DDevCtrl;
    ctl.flags = kCtrlMsixEn;
    b->send(ctl);
    return b.release();
  } catch (const std::exception& e) {
    g_open_error = std::string("ernic_open(") + a + "): " + e.what();
    return nullptr;
  }
}

const char* ernic_open_error(void) { return g_open_error.empty() ? nullptr : g_open_error.c_str(); }

int ernic_close(ernic_bridge* b) {
  if (!b) return -1;
  if (!b->failed()) {
    try {
      Msg t;
      t.type = MsgType::Terminate;
      b->send(t);
    } catch (const std::exception& e) {
      b->fail(e.what());
    }
  }
  const int rc = b->failed() ? -1 : 0;
  delete b;
  return rc;
}

const char* ernic_error(const ernic_bridge* b) { return b && b->failed() ? b->error.c_str() : nullptr; }

uint32_t ernic_read32(ernic_bridge* b, uint32_t offset) {
  return uint32_t(guarded(b, [&]() -> uint64_t {
    Msg q;
    q.type = MsgType::H2DRead;
    q.req_id = b->next_req++;
    q.offset = offset;
    q.len = 4;
    b->send(q);
    const Msg r = b->wait_for(MsgType::D2HReadComp, q.req_id);
    if (r.data.size() != 4) throw ChannelError("READCOMP with " + std::to_string(r.data.size()) + " bytes for 4");
    ++b->stats.mmio_reads;
    return uint64_t(r.data[0]) | uint64_t(r.data[1]) << 8 | uint64_t(r.data[2]) << 16 | uint64_t(r.data[3]) << 24;
  }, 0xFFFFFFFFull));
}

void ernic_write32(ernic_bridge* b, uint32_t offset, uint32_t value) {
  guarded(b, [&]() -> int {
    Msg q;
    q.type = MsgType::H2DWritePosted;
    q.req_id = b->next_req++;
    q.offset = offset;
    q.data = {uint8_t(value), uint8_t(value >> 8), uint8_t(value >> 16), uint8_t(value >> 24)};
    b->send(q);
    ++b->stats.mmio_writes;
    return 0;
  }, -1);
}

int ernic_write32_sync(ernic_bridge* b, uint32_t offset, uint32_t value) {
  return guarded(b, [&]() -> int {
    Msg q;
    q.type = MsgType::H2DWrite;
    q.req_id = b->next_req++;
    q.offset = offset;
    q.data = {uint8_t(value), uint8_t(value >> 8), uint8_t(value >> 16), uint8_t(value >> 24)};
    b->send(q);
    b->wait_for(MsgType::D2HWriteComp, q.req_id);
    ++b->stats.mmio_writes;
    return 0;
  }, -1);
}

uint64_t ernic_read64(ernic_bridge* b, uint32_t offset) {
  const uint64_t lo = ernic_read32(b, offset);
  return lo | uint64_t(ernic_read32(b, offset + 4)) << 32;
}

void ernic_write64(ernic_bridge* b, uint32_t offset, uint64_t value) {
  ernic_write32(b, offset, uint32_t(value));
  ernic_write32(b, offset + 4, uint32_t(value >> 32));
}

uint64_t ernic_dma_alloc(ernic_bridge* b, size_t bytes, size_t align, void** va) {
  if (!b || b->failed()) return 0;
  if (align == 0) align = 4096;
  // A request that cannot be met returns 0 and leaves the session alive
  // (the caller decides: a full memory is not a broken bridge).
  if (align & (align - 1) || align > (uint64_t(1) << 40)) return 0;
  const uint64_t start = (kArenaBase + b->brk + align - 1) / align * align;
  if (bytes == 0 || start - kArenaBase > b->arena_bytes || bytes > b->arena_bytes - (start - kArenaBase)) return 0;
  b->brk = start - kArenaBase + bytes;
  b->allocs[start - kArenaBase] = bytes;
  if (va) *va = b->arena + (start - kArenaBase);
  return start;
}

void* ernic_dma_ptr(ernic_bridge* b, uint64_t bus, size_t len) { return b ? b->mem(bus, len) : nullptr; }

uint64_t ernic_now_ps(const ernic_bridge* b) { return b ? b->now_ps : 0; }

namespace {
// now + ns of simulated time in ps, saturated at the end of time (a
// timeout too long to count never wraps into a short one).
uint64_t deadline_after(const ernic_bridge* b, uint64_t ns) {
  const uint64_t room = ~uint64_t(0) - b->now_ps;
  return ns > room / 1000 ? ~uint64_t(0) : b->now_ps + ns * 1000;
}
}  // namespace

int ernic_delay_ns(ernic_bridge* b, uint64_t ns) {
  return guarded(b, [&]() -> int {
    Msg s;
    s.type = MsgType::Sync;
    Msg q = s;
    q.timestamp_ps = deadline_after(b, ns);
    b->jitter();
    b->ch->send(encode(q));
    b->wait_for(MsgType::Sync, 0);
    return 0;
  }, -1);
}

int ernic_wait_irq(ernic_bridge* b, uint64_t timeout_ns) {
  return guarded(b, [&]() -> int {
    if (b->pending_irqs == 0) {
      Msg q;
      q.type = MsgType::Sync;
      q.flags = kSyncUntilIrq;
      q.timestamp_ps = deadline_after(b, timeout_ns);
      b->jitter();
      b->ch->send(encode(q));
      b->wait_for(MsgType::Sync, 0);
    }
    if (b->pending_irqs == 0) return 0;
    --b->pending_irqs;
    return 1;
  }, -1);
}

int ernic_wait_until(ernic_bridge* b, uint64_t deadline_ps, unsigned what) {
  return guarded(b, [&]() -> int {
    if (what == 0 || (what & ~(ERNIC_WAIT_IRQ | ERNIC_WAIT_DMA_WRITE)))
      throw std::invalid_argument("ernic_wait_event: what = " + std::to_string(what) +
                                  " (ERNIC_WAIT_IRQ 1, ERNIC_WAIT_DMA_WRITE 2, at least one)");
    const bool irq = what & ERNIC_WAIT_IRQ;
    if (irq && b->pending_irqs) {
      b->pending_irqs = 0;
      return int(ERNIC_WAIT_IRQ);
    }
    const uint64_t writes_before = b->stats.dma_writes;
    Msg q;
    q.type = MsgType::Sync;
    q.flags = (irq ? kSyncUntilIrq : 0) | (what & ERNIC_WAIT_DMA_WRITE ? kSyncUntilDmaWrite : 0);
    q.timestamp_ps = deadline_ps > b->now_ps ? deadline_ps : b->now_ps;
    b->jitter();
    b->ch->send(encode(q));
    b->wait_for(MsgType::Sync, 0);
    int got = b->stats.dma_writes != writes_before ? int(ERNIC_WAIT_DMA_WRITE) : 0;
    if (irq && b->pending_irqs) {
      b->pending_irqs = 0;
      got |= int(ERNIC_WAIT_IRQ);
    }
    return got;
  }, -1);
}

int ernic_wait_event(ernic_bridge* b, uint64_t timeout_ns, unsigned what) {
  if (!b) return -1;
  return ernic_wait_until(b, deadline_after(b, timeout_ns), what);
}

uint64_t ernic_dma_bus(const ernic_bridge* b, const void* va, size_t len) {
  if (!b || !va || !b->arena) return 0;
  const uintptr_t p = reinterpret_cast<uintptr_t>(va), a = reinterpret_cast<uintptr_t>(b->arena);
  if (p < a || p - a > b->brk || len > b->brk - (p - a)) return 0;
  // Inside one allocation (not an alignment gap, not across two).
  auto it = b->allocs.upper_bound(p - a);
  if (it == b->allocs.begin()) return 0;
  --it;
  const uint64_t off = (p - a) - it->first;
  if (off >= it->second || len > it->second - off) return 0;
  return kArenaBase + (p - a);
}

uint64_t ernic_mem_bytes(const ernic_bridge* b) { return b ? b->mem_bytes : 0; }

void ernic_set_irq_handler(ernic_bridge* b, void (*handler)(void*, uint16_t), void* ctx) {
  if (!b) return;
  b->irq_handler = handler;
  b->irq_ctx = ctx;
}

void ernic_get_stats(const ernic_bridge* b, ernic_bridge_stats* out) {
  if (b && out) *out = b->stats;
}

}  // extern "C"
