/* ernic_verbs.h: a verbs-shaped C API for a program that is the host of a
 * simulated ERNIC node (C99; the library is libernic_verbs, next to
 * libernic_bridge, built with the project).
 *
 * The names of functions, structs, fields and enum values are those of
 * rdma-core's libibverbs for what ERNIC has, so a verbs program ports by
 * changing how it opens the device (ernic_ibv_open) and where its buffers
 * come from (ernic_ibv_alloc_buf). It is not binary-compatible with
 * libibverbs and must not be linked into one program with it.
 *
 * Underneath is the simulator's own driver (model/host/driver.h) over the
 * bridge (ernic_bridge.h): PG332's bring-up, MR registration, QP
 * programming, CM over QP1, WQE posting and CQ polling are that driver's;
 * this layer only maps verbs onto it (model/bridge/README.md, "Verbs").
 * ernic_rdma_connect (below) is rdma_cm's client side in one call.
 *
 * Time is the bridge's lock-step simulated time: it advances only inside
 * calls that wait: ibv_get_cq_event, an ibv_poll_cq that finds nothing (a
 * polling CPU's time, at most 1 us), and the register accesses the driver
 * makes in ibv_modify_qp, ibv_destroy_qp, ..., and ernic_rdma_connect's
 * CM exchange. The NIC's interrupts are served (the driver's handler)
 * inside those waits.
 *
 * Errors: a call that fails returns NULL or an error value (as libibverbs:
 * ibv_post_* / ibv_modify_qp / ibv_req_notify_cq / ibv_dealloc_* /
 * ibv_destroy_* / ibv_dereg_mr return the errno value, ibv_poll_cq a
 * negative one, ibv_get_cq_event -1) and sets errno; ernic_ibv_last_error()
 * says why in words. Anything ERNIC cannot do (another QP type, an opcode
 * without a WQE opcode, more than one SGE, an attribute the hardware has no
 * register for, a value other than the one the driver programs, a message
 * length PG332 does not support) is EINVAL, never ignored. A pointer the
 * library did not hand out, or one already destroyed, is EINVAL too
 * (objects are looked up, never trusted; a destroyed object's address is
 * not reused before ibv_close_device, so a stale handle stays invalid).
 * A failure of the session itself (the simulator gone) is EIO; every later
 * call fails the same way. An error the driver reports from its interrupt
 * handler fails the next call that reaches the driver (post, poll, event
 * wait, modify, ...) with EIO and the driver's message, once per error.
 *
 * One thread at a time: the library has no locks.
 */
#ifndef ERNIC_VERBS_H
#define ERNIC_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include "ernic_bridge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ objects */

struct ibv_context; /* opaque: one bridge session, its driver, its objects */

struct ibv_pd {
  struct ibv_context* context;
  uint32_t handle; /* the protection domain number the driver programs (PDPDNUM, PDi): 1, 2, ... */
};

struct ibv_mr {
  struct ibv_context* context;
  struct ibv_pd* pd;
  void* addr;      /* as registered; with remote access also the MR's VA in the NIC: a peer's
                    * RDMA WRITE / READ of byte k names addr + k */
  size_t length;
  uint32_t handle;
  uint32_t lkey;   /* = rkey for an MR with remote access; a local-only MR's own key (bit 31 set) */
  uint32_t rkey;   /* the driver's R_Key: MR index << 8 | key byte; 0 for a local-only MR */
};

struct ibv_comp_channel {
  struct ibv_context* context;
  int fd;          /* always -1: events come from ibv_get_cq_event, which runs the simulation */
  int refcnt;      /* CQs using it */
};

struct ibv_cq {
  struct ibv_context* context;
  struct ibv_comp_channel* channel;
  void* cq_context;
  uint32_t handle;
  int cqe;         /* capacity as created */
  uint32_t comp_events_completed;
  uint32_t async_events_completed; /* always 0: no async events */
};

struct ibv_srq; /* not supported (ERNIC has no SRQ): must be NULL */
struct ibv_ah;  /* not supported (RC only) */

