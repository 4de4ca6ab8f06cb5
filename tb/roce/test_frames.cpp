// tb/roce: the frames of test_frames.h.
#include "tb/roce/test_frames.h"

#include <pcap/pcap.h>

#include <cstdio>

#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace roce_test {

using namespace roce;

namespace {

Frame base_v4(uint8_t opcode, uint32_t dest_qp, uint32_t psn) {
  Frame f;
  f.eth.dst = *MacAddr::parse("02:00:00:00:00:02");
  f.eth.src = *MacAddr::parse("02:00:00:00:00:01");
  f.ip4.src = *Ipv4Addr::parse("192.168.1.10");
  f.ip4.dst = *Ipv4Addr::parse("192.168.1.20");
  f.ip4.id = 0x1234;
  f.udp.sport = 0xC0DE;
  f.bth.opcode = opcode;
  f.bth.dest_qp = dest_qp;
  f.bth.psn = psn;
  return f;
}

Bytes seq_payload(size_t n, uint8_t start) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(start + i);
  return b;
}

// A CM MAD as UD SEND_ONLY to QP1 (P_Key 0xFFFF, DETH Q_Key 0x80010000, SrcQP 1).
Frame cm_frame(const cm::Message& msg, uint64_t tid, uint32_t psn) {
  Frame f = base_v4(op::UD_SEND_ONLY, 1, psn);
  f.bth.pkey = 0xFFFF;
  f.bth.se = true;
  f.deth = Deth{cm::kGsiQkey, 0, 1};
  cm::MadHeader h;
  h.tid = tid;
  f.payload = cm::encode_mad(h, msg);
  return f;
}

}  // namespace

