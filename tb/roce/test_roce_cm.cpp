// tb/roce: CM MADs: field positions at the IBTA ch.12 byte offsets (MAD
// header 24 B, then the attribute data), round trips, attribute names, the
// rdma_cm IP header and MrInfo.
#include <gtest/gtest.h>

#include "model/roce/cm.h"

using namespace roce;
using namespace roce::cm;

namespace {

constexpr size_t D = 24;  // start of the attribute data within the MAD

TEST(Cm, AttrNames) {
  EXPECT_STREQ(attr_name(attr::REQ), "ConnectRequest");
  EXPECT_STREQ(attr_name(attr::REP), "ConnectReply");
  EXPECT_STREQ(attr_name(attr::RTU), "ReadyToUse");
  EXPECT_STREQ(attr_name(attr::REJ), "ConnectReject");
  EXPECT_STREQ(attr_name(attr::DREQ), "DisconnectRequest");
  EXPECT_STREQ(attr_name(attr::DREP), "DisconnectReply");
  EXPECT_STREQ(attr_name(attr::MRA), "MsgRcptAck");
  EXPECT_STREQ(attr_name(attr::ClassPortInfo), "ClassPortInfo");
}

TEST(Cm, MadHeaderLayout) {
  MadHeader h;
  h.status = 0x1234;
  h.class_specific = 0x5678;
  h.tid = 0x0102030405060708ull;
  h.attr_id = 0xFFFF;  // ignored: set from the message type
  h.attr_mod = 0xA0B0C0D0;
  const Bytes m = encode_mad(h, Rtu{1, 2, {}});
  ASSERT_EQ(m.size(), 256u);
  EXPECT_EQ(m[0], 1);     // base version
  EXPECT_EQ(m[1], 0x07);  // CM class
  EXPECT_EQ(m[2], 2);     // class version
  EXPECT_EQ(m[3], 0x03);  // SEND
  EXPECT_EQ(get_be16(&m[4]), 0x1234);
  EXPECT_EQ(get_be16(&m[6]), 0x5678);
  EXPECT_EQ(get_be64(&m[8]), 0x0102030405060708ull);
  EXPECT_EQ(get_be16(&m[16]), 0x0014);
  EXPECT_EQ(get_be16(&m[18]), 0);
  EXPECT_EQ(get_be32(&m[20]), 0xA0B0C0D0u);
  const auto d = decode_mad(m.data(), m.size());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->hdr.tid, h.tid);
  EXPECT_EQ(d->hdr.attr_id, attr::RTU);
  EXPECT_EQ(d->hdr.attr_mod, h.attr_mod);
  EXPECT_EQ(d->hdr.status, 0x1234);
}

