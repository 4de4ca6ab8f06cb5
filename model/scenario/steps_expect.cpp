// model/scenario: the expectation steps (scenarios/README.md 5.6): frame
// patterns, expect_frames, expect_idle, expect_compliance, wait_until,
// expect_switch, expect_qp.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "model/link/switch_counters.h"
#include "model/roce/opcodes.h"
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

const EnumTable<Tap> kTaps = {{"tx", Tap::tx}, {"rx", Tap::rx}};

// `repeat:` of a frame pattern.
void read_frame_repeat(const Field& f, FramePattern& p) {
  constexpr uint64_t kMaxRep = FramePattern::kUnbounded - 1;
  if (f.node.IsSequence()) {
    const std::vector<Field> items = read_list(f);
    if (items.size() != 2) f.fail(fmt::format("expected [min, max], got a list of {}", items.size()));
    const uint64_t lo = read_uint(items[0], 0, kMaxRep);
    const uint64_t hi = read_uint(items[1], 1, kMaxRep);
    if (hi < lo) items[1].fail(fmt::format("max {} is less than min {}", hi, lo));
    p.min = uint32_t(lo);
    p.max = uint32_t(hi);
    return;
  }
  if (f.node.IsScalar() && (f.node.Tag() == "!" || is_plain_scalar(f.node))) {
    const std::string& s = f.node.Scalar();
    if (s == "*" || s == "+") {
      p.min = s == "*" ? 0 : 1;
      p.max = FramePattern::kUnbounded;
      return;
    }
    if (is_plain_scalar(f.node) && !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) {
      p.min = p.max = uint32_t(read_uint(f, 1, kMaxRep));
      return;
    }
  }
  f.fail("expected \"*\" (any number), \"+\" (one or more), a count, or [min, max], got " + describe(f.node));
}

FramePattern read_frame_pattern(const Field& f, bool first) {
  MapReader r(f, {"opcode", "psn", "syndrome", "msn", "dest_qp", "repeat"});
  FramePattern p;
  if (auto o = r.take("opcode")) p.opcodes = read_opcodes(*o);
  if (auto pf = r.take("psn")) {
    const std::string& v = pf->node.IsScalar() ? pf->node.Scalar() : std::string();
    if (is_plain_scalar(pf->node) && v == "next") {
      if (first) pf->fail("psn: next needs a frame before it, and this is the first frame of the list");
      p.psn_next = true;
    } else {
      if (is_plain_scalar(pf->node) && !v.empty() && !std::isdigit(static_cast<unsigned char>(v[0])) &&
          v[0] != '-')
        pf->fail("expected 'next' or a PSN 0..0xFFFFFF, got '" + v + "'");
      p.psn = uint32_t(read_uint(*pf, 0, kMaxPsn));
    }
  }
  if (auto sf = r.take("syndrome")) {
    p.syndrome = uint8_t(read_uint(*sf, 0, 255));
    for (const uint8_t op : p.opcodes)
      if (!(roce::opcode_info(op)->ext & roce::kExtAeth))
        sf->fail_key(fmt::format("syndrome is the AETH's, and {} carries no AETH", roce::opcode_name(op)));
  }
  if (auto mf = r.take("msn")) {
    p.msn = uint32_t(read_uint(*mf, 0, 0xFFFFFF));
    for (const uint8_t op : p.opcodes)
      if (!(roce::opcode_info(op)->ext & roce::kExtAeth))
        mf->fail_key(fmt::format("msn is the AETH's, and {} carries no AETH", roce::opcode_name(op)));
  }
  if (auto q = r.opt_u64("dest_qp", 0, kMaxQpn)) p.dest_qp = uint32_t(*q);
  if (auto rf = r.take("repeat")) read_frame_repeat(*rf, p);
  r.finish();
  return p;
}

}  // namespace

void Parser::step_expect_frames(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"dir", "tap", "frames"});
  ExpectFramesStep s;
  s.loc = loc;
  s.dir = read_one_dir(r.req("dir"), "expect_frames checks the frames of one direction");
  s.tap = r.enm("tap", s.tap, kTaps);
  const std::vector<Field> items = read_list(r.req("frames"));
  for (size_t i = 0; i < items.size(); ++i) s.frames.push_back(read_frame_pattern(items[i], i == 0));
  r.finish();
  emit(std::move(s));
}

void Parser::step_expect_idle(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"us", "dir"});
  ExpectIdleStep s;
  s.loc = loc;
  s.us = r.req_u64("us", 1, kMaxTimeUs);
  if (auto d = r.take("dir"))
    s.dirs = read_dirs(*d);
  else
    s.dirs = both_dirs([&](const std::string& m) { r.missing("dir", "the default " + m); });
  r.finish();
  emit(std::move(s));
}

void Parser::step_expect_compliance(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"rule", "count"});
  ExpectComplianceStep s;
  s.loc = loc;
  const Field rf = r.req("rule");
  s.rule = read_string(rf);
  static const char* kRules[] = {"va_align", "len_64", "read_small", "send_zero", "msg_8m"};
  if (std::find(std::begin(kRules), std::end(kRules), s.rule) == std::end(kRules))
    rf.fail("unknown compliance rule '" + s.rule + "' (rules: va_align, len_64, read_small, send_zero, msg_8m)");
  s.count = r.u64("count", 0, 0, kMaxU64);
  r.finish();
  emit(std::move(s));
}

