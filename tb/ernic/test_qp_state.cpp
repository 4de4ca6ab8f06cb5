// model/qp's QP state machine (qp_state.h) against its transition table and
// PG332 v3.1 chapter 6 / section 7 of ../shared/spec/ernic-pg332.md: the
// hardware state shows only QPCONFi[0] (enable), QPCONFi[6] (under recovery)
// and STATQPi[0] (fatal); the requester's and responder's sub-states are
// classifications of their flags with a fixed priority. Plain C++: no
// SystemC. Every expected value below is written out by hand.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "model/qp/qp_context.h"
#include "model/qp/qp_state.h"

using namespace ernic::qp;

namespace {

// PG332 bit positions, written out here rather than taken from the model.
constexpr uint32_t kQpconfEn = 1u << 0;        // QPCONFi[0] QP enable
constexpr uint32_t kQpconfRecovery = 1u << 6;  // QPCONFi[6] QP under recovery
constexpr uint32_t kStatqpFatal = 1u << 0;     // STATQPi[0] QP fatal

// ------------------------------------------------------------ hw_state

struct HwCase {
  bool en, recovery, fatal;
  HwState want;
};

// Every QPCONFi[0] x QPCONFi[6] x STATQPi[0] combination.
const HwCase kHwCases[] = {
    // [0] [6] fatal
    {false, false, false, HwState::disabled},  // never enabled, or deleted (PG332 ch.6 deletion)
    {false, false, true, HwState::disabled},   // fatal, then QPCONFi[0] <- 0 (deletion of a fatal QP)
    {false, true, false, HwState::recovery},   // deletion flow step 3 sets [6] with [0] clear
    {false, true, true, HwState::recovery},    // fatal recovery step 3: [0] cleared, [6] kept
    {true, false, false, HwState::enabled},    // set up: QPCONFi[0] <- 1
    {true, false, true, HwState::fatal},       // an error-status queue code made it fatal
    {true, true, false, HwState::enabled},     // recovery step 6 writes [0] = 1 (fatal already cleared)
    {true, true, true, HwState::fatal},        // recovery step 2: [6] set, still enabled and fatal
};

void PrintTo(const HwCase& c, std::ostream* os) {
  *os << "QPCONFi[0]=" << c.en << " QPCONFi[6]=" << c.recovery << " STATQPi[0]=" << c.fatal;
}

class HwStateTable : public testing::TestWithParam<HwCase> {};

TEST_P(HwStateTable, RegistersGiveTheState) {
  const HwCase c = GetParam();
  const uint32_t qpconf = (c.en ? kQpconfEn : 0) | (c.recovery ? kQpconfRecovery : 0);
  const uint32_t statqp = c.fatal ? kStatqpFatal : 0;
  EXPECT_EQ(hw_state(qpconf, statqp), c.want);
  // The other bits of both registers (PMTU, IPv6, interrupt enables, RQ
  // element size; SQ / OSQ empty, retry counts, NAK syndrome) do not matter.
  const uint32_t qpconf_noise = 0xFFFF07BEu;  // every bit but [0] and [6]
  const uint32_t statqp_noise = 0x77FF0E1Eu;  // [4:1], [11:9], [23:16], [26:24], [30:28]
  EXPECT_EQ(hw_state(qpconf | qpconf_noise, statqp | statqp_noise), c.want);
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, HwStateTable, testing::ValuesIn(kHwCases),
                         [](const testing::TestParamInfo<HwCase>& i) {
                           return std::string(i.param.en ? "En" : "NoEn") + (i.param.recovery ? "Rec" : "NoRec") +
                                  (i.param.fatal ? "Fatal" : "NoFatal");
                         });

// The flows of PG332 chapter 6 as register writes, state after each step.
TEST(HwState, SetupFatalRecoveryDeletionWalk) {
  uint32_t qpconf = 0, statqp = 0;
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::disabled);  // register reset
  qpconf = 0x00100335;  // RQ element 16 x 256 B, PMTU 2048 (code 3), IPv4, [5][4][2][0] set
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::enabled);
  statqp |= kStatqpFatal;  // e.g. fatal code 0x05
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::fatal);
  qpconf |= kQpconfRecovery;  // recovery step 2
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::fatal);
  qpconf &= ~kQpconfEn;  // step 3
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::recovery);
  statqp &= ~kStatqpFatal;  // re-enabling after recovery clears the fatal bit
  qpconf |= kQpconfEn;      // step 6: [0] = 1 ...
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::enabled);
  qpconf &= ~kQpconfRecovery;  // ... and [6] = 0
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::enabled);
  qpconf &= ~kQpconfEn;  // deletion step 2
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::disabled);
  qpconf |= kQpconfRecovery;  // deletion step 3
  EXPECT_EQ(hw_state(qpconf, statqp), HwState::recovery);
}

