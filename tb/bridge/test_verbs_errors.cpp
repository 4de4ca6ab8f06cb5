// tb/bridge/test_verbs_errors.cpp: errors the driver reports from its
// interrupt handler (BridgeBus::report_error) fail the verbs layer's next
// call that reaches the driver (guarded(): every post, poll, event wait,
// modify, ... runs through it) with EIO and the message, each error once.
#include <gtest/gtest.h>

#include "model/bridge/client/ernic_verbs_impl.h"

using namespace ernic;

namespace {

// A context with a bus and nothing behind it: report_error and the verbs
// layer's bookkeeping never touch the session (a stand-in pointer).
struct Fixture {
  alignas(16) unsigned char stand_in[16] = {};
  ibv_context c;
  Fixture() { c.bus = std::make_unique<bridge::BridgeBus>(reinterpret_cast<ernic_bridge*>(stand_in)); }
};

}  // namespace

TEST(VerbsReportedErrors, NextCallFailsOncePerError) {
  Fixture f;
  int runs = 0;
  auto call = [&]() { return verbs::guarded(&f.c, EINVAL, [&]() -> int { ++runs; return 0; }); };
  EXPECT_EQ(call(), 0);
  EXPECT_EQ(runs, 1);
  f.c.bus->report_error("QP1 receive: a MAD too short");
  f.c.bus->report_error("interrupt status 0x80 still set");
  errno = 0;
  EXPECT_EQ(call(), EIO);
  EXPECT_EQ(errno, EIO);
  EXPECT_NE(f.c.last_error.find("QP1 receive: a MAD too short"), std::string::npos) << f.c.last_error;
  EXPECT_EQ(call(), EIO);
  EXPECT_NE(f.c.last_error.find("interrupt status 0x80 still set"), std::string::npos) << f.c.last_error;
  EXPECT_EQ(runs, 1);  // the failed calls did nothing
  EXPECT_EQ(call(), 0);  // each error once; the context is not dead
  EXPECT_EQ(runs, 2);
  EXPECT_FALSE(f.c.dead);
}
