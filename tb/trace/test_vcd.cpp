// VcdWriter and the model+RTL merge: exact output format, change
// semantics, merging with VCD files written by Verilator 5.006 (one written
// at build time with VerilatedVcdC, one checked in from VerilatedVcdSc),
// GTKWave's vcd2fst/fst2vcd on the result, determinism and errors.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/trace/vcd.h"
#include "tb/trace/test_util.h"

namespace fs = std::filesystem;
using ernic::trace::sanitize_name;
using ernic::trace::split_scope;
using ernic::trace::vcd_has_var;
using ernic::trace::vcd_list_vars;
using ernic::trace::vcd_raw_value_at;
using ernic::trace::vcd_value_at;
using ernic::trace::VcdWriter;
using trace_test::have_program;
using trace_test::run;
using trace_test::slurp;
using trace_test::spit;
using trace_test::test_dir;

namespace {

const std::string kRtlVcd = TRACE_RTL_VCD;
const std::string kScVcd = std::string(TRACE_DATA_DIR) + "/trace_counter_sc.vcd";

// The RTL counter's names (tb/trace/rtl_vcd_gen.cpp, trace_counter.v).
const std::string kIcrc = "top.node_a.icrc.trace_counter.";

size_t count_lines(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string l; std::getline(in, l);) n += (l == line);
  return n;
}

// Checks the body of a VCD: strictly increasing "#t" lines, every value
// change uses a declared code. Returns the number of value changes.
size_t check_body(const fs::path& vcd) {
  std::set<std::string> codes;
  for (const auto& v : vcd_list_vars(vcd.string())) codes.insert(v.code);
  std::istringstream in(slurp(vcd));
  std::string l;
  while (std::getline(in, l) && l != "$enddefinitions $end") {
  }
  long long last = -1;
  size_t changes = 0;
  while (std::getline(in, l)) {
    if (l.empty() || l == "$dumpvars" || l == "$end") continue;
    if (l[0] == '#') {
      const long long t = std::stoll(l.substr(1));
      EXPECT_GT(t, last) << l;
      last = t;
      continue;
    }
    const auto sp = l.find(' ');
    const std::string code = sp == std::string::npos ? l.substr(1) : l.substr(sp + 1);
    EXPECT_TRUE(codes.count(code)) << "undeclared code in: " << l;
    ++changes;
  }
  return changes;
}

// Model signals used by the merge tests.
struct ModelVars {
  int state, valid, psn, other;
};
ModelVars add_model_vars(VcdWriter& w) {
  ModelVars m;
  m.state = w.add_var("top.node_a.ernic", "qp_state", 3, 0);
  m.valid = w.add_var("top.node_a.ernic", "tx_valid", 1, 0);
  m.psn = w.add_var("top.node_a.ernic.qp[2]", "sq_psn", 24, 0x100);
  m.other = w.add_var("top.node_b.ernic", "qp_state", 3, 1);
  return m;
}
void drive_model(VcdWriter& w, const ModelVars& m) {
  w.change(m.state, 1, 3000);
  w.change(m.valid, 1, 10000);  // same time as an RTL posedge
  w.change(m.psn, 0x101, 10000);
  w.change(m.valid, 0, 11000);
  w.change(m.state, 2, 31000);
  w.change(m.other, 4, 31000);
  w.change(m.psn, 0xFFFFFF, 90000);  // after the RTL file's last time
}

}  // namespace

TEST(VcdNames, Sanitise) {
  EXPECT_EQ(sanitize_name("psn next"), "psn_next");
  EXPECT_EQ(sanitize_name("a.b$c-d"), "a_b_c_d");
  EXPECT_EQ(sanitize_name("mem[3]"), "mem[3]");
  EXPECT_EQ(sanitize_name(""), "_");
  EXPECT_EQ(split_scope("top..node a.ernic"), (std::vector<std::string>{"top", "node_a", "ernic"}));
}

