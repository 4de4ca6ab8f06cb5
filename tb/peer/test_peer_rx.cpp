// tb/peer: PeerNode's receive checks (PeerNode::rx) on whole frames: a
// frame a correct RoCEv2 endpoint must drop is dropped and counted (no
// ACK or NAK, no memory written); a good one is taken. Each bad frame is
// a good WRITE with one header changed and its checksums made right again
// (encode fills the IPv4 checksum and the ICRC), as a sender that built it
// that way would: only the check under test fails. The peer's own CMAC
// carries its answers to a remote CMAC, whose deliveries are counted.
#include <gtest/gtest.h>

#include <systemc>

#include "model/peer/peer.h"
#include "model/roce/opcodes.h"

namespace ernic::peer::test {
namespace {

using sc_core::SC_PS;
using sc_core::sc_time;
namespace op = roce::op;

constexpr uint32_t kLen = 64;

PeerConfig peer_cfg() {
  PeerConfig c;
  c.node = "P";
  c.mac = *roce::MacAddr::parse("02:00:00:00:00:0b");
  c.ip = *roce::Ipv4Addr::parse("10.0.0.2");
  return c;
}

struct Bench : sc_core::sc_module {
  SC_HAS_PROCESS(Bench);
  ClockDomain core{"core", 200.0}, cmac_clk{"cmac", 322.265625};
  SimContext ctx;
  HostMemory mem{8u << 20};
  Cmac pc, rc;  // the peer's MAC, the remote's
  Wire pr, rp;
  PeerNode peer;
  PeerMr rw;
  std::vector<FrameBytes> at_remote;  // what the peer sent
  std::function<void(Bench&)> body;
  bool done = false;
  explicit Bench(std::function<void(Bench&)> f)
      : sc_module("bench"),
        pc("pc", cmac_clk, core, ctx, "top.P.cmac", LinkParams{}),
        rc("rc", cmac_clk, core, ctx, "top.R.cmac", LinkParams{}),
        pr("pr", 100000, 100.0, 1), rp("rp", 100000, 100.0, 2),
        peer("peer", peer_cfg(), mem, pc, ctx, "top.P"), body(std::move(f)) {
    pc.wire_out = &pr, pr.set_dst(&rc);
    rc.wire_out = &rp, rp.set_dst(&pc);
    rc.rx_sink = [this](FrameBytes b) { at_remote.push_back(std::move(b)); };
    rw = *peer.mrs().add("rw", 4096, true, true, nullptr);
    PeerQpParams p;
    p.qpn = 2;
    p.remote_qpn = 0x17;
    p.epsn = 0x100;
    p.remote_mac = *roce::MacAddr::parse("02:00:00:00:00:0a");
    p.local_ip = peer_cfg().ip;
    p.remote_ip = *roce::Ipv4Addr::parse("10.0.0.1");
    p.rq_depth = 4;
    EXPECT_NE(peer.create_qp(p, nullptr), nullptr);
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    done = true;
  }
  // A WRITE_ONLY of kLen bytes (0x5A) to rw with AckReq, from the QP's remote.
  roce::Frame write() const {
    roce::Frame f;
    f.eth.src = *roce::MacAddr::parse("02:00:00:00:00:0a");
    f.eth.dst = peer.config().mac;
    f.ip4.src = *roce::Ipv4Addr::parse("10.0.0.1");
    f.ip4.dst = peer.config().ip;
    f.bth.opcode = op::RC_WRITE_ONLY;
    f.bth.dest_qp = 2;
    f.bth.psn = 0x100;
    f.bth.ack_req = true;
    f.reth = roce::Reth{rw.va, rw.rkey, kLen};
    f.payload.assign(kLen, 0x5A);
    return f;
  }
  // Hands the frame to the peer as its MAC does and lets 5 us pass.
  void feed(FrameBytes b) {
    peer.rx(std::move(b));
    sc_core::wait(sc_time(5e6, SC_PS));
  }
  bool written() const { return mem.read(rw.pa, 1)[0] == 0x5A; }
};

void run_bench(std::function<void(Bench&)> body) {
  sc_core::sc_set_time_resolution(1, SC_PS);
  Bench b(std::move(body));
  sc_core::sc_start(sc_time(20e6, SC_PS));
  ASSERT_TRUE(b.done);
}

// Drops the frame `bad` makes: nothing sent, nothing written, counted in
// the counter `which` picks (once), the QP's ePSN unchanged; then the good
// WRITE is still taken (the connection is not harmed).
void expect_dropped(const std::function<FrameBytes(const Bench&)>& bad,
                    uint64_t PeerStats::*which) {
  run_bench([&](Bench& b) {
    b.feed(bad(b));
    EXPECT_TRUE(b.at_remote.empty());
    EXPECT_FALSE(b.written());
    EXPECT_EQ(b.peer.stats().*which, 1u);
    EXPECT_EQ(b.peer.stats().frames_out, 0u);
    EXPECT_EQ(b.peer.qps().at(2).epsn, 0x100u);
    b.feed(roce::encode(b.write()));
    EXPECT_EQ(b.at_remote.size(), 1u);
    EXPECT_TRUE(b.written());
    EXPECT_EQ(b.peer.stats().*which, 1u);
  });
}

}  // namespace

TEST(PeerRx, GoodWriteIsWrittenAndAcked) {
  run_bench([](Bench& b) {
    b.feed(roce::encode(b.write()));
    ASSERT_EQ(b.at_remote.size(), 1u);
    const auto a = roce::decode(b.at_remote[0]);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->bth.opcode, op::RC_ACK);
    EXPECT_EQ(a->bth.psn, 0x100u);
    EXPECT_TRUE(b.written());
    const PeerStats& s = b.peer.stats();
    EXPECT_EQ(s.frames_in, 1u);
    EXPECT_EQ(s.dropped_decode + s.dropped_icrc + s.dropped_address + s.dropped_no_qp, 0u);
  });
}

