`timescale 1ps/1ps
// rtl/roce_tx/roce_tx.sv: the TX half of the FPGA RoCEv2 datapath. From a
// header descriptor and a payload stream it builds the frame
//   Ethernet II | IPv4 (IHL 5) or IPv6 | UDP (dport 4791, checksum 0) |
//   BTH | extension headers | payload | pad (zero bytes) | ICRC
// and emits it as 512-bit AXI4-Stream beats (rtl/SEAM.md, "TX seam"; the
// descriptor layout is in rtl/include/seam.vh). The bytes equal
// roce::encode's (model/roce/packet.h); the C++ reference model is
// model/datapath/roce_tx_ref.h.
//
// Ports (core clock; all sampled at its rising edge)
//   clk, rst_n        synchronous reset, active low: drops every frame held
//   s_desc_*          the descriptor (valid/ready, SEAM_TXD_W = 768 bits);
//                     s_desc_ready is a register (one descriptor is held
//                     while the previous frame is assembled)
//   s_pay_*           the payload, payload byte 0 = beat 0 byte 0; a frame
//                     takes ceil(payload_len / 64) beats (none when 0).
//                     tvalid may drop at any beat. Beat and byte counts
//                     come from the descriptor's payload_len: s_pay_tkeep
//                     and s_pay_tlast are not read (they must agree; the
//                     seam's protocol monitor checks them). Bytes beyond
//                     payload_len in the last beat are ignored.
//   cfg_udp_sport     UDP source port; sampled when a frame's assembly
//                     starts (change it while idle)
//   m_axis_*          the frame: tkeep all ones except on the tlast beat;
//                     once tvalid rises on a frame's first beat it stays
//                     high until its tlast (m_axis_tready low stalls, never
//                     a bubble); tdata bytes beyond tkeep are zero
//
// Architecture: store and forward, because the ICRC (rtl/icrc) is known
// only after the frame's last byte while the output may not pause inside a
// frame and the payload may. Three stages:
//   W (assemble)  one body beat a cycle into wbeat_q: header beats (the
//                 header is built from the descriptor when the frame is
//                 loaded: lengths, IPv4 checksum, PadCnt), then payload
//                 beats shifted by S = header length mod 64 bytes with a
//                 512-bit carry, then (if the shifted payload and pad spill
//                 over) one flush beat. Bytes past the body are zero, so the
//                 pad is zero.
//   C (commit)    wbeat_q is written into the beat buffer (2**BUF_AW beats)
//                 and fed to rtl/icrc in the same cycle; crc_valid follows
//                 one cycle after the last beat and the frame's record
//                 (body beats, bytes in the last body beat, ICRC) enters
//                 the record FIFO (2**REC_AW frames).
//   R (read)      the output register stage: a committed frame is read
//                 out one beat per cycle that m_axis can take; the ICRC is
//                 ORed in after the body's last byte, with one extra beat
//                 when it does not fit (body ends after byte 60 of its
//                 last beat). A record arriving while R is idle bypasses
//                 the FIFO.
//
// Timing (cycles of clk; edge k = the k-th rising edge). With the block
// idle, a descriptor accepted at edge D and no payload bubble, body beat i
// (i = 0..B-1) is assembled at edge D+1+i, and the first output beat is
// valid from edge D+B+2 (m_axis can take it at edge D+B+3). Equivalently,
// tvalid rises 2 cycles after the edge that accepted the last payload beat
// (3 when the frame needs a flush beat). A frame of B body beats (B =
// ceil(L/64), L = header + payload + pad bytes, at least 1) leaves as
// O = ceil((L+4)/64) beats. Throughput: W assembles back-to-back frames
// with no idle cycle between them (one held descriptor), R emits them with
// none either, so frames leave at one beat a cycle, O cycles per frame, no
// overhead cycle, as long as payload and m_axis_tready keep up and each
// frame's B is at most the previous frame's O (a frame cannot leave before
// it is whole: a longer one after a shorter one leaves a gap of the
// difference). Single-beat frames such as ACKs go at one a cycle. The
// reference model's RoceTxTiming gives every handshake edge.
//
// Limits: a frame's body must fit the beat buffer, L <= 64 * 2**BUF_AW
// bytes (16384 with BUF_AW = 8; a PMTU 4096 frame has L <= 4190: IPv6,
// RETH + ImmDt, 4096 bytes of payload); a larger one stalls the block.
// Under an output stall it holds 2**BUF_AW beats and at most 2**REC_AW
// frames between assembly and the output register (plus the one in it and
// one held descriptor). ext_len above 28 is taken as 28. Raw frames get
// the ICRC as rtl/icrc computes it (IPv4 IHL 5 or IPv6, no VLAN tag).
`include "seam.vh"