enum ibv_qp_type {
  IBV_QPT_RC = 2,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QPT_RAW_PACKET = 8,
  IBV_QPT_XRC_SEND = 9,
  IBV_QPT_XRC_RECV,
  IBV_QPT_DRIVER = 0xff
};

enum ibv_qp_state {
  IBV_QPS_RESET,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPS_SQE,
  IBV_QPS_ERR,
  IBV_QPS_UNKNOWN
};

enum ibv_mtu { IBV_MTU_256 = 1, IBV_MTU_512 = 2, IBV_MTU_1024 = 3, IBV_MTU_2048 = 4, IBV_MTU_4096 = 5 };

enum ibv_mig_state { IBV_MIG_MIGRATED, IBV_MIG_REARM, IBV_MIG_ARMED };

struct ibv_qp_cap {
  uint32_t max_send_wr;     /* 1..65534: the SQ has max_send_wr + 1 WQE slots */
  uint32_t max_recv_wr;     /* 1..65535: the RQ's elements (at least 16 are made) */
  uint32_t max_send_sge;    /* 0 or 1 (a WQE has one buffer) */
  uint32_t max_recv_sge;    /* 0 or 1 */
  uint32_t max_inline_data; /* 0..16 (SENDs of up to 16 bytes travel in the WQE) */
};

struct ibv_qp_init_attr {
  void* qp_context;
  struct ibv_cq* send_cq;
  struct ibv_cq* recv_cq;
  struct ibv_srq* srq;      /* must be NULL */
  struct ibv_qp_cap cap;
  enum ibv_qp_type qp_type; /* IBV_QPT_RC only */
  int sq_sig_all;
};

struct ibv_qp {
  struct ibv_context* context;
  void* qp_context;
  struct ibv_pd* pd;
  struct ibv_cq* send_cq;
  struct ibv_cq* recv_cq;
  struct ibv_srq* srq;
  uint32_t handle;
  uint32_t qp_num;          /* the QPN, chosen at creation (the lowest free one: 2, 3, ...) */
  enum ibv_qp_state state;
  enum ibv_qp_type qp_type;
  uint32_t events_completed;
};

union ibv_gid {
  uint8_t raw[16];
  struct {
    uint64_t subnet_prefix; /* network byte order */
    uint64_t interface_id;  /* network byte order */
  } global;
};

struct ibv_global_route {
  union ibv_gid dgid;       /* the peer's IPv6 address, or IPv4 as ::ffff:a.b.c.d */
  uint32_t flow_label;      /* 0 */
  uint8_t sgid_index;       /* 0 */
  uint8_t hop_limit;        /* 64 (the TTL the driver programs) or 0 for it */
  uint8_t traffic_class;    /* 0 */
};

struct ibv_ah_attr {
  struct ibv_global_route grh;
  uint16_t dlid;            /* 0 (RoCE) */
  uint8_t sl;               /* 0 */
  uint8_t src_path_bits;    /* 0 */
  uint8_t static_rate;      /* 0 */
  uint8_t is_global;        /* 1 (RoCEv2 needs the GRH) */
  uint8_t port_num;         /* 0 or 1 */
};

enum ibv_qp_attr_mask {
  IBV_QP_STATE = 1 << 0,
  IBV_QP_CUR_STATE = 1 << 1,
  IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
  IBV_QP_ACCESS_FLAGS = 1 << 3,
  IBV_QP_PKEY_INDEX = 1 << 4,
  IBV_QP_PORT = 1 << 5,
  IBV_QP_QKEY = 1 << 6,
  IBV_QP_AV = 1 << 7,
  IBV_QP_PATH_MTU = 1 << 8,
  IBV_QP_TIMEOUT = 1 << 9,
  IBV_QP_RETRY_CNT = 1 << 10,
  IBV_QP_RNR_RETRY = 1 << 11,
  IBV_QP_RQ_PSN = 1 << 12,
  IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
  IBV_QP_ALT_PATH = 1 << 14,
  IBV_QP_MIN_RNR_TIMER = 1 << 15,
  IBV_QP_SQ_PSN = 1 << 16,
  IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
  IBV_QP_PATH_MIG_STATE = 1 << 18,
  IBV_QP_CAP = 1 << 19,
  IBV_QP_DEST_QPN = 1 << 20,
  IBV_QP_RATE_LIMIT = 1 << 25
};

