// model/trace: the waveform writer. One VCD holds the model signals and the
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
//   then one "#t" block per time with the model's changes (in declaration
//   order) followed by the RTL's (in declaration order too, whatever order
//   Verilator wrote them in). Model vectors are written without leading
//   zeros ("b101 !"; VCD zero-extends), RTL values are copied as written.
//
// Clocks (add_clock) are not recorded: their edges are synthesised when the
// VCD is written, up to the end time. write_merged() writes into a ByteSink
// (a file, or CountingSink to measure a dump without writing it), either
// everything or only given time windows (ILA-style triggers, trigger.h): at
// each window's start a "$dumpvars" (first window) or "$dumpall" with every
// value in effect then, the changes inside the window, then "#end" of the
// window; nothing between windows. scan_merged() streams the same merged
// changes as integers (the trigger evaluator reads them).
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

// ---- byte sinks: where the text of a VCD goes ------------------------------
// The merged VCD is written through a ByteSink: FileSink writes a file,
// CountingSink only counts the bytes (the size of a dump measured without
// disk). bytes() is what has been written so far.
class ByteSink {
 public:
  virtual ~ByteSink();
  virtual void write(const char* data, size_t n) = 0;
  virtual void close() {}
  uint64_t bytes() const { return bytes_; }

 protected:
  uint64_t bytes_ = 0;
};

class FileSink : public ByteSink {
 public:
  // Creates (truncates) path; throws std::runtime_error naming it.
  explicit FileSink(std::string path);
  ~FileSink() override;
  void write(const char* data, size_t n) override;  // throws std::runtime_error on I/O errors
  void close() override;

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

class CountingSink : public ByteSink {
 public:
  void write(const char*, size_t n) override { bytes_ += n; }
};

// A time window of a windowed dump, inclusive, in ps.
struct VcdWindow {
  uint64_t begin_ps = 0, end_ps = 0;
  bool operator==(const VcdWindow& o) const { return begin_ps == o.begin_ps && end_ps == o.end_ps; }
};
// Windows [hit - pre, hit + post] (clamped at 0), sorted; windows that
// overlap or touch are merged into one.
std::vector<VcdWindow> make_windows(const std::vector<uint64_t>& hits_ps, uint64_t pre_ps, uint64_t post_ps);

// One variable of the merged VCD. RTL aliases (one identifier code under
// several names) share one MergedVar with several names.
struct MergedName {
  std::string full;   // "top.A.cmac.tx_axis_tvalid"
  std::string range;  // "[7:0]" for vectors as declared ("" for scalars)
};
struct MergedVar {
  std::vector<MergedName> names;
  unsigned width = 0;
  bool rtl = false;
  std::string type;  // "wire", "real", ...
  std::string code;  // identifier code in the merged file
};

// Receives the merged value changes in time order (scan_merged). `var` is
// the position in the vector begin() got. Values are integers; nullopt for
// x/z, reals and vectors wider than 64 bits with a bit set above 63.
class MergedValueVisitor {
 public:
  virtual ~MergedValueVisitor() = default;
  virtual void begin(const std::vector<MergedVar>& vars) = 0;
  virtual void initial(size_t var, std::optional<uint64_t> value) = 0;  // every variable once, time 0
  virtual void time(uint64_t t_ps) = 0;  // the changes that follow happen at t_ps (> 0, increasing)
  virtual void change(size_t var, std::optional<uint64_t> value) = 0;
  virtual void end(uint64_t end_time_ps) { (void)end_time_ps; }
  // Synthesised clock edges (add_clock) are passed only when this says so.
  virtual bool wants_clock_edges() const { return false; }
};

namespace detail {
struct MergeState;
struct MergeConsumer;
}  // namespace detail

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

  // Declares a clock: a 1-bit signal with rising edges at k * period_ps and
  // falling edges at k * period_ps + period_ps / 2 (value 1 at time 0). Its
  // edges are not recorded: the writer synthesises them up to the end time
  // when it writes (a windowed dump only inside the windows). change() on it
  // throws std::invalid_argument. period_ps >= 2.
  int add_clock(const std::string& scope, const std::string& name, uint64_t period_ps);

  // Records that `var` has `value` (masked to its width) from `time_ps` on.
  // Times must be non-decreasing over all calls (std::invalid_argument
  // otherwise). Several changes of one variable at the same time: the last
  // one wins; a value equal to the variable's value before that time is not
  // recorded. Changes at time 0 become the initial value.
  void change(int var, uint64_t value, uint64_t time_ps) {
    if (static_cast<unsigned>(var) >= vars_.size() || finished_ || vars_[static_cast<unsigned>(var)].clock_ps)
      bad_change(var, time_ps);
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

  // The steps of finish_merged, for callers that read the merged view more
  // than once (triggers: a scan, then a windowed write, then a measurement):
  // close_body() ends recording (no change() after it; idempotent);
  // merged_vars() lists the merged variables (header only); scan_merged()
  // streams every merged value change; write_merged() writes the merged VCD
  // into a sink, all of it or (windows given) only the windows, and returns
  // the bytes written; remove_body() deletes the temporary body (the
  // destructor does too). RTL file and errors as for finish_merged.
  void close_body();
  std::vector<MergedVar> merged_vars(const std::string& rtl_vcd_path) const;
  void scan_merged(const std::string& rtl_vcd_path, MergedValueVisitor& v, uint64_t end_time_ps = 0) const;
  uint64_t write_merged(ByteSink& sink, const std::string& rtl_vcd_path, uint64_t end_time_ps = 0,
                        const std::vector<VcdWindow>* windows = nullptr) const;
  void remove_body();
  // The model variables as declared: full dotted name (sanitised) and width.
  std::vector<std::pair<std::string, unsigned>> model_var_names() const;

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
    uint64_t clock_ps = 0;  // a synthesised clock's period (0: not a clock)
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
  void open_merge(detail::MergeState& m, const std::string& rtl_vcd_path) const;
  void stream_merge(detail::MergeState& m, detail::MergeConsumer& c, uint64_t end_time_ps) const;
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
  bool merged_ = false;
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
// A VCD value token ("b0101", "1", "x") as an integer; nullopt for x/z
// bits, reals and values wider than 64 bits.
std::optional<uint64_t> vcd_token_to_u64(const std::string& token);
// As vcd_raw_value_at, as an integer; nullopt also for x/z bits, reals and
// values that do not fit in 64 bits.
std::optional<uint64_t> vcd_value_at(const std::string& vcd_path,
                                     const std::string& full_var_name, uint64_t time_ps);

}  // namespace ernic::trace
