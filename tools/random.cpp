// tools/random: see random.h.
#include "tools/random.h"

#include "tools/progress.h"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "model/scenario/scenario.h"

extern char** environ;

namespace ernic::random_mode {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ------------------------------------------------------------------ RNG ----

// std::mt19937_64's output is fixed by the standard; std::*_distribution's
// are not, so every mapping below is ours.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t next() { return g_(); }
  // Uniform in [lo, hi], by rejection (no modulo bias).
  uint64_t uniform(uint64_t lo, uint64_t hi) {
    if (hi <= lo) return lo;
    const uint64_t span = hi - lo;
    if (span == UINT64_MAX) return next();
    const uint64_t n = span + 1;
    const uint64_t rem = (UINT64_MAX % n + 1) % n;  // 2^64 mod n
    const uint64_t limit = UINT64_MAX - rem;        // accept x <= limit: a whole number of n-blocks
    uint64_t x;
    do x = next();
    while (x > limit);
    return lo + x % n;
  }
  bool chance(uint32_t num, uint32_t den) { return uniform(0, den - 1) < num; }
  // An index drawn with the given integer weights.
  size_t weighted(std::initializer_list<uint32_t> w) {
    uint64_t total = 0;
    for (uint32_t x : w) total += x;
    uint64_t r = uniform(0, total - 1);
    size_t i = 0;
    for (uint32_t x : w) {
      if (r < x) return i;
      r -= x;
      ++i;
    }
    return w.size() - 1;
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[uniform(0, v.size() - 1)];
  }

 private:
  std::mt19937_64 g_;
};

// ------------------------------------------------------------ the model ----
// A generated scenario before rendering; reduction edits it and re-renders.

enum class IpMode { v4, dual, v6 };

struct GNode {
  IpMode ip = IpMode::v4;
  uint32_t ack_mode = 0;           // 0 request_or_timeout, 1 timeout, 2 request
  uint32_t coalesce = 0;           // ack.coalesce_packets
  uint64_t ack_timeout_ns = 10000; // ack.timeout_ns
  uint32_t cam_entries = 0;        // 0: mr_cache table
};

struct GConn {
  bool client_a = true;            // client A / server B, or the reverse
  uint32_t pmtu = 4096;
  uint32_t ip_version = 4;
  uint32_t rq_elem = 4096;
  uint32_t psn_a = 0, psn_b = 0;   // starting PSNs of A's and B's QP
  uint32_t qp_a = 2, qp_b = 2;     // QPNs on A and B
};

struct GOp {
  uint32_t conn = 0;
  bool by_a = true;                // requester: A (else B)
  WqeOpcode op = WqeOpcode::write;
  uint32_t length = 1;
  uint32_t local_skew = 0, remote_skew = 0;  // bytes past a 64-byte boundary
  uint32_t immdt = 0;
};

// What a fault rule selects on its connection and direction: every frame,
// the ACK/NAK frames, the READ responses, or every answer (ACKs, NAKs and
// READ responses).
enum class FSel { conn_frames, acks, read_responses, answers, requests_but_read };

struct GFault {
  uint32_t conn = 0;
  bool a_to_b = true;
  FaultAction action = FaultAction::drop;
  FSel sel = FSel::conn_frames;
  uint32_t nth = 1;
  uint32_t after = 1;              // reorder
  uint32_t delay_ns = 0;           // delay
  bool corrupt_psn = false;        // corrupt: bth.psn (else icrc)
  // A storm: each frame the rule selects is faulted with this probability
  // (no nth), at most `count` times.
  std::optional<double> probability;
  uint32_t count = 1;
};

struct GPhase {
  std::vector<GFault> faults;      // installed before the phase's posts
  std::vector<GOp> ops;
  bool doorbell_each = false;
};

struct GScenario {
  uint64_t seed = 1;
  bool layout4x = false;
  bool datapath_model = false;
  GNode node[2];
  std::vector<GConn> conns;
  std::vector<GPhase> phases;
  bool pfc = true;                 // PFC on both nodes (lossless: an RX buffer overflow fails a run)
  bool fill = true;                // fill every MR with seeded random data first
  bool recv = true;                // a recv step per receiving end and phase
  uint32_t ack_timeout_exp = 0;    // TIMEOUTCONFi.ACK_TIMEOUT written after connect (0: the driver's)
};

const char* kNodeName[2] = {"A", "B"};
constexpr uint32_t kStepTimeoutUs = 3000;
constexpr uint32_t kMaxSendsPerPhase = 8;    // per receiving end: well inside the 16-element RQ
constexpr uint64_t kPhaseBytes = 768 << 10;  // keep a scenario quick to simulate

uint32_t packets(uint32_t len, uint32_t pmtu) { return len == 0 ? 1 : (len + pmtu - 1) / pmtu; }

bool is_send(WqeOpcode o) { return pg332::is_send(uint8_t(o)); }
bool has_remote(WqeOpcode o) { return pg332::is_write(uint8_t(o)) || pg332::is_read(uint8_t(o)); }
bool has_imm(WqeOpcode o) { return o == WqeOpcode::write_imm || o == WqeOpcode::send_imm || o == WqeOpcode::send_inv; }
bool delivers_message(WqeOpcode o) { return is_send(o) || o == WqeOpcode::write_imm; }

bool has_v4(IpMode m) { return m != IpMode::v6; }
bool has_v6(IpMode m) { return m != IpMode::v4; }

// A message size with a bias to the edges a PMTU makes.
uint32_t draw_size(Rng& r, uint32_t pmtu) {
  switch (r.weighted({30, 15, 15, 28, 12})) {
    case 0: {  // PMTU edges
      const uint32_t k = uint32_t(r.uniform(1, 3));
      const int64_t d = int64_t(r.uniform(0, 2)) - 1;  // -1, 0, +1
      return uint32_t(std::max<int64_t>(1, int64_t(k) * pmtu + d));
    }
    case 1: return r.chance(1, 4) ? 1 : uint32_t(r.uniform(1, 16));  // tiny (SENDs: inline)
    case 2: return 64 * uint32_t(r.uniform(1, 64));                  // multiples of 64 (PG332's rule)
    case 3: {                                                         // log-uniform 1 .. 64 KiB
      const uint32_t bits = uint32_t(r.uniform(0, 16));
      return uint32_t(r.uniform(bits ? (1u << (bits - 1)) : 1, 1u << bits));
    }
    default: return uint32_t(r.uniform(64 << 10, 256 << 10));       // large
  }
}

