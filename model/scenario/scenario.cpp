// model/scenario: the scenario types' own functions (scenario.h, steps.h,
// source_loc.h): source positions and ScenarioError, enum names, test data
// patterns, step kinds and positions, the datapath choice. The parser is in
// the other files of this folder (parse.h lists them).
#include "model/scenario/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <random>
#include <utility>

namespace ernic {

// ------------------------------------------------------------ basics -------

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

static std::string format_error(const std::string& file, int line, int column,
                                const std::string& key, const std::string& message) {
  std::string s = SourceLoc{file, line, column}.str() + ": ";
  if (!key.empty()) s += "key '" + key + "': ";
  return s + message;
}

ScenarioError::ScenarioError(std::string file, int line, int column, std::string key,
                             std::string message)
    : std::runtime_error(format_error(file, line, column, key, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_(std::move(key)),
      message_(std::move(message)) {}

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::random: return "random";
    case Pattern::zero: return "zero";
    case Pattern::incrementing: return "incrementing";
    case Pattern::constant: return "constant";
  }
  return "?";
}
const char* to_string(Access a) {
  switch (a) {
    case Access::r: return "r";
    case Access::w: return "w";
    case Access::rw: return "rw";
  }
  return "?";
}
const char* to_string(Doorbell d) {
  switch (d) {
    case Doorbell::once: return "once";
    case Doorbell::each: return "each";
    case Doorbell::none: return "none";
  }
  return "?";
}

void fill_pattern(uint8_t* dst, size_t len, Pattern p, uint64_t seed, uint8_t value,
                  uint64_t offset_in_mr) {
  switch (p) {
    case Pattern::zero:
      std::memset(dst, 0, len);
      return;
    case Pattern::constant:
      std::memset(dst, value, len);
      return;
    case Pattern::incrementing:
      for (size_t i = 0; i < len; ++i) dst[i] = uint8_t((offset_in_mr + i) & 0xFF);
      return;
    case Pattern::random: {
      std::mt19937_64 gen(seed);
      gen.discard(offset_in_mr / 8);
      unsigned byte = unsigned(offset_in_mr % 8);
      size_t i = 0;
      while (i < len) {
        const uint64_t w = gen();
        for (; byte < 8 && i < len; ++byte) dst[i++] = uint8_t(w >> (8 * byte));
        byte = 0;
      }
      return;
    }
  }
}

namespace {
template <class T>
const SourceLoc& loc_of(const T& st) { return st.loc; }
template <class T>
const SourceLoc& loc_of(const std::shared_ptr<T>& st) { return st->loc; }
}  // namespace

const SourceLoc& step_loc(const Step& s) {
  return std::visit([](const auto& st) -> const SourceLoc& { return loc_of(st); }, s);
}

namespace {
struct KindName {
  const char* operator()(const InitStep&) const { return "init"; }
  const char* operator()(const RegisterMrStep&) const { return "register_mr"; }
  const char* operator()(const FillStep&) const { return "fill"; }
  const char* operator()(const ConnectStep&) const { return "connect"; }
  const char* operator()(const PostStep&) const { return "post"; }
  const char* operator()(const WaitCompletionsStep&) const { return "wait_completions"; }
  const char* operator()(const RecvStep&) const { return "recv"; }
  const char* operator()(const BypassSendStep&) const { return "bypass_send"; }
  const char* operator()(const ReplayStep&) const { return "replay"; }
  const char* operator()(const ExpectBypassStep&) const { return "expect_bypass"; }
  const char* operator()(const CheckMemoryStep&) const { return "check_memory"; }
  const char* operator()(const RegWriteStep&) const { return "reg_write"; }
  const char* operator()(const RegReadStep&) const { return "reg_read"; }
  const char* operator()(const RegExpectStep&) const { return "reg_expect"; }
  const char* operator()(const RegPollStep&) const { return "reg_poll"; }
  const char* operator()(const MemWriteStep&) const { return "mem_write"; }
  const char* operator()(const MemExpectStep&) const { return "mem_expect"; }
  const char* operator()(const DeregisterMrStep&) const { return "deregister_mr"; }
  const char* operator()(const ConnectRejectStep&) const { return "connect_reject"; }
  const char* operator()(const DisconnectStep&) const { return "disconnect"; }
  const char* operator()(const RecoverStep&) const { return "recover"; }
  const char* operator()(const HwHandshakeStep&) const { return "hw_handshake"; }
  const char* operator()(const DebugPresetStep&) const { return "debug_preset"; }
  const char* operator()(const FaultStep&) const { return "fault"; }
  const char* operator()(const LinkStep&) const { return "link"; }
  const char* operator()(const ExpectFramesStep&) const { return "expect_frames"; }
  const char* operator()(const ExpectIdleStep&) const { return "expect_idle"; }
  const char* operator()(const WaitUntilStep&) const { return "wait_until"; }
  const char* operator()(const ExpectComplianceStep&) const { return "expect_compliance"; }
  const char* operator()(const ProgramStep&) const { return "program"; }
  const char* operator()(const BarrierStep&) const { return "barrier"; }
  const char* operator()(const std::shared_ptr<RepeatStep>&) const { return "repeat"; }
  const char* operator()(const std::shared_ptr<ParallelStep>&) const { return "parallel"; }
  const char* operator()(const WaitStep&) const { return "wait"; }
  const char* operator()(const QpSetupStep&) const { return "qp_setup"; }
  const char* operator()(const QpReleaseStep&) const { return "qp_release"; }
  const char* operator()(const QpAdoptStep&) const { return "qp_adopt"; }
  const char* operator()(const ExpectSwitchStep&) const { return "expect_switch"; }
  const char* operator()(const ExpectQpStep&) const { return "expect_qp"; }
};
}  // namespace

const char* step_kind(const Step& s) { return std::visit(KindName{}, s); }

bool CounterCheck::holds(uint64_t got) const {
  switch (op) {
    case Op::eq: return got == value;
    case Op::ne: return got != value;
    case Op::gt: return got > value;
    case Op::ge: return got >= value;
    case Op::lt: return got < value;
    case Op::le: return got <= value;
    case Op::range: return got >= value && got <= max;
  }
  return false;
}

std::string CounterCheck::str() const {
  static const char* const kOps[] = {"==", "!=", ">", ">=", "<", "<="};
  if (op == Op::range) return fmt::format("in [{}, {}]", value, max);
  return fmt::format("{} {}", kOps[int(op)], value);
}

const char* to_string(FaultAction a) {
  switch (a) {
    case FaultAction::drop: return "drop";
    case FaultAction::duplicate: return "duplicate";
    case FaultAction::reorder: return "reorder";
    case FaultAction::corrupt: return "corrupt";
    case FaultAction::delay: return "delay";
    case FaultAction::ecn: return "ecn";
  }
  return "?";
}
const char* to_string(Datapath d) {
  switch (d) {
    case Datapath::rtl: return "rtl";
    case Datapath::model: return "model";
    case Datapath::user: return "user";
  }
  return "?";
}
const char* to_string(RegLayout l) { return l == RegLayout::v31 ? "3.1" : "4.x"; }
const regs::Layout& reg_layout(RegLayout l) { return l == RegLayout::v4x ? regs::kLayout4x : regs::kLayout31; }

std::string Scenario::datapath_name() const {
  return datapath == Datapath::user ? "user:" + datapath_user : to_string(datapath);
}

bool set_datapath(Scenario& sc, const std::string& name) {
  if (name == "rtl" || name == "model") {
    sc.datapath = name == "rtl" ? Datapath::rtl : Datapath::model;
    sc.datapath_user.clear();
    return true;
  }
  const std::string prefix = "user:";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) return false;
  const std::string u = name.substr(prefix.size());
  if (!std::all_of(u.begin(), u.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
    return false;
  sc.datapath = Datapath::user;
  sc.datapath_user = u;
  return true;
}

const NodeConfig* Scenario::find_node(const std::string& n) const {
  for (const auto& node : nodes)
    if (node.name == n) return &node;
  return nullptr;
}

}  // namespace ernic
