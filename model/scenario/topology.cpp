// model/scenario: the top level of a scenario file and its topology:
// name, seed, limits, clocks, link, topology (point to point or a switch),
// pcie, datapath, layout, compliance, handshake_random and the nodes
// (addresses, ACK, MR cache, RX, test hooks).
#include <algorithm>
#include <cctype>

#include "model/scenario/parse.h"
#include "model/scenario/parse_extensions.h"

namespace ernic::scenario_parse {

namespace {

const EnumTable<RegLayout> kLayouts = {{"3.1", RegLayout::v31}, {"4.x", RegLayout::v4x}};
const EnumTable<ComplianceMode> kComplianceModes = {{"report", ComplianceMode::report}, {"fail", ComplianceMode::fail}};
const EnumTable<std::string> kCorruptStreams = {
    {"tx", "tx"}, {"rx_desc", "rx_desc"}, {"rx_payload", "rx_payload"}, {"bypass", "bypass"}};

// A power of two in [lo, hi], or `def` when the key is absent.
uint32_t read_pow2(MapReader& r, const std::string& key, uint32_t def, uint32_t lo, uint32_t hi) {
  auto f = r.take(key);
  if (!f) return def;
  const uint64_t v = read_uint(*f, 0, kMaxU32);
  if (v < lo || v > hi || (v & (v - 1)) != 0)
    f->fail(fmt::format("{} must be a power of two in [{}, {}], got {}", key, lo, hi, v));
  return uint32_t(v);
}

// ack, mr_cache, doorbell_layout, rx of a node.
void read_node_tuning(MapReader& r, NodeConfig& n) {
  if (auto a = r.take("ack")) {
    MapReader ar(*a, {"mode", "coalesce_packets", "timeout_ns"});
    static const EnumTable<uint32_t> kAckModes = {{"request_or_timeout", 0}, {"timeout", 1}, {"request", 2}};
    n.ack_mode = ar.enm("mode", n.ack_mode, kAckModes);
    n.ack_coalesce_packets = uint32_t(ar.u64("coalesce_packets", n.ack_coalesce_packets, 0, 4096));
    n.ack_timeout_ns = ar.u64("timeout_ns", n.ack_timeout_ns, 0, 1000000000ull);
    if (n.ack_mode == 1 && n.ack_timeout_ns == 0 && n.ack_coalesce_packets == 0)
      a->fail("ack mode 'timeout' with timeout_ns 0 and no coalesce_packets would never acknowledge");
    ar.finish();
  }
  if (auto m = r.take("mr_cache")) {  // `table` | `cam` | { mode: table|cam, entries: N }
    static const EnumTable<bool> kMrCache = {{"table", false}, {"cam", true}};
    if (m->node.IsMap()) {
      MapReader mr(*m, {"mode", "entries"});
      n.mr_cache_cam = read_enum(mr.req("mode"), kMrCache);
      if (auto e = mr.take("entries")) {
        if (!n.mr_cache_cam) e->fail("entries is a parameter of mode 'cam'");
        n.mr_cache_entries = uint32_t(read_uint(*e, 1, 256));
      }
      mr.finish();
    } else {
      n.mr_cache_cam = read_enum(*m, kMrCache);
    }
    // The CAM fetches MR contexts from a table the built-in driver keeps
    // below the first MiB, where a program's memory does not reach.
    if (n.mr_cache_cam && n.host_program)
      m->fail("mr_cache: cam needs the built-in driver (its MR context table lies below a program's memory); "
              "this node has host: program");
  }
  if (auto d = r.take("doorbell_layout")) {
    static const EnumTable<uint32_t> kLayouts = {{"qp_line", 0}, {"shared_line", 1}, {"spread", 2}};
    n.doorbell_layout = read_enum(*d, kLayouts);
    if (n.host_program)
      d->fail("doorbell_layout is the built-in driver's; this node has host: program (its program places them)");
  }
  if (auto x = r.take("rx")) {
    MapReader xr(*x, {"buffer_bytes", "handler_gbps", "overflow"});
    n.rx_buffer_bytes = uint32_t(xr.u64("buffer_bytes", n.rx_buffer_bytes, 256, 1u << 30));
    n.rx_handler_gbps = xr.dbl("handler_gbps", n.rx_handler_gbps, 0.0, 1000.0);
    static const EnumTable<bool> kOverflow = {{"drop", false}, {"fail", true}};
    n.rx_overflow_fails = xr.enm("overflow", false, kOverflow);
    xr.finish();
  }
}

// test_tx_underflow, test_datapath_corrupt of a node.
void read_node_test_hooks(MapReader& r, NodeConfig& n) {
  if (auto u = r.take("test_tx_underflow")) {
    MapReader ur(*u, {"frame", "after_beat", "cycles"});
    NodeConfig::TxBubble b;
    b.frame = ur.u64("frame", b.frame, 0, 1ull << 40);
    b.after_beat = uint32_t(ur.u64("after_beat", b.after_beat, 0, 255));
    b.cycles = uint32_t(ur.u64("cycles", b.cycles, 1, 1000000));
    ur.finish();
    n.test_tx_underflow = b;
  }
  if (auto c = r.take("test_datapath_corrupt")) {
    MapReader cr(*c, {"stream", "frame", "offset", "xor"});
    NodeConfig::DatapathCorrupt k;
    k.stream = read_enum(cr.req("stream"), kCorruptStreams);
    k.frame = cr.u64("frame", k.frame, 0, 1ull << 40);
    k.offset = uint32_t(cr.u64("offset", k.offset, 0, k.stream == "rx_desc" ? 1023 : 65535));
    k.xor_mask = uint32_t(cr.u64("xor", k.xor_mask, 1, k.stream == "rx_desc" ? 1 : 255));
    cr.finish();
    n.test_datapath_corrupt = k;
  }
}

}  // namespace

roce::MacAddr parse_mac(const Field& f, const std::string& s) {
  auto mac = roce::MacAddr::parse(s);
  if (!mac) f.fail("malformed MAC address '" + s + "' (expected six hex bytes like 02:00:00:00:00:0a)");
  return *mac;
}

roce::Ipv4Addr parse_ipv4(const Field& f, const std::string& s) {
  auto ip = roce::Ipv4Addr::parse(s);
  if (!ip) f.fail("malformed IPv4 address '" + s + "' (expected a.b.c.d)");
  return *ip;
}

void Parser::parse_top(const Field& root) {
  MapReader r(root, {"scenario", "description", "seed", "limits", "clocks", "link", "topology", "pcie", "datapath",
                     "layout", "compliance", "handshake_random", "nodes", "steps"});
  {
    const Field f = r.req("scenario");
    sc_.name = read_string(f);
    const bool ok = !sc_.name.empty() &&
                    std::isalnum(static_cast<unsigned char>(sc_.name[0])) &&
                    std::all_of(sc_.name.begin(), sc_.name.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                    });
    if (!ok) f.fail("invalid scenario name '" + sc_.name + "': use letters, digits, '_', '-', '.'");
  }
  sc_.description = r.str("description", "");
  sc_.seed = r.u64("seed", 1, 0, kMaxU64);
  if (auto f = r.take("limits")) parse_limits(*f);
  if (auto f = r.take("clocks")) parse_clocks(*f);
  if (auto f = r.take("link")) parse_link(*f);
  if (auto f = r.take("pcie")) parse_pcie(*f);
  sc_.datapath_loc = SourceLoc{ctx_.file, 0, 0};
  if (auto f = r.take("datapath")) {
    sc_.datapath_loc = f->loc();
    if (!f->node.IsScalar()) f->fail("expected rtl, model or user:<name>, got " + describe(f->node));
    const std::string s = read_string(*f);
    if (!set_datapath(sc_, s)) {
      if (s.compare(0, 5, "user:") == 0)
        f->fail("invalid datapath '" + s + "': user:<name> takes a name of letters, digits and '_'");
      f->fail("unknown value '" + s + "'" + suggest(s, {"rtl", "model", "user:<name>"}));
    }
  }
  sc_.layout = r.enm("layout", sc_.layout, kLayouts);
  sc_.compliance = r.enm("compliance", sc_.compliance, kComplianceModes);
  if (auto h = r.take("handshake_random")) sc_.handshake_random = parse_handshake_random(*h);
  parse_nodes(r.req("nodes"));
  if (auto f = r.take("topology")) parse_topology(*f);
  const Field steps = r.req("steps");
  r.finish();
  parse_steps(steps, sc_.steps, Scope{});
}

