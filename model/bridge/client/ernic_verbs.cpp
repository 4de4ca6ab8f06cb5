// model/bridge/client: the verbs layer's device, protection domains,
// memory regions and buffers (ernic_verbs.h), and the object registry.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "model/bridge/client/ernic_verbs_impl.h"
#include "model/host/driver_env.h"

using namespace ernic;
using namespace ernic::verbs;

namespace {
thread_local std::string g_open_error;

std::unordered_map<const void*, Object*>& registry() {
  static std::unordered_map<const void*, Object*> r;
  return r;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

uint64_t env_uint(const char* name, uint64_t dflt, uint64_t max) {
  const char* v = env(name);
  if (!v) return dflt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 0);
  if (errno || *end || x > max)
    throw std::invalid_argument(std::string(name) + "='" + v + "' is not a number in 0.." + std::to_string(max));
  return x;
}

// [p, p+len) lies inside one buffer ernic_ibv_alloc_buf gave (not the
// driver's own memory, not across two buffers).
bool in_one_buffer(const ibv_context* c, const void* p, size_t len) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = c->bufs.upper_bound(a);
  if (it == c->bufs.begin()) return false;
  --it;
  const uintptr_t off = a - it->first;
  return off < it->second && len <= it->second - off;
}

// ERNIC's MR access code for remote read / write (ACCESSDESC[3:0]).
uint32_t access_code(int access) {
  const bool r = access & IBV_ACCESS_REMOTE_READ, w = access & IBV_ACCESS_REMOTE_WRITE;
  if (r && w) return regs::u(regs::val::ACCESSDESC_ACCESS::READ_WRITE);
  return w ? regs::u(regs::val::ACCESSDESC_ACCESS::WRITE) : regs::u(regs::val::ACCESSDESC_ACCESS::READ);
}
}  // namespace

namespace ernic::verbs {

void enroll(const void* pub, Object* o) {
  registry()[pub] = o;
  o->pubp = pub;
}
void unenroll(const void* pub) { registry().erase(pub); }
Object* lookup(const void* pub) {
  if (!pub) return nullptr;
  auto it = registry().find(pub);
  return it == registry().end() ? nullptr : it->second;
}

int fail(ibv_context* c, int err, const std::string& why) {
  if (c) c->last_error = why;
  errno = err;
  return err;
}

void destroy(ibv_context* c, Object* o, const void* /*pub*/) {
  auto it = c->owned.find(o);
  if (it == c->owned.end()) return;
  if (o->pubp) unenroll(o->pubp);
  o->pubp = nullptr;
  c->tombstones.push_back(std::move(it->second));
  c->owned.erase(it);
}

uint64_t dma_bus(ibv_context* c, const void* p, uint64_t len) {
  if (!p || len > (uint64_t(1) << 48)) return 0;
  return ernic_dma_bus(c->br, p, size_t(len ? len : 1));
}

bool gid_to_ip(const ibv_gid& g, roce::IpAddr* out) {
  static const uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (std::memcmp(g.raw, kV4Prefix, 12) == 0) {
    *out = roce::Ipv4Addr{uint32_t(g.raw[12]) << 24 | uint32_t(g.raw[13]) << 16 | uint32_t(g.raw[14]) << 8 | g.raw[15]};
    return true;
  }
  roce::Ipv6Addr a;
  std::memcpy(a.b.data(), g.raw, 16);
  if (a == roce::Ipv6Addr{}) return false;
  *out = a;
  return true;
}

}  // namespace ernic::verbs

// Only for the error paths of the C functions: the context behind a PD etc.
#define CTX_OR_EINVAL(obj, ret)          \
  do {                                   \
    if (!(obj)) {                        \
      errno = EINVAL;                    \
      return ret;                        \
    }                                    \
  } while (0)