TEST(VcdWriter, ModelOnlyExactOutput) {
  const auto dir = test_dir();
  const auto out = dir / "model.vcd";
  {
    VcdWriter w((dir / "body.tmp").string());
    const int a = w.add_var("top.node_a.ernic", "valid", 1, 0);
    const int b = w.add_var("top.node_a.ernic", "state[2]", 4, 3);
    const int c = w.add_var("top.node_b.ernic", "psn next", 24, 0);
    w.change(a, 1, 0);  // at time 0: the initial value
    w.change(b, 5, 1000);
    w.change(a, 0, 1000);
    w.change(a, 1, 1000);  // back to its value before 1000: no change
    w.change(c, 0xABC, 2500);
    w.change(b, 5, 3000);     // same value: not recorded
    w.change(b, 0x1F, 4000);  // masked to 4 bits
    w.finish_merged(out.string(), "", 9000);
    EXPECT_FALSE(fs::exists(dir / "body.tmp"));
  }
  const std::string expect =
      "$version ernic-sim (ERNIC RoCEv2 co-simulator) merged model+RTL VCD $end\n"
      "$timescale 1ps $end\n"
      "$scope module top $end\n"
      " $scope module node_a $end\n"
      "  $scope module ernic $end\n"
      "   $var wire 1 ! valid $end\n"
      "   $var wire 4 \" state[2] [3:0] $end\n"
      "  $upscope $end\n"
      " $upscope $end\n"
      " $scope module node_b $end\n"
      "  $scope module ernic $end\n"
      "   $var wire 24 # psn_next [23:0] $end\n"
      "  $upscope $end\n"
      " $upscope $end\n"
      "$upscope $end\n"
      "$enddefinitions $end\n"
      "#0\n"
      "$dumpvars\n"
      "1!\n"
      "b11 \"\n"
      "b0 #\n"
      "$end\n"
      "#1000\n"
      "b101 \"\n"
      "#2500\n"
      "b101010111100 #\n"
      "#4000\n"
      "b1111 \"\n"
      "#9000\n";
  EXPECT_EQ(slurp(out), expect);
  EXPECT_EQ(vcd_value_at(out.string(), "top.node_a.ernic.valid", 999), 1u);
  EXPECT_EQ(vcd_value_at(out.string(), "top.node_a.ernic.state[2]", 999), 3u);
  EXPECT_EQ(vcd_value_at(out.string(), "top.node_a.ernic.state[2]", 1000), 5u);
  EXPECT_EQ(vcd_value_at(out.string(), "top.node_a.ernic.state[2][3:0]", 3999), 5u);
  EXPECT_EQ(vcd_value_at(out.string(), "top.node_b.ernic.psn_next", 2499), 0u);
  EXPECT_EQ(vcd_value_at(out.string(), "top.node_b.ernic.psn_next", 1'000'000), 0xABCu);
  EXPECT_FALSE(vcd_value_at(out.string(), "top.node_b.ernic.nope", 0).has_value());
  EXPECT_FALSE(vcd_has_var(out.string(), "top.node_b.psn_next"));
}

TEST(VcdWriter, SameTimeOverwriteAndFullWidth) {
  const auto dir = test_dir();
  const auto out = (dir / "o.vcd").string();
  VcdWriter w((dir / "body.tmp").string());
  const int v = w.add_var("top.x", "wide", 64, ~uint64_t{0});
  w.change(v, 5, 100);
  w.change(v, 7, 100);  // overwrites the change at 100
  w.change(v, 0x8000000000000000ull, 200);
  w.finish_merged(out, "");
  EXPECT_EQ(vcd_value_at(out, "top.x.wide", 99), ~uint64_t{0});
  EXPECT_EQ(vcd_value_at(out, "top.x.wide", 100), 7u);
  EXPECT_EQ(vcd_value_at(out, "top.x.wide", 200), 0x8000000000000000ull);
  EXPECT_EQ(count_lines(slurp(out), "#100"), 1u);
  EXPECT_EQ(check_body(out), 1u + 2u);  // dumpvars + two changes
}

