// model/system: the waveform writer. One VCD holds the model signals and the
// Verilated RTL signals under one hierarchy (top / node / block / signal).
//
// Verilator 5.006's VerilatedVcdSc ignores sc_trace(), so the RTL is traced
// by Verilator's own writer into its own VCD file while model signals go
// through VcdWriter; at the end of the run finish_merged() writes the final
// VCD from both. Plain C++17 (no SystemC): times are integers in ps.
//
// What Verilator 5.006 writes (checked with --cc --trace and --sc --trace):
//   $timescale 1ps $end                  (the context's time precision)
//    $scope module top.node_a.icrc $end  (ONE scope whose name is the full
//     $scope module trace_counter $end    SystemC/constructor instance name,
//      $var wire  8 # count [7:0] $end    dots included; inside it one scope
//      $var wire  8 $ mem[0] [7:0] $end   named after the Verilog top module)
//   then no $dumpvars: "#0" followed by every signal's value, "#t" blocks,
//   scalars "0#", vectors "b00000001 #" (full width), reals "r0.5 %"; the
//   same identifier code appears under several scopes for aliased signals.
// The merge splits every scope name at '.', so the RTL scope
// "top.node_a.icrc" and the model scope "top.node_a.ernic" become siblings
// under top / node_a, and an RTL signal reads e.g.
// "top.node_a.icrc.trace_counter.count".
//
// Output format (byte-identical for identical inputs):
//   $version, no $date, $timescale 1ps, the union of both scope trees (same
//   path = same scope; in each scope its variables, then its sub-scopes, all
//   in order of first appearance, model first), fresh identifier codes in
//   declaration order (RTL aliases keep sharing one code), "#0 $dumpvars"
//   with every initial value (model initial values and changes at time 0;
//   the RTL's values at time 0, "x" for RTL signals first dumped later),
//   then one "#t" block per time with the model's changes followed by the
//   RTL's. Model vectors are written without leading zeros ("b101 !"; VCD
//   zero-extends), RTL values are copied as written.
//
// Hot path: change() is inline and appends 12-byte binary records to a
// buffer that is written to the temporary body file in 1 MiB blocks; nothing
// is formatted as text until finish_merged(). Memory use is per variable,
// not per change; the RTL file is streamed, never loaded.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ernic::trace {

// Variable names: characters other than [A-Za-z0-9_] and the brackets
// "[", "]" (Verilator writes array elements as "mem[0]") become '_'; '.'
// too (it separates scopes). An empty name becomes "_".
std::string sanitize_name(std::string_view name);
// Splits "top.node_a.ernic" at '.' and sanitises every component; empty
// components are dropped ("a..b" = "a.b").
std::vector<std::string> split_scope(std::string_view scope);

class VcdWriter {
 public:
  // Creates (truncates) the temporary body file; throws std::runtime_error.
  explicit VcdWriter(std::string tmp_body_path);
  // Removes the temporary body file (also when finish_merged never ran).
  ~VcdWriter();
  VcdWriter(const VcdWriter&) = delete;
  VcdWriter& operator=(const VcdWriter&) = delete;

  // Declares a model signal. scope: dotted path, e.g. "top.node_a.ernic";
  // name: any text, sanitised (see sanitize_name). width 1..64; `initial`
  // (masked to width) is the value in $dumpvars. All variables must be
  // declared before the first change() (std::logic_error otherwise); a
  // duplicate scope+name (after sanitising) throws std::invalid_argument.
  // Returns the id for change(), numbered 0, 1, 2, ...
  int add_var(const std::string& scope, const std::string& name, unsigned width,
              uint64_t initial);