struct ibv_qp_attr {
  enum ibv_qp_state qp_state;
  enum ibv_qp_state cur_qp_state;
  enum ibv_mtu path_mtu;
  enum ibv_mig_state path_mig_state;
  uint32_t qkey;
  uint32_t rq_psn;
  uint32_t sq_psn;
  uint32_t dest_qp_num;
  unsigned int qp_access_flags;
  struct ibv_qp_cap cap;
  struct ibv_ah_attr ah_attr;
  struct ibv_ah_attr alt_ah_attr;
  uint16_t pkey_index;
  uint16_t alt_pkey_index;
  uint8_t en_sqd_async_notify;
  uint8_t sq_draining;
  uint8_t max_rd_atomic;
  uint8_t max_dest_rd_atomic;
  uint8_t min_rnr_timer;
  uint8_t port_num;
  uint8_t timeout;
  uint8_t retry_cnt;
  uint8_t rnr_retry;
  uint8_t alt_port_num;
  uint8_t alt_timeout;
  uint32_t rate_limit;
};

enum ibv_access_flags {
  IBV_ACCESS_LOCAL_WRITE = 1,
  IBV_ACCESS_REMOTE_WRITE = (1 << 1),
  IBV_ACCESS_REMOTE_READ = (1 << 2),
  IBV_ACCESS_REMOTE_ATOMIC = (1 << 3),
  IBV_ACCESS_MW_BIND = (1 << 4),
  IBV_ACCESS_ZERO_BASED = (1 << 5),
  IBV_ACCESS_ON_DEMAND = (1 << 6),
  IBV_ACCESS_HUGETLB = (1 << 7),
  IBV_ACCESS_RELAXED_ORDERING = (1 << 20)
};

/* ------------------------------------------------------------ work requests */

enum ibv_wr_opcode {
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
  IBV_WR_RDMA_READ,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_LOCAL_INV,
  IBV_WR_BIND_MW,
  IBV_WR_SEND_WITH_INV,
  IBV_WR_TSO,
  IBV_WR_DRIVER1
};

enum ibv_send_flags {
  IBV_SEND_FENCE = 1 << 0,
  IBV_SEND_SIGNALED = 1 << 1,
  IBV_SEND_SOLICITED = 1 << 2,
  IBV_SEND_INLINE = 1 << 3,
  IBV_SEND_IP_CSUM = 1 << 4
};

struct ibv_sge {
  uint64_t addr;   /* the program's pointer, inside the MR of lkey */
  uint32_t length;
  uint32_t lkey;
};

/* imm_data and invalidate_rkey share storage in libibverbs (an anonymous
 * union, which C99 lacks); here they are two fields: set the one the
 * opcode uses. */
struct ibv_send_wr {
  uint64_t wr_id;
  struct ibv_send_wr* next;
  struct ibv_sge* sg_list;
  int num_sge;              /* exactly 1 */
  enum ibv_wr_opcode opcode;
  unsigned int send_flags;
  uint32_t imm_data;        /* network byte order (htonl), *_WITH_IMM */
  uint32_t invalidate_rkey; /* IBV_WR_SEND_WITH_INV */
  union {
    struct {
      uint64_t remote_addr;
      uint32_t rkey;
    } rdma;
    struct {
      uint64_t remote_addr;
      uint64_t compare_add;
      uint64_t swap;
      uint32_t rkey;
    } atomic;
    struct {
      struct ibv_ah* ah;
      uint32_t remote_qpn;
      uint32_t remote_qkey;
    } ud;
  } wr;
};

struct ibv_recv_wr {
  uint64_t wr_id;
  struct ibv_recv_wr* next;
  struct ibv_sge* sg_list;
  int num_sge;              /* 0 or 1 */
};

/* ------------------------------------------------------------ completions */

