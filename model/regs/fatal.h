// model/regs: the ERNIC IP's fatal error codes (PG332 v3.1, the error-status
// queue) and the layout of an error-status queue entry. When a QP turns
// fatal (STATQPi[0]) the IP writes one 8-byte entry at IPKTERRQBA +
// IPKTERRQWPTR * 8: word 0 = QPN[31:16] | code[15:0], word 1 = 0. Which
// check raises which code where PG332 leaves it open: assumptions
// A-ERNIC-7, A-ERNIC-12, A-ERNIC-16, A-ERNIC-31. The only place the codes
// are written.
#pragma once
#include <cstdint>

namespace ernic::pg332 {

namespace fatal {
constexpr uint8_t kOpSeq = 0x01;               // opcode sequence (SEND, READ)
constexpr uint8_t kLen = 0x02;                 // length != PMTU or bad pad (SEND)
constexpr uint8_t kOpSeqAndLen = 0x03;         // 0x01 and 0x02 together
constexpr uint8_t kUnsupportedOp = 0x04;       // unsupported opcode with a good PSN
constexpr uint8_t kWqe = 0x05;                 // WQE or payload outside host memory
constexpr uint8_t kRespHndlr = 0x06;           // response handler: retry count exhausted
constexpr uint8_t kRnr = 0x09;                 // RNR counter expired
constexpr uint8_t kRemote = 0x0A;              // NAK invalid / remote access / remote operational received
constexpr uint8_t kBadAckOpcode = 0x0C;        // bad ACK response opcode
constexpr uint8_t kRnrNakTimer = 0x0D;         // RNR NAK down-counter expired (PG332 lists it; the model raises 0x09)
constexpr uint8_t kReadResources = 0x10;       // read-request resources full (PG332 lists it; the model raises none)
constexpr uint8_t kWriteOpSeq = 0x11;          // WRITE opcode sequence
constexpr uint8_t kWriteLen = 0x12;            // WRITE length or pad
constexpr uint8_t kWriteOpSeqAndLen = 0x13;    // 0x11 and 0x12 together
constexpr uint8_t kRkey = 0x15;                // R_Key / PD / key / access check
constexpr uint8_t kRethLen = 0x16;             // RETH DMA length (bounds)
constexpr uint8_t kRkeyAndLen = 0x17;          // 0x15 and 0x16 together
constexpr uint8_t kBadAeth = 0x19;             // bad AETH syndrome on a READ response
constexpr uint8_t kRdRspOnlyLen = 0x1A;        // READ_RESPONSE_ONLY length
constexpr uint8_t kBadResp = 0x1B;             // bad response (wrong position)
constexpr uint8_t kRdRspLastForOnly = 0x1C;    // READ_RESPONSE_LAST where ONLY was due
constexpr uint8_t kRdRspMiddleLen = 0x1E;      // READ_RESPONSE_MIDDLE length
constexpr uint8_t kRdRspLast = 0x1F;           // READ_RESPONSE_LAST error (length)
}  // namespace fatal

constexpr uint32_t kErrQueueEntryBytes = 8;
constexpr uint32_t encode_err_entry(uint32_t qpn, uint8_t code) { return qpn << 16 | code; }
constexpr uint32_t err_entry_qpn(uint32_t word0) { return word0 >> 16; }
constexpr uint32_t err_entry_code(uint32_t word0) { return word0 & 0xFFFF; }

}  // namespace ernic::pg332
