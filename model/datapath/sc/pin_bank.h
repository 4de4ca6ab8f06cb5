// model/datapath/sc: the channels between RtlDatapath and a Verilated --sc
// top's ports: sc_signal's semantics at a fraction of its cost.
//
// A Pin<T> is what an sc_in<T> / sc_out<T> of the Verilated top binds to
// (it implements sc_signal_inout_if<T>). Like sc_signal<T>, a write is
// seen by read() from the next delta cycle on (evaluate-update), and a
// change is announced by an event notified for the next delta cycle. Unlike
// sc_signal, the pins of one PinBank share one update request and one
// event per delta cycle: the bank commits every pin written in the delta
// (in update()) and, if any value changed, notifies changed_event() once.
// So a top whose inputs all sit in one bank is evaluated once per delta
// cycle in which any of them changed, exactly as with sc_signals (its
// SC_METHOD is sensitive to every input port; every port's default and
// value-changed event is the bank's event), while a cycle's 20-odd input
// words and 40-odd output words cost a store each instead of a virtual
// write, an update and an event each.
//
// Not provided: writer checks (several processes may write a pin, as with
// SC_MANY_WRITERS), sc_trace of a pin, per-pin events (posedge_event and
// negedge_event of a bool pin are the bank's event too: use them only for
// "may have changed").
#pragma once
#include <systemc>
#include <vector>

namespace ernic {

class PinBank;

class PinBase {
 public:
  virtual ~PinBase() = default;

 protected:
  friend class PinBank;
  virtual bool commit() = 0;  // next -> current; true when the value changed
  PinBank* bank_ = nullptr;
  bool queued_ = false;
};

class PinBank : public sc_core::sc_prim_channel {
 public:
  explicit PinBank(const char* name) : sc_core::sc_prim_channel(name) {}
  // Notified (next delta) after a delta cycle in which a pin's value changed.
  const sc_core::sc_event& changed_event() const { return ev_; }
  void queue(PinBase* p) {
    if (p->queued_) return;
    p->queued_ = true;
    if (queue_.empty()) request_update();
    queue_.push_back(p);
  }

 private:
  void update() override {
    bool any = false;
    for (PinBase* p : queue_) {
      any |= p->commit();
      p->queued_ = false;
    }
    queue_.clear();
    if (any) ev_.notify(sc_core::SC_ZERO_TIME);
  }
  std::vector<PinBase*> queue_;
  sc_core::sc_event ev_;
};

namespace pin_detail {
// sc_signal_in_if<bool> has edge queries on top of the generic interface.
template <class T, class Derived>
class EdgeQueries {};
template <class Derived>
class EdgeQueries<bool, Derived> : public sc_core::sc_signal_inout_if<bool> {
 public:
  const sc_core::sc_event& posedge_event() const override { return static_cast<const Derived*>(this)->ev(); }
  const sc_core::sc_event& negedge_event() const override { return static_cast<const Derived*>(this)->ev(); }
  bool posedge() const override { return this->event() && this->read(); }
  bool negedge() const override { return this->event() && !this->read(); }
};
template <class T, class Derived>
using Base = std::conditional_t<std::is_same_v<T, bool>, EdgeQueries<bool, Derived>, sc_core::sc_signal_inout_if<T>>;
}  // namespace pin_detail

template <class T>
class Pin : public pin_detail::Base<T, Pin<T>>, public PinBase {
 public:
  Pin() = default;
  explicit Pin(PinBank& b) { bank_ = &b; }
  void attach(PinBank& b) { bank_ = &b; }

  const T& read() const override { return cur_; }
  const T& get_data_ref() const override { return cur_; }
  void write(const T& v) override {
    next_ = v;
    if (!(v == cur_)) bank_->queue(this);  // else nothing to commit (or already queued)
  }
  bool event() const override {
    return sc_core::sc_get_curr_simcontext()->event_occurred(stamp_);
  }
  const sc_core::sc_event& value_changed_event() const override { return ev(); }
  const sc_core::sc_event& default_event() const override { return ev(); }
  const sc_core::sc_event& ev() const { return bank_->changed_event(); }

 private:
  bool commit() override {
    if (next_ == cur_) return false;
    cur_ = next_;
    stamp_ = sc_core::sc_get_curr_simcontext()->change_stamp();
    return true;
  }
  T cur_{}, next_{};
  sc_dt::uint64 stamp_ = ~sc_dt::UINT64_ONE;
};

}  // namespace ernic
