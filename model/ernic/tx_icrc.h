// model/ernic: the TX datapath's ICRC stage, the Verilated rtl/icrc block in
// the loop (see rtl/README.md for its seam). A frame (Ethernet header .. last
// payload/pad byte, no ICRC) is streamed as 512-bit beats, one per core
// cycle, on a clock that this wrapper only toggles while a frame is in
// flight (a gated clock: an idle datapath costs no evaluation). The RTL's
// result is returned; the caller appends it and cross-checks it against
// the C++ reference (roce::compute_icrc).
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
  TxIcrc(sc_core::sc_module_name name, const ClockDomain& core, SimContext& ctx);
  ~TxIcrc() override;
  // Blocks the calling thread for ceil(len/64) beats plus the RTL latency.
  uint32_t compute(const uint8_t* frame, size_t len);
  Vicrc& rtl() { return *rtl_; }
  uint64_t cycles_clocked() const { return cycles_; }

 private:
  void tick();  // one rising and falling edge of the gated clock
  const ClockDomain& core_;
  SimContext& ctx_;
  sc_core::sc_signal<bool> clk_{"clk"}, rst_n_{"rst_n"}, s_valid_{"s_valid"}, s_last_{"s_last"},
      s_ready_{"s_ready"}, crc_valid_{"crc_valid"};
  sc_core::sc_signal<sc_dt::sc_bv<512>> s_data_{"s_data"};
  sc_core::sc_signal<uint64_t> s_keep_{"s_keep"};
  sc_core::sc_signal<uint32_t> crc_{"crc"};
  std::unique_ptr<Vicrc> rtl_;
  bool reset_done_ = false;
  uint64_t cycles_ = 0;
};

}  // namespace ernic