// `handshake_random: {seed: S, ready_pct: R, valid_pct: V}` (each key
// optional), `true` (the defaults) or `false` (off).
HandshakeRandom Parser::parse_handshake_random(const Field& f) {
  HandshakeRandom h;
  h.seed = sc_.seed;
  if (is_plain_scalar(f.node)) {
    h.enabled = read_bool(f);
    return h;
  }
  if (!f.node.IsMap()) f.fail("expected a map {seed, ready_pct, valid_pct}, true or false, got " + describe(f.node));
  MapReader r(f, {"seed", "ready_pct", "valid_pct"});
  h.seed = r.u64("seed", h.seed, 0, kMaxU64);
  h.ready_pct = uint32_t(r.u64("ready_pct", h.ready_pct, 1, 100));
  h.valid_pct = uint32_t(r.u64("valid_pct", h.valid_pct, 1, 100));
  r.finish();
  return h;
}

void Parser::parse_limits(const Field& f) {
  MapReader r(f, {"sim_time_us", "watchdog_us", "after_error_us", "livelock_retries"});
  sc_.limits.sim_time_us = r.u64("sim_time_us", sc_.limits.sim_time_us, 1, kMaxTimeUs);
  sc_.limits.watchdog_us = r.u64("watchdog_us", sc_.limits.watchdog_us, 1, kMaxTimeUs);
  sc_.limits.after_error_us = r.u64("after_error_us", sc_.limits.after_error_us, 0, kMaxTimeUs);
  // 0 (off) or more retries than any retry count allows (TIMEOUTCONFi[10:8]
  // is at most 7): fewer would call a recovering go-back-N a livelock.
  if (auto lf = r.take("livelock_retries")) {
    const uint64_t v = read_uint(*lf, 0, 1000000);
    if (v >= 1 && v <= 7)
      lf->fail(fmt::format("{} is not a livelock: give 0 (not watched) or at least 8 (a QP's retry count, "
                           "TIMEOUTCONFi[10:8], allows up to 7 retries)", v));
    sc_.limits.livelock_retries = uint32_t(v);
  }
  r.finish();
}

