// model/datapath/sc: binding a Verilated top with roce_datapath's ports
// (rtl/datapath/roce_datapath.sv) to RtlDatapath's signals. Include the
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

#include "model/datapath/sc/rtl_datapath.h"
#if ERNIC_RTL_TRACE
#include <verilated_vcd_sc.h>
#endif

namespace ernic {

// Binds a Verilated top with roce_datapath's ports to the signals.
template <class V>
RoceDatapathTop bind_roce_datapath(const char* name, RoceDatapathPorts& p) {
  auto v = std::make_unique<V>(name);
  V& m = *v;
  m.core_clk(p.core_clk);
  m.core_rst_n(p.core_rst_n);
  m.cfg_udp_sport(p.cfg_udp_sport);
  m.s_desc_valid(p.s_desc_valid);
  m.s_desc_ready(p.s_desc_ready);
#define ERNIC_W(port, n) m.port##_w##n(p.port##_w[n])
#define ERNIC_W8(port)                                                                                   \
  ERNIC_W(port, 0); ERNIC_W(port, 1); ERNIC_W(port, 2); ERNIC_W(port, 3); ERNIC_W(port, 4); ERNIC_W(port, 5); \
  ERNIC_W(port, 6); ERNIC_W(port, 7)
  ERNIC_W8(s_desc);
  ERNIC_W(s_desc, 8); ERNIC_W(s_desc, 9); ERNIC_W(s_desc, 10); ERNIC_W(s_desc, 11);
  m.s_pay_tvalid(p.s_pay_tvalid);
  m.s_pay_tready(p.s_pay_tready);
  ERNIC_W8(s_pay_tdata);
  m.s_pay_tkeep(p.s_pay_tkeep);
  m.s_pay_tlast(p.s_pay_tlast);
  m.m_desc_valid(p.m_desc_valid);
  ERNIC_W8(m_desc);
  ERNIC_W(m_desc, 8); ERNIC_W(m_desc, 9); ERNIC_W(m_desc, 10); ERNIC_W(m_desc, 11);
  ERNIC_W(m_desc, 12); ERNIC_W(m_desc, 13); ERNIC_W(m_desc, 14); ERNIC_W(m_desc, 15);
  m.m_pay_tvalid(p.m_pay_tvalid);
  ERNIC_W8(m_pay_tdata);
  m.m_pay_tkeep(p.m_pay_tkeep);
  m.m_pay_tlast(p.m_pay_tlast);
  m.m_byp_tvalid(p.m_byp_tvalid);
  ERNIC_W8(m_byp_tdata);
  m.m_byp_tkeep(p.m_byp_tkeep);
  m.m_byp_tlast(p.m_byp_tlast);
  m.cmac_clk(p.cmac_clk);
  m.cmac_rst_n(p.cmac_rst_n);
  m.m_cmac_tvalid(p.m_cmac_tvalid);
  m.m_cmac_tready(p.m_cmac_tready);
  ERNIC_W8(m_cmac_tdata);
  m.m_cmac_tkeep(p.m_cmac_tkeep);
  m.m_cmac_tlast(p.m_cmac_tlast);
  m.s_cmac_tvalid(p.s_cmac_tvalid);
  m.s_cmac_tready(p.s_cmac_tready);
  ERNIC_W8(s_cmac_tdata);
  m.s_cmac_tkeep(p.s_cmac_tkeep);
  m.s_cmac_tlast(p.s_cmac_tlast);
  m.s_cmac_tuser(p.s_cmac_tuser);
  m.seed(p.seed);
  m.meta_events(p.meta_events);
#undef ERNIC_W8
#undef ERNIC_W
  RoceDatapathTop t;
  V* raw = v.get();
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
  t.model = std::move(v);
  return t;
}

}  // namespace ernic
