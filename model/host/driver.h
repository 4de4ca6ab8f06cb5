// model/host: the host driver, following PG332's software flow (3.x) and
// the Xilinx xib/LX drivers' conventions (../shared/spec/ernic-pg332.md).
//
// It reaches the NIC only as a real driver would, through a HostBus
// (host_bus.h): register reads and writes (doorbells included), host memory
// (queues, buffers, doorbell mirrors the NIC writes), and interrupts. It is
// plain C++: the simulator's built-in host runs it over the node's AXI4-Lite
// port (ScHost, sc_host.h), and a program outside the simulator runs the
// same code over the bridge (model/bridge/client). It includes no ERNIC
// model header and no SystemC (a test checks).
//
// - init(): error buffer first, MAC and IP, error-status queue and write-
//   retry data buffers, interrupts, XRNICADCONF base count, XRNICCONF
//   enable; then QP1's queues and doorbell addresses.
// - register_mr(): PD, VA, PA, R_Key = index << 8 | key byte, length, access.
// - CM over QP1 (IBTA ch.12, as ERNIC requires: software builds the whole
//   frame, ERNIC appends the ICRC): connect() sends ConnectRequest, waits for
//   ConnectReply (3 tries), programs the RC QP, sends ReadyToUse; listen()
//   lets the interrupt thread answer a ConnectRequest with ConnectReply and
//   mark the QP RTS on ReadyToUse. Private data: rdma_cm IP header (REQ) and
//   the MR advertisement (VA, R_Key, length).
// - post(): 64-byte WQEs into the SQ, SQPIi doorbell once or per WQE;
//   poll(): 4-byte CQEs from the CQ, using the CQ head mirror (CQDBADDi),
//   or CQHEADi read by MMIO, and in batches (PollMode).
// - connect_batch() / listen_batch(): several CM connections at once
//   (driver_cm_batch.cpp). DriverConfig::doorbell_layout places the QPs'
//   CQ / RQ doorbell words.
// - HW-handshake mode (QPCONFi[4] = 0): a connection made with
//   QpParams::sideband, or switched by switch_to_hw_handshake() (PG332
//   ch.6), rings its SQ and hands back RQ elements on the sideband ports
//   (model/link/sideband.h) instead of SQPIi / RQCIi, and learns its CQ
//   head from resp_hndler_o_send_cq_db. The driver then plays the FPGA user
//   logic those ports belong to.
// IB verbs states (RESET/INIT/RTR/RTS/ERR) are this driver's bookkeeping.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/host/host_bus.h"
#include "model/regs/regs.h"
#include "model/roce/cm.h"
#include "model/roce/packet.h"
#include "model/roce/types.h"

