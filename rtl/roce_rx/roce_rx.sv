`timescale 1ps/1ps
// rtl/roce_rx/roce_rx.sv: the RoCEv2 receive parser of the FPGA datapath,
// at the RX seam (rtl/SEAM.md "RX seam"; C++ reference model
// model/datapath/roce_rx_ref.{h,cpp}).
//
// Cut-through: frames arrive as 512-bit AXI4-Stream beats (no tready; tvalid
// may drop inside a frame). Every frame is classified as the reference
// designs do (model/link/classify.h: untagged Ethernet II, IPv4 or IPv6,
// UDP to port 4791); other frames leave unchanged on the bypass stream.
// For a RoCE frame the block parses Ethernet / IP / UDP / BTH / extension
// headers (ext length from the opcode table below, as model/roce/opcodes.cpp),
// computes the ICRC (rtl/icrc, fed the bytes [0, ip_end - 4) with the
// matching tkeep, so Ethernet padding and the ICRC itself stay out) and the
// IPv4 header checksum, checks the lengths, and emits one 1024-bit
// descriptor with PG332's syndrome bits (SEAM.md) plus the payload realigned
// to byte 0 (a barrel shift by hdr_len mod 64 across two beats).
//
// Ports (core clock; all outputs registered):
//   clk, rst_n          rising edge; synchronous reset, active low (aborts a
//                       frame in progress: no outputs for it)
//   s_axis_tvalid       a beat (taken whenever high; no tready)
//   s_axis_tdata[511:0] byte i = bits [8i+7:8i], frame byte 0 = beat 0 byte 0
//   s_axis_tkeep[63:0]  contiguous from bit 0; all ones except on the last
//                       beat (read there only), which carries >= 1 byte
//   s_axis_tlast        last beat of the frame
//   s_axis_tuser        bad FCS, read on the last beat (syndrome bit 31)
//   m_desc_valid        one-cycle pulse per RoCE frame
//   m_desc[1023:0]      RX descriptor (rtl/include/seam.vh RXD_*)
//   m_pay_t*            payload stream (tvalid/tdata/tkeep/tlast, no tready)
//   m_byp_t*            bypass stream: non-RoCE frames unchanged
//
// Latency, counted as rtl/icrc counts it: latency N = high in the N-th
// clock cycle after the rising edge that accepts the frame's last beat
// (cycle 1 follows that edge directly):
//   descriptor: m_desc_valid 2 cycles, fixed (registered one edge later),
//   whatever the frame length, the bubbles or the next frame.
//   payload / bypass: output beats trail the input by one beat: an output
//   beat is registered at the edge accepting the input beat after the one
//   holding its first byte, or at the edge after the frame's last beat.
//   A frame's last payload beat is at most 2 cycles (so never after its
//   descriptor; earlier when the payload ends before the frame's last
//   beat); its last bypass beat 2 cycles. Frames may follow back to back
//   with no idle cycle.
//
// Limits: frames up to 65535 bytes; IPv4 options are not parsed (IHL != 5
// sets syndrome bit 8 and the fields sit at the offsets of IHL 5).
//
// Cost in Verilator: all the work is inside always_ff under a beat, a pending
// output or a pending descriptor, so an idle cycle costs a few compares.
`include "seam.vh"

