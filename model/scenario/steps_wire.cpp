// model/scenario: the wire steps (scenarios/README.md 5.5): directions
// ("X->Y", "both"), BTH opcodes, frame matches, fault, link, bypass_send,
// expect_bypass.
#include <algorithm>
#include <cctype>

#include "model/roce/opcodes.h"
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

const EnumTable<FaultAction> kFaultActions = {{"drop", FaultAction::drop},
                                              {"duplicate", FaultAction::duplicate},
                                              {"reorder", FaultAction::reorder},
                                              {"corrupt", FaultAction::corrupt},
                                              {"delay", FaultAction::delay},
                                              {"ecn", FaultAction::ecn}};
const EnumTable<bool> kLinkStates = {{"down", false}, {"up", true}};
// corrupt: the named fields a fault may flip a bit in.
const std::vector<std::string> kCorruptFields = {
    "bth.opcode", "bth.psn", "bth.dest_qp", "bth.flags", "aeth.syndrome", "eth.dst", "eth.src",  "ip.version",
    "ip.flags",   "ip.ttl",  "ip.checksum", "ip.src",    "ip.dst",        "udp.length", "icrc", "payload"};

}  // namespace

uint8_t read_opcode(const Field& f) {
  if (!f.node.IsScalar()) f.fail("expected an opcode name or number, got " + describe(f.node));
  const std::string& s = f.node.Scalar();
  if (is_plain_scalar(f.node) && !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) {
    const uint64_t v = read_uint(f, 0, 255);
    if (!roce::opcode_info(uint8_t(v)))
      f.fail(fmt::format("{} ({:#04x}) is not an opcode the simulator knows (reserved or unsupported)", s, v));
    return uint8_t(v);
  }
  const std::string name = read_string(f);
  std::vector<std::string> names;
  for (unsigned c = 0; c < 256; ++c)
    if (const roce::OpcodeInfo* oi = roce::opcode_info(uint8_t(c))) {
      if (name == oi->name) return uint8_t(c);
      names.push_back(oi->name);
    }
  f.fail("unknown opcode '" + name + "'" + suggest(name, names, "opcodes are"));
}

std::vector<uint8_t> read_opcodes(const Field& f) {
  if (!f.node.IsSequence()) {
    if (is_plain_scalar(f.node) && f.node.Scalar() == "any") return {};
    return {read_opcode(f)};
  }
  const std::vector<Field> items = read_list(f);
  if (items.empty()) f.fail("expected at least one opcode (or leave opcode out, or write any)");
  std::vector<uint8_t> out;
  for (const Field& it : items) {
    if (is_plain_scalar(it.node) && it.node.Scalar() == "any")
      it.fail("'any' matches every opcode and cannot be part of a list");
    const uint8_t op = read_opcode(it);
    if (std::find(out.begin(), out.end(), op) != out.end())
      it.fail(fmt::format("opcode {} is listed twice", roce::opcode_name(op)));
    out.push_back(op);
  }
  return out;
}

Direction Parser::read_dir(const Field& f) {
  const std::string text = read_string(f);
  const size_t arrow = text.find("->");
  if (arrow == std::string::npos)
    f.fail("expected a direction 'X->Y' between two nodes, got '" + text + "'");
  Direction d{trim(text.substr(0, arrow)), trim(text.substr(arrow + 2))};
  for (const std::string* n : {&d.from, &d.to})
    if (!node_index_.count(*n) && !(*n == kSwitchEnd && sc_.topology_switch)) {
      if (*n == kSwitchEnd)
        f.fail("'switch' in direction '" + text + "' is the switch of `topology: switch`, and this scenario has none");
      std::vector<std::string> names;
      for (const auto& node : sc_.nodes) names.push_back(node.name);
      f.fail("unknown node '" + *n + "' in direction '" + text + "'" + suggest(*n, names, "nodes are"));
    }
  if (d.from == d.to) f.fail("a direction needs two different nodes, got '" + text + "'");
  return d;
}

std::vector<Direction> Parser::read_dirs(const Field& f) {
  if (f.node.IsScalar() && f.node.Scalar() == "both")
    return both_dirs([&](const std::string& m) { f.fail(m); });
  return {read_dir(f)};
}

Direction Parser::read_one_dir(const Field& f, const char* why) {
  if (f.node.IsScalar() && f.node.Scalar() == "both") f.fail(std::string("give one direction 'X->Y': ") + why);
  return read_dir(f);
}

FrameMatch Parser::read_match(const Field& f) {
  MapReader r(f, {"opcode", "psn", "dest_qp", "nth", "probability"});
  FrameMatch m;
  if (auto o = r.take("opcode")) m.opcodes = read_opcodes(*o);
  if (auto p = r.opt_u64("psn", 0, kMaxPsn)) m.psn = uint32_t(*p);
  if (auto q = r.opt_u64("dest_qp", 0, kMaxQpn)) m.dest_qp = uint32_t(*q);
  if (auto n = r.opt_u64("nth", 1, kMaxU32)) m.nth = uint32_t(*n);
  if (auto p = r.take("probability")) m.probability = read_double(*p, 0.0, 1.0);
  r.finish();
  return m;
}