GScenario generate(uint64_t seed) {
  Rng r(seed);
  GScenario s;
  s.seed = seed;
  s.layout4x = r.chance(1, 5);
  s.datapath_model = r.chance(1, 4);
  for (GNode& n : s.node) {
    n.ip = IpMode(r.weighted({70, 20, 10}));
    n.ack_mode = uint32_t(r.weighted({50, 30, 20}));
    if (!r.chance(2, 5)) {
      static const std::vector<uint32_t> kCoalesce = {1, 2, 3, 4, 5, 8, 16};
      n.coalesce = r.pick(kCoalesce);
    }
    static const std::vector<uint64_t> kAckTimeout = {10000, 10000, 1000, 5000, 20000};
    n.ack_timeout_ns = r.pick(kAckTimeout);
    if (r.chance(1, 4)) n.cam_entries = uint32_t(r.uniform(1, 4));
  }
  // the two nodes share an IP version
  if (s.node[0].ip != IpMode::dual && s.node[1].ip != IpMode::dual && s.node[0].ip != s.node[1].ip)
    s.node[s.node[0].ip == IpMode::v6 ? 0 : 1].ip = IpMode::dual;
  const uint32_t nconn = uint32_t(r.weighted({40, 30, 20, 10})) + 1;
  std::vector<uint32_t> qpa = {2, 3, 4, 5, 6, 7, 8}, qpb = qpa;
  for (uint32_t k = 0; k < nconn; ++k) {
    GConn c;
    c.client_a = r.chance(3, 4);
    static const std::vector<uint32_t> kPmtu = {256, 1024, 4096, 256, 1024, 4096, 512, 2048};
    c.pmtu = r.pick(kPmtu);
    const bool v4 = has_v4(s.node[0].ip) && has_v4(s.node[1].ip);
    const bool v6 = has_v6(s.node[0].ip) && has_v6(s.node[1].ip);
    c.ip_version = v4 && v6 ? (r.chance(1, 2) ? 4 : 6) : v4 ? 4 : 6;
    static const std::vector<uint32_t> kElem = {4096, 4096, 4096, 16384, 65536};
    c.rq_elem = r.pick(kElem);
    for (uint32_t* psn : {&c.psn_a, &c.psn_b})
      *psn = r.chance(1, 5) ? 0xFFFFFF - uint32_t(r.uniform(0, 40)) : uint32_t(r.uniform(0, 0xFFFFFF));
    // distinct QPNs per node, drawn from 2..8
    const size_t ia = r.uniform(0, qpa.size() - 1), ib = r.uniform(0, qpb.size() - 1);
    c.qp_a = qpa[ia];
    c.qp_b = qpb[ib];
    qpa.erase(qpa.begin() + long(ia));
    qpb.erase(qpb.begin() + long(ib));
    s.conns.push_back(c);
  }
  const uint32_t nphase = uint32_t(r.weighted({25, 35, 25, 15})) + 1;
  bool any_fault = false;
  for (uint32_t p = 0; p < nphase; ++p) {
    GPhase ph;
    ph.doorbell_each = r.chance(1, 4);
    // Phase kinds: `mixed` (both nodes request; WRITE and SEND kinds),
    // `one-way` (one requester; the same), `read` (one requester; READs and
    // at most 2 small other operations). READs stay apart from other load
    // because the model's RX handler sends READ responses, and ACKs, itself
    // and waits while its TX queue is full (A-ERNIC-11): a READ responder
    // that receives much meanwhile overflows its RX buffer, or with PFC two
    // such handlers pause each other for good (tools/random.h, "Limits").
    const size_t kind = r.weighted({45, 30, 25});
    const int one_way = kind == 0 ? -1 : int(r.uniform(0, 1));  // the requester, or -1: both
    const bool reads = kind == 2;
    const uint32_t nops = reads ? uint32_t(r.uniform(1, 4)) : uint32_t(r.uniform(1, 6));
    uint32_t small_others = 0;
    uint64_t bytes = 0;
    uint32_t sends[4][2] = {};  // per connection and receiving node
    for (uint32_t i = 0; i < nops; ++i) {
      GOp o;
      o.conn = uint32_t(r.uniform(0, nconn - 1));
      o.by_a = one_way >= 0 ? one_way == 0 : r.chance(3, 5);
      static const WqeOpcode kOps[] = {WqeOpcode::write, WqeOpcode::write_imm, WqeOpcode::send,
                                       WqeOpcode::send_imm, WqeOpcode::send_inv, WqeOpcode::read};
      o.op = kOps[reads ? (r.chance(2, 3) || small_others >= 2 ? 5 : r.weighted({30, 10, 20, 10, 5}))
                        : r.weighted({30, 10, 20, 10, 5})];
      const GConn& c = s.conns[o.conn];
      o.length = draw_size(r, c.pmtu);
      if (reads && o.op != WqeOpcode::read) {
        ++small_others;
        o.length = std::min<uint32_t>(o.length, 4096);
      }
      if (is_send(o.op)) {
        uint32_t& n = sends[o.conn][o.by_a ? 1 : 0];
        if (n >= kMaxSendsPerPhase) o.op = WqeOpcode::write;
        else ++n;
      }
      if (is_send(o.op)) o.length = std::min(o.length, c.rq_elem);
      if (bytes + o.length > kPhaseBytes) o.length = uint32_t(r.uniform(1, 4096));
      bytes += o.length;
      if (r.chance(1, 5)) o.local_skew = uint32_t(r.uniform(1, 63));
      if (has_remote(o.op) && r.chance(1, 5)) o.remote_skew = uint32_t(r.uniform(1, 63));
      if (has_imm(o.op)) o.immdt = uint32_t(r.next() >> 32);
      ph.ops.push_back(o);
    }
    const bool single_faults = r.chance(3, 10);
    if (single_faults) {
      const uint32_t nf = r.chance(7, 10) ? 1 : 2;
      for (uint32_t f = 0; f < nf; ++f) {
        const GOp& o = ph.ops[r.uniform(0, ph.ops.size() - 1)];
        const GConn& c = s.conns[o.conn];
        GFault g;
        g.conn = o.conn;
        g.action = FaultAction(r.weighted({25, 15, 15, 15, 15, 15}));  // drop duplicate reorder corrupt delay ecn
        const bool answers = r.chance(3, 10);  // the responder's frames (ACKs, READ responses)
        g.a_to_b = answers ? !o.by_a : o.by_a;
        if (answers) g.sel = o.op == WqeOpcode::read && r.chance(1, 2) ? FSel::read_responses : FSel::acks;
        // a frame among the first ones this phase sends that way on the connection
        uint32_t est = 0;
        for (const GOp& q : ph.ops)
          if (q.conn == o.conn && q.by_a == o.by_a)
            est += answers ? (q.op == WqeOpcode::read ? packets(q.length, c.pmtu) : 1)
                           : (q.op == WqeOpcode::read ? 1 : packets(q.length, c.pmtu));
        g.nth = uint32_t(r.uniform(1, std::clamp<uint32_t>(est, 1, 8)));
        g.after = uint32_t(r.uniform(1, 3));
        g.delay_ns = uint32_t(r.uniform(100, 3000));
        g.corrupt_psn = r.chance(1, 3);
        ph.faults.push_back(g);
        any_fault = true;
      }
    }
    // A storm on one connection, both directions at once: the requests one
    // way and the answers (ACKs, NAKs, READ responses) the other way are
    // reordered or delayed, each frame with some probability, a few times.
    // Answers overtaking answers, and answers arriving after the requester
    // has timed out or gone back, are the retransmission cases the single
    // faults above rarely reach (issue 13). A phase has single faults or a
    // storm, and a storm applies at most 3 times in all: every application
    // costs a message at most one retry (a reorder with nothing behind it
    // is a loss), and the driver allows 3 (TIMEOUTCONFi[10:8]).
    if (!single_faults && r.chance(2, 7)) {
      const GOp& o = ph.ops[r.uniform(0, ph.ops.size() - 1)];
      static const std::vector<double> kProb = {0.1, 0.2, 0.3, 0.5};
      for (const bool answers : {true, false}) {
        GFault g;
        g.conn = o.conn;
        g.a_to_b = answers ? !o.by_a : o.by_a;
        // The requests' storm spares READ requests: one held or late would
        // be executed again after its phase and stream its responses into
        // the next phase (tools/random.h, "Limits").
        g.sel = answers ? FSel::answers : FSel::requests_but_read;
        g.action = r.chance(1, 2) ? FaultAction::reorder : FaultAction::delay;
        g.after = uint32_t(r.uniform(1, 3));
        g.delay_ns = uint32_t(r.uniform(100, 3000));
        g.probability = r.pick(kProb);
        g.count = answers ? uint32_t(r.uniform(1, 2)) : 3 - ph.faults.back().count;
        ph.faults.push_back(g);
      }
      any_fault = true;
    }
    s.phases.push_back(ph);
  }
  // A lost last packet (or its ACK) is recovered by the requester's local
  // ACK timeout: 2^6 ticks of 2^10 core cycles (328 us at 200 MHz) instead
  // of the driver's 2^14 (84 ms), well above a phase's worst round trip.
  if (any_fault) s.ack_timeout_exp = 6;
  return s;
}

