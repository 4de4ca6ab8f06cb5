`timescale 1ps/1ps
// rtl/cdc/sync_cell.sv: one synchroniser flop, with a simulation model of
// metastability.
//
// What it models: the flop of a multi-flop synchroniser (chain them for N
// stages). A real flop whose D changes within its aperture (setup + hold)
// around the clock edge goes metastable and resolves, after some time, to
// either the old or the new value. Zero-delay simulation never sees that,
// so this cell decides it: when D last changed less than APERTURE_PS
// picoseconds before the sampling edge (0 <= t_edge - t_change <
// APERTURE_PS), the captured bit is the new value or the old one (~d),
// chosen by a per-cell xorshift32 generator. The generator is seeded at
// reset from the `seed` input mixed with the INSTANCE parameter and
// advances once per such capture only, so the outcome is a deterministic
// function of the seed, the clocks and the data, and the same in both
// simulators: Verilator --sc ($time = SystemC time) and Icarus (tb/rtl
// checks that).
//
// Time: `timescale 1ps/1ps; $time is in picoseconds (SystemC time resolution
// must be 1 ps). A change of D made by a flop on an edge at the same time
// step as the sampling edge is seen after the edge (non-blocking
// semantics): it is sampled at the next edge, without metastability, like a
// hold-clean launch. The first APERTURE_PS ps of simulation never count as
// metastable (time 0 has no history of D).
//
// APERTURE_PS = 0: an ordinary flop (no $time, no generator, seed unused).
// The window must be shorter than the clock period of D's source, or two
// changes could fall in one window (then only the last one is modelled).
//
// Ports
//   clk    in  sampling clock, rising edge
//   rst_n  in  synchronous, active low: q <= RESET_VAL, meta <= 0, the
//              generator <= mix(seed, INSTANCE)
//   seed   in  [31:0] sampled while rst_n is low
//   d      in  asynchronous data
//   q      out captured value (registered)
//   meta   out 1 for the cycle after a capture that fell in the aperture
//              (registered with q); always 0 when APERTURE_PS = 0
module sync_cell #(
  parameter [31:0]  APERTURE_PS = 32'd0,   // aperture window in ps; 0 = plain flop
  parameter [31:0]  INSTANCE    = 32'd0,   // mixed into the seed: give each cell its own
  parameter [0:0]   RESET_VAL   = 1'b0
) (
  input  logic        clk,
  input  logic        rst_n,
  input  logic [31:0] seed,
  input  logic        d,
  output logic        q,
  output logic        meta
);

  // murmur3's 32-bit finaliser: spreads seed and INSTANCE over all bits.
  function automatic [31:0] mix32(input [31:0] x);
    reg [31:0] h;
    begin
      h = x ^ (x >> 16);
      h = h * 32'h85EBCA6B;
      h = h ^ (h >> 13);
      h = h * 32'hC2B2AE35;
      h = h ^ (h >> 16);
      mix32 = (h == 32'd0) ? 32'h6D2B79F5 : h;  // xorshift state must be nonzero
    end
  endfunction

  // Marsaglia's xorshift32 step.
  function automatic [31:0] xs32(input [31:0] x);
    reg [31:0] y;
    begin
      y = x ^ (x << 13);
      y = y ^ (y >> 17);
      y = y ^ (y << 5);
      xs32 = y;
    end
  endfunction

  generate
    if (APERTURE_PS == 0) begin : g_flop
      always_ff @(posedge clk) begin
        if (!rst_n) q <= RESET_VAL;
        else q <= d;
      end
      assign meta = 1'b0;
      /* verilator lint_off UNUSEDSIGNAL */
      wire unused_seed = ^seed;
      /* verilator lint_on UNUSEDSIGNAL */
    end else begin : g_meta
      localparam [63:0] WINDOW = APERTURE_PS * 64'd1;  // widened without a concatenation

      localparam [31:0] SALT = mix32(INSTANCE ^ 32'h9E3779B9);

      // Time of D's last change (ps). Simulation-only bookkeeping.
      logic [63:0] t_chg = 64'd0;
      always @(posedge d or negedge d) t_chg <= $time;

      logic [31:0] rng;
      logic [31:0] rng_next;
      always_comb rng_next = xs32(rng);

      always_ff @(posedge clk) begin
        if (!rst_n) begin
          q    <= RESET_VAL;
          meta <= 1'b0;
          rng  <= mix32(seed ^ SALT);
        end else if ($time >= WINDOW && $time - t_chg < WINDOW) begin
          // In the aperture: resolve to the new value (d) or the old one (~d).
          rng  <= rng_next;
          q    <= rng_next[31] ? d : ~d;
          meta <= 1'b1;
        end else begin
          q    <= d;
          meta <= 1'b0;
        end
      end
    end
  endgenerate

endmodule