enum ibv_wc_status {
  IBV_WC_SUCCESS,
  IBV_WC_LOC_LEN_ERR,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_LOC_EEC_OP_ERR,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WC_MW_BIND_ERR,
  IBV_WC_BAD_RESP_ERR,
  IBV_WC_LOC_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WC_LOC_RDD_VIOL_ERR,
  IBV_WC_REM_INV_RD_REQ_ERR,
  IBV_WC_REM_ABORT_ERR,
  IBV_WC_INV_EECN_ERR,
  IBV_WC_INV_EEC_STATE_ERR,
  IBV_WC_FATAL_ERR,
  IBV_WC_RESP_TIMEOUT_ERR,
  IBV_WC_GENERAL_ERR,
  IBV_WC_TM_ERR,
  IBV_WC_TM_RNDV_INCOMPLETE
};

enum ibv_wc_opcode {
  IBV_WC_SEND,
  IBV_WC_RDMA_WRITE,
  IBV_WC_RDMA_READ,
  IBV_WC_COMP_SWAP,
  IBV_WC_FETCH_ADD,
  IBV_WC_BIND_MW,
  IBV_WC_LOCAL_INV,
  IBV_WC_TSO,
  IBV_WC_RECV = 1 << 7,
  IBV_WC_RECV_RDMA_WITH_IMM
};

enum ibv_wc_flags {
  IBV_WC_GRH = 1 << 0,
  IBV_WC_WITH_IMM = 1 << 1,
  IBV_WC_IP_CSUM_OK = 1 << 2,
  IBV_WC_WITH_INV = 1 << 3
};

/* As libibverbs' (imm_data and invalidated_rkey: two fields, see above). */
struct ibv_wc {
  uint64_t wr_id;
  enum ibv_wc_status status;
  enum ibv_wc_opcode opcode;
  uint32_t vendor_err;      /* the WR that completed in error: PG332's fatal code of the QP (0 if none was found) */
  uint32_t byte_len;        /* send side: the WR's length; receive side: see ibv_post_recv */
  uint32_t imm_data;        /* never set: see ibv_post_recv */
  uint32_t invalidated_rkey;
  uint32_t qp_num;
  uint32_t src_qp;          /* the peer's QPN (RC: the connected QP) */
  unsigned int wc_flags;    /* 0: no GRH is delivered, no immediate is visible */
  uint16_t pkey_index;
  uint16_t slid;
  uint8_t sl;
  uint8_t dlid_path_bits;
};

/* ------------------------------------------------------------ the device */

/* Opens the simulated NIC: connects to the simulator (addr: "unix:PATH" or
 * "tcp:HOST:PORT"; NULL takes ERNIC_BRIDGE, set by the scenario's program
 * step), builds the driver from the node's configuration in the environment
 * the program step gives (model/host/driver_env.h: ERNIC_MAC, ERNIC_IP,
 * ERNIC_IP6, ERNIC_NUM_QP, ERNIC_CORE_MHZ, ERNIC_LAYOUT, ERNIC_SEED, ...:
 * the built-in host's own) and runs PG332's bring-up (error buffers,
 * MAC/IP, interrupts, enable, QP1). A node with `mr_cache: cam` is refused
 * (its MR context table is at a bus address the library cannot place). With ERNIC_PEER_IP and ERNIC_PEER_MAC set (a
 * scenario's connect step gives them) the peer is in the neighbour table.
 * NULL on failure: errno, and ernic_ibv_open_error() says why. */
struct ibv_context* ernic_ibv_open(const char* addr);
const char* ernic_ibv_open_error(void);

/* Ends the session (TERMINATE) and frees every object of the context. 0, or
 * EIO when the session had failed. */
int ibv_close_device(struct ibv_context* context);

/* Why the context's last failed call failed ("" if none has). */
const char* ernic_ibv_last_error(const struct ibv_context* context);

/* The bridge session underneath (ernic_now_ps, ernic_get_stats). */
ernic_bridge* ernic_ibv_bridge(struct ibv_context* context);

