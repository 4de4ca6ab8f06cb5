// model/scenario: scenario files.
//
// A scenario is a YAML file (language documented in scenarios/README.md) that
// names a topology (nodes, clocks, link) and a list of steps the runner
// executes in order. load_scenario() parses a file strictly: every unknown
// key, wrong type, out-of-range value, missing field, dangling reference and
// duplicate name is a ScenarioError carrying file, 1-based line and column and
// the full key path (for example `steps[3].post.wqes[0].opcode`).
//
// The parser checks everything that can be known before simulation: names
// (nodes, MRs, connections) are resolved in step order, so a step may only use
// an MR or connection that an earlier step created, and a node only after an
// earlier `init` step. Bounds of posted WQEs against MRs are NOT checked here:
// the NIC checks them at run time, and scenarios may provoke those errors on
// purpose. fill/check_memory ranges (host-side test operations) are checked.
//
// Plain C++17; no SystemC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "model/regs/wqe.h"
#include "model/roce/types.h"

namespace ernic {

// Where something was written: file (display name), 1-based line and column.
// line == 0 means "no position" (e.g. the file could not be read).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column" (or "file" without position)
};

// A scenario file error. what() is "FILE:LINE:COLUMN: key 'KEY': message";
// the "key '...': " part is left out when key() is empty (YAML syntax errors,
// unreadable files), and ":LINE:COLUMN" when line() is 0.
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, int line, int column, std::string key, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }
  SourceLoc loc() const { return SourceLoc{file_, line_, column_}; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string message_;
};

// ---------------------------------------------------------------- enums ----

enum class Pattern { random, zero, incrementing, constant };
enum class Access { r, w, rw };  // MR access rights (remote read / write)
using WqeOpcode = pg332::WqeOpcode;  // PG332 Table 2-1 (model/regs/wqe.h)
enum class Doorbell { once, each };  // one SQ doorbell for the list, or one per WQE

const char* to_string(Pattern p);
const char* to_string(Access a);
inline const char* to_string(WqeOpcode o) { return pg332::wqe_opcode_name(o); }
const char* to_string(Doorbell d);

// Deterministic test data, shared by `fill` and `check_memory`. Writes the
// bytes at MR offsets [offset_in_mr, offset_in_mr + len) of the pattern:
//   zero:         0
//   constant:     value
//   incrementing: (offset_in_mr + i) & 0xFF
//   random:       byte k of the MR is byte k of the stream produced by
//                 std::mt19937_64(seed), each 64-bit draw giving 8 bytes,
//                 least significant first. (No std::*_distribution, so the
//                 bytes are the same with every standard library.)
// Because bytes depend only on their MR offset, any sub-range of a fill can
// be regenerated. `seed` is ignored except for random, `value` except for
// constant.
void fill_pattern(uint8_t* dst, size_t len, Pattern p, uint64_t seed, uint8_t value,
                  uint64_t offset_in_mr);

// ------------------------------------------------------------- topology ----

struct Limits {
  uint64_t sim_time_us = 10000;  // hard cap on simulated time
  uint64_t watchdog_us = 200;    // no progress for this long -> exit 3
};

struct Clocks {
  double core_mhz = 200.0;
  double cmac_mhz = 322.265625;
};

struct LinkConfig {
  uint32_t rate_gbps = 100;  // only 100 for now
  uint64_t delay_ns = 100;
};

struct PcieConfig {          // PCIe link behind the DMA masters
  uint32_t gen = 3;          // 3 (8 GT/s) or 4 (16 GT/s), 128b/130b
  uint32_t lanes = 16;       // 1, 2, 4, 8, 16
  uint32_t mps = 256;        // max payload size: 128, 256, 512, 1024
  uint32_t mrrs = 512;       // max read request size: 128 .. 4096, power of two
  uint32_t read_latency_ns = 500;  // read request to first completion
  uint32_t rcb = 64;               // read-completion boundary: 64 or 128
  uint32_t mmio_write_latency_ns = 250;  // host MMIO write (doorbell) to the NIC; reads pay it both ways
  uint32_t outstanding = 8;        // DMA bursts in flight per AXI4 master and direction
};

