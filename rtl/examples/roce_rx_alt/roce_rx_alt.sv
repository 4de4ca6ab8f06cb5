`timescale 1ps/1ps
// rtl/examples/roce_rx_alt/roce_rx_alt.sv: an example of users' own RTL at
// the RX seam (rtl/SEAM.md): a store-and-forward roce_rx, deliberately
// built unlike rtl/roce_rx (cut-through) and giving the same descriptors,
// payload and bypass frames. Reference model: model/datapath/roce_rx_ref.h.
//
// Structure (three stages joined by a frame buffer and two queues):
//   write:  every beat goes into a frame buffer (2^AW beats of 512 bits);
//           when a frame's last beat is in, a record (start, length, bad
//           FCS) enters a record queue (2^RW entries). No parsing here.
//   parse:  takes a record, reads the stored frame back one beat a clock,
//           feeds rtl/icrc with the ICRC-covered bytes (the frame's length
//           is known, so the coverage end is min(ip_end - 4, n)), keeps the
//           first 128 bytes and the received ICRC, then classifies the
//           whole frame at once and builds the descriptor into a result
//           queue (2^QW entries, so that a long frame in one stage does not
//           stall the other).
//   emit:   takes a result; a RoCE frame's descriptor leaves first, its
//           payload follows, read straight from the buffer two beats at a
//           time and shifted by hdr_len mod 64; a non-RoCE frame is read out
//           to the bypass stream. Then the frame's buffer space is released.
// The buffer has an asynchronous read (three read ports); a frame that
// does not fit (buffer or record queue full) is dropped whole and counted
// in dropped_q (never cut or mixed with another).
//
// Ports: the same as roce_rx (rtl/README.md).
//
// Latency (counted as rtl/roce_rx counts it), with the block idle: the
// descriptor after r + 3 cycles, r = the beats the parse stage reads
// (max(ceil(min(ip_end, n) / 64), min(ceil(n / 64), 2))): 4 cycles for a
// 62-byte ACK, 20 for a 1082-byte SEND. The payload follows at a beat a
// cycle. Behind earlier frames a frame waits its turn: each stage takes at
// most a beat a cycle, so frames back to back keep flowing (on the
// captures sent back to back the latency drifts by one cycle per 1300
// beats, which the link's inter-frame gaps absorb).
//
// Limits: as roce_rx (frames up to 65535 bytes, 2^AW beats at most).
`include "seam.vh"