void Parser::step_fault(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"name", "dir", "match", "action", "count", "after", "delay_ns", "byte", "field", "bit", "value",
                  "repair"});
  FaultStep s;
  s.loc = loc;
  if (auto nf = r.take("name")) {
    s.name = read_string(*nf);
    if (s.name.empty()) nf->fail("the fault's name must not be empty");
  } else {
    s.name = fmt::format("fault@{}", loc.line);
  }
  s.dirs = read_dirs(r.req("dir"));
  if (auto m = r.take("match")) s.match = read_match(*m);
  s.action = read_enum(r.req("action"), kFaultActions);
  s.count = uint32_t(r.u64("count", s.count, 0, kMaxU32));
  // Keys that belong to one action only.
  const auto only = [&](const char* key, FaultAction a) {
    auto x = r.take(key);
    if (x && s.action != a)
      x->fail_key(fmt::format("{} applies only to action: {}, not {}", key, to_string(a), to_string(s.action)));
    return x;
  };
  if (auto x = only("after", FaultAction::reorder)) s.reorder_after = uint32_t(read_uint(*x, 1, kMaxU32));
  if (auto x = only("delay_ns", FaultAction::delay))
    s.delay_ns = read_uint(*x, 1, kMaxDelayNs);
  else if (s.action == FaultAction::delay)
    r.missing("delay_ns", "action delay needs the extra latency");
  const auto bf = only("byte", FaultAction::corrupt);
  const auto ff = only("field", FaultAction::corrupt);
  const auto bitf = only("bit", FaultAction::corrupt);
  const auto valf = only("value", FaultAction::corrupt);
  const auto repf = only("repair", FaultAction::corrupt);
  if (s.action == FaultAction::corrupt) {
    if (bitf && valf) later(*bitf, *valf).fail_key("give either bit (a flip) or value (the new byte), not both");
    if (valf) s.corrupt_value = uint8_t(read_uint(*valf, 0, 255));
    if (repf) s.repair = read_bool(*repf);
    if (bf && ff) later(*bf, *ff).fail_key("give either byte or field, not both");
    if (!bf && !ff)
      r.self().fail("action corrupt needs 'byte' (an offset in the frame) or 'field' (" + join(kCorruptFields) +
                    ")");
    if (bf) s.corrupt_byte = uint32_t(read_uint(*bf, 0, kMaxFrameBytes - 1));
    if (ff) {
      s.corrupt_field = read_string(*ff);
      if (std::find(kCorruptFields.begin(), kCorruptFields.end(), s.corrupt_field) == kCorruptFields.end())
        ff->fail("unknown field '" + s.corrupt_field + "'" + suggest(s.corrupt_field, kCorruptFields));
    }
    if (bitf) s.corrupt_bit = uint32_t(read_uint(*bitf, 0, 7));
  }
  r.finish();
  emit(std::move(s));
}

void Parser::step_link(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"dir", "state"});
  LinkStep s;
  s.loc = loc;
  s.dirs = read_dirs(r.req("dir"));
  s.up = read_enum(r.req("state"), kLinkStates);
  r.finish();
  emit(std::move(s));
}

void Parser::step_bypass_send(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "to", "ethertype", "udp_dport", "length", "pattern", "seed", "value", "count"});
  BypassSendStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"));
  const Field tf = r.req("to");
  s.to = ref_node(tf);
  if (s.to == s.node) tf.fail("a node does not send to itself");
  const auto ef = r.take("ethertype");
  const auto uf = r.take("udp_dport");
  if (ef && uf) later(*ef, *uf).fail_key("give either ethertype or udp_dport, not both");
  if (!ef && !uf) r.self().fail("bypass_send needs one of 'ethertype' (a raw frame) or 'udp_dport' (IPv4/UDP)");
  if (ef) {
    s.ethertype = uint16_t(read_uint(*ef, 0x0600, 0xFFFF));
    if (*s.ethertype == 0x0800 || *s.ethertype == 0x86DD)
      ef->fail("for an IP frame use udp_dport; ethertype makes a raw frame of another protocol");
  }
  if (uf) {
    s.udp_dport = uint16_t(read_uint(*uf, 0, 0xFFFF));
    if (*s.udp_dport == 4791) uf->fail("UDP port 4791 is RoCEv2: such a frame goes to ERNIC, not to the bypass path");
    for (const std::string& nn : {s.node, s.to})
      if (!sc_.nodes[node_index_.at(nn)].has_ip)
        uf->fail_key("udp_dport makes an IPv4 datagram, and node " + nn + " has no IPv4 address (`ip`)");
  }
  const size_t hdr = s.ethertype ? 14 : 14 + 20 + 8;
  const auto lf = r.take("length");
  if (lf) s.length = uint32_t(read_uint(*lf, 0, 9000));
  if (hdr + s.length < 60)
    (lf ? *lf : r.self()).fail(fmt::format("the frame would have {} bytes; Ethernet needs at least 60 before the FCS"
                                           " (length >= {})", hdr + s.length, 60 - hdr));
  if (r.has("pattern")) {
    const PatternSpec p = read_pattern(r);
    s.pattern = p.pattern;
    s.seed = p.seed;
    s.value = p.value;
  }
  s.count = uint32_t(r.u64("count", 1, 1, 100000));
  r.finish();
  emit(std::move(s));
}

void Parser::step_expect_bypass(const Field& f, const SourceLoc& loc) {
  MapReader r(f, {"node", "count", "timeout_us"});
  ExpectBypassStep s;
  s.loc = loc;
  s.node = ref_node(r.req("node"));
  s.count = uint32_t(r.u64("count", 1, 0, 100000));
  s.timeout_us = r.u64("timeout_us", s.timeout_us, 1, kMaxTimeUs);
  r.finish();
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