TEST(Cm, ReqLayoutAndRoundTrip) {
  Req r;
  r.local_comm_id = 0xC0FFEE01;
  r.service_id = 0x0000000001060000ull | 4791;
  r.local_ca_guid = 0x0011223344556677ull;
  r.qkey = 0x0BADCAFE;
  r.local_qpn = 0x00ABCD;
  r.resp_resources = 0x10;
  r.local_eecn = 0x000123;
  r.initiator_depth = 0x08;
  r.remote_cm_timeout = 22;     // 10110
  r.transport_type = 1;         // 01
  r.e2e_flow_control = true;    // 1
  r.start_psn = 0xFEDCBA;
  r.local_cm_timeout = 19;      // 10011
  r.retry_count = 5;            // 101
  r.pkey = 0x7FFF;
  r.path_mtu = 5;               // 0101
  r.rdc_exists = true;
  r.rnr_retry_count = 6;        // 110
  r.max_cm_retries = 15;
  r.srq = true;
  r.primary_local_lid = 0x1111;
  r.primary_remote_lid = 0x2222;
  r.primary_local_gid = Ipv6Addr::v4_mapped(Ipv4Addr{0x0A000001});
  r.primary_remote_gid = Ipv6Addr::v4_mapped(Ipv4Addr{0x0A000002});
  r.primary_flow_label = 0xABCDE;
  r.primary_packet_rate = 0x2A;
  r.primary_traffic_class = 0x60;
  r.primary_hop_limit = 0x40;
  r.primary_sl = 0x9;
  r.primary_subnet_local = true;
  r.primary_local_ack_timeout = 17;
  r.private_data = {0xDE, 0xAD};
  const Bytes m = encode_mad(MadHeader{}, r);
  ASSERT_EQ(m.size(), 256u);
  EXPECT_EQ(get_be16(&m[16]), 0x0010);
  EXPECT_EQ(get_be32(&m[D + 0]), 0xC0FFEE01u);
  EXPECT_EQ(get_be64(&m[D + 8]), 0x00000000010612B7ull);
  EXPECT_EQ(get_be64(&m[D + 16]), 0x0011223344556677ull);
  EXPECT_EQ(get_be32(&m[D + 28]), 0x0BADCAFEu);
  EXPECT_EQ(get_be24(&m[D + 32]), 0x00ABCDu);
  EXPECT_EQ(m[D + 35], 0x10);
  EXPECT_EQ(get_be24(&m[D + 36]), 0x000123u);
  EXPECT_EQ(m[D + 39], 0x08);
  EXPECT_EQ(m[D + 43], 0xB3);   // 10110 01 1
  EXPECT_EQ(get_be24(&m[D + 44]), 0xFEDCBAu);
  EXPECT_EQ(m[D + 47], 0x9D);   // 10011 101
  EXPECT_EQ(get_be16(&m[D + 48]), 0x7FFF);
  EXPECT_EQ(m[D + 50], 0x5E);   // 0101 1 110
  EXPECT_EQ(m[D + 51], 0xF8);   // 1111 1 000
  EXPECT_EQ(get_be16(&m[D + 52]), 0x1111);
  EXPECT_EQ(get_be16(&m[D + 54]), 0x2222);
  EXPECT_EQ(m[D + 56 + 10], 0xFF);
  EXPECT_EQ(get_be32(&m[D + 56 + 12]), 0x0A000001u);
  EXPECT_EQ(get_be32(&m[D + 72 + 12]), 0x0A000002u);
  EXPECT_EQ(get_be32(&m[D + 88]), 0xABCDE02Au);  // flow label 20 | rsvd 6 | rate 6
  EXPECT_EQ(m[D + 92], 0x60);
  EXPECT_EQ(m[D + 93], 0x40);
  EXPECT_EQ(m[D + 94], 0x98);   // SL 1001, subnet local 1
  EXPECT_EQ(m[D + 95], 0x88);   // 10001 000
  EXPECT_EQ(m[D + 140], 0xDE);
  EXPECT_EQ(m[D + 141], 0xAD);
  EXPECT_EQ(m[D + 142], 0x00);

  const auto d = decode_mad(m.data(), m.size());
  ASSERT_TRUE(d);
  ASSERT_TRUE(std::holds_alternative<Req>(d->msg));
  const Req& q = std::get<Req>(d->msg);
  EXPECT_EQ(q.local_comm_id, r.local_comm_id);
  EXPECT_EQ(q.service_id, r.service_id);
  EXPECT_EQ(q.local_ca_guid, r.local_ca_guid);
  EXPECT_EQ(q.qkey, r.qkey);
  EXPECT_EQ(q.local_qpn, r.local_qpn);
  EXPECT_EQ(q.resp_resources, r.resp_resources);
  EXPECT_EQ(q.local_eecn, r.local_eecn);
  EXPECT_EQ(q.initiator_depth, r.initiator_depth);
  EXPECT_EQ(q.remote_cm_timeout, r.remote_cm_timeout);
  EXPECT_EQ(q.transport_type, r.transport_type);
  EXPECT_EQ(q.e2e_flow_control, r.e2e_flow_control);
  EXPECT_EQ(q.start_psn, r.start_psn);
  EXPECT_EQ(q.local_cm_timeout, r.local_cm_timeout);
  EXPECT_EQ(q.retry_count, r.retry_count);
  EXPECT_EQ(q.pkey, r.pkey);
  EXPECT_EQ(q.path_mtu, r.path_mtu);
  EXPECT_EQ(q.rdc_exists, r.rdc_exists);
  EXPECT_EQ(q.rnr_retry_count, r.rnr_retry_count);
  EXPECT_EQ(q.max_cm_retries, r.max_cm_retries);
  EXPECT_EQ(q.srq, r.srq);
  EXPECT_EQ(q.primary_local_lid, r.primary_local_lid);
  EXPECT_EQ(q.primary_remote_lid, r.primary_remote_lid);
  EXPECT_EQ(q.primary_local_gid, r.primary_local_gid);
  EXPECT_EQ(q.primary_remote_gid, r.primary_remote_gid);
  EXPECT_EQ(q.primary_flow_label, r.primary_flow_label);
  EXPECT_EQ(q.primary_packet_rate, r.primary_packet_rate);
  EXPECT_EQ(q.primary_traffic_class, r.primary_traffic_class);
  EXPECT_EQ(q.primary_hop_limit, r.primary_hop_limit);
  EXPECT_EQ(q.primary_sl, r.primary_sl);
  EXPECT_EQ(q.primary_subnet_local, r.primary_subnet_local);
  EXPECT_EQ(q.primary_local_ack_timeout, r.primary_local_ack_timeout);
  // Private data comes back as the whole 92-byte slot.
  ASSERT_EQ(q.private_data.size(), 92u);
  EXPECT_EQ(q.private_data[0], 0xDE);
  EXPECT_EQ(q.private_data[1], 0xAD);
  EXPECT_EQ(q.private_data[91], 0x00);
}