  // Records that `var` has `value` (masked to its width) from `time_ps` on.
  // Times must be non-decreasing over all calls (std::invalid_argument
  // otherwise). Several changes of one variable at the same time: the last
  // one wins; a value equal to the variable's value before that time is not
  // recorded. Changes at time 0 become the initial value.
  void change(int var, uint64_t value, uint64_t time_ps) {
    if (static_cast<unsigned>(var) >= vars_.size() || finished_) bad_change(var, time_ps);
    if (time_ps != cur_time_) {
      if (time_ps < cur_time_) bad_change(var, time_ps);
      flush_pending();
      cur_time_ = time_ps;
    }
    frozen_ = true;
    Var& v = vars_[static_cast<unsigned>(var)];
    value &= v.mask;
    if (!v.touched) {
      if (value == v.cur) return;
      v.touched = true;
      touched_.push_back(static_cast<uint32_t>(var));
    }
    v.pending = value;
  }

  // Writes the final VCD to out_path from the model signals and, if
  // rtl_vcd_path is non-empty and names a non-empty file, the RTL VCD
  // written by Verilator (its timescale is converted to 1 ps; a time that is
  // not a whole number of ps throws). If end_time_ps is later than the last
  // change, a final "#end_time_ps" line marks the end of the run. Call once;
  // the writer is closed afterwards and its temporary body removed. Throws
  // std::runtime_error (naming the file) on I/O errors and malformed RTL
  // files; out_path is then removed rather than left half-written.
  void finish_merged(const std::string& out_path, const std::string& rtl_vcd_path,
                     uint64_t end_time_ps = 0);

  size_t var_count() const { return vars_.size(); }
  uint64_t current_time_ps() const { return cur_time_; }
  bool finished() const { return finished_; }

 private:
  struct Var {
    uint64_t mask;
    uint64_t initial;
    uint64_t cur;      // value before cur_time_
    uint64_t pending;  // value at cur_time_ if touched
    bool touched;
  };
  struct Decl {
    std::vector<std::string> scope;
    std::string name;
    unsigned width;
  };
  static constexpr uint32_t kTimeTag = 0xFFFFFFFFu;
  static constexpr size_t kBufBytes = 1u << 20;

  [[noreturn]] void bad_change(int var, uint64_t time_ps) const;
  void flush_pending();
  void write_merged(const std::string& out_path, const std::string& rtl_vcd_path,
                    uint64_t end_time_ps);
  void put_record(uint32_t tag, uint64_t payload);
  void write_buffer();

  std::string body_path_;
  std::FILE* body_ = nullptr;
  std::vector<unsigned char> buf_;
  size_t used_ = 0;
  std::vector<Var> vars_;
  std::vector<Decl> decls_;
  std::set<std::string> full_names_;  // "top.node_a.ernic.qp_state"
  std::vector<uint32_t> touched_;
  uint64_t cur_time_ = 0;
  bool frozen_ = false;
  bool finished_ = false;
};

// --- a small VCD reader for tests and tools --------------------------------
// Full names join the scope path (scope names split at '.') and the
// variable's reference without its bit range: "top.node_a.icrc.trace_counter.count".
// The same name with the range appended ("...count[7:0]") also matches.
// Times are converted to ps from the file's $timescale.
struct VcdVarInfo {
  std::string full_name;
  std::string type;  // "wire", "real", ...
  unsigned width = 0;
  std::string code;  // identifier code in that file
};
std::vector<VcdVarInfo> vcd_list_vars(const std::string& vcd_path);
bool vcd_has_var(const std::string& vcd_path, const std::string& full_var_name);
// The value token in effect at time_ps (last change at or before it) as
// written: "1", "x", "b1010", "r0.5". nullopt: no such variable or no value
// yet.
std::optional<std::string> vcd_raw_value_at(const std::string& vcd_path,
                                            const std::string& full_var_name,
                                            uint64_t time_ps);
// As vcd_raw_value_at, as an integer; nullopt also for x/z bits, reals and
// values that do not fit in 64 bits.
std::optional<uint64_t> vcd_value_at(const std::string& vcd_path,
                                     const std::string& full_var_name, uint64_t time_ps);

}  // namespace ernic::trace
