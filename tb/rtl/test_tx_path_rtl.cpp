// tb/rtl: the TX path of the Verilated datapath top (rtl/datapath/
// roce_datapath.sv: roce_tx -> core->CMAC axis_async_fifo, PACKET) against
// its timed reference model seam::TxPathTiming (model/datapath/
// tx_path_timing.h), edge for edge, under backpressure.
//
// The bench drives Vroce_datapath as RtlDatapath does (core 200 MHz, CMAC
// 322.265625 MHz as 3103 ps; inputs written on the model edge half a
// period before the RTL's rising edge): descriptors one at a time (the next
// one valid 2 + a random gap edges after the previous handshake; its
// payload from the same edge, beat after beat), and a CMAC that takes the
// frame at the FIFO's output on the model edge it appears, or later: a
// "line" keeps it busy for a number of CMAC cycles after each take (line
// pacing, slower than roce_tx can fill the FIFO), with now and then a long
// hold (a PFC pause). So the FIFO fills, its tready stalls roce_tx's
// output, roce_tx's beat buffer (large frames) or frame records (small
// frames) fill, and the descriptor handshake waits. Every edge is compared
// with TxPathTiming, fed the same descriptor valid edges and takes: each
// descriptor handshake (core edge), each frame's last write into the FIFO
// (core edge), each frame's first beat loaded at the FIFO's output (CMAC
// edge). Each TEST elaborates its own kernel (gtest_discover_tests runs one
// per process).
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <systemc>
#include <vector>

#include "Vroce_datapath.h"
#include "Vroce_datapath___024root.h"
#include "model/datapath/sc/rtl_datapath_bind.h"
#include "model/datapath/seam.h"
#include "model/datapath/tx_path_timing.h"
#include "model/roce/opcodes.h"
#include "verilated.h"

using namespace sc_core;
using namespace ernic;
using seam::TxPathTiming;

