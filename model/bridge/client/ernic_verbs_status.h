// model/bridge/client: the completion status of a verbs WR that ERNIC
// completed in error (C++ only). ERNIC's CQE says only "in error"
// (ERRFLAG); the cause is the fatal code the NIC wrote for the QP into the
// incoming error-status queue (PG332; model/regs/fatal.h), which the
// driver reads (Driver::fatal_code). For code 0x0A (a NAK received) the
// QP's STATQPi[22:16] holds the NAK's AETH syndrome, which tells invalid
// request, remote access and remote operational apart. The table is in
// ernic_verbs_status.cpp, and nowhere else.
#pragma once
#include <cstdint>

#include "model/bridge/client/ernic_verbs.h"

namespace ernic::verbs {

// The status of the first WR that completed in error on a QP whose fatal
// code is `code` (0: none found); nak_syndrome is STATQPi[22:16], read only
// when status_needs_nak_syndrome(code).
ibv_wc_status wc_status_of_fatal(uint32_t code, uint32_t nak_syndrome);
bool status_needs_nak_syndrome(uint32_t code);

}  // namespace ernic::verbs
