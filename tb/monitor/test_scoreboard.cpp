// tb/monitor: the shadow-memory scoreboard (model/monitor/scoreboard) fed
// by hand: two nodes' memories are plain byte vectors, the "NIC" is the test
// itself, which moves bytes (or fails to) the way each case needs, and the
// scoreboard must say what is wrong, where, and which operation defined it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "model/monitor/scoreboard.h"

namespace {

using ernic::monitor::SbOpcode;
using ernic::monitor::Scoreboard;

constexpr uint64_t kMem = 1 << 20;
constexpr uint64_t kGuard = 64;
constexpr uint64_t kSrc = 0x10000, kDst = 0x20000, kLen = 4096;
constexpr uint64_t kVa = 0x7F0000000000ull;
constexpr uint32_t kRkeySrc = 0x0011, kRkeyDst = 0x0122;

uint8_t canary(uint64_t i) { return uint8_t(0xA5 ^ (i * 0x1D)); }

bool has(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}
std::string all(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& s : v) o += s + "\n";
  return o;
}

// Node A with MR 'src' (4 KiB at 0x10000), node B with MR 'dst' (4 KiB at
// 0x20000), guards around both, one RC QP each (QP2, RQ of 4 x 256 bytes),
// connected to each other.
struct Fixture : ::testing::Test {
  std::vector<uint8_t> a = std::vector<uint8_t>(kMem), b = std::vector<uint8_t>(kMem);
  Scoreboard sb;
  int qa = -1, qb = -1;
  static constexpr uint64_t kRqA = 0x40000, kRqB = 0x40000;

  static Scoreboard::Reader reader(std::vector<uint8_t>& m) {
    return [&m](uint64_t pa, uint64_t len) -> const uint8_t* { return pa + len <= m.size() ? m.data() + pa : nullptr; };
  }
  void SetUp() override {
    for (auto* m : {&a, &b})
      for (uint64_t base : {kSrc, kDst})
        for (uint64_t k = 0; k < kGuard; ++k) (*m)[base - kGuard + k] = (*m)[base + kLen + k] = canary(k);
    sb.add_node("A", reader(a));
    sb.add_node("B", reader(b));
    sb.register_mr("A", "src", kSrc, kLen, kVa + kSrc, kRkeySrc, kSrc - kGuard, kSrc + kLen, kGuard, "test:1");
    sb.register_mr("B", "dst", kDst, kLen, kVa + kDst, kRkeyDst, kDst - kGuard, kDst + kLen, kGuard, "test:2");
    qa = sb.add_qp("A", 2, kRqA, 4, 256);
    qb = sb.add_qp("B", 2, kRqB, 4, 256);
    sb.pair_qps(qa, qb);
    // The host fills A's source with incrementing bytes.
    std::vector<uint8_t> fill(kLen);
    for (uint64_t k = 0; k < kLen; ++k) fill[k] = uint8_t(k * 7 + 3);
    std::memcpy(&a[kSrc], fill.data(), kLen);
    sb.host_write("A", kSrc, fill.data(), kLen, "fill at test:3");
  }
  void post_write(uint16_t wr_id, uint64_t loff, uint64_t roff, uint64_t len, SbOpcode op = SbOpcode::write) {
    sb.post({qa, op, wr_id, kSrc + loff, len, kVa + kDst + roff, kRkeyDst, "post at test:10"});
  }
  // What a correct NIC does for that WRITE.
  void nic_write(uint64_t loff, uint64_t roff, uint64_t len) { std::memcpy(&b[kDst + roff], &a[kSrc + loff], len); }
};

TEST_F(Fixture, CorrectWriteAndReadPass) {
  post_write(1, 0, 0, 1024);
  nic_write(0, 0, 1024);
  EXPECT_TRUE(sb.complete(qa, 1, SbOpcode::write, false, "at 1 us").empty());
  // READ back 512 bytes of B's MR into A's MR at offset 2048.
  sb.post({qa, SbOpcode::read, 2, kSrc + 2048, 512, kVa + kDst + 256, kRkeyDst, "post at test:11"});
  std::memcpy(&a[kSrc + 2048], &b[kDst + 256], 512);
  EXPECT_TRUE(sb.complete(qa, 2, SbOpcode::read, false, "at 2 us").empty());
  const auto end = sb.check_all();
  EXPECT_TRUE(end.empty()) << all(end);
  EXPECT_EQ(sb.operations_tracked(), 2u);
  EXPECT_EQ(sb.operations_completed(), 2u);
  EXPECT_GE(sb.bytes_checked(), 2 * kLen);
  EXPECT_EQ(sb.mismatches(), 0u);
}