namespace ernic::host {

class DriverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// connect() failed in CM: the server refused (ConnectReject, IBTA reason
// code) or never answered (3 ConnectRequests).
class CmError : public DriverError {
 public:
  enum Kind { rejected, timeout };
  CmError(Kind k, const std::string& what, uint16_t reason = 0) : DriverError(what), kind(k), reason(reason) {}
  Kind kind;
  uint16_t reason;  // the REJ reason (rejected)
};

struct DriverConfig {
  std::string node;              // node name, for messages
  roce::MacAddr mac;
  roce::Ipv4Addr ip;
  std::optional<roce::Ipv6Addr> ip6;  // IPv6XADD1..4 (none: IPv4 only)
  uint32_t num_qp = 8;           // C_NUM_QP of the NIC
  double core_mhz = 200.0;       // for XRNICADCONF's base count
  uint64_t seed = 1;
  regs::Layout layout = regs::kLayout31;
  uint16_t udp_sport = 0x12B7;   // XRNICCONF[31:16] (LX uses 4791)
  uint32_t ack_mode = 0;         // XRNICCONF[4:3]: 0 AckReq or timeout, 1 timeout only, 2 AckReq only
  uint32_t cnp_interval_us = 4;  // at most one CNP per QP this often (A-HOST-3)
  uint16_t qp1_udp_sport = 0x8CD1;  // software-built QP1 frames (XIB)
  uint32_t cm_timeout_us = 100;  // per try; 3 tries (LX)
  // `mr_cache: cam` (model/mr): host address of the MR context table the
  // NIC's CAM fetches from; every MR context is written there (entry i at
  // +32 * i, the eight MR register words little-endian) before its
  // registers. None: PG332's register table only.
  std::optional<uint64_t> mr_ctx_table;
  // Extension shadow_doorbell (X-SHADOW-DB-1, model/ernic/shadow_db.h): an
  // RC QP's SQ producer index is written to this host-memory table (QP n's
  // 4 bytes at +4 (n - 1)) instead of SQPIi; the NIC polls it. The driver
  // owns the table: it stores 0 in a QP's entry before it enables the QP
  // (X-SHADOW-DB-3). None: SQPIi.
  std::optional<uint64_t> shadow_sq_db;
  // Where an RC QP's CQ and RQ doorbell words (CQDBADDi, RQWPTRDBADDi: the
  // NIC's 4-byte mirror writes) lie: qp_line (default) one 64-byte line of
  // the QP's own holding both; shared_line the driver's doorbell pool, 8
  // bytes a QP (QP n at pool + 8 (n - 1)), so eight QPs share a 64-byte
  // line (the LX/XIB pool); spread each word on a 4 KiB page of its own.
  enum class DoorbellLayout { qp_line, shared_line, spread };
  DoorbellLayout doorbell_layout = DoorbellLayout::qp_line;
};

enum class VerbsState { Reset, Init, Rtr, Rts, Err };
const char* verbs_state_name(VerbsState s);

struct Mr {
  std::string name;
  uint32_t index = 0;            // MR table index
  uint32_t pd = 0;
  uint64_t va = 0, pa = 0, length = 0;
  uint32_t rkey = 0;
  uint32_t access = 2;           // ACCESSDESC[3:0]
  // Guards (canaries) the driver places right before and after the MR's
  // memory, allocated with it, not part of the MR the NIC sees.
  uint64_t guard_before = 0, guard_after = 0;
};

constexpr uint64_t kMrGuardBytes = 64;
// The canary pattern: byte i of a guard.
constexpr uint8_t mr_guard_byte(uint64_t i) { return uint8_t(0xA5 ^ (i * 0x1D)); }

// WQE as the driver posts it (PG332 Table 2-1).
struct Wqe {
  uint16_t wr_id = 0;
  uint8_t opcode = 0;            // pg332::WqeOpcode (model/regs/wqe.h); other values are the IP's illegal-opcode path
  uint64_t laddr = 0;            // physical address of the local buffer
  uint32_t length = 0;
  uint64_t remote_va = 0;
  uint32_t rkey = 0;             // RTAG (also the invalidate key for SEND_INV)
  uint32_t immdt = 0;
};

// How poll() looks at the CQ (wait_completions' `batch` and `cq_head`;
// the defaults are the driver's usual way: every CQE the head mirror shows).
struct PollMode {
  // 0: take every new CQE at each look. B > 0: CQE handling in batches
  // (seed 000's "wait for 32 CQEs, then handle them"): take none until B
  // are there (or what the call still needs, if fewer), then exactly B
  // without looking at the head again.
  uint32_t batch = 0;
  // false: the head from its mirror at CQDBADDi (host memory: no bus
  // access). true: from CQHEADi by an MMIO read at every look (seed 000's
  // read_reg(CQHEADi) loop): a non-posted read the driver waits for, and
  // the looks are back to back while too few CQEs are there.
  bool mmio = false;
  bool plain() const { return batch == 0 && !mmio; }
};

struct Cqe {
  uint16_t wr_id = 0;
  uint8_t opcode = 0;
  bool error = false;
  uint32_t raw = 0;
  uint64_t time_ps = 0;          // when the driver saw it
};

// A message the responder delivered, as software sees it: a SEND kind in
// an RQ element (the RQ carries no length or status, PG332 section 4) and
// the ieth_immdt stream's entry for immediate data / invalidate R_Keys.
struct RecvMsg {
  enum Kind : uint8_t { kSend, kSendImm, kSendInv, kWriteImm };
  Kind kind = kSend;
  uint32_t rq_index = 0;         // SEND kinds: the RQ element
  uint64_t elem_addr = 0;        // SEND kinds: its host address
  uint32_t data = 0;             // ImmDt or the R_Key to invalidate
  uint64_t time_ps = 0;
};

struct QpParams {
  uint32_t pmtu = 4096;
  uint32_t sq_depth = 64;
  uint32_t rq_depth = 16;
  uint32_t rq_elem_bytes = 4096; // multiple of 256, power-of-two units
  std::optional<uint32_t> qpn;   // explicit QPN, else the lowest free one
  std::optional<uint32_t> start_psn;  // else drawn from the seed
  const Mr* mr = nullptr;        // advertised to the peer; its PD becomes PDi
  std::optional<uint32_t> pd;    // PDi when given (else mr's PD, else 0)
  bool sideband = false;         // HW-handshake mode from the start (QPCONFi[4] = 0): sideband doorbells
  // TIMEOUTCONFi (PG332): ACK timeout exponent (4.096 us x 2^n), retry
  // count, RNR retry count, RNR timer code (IBTA Table 45). LX's values but
  // the timeout.
  uint32_t ack_timeout = 14, retry_cnt = 3, rnr_retry_cnt = 3, rnr_timer = 0x1F;
};

struct Connection {
  uint32_t qpn = 0, remote_qpn = 0;
  uint32_t local_psn = 0, remote_psn = 0;
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint64_t rep_sent_ps = 0;      // passive side: when the last ConnectReply left (its RTU timer)
  roce::MacAddr remote_mac;
  roce::Ipv4Addr remote_ip;
  bool ipv6 = false;             // QPCONFi[7]: the QP runs over IPv6 (remote_ip6)
  roce::Ipv6Addr remote_ip6;
  roce::cm::MrInfo remote_mr;
  QpParams params;
  VerbsState state = VerbsState::Reset;
  uint64_t sq_base = 0, cq_base = 0, rq_base = 0, cq_db = 0, rq_db = 0;
  uint32_t sq_pi = 0;            // next SQ slot (mod depth)
  uint32_t cq_ci = 0;            // next CQE to read (mod depth)
  uint32_t posted = 0, completed = 0;
  uint32_t rung = 0;             // `posted` when the doorbell was last rung
  bool sideband = false;         // HW-handshake mode: doorbells on i_qp_sq_pidb / i_qp_rq_cidb
  uint32_t sb_cq_head = 0;       // the last resp_hndler_o_send_cq_db count (HW-handshake mode)
  std::deque<Cqe> cqes;          // polled, not yet handed out
  uint32_t rq_ci = 0;            // next RQ element to consume (mod depth)
  uint64_t last_cnp_ps = 0;      // when the driver last sent a CNP for this QP
  // RQ doorbells (the new write pointer) and ieth_immdt entries, in arrival order.
  struct RxEvent { bool ieth; uint64_t value; uint64_t time_ps; };
  std::deque<RxEvent> rx_events;
  uint32_t rq_mirror = 0;        // the RQ write pointer last read from RQWPTRDBADDi (a bus without RX streams)
};

class Driver {
 public:
  // Every wait goes through bus (and signals its events, HostBus::Wake).
  Driver(HostBus& bus, DriverConfig cfg);
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // One pass of the interrupt handler: reads INTSTS and clears what it
  // read (W1C), serves QP1's RQ (CM MADs), clears the CQ interrupt banks,
  // counts fatal interrupts, sends CNPs. Returns the INTSTS value read (0:
  // nothing was pending). Called by whoever sees rnic_intr high: ScHost's
  // interrupt thread, or a program's bus while it sleeps. Errors in the
  // work go to HostBus::report_error.
  uint32_t service_interrupt();

