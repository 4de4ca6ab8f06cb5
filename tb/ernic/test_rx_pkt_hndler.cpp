// The RX packet handler (model/ernic/rx_pkt_hndler.h) driven through
// push(): RoCE frames built with the protocol library (roce::encode), turned
// into roce_rx's descriptor and payload by the reference roce_rx
// (seam::roce_rx_ref), each with one validation failure. Expected outcomes
// by hand from PG332 (Table 2-3 validation: the frame is dropped;
// INALLDRPPKTCNT [15:0] all incoming, [31:16] dropped; INTSTS[0]; with
// XRNICCONF[5] the error buffer gets the 32-bit syndrome then a copy of the
// header, ERRBUFWPTR counts; the syndrome's ICRC bit is 30, FCS bit 31, the
// other positions are the model's (A-ERNIC-18, model/datapath/seam.h)) and
// IBTA (a valid SEND_ONLY with AckReq is written to the RQ and ACKed). Also
// the responder's ACK generation by XRNICCONF[4:3] (00: on AckReq or
// timeout, 01: timeout only, 10: AckReq only; the timeout is the model's
// ack_timeout_ns, A-ERNIC-20).
//
// Neighbours: the response handler (an ACK's AETH is checked there) and the
// WQE processor's TX queue (the ACKs leave through it).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>

#include "tb/ernic/block_bench.h"

using namespace ernic;
using namespace ernic::bench;