TEST_F(Fixture, FlippedByteIsCaughtAtCompletion) {
  post_write(7, 0, 0, 1024);
  nic_write(0, 0, 1024);
  b[kDst + 100] ^= 0x10;  // the NIC got one byte wrong
  const auto errs = sb.complete(qa, 7, SbOpcode::write, false, "at 1 us");
  ASSERT_EQ(errs.size(), 1u) << all(errs);
  EXPECT_TRUE(has(errs, "node B MR 'dst' offset 100 (address 0x20064)")) << all(errs);
  EXPECT_TRUE(has(errs, "expected 0xbf, found 0xaf")) << all(errs);  // byte 100 of the fill: 100 * 7 + 3
  EXPECT_TRUE(has(errs, "WRITE wr_id 7 of 1024 bytes on A QP2 (post at test:10)")) << all(errs);
  // Reported once, not again at the end.
  EXPECT_TRUE(sb.check_all().empty());
}

TEST_F(Fixture, WrongOffsetWriteIsCaught) {
  post_write(3, 0, 512, 256);
  nic_write(0, 512 + 64, 256);  // landed 64 bytes too far
  const auto errs = sb.complete(qa, 3, SbOpcode::write, false, "at 1 us");
  // Where it should have landed, the first 64 bytes are still the old zeros.
  EXPECT_TRUE(has(errs, "node B MR 'dst' offset 512 ")) << all(errs);
  EXPECT_TRUE(has(errs, "expected 0x03, found 0x00")) << all(errs);
  // Where it did land beyond the target range, the end-of-run check sees it.
  const auto end = sb.check_all();
  EXPECT_TRUE(has(end, "node B MR 'dst' offset 768 ")) << all(end);
  EXPECT_TRUE(has(end, "its contents at register_mr (test:2)")) << all(end);
}

TEST_F(Fixture, ErrorCompletionLeavesTargetUndefinedButNotCanaries) {
  post_write(4, 0, 0, 2048);
  nic_write(0, 0, 700);  // partly written before the QP failed
  EXPECT_TRUE(sb.complete(qa, 4, SbOpcode::write, true, "at 1 us").empty());
  EXPECT_TRUE(sb.check_all().empty());
  // A canary is not part of the undefined range.
  post_write(5, 0, kLen - 64, 64);
  b[kDst + kLen + 2] ^= 1;
  const auto errs = sb.complete(qa, 5, SbOpcode::write, true, "at 2 us");
  EXPECT_TRUE(has(errs, "node B canary after MR 'dst' offset 2")) << all(errs);
}

TEST_F(Fixture, WriteAfterAnErrorIsCaught) {
  post_write(1, 0, 0, 256);
  EXPECT_TRUE(sb.complete(qa, 1, SbOpcode::write, true, "at 1 us").empty());  // nothing written: fine
  // Later the NIC writes a range that nothing targeted.
  post_write(2, 0, 1024, 256);
  nic_write(0, 1024, 256);
  EXPECT_TRUE(sb.complete(qa, 2, SbOpcode::write, false, "at 2 us").empty());
  b[kDst + 3000] = 0xEE;  // a stray write from a dead QP, say
  const auto end = sb.check_all();
  EXPECT_TRUE(has(end, "node B MR 'dst' offset 3000 ")) << all(end);
  EXPECT_TRUE(has(end, "found 0xee")) << all(end);
}

TEST_F(Fixture, DamagedCanaryIsCaught) {
  a[kSrc - kGuard + 10] = 0;  // before 'src'
  post_write(1, 0, 0, 64);
  nic_write(0, 0, 64);
  const auto errs = sb.complete(qa, 1, SbOpcode::write, false, "at 1 us");
  EXPECT_TRUE(has(errs, "node A canary before MR 'src' offset 10")) << all(errs);
  EXPECT_TRUE(has(errs, "the driver's canary")) << all(errs);
  EXPECT_TRUE(sb.check_all().empty());  // once
}

