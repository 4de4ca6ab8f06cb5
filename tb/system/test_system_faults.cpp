// tb/system: the wire faults of scenarios/examples/ (fault_drop, _duplicate,
// _reorder, _corrupt, _delay and link_down), checked from the outside: each
// example runs with --log and --pcap, and the test compares the sender's tx
// tap with the receiver's rx tap of the faulted direction, byte for byte and
// time for time, and reads the transaction log's fault records.
//
// The expectations come from the scenario files (read here with yaml-cpp:
// the rule's match, count, after, byte, bit, delay_ns; the link steps), from
// the README's definitions of the actions, and from the line arithmetic of
// 100 Gb/s Ethernet: 80 ps a byte; a frame of L bytes (as captured, no FCS)
// occupies the line for (8 preamble/SFD + L + 4 FCS) bytes, then 12 bytes of
// IFG. Which frame a rule selects is worked out here from the tx tap and
// the rule's criteria, not taken from the simulator's record. Header
// offsets are computed by hand (Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH
// 16, AETH 4; ICRC 4 at the end).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kPsPerByte = 80;                 // 100 Gb/s
constexpr uint64_t kPreamble = 8, kFcs = 4, kIfg = 12;  // bytes on the line around a captured frame
constexpr uint64_t kDefaultLinkDelayNs = 100;       // README, link.delay_ns default
// Header sizes (IBTA / RFC 791 / RFC 768), IPv4 without options.
constexpr size_t kEth = 14, kIp4 = 20, kUdp = 8, kBth = 12, kReth = 16, kIcrc = 4;
constexpr size_t kBthOff = kEth + kIp4 + kUdp;      // 42

// Line time of a captured frame of `len` bytes, without and with the IFG.
uint64_t line_ps(size_t len) { return (kPreamble + len + kFcs) * kPsPerByte; }
uint64_t slot_ps(size_t len) { return line_ps(len) + kIfg * kPsPerByte; }

// BTH opcodes by the names scenarios use (IBTA vol. 1, 9.2; UD 0x64).
const std::map<std::string, int> kOpcodes = {
    {"RC_SEND_FIRST", 0x00},  {"RC_SEND_MIDDLE", 0x01}, {"RC_SEND_LAST", 0x02},  {"RC_SEND_ONLY", 0x04},
    {"RC_WRITE_FIRST", 0x06}, {"RC_WRITE_MIDDLE", 0x07}, {"RC_WRITE_LAST", 0x08}, {"RC_WRITE_ONLY", 0x0A},
    {"RC_ACK", 0x11},         {"UD_SEND_ONLY", 0x64},
};

uint32_t be(const Bytes& d, size_t off, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | d.at(off + i);
  return v;
}

// The BTH of a RoCEv2/IPv4 frame, parsed by hand; nullopt for anything else.
struct Bth {
  int opcode;
  uint32_t dest_qp, psn;
};
std::optional<Bth> bth_of(const Bytes& d) {
  if (d.size() < kBthOff + kBth + kIcrc) return std::nullopt;
  if (be(d, 12, 2) != 0x0800 || (d[14] & 0x0F) != 5 || d[23] != 17 || be(d, 36, 2) != 4791) return std::nullopt;
  return Bth{d[kBthOff], be(d, kBthOff + 5, 3), be(d, kBthOff + 9, 3)};
}

std::string describe(const Bytes& d) {
  auto b = bth_of(d);
  if (!b) return "non-RoCE frame, " + std::to_string(d.size()) + " B";
  char s[96];
  std::snprintf(s, sizeof s, "opcode 0x%02x dest_qp %u psn 0x%06x, %zu B", b->opcode, b->dest_qp, b->psn, d.size());
  return s;
}

uint64_t num(const YAML::Node& n) { return std::stoull(n.Scalar(), nullptr, 0); }

int opcode_num(const YAML::Node& n) {
  const std::string s = n.Scalar();
  if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) return int(std::stoul(s, nullptr, 0));
  auto it = kOpcodes.find(s);
  if (it == kOpcodes.end()) ADD_FAILURE() << "opcode " << s << " is not in this test's table";
  return it == kOpcodes.end() ? -1 : it->second;
}

// One frame record of the log, joined with its pcap frame.
struct TapFrame {
  uint64_t ns = 0;  // pcap timestamp
  uint64_t ps = 0;  // the log record's t_ps (ps resolution)
  Bytes data;
};

struct Example {
  fs::path dir, file;
  YAML::Node scn;
  uint64_t delay_ns = kDefaultLinkDelayNs;
  std::map<std::string, std::vector<TapFrame>> tap;  // "A-tx", "B-rx", ...
  std::vector<json> log;

