// The WQE processor (model/ernic/wqe_proc.h) driven alone through
// execute(): WQEs of every kind and the size edges 0, 1, PMTU-1, PMTU,
// PMTU+1, 2*PMTU, 2*PMTU+1 at every PMTU (256..4096, QPCONFi[10:8] codes
// 0..4), each packet taken at the TX datapath and decoded from its wire
// bytes. Expected values from IBTA (the RC opcode table, PMTU segmentation,
// a READ request using ceil(L / PMTU) PSNs, 24-bit PSNs wrapping) and
// PG332 (WQE format, SDATA inline SEND of up to 16 bytes, OUTIOPKTCNT,
// LSTOUTPKT, STATSSNi), written out by hand below; AckReq on the last
// packet of a message is the model's assumption A-ERNIC-2.
//
// Neighbours: the response handler (the WQE processor arms its local ACK
// timer; TIMEOUTCONFi[5:0] = 0 here, so no timer runs) and the write-retry
// buffers (not configured: DATBUFSZ = 0). The register layout (3.1 / 4.x)
// changes nothing the WQE processor reads, so it is not a parameter here.
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <tuple>

#include "tb/ernic/block_bench.h"

using namespace ernic;
using namespace ernic::bench;
using pg332::WqeOpcode;

namespace {

constexpr uint32_t kQp = 2;
constexpr uint32_t kStartPsn = 0xFFFFF8;  // 11 PSNs a run: they wrap past 0xFFFFFF within it

// RC opcodes (IBTA, spec section 9), by hand.
constexpr uint8_t SEND_FIRST = 0x00, SEND_MIDDLE = 0x01, SEND_LAST = 0x02, SEND_LAST_IMM = 0x03, SEND_ONLY = 0x04,
                  SEND_ONLY_IMM = 0x05, WRITE_FIRST = 0x06, WRITE_MIDDLE = 0x07, WRITE_LAST = 0x08,
                  WRITE_LAST_IMM = 0x09, WRITE_ONLY = 0x0A, WRITE_ONLY_IMM = 0x0B, READ_REQUEST = 0x0C,
                  SEND_LAST_INV = 0x16, SEND_ONLY_INV = 0x17;

struct OpKind {
  WqeOpcode op;
  const char* name;
  bool write, send, read, imm, inv;
  // BTH opcodes: only, first, middle, last.
  uint8_t only, first, middle, last;
};
const OpKind kOps[] = {
    {WqeOpcode::write, "Write", true, false, false, false, false, WRITE_ONLY, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST},
    {WqeOpcode::write_imm, "WriteImm", true, false, false, true, false, WRITE_ONLY_IMM, WRITE_FIRST, WRITE_MIDDLE,
     WRITE_LAST_IMM},
    {WqeOpcode::send, "Send", false, true, false, false, false, SEND_ONLY, SEND_FIRST, SEND_MIDDLE, SEND_LAST},
    {WqeOpcode::send_imm, "SendImm", false, true, false, true, false, SEND_ONLY_IMM, SEND_FIRST, SEND_MIDDLE,
     SEND_LAST_IMM},
    {WqeOpcode::send_inv, "SendInv", false, true, false, false, true, SEND_ONLY_INV, SEND_FIRST, SEND_MIDDLE,
     SEND_LAST_INV},
    {WqeOpcode::read, "Read", false, false, true, false, false, READ_REQUEST, 0, 0, 0},
};

uint32_t psn(uint64_t v) { return uint32_t(v & 0xFFFFFF); }

// (PMTU code, opcode index)
class WqeProcSegmentation : public testing::TestWithParam<std::tuple<uint32_t, size_t>> {};

TEST_P(WqeProcSegmentation, PacketsOpcodesPsnsHeadersPayload) {
  const uint32_t code = std::get<0>(GetParam());
  const OpKind& k = kOps[std::get<1>(GetParam())];
  const uint32_t P = 256u << code;  // PG332 QPCONFi[10:8]: 0 = 256 ... 4 = 4096
  const uint32_t sizes[] = {0, 1, P - 1, P, P + 1, 2 * P, 2 * P + 1};
  BenchOptions o;
  run_bench(o, [&](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(kQp, code, kStartPsn);
    uint32_t next_psn = kStartPsn, ssn = 0, io_lo = 0, io_hi = 0;
    uint64_t laddr = kPayload;
    for (size_t i = 0; i < std::size(sizes); ++i) {
      const uint32_t L = sizes[i];
      SCOPED_TRACE("PMTU " + std::to_string(P) + ", " + k.name + " of " + std::to_string(L) + " bytes");
      pg332::Wqe w;
      w.wrid = uint16_t(0x100 + i);
      w.laddr = laddr;
      w.length = L;
      w.opcode = uint8_t(k.op);
      w.roffset = 0x0000123456789A00ull + i * 0x10000;
      w.rtag = 0xABCD0100u + uint32_t(i);
      for (uint32_t j = 0; j < 16; ++j) w.sdata[j] = uint8_t(0xE0 + j);  // differs from the LADDR pattern
      w.immdt = 0xC0FFEE00u + uint32_t(i);
      const roce::Bytes data = b.fill(laddr, L, uint8_t(0x11 * (i + 1)));
      laddr += (L + 4095) / 4096 * 4096 + 4096;
      const size_t before = b.dp.frames.size();
      b.wqe_proc.execute(b.qp(kQp), w, uint32_t(i), {}, b.now());
      b.wait_ns(1000);  // the TX thread hands the last frames over
      const auto& fr = b.dp.frames;

      // Packets: a READ is one request; WRITE / SEND max(1, ceil(L / PMTU)).
      const uint32_t npsn = L == 0 ? 1 : (L + P - 1) / P;
      const uint32_t npkts = k.read ? 1 : npsn;
      ASSERT_EQ(fr.size() - before, npkts);
      const bool inline_send = k.send && L <= 16;  // PG332 Table 2-1 SDATA
      for (uint32_t p = 0; p < npkts; ++p) {
        SCOPED_TRACE("packet " + std::to_string(p));
        const TxFrame& t = fr[before + p];
        ASSERT_TRUE(t.decoded);
        const roce::Frame& f = t.f;
        const bool first = p == 0, last = p + 1 == npkts;
        const uint8_t want_op = npkts == 1 ? k.only : first ? k.first : last ? k.last : k.middle;
        EXPECT_EQ(f.bth.opcode, want_op);
        EXPECT_EQ(f.bth.psn, psn(next_psn + p));
        EXPECT_EQ(f.bth.ack_req, last);
        EXPECT_EQ(f.bth.dest_qp, kRemoteQpnBase + kQp);
        EXPECT_EQ(f.bth.pkey, 0xFFFF);
        EXPECT_EQ(f.bth.tver, 0);
        EXPECT_FALSE(f.ipv6);
        EXPECT_EQ(f.ip4.src.v, kLocalIp);
        EXPECT_EQ(f.ip4.dst.v, kRemoteIp);
        EXPECT_EQ(f.ip4.ttl, 64);
        EXPECT_EQ(f.udp.dport, 4791);
        EXPECT_EQ(f.udp.sport, kUdpSport);
        // Extension headers: RETH (16 B) on a READ and on the first WRITE
        // packet only; ImmDt (4 B) / IETH (4 B) on the last packet of the
        // _IMM / _INV forms only.
        const bool want_reth = k.read || (k.write && first);
        const bool want_imm = k.imm && last, want_ieth = k.inv && last;
        EXPECT_EQ(t.desc.ext_len, (want_reth ? 16 : 0) + (want_imm ? 4 : 0) + (want_ieth ? 4 : 0));
        ASSERT_EQ(f.reth.has_value(), want_reth);
        if (want_reth) {
          EXPECT_EQ(f.reth->va, w.roffset);
          EXPECT_EQ(f.reth->rkey, w.rtag);
          EXPECT_EQ(f.reth->dma_len, L);
        }
        ASSERT_EQ(f.immdt.has_value(), want_imm);
        if (want_imm) {
          EXPECT_EQ(*f.immdt, w.immdt);
        }
        ASSERT_EQ(f.ieth.has_value(), want_ieth);
        if (want_ieth) {
          EXPECT_EQ(*f.ieth, w.rtag);
        }
        EXPECT_FALSE(f.aeth.has_value());
        // Payload: PMTU bytes on every packet but the last, the rest on the
        // last; the bytes of host memory at LADDR + p * PMTU (inline SEND:
        // the WQE's SDATA); a READ request carries none.
        if (k.read) {
          EXPECT_TRUE(f.payload.empty());
          continue;
        }
        const uint32_t off = p * P, want_len = last ? L - off : P;
        ASSERT_EQ(f.payload.size(), want_len);
        if (inline_send)
          EXPECT_EQ(f.payload, roce::Bytes(w.sdata.begin(), w.sdata.begin() + L));
        else
          EXPECT_EQ(f.payload, roce::Bytes(data.begin() + off, data.begin() + off + want_len));
      }
      // Registers: SQPSNi past the PSNs used (a READ uses ceil(L/PMTU), at
      // least one), STATSSNi one more, OUTIOPKTCNT ([15:0] SENDs, [31:16]
      // READ / WRITE requests), LSTOUTPKT = opcode | QP << 8 | PSN[15:0] << 16
      // of the last packet.
      next_psn = psn(next_psn + npsn);
      ++ssn;
      (k.send ? io_lo : io_hi) += npkts;
      EXPECT_EQ(b.Q(kQp, R::q::SQPSNi), next_psn);
      EXPECT_EQ(b.Q(kQp, R::q::STATSSNi), ssn);
      EXPECT_EQ(b.G(R::g::OUTIOPKTCNT), io_hi << 16 | io_lo);
      const uint32_t last_psn = psn(next_psn - (k.read ? npsn : 1));
      const uint8_t last_op = npkts == 1 ? k.only : k.last;
      EXPECT_EQ(b.G(R::g::LSTOUTPKT), uint32_t(last_op) | kQp << 8 | (last_psn & 0xFFFF) << 16);
      // The outstanding queue: this WQE, its PSN span.
      ASSERT_FALSE(b.qp(kQp).req.osq.empty());
      const qp::Outstanding& e = b.qp(kQp).req.osq.back();
      EXPECT_EQ(e.wrid, w.wrid);
      EXPECT_EQ(e.first_psn, psn(next_psn - npsn));
      EXPECT_EQ(e.last_psn, psn(next_psn - 1));
      EXPECT_EQ(e.is_read, k.read);
    }
    EXPECT_EQ(b.qp(kQp).req.osq.size(), std::size(sizes));
    EXPECT_EQ(b.G(R::g::INTSTS), 0u);  // nothing illegal, nothing fatal
  });
}

INSTANTIATE_TEST_SUITE_P(AllPmtusAllOpcodes, WqeProcSegmentation,
                         testing::Combine(testing::Values(0u, 1u, 2u, 3u, 4u), testing::Range<size_t>(0, 6)),
                         [](const testing::TestParamInfo<std::tuple<uint32_t, size_t>>& i) {
                           return std::string(kOps[std::get<1>(i.param)].name) + "_Pmtu" +
                                  std::to_string(256u << std::get<0>(i.param));
                         });

// Inline SEND (PG332 Table 2-1, SDATA; A-ERNIC-21): 16 bytes travel in the
// WQE, no payload read on wqe_proc_top_m_axi; 17 bytes are read from LADDR
// (one read of 17 bytes there).
TEST(WqeProcInline, Send16FromSdataSend17FromLaddr) {
  BenchOptions o;
  o.log = true;
  run_bench(o, [](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(kQp, 0, 0x000100);
    for (uint32_t L : {16u, 17u}) {
      SCOPED_TRACE("SEND of " + std::to_string(L) + " bytes");
      pg332::Wqe w;
      w.wrid = uint16_t(L);
      w.opcode = uint8_t(WqeOpcode::send);
      w.laddr = kPayload + L * 0x1000;
      w.length = L;
      for (uint32_t j = 0; j < 16; ++j) w.sdata[j] = uint8_t(0xA0 + j);
      const roce::Bytes data = b.fill(w.laddr, L, 0x31);
      const size_t before = b.dp.frames.size();
      const size_t reads_before = b.dma_records("wqe_proc_top_m_axi").size();
      b.wqe_proc.execute(b.qp(kQp), w, 0, {}, b.now());
      b.wait_ns(1000);
      ASSERT_EQ(b.dp.frames.size(), before + 1);
      const roce::Frame& f = b.dp.frames.back().f;
      EXPECT_EQ(f.bth.opcode, SEND_ONLY);
      const auto reads = b.dma_records("wqe_proc_top_m_axi");
      if (L == 16) {
        EXPECT_EQ(f.payload, roce::Bytes(w.sdata.begin(), w.sdata.end()));
        EXPECT_EQ(reads.size(), reads_before);
      } else {
        EXPECT_EQ(f.payload, data);
        ASSERT_EQ(reads.size(), reads_before + 1);
        EXPECT_FALSE(reads.back().write);
        EXPECT_EQ(reads.back().addr, w.laddr);
        EXPECT_EQ(reads.back().len, 17u);
      }
    }
    EXPECT_EQ(b.G(R::g::OUTIOPKTCNT), 2u);  // two SENDs in [15:0]
  });
}

// An opcode outside PG332's list (0x07) is the illegal-opcode path:
// INTSTS[5], nothing sent, the PSN and SSN untouched.
TEST(WqeProcIllegal, ReservedOpcodeRaisesIntsts5) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(kQp, 2, 0x000500);
    pg332::Wqe w;
    w.opcode = 0x07;
    w.length = 64;
    w.laddr = kPayload;
    b.wqe_proc.execute(b.qp(kQp), w, 0, {}, b.now());
    b.wait_ns(1000);
    EXPECT_TRUE(b.dp.frames.empty());
    EXPECT_EQ(b.G(R::g::INTSTS), 1u << 5);
    EXPECT_TRUE(b.intr_line.read());  // INTEN has every bit
    EXPECT_EQ(b.Q(kQp, R::q::SQPSNi), 0x000500u);
    EXPECT_EQ(b.Q(kQp, R::q::STATSSNi), 0u);
    EXPECT_TRUE(b.qp(kQp).req.osq.empty());
  });
}

