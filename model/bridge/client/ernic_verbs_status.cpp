// model/bridge/client: completion statuses (ernic_verbs_status.h): PG332's
// fatal codes as ibv_wc_status, and the statuses in words.
#include "model/bridge/client/ernic_verbs_status.h"

#include "model/regs/fatal.h"
#include "model/roce/packet.h"

namespace ernic::verbs {
namespace {

namespace F = pg332::fatal;
namespace A = roce::aeth;
constexpr int kAnyNak = -1;

// The table (model/bridge/README.md, "Verbs", prints it). A code not listed
// (opcode sequence, lengths, WQE outside memory, bad responses, ...) and
// code 0 (the error-status queue had none for the QP) are
// IBV_WC_GENERAL_ERR. Rows are matched in order: the first row with the
// code whose nak is kAnyNak or the NAK syndrome matches.
struct Row {
  uint8_t code;
  int nak;  // STATQPi[22:16] (code 0x0A only), or kAnyNak
  ibv_wc_status status;
};
constexpr Row kTable[] = {
    // requester: the response handler's retry count exhausted (timeouts, NAK-PSN)
    {F::kRespHndlr, kAnyNak, IBV_WC_RETRY_EXC_ERR},
    // requester: the RNR retry count exhausted
    {F::kRnr, kAnyNak, IBV_WC_RNR_RETRY_EXC_ERR},
    {F::kRnrNakTimer, kAnyNak, IBV_WC_RNR_RETRY_EXC_ERR},
    // requester: a NAK received; its syndrome says which
    {F::kRemote, A::kNakInvalid, IBV_WC_REM_INV_REQ_ERR},
    {F::kRemote, A::kNakRemoteOp, IBV_WC_REM_OP_ERR},
    {F::kRemote, kAnyNak, IBV_WC_REM_ACCESS_ERR},  // NAK remote access (PG332's meaning of 0x0A)
    // responder: a peer's RDMA request failed this QP's R_Key / PD / access
    // or bounds check (as rxe reports a responder's R_Key violation)
    {F::kRkey, kAnyNak, IBV_WC_REM_ACCESS_ERR},
    {F::kRethLen, kAnyNak, IBV_WC_REM_ACCESS_ERR},
    {F::kRkeyAndLen, kAnyNak, IBV_WC_REM_ACCESS_ERR},
};

}  // namespace

bool status_needs_nak_syndrome(uint32_t code) { return code == F::kRemote; }

ibv_wc_status wc_status_of_fatal(uint32_t code, uint32_t nak_syndrome) {
  for (const Row& r : kTable)
    if (r.code == code && (r.nak == kAnyNak || uint32_t(r.nak) == nak_syndrome)) return r.status;
  return IBV_WC_GENERAL_ERR;
}

}  // namespace ernic::verbs

extern "C" const char* ibv_wc_status_str(enum ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
    case IBV_WC_LOC_EEC_OP_ERR: return "local EE context operation error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "flushed: the QP is in the error state";
    case IBV_WC_MW_BIND_ERR: return "memory window bind error";
    case IBV_WC_BAD_RESP_ERR: return "bad response";
    case IBV_WC_LOC_ACCESS_ERR: return "local access error";
    case IBV_WC_REM_INV_REQ_ERR: return "remote: invalid request";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retries exhausted";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retries exhausted";
    case IBV_WC_LOC_RDD_VIOL_ERR: return "local RDD violation";
    case IBV_WC_REM_INV_RD_REQ_ERR: return "remote: invalid RD request";
    case IBV_WC_REM_ABORT_ERR: return "remote aborted";
    case IBV_WC_INV_EECN_ERR: return "invalid EE context number";
    case IBV_WC_INV_EEC_STATE_ERR: return "invalid EE context state";
    case IBV_WC_FATAL_ERR: return "fatal error";
    case IBV_WC_RESP_TIMEOUT_ERR: return "response timeout";
    case IBV_WC_GENERAL_ERR: return "error (no finer cause: vendor_err is PG332's fatal code, 0 if none was found)";
    case IBV_WC_TM_ERR: return "tag matching error";
    case IBV_WC_TM_RNDV_INCOMPLETE: return "tag matching rendezvous incomplete";
  }
  return "unknown";
}