std::vector<TestFrame> build_test_frames() {
  std::vector<TestFrame> out;
  auto add = [&out](std::string name, const Frame& f,
                    std::vector<std::pair<std::string, std::string>> expect) {
    out.push_back(TestFrame{std::move(name), encode(f), std::move(expect)});
  };

  // --- CM: REQ with rdma_cm private data (IP header + MrInfo) --------------
  {
    cm::Req r;
    r.local_comm_id = 0x11223344;
    r.service_id = 0x0000000001060000ull | 18515;  // RDMA_PS_TCP, port 18515
    r.local_ca_guid = 0x0200000000000001ull;
    r.qkey = 0;
    r.local_qpn = 0x000011;
    r.resp_resources = 4;
    r.initiator_depth = 4;
    r.remote_cm_timeout = 20;
    r.transport_type = 0;
    r.start_psn = 0xABCDEF;
    r.local_cm_timeout = 20;
    r.retry_count = 7;
    r.path_mtu = 3;  // 1024
    r.rnr_retry_count = 7;
    r.max_cm_retries = 15;
    r.primary_local_gid = Ipv6Addr::v4_mapped(*Ipv4Addr::parse("192.168.1.10"));
    r.primary_remote_gid = Ipv6Addr::v4_mapped(*Ipv4Addr::parse("192.168.1.20"));
    r.primary_hop_limit = 64;
    r.primary_local_ack_timeout = 14;
    cm::RdmaCmIpHdr ip;
    ip.port = 0xC123;
    ip.src = Ipv6Addr::v4_mapped(*Ipv4Addr::parse("192.168.1.10"));
    ip.dst = Ipv6Addr::v4_mapped(*Ipv4Addr::parse("192.168.1.20"));
    // rdma_cm puts IPv4 addresses in the last 4 bytes with the rest zero.
    ip.src.b[10] = ip.src.b[11] = 0;
    ip.dst.b[10] = ip.dst.b[11] = 0;
    r.private_data = cm::make_private_data(ip, cm::MrInfo{0x00007F0000001000ull, 0x00000ABC, 65536});
    add("cm_req", cm_frame(r, 0x0000000100000001ull, 0x000100),
        {{"infiniband.bth.opcode", "100"},
         {"infiniband.bth.destqp", "0x000001"},
         {"infiniband.bth.p_key", "65535"},
         {"infiniband.deth.q_key", "0x0000000080010000"},
         {"infiniband.deth.srcqp", "0x00000001"},
         {"infiniband.mad.mgmtclass", "0x07"},
         {"infiniband.mad.attributeid", "0x0010"},
         {"infiniband.mad.transactionid", "0x0000000100000001"},
         {"infiniband.cm.req", "0x11223344"},
         {"infiniband.cm.req.serviceid.dport", "0x4853"},
         {"infiniband.cm.req.localqpn", "0x000011"},
         {"infiniband.cm.req.startpsn", "0xabcdef"},
         {"infiniband.cm.req.responderres", "0x04"},
         {"infiniband.cm.req.initdepth", "0x04"},
         {"infiniband.cm.req.remoteresptout", "0x14"},
         {"infiniband.cm.req.localresptout", "0x14"},
         {"infiniband.cm.req.transpsvctype", "0x00"},
         {"infiniband.cm.req.localcaguid", "0x0200000000000001"},
         {"infiniband.cm.req.maxcmretr", "0x0f"},
         {"infiniband.cm.req.rnrretrcount", "0x07"},
         {"infiniband.cm.req.prim_localacktout", "0x0e"},
         {"infiniband.cm.req.prim_hoplim", "0x40"},
         {"infiniband.cm.req.pppmtu", "0x03"},
         {"infiniband.cm.req.retrcount", "0x07"},
         {"infiniband.cm.req.prim_localgid_ipv4", "192.168.1.10"},
         {"infiniband.cm.req.prim_remotegid_ipv4", "192.168.1.20"},
         {"infiniband.cm.req.ip_cm.sport", "0xc123"},
         {"infiniband.cm.req.ip_cm.sip4", "192.168.1.10"},
         {"infiniband.cm.req.ip_cm.dip4", "192.168.1.20"},
         {"_ws.col.Info", "CM: ConnectRequest"}});
  }
  // --- CM: REP ---------------------------------------------------------
  {
    cm::Rep r;
    r.local_comm_id = 0x55667788;
    r.remote_comm_id = 0x11223344;
    r.local_qpn = 0x000022;
    r.start_psn = 0x123456;
    r.resp_resources = 4;
    r.initiator_depth = 4;
    r.target_ack_delay = 15;
    r.rnr_retry_count = 7;
    r.local_ca_guid = 0x0200000000000002ull;
    r.private_data = cm::encode_mr_info(cm::MrInfo{0x00007F0000002000ull, 0x00000DEF, 4096});
    add("cm_rep", cm_frame(r, 0x0000000100000001ull, 0x000200),
        {{"infiniband.bth.opcode", "100"},
         {"infiniband.mad.attributeid", "0x0013"},
         {"infiniband.cm.rep", "0x55667788"},
         {"infiniband.cm.rep.remotecommid", "0x11223344"},
         {"infiniband.cm.rep.localqpn", "0x000022"},
         {"infiniband.cm.rep.startpsn", "0x123456"},
         {"infiniband.cm.rep.rnrretrcount", "0x07"},
         {"infiniband.cm.rep.tgtackdelay", "0x0f"},
         {"infiniband.cm.rep.respres", "0x04"},
         {"infiniband.cm.rep.initdepth", "0x04"},
         {"infiniband.cm.rep.localcaguid", "0x0200000000000002"},
         {"_ws.col.Info", "CM: ConnectReply"}});
  }
  // --- CM: RTU, REJ, DREQ, DREP -------------------------------------------
  add("cm_rtu", cm_frame(cm::Rtu{0x11223344, 0x55667788, {}}, 0x0000000100000001ull, 0x000101),
      {{"infiniband.mad.attributeid", "0x0014"},
       {"infiniband.cm.rtu.localcommid", "0x11223344"},
       {"infiniband.cm.rtu.remotecommid", "0x55667788"},
       {"_ws.col.Info", "CM: ReadyToUse"}});
  {
    cm::Rej r;
    r.local_comm_id = 0x55667788;
    r.remote_comm_id = 0x11223344;
    r.msg_rejected = 0;
    r.reason = 28;
    add("cm_rej", cm_frame(r, 0x0000000100000002ull, 0x000201),
        {{"infiniband.mad.attributeid", "0x0012"},
         {"infiniband.cm.rej.localcommid", "0x55667788"},
         {"infiniband.cm.rej.remotecommid", "0x11223344"},
         {"infiniband.cm.rej.msgrej", "0x00"},
         {"infiniband.cm.rej.reason", "0x001c"},
         {"_ws.col.Info", "CM: ConnectReject"}});
  }
  add("cm_dreq", cm_frame(cm::Dreq{0x11223344, 0x55667788, 0x000022, {}}, 0x0000000100000003ull, 0x000102),
      {{"infiniband.mad.attributeid", "0x0015"},
       {"infiniband.cm.dreq.localcommid", "0x11223344"},
       {"infiniband.cm.dreq.remotecommid", "0x55667788"},
       {"_ws.col.Info", "CM: DisconnectRequest"}});
  add("cm_drep", cm_frame(cm::Drep{0x55667788, 0x11223344, {}}, 0x0000000100000003ull, 0x000202),
      {{"infiniband.mad.attributeid", "0x0016"},
       {"infiniband.cm.drsp.localcommid", "0x55667788"},
       {"infiniband.cm.drsp.remotecommid", "0x11223344"},
       {"_ws.col.Info", "CM: DisconnectReply"}});

  // --- SEND_ONLY_IMM (ImmDt), 5-byte payload: PadCnt 3 ---------------------
  {
    Frame f = base_v4(op::RC_SEND_ONLY_IMM, 0x000022, 0x123457);
    f.bth.ack_req = true;
    f.immdt = 0xDEADBEEF;
    f.payload = seq_payload(5, 0x41);
    add("send_only_imm", f,
        {{"infiniband.bth.opcode", "5"},
         {"infiniband.bth.destqp", "0x000022"},
         {"infiniband.bth.psn", "1193047"},
         {"infiniband.bth.a", "1"},
         {"infiniband.bth.padcnt", "3"},
         {"infiniband.immdt", "deadbeef"}});
  }
  // --- SEND_ONLY_INV (IETH), 6-byte payload: PadCnt 2 ----------------------
  {
    Frame f = base_v4(op::RC_SEND_ONLY_INV, 0x000022, 0x123458);
    f.ieth = 0x00000DEF;
    f.payload = seq_payload(6, 0x61);
    add("send_only_inv", f,
        {{"infiniband.bth.opcode", "23"},
         {"infiniband.bth.psn", "1193048"},
         {"infiniband.bth.padcnt", "2"},
         {"infiniband.ieth", "00000def"}});
  }
  // --- NAKs: PSN sequence error, invalid request, remote access, remote op -
  const char* nak_code[] = {"0", "1", "2", "3"};
  for (uint8_t i = 0; i < 4; ++i) {
    Frame f = base_v4(op::RC_ACK, 0x000011, 0xFFFFF0 + i);
    f.aeth = Aeth{uint8_t(0x60 + i), 0x000100u + i};
    char name[12], syn[8], psn[12], msn[12];
    std::snprintf(name, sizeof name, "nak_0x%02x", 0x60u + i);
    std::snprintf(syn, sizeof syn, "%u", 0x60u + i);  // tshark prints the syndrome in decimal
    std::snprintf(psn, sizeof psn, "%u", 0xFFFFF0u + i);
    std::snprintf(msn, sizeof msn, "%u", 0x100u + i);
    add(name, f,
        {{"infiniband.bth.opcode", "17"},
         {"infiniband.bth.psn", psn},
         {"infiniband.aeth.syndrome", syn},
         {"infiniband.aeth.syndrome.opcode", "3"},
         {"infiniband.aeth.syndrome.error_code", nak_code[i]},
         {"infiniband.aeth.msn", msn}});
  }
  // --- RNR NAK, timer code 14 (1.28 ms): syndrome 0x2E ---------------------
  {
    Frame f = base_v4(op::RC_ACK, 0x000011, 0x000000);
    f.aeth = Aeth{aeth::rnr_nak(14), 0x000007};
    add("rnr_nak", f,
        {{"infiniband.bth.opcode", "17"},
         {"infiniband.bth.psn", "0"},
         {"infiniband.aeth.syndrome", "46"},
         {"infiniband.aeth.syndrome.opcode", "1"},
         {"infiniband.aeth.syndrome.timer", "14"},
         {"infiniband.aeth.msn", "7"}});
  }
  // --- positive ACK with credit count 31 at PSN 0xFFFFFF -------------------
  {
    Frame f = base_v4(op::RC_ACK, 0x000011, 0xFFFFFF);
    f.aeth = Aeth{aeth::ack(), 0xFFFFFF};
    add("ack_psn_max", f,
        {{"infiniband.bth.psn", "16777215"},
         {"infiniband.aeth.syndrome", "31"},
         {"infiniband.aeth.syndrome.opcode", "0"},
         {"infiniband.aeth.syndrome.credit_count", "31"},
         {"infiniband.aeth.msn", "16777215"}});
  }
  // --- WRITE_ONLY (RETH), 7-byte payload: PadCnt 1 -------------------------
  {
    Frame f = base_v4(op::RC_WRITE_ONLY, 0x000022, 0x000010);
    f.reth = Reth{0x00007F0000002040ull, 0x00000DEF, 7};
    f.payload = seq_payload(7, 0x10);
    add("write_only_pad1", f,
        {{"infiniband.bth.opcode", "10"},
         {"infiniband.bth.padcnt", "1"},
         {"infiniband.reth.va", "0x00007f0000002040"},
         {"infiniband.reth.r_key", "0x00000def"},
         {"infiniband.reth.dmalen", "7"}});
  }
  // --- WRITE_ONLY_IMM (RETH + ImmDt) --------------------------------------
  {
    Frame f = base_v4(op::RC_WRITE_ONLY_IMM, 0x000022, 0x000011);
    f.reth = Reth{0x00007F0000002080ull, 0x00000DEF, 64};
    f.immdt = 0x01020304;
    f.payload = seq_payload(64, 0x80);
    add("write_only_imm", f,
        {{"infiniband.bth.opcode", "11"},
         {"infiniband.bth.padcnt", "0"},
         {"infiniband.reth.dmalen", "64"},
         {"infiniband.immdt", "01020304"}});
  }
  // --- UD SEND_ONLY_IMM (DETH + ImmDt) to an ordinary UD QP ----------------
  {
    Frame f = base_v4(op::UD_SEND_ONLY_IMM, 0x000033, 0x000042);
    f.deth = Deth{0x11111111, 0, 0x000044};
    f.immdt = 0xCAFEF00D;
    f.payload = seq_payload(10, 0x20);
    add("ud_send_only_imm", f,
        {{"infiniband.bth.opcode", "101"},
         {"infiniband.bth.padcnt", "2"},
         {"infiniband.deth.q_key", "0x0000000011111111"},
         {"infiniband.deth.srcqp", "0x00000044"},
         {"infiniband.immdt", "cafef00d"}});
  }
  // --- IPv6: RC SEND_ONLY, 13-byte payload (PadCnt 3) ----------------------
  {
    Frame f = base_v4(op::RC_SEND_ONLY, 0x000022, 0x765432);
    f.ipv6 = true;
    f.ip6.traffic_class = 0x68;  // DSCP 26, ECN 0
    f.ip6.flow_label = 0x12345;
    f.ip6.hop_limit = 64;
    f.ip6.src = *Ipv6Addr::parse("fd00::10");
    f.ip6.dst = *Ipv6Addr::parse("fd00::20");
    f.payload = seq_payload(13, 0x30);
    add("ipv6_send_only", f,
        {{"ipv6.src", "fd00::10"},
         {"ipv6.dst", "fd00::20"},
         {"ipv6.flow", "0x012345"},
         {"udp.dstport", "4791"},
         {"infiniband.bth.opcode", "4"},
         {"infiniband.bth.destqp", "0x000022"},
         {"infiniband.bth.psn", "7754802"},
         {"infiniband.bth.padcnt", "3"}});
  }
  return out;
}

bool write_pcap(const std::string& path, const std::vector<roce::Bytes>& frames) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  if (!dead) return false;
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  if (!d) {
    std::fprintf(stderr, "pcap_dump_open(%s): %s\n", path.c_str(), pcap_geterr(dead));
    pcap_close(dead);
    return false;
  }
  long sec = 1;
  for (const Bytes& b : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = sec++;
    h.caplen = h.len = bpf_u_int32(b.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, b.data());
  }
  pcap_dump_close(d);
  pcap_close(dead);
  return true;
}

}  // namespace roce_test
