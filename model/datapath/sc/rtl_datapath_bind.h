// model/datapath/sc: a Verilated --cc top with roce_datapath's ports
// (rtl/datapath/roce_datapath.sv), its ports bound for RtlDatapath. Include the
// top's header (V<name>.h and V<name>___024root.h) first; then
//
//   register_datapath("user:mine", [](auto name, auto& core, auto& cmac, auto& ctx, auto& scope, auto& cfg) {
//     return std::make_unique<RtlDatapath>(name, core, cmac, ctx, scope, cfg,
//                                          &bind_roce_datapath<Vmine>, "user:mine");
//   });
//
// makes another top (e.g. one Verilated with -DROCE_RX_MODULE=roce_rx_alt)
// a datapath by name. CMake's ernic_user_datapath() (cmake/
// ErnicUserDatapath.cmake) Verilates such a top and generates this for it. The top must have the ports and the internal signals
// tx_tvalid/tx_tready/tx_tdata/tx_tkeep/tx_tlast (public_flat_rd) of
// roce_datapath.sv.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>

#include "model/datapath/sc/rtl_datapath.h"
#if ERNIC_RTL_TRACE
#include <verilated_vcd_sc.h>
#endif

namespace ernic {

namespace rtl_bind_detail {
// Verilator 5.006's record of a clock's value at the last eval (the root's
// __Vtrigrprev__TOP__<clock>), found when the top has one.
template <class R, class = void>
struct HasClockRecord : std::false_type {};
template <class R>
struct HasClockRecord<R, std::void_t<decltype(std::declval<R&>().__Vtrigrprev__TOP__core_clk),
                                     decltype(std::declval<R&>().__Vtrigrprev__TOP__cmac_clk)>> : std::true_type {};
}  // namespace rtl_bind_detail

// Builds a Verilated --cc top with roce_datapath's ports and binds the
// ports to its fields. `name`: the instance name (the VCD scope), in full.
template <class V>
RoceDatapathTop bind_roce_datapath(const char* name, RoceDatapathPorts& p) {
  auto v = std::make_shared<V>(name);
  V& m = *v;
  p.core_clk.bind(m.core_clk);
  p.core_rst_n.bind(m.core_rst_n);
  p.cfg_udp_sport.bind(m.cfg_udp_sport);
  p.s_desc_valid.bind(m.s_desc_valid);
  p.s_desc_ready.bind(m.s_desc_ready);
#define ERNIC_W(port, n) p.port##_w[n].bind(m.port##_w##n)
#define ERNIC_W8(port)                                                                                   \
  ERNIC_W(port, 0); ERNIC_W(port, 1); ERNIC_W(port, 2); ERNIC_W(port, 3); ERNIC_W(port, 4); ERNIC_W(port, 5); \
  ERNIC_W(port, 6); ERNIC_W(port, 7)
  ERNIC_W8(s_desc);
  ERNIC_W(s_desc, 8); ERNIC_W(s_desc, 9); ERNIC_W(s_desc, 10); ERNIC_W(s_desc, 11);
  p.s_pay_tvalid.bind(m.s_pay_tvalid);
  p.s_pay_tready.bind(m.s_pay_tready);
  ERNIC_W8(s_pay_tdata);
  p.s_pay_tkeep.bind(m.s_pay_tkeep);
  p.s_pay_tlast.bind(m.s_pay_tlast);
  p.m_desc_valid.bind(m.m_desc_valid);
  ERNIC_W8(m_desc);
  ERNIC_W(m_desc, 8); ERNIC_W(m_desc, 9); ERNIC_W(m_desc, 10); ERNIC_W(m_desc, 11);
  ERNIC_W(m_desc, 12); ERNIC_W(m_desc, 13); ERNIC_W(m_desc, 14); ERNIC_W(m_desc, 15);
  p.m_pay_tvalid.bind(m.m_pay_tvalid);
  ERNIC_W8(m_pay_tdata);
  p.m_pay_tkeep.bind(m.m_pay_tkeep);
  p.m_pay_tlast.bind(m.m_pay_tlast);
  p.m_byp_tvalid.bind(m.m_byp_tvalid);
  ERNIC_W8(m_byp_tdata);
  p.m_byp_tkeep.bind(m.m_byp_tkeep);
  p.m_byp_tlast.bind(m.m_byp_tlast);
  p.cmac_clk.bind(m.cmac_clk);
  p.cmac_rst_n.bind(m.cmac_rst_n);
  p.m_cmac_tvalid.bind(m.m_cmac_tvalid);
  p.m_cmac_tready.bind(m.m_cmac_tready);
  ERNIC_W8(m_cmac_tdata);
  p.m_cmac_tkeep.bind(m.m_cmac_tkeep);
  p.m_cmac_tlast.bind(m.m_cmac_tlast);
  p.s_cmac_tvalid.bind(m.s_cmac_tvalid);
  p.s_cmac_tready.bind(m.s_cmac_tready);
  ERNIC_W8(s_cmac_tdata);
  p.s_cmac_tkeep.bind(m.s_cmac_tkeep);
  p.s_cmac_tlast.bind(m.s_cmac_tlast);
  p.s_cmac_tuser.bind(m.s_cmac_tuser);
  p.seed.bind(m.seed);
  p.meta_events.bind(m.meta_events);
#undef ERNIC_W8
#undef ERNIC_W
  RoceDatapathTop t;
  V* raw = v.get();
  t.eval = [raw] { raw->eval(); };
#if ERNIC_RTL_TRACE
  t.trace = [raw](VerilatedVcdSc* tf, int levels) { raw->trace(tf, levels); };
#endif
  t.tx_seam = [raw](TxSeamBeat& b) {
    const auto* r = raw->rootp;
    if (!r->roce_datapath__DOT__tx_tvalid || !r->roce_datapath__DOT__tx_tready) return false;
    for (int w = 0; w < 16; ++w) {
      const uint32_t x = r->roce_datapath__DOT__tx_tdata[w];
      for (int k = 0; k < 4; ++k) b.data[w * 4 + k] = uint8_t(x >> (8 * k));
    }
    b.keep = r->roce_datapath__DOT__tx_tkeep;
    b.last = r->roce_datapath__DOT__tx_tlast;
    return true;
  };
  using Root = std::remove_pointer_t<decltype(raw->rootp)>;
  if constexpr (rtl_bind_detail::HasClockRecord<Root>::value)
    t.fell = [raw](bool core, bool cmac) {
      if (core) raw->rootp->__Vtrigrprev__TOP__core_clk = 0;
      if (cmac) raw->rootp->__Vtrigrprev__TOP__cmac_clk = 0;
    };
  t.model = std::move(v);
  return t;
}

}  // namespace ernic