void Parser::parse_clocks(const Field& f) {
  MapReader r(f, {"core_mhz", "cmac_mhz"});
  // (0.5, 1000]: periods from 1 ns to 2 us, whole picoseconds after rounding.
  sc_.clocks.core_mhz = r.dbl("core_mhz", sc_.clocks.core_mhz, 0.5, 1000.0);
  sc_.clocks.cmac_mhz = r.dbl("cmac_mhz", sc_.clocks.cmac_mhz, 0.5, 1000.0);
  r.finish();
}

void Parser::parse_link(const Field& f) {
  MapReader r(f, {"rate_gbps", "delay_ns"});
  if (auto rate = r.take("rate_gbps")) {
    const uint64_t v = read_uint(*rate, 1, kMaxU32);
    if (v != 100) rate->fail(fmt::format("only 100 Gb/s links are supported, got {}", v));
    sc_.link.rate_gbps = uint32_t(v);
  }
  sc_.link.delay_ns = r.u64("delay_ns", sc_.link.delay_ns, 0, kMaxDelayNs);
  r.finish();
}

// `topology: point_to_point` (the default: one link, `link`), or a switch:
// `topology: switch` (every default) or `topology: { switch: {...} }`.
void Parser::parse_topology(const Field& f) {
  static const std::vector<std::string> kKinds = {"point_to_point", "switch"};
  std::optional<Field> sw;
  if (f.node.IsScalar()) {
    const std::string s = read_string(f);
    if (s == "point_to_point") return;
    if (s != "switch") f.fail("unknown topology '" + s + "'" + suggest(s, kKinds));
  } else if (f.node.IsMap()) {
    MapReader r(f, {"point_to_point", "switch"});
    if (r.has("point_to_point") && r.has("switch")) f.fail("give one topology: point_to_point or switch");
    if (auto p = r.take("point_to_point")) {
      if (!(p->node.IsNull() || (p->node.IsMap() && p->node.size() == 0)))
        p->fail("point_to_point has no parameters (the link's are under `link`)");
      r.finish();
      return;
    }
    sw = r.req("switch");
    r.finish();
  } else {
    f.fail("expected point_to_point, switch or { switch: {...} }, got " + describe(f.node));
  }
  if (auto it = node_index_.find(kSwitchEnd); it != node_index_.end()) {
    const SourceLoc& l = sc_.nodes[it->second].loc;
    throw ScenarioError(l.file, l.line, l.column, "nodes.switch",
                        "a node may not be named 'switch' with topology: switch (directions name the switch so)");
  }
  SwitchTopology t;
  t.loc = f.loc();
  for (size_t i = 0; i < sc_.nodes.size(); ++i) t.ports.push_back({sc_.link.rate_gbps, sc_.link.delay_ns});
  if (sw && !sw->node.IsNull()) {
    if (!sw->node.IsMap()) sw->fail("expected a map of the switch's parameters, got " + describe(sw->node));
    MapReader r(*sw, {"latency_ns", "buffer_bytes", "unknown", "ports", "ecn", "pfc"});
    t.latency_ns = r.u64("latency_ns", t.latency_ns, 0, kMaxDelayNs);
    t.buffer_bytes = r.u64("buffer_bytes", t.buffer_bytes, 256, 1ull << 32);
    static const EnumTable<bool> kUnknown = {{"drop", false}, {"flood", true}};
    t.flood_unknown = r.enm("unknown", false, kUnknown);
    if (auto p = r.take("ports")) {
      if (!p->node.IsMap()) p->fail("expected a map of node name -> { rate_gbps, delay_ns }, got " + describe(p->node));
      std::vector<std::string> names;
      for (const auto& n : sc_.nodes) names.push_back(n.name);
      MapReader pr(*p, names);
      for (size_t i = 0; i < sc_.nodes.size(); ++i) {
        auto pf = pr.take(sc_.nodes[i].name);
        if (!pf) continue;
        MapReader lr(*pf, {"rate_gbps", "delay_ns"});
        if (auto rf = lr.take("rate_gbps")) {
          const uint64_t v = read_uint(*rf, 1, kMaxU32);
          if (v != 10 && v != 25 && v != 40 && v != 50 && v != 100)
            rf->fail(fmt::format("rate_gbps must be one of 10, 25, 40, 50, 100, got {}", v));
          t.ports[i].rate_gbps = uint32_t(v);
        }
        if (auto df = lr.take("delay_ns")) {
          t.ports[i].delay_ns = read_uint(*df, 0, kMaxDelayNs);
          t.ports[i].delay_loc = df->loc();
        }
        lr.finish();
      }
      pr.finish();
    }
    if (auto e = r.take("ecn")) {
      MapReader er(*e, {"threshold_bytes", "min_bytes", "max_bytes", "probability", "weight", "mark_not_ect"});
      t.ecn.on = true;
      auto th = er.take("threshold_bytes");
      auto mn = er.take("min_bytes");
      auto mx = er.take("max_bytes");
      auto pr = er.take("probability");
      auto wt = er.take("weight");
      const std::optional<Field> red = mn ? mn : mx ? mx : pr ? pr : wt;
      if (th && red)
        later(*th, *red).fail_key("give either threshold_bytes or min_bytes / max_bytes / probability (RED), not both");
      if (th) {
        t.ecn.threshold_bytes = read_uint(*th, 0, 1ull << 32);
      } else {
        if (!mn) er.missing("min_bytes", "give threshold_bytes, or min_bytes and max_bytes (RED)");
        if (!mx) er.missing("max_bytes", "RED marks between min_bytes and max_bytes");
        t.ecn.red = true;
        t.ecn.min_bytes = read_uint(*mn, 0, 1ull << 32);
        t.ecn.max_bytes = read_uint(*mx, 0, 1ull << 32);
        if (t.ecn.max_bytes <= t.ecn.min_bytes)
          mx->fail(fmt::format("max_bytes {} must be greater than min_bytes {}", t.ecn.max_bytes, t.ecn.min_bytes));
        if (pr) t.ecn.probability = read_double(*pr, 0.0, 1.0);
        if (wt) t.ecn.weight = read_double(*wt, 0.0, 1.0);  // (0, 1]
      }
      if (auto m = er.take("mark_not_ect")) t.ecn.mark_not_ect = read_bool(*m);
      er.finish();
    }
    if (auto p = r.take("pfc")) {
      MapReader pr(*p, {"xoff_bytes", "xon_bytes", "priority", "headroom_check"});
      t.pfc.on = true;
      const Field xoff = pr.req("xoff_bytes");
      const Field xon = pr.req("xon_bytes");
      t.pfc.xoff_bytes = read_uint(xoff, 1, 1ull << 32);
      t.pfc.xon_bytes = read_uint(xon, 0, 1ull << 32);
      if (t.pfc.xon_bytes >= t.pfc.xoff_bytes)
        xon.fail(fmt::format("xon_bytes {} must be below xoff_bytes {}", t.pfc.xon_bytes, t.pfc.xoff_bytes));
      if (t.pfc.xoff_bytes > t.buffer_bytes)
        xoff.fail(fmt::format("xoff_bytes {} exceeds buffer_bytes {}: a port would drop before it pauses",
                              t.pfc.xoff_bytes, t.buffer_bytes));
      t.pfc.priority = uint8_t(pr.u64("priority", t.pfc.priority, 0, 7));
      if (auto h = pr.take("headroom_check")) t.pfc.headroom_check = read_bool(*h);
      pr.finish();
      if (t.pfc.headroom_check) check_pfc_headroom(t, xoff);
    }
    r.finish();
  }
  sc_.topology_switch = std::move(t);
}

