// model/datapath/sc: the per-node RoCEv2 datapath between the ERNIC model
// and the CMAC model, as a SystemC module with interchangeable
// implementations (scenario key `datapath`):
//
//   ERNIC --(TxDesc, payload)--> roce_tx --> core->CMAC async FIFO --> CMAC TX
//   ERNIC <--(RxDesc, payload)-- roce_rx <-- CMAC->core async FIFO <-- CMAC RX
//   host bypass <--(frame)-----/
//
// - `rtl` (default; rtl_datapath.h): one Verilated top per node,
//   rtl/datapath/roce_datapath.sv, with both clocks gated (they run only
//   while a frame is in flight), and a scoreboard that checks every output
//   against the C++ reference models (the first difference is a run error
//   naming the cycle, the descriptor field or byte offset and both values).
// - `model` (model_datapath.h): the reference models themselves
//   (model/datapath/roce_tx_ref.h, roce_rx_ref.h, async_fifo_model.h) with
//   the latencies their headers state.
// Other tops with the same ports (e.g. a user's roce_rx inside) register a
// factory by name (register_datapath) and are picked the same way.
//
// The seams are rtl/SEAM.md's. The ERNIC model calls tx() from its TX
// thread and receives each RoCE frame through rx_sink; non-RoCE frames go
// to bypass_sink (the host's bypass path). The CMAC model pulls TX frames
// through the CmacTxSource interface and pushes received frames with
// cmac_rx() (attach() wires both).
//
// Timing conventions (both implementations): the ERNIC and CMAC models act
// on rising edges of their ClockDomain (k * period); the RTL's clocks rise
// half a period later (k * period + period / 2), so inputs written on a
// model edge are sampled by the RTL at the next RTL edge and nothing races.
// A descriptor handed to tx() on core edge k is presented to roce_tx from
// edge k + 1 on; tx() returns on the core edge after its handshake. A frame
// given to cmac_rx(f, start) has its first beat presented on the CMAC edge
// start (the caller tells it at least a CMAC cycle ahead). rx_sink is
// called on the core edge after the RTL edge where roce_rx's descriptor
// output is valid (the payload has come by then; for a block whose payload
// follows its descriptor, as the seam allows, on the edge after the
// payload's last beat).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "model/datapath/seam.h"
#include "model/link/cmac.h"
#include "model/roce/types.h"
#include "model/sim/clock.h"
#include "model/sim/sim_context.h"

class VerilatedVcdSc;

namespace ernic {

// A test-only hook (scenario node key `test_datapath_corrupt`): the RTL
// datapath's output is altered before the scoreboard sees it (and passed
// on altered, as a faulty block would), so that a test can check that the
// scoreboard reports it. stream: "tx" (frames to the CMAC; offset = byte),
// "rx_desc" (RX descriptors; offset = bit of the 1024-bit descriptor),
// "rx_payload" or "bypass" (offset = byte); frame = 0-based index in that
// stream; xor = the bits flipped.
struct DatapathCorrupt {
  std::string stream;
  uint64_t frame = 0;
  uint32_t offset = 0;
  uint8_t xor_mask = 1;
};

struct DatapathConfig {
  std::string node = "A";
  bool idle_skip = true;       // false: the RTL's clocks run every cycle (--no-idle-skip)
  uint64_t seed = 1;           // the synchronisers' metastability model (rtl/cdc/sync_cell)
  std::vector<DatapathCorrupt> corrupt;
};

struct DatapathStats {
  uint64_t tx_frames = 0;       // frames handed in by ERNIC (descriptor + payload)
  uint64_t tx_out = 0;          // frames taken by the CMAC
  uint64_t rx_in = 0;           // frames given by the CMAC
  uint64_t rx_frames = 0;       // RoCE frames delivered to ERNIC (descriptor + payload)
  uint64_t bypass_frames = 0;   // non-RoCE frames delivered to the bypass path
  // Scoreboard (rtl): outputs compared with the reference models, and
  // outputs that differed (the first one is a run error).
  uint64_t tx_checked = 0, rx_checked = 0, bypass_checked = 0, mismatches = 0;
  uint64_t rx_fifo_overflows = 0;    // beats lost at the CMAC->core FIFO (no backpressure there)
  uint64_t core_cycles_clocked = 0;  // RTL clock edges (0 for the model)
  uint64_t cmac_cycles_clocked = 0;
  uint64_t meta_events = 0;          // synchroniser captures in the aperture
};

class RoceDatapath : public sc_core::sc_module, public CmacTxSource {
 public:
  RoceDatapath(sc_core::sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
           std::string scope, DatapathConfig cfg);
  ~RoceDatapath() override;