TEST(HwState, Names) {
  EXPECT_STREQ(name(HwState::disabled), "disabled");
  EXPECT_STREQ(name(HwState::enabled), "enabled");
  EXPECT_STREQ(name(HwState::recovery), "recovery");
  EXPECT_STREQ(name(HwState::fatal), "fatal");
}

// ------------------------------------------------------------ requester

// The waveform codes trigger expressions use (qp_state.h).
TEST(RequesterState, WaveformCodes) {
  EXPECT_EQ(int(ReqState::idle), 0);
  EXPECT_EQ(int(ReqState::sending), 1);
  EXPECT_EQ(int(ReqState::wait_ack), 2);
  EXPECT_EQ(int(ReqState::retransmit), 3);
  EXPECT_EQ(int(ReqState::rnr_wait), 4);
  EXPECT_EQ(int(RespState::idle), 0);
  EXPECT_EQ(int(RespState::receiving), 1);
  EXPECT_EQ(int(RespState::ack_pending), 2);
  EXPECT_EQ(int(RespState::nak_psn_sent), 3);
  EXPECT_EQ(int(RespState::rnr_nak_sent), 4);
}

TEST(RequesterState, StartsIdle) {
  const RequesterState r;
  EXPECT_FALSE(r.sending());
  EXPECT_FALSE(r.retransmit_pending());
  EXPECT_FALSE(r.in_rnr_wait());
  EXPECT_EQ(r.rnr_until_ps(), 0u);
  EXPECT_EQ(r.state(false), ReqState::idle);
  EXPECT_EQ(r.state(true), ReqState::wait_ack);
}

// Each named transition sets and clears exactly its own flag.
TEST(RequesterState, Transitions) {
  RequesterState r;
  r.begin_send();
  EXPECT_TRUE(r.sending());
  EXPECT_FALSE(r.retransmit_pending());
  EXPECT_FALSE(r.in_rnr_wait());
  EXPECT_EQ(r.state(false), ReqState::sending);
  r.end_send();
  EXPECT_FALSE(r.sending());
  EXPECT_EQ(r.state(true), ReqState::wait_ack);

  r.begin_retransmit();
  EXPECT_TRUE(r.retransmit_pending());
  EXPECT_FALSE(r.sending());
  EXPECT_EQ(r.state(true), ReqState::retransmit);
  r.begin_send();  // the QP manager sends the go-back
  EXPECT_EQ(r.state(true), ReqState::retransmit);
  r.end_send();
  r.end_retransmit();
  EXPECT_FALSE(r.retransmit_pending());
  EXPECT_EQ(r.state(true), ReqState::wait_ack);

  r.rnr_wait(123456789);  // RNR NAK: wait until 123456789 ps
  EXPECT_TRUE(r.in_rnr_wait());
  EXPECT_EQ(r.rnr_until_ps(), 123456789u);
  EXPECT_EQ(r.state(true), ReqState::rnr_wait);
  EXPECT_FALSE(r.retransmit_pending());
  r.rnr_expired();
  EXPECT_FALSE(r.in_rnr_wait());
  EXPECT_EQ(r.rnr_until_ps(), 0u);
  EXPECT_EQ(r.state(false), ReqState::idle);
}