/* DMA-able memory for buffers (zeroed, aligned to `align`, a power of two,
 * 0 = 4096; never freed before ibv_close_device). The NIC reaches only this
 * memory: ibv_reg_mr, SGEs and inline data must lie in it. Its addresses
 * are the same in every run (ernic_dma_alloc), so MR VAs are too. NULL +
 * errno on failure (ENOMEM: ERNIC_BRIDGE_MEM_MIB is full). */
void* ernic_ibv_alloc_buf(struct ibv_context* context, size_t length, size_t align);

/* The neighbour table (what ARP or neighbour discovery would give): the
 * peer's MAC for a GID (IPv4-mapped or IPv6). ibv_modify_qp to RTR needs
 * the destination's entry. 0 or EINVAL. */
int ernic_ibv_add_neighbour(struct ibv_context* context, const union ibv_gid* gid, const uint8_t mac[6]);

/* The longest ibv_get_cq_event waits, in simulated time (default 100 ms);
 * it then fails with ETIMEDOUT. 0 restores the default. */
void ernic_ibv_set_event_timeout(struct ibv_context* context, uint64_t timeout_ns);

/* ------------------------------------------------------------ PD, MR */

/* A protection domain: its handle is the PD number the driver programs
 * into its MRs (PDPDNUM) and QPs (PDi). NULL + errno on failure. */
struct ibv_pd* ibv_alloc_pd(struct ibv_context* context);
/* 0, or EBUSY while an MR or a QP uses it, EINVAL for an unknown pd. */
int ibv_dealloc_pd(struct ibv_pd* pd);

/* Registers [addr, addr+length) of DMA memory: a range inside one buffer
 * of ernic_ibv_alloc_buf (not the driver's memory, not across two).
 * access: IBV_ACCESS_LOCAL_WRITE, _REMOTE_WRITE (needs LOCAL_WRITE),
 * _REMOTE_READ; any other flag is EINVAL.
 * - With remote access the driver registers an MR in the NIC's table over
 *   that memory (Driver::register_mr_at; PG332: PD, VA, PA, length,
 *   access, R_Key = index << 8 | key byte) with VA = (uintptr_t)addr, as
 *   rdma-core does: a peer addresses the MR's byte k at mr->addr + k.
 *   lkey = rkey.
 * - Without (LOCAL_WRITE alone, or 0) the NIC has nothing to check: its
 *   WQEs carry bus addresses, so a local MR is this library's record only
 *   (any range of DMA memory; rkey 0). The library checks SGEs against it
 *   (and LOCAL_WRITE for RDMA READ destinations and receive buffers).
 * NULL + errno: EINVAL (flags, range, not DMA memory), ENOMEM (the NIC's
 * 256 MR entries), EIO. */
struct ibv_mr* ibv_reg_mr(struct ibv_pd* pd, void* addr, size_t length, int access);
/* The VA a peer puts in its RDMA WRITE / READ for the MR's first byte:
 * (uintptr_t)mr->addr for an MR with remote access (kept as an alias), 0
 * for a local MR. */
uint64_t ernic_ibv_mr_remote_addr(const struct ibv_mr* mr);
/* An MR with remote access: the driver's deregistration (ACCESSDESC =
 * 0xF); its index is not reused. EBUSY while a posted WR uses it. */
int ibv_dereg_mr(struct ibv_mr* mr);

/* ------------------------------------------------------------ CQ, events */

/* A completion channel: CQs created with it give their events to
 * ibv_get_cq_event on it (no file descriptor: fd is -1). */
struct ibv_comp_channel* ibv_create_comp_channel(struct ibv_context* context);
/* 0, or EBUSY while a CQ uses it. */
int ibv_destroy_comp_channel(struct ibv_comp_channel* channel);

/* A software CQ (ERNIC's CQs are per QP and hold send completions only):
 * it collects the completions of the QPs that name it, send side from
 * their hardware CQs, receive side from their RQs, whenever a call polls
 * or waits. cqe: 1..65536; comp_vector: 0. A CQ that then holds more than
 * cqe completions is overrun (rdma-core: IBV_EVENT_CQ_ERR): it is in error
 * and every ibv_poll_cq on it fails with EOVERFLOW. */