namespace {
// A counter's expected value: N, "OP N" (OP: == != > >= < <=) or [min, max].
CounterCheck read_counter_check(const Field& f, const std::string& counter) {
  CounterCheck c;
  c.counter = counter;
  if (f.node.IsSequence()) {
    const std::vector<Field> items = read_list(f);
    if (items.size() != 2) f.fail(fmt::format("expected [min, max], got a list of {}", items.size()));
    c.op = CounterCheck::Op::range;
    c.value = read_uint(items[0], 0, kMaxU64);
    c.max = read_uint(items[1], 0, kMaxU64);
    if (c.max < c.value) items[1].fail(fmt::format("max {} is less than min {}", c.max, c.value));
    return c;
  }
  if (is_plain_scalar(f.node)) {
    c.value = read_uint(f, 0, kMaxU64);
    return c;
  }
  const std::string text = f.node.IsScalar() ? f.node.Scalar() : std::string();
  static const std::pair<const char*, CounterCheck::Op> kOps[] = {
      {">=", CounterCheck::Op::ge}, {"<=", CounterCheck::Op::le}, {"==", CounterCheck::Op::eq},
      {"!=", CounterCheck::Op::ne}, {">", CounterCheck::Op::gt},  {"<", CounterCheck::Op::lt}};
  for (const auto& [op, kind] : kOps) {
    if (text.compare(0, std::strlen(op), op) != 0) continue;
    std::string num = text.substr(std::strlen(op));
    num.erase(0, num.find_first_not_of(' '));
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = num.empty() || !std::isdigit(static_cast<unsigned char>(num[0]))
                                     ? 0
                                     : std::strtoull(num.c_str(), &end, 0);
    if (num.empty() || !std::isdigit(static_cast<unsigned char>(num[0])) || errno || *end)
      break;
    c.op = kind;
    c.value = v;
    return c;
  }
  f.fail("expected a count N, a comparison \">0\" (==, !=, >, >=, <, <= and a number) or [min, max], got " +
         describe(f.node));
}
}  // namespace

// expect_switch: { port: NODE, COUNTER: VALUE, ... } (switch_counters.h).
void Parser::step_expect_switch(const Field& f, const SourceLoc& loc) {
  std::vector<std::string> keys = {"port"};
  for (const SwitchCounterName& c : kSwitchCounters) keys.push_back(c.name);
  MapReader r(f, keys);
  if (!sc_.topology_switch)
    r.self().fail("expect_switch needs a switch: give `topology: switch` (this scenario's topology is point to point)");
  ExpectSwitchStep s;
  s.loc = loc;
  s.port = ref_node(r.req("port"), /*must_be_initialised=*/false);
  for (const auto& kv : f.node) {  // in file order (every key is known: MapReader checked)
    const std::string key = kv.first.Scalar();
    if (key == "port") continue;
    if (auto v = r.take(key)) s.checks.push_back(read_counter_check(*v, key));
  }
  if (s.checks.empty()) {
    std::string names;
    for (size_t i = 1; i < keys.size(); ++i) names += (i > 1 ? ", " : "") + keys[i];
    r.self().fail("give at least one counter to check: " + names);
  }
  r.finish();
  emit(std::move(s));
}

// expect_qp: { node: NODE, qp: QPN, NAME: VALUE, ... } (kQpStateNames).
void Parser::step_expect_qp(const Field& f, const SourceLoc& loc) {
  std::vector<std::string> keys = {"node", "qp"};
  for (const char* n : kQpStateNames) keys.push_back(n);
  MapReader r(f, keys);
  ExpectQpStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"), /*must_be_initialised=*/false);
  s.qp = uint32_t(read_uint(r.req("qp"), 2, sc_.nodes[node_index_[s.node]].num_qp));
  for (const auto& kv : f.node) {  // in file order (every key is known: MapReader checked)
    const std::string key = kv.first.Scalar();
    if (key == "node" || key == "qp") continue;
    if (auto v = r.take(key)) s.checks.push_back(read_counter_check(*v, key));
  }
  if (s.checks.empty()) {
    std::string names;
    for (size_t i = 2; i < keys.size(); ++i) names += (i > 2 ? ", " : "") + keys[i];
    r.self().fail("give at least one value to check: " + names);
  }
  r.finish();
  emit(std::move(s));
}

void Parser::step_wait_until(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"timeout_us", "frames", "reg", "value", "mask"});
  WaitUntilStep s;
  s.loc = loc;
  s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
  const auto ff = r.take("frames");
  const auto rf = r.take("reg");
  if (ff && rf) later(*ff, *rf).fail_key("give either frames or reg, not both");
  if (!ff && !rf) r.self().fail("wait_until needs one of 'frames' or 'reg'");
  if (ff) {
    for (const char* k : {"value", "mask"})
      if (auto x = r.take(k)) x->fail_key(std::string(k) + " applies only with reg, not with frames");
    MapReader fr(*ff, {"dir", "count", "opcode"});
    s.frames_dir = read_one_dir(fr.req("dir"), "wait_until counts the frames of one direction");
    s.frames_count = uint32_t(fr.u64("count", s.frames_count, 1, kMaxU32));
    if (auto o = fr.take("opcode")) s.frames_opcodes = read_opcodes(*o);
    fr.finish();
  } else {
    MapReader rr(*rf, {"node", "reg", "qp", "mr", "field"});
    const RegTarget t = read_reg_ref(rr);
    rr.finish();
    s.reg = t.ref;
    read_value_mask(r, t, s.value, s.mask);
  }
  r.finish();
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
