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
// The step types are in steps.h, source positions and ScenarioError in
// source_loc.h; this header includes both.
//
// Plain C++17; no SystemC.
#pragma once

#include <set>
#include <map>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "model/link/switch_params.h"
#include "model/regs/regs.h"
#include "model/roce/types.h"
#include "model/scenario/extensions.h"
#include "model/scenario/source_loc.h"
#include "model/scenario/steps.h"

namespace ernic {

// ------------------------------------------------------------- topology ----

struct Limits {
  uint64_t sim_time_us = 10000;  // hard cap on simulated time
  uint64_t watchdog_us = 200;    // no progress for this long -> exit 3
  // A model error (the model's own consistency, a monitor, the datapath
  // scoreboard) fails the run; it stops this long after the first one, so
  // the outputs show what followed without a broken run going on for
  // minutes (0: 1 ps after the error's instant, which runs to its end: a
  // split run's wire monitor finds an error of another process's frames 1
  // ps after its instant, model/system/split_monitor.cpp).
  uint64_t after_error_us = 10;
  // Retries of one QP in a row while the same WQE is its oldest outstanding
  // (progress in between, so the retry count never runs out): a livelock,
  // exit 3 (SimContext::livelock_retries; 0: not watched).
  uint32_t livelock_retries = 100;
};

struct Clocks {
  double core_mhz = 200.0;
  double cmac_mhz = 322.265625;
};

struct LinkConfig {
  uint32_t rate_gbps = 100;  // only 100 for now
  uint64_t delay_ns = 100;
};

// `topology: switch` (scenarios/README.md section 4): every node on a port
// of one switch (model/link/switch.h), each joined to it by a link of its
// own. Without it (`point_to_point`, the default) the two nodes share one
// link (`link`).
struct SwitchTopology {
  struct PortLink {
    uint32_t rate_gbps = 100;    // the node <-> switch link: `link`'s, or the port's own
    uint64_t delay_ns = 100;
    SourceLoc delay_loc;         // the port's own `delay_ns` key (else none: `link`'s or the default)
  };
  std::vector<PortLink> ports;   // one per node, in node order
  uint64_t latency_ns = 300;     // last byte in -> queued at the egress port
  uint64_t buffer_bytes = 262144;  // per egress port
  bool flood_unknown = false;    // `unknown: flood` (else drop)
  SwitchEcn ecn;                 // the switch's own description (model/link/switch_params.h)
  SwitchPfc pfc;
  SourceLoc loc;                 // the `topology` key
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
// The register layout (bases, banks, the fields that moved) the key names.
const regs::Layout& reg_layout(RegLayout l);

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
  // `host: program`: the node's host is a program outside the simulator,
  // attached by a `program` step over the bridge (model/bridge); its
  // memory lives in the program and no built-in driver step may drive it.
  // `host: driver` (default): the built-in driver (model/host).
  bool host_program = false;
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
  // `doorbell_layout`: where the driver puts each RC QP's CQ and RQ
  // doorbell words (host::DriverConfig::DoorbellLayout): 0 qp_line
  // (default), 1 shared_line, 2 spread.
  uint32_t doorbell_layout = 0;
  // `rx`: the RoCE RX buffer between the CMAC and the RX packet handler
  // (A-ERNIC-26) and a cap on the handler's drain rate (0: none).
  uint32_t rx_buffer_bytes = 65536;
  double rx_handler_gbps = 0;
  bool rx_overflow_fails = false;  // rx.overflow: drop (default) | fail
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
  // Not scenario keys: set by `ernic-sim run --plant-bug NAME` (test only;
  // ErnicConfig's fields of the same names).
  bool test_bug_ack_coalescing = false;
  bool test_bug_cq_entry_race = false;
  std::optional<HandshakeRandom> handshake_random;  // the node's own `handshake_random`
  NodeExtensions ext;        // `extensions`: named extensions, not PG332 (extensions.h)
  // `kind: peer` (model/peer/peer.h): the node is the ideal IBTA peer, a
  // behavioural RC responder on its own CMAC, not an ERNIC; its `peer`
  // map's parameters. Absent: `kind: ernic` (the default).
  struct Peer {
    uint64_t latency_ns = 0;         // request in -> answers to the MAC
    uint32_t ack_every_packets = 0;  // ACK coalescing: also every N packets (0: on AckReq only)
    bool credits_invalid = false;    // `credits: invalid` (31) instead of `rq`
    uint64_t ack_timeout_ns = 100000;  // requester: go back N after this long without progress
    uint32_t max_reads = 16;         // requester: READs outstanding at a time
    std::string recv_mr;             // the MR SENDs land in ("": memory of the peer's own)
    SourceLoc recv_mr_loc;
  };
  std::optional<Peer> peer;
  SourceLoc loc;             // the node's key in `nodes`
};

// ------------------------------------------------------------- scenario ----

struct Scenario {
  std::string file;  // display name given to the parser
  // QPNs the steps name for a node (connect's client_qp / server_qp,
  // replay's node_qpn): a replay's QPN chosen at run time avoids them.
  std::map<std::string, std::set<uint32_t>> named_qpns;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Limits limits;
  Clocks clocks;
  LinkConfig link;
  std::optional<SwitchTopology> topology_switch;  // `topology: switch`; none: point to point
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