// Lossless means no egress queue can overflow: every other port may send
// into one egress up to xoff_bytes plus its headroom (switch_params.h).
void Parser::check_pfc_headroom(const SwitchTopology& t, const Field& xoff) {
  const size_t n = t.ports.size();
  for (size_t e = 0; e < n; ++e) {
    uint64_t need = 0, worst = 0;
    size_t worst_port = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i == e) continue;
      const uint64_t h = pfc_headroom_bytes(t.ports[i].rate_gbps, t.ports[i].delay_ns * 1000);
      need += t.pfc.xoff_bytes + h;
      if (h > worst) worst = h, worst_port = i;
    }
    if (need > t.buffer_bytes)
      xoff.fail(fmt::format(
          "xoff_bytes {} is not lossless with buffer_bytes {}: the egress to {} can receive from {} ports up to "
          "xoff_bytes + headroom each, {} bytes in all (headroom of port {}: 2 x {} ns at {} Gb/s + two "
          "{}-byte frames on the wire = {} bytes); raise buffer_bytes to {} or lower xoff_bytes, or set "
          "headroom_check: false to study the drops",
          t.pfc.xoff_bytes, t.buffer_bytes, sc_.nodes[e].name, n - 1, need, sc_.nodes[worst_port].name,
          t.ports[worst_port].delay_ns, t.ports[worst_port].rate_gbps, kPfcLargestWireBytes, worst, need));
  }
}