module roce_rx (
  input  logic          clk,
  input  logic          rst_n,
  input  logic          s_axis_tvalid,
  input  logic [511:0]  s_axis_tdata,
  input  logic [63:0]   s_axis_tkeep,
  input  logic          s_axis_tlast,
  input  logic          s_axis_tuser,
  output logic          m_desc_valid,
  output logic [1023:0] m_desc,
  output logic          m_pay_tvalid,
  output logic [511:0]  m_pay_tdata,
  output logic [63:0]   m_pay_tkeep,
  output logic          m_pay_tlast,
  output logic          m_byp_tvalid,
  output logic [511:0]  m_byp_tdata,
  output logic [63:0]   m_byp_tkeep,
  output logic          m_byp_tlast
);

  localparam logic [16:0] MANY = 17'h1FFFF;  // "the frame goes on": more bytes than any check needs

  // ---- helpers -------------------------------------------------------------
  // Bytes in a contiguous keep.
  function automatic logic [6:0] keep_bytes(input logic [63:0] k);
    logic [6:0] n;
    n = 7'd0;
    for (int i = 0; i < 64; i++) n = n + {6'd0, k[i]};
    keep_bytes = n;
  endfunction

  // Byte mask of a keep, as a 512-bit data mask.
  function automatic logic [511:0] keep_mask(input logic [63:0] k);
    logic [511:0] m;
    for (int i = 0; i < 64; i++) m[8*i +: 8] = {8{k[i]}};
    keep_mask = m;
  endfunction

  // Keep of the first n bytes (n = 0..64).
  function automatic logic [63:0] first_bytes(input logic [6:0] n);
    first_bytes = n[6] ? 64'hFFFF_FFFF_FFFF_FFFF : ((64'd1 << n[5:0]) - 64'd1);
  endfunction

  function automatic logic [16:0] min17(input logic [16:0] a, input logic [16:0] b);
    min17 = (a < b) ? a : b;
  endfunction

  // Big-endian numbers at a constant byte offset of the header bytes h.
  // Macros, not functions: a function's 832-bit argument becomes a local of
  // the clocked block in Verilator, zeroed at every edge (issue 17: that was
  // half the block's cost); a macro is a plain part-select.