extern "C" {

struct ibv_context* ernic_ibv_open(const char* addr) {
  g_open_error.clear();
  auto c = std::make_unique<ibv_context>();
  int err = EINVAL;
  try {
    // The node's driver configuration, as the built-in host would have it
    // (model/host/driver_env.h: MAC, IP, QP count, layout, seed, ...).
    const host::DriverConfig cfg = host::driver_config_from_env([](const char* n) { return env(n); });
    if (cfg.mr_ctx_table)
      throw std::invalid_argument("the node has `mr_cache: cam`: its MR context table sits at a bus address the "
                                  "simulator chose (ERNIC_MR_CTX_TABLE), which this library cannot place");
    c->rq_elem_bytes = uint32_t(env_uint("ERNIC_RQ_ELEMENT_BYTES", 4096, 8u << 20));
    if (c->rq_elem_bytes == 0 || c->rq_elem_bytes % 256)
      throw std::invalid_argument("ERNIC_RQ_ELEMENT_BYTES must be a multiple of 256");
    c->wrid_start = uint16_t(env_uint("ERNIC_IBV_TEST_WRID_START", 0, 0xFFFF));
    err = EIO;
    c->br = ernic_open(addr);
    if (!c->br) throw std::runtime_error(ernic_open_error() ? ernic_open_error() : "ernic_open failed");
    c->bus = std::make_unique<bridge::BridgeBus>(c->br);
    c->drv = std::make_unique<host::Driver>(*c->bus, cfg);
    c->bus->attach(c->drv.get());
    c->drv->init();
    const char* pip = env("ERNIC_PEER_IP");
    const char* pmac = env("ERNIC_PEER_MAC");
    if (pip && pmac) {
      auto mac = roce::MacAddr::parse(pmac);
      const auto addr = roce::IpAddr::parse(pip);
      if (!mac || !addr)
        throw std::invalid_argument(std::string("ERNIC_PEER_IP='") + pip + "' / ERNIC_PEER_MAC='" + pmac +
                                    "': not an address pair");
      const roce::IpAddr ip = *addr;
      if (ip.v6) c->drv->add_neighbour(ip.ip6, *mac);
      else c->drv->add_neighbour(ip.ip4, *mac);
      c->neighbours[ip] = *mac;
    }
  } catch (const std::exception& e) {
    g_open_error = std::string("ernic_ibv_open: ") + e.what();
    c->drv.reset();
    c->bus.reset();
    if (c->br) ernic_close(c->br);
    errno = err;
    return nullptr;
  }
  ibv_context* p = c.release();
  p->ctx = p;
  enroll(p, p);
  return p;
}

const char* ernic_ibv_open_error(void) { return g_open_error.c_str(); }

int ibv_close_device(struct ibv_context* context) {
  ibv_context* c = find<ibv_context>(context);
  CTX_OR_EINVAL(c, EINVAL);
  c->owned.clear();
  c->tombstones.clear();
  c->drv.reset();
  c->bus.reset();
  const bool ok = ernic_close(c->br) == 0 && !c->dead;
  delete c;
  if (ok) return 0;
  errno = EIO;
  return EIO;
}

const char* ernic_ibv_last_error(const struct ibv_context* context) {
  const ibv_context* c = find<ibv_context>(context);
  return c ? c->last_error.c_str() : "not a context of this library";
}

ernic_bridge* ernic_ibv_bridge(struct ibv_context* context) {
  ibv_context* c = find<ibv_context>(context);
  return c ? c->br : nullptr;
}

void* ernic_ibv_alloc_buf(struct ibv_context* context, size_t length, size_t align) {
  ibv_context* c = find<ibv_context>(context);
  CTX_OR_EINVAL(c, nullptr);
  if (c->dead) return fail(c, EIO, "the bridge session failed earlier"), nullptr;
  if (align == 0) align = 4096;
  if (length == 0 || (align & (align - 1)) || align > (size_t(1) << 30) || length > (size_t(1) << 40))
    return fail(c, EINVAL, "ernic_ibv_alloc_buf: length " + std::to_string(length) + " (1..2^40), align " +
                               std::to_string(align) + " (a power of two up to 2^30)"),
           nullptr;
  void* va = nullptr;
  if (!ernic_dma_alloc(c->br, length, align, &va))
    return fail(c, ENOMEM, "ernic_ibv_alloc_buf: " + std::to_string(length) +
                               " bytes do not fit in the host memory (ERNIC_BRIDGE_MEM_MIB)"),
           nullptr;
  c->bufs[reinterpret_cast<uintptr_t>(va)] = length;
  return va;
}

int ernic_ibv_add_neighbour(struct ibv_context* context, const union ibv_gid* gid, const uint8_t mac[6]) {
  ibv_context* c = find<ibv_context>(context);
  CTX_OR_EINVAL(c, EINVAL);
  roce::IpAddr ip;
  if (!gid || !mac || !gid_to_ip(*gid, &ip)) return fail(c, EINVAL, "ernic_ibv_add_neighbour: no GID or MAC, or the GID ::");
  roce::MacAddr m;
  std::memcpy(m.b.data(), mac, 6);
  if (ip.v6) c->drv->add_neighbour(ip.ip6, m);
  else c->drv->add_neighbour(ip.ip4, m);
  c->neighbours[ip] = m;
  return 0;
}

void ernic_ibv_set_event_timeout(struct ibv_context* context, uint64_t timeout_ns) {
  ibv_context* c = find<ibv_context>(context);
  if (!c) return;
  c->event_timeout_ps = timeout_ns > (~uint64_t(0) / 1000) ? ~uint64_t(0) : timeout_ns * 1000;
}

struct ibv_pd* ibv_alloc_pd(struct ibv_context* context) {
  ibv_context* c = find<ibv_context>(context);
  CTX_OR_EINVAL(c, nullptr);
  if (c->dead) return fail(c, EIO, "the bridge session failed earlier"), nullptr;
  Pd& pd = adopt(c, std::make_unique<Pd>());
  pd.pub.context = c;
  pd.pub.handle = c->next_handle++ & 0xFFFFFF;
  enroll(&pd.pub, &pd);
  return &pd.pub;
}

int ibv_dealloc_pd(struct ibv_pd* pdp) {
  Pd* pd = find<Pd>(pdp);
  CTX_OR_EINVAL(pd, EINVAL);
  if (pd->users) return fail(pd->ctx, EBUSY, "ibv_dealloc_pd: " + std::to_string(pd->users) + " MRs or QPs use it");
  destroy(pd->ctx, pd, pdp);
  return 0;
}

struct ibv_mr* ibv_reg_mr(struct ibv_pd* pdp, void* addr, size_t length, int access) {
  Pd* pd = find<Pd>(pdp);
  CTX_OR_EINVAL(pd, nullptr);
  ibv_context* c = pd->ctx;
  const int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  char flags[16];
  std::snprintf(flags, sizeof flags, "0x%x", unsigned(access));
  if (access & ~known)
    return fail(c, EINVAL, std::string("ibv_reg_mr: access ") + flags +
                               ": ERNIC's MRs have local write, remote write and remote read only (no atomics, memory "
                               "windows, zero-based, on-demand or relaxed-ordering MRs)"),
           nullptr;
  if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))
    return fail(c, EINVAL, "ibv_reg_mr: IBV_ACCESS_REMOTE_WRITE needs IBV_ACCESS_LOCAL_WRITE"), nullptr;
  const uint64_t bus = length && in_one_buffer(c, addr, length) ? dma_bus(c, addr, length) : 0;
  if (!bus)
    return fail(c, EINVAL, "ibv_reg_mr: [addr, +" + std::to_string(length) +
                               ") does not lie inside one buffer of ernic_ibv_alloc_buf of this context, or its "
                               "length is 0"),
           nullptr;
  auto m = std::make_unique<Mr>();
  m->pd = pd;
  m->bus = bus;
  m->access = access;
  m->remote = access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  const uint32_t handle = c->next_handle++;
  if (m->remote) {
    // The NIC's MR table entry over the program's own memory, at the
    // program's VA (as rdma-core: a peer addresses byte k at addr + k).
    m->name = "ibv_mr_" + std::to_string(handle);
    const int rc = guarded(c, ENOMEM, [&]() -> int {
      const host::Mr& hm = c->drv->register_mr_at(m->name, bus, uint64_t(reinterpret_cast<uintptr_t>(addr)), length,
                                                  access_code(access), pd->pub.handle);
      m->pub.rkey = hm.rkey;
      m->pub.lkey = hm.rkey;
      return 0;
    });
    if (rc) return nullptr;
  } else {
    m->pub.lkey = 0x80000000u | handle;
    m->pub.rkey = 0;
  }
  Mr& mr = adopt(c, std::move(m));
  mr.pub.context = c;
  mr.pub.pd = pdp;
  mr.pub.addr = addr;
  mr.pub.length = length;
  mr.pub.handle = handle;
  enroll(&mr.pub, &mr);
  c->by_lkey[mr.pub.lkey] = &mr;
  ++pd->users;
  return &mr.pub;
}

uint64_t ernic_ibv_mr_remote_addr(const struct ibv_mr* mrp) {
  const Mr* m = find<Mr>(mrp);
  return m && m->remote ? uint64_t(reinterpret_cast<uintptr_t>(m->pub.addr)) : 0;
}

int ibv_dereg_mr(struct ibv_mr* mrp) {
  Mr* m = find<Mr>(mrp);
  CTX_OR_EINVAL(m, EINVAL);
  ibv_context* c = m->ctx;
  if (m->inflight)
    return fail(c, EBUSY, "ibv_dereg_mr: " + std::to_string(m->inflight) + " posted WRs use it");
  if (m->remote) {
    const int rc = guarded(c, EINVAL, [&]() -> int {
      c->drv->deregister_mr(m->name);
      return 0;
    });
    if (rc) return rc;
  }
  c->by_lkey.erase(m->pub.lkey);
  --m->pd->users;
  destroy(c, m, mrp);
  return 0;
}

}  // extern "C"