TEST(VcdWriter, Errors) {
  const auto dir = test_dir();
  VcdWriter w((dir / "body.tmp").string());
  EXPECT_THROW(w.add_var("top.x", "w0", 0, 0), std::invalid_argument);
  EXPECT_THROW(w.add_var("top.x", "w65", 65, 0), std::invalid_argument);
  EXPECT_THROW(w.add_var("", "noscope", 1, 0), std::invalid_argument);
  const int a = w.add_var("top.x", "a b", 1, 0);
  EXPECT_THROW(w.add_var("top.x", "a_b", 1, 0), std::invalid_argument);  // same after sanitising
  w.change(a, 1, 100);
  EXPECT_THROW(w.add_var("top.x", "late", 1, 0), std::logic_error);
  EXPECT_THROW(w.change(a, 0, 99), std::invalid_argument);  // time goes backwards
  EXPECT_THROW(w.change(7, 0, 200), std::invalid_argument);
  EXPECT_THROW(w.change(-1, 0, 200), std::invalid_argument);
  w.change(a, 0, 100);  // same time is fine
  w.finish_merged((dir / "o.vcd").string(), (dir / "missing.vcd").string());
  EXPECT_EQ(vcd_value_at((dir / "o.vcd").string(), "top.x.a_b", 100), 0u);
  EXPECT_THROW(w.change(a, 1, 300), std::logic_error);
  EXPECT_THROW(w.finish_merged((dir / "o2.vcd").string(), ""), std::logic_error);
  EXPECT_THROW(VcdWriter("/nonexistent-dir-ernic/body.tmp"), std::runtime_error);
}

TEST(VcdMerge, VerilatorFileHasTheSplitScopeNames) {
  // What Verilator writes (see model/trace/vcd.h): one scope named with
  // dots, then the Verilog module's scope.
  const std::string rtl = slurp(kRtlVcd);
  EXPECT_NE(rtl.find("$scope module top.node_a.icrc $end"), std::string::npos);
  EXPECT_NE(rtl.find("$scope module trace_counter $end"), std::string::npos);
  EXPECT_TRUE(vcd_has_var(kRtlVcd, kIcrc + "count"));
  EXPECT_TRUE(vcd_has_var(kRtlVcd, "top.node_a.icrc.count"));  // --cc: ports one level up too
  EXPECT_EQ(vcd_value_at(kRtlVcd, kIcrc + "count", 30000), 6u);
}

TEST(VcdMerge, WithVerilatorVcd) {
  const auto dir = test_dir();
  const auto out = dir / "merged.vcd";
  {
    VcdWriter w((dir / "body.tmp").string());
    const auto m = add_model_vars(w);
    drive_model(w, m);
    w.finish_merged(out.string(), kRtlVcd, 100000);
  }
  const std::string o = out.string();
  const std::string text = slurp(out);
  // One hierarchy: top / node_a / {ernic, icrc} and top / node_b.
  EXPECT_EQ(count_lines(text, "$scope module top $end"), 1u);
  EXPECT_EQ(count_lines(text, " $scope module node_a $end"), 1u);
  EXPECT_EQ(count_lines(text, "  $scope module icrc $end"), 1u);
  EXPECT_EQ(count_lines(text, "  $scope module ernic $end"), 2u);  // node_a, node_b
  EXPECT_EQ(count_lines(text, "   $scope module trace_counter $end"), 1u);
  EXPECT_EQ(text.find("$date"), std::string::npos);
  EXPECT_EQ(count_lines(text, "$timescale 1ps $end"), 1u);
  check_body(out);

  // Model signals.
  EXPECT_EQ(vcd_value_at(o, "top.node_a.ernic.qp_state", 2999), 0u);
  EXPECT_EQ(vcd_value_at(o, "top.node_a.ernic.qp_state", 3000), 1u);
  EXPECT_EQ(vcd_value_at(o, "top.node_a.ernic.tx_valid", 10500), 1u);
  EXPECT_EQ(vcd_value_at(o, "top.node_a.ernic.tx_valid", 11000), 0u);
  EXPECT_EQ(vcd_value_at(o, "top.node_a.ernic.qp[2].sq_psn", 0), 0x100u);
  EXPECT_EQ(vcd_value_at(o, "top.node_a.ernic.qp[2].sq_psn", 95000), 0xFFFFFFu);
  EXPECT_EQ(vcd_value_at(o, "top.node_b.ernic.qp_state", 30999), 1u);
  EXPECT_EQ(vcd_value_at(o, "top.node_b.ernic.qp_state", 31000), 4u);
  // RTL signals: count = (i-3)/2 from the posedge at 2000*i, i odd >= 5.
  EXPECT_EQ(vcd_value_at(o, kIcrc + "count", 9999), 0u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "count", 10000), 1u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "count", 29999), 5u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "count", 30000), 6u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "crc_valid", 17999), 0u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "crc_valid", 19000), 1u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "crc_valid", 22000), 0u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "rst", 7999), 1u);
  EXPECT_EQ(vcd_value_at(o, kIcrc + "rst", 8000), 0u);
  EXPECT_EQ(vcd_raw_value_at(o, kIcrc + "level", 12000), "r0.5");
  EXPECT_EQ(vcd_raw_value_at(o, kIcrc + "level", 14000), "r1");
  EXPECT_FALSE(vcd_value_at(o, kIcrc + "wide", 14000).has_value());  // 72 bits
  EXPECT_EQ(vcd_raw_value_at(o, kIcrc + "wide", 14000),
            "b00000010" + std::string("1111000011110000") + std::string(48, '0'));
  // End of run marker after the last change.
  EXPECT_EQ(text.substr(text.size() - 9), "\n#100000\n");

  // Aliased RTL signals keep sharing one identifier code.
  std::string port_code, inner_code;
  for (const auto& v : vcd_list_vars(o)) {
    if (v.full_name == "top.node_a.icrc.count") port_code = v.code;
    if (v.full_name == kIcrc + "count") inner_code = v.code;
  }
  EXPECT_FALSE(port_code.empty());
  EXPECT_EQ(port_code, inner_code);

  // Every RTL signal has the same value in the merged file as in
  // Verilator's, at every ps step of interest.
  const auto rtl_vars = vcd_list_vars(kRtlVcd);
  ASSERT_EQ(rtl_vars.size(), 11u);  // 5 ports of top.node_a.icrc + 6 in trace_counter
  for (const auto& v : rtl_vars) {
    for (uint64_t t = 0; t <= 82000; t += 1000) {
      for (uint64_t dt : {uint64_t{0}, uint64_t{999}}) {
        ASSERT_EQ(vcd_raw_value_at(o, v.full_name, t + dt), vcd_raw_value_at(kRtlVcd, v.full_name, t + dt))
            << v.full_name << " at " << t + dt;
      }
    }
  }
}