`define ROCE_RX_BE16(h, off)  {h[8*(off) +: 8], h[8*((off)+1) +: 8]}
`define ROCE_RX_BE24(h, off)  {h[8*(off) +: 8], `ROCE_RX_BE16(h, (off)+1)}
`define ROCE_RX_BE32(h, off)  {`ROCE_RX_BE16(h, off), `ROCE_RX_BE16(h, (off)+2)}
`define ROCE_RX_BE48(h, off)  {`ROCE_RX_BE16(h, off), `ROCE_RX_BE32(h, (off)+2)}
`define ROCE_RX_BE64(h, off)  {`ROCE_RX_BE32(h, off), `ROCE_RX_BE32(h, (off)+4)}
`define ROCE_RX_BE128(h, off) {`ROCE_RX_BE64(h, off), `ROCE_RX_BE64(h, (off)+8)}

  // BTH opcode table (model/roce/opcodes.cpp; IBTA 9.2 Table 38 RC and UD
  // rows, RoCEv2 CNP): {known, extension-header bytes}.
  function automatic logic [5:0] op_ext(input logic [7:0] op);
    case (op)
      8'h00, 8'h01, 8'h02, 8'h04, 8'h07, 8'h08, 8'h0E, 8'h81: op_ext = {1'b1, 5'd0};
      8'h03, 8'h05, 8'h09, 8'h0D, 8'h0F, 8'h10, 8'h11, 8'h16, 8'h17: op_ext = {1'b1, 5'd4};  // ImmDt/AETH/IETH
      8'h06, 8'h0A, 8'h0C: op_ext = {1'b1, 5'd16};  // RETH
      8'h0B: op_ext = {1'b1, 5'd20};                 // RETH + ImmDt
      8'h12: op_ext = {1'b1, 5'd12};                 // AETH + AtomicAckETH
      8'h13, 8'h14: op_ext = {1'b1, 5'd28};          // AtomicETH
      8'h64: op_ext = {1'b1, 5'd8};                  // DETH
      8'h65: op_ext = {1'b1, 5'd12};                 // DETH + ImmDt
      default: op_ext = 6'd0;
    endcase
  endfunction

  // model/link/classify.h on the first 80 bytes of a frame of n bytes.
  function automatic logic classify(input logic [639:0] b, input logic [16:0] n);
    logic [15:0] et, dport;
    logic [6:0]  udp;
    logic [15:0] t;
    logic ok;
    et = {b[12*8 +: 8], b[13*8 +: 8]};
    ok = 1'b1;
    udp = 7'd54;
    if (n < 17'd14) ok = 1'b0;
    else if (et == 16'h0800) begin
      if (n < 17'd34 || b[14*8+4 +: 4] != 4'd4 || b[23*8 +: 8] != 8'd17) ok = 1'b0;
      udp = 7'd14 + {1'b0, b[14*8 +: 4], 2'b00};
    end else if (et == 16'h86DD) begin
      if (n < 17'd54 || b[14*8+4 +: 4] != 4'd6 || b[20*8 +: 8] != 8'd17) ok = 1'b0;
    end else ok = 1'b0;
    t = b[{udp + 7'd2, 3'b000} +: 16];
    dport = {t[7:0], t[15:8]};
    classify = ok && (n >= {10'd0, udp} + 17'd8) && dport == 16'd4791;
  endfunction

  // roce::ipv4_checksum of bytes 14..33 (checksum field taken as zero).
  function automatic logic [15:0] ip4_csum(input logic [511:0] b);
    logic [19:0] s;
    s = 20'd0;
    for (int i = 14; i < 34; i += 2)
      if (i != 24) s = s + {4'd0, b[8*i +: 8], b[8*(i+1) +: 8]};
    s = {4'd0, s[15:0]} + {16'd0, s[19:16]};
    s = {4'd0, s[15:0]} + {19'd0, s[16]};
    ip4_csum = ~s[15:0];
  endfunction

  // ---- state ---------------------------------------------------------------
  // Input side (the frame whose beats arrive)
  logic         sof_q;        // the next beat is a frame's first
  logic [16:0]  pos_q;        // frame byte of the next beat (when !sof_q)
  logic         v6_q;
  logic [16:0]  ip_end_q;     // 14 + IPv4 total length / 54 + IPv6 payload length
  logic [16:0]  cov_q;        // ip_end - 4: ICRC position, end of the ICRC coverage
  logic [16:0]  pay_end_q;    // ip_end - 4 - PadCnt
  logic [7:0]   hdr_len_q;
  logic [4:0]   elen_q;       // extension-header bytes
  logic         len_hdr_q;    // syndrome bit 4 from the header's own lengths
  logic         hdr_bad_q;    // syndrome bit 8
  logic         pay_ok_q;     // RoCE and no header error: the payload goes out
  logic         cls_q;        // classified RoCE (final after beat 1 or a last beat 0)
  logic         crc_on_q;     // icrc still fed this frame
  logic [511:0] hdr0_q;       // beat 0, bytes beyond the frame zeroed
  logic [319:0] hdr1_q;       // bytes 64..103
  logic [31:0]  icrc_rx_q;    // the received ICRC bytes (wire byte 0 in [7:0])
  logic [16:0]  n_q;          // frame length (at its last beat)
  logic         fcs_q;
  logic         desc_pend_q;  // a RoCE frame ended: its descriptor leaves at the next edge
  // Output side: the previous beat and the payload emitter
  logic [511:0] prev_q;
  logic [63:0]  prev_keep_q;
  logic         prev_last_q;
  logic         prev_pend_q;  // prev_q not yet passed on (bypass) or dropped (RoCE)
  logic [16:0]  prev_pos_q;   // frame byte of prev_q's byte 0
  logic [16:0]  rcv_q;        // bytes of prev_q's frame received so far
  logic         pe_act_q;     // payload bytes left to send
  logic [16:0]  pe_out_q;     // frame byte of the next payload beat's byte 0
  logic [16:0]  pe_end_q;     // payload end (min(pay_end, n) once the frame ended)

  // ---- ICRC: the bytes [0, ip_end - 4) of every IP frame ----------------------
  logic         icrc_s_valid, icrc_s_last, icrc_s_ready, icrc_valid;
  logic [63:0]  icrc_s_keep;
  logic [31:0]  icrc_crc;
  logic [15:0]  in_et;
  logic         in_ip;        // beat 0: an IP EtherType
  logic [16:0]  in_cov;       // coverage end of the arriving beat's frame
  logic [16:0]  in_pos;       // frame byte of the arriving beat
  logic         in_cov_here;  // the coverage ends in the arriving beat
  logic [6:0]   in_cov_n;     // bytes of the coverage in the arriving beat (when in_cov_here)

  assign in_et = {s_axis_tdata[12*8 +: 8], s_axis_tdata[13*8 +: 8]};
  assign in_ip = (in_et == 16'h0800) || (in_et == 16'h86DD);
  assign in_cov = !sof_q ? cov_q
                : (in_et == 16'h86DD) ? 17'd50 + {1'b0, s_axis_tdata[18*8 +: 8], s_axis_tdata[19*8 +: 8]}
                : 17'd10 + {1'b0, s_axis_tdata[16*8 +: 8], s_axis_tdata[17*8 +: 8]};
  assign in_pos = sof_q ? 17'd0 : pos_q;
  assign in_cov_here = in_cov <= in_pos + 17'd64;
  assign in_cov_n = in_cov[6:0] - in_pos[6:0];  // in_pos is a multiple of 64
  assign icrc_s_valid = s_axis_tvalid && (sof_q ? in_ip : crc_on_q);
  assign icrc_s_last = s_axis_tlast || in_cov_here;
  assign icrc_s_keep = in_cov_here ? (first_bytes(in_cov_n) & (s_axis_tlast ? s_axis_tkeep : 64'hFFFF_FFFF_FFFF_FFFF))
                                   : s_axis_tkeep;

  icrc u_icrc (
    .clk      (clk),
    .rst_n    (rst_n),
    .s_valid  (icrc_s_valid),
    .s_ready  (icrc_s_ready),
    .s_data   (s_axis_tdata),
    .s_keep   (icrc_s_keep),
    .s_last   (icrc_s_last),
    .crc_valid(icrc_valid),
    .crc      (icrc_crc)
  );

  // ---- the block -------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      sof_q        <= 1'b1;
      pos_q        <= 17'd0;
      crc_on_q     <= 1'b0;
      desc_pend_q  <= 1'b0;
      prev_pend_q  <= 1'b0;
      pe_act_q     <= 1'b0;
      m_desc_valid <= 1'b0;
      m_pay_tvalid <= 1'b0;
      m_byp_tvalid <= 1'b0;
    end else begin
      m_desc_valid <= 1'b0;
      m_pay_tvalid <= 1'b0;
      m_byp_tvalid <= 1'b0;

      // Descriptor of the RoCE frame whose last beat came at the previous
      // edge. The icrc result is that frame's: the next frame's cannot be
      // registered before this edge.
      if (desc_pend_q) begin : desc
        logic [831:0]  h;
        logic [1023:0] d;
        logic          len_bad, csum_bad;
        logic [16:0]   pe;
        logic [3:0]    ihl;
        h = {hdr1_q, hdr0_q};
        d = '0;
        ihl = h[14*8 +: 4];
        len_bad  = len_hdr_q || ip_end_q > n_q || n_q < {9'd0, hdr_len_q} + 17'd4;
        csum_bad = !v6_q && ihl == 4'd5 && ip4_csum(hdr0_q) != `ROCE_RX_BE16(h, 24);
        d[`SYN_IP_CHECKSUM] = csum_bad;
        d[`SYN_LENGTH]      = len_bad;
        d[`SYN_HEADER]      = hdr_bad_q;
        d[`SYN_ICRC]        = !len_bad && !hdr_bad_q && icrc_crc != icrc_rx_q;
        d[`SYN_FCS]         = fcs_q;
        d[`RXD_IPV6_LO]     = v6_q;
        d[`RXD_IHL_LO +: 4] = v6_q ? 4'd0 : ihl;
        d[`RXD_HDR_LEN_LO +: 8] = hdr_len_q;
        pe = min17(pay_end_q, n_q);
        if (pay_ok_q && pe > {9'd0, hdr_len_q}) d[`RXD_PAYLOAD_LEN_LO +: 16] = pe[15:0] - {8'd0, hdr_len_q};
        d[`RXD_FRAME_LEN_LO +: 16] = n_q[15:0];
        d[`RXD_ETH_DST_LO +: 48]   = `ROCE_RX_BE48(h, 0);
        d[`RXD_ETH_SRC_LO +: 48]   = `ROCE_RX_BE48(h, 6);
        d[`RXD_ETHERTYPE_LO +: 16] = `ROCE_RX_BE16(h, 12);
        if (v6_q) begin
          d[`RXD_IP_SRC_LO +: 128]    = `ROCE_RX_BE128(h, 22);
          d[`RXD_IP_DST_LO +: 128]    = `ROCE_RX_BE128(h, 38);
          d[`RXD_TOS_LO +: 8]         = {h[14*8 +: 4], h[15*8+4 +: 4]};
          d[`RXD_TTL_LO +: 8]         = h[21*8 +: 8];
          d[`RXD_FLOW_LABEL_LO +: 20] = {h[15*8 +: 4], h[16*8 +: 8], h[17*8 +: 8]};
          d[`RXD_IP_LEN_LO +: 16]     = `ROCE_RX_BE16(h, 18);
          d[`RXD_UDP_SPORT_LO +: 16]  = `ROCE_RX_BE16(h, 54);
          d[`RXD_UDP_DPORT_LO +: 16]  = `ROCE_RX_BE16(h, 56);
          d[`RXD_UDP_LEN_LO +: 16]    = `ROCE_RX_BE16(h, 58);
          d[`RXD_UDP_CSUM_LO +: 16]   = `ROCE_RX_BE16(h, 60);
          d[`RXD_OPCODE_LO +: 8]      = h[62*8 +: 8];
          d[`RXD_SE_LO]               = h[63*8 + 7];
          d[`RXD_MIG_LO]              = h[63*8 + 6];
          d[`RXD_PAD_CNT_LO +: 2]     = h[63*8 + 4 +: 2];
          d[`RXD_TVER_LO +: 4]        = h[63*8 +: 4];
          d[`RXD_PKEY_LO +: 16]       = `ROCE_RX_BE16(h, 64);
          d[`RXD_BTH_B4_LO +: 8]      = h[66*8 +: 8];
          d[`RXD_DEST_QP_LO +: 24]    = `ROCE_RX_BE24(h, 67);
          d[`RXD_ACK_REQ_LO]          = h[70*8 + 7];
          d[`RXD_RESV7_LO +: 7]       = h[70*8 +: 7];
          d[`RXD_PSN_LO +: 24]        = `ROCE_RX_BE24(h, 71);
          for (int i = 0; i < 28; i++)
            if (i < {27'd0, elen_q}) d[`RXD_EXT_LO + 8*i +: 8] = h[(74+i)*8 +: 8];
        end else begin
          d[`RXD_IP_SRC_LO +: 32]     = `ROCE_RX_BE32(h, 26);
          d[`RXD_IP_DST_LO +: 32]     = `ROCE_RX_BE32(h, 30);
          d[`RXD_TOS_LO +: 8]         = h[15*8 +: 8];
          d[`RXD_TTL_LO +: 8]         = h[22*8 +: 8];
          d[`RXD_IP_LEN_LO +: 16]     = `ROCE_RX_BE16(h, 16);
          d[`RXD_IP_ID_LO +: 16]      = `ROCE_RX_BE16(h, 18);
          d[`RXD_IP_FRAG_LO +: 16]    = `ROCE_RX_BE16(h, 20);
          d[`RXD_IP_CSUM_LO +: 16]    = `ROCE_RX_BE16(h, 24);
          d[`RXD_UDP_SPORT_LO +: 16]  = `ROCE_RX_BE16(h, 34);
          d[`RXD_UDP_DPORT_LO +: 16]  = `ROCE_RX_BE16(h, 36);
          d[`RXD_UDP_LEN_LO +: 16]    = `ROCE_RX_BE16(h, 38);
          d[`RXD_UDP_CSUM_LO +: 16]   = `ROCE_RX_BE16(h, 40);
          d[`RXD_OPCODE_LO +: 8]      = h[42*8 +: 8];
          d[`RXD_SE_LO]               = h[43*8 + 7];
          d[`RXD_MIG_LO]              = h[43*8 + 6];
          d[`RXD_PAD_CNT_LO +: 2]     = h[43*8 + 4 +: 2];
          d[`RXD_TVER_LO +: 4]        = h[43*8 +: 4];
          d[`RXD_PKEY_LO +: 16]       = `ROCE_RX_BE16(h, 44);
          d[`RXD_BTH_B4_LO +: 8]      = h[46*8 +: 8];
          d[`RXD_DEST_QP_LO +: 24]    = `ROCE_RX_BE24(h, 47);
          d[`RXD_ACK_REQ_LO]          = h[50*8 + 7];
          d[`RXD_RESV7_LO +: 7]       = h[50*8 +: 7];
          d[`RXD_PSN_LO +: 24]        = `ROCE_RX_BE24(h, 51);
          for (int i = 0; i < 28; i++)
            if (i < {27'd0, elen_q}) d[`RXD_EXT_LO + 8*i +: 8] = h[(54+i)*8 +: 8];
        end
        d[`RXD_EXT_LEN_LO +: 8] = {3'd0, elen_q};
        d[`RXD_ICRC_LO +: 32]   = icrc_rx_q;
        m_desc       <= d;
        m_desc_valid <= 1'b1;
        desc_pend_q  <= 1'b0;
      end

      if (s_axis_tvalid || pe_act_q || prev_pend_q) begin : work
        logic         cs;         // the arriving beat continues prev_q's frame
        logic [16:0]  bpos;       // frame byte of the arriving beat
        logic [16:0]  cur_n;      // bytes in the arriving beat
        logic [16:0]  nfr;        // bytes of its frame received with it
        logic [511:0] dm;         // the arriving beat, bytes beyond the frame zeroed
        logic         cls_now;    // classification as known with this beat
        cs    = s_axis_tvalid && !sof_q;
        bpos  = sof_q ? 17'd0 : pos_q;
        cur_n = s_axis_tlast ? {10'd0, keep_bytes(s_axis_tkeep)} : 17'd64;
        nfr   = bpos + cur_n;
        dm    = s_axis_tlast ? (s_axis_tdata & keep_mask(s_axis_tkeep)) : s_axis_tdata;
        if (!s_axis_tvalid || !sof_q) cls_now = cls_q;
        else cls_now = classify({128'd0, dm}, s_axis_tlast ? nfr : MANY);
        if (cs && bpos == 17'd64) cls_now = classify({dm[127:0], hdr0_q}, s_axis_tlast ? nfr : MANY);

        // Payload: the next output beat starts in prev_q; it leaves when all
        // its bytes are in prev_q and the arriving beat.
        if (pe_act_q) begin : pay
          logic [16:0]   avail, eend, oend, off;
          logic [9:0]    sh;
          logic [6:0]    olen;
          logic [1023:0] win;
          avail = rcv_q + (cs ? cur_n : 17'd0);
          eend  = (cs && s_axis_tlast) ? min17(pe_end_q, avail) : pe_end_q;
          oend  = min17(pe_out_q + 17'd64, eend);
          off   = pe_out_q - prev_pos_q;
          olen  = oend[6:0] - pe_out_q[6:0];  // 1..64
          if (eend <= pe_out_q) begin
            pe_act_q <= 1'b0;  // the frame ended before any more payload
          end else if (pe_out_q >= prev_pos_q && off < 17'd64 && oend <= avail) begin
            win = {s_axis_tdata, prev_q};
            sh  = {1'b0, off[5:0], 3'b000};
            m_pay_tvalid <= 1'b1;
            m_pay_tkeep  <= first_bytes(olen);
            m_pay_tdata  <= win[sh +: 512] & keep_mask(first_bytes(olen));
            m_pay_tlast  <= oend == eend;
            pe_out_q     <= pe_out_q + 17'd64;
            if (oend == eend) pe_act_q <= 1'b0;
          end
          if (cs && s_axis_tlast) pe_end_q <= eend;
        end

        // Bypass: prev_q leaves once its frame is known not to be RoCE and the
        // next beat of its frame came (or it was the last).
        if (prev_pend_q && (cs || prev_last_q)) begin
          prev_pend_q <= 1'b0;
          if (!((cs && prev_pos_q == 17'd0) ? cls_now : cls_q)) begin
            m_byp_tvalid <= 1'b1;
            m_byp_tdata  <= prev_q;
            m_byp_tkeep  <= prev_keep_q;
            m_byp_tlast  <= prev_last_q;
          end
        end

        if (s_axis_tvalid) begin : beat
          prev_q      <= s_axis_tdata;
          prev_keep_q <= s_axis_tkeep;
          prev_last_q <= s_axis_tlast;
          prev_pend_q <= 1'b1;
          prev_pos_q  <= bpos;
          rcv_q       <= nfr;
          pos_q       <= bpos + 17'd64;
          sof_q       <= s_axis_tlast;
          crc_on_q    <= icrc_s_valid && !icrc_s_last;
          // The received ICRC: bytes [ip_end - 4, ip_end) found in this beat.
          begin : icrc_bytes
            logic [31:0] r;
            logic [16:0] p, o;
            r = sof_q ? 32'd0 : icrc_rx_q;
            p = in_cov;
            for (int j = 0; j < 4; j++) begin
              o = p - bpos;
              if (p >= bpos && o < 17'd64) r[8*j +: 8] = dm[{o[5:0], 3'b000} +: 8];
              p = p + 17'd1;
            end
            icrc_rx_q <= r;
          end
          if (sof_q) begin : first
            logic        v6, hbad, lbad;
            logic [16:0] ip_end, pay_end, udp_ip, pe_end;
            logic [5:0]  oe;
            logic [7:0]  op;
            logic [1:0]  pc;        // BTH PadCnt
            logic [7:0]  hl;
            logic [15:0] udp_len;
            v6      = in_et == 16'h86DD;
            ip_end  = in_cov + 17'd4;
            op      = v6 ? dm[62*8 +: 8] : dm[42*8 +: 8];
            pc      = v6 ? dm[63*8+4 +: 2] : dm[43*8+4 +: 2];
            oe      = op_ext(op);
            hl      = (v6 ? 8'd74 : 8'd54) + {3'd0, oe[4:0]};
            udp_len = v6 ? {dm[58*8 +: 8], dm[59*8 +: 8]} : {dm[38*8 +: 8], dm[39*8 +: 8]};
            udp_ip  = ip_end - (v6 ? 17'd54 : 17'd34);
            lbad    = (!v6 && {dm[16*8 +: 8], dm[17*8 +: 8]} < 16'd20) ||
                      {1'b0, udp_len} != udp_ip ||
                      ip_end < {9'd0, hl} + 17'd4 + {15'd0, pc};
            hbad    = (!v6 && dm[14*8 +: 4] != 4'd5) || !oe[5];
            pay_end = ip_end - 17'd4 - {15'd0, pc};
            v6_q      <= v6;
            ip_end_q  <= ip_end;
            cov_q     <= in_cov;
            pay_end_q <= pay_end;
            hdr_len_q <= hl;
            elen_q    <= oe[4:0];
            len_hdr_q <= lbad;
            hdr_bad_q <= hbad;
            pay_ok_q  <= cls_now && !lbad && !hbad;
            cls_q     <= cls_now;
            hdr0_q    <= dm;
            hdr1_q    <= '0;
            // The payload emitter takes this frame (the previous frame's
            // last payload beat, if any, left above with this edge).
            pe_end    = s_axis_tlast ? min17(pay_end, nfr) : pay_end;
            pe_act_q  <= cls_now && !lbad && !hbad && pe_end > {9'd0, hl};
            pe_out_q  <= {9'd0, hl};
            pe_end_q  <= pe_end;
          end else if (bpos == 17'd64) begin
            hdr1_q <= dm[319:0];
            cls_q  <= cls_now;
          end
          if (s_axis_tlast) begin
            n_q         <= nfr;
            fcs_q       <= s_axis_tuser;
            desc_pend_q <= cls_now;
          end
        end
      end
    end
  end

  // Unused: icrc's s_ready is tied 1 (a beat a cycle), crc_valid is implied
  // by the frame's end; bytes 104.. of beat 1 are never needed.
  logic unused_ok;
  assign unused_ok = &{1'b0, icrc_s_ready, icrc_valid, 1'b0};

`undef ROCE_RX_BE16
`undef ROCE_RX_BE24
`undef ROCE_RX_BE32
`undef ROCE_RX_BE48
`undef ROCE_RX_BE64
`undef ROCE_RX_BE128

endmodule