// A payload read outside host memory makes the QP fatal with code 0x05
// (PG332: raised by the WQE processor): STATQPi[0], the error-status queue
// entry QPN << 16 | 0x05, INTSTS[7]; the WQE completes with ERRFLAG.
TEST(WqeProcFatal, PayloadOutsideHostMemoryIsFatal05) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    b.setup_global(8);
    b.setup_qp(kQp, 0, 0x000010);
    pg332::Wqe w;
    w.wrid = 0x4242;
    w.opcode = uint8_t(WqeOpcode::write);
    w.laddr = kMemBytes + 0x1000;  // beyond the bench's 8 MiB
    w.length = 100;
    b.wqe_proc.execute(b.qp(kQp), w, 0, {}, b.now());
    b.wait_ns(2000);
    EXPECT_TRUE(b.dp.frames.empty());
    EXPECT_EQ(b.Q(kQp, R::q::STATQPi) & 1u, 1u);
    EXPECT_EQ(b.mem.read32(kErrQueue), kQp << 16 | 0x05u);
    EXPECT_EQ(b.mem.read32(kErrQueue + 4), 0u);
    EXPECT_EQ(b.G(R::g::IPKTERRQWPTR), 1u);
    EXPECT_NE(b.G(R::g::INTSTS) & (1u << 7), 0u);
    // CQE at CQBA + 0: WRID 0x4242, opcode 0x00 (WRITE), ERRFLAG 1.
    EXPECT_EQ(b.mem.read32(cq_base(kQp)), 0x01004242u);
    EXPECT_EQ(b.Q(kQp, R::q::CQHEADi), 1u);
  });
}

}  // namespace