  // --- core side (ERNIC) ----------------------------------------------------
  // One frame for roce_tx: its descriptor and payload (payload_len bytes;
  // a raw descriptor's payload is the whole frame without ICRC). Called from
  // a SystemC thread on a core edge; blocks it until the descriptor is
  // taken, and returns on a core edge.
  virtual void tx(const seam::TxDesc& d, roce::Bytes payload) = 0;
  // cfg_udp_sport (ERNIC's XRNICCONF field), read for every descriptor.
  std::function<uint16_t()> udp_sport;
  // A RoCE frame's descriptor and payload (desc.payload_len bytes), on the
  // core edge where roce_rx's descriptor is valid.
  std::function<void(const seam::RxDesc&, roce::Bytes payload)> rx_sink;
  // A non-RoCE frame, whole, on the core edge after its last bypass beat.
  std::function<void(FrameBytes)> bypass_sink;

  // --- CMAC side --------------------------------------------------------------
  // A received frame (no FCS), its first beat due on the CMAC edge start_ps
  // (at least one CMAC cycle after now).
  virtual void cmac_rx(FrameBytes f, uint64_t start_ps) = 0;
  // Makes this datapath the CMAC's TX source and RX stream.
  void attach(Cmac& c);

  // --- reports ------------------------------------------------------------------
  virtual const char* kind() const = 0;            // "rtl", "model", ...
  virtual bool traces_axis() const { return false; }
  // The counters as of now (rtl: meta_events as an owed model edge reads it).
  virtual const DatapathStats& stats() const { return stats_; }
  // RTL waveform (rtl only): adds the Verilated top to a VerilatedVcdSc.
  virtual void trace(VerilatedVcdSc*, int /*levels*/) {}
  // The in-flight frames' state for the watchdog's report; "" when none.
  virtual std::string status() const { return {}; }
  // Scoreboard (rtl): reference outputs the RTL has not produced yet, per
  // stream. At the end of a run these are frames still inside the datapath
  // (in flight when the last step ended, or lost by the RTL): not checked.
  struct Unchecked {
    uint64_t tx = 0, rx = 0, bypass = 0;
  };
  virtual Unchecked unchecked() const { return {}; }

 protected:
  const ClockDomain& core_;
  const ClockDomain& cmac_;
  SimContext& ctx_;
  std::string scope_;
  DatapathConfig cfg_;
  DatapathStats stats_;
  Cmac* cmac_model_ = nullptr;
  uint16_t sport() const { return udp_sport ? udp_sport() : 0; }
  // Waveform (model variables, both implementations): roce_tx's descriptor
  // handshake, <scope>.tx_seam.s_desc_valid / s_desc_ready (the trigger
  // stream `tx`).
  int v_desc_valid_ = -1, v_desc_ready_ = -1;
};

// A datapath implementation by name.
using DatapathFactory = std::function<std::unique_ptr<RoceDatapath>(
    sc_core::sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
    const std::string& scope, const DatapathConfig& cfg)>;
// Registers (or replaces) an implementation; "rtl" and "model" are built in,
// and every "user:<name>" that CMake's ernic_user_datapath() built
// (user_datapath_factories below) is registered with them.
void register_datapath(const std::string& name, DatapathFactory f);
// nullptr when the name is not registered.
std::unique_ptr<RoceDatapath> make_datapath(const std::string& kind, sc_core::sc_module_name name,
                                        const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                                        const std::string& scope, const DatapathConfig& cfg);
std::vector<std::string> datapath_names();  // sorted
bool datapath_registered(const std::string& name);
// "unknown datapath 'user:x' (registered: model, rtl, user:alt)".
std::string unknown_datapath_message(const std::string& name);

// The users' datapaths, ("user:<name>", factory) in ernic_user_datapath()
// call order: generated by CMake (cmake/ErnicUserDatapath.cmake) into the
// build tree and compiled into ernic_model; empty when there are none.
std::vector<std::pair<std::string, DatapathFactory>> user_datapath_factories();

// Builtin factories (rtl_datapath.cpp, model_datapath.cpp).
std::unique_ptr<RoceDatapath> make_rtl_datapath(sc_core::sc_module_name name, const ClockDomain& core,
                                            const ClockDomain& cmac, SimContext& ctx, const std::string& scope,
                                            const DatapathConfig& cfg);
std::unique_ptr<RoceDatapath> make_model_datapath(sc_core::sc_module_name name, const ClockDomain& core,
                                              const ClockDomain& cmac, SimContext& ctx, const std::string& scope,
                                              const DatapathConfig& cfg);

}  // namespace ernic