// ------------------------------------------------------------ rendering ----

const char* ack_mode_name(uint32_t m) { return m == 1 ? "timeout" : m == 2 ? "request" : "request_or_timeout"; }

const char* fault_action_name(FaultAction a) { return to_string(a); }

struct Rendered {
  std::string yaml;
  uint32_t steps = 0, ops = 0, qps = 0, faults = 0;
};

// The text; `header` is the comment block on top.
Rendered render(const GScenario& s, const std::string& header) {
  Rendered out;
  std::ostringstream y;
  const size_t nc = s.conns.size();
  // Memory: per connection and node one MR (a<k> on A, b<k> on B); in each
  // phase every operation gets its own 64-byte-aligned ranges in it, so
  // nothing in flight overlaps. The MR is as long as the largest phase needs.
  struct Place {
    uint64_t local = 0, remote = 0;
  };
  std::vector<std::vector<Place>> place(s.phases.size());
  std::vector<std::array<uint64_t, 2>> mr_len(nc, {0, 0});
  std::vector<bool> conn_used(nc, false);
  for (size_t p = 0; p < s.phases.size(); ++p) {
    std::vector<std::array<uint64_t, 2>> cur(nc, {0, 0});
    for (const GOp& o : s.phases[p].ops) {
      conn_used[o.conn] = true;
      const int req = o.by_a ? 0 : 1, rsp = 1 - req;
      Place pl;
      auto take = [&](int node, uint32_t skew) {
        uint64_t& c = cur[o.conn][node];
        const uint64_t at = (c + 63) / 64 * 64 + skew;
        c = at + std::max<uint32_t>(o.length, 1);
        mr_len[o.conn][node] = std::max(mr_len[o.conn][node], c);
        return at;
      };
      pl.local = take(req, o.local_skew);
      if (has_remote(o.op)) pl.remote = take(rsp, o.remote_skew);
      place[p].push_back(pl);
    }
  }
  auto mr_name = [](size_t k, int node) { return fmt::format("{}{}", node == 0 ? "a" : "b", k + 1); };
  auto conn_name = [](size_t k) { return fmt::format("c{}", k + 1); };
  uint32_t phases_nonempty = 0;
  for (const GPhase& ph : s.phases) phases_nonempty += ph.ops.empty() ? 0 : 1;

  y << header;
  y << "scenario: random_" << s.seed << "\n";
  y << "description: \"ernic-sim random, seed " << s.seed << "\"\n";
  y << "seed: " << s.seed << "\n";
  y << "limits: { sim_time_us: " << 2000 + 2 * kStepTimeoutUs * (phases_nonempty + 1) << ", watchdog_us: 2000 }\n";
  if (s.datapath_model) y << "datapath: model\n";
  if (s.layout4x) y << "layout: \"4.x\"\n";
  y << "nodes:\n";
  for (int n = 0; n < 2; ++n) {
    const GNode& g = s.node[n];
    const char lc = char('a' + n);
    y << "  " << kNodeName[n] << ": { mac: \"02:00:00:00:00:0" << lc << "\"";
    if (has_v4(g.ip)) y << ", ip: 10.0.0." << n + 1;
    if (has_v6(g.ip)) y << ", ipv6: \"fd00::" << lc << "\"";
    if (g.ack_mode != 0 || g.coalesce != 0 || g.ack_timeout_ns != 10000) {
      y << ", ack: { mode: " << ack_mode_name(g.ack_mode);
      if (g.coalesce) y << ", coalesce_packets: " << g.coalesce;
      if (g.ack_timeout_ns != 10000) y << ", timeout_ns: " << g.ack_timeout_ns;
      y << " }";
    }
    if (g.cam_entries) y << ", mr_cache: { mode: cam, entries: " << g.cam_entries << " }";
    y << " }\n";
  }
  y << "steps:\n";
  auto step = [&](const std::string& text) {
    y << "  - " << text << "\n";
    ++out.steps;
  };
  step("init: [A, B]");
  if (s.pfc) {  // as scenarios/traffic/rc_write_pfc.yaml: RoCE pause on priority 3, XOFF 32 KiB, XON 16 KiB
    for (int n = 0; n < 2; ++n) step(fmt::format("reg_write: {{ node: {}, reg: XRNIC_PAUSE_CONF, value: 0x831 }}", kNodeName[n]));
    for (int n = 0; n < 2; ++n)
      step(fmt::format("reg_write: {{ node: {}, reg: XRNIC_BUF_THRESHOLD_ROCE, value: 0x80004000 }}", kNodeName[n]));
  }
  for (size_t k = 0; k < nc; ++k)
    for (int n = 0; n < 2; ++n)
      if (conn_used[k] && mr_len[k][n])
        step(fmt::format("register_mr: {{ node: {}, name: {}, length: {} }}", kNodeName[n], mr_name(k, n),
                         mr_len[k][n]));
  if (s.fill)
    for (size_t k = 0; k < nc; ++k)
      for (int n = 0; n < 2; ++n)
        if (conn_used[k] && mr_len[k][n])
          step(fmt::format("fill: {{ node: {}, mr: {}, pattern: random, seed: {} }}", kNodeName[n], mr_name(k, n),
                           (s.seed * 8 + k * 2 + n) & 0xFFFFFFFF));
  for (size_t k = 0; k < nc; ++k) {
    if (!conn_used[k]) continue;
    ++out.qps;
    const GConn& c = s.conns[k];
    const int cl = c.client_a ? 0 : 1, sv = 1 - cl;
    std::string t = fmt::format("connect: {{ name: {}, client: {}, server: {}", conn_name(k), kNodeName[cl],
                                kNodeName[sv]);
    if (mr_len[k][cl]) t += ", client_mr: " + mr_name(k, cl);
    if (mr_len[k][sv]) t += ", server_mr: " + mr_name(k, sv);
    const uint32_t psn[2] = {c.psn_a, c.psn_b}, qp[2] = {c.qp_a, c.qp_b};
    t += fmt::format(", pmtu: {}", c.pmtu);
    if (c.rq_elem != 4096) t += fmt::format(", rq_element_bytes: {}", c.rq_elem);
    t += fmt::format(", client_psn: 0x{:06x}, server_psn: 0x{:06x}, client_qp: {}, server_qp: {}", psn[cl], psn[sv],
                     qp[cl], qp[sv]);
    if (c.ip_version == 6) t += ", ip_version: 6";
    step(t + " }");
  }
  if (s.ack_timeout_exp)
    for (size_t k = 0; k < nc; ++k) {
      if (!conn_used[k]) continue;
      for (int n = 0; n < 2; ++n) {
        bool requester = false;
        for (const GPhase& ph : s.phases)
          for (const GOp& o : ph.ops) requester |= o.conn == k && (o.by_a ? 0 : 1) == n;
        if (requester)
          step(fmt::format("reg_write: {{ node: {}, reg: TIMEOUTCONFi, qp: {}, field: ACK_TIMEOUT, value: {} }}",
                           kNodeName[n], n == 0 ? s.conns[k].qp_a : s.conns[k].qp_b, s.ack_timeout_exp));
      }
    }
  uint32_t wr_id = 0;
  for (size_t p = 0; p < s.phases.size(); ++p) {
    const GPhase& ph = s.phases[p];
    if (ph.ops.empty()) continue;
    y << "  # phase " << p + 1 << "\n";
    for (const GFault& f : ph.faults) {
      if (!conn_used[f.conn]) continue;
      ++out.faults;
      const GConn& c = s.conns[f.conn];
      const int from = f.a_to_b ? 0 : 1;
      const uint32_t dest_qp = from == 0 ? c.qp_b : c.qp_a;
      std::string m = f.probability ? fmt::format("dest_qp: {}, probability: {}", dest_qp, *f.probability)
                                    : fmt::format("dest_qp: {}, nth: {}", dest_qp, f.nth);
      if (f.sel == FSel::acks) m = "opcode: RC_ACK, " + m;
      if (f.sel == FSel::read_responses)
        m = "opcode: [RC_READ_RESP_FIRST, RC_READ_RESP_MIDDLE, RC_READ_RESP_LAST, RC_READ_RESP_ONLY], " + m;
      if (f.sel == FSel::answers)
        m = "opcode: [RC_ACK, RC_READ_RESP_FIRST, RC_READ_RESP_MIDDLE, RC_READ_RESP_LAST, RC_READ_RESP_ONLY], " + m;
      if (f.sel == FSel::requests_but_read)
        m = "opcode: [RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST, RC_SEND_LAST_IMM, RC_SEND_ONLY, RC_SEND_ONLY_IMM, "
            "RC_WRITE_FIRST, RC_WRITE_MIDDLE, RC_WRITE_LAST, RC_WRITE_LAST_IMM, RC_WRITE_ONLY, RC_WRITE_ONLY_IMM, "
            "RC_SEND_LAST_INV, RC_SEND_ONLY_INV], " + m;
      std::string t = fmt::format("fault: {{ dir: {}->{}, match: {{ {} }}, action: {}", kNodeName[from],
                                  kNodeName[1 - from], m, fault_action_name(f.action));
      if (f.action == FaultAction::reorder) t += fmt::format(", after: {}", f.after);
      if (f.action == FaultAction::delay) t += fmt::format(", delay_ns: {}", f.delay_ns);
      if (f.action == FaultAction::corrupt) t += f.corrupt_psn ? ", field: bth.psn" : ", field: icrc";
      if (f.probability) t += fmt::format(", count: {}", f.count);
      step(t + " }");
    }
    // One post per (connection, requester), in order of first appearance.
    struct Group {
      uint32_t conn;
      bool by_a;
      std::vector<size_t> ops;
      std::vector<uint32_t> ids;
    };
    std::vector<Group> groups;
    for (size_t i = 0; i < ph.ops.size(); ++i) {
      const GOp& o = ph.ops[i];
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const Group& g) { return g.conn == o.conn && g.by_a == o.by_a; });
      if (it == groups.end()) {
        groups.push_back({o.conn, o.by_a, {}, {}});
        it = groups.end() - 1;
      }
      it->ops.push_back(i);
      it->ids.push_back(++wr_id);
    }
    for (const Group& g : groups) {
      const int req = g.by_a ? 0 : 1;
      y << "  - post:\n      conn: " << conn_name(g.conn) << "\n      node: " << kNodeName[req] << "\n";
      if (ph.doorbell_each && g.ops.size() > 1) y << "      doorbell: each\n";
      y << "      wqes:\n";
      ++out.steps;
      for (size_t j = 0; j < g.ops.size(); ++j) {
        const GOp& o = ph.ops[g.ops[j]];
        const Place& pl = place[p][g.ops[j]];
        ++out.ops;
        y << fmt::format("        - {{ opcode: {}, wr_id: {}, local_mr: {}, local_offset: {}, length: {}",
                         to_string(o.op), g.ids[j], mr_name(g.conn, req), pl.local, o.length);
        if (has_remote(o.op)) y << ", remote_offset: " << pl.remote;
        if (has_imm(o.op)) y << fmt::format(", immdt: 0x{:08x}", o.immdt);
        y << " }\n";
      }
    }
    for (const Group& g : groups) {
      y << "  - wait_completions:\n      conn: " << conn_name(g.conn) << "\n      node: " << kNodeName[g.by_a ? 0 : 1]
        << "\n      count: " << g.ops.size() << "\n      timeout_us: " << kStepTimeoutUs << "\n      expect:\n";
      ++out.steps;
      for (size_t j = 0; j < g.ops.size(); ++j)
        y << fmt::format("        - {{ wr_id: {}, opcode: {}, error: false }}\n", g.ids[j],
                         to_string(ph.ops[g.ops[j]].op));
    }
    // A storm can leave a READ answered twice (a re-issue whose own
    // responses come after the READ completed, up to a whole 3.1 READ): let
    // them drain before the next phase, whose READs may go the other way.
    bool storm = false, reads = false;
    for (const GFault& f : ph.faults) storm |= f.probability.has_value();
    for (const GOp& o : ph.ops) reads |= o.op == WqeOpcode::read;
    if (storm && reads && p + 1 < s.phases.size()) {
      y << "  - wait: { us: 40 }\n";
      ++out.steps;
    }
    if (!s.recv) continue;
    // The receiving end's software: every message of the phase, in order, per
    // (connection, receiver).
    for (const Group& g : groups) {  // a group's messages go to one receiving end
      const int rcv = g.by_a ? 1 : 0;
      std::vector<std::string> exp;
      for (size_t j = 0; j < g.ops.size(); ++j) {
        const GOp& o = ph.ops[g.ops[j]];
        if (!delivers_message(o.op)) continue;
        if (o.op == WqeOpcode::write_imm) {
          exp.push_back(fmt::format("{{ opcode: write_imm, immdt: 0x{:08x} }}", o.immdt));
        } else {
          std::string e = fmt::format("{{ opcode: {}", to_string(o.op));
          if (has_imm(o.op)) e += fmt::format(", immdt: 0x{:08x}", o.immdt);
          e += fmt::format(", length: {}, equals: {{ node: {}, mr: {}, offset: {} }} }}", o.length,
                           kNodeName[1 - rcv], mr_name(g.conn, 1 - rcv), place[p][g.ops[j]].local);
          exp.push_back(e);
        }
      }
      if (exp.empty()) continue;
      y << "  - recv:\n      conn: " << conn_name(g.conn) << "\n      node: " << kNodeName[rcv]
        << "\n      count: " << exp.size() << "\n      timeout_us: " << kStepTimeoutUs << "\n      expect:\n";
      ++out.steps;
      for (const auto& e : exp) y << "        - " << e << "\n";
    }
  }
  out.yaml = y.str();
  return out;
}

