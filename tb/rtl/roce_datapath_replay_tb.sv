`timescale 1fs/1fs
// tb/rtl/roce_datapath_replay_tb.sv: Icarus Verilog replay of a recorded
// stimulus into the RTL datapath (rtl/datapath/roce_datapath.sv and what it
// instantiates), the twin of tools/rtl_replay.cpp (the same Verilated model
// the simulator uses, under SystemC). Both read the stimulus that
// `ernic-sim run --record-datapath NODE=FILE` writes (format:
// tools/rtl_stim.h) and write the output beats in one format, so the two
// files must be byte-identical (`ernic-sim icarus`, ctest rtl.icarus.*).
//
// Stimulus: one line per evaluation of the top in which a clock rose,
//   <domains> <t_ps> <n> (<input index> <hex value>) x n
// domains 1 = core_clk, 2 = cmac_clk, 3 = both; the inputs that changed
// since the previous line (index: tools/rtl_stim.h, kInputs). Lines at the
// same t_ps were separate evaluations, in file order.
// Per line, with E its edge time (t_ps in fs, plus 4 fs per earlier line at
// the same t_ps) and E0 the previous line's: at (E0 + E) / 2 the rising
// clocks go low and the inputs change; at E - 1 fs the outputs are sampled
// (the values the edge sees); at E the clocks rise. The RTL uses rising
// edges only (sync_cell's aperture is 0 in the datapath: no $time).
//
// Output beats (one line each, line = the stimulus line's index from 0):
//   core edge:  <line> R <s_desc_ready>            when s_desc_valid
//               <line> Q <s_pay_tready>            when s_pay_tvalid
//               <line> D <w0> .. <w15>             when m_desc_valid
//               <line> P <keep> <last> <w0> .. <w7> when m_pay_tvalid (bytes past keep as 0)
//               <line> B <keep> <last> <w0> .. <w7> when m_byp_tvalid
//   CMAC edge:  <line> T <ready> <keep> <last> <w0> .. <w7> when m_cmac_tvalid
//               <line> S <s_cmac_tready>           when s_cmac_tvalid
// and at the end "end <lines> <meta_events>". Words are 16 hex digits.
//
//   iverilog -g2012 -I rtl/include -o replay.vvp tb/rtl/roce_datapath_replay_tb.sv <datapath sources>
//   vvp -n replay.vvp +stim=FILE +out=FILE

module roce_datapath_replay_tb;
  localparam integer NIN = 41;  // tools/rtl_stim.h kInputs
  reg [63:0] in_v [0:NIN-1];
  reg core_clk = 1'b0, cmac_clk = 1'b0;

  wire        s_desc_ready, s_pay_tready, m_desc_valid, m_pay_tvalid, m_pay_tlast, m_byp_tvalid, m_byp_tlast;
  wire        m_cmac_tvalid, m_cmac_tlast, s_cmac_tready;
  wire [63:0] m_desc_w [0:15];
  wire [63:0] m_pay_w [0:7], m_byp_w [0:7], m_cmac_w [0:7];
  wire [63:0] m_pay_tkeep, m_byp_tkeep, m_cmac_tkeep, meta_events;

  roce_datapath dut (
    .core_clk(core_clk), .core_rst_n(in_v[0][0]), .cfg_udp_sport(in_v[1][15:0]), .seed(in_v[2][31:0]),
    .s_desc_valid(in_v[3][0]), .s_desc_ready(s_desc_ready),
    .s_desc_w0(in_v[4]), .s_desc_w1(in_v[5]), .s_desc_w2(in_v[6]), .s_desc_w3(in_v[7]),
    .s_desc_w4(in_v[8]), .s_desc_w5(in_v[9]), .s_desc_w6(in_v[10]), .s_desc_w7(in_v[11]),
    .s_desc_w8(in_v[12]), .s_desc_w9(in_v[13]), .s_desc_w10(in_v[14]), .s_desc_w11(in_v[15]),
    .s_pay_tvalid(in_v[16][0]), .s_pay_tready(s_pay_tready),
    .s_pay_tdata_w0(in_v[17]), .s_pay_tdata_w1(in_v[18]), .s_pay_tdata_w2(in_v[19]), .s_pay_tdata_w3(in_v[20]),
    .s_pay_tdata_w4(in_v[21]), .s_pay_tdata_w5(in_v[22]), .s_pay_tdata_w6(in_v[23]), .s_pay_tdata_w7(in_v[24]),
    .s_pay_tkeep(in_v[25]), .s_pay_tlast(in_v[26][0]),
    .m_desc_valid(m_desc_valid),
    .m_desc_w0(m_desc_w[0]), .m_desc_w1(m_desc_w[1]), .m_desc_w2(m_desc_w[2]), .m_desc_w3(m_desc_w[3]),
    .m_desc_w4(m_desc_w[4]), .m_desc_w5(m_desc_w[5]), .m_desc_w6(m_desc_w[6]), .m_desc_w7(m_desc_w[7]),
    .m_desc_w8(m_desc_w[8]), .m_desc_w9(m_desc_w[9]), .m_desc_w10(m_desc_w[10]), .m_desc_w11(m_desc_w[11]),
    .m_desc_w12(m_desc_w[12]), .m_desc_w13(m_desc_w[13]), .m_desc_w14(m_desc_w[14]), .m_desc_w15(m_desc_w[15]),
    .m_pay_tvalid(m_pay_tvalid),
    .m_pay_tdata_w0(m_pay_w[0]), .m_pay_tdata_w1(m_pay_w[1]), .m_pay_tdata_w2(m_pay_w[2]), .m_pay_tdata_w3(m_pay_w[3]),
    .m_pay_tdata_w4(m_pay_w[4]), .m_pay_tdata_w5(m_pay_w[5]), .m_pay_tdata_w6(m_pay_w[6]), .m_pay_tdata_w7(m_pay_w[7]),
    .m_pay_tkeep(m_pay_tkeep), .m_pay_tlast(m_pay_tlast),
    .m_byp_tvalid(m_byp_tvalid),
    .m_byp_tdata_w0(m_byp_w[0]), .m_byp_tdata_w1(m_byp_w[1]), .m_byp_tdata_w2(m_byp_w[2]), .m_byp_tdata_w3(m_byp_w[3]),
    .m_byp_tdata_w4(m_byp_w[4]), .m_byp_tdata_w5(m_byp_w[5]), .m_byp_tdata_w6(m_byp_w[6]), .m_byp_tdata_w7(m_byp_w[7]),
    .m_byp_tkeep(m_byp_tkeep), .m_byp_tlast(m_byp_tlast),
    .cmac_clk(cmac_clk), .cmac_rst_n(in_v[27][0]),
    .m_cmac_tvalid(m_cmac_tvalid), .m_cmac_tready(in_v[28][0]),
    .m_cmac_tdata_w0(m_cmac_w[0]), .m_cmac_tdata_w1(m_cmac_w[1]), .m_cmac_tdata_w2(m_cmac_w[2]), .m_cmac_tdata_w3(m_cmac_w[3]),
    .m_cmac_tdata_w4(m_cmac_w[4]), .m_cmac_tdata_w5(m_cmac_w[5]), .m_cmac_tdata_w6(m_cmac_w[6]), .m_cmac_tdata_w7(m_cmac_w[7]),
    .m_cmac_tkeep(m_cmac_tkeep), .m_cmac_tlast(m_cmac_tlast),
    .s_cmac_tvalid(in_v[29][0]), .s_cmac_tready(s_cmac_tready),
    .s_cmac_tdata_w0(in_v[30]), .s_cmac_tdata_w1(in_v[31]), .s_cmac_tdata_w2(in_v[32]), .s_cmac_tdata_w3(in_v[33]),
    .s_cmac_tdata_w4(in_v[34]), .s_cmac_tdata_w5(in_v[35]), .s_cmac_tdata_w6(in_v[36]), .s_cmac_tdata_w7(in_v[37]),
    .s_cmac_tkeep(in_v[38]), .s_cmac_tlast(in_v[39][0]), .s_cmac_tuser(in_v[40][0]),
    .meta_events(meta_events));

  // A word with the bytes past keep (bits [8i+7:8i] of keep for word w's byte i) as zero.
  function automatic [63:0] masked(input [63:0] w, input [63:0] keep, input integer wi);
    integer b;
    begin
      masked = w;
      for (b = 0; b < 8; b = b + 1)
        if (!keep[wi * 8 + b]) masked[b * 8 +: 8] = 8'h00;
    end
  endfunction

  integer fd_in, fd_out, rc, n, k, idx, line, i, dom;
  reg [63:0] t_ps, prev_t, val;
  reg [63:0] e_fs, e_prev, a_fs;
  integer same_t;
  reg [1023:0] stim_path, out_path;

  task automatic beats_core(input integer l);
    begin
      if (in_v[3][0]) $fwrite(fd_out, "%0d R %0d\n", l, s_desc_ready);
      if (in_v[16][0]) $fwrite(fd_out, "%0d Q %0d\n", l, s_pay_tready);
      if (m_desc_valid) begin
        $fwrite(fd_out, "%0d D", l);
        for (i = 0; i < 16; i = i + 1) $fwrite(fd_out, " %016h", m_desc_w[i]);
        $fwrite(fd_out, "\n");
      end
      if (m_pay_tvalid) begin
        $fwrite(fd_out, "%0d P %016h %0d", l, m_pay_tkeep, m_pay_tlast);
        for (i = 0; i < 8; i = i + 1) $fwrite(fd_out, " %016h", masked(m_pay_w[i], m_pay_tkeep, i));
        $fwrite(fd_out, "\n");
      end
      if (m_byp_tvalid) begin
        $fwrite(fd_out, "%0d B %016h %0d", l, m_byp_tkeep, m_byp_tlast);
        for (i = 0; i < 8; i = i + 1) $fwrite(fd_out, " %016h", masked(m_byp_w[i], m_byp_tkeep, i));
        $fwrite(fd_out, "\n");
      end
    end
  endtask

  task automatic beats_cmac(input integer l);
    begin
      if (m_cmac_tvalid) begin
        $fwrite(fd_out, "%0d T %0d %016h %0d", l, in_v[28][0], m_cmac_tkeep, m_cmac_tlast);
        for (i = 0; i < 8; i = i + 1) $fwrite(fd_out, " %016h", masked(m_cmac_w[i], m_cmac_tkeep, i));
        $fwrite(fd_out, "\n");
      end
      if (in_v[29][0]) $fwrite(fd_out, "%0d S %0d\n", l, s_cmac_tready);
    end
  endtask

  initial begin
    for (i = 0; i < NIN; i = i + 1) in_v[i] = 64'd0;
    if (!$value$plusargs("stim=%s", stim_path) || !$value$plusargs("out=%s", out_path)) begin
      $display("roce_datapath_replay_tb: need +stim=FILE +out=FILE");
      $finish;
    end
    fd_in = $fopen(stim_path, "r");
    fd_out = $fopen(out_path, "w");
    if (fd_in == 0 || fd_out == 0) begin
      $display("roce_datapath_replay_tb: cannot open %0s or %0s", stim_path, out_path);
      $finish;
    end
    line = 0;
    prev_t = 64'd0;
    e_prev = 64'd0;
    same_t = 0;
    while (!$feof(fd_in)) begin
      rc = $fscanf(fd_in, "%d %d %d", dom, t_ps, n);
      if (rc == 3) begin
        same_t = (line > 0 && t_ps == prev_t) ? same_t + 1 : 0;
        e_fs = t_ps * 1000 + 4 * same_t;
        a_fs = (e_prev + e_fs) / 2;
        #(a_fs - $time);
        if (dom[0]) core_clk = 1'b0;
        if (dom[1]) cmac_clk = 1'b0;
        for (k = 0; k < n; k = k + 1) begin
          rc = $fscanf(fd_in, "%d %h", idx, val);
          in_v[idx] = val;
        end
        #(e_fs - 1 - $time);
        if (dom[0]) beats_core(line);
        if (dom[1]) beats_cmac(line);
        #1;
        if (dom[0]) core_clk = 1'b1;
        if (dom[1]) cmac_clk = 1'b1;
        prev_t = t_ps;
        e_prev = e_fs;
        line = line + 1;
      end
    end
    #1;
    $fwrite(fd_out, "end %0d %016h\n", line, meta_events);
    $fclose(fd_out);
    $finish;
  end
endmodule