// `datapath`: rtl (default), model, or user:<name> (a Verilated top built
// by CMake's ernic_user_datapath(), rtl/SEAM.md "Users' own RTL").
enum class Datapath { rtl, model, user };
// What a PG332 compliance report does: listed in the summary (report), or
// also a failure of the run (fail).
enum class ComplianceMode { report, fail };
enum class RegLayout { v31, v4x };
const char* to_string(Datapath d);  // "rtl", "model", "user"
const char* to_string(RegLayout l);

// `handshake_random` (top level, or per node where it replaces the top
// level's): randomised VALID/READY timing on the seams (model/monitor/
// handshake.h). `false` (per node): none on that node.
struct HandshakeRandom {
  bool enabled = true;
  uint64_t seed = 1;        // default: the scenario's seed
  uint32_t ready_pct = 70;  // 1..100: edges a randomised READY is high
  uint32_t valid_pct = 80;  // 1..100: edges a pending VALID is raised
};

struct NodeConfig {
  std::string name;
  roce::MacAddr mac;
  roce::Ipv4Addr ip;
  bool has_ip = true;        // `ip` given (a node may have only an IPv6 address)
  std::optional<roce::Ipv6Addr> ip6;  // `ipv6` (IPv6XADD1..4)
  uint32_t num_qp = 8;       // C_NUM_QP, 8..256
  uint32_t memory_mib = 64;  // host memory, 1..4096 MiB
  // Responder ACK generation: XRNICCONF[4:3] as the driver programs it
  // (0 AckReq or timeout, 1 timeout only, 2 AckReq only) and the model's
  // coalescing parameters (A-ERNIC-20).
  uint32_t ack_mode = 0;
  uint32_t ack_coalesce_packets = 0;  // 0: no count limit
  uint64_t ack_timeout_ns = 10000;    // 0: no timeout ACK
  // MR lookup (model/mr): PG332's register table (false), or the named
  // extension `mr_cache: cam`, a CAM of mr_cache_entries MR contexts in
  // front of a context table in host memory.
  bool mr_cache_cam = false;
  uint32_t mr_cache_entries = 16;     // 1..256
  // `rx`: the RoCE RX buffer between the CMAC and the RX packet handler
  // (A-ERNIC-26) and a cap on the handler's drain rate (0: none).
  uint32_t rx_buffer_bytes = 65536;
  double rx_handler_gbps = 0;
  // `test_tx_underflow` (a test hook, not hardware): tvalid drops for
  // `cycles` CMAC cycles after beat `after_beat` of the first multi-beat
  // TX frame at or after TX frame index `frame`.
  struct TxBubble { uint64_t frame = 0; uint32_t after_beat = 0, cycles = 1; };
  std::optional<TxBubble> test_tx_underflow;
  // `test_datapath_corrupt` (a test hook, not hardware): the rtl datapath's
  // output is altered before its scoreboard compares it with the reference
  // models (model/datapath/sc/datapath.h, DatapathCorrupt): stream tx (byte
  // `offset` of TX frame `frame`), rx_desc (bit `offset` of RX descriptor
  // `frame`), rx_payload or bypass (byte `offset`); `xor` = bits flipped.
  struct DatapathCorrupt { std::string stream; uint64_t frame = 0; uint32_t offset = 0; uint32_t xor_mask = 1; };
  std::optional<DatapathCorrupt> test_datapath_corrupt;
  // `qp_setup_fsm` (rtl/qp_setup, seed 001's QP-setup offload): the block
  // in this node, and the geometry the driver gives it at `init`.
  struct QpSetupFsm {
    uint32_t pool = 4;                   // N slots, 1..16 (the RTL's POOL_MAX)
    uint32_t link_timeout_cycles = 2000; // T, core cycles CMAC_INIT waits for the link
    uint64_t slot_bytes = 0;             // 0: what the queues need, rounded up to 4 KiB
    uint32_t sq_depth = 64, rq_depth = 16, rq_elem_bytes = 4096, pmtu = 4096;
  };
  std::optional<QpSetupFsm> qp_setup_fsm;
  // Not a scenario key: set by `ernic-sim run --plant-bug ack_coalescing`
  // (test only; ErnicConfig::test_bug_ack_coalescing).
  bool test_bug_ack_coalescing = false;
  std::optional<HandshakeRandom> handshake_random;  // the node's own `handshake_random`
  SourceLoc loc;             // the node's key in `nodes`
};