std::string gen_header(uint64_t seed) {
  return fmt::format(
      "# Generated by `ernic-sim random --seed {}` (tools/random.cpp): a constrained-random\n"
      "# traffic mix. Every operation's completion and every received message is\n"
      "# checked; the wire monitor and the shadow-memory scoreboard check the rest.\n"
      "# Rerun: ernic-sim run THIS_FILE\n",
      seed);
}

// --------------------------------------------------------- child runs ----

struct Outcome {
  bool ran = false;           // a report was read
  int exit_code = -1;
  std::string primary;        // failure kind of the earliest failure ("" when passed)
  std::set<std::string> kinds;
  std::string what;           // that failure's message
  double fail_us = 0;         // when
  double sim_us = 0;
  uint64_t sb_bytes = 0;      // bytes the scoreboard compared
  bool passed() const { return exit_code == 0; }
};

std::string strip_node(const std::string& where) {
  // "top.B.ernic.qp3" -> "qp", "monitor A->B" -> "monitor"
  std::string w = where;
  const size_t dot = w.rfind('.');
  if (dot != std::string::npos) w = w.substr(dot + 1);
  while (!w.empty() && std::isdigit(static_cast<unsigned char>(w.back()))) w.pop_back();
  return w;
}

std::string failure_kind(const std::string& what) {
  auto starts = [&](const char* p) { return what.rfind(p, 0) == 0; };
  auto has = [&](const char* p) { return what.find(p) != std::string::npos; };
  if (starts("scoreboard:")) return "scoreboard";
  if (has("(watchdog)")) return "watchdog";
  if (starts("simulated time limit")) return "time-limit";
  if (starts("expected ") && has("completion(s)")) return "completion-timeout";
  if (starts("completion ")) return "completion-mismatch";
  if (starts("expected ") && has("received message(s)")) return "recv-timeout";
  if (starts("message ")) return "recv-mismatch";
  if (starts("PG332 compliance")) return "compliance";
  if (starts("internal error")) return "internal-error";
  if (has("TX underflow")) return "tx-underflow";
  return "step-failure";
}

