// model/bridge/client: what stands behind the verbs objects of
// ernic_verbs.h (C++ only). Every public struct a call hands out is the
// `pub` member of an object here, and every pointer a call receives is
// looked up in a registry before use: a pointer the library never gave, or
// one already destroyed, is EINVAL, not a crash.
//
// Files: ernic_verbs.cpp (device, PD, MR, buffers, neighbours),
// ernic_verbs_qp.cpp (QP creation and state transitions),
// ernic_verbs_cm.cpp (ernic_rdma_connect: a QP connected by CM),
// ernic_verbs_post.cpp (post_send, post_recv), ernic_verbs_cq.cpp (CQs,
// completion channels, polling, the completions' bookkeeping),
// ernic_verbs_status.cpp (fatal codes as completion statuses).
#pragma once
#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/bridge/client/bridge_bus.h"
#include "model/bridge/client/ernic_verbs.h"
#include "model/host/driver.h"

namespace ernic::verbs {

// The registry of live objects, by the address of their public struct.
struct Object;
void enroll(const void* pub, Object* o);
void unenroll(const void* pub);
Object* lookup(const void* pub);

struct Object {
  virtual ~Object() {
    if (pubp) unenroll(pubp);
  }
  ibv_context* ctx = nullptr;
  const void* pubp = nullptr;  // what enroll() registered
};
template <class T>
T* find(const void* pub) {
  return dynamic_cast<T*>(lookup(pub));
}

struct Pd;
struct Qp;

struct Mr : Object {
  ibv_mr pub{};
  Pd* pd = nullptr;
  uint64_t bus = 0;          // bus address of addr
  bool remote = false;       // registered with the NIC (an MR table entry)
  std::string name;          // the driver's name for it (remote MRs: VA = addr)
  int access = 0;
  int inflight = 0;          // posted WRs that name it, not yet completed
};

struct Pd : Object {
  ibv_pd pub{};
  int users = 0;             // MRs and QPs
};

struct Channel : Object {
  ibv_comp_channel pub{};
  std::vector<struct Cq*> cqs;  // in creation order
};

struct Cq : Object {
  ibv_cq pub{};
  Channel* channel = nullptr;
  bool armed = false;
  uint32_t events = 0;       // delivered by ibv_get_cq_event
  std::deque<ibv_wc> ready;  // collected, not yet polled
  int users = 0;             // QPs
  bool overrun = false;      // more than cqe completions waited at once: the CQ is in error
};

// A posted send WR: its 64-bit wr_id behind the WQE's 16-bit WRID.
struct SendEntry {
  uint64_t wr_id = 0;
  uint16_t wrid = 0;
  uint8_t wqe_opcode = 0;
  ibv_wc_opcode wc_opcode = IBV_WC_SEND;
  bool signaled = false;
  uint32_t length = 0;
  Mr* mr = nullptr;          // nullptr: inline
};

struct RecvEntry {
  uint64_t wr_id = 0;
  uint8_t* dst = nullptr;    // where the element's bytes go (nullptr: no SGE)
  uint32_t length = 0;
  Mr* mr = nullptr;
};

struct Qp : Object {
  ibv_qp pub{};
  Pd* pd = nullptr;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  ibv_qp_init_attr init{};
  // Attributes as set by ibv_modify_qp (what ibv_query_qp reports).
  ibv_qp_attr attr{};
  roce::IpAddr dest;         // from the AV
  uint32_t sq_depth = 0, rq_depth = 0, rq_elem_bytes = 4096;
  host::Connection* conn = nullptr;  // the driver's, from RTS on
  uint16_t next_wrid = 0;
  bool error_seen = false;   // an error CQE came: the rest are flushes
  std::deque<SendEntry> outstanding;
  std::deque<RecvEntry> recvs;
};

}  // namespace ernic::verbs