// ---------------------------------------------------------------- steps ----

struct InitStep {
  SourceLoc loc;
  std::vector<std::string> nodes;
};

struct RegisterMrStep {
  SourceLoc loc;
  std::string node;
  std::string name;  // unique per node
  uint64_t length = 0;
  Access access = Access::rw;
  uint32_t pd = 1;
};

struct FillStep {
  SourceLoc loc;
  std::string node;
  std::string mr;
  Pattern pattern = Pattern::zero;
  uint64_t seed = 0;  // resolved: the scenario seed when not given
  uint8_t value = 0;
  uint64_t offset = 0;
  uint64_t length = 0;  // resolved: the rest of the MR when not given
};

struct ConnectStep {
  SourceLoc loc;
  std::string name;
  std::string client;
  std::string server;
  std::string client_mr;  // MR of the client that the server may access ("" = none)
  std::string server_mr;  // MR of the server that the client may access ("" = none)
  uint32_t pmtu = 4096;
  uint32_t sq_depth = 64;
  uint32_t rq_depth = 16;
  uint32_t rq_elem_bytes = 4096;   // RQ element size (QPCONFi[31:16] x 256)
  std::optional<uint32_t> client_psn;  // nullopt = auto (drawn from the seed by the runner)
  std::optional<uint32_t> server_psn;
  std::optional<uint32_t> client_qp;  // nullopt = auto (chosen by the runner)
  std::optional<uint32_t> server_qp;
  bool cm = true;  // false: both QPs programmed out of band, no CM MADs on the wire
  uint32_t ip_version = 4;  // 4 or 6 (resolved: 4 when both nodes have `ip`, else 6)
  bool sideband = false;    // hw_handshake: both QPs in HW-handshake mode (QPCONFi[4] = 0), sideband doorbells
};

struct WqeSpec {
  SourceLoc loc;
  WqeOpcode opcode = WqeOpcode::write;
  uint32_t wr_id = 0;  // 0..65535
  std::string local_mr;
  uint64_t local_offset = 0;
  uint32_t length = 0;
  uint64_t remote_offset = 0;  // into the peer's MR (write, write_imm, read)
  uint32_t immdt = 0;          // immediate data, or the R_Key to invalidate (send_inv)
  std::optional<uint32_t> rkey;  // RTAG instead of the peer MR's R_Key (write, write_imm, read): to provoke R_Key errors
};

struct PostStep {
  SourceLoc loc;
  std::string conn;
  std::string node;  // one end of conn: the requester
  Doorbell doorbell = Doorbell::once;
  std::vector<WqeSpec> wqes;
  uint32_t repeat = 1;  // post the list this many times
};

struct CompletionExpect {
  std::optional<uint32_t> wr_id;
  std::optional<WqeOpcode> opcode;
  std::optional<bool> error;
};

struct WaitCompletionsStep {
  SourceLoc loc;
  std::string conn;
  std::string node;
  uint32_t count = 1;
  uint64_t timeout_us = 1000;
  std::vector<CompletionExpect> expect;  // checked against the first expect.size() completions, in order
};

