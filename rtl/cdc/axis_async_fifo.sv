`timescale 1ps/1ps
// rtl/cdc/axis_async_fifo.sv: 512-bit AXI4-Stream asynchronous FIFO, the
// crossing between the CMAC clock (322.265625 MHz) and the core clock.
//
// What it models: the CDC FIFO of seed 001's datapath, built the textbook
// way (Cummings, "Simulation and Synthesis Techniques for Asynchronous FIFO
// Design", SNUG 2002): a dual-clock memory of DEPTH beats, a binary write
// pointer and read pointer of log2(DEPTH)+1 bits, each sent to the other
// clock domain as a Gray code through SYNC_STAGES flops (rtl/cdc/sync_cell,
// whose simulation model resolves a bit sampled in its aperture to its old
// or new value under a seed). A Gray pointer changes one bit per increment,
// so a synchronised pointer is always the old or the new value: never
// wrong, at worst one clock late. GRAY = 0 sends the binary pointers
// through the same cells instead (the negative control): several bits
// change at once, and a capture in the aperture can yield a pointer that
// never existed, for one cycle. Where one such value releases a whole frame
// (PACKET), stale beats come out; see rtl/README.md for why a one-beat-a-
// cycle comparison survives it.
//
// Ports (s_* on s_clk, m_* on m_clk; AXI4-Stream, tkeep/tlast/tuser carried
// unchanged, no protocol checks)
//   s_clk, s_rst_n      write clock; synchronous reset, active low
//   s_axis_tvalid/tready/tdata[511:0]/tkeep[63:0]/tlast/tuser
//                       write side; tready = not full (low in reset)
//   m_clk, m_rst_n      read clock; synchronous reset, active low
//   m_axis_tvalid/tready/tdata/tkeep/tlast/tuser
//                       read side, from an output register
//   seed [31:0]         seed of the synchronisers' metastability model,
//                       sampled while each domain's reset is low
//   s_meta_events [31:0]  captures in the aperture so far by the write
//                       domain's synchronisers (the read pointer's), s_clk
//   m_meta_events [31:0]  the same for the read domain's (write pointer's)
//
// Reset: reset the FIFO as a whole. Each domain has its own synchronous
// active-low reset; the two asserted intervals must overlap, each lasting at
// least SYNC_STAGES + 1 cycles of its own clock. They may be released in any
// order; beats written before the read side leaves reset are kept.
//
// Latency (SYNC_STAGES = N, no metastability): a beat accepted at write
// edge t_w is first seen by the read logic at read edge e1 + N*T_m, where e1
// is the first read edge strictly after t_w; it is loaded into the output
// register there (if free), so m_axis_tvalid shows it from that edge and it
// can be taken at the following one. PACKET: a frame's first beat is
// loaded at that edge computed for its last beat. A pointer bit captured in
// the aperture adds 0 or 1 cycle of the sampling clock. The same holds for
// the read pointer seen by the write side (s_axis_tready).
// model/datapath/async_fifo_model.h is the timed reference model.
//
// PACKET = 1: the read side starts a frame only once its tlast beat is in
// the FIFO, so a frame leaves without a bubble at up to one beat a read
// cycle (a CMAC TX reads it). DEPTH must hold the largest frame (a longer
// one deadlocks). A frame may start when a tlast lies among the beats the
// read side sees (from the read pointer up to the synchronised write
// pointer; one reduction over the entries' tlast bits); it is then read to
// its end without looking at the write pointer again (it is all there).
//
// Cost in Verilator: the memory and the output register are touched only
// when a beat moves; a synchroniser cell works only when its D changes.
module axis_async_fifo #(
  parameter integer DEPTH       = 128,      // beats, a power of 2, >= 4
  parameter integer SYNC_STAGES = 2,        // synchroniser flops per pointer bit, >= 1
  parameter integer GRAY        = 1,        // 1 Gray-coded pointers, 0 binary (negative control)
  parameter integer PACKET      = 0,        // 1 whole frames only on the read side
  parameter [31:0]  APERTURE_PS = 32'd0,    // sync_cell aperture window (ps); 0 = plain flops
  parameter [31:0]  SEED_SALT   = 32'd0     // mixed into each cell's seed (distinct FIFOs)
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

  localparam integer AW = $clog2(DEPTH);   // memory address bits
  localparam integer PW = AW + 1;          // pointer bits (one wrap bit)
  localparam integer EW = 512 + 64 + 2;    // memory entry: {tuser, tlast, tkeep, tdata}
  localparam integer MW = PW * SYNC_STAGES; // synchroniser cells per direction

  // Pointer code sent across: Gray or plain binary.
  function automatic [PW-1:0] to_code(input [PW-1:0] b);
    to_code = (GRAY != 0) ? (b ^ (b >> 1)) : b;
  endfunction

  function automatic [PW-1:0] from_code(input [PW-1:0] c);
    integer i;
    reg [PW-1:0] b;
    begin
      if (GRAY != 0) begin
        b[PW-1] = c[PW-1];
        for (i = PW - 2; i >= 0; i = i - 1) b[i] = b[i + 1] ^ c[i];
      end else begin
        b = c;
      end
      from_code = b;
    end
  endfunction

  function automatic [31:0] popcount(input [MW-1:0] v);
    integer i;
    reg [31:0] n;
    begin
      n = 32'd0;
      for (i = 0; i < MW; i = i + 1) n = n + {31'd0, v[i]};
      popcount = n;
    end
  endfunction

  logic [EW-1:0] mem [0:DEPTH-1];

  // ---- write domain (s_clk) -----------------------------------------------
  logic [PW-1:0] wptr, wptr_code;        // binary; code sent to the read side
  logic [PW-1:0] rptr_code_s;            // read pointer code after the synchroniser
  logic [PW-1:0] rptr_s;
  logic [MW-1:0] s_meta;
  logic          s_run;                  // out of reset
  logic          s_full, s_wr;

  assign rptr_s        = from_code(rptr_code_s);
  assign s_full        = (wptr[AW] != rptr_s[AW]) && (wptr[AW-1:0] == rptr_s[AW-1:0]);
  assign s_axis_tready = s_run && !s_full;
  assign s_wr          = s_axis_tvalid && s_axis_tready;

  always_ff @(posedge s_clk) begin
    if (s_wr) mem[wptr[AW-1:0]] <= {s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata};
  end

  always_ff @(posedge s_clk) begin
    if (!s_rst_n) begin
      wptr      <= '0;
      wptr_code <= '0;
      s_run     <= 1'b0;
    end else begin
      s_run <= 1'b1;
      if (s_wr) begin
        wptr      <= wptr + 1'b1;
        wptr_code <= to_code(wptr + 1'b1);
      end
    end
  end

  // ---- read domain (m_clk) ------------------------------------------------
  logic [PW-1:0] rptr, rptr_code;
  logic [PW-1:0] wptr_code_m;            // write pointer code after the synchroniser
  logic [PW-1:0] wptr_m;
  logic [MW-1:0] m_meta;
  logic          m_avail, m_rd;

  always_ff @(posedge m_clk) begin
    if (!m_rst_n) begin
      rptr          <= '0;
      rptr_code     <= '0;
      m_axis_tvalid <= 1'b0;
    end else begin
      if (m_rd) begin
        rptr          <= rptr + 1'b1;
        rptr_code     <= to_code(rptr + 1'b1);
        m_axis_tvalid <= 1'b1;
      end else if (m_axis_tready) begin
        m_axis_tvalid <= 1'b0;
      end
    end
  end

  // Output register: loaded only when a beat moves (no reset needed).
  always_ff @(posedge m_clk) begin
    if (m_rd) {m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata} <= mem[rptr[AW-1:0]];
  end

  generate
    if (PACKET != 0) begin : g_packet
      // tlast of each memory entry, as one vector (written on s_clk).
      logic [DEPTH-1:0] last_vec;
      logic [PW-1:0]    seen;            // beats the read side sees: wptr_m - rptr
      logic [DEPTH-1:0] seen_mask;       // ... as a mask from rptr on (bit j = entry rptr+j)
      logic [DEPTH-1:0] last_rot;        // last_vec rotated so that bit 0 is entry rptr
      // frame_ready is public only so that the Verilated model keeps it a
      // variable of its own, computed after a clock edge, instead of folding
      // it into m_rd, which depends on the input m_axis_tready and so is
      // recomputed whenever any input of the top changes (three 256-bit
      // shifts per evaluation).
      logic             frame_ready /*verilator public_flat_rd*/;  // a tlast lies among the beats seen
      logic             in_frame;        // a frame has started and its tlast is not loaded

      always_ff @(posedge s_clk) begin
        if (s_wr) last_vec[wptr[AW-1:0]] <= s_axis_tlast;
      end

      assign seen        = wptr_m - rptr;
      assign seen_mask   = seen[AW] ? {DEPTH{1'b1}} : ~({DEPTH{1'b1}} << seen[AW-1:0]);
      assign last_rot    = (last_vec >> rptr[AW-1:0]) |
                           (last_vec << ({1'b1, {AW{1'b0}}} - {1'b0, rptr[AW-1:0]}));
      assign frame_ready = |(last_rot & seen_mask);
      // Start a frame once its tlast is seen; then read it to its end
      // without looking at the write pointer again (it is all there).
      assign m_avail = in_frame || frame_ready;
      assign m_rd    = m_rst_n && m_avail && (!m_axis_tvalid || m_axis_tready);

      always_ff @(posedge m_clk) begin
        if (!m_rst_n) in_frame <= 1'b0;
        else if (m_rd) in_frame <= !last_vec[rptr[AW-1:0]];
      end
    end else begin : g_stream
      assign m_avail = rptr != wptr_m;
      assign m_rd    = m_rst_n && m_avail && (!m_axis_tvalid || m_axis_tready);
    end
  endgenerate

  assign wptr_m = from_code(wptr_code_m);

  // ---- synchronisers: SYNC_STAGES cells per pointer bit ---------------------
  // Cell (bit b, stage k) of the write pointer into the read domain has
  // INSTANCE SEED_SALT ^ 0x10000 ^ (k << 8) ^ b; the read pointer's 0x20000.
  genvar gb, gs;
  generate
    for (gb = 0; gb < PW; gb = gb + 1) begin : g_bit
      logic [SYNC_STAGES:0] w_q;            // [0] = D of the first stage
      logic [SYNC_STAGES:0] r_q;
      assign w_q[0] = wptr_code[gb];
      assign r_q[0] = rptr_code[gb];
      for (gs = 0; gs < SYNC_STAGES; gs = gs + 1) begin : g_stage
        sync_cell #(
          .APERTURE_PS(APERTURE_PS),
          .INSTANCE(SEED_SALT ^ 32'h10000 ^ (gs << 8) ^ gb)
        ) u_w (
          .clk(m_clk), .rst_n(m_rst_n), .seed(seed), .d(w_q[gs]), .q(w_q[gs + 1]),
          .meta(m_meta[gb * SYNC_STAGES + gs]));
        sync_cell #(
          .APERTURE_PS(APERTURE_PS),
          .INSTANCE(SEED_SALT ^ 32'h20000 ^ (gs << 8) ^ gb)
        ) u_r (
          .clk(s_clk), .rst_n(s_rst_n), .seed(seed), .d(r_q[gs]), .q(r_q[gs + 1]),
          .meta(s_meta[gb * SYNC_STAGES + gs]));
      end
      assign wptr_code_m[gb] = w_q[SYNC_STAGES];
      assign rptr_code_s[gb] = r_q[SYNC_STAGES];
    end
  endgenerate

  // ---- metastability event counters (simulation debug) ----------------------
  generate
    if (APERTURE_PS != 0) begin : g_meta_count
      always_ff @(posedge s_clk) begin
        if (!s_rst_n) s_meta_events <= 32'd0;
        else if (|s_meta) s_meta_events <= s_meta_events + popcount(s_meta);
      end
      always_ff @(posedge m_clk) begin
        if (!m_rst_n) m_meta_events <= 32'd0;
        else if (|m_meta) m_meta_events <= m_meta_events + popcount(m_meta);
      end
    end else begin : g_no_meta
      assign s_meta_events = 32'd0;
      assign m_meta_events = 32'd0;
      /* verilator lint_off UNUSEDSIGNAL */
      wire unused_meta = ^{s_meta, m_meta};
      /* verilator lint_on UNUSEDSIGNAL */
    end
  endgenerate

endmodule
