// model/scenario: the register-level steps (scenarios/README.md 5.2):
// register references (node, register, QP or MR entry, field) and values,
// reg_write, debug_preset, reg_read, reg_expect, reg_poll.
#include <algorithm>
#include <cctype>

#include "model/regs/regs.h"
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

bool equal_ci(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

Parser::RegTarget Parser::read_reg_ref(MapReader& r) {
  RegTarget t;
  t.ref.node = ref_node(r.req("node"), false);
  const Field rf = r.req("reg");
  const std::string name = read_string(rf);
  const regs::RegInfo* info = regs::find_register(name);
  if (!info) {
    std::vector<std::string> names;
    for (const auto& ri : regs::all_registers()) names.push_back(ri.name);
    for (const auto& n : names)
      if (equal_ci(n, name))
        rf.fail("unknown register '" + name + "' (did you mean '" + n + "'? register names are case-sensitive)");
    if (const std::string* best = close_match(name, names))
      rf.fail("unknown register '" + name + "' (did you mean '" + *best + "'?)");
    rf.fail("unknown register '" + shown(name) +
            "' (register names as PG332 spells them: see model/regs/ernic_regs.def)");
  }
  t.ref.reg = name;
  auto qf = r.take("qp");
  auto mf = r.take("mr");
  switch (info->block) {
    case regs::Block::Qp: {
      if (mf) mf->fail_key(fmt::format("mr does not apply: {} is a per-QP register (give qp)", name));
      if (!qf) r.missing("qp", name + " is a per-QP register");
      const uint32_t num_qp = sc_.nodes[node_index_[t.ref.node]].num_qp;
      const uint32_t q = uint32_t(read_uint(*qf, 1, num_qp));
      if (q == 1 && !info->exists_on_qp1)
        qf->fail(fmt::format("{} does not exist for QP1 (the GSI QP has no such register in PG332)", name));
      t.ref.qp = q;
      break;
    }
    case regs::Block::Mr:
      if (qf) qf->fail_key(fmt::format("qp does not apply: {} is an MR-table register (give mr)", name));
      if (!mf) r.missing("mr", name + " is an MR-table register (give the entry, 0.." +
                                   std::to_string(kMaxMrsPerNode - 1) + ")");
      t.ref.mr = uint32_t(read_uint(*mf, 0, kMaxMrsPerNode - 1));
      break;
    case regs::Block::Global:
      if (qf) qf->fail_key(fmt::format("qp does not apply: {} is a global register", name));
      if (mf) mf->fail_key(fmt::format("mr does not apply: {} is a global register", name));
      break;
  }
  t.what = "register " + name + " (32 bits)";
  if (auto ff = r.take("field")) {
    const std::string fname = read_string(*ff);
    const regs::Layout& layout = reg_layout(sc_.layout);
    const regs::FieldInfo* fi = regs::find_field(name, fname, layout);
    if (!fi) {
      std::vector<std::string> fields;
      for (const auto* x : regs::fields_of(name))
        if (regs::find_field(name, x->name, layout)) fields.push_back(x->name);
      if (regs::find_field(name, fname, reg_layout(sc_.layout == RegLayout::v31 ? RegLayout::v4x : RegLayout::v31)))
        ff->fail(fmt::format("field '{}' of {} exists in the {} layout only; this scenario has layout {}", fname, name,
                             to_string(sc_.layout == RegLayout::v31 ? RegLayout::v4x : RegLayout::v31),
                             to_string(sc_.layout)));
      if (fields.empty())
        ff->fail(fmt::format("register {} has no named fields: give the whole register (leave out field)", name));
      ff->fail(fmt::format("unknown field '{}' of {}", fname, name) + suggest(fname, fields, "its fields are"));
    }
    t.ref.field = fname;
    t.width = fi->width;
    t.what = fmt::format("field {}.{} ({} bit{})", name, fname, fi->width, fi->width == 1 ? "" : "s");
  }
  return t;
}

uint32_t Parser::read_reg_value(const Field& f, const RegTarget& t) {
  const uint64_t v = read_uint(f, 0, kMaxU64);
  if (v > width_mask(t.width))
    f.fail(fmt::format("{} does not fit {}: at most {:#x}", f.node.Scalar(), t.what, width_mask(t.width)));
  return uint32_t(v);
}

void Parser::read_value_mask(MapReader& r, const RegTarget& t, uint32_t& value, uint32_t& mask) {
  const Field vf = r.req("value");
  value = read_reg_value(vf, t);
  mask = width_mask(t.width);
  if (auto mf = r.take("mask")) mask = read_reg_value(*mf, t);
  if (value & ~mask)
    vf.fail(fmt::format("value {:#x} has bits outside mask {:#x}: the comparison could never hold", value, mask));
}

void Parser::step_reg_write(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "reg", "qp", "mr", "field", "value"});
  RegWriteStep s;
  s.loc = loc;
  const RegTarget t = read_reg_ref(r);
  s.ref = t.ref;
  s.value = read_reg_value(r.req("value"), t);
  r.finish();
  emit(std::move(s));
}

void Parser::step_debug_preset(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "reg", "qp", "value"});
  DebugPresetStep s;
  s.loc = loc;
  const Field rf = r.req("reg");
  const RegTarget t = read_reg_ref(r);
  if (t.ref.reg != "STATSSNi" && t.ref.reg != "STATMSNi")
    rf.fail(fmt::format("debug_preset sets STATSSNi or STATMSNi only, not {} (write other registers with reg_write)",
                        t.ref.reg));
  s.ref = t.ref;
  s.value = uint32_t(read_uint(r.req("value"), 0, 0xFFFFFF));
  r.finish();
  emit(std::move(s));
}

void Parser::step_reg_read(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "reg", "qp", "mr", "field"});
  RegReadStep s;
  s.loc = loc;
  s.ref = read_reg_ref(r).ref;
  r.finish();
  emit(std::move(s));
}

void Parser::step_reg_expect(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "reg", "qp", "mr", "field", "value", "mask", "not"});
  RegExpectStep s;
  s.loc = loc;
  const RegTarget t = read_reg_ref(r);
  s.ref = t.ref;
  read_value_mask(r, t, s.value, s.mask);
  if (auto n = r.take("not")) s.negate = read_bool(*n);
  r.finish();
  emit(std::move(s));
}

void Parser::step_reg_poll(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "reg", "qp", "mr", "field", "value", "mask", "timeout_us", "interval_ns"});
  RegPollStep s;
  s.loc = loc;
  const RegTarget t = read_reg_ref(r);
  s.ref = t.ref;
  read_value_mask(r, t, s.value, s.mask);
  s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
  s.interval_ns = r.u64("interval_ns", s.interval_ns, 1, kMaxDelayNs);
  r.finish();
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