// IBTA 9.6.1.1 (the BTH's TVer, 9.2): a packet whose transport header
// version is not 0 is silently dropped.
TEST(PeerRx, TverNotZeroIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.bth.tver = 1;
    return roce::encode(f);
  }, &PeerStats::dropped_decode);
}

// RoCEv2 (IBTA annex A17.4) packets are never fragmented: an IPv4
// fragment, More Fragments set, is not a whole packet.
TEST(PeerRx, Ipv4MoreFragmentsIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.ip4.flags = 0x1;  // MF, no DF (rx_validation_drops' flags 001)
    return roce::encode(f);
  }, &PeerStats::dropped_decode);
}

// The same for a later fragment: a non-zero fragment offset.
TEST(PeerRx, Ipv4FragmentOffsetIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.ip4.frag_off = 0x10;
    return roce::encode(f);
  }, &PeerStats::dropped_decode);
}

// RFC 791 (RoCEv2 rides on IPv4, annex A17): a header whose checksum is
// wrong is discarded. The ICRC does not cover the checksum (icrc.h), so it
// stays right.
TEST(PeerRx, Ipv4HeaderChecksumErrorIsDropped) {
  expect_dropped([](const Bench& b) {
    FrameBytes w = roce::encode(b.write());
    w[roce::kEthHdrLen + 11] ^= 0x01;
    return w;
  }, &PeerStats::dropped_decode);
}

// IBTA 9.2 / annex A17.3.3: a packet whose ICRC is wrong is dropped.
TEST(PeerRx, BadIcrcIsDropped) {
  expect_dropped([](const Bench& b) {
    FrameBytes w = roce::encode(b.write());
    w.back() ^= 0x01;
    return w;
  }, &PeerStats::dropped_icrc);
}

// The UDP length disagreeing with the IP length (rx_validation_drops'
// length case): not a well-formed packet.
TEST(PeerRx, UdpLengthMismatchIsDropped) {
  expect_dropped([](const Bench& b) {
    FrameBytes w = roce::encode(b.write());
    w[roce::kEthHdrLen + roce::kIpv4HdrLen + 5] ^= 0x01;
    return w;
  }, &PeerStats::dropped_decode);
}

// IBTA 9.6.1.5 (RC: the packet's source must be the QP's remote; in
// RoCEv2 the SGID is the IP source, annex A17.4): another source IP for
// the QP is dropped.
TEST(PeerRx, OtherSourceIpIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.ip4.src.v ^= 1;
    return roce::encode(f);
  }, &PeerStats::dropped_address);
}

// To another MAC or IP (rx_validation_drops' MAC DA and IP DA cases), to a
// QPN with no QP (its QP unsupported / disabled cases).
TEST(PeerRx, OtherDestinationMacIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.eth.dst.b[5] ^= 1;
    return roce::encode(f);
  }, &PeerStats::dropped_address);
}

TEST(PeerRx, OtherDestinationIpIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.ip4.dst.v ^= 1;
    return roce::encode(f);
  }, &PeerStats::dropped_address);
}

TEST(PeerRx, NoSuchQpIsDropped) {
  expect_dropped([](const Bench& b) {
    roce::Frame f = b.write();
    f.bth.dest_qp = 0x7F;
    return roce::encode(f);
  }, &PeerStats::dropped_no_qp);
}

// The source MAC is not checked: RoCEv2 is routed (annex A17), the MAC is
// the last hop's; the IP source is the connection's.
TEST(PeerRx, OtherSourceMacIsTaken) {
  run_bench([](Bench& b) {
    roce::Frame f = b.write();
    f.eth.src.b[5] ^= 1;
    b.feed(roce::encode(f));
    EXPECT_EQ(b.at_remote.size(), 1u);
    EXPECT_TRUE(b.written());
  });
}

}  // namespace ernic::peer::test