// state() priority: RNR_WAIT over RETRANSMIT over SENDING over WAIT_ACK over IDLE.
struct ReqCase {
  bool rnr, resend, sending, outstanding;
  ReqState want;
};
const ReqCase kReqCases[] = {
    {false, false, false, false, ReqState::idle},      {false, false, false, true, ReqState::wait_ack},
    {false, false, true, false, ReqState::sending},    {false, false, true, true, ReqState::sending},
    {false, true, false, false, ReqState::retransmit}, {false, true, false, true, ReqState::retransmit},
    {false, true, true, false, ReqState::retransmit},  {false, true, true, true, ReqState::retransmit},
    {true, false, false, false, ReqState::rnr_wait},   {true, false, false, true, ReqState::rnr_wait},
    {true, false, true, false, ReqState::rnr_wait},    {true, false, true, true, ReqState::rnr_wait},
    {true, true, false, false, ReqState::rnr_wait},    {true, true, false, true, ReqState::rnr_wait},
    {true, true, true, false, ReqState::rnr_wait},     {true, true, true, true, ReqState::rnr_wait},
};

void PrintTo(const ReqCase& c, std::ostream* os) {
  *os << "rnr=" << c.rnr << " resend=" << c.resend << " sending=" << c.sending << " outstanding=" << c.outstanding;
}

class RequesterPriority : public testing::TestWithParam<ReqCase> {};

TEST_P(RequesterPriority, StateByPriority) {
  const ReqCase c = GetParam();
  RequesterState r;
  if (c.rnr) r.rnr_wait(5000);
  if (c.resend) r.begin_retransmit();
  if (c.sending) r.begin_send();
  EXPECT_EQ(r.state(c.outstanding), c.want);
  // The same through a QP context: outstanding = a non-empty OSQ.
  QpContext q;
  q.rs = r;
  if (c.outstanding) q.req.osq.push_back(Outstanding{});
  EXPECT_EQ(q.req_state(), c.want);
}

INSTANTIATE_TEST_SUITE_P(AllFlags, RequesterPriority, testing::ValuesIn(kReqCases),
                         [](const testing::TestParamInfo<ReqCase>& i) {
                           const ReqCase& c = i.param;
                           return std::string(c.rnr ? "Rnr" : "") + (c.resend ? "Resend" : "") +
                                  (c.sending ? "Sending" : "") + (c.outstanding ? "Outstanding" : "") +
                                  (!c.rnr && !c.resend && !c.sending && !c.outstanding ? "Nothing" : "");
                         });

// ------------------------------------------------------------ responder

// resp_state priority: RNR_NAK_SENT over NAK_PSN_SENT over RECEIVING over
// ACK_PENDING over IDLE.
struct RespCase {
  bool rnr, nak, in_msg;
  uint32_t unacked;
  RespState want;
};
const RespCase kRespCases[] = {
    {false, false, false, 0, RespState::idle},          {false, false, false, 3, RespState::ack_pending},
    {false, false, true, 0, RespState::receiving},      {false, false, true, 3, RespState::receiving},
    {false, true, false, 0, RespState::nak_psn_sent},   {false, true, false, 3, RespState::nak_psn_sent},
    {false, true, true, 0, RespState::nak_psn_sent},    {false, true, true, 3, RespState::nak_psn_sent},
    {true, false, false, 0, RespState::rnr_nak_sent},   {true, false, false, 3, RespState::rnr_nak_sent},
    {true, false, true, 0, RespState::rnr_nak_sent},    {true, false, true, 3, RespState::rnr_nak_sent},
    {true, true, false, 0, RespState::rnr_nak_sent},    {true, true, false, 3, RespState::rnr_nak_sent},
    {true, true, true, 0, RespState::rnr_nak_sent},     {true, true, true, 3, RespState::rnr_nak_sent},
};

