// model/datapath/sc: a port of a Verilated --cc top, read and written in
// place (issue 17: the datapath's top is a plain C++ model that its
// SystemC process evaluates itself, on the edges where something can
// change, instead of a --sc module woken through sc_signals).
//
// A Port<T> points at the model's own field for the port (CData, SData,
// IData or QData: uint8_t .. uint64_t by the port's width, Verilator's
// rule). write() stores into it; the model sees the value at its next
// eval(). read() of an output gives the value the last eval() left.
// Nothing is deferred: the caller decides when the model evaluates.
#pragma once
#include <cstdint>

namespace ernic {

template <class T>
class Port {
 public:
  void bind(T& field) { f_ = &field; }
  T read() const { return *f_; }
  void write(T v) { *f_ = v; }

 private:
  T* f_ = nullptr;
};

}  // namespace ernic