struct MemRef {
  std::string node;
  std::string mr;
  uint64_t offset = 0;
};

// recv: messages the responder delivered (RQ elements, ieth_immdt entries).
struct RecvExpect {
  std::optional<WqeOpcode> opcode;  // send, send_imm, send_inv, write_imm
  std::optional<uint32_t> immdt;    // ImmDt, or the invalidated R_Key (send_inv)
  uint64_t length = 0;              // SEND kinds: bytes of the RQ element compared with `equals`
  std::optional<MemRef> equals;
};

struct RecvStep {
  SourceLoc loc;
  std::string conn;
  std::string node;                 // the receiving end
  uint32_t count = 1;
  uint64_t timeout_us = 1000;
  bool consume = true;              // write RQCIi past the messages
  std::vector<RecvExpect> expect;
};

// bypass_send / expect_bypass: non-RoCE frames through the classifier's
// bypass path (model/link/classify.h).
struct BypassSendStep {
  SourceLoc loc;
  std::string node, to;             // sender, and the node whose MAC (and IP) the frame carries
  std::optional<uint16_t> ethertype;  // raw Ethernet II frame with this EtherType ...
  std::optional<uint16_t> udp_dport;  // ... or IPv4/UDP to this port (never 4791)
  uint32_t length = 64;             // payload bytes after the Ethernet (raw) or UDP header
  Pattern pattern = Pattern::incrementing;
  uint64_t seed = 0;
  uint8_t value = 0;
  uint32_t count = 1;
};

struct ExpectBypassStep {
  SourceLoc loc;
  std::string node;                 // the receiving node
  uint32_t count = 1;               // frames since the previous expect_bypass on this node
  uint64_t timeout_us = 100;
};

struct PatternSpec {
  Pattern pattern = Pattern::zero;
  uint64_t seed = 0;  // resolved: the scenario seed when not given
  uint8_t value = 0;
};

struct CheckMemoryStep {
  SourceLoc loc;
  std::string node;
  std::string mr;
  uint64_t offset = 0;
  uint64_t length = 0;  // resolved: the rest of the MR when not given
  std::optional<MemRef> equals;       // exactly one of equals / pattern
  std::optional<PatternSpec> pattern;
};

struct WaitStep {
  SourceLoc loc;
  uint64_t us = 0;
};

// ---------------------------------------------------- issue 3 additions ----
// (parsing: see scenarios/README.md for the YAML form of each.)

// A register named as PG332 spells it (model/regs/ernic_regs.def), per node,
// per QP (registers whose name ends in "i") or per MR-table entry.
struct RegRef {
  std::string node;
  std::string reg;                 // "XRNICCONF", "QPCONFi", "ACCESSDESC", ...
  std::optional<uint32_t> qp;      // required for per-QP registers (1..num_qp)
  std::optional<uint32_t> mr;      // required for MR-table registers (0..255)
  std::string field;               // "" = the whole register; else a field of it
};

struct RegWriteStep {              // reg_write: whole register, or read-modify-write of a field
  SourceLoc loc;
  RegRef ref;
  uint32_t value = 0;
};

struct RegReadStep {               // reg_read: read (timed) and log the value
  SourceLoc loc;
  RegRef ref;
};

struct RegExpectStep {             // reg_expect: (value & mask) == expected, or != with `not`
  SourceLoc loc;
  RegRef ref;
  uint32_t value = 0;
  uint32_t mask = 0xFFFFFFFF;      // applied to the register or field value
  bool negate = false;             // YAML key `not: true`
};

struct RegPollStep {               // reg_poll: re-read until (value & mask) == expected
  SourceLoc loc;
  RegRef ref;
  uint32_t value = 0;
  uint32_t mask = 0xFFFFFFFF;
  uint64_t timeout_us = 100;
  uint64_t interval_ns = 100;      // between reads
};