module roce_rx_alt #(
  parameter int AW = 11,  // frame buffer: 2^AW beats (2048 = 128 KiB); 10 <= AW <= 16
  parameter int RW = 6,   // record queue: 2^RW frames
  parameter int QW = 3    // result queue (parse -> emit): 2^QW frames
) (
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

  localparam int DEPTH = 1 << AW;
  localparam int RECW = AW + 17 + 1;  // {start, length, bad FCS}
  localparam logic [AW:0] BUF_BEATS = {1'b1, {AW{1'b0}}};
  localparam logic [RW:0] REC_SLOTS = {1'b1, {RW{1'b0}}};

  // ---- small helpers ---------------------------------------------------------
  // The first n bytes of a beat as a keep (n >= 64: all).
  function automatic logic [63:0] alt_keep(input logic [16:0] n);
    alt_keep = (n >= 17'd64) ? {64{1'b1}} : ((64'd1 << n[5:0]) - 64'd1);
  endfunction

  // A keep as a 512-bit mask.
  function automatic logic [511:0] alt_mask(input logic [63:0] k);
    logic [511:0] m;
    for (int i = 0; i < 64; i++) m[8*i +: 8] = k[i] ? 8'hFF : 8'h00;
    alt_mask = m;
  endfunction

  // Bytes in a contiguous keep: the index of its highest one, plus one.
  function automatic logic [6:0] alt_count(input logic [63:0] k);
    logic [6:0] c;
    c = 7'd0;
    for (int i = 0; i < 64; i++) if (k[i]) c = i[6:0] + 7'd1;
    alt_count = c;
  endfunction

  // Byte i (0..127) of the first two beats, and big-endian pairs.
  function automatic logic [7:0] byt(input logic [1023:0] v, input logic [6:0] i);
    byt = v[{i, 3'b000} +: 8];
  endfunction
  function automatic logic [15:0] be2(input logic [1023:0] v, input logic [6:0] i);
    be2 = {byt(v, i), byt(v, i + 7'd1)};
  endfunction

  // Extension-header bytes of a BTH opcode, 6'h3F when the opcode is not
  // one of model/roce/opcodes.cpp's (a lookup by transport and operation).
  function automatic logic [5:0] alt_ext(input logic [7:0] op);
    logic [5:0] e;
    e = 6'h3F;
    if (op[7:5] == 3'b000) begin  // RC
      case (op[4:0])
        5'h00, 5'h01, 5'h02, 5'h04, 5'h07, 5'h08, 5'h0E: e = 6'd0;
        5'h03, 5'h05, 5'h09: e = 6'd4;                  // ImmDt
        5'h06, 5'h0A, 5'h0C: e = 6'd16;                 // RETH
        5'h0B: e = 6'd20;                               // RETH, ImmDt
        5'h0D, 5'h0F, 5'h10, 5'h11: e = 6'd4;           // AETH
        5'h12: e = 6'd12;                               // AETH, AtomicAckETH
        5'h13, 5'h14: e = 6'd28;                        // AtomicETH
        5'h16, 5'h17: e = 6'd4;                         // IETH
        default: e = 6'h3F;
      endcase
    end else if (op == 8'h64) e = 6'd8;   // UD SEND_ONLY: DETH
    else if (op == 8'h65) e = 6'd12;      // UD SEND_ONLY_IMM: DETH, ImmDt
    else if (op == 8'h81) e = 6'd0;       // CNP
    alt_ext = e;
  endfunction

  // ---- frame buffer and record queue -----------------------------------------
  logic [511:0]    mem [0:DEPTH-1];
  logic [RECW-1:0] recq [0:(1<<RW)-1];
  logic [AW:0]     wp_q, fst_q, rel_q;  // write pointer, start of the frame being written, released up to
  logic [16:0]     wn_q;                // bytes of the frame being written
  logic            w_in_q, w_drop_q;
  logic [RW:0]     rq_wp_q, rq_rp_q;
  logic [31:0]     dropped_q;           // frames dropped for lack of room (visible in waveforms)

  logic            buf_full, rq_full, rq_empty;
  logic [RECW-1:0] rq_head;
  assign buf_full = (wp_q - rel_q) == BUF_BEATS;
  assign rq_full  = (rq_wp_q - rq_rp_q) == REC_SLOTS;
  assign rq_empty = rq_wp_q == rq_rp_q;
  assign rq_head  = recq[rq_rp_q[RW-1:0]];

  // ---- parse stage: reads a stored frame, feeds icrc ---------------------------
  localparam logic [1:0] P_IDLE = 2'd0, P_READ = 2'd1, P_DONE = 2'd2;
  logic [1:0]    p_st_q;
  logic [AW-1:0] p_start_q;
  logic [16:0]   p_n_q;
  logic [16:0]   p_ipend_q;            // 14 + IP length (0: not IP)
  logic          p_fcs_q;
  logic [10:0]   p_i_q;                // beat to read next
  logic [511:0]  p_h0_q, p_h1_q;       // first two beats, bytes beyond the frame zeroed
  logic [31:0]   p_icrc_q;             // the received ICRC bytes
  logic          res_full, res_empty;  // result queue (parse -> emit)
  logic          e_take;               // the emit stage takes a result at this edge

  // The beat the parse stage reads in this cycle: the next record's first
  // beat when it starts one now (p_go), else the next beat of its frame.
  logic          p_go, p_rd;
  logic [AW-1:0] p_cur_start;
  logic [16:0]   p_cur_n, p_cur_ipend, p_cur_cov, p_cur_base;
  logic [10:0]   p_cur_i;
  logic [511:0]  p_word;
  logic [15:0]   p_et;
  assign p_go        = (p_st_q == P_IDLE || (p_st_q == P_DONE && !res_full)) && !rq_empty;
  assign p_rd        = p_go || p_st_q == P_READ;
  assign p_cur_start = p_go ? rq_head[RECW-1 -: AW] : p_start_q;
  assign p_cur_n     = p_go ? rq_head[17:1] : p_n_q;
  assign p_cur_i     = p_go ? 11'd0 : p_i_q;
  assign p_cur_base  = {p_cur_i, 6'd0};
  assign p_word      = mem[p_cur_start + p_cur_i[AW-1:0]];
  assign p_et        = {p_word[12*8 +: 8], p_word[13*8 +: 8]};
  // The IP end from the first beat, and the ICRC coverage min(ip_end - 4, n).
  assign p_cur_ipend = !p_go ? p_ipend_q
                     : (p_et == 16'h0800) ? 17'd14 + {1'b0, p_word[16*8 +: 8], p_word[17*8 +: 8]}
                     : (p_et == 16'h86DD) ? 17'd54 + {1'b0, p_word[18*8 +: 8], p_word[19*8 +: 8]}
                     : 17'd0;
  assign p_cur_cov   = (p_cur_ipend == 17'd0) ? 17'd0
                     : (p_cur_ipend - 17'd4 > p_cur_n) ? p_cur_n : p_cur_ipend - 17'd4;

  logic         icrc_s_valid, icrc_s_last, icrc_s_ready, icrc_valid;
  logic [63:0]  icrc_s_keep;
  logic [31:0]  icrc_crc;
  assign icrc_s_valid = p_rd && p_cur_base < p_cur_cov;
  assign icrc_s_last  = p_cur_base + 17'd64 >= p_cur_cov;
  assign icrc_s_keep  = alt_keep(p_cur_cov - p_cur_base);

  icrc u_icrc (
    .clk      (clk),
    .rst_n    (rst_n),
    .s_valid  (icrc_s_valid),
    .s_ready  (icrc_s_ready),
    .s_data   (p_word),
    .s_keep   (icrc_s_keep),
    .s_last   (icrc_s_last),
    .crc_valid(icrc_valid),
    .crc      (icrc_crc)
  );

  // ---- result queue (parse -> emit): what the parse stage found -------------------
  logic          res_roce_q  [0:(1<<QW)-1];
  logic [1023:0] res_desc_q  [0:(1<<QW)-1];
  logic [AW-1:0] res_start_q [0:(1<<QW)-1];
  logic [16:0]   res_n_q     [0:(1<<QW)-1];
  logic [16:0]   res_plen_q  [0:(1<<QW)-1];
  logic [7:0]    res_hdr_q   [0:(1<<QW)-1];
  logic [QW:0]   res_wp_q, res_rp_q;
  logic [QW-1:0] res_h;                // head slot
  localparam logic [QW:0] RES_SLOTS = {1'b1, {QW{1'b0}}};
  assign res_empty = res_wp_q == res_rp_q;
  assign res_full  = (res_wp_q - res_rp_q) == RES_SLOTS;
  assign res_h     = res_rp_q[QW-1:0];

  // ---- emit stage ------------------------------------------------------------------
  logic          e_act_q, e_roce_q;
  logic [AW-1:0] e_start_q;
  logic [16:0]   e_n_q, e_plen_q;
  logic [7:0]    e_hdr_q;
  logic [10:0]   e_k_q;               // output beat index
  assign e_take = !e_act_q && !res_empty;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wp_q <= '0; fst_q <= '0; rel_q <= '0; wn_q <= '0;
      w_in_q <= 1'b0; w_drop_q <= 1'b0;
      rq_wp_q <= '0; rq_rp_q <= '0;
      dropped_q <= 32'd0;
      p_st_q <= P_IDLE;
      res_wp_q <= '0; res_rp_q <= '0;
      e_act_q <= 1'b0;
      m_desc_valid <= 1'b0;
      m_pay_tvalid <= 1'b0;
      m_byp_tvalid <= 1'b0;
    end else begin
      m_desc_valid <= 1'b0;
      m_pay_tvalid <= 1'b0;
      m_byp_tvalid <= 1'b0;

      // ---- write stage ----
      if (s_axis_tvalid) begin : wr
        logic [AW:0] start;
        logic [16:0] nb;
        logic        drop;
        start = w_in_q ? fst_q : wp_q;
        nb    = (w_in_q ? wn_q : 17'd0) + (s_axis_tlast ? {10'd0, alt_count(s_axis_tkeep)} : 17'd64);
        drop  = (w_in_q && w_drop_q) || buf_full || (s_axis_tlast && rq_full);
        if (!drop) begin
          mem[wp_q[AW-1:0]] <= s_axis_tdata;
          wp_q <= wp_q + 1'b1;
        end
        if (s_axis_tlast) begin
          w_in_q <= 1'b0;
          if (drop) begin
            wp_q      <= start;  // give the frame's beats back
            dropped_q <= dropped_q + 32'd1;
          end else begin
            recq[rq_wp_q[RW-1:0]] <= {start[AW-1:0], nb, s_axis_tuser};
            rq_wp_q <= rq_wp_q + 1'b1;
          end
        end else begin
          w_in_q   <= 1'b1;
          fst_q    <= start;
          wn_q     <= nb;
          w_drop_q <= drop;
        end
      end

      // ---- emit stage ----
      begin : emit
        logic          take, roce, last;
        logic [AW-1:0] start, a;
        logic [16:0]   n, plen, pos, left;
        logic [10:0]   nbt;
        logic [7:0]    hdr;
        logic [10:0]   k;
        logic [1023:0] two;
        take  = e_take;
        roce  = take ? res_roce_q[res_h] : e_roce_q;
        start = take ? res_start_q[res_h] : e_start_q;
        n     = take ? res_n_q[res_h] : e_n_q;
        plen  = take ? res_plen_q[res_h] : e_plen_q;
        hdr   = take ? res_hdr_q[res_h] : e_hdr_q;
        k     = take ? 11'd0 : e_k_q;
        if (take) begin
          res_rp_q  <= res_rp_q + 1'b1;
          e_roce_q  <= roce;
          e_start_q <= start;
          e_n_q     <= n;
          e_plen_q  <= plen;
          e_hdr_q   <= hdr;
          if (roce) begin
            m_desc       <= res_desc_q[res_h];
            m_desc_valid <= 1'b1;
          end
        end
        if (take || e_act_q) begin
          last = 1'b1;
          if (!roce) begin
            left = n - {k, 6'd0};
            last = left <= 17'd64;
            m_byp_tvalid <= 1'b1;
            m_byp_tdata  <= mem[start + k[AW-1:0]];
            m_byp_tkeep  <= alt_keep(left);
            m_byp_tlast  <= last;
          end else if (plen != 17'd0) begin
            pos  = {9'd0, hdr} + {k, 6'd0};
            a    = start + pos[AW+5:6];
            left = plen - {k, 6'd0};
            last = left <= 17'd64;
            two  = {mem[a + 1'b1], mem[a]};
            m_pay_tvalid <= 1'b1;
            m_pay_tdata  <= two[{1'b0, pos[5:0], 3'b000} +: 512] & alt_mask(alt_keep(left));
            m_pay_tkeep  <= alt_keep(left);
            m_pay_tlast  <= last;
          end
          e_k_q   <= k + 11'd1;
          e_act_q <= !last;
          // The frame is done with: its beats go back to the write stage.
          nbt = n[16:6] + {10'd0, n[5:0] != 6'd0};
          if (last) rel_q <= rel_q + {{(AW-10){1'b0}}, nbt};
        end
      end
      // ---- parse stage: finish a frame (room in the result queue) ----
      if (p_st_q == P_DONE && !res_full) begin : fin
        logic [1023:0] hh, d;
        logic [16:0]   n, ip_end, pay_end, ulen_ip, pe, plen;
        logic [15:0]   et, iplen;
        logic [6:0]    udp_cls, udp, bth;
        logic [7:0]    op, hl;
        logic [5:0]    ext;
        logic [1:0]    pc;
        logic          v6, is_roce, l_hdr, l_bad, h_bad;
        logic [19:0]   sum;
        hh = {p_h1_q, p_h0_q};
        n  = p_n_q;
        et = be2(hh, 7'd12);
        v6 = et == 16'h86DD;
        // Classification (model/link/classify.h) of the whole frame.
        udp_cls = v6 ? 7'd54 : 7'd14 + {1'b0, hh[14*8 +: 4], 2'b00};
        is_roce = (et == 16'h0800 && n >= 17'd34 && hh[14*8+4 +: 4] == 4'd4 && byt(hh, 7'd23) == 8'd17) ||
                  (v6 && n >= 17'd54 && hh[14*8+4 +: 4] == 4'd6 && byt(hh, 7'd20) == 8'd17);
        is_roce = is_roce && n >= {10'd0, udp_cls} + 17'd8 && be2(hh, udp_cls + 7'd2) == 16'd4791;
        // The headers at the offsets of IHL 5 / IPv6.
        udp    = v6 ? 7'd54 : 7'd34;
        bth    = udp + 7'd8;
        op     = byt(hh, bth);
        pc     = hh[{bth, 3'b000} + 10'd12 +: 2];
        ext    = alt_ext(op);
        hl     = {1'b0, bth} + 8'd12 + ((ext == 6'h3F) ? 8'd0 : {2'd0, ext});
        iplen  = v6 ? be2(hh, 7'd18) : be2(hh, 7'd16);
        ip_end = {1'b0, iplen} + (v6 ? 17'd54 : 17'd14);
        ulen_ip = ip_end - {10'd0, udp};
        pay_end = ip_end - 17'd4 - {15'd0, pc};
        l_hdr  = (!v6 && iplen < 16'd20) || {1'b0, be2(hh, udp + 7'd4)} != ulen_ip ||
                 ip_end < {9'd0, hl} + 17'd4 + {15'd0, pc};
        l_bad  = l_hdr || ip_end > n || n < {9'd0, hl} + 17'd4;
        h_bad  = (!v6 && hh[14*8 +: 4] != 4'd5) || ext == 6'h3F;
        // IPv4 header checksum: the ones'-complement sum of the ten words
        // with the checksum word taken as zero, complemented.
        sum = 20'd0;
        for (int w = 0; w < 10; w++)
          if (w != 5) sum = sum + {4'd0, hh[(14 + 2*w)*8 +: 8], hh[(15 + 2*w)*8 +: 8]};
        sum = {4'd0, sum[15:0]} + {16'd0, sum[19:16]};
        sum = {4'd0, sum[15:0]} + {16'd0, sum[19:16]};
        pe   = (pay_end < n) ? pay_end : n;
        plen = (!l_hdr && !h_bad && pe > {9'd0, hl}) ? pe - {9'd0, hl} : 17'd0;
        d = '0;
        d[`SYN_IP_CHECKSUM] = !v6 && hh[14*8 +: 4] == 4'd5 && ~sum[15:0] != be2(hh, 7'd24);
        d[`SYN_LENGTH] = l_bad;
        d[`SYN_HEADER] = h_bad;
        d[`SYN_ICRC]   = !l_bad && !h_bad && icrc_crc != p_icrc_q;
        d[`SYN_FCS]    = p_fcs_q;
        d[`RXD_IPV6_LO] = v6;
        d[`RXD_IHL_LO +: 4] = v6 ? 4'd0 : hh[14*8 +: 4];
        d[`RXD_HDR_LEN_LO +: 8] = hl;
        d[`RXD_PAYLOAD_LEN_LO +: 16] = plen[15:0];
        d[`RXD_FRAME_LEN_LO +: 16] = n[15:0];
        for (int i = 0; i < 6; i++) begin
          d[`RXD_ETH_DST_LO + 8*(5-i) +: 8] = hh[i*8 +: 8];
          d[`RXD_ETH_SRC_LO + 8*(5-i) +: 8] = hh[(6+i)*8 +: 8];
        end
        d[`RXD_ETHERTYPE_LO +: 16] = et;
        if (v6) begin
          for (int i = 0; i < 16; i++) begin
            d[`RXD_IP_SRC_LO + 8*(15-i) +: 8] = hh[(22+i)*8 +: 8];
            d[`RXD_IP_DST_LO + 8*(15-i) +: 8] = hh[(38+i)*8 +: 8];
          end
          d[`RXD_TOS_LO +: 8] = {hh[14*8 +: 4], hh[15*8+4 +: 4]};
          d[`RXD_TTL_LO +: 8] = byt(hh, 7'd21);
          d[`RXD_FLOW_LABEL_LO +: 20] = {hh[15*8 +: 4], be2(hh, 7'd16)};
        end else begin
          for (int i = 0; i < 4; i++) begin
            d[`RXD_IP_SRC_LO + 8*(3-i) +: 8] = hh[(26+i)*8 +: 8];
            d[`RXD_IP_DST_LO + 8*(3-i) +: 8] = hh[(30+i)*8 +: 8];
          end
          d[`RXD_TOS_LO +: 8] = byt(hh, 7'd15);
          d[`RXD_TTL_LO +: 8] = byt(hh, 7'd22);
          d[`RXD_IP_ID_LO +: 16]   = be2(hh, 7'd18);
          d[`RXD_IP_FRAG_LO +: 16] = be2(hh, 7'd20);
          d[`RXD_IP_CSUM_LO +: 16] = be2(hh, 7'd24);
        end
        d[`RXD_IP_LEN_LO +: 16]    = iplen;
        d[`RXD_UDP_SPORT_LO +: 16] = be2(hh, udp);
        d[`RXD_UDP_DPORT_LO +: 16] = be2(hh, udp + 7'd2);
        d[`RXD_UDP_LEN_LO +: 16]   = be2(hh, udp + 7'd4);
        d[`RXD_UDP_CSUM_LO +: 16]  = be2(hh, udp + 7'd6);
        d[`RXD_OPCODE_LO +: 8] = op;
        {d[`RXD_SE_LO], d[`RXD_MIG_LO], d[`RXD_PAD_CNT_LO +: 2], d[`RXD_TVER_LO +: 4]} = byt(hh, bth + 7'd1);
        d[`RXD_PKEY_LO +: 16] = be2(hh, bth + 7'd2);
        d[`RXD_BTH_B4_LO +: 8] = byt(hh, bth + 7'd4);
        d[`RXD_DEST_QP_LO +: 24] = {byt(hh, bth + 7'd5), be2(hh, bth + 7'd6)};
        {d[`RXD_ACK_REQ_LO], d[`RXD_RESV7_LO +: 7]} = byt(hh, bth + 7'd8);
        d[`RXD_PSN_LO +: 24] = {byt(hh, bth + 7'd9), be2(hh, bth + 7'd10)};
        if (ext != 6'h3F) begin
          d[`RXD_EXT_LEN_LO +: 8] = {2'd0, ext};
          for (int i = 0; i < 28; i++)
            if (i < {26'd0, ext}) d[`RXD_EXT_LO + 8*i +: 8] = byt(hh, bth + 7'd12 + i[6:0]);
        end
        d[`RXD_ICRC_LO +: 32] = p_icrc_q;
        res_roce_q[res_wp_q[QW-1:0]]  <= is_roce;
        res_desc_q[res_wp_q[QW-1:0]]  <= d;
        res_start_q[res_wp_q[QW-1:0]] <= p_start_q;
        res_n_q[res_wp_q[QW-1:0]]     <= n;
        res_plen_q[res_wp_q[QW-1:0]]  <= plen;
        res_hdr_q[res_wp_q[QW-1:0]]   <= hl;
        res_wp_q <= res_wp_q + 1'b1;
        p_st_q    <= P_IDLE;
      end

      // ---- parse stage: read a beat ----
      if (p_rd) begin : rd
        logic [511:0] m;
        logic [31:0]  ic;
        logic [16:0]  q, need;
        m  = p_word & alt_mask(alt_keep(p_cur_n - p_cur_base));
        ic = (p_cur_i == 11'd0) ? 32'd0 : p_icrc_q;
        // The received ICRC: bytes ip_end - 4 .. ip_end - 1 found in this beat.
        for (int j = 0; j < 4; j++) begin
          q = p_cur_ipend - 17'd4 + j[16:0];
          if (q >= p_cur_base && q < p_cur_base + 17'd64) ic[8*j +: 8] = m[{q[5:0], 3'b000} +: 8];
        end
        p_icrc_q <= ic;
        if (p_cur_i == 11'd0) begin
          p_start_q <= p_cur_start;
          p_n_q     <= p_cur_n;
          p_fcs_q   <= rq_head[0];
          p_ipend_q <= p_cur_ipend;
          p_h0_q    <= m;
          p_h1_q    <= '0;
          rq_rp_q   <= rq_rp_q + 1'b1;
        end
        if (p_cur_i == 11'd1) p_h1_q <= m;
        // Beats to read: up to the ICRC's end (within the frame), and the
        // second beat for the headers.
        need = (p_cur_ipend > p_cur_n) ? p_cur_n : p_cur_ipend;
        if (need < 17'd128) need = (p_cur_n < 17'd128) ? p_cur_n : 17'd128;
        need = need - 17'd1;
        p_i_q  <= p_cur_i + 11'd1;
        p_st_q <= (p_cur_i == need[16:6]) ? P_DONE : P_READ;
      end

    end
  end

  logic unused_ok;
  assign unused_ok = &{1'b0, icrc_s_ready, icrc_valid, dropped_q[0], 1'b0};

endmodule
