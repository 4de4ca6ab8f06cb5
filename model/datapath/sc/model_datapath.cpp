#include "model/datapath/sc/model_datapath.h"

#include <fmt/format.h>

#include "model/datapath/roce_rx_ref.h"

namespace ernic {

using namespace sc_core;

ModelDatapath::ModelDatapath(sc_module_name name, const ClockDomain& core, const ClockDomain& cmac, SimContext& ctx,
                             const std::string& scope, const DatapathConfig& cfg)
    : RoceDatapath(name, core, cmac, ctx, scope, cfg) {
  SC_METHOD(rx_method);
  sensitive << rx_ev_;
  dont_initialize();
}

ModelDatapath::~ModelDatapath() = default;

uint64_t ModelDatapath::core_edge_after(uint64_t t) const {
  const uint64_t P = core_.period_ps(), H = P / 2;
  return t < H ? 0 : (t - H) / P + 1;
}

uint64_t ModelDatapath::cmac_edge_after(uint64_t t) const {
  const uint64_t C = cmac_.period_ps(), H = C / 2;
  return t < H ? 0 : (t - H) / C + 1;
}

// ------------------------------------------------------------------ TX

void ModelDatapath::tx(const seam::TxDesc& d, roce::Bytes payload) {
  // Backpressure: the frames handed in and not yet taken by the CMAC must
  // fit in what the RTL holds (roce_tx's buffer and records, the FIFO).
  const uint64_t beats = seam::tx_shape(d).out_beats;
  auto full = [&] { return txq_.size() >= kMaxFramesHeld || held_beats_ + beats > kMaxBeatsHeld; };
  if (full()) {  // the descriptor waits
    ctx_.set(v_desc_valid_, 1);
    ctx_.set(v_desc_ready_, 0);
    while (full()) wait(taken_ev_);
  }
  const uint64_t P = core_.period_ps();
  const uint64_t now = ClockDomain::now_ps();
  const uint16_t sp = sport();
  // RtlDatapath's driver picks it up at the first RTL edge after now and
  // presents it from the model edge after that: the RTL samples it from the
  // edge after.
  const uint64_t valid = core_edge_after(now) + 1;
  // roce_tx takes it once its held descriptor has moved on (loaded).
  const uint64_t accept = any_tx_ ? std::max(valid, prev_load_ + 1) : valid;
  const seam::TxShape shape = seam::tx_shape(d);
  const std::vector<uint64_t> pay_valid(shape.payload_beats, std::max(accept, pay_free_));
  const seam::RoceTxTiming::Frame t = timing_.push(d, accept, pay_valid);
  any_tx_ = true;
  prev_load_ = t.load;
  if (!t.pay.empty()) pay_free_ = t.pay.back() + 1;
  // The PACKET FIFO (async_fifo_model.h): the frame's first beat is loaded
  // at CMAC edge e1 + N of the core edge that wrote its last beat.
  TxFrame fr;
  fr.f = seam::tx_frame(d, payload, sp);
  fr.head_edge = cmac_edge_after(core_edge_ps(t.last_out)) + kSyncStages;
  held_beats_ += beats;
  txq_.push_back(std::move(fr));
  ++stats_.tx_frames;
  const uint64_t vis = visible_ps(txq_.back());
  if (txq_.size() == 1) head_ev_.notify(ps(vis > now ? vis - now : 0));
  // The handshake in the waveform: valid from the model edge before edge
  // `valid`, ready low until the one before `accept`.
  ctx_.set_at(v_desc_valid_, 1, valid * P);
  ctx_.set_at(v_desc_ready_, accept > valid ? 0 : 1, valid * P);
  ctx_.set_at(v_desc_ready_, 1, accept * P);
  ctx_.set_at(v_desc_valid_, 0, (accept + 1) * P);
  // tx() returns on the model edge after the handshake.
  const uint64_t ret = (accept + 1) * P;
  if (ret > now) wait(ps(ret - now));
}

// When the CMAC sees the frame at the FIFO's output: the model edge after
// the edge that loads its first beat, not before the previous frame's last
// beat was taken.
uint64_t ModelDatapath::visible_ps(const TxFrame& t) const {
  uint64_t load = t.head_edge;
  if (any_take_) load = std::max(load, prev_take_last_);
  return (load + 1) * cmac_.period_ps();
}

const uint8_t* ModelDatapath::tx_head(size_t* len) {
  if (txq_.empty() || ClockDomain::now_ps() < visible_ps(txq_.front())) return nullptr;
  *len = std::min<size_t>(64, txq_.front().f.size());
  return txq_.front().f.data();
}

CmacTxSource::Taken ModelDatapath::tx_take(uint32_t, uint32_t) {
  // On CMAC model edge x: its beats are taken at edges x .. x + B - 1 (the
  // Cmac model waits them out).
  Taken t;
  t.f = std::move(txq_.front().f);
  txq_.pop_front();
  const uint64_t x = ClockDomain::now_ps() / cmac_.period_ps();
  prev_take_last_ = x + (t.f.size() + 63) / 64 - 1;
  held_beats_ -= (t.f.size() + 63) / 64;
  any_take_ = true;
  ++stats_.tx_out;
  taken_ev_.notify(SC_ZERO_TIME);
  if (!txq_.empty()) {
    const uint64_t now = ClockDomain::now_ps(), vis = visible_ps(txq_.front());
    head_ev_.notify(ps(vis > now ? vis - now : 0));
  }
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
