`timescale 1ps/1ps
// rtl/cdc/cdc_fifo_tb.sv: test top for tb/rtl/test_cdc_rtl.cpp.
// axis_async_fifo with DEPTH 128, two synchroniser stages, 50 ps aperture;
// ports are the FIFO's. rtl/CMakeLists.txt Verilates it three times with -G:
//   Vcdc_fifo_gray_tb     GRAY 1, PACKET 0  Gray pointers, stream mode (the crossing under test)
//   Vcdc_fifo_pkt_tb      GRAY 1, PACKET 1  Gray pointers, packet mode (core clock -> CMAC TX)
//   Vcdc_fifo_bin_pkt_tb  GRAY 0, PACKET 1  binary pointers, packet mode (the negative control)
module cdc_fifo_tb #(
  parameter integer GRAY   = 1,
  parameter integer PACKET = 0
) (
  input  logic         s_clk,
  input  logic         s_rst_n,
  input  logic         s_axis_tvalid,
  output logic         s_axis_tready,
  input  logic [511:0] s_axis_tdata,
  input  logic [63:0]  s_axis_tkeep,
  input  logic         s_axis_tlast,
  input  logic         s_axis_tuser,
  input  logic         m_clk,
  input  logic         m_rst_n,
  output logic         m_axis_tvalid,
  input  logic         m_axis_tready,
  output logic [511:0] m_axis_tdata,
  output logic [63:0]  m_axis_tkeep,
  output logic         m_axis_tlast,
  output logic         m_axis_tuser,
  input  logic [31:0]  seed,
  output logic [31:0]  s_meta_events,
  output logic [31:0]  m_meta_events
);
  axis_async_fifo #(
    .DEPTH(128), .SYNC_STAGES(2), .GRAY(GRAY), .PACKET(PACKET), .APERTURE_PS(50)
  ) u_fifo (
    .s_clk(s_clk), .s_rst_n(s_rst_n), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready), .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep),
    .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .m_clk(m_clk), .m_rst_n(m_rst_n), .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready), .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep),
    .m_axis_tlast(m_axis_tlast), .m_axis_tuser(m_axis_tuser),
    .seed(seed), .s_meta_events(s_meta_events), .m_meta_events(m_meta_events));
endmodule