void PrintTo(const RespCase& c, std::ostream* os) {
  *os << "rnr_nak=" << c.rnr << " nak_psn=" << c.nak << " in_message=" << c.in_msg << " unacked=" << c.unacked;
}

class ResponderPriority : public testing::TestWithParam<RespCase> {};

TEST_P(ResponderPriority, StateByPriority) {
  const RespCase c = GetParam();
  EXPECT_EQ(resp_state(c.rnr, c.nak, c.in_msg, c.unacked), c.want);
  // Through the responder's own state, driven by the events the responder
  // reports (rx_responder.cpp): NAKs sent, a message begun, packets taken.
  ResponderState r;
  if (c.rnr) r.rnr_nak_sent();
  if (c.nak) r.psn_nak_sent();
  if (c.in_msg) r.begin_message();
  for (uint32_t i = 0; i < c.unacked; ++i) r.packet_accepted();
  EXPECT_EQ(r.state(), c.want);
  EXPECT_EQ(r.unacked(), c.unacked);
  // Clearing every condition returns the responder to idle.
  r.rq_room();
  r.psn_in_sequence();
  r.end_message();
  r.acked();
  EXPECT_EQ(r.state(), resp_state(false, false, false, 0));
}

INSTANTIATE_TEST_SUITE_P(AllFlags, ResponderPriority, testing::ValuesIn(kRespCases),
                         [](const testing::TestParamInfo<RespCase>& i) {
                           const RespCase& c = i.param;
                           return std::string(c.rnr ? "RnrNak" : "") + (c.nak ? "NakPsn" : "") +
                                  (c.in_msg ? "InMessage" : "") + (c.unacked ? "Unacked" : "") +
                                  (!c.rnr && !c.nak && !c.in_msg && !c.unacked ? "Nothing" : "");
                         });

// ------------------------------------------------------------ OSQ helpers

TEST(QpContextHelpers, FindStillOutstandingAcknowledged) {
  QpContext q;
  Outstanding a, b, rd;
  a.id = 11, a.first_psn = 0xFFFFFD, a.last_psn = 0xFFFFFE;  // a WRITE of 2 packets just below the PSN wrap
  b.id = 12, b.first_psn = 0xFFFFFF, b.last_psn = 0x000001;  // 3 packets across the wrap
  rd.id = 13, rd.first_psn = 0x000002, rd.last_psn = 0x000005, rd.is_read = true;
  q.req.osq = {a, b, rd};
  ASSERT_NE(find_outstanding(q, 12), nullptr);
  EXPECT_EQ(find_outstanding(q, 12)->first_psn, 0xFFFFFFu);
  EXPECT_EQ(find_outstanding(q, 14), nullptr);
  EXPECT_TRUE(still_outstanding(q, 0xFFFFFD));
  EXPECT_TRUE(still_outstanding(q, 0x000002));
  EXPECT_FALSE(still_outstanding(q, 0xFFFFFE));  // not a first PSN
  // Nothing acknowledged yet.
  EXPECT_FALSE(acknowledged(q, q.req.osq[0]));
  // An ACK for PSN 0x000001 covers a and b (24-bit PSN order across the
  // wrap, IBTA: a PSN within 2^23 behind is earlier), never the READ.
  q.retry.ack_high_valid = true;
  q.retry.ack_high = 0x000001;
  EXPECT_TRUE(acknowledged(q, q.req.osq[0]));
  EXPECT_TRUE(acknowledged(q, q.req.osq[1]));
  q.retry.ack_high = 0x000005;
  EXPECT_FALSE(acknowledged(q, q.req.osq[2]));
  // 0xFFFFFF covers a but not b (its last PSN 0x000001 is after it).
  q.retry.ack_high = 0xFFFFFF;
  EXPECT_TRUE(acknowledged(q, q.req.osq[0]));
  EXPECT_FALSE(acknowledged(q, q.req.osq[1]));
}

}  // namespace