struct ibv_cq* ibv_create_cq(struct ibv_context* context, int cqe, void* cq_context,
                             struct ibv_comp_channel* channel, int comp_vector);
/* EBUSY while a QP uses it or events are unacknowledged. */
int ibv_destroy_cq(struct ibv_cq* cq);

/* Arms the CQ: its next completion gives one event on its channel.
 * solicited_only must be 0 (ERNIC reports no solicited bit). A CQ armed
 * while it holds completions not yet polled gives its event at once. */
int ibv_req_notify_cq(struct ibv_cq* cq, int solicited_only);

/* Waits for an event of an armed CQ of the channel: runs the simulation
 * (waking on the NIC's interrupts and DMA writes, deterministically) until
 * one has a completion, up to the event timeout. Returns 0 with *cq and
 * *cq_context, the CQ disarmed; -1 + errno (ETIMEDOUT, EINVAL: no CQ of the
 * channel is armed, EIO). */
int ibv_get_cq_event(struct ibv_comp_channel* channel, struct ibv_cq** cq, void** cq_context);
/* Acknowledges nevents events of cq (at most those delivered); a CQ with
 * unacknowledged events cannot be destroyed. */
void ibv_ack_cq_events(struct ibv_cq* cq, unsigned int nevents);

/* Up to num_entries completions, oldest first (per QP in order; across QPs
 * in the order the library collected them). Returns how many, or a
 * negative errno (-EOVERFLOW: the CQ was overrun, see ibv_create_cq). Send side: one per signaled WR (all with sq_sig_all),
 * and every WR that completed in error: ERNIC's CQE says only "error",
 * so the first such WR of a QP gets the status of the QP's PG332 fatal
 * code (vendor_err = the code): 0x06 retries exhausted
 * IBV_WC_RETRY_EXC_ERR; 0x09, 0x0D RNR retries exhausted
 * IBV_WC_RNR_RETRY_EXC_ERR; 0x0A a NAK received: IBV_WC_REM_ACCESS_ERR,
 * or by the NAK's syndrome (STATQPi) IBV_WC_REM_INV_REQ_ERR /
 * IBV_WC_REM_OP_ERR; 0x15, 0x16, 0x17 a peer's request failed this QP's
 * R_Key / access / bounds check: IBV_WC_REM_ACCESS_ERR; any other code
 * IBV_WC_GENERAL_ERR. The QP is then in ERR and its other WRs complete
 * with IBV_WC_WR_FLUSH_ERR. When it finds nothing, the
 * simulation runs on, as the NIC does while a CPU polls: until the NIC's
 * next DMA write into the program's memory or its interrupt, at most 1 us
 * of simulated time; then it looks once more. So a busy-polling loop
 * advances simulated time (lock-step: nothing runs while the program does
 * not wait), and its completions are seen when the NIC writes them. */
int ibv_poll_cq(struct ibv_cq* cq, int num_entries, struct ibv_wc* wc);

/* ------------------------------------------------------------ QP */

/* An RC QP (any other type: EINVAL). Its QPN is reserved now; the NIC's QP
 * is programmed when it reaches RTS (the driver's prepare + establish: ERNIC
 * enables a QP's both directions at once). The RQ element size is
 * ERNIC_RQ_ELEMENT_BYTES (default 4096): the largest SEND it can take. */
struct ibv_qp* ibv_create_qp(struct ibv_pd* pd, struct ibv_qp_init_attr* qp_init_attr);
/* A programmed QP is taken down with PG332's QP deletion (the driver's
 * destroy_qp: once its SQ and outstanding queue are empty and every WQE
 * has completed, or at once when it is fatal, it is disabled and its
 * pointers zeroed): EBUSY if it does not drain (the driver's CM timeout).
 * Its QPN is free again. No CM DisconnectRequest is sent. */
int ibv_destroy_qp(struct ibv_qp* qp);