TEST(Cm, RepLayoutAndRoundTrip) {
  Rep r;
  r.local_comm_id = 0x01010101;
  r.remote_comm_id = 0x02020202;
  r.local_qkey = 0x03030303;
  r.local_qpn = 0x000042;
  r.local_eecn = 0x000007;
  r.start_psn = 0xFFFFFE;
  r.resp_resources = 3;
  r.initiator_depth = 2;
  r.target_ack_delay = 31;   // 11111
  r.failover_accepted = 2;   // 10
  r.e2e_flow_control = false;
  r.rnr_retry_count = 5;     // 101
  r.srq = true;              // 1
  r.local_ca_guid = 0x8877665544332211ull;
  r.private_data.assign(196, 0x5C);
  r.private_data.push_back(0x99);  // beyond the slot: dropped
  const Bytes m = encode_mad(MadHeader{}, r);
  EXPECT_EQ(get_be16(&m[16]), 0x0013);
  EXPECT_EQ(get_be32(&m[D + 0]), 0x01010101u);
  EXPECT_EQ(get_be32(&m[D + 4]), 0x02020202u);
  EXPECT_EQ(get_be32(&m[D + 8]), 0x03030303u);
  EXPECT_EQ(get_be24(&m[D + 12]), 0x000042u);
  EXPECT_EQ(m[D + 15], 0);
  EXPECT_EQ(get_be24(&m[D + 16]), 0x000007u);
  EXPECT_EQ(get_be24(&m[D + 20]), 0xFFFFFEu);
  EXPECT_EQ(m[D + 24], 3);
  EXPECT_EQ(m[D + 25], 2);
  EXPECT_EQ(m[D + 26], 0xFC);  // 11111 10 0
  EXPECT_EQ(m[D + 27], 0xB0);  // 101 1 0000
  EXPECT_EQ(get_be64(&m[D + 28]), 0x8877665544332211ull);
  EXPECT_EQ(m[D + 36], 0x5C);
  EXPECT_EQ(m[255], 0x5C);
  const auto d = decode_mad(m.data(), m.size());
  ASSERT_TRUE(d);
  const Rep& p = std::get<Rep>(d->msg);
  EXPECT_EQ(p.local_comm_id, r.local_comm_id);
  EXPECT_EQ(p.remote_comm_id, r.remote_comm_id);
  EXPECT_EQ(p.local_qkey, r.local_qkey);
  EXPECT_EQ(p.local_qpn, r.local_qpn);
  EXPECT_EQ(p.local_eecn, r.local_eecn);
  EXPECT_EQ(p.start_psn, r.start_psn);
  EXPECT_EQ(p.resp_resources, r.resp_resources);
  EXPECT_EQ(p.initiator_depth, r.initiator_depth);
  EXPECT_EQ(p.target_ack_delay, r.target_ack_delay);
  EXPECT_EQ(p.failover_accepted, r.failover_accepted);
  EXPECT_EQ(p.e2e_flow_control, r.e2e_flow_control);
  EXPECT_EQ(p.rnr_retry_count, r.rnr_retry_count);
  EXPECT_EQ(p.srq, r.srq);
  EXPECT_EQ(p.local_ca_guid, r.local_ca_guid);
  EXPECT_EQ(p.private_data, Bytes(196, 0x5C));
}