// The context: one bridge session, its bus, its driver, its objects.
struct ibv_context : ernic::verbs::Object {
  ernic_bridge* br = nullptr;
  std::unique_ptr<ernic::bridge::BridgeBus> bus;
  std::unique_ptr<ernic::host::Driver> drv;
  std::string last_error;
  bool dead = false;                 // the session failed: every call is EIO
  std::map<ernic::verbs::Object*, std::unique_ptr<ernic::verbs::Object>> owned;
  // Destroyed objects, kept until ibv_close_device (unenrolled): their
  // addresses are never handed out again, so a stale handle stays EINVAL.
  std::vector<std::unique_ptr<ernic::verbs::Object>> tombstones;
  std::map<uintptr_t, size_t> bufs;  // ernic_ibv_alloc_buf's buffers: start -> length
  size_t reported_taken = 0;         // BridgeBus::reported_errors() already failed a call
  std::vector<ernic::verbs::Qp*> qps;  // creation order (collection order)
  std::map<uint32_t, ernic::verbs::Mr*> by_lkey;
  std::map<roce::IpAddr, roce::MacAddr> neighbours;
  uint32_t next_handle = 1;
  uint64_t event_timeout_ps = 0;     // 0: the default
  uint16_t wrid_start = 0;           // ERNIC_IBV_TEST_WRID_START (tests: the 16-bit wrap)
  uint32_t rq_elem_bytes = 4096;     // ERNIC_RQ_ELEMENT_BYTES
};

namespace ernic::verbs {

constexpr uint64_t kDefaultEventTimeoutPs = 100'000'000'000ull;  // 100 ms
constexpr uint64_t kPollQuantumPs = 1'000'000;                    // an empty ibv_poll_cq: at most 1 us

// Records why a call fails and returns err (errno set too).
int fail(ibv_context* c, int err, const std::string& why);
// The context's objects.
template <class T>
T& adopt(ibv_context* c, std::unique_ptr<T> o) {
  T& r = *o;
  o->ctx = c;
  c->owned.emplace(o.get(), std::move(o));
  return r;
}
void destroy(ibv_context* c, Object* o, const void* pub);

// An error the driver reported from work of its own (its interrupt
// handler: BridgeBus::report_error) that no call has failed with yet: EIO
// with its message, each error once. 0 when there is none.
inline int take_reported(ibv_context* c) {
  if (!c->bus || c->reported_taken >= c->bus->reported_errors().size()) return 0;
  return fail(c, EIO, "the driver's interrupt handler reported: " + c->bus->reported_errors()[c->reported_taken++]);
}

// Runs f; a bridge failure marks the context dead (EIO), a driver error is
// `driver_err` with the driver's message. Returns f's errno-style result.
template <class F>
int guarded(ibv_context* c, int driver_err, F f) {
  if (c->dead) return fail(c, EIO, "the bridge session failed earlier: " + c->last_error);
  if (const int rc = take_reported(c)) return rc;
  try {
    return f();
  } catch (const ernic::bridge::BridgeBusError& e) {
    c->dead = true;
    return fail(c, EIO, e.what());
  } catch (const ernic::host::DriverError& e) {
    return fail(c, driver_err, e.what());
  } catch (const std::exception& e) {
    return fail(c, EIO, e.what());
  }
}

// The bus address of [p, p+len) in DMA memory, 0 outside.
uint64_t dma_bus(ibv_context* c, const void* p, uint64_t len);
// A GID as an address: ::ffff:a.b.c.d is IPv4, anything else but :: IPv6.
bool gid_to_ip(const ibv_gid& g, roce::IpAddr* out);

// QPs (ernic_verbs_qp.cpp): the attributes a QP has in RESET (the
// driver's TIMEOUTCONFi defaults, ERNIC's fixed values), and the driver's
// QP parameters for q as its attributes stand (PMTU, depths, QPN, SQ PSN,
// PD, TIMEOUTCONFi values).
void reset_attrs(Qp& q);
host::QpParams qp_params(const Qp& q);

// Completions: moves every QP's finished work into its CQs (send side from
// the driver's CQ poll, receive side from its RQ), never waiting.
void collect(ibv_context* c);
// A flushed or failed WR's completion (IBV_WC_WR_FLUSH_ERR ...).
void complete_send(Qp& q, const SendEntry& e, ibv_wc_status st, uint32_t vendor_err);
void complete_recv(Qp& q, const RecvEntry& r, ibv_wc_status st, uint32_t byte_len);
// Every WR of q completes with IBV_WC_WR_FLUSH_ERR (the QP went to ERR).
void flush(Qp& q);

}  // namespace ernic::verbs