/* RESET -> INIT -> RTR -> RTS, INIT -> INIT, RTS -> RTS (no attribute but
 * the state), any -> RESET. Attributes (mask bits), each checked:
 *   INIT: IBV_QP_PKEY_INDEX (0), IBV_QP_PORT (1), IBV_QP_ACCESS_FLAGS
 *         (REMOTE_WRITE | REMOTE_READ, LOCAL_WRITE optional: ERNIC's QP
 *         admits both, the MR's access decides)
 *   RTR:  required IBV_QP_AV (is_global, dgid), IBV_QP_PATH_MTU (256..4096),
 *         IBV_QP_DEST_QPN, IBV_QP_RQ_PSN; optional IBV_QP_MIN_RNR_TIMER
 *         (0..31, default 31: the RNR timer code of the RNR NAKs the QP
 *         sends, TIMEOUTCONFi[20:16]), IBV_QP_MAX_DEST_RD_ATOMIC (16)
 *   RTS:  required IBV_QP_SQ_PSN; optional IBV_QP_TIMEOUT (0..63, default
 *         14: the local ACK timeout 4.096 us x 2^timeout, 0 none,
 *         TIMEOUTCONFi[5:0]), IBV_QP_RETRY_CNT (0..7, default 3,
 *         TIMEOUTCONFi[10:8]), IBV_QP_RNR_RETRY (0..7, default 3, 7 = for
 *         ever, TIMEOUTCONFi[13:11]), IBV_QP_MAX_QP_RD_ATOMIC (16: ERNIC's
 *         fixed limit of outstanding requests per QP).
 *         A value wider than its TIMEOUTCONFi field is EINVAL. The
 *         defaults are the driver's (QpParams).
 * Anything else (IBV_QPS_ERR, SQD, alternate paths, rate limits, a QKEY,
 * another value) is EINVAL. The transition to RTS programs the NIC; to
 * RESET deletes the NIC's QP (as ibv_destroy_qp), which the next RTS
 * programs and enables again. */
int ibv_modify_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask);

/* Fills qp_state, cur_qp_state, path_mtu, dest_qp_num, rq_psn, sq_psn,
 * qp_access_flags, cap, ah_attr (dgid, is_global, hop_limit, port_num),
 * timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic,
 * max_dest_rd_atomic, pkey_index, port_num, whatever attr_mask asks; and
 * init_attr as created. */
int ibv_query_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask, struct ibv_qp_init_attr* init_attr);

/* Posts a chain in RTS: IBV_WR_RDMA_WRITE, _WITH_IMM, IBV_WR_SEND,
 * _WITH_IMM, _WITH_INV, IBV_WR_RDMA_READ, one SGE each (ERNIC's WQE has
 * one buffer), send_flags IBV_SEND_SIGNALED and IBV_SEND_INLINE (SENDs of
 * up to max_inline_data bytes; the payload travels in the WQE). Every WR is
 * checked before it is posted; at the first bad one (EINVAL: opcode,
 * flags, num_sge, a NULL sg_list, an lkey not of the QP's PD, a range
 * outside its MR, a length PG332 does not support: a zero-length SEND,
 * inline too, an RDMA READ of 4 bytes or less, a message over 8 MiB,
 * model/regs/pg332_limits.h;
 * ENOMEM: more than max_send_wr outstanding) *bad_wr points at it, the WRs
 * before it are posted (one doorbell) and none after it. The 64-bit wr_id
 * is kept by the library; the WQE carries a 16-bit sequence number (WRID)
 * that the CQE returns. */
int ibv_post_send(struct ibv_qp* qp, struct ibv_send_wr* wr, struct ibv_send_wr** bad_wr);

/* Receive WRs (INIT, RTR or RTS), at most max_recv_wr waiting.
 * ERNIC's RQ is a ring of fixed elements (ERNIC_RQ_ELEMENT_BYTES each) in
 * host memory that the hardware fills and software hands back (RQCIi):
 * there is no per-receive buffer to post. The library keeps the WRs and,
 * when a SEND has arrived in an element, copies the element into the
 * oldest WR's buffer and hands the element back. The RQ stores no length
 * and no opcode (PG332), and immediate data goes only to the ieth_immdt
 * stream a program does not see: a receive completion is IBV_WC_RECV with
 * byte_len = the bytes copied, min(element size, the SGE's length), not the
 * message's length, and no IBV_WC_WITH_IMM / _WITH_INV; an
 * RDMA WRITE with immediate takes no RQ element and gives no completion.
 * A SEND waits in its element until a WR is posted for it (the NIC answers
 * RNR when every element is full). */