TEST(VcdMerge, EmptyRtlFileMeansModelOnly) {
  const auto dir = test_dir();
  spit(dir / "empty.vcd", "");
  for (const std::string rtl : {"", "empty.vcd"}) {
    VcdWriter w((dir / "body.tmp").string());
    drive_model(w, add_model_vars(w));
    const auto out = dir / ("o" + rtl + ".vcd");
    w.finish_merged(out.string(), rtl.empty() ? "" : (dir / rtl).string());
    EXPECT_EQ(vcd_list_vars(out.string()).size(), 4u);
    EXPECT_EQ(vcd_value_at(out.string(), "top.node_b.ernic.qp_state", 31000), 4u);
  }
  EXPECT_EQ(slurp(dir / "o.vcd"), slurp(dir / "oempty.vcd.vcd"));
}

TEST(VcdMerge, IdenticalInputsGiveByteIdenticalOutput) {
  const auto dir = test_dir();
  for (const char* name : {"a.vcd", "b.vcd"}) {
    VcdWriter w((dir / (std::string(name) + ".tmp")).string());
    drive_model(w, add_model_vars(w));
    w.finish_merged((dir / name).string(), kRtlVcd);
  }
  const std::string a = slurp(dir / "a.vcd");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, slurp(dir / "b.vcd"));
}

TEST(VcdMerge, Vcd2FstAcceptsTheMergedFile) {
  ASSERT_TRUE(have_program(VCD2FST_PROGRAM)) << "vcd2fst not found (tools/bootstrap installs gtkwave)";
  const auto dir = test_dir();
  const auto merged = dir / "merged.vcd";
  {
    VcdWriter w((dir / "body.tmp").string());
    drive_model(w, add_model_vars(w));
    w.finish_merged(merged.string(), kRtlVcd, 100000);
  }
  const auto fst = dir / "merged.fst";
  int status = -1;
  const std::string log = run(std::string(VCD2FST_PROGRAM) + " '" + merged.string() + "' '" +
                                  fst.string() + "' 2>&1",
                              &status);
  ASSERT_EQ(status, 0) << log;
  ASSERT_TRUE(fs::exists(fst));
  EXPECT_GT(fs::file_size(fst), 0u);

  ASSERT_TRUE(have_program(FST2VCD_PROGRAM)) << "fst2vcd not found (tools/bootstrap installs gtkwave)";
  const auto back = dir / "back.vcd";
  run(std::string(FST2VCD_PROGRAM) + " -o '" + back.string() + "' '" + fst.string() + "' 2>&1",
      &status);
  ASSERT_EQ(status, 0);
  const std::string b = back.string();
  EXPECT_EQ(vcd_value_at(b, "top.node_a.ernic.qp_state", 3000), 1u);
  EXPECT_EQ(vcd_value_at(b, "top.node_a.ernic.tx_valid", 10500), 1u);
  EXPECT_EQ(vcd_value_at(b, "top.node_b.ernic.qp_state", 31000), 4u);
  EXPECT_EQ(vcd_value_at(b, kIcrc + "count", 29999), 5u);
  EXPECT_EQ(vcd_value_at(b, kIcrc + "count", 30000), 6u);
  EXPECT_EQ(vcd_value_at(b, kIcrc + "crc_valid", 19000), 1u);
}