  // The tx tap of the sender and the rx tap of the receiver of "X->Y".
  const std::vector<TapFrame>& tx(const std::string& dir) const { return tap.at(dir.substr(0, dir.find("->")) + "-tx"); }
  const std::vector<TapFrame>& rx(const std::string& dir) const { return tap.at(dir.substr(dir.find("->") + 2) + "-rx"); }

  std::vector<json> records(const std::string& kind) const {
    std::vector<json> v;
    for (const auto& r : log)
      if (r["kind"] == kind) v.push_back(r);
    return v;
  }
  // Top-level steps of one kind, in file order, with the log's start time
  // of each (the k-th step record of that kind is the k-th such step).
  std::vector<std::pair<YAML::Node, uint64_t>> steps(const std::string& kind) const {
    std::vector<std::pair<YAML::Node, uint64_t>> v;
    std::vector<uint64_t> t;
    for (const auto& r : log)
      if (r["kind"] == "step" && r["step"] == kind && r["phase"] == "start") t.push_back(r["t_ps"].get<uint64_t>());
    size_t k = 0;
    for (const auto& s : scn["steps"])
      if (s[kind]) {
        EXPECT_LT(k, t.size()) << "no step record for the " << kind << " step at line " << s.Mark().line + 1;
        v.emplace_back(s[kind], k < t.size() ? t[k] : 0);
        ++k;
      }
    EXPECT_EQ(k, t.size()) << kind << " steps in the file vs step records in the log";
    return v;
  }
};