TEST_F(Fixture, SendLandsInThePeersRqElements) {
  sb.post({qa, SbOpcode::send, 1, kSrc, 100, 0, 0, "post at test:20"});
  sb.post({qa, SbOpcode::send_imm, 2, kSrc + 100, 200, 0, 0, "post at test:21"});
  std::memcpy(&b[kRqB], &a[kSrc], 100);              // element 0
  std::memcpy(&b[kRqB + 256], &a[kSrc + 100], 199);  // element 1, last byte missing
  EXPECT_TRUE(sb.complete(qa, 1, SbOpcode::send, false, "at 1 us").empty());
  const auto errs = sb.complete(qa, 2, SbOpcode::send_imm, false, "at 2 us");
  EXPECT_TRUE(has(errs, "node B RQ of QP2 offset 455")) << all(errs);
}

TEST_F(Fixture, RacesAndInFlightRangesAreNotJudged) {
  // Two WRITEs in flight; the first completes while the second (same QP,
  // later) still targets an overlapping range.
  post_write(1, 0, 0, 512);
  post_write(2, 512, 256, 512);
  nic_write(0, 0, 512);
  nic_write(512, 256, 512);  // the second has already landed over the first
  EXPECT_TRUE(sb.complete(qa, 1, SbOpcode::write, false, "at 1 us").empty());
  EXPECT_TRUE(sb.complete(qa, 2, SbOpcode::write, false, "at 2 us").empty());
  // The host rewrites the source of a WRITE in flight: either may be sent.
  post_write(3, 0, 2048, 64);
  std::vector<uint8_t> z(64, 0x55);
  std::memcpy(&a[kSrc], z.data(), 64);
  sb.host_write("A", kSrc, z.data(), 64, "mem_write at test:30");
  nic_write(0, 2048, 64);
  EXPECT_TRUE(sb.complete(qa, 3, SbOpcode::write, false, "at 3 us").empty());
  EXPECT_TRUE(sb.check_all().empty());
}

// A READ of B's dst[0..511] into A's src[2048..], then a WRITE on the same
// QP of src[0..63] over dst[0..63]. The READ's response is lost and B
// executes it again after the WRITE (IBTA 9.9.4.2): the READ returns the
// WRITE's bytes there. Those 64 bytes are not judged; the other 448 are,
// and a wrong one among them is caught.
TEST_F(Fixture, ReadReexecutedAfterALaterWriteOfItsQp) {
  std::vector<uint8_t> old(512);
  for (uint64_t k = 0; k < 512; ++k) b[kDst + k] = old[k] = uint8_t(0xC0 ^ k);
  sb.host_write("B", kDst, old.data(), 512, "fill at test:40");
  sb.post({qa, SbOpcode::read, 1, kSrc + 2048, 512, kVa + kDst, kRkeyDst, "post at test:41"});
  post_write(2, 0, 0, 64);
  nic_write(0, 0, 64);                                 // the WRITE lands at B
  std::memcpy(&a[kSrc + 2048], &b[kDst], 512);         // then the READ, executed again
  a[kSrc + 2048 + 300] ^= 0x01;                        // and one byte the NIC got wrong
  const auto errs = sb.complete(qa, 1, SbOpcode::read, false, "at 1 us");
  ASSERT_EQ(errs.size(), 1u) << all(errs);
  EXPECT_TRUE(has(errs, "node A MR 'src' offset 2348")) << all(errs);
  EXPECT_TRUE(has(errs, "expected 0xec, found 0xed")) << all(errs);  // byte 300: 0xC0 ^ 0x2C, one bit flipped
  EXPECT_TRUE(sb.complete(qa, 2, SbOpcode::write, false, "at 2 us").empty());
  EXPECT_TRUE(sb.check_all().empty());
}

TEST_F(Fixture, OutOfOrderCompletionIsReported) {
  post_write(1, 0, 0, 64);
  const auto errs = sb.complete(qa, 9, SbOpcode::write, false, "at 1 us");
  EXPECT_TRUE(has(errs, "names wr_id 9")) << all(errs);
}