TEST(VcdMerge, WithVerilatedVcdScFile) {
  // tb/trace/data/trace_counter_sc.vcd: written by VerilatedVcdSc for an
  // instance top.node_a.icrc of trace_counter (see make_trace_counter_sc_vcd.cpp).
  const auto dir = test_dir();
  const auto out = (dir / "sc.vcd").string();
  {
    VcdWriter w((dir / "body.tmp").string());
    const int s = w.add_var("top.node_a.ernic", "qp_state", 3, 0);
    w.change(s, 2, 16000);
    w.finish_merged(out, kScVcd);
  }
  const std::string text = slurp(out);
  EXPECT_EQ(count_lines(text, "$scope module top $end"), 1u);
  EXPECT_EQ(count_lines(text, " $scope module node_a $end"), 1u);
  EXPECT_EQ(vcd_value_at(out, kIcrc + "count", 15999), 2u);
  EXPECT_EQ(vcd_value_at(out, kIcrc + "count", 16000), 3u);
  EXPECT_EQ(vcd_value_at(out, kIcrc + "crc_valid", 17000), 1u);
  EXPECT_EQ(vcd_raw_value_at(out, kIcrc + "level", 17000), "r1.5");
  EXPECT_EQ(vcd_value_at(out, "top.node_a.ernic.qp_state", 16000), 2u);
  check_body(out);
}

TEST(VcdMerge, OtherRtlFormsTimescaleDumpvarsAndLateStart) {
  const auto dir = test_dir();
  const auto rtl = dir / "rtl.vcd";
  spit(rtl,
       "$date today $end\n$version other $end\n$timescale\n 1ns\n$end\n"
       "$comment hello $end\n"
       "$scope module top.node_a.blk $end\n"
       "$var wire 1 ! a $end\n$var wire 4 \" b [3:0] $end\n$var real 64 # r $end\n"
       "$upscope $end\n$enddefinitions $end\n"
       "#5\n$dumpvars\n1!\nb1010 \"\nr2.5 #\n$end\n"
       "#7 0! b0011 \"\n$comment inline $end\n#7\n1!\n#9\nx!\n");
  const auto out = (dir / "o.vcd").string();
  {
    VcdWriter w((dir / "body.tmp").string());
    const int v = w.add_var("top.node_a.ernic", "x", 1, 0);
    w.change(v, 1, 6000);
    w.finish_merged(out, rtl.string());
  }
  EXPECT_EQ(vcd_raw_value_at(out, "top.node_a.blk.a", 4999), "x");  // not dumped yet
  EXPECT_FALSE(vcd_value_at(out, "top.node_a.blk.a", 4999).has_value());
  EXPECT_EQ(vcd_value_at(out, "top.node_a.blk.a", 5000), 1u);
  EXPECT_EQ(vcd_value_at(out, "top.node_a.blk.b", 6999), 10u);
  EXPECT_EQ(vcd_value_at(out, "top.node_a.blk.b", 7000), 3u);
  EXPECT_EQ(vcd_value_at(out, "top.node_a.blk.a", 7000), 1u);  // last change at #7 wins
  EXPECT_EQ(vcd_raw_value_at(out, "top.node_a.blk.r", 7000), "r2.5");
  EXPECT_EQ(vcd_raw_value_at(out, "top.node_a.blk.a", 9000), "x");
  EXPECT_EQ(vcd_value_at(out, "top.node_a.ernic.x", 6000), 1u);
  check_body(out);
  if (have_program(VCD2FST_PROGRAM)) {
    int status = -1;
    run(std::string(VCD2FST_PROGRAM) + " '" + out + "' '" + out + ".fst' 2>&1", &status);
    EXPECT_EQ(status, 0);
  }
}

