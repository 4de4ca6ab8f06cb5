#include "model/datapath/sc/model_datapath.h"

#include <fmt/format.h>

#include "model/datapath/roce_rx_ref.h"

namespace ernic {

using namespace sc_core;

ModelDatapath::ModelDatapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                             const std::string& scope, const DatapathConfig& cfg)
    : RoceDatapath(name, core, cmac, ctx, scope, cfg),
      timing_(seam::TxPathTiming::Config{core.period_ps(), cmac.period_ps(), kSyncStages, kTxFifoDepth,
                                         seam::kTxBufBeats, seam::kTxMaxFrames}) {
  SC_METHOD(rx_method);
  sensitive << rx_ev_;
  dont_initialize();
}

ModelDatapath::~ModelDatapath() = default;

// ------------------------------------------------------------------ TX

void ModelDatapath::tx(const seam::TxDesc& d, roce::Bytes payload) {
  const uint64_t P = core_.period_ps();
  const uint64_t now = ClockDomain::now_ps();
  const uint16_t sp = sport();
  // RtlDatapath's driver picks it up at the first RTL edge after now and
  // presents it from the model edge after that: the RTL samples it from the
  // edge after (the payload too, beat after beat).
  const uint64_t valid = core_edge_after(now) + 1;
  txq_.push_back(seam::tx_frame(d, payload, sp));
  ++stats_.tx_frames;
  const uint64_t f = timing_.push(d, valid);
  notify_head();
  // The handshake in the waveform: valid from the model edge before edge
  // `valid`, ready low until the one before the handshake.
  ctx_.set_at(v_desc_valid_, 1, valid * P);
  uint64_t acc = timing_.accept(f);
  ctx_.set_at(v_desc_ready_, acc == valid ? 1 : 0, valid * P);
  // Backpressure: the handshake waits for the CMAC to take frames.
  while (acc == seam::TxPathTiming::kUnknown) {
    wait(taken_ev_);
    acc = timing_.accept(f);
  }
  ctx_.set_at(v_desc_ready_, 1, acc * P);
  ctx_.set_at(v_desc_valid_, 0, (acc + 1) * P);
  // tx() returns on the model edge after the handshake.
  const uint64_t ret = (acc + 1) * P, t = ClockDomain::now_ps();
  if (ret > t) wait(ps(ret - t));
}

// When the CMAC sees the oldest frame not taken: the model edge after the
// CMAC edge that loads its first beat into the FIFO's output register.
uint64_t ModelDatapath::visible_ps() const {
  const uint64_t f = timing_.taken();
  if (f >= timing_.frames()) return UINT64_MAX;
  const uint64_t h = timing_.head(f);
  return h == seam::TxPathTiming::kUnknown ? UINT64_MAX : (h + 1) * cmac_.period_ps();
}

void ModelDatapath::notify_head() {
  const uint64_t f = timing_.taken();
  if (txq_.empty() || head_notified_ == f + 1) return;
  const uint64_t vis = visible_ps();
  if (vis == UINT64_MAX) return;
  head_notified_ = f + 1;
  const uint64_t now = ClockDomain::now_ps();
  head_ev_.notify(ps(vis > now ? vis - now : 0));
}

const uint8_t* ModelDatapath::tx_head(size_t* len) {
  if (txq_.empty() || ClockDomain::now_ps() < visible_ps()) return nullptr;
  *len = std::min<size_t>(64, txq_.front().size());
  return txq_.front().data();
}

CmacTxSource::Taken ModelDatapath::tx_take(uint32_t, uint32_t) {
  // On CMAC model edge x: its beats are taken at edges x .. x + O - 1 (the
  // Cmac model waits them out).
  Taken t;
  t.f = std::move(txq_.front());
  txq_.pop_front();
  timing_.take(ClockDomain::now_ps() / cmac_.period_ps());
  ++stats_.tx_out;
  taken_ev_.notify(SC_ZERO_TIME);
  notify_head();
  return t;
}

// ------------------------------------------------------------------ RX

void ModelDatapath::cmac_rx(FrameBytes f, uint64_t start_ps) {
  const uint64_t P = core_.period_ps();
  const uint64_t now = ClockDomain::now_ps();
  ++stats_.rx_in;
  // Beats presented from the model edge start_ps (sampled at the RTL's
  // edge start / C), after the previous frame's.
  const uint64_t first = std::max(start_ps / cmac_.period_ps(), rx_next_in_);
  const uint64_t beats = (f.size() + 63) / 64;
  rx_next_in_ = first + beats;
  uint64_t load = rx_prev_load_;
  for (uint64_t b = 0; b < beats; ++b) {
    const uint64_t e1 = core_edge_after(cmac_edge_ps(first + b));
    load = std::max(e1 + kSyncStages, load + 1);
  }
  rx_prev_load_ = load;
  const uint64_t last_taken = load + 1;  // roce_rx takes the beat at the edge after its load
  const uint64_t deliver = (last_taken + seam::kRoceRxDescLatency) * P;
  seam::RxOutput o = seam::roce_rx_ref(f, false);
  RxOut r{deliver, o.bypass, o.desc, o.bypass ? std::move(f) : std::move(o.payload)};
  rxq_.push_back(std::move(r));
  if (rxq_.size() == 1) rx_ev_.notify(ps(deliver - now));
}

void ModelDatapath::rx_method() {
  const uint64_t now = ClockDomain::now_ps();
  while (!rxq_.empty() && rxq_.front().t_ps <= now) {
    RxOut r = std::move(rxq_.front());
    rxq_.pop_front();
    ctx_.bump();
    if (r.bypass) {
      ++stats_.bypass_frames;
      if (bypass_sink) bypass_sink(std::move(r.payload));
    } else {
      ++stats_.rx_frames;
      if (rx_sink) rx_sink(r.desc, std::move(r.payload));
    }
  }
  if (!rxq_.empty()) rx_ev_.notify(ps(rxq_.front().t_ps - now));
}

std::string ModelDatapath::status() const {
  if (txq_.empty() && rxq_.empty()) return {};
  return fmt::format("datapath model: {} TX frame(s) not yet taken by the CMAC, {} RX frame(s) in flight", txq_.size(),
                     rxq_.size());
}

std::unique_ptr<RoceDatapath> make_model_datapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac,
                                              SimContext& ctx, const std::string& scope, const DatapathConfig& cfg) {
  return std::make_unique<ModelDatapath>(name, core, cmac, ctx, scope, cfg);
}

}  // namespace ernic