int ibv_post_recv(struct ibv_qp* qp, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr);

/* ------------------------------------------------------------ CM */

/* The client side of rdma_cm's connection setup (rdma_create_qp +
 * rdma_connect) in one call: IBTA CM over QP1, run by the driver's own
 * CM code (Driver::connect, as the simulator's built-in host runs it).
 *
 * qp_init_attr is ibv_create_qp's (RC, its CQs, caps). The call creates
 * the QP, sends a ConnectRequest to the server (rdma_cm's ServiceID for
 * RDMA_PS_TCP and `port`, its IP header and, with `advertise`, the MR's
 * VA, R_Key and length in the private data), waits for the ConnectReply
 * (3 tries of the driver's CM timeout, ERNIC_CM_TIMEOUT_US), programs the
 * QP towards the server's QPN and PSN and sends ReadyToUse. It returns the
 * QP in RTS (as after ibv_modify_qp INIT, RTR, RTS; ibv_query_qp tells
 * dest_qp_num, rq_psn, sq_psn) and fills *peer from the ConnectReply:
 * the server's QPN and PSN and the MR it advertised in its private data
 * (all 0 when it advertised none). The server's MAC must be in the
 * neighbour table (ERNIC_PEER_IP / ERNIC_PEER_MAC at ernic_ibv_open, or
 * ernic_ibv_add_neighbour). The QP's TIMEOUTCONFi values are the driver's
 * defaults (ibv_modify_qp RTS's). ibv_destroy_qp deletes it (no
 * DisconnectRequest is sent).
 *
 * NULL + errno on failure: EINVAL (attributes, an address that is no
 * IPv4 / IPv6 address or has no neighbour entry, path_mtu, sq_psn, an
 * `advertise` MR that is not a remote MR of pd), ECONNREFUSED (a
 * ConnectReject came), ETIMEDOUT (no ConnectReply), ENOMEM (no free QPN),
 * EIO (the session). ernic_ibv_last_error says why. */
#define ERNIC_RDMA_PSN_AUTO 0xFFFFFFFFu

struct ernic_rdma_conn_param {
  const char* server_ip;    /* the server's IPv4 ("10.0.0.2") or IPv6 address */
  uint16_t port;            /* rdma_cm port: ServiceID 0x0000000001060000 | port */
  enum ibv_mtu path_mtu;    /* IBV_MTU_256 .. IBV_MTU_4096: the QP's PMTU, and the ConnectRequest's */
  uint32_t sq_psn;          /* the QP's first PSN, < 2^24; ERNIC_RDMA_PSN_AUTO: drawn by the driver (ERNIC_SEED) */
  struct ibv_mr* advertise; /* NULL, or an MR of pd with remote access, offered to the server */
};

struct ernic_rdma_peer {
  uint32_t qp_num;          /* the server's QPN (ConnectReply LocalQPN) */
  uint32_t psn;             /* its first PSN (StartPSN): the QP's rq_psn */
  uint64_t remote_addr;     /* the advertised MR: the VA for RDMA WRITE / READ */
  uint32_t rkey;            /* its R_Key */
  uint64_t length;          /* its length in bytes */
};

struct ibv_qp* ernic_rdma_connect(struct ibv_pd* pd, struct ibv_qp_init_attr* qp_init_attr,
                                  const struct ernic_rdma_conn_param* param, struct ernic_rdma_peer* peer);

/* A status in words ("unknown" for values outside the enum). */
const char* ibv_wc_status_str(enum ibv_wc_status status);

#ifdef __cplusplus
}
#endif
#endif /* ERNIC_VERBS_H */
