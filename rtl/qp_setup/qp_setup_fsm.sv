`timescale 1ps/1ps
// rtl/qp_setup/qp_setup_fsm.sv: a QP-setup offload in front of ERNIC (seed
// 001's queue-management block). Software writes one QP's parameters into
// this block's queue control registers over AXI4-Lite and starts it; the
// block checks them, takes a buffer slot (SQ, CQ, RQ and doorbell words) from
// a pool of POOL_COUNT slots in a host-memory window (lazily, as seed 001
// has it: a slot is bound to a QP only when that QP is set up, and is free
// again after a release or a link timeout), waits for the CMAC link
// and programs ERNIC's per-QP registers for that QP through its own
// AXI4-Lite master, in the order the host driver's connect path uses
// (model/host/driver.cpp program_rc_qp). A second command releases a QP: it
// runs PG332's QP-deletion register sequence (SW override, QPCONFi enable
// cleared, pointers zeroed, recovery bit) and frees the slot.
//
// Clock: the core clock (s_axi_lite_aclk of ERNIC). Everything is sampled
// at its rising edge; rst_n is synchronous, active low. The block does work
// only while a command runs (`busy`) or an AXI4-Lite access is presented:
// in IDLE and READY with no input activity no register changes, so a
// wrapper may gate its clock then (see model/qp_setup/qp_setup_fsm.h).
// Waiting for the link: while `link_wait` is high and cmac_link_up stays
// low with no AXI4-Lite activity (slave or master), every edge only counts
// the wait (wait_q + 1) until the edge that gives status 0x13, which comes
// link_wait_left + 1 edges after the one that set these outputs. A wrapper
// may stop the clock there for K <= link_wait_left edges and present
// wait_skip = K at the first edge it gives again: that edge counts the K
// edges it did not see, so status, state and every register are the same,
// at the same edge, as with the clock running. wait_skip must be 0 at every
// other edge (tie it to 0 without such a wrapper).
//
// Register map (byte offsets in this block's 4 KiB window; 32-bit words,
// WSTRB honoured; reads of unmapped offsets give 0; every response OKAY).
// Same map in C++: model/datapath/qp_setup_regs.h.
//   0x00 QPCTRL      RW  [31:24] opcode (0x01 create QP, 0x02 release QP),
//                        [23:16] transport (0x06 RoCEv2 RC), [15:0] local QPN
//   0x04 DESTQP      RW  remote QPN (24 bits used; more is "out of range")
//   0x08 REMOTE_IP   RW  remote IPv4 address (IPDESADDR1i)
//   0x0C UDP_PORT    RW  [15:0] destination UDP port; must be 4791
//   0x10 MAC_LSB     RW  remote MAC bytes 2..5 (MACDESADDLSBi layout)
//   0x14 MAC_MSB     RW  [15:0] remote MAC bytes 0..1 (MACDESADDMSBi)
//   0x18 SQ_PSN      RW  first PSN this QP sends (SQPSNi); 32 bits stored
//   0x1C EXP_PSN     RW  first PSN expected from the peer (LSTRQREQi gets
//                        it minus 1); 32 bits stored
//   0x20 CMD         WO  write bit 0 = 1: execute QPCTRL's opcode (ignored
//                        while busy); reads 0
//   0x24 STATUS      RO  [7:0] status code of the last command (0 while one
//                        runs), [10:8] state, [16] busy
//   0x28 LINK_TIMEOUT RW T: cycles CMAC_INIT waits for cmac_link_up
//   0x2C PD          RW  [23:0] protection domain for PDi
//   0x30 POOL_BASE_LO RW host-memory window base [31:12] (4 KiB aligned)
//   0x34 POOL_BASE_HI RW window base [63:32]
//   0x38 SLOT_BYTES  RW  [31:12] bytes per pool slot (4 KiB multiple)
//   0x3C POOL_COUNT  RW  [7:0] slots in use, N (clamped to POOL_MAX);
//                        [15:8] RO POOL_MAX
//   0x40 QDEPTH      RW  [15:0] SQ (and CQ) depth, [31:16] RQ depth (QDEPTHi)
//   0x44 QPCONF      RW  QPCONFi template (PMTU [10:8], RQ element size in
//                        256 B units [31:16], ...): written with bits 0, 6,
//                        7 cleared and bit 0 (enable) set
//   0x48 QPADVCONF   RW  QPADVCONFi value
//   0x4C TIMEOUTCONF RW  TIMEOUTCONFi value
//   0x50 MAX_QPN     RW  [15:0] highest QPN (ERNIC's C_NUM_QP)
//   0x54 ERNIC_CONF  RW  [0] ERNIC register layout: 0 = 3.1, 1 = 4.x
//   0x58 INFO_QPN    RW  [15:0] the QP whose allocation 0x60..0x88 show
//                        (set to the command's QPN by every CMD)
//   0x5C POOL_STATUS RO  [7:0] free slots, [15:8] slots allocated
//   0x60 INFO_SLOT   RO  [31] INFO_QPN holds a slot, [7:0] its index
//   0x64/0x68 SQ base lo/hi, 0x6C/0x70 CQ base, 0x74/0x78 RQ base,
//   0x7C/0x80 CQ doorbell (CQDBADDi), 0x84/0x88 RQ doorbell (RQWPTRDBADDi):
//                    RO  the INFO_QPN slot's addresses (0 without a slot)
// QPCTRL .. EXP_PSN and PD are read-only while busy; POOL_*, SLOT_BYTES,
// QDEPTH, QPCONF, QPADVCONF, TIMEOUTCONF, MAX_QPN and ERNIC_CONF also while
// any slot is allocated (the slots' geometry must not change under them);
// LINK_TIMEOUT and INFO_QPN are always writable.
//
// Slot layout (offsets from slot base = window base + index * SLOT_BYTES):
// SQ at 0 (SQ depth * 64 B), CQ right after it (SQ depth * 4 B), the
// doorbell words at the next 64-byte boundary (CQ head at +0, RQ write
// pointer at +4), the RQ at the next 4 KiB boundary after those 64 bytes
// (RQ depth * element size).
//
// States (`state`): 0 IDLE, 1 REG_CHECK, 2 RES_ALLOC, 3 CMAC_INIT, 4 READY.
// Status codes (this block's own, apart from PG332's fatal codes):
//   0x17 success (create: the QP is programmed and enabled; release: done)
//   0x01 QPN out of range: local QPN outside 2..MAX_QPN, remote QPN above
//        0xFFFFFF; release of a QPN this block did not set up
//   0x05 pool exhausted: no free slot among POOL_COUNT, or the slot is too
//        small for the queues (or a depth is 0)
//   0x0B PSN above 0xFFFFFF (SQ_PSN or EXP_PSN), or the QPN already active
//        (it holds a slot here, or ERNIC's QPCONFi[0] reads 1)
//   0x13 CMAC link not up within LINK_TIMEOUT cycles of entering CMAC_INIT
//   0x02 unsupported command: opcode, transport or UDP port (not in seed 001)
// Checks run in that order: command, QPN range, PSN range, active.
//
// Create: IDLE -> REG_CHECK (local checks, then a master read of QPCONFi)
// -> RES_ALLOC (lowest free slot; writes QDEPTHi, SQBAi, SQBAMSBi, CQBAi,
// CQBAMSBi, RQBAi, RQBAMSBi, CQDBADDi, CQDBADDMSBi, RQWPTRDBADDi,
// RQWPTRDBADDMSBi) -> CMAC_INIT (wait for the link, then DESTQPCONFi,
// SQPSNi, LSTRQREQi = 0x0A << 24 | (EXP_PSN - 1), MACDESADDLSBi,
// MACDESADDMSBi, IPDESADDR1i, TIMEOUTCONFi, PDi, QPADVCONFi, QPCONFi) ->
// READY. A failure returns to IDLE (a link timeout frees the slot).
// Release: IDLE/READY -> REG_CHECK -> RES_ALLOC (read XRNICADCONF; write it
// with SW override for the QPN; QPCONFi without enable; zero RQWPTRDBADDi,
// SQPIi, CQHEADi, RQCIi, STATRQPIDBi, STATCURSQPTRi, SQPSNi, LSTRQREQi,
// STATMSNi; QPCONFi with the recovery bit; XRNICADCONF restored) -> IDLE.
// The host must have drained the QP before releasing it (PG332 ch.6).
//
// Master: one access at a time; AWVALID and WVALID together, each held until
// its handshake; BREADY/RREADY high while a response is awaited. The slave
// takes AW and W together (AWREADY = WREADY = AWVALID & WVALID & ~BVALID)
// and answers a read in the cycle after ARVALID (ARREADY = ~RVALID).
`include "ernic_regs.vh"

