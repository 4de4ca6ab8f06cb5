// Unit bench of the ERNIC's interrupt (model/ernic/interrupts.h): INTSTS
// with a block raising a bit and the AXI-Lite slave's write-1-to-clear at
// one core edge, in either order (which the SystemC kernel picks, and a
// split run's kernel picks differently). As an RTL status register, set
// wins over clear in one cycle: the bit raised at the W1C's instant stays,
// and rnic_intr, taken once the instant has settled, does not blip
// 1 -> 0 -> 1 (topology/incast_ecn_cnp lost INTSTS[8] in one order).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <gtest/gtest.h>

#include "model/sim/settle.h"
#include "tb/ernic/block_bench.h"

using namespace ernic;
using namespace ernic::bench;

namespace {

// What Ernic::axil_write does for a write of INTSTS.
void w1c(BlockBench& b, uint32_t bits) {
  const R::Decoded d = b.s.regs.decode(b.layout().global(R::g::INTSTS));
  ASSERT_EQ(b.s.regs.write(d, bits).kind, R::RegisterFile::Write::w1c);
  b.intr.after_w1c();
}

void settle_now() { settle::wait_settled(settle::Stage::kStep); }

// rnic_intr's level changes, counted by a method on the line.
struct Edges {
  int n = 0;
  explicit Edges(IntrLine& line) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.dont_initialize();
    o.set_sensitivity(&line.value_changed_event());
    sc_core::sc_spawn([this] { ++n; }, "intr_edges", &o);
  }
};

class IntstsSameEdge : public testing::TestWithParam<bool> {};  // true: the raise runs first

TEST_P(IntstsSameEdge, RaisedBitSurvivesTheW1CAndTheLineStaysHigh) {
  const bool raise_first = GetParam();
  run_bench(BenchOptions{}, [raise_first](BlockBench& b) {
    const uint32_t cnp = FLD::INTSTS_CNP.bit(), done = FLD::INTSTS_WQE_DONE.bit();
    b.s.G(R::g::INTEN) = cnp | done;
    Edges edges(b.intr_line);
    b.intr.raise(cnp | done);  // a CNP and a completion pending; the handler reads 0x110
    settle_now();
    EXPECT_TRUE(b.intr_line.read());
    EXPECT_EQ(edges.n, 1);
    b.wait_ns(100);
    // One core edge: the handler's W1C of what it read, and a new CNP.
    if (raise_first) b.intr.raise(cnp);
    w1c(b, cnp | done);
    if (!raise_first) b.intr.raise(cnp);
    EXPECT_EQ(b.G(R::g::INTSTS), cnp);
    settle_now();
    EXPECT_EQ(b.G(R::g::INTSTS), cnp);  // the new CNP stays, the completion is cleared
    EXPECT_TRUE(b.intr_line.read());
    EXPECT_EQ(edges.n, 1);  // no 1 -> 0 -> 1
    // A W1C one cycle later clears it.
    b.wait_ns(5);
    w1c(b, cnp);
    EXPECT_EQ(b.G(R::g::INTSTS), 0u);
    settle_now();
    EXPECT_FALSE(b.intr_line.read());
    EXPECT_EQ(edges.n, 2);
  });
}

INSTANTIATE_TEST_SUITE_P(Order, IntstsSameEdge, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& i) { return i.param ? "RaiseFirst" : "W1CFirst"; });

TEST(IntstsSameEdge, TwoRaisesAtOneInstantOneRisingEdge) {
  run_bench(BenchOptions{}, [](BlockBench& b) {
    const uint32_t fatal = FLD::INTSTS_FATAL.bit(), done = FLD::INTSTS_WQE_DONE.bit();
    b.s.G(R::g::INTEN) = fatal | done;
    Edges edges(b.intr_line);
    b.intr.raise(done);
    b.intr.raise(fatal);
    EXPECT_FALSE(b.intr_line.read());  // taken once the instant has settled
    settle_now();
    EXPECT_TRUE(b.intr_line.read());
    EXPECT_EQ(edges.n, 1);
    EXPECT_EQ(b.G(R::g::INTSTS), fatal | done);
  });
}

}  // namespace