std::string model_error_kind(const std::string& where, const std::string& what) {
  if (where.rfind("monitor", 0) == 0) {
    const size_t c = what.find(':');
    return "monitor:" + (c == std::string::npos ? what : what.substr(0, c));
  }
  if (where.find("host memory") != std::string::npos) return "canary";
  return "model:" + strip_node(where);
}

Outcome read_outcome(int exit_code, const fs::path& json_path, const fs::path& log_path) {
  Outcome o;
  o.exit_code = exit_code;
  std::ifstream in(json_path);
  json j;
  if (in) {
    try {
      in >> j;
      o.ran = true;
    } catch (...) {
    }
  }
  if (!o.ran) {
    if (exit_code == 0) o.exit_code = 1;  // no report is a failure
    if (exit_code == -2) {
      o.primary = "wall-timeout";
    } else if (exit_code < 0) {
      o.primary = "crash";
    } else if (exit_code == 2) {
      o.primary = "bad-scenario";
    } else {
      o.primary = "no-report";
    }
    std::ifstream l(log_path);
    std::string line, last;
    while (std::getline(l, line))
      if (!line.empty()) last = line;
    o.what = last;
    o.kinds.insert(o.primary);
    return o;
  }
  o.sim_us = j.value("sim_time_us", 0.0);
  if (j.contains("scoreboard")) o.sb_bytes = j["scoreboard"].value("bytes_checked", uint64_t(0));
  if (o.exit_code == 0) return o;
  uint64_t best = UINT64_MAX;
  for (const auto& e : j["model_errors"]) {
    const std::string k = model_error_kind(e.value("where", ""), e.value("what", ""));
    o.kinds.insert(k);
    const uint64_t t = e.value("time_ps", uint64_t(0));
    if (t < best) {
      best = t;
      o.primary = k;
      o.what = e.value("where", "") + ": " + e.value("what", "");
    }
  }
  for (const auto& f : j["failures"]) {
    const std::string k = failure_kind(f.value("what", ""));
    o.kinds.insert(k);
    const uint64_t t = f.value("time_ps", uint64_t(0));
    if (t < best) {
      best = t;
      o.primary = k;
      o.what = f.value("what", "");
    }
  }
  if (o.primary.empty()) o.primary = "fail";
  o.kinds.insert(o.primary);
  o.fail_us = best == UINT64_MAX ? 0 : double(best) / 1e6;
  return o;
}

struct Child {
  pid_t pid = -1;
  std::chrono::steady_clock::time_point start;
  fs::path yaml, json, log;
};