// Runs scenarios/examples/NAME.yaml with --log and --pcap in the test's own
// directory; reads the scenario, the four taps and the log, and checks that
// each tap and the log's frame records of that node and direction are the
// same frames (t_ps / 1000 == pcap ns, index = position, len, opcode, PSN):
// from then on a tap frame's time is known to the picosecond.
void run_example(const std::string& name, Example& run) {
  run.dir = test_dir();
  run.file = fs::path(kSourceDir) / "scenarios" / "examples" / (name + ".yaml");
  SimResult r = run_sim(run.dir, {"run", run.file.string(), "--pcap", "out.pcap", "--log", "out.log", "--json",
                                  "out.json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << name << " in " << run.dir << "\n" << r.out << r.err;
  run.scn = YAML::LoadFile(run.file.string());
  if (run.scn["link"] && run.scn["link"]["delay_ns"]) run.delay_ns = num(run.scn["link"]["delay_ns"]);
  std::istringstream in(read_text(run.dir / "out.log"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) run.log.push_back(json::parse(line));
  ASSERT_FALSE(run.log.empty());
  for (const char* node : {"A", "B"})
    for (const char* dir : {"tx", "rx"}) {
      const std::string key = std::string(node) + "-" + dir;
      const auto frames = ernic::PcapReader::read_all((run.dir / ("out." + key + ".pcap")).string());
      std::vector<json> recs;
      for (const auto& rec : run.log)
        if (rec["kind"] == "frame" && rec["node"] == node && rec["dir"] == dir) recs.push_back(rec);
      ASSERT_EQ(recs.size(), frames.size()) << key << ": log frame records vs pcap frames";
      auto& v = run.tap[key];
      for (size_t i = 0; i < frames.size(); ++i) {
        const auto& f = frames[i];
        const json& rec = recs[i];
        ASSERT_EQ(f.orig_len, f.data.size()) << key << " frame " << i << " truncated";
        const uint64_t ps = rec["t_ps"].get<uint64_t>();
        EXPECT_EQ(ps / 1000, f.time_ns) << key << " frame " << i;
        EXPECT_EQ(rec["index"].get<uint64_t>(), i) << key << " frame " << i;
        EXPECT_EQ(rec["len"].get<size_t>(), f.data.size()) << key << " frame " << i;
        if (auto b = bth_of(f.data)) {
          EXPECT_EQ(rec["opcode"].get<int>(), b->opcode) << key << " frame " << i;
          EXPECT_EQ(rec["psn"].get<uint32_t>(), b->psn) << key << " frame " << i;
          EXPECT_EQ(rec["dest_qp"].get<uint32_t>(), b->dest_qp) << key << " frame " << i;
        }
        v.push_back({f.time_ns, ps, f.data});
      }
    }
}

// The rule of the scenario's fault step named `name` and its install time.
std::pair<YAML::Node, uint64_t> fault_rule(const Example& run, const std::string& name) {
  for (const auto& [rule, t] : run.steps("fault"))
    if (rule["name"] && rule["name"].Scalar() == name) return {rule, t};
  ADD_FAILURE() << "no fault step named " << name << " in " << run.file;
  return {YAML::Node(), 0};
}

// The tx-tap positions of the frames a rule without `probability` selects:
// frames sent after the rule was installed that meet opcode/psn/dest_qp;
// with nth only the n-th of them, otherwise the first `count` (0: all).
std::vector<size_t> selected(const YAML::Node& rule, uint64_t installed_ps, const std::vector<TapFrame>& tx) {
  const YAML::Node m = rule["match"];
  std::vector<int> ops;
  std::optional<uint64_t> psn, dqp, nth;
  if (m) {
    EXPECT_FALSE(m["probability"]) << "selected() cannot predict a random rule";
    if (m["opcode"]) {
      if (m["opcode"].IsSequence())
        for (const auto& o : m["opcode"]) ops.push_back(opcode_num(o));
      else
        ops.push_back(opcode_num(m["opcode"]));
    }
    if (m["psn"]) psn = num(m["psn"]);
    if (m["dest_qp"]) dqp = num(m["dest_qp"]);
    if (m["nth"]) nth = num(m["nth"]);
  }
  const uint64_t count = rule["count"] ? num(rule["count"]) : 1;
  std::vector<size_t> hits;
  uint64_t matched = 0;
  for (size_t i = 0; i < tx.size(); ++i) {
    // Enters the wire at its preamble, 8 B before the first byte.
    if (tx[i].ps - kPreamble * kPsPerByte < installed_ps) continue;
    const auto b = bth_of(tx[i].data);
    const bool named = !ops.empty() || psn || dqp;
    if (named && !b) continue;
    if (!ops.empty() && std::find(ops.begin(), ops.end(), b->opcode) == ops.end()) continue;
    if (psn && b->psn != *psn) continue;
    if (dqp && b->dest_qp != *dqp) continue;
    ++matched;
    if (nth) {
      if (matched == *nth) hits.push_back(i);
    } else if (count == 0 || hits.size() < count) {
      hits.push_back(i);
    }
  }
  return hits;
}

// rx must be tx with nothing but the listed changes: every tx frame not in
// `skip` arrives exactly once, byte-identical, in order, link delay later.
// Returns the rx positions of the tx frames (npos for skipped ones).
// With `pushback`, an extra frame on the receiving line (a duplicate) delays
// what follows it: each rx frame then starts at the later of tx + link delay
// and the end of the previous rx frame plus the IFG (one port receives one
// frame at a time).
std::vector<size_t> expect_delivered_in_order(const Example& run, const std::string& dir, const std::set<size_t>& skip,
                                              const std::set<size_t>& extra_rx = {}, bool pushback = false) {
  const auto& tx = run.tx(dir);
  const auto& rx = run.rx(dir);
  std::vector<size_t> at(tx.size(), std::string::npos);
  size_t j = 0;
  for (size_t i = 0; i < tx.size(); ++i) {
    if (skip.count(i)) continue;
    while (extra_rx.count(j)) ++j;
    if (j >= rx.size()) {
      ADD_FAILURE() << dir << ": tx frame " << i << " (" << describe(tx[i].data) << ") never arrives";
      break;
    }
    EXPECT_EQ(rx[j].data, tx[i].data) << dir << ": rx frame " << j << " should be tx frame " << i << " ("
                                      << describe(tx[i].data) << "), got " << describe(rx[j].data);
    if (pushback && j > 0) {
      const uint64_t earliest = std::max(tx[i].ps + run.delay_ns * 1000, rx[j - 1].ps + slot_ps(rx[j - 1].data.size()));
      EXPECT_EQ(rx[j].ps, earliest) << dir << ": tx frame " << i
                                    << " arrives at tx + link delay, or right after the previous rx frame";
    } else {
      EXPECT_EQ(rx[j].ns, tx[i].ns + run.delay_ns) << dir << ": tx frame " << i << " arrives at rx + link delay";
    }
    at[i] = j++;
  }
  while (extra_rx.count(j)) ++j;
  EXPECT_EQ(j, rx.size()) << dir << ": rx has frames that were never sent";
  return at;
}

size_t copies(const std::vector<TapFrame>& v, const Bytes& d) {
  return size_t(std::count_if(v.begin(), v.end(), [&](const TapFrame& f) { return f.data == d; }));
}

std::string other(const std::string& dir) {
  return dir.substr(dir.find("->") + 2) + "->" + dir.substr(0, dir.find("->"));
}

// The fault record's fields against the tx frame it names.
void expect_record(const json& rec, const std::string& dir, size_t index, const std::string& rule,
                   const std::string& action, const Bytes& frame, const std::string& detail) {
  const auto b = bth_of(frame);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(rec["node"], "");
  EXPECT_EQ(rec["domain"], "wire");
  EXPECT_EQ(rec["link"], dir);
  EXPECT_EQ(rec["index"].get<uint64_t>(), index);
  EXPECT_EQ(rec["rule"], rule);
  EXPECT_EQ(rec["action"], action);
  EXPECT_EQ(rec["opcode"].get<int>(), b->opcode);
  EXPECT_EQ(rec["psn"].get<int64_t>(), int64_t(b->psn));
  EXPECT_EQ(rec["detail"], detail);
  EXPECT_FALSE(rec.contains("qp"));
}

// ---------------------------------------------------------------------------

// drop: the rule's frame (opcode RC_WRITE_MIDDLE, nth 3 in the example) is
// on the sender's tx tap and nowhere on the receiver's rx tap; everything
// else of that direction arrives once, in order, link delay later; one
// fault record names it.
TEST(SystemFaults, DropLosesExactlyTheSelectedFrame) {
  Example run;
  ASSERT_NO_FATAL_FAILURE(run_example("fault_drop", run));
  const auto [rule, installed] = fault_rule(run, "drop_third_middle");
  ASSERT_TRUE(rule);
  ASSERT_EQ(rule["action"].Scalar(), "drop");
  const std::string dir = rule["dir"].Scalar();
  const auto& tx = run.tx(dir);
  const auto& rx = run.rx(dir);
  const auto sel = selected(rule, installed, tx);
  ASSERT_EQ(sel.size(), 1u) << "nth selects one frame";
  const size_t k = sel[0];
  // The third RC_WRITE_MIDDLE of a WRITE starting at the client's PSN: PSN + 3.
  const auto b = bth_of(tx[k].data);
  ASSERT_TRUE(b.has_value());
  std::optional<uint64_t> client_psn;
  for (const auto& [c, t] : run.steps("connect"))
    if (c["client_psn"]) client_psn = num(c["client_psn"]);
  ASSERT_TRUE(client_psn.has_value());
  EXPECT_EQ(b->psn, *client_psn + num(rule["match"]["nth"])) << "FIRST has the start PSN, the n-th MIDDLE +n";
  // The requester recovers by go-back-N: the PSN is sent again later, a
  // byte-identical copy. The receiver gets every copy but the dropped one.
  EXPECT_GE(copies(tx, tx[k].data), 2u) << "the dropped frame was never retransmitted";
  EXPECT_EQ(copies(rx, tx[k].data) + 1, copies(tx, tx[k].data)) << "the dropped frame reached the receiver";
  auto with_psn = [&](const std::vector<TapFrame>& v) {
    size_t c = 0;
    for (const auto& f : v)
      if (auto rb = bth_of(f.data)) c += rb->dest_qp == b->dest_qp && rb->psn == b->psn;
    return c;
  };
  EXPECT_EQ(with_psn(rx) + 1, with_psn(tx)) << "PSN seen on rx once more than it was resent";
  expect_delivered_in_order(run, dir, {k});
  expect_delivered_in_order(run, other(dir), {});

  const auto faults = run.records("fault");
  ASSERT_EQ(faults.size(), 1u);
  expect_record(faults[0], dir, k, rule["name"].Scalar(), "drop", tx[k].data, "dropped");
}

// duplicate: the frame (RC_WRITE_MIDDLE PSN 0x207) arrives twice,
// byte-identical, the copy one line slot (its own line time + IFG) after
// the original; nothing else changes.
TEST(SystemFaults, DuplicateDeliversAByteIdenticalCopyBackToBack) {
  Example run;
  ASSERT_NO_FATAL_FAILURE(run_example("fault_duplicate", run));
  const auto [rule, installed] = fault_rule(run, "dup_207");
  ASSERT_TRUE(rule);
  ASSERT_EQ(rule["action"].Scalar(), "duplicate");
  const std::string dir = rule["dir"].Scalar();
  const auto& tx = run.tx(dir);
  const auto& rx = run.rx(dir);
  const auto sel = selected(rule, installed, tx);
  ASSERT_EQ(sel.size(), 1u) << "count 1, one PSN";
  const size_t k = sel[0];
  EXPECT_EQ(bth_of(tx[k].data)->psn, num(rule["match"]["psn"]));

  // Original at its usual place, the copy right behind it, nothing else.
  ASSERT_EQ(rx.size(), tx.size() + 1);
  size_t orig = std::string::npos;
  for (size_t j = 0; j < rx.size(); ++j)
    if (rx[j].data == tx[k].data) {
      orig = j;
      break;
    }
  ASSERT_NE(orig, std::string::npos);
  ASSERT_LT(orig + 1, rx.size());
  EXPECT_EQ(rx[orig + 1].data, tx[k].data) << "the copy is byte-identical and follows the original";
  EXPECT_EQ(std::count_if(rx.begin(), rx.end(), [&](const TapFrame& f) { return f.data == tx[k].data; }), 2);
  const auto at = expect_delivered_in_order(run, dir, {}, {orig + 1}, /*pushback=*/true);
  EXPECT_EQ(at[k], orig);
  EXPECT_EQ(rx[orig].ns, tx[k].ns + run.delay_ns);
  EXPECT_EQ(rx[orig + 1].ps - rx[orig].ps, slot_ps(tx[k].data.size()))
      << "copy = original + (8 + " << tx[k].data.size() << " + 4 + 12) B x 80 ps";
  const uint64_t d_ns = rx[orig + 1].ns - rx[orig].ns;  // pcap: truncated to ns
  EXPECT_TRUE(d_ns == slot_ps(tx[k].data.size()) / 1000 || d_ns == slot_ps(tx[k].data.size()) / 1000 + 1) << d_ns;

  const auto faults = run.records("fault");
  ASSERT_EQ(faults.size(), 1u);
  expect_record(faults[0], dir, k, rule["name"].Scalar(), "duplicate", tx[k].data, "duplicated");
  expect_delivered_in_order(run, other(dir), {});
}

// reorder: the frame (RC_WRITE_ONLY to QP 2) is held until `after` later
// frames of its direction have passed, then delivered right behind the
// last of them (one line slot of that frame later); nothing is lost.
TEST(SystemFaults, ReorderHoldsTheFrameBehindAfterLaterFrames) {
  Example run;
  ASSERT_NO_FATAL_FAILURE(run_example("fault_reorder", run));
  const auto [rule, installed] = fault_rule(run, "hold_qp2");
  ASSERT_TRUE(rule);
  ASSERT_EQ(rule["action"].Scalar(), "reorder");
  const uint64_t after = rule["after"] ? num(rule["after"]) : 1;
  const std::string dir = rule["dir"].Scalar();
  const auto& tx = run.tx(dir);
  const auto& rx = run.rx(dir);
  const auto sel = selected(rule, installed, tx);
  ASSERT_EQ(sel.size(), 1u);
  const size_t k = sel[0];
  ASSERT_LE(k + after, tx.size() - 1) << "enough later frames to release it";

  // Expected rx order: tx with frame k moved behind frame k + after.
  std::vector<size_t> order;
  for (size_t i = 0; i < tx.size(); ++i) {
    if (i != k) order.push_back(i);
    if (i == k + after) order.push_back(k);
  }
  ASSERT_EQ(rx.size(), order.size()) << "nothing lost, nothing added";
  for (size_t j = 0; j < rx.size(); ++j) {
    const size_t i = order[j];
    EXPECT_EQ(rx[j].data, tx[i].data) << "rx " << j << " should be tx " << i << " (" << describe(tx[i].data) << ")";
    if (i != k) {
      EXPECT_EQ(rx[j].ns, tx[i].ns + run.delay_ns) << "rx " << j;
    }
  }
  // Exactly `after` frames sent after it arrive before it.
  const size_t pos = size_t(std::find(order.begin(), order.end(), k) - order.begin());
  size_t overtaken = 0;
  for (size_t j = 0; j < pos; ++j)
    if (order[j] > k) ++overtaken;
  EXPECT_EQ(overtaken, after);
  const size_t rel = k + after;  // the frame that releases it
  EXPECT_EQ(rx[pos].ps, rx[pos - 1].ps + slot_ps(tx[rel].data.size()))
      << "released back to back behind tx frame " << rel;

  const auto faults = run.records("fault");
  ASSERT_EQ(faults.size(), 1u);
  expect_record(faults[0], dir, k, rule["name"].Scalar(), "reorder", tx[k].data,
                "held until after frame " + std::to_string(rel));
  expect_delivered_in_order(run, other(dir), {});
}

// corrupt: each selected frame arrives with exactly one bit flipped, at the
// byte the rule names (byte: N), or at the named field's offset computed
// here from the header sizes (field: icrc = the first of the last 4 bytes).
TEST(SystemFaults, CorruptFlipsOneBitAtTheNamedOffset) {
  Example run;
  ASSERT_NO_FATAL_FAILURE(run_example("fault_corrupt", run));
  const auto rules = run.steps("fault");
  ASSERT_EQ(rules.size(), 2u);
  const std::string dir = rules[0].first["dir"].Scalar();
  const auto& tx = run.tx(dir);
  const auto& rx = run.rx(dir);
  ASSERT_EQ(rx.size(), tx.size()) << "corrupted frames still arrive";
  const auto faults = run.records("fault");
  ASSERT_EQ(faults.size(), rules.size());

  std::set<size_t> hit;
  for (size_t r = 0; r < rules.size(); ++r) {
    const YAML::Node rule = rules[r].first;
    ASSERT_EQ(rule["action"].Scalar(), "corrupt");
    ASSERT_EQ(rule["dir"].Scalar(), dir);
    const auto sel = selected(rule, rules[r].second, tx);
    ASSERT_EQ(sel.size(), 1u) << rule["name"].Scalar();
    const size_t k = sel[0];
    ASSERT_FALSE(hit.count(k)) << "one fault a frame";
    hit.insert(k);
    const Bytes& sent = tx[k].data;
    const auto b = bth_of(sent);
    ASSERT_TRUE(b.has_value());
    ASSERT_EQ(b->opcode, kOpcodes.at("RC_WRITE_ONLY"));
    // WRITE ONLY: BTH, RETH (DMA length in its last 4 bytes), payload,
    // pad to 4 (BTH byte 1 bits 5:4), ICRC.
    const size_t payload_off = kBthOff + kBth + kReth;
    const size_t dma_len = be(sent, kBthOff + kBth + 12, 4);
    const size_t pad = (sent[kBthOff + 1] >> 4) & 3;
    const size_t icrc_off = payload_off + dma_len + pad;
    ASSERT_EQ(icrc_off + kIcrc, sent.size()) << "header arithmetic";
    size_t want_byte = 0;
    std::string detail;
    const uint64_t bit = rule["bit"] ? num(rule["bit"]) : 0;
    if (rule["byte"]) {
      want_byte = num(rule["byte"]);
      detail = "byte " + std::to_string(want_byte) + " bit " + std::to_string(bit);
      if (rule["name"].Scalar() == "bad_payload") {
        EXPECT_EQ(want_byte, payload_off) << "the example's comment: the first payload byte, 14+20+8+12+16";
      }
    } else {
      const std::string field = rule["field"].Scalar();
      ASSERT_EQ(field, "icrc") << "this test computes the icrc offset only";
      want_byte = icrc_off;
      detail = "byte " + std::to_string(want_byte) + " bit " + std::to_string(bit) + " (" + field + ")";
    }
    // rx differs from tx in exactly that bit.
    const Bytes& got = rx[k].data;
    ASSERT_EQ(got.size(), sent.size());
    std::vector<std::pair<size_t, int>> flips;
    for (size_t i = 0; i < sent.size(); ++i)
      for (int bi = 0; bi < 8; ++bi)
        if (((sent[i] ^ got[i]) >> bi) & 1) flips.emplace_back(i, bi);
    ASSERT_EQ(flips.size(), 1u) << rule["name"].Scalar() << ": bits that differ between tx and rx";
    EXPECT_EQ(flips[0].first, want_byte) << rule["name"].Scalar();
    EXPECT_EQ(uint64_t(flips[0].second), bit) << rule["name"].Scalar();
    EXPECT_EQ(rx[k].ns, tx[k].ns + run.delay_ns) << "corrupt does not delay";
    expect_record(faults[r], dir, k, rule["name"].Scalar(), "corrupt", sent, detail);
  }
  for (size_t i = 0; i < tx.size(); ++i)
    if (!hit.count(i)) {
      EXPECT_EQ(rx[i].data, tx[i].data) << "frame " << i;
      EXPECT_EQ(rx[i].ns, tx[i].ns + run.delay_ns) << "frame " << i;
    }
  expect_delivered_in_order(run, other(dir), {});
}

// delay: the rule's frame (the first RC_ACK) arrives link delay + delay_ns
// after it was sent, to the ns; every other frame link delay after. The
// random "jitter" rule (probability 0.5, count 0): whichever ACKs arrive
// late are late by exactly its delay_ns, are RC_ACKs sent after it was
// installed, and are exactly the frames its fault records name.
TEST(SystemFaults, DelayAddsTheRuleDelayToThatFrameOnly) {
  Example run;
  ASSERT_NO_FATAL_FAILURE(run_example("fault_delay", run));
  const auto [slow, slow_t] = fault_rule(run, "slow_ack");
  const auto [jitter, jitter_t] = fault_rule(run, "jitter");
  ASSERT_TRUE(slow);
  ASSERT_TRUE(jitter);
  const std::string dir = slow["dir"].Scalar();
  ASSERT_EQ(jitter["dir"].Scalar(), dir);
  const uint64_t slow_ns = num(slow["delay_ns"]), jitter_ns = num(jitter["delay_ns"]);
  const auto& tx = run.tx(dir);
  const auto& rx = run.rx(dir);
  const auto sel = selected(slow, slow_t, tx);
  ASSERT_EQ(sel.size(), 1u);
  const size_t k = sel[0];

  // Match every tx frame to its rx copy (PSNs differ: byte-identity is unique).
  ASSERT_EQ(rx.size(), tx.size()) << "nothing lost, nothing added";
  std::set<size_t> late;
  std::vector<bool> used(rx.size(), false);
  for (size_t i = 0; i < tx.size(); ++i) {
    size_t j = 0;
    while (j < rx.size() && (used[j] || rx[j].data != tx[i].data)) ++j;
    ASSERT_LT(j, rx.size()) << "tx frame " << i << " (" << describe(tx[i].data) << ") never arrives";
    used[j] = true;
    const uint64_t extra = rx[j].ns - tx[i].ns - run.delay_ns;
    if (i == k) {
      EXPECT_EQ(rx[j].ns, tx[i].ns + run.delay_ns + slow_ns) << "the slow_ack frame";
    } else if (extra != 0) {
      EXPECT_EQ(extra, jitter_ns) << "tx frame " << i << " (" << describe(tx[i].data) << ")";
      EXPECT_EQ(bth_of(tx[i].data)->opcode, kOpcodes.at("RC_ACK")) << "tx frame " << i;
      EXPECT_GE(tx[i].ps - kPreamble * kPsPerByte, jitter_t) << "tx frame " << i << " sent before the rule";
      late.insert(i);
    }
  }
  EXPECT_FALSE(late.empty()) << "seed 11: some ACKs are late";
  // The late ACK holds the requester's completion back: its CQE (wr_id 1)
  // is written after the ACK's last byte has arrived.
  {
    const std::string requester = dir.substr(dir.find("->") + 2);
    uint64_t ack_end = 0;
    for (const auto& f : rx)
      if (f.data == tx[k].data) ack_end = f.ps + (f.data.size() + kFcs) * kPsPerByte;
    std::optional<uint64_t> qp;  // the requester's QPN of the connection (client_qp)
    for (const auto& [c, t] : run.steps("connect"))
      if (c["client"].Scalar() == requester && c["client_qp"]) qp = num(c["client_qp"]);
    ASSERT_TRUE(qp.has_value());
    bool seen = false;
    for (const auto& c : run.records("cqe"))
      if (c["node"] == requester && c["qp"] == *qp && c["wr_id"] == 1) {
        seen = true;
        EXPECT_GT(c["t_ps"].get<uint64_t>(), ack_end) << "CQE of wr_id 1 before its delayed ACK arrived";
      }
    EXPECT_TRUE(seen) << "no CQE for wr_id 1 on " << requester;
  }

  const auto faults = run.records("fault");
  ASSERT_EQ(faults.size(), 1 + late.size());
  expect_record(faults[0], dir, k, "slow_ack", "delay", tx[k].data, "+" + std::to_string(slow_ns * 1000) + " ps");
  size_t f = 1;
  for (size_t i : late) {
    ASSERT_LT(f, faults.size());
    expect_record(faults[f++], dir, i, "jitter", "delay", tx[i].data, "+" + std::to_string(jitter_ns * 1000) + " ps");
  }
  expect_delivered_in_order(run, other(dir), {});
}

// link: frames the sender puts on a direction while it is down (between
// the link steps' times) are on its tx tap, not on the rx tap, and each has
// a fault record with rule "link"; frames before and after arrive.
TEST(SystemFaults, LinkDownLosesWhatIsSentWhileDown) {
  Example run;
  ASSERT_NO_FATAL_FAILURE(run_example("link_down", run));
  // Down intervals per direction, from the link steps and their start times.
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> down;
  std::map<std::string, uint64_t> since;
  const auto links = run.steps("link");
  ASSERT_GE(links.size(), 2u);
  for (const auto& [step, t] : links) {
    const std::string d = step["dir"].Scalar();
    std::vector<std::string> dirs = d == "both" ? std::vector<std::string>{"A->B", "B->A"} : std::vector<std::string>{d};
    for (const auto& x : dirs) {
      if (step["state"].Scalar() == "down" && !since.count(x)) since[x] = t;
      if (step["state"].Scalar() == "up" && since.count(x)) {
        down[x].emplace_back(since[x], t);
        since.erase(x);
      }
    }
  }
  for (const auto& [x, t] : since) down[x].emplace_back(t, UINT64_MAX);
  ASSERT_EQ(down.size(), 1u);
  ASSERT_EQ(down.begin()->first, "B->A") << "the example takes B->A down";

  std::vector<json> faults = run.records("fault");
  size_t f = 0;
  for (const std::string dir : {"A->B", "B->A"}) {
    const auto& tx = run.tx(dir);
    std::set<size_t> lost;
    for (size_t i = 0; i < tx.size(); ++i) {
      const uint64_t enter = tx[i].ps - kPreamble * kPsPerByte;
      for (const auto& [a, b] : down[dir])
        if (enter >= a && enter < b) lost.insert(i);
    }
    if (dir == "B->A") {
      ASSERT_EQ(lost.size(), 1u) << "B's first ACK";
      EXPECT_EQ(bth_of(tx[*lost.begin()].data)->opcode, kOpcodes.at("RC_ACK"));
    }
    // A frame lost while the link was down may be sent again, byte for byte,
    // once it is up (a retransmission, or a re-ACK of the duplicate that a
    // retransmission is): the receiver has one copy fewer than the sender.
    for (size_t i : lost)
      EXPECT_EQ(copies(run.rx(dir), tx[i].data) + 1, copies(tx, tx[i].data)) << dir << " frame " << i << " arrived";
    expect_delivered_in_order(run, dir, lost);
    for (size_t i : lost) {
      ASSERT_LT(f, faults.size()) << "no fault record for " << dir << " frame " << i;
      expect_record(faults[f++], dir, i, "link", "drop", tx[i].data, "link down");
    }
  }
  EXPECT_EQ(f, faults.size()) << "fault records for frames sent while the link was up";
}

// Every fault record carries the simulated time its frame entered the wire:
// the time of the sender's tx tap (first byte after the SFD, the log's
// t_ps of that tx frame, ps resolution) give or take the preamble. The
// frame enters the line when its preamble starts, 8 B x 80 ps = 640 ps
// before the first byte after the SFD; so the record is accepted in
// [tx - 640 ps, tx]. Nothing in the frame's path justifies a later time.
TEST(SystemFaults, FaultRecordsCarryTheTimeTheFrameEnteredTheWire) {
  for (const char* name : {"fault_drop", "fault_duplicate", "fault_reorder", "fault_corrupt", "fault_delay", "link_down"}) {
    SCOPED_TRACE(name);
    Example run;
    ASSERT_NO_FATAL_FAILURE(run_example(name, run));
    const auto faults = run.records("fault");
    EXPECT_FALSE(faults.empty());
    for (const auto& rec : faults) {
      const std::string dir = rec["link"];
      const auto& tx = run.tx(dir);
      const uint64_t i = rec["index"].get<uint64_t>();
      ASSERT_LT(i, tx.size());
      EXPECT_EQ(rec["psn"].get<int64_t>(), int64_t(bth_of(tx[i].data)->psn));
      const uint64_t t = rec["t_ps"].get<uint64_t>();
      const uint64_t first = tx[i].ps;
      EXPECT_TRUE(t + kPreamble * kPsPerByte >= first && t <= first)
          << dir << " frame " << i << " (" << describe(tx[i].data) << "): first byte on the line at " << first
          << " ps, fault record at " << t << " ps (" << int64_t(t - first) << " ps later); rule "
          << rec["rule"].get<std::string>();
    }
  }
}

// The receive taps are physically possible: on one 100 Gb/s line a frame
// starts no earlier than the previous one's line time plus the IFG after
// it (pcap ns are truncated: 1 ns of slack). Likewise the transmit taps.
TEST(SystemFaults, NoTapHasOverlappingFrames) {
  for (const char* name : {"fault_drop", "fault_duplicate", "fault_reorder", "fault_corrupt", "fault_delay", "link_down"}) {
    SCOPED_TRACE(name);
    Example run;
    ASSERT_NO_FATAL_FAILURE(run_example(name, run));
    for (const auto& [key, v] : run.tap)
      for (size_t j = 1; j < v.size(); ++j) {
        const uint64_t need = v[j - 1].ns * 1000 + slot_ps(v[j - 1].data.size());
        EXPECT_GE(v[j].ns * 1000 + 999, need)
            << key << ": frame " << j << " (" << describe(v[j].data) << ") starts at " << v[j].ps
            << " ps, while frame " << j - 1 << " (" << describe(v[j - 1].data) << ", from " << v[j - 1].ps
            << " ps) occupies the line until " << v[j - 1].ps + slot_ps(v[j - 1].data.size()) << " ps";
      }
  }
}

}  // namespace
