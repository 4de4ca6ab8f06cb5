#include "model/monitor/compliance.h"

#include <fmt/format.h>

#include "model/regs/pg332_limits.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace ernic {

namespace {
constexpr uint64_t k8MiB = pg332::kMaxMessageBytes;
}

const std::vector<std::string>& ComplianceChecker::rules() {
  static const std::vector<std::string> r = {"va_align", "len_64", "read_small", "send_zero", "msg_8m"};
  return r;
}

const char* ComplianceChecker::rule_text(const std::string& rule) {
  if (rule == "va_align") return pg332::kVaAlignText;
  if (rule == "len_64") return pg332::kLen64Text;
  if (rule == "read_small") return pg332::kReadSmallText;
  if (rule == "send_zero") return pg332::kSendZeroText;
  if (rule == "msg_8m") return pg332::kMsg8mText;
  return "?";
}

uint64_t ComplianceChecker::count(const std::string& rule) const {
  uint64_t n = 0;
  for (const auto& r : reports_) n += r.rule == rule;
  return n;
}

void ComplianceChecker::report(uint64_t t, const std::string& dir, uint32_t qp, uint32_t psn, const char* rule,
                               std::string detail) {
  const std::string key = fmt::format("{}|{}|{}|{}", dir, qp, psn, rule);
  if (seen_[key]) return;
  seen_[key] = true;
  reports_.push_back({t, dir, qp, psn, rule, std::move(detail)});
}

void ComplianceChecker::on_frame(const std::vector<uint8_t>& frame, uint64_t t, const std::string& dir) {
  if (auto f = roce::decode(frame)) on_frame(*f, t, dir);
}

void ComplianceChecker::on_frame(const roce::Frame& frame, uint64_t t, const std::string& dir) {
  const roce::Frame* const f = &frame;
  const roce::OpcodeInfo* oi = roce::opcode_info(f->bth.opcode);
  if (!oi || (f->bth.opcode >> 5) != 0) return;  // RC requests only (QP1 is UD)
  const uint32_t qp = f->bth.dest_qp, psn = f->bth.psn;
  if ((oi->kind == roce::OpKind::Write || oi->kind == roce::OpKind::ReadRequest) && f->reth) {
    const roce::Reth& r = *f->reth;
    const bool read = oi->kind == roce::OpKind::ReadRequest;
    if (r.va % pg332::kVaAlign)
      report(t, dir, qp, psn, "va_align", fmt::format("{} VA 0x{:x} is not 64-byte aligned", read ? "READ" : "WRITE", r.va));
    if (r.dma_len % pg332::kLenMultiple)
      report(t, dir, qp, psn, "len_64", fmt::format("{} length {} is not a multiple of 64", read ? "READ" : "WRITE", r.dma_len));
    if (read && r.dma_len <= pg332::kReadSmallMaxBytes) report(t, dir, qp, psn, "read_small", fmt::format("READ of {} bytes", r.dma_len));
    if (r.dma_len > k8MiB) report(t, dir, qp, psn, "msg_8m", fmt::format("{} of {} bytes", read ? "READ" : "WRITE", r.dma_len));
  }
  if (oi->kind == roce::OpKind::Send) {
    SendState& s = sends_[{dir, qp}];
    if (oi->pos == roce::OpPos::First || oi->pos == roce::OpPos::Only) s = SendState{0, true};
    s.bytes += f->payload.size();
    if (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only) {
      if (s.bytes < pg332::kSendMinBytes) report(t, dir, qp, psn, "send_zero", "SEND with no payload");
      if (s.bytes > k8MiB) report(t, dir, qp, psn, "msg_8m", fmt::format("SEND of {} bytes", s.bytes));
      s.active = false;
    }
  }
}

}  // namespace ernic
