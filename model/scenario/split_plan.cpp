// model/scenario: which scenarios can run split, and which processes act
// in each step (split_plan.h).
#include "model/scenario/split_plan.h"

#include <fmt/format.h>

namespace ernic {

namespace {

bool splittable(const Step& s, std::string* why, bool star);

// The step kinds phase 1 runs split (model/system/split.h). star: a switch
// topology (split_star.cpp). The steps whose connection ends trade values
// (recover, disconnect, qp_adopt) run in those two ends' processes only
// (ParticipantsV), so with a switch too the one fact the second end waits
// for is the first end's, relayed by the switch's process (split_exchange).
struct SplittableV {
  std::string* why;
  bool star;
  bool operator()(const InitStep&) const { return true; }
  bool operator()(const RegisterMrStep&) const { return true; }
  bool operator()(const FillStep&) const { return true; }
  bool operator()(const MemWriteStep&) const { return true; }
  bool operator()(const MemExpectStep&) const { return true; }
  bool operator()(const PostStep&) const { return true; }
  bool operator()(const WaitCompletionsStep&) const { return true; }
  bool operator()(const RecvStep&) const { return true; }
  bool operator()(const CheckMemoryStep&) const { return true; }
  bool operator()(const WaitStep&) const { return true; }
  bool operator()(const RegWriteStep&) const { return true; }
  bool operator()(const RegReadStep&) const { return true; }
  bool operator()(const RegExpectStep&) const { return true; }
  bool operator()(const RegPollStep&) const { return true; }
  // fault, link: every process installs the rule or the state on the
  // direction's line; only the process that sends on that line's sending
  // half acts (a star: X's uplink in X's process, the switch's downlinks in
  // the switch's), so each fault is applied and reported once.
  bool operator()(const FaultStep&) const { return true; }
  bool operator()(const LinkStep&) const { return true; }
  bool operator()(const ExpectFramesStep&) const { return true; }
  bool operator()(const ExpectIdleStep&) const { return true; }
  bool operator()(const WaitUntilStep&) const { return true; }
  bool operator()(const DeregisterMrStep&) const { return true; }
  bool operator()(const DebugPresetStep&) const { return true; }
  bool operator()(const HwHandshakeStep&) const { return true; }
  bool operator()(const ConnectRejectStep&) const { return true; }
  // expect_compliance: every process's count, summed (a star's too:
  // System::split_sum hears every process through the switch's).
  bool operator()(const ExpectComplianceStep&) const { return true; }
  bool operator()(const RecoverStep&) const { return true; }
  bool operator()(const DisconnectStep&) const { return true; }
  bool operator()(const ExpectSwitchStep&) const { return true; }
  bool operator()(const QpSetupStep&) const { return true; }
  bool operator()(const QpReleaseStep&) const { return true; }
  bool operator()(const QpAdoptStep&) const { return true; }
  bool operator()(const ExpectQpStep&) const { return true; }
  // bypass_send: the frames built in every process (each keeps them for
  // expect_bypass), sent by the source's; nothing traded.
  bool operator()(const BypassSendStep&) const { return true; }
  bool operator()(const ProgramStep&) const { return true; }
  bool operator()(const ExpectBypassStep&) const { return true; }
  bool operator()(const ConnectStep& c) const {
    if (c.batch)
      *why = "the step `connect` with batch";
    return why->empty();
  }
  bool operator()(const std::shared_ptr<RepeatStep>& r) const {
    for (const Step& x : r->steps)
      if (!splittable(x, why, star)) return false;
    return true;
  }
  // parallel: every branch runs in every process, each a lane of its own
  // (model/system/split.h), its steps in step across the processes.
  bool operator()(const std::shared_ptr<ParallelStep>& p) const {
    for (const auto& b : p->branches)
      for (const Step& x : b.steps)
        if (!splittable(x, why, star)) return false;
    return true;
  }
  bool operator()(const BarrierStep&) const { return true; }
  template <class T>
  bool operator()(const T&) const {
    return false;
  }
};

bool splittable(const Step& s, std::string* why, bool star) {
  const bool ok = std::visit(SplittableV{why, star}, s);
  if (!ok && why->empty()) *why = std::string("the step `") + step_kind(s) + "`";
  return ok;
}

// A step's participants: the nodes whose processes act in it; empty: every
// process (each does the same by itself).
struct ParticipantsV {
  std::vector<std::string> operator()(const InitStep& x) const { return x.nodes; }
  std::vector<std::string> operator()(const ConnectStep& x) const { return {x.client, x.server}; }
  std::vector<std::string> operator()(const WaitStep&) const { return {}; }
  std::vector<std::string> operator()(const std::shared_ptr<RepeatStep>&) const { return {}; }
  std::vector<std::string> operator()(const RegWriteStep& x) const { return {x.ref.node}; }
  std::vector<std::string> operator()(const RegReadStep& x) const { return {x.ref.node}; }
  std::vector<std::string> operator()(const RegExpectStep& x) const { return {x.ref.node}; }
  std::vector<std::string> operator()(const RegPollStep& x) const { return {x.ref.node}; }
  std::vector<std::string> operator()(const RegisterMrStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const FillStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const MemWriteStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const MemExpectStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const PostStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const WaitCompletionsStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const RecvStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const CheckMemoryStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const DeregisterMrStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const DebugPresetStep& x) const { return {x.ref.node}; }
  std::vector<std::string> operator()(const HwHandshakeStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const QpSetupStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const QpReleaseStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const ExpectQpStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const ExpectSwitchStep&) const { return {kSplitSwitch}; }  // its process
  std::vector<std::string> operator()(const ExpectBypassStep& x) const { return {x.node}; }
  std::vector<std::string> operator()(const ProgramStep& x) const { return {x.node}; }
  // bypass_send: every process (each keeps the frames for expect_bypass; the source's sends them).
  // qp_adopt: each end's process takes its end, the second after the first (steps_qp_setup.cpp).
  std::vector<std::string> operator()(const QpAdoptStep& x) const { return {x.client.node, x.server.node}; }
  std::vector<std::string> operator()(const ConnectRejectStep& x) const { return {x.client, x.server}; }
  // expect_compliance: every process, each counting its own node's frames (split_sum sums them).
  // recover, disconnect: the connection's two ends (the parser's), the second after the first
  // (steps_connection.cpp); with a switch no other process takes part, so the fact the second
  // waits for can only be the first's.
  std::vector<std::string> operator()(const RecoverStep& x) const { return {x.client, x.server}; }
  std::vector<std::string> operator()(const DisconnectStep& x) const { return {x.client, x.server}; }
  // A direction's frames are its sender's (tx) or its receiver's (rx).
  std::vector<std::string> operator()(const ExpectFramesStep& x) const {
    return {x.tap == Tap::tx ? x.dir.from : x.dir.to};
  }
  std::vector<std::string> operator()(const WaitUntilStep& x) const {
    return {x.frames_dir ? x.frames_dir->from : x.reg->node};
  }
  // fault, link: every process installs the rule on the direction's line
  // (only the process with its sending half acts: the sender's, or with a
  // switch on switch->X the switch's); expect_idle: each watches its own
  // sends and the CQE counts are summed; expect_compliance: summed too.
  template <class T>
  std::vector<std::string> operator()(const T&) const {  // not splittable (split_refusal): every process
    return {};
  }
};


}  // namespace

std::vector<std::string> split_participants(const Step& s) { return std::visit(ParticipantsV{}, s); }

SplitEnd split_end(const Step& s) {
  if (std::holds_alternative<FaultStep>(s) || std::holds_alternative<LinkStep>(s) ||
      std::holds_alternative<WaitStep>(s) || std::holds_alternative<ExpectIdleStep>(s) ||
      std::holds_alternative<ExpectComplianceStep>(s))
    return SplitEnd::alike;
  if (std::holds_alternative<BarrierStep>(s)) return SplitEnd::barrier;
  if (std::holds_alternative<DebugPresetStep>(s)) return SplitEnd::at_start;
  if (const auto* w = std::get_if<RegWriteStep>(&s)) {
    // A field of a register that is not W1C is a read-modify-write: the
    // read waits for its completion (System::handle(RegWriteStep)).
    const regs::RegInfo* r = regs::find_register(w->ref.reg);
    if (w->ref.field.empty() || (r && r->access == regs::Access::W1C)) return SplitEnd::at_start;
  }
  return SplitEnd::own;
}

std::string split_refusal(const Scenario& sc) {
  const std::string where = sc.file;
  if (const auto& t = sc.topology_switch) {
    for (size_t i = 0; i < t->ports.size(); ++i)
      if (t->ports[i].delay_ns == 0)
        return fmt::format("{}: topology.switch.ports.{}.delay_ns 0 cannot run split (a split run needs a "
                           "propagation delay above 0: the lookahead)",
                           (t->ports[i].delay_loc.file.empty() ? t->loc : t->ports[i].delay_loc).str(),
                           sc.nodes[i].name);
  } else if (sc.link.delay_ns == 0) {
    return where + ": link.delay_ns 0 cannot run split (a split run needs a propagation delay above 0: the lookahead)";
  }
  for (const Step& s : sc.steps) {
    std::string why;
    if (!splittable(s, &why, sc.topology_switch.has_value()))
      return step_loc(s).str() + ": " + why + " cannot run split yet";
  }
  return "";
}

}  // namespace ernic
