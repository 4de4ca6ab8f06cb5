// tb/rtl: the clock-domain crossing RTL (rtl/cdc/axis_async_fifo.sv with
// rtl/cdc/sync_cell.sv), Verilated with --sc, against its data and against
// the timed reference model model/datapath/async_fifo_model.h.
//
// A bench is one FIFO with its own two sc_clocks (unrelated periods and
// phases), a writer on the write clock and a reader/checker on the read
// clock. Several benches (seeds, clock ratios) run side by side in one
// kernel; each TEST elaborates its own (one test per process). All test tops
// have DEPTH 128, two synchroniser stages and a 50 ps aperture.
//
// Beat k of a stream carries k in data word 0 and murmur-mixed words
// elsewhere, so a lost, duplicated or stale beat is recognised by content.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "Vcdc_fifo_bin_pkt_tb.h"
#include "Vcdc_fifo_gray_tb.h"
#include "Vcdc_fifo_pkt_tb.h"
#include "model/datapath/async_fifo_model.h"
#include "verilated.h"

using namespace sc_core;
using sc_dt::sc_bv;

namespace {

constexpr uint32_t kDepth = 128;        // rtl/cdc/cdc_fifo_*_tb.sv
constexpr uint32_t kStages = 2;
constexpr uint64_t kAperturePs = 50;
constexpr uint64_t kResetEdges = 6;     // each reset is low for this many edges of its clock

// The same functions as tb/rtl/cdc_fifo_iverilog_tb.sv (and sync_cell's mix).
uint32_t mix32(uint32_t x) {
  uint32_t h = x ^ (x >> 16);
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h == 0 ? 0x6D2B79F5u : h;
}
uint32_t xs32(uint32_t x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

// Payload of beat k: word 0 = k, word w = mix32(k * 16 + w ^ salt).
uint32_t data_word(uint64_t k, int w, uint32_t salt) {
  return w == 0 ? uint32_t(k) : mix32(uint32_t(k) * 16u + uint32_t(w) ^ salt);
}

struct BeatInfo {
  uint64_t keep;
  bool last;
  bool user;
};

// "Hash" stream: beat k's sideband is a function of k alone (so the Icarus
// testbench can make the same): last with probability 1/16 and at least
// every 64 beats (packet mode needs frames shorter than DEPTH), then keep
// of 1..64 bytes and a random tuser.
BeatInfo hash_beat(uint64_t k) {
  const uint32_t kk = uint32_t(k);
  BeatInfo b;
  b.last = (mix32(kk ^ 0x1234u) & 15u) == 0 || (kk & 63u) == 63u;
  const uint32_t n = 1 + mix32(kk ^ 0x5678u) % 64;
  b.keep = b.last ? (n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1) : ~uint64_t(0);
  b.user = b.last && (mix32(kk ^ 0x9ABCu) & 1u);
  return b;
}

// Frames of the given byte lengths as beats.
std::vector<BeatInfo> frame_beats(const std::vector<uint32_t>& frames) {
  std::vector<BeatInfo> out;
  for (uint32_t len : frames) {
    const uint32_t n = (len + 63) / 64;
    for (uint32_t i = 0; i < n; ++i) {
      BeatInfo b;
      b.last = i + 1 == n;
      const uint32_t bytes = b.last ? len - 64 * i : 64;
      b.keep = bytes == 64 ? ~uint64_t(0) : (uint64_t(1) << bytes) - 1;
      b.user = false;
      out.push_back(b);
    }
  }
  return out;
}

struct ModelBeat {
  uint64_t k = 0;
  bool last = false;
};
struct ModelLast {
  bool operator()(const ModelBeat& b) const { return b.last; }
};
using Model = datapath::AsyncFifoModel<ModelBeat, ModelLast>;

struct BenchCfg {
  std::string name;
  uint64_t s_period = 5000, m_period = 3103;  // ps
  uint64_t s_start = 1000, m_start = 1717;    // first rising edge, ps
  uint32_t seed = 1;
  enum class Write { Random, Always, LineRate } write = Write::Random;
  // Random: offer a beat with probability p_valid/256 in a burst and
  // p_valid_off/256 between bursts; a burst lasts 256 decisions on average
  // and a gap 1024 (a decision is made whenever no beat is held).
  uint32_t p_valid = 160, p_valid_off = 160;
  bool ready_always = false;
  uint32_t p_ready = 160;                     // else ready with probability p/256
  bool hash_stream = true;                    // beats from hash_beat(), else `frames`
  uint64_t beats = 0;                         // hash stream length
  std::vector<uint32_t> frames;               // frame lengths (bytes), when !hash_stream
  bool stop_on_error = false;                 // stop this bench at the first anomaly
  bool use_model = false;                     // run the reference model alongside
  bool packet = false;
  bool log = false;                           // keep a text log of read transfers
};

// Per-run outcome of one bench.
struct BenchResult {
  uint64_t sent = 0, received = 0, good = 0;
  uint64_t mismatch = 0, lost = 0, dup = 0;   // anomalies by kind
  uint64_t dropped = 0;                       // LineRate: beats offered while s_axis_tready low
  uint64_t s_meta = 0, m_meta = 0;
  uint64_t ptr_changes_w = 0, ptr_changes_r = 0;  // pointer code bits toggled (each direction)
  uint64_t s_edges = 0, m_edges = 0;
  bool done = false;
  std::vector<uint64_t> tx_time, rx_time, model_rx_time;  // per beat, ps
  uint64_t model_take_mismatch = 0;
  // Packet/frame statistics on the read side (ready always).
  uint64_t bubbles = 0;                       // read cycles without a beat inside a frame
  std::vector<uint64_t> gaps;                 // idle read cycles before each frame but the first
  std::vector<uint64_t> frame_end_time;       // edge that took each frame's last beat
  std::vector<std::string> log;
  uint64_t anomalies() const { return mismatch + lost + dup; }
};

// Any of the three test tops (identical ports).
template <class V>
class Bench : public sc_module {
 public:
  SC_HAS_PROCESS(Bench);

  Bench(sc_module_name name, BenchCfg cfg, std::function<void()> on_done)
      : sc_module(name), cfg_(std::move(cfg)), on_done_(std::move(on_done)),
        s_clk_("s_clk", sc_time(double(cfg_.s_period), SC_PS), 0.5,
               sc_time(double(cfg_.s_start), SC_PS), true),
        m_clk_("m_clk", sc_time(double(cfg_.m_period), SC_PS), 0.5,
               sc_time(double(cfg_.m_start), SC_PS), true),
        dut_("dut"),
        model_(datapath::AsyncFifoConfig{kDepth, kStages, cfg_.packet}) {
    dut_.s_clk(s_clk_);
    dut_.s_rst_n(s_rst_n_);
    dut_.s_axis_tvalid(s_valid_);
    dut_.s_axis_tready(s_ready_);
    dut_.s_axis_tdata(s_data_);
    dut_.s_axis_tkeep(s_keep_);
    dut_.s_axis_tlast(s_last_);
    dut_.s_axis_tuser(s_user_);
    dut_.m_clk(m_clk_);
    dut_.m_rst_n(m_rst_n_);
    dut_.m_axis_tvalid(m_valid_);
    dut_.m_axis_tready(m_ready_);
    dut_.m_axis_tdata(m_data_);
    dut_.m_axis_tkeep(m_keep_);
    dut_.m_axis_tlast(m_last_);
    dut_.m_axis_tuser(m_user_);
    dut_.seed(seed_);
    dut_.s_meta_events(s_meta_);
    dut_.m_meta_events(m_meta_);
    seed_.write(cfg_.seed);
    salt_ = mix32(cfg_.seed ^ 0x5EEDu);
    ws_ = mix32(cfg_.seed ^ 0xA5A5A5A5u);
    rs_ = mix32(cfg_.seed ^ 0x3C3C3C3Cu);
    if (cfg_.hash_stream) {
      total_ = cfg_.beats;
    } else {
      beats_ = frame_beats(cfg_.frames);
      total_ = beats_.size();
      // LineRate: frame f may start at frame_start_[f] (100G: 80 ps a byte,
      // FCS 4 + preamble 8 + IFG 12 bytes on the wire besides the frame).
      uint64_t t = 0;
      for (uint32_t len : cfg_.frames) {
        frame_start_.push_back(t);
        t += uint64_t(len + 24) * 80;
      }
      size_t f = 0;
      for (const BeatInfo& b : beats_) {
        beat_frame_.push_back(uint32_t(f));
        if (b.last) ++f;
      }
    }
    // Writes start once both sides are out of reset.
    t_writes_ = std::max(cfg_.s_start + 2 * kResetEdges * cfg_.s_period,
                         cfg_.m_start + 2 * kResetEdges * cfg_.m_period);
    res_.tx_time.assign(total_, 0);
    res_.rx_time.assign(total_, 0);
    if (cfg_.use_model) res_.model_rx_time.assign(total_, 0);
    SC_METHOD(on_s_edge);
    sensitive << s_clk_.posedge_event();
    dont_initialize();
    SC_METHOD(on_m_edge);
    sensitive << m_clk_.posedge_event();
    dont_initialize();
  }

  const BenchResult& result() const { return res_; }
  const BenchCfg& cfg() const { return cfg_; }
  Model& model() { return model_; }

 private:
  // The last beat of a hash stream ends a frame (packet mode waits for it).
  BeatInfo info(uint64_t k) const {
    if (!cfg_.hash_stream) return beats_[k];
    BeatInfo b = hash_beat(k);
    if (k + 1 == total_ && !b.last) {
      b.last = true;
      b.keep = ~uint64_t(0);
    }
    return b;
  }

  void present(uint64_t k) {
    const BeatInfo b = info(k);
    sc_bv<512> d;
    for (int w = 0; w < 16; ++w) d.set_word(w, data_word(k, w, salt_));
    s_data_.write(d);
    s_keep_.write(b.keep);
    s_last_.write(b.last);
    s_user_.write(b.user);
    s_valid_.write(true);
  }

  void finish() {
    if (res_.done) return;
    res_.done = true;
    res_.s_meta = s_meta_.read();
    res_.m_meta = m_meta_.read();
    if (on_done_) on_done_();
  }

  void on_s_edge() {
    const uint64_t t = sc_time_stamp().value();
    ++res_.s_edges;
    if (res_.s_edges == kResetEdges) s_rst_n_.write(true);
    if (res_.done) return;
    if (t < t_writes_) return;
    const bool v = s_valid_.read(), rdy = s_ready_.read();
    const bool take = v && rdy;
    if (cfg_.use_model) {
      ModelBeat mb{k_tx_, v ? info(k_tx_).last : false};
      if (model_.write_edge(t, v, mb) != take) ++res_.model_take_mismatch;
    }
    bool advance = take;
    if (v && !rdy && cfg_.write == BenchCfg::Write::LineRate) {
      ++res_.dropped;  // a CMAC RX cannot wait: the beat is gone
      advance = true;
    }
    if (advance) {
      if (take) res_.tx_time[k_tx_] = t;
      ++k_tx_;
      ++res_.sent;
    }
    if (v && !advance) return;  // hold the beat until it is taken
    bool want = false;
    if (k_tx_ < total_) {
      switch (cfg_.write) {
        case BenchCfg::Write::Always: want = true; break;
        case BenchCfg::Write::Random:
          ws_ = xs32(ws_);
          if ((ws_ & (burst_ ? 255u : 1023u)) == 0) burst_ = !burst_;
          want = ((ws_ >> 8) & 255u) < (burst_ ? cfg_.p_valid : cfg_.p_valid_off);
          break;
        case BenchCfg::Write::LineRate:
          want = t >= t_writes_ + frame_start_[beat_frame_[k_tx_]];
          break;
      }
    }
    if (want) present(k_tx_);
    else if (v) s_valid_.write(false);
  }

  void on_m_edge() {
    const uint64_t t = sc_time_stamp().value();
    ++res_.m_edges;
    if (res_.m_edges == kResetEdges) m_rst_n_.write(true);
    if (res_.done) return;
    const bool v = m_valid_.read(), r = m_ready_.read();
    if (cfg_.use_model && res_.m_edges > kResetEdges) {
      const std::optional<ModelBeat> mb = model_.read_edge(t, r);
      if (mb && mb->k < total_) res_.model_rx_time[mb->k] = t;
    }
    if (v && r) receive(t);
    else if (res_.m_edges > kResetEdges) idle_cycle();
    // Ready for the next cycle.
    if (!cfg_.ready_always) {
      rs_ = xs32(rs_);
      m_ready_.write((rs_ & 255u) < cfg_.p_ready);
    } else if (!r) {
      m_ready_.write(true);
    }
    if ((res_.received >= total_ && k_tx_ >= total_) ||
        (cfg_.stop_on_error && res_.anomalies() > 0))
      finish();
  }

  void idle_cycle() {
    if (in_frame_) ++res_.bubbles;
    else if (!res_.frame_end_time.empty()) ++gap_;
  }

  void receive(uint64_t t) {
    const sc_bv<512> d = m_data_.read();
    const uint64_t keep = m_keep_.read();
    const bool last = m_last_.read(), user = m_user_.read();
    const uint64_t e = k_rx_;
    ++res_.received;
    if (cfg_.log) {
      char line[96];
      std::snprintf(line, sizeof line, "%llu %08x %08x %016llx %d %d",
                    static_cast<unsigned long long>(t), unsigned(d.get_word(0)),
                    unsigned(d.get_word(15)), static_cast<unsigned long long>(keep), int(last),
                    int(user));
      res_.log.emplace_back(line);
    }
    // Frame accounting (read side).
    if (!in_frame_ && !res_.frame_end_time.empty()) res_.gaps.push_back(gap_);
    gap_ = 0;
    in_frame_ = !last;
    if (last) res_.frame_end_time.push_back(t);

    bool ok = e < total_;
    if (ok) {
      const BeatInfo b = info(e);
      for (int w = 0; w < 16 && ok; ++w) ok = d.get_word(w) == data_word(e, w, salt_);
      ok = ok && keep == b.keep && last == b.last && user == b.user;
    }
    if (ok) {
      ++res_.good;
      res_.rx_time[e] = t;
      ++k_rx_;
      return;
    }
    // Classify by the index the beat carries (if its payload is intact).
    const uint64_t got = d.get_word(0);
    bool intact = got < total_;
    for (int w = 1; w < 16 && intact; ++w) intact = d.get_word(w) == data_word(got, w, salt_);
    if (intact && got > e) {
      res_.lost += got - e;
      k_rx_ = got + 1;
    } else if (intact && got < e) {
      ++res_.dup;
    } else {
      ++res_.mismatch;
      ++k_rx_;
    }
  }

  BenchCfg cfg_;
  std::function<void()> on_done_;
  sc_clock s_clk_, m_clk_;
  sc_signal<bool> s_rst_n_{"s_rst_n", false}, s_valid_{"s_valid"}, s_ready_{"s_ready"},
      s_last_{"s_last"}, s_user_{"s_user"};
  sc_signal<bool> m_rst_n_{"m_rst_n", false}, m_valid_{"m_valid"}, m_ready_{"m_ready"},
      m_last_{"m_last"}, m_user_{"m_user"};
  sc_signal<sc_bv<512>> s_data_{"s_data"}, m_data_{"m_data"};
  sc_signal<uint64_t> s_keep_{"s_keep"}, m_keep_{"m_keep"};
  sc_signal<uint32_t> seed_{"seed"}, s_meta_{"s_meta"}, m_meta_{"m_meta"};
  V dut_;
  Model model_;

  uint32_t salt_ = 0, ws_ = 1, rs_ = 1;
  uint64_t total_ = 0, k_tx_ = 0, k_rx_ = 0;
  uint64_t t_writes_ = 0;
  std::vector<BeatInfo> beats_;
  std::vector<uint64_t> frame_start_;
  std::vector<uint32_t> beat_frame_;
  bool in_frame_ = false;
  bool burst_ = true;
  uint64_t gap_ = 0;
  BenchResult res_;
};

int g_bench_serial = 0;  // SystemC names must be unique in the kernel

void init_kernel() {
  static bool once = false;
  if (!once) {
    sc_set_time_resolution(1, SC_PS);
    once = true;
  }
}

// Runs benches until all are done (or the time cap); returns wall seconds
// and prints the Verilated speed.
double run(const std::vector<const BenchResult*>& results, int& remaining, double cap_ms,
           const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  sc_start(sc_time(cap_ms, SC_MS));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t beats = 0, edges = 0;
  for (const BenchResult* r : results) {
    beats += r->received;
    edges += r->s_edges + r->m_edges;
  }
  std::printf("[ speed    ] %s: %zu benches, %llu beats, %llu clock edges, %.1f us simulated "
              "in %.2f s: %.0f beats/s, %.0f edges/s\n",
              what, results.size(), static_cast<unsigned long long>(beats),
              static_cast<unsigned long long>(edges), sc_time_stamp().to_seconds() * 1e6, wall,
              beats / wall, edges / wall);
  EXPECT_EQ(remaining, 0) << "benches not done within " << cap_ms << " ms simulated";
  return wall;
}

template <class V>
std::vector<const BenchResult*> results_of(const std::vector<std::unique_ptr<Bench<V>>>& b) {
  std::vector<const BenchResult*> out;
  for (auto& x : b) out.push_back(&x->result());
  return out;
}

template <class V>
std::vector<std::unique_ptr<Bench<V>>> make_benches(const std::vector<BenchCfg>& cfgs,
                                                     int& remaining) {
  std::vector<std::unique_ptr<Bench<V>>> out;
  remaining += int(cfgs.size());
  for (size_t i = 0; i < cfgs.size(); ++i)
    out.push_back(std::make_unique<Bench<V>>(("b" + std::to_string(g_bench_serial++)).c_str(), cfgs[i],
                                             [&remaining] {
                                               if (--remaining == 0) sc_stop();
                                             }));
  return out;
}

// Captures expected in the aperture: each toggle of a pointer-code bit is
// sampled by the next edge of the other clock, which falls within the
// window with probability W / T for unrelated clocks.
double expected_meta(uint64_t toggles, uint64_t period) {
  return double(toggles) * double(kAperturePs) / double(period);
}

uint64_t code_toggles(uint64_t increments, bool gray) {
  // Pointer of log2(depth)+1 bits wrapping at 2*depth.
  uint64_t n = 0;
  const uint32_t mask = 2 * kDepth - 1;
  for (uint64_t i = 0; i < increments; ++i) {
    const uint32_t a = uint32_t(i) & mask, b = uint32_t(i + 1) & mask;
    const uint32_t ca = gray ? a ^ (a >> 1) : a, cb = gray ? b ^ (b >> 1) : b;
    n += __builtin_popcount(ca ^ cb);
  }
  return n;
}

// The three clock pairs: (write, read) periods in ps.
struct Ratio {
  uint64_t s, m;
  const char* what;
};
constexpr Ratio kRatios[] = {
    {3103, 5000, "CMAC 322 MHz -> core 200 MHz"},
    {4000, 3103, "core 250 MHz -> CMAC 322 MHz"},
    {3110, 3103, "near-equal 3110 ps -> 3103 ps"},
};
constexpr uint32_t kSeeds[] = {1, 0xC0FFEE, 20240601};

std::vector<BenchCfg> stream_cfgs(const Ratio& r, uint64_t beats_per_seed, bool stop_on_error) {
  std::vector<BenchCfg> cfgs;
  for (uint32_t seed : kSeeds) {
    BenchCfg c;
    c.name = std::string(r.what) + " seed " + std::to_string(seed);
    c.s_period = r.s;
    c.m_period = r.m;
    c.s_start = 1000 + seed % 997;
    c.m_start = 1717 + seed % 1013;
    c.seed = seed;
    c.beats = beats_per_seed;
    // Bursts at ~94% and gaps at ~31% of the write cycles, reader ready
    // ~85%: the FIFO fills in bursts where the writer is the faster side,
    // and in the gaps runs empty, the reader waiting on partial frames.
    c.p_valid = 240;
    c.p_valid_off = 80;
    c.p_ready = 218;
    c.stop_on_error = stop_on_error;
    cfgs.push_back(c);
  }
  return cfgs;
}

// Checks a Gray bench: every beat arrived, in order, intact, and the
// aperture was hit (the expected count assumes pointer changes at random
// phases of the sampling clock; a full or empty FIFO ties them to the other
// clock, so it is printed, not asserted).
template <class V>
void check_gray(const Bench<V>& b, uint64_t beats, uint64_t w2r_changes) {
  const BenchResult& res = b.result();
  const std::string& name = b.cfg().name;
  EXPECT_TRUE(res.done) << name;
  EXPECT_EQ(res.sent, beats) << name;
  EXPECT_EQ(res.received, beats) << name;
  EXPECT_EQ(res.good, beats) << name;
  EXPECT_EQ(res.anomalies(), 0u) << name << ": mismatch " << res.mismatch << " lost " << res.lost
                                 << " dup " << res.dup;
  std::printf("[ meta     ] %s: aperture captures read side %llu (~%.0f at random phase), "
              "write side %llu (~%.0f)\n",
              name.c_str(), static_cast<unsigned long long>(res.m_meta),
              expected_meta(code_toggles(w2r_changes, true), b.cfg().m_period),
              static_cast<unsigned long long>(res.s_meta),
              expected_meta(code_toggles(beats, true), b.cfg().s_period));
  EXPECT_GT(res.m_meta, 0u) << name;
  EXPECT_GT(res.s_meta, 0u) << name;
}

// The same random streams (three seeds) through the Gray FIFO in stream
// mode and in packet mode: nothing lost, duplicated or corrupted.
void gray_stream(const Ratio& r) {
  init_kernel();
  int remaining = 0;
  constexpr uint64_t kBeats = 70000;  // a seed and mode; 420k a clock ratio
  auto cfgs = stream_cfgs(r, kBeats, false);
  auto stream = make_benches<Vcdc_fifo_gray_tb>(cfgs, remaining);
  for (BenchCfg& c : cfgs) {
    c.packet = true;
    c.name += " (packet mode)";
  }
  auto packet = make_benches<Vcdc_fifo_pkt_tb>(cfgs, remaining);
  auto results = results_of(stream);
  for (auto* x : results_of(packet)) results.push_back(x);
  run(results, remaining, 5.0, r.what);
  for (auto& b : stream) check_gray(*b, kBeats, kBeats);
  for (auto& b : packet) check_gray(*b, kBeats, kBeats);
}

TEST(CdcRtl, GrayStreamCmacToCore) { gray_stream(kRatios[0]); }
TEST(CdcRtl, GrayStreamCoreToCmac) { gray_stream(kRatios[1]); }
TEST(CdcRtl, GrayStreamNearEqualClocks) { gray_stream(kRatios[2]); }

// The negative control: the same streams and seeds through the packet-mode
// FIFO with binary-coded pointers. A capture in the aperture mixes old and
// new bits into a write pointer that never existed; beyond the written
// beats it shows stale tlast bits, so a frame starts that is not (wholly)
// in the FIFO and stale beats come out. Each bench stops at its first
// anomaly; the streams run up to three times as long as the Gray tests'
// (the first 70k beats are the same), since a harmful capture needs the
// read side waiting on a partial frame at that instant.
void binary_stream(const Ratio& r) {
  init_kernel();
  int remaining = 0;
  std::vector<BenchCfg> cfgs;
  for (BenchCfg c : stream_cfgs(r, 210000, true)) {
    c.packet = true;
    cfgs.push_back(c);
  }
  auto benches = make_benches<Vcdc_fifo_bin_pkt_tb>(cfgs, remaining);
  run(results_of(benches), remaining, 5.0, r.what);
  for (auto& b : benches) {
    const BenchResult& res = b->result();
    std::printf("[ binary   ] %s: first anomaly after %llu good beats (mismatch %llu, lost %llu, "
                "dup %llu); aperture captures %llu/%llu\n",
                b->cfg().name.c_str(), static_cast<unsigned long long>(res.good),
                static_cast<unsigned long long>(res.mismatch),
                static_cast<unsigned long long>(res.lost),
                static_cast<unsigned long long>(res.dup),
                static_cast<unsigned long long>(res.m_meta),
                static_cast<unsigned long long>(res.s_meta));
    EXPECT_GT(res.anomalies(), 0u) << b->cfg().name << ": the negative control passed";
    EXPECT_GT(res.m_meta + res.s_meta, 0u) << b->cfg().name;
  }
}

TEST(CdcRtl, BinaryPointersFailCmacToCore) { binary_stream(kRatios[0]); }
TEST(CdcRtl, BinaryPointersFailCoreToCmac) { binary_stream(kRatios[1]); }
TEST(CdcRtl, BinaryPointersFailNearEqualClocks) { binary_stream(kRatios[2]); }

// With the reader always ready, every beat leaves the RTL at the reference
// model's read edge or one read period later (the bound in
// async_fifo_model.h), and the writer sees the same s_axis_tready.
TEST(CdcRtl, GrayMatchesModelWithinOneReadCycle) {
  init_kernel();
  int remaining = 0;
  std::vector<BenchCfg> cfgs;
  for (const Ratio& r : kRatios) {
    BenchCfg c = stream_cfgs(r, 20000, false)[0];
    c.ready_always = true;
    c.p_valid = c.p_valid_off = 96;  // slower than the reader at every ratio: never full
    c.use_model = true;
    cfgs.push_back(c);
  }
  auto benches = make_benches<Vcdc_fifo_gray_tb>(cfgs, remaining);
  run(results_of(benches), remaining, 2.0, "RTL vs model");
  for (auto& b : benches) {
    const BenchResult& res = b->result();
    const std::string& name = b->cfg().name;
    const uint64_t tm = b->cfg().m_period;
    ASSERT_EQ(res.good, 20000u) << name;
    EXPECT_EQ(res.model_take_mismatch, 0u) << name;
    uint64_t same = 0, late = 0, other = 0;
    for (size_t k = 0; k < res.rx_time.size(); ++k) {
      const uint64_t rtl = res.rx_time[k], mod = res.model_rx_time[k];
      if (rtl == mod) ++same;
      else if (rtl == mod + tm) ++late;
      else if (++other <= 5)
        ADD_FAILURE() << name << ": beat " << k << " RTL at " << rtl << " ps, model at " << mod;
    }
    std::printf("[ model    ] %s: %llu beats at the model's edge, %llu one read cycle later\n",
                name.c_str(), static_cast<unsigned long long>(same),
                static_cast<unsigned long long>(late));
    EXPECT_EQ(other, 0u) << name;
    EXPECT_GT(same, 0u) << name;
    EXPECT_GT(late, 0u) << name << ": no capture in the aperture delayed a beat";
    // N+1 idle edges of each clock after the last transfer, the model is
    // quiescent (the read pointer has crossed back).
    Model& m = b->model();
    const uint64_t t0 = sc_time_stamp().value();
    for (uint64_t i = 1; i <= kStages + 1; ++i) {
      m.write_edge(t0 + i * b->cfg().s_period, false, ModelBeat{});
      m.read_edge(t0 + i * tm, true);
    }
    EXPECT_TRUE(m.quiescent()) << name;
    EXPECT_EQ(m.occupancy(), 0u) << name;
    // Writes at random phases of the read clock: the read side's captures
    // in the aperture follow W / T_m per toggled bit.
    const double exp_m = expected_meta(code_toggles(20000, true), tm);
    EXPECT_NEAR(double(res.m_meta), exp_m, 0.3 * exp_m) << name;
  }
}

// RoCEv2 frame sizes (bytes, no FCS): Ethernet 14 + IPv4 20 + UDP 8 + BTH 12
// (+ RETH 16 on a WRITE FIRST) + payload + ICRC 4.
constexpr uint32_t kWriteFirst4k = 14 + 20 + 8 + 12 + 16 + 4096 + 4;  // 4170 B, 66 beats
constexpr uint32_t kWriteMiddle4k = 14 + 20 + 8 + 12 + 4096 + 4;      // 4154 B, 65 beats
constexpr uint32_t kAck = 14 + 20 + 8 + 12 + 4 + 4;                    // 62 B (AETH), 1 beat

// Core (200 MHz) -> CMAC TX (322.265625 MHz) in packet mode, back-to-back
// 4 KiB frames, CMAC always ready: no bubble inside a frame, and between
// frames no more idle read cycles than the write side's rate forces.
TEST(CdcRtl, PacketModeBackToBackFramesCoreToCmac) {
  init_kernel();
  constexpr uint64_t kTs = 5000, kTm = 3103;
  constexpr int kFrames = 300;
  int remaining = 0;
  std::vector<BenchCfg> cfgs;
  for (uint32_t seed : kSeeds) {
    BenchCfg c;
    c.name = "packet seed " + std::to_string(seed);
    c.s_period = kTs;
    c.m_period = kTm;
    c.s_start = 1000 + seed % 997;
    c.m_start = 1717 + seed % 1013;
    c.seed = seed;
    c.write = BenchCfg::Write::Always;
    c.ready_always = true;
    c.hash_stream = false;
    c.packet = true;
    c.use_model = true;
    for (int f = 0; f < kFrames; ++f) c.frames.push_back(f % 4 == 0 ? kWriteFirst4k : kWriteMiddle4k);
    cfgs.push_back(c);
  }
  auto benches = make_benches<Vcdc_fifo_pkt_tb>(cfgs, remaining);
  run(results_of(benches), remaining, 2.0, "packet mode, core -> CMAC");
  for (auto& b : benches) {
    const BenchResult& res = b->result();
    const BenchCfg& c = b->cfg();
    const std::vector<BeatInfo> beats = frame_beats(c.frames);
    ASSERT_EQ(res.good, beats.size()) << c.name;
    EXPECT_EQ(res.anomalies(), 0u) << c.name;
    EXPECT_EQ(res.bubbles, 0u) << c.name << ": bubble inside a frame";
    ASSERT_EQ(res.frame_end_time.size(), size_t(kFrames));
    ASSERT_EQ(res.gaps.size(), size_t(kFrames - 1));
    // The writer supplies frame f+1 in n(f+1) write cycles while the reader
    // needs n(f) read cycles for frame f: the gap is that difference in read
    // cycles, plus at most one cycle of edge quantisation and one of
    // metastability.
    uint64_t max_excess = 0;
    for (int f = 0; f + 1 < kFrames; ++f) {
      const uint64_t n0 = (c.frames[f] + 63) / 64, n1 = (c.frames[f + 1] + 63) / 64;
      const uint64_t forced = (n1 * kTs - n0 * kTm + kTm - 1) / kTm;  // ceil, read cycles
      EXPECT_LE(res.gaps[f], forced + 2) << c.name << " gap before frame " << f + 1;
      if (res.gaps[f] > forced) max_excess = std::max(max_excess, res.gaps[f] - forced);
    }
    // Achieved frame rate vs the write-side bound (n beats * 5000 ps a frame).
    uint64_t write_time = 0;
    for (int f = 1; f < kFrames; ++f) write_time += (c.frames[f] + 63) / 64 * kTs;
    const uint64_t read_time = res.frame_end_time.back() - res.frame_end_time.front();
    const double frame_time = double(kWriteFirst4k + 63) / 64 * kTs;
    std::printf("[ packet   ] %s: %d frames, read side %.1f ns vs write-side bound %.1f ns "
                "(%.2f frame times apart); gaps %llu..%llu read cycles, at most %llu above the "
                "forced value\n",
                c.name.c_str(), kFrames, read_time / 1e3, write_time / 1e3,
                (double(read_time) - double(write_time)) / frame_time,
                static_cast<unsigned long long>(*std::min_element(res.gaps.begin(), res.gaps.end())),
                static_cast<unsigned long long>(*std::max_element(res.gaps.begin(), res.gaps.end())),
                static_cast<unsigned long long>(max_excess));
    EXPECT_LE(std::fabs(double(read_time) - double(write_time)), frame_time) << c.name;
    // Against the model: each beat at its edge or one read cycle later.
    uint64_t other = 0;
    for (size_t k = 0; k < res.rx_time.size(); ++k) {
      const uint64_t rtl = res.rx_time[k], mod = res.model_rx_time[k];
      if (rtl != mod && rtl != mod + kTm && ++other <= 5)
        ADD_FAILURE() << c.name << ": beat " << k << " RTL at " << rtl << " ps, model at " << mod;
    }
    EXPECT_EQ(other, 0u) << c.name;
    EXPECT_EQ(res.model_take_mismatch, 0u) << c.name;
    EXPECT_GT(res.m_meta + res.s_meta, 0u) << c.name;
  }
}

// CMAC RX (322.265625 MHz, no backpressure, beats at the 100G line rate)
// -> core (200 MHz, always ready), stream mode: nothing is dropped or lost.
TEST(CdcRtl, CmacToCoreAtLineRateLosesNothing) {
  init_kernel();
  constexpr uint64_t kTs = 3103, kTm = 5000;
  int remaining = 0;
  std::vector<BenchCfg> cfgs;
  for (uint32_t seed : kSeeds) {
    BenchCfg c;
    c.name = "line rate seed " + std::to_string(seed);
    c.s_period = kTs;
    c.m_period = kTm;
    c.s_start = 1000 + seed % 997;
    c.m_start = 1717 + seed % 1013;
    c.seed = seed;
    c.write = BenchCfg::Write::LineRate;
    c.ready_always = true;
    c.hash_stream = false;
    c.use_model = true;
    // WRITE bursts of 4 KiB frames with ACKs between them.
    uint32_t x = mix32(seed);
    for (int f = 0; f < 1200; ++f) {
      x = xs32(x);
      c.frames.push_back((x & 3) == 0 ? kAck : (x & 4) ? kWriteFirst4k : kWriteMiddle4k);
    }
    cfgs.push_back(c);
  }
  auto benches = make_benches<Vcdc_fifo_gray_tb>(cfgs, remaining);
  run(results_of(benches), remaining, 2.0, "CMAC -> core at 100G");
  for (auto& b : benches) {
    const BenchResult& res = b->result();
    const BenchCfg& c = b->cfg();
    const size_t n = frame_beats(c.frames).size();
    EXPECT_EQ(res.dropped, 0u) << c.name << ": beats offered while the FIFO was full";
    EXPECT_EQ(res.good, n) << c.name;
    EXPECT_EQ(res.anomalies(), 0u) << c.name;
    uint64_t other = 0;
    for (size_t k = 0; k < res.rx_time.size(); ++k) {
      const uint64_t rtl = res.rx_time[k], mod = res.model_rx_time[k];
      if (rtl != mod && rtl != mod + kTm) ++other;
    }
    EXPECT_EQ(other, 0u) << c.name;
    EXPECT_GT(res.m_meta + res.s_meta, 0u) << c.name;
    std::printf("[ line     ] %s: %zu frames, %zu beats, none dropped\n", c.name.c_str(),
                c.frames.size(), n);
  }
}

// Idle cycles are cheap: a bench moves 20k beats, then both clocks run on
// with nothing to move; prints the Verilated speed of each part (measured,
// not asserted: wall time is no test criterion).
TEST(CdcRtl, IdleCyclesSpeed) {
  init_kernel();
  BenchCfg c = stream_cfgs(kRatios[1], 20000, false)[0];
  c.ready_always = true;
  std::chrono::steady_clock::time_point t_done;
  uint64_t ps_done = 0;
  Bench<Vcdc_fifo_gray_tb> b("idle", c, [&] {
    t_done = std::chrono::steady_clock::now();
    ps_done = sc_time_stamp().value();
  });
  const auto t0 = std::chrono::steady_clock::now();
  sc_start(sc_time(300, SC_US));
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(b.result().done);
  EXPECT_EQ(b.result().good, 20000u);
  const double busy_s = std::chrono::duration<double>(t_done - t0).count();
  const double idle_s = std::chrono::duration<double>(t1 - t_done).count();
  const double edges_per_ps = 1.0 / double(c.s_period) + 1.0 / double(c.m_period);
  const double busy_edges = double(ps_done) * edges_per_ps;
  const double idle_edges = double(sc_time_stamp().value() - ps_done) * edges_per_ps;
  std::printf("[ speed    ] busy: %.0f clock edges in %.3f s (%.0f edges/s, %.0f beats/s); idle: "
              "%.0f edges in %.3f s (%.0f edges/s)\n",
              busy_edges, busy_s, busy_edges / busy_s, 20000 / busy_s, idle_edges, idle_s,
              idle_edges / idle_s);
}

// The same test tops under Icarus Verilog (tb/rtl/cdc_fifo_iverilog_tb.sv,
// the twin of Bench with the same generators): every read-side transfer at
// the same picosecond with the same beat, and the same aperture counts, in
// stream and packet mode. Shows that sync_cell's $time-based model behaves
// the same in both simulators.
TEST(CdcRtl, SameInIcarusAsInVerilator) {
#if !defined(ERNIC_IVERILOG) || !defined(ERNIC_VVP)
  FAIL() << "iverilog/vvp not found at configure time (tools/bootstrap installs iverilog)";
#else
  init_kernel();
  const std::string out = ERNIC_RTL_TEST_OUT;
  const std::string vvp = out + "/cdc_fifo_iverilog_tb.vvp";
  const std::string src = ERNIC_SOURCE_DIR;
  const std::string cmd = std::string(ERNIC_IVERILOG) + " -g2012 -o " + vvp + " " + src +
                          "/tb/rtl/cdc_fifo_iverilog_tb.sv " + src + "/rtl/cdc/axis_async_fifo.sv " +
                          src + "/rtl/cdc/sync_cell.sv " + src + "/rtl/cdc/cdc_fifo_tb.sv && " + ERNIC_VVP + " -n " + vvp +
                          " +out_stream=" + out + "/cdc_iverilog_stream.log +out_packet=" + out +
                          "/cdc_iverilog_packet.log > " + out + "/cdc_iverilog.out 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  BenchCfg c;  // = cdc_iv_bench's defaults
  c.s_period = 4000;
  c.m_period = 3103;
  c.s_start = 1000;
  c.m_start = 1717;
  c.seed = 7;
  c.beats = 5000;
  c.p_valid = 240;
  c.p_valid_off = 80;
  c.p_ready = 218;
  c.log = true;
  int remaining = 0;
  c.name = "stream";
  auto stream = make_benches<Vcdc_fifo_gray_tb>({c}, remaining);
  c.name = "packet";
  c.packet = true;
  auto packet = make_benches<Vcdc_fifo_pkt_tb>({c}, remaining);
  run({&stream[0]->result(), &packet[0]->result()}, remaining, 2.0, "Verilator side");

  auto compare = [&](const BenchResult& res, const std::string& log_path, const char* what) {
    std::ifstream in(log_path);
    ASSERT_TRUE(in.good()) << log_path;
    std::vector<std::string> iv;
    for (std::string line; std::getline(in, line);) iv.push_back(line);
    std::vector<std::string> vl = res.log;
    char meta[64];
    std::snprintf(meta, sizeof meta, "meta %llu %llu", static_cast<unsigned long long>(res.s_meta),
                  static_cast<unsigned long long>(res.m_meta));
    vl.emplace_back(meta);
    EXPECT_EQ(res.good, 5000u) << what;
    EXPECT_GT(res.s_meta + res.m_meta, 0u) << what;
    ASSERT_EQ(iv.size(), vl.size()) << what << ": Icarus " << iv.size() << " lines, Verilator "
                                    << vl.size();
    size_t diff = 0;
    for (size_t i = 0; i < iv.size(); ++i)
      if (iv[i] != vl[i] && ++diff <= 3)
        ADD_FAILURE() << what << " line " << i + 1 << ": Icarus '" << iv[i] << "', Verilator '"
                      << vl[i] << "'";
    EXPECT_EQ(diff, 0u) << what;
    std::printf("[ icarus   ] %s: %zu transfers identical, %s\n", what, iv.size() - 1,
                iv.back().c_str());
  };
  compare(stream[0]->result(), out + "/cdc_iverilog_stream.log", "stream mode");
  compare(packet[0]->result(), out + "/cdc_iverilog_packet.log", "packet mode");
#endif
}

}  // namespace