TEST(Cm, RtuRejDreqDrepLayouts) {
  {
    const Bytes m = encode_mad(MadHeader{}, Rtu{0xAAAA0001, 0xBBBB0002, {7}});
    EXPECT_EQ(get_be16(&m[16]), 0x0014);
    EXPECT_EQ(get_be32(&m[D + 0]), 0xAAAA0001u);
    EXPECT_EQ(get_be32(&m[D + 4]), 0xBBBB0002u);
    EXPECT_EQ(m[D + 8], 7);
    const auto d = decode_mad(m.data(), m.size());
    ASSERT_TRUE(d);
    const Rtu& u = std::get<Rtu>(d->msg);
    EXPECT_EQ(u.local_comm_id, 0xAAAA0001u);
    EXPECT_EQ(u.remote_comm_id, 0xBBBB0002u);
    EXPECT_EQ(u.private_data.size(), 224u);
  }
  {
    Rej r;
    r.local_comm_id = 5;
    r.remote_comm_id = 6;
    r.msg_rejected = 1;  // REP
    r.reason = 28;
    r.ari = {1, 2, 3};
    r.private_data = {0x42};
    const Bytes m = encode_mad(MadHeader{}, r);
    EXPECT_EQ(get_be16(&m[16]), 0x0012);
    EXPECT_EQ(get_be32(&m[D + 0]), 5u);
    EXPECT_EQ(get_be32(&m[D + 4]), 6u);
    EXPECT_EQ(m[D + 8], 0x40);      // MsgRejected in bits 7:6
    EXPECT_EQ(m[D + 9], 3 << 1);    // ARI length in bits 7:1
    EXPECT_EQ(get_be16(&m[D + 10]), 28);
    EXPECT_EQ(m[D + 12], 1);
    EXPECT_EQ(m[D + 14], 3);
    EXPECT_EQ(m[D + 84], 0x42);
    const auto d = decode_mad(m.data(), m.size());
    ASSERT_TRUE(d);
    const Rej& j = std::get<Rej>(d->msg);
    EXPECT_EQ(j.msg_rejected, 1);
    EXPECT_EQ(j.ari_length, 3);
    EXPECT_EQ(j.reason, 28);
    EXPECT_EQ(j.ari, (Bytes{1, 2, 3}));
    EXPECT_EQ(j.private_data.size(), 148u);
    EXPECT_EQ(j.private_data[0], 0x42);
  }
  {
    const Bytes m = encode_mad(MadHeader{}, Dreq{0x11, 0x22, 0xABCDEF, {}});
    EXPECT_EQ(get_be16(&m[16]), 0x0015);
    EXPECT_EQ(get_be32(&m[D + 0]), 0x11u);
    EXPECT_EQ(get_be32(&m[D + 4]), 0x22u);
    EXPECT_EQ(get_be24(&m[D + 8]), 0xABCDEFu);
    const auto d = decode_mad(m.data(), m.size());
    ASSERT_TRUE(d);
    EXPECT_EQ(std::get<Dreq>(d->msg).remote_qpn, 0xABCDEFu);
  }
  {
    const Bytes m = encode_mad(MadHeader{}, Drep{0x33, 0x44, {}});
    EXPECT_EQ(get_be16(&m[16]), 0x0016);
    const auto d = decode_mad(m.data(), m.size());
    ASSERT_TRUE(d);
    EXPECT_EQ(std::get<Drep>(d->msg).local_comm_id, 0x33u);
    EXPECT_EQ(std::get<Drep>(d->msg).remote_comm_id, 0x44u);
  }
}