struct MemWriteStep {              // mem_write: host memory at a physical address
  SourceLoc loc;
  std::string node;
  uint64_t addr = 0;
  std::vector<uint8_t> bytes;      // from `bytes: [..]`, `u32: [..]` or `u64: [..]` (little-endian)
  bool stray = false;              // not the host program's write: the scoreboard is not told (tests it)
};

struct MemExpectStep {             // mem_expect: host memory equals the given bytes
  SourceLoc loc;
  std::string node;
  uint64_t addr = 0;
  std::vector<uint8_t> bytes;
};

struct DeregisterMrStep {
  SourceLoc loc;
  std::string node;
  std::string name;                // an MR registered earlier on that node
};

struct ConnectRejectStep {         // the server refuses: ConnectRequest answered by ConnectReject
  SourceLoc loc;
  std::string client;
  std::string server;
  uint32_t reason = 28;            // IBTA REJ reason (28 = consumer reject)
  uint32_t ip_version = 4;         // as in ConnectStep
};

// debug_preset: a simulator backdoor (not PG332 behaviour, assumption
// A-DEBUG-1) that sets a per-QP sequence counter inside the model, without
// an AXI4-Lite access or access rules: STATSSNi (read-only in PG332) or
// STATMSNi, to start a QP near the 24-bit wrap.
struct DebugPresetStep {
  SourceLoc loc;
  RegRef ref;                      // STATSSNi or STATMSNi, qp 2..num_qp, no field
  uint32_t value = 0;              // 0..0xFFFFFF
};

// PG332 ch.6 "Switching to HW handshake" on one end of a connection: from
// then on its doorbells use the sideband ports (model/link/sideband.h).
struct HwHandshakeStep {
  SourceLoc loc;
  std::string conn;
  std::string node;
};

struct DisconnectStep {            // DisconnectRequest / DisconnectReply; both QPs deleted (PG332 flow)
  SourceLoc loc;
  std::string conn;
  std::string node;                // the end that sends the DREQ
};

// PG332's fatal-recovery flow on both QPs of a connection (after a fatal
// error); the QPs return to RESET and the connection name is freed, so a new
// connect may use the same QPNs.
struct RecoverStep {
  SourceLoc loc;
  std::string conn;
  std::optional<uint32_t> code;    // expected fatal code in the server's error-status queue entry
};

// Direction of the link, "A->B".
struct Direction {
  std::string from, to;
};

enum class FaultAction { drop, duplicate, reorder, corrupt, delay, ecn };  // FaultKind's order
const char* to_string(FaultAction a);

struct FrameMatch {                // every given key must match
  std::vector<uint8_t> opcodes;    // `opcode: RC_WRITE_MIDDLE` or a list; names as roce::opcode_name or numbers
  std::optional<uint32_t> psn;
  std::optional<uint32_t> dest_qp;
  std::optional<uint32_t> nth;     // only the n-th (1-based) frame that matches the other keys
  std::optional<double> probability;  // each matching frame independently, from the seeded RNG
};

struct FaultStep {                 // fault: installs a rule on a direction from now on
  SourceLoc loc;
  std::string name;                // for logs; default "fault@LINE"
  std::vector<Direction> dirs;     // `dir: A->B` or `dir: both`
  FrameMatch match;
  FaultAction action = FaultAction::drop;
  uint32_t count = 1;              // applications before the rule retires; 0 = unlimited
  uint32_t reorder_after = 1;      // reorder: hold the frame until this many later frames have passed
  uint64_t delay_ns = 0;           // delay: extra latency
  std::optional<uint32_t> corrupt_byte;   // corrupt: byte offset in the frame, or
  std::string corrupt_field;       //   a named field: "bth.psn", "bth.opcode", "bth.dest_qp", "ip.ttl", "icrc", "payload"
  uint32_t corrupt_bit = 0;        //   bit 0..7 of that byte (of the field's first byte)
  std::optional<uint8_t> corrupt_value;  // corrupt `value`: the byte's new value instead of a bit flip
  bool repair = false;             // corrupt `repair: true`: IPv4 header checksum and ICRC recomputed
};

