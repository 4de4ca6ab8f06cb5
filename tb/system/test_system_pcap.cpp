// tb/system: the default scenario's packet captures, judged by tshark (the
// independent RoCEv2/CM dissector) and by reading the per-tap files.
//
// Expected values come from the protocol (IBTA: CM REQ/REP/RTU attribute
// ids, RC WRITE opcodes and PSN sequence, ACK PSN), from the scenario file
// (64 KiB at PMTU 4096 = 16 packets, link delay 100 ns, data pattern
// random seed 7 as defined in scenarios/README.md section 6) and from what
// tshark reads in the capture itself (StartPSN, LocalQPN).
#include <algorithm>
#include <random>
#include <tuple>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;

// IBTA opcodes (RC): RDMA WRITE First/Middle/Last, Acknowledge; UD SEND Only.
constexpr int kWriteFirst = 6, kWriteMiddle = 7, kWriteLast = 8, kAck = 17, kUdSendOnly = 100;
constexpr uint64_t kWriteBytes = 65536, kPmtu = 4096;

class SystemPcap : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir();
    ASSERT_NO_FATAL_FAILURE(run_default(dir_));
  }
  fs::path dir_;
};

TEST_F(SystemPcap, TsharkDecodesEveryFrameAsRoceWithoutMalformed) {
  int st = 0;
  auto rows = tshark_fields(dir_ / "out.pcap", {"frame.number", "frame.protocols", "_ws.malformed", "udp.dstport"}, &st);
  ASSERT_EQ(st, 0);
  const auto frames = ernic::PcapReader::read_all((dir_ / "out.pcap").string());
  ASSERT_EQ(rows.size(), frames.size()) << "tshark saw another number of frames than the pcap holds";
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 4u);
    EXPECT_NE(r[1].find(":ip:udp:infiniband"), std::string::npos) << "frame " << r[0] << ": " << r[1];
    EXPECT_EQ(r[1].find("malformed"), std::string::npos) << "frame " << r[0] << ": " << r[1];
    EXPECT_TRUE(r[2].empty()) << "frame " << r[0] << " is malformed";
    EXPECT_EQ(r[3], "4791") << "frame " << r[0];
  }
  // The per-tap files hold the same frames (TapsAreConsistent checks that
  // byte for byte), so decoding the merged file covers them.
}