module qp_setup_fsm #(
  parameter POOL_MAX = 16,                       // slot table size, 1..255
  parameter [31:0] LINK_TIMEOUT_RESET = 32'd2000, // LINK_TIMEOUT after reset
  parameter [15:0] MAX_QPN_RESET = 16'd8          // MAX_QPN after reset
) (
  input  logic        clk,
  input  logic        rst_n,
  // AXI4-Lite slave (host, through PCIe MMIO)
  input  logic        s_awvalid,
  output logic        s_awready,
  input  logic [11:0] s_awaddr,
  input  logic        s_wvalid,
  output logic        s_wready,
  input  logic [31:0] s_wdata,
  input  logic [3:0]  s_wstrb,
  output logic        s_bvalid,
  input  logic        s_bready,
  output logic [1:0]  s_bresp,
  input  logic        s_arvalid,
  output logic        s_arready,
  input  logic [11:0] s_araddr,
  output logic        s_rvalid,
  input  logic        s_rready,
  output logic [31:0] s_rdata,
  output logic [1:0]  s_rresp,
  // AXI4-Lite master (ERNIC's s_axi_lite, through an arbiter)
  output logic        m_awvalid,
  input  logic        m_awready,
  output logic [31:0] m_awaddr,
  output logic        m_wvalid,
  input  logic        m_wready,
  output logic [31:0] m_wdata,
  output logic [3:0]  m_wstrb,
  input  logic        m_bvalid,
  output logic        m_bready,
  input  logic [1:0]  m_bresp,
  output logic        m_arvalid,
  input  logic        m_arready,
  output logic [31:0] m_araddr,
  input  logic        m_rvalid,
  output logic        m_rready,
  input  logic [31:0] m_rdata,
  input  logic [1:0]  m_rresp,
  // CMAC stat_rx_status (CMAC clock domain: two-flop synchronised here)
  input  logic        cmac_link_up,
  // Clock stopped in the link wait (see "Waiting for the link" above)
  input  logic [31:0] wait_skip,      // edges not seen, at the first edge after the stop; else 0
  output logic        link_wait,      // CMAC_INIT, waiting only for the link (synchroniser low)
  output logic [31:0] link_wait_left, // edges before the timeout edge (0: the next edge times out)
  // observation
  output logic [2:0]  state,
  output logic [7:0]  status,
  output logic        busy
);

  // ---- constants -----------------------------------------------------------
  localparam [2:0] S_IDLE = 3'd0, S_REG_CHECK = 3'd1, S_RES_ALLOC = 3'd2, S_CMAC_INIT = 3'd3, S_READY = 3'd4;
  localparam [7:0] ST_OK = 8'h17, ST_QPN_RANGE = 8'h01, ST_POOL = 8'h05, ST_PSN_ACTIVE = 8'h0B, ST_LINK = 8'h13,
                   ST_BAD_CMD = 8'h02;
  localparam [7:0] OP_CREATE = 8'h01, OP_RELEASE = 8'h02, TRANSPORT_ROCEV2 = 8'h06;
  localparam [15:0] ROCEV2_PORT = 16'd4791;
  // ERNIC's register offsets, block bases and field positions: from the
  // register description (rtl/include/ernic_regs.vh, generated from
  // model/regs/ernic_regs.yaml; per-QP offsets are the same in both layouts).
  localparam [11:0] Q_QPCONF = 12'(`ERNIC_Q_QPCONFi), Q_QPADVCONF = 12'(`ERNIC_Q_QPADVCONFi), Q_RQBA = 12'(`ERNIC_Q_RQBAi),
                    Q_SQBA = 12'(`ERNIC_Q_SQBAi), Q_CQBA = 12'(`ERNIC_Q_CQBAi), Q_RQWPTRDBADD = 12'(`ERNIC_Q_RQWPTRDBADDi),
                    Q_RQWPTRDBADDMSB = 12'(`ERNIC_Q_RQWPTRDBADDMSBi), Q_CQDBADD = 12'(`ERNIC_Q_CQDBADDi),
                    Q_CQDBADDMSB = 12'(`ERNIC_Q_CQDBADDMSBi), Q_CQHEAD = 12'(`ERNIC_Q_CQHEADi), Q_RQCI = 12'(`ERNIC_Q_RQCIi),
                    Q_SQPI = 12'(`ERNIC_Q_SQPIi), Q_QDEPTH = 12'(`ERNIC_Q_QDEPTHi), Q_SQPSN = 12'(`ERNIC_Q_SQPSNi),
                    Q_LSTRQREQ = 12'(`ERNIC_Q_LSTRQREQi), Q_DESTQPCONF = 12'(`ERNIC_Q_DESTQPCONFi),
                    Q_TIMEOUTCONF = 12'(`ERNIC_Q_TIMEOUTCONFi), Q_MACDESADDLSB = 12'(`ERNIC_Q_MACDESADDLSBi),
                    Q_MACDESADDMSB = 12'(`ERNIC_Q_MACDESADDMSBi), Q_IPDESADDR1 = 12'(`ERNIC_Q_IPDESADDR1i),
                    Q_STATMSN = 12'(`ERNIC_Q_STATMSNi), Q_STATCURSQPTR = 12'(`ERNIC_Q_STATCURSQPTRi),
                    Q_STATRQPIDB = 12'(`ERNIC_Q_STATRQPIDBi), Q_PD = 12'(`ERNIC_Q_PDi), Q_RQBAMSB = 12'(`ERNIC_Q_RQBAMSBi),
                    Q_SQBAMSB = 12'(`ERNIC_Q_SQBAMSBi), Q_CQBAMSB = 12'(`ERNIC_Q_CQBAMSBi);
  localparam [31:0] V31_GCSR = `ERNIC_V31_GCSR_BASE, V31_QCSR = `ERNIC_V31_QCSR_BASE,
                    V4X_GCSR = `ERNIC_V4X_GCSR_BASE, V4X_QCSR = `ERNIC_V4X_QCSR_BASE,
                    G_XRNICADCONF = `ERNIC_G_XRNICADCONF;
  localparam [31:0] QPCONF_EN = `ERNIC_F_QPCONFi_EN_MASK, QPCONF_RECOVERY = `ERNIC_F_QPCONFi_UNDER_RECOVERY_MASK,
                    QPCONF_IPV6 = `ERNIC_F_QPCONFi_IPV6_MASK;
  localparam [7:0] OPC_RC_WRITE_ONLY = 8'h0A;
  // The last step of each master program (RES_ALLOC's step 0 of a create
  // takes the slot and issues no access).
  localparam [4:0] CREATE_ALLOC_LAST = 5'd11, CREATE_PATH_LAST = 5'd9, RELEASE_LAST = 5'd13;
  localparam [7:0] POOL_MAX8 = POOL_MAX;
  localparam SW = POOL_MAX > 1 ? $clog2(POOL_MAX) : 1;  // slot index bits
  localparam NREGS = 35;                                // words 0x00..0x88

  // ---- registers -------------------------------------------------------------
  logic [31:0] qpctrl_q, destqp_q, rip_q, mac_lsb_q, sq_psn_q, exp_psn_q, link_timeout_q;
  logic [15:0] udp_q, mac_msb_q, max_qpn_q, info_qpn_q;
  logic [23:0] pd_q;
  logic [19:0] pool_base_lo_q, slot_bytes_q;  // bits [31:12]
  logic [31:0] pool_base_hi_q, qdepth_q, qpconf_q, advconf_q, timeoutconf_q;
  logic [7:0]  pool_count_q;
  logic        layout4x_q;
  logic [2:0]  st_q;
  logic [7:0]  code_q;
  logic [4:0]  step_q;
  logic [2:0]  mph_q;          // master phase: 0 issue, 1 AW/W, 2 B, 3 AR, 4 R
  logic        aw_done_q, w_done_q;
  logic [31:0] m_addr_q, m_data_q, rdata_q;
  logic [31:0] wait_q;         // CMAC_INIT cycles waited
  logic [1:0]  link_sync_q;
  logic [7:0]  cur_slot_q;
  logic [POOL_MAX-1:0] slot_used_q;
  logic [15:0] slot_qpn_q [0:POOL_MAX-1];
  logic        s_bvalid_q, s_rvalid_q;
  logic [31:0] s_rdata_q;

  wire [7:0]  opcode = qpctrl_q[31:24];
  wire [7:0]  transport = qpctrl_q[23:16];
  wire [15:0] qpn = qpctrl_q[15:0];
  wire        is_busy = (st_q == S_REG_CHECK) || (st_q == S_RES_ALLOC) || (st_q == S_CMAC_INIT);
  wire        any_slot = |slot_used_q;
  wire        creating = opcode == OP_CREATE;

  // ---- slot table lookups ----------------------------------------------------
  // (Per slot first, then a priority pick from the highest index down, so
  // the lowest index wins.)
  logic [POOL_MAX-1:0] is_free, is_owner, is_info;
  always_comb begin
    for (int i = 0; i < POOL_MAX; i++) begin
      is_free[i] = i < {24'd0, pool_count_q} && !slot_used_q[i];
      is_owner[i] = slot_used_q[i] && slot_qpn_q[i] == qpn;
      is_info[i] = slot_used_q[i] && slot_qpn_q[i] == info_qpn_q;
    end
  end
  logic [7:0] free_slot, owner_slot, info_slot, free_count, used_count, k;
  always_comb begin
    free_slot = 8'd0;
    owner_slot = 8'd0;
    info_slot = 8'd0;
    free_count = 8'd0;
    used_count = 8'd0;
    k = POOL_MAX8;
    for (int i = POOL_MAX - 1; i >= 0; i--) begin
      k = k - 8'd1;
      if (is_free[i]) free_slot = k;
      if (is_owner[i]) owner_slot = k;
      if (is_info[i]) info_slot = k;
      free_count = free_count + {7'd0, is_free[i]};
      used_count = used_count + {7'd0, slot_used_q[i]};
    end
  end
  wire free_found = |is_free;
  wire owner_found = |is_owner;
  wire info_found = |is_info;
  wire [SW-1:0] free_idx = free_slot[SW-1:0];
  wire [SW-1:0] cur_idx = cur_slot_q[SW-1:0];

  // ---- slot geometry -----------------------------------------------------------
  wire [15:0] sq_depth = qdepth_q[15:0];
  wire [15:0] rq_depth = qdepth_q[31:16];
  wire [23:0] rq_elem = {qpconf_q[31:16], 8'd0};
  wire [23:0] cq_off = {2'd0, sq_depth, 6'd0};                 // after the SQ
  wire [23:0] cq_end = cq_off + {6'd0, sq_depth, 2'd0};        // after the CQ
  wire [23:0] db_off = (cq_end + 24'd63) & ~24'd63;
  wire [23:0] rq_off = (db_off + 24'd64 + 24'd4095) & ~24'd4095;
  wire [39:0] rq_bytes = {24'd0, rq_depth} * {16'd0, rq_elem};
  wire [40:0] slot_need = {17'd0, rq_off} + {1'b0, rq_bytes};
  wire        slot_fits = slot_need <= {9'd0, slot_bytes_q, 12'd0} && sq_depth != 16'd0 && rq_depth != 16'd0 &&
                          rq_elem != 24'd0;
  wire [63:0] pool_base = {pool_base_hi_q, pool_base_lo_q, 12'd0};
  wire [63:0] slot_stride = {32'd0, slot_bytes_q, 12'd0};
  wire [63:0] cur_base = pool_base + {56'd0, cur_slot_q} * slot_stride;
  wire [63:0] cur_cq = cur_base + {40'd0, cq_off};
  wire [63:0] cur_cqdb = cur_base + {40'd0, db_off};
  wire [63:0] cur_rqdb = cur_cqdb + 64'd4;
  wire [63:0] cur_rq = cur_base + {40'd0, rq_off};
  wire [63:0] info_base = pool_base + {56'd0, info_slot} * slot_stride;
  wire [63:0] info_cq = info_base + {40'd0, cq_off};
  wire [63:0] info_cqdb = info_base + {40'd0, db_off};
  wire [63:0] info_rqdb = info_cqdb + 64'd4;
  wire [63:0] info_rq = info_base + {40'd0, rq_off};

  // ---- ERNIC addresses and the master program ------------------------------------
  wire [31:0] qcsr = layout4x_q ? V4X_QCSR : V31_QCSR;
  wire [31:0] gcsr = layout4x_q ? V4X_GCSR : V31_GCSR;
  wire [15:0] qpn_m1 = qpn - 16'd1;
  wire [31:0] qp_block = qcsr + {8'd0, qpn_m1, 8'd0};
  wire [31:0] swovr = layout4x_q ? (32'(qpn) << `ERNIC_F_XRNICADCONF_SW_OVERRIDE_QPN_V4X_LSB) & `ERNIC_F_XRNICADCONF_SW_OVERRIDE_QPN_V4X_MASK
                                 : (32'(qpn) << `ERNIC_F_XRNICADCONF_SW_OVERRIDE_QPN_V31_LSB) & `ERNIC_F_XRNICADCONF_SW_OVERRIDE_QPN_V31_MASK;
  wire [31:0] qpconf_base = qpconf_q & ~(QPCONF_EN | QPCONF_RECOVERY | QPCONF_IPV6);
  wire [23:0] lstrq_psn = exp_psn_q[23:0] - 24'd1;

  // The values the master writes, as whole words.
  wire [31:0] cur_sq_lo = cur_base[31:0], cur_sq_hi = cur_base[63:32];
  wire [31:0] cur_cq_lo = cur_cq[31:0], cur_cq_hi = cur_cq[63:32];
  wire [31:0] cur_rq_lo = cur_rq[31:0], cur_rq_hi = cur_rq[63:32];
  wire [31:0] cur_cqdb_lo = cur_cqdb[31:0], cur_cqdb_hi = cur_cqdb[63:32];
  wire [31:0] cur_rqdb_lo = cur_rqdb[31:0], cur_rqdb_hi = cur_rqdb[63:32];
  wire [31:0] destqp24 = {8'd0, destqp_q[23:0]};
  wire [31:0] sq_psn24 = {8'd0, sq_psn_q[23:0]};
  wire [31:0] lstrqreq = {OPC_RC_WRITE_ONLY, lstrq_psn};
  wire [31:0] mac_msb32 = {16'd0, mac_msb_q};
  wire [31:0] pd32 = {8'd0, pd_q};

  // The current step's access: read or write, register, data.
  logic        op_read;
  logic [11:0] op_off;         // per-QP register offset, unless op_global (XRNICADCONF)
  logic        op_global;
  logic [31:0] op_data;
  logic        op_last;
  always_comb begin
    op_read = 1'b0;
    op_off = 12'h000;
    op_global = 1'b0;
    op_data = 32'd0;
    op_last = 1'b0;
    if (st_q == S_REG_CHECK) begin
      op_read = 1'b1;  // QPCONFi: is the QP enabled in ERNIC?
      op_off = Q_QPCONF;
      op_last = 1'b1;
    end else if (st_q == S_RES_ALLOC && creating) begin
      op_last = step_q == CREATE_ALLOC_LAST;
      case (step_q)
        5'd1: begin op_off = Q_QDEPTH; op_data = qdepth_q; end
        5'd2: begin op_off = Q_SQBA; op_data = cur_sq_lo; end
        5'd3: begin op_off = Q_SQBAMSB; op_data = cur_sq_hi; end
        5'd4: begin op_off = Q_CQBA; op_data = cur_cq_lo; end
        5'd5: begin op_off = Q_CQBAMSB; op_data = cur_cq_hi; end
        5'd6: begin op_off = Q_RQBA; op_data = cur_rq_lo; end
        5'd7: begin op_off = Q_RQBAMSB; op_data = cur_rq_hi; end
        5'd8: begin op_off = Q_CQDBADD; op_data = cur_cqdb_lo; end
        5'd9: begin op_off = Q_CQDBADDMSB; op_data = cur_cqdb_hi; end
        5'd10: begin op_off = Q_RQWPTRDBADD; op_data = cur_rqdb_lo; end
        default: begin op_off = Q_RQWPTRDBADDMSB; op_data = cur_rqdb_hi; end
      endcase
    end else if (st_q == S_RES_ALLOC) begin  // release
      op_last = step_q == RELEASE_LAST;
      case (step_q)
        5'd0: begin op_read = 1'b1; op_global = 1'b1; end
        5'd1: begin op_global = 1'b1; op_data = rdata_q | `ERNIC_F_XRNICADCONF_SW_OVERRIDE_MASK | swovr; end
        5'd2: begin op_off = Q_QPCONF; op_data = qpconf_base; end
        5'd3: op_off = Q_RQWPTRDBADD;
        5'd4: op_off = Q_SQPI;
        5'd5: op_off = Q_CQHEAD;
        5'd6: op_off = Q_RQCI;
        5'd7: op_off = Q_STATRQPIDB;
        5'd8: op_off = Q_STATCURSQPTR;
        5'd9: op_off = Q_SQPSN;
        5'd10: op_off = Q_LSTRQREQ;
        5'd11: op_off = Q_STATMSN;
        5'd12: begin op_off = Q_QPCONF; op_data = qpconf_base | QPCONF_RECOVERY; end
        default: begin op_global = 1'b1; op_data = rdata_q; end
      endcase
    end else begin  // CMAC_INIT: the path registers, the enable last
      op_last = step_q == CREATE_PATH_LAST;
      case (step_q)
        5'd0: begin op_off = Q_DESTQPCONF; op_data = destqp24; end
        5'd1: begin op_off = Q_SQPSN; op_data = sq_psn24; end
        5'd2: begin op_off = Q_LSTRQREQ; op_data = lstrqreq; end
        5'd3: begin op_off = Q_MACDESADDLSB; op_data = mac_lsb_q; end
        5'd4: begin op_off = Q_MACDESADDMSB; op_data = mac_msb32; end
        5'd5: begin op_off = Q_IPDESADDR1; op_data = rip_q; end
        5'd6: begin op_off = Q_TIMEOUTCONF; op_data = timeoutconf_q; end
        5'd7: begin op_off = Q_PD; op_data = pd32; end
        5'd8: begin op_off = Q_QPADVCONF; op_data = advconf_q; end
        default: begin op_off = Q_QPCONF; op_data = qpconf_base | QPCONF_EN; end
      endcase
    end
  end
  wire [31:0] op_addr = op_global ? gcsr + G_XRNICADCONF : qp_block + {20'd0, op_off};

  // ---- slave: the register file ---------------------------------------------------------
  wire        s_wr = s_awvalid && s_wvalid && !s_bvalid_q;
  wire        s_rd = s_arvalid && !s_rvalid_q;
  wire [9:0]  s_wi = s_awaddr[11:2];
  wire [9:0]  s_ri = s_araddr[11:2];
  wire [31:0] s_bmask = {{8{s_wstrb[3]}}, {8{s_wstrb[2]}}, {8{s_wstrb[1]}}, {8{s_wstrb[0]}}};
  // Every word as it reads, word 0 in the low bits.
  wire [NREGS*32-1:0] rv = {
    info_found ? info_rqdb[63:32] : 32'd0,          // 0x88
    info_found ? info_rqdb[31:0] : 32'd0,           // 0x84
    info_found ? info_cqdb[63:32] : 32'd0,          // 0x80
    info_found ? info_cqdb[31:0] : 32'd0,           // 0x7C
    info_found ? info_rq[63:32] : 32'd0,            // 0x78
    info_found ? info_rq[31:0] : 32'd0,             // 0x74
    info_found ? info_cq[63:32] : 32'd0,            // 0x70
    info_found ? info_cq[31:0] : 32'd0,             // 0x6C
    info_found ? info_base[63:32] : 32'd0,          // 0x68
    info_found ? info_base[31:0] : 32'd0,           // 0x64
    info_found, 23'd0, info_slot,                   // 0x60 INFO_SLOT
    16'd0, used_count, free_count,                  // 0x5C POOL_STATUS
    16'd0, info_qpn_q,                              // 0x58 INFO_QPN
    31'd0, layout4x_q,                              // 0x54 ERNIC_CONF
    16'd0, max_qpn_q,                               // 0x50 MAX_QPN
    timeoutconf_q,                                  // 0x4C
    advconf_q,                                      // 0x48
    qpconf_q,                                       // 0x44
    qdepth_q,                                       // 0x40
    16'd0, POOL_MAX8, pool_count_q,                 // 0x3C POOL_COUNT
    slot_bytes_q, 12'd0,                            // 0x38 SLOT_BYTES
    pool_base_hi_q,                                 // 0x34
    pool_base_lo_q, 12'd0,                          // 0x30
    8'd0, pd_q,                                     // 0x2C PD
    link_timeout_q,                                 // 0x28
    15'd0, is_busy, 5'd0, st_q, code_q,             // 0x24 STATUS
    32'd0,                                          // 0x20 CMD
    exp_psn_q,                                      // 0x1C
    sq_psn_q,                                       // 0x18
    16'd0, mac_msb_q,                               // 0x14
    mac_lsb_q,                                      // 0x10
    16'd0, udp_q,                                   // 0x0C
    rip_q,                                          // 0x08
    destqp_q,                                       // 0x04
    qpctrl_q};                                      // 0x00
  wire [31:0] rd_val = s_ri < NREGS ? rv[{s_ri[5:0], 5'd0} +: 32] : 32'd0;
  wire [31:0] w_old = s_wi < NREGS ? rv[{s_wi[5:0], 5'd0} +: 32] : 32'd0;
  wire [31:0] w_val = (w_old & ~s_bmask) | (s_wdata & s_bmask);  // the word after the write
  wire        cmd_regs_open = !is_busy;
  wire        cfg_regs_open = !is_busy && !any_slot;
  wire        go = s_wr && s_wi == 10'h008 && s_wstrb[0] && s_wdata[0] && !is_busy;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      qpctrl_q <= 32'd0;
      destqp_q <= 32'd0;
      rip_q <= 32'd0;
      udp_q <= ROCEV2_PORT;
      mac_lsb_q <= 32'd0;
      mac_msb_q <= 16'd0;
      sq_psn_q <= 32'd0;
      exp_psn_q <= 32'd0;
      link_timeout_q <= LINK_TIMEOUT_RESET;
      pd_q <= 24'd1;
      pool_base_lo_q <= 20'd0;
      pool_base_hi_q <= 32'd0;
      slot_bytes_q <= 20'd0;
      pool_count_q <= POOL_MAX8;
      qdepth_q <= {16'd16, 16'd64};
      qpconf_q <= 32'h0010_0430;       // RQ element 4096 B, PMTU 4096, CQE write, HW handshake off
      advconf_q <= 32'hFFFF_4000;      // P_Key 0xFFFF, TTL 64, traffic class 0
      timeoutconf_q <= 32'h001F_1B0E;  // ACK timeout 14, retry 3, RNR retry 3, RNR timer 0x1F
      max_qpn_q <= MAX_QPN_RESET;
      layout4x_q <= 1'b0;
      info_qpn_q <= 16'd0;
      s_bvalid_q <= 1'b0;
      s_rvalid_q <= 1'b0;
      s_rdata_q <= 32'd0;
    end else begin
      if (s_bvalid_q && s_bready) s_bvalid_q <= 1'b0;
      if (s_rvalid_q && s_rready) s_rvalid_q <= 1'b0;
      if (s_rd) begin
        s_rvalid_q <= 1'b1;
        s_rdata_q <= rd_val;
      end
      if (s_wr) begin
        s_bvalid_q <= 1'b1;
        if (cmd_regs_open)
          case (s_wi)
            10'h000: qpctrl_q <= w_val;
            10'h001: destqp_q <= w_val;
            10'h002: rip_q <= w_val;
            10'h003: udp_q <= w_val[15:0];
            10'h004: mac_lsb_q <= w_val;
            10'h005: mac_msb_q <= w_val[15:0];
            10'h006: sq_psn_q <= w_val;
            10'h007: exp_psn_q <= w_val;
            10'h00B: pd_q <= w_val[23:0];
            default: ;
          endcase
        if (cfg_regs_open)
          case (s_wi)
            10'h00C: pool_base_lo_q <= w_val[31:12];
            10'h00D: pool_base_hi_q <= w_val;
            10'h00E: slot_bytes_q <= w_val[31:12];
            10'h00F: pool_count_q <= w_val[7:0] > POOL_MAX8 ? POOL_MAX8 : w_val[7:0];
            10'h010: qdepth_q <= w_val;
            10'h011: qpconf_q <= w_val;
            10'h012: advconf_q <= w_val;
            10'h013: timeoutconf_q <= w_val;
            10'h014: max_qpn_q <= w_val[15:0];
            10'h015: layout4x_q <= w_val[0];
            default: ;
          endcase
        if (s_wi == 10'h00A) link_timeout_q <= w_val;
        if (s_wi == 10'h016) info_qpn_q <= w_val[15:0];
      end
      if (go) info_qpn_q <= qpn;
    end
  end

  // ---- the command FSM and its master -------------------------------------------------
  // REG_CHECK's local checks, in order: command, QPN range, PSN range / active here.
  logic [7:0] check_code;
  always_comb begin
    check_code = 8'd0;
    if ((opcode != OP_CREATE && opcode != OP_RELEASE) || transport != TRANSPORT_ROCEV2 ||
        (creating && udp_q != ROCEV2_PORT))
      check_code = ST_BAD_CMD;
    else if (qpn < 16'd2 || qpn > max_qpn_q || (creating && destqp_q > 32'h00FF_FFFF) || (!creating && !owner_found))
      check_code = ST_QPN_RANGE;
    else if (creating && (sq_psn_q > 32'h00FF_FFFF || exp_psn_q > 32'h00FF_FFFF || owner_found))
      check_code = ST_PSN_ACTIVE;
  end

  // The wait counter with the edges a stopped clock skipped (wait_skip).
  wire [32:0] wait_eff = {1'b0, wait_q} + {1'b0, wait_skip};

  wire m_wdone = (aw_done_q || m_awready) && (w_done_q || m_wready);
  wire m_resp = (mph_q == 3'd2 && m_bvalid) || (mph_q == 3'd4 && m_rvalid);

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      st_q <= S_IDLE;
      code_q <= 8'd0;
      step_q <= 5'd0;
      mph_q <= 3'd0;
      aw_done_q <= 1'b0;
      w_done_q <= 1'b0;
      m_addr_q <= 32'd0;
      m_data_q <= 32'd0;
      rdata_q <= 32'd0;
      wait_q <= 32'd0;
      link_sync_q <= 2'b00;
      cur_slot_q <= 8'd0;
      slot_used_q <= {POOL_MAX{1'b0}};
      for (int i = 0; i < POOL_MAX; i++) slot_qpn_q[i] <= 16'd0;
    end else begin
      link_sync_q <= {link_sync_q[0], cmac_link_up};
      // Handshakes of the access in flight (phase 0 issues the step's access).
      if (mph_q == 3'd1) begin
        if (m_awready) aw_done_q <= 1'b1;
        if (m_wready) w_done_q <= 1'b1;
        if (m_wdone) mph_q <= 3'd2;
      end
      if (mph_q == 3'd3 && m_arready) mph_q <= 3'd4;
      if (m_resp) mph_q <= 3'd0;
      if (mph_q == 3'd4 && m_rvalid) rdata_q <= m_rdata;
      case (st_q)
        S_IDLE, S_READY: begin
          if (go) begin
            st_q <= S_REG_CHECK;
            code_q <= 8'd0;
            step_q <= 5'd0;
          end
        end
        S_REG_CHECK: begin
          if (step_q == 5'd0) begin
            if (check_code != 8'd0) begin
              code_q <= check_code;
              st_q <= S_IDLE;
            end else if (!creating) begin
              st_q <= S_RES_ALLOC;
              cur_slot_q <= owner_slot;
            end else begin  // read QPCONFi
              m_addr_q <= op_addr;
              mph_q <= 3'd3;
              step_q <= 5'd1;
            end
          end else if (m_resp) begin
            step_q <= 5'd0;
            if (m_rdata[0]) begin
              code_q <= ST_PSN_ACTIVE;
              st_q <= S_IDLE;
            end else begin
              st_q <= S_RES_ALLOC;
            end
          end
        end
        S_RES_ALLOC, S_CMAC_INIT: begin
          if (st_q == S_RES_ALLOC && creating && step_q == 5'd0) begin
            // Take the lowest free slot whose geometry fits.
            if (!free_found || !slot_fits) begin
              code_q <= ST_POOL;
              st_q <= S_IDLE;
            end else begin
              cur_slot_q <= free_slot;
              slot_used_q[free_idx] <= 1'b1;
              slot_qpn_q[free_idx] <= qpn;
              step_q <= 5'd1;
            end
          end else if (st_q == S_CMAC_INIT && step_q == 5'd0 && mph_q == 3'd0 && !link_sync_q[1]) begin
            // Waiting for the link.
            if (wait_eff >= {1'b0, link_timeout_q}) begin
              code_q <= ST_LINK;
              st_q <= S_IDLE;
              slot_used_q[cur_idx] <= 1'b0;
            end else begin
              wait_q <= wait_eff[31:0] + 32'd1;
            end
          end else if (mph_q == 3'd0) begin
            m_addr_q <= op_addr;
            m_data_q <= op_data;
            aw_done_q <= 1'b0;
            w_done_q <= 1'b0;
            mph_q <= op_read ? 3'd3 : 3'd1;
          end else if (m_resp) begin
            if (!op_last) begin
              step_q <= step_q + 5'd1;
            end else begin
              step_q <= 5'd0;
              if (st_q == S_CMAC_INIT) begin
                code_q <= ST_OK;
                st_q <= S_READY;
              end else if (creating) begin
                st_q <= S_CMAC_INIT;
                wait_q <= 32'd0;
              end else begin  // released
                code_q <= ST_OK;
                st_q <= S_IDLE;
                slot_used_q[cur_idx] <= 1'b0;
              end
            end
          end
        end
        default: st_q <= S_IDLE;
      endcase
    end
  end

  // ---- outputs -----------------------------------------------------------------------
  assign s_awready = s_wr;
  assign s_wready = s_wr;
  assign s_bvalid = s_bvalid_q;
  assign s_bresp = 2'b00;
  assign s_arready = s_rd;
  assign s_rvalid = s_rvalid_q;
  assign s_rdata = s_rdata_q;
  assign s_rresp = 2'b00;
  assign m_awvalid = mph_q == 3'd1 && !aw_done_q;
  assign m_wvalid = mph_q == 3'd1 && !w_done_q;
  assign m_awaddr = m_addr_q;
  assign m_wdata = m_data_q;
  assign m_wstrb = 4'hF;
  assign m_bready = mph_q == 3'd2;
  assign m_arvalid = mph_q == 3'd3;
  assign m_araddr = m_addr_q;
  assign m_rready = mph_q == 3'd4;
  assign state = st_q;
  assign status = code_q;
  assign busy = is_busy;
  assign link_wait = st_q == S_CMAC_INIT && step_q == 5'd0 && mph_q == 3'd0 && link_sync_q == 2'b00;
  assign link_wait_left = wait_q >= link_timeout_q ? 32'd0 : link_timeout_q - wait_q;

  wire unused_ok = &{1'b0, s_awaddr[1:0], s_araddr[1:0], m_bresp, m_rresp, s_wi[9:6], s_ri[9:6]};

endmodule
