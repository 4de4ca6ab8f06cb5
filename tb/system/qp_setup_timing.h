// tb/system: the QP-setup offload's timing as its documentation gives it
// (model/qp_setup/qp_setup_fsm.h, rtl/qp_setup/qp_setup_fsm.sv): the core
// cycle at which each state and status record of a command must come, for
// the RTL and for the C++ reference model, derived from the scenario's
// commands; and the checks that compare a run's log with them. Included
// once, by test_system_qp_setup.cpp.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

constexpr uint64_t kModelCycleBound = 4;  // model/qp_setup/qp_setup_fsm.h

std::vector<json> read_log(const fs::path& p) {
  std::vector<json> out;
  std::istringstream s(read_text(p));
  for (std::string line; std::getline(s, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// ---- the block's timing, derived from its documentation --------------------
// Cycles are the transaction log's core cycles. The RTL's state register
// changes at a rising edge half a cycle after a core edge and is logged at
// the next core edge (model/qp_setup/qp_setup_fsm.h, "Clock (RTL)"), one
// rising edge a core cycle while the clock runs (and the stopped clock
// counts the edges it skipped, wait_skip): a difference of logged cycles is
// a number of RTL edges.
//
// RTL (rtl/qp_setup/qp_setup_fsm.sv):
//  - An ERNIC access through the master takes 3 edges: the issue (mph_q 0 ->
//    1 for AW+W, 0 -> 3 for AR), the handshake (the wrapper grants it at the
//    edge it is first presented when the arbiter's next cycle is free, as
//    here: no host access to ERNIC meanwhile), the response (BVALID / RVALID,
//    driven at the rising edge after the access was performed: the step or
//    the state advances).
//  - REG_CHECK of a create: the local checks and the issue of the QPCONFi
//    read share its first edge: RES_ALLOC (or IDLE with 0x0B when QPCONFi[0]
//    reads 1) 3 edges after REG_CHECK. Local checks failing: IDLE after 1.
//    A release takes its owner slot at the first edge: RES_ALLOC after 1.
//  - RES_ALLOC of a create: the slot pick (step 0) at the first edge, then
//    11 writes (QDEPTHi .. RQWPTRDBADDMSBi): CMAC_INIT after 1 + 33 = 34;
//    no slot (or too small): IDLE with 0x05 after 1.
//    RES_ALLOC of a release: 14 accesses (XRNICADCONF read, SW override,
//    QPCONFi, 9 registers zeroed, QPCONFi recovery, XRNICADCONF restored):
//    IDLE after 42.
//  - CMAC_INIT with the synchronised link up: 10 writes (DESTQPCONFi ..
//    QPCONFi): READY after 30. With the link down: wait_q counts 0, 1, ...;
//    the edge that finds wait_q == LINK_TIMEOUT gives 0x13: IDLE after
//    LINK_TIMEOUT + 1 (link_wait_left + 1 edges after entry, as the header
//    says). A link that comes up at t: the first rising edge after t (edges
//    at m x period + period / 2; one at t itself samples the link as it was
//    before, qp_setup_fsm.h) is edge k: link_sync_q[0] rises there,
//    link_sync_q[1] at k + 1, the first access issues at k + 2 and the
//    tenth's response is edge k + 31: READY logged at cycle k + 32.
// Model (model/qp_setup/qp_setup_fsm.{h,cpp}, ModelEnv): REG_CHECK's cycle,
// then kModelAccessCycles = 3 a register access (granted at a core edge for
// the next one, performed there, two cycles more), RES_ALLOC's slot pick one
// cycle (also for a release), the link wait event-driven, LINK_TIMEOUT
// cycles at most:
//  - create REG_CHECK -> RES_ALLOC (or IDLE 0x0B from ERNIC): 1 + 3 = 4;
//    local refusal 1; release REG_CHECK -> RES_ALLOC 1;
//  - RES_ALLOC: create 1 + 11 x 3 = 34, no slot 1, release 1 + 14 x 3 = 43;
//  - CMAC_INIT: link up 10 x 3 = 30; timeout LINK_TIMEOUT; a link that
//    comes up at t: the first access starts at the core edge at or after t:
//    READY at cycle ceil(t / period) + 30.
// So the model is one cycle late after a create's REG_CHECK and a release's
// RES_ALLOC, on time after a timeout, and one or two cycles early after a
// link that came back (the synchroniser): within kModelCycleBound.

// What a command does (from the scenario file); its records follow from it.
enum class Cmd {
  kRefused,         // REG_CHECK's local checks: 0x01 (QPN range, unknown release) or 0x0B (PSN, held here)
  kEnabledInErnic,  // a create whose QPCONFi read finds the QP enabled in ERNIC: 0x0B
  kNoSlot,          // a create that finds no free slot, or one too small: 0x05
  kCreated,         // a create with the link up: READY, 0x17
  kTimedOut,        // a create with the link down throughout: 0x13
  kCreatedLinkBack, // a create whose link comes up (a `link` step) during CMAC_INIT: READY, 0x17
  kReleased,        // a release of a QP the block set up: 0x17
};
struct Command {
  Cmd kind;
  uint8_t code = 0;  // kRefused's
};

// The first rising edge of the RTL's clock strictly after t_ps (edges at
// m x period + period / 2).
uint64_t rtl_edge_after(uint64_t t_ps, uint64_t period) {
  const uint64_t half = period / 2;
  return t_ps < half ? 0 : (t_ps - half) / period + 1;
}
// The RTL's READY cycle when the link came up at t_ps during CMAC_INIT.
uint64_t rtl_ready_after_link(uint64_t t_ps, uint64_t period) { return rtl_edge_after(t_ps, period) + 32; }

// The records (value, cycle) a command gives from its REG_CHECK record at
// cycle c0; t_link_ps: when its link came up (kCreatedLinkBack).
std::vector<std::pair<std::string, uint64_t>> expected_records(const Command& c, bool rtl, uint64_t c0,
                                                               uint64_t link_timeout, uint64_t period,
                                                               uint64_t t_link_ps) {
  const uint64_t create_check = rtl ? 3 : 4, alloc = 34, path = 30, release_alloc = rtl ? 42 : 43;
  const uint64_t timeout = rtl ? link_timeout + 1 : link_timeout;
  std::vector<std::pair<std::string, uint64_t>> v = {{"REG_CHECK", c0}};
  auto end = [&](const std::string& state, uint64_t at, uint8_t code) {
    v.emplace_back(state, at);
    v.emplace_back(fmt::format("0x{:02x}", code), at);
  };
  switch (c.kind) {
    case Cmd::kRefused:
      end("IDLE", c0 + 1, c.code);
      break;
    case Cmd::kEnabledInErnic:
      end("IDLE", c0 + create_check, 0x0B);
      break;
    case Cmd::kNoSlot:
      v.emplace_back("RES_ALLOC", c0 + create_check);
      end("IDLE", c0 + create_check + 1, 0x05);
      break;
    case Cmd::kCreated:
    case Cmd::kTimedOut:
    case Cmd::kCreatedLinkBack: {
      const uint64_t init = c0 + create_check + alloc;
      v.emplace_back("RES_ALLOC", c0 + create_check);
      v.emplace_back("CMAC_INIT", init);
      if (c.kind == Cmd::kCreated) end("READY", init + path, 0x17);
      if (c.kind == Cmd::kTimedOut) end("IDLE", init + timeout, 0x13);
      if (c.kind == Cmd::kCreatedLinkBack)
        end("READY", rtl ? rtl_ready_after_link(t_link_ps, period) : (t_link_ps + period - 1) / period + path, 0x17);
      break;
    }
    case Cmd::kReleased:
      v.emplace_back("RES_ALLOC", c0 + 1);
      end("IDLE", c0 + 1 + release_alloc, 0x17);
      break;
  }
  return v;
}

struct BlockRecord {
  std::string value;  // a state name, or a status "0x.."
  uint64_t cycle, t_ps;
};
std::vector<BlockRecord> block_records(const std::vector<json>& log, const std::string& node) {
  std::vector<BlockRecord> v;
  for (const auto& x : log)
    if (x["kind"] == "state" && x["node"] == node && x["what"].get<std::string>().rfind("qp_setup_fsm.", 0) == 0)
      v.push_back({x["value"].get<std::string>(), x["cycle"].get<uint64_t>(), x["t_ps"].get<uint64_t>()});
  return v;
}
// The start times of the scenario's `link` steps.
std::vector<uint64_t> link_steps(const std::vector<json>& log) {
  std::vector<uint64_t> v;
  for (const auto& x : log)
    if (x["kind"] == "step" && x["step"] == "link" && x["phase"] == "start") v.push_back(x["t_ps"].get<uint64_t>());
  return v;
}

// Checks a node's block records against its commands, each anchored at its
// own REG_CHECK record (when the CMD write reached the block: the host's
// MMIO path, not the block's timing).
void check_block_timing(const std::vector<json>& log, const std::string& node, const std::vector<Command>& cmds,
                        bool rtl, uint64_t link_timeout, uint64_t period, const std::string& what) {
  const std::vector<BlockRecord> recs = block_records(log, node);
  const std::vector<uint64_t> links = link_steps(log);
  size_t i = 0;
  for (size_t n = 0; n < cmds.size(); ++n) {
    ASSERT_LT(i, recs.size()) << what << " " << node << ": command " << n << " has no records";
    ASSERT_EQ(recs[i].value, "REG_CHECK") << what << " " << node << ": command " << n;
    uint64_t t_link = 0;
    if (cmds[n].kind == Cmd::kCreatedLinkBack) {
      // The first `link` step after CMAC_INIT's record (3 records in).
      ASSERT_LT(i + 2, recs.size());
      const uint64_t init_ps = recs[i + 2].t_ps;
      for (uint64_t t : links)
        if (t > init_ps) {
          t_link = t;
          break;
        }
      ASSERT_NE(t_link, 0u) << what << " " << node << ": no link step in command " << n << "'s wait";
    }
    for (const auto& [value, cycle] : expected_records(cmds[n], rtl, recs[i].cycle, link_timeout, period, t_link)) {
      ASSERT_LT(i, recs.size()) << what << " " << node << ": command " << n << " ends early";
      EXPECT_EQ(recs[i].value, value) << what << " " << node << ": command " << n << ", record " << i;
      EXPECT_EQ(recs[i].cycle, cycle) << what << " " << node << ": command " << n << ", " << value;
      ++i;
    }
  }
  EXPECT_EQ(i, recs.size()) << what << " " << node << ": records after the last command";
}

}  // namespace