TEST_F(SystemPcap, HandshakeThenWriteThenAck) {
  const std::vector<std::string> f = {
      "frame.number",                // 0
      "ip.src",                      // 1
      "ip.dst",                      // 2
      "infiniband.bth.opcode",       // 3
      "infiniband.bth.destqp",       // 4
      "infiniband.bth.psn",          // 5
      "infiniband.bth.a",            // 6
      "infiniband.mad.attributeid",  // 7
      "infiniband.cm.req.localqpn",  // 8
      "infiniband.cm.req.startpsn",  // 9
      "infiniband.cm.rep.localqpn",  // 10
      "infiniband.cm.rep.startpsn",  // 11
      "_ws.col.Info",                // 12
      "infiniband.reth.dmalen",      // 13
      "infiniband.aeth.syndrome",    // 14
      "infiniband.deth.q_key",       // 15
      "infiniband.cm.req.pppmtu",    // 16
  };
  int st = 0;
  auto rows = tshark_fields(dir_ / "out.pcap", f, &st);
  ASSERT_EQ(st, 0);
  for (auto& r : rows) ASSERT_EQ(r.size(), f.size());

  // CM: ConnectRequest (A->B), ConnectReply (B->A), ReadyToUse (A->B), all
  // UD SEND Only to QP1, in that order, before any RC traffic.
  std::vector<size_t> mads;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i][7].empty()) mads.push_back(i);
  ASSERT_EQ(mads.size(), 3u);
  const char* names[] = {"CM: ConnectRequest", "CM: ConnectReply", "CM: ReadyToUse"};
  const char* attrs[] = {"0x0010", "0x0013", "0x0014"};
  const char* src[] = {"10.0.0.1", "10.0.0.2", "10.0.0.1"};
  for (size_t k = 0; k < 3; ++k) {
    const auto& r = rows[mads[k]];
    EXPECT_EQ(mads[k], k) << "the CM messages come first";
    EXPECT_EQ(r[7], attrs[k]) << "frame " << r[0];
    EXPECT_NE(r[12].find(names[k]), std::string::npos) << "frame " << r[0] << " Info: " << r[12];
    EXPECT_EQ(to_u64(r[3]), uint64_t(kUdSendOnly)) << "frame " << r[0];
    EXPECT_EQ(to_u64(r[4]), 1u) << "CM MADs go to QP1";
    EXPECT_EQ(r[1], src[k]);
    EXPECT_EQ(to_u64(r[15]), 0x80010000u) << "frame " << r[0] << ": GSI well-known Q_Key";
  }
  const auto& req = rows[mads[0]];
  const auto& rep = rows[mads[1]];
  const uint64_t req_qpn = to_u64(req[8]), start_psn = to_u64(req[9]);
  const uint64_t rep_qpn = to_u64(rep[10]);
  EXPECT_EQ(to_u64(req[16]), 5u) << "REQ path MTU: IB enum 5 = 4096 (the connect step's pmtu)";
  EXPECT_GE(req_qpn, 2u);
  EXPECT_GE(rep_qpn, 2u);

  // The WRITE: First, Middle x14, Last; consecutive PSNs from the REQ's
  // StartPSN (mod 2^24); to the QPN B announced in its ConnectReply; RETH
  // on the first packet with the whole length; AckReq on the last.
  std::vector<size_t> w;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int op = int(to_u64(rows[i][3]));
    if (op >= kWriteFirst && op <= kWriteLast) w.push_back(i);
  }
  ASSERT_EQ(w.size(), kWriteBytes / kPmtu) << "64 KiB at PMTU 4096";
  for (size_t k = 0; k < w.size(); ++k) {
    const auto& r = rows[w[k]];
    const int want = k == 0 ? kWriteFirst : k + 1 == w.size() ? kWriteLast : kWriteMiddle;
    EXPECT_EQ(int(to_u64(r[3])), want) << "frame " << r[0];
    const char* label = want == kWriteFirst ? "RC RDMA Write First" : want == kWriteLast ? "RC RDMA Write Last" : "RC RDMA Write Middle";
    EXPECT_NE(r[12].find(label), std::string::npos) << "frame " << r[0] << " Info: " << r[12];
    EXPECT_EQ(to_u64(r[5]), (start_psn + k) & 0xFFFFFF) << "frame " << r[0];
    EXPECT_EQ(to_u64(r[4]), rep_qpn) << "frame " << r[0] << ": destination QP = ConnectReply LocalQPN";
    EXPECT_EQ(r[1], "10.0.0.1");
    EXPECT_EQ(r[2], "10.0.0.2");
    if (k == 0) {
      EXPECT_EQ(to_u64(r[13]), kWriteBytes) << "RETH DMA length";
    }
    if (k + 1 == w.size()) {
      EXPECT_EQ(r[6], "1") << "AckReq on the last packet";
    }
    if (k > 0) {
      EXPECT_EQ(w[k], w[k - 1] + 1) << "WRITE packets are consecutive frames";
    }
  }

  // The ACK: B->A, to the QP A announced in its ConnectRequest, PSN = the
  // last WRITE PSN, AETH syndrome "ACK" (bits 6:5 = 00).
  std::vector<size_t> acks;
  for (size_t i = 0; i < rows.size(); ++i)
    if (to_u64(rows[i][3]) == uint64_t(kAck)) acks.push_back(i);
  ASSERT_EQ(acks.size(), 1u);
  const auto& ack = rows[acks[0]];
  EXPECT_GT(acks[0], w.back());
  EXPECT_EQ(ack[1], "10.0.0.2");
  EXPECT_EQ(to_u64(ack[4]), req_qpn);
  EXPECT_EQ(to_u64(ack[5]), (start_psn + w.size() - 1) & 0xFFFFFF);
  ASSERT_FALSE(ack[14].empty());
  EXPECT_EQ((to_u64(ack[14]) >> 5) & 3, 0u) << "AETH syndrome " << ack[14] << " is not an ACK";
  EXPECT_NE(ack[12].find("RC Acknowledge"), std::string::npos) << ack[12];
  EXPECT_EQ(rows.size(), 3 + w.size() + 1) << "nothing else on the wire";
}

