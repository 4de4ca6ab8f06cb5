// tb/system: split runs (issue 16). The merge of the node processes' parts
// (tools/split_merge.h) against what ONE writer makes of the same calls:
// PcapWriter::write_ordered with both sources interleaved, TxLog with both
// nodes' records and the steps; the parts are written by one writer per
// node from the same call sequence, merged, and compared byte for byte.
// (split_run itself: test_split_run.cpp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/trace/pcap_writer.h"
#include "model/trace/txlog.h"
#include "tb/system/split_test_util.h"
#include "tools/split_merge.h"

namespace {

namespace fs = std::filesystem;
using namespace ernic;

using namespace split_test;  // test_dir, slurp, lines

// The merge's error message for these parts (empty: no error).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// ------------------------------------------------------------------ pcap --

struct Tx {
  uint32_t source;  // node index
  uint64_t t_ps;    // first byte
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> frame(uint8_t tag, size_t len = 60) {
  std::vector<uint8_t> f(len, 0);
  for (size_t i = 0; i < len; ++i) f[i] = uint8_t(tag + i);
  return f;
}

// The same calls through one writer (the single-process wire pcap) and
// through one writer per source (the parts); returns the part paths.
std::vector<std::string> write_pcaps(const fs::path& d, const std::vector<Tx>& txs, size_t sources) {
  PcapWriter one((d / "one.pcap").string());
  std::vector<std::unique_ptr<PcapWriter>> parts;
  std::vector<std::string> paths;
  for (size_t s = 0; s < sources; ++s) {
    paths.push_back((d / ("part" + std::to_string(s) + ".pcap")).string());
    parts.push_back(std::make_unique<PcapWriter>(paths.back()));
  }
  for (const Tx& t : txs) {
    one.write_ordered(t.bytes.data(), t.bytes.size(), t.t_ps, t.source);
    parts[t.source]->write_ordered(t.bytes.data(), t.bytes.size(), t.t_ps, t.source);
  }
  one.close();
  for (auto& p : parts) p->close();
  return paths;
}

TEST(SplitMerge, PcapEqualsOneWriter) {
  const fs::path d = test_dir();
  // CMAC edges (3103 ps) + 640 ps of preamble; same-instant frames of both
  // nodes, node 1 calling first; a frame longer than the snap length.
  const std::vector<Tx> txs = {
      {0, 3103 + 640, frame(0x10)},
      {1, 3103 + 640, frame(0x20)},   // same ps as node 0's
      {1, 7 * 3103 + 640, frame(0x21)},
      {0, 7 * 3103 + 640, frame(0x11)},  // same ps, node 1 wrote first: node 0 still goes first
      {0, 9 * 3103 + 640, frame(0x12, 70000)},
      {1, 12 * 3103 + 640, frame(0x22)},
      {1, 400'000'000ull * 3103 + 640, frame(0x23)},  // past 1 s: the seconds field
      {0, 400'000'001ull * 3103 + 640, frame(0x13, 1500)},
  };
  const auto parts = write_pcaps(d, txs, 2);
  const std::string merged = (d / "merged.pcap").string();
  merge_wire_pcaps(parts, merged);
  EXPECT_EQ(slurp(merged), slurp(d / "one.pcap"));
  // The order itself: by time, then node 0 before node 1.
  const auto frames = PcapReader::read_all(merged);
  ASSERT_EQ(frames.size(), 8u);
  const uint8_t want[] = {0x10, 0x20, 0x11, 0x21, 0x12, 0x22, 0x23, 0x13};
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(frames[i].data[0], want[i]) << "frame " << i;
  EXPECT_EQ(frames[4].orig_len, 70000u);
  EXPECT_EQ(frames[4].data.size(), 65535u);
  EXPECT_EQ(frames[6].time_ns, (400'000'000ull * 3103 + 640) / 1000);
  EXPECT_EQ(frames[6].time_ns, 1'241'200'000ull);  // 1.2412 s
}

TEST(SplitMerge, PcapOnePartAndEmptyPartsAreCopies) {
  const fs::path d = test_dir();
  const auto parts = write_pcaps(d, {{0, 5000, frame(1)}, {0, 9000, frame(2)}}, 2);  // part1: header only
  merge_wire_pcaps(parts, (d / "merged.pcap").string());
  EXPECT_EQ(slurp(d / "merged.pcap"), slurp(d / "one.pcap"));
  merge_wire_pcaps({parts[0]}, (d / "single.pcap").string());
  EXPECT_EQ(slurp(d / "single.pcap"), slurp(parts[0]));
}

// The file keeps ns: frames less than 1 ns apart get one timestamp, and
// the merge puts the lower node first; so does one process's writer
// (PcapWriter::write_ordered orders by ns, then source), though node 1's
// frame is 600 ps earlier (a star's ports of different rates can do this).
TEST(SplitMerge, PcapSubNanosecondTieGoesByNodeOrder) {
  const fs::path d = test_dir();
  const auto parts = write_pcaps(d, {{1, 1'000'100, frame(0x20)}, {0, 1'000'700, frame(0x10)}}, 2);
  merge_wire_pcaps(parts, (d / "merged.pcap").string());
  EXPECT_EQ(slurp(d / "merged.pcap"), slurp(d / "one.pcap"));
  const auto merged = PcapReader::read_all((d / "merged.pcap").string());
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].data[0], 0x10);
  EXPECT_EQ(merged[1].data[0], 0x20);
  EXPECT_EQ(merged[0].time_ns, 1000u);
  EXPECT_EQ(merged[1].time_ns, 1000u);
}

TEST(SplitMerge, PcapTruncatedPartIsAnError) {
  const fs::path d = test_dir();
  const auto parts = write_pcaps(d, {{0, 5000, frame(1)}, {1, 6000, frame(2)}, {1, 9000, frame(3)}}, 2);
  // Part 1 loses the last 5 bytes of its second frame: 24 + 2 * (16 + 60) bytes.
  ASSERT_EQ(fs::file_size(parts[1]), 24u + 2 * 76);
  fs::resize_file(parts[1], 24 + 2 * 76 - 5);
  std::string e = error_of([&] { merge_wire_pcaps(parts, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("'" + parts[1] + "': truncated: frame 2 at byte 100 ends inside its frame data"), std::string::npos) << e;
  fs::resize_file(parts[1], 24 + 76 + 10);  // inside the second record's header
  e = error_of([&] { merge_wire_pcaps(parts, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("'" + parts[1] + "': truncated: frame 2 at byte 100 ends inside its record header"), std::string::npos) << e;
  fs::resize_file(parts[1], 10);  // inside the file header
  e = error_of([&] { merge_wire_pcaps(parts, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("'" + parts[1] + "': truncated: no complete pcap file header"), std::string::npos) << e;
}

TEST(SplitMerge, PcapPartErrors) {
  const fs::path d = test_dir();
  const auto parts = write_pcaps(d, {{0, 5000, frame(1)}, {1, 6000, frame(2)}}, 2);
  // Missing part.
  std::string e = error_of([&] { merge_wire_pcaps({parts[0], (d / "nope.pcap").string()}, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("merge pcap: cannot read '" + (d / "nope.pcap").string() + "'"), std::string::npos) << e;
  // Out of time order.
  const std::string back = (d / "back.pcap").string();
  {
    PcapWriter w(back);
    w.write(frame(1), 9000);
    w.write(frame(2), 8000);
  }
  e = error_of([&] { merge_wire_pcaps({parts[0], back}, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("'" + back + "': frame 2 at byte 100: time 8 ns is before the previous frame's 9 ns"), std::string::npos) << e;
  // A different header (link type byte patched).
  const std::string other = (d / "other.pcap").string();
  fs::copy_file(parts[1], other);
  {
    std::fstream f(other, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put(char(105));
  }
  e = error_of([&] { merge_wire_pcaps({parts[0], other}, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("'" + other + "': its file header"), std::string::npos) << e;
  // Not a pcap.
  std::ofstream((d / "text.pcap").string()) << "this is not a capture file at all";
  e = error_of([&] { merge_wire_pcaps({(d / "text.pcap").string()}, (d / "m.pcap").string()); });
  EXPECT_NE(e.find("not a pcap file"), std::string::npos) << e;
  // The output may not be a part.
  e = error_of([&] { merge_wire_pcaps(parts, parts[1]); });
  EXPECT_NE(e.find("the output '" + parts[1] + "' is the part"), std::string::npos) << e;
}

// ------------------------------------------------------------------- log --

// One call of the run: at simulated time `at`, by node `part` (-1: a step,
// which every process writes), through `write`.
struct Call {
  uint64_t at;
  int part;
  std::function<void(TxLog&)> write;
};

Call reg(uint64_t at, int part, const char* node, uint32_t addr, uint32_t value) {
  return {at, part, [=](TxLog& l) { l.reg(at, node, "core", at / 5000, std::nullopt, true, addr, "REG", value); }};
}
Call dma(uint64_t at, int part, const char* node, uint64_t addr, uint64_t len) {
  return {at, part, [=](TxLog& l) { l.dma(at, node, "core", at / 5000, 2, "m_axi", false, addr, len); }};
}
Call state(uint64_t at, int part, const char* node, const char* what) {
  return {at, part, [=](TxLog& l) { l.state(at, node, "core", at / 5000, 2, what, "1"); }};
}
// A frame record written at `at` for a frame whose first byte is at t_ps.
Call frame_rec(uint64_t at, uint64_t t_ps, int part, const char* node, const char* dir, uint64_t index) {
  return {at, part, [=](TxLog& l) {
            FrameFields f;
            f.len = 1000;
            f.roce = true;
            f.opcode = 10;
            f.opname = "RC_WRITE_ONLY";
            f.psn = uint32_t(index);
            f.dest_qp = 2;
            l.frame(t_ps, node, "cmac", t_ps / 3103, 2, dir, "A->B", index, f);
          }};
}
Call fault(uint64_t at, int part, uint64_t index) {
  return {at, part, [=](TxLog& l) { l.fault(at, "A->B", index, "drop_it", "drop", 10, int64_t(index), "dropped"); }};
}
Call step(uint64_t at, const char* where, const char* phase) {
  return {at, -1, [=](TxLog& l) { l.step(at, where, "wait", phase, ""); }};
}

// The calls through one TxLog (one.log) and through one per part
// (partN.log), each with the run's clock; `marks`: each part opens every
// instant with {"instant_ps":T} (what the proposed TxLog flag writes).
std::vector<std::string> write_logs(const fs::path& d, const std::vector<Call>& calls, size_t nparts, bool marks) {
  uint64_t now = 0;
  std::vector<std::string> paths;
  {
    TxLog one((d / "one.log").string());
    one.clock = [&] { return now; };
    std::vector<std::unique_ptr<TxLog>> parts;
    std::vector<uint64_t> opened(nparts, ~uint64_t(0));
    for (size_t p = 0; p < nparts; ++p) {
      paths.push_back((d / ("part" + std::to_string(p) + ".log")).string());
      parts.push_back(std::make_unique<TxLog>(paths.back()));
      parts.back()->clock = [&] { return now; };
    }
    for (const Call& c : calls) {
      now = c.at;
      c.write(one);
      for (size_t p = 0; p < nparts; ++p) {
        if (c.part != -1 && size_t(c.part) != p) continue;
        if (marks && opened[p] != now) {
          parts[p]->write(nlohmann::json{{"instant_ps", now}});
          opened[p] = now;
        }
        c.write(*parts[p]);
      }
    }
  }
  return paths;
}

// A run's calls: records of both nodes at shared instants, steps at the
// same instants as node records, an instant with several runs, frame
// records written long after (rx) or before (tx) their t_ps, a fault.
std::vector<Call> run_calls() {
  return {
      step(1000, "s.yaml:10:5", "start"),
      reg(1000, 1, "B", 0x20, 7),
      reg(1000, 0, "A", 0x20, 7),
      dma(1000, 1, "B", 0x1000, 64),
      reg(1000, 0, "A", 0x10, 1),
      // One instant, three runs: records, a step end, records, a step start, records.
      state(2000, 1, "B", "qp_enable"),
      reg(2000, 0, "A", 0x30, 3),
      step(2000, "s.yaml:10:5", "end"),
      reg(2000, 1, "B", 0x30, 3),
      reg(2000, 0, "A", 0x08, 9),
      step(2000, "s.yaml:11:5", "start"),
      dma(2000, 0, "A", 0x2000, 4096),
      state(2000, 1, "B", "qp_fatal"),
      // A sends at 3000 (t_ps 3640); B logs the receipt of an older frame at 3000.
      frame_rec(3000, 3640, 0, "A", "tx", 1),
      frame_rec(3000, 1500, 1, "B", "rx", 0),
      reg(3000, 0, "A", 0x40, 4),
      reg(3500, 1, "B", 0x40, 4),
      // Text order is not numeric order: t_ps 9999 and 10001 at one instant.
      frame_rec(12000, 10001, 1, "B", "rx", 2),
      frame_rec(12000, 9999, 1, "B", "rx", 1),
      reg(12000, 0, "A", 0x50, 5),
      // A drops its frame: its tx record, the fault (ordered under A, after A's own), then B's.
      frame_rec(15000, 15640, 0, "A", "tx", 3),
      fault(15000, 0, 3),
      reg(15000, 1, "B", 0x60, 6),
      step(20000, "s.yaml:11:5", "end"),
  };
}

TEST(SplitMerge, LogEqualsOneWriter) {
  const fs::path d = test_dir();
  const auto parts = write_logs(d, run_calls(), 2, /*marks=*/true);
  const std::string merged = (d / "merged.log").string();
  merge_logs(parts, merged);
  const std::string one = slurp(d / "one.log");
  EXPECT_EQ(slurp(merged), one);
  // What one writer wrote (so the comparison is not between two empty files).
  const auto l = lines(one);
  ASSERT_EQ(l.size(), run_calls().size());  // each step once (every part has it)
  EXPECT_EQ(l[0], R"({"t_ps":1000,"node":"","kind":"step","domain":"scenario","cycle":0,"at":"s.yaml:10:5","step":"wait","phase":"start","detail":""})");
  EXPECT_NE(l[1].find(R"("node":"A","kind":"reg")"), std::string::npos);
  EXPECT_NE(l[1].find(R"("addr":16,)"), std::string::npos);  // "16" < "32" in text
  EXPECT_NE(l[3].find(R"("node":"B","kind":"dma")"), std::string::npos);
  // Instant 2000: sorted run, step end, sorted run, step start, sorted run.
  EXPECT_NE(l[5].find(R"("node":"A","kind":"reg")"), std::string::npos);
  EXPECT_NE(l[6].find(R"("node":"B","kind":"state")"), std::string::npos);
  EXPECT_NE(l[7].find(R"("phase":"end")"), std::string::npos);
  EXPECT_NE(l[8].find(R"("node":"A")"), std::string::npos);
  EXPECT_NE(l[9].find(R"("node":"B")"), std::string::npos);
  EXPECT_NE(l[10].find(R"("phase":"start")"), std::string::npos);
  EXPECT_NE(l[12].find(R"("what":"qp_fatal")"), std::string::npos);
  // B's rx record (t_ps 1500) sits at its writing instant, after instant 2000's records.
  EXPECT_EQ(l[13].rfind(R"({"t_ps":3000,"node":"A","k)", 0), 0u) << l[13];
  EXPECT_EQ(l[14].rfind(R"({"t_ps":3640,"node":"A","k)", 0), 0u) << l[14];
  EXPECT_EQ(l[15].rfind(R"({"t_ps":1500,"node":"B","k)", 0), 0u) << l[15];
  EXPECT_EQ(l[18].rfind(R"({"t_ps":10001,"node":"B","k)", 0), 0u) << l[18];
  EXPECT_EQ(l[19].rfind(R"({"t_ps":9999,"node":"B","k)", 0), 0u) << l[19];
  EXPECT_NE(l[21].find(R"("kind":"fault")"), std::string::npos);
  EXPECT_EQ(slurp(merged).find("instant_ps"), std::string::npos);
}

// The scenario's node order (the parts' order) need not be the names'
// order: one process sorts by name, so the merge must too. Part 0 is B,
// part 1 is A; instant 15000 written in node order (B's record, then A's
// frame and its fault); the fault is ordered under A, its link's sender,
// after A's own records, so it comes before B's.
TEST(SplitMerge, LogNodeOrderIsNotNameOrder) {
  const fs::path d = test_dir();
  std::vector<Call> calls;
  for (Call c : run_calls()) {
    if (c.at == 15000) continue;
    if (c.part >= 0) c.part = 1 - c.part;
    calls.push_back(c);
  }
  calls.insert(calls.end() - 1, {reg(15000, 0, "B", 0x60, 6), frame_rec(15000, 15640, 1, "A", "tx", 3), fault(15000, 1, 3)});
  const auto parts = write_logs(d, calls, 2, /*marks=*/true);
  merge_logs(parts, (d / "merged.log").string());
  EXPECT_EQ(slurp(d / "merged.log"), slurp(d / "one.log"));
  const auto l = lines(slurp(d / "one.log"));
  ASSERT_EQ(l.size(), calls.size());
  EXPECT_NE(l[1].find(R"("node":"A")"), std::string::npos) << l[1];  // A's records first, as always
  EXPECT_NE(l[20].find(R"("node":"A","kind":"frame")"), std::string::npos) << l[20];
  EXPECT_NE(l[21].find(R"("kind":"fault")"), std::string::npos) << l[21];
  EXPECT_NE(l[22].find(R"("node":"B","kind":"reg")"), std::string::npos) << l[22];
}

// Without instant marks a record's instant is its t_ps: exact for records
// written at their own time (everything but frame records).
TEST(SplitMerge, LogWithoutMarksIsExactWithoutFrameRecords) {
  const fs::path d = test_dir();
  const std::vector<Call> calls = run_calls();
  // Drop the frame records (indices 13, 14, 17, 18, 20 of run_calls()).
  std::vector<Call> no_frames;
  for (size_t i = 0; i < calls.size(); ++i)
    if (i != 13 && i != 14 && i != 17 && i != 18 && i != 20) no_frames.push_back(calls[i]);
  const auto parts = write_logs(d, no_frames, 2, /*marks=*/false);
  merge_logs(parts, (d / "merged.log").string());
  EXPECT_EQ(slurp(d / "merged.log"), slurp(d / "one.log"));
  EXPECT_EQ(lines(slurp(d / "one.log")).size(), no_frames.size());
}

// ...and not with them: B's rx record (t_ps 1500, written at 3000) goes
// first after the step at 2000, before A's records of 3000 (and A's tx
// record, t_ps 3640, after B's of 3500). Why node processes need marks.
TEST(SplitMerge, LogWithoutMarksMisplacesLateFrameRecords) {
  const fs::path d = test_dir();
  const auto parts = write_logs(d, run_calls(), 2, /*marks=*/false);
  merge_logs(parts, (d / "merged.log").string());
  const auto one = lines(slurp(d / "one.log"));
  const auto merged = lines(slurp(d / "merged.log"));
  ASSERT_EQ(merged.size(), one.size());
  EXPECT_NE(merged, one);
  EXPECT_EQ(one[15].rfind(R"({"t_ps":1500,"node":"B","k)", 0), 0u) << one[15];
  EXPECT_EQ(merged[13].rfind(R"({"t_ps":1500,"node":"B","k)", 0), 0u) << merged[13];
  EXPECT_EQ(merged[14].rfind(R"({"t_ps":3000,"node":"A","k)", 0), 0u) << merged[14];
  EXPECT_EQ(merged[15].rfind(R"({"t_ps":3500,"node":"B","k)", 0), 0u) << merged[15];
  EXPECT_EQ(merged[16].rfind(R"({"t_ps":3640,"node":"A","k)", 0), 0u) << merged[16];
}

TEST(SplitMerge, LogStepSequencesMustAgree) {
  const fs::path d = test_dir();
  const auto parts = write_logs(d, run_calls(), 2, /*marks=*/true);
  // B's second step record says "failed".
  std::string b = slurp(parts[1]);
  const std::string end = R"("phase":"end","detail":"")";
  const size_t at = b.find(end);
  ASSERT_NE(at, std::string::npos);
  b.replace(at, end.size(), R"("phase":"end","detail":"failed")");
  const std::string bad = (d / "bad.log").string();
  std::ofstream(bad, std::ios::binary) << b;
  std::string e = error_of([&] { merge_logs({parts[0], bad}, (d / "m.log").string()); });
  const auto lb = lines(b);
  size_t line_b = 0;
  for (size_t i = 0; i < lb.size(); ++i)
    if (lb[i].find("\"failed\"") != std::string::npos) line_b = i + 1;
  const auto la = lines(slurp(parts[0]));
  size_t line_a = 0;
  for (size_t i = 0; i < la.size() && !line_a; ++i)
    if (la[i].find(end) != std::string::npos) line_a = i + 1;
  EXPECT_NE(e.find("merge log: the step records differ"), std::string::npos) << e;
  EXPECT_NE(e.find("after 1 equal step records"), std::string::npos) << e;
  EXPECT_NE(e.find("'" + parts[0] + "' line " + std::to_string(line_a) + " has "), std::string::npos) << e;
  EXPECT_NE(e.find("'" + bad + "' line " + std::to_string(line_b) + " has "), std::string::npos) << e;
  EXPECT_NE(e.find(R"("detail":"failed"})"), std::string::npos) << e;
  // B's part without its last step.
  std::string cut = slurp(parts[1]);
  cut.erase(cut.rfind("{\"t_ps\":20000,\"node\":\"\""));
  const std::string shorter = (d / "short.log").string();
  std::ofstream(shorter, std::ios::binary) << cut;
  e = error_of([&] { merge_logs({parts[0], shorter}, (d / "m.log").string()); });
  EXPECT_NE(e.find("after 3 equal step records, '" + shorter + "' ends after line " +
                   std::to_string(lines(cut).size()) + " where '" + parts[0] + "' line " +
                   std::to_string(la.size()) + " has {\"t_ps\":20000"),
            std::string::npos)
      << e;
}

TEST(SplitMerge, LogPartErrors) {
  const fs::path d = test_dir();
  const auto parts = write_logs(d, run_calls(), 2, /*marks=*/true);
  const auto write = [&](const char* name, const std::string& text) {
    const std::string p = (d / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  };
  // Truncated: the last line has no newline.
  std::string t = slurp(parts[1]);
  t.resize(t.size() - 10);
  const std::string trunc = write("trunc.log", t);
  std::string e = error_of([&] { merge_logs({parts[0], trunc}, (d / "m.log").string()); });
  EXPECT_NE(e.find("merge log: '" + trunc + "' line " + std::to_string(lines(t).size()) +
                   ": truncated (the last line has no newline)"),
            std::string::npos)
      << e;
  // Not a record.
  const std::string junk = write("junk.log", slurp(parts[1]) + "hello\n");
  e = error_of([&] { merge_logs({parts[0], junk}, (d / "m.log").string()); });
  EXPECT_NE(e.find("'" + junk + "' line " + std::to_string(lines(slurp(parts[1])).size() + 1) +
                   ": not a transaction log record"),
            std::string::npos)
      << e;
  // An instant mark going back.
  const std::string back = write("back.log", "{\"instant_ps\":50}\n{\"t_ps\":50,\"node\":\"A\"}\n{\"instant_ps\":40}\n");
  e = error_of([&] { merge_logs({back}, (d / "m.log").string()); });
  EXPECT_NE(e.find("'" + back + "' line 3: instant 40 ps goes back (the previous mark was 50 ps)"), std::string::npos) << e;
  // Missing part; the output is a part.
  e = error_of([&] { merge_logs({parts[0], (d / "nope.log").string()}, (d / "m.log").string()); });
  EXPECT_NE(e.find("merge log: cannot read '" + (d / "nope.log").string() + "'"), std::string::npos) << e;
  e = error_of([&] { merge_logs(parts, parts[0]); });
  EXPECT_NE(e.find("the output '" + parts[0] + "' is the part"), std::string::npos) << e;
}

}  // namespace
