`timescale 1ps/1ps
// rtl/datapath/roce_datapath.sv: the FPGA RoCEv2 datapath of one node, the
// one Verilated top that the simulator puts between the ERNIC model and the
// CMAC model (model/datapath/sc/rtl_datapath.h):
//
//   core clock                              | CMAC clock (322.265625 MHz)
//   s_desc + s_pay -> roce_tx -> axis_async_fifo (PACKET) -> m_cmac (CMAC TX)
//   m_desc + m_pay <- roce_rx <- axis_async_fifo <- s_cmac (CMAC RX)
//            m_byp <-/
//
// The 512-bit and descriptor buses between the blocks stay inside (a write
// of a wide SystemC port costs a conversion per evaluation); towards C++
// every bus is cut into 64-bit words: <bus>_w<i> = bits [64i+63:64i] (byte
// order as rtl/SEAM.md: byte j of a beat is word j/8, bits 8(j%8)+7..).
// The word ports are not traced (the waveform has the whole buses inside:
// u_tx.s_desc, u_tx.s_pay_tdata, m_cmac_tdata, u_rx.m_desc, ...).
// The internal seam streams (tx_* roce_tx -> FIFO, rx_* FIFO -> roce_rx)
// are public to C++ for protocol monitors (verilator public_flat_rd).
//
// Ports (rtl/SEAM.md has the protocol of each stream and descriptor)
//   core_clk, core_rst_n     roce_tx, roce_rx and each FIFO's core side;
//                            synchronous reset, active low
//   cfg_udp_sport            roce_tx's UDP source port
//   s_desc_*                 TX descriptor, valid/ready, w0..w11 = 768 bits
//   s_pay_*                  TX payload, AXI4-Stream
//   m_desc_*                 RX descriptor pulse, w0..w15 = 1024 bits
//   m_pay_*, m_byp_*         RX payload and bypass streams (no tready)
//   cmac_clk, cmac_rst_n     each FIFO's CMAC side
//   m_cmac_*                 frames to the CMAC (AXI4-Stream with tready);
//                            PACKET mode: a frame leaves only when whole,
//                            one beat a cycle while tready is high
//   s_cmac_*                 frames from the CMAC (no backpressure: the
//                            FIFO must never be full; s_cmac_tready shows
//                            it, a beat with s_cmac_tready low is lost)
//   seed                     the synchronisers' metastability model seed
//                            (rtl/cdc/sync_cell), sampled in reset
//   meta_events              captures in the aperture so far, both FIFOs
//
// Which roce_tx / roce_rx: the macros ROCE_TX_MODULE / ROCE_RX_MODULE
// (default roce_tx / roce_rx) name the module instantiated, so that a
// user's block with the seam's ports builds another top from this file
// (verilator -DROCE_RX_MODULE=roce_rx_alt; rtl/CMakeLists.txt).
`include "seam.vh"
`ifndef ROCE_TX_MODULE
`define ROCE_TX_MODULE roce_tx
`endif
`ifndef ROCE_RX_MODULE
`define ROCE_RX_MODULE roce_rx
`endif

