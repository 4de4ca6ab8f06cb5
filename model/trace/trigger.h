// model/trace: ILA-style waveform triggers (`ernic-sim run --vcd F
// --trigger EXPR --window PRE,POST [--trigger-mode first|every]`).
//
// A trigger is a boolean expression over the signals of the merged VCD
// (model and RTL, README.md "Triggers" has the grammar and examples):
//
//   qp(A,2).fatal                      a field of QP 2 of node A (top.A.ernic.qp2.fatal)
//   axis(A.tx).stall >= 16             consecutive stall cycles of a stream
//   psn_gap(A->B)                      a request delivered to B out of PSN order
//   op(A->B) == 0x11 && syn == 0x60    a frame A->B with that opcode and AETH syndrome
//   reg_write(A, SQPIi[2])             an AXI4-Lite write to that register completes
//   rtl(A.qp2.req_state) == WAIT_ACK   any traced signal, numbers or registered names
//   ... combined with &&, ||, ! and parentheses; comparisons == != < <= > >=.
// A signal or a number alone is true when non-zero (`1` hits at time 0).
//
// Evaluation (after the run, over the recorded changes: runs are
// deterministic and the model records every change anyway): the expression
// is evaluated at every instant where a signal it reads changes, and at the
// clock edges where a stall count crosses a number it is compared with.
// A hit is an instant where the expression is true and was false just
// before (a rising edge of the condition). Frame, psn_gap and reg_write
// terms are events: true only at their instant, so two such events are two
// hits even when nothing else changes. Times are in ps; the windows are
// PRE/POST core clock cycles around each hit.
//
// Errors: Trigger::parse and Trigger::bind throw TriggerError whose
// column() is the 1-based column of the offending text (ernic-sim exits 2).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/regs/regs.h"
#include "model/trace/vcd.h"

namespace ernic::trigger {

class TriggerError : public std::runtime_error {
 public:
  TriggerError(size_t column, const std::string& what)
      : std::runtime_error(what), column_(column) {}
  size_t column() const { return column_; }  // 1-based; 0: the expression as a whole
 private:
  size_t column_;
};

enum class Mode { first, every };

// What names mean in one system (from the scenario and the declared signals).
struct BindContext {
  struct NodeInfo {
    const regs::Layout* layout = &regs::kLayout31;
    uint32_t num_qp = 0, num_mr = 0;
  };
  std::map<std::string, NodeInfo> nodes;         // by node name
  std::vector<std::string> signals;              // every full signal name (model and RTL)
  uint64_t core_period_ps = 5000, cmac_period_ps = 3103;
};

// A named AXI4-Stream that axis(NODE.NAME) refers to. Signal names are
// relative to top.NODE; ready empty: the stream has no tready (never stalls).
struct StreamInfo {
  const char* name;
  const char* valid;
  const char* ready;
  const char* clock;  // "core" or "cmac": the clock whose edges count stall cycles
  const char* what;
};
const std::vector<StreamInfo>& streams();

struct Expr;   // the parsed expression (trigger_expr.h)
struct Bound;  // what it refers to, after bind()

class Trigger {
 public:
  Trigger();
  ~Trigger();
  Trigger(Trigger&&) noexcept;
  Trigger& operator=(Trigger&&) noexcept;

  // Syntax only. Throws TriggerError (column of the unexpected text).
  static Trigger parse(const std::string& text);
  // Resolves nodes, QPs, streams, registers, signal paths and symbolic
  // values. Throws TriggerError naming the column of the reference.
  void bind(const BindContext& ctx);
  // The full names of the signals the expression reads (after bind).
  std::vector<std::string> signals() const;
  // Hit times (ps) over the merged changes of a finished VcdWriter; mode
  // first: at most one.
  std::vector<uint64_t> hits(const trace::VcdWriter& w, const std::string& rtl_vcd_path, uint64_t end_time_ps,
                             Mode mode) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::unique_ptr<Expr> expr_;
  BindContext ctx_;
  std::unique_ptr<Bound> bound_;
};

}  // namespace ernic::trigger
