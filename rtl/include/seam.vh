// Bit layouts of the datapath seams (rtl/SEAM.md; C++: model/datapath/seam.h).
// Each field is given as `<NAME>_LO and its width `<NAME>_W.
`ifndef ERNIC_SEAM_VH
`define ERNIC_SEAM_VH
// ---- TX descriptor (ERNIC model -> roce_tx) ------------------------------
`define SEAM_TXD_W 768
`define TXD_RAW_LO 0
`define TXD_IPV6_LO 1
`define TXD_EXT_LEN_LO 8
`define TXD_EXT_LEN_W 8
`define TXD_PAYLOAD_LEN_LO 16
`define TXD_PAYLOAD_LEN_W 16
`define TXD_ETH_DST_LO 32
`define TXD_ETH_SRC_LO 80
`define TXD_IP_SRC_LO 128
`define TXD_IP_DST_LO 256
`define TXD_TOS_LO 384
`define TXD_TTL_LO 392
`define TXD_FLOW_LABEL_LO 400
`define TXD_IP_ID_LO 424
`define TXD_IP_FLAGS_LO 440
`define TXD_OPCODE_LO 448
`define TXD_SE_LO 456
`define TXD_MIG_LO 457
`define TXD_TVER_LO 458
`define TXD_PKEY_LO 464
`define TXD_BTH_B4_LO 480
`define TXD_DEST_QP_LO 488
`define TXD_ACK_REQ_LO 512
`define TXD_RESV7_LO 513
`define TXD_PSN_LO 520
`define TXD_EXT_LO 544
`define TXD_EXT_W 224
// ---- RX descriptor (roce_rx -> ERNIC model) ------------------------------
`define SEAM_RXD_W 1024
`define RXD_SYNDROME_LO 0
`define RXD_IPV6_LO 32
`define RXD_IHL_LO 33
`define RXD_IHL_W 4
`define RXD_HDR_LEN_LO 40
`define RXD_PAYLOAD_LEN_LO 48
`define RXD_FRAME_LEN_LO 64
`define RXD_ETH_DST_LO 80
`define RXD_ETH_SRC_LO 128
`define RXD_ETHERTYPE_LO 176
`define RXD_IP_SRC_LO 192
`define RXD_IP_DST_LO 320
`define RXD_TOS_LO 448
`define RXD_TTL_LO 456
`define RXD_FLOW_LABEL_LO 464
`define RXD_IP_LEN_LO 488
`define RXD_IP_ID_LO 504
`define RXD_IP_FRAG_LO 520
`define RXD_IP_CSUM_LO 536
`define RXD_UDP_SPORT_LO 552
`define RXD_UDP_DPORT_LO 568
`define RXD_UDP_LEN_LO 584
`define RXD_UDP_CSUM_LO 600
`define RXD_OPCODE_LO 616
`define RXD_SE_LO 624
`define RXD_MIG_LO 625
`define RXD_PAD_CNT_LO 626
`define RXD_TVER_LO 628
`define RXD_PKEY_LO 632
`define RXD_BTH_B4_LO 648
`define RXD_DEST_QP_LO 656
`define RXD_ACK_REQ_LO 680
`define RXD_RESV7_LO 681
`define RXD_PSN_LO 688
`define RXD_EXT_LEN_LO 712
`define RXD_EXT_LO 720
`define RXD_ICRC_LO 944
// Syndrome bits (PG332 error-syndrome layout).
`define SYN_IP_VERSION 1
`define SYN_IP_CHECKSUM 2
`define SYN_LENGTH 4
`define SYN_HEADER 8
`define SYN_ICRC 30
`define SYN_FCS 31
`endif