TEST(Cm, DecodeRejects) {
  Bytes m = encode_mad(MadHeader{}, Drep{1, 2, {}});
  EXPECT_FALSE(decode_mad(m.data(), 255));
  EXPECT_FALSE(decode_mad(nullptr, 256));
  Bytes c = m;
  c[1] = 0x01;  // subnet management class
  EXPECT_FALSE(decode_mad(c.data(), c.size()));
  c = m;
  put_be16(&c[16], attr::MRA);  // not one of the six
  EXPECT_FALSE(decode_mad(c.data(), c.size()));
  put_be16(&c[16], attr::ClassPortInfo);
  EXPECT_FALSE(decode_mad(c.data(), c.size()));
}

TEST(Cm, RdmaCmIpHeaderAndMrInfo) {
  RdmaCmIpHdr h;
  h.ip_version = 4;
  h.port = 0x1234;
  put_be32(&h.src.b[12], 0xC0A8010A);
  put_be32(&h.dst.b[12], 0xC0A80114);
  const Bytes ip = encode_ip_hdr(h);
  ASSERT_EQ(ip.size(), 36u);
  EXPECT_EQ(ip[0], 0x00);
  EXPECT_EQ(ip[1], 0x40);
  EXPECT_EQ(get_be16(&ip[2]), 0x1234);
  EXPECT_EQ(get_be32(&ip[4 + 12]), 0xC0A8010Au);
  EXPECT_EQ(get_be32(&ip[20 + 12]), 0xC0A80114u);
  EXPECT_EQ(ip[4], 0);
  const auto hd = decode_ip_hdr(ip.data(), ip.size());
  ASSERT_TRUE(hd);
  EXPECT_EQ(hd->ip_version, 4);
  EXPECT_EQ(hd->port, 0x1234);
  EXPECT_EQ(hd->src, h.src);
  EXPECT_EQ(hd->dst, h.dst);
  EXPECT_FALSE(decode_ip_hdr(ip.data(), 35));

  const MrInfo mr{0x00007F1234567000ull, 0xCAFEBABE, 0x0000000100000000ull};
  const Bytes mb = encode_mr_info(mr);
  const Bytes want = {0x00, 0x00, 0x7F, 0x12, 0x34, 0x56, 0x70, 0x00, 0xCA, 0xFE,
                      0xBA, 0xBE, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(mb, want);
  const auto md = decode_mr_info(mb.data(), mb.size());
  ASSERT_TRUE(md);
  EXPECT_EQ(md->va, mr.va);
  EXPECT_EQ(md->rkey, mr.rkey);
  EXPECT_EQ(md->length, mr.length);
  EXPECT_FALSE(decode_mr_info(mb.data(), 19));

  const Bytes pd = make_private_data(h, mr);
  ASSERT_EQ(pd.size(), 56u);
  EXPECT_TRUE(std::equal(ip.begin(), ip.end(), pd.begin()));
  EXPECT_TRUE(std::equal(mb.begin(), mb.end(), pd.begin() + 36));

  // Through a REQ: private data sits at data offset 140.
  Req r;
  r.private_data = pd;
  const Bytes m = encode_mad(MadHeader{}, r);
  const auto ipd = decode_ip_hdr(&m[D + 140], 92);
  ASSERT_TRUE(ipd);
  EXPECT_EQ(ipd->port, 0x1234);
  const auto mrd = decode_mr_info(&m[D + 140 + 36], 92 - 36);
  ASSERT_TRUE(mrd);
  EXPECT_EQ(mrd->rkey, 0xCAFEBABEu);
}

}  // namespace
