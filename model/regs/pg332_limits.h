// model/regs: PG332's limits on what a request may be ("Unsupported
// Features"): the real ERNIC does not handle requests outside them. Written
// once, here: the compliance checker (model/monitor/compliance.cpp) reports
// requests on the wire that break them, and the verbs layer
// (model/bridge/client/ernic_verbs_post.cpp) refuses WRs that would.
#pragma once
#include <cstdint>

namespace ernic::pg332 {

// Incoming READ / WRITE virtual addresses: 64-byte aligned (va_align).
constexpr uint64_t kVaAlign = 64;
// WRITE and READ-response lengths: multiples of 64 bytes (len_64).
constexpr uint64_t kLenMultiple = 64;
// READs of this many bytes or fewer are not supported (read_small).
constexpr uint64_t kReadSmallMaxBytes = 4;
// A SEND must carry at least one byte (send_zero).
constexpr uint64_t kSendMinBytes = 1;
// The longest RDMA message, SEND, WRITE or READ (msg_8m).
constexpr uint64_t kMaxMessageBytes = 8ull << 20;

// The rules in words.
constexpr const char* kVaAlignText = "PG332: the VA of an incoming READ or WRITE must be 64-byte aligned";
constexpr const char* kLen64Text = "PG332: WRITE and READ-response lengths must be a multiple of 64 bytes";
constexpr const char* kReadSmallText = "PG332: READs of 4 bytes or less are not supported";
constexpr const char* kSendZeroText = "PG332: zero-length SENDs are not supported";
constexpr const char* kMsg8mText = "PG332: RDMA messages are limited to 8 MiB";

}  // namespace ernic::pg332