module roce_tx #(
  parameter integer BUF_AW = 8,  // beat buffer: 2**BUF_AW beats of 64 bytes
  parameter integer REC_AW = 5   // frames loaded for assembly and not yet started by R: 2**REC_AW
) (
  input  logic         clk,
  input  logic         rst_n,
  input  logic         s_desc_valid,
  output logic         s_desc_ready,
  input  logic [767:0] s_desc,
  input  logic         s_pay_tvalid,
  output logic         s_pay_tready,
  input  logic [511:0] s_pay_tdata,
  input  logic [63:0]  s_pay_tkeep,
  input  logic         s_pay_tlast,
  input  logic [15:0]  cfg_udp_sport,
  output logic         m_axis_tvalid,
  input  logic         m_axis_tready,
  output logic [511:0] m_axis_tdata,
  output logic [63:0]  m_axis_tkeep,
  output logic         m_axis_tlast
);

  localparam integer RECW = 11 + 7 + 32;  // record: body beats, bytes in last body beat, ICRC

  // ---- helpers ------------------------------------------------------------
  // Ones in the low n bytes (n = 0..64) of a beat / of a keep.
  function automatic logic [511:0] byte_mask(input logic [6:0] n);
    byte_mask = ~({512{1'b1}} << {n, 3'b000});
  endfunction
  function automatic logic [63:0] keep_mask(input logic [6:0] n);
    keep_mask = ~({64{1'b1}} << n);
  endfunction

  // The frame's header bytes (byte i at bits [8i+7:8i]; zero past the
  // header). e = extension-header bytes (<= 28).
  function automatic logic [1023:0] build_hdr(input logic [767:0] d, input logic [4:0] e,
                                              input logic [15:0] sport);
    logic [1023:0] h;
    logic [383:0]  t;        // UDP | BTH | ext (8 + 12 + 28 bytes)
    logic [15:0]   ppad;     // payload + pad bytes
    logic [15:0]   udp_len, ip_len;
    logic [19:0]   sum;
    logic [7:0]    tos;
    logic [19:0]   fl;
    logic [1:0]    pad;
    logic [31:0]   s4, d4;
    h = '0;
    ppad = (d[`TXD_PAYLOAD_LEN_LO +: 16] + 16'd3) & ~16'd3;
    pad = 2'd0 - d[`TXD_PAYLOAD_LEN_LO +: 2];
    udp_len = 16'd24 + {11'd0, e} + ppad;  // UDP 8 + BTH 12 + ext + payload + pad + ICRC 4
    ip_len = 16'd20 + udp_len;
    tos = d[`TXD_TOS_LO +: 8];
    fl = d[`TXD_FLOW_LABEL_LO +: 20];
    for (int i = 0; i < 6; i++) begin
      h[8*i +: 8]     = d[`TXD_ETH_DST_LO + 8*(5-i) +: 8];
      h[8*(6+i) +: 8] = d[`TXD_ETH_SRC_LO + 8*(5-i) +: 8];
    end
    // UDP, BTH, ext: placed after the IP header below.
    t = '0;
    t[0*8 +: 16]  = {sport[7:0], sport[15:8]};
    t[2*8 +: 16]  = 16'hB712;                    // 4791 = 0x12B7
    t[4*8 +: 16]  = {udp_len[7:0], udp_len[15:8]};
    t[8*8 +: 8]   = d[`TXD_OPCODE_LO +: 8];
    t[9*8 +: 8]   = {d[`TXD_SE_LO], d[`TXD_MIG_LO], pad, d[`TXD_TVER_LO +: 4]};
    t[10*8 +: 16] = {d[`TXD_PKEY_LO +: 8], d[`TXD_PKEY_LO + 8 +: 8]};
    t[12*8 +: 8]  = d[`TXD_BTH_B4_LO +: 8];
    t[13*8 +: 24] = {d[`TXD_DEST_QP_LO +: 8], d[`TXD_DEST_QP_LO + 8 +: 8], d[`TXD_DEST_QP_LO + 16 +: 8]};
    t[16*8 +: 8]  = {d[`TXD_ACK_REQ_LO], d[`TXD_RESV7_LO +: 7]};
    t[17*8 +: 24] = {d[`TXD_PSN_LO +: 8], d[`TXD_PSN_LO + 8 +: 8], d[`TXD_PSN_LO + 16 +: 8]};
    t[20*8 +: 224] = d[`TXD_EXT_LO +: `TXD_EXT_W] & ~({`TXD_EXT_W{1'b1}} << {e, 3'b000});
    if (d[`TXD_IPV6_LO]) begin
      h[12*8 +: 16] = 16'hDD86;                  // EtherType 0x86DD
      h[14*8 +: 8]  = {4'h6, tos[7:4]};
      h[15*8 +: 8]  = {tos[3:0], fl[19:16]};
      h[16*8 +: 16] = {fl[7:0], fl[15:8]};
      h[18*8 +: 16] = {udp_len[7:0], udp_len[15:8]};  // payload length
      h[20*8 +: 8]  = 8'd17;                     // next header UDP
      h[21*8 +: 8]  = d[`TXD_TTL_LO +: 8];       // hop limit
      for (int i = 0; i < 16; i++) begin
        h[8*(22+i) +: 8] = d[`TXD_IP_SRC_LO + 8*(15-i) +: 8];
        h[8*(38+i) +: 8] = d[`TXD_IP_DST_LO + 8*(15-i) +: 8];
      end
      h[54*8 +: 384] = t;
    end else begin
      s4 = d[`TXD_IP_SRC_LO +: 32];
      d4 = d[`TXD_IP_DST_LO +: 32];
      sum = {12'd0, 8'h45} << 8;
      sum = sum + {12'd0, tos} + {4'd0, ip_len} + {4'd0, d[`TXD_IP_ID_LO +: 16]}
          + {4'd0, d[`TXD_IP_FLAGS_LO +: 3], 13'd0} + {4'd0, d[`TXD_TTL_LO +: 8], 8'd17}
          + {4'd0, s4[31:16]} + {4'd0, s4[15:0]} + {4'd0, d4[31:16]} + {4'd0, d4[15:0]};
      sum = {4'd0, sum[15:0]} + {16'd0, sum[19:16]};
      sum = {4'd0, sum[15:0]} + {16'd0, sum[19:16]};
      h[12*8 +: 16] = 16'h0008;                  // EtherType 0x0800
      h[14*8 +: 8]  = 8'h45;                     // version 4, IHL 5
      h[15*8 +: 8]  = tos;
      h[16*8 +: 16] = {ip_len[7:0], ip_len[15:8]};
      h[18*8 +: 16] = {d[`TXD_IP_ID_LO +: 8], d[`TXD_IP_ID_LO + 8 +: 8]};
      h[20*8 +: 8]  = {d[`TXD_IP_FLAGS_LO +: 3], 5'd0};  // fragment offset 0
      h[22*8 +: 8]  = d[`TXD_TTL_LO +: 8];
      h[23*8 +: 8]  = 8'd17;                     // protocol UDP
      h[24*8 +: 16] = {~sum[7:0], ~sum[15:8]};   // header checksum
      h[26*8 +: 32] = {s4[7:0], s4[15:8], s4[23:16], s4[31:24]};
      h[30*8 +: 32] = {d4[7:0], d4[15:8], d4[23:16], d4[31:24]};
      h[34*8 +: 384] = t;
    end
    build_hdr = h;
  endfunction

  // ---- descriptor holding register and the frame being assembled (W) ------
  logic          run_q;      // out of reset
  logic          pend_v_q;
  logic [767:0]  pend_q;
  logic          cur_v_q;
  logic [511:0]  hdr0_q;     // header beat 0 (used when the header is >= 64 bytes)
  logic          hb_q;       // header >= 64 bytes: beat 0 is header only
  logic [5:0]    sh_q;       // S: header bytes mod 64 = payload byte 0's lane
  logic [10:0]   nbm1_q;     // body beats - 1
  logic [10:0]   bi_q;       // next body beat
  logic [10:0]   pleft_q;    // payload beats still to take
  logic [6:0]    plast_q;    // payload bytes in the last payload beat (1..64)
  logic [6:0]    lb_q;       // body bytes in the last body beat (0..64)
  logic [511:0]  carry_q;    // lanes [0,S): bytes waiting for the next body beat
  logic [REC_AW:0] nfr_q;    // frames loaded and not yet started by R

  // W -> C
  logic          wvalid_q, wlast_q;
  logic [511:0]  wbeat_q;
  logic [63:0]   wkeep_q;
  logic [10:0]   wnbm1_q;
  logic [6:0]    wlb_q;
  // C: beat buffer, record of the frame whose ICRC is being computed
  logic [511:0]  mem [0:(1<<BUF_AW)-1];
  logic [BUF_AW-1:0] wptr_q, rptr_q;
  logic [BUF_AW:0]   used_q;  // beats assembled and not yet read out (<= 2**BUF_AW)
  logic [10:0]   cnbm1_q;
  logic [6:0]    clb_q;
  logic          crc_valid;
  logic [31:0]   crc;
  logic          icrc_s_ready;
  logic [RECW-1:0] rec_mem [0:(1<<REC_AW)-1];
  logic [REC_AW-1:0] rec_wp_q, rec_rp_q;
  logic [REC_AW:0]   rec_cnt_q;
  // R
  logic          rd_act_q;    // a frame is being read out
  logic [10:0]   rd_left_q;   // its body beats still in the buffer (0: the ICRC beat is next)
  logic [6:0]    rd_lb_q;
  logic [31:0]   rd_icrc_q;

  // ---- control (small signals only) ---------------------------------------
  logic w_hdr, w_pay, w_adv, w_end, take_desc, do_load;
  logic out_adv, rd_start, rd_pop, rec_bypass, rec_push;
  logic buf_full, frames_full;
  assign buf_full    = used_q[BUF_AW];
  assign frames_full = nfr_q[REC_AW];
  always_comb begin
    w_hdr      = hb_q && (bi_q == 11'd0);
    w_pay      = !w_hdr && (pleft_q != 11'd0);
    w_adv      = cur_v_q && !buf_full && (!w_pay || s_pay_tvalid);
    w_end      = w_adv && (bi_q == nbm1_q);
    take_desc  = s_desc_valid && run_q && !pend_v_q;
    do_load    = (!cur_v_q || w_end) && !frames_full && (pend_v_q || take_desc);
    out_adv    = !m_axis_tvalid || m_axis_tready;
    rd_start   = out_adv && !rd_act_q && (rec_cnt_q != '0 || crc_valid);
    rd_pop     = out_adv && (rd_start || (rd_act_q && rd_left_q != 11'd0));
    rec_bypass = rd_start && rec_cnt_q == '0;
    rec_push   = crc_valid && !rec_bypass;
  end
  assign s_desc_ready = run_q && !pend_v_q;
  assign s_pay_tready = cur_v_q && w_pay && !buf_full;

  // Unused on purpose: reserved descriptor bits, tkeep/tlast (see above).
  logic _unused_ok;
  assign _unused_ok = &{1'b0, s_pay_tkeep, s_pay_tlast, s_desc[7:2], s_desc[423:420],
                        s_desc[447:443], s_desc[463:462], icrc_s_ready, 1'b0};

  // ---- W: descriptor intake and assembly ----------------------------------
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      run_q    <= 1'b0;
      pend_v_q <= 1'b0;
      cur_v_q  <= 1'b0;
      wvalid_q <= 1'b0;
      wlast_q  <= 1'b0;
      bi_q     <= '0;
      pleft_q  <= '0;
      hb_q     <= 1'b0;
      nbm1_q   <= '0;
    end else begin
      run_q    <= 1'b1;
      wvalid_q <= w_adv;
      if (w_adv) begin : assemble
        logic [511:0] pm;
        if (w_hdr) begin
          wbeat_q <= hdr0_q;
        end else if (w_pay) begin
          pm = s_pay_tdata & byte_mask(pleft_q == 11'd1 ? plast_q : 7'd64);
          wbeat_q <= carry_q | (pm << {sh_q, 3'b000});
          carry_q <= pm >> {7'd64 - {1'b0, sh_q}, 3'b000};
          pleft_q <= pleft_q - 11'd1;
        end else begin
          wbeat_q <= carry_q;  // flush: the rest of the payload, pad, or the header's end
        end
        wlast_q <= bi_q == nbm1_q;
        wkeep_q <= keep_mask(lb_q);
        wnbm1_q <= nbm1_q;
        wlb_q   <= lb_q;
        bi_q    <= bi_q + 11'd1;
      end
      if (w_end) cur_v_q <= 1'b0;
      if (!do_load && take_desc) begin
        pend_q   <= s_desc;
        pend_v_q <= 1'b1;
      end
      if (do_load) begin : load
        logic [767:0]  d;
        logic [1023:0] h;
        logic [4:0]    e;
        logic [15:0]   p;
        logic [6:0]    hl;   // header bytes
        logic [16:0]   l;    // body bytes
        logic [16:0]   lm1;
        d = pend_v_q ? pend_q : s_desc;
        pend_v_q <= pend_v_q && take_desc;
        if (pend_v_q && take_desc) pend_q <= s_desc;
        e = (d[`TXD_EXT_LEN_LO +: 8] > 8'd28) ? 5'd28 : d[`TXD_EXT_LEN_LO +: 5];
        p = d[`TXD_PAYLOAD_LEN_LO +: 16];
        if (d[`TXD_RAW_LO]) begin
          hl = 7'd0;
          h  = '0;
          l  = {1'b0, p};
        end else begin
          hl = (d[`TXD_IPV6_LO] ? 7'd74 : 7'd54) + {2'd0, e};
          h  = build_hdr(d, e, cfg_udp_sport);
          l  = {10'd0, hl} + (({1'b0, p} + 17'd3) & ~17'd3);
        end
        lm1 = (l == 17'd0) ? 17'd0 : l - 17'd1;
        cur_v_q <= 1'b1;
        hdr0_q  <= h[511:0];
        carry_q <= hl[6] ? h[1023:512] : h[511:0];
        hb_q    <= hl[6];
        sh_q    <= hl[5:0];
        nbm1_q  <= lm1[16:6];
        bi_q    <= '0;
        pleft_q <= {1'b0, p[15:6]} + {10'd0, p[5:0] != 6'd0};
        plast_q <= (p[5:0] == 6'd0) ? 7'd64 : {1'b0, p[5:0]};
        lb_q    <= (l == 17'd0) ? 7'd0 : {1'b0, lm1[5:0]} + 7'd1;
      end
    end
  end

  // ---- C: beat buffer and ICRC ----------------------------------------------
  icrc u_icrc (
    .clk(clk), .rst_n(rst_n),
    .s_valid(wvalid_q), .s_ready(icrc_s_ready), .s_data(wbeat_q), .s_keep(wkeep_q),
    .s_last(wlast_q), .crc_valid(crc_valid), .crc(crc));

  always_ff @(posedge clk) begin
    if (wvalid_q) mem[wptr_q] <= wbeat_q;
    if (rec_push) rec_mem[rec_wp_q] <= {cnbm1_q, clb_q, crc};
    if (wvalid_q && wlast_q) begin
      cnbm1_q <= wnbm1_q;
      clb_q   <= wlb_q;
    end
    if (!rst_n) begin
      wptr_q    <= '0;
      rec_wp_q  <= '0;
      used_q    <= '0;
      nfr_q     <= '0;
      rec_cnt_q <= '0;
    end else begin
      if (wvalid_q) wptr_q <= wptr_q + 1'b1;
      if (rec_push) rec_wp_q <= rec_wp_q + 1'b1;
      if (w_adv && !rd_pop) used_q <= used_q + 1'b1;
      else if (!w_adv && rd_pop) used_q <= used_q - 1'b1;
      if (do_load && !rd_start) nfr_q <= nfr_q + 1'b1;
      else if (!do_load && rd_start) nfr_q <= nfr_q - 1'b1;
      if (rec_push && !(rd_start && !rec_bypass)) rec_cnt_q <= rec_cnt_q + 1'b1;
      else if (!rec_push && rd_start && !rec_bypass) rec_cnt_q <= rec_cnt_q - 1'b1;
    end
  end

  // ---- R: read-out with the ICRC appended -----------------------------------
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      m_axis_tvalid <= 1'b0;
      m_axis_tlast  <= 1'b0;
      rd_act_q      <= 1'b0;
      rptr_q        <= '0;
      rec_rp_q      <= '0;
    end else if (out_adv) begin
      if (rd_start || rd_act_q) begin : emit
        logic [RECW-1:0] r;
        logic [10:0]  left;
        logic [6:0]   lb;
        logic [31:0]  ic;
        logic [511:0] icw;
        if (rd_start) begin
          r = rec_bypass ? {cnbm1_q, clb_q, crc} : rec_mem[rec_rp_q];
          if (!rec_bypass) rec_rp_q <= rec_rp_q + 1'b1;
          left = r[RECW-1 -: 11] + 11'd1;
          lb   = r[32 +: 7];
          ic   = r[31:0];
        end else begin
          left = rd_left_q;
          lb   = rd_lb_q;
          ic   = rd_icrc_q;
        end
        icw = {480'd0, ic};
        m_axis_tvalid <= 1'b1;
        rd_lb_q   <= lb;
        rd_icrc_q <= ic;
        if (left == 11'd0) begin
          // The ICRC's bytes that did not fit the body's last beat.
          m_axis_tdata <= icw >> {7'd64 - lb, 3'b000};
          m_axis_tkeep <= keep_mask(lb - 7'd60);
          m_axis_tlast <= 1'b1;
          rd_act_q     <= 1'b0;
        end else begin
          rptr_q    <= rptr_q + 1'b1;
          rd_left_q <= left - 11'd1;
          if (left == 11'd1) begin
            m_axis_tdata <= mem[rptr_q] | (icw << {lb, 3'b000});
            m_axis_tkeep <= (lb > 7'd60) ? {64{1'b1}} : keep_mask(lb + 7'd4);
            m_axis_tlast <= lb <= 7'd60;
            rd_act_q     <= lb > 7'd60;
          end else begin
            m_axis_tdata <= mem[rptr_q];
            m_axis_tkeep <= {64{1'b1}};
            m_axis_tlast <= 1'b0;
            rd_act_q     <= 1'b1;
          end
        end
      end else begin
        m_axis_tvalid <= 1'b0;
      end
    end
  end

endmodule