TEST(VcdMerge, RtlChangesOfOneTimeAreInDeclarationOrder) {
  // Verilator writes a time's changes in the order of its own signal
  // numbering (--sc and --cc number differently); the merged file has them
  // in declaration order, so the same values give the same bytes. Two RTL
  // files declaring a, b, c with the changes at #10 written in two orders
  // merge to one file; a variable changed twice at one time keeps both
  // changes in the order written (the last wins).
  const auto dir = test_dir();
  const std::string head =
      "$timescale 1ps $end\n$scope module top.node_a.blk $end\n"
      "$var wire 1 ! a $end\n$var wire 1 \" b $end\n$var wire 4 # c [3:0] $end\n"
      "$upscope $end\n$enddefinitions $end\n#0\n0!\n0\"\nb0 #\n";
  spit(dir / "r1.vcd", head + "#10\nb11 #\n1\"\n1!\n#20\n0\"\n1\"\n");
  spit(dir / "r2.vcd", head + "#10\n1!\nb11 #\n1\"\n#20\n0\"\n1\"\n");
  std::string merged[2];
  for (int i = 0; i < 2; ++i) {
    const auto out = (dir / ("o" + std::to_string(i) + ".vcd")).string();
    {
      VcdWriter w((dir / "body.tmp").string());
      w.add_var("top.node_a.ernic", "x", 1, 0);
      w.finish_merged(out, (dir / (i ? "r2.vcd" : "r1.vcd")).string());
    }
    merged[i] = slurp(out);
    EXPECT_EQ(vcd_value_at(out, "top.node_a.blk.c", 10000), 3u);
    EXPECT_EQ(vcd_value_at(out, "top.node_a.blk.b", 20000), 1u);
  }
  EXPECT_EQ(merged[0], merged[1]);
  // a, b, c are declared after the model's x: codes " # $ in that order.
  const size_t t10 = merged[0].find("#10\n");
  ASSERT_NE(t10, std::string::npos);
  EXPECT_EQ(merged[0].substr(t10, merged[0].find("#20\n") - t10), "#10\n1\"\n1#\nb11 $\n");
  const size_t t20 = merged[0].find("#20\n");
  EXPECT_EQ(merged[0].substr(t20, 12), "#20\n0#\n1#\n");
}

TEST(VcdMerge, RtlTimeStampsWithoutChangesAreDropped) {
  // Verilator stamps every time step the kernel makes, changes or not
  // (model/trace/vcd_merge.cpp, RtlBody): the merged file has a time stamp
  // only where some value changes, so a kernel step more or less (a thread
  // woken to find nothing to do) leaves the waveform's bytes alone.
  const auto dir = test_dir();
  const std::string head =
      "$timescale 1ps $end\n$scope module top.node_a.blk $end\n$var wire 1 ! a $end\n"
      "$upscope $end\n$enddefinitions $end\n#0\n0!\n";
  spit(dir / "r.vcd", head + "#10\n#15\n1!\n#20\n#25\n#25\n#40\n0!\n#50\n");
  spit(dir / "r_dense.vcd", head + "#15\n1!\n#40\n0!\n");
  std::string merged[2];
  for (int i = 0; i < 2; ++i) {
    const auto out = (dir / ("o" + std::to_string(i) + ".vcd")).string();
    {
      VcdWriter w((dir / "body.tmp").string());
      const int x = w.add_var("top.node_a.ernic", "x", 1, 0);
      w.change(x, 1, 25);
      w.finish_merged(out, (dir / (i ? "r_dense.vcd" : "r.vcd")).string(), 60);
    }
    merged[i] = slurp(out);
  }
  EXPECT_EQ(merged[0], merged[1]);
  const std::string& m = merged[0];
  const size_t body = m.find("$dumpvars");
  ASSERT_NE(body, std::string::npos);
  // Stamps after #0's $dumpvars: 15 (a rises), 25 (the model's x), 40 (a falls), 60 (the run's end).
  std::vector<std::string> stamps;
  for (size_t p = m.find("\n#", body); p != std::string::npos; p = m.find("\n#", p + 1))
    stamps.push_back(m.substr(p + 1, m.find('\n', p + 1) - p - 1));
  EXPECT_EQ(stamps, (std::vector<std::string>{"#15", "#25", "#40", "#60"}));
}

