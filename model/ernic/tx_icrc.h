// model/ernic: the TX datapath's ICRC stage, the Verilated rtl/icrc block in
// the loop (see rtl/README.md for its seam). A frame (Ethernet header .. last
// payload/pad byte, no ICRC) is streamed as 512-bit beats, one per core
// cycle, on a clock that this wrapper only toggles while a frame is in
// flight (a gated clock: an idle datapath costs no evaluation). With idle
// skipping off (free_running) a clock thread toggles it every core cycle
// instead and the RTL sees idle cycles too; the results and their timing
// are the same. Either way the input beat is written at a core edge and
// the RTL's rising clock edge comes half a period later. The RTL's
// result is returned; the caller appends it and cross-checks it against
// the C++ reference (roce::compute_icrc).
//
// The stream into the RTL (s_valid/s_ready/s_data/s_keep/s_last, reset) is
// checked by an AXI4-Stream protocol monitor (<name>.s_axis, core cycles,
// model/monitor). Randomised handshakes (`handshake_random`): s_valid held
// low for random cycles before a beat (stream <name>.s_axis.tvalid); the
// gated clock runs through them, the result is the same.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>

#include "model/system/clock.h"
#include "model/system/sim_context.h"

class Vicrc;

namespace ernic {

class TxIcrc : public sc_core::sc_module {
 public:
  // rtl/icrc raises crc_valid in the cycle after the edge that took the last
  // beat, so the result is sampled at the next edge: a frame of B beats costs
  // B cycles from its first beat to the edge where its ICRC is taken.
  static uint64_t cycles_for(size_t len) { return (len + 63) / 64; }
  SC_HAS_PROCESS(TxIcrc);
  TxIcrc(sc_core::sc_module_name name, const ClockDomain& core, SimContext& ctx, bool free_running = false);
  ~TxIcrc() override;
  // Blocks the calling thread for ceil(len/64) beats plus the RTL latency.
  uint32_t compute(const uint8_t* frame, size_t len);
  Vicrc& rtl() { return *rtl_; }
  uint64_t cycles_clocked() const { return cycles_; }

 private:
  void tick();  // one core cycle: a pulse of the gated clock, or a wait for the free-running one
  void reset_thread();
  void clock_thread();  // free-running only
  bool free_running_ = false;
  const ClockDomain& core_;
  SimContext& ctx_;
  // Driven by the reset thread at time 0 and by whichever thread streams frames.
  using Wire1 = sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS>;
  Wire1 clk_{"clk"}, rst_n_{"rst_n"}, s_valid_{"s_valid"}, s_last_{"s_last"};
  sc_core::sc_signal<bool> s_ready_{"s_ready"}, crc_valid_{"crc_valid"};
  sc_core::sc_signal<sc_dt::sc_bv<512>> s_data_{"s_data"};
  sc_core::sc_signal<uint64_t> s_keep_{"s_keep"};
  sc_core::sc_signal<uint32_t> crc_{"crc"};
  std::unique_ptr<Vicrc> rtl_;
  bool reset_done_ = false;
  uint64_t cycles_ = 0;
  monitor::AxisMonitor* mon_ = nullptr;
  monitor::HandshakeStall rnd_valid_;
};

}  // namespace ernic