struct LinkStep {                  // link: down / up (frames sent while down are lost)
  SourceLoc loc;
  std::vector<Direction> dirs;
  bool up = true;
};

// One element of an expected frame sequence. Fields not given are wildcards.
struct FramePattern {
  std::vector<uint8_t> opcodes;    // empty = any opcode
  std::optional<uint32_t> psn;
  bool psn_next = false;           // `psn: next`: previous matched frame's PSN + 1
  std::optional<uint8_t> syndrome; // AETH syndrome
  std::optional<uint32_t> msn;     // AETH MSN (24 bits)
  std::optional<uint32_t> dest_qp;
  uint32_t min = 1, max = 1;       // repetition: `repeat: "*"` (0..inf), "+" (1..inf), N, or [min, max]
  static constexpr uint32_t kUnbounded = 0xFFFFFFFF;  // max for "*" and "+" (no upper bound)
};

enum class Tap { tx, rx };

struct ExpectFramesStep {          // frames seen on a direction since the previous expect_frames on it
  SourceLoc loc;
  Direction dir;
  Tap tap = Tap::tx;               // tx: as the sender transmitted them; rx: as the receiver got them
  std::vector<FramePattern> frames;  // the whole window must match, in order
};

struct ExpectIdleStep {            // nothing happens for `us`: no frame on any given direction, no CQE
  SourceLoc loc;
  uint64_t us = 0;
  std::vector<Direction> dirs;     // default both
};

struct WaitUntilStep {             // wait until a condition, bounded
  SourceLoc loc;
  uint64_t timeout_us = 1000;
  // exactly one of:
  std::optional<Direction> frames_dir;   // `frames: { dir: A->B, count: N, opcode: X }`
  uint32_t frames_count = 1;
  std::vector<uint8_t> frames_opcodes;
  std::optional<RegRef> reg;             // `reg: {...}, value: V, mask: M` (like reg_poll)
  uint32_t value = 0, mask = 0xFFFFFFFF;
};

// The PG332 compliance checker's reports of one rule so far (see
// model/monitor/compliance.h for the rules: va_align, len_64, read_small,
// send_zero, msg_8m).
struct ExpectComplianceStep {
  SourceLoc loc;
  std::string rule;
  uint64_t count = 0;
};

struct BarrierStep {               // inside `parallel` branches: all branches meet here
  SourceLoc loc;
  std::string name;
};

// ------------------------------------------- the QP-setup offload (rtl) ----
// qp_setup: one command of a node's qp_setup_fsm: create a QP from the
// given parameters; the step waits for the command's end and checks its
// status code and state (default 0x17 and READY; any other code and IDLE).
struct QpSetupStep {
  SourceLoc loc;
  std::string node;
  uint32_t qp = 2;                 // local QPN, 0..65535 (the block checks its range)
  uint32_t remote_qp = 2;          // 32 bits: the block checks the 24-bit range
  uint32_t psn = 0;                // SQ_PSN, 32 bits (above 0xFFFFFF: status 0x0B)
  uint32_t remote_psn = 0;         // EXP_PSN, the peer's first PSN (default: psn)
  std::string remote;              // node whose `ip` and `mac` are the destination, or
  roce::Ipv4Addr remote_ip;        //   these two given directly
  roce::MacAddr remote_mac;
  uint32_t udp_port = 4791;
  uint32_t pd = 1;
  uint8_t expect_status = 0x17;
  uint8_t expect_state = 4;        // 0 IDLE .. 4 READY
  uint64_t timeout_us = 100;
};

// qp_release: the release command for a QP the block set up.
struct QpReleaseStep {
  SourceLoc loc;
  std::string node;
  uint32_t qp = 2;
  uint8_t expect_status = 0x17;
  uint8_t expect_state = 0;
  uint64_t timeout_us = 100;
};