// The WRITE's payload, as tshark extracts it, is the scenario's fill: the
// README's "random" pattern with seed 7 (std::mt19937_64, each draw 8 bytes
// least significant first), generated here independently.
TEST_F(SystemPcap, WritePayloadIsTheFilledPattern) {
  int st = 0;
  auto rows = tshark_fields(dir_ / "out.pcap", {"infiniband.bth.opcode", "data.data"}, &st);
  ASSERT_EQ(st, 0);
  std::string hex;
  for (const auto& r : rows) {
    const int op = int(to_u64(r[0]));
    if (op >= kWriteFirst && op <= kWriteLast) hex += r[1];
  }
  hex.erase(std::remove(hex.begin(), hex.end(), ':'), hex.end());
  ASSERT_EQ(hex.size(), 2 * kWriteBytes);
  std::mt19937_64 g(7);
  uint64_t word = 0;
  for (size_t k = 0; k < kWriteBytes; ++k) {
    if (k % 8 == 0) word = g();
    const unsigned want = unsigned((word >> (8 * (k % 8))) & 0xFF);
    const unsigned got = unsigned(std::stoul(hex.substr(2 * k, 2), nullptr, 16));
    ASSERT_EQ(got, want) << "payload byte " << k;
  }
}

// Per-tap files: A's transmit tap equals B's receive tap frame by frame,
// B receives each frame exactly the link delay later, likewise B->A, and the
// merged file is the union of both transmit taps in time order.
TEST_F(SystemPcap, TapsAreConsistent) {
  using ernic::PcapFrame;
  using ernic::PcapReader;
  auto rd = [&](const char* name) { return PcapReader::read_all((dir_ / name).string()); };
  const auto a_tx = rd("out.A-tx.pcap"), a_rx = rd("out.A-rx.pcap");
  const auto b_tx = rd("out.B-tx.pcap"), b_rx = rd("out.B-rx.pcap");
  const auto wire = rd("out.pcap");
  EXPECT_EQ(a_tx.size(), 18u);  // REQ, RTU, 16 WRITE packets
  EXPECT_EQ(b_tx.size(), 2u);   // REP, ACK

  const uint64_t delay_ns = default_link_delay_ns();
  EXPECT_EQ(delay_ns, 100u);
  auto same_delayed = [delay_ns](const std::vector<PcapFrame>& tx, const std::vector<PcapFrame>& rx, const char* what) {
    ASSERT_EQ(tx.size(), rx.size()) << what;
    for (size_t i = 0; i < tx.size(); ++i) {
      EXPECT_EQ(tx[i].data, rx[i].data) << what << " frame " << i + 1;
      EXPECT_EQ(tx[i].orig_len, rx[i].orig_len) << what << " frame " << i + 1;
      EXPECT_EQ(tx[i].orig_len, tx[i].data.size()) << what << " frame " << i + 1 << " truncated";
      EXPECT_EQ(rx[i].time_ns, tx[i].time_ns + delay_ns) << what << " frame " << i + 1;
    }
  };
  same_delayed(a_tx, b_rx, "A-tx vs B-rx");
  same_delayed(b_tx, a_rx, "B-tx vs A-rx");

  ASSERT_EQ(wire.size(), a_tx.size() + b_tx.size());
  for (size_t i = 1; i < wire.size(); ++i)
    EXPECT_LE(wire[i - 1].time_ns, wire[i].time_ns) << "merged file out of time order at frame " << i + 1;
  using Key = std::tuple<uint64_t, std::vector<uint8_t>>;
  std::vector<Key> want, got;
  for (const auto* v : {&a_tx, &b_tx})
    for (const auto& fr : *v) want.emplace_back(fr.time_ns, fr.data);
  for (const auto& fr : wire) got.emplace_back(fr.time_ns, fr.data);
  std::sort(want.begin(), want.end());
  std::vector<Key> got_sorted = got;
  std::sort(got_sorted.begin(), got_sorted.end());
  EXPECT_TRUE(got_sorted == want) << "merged file is not the union of the tx taps";
}

}  // namespace
