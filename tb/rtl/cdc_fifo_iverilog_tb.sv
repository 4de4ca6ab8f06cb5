`timescale 1ps/1ps
// tb/rtl/cdc_fifo_iverilog_tb.sv: Icarus Verilog testbench for the CDC FIFO
// test top (rtl/cdc/cdc_fifo_tb.sv, Gray stream and Gray packet), the twin of
// the SystemC bench in tb/rtl/test_cdc_rtl.cpp (Bench, Write::Random, hash
// stream): same clocks, resets, stimulus generators and beat contents,
// edge for edge. It logs every read-side transfer ("time_ps word0 word15
// keep last user") and, at the end, "meta <write side> <read side>";
// CdcRtl.SameInIcarusAsInVerilator compares the logs with the Verilated
// run's. Not part of rtl/ (it has delays): compiled by that test only.
//
//   iverilog -g2012 -o tb.vvp tb/rtl/cdc_fifo_iverilog_tb.sv rtl/cdc/*.sv
//   vvp -n tb.vvp +out_stream=a.log +out_packet=b.log

// murmur3's finaliser (sync_cell's mix32) and xorshift32, as in the C++.
`define CDC_TB_FUNCS \
  function automatic [31:0] mix32(input [31:0] x); \
    reg [31:0] h; \
    begin \
      h = x ^ (x >> 16); h = h * 32'h85EBCA6B; h = h ^ (h >> 13); \
      h = h * 32'hC2B2AE35; h = h ^ (h >> 16); \
      mix32 = (h == 32'd0) ? 32'h6D2B79F5 : h; \
    end \
  endfunction \
  function automatic [31:0] xs32(input [31:0] x); \
    reg [31:0] y; \
    begin y = x ^ (x << 13); y = y ^ (y >> 17); y = y ^ (y << 5); xs32 = y; end \
  endfunction

module cdc_iv_bench #(
  parameter integer PACKET   = 0,
  parameter integer NBEATS   = 5000,
  parameter [31:0]  SEED     = 32'd7,
  parameter integer S_PERIOD = 4000,
  parameter integer M_PERIOD = 3103,
  parameter integer S_START  = 1000,
  parameter integer M_START  = 1717,
  parameter integer P_VALID  = 240,
  parameter integer P_VALID_OFF = 80,
  parameter integer P_READY  = 218
) (
  output reg done
);
  `CDC_TB_FUNCS

  localparam integer RESET_EDGES = 6;
  localparam integer TW_S = S_START + 2 * RESET_EDGES * S_PERIOD;
  localparam integer TW_M = M_START + 2 * RESET_EDGES * M_PERIOD;
  localparam integer T_WRITES = TW_S > TW_M ? TW_S : TW_M;

  reg s_clk = 1'b0, m_clk = 1'b0;
  reg s_rst_n = 1'b0, m_rst_n = 1'b0;
  reg s_valid = 1'b0, s_last = 1'b0, s_user = 1'b0, m_ready = 1'b0;
  reg [511:0] s_data = 512'd0;
  reg [63:0] s_keep = 64'd0;
  wire s_ready, m_valid, m_last, m_user;
  wire [511:0] m_data;
  wire [63:0] m_keep;
  wire [31:0] s_meta, m_meta;

  cdc_fifo_tb #(.GRAY(1), .PACKET(PACKET != 0 ? 1 : 0)) dut(
    .s_clk(s_clk), .s_rst_n(s_rst_n), .s_axis_tvalid(s_valid), .s_axis_tready(s_ready),
    .s_axis_tdata(s_data), .s_axis_tkeep(s_keep), .s_axis_tlast(s_last),
    .s_axis_tuser(s_user), .m_clk(m_clk), .m_rst_n(m_rst_n), .m_axis_tvalid(m_valid),
    .m_axis_tready(m_ready), .m_axis_tdata(m_data), .m_axis_tkeep(m_keep),
    .m_axis_tlast(m_last), .m_axis_tuser(m_user), .seed(SEED),
    .s_meta_events(s_meta), .m_meta_events(m_meta));

  // sc_clock(period, 0.5, start, posedge_first): rising edges at start + n*period.
  initial begin
    #(S_START);
    forever begin s_clk = 1'b1; #(S_PERIOD / 2); s_clk = 1'b0; #(S_PERIOD - S_PERIOD / 2); end
  end
  initial begin
    #(M_START);
    forever begin m_clk = 1'b1; #(M_PERIOD / 2); m_clk = 1'b0; #(M_PERIOD - M_PERIOD / 2); end
  end

  reg [31:0] salt, ws, rs;
  reg burst;
  integer s_edges = 0, m_edges = 0;
  integer k_tx = 0, received = 0;
  integer fd;
  initial begin
    salt = mix32(SEED ^ 32'h5EED);
    ws = mix32(SEED ^ 32'hA5A5A5A5);
    rs = mix32(SEED ^ 32'h3C3C3C3C);
    burst = 1'b1;
    done = 1'b0;
  end

  // Beat k of the hash stream (test_cdc_rtl.cpp: hash_beat, data_word);
  // the stream's last beat always ends a frame.
  task automatic present(input integer k);
    integer w, n;
    reg [31:0] kk;
    reg hash_last;
    begin
      kk = k;
      for (w = 0; w < 16; w = w + 1)
        s_data[32 * w +: 32] <= (w == 0) ? kk : mix32((kk * 32'd16 + w) ^ salt);
      hash_last = ((mix32(kk ^ 32'h1234) & 32'd15) == 0) || ((kk & 32'd63) == 32'd63);
      n = 1 + mix32(kk ^ 32'h5678) % 64;
      s_keep <= (hash_last && n != 64) ? (64'd1 << n) - 64'd1 : {64{1'b1}};
      s_last <= hash_last || k + 1 == NBEATS;
      s_user <= hash_last && ((mix32(kk ^ 32'h9ABC) & 32'd1) != 0);
      s_valid <= 1'b1;
    end
  endtask

  always @(posedge s_clk) begin : write_side
    reg v, take, want;
    s_edges = s_edges + 1;
    if (s_edges == RESET_EDGES) s_rst_n <= 1'b1;
    if (!done && $time >= T_WRITES) begin
      v = s_valid;
      take = s_valid && s_ready;
      if (take) k_tx = k_tx + 1;
      if (!(v && !take)) begin
        want = 1'b0;
        if (k_tx < NBEATS) begin
          ws = xs32(ws);
          if ((ws & (burst ? 32'd255 : 32'd1023)) == 0) burst = !burst;
          want = ((ws >> 8) & 32'd255) < (burst ? P_VALID : P_VALID_OFF);
        end
        if (want) present(k_tx);
        else if (v) s_valid <= 1'b0;
      end
    end
  end

  always @(posedge m_clk) begin : read_side
    m_edges = m_edges + 1;
    if (m_edges == RESET_EDGES) m_rst_n <= 1'b1;
    if (!done) begin
      if (m_valid && m_ready) begin
        received = received + 1;
        $fdisplay(fd, "%0d %08x %08x %016x %0d %0d", $time, m_data[31:0], m_data[511:480],
                  m_keep, m_last, m_user);
      end
      rs = xs32(rs);
      m_ready <= (rs & 32'd255) < P_READY;
      if (received >= NBEATS && k_tx >= NBEATS) begin
        $fdisplay(fd, "meta %0d %0d", s_meta, m_meta);
        done = 1'b1;
      end
    end
  end
endmodule

module cdc_fifo_iverilog_tb;
  parameter integer NBEATS = 5000;
  parameter [31:0]  SEED = 32'd7;
  wire done_stream, done_packet;
  reg [1023:0] path;
  cdc_iv_bench #(.PACKET(0), .NBEATS(NBEATS), .SEED(SEED)) stream(.done(done_stream));
  cdc_iv_bench #(.PACKET(1), .NBEATS(NBEATS), .SEED(SEED)) packet(.done(done_packet));
  initial begin
    if (!$value$plusargs("out_stream=%s", path)) path = "cdc_stream.log";
    stream.fd = $fopen(path, "w");
    if (!$value$plusargs("out_packet=%s", path)) path = "cdc_packet.log";
    packet.fd = $fopen(path, "w");
  end
  always @(posedge done_stream or posedge done_packet) begin
    if (done_stream && done_packet) begin
      $fclose(stream.fd);
      $fclose(packet.fd);
      $finish;
    end
  end
endmodule