void Parser::parse_pcie(const Field& f) {
  MapReader r(f, {"gen", "lanes", "mps", "mrrs", "read_latency_ns", "rcb", "mmio_write_latency_ns", "outstanding"});
  PcieConfig& p = sc_.pcie;
  if (auto g = r.take("gen")) {
    const uint64_t v = read_uint(*g, 0, kMaxU32);
    if (v != 3 && v != 4) g->fail(fmt::format("gen must be 3 or 4, got {}", v));
    p.gen = uint32_t(v);
  }
  if (auto l = r.take("lanes")) {
    const uint64_t v = read_uint(*l, 0, kMaxU32);
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
      l->fail(fmt::format("lanes must be one of 1, 2, 4, 8, 16, got {}", v));
    p.lanes = uint32_t(v);
  }
  p.mps = read_pow2(r, "mps", p.mps, 128, 1024);
  p.mrrs = read_pow2(r, "mrrs", p.mrrs, 128, 4096);
  p.read_latency_ns = uint32_t(r.u64("read_latency_ns", p.read_latency_ns, 0, kMaxDelayNs));
  p.rcb = read_pow2(r, "rcb", p.rcb, 64, 128);
  p.mmio_write_latency_ns = uint32_t(r.u64("mmio_write_latency_ns", p.mmio_write_latency_ns, 0, kMaxDelayNs));
  p.outstanding = uint32_t(r.u64("outstanding", p.outstanding, 1, 64));
  r.finish();
}