// qp_adopt: a connection (for post, wait_completions, recv, ...) from QPs the
// blocks set up: an end set up by a qp_setup step is adopted by its driver
// (addresses read back from the block, the rest from ERNIC's registers); an
// end without one is programmed by its driver out of band to match (QPN =
// the other end's remote_qp, start PSN = its remote_psn).
struct QpAdoptStep {
  SourceLoc loc;
  std::string name;
  struct End {
    std::string node;
    uint32_t qp = 0;
    bool fsm = false;              // set up by the node's qp_setup_fsm
    uint32_t psn = 0;              // its first PSN (SQPSNi)
    uint32_t remote_psn = 0;       // the first PSN it expects
    std::string mr;                // its MR the peer may access ("" = none)
  } client, server;
};

struct RepeatStep;
struct ParallelStep;

using Step = std::variant<InitStep, RegisterMrStep, FillStep, ConnectStep, PostStep,
                          WaitCompletionsStep, CheckMemoryStep, WaitStep, RegWriteStep, RegReadStep,
                          RegExpectStep, RegPollStep, MemWriteStep, MemExpectStep, DeregisterMrStep,
                          ConnectRejectStep, DisconnectStep, RecoverStep, HwHandshakeStep, DebugPresetStep, FaultStep, LinkStep,
                          ExpectFramesStep, ExpectIdleStep, WaitUntilStep, ExpectComplianceStep, BarrierStep, RecvStep,
                          BypassSendStep, ExpectBypassStep, QpSetupStep, QpReleaseStep, QpAdoptStep,
                          std::shared_ptr<RepeatStep>,
                          std::shared_ptr<ParallelStep>>;

struct RepeatStep {                // repeat: { count: N, steps: [...] }
  SourceLoc loc;
  uint32_t count = 1;
  std::vector<Step> steps;
};

struct ParallelStep {              // parallel: [ { name: x, steps: [...] }, ... ] run concurrently
  SourceLoc loc;
  struct Branch {
    std::string name;
    SourceLoc loc;
    std::vector<Step> steps;
  };
  std::vector<Branch> branches;
};

const SourceLoc& step_loc(const Step& s);
const char* step_kind(const Step& s);  // the YAML key: "init", "register_mr", ...

// ------------------------------------------------------------- scenario ----

struct Scenario {
  std::string file;  // display name given to the parser
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Limits limits;
  Clocks clocks;
  LinkConfig link;
  PcieConfig pcie;
  Datapath datapath = Datapath::rtl;
  std::string datapath_user;     // Datapath::user: <name> of `user:<name>`
  SourceLoc datapath_loc;        // where `datapath` was given (file only when absent)
  RegLayout layout = RegLayout::v31;   // `layout: "3.1"` or `"4.x"`
  ComplianceMode compliance = ComplianceMode::report;
  std::optional<HandshakeRandom> handshake_random;  // top level: every node without its own
  std::vector<NodeConfig> nodes;  // in file order
  std::vector<Step> steps;

  const NodeConfig* find_node(const std::string& name) const;  // nullptr if absent
  // The datapath's registered name: "rtl", "model" or "user:<name>"
  // (model/datapath/sc/datapath.h make_datapath).
  std::string datapath_name() const;
};

// Sets a scenario's datapath from a name as `datapath` and `run --datapath`
// take it: rtl, model, or user:<name> (<name>: letters, digits, '_').
// False (nothing changed) when the text is none of these forms; whether a
// user:<name> is registered is checked where the datapaths are known
// (System, ernic-sim).
bool set_datapath(Scenario& sc, const std::string& name);

// Parse a scenario file; errors are ScenarioError (including an unreadable file).
Scenario load_scenario(const std::string& path);
// Parse YAML text; display_name is used as the file in locations and errors.
Scenario parse_scenario(const std::string& yaml_text, const std::string& display_name);

}  // namespace ernic