  // Neighbour table (what ARP would give): IPv4 -> MAC.
  void add_neighbour(roce::Ipv4Addr ip, roce::MacAddr mac) { neigh_[ip.v] = mac; }
  // IPv6 -> MAC (what neighbour discovery would give).
  void add_neighbour(roce::Ipv6Addr ip, roce::MacAddr mac) { neigh6_[ip] = mac; }

  void init();
  const Mr& register_mr(const std::string& name, uint64_t length, uint32_t access, uint32_t pd);
  // An MR over memory the caller already has (a verbs program's buffer):
  // bus address pa, the VA the NIC checks remote requests against, no
  // guards. pa + length must lie in host memory.
  const Mr& register_mr_at(const std::string& name, uint64_t pa, uint64_t va, uint64_t length, uint32_t access,
                           uint32_t pd);
  const Mr* find_mr(const std::string& name) const;
  // One message per MR guard byte range found changed: node, MR, which
  // guard, offset within it. Empty when every guard is intact.
  std::vector<std::string> check_mr_guards() const;

  // Out-of-band connection setup (no CM on the wire, as when both ends are
  // configured by one program): prepare() allocates the QP, its start PSN
  // and queues; establish() programs it with the peer's QPN, PSN, address
  // and MR advertisement and moves it to RTS.
  Connection& prepare(const QpParams& p);
  // Returns once every register write posted before it has reached ERNIC:
  // a non-posted read of QP qpn's STATQPi (PCIe ordering: a read does not
  // pass the posted writes before it). Its value.
  uint32_t flush_posted(uint32_t qpn);
  // The lowest QPN free and not in avoid; nullopt: none.
  std::optional<uint32_t> lowest_free_qpn(const std::set<uint32_t>& avoid = {}) const;
  // An IPv6 remote_ip makes an IPv6 QP (QPCONFi[7], IPDESADDR1..4i).
  void establish(Connection& c, uint32_t remote_qpn, uint32_t remote_psn, roce::IpAddr remote_ip,
                 const roce::cm::MrInfo& remote_mr);