TEST_F(Fixture, StandsAsideForANodeItCannotSee) {
  sb.stand_aside("B", "register-level write of B SQPIi[2]");
  b[kDst + 5] = 0x99;  // written by a WQE the scoreboard never saw
  EXPECT_TRUE(sb.check_all().empty());
  EXPECT_NE(sb.summary().find("stood aside on B: register-level"), std::string::npos) << sb.summary();
  b[kDst + kLen] ^= 1;  // canaries are still checked
  EXPECT_TRUE(has(sb.check_all(), "canary after MR 'dst'"));
}

}  // namespace

// The shadow's storage (model/monitor/shadow_bytes.h): pages of the source
// that are all zero are left as calloc's zero pages, the others copied; the
// result is the source byte for byte, a partial last page included.
TEST(ShadowBytes, CopiesEveryByteOfZeroAndNonZeroPages) {
  constexpr uint64_t P = ernic::monitor::ShadowBytes::kPage;
  std::vector<uint8_t> src(5 * P + 123);
  src[P + 17] = 0x5A;                          // page 1: one byte
  for (uint64_t k = 3 * P; k < 4 * P; ++k) src[k] = uint8_t(k * 13 + 1);  // page 3: all bytes
  src[5 * P + 122] = 0xC3;                     // the partial last page's last byte
  ernic::monitor::ShadowBytes s;
  s.assign(src.data(), src.size());
  ASSERT_EQ(s.size(), src.size());
  EXPECT_EQ(std::memcmp(s.data(), src.data(), src.size()), 0);
  EXPECT_EQ(s[P + 17], 0x5A);
  EXPECT_EQ(s[3 * P + 5], uint8_t((3 * P + 5) * 13 + 1));
  EXPECT_EQ(s[5 * P + 122], 0xC3);
  // Which pages may hold other than zero: the copied ones (1, 3, 5) and
  // what write() gave out; the others are all zero (Scoreboard::compare
  // passes over a page neither the shadow nor memory has written).
  EXPECT_FALSE(s.written(0, P));
  EXPECT_TRUE(s.written(P + 4000, 200));  // ends in page 2, starts in page 1
  EXPECT_FALSE(s.written(2 * P, P));
  EXPECT_TRUE(s.written(3 * P, 1));
  EXPECT_FALSE(s.written(4 * P, P));
  EXPECT_TRUE(s.written(5 * P, 123));
  s.write(2 * P, 1)[0] = 7;
  EXPECT_EQ(s[2 * P], 7);
  EXPECT_TRUE(s.written(2 * P + 100, 1));
  EXPECT_FALSE(s.written(4 * P, P));
  // A source page known unwritten (HostMemory::written) is not read.
  std::vector<uint8_t> junk(2 * P, 0xEE);
  s.assign(junk.data(), junk.size(), [](uint64_t at, uint64_t) { return at == P; });
  EXPECT_EQ(s[0], 0xEE);
  EXPECT_EQ(s[P], 0);
  EXPECT_FALSE(s.written(P, P));
  // A new assign starts over.
  s.assign(nullptr, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0] | s[1] | s[2], 0);
  s.assign(src.data(), 0);
  EXPECT_EQ(s.size(), 0u);
}

// Node B's memory (128 KiB) with a written-pages map `written` (as
// HostMemory::written), and QP3's RQ of 4 elements of 4 KiB at rq.
struct WrittenRig {
  static constexpr uint64_t P = 4096;
  std::vector<uint8_t> mem = std::vector<uint8_t>(0x20000);
  Scoreboard sb;
  WrittenRig(Scoreboard::Written written, uint64_t rq) {
    sb.add_node(
        "B", [this](uint64_t pa, uint64_t len) -> const uint8_t* { return pa + len <= mem.size() ? &mem[pa] : nullptr; },
        std::move(written));
    sb.add_qp("B", 3, rq, 4, P);
  }
};

// With the node's written-pages map (HostMemory::written): a page neither
// the shadow nor memory has written is zero on both and is not compared; a
// byte written into any other page is. Here the map says only page 2 of B's
// 4-page RQ was written: a stray byte there is caught, one in page 3 (which
// the map says nothing wrote: host memory cannot hold it) goes unread.
TEST(ScoreboardWritten, PagesNeitherSideWroteAreNotCompared) {
  constexpr uint64_t kRq = 0x8000, P = WrittenRig::P;
  WrittenRig r([](uint64_t pa, uint64_t len) { return pa < kRq + 3 * P && pa + len > kRq + 2 * P; }, kRq);
  auto& mem = r.mem;
  auto& sb = r.sb;
  EXPECT_TRUE(sb.check_all().empty());
  mem[kRq + 3 * P + 1] = 0x42;
  EXPECT_TRUE(sb.check_all().empty());
  mem[kRq + 2 * P + 5] = 0x24;
  const auto errs = sb.check_all();
  ASSERT_EQ(errs.size(), 1u) << all(errs);
  EXPECT_TRUE(has(errs, "node B RQ of QP3 offset 8197")) << all(errs);
  EXPECT_TRUE(has(errs, "expected 0x00, found 0x24")) << all(errs);
}