namespace {

constexpr uint64_t kCorePs = 5000, kCmacPs = 3103;
constexpr unsigned kReset = 4;  // edges of each clock with reset low

struct Plan {
  uint64_t frames = 400;
  // Descriptor mix: probability of an ACK-like frame (no payload), else a
  // payload of 1..max_payload bytes (4096 with prob big).
  double ack = 0.3, big = 0.2;
  uint32_t max_payload = 1024;
  double desc_gap = 0.2;       // probability of one more idle edge before a descriptor (geometric)
  double line_factor = 1.6;    // CMAC cycles the line is busy per beat taken
  uint32_t line_overhead = 2;  // and per frame (preamble, FCS, IFG)
  double pause = 0.01;         // probability of a long hold after a take
  uint32_t pause_cycles = 3000;
  uint64_t seed = 1;
};

SC_MODULE(TxPathTb) {
  RoceDatapathPorts p;
  RoceDatapathTop top;
  TxPathTiming model{TxPathTiming::Config{kCorePs, kCmacPs, 2, 256, seam::kTxBufBeats, seam::kTxMaxFrames}};
  Plan plan;
  std::mt19937_64 rng;
  std::vector<seam::TxDesc> descs;
  // Observed (RTL) and predicted (model) edges per frame.
  std::vector<uint64_t> valid_edge;  // each descriptor's first valid edge
  uint64_t full_edges = 0;           // core edges where the full FIFO stalled roce_tx's output
  uint64_t rec_full_edges = 0;       // ... where roce_tx's frame records were all in use (frames_full)
  uint64_t buf_full_edges = 0;       // ... where its beat buffer was full (buf_full)
  std::vector<uint64_t> rtl_acc, rtl_last, rtl_head, mod_acc, mod_last, mod_head, takes;
  uint64_t mod_last_next = 0;
  bool done = false;

  // Core side.
  uint64_t k = 0;                 // the next rising edge's index
  bool core_rise = true;
  size_t next_desc = 0;           // the next descriptor to present
  bool desc_on = false;           // s_desc_valid driven
  uint64_t desc_from = 0;         // the earliest edge the next descriptor may be valid
  struct PayBeat { uint64_t valid_from; bool last; };
  std::deque<PayBeat> pay;        // payload beats to present, in order
  bool pay_on = false;
  uint64_t frame_w = 0;           // frames written into the FIFO
  // CMAC side.
  uint64_t x = 0;
  bool cmac_rise = true;
  bool taking = false, tready_low_next = false;
  uint64_t head_frame = 0;        // the frame at the FIFO's output (next to take)
  uint64_t line_free = 0;         // first CMAC edge the "line" takes another frame

  SC_CTOR(TxPathTb) : rng(1) {
    top = bind_roce_datapath<Vroce_datapath>("tb.dut", p);
    SC_METHOD(core_tick);
    SC_METHOD(cmac_tick);
    SC_METHOD(evaluate);  // one eval a delta after the ticks' writes (both clocks' at one time)
    sensitive << eval_ev;
    dont_initialize();
  }

  sc_event eval_ev;
  void evaluate() { top.eval(); }

  void prepare(const Plan& pl) {
    plan = pl;
    rng.seed(pl.seed);
    std::uniform_real_distribution<double> u(0, 1);
    for (uint64_t i = 0; i < pl.frames; ++i) {
      seam::TxDesc d;
      d.ipv6 = u(rng) < 0.3;
      d.psn = uint32_t(i);
      d.dest_qp = 2;
      if (u(rng) < pl.ack) {
        d.opcode = roce::op::RC_ACK;
        d.ext_len = 4;
      } else {
        d.opcode = roce::op::RC_SEND_ONLY;
        d.payload_len = uint16_t(u(rng) < pl.big ? 4096 : 1 + rng() % pl.max_payload);
      }
      descs.push_back(d);
    }
    desc_from = kReset + 4;
  }

  bool coin(double prob) { return std::uniform_real_distribution<double>(0, 1)(rng) < prob; }

  // What the model knows so far.
  void poll() {
    const uint64_t n = model.frames();
    if (n && mod_acc.size() < n && model.accept(n - 1) != TxPathTiming::kUnknown) {
      mod_acc.resize(n, TxPathTiming::kUnknown);
      mod_acc[n - 1] = model.accept(n - 1);
    }
    const uint64_t f = model.taken();
    if (f < n && model.head(f) != TxPathTiming::kUnknown) {
      if (mod_head.size() <= f) mod_head.resize(f + 1, TxPathTiming::kUnknown);
      mod_head[f] = model.head(f);
    }
    while (mod_last_next < n && mod_last_next >= model.first_kept() &&
           model.last_write(mod_last_next) != TxPathTiming::kUnknown)
      mod_last.push_back(model.last_write(mod_last_next++));
  }

  void core_tick() {
    const uint64_t P = kCorePs, H = P / 2;
    if (!core_started_) {  // reset from time 0, the first rising edge at H
      core_started_ = true;
      p.core_rst_n.write(false);
      eval_ev.notify(SC_ZERO_TIME);
      next_trigger(sc_time(double(H), SC_PS));
      return;
    }
    if (core_rise) {
      // --- rising edge k: handshakes as the signals stand.
      if (desc_on && p.s_desc_ready.read()) {
        rtl_acc.push_back(k);
        desc_on = false;
        desc_from = k + 2 + gap();
        ++next_desc;
      }
      if (pay_on && p.s_pay_tready.read()) pay.pop_front();
      const auto* r = static_cast<Vroce_datapath*>(top.model.get())->rootp;
      if (r->roce_datapath__DOT__tx_tvalid && !r->roce_datapath__DOT__tx_tready) ++full_edges;
      if (r->roce_datapath__DOT__u_tx__DOT__nfr_q == seam::kTxMaxFrames) ++rec_full_edges;
      if (r->roce_datapath__DOT__u_tx__DOT__used_q == seam::kTxBufBeats) ++buf_full_edges;
      TxSeamBeat b;
      if (top.tx_seam(b) && b.last) rtl_last.push_back(k), ++frame_w;
      p.core_clk.write(true);
      eval_ev.notify(SC_ZERO_TIME);
      core_rise = false;
      next_trigger(sc_time(double(P - H), SC_PS));
      return;
    }
    // --- model edge k + 1: inputs for edge k + 1.
    p.core_clk.write(false);
    if (k + 1 >= kReset) p.core_rst_n.write(true);
    ++k;
    if (!desc_on && next_desc < descs.size() && k >= desc_from) {
      const seam::TxDesc& d = descs[next_desc];
      const seam::TxdBits bits = seam::pack(d);
      for (int i = 0; i < 12; ++i) p.s_desc_w[i].write(bits[size_t(i)]);
      p.s_desc_valid.write(true);
      desc_on = true;
      const size_t beats = (d.payload_len + 63) / 64;
      for (size_t i = 0; i < beats; ++i) pay.push_back({k, i + 1 == beats});
      valid_edge.push_back(k);
      model.push(d, k);
      poll();
    } else if (!desc_on) {
      p.s_desc_valid.write(false);
    }
    pay_on = !pay.empty() && pay.front().valid_from <= k;
    if (pay_on) {
      for (int i = 0; i < 8; ++i) p.s_pay_tdata_w[i].write(rng());
      p.s_pay_tkeep.write(~uint64_t(0));
      p.s_pay_tlast.write(pay.front().last);
    }
    p.s_pay_tvalid.write(pay_on);
    eval_ev.notify(SC_ZERO_TIME);
    core_rise = true;
    next_trigger(sc_time(double(H), SC_PS));
  }

  uint64_t gap() {
    uint64_t g = 0;
    while (coin(plan.desc_gap)) ++g;
    return g;
  }

  void cmac_tick() {
    const uint64_t C = kCmacPs, H = C / 2;
    if (!cmac_started_) {
      cmac_started_ = true;
      p.cmac_rst_n.write(false);
      eval_ev.notify(SC_ZERO_TIME);
      next_trigger(sc_time(double(H), SC_PS));
      return;
    }
    if (cmac_rise) {
      // --- rising edge x: the beat taken.
      if (taking && p.m_cmac_tvalid.read() && p.m_cmac_tready.read() && p.m_cmac_tlast.read()) {
        taking = false;
        tready_low_next = true;
      }
      p.cmac_clk.write(true);
      eval_ev.notify(SC_ZERO_TIME);
      cmac_rise = false;
      next_trigger(sc_time(double(C - H), SC_PS));
      return;
    }
    // --- model edge x + 1.
    p.cmac_clk.write(false);
    if (x + 1 >= kReset) p.cmac_rst_n.write(true);
    ++x;
    if (tready_low_next) {
      tready_low_next = false;
      p.m_cmac_tready.write(false);
    }
    if (!taking && p.m_cmac_tvalid.read() && head_frame < descs.size()) {
      if (rtl_head.size() == head_frame) rtl_head.push_back(x - 1);  // loaded at the edge before
      if (x >= line_free) {  // take it: its first beat at edge x
        p.m_cmac_tready.write(true);
        taking = true;
        const uint64_t O = model.out_beats(head_frame);
        takes.push_back(x);
        model.take(x);
        poll();
        line_free = x + uint64_t(double(O) * plan.line_factor) + plan.line_overhead;
        if (coin(plan.pause)) line_free += plan.pause_cycles;
        if (++head_frame == descs.size()) done = true;
      }
    }
    eval_ev.notify(SC_ZERO_TIME);
    cmac_rise = true;
    if (done && !taking && !tready_low_next) {
      sc_stop();
      return;
    }
    next_trigger(sc_time(double(H), SC_PS));
  }

 private:
  bool core_started_ = false, cmac_started_ = false;
};

struct Stalls { uint64_t fifo_full, rec_full, buf_full; };

Stalls run(const Plan& plan) {
  TxPathTb tb("tb");
  tb.prepare(plan);
  sc_start(sc_time(double(plan.frames) * 2e6, SC_PS));
  EXPECT_TRUE(tb.done) << "only " << tb.head_frame << " of " << plan.frames << " frames taken";
  EXPECT_EQ(tb.rtl_acc.size(), plan.frames);
  EXPECT_EQ(tb.rtl_last.size(), plan.frames);
  EXPECT_EQ(tb.rtl_head.size(), plan.frames);
  EXPECT_EQ(tb.mod_acc.size(), plan.frames);
  EXPECT_EQ(tb.mod_last.size(), plan.frames);
  EXPECT_EQ(tb.mod_head.size(), plan.frames);
  if (!tb.done || tb.rtl_acc.size() != plan.frames || tb.rtl_last.size() != plan.frames ||
      tb.rtl_head.size() != plan.frames || tb.mod_acc.size() != plan.frames || tb.mod_last.size() != plan.frames ||
      tb.mod_head.size() != plan.frames)
    return {};
  size_t bad = 0;
  uint64_t stalled = 0;  // descriptors whose handshake waited more than 4 edges
  for (uint64_t f = 0; f < plan.frames; ++f) {
    const bool ok = tb.rtl_acc[f] == tb.mod_acc[f] && tb.rtl_last[f] == tb.mod_last[f] &&
                    tb.rtl_head[f] == tb.mod_head[f];
    if (!ok && ++bad <= 5)
      ADD_FAILURE() << "frame " << f << " (payload " << tb.descs[f].payload_len << "): handshake rtl "
                    << tb.rtl_acc[f] << " model " << tb.mod_acc[f] << "; last FIFO write rtl " << tb.rtl_last[f]
                    << " model " << tb.mod_last[f] << "; head at the FIFO's output (CMAC edge) rtl "
                    << tb.rtl_head[f] << " model " << tb.mod_head[f] << "; taken at " << tb.takes[f];
    if (tb.rtl_acc[f] > tb.valid_edge[f] + 4) ++stalled;
  }
  EXPECT_EQ(bad, 0u);
  std::printf("%llu frames: every handshake, last FIFO write and head edge equal; %llu handshakes held back, "
              "core edges with the FIFO full %llu, the frame records full %llu, the beat buffer full %llu\n",
              static_cast<unsigned long long>(plan.frames), static_cast<unsigned long long>(stalled),
              static_cast<unsigned long long>(tb.full_edges), static_cast<unsigned long long>(tb.rec_full_edges),
              static_cast<unsigned long long>(tb.buf_full_edges));
  EXPECT_GT(stalled, plan.frames / 10) << "the bench did not hold the descriptors back";
  EXPECT_GT(tb.full_edges, plan.frames) << "the bench did not fill the FIFO";
  return {tb.full_edges, tb.rec_full_edges, tb.buf_full_edges};
}

// Small frames: roce_tx's 32 frame records fill behind the full FIFO.
TEST(TxPathRtl, SmallFramesUnderLinePacingAndPauses) {
  Plan p;
  p.frames = 1500;
  p.ack = 0.5;
  p.big = 0;
  p.max_payload = 300;
  p.line_factor = 3;
  p.line_overhead = 3;
  p.seed = 11;
  EXPECT_GT(run(p).rec_full, 0u);
}

// Large frames: roce_tx's 256-beat buffer fills behind the full FIFO.
TEST(TxPathRtl, LargeFramesUnderLinePacingAndPauses) {
  Plan p;
  p.frames = 300;
  p.ack = 0.1;
  p.big = 0.6;
  p.max_payload = 4096;
  p.seed = 12;
  EXPECT_GT(run(p).buf_full, 0u);
}

// A mix, pauses often.
TEST(TxPathRtl, MixedFramesUnderLongPauses) {
  Plan p;
  p.frames = 800;
  p.pause = 0.05;
  p.seed = 13;
  run(p);
}

}  // namespace