  // A QP programmed by someone else (the QP-setup offload: model/host/
  // qp_setup_driver.h) taken over as a connection: c carries its QPN,
  // remote QPN and address, PSNs, queue bases, doorbell mirrors and
  // params. The QPN must be free here; the connection is in RTS.
  Connection& adopt(std::unique_ptr<Connection> c);
  // A QPN set up outside the driver (reserved: true) is skipped when the
  // driver picks a free QPN, and may be adopted; false frees it again.
  void reserve_qpn(uint32_t qpn, bool reserved);
  // Who holds QPN qpn here: nobody (free or out of range), a reservation
  // (reserve_qpn), a connection of the driver not yet in RTS (being
  // established: its QP may not be programmed yet), or one in RTS or later.
  enum class QpnHolder { none, reserved, connecting, connection };
  QpnHolder qpn_holder(uint32_t qpn) const;

  // Passive side: the next ConnectRequest is answered with these parameters.
  Connection& listen(const QpParams& p);
  // Passive side, once the ConnectReply is out: waits for the ReadyToUse
  // (c reaches RTS), resending the ConnectReply when none came within
  // cm_timeout_us of the last one (IBTA vol. 1 12.9: the passive side's REP
  // timer), 3 ConnectReplies in all. False if c is still not in RTS.
  bool await_rtu(Connection& c);
  // Active side: blocks until ReadyToUse has been sent (or throws). An
  // IPv6 server address runs CM over IPv6 (GIDs and the rdma_cm header
  // carry the IPv6 addresses) and makes an IPv6 QP.
  Connection& connect(roce::IpAddr server, const QpParams& p, uint16_t service_port = 18515);
  // Batched set-up (driver_cm_batch.cpp; seed 001's "several REQs at
  // once"). Passive side: the next n ConnectRequests are answered with p,
  // one listening connection each, in arrival order. Active side: n QPs
  // prepared, their n ConnectRequests posted on QP1 back to back (a
  // doorbell each), then every ConnectReply awaited (3 tries for those
  // still unanswered), each QP programmed and its ReadyToUse sent; returns
  // once all are out (or throws CmError). n is at most 15 (QP1's queues).
  std::vector<Connection*> listen_batch(const QpParams& p, uint32_t n);
  std::vector<Connection*> connect_batch(roce::IpAddr server, const QpParams& p, uint32_t n,
                                         uint16_t service_port = 18515);