// A page the shadow wrote is compared though memory never wrote it: the
// host wrote 16 bytes across pages 2 and 3 of the RQ as the scoreboard saw
// it (a range over two pages is compared page by page), but they never
// reached memory (as a NIC that drops a write): caught.
TEST(ScoreboardWritten, APageOnlyTheShadowWroteIsCompared) {
  constexpr uint64_t kRq = 0x8000, P = WrittenRig::P;
  WrittenRig r([](uint64_t, uint64_t) { return false; }, kRq);
  auto& sb = r.sb;
  uint8_t sixteen[16];
  for (int k = 0; k < 16; ++k) sixteen[k] = uint8_t(k + 1);
  sb.host_write("B", kRq + 3 * P - 8, sixteen, 16, "at test:1");
  const auto errs = sb.check_all();
  ASSERT_EQ(errs.size(), 1u) << all(errs);
  EXPECT_TRUE(has(errs, "node B RQ of QP3 offset 12280")) << all(errs);  // 3 * 4096 - 8
  EXPECT_TRUE(has(errs, "expected 0x01, found 0x00")) << all(errs);
  EXPECT_TRUE(has(errs, "16 byte")) << all(errs);
}

// The same with an RQ that does not start on a 4 KiB page (0x8800): the
// shadow's pages count from its start, memory's from address 0, and a chunk
// is compared if memory wrote any page it overlaps. Memory says only page
// 0xA000 was written: a stray byte at 0xA010 is caught, one at 0xC010 is
// not read.
TEST(ScoreboardWritten, AnRqOffThePageGridIsComparedWhereMemoryWroteAnyPage) {
  WrittenRig r([](uint64_t pa, uint64_t len) { return pa < 0xB000 && pa + len > 0xA000; }, 0x8800);
  auto& mem = r.mem;
  auto& sb = r.sb;
  mem[0xC010] = 0x42;
  EXPECT_TRUE(sb.check_all().empty());
  mem[0xA010] = 0x24;
  const auto errs = sb.check_all();
  ASSERT_EQ(errs.size(), 1u) << all(errs);
  EXPECT_TRUE(has(errs, "node B RQ of QP3 offset 6160")) << all(errs);  // 0xA010 - 0x8800
}

// An RQ whose memory held bytes before its QP was set up (page 1 of a
// 4 x 4 KiB RQ, the rest zero): the shadow keeps them, so a stray change
// there is caught, and a SEND into element 0 passes.
TEST_F(Fixture, RqShadowKeepsItsContentsWhenQpWasSetUp) {
  constexpr uint64_t kRq = 0x80000, kElem = 4096;
  for (uint64_t k = 0; k < kElem; ++k) b[kRq + kElem + k] = uint8_t(k ^ 0x3C);
  const int q2a = sb.add_qp("A", 3, 0x90000, 4, kElem);
  const int q2b = sb.add_qp("B", 3, kRq, 4, kElem);
  sb.pair_qps(q2a, q2b);
  sb.post({q2a, SbOpcode::send, 1, kSrc, 300, 0, 0, "post at test:30"});
  std::memcpy(&b[kRq], &a[kSrc], 300);
  EXPECT_TRUE(sb.complete(q2a, 1, SbOpcode::send, false, "at 1 us").empty());
  EXPECT_TRUE(sb.check_all().empty());
  b[kRq + kElem + 9] ^= 0x01;  // nothing wrote element 1
  const auto errs = sb.check_all();
  EXPECT_TRUE(has(errs, "node B RQ of QP3 offset 4105")) << all(errs);
  EXPECT_TRUE(has(errs, "expected 0x35, found 0x34")) << all(errs);  // 9 ^ 0x3C
}