namespace {

constexpr uint32_t kQp = 2;
constexpr uint32_t kExpected = 0x000500;  // the responder's expected PSN

roce::MacAddr mac(uint64_t v) {
  roce::MacAddr m;
  for (int i = 0; i < 6; ++i) m.b[i] = uint8_t(v >> (8 * (5 - i)));
  return m;
}

// A SEND_ONLY with AckReq from the QP's remote to this node, 64 bytes.
roce::Frame send_only(uint32_t psn, bool ack_req, uint8_t seed = 0x61, size_t len = 64) {
  roce::Frame f;
  f.eth.dst = mac(kLocalMac);
  f.eth.src = mac(kRemoteMac);
  f.ip4.src.v = kRemoteIp;
  f.ip4.dst.v = kLocalIp;
  f.ip4.flags = 0x2;  // DF
  f.udp.sport = 0xD00D;
  f.bth.opcode = 0x04;  // SEND_ONLY
  f.bth.dest_qp = kQp;
  f.bth.psn = psn;
  f.bth.ack_req = ack_req;
  f.payload.resize(len);
  for (size_t i = 0; i < len; ++i) f.payload[i] = uint8_t(seed + 3 * i);
  return f;
}

// One validation case: how the frame, its wire bytes or roce_rx's
// descriptor differ from a valid frame, and the syndrome expected.
struct RxCase {
  const char* name;
  std::function<void(roce::Frame&)> frame;
  std::function<void(roce::Bytes&)> wire;
  bool bad_fcs;
  std::function<void(seam::RxDesc&)> desc;
  uint32_t syndrome;  // 0: valid
};

// Syndrome bits: PG332 places ICRC at 30 and FCS at 31; the rest are the
// model's (A-ERNIC-18), written here as numbers.
const RxCase kCases[] = {
    {"Valid", nullptr, nullptr, false, nullptr, 0},
    {"MacDa", [](roce::Frame& f) { f.eth.dst = mac(0x02000000000C); }, nullptr, false, nullptr, 1u << 0},
    {"IpVersion", nullptr, nullptr, false, [](seam::RxDesc& d) { d.syndrome |= 1u << 1; }, 1u << 1},
    {"Ipv6FrameForIpv4Qp",
     [](roce::Frame& f) {
       f.ipv6 = true;  // to this node's IPv6 address (IPv6XADD1..4 = 0: ::) from the remote's
       f.ip6.dst = roce::Ipv6Addr{};
       f.ip6.src = roce::Ipv6Addr{};
     },
     nullptr, false, nullptr, 1u << 1},
    {"Ipv4Checksum", nullptr, [](roce::Bytes& w) { w[14 + 10] ^= 0x01; }, false, nullptr, 1u << 2},
    {"IpDa", [](roce::Frame& f) { f.ip4.dst.v = 0x0A000009; }, nullptr, false, nullptr, 1u << 3},
    {"Length", nullptr, nullptr, false, [](seam::RxDesc& d) { d.syndrome |= 1u << 4; }, 1u << 4},
    {"Tver", [](roce::Frame& f) { f.bth.tver = 1; }, nullptr, false, nullptr, 1u << 5},
    {"QpZero", [](roce::Frame& f) { f.bth.dest_qp = 0; }, nullptr, false, nullptr, 1u << 6},
    {"QpBeyondCNumQp", [](roce::Frame& f) { f.bth.dest_qp = 9; }, nullptr, false, nullptr, 1u << 6},
    {"QpBeyondEnabledCount", [](roce::Frame& f) { f.bth.dest_qp = 5; }, nullptr, false, nullptr, 1u << 6},
    {"QpDisabled", [](roce::Frame& f) { f.bth.dest_qp = 3; }, nullptr, false, nullptr, 1u << 6},
    {"SourceMac", [](roce::Frame& f) { f.eth.src = mac(0x02000000000D); }, nullptr, false, nullptr, 1u << 7},
    {"SourceIp", [](roce::Frame& f) { f.ip4.src.v = 0x0A000007; }, nullptr, false, nullptr, 1u << 7},
    {"Header", nullptr, nullptr, false, [](seam::RxDesc& d) { d.syndrome |= 1u << 8; }, 1u << 8},
    {"Ipv4NoDf", [](roce::Frame& f) { f.ip4.flags = 0; }, nullptr, false, nullptr, 1u << 9},
    {"Ipv4MoreFragments", [](roce::Frame& f) { f.ip4.flags = 0x3; }, nullptr, false, nullptr, 1u << 9},
    {"Ipv4FragmentOffset", [](roce::Frame& f) { f.ip4.frag_off = 8; }, nullptr, false, nullptr, 1u << 9},
    {"AethMalformed",
     [](roce::Frame& f) {
       f.bth.opcode = 0x11;  // ACKNOWLEDGE with a reserved AETH type (10)
       f.bth.ack_req = false;
       f.payload.clear();
       f.aeth = roce::Aeth{0x40, 0};
     },
     nullptr, false, nullptr, 1u << 10},
    {"Icrc", nullptr, [](roce::Bytes& w) { w.back() ^= 0x80; }, false, nullptr, 1u << 30},
    {"Fcs", nullptr, nullptr, true, nullptr, 1u << 31},
    {"MacDaAndTver",
     [](roce::Frame& f) {
       f.eth.dst = mac(0x02000000000C);
       f.bth.tver = 2;
     },
     nullptr, false, nullptr, 1u << 0 | 1u << 5},
};

class RxValidation : public testing::TestWithParam<std::tuple<size_t, bool>> {};

TEST_P(RxValidation, DroppedCountedLoggedOrTaken) {
  const RxCase& c = kCases[std::get<0>(GetParam())];
  const bool v4 = std::get<1>(GetParam());
  BenchOptions o;
  o.with_rx = true;
  o.cfg.layout = v4 ? R::kLayout4x : R::kLayout31;
  run_bench(o, [&c, v4](BlockBench& b) {
    // Four QPs enabled in the count (3.1: XRNICCONF[15:8], 4.x:
    // XRNIC_CONF_QP_EN[11:0]); QPs 2, 4 and 5 set up, QP 3 not.
    b.setup_global(4);
    b.setup_qp(2, 0, 0x000100, kExpected);
    b.setup_qp(4, 0, 0x000100, kExpected);
    b.setup_qp(5, 0, 0x000100, kExpected);
    roce::Frame f = send_only(kExpected, true);
    if (c.frame) c.frame(f);
    roce::Bytes wire = roce::encode(f);
    if (c.wire) c.wire(wire);
    seam::RxOutput rx = seam::roce_rx_ref(wire, c.bad_fcs);
    ASSERT_FALSE(rx.bypass);
    if (c.desc) c.desc(rx.desc);
    b.rx->push(rx.desc, rx.payload);
    b.wait_ns(3000);

    if (c.syndrome == 0) {
      // Taken: payload into RQ element 0, STATRQPIDBi 1 and its mirror,
      // INTSTS[6] and the RQ bank bit (QPCONFi[2]), LSTINPKT, LSTRQREQi,
      // and an ACK (AETH syndrome 0x1F: ACK, credits invalid) for the PSN,
      // MSN 1, to the QP's remote QP.
      EXPECT_EQ(b.G(R::g::INALLDRPPKTCNT), 1u);
      EXPECT_EQ(b.G(R::g::INTSTS), 1u << 6);
      EXPECT_EQ(b.bank(v4 ? 0x100190u : 0x20190u), 1u << kQp);  // RQINTSTS1, bit j = QP j
      EXPECT_EQ(b.mem.read(rq_base(kQp), 64), f.payload);
      EXPECT_EQ(b.Q(kQp, R::q::STATRQPIDBi), 1u);
      EXPECT_EQ(b.mem.read32(rq_db_addr(kQp)), 1u);
      EXPECT_EQ(b.G(R::g::LSTINPKT), 0x04u | kQp << 8 | (kExpected & 0xFFFF) << 16);
      EXPECT_EQ(b.Q(kQp, R::q::LSTRQREQi), 0x04000000u | kExpected);
      EXPECT_EQ(b.G(R::g::ERRBUFWPTR), 0u);
      ASSERT_EQ(b.dp.frames.size(), 1u);
      const roce::Frame& a = b.dp.frames[0].f;
      EXPECT_EQ(a.bth.opcode, 0x11);
      EXPECT_EQ(a.bth.psn, kExpected);
      EXPECT_EQ(a.bth.dest_qp, kRemoteQpnBase + kQp);
      ASSERT_TRUE(a.aeth.has_value());
      EXPECT_EQ(a.aeth->syndrome, 0x1F);
      EXPECT_EQ(a.aeth->msn, 1u);
      EXPECT_EQ(b.G(R::g::OUTAMPKTCNT), 1u);  // [15:0] ACKs sent
      return;
    }
    // Dropped: counted in both halves, INTSTS[0], nothing written, no answer.
    EXPECT_EQ(b.G(R::g::INALLDRPPKTCNT), 1u << 16 | 1u);
    EXPECT_EQ(b.G(R::g::INTSTS), 1u << 0);
    EXPECT_TRUE(b.intr_line.read());
    EXPECT_TRUE(b.dp.frames.empty());
    EXPECT_EQ(b.Q(kQp, R::q::STATRQPIDBi), 0u);
    EXPECT_EQ(b.mem.read(rq_base(kQp), 64), roce::Bytes(64, 0));
    EXPECT_EQ(b.Q(kQp, R::q::LSTRQREQi), 0x04000000u | (kExpected - 1));
    // LSTINPKT: a frame that failed validation never reached the QP's
    // handling; the malformed ACK passed it and was refused by the response
    // handler, so it is the last packet in.
    if (c.syndrome == 1u << 10)
      EXPECT_EQ(b.G(R::g::LSTINPKT), 0x11u | kQp << 8 | (kExpected & 0xFFFF) << 16);
    else
      EXPECT_EQ(b.G(R::g::LSTINPKT), 0u);
    // Error buffer entry 0 (ERRBUFSZ: 256-byte entries): the syndrome,
    // little-endian, then the frame's bytes from the Ethernet header to the
    // last extension header, then zeros.
    EXPECT_EQ(b.G(R::g::ERRBUFWPTR), 1u);
    const roce::Bytes e = b.mem.read(kErrBuf, kErrBufSize);
    EXPECT_EQ(uint32_t(e[0]) | uint32_t(e[1]) << 8 | uint32_t(e[2]) << 16 | uint32_t(e[3]) << 24, c.syndrome);
    const size_t hdr = 14 + (f.ipv6 ? 40 : 20) + 8 + 12 + (f.aeth ? 4 : 0);
    EXPECT_EQ(roce::Bytes(e.begin() + 4, e.begin() + 4 + hdr), roce::Bytes(wire.begin(), wire.begin() + hdr));
    EXPECT_EQ(roce::Bytes(e.begin() + 4 + hdr, e.end()), roce::Bytes(kErrBufSize - 4 - hdr, 0));
    EXPECT_EQ(b.mem.read32(kErrBuf + kErrBufSize), 0u);  // entry 1 untouched
  });
}

INSTANTIATE_TEST_SUITE_P(Cases, RxValidation,
                         testing::Combine(testing::Range<size_t>(0, std::size(kCases)), testing::Bool()),
                         [](const testing::TestParamInfo<std::tuple<size_t, bool>>& i) {
                           return std::string(kCases[std::get<0>(i.param)].name) +
                                  (std::get<1>(i.param) ? "_Layout4x" : "_Layout31");
                         });

// XRNICCONF[5] = 0: a validation failure is still dropped, counted and
// raises INTSTS[0], but nothing goes to the error buffer.
TEST(RxValidationNoErrBuf, CountedNotLogged) {
  BenchOptions o;
  o.with_rx = true;
  run_bench(o, [](BlockBench& b) {
    b.setup_global(4, /*xrnicconf_extra=*/0);
    b.setup_qp(kQp, 0, 0x000100, kExpected);
    roce::Frame f = send_only(kExpected, true);
    f.bth.tver = 3;
    const seam::RxOutput rx = seam::roce_rx_ref(roce::encode(f));
    b.rx->push(rx.desc, rx.payload);
    b.wait_ns(3000);
    EXPECT_EQ(b.G(R::g::INALLDRPPKTCNT), 0x00010001u);
    EXPECT_EQ(b.G(R::g::INTSTS), 1u);
    EXPECT_EQ(b.G(R::g::ERRBUFWPTR), 0u);
    EXPECT_EQ(b.mem.read32(kErrBuf), 0u);
  });
}

// XRNICCONF[0] = 0: ERNIC disabled takes nothing: dropped and counted, not
// a validation failure (no INTSTS[0], no error-buffer entry).
TEST(RxValidationDisabled, NicDisabledDropsEverything) {
  BenchOptions o;
  o.with_rx = true;
  run_bench(o, [](BlockBench& b) {
    b.setup_global(4);
    b.setup_qp(kQp, 0, 0x000100, kExpected);
    b.s.G(R::g::XRNICCONF) &= ~1u;
    const seam::RxOutput rx = seam::roce_rx_ref(roce::encode(send_only(kExpected, true)));
    b.rx->push(rx.desc, rx.payload);
    b.wait_ns(3000);
    EXPECT_EQ(b.G(R::g::INALLDRPPKTCNT), 0x00010001u);
    EXPECT_EQ(b.G(R::g::INTSTS), 0u);
    EXPECT_EQ(b.G(R::g::ERRBUFWPTR), 0u);
    EXPECT_TRUE(b.dp.frames.empty());
  });
}

// A duplicate READ_REQUEST (IBTA 9.9.4.2) is an earlier READ asked again:
// executed again from its own PSN when its responses stay below the
// expected PSN; one whose responses would reach the expected PSN (PSNs no
// request has used) is dropped, nothing sent (found by fuzz_rx, tb/fuzz).
TEST(RxReadDuplicate, ExecutedAgainOnlyBelowTheExpectedPsn) {
  BenchOptions o;
  o.with_rx = true;
  run_bench(o, [](BlockBench& b) {
    b.setup_global(4);
    b.setup_qp(kQp, 0, 0x000100, kExpected);  // PMTU 256, PD 0
    b.s.regs.m(1, R::m::VIRTADDRLSB) = 0x1000;  // MR 1: PD 0, key 0, remote read, 4 KiB at kPayload
    b.s.regs.m(1, R::m::BUFBASEADDRLSB) = uint32_t(kPayload);
    b.s.regs.m(1, R::m::WRRDBUFLEN) = 4096;
    auto read = [&b](uint32_t psn, uint32_t len) {
      roce::Frame f = send_only(psn, false);
      f.bth.opcode = 0x0C;  // RDMA_READ_REQUEST
      f.payload.clear();
      f.reth = roce::Reth{0x1000, 1u << 8, len};
      const seam::RxOutput rx = seam::roce_rx_ref(roce::encode(f));
      b.rx->push(rx.desc, rx.payload);
      b.wait_ns(3000);
    };
    read(kExpected, 512);  // responses kExpected, kExpected + 1
    ASSERT_EQ(b.dp.frames.size(), 2u);
    EXPECT_EQ(b.Q(kQp, R::q::LSTRQREQi) & 0xFFFFFF, kExpected + 1);
    read(kExpected + 1, 256);  // a duplicate of the second half: answered again
    ASSERT_EQ(b.dp.frames.size(), 3u);
    EXPECT_EQ(b.dp.frames[2].f.bth.opcode, 0x10);  // READ_RESPONSE_ONLY
    EXPECT_EQ(b.dp.frames[2].f.bth.psn, kExpected + 1);
    read(kExpected + 1, 512);  // would answer at kExpected + 2, the expected PSN: dropped
    EXPECT_EQ(b.dp.frames.size(), 3u);
    EXPECT_EQ(b.G(R::g::INALLDRPPKTCNT), 0x00010003u);
    EXPECT_EQ(b.Q(kQp, R::q::LSTRQREQi) & 0xFFFFFF, kExpected + 1);
    EXPECT_FALSE(b.s.fatal(kQp));
  });
}

// ------------------------------------------------------------ ACK modes

// Three SEND_ONLYs: PSN e without AckReq, e+1 with AckReq (right behind),
// then 30 us later e+2 without AckReq. The ACKs each mode sends (PSN, and
// when: "now" = within 1 us of the frame, "timeout" = ack_timeout_ns (10 us)
// after the first unacknowledged packet, within 1 us):
//   00: e+1 now; e+2 at timeout
//   01: e+1 at timeout (of packet e); e+2 at timeout
//   10: e+1 now; nothing for e+2
struct AckWant {
  uint32_t psn_off;
  uint32_t pkt;  // the frame (0, 1, 2) whose arrival the ACK is timed from
  bool timeout;
};
struct ModeCase {
  uint32_t mode;
  std::vector<AckWant> acks;
};

void PrintTo(const ModeCase& c, std::ostream* os) { *os << "XRNICCONF[4:3]=" << c.mode; }

class RxAckModes : public testing::TestWithParam<ModeCase> {};

TEST_P(RxAckModes, AckOnRequestOrTimeout) {
  const ModeCase c = GetParam();
  BenchOptions o;
  o.with_rx = true;
  run_bench(o, [&c](BlockBench& b) {
    b.setup_global(4, FLD::XRNICCONF_ERRBUF_EN.bit() | c.mode << 3);
    b.setup_qp(kQp, 0, 0x000100, kExpected);
    uint64_t t[3];
    auto push = [&b](const roce::Frame& f) {
      const seam::RxOutput rx = seam::roce_rx_ref(roce::encode(f));
      b.rx->push(rx.desc, rx.payload);
    };
    t[0] = t[1] = b.now();
    push(send_only(kExpected, false, 0x10, 32));
    push(send_only(kExpected + 1, true, 0x20, 32));
    b.wait_ns(30000);
    t[2] = b.now();
    push(send_only(kExpected + 2, false, 0x30, 32));
    b.wait_ns(30000);
    // All three were taken into the RQ whatever the mode.
    EXPECT_EQ(b.Q(kQp, R::q::STATRQPIDBi), 3u);
    EXPECT_EQ(b.G(R::g::INALLDRPPKTCNT), 3u);
    ASSERT_EQ(b.dp.frames.size(), c.acks.size());
    for (size_t i = 0; i < c.acks.size(); ++i) {
      SCOPED_TRACE("ACK " + std::to_string(i));
      const TxFrame& a = b.dp.frames[i];
      EXPECT_EQ(a.f.bth.opcode, 0x11);
      EXPECT_EQ(a.f.bth.psn, kExpected + c.acks[i].psn_off);
      ASSERT_TRUE(a.f.aeth.has_value());
      EXPECT_EQ(a.f.aeth->syndrome, 0x1F);
      const uint64_t from = t[c.acks[i].pkt] + (c.acks[i].timeout ? 10'000'000u : 0u);
      EXPECT_GE(a.t_ps, from);
      EXPECT_LT(a.t_ps, from + 1'000'000u);
    }
    EXPECT_EQ(b.G(R::g::OUTAMPKTCNT), c.acks.size());
  });
}

INSTANTIATE_TEST_SUITE_P(Modes, RxAckModes,
                         testing::Values(ModeCase{0, {{1, 1, false}, {2, 2, true}}},
                                         ModeCase{1, {{1, 0, true}, {2, 2, true}}},
                                         ModeCase{2, {{1, 1, false}}}),
                         [](const testing::TestParamInfo<ModeCase>& i) {
                           return "Mode" + std::to_string(i.param.mode);
                         });

}  // namespace