  // Deregistration (XIB): ACCESSDESC := 0xF invalidates the entry; the index
  // is not reused by this driver.
  void deregister_mr(const std::string& name);
  // Passive side refuses the next ConnectRequest with this REJ reason.
  void reject_next(uint16_t reason);
  // Active side of a refused connect: sends ConnectRequest, expects
  // ConnectReject; returns its reason (throws if a ConnectReply comes or
  // nothing does).
  uint16_t connect_expect_reject(roce::IpAddr server, uint16_t service_port = 18515);
  // DisconnectRequest / DisconnectReply, then PG332's QP deletion flow on
  // this side (the peer runs it when the DREQ arrives). The connection goes
  // to RESET and its QPN is free again.
  void disconnect(Connection& c);
  // PG332 ch.6 fatal recovery, steps 1-4 and the end of 6: the QP under
  // recovery, drained, disabled, its pointers zeroed under SW override.
  // The QP returns to RESET with its QPN free; a new connect programs it
  // again (step 5) and enables it (step 6). Returns the fatal code found in
  // the error-status queue for this QP (0 if none).
  uint32_t recover_fatal(Connection& c);
  // PG332 ch.6's QP deletion without CM (what disconnect does after the
  // DREQ/DREP): waits until the QP is idle (or fatal), then under SW
  // override disables it and zeroes its pointers. The connection goes to
  // RESET and its QPN is free again.
  void destroy_qp(Connection& c) { delete_qp(c); }
  // The fatal code the NIC wrote for QP qpn into the incoming error-status
  // queue (PG332: QPN[31:16] | code[15:0]; model/regs/fatal.h), 0 if none
  // so far. Reading the queue consumes its new entries; the codes found are
  // kept per QP.
  uint32_t fatal_code(uint32_t qpn);

  // ring = false: write the WQEs but leave the doorbell for a later post.
  void post(Connection& c, const std::vector<Wqe>& wqes, bool doorbell_each, bool ring = true);
  // Collects up to count CQEs, waiting until timeout_ps of simulated time
  // has passed; returns what arrived.
  std::vector<Cqe> poll(Connection& c, uint32_t count, uint64_t timeout_ps);
  // The same with another way of looking at the CQ (PollMode; a plain mode
  // is the call above).
  std::vector<Cqe> poll(Connection& c, uint32_t count, uint64_t timeout_ps, const PollMode& mode);
  // Receive side: waits up to timeout_ps for `count` messages on c (see
  // RecvMsg) and returns those that arrived, oldest first. With consume,
  // their RQ elements are handed back to the NIC (RQCIi). The NIC's
  // rx_pkt_hndler_o_rq_db sideband and ieth_immdt stream feed it.
  std::vector<RecvMsg> recv(Connection& c, uint32_t count, uint64_t timeout_ps, bool consume);
  void on_rq_doorbell(uint32_t qpn, uint32_t pi);
  void on_cq_doorbell(uint32_t qpn, uint32_t cq_head);  // resp_hndler_o_send_cq_db
  // PG332 ch.6 "Switching to HW handshake" on this end of c: waits until
  // the QP carries no traffic (SQ and outstanding queue empty, every WQE
  // completed, the CQEs collected for poll()), then under SW override zeroes
  // SQPIi, CQHEADi and STATCURSQPTRi, writes the RQ entries still pending
  // (STATRQPIDBi - RQCIi) into STATRQPIDBi and zeroes RQCIi (A-SIDEBAND-3),
  // writes QPCONFi[4] = 0 and clears the SW override. From then on the SQ,
  // CQ and RQ indices restart at 0 and doorbells go on the sideband.
  // Returns the new STATRQPIDBi (the RQ entries still pending).
  uint32_t switch_to_hw_handshake(Connection& c);
  void on_ieth(uint64_t entry);