Child spawn_run(const std::string& self, const fs::path& yaml, const std::string& plant_bug) {
  Child c;
  c.yaml = yaml;
  c.json = fs::path(yaml).replace_extension(".json");
  c.log = fs::path(yaml).replace_extension(".log");
  fs::remove(c.json);
  std::vector<std::string> args = {self, "run", yaml.string(), "--json", c.json.string(), "--quiet"};
  if (!plant_bug.empty()) args.insert(args.end(), {"--plant-bug", plant_bug});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, c.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  c.start = std::chrono::steady_clock::now();
  if (posix_spawn(&c.pid, self.c_str(), &fa, nullptr, argv.data(), environ) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

// Runs scenarios 0..n-1 in order, at most `jobs` at once; `prepare(i)`
// writes scenario i when it is about to start and gives its path.
// `done(i, outcome)` is called as each finishes (any order).
void run_all(const std::string& self, size_t n, const std::function<fs::path(size_t)>& prepare, unsigned jobs,
             const std::string& plant_bug, uint32_t timeout_s, const std::function<bool()>& keep_starting,
             const std::function<void(size_t, const Outcome&)>& done) {
  std::map<pid_t, std::pair<size_t, Child>> running;
  size_t next = 0;
  while (next < n || !running.empty()) {
    while (running.size() < jobs && next < n && keep_starting()) {
      Child c = spawn_run(self, prepare(next), plant_bug);
      if (c.pid < 0) {
        Outcome o;
        o.exit_code = 1;
        o.primary = "spawn-failed";
        o.kinds.insert(o.primary);
        o.what = "posix_spawn " + self + " failed";
        done(next++, o);
        continue;
      }
      running.emplace(c.pid, std::make_pair(next++, c));
    }
    if (running.empty()) break;
    int st = 0;
    const pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid > 0) {
      auto it = running.find(pid);
      if (it == running.end()) continue;
      const auto [idx, c] = it->second;
      running.erase(it);
      const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      done(idx, read_outcome(code, c.json, c.log));
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto it = running.begin(); it != running.end();) {
      if (now - it->second.second.start > std::chrono::seconds(timeout_s)) {
        kill(it->first, SIGKILL);
        waitpid(it->first, &st, 0);
        const auto [idx, c] = it->second;
        it = running.erase(it);
        done(idx, read_outcome(-2, fs::path(), c.log));
      } else {
        ++it;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// ------------------------------------------------------------ reduction ----

struct Reducer {
  std::string self, plant_bug, kind;
  unsigned jobs = 1;
  uint32_t budget = 300, runs = 0, child_timeout_s = 600;
  fs::path dir;
  uint64_t seed = 0;

  // Index of the first candidate (in order) that still fails with `kind`,
  // or -1. Up to `jobs` candidates run at once; the lowest failing index
  // wins, so the result does not depend on timing.
  int first_failing(const std::vector<GScenario>& cands) {
    size_t i = 0;
    while (i < cands.size() && runs < budget) {
      const size_t n = std::min<size_t>({cands.size() - i, jobs, budget - runs});
      std::vector<fs::path> files;
      for (size_t k = 0; k < n; ++k) {
        const fs::path f = dir / fmt::format("seed_{}.try{}.yaml", seed, k);
        std::ofstream(f) << render(cands[i + k], gen_header(seed)).yaml;
        files.push_back(f);
      }
      std::vector<Outcome> res(n);
      run_all(
          self, n, [&](size_t k) { return files[k]; }, jobs, plant_bug, child_timeout_s, [] { return true; },
          [&](size_t k, const Outcome& o) { res[k] = o; });
      runs += uint32_t(n);
      for (size_t k = 0; k < n; ++k)
        if (!res[k].passed() && res[k].primary == kind) return int(i + k);
      i += n;
    }
    return -1;
  }

  bool try_one(GScenario& s, const GScenario& cand) {
    if (first_failing({cand}) == 0) {
      s = cand;
      return true;
    }
    return false;
  }

  // ddmin-style removal over a list the accessor exposes: chunks of halves,
  // quarters, ... down to single items.
  template <typename Get>
  bool remove_items(GScenario& s, Get get) {
    bool changed = false;
    size_t chunk = std::max<size_t>(1, get(s).size() / 2);
    for (;;) {
      bool progress = false;
      const size_t n = get(s).size();
      if (n == 0) break;
      std::vector<GScenario> cands;
      for (size_t a = 0; a < n; a += chunk) {
        GScenario c = s;
        auto& v = get(c);
        v.erase(v.begin() + long(a), v.begin() + long(std::min(n, a + chunk)));
        cands.push_back(c);
      }
      const int k = first_failing(cands);
      if (k >= 0) {
        s = cands[size_t(k)];
        changed = progress = true;
        chunk = std::min(chunk, std::max<size_t>(1, get(s).size() / 2));
      }
      if (!progress) {
        if (chunk == 1) break;
        chunk = std::max<size_t>(1, chunk / 2);
      }
      if (runs >= budget) break;
    }
    return changed;
  }

  static size_t total_ops(const GScenario& s) {
    size_t n = 0;
    for (const auto& p : s.phases) n += p.ops.size();
    return n;
  }

  GScenario reduce(GScenario s) {
    for (int round = 0; round < 8 && runs < budget; ++round) {
      bool changed = false;
      // 1. phases; then every phase's faults and operations
      changed |= remove_items(s, [](GScenario& g) -> std::vector<GPhase>& { return g.phases; });
      for (size_t p = 0; p < s.phases.size(); ++p) {
        changed |= remove_items(s, [p](GScenario& g) -> std::vector<GFault>& { return g.phases[p].faults; });
        changed |= remove_items(s, [p](GScenario& g) -> std::vector<GOp>& { return g.phases[p].ops; });
      }
      // empty phases go (their faults with them)
      {
        GScenario c = s;
        c.phases.erase(std::remove_if(c.phases.begin(), c.phases.end(), [](const GPhase& p) { return p.ops.empty(); }),
                       c.phases.end());
        if (c.phases.size() != s.phases.size()) changed |= try_one(s, c);
      }
      // 2. all operations in one phase
      if (s.phases.size() > 1) {
        GScenario c = s;
        GPhase one;
        for (const auto& p : c.phases) {
          one.faults.insert(one.faults.end(), p.faults.begin(), p.faults.end());
          one.ops.insert(one.ops.end(), p.ops.begin(), p.ops.end());
        }
        c.phases = {one};
        changed |= try_one(s, c);
      }
      // 3. whole-scenario simplifications (each kept if it still fails)
      std::vector<std::function<bool(GScenario&)>> simplify = {
          [](GScenario& g) { return std::exchange(g.recv, false); },
          [](GScenario& g) { return std::exchange(g.fill, false); },
          [](GScenario& g) { return std::exchange(g.pfc, false); },
          [](GScenario& g) {
            bool any = false;
            for (auto& p : g.phases) any |= !p.faults.empty();
            return !any && std::exchange(g.ack_timeout_exp, 0u) != 0;
          },
          [](GScenario& g) { return std::exchange(g.layout4x, false); },
          [](GScenario& g) { return std::exchange(g.datapath_model, false); },
          [](GScenario& g) {
            bool ch = false;
            for (auto& p : g.phases) ch |= std::exchange(p.doorbell_each, false);
            return ch;
          },
      };
      for (int n = 0; n < 2; ++n) {
        simplify.push_back([n](GScenario& g) { return std::exchange(g.node[n].cam_entries, 0u) != 0; });
        simplify.push_back([n](GScenario& g) {
          if (g.node[n].ip == IpMode::v4) return false;
          g.node[n].ip = has_v4(g.node[n].ip) ? IpMode::v4 : IpMode::dual;
          for (auto& c : g.conns)
            if (!(has_v6(g.node[0].ip) && has_v6(g.node[1].ip))) c.ip_version = 4;
          return true;
        });
        simplify.push_back([n](GScenario& g) { return std::exchange(g.node[n].ack_timeout_ns, uint64_t(10000)) != 10000; });
        simplify.push_back([n](GScenario& g) { return std::exchange(g.node[n].coalesce, 0u) != 0; });
        simplify.push_back([n](GScenario& g) { return g.node[n].coalesce > 1 && std::exchange(g.node[n].coalesce, 1u); });
        simplify.push_back([n](GScenario& g) { return std::exchange(g.node[n].ack_mode, 0u) != 0; });
      }
      for (auto& f : simplify) {
        GScenario c = s;
        if (f(c)) changed |= try_one(s, c);
      }
      for (size_t k = 0; k < s.conns.size(); ++k) {
        std::vector<std::function<bool(GConn&)>> conn_simplify = {
            [](GConn& c) { return c.ip_version == 6 && (c.ip_version = 4, true); },
            [](GConn& c) { return std::exchange(c.pmtu, 4096u) != 4096; },
            [](GConn& c) { return std::exchange(c.rq_elem, 4096u) != 4096; },
            [](GConn& c) { return (c.psn_a != 0 || c.psn_b != 0) && (c.psn_a = c.psn_b = 0, true); },
            [](GConn& c) { return !c.client_a && (c.client_a = true, true); },
        };
        for (auto& f : conn_simplify) {
          GScenario c = s;
          if (f(c.conns[k])) {
            if (c.conns[k].ip_version == 4 && !(has_v4(c.node[0].ip) && has_v4(c.node[1].ip))) continue;
            changed |= try_one(s, c);
          }
        }
      }
      // 4. every operation: a plain SEND, on the first connection, from A,
      // aligned, no immediate, shorter
      for (size_t p = 0; p < s.phases.size(); ++p)
        for (size_t i = 0; i < s.phases[p].ops.size(); ++i) {
          std::vector<std::function<bool(GOp&)>> op_simplify = {
              [](GOp& o) { return o.op != WqeOpcode::send && (o.op = WqeOpcode::send, true); },
              [](GOp& o) { return o.op != WqeOpcode::send && o.op != WqeOpcode::write && (o.op = WqeOpcode::write, true); },
              [](GOp& o) { return std::exchange(o.conn, 0u) != 0; },
              [](GOp& o) { return !o.by_a && (o.by_a = true, true); },
              [](GOp& o) { return (o.local_skew || o.remote_skew) && (o.local_skew = o.remote_skew = 0, true); },
              [](GOp& o) { return std::exchange(o.immdt, 0u) != 0; },
          };
          for (auto& f : op_simplify) {
            GScenario c = s;
            GOp& o = c.phases[p].ops[i];
            if (!f(o)) continue;
            if (is_send(o.op)) o.length = std::min(o.length, c.conns[o.conn].rq_elem);
            changed |= try_one(s, c);
          }
          // sizes: 1, then halving
          const uint32_t len = s.phases[p].ops[i].length;
          std::vector<GScenario> cands;
          for (uint32_t l : {1u, len / 8, len / 2, len - 1})
            if (l >= 1 && l < len) {
              GScenario c = s;
              c.phases[p].ops[i].length = l;
              cands.push_back(c);
            }
          const int k = first_failing(cands);
          if (k >= 0) {
            s = cands[size_t(k)];
            changed = true;
          }
        }
      // 5. the connections still used, numbered from 1
      {
        GScenario c = s;
        std::vector<int> map(c.conns.size(), -1);
        std::vector<GConn> used;
        for (auto& p : c.phases)
          for (auto& o : p.ops)
            if (map[o.conn] < 0) {
              map[o.conn] = int(used.size());
              used.push_back(c.conns[o.conn]);
            }
        bool moved = used.size() != c.conns.size();
        for (size_t k = 0; k < map.size(); ++k) moved |= map[k] >= 0 && map[k] != int(k);
        if (moved) {
          for (auto& p : c.phases) {
            for (auto& o : p.ops) o.conn = uint32_t(map[o.conn]);
            p.faults.erase(std::remove_if(p.faults.begin(), p.faults.end(),
                                          [&](const GFault& f) { return map[f.conn] < 0; }),
                           p.faults.end());
            for (auto& f : p.faults) f.conn = uint32_t(map[f.conn]);
          }
          c.conns = used;
          changed |= try_one(s, c);
        }
      }
      if (!changed) break;
    }
    return s;
  }
};

// ------------------------------------------------------------------ main ----

struct SeedResult {
  bool done = false;
  Outcome out;
  uint32_t steps = 0, ops = 0, qps = 0, faults = 0;
  std::string mix;  // operations by kind
};

std::string op_mix(const GScenario& s) {
  std::map<WqeOpcode, uint32_t> n;
  for (const auto& p : s.phases)
    for (const auto& o : p.ops) ++n[o.op];
  std::string t;
  for (const auto& [op, c] : n) t += fmt::format("{}{} {}", t.empty() ? "" : ", ", c, to_string(op));
  return t;
}

}  // namespace

bool is_plantable(const std::string& name) {
  return std::find(kPlantableBugs.begin(), kPlantableBugs.end(), name) != kPlantableBugs.end();
}

std::string generate_yaml(uint64_t seed) { return render(generate(seed), gen_header(seed)).yaml; }

// CLI11 converts "-1" for an unsigned 64-bit option by wrapping it to
// 2^64-1 (and refuses it for 32 bits with a terse message): refuse a minus
// sign in any unsigned count, naming the option's range.
CLI::Validator no_minus(const std::string& what) {
  return CLI::Validator(
      [what](std::string& v) {
        return v.find('-') == std::string::npos ? std::string() : what + ", got " + v;
      },
      "UINT");
}

CLI::App* add_command(CLI::App& app, Options& opt) {
  auto* c = app.add_subcommand("random", "seeded constrained-random traffic, checked; failures reduced to a small scenario");
  c->add_option("--seed", opt.seed, "first seed (then seed+1, ...)")
      ->check(CLI::Validator(
          [](std::string& v) {  // CLI11 would wrap -1 to 2^64-1
            return v.find('-') == std::string::npos ? std::string() : "a seed is 0..18446744073709551615, got " + v;
          },
          "UINT64"));
  c->add_option("--count", opt.count, "number of seeds")->check(CLI::Range(uint64_t(1), uint64_t(1000000)));
  c->add_option("--jobs", opt.jobs, "runs in parallel (default: 2, or 1 on a single core)")
      ->check(CLI::Range(1u, 256u));
  c->add_option("--out", opt.out_dir, "directory for the scenarios, reports and reduced files");
  c->add_flag("--keep", opt.keep, "keep every scenario and report (default: only failing seeds')");
  c->add_flag("--generate", opt.generate_only, "write the scenarios only, run nothing");
  c->add_option("--plant-bug", opt.plant_bug, "test only: run the model with a planted bug (ack_coalescing, cq_entry_race)");
  c->add_option("--max-failures", opt.max_failures, "start no new seed after this many failures (0: run all)")
      ->check(no_minus("--max-failures is 0..18446744073709551615"));
  c->add_option("--reduce", opt.reduce, "reduce the first this many failing seeds (0: none)")
      ->check(no_minus("--reduce is 0..18446744073709551615"));
  c->add_option("--reduce-runs", opt.reduce_runs, "at most this many runs per reduction")
      ->check(no_minus("--reduce-runs is 0..4294967295"));
  c->add_option("--child-timeout", opt.child_timeout_s, "wall-clock seconds a run may take before it is killed")
      ->check(CLI::Range(1u, 86400u));
  return c;
}

int main(const Options& opt_in, const std::string& self, const std::string& argv0) {
  Options opt = opt_in;
  if (!opt.plant_bug.empty() && !is_plantable(opt.plant_bug)) {
    std::fprintf(stderr, "ernic-sim random: --plant-bug %s: not one of:", opt.plant_bug.c_str());
    for (const auto& b : kPlantableBugs) std::fprintf(stderr, " %s", b.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  if (opt.seed > UINT64_MAX - (opt.count - 1)) {  // the last seed is seed + count - 1 (count >= 1)
    std::fprintf(stderr, "ernic-sim random: --seed + --count overflows\n");
    return 2;
  }
  if (opt.jobs == 0) opt.jobs = std::thread::hardware_concurrency() > 1 ? 2 : 1;
  const fs::path dir = opt.out_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    std::fprintf(stderr, "ernic-sim random: --out %s: cannot create the directory\n", opt.out_dir.c_str());
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bug_arg = opt.plant_bug.empty() ? "" : " --plant-bug " + opt.plant_bug;
  auto file_of = [&](uint64_t i) { return dir / fmt::format("seed_{}.yaml", opt.seed + i); };
  std::vector<SeedResult> res(opt.count);
  bool write_failed = false;
  // Scenario i, written when it is about to run.
  auto prepare = [&](size_t i) {
    const uint64_t seed = opt.seed + i;
    const GScenario g = generate(seed);
    const Rendered r = render(g, gen_header(seed));
    res[i].steps = r.steps, res[i].ops = r.ops, res[i].qps = r.qps, res[i].faults = r.faults;
    res[i].mix = op_mix(g);
    std::ofstream f(file_of(i));
    f << r.yaml;
    if (!f && !write_failed) {
      write_failed = true;
      std::fprintf(stderr, "ernic-sim random: cannot write %s\n", file_of(i).c_str());
    }
    return file_of(i);
  };
  if (opt.generate_only) {
    for (uint64_t i = 0; i < opt.count && !write_failed; ++i) {
      prepare(i);
      std::printf("seed %llu: %s (%u steps, %u ops on %u QPs, %u faults)\n", (unsigned long long)(opt.seed + i),
                  file_of(i).c_str(), res[i].steps, res[i].ops, res[i].qps, res[i].faults);
    }
    return write_failed ? 2 : 0;
  }
  // Results are printed in seed order; with --max-failures the list ends at
  // the failure that reached it (seeds after it that ran meanwhile are
  // dropped), so the output does not depend on timing or --jobs.
  uint64_t failures = 0, printed = 0, printed_failures = 0, finished = 0;
  // A progress line on a terminal only (tools/progress.h): erased before
  // each result line, drawn again after.
  Progress progress("random", size_t(opt.count));
  auto print_ready = [&] {
    if (printed < opt.count && res[printed].done) progress.clear();
    while (printed < opt.count && res[printed].done &&
           (opt.max_failures == 0 || printed_failures < opt.max_failures)) {
      const SeedResult& s = res[printed];
      const uint64_t seed = opt.seed + printed;
      if (s.out.passed()) {
        std::printf("seed %llu: pass  %u op%s (%s) on %u QP%s, %u fault%s, %.3f us simulated, %llu bytes checked\n",
                    (unsigned long long)seed, s.ops, s.ops == 1 ? "" : "s", s.mix.c_str(), s.qps,
                    s.qps == 1 ? "" : "s", s.faults, s.faults == 1 ? "" : "s", s.out.sim_us,
                    (unsigned long long)s.out.sb_bytes);
      } else {
        std::printf("seed %llu: FAIL  %s at %.3f us: %s\n", (unsigned long long)seed, s.out.primary.c_str(),
                    s.out.fail_us, s.out.what.c_str());
        ++printed_failures;
      }
      std::fflush(stdout);
      ++printed;
    }
    progress.update(size_t(finished));
  };
  run_all(
      self, opt.count, prepare, opt.jobs, opt.plant_bug, opt.child_timeout_s,
      [&] { return !write_failed && (opt.max_failures == 0 || failures < opt.max_failures); },
      [&](size_t i, const Outcome& o) {
        res[i].done = true;
        ++finished;
        res[i].out = o;
        if (!o.passed()) ++failures;
        print_ready();
      });
  progress.clear();
  uint64_t ran = 0, passed = 0, ops = 0, faults = 0;
  double sim_us = 0;
  std::vector<uint64_t> failed;
  for (uint64_t i = 0; i < opt.count; ++i) {
    if (i >= printed) {  // not run, or after the --max-failures cut
      for (const char* ext : {".yaml", ".json", ".log"}) fs::remove(fs::path(file_of(i)).replace_extension(ext), ec);
      continue;
    }
    ++ran;
    ops += res[i].ops;
    faults += res[i].faults;
    sim_us += res[i].out.sim_us;
    if (res[i].out.passed()) {
      ++passed;
      if (!opt.keep) {
        for (const char* ext : {".yaml", ".json", ".log"}) fs::remove(fs::path(file_of(i)).replace_extension(ext), ec);
      }
    } else {
      failed.push_back(i);
    }
  }
  std::printf("random: seeds %llu..%llu: %llu passed, %llu failed; %llu operations, %llu faults, %.3f us simulated\n",
              (unsigned long long)opt.seed, (unsigned long long)(opt.seed + ran - 1), (unsigned long long)passed,
              (unsigned long long)failed.size(), (unsigned long long)ops, (unsigned long long)faults, sim_us);
  if (ran < opt.count)
    std::printf("random: stopped at failure %llu (--max-failures); %llu seed(s) not reported\n",
                (unsigned long long)failed.size(), (unsigned long long)(opt.count - ran));
  for (uint64_t i : failed) {
    const uint64_t seed = opt.seed + i;
    std::printf("FAILED seed %llu: %s: %s\n  scenario: %s (report %s, output %s)\n  rerun:    %s run %s%s\n",
                (unsigned long long)seed, res[i].out.primary.c_str(), res[i].out.what.c_str(), file_of(i).c_str(),
                fs::path(file_of(i)).replace_extension(".json").c_str(),
                fs::path(file_of(i)).replace_extension(".log").c_str(), argv0.c_str(), file_of(i).c_str(),
                bug_arg.c_str());
  }
  std::fflush(stdout);
  uint64_t reduced = 0;
  for (uint64_t i : failed) {
    if (reduced >= opt.reduce) break;
    ++reduced;
    const uint64_t seed = opt.seed + i;
    const Outcome& o = res[i].out;
    if (o.primary == "bad-scenario" || o.primary == "spawn-failed") continue;  // nothing to reduce
    Reducer red;
    red.self = self;
    red.plant_bug = opt.plant_bug;
    red.kind = o.primary;
    red.jobs = opt.jobs;
    red.budget = opt.reduce_runs;
    red.child_timeout_s = opt.child_timeout_s;
    red.dir = dir;
    red.seed = seed;
    const auto r0 = std::chrono::steady_clock::now();
    GScenario min = red.reduce(generate(seed));
    const double rs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
    for (unsigned k = 0; k < opt.jobs; ++k) {
      const fs::path t = dir / fmt::format("seed_{}.try{}.yaml", seed, k);
      fs::remove(t, ec);
      fs::remove(fs::path(t).replace_extension(".json"), ec);
      fs::remove(fs::path(t).replace_extension(".log"), ec);
    }
    const fs::path minf = dir / fmt::format("seed_{}.min.yaml", seed);
    Rendered mr = render(min, "");
    // Run the result once more, for its report and the message in its header.
    {
      std::ofstream(minf) << mr.yaml;
      Outcome mo;
      run_all(
          self, 1, [&](size_t) { return minf; }, 1, opt.plant_bug, opt.child_timeout_s, [] { return true; },
          [&](size_t, const Outcome& x) { mo = x; });
      const std::string hdr = fmt::format(
          "# Reduced by `ernic-sim random` from seed {} ({} steps, {} operations) to {} steps, {} operation(s):\n"
          "# it fails with {}{}\n#   {}\n"
          "# Rerun: ernic-sim run THIS_FILE{}\n",
          seed, res[i].steps, res[i].ops, mr.steps, mr.ops, o.primary,
          opt.plant_bug.empty() ? "" : " (with --plant-bug " + opt.plant_bug + ")", mo.what, bug_arg);
      std::ofstream(minf) << render(min, hdr).yaml;
    }
    std::printf("REDUCED seed %llu: %u steps (from %u), %u operation(s) (from %u), still %s, in %u runs\n  file:  %s\n"
                "  rerun: %s run %s%s\n",
                (unsigned long long)seed, mr.steps, res[i].steps, mr.ops, res[i].ops, o.primary.c_str(), red.runs,
                minf.c_str(), argv0.c_str(), minf.c_str(), bug_arg.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "random: reduction of seed %llu took %.1f s of wall time\n", (unsigned long long)seed, rs);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "random: %.1f s of wall time, %u job(s)\n", wall, opt.jobs);
  if (write_failed) return 2;
  return failed.empty() ? 0 : 1;
}

}  // namespace ernic::random_mode
