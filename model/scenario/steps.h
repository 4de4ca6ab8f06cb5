// model/scenario: the steps of a scenario, one struct a step kind, and the
// Step variant that holds any of them; the value enums they use and the
// test data patterns of fill / check_memory. Part of the scenario API
// (scenario.h includes it; the YAML form of each step is in
// scenarios/README.md, its parser in steps*.cpp). Plain C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/regs/wqe.h"
#include "model/roce/types.h"
#include "model/scenario/source_loc.h"

namespace ernic {

// ---------------------------------------------------------------- enums ----

enum class Pattern { random, zero, incrementing, constant };
enum class Access { r, w, rw };  // MR access rights (remote read / write)
using WqeOpcode = pg332::WqeOpcode;  // PG332 Table 2-1 (model/regs/wqe.h)
// One SQ doorbell (SQPIi write) for the list, one per WQE, or none: the WQEs
// wait in the SQ for a later post's doorbell (doorbell batching, seed 003).
enum class Doorbell { once, each, none };

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
  // `batch: N` (CM only): N connections <name>1..<name>N set up at once,
  // their N ConnectRequests sent back to back (Driver::connect_batch); 0:
  // one connection named <name>.
  uint32_t batch = 0;
  // One end may be a node with `host: program` (out of band only: cm:
  // false; its QPN and PSN given): only the driver's end is programmed
  // here; the program learns the connection from its environment at its
  // program step (model/bridge/README.md) and programs its own QP.
  std::string program_end;
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
  // `errors: allowed`: a completion no expect entry says `error` of may
  // carry ERRFLAG; by default every such completion must be error-free.
  bool errors_allowed = false;
  // How the driver looks at the CQ (host::PollMode): `batch` CQEs handled
  // B at a time (0: all it finds), `cq_head: mmio` reads CQHEADi by MMIO
  // at every look instead of its mirror in host memory.
  uint32_t batch = 0;
  bool cq_head_mmio = false;
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

// replay: one side of an RC connection in a real capture, played by a
// `kind: peer` node against an ERNIC node standing in the other side's
// place; ERNIC's frames compared with the capture's (model/replay/replay.h).
struct ReplayStep {
  SourceLoc loc;
  std::string capture;              // pcap or pcapng; a relative path is the scenario file's folder's
  std::string node;                 // the ERNIC node
  std::string from;                 // the kind: peer node playing the capture's side
  bool requester_side = false;      // side: responder (ERNIC answers; default) or requester (ERNIC requests)
  std::string requester_ip;         // the capture's requester ("": the first RC request's source)
  std::optional<uint32_t> qpn, requester_qpn, first_psn;  // the capture's (default: inferred)
  std::optional<uint32_t> node_qpn;  // ERNIC's QP for the connection (default: its driver's lowest free)
  uint32_t psn_delta = 0;           // simulated PSN = captured PSN + delta (mod 2^24)
  std::optional<uint64_t> va_base;  // simulated VA of the capture's lowest VA (default: the same VAs)
  bool fast = false;                // back to back instead of the capture's pacing
  uint32_t settle_us = 200;         // simulated time after the last request
  std::vector<std::string> expect;  // explained differences, as the report lists them
  bool fail_on_difference = true;   // on_difference: fail (default) or report
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
  uint64_t us = 0;        // for this long, or
  bool until = false;     // until simulated time `us` (absolute; fails if already past)
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
  std::string client, server;      // the connection's ends (the parser's; a split run's participants)
};

// PG332's fatal-recovery flow on both QPs of a connection (after a fatal
// error); the QPs return to RESET and the connection name is freed, so a new
// connect may use the same QPNs.
struct RecoverStep {
  SourceLoc loc;
  std::string conn;
  std::string client, server;      // the connection's ends (the parser's; a split run's participants)
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

// expect_switch: a switch port's counters (model/link/switch_counters.h)
// against values: `N` (equal), "OP N" with OP one of ==, !=, >, >=, <, <=,
// or [min, max].
struct CounterCheck {
  std::string counter;
  enum class Op { eq, ne, gt, ge, lt, le, range } op = Op::eq;
  uint64_t value = 0, max = 0;     // range: [value, max]
  bool holds(uint64_t got) const;
  std::string str() const;         // "> 0", "== 12", "in [1, 8]"
};
struct ExpectSwitchStep {
  SourceLoc loc;
  std::string port;                // the node on the port
  std::vector<CounterCheck> checks;  // in file order
};

// expect_qp: an RC QP's requester state in the ERNIC model (no register
// shows it) against values in CounterCheck's forms. The state's names:
//   outstanding_limit  the QP's outstanding-request limit: 16 (PG332), 8 once
//                      a CNP has arrived for it (PG332 "CNP"; back to 16 when
//                      the QP is enabled again, A-ERNIC-22)
//   outstanding        requests (WQEs) sent and not yet acknowledged
inline constexpr const char* kQpStateNames[] = {"outstanding_limit", "outstanding"};
struct ExpectQpStep {
  SourceLoc loc;
  std::string node;
  uint32_t qp = 2;                 // 2..the node's num_qp
  std::vector<CounterCheck> checks;  // in file order
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

// program: a node's host is a program outside the simulator (node key
// `host: program`), attached over the bridge (model/bridge): the step
// starts it with ERNIC_BRIDGE set, serves it in lock-step until it ends the
// session, and fails on a non-zero exit, a crash or a broken session.
// `serve: ADDR` instead waits for a program started by hand on ADDR
// (also `ernic-sim run --serve NODE=ADDR`).
struct ProgramStep {
  SourceLoc loc;
  std::string node;
  std::vector<std::string> argv;   // run: [path, args...]; a relative path is the scenario file's folder's
  std::vector<std::pair<std::string, std::string>> env;  // added to the program's environment
  std::string serve;               // listen on this address for a program started by hand ("" = start argv)
  uint64_t timeout_s = 60;         // wall clock: to connect, and the longest silence of the program
  // Run the simulator and the program it starts on one CPU while the step
  // lasts: in lock-step only one of them runs at a time, and a wake-up
  // across CPUs costs tens of microseconds on virtual machines (tools/
  // bridge-bench measures both). false: leave the OS to place them.
  bool same_cpu = true;
};

struct RepeatStep;
struct ParallelStep;

using Step = std::variant<InitStep, RegisterMrStep, FillStep, ConnectStep, PostStep,
                          WaitCompletionsStep, CheckMemoryStep, WaitStep, RegWriteStep, RegReadStep,
                          RegExpectStep, RegPollStep, MemWriteStep, MemExpectStep, DeregisterMrStep,
                          ConnectRejectStep, DisconnectStep, RecoverStep, HwHandshakeStep, DebugPresetStep, FaultStep, LinkStep,
                          ExpectFramesStep, ExpectIdleStep, WaitUntilStep, ExpectComplianceStep, BarrierStep, RecvStep,
                          BypassSendStep, ExpectBypassStep, ReplayStep, QpSetupStep, QpReleaseStep, QpAdoptStep, ProgramStep,
                          ExpectSwitchStep, ExpectQpStep, std::shared_ptr<RepeatStep>,
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

}  // namespace ernic
