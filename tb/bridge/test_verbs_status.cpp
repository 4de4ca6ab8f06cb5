// The verbs layer's completion status of a WR ERNIC completed in error
// (model/bridge/client/ernic_verbs_status.h): every fatal code PG332 lists
// (../shared/spec/ernic-pg332.md, "Fatal codes"; model/regs/fatal.h), and
// code 0x0A by the NAK syndrome in STATQPi.
#include <gtest/gtest.h>

#include "model/bridge/client/ernic_verbs_status.h"
#include "model/regs/fatal.h"

namespace {

using ernic::verbs::status_needs_nak_syndrome;
using ernic::verbs::wc_status_of_fatal;
namespace F = ernic::pg332::fatal;

TEST(VerbsStatus, RetryAndRnrExhaustion) {
  EXPECT_EQ(wc_status_of_fatal(F::kRespHndlr, 0), IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(wc_status_of_fatal(F::kRnr, 0), IBV_WC_RNR_RETRY_EXC_ERR);
  EXPECT_EQ(wc_status_of_fatal(F::kRnrNakTimer, 0), IBV_WC_RNR_RETRY_EXC_ERR);
}

TEST(VerbsStatus, NakReceivedBySyndrome) {
  EXPECT_TRUE(status_needs_nak_syndrome(0x0A));
  EXPECT_EQ(wc_status_of_fatal(F::kRemote, 0x62), IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(wc_status_of_fatal(F::kRemote, 0x61), IBV_WC_REM_INV_REQ_ERR);
  EXPECT_EQ(wc_status_of_fatal(F::kRemote, 0x63), IBV_WC_REM_OP_ERR);
  // PG332's "remote access" when the syndrome says nothing finer
  for (uint32_t syn : {0x00u, 0x1Fu, 0x60u, 0x64u, 0x7Fu})
    EXPECT_EQ(wc_status_of_fatal(F::kRemote, syn), IBV_WC_REM_ACCESS_ERR) << syn;
}

TEST(VerbsStatus, ResponderAccessChecks) {
  for (uint32_t code : {0x15u, 0x16u, 0x17u}) {
    EXPECT_EQ(wc_status_of_fatal(code, 0), IBV_WC_REM_ACCESS_ERR) << code;
    EXPECT_FALSE(status_needs_nak_syndrome(code)) << code;
  }
}

TEST(VerbsStatus, EveryOtherCodeIsGeneral) {
  // PG332's other codes, 0 (none found) and values it does not list.
  for (uint32_t code : {0x00u, 0x01u, 0x02u, 0x03u, 0x04u, 0x05u, 0x0Cu, 0x10u, 0x11u, 0x12u, 0x13u, 0x19u, 0x1Au,
                        0x1Bu, 0x1Cu, 0x1Eu, 0x1Fu, 0x07u, 0x20u, 0xFFFFu}) {
    EXPECT_EQ(wc_status_of_fatal(code, 0x62), IBV_WC_GENERAL_ERR) << code;
    EXPECT_FALSE(status_needs_nak_syndrome(code)) << code;
  }
}

TEST(VerbsStatus, Words) {
  EXPECT_STREQ(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), "remote access error");
  EXPECT_STREQ(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "transport retries exhausted");
  EXPECT_STREQ(ibv_wc_status_str(static_cast<ibv_wc_status>(999)), "unknown");
}

}  // namespace