  uint64_t alloc(uint64_t bytes, uint64_t align = 4096);
  HostBus& bus() { return bus_; }
  const DriverConfig& config() const { return cfg_; }
  const std::vector<std::unique_ptr<Connection>>& connections() const { return conns_; }
  uint64_t fatal_interrupts() const { return fatal_irqs_; }
  // Extension shadow_doorbell (X-SHADOW-DB-3): QP qpn's entry of the table
  // to 0, a CPU store. The table is software's: whoever enables a QP (this
  // driver, the QP-setup offload's driver) zeroes its entry first, and a
  // deleted QP's entry is zeroed, so a reused QPN never rings from a stale
  // value. Nothing without the extension.
  void clear_shadow_doorbell(uint32_t qpn);

 private:
  void service_cnp();
  void post_qp1(const std::vector<uint8_t>& bytes);
  bool qp1_sq_full() const;
  roce::Frame qp1_frame(const roce::IpAddr& dst);
  uint64_t cnps_sent_ = 0, cnps_suppressed_ = 0;
  void ring_sq(Connection& c);        // SQPIi or i_qp_sq_pidb
  // Until the QP's SQ and outstanding queue are empty and every WQE taken
  // has completed (CQHEADi = SQPIi); with want_pi, also until SQPIi =
  // want_pi (a doorbell the NIC takes later, from the shadow table).
  void wait_qp_idle(uint32_t qpn, const char* what, std::optional<uint32_t> want_pi = std::nullopt);
  // The SQ producer index the NIC must have taken before the QP is idle:
  // the connection's own when its doorbells go through the shadow table.
  std::optional<uint32_t> shadow_pi(const Connection& c) const;
  Connection* by_qpn(uint32_t qpn);
  void take_cqe(Connection& c, uint32_t depth);  // the CQE at cq_ci, into c.cqes
  void service_qp1_rq();
  void handle_mad(const uint8_t* elem, size_t len);
  void on_cm_req(const roce::IpAddr& src, const roce::cm::Req& req);  // handle_mad's ConnectRequest
  roce::cm::Req cm_req(const Connection& c, const roce::IpAddr& server, const QpParams& p, uint16_t service_port);
  bool batch_reply(const roce::cm::Rep& rep);  // a ConnectReply for connect_batch: taken (true)
  bool batch_reject(const roce::cm::Rej& rej);
  bool batch_pending();  // a batch's connections still awaiting a ConnectReply or ReadyToUse
  void send_rep(Connection& c);
  void send_rtu(const Connection& c);
  void send_mad(const roce::IpAddr& dst, const roce::cm::Message& msg, uint16_t attr_id);
  const roce::MacAddr& neighbour(const roce::IpAddr& ip) const;  // fails without an entry
  roce::IpAddr local_addr(bool v6) const;                         // fails when v6 and no IPv6 address
  static roce::IpAddr remote_of(const Connection& c) {
    return c.ipv6 ? roce::IpAddr(c.remote_ip6) : roce::IpAddr(c.remote_ip);
  }
  static void set_remote(Connection& c, const roce::IpAddr& ip) {
    c.ipv6 = ip.v6;
    if (ip.v6) c.remote_ip6 = ip.ip6; else c.remote_ip = ip.ip4;
  }
  void setup_queues(Connection& c);
  void delete_qp(Connection& c);    // PG332 ch.6 deletion sequence
  void program_rc_qp(Connection& c);
  uint32_t alloc_qpn(std::optional<uint32_t> want);
  uint32_t top_qpn() const;  // the highest QPN the layout enables
  uint32_t rand24() { return uint32_t(rng_() & 0xFFFFFF); }
  uint32_t rand32() { return uint32_t(rng_()); }
  void wr(uint32_t addr, uint32_t v) { bus_.mmio_write32(addr, v); }
  uint32_t rd(uint32_t addr) { return bus_.mmio_read32(addr); }
  uint64_t now() const { return bus_.now_ps(); }
  void sleep_ps(uint64_t ps) { bus_.sleep_until(now() + ps, HostBus::kNone); }
  // One CM try: up to cm_timeout_us, or until the answer's event.
  void cm_wait(HostBus::Wake w) { bus_.sleep_until(now() + uint64_t(cfg_.cm_timeout_us) * 1000000, w); }
  // Host memory through the bus (little-endian words).
  uint32_t mem_read32(uint64_t a) const;
  void mem_write32(uint64_t a, uint32_t v);
  uint64_t shadow_entry(uint32_t qpn) const { return *cfg_.shadow_sq_db + 4ull * (qpn - 1); }  // X-SHADOW-DB-1
  std::vector<uint8_t> mem_read(uint64_t a, uint64_t len) const;
  void mem_write(uint64_t a, const std::vector<uint8_t>& v) { bus_.mem_write(a, v.data(), v.size()); }
  void poll_rq_mirror(Connection& c);  // a bus without RX streams: arrivals from RQWPTRDBADDi
  uint32_t greg(uint32_t off) const { return cfg_.layout.global(off); }
  uint32_t qreg(uint32_t qpn, uint32_t off) const { return cfg_.layout.qp(qpn, off); }
  uint32_t mreg(uint32_t idx, uint32_t off) const { return cfg_.layout.mr(idx, off); }
  void write_mr_ctx(const Mr& mr);  // the host-table copy (mr_ctx_table)
  const Mr& program_mr(std::unique_ptr<Mr> mr);  // the MR table entry's registers
  [[noreturn]] void fail(const std::string& what) const;
  void set_state(Connection& c, VerbsState s);