module roce_datapath #(
  parameter integer TX_FIFO_DEPTH = 256,  // beats; holds the largest frame (PACKET mode)
  parameter integer RX_FIFO_DEPTH = 128,  // beats; absorbs a frame's CMAC-rate burst
  parameter integer SYNC_STAGES   = 2,
  parameter [31:0]  APERTURE_PS   = 32'd0 // sync_cell aperture (ps); 0 = plain flops
) (
  input  logic         core_clk,
  input  logic         core_rst_n,
  input  logic [15:0]  cfg_udp_sport,
  input  logic         s_desc_valid,
  output logic         s_desc_ready,
  /*verilator tracing_off*/
  input  logic [63:0]  s_desc_w0,
  input  logic [63:0]  s_desc_w1,
  input  logic [63:0]  s_desc_w2,
  input  logic [63:0]  s_desc_w3,
  input  logic [63:0]  s_desc_w4,
  input  logic [63:0]  s_desc_w5,
  input  logic [63:0]  s_desc_w6,
  input  logic [63:0]  s_desc_w7,
  input  logic [63:0]  s_desc_w8,
  input  logic [63:0]  s_desc_w9,
  input  logic [63:0]  s_desc_w10,
  input  logic [63:0]  s_desc_w11,
  /*verilator tracing_on*/
  input  logic         s_pay_tvalid,
  output logic         s_pay_tready,
  /*verilator tracing_off*/
  input  logic [63:0]  s_pay_tdata_w0,
  input  logic [63:0]  s_pay_tdata_w1,
  input  logic [63:0]  s_pay_tdata_w2,
  input  logic [63:0]  s_pay_tdata_w3,
  input  logic [63:0]  s_pay_tdata_w4,
  input  logic [63:0]  s_pay_tdata_w5,
  input  logic [63:0]  s_pay_tdata_w6,
  input  logic [63:0]  s_pay_tdata_w7,
  /*verilator tracing_on*/
  input  logic [63:0]  s_pay_tkeep,
  input  logic         s_pay_tlast,
  output logic         m_desc_valid,
  /*verilator tracing_off*/
  output logic [63:0]  m_desc_w0,
  output logic [63:0]  m_desc_w1,
  output logic [63:0]  m_desc_w2,
  output logic [63:0]  m_desc_w3,
  output logic [63:0]  m_desc_w4,
  output logic [63:0]  m_desc_w5,
  output logic [63:0]  m_desc_w6,
  output logic [63:0]  m_desc_w7,
  output logic [63:0]  m_desc_w8,
  output logic [63:0]  m_desc_w9,
  output logic [63:0]  m_desc_w10,
  output logic [63:0]  m_desc_w11,
  output logic [63:0]  m_desc_w12,
  output logic [63:0]  m_desc_w13,
  output logic [63:0]  m_desc_w14,
  output logic [63:0]  m_desc_w15,
  /*verilator tracing_on*/
  output logic         m_pay_tvalid,
  /*verilator tracing_off*/
  output logic [63:0]  m_pay_tdata_w0,
  output logic [63:0]  m_pay_tdata_w1,
  output logic [63:0]  m_pay_tdata_w2,
  output logic [63:0]  m_pay_tdata_w3,
  output logic [63:0]  m_pay_tdata_w4,
  output logic [63:0]  m_pay_tdata_w5,
  output logic [63:0]  m_pay_tdata_w6,
  output logic [63:0]  m_pay_tdata_w7,
  /*verilator tracing_on*/
  output logic [63:0]  m_pay_tkeep,
  output logic         m_pay_tlast,
  output logic         m_byp_tvalid,
  /*verilator tracing_off*/
  output logic [63:0]  m_byp_tdata_w0,
  output logic [63:0]  m_byp_tdata_w1,
  output logic [63:0]  m_byp_tdata_w2,
  output logic [63:0]  m_byp_tdata_w3,
  output logic [63:0]  m_byp_tdata_w4,
  output logic [63:0]  m_byp_tdata_w5,
  output logic [63:0]  m_byp_tdata_w6,
  output logic [63:0]  m_byp_tdata_w7,
  /*verilator tracing_on*/
  output logic [63:0]  m_byp_tkeep,
  output logic         m_byp_tlast,

  input  logic         cmac_clk,
  input  logic         cmac_rst_n,
  output logic         m_cmac_tvalid,
  input  logic         m_cmac_tready,
  /*verilator tracing_off*/
  output logic [63:0]  m_cmac_tdata_w0,
  output logic [63:0]  m_cmac_tdata_w1,
  output logic [63:0]  m_cmac_tdata_w2,
  output logic [63:0]  m_cmac_tdata_w3,
  output logic [63:0]  m_cmac_tdata_w4,
  output logic [63:0]  m_cmac_tdata_w5,
  output logic [63:0]  m_cmac_tdata_w6,
  output logic [63:0]  m_cmac_tdata_w7,
  /*verilator tracing_on*/
  output logic [63:0]  m_cmac_tkeep,
  output logic         m_cmac_tlast,
  input  logic         s_cmac_tvalid,
  output logic         s_cmac_tready,
  /*verilator tracing_off*/
  input  logic [63:0]  s_cmac_tdata_w0,
  input  logic [63:0]  s_cmac_tdata_w1,
  input  logic [63:0]  s_cmac_tdata_w2,
  input  logic [63:0]  s_cmac_tdata_w3,
  input  logic [63:0]  s_cmac_tdata_w4,
  input  logic [63:0]  s_cmac_tdata_w5,
  input  logic [63:0]  s_cmac_tdata_w6,
  input  logic [63:0]  s_cmac_tdata_w7,
  /*verilator tracing_on*/
  input  logic [63:0]  s_cmac_tkeep,
  input  logic         s_cmac_tlast,
  input  logic         s_cmac_tuser,

  input  logic [31:0]  seed,
  output logic [63:0]  meta_events
);

  // ---- TX: roce_tx -> async FIFO (core -> CMAC, PACKET) ------------------
  logic         tx_tvalid /*verilator public_flat_rd*/;
  logic         tx_tready /*verilator public_flat_rd*/;
  logic [511:0] tx_tdata  /*verilator public_flat_rd*/;
  logic [63:0]  tx_tkeep  /*verilator public_flat_rd*/;
  logic         tx_tlast  /*verilator public_flat_rd*/;
  logic [511:0] m_cmac_tdata;
  logic         m_cmac_tuser;
  logic [31:0]  txf_s_meta, txf_m_meta;

  `ROCE_TX_MODULE u_tx (
    .clk(core_clk), .rst_n(core_rst_n),
    .s_desc_valid(s_desc_valid), .s_desc_ready(s_desc_ready), .s_desc({s_desc_w11, s_desc_w10, s_desc_w9, s_desc_w8, s_desc_w7, s_desc_w6, s_desc_w5, s_desc_w4, s_desc_w3, s_desc_w2, s_desc_w1, s_desc_w0}),
    .s_pay_tvalid(s_pay_tvalid), .s_pay_tready(s_pay_tready), .s_pay_tdata({s_pay_tdata_w7, s_pay_tdata_w6, s_pay_tdata_w5, s_pay_tdata_w4, s_pay_tdata_w3, s_pay_tdata_w2, s_pay_tdata_w1, s_pay_tdata_w0}),
    .s_pay_tkeep(s_pay_tkeep), .s_pay_tlast(s_pay_tlast),
    .cfg_udp_sport(cfg_udp_sport),
    .m_axis_tvalid(tx_tvalid), .m_axis_tready(tx_tready), .m_axis_tdata(tx_tdata),
    .m_axis_tkeep(tx_tkeep), .m_axis_tlast(tx_tlast));

  axis_async_fifo #(
    .DEPTH(TX_FIFO_DEPTH), .SYNC_STAGES(SYNC_STAGES), .GRAY(1), .PACKET(1),
    .APERTURE_PS(APERTURE_PS), .SEED_SALT(32'h7478_0000)
  ) u_tx_fifo (
    .s_clk(core_clk), .s_rst_n(core_rst_n),
    .s_axis_tvalid(tx_tvalid), .s_axis_tready(tx_tready), .s_axis_tdata(tx_tdata),
    .s_axis_tkeep(tx_tkeep), .s_axis_tlast(tx_tlast), .s_axis_tuser(1'b0),
    .m_clk(cmac_clk), .m_rst_n(cmac_rst_n),
    .m_axis_tvalid(m_cmac_tvalid), .m_axis_tready(m_cmac_tready), .m_axis_tdata(m_cmac_tdata),
    .m_axis_tkeep(m_cmac_tkeep), .m_axis_tlast(m_cmac_tlast), .m_axis_tuser(m_cmac_tuser),
    .seed(seed), .s_meta_events(txf_s_meta), .m_meta_events(txf_m_meta));
  assign m_cmac_tdata_w0 = m_cmac_tdata[63:0];
  assign m_cmac_tdata_w1 = m_cmac_tdata[127:64];
  assign m_cmac_tdata_w2 = m_cmac_tdata[191:128];
  assign m_cmac_tdata_w3 = m_cmac_tdata[255:192];
  assign m_cmac_tdata_w4 = m_cmac_tdata[319:256];
  assign m_cmac_tdata_w5 = m_cmac_tdata[383:320];
  assign m_cmac_tdata_w6 = m_cmac_tdata[447:384];
  assign m_cmac_tdata_w7 = m_cmac_tdata[511:448];

  // ---- RX: async FIFO (CMAC -> core) -> roce_rx --------------------------
  logic         rx_tvalid /*verilator public_flat_rd*/;
  logic [511:0] rx_tdata  /*verilator public_flat_rd*/;
  logic [63:0]  rx_tkeep  /*verilator public_flat_rd*/;
  logic         rx_tlast  /*verilator public_flat_rd*/;
  logic         rx_tuser  /*verilator public_flat_rd*/;
  logic [1023:0] m_desc;
  logic [511:0] m_pay_tdata, m_byp_tdata;
  logic [31:0]  rxf_s_meta, rxf_m_meta;

  axis_async_fifo #(
    .DEPTH(RX_FIFO_DEPTH), .SYNC_STAGES(SYNC_STAGES), .GRAY(1), .PACKET(0),
    .APERTURE_PS(APERTURE_PS), .SEED_SALT(32'h7278_0000)
  ) u_rx_fifo (
    .s_clk(cmac_clk), .s_rst_n(cmac_rst_n),
    .s_axis_tvalid(s_cmac_tvalid), .s_axis_tready(s_cmac_tready), .s_axis_tdata({s_cmac_tdata_w7, s_cmac_tdata_w6, s_cmac_tdata_w5, s_cmac_tdata_w4, s_cmac_tdata_w3, s_cmac_tdata_w2, s_cmac_tdata_w1, s_cmac_tdata_w0}),
    .s_axis_tkeep(s_cmac_tkeep), .s_axis_tlast(s_cmac_tlast), .s_axis_tuser(s_cmac_tuser),
    .m_clk(core_clk), .m_rst_n(core_rst_n),
    .m_axis_tvalid(rx_tvalid), .m_axis_tready(1'b1), .m_axis_tdata(rx_tdata),
    .m_axis_tkeep(rx_tkeep), .m_axis_tlast(rx_tlast), .m_axis_tuser(rx_tuser),
    .seed(seed), .s_meta_events(rxf_s_meta), .m_meta_events(rxf_m_meta));

  `ROCE_RX_MODULE u_rx (
    .clk(core_clk), .rst_n(core_rst_n),
    .s_axis_tvalid(rx_tvalid), .s_axis_tdata(rx_tdata), .s_axis_tkeep(rx_tkeep),
    .s_axis_tlast(rx_tlast), .s_axis_tuser(rx_tuser),
    .m_desc_valid(m_desc_valid), .m_desc(m_desc),
    .m_pay_tvalid(m_pay_tvalid), .m_pay_tdata(m_pay_tdata), .m_pay_tkeep(m_pay_tkeep),
    .m_pay_tlast(m_pay_tlast),
    .m_byp_tvalid(m_byp_tvalid), .m_byp_tdata(m_byp_tdata), .m_byp_tkeep(m_byp_tkeep),
    .m_byp_tlast(m_byp_tlast));
  assign m_desc_w0 = m_desc[63:0];
  assign m_desc_w1 = m_desc[127:64];
  assign m_desc_w2 = m_desc[191:128];
  assign m_desc_w3 = m_desc[255:192];
  assign m_desc_w4 = m_desc[319:256];
  assign m_desc_w5 = m_desc[383:320];
  assign m_desc_w6 = m_desc[447:384];
  assign m_desc_w7 = m_desc[511:448];
  assign m_desc_w8 = m_desc[575:512];
  assign m_desc_w9 = m_desc[639:576];
  assign m_desc_w10 = m_desc[703:640];
  assign m_desc_w11 = m_desc[767:704];
  assign m_desc_w12 = m_desc[831:768];
  assign m_desc_w13 = m_desc[895:832];
  assign m_desc_w14 = m_desc[959:896];
  assign m_desc_w15 = m_desc[1023:960];
  assign m_pay_tdata_w0 = m_pay_tdata[63:0];
  assign m_pay_tdata_w1 = m_pay_tdata[127:64];
  assign m_pay_tdata_w2 = m_pay_tdata[191:128];
  assign m_pay_tdata_w3 = m_pay_tdata[255:192];
  assign m_pay_tdata_w4 = m_pay_tdata[319:256];
  assign m_pay_tdata_w5 = m_pay_tdata[383:320];
  assign m_pay_tdata_w6 = m_pay_tdata[447:384];
  assign m_pay_tdata_w7 = m_pay_tdata[511:448];
  assign m_byp_tdata_w0 = m_byp_tdata[63:0];
  assign m_byp_tdata_w1 = m_byp_tdata[127:64];
  assign m_byp_tdata_w2 = m_byp_tdata[191:128];
  assign m_byp_tdata_w3 = m_byp_tdata[255:192];
  assign m_byp_tdata_w4 = m_byp_tdata[319:256];
  assign m_byp_tdata_w5 = m_byp_tdata[383:320];
  assign m_byp_tdata_w6 = m_byp_tdata[447:384];
  assign m_byp_tdata_w7 = m_byp_tdata[511:448];

  assign meta_events = {32'd0, txf_s_meta} + {32'd0, txf_m_meta} + {32'd0, rxf_s_meta} + {32'd0, rxf_m_meta};

  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_tx_tuser = m_cmac_tuser;  // the TX FIFO carries no tuser
  /* verilator lint_on UNUSEDSIGNAL */

endmodule
