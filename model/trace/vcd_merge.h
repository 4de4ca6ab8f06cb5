// model/trace: the merge of the model's recorded changes with the RTL's
// VCD, internal to model/trace: the merged view (MergeState, built by
// VcdWriter::open_merge in vcd_merge.cpp) and the consumers of its stream
// (MergeConsumer: the writers and the value adapter in vcd_dump.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/trace/vcd.h"
#include "model/trace/vcd_read.h"

namespace ernic::trace::detail {

// Consumer of the merged stream: values by position in the merged variable
// list (code order). Model values come as integers, RTL values as the
// tokens Verilator wrote.
struct MergeConsumer {
  virtual ~MergeConsumer() = default;
  virtual void init_model(size_t ord, uint64_t v) = 0;
  virtual void init_rtl(size_t ord, const std::string& tok) = 0;
  virtual void init_done() = 0;
  virtual void time(uint64_t t) = 0;
  virtual void model(size_t ord, uint64_t v) = 0;
  virtual void rtl(size_t ord, const std::string& tok) = 0;
  virtual void end(uint64_t end_time_ps) = 0;
  // The earliest time at or after t at which the consumer wants clock edges
  // (kNoTime: never): synthesised edges before it are skipped.
  virtual uint64_t clock_floor(uint64_t t) const { return t; }
};

struct MergeState {
  std::unique_ptr<Tokenizer> rtl;
  Header rh;
  std::unordered_map<std::string, size_t> rtl_index;  // RTL code -> RTL variable
  std::vector<const HdrVar*> rtl_vars;
  std::string header;                 // "$version" .. "$enddefinitions $end\n"
  std::vector<MergedVar> vars;        // by code order
  std::vector<size_t> model_ord, rtl_ord;
  std::vector<std::pair<bool, size_t>> order;  // (rtl, index) by code order
  std::vector<uint64_t> clock_ps;     // by code order: a synthesised clock's period, 0 otherwise
};

// A synthesised clock's level at time t (rising at k*P, falling at k*P + P/2).
inline bool clock_level(uint64_t t, uint64_t p) { return t % p < p / 2; }

}  // namespace ernic::trace::detail