  HostBus& bus_;
  DriverConfig cfg_;
  std::mt19937_64 rng_;
  std::map<uint32_t, roce::MacAddr> neigh_;
  std::map<roce::Ipv6Addr, roce::MacAddr> neigh6_;
  std::vector<std::unique_ptr<Mr>> mrs_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::vector<bool> qpn_used_;
  std::vector<bool> qpn_reserved_;  // reserve_qpn: set up outside the driver, not adopted yet
  bool initialised_ = false;
  // QP1
  static constexpr uint32_t kQp1Depth = 16, kQp1Elem = 512, kQp1SendSlot = 512;
  uint64_t errq_ = 0;
  uint32_t errq_n_ = 0, errq_rd_ = 0;  // incoming error-status queue and how far the driver has read it
  std::map<uint32_t, uint32_t> fatal_codes_;  // QPN -> the last fatal code read from the queue
  uint64_t qp1_sq_ = 0, qp1_rq_ = 0, qp1_cq_ = 0, qp1_cq_db_ = 0, qp1_rq_db_ = 0, qp1_send_buf_ = 0;
  uint64_t db_pool_ = 0;  // 8 bytes a QP (QP1 first): QP1's doorbells, every QP's with shared_line
  uint32_t qp1_sq_pi_ = 0, qp1_rq_ci_ = 0, qp1_psn_ = 0;
  Connection* listener_ = nullptr;
  std::deque<Connection*> listen_queue_;  // listen_batch: the listeners after listener_
  struct BatchEntry {
    Connection* c;
    bool replied;
    uint16_t rej_reason;
  };
  std::vector<BatchEntry> batch_;  // connect_batch's connections awaiting their ConnectReply
  std::vector<Connection*> batch_listeners_;  // listen_batch's connections not yet in RTS
  std::optional<uint16_t> reject_reason_;
  uint32_t rej_comm_id_ = 0;        // comm id of a connect_expect_reject in flight
  std::optional<uint16_t> rej_received_;
  uint16_t rej_reason_ = 0;          // the reason of the ConnectReject a connect() got
  Connection* disconnecting_ = nullptr;
  bool drep_ok_ = false;
  Connection* connecting_ = nullptr;
  bool rep_ok_ = false;
  uint64_t fatal_irqs_ = 0;
  uint16_t cm_port_ = 0;
};

}  // namespace ernic::host