void Parser::parse_nodes(const Field& f) {
  if (!f.node.IsMap()) f.fail("expected a map of node name -> node, got " + describe(f.node));
  if (f.node.size() == 0) f.fail("at least one node is required");
  // Node names are free, so list the present keys as the known ones.
  std::vector<std::string> names;
  for (const auto& kv : f.node)
    if (kv.first.IsScalar()) names.push_back(kv.first.Scalar());
  MapReader r(f, names);
  size_t i = 0;
  for (const auto& kv : f.node) {
    const std::string name = kv.first.Scalar();
    const Field key{&ctx_, kv.first, r.key_path(name), kv.first.Mark(), kv.first.Mark()};
    if (!valid_name(name))
      key.fail("invalid node name '" + name + "': use a letter then letters, digits or '_'");
    if (i >= kMaxNodes) key.fail(fmt::format("too many nodes: at most {}", kMaxNodes));
    parse_node(name, *r.take(name));
    ++i;
  }
  r.finish();
}

void Parser::parse_node(const std::string& name, const Field& f) {
  MapReader r(f, {"mac", "ip", "ipv6", "num_qp", "memory_mib", "ack", "mr_cache", "doorbell_layout", "rx", "test_tx_underflow",
                  "test_datapath_corrupt", "qp_setup_fsm", "handshake_random", "host", "extensions", "kind", "peer"});
  NodeConfig n;
  n.name = name;
  n.loc = f.loc();
  read_node_addresses(r, n);
  read_node_peer(r, n);  // kind, peer (peer.cpp): a peer refuses the ERNIC node's keys below
  n.num_qp = uint32_t(r.u64("num_qp", n.num_qp, 8, 256));
  n.memory_mib = uint32_t(r.u64("memory_mib", n.memory_mib, 2, 4096));
  static const EnumTable<bool> kHosts = {{"driver", false}, {"program", true}};
  n.host_program = r.enm("host", false, kHosts);  // before the tuning: mr_cache depends on it
  read_node_tuning(r, n);
  read_node_test_hooks(r, n);
  if (auto q = r.take("qp_setup_fsm")) {
    if (n.host_program) q->fail("qp_setup_fsm needs the built-in driver; node '" + name + "' has host: program");
    n.qp_setup_fsm = read_qp_setup_fsm(*q, n);
  }
  if (auto h = r.take("handshake_random")) n.handshake_random = parse_handshake_random(*h);
  if (auto x = r.take("extensions")) read_node_extensions(*x, n);  // extensions.cpp
  r.finish();
  node_index_[name] = sc_.nodes.size();
  sc_.nodes.push_back(std::move(n));
}

void Parser::read_node_addresses(MapReader& r, NodeConfig& n) {
  {
    const Field m = r.req("mac");
    const roce::MacAddr mac = parse_mac(m, read_string(m));
    if (mac.b[0] & 1)  // the I/G bit: a group address names many stations, not one NIC
      m.fail("MAC address " + mac.str() + " is a group (multicast or broadcast) address: a node's MAC must be "
             "unicast (its first byte even)");
    for (const auto& o : sc_.nodes)
      if (o.mac == mac) m.fail("MAC address " + mac.str() + " is already used by node " + o.name);
    n.mac = mac;
  }
  const auto ip6f = r.take("ipv6");
  if (ip6f) {
    const std::string s = read_string(*ip6f);
    auto ip = roce::Ipv6Addr::parse(s);
    if (!ip) ip6f->fail("malformed IPv6 address '" + s + "' (expected RFC 4291 text, like fd00::a)");
    for (const auto& o : sc_.nodes)
      if (o.ip6 && *o.ip6 == *ip) ip6f->fail("IPv6 address " + ip->str() + " is already used by node " + o.name);
    n.ip6 = *ip;
  }
  if (auto ipf = ip6f ? r.take("ip") : std::optional<Field>(r.req("ip"))) {
    const roce::Ipv4Addr ip = parse_ipv4(*ipf, read_string(*ipf));
    for (const auto& o : sc_.nodes)
      if (o.has_ip && o.ip == ip) ipf->fail("IP address " + ip.str() + " is already used by node " + o.name);
    n.ip = ip;
  } else {
    n.has_ip = false;
  }
}

}  // namespace ernic::scenario_parse