TEST(VcdMerge, ModelNameClashingWithRtlIsRenamed) {
  const auto dir = test_dir();
  const auto out = (dir / "o.vcd").string();
  {
    VcdWriter w((dir / "body.tmp").string());
    const int v = w.add_var("top.node_a.icrc.trace_counter", "count", 8, 0xAA);
    w.change(v, 0xBB, 5000);
    w.finish_merged(out, kRtlVcd);
  }
  EXPECT_EQ(vcd_value_at(out, kIcrc + "count_model", 5000), 0xBBu);
  EXPECT_EQ(vcd_value_at(out, kIcrc + "count", 30000), 6u);
}

TEST(VcdMerge, MalformedRtlFilesThrow) {
  const auto dir = test_dir();
  const std::string hdr =
      "$timescale 1ps $end\n$scope module top $end\n$var wire 1 ! a $end\n$upscope $end\n"
      "$enddefinitions $end\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"backwards", hdr + "#0\n0!\n#10\n1!\n#5\n0!\n"},
      {"undeclared", hdr + "#0\n0?\n"},
      {"truncated_header", "$timescale 1ps $end\n$scope module top $end\n$var wire 1 ! a"},
      {"bad_token", hdr + "#0\nhello\n"},
      {"fs_not_whole_ps", "$timescale 1fs $end\n$scope module top $end\n$var wire 1 ! a $end\n"
                          "$upscope $end\n$enddefinitions $end\n#0\n0!\n#1500\n1!\n"},
  };
  for (const auto& [name, text] : cases) {
    spit(dir / (name + ".vcd"), text);
    VcdWriter w((dir / (name + ".tmp")).string());
    w.add_var("top.m", "x", 1, 0);
    EXPECT_THROW(w.finish_merged((dir / (name + ".out")).string(), (dir / (name + ".vcd")).string()),
                 std::runtime_error)
        << name;
    EXPECT_FALSE(fs::exists(dir / (name + ".out"))) << name;  // not left half-written
  }
  // 1 fs resolution with whole ps is converted.
  spit(dir / "fs.vcd", "$timescale 1fs $end\n$scope module top $end\n$var wire 1 ! a $end\n"
                       "$upscope $end\n$enddefinitions $end\n#0\n0!\n#2000\n1!\n");
  VcdWriter w((dir / "fs.tmp").string());
  w.add_var("top.m", "x", 1, 0);
  w.finish_merged((dir / "fs.out").string(), (dir / "fs.vcd").string());
  EXPECT_EQ(vcd_value_at((dir / "fs.out").string(), "top.a", 1), 0u);
  EXPECT_EQ(vcd_value_at((dir / "fs.out").string(), "top.a", 2), 1u);
}

TEST(VcdWriter, LongRunStreams) {
  // 4 M changes of 8 signals: the body goes to the temporary file, the
  // merge streams it back. Timing is printed, not asserted.
  const auto dir = test_dir();
  const auto out = (dir / "long.vcd").string();
  const auto t0 = std::chrono::steady_clock::now();
  VcdWriter w((dir / "body.tmp").string());
  std::vector<int> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(w.add_var("top.node_a.ernic", "sig" + std::to_string(i), 32, 0));
  const uint64_t n = 500'000;
  for (uint64_t c = 1; c <= n; ++c)
    for (int i = 0; i < 8; ++i) w.change(ids[i], c * 2654435761u + i, c * 5000);
  const auto t1 = std::chrono::steady_clock::now();
  w.finish_merged(out, kRtlVcd);
  const auto t2 = std::chrono::steady_clock::now();
  using ms = std::chrono::duration<double, std::milli>;
  std::printf("  %llu changes recorded in %.0f ms, merged in %.0f ms, %.1f MB\n",
              (unsigned long long)(n * 8), ms(t1 - t0).count(), ms(t2 - t1).count(),
              double(fs::file_size(out)) / 1e6);
  EXPECT_EQ(vcd_value_at(out, "top.node_a.ernic.sig3", n * 5000),
            uint64_t(uint32_t(n * 2654435761u + 3)));
  EXPECT_EQ(vcd_value_at(out, kIcrc + "count", 30000), 6u);
}

