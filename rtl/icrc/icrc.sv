`timescale 1ps/1ps
// rtl/icrc/icrc.sv: RoCEv2 invariant CRC (ICRC) of a frame streamed as
// 512-bit AXI4-Stream beats, 64 bytes a clock.
//
// What it models: the ICRC generator/checker of a RoCEv2 datapath (IBTA
// Annex A17.3.3; ../shared/spec/icrc-and-oracles.md). The same value is
// computed by the C++ reference roce::compute_icrc (model/roce/icrc.h).
//
// Seam (driven by the SystemC model; see also rtl/README.md)
//   clk        in   core clock; all signals sampled at its rising edge
//   rst_n      in   synchronous, active low; aborts a frame in progress
//   s_valid    in   a beat is presented
//   s_ready    out  tied 1: one beat accepted every cycle, frames back to
//                   back with no idle cycle between them
//   s_data     in   [511:0]; byte 0 of the beat = bits [7:0] (AXI4-Stream
//                   byte order). The first beat of a frame starts at the
//                   Ethernet destination MAC. The frame EXCLUDES the ICRC
//                   (and the FCS): this block computes the value to append.
//   s_keep     in   [63:0]; contiguous ones from bit 0. Only read on the
//                   last beat (earlier beats are taken as all 64 bytes).
//                   s_keep == 0 on a last beat adds no bytes.
//   s_last     in   last beat of the frame
//   crc_valid  out  one-cycle pulse, LATENCY = 1 cycle: it is high in the
//                   clock cycle right after the rising edge that accepts the
//                   last beat (registered at that same edge)
//   crc        out  [31:0] the ICRC; wire bytes are crc[7:0] first, i.e.
//                   the number roce::compute_icrc returns. Holds its value
//                   until the next frame's result.
//
// Coverage and masking (all inside this block):
//   - 8 bytes of 0xFF before the IP header (the dummy LRH): folded into a
//     constant CRC state (LRH_STATE) used by the first beat;
//   - Ethernet header (bytes 0..13) excluded;
//   - ethertype 0x0800 (IPv4, IHL 5 assumed): TOS (byte 15), TTL (22),
//     header checksum (24..25), UDP checksum (40..41), BTH byte 4 (46) set
//     to ones;
//   - ethertype 0x86DD (IPv6): traffic class and flow label (low nibble of
//     byte 14, bytes 15..17), hop limit (21), UDP checksum (60..61) set to
//     ones in beat 0, BTH byte 4 (frame byte 66 = beat 1 byte 2) in beat 1;
//   - any other ethertype: bytes 14.. covered unmasked (no RoCEv2 frame).
//   CRC-32, reflected polynomial 0xEDB88320, init 0xFFFFFFFF, final
//   complement (the Ethernet CRC / zlib crc32). No VLAN tags.
//
// How it computes (lean for Verilator): the CRC of one 64-byte block taken
// from state 0 is linear in the block, so it is the XOR, over the block's
// 128 nibbles, of the state each nibble reaches alone: a ROM of 128 x 16
// entries (nibs, 8 KiB, loaded at time 0). (The
// same as 32 parities of the block ANDed with constant 512-bit rows, the
// form this block had before, in a tenth of Verilator's instructions: issue
// 17.) The running state s enters by XOR
// into the block's first four covered bytes (for a reflected CRC, running
// bytes from state s equals running them XOR s from state 0). A short last
// beat of n bytes is shifted to the top of the block (left by 64-n bytes),
// because leading zero bytes from state 0 leave the state at 0; when fewer
// than four covered bytes remain, the part of s not absorbed, s >> 8n, is
// XORed into the result. One clock: one mux/shift, 128 table lookups.
module icrc (
  input  logic         clk,
  input  logic         rst_n,
  input  logic         s_valid,
  output logic         s_ready,
  input  logic [511:0] s_data,
  input  logic [63:0]  s_keep,
  input  logic         s_last,
  output logic         crc_valid,
  output logic [31:0]  crc
);

  localparam logic [31:0] POLY = 32'hEDB88320;  // reflected 0x04C11DB7

  // State after the 8 bytes of 0xFF from the initial value 0xFFFFFFFF.
  // (Constant functions inline the step: Icarus 11 rejects nested calls.)
  function automatic logic [31:0] gen_lrh_state();
    logic [31:0] r;
    r = 32'hFFFFFFFF;
    for (int i = 0; i < 64; i++) r = r[0] ? (r >> 1) : ((r >> 1) ^ POLY);  // input bit 1
    gen_lrh_state = r;
  endfunction

  localparam logic [31:0] LRH_STATE = gen_lrh_state();

  // A ROM, loaded at time 0: nibs[p*16 + v] = the state reached from state 0
  // by a block whose only nonzero nibble is v at nibble p (stream bits
  // 4p..4p+3, LSB first): v's four bits, then 508 - 4p zero bits. Nibble
  // 127's entries take v's bits alone; nibble p's are nibble p+1's followed
  // by four zero bits more. (A memory, not a parameter: a lookup is one
  // word read in Verilator and in Icarus alike, where a part-select of a
  // 65536-bit parameter costs Icarus the whole vector.)
  logic [31:0] nibs [0:2047];
  // (A task: its variables stay out of the waveform, as a function's do.)
  task automatic load_nibs;
    logic [31:0] c;
    for (int v = 0; v < 16; v++) begin
      c = 32'd0;
      for (int i = 0; i < 4; i++) begin
        c = c ^ {31'd0, v[i]};
        c = c[0] ? ((c >> 1) ^ POLY) : (c >> 1);
      end
      for (int p = 127; p >= 0; p--) begin
        nibs[p*16 + v] = c;
        for (int i = 0; i < 4; i++) c = c[0] ? ((c >> 1) ^ POLY) : (c >> 1);  // input bit 0
      end
    end
  endtask
  initial load_nibs;

  // CRC state (not complemented) reached from state 0 by a 64-byte block.
  function automatic logic [31:0] block_crc(input logic [511:0] b);
    logic [31:0] r;
    r = 32'd0;
    // Two loops of at most 64 turns: Verilator unrolls them (a loop of 128
    // it keeps, with every index worked out at run time).
    for (int w = 0; w < 16; w++)
      for (int q = 0; q < 8; q++) r = r ^ nibs[(w*8 + q)*16 + int'(b[w*32 + q*4 +: 4])];
    block_crc = r;
  endfunction

  // Number of bytes in a contiguous keep.
  function automatic logic [6:0] keep_bytes(input logic [63:0] keep);
    logic [6:0] n;
    n = 7'd0;
    for (int i = 0; i < 64; i++) n = n + {6'd0, keep[i]};
    keep_bytes = n;
  endfunction

  // Next CRC state for one beat.
  //   first:  first beat of a frame (Ethernet header, state = LRH_STATE)
  //   v6_b1:  second beat of an IPv6 frame (BTH byte 4 at beat byte 2)
  //   s:      running state before this beat (ignored when first)
  function automatic logic [31:0] beat_crc(input logic [511:0] data,
                                           input logic [63:0] keep,
                                           input logic last,
                                           input logic first,
                                           input logic v6_b1,
                                           input logic [31:0] s);
    logic [511:0] d;
    logic [15:0]  ethertype;
    logic [6:0]   n;      // bytes in this beat
    logic [6:0]   nc;     // bytes covered by the CRC in this beat
    logic [31:0]  sin;    // state entering at the first covered byte
    logic [31:0]  rest;   // part of sin not absorbed when nc < 4
    d = data;
    ethertype = {data[12*8 +: 8], data[13*8 +: 8]};
    n = last ? keep_bytes(keep) : 7'd64;
    if (first) begin
      sin = LRH_STATE;
      nc = (n > 7'd14) ? n - 7'd14 : 7'd0;
      if (ethertype == 16'h0800) begin
        d[15*8 +: 8]  = 8'hFF;    // TOS
        d[22*8 +: 8]  = 8'hFF;    // TTL
        d[24*8 +: 16] = 16'hFFFF; // header checksum
        d[40*8 +: 16] = 16'hFFFF; // UDP checksum
        d[46*8 +: 8]  = 8'hFF;    // BTH byte 4
      end else if (ethertype == 16'h86DD) begin
        d[14*8 +: 4]  = 4'hF;     // traffic class [7:4]
        d[15*8 +: 24] = 24'hFFFFFF; // traffic class [3:0], flow label
        d[21*8 +: 8]  = 8'hFF;    // hop limit
        d[60*8 +: 16] = 16'hFFFF; // UDP checksum
      end
      d[14*8 - 1:0] = '0;         // Ethernet header not covered
      d[14*8 +: 32] = d[14*8 +: 32] ^ sin;
    end else begin
      sin = s;
      nc = n;
      if (v6_b1) d[2*8 +: 8] = 8'hFF;  // IPv6: BTH byte 4
      d[31:0] = d[31:0] ^ sin;
    end
    rest = (nc >= 7'd4) ? 32'd0 : (sin >> {nc[1:0], 3'b000});
    beat_crc = block_crc(d << {7'd64 - n, 3'b000}) ^ rest;
  endfunction

  logic        sof_q;     // next beat is the first of a frame
  logic        b1_q;      // next beat is the second of a frame
  logic        v6_q;      // current frame is IPv6
  logic [31:0] state_q;   // running CRC state (not complemented)

  assign s_ready = 1'b1;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      sof_q     <= 1'b1;
      b1_q      <= 1'b0;
      v6_q      <= 1'b0;
      state_q   <= 32'd0;
      crc_valid <= 1'b0;
      crc       <= 32'd0;
    end else begin
      crc_valid <= 1'b0;
      if (s_valid) begin : beat
        logic [31:0] nxt;
        nxt = beat_crc(s_data, s_keep, s_last, sof_q, b1_q && v6_q, state_q);
        state_q <= nxt;
        sof_q   <= s_last;
        b1_q    <= sof_q && !s_last;
        if (sof_q) v6_q <= ({s_data[12*8 +: 8], s_data[13*8 +: 8]} == 16'h86DD);
        if (s_last) begin
          crc_valid <= 1'b1;
          crc       <= ~nxt;
        end
      end
    end
  end

endmodule