// ---- clocks, sinks, windows (the writer behind --trigger / --vcd-measure-full) ----
namespace {
const char* kSmallHeader =
    "$version ernic-sim (ERNIC RoCEv2 co-simulator) merged model+RTL VCD $end\n"
    "$timescale 1ps $end\n"
    "$scope module top $end\n"
    " $scope module n $end\n"
    "  $var wire 1 ! a $end\n"
    " $upscope $end\n"
    " $scope module clocks $end\n"
    "  $var wire 1 \" clk $end\n"
    " $upscope $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n";

// a: 1 at 12 ps, 0 at 31 ps; clk: period 10 ps (rising at 0, 10, ..., falling at 5, 15, ...).
std::unique_ptr<VcdWriter> small_writer(const fs::path& body) {
  auto w = std::make_unique<VcdWriter>(body.string());
  const int a = w->add_var("top.n", "a", 1, 0);
  const int clk = w->add_clock("top.clocks", "clk", 10);
  EXPECT_THROW(w->change(clk, 0, 3), std::invalid_argument) << "clock edges are synthesised";
  w->change(a, 1, 12);
  w->change(a, 0, 31);
  w->close_body();
  return w;
}
}  // namespace

TEST(VcdWriter, ClocksAreSynthesisedUpToTheEnd) {
  const auto dir = test_dir();
  auto w = small_writer(dir / "body.tmp");
  ernic::trace::FileSink f((dir / "full.vcd").string());
  const uint64_t n = w->write_merged(f, "", 35);
  EXPECT_EQ(slurp(dir / "full.vcd"),
            std::string(kSmallHeader) +
                "#0\n$dumpvars\n0!\n1\"\n$end\n#5\n0\"\n#10\n1\"\n#12\n1!\n#15\n0\"\n#20\n1\"\n#25\n0\"\n#30\n1\"\n"
                "#31\n0!\n#35\n0\"\n");
  EXPECT_EQ(n, fs::file_size(dir / "full.vcd"));
  // The counting sink counts the same bytes and writes nothing.
  ernic::trace::CountingSink c;
  EXPECT_EQ(w->write_merged(c, "", 35), n);
  EXPECT_EQ(c.bytes(), n);
}

TEST(VcdWriter, WindowsDumpEveryValueAtTheirStart) {
  const auto dir = test_dir();
  auto w = small_writer(dir / "body.tmp");
  const std::vector<ernic::trace::VcdWindow> win = {{12, 21}, {30, 33}};
  ernic::trace::FileSink f((dir / "win.vcd").string());
  w->write_merged(f, "", 35, &win);
  EXPECT_EQ(slurp(dir / "win.vcd"), std::string(kSmallHeader) +
                                        "#12\n$dumpvars\n1!\n1\"\n$end\n#15\n0\"\n#20\n1\"\n#21\n"
                                        "#30\n$dumpall\n1!\n1\"\n$end\n#31\n0!\n#33\n");
  // A window running past the end stops there; windows after it are left out.
  const std::vector<ernic::trace::VcdWindow> late = {{33, 50}, {60, 70}};
  ernic::trace::FileSink g((dir / "late.vcd").string());
  w->write_merged(g, "", 35, &late);
  EXPECT_EQ(slurp(dir / "late.vcd"), std::string(kSmallHeader) + "#33\n$dumpvars\n0!\n1\"\n$end\n#35\n0\"\n");
  // No window: the declarations only.
  const std::vector<ernic::trace::VcdWindow> none;
  ernic::trace::FileSink h((dir / "none.vcd").string());
  w->write_merged(h, "", 35, &none);
  EXPECT_EQ(slurp(dir / "none.vcd"), kSmallHeader);
  const std::vector<ernic::trace::VcdWindow> bad = {{20, 30}, {25, 40}};
  ernic::trace::CountingSink c;
  EXPECT_THROW(w->write_merged(c, "", 35, &bad), std::invalid_argument);
}

TEST(VcdWriter, MakeWindowsClampsAndMerges) {
  using ernic::trace::make_windows;
  using W = ernic::trace::VcdWindow;
  EXPECT_EQ(make_windows({400, 100, 150}, 20, 30), (std::vector<W>{{80, 180}, {380, 430}}));
  EXPECT_EQ(make_windows({5}, 20, 30), (std::vector<W>{{0, 35}}));
  EXPECT_EQ(make_windows({100, 151}, 0, 50), (std::vector<W>{{100, 201}})) << "touching windows merge";
  EXPECT_EQ(make_windows({100, 152}, 0, 50), (std::vector<W>{{100, 150}, {152, 202}}));
  EXPECT_TRUE(make_windows({}, 1, 1).empty());
}
